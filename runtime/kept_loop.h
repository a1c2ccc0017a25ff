// KeptLoop: a while step's loop as it was bound (bound_steps.h) in one run,
// kept by the executable that owns the step for its next run.
//
// Binding a loop resolves the addresses of every step of its condition and
// body, nested loops and branches included, and allocates their arenas and
// flat buffers: work proportional to the loop's code, not to its
// iterations. A loop entered many times — the top-level loops of a program
// run again and again, an inner loop of a loop that cannot bind — paid it on
// every entry (a third of a NUTS sampler's run). A KeptLoop holds what one
// entry bound and every buffer the binding points into, so the next entry
// reuses it when its own buffers are where the kept ones were:
//   - flat: the state lives in buffers the KeptLoop owns (BoundFlatWhile),
//     so the binding fits every entry;
//   - on leaves: the state lives in the while's output slots, so the
//     binding fits an entry whose operand and output leaves are at the
//     addresses it was bound at (`from`, `to`); otherwise the loop is bound
//     afresh and replaces the kept one.
// A loop that did not bind keeps that answer (`bound` false), so a loop that
// must step does not try again per entry. Nothing of a run's values lives
// here between runs: every state byte is copied in at entry.
// Ownership: Executable::TakeKeptLoop / KeepLoop hand a KeptLoop to one run
// at a time (a run of the same executable on another thread meanwhile binds
// its own); the executable keeps one per while step.
#ifndef XJIT_RUNTIME_KEPT_LOOP_H_
#define XJIT_RUNTIME_KEPT_LOOP_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "runtime/bound_steps.h"
#include "runtime/bound_while.h"
#include "runtime/native_loop.h"

namespace xjit::runtime {

struct KeptLoop {
  bool on_leaves = false;
  // Whether the condition and body bound; false: the loop runs step by step.
  bool bound = false;

  // On leaves: the operand's and the output's leaf addresses the binding
  // was made for, the leaves the loop runs on (output slots, or private
  // buffers in `own` where an output slot cannot hold its leaf for the whole
  // loop), the condition's predicate byte and the two arenas.
  std::vector<uint8_t*> from;
  std::vector<uint8_t*> to;
  std::vector<void*> leaves;
  std::vector<std::unique_ptr<uint8_t[]>> own;
  std::unique_ptr<uint8_t[]> condition_arena;
  std::unique_ptr<uint8_t[]> body_arena;
  uint8_t keep_going = 0;
  BoundSteps condition;
  BoundSteps body;
  // The loop as emitted code, once it has run long enough (native_loop.h).
  NativeLoopState native;

  // Flat: the loop with its state buffers.
  std::unique_ptr<BoundFlatWhile> flat;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_KEPT_LOOP_H_
