// Every operation the kernel emitter compiles, against the evaluator, on
// every instruction set the host supports: element types, shapes with size-0
// and size-1 dimensions and odd sizes (vector tails), non-default layouts,
// and arguments rich in NaN, infinities, -0 and integer extremes. Each case
// must compile to kernels only (no interpreted step).
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"
#if defined(__x86_64__)
#include "jit/x64/x64_lowering.h"
#endif

namespace xjit::jit::testing {
namespace {

// Dimension strings (with layouts) covering scalars, empty arrays, size-1
// dimensions, vector tails and non-default layouts.
const std::vector<std::string>& Dims() {
  static const std::vector<std::string> dims = {
      "[]", "[0]", "[1]", "[7]", "[19]", "[3,5]{0,1}", "[2,1,9]{1,0,2}", "[4,33]", "[0,3]"};
  return dims;
}

class JitOps : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const std::string& hlo, bool vectorized = false, int ulp_tolerance = 0) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.require_vectorized = vectorized;
      options.ulp_tolerance = ulp_tolerance;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
    }
  }
};

const char* kFloatTypes[] = {"f32", "f64", "f16", "bf16"};
const char* kIntTypes[] = {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "s4", "u2"};

TEST_P(JitOps, FloatUnary) {
  for (const char* t : kFloatTypes) {
    for (const std::string& d : Dims()) {
      const std::string s = absl::StrCat(t, d);
      for (const char* op : {"abs", "negate", "sqrt", "floor", "ceil", "round-nearest-even",
                             "round-nearest-afz", "sign"}) {
        Check(OneOp({s}, absl::StrCat(s, " ", op, "(p0)")));
      }
      Check(OneOp({s}, absl::StrCat("pred", d, " is-finite(p0)")));
    }
  }
}

// The vector math functions (jit/kernel/vector_math.h), within the stated ulp of
// the evaluator (tests/jit/jit_math_accuracy_test.cc measures them over the
// whole range). sin, cos and tan get their arguments clamped to +-1000,
// inside the range where their reduction is accurate.
TEST_P(JitOps, MathFunctions) {
  for (const char* t : kFloatTypes) {
    const int tolerance = MathUlpTolerance(*ParseElementType(t));
    for (const char* d : {"[]", "[0]", "[7]", "[19]", "[3,5]{0,1}", "[4,33]"}) {
      const std::string s = absl::StrCat(t, d);
      for (const char* op : {"exponential", "exponential-minus-one", "log", "log-plus-one",
                             "tanh", "logistic", "erf", "cbrt", "rsqrt"}) {
        Check(OneOp({s}, absl::StrCat(s, " ", op, "(p0)")), false, tolerance);
      }
      for (const char* op : {"sine", "cosine", "tan"}) {
        const std::string clamp = absl::StrCat(
            "HloModule m\nENTRY e {\n  p0 = ", s, " parameter(0)\n  lo = ", t,
            "[] constant(-1000)\n  hi = ", t, "[] constant(1000)\n  c = ", s,
            " clamp(lo, p0, hi)\n  ROOT r = ", s, " ", op, "(c)\n}\n");
        Check(clamp, false, tolerance);
      }
      for (const char* op : {"atan2", "power"}) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")), false, tolerance);
      }
    }
    // Vectorised (f32/f64) with a tail, fused into one kernel.
    if (std::string(t) == "f32" || std::string(t) == "f64") {
      const std::string s = absl::StrCat(t, "[4,37]");
      Check(absl::StrCat("HloModule m\nf {\n  a = ", s, " parameter(0)\n  b = ", s,
                         " parameter(1)\n  m = ", s, " multiply(a, b)\n  ROOT t = ", s,
                         " tanh(m)\n}\nENTRY e {\n  p0 = ", s, " parameter(0)\n  p1 = ", s,
                         " parameter(1)\n  ROOT f = ", s,
                         " fusion(p0, p1), kind=kLoop, calls=f\n}\n"),
            true, tolerance);
    }
  }
}

TEST_P(JitOps, FloatBinary) {
  for (const char* t : kFloatTypes) {
    for (const std::string& d : Dims()) {
      const std::string s = absl::StrCat(t, d);
      for (const char* op :
           {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum"}) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
      }
    }
  }
}

TEST_P(JitOps, FloatCompareSelectClamp) {
  for (const char* t : kFloatTypes) {
    for (const std::string& d : Dims()) {
      const std::string s = absl::StrCat(t, d);
      const std::string p = absl::StrCat("pred", d);
      for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
        Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=", dir)));
        Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=", dir,
                                       ", type=TOTALORDER")));
      }
      Check(OneOp({p, s, s}, absl::StrCat(s, " select(p0, p1, p2)")));
      Check(OneOp({s, s, s}, absl::StrCat(s, " clamp(p0, p1, p2)")));
      Check(OneOp({absl::StrCat(t, "[]"), s, absl::StrCat(t, "[]")},
                absl::StrCat(s, " clamp(p0, p1, p2)")));
    }
  }
}

// Selects whose mask, true or false operand dies at the select, or lives on
// after it (AArch64 selects in place into an operand that dies there, with
// bsl, bit or bif; one that lives on must keep its value), and the fused
// multiply-adds of exp whose addends die or live on (fmla in place).
TEST_P(JitOps, SelectAndFmaOperandsThatLiveOn) {
  for (const char* t : {"f32", "f64", "s32", "u8"}) {
    for (const char* d : {"[19]", "[4,33]"}) {
      const std::string s = absl::StrCat(t, d);
      const std::string p = absl::StrCat("pred", d);
      const std::string m = absl::StrCat(p, " compare(p0, p1), direction=LT");
      // The mask dies; both values live on.
      Check(ModuleText({s, s}, {absl::StrCat("m = ", m),
                                absl::StrCat("x = ", s, " select(m, p0, p1)"),
                                absl::StrCat("y = ", s, " add(p0, p1)"),
                                absl::StrCat("r = ", s, " multiply(x, y)")}));
      // The mask lives on; then dies with both values at the second select.
      Check(ModuleText({s, s}, {absl::StrCat("m = ", m),
                                absl::StrCat("x = ", s, " select(m, p0, p1)"),
                                absl::StrCat("y = ", s, " select(m, p1, p0)"),
                                absl::StrCat("r = ", s, " subtract(x, y)")}));
      // Only the false value dies; only the true value dies.
      for (const char* order : {"select(m, p0, f)", "select(m, f, p0)"}) {
        Check(ModuleText({s, s}, {absl::StrCat("m = ", m),
                                  absl::StrCat("f = ", s, " multiply(p0, p1)"),
                                  absl::StrCat("x = ", s, " ", order),
                                  absl::StrCat("y = ", p, " compare(x, p1), direction=GT"),
                                  absl::StrCat("z = ", s, " select(y, x, p0)"),
                                  absl::StrCat("r = ", s, " add(z, p0)")}));
      }
    }
  }
  for (const char* t : {"f32", "f64"}) {
    // The expansions of exp and tanh: fmla addends and select masks that
    // die there, the argument and |x| that live on through both.
    for (const char* f : {"exponential", "tanh"}) {
      Check(OneOp({absl::StrCat(t, "[37]")}, absl::StrCat(t, "[37] ", f, "(p0)")),
            /*vectorized=*/true, MathUlpTolerance(*ParseElementType(t)));
    }
  }
}

