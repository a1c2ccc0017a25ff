// runtime/fft's 1-D transforms against a direct DFT in long double, within
// the error bound docs/fft.md states:
//   max_k |y_k - y_ref_k| <= c * L * eps * ||y_ref||_2
// with eps the precision's unit roundoff (2^-24 for float, 2^-53 for
// double), L = ceil(log2 N) + 1 for the Stockham lengths (N points) and
// 3 (ceil(log2 M) + 1) + 2 for Bluestein (three FFTs of M points and two
// chirp products), and c = kBoundConstant.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <numbers>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "runtime/fft/stockham.h"
#include "runtime/fft/transform.h"

namespace xjit::runtime::fft {
namespace {

using LComplex = std::complex<long double>;
constexpr double kBoundConstant = 2.0;

// The direct DFT (forward: exp(-2 pi i jk/n)), unscaled, in long double.
std::vector<LComplex> Dft(const std::vector<LComplex>& x, bool forward) {
  const int64_t n = static_cast<int64_t>(x.size());
  std::vector<LComplex> w(n), y(n);
  const long double pi = std::numbers::pi_v<long double>;
  for (int64_t j = 0; j < n; ++j) {
    const long double angle = 2 * pi * static_cast<long double>(j) / static_cast<long double>(n);
    w[j] = LComplex(std::cos(angle), forward ? -std::sin(angle) : std::sin(angle));
  }
  for (int64_t k = 0; k < n; ++k) {
    LComplex sum = 0;
    for (int64_t j = 0; j < n; ++j) sum += x[j] * w[(j * k) % n];
    y[k] = sum;
  }
  return y;
}

// ceil(log2 n) + 1 (1 for n <= 1).
double Log2Terms(int64_t n) {
  double l = 1;
  for (int64_t p = 1; p < n; p *= 2) ++l;
  return l;
}

template <typename T>
double Epsilon() {
  return std::numeric_limits<T>::epsilon() / 2;
}

template <typename T>
double BoundTerms(const ComplexPlan<T>& plan) {
  return plan.bluestein ? 3 * Log2Terms(plan.m) + 2 : Log2Terms(plan.n);
}

// max |got - want| / (||want||_2 * eps * terms): must be <= kBoundConstant.
template <typename T>
double ErrorRatio(const std::vector<T>& got, const std::vector<LComplex>& want, double terms,
                  bool real_output) {
  long double norm = 0, worst = 0;
  for (size_t k = 0; k < want.size(); ++k) {
    norm += std::norm(want[k]);
    const LComplex value = real_output ? LComplex(got[k], 0) : LComplex(got[2 * k], got[2 * k + 1]);
    worst = std::max(worst, std::abs(value - want[k]));
  }
  norm = std::sqrt(norm);
  if (norm == 0) return worst == 0 ? 0 : std::numeric_limits<double>::infinity();
  return static_cast<double>(worst / norm) / (Epsilon<T>() * terms);
}

std::vector<LComplex> RandomComplex(int64_t n, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<LComplex> x(n);
  for (auto& v : x) v = LComplex(uniform(rng), uniform(rng));
  return x;
}

const int64_t kLengths[] = {1, 2, 3, 5, 7, 8, 12, 16, 60, 97, 128, 1000, 1009, 1024, 4096};

template <typename T>
void CheckComplex(int64_t n, bool forward, int64_t inner) {
  std::mt19937_64 rng(n * 31 + inner);
  const ComplexPlan<T> plan = MakeComplexPlan<T>(n, forward);
  std::vector<std::vector<LComplex>> signals;
  std::vector<T> in(2 * n * inner), out(2 * n * inner, T(7)), scratch(2 * plan.ScratchSize(inner));
  for (int64_t b = 0; b < inner; ++b) {
    signals.push_back(RandomComplex(n, rng));
    for (int64_t j = 0; j < n; ++j) {
      // The rounded input is what the reference transforms.
      in[2 * (j * inner + b)] = static_cast<T>(signals[b][j].real());
      in[2 * (j * inner + b) + 1] = static_cast<T>(signals[b][j].imag());
      signals[b][j] = LComplex(in[2 * (j * inner + b)], in[2 * (j * inner + b) + 1]);
    }
  }
  RunComplex(plan, in.data(), out.data(), inner, scratch.data());
  for (int64_t b = 0; b < inner; ++b) {
    const std::vector<LComplex> want = Dft(signals[b], forward);
    std::vector<T> got(2 * n);
    for (int64_t j = 0; j < n; ++j) {
      got[2 * j] = out[2 * (j * inner + b)];
      got[2 * j + 1] = out[2 * (j * inner + b) + 1];
    }
    const double ratio = ErrorRatio(got, want, BoundTerms(plan), false);
    EXPECT_LE(ratio, kBoundConstant) << "n=" << n << " forward=" << forward << " inner=" << inner
                                     << " transform " << b << " plan " << plan.ToString();
  }
}

// Each test runs with the kernels the CPU gets and with the baseline copy
// (the one AArch64 runs; on x86-64 an AVX2 copy is chosen when available).
class FftRuntime : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override { UseBaselineKernels(GetParam()); }
  void TearDown() override { UseBaselineKernels(false); }
};

INSTANTIATE_TEST_SUITE_P(Kernels, FftRuntime, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "baseline" : "host";
                         });

