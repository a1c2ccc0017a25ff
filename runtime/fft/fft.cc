// HLO fft over raw buffers (see fft.h).
#include "runtime/fft/fft.h"

#include <algorithm>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/element_type.h"
#include "ir/layout_util.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::fft {
namespace {

// Below this many complex points in all, a run stays on the calling thread.
constexpr int64_t kParallelMinPoints = int64_t{1} << 14;

int64_t AlignUp(int64_t n) { return (n + 63) / 64 * 64; }

int64_t Product(absl::Span<const int64_t> values) {
  int64_t product = 1;
  for (int64_t v : values) product *= v;
  return product;
}

bool IsPlainArray(const Shape& shape) {
  return shape.IsArray() && IsPlainLayout(shape) && ByteWidth(shape.element_type()) > 0 &&
         ByteSize(shape) == PhysicalElementCount(shape) * ByteWidth(shape.element_type());
}

bool IsRowMajor(absl::Span<const int64_t> dims, absl::Span<const int64_t> strides) {
  int64_t expected = 1;
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (dims[d] > 1 && strides[d] != expected) return false;
    expected *= dims[d];
  }
  return true;
}

// Copies the elements of an array of `dims` between a strided layout and
// dense row-major order (`to_dense`: strided -> dense).
void CopyStrided(absl::Span<const int64_t> dims, absl::Span<const int64_t> strides,
                 int64_t element_bytes, bool to_dense, const uint8_t* from, uint8_t* to) {
  const int64_t count = Product(dims);
  const int64_t rank = static_cast<int64_t>(dims.size());
  int64_t index[3] = {0, 0, 0};
  int64_t offset = 0;
  for (int64_t linear = 0; linear < count; ++linear) {
    if (to_dense) {
      std::memcpy(to + linear * element_bytes, from + offset * element_bytes, element_bytes);
    } else {
      std::memcpy(to + offset * element_bytes, from + linear * element_bytes, element_bytes);
    }
    for (int64_t d = rank - 1; d >= 0; --d) {
      offset += strides[d];
      if (++index[d] < dims[d]) break;
      offset -= strides[d] * dims[d];
      index[d] = 0;
    }
  }
}

// One complex pass along axis `a` of the dense signal `dims` (complex).
template <typename T>
void AxisPass(const ComplexPlan<T>& plan, absl::Span<const int64_t> dims, int64_t a,
              const T* src, T* dst, T* scratch) {
  const int64_t n = dims[a];
  const int64_t inner = Product(dims.subspan(a + 1));
  const int64_t outer = Product(dims.subspan(0, a));
  for (int64_t o = 0; o < outer; ++o) {
    RunComplex(plan, src + 2 * o * n * inner, dst + 2 * o * n * inner, inner, scratch);
  }
}

// One signal: `in` and `out` are dense (row-major) or staged by the caller.
template <typename T>
void RunSignal(const FftPlan& plan, const SignalPlan<T>& signal, const T* in, T* out,
               uint8_t* scratch) {
  const std::vector<int64_t>& dims = plan.complex_dims;
  const int64_t k = static_cast<int64_t>(dims.size());
  const int64_t points = Product(dims);
  T* work0 = reinterpret_cast<T*>(scratch + plan.work0_offset);
  T* work1 = reinterpret_cast<T*>(scratch + plan.work1_offset);
  T* axis_scratch = reinterpret_cast<T*>(scratch + plan.axis_offset);
  const int64_t n_last = plan.lengths.back();
  const int64_t h = dims.back();
  // Pass i of P writes the result if P - 1 - i is even, else work0, so that
  // consecutive passes never read and write one buffer.
  auto pass_dst = [&](int64_t i, int64_t passes) { return (passes - 1 - i) % 2 == 0 ? out : work0; };
  switch (plan.type) {
    case FftType::kFft:
    case FftType::kIfft: {
      const T* src = in;
      for (int64_t i = 0; i < k; ++i) {
        T* dst = pass_dst(i, k);
        AxisPass(signal.axes[k - 1 - i], absl::MakeConstSpan(dims), k - 1 - i, src, dst,
                 axis_scratch);
        src = dst;
      }
      if (plan.type == FftType::kIfft) {
        const T scale = static_cast<T>(1.0 / static_cast<double>(Product(plan.lengths)));
        for (int64_t j = 0; j < 2 * points; ++j) out[j] *= scale;
      }
      return;
    }
    case FftType::kRfft: {
      T* dst = pass_dst(0, k);
      const int64_t rows = points / h;
      for (int64_t r = 0; r < rows; ++r) {
        RunReal(signal.real, in + r * n_last, dst + 2 * r * h, axis_scratch);
      }
      const T* src = dst;
      for (int64_t i = 1; i < k; ++i) {
        dst = pass_dst(i, k);
        AxisPass(signal.axes[k - 1 - i], absl::MakeConstSpan(dims), k - 1 - i, src, dst,
                 axis_scratch);
        src = dst;
      }
      return;
    }
    case FftType::kIrfft: {
      const T* src = in;
      for (int64_t i = 0; i + 1 < k; ++i) {
        T* dst = i % 2 == 0 ? work0 : work1;
        AxisPass(signal.axes[k - 2 - i], absl::MakeConstSpan(dims), k - 2 - i, src, dst,
                 axis_scratch);
        src = dst;
      }
      const int64_t rows = points / h;
      for (int64_t r = 0; r < rows; ++r) {
        RunReal(signal.real, src + 2 * r * h, out + r * n_last, axis_scratch);
      }
      const int64_t reals = rows * n_last;
      const T scale = static_cast<T>(1.0 / static_cast<double>(Product(plan.lengths)));
      for (int64_t j = 0; j < reals; ++j) out[j] *= scale;
      return;
    }
  }
}

