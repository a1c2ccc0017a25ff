// ConformPlaceLayouts ("conform-layouts"): makes the instructions that
// compute nothing agree with their operands' layouts. Part of the JIT's
// preparation (pipeline.h: RunJitPipeline).
//
// tuple, get-tuple-element, domain, optimization-barrier and add-dependency
// only pass values on: the compiled program gives them their operand's
// buffer (passes/buffer_plan.h). That is right only when each passes its
// value on in the layout it received. The verifier compares shapes without
// layouts, so a module may write `(f32[2,3]{1,0}) tuple(c)` with c in {0,1};
// layout assignment (passes/assign_layouts.h) would insert the copy, but the
// compiled program must honour the layouts it is given whichever passes run.
// This inserts a `copy` (element by element for nested tuples) wherever a
// passed-on value's layout differs from the one written, so the buffer holds
// what the shape says.
//   Requires: a verified module. Guarantees: a verified module with the same
//   results in which every passed-on value has the layout written on it.
#ifndef XJIT_PASSES_CONFORM_LAYOUTS_H_
#define XJIT_PASSES_CONFORM_LAYOUTS_H_

#include "passes/pass.h"

namespace xjit {

class ConformPlaceLayouts : public Pass {
 public:
  absl::string_view name() const override { return "conform-layouts"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_CONFORM_LAYOUTS_H_
