// The small operations that used to run as interpreted steps, compiled in
// kernels, against the evaluator bit for bit on every instruction set the
// host supports (random arguments rich in edge values: NaN, infinities,
// zeros of both signs, subnormals, extremes): real/imag of real floats,
// get-dimension-size and set-dimension-size of static shapes, map (binary,
// integer, complex, with constants, with a multi-output fusion inside),
// reduce-precision (f16, bf16, f32, f64; exponent and mantissa reductions,
// mantissa 0), and bitcast-convert between element widths in both
// directions (pred as StableHLO's one-bit i1 included), with non-default
// layouts and size-0/size-1 dimensions.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

class JitSmallOps : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const std::string& hlo) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      CompileReport report;
      options.report = &report;
      ASSERT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      for (const std::string& step : report.interpreted_steps) ADD_FAILURE() << step;
    }
  }
  void CheckOne(const std::vector<std::string>& parameters, const std::string& root) {
    Check(OneOp(parameters, root));
  }
};

TEST_P(JitSmallOps, RealImagOfRealFloats) {
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    for (const char* op : {"real", "imag"}) {
      CheckOne({absl::StrCat(type, "[37]")}, absl::StrCat(type, "[37] ", op, "(p0)"));
      CheckOne({absl::StrCat(type, "[3,5]{0,1}")},
               absl::StrCat(type, "[3,5] ", op, "(p0)"));
    }
  }
  // Fused with other elementwise work.
  Check(ModuleText({"f32[17]", "f32[17]"},
                   {"r = f32[17] real(p0)", "i = f32[17] imag(p1)",
                    "a = f32[17] add(r, i)"}));
}

TEST_P(JitSmallOps, DimensionSizes) {
  CheckOne({"f32[3,5]"}, "s32[] get-dimension-size(p0), dimensions={1}");
  CheckOne({"f32[0,7]"}, "s32[] get-dimension-size(p0), dimensions={0}");
  Check(ModuleText({"f32[3,5]", "s32[4]"},
                   {"d = s32[] get-dimension-size(p0), dimensions={0}",
                    "b = s32[4] broadcast(d), dimensions={}", "a = s32[4] add(b, p1)"}));
  Check(ModuleText({"f32[6]"}, {"s = s32[] constant(6)",
                                "r = f32[6] set-dimension-size(p0, s), dimensions={0}"}));
}

TEST_P(JitSmallOps, Map) {
  const std::string add_f32 =
      "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT r = f32[] add(x, y)\n}\n";
  Check(absl::StrCat("HloModule m\n", add_f32,
                     "ENTRY e {\n  a = f32[10,3] parameter(0)\n  b = f32[10,3]{0,1} parameter(1)\n"
                     "  ROOT m = f32[10,3] map(a, b), dimensions={0,1}, to_apply=add\n}\n"));
  Check(absl::StrCat("HloModule m\n", add_f32,
                     "ENTRY e {\n  a = f32[0,3] parameter(0)\n  b = f32[0,3] parameter(1)\n"
                     "  ROOT m = f32[0,3] map(a, b), dimensions={0,1}, to_apply=add\n}\n"));
  // Integers, a constant inside, three operands.
  Check("HloModule m\nf {\n  x = s64[] parameter(0)\n  y = s64[] parameter(1)\n"
        "  z = s64[] parameter(2)\n  c = s64[] constant(3)\n  m = s64[] multiply(x, y)\n"
        "  s = s64[] subtract(m, z)\n  ROOT r = s64[] multiply(s, c)\n}\n"
        "ENTRY e {\n  a = s64[2,2] parameter(0)\n  b = s64[2,2] parameter(1)\n"
        "  c = s64[2,2] parameter(2)\n"
        "  ROOT m = s64[2,2] map(a, b, c), dimensions={0,1}, to_apply=f\n}\n");
  // Complex, and a scalar map.
  Check("HloModule m\nf {\n  x = c64[] parameter(0)\n  y = c64[] parameter(1)\n"
        "  ROOT r = c64[] multiply(x, y)\n}\n"
        "ENTRY e {\n  a = c64[5] parameter(0)\n  b = c64[5] parameter(1)\n"
        "  ROOT m = c64[5] map(a, b), dimensions={0}, to_apply=f\n}\n");
  Check("HloModule m\nf {\n  x = f64[] parameter(0)\n  m = f64[] multiply(x, x)\n"
        "  ROOT r = f64[] subtract(m, x)\n}\n"
        "ENTRY e {\n  a = f64[] parameter(0)\n  ROOT m = f64[] map(a), dimensions={}, "
        "to_apply=f\n}\n");
  // A multi-output fusion inside the mapped computation (XLA's
  // multioutput_fusion_test's MapMOF).
  Check("HloModule m\nfused {\n  p = f32[] parameter(0)\n  mul = f32[] multiply(p, p)\n"
        "  lt = pred[] compare(p, mul), direction=LT\n  ROOT t = (pred[], f32[]) tuple(lt, mul)\n}\n"
        "mapped {\n  p0 = f32[] parameter(0)\n"
        "  f = (pred[], f32[]) fusion(p0), kind=kLoop, calls=fused\n"
        "  g0 = pred[] get-tuple-element(f), index=0\n  g1 = f32[] get-tuple-element(f), index=1\n"
        "  z = f32[] constant(0)\n  ROOT s = f32[] select(g0, g1, z)\n}\n"
        "ENTRY e {\n  a = f32[33] parameter(0)\n"
        "  ROOT m = f32[33] map(a), dimensions={0}, to_apply=mapped\n}\n");
}

TEST_P(JitSmallOps, ReducePrecision) {
  struct Case {
    const char* type;
    int exponent, mantissa;
  };
  for (const Case& c : std::vector<Case>{{"f32", 5, 10}, {"f32", 8, 7}, {"f32", 4, 0},
                                         {"f32", 1, 0}, {"f32", 8, 23}, {"f32", 11, 30},
                                         {"f64", 5, 10}, {"f64", 8, 23}, {"f64", 11, 0},
                                         {"f64", 2, 51}, {"f16", 5, 2}, {"f16", 3, 4},
                                         {"f16", 2, 0}, {"bf16", 5, 3}, {"bf16", 8, 1}}) {
    CheckOne({absl::StrCat(c.type, "[67]")},
             absl::StrCat(c.type, "[67] reduce-precision(p0), exponent_bits=", c.exponent,
                          ", mantissa_bits=", c.mantissa));
  }
}

TEST_P(JitSmallOps, BitcastConvertWidths) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"f32[10]", "u8[10,4]"},        {"s8[10,4]", "f32[10]"},
      {"f64[3,2]", "s16[3,2,4]"},     {"u16[5,4]", "s64[5]"},
      {"f16[6]", "u8[6,2]"},          {"u8[7,2]", "bf16[7]"},
      {"u64[2]", "f32[2,2]"},         {"f32[3,2]", "f64[3]"},
      {"f32[10]", "u8[10,4]{0,1}"},   {"s8[10,4]{0,1}", "f32[10]"},
      {"f32[0]", "s8[0,4]"},          {"s32[1,1]", "u16[1,1,2]"},
      {"pred[64]", "s64[]"},          {"pred[2,32]", "f32[2]"},
      {"pred[3,32]", "u32[3]"},        {"s32[3]", "pred[3,32]"},
  };
  for (const auto& [in, out] : cases) CheckOne({in}, absl::StrCat(out, " bitcast-convert(p0)"));
}

INSTANTIATE_TEST_SUITE_P(Isas, JitSmallOps, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
