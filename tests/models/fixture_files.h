// What the fixture tests of tests/models (models_test, linalg_models_test)
// share: reading a fixture directory written by models/*/generate.py
// (module.hlo, arg0.npy ..., out0.npy ...) and walking an array's indices.
#ifndef XJIT_TESTS_MODELS_FIXTURE_FILES_H_
#define XJIT_TESTS_MODELS_FIXTURE_FILES_H_

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace xjit::fixtures {

inline std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// How many of PREFIX0.npy, PREFIX1.npy, ... exist in `dir`, counting up to
// the first missing one.
inline int CountFiles(const std::filesystem::path& dir, const std::string& prefix) {
  int n = 0;
  while (std::filesystem::exists(dir / absl::StrCat(prefix, n, ".npy"))) ++n;
  return n;
}

// Calls f(index) for every logical index of `dims`, in row-major order.
template <typename F>
void ForEachIndex(const std::vector<int64_t>& dims, F f) {
  for (int64_t d : dims) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dims.size(), 0);
  while (true) {
    f(index);
    int i = static_cast<int>(dims.size()) - 1;
    while (i >= 0 && ++index[i] == dims[i]) index[i--] = 0;
    if (i < 0) return;
  }
}

}  // namespace xjit::fixtures

#endif  // XJIT_TESTS_MODELS_FIXTURE_FILES_H_
