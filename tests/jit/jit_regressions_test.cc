// Regressions found by the random differential test (jit_random_test),
// each a module against the evaluator bit for bit on every instruction set
// the host runs:
//   - f16 signalling NaNs through clamp, maximum, minimum and select keep
//     their bits (the f32 holding an f16 value was narrowed by a conversion,
//     which quietens a signalling NaN); compared after a bitcast-convert to
//     u16, since the comparison treats any NaN as equal to any NaN;
//   - a concatenate whose operands are all empty along the concatenated
//     dimension compiles with only the fuse pass (a kernel with no elements);
//   - a variadic scatter into empty operands writes nothing (its kernel
//     stored one element past its empty buffers);
//   - a dynamic-update-slice with a packed (E(4)) result compiles with the
//     pipeline off (it was left to the evaluator);
//   - floor, ceil, round and sign of a signalling f16 NaN give a quiet NaN
//     (the evaluator kept it signalling; XLA computes f16 in f32);
//   - maximum and minimum of a signalling f32 NaN keep its bits (the
//     evaluator quietened it reading it into a double);
//   - count-leading-zeros and popcnt of s1/s2 wrap in the type (a count of
//     2 is -2 in s2; the kernels kept 2);
//   - a select between the two operands of its own float compare (x86-64
//     lowers it as maxps/minps) keeps the select's bits for NaN (either
//     operand, payloads included), zeros of both signs and equal operands.

#include <bit>
#include <cmath>
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

class JitRegressions : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs `hlo` compiled (with no interpreted step, `only_passes` alone if
  // given) and evaluated on `arguments`; fails on any difference.
  void Check(const std::string& hlo, const std::vector<Literal>& arguments,
             const std::vector<std::string>& only_passes = {}, bool run_passes = true,
             CompileReport* report_out = nullptr) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status() << "\n" << hlo;
    CompileOptions options;
    options.isa = GetParam();
    options.only_passes = only_passes;
    options.run_passes = run_passes;
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status() << "\n" << hlo;
    for (const std::string& step : UnexpectedInterpretedSteps(report)) {
      ADD_FAILURE() << step << "\n" << hlo;
    }
    if (report_out != nullptr) *report_out = report;
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(Difference(*expected, *actual), "") << hlo;
  }

  // Random arguments for `hlo`'s parameters.
  static std::vector<Literal> RandomArguments(const std::string& hlo) {
    std::vector<Literal> arguments;
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    if (!module.ok()) return arguments;
    std::mt19937_64 rng(1);
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(RandomLiteral(parameter->shape(), rng));
    }
    return arguments;
  }
};

// lax.associative_scan's down-sweep as JAX lowers it: each level's even
// results and odd results interleaved by interior-padded pads and an add,
// over eight levels. Fused whole, the first level's values were evaluated
// 2^8 times per element (docs/zoo.md, session 19: a 5-7x slower kernel);
// the fuser now cuts the chain (fuse.cc, IndexEvaluations), and the values
// stay the evaluator's bit for bit (no reassociation: each value is still
// one chain of the same operations).
TEST_P(JitRegressions, InterleavedLevelsOfAScanMatchTheEvaluator) {
  std::string hlo = "HloModule down_sweep\nENTRY e {\n  z = f32[] constant(0)\n"
                    "  x0 = f32[2,3] parameter(0)\n";
  int64_t rows = 2;
  for (int k = 1; k <= 8; ++k) {
    absl::StrAppend(&hlo, "  t", k, " = f32[", rows, ",3] multiply(x", k - 1, ", x", k - 1,
                    ")\n", "  ev", k,
                    " = f32[", 2 * rows, ",3] pad(x", k - 1, ", z), padding=0_1_1x0_0_0\n",
                    "  od", k, " = f32[", 2 * rows, ",3] pad(t", k, ", z), padding=1_0_1x0_0_0\n",
                    k == 8 ? "  ROOT " : "  ", "x", k, " = f32[", 2 * rows, ",3] add(ev", k,
                    ", od", k, ")\n");
    rows *= 2;
  }
  absl::StrAppend(&hlo, "}\n");
  CompileReport report;
  Check(hlo, RandomArguments(hlo), {}, true, &report);
  EXPECT_GE(report.kernels.size(), 2u) << hlo;
}

