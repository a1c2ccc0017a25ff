// Kernels that read through a dynamic-slice (or write through a
// dynamic-update-slice, or read gathered rows) whose start index is loaded
// from a buffer, against the evaluator on every instruction set the host
// has. The start is an index value (jit/kernel/kernel_program.h, IndexValueOps):
// loaded and clamped once outside the vector loop, so the slice is an
// ordinary strided access and the kernel is vectorised; these tests require
// that (KernelInfo::vector_lanes > 1) wherever the inner extent allows.
// Starts: in range, at the largest legal start, one past it, negative, and
// the index type's extremes (clamped so the slice stays in bounds, XLA's
// semantics), for s32, s64 and u32 indices (u32's 2^31 and 2^32 - 1 catch
// a sign extension); element types: every type the vector path has (f32,
// f64, integers of 8..64 bits, pred); sizes: odd inner extents (vector
// tails), size-1 and size-0 dimensions, rank 1.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/element_type.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

const char* kTypes[] = {"f32", "f64", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64",
                        "pred"};
const char* kIndexTypes[] = {"s32", "s64", "u32"};

// An elementwise op with vector code for `type`.
std::string CombineOp(const std::string& type) {
  if (type == "pred") return "and";
  if (type[0] == 'f') return "multiply";
  return "add";
}

// Start values of one dimension whose largest legal start is `limit`: in
// range, the limit, one past it, negative, and the extremes of `index_type`
// (u32: 2^31, which a sign extension would read as negative, and 2^32 - 1).
std::vector<int64_t> StartValues(const std::string& index_type, int64_t limit) {
  std::vector<int64_t> v = {0, limit / 2, limit, limit + 1};
  if (index_type == "u32") {
    v.insert(v.end(), {int64_t{1} << 31, (int64_t{1} << 32) - 1});
  } else {
    v.insert(v.end(), {-1, -limit - 7});
    if (index_type == "s32") v.insert(v.end(), {INT32_MIN, INT32_MAX});
    if (index_type == "s64") v.insert(v.end(), {INT64_MIN, INT64_MAX});
  }
  return v;
}

class JitDynamicSlice : public ::testing::TestWithParam<Isa> {
 protected:
  // Compiles `hlo` once; then, for each list of `starts` (the values of the
  // module's scalar integer parameters, in order; the array parameters are
  // random), runs it and the evaluator and compares bit for bit. With
  // `vectorized`, every kernel must have vector code.
  void Check(const std::string& hlo, const std::vector<std::vector<int64_t>>& starts,
             bool vectorized) {
    SCOPED_TRACE(hlo);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    CompileOptions options;
    options.isa = GetParam();
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const std::vector<std::string> unexpected = UnexpectedInterpretedSteps(report);
    EXPECT_TRUE(unexpected.empty()) << absl::StrJoin(unexpected, "\n");
    if (vectorized && unexpected.empty()) {
      ASSERT_FALSE(report.kernels.empty());
      for (const KernelInfo& kernel : report.kernels) {
        EXPECT_GT(kernel.vector_lanes, 1) << "not vectorised:\n" << kernel.program;
      }
    }
    std::mt19937_64 rng(17);
    for (const std::vector<int64_t>& values : starts) {
      std::vector<Literal> arguments;
      size_t next = 0;
      for (const Instruction* parameter : (*module)->entry()->parameters()) {
        const Shape& shape = parameter->shape();
        if (shape.rank() == 0 && IsInteger(shape.element_type())) {
          ASSERT_LT(next, values.size());
          arguments.push_back(Literal::ScalarInt(shape.element_type(), values[next++]));
        } else {
          arguments.push_back(RandomLiteral(shape, rng));
        }
      }
      SCOPED_TRACE(absl::StrCat("starts ", absl::StrJoin(values, ", ")));
      absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
      ASSERT_TRUE(expected.ok()) << expected.status();
      absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
      ASSERT_TRUE(actual.ok()) << actual.status();
      EXPECT_EQ(Difference(*expected, *actual), "");
    }
  }
};

// Every combination of the two dimensions' start values.
std::vector<std::vector<int64_t>> StartPairs(const std::string& index_type, int64_t limit0,
                                             int64_t limit1) {
  std::vector<std::vector<int64_t>> pairs;
  const std::vector<int64_t> first = StartValues(index_type, limit0);
  const std::vector<int64_t> second = StartValues(index_type, limit1);
  for (size_t i = 0; i < first.size(); ++i) {
    pairs.push_back({first[i], second[(i * 3) % second.size()]});
  }
  return pairs;
}

