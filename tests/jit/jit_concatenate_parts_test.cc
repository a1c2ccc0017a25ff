// A loop fusion whose root concatenates along the output's minor-most
// dimension runs as one kernel per operand, each writing its part of the
// output (jit/kernel/fusion_emitter.h, ConcatenateParts): against the evaluator on
// every instruction set the host has, with operands of odd, size-1 and
// size-0 widths, shared producers, several element types and layouts; the
// parts must be there (kernels named NAME.partK) and vectorised where their
// rows are long enough, and a concatenate along a major dimension stays one
// kernel.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

class JitConcatenateParts : public ::testing::TestWithParam<Isa> {
 protected:
  // Compares with the evaluator on two seeds; returns the report.
  CompileReport Check(const std::string& hlo) {
    return ExpectMatchesEvaluatorOnSeeds(hlo, GetParam());
  }
};

int Parts(const CompileReport& report, int* vectorized) {
  int parts = 0;
  *vectorized = 0;
  for (const KernelInfo& kernel : report.kernels) {
    if (kernel.name.find(".part") == std::string::npos) continue;
    ++parts;
    if (kernel.vector_lanes > 1) ++*vectorized;
  }
  return parts;
}

// concatenate(f(p0), g(p1), ...) along dimension 1 of [rows, widths]: the
// operands are elementwise ops of the parameters, so the fuse pass makes
// one loop fusion with the concatenate at its root.
std::string ConcatModule(const std::string& type, int64_t rows,
                         const std::vector<int64_t>& widths, const std::string& layout) {
  std::vector<std::string> parameters, body, names;
  int64_t total = 0;
  const std::string op = type == "pred" ? "not" : "negate";
  for (size_t k = 0; k < widths.size(); ++k) {
    const std::string shape = absl::StrCat(type, "[", rows, ",", widths[k], "]", layout);
    parameters.push_back(shape);
    body.push_back(absl::StrCat("v", k, " = ", shape, " ", k % 2 == 0 ? op : "copy", "(p", k, ")"));
    names.push_back(absl::StrCat("v", k));
    total += widths[k];
  }
  body.push_back(absl::StrCat("r = ", type, "[", rows, ",", total, "]", layout, " concatenate(",
                              absl::StrJoin(names, ", "), "), dimensions={1}"));
  return ModuleText(parameters, body);
}

TEST_P(JitConcatenateParts, MinorDimensionSplits) {
  for (const char* t : {"f32", "f64", "s8", "u16", "s64", "pred"}) {
    for (const std::vector<int64_t>& widths :
         std::vector<std::vector<int64_t>>{{67, 70}, {67, 1, 0, 66, 3}, {1, 1}}) {
      const CompileReport report = Check(ConcatModule(t, 5, widths, "{1,0}"));
      // The simplifier may drop an empty operand first; every other one is
      // a part, and every part of 64 or more elements per row (more than
      // any vector width) has vector code.
      int vectorized = 0, nonempty = 0, long_rows = 0;
      for (int64_t w : widths) {
        nonempty += w > 0 ? 1 : 0;
        long_rows += w >= 64 ? 1 : 0;
      }
      const int parts = Parts(report, &vectorized);
      EXPECT_GE(parts, nonempty) << t;
      EXPECT_LE(parts, static_cast<int>(widths.size())) << t;
      EXPECT_GE(vectorized, long_rows) << t;
    }
  }
}

// Column-major: dimension 1 is the major one, the inner loop runs down the
// columns and never crosses an operand boundary: one kernel.
TEST_P(JitConcatenateParts, MajorDimensionStaysOneKernel) {
  const CompileReport report = Check(ConcatModule("f32", 70, {3, 5}, "{0,1}"));
  int vectorized = 0;
  EXPECT_EQ(Parts(report, &vectorized), 0);
}

// Operands sharing a producer (the gate gradients of an LSTM share their
// incoming gradient): each part computes what it needs; rank 1 and a
// concatenate of four operands of a [32,1024]-like row.
TEST_P(JitConcatenateParts, SharedProducersAndRankOne) {
  const std::string s = "f32[4,67]";
  Check(ModuleText({s, s, s},
                   {absl::StrCat("g = ", s, " multiply(p0, p1)"),
                    absl::StrCat("a = ", s, " add(g, p2)"),
                    absl::StrCat("b = ", s, " subtract(g, p2)"),
                    absl::StrCat("c = ", s, " multiply(a, b)"),
                    "r = f32[4,268] concatenate(g, a, b, c), dimensions={1}"}));
  const CompileReport report =
      Check(ModuleText({"f32[67]", "f32[5]"}, {"n = f32[67] negate(p0)", "m = f32[5] abs(p1)",
                                               "r = f32[72] concatenate(n, m), dimensions={0}"}));
  int vectorized = 0;
  EXPECT_EQ(Parts(report, &vectorized), 2);
  EXPECT_GE(vectorized, 1);  // The [5] part too where 4 lanes fit (SSE4.1).
}

INSTANTIATE_TEST_SUITE_P(Isas, JitConcatenateParts, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
