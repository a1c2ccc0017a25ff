// Row groups (jit/kernel/row_groups.h): softmax and layer norm over rows, whose
// reductions split them into several kernels, run as one interleaved group
// with their temporaries in chunk-sized scratch. The group must give the
// same bits as the kernels run one after the other (row_groups off), on one
// and on two threads, and agree with the evaluator up to the reordering of
// the row sums; kernels that do not work row by row stay out of groups.
#include "jit/kernel/row_groups.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit {
namespace {

using ::xjit::jit::testing::Difference;
using ::xjit::jit::testing::ParseVerified;

// Uniform values in [-4, 4): ordinary inputs, so that the comparison with the
// evaluator is about summation order only (the same-bits comparison with
// row groups off holds for any input).
Literal Uniform(const Shape& shape, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> dist(-4.0, 4.0);
  std::vector<double> values(static_cast<size_t>(shape.element_count()));
  for (double& v : values) v = dist(rng);
  return Literal::FromDoubles(shape, values);
}

constexpr char kReducers[] = R"(
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

// One HLO line per source line.
// clang-format off
std::string Softmax(int64_t rows, int64_t cols) {
  return absl::StrCat("HloModule softmax\n", kReducers, R"(
ENTRY e {
  x = f32[)", rows, ",", cols, R"(] parameter(0)
  ninf = f32[] constant(-inf)
  zero = f32[] constant(0)
  mx = f32[)", rows, R"(] reduce(x, ninf), dimensions={1}, to_apply=%max
  mxb = f32[)", rows, ",", cols, R"(] broadcast(mx), dimensions={0}
  sh = f32[)", rows, ",", cols, R"(] subtract(x, mxb)
  ex = f32[)", rows, ",", cols, R"(] exponential(sh)
  sm = f32[)", rows, R"(] reduce(ex, zero), dimensions={1}, to_apply=%add
  smb = f32[)", rows, ",", cols, R"(] broadcast(sm), dimensions={0}
  ROOT out = f32[)", rows, ",", cols, R"(] divide(ex, smb)
}
)");
}
// clang-format on

// One HLO line per source line.
// clang-format off
std::string LayerNorm(int64_t rows, int64_t cols) {
  const std::string m = absl::StrCat("f32[", rows, ",", cols, "]");
  const std::string r = absl::StrCat("f32[", rows, "]");
  const std::string c = absl::StrCat("f32[", cols, "]");
  return absl::StrCat("HloModule layer_norm\n", kReducers, "ENTRY e {\n",
      "  x = ", m, " parameter(0)\n",
      "  g = ", c, " parameter(1)\n",
      "  b = ", c, " parameter(2)\n",
      "  zero = f32[] constant(0)\n",
      "  n = f32[] constant(", cols, ")\n",
      "  eps = f32[] constant(1e-5)\n",
      "  s = ", r, " reduce(x, zero), dimensions={1}, to_apply=%add\n",
      "  nb = ", r, " broadcast(n), dimensions={}\n",
      "  mean = ", r, " divide(s, nb)\n",
      "  meanb = ", m, " broadcast(mean), dimensions={0}\n",
      "  xc = ", m, " subtract(x, meanb)\n",
      "  sq = ", m, " multiply(xc, xc)\n",
      "  ss = ", r, " reduce(sq, zero), dimensions={1}, to_apply=%add\n",
      "  var = ", r, " divide(ss, nb)\n",
      "  epsb = ", r, " broadcast(eps), dimensions={}\n",
      "  ve = ", r, " add(var, epsb)\n",
      "  rs = ", r, " rsqrt(ve)\n",
      "  rsb = ", m, " broadcast(rs), dimensions={0}\n",
      "  y = ", m, " multiply(xc, rsb)\n",
      "  gb = ", m, " broadcast(g), dimensions={1}\n",
      "  bb = ", m, " broadcast(b), dimensions={1}\n",
      "  yg = ", m, " multiply(y, gb)\n",
      "  ROOT out = ", m, " add(yg, bb)\n}\n");
}
// clang-format on

// "" when every element of `actual` is within 1e-5 of the largest |value| of
// `expected`: the row sums run in another order than the evaluator's (and
// layer norm's x - mean cancels, so small outputs carry the absolute error of
// the mean), exp and rsqrt within their ulp bounds.
std::string ScaledDifference(const Literal& expected, const Literal& actual) {
  const int64_t n = expected.shape().element_count();
  double scale = 0;
  for (int64_t i = 0; i < n; ++i) {
    scale = std::max(scale, std::abs(expected.GetDouble({i / expected.shape().dimensions(1),
                                                         i % expected.shape().dimensions(1)})));
  }
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> index = {i / expected.shape().dimensions(1),
                                        i % expected.shape().dimensions(1)};
    const double want = expected.GetDouble(index), got = actual.GetDouble(index);
    if (!(std::abs(want - got) <= 1e-5 * scale)) {
      return absl::StrCat("element ", i, ": expected ", want, ", got ", got, " (scale ", scale,
                          ")");
    }
  }
  return "";
}

