/* The C API's MPI execution (xjit_execute_mpi, docs/mpi.md), run under
 * `mpirun -np N` (N = 2, 4): every rank runs its replica of a module with
 * every kind of collective over an xjit_mpi_communicator made from
 * MPI_COMM_WORLD, and compares its results bit for bit with the in-process
 * threads mode (xjit_execute_replicated of all N replicas, which every rank
 * computes itself on the same arguments). Both backends, two executions on
 * one communicator (the cached group communicators), and an error that
 * every rank returns. Exits 0 when every rank passed. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "xjit.h"

/* The big all-reduces' length: not a multiple of 2 or 4 (unequal blocks);
 * on the jit over 1 MiB per member at 2 ranks (3 segments); on the evaluator,
 * which reduces element by element through the reducer, shorter. */
static int count_;
#define COUNT count_

/* The module for `n` replicas: shapes and groups depend on it. */
static void ModuleText(int n, char* text, size_t size) {
  char reversed[64] = "", pairs[128] = "", cycle[128] = "";
  char* p = reversed;
  for (int r = n - 1; r >= 0; --r) p += sprintf(p, r == n - 1 ? "%d" : ",%d", r);
  /* {{0,2},{1,3}} for 4, {{0,1}} for 2: groups that are not the world. */
  p = pairs;
  if (n == 4) {
    p += sprintf(p, "{0,2},{1,3}");
  } else {
    for (int r = 0; r < n; r += 2) p += sprintf(p, r == 0 ? "{%d,%d}" : ",{%d,%d}", r, r + 1);
  }
  p = cycle;
  for (int r = 0; r < n; ++r) p += sprintf(p, r == 0 ? "{%d,%d}" : ",{%d,%d}", r, (r + 1) % n);
  snprintf(text, size,
    "HloModule mpi_capi\n"
    "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
    "max {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n"
    "addi {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n"
    "ENTRY e {\n"
    " x = f32[%d] parameter(0)\n"
    " k = s32[8] parameter(1)\n"
    " small = f32[8] parameter(2)\n"
    " sum = f32[%d] all-reduce(x), replica_groups={}, to_apply=add\n"
    " backwards = f32[%d] all-reduce(x), replica_groups={{%s}}, to_apply=add\n"
    " paired = f32[8] all-reduce(small), replica_groups={%s}, to_apply=add\n"
    " big = f32[8] all-reduce(small), replica_groups={}, to_apply=max\n"
    " ints = s32[8] all-reduce(k), replica_groups={}, to_apply=addi\n"
    " gathered = f32[%d] all-gather(small), dimensions={0}, replica_groups={}\n"
    " scattered = f32[8] reduce-scatter(gathered), dimensions={0}, replica_groups={}, "
    "to_apply=add\n"
    " exchanged = f32[%d] all-to-all(gathered), dimensions={0}, replica_groups={}\n"
    " shifted = f32[8] collective-permute(small), source_target_pairs={%s}\n"
    " id = u32[] replica-id()\n"
    " ROOT t = (f32[%d], f32[%d], f32[8], f32[8], s32[8], f32[8], f32[%d], f32[8], u32[]) "
    "tuple(sum, backwards, paired, big, ints, scattered, exchanged, shifted, id)\n"
    "}\n",
    COUNT, COUNT, COUNT, reversed, pairs, 8 * n, 8 * n, cycle, COUNT, COUNT, 8 * n);
}

#define NRESULTS 9
static size_t kResultSizes[NRESULTS] = {0, 0, 32, 32, 32, 32, 0, 32, 4};

static int rank_, size_;
static int failures_;

static void Fail(const char* what, xjit_status* status) {
  fprintf(stderr, "rank %d: FAIL %s: %s\n", rank_, what,
          status != NULL ? xjit_status_message(status) : "");
  if (status != NULL) xjit_status_free(status);
  ++failures_;
}

/* Replica r's arguments: deterministic, different per replica. */
static void FillArguments(int r, float* x, int32_t* k, float* small) {
  uint64_t state = 0x9e3779b97f4a7c15ull * (uint64_t)(r + 1);
  for (int i = 0; i < COUNT; ++i) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    x[i] = (float)((int64_t)(state >> 40) - (1 << 23)) / (float)(1 << 20);
  }
  for (int i = 0; i < 8; ++i) {
    k[i] = (int32_t)(r * 1000003 + i * 77);
    small[i] = (float)(r * 8 + i) * 0.37f - 3.0f;
  }
}

