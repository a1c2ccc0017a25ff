// IsolateTiledLayouts ("isolate-tiled-layouts"): how the JIT runs values in
// tiled or padded layouts (`{1,0:T(8,128)(2,1)}`, padded_dimensions;
// ir/layout.h). The last pass of the JIT's preparation (pipeline.h:
// RunJitPipeline).
//
// Kernels index plain layouts only (one element per position, strides per
// dimension). Tiled values reach a program at its edges (parameters and
// results in a TPU-style layout) or where a module writes such a layout on
// an instruction. This moves every such layout out of the kernels: in the
// entry computation, an operation (not a place: parameter, tuple,
// get-tuple-element, bitcast, ...; not control flow) that reads a tiled
// operand reads `copy(operand)` in the default layout instead, and one that
// makes a tiled value makes it in the default layout, followed by a copy
// into the tiled one. A fusion's parameter and root shapes change with it.
// The copies between a tiled and a plain layout are relayout steps
// (jit/calls/relayout_call.h). Packed sub-byte layouts (E(n) below the element
// width) are not tiled layouts here; they stay as they are.
//   Requires: a verified module. Guarantees: a verified module with the same
//   results whose entry computes tiled values only in copies.
#ifndef XJIT_PASSES_ISOLATE_TILED_LAYOUTS_H_
#define XJIT_PASSES_ISOLATE_TILED_LAYOUTS_H_

#include "ir/shape.h"
#include "passes/pass.h"

namespace xjit {

class IsolateTiledLayouts : public Pass {
 public:
  absl::string_view name() const override { return "isolate-tiled-layouts"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

// Whether `shape` is an array whose layout has tiles or padded dimensions
// (and elements of their natural width).
bool HasTiledLayout(const Shape& shape);

}  // namespace xjit

#endif  // XJIT_PASSES_ISOLATE_TILED_LAYOUTS_H_
