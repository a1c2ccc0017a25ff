// Small-M GEMM kernels; see small_gemm.h.
#include "runtime/blas/small_gemm.h"

#include <algorithm>
#include <array>
#include <utility>

#include "runtime/blas/kernel_isa.h"
#include "runtime/thread_pool.h"

// AVX-512F and AVX2+FMA code, compiled for x86-64 only (in functions with
// those targets, so the rest of the build needs no -mavx512f or -mavx2) and
// run only when the CPU has it (kernel_isa.h); elsewhere SmallGemmAvailable
// is false and callers keep OpenBLAS.
#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_SMALL_GEMM_X86 1
#include <immintrin.h>

#include "runtime/blas/avx2_lanes_internal.h"
#else
#define XJIT_SMALL_GEMM_X86 0
#endif

namespace xjit::runtime::blas {

namespace {

// NN and TN products of at most this many columns (two AVX2 vectors) run
// here at any size (PreferSmallGemm), TN ones (A's elements along K not
// adjacent) over K up to kNarrowMaxStridedK.
constexpr int64_t kNarrowColumns2 = 16;
constexpr int64_t kNarrowMaxStridedK = 256;
// NT products with K up to this run on transposed panels of B (RunPanels).
constexpr int64_t kShortK = 32;
// NN and TN products of more rows than this, over K up to kPanelMaxK, whose
// rows of B lie at least kPanelMinLdb floats apart, run on panels of B too
// (RunPanels).
constexpr int64_t kPanelMinRows = 6;
constexpr int64_t kPanelMinLdb = 512;
constexpr int64_t kPanelMaxK = 256;

// Whether an NT product runs on transposed panels of B (RunPanels).
bool ShortNT(const SmallGemmArgs& args) { return args.b_transposed && args.k <= kShortK; }

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

// Columns [j0, j0 + columns) of C (at most kBlockColumns), every row tile
// of 6 (the block's panel of B stays in cache across them).
void RunNNBlock(const SmallGemmArgs& g, int64_t j0, int64_t columns) {
  const int vectors = static_cast<int>((columns + 15) / 16);
  const int tail = static_cast<int>(columns - 16 * (vectors - 1));
  const __mmask16 last = static_cast<__mmask16>((1u << tail) - 1);
  for (int64_t i0 = 0; i0 < g.m; i0 += kRows) {
    const int rows = static_cast<int>(std::min<int64_t>(kRows, g.m - i0));
    kTilesNN[rows - 1][vectors - 1](g, i0, j0, last);
  }
}

// Columns [begin, end) of C: blocks of 64 columns.
void RunNN(const SmallGemmArgs& g, int64_t begin, int64_t end) {
  for (int64_t j0 = begin; j0 < end; j0 += kBlockColumns) {
    RunNNBlock(g, j0, std::min(kBlockColumns, end - j0));
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


// AVX2+FMA versions (8 lanes, 16 ymm registers): NN tiles of up to
// kRows2 x (8 * kVectors2), 12 accumulators, 3 rows of B and one
// broadcast; NT tiles of kDotRows2 x kDotColumns2 dot products, 12
// accumulators, the rows of A loaded once per step and one row of B at a
// time. Same loop orders as the AVX-512F tiles; the sums are the same per
// element on any thread count (NT's lanes are 8, not 16, so the bits differ
// from the AVX-512F kernels', as they do from OpenBLAS's).
constexpr int kRows2 = 4;
constexpr int kVectors2 = 3;
// Tiles of at most 2 vectors take this many rows (12 accumulators, as the
// 4 x 3-vector tiles have): 4 rows gave 8, and at two FMAs a cycle with a
// latency of 4 that left no slack.
constexpr int kNarrowRows2 = 6;
constexpr int64_t kBlockColumns2 = 8 * kVectors2;
constexpr int kDotRows2 = 3;
constexpr int kDotColumns2 = 4;

template <int R, int V>
__attribute__((target("avx2,fma"))) void TileNN2(const SmallGemmArgs& g, int64_t i0, int64_t j0,
                                                 int last_columns) {
  // The last vector's mask from its column count: a function pointer type
  // with an __m256i parameter loses the type's attributes in std::array
  // (-Wignored-attributes).
  const __m256i last = avx2::TailMask(last_columns);
  __m256 acc[R][V];
#pragma GCC unroll 8
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) acc[r][v] = _mm256_setzero_ps();
  }
  const float* a = g.a + i0 * g.a_row_stride;
  const float* b = g.b + j0;
  for (int64_t kk = 0; kk < g.k; ++kk) {
    // As in TileNN: rows of B lie ldb apart, often across pages.
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      _mm_prefetch(reinterpret_cast<const char*>(b + 8 * g.ldb + 8 * v), _MM_HINT_T0);
    }
    __m256 bv[V];
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      bv[v] = v + 1 < V ? _mm256_loadu_ps(b + 8 * v) : _mm256_maskload_ps(b + 8 * v, last);
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 av = _mm256_broadcast_ss(a + r * g.a_row_stride);
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) acc[r][v] = _mm256_fmadd_ps(av, bv[v], acc[r][v]);
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
        _mm256_storeu_ps(c + 8 * v, acc[r][v]);
      } else {
        _mm256_maskstore_ps(c + 8 * v, last, acc[r][v]);
      }
    }
  }
}

