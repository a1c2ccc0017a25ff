// Thin wrapper over openblas_set_num_threads / openblas_get_num_threads.
#include "runtime/blas/blas_threads.h"

#include <cblas.h>

namespace xjit::runtime::blas {

void SetBlasThreads(int threads) { openblas_set_num_threads(threads < 1 ? 1 : threads); }

int BlasThreads() { return openblas_get_num_threads(); }

}  // namespace xjit::runtime::blas
