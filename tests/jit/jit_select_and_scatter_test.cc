// select-and-scatter compiled as a library call (runtime/select_and_scatter),
// against the evaluator bit for bit on every instruction set the host
// supports, with random operands rich in edge values (NaN, infinities, ties):
// the recognised max/min-pool gradients (compare GE/GT/LE/LT either way
// round, add either way round) on f32/f64/s32/s64/u32/u64, and any other
// select and scatter as compiled scalar kernels (total-order compare,
// multiply, computations reading constants, f16/bf16/s8 elements); windows
// with strides, padding (also negative), base and window dilation, reversal,
// windows larger than the operand, size-0 and size-1 dimensions, rank 1 to
// 4, and operand, source and result in non-default layouts.
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

struct Dim {
  int64_t base, size, stride = 1, low = 0, high = 0, lhs_dilate = 1, rhs_dilate = 1;
  bool reverse = false;
};

int64_t Positions(const Dim& d) {
  const int64_t dilated = d.base == 0 ? 0 : (d.base - 1) * d.lhs_dilate + 1;
  const int64_t padded = dilated + d.low + d.high;
  const int64_t window = d.size == 0 ? 0 : (d.size - 1) * d.rhs_dilate + 1;
  return padded < window ? 0 : (padded - window) / d.stride + 1;
}

// A module: select-and-scatter of p0 (operand) with p1 (source) and p2
// (init), computations `select` and `scatter` (text defining computations
// named sel and sca), layouts appended to the three shapes.
std::string Module(const std::string& type, const std::vector<Dim>& dims,
                   const std::string& computations, const std::string& operand_layout = "",
                   const std::string& source_layout = "",
                   const std::string& result_layout = "") {
  std::vector<int64_t> base, source;
  std::vector<std::string> size, stride, pad, lhs, rhs, rev;
  for (const Dim& d : dims) {
    base.push_back(d.base);
    source.push_back(Positions(d));
    size.push_back(absl::StrCat(d.size));
    stride.push_back(absl::StrCat(d.stride));
    pad.push_back(absl::StrCat(d.low, "_", d.high));
    lhs.push_back(absl::StrCat(d.lhs_dilate));
    rhs.push_back(absl::StrCat(d.rhs_dilate));
    rev.push_back(d.reverse ? "1" : "0");
  }
  const std::string operand = absl::StrCat(type, "[", absl::StrJoin(base, ","), "]");
  std::string window = absl::StrCat(
      "size=", absl::StrJoin(size, "x"), " stride=", absl::StrJoin(stride, "x"),
      " pad=", absl::StrJoin(pad, "x"), " lhs_dilate=", absl::StrJoin(lhs, "x"),
      " rhs_dilate=", absl::StrJoin(rhs, "x"), " rhs_reversal=", absl::StrJoin(rev, "x"));
  return absl::StrCat(
      "HloModule m\n", computations, "ENTRY e {\n  p0 = ", operand, operand_layout,
      " parameter(0)\n  p1 = ", type, "[", absl::StrJoin(source, ","), "]", source_layout,
      " parameter(1)\n  p2 = ", type, "[] parameter(2)\n  ROOT r = ", operand, result_layout,
      " select-and-scatter(p0, p1, p2), window={", window, "}, select=sel, scatter=sca\n}\n");
}

std::string Computations(const std::string& type, const std::string& select_root,
                         const std::string& scatter_root, const std::string& extra = "") {
  return absl::StrCat("sel {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n", extra, "  ROOT r = pred[] ", select_root,
                      "\n}\nsca {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                      "[] parameter(1)\n", extra, "  ROOT r = ", type, "[] ", scatter_root,
                      "\n}\n");
}

class JitSelectAndScatter : public ::testing::TestWithParam<Isa> {
 protected:
  // Against the evaluator on three seeds; the instruction must be a
  // select-and-scatter library call (`fast`: the recognised form).
  void Check(const std::string& hlo, bool fast) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      CompileReport report;
      options.report = &report;
      ASSERT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      bool found = false;
      for (const LibraryCallInfo& call : report.library_calls) {
        if (call.routine != "select-and-scatter") continue;
        found = true;
        EXPECT_EQ(absl::StrContains(call.plan, "select=kernel"), !fast) << call.plan;
      }
      // An empty result needs no step at all.
      if (!absl::StrContains(hlo, "[0") && !absl::StrContains(hlo, ",0]")) {
        EXPECT_TRUE(found) << hlo;
      }
    }
  }
};

