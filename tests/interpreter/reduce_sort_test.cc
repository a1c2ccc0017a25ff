// Reduce, reduce-window, select-and-scatter, sort, topk, gather and scatter
// through the whole evaluator. Expected values are the seeds' worked examples
// or hand calculations written next to each case.
#include <cstdio>
#include <string>

#include "gtest/gtest.h"
#include "tests/interpreter/ops_test_util.h"

namespace xjit::testing {
namespace {

Literal MustRun(absl::string_view text) {
  auto result = RunHlo(text);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? std::move(*result) : Literal();
}

constexpr char kReduce3d[] = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4,2,3] constant({{{1,2,3},{4,5,6}}, {{1,2,3},{4,5,6}}, {{1,2,3},{4,5,6}}, {{1,2,3},{4,5,6}}})
  z = f32[] constant(0)
  ROOT r = %s reduce(x, z), dimensions={%s}, to_apply=add
})";

Literal Reduce3d(const char* shape, const char* dims) {
  char text[2048];
  std::snprintf(text, sizeof(text), kReduce3d, shape, dims);
  return MustRun(text);
}

TEST(ReduceTest, SeedThreeDimensionalSums) {
  EXPECT_TRUE(LiteralsEqual(Reduce3d("f32[2,3]", "0"), Lit("f32[2,3] {{4,8,12},{16,20,24}}")));
  EXPECT_TRUE(
      LiteralsEqual(Reduce3d("f32[4,2]", "2"), Lit("f32[4,2] {{6,15},{6,15},{6,15},{6,15}}")));
  EXPECT_TRUE(LiteralsEqual(Reduce3d("f32[3]", "0,1"), Lit("f32[3]{0} {20,28,36}")));
  EXPECT_TRUE(LiteralsEqual(Reduce3d("f32[]", "0,1,2"), Lit("f32[] 84")));
}

TEST(ReduceTest, SeedTwoDimensional) {
  Literal r = MustRun(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[2,3] constant({{1,2,3},{4,5,6}})
  z = s32[] constant(0)
  r0 = s32[3] reduce(x, z), dimensions={0}, to_apply=add
  r1 = s32[2] reduce(x, z), dimensions={1}, to_apply=add
  ROOT t = (s32[3], s32[2]) tuple(r0, r1)
})");
  EXPECT_TRUE(LiteralsEqual(r.element(0), Lit("s32[3]{0} {5,7,9}")));
  EXPECT_TRUE(LiteralsEqual(r.element(1), Lit("s32[2]{0} {6,15}")));
}

TEST(ReduceTest, SeedVariadicArgmax) {
  // f(max, argmax, value, index) = value >= max ? (value, index) : (max, argmax);
  // visiting V = {2,7,7,1} in order gives (7, 2): the later 7 wins the tie.
  Literal r = MustRun(R"(
HloModule m
argmax {
  m = f32[] parameter(0)
  am = s32[] parameter(1)
  v = f32[] parameter(2)
  i = s32[] parameter(3)
  ge = pred[] compare(v, m), direction=GE
  nm = f32[] select(ge, v, m)
  ni = s32[] select(ge, i, am)
  ROOT t = (f32[], s32[]) tuple(nm, ni)
}
ENTRY e {
  v = f32[4] constant({2, 7, 7, 1})
  k = s32[4] constant({0, 1, 2, 3})
  iv = f32[] constant(-inf)
  ik = s32[] constant(-1)
  ROOT r = (f32[], s32[]) reduce(v, k, iv, ik), dimensions={0}, to_apply=argmax
})");
  EXPECT_TRUE(LiteralsEqual(r.element(0), Lit("f32[] 7")));
  EXPECT_TRUE(LiteralsEqual(r.element(1), Lit("s32[] 2")));
}

TEST(ReduceTest, NonCommutativeOrderIsLinear) {
  // f(acc, x) = acc * 10 + x over {1,2,3} from 0: 123.
  Literal r = MustRun(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ten = s32[] constant(10)
  m = s32[] multiply(a, ten)
  ROOT s = s32[] add(m, b)
}
ENTRY e {
  x = s32[3] constant({1, 2, 3})
  z = s32[] constant(0)
  ROOT r = s32[] reduce(x, z), dimensions={0}, to_apply=f
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[] 123")));
}

constexpr char kMinWindow[] = R"(
HloModule m
min {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] minimum(a, b)
}
ENTRY e {
  x = f32[5] constant({10000, 1000, 100, 10, 1})
  init = f32[] constant(3.40282347e+38)
  ROOT r = f32[%d] reduce-window(x, init), window={size=3 stride=%d pad=%s}, to_apply=min
})";

