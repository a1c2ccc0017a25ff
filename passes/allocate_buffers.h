// AllocateBuffers ("allocate-buffers"): computes the BufferPlan
// (passes/buffer_plan.h) of a module: a schedule per sequential computation,
// liveness, in-place updates, aliasing, and the packing of temps into arenas.
//
// Requires: a verified module, normally after assign-layouts and fuse (sizes
// come from the layouts; fused computations need no buffers). The pass does
// not change the module; it keeps the plan for whoever runs it, and
// ComputeBufferPlan is the same analysis as a function.
//
// The rules, all in allocate_buffers.cc's design note:
//   - a value is an array leaf an instruction defines; bitcast,
//     get-tuple-element, tuple, opt-barrier, domain and add-dependency define
//     none (they alias their operand's leaves);
//   - a value lives from its step to the last step that reads it (through any
//     alias); the entry result lives to the end; entry parameters always;
//   - in place: an elementwise op, or a kLoop fusion that reads the operand
//     only elementwise, writes over an operand of the same shape, layout and
//     element width whose buffer dies at that step; dynamic-update-slice and
//     scatter over their operand 0; a while's state over its init; fusions and
//     custom-calls with output_to_operand_aliasing over the named operand.
//     Never over an entry parameter, unless input_output_alias donates it
//     or it is the loop state of a body planned with state_in_place (below);
//     never over a constant;
//   - temps whose lifetimes do not overlap share arena bytes (first fit,
//     64-byte aligned offsets).
#ifndef XJIT_PASSES_ALLOCATE_BUFFERS_H_
#define XJIT_PASSES_ALLOCATE_BUFFERS_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/module.h"
#include "passes/buffer_plan.h"
#include "passes/pass.h"

namespace xjit {

class SideEffectCache;  // passes/rewrite_util.h

struct BufferPlanOptions {
  // Write results over dying operands where the semantics allow.
  bool in_place = true;
  // Let temps with disjoint lifetimes share arena bytes; off, every temp has
  // its own bytes (a baseline for measurements).
  bool reuse = true;
  // Let a value be written over an entry parameter that the module's
  // input_output_alias donates. Off for a runtime whose callers keep their
  // parameter buffers (the JIT's Executable only reads them).
  bool donate_parameters = true;
  // The entry is a while body that a runtime runs in place: its one
  // parameter and its result are the same buffer (the loop state), leaf i of
  // the parameter being leaf i of the result. A state leaf's buffer may then
  // be written over once the leaf's value is dead, by any in-place step
  // whose value is not in the result or becomes that same leaf; a result
  // leaf that passes its own parameter leaf through costs nothing, and no
  // result leaf gets a buffer of its own: a root value outside its leaf's
  // buffer lives in the arena and is copied there at the end. The entry must
  // have one parameter of the root's shape (InvalidArgument otherwise).
  bool state_in_place = false;
  // Plan the computations that while, conditional and call run, too (their
  // peaks add to the caller's). Off, only the entry is planned: for a caller
  // that runs each of them from a plan of its own (the JIT compiles every
  // loop body and branch separately), planning them again with each caller
  // would cost time quadratic in the nesting depth.
  bool plan_callees = true;
  // Where the schedules find side effects (which keep their order); null:
  // the plan keeps its own. Callers that plan many computations of one
  // unchanging module share one, so that a loop nested d deep is not looked
  // into by each of the d plans around it.
  SideEffectCache* side_effects = nullptr;
};

// The plan of `module` (which must stay unchanged while the plan is used).
// Errors: a module without an entry (InvalidArgument).
absl::StatusOr<BufferPlan> ComputeBufferPlan(const Module& module,
                                             const BufferPlanOptions& options = {});
// The plan of `entry`, a computation of `module`, as if it were the entry
// (its parameters are the caller's buffers; the module's input_output_alias
// applies only to the module's own entry).
absl::StatusOr<BufferPlan> ComputeBufferPlan(const Module& module, const Computation& entry,
                                             const BufferPlanOptions& options = {});

class AllocateBuffers : public Pass {
 public:
  explicit AllocateBuffers(BufferPlanOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "allocate-buffers"; }
  // Computes the plan; never changes the module (returns false).
  absl::StatusOr<bool> Run(Module* module) override;
  // The plan of the last Run, or null.
  const BufferPlan* plan() const { return plan_.get(); }
  std::unique_ptr<BufferPlan> ReleasePlan() { return std::move(plan_); }

 private:
  BufferPlanOptions options_;
  std::unique_ptr<BufferPlan> plan_;
};

}  // namespace xjit

#endif  // XJIT_PASSES_ALLOCATE_BUFFERS_H_