TEST_P(JitOps, IntegerOps) {
  for (const char* t : kIntTypes) {
    for (const std::string& d : {std::string("[]"), std::string("[13]"), std::string("[3,4]{0,1}")}) {
      const std::string s = absl::StrCat(t, d);
      const std::string p = absl::StrCat("pred", d);
      for (const char* op : {"abs", "negate", "not", "sign", "count-leading-zeros", "popcnt"}) {
        const bool is_signed = t[0] == 's';
        if (!is_signed && (std::string(op) == "abs" || std::string(op) == "sign")) continue;
        Check(OneOp({s}, absl::StrCat(s, " ", op, "(p0)")));
      }
      for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                             "minimum", "and", "or", "xor", "shift-left",
                             "shift-right-arithmetic", "shift-right-logical"}) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")));
      }
      for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
        Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=", dir)));
      }
      Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=LT, type=UNSIGNED")));
      Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=GE, type=SIGNED")));
      Check(OneOp({p, s, s}, absl::StrCat(s, " select(p0, p1, p2)")));
      Check(OneOp({s, s, s}, absl::StrCat(s, " clamp(p0, p1, p2)")));
    }
  }
}

TEST_P(JitOps, Mulhi) {
  for (const char* t : {"s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"}) {
    const std::string s = absl::StrCat(t, "[11]");
    Check(OneOp({s, s}, absl::StrCat(s, " mulhi(p0, p1)")));
  }
}

TEST_P(JitOps, PredOps) {
  for (const std::string& d : {std::string("[]"), std::string("[21]")}) {
    const std::string p = absl::StrCat("pred", d);
    Check(OneOp({p}, absl::StrCat(p, " not(p0)")));
    for (const char* op : {"and", "or", "xor", "add", "multiply", "maximum", "minimum"}) {
      Check(OneOp({p, p}, absl::StrCat(p, " ", op, "(p0, p1)")));
    }
    for (const char* dir : {"EQ", "NE", "LT", "GE"}) {
      Check(OneOp({p, p}, absl::StrCat(p, " compare(p0, p1), direction=", dir)));
    }
    Check(OneOp({p, p, p}, absl::StrCat(p, " select(p0, p1, p2)")));
  }
}

TEST_P(JitOps, Convert) {
  const char* types[] = {"pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "s4",
                         "f16", "bf16", "f32", "f64"};
  for (const char* from : types) {
    for (const char* to : types) {
      Check(OneOp({absl::StrCat(from, "[23]")}, absl::StrCat(to, "[23] convert(p0)")));
    }
  }
}

TEST_P(JitOps, BitcastConvert) {
  const std::vector<std::pair<std::string, std::string>> pairs = {
      {"f32", "s32"}, {"s32", "f32"}, {"u32", "f32"}, {"f64", "s64"}, {"u64", "f64"},
      {"f16", "s16"}, {"u16", "f16"}, {"bf16", "u16"}, {"f16", "bf16"}, {"s8", "u8"}};
  for (const auto& [from, to] : pairs) {
    Check(OneOp({absl::StrCat(from, "[9]")}, absl::StrCat(to, "[9] bitcast-convert(p0)")));
  }
}

TEST_P(JitOps, Iota) {
  for (const char* t : {"s32", "u8", "s64", "f32", "f64", "f16", "bf16"}) {
    Check(OneOp({}, absl::StrCat(t, "[5,7] iota(), iota_dimension=1")));
    Check(OneOp({}, absl::StrCat(t, "[5,7]{0,1} iota(), iota_dimension=0")));
  }
}

TEST_P(JitOps, DataMovement) {
  for (const char* t : {"f32", "s8", "f16", "f64", "pred"}) {
    auto s = [&](const std::string& dims) { return absl::StrCat(t, dims); };
    Check(OneOp({s("[]")}, s("[3,5] broadcast(p0), dimensions={}")));
    Check(OneOp({s("[5]")}, s("[3,5]{0,1} broadcast(p0), dimensions={1}")));
    Check(OneOp({s("[3]")}, s("[3,1,9] broadcast(p0), dimensions={0}")));
    // A size-1 operand dimension repeats along a larger output dimension.
    Check(OneOp({s("[3,1]")}, s("[3,2,2] broadcast(p0), dimensions={0,2}")));
    Check(OneOp({s("[1,4]")}, s("[5,4]{0,1} broadcast(p0), dimensions={0,1}")));
    Check(OneOp({s("[3,5]")}, s("[5,3] transpose(p0), dimensions={1,0}")));
    Check(OneOp({s("[2,3,4]{0,2,1}")}, s("[4,2,3] transpose(p0), dimensions={2,0,1}")));
    Check(OneOp({s("[6,4]")}, s("[4,3,2] reshape(p0)")));
    Check(OneOp({s("[2,3,5]{0,1,2}")}, s("[30] reshape(p0)")));
    Check(OneOp({s("[30]")}, s("[5,6]{0,1} reshape(p0)")));
    Check(OneOp({s("[10,9]")}, s("[3,4] slice(p0), slice={[1:10:3], [0:8:2]}")));
    Check(OneOp({s("[17]")}, s("[13] slice(p0), slice={[2:15]}")));
    Check(OneOp({s("[4,5]"), s("[]")}, s("[7,6] pad(p0, p1), padding=1_2x0_1")));
    Check(OneOp({s("[4,5]"), s("[]")}, s("[2,14] pad(p0, p1), padding=-1_-1x1_0_2")));
    Check(OneOp({s("[3]"), s("[]")}, s("[9] pad(p0, p1), padding=0_0_3")));
    Check(OneOp({s("[0]"), s("[]")}, s("[4] pad(p0, p1), padding=2_2")));
    Check(OneOp({s("[2,3]"), s("[2,0]"), s("[2,5]")},
              s("[2,8] concatenate(p0, p1, p2), dimensions={1}")));
    Check(OneOp({s("[1,4]"), s("[3,4]{0,1}")}, s("[4,4] concatenate(p0, p1), dimensions={0}")));
    Check(OneOp({s("[4,6]{0,1}")}, s("[4,6] reverse(p0), dimensions={0,1}")));
    Check(OneOp({s("[9]")}, s("[9] reverse(p0), dimensions={0}")));
    Check(OneOp({s("[3,5]")}, s("[3,5]{0,1} copy(p0)")));
  }
}

