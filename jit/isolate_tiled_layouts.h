// IsolateTiledLayouts: how the JIT runs values in tiled or padded layouts
// (`{1,0:T(8,128)(2,1)}`, padded_dimensions; ir/layout.h).
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
//
// Requires a verified module; keeps it verified with the same results.
#ifndef XJIT_JIT_ISOLATE_TILED_LAYOUTS_H_
#define XJIT_JIT_ISOLATE_TILED_LAYOUTS_H_

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit::jit {

// Whether `shape` is an array whose layout has tiles or padded dimensions
// (and elements of their natural width).
bool HasTiledLayout(const Shape& shape);

// Returns the number of copies inserted.
absl::StatusOr<int> IsolateTiledLayouts(Module* module);

}  // namespace xjit::jit

#endif  // XJIT_JIT_ISOLATE_TILED_LAYOUTS_H_
