// Complex (c64, c128) kernels against the evaluator: every compiled complex
// operation (add, subtract, multiply, divide, negate, maximum, minimum, real,
// imag, complex, compare EQ/NE, select, converts, bitcast-converts, data
// movement, constants, c64 reductions, c64 abs (component code), and the
// math done by calls of jit/kernel/complex_calls.h helpers: c128 abs, sqrt,
// rsqrt, cbrt, exp, expm1, log, log1p, sign, sin, cos, tan, tanh, logistic, the inverse and hyperbolic
// functions, power, atan2) on odd shapes and non-default
// layouts, with components rich in edge values (±0, ±inf, NaN, huge values
// whose products overflow, subnormals), fused chains, and an all-pairs table
// of edge values for multiply and divide (libgcc's scaling and C99 Annex G's
// recovery), every edge value through each math call and all pairs through
// power and atan2. Results must match bit for bit (any NaN equals any NaN, per
// component) on every host ISA, with no interpreted step; unsupported
// operations must still be interpreted and correct.
//
// The shared helpers' RandomLiteral and Difference do not look inside
// complex elements (random bits; real part only for c128), so this file
// builds its own complex arguments and compares both components.
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

using C = std::complex<double>;

// Component edge values of a complex type (c64: float values).
std::vector<double> EdgeComponents(ElementType type) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::vector<double> v = {0.0, -0.0, 1.0, -1.0, 0.5, -3.25, inf, -inf, nan, -nan};
  if (type == ElementType::kC64) {
    v.insert(v.end(), {1e30, -1e30, 3.4028234663852886e38, 1e-40, 1e-20});
  } else {
    v.insert(v.end(), {1e300, -1e300, std::numeric_limits<double>::max(), 1e-310, 1e-170});
  }
  return v;
}

double RandomComponent(ElementType type, std::mt19937_64& rng) {
  const std::vector<double> edges = EdgeComponents(type);
  if (rng() % 2 == 0) return edges[rng() % edges.size()];
  std::uniform_real_distribution<double> u(-4.0, 4.0);
  const double x = std::ldexp(u(rng), static_cast<int>(rng() % 40) - 20);
  return type == ElementType::kC64 ? static_cast<float>(x) : x;
}

std::vector<int64_t> LinearIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    const int64_t size = shape.dimensions(d);
    index[d] = size == 0 ? 0 : linear % size;
    linear = size == 0 ? 0 : linear / size;
  }
  return index;
}

Literal Argument(const Shape& shape, std::mt19937_64& rng) {
  if (!IsComplex(shape.element_type())) return RandomLiteral(shape, rng);
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const double re = RandomComponent(shape.element_type(), rng);
    const double im = RandomComponent(shape.element_type(), rng);
    literal.SetComplex(LinearIndex(shape, i), C(re, im));
  }
  return literal;
}

bool SameComponent(double e, double a) {
  if (std::isnan(e) && std::isnan(a)) return true;
  uint64_t eb, ab;
  std::memcpy(&eb, &e, 8);
  std::memcpy(&ab, &a, 8);
  return eb == ab;
}

std::string ComplexDifference(const Literal& expected, const Literal& actual) {
  if (!expected.shape().Compatible(actual.shape())) {
    return absl::StrCat("shape ", actual.shape().ToString(), " != ", expected.shape().ToString());
  }
  if (expected.shape().IsTuple()) {
    for (int64_t i = 0; i < expected.shape().tuple_size(); ++i) {
      std::string d = ComplexDifference(expected.element(i), actual.element(i));
      if (!d.empty()) return absl::StrCat("tuple element ", i, ": ", d);
    }
    return "";
  }
  if (!IsComplex(expected.shape().element_type())) return Difference(expected, actual);
  for (int64_t i = 0; i < expected.element_count(); ++i) {
    const std::vector<int64_t> index = LinearIndex(expected.shape(), i);
    const C e = expected.GetComplex(index);
    const C a = actual.GetComplex(index);
    if (!SameComponent(e.real(), a.real()) || !SameComponent(e.imag(), a.imag())) {
      return absl::StrCat("element ", i, " is (", a.real(), ", ", a.imag(), ") but expected (",
                          e.real(), ", ", e.imag(), ")");
    }
  }
  return "";
}

