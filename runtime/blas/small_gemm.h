// SmallGemm: f32 C = A B for GEMMs with few rows, without packing.
//
// OpenBLAS packs both operands into its own panel layout on every call. For
// a GEMM with few rows (a recurrent step: [32,256] x [256,1024]) packing the
// large operand costs as much as the arithmetic, and it is repeated on every
// step of the loop. These kernels read the operands where they lie instead:
//   - B with unit stride along N (row-major B, "NN", or a transposed A,
//     "TN"): a tile of up to 6 rows of C by 64 columns stays in registers;
//     each step over K loads 64 floats of one row of B and broadcasts one
//     element of A per row (A may have any strides);
//   - B with unit stride along K ("NT": C = A B^T, A with unit stride along
//     K too): a 4 x 4 tile of dot products, 16 lanes of K at a time, summed
//     across lanes at the end.
// Each element of C is one sum over K in a fixed order (lane-wise partial
// sums for NT), so results do not depend on the thread count; they may
// differ from OpenBLAS's in the last bits (another summation order).
//
// AVX-512F code, or AVX2+FMA code with narrower tiles (4 x 24 for NN, 3 x 4
// dot products of 8 lanes for NT) where the CPU lacks AVX-512F, behind a CPU
// check (SmallGemmAvailable, kernel_isa.h); PreferSmallGemm is
// the shape rule, measured against cblas_sgemm on this project's machine
// (benchmarks/blas/small_gemm_benchmark.cc, docs/performance.md): few rows
// (m <= 32) on any thread count; more rows over a short K (a weight
// gradient) only on several threads, where OpenBLAS's workers also spin in
// sched_yield between calls and take the cores from the rest of the step.
#ifndef XJIT_RUNTIME_BLAS_SMALL_GEMM_H_
#define XJIT_RUNTIME_BLAS_SMALL_GEMM_H_

#include <cstdint>

namespace xjit::runtime::blas {

// Row-major C[m, n] = sum_k A[m, k] B[k, n] (beta 0), element strides:
// A[i, k] at a[i * a_row_stride + k * a_col_stride]; B[k, n] at
// b[k * ldb + n] or, b_transposed, at b[n * ldb + k]; C[i, j] at
// c[i * ldc + j]. With b_transposed, a_col_stride must be 1.
struct SmallGemmArgs {
  int64_t m = 0, n = 0, k = 0;
  const float* a = nullptr;
  int64_t a_row_stride = 0, a_col_stride = 1;
  const float* b = nullptr;
  int64_t ldb = 0;
  bool b_transposed = false;
  float* c = nullptr;
  int64_t ldc = 0;
};

// Whether this CPU runs the kernels (x86-64 with AVX-512F, or AVX2 and FMA).
bool SmallGemmAvailable();

// Whether `args` is a shape where the kernels beat OpenBLAS on `threads`
// threads (and that they take: m, n, k >= 1; NT needs a unit K stride in
// A). False where !SmallGemmAvailable().
bool PreferSmallGemm(const SmallGemmArgs& args, int threads = 1);

// Computes C; `threads` > 1 splits the columns of C between that many
// threads of the shared pool when the product is large enough. Requires
// SmallGemmAvailable() and m, n, k >= 1.
void SmallGemm(const SmallGemmArgs& args, int threads);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_SMALL_GEMM_H_
