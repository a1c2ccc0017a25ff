// Elementwise operations of the evaluator against hand-computed values: the
// integer edge cases of interpreter/evaluator.h, NaN / inf / -0, conversions,
// bitcast-convert, reduce-precision, narrow floats and complex numbers.
#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/interpreter/evaluator_test_util.h"

namespace xjit::testing {
namespace {

constexpr int64_t kInt32Min = std::numeric_limits<int32_t>::min();
constexpr int64_t kInt32Max = std::numeric_limits<int32_t>::max();
const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

#define ASSERT_OK_AND_ASSIGN(lhs, expr)      \
  auto lhs##_or = (expr);                    \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

std::vector<int64_t> Binary(const std::string& type, const std::string& op,
                            std::vector<int64_t> a, std::vector<int64_t> b,
                            const std::string& out_type = "") {
  const std::string shape = absl::StrCat(type, "[", a.size(), "]");
  const std::string out = absl::StrCat(out_type.empty() ? type : out_type, "[", a.size(), "]");
  auto result = RunOne({shape, shape}, absl::StrCat(out, " ", op, "(p0, p1)"),
                       {Ints(shape, a), Ints(shape, b)});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? Ints(*result) : std::vector<int64_t>{};
}

TEST(EvaluatorElementwise, SignedDivision) {
  EXPECT_EQ(Binary("s32", "divide", {7, -7, 5, kInt32Min, -9, 0}, {2, 2, 0, -1, 0, 3}),
            (std::vector<int64_t>{3, -3, -1, kInt32Min, -1, 0}));
}

TEST(EvaluatorElementwise, UnsignedDivisionByZeroIsAllOnes) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"u32[3]", "u32[3]"}, "u32[3] divide(p0, p1)",
                                 {Ints("u32[3]", {7, 0, 4000000000}), Ints("u32[3]", {0, 0, 3})}));
  EXPECT_EQ(Bits(r), (std::vector<uint64_t>{0xFFFFFFFFu, 0xFFFFFFFFu, 1333333333u}));
}

TEST(EvaluatorElementwise, SignedRemainder) {
  EXPECT_EQ(Binary("s32", "remainder", {7, -7, 7, 5, kInt32Min}, {3, 3, -3, 0, -1}),
            (std::vector<int64_t>{1, -1, 1, 5, 0}));
}

TEST(EvaluatorElementwise, UnsignedRemainderByZeroIsDividend) {
  EXPECT_EQ(Binary("u8", "remainder", {200, 9}, {0, 4}), (std::vector<int64_t>{200, 1}));
}

TEST(EvaluatorElementwise, Shifts) {
  EXPECT_EQ(Binary("s8", "shift-left", {1, 1, 1, 3}, {3, 8, -1, 6}),
            (std::vector<int64_t>{8, 0, 0, -64}));
  EXPECT_EQ(Binary("s8", "shift-right-arithmetic", {-128, -128, 64, 64, -1}, {1, 8, -56, 9, 7}),
            (std::vector<int64_t>{-64, -1, 0, 0, -1}));
  EXPECT_EQ(Binary("s8", "shift-right-logical", {-128, -1, -1}, {1, 8, 7}),
            (std::vector<int64_t>{64, 0, 1}));
  EXPECT_EQ(Binary("u32", "shift-right-logical", {0x80000000LL, 0x80000000LL}, {31, 32}),
            (std::vector<int64_t>{1, 0}));
}

TEST(EvaluatorElementwise, IntegerPower) {
  EXPECT_EQ(Binary("s32", "power", {2, 3, 1, -1, -1, 2, 0, 0, -2, 2},
                   {10, 3, -5, -3, -2, -1, 0, 5, 3, 31}),
            (std::vector<int64_t>{1024, 27, 1, -1, 1, 0, 1, 0, -8, kInt32Min}));
}

