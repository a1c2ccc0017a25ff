// The narrow element types in compiled kernels, against the evaluator bit
// for bit (any NaN equals any NaN) on every instruction set the host runs:
//   - every f8 variant and f4e2m1fn decoded from all of its bit patterns to
//     f32, f64, f16, bf16, integers and pred, and converted to every other
//     mini-float;
//   - encoding from f32 and f64 at every rounding boundary of every variant
//     (each value, the midpoints between neighbours and the source's next
//     values either side of them), the overflow thresholds, NaN, infinities,
//     zeros of both signs, source subnormals; from f16, bf16 and integers;
//   - arithmetic computed in f32 and rounded back after each operation
//     (every pair of bit patterns for add, subtract, multiply, divide,
//     maximum), compare, clamp, reductions with mini-float accumulators,
//     iota, data movement, reduce-precision on every pattern;
//   - stochastic-convert from every float width to every signed width;
//   - sub-byte integers and f4 in packed (E(n)) layouts of odd lengths;
// with array lengths that leave vector tails. Each module must compile with
// no interpreted step.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/float_format.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr ElementType kMiniFloats[] = {
    ElementType::kF8E5M2,        ElementType::kF8E4M3,     ElementType::kF8E4M3FN,
    ElementType::kF8E3M4,        ElementType::kF8E4M3FNUZ, ElementType::kF8E5M2FNUZ,
    ElementType::kF8E4M3B11FNUZ, ElementType::kF8E8M0FNU,  ElementType::kF4E2M1FN,
};

std::string Name(ElementType type) { return std::string(ElementTypeName(type)); }

int Patterns(ElementType type) { return 1 << BitWidth(type); }

class JitTypes : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs `hlo` compiled (with no interpreted step) and evaluated on
  // `arguments`; fails on any difference.
  void Check(const std::string& hlo, const std::vector<Literal>& arguments) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status() << "\n" << hlo;
    CompileOptions options;
    options.isa = GetParam();
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    for (const std::string& step : UnexpectedInterpretedSteps(report)) {
      ADD_FAILURE() << step << "\n" << hlo;
    }
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    const std::string difference = Difference(*expected, *actual);
    EXPECT_EQ(difference, "") << hlo;
  }
  // With random arguments (several seeds).
  void CheckRandom(const std::string& hlo) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
    }
  }
};

Literal BitsLiteral(ElementType type, const std::vector<uint64_t>& bits) {
  Literal literal(Shape::Array(type, {static_cast<int64_t>(bits.size())}));
  for (size_t i = 0; i < bits.size(); ++i) literal.SetBitsLinear(i, bits[i]);
  return literal;
}

// Every bit pattern of `type`, then a few again (an odd length: vector
// tails).
std::vector<uint64_t> AllPatterns(ElementType type) {
  std::vector<uint64_t> bits;
  for (int i = 0; i < Patterns(type); ++i) bits.push_back(i);
  for (int i = 0; i < 3; ++i) bits.push_back(i * 5 % Patterns(type));
  return bits;
}

uint64_t F32Bits(float f) {
  uint32_t b;
  std::memcpy(&b, &f, 4);
  return b;
}
uint64_t F64Bits(double d) {
  uint64_t b;
  std::memcpy(&b, &d, 8);
  return b;
}

