// Golden pass tests: every tests/passes/golden/<pass>/<case>.hlo holds an input
// module, a line `// CHECK-AFTER <pass>[,<pass>...]`, and the module expected
// after running those passes in order (docs/passes.md describes the format).
// For each case the test
//   1. parses and verifies the input, runs the passes (CreatePass), verifies
//      the result;
//   2. compares the printed result with the expected text, itself parsed and
//      printed so that hand-written expectations may omit what the printer
//      adds (operand shapes, default layouts, `%`); an empty expectation
//      means "unchanged";
//   3. checks that the passes reported a change exactly when the text
//      changed;
//   4. runs the evaluator on the input and on the result with seeded random
//      arguments (special values included: NaN, +-0, +-inf, integer extremes)
//      and requires identical results, bit for bit, unless the case says
//      `// SEMANTICS tolerance=<relative>` (then specials are left out) or
//      `// SEMANTICS none`.
// UPDATE_GOLDEN=1 rewrites each file's expectation with the actual output.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "tests/golden_cases.h"
#include "tests/passes/random_arguments.h"

namespace xjit {
namespace {

constexpr absl::string_view kCheckAfter = "// CHECK-AFTER";
constexpr absl::string_view kSemantics = "// SEMANTICS";

using golden::GoldenCase;

std::vector<GoldenCase> FindCases() {
  return golden::FindGoldenCases(XJIT_GOLDEN_DIR);
}

struct ParsedCase {
  std::string input;        // text before the CHECK-AFTER line
  std::string check_line;   // the CHECK-AFTER line itself
  std::vector<std::string> passes;
  std::string expected;     // text after it
  enum class Semantics { kExact, kTolerance, kNone } semantics = Semantics::kExact;
  double tolerance = 0;
};

absl::StatusOr<ParsedCase> SplitCase(const std::string& text) {
  ParsedCase parsed;
  size_t pos = 0;
  bool found = false;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string::npos) end = text.size();
    absl::string_view line(text.data() + pos, end - pos);
    absl::string_view stripped = absl::StripAsciiWhitespace(line);
    if (absl::StartsWith(stripped, kCheckAfter)) {
      parsed.input = text.substr(0, pos);
      parsed.check_line = std::string(line);
      parsed.expected = end < text.size() ? text.substr(end + 1) : "";
      for (absl::string_view name : absl::StrSplit(stripped.substr(kCheckAfter.size()), ',')) {
        name = absl::StripAsciiWhitespace(name);
        if (!name.empty()) parsed.passes.emplace_back(name);
      }
      found = true;
      break;
    }
    if (absl::StartsWith(stripped, kSemantics)) {
      absl::string_view mode = absl::StripAsciiWhitespace(stripped.substr(kSemantics.size()));
      if (mode == "exact") {
        parsed.semantics = ParsedCase::Semantics::kExact;
      } else if (mode == "none") {
        parsed.semantics = ParsedCase::Semantics::kNone;
      } else if (absl::ConsumePrefix(&mode, "tolerance=") &&
                 absl::SimpleAtod(mode, &parsed.tolerance)) {
        parsed.semantics = ParsedCase::Semantics::kTolerance;
      } else {
        return absl::InvalidArgumentError(absl::StrCat("bad SEMANTICS line: ", line));
      }
    }
    pos = end + 1;
  }
  if (!found) return absl::InvalidArgumentError("no `// CHECK-AFTER <pass>` line");
  if (parsed.passes.empty()) return absl::InvalidArgumentError("CHECK-AFTER names no pass");
  return parsed;
}

class GoldenTest : public ::testing::TestWithParam<GoldenCase> {};

TEST_P(GoldenTest, Matches) {
  const GoldenCase& golden = GetParam();
  const std::string text = ::xjit::golden::ReadGoldenFile(golden.path);
  absl::StatusOr<ParsedCase> parsed = SplitCase(text);
  ASSERT_TRUE(parsed.ok()) << golden.path << ": " << parsed.status();

  absl::StatusOr<std::unique_ptr<Module>> input = ParseHloModule(parsed->input, golden.path);
  ASSERT_TRUE(input.ok()) << input.status();
  ASSERT_TRUE(VerifyModule(**input).ok()) << "input: " << VerifyModule(**input);
  const std::string input_text = PrintModule(**input);

  std::unique_ptr<Module> module = (*input)->Clone();
  bool changed = false;
  for (const std::string& name : parsed->passes) {
    absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    absl::StatusOr<bool> pass_changed = (*pass)->Run(module.get());
    ASSERT_TRUE(pass_changed.ok()) << name << ": " << pass_changed.status();
    changed = changed || *pass_changed;
    absl::Status verified = VerifyModule(*module);
    ASSERT_TRUE(verified.ok()) << "after " << name << ": " << verified << "\n"
                               << PrintModule(*module);
  }
  const std::string actual = PrintModule(*module);

  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream out(golden.path, std::ios::binary | std::ios::trunc);
    out << parsed->input << parsed->check_line << "\n" << (actual == input_text ? "" : actual);
  } else {
    std::string expected = input_text;
    if (!absl::StripAsciiWhitespace(parsed->expected).empty()) {
      absl::StatusOr<std::unique_ptr<Module>> expected_module =
          ParseHloModule(parsed->expected, absl::StrCat(golden.path, " (expected)"));
      ASSERT_TRUE(expected_module.ok()) << expected_module.status();
      expected = PrintModule(**expected_module);
    }
    EXPECT_EQ(actual, expected) << golden.path;
  }
  EXPECT_EQ(changed, actual != input_text)
      << "the passes reported changed=" << changed << " but the text "
      << (actual != input_text ? "changed" : "did not change");

  if (parsed->semantics == ParsedCase::Semantics::kNone) return;
  const bool exact = parsed->semantics == ParsedCase::Semantics::kExact;
  for (uint64_t seed = 1; seed <= 4; ++seed) {
    absl::StatusOr<std::vector<Literal>> arguments =
        testing::RandomArguments(**input, seed, /*specials=*/exact, /*cycle=*/seed == 1);
    if (!arguments.ok()) GTEST_SKIP() << "semantic check skipped: " << arguments.status();
    EvaluatorOptions options;
    options.max_while_iterations = 10000;  // random states can make loops endless
    absl::StatusOr<Literal> before = EvaluateModule(**input, *arguments, options);
    if (!before.ok()) GTEST_SKIP() << "evaluator cannot run the input: " << before.status();
    absl::StatusOr<Literal> after = EvaluateModule(*module, *arguments, options);
    ASSERT_TRUE(after.ok()) << "evaluator fails on the output: " << after.status();
    if (exact) {
      EXPECT_TRUE(*before == *after) << "seed " << seed << ": results differ\nbefore: "
                                     << before->ToString() << "\nafter:  " << after->ToString();
    } else {
      std::string why;
      EXPECT_TRUE(testing::NearlyEqual(*before, *after, parsed->tolerance, &why))
          << "seed " << seed << ": " << why << "\nbefore: " << before->ToString()
          << "\nafter:  " << after->ToString();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenTest, ::testing::ValuesIn(FindCases()),
                         [](const ::testing::TestParamInfo<GoldenCase>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenTest);

}  // namespace
}  // namespace xjit
