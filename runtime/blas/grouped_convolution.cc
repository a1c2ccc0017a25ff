// The grouped direct convolution; see grouped_convolution.h.
#include "runtime/blas/grouped_convolution.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "runtime/blas/dot.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::blas {

namespace {

// Adds one tap to an output position: out[g * m + j] += x[g] * w[g * m + j]
// over every group g and multiplier index j (strides from the plan).
template <typename T>
void AddTap(const GroupedConvolutionPlan& p, const T* x, const T* w, T* out) {
  const int64_t groups = p.groups;
  if (p.multiplier == 1 && p.input_feature_stride == 1 && p.kernel_feature_stride == 1 &&
      p.output_feature_stride == 1) {
    for (int64_t g = 0; g < groups; ++g) out[g] += x[g] * w[g];  // Vectorised.
    return;
  }
  const int64_t m = p.multiplier;
  for (int64_t g = 0; g < groups; ++g) {
    const T v = x[g * p.input_feature_stride];
    for (int64_t j = 0; j < m; ++j) {
      out[(g * m + j) * p.output_feature_stride] += v * w[(g * m + j) * p.kernel_feature_stride];
    }
  }
}

// Output positions of one work item: batch index b, outermost output
// spatial index s0 (0 without spatial dimensions), every index of the
// others.
template <typename T>
void RunItem(const GroupedConvolutionPlan& p, const T* input, const T* kernel, T* output,
             int64_t b, int64_t s0) {
  const int ns = static_cast<int>(p.spatial.size());
  const int64_t features = p.groups * p.multiplier;
  int64_t o[kMaxLoopDims] = {}, k[kMaxLoopDims];  // Output and kernel spatial indices.
  if (ns > 0) o[0] = s0;
  for (;;) {
    T* out = output + b * p.output_batch_stride;
    for (int i = 0; i < ns; ++i) out += o[i] * p.spatial[i].output_stride;
    for (int64_t f = 0; f < features; ++f) out[f * p.output_feature_stride] = T(0);
    bool taps = true;
    for (int i = 0; i < ns; ++i) taps = taps && p.spatial[i].window.kernel_size > 0;
    std::fill(k, k + ns, 0);
    while (taps) {
      const T* x = input + b * p.input_batch_stride;
      const T* w = kernel;
      bool inside = true;
      for (int i = 0; i < ns && inside; ++i) {
        const Im2colSpatial& sp = p.spatial[i].window;
        const int64_t at =
            InputIndex(sp, o[i] * sp.stride + KernelOffset(sp, k[i]) - sp.padding_low);
        if (at < 0) {
          inside = false;
          break;
        }
        x += at * sp.input_stride;
        w += k[i] * p.spatial[i].kernel_stride;
      }
      if (inside) AddTap(p, x, w, out);
      int i = ns - 1;
      for (; i >= 0; --i) {
        if (++k[i] < p.spatial[i].window.kernel_size) break;
        k[i] = 0;
      }
      if (i < 0) break;
    }
    int i = ns - 1;
    for (; i >= 1; --i) {  // Dimension 0 is the work item's.
      if (++o[i] < p.spatial[i].output_size) break;
      o[i] = 0;
    }
    if (i < 1) return;
  }
}

template <typename T>
void RunAs(const GroupedConvolutionPlan& p, const T* input, const T* kernel, T* output) {
  const int64_t outer = p.spatial.empty() ? 1 : p.spatial[0].output_size;
  for (const GroupedSpatial& s : p.spatial) {
    if (s.output_size == 0) return;
  }
  const int64_t items = p.batch * outer;
  if (items == 0) return;
  const auto run = [&](int64_t first, int64_t last) {
    for (int64_t item = first; item < last; ++item) {
      RunItem(p, input, kernel, output, item / outer, item % outer);
    }
  };
  if (p.threads <= 1 || items == 1) {
    run(0, items);
    return;
  }
  // About 8 chunks a thread, so that a thread that starts late or shares
  // its core takes fewer.
  const int64_t chunks = std::min<int64_t>(items, int64_t{8} * p.threads);
  ThreadPool::Shared().ParallelFor(chunks, p.threads - 1, [&](int64_t c) {
    run(items * c / chunks, items * (c + 1) / chunks);
  });
}

}  // namespace

std::string GroupedConvolutionPlan::ToString() const {
  return absl::StrCat("grouped direct ", f64 ? "f64" : "f32", " batch=", batch,
                      " groups=", groups, " multiplier=", multiplier,
                      " spatial=", spatial.size(), " threads=", threads);
}

void RunGroupedConvolution(const GroupedConvolutionPlan& plan, const void* input,
                           const void* kernel, void* output) {
  if (plan.f64) {
    RunAs(plan, static_cast<const double*>(input), static_cast<const double*>(kernel),
          static_cast<double*>(output));
  } else {
    RunAs(plan, static_cast<const float*>(input), static_cast<const float*>(kernel),
          static_cast<float*>(output));
  }
}

}  // namespace xjit::runtime::blas