// Compiles and runs `module` (no interpreted steps allowed) and compares with
// the evaluator on `arguments`.
::testing::AssertionResult MatchesOn(const Module& module, const std::vector<Literal>& arguments,
                                     Isa isa, bool run_passes = true,
                                     CompileReport* report_out = nullptr) {
  absl::StatusOr<Literal> expected = EvaluateModule(module, arguments);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  CompileOptions options;
  options.isa = isa;
  options.run_passes = run_passes;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, options, &report);
  if (!executable.ok()) return ::testing::AssertionFailure() << "compile: " << executable.status();
  if (!report.interpreted_steps.empty()) {
    return ::testing::AssertionFailure()
           << "interpreted steps:\n  " << absl::StrJoin(report.interpreted_steps, "\n  ");
  }
  if (report_out != nullptr) *report_out = report;
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  if (!actual.ok()) return ::testing::AssertionFailure() << "run: " << actual.status();
  const std::string difference = ComplexDifference(*expected, *actual);
  if (!difference.empty()) return ::testing::AssertionFailure() << difference;
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Matches(const std::string& hlo, Isa isa, uint64_t seed,
                                   bool run_passes = true, CompileReport* report = nullptr) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  if (!module.ok()) return ::testing::AssertionFailure() << "parse: " << module.status();
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(Argument(parameter->shape(), rng));
  }
  return MatchesOn(**module, arguments, isa, run_passes, report);
}

const char* kComplexTypes[] = {"c64", "c128"};
const char* kDims[] = {"[]", "[0]", "[1]", "[7]", "[19]", "[3,5]{0,1}", "[2,1,9]{1,0,2}",
                       "[4,33]"};

const char* Component(const std::string& complex_type) {
  return complex_type == "c64" ? "f32" : "f64";
}

class JitComplex : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const std::string& hlo, bool run_passes = true) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      EXPECT_TRUE(Matches(hlo, GetParam(), seed, run_passes)) << hlo;
    }
  }
};

TEST_P(JitComplex, Elementwise) {
  for (const std::string t : kComplexTypes) {
    const std::string f = Component(t);
    for (const char* d : kDims) {
      const std::string s = t + d;
      const std::string pred = absl::StrCat("pred", d);
      for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
      }
      Check(OneOp({s}, absl::StrCat(s, " negate(p0)")));
      Check(OneOp({s}, absl::StrCat(s, " copy(p0)")));
      Check(OneOp({s}, absl::StrCat(f, d, " real(p0)")));
      Check(OneOp({s}, absl::StrCat(f, d, " imag(p0)")));
      Check(OneOp({f + d, f + d}, absl::StrCat(s, " complex(p0, p1)")));
      Check(OneOp({s, s}, absl::StrCat(pred, " compare(p0, p1), direction=EQ")));
      Check(OneOp({s, s}, absl::StrCat(pred, " compare(p0, p1), direction=NE")));
      Check(OneOp({s, s}, absl::StrCat(pred, " compare(p0, p0), direction=EQ")));
      Check(OneOp({pred, s, s}, absl::StrCat(s, " select(p0, p1, p2)")));
      Check(OneOp({"pred[]", s, s}, absl::StrCat(s, " select(p0, p1, p2)")));
    }
  }
}