TEST_P(JitOps, DynamicSlices) {
  for (const char* t : {"f32", "s16", "bf16"}) {
    auto s = [&](const std::string& dims) { return absl::StrCat(t, dims); };
    for (const char* index_type : {"s32", "u8", "s64", "u64"}) {
      const std::string i = absl::StrCat(index_type, "[]");
      Check(OneOp({s("[7,9]"), i, i},
                  s("[3,4] dynamic-slice(p0, p1, p2), dynamic_slice_sizes={3,4}")));
      Check(OneOp({s("[7,9]{0,1}"), s("[2,5]"), i, i},
                s("[7,9]{0,1} dynamic-update-slice(p0, p1, p2, p3)")));
    }
  }
}

// Gather (clamped starts, collapsed and offset dimensions, a trailing
// implicit index vector, batching dimensions) and replica-id, which a
// single-replica executable computes as 0.
TEST_P(JitOps, GatherAndReplicaId) {
  for (const char* t : {"f32", "s8", "c64"}) {
    auto s = [&](const std::string& dims) { return absl::StrCat(t, dims); };
    for (const char* index_type : {"s32", "u8", "s64", "u64"}) {
      auto i = [&](const std::string& dims) { return absl::StrCat(index_type, dims); };
      Check(OneOp({s("[5,4]"), i("[3,2]")},
                s("[3,2,3] gather(p0, p1), offset_dims={1,2}, collapsed_slice_dims={}, "
                  "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}")));
      Check(OneOp({s("[7,3]{0,1}"), i("[4]")},
                s("[4,3] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}")));
      Check(OneOp({s("[6]"), i("[2,3]")},
                s("[2,3] gather(p0, p1), offset_dims={}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=2, slice_sizes={1}")));
      Check(OneOp({s("[3,8]"), i("[3,1]")},
                s("[3,2] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={}, "
                  "start_index_map={1}, index_vector_dim=1, slice_sizes={1,2}, "
                  "operand_batching_dims={0}, start_indices_batching_dims={0}")));
      Check(OneOp({s("[0,4]"), i("[0,1]")},
                s("[0,4] gather(p0, p1), offset_dims={1}, collapsed_slice_dims={0}, "
                  "start_index_map={0}, index_vector_dim=1, slice_sizes={0,4}")));
    }
  }
  Check(OneOp({}, "c64[3,70]{0,1} iota(), iota_dimension=1"));
  Check(OneOp({}, "c128[5] iota(), iota_dimension=0"));
  Check(OneOp({}, "u32[] replica-id()"));
  Check(OneOp({}, "u32[] partition-id()"));
}

// reduce-window: strides, padding (also negative), base and window
// dilation, reversal, size-0 and size-1 windows, non-identity init values
// (padding contributes the init value), variadic windows, any layout.
TEST_P(JitOps, ReduceWindow) {
  const std::string add_f32 = "add_f32 {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                              "  ROOT r = f32[] add(a, b)\n}\n";
  const std::string max_s8 = "max_s8 {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n"
                             "  ROOT r = s8[] maximum(a, b)\n}\n";
  const std::string argmax =
      "argmax {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n"
      "  b = f32[] parameter(2)\n  j = s32[] parameter(3)\n"
      "  ge = pred[] compare(a, b), direction=GE\n"
      "  m = f32[] select(ge, a, b)\n  k = s32[] select(ge, i, j)\n"
      "  ROOT r = (f32[], s32[]) tuple(m, k)\n}\n";
  auto with = [](const std::string& computation, const std::string& module) {
    return absl::StrReplaceAll(module, {{"HloModule m\n", "HloModule m\n" + computation}});
  };
  const std::pair<const char*, const char*> cases[] = {
      {"[4,5]", "size=3x2 stride=2x1 pad=1_1x0_1"},
      {"[13,2]", "size=2x3 stride=1x2 pad=-1_2x1_0 lhs_dilate=2x1"},
      {"[7,5]", "size=3x1 pad=2_2x0_0 rhs_dilate=2x1"},
      {"[7,5]", "size=1x1"},
      {"[7,5]{0,1}", "size=2x2 pad=1_0x0_1 rhs_reversal=1x0"},
  };
  for (const auto& [result, window] : cases) {
    const std::string attrs = absl::StrCat("window={", window, "}");
    Check(with(add_f32, OneOp({"f32[7,5]{0,1}", "f32[]"},
                            absl::StrCat("f32", result, " reduce-window(p0, p1), ", attrs,
                                         ", to_apply=add_f32"))));
    Check(with(max_s8, OneOp({"s8[7,5]", "s8[]"},
                           absl::StrCat("s8", result, " reduce-window(p0, p1), ", attrs,
                                        ", to_apply=max_s8"))));
    Check(with(argmax, OneOp({"f32[7,5]", "s32[7,5]", "f32[]", "s32[]"},
                           absl::StrCat("(f32", result, ", s32", result,
                                        ") reduce-window(p0, p1, p2, p3), ", attrs,
                                        ", to_apply=argmax"))));
  }
  // Empty operand: every window is padding.
  Check(with(add_f32, OneOp({"f32[0,3]", "f32[]"},
                          "f32[2,3] reduce-window(p0, p1), window={size=1x1 pad=1_1x0_0}, "
                          "to_apply=add_f32")));
}

