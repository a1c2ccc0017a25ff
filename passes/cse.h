// EliminateCommonSubexpressions ("cse"): within each computation, an
// instruction identical to an earlier one is replaced by that one.
//   Identical: same opcode, shape (layout included), operands (the same
//   instructions, in order), called computations, typed attributes and, for
//   constants, the same literal bits. Attributes that do not change semantics
//   (metadata=, ...) are ignored; the earlier instruction's are kept.
//   Never merged: instructions with side effects (HasSideEffectDeep: rng,
//   infeed, collectives, side-effecting custom-calls, ...), custom-calls of
//   any kind (their targets may be impure), parameters, and instructions in
//   control edges.
//   Requires a verified module in definition order; keeps it so.
#ifndef XJIT_PASSES_CSE_H_
#define XJIT_PASSES_CSE_H_

#include "passes/pass.h"

namespace xjit {

class EliminateCommonSubexpressions : public Pass {
 public:
  absl::string_view name() const override { return "cse"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_CSE_H_
