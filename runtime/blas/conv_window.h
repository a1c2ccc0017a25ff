// Where a convolution window's taps read the input, along one spatial
// dimension: shared by im2col (convolution.cc) and the grouped direct
// kernel (grouped_convolution.cc), so that both read the same positions.
//
// For output index s and kernel index k, the tap sits at position
// p = s * stride + KernelOffset(k) - padding_low of the dilated, padded
// input; it reads input index p / base_dilation when that divides and lies
// in [0, input_size), and padding (zero) otherwise.
#ifndef XJIT_RUNTIME_BLAS_CONV_WINDOW_H_
#define XJIT_RUNTIME_BLAS_CONV_WINDOW_H_

#include <cstdint>

namespace xjit::runtime::blas {

struct Im2colSpatial {
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;
  int64_t kernel_size = 1;
  bool reversed = false;
  int64_t input_size = 0;
  int64_t input_stride = 0;  // elements
};

// The offset of tap k from the window's start (window reversal reads the
// kernel backwards).
inline int64_t KernelOffset(const Im2colSpatial& s, int64_t k) {
  return (s.reversed ? s.kernel_size - 1 - k : k) * s.window_dilation;
}

// The input index that position p reads, or -1 when it reads padding.
inline int64_t InputIndex(const Im2colSpatial& s, int64_t p) {
  if (p < 0) return -1;
  if (s.base_dilation != 1) {
    if (p % s.base_dilation != 0) return -1;
    p /= s.base_dilation;
  }
  return p < s.input_size ? p : -1;
}

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_CONV_WINDOW_H_