TEST_P(JitComplex, Convert) {
  for (const std::string t : kComplexTypes) {
    for (const char* d : {"[]", "[7]", "[19]", "[3,5]{0,1}"}) {
      const std::string s = t + d;
      for (const char* from : {"c64", "c128", "f32", "f64", "f16", "bf16", "s32", "s64", "u64",
                               "u8", "pred"}) {
        Check(OneOp({absl::StrCat(from, d)}, absl::StrCat(s, " convert(p0)")));
      }
      for (const char* to : {"f32", "f64", "f16", "bf16", "s32", "u8", "s64", "pred"}) {
        Check(OneOp({s}, absl::StrCat(to, d, " convert(p0)")));
      }
      Check(OneOp({s}, absl::StrCat(s, " bitcast-convert(p0)")));
      if (t == "c64") {
        for (const char* other : {"s64", "u64", "f64"}) {
          Check(OneOp({s}, absl::StrCat(other, d, " bitcast-convert(p0)")));
          Check(OneOp({absl::StrCat(other, d)}, absl::StrCat(s, " bitcast-convert(p0)")));
        }
      }
    }
  }
}

TEST_P(JitComplex, DataMovement) {
  for (const std::string t : kComplexTypes) {
    const std::string m = t + "[3,5]";
    const std::string ml = t + "[3,5]{0,1}";
    Check(OneOp({t + "[5]"}, absl::StrCat(t, "[4,3,5] broadcast(p0), dimensions={2}")));
    Check(OneOp({t + "[]"}, absl::StrCat(t, "[7,3] broadcast(p0), dimensions={}")));
    Check(OneOp({ml}, absl::StrCat(t, "[5,3] transpose(p0), dimensions={1,0}")));
    Check(OneOp({m}, absl::StrCat(t, "[15] reshape(p0)")));
    Check(OneOp({t + "[15]"}, absl::StrCat(t, "[5,3]{0,1} reshape(p0)")));
    Check(OneOp({m}, absl::StrCat(t, "[3,5] bitcast(p0)")));
    Check(OneOp({m}, absl::StrCat(t, "[2,2] slice(p0), slice={[1:3], [0:5:3]}")));
    Check(OneOp({m}, absl::StrCat(t, "[3,5] reverse(p0), dimensions={0,1}")));
    Check(OneOp({m, t + "[]"},
              absl::StrCat(t, "[6,12] pad(p0, p1), padding=1_2x2_1_1")));
    Check(OneOp({m, t + "[3,2]", t + "[3,1]"},
              absl::StrCat(t, "[3,8] concatenate(p0, p1, p2), dimensions={1}")));
    Check(OneOp({m, "s32[]", "s32[]"},
              absl::StrCat(t, "[2,3] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={2,3}")));
    Check(OneOp({m, t + "[2,2]", "s32[]", "s32[]"},
              absl::StrCat(t, "[3,5] dynamic-update-slice(p0, p1, p2, p3)")));
    // Constants, inside a fusion and as their own step.
    Check(absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", t, "[3] parameter(0)\n  c = ", t,
                       "[3] constant({(1, -2), (inf, 0.5), (-0, nan)})\n  ROOT r = ", t,
                       "[3] multiply(p0, c)\n}\n"));
  }
}

// A chain of supported complex operations fused into one loop kernel.
TEST_P(JitComplex, FusedChains) {
  for (const std::string t : kComplexTypes) {
    const std::string f = Component(t);
    for (const char* d : {"[7]", "[19]", "[4,33]", "[2,1,9]{1,0,2}"}) {
      const std::string s = t + d;
      const std::string hlo = absl::StrCat(
          "HloModule m\nENTRY e {\n"
          "  p0 = ", s, " parameter(0)\n"
          "  p1 = ", s, " parameter(1)\n"
          "  p2 = ", f, d, " parameter(2)\n"
          "  a = ", s, " multiply(p0, p1)\n"
          "  b = ", s, " add(a, p0)\n"
          "  z = ", s, " convert(p2)\n"
          "  c = ", s, " subtract(b, z)\n"
          "  n = ", s, " negate(c)\n"
          "  re = ", f, d, " real(n)\n"
          "  im = ", f, d, " imag(a)\n"
          "  w = ", s, " complex(im, re)\n"
          "  e = pred", d, " compare(w, p1), direction=NE\n"
          "  m = ", s, " maximum(w, p0)\n"
          "  ROOT r = ", s, " select(e, m, n)\n}\n");
      Check(hlo);
      Check(hlo, false);
      // With the pass pipeline the chain is one loop fusion: one kernel.
      CompileReport report;
      EXPECT_TRUE(Matches(hlo, GetParam(), 7, true, &report)) << hlo;
      EXPECT_EQ(report.kernels.size(), 1u) << hlo;
    }
  }
}

