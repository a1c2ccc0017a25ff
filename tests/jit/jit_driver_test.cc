// The compile driver and the runtime Executable: interpreted steps, tuples,
// constants, parameter roots, the summary lines, argument errors, raw
// buffers, concurrent runs, assembly text and the perf map.
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <map>
#include <set>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "jit/compile.h"
#include "jit/target.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

constexpr char kMixed[] = R"(HloModule mixed
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
less {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ai = s64[] convert(a)
  a8 = f8e8m0fnu[] convert(ai)
  ra = f32[] convert(a8)
  ROOT lt = pred[] compare(ra, b), direction=LT
}
ENTRY e {
  p0 = f32[4,3] parameter(0)
  p1 = f32[4,3]{0,1} parameter(1)
  c = f32[] constant(2)
  x = f32[4,3] multiply(p0, p1)
  zero = f32[] constant(0)
  r = f32[4] reduce(x, zero), dimensions={1}, to_apply=add
  t = (f32[4,3], f32[4], f32[]) tuple(x, r, c)
  g = f32[4] get-tuple-element(t), index=1
  sorted = f32[4] sort(g), dimensions={0}, to_apply=less
  ROOT out = (f32[4], f32[4,3], f32[4,3]{0,1}) tuple(sorted, x, p1)
}
)";

Literal Iota(const Shape& shape, double scale) {
  Literal literal(shape);
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    literal.SetBitsLinear(i, Literal::Scalar(shape.element_type(), i * scale).GetBitsLinear(0));
  }
  return literal;
}

TEST(JitDriver, MixedKernelsInterpretedStepsAndTuples) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok()) << module.status();
  for (Isa isa : HostIsas()) {
    for (bool run_passes : {false, true}) {
      CheckOptions options;
      options.isa = isa;
      options.run_passes = run_passes;
      options.require_all_compiled = false;
      CompileReport report;
      options.report = &report;
      EXPECT_TRUE(MatchesEvaluator(**module, options));
      // multiply and reduce are kernels (one fusion each with the passes);
      // sort is interpreted (its comparator's s64 -> f8e8m0fnu convert has
      // no kernel: docs/types.md).
      EXPECT_EQ(report.kernels.size(), 2u);
      ASSERT_EQ(report.interpreted_steps.size(), 1u);
      EXPECT_TRUE(absl::StartsWith(report.interpreted_steps[0], "sorted (sort)"))
          << report.interpreted_steps[0];
    }
  }
}

TEST(JitDriver, InterpretOnlyMatchesEvaluator) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileOptions options;
  options.interpret_only = true;
  options.run_passes = false;
  CompileReport report;
  auto executable = Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_EQ(report.kernels.size(), 0u);
  EXPECT_EQ(report.interpreted_steps.size(), 3u);  // multiply, reduce, sort
  Literal a = Iota(Shape::Array(ElementType::kF32, {4, 3}), 0.5);
  Literal b = Iota(Shape::ArrayWithLayout(ElementType::kF32, {4, 3}, {0, 1}), -1.25);
  auto expected = EvaluateModule(**module, {a, b});
  ASSERT_TRUE(expected.ok()) << expected.status();
  auto actual = (*executable)->Run(std::vector<Literal>{a, b});
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(Difference(*expected, *actual), "");
}

TEST(JitDriver, SummaryLines) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok());
  CompileReport report;
  ASSERT_TRUE(Compile(**module, {}, &report).ok());
  const std::string summary = report.Summary();
  EXPECT_TRUE(absl::StrContains(summary, "kernels: 2\n")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "interpreted steps: 1\n")) << summary;
  // x, sorted and p1 are written into the caller's result; only r (16 bytes)
  // is a temp.
  EXPECT_TRUE(absl::StrContains(summary, "temp bytes: 16\n")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "peak bytes: ")) << summary;
  EXPECT_TRUE(absl::StrContains(summary, "compile ms: ")) << summary;
}

// A chain of elementwise operations on X bytes needs no temps either way:
// fused, it is one kernel from the parameter to the result; unfused, the
// first value (which cannot overwrite the entry parameter) takes new bytes
// and every later one is written in place over the one before it, so the
// whole chain runs in the caller's result buffer.
TEST(JitDriver, TempBytesOfAnElementwiseChain) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(R"(HloModule chain
ENTRY e {
  p = f32[1000] parameter(0)
  a = f32[1000] exponential(p)
  b = f32[1000] negate(a)
  c = f32[1000] abs(b)
  d = f32[1000] sqrt(c)
  ROOT r = f32[1000] add(d, d)
}
)");
  ASSERT_TRUE(module.ok());
  for (bool run_passes : {false, true}) {
    CompileOptions options;
    options.run_passes = run_passes;
    CompileReport report;
    ASSERT_TRUE(Compile(**module, options, &report).ok());
    EXPECT_EQ(report.temp_bytes, 0) << run_passes;
    EXPECT_EQ(report.kernels.size(), run_passes ? 1u : 5u) << run_passes;
    // The parameter and the result, 4000 bytes each.
    EXPECT_EQ(report.peak_bytes, 8000) << run_passes;
  }
}

