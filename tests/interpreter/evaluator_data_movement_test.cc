// Data-movement operations of the evaluator against hand-computed values,
// including non-default and tiled layouts, size-0 dimensions, bitcast's
// physical reinterpretation, clamped dynamic slices and dynamic sizes.
#include <complex>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/interpreter/evaluator_test_util.h"

namespace xjit::testing {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

using V = std::vector<int64_t>;

TEST(EvaluatorDataMovement, Broadcast) {
  ASSERT_OK_AND_ASSIGN(a, RunOne({"s32[2]"}, "s32[2,3] broadcast(p0), dimensions={0}",
                                 {Ints("s32[2]", {1, 2})}));
  EXPECT_EQ(Ints(a), (V{1, 1, 1, 2, 2, 2}));
  ASSERT_OK_AND_ASSIGN(b, RunOne({"s32[3]"}, "s32[2,3] broadcast(p0), dimensions={1}",
                                 {Ints("s32[3]", {1, 2, 3})}));
  EXPECT_EQ(Ints(b), (V{1, 2, 3, 1, 2, 3}));
  ASSERT_OK_AND_ASSIGN(c, RunOne({"s32[]"}, "s32[2,2] broadcast(p0), dimensions={}",
                                 {Ints("s32[]", {7})}));
  EXPECT_EQ(Ints(c), (V{7, 7, 7, 7}));
}

TEST(EvaluatorDataMovement, ReshapeKeepsRowMajorOrderWhateverTheLayouts) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[2,3]{0,1}"}, "s32[3,2]{0,1} reshape(p0)",
                                 {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(r), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));
}

TEST(EvaluatorDataMovement, Transpose) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[2,3]"}, "s32[3,2] transpose(p0), dimensions={1,0}",
                                 {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(r), (V{1, 4, 2, 5, 3, 6}));
  ASSERT_OK_AND_ASSIGN(
      t, RunOne({"s32[2,1,3]"}, "s32[3,2,1] transpose(p0), dimensions={2,0,1}",
                {Ints("s32[2,1,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(t), (V{1, 4, 2, 5, 3, 6}));
}

TEST(EvaluatorDataMovement, SliceWithStrides) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[10]"}, "s32[3] slice(p0), slice={[1:8:3]}",
                                 {Ints("s32[10]", {0, 1, 2, 3, 4, 5, 6, 7, 8, 9})}));
  EXPECT_EQ(Ints(r), (V{1, 4, 7}));
  ASSERT_OK_AND_ASSIGN(m, RunOne({"s32[3,3]"}, "s32[2,1] slice(p0), slice={[1:3], [2:3]}",
                                 {Ints("s32[3,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9})}));
  EXPECT_EQ(Ints(m), (V{6, 9}));
}

TEST(EvaluatorDataMovement, PadEdgeInteriorAndNegative) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[3]", "s32[]"}, "s32[8] pad(p0, p1), padding=1_2_1",
                                 {Ints("s32[3]", {1, 2, 3}), Ints("s32[]", {0})}));
  EXPECT_EQ(Ints(r), (V{0, 1, 0, 2, 0, 3, 0, 0}));
  ASSERT_OK_AND_ASSIGN(n, RunOne({"s32[3]", "s32[]"}, "s32[2] pad(p0, p1), padding=-1_0",
                                 {Ints("s32[3]", {1, 2, 3}), Ints("s32[]", {0})}));
  EXPECT_EQ(Ints(n), (V{2, 3}));
  ASSERT_OK_AND_ASSIGN(
      m, RunOne({"s32[2,2]", "s32[]"}, "s32[3,3] pad(p0, p1), padding=0_1x-1_1_1",
                {Ints("s32[2,2]", {1, 2, 3, 4}), Ints("s32[]", {9})}));
  // Columns: interior makes [a, 9, b], low -1 drops a, high 1 appends 9.
  EXPECT_EQ(Ints(m), (V{9, 2, 9, 9, 4, 9, 9, 9, 9}));
}

TEST(EvaluatorDataMovement, Concatenate) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[2]", "s32[1]"}, "s32[3] concatenate(p0, p1), dimensions={0}",
                                 {Ints("s32[2]", {1, 2}), Ints("s32[1]", {3})}));
  EXPECT_EQ(Ints(r), (V{1, 2, 3}));
  ASSERT_OK_AND_ASSIGN(
      m, RunOne({"s32[2,1]", "s32[2,2]", "s32[2,0]"}, "s32[2,3] concatenate(p0, p1, p2), dimensions={1}",
                {Ints("s32[2,1]", {1, 4}), Ints("s32[2,2]", {2, 3, 5, 6}), Ints("s32[2,0]", {})}));
  EXPECT_EQ(Ints(m), (V{1, 2, 3, 4, 5, 6}));
}