// Cumulative reduce-windows (JAX's cumsum, cumprod, cummax, cummin) run as a
// one-pass scan (runtime/scan/cumulative.h), which must give the
// evaluator's bits: along the minor, a middle and the major dimension, a
// single row (scanned in place, no transposed blocks), in
// non-default layouts, every reducer the scan takes, float types that round
// each step, integers that wrap, identity inits (constants) and random ones
// (a parameter: rarely a fixed point, then every window is folded whole).
// Not per ISA: the scan is C++, the same on every one.
TEST(JitCumulative, ReduceWindowEqualsTheEvaluator) {
  struct Case {
    const char* type;
    const char* op;
    const char* identity;
  };
  const Case cases[] = {
      {"f32", "add", "0"},          {"f32", "maximum", "-inf"}, {"f64", "multiply", "1"},
      {"bf16", "add", "0"},         {"f16", "minimum", "inf"},  {"s32", "add", "0"},
      {"u8", "multiply", "1"},      {"s64", "maximum", "-9223372036854775808"},
      {"u16", "or", "0"},           {"pred", "and", "true"},
  };
  struct Geometry {
    const char* dims;
    const char* window;
    // 300 long: the evaluator folds each window whole, O(n^2) reducer calls
    // (and so does the scan with a random init), which under the sanitizers
    // cost ~2 minutes for three seeds of both inits; so one seed, identity
    // init only (the in-place path it is here for).
    bool large = false;
  };
  const Geometry shapes[] = {
      {"[4,37]", "size=1x37 pad=0_0x36_0"},
      {"[4,37]{0,1}", "size=1x37 pad=0_0x36_0"},
      {"[19,3]", "size=19x1 pad=18_0x0_0"},
      {"[6,37]", "size=6x1 pad=5_0x0_0"},  // Rows of 37: vector bodies and a tail.
      {"[3,5,2]{2,0,1}", "size=1x5x1 pad=0_0x4_0x0_0"},
      {"[2]", "size=2 pad=1_0"},
      {"[300]", "size=300 pad=299_0", true},  // One row: scanned where it lies.
  };
  for (const Case& c : cases) {
    const std::string reducer =
        absl::StrCat("HloModule m\nr {\n  a = ", c.type, "[] parameter(0)\n  b = ", c.type,
                     "[] parameter(1)\n  ROOT c = ", c.type, "[] ", c.op, "(a, b)\n}\n");
    for (const auto& [dims, window, large] : shapes) {
      const std::string shape = absl::StrCat(c.type, dims);
      const std::string with_constant = absl::StrCat(
          reducer, "ENTRY e {\n  x = ", shape, " parameter(0)\n  i = ", c.type, "[] constant(",
          c.identity, ")\n  ROOT w = ", shape, " reduce-window(x, i), window={", window,
          "}, to_apply=r\n}\n");
      const std::string with_parameter = absl::StrCat(
          reducer, "ENTRY e {\n  x = ", shape, " parameter(0)\n  i = ", c.type,
          "[] parameter(1)\n  ROOT w = ", shape, " reduce-window(x, i), window={", window,
          "}, to_apply=r\n}\n");
      for (uint64_t seed = 1; seed <= (large ? 1 : 3); ++seed) {
        CompileReport report;
        CheckOptions options;
        options.seed = seed;
        options.report = &report;
        EXPECT_TRUE(MatchesEvaluator(with_constant, options)) << with_constant;
        ASSERT_EQ(report.library_calls.size(), 1u) << with_constant;
        EXPECT_EQ(report.library_calls[0].routine, "cumulative reduce-window");
        if (!large) {
          EXPECT_TRUE(MatchesEvaluator(with_parameter, options)) << with_parameter;
        }
      }
    }
  }
}

// scatter: windows of updates applied in order (indices repeat: the random
// arguments are rich in 0, 1 and -1), out-of-bounds windows skipped,
// implicit index vectors, batching dimensions, any layout and index type.
TEST_P(JitOps, Scatter) {
  for (const char* t : {"f32", "s16", "c64"}) {
    const std::string combiners = absl::StrCat(
        "add {\n  a = ", t, "[] parameter(0)\n  b = ", t, "[] parameter(1)\n",
        "  ROOT r = ", t, "[] add(a, b)\n}\n",
        "second {\n  a = ", t, "[] parameter(0)\n  ROOT b = ", t, "[] parameter(1)\n}\n");
    auto s = [&](const std::string& dims) { return absl::StrCat(t, dims); };
    auto with = [&](const std::string& module) {
      return absl::StrReplaceAll(module, {{"HloModule m\n", "HloModule m\n" + combiners}});
    };
    for (const char* index_type : {"s32", "u8", "u64"}) {
      auto i = [&](const std::string& dims) { return absl::StrCat(index_type, dims); };
      for (const char* combiner : {"add", "second"}) {
        const std::string apply = absl::StrCat(", to_apply=", combiner);
        Check(with(OneOp({s("[6,4]{0,1}"), i("[3,1]"), s("[3,2,4]")},
                       s("[6,4]{0,1} scatter(p0, p1, p2), update_window_dims={1,2}, "
                         "inserted_window_dims={}, scatter_dims_to_operand_dims={0}, "
                         "index_vector_dim=1" + apply))));
        Check(with(OneOp({s("[9]"), i("[5]"), s("[5]")},
                       s("[9] scatter(p0, p1, p2), update_window_dims={}, "
                         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                         "index_vector_dim=1" + apply))));
        Check(with(OneOp({s("[5,7]"), i("[2,2]"), s("[2,3,2]")},
                       s("[5,7] scatter(p0, p1, p2), update_window_dims={1,2}, "
                         "inserted_window_dims={}, scatter_dims_to_operand_dims={1,0}, "
                         "index_vector_dim=1" + apply))));
        Check(with(OneOp({s("[3,8]"), i("[3,1]"), s("[3,2]")},
                       s("[3,8] scatter(p0, p1, p2), update_window_dims={1}, "
                         "inserted_window_dims={}, scatter_dims_to_operand_dims={1}, "
                         "index_vector_dim=1, input_batching_dims={0}, "
                         "scatter_indices_batching_dims={0}" + apply))));
        Check(with(OneOp({s("[4]"), i("[0,1]"), s("[0]")},
                       s("[4] scatter(p0, p1, p2), update_window_dims={}, "
                         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                         "index_vector_dim=1" + apply))));
      }
    }
  }
}

// A scatter fusion (passes/fuse.cc, rule 6): the updates are gathered rows
// times broadcast weights, computed inside the scatter's kernel (one kernel
// for the scatter, none for its updates); rows of every length around the
// vector width (tails), an empty update, integer and f64 sums; indices rich
// in repeats and out-of-bounds values. `start` is a computed value that dies
// at the scatter, so the output is written over it (allocate_buffers.cc),
// unless the gather reads `start` too: then the scatter must not update in
// place what its own updates still read (`reads_start`).
TEST_P(JitOps, ScatterFusion) {
  for (const char* t : {"f32", "f64", "s32"}) {
    for (int row : {1, 5, 16, 17, 0}) {
      for (bool reads_start : {false, true}) {
        const std::string r = absl::StrCat(row);
        const std::string source = reads_start ? "start" : "p0";
        const std::string hlo = absl::StrCat(
            "HloModule m\nadd {\n  x = ", t, "[] parameter(0)\n  y = ", t, "[] parameter(1)\n",
            "  ROOT s = ", t, "[] add(x, y)\n}\n",
            "ENTRY e {\n  p0 = ", t, "[9,", r, "] parameter(0)\n  p1 = s32[7,1] parameter(1)\n",
            "  p2 = ", t, "[7] parameter(2)\n  p3 = s32[7,1] parameter(3)\n",
            "  p4 = ", t, "[9,", r, "] parameter(4)\n",
            "  start = ", t, "[9,", r, "] add(p0, p4)\n",
            "  rows = ", t, "[7,", r, "] gather(", source, ", p1), offset_dims={1}, ",
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,", r,
            "}\n  wb = ", t, "[7,", r, "] broadcast(p2), dimensions={0}\n",
            "  scaled = ", t, "[7,", r, "] multiply(rows, wb)\n",
            "  ROOT s = ", t, "[9,", r, "] scatter(start, p3, scaled), update_window_dims={1}, ",
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, ",
            "to_apply=add\n}\n");
        CompileReport report;
        for (uint64_t seed = 1; seed <= 3; ++seed) {
          CheckOptions options;
          options.isa = GetParam();
          options.seed = seed;
          options.report = &report;
          EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
        }
        // start, then the scatter fusion (empty arrays need no kernel)
        EXPECT_EQ(report.kernels.size(), row == 0 ? 0u : 2u) << hlo;
      }
    }
  }
}

