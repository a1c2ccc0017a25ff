// The number of threads OpenBLAS may use inside one BLAS call. xjit's own
// thread pool and OpenBLAS's workers share the cores: the compile or execute
// options set this so that the two together do not oversubscribe them
// (typically 1 when the runtime already runs steps in parallel).
#ifndef XJIT_RUNTIME_BLAS_BLAS_THREADS_H_
#define XJIT_RUNTIME_BLAS_BLAS_THREADS_H_

namespace xjit::runtime::blas {

// Sets OpenBLAS's thread count for the whole process, clamped to
// [1, max(8, the number of hardware threads)].
void SetBlasThreads(int threads);
// The current OpenBLAS thread count.
int BlasThreads();

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_BLAS_THREADS_H_
