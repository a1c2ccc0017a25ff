// AVX2 lane helpers shared by the runtime's AVX2+FMA kernels (small_gemm.cc,
// direct_convolution.cc): the mask of a partial vector and the sum of a
// vector's 8 lanes in a fixed order (so a kernel's sums do not depend on
// where a thread split put their element).
//
// x86-64 with GCC or Clang only; the functions carry the avx2,fma target so
// that callers compiled without -mavx2 can inline them into functions with
// that target.
#ifndef XJIT_RUNTIME_BLAS_AVX2_LANES_INTERNAL_H_
#define XJIT_RUNTIME_BLAS_AVX2_LANES_INTERNAL_H_

#include <immintrin.h>

namespace xjit::runtime::blas::avx2 {

// Lanes [0, n) set (all ones), the others clear, for 0 <= n <= 8: the mask
// of _mm256_maskload_ps / _mm256_maskstore_ps, which neither read nor
// write (nor fault on) the clear lanes.
__attribute__((target("avx2,fma"), always_inline)) inline __m256i TailMask(int n) {
  const __m256i lanes = _mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0);
  return _mm256_cmpgt_epi32(_mm256_set1_epi32(n), lanes);
}

// The sum of the 8 lanes, by halves (a fixed order): lane i gets lane
// i + 4, then i + 2, then i + 1.
__attribute__((target("avx2,fma"), always_inline)) inline float SumLanes(__m256 v) {
  __m128 x = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  x = _mm_add_ps(x, _mm_movehl_ps(x, x));
  x = _mm_add_ss(x, _mm_movehdup_ps(x));
  return _mm_cvtss_f32(x);
}

}  // namespace xjit::runtime::blas::avx2

#endif  // XJIT_RUNTIME_BLAS_AVX2_LANES_INTERNAL_H_
