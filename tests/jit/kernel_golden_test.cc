// Golden kernel-program tests (issue #25): every
// tests/jit/kernel_golden/<feature>/<case>.hlo holds an HLO module, a line
// `// CHECK-KERNELS`, and the text expected after it: what the compile driver
// reports for the module (jit::CompileReport), in this form
//   interpreted: NAME (OPCODE): why         one line per interpreted step
//   library call NAME: ROUTINE              one line per library call
//   --- kernel NAME                         per kernel, in step order,
//   <KernelProgram::ToString()>             the program `xjit compile --asm`
//                                           prints under "--- program of"
// so that a change of the fusion emitter (jit/kernel/) shows up as a diff of
// these files in review. The test compiles the module, builds that text and
// compares it with the expectation; a mismatch prints a unified diff.
//
// What is pinned, and why. The kernel program is target-independent, except
// that ExpandMath (jit/kernel/vector_math.h) rewrites math opcodes according
// to the target's abilities (fused multiply-add, native scale, out-of-line
// math routines), so the test compiles with Isa::kAvx2 and the default
// MathLowering::kAuto on one thread; hosts that cannot run AVX2 (AArch64,
// old x86-64) skip. Nothing machine-dependent is compared: not the target
// name, code sizes, vector lanes, addresses or the disassembly.
//
// A golden file pins the current behaviour, it does not prove it right:
// UPDATE_GOLDEN=1 rewrites each file's expectation with the actual text, and
// the resulting diff must be read in review (docs/testing.md, "Golden tests").
#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "jit/compile_options.h"
#include "jit/target.h"
#include "tests/golden_cases.h"

namespace xjit::jit {
namespace {

constexpr absl::string_view kCheckKernels = "// CHECK-KERNELS";
constexpr Isa kPinnedIsa = Isa::kAvx2;

using golden::GoldenCase;

std::vector<GoldenCase> FindCases() {
  return golden::FindGoldenCases(XJIT_KERNEL_GOLDEN_DIR);
}

struct SplitText {
  std::string input;     // text before the CHECK-KERNELS line
  std::string expected;  // text after it
  bool found = false;
};

SplitText SplitCase(const std::string& text) {
  SplitText split;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    absl::string_view line(text.data() + pos, end - pos);
    if (absl::StripAsciiWhitespace(line) == kCheckKernels) {
      split.input = text.substr(0, pos);
      split.expected = end < text.size() ? text.substr(end + 1) : "";
      split.found = true;
      return split;
    }
    pos = end + 1;
  }
  return split;
}

// The compared text of `report` (see the file comment).
std::string ReportText(const CompileReport& report) {
  std::string text;
  for (const std::string& step : report.interpreted_steps) {
    absl::StrAppend(&text, "interpreted: ", step, "\n");
  }
  for (const LibraryCallInfo& call : report.library_calls) {
    absl::StrAppend(&text, "library call ", call.name, ": ", call.routine, "\n");
  }
  for (const KernelInfo& kernel : report.kernels) {
    absl::StrAppend(&text, "--- kernel ", kernel.name, "\n", kernel.program);
    if (!kernel.program.empty() && kernel.program.back() != '\n') text.push_back('\n');
  }
  return text;
}

// A unified-style diff of two texts, line by line (longest common
// subsequence; the texts are small): " " common, "-" expected only, "+" got
// only.
std::string LineDiff(absl::string_view expected, absl::string_view actual) {
  std::vector<absl::string_view> a = absl::StrSplit(expected, '\n');
  std::vector<absl::string_view> b = absl::StrSplit(actual, '\n');
  const size_t n = a.size(), m = b.size();
  std::vector<std::vector<int>> lcs(n + 1, std::vector<int>(m + 1, 0));
  for (size_t i = n; i-- > 0;) {
    for (size_t j = m; j-- > 0;) {
      lcs[i][j] = a[i] == b[j] ? lcs[i + 1][j + 1] + 1 : std::max(lcs[i + 1][j], lcs[i][j + 1]);
    }
  }
  std::string diff = "--- expected\n+++ got\n";
  size_t i = 0, j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] == b[j]) {
      absl::StrAppend(&diff, " ", a[i++], "\n");
      ++j;
    } else if (i < n && (j == m || lcs[i + 1][j] >= lcs[i][j + 1])) {
      absl::StrAppend(&diff, "-", a[i++], "\n");
    } else {
      absl::StrAppend(&diff, "+", b[j++], "\n");
    }
  }
  return diff;
}

class KernelGoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(KernelGoldenTest, Matches) {
  const GoldenCase& golden = GetParam();
  if (!HostSupportsIsa(kPinnedIsa)) {
    GTEST_SKIP() << "the golden kernel programs are those of --isa=avx2, which this host lacks";
  }
  const std::string text = ::xjit::golden::ReadGoldenFile(golden.path);
  const SplitText split = SplitCase(text);
  ASSERT_TRUE(split.found) << golden.path << ": no `" << kCheckKernels << "` line";

  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(split.input, golden.path);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified.ok()) << verified;

  CompileOptions options;
  options.isa = kPinnedIsa;
  options.threads = 1;
  options.math = MathLowering::kAuto;
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const std::string actual = ReportText(report);

  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream out(golden.path, std::ios::binary | std::ios::trunc);
    out << split.input << kCheckKernels << "\n" << actual;
    return;
  }
  EXPECT_TRUE(actual == split.expected)
      << golden.path << " differs (UPDATE_GOLDEN=1 rewrites it; review the diff):\n"
      << LineDiff(split.expected, actual);
}

INSTANTIATE_TEST_SUITE_P(KernelGolden, KernelGoldenTest, ::testing::ValuesIn(FindCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(KernelGoldenTest);

// The folder must not be empty: a wrong XJIT_KERNEL_GOLDEN_DIR would
// otherwise pass silently.
TEST(KernelGoldenFiles, Exist) { EXPECT_FALSE(FindCases().empty()) << XJIT_KERNEL_GOLDEN_DIR; }

}  // namespace
}  // namespace xjit::jit
