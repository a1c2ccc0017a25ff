// Regression tests of issue 15 at the library level: checked byte sizes,
// the verifier's depth and cycle rules, W^X code pages, and the guard-page
// test mode of the runtime (XJIT_GUARD_PAGES). The command-line cases are in
// xjit_limits_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "passes/pipeline.h"
#include "passes/rewrite_util.h"
#include "runtime/executable.h"
#include "runtime/host/large_stack.h"

namespace xjit {
namespace {

using ::testing::HasSubstr;

// ---- Checked byte sizes ----

Shape ParsedShape(const std::string& text) {
  absl::StatusOr<Shape> shape = ParseShape(text);
  EXPECT_TRUE(shape.ok()) << text << ": " << shape.status();
  return shape.ok() ? *shape : Shape();
}

TEST(CheckedByteSize, AgreesWithByteSizeWhereNothingOverflows) {
  for (const char* text :
       {"f32[2,3]{1,0}", "f32[3,5]{1,0:PD(4,8)}", "f32[3,5]{1,0:T(2,2)}", "s4[7]{0:E(4)}",
        "pred[9]{0:E(1)}", "(f32[2]{0}, s8[3]{0})", "f32[0,5]{1,0}", "f64[]", "f32[5]{0:L(8)}"}) {
    const Shape shape = ParsedShape(text);
    absl::StatusOr<int64_t> bytes = CheckedByteSize(shape);
    ASSERT_TRUE(bytes.ok()) << text << ": " << bytes.status();
    EXPECT_EQ(*bytes, ByteSize(shape)) << text;
  }
}

TEST(CheckedByteSize, RejectsEverySizeThatOverflows) {
  for (const char* text : {
           "f32[4611686018427387904]{0}",                       // bytes overflow, elements fit
           "f32[3000000000,3000000000]{1,0}",                   // the same in two dimensions
           "f32[3,5]{1,0:PD(4000000000,4000000000)}",           // padding
           "f32[3,5]{1,0:T(2147483648,2147483648)}",            // a tile
           "f32[5]{0:L(9223372036854775807)}",                  // tail padding
           "s8[4611686018427387904]{0}",                        // past the 2^48-byte cap
           "(f32[40000000000000]{0}, f32[40000000000000]{0})",  // a tuple's sum
       }) {
    absl::StatusOr<Shape> shape = ParseShape(text);
    if (!shape.ok()) continue;  // Rejected even earlier: fine.
    absl::StatusOr<int64_t> bytes = CheckedByteSize(*shape);
    EXPECT_FALSE(bytes.ok()) << text << " gave " << *bytes;
  }
}

// ---- The verifier ----

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "test.hlo");
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

// A chain of `depth` computations, each calling the next; the entry is one
// more level.
std::string CallChain(int depth) {
  std::string text =
      "HloModule chain\nc0 {\n  p = s32[] parameter(0)\n  ROOT r = s32[] negate(p)\n}\n";
  for (int k = 1; k < depth - 1; ++k) {
    text += "c" + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  ROOT r = s32[] call(p), to_apply=c" +
            std::to_string(k - 1) + "\n}\n";
  }
  text += "ENTRY main {\n  p = s32[] parameter(0)\n  ROOT r = s32[] call(p), to_apply=c" +
          std::to_string(depth - 2) + "\n}\n";
  return text;
}

TEST(Verifier, CallDepthUpToTheLimitVerifies) {
  std::unique_ptr<Module> module = Parse(CallChain(kMaxCallDepth));
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
}

TEST(Verifier, CallDepthBeyondTheLimitIsAnError) {
  std::unique_ptr<Module> module = Parse(CallChain(kMaxCallDepth + 1));
  ASSERT_NE(module, nullptr);
  absl::Status status = VerifyModule(*module);
  EXPECT_FALSE(status.ok());
  EXPECT_THAT(status.message(), HasSubstr("nested more than 256"));
}

TEST(Verifier, LongControlChainsDoNotExhaustTheStack) {
  // 100,000 instructions each waiting for the previous one.
  std::string text = "HloModule chain\nENTRY main {\n  i0 = s32[] parameter(0)\n";
  for (int k = 1; k < 100000; ++k) {
    text += "  i" + std::to_string(k) + " = s32[] negate(i" + std::to_string(k - 1) +
            "), control-predecessors={i" + std::to_string(k - 1) + "}\n";
  }
  text += "  ROOT r = s32[] negate(i99999)\n}\n";
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(VerifyModule(*module).ok());
}

// ---- Nesting up to the limit fits the stack ----

// `depth` levels (the entry included) of while loops, each body running the
// next loop once and adding 1: the result is depth - 2 + 1 (body0 adds 1 too).
std::string WhileChain(int depth) {
  std::string text =
      "HloModule whiles\ncond {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
      "  ROOT lt = pred[] compare(p, one), direction=LT\n}\n"
      "body0 {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
      "  ROOT r = s32[] add(p, one)\n}\n";
  for (int k = 1; k < depth - 1; ++k) {
    text += "body" + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  q = s32[] while(p), condition=cond, body=body" +
            std::to_string(k - 1) + "\n  one = s32[] constant(1)\n  ROOT r = s32[] add(q, one)\n}\n";
  }
  text += "ENTRY main {\n  z = s32[] parameter(0)\n  ROOT w = s32[] while(z), condition=cond, "
          "body=body" + std::to_string(depth - 2) + "\n}\n";
  return text;
}

// `depth` levels of conditionals, each branch running the next conditional.
std::string ConditionalChain(int depth) {
  std::string text = "HloModule conds\nb0 {\n  p = s32[] parameter(0)\n  ROOT r = s32[] negate(p)\n}\n";
  for (int k = 1; k < depth - 1; ++k) {
    const std::string prev = "b" + std::to_string(k - 1);
    text += "b" + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  z = s32[] constant(0)\n"
            "  c = pred[] compare(p, z), direction=GE\n"
            "  ROOT r = s32[] conditional(c, p, p), true_computation=" + prev +
            ", false_computation=" + prev + "\n}\n";
  }
  const std::string last = "b" + std::to_string(depth - 2);
  text += "ENTRY main {\n  p = s32[] parameter(0)\n  z = s32[] constant(0)\n"
          "  c = pred[] compare(p, z), direction=GE\n"
          "  ROOT r = s32[] conditional(c, p, p), true_computation=" + last +
          ", false_computation=" + last + "\n}\n";
  return text;
}

// Compiling and running nests as deep as the verifier allows, on a quarter of
// the stack that compiling and running such modules get
// (runtime/host/large_stack.h): the documented limit holds with a margin of
// four in this build, whichever it is (sanitizer builds have the largest
// frames). Before compiling moved to a large stack, a 252-deep while chain
// overflowed the main thread's 8 MiB under AddressSanitizer.
TEST(Nesting, TheDeepestModulesFitAQuarterOfTheLargeStack) {
  for (const std::string& text : {CallChain(kMaxCallDepth), WhileChain(kMaxCallDepth),
                                  ConditionalChain(kMaxCallDepth)}) {
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(VerifyModule(*module).ok()) << VerifyModule(*module);
    ASSERT_TRUE(NeedsLargeStack(*module));
    const Literal argument = Literal::ScalarInt(ElementType::kS32, 5);
    absl::StatusOr<Literal> expected = absl::InternalError("not run"), actual = expected;
    ASSERT_TRUE(RunOnLargeStack(
                    [&] {
                      Evaluator evaluator;
                      expected = evaluator.EvaluateModule(*module, {&argument, 1});
                      absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
                          jit::Compile(*module, jit::CompileOptions());
                      if (!executable.ok()) {
                        actual = executable.status();
                        return;
                      }
                      actual = (*executable)->Run({&argument, 1});
                    },
                    kLargeStackBytes / 4)
                    .ok());
    ASSERT_TRUE(expected.ok()) << expected.status();
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(expected->ToString(), actual->ToString());
  }
}

// Compiling nested computations is linear in the depth: every loop body's
// and branch's program runs on the one module the entry's compile prepared.
// Each used to get a copy of the module (less what it could not reach), so a
// while chain d deep made d copies of up to d computations: quadratic time
// and memory (250 levels took 10 s and 660 MB).
// Each program once (a conditional's two branches may be one program).
void ExpectSubprogramsShare(const runtime::Executable& executable, const Module& module,
                            std::set<const runtime::Executable*>* programs) {
  if (!programs->insert(&executable).second) return;
  EXPECT_EQ(&executable.module(), &module);
  for (const runtime::Step& step : executable.steps()) {
    for (const auto& subprogram : step.subprograms) {
      ExpectSubprogramsShare(*subprogram, module, programs);
    }
  }
}

TEST(Nesting, NestedProgramsShareOneModule) {
  for (const std::string& text : {WhileChain(kMaxCallDepth), ConditionalChain(kMaxCallDepth)}) {
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = absl::InternalError("");
    ASSERT_TRUE(RunOnLargeStack([&] {
                  executable = jit::Compile(*module, jit::CompileOptions());
                }).ok());
    ASSERT_TRUE(executable.ok()) << executable.status();
    std::set<const runtime::Executable*> programs;
    ExpectSubprogramsShare(**executable, (*executable)->module(), &programs);
    // Every body or branch is a program of its own, compiled once.
    EXPECT_GE(programs.size(), static_cast<size_t>(kMaxCallDepth - 1));
    EXPECT_LE(programs.size(), static_cast<size_t>(kMaxCallDepth + 1));
  }
}

// Inlining a chain of calls d deep copies each level once: the callees the
// chain inlined are gone after canonicalize, and the entry holds a copy of
// each level's instructions. Inlining into every callee as well made the
// module quadratic in d (255 levels: 32,000 instructions, not 1,000).
TEST(Nesting, InliningACallChainIsLinear) {
  // Each level calls the next and adds one to what it returns.
  std::string text = "HloModule chain\nc0 {\n  p = s32[] parameter(0)\n  ROOT r = s32[] negate(p)\n}\n";
  for (int k = 1; k < kMaxCallDepth; ++k) {
    text += (k + 1 == kMaxCallDepth ? "ENTRY c" : "c") + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  q = s32[] call(p), to_apply=c" +
            std::to_string(k - 1) + "\n  one = s32[] constant(1)\n  ROOT r = s32[] add(q, one)\n}\n";
  }
  std::unique_ptr<Module> module = Parse(text);
  ASSERT_NE(module, nullptr);
  PipelineOptions pipeline;
  pipeline.only_passes = {"canonicalize"};
  ASSERT_TRUE(RunOnLargeStack([&] {
                ASSERT_TRUE(RunDefaultPipeline(module.get(), pipeline).ok());
              }).ok());
  int64_t instructions = 0;
  for (const auto& computation : module->computations()) {
    instructions += static_cast<int64_t>(computation->instructions().size());
  }
  EXPECT_EQ(module->computations().size(), 1u);
  EXPECT_LE(instructions, 4 * kMaxCallDepth);
}

// WhileChain(depth) with `width` more instructions in every body, which no
// pass can remove, fold or merge: adds of the inner loop's result and the
// body's parameter.
std::string WideWhileChain(int depth, int width) {
  std::string text =
      "HloModule whiles\ncond {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
      "  ROOT lt = pred[] compare(p, one), direction=LT\n}\n"
      "body0 {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
      "  ROOT r = s32[] add(p, one)\n}\n";
  for (int k = 1; k < depth - 1; ++k) {
    text += "body" + std::to_string(k) +
            " {\n  p = s32[] parameter(0)\n  a0 = s32[] while(p), condition=cond, body=body" +
            std::to_string(k - 1) + "\n";
    for (int i = 1; i <= width; ++i) {
      text += "  a" + std::to_string(i) + " = s32[] add(a" + std::to_string(i - 1) + ", p)\n";
    }
    text += "  one = s32[] constant(1)\n  ROOT r = s32[] add(a" + std::to_string(width) +
            ", one)\n}\n";
  }
  text += "ENTRY main {\n  z = s32[] parameter(0)\n  ROOT w = s32[] while(z), condition=cond, "
          "body=body" + std::to_string(depth - 2) + "\n}\n";
  return text;
}

// Passes ask whether each instruction has a side effect, and a loop has one
// if anything in its body or the loops nested there has. Asked afresh for
// every instruction (HasSideEffectDeep), a pass looked through a body nested
// k deep once for each of the k loops around it: work quadratic in the depth.
// Each pass (and the compile's buffer plans) now looks into each computation
// once (SideEffectCache). Counted, not timed: compiling a chain 4 times as
// deep looks at about 4 times as many instructions (at most 8 allowed;
// quadratic work is about 16 times as many).
TEST(Nesting, SideEffectsAreFoundOncePerComputation) {
  auto instructions_walked = [](int depth) -> int64_t {
    std::unique_ptr<Module> module = Parse(WideWhileChain(depth, 40));
    if (module == nullptr) return -1;
    const int64_t before = SideEffectWalkInstructions();
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = absl::InternalError("");
    EXPECT_TRUE(RunOnLargeStack([&] {
                  executable = jit::Compile(*module, jit::CompileOptions());
                }).ok());
    EXPECT_TRUE(executable.ok()) << executable.status();
    return SideEffectWalkInstructions() - before;
  };
  const int depth = kMaxCallDepth / 5;
  const int64_t shallow = instructions_walked(depth);
  const int64_t deep = instructions_walked(4 * depth);
  ASSERT_GT(shallow, 0);
  EXPECT_LE(deep, 8 * shallow) << "depth " << depth << ": " << shallow << " instructions walked; "
                               << "depth " << 4 * depth << ": " << deep;
}

// Found by hlo_text_fuzzer: a map written without dimensions= printed as
// `dimensions={}`, which the verifier rejects when the text is read back.
TEST(PrintedText, MapWithoutDimensionsRoundTrips) {
  std::unique_ptr<Module> module = Parse(R"(HloModule map
f {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  x = f32[3]{0} parameter(0)
  ROOT r = f32[3]{0} map(x, x), to_apply=f
}
)");
  ASSERT_NE(module, nullptr);
  ASSERT_TRUE(VerifyModule(*module).ok());
  const std::string printed = PrintModule(*module);
  std::unique_ptr<Module> again = Parse(printed);
  ASSERT_NE(again, nullptr);
  EXPECT_TRUE(VerifyModule(*again).ok()) << VerifyModule(*again) << "\n" << printed;
  EXPECT_EQ(PrintModule(*again), printed);
}

// Found by hlo_text_fuzzer: `HloModule %4_indices` printed without its '%',
// which does not lex as a name.
TEST(PrintedText, ModuleNameThatIsNoIdentifierRoundTrips) {
  std::unique_ptr<Module> module = Parse(R"(HloModule %4_indices
ENTRY main {
  ROOT a = s32[] parameter(0)
}
)");
  ASSERT_NE(module, nullptr);
  std::unique_ptr<Module> again = Parse(PrintModule(*module));
  ASSERT_NE(again, nullptr);
  EXPECT_EQ(again->name(), "4_indices");
}

// ---- W^X ----

// The mappings of this process that are writable and executable at once.
std::vector<std::string> WritableExecutableMappings() {
  std::ifstream maps("/proc/self/maps");
  std::vector<std::string> found;
  std::string line;
  while (std::getline(maps, line)) {
    // "address perms offset dev inode path": perms is "rwxp" and the like.
    const size_t space = line.find(' ');
    if (space == std::string::npos || space + 4 > line.size()) continue;
    const std::string perms = line.substr(space + 1, 4);
    if (perms[1] == 'w' && perms[2] == 'x') found.push_back(line);
  }
  return found;
}

constexpr char kKernelModule[] = R"(HloModule kernels
ENTRY main {
  a = f32[1000]{0} parameter(0)
  b = f32[1000]{0} parameter(1)
  s = f32[1000]{0} add(a, b)
  e = f32[1000]{0} exponential(s)
  h = f32[1000]{0} tanh(e)
  n = f32[1000]{0} sine(h)
  ROOT t = f32[1000]{0} multiply(n, a)
}
)";  // Three math functions: the kernel calls out-of-line math routines too.

