// runtime/fft: the Stockham autosort FFT of one power-of-{2,3,5} length.
//
// A transform of length n = p_0 p_1 ... p_{P-1} (radices 2, 3, 4, 5, 8, 16) runs
// P passes, each reading one buffer and writing another (autosort: no bit
// reversal, every access in a pass is at unit stride for large strides).
// Pass i with radix p, sub-length l = n / (p_0 ... p_{i-1}), m = l / p and
// stride s = inner * p_0 ... p_{i-1} maps
//   y[k + s (p q + t)] = w_l^{t q} sum_j x[k + s (q + m j)] w_p^{j t}
// for q < m, k < s, t < p, where w_l = exp(-+2 pi i / l) (forward: minus).
// `inner` independent transforms interleaved element by element (element j of
// transform b at j * inner + b) are computed at once: that is how a
// multi-dimensional transform runs along an outer axis without gathering.
//
// The plan (factors and twiddle tables) is made once, at compile time; the
// kernels are compiled twice on x86-64 (baseline and AVX2+FMA, chosen by the
// CPU at run time) and once elsewhere, all from portable C++ (GCC/Clang
// vector extensions, no intrinsics).
#ifndef XJIT_RUNTIME_FFT_STOCKHAM_H_
#define XJIT_RUNTIME_FFT_STOCKHAM_H_

#include <cstdint>
#include <vector>

namespace xjit::runtime::fft {

struct StockhamStage {
  int radix = 0;
  int64_t m = 0;  // Sub-length / radix.
  // Where in StockhamPlan::twiddles (scalar index) w^{tq} starts: in [q][t-1]
  // order as (re, -im, im, 0); and the same values for the vectors of
  // stride-1 pass 0 (else -1): (re, im) pairs in [t-1][q] order, or, when
  // `split_lanes` (small tables, where the larger layout stays in cache and
  // saves shuffles), for each block of L = 16 / sizeof(T) consecutive q and
  // each t (block-major), 2L values (re, re per lane) then 2L values (-im,
  // im per lane).
  int64_t twiddle_offset = 0;
  int64_t lane_twiddle_offset = -1;
  bool split_lanes = false;
};

template <typename T>
struct StockhamPlan {
  int64_t n = 0;
  bool forward = true;
  std::vector<StockhamStage> stages;
  std::vector<T> twiddles;  // See StockhamStage.
};

// exp(-2 pi i r / l) (forward) or exp(+2 pi i r / l), 0 <= r < l, in double.
void UnitRoot(int64_t r, int64_t l, bool forward, double* re, double* im);

// True when n > 0 has no prime factors other than 2, 3 and 5.
bool IsSmooth(int64_t n);

// The plan for length n (IsSmooth(n)); twiddles are computed in double.
template <typename T>
StockhamPlan<T> MakeStockhamPlan(int64_t n, bool forward);

// For tests: run the baseline kernels even where the CPU has AVX2 (so that
// the copy AArch64 and older x86-64 CPUs run is tested here too).
void UseBaselineKernels(bool baseline);

// Runs the plan on `inner` interleaved transforms: `in` and `out` hold n *
// inner complex numbers (interleaved re, im) and must not overlap; `scratch`
// holds n * inner more (used when there are two passes or more). Unscaled.
template <typename T>
void RunStockham(const StockhamPlan<T>& plan, const T* in, T* out, int64_t inner, T* scratch);

}  // namespace xjit::runtime::fft

#endif  // XJIT_RUNTIME_FFT_STOCKHAM_H_
