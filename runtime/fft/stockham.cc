// Stockham plans and the choice of kernels (see stockham.h).
#include "runtime/fft/stockham.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <numbers>

namespace xjit::runtime::fft {

// The kernels, one copy per instruction set (stockham_kernels.inc).
namespace generic {
void RunStockhamF32(const StockhamPlan<float>&, const float*, float*, int64_t, float*);
void RunStockhamF64(const StockhamPlan<double>&, const double*, double*, int64_t, double*);
}  // namespace generic
#if defined(XJIT_FFT_HAVE_AVX2)
namespace avx2 {
void RunStockhamF32(const StockhamPlan<float>&, const float*, float*, int64_t, float*);
void RunStockhamF64(const StockhamPlan<double>&, const double*, double*, int64_t, double*);
}  // namespace avx2
#endif

namespace {

// The largest stride-1 pass (in twiddles) given the split lane layout
// (StockhamStage): measured faster for 2^10 points, slower for 2^16.
constexpr int64_t kSplitLaneTwiddles = 4096;

std::atomic<bool> force_baseline{false};

bool UseAvx2() {
#if defined(XJIT_FFT_HAVE_AVX2)
  static const bool use = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return use && !force_baseline.load(std::memory_order_relaxed);
#else
  return false;
#endif
}

}  // namespace

// The angle is reduced to the first octant by symmetry first, so that every
// table entry is as exact as sin and cos of a small argument.
void UnitRoot(int64_t r, int64_t l, bool forward, double* re, double* im) {
  // Work in units of 1/(8l) of a turn: angle = 2 pi r / l = (pi / 4) (8 r / l).
  const int64_t eighths = 8 * r;
  const int64_t octant = eighths / l;  // 0..7
  const double rest = static_cast<double>(eighths - octant * l) / static_cast<double>(l);
  const double theta = rest * std::numbers::pi / 4;  // In [0, pi/4).
  double c = std::cos(theta), s = std::sin(theta);
  // Rotate (c, s) by octant * 45 degrees exactly where possible.
  const double h = std::numbers::sqrt2 / 2;
  double x = c, y = s;
  switch (octant) {
    case 0: break;
    case 1: x = h * (c - s); y = h * (c + s); break;
    case 2: x = -s; y = c; break;
    case 3: x = -h * (c + s); y = h * (c - s); break;
    case 4: x = -c; y = -s; break;
    case 5: x = -h * (c - s); y = -h * (c + s); break;
    case 6: x = s; y = -c; break;
    default: x = h * (c + s); y = -h * (c - s); break;
  }
  *re = x;
  *im = forward ? -y : y;
}

void UseBaselineKernels(bool baseline) { force_baseline.store(baseline); }

bool IsSmooth(int64_t n) {
  if (n <= 0) return false;
  for (int64_t p : {2, 3, 5}) {
    while (n % p == 0) n /= p;
  }
  return n == 1;
}

template <typename T>
StockhamPlan<T> MakeStockhamPlan(int64_t n, bool forward) {
  StockhamPlan<T> plan;
  plan.n = n;
  plan.forward = forward;
  // Radix 8 where possible (fewest passes); a leftover 4 goes first (the
  // stride-1 pass), a leftover 2 last (so that no pass but the first has a
  // stride below a vector), then 3s and 5s. From 2^7 to 2^12 points the
  // leftover 2 joins the first 8 as a radix-16 first pass instead (one pass
  // fewer: 2^10 = 16 x 8 x 8 measured about 5 % faster than 8 x 8 x 8 x 2).
  std::vector<int> radices;
  int64_t rest = n;
  int64_t twos = 0;
  while (rest % 2 == 0) {
    ++twos;
    rest /= 2;
  }
  int64_t eights = twos / 3;
  // 8 x 2 as 4 x 4 (measured faster from 2^13 on; below, the 4 at stride
  // 4 costs more than the 2 at the end).
  const bool four_four = twos % 3 == 1 && twos >= 13;
  if (four_four) --eights;
  const bool sixteen = twos % 3 == 1 && twos >= 7 && !four_four;
  if (sixteen) --eights;
  if (twos % 3 == 2 || four_four) radices.push_back(4);
  if (sixteen) radices.push_back(16);
  for (int64_t i = 0; i < eights; ++i) radices.push_back(8);
  if (four_four) radices.push_back(4);
  if (twos % 3 == 1 && !four_four && !sixteen) radices.push_back(2);
  for (int p : {3, 5}) {
    while (rest % p == 0) {
      radices.push_back(p);
      rest /= p;
    }
  }
  // Pass twiddles as (re, -im, im, 0) quadruples, so that a vector pass
  // broadcasts re and the pair (-im, im) straight from the table; the
  // stride-1 pass's per-lane table is laid out as vectors (below).
  std::vector<double> table;
  auto push = [&](int64_t r, int64_t l) {
    double re, im;
    UnitRoot(r % l, l, forward, &re, &im);
    table.push_back(re);
    table.push_back(-im);
    table.push_back(im);
    table.push_back(0);
  };
  int64_t l = n;
  for (size_t i = 0; i < radices.size(); ++i) {
    StockhamStage stage;
    stage.radix = radices[i];
    stage.m = l / stage.radix;
    stage.twiddle_offset = static_cast<int64_t>(table.size());
    for (int64_t q = 0; q < stage.m; ++q) {
      for (int t = 1; t < stage.radix; ++t) push(t * q, l);
    }
    if (i == 0) {
      // Blocks of kLanes consecutive q (padded to a whole block): re of each
      // lane twice, then (-im, im) of each lane: the two vectors of a
      // per-lane complex product.
      constexpr int64_t kLanes = 16 / sizeof(T);
      const int64_t padded = (stage.m + kLanes - 1) / kLanes * kLanes;
      stage.lane_twiddle_offset = static_cast<int64_t>(table.size());
      stage.split_lanes = stage.m * (stage.radix - 1) <= kSplitLaneTwiddles;
      for (int t = 1; t < stage.radix && !stage.split_lanes; ++t) {
        for (int64_t q = 0; q < stage.m; ++q) {
          double re, im;
          UnitRoot((t * q) % l, l, forward, &re, &im);
          table.push_back(re);
          table.push_back(im);
        }
      }
      // Split lanes: block-major ([block][t-1]), so that a block's twiddles
      // are consecutive and the kernel reads them from one pointer.
      for (int64_t block = 0; block < padded && stage.split_lanes; block += kLanes) {
        for (int t = 1; t < stage.radix; ++t) {
          double re[kLanes], im[kLanes];
          for (int64_t lane = 0; lane < kLanes; ++lane) {
            const int64_t q = std::min(block + lane, stage.m - 1);
            UnitRoot((t * q) % l, l, forward, &re[lane], &im[lane]);
          }
          for (int64_t lane = 0; lane < kLanes; ++lane) {
            table.push_back(re[lane]);
            table.push_back(re[lane]);
          }
          for (int64_t lane = 0; lane < kLanes; ++lane) {
            table.push_back(-im[lane]);
            table.push_back(im[lane]);
          }
        }
      }
    }
    plan.stages.push_back(stage);
    l = stage.m;
  }
  plan.twiddles.assign(table.begin(), table.end());
  return plan;
}

template <>
void RunStockham<float>(const StockhamPlan<float>& plan, const float* in, float* out,
                        int64_t inner, float* scratch) {
#if defined(XJIT_FFT_HAVE_AVX2)
  if (UseAvx2()) return avx2::RunStockhamF32(plan, in, out, inner, scratch);
#endif
  (void)UseAvx2;
  generic::RunStockhamF32(plan, in, out, inner, scratch);
}

template <>
void RunStockham<double>(const StockhamPlan<double>& plan, const double* in, double* out,
                         int64_t inner, double* scratch) {
#if defined(XJIT_FFT_HAVE_AVX2)
  if (UseAvx2()) return avx2::RunStockhamF64(plan, in, out, inner, scratch);
#endif
  generic::RunStockhamF64(plan, in, out, inner, scratch);
}

template StockhamPlan<float> MakeStockhamPlan<float>(int64_t, bool);
template StockhamPlan<double> MakeStockhamPlan<double>(int64_t, bool);

}  // namespace xjit::runtime::fft
