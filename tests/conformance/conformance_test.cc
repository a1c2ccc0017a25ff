// Conformance test: every tests/conformance/<area>/<case>.hlo is parsed,
// verified and run on every backend, and the entry computation's results are
// compared with <case>.expected (format: docs/conformance.md).
//
// The expected values come from the seed documents or from hand calculation,
// never from running xjit, so a failure means that either the case or the
// backend is wrong; the message says which entry and which element differ.
//
// Backends are a test parameter: the reference evaluator, and the JIT
// (jit::Compile with the pass pipeline on, then Executable::Run). A module
// the JIT refuses with Unimplemented (dynamic shapes, several replicas) is
// skipped on it with the reason, never silently.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ir/element_type.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "runtime/executable.h"


#ifndef XJIT_CONFORMANCE_DIR
#error "XJIT_CONFORMANCE_DIR must name the folder holding the cases"
#endif

namespace xjit {
namespace {

namespace fs = std::filesystem;

// ---------------------------------------------------------------------------
// Backends

enum class Backend { kEvaluator, kJit };

std::string BackendName(Backend backend) {
  switch (backend) {
    case Backend::kEvaluator:
      return "evaluator";
    case Backend::kJit:
      return "jit";
  }
  return "unknown";
}

std::vector<Backend> AllBackends() { return {Backend::kEvaluator, Backend::kJit}; }

// Runs the entry computation of a verified module (which takes no parameters)
// and returns its root value.
absl::StatusOr<Literal> RunOnBackend(Backend backend, const Module& module) {
  switch (backend) {
    case Backend::kEvaluator: {
      EvaluatorOptions options;
      options.replica_count = module.replica_count();
      // A case that loops forever fails instead of hanging the suite.
      options.max_while_iterations = 10'000'000;
      return EvaluateModule(module, {}, options);
    }
    case Backend::kJit: {
      if (module.replica_count() > 1) {
        return absl::UnimplementedError("the jit runs one replica (replica_count > 1)");
      }
      XJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> executable,
                            jit::Compile(module, jit::CompileOptions()));
      return executable->Run(absl::Span<const Literal>());
    }
  }
  return absl::InternalError("unknown backend");
}

// ---------------------------------------------------------------------------
// The .expected file

struct ExpectedEntry {
  int line = 0;          // 1-based line where the entry starts
  std::string text;      // the literal, shape first
  double tolerance = 0;  // 0: exact
};

struct Expected {
  std::optional<std::string> error;  // set: running must fail with this substring
  std::vector<ExpectedEntry> entries;
};

// Whether `line` starts an entry: an element type name directly followed by '['.
bool StartsEntry(absl::string_view line) {
  size_t n = 0;
  while (n < line.size() && (absl::ascii_isalnum(line[n]) || line[n] == '_')) ++n;
  if (n == 0 || n >= line.size() || line[n] != '[') return false;
  return ParseElementType(line.substr(0, n)).has_value();
}

absl::StatusOr<Expected> ParseExpected(const std::string& text) {
  Expected expected;
  double tolerance = 0;
  std::optional<ExpectedEntry> current;
  auto flush = [&]() {
    if (current.has_value()) expected.entries.push_back(std::move(*current));
    current.reset();
  };
  int line_number = 0;
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    ++line_number;
    absl::string_view line = absl::StripAsciiWhitespace(raw);
    if (line.empty()) continue;
    if (absl::StartsWith(line, "#")) continue;
    if (absl::ConsumePrefix(&line, "tolerance:")) {
      flush();
      if (!absl::SimpleAtod(absl::StripAsciiWhitespace(line), &tolerance) || tolerance < 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("line ", line_number, ": bad tolerance '", line, "'"));
      }
      continue;
    }
    if (absl::ConsumePrefix(&line, "error:")) {
      flush();
      expected.error = std::string(absl::StripAsciiWhitespace(line));
      continue;
    }
    if (StartsEntry(line)) {
      flush();
      current = ExpectedEntry{line_number, std::string(line), tolerance};
      continue;
    }
    if (!current.has_value()) {
      return absl::InvalidArgumentError(
          absl::StrCat("line ", line_number, ": expected an entry, 'tolerance:' or 'error:', found '",
                       line, "'"));
    }
    absl::StrAppend(&current->text, " ", line);
  }
  flush();
  if (expected.error.has_value() && !expected.entries.empty()) {
    return absl::InvalidArgumentError("a file with 'error:' must have no entries");
  }
  if (!expected.error.has_value() && expected.entries.empty()) {
    return absl::InvalidArgumentError("no entries and no 'error:' line");
  }
  return expected;
}

