// Convolution planning, im2col and execution; see convolution.h.
#include "runtime/blas/convolution.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <optional>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/element_type.h"
#include "ir/status_macros.h"
#include "runtime/blas/conv_phases.h"
#include "runtime/blas/kernel_isa.h"
#include "runtime/blas/strided_internal.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::blas {

namespace {

int64_t Align64(int64_t x) { return (x + 63) / 64 * 64; }

// Floor division for a positive divisor.
int64_t FloorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int64_t CeilDiv(int64_t a, int64_t b) { return -FloorDiv(-a, b); }

// The image is a sequence of runs (its innermost dimension, or the last two
// with fused_row), one per index of the outer dimensions.
int Im2colOuterDims(const Im2colPlan& plan) {
  const int nd = static_cast<int>(plan.dims.size());
  return plan.fused_row ? nd - 2 : nd > 0 ? nd - 1 : 0;
}

int64_t Im2colRuns(const Im2colPlan& plan) {
  int64_t runs = 1;
  for (int d = 0; d < Im2colOuterDims(plan); ++d) runs *= plan.dims[d].size;
  return runs;
}

// Writes runs [first, last) of the image (so that threads can share it)
// into `image`, which starts at run `image_first` (0: the whole image; a
// per-image slab starts at its image's first run).
template <typename Width>
void Im2colAs(const Im2colPlan& plan, const uint8_t* input, uint8_t* image, Width width,
              int64_t first, int64_t last, int64_t image_first) {
  const int64_t w = width;
  const int nd = static_cast<int>(plan.dims.size());
  const int ns = static_cast<int>(plan.spatial.size());
  if (plan.image_elements == 0 || first >= last) return;
  // A dummy inner dimension of size 1 when the image is a single element.
  const Im2colDim single{Im2colDim::Kind::kBatch, 0, 1, 0};
  const Im2colDim& inner = nd > 0 ? plan.dims[nd - 1] : single;
  const int outer = Im2colOuterDims(plan);
  const int fused_spatial = plan.fused_row ? plan.dims[nd - 2].spatial : -1;
  const int64_t fused_run = plan.fused_row ? plan.dims[nd - 2].size * inner.size : 0;
  const int64_t run_elements = plan.fused_row ? fused_run : inner.size;
  int64_t counter[kMaxLoopDims] = {};
  for (int64_t d = outer - 1, rest = first; d >= 0; --d) {
    counter[d] = rest % plan.dims[d].size;
    rest /= plan.dims[d].size;
  }
  uint8_t* dst = image + (first - image_first) * run_elements * w;
  int64_t s_index[kMaxLoopDims];
  int64_t k_index[kMaxLoopDims];
  for (int64_t run = first; run < last; ++run) {
    for (int i = 0; i < ns; ++i) s_index[i] = k_index[i] = 0;
    int64_t offset = 0;
    for (int d = 0; d < outer; ++d) {
      const Im2colDim& dim = plan.dims[d];
      switch (dim.kind) {
        case Im2colDim::Kind::kOutputSpatial: s_index[dim.spatial] = counter[d]; break;
        case Im2colDim::Kind::kKernelSpatial: k_index[dim.spatial] = counter[d]; break;
        default: offset += counter[d] * dim.input_stride; break;
      }
    }
    const bool inner_spatial = inner.kind == Im2colDim::Kind::kOutputSpatial ||
                               inner.kind == Im2colDim::Kind::kKernelSpatial;
    bool valid = true;
    for (int i = 0; i < ns && valid; ++i) {
      if ((inner_spatial && inner.spatial == i) || i == fused_spatial) continue;
      const Im2colSpatial& sp = plan.spatial[i];
      const int64_t in = InputIndex(sp, s_index[i] * sp.stride + KernelOffset(sp, k_index[i]) -
                                            sp.padding_low);
      if (in < 0) {
        valid = false;
      } else {
        offset += in * sp.input_stride;
      }
    }
    const int64_t n = plan.fused_row ? fused_run : inner.size;
    if (valid && plan.fused_row) {
      // Window positions k of dim j read p = p0 + k: valid for k in [k0, k1).
      const Im2colSpatial& sp = plan.spatial[fused_spatial];
      const int64_t p0 = s_index[fused_spatial] * sp.stride - sp.padding_low;
      const int64_t k0 = std::clamp<int64_t>(-p0, 0, sp.kernel_size);
      const int64_t k1 = std::clamp<int64_t>(sp.input_size - p0, k0, sp.kernel_size);
      const int64_t c = inner.size;
      std::memset(dst, 0, k0 * c * w);
      std::memcpy(dst + k0 * c * w, input + (offset + (p0 + k0) * sp.input_stride) * w,
                  (k1 - k0) * c * w);
      std::memset(dst + k1 * c * w, 0, (sp.kernel_size - k1) * c * w);
    } else if (!valid) {
      std::memset(dst, 0, n * w);
    } else if (!inner_spatial) {
      const uint8_t* src = input + offset * w;
      if (inner.input_stride == 1) {
        std::memcpy(dst, src, n * w);
      } else {
        for (int64_t t = 0; t < n; ++t) std::memcpy(dst + t * w, src + t * inner.input_stride * w, w);
      }
    } else {
      const Im2colSpatial& sp = plan.spatial[inner.spatial];
      const uint8_t* src = input + offset * w;
      if (inner.kind == Im2colDim::Kind::kOutputSpatial && sp.base_dilation == 1) {
        // p = t * stride + c0 is valid for t in [t0, t1).
        const int64_t c0 = KernelOffset(sp, k_index[inner.spatial]) - sp.padding_low;
        const int64_t t0 = std::clamp<int64_t>(CeilDiv(-c0, sp.stride), 0, n);
        const int64_t t1 = std::clamp<int64_t>(CeilDiv(sp.input_size - c0, sp.stride), t0, n);
        std::memset(dst, 0, t0 * w);
        const uint8_t* from = src + (t0 * sp.stride + c0) * sp.input_stride * w;
        const int64_t step = sp.stride * sp.input_stride;
        if (step == 1) {
          std::memcpy(dst + t0 * w, from, (t1 - t0) * w);
        } else {
          for (int64_t t = t0; t < t1; ++t) std::memcpy(dst + t * w, from + (t - t0) * step * w, w);
        }
        std::memset(dst + t1 * w, 0, (n - t1) * w);
      } else {
        for (int64_t t = 0; t < n; ++t) {
          const int64_t s = inner.kind == Im2colDim::Kind::kOutputSpatial ? t
                                                                           : s_index[inner.spatial];
          const int64_t k = inner.kind == Im2colDim::Kind::kKernelSpatial ? t
                                                                          : k_index[inner.spatial];
          const int64_t in = InputIndex(sp, s * sp.stride + KernelOffset(sp, k) - sp.padding_low);
          if (in < 0) {
            std::memset(dst + t * w, 0, w);
          } else {
            std::memcpy(dst + t * w, src + in * sp.input_stride * w, w);
          }
        }
      }
    }
    dst += n * w;
    for (int d = outer - 1; d >= 0; --d) {
      if (++counter[d] < plan.dims[d].size) break;
      counter[d] = 0;
    }
  }
}

void RunIm2colRuns(const Im2colPlan& plan, const uint8_t* in, uint8_t* image, int64_t first,
                   int64_t last, int64_t image_first = 0) {
  switch (plan.element_bytes) {
    case 4:
      Im2colAs(plan, in, image, std::integral_constant<int64_t, 4>(), first, last, image_first);
      break;
    case 8:
      Im2colAs(plan, in, image, std::integral_constant<int64_t, 8>(), first, last, image_first);
      break;
    case 2:
      Im2colAs(plan, in, image, std::integral_constant<int64_t, 2>(), first, last, image_first);
      break;
    default:
      Im2colAs(plan, in, image, plan.element_bytes, first, last, image_first);
      break;
  }
}

// Below this many image bytes per thread, waking a helper costs more than
// it saves.
constexpr int64_t kIm2colBytesPerThread = 256 << 10;

// Builds the image on up to `threads` threads (each writes its own runs).
void RunIm2col(const Im2colPlan& plan, const void* input, uint8_t* image, int threads) {
  auto in = static_cast<const uint8_t*>(input);
  const int64_t runs = Im2colRuns(plan);
  const int64_t bytes = plan.image_elements * plan.element_bytes;
  const int64_t chunks = std::min<int64_t>(
      {static_cast<int64_t>(threads), runs, std::max<int64_t>(1, bytes / kIm2colBytesPerThread)});
  if (chunks <= 1) {
    RunIm2colRuns(plan, in, image, 0, runs);
    return;
  }
  ThreadPool::Shared().ParallelFor(chunks, static_cast<int>(chunks - 1), [&](int64_t k) {
    RunIm2colRuns(plan, in, image, runs * k / chunks, runs * (k + 1) / chunks);
  });
}

// A dimension of the convolution seen as a dot, tagged with what it is.
struct ConvDim {
  Im2colDim::Kind kind;
  int spatial = 0;
  int64_t size = 1;
  int64_t input_stride = 0;   // of the input (direct case / image copy)
  int64_t kernel_stride = 0;
  int64_t output_stride = 0;
  int64_t image_stride = 0;   // filled in once the image layout is known
};

bool Chains(const std::vector<ConvDim>& dims, int64_t ConvDim::*stride) {
  for (size_t i = 0; i + 1 < dims.size(); ++i) {
    if (dims[i].*stride != dims[i + 1].*stride * dims[i + 1].size) return false;
  }
  return true;
}

std::vector<ConvDim> SortedBy(std::vector<ConvDim> dims, int64_t ConvDim::*stride) {
  std::vector<ConvDim> out;
  for (const ConvDim& d : dims) {
    if (d.size != 1) out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(),
                   [stride](const ConvDim& a, const ConvDim& b) { return a.*stride > b.*stride; });
  return out;
}

// The direct kernel's plan for a convolution, when it covers it (see
// direct_convolution.h): f32, no groups, 1 or 2 spatial dimensions, unit
// feature strides where the kernel reads and writes vectors.
std::optional<DirectConvolutionPlan> PlanDirect(const Shape& input, const Shape& kernel,
                                                const Shape& output, const Window& window,
                                                const ConvolutionDimensionNumbers& dn,
                                                int64_t groups, const std::vector<int64_t>& is,
                                                const std::vector<int64_t>& ks,
                                                const std::vector<int64_t>& os, int threads) {
  const size_t ns = dn.input_spatial_dimensions.size();
  if (input.element_type() != ElementType::kF32 || kernel.element_type() != ElementType::kF32 ||
      output.element_type() != ElementType::kF32 || groups != 1 || ns < 1 || ns > 2 ||
      is[dn.input_feature_dimension] != 1 || ks[dn.kernel_output_feature_dimension] != 1 ||
      os[dn.output_feature_dimension] != 1) {
    return std::nullopt;
  }
  DirectConvolutionProblem p;
  p.batch = input.dimensions(dn.input_batch_dimension);
  p.input_features = input.dimensions(dn.input_feature_dimension);
  p.output_features = kernel.dimensions(dn.kernel_output_feature_dimension);
  p.input_batch_stride = is[dn.input_batch_dimension];
  p.output_batch_stride = os[dn.output_batch_dimension];
  p.kernel_feature_stride = ks[dn.kernel_input_feature_dimension];
  // The tile runs along the spatial dimension with the smaller input stride.
  size_t order[2] = {0, 1};
  if (ns == 2 && is[dn.input_spatial_dimensions[0]] < is[dn.input_spatial_dimensions[1]]) {
    order[0] = 1;
    order[1] = 0;
  }
  for (size_t n = 0; n < ns; ++n) {
    const size_t i = order[n];
    const WindowDimension& wd = window[i];
    if (wd.base_dilation != 1 || wd.window_reversal || wd.padding_low < 0) return std::nullopt;
    DirectSpatial& s = p.spatial[2 - ns + n];
    s.input_size = input.dimensions(dn.input_spatial_dimensions[i]);
    s.output_size = output.dimensions(dn.output_spatial_dimensions[i]);
    s.kernel_size = kernel.dimensions(dn.kernel_spatial_dimensions[i]);
    s.stride = wd.stride;
    s.window_dilation = wd.window_dilation;
    s.padding_low = wd.padding_low;
    s.input_stride = is[dn.input_spatial_dimensions[i]];
    s.kernel_stride = ks[dn.kernel_spatial_dimensions[i]];
    s.output_stride = os[dn.output_spatial_dimensions[i]];
  }
  return PlanDirectConvolution(p, threads);
}

// Whether the direct kernel beats im2col + GEMM (measured on AVX-512 with
// the model and ResNet-50 layers of benchmarks/blas, at 1 and 2 threads;
// docs/performance.md): it does by 1.2-4x while the slice of the kernel one
// tile streams (every kernel row, column and input feature for its 16 * NV
// output features) stays in the core's L2 cache; a larger slice (a kernel
// gradient over a 32x32 image: the forward pass's output gradient is the
// "kernel") is streamed from memory again for every tile, and the GEMM,
// which packs it once, wins.
constexpr int64_t kDirectKernelSliceBytes = 1 << 20;
// The AVX2 tiles (6 pixels x 16 features: two loads of the slice per 12
// multiply-adds, against AVX-512's 4 per 28) are bound by the cache that
// holds the slice much sooner: on a Zen 3 core (blas_benchmark's
// BM_ConvRunConvolution against its Gemm rows, one run, batch 1) they beat
// the GEMM 2.5x with a 9 KiB slice (ResNet's stem) and 1.7x with 36 KiB
// (3x3 64->64), tie at 16 KiB for a 1x1 the GEMM reads in place, and lose
// 1.2x at 48 KiB (the zoo's patch_embed_nchw, 16x16x3), 1.35x at 72 KiB
// (3x3 128->128) and 5x at 288 KiB (3x3 512->512): the slice must stay
// about within L1 (32 KiB) plus what the L2 streams fast enough.
constexpr int64_t kDirectKernelSliceBytesAvx2 = 40 << 10;

bool DirectIsFaster(const DirectConvolutionPlan& d) {
  const DirectConvolutionProblem& p = d.problem;
  const int64_t slice = p.spatial[0].kernel_size * p.spatial[1].kernel_size * p.input_features *
                        d.BlockWidth() * static_cast<int64_t>(sizeof(float));
  return slice <= (d.isa == KernelIsa::kAvx2 || d.narrow ? kDirectKernelSliceBytesAvx2
                                                         : kDirectKernelSliceBytes);
}

// The convolution's GEMM on more than one thread: PlanDotThreads' bands
// (one per thread, along the larger of M and N: rows when N <= M, a band
// repacking the kernel, K x N; columns otherwise, a band repacking its image
// rows, M x K; ResNet's 3x3 512->512 at 7x7 has M = 49, N = 512) or the
// batch of a grouped convolution's GEMMs. More bands than threads would
// repack more: 4 per thread made ResNet's 3x3 512->512 layers 1.4x slower
// than OpenBLAS's own threads. Fewer rows (columns) than 16 per band and the
// BLAS call's fixed costs (packing the other operand, which every band
// repeats) outweigh the split; no floor on a band's work (the im2col GEMMs
// of real convolutions are large), unlike a dot's (kDotSplitLimits).
constexpr DotSplitLimits kConvolutionSplitLimits{16, 0};

// A batch's im2col image above this many bytes is built one image at a time
// (ConvolutionPlan::images): about the L2 cache of a core. A 1-D NCW
// convolution of 32 images of 64x1024 (25 MB of image) took 15.4 ms whole
// and 32 x 0.2 ms image by image (Zen 3, one thread).
constexpr int64_t kPerImageMinBytes = 1 << 20;

}  // namespace