// An embedding bag's scatter fusion: rows gathered by index, masked by a
// per-row pred (ids in range) and scaled by a per-row weight, added at
// another index. The mask and weight are the same along a row, so the x86-64
// vector loop computes their lanes once per row (PlanDerivedInvariants);
// duplicate and out-of-range indices (the random s32 data is rich in 0, 1,
// -1 and extremes) and NaN/Inf/-0 rows and weights as the evaluator.
TEST_P(JitOps, ScatterFusionMaskedRows) {
  for (const char* t : {"f32", "f64", "s32"}) {
    for (int row : {1, 5, 17, 64, 67, 0}) {
      const std::string r = absl::StrCat(row);
      const std::string fill = std::string(t) == "s32" ? "7" : "nan";
      const std::string hlo = absl::StrCat(
          "HloModule m\nadd {\n  x = ", t, "[] parameter(0)\n  y = ", t, "[] parameter(1)\n",
          "  ROOT s = ", t, "[] add(x, y)\n}\n",
          "ENTRY e {\n  p0 = ", t, "[9,", r, "] parameter(0)\n  p1 = s32[7,1] parameter(1)\n",
          "  p2 = ", t, "[7] parameter(2)\n  p3 = s32[7,1] parameter(3)\n",
          "  p4 = ", t, "[5,", r, "] parameter(4)\n  valid = pred[7] parameter(5)\n",
          "  rows = ", t, "[7,", r, "] gather(p4, p1), offset_dims={1}, ",
          "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,", r,
          "}\n  vb = pred[7,", r, "] broadcast(valid), dimensions={0}\n",
          "  c = ", t, "[] constant(", fill, ")\n  cb = ", t, "[7,", r, "] broadcast(c), dimensions={}\n",
          "  masked = ", t, "[7,", r, "] select(vb, rows, cb)\n",
          "  wb = ", t, "[7,", r, "] broadcast(p2), dimensions={0}\n",
          "  scaled = ", t, "[7,", r, "] multiply(masked, wb)\n",
          "  ROOT s = ", t, "[9,", r, "] scatter(p0, p3, scaled), update_window_dims={1}, ",
          "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, ",
          "to_apply=add\n}\n");
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
      }
    }
  }
}

// A graph network's degree histogram: ones scatter-added at indices that are
// a concatenate of edge ends and node ids, wrapped as JAX wraps negative
// indices (select of a compare), into int[n]; the scatter's bounds check is
// one compare of the clamped start (RunScatter) and the integer compares
// feeding only selects are one cmp + cmov in x86-64 scalar code
// (PlanCmovCompares). Index types signed and unsigned (unsigned compares),
// indices rich in duplicates and out-of-range values, and a 2-D scatter of
// windows whose starts are checked in two dimensions.
TEST_P(JitOps, ScatterHistogramOfWrappedIndices) {
  for (const char* t : {"s32", "u32", "s8", "s64", "f32"}) {
    for (const char* it : {"s32", "u16", "s64"}) {
      for (int n : {1, 7, 64}) {
        const std::string hlo = absl::StrCat(
            "HloModule m\nadd {\n  x = ", t, "[] parameter(0)\n  y = ", t,
            "[] parameter(1)\n  ROOT s = ", t, "[] add(x, y)\n}\n",
            "ENTRY e {\n  p0 = ", it, "[37] parameter(0)\n",
            "  io = ", it, "[", n, "] iota(), iota_dimension=0\n",
            "  cat = ", it, "[", 37 + n, "] concatenate(p0, io), dimensions={0}\n",
            "  z = ", it, "[] constant(0)\n  zb = ", it, "[", 37 + n, "] broadcast(z), dimensions={}\n",
            "  neg = pred[", 37 + n, "] compare(cat, zb), direction=LT\n",
            "  m = ", it, "[] constant(", n, ")\n  mb = ", it, "[", 37 + n, "] broadcast(m), dimensions={}\n",
            "  wrapped = ", it, "[", 37 + n, "] add(cat, mb)\n",
            "  idx = ", it, "[", 37 + n, "] select(neg, wrapped, cat)\n",
            "  i2 = ", it, "[", 37 + n, ",1] reshape(idx)\n",
            "  one = ", t, "[] constant(1)\n  ones = ", t, "[", 37 + n, "] broadcast(one), dimensions={}\n",
            "  zero = ", t, "[] constant(0)\n  start = ", t, "[", n, "] broadcast(zero), dimensions={}\n",
            "  ROOT h = ", t, "[", n, "] scatter(start, i2, ones), update_window_dims={}, ",
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, ",
            "to_apply=add\n}\n");
        Check(hlo);
      }
    }
    // Windows of 2x3 at starts checked in both dimensions.
    const std::string two_d = absl::StrCat(
        "HloModule m\nadd {\n  x = ", t, "[] parameter(0)\n  y = ", t,
        "[] parameter(1)\n  ROOT s = ", t, "[] add(x, y)\n}\n",
        "ENTRY e {\n  p0 = ", t, "[5,6] parameter(0)\n  p1 = s32[11,2] parameter(1)\n",
        "  p2 = ", t, "[11,2,3] parameter(2)\n",
        "  ROOT s = ", t, "[5,6] scatter(p0, p1, p2), update_window_dims={1,2}, ",
        "inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, ",
        "to_apply=add\n}\n");
    Check(two_d);
  }
}