// After a shape, `{1, 2}` reads as a layout, so XLA's literal syntax needs the
// layout written (`f32[2]{0} {1, 2}`). For convenience an entry may omit it:
// when the text after the shape holds a single brace group, the default
// layout is inserted.
std::string WithLayout(const std::string& text) {
  size_t open = text.find('[');
  size_t close = text.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return text;
  absl::string_view dims = absl::string_view(text).substr(open + 1, close - open - 1);
  if (absl::StripAsciiWhitespace(dims).empty()) return text;  // scalar
  int64_t rank = 1 + std::count(dims.begin(), dims.end(), ',');
  int groups = 0;
  int depth = 0;
  for (size_t i = close + 1; i < text.size(); ++i) {
    if (text[i] == '{') {
      if (depth++ == 0) ++groups;
    } else if (text[i] == '}') {
      --depth;
    }
  }
  if (groups != 1) return text;
  std::vector<int64_t> minor_to_major;
  for (int64_t d = rank - 1; d >= 0; --d) minor_to_major.push_back(d);
  return absl::StrCat(text.substr(0, close + 1), "{", absl::StrJoin(minor_to_major, ","), "}",
                      text.substr(close + 1));
}

// ---------------------------------------------------------------------------
// Comparison

void Flatten(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.elements()) Flatten(element, out);
    return;
  }
  out->push_back(&literal);
}

std::vector<int64_t> MultiIndex(const Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    index[d] = linear % shape.dimensions(d);
    linear /= shape.dimensions(d);
  }
  return index;
}

std::string IndexString(absl::Span<const int64_t> index) {
  return absl::StrCat("[", absl::StrJoin(index, ","), "]");
}

// Exact float equality: the same value and sign of zero; any NaN equals any NaN.
bool SameFloat(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return std::bit_cast<uint64_t>(a) == std::bit_cast<uint64_t>(b);
}

bool CloseFloat(double actual, double expected, double tolerance) {
  if (tolerance == 0) return SameFloat(actual, expected);
  if (std::isnan(actual) || std::isnan(expected)) return std::isnan(actual) && std::isnan(expected);
  if (std::isinf(actual) || std::isinf(expected)) return actual == expected;
  double diff = std::fabs(actual - expected);
  return diff <= tolerance || diff <= tolerance * std::fabs(expected);
}

std::string FloatString(double v) { return absl::StrFormat("%.17g", v); }

// Compares one flattened result with its expected literal; returns the
// differences found (at most a few), empty when they agree.
std::vector<std::string> CompareArrays(const Literal& actual, const Literal& expected,
                                       double tolerance) {
  std::vector<std::string> diffs;
  const Shape& as = actual.shape();
  const Shape& es = expected.shape();
  if (!as.IsArray() || as.element_type() != es.element_type() ||
      !as.SameDimensions(es)) {
    diffs.push_back(absl::StrCat("shape ", as.ToString(false), " but expected ",
                                 es.ToString(false)));
    return diffs;
  }
  ElementType type = es.element_type();
  constexpr int kMaxDiffs = 8;
  int64_t mismatches = 0;
  for (int64_t i = 0; i < es.element_count(); ++i) {
    std::vector<int64_t> index = MultiIndex(es, i);
    bool same = true;
    std::string a_text, e_text;
    if (IsComplex(type)) {
      std::complex<double> a = actual.GetComplex(index);
      std::complex<double> e = expected.GetComplex(index);
      same = CloseFloat(a.real(), e.real(), tolerance) && CloseFloat(a.imag(), e.imag(), tolerance);
      a_text = absl::StrCat("(", FloatString(a.real()), ", ", FloatString(a.imag()), ")");
      e_text = absl::StrCat("(", FloatString(e.real()), ", ", FloatString(e.imag()), ")");
    } else if (IsFloat(type)) {
      double a = actual.GetDouble(index);
      double e = expected.GetDouble(index);
      same = CloseFloat(a, e, tolerance);
      a_text = FloatString(a);
      e_text = FloatString(e);
    } else {
      uint64_t a = actual.GetBits(index);
      uint64_t e = expected.GetBits(index);
      same = a == e;
      if (IsUnsignedInteger(type)) {
        a_text = absl::StrCat(a);
        e_text = absl::StrCat(e);
      } else {
        a_text = absl::StrCat(actual.GetInt(index));
        e_text = absl::StrCat(expected.GetInt(index));
      }
    }
    if (!same) {
      ++mismatches;
      if (mismatches <= kMaxDiffs) {
        diffs.push_back(
            absl::StrCat("at ", IndexString(index), ": got ", a_text, ", expected ", e_text));
      }
    }
  }
  if (mismatches > kMaxDiffs) {
    diffs.push_back(absl::StrCat("... ", mismatches, " mismatching elements in all"));
  }
  return diffs;
}