std::string ConvolutionPlan::ToString() const {
  if (use_col2im) return col2im.ToString();
  if (phased) {
    std::vector<std::string> parts;
    for (const ConvolutionPhase& p : phases) parts.push_back(p.plan.ToString());
    return absl::StrCat("phases=", phases.size(), zero_output ? " zeroed" : "", ": ",
                        absl::StrJoin(parts, " | "));
  }
  if (use_grouped) return grouped.ToString();
  const std::string gemm = absl::StrCat(
      uses_im2col ? "im2col" : "direct", images > 0 ? absl::StrCat(" per-image=", images) : "",
      " image_elements=", uses_im2col ? im2col.image_elements : 0, " scratch=", scratch_bytes, "; ",
      dot.ToString());
  if (!has_direct) return gemm;
  // The path RunConvolution takes comes first.
  return use_direct ? absl::StrCat(direct.ToString(), "; or ", gemm)
                    : absl::StrCat(gemm, "; or ", direct.ToString());
}

int ConvolutionPlan::BlasThreads() const {
  if (use_col2im) return col2im.gemm.blas_threads;
  if (phased) {
    int threads = 1;
    for (const ConvolutionPhase& p : phases) threads = std::max(threads, p.plan.BlasThreads());
    return threads;
  }
  return use_grouped || (has_direct && use_direct) ? 1 : dot.blas_threads;
}

