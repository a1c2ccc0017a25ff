// Accuracy of the JIT's inline vector math (jit/kernel/vector_math.h), per function,
// element type and instruction set, measured against a long double reference
// over the whole float range:
//   - f32: every 2^12-th bit pattern (all exponents, both signs, subnormals,
//     infinities and NaNs), 100k random bit patterns and 100k random values
//     of moderate magnitude;
//   - f64: 200k random bit patterns and 100k random values of moderate
//     magnitude;
//   - binary functions: random pairs drawn from several distributions;
// plus special values. The maximum error in ulp is printed and asserted
// against the stated bound (kBounds below). Special values (NaN, infinities,
// zeros of either sign, results of +-1) must equal the evaluator's bit for bit
// (any NaN equals any NaN). Every kernel must be compiled and vectorised.
//
// Stated bounds (ulp of the result type; the same with and without FMA):
//   f32: exp, log, tanh, logistic <= 2; every other function <= 4.
//   f64: every function <= 4.
//   sqrt: <= 0.5 (exact rounding); rsqrt (1/sqrt(x), two roundings): <= 2.
// sin, cos and tan: the bound holds for |x| <= 2^22 (f32) and 2^51 (f64);
// beyond, sin and cos must be in [-1, 1] and tan not infinite, and the error
// is reported but not asserted.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <iostream>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

using LongFn1 = long double (*)(long double);
using LongFn2 = long double (*)(long double, long double);

long double Logistic(long double x) { return 1.0L / (1.0L + expl(-x)); }
long double Rsqrt(long double x) { return 1.0L / sqrtl(x); }

struct MathCase {
  const char* opcode;  // HLO text name.
  int arity;
  LongFn1 f1;
  LongFn2 f2;
  double bound_f32;
  double bound_f64;
  // For sin/cos/tan: the largest |x| where the bound is asserted.
  double range_f32;
  double range_f64;
};

const MathCase kCases[] = {
    {"exponential", 1, expl, nullptr, 2, 4, 0, 0},
    {"exponential-minus-one", 1, expm1l, nullptr, 4, 4, 0, 0},
    {"log", 1, logl, nullptr, 2, 4, 0, 0},
    {"log-plus-one", 1, log1pl, nullptr, 4, 4, 0, 0},
    {"tanh", 1, tanhl, nullptr, 2, 4, 0, 0},
    {"logistic", 1, Logistic, nullptr, 2, 4, 0, 0},
    {"sine", 1, sinl, nullptr, 4, 4, 4194304.0, 2251799813685248.0},
    {"cosine", 1, cosl, nullptr, 4, 4, 4194304.0, 2251799813685248.0},
    {"tan", 1, tanl, nullptr, 4, 4, 4194304.0, 2251799813685248.0},
    {"erf", 1, erfl, nullptr, 4, 4, 0, 0},
    {"cbrt", 1, cbrtl, nullptr, 4, 4, 0, 0},
    {"sqrt", 1, sqrtl, nullptr, 0.5, 0.5, 0, 0},
    {"rsqrt", 1, Rsqrt, nullptr, 2, 2, 0, 0},
    {"atan", 1, atanl, nullptr, 4, 4, 0, 0},
    {"asin", 1, asinl, nullptr, 4, 4, 0, 0},
    {"acos", 1, acosl, nullptr, 4, 4, 0, 0},
    {"sinh", 1, sinhl, nullptr, 4, 4, 0, 0},
    {"cosh", 1, coshl, nullptr, 4, 4, 0, 0},
    {"asinh", 1, asinhl, nullptr, 4, 4, 0, 0},
    {"acosh", 1, acoshl, nullptr, 4, 4, 0, 0},
    {"atanh", 1, atanhl, nullptr, 4, 4, 0, 0},
    {"atan2", 2, nullptr, atan2l, 4, 4, 0, 0},
    {"power", 2, nullptr, powl, 4, 4, 0, 0},
};

// ---- Float helpers over f32/f64 given as double + type ----

struct TypeParams {
  bool f64;
  int mantissa;   // Stored bits.
  int min_exp;    // Exponent of the smallest normal.
  int max_exp;    // Exponent of the largest finite.
};

