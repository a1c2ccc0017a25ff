// The direct convolution kernel; see direct_convolution.h.
#include "runtime/blas/direct_convolution.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "runtime/thread_pool.h"

// The tiles are AVX-512F or AVX2+FMA code, compiled for x86-64 only (in
// functions with those targets, so the rest of the build needs no -mavx512f
// or -mavx2) and run only when the CPU has it (kernel_isa.h); elsewhere no
// convolution gets a direct plan.
#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_DIRECT_CONVOLUTION_X86 1
#include <immintrin.h>
#else
#define XJIT_DIRECT_CONVOLUTION_X86 0
#endif

namespace xjit::runtime::blas {

namespace {

// What a tile walks: kernel rows, then column runs, then elements of a run.
struct TileGeometry {
  int64_t rows = 1;
  int64_t input_row_step = 0;   // input elements between kernel rows
  int64_t kernel_row_step = 0;
  int64_t columns = 1;
  int64_t input_column_step = 0;
  int64_t kernel_column_step = 0;
  int64_t run = 1;              // input elements (unit stride) per column
  int64_t kernel_run_step = 0;  // kernel elements between them
  // Output features of the block: its width, but for a narrow plan's last
  // block (1 to 8). The masked and portable tiles read and write only these
  // (so that block never touches memory beyond a kernel row or an output
  // pixel); the x86 wide tiles always do the whole width.
  int64_t lanes = 8;
};

using TileFn = void (*)(const float* x, int64_t pixel_step, const float* k,
                        const TileGeometry& g, float* y, int64_t out_pixel_step);

#if XJIT_DIRECT_CONVOLUTION_X86

// P output pixels (pixel_step apart in the input, out_pixel_step in the
// output) times 16*NV output features, accumulated in registers.
template <int NV, int P>
__attribute__((target("avx512f"))) void Tile(const float* x, int64_t pixel_step, const float* k,
                                             const TileGeometry& g, float* y,
                                             int64_t out_pixel_step) {
  __m512 acc[P][NV];
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_setzero_ps();
  }
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t c = 0; c < g.columns; ++c) {
      const float* xs = x + r * g.input_row_step + c * g.input_column_step;
      const float* ks = k + r * g.kernel_row_step + c * g.kernel_column_step;
      for (int64_t e = 0; e < g.run; ++e) {
        __m512 w[NV];
#pragma GCC unroll 8
        for (int v = 0; v < NV; ++v) w[v] = _mm512_loadu_ps(ks + e * g.kernel_run_step + 16 * v);
#pragma GCC unroll 32
        for (int p = 0; p < P; ++p) {
          const __m512 b = _mm512_set1_ps(xs[p * pixel_step + e]);
#pragma GCC unroll 8
          for (int v = 0; v < NV; ++v) acc[p][v] = _mm512_fmadd_ps(b, w[v], acc[p][v]);
        }
      }
    }
  }
#pragma GCC unroll 32
  for (int p = 0; p < P; ++p) {
#pragma GCC unroll 8
    for (int v = 0; v < NV; ++v) _mm512_storeu_ps(y + p * out_pixel_step + 16 * v, acc[p][v]);
  }
}

// Tiles per vector count: the widest tile that leaves registers for the
// kernel vectors (32 zmm), and every narrower one for the row's tail.
constexpr int kMaxPixels4 = 7;
constexpr int kMaxPixels2 = 12;
constexpr int kMaxPixels1 = 14;

template <int NV, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> TileTable(std::index_sequence<I...>) {
  return {&Tile<NV, static_cast<int>(I) + 1>...};
}

constexpr auto kTiles4 = TileTable<4>(std::make_index_sequence<kMaxPixels4>());
constexpr auto kTiles2 = TileTable<2>(std::make_index_sequence<kMaxPixels2>());
constexpr auto kTiles1 = TileTable<1>(std::make_index_sequence<kMaxPixels1>());

