// Float remainder (fmod semantics: x - trunc(x/y)*y, exact, the dividend's
// sign) compiled by the x86-64 target for f32, f64, f16 and bf16 on every
// host instruction set, bit for bit against the evaluator (std::fmod) and
// hand-computed values: zeros of both signs, subnormals, the extremes,
// infinities, NaN, operands with equal and with far apart exponents, and
// random bit patterns. Any NaN matches any NaN.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

struct Format {
  const char* name;
  ElementType type;
  int bits;           // Storage width.
  int mantissa_bits;  // Explicit fraction bits.
};

const Format kFormats[] = {{"f32", ElementType::kF32, 32, 23},
                           {"f64", ElementType::kF64, 64, 52},
                           {"f16", ElementType::kF16, 16, 10},
                           {"bf16", ElementType::kBF16, 16, 7}};

uint64_t SignBit(const Format& f) { return uint64_t{1} << (f.bits - 1); }
uint64_t ExponentMask(const Format& f) {
  return (SignBit(f) - 1) & ~((uint64_t{1} << f.mantissa_bits) - 1);
}
uint64_t AllBits(const Format& f) { return f.bits == 64 ? ~uint64_t{0} : (uint64_t{1} << f.bits) - 1; }
bool IsNan(const Format& f, uint64_t x) {
  return (x & ExponentMask(f)) == ExponentMask(f) && (x & ((uint64_t{1} << f.mantissa_bits) - 1));
}

// Edge bit patterns of the format (positive; both signs are added).
std::vector<uint64_t> EdgePatterns(const Format& f) {
  const uint64_t one_exp = (ExponentMask(f) >> 1) & ExponentMask(f);  // Exponent of 1.0.
  const uint64_t frac = (uint64_t{1} << f.mantissa_bits) - 1;
  const uint64_t e1 = uint64_t{1} << f.mantissa_bits;  // Exponent field 1.
  return {0,                          // +0
          1,                          // smallest subnormal
          3,                          // 3 * smallest subnormal
          frac,                       // largest subnormal
          frac - 1,
          e1,                         // smallest normal
          e1 | 1,
          e1 + (e1 >> 1),             // 1.5 * smallest normal
          one_exp,                    // 1
          one_exp | (e1 >> 1),        // 1.5
          one_exp + e1,               // 2
          one_exp + e1 + (e1 >> 1),   // 3
          one_exp - e1,               // 0.5
          one_exp + 3 * e1 + 1,       // just above 8
          one_exp - 1,                // just below 1
          one_exp + 20 * e1 + 12345 % (frac + 1),
          ExponentMask(f) - 1,        // largest finite
          ExponentMask(f) - e1,       // half of the largest power range
          ExponentMask(f),            // inf
          ExponentMask(f) | (e1 >> 1),  // quiet NaN
          ExponentMask(f) | 1};       // signalling NaN
}

std::string Module(const Format& f, int64_t n) {
  return absl::StrFormat(
      "HloModule m\nENTRY e {\n  p0 = %s[%d] parameter(0)\n  p1 = %s[%d] parameter(1)\n"
      "  ROOT r = %s[%d] remainder(p0, p1)\n}\n",
      f.name, n, f.name, n, f.name, n);
}

// Compiles remainder for every host ISA and compares with the evaluator.
void CheckPairs(const Format& f, const std::vector<uint64_t>& xs, const std::vector<uint64_t>& ys) {
  const int64_t n = static_cast<int64_t>(xs.size());
  std::vector<Literal> arguments;
  for (const std::vector<uint64_t>* v : {&xs, &ys}) {
    Literal literal(Shape::Array(f.type, {n}));
    for (int64_t i = 0; i < n; ++i) literal.SetBitsLinear(i, (*v)[i]);
    arguments.push_back(std::move(literal));
  }
  absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(Module(f, n));
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
    EXPECT_TRUE(report.interpreted_steps.empty()) << f.name << ": " << report.interpreted_steps[0];
    EXPECT_FALSE(report.kernels.empty());
    absl::StatusOr<Literal> got = (*executable)->Run(arguments);
    ASSERT_TRUE(got.ok()) << got.status();
    int failures = 0;
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t g = got->GetBitsLinear(i);
      const uint64_t w = want->GetBitsLinear(i);
      if (g == w || (IsNan(f, g) && IsNan(f, w))) continue;
      if (failures++ < 8) {
        ADD_FAILURE() << f.name << " " << IsaName(isa) << absl::StrFormat(
                             ": remainder(%#x, %#x) = %#x, the evaluator %#x", xs[i], ys[i], g, w);
      }
    }
    EXPECT_EQ(failures, 0) << f.name << " " << IsaName(isa);
  }
}

