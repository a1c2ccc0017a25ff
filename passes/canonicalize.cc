#include "passes/canonicalize.h"

#include <numeric>
#include <vector>

#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

bool IsOuterProductDot(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kDot || !instruction.shape().IsArray()) return false;
  const DotDimensionNumbers& dn = instruction.attrs().dot_dimension_numbers;
  return dn.lhs_batch_dimensions.empty() && dn.rhs_batch_dimensions.empty() &&
         dn.lhs_contracting_dimensions.empty() && dn.rhs_contracting_dimensions.empty() &&
         IsArrayElementType(instruction.shape().element_type()) &&
         !IsPred(instruction.shape().element_type());
}

// dot(lhs, rhs) without contraction = lhs[i...] * rhs[j...].
absl::StatusOr<bool> ExpandOuterProduct(Instruction* dot) {
  Computation* computation = dot->parent();
  const Shape& result = dot->shape();
  const ElementType type = result.element_type();
  std::vector<Instruction*> broadcasts;
  int64_t next_dimension = 0;
  for (Instruction* operand : dot->operands()) {
    Instruction* value = operand;
    if (operand->shape().element_type() != type) {
      Shape converted = operand->shape();
      converted.set_element_type(type);
      NewInstruction convert;
      convert.opcode = Opcode::kConvert;
      convert.operands = {operand};
      convert.shape = converted;
      XJIT_ASSIGN_OR_RETURN(value, AddInstruction(computation, std::move(convert)));
    }
    NewInstruction broadcast;
    broadcast.opcode = Opcode::kBroadcast;
    broadcast.operands = {value};
    broadcast.attrs.has_dimensions = true;
    broadcast.attrs.dimensions.resize(operand->shape().rank());
    std::iota(broadcast.attrs.dimensions.begin(), broadcast.attrs.dimensions.end(),
              next_dimension);
    next_dimension += operand->shape().rank();
    broadcast.shape = Shape::Array(type, result.dimensions());
    XJIT_ASSIGN_OR_RETURN(Instruction * b, AddInstruction(computation, std::move(broadcast)));
    broadcasts.push_back(b);
  }
  NewInstruction multiply;
  multiply.opcode = Opcode::kMultiply;
  multiply.operands = broadcasts;
  multiply.shape = result;
  XJIT_ASSIGN_OR_RETURN(Instruction * product, AddInstruction(computation, std::move(multiply)));
  XJIT_CHECK(ReplaceInstruction(dot, product));
  return true;
}

}  // namespace

absl::StatusOr<bool> Canonicalize::Run(Module* module) {
  bool changed = false;
  for (Computation* computation : ComputationsOf(*module)) {
    bool computation_changed = false;
    // Inlining copies the callee's own calls into the caller; repeat until
    // none is left (the call graph is acyclic, so this ends).
    bool progress = true;
    while (progress) {
      progress = false;
      for (Instruction* instruction : InstructionsOf(*computation)) {
        if (instruction->opcode() == Opcode::kCall) {
          if (InlineCall(instruction).ok()) progress = true;
        } else if (IsOuterProductDot(*instruction)) {
          XJIT_ASSIGN_OR_RETURN(bool expanded, ExpandOuterProduct(instruction));
          progress = progress || expanded;
        }
      }
      computation_changed = computation_changed || progress;
    }
    if (computation_changed) {
      computation->SortTopologically();
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
