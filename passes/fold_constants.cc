#include "passes/fold_constants.h"

#include <algorithm>
#include <vector>

#include "absl/container/flat_hash_set.h"

#include "interpreter/evaluator.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

bool NeverFolded(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast:        // cheap to keep, fuses; folding only materialises
    case Opcode::kIota:
    case Opcode::kConstant:
    case Opcode::kParameter:
    case Opcode::kCustomCall:       // targets may be impure or slow
    case Opcode::kRngBitGenerator:  // large outputs, nothing to gain
    case Opcode::kWhile:            // may not terminate
    case Opcode::kTuple:
    case Opcode::kDomain:
      return true;
    default:
      return false;
  }
}

// The scalar constant behind broadcast(constant scalar), or null.
const Instruction* BroadcastScalarConstant(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kBroadcast) return nullptr;
  const Instruction* operand = instruction.operand(0);
  if (operand->opcode() != Opcode::kConstant || !operand->shape().IsScalar()) return nullptr;
  return operand;
}

class Folder {
 public:
  Folder(Computation* computation, Evaluator* evaluator, int64_t max_elements,
         SideEffectCache* effects)
      : computation_(computation),
        evaluator_(evaluator),
        max_elements_(max_elements),
        effects_(effects) {}

  absl::StatusOr<bool> Run() {
    absl::flat_hash_set<const Instruction*> control_preds;
    for (const auto& i : computation_->instructions()) {
      for (const Instruction* p : i->control_predecessors()) control_preds.insert(p);
    }
    bool changed = false;
    for (Instruction* instruction : InstructionsOf(*computation_)) {
      if (!Foldable(*instruction, control_preds)) continue;
      XJIT_ASSIGN_OR_RETURN(Instruction * folded, Fold(instruction));
      if (folded == nullptr) continue;
      if (ReplaceAllUses(instruction, folded)) {
        changed = true;
      } else {
        RemoveIfDead(absl::MakeConstSpan(&folded, 1), effects_);
      }
    }
    if (changed) {
      RemoveDeadInstructions(computation_, effects_);
      computation_->SortTopologically();
    }
    return changed;
  }

 private:
  bool Foldable(const Instruction& instruction,
                const absl::flat_hash_set<const Instruction*>& control_preds) const {
    if (NeverFolded(instruction.opcode()) || instruction.operand_count() == 0) return false;
    const Shape& shape = instruction.shape();
    if (!shape.IsArray() || shape.is_dynamic()) return false;
    if (instruction.users().empty() && computation_->root() != &instruction) return false;
    if (!instruction.control_predecessors().empty() || control_preds.contains(&instruction)) {
      return false;
    }
    return !effects_->HasSideEffectDeep(instruction);
  }

  absl::StatusOr<Instruction*> Fold(Instruction* instruction) {
    bool all_constant = true;
    bool all_broadcast_scalars = IsElementwise(instruction->opcode());
    int64_t largest_operand = 0;
    for (const Instruction* operand : instruction->operands()) {
      if (operand->opcode() != Opcode::kConstant) all_constant = false;
      if (BroadcastScalarConstant(*operand) == nullptr) all_broadcast_scalars = false;
      if (operand->shape().IsArray()) {
        largest_operand = std::max(largest_operand, operand->shape().element_count());
      }
    }
    if (all_constant) {
      const int64_t count = instruction->shape().element_count();
      if (count > max_elements_ && count > largest_operand) return nullptr;
      std::vector<const Literal*> values;
      for (const Instruction* operand : instruction->operands()) {
        values.push_back(&operand->literal());
      }
      absl::StatusOr<Literal> value = evaluator_->EvaluateInstruction(*instruction, values);
      if (!value.ok()) return nullptr;  // Left for run time, which reports it.
      return AddConstant(computation_, value->Relayout(instruction->shape()));
    }
    if (all_broadcast_scalars) return FoldOnScalars(instruction);
    return nullptr;
  }

  // op(broadcast(a), broadcast(b)) = broadcast(op(a, b)) for elementwise op.
  absl::StatusOr<Instruction*> FoldOnScalars(Instruction* instruction) {
    NewInstruction scalar_op;
    scalar_op.opcode = instruction->opcode();
    scalar_op.attrs = instruction->attrs();
    std::vector<const Literal*> values;
    for (Instruction* operand : instruction->operands()) {
      scalar_op.operands.push_back(operand->operand(0));
      values.push_back(&operand->operand(0)->literal());
    }
    const Shape scalar_shape = Shape::Scalar(instruction->shape().element_type());
    scalar_op.shape = scalar_shape;
    absl::StatusOr<Instruction*> temporary = AddInstruction(computation_, std::move(scalar_op));
    if (!temporary.ok()) return nullptr;
    absl::StatusOr<Literal> value = evaluator_->EvaluateInstruction(**temporary, values);
    computation_->RemoveInstruction(*temporary);
    if (!value.ok()) return nullptr;
    Instruction* constant = AddConstant(computation_, value->Relayout(scalar_shape));
    return AddBroadcastScalar(computation_, constant, instruction->shape());
  }

  Computation* computation_;
  Evaluator* evaluator_;
  int64_t max_elements_;
  SideEffectCache* effects_;
};

}  // namespace

absl::StatusOr<bool> FoldConstants::Run(Module* module) {
  Evaluator evaluator;
  SideEffectCache effects;  // One walk per computation for the whole module.
  bool changed = false;
  for (Computation* computation : ComputationsOf(*module)) {
    XJIT_ASSIGN_OR_RETURN(bool folded,
                          Folder(computation, &evaluator, max_elements_, &effects).Run());
    changed = changed || folded;
  }
  return changed;
}

}  // namespace xjit
