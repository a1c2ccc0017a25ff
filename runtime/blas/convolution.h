// Convolution at run time: im2col into scratch, then a strided dot (dot.h),
// planned once from shapes, layouts, window, dimension numbers and group
// counts; RunConvolution then works over raw buffers with no allocation.
//
// Every form of 003 is covered: any number of spatial dimensions, dim_labels
// in any order, strides, padding (negative too), lhs (base) dilation, rhs
// (window) dilation, window reversal, feature_group_count and
// batch_group_count (not both above 1, as shape inference requires).
//
// The convolution is out[g][(b, s...)][o'] = X[g][(b, s...)][(c, k...)] .
// W[g][(c, k...)][o'], one GEMM per group g (the group is a batch dimension
// of the dot). X, the im2col image, is built in scratch:
//   - its K dimensions (input feature, kernel spatial) follow the kernel's
//     memory order and its M dimensions (batch, output spatial) the output's,
//     so that neither the kernel nor the output needs a copy; the batch moves
//     out of M into the GEMM loop only when the output's layout cannot merge
//     it with the spatial dimensions (so M is as large as the layout allows);
//   - its orientation (K minor or M minor) follows the input: K minor when
//     the input's features are its most minor dimension (channels-minor
//     layouts copy whole runs of channels), M minor otherwise (NCHW copies
//     runs along the output's minor spatial dimension).
// Where the batch cannot join M (a channels-major output: one GEMM per
// image) and the whole image would be larger than a core's cache, each
// image's part is built just before its GEMM, in a slab per thread.
// A convolution whose kernel is 1 in every spatial dimension, with no lhs
// dilation and no positive padding, needs no image: the input is the GEMM's
// lhs as it lies in memory (with a stride where the window stride is > 1);
// in a channels-minor layout with unit strides that is one plain GEMM.
//
// f32/f64/c64/c128 go to BLAS; other types run the dot's plain loop (exact
// integers, f16/bf16 accumulated in f32 and rounded once). An f32 GEMM with
// few rows (a channels-major convolution with few output features: per
// image, C^T = W^T . image with the image's rows along the spatial
// positions) runs on small_gemm.h's kernels where PreferSmallGemm says they
// beat OpenBLAS, which would pack the whole image first.
//
// A depthwise f32 or f64 convolution (feature groups of one input feature)
// runs grouped_convolution.h's direct loop instead, with no scratch.
//
// An f32 convolution in channels-minor layouts (NHWC-like input, output and
// kernel with unit stride along their features / output features) that
// direct_convolution.h covers also gets a direct plan, for the thread count
// given to PlanConvolution; RunConvolution runs it instead of im2col + GEMM
// (the direct kernel splits its work over the shared thread pool itself).
//
// A convolution with lhs (base) dilation (a transposed convolution) runs as
// phases (conv_phases.h): ordinary convolutions over sub-kernels, each
// planned as above (direct, grouped or im2col + GEMM) over strided views of
// the kernel and the output, one after another; none multiplies the zeros
// the dilation inserts. Where the output has few features (the phases'
// images would hold more than x . W), one GEMM over the undilated input and
// a col2im scatter-add instead (col2im_convolution.h). (Beyond 256 phases
// with live taps — kernels and dilations both above 16 in two dimensions —
// im2col over the dilated input runs as before.)
#ifndef XJIT_RUNTIME_BLAS_CONVOLUTION_H_
#define XJIT_RUNTIME_BLAS_CONVOLUTION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/attributes.h"
#include "ir/instruction.h"
#include "ir/shape.h"
#include "runtime/blas/col2im_convolution.h"
#include "runtime/blas/conv_window.h"
#include "runtime/blas/direct_convolution.h"
#include "runtime/blas/grouped_convolution.h"
#include "runtime/blas/dot.h"

