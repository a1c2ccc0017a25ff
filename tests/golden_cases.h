// The case files of a golden test: every `.hlo` file below a folder, each
// named for gtest by its path relative to that folder (`<group>/<case>` as
// `<group>_<case>`), sorted by name so that runs list them in one order. Used
// by the passes' golden test (tests/passes/golden/) and the kernel-program
// golden test (tests/jit/kernel_golden/); each gives the files its own format.
#ifndef XJIT_TESTS_GOLDEN_CASES_H_
#define XJIT_TESTS_GOLDEN_CASES_H_

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "absl/strings/ascii.h"

namespace xjit::golden {

struct GoldenCase {
  std::string path;
  std::string name;  // the relative path without `.hlo`, non-alphanumerics as '_'
};

inline void PrintTo(const GoldenCase& golden, std::ostream* os) { *os << golden.path; }

// The cases below `root`; none when `root` is not a folder (the tests check
// that their folder is not empty, so a wrong path cannot pass).
inline std::vector<GoldenCase> FindGoldenCases(const std::string& root) {
  namespace fs = std::filesystem;
  std::vector<GoldenCase> cases;
  std::error_code error;
  if (!fs::is_directory(root, error)) return cases;
  for (const auto& entry : fs::recursive_directory_iterator(root, error)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".hlo") continue;
    std::string name = fs::relative(entry.path(), root).replace_extension().string();
    for (char& c : name) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
    }
    cases.push_back({entry.path().string(), name});
  }
  std::sort(cases.begin(), cases.end(),
            [](const GoldenCase& a, const GoldenCase& b) { return a.name < b.name; });
  return cases;
}

inline std::string ReadGoldenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

}  // namespace xjit::golden

#endif  // XJIT_TESTS_GOLDEN_CASES_H_
