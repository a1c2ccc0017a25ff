// runtime/fft: HLO `fft` (FFT, IFFT, RFFT, IRFFT over the last 1 to 3
// dimensions, batched over the others) over raw buffers, as a library call.
//
// Semantics are XLA's (and the evaluator's, interpreter/fft.cc): FFT is the
// unscaled forward DFT along each transformed axis, IFFT the inverse scaled
// by 1/N (N = the product of fft_length), RFFT the forward DFT of real input
// with the last axis cut to fft_length[-1]/2 + 1 entries, IRFFT the inverse
// of that: outer axes inverted as complex, the last axis extended by
// Hermitian symmetry (so the imaginary parts of its zero and Nyquist
// entries are ignored) and transformed to fft_length[-1] reals, scaled by
// 1/N. c64/f32 compute in float, c128/f64 in double.
//
// Each batch element (one signal: the transformed dimensions) is computed
// on its own: the last axis as a run of contiguous 1-D transforms, each
// outer axis as 1-D transforms of all its columns at once (transform.h),
// passes alternating between the result and a work buffer so that nothing
// is copied in between. Operands and results in other plain layouts are
// copied into and out of dense row-major scratch. Batches are split over
// the executable's threads (the shared ThreadPool), each with its own
// scratch. The plan, with every table, is made at compile time; a run
// allocates nothing.
#ifndef XJIT_RUNTIME_FFT_FFT_H_
#define XJIT_RUNTIME_FFT_FFT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/shape.h"
#include "runtime/fft/transform.h"

namespace xjit::runtime::fft {

// The 1-D plans of one signal, in precision T: `axes[a]` along transformed
// axis a (complex; unused for the last axis of the real forms), `real` the
// last axis of RFFT/IRFFT.
template <typename T>
struct SignalPlan {
  std::vector<ComplexPlan<T>> axes;
  RealPlan<T> real;
};

struct FftPlan {
  FftType type = FftType::kFft;
  bool is_double = false;
  std::vector<int64_t> lengths;   // fft_length.
  std::vector<int64_t> complex_dims;  // Signal dims as complex: lengths, last cut for real forms.
  int64_t batch = 0;
  // Batch dimensions and their strides (elements) in the operand and result.
  std::vector<int64_t> batch_dims, in_batch_strides, out_batch_strides;
  // Signal dimensions and strides (elements) of operand and result.
  std::vector<int64_t> in_dims, in_strides, out_dims, out_strides;
  bool in_dense = true, out_dense = true;  // Row-major without gaps.
  int64_t in_signal_elements = 0, out_signal_elements = 0;
  int64_t in_element_bytes = 0, out_element_bytes = 0;
  SignalPlan<float> f32;
  SignalPlan<double> f64;
  // Scratch of one thread (bytes, 64-aligned regions at these offsets), and
  // the threads a run uses.
  int64_t gather_offset = 0, stage_offset = 0, work0_offset = 0, work1_offset = 0,
          axis_offset = 0, thread_scratch_bytes = 0;
  int threads = 1;
  int64_t scratch_bytes = 0;

  std::string ToString() const;
};

// The plan for `type` with `fft_length` from `operand` to `result` (arrays
// as shape inference gives them, any plain layout); `threads` caps the
// threads a run uses. Unimplemented for shapes it does not handle (tiled or
// padded layouts).
absl::StatusOr<FftPlan> PlanFft(FftType type, absl::Span<const int64_t> fft_length,
                                const Shape& operand, const Shape& result, int threads);

// Runs: buffers = {operand, result}; scratch holds plan.scratch_bytes bytes
// aligned to 64 (null when 0).
void RunFft(const FftPlan& plan, void* const* buffers, void* scratch);

// RunFft as a runtime::LibraryFunction (`plan` is an FftPlan).
void RunFftCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::fft

#endif  // XJIT_RUNTIME_FFT_FFT_H_