// The AVX2+FMA tile (8 lanes, 16 ymm registers): one 16-feature vector of
// the plan is two ymm, and a plan for AVX2 always has vectors = 1, so a
// tile of up to kMaxPixelsAvx2 pixels holds 12 accumulators, 2 kernel
// vectors and one broadcast. Same loop order and one fused multiply-add
// per term as Tile, so the bits equal Tile's and PortableTile's.
template <int P>
__attribute__((target("avx2,fma"))) void TileAvx2(const float* x, int64_t pixel_step,
                                                  const float* k, const TileGeometry& g, float* y,
                                                  int64_t out_pixel_step) {
  __m256 acc[P][2];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    acc[p][0] = _mm256_setzero_ps();
    acc[p][1] = _mm256_setzero_ps();
  }
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t c = 0; c < g.columns; ++c) {
      const float* xs = x + r * g.input_row_step + c * g.input_column_step;
      const float* ks = k + r * g.kernel_row_step + c * g.kernel_column_step;
      for (int64_t e = 0; e < g.run; ++e) {
        const __m256 w0 = _mm256_loadu_ps(ks + e * g.kernel_run_step);
        const __m256 w1 = _mm256_loadu_ps(ks + e * g.kernel_run_step + 8);
#pragma GCC unroll 8
        for (int p = 0; p < P; ++p) {
          const __m256 b = _mm256_broadcast_ss(xs + p * pixel_step + e);
          acc[p][0] = _mm256_fmadd_ps(b, w0, acc[p][0]);
          acc[p][1] = _mm256_fmadd_ps(b, w1, acc[p][1]);
        }
      }
    }
  }
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    _mm256_storeu_ps(y + p * out_pixel_step, acc[p][0]);
    _mm256_storeu_ps(y + p * out_pixel_step + 8, acc[p][1]);
  }
}

constexpr int kMaxPixelsAvx2 = 6;

template <size_t... I>
constexpr std::array<TileFn, sizeof...(I)> TileAvx2Table(std::index_sequence<I...>) {
  return {&TileAvx2<static_cast<int>(I) + 1>...};
}

constexpr auto kTilesAvx2 = TileAvx2Table(std::make_index_sequence<kMaxPixelsAvx2>());

// The narrow tile (a plan whose output features are not a multiple of 16):
// one 8-feature ymm by up to kMaxPixelsNarrow pixels, 12 accumulators, the
// kernel vector and one broadcast. Masked, it loads and stores only the
// block's g.lanes features (the last block of 8k + r features). AVX2+FMA
// code, also used on AVX-512 CPUs (which have AVX2): an AVX-512 zmm would
// leave half its lanes or more idle on these blocks. Same loop order and
// one fused multiply-add per term as the other tiles, so the bits are theirs.
template <int P, bool kMasked>
__attribute__((target("avx2,fma"))) void NarrowTileAvx2(const float* x, int64_t pixel_step,
                                                        const float* k, const TileGeometry& g,
                                                        float* y, int64_t out_pixel_step) {
  const __m256i mask = _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(g.lanes)),
                                          _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  __m256 acc[P];
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) acc[p] = _mm256_setzero_ps();
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t c = 0; c < g.columns; ++c) {
      const float* xs = x + r * g.input_row_step + c * g.input_column_step;
      const float* ks = k + r * g.kernel_row_step + c * g.kernel_column_step;
      for (int64_t e = 0; e < g.run; ++e) {
        const __m256 w = kMasked ? _mm256_maskload_ps(ks + e * g.kernel_run_step, mask)
                                 : _mm256_loadu_ps(ks + e * g.kernel_run_step);
#pragma GCC unroll 16
        for (int p = 0; p < P; ++p) {
          acc[p] = _mm256_fmadd_ps(_mm256_broadcast_ss(xs + p * pixel_step + e), w, acc[p]);
        }
      }
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < P; ++p) {
    if (kMasked) {
      _mm256_maskstore_ps(y + p * out_pixel_step, mask, acc[p]);
    } else {
      _mm256_storeu_ps(y + p * out_pixel_step, acc[p]);
    }
  }
}