// ds = dynamic-slice(x, i, j) combined elementwise with another array: one
// loop fusion whose loads of x are at (row + i, column + j).
TEST_P(JitDynamicSlice, SliceFusedWithElementwise) {
  for (const char* t : kTypes) {
    for (const char* it : kIndexTypes) {
      const std::string x = absl::StrCat(t, "[9,70]"), y = absl::StrCat(t, "[3,67]");
      const std::string i = absl::StrCat(it, "[]");
      Check(ModuleText({x, y, i, i},
                       {absl::StrCat("ds = ", y, " dynamic-slice(p0, p2, p3), ",
                                     "dynamic_slice_sizes={3,67}"),
                        absl::StrCat("r = ", y, " ", CombineOp(t), "(ds, p1)")}),
            StartPairs(it, 6, 3), /*vectorized=*/true);
    }
  }
}

// A scan's step reads row t of its stacked sequence: dynamic-slice
// [1, batch, width] of [steps, batch, width], reshaped to [batch, width].
// The reshape merges the slice's dimensions into a linear index and splits
// it again; the split must fold back to the loop indices (no division), or
// the loads are not affine and the kernel is scalar.
TEST_P(JitDynamicSlice, SliceOfAScanReshaped) {
  for (const char* t : {"f32", "s32", "f64"}) {
    const std::string x = absl::StrCat(t, "[8,4,67]"), row = absl::StrCat(t, "[4,67]");
    Check(ModuleText({x, row, "s32[]"},
                     {"zero = s32[] constant(0)",
                      absl::StrCat("ds = ", t, "[1,4,67] dynamic-slice(p0, p2, zero, zero), ",
                                   "dynamic_slice_sizes={1,4,67}"),
                      absl::StrCat("sq = ", row, " reshape(ds)"),
                      absl::StrCat("r = ", row, " ", CombineOp(t), "(sq, p1)")}),
          {{0}, {5}, {7}, {8}, {-1}, {INT32_MAX}}, /*vectorized=*/true);
  }
}

// A column-major operand and result: the inner loop runs down the first
// dimension.
TEST_P(JitDynamicSlice, SliceOtherLayout) {
  for (const char* t : {"f32", "s16", "u64"}) {
    const std::string x = absl::StrCat(t, "[70,9]{0,1}"), y = absl::StrCat(t, "[67,3]{0,1}");
    Check(ModuleText({x, y, "s32[]", "s32[]"},
                     {absl::StrCat("ds = ", y, " dynamic-slice(p0, p2, p3), ",
                                   "dynamic_slice_sizes={67,3}"),
                      absl::StrCat("r = ", y, " ", CombineOp(t), "(ds, p1)")}),
          StartPairs("s32", 3, 6), /*vectorized=*/true);
  }
}

// Size-1 and size-0 dimensions, rank 1 (the kernel's one loop is also its
// vector loop: the starts are loaded before it), slices the whole operand.
TEST_P(JitDynamicSlice, SmallEmptyAndRankOne) {
  struct Case {
    std::string operand, slice, sizes;
    bool vectorized;
  };
  const std::vector<Case> cases = {
      {"[1,70]", "[1,67]", "{1,67}", true},  {"[70,1]", "[67,1]", "{67,1}", false},
      {"[6,1]", "[1,1]", "{1,1}", false},     {"[4,0]", "[2,0]", "{2,0}", false},
      {"[0,5]", "[0,5]", "{0,5}", false},     {"[5,70]", "[0,67]", "{0,67}", false},
  };
  for (const char* t : {"f32", "f64", "s8", "u32"}) {
    for (const Case& c : cases) {
      const std::string x = absl::StrCat(t, c.operand), y = absl::StrCat(t, c.slice);
      Check(ModuleText({x, y, "s32[]", "s32[]"},
                       {absl::StrCat("ds = ", y, " dynamic-slice(p0, p2, p3), dynamic_slice_sizes=",
                                     c.sizes),
                        absl::StrCat("r = ", y, " ", CombineOp(t), "(ds, p1)")}),
            StartPairs("s32", 4, 4), c.vectorized);
    }
    for (const char* n : {"67", "1", "0"}) {
      const std::string x = absl::StrCat(t, "[70]"), y = absl::StrCat(t, "[", n, "]");
      Check(ModuleText({x, y, "s64[]"},
                       {absl::StrCat("ds = ", y, " dynamic-slice(p0, p2), dynamic_slice_sizes={",
                                     n, "}"),
                        absl::StrCat("r = ", y, " ", CombineOp(t), "(ds, p1)")}),
            {{0}, {2}, {3}, {69}, {70}, {-5}, {INT64_MAX}}, std::string(n) == "67");
    }
  }
}

