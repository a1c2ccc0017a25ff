// Helpers for the JIT's tests (see jit_test_util.h).
#include "tests/jit/jit_test_util.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>
#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "ir/hlo_text/parser.h"
#include "ir/layout_util.h"
#include "ir/verifier.h"
#include "jit/target.h"

namespace xjit::jit::testing {
namespace {

uint64_t Mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

uint64_t RandomFloatBits(ElementType type, std::mt19937_64& rng) {
  const double inf = std::numeric_limits<double>::infinity();
  static const double kEdges[] = {0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, 2.5, -2.5, 3.5, inf, -inf,
                                  std::nan(""), -std::nan(""), 1e-40, -1e-310, 65504.0, 70000.0,
                                  3e38, -3.5e38, 1e300, 0.1, 1.0 / 3.0, 123456789.0};
  switch (rng() % 8) {
    case 0:
    case 1: {
      const double v = kEdges[rng() % (sizeof(kEdges) / sizeof(kEdges[0]))];
      if (type == ElementType::kF64) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        return bits;
      }
      return DoubleToFloatBits(type, v);
    }
    case 2:  // Raw bits: any pattern, NaN payloads and subnormals included.
      return rng() & Mask(BitWidth(type));
    case 3: {  // Small integers, for rounding and exact results.
      const double v = static_cast<double>(static_cast<int64_t>(rng() % 21) - 10);
      return type == ElementType::kF64 ? [&] { uint64_t b; std::memcpy(&b, &v, 8); return b; }()
                                       : DoubleToFloatBits(type, v);
    }
    default: {
      std::uniform_real_distribution<double> unit(-1.0, 1.0);
      const double v = unit(rng) * std::ldexp(1.0, static_cast<int>(rng() % 40) - 20);
      if (type == ElementType::kF64) {
        uint64_t bits;
        std::memcpy(&bits, &v, 8);
        return bits;
      }
      return DoubleToFloatBits(type, v);
    }
  }
}

uint64_t RandomIntBits(ElementType type, std::mt19937_64& rng) {
  const int width = BitWidth(type);
  const bool is_signed = IsSignedInteger(type);
  const uint64_t mask = Mask(width);
  const uint64_t min = is_signed ? (uint64_t{1} << (width - 1)) : 0;  // bits of the minimum
  const uint64_t max = is_signed ? min - 1 : mask;
  switch (rng() % 8) {
    case 0: return min & mask;
    case 1: return max & mask;
    case 2: return mask;  // -1 or the unsigned maximum
    case 3: return 0;
    case 4: return rng() & mask;
    default: {
      const int64_t v = static_cast<int64_t>(rng() % 17) - 8;
      return static_cast<uint64_t>(is_signed ? v : (v < 0 ? -v : v)) & mask;
    }
  }
}

bool IsNan(ElementType type, uint64_t bits) {
  return IsFloat(type) && std::isnan(FloatBitsToDouble(type, bits));
}

// Distance in ulp between two non-NaN floats of `type` given as bits: their
// positions on the ordered line of all values (+0 and -0 both at 0).
uint64_t UlpDistance(ElementType type, uint64_t a, uint64_t b) {
  const int width = BitWidth(type);
  const uint64_t sign = uint64_t{1} << (width - 1);
  auto position = [&](uint64_t bits) {
    const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
    return (bits & sign) != 0 ? -magnitude : magnitude;
  };
  const int64_t d = position(a) - position(b);
  return static_cast<uint64_t>(d < 0 ? -d : d);
}

}  // namespace

std::vector<Isa> HostIsas() {
  std::vector<Isa> isas;
#if defined(__aarch64__)
  const Isa candidates[] = {Isa::kNeon};
#else
  const Isa candidates[] = {Isa::kSse4, Isa::kAvx2, Isa::kAvx512};
#endif
  for (Isa isa : candidates) {
    if (HostSupportsIsa(isa)) {
      isas.push_back(isa);
    } else {
      static bool reported[5] = {};
      if (!reported[static_cast<int>(isa)]) {
        reported[static_cast<int>(isa)] = true;
        std::printf("[ note     ] this host has no %s: its tests are skipped\n",
                    std::string(IsaName(isa)).c_str());
      }
    }
  }
  return isas;
}

bool HostTargetIsPartial() {
#if defined(__aarch64__)
  return true;
#else
  return false;
#endif
}

