// The compile cache: a process-wide map from what determines a compile's
// result to the executable it gave, so that compiling the same module with
// the same options on the same CPU again costs a lookup (issue 14).
//
// The key is the module's structural key (ir/structural_key.h: a binary
// encoding of every computation, instruction, shape, attribute and literal,
// written straight from the IR), every CompileOptions field that changes the
// result, and the instruction set the compile targets (kAuto resolved to the
// host's). The map hashes the key and compares it whole, so two modules
// share an entry only when they are structurally identical (no false hits
// from hash collisions). A hit returns a new Executable over the cached
// one's spec (runtime::Executable shares specs; runs keep their state apart)
// and a copy of the cached CompileReport with cache_hit set; it skips
// verifying the module (the identical module was verified by the compile
// that filled the entry). Writing the key is most of a hit's cost (about
// 0.14 µs per instruction for 100 instructions; docs/compile_time.md).
//
// Not cached: compiles that write files (dump_dir) or perf map entries,
// whose side effects a hit would skip; modules with custom calls, whose
// steps depend on the custom-call registries at compile time; and modules
// whose constants hold more than kMaxCachedConstantBytes, since the key
// holds every constant's bytes (a 256 MiB constant made three more copies
// of itself while compiling, and up to kCompileCacheEntries such keys stay
// alive). The cache keeps at most
// kCompileCacheEntries executables (and their code) alive; the least
// recently used is dropped first.
#ifndef XJIT_JIT_COMPILE_CACHE_H_
#define XJIT_JIT_COMPILE_CACHE_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "ir/module.h"
#include "jit/compile.h"
#include "jit/compile_options.h"
#include "runtime/executable.h"

namespace xjit::jit {

inline constexpr int kCompileCacheEntries = 64;
inline constexpr int64_t kMaxCachedConstantBytes = int64_t{16} << 20;

// The cache key of compiling `module` with `options`, or nullopt when such a
// compile is not cached (see above).
std::optional<std::string> CompileCacheKey(const Module& module, const CompileOptions& options);

struct CachedCompile {
  std::shared_ptr<const runtime::ExecutableSpec> spec;
  CompileReport report;
};

// The entry under `key` (now the most recently used), or nullopt.
std::optional<CachedCompile> LookupCompileCache(const std::string& key);
void InsertCompileCache(const std::string& key, CachedCompile entry);

struct CompileCacheStats {
  int64_t hits = 0;
  int64_t misses = 0;
  int64_t entries = 0;
};
CompileCacheStats GetCompileCacheStats();
// Drops every entry (their executables stay valid while referenced).
void ClearCompileCache();

}  // namespace xjit::jit

#endif  // XJIT_JIT_COMPILE_CACHE_H_