TEST(JitRemainder, HandComputedF32) {
  // fmod by hand: 5.5 mod 2 = 1.5; -5.5 mod 2 = -1.5; 5.5 mod -2 = 1.5;
  // -4 mod 2 = -0; 1 mod inf = 1; inf mod 1 = NaN; 1 mod 0 = NaN;
  // 2^100 mod 3: 2^100 = (2^2)^50 = 1 (mod 3), so 1; the smallest
  // subnormal mod itself = 0; 1e30 mod smallest subnormal = 0 (an integer
  // multiple); 7 mod 2.5 = 2.
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const std::vector<std::pair<float, float>> args = {
      {5.5f, 2.0f}, {-5.5f, 2.0f}, {5.5f, -2.0f}, {-4.0f, 2.0f}, {1.0f, inf},
      {inf, 1.0f},  {1.0f, 0.0f},  {std::ldexp(1.0f, 100), 3.0f}, {tiny, tiny},
      {1e30f, tiny}, {7.0f, 2.5f}};
  const std::vector<float> expected = {1.5f, -1.5f, 1.5f, -0.0f, 1.0f, NAN, NAN, 1.0f,
                                       0.0f, 0.0f, 2.0f};
  const int64_t n = static_cast<int64_t>(args.size());
  Literal x(Shape::Array(ElementType::kF32, {n}));
  Literal y(Shape::Array(ElementType::kF32, {n}));
  auto bits = [](float v) {
    uint32_t b;
    std::memcpy(&b, &v, 4);
    return uint64_t{b};
  };
  for (int64_t i = 0; i < n; ++i) {
    x.SetBitsLinear(i, bits(args[i].first));
    y.SetBitsLinear(i, bits(args[i].second));
  }
  absl::StatusOr<std::unique_ptr<xjit::Module>> module = ParseVerified(Module(kFormats[0], n));
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  arguments.push_back(std::move(x));
  arguments.push_back(std::move(y));
  for (Isa isa : HostIsas()) {
    CompileOptions options;
    options.isa = isa;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = Compile(**module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    absl::StatusOr<Literal> got = (*executable)->Run(arguments);
    ASSERT_TRUE(got.ok()) << got.status();
    for (int64_t i = 0; i < n; ++i) {
      const uint64_t g = got->GetBitsLinear(i);
      if (std::isnan(expected[i])) {
        EXPECT_TRUE(IsNan(kFormats[0], g)) << IsaName(isa) << " case " << i;
      } else {
        EXPECT_EQ(g, bits(expected[i])) << IsaName(isa) << " case " << i;
      }
    }
  }
}

TEST(JitRemainder, EdgeValuesAllFormats) {
  for (const Format& f : kFormats) {
    std::vector<uint64_t> edges;
    for (uint64_t e : EdgePatterns(f)) {
      edges.push_back(e);
      edges.push_back(e | SignBit(f));
    }
    std::vector<uint64_t> xs, ys;
    for (uint64_t x : edges) {
      for (uint64_t y : edges) {
        xs.push_back(x);
        ys.push_back(y);
      }
    }
    CheckPairs(f, xs, ys);
  }
}

TEST(JitRemainder, RandomValuesAllFormats) {
  std::mt19937_64 rng(20261121);
  for (const Format& f : kFormats) {
    const uint64_t mask = AllBits(f);
    const uint64_t e1 = uint64_t{1} << f.mantissa_bits;
    const uint64_t one = (ExponentMask(f) >> 1) & ExponentMask(f);
    std::vector<uint64_t> xs, ys;
    for (int i = 0; i < 30000; ++i) {
      uint64_t x = rng() & mask;
      uint64_t y = rng() & mask;
      switch (i % 4) {
        case 0:  // Any bits.
          break;
        case 1: {  // Close exponents (few quotient bits).
          const uint64_t ex = x & ExponentMask(f);
          const uint64_t shift = (rng() % 5) * e1;
          y = (y & ~ExponentMask(f)) | (ex >= shift ? ex - shift : ex);
          break;
        }
        case 2:  // Small divisors (subnormal or tiny normal): long divisions.
          y = (y & SignBit(f)) | (rng() % (4 * e1));
          break;
        default:  // Ordinary magnitudes.
          x = (x & ~ExponentMask(f)) | (one + (rng() % 16) * e1);
          y = (y & ~ExponentMask(f)) | (one - (rng() % 4) * e1);
          break;
      }
      xs.push_back(x & mask);
      ys.push_back(y & mask);
    }
    CheckPairs(f, xs, ys);
  }
}

TEST(JitRemainder, InsideLoopFusion) {
  // remainder between other operations of one fused kernel, scalar shapes
  // and tails included.
  for (Isa isa : HostIsas()) {
    for (const char* t : {"f32", "f64", "f16", "bf16"}) {
      for (const char* d : {"[]", "[1]", "[37]", "[5,9]{0,1}"}) {
        const std::string s = absl::StrFormat("%s%s", t, d);
        const std::string hlo = absl::StrFormat(
            "HloModule m\nENTRY e {\n  p0 = %1$s parameter(0)\n  p1 = %1$s parameter(1)\n"
            "  a = %1$s add(p0, p1)\n  r = %1$s remainder(a, p1)\n"
            "  ROOT m = %1$s multiply(r, p0)\n}\n",
            s);
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          CheckOptions options;
          options.isa = isa;
          options.seed = seed;
          EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
        }
      }
    }
  }
}

}  // namespace
}  // namespace xjit::jit::testing
