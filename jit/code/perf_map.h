// perf map: lets `perf report` name JIT-compiled code. perf reads
// /tmp/perf-PID.map, one line per code range: "START SIZE NAME" (hex start
// and size). Lines are appended under a process-wide lock.
#ifndef XJIT_JIT_PERF_MAP_H_
#define XJIT_JIT_PERF_MAP_H_

#include <cstdint>

#include "absl/strings/string_view.h"

namespace xjit::jit {

// Whether to write the perf map: the environment overrides the option
// (XJIT_PERF_MAP=1 turns it on, XJIT_PERF_MAP=0 off; unset or any other
// value leaves `option` deciding).
bool PerfMapEnabled(bool option);

// Appends one entry; failures (no /tmp, ...) are ignored, as profiling aids
// must never break a run.
void WritePerfMapEntry(const void* start, int64_t size, absl::string_view name);

}  // namespace xjit::jit

#endif  // XJIT_JIT_PERF_MAP_H_