// Every pair of edge values through multiply (and add for good measure):
// exercises all branches of the C99 Annex G recovery.
TEST_P(JitComplex, MultiplyEdgeTable) {
  for (const ElementType type : {ElementType::kC64, ElementType::kC128}) {
    const std::vector<double> edges = EdgeComponents(type);
    std::vector<C> values;
    for (double re : edges) {
      for (double im : edges) values.push_back(C(re, im));
    }
    const int64_t n = static_cast<int64_t>(values.size());
    const Shape shape = Shape::Array(type, {n, n});
    Literal x(shape), y(shape);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        x.SetComplex({i, j}, values[i]);
        y.SetComplex({i, j}, values[j]);
      }
    }
    const std::string s = absl::StrCat(ElementTypeName(type), "[", n, ",", n, "]");
    for (const char* op : {"multiply", "divide", "add", "subtract", "maximum"}) {
      absl::StatusOr<std::unique_ptr<Module>> module =
          ParseVerified(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<Literal> arguments;
      arguments.push_back(x);
      arguments.push_back(y);
      EXPECT_TRUE(MatchesOn(**module, arguments, GetParam())) << s << " " << op;
    }
  }
}

// The complex math the kernels call helpers for (jit/kernel/complex_calls.h).
const char* kMathUnary[] = {"abs",  "sqrt",  "rsqrt", "cbrt",     "exponential",
                            "exponential-minus-one", "log", "log-plus-one", "sign",
                            "sine", "cosine", "tan",  "tanh",     "logistic",
                            "acos", "acosh", "asin",  "asinh",    "atan",  "atanh",
                            "cosh", "sinh"};
const char* kMathBinary[] = {"power", "atan2"};

TEST_P(JitComplex, MathCalls) {
  for (const std::string t : kComplexTypes) {
    const std::string f = Component(t);
    for (const char* d : {"[]", "[0]", "[1]", "[7]", "[19]", "[3,5]{0,1}"}) {
      const std::string s = t + d;
      for (const char* op : kMathUnary) {
        const std::string result = std::string(op) == "abs" ? f + d : s;
        Check(OneOp({s}, absl::StrCat(result, " ", op, "(p0)")));
      }
      for (const char* op : kMathBinary) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
        Check(OneOp({s}, absl::StrCat(s, " ", op, "(p0, p0)")));
      }
    }
  }
}