TEST(EvaluatorElementwise, IntegerMaxMinAndBitwise) {
  EXPECT_EQ(Binary("s32", "maximum", {-5, 3}, {2, -7}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Binary("u8", "minimum", {255, 3}, {2, 200}), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(Binary("s32", "and", {12, -1}, {10, 5}), (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(Binary("s32", "or", {12, 0}, {10, 0}), (std::vector<int64_t>{14, 0}));
  EXPECT_EQ(Binary("s32", "xor", {12, -1}, {10, 0}), (std::vector<int64_t>{6, -1}));
}

TEST(EvaluatorElementwise, WrapAroundAndSubByte) {
  EXPECT_EQ(Binary("s32", "add", {kInt32Max}, {1}), (std::vector<int64_t>{kInt32Min}));
  EXPECT_EQ(Binary("s32", "multiply", {65536}, {65536}), (std::vector<int64_t>{0}));
  EXPECT_EQ(Binary("s4", "add", {7, -8}, {1, -1}), (std::vector<int64_t>{-8, 7}));
  EXPECT_EQ(Binary("u4", "subtract", {0}, {1}), (std::vector<int64_t>{15}));
}

TEST(EvaluatorElementwise, Mulhi) {
  EXPECT_EQ(Binary("s32", "mulhi", {0x40000000, -1, kInt32Min}, {4, 1, kInt32Min}),
            (std::vector<int64_t>{1, -1, 0x40000000}));
  ASSERT_OK_AND_ASSIGN(r, RunOne({"u32[1]", "u32[1]"}, "u32[1] mulhi(p0, p1)",
                                 {Ints("u32[1]", {0xFFFFFFFFLL}), Ints("u32[1]", {0xFFFFFFFFLL})}));
  EXPECT_EQ(Bits(r), (std::vector<uint64_t>{0xFFFFFFFEu}));
}

TEST(EvaluatorElementwise, IntegerUnary) {
  ASSERT_OK_AND_ASSIGN(abs, RunOne({"s32[3]"}, "s32[3] abs(p0)", {Ints("s32[3]", {kInt32Min, -4, 4})}));
  EXPECT_EQ(Ints(abs), (std::vector<int64_t>{kInt32Min, 4, 4}));
  ASSERT_OK_AND_ASSIGN(neg, RunOne({"s32[2]"}, "s32[2] negate(p0)", {Ints("s32[2]", {kInt32Min, 4})}));
  EXPECT_EQ(Ints(neg), (std::vector<int64_t>{kInt32Min, -4}));
  ASSERT_OK_AND_ASSIGN(sign, RunOne({"s32[3]"}, "s32[3] sign(p0)", {Ints("s32[3]", {-9, 0, 9})}));
  EXPECT_EQ(Ints(sign), (std::vector<int64_t>{-1, 0, 1}));
  ASSERT_OK_AND_ASSIGN(clz, RunOne({"u8[3]"}, "u8[3] count-leading-zeros(p0)",
                                   {Ints("u8[3]", {0, 1, 0x80})}));
  EXPECT_EQ(Ints(clz), (std::vector<int64_t>{8, 7, 0}));
  ASSERT_OK_AND_ASSIGN(pop, RunOne({"s16[2]"}, "s16[2] popcnt(p0)", {Ints("s16[2]", {-1, 5})}));
  EXPECT_EQ(Ints(pop), (std::vector<int64_t>{16, 2}));
  ASSERT_OK_AND_ASSIGN(n, RunOne({"s32[2]"}, "s32[2] not(p0)", {Ints("s32[2]", {0, 5})}));
  EXPECT_EQ(Ints(n), (std::vector<int64_t>{-1, -6}));
}

TEST(EvaluatorElementwise, PredOps) {
  EXPECT_EQ(Binary("pred", "and", {0, 0, 1, 1}, {0, 1, 0, 1}), (std::vector<int64_t>{0, 0, 0, 1}));
  EXPECT_EQ(Binary("pred", "or", {0, 0, 1, 1}, {0, 1, 0, 1}), (std::vector<int64_t>{0, 1, 1, 1}));
  EXPECT_EQ(Binary("pred", "xor", {0, 0, 1, 1}, {0, 1, 0, 1}), (std::vector<int64_t>{0, 1, 1, 0}));
  ASSERT_OK_AND_ASSIGN(n, RunOne({"pred[2]"}, "pred[2] not(p0)", {Ints("pred[2]", {0, 1})}));
  EXPECT_EQ(Ints(n), (std::vector<int64_t>{1, 0}));
}

TEST(EvaluatorElementwise, FloatSignAndRounding) {
  ASSERT_OK_AND_ASSIGN(sign, RunOne({"f32[5]"}, "f32[5] sign(p0)",
                                    {Doubles("f32[5]", {-0.0, kNaN, -3, 2, 0.0})}));
  std::vector<double> s = Doubles(sign);
  EXPECT_TRUE(s[0] == 0 && std::signbit(s[0]));
  EXPECT_TRUE(std::isnan(s[1]));
  EXPECT_EQ(s[2], -1);
  EXPECT_EQ(s[3], 1);
  EXPECT_TRUE(s[4] == 0 && !std::signbit(s[4]));
  ASSERT_OK_AND_ASSIGN(afz, RunOne({"f32[4]"}, "f32[4] round-nearest-afz(p0)",
                                   {Doubles("f32[4]", {2.5, -2.5, 0.5, 1.4})}));
  EXPECT_EQ(Doubles(afz), (std::vector<double>{3, -3, 1, 1}));
  ASSERT_OK_AND_ASSIGN(even, RunOne({"f32[4]"}, "f32[4] round-nearest-even(p0)",
                                    {Doubles("f32[4]", {2.5, -2.5, 0.5, 1.5})}));
  EXPECT_EQ(Doubles(even), (std::vector<double>{2, -2, 0, 2}));
  ASSERT_OK_AND_ASSIGN(fl, RunOne({"f32[2]"}, "f32[2] floor(p0)", {Doubles("f32[2]", {-1.5, 1.5})}));
  EXPECT_EQ(Doubles(fl), (std::vector<double>{-2, 1}));
  ASSERT_OK_AND_ASSIGN(ce, RunOne({"f32[2]"}, "f32[2] ceil(p0)", {Doubles("f32[2]", {-1.5, 1.5})}));
  EXPECT_EQ(Doubles(ce), (std::vector<double>{-1, 2}));
}

TEST(EvaluatorElementwise, FloatMaxMinPropagateNaNAndOrderZeros) {
  ASSERT_OK_AND_ASSIGN(mx, RunOne({"f32[4]", "f32[4]"}, "f32[4] maximum(p0, p1)",
                                  {Doubles("f32[4]", {kNaN, 1, -0.0, 0.0}),
                                   Doubles("f32[4]", {1, kNaN, 0.0, -0.0})}));
  std::vector<double> m = Doubles(mx);
  EXPECT_TRUE(std::isnan(m[0]));
  EXPECT_TRUE(std::isnan(m[1]));
  EXPECT_TRUE(m[2] == 0 && !std::signbit(m[2]));
  EXPECT_TRUE(m[3] == 0 && !std::signbit(m[3]));
  ASSERT_OK_AND_ASSIGN(mn, RunOne({"f32[3]", "f32[3]"}, "f32[3] minimum(p0, p1)",
                                  {Doubles("f32[3]", {kNaN, -0.0, 0.0}),
                                   Doubles("f32[3]", {1, 0.0, -0.0})}));
  std::vector<double> n = Doubles(mn);
  EXPECT_TRUE(std::isnan(n[0]));
  EXPECT_TRUE(n[1] == 0 && std::signbit(n[1]));
  EXPECT_TRUE(n[2] == 0 && std::signbit(n[2]));
}

TEST(EvaluatorElementwise, FloatArithmetic) {
  ASSERT_OK_AND_ASSIGN(rem, RunOne({"f32[3]", "f32[3]"}, "f32[3] remainder(p0, p1)",
                                   {Doubles("f32[3]", {-7, 7, 5.5}), Doubles("f32[3]", {3, -3, 2})}));
  EXPECT_EQ(Doubles(rem), (std::vector<double>{-1, 1, 1.5}));
  ASSERT_OK_AND_ASSIGN(div, RunOne({"f32[3]", "f32[3]"}, "f32[3] divide(p0, p1)",
                                   {Doubles("f32[3]", {1, -1, 0}), Doubles("f32[3]", {0, 0, 0})}));
  std::vector<double> d = Doubles(div);
  EXPECT_EQ(d[0], kInf);
  EXPECT_EQ(d[1], -kInf);
  EXPECT_TRUE(std::isnan(d[2]));
  // 0.1f + 0.2f rounded once to f32.
  ASSERT_OK_AND_ASSIGN(add, RunOne({"f32[1]", "f32[1]"}, "f32[1] add(p0, p1)",
                                   {Doubles("f32[1]", {0.1}), Doubles("f32[1]", {0.2})}));
  EXPECT_EQ(Doubles(add)[0], static_cast<double>(0.1f + 0.2f));
  ASSERT_OK_AND_ASSIGN(pw, RunOne({"f64[2]", "f64[2]"}, "f64[2] power(p0, p1)",
                                  {Doubles("f64[2]", {2, kNaN}), Doubles("f64[2]", {0.5, 0})}));
  EXPECT_EQ(Doubles(pw), (std::vector<double>{std::sqrt(2.0), 1.0}));
  ASSERT_OK_AND_ASSIGN(at, RunOne({"f64[2]", "f64[2]"}, "f64[2] atan2(p0, p1)",
                                  {Doubles("f64[2]", {1, 0}), Doubles("f64[2]", {1, -1})}));
  EXPECT_EQ(Doubles(at), (std::vector<double>{std::atan(1.0), std::acos(-1.0)}));
}

TEST(EvaluatorElementwise, FloatUnaryFunctions) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f64[1]"}, "f64[1] exponential(p0)", {Doubles("f64[1]", {1})}));
  EXPECT_EQ(Doubles(r)[0], std::exp(1.0));
  ASSERT_OK_AND_ASSIGN(fin, RunOne({"f32[4]"}, "pred[4] is-finite(p0)",
                                   {Doubles("f32[4]", {1, kInf, kNaN, -kInf})}));
  EXPECT_EQ(Ints(fin), (std::vector<int64_t>{1, 0, 0, 0}));
  ASSERT_OK_AND_ASSIGN(lg, RunOne({"f32[2]"}, "f32[2] logistic(p0)", {Doubles("f32[2]", {0, -1000})}));
  EXPECT_EQ(Doubles(lg), (std::vector<double>{0.5, 0}));
  ASSERT_OK_AND_ASSIGN(rs, RunOne({"f32[2]"}, "f32[2] rsqrt(p0)", {Doubles("f32[2]", {4, 0})}));
  EXPECT_EQ(Doubles(rs), (std::vector<double>{0.5, kInf}));
  ASSERT_OK_AND_ASSIGN(cb, RunOne({"f64[1]"}, "f64[1] cbrt(p0)", {Doubles("f64[1]", {-27})}));
  EXPECT_DOUBLE_EQ(Doubles(cb)[0], -3);
  ASSERT_OK_AND_ASSIGN(ab, RunOne({"f32[2]"}, "f32[2] abs(p0)", {Doubles("f32[2]", {-0.0, -2})}));
  EXPECT_FALSE(std::signbit(Doubles(ab)[0]));
  EXPECT_EQ(Doubles(ab)[1], 2);
}

TEST(EvaluatorElementwise, FloatCompare) {
  ASSERT_OK_AND_ASSIGN(eq, RunOne({"f32[3]", "f32[3]"}, "pred[3] compare(p0, p1), direction=EQ",
                                  {Doubles("f32[3]", {kNaN, 0.0, 1}),
                                   Doubles("f32[3]", {kNaN, -0.0, 2})}));
  EXPECT_EQ(Ints(eq), (std::vector<int64_t>{0, 1, 0}));
  ASSERT_OK_AND_ASSIGN(ne, RunOne({"f32[2]", "f32[2]"}, "pred[2] compare(p0, p1), direction=NE",
                                  {Doubles("f32[2]", {kNaN, 1}), Doubles("f32[2]", {kNaN, 1})}));
  EXPECT_EQ(Ints(ne), (std::vector<int64_t>{1, 0}));
}

TEST(EvaluatorElementwise, TotalOrderCompare) {
  // -NaN < -inf < -1 < -0 < +0 < 1 < inf < NaN, each against its successor.
  Literal a = BitsLiteral("f32[7]", {0xFFC00000u, 0xFF800000u, 0xBF800000u, 0x80000000u, 0u,
                                     0x3F800000u, 0x7F800000u});
  Literal b = BitsLiteral("f32[7]", {0xFF800000u, 0xBF800000u, 0x80000000u, 0u, 0x3F800000u,
                                     0x7F800000u, 0x7FC00000u});
  ASSERT_OK_AND_ASSIGN(
      lt, RunOne({"f32[7]", "f32[7]"}, "pred[7] compare(p0, p1), direction=LT, type=TOTALORDER",
                 {a, b}));
  EXPECT_EQ(Ints(lt), (std::vector<int64_t>{1, 1, 1, 1, 1, 1, 1}));
  ASSERT_OK_AND_ASSIGN(
      ge, RunOne({"f32[7]", "f32[7]"}, "pred[7] compare(p0, p1), direction=GE, type=TOTALORDER",
                 {a, b}));
  EXPECT_EQ(Ints(ge), (std::vector<int64_t>{0, 0, 0, 0, 0, 0, 0}));
  ASSERT_OK_AND_ASSIGN(
      eq, RunOne({"f32[2]", "f32[2]"}, "pred[2] compare(p0, p1), direction=EQ, type=TOTALORDER",
                 {BitsLiteral("f32[2]", {0x7FC00000u, 0x80000000u}),
                  BitsLiteral("f32[2]", {0x7FC00000u, 0u})}));
  EXPECT_EQ(Ints(eq), (std::vector<int64_t>{1, 0}));
}

TEST(EvaluatorElementwise, IntegerCompareTypes) {
  ASSERT_OK_AND_ASSIGN(
      gt, RunOne({"s32[2]", "s32[2]"}, "pred[2] compare(p0, p1), direction=GT",
                 {Ints("s32[2]", {-1, 1}), Ints("s32[2]", {1, -1})}));
  EXPECT_EQ(Ints(gt), (std::vector<int64_t>{0, 1}));
  ASSERT_OK_AND_ASSIGN(
      ugt, RunOne({"s32[2]", "s32[2]"}, "pred[2] compare(p0, p1), direction=GT, type=UNSIGNED",
                  {Ints("s32[2]", {-1, 1}), Ints("s32[2]", {1, -1})}));
  EXPECT_EQ(Ints(ugt), (std::vector<int64_t>{1, 0}));
  ASSERT_OK_AND_ASSIGN(
      u, RunOne({"u8[2]", "u8[2]"}, "pred[2] compare(p0, p1), direction=LT",
                {Ints("u8[2]", {200, 1}), Ints("u8[2]", {1, 200})}));
  EXPECT_EQ(Ints(u), (std::vector<int64_t>{0, 1}));
}

TEST(EvaluatorElementwise, SelectAndClamp) {
  ASSERT_OK_AND_ASSIGN(
      sel, RunOne({"pred[3]", "s32[3]", "s32[3]"}, "s32[3] select(p0, p1, p2)",
                  {Ints("pred[3]", {1, 0, 1}), Ints("s32[3]", {1, 2, 3}), Ints("s32[3]", {4, 5, 6})}));
  EXPECT_EQ(Ints(sel), (std::vector<int64_t>{1, 5, 3}));
  ASSERT_OK_AND_ASSIGN(
      cl, RunOne({"s32[]", "s32[4]", "s32[]"}, "s32[4] clamp(p0, p1, p2)",
                 {Ints("s32[]", {0}), Ints("s32[4]", {-1, 5, 11, 10}), Ints("s32[]", {10})}));
  EXPECT_EQ(Ints(cl), (std::vector<int64_t>{0, 5, 10, 10}));
  ASSERT_OK_AND_ASSIGN(
      fcl, RunOne({"f32[3]", "f32[3]", "f32[3]"}, "f32[3] clamp(p0, p1, p2)",
                  {Doubles("f32[3]", {0, 0, 0}), Doubles("f32[3]", {kNaN, -2, 3}),
                   Doubles("f32[3]", {1, 1, 1})}));
  std::vector<double> f = Doubles(fcl);
  EXPECT_TRUE(std::isnan(f[0]));
  EXPECT_EQ(f[1], 0);
  EXPECT_EQ(f[2], 1);
}

TEST(EvaluatorElementwise, ConvertFloatToIntSaturatesAndMapsNaNToZero) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[6]"}, "s32[6] convert(p0)",
                                 {Doubles("f32[6]", {1e10, -1e10, kNaN, -1.9, 2.9, -kInf})}));
  EXPECT_EQ(Ints(r), (std::vector<int64_t>{kInt32Max, kInt32Min, 0, -1, 2, kInt32Min}));
  ASSERT_OK_AND_ASSIGN(u, RunOne({"f32[4]"}, "u8[4] convert(p0)",
                                 {Doubles("f32[4]", {-5, 300, 3.7, kInf})}));
  EXPECT_EQ(Ints(u), (std::vector<int64_t>{0, 255, 3, 255}));
  ASSERT_OK_AND_ASSIGN(big, RunOne({"f64[2]"}, "s64[2] convert(p0)", {Doubles("f64[2]", {1e30, -1e30})}));
  EXPECT_EQ(Ints(big), (std::vector<int64_t>{std::numeric_limits<int64_t>::max(),
                                             std::numeric_limits<int64_t>::min()}));
}

