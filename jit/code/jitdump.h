// jitdump: perf's record of JIT-compiled code, so that `perf annotate` can
// show the instructions of emitted kernels (a perf map, perf_map.h, only
// names code ranges).
//
// The file is DIR/jit-PID.dump (DIR: $XJIT_JITDUMP_DIR, else /tmp), in perf's
// jitdump format (version 1): a header, then per kernel a JIT_CODE_DEBUG_INFO
// record (code address -> line of a text file) followed by a JIT_CODE_LOAD
// record (the kernel's name, address and code bytes). xjit maps the file's
// first page executable once (the marker perf record notices, as an mmap
// event); `perf inject --jit` then turns each record into a small ELF file
// with the kernel's symbol and line table. Timestamps are CLOCK_MONOTONIC,
// the clock of `perf record -k 1`. See docs/profiling.md.
#ifndef XJIT_JIT_JITDUMP_H_
#define XJIT_JIT_JITDUMP_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"

namespace xjit::jit {

// Whether XJIT_JITDUMP=1 is set in the environment.
bool JitDumpRequestedByEnvironment();

// Where machine code starting at `offset` (bytes from the kernel's start)
// comes from: `line` of the kernel's source text (1-based).
struct CodeLine {
  int64_t offset = 0;
  int line = 1;
};

// Writes `source_text` to DIR/xjit-PID/<name>.txt (name's ':' and '/' made
// '.') and appends the kernel to DIR/jit-PID.dump, its code addresses mapped
// to lines of that text by `lines` (sorted by offset or not). Failures are
// ignored, as profiling aids must never break a run.
void WriteJitDumpEntry(const void* code, int64_t size, absl::string_view name,
                       absl::string_view source_text, std::vector<CodeLine> lines);

// The dump file of this process ("" before the first entry).
std::string JitDumpPath();

}  // namespace xjit::jit

#endif  // XJIT_JIT_JITDUMP_H_