// Every edge value (all pairs of edge components) through each unary call,
// every pair of them through power and atan2.
TEST_P(JitComplex, MathEdgeTable) {
  for (const ElementType type : {ElementType::kC64, ElementType::kC128}) {
    const std::vector<double> edges = EdgeComponents(type);
    std::vector<C> values;
    for (double re : edges) {
      for (double im : edges) values.push_back(C(re, im));
    }
    const int64_t n = static_cast<int64_t>(values.size());
    const std::string name(ElementTypeName(type));
    const std::string f = type == ElementType::kC64 ? "f32" : "f64";
    {
      Literal x(Shape::Array(type, {n}));
      for (int64_t i = 0; i < n; ++i) x.SetComplex({i}, values[i]);
      const std::string s = absl::StrCat(name, "[", n, "]");
      for (const char* op : kMathUnary) {
        const std::string result =
            std::string(op) == "abs" ? absl::StrCat(f, "[", n, "]") : s;
        absl::StatusOr<std::unique_ptr<Module>> module =
            ParseVerified(OneOp({s}, absl::StrCat(result, " ", op, "(p0)")));
        ASSERT_TRUE(module.ok()) << module.status();
        std::vector<Literal> arguments;
        arguments.push_back(x);
        EXPECT_TRUE(MatchesOn(**module, arguments, GetParam())) << s << " " << op;
      }
    }
    const Shape shape = Shape::Array(type, {n, n});
    Literal x(shape), y(shape);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        x.SetComplex({i, j}, values[i]);
        y.SetComplex({i, j}, values[j]);
      }
    }
    const std::string s = absl::StrCat(name, "[", n, ",", n, "]");
    for (const char* op : kMathBinary) {
      absl::StatusOr<std::unique_ptr<Module>> module =
          ParseVerified(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
      ASSERT_TRUE(module.ok()) << module.status();
      std::vector<Literal> arguments;
      arguments.push_back(x);
      arguments.push_back(y);
      EXPECT_TRUE(MatchesOn(**module, arguments, GetParam())) << s << " " << op;
    }
  }
}

// c64 abs is component code (sqrt of the sum of squares in double, not a
// hypot call): random bit patterns of both parts, parts whose ratio puts
// |z| = |re| + im^2 / 2|re| near the midpoint between two floats (where a
// double rounding would show), and small integers (exact Pythagorean
// triples), bit for bit against the evaluator's hypot.
TEST_P(JitComplex, C64AbsRandomAndNearTies) {
  std::mt19937_64 rng(28);
  std::vector<C> values;
  for (int i = 0; i < 6000; ++i) {
    const uint64_t bits = rng();
    float re, im;
    const uint32_t lo = static_cast<uint32_t>(bits), hi = static_cast<uint32_t>(bits >> 32);
    std::memcpy(&re, &lo, 4);
    std::memcpy(&im, &hi, 4);
    values.push_back(C(re, im));
    const float ratio = std::ldexp(1.0f + static_cast<float>(rng() & 0xffff) / 65536.0f,
                                   -8 - static_cast<int>(rng() % 9));
    values.push_back(C(re, re * ratio));
  }
  for (int a = 0; a < 60; ++a) {
    for (int b = 0; b < 60; ++b) values.push_back(C(a, b));
  }
  const int64_t n = static_cast<int64_t>(values.size());
  Literal x(Shape::Array(ElementType::kC64, {n}));
  for (int64_t i = 0; i < n; ++i) x.SetComplex({i}, values[i]);
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(OneOp({absl::StrCat("c64[", n, "]")}, absl::StrCat("f32[", n, "] abs(p0)")));
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  arguments.push_back(x);
  EXPECT_TRUE(MatchesOn(**module, arguments, GetParam()));
}