TEST(JitDriver, RootIsParameterOrConstant) {
  for (const char* hlo : {"HloModule m\nENTRY e {\n  ROOT p = s32[3] parameter(0)\n}\n",
                          "HloModule m\nENTRY e {\n  p = s32[3] parameter(0)\n"
                          "  ROOT c = s32[2] constant({7, -7})\n}\n",
                          "HloModule m\nENTRY e {\n  p = (s32[3], f32[]) parameter(0)\n"
                          "  ROOT g = f32[] get-tuple-element(p), index=1\n}\n"}) {
    for (Isa isa : HostIsas()) {
      CheckOptions options;
      options.isa = isa;
      EXPECT_TRUE(MatchesEvaluator(hlo, options)) << hlo;
    }
  }
}

TEST(JitDriver, ArgumentErrors) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified("HloModule m\nENTRY e {\n  p = f32[3] parameter(0)\n  ROOT n = f32[3] negate(p)\n}\n");
  ASSERT_TRUE(module.ok());
  auto executable = Compile(**module, {});
  ASSERT_TRUE(executable.ok());
  EXPECT_EQ((*executable)->Run(std::vector<Literal>{}).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*executable)->Run(std::vector<Literal>{Literal(Shape::Array(ElementType::kF32, {4}))})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*executable)->Run(std::vector<Literal>{Literal(Shape::Array(ElementType::kS32, {3}))})
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*executable)->Execute({nullptr}, nullptr).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*executable)->Execute({}, nullptr).code(), absl::StatusCode::kInvalidArgument);
}

TEST(JitDriver, RawBuffers) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(
      "HloModule m\nENTRY e {\n  a = f32[5] parameter(0)\n  b = f32[5] parameter(1)\n"
      "  ROOT s = f32[5] subtract(a, b)\n}\n");
  ASSERT_TRUE(module.ok());
  auto executable = Compile(**module, {});
  ASSERT_TRUE(executable.ok());
  const float a[5] = {1, 2, 3, 4, 5};
  const float b[5] = {0.5f, 0.25f, -1, 8, 5};
  float result[5] = {};
  ASSERT_TRUE((*executable)->Execute({a, b}, result).ok());
  const float expected[5] = {0.5f, 1.75f, 4, -4, 0};
  for (int i = 0; i < 5; ++i) EXPECT_EQ(result[i], expected[i]) << i;
}

TEST(JitDriver, ConcurrentRuns) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kMixed);
  ASSERT_TRUE(module.ok());
  auto executable = Compile(**module, {});
  ASSERT_TRUE(executable.ok());
  const runtime::Executable& exe = **executable;
  std::vector<std::string> errors(8);
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (int iteration = 0; iteration < 50; ++iteration) {
        Literal a = Iota(Shape::Array(ElementType::kF32, {4, 3}), t + 1);
        Literal b = Iota(Shape::ArrayWithLayout(ElementType::kF32, {4, 3}, {0, 1}), iteration);
        auto expected = EvaluateModule(**module, {a, b});
        auto actual = exe.Run(std::vector<Literal>{a, b});
        if (!expected.ok() || !actual.ok()) {
          errors[t] = "run failed";
          return;
        }
        const std::string d = Difference(*expected, *actual);
        if (!d.empty()) {
          errors[t] = d;
          return;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (const std::string& e : errors) EXPECT_EQ(e, "");
}

TEST(JitDriver, AssemblyText) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(
      "HloModule m\nENTRY e {\n  a = f32[64] parameter(0)\n  ROOT s = f32[64] add(a, a)\n}\n");
  ASSERT_TRUE(module.ok());
  for (Isa isa : HostIsas()) {
    CompileOptions options;
    options.isa = isa;
    options.collect_asm = true;
    CompileReport report;
    ASSERT_TRUE(Compile(**module, options, &report).ok());
    ASSERT_EQ(report.kernels.size(), 1u);
    const KernelInfo& kernel = report.kernels[0];
    const int lanes = isa == Isa::kAvx512 ? 16 : isa == Isa::kAvx2 ? 8 : 4;
    const char* add = isa == Isa::kNeon     ? "fadd v"
                      : isa == Isa::kAvx512 ? "vaddps zmm"
                      : isa == Isa::kAvx2   ? "vaddps ymm"
                                            : "addps xmm";
    EXPECT_EQ(kernel.vector_lanes, lanes) << IsaName(isa);
    EXPECT_TRUE(absl::StrContains(kernel.asm_text, add)) << kernel.asm_text;
    EXPECT_GT(kernel.code_size, 0);
  }
}

