// f16 and bf16 in vector code (jit/x64/x64_half.cc): kernels whose values
// are 16-bit floats compute in f32 lanes, widening at loads, rounding every
// f16/bf16 result to its type and narrowing at stores. Checked against the
// evaluator bit for bit (any NaN equals any NaN; math functions within
// MathUlpTolerance) on every instruction set the host runs, and each case
// long enough for a vector must be vectorised:
//   - every binary operation with a vector form on all pairs of about 170
//     edge values per type (zeros of both signs, infinities, quiet and
//     signalling NaNs, subnormals, the largest finite values so that sums
//     and products overflow on narrowing, powers of two whose sums are ties
//     that round to even), with an odd length (vector tails), and with one
//     operand broadcast;
//   - every unary operation with a vector form and every vectorised
//     conversion on all 65,536 bit patterns, and f32 -> f16/bf16 at every
//     rounding boundary (each value, each tie, the f32 neighbours of both);
//   - compare, select and clamp; fused chains at lengths around each vector
//     width; math functions; row (maximum) and column (sum) reductions with
//     16-bit accumulators; mixed programs (bf16 loads reduced in f32); a
//     kernel split between two threads.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr ElementType kHalves[] = {ElementType::kF16, ElementType::kBF16};

std::string Name(ElementType type) { return std::string(ElementTypeName(type)); }

class JitHalfVector : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs `hlo` compiled (no interpreted step; with `vectorized`, some
  // kernel must have vector code) and evaluated on `arguments`.
  void Check(const std::string& hlo, const std::vector<Literal>& arguments,
             bool vectorized = true, int threads = 1) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status() << "\n" << hlo;
    CompileOptions options;
    options.isa = GetParam();
    options.threads = threads;
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    for (const std::string& step : UnexpectedInterpretedSteps(report)) {
      ADD_FAILURE() << step << "\n" << hlo;
    }
    if (vectorized && !HostTargetIsPartial()) {
      int lanes = 1;
      for (const KernelInfo& kernel : report.kernels) lanes = std::max(lanes, kernel.vector_lanes);
      EXPECT_GT(lanes, 1) << "no kernel is vectorised\n" << hlo;
    }
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(Difference(*expected, *actual), "") << hlo;
  }
  // With random arguments rich in edge values (several seeds).
  void CheckRandom(const std::string& hlo, int ulp_tolerance = 0, bool vectorized = true) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.ulp_tolerance = ulp_tolerance;
      options.require_vectorized = vectorized && !HostTargetIsPartial();
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
    }
  }
};