// Integer compares whose only users are selects (one cmp + cmov in x86-64
// scalar code), every direction, signed and unsigned types and compare
// types, a compare also read as a value (not folded), selects of pred, and
// a select that reads its own predicate as a value operand.
TEST_P(JitOps, CompareFeedingSelects) {
  for (const char* t : {"s8", "s32", "s64", "u8", "u32", "u64", "pred"}) {
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      for (const char* d : {"[]", "[7]", "[3,5]{0,1}"}) {
        const std::string s = absl::StrCat(t, d);
        const std::string p = absl::StrCat("pred", d);
        const std::string v = absl::StrCat("s16", d);
        const std::string hlo = absl::StrCat(
            "HloModule m\nENTRY e {\n  a = ", s, " parameter(0)\n  b = ", s, " parameter(1)\n",
            "  x = ", v, " parameter(2)\n  y = ", v, " parameter(3)\n",
            "  c = ", p, " compare(a, b), direction=", dir, "\n",
            "  s1 = ", v, " select(c, x, y)\n  s2 = ", s, " select(c, b, a)\n",
            "  c2 = ", p, " compare(b, a), direction=", dir, "\n",
            "  s3 = ", p, " select(c2, c2, c)\n",
            "  n = ", v, " convert(c2)\n  s4 = ", v, " add(s1, n)\n",
            "  ROOT r = (", v, ", ", s, ", ", p, ") tuple(s4, s2, s3)\n}\n");
        Check(hlo);
        if (std::string(t) == "pred") continue;
        // The signed order over unsigned bits and the reverse.
        const char* type = absl::StartsWith(t, "u") ? "SIGNED" : "UNSIGNED";
        const std::string typed = absl::StrCat(
            "HloModule m\nENTRY e {\n  a = ", s, " parameter(0)\n  b = ", s, " parameter(1)\n",
            "  c = ", p, " compare(a, b), direction=", dir, ", type=", type, "\n",
            "  ROOT s = ", s, " select(c, a, b)\n}\n");
        Check(typed);
      }
    }
  }
}

#if defined(__x86_64__)
// Rows read at positions loaded from an index buffer (an embedding bag's
// gathered rows, a scatter's target rows) are prefetched rows ahead
// (PlanGatherPrefetches): the loop over rows computes the row bases of a
// later row with its own index operations, clamped to the last row. Forced
// here for buffers of any size (StreamAllRowsForTesting), so the evaluator
// checks the kernels that carry them: gathers and scatters of rows of 1 to
// 67 elements, 1 to 40 rows (fewer and more rows than the distance),
// duplicate and out-of-range indices, f32/f64/s32, on every instruction
// set; on each the assembly must contain the prefetches.
TEST_P(JitOps, GatherAndScatterRowsPrefetched) {
  x64::StreamAllRowsForTesting(true);
  for (const char* t : {"f32", "f64", "s32"}) {
    for (int row : {1, 16, 67}) {
      for (int rows : {1, 7, 40}) {
        const std::string r = absl::StrCat(row);
        const std::string n = absl::StrCat(rows);
        const std::string gather = absl::StrCat(
            "HloModule m\nENTRY e {\n  p0 = ", t, "[11,", r, "] parameter(0)\n",
            "  p1 = s32[", n, ",1] parameter(1)\n  p2 = ", t, "[", n, ",", r, "] parameter(2)\n",
            "  g = ", t, "[", n, ",", r, "] gather(p0, p1), offset_dims={1}, ",
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,", r,
            "}\n  ROOT s = ", t, "[", n, ",", r, "] add(g, p2)\n}\n");
        const std::string scatter = absl::StrCat(
            "HloModule m\nadd {\n  x = ", t, "[] parameter(0)\n  y = ", t, "[] parameter(1)\n",
            "  ROOT s = ", t, "[] add(x, y)\n}\n",
            "ENTRY e {\n  p0 = ", t, "[9,", r, "] parameter(0)\n  p1 = s32[", n, ",1] parameter(1)\n",
            "  p2 = ", t, "[11,", r, "] parameter(2)\n  p3 = s32[", n, ",1] parameter(3)\n",
            "  rows = ", t, "[", n, ",", r, "] gather(p2, p1), offset_dims={1}, ",
            "collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,", r,
            "}\n  ROOT s = ", t, "[9,", r, "] scatter(p0, p3, rows), update_window_dims={1}, ",
            "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, ",
            "to_apply=add\n}\n");
        for (const std::string& hlo : {gather, scatter}) {
          CompileReport report;
          for (uint64_t seed = 1; seed <= 2; ++seed) {
            CheckOptions options;
            options.isa = GetParam();
            options.seed = seed;
            options.cache = false;
            options.collect_asm = true;
            options.report = &report;
            EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
          }
          bool prefetched = false;
          for (const KernelInfo& kernel : report.kernels) {
            prefetched = prefetched || absl::StrContains(kernel.asm_text, "prefetcht0");
          }
          // Rows of one element, or one row, leave no loop over rows.
          if (row > 1 && rows > 1) {
            EXPECT_TRUE(prefetched) << hlo;
          }
        }
      }
    }
  }
  x64::StreamAllRowsForTesting(false);
}
#endif

