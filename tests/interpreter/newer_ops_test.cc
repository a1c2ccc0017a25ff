// ragged-dot, scaled-dot, scan and shuffle (semantics from XLA's expansions;
// see interpreter/newer_ops.cc). Expected values are worked by hand.
#include <cstdint>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "tests/interpreter/evaluator_test_util.h"

namespace xjit::testing {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

using D = std::vector<double>;

TEST(RaggedDot, NonContractingRowsPickTheirGroup) {
  // Rows 0 | 1,2 | (3 in no group) with sizes {1, 2}; group 0 takes column
  // 0 of a row, group 1 column 1.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[4,2]", "f32[2,2,1]", "s32[2]"},
                                 "f32[4,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
                                 "rhs_contracting_dims={1}, lhs_ragged_dims={0}, "
                                 "rhs_group_dims={0}",
                                 {Doubles("f32[4,2]", {1, 2, 3, 4, 5, 6, 7, 8}),
                                  Doubles("f32[2,2,1]", {1, 0, 0, 1}), Ints("s32[2]", {1, 2})}));
  EXPECT_EQ(Doubles(r), (D{1, 4, 6, 0}));
}

TEST(RaggedDot, NonContractingSizesPerBatch) {
  // group_sizes [b, g]: batch 0 {2, 0} (both rows group 0, x10), batch 1
  // {0, 1} (row 0 group 1, x100; row 1 in no group).
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"f32[2,2,1]", "f32[2,2,1,1]", "s32[2,2]"},
                "f32[2,2,1] ragged-dot(p0, p1, p2), lhs_batch_dims={0}, rhs_batch_dims={1}, "
                "lhs_contracting_dims={2}, rhs_contracting_dims={2}, lhs_ragged_dims={1}, "
                "rhs_group_dims={0}",
                {Doubles("f32[2,2,1]", {1, 2, 3, 4}), Doubles("f32[2,2,1,1]", {10, 10, 100, 100}),
                 Ints("s32[2,2]", {2, 0, 0, 1})}));
  EXPECT_EQ(Doubles(r), (D{10, 20, 300, 0}));
}

TEST(RaggedDot, ContractingGivesOneResultPerGroup) {
  // k in [0,1) then [1,4): 1 and 2+3+4.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[1,4]", "f32[4,1]", "s32[2]"},
                                 "f32[2,1,1] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
                                 "rhs_contracting_dims={0}, lhs_ragged_dims={1}",
                                 {Doubles("f32[1,4]", {1, 2, 3, 4}),
                                  Doubles("f32[4,1]", {1, 1, 1, 1}), Ints("s32[2]", {1, 3})}));
  EXPECT_EQ(Doubles(r), (D{1, 9}));
}

TEST(RaggedDot, BatchIsAPlainDot) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[2,1,1]", "f32[2,1,1]", "s32[1]"},
                                 "f32[2,1,1] ragged-dot(p0, p1, p2), lhs_batch_dims={0}, "
                                 "rhs_batch_dims={0}, lhs_contracting_dims={2}, "
                                 "rhs_contracting_dims={1}, lhs_ragged_dims={0}",
                                 {Doubles("f32[2,1,1]", {2, 3}), Doubles("f32[2,1,1]", {5, 7}),
                                  Ints("s32[1]", {1})}));
  EXPECT_EQ(Doubles(r), (D{10, 21}));
}

TEST(RaggedDot, MissingRaggedDimensionIsAnError) {
  auto r = RunOne({"f32[2,2]", "f32[1,2,2]", "s32[1]"},
                  "f32[2,2] ragged-dot(p0, p1, p2), lhs_contracting_dims={1}, "
                  "rhs_contracting_dims={1}, rhs_group_dims={0}",
                  {Doubles("f32[2,2]", {1, 2, 3, 4}), Doubles("f32[1,2,2]", {1, 0, 0, 1}),
                   Ints("s32[1]", {2})});
  EXPECT_FALSE(r.ok());
}

