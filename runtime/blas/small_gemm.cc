// Small-M GEMM kernels; see small_gemm.h.
#include "runtime/blas/small_gemm.h"

#include <algorithm>
#include <array>
#include <utility>

#include "runtime/thread_pool.h"

// AVX-512F code, compiled for x86-64 only (in functions with that target, so
// the rest of the build needs no -mavx512f) and run only when the CPU has
// it; elsewhere SmallGemmAvailable is false and callers keep OpenBLAS.
#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_SMALL_GEMM_X86 1
#include <immintrin.h>
#else
#define XJIT_SMALL_GEMM_X86 0
#endif

namespace xjit::runtime::blas {

namespace {

#if XJIT_SMALL_GEMM_X86

// NN tiles: up to kRows rows of C by up to kVectors vectors of 16 columns.
constexpr int kRows = 6;
constexpr int kVectors = 4;
constexpr int64_t kBlockColumns = 16 * kVectors;
// NT tiles: kDotRows x kDotColumns dot products.
constexpr int kDotRows = 4;
constexpr int kDotColumns = 4;

// Products (m * n * k) below this run on one thread: splitting costs a pool
// hand-off, a few microseconds.
constexpr int64_t kParallelMinProduct = int64_t{2} << 20;

// C[i0 .. i0+R, j0 .. j0+16V) over all of K; the last vector's columns are
// `last` (a mask), so a partial block reads and writes no column past n.
template <int R, int V>
__attribute__((target("avx512f"))) void TileNN(const SmallGemmArgs& g, int64_t i0, int64_t j0,
                                               __mmask16 last) {
  __m512 acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  const float* a = g.a + i0 * g.a_row_stride;
  const float* b = g.b + j0;
  for (int64_t kk = 0; kk < g.k; ++kk) {
    // Rows of B lie ldb apart, often a multiple of 4 KiB: the hardware
    // prefetcher does not follow them across pages (measured: 3-7% faster).
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * g.ldb + 16 * v), _MM_HINT_T0);
    }
    __m512 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      bv[v] = v + 1 < V ? _mm512_loadu_ps(b + 16 * v) : _mm512_maskz_loadu_ps(last, b + 16 * v);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 av = _mm512_set1_ps(a[r * g.a_row_stride]);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
    }
    a += g.a_col_stride;
    b += g.ldb;
  }
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
    float* c = g.c + (i0 + r) * g.ldc + j0;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      if (v + 1 < V) {
        _mm512_storeu_ps(c + 16 * v, acc[r][v]);
      } else {
        _mm512_mask_storeu_ps(c + 16 * v, last, acc[r][v]);
      }
    }
  }
}

using TileNNFn = void (*)(const SmallGemmArgs&, int64_t, int64_t, __mmask16);

template <int R, size_t... V>
constexpr std::array<TileNNFn, kVectors> TileNNRow(std::index_sequence<V...>) {
  return {&TileNN<R, static_cast<int>(V) + 1>...};
}
template <size_t... R>
constexpr std::array<std::array<TileNNFn, kVectors>, kRows> TileNNTable(
    std::index_sequence<R...>) {
  return {TileNNRow<static_cast<int>(R) + 1>(std::make_index_sequence<kVectors>())...};
}
constexpr auto kTilesNN = TileNNTable(std::make_index_sequence<kRows>());

// Columns [begin, end) of C: blocks of 64 columns, rows in tiles of 6 under
// each (the block's panel of B stays in cache across them).
void RunNN(const SmallGemmArgs& g, int64_t begin, int64_t end) {
  for (int64_t j0 = begin; j0 < end; j0 += kBlockColumns) {
    const int64_t columns = std::min(kBlockColumns, end - j0);
    const int vectors = static_cast<int>((columns + 15) / 16);
    const int tail = static_cast<int>(columns - 16 * (vectors - 1));
    const __mmask16 last = static_cast<__mmask16>((1u << tail) - 1);
    for (int64_t i0 = 0; i0 < g.m; i0 += kRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kRows, g.m - i0));
      kTilesNN[rows - 1][vectors - 1](g, i0, j0, last);
    }
  }
}

// The sum of the 16 lanes, by halves (a fixed order): lane i gets lane
// i + 8, then i + 4, i + 2, i + 1. (GCC 12's _mm512_reduce_add_ps, and the
// shuffles it is made of, warn of an uninitialised operand in its header;
// the two-source permute does not.)
__attribute__((target("avx512f"), always_inline)) inline float SumLanes(__m512 v) {
  const __m512i down8 = _mm512_set_epi32(7, 6, 5, 4, 3, 2, 1, 0, 15, 14, 13, 12, 11, 10, 9, 8);
  const __m512i down4 = _mm512_set_epi32(11, 10, 9, 8, 15, 14, 13, 12, 3, 2, 1, 0, 7, 6, 5, 4);
  const __m512i down2 = _mm512_set_epi32(13, 12, 15, 14, 9, 8, 11, 10, 5, 4, 7, 6, 1, 0, 3, 2);
  const __m512i down1 = _mm512_set_epi32(14, 15, 12, 13, 10, 11, 8, 9, 6, 7, 4, 5, 2, 3, 0, 1);
  v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, down8, v));
  v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, down4, v));
  v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, down2, v));
  v = _mm512_add_ps(v, _mm512_permutex2var_ps(v, down1, v));
  return _mm512_cvtss_f32(v);
}