int64_t ConvolutionPlan::ChosenScratchBytes() const {
  if (use_col2im) return col2im.scratch_bytes;
  if (phased) {
    int64_t bytes = 0;
    for (const ConvolutionPhase& p : phases) bytes = std::max(bytes, p.plan.ChosenScratchBytes());
    return bytes;
  }
  if (use_grouped) return 0;
  return has_direct && use_direct ? direct.scratch_bytes : gemm_scratch_bytes;
}

namespace {

// At most this many phases with live taps (a product over the dilated
// dimensions, each at most its kernel size); beyond, the plan would be
// large and its calls tiny, and im2col over the dilated input runs instead.
constexpr int64_t kMaxPhases = 256;

absl::StatusOr<ConvolutionPlan> PlanStrided(const Shape& input, const Shape& kernel,
                                            const Shape& output, const std::vector<int64_t>& is,
                                            const std::vector<int64_t>& ks,
                                            const std::vector<int64_t>& os, const Window& window,
                                            const ConvolutionDimensionNumbers& dn, int64_t fgc,
                                            int64_t bgc, int threads);

// The phases of an lhs-dilated convolution (conv_phases.h): every product
// of one phase per spatial dimension, planned over strided views of the
// kernel and the output (`split`: each dimension's phases).
absl::StatusOr<ConvolutionPlan> PlanPhases(const std::vector<std::vector<ConvPhaseDim>>& split,
                                           const Shape& input, const Shape& kernel,
                                           const Shape& output, const std::vector<int64_t>& is,
                                           const std::vector<int64_t>& ks,
                                           const std::vector<int64_t>& os,
                                           const ConvolutionDimensionNumbers& dn, int64_t fgc,
                                           int64_t bgc, int threads) {
  ConvolutionPlan plan;
  plan.phased = true;
  plan.threads = std::max(threads, 1);
  const int64_t kernel_width = ByteWidth(kernel.element_type());
  const int64_t output_width = ByteWidth(output.element_type());
  plan.output_bytes = output.element_count() * output_width;
  const size_t ns = split.size();
  std::vector<size_t> at(ns, 0);
  for (bool more = true; more;) {
    std::vector<int64_t> kernel_dims(kernel.dimensions().begin(), kernel.dimensions().end());
    std::vector<int64_t> output_dims(output.dimensions().begin(), output.dimensions().end());
    std::vector<int64_t> sub_ks = ks, sub_os = os;
    Window sub_window(ns);
    int64_t kernel_offset = 0, output_offset = 0;
    bool live = true;
    for (size_t i = 0; i < ns; ++i) {
      const ConvPhaseDim& ph = split[i][at[i]];
      const int64_t kd = dn.kernel_spatial_dimensions[i];
      const int64_t od = dn.output_spatial_dimensions[i];
      live = live && ph.window.size > 0;
      kernel_dims[kd] = ph.window.size;
      sub_ks[kd] *= ph.kernel_step;
      kernel_offset += ph.kernel_first * ks[kd];
      output_dims[od] = ph.output_size;
      sub_os[od] *= ph.output_step;
      output_offset += ph.output_first * os[od];
      sub_window[i] = ph.window;
    }
    if (!live) {
      plan.zero_output = true;
    } else {
      XJIT_ASSIGN_OR_RETURN(
          ConvolutionPlan sub,
          PlanStrided(input, Shape::Array(kernel.element_type(), kernel_dims),
                      Shape::Array(output.element_type(), output_dims), is, sub_ks, sub_os,
                      sub_window, dn, fgc, bgc, threads));
      plan.scratch_bytes = std::max(plan.scratch_bytes, sub.scratch_bytes);
      plan.gemm_scratch_bytes = std::max(plan.gemm_scratch_bytes, sub.gemm_scratch_bytes);
      plan.phases.push_back(
          {kernel_offset * kernel_width, output_offset * output_width, std::move(sub)});
    }
    more = false;
    for (size_t i = ns; i-- > 0;) {
      if (++at[i] < split[i].size()) {
        more = true;
        break;
      }
      at[i] = 0;
    }
  }
  return plan;
}

// The GEMM + col2im plan of an lhs-dilated f32/f64 convolution with no
// groups (col2im_convolution.h); `spatial` and `expected` as PlanStrided
// computed them.
absl::StatusOr<ConvolutionPlan> PlanCol2im(const Shape& input, const Shape& kernel,
                                           const Shape& output, const std::vector<int64_t>& is,
                                           const std::vector<int64_t>& ks,
                                           const std::vector<int64_t>& os,
                                           const ConvolutionDimensionNumbers& dn,
                                           const std::vector<Im2colSpatial>& spatial,
                                           const std::vector<int64_t>& expected, int threads) {
  const size_t ns = spatial.size();
  ConvolutionPlan plan;
  plan.use_col2im = true;
  plan.threads = std::max(threads, 1);
  Col2imPlan& c = plan.col2im;
  c.f64 = output.element_type() == ElementType::kF64;
  c.batch = input.dimensions(dn.input_batch_dimension);
  c.features = kernel.dimensions(dn.kernel_output_feature_dimension);
  c.output_batch_stride = os[dn.output_batch_dimension];
  c.output_feature_stride = os[dn.output_feature_dimension];
  c.output_bytes = output.element_count() * ByteWidth(output.element_type());
  c.threads = plan.threads;
  int64_t pixels = 1, taps = 1;
  for (size_t i = 0; i < ns; ++i) {
    const Im2colSpatial& sp = spatial[i];
    Col2imSpatial cs;
    cs.input_size = sp.input_size;
    cs.kernel_size = sp.kernel_size;
    cs.output_size = expected[dn.output_spatial_dimensions[i]];
    cs.stride = sp.stride;
    cs.padding_low = sp.padding_low;
    cs.base_dilation = sp.base_dilation;
    cs.window_dilation = sp.window_dilation;
    cs.reversed = sp.reversed;
    cs.output_stride = os[dn.output_spatial_dimensions[i]];
    c.spatial.push_back(cs);
    pixels *= sp.input_size;
    taps *= sp.kernel_size;
  }
  PlanCol2imScatter(c);
  // Y[(b, i...)][(k..., o)], dense in that order.
  DotProblem p;
  p.lhs_type = input.element_type();
  p.rhs_type = kernel.element_type();
  p.out_type = output.element_type();
  p.m.push_back({c.batch, is[dn.input_batch_dimension], 0, pixels * taps * c.features});
  int64_t y_stride = taps * c.features;
  std::vector<DotDim> m_spatial(ns), n_spatial(ns);
  int64_t tap_stride = c.features;
  for (size_t i = ns; i-- > 0;) {
    m_spatial[i] = {spatial[i].input_size, spatial[i].input_stride, 0, y_stride};
    y_stride *= spatial[i].input_size;
    n_spatial[i] = {spatial[i].kernel_size, 0, ks[dn.kernel_spatial_dimensions[i]], tap_stride};
    tap_stride *= spatial[i].kernel_size;
  }
  p.m.insert(p.m.end(), m_spatial.begin(), m_spatial.end());
  p.k.push_back({input.dimensions(dn.input_feature_dimension), is[dn.input_feature_dimension],
                 ks[dn.kernel_input_feature_dimension], 0});
  p.n = n_spatial;
  p.n.push_back({c.features, 0, ks[dn.kernel_output_feature_dimension], 1});
  XJIT_ASSIGN_OR_RETURN(c.gemm, PlanDotProblem(p));
  PlanDotThreads(c.gemm, plan.threads, kConvolutionSplitLimits);
  c.y_bytes = Align64(c.batch * pixels * taps * c.features * ByteWidth(output.element_type()));
  c.scratch_bytes = c.y_bytes + c.gemm.scratch_bytes;
  plan.scratch_bytes = plan.gemm_scratch_bytes = c.scratch_bytes;
  return plan;
}

absl::StatusOr<ConvolutionPlan> PlanStrided(const Shape& input, const Shape& kernel,
                                            const Shape& output, const std::vector<int64_t>& is,
                                            const std::vector<int64_t>& ks,
                                            const std::vector<int64_t>& os, const Window& window,
                                            const ConvolutionDimensionNumbers& dn, int64_t fgc,
                                            int64_t bgc, int threads) {
  const int64_t rank = input.rank();
  const size_t ns = dn.input_spatial_dimensions.size();
  if (kernel.rank() != rank || output.rank() != rank || rank != static_cast<int64_t>(ns) + 2 ||
      dn.kernel_spatial_dimensions.size() != ns || dn.output_spatial_dimensions.size() != ns ||
      (window.size() != ns && !(window.empty() && ns == 0))) {
    return absl::InvalidArgumentError("convolution: ranks do not match the dimension numbers");
  }
  if (ns + 3 > static_cast<size_t>(kMaxLoopDims)) {
    return absl::UnimplementedError("convolution with too many spatial dimensions");
  }
  auto distinct = [rank](int64_t a, int64_t b, const std::vector<int64_t>& s) {
    std::vector<int> use(rank, 0);
    for (int64_t d : s) {
      if (d < 0 || d >= rank || use[d]++) return false;
    }
    return a >= 0 && a < rank && b >= 0 && b < rank && a != b && !use[a] && !use[b];
  };
  if (!distinct(dn.input_batch_dimension, dn.input_feature_dimension,
                dn.input_spatial_dimensions) ||
      !distinct(dn.kernel_input_feature_dimension, dn.kernel_output_feature_dimension,
                dn.kernel_spatial_dimensions) ||
      !distinct(dn.output_batch_dimension, dn.output_feature_dimension,
                dn.output_spatial_dimensions)) {
    return absl::InvalidArgumentError("convolution: bad dimension numbers");
  }
  const int64_t in_batch = input.dimensions(dn.input_batch_dimension);
  const int64_t in_features = input.dimensions(dn.input_feature_dimension);
  const int64_t cg = kernel.dimensions(dn.kernel_input_feature_dimension);
  const int64_t out_features = kernel.dimensions(dn.kernel_output_feature_dimension);
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1) || in_features != cg * fgc ||
      out_features % fgc != 0 || out_features % bgc != 0 || in_batch % bgc != 0) {
    return absl::InvalidArgumentError("convolution: feature/batch group counts do not fit");
  }
  const int64_t groups = fgc > 1 ? fgc : bgc;
  const int64_t og = out_features / groups;
  const int64_t out_batch = in_batch / bgc;

  std::vector<int64_t> expected(rank);
  expected[dn.output_batch_dimension] = out_batch;
  expected[dn.output_feature_dimension] = out_features;
  Im2colPlan im2col;
  im2col.element_bytes = ByteWidth(input.element_type());
  bool direct = true;
  int64_t direct_offset = 0;
  for (size_t i = 0; i < ns; ++i) {
    const WindowDimension& wd = window[i];
    if (wd.stride < 1 || wd.base_dilation < 1 || wd.window_dilation < 1) {
      return absl::InvalidArgumentError("convolution: invalid window");
    }
    Im2colSpatial sp;
    sp.stride = wd.stride;
    sp.padding_low = wd.padding_low;
    sp.base_dilation = wd.base_dilation;
    sp.window_dilation = wd.window_dilation;
    sp.reversed = wd.window_reversal;
    sp.kernel_size = kernel.dimensions(dn.kernel_spatial_dimensions[i]);
    sp.input_size = input.dimensions(dn.input_spatial_dimensions[i]);
    sp.input_stride = is[dn.input_spatial_dimensions[i]];
    if (wd.size != sp.kernel_size && !window.empty()) {
      return absl::InvalidArgumentError("convolution: window size differs from the kernel");
    }
    const int64_t dilated = sp.input_size == 0 ? 0 : (sp.input_size - 1) * sp.base_dilation + 1;
    const int64_t padded = dilated + wd.padding_low + wd.padding_high;
    const int64_t window_extent =
        sp.kernel_size == 0 ? 0 : (sp.kernel_size - 1) * sp.window_dilation + 1;
    expected[dn.output_spatial_dimensions[i]] =
        padded < window_extent ? 0 : (padded - window_extent) / sp.stride + 1;
    if (sp.kernel_size != 1 || sp.base_dilation != 1 || wd.padding_low > 0 ||
        wd.padding_high > 0) {
      direct = false;
    }
    direct_offset += -wd.padding_low * sp.input_stride;
    im2col.spatial.push_back(sp);
  }
  if (std::vector<int64_t>(output.dimensions().begin(), output.dimensions().end()) != expected) {
    return absl::InvalidArgumentError(absl::StrCat(
        "convolution: output shape ", output.ToString(), " should have dimensions [",
        absl::StrJoin(expected, ","), "]"));
  }
  // An lhs-dilated convolution runs as phases (with no element anywhere,
  // there is nothing to split: the plan below writes nothing).
  bool dilated = false;
  for (size_t i = 0; i < ns; ++i) dilated = dilated || window[i].base_dilation > 1;
  if (dilated && input.element_count() > 0 && kernel.element_count() > 0 &&
      output.element_count() > 0) {
    std::vector<std::vector<ConvPhaseDim>> split(ns);
    int64_t live_phases = 1;
    // Elements of the phases' im2col images per image and input feature:
    // the sum over phases of output pixels x taps, a product of per-dimension
    // sums since the phases are products.
    int64_t phase_image = 1;
    int64_t y_row = kernel.dimensions(dn.kernel_output_feature_dimension);  // of Y, per image
    for (size_t i = 0; i < ns; ++i) {
      const Im2colSpatial& sp = im2col.spatial[i];
      y_row *= sp.input_size * sp.kernel_size;
      if (sp.base_dilation == 1) {
        // Kept whole: one phase with the dimension's own window.
        ConvPhaseDim whole;
        whole.output_size = expected[dn.output_spatial_dimensions[i]];
        whole.window = window[i];
        split[i].push_back(whole);
        phase_image *= whole.output_size * sp.kernel_size;
        continue;
      }
      split[i] = SplitDilatedDimension(sp.input_size, expected[dn.output_spatial_dimensions[i]],
                                       sp.kernel_size, window[i]);
      int64_t live = 0, sum = 0;
      for (const ConvPhaseDim& ph : split[i]) {
        live += ph.window.size > 0 ? 1 : 0;
        sum += ph.output_size * ph.window.size;
      }
      phase_image *= sum;
      live_phases *= std::max<int64_t>(live, 1);
    }
    phase_image *= cg;
    // GEMM + col2im where Y (taps x output features per input pixel) is no
    // larger than the phases' images (taps x input features per output
    // pixel, over the live taps only), unless the phases can take the direct
    // kernel (f32, channels-minor, output features a multiple of 16), which
    // builds no image.
    const ElementType t = output.element_type();
    const bool blas_type = (t == ElementType::kF32 || t == ElementType::kF64) &&
                           input.element_type() == t && kernel.element_type() == t;
    const bool phases_direct = t == ElementType::kF32 && blas_type && fgc == 1 && bgc == 1 &&
                               ns >= 1 && ns <= 2 && out_features % 16 == 0 &&
                               is[dn.input_feature_dimension] == 1 &&
                               ks[dn.kernel_output_feature_dimension] == 1 &&
                               os[dn.output_feature_dimension] == 1 &&
                               DirectConvolutionSupported();
    if (blas_type && fgc == 1 && bgc == 1 && !phases_direct && y_row <= phase_image) {
      return PlanCol2im(input, kernel, output, is, ks, os, dn, im2col.spatial, expected, threads);
    }
    if (live_phases <= kMaxPhases) {
      return PlanPhases(split, input, kernel, output, is, ks, os, dn, fgc, bgc, threads);
    }
  }
  const ElementType type = input.element_type();
  if (fgc > 1 && cg == 1 && (type == ElementType::kF32 || type == ElementType::kF64) &&
      kernel.element_type() == type && output.element_type() == type) {
    ConvolutionPlan plan;
    plan.use_grouped = true;
    plan.threads = std::max(threads, 1);
    GroupedConvolutionPlan& g = plan.grouped;
    g.f64 = type == ElementType::kF64;
    g.batch = out_batch;
    g.groups = fgc;
    g.multiplier = og;
    g.input_batch_stride = is[dn.input_batch_dimension];
    g.input_feature_stride = is[dn.input_feature_dimension];
    g.kernel_feature_stride = ks[dn.kernel_output_feature_dimension];
    g.output_batch_stride = os[dn.output_batch_dimension];
    g.output_feature_stride = os[dn.output_feature_dimension];
    for (size_t i = 0; i < ns; ++i) {
      g.spatial.push_back({im2col.spatial[i], expected[dn.output_spatial_dimensions[i]],
                           ks[dn.kernel_spatial_dimensions[i]], os[dn.output_spatial_dimensions[i]]});
    }
    g.threads = plan.threads;
    return plan;
  }

  // The dims of the convolution as a dot.
  using K = Im2colDim::Kind;
  std::vector<ConvDim> batch;  // loop dims: group, maybe the batch
  if (groups > 1) {
    ConvDim g{K::kGroup, 0, groups};
    g.input_stride = fgc > 1 ? cg * is[dn.input_feature_dimension]
                             : out_batch * is[dn.input_batch_dimension];
    g.kernel_stride = og * ks[dn.kernel_output_feature_dimension];
    g.output_stride = og * os[dn.output_feature_dimension];
    batch.push_back(g);
  }
  ConvDim b{K::kBatch, 0, out_batch, is[dn.input_batch_dimension], 0,
            os[dn.output_batch_dimension]};
  std::vector<ConvDim> m = {b};
  for (size_t i = 0; i < ns; ++i) {
    m.push_back(ConvDim{K::kOutputSpatial, static_cast<int>(i),
                        expected[dn.output_spatial_dimensions[i]],
                        is[dn.input_spatial_dimensions[i]] * window[i].stride, 0,
                        os[dn.output_spatial_dimensions[i]]});
  }
  m = SortedBy(m, &ConvDim::output_stride);
  bool m_ok = Chains(m, &ConvDim::output_stride);
  if (direct) m_ok = m_ok && Chains(m, &ConvDim::input_stride);
  if (!m_ok) {
    auto it = std::find_if(m.begin(), m.end(), [](const ConvDim& d) { return d.kind == K::kBatch; });
    if (it != m.end()) {
      batch.push_back(*it);
      m.erase(it);
    }
  }
  std::vector<ConvDim> k = {ConvDim{K::kFeature, 0, cg, is[dn.input_feature_dimension],
                                    ks[dn.kernel_input_feature_dimension], 0}};
  for (size_t i = 0; i < ns; ++i) {
    k.push_back(ConvDim{K::kKernelSpatial, static_cast<int>(i), im2col.spatial[i].kernel_size, 0,
                        ks[dn.kernel_spatial_dimensions[i]], 0});
  }
  k = SortedBy(k, &ConvDim::kernel_stride);
  ConvolutionPlan plan;
  bool per_image = false;
  DotProblem p;
  p.lhs_type = input.element_type();
  p.rhs_type = kernel.element_type();
  p.out_type = output.element_type();
  DotDim n_dim{og, 0, ks[dn.kernel_output_feature_dimension], os[dn.output_feature_dimension]};
  p.n.push_back(n_dim);
  if (direct) {
    p.lhs_offset = direct_offset;
    for (const ConvDim& d : batch) p.batch.push_back({d.size, d.input_stride, d.kernel_stride, d.output_stride});
    for (const ConvDim& d : m) p.m.push_back({d.size, d.input_stride, 0, d.output_stride});
    for (const ConvDim& d : k) {
      if (d.kind == K::kFeature) p.k.push_back({d.size, d.input_stride, d.kernel_stride, 0});
    }
  } else {
    plan.uses_im2col = true;
    // Orientation: K minor when the input's features are its most minor
    // dimension among those that vary.
    int64_t min_spatial = INT64_MAX;
    for (size_t i = 0; i < ns; ++i) {
      if (im2col.spatial[i].input_size > 1) {
        min_spatial = std::min(min_spatial, im2col.spatial[i].input_stride);
      }
    }
    const bool k_minor = cg <= 1 || is[dn.input_feature_dimension] < min_spatial;
    std::vector<ConvDim*> order;
    for (ConvDim& d : batch) order.push_back(&d);
    for (ConvDim& d : k_minor ? m : k) order.push_back(&d);
    for (ConvDim& d : k_minor ? k : m) order.push_back(&d);
    int64_t stride = 1;
    for (size_t i = order.size(); i-- > 0;) {
      order[i]->image_stride = stride;
      stride *= order[i]->size;
    }
    im2col.image_elements = stride;
    // A channels-major output keeps the batch out of M (a loop of GEMMs,
    // one per image). Where the whole batch's image would not stay in cache,
    // each image's part is built just before its GEMM instead, in a slab
    // per thread, and read back from cache.
    per_image = batch.size() == 1 && batch[0].kind == K::kBatch && batch[0].size > 1 &&
                stride * im2col.element_bytes > kPerImageMinBytes;
    for (ConvDim* d : order) {
      Im2colDim dim;
      dim.kind = d->kind;
      dim.spatial = d->spatial;
      dim.size = d->size;
      dim.input_stride = d->kind == K::kOutputSpatial || d->kind == K::kKernelSpatial
                             ? 0
                             : d->input_stride;
      im2col.dims.push_back(dim);
    }
    if (!per_image) {
      for (const ConvDim& d : batch) p.batch.push_back({d.size, d.image_stride, d.kernel_stride, d.output_stride});
    }
    for (const ConvDim& d : m) p.m.push_back({d.size, d.image_stride, 0, d.output_stride});
    for (const ConvDim& d : k) p.k.push_back({d.size, d.image_stride, d.kernel_stride, 0});
    const size_t nd = im2col.dims.size();
    if (nd >= 2) {
      const Im2colDim& c = im2col.dims[nd - 1];
      const Im2colDim& kd = im2col.dims[nd - 2];
      if (c.kind == K::kFeature && c.input_stride == 1 && kd.kind == K::kKernelSpatial) {
        const Im2colSpatial& sp = im2col.spatial[kd.spatial];
        im2col.fused_row = sp.window_dilation == 1 && sp.base_dilation == 1 && !sp.reversed &&
                           sp.input_stride == c.size;
      }
    }
    plan.im2col = std::move(im2col);
  }
  XJIT_ASSIGN_OR_RETURN(plan.dot, PlanDotProblem(p));
  // A GEMM with few rows (a channels-major convolution with few output
  // features: C^T = W^T . image per image) runs on the few-row kernels
  // where they are faster than OpenBLAS (small_gemm.h), as dots do.
  plan.dot.small_gemm = true;
  if (plan.dot.kind == DotPlan::Kind::kNothing) {
    plan.uses_im2col = false;
    plan.im2col = Im2colPlan();
  }
  plan.threads = std::max(threads, 1);
  if (per_image && plan.uses_im2col) {
    // Every image makes the same calls on any thread count (the threads
    // take whole images), so the bits do not depend on it.
    plan.images = batch[0].size;
    plan.output_image_bytes = batch[0].output_stride * ByteWidth(output.element_type());
    plan.dot_scratch_offset =
        Align64(plan.im2col.image_elements / plan.images * plan.im2col.element_bytes);
    plan.image_slab_bytes = plan.dot_scratch_offset + Align64(plan.dot.scratch_bytes);
    plan.image_workers = static_cast<int>(std::min<int64_t>(plan.threads, plan.images));
    plan.gemm_scratch_bytes = plan.image_workers * plan.image_slab_bytes;
  } else {
    const int64_t image_bytes =
        plan.uses_im2col ? Align64(plan.im2col.image_elements * plan.im2col.element_bytes) : 0;
    plan.dot_scratch_offset = image_bytes;
    plan.gemm_scratch_bytes = image_bytes + plan.dot.scratch_bytes;
  }
  plan.scratch_bytes = plan.gemm_scratch_bytes;
  if (plan.dot.kind != DotPlan::Kind::kNothing) {
    std::optional<DirectConvolutionPlan> d =
        PlanDirect(input, kernel, output, window, dn, groups, is, ks, os, threads);
    if (d.has_value()) {
      plan.has_direct = true;
      plan.use_direct = DirectIsFaster(*d);
      plan.direct = *d;
      plan.scratch_bytes = std::max(plan.scratch_bytes, d->scratch_bytes);
    }
  }
  PlanDotThreads(plan.dot, plan.images > 0 ? 1 : plan.threads, kConvolutionSplitLimits);
  return plan;
}

}  // namespace

