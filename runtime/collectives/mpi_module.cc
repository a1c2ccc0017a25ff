// libxjit_mpi.so's entry point (mpi_module.h): the table through which
// libxjit.so reaches the MPI transport of mpi_communicator.cc, which is
// linked into the module beside this file. XJIT_PROJECT_VERSION comes from
// meson (lib/meson.build), as for the loader, so the two can compare builds.
#include "runtime/collectives/mpi_module.h"

extern "C" const xjit::collectives::MpiModule* xjit_mpi_module() {
  static const xjit::collectives::MpiModule module = {
      xjit::collectives::kMpiModuleAbiVersion,
      XJIT_PROJECT_VERSION,
      &xjit::collectives::MakeMpiCommunicator,
  };
  return &module;
}
