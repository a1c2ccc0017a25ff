// ConformPlaceLayouts (see conform_layouts.h).
#include "passes/conform_layouts.h"

#include <vector>

#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// `value` in the layouts of `want` (which has value's shape, layouts aside):
// value itself when they agree, else a copy of an array, or a tuple of
// conformed elements.
absl::StatusOr<Instruction*> Conform(Computation* computation, Instruction* value,
                                     const Shape& want, int* copies) {
  if (value->shape() == want) return value;
  if (!want.IsTuple()) {
    if (!want.IsArray()) return value;  // Tokens have no layout.
    ++*copies;
    return AddInstruction(computation, {.opcode = Opcode::kCopy,
                                        .operands = {value},
                                        .shape = want,
                                        .name = value->name() + ".relayout"});
  }
  std::vector<Instruction*> elements;
  for (int64_t j = 0; j < want.tuple_size(); ++j) {
    NewInstruction element{.opcode = Opcode::kGetTupleElement,
                           .operands = {value},
                           .shape = value->shape().tuple_shapes(j)};
    element.attrs.tuple_index = j;
    XJIT_ASSIGN_OR_RETURN(Instruction * extracted, AddInstruction(computation, element));
    XJIT_ASSIGN_OR_RETURN(Instruction * conformed,
                          Conform(computation, extracted, want.tuple_shapes(j), copies));
    elements.push_back(conformed);
  }
  return AddInstruction(computation,
                        {.opcode = Opcode::kTuple, .operands = elements, .shape = want});
}

absl::StatusOr<int> ConformComputation(Computation* computation) {
  int copies = 0;
  for (Instruction* instruction : InstructionsOf(*computation)) {
    switch (instruction->opcode()) {
      case Opcode::kTuple:
        for (int64_t i = 0; i < instruction->operand_count(); ++i) {
          XJIT_ASSIGN_OR_RETURN(Instruction * conformed,
                                Conform(computation, instruction->operand(i),
                                        instruction->shape().tuple_shapes(i), &copies));
          instruction->ReplaceOperand(i, conformed);
        }
        break;
      case Opcode::kDomain:
      case Opcode::kOptimizationBarrier:
      case Opcode::kAddDependency: {
        XJIT_ASSIGN_OR_RETURN(Instruction * conformed, Conform(computation, instruction->operand(0),
                                                               instruction->shape(), &copies));
        instruction->ReplaceOperand(0, conformed);
        break;
      }
      case Opcode::kGetTupleElement: {
        const Shape& element =
            instruction->operand(0)->shape().tuple_shapes(instruction->attrs().tuple_index);
        if (instruction->shape() == element) break;
        // Extract in the operand's layout, then convert to the one written.
        NewInstruction extract{.opcode = Opcode::kGetTupleElement,
                               .operands = {instruction->operand(0)},
                               .shape = element};
        extract.attrs.tuple_index = instruction->attrs().tuple_index;
        XJIT_ASSIGN_OR_RETURN(Instruction * extracted, AddInstruction(computation, extract));
        XJIT_ASSIGN_OR_RETURN(Instruction * conformed,
                              Conform(computation, extracted, instruction->shape(), &copies));
        ReplaceAllUses(instruction, conformed);
        break;
      }
      default:
        break;
    }
  }
  if (copies > 0) computation->SortTopologically();
  return copies;
}

}  // namespace

absl::StatusOr<bool> ConformPlaceLayouts::Run(Module* module) {
  int copies = 0;
  for (Computation* computation : ComputationsOf(*module)) {
    XJIT_ASSIGN_OR_RETURN(int n, ConformComputation(computation));
    copies += n;
  }
  return copies > 0;
}

}  // namespace xjit
