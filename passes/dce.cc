#include "passes/dce.h"

#include <vector>

#include "absl/container/flat_hash_set.h"
#include "passes/rewrite_util.h"

namespace xjit {

absl::StatusOr<bool> EliminateDeadCode::Run(Module* module) {
  bool changed = false;
  SideEffectCache effects;  // One walk per computation for the whole module.
  for (Computation* computation : ComputationsOf(*module)) {
    if (RemoveDeadInstructions(computation, &effects) > 0) changed = true;
  }
  if (module->entry() == nullptr) return changed;
  // Computations reachable from the entry through called computations.
  absl::flat_hash_set<const Computation*> reachable;
  std::vector<const Computation*> work = {module->entry()};
  while (!work.empty()) {
    const Computation* computation = work.back();
    work.pop_back();
    if (computation == nullptr || !reachable.insert(computation).second) continue;
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) work.push_back(callee);
    }
  }
  for (Computation* computation : ComputationsOf(*module)) {
    if (!reachable.contains(computation)) {
      module->RemoveComputation(computation);
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
