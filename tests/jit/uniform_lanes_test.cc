// FindUniformLaneRange (jit/kernel/uniform_lanes.h) on kernel programs built
// by hand: the stretch of vector iterations where every lane compare of the
// innermost index is uniform, the values it knows there, and what the
// specialised body leaves out. The compiled kernels that use it are checked
// against the evaluator by jit_concat_vector_test.
#include "jit/kernel/uniform_lanes.h"

#include <vector>

#include "gtest/gtest.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {
namespace {

// A [rows, cols] kernel: out[i, j] = (j + shift <direction> bound) ? a[i, j]
// : b[i, j], the compare as ElementEmitter::LaneIndexCompare builds it (both
// sides converted to s32).
struct SelectProgram {
  KernelProgram program;
  int compare = -1;
  int select = -1;
  int load_a = -1;
  int load_b = -1;
};

int Add(KernelProgram& p, KOp op) {
  p.ops.push_back(op);
  return static_cast<int>(p.ops.size()) - 1;
}

KOp Index(KOpKind kind, int a = -1, int b = -1, int64_t imm = 0) {
  KOp op;
  op.kind = kind;
  op.a = a;
  op.b = b;
  op.imm = imm;
  return op;
}

SelectProgram Build(int64_t rows, int64_t cols, int64_t shift, ComparisonDirection direction,
                    int64_t bound) {
  SelectProgram s;
  KernelProgram& p = s.program;
  p.loop_extents = {rows, cols};
  p.buffers = {{ElementType::kF32, rows * cols},
               {ElementType::kF32, rows * cols},
               {ElementType::kF32, rows * cols}};
  const int i = Add(p, Index(KOpKind::kLoopIndex, -1, -1, 0));
  const int j = Add(p, Index(KOpKind::kLoopIndex, -1, -1, 1));
  const int width = Add(p, Index(KOpKind::kIConst, -1, -1, cols));
  const int row = Add(p, Index(KOpKind::kIMul, i, width));
  const int position = Add(p, Index(KOpKind::kIAdd, row, j));
  const int shifted = Add(p, Index(KOpKind::kIAdd, j, Add(p, Index(KOpKind::kIConst, -1, -1, shift))));
  const int limit = Add(p, Index(KOpKind::kIConst, -1, -1, bound));
  KOp x = Index(KOpKind::kFromIndex, shifted);
  x.type = ElementType::kS32;
  KOp y = Index(KOpKind::kFromIndex, limit);
  y.type = ElementType::kS32;
  KOp compare = Index(KOpKind::kCompare, Add(p, x), Add(p, y));
  compare.type = ElementType::kPred;
  compare.operand_type = ElementType::kS32;
  compare.direction = direction;
  compare.comparison = ComparisonType::kSigned;
  s.compare = Add(p, compare);
  KOp load = Index(KOpKind::kLoad, position, -1, 0);
  load.type = ElementType::kF32;
  s.load_a = Add(p, load);
  load.imm = 1;
  s.load_b = Add(p, load);
  KOp select = Index(KOpKind::kSelect, s.compare, s.load_a);
  select.c = s.load_b;
  select.type = ElementType::kF32;
  s.select = Add(p, select);
  KOp store = Index(KOpKind::kStore, position, s.select, 0);
  store.type = ElementType::kTuple;
  Add(p, store);
  return s;
}

UniformLaneRange Find(const SelectProgram& s, int lanes) {
  return FindUniformLaneRange(s.program, OpLevels(s.program), 1,
                              s.program.loop_extents[1], lanes);
}

// j < 1 (a concatenate's one-column first piece): iteration 0 mixes, the
// rest read the second operand only.
TEST(UniformLanes, LeadingEdgePiece) {
  const SelectProgram s = Build(3, 67, 0, ComparisonDirection::kLt, 1);
  const UniformLaneRange range = Find(s, 8);
  EXPECT_EQ(range.begin, 1);
  EXPECT_EQ(range.end, 8);  // 67 / 8 whole iterations.
  EXPECT_EQ(range.known[s.compare], 0);
  EXPECT_TRUE(range.live[s.select]);
  EXPECT_TRUE(range.live[s.load_b]);
  EXPECT_FALSE(range.live[s.load_a]);
  EXPECT_FALSE(range.live[s.compare]);
}

// j + 2 >= 40: true from j = 38; iterations 0-3 (j < 32) false, iteration 4
// mixes, 5-7 true. The longer run, 0-3, is taken, picking the second
// operand.
TEST(UniformLanes, LongestRunWins) {
  const SelectProgram s = Build(2, 64, 2, ComparisonDirection::kGe, 40);
  const UniformLaneRange range = Find(s, 8);
  EXPECT_EQ(range.begin, 0);
  EXPECT_EQ(range.end, 4);
  EXPECT_EQ(range.known[s.compare], 0);
  EXPECT_TRUE(range.live[s.load_b]);
  EXPECT_FALSE(range.live[s.load_a]);
}

// A boundary on a vector boundary (j < 32 with 8 lanes): no iteration
// mixes, and the value changes between runs of 4; the first is kept.
TEST(UniformLanes, BoundaryOnAVectorBoundary) {
  const SelectProgram s = Build(1, 64, 0, ComparisonDirection::kLt, 32);
  const UniformLaneRange range = Find(s, 8);
  EXPECT_EQ(range.begin, 0);
  EXPECT_EQ(range.end, 4);
  EXPECT_EQ(range.known[s.compare], 1);
  EXPECT_TRUE(range.live[s.load_a]);
  EXPECT_FALSE(range.live[s.load_b]);
}

// Equality holds at one position only: uniform (false) everywhere except the
// iteration holding it.
TEST(UniformLanes, EqualityAtOnePosition) {
  const SelectProgram s = Build(1, 80, 0, ComparisonDirection::kEq, 21);
  const UniformLaneRange range = Find(s, 8);
  EXPECT_EQ(range.begin, 3);
  EXPECT_EQ(range.end, 10);
  EXPECT_EQ(range.known[s.compare], 0);
}

// Nothing to specialise: fewer than two whole iterations, or one lane.
TEST(UniformLanes, EmptyWhereNothingIsUniformForLong) {
  EXPECT_TRUE(Find(Build(4, 15, 0, ComparisonDirection::kLt, 1), 8).empty());
  EXPECT_TRUE(Find(Build(4, 9, 0, ComparisonDirection::kLt, 5), 8).empty());
  EXPECT_TRUE(Find(Build(4, 64, 0, ComparisonDirection::kLt, 1), 1).empty());
}

// A compare whose s32 lanes could not hold the index exactly is left alone.
TEST(UniformLanes, IndicesBeyondTheLaneTypeAreNotFolded) {
  const SelectProgram s = Build(1, 64, int64_t{1} << 40, ComparisonDirection::kLt, 1);
  EXPECT_TRUE(Find(s, 8).empty());
}

}  // namespace
}  // namespace xjit::jit
