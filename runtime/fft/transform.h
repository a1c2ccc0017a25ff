// runtime/fft: one-dimensional transforms of any length, complex and real.
//
// ComplexPlan: the unscaled DFT of length n (forward: exp(-2 pi i jk / n),
// inverse: exp(+2 pi i jk / n)). Lengths whose prime factors are 2, 3 and 5
// run the Stockham FFT directly (stockham.h); any other length runs
// Bluestein's algorithm: with the chirp c_j = exp(-+ pi i j^2 / n),
//   X_k = c_k sum_j (x_j c_j) conj(c_{k-j}),
// a convolution computed by Stockham FFTs of a smooth length m >= 2n - 1
// (the transformed kernel is part of the plan).
//
// RealPlan: the real-input forward transform of even or odd length n (n
// real values -> the n/2 + 1 non-negative frequencies) and its inverse
// (n/2 + 1 frequencies -> n real values, unscaled, the imaginary parts of
// the zero and, for even n, n/2 frequencies ignored as XLA's IRFFT does).
// Even n runs a complex FFT of n/2 points on the pairs (x_2j, x_2j+1) plus
// an O(n) split; odd n a complex FFT of n points.
//
// Every table is computed in double and rounded once to T. Runs allocate
// nothing: the caller passes scratch of ScratchSize() complex numbers.
#ifndef XJIT_RUNTIME_FFT_TRANSFORM_H_
#define XJIT_RUNTIME_FFT_TRANSFORM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/fft/stockham.h"

namespace xjit::runtime::fft {

template <typename T>
struct ComplexPlan {
  int64_t n = 0;
  bool forward = true;
  bool bluestein = false;
  StockhamPlan<T> direct;  // Smooth n.
  // Bluestein.
  int64_t m = 0;
  StockhamPlan<T> m_forward, m_inverse;
  std::vector<T> chirp;   // n complex.
  std::vector<T> kernel;  // m complex: DFT_m of the wrapped conj(chirp), divided by m.

  // Complex numbers of scratch a run over `inner` interleaved transforms needs.
  int64_t ScratchSize(int64_t inner) const;
  std::string ToString() const;
};

template <typename T>
ComplexPlan<T> MakeComplexPlan(int64_t n, bool forward);

// `inner` interleaved transforms (element j of transform b at j * inner + b)
// from `in` to `out` (n * inner complex each; they must not overlap).
template <typename T>
void RunComplex(const ComplexPlan<T>& plan, const T* in, T* out, int64_t inner, T* scratch);

template <typename T>
struct RealPlan {
  int64_t n = 0;
  bool forward = true;      // Real -> complex.
  ComplexPlan<T> complex;   // n/2 points (even n) or n (odd n).
  std::vector<T> twiddles;  // Even n: exp(-+ 2 pi i k / n), k <= n/4.

  int64_t ScratchSize() const;
  std::string ToString() const;
};

template <typename T>
RealPlan<T> MakeRealPlan(int64_t n, bool forward);

// Forward: n reals at `in` -> n/2 + 1 complex at `out`. Inverse: n/2 + 1
// complex at `in` -> n reals at `out`. `in` and `out` must not overlap.
template <typename T>
void RunReal(const RealPlan<T>& plan, const T* in, T* out, T* scratch);

}  // namespace xjit::runtime::fft

#endif  // XJIT_RUNTIME_FFT_TRANSFORM_H_