// Calls among component code in one kernel, in a reduction's body (a kInput
// fusion) and before it (a per-row value).
TEST_P(JitComplex, MathCallsFused) {
  for (const std::string t : kComplexTypes) {
    const std::string f = Component(t);
    for (const char* d : {"[7]", "[4,33]", "[2,1,9]{1,0,2}"}) {
      const std::string s = t + d;
      const std::string hlo = absl::StrCat(
          "HloModule m\nENTRY e {\n"
          "  p0 = ", s, " parameter(0)\n"
          "  p1 = ", s, " parameter(1)\n"
          "  a = ", s, " exponential(p0)\n"
          "  b = ", s, " sqrt(p1)\n"
          "  c = ", s, " multiply(a, b)\n"
          "  g = ", s, " power(c, p0)\n"
          "  h = ", f, d, " abs(g)\n"
          "  z = ", s, " convert(h)\n"
          "  l = ", s, " log(p1)\n"
          "  k = ", s, " atan2(l, z)\n"
          "  n = ", s, " sign(k)\n"
          "  ROOT r = ", s, " add(n, b)\n}\n");
      Check(hlo);
      Check(hlo, false);
      CompileReport report;
      EXPECT_TRUE(Matches(hlo, GetParam(), 7, true, &report)) << hlo;
      EXPECT_EQ(report.kernels.size(), 1u) << hlo;
    }
    // Sum of exp over rows (the call in the reduction body), each row scaled
    // by sqrt of its own value (a call before the reduction loop).
    const std::string reduce = absl::StrCat(
        "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
        "[] parameter(1)\n  ROOT s = ", t, "[] add(a, b)\n}\nENTRY e {\n  p0 = ", t,
        "[5,9] parameter(0)\n  p1 = ", t, "[5] parameter(1)\n  q = ", t,
        "[5] sqrt(p1)\n  w = ", t, "[5,9] broadcast(q), dimensions={0}\n  x = ", t,
        "[5,9] exponential(p0)\n  m = ", t, "[5,9] multiply(x, w)\n  z = ", t,
        "[] constant((0, 0))\n  ROOT y = ", t,
        "[5] reduce(m, z), dimensions={1}, to_apply=r\n}\n");
    Check(reduce);
    // A call before a row-vectorised real reduction (maximum reassociates
    // exactly): the scalar |p1| broadcast into the vector body.
    const std::string row = absl::StrCat(
        "HloModule m\nr {\n  a = ", f, "[] parameter(0)\n  b = ", f,
        "[] parameter(1)\n  ROOT s = ", f, "[] maximum(a, b)\n}\nENTRY e {\n  p0 = ", f,
        "[5,64] parameter(0)\n  p1 = ", t, "[5] parameter(1)\n  q = ", f,
        "[5] abs(p1)\n  w = ", f, "[5,64] broadcast(q), dimensions={0}\n  m = ", f,
        "[5,64] multiply(p0, w)\n  z = ", f, "[] constant(0)\n  ROOT y = ", f,
        "[5] reduce(m, z), dimensions={1}, to_apply=r\n}\n");
    Check(row);
  }
}

// Operations still interpreted stay correct (the driver falls back), and are
// reported as interpreted.
TEST_P(JitComplex, UnsupportedFallsBack) {
  // (fft and reduce-precision, the examples here before, are compiled now;
  // s64 -> f8e8m0fnu is refused: docs/types.md.)
  for (const char* root : {"f8e8m0fnu[5] convert(p0)"}) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(OneOp({"s64[5]"}, root));
    ASSERT_TRUE(module.ok()) << module.status();
    CheckOptions options;
    options.isa = GetParam();
    options.require_all_compiled = false;
    CompileReport report;
    options.report = &report;
    EXPECT_TRUE(MatchesEvaluator(**module, options)) << root;
    EXPECT_FALSE(report.interpreted_steps.empty()) << root;
  }
}