// Values around every rounding decision of `type`: each value, the midpoint
// to its neighbour (a tie), and the next `source` values either side of
// both; the overflow threshold; specials and source subnormals.
std::vector<double> Boundaries(ElementType type, ElementType source) {
  std::vector<double> magnitudes;
  for (int i = 0; i < Patterns(type); ++i) {
    const double v = FloatBitsToDouble(type, i);
    if (std::isfinite(v) && v >= 0) magnitudes.push_back(v);
  }
  std::sort(magnitudes.begin(), magnitudes.end());
  magnitudes.erase(std::unique(magnitudes.begin(), magnitudes.end()), magnitudes.end());
  // Beyond the largest value: where overflow starts (half an ulp above it).
  const double max = magnitudes.back();
  const double below = magnitudes[magnitudes.size() - 2];
  magnitudes.push_back(max + (max - below));
  std::vector<double> points;
  for (size_t i = 0; i < magnitudes.size(); ++i) {
    points.push_back(magnitudes[i]);
    if (i + 1 < magnitudes.size()) points.push_back((magnitudes[i] + magnitudes[i + 1]) / 2);
  }
  points.push_back(magnitudes[0] / 2);
  points.push_back(magnitudes[1] / 2);
  std::vector<double> values;
  for (double p : points) {
    for (double sign : {1.0, -1.0}) {
      const double v = sign * p;
      values.push_back(v);
      if (source == ElementType::kF32) {
        const float f = static_cast<float>(v);
        values.push_back(std::nextafter(f, std::numeric_limits<float>::infinity()));
        values.push_back(std::nextafter(f, -std::numeric_limits<float>::infinity()));
      } else {
        values.push_back(std::nextafter(v, std::numeric_limits<double>::infinity()));
        values.push_back(std::nextafter(v, -std::numeric_limits<double>::infinity()));
      }
    }
  }
  const double inf = std::numeric_limits<double>::infinity();
  for (double v : {0.0, -0.0, inf, -inf, std::nan(""), -std::nan(""), 1e30, -1e30, 0x1p-130,
                   -0x1p-140, 0x1p-149, 0x1.8p-127, 0x1.800002p-127, 0x1.7ffffcp-127, 0x1p-127,
                   0x1.8p127, 0x1.7ffffep127, 3.4e38, -3.4e38}) {
    values.push_back(v);
  }
  if (source == ElementType::kF64) {
    for (double v : {1e300, -1e300, 0x1p-1074, 0x1.8p-127 + 0x1p-180, 0x1.8p127 - 0x1p70,
                     0x1.8p127 + 0x1p70, 0x1p128, 0x1p-1022}) {
      values.push_back(v);
    }
  }
  return values;
}

TEST_P(JitTypes, DecodeEveryBitPattern) {
  for (ElementType type : kMiniFloats) {
    const std::vector<uint64_t> bits = AllPatterns(type);
    const std::string n = absl::StrCat(bits.size());
    for (const char* to : {"f32", "f64", "f16", "bf16", "s32", "u8", "s64", "pred"}) {
      Check(
          OneOp({absl::StrCat(Name(type), "[", n, "]")}, absl::StrCat(to, "[", n, "] convert(p0)")),
          {BitsLiteral(type, bits)});
    }
  }
}

TEST_P(JitTypes, ConvertBetweenMiniFloats) {
  for (ElementType from : kMiniFloats) {
    const std::vector<uint64_t> bits = AllPatterns(from);
    const std::string n = absl::StrCat(bits.size());
    for (ElementType to : kMiniFloats) {
      if (to == from) continue;
      Check(OneOp({absl::StrCat(Name(from), "[", n, "]")},
                  absl::StrCat(Name(to), "[", n, "] convert(p0)")),
            {BitsLiteral(from, bits)});
    }
  }
}

TEST_P(JitTypes, EncodeAtEveryRoundingBoundary) {
  for (ElementType type : kMiniFloats) {
    for (ElementType source : {ElementType::kF32, ElementType::kF64}) {
      const std::vector<double> values = Boundaries(type, source);
      std::vector<uint64_t> bits;
      for (double v : values) {
        bits.push_back(source == ElementType::kF32 ? F32Bits(static_cast<float>(v)) : F64Bits(v));
      }
      const std::string n = absl::StrCat(bits.size());
      Check(OneOp({absl::StrCat(Name(source), "[", n, "]")},
                  absl::StrCat(Name(type), "[", n, "] convert(p0)")),
            {BitsLiteral(source, bits)});
    }
  }
}