// Whether none of `n` values is a NaN or an infinity (x - x is 0 exactly
// for finite x, NaN otherwise; the loop vectorises).
template <typename T>
bool AllFinite(const T* values, int64_t n) {
  T acc = 0;
  for (int64_t i = 0; i < n; ++i) acc += values[i] - values[i];
  return acc == 0;
}

// Batches [begin, end) with one thread's scratch.
template <typename T>
void RunBatches(const FftPlan& plan, const SignalPlan<T>& signal, const uint8_t* in,
                uint8_t* out, uint8_t* scratch, int64_t begin, int64_t end) {
  const int64_t batch_rank = static_cast<int64_t>(plan.batch_dims.size());
  for (int64_t b = begin; b < end; ++b) {
    int64_t in_offset = 0, out_offset = 0, rest = b;
    for (int64_t d = batch_rank - 1; d >= 0; --d) {
      const int64_t i = rest % plan.batch_dims[d];
      rest /= plan.batch_dims[d];
      in_offset += i * plan.in_batch_strides[d];
      out_offset += i * plan.out_batch_strides[d];
    }
    const uint8_t* signal_in = in + in_offset * plan.in_element_bytes;
    uint8_t* signal_out = out + out_offset * plan.out_element_bytes;
    if (!plan.in_dense) {
      CopyStrided(plan.in_dims, plan.in_strides, plan.in_element_bytes, /*to_dense=*/true,
                  signal_in, scratch + plan.gather_offset);
      signal_in = scratch + plan.gather_offset;
    }
    uint8_t* dense_out = plan.out_dense ? signal_out : scratch + plan.stage_offset;
    const int64_t in_scalars = plan.in_signal_elements * (plan.in_element_bytes / sizeof(T));
    if (AllFinite(reinterpret_cast<const T*>(signal_in), in_scalars)) {
      RunSignal(plan, signal, reinterpret_cast<const T*>(signal_in),
                reinterpret_cast<T*>(dense_out), scratch);
    } else {
      // docs/fft.md: a signal with a NaN or an infinity gives NaN throughout.
      std::fill_n(reinterpret_cast<T*>(dense_out),
                  plan.out_signal_elements * (plan.out_element_bytes / sizeof(T)),
                  std::numeric_limits<T>::quiet_NaN());
    }
    if (!plan.out_dense) {
      CopyStrided(plan.out_dims, plan.out_strides, plan.out_element_bytes, /*to_dense=*/false,
                  dense_out, signal_out);
    }
  }
}

template <typename T>
int64_t AxisScratch(const FftPlan& plan, const SignalPlan<T>& signal) {
  const int64_t k = static_cast<int64_t>(plan.lengths.size());
  const bool real = plan.type == FftType::kRfft || plan.type == FftType::kIrfft;
  int64_t most = real ? signal.real.ScratchSize() : 0;
  for (int64_t a = 0; a < k; ++a) {
    if (real && a == k - 1) continue;
    const int64_t inner = Product(absl::MakeConstSpan(plan.complex_dims).subspan(a + 1));
    most = std::max(most, signal.axes[a].ScratchSize(inner));
  }
  return most * 2 * static_cast<int64_t>(sizeof(T));
}

