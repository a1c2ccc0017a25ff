#include "passes/canonicalize.h"

#include <deque>
#include <numeric>
#include <vector>

#include "absl/container/flat_hash_set.h"

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

// Inlines the calls and expands the outer products of `computation`. One
// pass in order, the copies an inlining makes joining the end of the queue:
// every call is seen once, so a chain of calls d deep inlines in time
// linear in d. An instruction is reached after its operands (the order is
// topological, and so are the copies), so removing the operands a call
// leaves dead never removes one still queued.
absl::StatusOr<bool> CanonicalizeComputation(Computation* computation) {
  std::deque<Instruction*> queue;
  auto enqueue = [&](Instruction* instruction) {
    if (instruction->opcode() == Opcode::kCall || IsOuterProductDot(*instruction)) {
      queue.push_back(instruction);
    }
  };
  for (Instruction* instruction : InstructionsOf(*computation)) enqueue(instruction);
  bool changed = false;
  std::vector<Instruction*> copies;
  NameSet names(*computation);
  while (!queue.empty()) {
    Instruction* instruction = queue.front();
    queue.pop_front();
    if (instruction->opcode() == Opcode::kCall) {
      copies.clear();
      if (!InlineCall(instruction, &copies, &names).ok()) continue;
      changed = true;
      for (Instruction* copy : copies) enqueue(copy);
    } else {
      XJIT_ASSIGN_OR_RETURN(bool expanded, ExpandOuterProduct(instruction));
      changed = changed || expanded;
    }
  }
  if (changed) computation->SortTopologically();
  return changed;
}

}  // namespace

absl::StatusOr<bool> Canonicalize::Run(Module* module) {
  // A computation that only calls run is copied into its callers: it is
  // canonicalised only if one of those calls is kept. Inlining into it as
  // well would copy a chain of calls d deep once per level (time and memory
  // quadratic in d) for computations that end up unused.
  absl::flat_hash_set<const Computation*> called, used_otherwise;
  for (const Computation* computation : ComputationsOf(*module)) {
    for (const auto& instruction : computation->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        (instruction->opcode() == Opcode::kCall ? called : used_otherwise).insert(callee);
      }
    }
  }
  std::vector<Computation*> work;
  absl::flat_hash_set<const Computation*> queued;
  for (Computation* computation : ComputationsOf(*module)) {
    if (computation != module->entry() && called.contains(computation) &&
        !used_otherwise.contains(computation)) {
      continue;
    }
    work.push_back(computation);
    queued.insert(computation);
  }
  bool changed = false;
  for (size_t next = 0; next < work.size(); ++next) {
    XJIT_ASSIGN_OR_RETURN(bool computation_changed, CanonicalizeComputation(work[next]));
    changed = changed || computation_changed;
    // Callees of calls that were kept.
    for (const auto& instruction : work[next]->instructions()) {
      for (Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && queued.insert(callee).second) work.push_back(callee);
      }
    }
  }
  // The rest were inlined everywhere they were called: no instruction the
  // module can reach uses them, and the passes after this one need not look
  // at them (each still calls the next in a chain of calls).
  std::vector<Computation*> inlined;
  for (Computation* computation : ComputationsOf(*module)) {
    if (!queued.contains(computation)) inlined.push_back(computation);
  }
  for (Computation* computation : inlined) module->RemoveComputation(computation);
  return changed || !inlined.empty();
}

}  // namespace xjit
