// The simplification passes over every module of the repository's corpora
// (tests/conformance and tests/hlo_text/valid): each module that parses,
// verifies and evaluates must still verify after the passes and give the
// same result, bit for bit, on seeded random arguments with special values.
// Each module runs twice: as written, and with its array constants turned
// into parameters (fed the constants' values), so that the rewrites meet
// operands that constant folding cannot remove. batch-norm expansion is
// left out: it is exact only to a tolerance (its golden cases check it).
// XJIT_CORPUS_PASSES=a,b,c in the environment runs another pass sequence
// (for instance the whole pipeline without expand-batch-norm).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/verifier.h"
#include "passes/pipeline.h"
#include "passes/rewrite_util.h"
#include "tests/passes/random_arguments.h"

namespace xjit {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string>& PassNames() {
  static const auto* names = [] {
    if (const char* env = std::getenv("XJIT_CORPUS_PASSES"); env != nullptr) {
      auto* list = new std::vector<std::string>();
      for (absl::string_view name : absl::StrSplit(env, ',', absl::SkipWhitespace())) {
        list->emplace_back(absl::StripAsciiWhitespace(name));
      }
      return list;
    }
    return new std::vector<std::string>{"canonicalize", "simplify-algebra", "fold-constants",
                                        "simplify-algebra", "cse", "dce", "no-op-bitcast"};
  }();
  return *names;
}

struct CorpusCase {
  std::string path;
  std::string name;
};

void PrintTo(const CorpusCase& c, std::ostream* os) { *os << c.path; }

std::vector<CorpusCase> FindCases() {
  std::vector<CorpusCase> cases;
  for (const char* dir : {XJIT_CONFORMANCE_DIR, XJIT_HLO_TEXT_VALID_DIR}) {
    const fs::path root(dir);
    std::error_code error;
    if (!fs::is_directory(root, error)) continue;
    for (const auto& entry : fs::recursive_directory_iterator(root, error)) {
      if (!entry.is_regular_file() || entry.path().extension() != ".hlo") continue;
      const std::string relative = fs::relative(entry.path(), root).replace_extension().string();
      std::string name = absl::StrCat(root.filename().string(), "_", relative);
      for (char& c : name) {
        if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
      }
      cases.push_back({entry.path().string(), name});
    }
  }
  std::sort(cases.begin(), cases.end(),
            [](const CorpusCase& a, const CorpusCase& b) { return a.name < b.name; });
  return cases;
}

// Replaces every array constant of the entry by a new parameter and returns
// the constants' values, in parameter order after the existing parameters.
std::vector<Literal> ParameterizeConstants(Module* module) {
  Computation* entry = module->entry();
  std::vector<Literal> values;
  for (Instruction* instruction : InstructionsOf(*entry)) {
    if (instruction->opcode() != Opcode::kConstant || !instruction->shape().IsArray()) continue;
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter, instruction->shape());
    parameter->mutable_attrs()->parameter_number = entry->parameter_count();
    parameter->set_name(UniqueInstructionName(*entry, absl::StrCat(instruction->name(), "_p")));
    Instruction* p = entry->AddInstruction(std::move(parameter));
    values.push_back(instruction->literal());
    ReplaceInstruction(instruction, p);
  }
  entry->SortTopologically();
  return values;
}

class SimplifyCorpusTest : public ::testing::TestWithParam<CorpusCase> {};

void CheckSameResults(const Module& original, const std::vector<Literal>& fixed_arguments,
                      const std::string& what) {
  std::unique_ptr<Module> module = original.Clone();
  for (const std::string& name : PassNames()) {
    auto pass = CreatePass(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    auto changed = (*pass)->Run(module.get());
    ASSERT_TRUE(changed.ok()) << what << ": " << name << ": " << changed.status();
    absl::Status verified = VerifyModule(*module);
    ASSERT_TRUE(verified.ok()) << what << ": invalid after " << name << ": " << verified << "\n"
                               << PrintModule(*module);
  }
  for (uint64_t seed = 1; seed <= 2; ++seed) {
    auto random = testing::RandomArguments(original, seed, /*specials=*/true, seed == 1);
    if (!random.ok()) return;  // tokens and the like: nothing to feed
    // Parameters beyond the original ones carry the former constants.
    std::vector<Literal> arguments;
    const int64_t n = original.entry()->parameter_count();
    const int64_t first_fixed = n - static_cast<int64_t>(fixed_arguments.size());
    for (int64_t i = 0; i < n; ++i) {
      arguments.push_back(i < first_fixed ? (*random)[i] : fixed_arguments[i - first_fixed]);
    }
    // Random starting states can make loops endless (x *= 2 from -0).
    EvaluatorOptions options;
    options.max_while_iterations = 10000;
    absl::StatusOr<Literal> before = EvaluateModule(original, arguments, options);
    if (!before.ok()) return;  // the evaluator cannot run it; nothing to compare
    absl::StatusOr<Literal> after = EvaluateModule(*module, arguments, options);
    ASSERT_TRUE(after.ok()) << what << ": the output fails to evaluate: " << after.status() << "\n"
                            << PrintModule(*module);
    EXPECT_TRUE(*before == *after) << what << " seed " << seed << ": results differ\nbefore: "
                                   << before->ToString() << "\nafter:  " << after->ToString()
                                   << "\n" << PrintModule(*module);
  }
}

TEST_P(SimplifyCorpusTest, SameResults) {
  std::ifstream in(GetParam().path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  auto module = ParseHloModule(text.str(), GetParam().path);
  if (!module.ok() || !VerifyModule(**module).ok()) GTEST_SKIP() << "does not parse or verify";
  for (const Instruction* p : (*module)->entry()->parameters()) {
    if (p == nullptr) GTEST_SKIP() << "sparse parameters";
  }
  // Batch norm expands only inexactly; its cases are golden tests.
  CheckSameResults(**module, {}, "as written");
  std::unique_ptr<Module> parameterized = (*module)->Clone();
  std::vector<Literal> constants = ParameterizeConstants(parameterized.get());
  if (constants.empty() || !VerifyModule(*parameterized).ok()) return;
  CheckSameResults(*parameterized, constants, "constants as parameters");
}

INSTANTIATE_TEST_SUITE_P(Corpus, SimplifyCorpusTest, ::testing::ValuesIn(FindCases()),
                         [](const ::testing::TestParamInfo<CorpusCase>& info) {
                           return info.param.name;
                         });
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(SimplifyCorpusTest);

}  // namespace
}  // namespace xjit