using TileNN2Fn = void (*)(const SmallGemmArgs&, int64_t, int64_t, int);

template <int R, size_t... V>
constexpr std::array<TileNN2Fn, kVectors2> TileNN2Row(std::index_sequence<V...>) {
  return {&TileNN2<R, static_cast<int>(V) + 1>...};
}
template <size_t... R>
constexpr std::array<std::array<TileNN2Fn, kVectors2>, kNarrowRows2> TileNN2Table(
    std::index_sequence<R...>) {
  return {TileNN2Row<static_cast<int>(R) + 1>(std::make_index_sequence<kVectors2>())...};
}
constexpr auto kTilesNN2 = TileNN2Table(std::make_index_sequence<kNarrowRows2>());

// The rows of an AVX2 NN tile over a block of `columns` columns.
int64_t TileRows2(int64_t columns) { return columns <= 16 ? kNarrowRows2 : kRows2; }

void RunNNBlock2(const SmallGemmArgs& g, int64_t j0, int64_t columns) {
  const int vectors = static_cast<int>((columns + 7) / 8);
  const int last_columns = static_cast<int>(columns - 8 * (vectors - 1));
  const int64_t tile_rows = TileRows2(columns);
  for (int64_t i0 = 0; i0 < g.m; i0 += tile_rows) {
    const int rows = static_cast<int>(std::min<int64_t>(tile_rows, g.m - i0));
    kTilesNN2[rows - 1][vectors - 1](g, i0, j0, last_columns);
  }
}

void RunNN2(const SmallGemmArgs& g, int64_t begin, int64_t end) {
  for (int64_t j0 = begin; j0 < end; j0 += kBlockColumns2) {
    RunNNBlock2(g, j0, std::min(kBlockColumns2, end - j0));
  }
}

// One step of TileNT2: lanes [kk, kk+8) of K (those in `mask`; a full
// step passes none and loads whole vectors).
template <int R, int C, bool kMasked>
__attribute__((target("avx2,fma"), always_inline)) inline void DotStep2(
    const float* a, int64_t a_row_stride, const float* b, int64_t ldb, int64_t kk, __m256i mask,
    __m256 (&acc)[R][C]) {
  __m256 av[R];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
    av[r] = kMasked ? _mm256_maskload_ps(a + r * a_row_stride + kk, mask)
                    : _mm256_loadu_ps(a + r * a_row_stride + kk);
  }
