// Matrix-vector kernels for matrices with contiguous rows; see small_gemv.h.
#include "runtime/blas/small_gemv.h"

#include <algorithm>

#include "runtime/blas/kernel_isa.h"
#include "runtime/blas/small_gemv_avx2_internal.h"

// The loops over a block's rows and vectors are unrolled (GCC does not at
// -O2), so that the accumulators stay in registers.
//
// AVX-512F code, compiled for x86-64 only (in functions with that target, so
// the rest of the build needs no -mavx512f) and run only when the CPU has
// it; the AVX2+FMA versions are in small_gemv_avx2.cc; without either,
// SmallGemvAvailable is false and callers keep OpenBLAS.
#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_SMALL_GEMV_X86 1
#include <immintrin.h>
#else
#define XJIT_SMALL_GEMV_X86 0
#endif

namespace xjit::runtime::blas {

namespace {

#if XJIT_SMALL_GEMV_X86

// The lanes of `count` (0..16) leading elements.
__attribute__((target("avx512f"), always_inline)) inline __mmask16 LeadingMask(int64_t count) {
  return count >= 16 ? static_cast<__mmask16>(0xffff)
                     : static_cast<__mmask16>((1u << count) - 1);
}

// Lane i of the result = the sum of the lanes of a[i], for 16 vectors: a
// transpose-and-add tree (pairs of vectors interleaved and added, then
// pairs of those, then 128-bit quarters), 15 additions and 30 shuffles in
// all instead of 16 separate reductions.
// (The all-lanes masked forms of the shuffles: GCC 12's unmasked ones start
// from an uninitialised vector and warn under -Wmaybe-uninitialized once
// inlined.)
__attribute__((target("avx512f"), always_inline)) inline __m512 SumEachOf16(const __m512* a) {
  const __mmask16 all = 0xffff;
  __m512 u[8], w[4], x[2];
  // Per 128-bit quarter: (a0+a2, b0+b2, a1+a3, b1+b3) of the pair (a, b).
#pragma GCC unroll 16
  for (int i = 0; i < 8; ++i) {
    const __m512 p = a[2 * i], q = a[2 * i + 1];
    u[i] = _mm512_add_ps(_mm512_mask_unpacklo_ps(p, all, p, q),
                         _mm512_mask_unpackhi_ps(p, all, p, q));
  }
  // Per quarter: the quarter's sum of rows 4i .. 4i+3, in that order.
#pragma GCC unroll 16
  for (int i = 0; i < 4; ++i) {
    const __m512 p = u[2 * i], q = u[2 * i + 1];
    w[i] = _mm512_add_ps(_mm512_mask_shuffle_ps(p, all, p, q, 0x44),
                         _mm512_mask_shuffle_ps(p, all, p, q, 0xee));
  }
  // Quarters (0+2, 1+3) of w[2i], then of w[2i+1].
#pragma GCC unroll 16
  for (int i = 0; i < 2; ++i) {
    const __m512 p = w[2 * i], q = w[2 * i + 1];
    x[i] = _mm512_add_ps(_mm512_mask_shuffle_f32x4(p, all, p, q, 0x44),
                         _mm512_mask_shuffle_f32x4(p, all, p, q, 0xee));
  }
  // Quarter q = the whole sums of rows 4q .. 4q+3.
  return _mm512_add_ps(_mm512_mask_shuffle_f32x4(x[0], all, x[0], x[1], 0x88),
                       _mm512_mask_shuffle_f32x4(x[0], all, x[0], x[1], 0xdd));
}

// y[r] = sum_c P[r, c] x[c] for rows of at most 16V elements, x contiguous
// and held in V registers; 16 rows at a time, each row's dot product
// independent of the others (one pointer stepping by ldp, so no row
// pointers spill). Rows past the end of a last partial block read the
// block's first row again and are not stored.
template <int V>
__attribute__((target("avx512f"))) void Dots(const SmallGemvArgs& g) {
  const __mmask16 last = LeadingMask(g.cols - 16 * (V - 1));
  __m512 xv[V];
#pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    xv[v] = _mm512_maskz_loadu_ps(v + 1 < V ? static_cast<__mmask16>(0xffff) : last,
                                  g.x + 16 * v);
  }
  for (int64_t r0 = 0; r0 < g.rows; r0 += 16) {
    const int64_t count = std::min<int64_t>(16, g.rows - r0);
    __m512 acc[16];
    const float* row = g.p + r0 * g.ldp;
#pragma GCC unroll 16
    for (int i = 0; i < 16; ++i) {
      const float* r = i < count ? row + i * g.ldp : row;
      acc[i] = _mm512_mul_ps(_mm512_maskz_loadu_ps(V > 1 ? static_cast<__mmask16>(0xffff) : last, r),
                             xv[0]);
#pragma GCC unroll 16
      for (int v = 1; v < V; ++v) {
        acc[i] = _mm512_fmadd_ps(
            _mm512_maskz_loadu_ps(v + 1 < V ? static_cast<__mmask16>(0xffff) : last, r + 16 * v),
            xv[v], acc[i]);
      }
    }
    const __m512 sums = SumEachOf16(acc);
    if (g.incy == 1) {
      _mm512_mask_storeu_ps(g.y + r0, LeadingMask(count), sums);
    } else {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, sums);
      for (int64_t i = 0; i < count; ++i) g.y[(r0 + i) * g.incy] = lanes[i];
    }
  }
}