TEST(EvaluatorDataMovement, Reverse) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[2,3]"}, "s32[2,3] reverse(p0), dimensions={1}",
                                 {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(r), (V{3, 2, 1, 6, 5, 4}));
  ASSERT_OK_AND_ASSIGN(b, RunOne({"s32[2,3]"}, "s32[2,3] reverse(p0), dimensions={0,1}",
                                 {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(b), (V{6, 5, 4, 3, 2, 1}));
}

TEST(EvaluatorDataMovement, DynamicSliceClampsStartIndices) {
  Literal x = Ints("s32[5]", {0, 1, 2, 3, 4});
  ASSERT_OK_AND_ASSIGN(a, RunOne({"s32[5]", "s32[]"}, "s32[3] dynamic-slice(p0, p1), dynamic_slice_sizes={3}",
                                 {x, Ints("s32[]", {3})}));
  EXPECT_EQ(Ints(a), (V{2, 3, 4}));
  ASSERT_OK_AND_ASSIGN(b, RunOne({"s32[5]", "s32[]"}, "s32[3] dynamic-slice(p0, p1), dynamic_slice_sizes={3}",
                                 {x, Ints("s32[]", {-5})}));
  EXPECT_EQ(Ints(b), (V{0, 1, 2}));
  ASSERT_OK_AND_ASSIGN(c, RunOne({"s32[5]", "u32[]"}, "s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}",
                                 {x, Ints("u32[]", {0xFFFFFFFFLL})}));
  EXPECT_EQ(Ints(c), (V{3, 4}));
  ASSERT_OK_AND_ASSIGN(
      d, RunOne({"s32[3,3]", "s64[]", "u8[]"}, "s32[2,2] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={2,2}",
                {Ints("s32[3,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9}), Ints("s64[]", {1}), Ints("u8[]", {200})}));
  EXPECT_EQ(Ints(d), (V{5, 6, 8, 9}));
}

TEST(EvaluatorDataMovement, DynamicUpdateSliceClampsStartIndices) {
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"s32[5]", "s32[2]", "s32[]"}, "s32[5] dynamic-update-slice(p0, p1, p2)",
                {Ints("s32[5]", {0, 0, 0, 0, 0}), Ints("s32[2]", {8, 9}), Ints("s32[]", {4})}));
  EXPECT_EQ(Ints(r), (V{0, 0, 0, 8, 9}));
  ASSERT_OK_AND_ASSIGN(
      m, RunOne({"s32[2,3]{0,1}", "s32[1,2]", "s32[]", "s32[]"},
                "s32[2,3]{0,1} dynamic-update-slice(p0, p1, p2, p3)",
                {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6}), Ints("s32[1,2]", {0, 0}), Ints("s32[]", {1}),
                 Ints("s32[]", {0})}));
  EXPECT_EQ(Ints(m), (V{1, 2, 3, 0, 0, 6}));
}

TEST(EvaluatorDataMovement, Iota) {
  ASSERT_OK_AND_ASSIGN(f, RunHlo("HloModule m\nENTRY e {\n  ROOT i = f32[2,3] iota(), iota_dimension=1\n}\n"));
  EXPECT_EQ(Doubles(f), (std::vector<double>{0, 1, 2, 0, 1, 2}));
  ASSERT_OK_AND_ASSIGN(s, RunHlo("HloModule m\nENTRY e {\n  ROOT i = s8[3,2]{0,1} iota(), iota_dimension=0\n}\n"));
  EXPECT_EQ(Ints(s), (V{0, 0, 1, 1, 2, 2}));
  ASSERT_OK_AND_ASSIGN(c, RunHlo("HloModule m\nENTRY e {\n  ROOT i = c64[3] iota(), iota_dimension=0\n}\n"));
  EXPECT_EQ(Complexes(c), (std::vector<std::complex<double>>{{0, 0}, {1, 0}, {2, 0}}));
}

TEST(EvaluatorDataMovement, ConstantAndCopyChangeLayout) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
ENTRY e {
  c = s32[2,3]{1,0} constant({ {1, 2, 3}, {4, 5, 6} })
  ROOT k = s32[2,3]{0,1} copy(c)
})"));
  EXPECT_EQ(Ints(r), (V{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(r.shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));
  // Physically column-major now: 1 4 2 5 3 6.
  ASSERT_EQ(r.data().size(), 24u);
  EXPECT_EQ(r.data()[4], 4);
}

TEST(EvaluatorDataMovement, TiledLayoutResult) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[3,3]"}, "s32[3,3]{1,0:T(2,2)} copy(p0)",
                                 {Ints("s32[3,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9})}));
  EXPECT_EQ(Ints(r), (V{1, 2, 3, 4, 5, 6, 7, 8, 9}));
  // Padded to 4x4 in 2x2 tiles: 16 slots.
  EXPECT_EQ(r.data().size(), 64u);
  ASSERT_OK_AND_ASSIGN(t, RunOne({"s32[3,3]{1,0:T(2,2)}"}, "s32[3,3] transpose(p0), dimensions={1,0}",
                                 {Ints("s32[3,3]", {1, 2, 3, 4, 5, 6, 7, 8, 9})}));
  EXPECT_EQ(Ints(t), (V{1, 4, 7, 2, 5, 8, 3, 6, 9}));
}

TEST(EvaluatorDataMovement, BitcastReinterpretsPhysicalBytes) {
  // [2,3] row-major bytes read as [3,2] column-major is a transpose.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[2,3]{1,0}"}, "s32[3,2]{0,1} bitcast(p0)",
                                 {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})}));
  EXPECT_EQ(Ints(r), (V{1, 4, 2, 5, 3, 6}));
  auto bad = RunOne({"s32[2,3]"}, "s32[7] bitcast(p0)", {Ints("s32[2,3]", {1, 2, 3, 4, 5, 6})});
  EXPECT_FALSE(bad.ok());
}