// Every f16 bit pattern (the signalling NaNs 0x7c01..0x7dff and
// 0xfc01..0xfdff among them) through each operation whose result is one of
// its operands, read back as bits.
TEST_P(JitRegressions, F16SignallingNanKeepsItsBits) {
  constexpr int kCount = 1 << 16;
  Literal bits(Shape::Array(ElementType::kU16, {kCount}));
  for (int i = 0; i < kCount; ++i) bits.SetBitsLinear(i, i);
  const std::string n = absl::StrCat(kCount);
  const std::string f16 = absl::StrCat("f16[", n, "]");
  const std::vector<std::string> roots = {
      absl::StrCat(f16, " clamp(lo, x, hi)"),   absl::StrCat(f16, " clamp(x, one, x)"),
      absl::StrCat(f16, " maximum(x, lo)"),     absl::StrCat(f16, " minimum(hi, x)"),
      absl::StrCat(f16, " select(ne, x, one)"),
  };
  for (const std::string& root : roots) {
    Check(ModuleText(
              {absl::StrCat("u16[", n, "]")},
              {absl::StrCat("x = ", f16, " bitcast-convert(p0)"), "a = f16[] constant(-1)",
               "b = f16[] constant(1)", absl::StrCat("lo = ", f16, " broadcast(a), dimensions={}"),
               absl::StrCat("hi = ", f16, " broadcast(b), dimensions={}"),
               absl::StrCat("one = ", f16, " broadcast(b), dimensions={}"),
               absl::StrCat("ne = pred[", n, "] compare(x, x), direction=NE"),
               absl::StrCat("y = ", root), absl::StrCat("r = u16[", n, "] bitcast-convert(y)")}),
          {bits});
  }
}

// Every pair of special and ordinary values, through select(compare(a, b),
// a|b, b|a) for < and > (one maxps/minps on x86-64) and <= (a compare and a
// blend), read back as bits.
TEST_P(JitRegressions, SelectOfItsCompareOperands) {
  for (const char* type : {"f32", "f64"}) {
    const bool f64 = std::string(type) == "f64";
    const std::vector<double> values = {std::nan(""), -std::nan(""), -0.0, 0.0, 1.0, -1.0,
                                        2.5, HUGE_VAL, -HUGE_VAL, 1e-40};
    const int64_t n = static_cast<int64_t>(values.size() * values.size());
    const Shape shape = Shape::Array(f64 ? ElementType::kF64 : ElementType::kF32, {n});
    std::vector<double> a, b;
    for (double x : values) {
      for (double y : values) {
        a.push_back(x);
        b.push_back(y);
      }
    }
    // A NaN with a payload of its own.
    a[1] = f64 ? std::bit_cast<double>(uint64_t{0x7FF8000000000123})
               : static_cast<double>(std::bit_cast<float>(uint32_t{0x7FC00123}));
    const std::vector<Literal> arguments = {Literal::FromDoubles(shape, a),
                                            Literal::FromDoubles(shape, b)};
    const std::string t = absl::StrCat(type, "[", n, "]");
    const std::string bits = absl::StrCat(f64 ? "u64[" : "u32[", n, "]");
    for (const char* direction : {"LT", "GT", "LE"}) {
      for (const char* chosen : {"p0, p1", "p1, p0"}) {
        SCOPED_TRACE(absl::StrCat(type, " ", direction, " select(c, ", chosen, ")"));
        Check(ModuleText({t, t},
                         {absl::StrCat("c = pred[", n, "] compare(p0, p1), direction=", direction),
                          absl::StrCat("s = ", t, " select(c, ", chosen, ")"),
                          absl::StrCat("r = ", bits, " bitcast-convert(s)")}),
              arguments);
      }
    }
  }
}

