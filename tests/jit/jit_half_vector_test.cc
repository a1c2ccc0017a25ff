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
    Literal expected, actual;
    Run(hlo, arguments, vectorized, threads, &expected, &actual);
    if (::testing::Test::HasFatalFailure()) return;
    EXPECT_EQ(Difference(expected, actual), "") << hlo;
  }
  // The evaluator's result and the compiled one's, for checks of their own.
  void Run(const std::string& hlo, const std::vector<Literal>& arguments, bool vectorized,
           int threads, Literal* expected_out, Literal* actual_out) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status() << "\n" << hlo;
    CompileOptions options;
    options.isa = GetParam();
    options.threads = threads;
    options.split_min_chunk_ns = 0;  // Split every kernel that can be: the split is tested.
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
    *expected_out = std::move(*expected);
    *actual_out = std::move(*actual);
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

// Row sums and products with a 16-bit accumulator, vectorised along the
// row: each lane applies the reducer (rounding to the type) to every
// lanes-th element, and the lanes are combined with the reducer too
// (docs/types.md, "Reductions in f16 and bf16"). HLO leaves the order
// unspecified, so the checks are what holds in any order:
//   - exact data (integers whose partial sums in any order stay exact,
//     powers of two for products) give the evaluator's bits;
//   - NaN, infinities, -0, subnormals and overflow, placed so that every
//     order gives the same result, give the evaluator's bits;
//   - random data: within the error bound of each order from the exact
//     sum (below).
// Rows of every length around the vector widths (tails), on each ISA, on
// one and two threads; the fused form (a product summed along the row) is
// layer norm's backward.
std::string RowReduceModule(ElementType type, int64_t rows, int64_t n, const char* reducer,
                            const char* init, bool fused) {
  const std::string t = Name(type);
  const std::string a = absl::StrCat(t, "[", rows, ",", n, "]");
  return absl::StrCat(
      "HloModule m\nadd {\n  a = ", t, "[] parameter(0)\n  b = ", t,
      "[] parameter(1)\n  ROOT s = ", t, "[] add(a, b)\n}\nmul {\n  a = ", t,
      "[] parameter(0)\n  b = ", t, "[] parameter(1)\n  ROOT s = ", t,
      "[] multiply(a, b)\n}\nENTRY e {\n  p0 = ", a, " parameter(0)\n  p1 = ", a,
      " parameter(1)\n", fused ? absl::StrCat("  x = ", a, " multiply(p0, p1)\n") : "", "  z = ", t, "[] constant(", init, ")\n  ROOT r = ", t, "[", rows,
      "] reduce(", fused ? "x" : "p0", ", z), dimensions={1}, to_apply=", reducer, "\n}\n");
}

Literal ValuesLiteral(ElementType type, int64_t rows, int64_t n, const std::vector<double>& v) {
  Literal literal(Shape::Array(type, {rows, n}));
  for (size_t i = 0; i < v.size(); ++i) literal.SetBitsLinear(i, DoubleToFloatBits(type, v[i]));
  return literal;
}

constexpr int64_t kRowLengths[] = {1, 3, 7, 15, 16, 17, 31, 33, 64, 67, 130, 256};

TEST_P(JitHalfVector, RowSumsOfExactValues) {
  for (ElementType type : kHalves) {
    for (int64_t n : kRowLengths) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(absl::StrCat(Name(type), " row ", n, " threads ", threads));
        const int64_t rows = 6;
        // Integers in [-m, m] with n * m <= 256: every partial sum, in any
        // order, is an integer of magnitude <= 256, exact in bf16 and f16.
        const int m = static_cast<int>(std::max<int64_t>(1, 256 / n));
        std::mt19937_64 rng(n);
        std::vector<double> x, one(rows * n, 1.0), sign;
        for (int64_t i = 0; i < rows * n; ++i) {
          x.push_back(static_cast<double>(static_cast<int>(rng() % (2 * m + 1)) - m));
          sign.push_back(rng() % 2 ? 1.0 : -1.0);
        }
        const Literal lx = ValuesLiteral(type, rows, n, x);
        Check(RowReduceModule(type, rows, n, "add", "0", false),
              {lx, ValuesLiteral(type, rows, n, one)}, n >= 16, threads);
        // Fused: the signed product summed (still exact).
        Check(RowReduceModule(type, rows, n, "add", "0", true),
              {lx, ValuesLiteral(type, rows, n, sign)}, n >= 16, threads);
        // Products of ±1 with 2 and 0.5 alternating every 16th element:
        // every partial product is ±2^k with |k| <= 8, exact.
        std::vector<double> p;
        for (int64_t i = 0; i < rows * n; ++i) {
          const int64_t j = i % n;
          p.push_back(j % 16 == 0 ? ((j / 16) % 2 ? 0.5 : 2.0) : sign[i]);
        }
        Check(RowReduceModule(type, rows, n, "mul", "1", false),
              {ValuesLiteral(type, rows, n, p), ValuesLiteral(type, rows, n, one)}, n >= 16,
              threads);
      }
    }
  }
}