Literal Iota(const Shape& shape, double scale) {
  Literal literal(shape);
  for (int64_t i = 0; i < shape.dimensions(0); ++i) literal.SetDouble({i}, scale * (i % 17));
  return literal;
}

TEST(WriteXorExecute, EmittedCodeIsNeverWritableAndExecutable) {
  std::unique_ptr<Module> module = Parse(kKernelModule);
  ASSERT_NE(module, nullptr);
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, jit::CompileOptions(), &report);
  if (!executable.ok() && absl::IsUnimplemented(executable.status())) {
    GTEST_SKIP() << "no jit target on this machine: " << executable.status();
  }
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_FALSE(report.kernels.empty());
  EXPECT_THAT(WritableExecutableMappings(), ::testing::IsEmpty());
  // And the code runs from its read-execute pages.
  const Shape shape = module->entry()->parameter(0)->shape();
  absl::StatusOr<Literal> result = (*executable)->Run({Iota(shape, 0.01), Iota(shape, 0.02)});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(WritableExecutableMappings(), ::testing::IsEmpty());
}

// ---- Guard pages ----

// A hand-made kernel that reads the byte just past its input buffer (whose
// size is kOverreadBytes): what the guard-page mode must turn into a fault.
constexpr int64_t kOverreadBytes = 4 * 1000;
void OverreadingKernel(void* const* buffers, int64_t, int64_t) {
  const volatile uint8_t* input = static_cast<const uint8_t*>(buffers[0]);
  static_cast<uint8_t*>(buffers[1])[0] = input[kOverreadBytes];
}