constexpr int kMaxPixelsNarrow = 12;

template <bool kMasked, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> NarrowTileAvx2Table(std::index_sequence<I...>) {
  return {&NarrowTileAvx2<static_cast<int>(I) + 1, kMasked>...};
}

constexpr auto kNarrowTilesAvx2 =
    NarrowTileAvx2Table<false>(std::make_index_sequence<kMaxPixelsNarrow>());
constexpr auto kNarrowMaskedTilesAvx2 =
    NarrowTileAvx2Table<true>(std::make_index_sequence<kMaxPixelsNarrow>());
#else
constexpr int kMaxPixels4 = 7, kMaxPixels2 = 12, kMaxPixels1 = 14, kMaxPixelsAvx2 = 6,
              kMaxPixelsNarrow = 12;
#endif

// The same tile in plain C++ (one fused multiply-add per term, in the same
// order), for tests on CPUs without AVX-512F or AVX2: it lets the planning, the
// padding and the split over threads run everywhere
// (UsePortableDirectConvolutionForTesting).
template <int kLanes, int P>
void PortableTile(const float* x, int64_t pixel_step, const float* k, const TileGeometry& g,
                  float* y, int64_t out_pixel_step) {
  float acc[P][kLanes] = {};
  for (int64_t r = 0; r < g.rows; ++r) {
    for (int64_t c = 0; c < g.columns; ++c) {
      const float* xs = x + r * g.input_row_step + c * g.input_column_step;
      const float* ks = k + r * g.kernel_row_step + c * g.kernel_column_step;
      for (int64_t e = 0; e < g.run; ++e) {
        for (int p = 0; p < P; ++p) {
          const float b = xs[p * pixel_step + e];
          for (int64_t v = 0; v < g.lanes; ++v) {
            acc[p][v] = std::fma(b, ks[e * g.kernel_run_step + v], acc[p][v]);
          }
        }
      }
    }
  }
  for (int p = 0; p < P; ++p) {
    for (int64_t v = 0; v < g.lanes; ++v) y[p * out_pixel_step + v] = acc[p][v];
  }
}

// Tiles of kLanes features (16 * NV, or 8 for narrow plans, whose last
// block may have fewer: g.lanes).
template <int kLanes, size_t... I>
constexpr std::array<TileFn, sizeof...(I)> PortableTileTable(std::index_sequence<I...>) {
  return {&PortableTile<kLanes, static_cast<int>(I) + 1>...};
}

constexpr auto kPortableTiles4 = PortableTileTable<64>(std::make_index_sequence<kMaxPixels4>());
constexpr auto kPortableTiles2 = PortableTileTable<32>(std::make_index_sequence<kMaxPixels2>());
constexpr auto kPortableTiles1 = PortableTileTable<16>(std::make_index_sequence<kMaxPixels1>());
constexpr auto kPortableNarrowTiles =
    PortableTileTable<8>(std::make_index_sequence<kMaxPixelsNarrow>());

std::atomic<bool> portable_for_testing{false};

// The tiles of a plan's ISA (kNone: the portable ones, for tests); for a
// narrow plan, those of its full blocks or (`masked`) of its last one.
const TileFn* Tiles(KernelIsa isa, int vectors, bool narrow, bool masked) {
#if XJIT_DIRECT_CONVOLUTION_X86
  if (narrow && isa != KernelIsa::kNone) {
    return masked ? kNarrowMaskedTilesAvx2.data() : kNarrowTilesAvx2.data();
  }
  if (isa == KernelIsa::kAvx512) {
    return vectors == 4 ? kTiles4.data() : vectors == 2 ? kTiles2.data() : kTiles1.data();
  }
  if (isa == KernelIsa::kAvx2) return kTilesAvx2.data();
#else
  (void)isa;
  (void)masked;
#endif
  if (narrow) return kPortableNarrowTiles.data();
  return vectors == 4   ? kPortableTiles4.data()
         : vectors == 2 ? kPortableTiles2.data()
                        : kPortableTiles1.data();
}

