// Thin wrapper over openblas_set_num_threads / openblas_get_num_threads.
#include "runtime/blas/blas_threads.h"

#include <cblas.h>

#include <algorithm>
#include <thread>

namespace xjit::runtime::blas {

// At most one thread per core (or 8 on smaller machines, so that tests of
// a few threads mean the same everywhere): more only add contention, and
// OpenBLAS allocates a large buffer per thread (31 threads' worth exhausted a
// 4 GB address space and hung inside OpenBLAS).
void SetBlasThreads(int threads) {
  const int cores = static_cast<int>(std::thread::hardware_concurrency());
  openblas_set_num_threads(std::clamp(threads, 1, std::max(cores, 8)));
}

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace xjit::runtime::blas