TEST(JitDriver, PerfMap) {
  // A kernel in the entry and one in a loop body, both fusions: the body's
  // is named after its computation too (issue 29: the names were equal).
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(R"(HloModule perfmod
cond {
  s = f32[4] parameter(0)
  ROOT f = pred[] constant(false)
}
body {
  s = f32[4] parameter(0)
  ROOT n = f32[4] negate(s)
}
ENTRY e {
  a = f32[4] parameter(0)
  neg = f32[4] negate(a)
  ROOT w = f32[4] while(neg), condition=cond, body=body
}
)");
  ASSERT_TRUE(module.ok());
  CompileOptions options;
  options.perf_map = true;
  ASSERT_TRUE(Compile(**module, options).ok());
  const std::string path = absl::StrCat("/tmp/perf-", getpid(), ".map");
  std::ifstream file(path);
  if (!file) GTEST_SKIP() << "no /tmp";
  std::stringstream text;
  text << file.rdbuf();
  // The pipeline wraps the instruction in a fusion; the map names kernels
  // after the instruction the step computes.
  EXPECT_TRUE(absl::StrContains(text.str(), " xjit:perfmod:fusion\n")) << text.str();
  EXPECT_TRUE(absl::StrContains(text.str(), " xjit:perfmod:body/fusion\n")) << text.str();
  std::remove(path.c_str());
}

// The jitdump line table (jit/code/jitdump.h) maps code to lines of the
// kernel's program text; each operation line names the HLO instruction it
// computes part of (issue 29: `perf annotate` showed program lines only),
// through every rewrite: tanh's expansion into vector math included.
TEST(JitDriver, JitDumpLinesNameTheirInstruction) {
#if !defined(__x86_64__)
  GTEST_SKIP() << "only the x86-64 target records code offsets per operation";
#endif
  char dir_template[] = "/tmp/xjit_jitdump_test_XXXXXX";
  const char* dir = mkdtemp(dir_template);
  ASSERT_NE(dir, nullptr);
  setenv("XJIT_JITDUMP_DIR", dir, 1);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(R"(HloModule dumpmod
ENTRY e {
  a = f32[67] parameter(0)
  b = f32[67] parameter(1)
  m = f32[67] multiply(a, b)
  t = f32[67] tanh(m)
  ROOT r = f32[67] add(t, a)
}
)");
  ASSERT_TRUE(module.ok());
  CompileOptions options;
  options.jitdump = true;
  options.math = MathLowering::kInline;
  ASSERT_TRUE(Compile(**module, options).ok());
  unsetenv("XJIT_JITDUMP_DIR");
  std::ifstream dump(absl::StrCat(dir, "/jit-", getpid(), ".dump"), std::ios::binary);
  ASSERT_TRUE(dump.good());
  const std::string bytes((std::istreambuf_iterator<char>(dump)), std::istreambuf_iterator<char>());
  // The records (perf's jitdump format): a 40-byte file header, then per
  // record u32 id, u32 size, u64 time; debug info (id 2) continues with u64
  // address, u64 count and per entry u64 address, i32 line, i32
  // discriminator and the text file's name.
  auto read = [&](size_t at, auto value) {
    std::memcpy(&value, bytes.data() + at, sizeof(value));
    return value;
  };
  std::map<std::string, std::set<int>> lines;  // Text file -> lines the table names.
  for (size_t at = 40; at + 16 <= bytes.size();) {
    const uint32_t id = read(at, uint32_t{0});
    const uint32_t size = read(at + 4, uint32_t{0});
    ASSERT_GE(size, 16u);
    if (id == 2) {
      size_t entry = at + 32;
      for (uint64_t k = 0, n = read(at + 24, uint64_t{0}); k < n; ++k) {
        const int line = read(entry + 8, int32_t{0});
        const std::string file(bytes.data() + entry + 16);
        lines[file].insert(line);
        entry += 16 + file.size() + 1;
      }
    }
    at += size;
  }
  ASSERT_FALSE(lines.empty());
  std::set<std::string> named;  // Instructions named on the lines the table points at.
  for (const auto& [file, numbers] : lines) {
    std::ifstream source(file);
    std::vector<std::string> text;
    for (std::string line; std::getline(source, line);) text.push_back(line);
    for (int number : numbers) {
      ASSERT_LE(number, static_cast<int>(text.size())) << file;
      const std::string& line = text[number - 1];
      if (!absl::StartsWith(line, "  %")) continue;  // The header (the prologue's code).
      const size_t mark = line.find("  ; ");
      ASSERT_NE(mark, std::string::npos) << "no instruction named: " << line;
      named.insert(line.substr(mark + 4));
    }
    std::remove(file.c_str());
  }
  // Fusion may clone an instruction under its name with a suffix (m.1).
  for (const std::string stem : {"m", "t", "r"}) {
    bool found = false;
    for (const std::string& name : named) {
      found = found || name == stem || absl::StartsWith(name, stem + ".");
    }
    EXPECT_TRUE(found) << stem << " is on no line of the table";
  }
  std::remove(absl::StrCat(dir, "/jit-", getpid(), ".dump").c_str());
  rmdir(absl::StrCat(dir, "/xjit-", getpid()).c_str());
  rmdir(dir);
}