absl::StatusOr<ConvolutionPlan> PlanConvolution(const Shape& input, const Shape& kernel,
                                                const Shape& output, const Window& window,
                                                const ConvolutionDimensionNumbers& dn, int64_t fgc,
                                                int64_t bgc, int threads) {
  XJIT_RETURN_IF_ERROR(internal::CheckPlainArray(input, "convolution input"));
  XJIT_RETURN_IF_ERROR(internal::CheckPlainArray(kernel, "convolution kernel"));
  XJIT_RETURN_IF_ERROR(internal::CheckPlainArray(output, "convolution output"));
  return PlanStrided(input, kernel, output, internal::ElementStrides(input),
                     internal::ElementStrides(kernel), internal::ElementStrides(output), window,
                     dn, fgc, bgc, threads);
}

absl::StatusOr<ConvolutionPlan> PlanConvolution(const Instruction& convolution, int threads) {
  if (convolution.opcode() != Opcode::kConvolution || convolution.operand_count() != 2) {
    return absl::InvalidArgumentError("PlanConvolution needs a convolution with two operands");
  }
  const InstructionAttributes& a = convolution.attrs();
  return PlanConvolution(convolution.operand(0)->shape(), convolution.operand(1)->shape(),
                         convolution.shape(), a.window, a.convolution_dimension_numbers,
                         a.feature_group_count, a.batch_group_count, threads);
}