std::unique_ptr<runtime::Executable> OverreadingExecutable() {
  runtime::ExecutableSpec spec;
  spec.name = "overread";
  const Shape shape = Shape::Array(ElementType::kF32, {1000});
  spec.parameter_shapes = {shape};
  spec.result_shape = shape;
  runtime::BufferSlot input;
  input.kind = runtime::BufferSlot::Kind::kParameter;
  input.size = kOverreadBytes;
  input.shape = shape;
  runtime::BufferSlot output = input;
  output.kind = runtime::BufferSlot::Kind::kResult;
  spec.plan.slots = {input, output};
  spec.plan.result_bytes = kOverreadBytes;
  runtime::Step step;
  step.kind = runtime::Step::Kind::kKernel;
  step.name = "overread";
  step.function = &OverreadingKernel;
  step.inputs = {0};
  step.outputs = {1};
  spec.steps.push_back(std::move(step));
  return std::make_unique<runtime::Executable>(std::move(spec));
}

TEST(GuardPages, WithoutTheModeAnOverreadGoesUnnoticed) {
  // The over-read lands in the caller's larger buffer: what the mode is for.
  std::vector<uint8_t> in(kOverreadBytes + 4096), out(kOverreadBytes);
  EXPECT_TRUE(OverreadingExecutable()->Execute({in.data()}, out.data()).ok());
}