Literal BitsLiteral(ElementType type, const std::vector<uint64_t>& bits) {
  Literal literal(Shape::Array(type, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) literal.SetBitsLinear(i, bits[i]);
  return literal;
}

uint64_t BitsOf(ElementType type, double v) { return DoubleToFloatBits(type, v); }

// Edge values of a 16-bit float type as bit patterns (see the file comment),
// then every 1024th pattern and a few random ones.
std::vector<uint64_t> EdgeBits(ElementType type) {
  const bool bf16 = type == ElementType::kBF16;
  std::vector<uint64_t> bits = {
      0x0000, 0x8000,                               // zeros
      0x0001, 0x8001, 0x0002, 0x0003,               // smallest subnormals
      bf16 ? 0x007Fu : 0x03FFu, bf16 ? 0x0080u : 0x0400u,  // largest subnormal, smallest normal
      bf16 ? 0x7F7Fu : 0x7BFFu, bf16 ? 0xFF7Fu : 0xFBFFu,  // largest finite
      bf16 ? 0x7F7Eu : 0x7BFEu,
      bf16 ? 0x7F80u : 0x7C00u, bf16 ? 0xFF80u : 0xFC00u,  // infinities
      bf16 ? 0x7FC0u : 0x7E00u, bf16 ? 0xFFC1u : 0xFE01u,  // quiet NaNs
      bf16 ? 0x7F81u : 0x7C01u, bf16 ? 0xFFA0u : 0xFD00u,  // signalling NaNs
  };
  for (double v : {1.0, -1.0, 2.0, 3.0, 0.5, 0.1, -0.1, 1.5, 7.0, 100.0, 1e-3, 65504.0, 3e38,
                   1e-38, 1e-40, 6e-5, 6e-8}) {
    bits.push_back(BitsOf(type, v));
  }
  // Ties when added to 1 and to each other: 2^-k and 3 * 2^-k around the
  // type's precision.
  const int p = FloatMantissaBits(type);
  for (int k = p - 1; k <= p + 2; ++k) {
    bits.push_back(BitsOf(type, std::ldexp(1.0, -k)));
    bits.push_back(BitsOf(type, 3 * std::ldexp(1.0, -k - 1)));
    bits.push_back(BitsOf(type, 1.0 + std::ldexp(1.0, -p)));  // 1 + ulp
  }
  for (uint64_t b = 0; b < 0x10000; b += 1024) bits.push_back(b + 0x123);
  std::mt19937_64 rng(7);
  for (int i = 0; i < 64; ++i) bits.push_back(rng() & 0xFFFF);
  return bits;
}

// All 65,536 patterns, then three more (an odd length).
std::vector<uint64_t> AllPatterns() {
  std::vector<uint64_t> bits;
  for (uint64_t i = 0; i < 0x10000; ++i) bits.push_back(i);
  for (uint64_t i : {0x3C00u, 0x7FC0u, 0x0001u}) bits.push_back(i);
  return bits;
}

TEST_P(JitHalfVector, BinaryOnEdgePairs) {
  for (ElementType type : kHalves) {
    const std::vector<uint64_t> edge = EdgeBits(type);
    std::vector<uint64_t> x, y;
    for (uint64_t a : edge) {
      for (uint64_t b : edge) {
        x.push_back(a);
        y.push_back(b);
      }
    }
    x.push_back(0x3C00);  // an odd length
    y.push_back(0x0001);
    const Literal lx = BitsLiteral(type, x);
    const Literal ly = BitsLiteral(type, y);
    const std::string t = absl::StrCat(Name(type), "[", x.size(), "]");
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
      SCOPED_TRACE(absl::StrCat(Name(type), " ", op));
      Check(OneOp({t, t}, absl::StrCat(t, " ", op, "(p0, p1)")), {lx, ly});
    }
    for (const char* direction : {"LT", "LE", "EQ", "NE", "GT", "GE"}) {
      Check(OneOp({t, t}, absl::StrCat("pred[", x.size(), "] compare(p0, p1), direction=",
                                       direction, ", type=FLOAT")),
            {lx, ly});
      // The compare feeding a select, as its users do.
      Check(ModuleText({t, t},
                       {absl::StrCat("c = pred[", x.size(), "] compare(p0, p1), direction=",
                                     direction),
                        absl::StrCat("r = ", t, " select(c, p0, p1)")}),
            {lx, ly});
    }
    Check(ModuleText({t, t}, {absl::StrCat("r = ", t, " clamp(p1, p0, p1)")}), {lx, ly});
    // One operand broadcast (a loop-invariant load).
    const std::string n = Name(type);
    for (uint64_t scalar : {edge[8], edge[20], edge[11], edge[15]}) {
      Literal s(Shape::Array(type, {}));
      s.SetBitsLinear(0, scalar);
      Check(ModuleText({t, absl::StrCat(n, "[]")},
                       {absl::StrCat("b = ", t, " broadcast(p1), dimensions={}"),
                        absl::StrCat("m = ", t, " multiply(p0, b)"),
                        absl::StrCat("r = ", t, " add(m, b)")}),
            {lx, s});
    }
  }
}

TEST_P(JitHalfVector, UnaryAndConvertsOnEveryPattern) {
  const std::vector<uint64_t> bits = AllPatterns();
  for (ElementType type : kHalves) {
    const Literal l = BitsLiteral(type, bits);
    const std::string t = absl::StrCat(Name(type), "[", bits.size(), "]");
    const std::string size = absl::StrCat("[", bits.size(), "]");
    for (const char* op : {"negate", "abs", "sqrt", "floor", "ceil", "round-nearest-even",
                           "round-nearest-afz", "sign"}) {
      SCOPED_TRACE(absl::StrCat(Name(type), " ", op));
      Check(OneOp({t}, absl::StrCat(t, " ", op, "(p0)")), {l});
    }
    for (const char* to : {"f32", "f16", "bf16", "s32", "pred"}) {
      if (Name(type) == to) continue;  // No kernel: the convert is removed.
      SCOPED_TRACE(absl::StrCat(Name(type), " -> ", to));
      Check(OneOp({t}, absl::StrCat(to, size, " convert(p0)")), {l});
    }
    // Through f32 and back: data movement keeps every bit pattern.
    Check(ModuleText({t}, {absl::StrCat("w = f32", size, " convert(p0)"),
                           absl::StrCat("r = ", t, " convert(w)")}),
          {l});
    Check(ModuleText({t}, {absl::StrCat("c = pred", size, " convert(p0)"),
                           absl::StrCat("r = ", t, " convert(c)")}),
          {l});
  }
}

