// A transposed convolution as phases: one spatial dimension of a
// convolution with lhs (base) dilation D > 1 split into ordinary
// convolutions (no base dilation) over sub-kernels, so that no product
// reads one of the zeros the dilation inserts.
//
// Why: JAX lowers conv_transpose (and the input gradient of a strided
// convolution) to a convolution with lhs_dilation = stride; run as im2col
// over the dilated input, 1 - 1/D of the image along each such dimension is
// zeros, and the GEMM multiplies them (D^2 times the work in 2-D).
//
// The algebra (per spatial dimension; t = the tap's physical index, k or
// kernel_size - 1 - k under window reversal): output o's tap t reads the
// dilated position p = o*S + t*R - P, i.e. input p / D when D divides p.
// Write o = Dp*q + r with Dp = D / gcd(S, D); then o*S = q*(S/gcd(S,D))*D +
// r*S, so whether a tap reads the input depends on r and t only: tap t is
// live for phase r iff D divides r*S + t*R - P, which holds for t in an
// arithmetic progression t0, t0 + T, ... with T = D / gcd(R, D). Phase r is
// then the ordinary convolution
//   out[Dp*q + r] = sum_j in[q*S' + j*R' + c] . w[tap t0 + j*T],
//   S' = S / gcd(S, D), R' = R / gcd(R, D), c = (r*S + t0*R - P) / D,
// i.e. stride S', window dilation R', padding_low -c (negative too), over
// the kernel taps t0 + j*T (a strided view of the kernel, read backwards
// under reversal) writing every Dp-th output from r (a strided view of the
// output). Phases cover every output index once; a phase with no live tap
// writes zeros. In n dimensions the phases are the products of each
// dimension's phases.
#ifndef XJIT_RUNTIME_BLAS_CONV_PHASES_H_
#define XJIT_RUNTIME_BLAS_CONV_PHASES_H_

#include <cstdint>
#include <vector>

#include "ir/attributes.h"

namespace xjit::runtime::blas {

// One phase of one spatial dimension.
struct ConvPhaseDim {
  // The outputs it writes: output_first + output_step * q, q < output_size.
  int64_t output_first = 0;
  int64_t output_step = 1;
  int64_t output_size = 0;
  // The kernel elements it reads, in the sub-kernel's memory order:
  // kernel_first + kernel_step * j, j < window.size (0: no live tap; the
  // phase's outputs are zeros).
  int64_t kernel_first = 0;
  int64_t kernel_step = 1;
  // The ordinary window over the undilated input (base_dilation 1, size the
  // sub-kernel's, padding so that it yields output_size outputs).
  WindowDimension window;
};

// Splits one spatial dimension (input_size, output_size, kernel_size > 0,
// as shape inference relates them to `wd`) into its phases, in order of
// output_first. With wd.base_dilation == 1 that is one phase reading every
// tap (callers keep such a dimension as it is).
std::vector<ConvPhaseDim> SplitDilatedDimension(int64_t input_size, int64_t output_size,
                                                int64_t kernel_size, const WindowDimension& wd);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_CONV_PHASES_H_