// ---------------------------------------------------------------------------
// Case discovery

struct CaseParam {
  std::string name;  // "<area>/<case>"
  std::string hlo_path;
  Backend backend;
};

std::vector<CaseParam> FindCases() {
  std::vector<std::pair<std::string, std::string>> found;
  std::error_code ec;
  // XJIT_CONFORMANCE_DIR in the environment points the test at another copy
  // of the corpus (used to check that the test catches wrong expectations).
  const char* override_dir = std::getenv("XJIT_CONFORMANCE_DIR");
  fs::path root(override_dir != nullptr ? override_dir : XJIT_CONFORMANCE_DIR);
  for (fs::recursive_directory_iterator it(root, ec), end; !ec && it != end; it.increment(ec)) {
    if (!it->is_regular_file() || it->path().extension() != ".hlo") continue;
    fs::path relative = fs::relative(it->path(), root);
    relative.replace_extension();
    found.emplace_back(relative.generic_string(), it->path().string());
  }
  std::sort(found.begin(), found.end());
  std::vector<CaseParam> cases;
  for (Backend backend : AllBackends()) {
    for (const auto& [name, path] : found) cases.push_back(CaseParam{name, path, backend});
  }
  return cases;
}

// Keeps gtest from printing the parameter as raw bytes.
void PrintTo(const CaseParam& param, std::ostream* os) {
  *os << param.name << " on " << BackendName(param.backend);
}

