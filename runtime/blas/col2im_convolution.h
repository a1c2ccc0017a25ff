// A transposed convolution as one GEMM over the undilated input and a
// col2im scatter-add: out = col2im(x . W), for lhs-dilated convolutions
// whose output features are few.
//
// Why: the phases of conv_phases.h are ordinary convolutions; when the
// output has few features (an RGB decoder head, 3 or 8 channels) the direct
// kernel cannot take them and each phase builds an im2col image of the
// input features times its taps per output pixel, then a GEMM with N = the
// few output features, which OpenBLAS runs at a fraction of its speed after
// packing the whole image again. Here the GEMM is
//   Y[(b, i...)][(k..., o)] = X[(b, i...)][c] . W[c][(k..., o)]
// straight over the input as it lies (no image: K = input features,
// N = taps x output features), and each row of Y is added into the
// output pixels that tap k of input pixel i reaches:
//   o_s = (i*D + P - t*R) / S when S divides it and it lies in [0, O),
// t the tap's physical index (reversal: K - 1 - k). The output is zeroed
// first. Y has B * I * taps * output-features elements: chosen only where
// that is no more than the phases' images would hold (convolution.cc).
//
// Covered: f32 and f64, no feature or batch groups, any number of spatial
// dimensions, any layouts, strides, padding, dilations and reversal.
#ifndef XJIT_RUNTIME_BLAS_COL2IM_CONVOLUTION_H_
#define XJIT_RUNTIME_BLAS_COL2IM_CONVOLUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/blas/dot.h"

namespace xjit::runtime::blas {

// One spatial dimension of the scatter (strides in elements of the output).
struct Col2imSpatial {
  int64_t input_size = 1;
  int64_t kernel_size = 1;
  int64_t output_size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;
  bool reversed = false;
  int64_t output_stride = 0;
};

struct Col2imPlan {
  bool f64 = false;
  int64_t batch = 1;
  int64_t features = 1;              // output features
  int64_t output_batch_stride = 0;
  int64_t output_feature_stride = 0;
  int64_t output_bytes = 0;          // the whole output, zeroed first
  std::vector<Col2imSpatial> spatial;
  // Per spatial dimension, for input index i and kernel index k (at
  // i * kernel_size + k): the output element offset o_s * output_stride
  // that the pair reaches, or -1 (PlanCol2imScatter fills them).
  std::vector<std::vector<int64_t>> targets;
  // Y = x . W into scratch at offset 0 (y_bytes, 64-byte aligned), the
  // dot's own scratch after it.
  DotPlan gemm;
  int64_t y_bytes = 0;
  int64_t scratch_bytes = 0;
  int threads = 1;

  std::string ToString() const;
};

// Fills plan.targets from plan.spatial.
void PlanCol2imScatter(Col2imPlan& plan);

// Runs it: the GEMM (on plan.threads as its split says; the caller sets
// OpenBLAS's threads to gemm.blas_threads), then the scatter-add split
// over the batch. `scratch` holds plan.scratch_bytes bytes.
void RunCol2imConvolution(const Col2imPlan& plan, const void* input, const void* kernel,
                          void* output, void* scratch);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_COL2IM_CONVOLUTION_H_