TEST(JitDriver, IsaNames) {
  EXPECT_EQ(ParseIsa("sse4"), Isa::kSse4);
  EXPECT_EQ(ParseIsa("avx2"), Isa::kAvx2);
  EXPECT_EQ(ParseIsa("auto"), Isa::kAuto);
  EXPECT_EQ(ParseIsa("avx512"), Isa::kAvx512);
  EXPECT_EQ(IsaName(Isa::kAvx512), "avx512");
  EXPECT_EQ(ParseIsa("neon"), Isa::kNeon);
  EXPECT_EQ(IsaName(Isa::kNeon), "neon");
  EXPECT_EQ(ParseIsa("avx1024"), std::nullopt);
  EXPECT_TRUE(HostSupportsIsa(Isa::kAuto));
  // kAuto picks the widest the host has.
  const Isa best = BestHostIsa();
  EXPECT_TRUE(HostSupportsIsa(best));
  if (HostSupportsIsa(Isa::kAvx512)) {
    EXPECT_EQ(best, Isa::kAvx512);
  }
}

TEST(JitDriver, Avx512TargetOrInvalidArgument) {
  TargetOptions options;
  options.isa = Isa::kAvx512;
  absl::StatusOr<std::unique_ptr<Target>> target = CreateHostTarget(options);
  if (!HostSupportsIsa(Isa::kAvx512)) {
    EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument) << target.status();
    GTEST_SKIP() << "this host has no avx512";
  }
  ASSERT_TRUE(target.ok()) << target.status();
  EXPECT_EQ((*target)->name(), "x86-64 avx512");
  EXPECT_TRUE((*target)->HasFusedMultiplyAdd());
  TargetOptions automatic;
  absl::StatusOr<std::unique_ptr<Target>> best = CreateHostTarget(automatic);
  ASSERT_TRUE(best.ok());
  EXPECT_EQ((*best)->name(), "x86-64 avx512");
}

// An instruction set of the other architecture is a clear error, never a
// silent fallback; the host's own target names itself.
TEST(JitDriver, OtherArchitectureIsaIsInvalidArgument) {
#if defined(__aarch64__)
  const Isa foreign = Isa::kAvx2;
  const char* own_name = "aarch64 neon";
#else
  const Isa foreign = Isa::kNeon;
  const char* own_name = "x86-64";
#endif
  EXPECT_FALSE(HostSupportsIsa(foreign));
  TargetOptions options;
  options.isa = foreign;
  absl::StatusOr<std::unique_ptr<Target>> target = CreateHostTarget(options);
  EXPECT_EQ(target.status().code(), absl::StatusCode::kInvalidArgument) << target.status();
  EXPECT_TRUE(absl::StrContains(target.status().message(), IsaName(foreign)))
      << target.status();
  absl::StatusOr<std::unique_ptr<Target>> best = CreateHostTarget(TargetOptions());
  ASSERT_TRUE(best.ok()) << best.status();
  EXPECT_TRUE(absl::StartsWith((*best)->name(), own_name)) << (*best)->name();
  EXPECT_TRUE((*best)->HasFusedMultiplyAdd() || !HostSupportsIsa(Isa::kAvx2));
}

TEST(JitDriver, DifferenceSeesMismatches) {
  // The comparison the other tests rely on must be able to fail.
  Literal a = Literal::FromDoubles(Shape::Array(ElementType::kF32, {2}), {1.0, -0.0});
  Literal b = Literal::FromDoubles(Shape::Array(ElementType::kF32, {2}), {1.0, 0.0});
  EXPECT_NE(Difference(a, b), "");
  Literal n1 = Literal::FromDoubles(Shape::Array(ElementType::kF32, {1}), {std::nan("")});
  Literal n2 = Literal::FromDoubles(Shape::Array(ElementType::kF32, {1}), {-std::nan("")});
  EXPECT_EQ(Difference(n1, n2), "");
  Literal i1 = Literal::FromInts(Shape::Array(ElementType::kS8, {1}), {-128});
  Literal i2 = Literal::FromInts(Shape::Array(ElementType::kS8, {1}), {127});
  EXPECT_NE(Difference(i1, i2), "");
}

TEST(JitDriver, UnverifiedModuleIsAnError) {
  Module module("broken");
  EXPECT_FALSE(Compile(module, {}).ok());
}

}  // namespace
}  // namespace xjit::jit::testing
