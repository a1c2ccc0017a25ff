// AxpyGemv: y = P^T x for a matrix P with contiguous rows (the "axpy form"
// of a gemv: outputs along P's contiguous dimension), f32 and f64, without a
// library call, in a summation order that does not depend on where an output
// lies.
//
// OpenBLAS 0.3.21's sgemv_n/dgemv_n (which the row-major transposed and the
// column-major no-transpose calls become) sums y[c] in an order that depends
// on c's position in the call (its tails run other code), so the same output
// computed by a call over a band of columns could differ in its last bits
// from the whole call: dot.cc could not cut this form into bands on the
// thread pool. Here every y[c] is the same sum at any position, in any band:
// the rows in blocks of 8 from row 0, each block's sum
//   B = (...(P[r, c] x[r] + P[r+1, c] x[r+1]) + ...) + P[r+7, c] x[r+7]
// (a product, then one fused multiply-add per row), and
//   y[c] = (...((0 + B_0) + B_1) + ...) + B_last
// (the last block has the rows left). Columns go four vectors at a time,
// then one, then one masked vector whose lanes do the same arithmetic as
// full ones. So results are bit-identical whatever the column bands (and
// the thread count), and the same on both ISAs below.
//
// Why this shape (OpenBLAS's own, with a fixed order): a block's rows are
// read side by side as 8 sequential streams while y (a chunk of at most
// 8 KB of it) stays in L1. One running sum per column over all the rows
// would be a chain of dependent multiply-adds, latency-bound on narrow
// matrices; here a block's sum does not wait for y's, so blocks overlap.
//
// x86-64 with AVX2 and FMA only (8 f32 / 4 f64 lanes; AVX-512 CPUs run the
// same code); elsewhere AxpyGemvAvailable() is false and callers keep
// OpenBLAS.
#ifndef XJIT_RUNTIME_BLAS_AXPY_GEMV_H_
#define XJIT_RUNTIME_BLAS_AXPY_GEMV_H_

#include <cstdint>

namespace xjit::runtime::blas {

// y[c] = sum_r P[r, c] x[r] for c < cols, P[r, c] at p[r * ldp + c]
// (ldp >= cols), x with `rows` elements `incx` apart, y with `cols`
// elements `incy` apart (both strides positive). rows == 0 gives y = 0.
template <typename T>
struct AxpyGemvArgs {
  int64_t rows = 0, cols = 0;
  const T* p = nullptr;
  int64_t ldp = 0;
  const T* x = nullptr;
  int64_t incx = 1;
  T* y = nullptr;
  int64_t incy = 1;
};

// Whether this CPU runs the kernels (x86-64 with AVX2 and FMA).
bool AxpyGemvAvailable();

// Computes y (overwriting it). Requires AxpyGemvAvailable().
void AxpyGemv(const AxpyGemvArgs<float>& args);
void AxpyGemv(const AxpyGemvArgs<double>& args);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_AXPY_GEMV_H_