// Operands all empty along the concatenated dimension: the result is empty
// too, and each operand read at the result's index is the concatenate.
TEST_P(JitRegressions, EmptyConcatenateWithOnlyFuse) {
  const std::vector<std::string> modules = {
      // Found by jit_random_test (JitRandomPasses/fuse, module seed 209).
      R"(HloModule random
ENTRY e {
  p0 = f64[6,32,2]{2,0,1} parameter(0)
  c0 = s32[] constant(1)
  c1 = s32[] constant(4)
  c2 = s32[] constant(4)
  v3 = f64[3,27,0]{2,1,0} dynamic-slice(p0, c0, c1, c2), dynamic_slice_sizes={3,27,0}
  v4 = f64[3,27,0]{1,2,0} round-nearest-even(v3)
  v5 = f64[3,27,0]{2,1,0} clamp(v3, v3, v4)
  v6 = s64[3,27,0]{2,1,0} bitcast-convert(v5)
  c7 = s32[] constant(2)
  c8 = s32[] constant(17)
  c9 = s32[] constant(-2)
  v10 = f64[0,18,0]{2,1,0} dynamic-slice(v3, c7, c8, c9), dynamic_slice_sizes={0,18,0}
  v11 = f64[0,18,0]{2,1,0} clamp(v10, v10, v10)
  v12 = f64[3,27,0]{2,0,1} concatenate(v5, v5), dimensions={2}
  ROOT v13 = f64[3,27,0]{2,0,1} power(v12, v3)
}
)",
      ModuleText({"f64[3,27,0]"}, {"c = f64[3,27,0] concatenate(p0, p0), dimensions={2}",
                                   "r = f64[3,27,0] power(c, p0)"}),
      OneOp({"f32[3,0]", "f32[3,0]"}, "f32[3,0] concatenate(p0, p1), dimensions={1}"),
      ModuleText({"s32[0,2]", "s32[0,2]", "s32[0,2]"},
                 {"c = s32[0,2] concatenate(p0, p1), dimensions={0}", "r = s32[0,2] add(c, p2)"}),
      ModuleText({"f32[2,0]", "f32[2,0]"},
                 {"c = f32[2,0] concatenate(p0, p1), dimensions={1}", "n = f32[2,0] negate(c)",
                  "t = f32[0,2] transpose(n), dimensions={1,0}"}),
      // A reduce over the empty dimension: the kernel has elements, and its
      // (never run) inner loop reads the concatenate.
      "HloModule m\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  p0 = f32[3,0] parameter(0)\n  p1 = f32[3,0] parameter(1)\n"
      "  c = f32[3,0] concatenate(p0, p1), dimensions={1}\n  z = f32[] constant(1.5)\n"
      "  ROOT r = f32[3] reduce(c, z), dimensions={1}, to_apply=add\n}\n",
  };
  for (const std::string& hlo : modules) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(Literal(parameter->shape()));
    }
    Check(hlo, arguments, {"fuse"});
  }
}

// Found by jit_random_test (JitRandomSteps, seed 1508, variadic scatter):
// every window is out of bounds of an empty operand, but the kernel stored
// the combined values at the clamped index 0 of the empty result buffers
// (a crash, or a heap write past them). Now the kernel has no store at all.
TEST_P(JitRegressions, VariadicScatterIntoEmptyOperandsStoresNothing) {
  const std::string hlo = R"(HloModule m
combine {
  a0 = s32[] parameter(0)
  a1 = s32[] parameter(1)
  b0 = s32[] parameter(2)
  b1 = s32[] parameter(3)
  m0 = s32[] add(a0, b0)
  m1 = s32[] minimum(a1, b1)
  ROOT r = (s32[], s32[]) tuple(m0, m1)
}
ENTRY e {
  x = s32[0,6]{1,0} parameter(0)
  i = u64[2,2,2]{2,1,0} parameter(1)
  u0 = s32[2,2]{1,0} parameter(2)
  u1 = s32[2,2]{1,0} parameter(3)
  ROOT s = (s32[0,6]{1,0}, s32[0,6]{1,0}) scatter(x, x, i, u0, u1), update_window_dims={}, inserted_window_dims={0,1}, scatter_dims_to_operand_dims={1,0}, index_vector_dim=2, to_apply=combine
}
)";
  for (bool passes : {true, false}) {
    CompileReport report;
    Check(hlo, RandomArguments(hlo), {}, passes, &report);
    for (const KernelInfo& kernel : report.kernels) {
      EXPECT_FALSE(absl::StrContains(kernel.program, "= store")) << kernel.program;
    }
  }
}

