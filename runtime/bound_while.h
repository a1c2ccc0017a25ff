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
#ifndef XJIT_RUNTIME_BOUND_WHILE_H_
#define XJIT_RUNTIME_BOUND_WHILE_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "runtime/bound_steps.h"

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
                           absl::string_view name, int64_t* iterations);

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_BOUND_WHILE_H_
