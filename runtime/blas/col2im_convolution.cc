// GEMM + col2im transposed convolution; see col2im_convolution.h.
#include "runtime/blas/col2im_convolution.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::blas {

void PlanCol2imScatter(Col2imPlan& plan) {
  plan.targets.clear();
  for (const Col2imSpatial& s : plan.spatial) {
    std::vector<int64_t> t(s.input_size * s.kernel_size, -1);
    for (int64_t i = 0; i < s.input_size; ++i) {
      for (int64_t k = 0; k < s.kernel_size; ++k) {
        const int64_t tap = s.reversed ? s.kernel_size - 1 - k : k;
        const int64_t p = i * s.base_dilation + s.padding_low - tap * s.window_dilation;
        if (p < 0 || p % s.stride != 0 || p / s.stride >= s.output_size) continue;
        t[i * s.kernel_size + k] = p / s.stride * s.output_stride;
      }
    }
    plan.targets.push_back(std::move(t));
  }
}

std::string Col2imPlan::ToString() const {
  return absl::StrCat("col2im y_bytes=", y_bytes, " threads=", threads, "; ", gemm.ToString());
}

namespace {

// o[c] += row[c] for c < kF when kF > 0 (unrolled, so the compiler's
// straight-line vectoriser makes vector adds of it; a row and its output
// pixel never overlap: Y is scratch), else for c < f with the output's
// feature stride fs.
template <typename T, int kF>
inline void AddRow(T* __restrict o, const T* __restrict row, int64_t f, int64_t fs) {
  if constexpr (kF > 0) {
    for (int c = 0; c < kF; ++c) o[c] += row[c];
  } else if (fs == 1) {
    for (int64_t c = 0; c < f; ++c) o[c] += row[c];
  } else {
    for (int64_t c = 0; c < f; ++c) o[c * fs] += row[c];
  }
}

// Adds the rows of Y for images [first, last) into the output. kF: the
// output features when they are few and contiguous (then known to the
// compiler), else 0. Every output element receives the same additions in
// the same order either way.
template <typename T, int kF>
void Scatter(const Col2imPlan& p, const T* y, T* out, int64_t first, int64_t last) {
  const int ns = static_cast<int>(p.spatial.size());
  int64_t pixels = 1, taps = 1;
  for (const Col2imSpatial& s : p.spatial) {
    pixels *= s.input_size;
    taps *= s.kernel_size;
  }
  const int64_t f = p.features;
  const int64_t fs = p.output_feature_stride;
  int64_t i_index[kMaxLoopDims];
  int64_t k_index[kMaxLoopDims];
  const int64_t* row_targets[kMaxLoopDims];
  for (int64_t b = first; b < last; ++b) {
    const T* row = y + b * pixels * taps * f;
    for (int64_t pixel = 0; pixel < pixels; ++pixel) {
      for (int64_t d = ns - 1, rest = pixel; d >= 0; --d) {
        i_index[d] = rest % p.spatial[d].input_size;
        rest /= p.spatial[d].input_size;
      }
      // Each dimension's targets for this pixel; the taps counted by an
      // odometer (no division per tap: a row is only a few features).
      for (int d = 0; d < ns; ++d) {
        row_targets[d] = p.targets[d].data() + i_index[d] * p.spatial[d].kernel_size;
        k_index[d] = 0;
      }
      for (int64_t tap = 0; tap < taps; ++tap, row += f) {
        int64_t offset = b * p.output_batch_stride;
        bool hit = true;
        for (int d = 0; d < ns; ++d) {
          const int64_t t = row_targets[d][k_index[d]];
          hit = hit && t >= 0;
          offset += t;
        }
        for (int d = ns - 1; d >= 0; --d) {
          if (++k_index[d] < p.spatial[d].kernel_size) break;
          k_index[d] = 0;
        }
        if (!hit) continue;
        AddRow<T, kF>(out + offset, row, f, fs);
      }
    }
  }
}

// Below this many bytes of Y per thread, waking a helper costs more than
// it saves.
constexpr int64_t kScatterBytesPerThread = 256 << 10;

// Scatter with the feature count known at compile time where it is one of
// the few an image decoder's head has (a scalar loop over 8 features was
// half of the scatter's time in the zoo's flax_conv_transpose).
template <typename T>
void ScatterFeatures(const Col2imPlan& p, const T* y, T* out, int64_t first, int64_t last) {
  if (p.output_feature_stride == 1) {
    switch (p.features) {
      case 1: return Scatter<T, 1>(p, y, out, first, last);
      case 2: return Scatter<T, 2>(p, y, out, first, last);
      case 3: return Scatter<T, 3>(p, y, out, first, last);
      case 4: return Scatter<T, 4>(p, y, out, first, last);
      case 8: return Scatter<T, 8>(p, y, out, first, last);
      case 16: return Scatter<T, 16>(p, y, out, first, last);
      default: break;
    }
  }
  Scatter<T, 0>(p, y, out, first, last);
}

template <typename T>
void RunScatter(const Col2imPlan& p, const void* y, void* out) {
  const auto* yt = static_cast<const T*>(y);
  auto* ot = static_cast<T*>(out);
  const int64_t chunks = std::min<int64_t>(
      {static_cast<int64_t>(p.threads), p.batch,
       std::max<int64_t>(1, p.y_bytes / kScatterBytesPerThread)});
  if (chunks <= 1) {
    ScatterFeatures(p, yt, ot, 0, p.batch);
    return;
  }
  // Images write disjoint outputs: no two chunks touch the same element.
  ThreadPool::Shared().ParallelFor(chunks, static_cast<int>(chunks - 1), [&](int64_t k) {
    ScatterFeatures(p, yt, ot, p.batch * k / chunks, p.batch * (k + 1) / chunks);
  });
}

}  // namespace

void RunCol2imConvolution(const Col2imPlan& plan, const void* input, const void* kernel,
                          void* output, void* scratch) {
  auto* s = static_cast<uint8_t*>(scratch);
  RunDot(plan.gemm, input, kernel, s, s + plan.y_bytes, plan.threads);
  std::memset(output, 0, plan.output_bytes);
  if (plan.f64) {
    RunScatter<double>(plan, s, output);
  } else {
    RunScatter<float>(plan, s, output);
  }
}

}  // namespace xjit::runtime::blas
