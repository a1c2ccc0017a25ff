// The compile cache (see compile_cache.h).
#include "jit/compile_cache.h"

#include <list>
#include <mutex>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "ir/structural_key.h"
#include "jit/code/jitdump.h"
#include "jit/code/perf_map.h"
#include "jit/target.h"

namespace xjit::jit {
namespace {

struct Cache {
  std::mutex mutex;
  // Most recently used first; the map points into the list.
  std::list<std::pair<std::string, CachedCompile>> entries;
  // Keys view the list's strings (list nodes never move).
  absl::flat_hash_map<absl::string_view,
                      std::list<std::pair<std::string, CachedCompile>>::iterator>
      index;
  CompileCacheStats stats;
};

Cache& GetCache() {
  static Cache* cache = new Cache();  // Never destroyed: compiles may run at exit.
  return *cache;
}

}  // namespace

std::optional<std::string> CompileCacheKey(const Module& module, const CompileOptions& options) {
  // Profiling output is written while compiling: such compiles are not cached.
  if (!options.cache || !options.dump_dir.empty() || PerfMapEnabled(options.perf_map) ||
      options.jitdump || JitDumpRequestedByEnvironment()) {
    return std::nullopt;
  }
  // The key is computed before the module is verified (a hit skips that):
  // leave modules with null computations to the uncached path, whose
  // verifier reports them.
  int64_t constant_bytes = 0;
  for (const auto& computation : module.computations()) {
    if (computation == nullptr) return std::nullopt;
    for (const auto& instruction : computation->instructions()) {
      // A custom call's step is planned from the registries as they are at
      // compile time (jit/calls/custom_call.h), which the text does not capture.
      if (instruction->opcode() == Opcode::kCustomCall) return std::nullopt;
      if (instruction->opcode() == Opcode::kConstant) {
        constant_bytes += static_cast<int64_t>(instruction->literal().data().size());
        if (constant_bytes > kMaxCachedConstantBytes) return std::nullopt;
      }
      for (const Computation* callee : instruction->called_computations()) {
        if (callee == nullptr) return std::nullopt;
      }
    }
  }
  const Isa isa = options.interpret_only ? Isa::kAuto
                  : options.isa == Isa::kAuto ? BestHostIsa()
                                              : options.isa;
  // Every option that changes the executable or the report, then the
  // module's structural key (ir/structural_key.h).
  std::string key = absl::StrCat(
      "isa=", IsaName(isa), " threads=", options.threads,
      " split_min_chunk_ns=", options.split_min_chunk_ns, " asm=", options.collect_asm,
      " passes=", options.run_passes, " disabled=", absl::StrJoin(options.disabled_passes, ","),
      " only=", absl::StrJoin(options.only_passes, ","), " interpret=", options.interpret_only,
      " math=", static_cast<int>(options.math), " row_groups=", options.row_groups,
      " row_fusion=", options.row_fusion, " while_state_in_place=", options.while_state_in_place,
      " bind_loops=", options.bind_loops, " native_loops=", options.native_loops, " after=",
      options.native_loop_after, " inline_loop_kernels=", options.inline_loop_kernels,
      " max_while=", options.max_while_iterations, "\n");
  AppendStructuralKey(module, &key);
  return key;
}

std::optional<CachedCompile> LookupCompileCache(const std::string& key) {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.index.find(key);
  if (it == cache.index.end()) {
    ++cache.stats.misses;
    return std::nullopt;
  }
  ++cache.stats.hits;
  cache.entries.splice(cache.entries.begin(), cache.entries, it->second);
  return it->second->second;
}

void InsertCompileCache(const std::string& key, CachedCompile entry) {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  auto it = cache.index.find(key);
  if (it != cache.index.end()) {  // Another thread compiled it meanwhile.
    cache.entries.splice(cache.entries.begin(), cache.entries, it->second);
    return;
  }
  cache.entries.emplace_front(key, std::move(entry));
  cache.index[cache.entries.front().first] = cache.entries.begin();
  while (static_cast<int>(cache.entries.size()) > kCompileCacheEntries) {
    cache.index.erase(cache.entries.back().first);
    cache.entries.pop_back();
  }
}

CompileCacheStats GetCompileCacheStats() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  CompileCacheStats stats = cache.stats;
  stats.entries = static_cast<int64_t>(cache.entries.size());
  return stats;
}

void ClearCompileCache() {
  Cache& cache = GetCache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  cache.index.clear();
  cache.entries.clear();
}

}  // namespace xjit::jit