TypeParams Params(bool f64) {
  return f64 ? TypeParams{true, 52, -1022, 1023} : TypeParams{false, 23, -126, 127};
}

double FromBits(bool f64, uint64_t bits) {
  if (f64) {
    double d;
    std::memcpy(&d, &bits, 8);
    return d;
  }
  const uint32_t b = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &b, 4);
  return f;
}

uint64_t ToBits(bool f64, double v) {
  if (f64) {
    uint64_t b;
    std::memcpy(&b, &v, 8);
    return b;
  }
  const float f = static_cast<float>(v);
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}

// |result - reference| in units of the reference's ulp in the result type
// (subnormal spacing below the normal range; infinity counts as the next
// binade above the largest finite value).
double UlpError(const TypeParams& t, double result, long double reference) {
  const bool r_nan = std::isnan(result);
  const bool ref_nan = std::isnan(reference);
  if (r_nan || ref_nan) return r_nan && ref_nan ? 0 : HUGE_VAL;
  const long double top = std::ldexp(1.0L, t.max_exp + 1);
  auto clip = [&](long double v) {
    if (std::isinf(v) || std::fabs(v) > top) return std::copysign(top, v);
    return v;
  };
  const long double r = clip(result);
  const long double ref = clip(reference);
  if (r == ref) return 0;
  int exponent = std::ilogb(ref == 0 ? std::ldexp(1.0L, t.min_exp) : ref);
  if (exponent < t.min_exp) exponent = t.min_exp;
  if (exponent > t.max_exp) exponent = t.max_exp;
  const long double ulp = std::ldexp(1.0L, exponent - t.mantissa);
  return static_cast<double>(std::fabs(r - ref) / ulp);
}

bool IsSpecialResult(double v) {
  return std::isnan(v) || std::isinf(v) || v == 0 || v == 1 || v == -1;
}

std::string Module1(const char* opcode, const char* type, int64_t n) {
  return absl::StrFormat(
      "HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(p0)\n}\n", type, n,
      type, n, opcode);
}

std::string Module2(const char* opcode, const char* type, int64_t n) {
  return absl::StrFormat(
      "HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n  p1 = %s[%d] parameter(1)\n"
      "  ROOT r = %s[%d] %s(p0, p1)\n}\n",
      type, n, type, n, type, n, opcode);
}

Literal MakeLiteral(bool f64, const std::vector<double>& values) {
  Literal literal(Shape::Array(f64 ? ElementType::kF64 : ElementType::kF32,
                               {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) literal.SetBitsLinear(i, ToBits(f64, values[i]));
  return literal;
}

std::vector<double> ReadLiteral(bool f64, const Literal& literal) {
  std::vector<double> out(literal.element_count());
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    out[i] = FromBits(f64, literal.GetBitsLinear(i));
  }
  return out;
}

// Runs the module compiled for `isa` on the arguments.
absl::StatusOr<std::vector<double>> RunJit(const std::string& hlo, Isa isa, bool f64,
                                           const std::vector<Literal>& arguments,
                                           std::string* problem) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  if (!module.ok()) return module.status();
  CompileOptions options;
  options.isa = isa;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, options, &report);
  if (!executable.ok()) return executable.status();
  if (!report.interpreted_steps.empty()) *problem = "interpreted: " + report.interpreted_steps[0];
  for (const KernelInfo& kernel : report.kernels) {
    if (kernel.vector_lanes <= 1) *problem = "kernel not vectorised";
  }
  absl::StatusOr<Literal> result = (*executable)->Run(arguments);
  if (!result.ok()) return result.status();
  return ReadLiteral(f64, *result);
}

std::vector<double> SpecialValues(bool f64) {
  const double inf = HUGE_VAL;
  const double max = f64 ? std::numeric_limits<double>::max() : std::numeric_limits<float>::max();
  const double min_normal =
      f64 ? std::numeric_limits<double>::min() : std::numeric_limits<float>::min();
  const double min_sub =
      f64 ? std::numeric_limits<double>::denorm_min() : std::numeric_limits<float>::denorm_min();
  std::vector<double> v = {0.0, inf, std::nan(""), 1.0, 2.0, 0.5, 3.0, 0.1, 10.0, 100.0,
                           1e5, 1e10, 1e30, max, min_normal, min_sub, 3 * min_sub,
                           min_normal / 3, M_PI, M_PI / 2, M_PI / 4, 88.5, 89.0, 709.5,
                           710.0, 745.0, 750.0, 104.0, 0.55, 0.875, 4.0, 6.0, 1e-8, 1e-20,
                           1.0000001, 0.9999999};
  std::vector<double> out;
  for (double x : v) {
    out.push_back(x);
    out.push_back(-x);
  }
  return out;
}