// Copies rows [first, last) of image b of the input into the zero-bordered
// dense buffer [padded 0][padded 1][features] of one image.
void PadRows(const DirectConvolutionPlan& plan, const float* input, int64_t b, int64_t first,
             int64_t last, float* buffer) {
  const DirectConvolutionProblem& p = plan.problem;
  const DirectSpatial& s0 = p.spatial[0];
  const DirectSpatial& s1 = p.spatial[1];
  const int64_t c = p.input_features;
  const int64_t row = plan.padded_size[1] * c;
  // Columns [lo, hi) of a padded row hold input columns [lo - pad, hi - pad).
  const int64_t lo = std::min(s1.padding_low, plan.padded_size[1]);
  const int64_t hi = std::clamp(s1.padding_low + s1.input_size, lo, plan.padded_size[1]);
  for (int64_t i = first; i < last; ++i) {
    float* dst = buffer + i * row;
    const int64_t src_row = i - s0.padding_low;
    if (src_row < 0 || src_row >= s0.input_size) {
      std::memset(dst, 0, row * sizeof(float));
      continue;
    }
    std::memset(dst, 0, lo * c * sizeof(float));
    const float* src = input + b * p.input_batch_stride + src_row * s0.input_stride;
    if (s1.input_stride == c) {
      std::memcpy(dst + lo * c, src, (hi - lo) * c * sizeof(float));
    } else {
      for (int64_t j = lo; j < hi; ++j) {
        std::memcpy(dst + j * c, src + (j - s1.padding_low) * s1.input_stride, c * sizeof(float));
      }
    }
    std::memset(dst + hi * c, 0, (plan.padded_size[1] - hi) * c * sizeof(float));
  }
}

}  // namespace

std::string DirectConvolutionPlan::ToString() const {
  return absl::StrCat(
      "direct-kernel tile=", pixels, "x", BlockWidth(), batch_tiles ? " across-batch" : "",
      padded_copy ? " padded" : "", merge_columns ? " merged" : "",
      threads > 1 ? absl::StrCat(" threads=", threads) : "", " scratch=", scratch_bytes);
}

int64_t DirectConvolutionPlan::BlockWidth() const { return narrow ? 8 : 16 * vectors; }

int64_t DirectConvolutionPlan::Blocks() const {
  return (problem.output_features + BlockWidth() - 1) / BlockWidth();
}

bool DirectConvolutionSupported() {
  return CurrentKernelIsa() != KernelIsa::kNone || portable_for_testing.load();
}

void UsePortableDirectConvolutionForTesting(bool on) { portable_for_testing.store(on); }

namespace {

// Tiles of at most `max` pixels covering `n` evenly: ceil(n / max) tiles
// whose widths differ by at most one (16 pixels in tiles of 7 are 6+5+5,
// not 7+7+2: a 2-pixel tile has too few accumulators to hide the latency of
// its multiply-adds and runs at about half the speed of a wide one).
struct Tiling {
  int64_t count = 1;
  int64_t base = 1;   // width of the later tiles
  int64_t extra = 0;  // the first `extra` tiles are one wider
  int64_t Begin(int64_t t) const { return t * base + std::min(t, extra); }
  int64_t Width(int64_t t) const { return base + (t < extra ? 1 : 0); }
};

Tiling EvenTiling(int64_t n, int64_t max) {
  Tiling t;
  t.count = std::max<int64_t>(1, (n + max - 1) / max);
  t.base = n / t.count;
  t.extra = n % t.count;
  return t;
}

// Mean tile width of an even tiling (the fraction of a wide tile's speed it
// keeps, roughly).
double MeanWidth(int64_t n, int64_t max) {
  return static_cast<double>(n) / static_cast<double>(EvenTiling(n, max).count);
}

// Kernel indices k in [0, kernel_size) whose input position
// base + k * dilation lies in [0, input_size): [first, last).
std::pair<int64_t, int64_t> ValidWindow(int64_t base, int64_t dilation, int64_t kernel_size,
                                        int64_t input_size) {
  const auto floor_div = [](int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); };
  const int64_t first = std::clamp<int64_t>(-floor_div(base, dilation), 0, kernel_size);
  const int64_t last =
      std::clamp<int64_t>(floor_div(input_size - 1 - base, dilation) + 1, first, kernel_size);
  return {first, last};
}

}  // namespace