std::vector<std::string> UnexpectedInterpretedSteps(const CompileReport& report) {
  std::vector<std::string> unexpected;
  static absl::flat_hash_set<std::string>* reported = new absl::flat_hash_set<std::string>();
  for (const std::string& step : report.interpreted_steps) {
    const size_t reason = step.find("): aarch64: no code");
    if (!HostTargetIsPartial() || reason == std::string::npos) {
      unexpected.push_back(step);
      continue;
    }
    const std::string what = step.substr(reason + 3);
    if (reported->insert(what).second) {
      std::printf("[ note     ] interpreted on this target (accepted fallback): %s\n",
                  what.c_str());
    }
  }
  return unexpected;
}

std::string ModuleText(const std::vector<std::string>& parameters,
                       const std::vector<std::string>& body) {
  std::string text = "HloModule m\nENTRY e {\n";
  for (size_t i = 0; i < parameters.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", parameters[i], " parameter(", i, ")\n");
  }
  for (size_t i = 0; i < body.size(); ++i) {
    absl::StrAppend(&text, i + 1 == body.size() ? "  ROOT " : "  ", body[i], "\n");
  }
  return text + "}\n";
}

std::string OneOp(const std::vector<std::string>& parameters,
                                 const std::string& root) {
  return ModuleText(parameters, {"r = " + root});
}

absl::StatusOr<std::unique_ptr<Module>> ParseVerified(absl::string_view hlo) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
  if (!module.ok()) return module.status();
  absl::Status status = VerifyModule(**module);
  if (!status.ok()) return status;
  return module;
}

Literal RandomLiteral(const Shape& shape, std::mt19937_64& rng) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) elements.push_back(RandomLiteral(element, rng));
    return Literal::MakeTuple(std::move(elements));
  }
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  const ElementType type = shape.element_type();
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    uint64_t bits = 0;
    if (IsPred(type)) {
      bits = rng() & 1;
    } else if (IsFloat(type)) {
      bits = RandomFloatBits(type, rng);
    } else {
      bits = RandomIntBits(type, rng);
    }
    literal.SetBitsLinear(i, bits);
  }
  return literal;
}

int MathUlpTolerance(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64 ? 4 : 1;
}

std::string Difference(const Literal& expected, const Literal& actual, int ulp_tolerance) {
  if (!expected.shape().Compatible(actual.shape())) {
    return absl::StrCat("shape ", actual.shape().ToString(), " != expected ",
                        expected.shape().ToString());
  }
  if (expected.shape().IsTuple()) {
    for (int64_t i = 0; i < expected.shape().tuple_size(); ++i) {
      std::string d = Difference(expected.element(i), actual.element(i), ulp_tolerance);
      if (!d.empty()) return absl::StrCat("tuple element ", i, ": ", d);
    }
    return "";
  }
  if (!expected.shape().IsArray()) return "";
  const ElementType type = expected.shape().element_type();
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const uint64_t e = expected.GetBitsLinear(i);
    const uint64_t a = actual.GetBitsLinear(i);
    if (e == a || (IsNan(type, e) && IsNan(type, a))) continue;
    // c64: each f32 component compares as a float does (any NaN equals any
    // NaN: XLA leaves NaN payloads of complex arithmetic unspecified, and the
    // evaluator's depend on how the compiler built it).
    if (type == ElementType::kC64) {
      auto component_equal = [](uint32_t x, uint32_t y) {
        return x == y ||
               (std::isnan(std::bit_cast<float>(x)) && std::isnan(std::bit_cast<float>(y)));
      };
      if (component_equal(static_cast<uint32_t>(e), static_cast<uint32_t>(a)) &&
          component_equal(static_cast<uint32_t>(e >> 32), static_cast<uint32_t>(a >> 32))) {
        continue;
      }
    }
    if (ulp_tolerance > 0 && IsFloat(type) && !IsNan(type, e) && !IsNan(type, a) &&
        UlpDistance(type, e, a) <= static_cast<uint64_t>(ulp_tolerance) &&
        !(FloatBitsToDouble(type, e) == 0 && FloatBitsToDouble(type, a) == 0)) {
      continue;
    }
    return absl::StrCat("element ", i, " (row-major) is 0x", absl::Hex(a), " but expected 0x",
                        absl::Hex(e), IsFloat(type) ? absl::StrCat(" (", FloatBitsToDouble(type, a),
                                                                     " vs ",
                                                                     FloatBitsToDouble(type, e), ")")
                                                    : std::string());
  }
  return "";
}