// A dynamic-update-slice of an elementwise update: the update kernel stores
// the update's elements at the clamped start (jit/kernel/fusion_emitter.cc,
// RunDynamicUpdateSlice), one vector row at a time.
TEST_P(JitDynamicSlice, UpdateSlice) {
  for (const char* t : kTypes) {
    for (const char* it : kIndexTypes) {
      const std::string x = absl::StrCat(t, "[9,70]"), u = absl::StrCat(t, "[3,67]");
      const std::string i = absl::StrCat(it, "[]");
      Check(ModuleText({x, u, u, i, i},
                       {absl::StrCat("u = ", u, " ", CombineOp(t), "(p1, p2)"),
                        absl::StrCat("r = ", x, " dynamic-update-slice(p0, u, p3, p4)")}),
            StartPairs(it, 6, 3), /*vectorized=*/true);
    }
  }
}

// Updates of odd, size-1, size-0 and whole extents, rank 1.
TEST_P(JitDynamicSlice, UpdateSliceShapes) {
  struct Case {
    std::string operand, update;
    bool vectorized;
  };
  const std::vector<Case> cases = {
      {"[9,70]", "[9,70]", true}, {"[9,70]", "[1,67]", true}, {"[9,70]", "[3,1]", false},
      {"[9,70]", "[0,67]", false}, {"[9,0]", "[2,0]", false}, {"[70,1]", "[67,1]", false},
  };
  for (const char* t : {"f32", "f64", "s8", "u16", "s64"}) {
    for (const Case& c : cases) {
      const std::string x = absl::StrCat(t, c.operand), u = absl::StrCat(t, c.update);
      Check(ModuleText({x, u, u, "s32[]", "s32[]"},
                       {absl::StrCat("u = ", u, " ", CombineOp(t), "(p1, p2)"),
                        absl::StrCat("r = ", x, " dynamic-update-slice(p0, u, p3, p4)")}),
            StartPairs("s32", 4, 4), c.vectorized);
    }
    const std::string x = absl::StrCat(t, "[70]"), u = absl::StrCat(t, "[67]");
    Check(ModuleText({x, u, u, "u32[]"},
                     {absl::StrCat("u = ", u, " ", CombineOp(t), "(p1, p2)"),
                      absl::StrCat("r = ", x, " dynamic-update-slice(p0, u, p3)")}),
          {{0}, {1}, {3}, {4}, {int64_t{1} << 31}, {(int64_t{1} << 32) - 1}}, true);
  }
}

// A dynamic-update-slice inside a loop fusion, read by an elementwise root:
// each element selects between the update and the operand. With the update
// as wide as the operand's rows, the column start clamps to 0 and the row
// test is invariant along the inner loop: vectorised. A narrower update
// makes the select vary along the row: scalar, still right.
TEST_P(JitDynamicSlice, UpdateSliceInsideAFusion) {
  for (const char* t : {"f32", "s32", "u8", "f64"}) {
    for (const char* u_dims : {"[3,70]", "[3,67]"}) {
      const std::string x = absl::StrCat(t, "[9,70]"), u = absl::StrCat(t, u_dims);
      const std::string parameters = absl::StrCat(
          "  p0 = ", x, " parameter(0)\n  p1 = ", u, " parameter(1)\n  p2 = ", x,
          " parameter(2)\n  p3 = s32[] parameter(3)\n  p4 = s32[] parameter(4)\n");
      const std::string hlo = absl::StrCat(
          "HloModule m\nfused {\n", parameters, "  d = ", x,
          " dynamic-update-slice(p0, p1, p3, p4)\n  ROOT r = ", x, " ", CombineOp(t),
          "(d, p2)\n}\nENTRY e {\n", parameters, "  ROOT f = ", x,
          " fusion(p0, p1, p2, p3, p4), kind=kLoop, calls=fused\n}\n");
      Check(hlo, StartPairs("s32", 6, 3), std::string(u_dims) == "[3,70]");
    }
  }
}