TEST_P(JitHalfVector, RowSumsOfSpecialValues) {
  for (ElementType type : kHalves) {
    const bool bf16 = type == ElementType::kBF16;
    const uint64_t neg_zero = 0x8000, one = bf16 ? 0x3F80 : 0x3C00;
    const uint64_t inf = bf16 ? 0x7F80 : 0x7C00, neg_inf = bf16 ? 0xFF80 : 0xFC00;
    const uint64_t qnan = bf16 ? 0x7FC0 : 0x7E00, snan = bf16 ? 0xFF81 : 0xFC01;
    const uint64_t tiny = 0x0001, neg_max = bf16 ? 0xFF7F : 0xFBFF;
    for (int64_t n : kRowLengths) {
      if (n < 3) continue;
      for (int threads : {1, 2}) {
        SCOPED_TRACE(absl::StrCat(Name(type), " row ", n, " threads ", threads));
        // One row each (init -0, so that a row of -0 sums to -0):
        //   all -0; ones and +inf; ones, +inf and -inf (NaN); ones and a
        //   quiet NaN; -inf and a signalling NaN; the smallest subnormal
        //   (n of them: exact); two of the most negative finite value in
        //   zeros (-inf in any order); -0 with one +0 (+0 in any order).
        const int64_t rows = 8;
        std::vector<uint64_t> bits(rows * n);
        auto row = [&](int r) { return bits.begin() + r * n; };
        std::fill(row(0), row(1), neg_zero);
        std::fill(row(1), row(2), one);
        row(1)[n / 2] = inf;
        std::fill(row(2), row(3), one);
        row(2)[1] = inf;
        row(2)[n - 1] = neg_inf;
        std::fill(row(3), row(4), one);
        row(3)[n - 2] = qnan;
        std::fill(row(4), row(5), one);
        row(4)[0] = neg_inf;
        row(4)[n - 1] = snan;
        std::fill(row(5), row(6), tiny);
        std::fill(row(6), row(7), uint64_t{0});
        row(6)[0] = neg_max;
        row(6)[n - 1] = neg_max;
        std::fill(row(7), row(8), neg_zero);
        row(7)[n / 3] = 0;
        Literal x(Shape::Array(type, {rows, n}));
        for (size_t i = 0; i < bits.size(); ++i) x.SetBitsLinear(i, bits[i]);
        Literal zeros(Shape::Array(type, {rows, n}));
        for (size_t i = 0; i < bits.size(); ++i) zeros.SetBitsLinear(i, neg_zero);
        Check(RowReduceModule(type, rows, n, "add", "-0", false), {x, zeros}, n >= 16, threads);
      }
    }
  }
}

