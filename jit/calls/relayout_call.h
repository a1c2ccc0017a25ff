// A `copy` between a tiled or padded layout and another layout (the copies
// IsolateTiledLayouts puts at a program's edges) as a library-call step:
// each element is read where the source layout keeps it and written where
// the destination's does (ir/layout_util.h's LinearIndex); the
// destination's padding is zeroed. Element by element: these copies run
// once per value at a program's edges, never inside loops of kernels.
#ifndef XJIT_JIT_RELAYOUT_CALL_H_
#define XJIT_JIT_RELAYOUT_CALL_H_

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Whether `instruction` is a copy PlanRelayoutCall takes: an array copy
// whose operand or result has a tiled layout (HasTiledLayout).
bool IsRelayoutCopy(const Instruction& instruction);

// Inputs: the operand's slot; output: the result's.
absl::StatusOr<runtime::LibraryCall> PlanRelayoutCall(const Instruction& copy);

}  // namespace xjit::jit

#endif  // XJIT_JIT_RELAYOUT_CALL_H_