// Variadic scatter: N operands and N updates, one update computation over
// all of them, a tuple of N results, as one kernel with N outputs. Windows
// apply in order, out-of-bounds ones are skipped (the random indices are
// rich in 0, 1, -1 and extremes); operands may be one value twice; types
// may differ between the operands; the computation may mix them (an
// argmax-like pair keeps the index of the larger value).
TEST_P(JitOps, VariadicScatter) {
  const std::string computations =
      "second2 {\n  a0 = s32[] parameter(0)\n  a1 = f32[] parameter(1)\n"
      "  b0 = s32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
      "  ROOT t = (s32[], f32[]) tuple(b0, b1)\n}\n"
      "add2 {\n  a0 = s32[] parameter(0)\n  a1 = f32[] parameter(1)\n"
      "  b0 = s32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
      "  s0 = s32[] add(a0, b0)\n  s1 = f32[] add(a1, b1)\n"
      "  ROOT t = (s32[], f32[]) tuple(s0, s1)\n}\n"
      "argmax {\n  a0 = s32[] parameter(0)\n  a1 = f32[] parameter(1)\n"
      "  b0 = s32[] parameter(2)\n  b1 = f32[] parameter(3)\n"
      "  gt = pred[] compare(b1, a1), direction=GT\n"
      "  i = s32[] select(gt, b0, a0)\n  v = f32[] select(gt, b1, a1)\n"
      "  ROOT t = (s32[], f32[]) tuple(i, v)\n}\n"
      "mix3 {\n  a0 = f16[] parameter(0)\n  a1 = f16[] parameter(1)\n"
      "  a2 = u8[] parameter(2)\n  b0 = f16[] parameter(3)\n  b1 = f16[] parameter(4)\n"
      "  b2 = u8[] parameter(5)\n  m = f16[] multiply(a0, b1)\n  n = f16[] maximum(a1, b0)\n"
      "  x = u8[] xor(a2, b2)\n  ROOT t = (f16[], f16[], u8[]) tuple(m, n, x)\n}\n";
  auto with = [&](const std::string& module) {
    return absl::StrReplaceAll(module, {{"HloModule m\n", "HloModule m\n" + computations}});
  };
  for (const char* combiner : {"second2", "add2", "argmax"}) {
    const std::string apply = absl::StrCat(", to_apply=", combiner);
    // The corpus's form (scatter_test.cc): windows along the last dimension.
    Check(with(OneOp({"s32[3,3,2]", "f32[3,3,2]", "s32[2,2]", "s32[2,2]", "f32[2,2]"},
                     "(s32[3,3,2], f32[3,3,2]) scatter(p0, p1, p2, p3, p4), "
                     "update_window_dims={1}, inserted_window_dims={0,1}, "
                     "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1" + apply)));
    Check(with(OneOp({"s32[9]", "f32[9]", "s32[6]", "s32[6]", "f32[6]"},
                     "(s32[9], f32[9]) scatter(p0, p1, p2, p3, p4), update_window_dims={}, "
                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                     "index_vector_dim=1" + apply)));
    Check(with(OneOp({"s32[6,4]{0,1}", "f32[6,4]{0,1}", "u8[3,1]", "s32[3,2,4]", "f32[3,2,4]"},
                     "(s32[6,4]{0,1}, f32[6,4]{0,1}) scatter(p0, p1, p2, p3, p4), "
                     "update_window_dims={1,2}, inserted_window_dims={}, "
                     "scatter_dims_to_operand_dims={0}, index_vector_dim=1" + apply)));
    Check(with(OneOp({"s32[3,8]", "f32[3,8]", "s64[3,1]", "s32[3,2]", "f32[3,2]"},
                     "(s32[3,8], f32[3,8]) scatter(p0, p1, p2, p3, p4), update_window_dims={1}, "
                     "inserted_window_dims={}, scatter_dims_to_operand_dims={1}, "
                     "index_vector_dim=1, input_batching_dims={0}, "
                     "scatter_indices_batching_dims={0}" + apply)));
    Check(with(OneOp({"s32[4]", "f32[4]", "s32[0,1]", "s32[0]", "f32[0]"},
                     "(s32[4], f32[4]) scatter(p0, p1, p2, p3, p4), update_window_dims={}, "
                     "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
                     "index_vector_dim=1" + apply)));
  }
  // One operand value twice (the corpus's second form), three operands of
  // different types.
  Check(with(ModuleText({"s32[3,3,2]", "s32[2,2]", "s32[2,2]", "s32[2,2]"},
                        {"c = f32[3,3,2] convert(p0)", "u = f32[2,2] convert(p3)",
                         "r = (s32[3,3,2], f32[3,3,2]) scatter(p0, c, p1, p2, u), "
                         "update_window_dims={1}, inserted_window_dims={0,1}, "
                         "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, "
                         "to_apply=add2"})));
  Check(with(OneOp({"f16[5,7]", "f16[5,7]", "u8[5,7]", "s32[4,2]", "f16[4]", "f16[4]", "u8[4]"},
                   "(f16[5,7], f16[5,7], u8[5,7]) scatter(p0, p1, p2, p3, p4, p5, p6), "
                   "update_window_dims={}, inserted_window_dims={0,1}, "
                   "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=mix3")));
}

// Multi-output loop fusions whose outputs have different dimensions run as
// one kernel per output (compile.cc, AddKernelPerOutput), with the pipeline
// on and off: a bitcast output beside its producer's (the corpus's
// multioutput_fusion_test), two dynamic-update-slices of different operands
// sharing one update (dynamic_ops_test), a reduce beside an elementwise
// output, and outputs of three shapes.
TEST_P(JitOps, MultiOutputFusionOfDifferentDimensions) {
  const std::vector<std::string> modules = {
      "HloModule m\nfused {\n  p = f32[4] parameter(0)\n  m = f32[4] multiply(p, p)\n"
      "  lt = pred[4] compare(p, m), direction=LT\n  b = pred[1,4] bitcast(lt)\n"
      "  ROOT t = (pred[1,4], f32[4]) tuple(b, m)\n}\n"
      "ENTRY e {\n  p0 = f32[4] parameter(0)\n"
      "  f = (pred[1,4], f32[4]) fusion(p0), kind=kLoop, calls=fused\n"
      "  g0 = pred[1,4] get-tuple-element(f), index=0\n  b0 = pred[4] bitcast(g0)\n"
      "  g1 = f32[4] get-tuple-element(f), index=1\n  c = f32[4] constant({0, 0, 0, 0})\n"
      "  ROOT s = f32[4] select(b0, g1, c)\n}\n",
      "HloModule m\nfused {\n  p0 = bf16[10,11,12] parameter(0)\n"
      "  p1 = bf16[1,11,12] parameter(1)\n  p2 = bf16[8,11,12] parameter(2)\n"
      "  p3 = bf16[1,11,12] parameter(3)\n  p4 = s32[] parameter(4)\n"
      "  c0 = s32[] constant(0)\n  cmp = pred[] compare(p4, c0), direction=EQ\n"
      "  b = pred[1,11,12] broadcast(cmp), dimensions={}\n"
      "  s = bf16[1,11,12] select(b, p1, p3)\n"
      "  d0 = bf16[10,11,12] dynamic-update-slice(p0, s, p4, c0, c0)\n"
      "  d1 = bf16[8,11,12] dynamic-update-slice(p2, s, c0, p4, c0)\n"
      "  ROOT t = (bf16[10,11,12], bf16[8,11,12]) tuple(d0, d1)\n}\n"
      "ENTRY e {\n  p0 = bf16[10,11,12] parameter(0)\n  p1 = bf16[1,11,12] parameter(1)\n"
      "  p2 = bf16[8,11,12] parameter(2)\n  p3 = bf16[1,11,12] parameter(3)\n"
      "  p4 = s32[] parameter(4)\n"
      "  ROOT f = (bf16[10,11,12], bf16[8,11,12]) fusion(p0, p1, p2, p3, p4), kind=kLoop, "
      "calls=fused\n}\n",
      "HloModule m\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT r = f32[] add(a, b)\n}\n"
      "fused {\n  p = f32[6,5] parameter(0)\n  q = f32[5] parameter(1)\n"
      "  e = f32[6,5] exponential(p)\n  z = f32[] constant(0)\n"
      "  r = f32[6] reduce(e, z), dimensions={1}, to_apply=add\n"
      "  n = f32[5] negate(q)\n  t3 = f32[3,2,5] reshape(e)\n"
      "  ROOT t = (f32[6], f32[5], f32[6,5], f32[3,2,5]) tuple(r, n, e, t3)\n}\n"
      "ENTRY e {\n  p0 = f32[6,5] parameter(0)\n  p1 = f32[5] parameter(1)\n"
      "  ROOT f = (f32[6], f32[5], f32[6,5], f32[3,2,5]) fusion(p0, p1), kind=kInput, "
      "calls=fused\n}\n",
  };
  for (const std::string& hlo : modules) {
    for (bool passes : {true, false}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        options.run_passes = passes;
        options.ulp_tolerance = MathUlpTolerance(ElementType::kF32);
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << "passes " << passes << "\n" << hlo;
      }
    }
  }
}