TEST_P(JitHalfVector, F32ToHalfAtEveryRoundingBoundary) {
  for (ElementType type : kHalves) {
    // Each finite value of the type, the midpoint to the next one, and the
    // f32 neighbours of both; the overflow threshold; specials; f32
    // subnormals.
    std::vector<uint64_t> f32;
    auto push = [&](float f) {
      uint32_t b;
      std::memcpy(&b, &f, 4);
      f32.push_back(b);
    };
    const float inf = std::numeric_limits<float>::infinity();
    for (uint64_t b = 0; b < 0x8000; ++b) {
      const double v = FloatBitsToDouble(type, b);
      const double next = FloatBitsToDouble(type, b + 1);
      if (!std::isfinite(v)) continue;
      const double mid = std::isfinite(next) ? (v + next) / 2 : v + (v - FloatBitsToDouble(type, b - 1)) / 2;
      for (double sign : {1.0, -1.0}) {
        for (double point : {v, mid}) {
          const float f = static_cast<float>(sign * point);
          push(f);
          push(std::nextafter(f, inf));
          push(std::nextafter(f, -inf));
        }
      }
    }
    for (float f : {inf, -inf, std::nanf(""), -std::nanf(""), 0x1p-149f, -0x1p-140f, 0x1p-127f,
                    3.4e38f, -3.4e38f, 65520.0f, 65519.99f}) {
      push(f);
    }
    f32.push_back(0x7F800001);  // signalling NaNs
    f32.push_back(0xFFA00001);
    const std::string size = absl::StrCat("[", f32.size(), "]");
    Check(OneOp({absl::StrCat("f32", size)}, absl::StrCat(Name(type), size, " convert(p0)")),
          {BitsLiteral(ElementType::kF32, f32)});
  }
}

TEST_P(JitHalfVector, ChainsAtEveryTailLength) {
  for (ElementType type : kHalves) {
    const std::string n = Name(type);
    for (int size : {1, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 65, 100, 129}) {
      SCOPED_TRACE(absl::StrCat(n, "[", size, "]"));
      const std::string t = absl::StrCat(n, "[", size, "]");
      const std::string f = absl::StrCat("f32[", size, "]");
      // Every step rounds to the type; a mixed f32 operand; a clamp by
      // constants; results in both types (a loop fusion with two outputs).
      CheckRandom(ModuleText(
                      {t, t, f},
                      {absl::StrCat("a = ", t, " multiply(p0, p1)"),
                       absl::StrCat("c = ", t, " convert(p2)"),
                       absl::StrCat("s = ", t, " add(a, c)"),
                       absl::StrCat("d = ", t, " divide(s, p1)"),
                       absl::StrCat("q = ", t, " sqrt(d)"),
                       absl::StrCat("l = ", n, "[] constant(-2)"),
                       absl::StrCat("h = ", n, "[] constant(3.5)"),
                       absl::StrCat("lb = ", t, " broadcast(l), dimensions={}"),
                       absl::StrCat("hb = ", t, " broadcast(h), dimensions={}"),
                       absl::StrCat("k = ", t, " clamp(lb, s, hb)"),
                       absl::StrCat("m = ", t, " maximum(k, q)"),
                       absl::StrCat("w = ", f, " convert(m)"),
                       absl::StrCat("x = ", f, " multiply(w, p2)"),
                       absl::StrCat("r = (", t, ", ", f, ") tuple(m, x)")}),
                  0, /*vectorized=*/size >= 16);
    }
  }
}

