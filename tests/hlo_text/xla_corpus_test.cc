// Corpus test: every non-templated module of ../shared/corpus/xla-tests
// parses, prints to a fixed point (print(parse(print(parse(m)))) ==
// print(parse(m))) and verifies. Modules that are broken on purpose or by the
// corpus extraction are listed below with the reason; for them the test
// checks that parsing fails cleanly.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/verifier.h"

namespace xjit {
namespace {

namespace fs = std::filesystem;

fs::path CorpusDir() { return fs::path(XJIT_SHARED_DIR) / "corpus" / "xla-tests"; }

// Modules that are not valid HLO as stored, each with why.
const absl::flat_hash_map<std::string, std::string>& ExpectedParseFailures() {
  static const auto* failures = new absl::flat_hash_map<std::string, std::string>{
      {"xla__tests__collective_ops_test.cc__L73.hlo",
       "templated: uses the placeholder opcode DATATYPE"},
      {"xla__tests__convolution_test.cc__L2029.hlo", "extraction cut the module off mid-body"},
      {"xla__tests__convolution_test.cc__L2041.hlo", "extraction cut the module off mid-body"},
      {"xla__tests__convolution_test.cc__L2209.hlo", "extraction left a string fragment"},
      {"xla__tests__sort_test.cc__L105.hlo", "templated: ${...} placeholders"},
      {"xla__tests__multioutput_fusion_test.cc__L294.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L315.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L336.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L358.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L380.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L432.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L454.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L477.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L497.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L517.hlo", "calls %Add, never defined"},
      {"xla__tests__multioutput_fusion_test.cc__L539.hlo", "calls %Add, never defined"},
      // The test appends shared helper computations from another string.
      {"xla__tests__collective_pipeline_parallelism_test.cc__L247.hlo", "needs %read_buffer_mb4"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L370.hlo", "needs %read_buffer_mb5"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L493.hlo", "needs %read_buffer_mb4"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L618.hlo", "needs %read_buffer_mb5"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L761.hlo", "needs %read_buffer_mb5"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L1279.hlo", "needs %read_buffer_mb5"},
      {"xla__tests__collective_pipeline_parallelism_test.cc__L1512.hlo", "needs %read_buffer_mb5"},
  };
  return *failures;
}

// Modules that parse but that the verifier rejects, each with why.
const absl::flat_hash_map<std::string, std::string>& ExpectedVerifyFailures() {
  static const auto* failures = new absl::flat_hash_map<std::string, std::string>{
      {"xla__tests__tuple_test.cc__L348.hlo",
       "BadTupleShapeFailsGracefully: tuple shape disagrees with its operands"},
      {"xla__tests__token_hlo_test.cc__L169.hlo", "after-all of an f32 value (XLA runs it unverified)"},
      {"xla__tests__token_hlo_test.cc__L199.hlo", "after-all of an f32 value (XLA runs it unverified)"},
      {"xla__tests__token_hlo_test.cc__L231.hlo", "after-all of an f32 value (XLA runs it unverified)"},
  };
  return *failures;
}

// Modules valid in XLA that our verifier rejects today: reported, not failed,
// so that this test checks the parser and printer. Each is a verifier bug.
const absl::flat_hash_map<std::string, std::string>& KnownVerifierDisagreements() {
  static const auto* disagreements = new absl::flat_hash_map<std::string, std::string>{
      // XLA's alias check compares byte sizes, not shapes (bitcast aliasing).
      {"xla__tests__dynamic_ops_test.cc__L819.hlo", "input_output_alias across a bitcast"},
      {"xla__tests__dynamic_ops_test.cc__L854.hlo", "input_output_alias across a bitcast"},
      {"xla__tests__dynamic_ops_test.cc__L884.hlo", "input_output_alias across a bitcast"},
      {"xla__tests__dynamic_ops_test.cc__L915.hlo", "input_output_alias across a bitcast"},
  };
  return *disagreements;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST(XlaCorpusTest, EveryModuleParsesPrintsToFixedPointAndVerifies) {
  if (!fs::exists(CorpusDir())) GTEST_SKIP() << "no corpus at " << CorpusDir();
  int parsed = 0, expected_failures = 0, verified = 0;
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(CorpusDir())) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() != ".hlo") continue;
    if (name.size() > 9 && name.substr(name.size() - 9) == ".tmpl.hlo") continue;  // templated
    files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  ASSERT_GT(files.size(), 100u);
  for (const fs::path& path : files) {
    const std::string name = path.filename().string();
    SCOPED_TRACE(name);
    const std::string text = ReadFile(path);
    auto module = ParseHloModule(text, name);
    if (ExpectedParseFailures().contains(name)) {
      EXPECT_FALSE(module.ok()) << "expected to fail ("
                                << ExpectedParseFailures().at(name) << ") but parsed";
      ++expected_failures;
      continue;
    }
    if (!module.ok()) {
      ADD_FAILURE() << module.status().message();
      continue;
    }
    ++parsed;
    const std::string first = PrintModule(**module);
    auto reparsed = ParseHloModule(first, name + " (printed)");
    if (!reparsed.ok()) {
      ADD_FAILURE() << "printed text does not parse: " << reparsed.status().message() << "\n"
                    << first;
      continue;
    }
    const std::string second = PrintModule(**reparsed);
    EXPECT_EQ(first, second) << "print is not a fixed point";
    absl::Status verified_status = VerifyModule(**module);
    if (ExpectedVerifyFailures().contains(name)) {
      EXPECT_FALSE(verified_status.ok()) << "expected the verifier to reject it ("
                                         << ExpectedVerifyFailures().at(name) << ")";
    } else if (verified_status.ok()) {
      ++verified;
    } else if (KnownVerifierDisagreements().contains(name)) {
      std::printf("known verifier disagreement on %s (%s): %s\n", name.c_str(),
                  KnownVerifierDisagreements().at(name).c_str(),
                  std::string(verified_status.message()).c_str());
    } else {
      ADD_FAILURE() << "verifier: " << verified_status.message();
    }
  }
  std::printf("parsed %d, verified %d, expected parse failures %d\n", parsed, verified,
              expected_failures);
}

// The StableHLO interpreter corpus is generated text: every module must parse
// and print to a fixed point.
TEST(XlaCorpusTest, StablehloInterpretModulesRoundTrip) {
  const fs::path dir = fs::path(XJIT_SHARED_DIR) / "corpus" / "stablehlo-interpret";
  if (!fs::exists(dir)) GTEST_SKIP() << "no corpus at " << dir;
  int parsed = 0;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".hlo") continue;
    const std::string name = entry.path().filename().string();
    SCOPED_TRACE(name);
    auto module = ParseHloModule(ReadFile(entry.path()), name);
    if (!module.ok()) {
      ADD_FAILURE() << module.status().message();
      continue;
    }
    ++parsed;
    const std::string first = PrintModule(**module);
    auto reparsed = ParseHloModule(first, name + " (printed)");
    if (!reparsed.ok()) {
      ADD_FAILURE() << "printed text does not parse: " << reparsed.status().message();
      continue;
    }
    EXPECT_EQ(first, PrintModule(**reparsed)) << "print is not a fixed point";
  }
  std::printf("parsed %d stablehlo-interpret modules\n", parsed);
}

}  // namespace
}  // namespace xjit