TEST(EvaluatorElementwise, ConvertIntegers) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[3]"}, "s8[3] convert(p0)", {Ints("s32[3]", {300, -129, -1})}));
  EXPECT_EQ(Ints(r), (std::vector<int64_t>{44, 127, -1}));
  ASSERT_OK_AND_ASSIGN(u, RunOne({"s8[2]"}, "u32[2] convert(p0)", {Ints("s8[2]", {-1, 5})}));
  EXPECT_EQ(Bits(u), (std::vector<uint64_t>{0xFFFFFFFFu, 5}));
  ASSERT_OK_AND_ASSIGN(p, RunOne({"s32[3]"}, "pred[3] convert(p0)", {Ints("s32[3]", {0, 7, -1})}));
  EXPECT_EQ(Ints(p), (std::vector<int64_t>{0, 1, 1}));
  ASSERT_OK_AND_ASSIGN(q, RunOne({"pred[2]"}, "f32[2] convert(p0)", {Ints("pred[2]", {1, 0})}));
  EXPECT_EQ(Doubles(q), (std::vector<double>{1, 0}));
}

TEST(EvaluatorElementwise, ConvertIntToFloatRoundsOnceToNearestEven) {
  // 2^60 + 2^36 + 1 lies just above the midpoint between two f32 values; a
  // conversion through double would lose the +1 and round to even (down).
  const int64_t x = (int64_t{1} << 60) + (int64_t{1} << 36) + 1;
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s64[3]"}, "f32[3] convert(p0)",
                                 {Ints("s64[3]", {x, 16777217, 16777219})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{std::ldexp(1.0, 60) + std::ldexp(1.0, 37),
                                             16777216.0, 16777220.0}));
}

