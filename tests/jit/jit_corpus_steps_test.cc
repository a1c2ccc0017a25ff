// Issue 16's yardstick: `xjit compile` of every module of
// ../shared/corpus/stablehlo-interpret and ../shared/corpus/xla-tests that
// has static shapes, with the entry's non-scalar constants lifted into
// parameters (as `run-corpus --lift` does, so that constant folding hides
// nothing), must give no interpreted step.
//
// Interpreted steps are counted per opcode and printed. Each step still
// expected is listed below, by module and opcode, with the work that removes
// it (FFT: branch fft; collectives, tokens, custom calls, rng, top-k,
// variadic scatter, tiled layouts: the other parts of issue 16). The test
// fails on any interpreted step not listed, and on a listed one that no
// longer happens (so the list only shrinks: delete its line). Once the list
// is empty (the file may hold only comments: kExpected is a vector, so an
// empty list compiles), every interpreted step fails the test: issue 16's
// "zero interpreted steps". Modules that
// do not parse or verify are the xla_corpus_test's business and are
// skipped here, counted. Skips (GTEST_SKIP) without ../shared.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

namespace fs = std::filesystem;

struct ExpectedStep {
  const char* module;  // File name in either corpus folder.
  const char* opcode;  // The interpreted step's opcode.
  const char* owner;   // The work that compiles it.
};

// clang-format off
const std::vector<ExpectedStep> kExpected = {
#include "tests/jit/jit_corpus_steps_expected.inc"
};
// clang-format on

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// The entry's non-scalar constants as parameters (run-corpus's
// lift_constants, line by line): only for an entry without parameters, and
// not for f8/f6/f4 or 2/4-bit integer constants (which run-corpus cannot
// feed from .npy files either).
std::string LiftConstants(const std::string& hlo) {
  static const std::regex kConstant(
      R"(^(\s*)(ROOT\s+)?(%?[\w.\-]+)\s*=\s*([a-z0-9]+)\[([\d,]*)\](\{[^}]*\})?\s+constant\((.*)\)\s*$)");
  static const std::regex kHeader(R"(^(\s*ENTRY\s+%?[\w.\-]+\s*)\((.*?)\)(\s*->.*)$)");
  static const std::regex kMinifloat(R"(^f[864]e)");
  std::vector<std::string> lines = absl::StrSplit(hlo, '\n');
  size_t start = 0;
  while (start < lines.size() && lines[start].find_first_not_of(" \t") != std::string::npos &&
         lines[start].substr(lines[start].find_first_not_of(" \t"), 5) != "ENTRY") {
    ++start;
  }
  if (start == lines.size()) return hlo;
  std::vector<std::string> parameters;
  for (size_t i = start + 1; i < lines.size(); ++i) {
    const std::string& line = lines[i];
    if (line.find_first_not_of(" \t") != std::string::npos &&
        line.substr(line.find_first_not_of(" \t")) == "}") {
      break;
    }
    std::smatch m;
    if (!std::regex_match(line, m, kConstant) || m[5].str().empty()) continue;
    const std::string type = m[4].str();
    if (std::regex_search(type, kMinifloat) || type == "s2" || type == "u2" || type == "s4" ||
        type == "u4") {
      continue;
    }
    const std::string shape = absl::StrCat(type, "[", m[5].str(), "]", m[6].str());
    const size_t k = parameters.size();
    lines[i] = absl::StrCat(m[1].str(), m[2].str(), m[3].str(), " = ", shape, " parameter(", k,
                            ")");
    parameters.push_back(absl::StrCat("p", k, ": ", shape));
  }
  if (parameters.empty()) return hlo;
  std::smatch m;
  std::string header = lines[start];
  if (std::regex_match(header, m, kHeader)) {
    if (m[2].str().find_first_not_of(" \t") != std::string::npos) return hlo;  // Has parameters.
    lines[start] = absl::StrCat(m[1].str(), "(", absl::StrJoin(parameters, ", "), ")", m[3].str());
  }
  return absl::StrJoin(lines, "\n");
}