namespace xjit::runtime::blas {

// One dimension of the im2col image, in the image's memory order.
struct Im2colDim {
  enum class Kind : uint8_t { kGroup, kBatch, kFeature, kOutputSpatial, kKernelSpatial };
  Kind kind = Kind::kBatch;
  int spatial = 0;            // kOutputSpatial / kKernelSpatial: which spatial dimension
  int64_t size = 1;
  int64_t input_stride = 0;   // kGroup / kBatch / kFeature: elements of the input per index
};

struct Im2colPlan {
  std::vector<Im2colDim> dims;  // outer first; the image is dense in this order
  std::vector<Im2colSpatial> spatial;
  int64_t element_bytes = 0;
  int64_t image_elements = 0;
  // The last two dims are (kernel spatial j, feature) and the input holds
  // the features of neighbouring positions of j back to back, so one window
  // row is a single run of kernel_size * features input elements (clipped
  // at the edges): NHWC/HWIO im2col then copies whole rows.
  bool fused_row = false;
};

struct ConvolutionPhase;

struct ConvolutionPlan {
  // Set for an lhs-dilated convolution: RunConvolution runs these instead of
  // everything below (zeroing the output first when zero_output: some
  // outputs read only the dilation's zeros), each with the same scratch.
  bool phased = false;
  std::vector<ConvolutionPhase> phases;
  bool zero_output = false;
  int64_t output_bytes = 0;
  // An lhs-dilated convolution with few output features runs as one GEMM
  // and a col2im scatter-add instead (col2im_convolution.h).
  bool use_col2im = false;
  Col2imPlan col2im;
  // A depthwise convolution runs the grouped direct kernel
  // (grouped_convolution.h) and nothing below: no image, no GEMM.
  bool use_grouped = false;
  GroupedConvolutionPlan grouped;
  bool uses_im2col = false;
  Im2colPlan im2col;          // when uses_im2col; the image starts at scratch offset 0
  int64_t dot_scratch_offset = 0;
  DotPlan dot;                // lhs = the image (or the input), rhs = kernel, out = output
  // Image by image (when > 0: a channels-major output whose batch is a loop
  // of GEMMs, with an image larger than the cache): `dot` is one image's
  // GEMM, run after im2col of that image's runs into a slab of scratch
  // (image_slab_bytes: the image at offset 0, the dot's scratch at
  // dot_scratch_offset); image_workers threads take images in turn, each
  // with its own slab. Output images are output_image_bytes apart.
  int64_t images = 0;
  int64_t output_image_bytes = 0;
  int64_t image_slab_bytes = 0;
  int image_workers = 1;
  // The direct kernel's plan, when it covers the convolution; it uses
  // scratch from offset 0 (instead of, never with, the image).
  bool has_direct = false;
  DirectConvolutionPlan direct;
  // Whether RunConvolution runs the direct plan (only with has_direct) or
  // im2col + GEMM: the planner's choice of the faster one for its thread
  // count (benchmarks and tests may flip it).
  bool use_direct = false;
  // The thread count it was planned for: the direct kernel's split, the
  // im2col image's and the GEMM's.
  int threads = 1;
  // On more than one thread, the GEMM is split as PlanDotThreads plans it
  // (in dot: bands of rows or columns of the result, or the batch, run on the
  // pool with single-threaded BLAS calls): OpenBLAS's own workers keep
  // spinning for a long while after a threaded call (about 0.1 s), taking a
  // core from the pool's next steps.

  // The OpenBLAS thread count RunConvolution wants (callers set it around
  // the call, blas_threads.h): 1 when the plan splits its work itself.
  int BlasThreads() const;
  // Bytes of scratch RunConvolution needs on either path (image plus the
  // dot's copies, or the direct kernel's, whichever is more), so that
  // use_direct may be flipped; the im2col + GEMM path's alone; and the
  // chosen path's (what the JIT reserves: a direct plan needs no image).
  int64_t scratch_bytes = 0;
  int64_t gemm_scratch_bytes = 0;
  int64_t ChosenScratchBytes() const;

  std::string ToString() const;
};

// One phase of an lhs-dilated convolution: its plan reads the kernel and
// writes the output at these byte offsets (the input from its start).
struct ConvolutionPhase {
  int64_t kernel_offset = 0;
  int64_t output_offset = 0;
  ConvolutionPlan plan;
};

// Plans a convolution with these shapes (with plain layouts; others are
// Unimplemented). InvalidArgument when the shapes do not fit the window,
// dimension numbers and group counts. `threads`: how many threads the direct
// kernel splits its work over (im2col + GEMM uses BLAS's own setting).
absl::StatusOr<ConvolutionPlan> PlanConvolution(const Shape& input, const Shape& kernel,
                                                const Shape& output, const Window& window,
                                                const ConvolutionDimensionNumbers& dnums,
                                                int64_t feature_group_count,
                                                int64_t batch_group_count, int threads = 1);
// The same for a `convolution` instruction.
absl::StatusOr<ConvolutionPlan> PlanConvolution(const Instruction& convolution, int threads = 1);

// Runs the plan; `scratch` holds plan.scratch_bytes bytes (may be null when
// that is 0). Never allocates.
void RunConvolution(const ConvolutionPlan& plan, const void* input, const void* kernel,
                    void* output, void* scratch);

}  // namespace xjit::runtime::blas

#endif  // XJIT_RUNTIME_BLAS_CONVOLUTION_H_
