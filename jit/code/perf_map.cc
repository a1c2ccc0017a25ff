// perf map writer (see perf_map.h).
#include "jit/code/perf_map.h"

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>

#include "absl/strings/str_format.h"

namespace xjit::jit {

bool PerfMapEnabled(bool option) {
  const char* value = std::getenv("XJIT_PERF_MAP");
  if (value != nullptr && std::strcmp(value, "1") == 0) return true;
  if (value != nullptr && std::strcmp(value, "0") == 0) return false;
  return option;
}

void WritePerfMapEntry(const void* start, int64_t size, absl::string_view name) {
  static std::mutex mutex;
  std::lock_guard<std::mutex> lock(mutex);
  const std::string path = absl::StrFormat("/tmp/perf-%d.map", static_cast<int>(getpid()));
  std::FILE* file = std::fopen(path.c_str(), "a");
  if (file == nullptr) return;
  const std::string line = absl::StrFormat("%x %x %s\n", reinterpret_cast<uintptr_t>(start),
                                           static_cast<uint64_t>(size), name);
  std::fwrite(line.data(), 1, line.size(), file);
  std::fclose(file);
}

}  // namespace xjit::jit
