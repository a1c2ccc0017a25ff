// The compile cache (jit/compile_cache.h): a second compile of the same
// module with the same options is a hit that returns a working executable
// with the first compile's report; any change of the module text or of an
// option that matters is a miss; compiles with side effects are not cached.
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "jit/compile_cache.h"
#include "jit/target.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

std::unique_ptr<Module> Parse(const std::string& hlo) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

const char kChain[] = R"(HloModule m

ENTRY e {
  p0 = f32[100] parameter(0)
  p1 = f32[100] parameter(1)
  a = f32[100] multiply(p0, p1)
  b = f32[100] tanh(a)
  ROOT c = f32[100] add(b, p0)
}
)";

TEST(CompileCacheTest, SecondCompileIsAHitWithTheSameResults) {
  ClearCompileCache();
  const int64_t hits_before = GetCompileCacheStats().hits;
  std::unique_ptr<Module> module = Parse(kChain);
  ASSERT_NE(module, nullptr);
  CompileReport first, second;
  auto a = Compile(*module, CompileOptions(), &first);
  ASSERT_TRUE(a.ok()) << a.status();
  EXPECT_FALSE(first.cache_hit);
  // A module parsed again from the same text is the same key.
  std::unique_ptr<Module> again = Parse(kChain);
  auto b = Compile(*again, CompileOptions(), &second);
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_TRUE(second.cache_hit);
  EXPECT_EQ(second.kernels.size(), first.kernels.size());
  EXPECT_EQ(second.temp_bytes, first.temp_bytes);
  EXPECT_EQ(GetCompileCacheStats().hits, hits_before + 1);
  // Both executables run (and keep running once the cache is cleared).
  ClearCompileCache();
  std::mt19937_64 rng(3);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : module->entry()->parameters()) {
    arguments.push_back(RandomLiteral(parameter->shape(), rng));
  }
  absl::StatusOr<Literal> x = (*a)->Run(arguments);
  absl::StatusOr<Literal> y = (*b)->Run(arguments);
  ASSERT_TRUE(x.ok() && y.ok());
  EXPECT_EQ(Difference(*x, *y), "");
  CheckOptions check;
  check.ulp_tolerance = MathUlpTolerance(ElementType::kF32);
  EXPECT_TRUE(MatchesEvaluator(*module, check));
}

TEST(CompileCacheTest, OtherTextOrOptionsMiss) {
  ClearCompileCache();
  std::unique_ptr<Module> module = Parse(kChain);
  ASSERT_NE(module, nullptr);
  CompileReport report;
  ASSERT_TRUE(Compile(*module, CompileOptions(), &report).ok());
  CompileOptions no_passes;
  no_passes.run_passes = false;
  ASSERT_TRUE(Compile(*module, no_passes, &report).ok());
  EXPECT_FALSE(report.cache_hit);
  EXPECT_EQ(report.kernels.size(), 3u);  // One per instruction.
  // Another instruction set is another key (x86-64 hosts).
  const bool x64 = HostSupportsIsa(Isa::kSse4);
  CompileOptions sse;
  sse.isa = Isa::kSse4;
  if (x64) {
    ASSERT_TRUE(Compile(*module, sse, &report).ok());
    EXPECT_FALSE(report.cache_hit);
    EXPECT_EQ(report.target, "x86-64 sse4.1");
  }
  std::string other = kChain;
  other.replace(other.find("tanh"), 4, "sine");
  std::unique_ptr<Module> changed = Parse(other);
  ASSERT_TRUE(Compile(*changed, CompileOptions(), &report).ok());
  EXPECT_FALSE(report.cache_hit);
  // Repeats of each are hits.
  ASSERT_TRUE(Compile(*module, no_passes, &report).ok());
  EXPECT_TRUE(report.cache_hit);
  EXPECT_EQ(report.kernels.size(), 3u);
  if (x64) {
    ASSERT_TRUE(Compile(*module, sse, &report).ok());
    EXPECT_TRUE(report.cache_hit);
    EXPECT_EQ(report.target, "x86-64 sse4.1");
  }
}

TEST(CompileCacheTest, UncachedCompiles) {
  ClearCompileCache();
  std::unique_ptr<Module> module = Parse(kChain);
  ASSERT_NE(module, nullptr);
  CompileOptions off;
  off.cache = false;
  CompileReport report;
  ASSERT_TRUE(Compile(*module, off, &report).ok());
  ASSERT_TRUE(Compile(*module, off, &report).ok());
  EXPECT_FALSE(report.cache_hit);
  EXPECT_EQ(GetCompileCacheStats().entries, 0);
  EXPECT_FALSE(CompileCacheKey(*module, off).has_value());
  CompileOptions dump;
  dump.dump_dir = "/tmp/unused";
  EXPECT_FALSE(CompileCacheKey(*module, dump).has_value());
}

TEST(CompileCacheTest, KeepsABoundedNumberOfEntries) {
  ClearCompileCache();
  for (int i = 0; i < kCompileCacheEntries + 5; ++i) {
    std::string text = kChain;
    text.replace(text.find("HloModule m"), 11, "HloModule m" + std::to_string(i));
    std::unique_ptr<Module> module = Parse(text);
    ASSERT_NE(module, nullptr);
    ASSERT_TRUE(Compile(*module, CompileOptions()).ok());
  }
  EXPECT_EQ(GetCompileCacheStats().entries, kCompileCacheEntries);
}

}  // namespace
}  // namespace xjit::jit::testing