TEST_P(JitHalfVector, MathFunctions) {
  for (ElementType type : kHalves) {
    const std::string t = absl::StrCat(Name(type), "[1001]");
    for (const char* op : {"exponential", "tanh", "logistic", "log"}) {
      SCOPED_TRACE(absl::StrCat(Name(type), " ", op));
      CheckRandom(OneOp({t}, absl::StrCat(t, " ", op, "(p0)")), MathUlpTolerance(type));
    }
    // GELU's tanh form, as JAX writes it in bf16 (the root is the math
    // function's product, so one rounding of tolerance).
    CheckRandom(ModuleText(
                    {t},
                    {absl::StrCat("c = ", Name(type), "[] constant(0.7978845608)"),
                     absl::StrCat("cb = ", t, " broadcast(c), dimensions={}"),
                     absl::StrCat("x3 = ", t, " multiply(p0, p0)"),
                     absl::StrCat("u = ", t, " multiply(x3, cb)"),
                     absl::StrCat("th = ", t, " tanh(u)"),
                     absl::StrCat("r = ", t, " multiply(th, p0)")}),
                MathUlpTolerance(type));
  }
}

TEST_P(JitHalfVector, Reductions) {
  for (ElementType type : kHalves) {
    const std::string n = Name(type);
    const std::string reducers = absl::StrCat(
        "HloModule m\nmax {\n  a = ", n, "[] parameter(0)\n  b = ", n,
        "[] parameter(1)\n  ROOT s = ", n, "[] maximum(a, b)\n}\nmin {\n  a = ", n,
        "[] parameter(0)\n  b = ", n, "[] parameter(1)\n  ROOT s = ", n,
        "[] minimum(a, b)\n}\nadd {\n  a = ", n, "[] parameter(0)\n  b = ", n,
        "[] parameter(1)\n  ROOT s = ", n, "[] add(a, b)\n}\naddf {\n  a = f32[] parameter(0)\n"
        "  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n");
    for (int row : {7, 16, 67, 130}) {
      SCOPED_TRACE(absl::StrCat(n, " row ", row));
      // Row maximum and minimum in the 16-bit type (exact in any order:
      // vectorised along the row).
      for (const char* reducer : {"max", "min"}) {
        CheckRandom(absl::StrCat(reducers, "ENTRY e {\n  p0 = ", n, "[9,", row,
                                 "] parameter(0)\n  z = ", n,
                                 "[] constant(-inf)\n  ROOT r = ", n,
                                 "[9] reduce(p0, z), dimensions={1}, to_apply=", reducer, "\n}\n"),
                    0, /*vectorized=*/row >= 16);
      }
      // Column sums with a 16-bit accumulator (vectorised across outputs,
      // each lane in the scalar order: exact).
      CheckRandom(absl::StrCat(reducers, "ENTRY e {\n  p0 = ", n, "[13,", row,
                               "] parameter(0)\n  z = ", n, "[] constant(0)\n  ROOT r = ", n, "[",
                               row, "] reduce(p0, z), dimensions={0}, to_apply=add\n}\n"),
                  0, /*vectorized=*/row >= 16);
      // Mixed: 16-bit loads widened to f32 and reduced in f32 along the
      // row (vectorised; the f32 sum is reassociated, so a bf16 result may
      // differ by one rounding), then scaled back in the type.
      CheckRandom(absl::StrCat(reducers, "ENTRY e {\n  p0 = ", n, "[5,", row,
                               "] parameter(0)\n  w = f32[5,", row,
                               "] convert(p0)\n  z = f32[] constant(0)\n  s = f32[5] reduce(w, z), "
                               "dimensions={1}, to_apply=addf\n  ROOT r = ", n,
                               "[5] convert(s)\n}\n"),
                  1, /*vectorized=*/row >= 16);
    }
  }
}

TEST_P(JitHalfVector, TwoThreads) {
  // A kernel split between threads (ranges at multiples of 64 elements)
  // gives the same bits: each element runs the same code.
  for (ElementType type : kHalves) {
    const std::vector<uint64_t> edge = EdgeBits(type);
    std::vector<uint64_t> x, y;
    for (int i = 0; i < 100003; ++i) {
      x.push_back(edge[i % edge.size()]);
      y.push_back(edge[(i * 7 + 3) % edge.size()]);
    }
    const std::string t = absl::StrCat(Name(type), "[", x.size(), "]");
    Check(ModuleText({t, t}, {absl::StrCat("a = ", t, " multiply(p0, p1)"),
                              absl::StrCat("r = ", t, " add(a, p0)")}),
          {BitsLiteral(type, x), BitsLiteral(type, y)}, true, /*threads=*/2);
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitHalfVector, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