Literal MinWindow(int out, int stride, const char* pad) {
  char text[1024];
  std::snprintf(text, sizeof(text), kMinWindow, out, stride, pad);
  return MustRun(text);
}

TEST(ReduceWindowTest, SeedMinExample) {
  // Valid: windows {10000,1000,100} and {100,10,1}.
  EXPECT_TRUE(LiteralsEqual(MinWindow(2, 2, "0_0"), Lit("f32[2]{0} {100, 1}")));
  // Same (stride 2): padded {MAX,10000,1000,100,10,1,MAX}.
  EXPECT_TRUE(LiteralsEqual(MinWindow(3, 2, "1_1"), Lit("f32[3]{0} {1000, 10, 1}")));
}

TEST(ReduceWindowTest, SeedMax2x3Windows) {
  Literal r = MustRun(R"(
HloModule m
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] maximum(a, b)
}
ENTRY e {
  x = f32[4,6] constant({{1,2,3,4,5,6},{7,8,9,10,11,12},{13,14,15,16,17,18},{19,20,21,22,23,24}})
  init = f32[] constant(-inf)
  ROOT r = f32[2,2] reduce-window(x, init), window={size=2x3 stride=2x3}, to_apply=max
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[2,2] {{9,12},{21,24}}")));
}

TEST(ReduceWindowTest, DilationsAndVariadic) {
  // Base dilation 2: {1,_,2,_,3}; window 2 with dilation 2 sums elements 2 apart
  // in the dilated base: {1+2, 0+0, 2+3} (holes add the init 0).
  Literal r = MustRun(R"(
HloModule m
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[3] constant({1, 2, 3})
  z = s32[] constant(0)
  ROOT r = s32[3] reduce-window(x, z), window={size=2 lhs_dilate=2 rhs_dilate=2}, to_apply=add
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[3]{0} {3, 0, 5}")));
  // Variadic: (sum, product) over windows of 2.
  Literal v = MustRun(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  s = s32[] add(a, c)
  p = s32[] multiply(b, d)
  ROOT t = (s32[], s32[]) tuple(s, p)
}
ENTRY e {
  x = s32[3] constant({1, 2, 3})
  y = s32[3] constant({4, 5, 6})
  z = s32[] constant(0)
  o = s32[] constant(1)
  ROOT r = (s32[2], s32[2]) reduce-window(x, y, z, o), window={size=2}, to_apply=f
})");
  EXPECT_TRUE(LiteralsEqual(v.element(0), Lit("s32[2]{0} {3, 5}")));
  EXPECT_TRUE(LiteralsEqual(v.element(1), Lit("s32[2]{0} {20, 30}")));
}

TEST(SelectAndScatterTest, OverlappingWindowsAdd) {
  // Windows of 2 over {1,9,3,4}: maxima at 1, 1, 3; source {2,6,5}:
  // element 1 gets 2 + 6 = 8 (as in the seeds' figure), element 3 gets 5.
  Literal r = MustRun(R"(
HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] constant({1, 9, 3, 4})
  s = f32[3] constant({2, 6, 5})
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2}, select=ge, scatter=add
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("f32[4]{0} {0, 8, 0, 5}")));
}

TEST(SelectAndScatterTest, TwoDimensionalWithPaddingAndTies) {
  // 2x2 windows (row stride 1) over {{1,5},{5,2}} with one row of padding on
  // top. Window 0 covers the padding and row 0: padding is never selected,
  // so 5 at (0,1) wins. Window 1 covers rows 0 and 1: 5 at (0,1) and 5 at
  // (1,0) tie and GE keeps the earlier (0,1). (0,1) gets 100 + 10 + 20.
  Literal r = MustRun(R"(
HloModule m
ge {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=GE
}
add {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
ENTRY e {
  x = s32[2,2] constant({{1,5},{5,2}})
  s = s32[2,1] constant({{10},{20}})
  z = s32[] constant(100)
  ROOT r = s32[2,2] select-and-scatter(x, s, z), window={size=2x2 stride=1x2 pad=1_0x0_0},
      select=ge, scatter=add
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[2,2] {{100,130},{100,100}}")));
}

constexpr char kLess[] = R"(
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  e = f32[] parameter(4)
  f = f32[] parameter(5)
  ROOT lt = pred[] compare(a, b), direction=LT
}
)";

TEST(SortTest, SeedThreeOperands) {
  std::string text = std::string("HloModule m\n") + kLess + R"(
ENTRY e {
  x = s32[2] constant({3, 1})
  y = s32[2] constant({42, 50})
  z = f32[2] constant({-3, 1.1})
  ROOT r = (s32[2], s32[2], f32[2]) sort(x, y, z), dimensions={0}, to_apply=less
})";
  Literal r = MustRun(text);
  EXPECT_TRUE(LiteralsEqual(r.element(0), Lit("s32[2]{0} {1, 3}")));
  EXPECT_TRUE(LiteralsEqual(r.element(1), Lit("s32[2]{0} {50, 42}")));
  EXPECT_TRUE(LiteralsEqual(r.element(2), Lit("f32[2]{0} {1.1, -3}")));
}