TEST_P(FftRuntime, ComplexFloat) {
  for (int64_t n : kLengths) {
    for (bool forward : {true, false}) CheckComplex<float>(n, forward, 1);
  }
}

TEST_P(FftRuntime, ComplexDouble) {
  for (int64_t n : kLengths) {
    for (bool forward : {true, false}) CheckComplex<double>(n, forward, 1);
  }
}

// Interleaved transforms (the outer axes of a multi-dimensional transform),
// Stockham and Bluestein.
TEST_P(FftRuntime, Interleaved) {
  for (int64_t n : {2, 3, 7, 12, 60, 97, 128}) {
    for (int64_t inner : {2, 3, 5, 8}) {
      CheckComplex<float>(n, true, inner);
      CheckComplex<double>(n, false, inner);
    }
  }
}

template <typename T>
void CheckReal(int64_t n) {
  std::mt19937_64 rng(n);
  std::uniform_real_distribution<double> uniform(-1, 1);
  const int64_t h = n / 2 + 1;
  // Forward: n reals -> h complex.
  {
    const RealPlan<T> plan = MakeRealPlan<T>(n, true);
    std::vector<T> in(n), out(2 * h, T(7)), scratch(2 * plan.ScratchSize());
    std::vector<LComplex> x(n);
    for (int64_t j = 0; j < n; ++j) {
      in[j] = static_cast<T>(uniform(rng));
      x[j] = in[j];
    }
    RunReal(plan, in.data(), out.data(), scratch.data());
    std::vector<LComplex> want = Dft(x, true);
    want.resize(h);
    const double ratio = ErrorRatio(out, want, BoundTerms(plan.complex) + 2, false);
    EXPECT_LE(ratio, kBoundConstant) << "rfft n=" << n << " plan " << plan.ToString();
  }
  // Inverse: h complex (imaginary parts of X_0 and X_{n/2} set, and
  // ignored) -> n reals, the real part of the inverse DFT of the Hermitian
  // extension.
  {
    const RealPlan<T> plan = MakeRealPlan<T>(n, false);
    std::vector<T> in(2 * h), out(n, T(7)), scratch(2 * plan.ScratchSize());
    for (T& v : in) v = static_cast<T>(uniform(rng));
    std::vector<LComplex> full(n);
    for (int64_t k = 0; k < h; ++k) full[k] = LComplex(in[2 * k], in[2 * k + 1]);
    for (int64_t k = h; k < n; ++k) full[k] = std::conj(full[n - k]);
    RunReal(plan, in.data(), out.data(), scratch.data());
    std::vector<LComplex> want = Dft(full, false);
    for (LComplex& v : want) v = LComplex(v.real(), 0);
    const double ratio = ErrorRatio(out, want, BoundTerms(plan.complex) + 2, true);
    EXPECT_LE(ratio, kBoundConstant) << "irfft n=" << n << " plan " << plan.ToString();
  }
}

TEST_P(FftRuntime, Real) {
  for (int64_t n : kLengths) {
    CheckReal<float>(n);
    CheckReal<double>(n);
  }
}

// The bound is not vacuous: a transform with one twiddle factor of its
// second pass off by 1e-3 fails it.
TEST_P(FftRuntime, BoundDetectsAWrongTwiddle) {
  ComplexPlan<float> plan = MakeComplexPlan<float>(512, true);
  ASSERT_FALSE(plan.bluestein);
  ASSERT_GE(plan.direct.stages.size(), 2u);
  const StockhamStage& second = plan.direct.stages[1];
  plan.direct.twiddles[second.twiddle_offset + 4 * second.radix] += 1e-3f;  // q = 1, t = 2.
  std::mt19937_64 rng(5);
  std::vector<LComplex> x = RandomComplex(512, rng);
  std::vector<float> in(1024), out(1024), scratch(2 * plan.ScratchSize(1));
  for (int j = 0; j < 512; ++j) {
    in[2 * j] = static_cast<float>(x[j].real());
    in[2 * j + 1] = static_cast<float>(x[j].imag());
    x[j] = LComplex(in[2 * j], in[2 * j + 1]);
  }
  RunComplex(plan, in.data(), out.data(), 1, scratch.data());
  EXPECT_GT(ErrorRatio(out, Dft(x, true), BoundTerms(plan), false), kBoundConstant);
}

TEST(FftPlan, Smooth) {
  EXPECT_TRUE(IsSmooth(1));
  EXPECT_TRUE(IsSmooth(2 * 3 * 5 * 4));
  EXPECT_FALSE(IsSmooth(7));
  EXPECT_FALSE(IsSmooth(0));
  EXPECT_FALSE(IsSmooth(1009));
}

}  // namespace
}  // namespace xjit::runtime::fft