template <typename T>
void MakeSignalPlan(FftPlan& plan, SignalPlan<T>& signal) {
  const int64_t k = static_cast<int64_t>(plan.lengths.size());
  const bool forward = plan.type == FftType::kFft || plan.type == FftType::kRfft;
  const bool real = plan.type == FftType::kRfft || plan.type == FftType::kIrfft;
  for (int64_t a = 0; a < k; ++a) {
    if (real && a == k - 1) {
      signal.axes.emplace_back();
      signal.real = MakeRealPlan<T>(plan.lengths[a], forward);
    } else {
      signal.axes.push_back(MakeComplexPlan<T>(plan.lengths[a], forward));
    }
  }
}

}  // namespace

std::string FftPlan::ToString() const {
  std::vector<std::string> axes;
  const bool real = type == FftType::kRfft || type == FftType::kIrfft;
  for (size_t a = 0; a < lengths.size(); ++a) {
    if (real && a + 1 == lengths.size()) {
      axes.push_back(is_double ? f64.real.ToString() : f32.real.ToString());
    } else if (a < (is_double ? f64.axes.size() : f32.axes.size())) {
      axes.push_back(is_double ? f64.axes[a].ToString() : f32.axes[a].ToString());
    }
  }
  return absl::StrCat(FftTypeName(type), " ", is_double ? "f64" : "f32", " batch=", batch,
                      " axes=[", absl::StrJoin(axes, ", "), "]", in_dense ? "" : " gather",
                      out_dense ? "" : " scatter", " threads=", threads,
                      " scratch=", scratch_bytes);
}