// Random values: a sum of n values that applies the rounded reducer along
// a tree in which each value goes through at most D additions differs
// from the exact sum by at most ((1 + u)^D - 1) * sum |x_i| (each rounding
// is a relative error of at most u; Higham, "Accuracy and Stability of
// Numerical Algorithms", 4.2). u: the type's unit roundoff 2^-p (p = 8 for
// bf16, 11 for f16) plus 2^-23 for the f32 rounding before it. The
// evaluator's order (left to right) has D = n - 1. The vector order has
// D <= n/lanes (its lane) + log2(unroll * lanes) + 1 (the combining steps
// and the scalar accumulator) + lanes - 1 (the scalar tail), at most
// n/4 + 22 for 4 to 16 lanes and an unroll of 1 to 4; the compiled and
// evaluated results differ by at most the sum of the two bounds. Rows up
// to 130 elements keep that bound below sum |x_i| for bf16.
TEST_P(JitHalfVector, RowSumsOfRandomValuesWithinTheOrderBound) {
  for (ElementType type : kHalves) {
    const double u = std::ldexp(1.0, -(type == ElementType::kBF16 ? 8 : 11)) + std::ldexp(1.0, -23);
    for (int64_t n : kRowLengths) {
      if (n > 130) continue;
      for (int threads : {1, 2}) {
        SCOPED_TRACE(absl::StrCat(Name(type), " row ", n, " threads ", threads));
        const int64_t rows = 16;
        std::mt19937_64 rng(n * 7 + threads);
        std::uniform_real_distribution<double> magnitude(0.5, 2.0);
        std::vector<double> x, zero(rows * n, 0.0);
        for (int64_t i = 0; i < rows * n; ++i) {
          const double v = (rng() % 2 ? 1 : -1) * magnitude(rng);
          x.push_back(FloatBitsToDouble(type, DoubleToFloatBits(type, v)));  // As stored.
        }
        Literal expected, actual;
        Run(RowReduceModule(type, rows, n, "add", "0", false),
            {ValuesLiteral(type, rows, n, x), ValuesLiteral(type, rows, n, zero)}, n >= 16,
            threads, &expected, &actual);
        if (HasFatalFailure()) return;
        const double bound = std::pow(1 + u, n - 1) - 1 + std::pow(1 + u, n / 4.0 + 22) - 1;
        for (int64_t r = 0; r < rows; ++r) {
          double exact = 0, absolute = 0;
          for (int64_t i = 0; i < n; ++i) {
            exact += x[r * n + i];
            absolute += std::abs(x[r * n + i]);
          }
          const double e = FloatBitsToDouble(type, expected.GetBitsLinear(r));
          const double a = FloatBitsToDouble(type, actual.GetBitsLinear(r));
          EXPECT_LE(std::abs(a - e), bound * absolute)
              << "row " << r << ": compiled " << a << ", evaluator " << e << ", exact " << exact;
        }
      }
    }
  }
}

// A 16-bit operand read transposed inside an elementwise fusion (an SGD
// update with a transposed gradient): tiled loops (x64_tiled.cc) whose
// strided f16/bf16 loads move 16-bit words lane by lane and widen them.
// Edge values everywhere, odd extents (vector tails, partial tiles), one
// and two threads; the same bits as the evaluator.
TEST_P(JitHalfVector, TransposedLoadsInTiledLoops) {
  for (ElementType type : kHalves) {
    const std::string t = Name(type);
    const std::vector<uint64_t> edge = EdgeBits(type);
    for (const auto& [rows, cols] : std::vector<std::pair<int64_t, int64_t>>{
             {45, 37}, {40, 64}, {67, 130}, {300, 33}}) {
      for (int threads : {1, 2}) {
        SCOPED_TRACE(absl::StrCat(t, "[", rows, ",", cols, "] threads ", threads));
        const std::string a = absl::StrCat(t, "[", rows, ",", cols, "]");
        const std::string b = absl::StrCat(t, "[", cols, ",", rows, "]");
        const std::string hlo = absl::StrCat(
            "HloModule m\nENTRY e {\n  p0 = ", a, " parameter(0)\n  p1 = ", b,
            " parameter(1)\n  p2 = ", t, "[] parameter(2)\n  g = ", a,
            " transpose(p1), dimensions={1,0}\n  l = ", a, " broadcast(p2), dimensions={}\n  m = ",
            a, " multiply(g, l)\n  ROOT r = ", a, " subtract(p0, m)\n}\n");
        std::vector<uint64_t> x, y;
        for (int64_t i = 0; i < rows * cols; ++i) {
          x.push_back(edge[(i * 5 + 1) % edge.size()]);
          y.push_back(edge[(i * 11 + 7) % edge.size()]);
        }
        Literal lx(Shape::Array(type, {rows, cols})), ly(Shape::Array(type, {cols, rows}));
        for (int64_t i = 0; i < rows * cols; ++i) {
          lx.SetBitsLinear(i, x[i]);
          ly.SetBitsLinear(i, y[i]);
        }
        Literal lr(Shape::Array(type, {}));
        lr.SetBitsLinear(0, BitsOf(type, 0.1));
        Check(hlo, {lx, ly, lr}, true, threads);
      }
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