TEST_P(JitTypes, EncodeFromNarrowFloatsAndIntegers) {
  for (ElementType type : kMiniFloats) {
    for (const char* from :
         {"f16", "bf16", "s8", "u16", "s32", "u32", "s64", "u64", "pred", "s4", "u2"}) {
      if (type == ElementType::kF8E8M0FNU &&
          (std::string(from) == "s64" || std::string(from) == "u64")) {
        continue;  // Refused (two roundings): see EightBitIntegersToE8m0Fallback.
      }
      CheckRandom(
          OneOp({absl::StrCat(from, "[131]")}, absl::StrCat(Name(type), "[131] convert(p0)")));
    }
    // Every f16 bit pattern.
    std::vector<uint64_t> halves;
    for (int i = 0; i < 65536; ++i) halves.push_back(i);
    Check(OneOp({"f16[65536]"}, absl::StrCat(Name(type), "[65536] convert(p0)")),
          {BitsLiteral(ElementType::kF16, halves)});
    // Integers around the largest values.
    std::vector<uint64_t> ints;
    for (int64_t v = -70000; v <= 70000; v += 97) ints.push_back(static_cast<uint32_t>(v));
    for (int64_t v : {57344, 57343, 61440, 61439, 448, 464, 465, 240, 248, 30, 31, 6, 5, 7}) {
      ints.push_back(static_cast<uint32_t>(v));
      ints.push_back(static_cast<uint32_t>(-v));
    }
    const std::string n = absl::StrCat(ints.size());
    Check(OneOp({absl::StrCat("s32[", n, "]")}, absl::StrCat(Name(type), "[", n, "] convert(p0)")),
          {BitsLiteral(ElementType::kS32, ints)});
  }
}

TEST_P(JitTypes, SixtyFourBitIntegersToE8m0Fallback) {
  // One rounding from s64 to f8e8m0fnu is not built: the kernel is refused
  // and the step runs interpreted, with the right answer.
  CheckOptions options;
  options.isa = GetParam();
  options.require_all_compiled = false;
  CompileReport report;
  options.report = &report;
  EXPECT_TRUE(MatchesEvaluator(OneOp({"s64[9]"}, "f8e8m0fnu[9] convert(p0)"), options));
  EXPECT_EQ(report.interpreted_steps.size(), 1u);
}

TEST_P(JitTypes, ArithmeticOnEveryPair) {
  for (ElementType type : kMiniFloats) {
    const int p = Patterns(type);
    std::vector<uint64_t> x, y;
    for (int i = 0; i < p; ++i) {
      for (int j = 0; j < p; ++j) {
        x.push_back(i);
        y.push_back(j);
      }
    }
    x.push_back(1);
    y.push_back(2);
    const std::string t = absl::StrCat(Name(type), "[", x.size(), "]");
    for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
      Check(OneOp({t, t}, absl::StrCat(t, " ", op, "(p0, p1)")),
            {BitsLiteral(type, x), BitsLiteral(type, y)});
    }
    for (const char* direction : {"LT", "EQ", "NE", "GE"}) {
      for (const char* order : {"FLOAT", "TOTALORDER"}) {
        Check(OneOp({t, t}, absl::StrCat("pred[", x.size(), "] compare(p0, p1), direction=",
                                         direction, ", type=", order)),
              {BitsLiteral(type, x), BitsLiteral(type, y)});
      }
    }
  }
}

TEST_P(JitTypes, UnaryOnEveryPattern) {
  for (ElementType type : kMiniFloats) {
    const std::vector<uint64_t> bits = AllPatterns(type);
    const std::string t = absl::StrCat(Name(type), "[", bits.size(), "]");
    for (const char* op :
         {"negate", "abs", "sqrt", "floor", "ceil", "round-nearest-even", "sign"}) {
      Check(OneOp({t}, absl::StrCat(t, " ", op, "(p0)")), {BitsLiteral(type, bits)});
    }
    Check(OneOp({t}, absl::StrCat("pred[", bits.size(), "] is-finite(p0)")),
          {BitsLiteral(type, bits)});
    for (const char* em :
         {"exponent_bits=2, mantissa_bits=1", "exponent_bits=3, mantissa_bits=0",
          "exponent_bits=8, mantissa_bits=2", "exponent_bits=4, mantissa_bits=7"}) {
      Check(OneOp({t}, absl::StrCat(t, " reduce-precision(p0), ", em)), {BitsLiteral(type, bits)});
    }
  }
}

