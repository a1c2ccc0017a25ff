// EliminateDeadCode ("dce"): removes instructions no root uses and
// computations nothing calls.
//   Requires: a verified module.
//   Guarantees: every instruction left is used by its computation's root, has
//   a side effect (HasSideEffectDeep), is a parameter, or takes part in a
//   control edge (and so is everything those use); every computation left is
//   the entry or reachable from it through called computations. Entry
//   parameters are never removed (they are the signature).
#ifndef XJIT_PASSES_DCE_H_
#define XJIT_PASSES_DCE_H_

#include "passes/pass.h"

namespace xjit {

class EliminateDeadCode : public Pass {
 public:
  absl::string_view name() const override { return "dce"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_DCE_H_
