// SmallGemv's AVX2+FMA kernels; see small_gemv_avx2_internal.h. Each y
// element is one sum in a fixed order (another than the AVX-512F kernels':
// 8 lanes, not 16), the same on every call.
#include "runtime/blas/small_gemv_avx2_internal.h"

#include <algorithm>

#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_SMALL_GEMV_AVX2 1
#include <immintrin.h>

#include "runtime/blas/avx2_lanes_internal.h"
#else
#define XJIT_SMALL_GEMV_AVX2 0
#endif

namespace xjit::runtime::blas {

#if XJIT_SMALL_GEMV_AVX2

namespace {

// Lane i of the result = the sum of a[i]'s 8 lanes, for 8 vectors:
// pairwise horizontal adds (a fixed order), then the halves.
__attribute__((target("avx2,fma"), always_inline)) inline __m256 SumEachOf8(const __m256* a) {
  const __m256 t0 = _mm256_hadd_ps(a[0], a[1]);
  const __m256 t1 = _mm256_hadd_ps(a[2], a[3]);
  const __m256 t2 = _mm256_hadd_ps(a[4], a[5]);
  const __m256 t3 = _mm256_hadd_ps(a[6], a[7]);
  const __m256 u0 = _mm256_hadd_ps(t0, t1);  // rows 0-3: low-half sums | high-half sums
  const __m256 u1 = _mm256_hadd_ps(t2, t3);  // rows 4-7
  return _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
}

// Rows of at most 8V elements; rows past the end of a last partial block
// read the block's first row again and are not stored.
template <int V>
__attribute__((target("avx2,fma"))) void Dots(const SmallGemvArgs& g) {
  const __m256i all = _mm256_set1_epi32(-1);
  const __m256i last = avx2::TailMask(static_cast<int>(g.cols - 8 * (V - 1)));
  __m256 xv[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) xv[v] = _mm256_maskload_ps(g.x + 8 * v, v + 1 < V ? all : last);
  for (int64_t r0 = 0; r0 < g.rows; r0 += 8) {
    const int64_t count = std::min<int64_t>(8, g.rows - r0);
    __m256 acc[8];
    const float* row = g.p + r0 * g.ldp;
#pragma GCC unroll 8
    for (int i = 0; i < 8; ++i) {
      const float* r = i < count ? row + i * g.ldp : row;
      acc[i] = _mm256_mul_ps(_mm256_maskload_ps(r, V > 1 ? all : last), xv[0]);
#pragma GCC unroll 8
      for (int v = 1; v < V; ++v) {
        acc[i] = _mm256_fmadd_ps(_mm256_maskload_ps(r + 8 * v, v + 1 < V ? all : last), xv[v],
                                 acc[i]);
      }
    }
    const __m256 sums = SumEachOf8(acc);
    if (g.incy == 1) {
      _mm256_maskstore_ps(g.y + r0, avx2::TailMask(static_cast<int>(count)), sums);
    } else {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, sums);
      for (int64_t i = 0; i < count; ++i) g.y[(r0 + i) * g.incy] = lanes[i];
    }
  }
}

// y[c0 .. c0 + 8V) (the last vector's lanes `last`).
template <int V>
__attribute__((target("avx2,fma"))) void AxpyBlock(const SmallGemvArgs& g, int64_t c0,
                                                   __m256i last) {
  __m256i mask[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) mask[v] = v + 1 < V ? _mm256_set1_epi32(-1) : last;
  __m256 even[V], odd[V];
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) even[v] = odd[v] = _mm256_setzero_ps();
  const float* p = g.p + c0;
  int64_t r = 0;
  for (; r + 1 < g.rows; r += 2) {
    const __m256 x0 = _mm256_broadcast_ss(g.x + r * g.incx);
    const __m256 x1 = _mm256_broadcast_ss(g.x + (r + 1) * g.incx);
    const float* p0 = p + r * g.ldp;
    const float* p1 = p0 + g.ldp;
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      even[v] = _mm256_fmadd_ps(_mm256_maskload_ps(p0 + 8 * v, mask[v]), x0, even[v]);
      odd[v] = _mm256_fmadd_ps(_mm256_maskload_ps(p1 + 8 * v, mask[v]), x1, odd[v]);
    }
  }
  if (r < g.rows) {
    const __m256 x0 = _mm256_broadcast_ss(g.x + r * g.incx);
    const float* p0 = p + r * g.ldp;
#pragma GCC unroll 8
    for (int v = 0; v < V; ++v) {
      even[v] = _mm256_fmadd_ps(_mm256_maskload_ps(p0 + 8 * v, mask[v]), x0, even[v]);
    }
  }
#pragma GCC unroll 8
  for (int v = 0; v < V; ++v) {
    const __m256 sum = _mm256_add_ps(even[v], odd[v]);
    const int64_t c = c0 + 8 * v;
    if (g.incy == 1) {
      _mm256_maskstore_ps(g.y + c, mask[v], sum);
    } else {
      alignas(32) float lanes[8];
      _mm256_store_ps(lanes, sum);
      const int64_t count = std::min<int64_t>(8, g.cols - c);
      for (int64_t i = 0; i < count; ++i) g.y[(c + i) * g.incy] = lanes[i];
    }
  }
}

}  // namespace

__attribute__((target("avx2,fma"))) void SmallGemvDotsAvx2(const SmallGemvArgs& g) {
  switch ((g.cols + 7) / 8) {
    case 1: return Dots<1>(g);
    case 2: return Dots<2>(g);
    case 3: return Dots<3>(g);
    case 4: return Dots<4>(g);
    case 5: return Dots<5>(g);
    case 6: return Dots<6>(g);
    case 7: return Dots<7>(g);
    default: return Dots<8>(g);
  }
}

__attribute__((target("avx2,fma"))) void SmallGemvAxpysAvx2(const SmallGemvArgs& g) {
  for (int64_t c0 = 0; c0 < g.cols; c0 += 32) {
    const int64_t left = std::min<int64_t>(32, g.cols - c0);
    const int vectors = static_cast<int>((left + 7) / 8);
    const __m256i last = avx2::TailMask(static_cast<int>(left - 8 * (vectors - 1)));
    switch (vectors) {
      case 1: AxpyBlock<1>(g, c0, last); break;
      case 2: AxpyBlock<2>(g, c0, last); break;
      case 3: AxpyBlock<3>(g, c0, last); break;
      default: AxpyBlock<4>(g, c0, last); break;
    }
  }
}

#else

void SmallGemvDotsAvx2(const SmallGemvArgs&) {}
void SmallGemvAxpysAvx2(const SmallGemvArgs&) {}

#endif  // XJIT_SMALL_GEMV_AVX2

}  // namespace xjit::runtime::blas