TEST_P(JitTypes, FusedChainsReductionsAndDataMovement) {
  for (ElementType type : kMiniFloats) {
    const std::string n = Name(type);
    // A chain fused into one kernel: every step rounds to the type.
    CheckRandom(ModuleText(
        {absl::StrCat(n, "[67]"), absl::StrCat(n, "[67]"), "f32[67]"},
        {absl::StrCat("a = ", n, "[67] multiply(p0, p1)"),
         absl::StrCat("c = ", n, "[67] convert(p2)"), absl::StrCat("s = ", n, "[67] add(a, c)"),
         absl::StrCat("l = ", n, "[] constant(0)"), absl::StrCat("h = ", n, "[] constant(1)"),
         absl::StrCat("k = ", n, "[67] clamp(l, s, h)"), "r = f32[67] convert(k)"}));
    // A reduction with a mini-float accumulator.
    CheckRandom(absl::StrCat("HloModule m\nadd {\n  a = ", n, "[] parameter(0)\n  b = ", n,
                             "[] parameter(1)\n  ROOT s = ", n,
                             "[] add(a, b)\n}\nENTRY e {\n  p0 = ", n,
                             "[13,7] parameter(0)\n  z = ", n, "[] constant(0)\n  ROOT r = ", n,
                             "[13] reduce(p0, z), dimensions={1}, to_apply=add\n}\n"));
    // Data movement of raw bits: transpose, slice, concatenate, pad, select.
    CheckRandom(ModuleText({absl::StrCat(n, "[5,9]"), absl::StrCat(n, "[5,9]"), "pred[5,9]"},
                           {absl::StrCat("t = ", n, "[9,5] transpose(p0), dimensions={1,0}"),
                            absl::StrCat("u = ", n, "[9,5] transpose(p1), dimensions={1,0}"),
                            absl::StrCat("c = ", n, "[18,5] concatenate(t, u), dimensions={0}"),
                            absl::StrCat("z = ", n, "[] constant(1)"),
                            absl::StrCat("q = ", n, "[20,7] pad(c, z), padding=1_1x1_1"),
                            absl::StrCat("s = ", n, "[5,9] select(p2, p0, p1)"),
                            absl::StrCat("r = ", n, "[5,9] add(s, p1)")}));
    CheckRandom(OneOp({}, absl::StrCat(n, "[45] iota(), iota_dimension=0")));
    if (BitWidth(type) == 8) {
      CheckRandom(OneOp({absl::StrCat(n, "[19]")}, "u8[19] bitcast-convert(p0)"));
      CheckRandom(OneOp({"s8[19]"}, absl::StrCat(n, "[19] bitcast-convert(p0)")));
    }
  }
}

TEST_P(JitTypes, StochasticConvert) {
  // The random bits are as wide as the operand (the verifier's rule).
  for (const auto& [from, random] :
       std::vector<std::pair<std::string, std::string>>{{"f32", "u32"},
                                                        {"f64", "u64"},
                                                        {"f16", "u16"},
                                                        {"bf16", "u16"},
                                                        {"f8e4m3fn", "u8"},
                                                        {"f8e5m2", "u8"}}) {
    for (const char* to : {"s8", "s16", "s32", "s64"}) {
      CheckRandom(OneOp({absl::StrCat(from, "[131]"), absl::StrCat(random, "[131]")},
                        absl::StrCat(to, "[131] stochastic-convert(p0, p1)")));
    }
  }
  // Exact fractions against random bits near the threshold.
  std::vector<uint64_t> x, r;
  for (int i = 0; i < 257; ++i) {
    x.push_back(F32Bits(-2.0f + i / 64.0f));
    r.push_back(static_cast<uint32_t>(i) << 24);
  }
  Check(OneOp({"f32[257]", "u32[257]"}, "s32[257] stochastic-convert(p0, p1)"),
        {BitsLiteral(ElementType::kF32, x), BitsLiteral(ElementType::kU32, r)});
}

