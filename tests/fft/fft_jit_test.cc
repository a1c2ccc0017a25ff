// The compiled HLO fft (a library-call step into runtime/fft) against the
// evaluator: every form (FFT, IFFT, RFFT, IRFFT), 1 to 3 dimensions, c64
// and c128 (f32/f64 for the real side), batched, empty, in other layouts and
// on several threads. Each signal (one batch element) must be within the
// bound of docs/fft.md:
//   max |y - y_eval| <= c * L * eps * ||y_eval||_2   (c = 2)
// with eps the result precision's unit roundoff and L the sum over the
// transformed axes of ceil(log2 n) + 1 (Stockham lengths) or
// 3 (ceil(log2 M) + 1) + 2 (Bluestein with convolution length M), plus 2
// for the real-to-complex split of the real forms. Every compile must have
// no interpreted step and one "fft" library call.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "jit/compile.h"
#include "runtime/fft/fft.h"
#include "runtime/fft/transform.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit {
namespace {

using testing::ParseVerified;

constexpr double kBoundConstant = 2.0;

double Log2Terms(int64_t n) {
  double l = 1;
  for (int64_t p = 1; p < n; p *= 2) ++l;
  return l;
}

double AxisTerms(int64_t n) {
  const runtime::fft::ComplexPlan<double> plan = runtime::fft::MakeComplexPlan<double>(n, true);
  return plan.bluestein ? 3 * Log2Terms(plan.m) + 2 : Log2Terms(n);
}

int64_t ElementCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape.dimensions()) count *= d;
  return count;
}