// One step of TileNT: lanes [kk, kk+16) of K (those in `mask`).
template <int R, int C>
__attribute__((target("avx512f"), always_inline)) inline void DotStep(
    const float* a, int64_t a_row_stride, const float* b, int64_t ldb, int64_t kk,
    __mmask16 mask, __m512 (&acc)[R][C]) {
  __m512 av[R], bv[C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) av[r] = _mm512_maskz_loadu_ps(mask, a + r * a_row_stride + kk);
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) bv[c] = _mm512_maskz_loadu_ps(mask, b + c * ldb + kk);
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_fmadd_ps(av[r], bv[c], acc[r][c]);
  }
}

// C[i0 .. i0+R, j0 .. j0+C) as dot products of rows of A and rows of B
// (b_transposed), 16 lanes of K at a time, the lanes summed at the end.
template <int R, int C>
__attribute__((target("avx512f"))) void TileNT(const SmallGemmArgs& g, int64_t i0, int64_t j0) {
  __m512 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm512_setzero_ps();
  }
  const float* a = g.a + i0 * g.a_row_stride;
  const float* b = g.b + j0 * g.ldb;
  int64_t kk = 0;
  for (; kk + 16 <= g.k; kk += 16) DotStep<R, C>(a, g.a_row_stride, b, g.ldb, kk, 0xFFFF, acc);
  if (kk < g.k) {
    DotStep<R, C>(a, g.a_row_stride, b, g.ldb, kk,
                  static_cast<__mmask16>((1u << (g.k - kk)) - 1), acc);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) g.c[(i0 + r) * g.ldc + j0 + c] = SumLanes(acc[r][c]);
  }
}

using TileNTFn = void (*)(const SmallGemmArgs&, int64_t, int64_t);

template <int R, size_t... C>
constexpr std::array<TileNTFn, kDotColumns> TileNTRow(std::index_sequence<C...>) {
  return {&TileNT<R, static_cast<int>(C) + 1>...};
}
template <size_t... R>
constexpr std::array<std::array<TileNTFn, kDotColumns>, kDotRows> TileNTTable(
    std::index_sequence<R...>) {
  return {TileNTRow<static_cast<int>(R) + 1>(std::make_index_sequence<kDotColumns>())...};
}
constexpr auto kTilesNT = TileNTTable(std::make_index_sequence<kDotRows>());

// Columns [begin, end) of C: groups of 4 rows of B, every row tile of A
// under each (the group's rows of B stay in cache across them).
void RunNT(const SmallGemmArgs& g, int64_t begin, int64_t end) {
  for (int64_t j0 = begin; j0 < end; j0 += kDotColumns) {
    const int columns = static_cast<int>(std::min<int64_t>(kDotColumns, end - j0));
    for (int64_t i0 = 0; i0 < g.m; i0 += kDotRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kDotRows, g.m - i0));
      kTilesNT[rows - 1][columns - 1](g, i0, j0);
    }
  }
}

#endif  // XJIT_SMALL_GEMM_X86

}  // namespace

bool SmallGemmAvailable() {
#if XJIT_SMALL_GEMM_X86
  static const bool supported = __builtin_cpu_supports("avx512f");
  return supported;
#else
  return false;
#endif
}

bool PreferSmallGemm(const SmallGemmArgs& args, int threads) {
  if (!SmallGemmAvailable() || args.m < 1 || args.n < 1 || args.k < 1) return false;
  // At 64 rows OpenBLAS was faster in both forms (its packing pays off).
  if (args.b_transposed) {
    return args.a_col_stride == 1 && args.m <= 32 && args.n >= 16 && args.k >= 64;
  }
  // More rows over a short K (a weight gradient, [128,32] x [32,1024]):
  // as fast as OpenBLAS on one thread, faster on two.
  return args.n >= 64 && (args.m <= 32 || (threads > 1 && args.k <= 64));
}

void SmallGemm(const SmallGemmArgs& args, int threads) {
#if XJIT_SMALL_GEMM_X86
  const int64_t unit = args.b_transposed ? kDotColumns : kBlockColumns;
  const int64_t units = (args.n + unit - 1) / unit;
  const int64_t product = args.m * args.n * args.k;
  const int64_t chunks =
      product >= kParallelMinProduct ? std::min<int64_t>(std::max(threads, 1), units) : 1;
  const auto run = [&](int64_t begin, int64_t end) {
    if (args.b_transposed) {
      RunNT(args, begin, end);
    } else {
      RunNN(args, begin, end);
    }
  };
  if (chunks <= 1) {
    run(0, args.n);
    return;
  }
  ThreadPool::Shared().ParallelFor(chunks, static_cast<int>(chunks - 1), [&](int64_t t) {
    const int64_t begin = units * t / chunks * unit;
    const int64_t end = std::min(args.n, units * (t + 1) / chunks * unit);
    if (begin < end) run(begin, end);
  });
#else
  (void)args;
  (void)threads;
#endif
}

}  // namespace xjit::runtime::blas
