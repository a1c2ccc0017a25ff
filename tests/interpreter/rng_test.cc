// rng-bit-generator against the Random123 known-answer vectors (ThreeFry-2x32
// with 20 rounds, Philox-4x32 with 10 rounds), mapped through XLA's state
// layout (state[0] = key, then the counter); rng's range and determinism.
#include <cmath>

#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "interpreter/ops_internal.h"
#include "tests/interpreter/ops_test_util.h"

namespace xjit::testing {
namespace {

using eval::internal::Philox4x32;
using eval::internal::ThreeFry2x32;

Literal MustRun(absl::string_view text) {
  auto result = RunHlo(text);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(*result) : Literal();
}

TEST(RngKnownAnswerTest, ThreeFry2x32) {
  EXPECT_EQ(ThreeFry2x32({0, 0}, {0, 0}), (std::array<uint32_t, 2>{0x6b200159, 0x99ba4efe}));
  EXPECT_EQ(ThreeFry2x32({0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 2>{0x1cb996fc, 0xbb002be7}));
  EXPECT_EQ(ThreeFry2x32({0x243f6a88, 0x85a308d3}, {0x13198a2e, 0x03707344}),
            (std::array<uint32_t, 2>{0xc4923a9c, 0x483df7a0}));
}

TEST(RngKnownAnswerTest, Philox4x32) {
  EXPECT_EQ(Philox4x32({0, 0, 0, 0}, {0, 0}),
            (std::array<uint32_t, 4>{0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8}));
  EXPECT_EQ(Philox4x32({0xffffffff, 0xffffffff, 0xffffffff, 0xffffffff}, {0xffffffff, 0xffffffff}),
            (std::array<uint32_t, 4>{0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd}));
  EXPECT_EQ(Philox4x32({0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344}, {0xa4093822, 0x299f31d0}),
            (std::array<uint32_t, 4>{0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1}));
}

// Key 0x03707344_13198a2e and counter 0x85a308d3_243f6a88 are the third
// ThreeFry known-answer vector: words {0xc4923a9c, 0x483df7a0}.
constexpr char kThreeFry[] = R"(
HloModule m
ENTRY e {
  s = u64[2] constant({247824715720788526, 9629550131187509896})
  ROOT r = (u64[2], %s) rng-bit-generator(s), algorithm=rng_three_fry
})";

Literal ThreeFry(const char* shape) {
  char text[1024];
  std::snprintf(text, sizeof(text), kThreeFry, shape);
  return MustRun(text);
}

TEST(RngBitGeneratorTest, ThreeFryLayouts) {
  // 64-bit: one block per element, low word first; the counter advances by 1.
  Literal a = ThreeFry("u64[]");
  EXPECT_TRUE(LiteralsEqual(a.element(1), Lit("u64[] 5205589014174907036")));
  EXPECT_TRUE(LiteralsEqual(a.element(0), Lit("u64[2]{0} {247824715720788526, 9629550131187509897}")));
  // 32-bit, even size: the block's two words are adjacent along the split dim.
  Literal b = ThreeFry("u32[2]");
  EXPECT_TRUE(LiteralsEqual(b.element(1), Lit("u32[2]{0} {3297917596, 1212020640}")));
  EXPECT_TRUE(LiteralsEqual(b.element(0), Lit("u64[2]{0} {247824715720788526, 9629550131187509897}")));
  // 32-bit scalar: word 0 only.
  Literal c = ThreeFry("u32[]");
  EXPECT_TRUE(LiteralsEqual(c.element(1), Lit("u32[] 3297917596")));
  // s32[3]: halves of size 2, counter advances by 2; first block as above.
  Literal d = ThreeFry("s32[3]");
  EXPECT_EQ(d.element(1).GetBits({0}), 0xc4923a9cu);
  EXPECT_EQ(d.element(1).GetBits({1}), 0x483df7a0u);
  EXPECT_TRUE(LiteralsEqual(d.element(0), Lit("u64[2]{0} {247824715720788526, 9629550131187509898}")));
  // u32[1,2]: split along dim 1 (the first even one).
  Literal e = ThreeFry("u32[1,2]");
  EXPECT_TRUE(LiteralsEqual(e.element(1), Lit("u32[1,2] {{3297917596, 1212020640}}")));
}

TEST(RngBitGeneratorTest, PhiloxLayouts) {
  // u64[3] state: key, counter low, counter high = the third Philox vector.
  Literal a = MustRun(R"(
HloModule m
ENTRY e {
  s = u64[3] constant({2999170649027065890, 9629550131187509896, 247824715720788526})
  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_philox
})");
  EXPECT_TRUE(LiteralsEqual(a.element(1), Lit("u32[4]{0} {3513581065, 2499661035, 1342301216, 605187745}")));
  EXPECT_TRUE(LiteralsEqual(
      a.element(0), Lit("u64[3]{0} {2999170649027065890, 9629550131187509897, 247824715720788526}")));
  // u64[2] state {0, 0}: key 0, counter (0, high = the key 0); rng_default is
  // Philox on CPU. 64-bit outputs pair the words (0,1) and (2,3).
  Literal b = MustRun(R"(
HloModule m
ENTRY e {
  s = u64[2] constant({0, 0})
  ROOT r = (u64[2], u64[2]) rng-bit-generator(s), algorithm=rng_default
})");
  EXPECT_TRUE(LiteralsEqual(b.element(1), Lit("u64[2]{0} {16242730742183356629, 11169168799798111308}")));
  EXPECT_TRUE(LiteralsEqual(b.element(0), Lit("u64[2]{0} {0, 1}")));
  Literal c = MustRun(R"(
HloModule m
ENTRY e {
  s = u64[2] constant({0, 0})
  ROOT r = (u64[2], u32[2,2]) rng-bit-generator(s), algorithm=rng_philox
})");
  EXPECT_TRUE(LiteralsEqual(c.element(1), Lit("u32[2,2] {{1713891541, 3781805453}, {3159862348, 2600524760}}")));
  // All-ones key and counter (the second vector); two blocks carry the
  // 128-bit counter around to 1.
  Literal d = MustRun(R"(
HloModule m
ENTRY e {
  s = u64[3] constant({18446744073709551615, 18446744073709551615, 18446744073709551615})
  ROOT r = (u64[3], u32[8]) rng-bit-generator(s), algorithm=rng_philox
})");
  EXPECT_EQ(d.element(1).GetBits({0}), 0x408f276du);
  EXPECT_EQ(d.element(1).GetBits({1}), 0x41c83b0eu);
  EXPECT_EQ(d.element(1).GetBits({2}), 0xa20bc7c6u);
  EXPECT_EQ(d.element(1).GetBits({3}), 0x6d5451fdu);
  EXPECT_TRUE(LiteralsEqual(d.element(0), Lit("u64[3]{0} {18446744073709551615, 1, 0}")));
  // Narrow outputs keep the low bits of each 32-bit word.
  Literal n = MustRun(R"(
HloModule m
ENTRY e {
  s = u64[2] constant({0, 0})
  ROOT r = (u64[2], u16[2]) rng-bit-generator(s), algorithm=rng_philox
})");
  EXPECT_TRUE(LiteralsEqual(n.element(1), Lit("u16[2]{0} {59605, 50573}")));
}

TEST(RngTest, UniformInRangeAndDeterministic) {
  constexpr char kText[] = R"(
HloModule m
ENTRY e {
  a = f32[] constant(2)
  b = f32[] constant(3)
  x = f32[1000] rng(a, b), distribution=rng_uniform
  c = s32[] constant(-5)
  d = s32[] constant(5)
  y = s32[1000] rng(c, d), distribution=rng_uniform
  ROOT t = (f32[1000], s32[1000]) tuple(x, y)
})";
  Literal r1 = MustRun(kText);
  Literal r2 = MustRun(kText);
  EXPECT_TRUE(r1 == r2);
  bool distinct = false;
  for (int64_t i = 0; i < 1000; ++i) {
    double v = r1.element(0).GetDouble({i});
    EXPECT_GE(v, 2.0);
    EXPECT_LT(v, 3.0);
    int64_t w = r1.element(1).GetInt({i});
    EXPECT_GE(w, -5);
    EXPECT_LT(w, 5);
    if (v != r1.element(0).GetDouble({0})) distinct = true;
  }
  EXPECT_TRUE(distinct);
}

TEST(RngTest, NormalMoments) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  mu = f64[] constant(1)
  sigma = f64[] constant(2)
  ROOT x = f64[20000] rng(mu, sigma), distribution=rng_normal
})");
  double sum = 0, sum_sq = 0;
  for (int64_t i = 0; i < 20000; ++i) {
    double v = r.GetDouble({i});
    sum += v;
    sum_sq += v * v;
  }
  double mean = sum / 20000;
  double sd = std::sqrt(sum_sq / 20000 - mean * mean);
  EXPECT_NEAR(mean, 1.0, 0.1);
  EXPECT_NEAR(sd, 2.0, 0.1);
}

}  // namespace
}  // namespace xjit::testing