TEST(GuardPagesDeathTest, AnOverreadingKernelFaults) {
  // A child process (threadsafe style: it runs this test alone), so that the
  // mode, read once per process, is on from its first run.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  std::vector<uint8_t> in(kOverreadBytes + 4096), out(kOverreadBytes);
  EXPECT_DEATH(
      {
        setenv("XJIT_GUARD_PAGES", "1", 1);
        (void)OverreadingExecutable()->Execute({in.data()}, out.data());
      },
      "");
}

// Compiles and runs a module of the random test's staples (elementwise, a
// broadcast, a reduction, a slice and a concatenate) with guard pages on;
// the exit code says how it went (0: matches the evaluator).
int RunGuarded() {
  setenv("XJIT_GUARD_PAGES", "1", 1);
  std::unique_ptr<Module> module = Parse(R"(HloModule guarded
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY main {
  a = f32[1000]{0} parameter(0)
  b = f32[1000]{0} parameter(1)
  e = f32[1000]{0} exponential(a)
  m = f32[1000]{0} multiply(e, b)
  z = f32[] constant(0)
  r = f32[] reduce(m, z), dimensions={0}, to_apply=add
  rb = f32[999]{0} broadcast(r), dimensions={}
  s = f32[1]{0} slice(b), slice={[999:1000]}
  ROOT c = f32[1000]{0} concatenate(rb, s), dimensions={0}
}
)");
  if (module == nullptr) return 2;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, jit::CompileOptions());
  if (!executable.ok()) return absl::IsUnimplemented(executable.status()) ? 0 : 3;
  const Shape shape = module->entry()->parameter(0)->shape();
  std::vector<Literal> arguments;
  arguments.push_back(Iota(shape, 0.01));
  arguments.push_back(Iota(shape, 0.02));
  absl::StatusOr<Literal> got = (*executable)->Run(arguments);
  absl::StatusOr<Literal> want = EvaluateModule(*module, arguments);
  if (!got.ok() || !want.ok()) return 4;
  for (int64_t i = 0; i < shape.dimensions(0); ++i) {
    const double g = got->GetDouble({i});
    const double w = want->GetDouble({i});
    if (!(std::abs(g - w) <= 1e-5 * std::max(1.0, std::abs(w)))) return 5;
  }
  return 0;
}

TEST(GuardPagesDeathTest, CompiledKernelsStayInBounds) {
  // A child process, so that the mode (read once per process) is on from
  // its start.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(std::exit(RunGuarded()), ::testing::ExitedWithCode(0), "");
}

}  // namespace
}  // namespace xjit
