// Untyped custom calls (runtime/host/custom_call_registry.h) in the forms
// that need more than the step's own buffers, compiled as library calls
// (jit/calls/custom_call.cc) and checked against the evaluator: operands passed
// in the layouts operand_layout_constraints= names (copied first), outputs
// that start as an operand's value (output_to_operand_aliasing=, the whole
// result or one tuple element), tuple and nested-tuple operands and
// results (tables of pointers). The targets read and write physical
// positions, so a wrong layout or a missing copy changes the result. With
// the pass pipeline on and off (off, nothing conforms the operands first).
// Also XLA's "TopK" custom call, which expand-topk turns into a sort, and
// an unregistered target: a library call that looks the target up when it
// runs (NOT_FOUND, as the evaluator, while it stays unregistered).
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "runtime/host/custom_call_registry.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr int kN = 12;

// out[i] = in0[i] * (i + 1) + in1[i], positions as stored.
extern "C" void XjitTestWeighted(void* out, void** in) {
  const float* a = static_cast<const float*>(in[0]);
  const float* b = static_cast<const float*>(in[1]);
  for (int i = 0; i < kN; ++i) static_cast<float*>(out)[i] = a[i] * (i + 1) + b[i];
}

// out[i] += in1[i] * i: out starts as an aliased operand.
extern "C" void XjitTestAccumulate(void* out, void** in) {
  const float* b = static_cast<const float*>(in[1]);
  for (int i = 0; i < kN; ++i) static_cast<float*>(out)[i] += b[i] * i;
}

// A tuple result (f32[12], s32[]) whose element 0 is aliased: element 0
// gets += in1[i]; element 1 the position of the largest element 0.
extern "C" void XjitTestAccumulateTuple(void* out, void** in) {
  void** table = static_cast<void**>(out);
  float* values = static_cast<float*>(table[0]);
  const float* b = static_cast<const float*>(in[1]);
  int32_t best = 0;
  for (int i = 0; i < kN; ++i) {
    values[i] += b[i];
    if (values[i] > values[best]) best = i;
  }
  *static_cast<int32_t*>(table[1]) = best;
}

// in[0] is a table (f32[12], (s32[12], f32[])); the result a nested tuple
// (f32[12], (s32[12])).
extern "C" void XjitTestNested(void* out, void** in) {
  void** operand = static_cast<void**>(in[0]);
  const float* a = static_cast<const float*>(operand[0]);
  void** inner = static_cast<void**>(operand[1]);
  const int32_t* b = static_cast<const int32_t*>(inner[0]);
  const float scale = *static_cast<const float*>(inner[1]);
  void** result = static_cast<void**>(out);
  float* x = static_cast<float*>(result[0]);
  int32_t* y = static_cast<int32_t*>(static_cast<void**>(result[1])[0]);
  for (int i = 0; i < kN; ++i) {
    x[i] = a[i] * scale + static_cast<float>(b[i] % 7);
    y[i] = b[kN - 1 - i] ^ i;
  }
}

class JitCustomCall : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    CustomCallRegistry::Global().Register("xjit_test_weighted", &XjitTestWeighted);
    CustomCallRegistry::Global().Register("xjit_test_accumulate", &XjitTestAccumulate);
    CustomCallRegistry::Global().Register("xjit_test_accumulate_tuple", &XjitTestAccumulateTuple);
    CustomCallRegistry::Global().Register("xjit_test_nested", &XjitTestNested);
  }
  static void TearDownTestSuite() {
    for (const char* name : {"xjit_test_weighted", "xjit_test_accumulate",
                             "xjit_test_accumulate_tuple", "xjit_test_nested"}) {
      CustomCallRegistry::Global().Unregister(name);
    }
  }

  // `without_passes`: also with the pass pipeline off.
  void Check(const std::string& hlo, bool without_passes = true) {
    for (bool passes : {true, false}) {
      if (!passes && !without_passes) continue;
      for (uint64_t seed = 1; seed <= 3; ++seed) {
        CheckOptions options;
        options.seed = seed;
        options.run_passes = passes;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << "passes " << passes << "\n" << hlo;
      }
    }
  }
};

TEST_F(JitCustomCall, OperandLayoutConstraints) {
  // Operand 0 is row-major, the target wants it column-major; operand 1 is
  // column-major and wanted row-major; the result's own layout is {0,1}.
  Check(OneOp({"f32[3,4]{1,0}", "f32[3,4]{0,1}"},
              "f32[3,4]{0,1} custom-call(p0, p1), custom_call_target=\"xjit_test_weighted\", "
              "operand_layout_constraints={f32[3,4]{0,1}, f32[3,4]{1,0}}"));
  // A constraint equal to the operand's layout: no copy.
  Check(OneOp({"f32[12]", "f32[12]"},
              "f32[12] custom-call(p0, p1), custom_call_target=\"xjit_test_weighted\", "
              "operand_layout_constraints={f32[12]{0}, f32[12]{0}}"));
}