std::string NormDifference(const Literal& expected, const Literal& actual, double tolerance,
                           int minor_dims) {
  const Shape& shape = expected.shape();
  if (!shape.Compatible(actual.shape())) {
    return absl::StrCat("shape ", actual.shape().ToString(), " != expected ", shape.ToString());
  }
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      std::string d = NormDifference(expected.element(i), actual.element(i), tolerance, minor_dims);
      if (!d.empty()) return absl::StrCat("tuple element ", i, ": ", d);
    }
    return "";
  }
  const ElementType type = shape.element_type();
  if (!shape.IsArray() || (!IsFloat(type) && !IsComplex(type))) {
    return Difference(expected, actual);
  }
  const int64_t count = expected.element_count();
  if (count == 0) return "";
  int64_t group = 1;
  for (int64_t d = std::max<int64_t>(0, shape.rank() - minor_dims); d < shape.rank(); ++d) {
    group *= shape.dimensions(d);
  }
  auto finite = [](std::complex<double> z) {
    return std::isfinite(z.real()) && std::isfinite(z.imag());
  };
  std::vector<std::complex<double>> e(count), a(count);
  std::vector<int64_t> index(shape.rank(), 0);
  int64_t linear = 0;
  do {
    e[linear] = IsComplex(type) ? expected.GetComplex(index) : expected.GetDouble(index);
    a[linear] = IsComplex(type) ? actual.GetComplex(index) : actual.GetDouble(index);
    ++linear;
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  for (int64_t start = 0; start < count; start += group) {
    double norm = 0;
    for (int64_t i = start; i < start + group; ++i) {
      if (finite(e[i])) norm += std::norm(e[i]);
    }
    const double bound = tolerance * std::sqrt(norm);
    for (int64_t i = start; i < start + group; ++i) {
      const bool nan_e = std::isnan(e[i].real()) || std::isnan(e[i].imag());
      const bool nan_a = std::isnan(a[i].real()) || std::isnan(a[i].imag());
      if (!finite(e[i]) || !finite(a[i])) {
        if ((nan_e && nan_a) || e[i] == a[i]) continue;
      } else if (std::abs(a[i] - e[i]) <= bound) {
        continue;
      }
      return absl::StrCat("element ", i, " (row-major) is (", a[i].real(), ", ", a[i].imag(),
                          ") but expected (", e[i].real(), ", ", e[i].imag(), "): error ",
                          std::abs(a[i] - e[i]), " over the bound ", bound, " = ", tolerance,
                          " * the norm of its group of ", group);
    }
  }
  return "";
}

::testing::AssertionResult MatchesEvaluator(const Module& module, const CheckOptions& options) {
  std::mt19937_64 rng(options.seed);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : module.entry()->parameters()) {
    arguments.push_back(RandomLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(module, arguments);
  if (!expected.ok()) {
    return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  }
  CompileOptions compile_options;
  compile_options.isa = options.isa;
  compile_options.run_passes = options.run_passes;
  compile_options.only_passes = options.only_passes;
  compile_options.cache = options.cache;
  compile_options.collect_asm = options.collect_asm;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, compile_options, &report);
  if (!executable.ok()) return ::testing::AssertionFailure() << "compile: " << executable.status();
  const std::vector<std::string> unexpected = UnexpectedInterpretedSteps(report);
  if (options.require_all_compiled && !unexpected.empty()) {
    return ::testing::AssertionFailure()
           << "interpreted steps:\n  " << absl::StrJoin(unexpected, "\n  ");
  }
  // A kernel left to the evaluator by a partial target has no lanes to check.
  if (options.require_vectorized && unexpected.size() == report.interpreted_steps.size()) {
    bool vectorized = false;
    for (const KernelInfo& kernel : report.kernels) vectorized |= kernel.vector_lanes > 1;
    if (!vectorized) return ::testing::AssertionFailure() << "no kernel is vectorised";
  }
  if (options.report != nullptr) *options.report = report;
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  if (!actual.ok()) return ::testing::AssertionFailure() << "run: " << actual.status();
  const std::string difference =
      options.norm_tolerance > 0
          ? NormDifference(*expected, *actual, options.norm_tolerance, options.norm_minor_dims)
          : Difference(*expected, *actual, options.ulp_tolerance);
  if (!difference.empty()) {
    std::string programs;
    for (const KernelInfo& kernel : report.kernels) absl::StrAppend(&programs, kernel.program);
    return ::testing::AssertionFailure() << "isa " << IsaName(options.isa) << " seed "
                                         << options.seed << ": " << difference << "\n"
                                         << programs;
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult MatchesEvaluator(absl::string_view hlo, const CheckOptions& options) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << "parse/verify: " << module.status();
  return MatchesEvaluator(**module, options);
}

CompileReport ExpectMatchesEvaluatorOnSeeds(absl::string_view hlo, Isa isa, int seeds) {
  CompileReport report;
  for (int seed = 1; seed <= seeds; ++seed) {
    CheckOptions options;
    options.isa = isa;
    options.seed = static_cast<uint64_t>(seed);
    options.report = &report;
    EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
  }
  return report;
}

}  // namespace xjit::jit::testing