struct Outcome {
  Literal result;
  int groups = 0;
  int grouped_kernels = 0;
  int kernels = 0;
  int private_slots = 0;  // Temporaries moved to the groups' scratch.
};

Outcome Compile(const Module& module, const std::vector<Literal>& args, bool row_groups,
                int threads) {
  CompileOptions options;
  options.row_groups = row_groups;
  // Row groups serve the kernels row fusion leaves separate; these modules
  // would be single row programs with it (tests/jit/jit_row_fusion_test.cc).
  options.row_fusion = false;
  options.threads = threads;
  options.cache = false;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe = jit::Compile(module, options);
  EXPECT_TRUE(exe.ok()) << exe.status();
  Outcome run;
  if (!exe.ok()) return run;
  for (const runtime::Step& step : (*exe)->steps()) {
    if (step.kind == runtime::Step::Kind::kRowGroup) {
      ++run.groups;
      run.grouped_kernels += static_cast<int>(step.members.size());
      run.kernels += static_cast<int>(step.members.size());
      run.private_slots += static_cast<int>(step.private_slots.size());
    } else if (step.kind == runtime::Step::Kind::kKernel) {
      ++run.kernels;
    }
  }
  absl::StatusOr<Literal> result = (*exe)->Run(args);
  EXPECT_TRUE(result.ok()) << result.status();
  if (result.ok()) run.result = *std::move(result);
  return run;
}

struct Case {
  const char* name;
  std::string text;
  int grouped_kernels;  // Every kernel of the module.
};

class RowGroupsTest : public ::testing::TestWithParam<int> {};

void CheckCase(const Case& c, int threads) {
  SCOPED_TRACE(c.name);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.text);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(7);
  std::vector<Literal> args;
  for (const Instruction* p : (*module)->entry()->parameters()) {
    args.push_back(Uniform(p->shape(), rng));
  }
  const Outcome grouped = Compile(**module, args, true, threads);
  const Outcome plain = Compile(**module, args, false, threads);
  EXPECT_EQ(grouped.groups, 1);
  EXPECT_EQ(grouped.grouped_kernels, c.grouped_kernels);
  EXPECT_EQ(grouped.kernels, plain.kernels);
  // At least the full-size temporary between the kernels (exp(x - max) for
  // softmax, x - mean for layer norm) never leaves the scratch.
  EXPECT_GE(grouped.private_slots, 1);
  EXPECT_EQ(plain.groups, 0);
  // Same code on the same rows: the same bits.
  EXPECT_EQ(Difference(plain.result, grouped.result), "");
  absl::StatusOr<Literal> expected = EvaluateModule(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(ScaledDifference(*expected, grouped.result), "");
}

TEST_P(RowGroupsTest, SoftmaxIsOneGroup) {
  // 300 rows: chunks of rows do not divide them evenly.
  CheckCase({"softmax", Softmax(300, 1024), 4}, GetParam());
}

TEST(RowGroupsTest, SmallArraysAreNotGrouped) {
  // 64 rows of 1024: 256 KB arrays stay in cache between the kernels.
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(Softmax(64, 1024));
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(5);
  std::vector<Literal> args;
  args.push_back(Uniform((*module)->entry()->parameter(0)->shape(), rng));
  const Outcome run = Compile(**module, args, true, 1);
  EXPECT_EQ(run.groups, 0);
  EXPECT_EQ(run.kernels, 4);
}

TEST_P(RowGroupsTest, LayerNormIsOneGroup) {
  CheckCase({"layer_norm", LayerNorm(300, 768), 5}, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Threads, RowGroupsTest, ::testing::Values(1, 2));

TEST(RowGroupsTest, ColumnReadIsNotGrouped) {
  // 1 MB arrays: large enough to be grouped. The last kernel reads the
  // quotient transposed: its iteration i needs
  // column i, which every row of the quotient's kernel writes. The row
  // sums and the quotient form a group; the transposing kernel stays out.
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(absl::StrCat("HloModule t\n", kReducers, R"(
ENTRY e {
  x = f32[512,512] parameter(0)
  zero = f32[] constant(0)
  e = f32[512,512] exponential(x)
  s = f32[512] reduce(e, zero), dimensions={1}, to_apply=%add
  sb = f32[512,512] broadcast(s), dimensions={0}
  d = f32[512,512] divide(e, sb)
  t = f32[512,512] transpose(d), dimensions={1,0}
  ROOT o = f32[512,512] add(t, x)
}
)"));
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(3);
  std::vector<Literal> args;
  args.push_back(Uniform((*module)->entry()->parameter(0)->shape(), rng));
  const Outcome grouped = Compile(**module, args, true, 1);
  const Outcome plain = Compile(**module, args, false, 1);
  EXPECT_EQ(grouped.groups, 1);
  EXPECT_EQ(grouped.grouped_kernels, 2);
  EXPECT_EQ(grouped.kernels, 3);
  EXPECT_EQ(Difference(plain.result, grouped.result), "");
  absl::StatusOr<Literal> expected = EvaluateModule(**module, args);
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_EQ(ScaledDifference(*expected, grouped.result), "");
}

}  // namespace
}  // namespace xjit::jit