std::optional<DirectConvolutionPlan> PlanDirectConvolution(const DirectConvolutionProblem& p,
                                                           int threads) {
  if (!DirectConvolutionSupported()) return std::nullopt;
  if (p.batch < 1 || p.input_features < 1 || p.output_features < 1) return std::nullopt;
  DirectConvolutionPlan plan;
  plan.problem = p;
  bool reads_outside = false;
  for (int d = 0; d < 2; ++d) {
    const DirectSpatial& s = p.spatial[d];
    if (s.input_size < 1 || s.output_size < 1 || s.kernel_size < 1 || s.stride < 1 ||
        s.window_dilation < 1 || s.padding_low < 0) {
      return std::nullopt;
    }
    plan.padded_size[d] =
        (s.output_size - 1) * s.stride + (s.kernel_size - 1) * s.window_dilation + 1;
    if (s.padding_low > 0 || plan.padded_size[d] > s.input_size) reads_outside = true;
  }
  plan.isa = CurrentKernelIsa();
  plan.narrow = p.output_features % 16 != 0;
  if (plan.narrow) {
    plan.vectors = 1;
    plan.pixels = kMaxPixelsNarrow;
  } else if (plan.isa == KernelIsa::kAvx2) {
    // 16 ymm registers: one 16-feature vector (two ymm) by 6 pixels.
    plan.vectors = 1;
    plan.pixels = kMaxPixelsAvx2;
  } else {
    plan.vectors = p.output_features % 64 == 0 ? 4 : p.output_features % 32 == 0 ? 2 : 1;
    plan.pixels =
        plan.vectors == 4 ? kMaxPixels4 : plan.vectors == 2 ? kMaxPixels2 : kMaxPixels1;
  }
  const DirectSpatial& s1 = p.spatial[1];
  // Tiles run across the batch when an output row is too short to fill a
  // tile and the batch fills them better (a kernel gradient: a few output
  // pixels, the batch holding the forward pass's channels). Such a tile's
  // pixels share one output position, so its window is clipped at the
  // borders instead of reading a padded copy.
  plan.batch_tiles = p.batch > 1 && s1.output_size < plan.pixels &&
                     MeanWidth(p.batch, plan.pixels) > MeanWidth(s1.output_size, plan.pixels);
  plan.padded_copy = reads_outside && !plan.batch_tiles;
  if (plan.padded_copy) {
    plan.row_stride[1] = p.input_features;
    plan.row_stride[0] = plan.padded_size[1] * p.input_features;
    plan.batch_stride = 0;  // one image at a time
    plan.scratch_per_thread =
        plan.padded_size[0] * plan.row_stride[0] * static_cast<int64_t>(sizeof(float));
  } else {
    plan.row_stride[0] = p.spatial[0].input_stride;
    plan.row_stride[1] = s1.input_stride;
    plan.batch_stride = p.input_batch_stride;
  }
  plan.merge_columns = s1.window_dilation == 1 && plan.row_stride[1] == p.input_features &&
                       s1.kernel_stride == p.input_features * p.kernel_feature_stride;
  const int64_t images = plan.batch_tiles ? EvenTiling(p.batch, plan.pixels).count : p.batch;
  plan.items = images * p.spatial[0].output_size * plan.Blocks();
  plan.threads = static_cast<int>(std::clamp<int64_t>(threads, 1, plan.items));
  // Threads take chunks of items in turn (the next free chunk, not a fixed
  // share): a thread that starts late or shares its core with another
  // process then does less, instead of holding the others up at the end.
  // About 8 chunks per thread keep the last one short.
  plan.chunk =
      plan.threads == 1 ? plan.items : std::max<int64_t>(1, plan.items / (8 * plan.threads));
  plan.scratch_bytes = plan.scratch_per_thread * plan.threads;
  return plan;
}