void AddUnaryInputs(bool f64, std::mt19937_64& rng, std::vector<double>* xs) {
  for (double s : SpecialValues(f64)) xs->push_back(s);
  if (!f64) {
    for (uint64_t bits = 0; bits < (uint64_t{1} << 32); bits += 1 << 12) {
      xs->push_back(FromBits(false, bits + (rng() & 0xFFF)));
    }
    for (int i = 0; i < 100000; ++i) xs->push_back(FromBits(false, rng() & 0xFFFFFFFF));
  } else {
    for (int i = 0; i < 200000; ++i) xs->push_back(FromBits(true, rng()));
  }
  // Moderate magnitudes: |x| = 2^u, u uniform in [-30, 12].
  std::uniform_real_distribution<double> u(-30, 12);
  for (int i = 0; i < 100000; ++i) {
    const double m = std::exp2(u(rng));
    xs->push_back(static_cast<double>((rng() & 1) ? m : -m));
  }
  if (!f64) {
    for (double& x : *xs) x = static_cast<float>(x);
  }
}

void AddBinaryInputs(bool f64, bool power, std::mt19937_64& rng, std::vector<double>* xs,
                     std::vector<double>* ys) {
  const std::vector<double> specials = SpecialValues(f64);
  for (double a : specials) {
    for (double b : specials) {
      xs->push_back(a);
      ys->push_back(b);
    }
  }
  const int n = f64 ? 150000 : 250000;
  std::uniform_real_distribution<double> unit(0, 1);
  for (int i = 0; i < n; ++i) {
    double x = 0;
    double y = 0;
    switch (i % 5) {
      case 0:  // Any bits.
        x = FromBits(f64, f64 ? rng() : rng() & 0xFFFFFFFF);
        y = FromBits(f64, f64 ? rng() : rng() & 0xFFFFFFFF);
        break;
      case 1:  // Moderate magnitudes, any signs.
        x = std::exp2(unit(rng) * 40 - 20) * ((rng() & 1) ? 1 : -1);
        y = std::exp2(unit(rng) * 40 - 20) * ((rng() & 1) ? 1 : -1);
        break;
      case 2:  // pow: positive x in (0, 20), |y| up to 60; atan2: same scales.
        x = unit(rng) * 20;
        y = (unit(rng) - 0.5) * 120;
        break;
      case 3:  // pow: x near 1, large y (exercises the double-word log).
        x = 1 + (unit(rng) - 0.5) * std::exp2(-static_cast<int>(rng() % 20));
        y = (unit(rng) - 0.5) * std::exp2(static_cast<int>(rng() % (f64 ? 40 : 20)));
        break;
      case 4:  // Negative x, integer y (and results near over/underflow).
        x = -unit(rng) * 10;
        y = std::round((unit(rng) - 0.5) * (f64 ? 600 : 80));
        break;
    }
    if (!power && i % 5 == 3) std::swap(x, y);
    xs->push_back(x);
    ys->push_back(y);
  }
  if (!f64) {
    for (double& x : *xs) x = static_cast<float>(x);
    for (double& y : *ys) y = static_cast<float>(y);
  }
}

struct Param {
  const MathCase* c;
  bool f64;
};

class MathAccuracy : public ::testing::TestWithParam<Param> {};

