// A direct f32 convolution kernel for channels-minor layouts (NHWC input,
// kernel and output with the output features minor, e.g. HWIO), used by
// convolution.h in place of im2col + GEMM when the CPU has AVX-512F or
// AVX2+FMA (tiles of 6 pixels x 16 features with 16 ymm registers, or 12
// pixels x 8 features).
//
// Why: im2col writes and rereads an image kh*kw times the input, and a GEMM
// library packs both operands again; for small channel counts (ResNet's
// 7x7/2 stem, 3 input channels) the copies cost as much as the arithmetic.
// The kernel instead keeps a tile of P output pixels x 16*NV output features
// in registers and accumulates over (kernel row, kernel column, input
// feature) reading the input and the kernel where they lie: one broadcast
// of an input element feeds NV fused multiply-adds. Padding is handled by
// copying the input into a zero-bordered buffer in scratch (one padded
// image, not kh*kw times the input; each row copied just before the first
// output row that reads it, so it is read back from cache), so the tiles
// never test bounds. When output rows are shorter than a tile and the batch
// is large (kernel gradients: a 3x3 output, the forward pass's channels as
// the batch), a tile's pixels are instead images of the batch at one output
// position, and its window is clipped at the input's borders.
//
// Threads: the work items (image, output row, feature block) are taken a
// chunk at a time from a shared counter by whichever thread is free, about
// 8 chunks per thread, each thread with its own padded-image buffer: the
// split adapts when a thread starts late or shares its core.
//
// Output features that are not a multiple of 16 (small CNNs' 8, 24, an
// RGB decoder's 3) go in blocks of 8 with a narrow tile (one 8-lane vector
// by up to 12 pixels), the last block masked to the features left, so that
// nothing beyond the kernel's and the output's rows is read or written.
//
// Covered: 1 or 2 spatial dimensions, any stride and window dilation,
// padding >= 0, no lhs dilation, no window reversal, no groups, any number
// of output features, unit stride along the input's features, the kernel's
// and the output's output features. PlanDirectConvolution says
// whether a convolution is covered; the plan is pure sizes and strides.
#ifndef XJIT_RUNTIME_BLAS_DIRECT_CONVOLUTION_H_
#define XJIT_RUNTIME_BLAS_DIRECT_CONVOLUTION_H_

#include <cstdint>
#include <optional>
#include <string>

#include "runtime/blas/kernel_isa.h"

namespace xjit::runtime::blas {

// One spatial dimension of a direct convolution (strides in elements).
struct DirectSpatial {
  int64_t input_size = 1;
  int64_t output_size = 1;
  int64_t kernel_size = 1;
  int64_t stride = 1;
  int64_t window_dilation = 1;
  int64_t padding_low = 0;    // >= 0
  int64_t input_stride = 0;
  int64_t kernel_stride = 0;
  int64_t output_stride = 0;
};

// What PlanDirectConvolution needs; dimension 1 of `spatial` is the one
// whose output pixels form a tile (the input's most minor spatial
// dimension), dimension 0 the other (size 1 and strides 0 for 1-D).
struct DirectConvolutionProblem {
  int64_t batch = 1;
  int64_t input_features = 1;
  int64_t output_features = 1;
  int64_t input_batch_stride = 0;
  int64_t output_batch_stride = 0;
  int64_t kernel_feature_stride = 0;  // kernel stride of the input feature
  DirectSpatial spatial[2];
};

struct DirectConvolutionPlan {
  DirectConvolutionProblem problem;
  // The tiles' ISA, CurrentKernelIsa() when planned (kNone: the portable
  // tiles, UsePortableDirectConvolutionForTesting).
  KernelIsa isa = KernelIsa::kNone;
  int vectors = 4;             // NV: 16-feature vectors per tile
  // Output features not a multiple of 16: blocks of 8 (8-lane tiles, the
  // last block masked to what is left), vectors = 1.
  bool narrow = false;
  int pixels = 7;              // P: most output pixels per tile (rows are cut evenly)
  // A tile's pixels are images of the batch at one output position, with
  // the window clipped at the input's borders (no padded copy), instead of
  // neighbours along an output row: for short rows and a large batch.
  bool batch_tiles = false;
  bool padded_copy = false;    // the input is copied into scratch, image by image
  int64_t padded_size[2] = {0, 0};  // rows and columns the tiles read
  // The input as the tiles read it (the copy in scratch when padded_copy,
  // which holds one image: batch_stride 0).
  int64_t batch_stride = 0;
  int64_t row_stride[2] = {0, 0};
  // The kernel column and feature loops merge into one run (unit window
  // dilation and both the input and the kernel contiguous over them).
  bool merge_columns = false;
  // Work items: (image, or group of images with batch_tiles; output row;
  // block of 16 * vectors output features), taken `chunk` at a time by
  // whichever of the `threads` is free (see RunDirectConvolution).
  int64_t items = 1;
  int64_t chunk = 1;
  int threads = 1;
  int64_t scratch_per_thread = 0;  // one padded image (0 without padded_copy)
  int64_t scratch_bytes = 0;       // scratch_per_thread * threads

  // Output features per block (16 * vectors, or 8 when narrow) and blocks
  // per output pixel (the last one partial when narrow).
  int64_t BlockWidth() const;
  int64_t Blocks() const;

  std::string ToString() const;
};

// Whether this process can run direct convolutions (the CPU has AVX-512F or
// AVX2+FMA, or the portable tiles are on).
bool DirectConvolutionSupported();

// Tests only: on a CPU without AVX-512F or AVX2, plan and run direct convolutions
// with a plain C++ tile (same plans, padding and thread split; slow), so
// that the code around the tiles is tested everywhere. Plans made while on
// must run while on.
void UsePortableDirectConvolutionForTesting(bool on);

// The plan for `threads` (>= 1; more than the work items is clamped), or
// nullopt when the problem is not covered (see above) or the CPU cannot run
// it.
std::optional<DirectConvolutionPlan> PlanDirectConvolution(const DirectConvolutionProblem& p,
                                                           int threads = 1);

// Runs it; `scratch` holds plan.scratch_bytes bytes. Never allocates.
void RunDirectConvolution(const DirectConvolutionPlan& plan, const float* input,
                          const float* kernel, float* output, void* scratch);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_DIRECT_CONVOLUTION_H_