// Reductions with complex accumulators (two slots each), in the evaluator's
// order: sums, products, a variadic (complex, f32) reducer, and a kInput
// fusion of an elementwise producer with its reduce.
TEST_P(JitComplex, Reduce) {
  for (const std::string t : {"c64", "c128"}) {
    for (const char* op : {"add", "multiply", "maximum"}) {
      for (const auto& [in, out, dims] : std::vector<std::tuple<std::string, std::string,
                                                                std::string>>{
               {"[4,5]", "[4]", "1"}, {"[4,5]", "[5]", "0"}, {"[19]", "[]", "0"},
               {"[3,1,7]", "[3]", "1,2"}, {"[2,3]", "[2,3]", ""}, {"[1,6]", "[6]", "0"},
               {"[0,3]", "[3]", "0"}}) {
        for (const char* init : {"(0, 0)", "(1, -0)"}) {
          const std::string hlo = absl::StrCat(
              "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  b = ", t,
              "[] parameter(1)\n  ROOT s = ", t, "[] ", op, "(a, b)\n}\nENTRY e {\n  p0 = ", t,
              in, " parameter(0)\n  p1 = ", t, in, " parameter(1)\n  m = ", t, in,
              " multiply(p0, p1)\n  z = ", t, "[] constant(", init, ")\n  ROOT x = ", t, out,
              " reduce(m, z), dimensions={", dims, "}, to_apply=r\n}\n");
          Check(hlo);
        }
      }
    }
    const std::string f = Component(t);
    // Variadic: (complex sum, count of elements with a NaN part).
    const std::string variadic = absl::StrCat(
        "HloModule m\nr {\n  a = ", t, "[] parameter(0)\n  n = ", f, "[] parameter(1)\n  b = ",
        t, "[] parameter(2)\n  k = ", f, "[] parameter(3)\n  s = ", t, "[] add(a, b)\n  ",
        "c = ", f, "[] add(n, k)\n  ROOT t = (", t, "[], ", f, "[]) tuple(s, c)\n}\n",
        "ENTRY e {\n  p0 = ", t, "[5,9] parameter(0)\n  q = ", f, "[5,9] real(p0)\n  ",
        "z = ", t, "[] constant((0, 0))\n  y = ", f, "[] constant(0)\n  ROOT x = (", t, "[5], ",
        f, "[5]) reduce(p0, q, z, y), dimensions={1}, to_apply=r\n}\n");
    Check(variadic);
  }
}

// A complex call inside the output loop of a kernel that keeps many values
// live across it: jax's det of c128[2,5,5] (models/linalg/fixtures/det_c128),
// the fusion of its diagonal's phase product as the pipeline formed it (run
// with the passes off, so that the kernel stays this one). On AArch64
// asmjit's register allocator kept buffer 0's pointer in x30, which the
// call's `blr` overwrites: the second batch read its LU info through the
// return address and gave NaN (a64_scalar.cc, ClobberLinkRegister). The
// info is 0 (success) for both batches, so every result is a number.
constexpr char kDetPhase[] = R"(
HloModule det_phase

region_6.10 {
  reduce_prod.3 = c128[] parameter(0)
  reduce_prod.4 = c128[] parameter(1)
  ROOT reduce_prod.5 = c128[] multiply(reduce_prod.3, reduce_prod.4)
}