TEST_P(MathAccuracy, WithinStatedUlp) {
  const MathCase& c = *GetParam().c;
  const bool f64 = GetParam().f64;
  const TypeParams t = Params(f64);
  const char* type = f64 ? "f64" : "f32";
  std::mt19937_64 rng(std::hash<std::string>()(c.opcode) ^ (f64 ? 0x64 : 0x32));
  std::vector<double> xs;
  std::vector<double> ys;
  if (c.arity == 1) {
    AddUnaryInputs(f64, rng, &xs);
  } else {
    AddBinaryInputs(f64, std::string(c.opcode) == "power", rng, &xs, &ys);
  }
  // A few more, so that the vector loop leaves a scalar tail.
  while (xs.size() % 8 != 3) {
    xs.push_back(static_cast<double>(static_cast<float>(xs.size() % 7) * 0.37f - 1.1f));
    if (c.arity == 2) ys.push_back(static_cast<double>(static_cast<float>(xs.size() % 5) - 2.3f));
  }
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<Literal> arguments;
  arguments.push_back(MakeLiteral(f64, xs));
  if (c.arity == 2) arguments.push_back(MakeLiteral(f64, ys));
  const std::string hlo = c.arity == 1 ? Module1(c.opcode, type, n) : Module2(c.opcode, type, n);

  // References: long double for accuracy; the evaluator for special values.
  std::vector<long double> reference(n);
  for (int64_t i = 0; i < n; ++i) {
    reference[i] = c.arity == 1 ? c.f1(xs[i]) : c.f2(xs[i], ys[i]);
  }
  std::vector<double> evaluator;
  {
    // The special values come first.
    const int64_t specials = static_cast<int64_t>(SpecialValues(f64).size());
    const int64_t m = c.arity == 1 ? specials : specials * specials;
    std::vector<Literal> special_arguments;
    special_arguments.push_back(
        MakeLiteral(f64, std::vector<double>(xs.begin(), xs.begin() + m)));
    if (c.arity == 2) {
      special_arguments.push_back(
          MakeLiteral(f64, std::vector<double>(ys.begin(), ys.begin() + m)));
    }
    const std::string small =
        c.arity == 1 ? Module1(c.opcode, type, m) : Module2(c.opcode, type, m);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(small);
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<Literal> result = EvaluateModule(**module, special_arguments);
    ASSERT_TRUE(result.ok()) << result.status();
    evaluator = ReadLiteral(f64, *result);
  }
  const double range = f64 ? c.range_f64 : c.range_f32;
  const double bound = f64 ? c.bound_f64 : c.bound_f32;
  for (Isa isa : HostIsas()) {
    std::string problem;
    absl::StatusOr<std::vector<double>> got = RunJit(hlo, isa, f64, arguments, &problem);
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(problem, "") << c.opcode << " " << type;
    double max_error = 0;
    int64_t worst = 0;
    double max_outside = 0;
    int special_failures = 0;
    int out_of_range_failures = 0;
    for (int64_t i = 0; i < n; ++i) {
      const double r = (*got)[i];
      // Special results must be the evaluator's, where the evaluator is right
      // (its logistic overflows to 0 below x = -709.8 in f64, where the
      // true result is a subnormal the JIT gets right).
      const double rounded_reference =
          f64 ? static_cast<double>(reference[i]) : static_cast<float>(reference[i]);
      if (i < static_cast<int64_t>(evaluator.size()) && IsSpecialResult(evaluator[i]) &&
          (ToBits(f64, rounded_reference) == ToBits(f64, evaluator[i]) ||
           std::isnan(evaluator[i]))) {
        const bool same = std::isnan(r) ? std::isnan(evaluator[i])
                                        : ToBits(f64, r) == ToBits(f64, evaluator[i]);
        if (!same && special_failures++ < 10) {
          ADD_FAILURE() << c.opcode << " " << type << " " << IsaName(isa) << ": special x="
                        << xs[i] << (c.arity == 2 ? absl::StrCat(" y=", ys[i]) : "") << " gives "
                        << r << ", the evaluator " << evaluator[i];
        }
      }
      const double error = UlpError(t, r, reference[i]);
      if (range > 0 && !(std::fabs(xs[i]) <= range)) {
        if (std::isfinite(xs[i])) {
          const bool bad = std::string(c.opcode) == "tan" ? std::isinf(r) : !(std::fabs(r) <= 1);
          if (bad && out_of_range_failures++ < 5) {
            ADD_FAILURE() << c.opcode << "(" << xs[i] << ") = " << r << " beyond the range";
          }
          max_outside = std::max(max_outside, error);
        }
        continue;
      }
      if (error > max_error || std::isnan(error)) {
        max_error = std::isnan(error) ? HUGE_VAL : error;
        worst = i;
      }
    }
    std::cout << absl::StrFormat("%-22s %s %-5s max %.3f ulp (bound %g) at x=%.17g%s", c.opcode,
                                 type, IsaName(isa), max_error, bound, xs[worst],
                                 c.arity == 2 ? absl::StrFormat(" y=%.17g", ys[worst]) : "");
    if (range > 0) {
      std::cout << absl::StrFormat("; beyond |x|>%g: max %.3g ulp", range, max_outside);
    }
    std::cout << " [" << n << " values]\n";
    EXPECT_LE(max_error, bound) << c.opcode << " " << type << " " << IsaName(isa) << " at x="
                                << xs[worst] << (c.arity == 2 ? absl::StrCat(" y=", ys[worst]) : "")
                                << ": got " << (*got)[worst] << ", reference "
                                << static_cast<double>(reference[worst]);
  }
}

