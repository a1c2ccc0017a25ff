// A direct convolution for feature groups of one input feature each
// (depthwise convolutions), used by convolution.h in place of im2col + GEMM.
//
// Why: with feature_group_count G, im2col + GEMM runs G products of
// K = taps x input features per group by N = output features per group; for
// a depthwise convolution (one input feature per group, N a small channel
// multiplier) each is a matrix-vector product over an image taps times the
// size of the input. A 3x3 depthwise block spent its time building a 115 MB
// image, and the kernel gradient of a dilated depthwise convolution planned
// a 54.7 GB one (issues 28 and 30). Here each output element is the sum over
// its window's taps, read where they lie: no scratch, work proportional to
// the output's size times the taps.
//
// Loop order: for each output position the output's features are zeroed,
// then each tap inside the input adds input[g] * kernel[tap][g, j] to
// output[g * multiplier + j] for every group g at once. With unit feature
// strides (channels-minor layouts, NHWC input and output, an HWIO-like
// kernel) and a multiplier of 1 that loop is contiguous, and the compiler
// vectorises it. Work items (batch index x outermost output spatial index)
// are split over the shared thread pool.
//
// Covered: feature_group_count > 1 with one input feature per group, no
// batch groups, f32 or f64 throughout, any number of spatial dimensions,
// any layout, strides, padding (negative too), lhs and rhs dilation and
// window reversal. Sums run in a fixed order (taps in row-major order of the
// kernel's spatial indices), so the split never changes a result bit.
#ifndef XJIT_RUNTIME_BLAS_GROUPED_CONVOLUTION_H_
#define XJIT_RUNTIME_BLAS_GROUPED_CONVOLUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/blas/conv_window.h"

namespace xjit::runtime::blas {

struct GroupedSpatial {
  Im2colSpatial window;        // How taps read the input (conv_window.h).
  int64_t output_size = 0;
  int64_t kernel_stride = 0;   // elements
  int64_t output_stride = 0;   // elements
};

struct GroupedConvolutionPlan {
  bool f64 = false;            // f64 throughout; f32 otherwise.
  int64_t batch = 0;
  int64_t groups = 0;          // = input features
  int64_t multiplier = 1;      // output features per group
  // Strides in elements.
  int64_t input_batch_stride = 0;
  int64_t input_feature_stride = 0;
  int64_t kernel_feature_stride = 0;  // along the kernel's output features
  int64_t output_batch_stride = 0;
  int64_t output_feature_stride = 0;
  std::vector<GroupedSpatial> spatial;
  int threads = 1;

  std::string ToString() const;
};

// Runs the plan over raw buffers; allocates nothing.
void RunGroupedConvolution(const GroupedConvolutionPlan& plan, const void* input,
                           const void* kernel, void* output);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_GROUPED_CONVOLUTION_H_
