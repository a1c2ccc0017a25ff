#include "ir/module.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"

namespace xjit {

Computation* Module::AddComputation(std::unique_ptr<Computation> computation) {
  Computation* raw = computation.get();
  raw->parent_ = this;
  computation_names_.Add(raw);
  computations_.push_back(std::move(computation));
  return raw;
}

Computation* Module::FindComputation(absl::string_view name) const {
  if (Computation* known = computation_names_.Find(name)) return known;
  if (!computation_names_.Contains(name)) return nullptr;
  for (const auto& computation : computations_) {
    if (computation->name() == name) return computation.get();
  }
  return nullptr;
}

void Module::RemoveComputation(Computation* computation) {
  if (computation->parent() == this) computation_names_.Remove(computation);
  computations_.erase(std::remove_if(computations_.begin(), computations_.end(),
                                     [computation](const std::unique_ptr<Computation>& c) {
                                       return c.get() == computation;
                                     }),
                      computations_.end());
}

std::unique_ptr<Module> Module::Clone() const {
  auto clone = std::make_unique<Module>(name_);
  // Every computation first, then their instructions: passes append the
  // computations they create (fused computations) after their callers.
  absl::flat_hash_map<const Computation*, Computation*> computation_map;
  for (const auto& computation : computations_) {
    auto copy = std::make_unique<Computation>(computation->name());
    copy->set_execution_thread(computation->execution_thread());
    computation_map[computation.get()] = clone->AddComputation(std::move(copy));
  }
  for (const auto& computation : computations_) {
    Computation* copy = computation_map.at(computation.get());
    absl::flat_hash_map<const Instruction*, Instruction*> instruction_map;
    for (const auto& instruction : computation->instructions()) {
      auto new_instruction = std::make_unique<Instruction>(instruction->opcode(), instruction->shape());
      new_instruction->set_name(instruction->name());
      new_instruction->CopyAttributesFrom(*instruction);
      for (Instruction* operand : instruction->operands()) {
        new_instruction->AppendOperand(instruction_map.at(operand));
      }
      for (Instruction* predecessor : instruction->control_predecessors()) {
        new_instruction->AddControlPredecessor(instruction_map.at(predecessor));
      }
      std::vector<Computation*> called;
      for (Computation* c : instruction->called_computations()) called.push_back(computation_map.at(c));
      new_instruction->set_called_computations(std::move(called));
      instruction_map[instruction.get()] = copy->AddInstruction(std::move(new_instruction));
    }
    if (computation->root() != nullptr) copy->set_root(instruction_map.at(computation->root()));
  }
  if (entry_ != nullptr) clone->entry_ = computation_map.at(entry_);
  clone->entry_parameter_layouts_ = entry_parameter_layouts_;
  clone->entry_result_layout_ = entry_result_layout_;
  clone->replica_count_ = replica_count_;
  clone->num_partitions_ = num_partitions_;
  clone->is_scheduled_ = is_scheduled_;
  clone->input_output_aliases_ = input_output_aliases_;
  clone->opaque_attributes_ = opaque_attributes_;
  return clone;
}

}  // namespace xjit
