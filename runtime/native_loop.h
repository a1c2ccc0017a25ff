// NativeLoop: a bound while loop (bound_while.h) as one function of machine
// code, and the hook through which the runtime asks for one.
//
// Once a loop's condition and body are bound (bound_steps.h) every address
// they touch is fixed, so the loop can be emitted as straight-line code: each
// kernel and library routine a direct call with its arguments as immediates,
// small copies inline, a conditional as a branch on its selector, the
// predicate byte tested in a register, and a two-phase state (two buffers that
// swap) as the body emitted twice. What RunBoundWhile pays per iteration — a
// switch per step, a load of each op's fields, an indirect call — is gone.
//
// The runtime does not emit code (it does not know machines): the compile
// driver (jit/) sets ExecutableSpec::emit_native_loop to the host target's
// emitter, and a bound loop calls it once it has run
// ExecutableSpec::native_loop_after iterations over bound steps (emitting
// costs tens of microseconds, worth it only for a loop that runs), then
// continues natively from the iteration where it is.
//
// Contract of the emitted function: called with a frame whose `iteration`
// says where the loop stands (iteration i runs phase i % phases.size()), it
// runs iterations as RunBoundWhile does — the interrupt flag looked at before
// every iteration, the condition, its predicate byte, the max_iterations rule,
// the body — and returns with `exit` saying why it stopped and `iteration`
// the iteration it stopped at (kDone: the number of times the body ran).
// Nested loops run through BoundSteps::RunCompound (each with its own native
// code); their failures come back as kFailed with the status.
#ifndef XJIT_RUNTIME_NATIVE_LOOP_H_
#define XJIT_RUNTIME_NATIVE_LOOP_H_

#include <cstddef>
#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"

namespace xjit::runtime {

struct BoundPhase;  // bound_while.h

enum class NativeLoopExit : int32_t {
  kDone = 0,         // The predicate was false.
  kInterrupted = 1,  // An interrupt was requested (runtime/host/interrupt.h).
  kTooMany = 2,      // One more iteration than max_iterations was needed.
  kFailed = 3,       // A nested loop failed: `failed` holds its status.
};

// The emitted code reads and writes these fields at these offsets.
struct NativeLoopFrame {
  int64_t iteration = 0;
  const absl::Status* failed = nullptr;
  NativeLoopExit exit = NativeLoopExit::kDone;
};
static_assert(offsetof(NativeLoopFrame, iteration) == 0);
static_assert(offsetof(NativeLoopFrame, failed) == 8);
static_assert(offsetof(NativeLoopFrame, exit) == 16);

using NativeLoopFunction = void (*)(NativeLoopFrame* frame);

struct NativeLoop {
  NativeLoopFunction function = nullptr;
  // Owns the code's pages (unmapped with the last reference).
  std::shared_ptr<const void> code;
  // Kernels emitted inline (Step::inline_program) rather than called.
  int inlined_kernels = 0;
};

// A target's loop emitter: the loop over `phases` (pointing into bound steps
// that outlive the code) under `max_iterations` (< 0: none). A NativeLoop
// with a null function when the loop is not worth or not possible to emit
// (too much code); an error only when the emitter itself fails.
using EmitNativeLoopFunction = absl::StatusOr<NativeLoop> (*)(absl::Span<const BoundPhase> phases,
                                                              int64_t max_iterations);

// What a bound loop keeps about its native code from entry to entry.
struct NativeLoopState {
  // Null: the loop always runs over bound steps.
  EmitNativeLoopFunction emit = nullptr;
  // Iterations over bound steps, summed over entries, before emitting.
  int64_t after = 0;
  int64_t stepped = 0;
  // The emitter declined or failed: never asked again.
  bool refused = false;
  // Whether the last entry ran (at least in part) natively.
  bool last_native = false;
  NativeLoop loop;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_NATIVE_LOOP_H_