// Found by jit_random_test (JitRandomSteps, seed 47, pipeline off): the
// in-place dynamic-update-slice kernel cannot store single elements of a
// packed s4 array, so the step ran interpreted; a packed result is now
// computed whole, a byte at a time.
TEST_P(JitRegressions, PackedDynamicUpdateSliceCompilesWithoutPasses) {
  for (const char* type : {"s4", "u4", "s2", "u1"}) {
    const int bits = type[1] - '0';
    const std::string packed = absl::StrCat(type, "[13]{0:E(", bits, ")}");
    const std::string hlo = ModuleText(
        {packed, absl::StrCat(type, "[3]{0:E(", bits, ")}"), "s32[]"},
        {absl::StrCat("r = ", packed, " dynamic-update-slice(p0, p1, p2)")});
    for (bool passes : {true, false}) Check(hlo, RandomArguments(hlo), {}, passes);
  }
}

// Found by jit_random_test (JitRandomWide, seed 861): f16 ceil of the
// signalling NaN 0xfcbf gave 0xfebf compiled (f16 computed in f32, as XLA
// does) and 0xfcbf in the evaluator (libm passes a NaN through). Every f16
// pattern through the rounding operations and sign, read back as bits.
TEST_P(JitRegressions, F16RoundingOfSignallingNanIsQuiet) {
  constexpr int kCount = 1 << 16;
  Literal bits(Shape::Array(ElementType::kU16, {kCount}));
  for (int i = 0; i < kCount; ++i) bits.SetBitsLinear(i, i);
  const std::string f16 = absl::StrCat("f16[", kCount, "]");
  for (const char* op : {"ceil", "floor", "round-nearest-even", "round-nearest-afz", "sign"}) {
    Check(ModuleText({absl::StrCat("u16[", kCount, "]")},
                     {absl::StrCat("x = ", f16, " bitcast-convert(p0)"),
                      absl::StrCat("y = ", f16, " ", op, "(x)"),
                      absl::StrCat("r = u16[", kCount, "] bitcast-convert(y)")}),
          {bits});
  }
}

// Found by jit_random_test (JitRandom, seed 4636): minimum(x, x) of the
// signalling NaN 0xff8de5a9. Signalling and quiet NaNs of both signs
// against ordinary values, read back as bits.
TEST_P(JitRegressions, F32MaximumMinimumKeepSignallingNanBits) {
  const std::vector<uint32_t> patterns = {0x7f800001, 0xff8de5a9, 0x7fc00000, 0xffc12345,
                                          0x3f800000, 0x80000000, 0x7f800000, 0x00000001};
  const int64_t n = patterns.size();
  Literal a(Shape::Array(ElementType::kU32, {n * n}));
  Literal b(Shape::Array(ElementType::kU32, {n * n}));
  for (int64_t i = 0; i < n * n; ++i) {
    a.SetBitsLinear(i, patterns[i / n]);
    b.SetBitsLinear(i, patterns[i % n]);
  }
  const std::string f32 = absl::StrCat("f32[", n * n, "]");
  const std::string u32 = absl::StrCat("u32[", n * n, "]");
  for (const char* op : {"maximum", "minimum"}) {
    Check(ModuleText({u32, u32}, {absl::StrCat("x = ", f32, " bitcast-convert(p0)"),
                                  absl::StrCat("y = ", f32, " bitcast-convert(p1)"),
                                  absl::StrCat("m = ", f32, " ", op, "(x, y)"),
                                  absl::StrCat("r = ", u32, " bitcast-convert(m)")}),
          {a, b});
  }
}

// Found by jit_random_test (JitRandom, seeds 4599, 7349, 7979): every s1,
// s2, u1, u2, s4 value through count-leading-zeros and popcnt, unpacked and
// packed, widened to s32 to compare.
TEST_P(JitRegressions, SubByteCountsWrapInTheirType) {
  for (const char* type : {"s1", "s2", "u1", "u2", "s4"}) {
    const int bits = type[1] - '0';
    const int64_t n = int64_t{1} << bits;
    Literal values(Shape::Array(ElementType::kS32, {n}));
    for (int64_t i = 0; i < n; ++i) values.SetBitsLinear(i, i);
    for (const char* op : {"count-leading-zeros", "popcnt"}) {
      for (const std::string& layout : {std::string("{0}"), absl::StrCat("{0:E(", bits, ")}")}) {
        const std::string t = absl::StrCat(type, "[", n, "]");
        Check(ModuleText({absl::StrCat("s32[", n, "]")},
                         {absl::StrCat("x = ", t, layout, " convert(p0)"),
                          absl::StrCat("c = ", t, layout, " ", op, "(x)"),
                          absl::StrCat("r = s32[", n, "] convert(c)")}),
              {values});
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitRegressions, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