TEST_F(JitCustomCall, OutputToOperandAliasing) {
  Check(OneOp({"f32[12]", "f32[12]"},
              "f32[12] custom-call(p0, p1), custom_call_target=\"xjit_test_accumulate\", "
              "output_to_operand_aliasing={{}: (0, {})}"));
  // The aliased operand is used again afterwards: the call must not change it.
  Check(ModuleText({"f32[12]", "f32[12]"},
                   {"c = f32[12] custom-call(p0, p1), custom_call_target=\"xjit_test_accumulate\", "
                    "output_to_operand_aliasing={{}: (0, {})}",
                    "r = f32[12] add(c, p0)"}));
  // An operand relaid by its constraint, then aliased to a result of yet
  // another layout.
  Check(OneOp({"f32[3,4]{1,0}", "f32[3,4]{1,0}"},
              "f32[3,4]{0,1} custom-call(p0, p1), custom_call_target=\"xjit_test_accumulate\", "
              "operand_layout_constraints={f32[3,4]{0,1}, f32[3,4]{1,0}}, "
              "output_to_operand_aliasing={{}: (0, {})}"));
  Check(OneOp({"f32[12]", "f32[12]"},
              "(f32[12], s32[]) custom-call(p0, p1), "
              "custom_call_target=\"xjit_test_accumulate_tuple\", "
              "output_to_operand_aliasing={{0}: (0, {})}"));
}

TEST_F(JitCustomCall, TupleOperandsAndNestedResults) {
  Check(ModuleText({"f32[12]", "s32[12]", "f32[]"},
                   {"i = (s32[12], f32[]) tuple(p1, p2)", "t = (f32[12], (s32[12], f32[])) tuple(p0, i)",
                    "r = (f32[12], (s32[12])) custom-call(t), "
                    "custom_call_target=\"xjit_test_nested\""}));
}

// XLA's top-k custom call: k from the result, largest first, indices s32
// (expand-topk makes it a compiled sort, so only with the pipeline on).
TEST_F(JitCustomCall, TopK) {
  for (const std::string type : {"f32", "bf16", "s32", "u8"}) {
    Check(OneOp({type + "[10,10]"}, "(" + type + "[10,3], s32[10,3]) custom-call(p0), "
                                    "custom_call_target=\"TopK\""), false);
    Check(OneOp({type + "[17]"}, "(" + type + "[17], s32[17]) custom-call(p0), "
                                 "custom_call_target=\"TopK\""), false);
    Check(OneOp({type + "[4,0]"}, "(" + type + "[4,0], s32[4,0]) custom-call(p0), "
                                  "custom_call_target=\"TopK\""), false);
  }
}

// An unregistered target compiles to a library call, not an interpreted
// step; running it fails as the evaluator fails (same code, same message)
// until a function is registered under that name, which the same
// executable then calls.
TEST_F(JitCustomCall, UnregisteredTargetIsLookedUpWhenItRuns) {
  const std::string hlo =
      OneOp({"f32[12]", "f32[12]"},
            "f32[12] custom-call(p0, p1), custom_call_target=\"xjit_test_registered_later\"");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions(), &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.interpreted_steps.empty());
  ASSERT_EQ(report.library_calls.size(), 1u);
  EXPECT_NE(report.library_calls[0].routine.find("unregistered"), std::string::npos);
  std::mt19937_64 rng(1);
  std::vector<Literal> arguments;
  for (int p = 0; p < 2; ++p) {
    arguments.push_back(RandomLiteral((*module)->entry()->parameter(p)->shape(), rng));
  }
  absl::StatusOr<Literal> jit = (*executable)->Run(arguments);
  absl::StatusOr<Literal> evaluator = EvaluateModule(**module, arguments);
  ASSERT_FALSE(jit.ok());
  ASSERT_FALSE(evaluator.ok());
  EXPECT_EQ(jit.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(jit.status(), evaluator.status());
  CustomCallRegistry::Global().Register("xjit_test_registered_later", &XjitTestWeighted);
  jit = (*executable)->Run(arguments);
  evaluator = EvaluateModule(**module, arguments);
  CustomCallRegistry::Global().Unregister("xjit_test_registered_later");
  ASSERT_TRUE(jit.ok()) << jit.status();
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  EXPECT_EQ(Difference(*evaluator, *jit), "");
}

}  // namespace
}  // namespace xjit::jit::testing