// Uniform values in [-1, 1) (edge values would make the norm meaningless).
Literal UniformLiteral(const Shape& shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> uniform(-1, 1);
  Literal literal(shape);
  std::vector<int64_t> index(shape.rank(), 0);
  if (ElementCount(shape) == 0) return literal;
  do {
    if (IsComplex(shape.element_type())) {
      literal.SetComplex(index, std::complex<double>(uniform(rng), uniform(rng)));
    } else {
      literal.SetDouble(index, uniform(rng));
    }
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return literal;
}

struct Options {
  int threads = 1;
};

// Compiles and runs `hlo` (one fft of p0, fft_length `lengths`), checks the
// report and the bound for every signal.
void Check(const std::string& hlo, const std::vector<int64_t>& lengths, bool real_form,
           const Options& options = {}) {
  SCOPED_TRACE(hlo);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(static_cast<uint64_t>(hlo.size()));
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(UniformLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  CompileOptions compile_options;
  compile_options.threads = options.threads;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, compile_options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.interpreted_steps.empty())
      << absl::StrJoin(report.interpreted_steps, "\n");
  int fft_calls = 0;
  for (const LibraryCallInfo& call : report.library_calls) fft_calls += call.routine == "fft";
  const Shape& shape = expected->shape();
  if (ElementCount(shape) > 0) {
    EXPECT_EQ(fft_calls, 1);
  }
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(actual->shape().dimensions(), shape.dimensions());
  if (ElementCount(shape) == 0) return;

  double terms = real_form ? 2 : 0;
  for (int64_t n : lengths) terms += AxisTerms(n);
  const double eps = (shape.element_type() == ElementType::kC64 ||
                      shape.element_type() == ElementType::kF32)
                         ? std::numeric_limits<float>::epsilon() / 2
                         : std::numeric_limits<double>::epsilon() / 2;
  int64_t signal = 1;
  for (size_t a = 0; a < lengths.size(); ++a) {
    signal *= shape.dimensions(shape.rank() - 1 - static_cast<int64_t>(a));
  }
  const int64_t batches = ElementCount(shape) / signal;
  std::vector<double> norm(batches, 0), worst(batches, 0);
  std::vector<int64_t> index(shape.rank(), 0);
  int64_t linear = 0;
  do {
    const int64_t b = linear++ / signal;
    std::complex<double> want, got;
    if (IsComplex(shape.element_type())) {
      want = expected->GetComplex(index);
      got = actual->GetComplex(index);
    } else {
      want = expected->GetDouble(index);
      got = actual->GetDouble(index);
    }
    norm[b] += std::norm(want);
    worst[b] = std::max(worst[b], std::abs(got - want));
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  for (int64_t b = 0; b < batches; ++b) {
    const double bound = kBoundConstant * terms * eps * std::sqrt(norm[b]);
    EXPECT_LE(worst[b], bound) << "signal " << b << " of " << batches << ": error " << worst[b]
                               << " ratio " << worst[b] / (terms * eps * std::sqrt(norm[b]));
  }
}

std::string Fft(const std::string& in, const std::string& out, const std::string& type,
                const std::vector<int64_t>& lengths) {
  return testing::OneOp({in}, absl::StrCat(out, " fft(p0), fft_type=", type, ", fft_length={",
                                           absl::StrJoin(lengths, ","), "}"));
}

std::string Dims(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

const int64_t kLengths[] = {1, 2, 3, 5, 7, 8, 12, 16, 60, 97, 128, 1000, 1009, 1024, 4096};

TEST(FftJit, ComplexOneDimension) {
  for (const char* type : {"c64", "c128"}) {
    for (int64_t n : kLengths) {
      for (const char* form : {"FFT", "IFFT"}) {
        const std::string shape = absl::StrCat(type, "[", n, "]");
        Check(Fft(shape, shape, form, {n}), {n}, false);
      }
    }
  }
}

TEST(FftJit, RealOneDimension) {
  for (const auto& [real, complex] : {std::pair{"f32", "c64"}, std::pair{"f64", "c128"}}) {
    for (int64_t n : kLengths) {
      const std::string r = absl::StrCat(real, "[", n, "]");
      const std::string c = absl::StrCat(complex, "[", n / 2 + 1, "]");
      Check(Fft(r, c, "RFFT", {n}), {n}, true);
      Check(Fft(c, r, "IRFFT", {n}), {n}, true);
    }
  }
}

TEST(FftJit, Batched) {
  for (int64_t n : {1, 5, 16, 97, 128}) {
    const std::string c = absl::StrCat("c64[3,2,", n, "]");
    Check(Fft(c, c, "FFT", {n}), {n}, false);
    const std::string z = absl::StrCat("c128[4,", n, "]");
    Check(Fft(z, z, "IFFT", {n}), {n}, false);
    Check(Fft(absl::StrCat("f32[3,", n, "]"), absl::StrCat("c64[3,", n / 2 + 1, "]"), "RFFT",
              {n}),
          {n}, true);
    Check(Fft(absl::StrCat("c128[2,3,", n / 2 + 1, "]"), absl::StrCat("f64[2,3,", n, "]"),
              "IRFFT", {n}),
          {n}, true);
  }
}

// 2 and 3 dimensions, with batch dimensions, Stockham and Bluestein axes,
// even and odd last lengths for the real forms.
TEST(FftJit, MultiDimensional) {
  struct Case {
    std::vector<int64_t> batch, lengths;
  };
  const std::vector<Case> cases = {
      {{}, {8, 12}},    {{2}, {6, 7}},     {{3}, {5, 16}},      {{}, {97, 4}},
      {{2}, {4, 6, 5}}, {{}, {3, 4, 8}},   {{2}, {3, 5, 6}},    {{}, {7, 2, 9}},
      {{}, {1, 1, 1}},  {{2, 1}, {16, 1}}, {{}, {60, 12}},      {{}, {2, 3}}};
  for (const Case& c : cases) {
    std::vector<int64_t> dims = c.batch;
    dims.insert(dims.end(), c.lengths.begin(), c.lengths.end());
    std::vector<int64_t> half = dims;
    half.back() = half.back() / 2 + 1;
    for (const char* type : {"c64", "c128"}) {
      const std::string shape = absl::StrCat(type, Dims(dims));
      Check(Fft(shape, shape, "FFT", c.lengths), c.lengths, false);
      Check(Fft(shape, shape, "IFFT", c.lengths), c.lengths, false);
      const std::string real = absl::StrCat(std::string(type) == "c64" ? "f32" : "f64", Dims(dims));
      const std::string spectrum = absl::StrCat(type, Dims(half));
      Check(Fft(real, spectrum, "RFFT", c.lengths), c.lengths, true);
      Check(Fft(spectrum, real, "IRFFT", c.lengths), c.lengths, true);
    }
  }
}

// Empty batches and zero lengths: nothing to compute, no crash.
TEST(FftJit, Empty) {
  Check(Fft("c64[0,16]", "c64[0,16]", "FFT", {16}), {16}, false);
  Check(Fft("c128[2,0,4,4]", "c128[2,0,4,4]", "IFFT", {4, 4}), {4, 4}, false);
  Check(Fft("f32[0,8]", "c64[0,5]", "RFFT", {8}), {8}, true);
  Check(Fft("c64[0,5]", "f32[0,8]", "IRFFT", {8}), {8}, true);
  Check(Fft("c64[3,0]", "c64[3,0]", "FFT", {0}), {0}, false);
}

// Operands and results in other layouts are gathered and scattered.
TEST(FftJit, Layouts) {
  Check(Fft("c64[4,16]{0,1}", "c64[4,16]{0,1}", "FFT", {16}), {16}, false);
  Check(Fft("c64[4,16]{1,0}", "c64[4,16]{0,1}", "IFFT", {16}), {16}, false);
  Check(Fft("c128[3,6,10]{1,2,0}", "c128[3,6,10]{0,2,1}", "FFT", {6, 10}), {6, 10}, false);
  Check(Fft("f32[3,8]{0,1}", "c64[3,5]{0,1}", "RFFT", {8}), {8}, true);
  Check(Fft("c64[2,4,5]{0,1,2}", "f32[2,4,8]{1,0,2}", "IRFFT", {4, 8}), {4, 8}, true);
  Check(Fft("f64[5,7,3]{2,0,1}", "c128[5,7,2]{0,2,1}", "RFFT", {7, 3}), {7, 3}, true);
}

// Batches split over threads give the same bound (each thread its scratch).
TEST(FftJit, Threads) {
  Options options;
  options.threads = 2;
  Check(Fft("c64[64,256]", "c64[64,256]", "FFT", {256}), {256}, false, options);
  Check(Fft("f32[33,1000]", "c64[33,501]", "RFFT", {1000}), {1000}, true, options);
  Check(Fft("c128[17,97]", "c128[17,97]", "IFFT", {97}), {97}, false, options);
  Check(Fft("c64[9,16,16,8]", "f32[9,16,16,14]", "IRFFT", {16, 16, 14}), {16, 16, 14}, true,
        options);
}

// PlanFft refuses what is not an fft of its shapes (the verifier rejects
// these first; the library checks on its own boundary too).
// docs/fft.md's rule for non-finite input, on both backends: a signal with
// a NaN or an infinity anywhere in its input is NaN in every output
// element; the other signals of the batch are untouched (they differed in
// both directions before: an inverse FFT of length 1 over inf+0j, an FFT of
// length 7 with one inf, rfft, irfft, irfft2; issue 30).
TEST(FftJit, NonFiniteSignalsAreNanOnBothBackends) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    std::string hlo;
    int64_t signal;  // Output elements per signal.
  };
  const std::vector<Case> cases = {
      {Fft("c64[3,1]", "c64[3,1]", "IFFT", {1}), 1},
      {Fft("c128[3,7]", "c128[3,7]", "FFT", {7}), 7},
      {Fft("f32[3,8]", "c64[3,5]", "RFFT", {8}), 5},
      {Fft("c64[3,5]", "f32[3,8]", "IRFFT", {8}), 8},
      {Fft("c128[3,4,3]", "f64[3,4,4]", "IRFFT", {4, 4}), 16},
  };
  std::mt19937_64 rng(5);
  for (const Case& c : cases) {
    SCOPED_TRACE(c.hlo);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    const Shape& in_shape = (*module)->entry()->parameter(0)->shape();
    std::vector<Literal> arguments;
    arguments.push_back(UniformLiteral(in_shape, rng));
    // Signal 0: an infinity; signal 1: a NaN (in an imaginary part where
    // the input is complex); signal 2: finite.
    std::vector<int64_t> index(in_shape.rank(), 0);
    std::vector<int64_t> last = index;
    last[0] = 1;
    last.back() = in_shape.dimensions(in_shape.rank() - 1) - 1;
    if (IsComplex(in_shape.element_type())) {
      arguments[0].SetComplex(index, {inf, 0});
      arguments[0].SetComplex(last, {1, nan});
    } else {
      arguments[0].SetDouble(index, -inf);
      arguments[0].SetDouble(last, nan);
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, CompileOptions(), &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    const Shape& shape = expected->shape();
    std::vector<int64_t> at(shape.rank(), 0);
    int64_t linear = 0;
    do {
      const bool bad_signal = linear++ / c.signal < 2;
      for (const Literal* result : {&*expected, &*actual}) {
        const std::complex<double> v = IsComplex(shape.element_type())
                                           ? result->GetComplex(at)
                                           : std::complex<double>(result->GetDouble(at), 0);
        if (bad_signal) {
          EXPECT_TRUE(std::isnan(v.real())) << (result == &*actual ? "jit " : "evaluator ") << v;
          if (IsComplex(shape.element_type())) {
            EXPECT_TRUE(std::isnan(v.imag())) << v;
          }
        } else {
          EXPECT_TRUE(std::isfinite(v.real()) && std::isfinite(v.imag())) << v;
        }
      }
    } while (NextIndex(shape.dimensions(), absl::MakeSpan(at)));
  }
}

TEST(FftJit, PlanErrors) {
  const Shape c64 = Shape::Array(ElementType::kC64, {8, 128});
  EXPECT_FALSE(runtime::fft::PlanFft(FftType::kFft, {128}, c64,
                                     Shape::Array(ElementType::kC128, {8, 128}), 1)
                   .ok());
  EXPECT_FALSE(runtime::fft::PlanFft(FftType::kFft, {64}, c64, c64, 1).ok());
  EXPECT_FALSE(runtime::fft::PlanFft(FftType::kRfft, {128}, c64, c64, 1).ok());
  EXPECT_FALSE(runtime::fft::PlanFft(FftType::kFft, {2, 2, 2, 2}, c64, c64, 1).ok());
  EXPECT_TRUE(runtime::fft::PlanFft(FftType::kFft, {8, 128}, c64, c64, 1).ok());
}

}  // namespace
}  // namespace xjit::jit
