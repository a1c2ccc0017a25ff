// Out-of-line vector math (issue 14; jit/x64/x64_math_routines.h): kernels
// that call the per-process routines must compute the same bits as kernels
// with the math expanded inline (CompileOptions::math kInline vs
// kOutOfLine), for every math function, float type and instruction set,
// in vector loops, scalar tails, reductions and long chains; and the
// default rule (kAuto) must pick the routines for kernels with several math
// operations, which then stay small.
#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "jit/kernel/vector_math.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

const char* const kUnary[] = {"exponential", "exponential-minus-one", "log", "log-plus-one",
                              "tanh", "logistic", "sine", "cosine", "tan", "erf", "cbrt",
                              "rsqrt", "atan", "asin", "acos", "sinh", "cosh", "asinh",
                              "acosh", "atanh"};
const char* const kBinary[] = {"atan2", "power"};

// Compiles `hlo` with the math lowering `math` on `isa`.
std::unique_ptr<runtime::Executable> CompileWith(const Module& module, Isa isa,
                                                 MathLowering math, CompileReport* report) {
  CompileOptions options;
  options.isa = isa;
  options.math = math;
  options.cache = false;
  options.collect_asm = true;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, options, report);
  EXPECT_TRUE(executable.ok()) << executable.status();
  return executable.ok() ? *std::move(executable) : nullptr;
}

// Inline and out-of-line kernels of `hlo` give the same bits on random
// arguments (edge values included), on every instruction set of the host;
// both compile every instruction.
void ExpectSameBits(const std::string& hlo, uint64_t seed) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(parameter->shape(), rng));
  }
  for (Isa isa : HostIsas()) {
    SCOPED_TRACE(absl::StrCat("isa ", IsaName(isa), "\n", hlo));
    CompileReport inline_report, call_report;
    auto inline_code = CompileWith(**module, isa, MathLowering::kInline, &inline_report);
    auto call_code = CompileWith(**module, isa, MathLowering::kOutOfLine, &call_report);
    ASSERT_NE(inline_code, nullptr);
    ASSERT_NE(call_code, nullptr);
    EXPECT_TRUE(inline_report.interpreted_steps.empty())
        << absl::StrJoin(inline_report.interpreted_steps, "; ");
    EXPECT_TRUE(call_report.interpreted_steps.empty())
        << absl::StrJoin(call_report.interpreted_steps, "; ");
    // The out-of-line kernels really call routines; the inline ones do not
    // (x86-64: the target with routines, Target::HasOutOfLineMath).
    if (absl::StartsWith(call_report.target, "x86-64")) {
      std::string inline_asm, call_asm;
      for (const KernelInfo& kernel : inline_report.kernels) inline_asm += kernel.asm_text;
      for (const KernelInfo& kernel : call_report.kernels) call_asm += kernel.asm_text;
      EXPECT_FALSE(absl::StrContains(inline_asm, "call "));
      EXPECT_TRUE(absl::StrContains(call_asm, "call "));
    }
    absl::StatusOr<Literal> expected = inline_code->Run(arguments);
    absl::StatusOr<Literal> actual = call_code->Run(arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(Difference(*expected, *actual), "");
  }
}

TEST(MathRoutinesTest, UnaryFunctionsMatchInlineBits) {
  uint64_t seed = 1;
  for (const char* type : {"f32", "f64", "f16", "bf16"}) {
    for (const char* op : kUnary) {
      // 203 elements: vector iterations and a scalar tail.
      const std::string shape = absl::StrCat(type, "[203]");
      ExpectSameBits(OneOp({shape}, absl::StrCat(shape, " ", op, "(p0)")), seed++);
    }
  }
}

TEST(MathRoutinesTest, BinaryFunctionsMatchInlineBits) {
  uint64_t seed = 100;
  for (const char* type : {"f32", "f64", "bf16"}) {
    for (const char* op : kBinary) {
      const std::string shape = absl::StrCat(type, "[7,29]");
      ExpectSameBits(OneOp({shape, shape}, absl::StrCat(shape, " ", op, "(p0, p1)")), seed++);
    }
  }
}