namespace {

// The plan's dot, split over the threads as PlanDotThreads planned it (the
// caller sets OpenBLAS's threads to plan.dot.blas_threads: BlasThreads()).
void RunGemm(const ConvolutionPlan& plan, const void* lhs, const void* rhs, void* out,
             void* scratch) {
  RunDot(plan.dot, lhs, rhs, out, scratch, plan.threads);
}

// ConvolutionPlan::images: each image's part of the im2col image is built
// in a slab of scratch and multiplied at once; the threads take images one
// at a time, each with a slab of its own.
void RunImageByImage(const ConvolutionPlan& plan, const void* input, const void* kernel,
                     void* output, uint8_t* scratch) {
  auto in = static_cast<const uint8_t*>(input);
  auto out = static_cast<uint8_t*>(output);
  const int64_t runs = Im2colRuns(plan.im2col) / plan.images;
  auto image = [&](int64_t b, uint8_t* slab) {
    RunIm2colRuns(plan.im2col, in, slab, b * runs, (b + 1) * runs, b * runs);
    RunDot(plan.dot, slab, kernel, out + b * plan.output_image_bytes,
           slab + plan.dot_scratch_offset, 1);
  };
  if (plan.image_workers <= 1) {
    for (int64_t b = 0; b < plan.images; ++b) image(b, scratch);
    return;
  }
  std::atomic<int64_t> next{0};
  ThreadPool::Shared().ParallelFor(plan.image_workers, plan.image_workers - 1, [&](int64_t k) {
    uint8_t* slab = scratch + k * plan.image_slab_bytes;
    for (int64_t b; (b = next.fetch_add(1, std::memory_order_relaxed)) < plan.images;) {
      image(b, slab);
    }
  });
}

}  // namespace