fused_computation.3 {
  param_0 = s32[2]{0} parameter(0)
  constant.42 = s32[] constant(0)
  broadcast.18 = s32[2]{0} broadcast(constant.42), dimensions={}
  lu.18 = pred[2]{0} compare(param_0, broadcast.18), direction=GE
  lu.22 = pred[2,5,5]{2,1,0} broadcast(lu.18), dimensions={0}
  param_1 = c128[2,5,5]{1,2,0} parameter(1)
  lu.14.copy = c128[2,5,5]{2,1,0} copy(param_1)
  constant.41 = c128[] constant((nan, nan))
  lu.12 = c128[2,5,5]{2,1,0} broadcast(constant.41), dimensions={}
  lu.23 = c128[2,5,5]{2,1,0} select(lu.22, lu.14.copy, lu.12)
  iota.4 = s64[5]{0} iota(), iota_dimension=0
  constant.29 = s64[] constant(0)
  broadcast.12 = s64[5]{0} broadcast(constant.29), dimensions={}
  lt.14 = pred[5]{0} compare(iota.4, broadcast.12), direction=LT
  iota.1 = s64[5]{0} iota(), iota_dimension=0
  constant.28 = s64[] constant(5)
  broadcast.11 = s64[5]{0} broadcast(constant.28), dimensions={}
  add.16 = s64[5]{0} add(iota.1, broadcast.11)
  select_n.12 = s64[5]{0} select(lt.14, add.16, iota.4)
  convert_element_type.4 = s32[5]{0} convert(select_n.12)
  broadcast_in_dim.12 = s32[5,1]{1,0} bitcast(convert_element_type.4)
  concatenate.1 = s32[5,2]{1,0} concatenate(broadcast_in_dim.12, broadcast_in_dim.12), dimensions={1}
  gather.7 = c128[2,5]{1,0} gather(lu.23, concatenate.1), offset_dims={0}, collapsed_slice_dims={1,2}, start_index_map={1,2}, index_vector_dim=1, slice_sizes={2,1,1}
  constant.1 = s32[] constant(0)
  broadcast.1 = s32[2]{0} broadcast(constant.1), dimensions={}
  lu.1 = pred[2]{0} compare(param_0, broadcast.1), direction=GE
  lu.2 = pred[2,5,5]{2,1,0} broadcast(lu.1), dimensions={0}
  lu.14.copy.1 = c128[2,5,5]{2,1,0} copy(param_1)
  constant.2 = c128[] constant((nan, nan))
  lu.3 = c128[2,5,5]{2,1,0} broadcast(constant.2), dimensions={}
  lu.4 = c128[2,5,5]{2,1,0} select(lu.2, lu.14.copy.1, lu.3)
  iota.2 = s64[5]{0} iota(), iota_dimension=0
  constant.3 = s64[] constant(0)
  broadcast.2 = s64[5]{0} broadcast(constant.3), dimensions={}
  lt.1 = pred[5]{0} compare(iota.2, broadcast.2), direction=LT
  iota.3 = s64[5]{0} iota(), iota_dimension=0
  constant.4 = s64[] constant(5)
  broadcast.3 = s64[5]{0} broadcast(constant.4), dimensions={}
  add.1 = s64[5]{0} add(iota.3, broadcast.3)
  select_n.1 = s64[5]{0} select(lt.1, add.1, iota.2)
  convert_element_type.1 = s32[5]{0} convert(select_n.1)
  broadcast_in_dim.1 = s32[5,1]{1,0} bitcast(convert_element_type.1)
  concatenate.2 = s32[5,2]{1,0} concatenate(broadcast_in_dim.1, broadcast_in_dim.1), dimensions={1}
  gather.1 = c128[2,5]{1,0} gather(lu.4, concatenate.2), offset_dims={0}, collapsed_slice_dims={1,2}, start_index_map={1,2}, index_vector_dim=1, slice_sizes={2,1,1}
  abs.2 = f64[2,5]{1,0} abs(gather.1)
  convert_element_type.13 = c128[2,5]{1,0} convert(abs.2)
  div.1 = c128[2,5]{1,0} divide(gather.7, convert_element_type.13)
  constant.46 = c128[] constant((1, 0))
  ROOT reduce_prod.7 = c128[2]{0} reduce(div.1, constant.46), dimensions={1}, to_apply=region_6.10
}

ENTRY e {
  p0 = s32[2]{0} parameter(0)
  p1 = c128[2,5,5]{1,2,0} parameter(1)
  ROOT f = c128[2]{0} fusion(p0, p1), kind=kInput, calls=fused_computation.3
}
)";

TEST_P(JitComplex, CallInOutputLoopKeepsValuesAcrossIt) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kDetPhase);
  ASSERT_TRUE(module.ok()) << module.status();
  const std::vector<Instruction*> parameters = (*module)->entry()->parameters();
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Literal> arguments;
    arguments.push_back(Literal(parameters[0]->shape()));  // info: zeros.
    // Ordinary values (no edge values: a NaN product would hide the bug).
    Literal lu(parameters[1]->shape());
    std::uniform_real_distribution<double> component(-2.0, 2.0);
    for (int64_t i = 0; i < lu.element_count(); ++i) {
      const double re = component(rng);
      lu.SetComplex(LinearIndex(lu.shape(), i), C(re, component(rng)));
    }
    arguments.push_back(std::move(lu));
    EXPECT_TRUE(MatchesOn(**module, arguments, GetParam(), /*run_passes=*/false));
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitComplex, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