TEST(ScaledDot, BlockScalesAndScalarScale) {
  // lhs [1,2,3,4] scaled by blocks {2, 10} of two: 2,4,30,40; the scalar rhs
  // scale leaves rhs as it is (XLA's expansion); sum = 76.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[1,4]", "f32[1,4]", "f32[1,2]", "f32[]"},
                                 "f32[1,1] scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, "
                                 "rhs_contracting_dims={1}",
                                 {Doubles("f32[1,4]", {1, 2, 3, 4}),
                                  Doubles("f32[1,4]", {1, 1, 1, 1}), Doubles("f32[1,2]", {2, 10}),
                                  Doubles("f32[]", {5})}));
  EXPECT_EQ(Doubles(r), (D{76}));
}

TEST(ScaledDot, ScalingRoundsInTheCommonType) {
  // bf16 1.0078125 * 3 = 3.0234375 lies halfway between the bf16 values
  // 3.015625 and 3.03125; round to even gives 3.03125.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"bf16[1,1]", "bf16[1,1]", "bf16[1,1]", "bf16[]"},
                                 "f32[1,1] scaled-dot(p0, p1, p2, p3), lhs_contracting_dims={1}, "
                                 "rhs_contracting_dims={1}",
                                 {Doubles("bf16[1,1]", {1.0078125}), Doubles("bf16[1,1]", {1}),
                                  Doubles("bf16[1,1]", {3}), Doubles("bf16[]", {1})}));
  EXPECT_EQ(Doubles(r), (D{3.03125}));
}