void RunDirectConvolution(const DirectConvolutionPlan& plan, const float* input,
                          const float* kernel, float* output, void* scratch) {
  const DirectConvolutionProblem& p = plan.problem;
  const DirectSpatial& s0 = p.spatial[0];
  const DirectSpatial& s1 = p.spatial[1];
  TileGeometry g;
  g.rows = s0.kernel_size;
  g.input_row_step = s0.window_dilation * plan.row_stride[0];
  g.kernel_row_step = s0.kernel_stride;
  if (plan.merge_columns) {
    g.columns = 1;
    g.run = s1.kernel_size * p.input_features;
  } else {
    g.columns = s1.kernel_size;
    g.input_column_step = s1.window_dilation * plan.row_stride[1];
    g.kernel_column_step = s1.kernel_stride;
    g.run = p.input_features;
  }
  g.kernel_run_step = p.kernel_feature_stride;
  const int64_t width = plan.BlockWidth();
  const int64_t blocks = plan.Blocks();
  g.lanes = width;
  // The last block of a narrow plan may be partial: its own geometry and
  // masked tiles.
  const int64_t last_lanes = p.output_features - (blocks - 1) * width;
  const TileFn* full_tiles = Tiles(plan.isa, plan.vectors, plan.narrow, false);
  const TileFn* last_tiles =
      Tiles(plan.isa, plan.vectors, plan.narrow, plan.narrow && last_lanes < width);
  TileGeometry last_g = g;
  last_g.lanes = last_lanes;
  const int64_t items = plan.items;
  const Tiling columns = EvenTiling(s1.output_size, plan.pixels);
  const Tiling images = EvenTiling(p.batch, plan.pixels);

  // Item (image b, output row i, feature block) with pixels along the row.
  // A padded copy is made one image at a time, each row just before the
  // first output row that reads it (so it is still in cache then); `padded`
  // remembers which image and how many of its rows this thread's buffer
  // holds (a thread's items only ever increase).
  struct PaddedState {
    float* buffer = nullptr;
    int64_t image = -1;
    int64_t rows = 0;
  };
  const int64_t pixel_step = s1.stride * plan.row_stride[1];
  auto row_item = [&](int64_t b, int64_t i, int64_t o, const TileFn* tiles,
                      const TileGeometry& geometry, PaddedState& padded) {
    const float* x = input;
    if (plan.padded_copy) {
      const int64_t top = i * s0.stride;
      const int64_t need = top + (s0.kernel_size - 1) * s0.window_dilation + 1;
      if (padded.image != b) {
        padded.image = b;
        padded.rows = top;  // the rows above are never read
      }
      const int64_t from = std::max(padded.rows, top);
      if (from < need) PadRows(plan, input, b, from, need, padded.buffer);
      padded.rows = std::max(padded.rows, need);
      x = padded.buffer;
    }
    const float* x_row = x + b * plan.batch_stride + i * s0.stride * plan.row_stride[0];
    float* y_row = output + b * p.output_batch_stride + i * s0.output_stride;
    for (int64_t t = 0; t < columns.count; ++t) {
      const int64_t j = columns.Begin(t);
      tiles[columns.Width(t) - 1](x_row + j * pixel_step, pixel_step, kernel + o, geometry,
                                  y_row + j * s1.output_stride + o, s1.output_stride);
    }
  };
  // Item (image group, output row i, feature block) with pixels across the
  // group's images, one tile per output column, its window clipped to the
  // input (nothing padded, nothing copied).
  auto batch_item = [&](int64_t group, int64_t i, int64_t o, const TileFn* tiles,
                        const TileGeometry& geometry) {
    const int64_t b = images.Begin(group);
    const int64_t n = images.Width(group);
    const int64_t row_base = i * s0.stride - s0.padding_low;
    const auto [r0, r1] = ValidWindow(row_base, s0.window_dilation, s0.kernel_size, s0.input_size);
    TileGeometry clipped = geometry;
    for (int64_t j = 0; j < s1.output_size; ++j) {
      clipped.rows = r1 - r0;
      const int64_t column_base = j * s1.stride - s1.padding_low;
      const auto [c0, c1] =
          ValidWindow(column_base, s1.window_dilation, s1.kernel_size, s1.input_size);
      if (plan.merge_columns) {
        clipped.run = (c1 - c0) * p.input_features;
      } else {
        clipped.columns = c1 - c0;
      }
      // An empty window (all padding) reads nothing and stores zeros; its
      // corner may lie outside the input, so it gets none.
      const bool empty = r1 == r0 || c1 == c0;
      if (empty) clipped.rows = 0;
      const int64_t x_offset =
          b * p.input_batch_stride +
          (empty ? 0
                 : (row_base + r0 * s0.window_dilation) * s0.input_stride +
                       (column_base + c0 * s1.window_dilation) * s1.input_stride);
      const int64_t k_offset = o + (empty ? 0 : r0 * s0.kernel_stride + c0 * s1.kernel_stride);
      tiles[n - 1](
          input + x_offset, p.input_batch_stride, kernel + k_offset, clipped,
          output + b * p.output_batch_stride + i * s0.output_stride + j * s1.output_stride + o,
          p.output_batch_stride);
    }
  };
  auto run_items = [&](int64_t first, int64_t last, PaddedState& padded) {
    for (int64_t item = first; item < last; ++item) {
      const int64_t row = item / blocks;
      const int64_t block = item % blocks;
      const int64_t o = block * width;
      const bool last = block == blocks - 1;
      const TileFn* tiles = last ? last_tiles : full_tiles;
      const TileGeometry& geometry = last ? last_g : g;
      if (plan.batch_tiles) {
        batch_item(row / s0.output_size, row % s0.output_size, o, tiles, geometry);
      } else {
        row_item(row / s0.output_size, row % s0.output_size, o, tiles, geometry, padded);
      }
    }
  };
  const int threads = static_cast<int>(std::min<int64_t>(plan.threads, items));
  auto* base = static_cast<uint8_t*>(scratch);
  if (threads <= 1) {
    PaddedState padded;
    padded.buffer = reinterpret_cast<float*>(base);
    run_items(0, items, padded);
    return;
  }
  // Chunk k of the pool is one thread's turn at taking chunks of items (it
  // owns padded-image buffer k meanwhile); a turn that starts after the
  // others took everything does nothing.
  const int64_t chunk = std::max<int64_t>(plan.chunk, 1);
  std::atomic<int64_t> next{0};
  ThreadPool::Shared().ParallelFor(threads, threads - 1, [&](int64_t k) {
    PaddedState padded;
    padded.buffer = reinterpret_cast<float*>(base + k * plan.scratch_per_thread);
    for (;;) {
      const int64_t first = next.fetch_add(chunk, std::memory_order_relaxed);
      if (first >= items) break;
      run_items(first, std::min(items, first + chunk), padded);
    }
  });
}

}  // namespace xjit::runtime::blas