TEST(EvaluatorElementwise, ConvertFloatsAndPred) {
  ASSERT_OK_AND_ASSIGN(p, RunOne({"f32[4]"}, "pred[4] convert(p0)",
                                 {Doubles("f32[4]", {0.0, -0.0, kNaN, 2})}));
  EXPECT_EQ(Ints(p), (std::vector<int64_t>{0, 0, 1, 1}));
  // 1 + 2^-8 is halfway between two bf16 values: ties to even gives 1.0.
  ASSERT_OK_AND_ASSIGN(bf, RunOne({"f32[2]"}, "bf16[2] convert(p0)",
                                  {Doubles("f32[2]", {1.00390625, 1.01171875})}));
  EXPECT_EQ(Bits(bf), (std::vector<uint64_t>{0x3F80, 0x3F82}));
  ASSERT_OK_AND_ASSIGN(h, RunOne({"f32[2]"}, "f16[2] convert(p0)", {Doubles("f32[2]", {65520, 1})}));
  EXPECT_EQ(Bits(h), (std::vector<uint64_t>{0x7C00, 0x3C00}));
}

TEST(EvaluatorElementwise, NarrowFloatArithmeticRoundsOncePerOp) {
  // f16: 2048 + 1 is a tie between 2048 and 2050 -> 2048; 2048 + 3 -> 2052.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f16[2]", "f16[2]"}, "f16[2] add(p0, p1)",
                                 {Doubles("f16[2]", {2048, 2048}), Doubles("f16[2]", {1, 3})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{2048, 2052}));
  ASSERT_OK_AND_ASSIGN(b, RunOne({"bf16[1]", "bf16[1]"}, "bf16[1] multiply(p0, p1)",
                                 {Doubles("bf16[1]", {3}), Doubles("bf16[1]", {1.0078125})}));
  // 3 * (1 + 2^-7) = 3.0234375 -> bf16 (8 significant bits): 3.03125 is 3 + 2^-5, tie
  // between 3.015625 and 3.03125 resolved to even mantissa.
  EXPECT_EQ(Doubles(b)[0], 3.03125);
}