#pragma GCC unroll 4
  for (int c = 0; c < C; ++c) {
    const __m256 bv = kMasked ? _mm256_maskload_ps(b + c * ldb + kk, mask)
                              : _mm256_loadu_ps(b + c * ldb + kk);
#pragma GCC unroll 4
    for (int r = 0; r < R; ++r) acc[r][c] = _mm256_fmadd_ps(av[r], bv, acc[r][c]);
  }
}

template <int R, int C>
__attribute__((target("avx2,fma"))) void TileNT2(const SmallGemmArgs& g, int64_t i0,
                                                 int64_t j0) {
  __m256 acc[R][C];
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[r][c] = _mm256_setzero_ps();
  }
  const float* a = g.a + i0 * g.a_row_stride;
  const float* b = g.b + j0 * g.ldb;
  const __m256i none = _mm256_setzero_si256();
  int64_t kk = 0;
  for (; kk + 8 <= g.k; kk += 8) DotStep2<R, C, false>(a, g.a_row_stride, b, g.ldb, kk, none, acc);
  if (kk < g.k) {
    DotStep2<R, C, true>(a, g.a_row_stride, b, g.ldb, kk,
                         avx2::TailMask(static_cast<int>(g.k - kk)), acc);
  }
#pragma GCC unroll 4
  for (int r = 0; r < R; ++r) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) g.c[(i0 + r) * g.ldc + j0 + c] = avx2::SumLanes(acc[r][c]);
  }
}

template <int R, size_t... C>
constexpr std::array<TileNTFn, kDotColumns2> TileNT2Row(std::index_sequence<C...>) {
  return {&TileNT2<R, static_cast<int>(C) + 1>...};
}
template <size_t... R>
constexpr std::array<std::array<TileNTFn, kDotColumns2>, kDotRows2> TileNT2Table(
    std::index_sequence<R...>) {
  return {TileNT2Row<static_cast<int>(R) + 1>(std::make_index_sequence<kDotColumns2>())...};
}
constexpr auto kTilesNT2 = TileNT2Table(std::make_index_sequence<kDotRows2>());

void RunNT2(const SmallGemmArgs& g, int64_t begin, int64_t end) {
  for (int64_t j0 = begin; j0 < end; j0 += kDotColumns2) {
    const int columns = static_cast<int>(std::min<int64_t>(kDotColumns2, end - j0));
    for (int64_t i0 = 0; i0 < g.m; i0 += kDotRows2) {
      const int rows = static_cast<int>(std::min<int64_t>(kDotRows2, g.m - i0));
      kTilesNT2[rows - 1][columns - 1](g, i0, j0);
    }
  }
}

// Whether a product runs on panels (RunPanels): a short NT; NN and TN whose
// rows of B lie far apart, with more than one tile of rows to reuse the
// copy, over a K the panel holds. (Rows of B closer together share no L1
// sets: a panel only added its copy, 3.3 -> 4.2 us for [32,48] x [48,64].)
bool OnPanels(const SmallGemmArgs& args) {
  return ShortNT(args) || (!args.b_transposed && args.ldb >= kPanelMinLdb &&
                           args.m > kPanelMinRows && args.k <= kPanelMaxK);
}

