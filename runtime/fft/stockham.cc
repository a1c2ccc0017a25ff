// Stockham plans and the choice of kernels (see stockham.h).
#include "runtime/fft/stockham.h"

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

bool UseAvx2() {
#if defined(XJIT_FFT_HAVE_AVX2)
  static const bool use = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return use;
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
  // stride below a vector), then 3s and 5s.
  std::vector<int> radices;
  int64_t rest = n;
  int64_t twos = 0;
  while (rest % 2 == 0) {
    ++twos;
    rest /= 2;
  }
  if (twos % 3 == 2) radices.push_back(4);
  for (int64_t i = 0; i < twos / 3; ++i) radices.push_back(8);
  if (twos % 3 == 1) radices.push_back(2);
  for (int p : {3, 5}) {
    while (rest % p == 0) {
      radices.push_back(p);
      rest /= p;
    }
  }
  // Pass twiddles as (re, -im, im, 0) quadruples, so that a vector pass
  // broadcasts re and the pair (-im, im) straight from the table; the
  // stride-1 pass's per-lane table holds (re, im) pairs.
  std::vector<double> table;
  auto push = [&](int64_t r, int64_t l, bool quad) {
    double re, im;
    UnitRoot(r % l, l, forward, &re, &im);
    table.push_back(re);
    if (quad) {
      table.push_back(-im);
      table.push_back(im);
      table.push_back(0);
    } else {
      table.push_back(im);
    }
  };
  int64_t l = n;
  for (size_t i = 0; i < radices.size(); ++i) {
    StockhamStage stage;
    stage.radix = radices[i];
    stage.m = l / stage.radix;
    stage.twiddle_offset = static_cast<int64_t>(table.size());
    for (int64_t q = 0; q < stage.m; ++q) {
      for (int t = 1; t < stage.radix; ++t) push(t * q, l, true);
    }
    if (i == 0) {
      stage.lane_twiddle_offset = static_cast<int64_t>(table.size());
      for (int t = 1; t < stage.radix; ++t) {
        for (int64_t q = 0; q < stage.m; ++q) push(t * q, l, false);
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