TEST(EvaluatorElementwise, ComplexOps) {
  ASSERT_OK_AND_ASSIGN(c, RunOne({"f32[2]", "f32[2]"}, "c64[2] complex(p0, p1)",
                                 {Doubles("f32[2]", {1, 3}), Doubles("f32[2]", {2, 4})}));
  EXPECT_EQ(Complexes(c), (std::vector<std::complex<double>>{{1, 2}, {3, 4}}));
  std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[2] parameter(0)
  b = f32[2] parameter(1)
  z = c64[2] complex(a, b)
  w = c64[2] multiply(z, z)
  ab = f32[2] abs(z)
  re = f32[2] real(w)
  im = f32[2] imag(w)
  eq = pred[2] compare(z, w), direction=NE
  ROOT t = (c64[2], f32[2], f32[2], f32[2], pred[2]) tuple(w, ab, re, im, eq)
})";
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Doubles("f32[2]", {1, 3}), Doubles("f32[2]", {2, 4})}));
  ASSERT_EQ(r.elements().size(), 5u);
  EXPECT_EQ(Complexes(r.element(0)), (std::vector<std::complex<double>>{{-3, 4}, {-7, 24}}));
  EXPECT_EQ(Doubles(r.element(1))[1], 5);
  EXPECT_EQ(Doubles(r.element(2)), (std::vector<double>{-3, -7}));
  EXPECT_EQ(Doubles(r.element(3)), (std::vector<double>{4, 24}));
  EXPECT_EQ(Ints(r.element(4)), (std::vector<int64_t>{1, 1}));
}