// Tiled layouts (TPU-style T(8,128), T(8,128)(2,1) for bf16, T(1024) for a
// vector) on parameters, results and inner values: the kernels see plain
// layouts, with relayout copies at their edges (passes/isolate_tiled_layouts.h).
// The corpus's form (test_utils_test.cc: a tuple parameter of tiled values,
// a gather, a tiled result) among them; shapes that are not whole tiles.
TEST_P(JitOps, TiledLayouts) {
  const std::vector<std::string> modules = {
      OneOp({"f32[10,300]{1,0:T(8,128)}", "f32[10,300]"},
            "f32[10,300]{1,0:T(8,128)} add(p0, p1)"),
      OneOp({"f32[10,300]{1,0:T(8,128)}"}, "f32[300,10]{1,0:T(8,128)} transpose(p0), "
                                           "dimensions={1,0}"),
      ModuleText({"bf16[17,130]{1,0:T(8,128)(2,1)}", "s32[5]{0:T(1024)}"},
                 {"c = bf16[17,130] convert(p0)", "n = bf16[17,130]{0,1:T(8,128)(2,1)} negate(c)",
                  "s = s32[5] multiply(p1, p1)",
                  "t = (bf16[17,130]{0,1:T(8,128)(2,1)}, s32[5]{0:T(1024)}) tuple(n, s)"}),
      "HloModule m\nENTRY e {\n"
      "  a = (s32[10]{0:T(1024)}, bf16[100,256]{1,0:T(8,128)(2,1)}) parameter(0)\n"
      "  t = bf16[100,256]{1,0:T(8,128)(2,1)} get-tuple-element(a), index=1\n"
      "  r = bf16[100,256]{1,0} reshape(t)\n"
      "  i = s32[10]{0:T(1024)} get-tuple-element(a), index=0\n"
      "  j = s32[10]{0} reshape(i)\n"
      "  g = bf16[10,256]{1,0} gather(r, j), offset_dims={1}, collapsed_slice_dims={0}, "
      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,256}\n"
      "  o = bf16[10,256]{1,0:T(8,128)(2,1)} reshape(g)\n"
      "  c = bf16[10,256]{1,0:T(8,128)(2,1)} copy(o)\n"
      "  ROOT u = (bf16[10,256]{1,0:T(8,128)(2,1)}) tuple(c)\n}\n",
  };
  for (const std::string& hlo : modules) {
    for (bool passes : {true, false}) {
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        options.run_passes = passes;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << "passes " << passes << "\n" << hlo;
      }
    }
  }
}

// A scatter whose result layout differs from its operand's: with the
// pipeline on, layout assignment copies the operand first; with it off, the
// scatter is an interpreted step (its kernel starts from the operand's
// bytes). Both match the evaluator.
TEST_P(JitOps, ScatterChangingLayout) {
  const std::string hlo =
      "HloModule m\nsecond {\n  a = f32[] parameter(0)\n  ROOT b = f32[] parameter(1)\n}\n"
      "ENTRY e {\n  p0 = f32[2,3]{0,1} parameter(0)\n  p1 = s32[1] parameter(1)\n"
      "  p2 = f32[1,1]{1,0} parameter(2)\n"
      "  ROOT s = f32[2,3]{1,0} scatter(p0, p1, p2), update_window_dims={0,1}, "
      "inserted_window_dims={}, scatter_dims_to_operand_dims={1}, index_vector_dim=0, "
      "to_apply=second\n}\n";
  for (bool passes : {true, false}) {
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      CheckOptions options;
      options.isa = GetParam();
      options.seed = seed;
      options.run_passes = passes;
      options.require_all_compiled = passes;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << "passes " << passes;
    }
  }
}

// negate and abs change the sign bit alone (XLA's fneg/fabs): NaN payloads,
// signalling ones included, survive; random integer bits reinterpreted as
// floats hit signalling NaNs, and the integer results compare bit for bit.
TEST_P(JitOps, NegateAbsKeepNanPayloads) {
  const std::pair<const char*, const char*> types[] = {
      {"f16", "u16"}, {"bf16", "u16"}, {"f32", "u32"}, {"f64", "u64"}};
  for (const auto& [f, u] : types) {
    for (const char* op : {"negate", "abs"}) {
      const std::string s = "[20000]";
      Check(absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", u, s, " parameter(0)\n  x = ", f, s,
                         " bitcast-convert(p0)\n  y = ", f, s, " ", op, "(x)\n  ROOT r = ", u,
                         s, " bitcast-convert(y)\n}\n"));
    }
  }
}

TEST_P(JitOps, VectorizedF32F64) {
  // Big enough for the vector loop; odd sizes for the tails.
  for (const char* t : {"f32", "f64"}) {
    for (const char* d : {"[64]", "[3,37]", "[37,5]{0,1}"}) {
      const std::string s = absl::StrCat(t, d);
      const std::string p = absl::StrCat("pred", d);
      for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        Check(OneOp({s, s}, absl::StrCat(s, " ", op, "(p0, p1)")), true);
      }
      for (const char* op : {"abs", "negate", "sqrt", "floor", "round-nearest-afz", "sign"}) {
        Check(OneOp({s}, absl::StrCat(s, " ", op, "(p0)")), true);
      }
      Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=LT")), true);
      Check(OneOp({s, s}, absl::StrCat(p, " compare(p0, p1), direction=NE")), true);
      Check(OneOp({p, s, s}, absl::StrCat(s, " select(p0, p1, p2)")), true);
      Check(OneOp({absl::StrCat(t, "[]"), s, absl::StrCat(t, "[]")},
                absl::StrCat(s, " clamp(p0, p1, p2)")), true);
      Check(OneOp({absl::StrCat(t, "[]")}, absl::StrCat(s, " broadcast(p0), dimensions={}")), true);
    }
  }
}

TEST_P(JitOps, LoopFusion) {
  // A fusion instruction written in the module becomes one kernel.
  Check(R"(HloModule m
fused {
  a = f32[6,5] parameter(0)
  b = f32[5] parameter(1)
  c = f32[] constant(0.5)
  bb = f32[6,5] broadcast(b), dimensions={1}
  cc = f32[6,5] broadcast(c), dimensions={}
  m = f32[6,5] multiply(a, bb)
  s = f32[6,5] add(m, cc)
  t = f32[5,6] transpose(s), dimensions={1,0}
  ROOT r = f32[5,6] maximum(t, t)
}
ENTRY e {
  p0 = f32[6,5] parameter(0)
  p1 = f32[5] parameter(1)
  ROOT f = f32[5,6] fusion(p0, p1), kind=kLoop, calls=fused
}
)");
}

INSTANTIATE_TEST_SUITE_P(Isas, JitOps, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
