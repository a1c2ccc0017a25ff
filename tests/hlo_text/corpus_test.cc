// The project's own HLO text corpus (suite 'golden').
//
// valid/*.hlo: every module parses, verifies, and printing is a fixed point:
//   Print(Parse(Print(Parse(text)))) == Print(Parse(text)).
// Together the valid modules use every opcode of ir/opcode.h and every array
// element type plus token, and the layout and shape features listed below;
// the coverage tests walk the parsed modules, so removing a module can make
// them fail.
// malformed/*.hlo: each begins with one or more `// EXPECT-ERROR: text` lines;
// parse-or-verify must fail with a message containing every such text.
//
// XJIT_HLO_TEXT_DIR (set by meson) is this folder in the source tree.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/module.h"
#include "ir/opcode.h"
#include "ir/verifier.h"

#ifndef XJIT_HLO_TEXT_DIR
#error "XJIT_HLO_TEXT_DIR must name tests/hlo_text"
#endif

namespace xjit {
namespace {

namespace fs = std::filesystem;

std::vector<std::string> ListHlo(const std::string& subdir) {
  std::vector<std::string> names;
  const fs::path dir = fs::path(XJIT_HLO_TEXT_DIR) / subdir;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_regular_file() && entry.path().extension() == ".hlo") {
      names.push_back(entry.path().stem().string());
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string TestName(const testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// ---------------------------------------------------------------------------
// Valid modules

class ValidModuleTest : public testing::TestWithParam<std::string> {};

TEST_P(ValidModuleTest, ParsesVerifiesAndPrintsAFixedPoint) {
  const std::string file = GetParam() + ".hlo";
  const std::string text = ReadFile(fs::path(XJIT_HLO_TEXT_DIR) / "valid" / file);
  ASSERT_FALSE(text.empty()) << file;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, file);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::Status verified = VerifyModule(**module);
  ASSERT_TRUE(verified.ok()) << file << ": " << verified;

  const std::string printed = PrintModule(**module);
  absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(printed, file + " (printed)");
  ASSERT_TRUE(reparsed.ok()) << reparsed.status() << "\nprinted text:\n" << printed;
  absl::Status reverified = VerifyModule(**reparsed);
  EXPECT_TRUE(reverified.ok()) << reverified << "\nprinted text:\n" << printed;
  EXPECT_EQ(PrintModule(**reparsed), printed);
}

INSTANTIATE_TEST_SUITE_P(Corpus, ValidModuleTest, testing::ValuesIn(ListHlo("valid")), TestName);

// ---------------------------------------------------------------------------
// Coverage

struct Coverage {
  std::set<Opcode> opcodes;
  std::set<ElementType> types;
  bool tiles = false;
  bool memory_space = false;
  bool element_size = false;
  bool tail_padding = false;
  bool dynamic_dimension = false;
  bool non_default_layout = false;
  bool nested_tuple = false;
  bool empty_tuple = false;
  bool called_computations = false;
  bool control_predecessors = false;
  bool opaque_attributes = false;
  bool entry_layout = false;
  bool input_output_alias = false;

  void AddShape(const Shape& shape) {
    if (shape.IsTuple()) {
      if (shape.tuple_size() == 0) empty_tuple = true;
      for (const Shape& element : shape.tuple_shapes()) {
        if (element.IsTuple()) nested_tuple = true;
        AddShape(element);
      }
      return;
    }
    types.insert(shape.element_type());
    if (!shape.IsArray()) return;
    for (int64_t i = 0; i < shape.rank(); ++i) {
      if (shape.is_dynamic_dimension(i)) dynamic_dimension = true;
    }
    if (!shape.has_layout()) return;
    const Layout& layout = shape.layout();
    if (!layout.tiles.empty()) tiles = true;
    if (layout.memory_space != 0) memory_space = true;
    if (layout.element_size_in_bits != 0) element_size = true;
    if (layout.tail_padding_alignment_in_elements > 1) tail_padding = true;
    if (!(layout == Layout::Default(shape.rank()))) non_default_layout = true;
  }

  void AddModule(const Module& module) {
    if (module.entry_parameter_layouts().has_value()) entry_layout = true;
    if (!module.input_output_aliases().empty()) input_output_alias = true;
    for (const auto& computation : module.computations()) {
      for (const auto& instruction : computation->instructions()) {
        opcodes.insert(instruction->opcode());
        AddShape(instruction->shape());
        if (!instruction->called_computations().empty()) called_computations = true;
        if (!instruction->control_predecessors().empty()) control_predecessors = true;
        if (!instruction->opaque_attributes().empty()) opaque_attributes = true;
      }
    }
  }
};

Coverage ComputeCoverage() {
  Coverage coverage;
  for (const std::string& name : ListHlo("valid")) {
    const std::string text = ReadFile(fs::path(XJIT_HLO_TEXT_DIR) / "valid" / (name + ".hlo"));
    absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, name + ".hlo");
    if (module.ok()) coverage.AddModule(**module);
  }
  return coverage;
}

TEST(CorpusCoverage, HasEnoughModules) {
  EXPECT_GE(ListHlo("valid").size(), 170u);
  EXPECT_GE(ListHlo("malformed").size(), 45u);
}

TEST(CorpusCoverage, UsesEveryOpcode) {
  const Coverage coverage = ComputeCoverage();
  std::vector<std::string> missing;
#define XJIT_CHECK_OPCODE(e, name, arity) \
  if (!coverage.opcodes.contains(Opcode::e)) missing.push_back(name);
  XJIT_OPCODES(XJIT_CHECK_OPCODE)
#undef XJIT_CHECK_OPCODE
  EXPECT_TRUE(missing.empty()) << "opcodes no valid module uses: " << absl::StrJoin(missing, ", ");
  EXPECT_EQ(coverage.opcodes.size(), static_cast<size_t>(kNumOpcodes));
}

TEST(CorpusCoverage, UsesEveryElementType) {
  const Coverage coverage = ComputeCoverage();
  std::vector<std::string> missing;
#define XJIT_CHECK_TYPE(e, name, bits, kind)                                             \
  if (ElementType::e != ElementType::kOpaque && ElementType::e != ElementType::kTuple && \
      !coverage.types.contains(ElementType::e)) {                                        \
    missing.push_back(name);                                                             \
  }
  XJIT_ELEMENT_TYPES(XJIT_CHECK_TYPE)
#undef XJIT_CHECK_TYPE
  EXPECT_TRUE(missing.empty()) << "element types no valid module uses: "
                               << absl::StrJoin(missing, ", ");
}

TEST(CorpusCoverage, UsesLayoutShapeAndAttributeFeatures) {
  const Coverage c = ComputeCoverage();
  EXPECT_TRUE(c.tiles) << "tiled layout T(..)";
  EXPECT_TRUE(c.memory_space) << "memory space S(n)";
  EXPECT_TRUE(c.element_size) << "element size E(n)";
  EXPECT_TRUE(c.tail_padding) << "tail padding L(n)";
  EXPECT_TRUE(c.dynamic_dimension) << "dynamic dimension [<=n]";
  EXPECT_TRUE(c.non_default_layout) << "a non-default minor_to_major";
  EXPECT_TRUE(c.nested_tuple) << "nested tuple";
  EXPECT_TRUE(c.empty_tuple) << "empty tuple";
  EXPECT_TRUE(c.called_computations) << "called computations";
  EXPECT_TRUE(c.control_predecessors) << "control-predecessors";
  EXPECT_TRUE(c.opaque_attributes) << "metadata / sharding / frontend attributes";
  EXPECT_TRUE(c.entry_layout) << "entry_computation_layout";
  EXPECT_TRUE(c.input_output_alias) << "input_output_alias";
}

// ---------------------------------------------------------------------------
// Malformed modules

std::vector<std::string> Expectations(absl::string_view text) {
  constexpr absl::string_view kPrefix = "// EXPECT-ERROR: ";
  std::vector<std::string> expectations;
  while (absl::StartsWith(text, kPrefix)) {
    text.remove_prefix(kPrefix.size());
    const size_t end = text.find('\n');
    std::string line(text.substr(0, end));
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.pop_back();
    expectations.push_back(line);
    if (end == absl::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return expectations;
}

class MalformedModuleTest : public testing::TestWithParam<std::string> {};

TEST_P(MalformedModuleTest, IsRejectedWithTheExpectedMessage) {
  const std::string file = GetParam() + ".hlo";
  const std::string text = ReadFile(fs::path(XJIT_HLO_TEXT_DIR) / "malformed" / file);
  const std::vector<std::string> expectations = Expectations(text);
  ASSERT_FALSE(expectations.empty()) << file << " lacks a first-line `// EXPECT-ERROR: ` comment";
  std::string message;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, file);
  if (!module.ok()) {
    message = std::string(module.status().message());
  } else {
    absl::Status verified = VerifyModule(**module);
    ASSERT_FALSE(verified.ok()) << file << " was accepted; printed:\n" << PrintModule(**module);
    message = std::string(verified.message());
  }
  for (const std::string& expected : expectations) {
    EXPECT_TRUE(absl::StrContains(message, expected))
        << file << ": expected the error to contain \"" << expected << "\"\nactual: " << message;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, MalformedModuleTest, testing::ValuesIn(ListHlo("malformed")),
                         TestName);

}  // namespace
}  // namespace xjit