TEST(EvaluatorElementwise, ComplexConvert) {
  ASSERT_OK_AND_ASSIGN(z, RunOne({"f32[2]"}, "c128[2] convert(p0)", {Doubles("f32[2]", {1.5, -2})}));
  EXPECT_EQ(Complexes(z), (std::vector<std::complex<double>>{{1.5, 0}, {-2, 0}}));
  std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[1] parameter(0)
  b = f32[1] parameter(1)
  z = c64[1] complex(a, b)
  ROOT r = f32[1] convert(z)
})";
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Doubles("f32[1]", {2.5}), Doubles("f32[1]", {7})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{2.5}));
}

TEST(EvaluatorElementwise, BitcastConvert) {
  ASSERT_OK_AND_ASSIGN(same, RunOne({"f32[2]"}, "s32[2] bitcast-convert(p0)",
                                    {Doubles("f32[2]", {1.0, -0.0})}));
  EXPECT_EQ(Bits(same), (std::vector<uint64_t>{0x3F800000u, 0x80000000u}));
  ASSERT_OK_AND_ASSIGN(split, RunOne({"f32[]"}, "u16[2] bitcast-convert(p0)", {Doubles("f32[]", {1.0})}));
  EXPECT_EQ(Bits(split), (std::vector<uint64_t>{0x0000, 0x3F80}));
  ASSERT_OK_AND_ASSIGN(join, RunOne({"u8[2,4]"}, "u32[2] bitcast-convert(p0)",
                                    {Ints("u8[2,4]", {1, 2, 3, 4, 0xFF, 0, 0, 0x80})}));
  EXPECT_EQ(Bits(join), (std::vector<uint64_t>{0x04030201u, 0x800000FFu}));
}

