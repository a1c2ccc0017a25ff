// ParseOrDie: the benchmarks' modules are written in the benchmark source, so
// one that does not parse is a bug in the benchmark: print why and abort.
#ifndef XJIT_BENCHMARKS_PARSE_OR_DIE_H_
#define XJIT_BENCHMARKS_PARSE_OR_DIE_H_

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>

#include "ir/hlo_text/parser.h"
#include "ir/module.h"

namespace xjit {

inline std::unique_ptr<Module> ParseOrDie(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "benchmark");
  if (!module.ok()) {
    std::fprintf(stderr, "benchmark module does not parse: %s\n%s\n",
                 std::string(module.status().message()).c_str(), text.c_str());
    std::abort();
  }
  return *std::move(module);
}

}  // namespace xjit

#endif  // XJIT_BENCHMARKS_PARSE_OR_DIE_H_
