// Phases of an lhs-dilated spatial dimension; see conv_phases.h.
#include "runtime/blas/conv_phases.h"

#include <algorithm>
#include <numeric>

namespace xjit::runtime::blas {

std::vector<ConvPhaseDim> SplitDilatedDimension(int64_t input_size, int64_t output_size,
                                                int64_t kernel_size, const WindowDimension& wd) {
  const int64_t d = wd.base_dilation;
  const int64_t s = wd.stride;
  const int64_t r_dil = wd.window_dilation;
  const int64_t output_step = d / std::gcd(s, d);
  const int64_t tap_step = d / std::gcd(r_dil, d);
  const int64_t sub_stride = s / std::gcd(s, d);
  const int64_t sub_dilation = r_dil / std::gcd(r_dil, d);
  std::vector<ConvPhaseDim> phases;
  for (int64_t r = 0; r < std::min(output_step, output_size); ++r) {
    ConvPhaseDim ph;
    ph.output_first = r;
    ph.output_step = output_step;
    ph.output_size = (output_size - r + output_step - 1) / output_step;
    ph.window.stride = sub_stride;
    ph.window.window_dilation = sub_dilation;
    ph.window.window_reversal = wd.window_reversal;
    ph.window.size = 0;
    // The first live tap: the residues of t repeat with period tap_step.
    int64_t t0 = -1;
    for (int64_t t = 0; t < std::min(tap_step, kernel_size); ++t) {
      if ((r * s + t * r_dil - wd.padding_low) % d == 0) {
        t0 = t;
        break;
      }
    }
    if (t0 >= 0) {
      const int64_t taps = (kernel_size - t0 + tap_step - 1) / tap_step;
      const int64_t c = (r * s + t0 * r_dil - wd.padding_low) / d;
      const int64_t t_last = t0 + (taps - 1) * tap_step;
      ph.window.size = taps;
      ph.kernel_step = tap_step;
      ph.kernel_first = wd.window_reversal ? kernel_size - 1 - t_last : t0;
      ph.window.padding_low = -c;
      const int64_t extent = (taps - 1) * sub_dilation + 1;
      ph.window.padding_high = (ph.output_size - 1) * sub_stride + extent - input_size + c;
    }
    phases.push_back(ph);
  }
  return phases;
}

}  // namespace xjit::runtime::blas