std::vector<Param> AllParams() {
  std::vector<Param> params;
  for (const MathCase& c : kCases) {
    params.push_back({&c, false});
    params.push_back({&c, true});
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Functions, MathAccuracy, ::testing::ValuesIn(AllParams()),
                         [](const ::testing::TestParamInfo<Param>& info) {
                           std::string name = info.param.c->opcode;
                           for (char& ch : name) {
                             if (ch == '-') ch = '_';
                           }
                           return name + (info.param.f64 ? "_f64" : "_f32");
                         });

// Integer power is exact: the JIT must equal the evaluator bit for bit
// (wrapping products; a negative signed exponent gives 1, +-1 or 0), with no
// interpreted step.
TEST(IntegerPower, MatchesEvaluator) {
  for (const char* type : {"s8", "s16", "s32", "s64", "u8", "u32", "u64"}) {
    const ElementType element = *ParseElementType(type);
    const int width = BitWidth(element);
    const uint64_t mask = width == 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
    std::mt19937_64 rng(width);
    std::vector<uint64_t> xs;
    std::vector<uint64_t> ys;
    const int64_t edges[] = {0, 1, 2, 3, -1, -2, -3, 7, -128, 127, 255, 31, 62, 63, 64, 65};
    for (int64_t a : edges) {
      for (int64_t e : edges) {
        xs.push_back(static_cast<uint64_t>(a) & mask);
        ys.push_back(static_cast<uint64_t>(e) & mask);
      }
    }
    for (int i = 0; i < 2000; ++i) {
      xs.push_back(rng() & mask);
      ys.push_back(i % 2 == 0 ? rng() % 70 : rng() & mask);
    }
    const int64_t n = static_cast<int64_t>(xs.size());
    std::vector<Literal> arguments;
    for (const std::vector<uint64_t>* v : {&xs, &ys}) {
      Literal literal(Shape::Array(element, {n}));
      for (int64_t i = 0; i < n; ++i) literal.SetBitsLinear(i, (*v)[i]);
      arguments.push_back(std::move(literal));
    }
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(Module2("power", type, n));
    ASSERT_TRUE(module.ok()) << module.status();
    absl::StatusOr<Literal> want = EvaluateModule(**module, arguments);
    ASSERT_TRUE(want.ok()) << want.status();
    for (Isa isa : HostIsas()) {
      CompileOptions options;
      options.isa = isa;
      CompileReport report;
      absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
          Compile(**module, options, &report);
      ASSERT_TRUE(executable.ok()) << executable.status();
      EXPECT_TRUE(report.interpreted_steps.empty())
          << type << ": " << report.interpreted_steps[0];
      absl::StatusOr<Literal> got = (*executable)->Run(arguments);
      ASSERT_TRUE(got.ok()) << got.status();
      int failures = 0;
      for (int64_t i = 0; i < n; ++i) {
        if (got->GetBitsLinear(i) != want->GetBitsLinear(i) && failures++ < 5) {
          ADD_FAILURE() << type << " " << IsaName(isa) << ": power(" << xs[i] << ", " << ys[i]
                        << ") = " << got->GetBitsLinear(i) << ", the evaluator "
                        << want->GetBitsLinear(i);
        }
      }
    }
  }
}

}  // namespace
}  // namespace xjit::jit::testing