TEST(EvaluatorDataMovement, ComplexAndPredMove) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
ENTRY e {
  c = c128[2,2] constant({ {(1,2), (3,4)}, {(5,6), (7,8)} })
  ROOT t = c128[2,2] transpose(c), dimensions={1,0}
})"));
  EXPECT_EQ(Complexes(r), (std::vector<std::complex<double>>{{1, 2}, {5, 6}, {3, 4}, {7, 8}}));
  ASSERT_OK_AND_ASSIGN(p, RunOne({"pred[3]"}, "pred[3] reverse(p0), dimensions={0}",
                                 {Ints("pred[3]", {1, 0, 0})}));
  EXPECT_EQ(Ints(p), (V{0, 0, 1}));
}

TEST(EvaluatorDataMovement, GetDimensionSize) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"f32[2,7]"}, "s32[] get-dimension-size(p0), dimensions={1}",
                                 {Doubles("f32[2,7]", std::vector<double>(14, 0))}));
  EXPECT_EQ(Ints(r), (V{7}));
}

TEST(EvaluatorDataMovement, SetDimensionSizeMakesADynamicValue) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  v = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(v, n), dimensions={0}
  e = f32[<=10] exponential(d)
  ROOT s = s32[] get-dimension-size(e), dimensions={0}
})";
  Literal v = Doubles("f32[10]", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {v, Ints("s32[]", {5})}));
  EXPECT_EQ(Ints(r), (V{5}));
  const char* root = R"(
HloModule m
ENTRY e {
  v = f32[10] parameter(0)
  n = s32[] parameter(1)
  ROOT d = f32[<=10] set-dimension-size(v, n), dimensions={0}
})";
  ASSERT_OK_AND_ASSIGN(d, RunHlo(root, {v, Ints("s32[]", {3})}));
  EXPECT_EQ(Doubles(d), (std::vector<double>{1, 2, 3}));
  EXPECT_TRUE(d.shape().is_dynamic_dimension(0));
}

TEST(EvaluatorDataMovement, SetDimensionSizeThenReduceHonoursTheSize) {
  // The seed's example: reduce over the first five (or six) elements only.
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  v = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(v, n), dimensions={0}
  z = f32[] constant(0)
  ROOT r = f32[] reduce(d, z), dimensions={0}, to_apply=add
})";
  Literal v = Doubles("f32[10]", {1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
  auto five = RunHlo(hlo, {v, Ints("s32[]", {5})});
  if (!five.ok() && five.status().code() == absl::StatusCode::kUnimplemented) {
    GTEST_SKIP() << "reduce not available yet: " << five.status();
  }
  ASSERT_TRUE(five.ok()) << five.status();
  EXPECT_EQ(Doubles(*five), (std::vector<double>{15}));
  ASSERT_OK_AND_ASSIGN(six, RunHlo(hlo, {v, Ints("s32[]", {6})}));
  EXPECT_EQ(Doubles(six), (std::vector<double>{21}));
}


TEST(EvaluatorDataMovement, BroadcastRepeatsSizeOneDimensions) {
  // StableHLO's broadcast_in_dim, as converted to HLO, repeats size-1 dims.
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s64[3,1]"}, "s64[3,2,2] broadcast(p0), dimensions={0,2}",
                                 {Ints("s64[3,1]", {1, 2, 3})}));
  EXPECT_EQ(Ints(r), (V{1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3}));
}

TEST(EvaluatorDataMovement, DynamicSliceWithIndexVector) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[5]", "s32[1]"}, "s32[2] dynamic-slice(p0, p1), dynamic_slice_sizes={2}",
                                 {Ints("s32[5]", {0, 1, 2, 3, 4}), Ints("s32[1]", {1})}));
  EXPECT_EQ(Ints(r), (V{1, 2}));
}

TEST(EvaluatorDataMovement, DynamicReshape) {
  ASSERT_OK_AND_ASSIGN(r, RunOne({"s32[6]", "s32[]", "s32[]"}, "s32[<=3,<=3] dynamic-reshape(p0, p1, p2)",
                                 {Ints("s32[6]", {1, 2, 3, 4, 5, 6}), Ints("s32[]", {3}), Ints("s32[]", {2})}));
  EXPECT_EQ(r.shape().dimensions(0), 3);
  EXPECT_EQ(r.shape().dimensions(1), 2);
  EXPECT_EQ(Ints(r), (V{1, 2, 3, 4, 5, 6}));
}

}  // namespace
}  // namespace xjit::testing