// C's columns [begin, end) by blocks, each on a panel: the block's columns
// of B copied to a dense [K, block] buffer on the stack (at most
// kPanelMaxK x 64 floats, 64 KB), then every row tile on it. Two cases:
//   - NN and TN: rows of B lie ldb apart, and where that is a multiple of
//     4 KiB or near it (a [32,1024] B: 4 KiB) the block's K rows fall in
//     the same few L1 sets and every tile rereads them from L2 (the
//     TN weight-gradient shape [128,32] x [32,1024] ran at 20 GFLOP/s on
//     Zen 3 against OpenBLAS's 56). A dense panel is one stretch of cache.
//   - NT over a short K (kShortK at most: attention's Q K^T over a head of
//     8-32): a dot product of so few lanes is mostly its final sum across
//     lanes, so the block's rows of B are copied transposed and the NN
//     tiles run on them.
// Each element is one sum over K in order, as without the panel, so the
// bits are those of the unpacked NN tiles.
void RunPanels(const SmallGemmArgs& g, int64_t begin, int64_t end, bool avx512) {
  const int64_t block = avx512 ? kBlockColumns : kBlockColumns2;
  alignas(64) float panel[kPanelMaxK * kBlockColumns];
  SmallGemmArgs p = g;
  p.b = panel;
  p.ldb = block;
  p.b_transposed = false;
  for (int64_t j0 = begin; j0 < end; j0 += block) {
    const int64_t columns = std::min(block, end - j0);
    if (g.b_transposed) {
      for (int64_t j = 0; j < columns; ++j) {
        const float* row = g.b + (j0 + j) * g.ldb;
        for (int64_t kk = 0; kk < g.k; ++kk) panel[kk * block + j] = row[kk];
      }
    } else {
      // A loop, not memcpy: a call per row of 24 floats cost more than
      // the copy.
      for (int64_t kk = 0; kk < g.k; ++kk) {
        const float* row = g.b + kk * g.ldb + j0;
        float* to = panel + kk * block;
        for (int64_t j = 0; j < columns; ++j) to[j] = row[j];
      }
    }
    p.c = g.c + j0;
    avx512 ? RunNNBlock(p, 0, columns) : RunNNBlock2(p, 0, columns);
  }
}

#endif  // XJIT_SMALL_GEMM_X86

}  // namespace

bool SmallGemmAvailable() { return CurrentKernelIsa() != KernelIsa::kNone; }

bool PreferSmallGemm(const SmallGemmArgs& args, int threads) {
  if (!SmallGemmAvailable() || args.m < 1 || args.n < 1 || args.k < 1) return false;
  // A short K: any number of rows (OpenBLAS packs both operands and
  // zeroes C first; with K of 8 that is most of its time).
  if (ShortNT(args)) return true;
  // At 64 rows OpenBLAS was faster in both forms (its packing pays off).
  if (args.b_transposed) {
    return args.a_col_stride == 1 && args.m <= 32 && args.n >= 16 && args.k >= 64;
  }
  // A narrow product (a graph layer's [nodes, 64] x [64, 16], coordinates
  // times a 3 x 3 matrix): OpenBLAS packs all of A and zeroes C first.
  // small_gemm_benchmark on Zen 3, one thread, SmallGemm / cblas us:
  // [8192,64] x [64,16] 233 / 343, [8192,16] x [16,16] 92 / 148, [8192,256] x
  // [256,16] 825 / 1339, [64,64] x [64,16] 2.0 / 2.8, [512,65536] x
  // [65536,16] 12.5 / 24.0 ms; at 32 and 48 columns even or slower. With A
  // stored transposed (TN) only over a short K: each tile walks K rows of
  // A^T, a cache line and soon a page apart, that the next tile reads again
  // ([16384,512]^T x [16384,16] 18.3 / 6.3 ms; at K 1024 even, at 256 and
  // below faster). AVX2 tiles only (the AVX-512F ones were not measured on
  // these shapes).
  if (args.n <= kNarrowColumns2 && CurrentKernelIsa() == KernelIsa::kAvx2 &&
      (args.a_col_stride == 1 || args.k <= kNarrowMaxStridedK)) {
    return true;
  }
  // More rows over a short K (a weight gradient, [128,32] x [32,1024]):
  // as fast as OpenBLAS on one thread, faster on two; over K up to kShortK
  // faster on one too (OpenBLAS zeroes C before it adds the product: with K
  // 8, attention's Q K^T over 128 x 128 per head, that pass took as long as
  // the product).
  const bool shape =
      args.n >= 64 && (args.m <= 32 || args.k <= kShortK || (threads > 1 && args.k <= 64));
  // The AVX2 NN tiles ran 63-84 GFLOP/s on one Zen 3 core while B is at
  // most 256 KB ([32,48] x [48,64]: 72 against OpenBLAS's 56; [32,64] x
  // [64,256]: 73 against 64), but about 35 against OpenBLAS's 40-65 with a
  // large B ([32,256] x [256,1024], rows of B 4 KiB apart: the 24-column
  // panel shares L1 sets and is reread from L2 for each 4-row tile, where
  // AVX-512's 64-column panel uses whole lines). Two threads took every
  // shape, 2-2.5x faster in wall time (small_gemm_benchmark's *Threads rows:
  // OpenBLAS's own threads share the cores with the rest of the machine).
  constexpr int64_t kAvx2OneThreadMaxB = int64_t{1} << 16;  // floats, 256 KB
  return shape && (threads > 1 || CurrentKernelIsa() == KernelIsa::kAvx512 ||
                   args.k * args.n <= kAvx2OneThreadMaxB);
}

