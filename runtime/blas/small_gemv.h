// SmallGemv: f32 matrix-vector products over a matrix with contiguous rows,
// without a library call.
//
// A sampler's leapfrog step multiplies its data matrix X[2048, 32] by a
// vector and the transposed matrix by another: two cblas_sgemv calls of
// 4-5 us each per step, where reading the 256 KB matrix from L2 takes about
// 2. OpenBLAS 0.3.21's row-major no-transpose sgemv runs as a transposed
// column-major product whose short dot products (32 elements) are summed
// across lanes one at a time. These kernels take the matrix where it lies
// (P[r, c] at p[r * ldp + c]) in its two forms:
//   - dots: y[r] = sum_c P[r, c] x[c]; 16 rows at a time, each a vector
//     accumulator over c (16 lanes, a masked tail), the 16 accumulators
//     summed across lanes together by a transpose-and-add tree (about 3
//     instructions per row instead of a reduction each);
//   - axpys: y[c] = sum_r P[r, c] x[r]; 64 columns at a time in registers,
//     one broadcast of x[r] and 4 multiply-adds per row, two rows
//     interleaved on separate accumulators.
// Sums run in another order than OpenBLAS's (each y element is one fixed
// order, the same on any thread count and call), so results may differ
// from cblas_sgemv in the last bits.
//
// AVX-512F code, or AVX2+FMA code (8 rows / 32 columns at a time) where the
// CPU lacks AVX-512F, behind a CPU check (SmallGemvAvailable, as
// small_gemm.h); elsewhere callers keep OpenBLAS.
#ifndef XJIT_RUNTIME_BLAS_SMALL_GEMV_H_
#define XJIT_RUNTIME_BLAS_SMALL_GEMV_H_

#include <cstdint>

namespace xjit::runtime::blas {

// y = P x (dots) or y = P^T x (axpys, `transposed`), P with `rows` rows of
// `cols` elements, row r at p + r * ldp; x and y with element strides incx
// and incy (positive). y has `rows` elements (dots) or `cols` (axpys).
struct SmallGemvArgs {
  int64_t rows = 0, cols = 0;
  const float* p = nullptr;
  int64_t ldp = 0;
  bool transposed = false;
  const float* x = nullptr;
  int64_t incx = 1;
  float* y = nullptr;
  int64_t incy = 1;
};

// Whether this CPU runs the kernels (x86-64 with AVX-512F, or AVX2 and FMA).
bool SmallGemvAvailable();

// Whether `args` is a shape where the kernels beat cblas_sgemv on one
// thread (measured: docs/zoo.md, "Session 15: samplers"). False where
// !SmallGemvAvailable().
bool PreferSmallGemv(const SmallGemvArgs& args);

// Computes y (overwriting it). Requires PreferSmallGemv(args) (the dots
// form holds a row in at most 4 registers: 64 elements).
void SmallGemv(const SmallGemvArgs& args);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_SMALL_GEMV_H_