TEST(MathRoutinesTest, ChainsAndReductionsMatchInlineBits) {
  // A fused chain of different functions with operands used twice.
  ExpectSameBits(ModuleText({"f32[517]", "f32[517]"},
                            {"a = f32[517] sine(p0)", "b = f32[517] exponential(a)",
                             "c = f32[517] multiply(b, p1)", "d = f32[517] tanh(c)",
                             "e = f32[517] atan2(d, a)", "f = f32[517] log-plus-one(e)",
                             "g = f32[517] add(f, b)"}),
                 7);
  ExpectSameBits(ModuleText({"f64[3,67]"}, {"a = f64[3,67] cosine(p0)",
                                            "b = f64[3,67] logistic(a)",
                                            "c = f64[3,67] power(b, a)"}),
                 8);
  // Reductions over math (row and column vectorised kernels).
  const std::string reduce_text = R"(HloModule m

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p0 = f32[64,37] parameter(0)
  a = f32[64,37] exponential(p0)
  b = f32[64,37] sine(a)
  z = f32[] constant(0)
  ROOT r = f32[REDUCED] reduce(b, z), dimensions={DIM}, to_apply=sum
}
)";
  // Rows (each output element reduces a row) and columns.
  for (const auto& [reduced, dim] : {std::pair<const char*, const char*>{"64", "1"},
                                     std::pair<const char*, const char*>{"37", "0"}}) {
    std::string text = reduce_text;
    text.replace(text.find("REDUCED"), 7, reduced);
    text.replace(text.find("DIM"), 3, dim);
    ExpectSameBits(text, 9);
  }
}

TEST(MathRoutinesTest, AutoRuleUsesRoutinesForManyMathOperations) {
  std::vector<std::string> body;
  std::string previous = "p0";
  for (int i = 0; i < 100; ++i) {
    const std::string name = absl::StrCat("s", i);
    body.push_back(absl::StrCat(name, " = f32[1024] sine(", previous, ")"));
    previous = name;
  }
  const std::string hlo = ModuleText({"f32[1024]"}, body);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport auto_report, inline_report;
  ASSERT_NE(CompileWith(**module, Isa::kAuto, MathLowering::kAuto, &auto_report), nullptr);
  ASSERT_NE(CompileWith(**module, Isa::kAuto, MathLowering::kInline, &inline_report), nullptr);
  if (!absl::StartsWith(auto_report.target, "x86-64")) {
    GTEST_SKIP() << "no out-of-line math on " << auto_report.target;
  }
  ASSERT_EQ(auto_report.kernels.size(), 1u);
  ASSERT_EQ(inline_report.kernels.size(), 1u);
  // 100 calls (vector and scalar) instead of 100 expansions.
  EXPECT_LT(auto_report.kernels[0].code_size, 20000);
  EXPECT_LT(auto_report.kernels[0].code_size * 5, inline_report.kernels[0].code_size);
  // One math operation stays inline: the kernel is the same size.
  absl::StatusOr<std::unique_ptr<Module>> one =
      ParseVerified(OneOp({"f32[1024]"}, "f32[1024] tanh(p0)"));
  ASSERT_TRUE(one.ok());
  CompileReport one_auto, one_inline;
  ASSERT_NE(CompileWith(**one, Isa::kAuto, MathLowering::kAuto, &one_auto), nullptr);
  ASSERT_NE(CompileWith(**one, Isa::kAuto, MathLowering::kInline, &one_inline), nullptr);
  EXPECT_EQ(one_auto.kernels.at(0).code_size, one_inline.kernels.at(0).code_size);
}

TEST(MathRoutinesTest, DeepChainsCompileAndMatchTheEvaluator) {
  // 20,000 chained elementwise instructions in one fusion (the emitter
  // used to recurse once per instruction) and a math chain of 2,000.
  for (const auto& [op, n] : {std::pair<const char*, int>{"negate", 20000},
                              std::pair<const char*, int>{"sine", 2000}}) {
    // tanh first: sine's error bound holds for |x| <= 2^22 only.
    std::vector<std::string> body = {"t = f32[37] tanh(p0)"};
    std::string previous = "t";
    for (int i = 0; i < n; ++i) {
      const std::string name = absl::StrCat("v", i);
      body.push_back(absl::StrCat(name, " = f32[37] ", op, "(", previous, ")"));
      previous = name;
    }
    CheckOptions options;
    // Each sine is within 4 ulp; errors add up over the chain.
    options.ulp_tolerance = std::string(op) == "sine" ? 4 * n : 0;
    CompileReport report;
    options.report = &report;
    EXPECT_TRUE(MatchesEvaluator(ModuleText({"f32[37]"}, body), options)) << op;
    EXPECT_TRUE(report.interpreted_steps.empty()) << op;
  }
}

}  // namespace
}  // namespace xjit::jit::testing
