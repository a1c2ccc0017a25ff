// Cumulative reduce-windows whose reducer is not a plain add/multiply/max/
// min (lax.cumlogsumexp's logaddexp, ...), which passes/
// scan_cumulative_windows.h rewrites into a log-depth scan, against the
// evaluator on every instruction set the host supports: forward and reversed
// windows, along the minor, a middle and the major dimension, f32/f64/bf16,
// scanned lengths 1, 2, odd and 300, empty arrays, and arguments rich
// in NaN and infinities. The scan folds in a tree where the evaluator folds
// each window left to right, so floats are compared with a tolerance
// (NormDifference); a max of integers written as a select is exact.
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "passes/scan_cumulative_windows.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// logaddexp as JAX writes it (jnp.logaddexp): NaN or same-signed infinities
// through the plain sum, otherwise max + log1p(exp(-|a - b|)).
std::string LogAddExp(const std::string& t) {
  return absl::StrCat("r {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n",
                      "  m = ", t, "[] maximum(a, b)\n  d = ", t, "[] subtract(a, b)\n",
                      "  n = pred[] compare(d, d), direction=NE\n  s = ", t, "[] add(a, b)\n",
                      "  ad = ", t, "[] abs(d)\n  ng = ", t, "[] negate(ad)\n  e = ", t,
                      "[] exponential(ng)\n  l = ", t, "[] log-plus-one(e)\n  u = ", t,
                      "[] add(m, l)\n  ROOT o = ", t, "[] select(n, s, u)\n}\n");
}

// max(a, b) spelled as a select (not a plain fold, so the scan takes it).
std::string SelectMax(const std::string& t) {
  return absl::StrCat("r {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n",
                      "  g = pred[] compare(a, b), direction=GT\n  ROOT o = ", t,
                      "[] select(g, a, b)\n}\n");
}

std::string CumulativeModule(const std::string& reducer, const std::string& shape,
                   const std::string& init_type, const std::string& init,
                   const std::string& window) {
  return absl::StrCat("HloModule m\n", reducer, "ENTRY e {\n  x = ", shape,
                      " parameter(0)\n  i = ", init_type, "[] constant(", init,
                      ")\n  ROOT w = ", shape, " reduce-window(x, i), window={", window,
                      "}, to_apply=r\n}\n");
}

// Whether the pass rewrites the module's reduce-window (and leaves none).
bool Scanned(const std::string& hlo) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return false;
  absl::StatusOr<bool> changed = ScanCumulativeWindows().Run(module->get());
  EXPECT_TRUE(changed.ok()) << changed.status();
  if (!changed.ok() || !*changed) return false;
  for (const auto& instruction : (*module)->entry()->instructions()) {
    if (instruction->opcode() == Opcode::kReduceWindow) return false;
  }
  return true;
}

struct Geometry {
  const char* dims;
  const char* window;
  bool scanned;  // Whether the pass takes it (a scanned length >= 2).
  // 300 long (nine scan steps, past every power of two up to 256): the
  // evaluator folds each window whole, O(n^2) reducer calls per row (at
  // 1031 this test took 327 s under the sanitizers), so one row, f32 and one
  // seed only.
  bool large = false;
};

const Geometry kGeometries[] = {
    {"[4,37]", "size=1x37 pad=0_0x36_0", true},       // Minor, forward.
    {"[4,37]", "size=1x37 pad=0_0x0_36", true},       // Minor, reversed.
    {"[19,3]", "size=19x1 pad=18_0x0_0", true},       // Major, forward.
    {"[19,3]", "size=19x1 pad=0_18x0_0", true},       // Major, reversed.
    {"[3,4,5]", "size=1x4x1 pad=0_0x3_0x0_0", true},  // Middle.
    {"[2]", "size=2 pad=1_0", true},
    {"[2]", "size=2 pad=0_1", true},
    {"[1,300]", "size=1x300 pad=0_0x299_0", true, true},
    {"[300,1]", "size=300x1 pad=0_299x0_0", true, true},
    {"[5,1]", "size=1x1 pad=0_0x0_0", false},  // Length 1: an elementwise window.
    {"[0,5]", "size=1x5 pad=0_0x4_0", true},   // Empty: nothing to run.
};

