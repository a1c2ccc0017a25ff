// RunOnLargeStack: runs a piece of work on a thread whose stack size is known.
//
// Walks over nested computations (compiling a while body, running one)
// recurse once per nesting level. The verifier bounds the nesting
// (kMaxCallDepth, ir/verifier.h), but the stack a level takes depends on the
// build (AddressSanitizer's frames are several times larger), and the
// caller's stack is whatever its thread happens to have: 8 MiB for a main
// thread, often less for others. Running such a walk on a stack of a known,
// generous size makes the documented nesting limit safe for every caller and
// every build. Pages are committed only as the stack grows, so the size costs
// address space, not memory.
#ifndef XJIT_RUNTIME_HOST_LARGE_STACK_H_
#define XJIT_RUNTIME_HOST_LARGE_STACK_H_

#include <cstddef>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "ir/module.h"

namespace xjit {

// The stack size RunOnLargeStack gives: enough for kMaxCallDepth levels of
// compiling or running nested computations in a sanitizer build, several
// times over (limits_test runs that depth on a quarter of this).
inline constexpr size_t kLargeStackBytes = size_t{128} << 20;

// Runs `body` on a new thread with a stack of `stack_bytes` and waits for it;
// an exception `body` throws is rethrown here. Fails (ResourceExhausted) only
// when the thread cannot be started, in which case `body` has not run.
absl::Status RunOnLargeStack(absl::FunctionRef<void()> body,
                             size_t stack_bytes = kLargeStackBytes);

// Whether the calling thread is one RunOnLargeStack started (work nested in
// it needs no thread of its own).
bool OnLargeStack();

// Whether `module`'s computations call computations more than a few levels
// deep (deeper than any caller's stack is sure to hold in every build), so
// that walking it belongs on a large stack.
bool NeedsLargeStack(const Module& module);

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_LARGE_STACK_H_