TEST_P(JitTypes, PackedSubByteArrays) {
  for (const auto& [type, bits] : std::vector<std::pair<std::string, int>>{{"s4", 4},
                                                                           {"u4", 4},
                                                                           {"s2", 2},
                                                                           {"u2", 2},
                                                                           {"s1", 1},
                                                                           {"u1", 1},
                                                                           {"f4e2m1fn", 4},
                                                                           {"s4", 8}}) {
    for (int64_t n : {1, 3, 7, 13, 33, 69}) {
      const std::string packed = absl::StrCat(type, "[", n, "]{0:E(", bits, ")}");
      const std::string plain = absl::StrCat(type, "[", n, "]{0}");
      CheckRandom(OneOp({packed}, absl::StrCat("f32[", n, "] convert(p0)")));
      CheckRandom(OneOp({absl::StrCat("s32[", n, "]")}, absl::StrCat(packed, " convert(p0)")));
      CheckRandom(OneOp({packed, packed}, absl::StrCat(packed, " maximum(p0, p1)")));
      CheckRandom(OneOp({packed, plain}, absl::StrCat(packed, " minimum(p0, p1)")));
      CheckRandom(OneOp({packed}, absl::StrCat(packed, " reverse(p0), dimensions={0}")));
    }
    // Two dimensions, layouts of either order, an odd element count.
    const std::string a = absl::StrCat(type, "[3,5]{0,1:E(", bits, ")}");
    const std::string b = absl::StrCat(type, "[5,3]{1,0:E(", bits, ")}");
    CheckRandom(OneOp({a}, absl::StrCat(b, " transpose(p0), dimensions={1,0}")));
    CheckRandom(OneOp({b}, absl::StrCat(a, " transpose(p0), dimensions={1,0}")));
  }
}

// is-finite of f32 and f64 compiles to |x| < inf (an ordered compare, so
// NaN is not finite) in vector lanes: every special value, at a length with a
// vector tail, elementwise and inside a vectorised sum (the form JAX's
// samplers use).
TEST_P(JitTypes, IsFiniteOnSpecialValues) {
  for (ElementType type : {ElementType::kF32, ElementType::kF64}) {
    const bool f64 = type == ElementType::kF64;
    const std::vector<uint64_t> specials =
        f64 ? std::vector<uint64_t>{0, 0x8000000000000000ull, 1, 0x000FFFFFFFFFFFFFull,
                                    0x7FEFFFFFFFFFFFFFull, 0xFFEFFFFFFFFFFFFFull,
                                    0x7FF0000000000000ull, 0xFFF0000000000000ull,
                                    0x7FF8000000000000ull, 0xFFF0000000000001ull,
                                    0x3FF0000000000000ull}
            : std::vector<uint64_t>{0, 0x80000000u, 1, 0x007FFFFFu, 0x7F7FFFFFu, 0xFF7FFFFFu,
                                    0x7F800000u, 0xFF800000u, 0x7FC00000u, 0xFF800001u,
                                    0x3F800000u};
    std::vector<uint64_t> bits;
    for (int i = 0; i < 37; ++i) bits.push_back(specials[(i * 7) % specials.size()]);
    const std::string t = absl::StrCat(Name(type), "[", bits.size(), "]");
    Check(OneOp({t}, absl::StrCat("pred[", bits.size(), "] is-finite(p0)")),
          {BitsLiteral(type, bits)});
    // The sum reassociates: finite values small enough that every order
    // gives the same total (the largest finite values would overflow in some).
    for (uint64_t& b : bits) {
      if (b == specials[4] || b == specials[5]) b = specials.back();
    }
    const std::string s = Name(type);
    Check(absl::StrCat("HloModule finite_sum\n"
                       "add { a = ", s, "[] parameter(0)  b = ", s, "[] parameter(1)  ROOT c = ", s,
                       "[] add(a, b) }\n"
                       "ENTRY e {\n"
                       "  p0 = ", t, " parameter(0)\n"
                       "  f = pred[", bits.size(), "] is-finite(p0)\n"
                       "  z = ", s, "[] constant(0)\n"
                       "  zs = ", t, " broadcast(z), dimensions={}\n"
                       "  v = ", t, " select(f, p0, zs)\n"
                       "  r = ", s, "[] reduce(v, z), dimensions={0}, to_apply=add\n"
                       "  ROOT t = (", s, "[], pred[", bits.size(), "]) tuple(r, f)\n"
                       "}\n"),
          {BitsLiteral(type, bits)});
    // Both compile to vector code (a float-to-pred unary op kept them scalar).
    absl::StatusOr<std::unique_ptr<Module>> module =
        ParseVerified(OneOp({t}, absl::StrCat("pred[", bits.size(), "] is-finite(p0)")));
    ASSERT_TRUE(module.ok()) << module.status();
    CompileOptions options;
    options.isa = GetParam();
    CompileReport report;
    ASSERT_TRUE(Compile(**module, options, &report).ok());
    for (const KernelInfo& kernel : report.kernels) {
      EXPECT_GT(kernel.vector_lanes, 1) << kernel.program;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitTypes, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