bool HasDynamicShape(const Module& module) {
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->shape().is_dynamic()) return true;
    }
  }
  return false;
}

// "NAME (OPCODE): why", NAME possibly prefixed by callers: OPCODE.
std::string StepOpcode(const std::string& step) {
  static const std::regex kOpcode(R"(\(([a-z0-9\-]+)\): )");
  std::smatch m;
  return std::regex_search(step, m, kOpcode) ? m[1].str() : "?";
}

TEST(JitCorpusSteps, NoInterpretedStepsBeyondTheListedOnes) {
  const fs::path corpus = fs::path(XJIT_SHARED_DIR) / "corpus";
  if (!fs::exists(corpus / "stablehlo-interpret") || !fs::exists(corpus / "xla-tests")) {
    GTEST_SKIP() << "no corpus at " << corpus << " (../shared is absent)";
  }
  std::vector<fs::path> files;
  for (const char* folder : {"stablehlo-interpret", "xla-tests"}) {
    for (const auto& entry : fs::directory_iterator(corpus / folder)) {
      const std::string name = entry.path().filename().string();
      if (entry.path().extension() != ".hlo") continue;
      if (name.size() > 9 && name.substr(name.size() - 9) == ".tmpl.hlo") continue;
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 800u);

  std::multiset<std::pair<std::string, std::string>> expected;
  std::map<std::pair<std::string, std::string>, std::string> owners;
  for (const ExpectedStep& step : kExpected) {
    expected.insert({step.module, step.opcode});
    owners[{step.module, step.opcode}] = step.owner;
  }
  std::map<std::string, int> by_opcode;        // Every interpreted step.
  std::map<std::string, int> listed_by_owner;  // The listed ones, by owner.
  std::vector<std::string> unexpected;
  int compiled = 0, not_valid = 0, dynamic = 0, failed = 0;
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(LiftConstants(ReadFile(path)));
    if (!module.ok() || !VerifyModule(**module).ok()) {
      ++not_valid;
      continue;
    }
    if (HasDynamicShape(**module)) {
      ++dynamic;
      continue;
    }
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, CompileOptions(), &report);
    if (!executable.ok()) {
      // Compile errors are the corpus runs' business (stablehlo_interpret_
      // corpus_jit); here they only cannot be counted.
      ++failed;
      continue;
    }
    ++compiled;
    for (const std::string& step : UnexpectedInterpretedSteps(report)) {
      const std::string opcode = StepOpcode(step);
      ++by_opcode[opcode];
      auto it = expected.find({name, opcode});
      if (it != expected.end()) {
        ++listed_by_owner[owners[{name, opcode}]];
        expected.erase(it);
      } else {
        unexpected.push_back(absl::StrCat(name, ": ", step));
      }
    }
  }
  std::string table;
  for (const auto& [opcode, count] : by_opcode) absl::StrAppend(&table, "  ", opcode, ": ", count, "\n");
  std::string owners_table;
  for (const auto& [owner, count] : listed_by_owner) {
    absl::StrAppend(&owners_table, "  ", count, "  ", owner, "\n");
  }
  std::printf("%d modules compiled (%d do not parse or verify, %d have dynamic shapes, %d fail "
              "to compile)\ninterpreted steps by opcode:\n%slisted (expected) steps by owner:\n%s",
              compiled, not_valid, dynamic, failed, table.c_str(), owners_table.c_str());
  // With nothing listed, this is issue 16's yardstick itself: no step at all.
  EXPECT_TRUE(unexpected.empty()) << unexpected.size() << " interpreted steps not listed:\n  "
                                  << absl::StrJoin(unexpected, "\n  ");
  std::vector<std::string> stale;
  for (const auto& [module, opcode] : expected) {
    stale.push_back(absl::StrCat("{\"", module, "\", \"", opcode, "\", ...}"));
  }
  EXPECT_TRUE(stale.empty()) << "listed steps that are compiled now (delete their lines from "
                                "tests/jit/jit_corpus_steps_expected.inc):\n  "
                             << absl::StrJoin(stale, "\n  ");
}

}  // namespace
}  // namespace xjit::jit::testing