absl::StatusOr<FftPlan> PlanFft(FftType type, absl::Span<const int64_t> fft_length,
                                const Shape& operand, const Shape& result, int threads) {
  if (!IsPlainArray(operand) || !IsPlainArray(result)) {
    return absl::UnimplementedError("fft: operand or result is not a plain array");
  }
  const int64_t k = static_cast<int64_t>(fft_length.size());
  const int64_t rank = operand.rank();
  if (k < 1 || k > 3 || k > rank || result.rank() != rank) {
    return absl::InvalidArgumentError("fft: fft_length must name 1 to 3 trailing dimensions");
  }
  const ElementType in_type = operand.element_type(), out_type = result.element_type();
  bool types_ok = false;
  bool is_double = false;
  switch (type) {
    case FftType::kFft:
    case FftType::kIfft:
      types_ok = in_type == out_type &&
                 (in_type == ElementType::kC64 || in_type == ElementType::kC128);
      is_double = in_type == ElementType::kC128;
      break;
    case FftType::kRfft:
      types_ok = (in_type == ElementType::kF32 && out_type == ElementType::kC64) ||
                 (in_type == ElementType::kF64 && out_type == ElementType::kC128);
      is_double = in_type == ElementType::kF64;
      break;
    case FftType::kIrfft:
      types_ok = (in_type == ElementType::kC64 && out_type == ElementType::kF32) ||
                 (in_type == ElementType::kC128 && out_type == ElementType::kF64);
      is_double = in_type == ElementType::kC128;
      break;
  }
  if (!types_ok) {
    return absl::InvalidArgumentError(absl::StrCat("fft: ", FftTypeName(type), " from ",
                                                   ElementTypeName(in_type), " to ",
                                                   ElementTypeName(out_type)));
  }
  FftPlan plan;
  plan.type = type;
  plan.is_double = is_double;
  plan.lengths.assign(fft_length.begin(), fft_length.end());
  for (int64_t n : plan.lengths) {
    if (n < 0) return absl::InvalidArgumentError("fft: negative fft_length");
  }
  const bool real = type == FftType::kRfft || type == FftType::kIrfft;
  const int64_t n_last = plan.lengths.back();
  const int64_t h = n_last == 0 ? 0 : n_last / 2 + 1;
  plan.complex_dims = plan.lengths;
  if (real) plan.complex_dims.back() = h;
  std::vector<int64_t> expected_in = plan.lengths, expected_out = plan.lengths;
  if (type == FftType::kRfft) expected_out.back() = h;
  if (type == FftType::kIrfft) expected_in.back() = h;
  const int64_t first = rank - k;
  for (int64_t d = 0; d < rank; ++d) {
    const bool batch_dim = d < first;
    if (batch_dim && operand.dimensions(d) != result.dimensions(d)) {
      return absl::InvalidArgumentError("fft: operand and result batch dimensions differ");
    }
    if (!batch_dim && (operand.dimensions(d) != expected_in[d - first] ||
                       result.dimensions(d) != expected_out[d - first])) {
      return absl::InvalidArgumentError("fft: dimensions do not match fft_length");
    }
  }
  const std::vector<int64_t> in_strides = PlainStrides(operand);
  const std::vector<int64_t> out_strides = PlainStrides(result);
  plan.batch = 1;
  for (int64_t d = 0; d < first; ++d) {
    plan.batch_dims.push_back(operand.dimensions(d));
    plan.in_batch_strides.push_back(in_strides[d]);
    plan.out_batch_strides.push_back(out_strides[d]);
    plan.batch *= operand.dimensions(d);
  }
  for (int64_t d = first; d < rank; ++d) {
    plan.in_dims.push_back(operand.dimensions(d));
    plan.in_strides.push_back(in_strides[d]);
    plan.out_dims.push_back(result.dimensions(d));
    plan.out_strides.push_back(out_strides[d]);
  }
  plan.in_dense = IsRowMajor(plan.in_dims, plan.in_strides);
  plan.out_dense = IsRowMajor(plan.out_dims, plan.out_strides);
  plan.in_signal_elements = Product(plan.in_dims);
  plan.out_signal_elements = Product(plan.out_dims);
  plan.in_element_bytes = ByteWidth(in_type);
  plan.out_element_bytes = ByteWidth(out_type);
  const int64_t points = Product(plan.complex_dims);
  if (plan.batch == 0 || points == 0 || Product(plan.lengths) == 0) {
    plan.batch = 0;  // Nothing to compute: the result is empty.
    return plan;
  }
  const int64_t real_bytes = is_double ? 8 : 4;
  int64_t offset = 0;
  auto reserve = [&](int64_t bytes) {
    const int64_t at = offset;
    offset = AlignUp(offset + bytes);
    return at;
  };
  plan.gather_offset = reserve(plan.in_dense ? 0 : plan.in_signal_elements * plan.in_element_bytes);
  plan.stage_offset =
      reserve(plan.out_dense ? 0 : plan.out_signal_elements * plan.out_element_bytes);
  plan.work0_offset = reserve(k >= 2 ? points * 2 * real_bytes : 0);
  plan.work1_offset = reserve(k == 3 && type == FftType::kIrfft ? points * 2 * real_bytes : 0);
  if (is_double) {
    MakeSignalPlan(plan, plan.f64);
    plan.axis_offset = reserve(AxisScratch(plan, plan.f64));
  } else {
    MakeSignalPlan(plan, plan.f32);
    plan.axis_offset = reserve(AxisScratch(plan, plan.f32));
  }
  plan.thread_scratch_bytes = offset;
  plan.threads = 1;
  if (plan.batch >= 2 && plan.batch * points >= kParallelMinPoints) {
    plan.threads = static_cast<int>(std::min<int64_t>(std::max(threads, 1), plan.batch));
  }
  plan.scratch_bytes = plan.threads * plan.thread_scratch_bytes;
  return plan;
}

void RunFft(const FftPlan& plan, void* const* buffers, void* scratch) {
  if (plan.batch == 0) return;
  const uint8_t* in = static_cast<const uint8_t*>(buffers[0]);
  uint8_t* out = static_cast<uint8_t*>(buffers[1]);
  uint8_t* base = static_cast<uint8_t*>(scratch);
  auto run = [&](int64_t chunk, int64_t chunks) {
    const int64_t begin = plan.batch * chunk / chunks;
    const int64_t end = plan.batch * (chunk + 1) / chunks;
    uint8_t* mine = base + chunk * plan.thread_scratch_bytes;
    if (plan.is_double) {
      RunBatches(plan, plan.f64, in, out, mine, begin, end);
    } else {
      RunBatches(plan, plan.f32, in, out, mine, begin, end);
    }
  };
  if (plan.threads <= 1) return run(0, 1);
  ThreadPool::Shared().ParallelFor(plan.threads, plan.threads - 1,
                                   [&](int64_t chunk) { run(chunk, plan.threads); });
}

void RunFftCall(const void* plan, void* const* buffers, void* scratch) {
  RunFft(*static_cast<const FftPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::fft
