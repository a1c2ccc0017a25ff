// Evaluation of fft: FFT, IFFT, RFFT and IRFFT over the last
// fft_length.size() (1 to 3) dimensions, as a plain O(n^2) DFT along each
// axis in complex<double>, rounded once to the result type.
//   FFT:   X[k] = sum_t x[t] e^{-2 pi i k t / n} along each axis.
//   IFFT:  x[t] = (1/n) sum_k X[k] e^{+2 pi i k t / n} along each axis.
//   RFFT:  FFT of the real input, the last axis cut to n/2 + 1 entries.
//   IRFFT: inverse over the outer axes, then along the last axis the
//          spectrum is extended to n entries by Hermitian symmetry
//          (X[n-k] = conj(X[k])) and the real part of its inverse taken (so
//          the imaginary parts of the DC and Nyquist terms are ignored).
// A signal with a NaN or an infinity anywhere in its input gives NaN in every
// output element (docs/fft.md: one rule for both backends, where the DFT's
// and the FFT's orders of operations would give different patterns).
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <vector>

#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;
using Complex = std::complex<double>;

namespace {

// In-place DFT of `data` (row-major, dimensions `dims`) along `axis`.
void DftAxis(std::vector<Complex>& data, const std::vector<int64_t>& dims, int64_t axis,
             bool inverse) {
  const int64_t n = dims[axis];
  if (n == 0) return;
  int64_t inner = 1;
  for (size_t d = axis + 1; d < dims.size(); ++d) inner *= dims[d];
  const int64_t outer = static_cast<int64_t>(data.size()) / (n * inner);
  const double sign = inverse ? 1.0 : -1.0;
  std::vector<Complex> twiddle(n);
  for (int64_t j = 0; j < n; ++j) {
    double angle = sign * 2.0 * std::numbers::pi * static_cast<double>(j) / static_cast<double>(n);
    twiddle[j] = Complex(std::cos(angle), std::sin(angle));
  }
  std::vector<Complex> line(n);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const int64_t base = o * n * inner + i;
      for (int64_t t = 0; t < n; ++t) line[t] = data[base + t * inner];
      for (int64_t k = 0; k < n; ++k) {
        Complex sum = 0;
        for (int64_t t = 0; t < n; ++t) sum += line[t] * twiddle[(k * t) % n];
        if (inverse) sum /= static_cast<double>(n);
        data[base + k * inner] = sum;
      }
    }
  }
}

}  // namespace

absl::StatusOr<Literal> EvalFft(const Instruction& instruction, Operands operands,
                                const Context& context) {
  if (operands.size() != 1) return internal::OperandError(instruction, "needs 1 operand");
  const Literal& operand = *operands[0];
  const std::vector<int64_t>& fft_length = instruction.attrs().fft_length;
  const FftType fft_type = instruction.attrs().fft_type;
  const Shape& shape = instruction.shape();
  const int64_t rank = operand.shape().rank();
  const int64_t num_axes = static_cast<int64_t>(fft_length.size());
  if (!shape.IsArray() || shape.rank() != rank || num_axes < 1 || num_axes > 3 ||
      num_axes > rank) {
    return internal::OperandError(instruction, "fft_length must name 1 to 3 trailing dimensions");
  }
  const int64_t first_axis = rank - num_axes;
  std::vector<int64_t> in_dims(operand.shape().dimensions().begin(),
                               operand.shape().dimensions().end());
  // The working (full, complex) dimensions: fft_length on the transformed axes.
  std::vector<int64_t> work_dims = in_dims;
  for (int64_t a = 0; a < num_axes; ++a) work_dims[first_axis + a] = fft_length[a];
  std::vector<int64_t> out_dims = work_dims;
  const int64_t last = rank - 1;
  const int64_t n_last = fft_length[num_axes - 1];
  switch (fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (in_dims != work_dims) return internal::OperandError(instruction, "fft_length mismatch");
      break;
    case FftType::kRfft:
      if (in_dims != work_dims) return internal::OperandError(instruction, "fft_length mismatch");
      out_dims[last] = n_last == 0 ? 0 : n_last / 2 + 1;
      break;
    case FftType::kIrfft: {
      std::vector<int64_t> expected = work_dims;
      expected[last] = n_last == 0 ? 0 : n_last / 2 + 1;
      if (in_dims != expected) return internal::OperandError(instruction, "fft_length mismatch");
      break;
    }
  }
  Literal result(internal::WithDims(shape, out_dims));

  // Load into the working array (for IRFFT: the half spectrum, extended below).
  std::vector<Complex> data(internal::ElementCount(work_dims));
  std::vector<int64_t> load_dims = fft_type == FftType::kIrfft ? in_dims : work_dims;
  // Each signal (the transformed dimensions of one batch index) with a NaN
  // or an infinity in its input: docs/fft.md's rule makes its whole output
  // NaN on both backends.
  int64_t signal_points = 1;
  for (int64_t a = first_axis; a < rank; ++a) signal_points *= work_dims[a];
  std::vector<bool> non_finite(
      signal_points == 0 ? 0 : static_cast<size_t>(data.size() / signal_points), false);
  {
    int64_t linear = 0;
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(load_dims, [&](const Index& index) {
      if (fft_type == FftType::kIrfft) {
        // Position in the working array (last axis n_last long).
        linear = 0;
        for (int64_t d = 0; d < rank; ++d) linear = linear * work_dims[d] + index[d];
      }
      const Complex value = internal::ReadComplex(operand, index);
      if (!std::isfinite(value.real()) || !std::isfinite(value.imag())) {
        non_finite[linear / signal_points] = true;
      }
      data[linear++] = value;
      return absl::OkStatus();
    }));
  }

  if (fft_type == FftType::kIrfft) {
    for (int64_t a = first_axis; a < last; ++a) DftAxis(data, work_dims, a, /*inverse=*/true);
    // Hermitian extension of the last axis.
    const int64_t half = in_dims[last];
    for (int64_t base = 0; base < static_cast<int64_t>(data.size()); base += n_last) {
      for (int64_t k = half; k < n_last; ++k) data[base + k] = std::conj(data[base + n_last - k]);
    }
    DftAxis(data, work_dims, last, /*inverse=*/true);
  } else {
    const bool inverse = fft_type == FftType::kIfft;
    for (int64_t a = first_axis; a <= last; ++a) DftAxis(data, work_dims, a, inverse);
  }

  const double nan = std::numeric_limits<double>::quiet_NaN();
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(out_dims, [&](const Index& index) {
    int64_t linear = 0;
    for (int64_t d = 0; d < rank; ++d) linear = linear * work_dims[d] + index[d];
    internal::WriteComplex(result, index,
                           non_finite[linear / signal_points] ? Complex(nan, nan) : data[linear]);
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
