// RunBoundWhile: a while loop whose condition and body run as bound steps
// (bound_steps.h), with the rules every kWhile step keeps: the condition runs
// first and its predicate byte (nonzero: go on) decides each iteration; the
// body may run max_iterations times and needing one more fails with
// ResourceExhausted (the evaluator's rule, interpreter/evaluator.cc; < 0: no
// bound); an interrupt (runtime/host/interrupt.h) fails it with Cancelled,
// seen before the first iteration and then every few iterations of a light
// loop, every iteration of a heavy one (kInterruptBytes in bound_while.cc).
//
// The state may move between iterations in a fixed cycle of `phases`: one
// phase when the body updates the state where it lies; two when it writes a
// second buffer and the two swap, each phase's condition and body bound to
// read where the previous phase's body wrote. Iteration i runs phase
// i % phases.size().
//
// With a NativeLoopState whose emitter is set (native_loop.h), the loop runs
// as emitted code once it has run state->after iterations over bound steps
// (counted over entries): from the next iteration boundary on, and from the
// start on later entries. The same calls on the same addresses in the same
// order, the same errors; only the interrupt flag is looked at every
// iteration there (a byte load, no call).
#ifndef XJIT_RUNTIME_BOUND_WHILE_H_
#define XJIT_RUNTIME_BOUND_WHILE_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/bound_steps.h"
#include "runtime/executable.h"
#include "runtime/native_loop.h"

namespace xjit::runtime {

struct BoundPhase {
  const BoundSteps* condition = nullptr;
  // The byte the condition writes (its pred result).
  const uint8_t* predicate = nullptr;
  const BoundSteps* body = nullptr;
};

// Runs the loop; `name` names it in errors. On success `*iterations` is the
// number of times the body ran (so the caller knows which phase's buffers
// hold the final state).
absl::Status RunBoundWhile(absl::Span<const BoundPhase> phases, int64_t max_iterations,
                           absl::string_view name, int64_t* iterations,
                           NativeLoopState* native = nullptr);

// A while loop whose state lies in flat buffers (the flattened layout of
// buffer_plan.h), bound once: one buffer that the body updates in place
// (state_in_place), or two that swap — phase 0 reads the first and writes
// the second, phase 1 the other way round. It owns the buffers and the
// condition's and body's arenas, and its bound steps point into them, so it
// stays where it is built (neither copied nor moved).
class BoundFlatWhile {
 public:
  BoundFlatWhile() = default;
  BoundFlatWhile(const BoundFlatWhile&) = delete;
  BoundFlatWhile& operator=(const BoundFlatWhile&) = delete;

  // False when the condition or the body does not bind (bound_steps.h) or
  // memory runs out; the caller then runs the loop step by step.
  bool Bind(const Executable& condition, const Executable& body, int64_t state_bytes);
  // Where the initial state goes before Run.
  uint8_t* state() { return buffers_[0].get(); }
  // Runs the loop (RunBoundWhile); on success final_state() holds the state.
  absl::Status Run(int64_t max_iterations, absl::string_view name);
  uint8_t* final_state() const { return final_state_; }
  // Whether the last Run ran natively (at least in part).
  bool ran_native() const { return native_.last_native; }
  // Whether that native code has kernels inline (NativeLoop::inlined_kernels).
  bool ran_inlined() const { return native_.last_native && native_.loop.inlined_kernels > 0; }

 private:
  std::unique_ptr<uint8_t[]> buffers_[2];
  std::unique_ptr<uint8_t[]> condition_arena_;
  std::unique_ptr<uint8_t[]> body_arena_;
  uint8_t keep_going_ = 0;
  BoundSteps conditions_[2];
  BoundSteps bodies_[2];
  BoundPhase phases_[2];
  size_t phase_count_ = 0;
  uint8_t* final_state_ = nullptr;
  NativeLoopState native_;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_BOUND_WHILE_H_