class JitCumulativeScan : public ::testing::TestWithParam<Isa> {};

TEST_P(JitCumulativeScan, LogAddExpEqualsTheEvaluatorWithinRounding) {
  for (const char* t : {"f32", "f64", "bf16"}) {
    const std::string type = t;
    const double tolerance = type == "bf16" ? 2e-2 : type == "f32" ? 1e-5 : 1e-12;
    for (const Geometry& g : kGeometries) {
      if (g.large && type != "f32") continue;
      const std::string hlo =
          CumulativeModule(LogAddExp(t), absl::StrCat(t, g.dims), t, "-inf", g.window);
      EXPECT_EQ(Scanned(hlo), g.scanned) << hlo;
      for (uint64_t seed = 1; seed <= (g.large ? 1 : 3); ++seed) {
        CompileReport report;
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        options.report = &report;
        options.norm_tolerance = tolerance;
        options.norm_minor_dims = 2;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
        // Never the window kernel: no step computes the reduce-window.
        if (g.scanned) {
          for (const KernelInfo& kernel : report.kernels) EXPECT_NE(kernel.name, "w") << hlo;
        }
        EXPECT_TRUE(report.library_calls.empty()) << hlo;
      }
    }
  }
}

TEST_P(JitCumulativeScan, ExactReducersEqualTheEvaluatorBitForBit) {
  for (const char* t : {"s32", "u8"}) {
    const std::string lowest = std::string(t) == "u8" ? "0" : "-2147483648";
    for (const Geometry& g : kGeometries) {
      if (g.large) continue;
      const std::string hlo =
          CumulativeModule(SelectMax(t), absl::StrCat(t, g.dims), t, lowest, g.window);
      EXPECT_EQ(Scanned(hlo), g.scanned) << hlo;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      }
    }
  }
}

// What the scan leaves alone: a forward plain add (the library call's), an
// init that is not a fixed point of the reducer, a window with stride 2 or
// not spanning the dimension, and a variadic reduce-window. All still match
// the evaluator bit for bit through the paths they took before.
TEST_P(JitCumulativeScan, OtherWindowsStayOnTheirPaths) {
  const std::string add =
      "r {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT o = f32[] add(a, b)\n}\n";
  const std::string variadic =
      "HloModule m\nr {\n  a = f32[] parameter(0)\n  b = s32[] parameter(1)\n"
      "  c = f32[] parameter(2)\n  d = s32[] parameter(3)\n  m = f32[] maximum(a, c)\n"
      "  n = s32[] add(b, d)\n  ROOT o = (f32[], s32[]) tuple(m, n)\n}\n"
      "ENTRY e {\n  x = f32[3,9] parameter(0)\n  y = s32[3,9] parameter(1)\n"
      "  i = f32[] constant(-inf)\n  j = s32[] constant(0)\n"
      "  ROOT w = (f32[3,9], s32[3,9]) reduce-window(x, y, i, j), "
      "window={size=1x9 pad=0_0x8_0}, to_apply=r\n}\n";
  const std::string cases[] = {
      CumulativeModule(add, "f32[4,9]", "f32", "0", "size=1x9 pad=0_0x8_0"),
      CumulativeModule(LogAddExp("f32"), "f32[4,9]", "f32", "1", "size=1x9 pad=0_0x8_0"),
      absl::StrReplaceAll(CumulativeModule(LogAddExp("f32"), "f32[4,9]", "f32", "-inf",
                                           "size=1x9 stride=1x2 pad=0_0x8_0"),
                          {{"ROOT w = f32[4,9]", "ROOT w = f32[4,5]"}}),
      CumulativeModule(LogAddExp("f32"), "f32[4,9]", "f32", "-inf", "size=1x8 pad=0_0x7_0"),
      variadic,
  };
  for (const std::string& hlo : cases) {
    EXPECT_FALSE(Scanned(hlo)) << hlo;
    CheckOptions options;
    options.isa = GetParam();
    EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitCumulativeScan, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
