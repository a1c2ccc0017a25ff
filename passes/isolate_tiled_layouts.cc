// IsolateTiledLayouts (see isolate_tiled_layouts.h).
#include "passes/isolate_tiled_layouts.h"

#include <vector>

#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// Instructions that compute nothing (their buffers are other values') or
// that pass whole values to computations of their own: left alone.
bool Skipped(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kBitcast:
    case Opcode::kGetTupleElement: case Opcode::kTuple: case Opcode::kOptimizationBarrier:
    case Opcode::kDomain: case Opcode::kAddDependency: case Opcode::kCopy:
    case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kCopyStart: case Opcode::kCopyDone:
      return true;
    default:
      return false;
  }
}

Shape Plain(const Shape& shape) {
  Shape plain = Shape::Array(shape.element_type(),
                             std::vector<int64_t>(shape.dimensions().begin(),
                                                  shape.dimensions().end()));
  return WithDefaultLayouts(plain);
}

}  // namespace

bool HasTiledLayout(const Shape& shape) {
  if (!shape.IsArray() || shape.is_dynamic() || !shape.has_layout()) return false;
  const Layout& layout = shape.layout();
  if (layout.tiles.empty() && layout.padded_dimensions.empty()) return false;
  return layout.element_size_in_bits == 0 ||
         layout.element_size_in_bits == 8 * ByteWidth(shape.element_type());
}

absl::StatusOr<bool> IsolateTiledLayouts::Run(Module* module) {
  Computation* entry = module->entry();
  if (entry == nullptr) return false;
  int copies = 0;
  for (Instruction* instruction : InstructionsOf(*entry)) {
    if (Skipped(instruction->opcode())) continue;
    const bool fusion = instruction->opcode() == Opcode::kFusion &&
                        instruction->called_computations().size() == 1;
    Computation* fused = fusion ? instruction->called_computations()[0] : nullptr;
    if (HasTiledLayout(instruction->shape()) && fusion &&
        (fused->root() == nullptr || fused->root()->shape().IsTuple())) {
      continue;  // A multi-output fusion's tuple: left as it is.
    }
    for (int64_t k = 0; k < instruction->operand_count(); ++k) {
      Instruction* operand = instruction->operand(k);
      if (!HasTiledLayout(operand->shape())) continue;
      const Shape plain = Plain(operand->shape());
      XJIT_ASSIGN_OR_RETURN(Instruction * copy,
                            AddInstruction(entry, {.opcode = Opcode::kCopy,
                                                   .operands = {operand},
                                                   .shape = plain,
                                                   .name = operand->name() + ".untiled"}));
      instruction->ReplaceOperand(k, copy);
      ++copies;
      if (fusion) {
        for (const auto& inner : fused->instructions()) {
          if (inner->opcode() == Opcode::kParameter && inner->attrs().parameter_number == k) {
            *inner->mutable_shape() = plain;
          }
        }
      }
    }
    if (!HasTiledLayout(instruction->shape())) continue;
    const Shape tiled = instruction->shape();
    *instruction->mutable_shape() = Plain(tiled);
    if (fusion) *fused->root()->mutable_shape() = Plain(tiled);
    XJIT_ASSIGN_OR_RETURN(Instruction * copy,
                          AddInstruction(entry, {.opcode = Opcode::kCopy,
                                                 .operands = {instruction},
                                                 .shape = tiled,
                                                 .name = instruction->name() + ".tiled"}));
    // The users (not the copy) and the root slot read the copy.
    std::vector<Instruction*> users = instruction->users();
    for (Instruction* user : users) {
      if (user == copy) continue;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction) user->ReplaceOperand(i, copy);
      }
    }
    if (entry->root() == instruction) entry->set_root(copy);
    ++copies;
  }
  if (copies > 0) entry->SortTopologically();
  return copies > 0;
}

}  // namespace xjit