TEST(EvaluatorElementwise, ReducePrecisionToHalf) {
  // exponent_bits=5, mantissa_bits=10 (f16's format), applied to f32.
  Literal x = Doubles("f32[7]", {65520, 1e-8, kNaN, 1 + std::ldexp(1.0, -11),
                                 1 + 3 * std::ldexp(1.0, -11), -65504, 0.1});
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"f32[7]"}, "f32[7] reduce-precision(p0), exponent_bits=5, mantissa_bits=10", {x}));
  std::vector<double> v = Doubles(r);
  EXPECT_EQ(v[0], kInf);
  EXPECT_EQ(v[1], 0);
  EXPECT_TRUE(std::isnan(v[2]));
  EXPECT_EQ(v[3], 1);
  EXPECT_EQ(v[4], 1 + std::ldexp(1.0, -9));
  EXPECT_EQ(v[5], -65504);
  EXPECT_EQ(v[6], 0.0999755859375);  // f16(0.1)
}

TEST(EvaluatorElementwise, ReducePrecisionNaNWithoutMantissaBecomesInf) {
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"f32[2]"}, "f32[2] reduce-precision(p0), exponent_bits=8, mantissa_bits=0",
                {Doubles("f32[2]", {kNaN, 1.75})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{kInf, 2}));
}

TEST(EvaluatorElementwise, StochasticConvert) {
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"f32[5]", "u32[5]"}, "s32[5] stochastic-convert(p0, p1)",
                {Doubles("f32[5]", {2.25, -2.25, 2.25, kNaN, 1e20}),
                 Ints("u32[5]", {0, 0, 0xFFFFFFFFLL, 0, 0})}));
  EXPECT_EQ(Ints(r), (std::vector<int64_t>{3, -3, 2, 0, kInt32Max}));
}

