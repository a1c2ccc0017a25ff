/* libxjit.so without MPI (runtime/collectives/mpi_module.h): a program
 * linked against the shared library, not the in-tree one, checks that
 * loading it mapped no libmpi (so it loads where Open MPI is absent), then
 * that the first MPI call of the C API does what MODE says:
 *   present   libxjit_mpi.so is beside libxjit.so: the module loads (and
 *             with it libmpi) and answers FAILED_PRECONDITION, MPI not
 *             being initialised;
 *   absent    no module can be found (mpi_module_absent.sh runs this with a
 *             libxjit.so that has none beside it): FAILED_PRECONDITION
 *             naming libxjit_mpi.so;
 *   disabled  a build without MPI: UNIMPLEMENTED, "built without MPI".
 * Exits 0 when every check passed. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xjit.h"

static int failures_;

static void Check(int ok, const char* what) {
  if (!ok) {
    fprintf(stderr, "FAIL: %s\n", what);
    ++failures_;
  }
}

/* Whether a mapping of this process names `library` (from /proc/self/maps). */
static int Mapped(const char* library) {
  FILE* maps = fopen("/proc/self/maps", "r");
  if (maps == NULL) return -1;
  char line[4096];
  int found = 0;
  while (fgets(line, sizeof line, maps) != NULL) {
    if (strstr(line, library) != NULL) found = 1;
  }
  fclose(maps);
  return found;
}

int main(int argc, char** argv) {
  if (argc != 2) {
    fprintf(stderr, "usage: mpi_module_test present|absent|disabled\n");
    return 2;
  }
  const char* mode = argv[1];
  printf("libxjit %s\n", xjit_version());
  Check(Mapped("libmpi") == 0, "libmpi is mapped before any MPI call (libxjit.so needs it)");
  Check(Mapped("libxjit_mpi") == 0, "libxjit_mpi.so is mapped before any MPI call");

  xjit_mpi_communicator* communicator = NULL;
  xjit_status* status = xjit_mpi_communicator_create(0, 0, &communicator);
  const char* message = status == NULL ? "OK" : xjit_status_message(status);
  int code = status == NULL ? XJIT_OK : (int)xjit_status_code(status);
  printf("%s: %s: %s\n", mode, xjit_code_name((xjit_code)code), message);
  Check(communicator == NULL, "a communicator without MPI_Init");
  if (strcmp(mode, "present") == 0) {
    Check(code == XJIT_FAILED_PRECONDITION && strstr(message, "MPI is not initialised") != NULL,
          "present: the module's own answer (MPI is not initialised)");
    Check(Mapped("libxjit_mpi.so") == 1, "present: libxjit_mpi.so is not mapped");
  } else if (strcmp(mode, "absent") == 0) {
    Check(code == XJIT_FAILED_PRECONDITION &&
              strstr(message, "cannot load libxjit_mpi.so: ") != NULL,
          "absent: FAILED_PRECONDITION naming libxjit_mpi.so");
    /* Remembered: the second call gives the same answer without retrying. */
    xjit_status* again = xjit_mpi_communicator_create(0, 0, &communicator);
    Check(again != NULL && strcmp(xjit_status_message(again), message) == 0,
          "absent: the second call's answer differs");
    xjit_status_free(again);
  } else if (strcmp(mode, "disabled") == 0) {
    Check(code == XJIT_UNIMPLEMENTED && strstr(message, "built without MPI") != NULL,
          "disabled: UNIMPLEMENTED, built without MPI");
  } else {
    fprintf(stderr, "unknown mode %s\n", mode);
    return 2;
  }
  Check(Mapped("libmpi") == (strcmp(mode, "present") == 0),
        "libmpi is mapped exactly when the module loaded");
  xjit_status_free(status);
  if (failures_ == 0) printf("mpi_module_test %s: OK\n", mode);
  return failures_ == 0 ? 0 : 1;
}