void SmallGemm(const SmallGemmArgs& args, int threads) {
#if XJIT_SMALL_GEMM_X86
  const bool avx512 = CurrentKernelIsa() == KernelIsa::kAvx512;
  const bool panels = OnPanels(args);
  const int64_t unit = args.b_transposed && !panels ? (avx512 ? kDotColumns : kDotColumns2)
                                                    : (avx512 ? kBlockColumns : kBlockColumns2);
  const int64_t units = (args.n + unit - 1) / unit;
  const int64_t product = args.m * args.n * args.k;
  const int64_t wanted = product >= kParallelMinProduct ? std::max(threads, 1) : 1;
  // Columns [begin, end) of the rows of `g`.
  const auto run = [&](const SmallGemmArgs& g, int64_t begin, int64_t end) {
    if (panels) {
      RunPanels(g, begin, end, avx512);
    } else if (g.b_transposed) {
      avx512 ? RunNT(g, begin, end) : RunNT2(g, begin, end);
    } else {
      avx512 ? RunNN(g, begin, end) : RunNN2(g, begin, end);
    }
  };
  if (wanted <= 1) {
    run(args, 0, args.n);
    return;
  }
  // Fewer column blocks than threads (a narrow C of many rows: a graph
  // layer's [nodes, 16]): the threads take bands of whole row tiles instead.
  // Every element is the same sum either way.
  const int64_t row_unit = args.b_transposed && !panels
                               ? (avx512 ? kDotRows : kDotRows2)
                               : (avx512 ? kRows : TileRows2(std::min(args.n, unit)));
  const int64_t row_units = (args.m + row_unit - 1) / row_unit;
  if (units < wanted && row_units > units) {
    const int64_t chunks = std::min(wanted, row_units);
    ThreadPool::Shared().ParallelFor(chunks, static_cast<int>(chunks - 1), [&](int64_t t) {
      const int64_t begin = row_units * t / chunks * row_unit;
      const int64_t end = std::min(args.m, row_units * (t + 1) / chunks * row_unit);
      if (begin >= end) return;
      SmallGemmArgs band = args;
      band.m = end - begin;
      band.a = args.a + begin * args.a_row_stride;
      band.c = args.c + begin * args.ldc;
      run(band, 0, args.n);
    });
    return;
  }
  const int64_t chunks = std::min(wanted, units);
  if (chunks <= 1) {
    run(args, 0, args.n);
    return;
  }
  ThreadPool::Shared().ParallelFor(chunks, static_cast<int>(chunks - 1), [&](int64_t t) {
    const int64_t begin = units * t / chunks * unit;
    const int64_t end = std::min(args.n, units * (t + 1) / chunks * unit);
    if (begin < end) run(args, begin, end);
  });
#else
  (void)args;
  (void)threads;
#endif
}

}  // namespace xjit::runtime::blas