TEST(EvaluatorElementwise, ScalarsAndEmptyArrays) {
  ASSERT_OK_AND_ASSIGN(s, RunOne({"s32[]", "s32[]"}, "s32[] add(p0, p1)",
                                 {Ints("s32[]", {2}), Ints("s32[]", {3})}));
  EXPECT_EQ(Ints(s), (std::vector<int64_t>{5}));
  ASSERT_OK_AND_ASSIGN(e, RunOne({"f32[0,3]", "f32[0,3]"}, "f32[0,3] add(p0, p1)",
                                 {Doubles("f32[0,3]", {}), Doubles("f32[0,3]", {})}));
  EXPECT_EQ(e.element_count(), 0);
}

TEST(EvaluatorElementwise, NonDefaultLayouts) {
  // Operands in column-major layout; the result in row-major.
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"s32[2,3]{0,1}", "s32[2,3]{0,1}"}, "s32[2,3]{1,0} subtract(p0, p1)",
                {Ints("s32[2,3]", {10, 20, 30, 40, 50, 60}), Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(r), (std::vector<int64_t>{9, 18, 27, 36, 45, 54}));
  EXPECT_EQ(r.shape().layout().minor_to_major, (std::vector<int64_t>{1, 0}));
}

TEST(EvaluatorElementwise, TypeErrorsAreErrors) {
  auto r = RunOne({"s32[2]"}, "s32[2] exponential(p0)", {Ints("s32[2]", {1, 2})});
  EXPECT_FALSE(r.ok());
}


TEST(EvaluatorElementwise, ComplexMaxMinAtan2CbrtLogistic) {
  std::string hlo = R"(
HloModule m
ENTRY e {
  a = c64[3] constant({(1.5, 2.5), (1.5, 7.5), (0, 1.5)})
  b = c64[3] constant({(7.5, 1.5), (1.5, 2.5), (-0, 2.5)})
  mx = c64[3] maximum(a, b)
  mn = c64[3] minimum(a, b)
  y = c128[] constant((1, 0))
  x = c128[] constant((0, 0))
  at = c128[] atan2(y, x)
  z = c128[] constant((-8, 0))
  cb = c128[] cbrt(z)
  zero = c128[] constant((0, 0))
  lg = c128[] logistic(zero)
  ROOT t = (c64[3], c64[3], c128[], c128[], c128[]) tuple(mx, mn, at, cb, lg)
})";
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo));
  EXPECT_EQ(Complexes(r.element(0)),
            (std::vector<std::complex<double>>{{7.5, 1.5}, {1.5, 7.5}, {0, 2.5}}));
  EXPECT_EQ(Complexes(r.element(1)),
            (std::vector<std::complex<double>>{{1.5, 2.5}, {1.5, 2.5}, {0, 1.5}}));
  EXPECT_NEAR(Complexes(r.element(2))[0].real(), std::acos(0.0), 1e-15);
  EXPECT_NEAR(Complexes(r.element(2))[0].imag(), 0, 1e-15);
  // Principal cube root of -8: 2 * e^(i pi/3) = 1 + i sqrt(3).
  EXPECT_NEAR(Complexes(r.element(3))[0].real(), 1, 1e-12);
  EXPECT_NEAR(Complexes(r.element(3))[0].imag(), std::sqrt(3.0), 1e-12);
  EXPECT_EQ(Complexes(r.element(4))[0], std::complex<double>(0.5, 0));
}

TEST(EvaluatorElementwise, ComplexToPredTakesTheRealPart) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
ENTRY e {
  c = c128[3] constant({(-1, 0), (0, 1), (1, 0)})
  ROOT p = pred[3] convert(c)
})"));
  EXPECT_EQ(Ints(r), (std::vector<int64_t>{1, 0, 1}));
}

TEST(EvaluatorElementwise, BitcastConvertPredAsOneBitWhereOnlyThatFits) {
  std::vector<int64_t> bits(64, 0);
  bits[0] = bits[1] = bits[63] = 1;
  ASSERT_OK_AND_ASSIGN(r, RunOne({"pred[64]"}, "s64[] bitcast-convert(p0)", {Ints("pred[64]", bits)}));
  EXPECT_EQ(Bits(r), (std::vector<uint64_t>{0x8000000000000003ull}));
  // Eight-bit pred: pred[2] <-> u16 joins bytes.
  ASSERT_OK_AND_ASSIGN(b, RunOne({"pred[2]"}, "u16[] bitcast-convert(p0)", {Ints("pred[2]", {1, 1})}));
  EXPECT_EQ(Bits(b), (std::vector<uint64_t>{0x0101}));
}

}  // namespace
}  // namespace xjit::testing