TEST(SortTest, StableAndAlongEachDimension) {
  // Keys {1,0,1,0} with payload {0,1,2,3}: stable order keeps 1 before 3 and
  // 0 before 2.
  Literal s = MustRun(R"(
HloModule m
less {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT lt = pred[] compare(a, b), direction=LT
}
ENTRY e {
  k = s32[4] constant({1, 0, 1, 0})
  p = s32[4] constant({0, 1, 2, 3})
  ROOT r = (s32[4], s32[4]) sort(k, p), dimensions={0}, is_stable=true, to_apply=less
})");
  EXPECT_TRUE(LiteralsEqual(s.element(1), Lit("s32[4]{0} {1, 3, 0, 2}")));
  Literal d = MustRun(R"(
HloModule m
gt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT lt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = f32[2,3] constant({{3,1,2},{0,5,4}})
  a = f32[2,3] sort(x), dimensions={0}, to_apply=gt
  b = f32[2,3] sort(x), dimensions={1}, to_apply=gt
  ROOT t = (f32[2,3], f32[2,3]) tuple(a, b)
})");
  EXPECT_TRUE(LiteralsEqual(d.element(0), Lit("f32[2,3] {{3,5,4},{0,1,2}}")));
  EXPECT_TRUE(LiteralsEqual(d.element(1), Lit("f32[2,3] {{3,2,1},{5,4,0}}")));
}

TEST(TopKTest, LargestSmallestNanAndTies) {
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = f32[2,5] constant({{1, nan, 3, 3, -inf}, {0, -1, 7, 2, 7}})
  ROOT t = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true
})");
  EXPECT_TRUE(LiteralsEqual(r.element(0), Lit("f32[2,3] {{nan, 3, 3}, {7, 7, 2}}")));
  EXPECT_TRUE(LiteralsEqual(r.element(1), Lit("s32[2,3] {{1, 2, 3}, {2, 4, 3}}")));
  Literal s = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[5] constant({4, -2, 9, -2, 0})
  ROOT t = (s32[2], s32[2]) topk(x), k=2, largest=false
})");
  EXPECT_TRUE(LiteralsEqual(s.element(0), Lit("s32[2]{0} {-2, -2}")));
  EXPECT_TRUE(LiteralsEqual(s.element(1), Lit("s32[2]{0} {1, 3}")));
}

TEST(GatherTest, RowsLikeGatherNd) {
  // Start indices {0, 2} select whole rows of the 3x3 operand.
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})
  i = s32[2] constant({0, 2})
  ROOT g = s32[2,3] gather(x, i), offset_dims={1}, collapsed_slice_dims={0},
      start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[2,3] {{1,2,3},{7,8,9}}")));
}

TEST(GatherTest, ColumnsAndClamping) {
  // Columns {2, 0} of each row (start_index_map={1}, offset dim 0).
  Literal c = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})
  i = s32[2] constant({2, 0})
  ROOT g = s32[3,2] gather(x, i), offset_dims={0}, collapsed_slice_dims={1},
      start_index_map={1}, index_vector_dim=1, slice_sizes={3,1}
})");
  EXPECT_TRUE(LiteralsEqual(c, Lit("s32[3,2] {{3,1},{6,4},{9,7}}")));
  // A 2x2 slice starting at (2, 2) is clamped to start at (1, 1); (-5, 0) to (0, 0).
  Literal k = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})
  i = s64[2,2] constant({{2, 2}, {-5, 0}})
  ROOT g = s32[2,2,2] gather(x, i), offset_dims={1,2}, collapsed_slice_dims={},
      start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}
})");
  EXPECT_TRUE(LiteralsEqual(k, Lit("s32[2,2,2] {{{5,6},{8,9}},{{1,2},{4,5}}}")));
}