// JAX's dynamic_slice wraps a negative index (x[i] with i < 0 counts from
// the end) before slicing: compare, add, select in s32, fused into the
// kernel; the whole chain is an index value.
TEST_P(JitDynamicSlice, NegativeIndexWrapChain) {
  for (const char* t : {"f32", "s32", "f64"}) {
    const std::string x = absl::StrCat(t, "[8,4,67]"), y = absl::StrCat(t, "[1,4,67]");
    Check(ModuleText({x, y, "s32[]"},
                     {"zero = s32[] constant(0)", "eight = s32[] constant(8)",
                      "lt = pred[] compare(p2, zero), direction=LT",
                      "wrapped = s32[] add(p2, eight)",
                      "index = s32[] select(lt, wrapped, p2)",
                      absl::StrCat("ds = ", y, " dynamic-slice(p0, index, zero, zero), ",
                                   "dynamic_slice_sizes={1,4,67}"),
                      absl::StrCat("r = ", y, " ", CombineOp(t), "(ds, p1)")}),
          {{0}, {3}, {7}, {8}, {-1}, {-8}, {-9}, {INT32_MIN}, {INT32_MAX}}, true);
  }
}

// An embedding lookup: gather of whole rows by loaded ids (out of range ids
// clamp). The row's start is loaded per output row and is invariant along
// the row.
TEST_P(JitDynamicSlice, GatherRows) {
  for (const char* t : {"f32", "s8", "f64"}) {
    for (const char* it : kIndexTypes) {
      const std::string hlo = ModuleText(
          {absl::StrCat(t, "[50,67]"), absl::StrCat(it, "[6]")},
          {absl::StrCat("r = ", t, "[6,67] gather(p0, p1), offset_dims={1}, ",
                        "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, ",
                        "slice_sizes={1,67}")});
      // The ids are random (RandomLiteral: edge values, so many clamp).
      Check(hlo, {{}}, /*vectorized=*/true);
    }
  }
}

// An embedding bag as JAX lowers it: ids wrap when negative, the gathered
// rows are masked by the ids themselves (id != 0: padding) and summed over
// the bag. The loaded ids are read both as gather positions and as values;
// SplitIndexChains gives each side its own copy, so the kernel is vector
// code along the row (it was scalar).
TEST_P(JitDynamicSlice, EmbeddingBagMaskedByItsIds) {
  const std::string hlo =
      "HloModule bag\n"
      "add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n"
      "  table = f32[40,67] parameter(0)\n"
      "  ids = s32[6,5] parameter(1)\n"
      "  zero = s32[6,5] broadcast(s32[] constant(0)), dimensions={}\n"
      "  negative = pred[6,5] compare(ids, zero), direction=LT\n"
      "  rows = s32[6,5] broadcast(s32[] constant(40)), dimensions={}\n"
      "  wrapped = s32[6,5] add(ids, rows)\n"
      "  index = s32[6,5] select(negative, wrapped, ids)\n"
      "  index3 = s32[6,5,1] reshape(index)\n"
      "  g = f32[6,5,67] gather(table, index3), offset_dims={2}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=2, slice_sizes={1,67}\n"
      "  keep = pred[6,5] compare(ids, zero), direction=NE\n"
      "  mask = f32[6,5] convert(keep)\n"
      "  mask3 = f32[6,5,67] broadcast(mask), dimensions={0,1}\n"
      "  masked = f32[6,5,67] multiply(g, mask3)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[6,67] reduce(masked, z), dimensions={1}, to_apply=add\n"
      "}\n";
  // The ids are random (RandomLiteral: edge values, so many wrap or clamp).
  Check(hlo, {{}}, /*vectorized=*/true);
}

// Reductions over a dynamic slice: across outputs (column sums over the
// rows) and along the reduced row (row maxima): the starts are loaded once
// per kernel call in both.
TEST_P(JitDynamicSlice, ReductionsOverASlice) {
  const std::string reducers =
      "HloModule m\n"
      "max_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT m = f32[] maximum(a, b)\n}\n"
      "add_s32 {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n"
      "  ROOT s = s32[] add(a, b)\n}\n";
  for (const char* t : {"f32", "s32"}) {
    const std::string reducer = std::string(t) == "f32" ? "max_f32" : "add_s32";
    const std::string init = std::string(t) == "f32" ? "-inf" : "0";
    for (const char* dims : {"{0}", "{1}"}) {
      const std::string out = std::string(dims) == "{0}" ? "[67]" : "[5]";
      const std::string hlo = absl::StrCat(
          reducers, "ENTRY e {\n  p0 = ", t, "[9,70] parameter(0)\n  p1 = s32[] parameter(1)\n",
          "  p2 = s32[] parameter(2)\n  init = ", t, "[] constant(", init, ")\n",
          "  ds = ", t, "[5,67] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={5,67}\n",
          "  ROOT r = ", t, out, " reduce(ds, init), dimensions=", dims, ", to_apply=", reducer,
          "\n}\n");
      Check(hlo, StartPairs("s32", 4, 3), /*vectorized=*/true);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitDynamicSlice, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