static void RunBackend(xjit_backend backend, xjit_mpi_communicator* comm) {
  const char* name = backend == XJIT_BACKEND_JIT ? "jit" : "interpreter";
  count_ = backend == XJIT_BACKEND_JIT ? 600007 : 3001;
  char text[4096];
  ModuleText(size_, text, sizeof(text));
  kResultSizes[0] = kResultSizes[1] = (size_t)COUNT * 4;
  kResultSizes[6] = (size_t)size_ * 32;
  xjit_module* module = NULL;
  xjit_status* status = xjit_module_parse(text, &module);
  if (status != NULL) return Fail("parse", status);
  xjit_compile_options* options = xjit_compile_options_create();
  xjit_compile_options_set_backend(options, backend);
  xjit_executable* exe = NULL;
  status = xjit_compile(module, options, &exe);
  xjit_compile_options_free(options);
  xjit_module_free(module);
  if (status != NULL) return Fail("compile", status);

  /* Every replica's arguments and the in-process results. */
  const size_t arg_sizes[3] = {(size_t)COUNT * 4, 32, 32};
  float** xs = calloc(size_, sizeof(float*));
  int32_t** ks = calloc(size_, sizeof(int32_t*));
  float** smalls = calloc(size_, sizeof(float*));
  const void*** args = calloc(size_, sizeof(void**));
  void*** expected = calloc(size_, sizeof(void**));
  for (int r = 0; r < size_; ++r) {
    xs[r] = malloc(COUNT * 4);
    ks[r] = malloc(32);
    smalls[r] = malloc(32);
    FillArguments(r, xs[r], ks[r], smalls[r]);
    args[r] = calloc(3, sizeof(void*));
    args[r][0] = xs[r];
    args[r][1] = ks[r];
    args[r][2] = smalls[r];
    expected[r] = calloc(NRESULTS, sizeof(void*));
    for (int i = 0; i < NRESULTS; ++i) expected[r][i] = malloc(kResultSizes[i]);
  }
  status = xjit_execute_replicated(exe, size_, (const void* const* const*)args, arg_sizes, 3,
                                   (void* const* const*)expected, kResultSizes, NRESULTS);
  if (status != NULL) {
    Fail("in-process run", status);
  } else {
    void* actual[NRESULTS];
    for (int i = 0; i < NRESULTS; ++i) actual[i] = malloc(kResultSizes[i]);
    for (int run = 0; run < 2; ++run) {
      status = xjit_execute_mpi(exe, comm, args[rank_], arg_sizes, 3, actual, kResultSizes,
                                NRESULTS);
      if (status != NULL) {
        Fail(name, status);
        break;
      }
      for (int i = 0; i < NRESULTS; ++i) {
        if (memcmp(actual[i], expected[rank_][i], kResultSizes[i]) != 0) {
          fprintf(stderr, "rank %d: FAIL %s run %d: result %d differs from the threads mode\n",
                  rank_, name, run, i);
          ++failures_;
        }
      }
    }
    /* A wrong argument size fails on every rank, before any collective. */
    const size_t wrong[3] = {(size_t)COUNT * 4, 31, 32};
    status = xjit_execute_mpi(exe, comm, args[rank_], wrong, 3, actual, kResultSizes, NRESULTS);
    if (status == NULL) {
      fprintf(stderr, "rank %d: FAIL %s: a wrong argument size passed\n", rank_, name);
      ++failures_;
    } else {
      xjit_status_free(status);
    }
    /* A wrong argument size on the last rank only: every rank fails at once
       (the others waited in their first collective before, issue 29), and
       the next run, with good arguments everywhere, still works. */
    status = xjit_execute_mpi(exe, comm, args[rank_], rank_ == size_ - 1 ? wrong : arg_sizes, 3,
                              actual, kResultSizes, NRESULTS);
    if (status == NULL) {
      fprintf(stderr, "rank %d: FAIL %s: one rank's wrong argument size passed\n", rank_, name);
      ++failures_;
    } else {
      if (rank_ != size_ - 1 && strstr(xjit_status_message(status), "cannot start the run") == NULL) {
        fprintf(stderr, "rank %d: FAIL %s: %s\n", rank_, name, xjit_status_message(status));
        ++failures_;
      }
      xjit_status_free(status);
    }
    status = xjit_execute_mpi(exe, comm, args[rank_], arg_sizes, 3, actual, kResultSizes,
                              NRESULTS);
    if (status != NULL) Fail(name, status);
    for (int i = 0; i < NRESULTS; ++i) free(actual[i]);
  }
  for (int r = 0; r < size_; ++r) {
    for (int i = 0; i < NRESULTS; ++i) free(expected[r][i]);
    free(expected[r]);
    free(args[r]);
    free(xs[r]);
    free(ks[r]);
    free(smalls[r]);
  }
  free(expected);
  free(args);
  free(xs);
  free(ks);
  free(smalls);
  xjit_executable_free(exe);
  if (rank_ == 0) printf("%s: done\n", name);
}

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
  xjit_mpi_communicator* comm = NULL;
  xjit_status* status =
      xjit_mpi_communicator_create((int64_t)MPI_Comm_c2f(MPI_COMM_WORLD), 0, &comm);
  if (status != NULL) {
    Fail("communicator", status);
  } else {
    if (xjit_mpi_communicator_rank(comm) != rank_ || xjit_mpi_communicator_size(comm) != size_) {
      fprintf(stderr, "rank %d: FAIL communicator rank/size\n", rank_);
      ++failures_;
    }
    RunBackend(XJIT_BACKEND_JIT, comm);
    RunBackend(XJIT_BACKEND_INTERPRETER, comm);
    xjit_mpi_communicator_destroy(comm);
  }
  int total = 0;
  MPI_Allreduce(&failures_, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank_ == 0) printf("%d ranks, %d failures\n", size_, total);
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
