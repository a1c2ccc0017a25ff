// NoOpMovesToBitcast ("no-op-bitcast"): a reshape or transpose whose operand
// and result place every element at the same position in memory under their
// layouts is a bitcast; this pass says so, so that later stages emit no
// copy for it. Runs after layout assignment, when layouts are final (before
// it, default layouts would make nearly every reshape a bitcast and pin
// layouts that assignment should choose).
//
// The test is exact for plain layouts (no tiles, padding, element-size or
// memory-space change): describe each side as (size, logical stride,
// physical stride) per dimension of size > 1, merge neighbours that are
// contiguous in both strides, and compare. Shapes with non-plain layouts are
// left alone. Element types must be equal.
//   Requires: a verified module. Guarantees: a verified module whose
//   bitcasts reinterpret memory exactly as the replaced operations moved it.
#ifndef XJIT_PASSES_NO_OP_BITCAST_H_
#define XJIT_PASSES_NO_OP_BITCAST_H_

#include "ir/instruction.h"
#include "passes/pass.h"

namespace xjit {

class NoOpMovesToBitcast : public Pass {
 public:
  absl::string_view name() const override { return "no-op-bitcast"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

// Whether `instruction` (a reshape or transpose) moves no element in memory.
bool IsNoOpMove(const Instruction& instruction);

}  // namespace xjit

#endif  // XJIT_PASSES_NO_OP_BITCAST_H_