void RunConvolution(const ConvolutionPlan& plan, const void* input, const void* kernel,
                    void* output, void* scratch) {
  auto* s = static_cast<uint8_t*>(scratch);
  if (plan.use_col2im) {
    RunCol2imConvolution(plan.col2im, input, kernel, output, scratch);
    return;
  }
  if (plan.phased) {
    if (plan.zero_output) std::memset(output, 0, plan.output_bytes);
    for (const ConvolutionPhase& p : plan.phases) {
      RunConvolution(p.plan, input, static_cast<const uint8_t*>(kernel) + p.kernel_offset,
                     static_cast<uint8_t*>(output) + p.output_offset, scratch);
    }
    return;
  }
  if (plan.use_grouped) {
    RunGroupedConvolution(plan.grouped, input, kernel, output);
    return;
  }
  if (plan.use_direct && plan.has_direct) {
    RunDirectConvolution(plan.direct, static_cast<const float*>(input),
                         static_cast<const float*>(kernel), static_cast<float*>(output), s);
    return;
  }
  if (!plan.uses_im2col) {
    RunGemm(plan, input, kernel, output, s);
    return;
  }
  if (plan.images > 0) {
    RunImageByImage(plan, input, kernel, output, s);
    return;
  }
  RunIm2col(plan.im2col, input, s, plan.threads);
  RunGemm(plan, s, kernel, output, s + plan.dot_scratch_offset);
}

}  // namespace xjit::runtime::blas
