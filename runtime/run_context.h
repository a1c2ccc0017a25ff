// RunContext: what one run of an Executable may talk to besides its buffers.
//
// Most steps need nothing but their buffers. The steps that do (collectives,
// replica-id and partition-id, infeed/outfeed, typed custom calls) are
// library calls with a context function (executable.h) and read it from
// here. A default RunContext is a single replica of a single partition with
// no communicator and the evaluator's private empty queues: exactly what a
// plain Execute had before replicas existed.
#ifndef XJIT_RUNTIME_RUN_CONTEXT_H_
#define XJIT_RUNTIME_RUN_CONTEXT_H_

#include <atomic>
#include <cstdint>

namespace xjit {
class HostQueues;
}  // namespace xjit

namespace xjit::collectives {
class Communicator;
}  // namespace xjit::collectives

namespace xjit::runtime {

// How the while loops of runs ran, counted where RunContext::loop_counts
// points here: over bound steps (runtime/bound_steps.h: addresses resolved
// once, no per-iteration dispatch) or step by step (each iteration runs the
// condition and the body through their steps). Tests assert with it which
// path a loop took. Atomic: concurrent runs (replicas) may share one.
// `native` counts the bound runs that ran (at least in part) as emitted
// code (runtime/native_loop.h); a nested loop runs with the loop that
// bound it and is not counted.
struct LoopCounts {
  std::atomic<int64_t> bound{0};
  std::atomic<int64_t> stepped{0};
  std::atomic<int64_t> native{0};
  // Of the native ones, those whose code has kernels inline (their scalar
  // state in registers: Step::inline_program).
  std::atomic<int64_t> native_inlined{0};
};

struct RunContext {
  // This run's replica and partition (replica-id, partition-id).
  int64_t replica_id = 0;
  int64_t partition_id = 0;
  // The replicas' collectives; null: one replica, every collective sees only
  // itself (the evaluator's single-replica rules).
  collectives::Communicator* communicator = nullptr;
  // Host side of infeed/outfeed; null: none (an infeed fails, an outfeed's
  // value is dropped).
  HostQueues* queues = nullptr;
  // State of the generator behind `rng` and rng-get-and-update-state
  // (interpreter/rng_draw.h), advanced by every draw of the run. Null:
  // Execute starts one at the evaluator's seed for the run.
  uint64_t* rng_state = nullptr;
  // Null: loops are not counted.
  LoopCounts* loop_counts = nullptr;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_RUN_CONTEXT_H_