std::string ParamName(const ::testing::TestParamInfo<CaseParam>& info) {
  std::string name = absl::StrCat(info.param.name, "_", BackendName(info.param.backend));
  for (char& c : name) {
    if (!absl::ascii_isalnum(c)) c = '_';
  }
  return name;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

// ---------------------------------------------------------------------------
// The test

class ConformanceTest : public ::testing::TestWithParam<CaseParam> {};

TEST_P(ConformanceTest, Matches) {
  const CaseParam& param = GetParam();
  std::string expected_path = param.hlo_path.substr(0, param.hlo_path.size() - 4) + ".expected";

  absl::StatusOr<std::string> hlo_text = ReadFile(param.hlo_path);
  ASSERT_TRUE(hlo_text.ok()) << hlo_text.status();
  absl::StatusOr<std::string> expected_text = ReadFile(expected_path);
  ASSERT_TRUE(expected_text.ok()) << expected_text.status();
  absl::StatusOr<Expected> expected = ParseExpected(*expected_text);
  ASSERT_TRUE(expected.ok()) << expected_path << ": " << expected.status();

  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(*hlo_text, param.hlo_path);
  ASSERT_TRUE(module.ok()) << "parse: " << module.status();

  // Verification and execution may fail only where the case expects an error.
  absl::Status verified = VerifyModule(**module);
  absl::StatusOr<Literal> result =
      verified.ok() ? RunOnBackend(param.backend, **module) : absl::StatusOr<Literal>(verified);
  if (expected->error.has_value()) {
    ASSERT_FALSE(result.ok()) << "expected an error containing '" << *expected->error
                              << "', but the module ran";
    EXPECT_TRUE(absl::StrContains(absl::AsciiStrToLower(result.status().message()),
                                  absl::AsciiStrToLower(*expected->error)))
        << "error '" << result.status().message() << "' does not contain '" << *expected->error
        << "'";
    return;
  }
  ASSERT_TRUE(verified.ok()) << "verify: " << verified;
  if (param.backend == Backend::kJit && result.status().code() == absl::StatusCode::kUnimplemented) {
    GTEST_SKIP() << "jit: " << result.status().message();
  }
  ASSERT_TRUE(result.ok()) << BackendName(param.backend) << ": " << result.status();

  std::vector<const Literal*> actual;
  Flatten(*result, &actual);
  ASSERT_EQ(actual.size(), expected->entries.size())
      << "the root has " << actual.size() << " results, the expected file lists "
      << expected->entries.size();
  for (size_t i = 0; i < actual.size(); ++i) {
    const ExpectedEntry& entry = expected->entries[i];
    SCOPED_TRACE(absl::StrCat("result ", i, " (", expected_path, ":", entry.line, ")"));
    if (absl::StartsWith(entry.text, "token[")) {
      EXPECT_TRUE(actual[i]->shape().IsToken())
          << "expected a token, got " << actual[i]->shape().ToString();
      continue;
    }
    absl::StatusOr<Literal> want = ParseLiteral(WithLayout(entry.text));
    ASSERT_TRUE(want.ok()) << "bad expected literal: " << want.status();
    for (const std::string& diff : CompareArrays(*actual[i], *want, entry.tolerance)) {
      ADD_FAILURE() << diff;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ConformanceTest, ::testing::ValuesIn(FindCases()), ParamName);
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(ConformanceTest);

// The expected-file reader itself, on fixed inputs.
TEST(ExpectedFormatTest, ParsesEntriesTolerancesAndErrors) {
  absl::StatusOr<Expected> e = ParseExpected(
      "# comment\nf32[2,2] { { 1, 2 },\n  { 3, 4 } }\ntolerance: 1e-6\ns32[] 7\n");
  ASSERT_TRUE(e.ok()) << e.status();
  ASSERT_EQ(e->entries.size(), 2u);
  EXPECT_EQ(e->entries[0].text, "f32[2,2] { { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(e->entries[0].tolerance, 0);
  EXPECT_EQ(e->entries[1].text, "s32[] 7");
  EXPECT_EQ(e->entries[1].tolerance, 1e-6);
  EXPECT_EQ(e->entries[1].line, 5);

  absl::StatusOr<Expected> err = ParseExpected("error: infeed\n");
  ASSERT_TRUE(err.ok());
  EXPECT_EQ(err->error, "infeed");

  EXPECT_FALSE(ParseExpected("").ok());
  EXPECT_FALSE(ParseExpected("1, 2\n").ok());
  EXPECT_FALSE(ParseExpected("error: x\ns32[] 1\n").ok());
}

TEST(ExpectedFormatTest, InsertsTheDefaultLayout) {
  EXPECT_EQ(WithLayout("f32[3] {1, 2, 3}"), "f32[3]{0} {1, 2, 3}");
  EXPECT_EQ(WithLayout("s32[2,2] { {1, 2}, {3, 4} }"), "s32[2,2]{1,0} { {1, 2}, {3, 4} }");
  EXPECT_EQ(WithLayout("f32[2]{0} {1, 2}"), "f32[2]{0} {1, 2}");
  EXPECT_EQ(WithLayout("s32[] 7"), "s32[] 7");
}

TEST(ExpectedFormatTest, FloatComparison) {
  EXPECT_TRUE(SameFloat(std::nan(""), -std::nan("")));
  EXPECT_FALSE(SameFloat(0.0, -0.0));
  EXPECT_TRUE(CloseFloat(1.0 + 1e-9, 1.0, 1e-6));
  EXPECT_FALSE(CloseFloat(1.1, 1.0, 1e-6));
  EXPECT_TRUE(CloseFloat(1e9 + 1, 1e9, 1e-6));  // relative
  EXPECT_FALSE(CloseFloat(INFINITY, 1e300, 1e-6));
  EXPECT_TRUE(CloseFloat(-0.0, 0.0, 1e-6));
}

}  // namespace
}  // namespace xjit