TEST(GatherTest, IndexVectorDimFirstAndBatchingDims) {
  // index_vector_dim=0: indices[:, j] is the j-th start (row, col).
  Literal r = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})
  i = s32[2,2] constant({{0, 2}, {1, 0}})
  ROOT g = s32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={0,1},
      start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,1}
})");
  // Starts (0,1) -> 2 and (2,0) -> 7.
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[2]{0} {2, 7}")));
  // Batching: operand row b is indexed by indices[b].
  Literal b = MustRun(R"(
HloModule m
ENTRY e {
  x = s32[2,3] constant({{1,2,3},{4,5,6}})
  i = s32[2] constant({2, 0})
  ROOT g = s32[2] gather(x, i), offset_dims={}, collapsed_slice_dims={1},
      start_index_map={1}, index_vector_dim=1, slice_sizes={1,1},
      operand_batching_dims={0}, start_indices_batching_dims={0}
})");
  EXPECT_TRUE(LiteralsEqual(b, Lit("s32[2]{0} {3, 4}")));
}

constexpr char kScatterRows[] = R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] %s
}
ENTRY e {
  x = s32[3,3] constant({{1,2,3},{4,5,6},{7,8,9}})
  i = s32[2] constant(%s)
  u = s32[2,3] constant({{10,20,30},{70,80,90}})
  ROOT s = s32[3,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=f
})";

Literal ScatterRows(const char* body, const char* indices) {
  char text[2048];
  std::snprintf(text, sizeof(text), kScatterRows, body, indices);
  return MustRun(text);
}

TEST(ScatterTest, RowsAddOutOfBoundsAndOrder) {
  EXPECT_TRUE(LiteralsEqual(ScatterRows("add(a, b)", "{0, 2}"),
                            Lit("s32[3,3] {{11,22,33},{4,5,6},{77,88,99}}")));
  // Rows 3 and -1 are out of bounds: skipped.
  EXPECT_TRUE(LiteralsEqual(ScatterRows("add(a, b)", "{3, -1}"),
                            Lit("s32[3,3] {{1,2,3},{4,5,6},{7,8,9}}")));
  // (current, update) argument order: current - update.
  EXPECT_TRUE(LiteralsEqual(ScatterRows("subtract(a, b)", "{0, 2}"),
                            Lit("s32[3,3] {{-9,-18,-27},{4,5,6},{-63,-72,-81}}")));
  // Duplicates apply in index order: the second update wins with "take b".
  EXPECT_TRUE(LiteralsEqual(ScatterRows("add(b, b)", "{1, 1}"),
                            Lit("s32[3,3] {{1,2,3},{140,160,180},{7,8,9}}")));
}

TEST(ScatterTest, PartialWindowOutOfBoundsIsSkipped) {
  // A 1x2 window at column 2 of a 3-column row does not fit: skipped whole.
  Literal r = MustRun(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}
ENTRY e {
  x = s32[2,3] constant({{0,0,0},{0,0,0}})
  i = s32[2,2] constant({{0,2},{1,1}})
  u = s32[2,2] constant({{1,2},{3,4}})
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={1}, inserted_window_dims={0},
      scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=f
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[2,3] {{0,0,0},{0,3,4}}")));
}

TEST(ScatterTest, VariadicAndScalarIndices) {
  // Two operands updated together: (sum, product); index_vector_dim == rank.
  Literal r = MustRun(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = f32[] parameter(3)
  s = s32[] add(a, c)
  p = f32[] multiply(b, d)
  ROOT t = (s32[], f32[]) tuple(s, p)
}
ENTRY e {
  x = s32[3] constant({1, 2, 3})
  y = f32[3] constant({1, 2, 3})
  i = s32[2] constant({2, 2})
  u = s32[2] constant({10, 20})
  v = f32[2] constant({10, 0.5})
  ROOT s = (s32[3], f32[3]) scatter(x, y, i, u, v), update_window_dims={},
      inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=f
})");
  EXPECT_TRUE(LiteralsEqual(r.element(0), Lit("s32[3]{0} {1, 2, 33}")));
  EXPECT_TRUE(LiteralsEqual(r.element(1), Lit("f32[3]{0} {1, 2, 15}")));
}

TEST(ScatterTest, BatchingDims) {
  // Row b of the operand receives update b at column indices[b].
  Literal r = MustRun(R"(
HloModule m
f {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT r = s32[] add(a, b)
}
ENTRY e {
  x = s32[2,3] constant({{0,0,0},{0,0,0}})
  i = s32[2] constant({2, 0})
  u = s32[2] constant({5, 7})
  ROOT s = s32[2,3] scatter(x, i, u), update_window_dims={}, inserted_window_dims={1},
      scatter_dims_to_operand_dims={1}, index_vector_dim=1, input_batching_dims={0},
      scatter_indices_batching_dims={0}, to_apply=f
})");
  EXPECT_TRUE(LiteralsEqual(r, Lit("s32[2,3] {{0,0,5},{7,0,0}}")));
}

}  // namespace
}  // namespace xjit::testing