// The max-pool gradient as JAX writes it (NHWC, 3x3 stride 2, SAME), and
// the other orderings, on every recognised type.
TEST_P(JitSelectAndScatter, RecognisedPoolGradients) {
  const std::vector<Dim> nhwc = {{2, 1}, {9, 3, 2, 1, 1}, {8, 3, 2, 0, 1}, {5, 1}};
  for (const char* type : {"f32", "f64", "s32", "s64", "u32", "u64"}) {
    for (const char* direction : {"GE", "GT", "LE", "LT"}) {
      for (bool swapped : {false, true}) {
        const std::string select =
            absl::StrCat("compare(", swapped ? "b, a" : "a, b", "), direction=", direction);
        const std::string scatter = swapped ? "add(b, a)" : "add(a, b)";
        Check(Module(type, nhwc, Computations(type, select, scatter)), true);
      }
    }
  }
}

TEST_P(JitSelectAndScatter, WindowGeometry) {
  const std::string max_f32 = Computations("f32", "compare(a, b), direction=GE", "add(a, b)");
  const std::vector<std::vector<Dim>> cases = {
      {{10, 3, 1}},                                   // Overlapping, rank 1.
      {{10, 2, 3, 1, 2}},                             // Gaps between windows.
      {{7, 3, 2, -1, 2}},                             // Negative padding.
      {{5, 3, 1, 0, 0, 2, 1}},                        // Base dilation (holes).
      {{9, 3, 2, 1, 1, 1, 2, true}},                  // Window dilation, reversal.
      {{3, 6, 1, 2, 2}},                              // Window larger than the base.
      {{0, 2, 1, 1, 1}},                              // Size-0 operand.
      {{2, 3}, {3, 1}},                               // No window fits: all init.
      {{1, 1}, {1, 1}},                               // Size 1.
      {{4, 2, 2}, {0, 1}},                            // Size-0 dimension.
      {{3, 2, 1, 0, 0, 1, 1, true}, {6, 3, 3, 1, 0, 2, 1}, {5, 2, 1}},
      {{2, 1}, {11, 3, 2, 1, 1}, {11, 3, 2, 1, 1}, {4, 1}},
  };
  for (const std::vector<Dim>& dims : cases) Check(Module("f32", dims, max_f32), true);
}

TEST_P(JitSelectAndScatter, Layouts) {
  const std::vector<Dim> dims = {{3, 2, 1}, {7, 3, 2, 1, 1}, {4, 1}};
  for (bool fast : {true, false}) {
    const std::string computations =
        fast ? Computations("f32", "compare(a, b), direction=GE", "add(a, b)")
             : Computations("f32", "compare(a, b), direction=GE, type=TOTALORDER", "add(a, b)");
    Check(Module("f32", dims, computations, "{0,1,2}", "{1,2,0}", "{2,0,1}"), fast);
    Check(Module("f32", dims, computations, "{1,0,2}", "", "{0,2,1}"), fast);
  }
}

// Computations outside the recognised forms run as compiled kernels.
TEST_P(JitSelectAndScatter, CompiledComputations) {
  const std::vector<Dim> dims = {{6, 3, 2, 1, 1}, {5, 2, 1, 0, 1}};
  // Total order (NaN ordered), multiply, constants read by both.
  Check(Module("f32", dims,
               Computations("f32", "compare(a, b), direction=GT, type=TOTALORDER",
                            "multiply(a, b)")),
        false);
  Check(Module("f32", dims,
               Computations("f32", "compare(x, b), direction=GE", "add(x, b)",
                            "  c = f32[] constant(0.5)\n  x = f32[] multiply(a, c)\n")),
        false);
  // An EQ select (ties keep the first), maximum as scatter.
  Check(Module("s32", dims, Computations("s32", "compare(a, b), direction=NE", "maximum(a, b)")),
        false);
  for (const char* type : {"f16", "bf16", "s8", "u16", "f64"}) {
    Check(Module(type, dims, Computations(type, "compare(a, b), direction=LT", "add(b, a)")),
          std::string(type) == "f64");
  }
  // Recognised select with an unrecognised scatter: both as kernels.
  Check(Module("f32", dims, Computations("f32", "compare(a, b), direction=GE", "subtract(a, b)")),
        false);
}

INSTANTIATE_TEST_SUITE_P(Isas, JitSelectAndScatter, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
