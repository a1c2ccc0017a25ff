// A process-wide request to stop running programs, for Ctrl-C in the xjit
// command line (tools/xjit.cc installs the signal handler). Compiled
// executables check it between steps and at every while-loop iteration, the
// evaluator at every while-loop iteration; both then fail the run with
// Cancelled ("interrupted"). A kernel or library call in progress finishes
// first: loops are where a program can run without bound.
#ifndef XJIT_RUNTIME_HOST_INTERRUPT_H_
#define XJIT_RUNTIME_HOST_INTERRUPT_H_

#include "absl/status/status.h"

namespace xjit {

// Async-signal-safe (a lock-free atomic store).
void RequestInterrupt();
void ClearInterrupt();
bool InterruptRequested();
// The flag itself, for emitted code that polls it with a byte load (nonzero:
// requested) instead of a call (runtime/native_loop.h).
const void* InterruptFlagAddress();

// Cancelled("interrupted") when an interrupt was requested, OK otherwise.
absl::Status CheckInterrupt();

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_INTERRUPT_H_