TEST(Shuffle, Rotate) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[4]"}, "f32[4] shuffle(p0), dimensions={0}, mode=rotate, "
                                             "shifts={1}",
                                 {Doubles("f32[4]", {1, 2, 3, 4})}));
  EXPECT_EQ(Doubles(r), (D{2, 3, 4, 1}));
  ASSERT_OK_AND_ASSIGN(back, RunOne({"f32[4]"}, "f32[4] shuffle(p0), dimensions={0}, "
                                                "mode=rotate, shifts={-1}",
                                    {Doubles("f32[4]", {1, 2, 3, 4})}));
  EXPECT_EQ(Doubles(back), (D{4, 1, 2, 3}));
  // result[i][j] = x[(i+1)%2][(j+2)%3].
  ASSERT_OK_AND_ASSIGN(two, RunOne({"f32[2,3]"}, "f32[2,3] shuffle(p0), dimensions={0,1}, "
                                                 "mode=rotate, shifts={1,2}",
                                   {Doubles("f32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Doubles(two), (D{6, 4, 5, 3, 1, 2}));
}

TEST(Shuffle, Permute) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[4]"}, "f32[4] shuffle(p0), dimensions={0}, mode=permute, "
                                             "indices=s32[4]{0} {3, 1, 0, 2}",
                                 {Doubles("f32[4]", {10, 20, 30, 40})}));
  EXPECT_EQ(Doubles(r), (D{40, 20, 10, 30}));
  // Rows permuted; the indices share their value along dimension 1.
  ASSERT_OK_AND_ASSIGN(rows, RunOne({"f32[3,2]"}, "f32[3,2] shuffle(p0), dimensions={0}, "
                                                  "mode=permute, indices=s32[3,1]{1,0} { {2}, "
                                                  "{0}, {1} }",
                                    {Doubles("f32[3,2]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Doubles(rows), (D{5, 6, 1, 2, 3, 4}));
  // Both dimensions at once: element (i, j) takes x[idx[i][j][0]][idx[i][j][1]].
  ASSERT_OK_AND_ASSIGN(both, RunOne({"f32[2,2]"}, "f32[2,2] shuffle(p0), dimensions={0,1}, "
                                                  "mode=permute, indices=s32[2,2,2]{2,1,0} { { "
                                                  "{1,1}, {0,0} }, { {1,0}, {0,1} } }",
                                    {Doubles("f32[2,2]", {1, 2, 3, 4})}));
  EXPECT_EQ(Doubles(both), (D{4, 1, 3, 2}));
  auto unknown = RunOne({"f32[2]"}, "f32[2] shuffle(p0), dimensions={0}, mode=interleave",
                        {Doubles("f32[2]", {1, 2})});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kUnimplemented) << unknown.status();
}

TEST(Scan, PrefixSumForwardAndReverse) {
  const char* body = R"(
HloModule m
step {
  in = f32[] parameter(0)
  carry = f32[] parameter(1)
  s = f32[] add(in, carry)
  ROOT t = (f32[], f32[]) tuple(s, s)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT scan = (f32[4], f32[]) scan(x, z), dimensions={0}, num_carries=1, %s to_apply=step
})";
  auto run = [&](const char* reverse) {
    std::string text(body);
    text.replace(text.find("%s"), 2, reverse);
    return RunHlo(text, {Doubles("f32[4]", {1, 2, 3, 4})});
  };
  ASSERT_OK_AND_ASSIGN(forward, run(""));
  EXPECT_EQ(Doubles(forward.element(0)), (D{1, 3, 6, 10}));
  EXPECT_EQ(Doubles(forward.element(1)), (D{10}));
  ASSERT_OK_AND_ASSIGN(reverse, run("is_reverse=true,"));
  EXPECT_EQ(Doubles(reverse.element(0)), (D{10, 9, 7, 4}));
  EXPECT_EQ(Doubles(reverse.element(1)), (D{10}));
}

TEST(Scan, InputsComeBeforeCarries) {
  // out_i = x_i - carry; carry = out_i: 1-0=1, 2-1=1, 3-1=2, 4-2=2. With the
  // carry first it would be 0-1=-1, ...
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
step {
  in = f32[] parameter(0)
  carry = f32[] parameter(1)
  d = f32[] subtract(in, carry)
  ROOT t = (f32[], f32[]) tuple(d, d)
}
ENTRY e {
  x = f32[4] parameter(0)
  z = f32[] constant(0)
  ROOT scan = (f32[4], f32[]) scan(x, z), dimensions={0}, num_carries=1, to_apply=step
})", {Doubles("f32[4]", {1, 2, 3, 4})}));
  EXPECT_EQ(Doubles(r.element(0)), (D{1, 1, 2, 2}));
  EXPECT_EQ(Doubles(r.element(1)), (D{2}));
}

TEST(Scan, RowsAlongDimensionZero) {
  // The module of tests/hlo_text/valid/scan_prefix_sum.hlo: running sums of
  // rows.
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule scan_prefix_sum
%step (elem: f32[3], carry: f32[3]) -> (f32[3], f32[3]) {
  %elem = f32[3] parameter(0)
  %carry = f32[3] parameter(1)
  %sum = f32[3] add(f32[3] %elem, f32[3] %carry)
  ROOT %t = (f32[3], f32[3]) tuple(f32[3] %sum, f32[3] %sum)
}
ENTRY %main (x: f32[4,3], init: f32[3]) -> (f32[4,3], f32[3]) {
  %x = f32[4,3] parameter(0)
  %init = f32[3] parameter(1)
  ROOT %scan = (f32[4,3], f32[3]) scan(f32[4,3] %x, f32[3] %init), dimensions={0}, num_carries=1, is_associative=true, to_apply=%step
})", {Doubles("f32[4,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}),
      Doubles("f32[3]", {100, 200, 300})}));
  EXPECT_EQ(Doubles(r.element(0)),
            (D{101, 202, 303, 105, 207, 309, 112, 215, 318, 122, 226, 330}));
  EXPECT_EQ(Doubles(r.element(1)), (D{122, 226, 330}));
}

}  // namespace
}  // namespace xjit::testing