__attribute__((target("avx512f"))) void ShortDots(const SmallGemvArgs& g) {
  switch ((g.cols + 15) / 16) {
    case 1: return Dots<1>(g);
    case 2: return Dots<2>(g);
    case 3: return Dots<3>(g);
    default: return Dots<4>(g);
  }
}

// y[c0 .. c0 + 16V) (the last vector's lanes `last`) = sum_r P[r, c] x[r];
// even and odd rows on separate accumulators, added at the end.
template <int V>
__attribute__((target("avx512f"))) void AxpyBlock(const SmallGemvArgs& g, int64_t c0,
                                                 __mmask16 last) {
  __mmask16 mask[V];
  #pragma GCC unroll 16
  for (int v = 0; v < V; ++v) mask[v] = v + 1 < V ? static_cast<__mmask16>(0xffff) : last;
  __m512 even[V], odd[V];
  #pragma GCC unroll 16
  for (int v = 0; v < V; ++v) even[v] = odd[v] = _mm512_setzero_ps();
  const float* p = g.p + c0;
  int64_t r = 0;
  for (; r + 1 < g.rows; r += 2) {
    const __m512 x0 = _mm512_set1_ps(g.x[r * g.incx]);
    const __m512 x1 = _mm512_set1_ps(g.x[(r + 1) * g.incx]);
    const float* p0 = p + r * g.ldp;
    const float* p1 = p0 + g.ldp;
    #pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      even[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], p0 + 16 * v), x0, even[v]);
      odd[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], p1 + 16 * v), x1, odd[v]);
    }
  }
  if (r < g.rows) {
    const __m512 x0 = _mm512_set1_ps(g.x[r * g.incx]);
    const float* p0 = p + r * g.ldp;
    #pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      even[v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], p0 + 16 * v), x0, even[v]);
    }
  }
  #pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    const __m512 sum = _mm512_add_ps(even[v], odd[v]);
    const int64_t c = c0 + 16 * v;
    if (g.incy == 1) {
      _mm512_mask_storeu_ps(g.y + c, mask[v], sum);
    } else {
      alignas(64) float lanes[16];
      _mm512_store_ps(lanes, sum);
      const int64_t count = std::min<int64_t>(16, g.cols - c);
      for (int64_t i = 0; i < count; ++i) g.y[(c + i) * g.incy] = lanes[i];
    }
  }
}

__attribute__((target("avx512f"))) void Axpys(const SmallGemvArgs& g) {
  for (int64_t c0 = 0; c0 < g.cols; c0 += 64) {
    const int64_t left = std::min<int64_t>(64, g.cols - c0);
    const int vectors = static_cast<int>((left + 15) / 16);
    const __mmask16 last = LeadingMask(left - 16 * (vectors - 1));
    switch (vectors) {
      case 1: AxpyBlock<1>(g, c0, last); break;
      case 2: AxpyBlock<2>(g, c0, last); break;
      case 3: AxpyBlock<3>(g, c0, last); break;
      default: AxpyBlock<4>(g, c0, last); break;
    }
  }
}

#endif  // XJIT_SMALL_GEMV_X86

}  // namespace

bool SmallGemvAvailable() { return CurrentKernelIsa() != KernelIsa::kNone; }

bool PreferSmallGemv(const SmallGemvArgs& args) {
  if (!SmallGemvAvailable() || args.incx < 1 || args.incy < 1) return false;
  // Measured against cblas_sgemv on one thread (docs/zoo.md, "Session 15:
  // samplers"): rows of 16 to 64 elements, from 16 rows up to 1 MB of
  // matrix. Shorter rows waste most lanes (256 x 2: 3-4x slower than
  // OpenBLAS); longer ones and larger matrices were slower or even.
  if (args.cols < 16 || args.cols > 64 || args.rows < 16) return false;
  if (args.rows * args.cols > (int64_t{1} << 18)) return false;
  // The AVX2 kernels lost to OpenBLAS 1.4-1.6x at 1 MB ([4096, 64]) and won
  // or tied up to 256 KB (small_gemv_benchmark on Zen 3, one run): half a
  // megabyte at most, the L2 cache of that core.
  if (CurrentKernelIsa() == KernelIsa::kAvx2 && args.rows * args.cols > (int64_t{1} << 17)) {
    return false;
  }
  // Dots read x as vectors: contiguous x only.
  return args.transposed || args.incx == 1;
}

void SmallGemv(const SmallGemvArgs& args) {
#if XJIT_SMALL_GEMV_X86
  // Without AVX-512F: the AVX2+FMA kernels (small_gemv_avx2_internal.h).
  if (CurrentKernelIsa() == KernelIsa::kAvx2) {
    if (args.transposed) {
      SmallGemvAxpysAvx2(args);
    } else {
      SmallGemvDotsAvx2(args);
    }
    return;
  }
  if (args.transposed) {
    Axpys(args);
  } else {
    ShortDots(args);
  }
#else
  (void)args;
#endif
}

}  // namespace xjit::runtime::blas
