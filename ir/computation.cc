#include "ir/computation.h"

#include <algorithm>

#include "ir/module.h"
#include "ir/status_macros.h"

namespace xjit {

void Computation::set_name(std::string name) {
  if (parent_ == nullptr) {
    name_ = std::move(name);
    return;
  }
  parent_->computation_names_.Remove(this);
  name_ = std::move(name);
  parent_->computation_names_.Add(this);
}

Instruction* Computation::AddInstruction(std::unique_ptr<Instruction> instruction) {
  Instruction* raw = instruction.get();
  raw->parent_ = this;
  if (raw->opcode() == Opcode::kParameter) {
    int64_t number = raw->attrs().parameter_number;
    if (number >= 0) {
      if (number >= parameter_count()) parameters_.resize(number + 1, nullptr);
      parameters_[number] = raw;
    }
  }
  names_.Add(raw);
  raw->position_ = static_cast<int64_t>(instructions_.size());
  instructions_.push_back(std::move(instruction));
  return raw;
}

void Computation::RemoveInstruction(Instruction* instruction) {
  XJIT_CHECK(instruction->users().empty());
  XJIT_CHECK(instruction != root_);
  XJIT_CHECK(instruction->parent_ == this);
  const int64_t position = instruction->position_;
  XJIT_CHECK(position >= 0 && position < static_cast<int64_t>(instructions_.size()) &&
             instructions_[position].get() == instruction);
  // This instruction leaves each distinct operand's users (constant time
  // each: Instruction::EraseUser).
  auto forget = [instruction](Instruction* operand) { operand->EraseUser(instruction); };
  const std::vector<Instruction*>& operands = instruction->operands_;
  if (Instruction::OperandIndex* index = instruction->OperandPositions()) {
    // Wide: the index lists each distinct operand once, but in hash order;
    // the operands' own order is kept for determinism.
    for (size_t k = 0; k < operands.size(); ++k) {
      if (index->at(operands[k]).front() == static_cast<int64_t>(k)) forget(operands[k]);
    }
  } else {
    for (size_t k = 0; k < operands.size(); ++k) {
      // A user is listed once however many operands it reads the value through.
      if (std::find(operands.begin(), operands.begin() + k, operands[k]) ==
          operands.begin() + k) {
        forget(operands[k]);
      }
    }
  }
  instruction->ClearOperands();
  if (instruction->opcode() == Opcode::kParameter) {
    for (auto& p : parameters_) {
      if (p == instruction) p = nullptr;
    }
  }
  names_.Remove(instruction);
  instructions_[position].reset();
  holes_.fetch_add(1, std::memory_order_release);
}

void Computation::CloseHoles() const {
  std::lock_guard<std::mutex> lock(holes_mutex_);
  if (holes_.load(std::memory_order_relaxed) == 0) return;
  instructions_.erase(std::remove(instructions_.begin(), instructions_.end(), nullptr),
                      instructions_.end());
  for (size_t i = 0; i < instructions_.size(); ++i) instructions_[i]->position_ = static_cast<int64_t>(i);
  holes_.store(0, std::memory_order_release);
}

void Computation::Renumber() {
  for (size_t i = 0; i < instructions_.size(); ++i) instructions_[i]->position_ = static_cast<int64_t>(i);
}

Instruction* Computation::FindInstruction(absl::string_view name) const {
  if (Instruction* known = names_.Find(name)) return known;
  if (!names_.Contains(name)) return nullptr;
  // Several instructions share the name (a rewrite in progress; the verifier
  // rejects it): the first in definition order, as the contract says.
  for (const auto& instruction : instructions()) {
    if (instruction->name() == name) return instruction.get();
  }
  return nullptr;
}

void Computation::SortTopologically() {
  CloseHoles();
  absl::flat_hash_map<Instruction*, int> state;  // 1 = visiting, 2 = done
  std::vector<std::unique_ptr<Instruction>> sorted;
  absl::flat_hash_map<Instruction*, std::unique_ptr<Instruction>*> owner;
  for (auto& instruction : instructions_) owner[instruction.get()] = &instruction;
  // Iterative DFS so that long chains do not overflow the stack.
  for (auto& start : instructions_) {
    if (start == nullptr || state[start.get()] == 2) continue;
    std::vector<std::pair<Instruction*, size_t>> stack = {{start.get(), 0}};
    state[start.get()] = 1;
    while (!stack.empty()) {
      auto& [node, next] = stack.back();
      const size_t n_ops = node->operands().size();
      const size_t n_all = n_ops + node->control_predecessors().size();
      if (next < n_all) {
        Instruction* dep = next < n_ops ? node->operands()[next]
                                        : node->control_predecessors()[next - n_ops];
        ++next;
        if (owner.contains(dep) && state[dep] == 0) {
          state[dep] = 1;
          stack.push_back({dep, 0});
        }
        continue;
      }
      state[node] = 2;
      sorted.push_back(std::move(*owner[node]));
      stack.pop_back();
    }
  }
  instructions_ = std::move(sorted);
  Renumber();
}

void Computation::MoveInstructionBefore(Instruction* instruction, const Instruction* before) {
  if (instruction == before) return;
  CloseHoles();
  auto find = [&](const Instruction* target) {
    const int64_t p = target->position_;
    return target->parent_ == this && p >= 0 && p < static_cast<int64_t>(instructions_.size()) &&
                   instructions_[p].get() == target
               ? instructions_.begin() + p
               : instructions_.end();
  };
  auto from = find(instruction);
  auto to = before == nullptr ? instructions_.end() : find(before);
  XJIT_CHECK(from != instructions_.end());
  XJIT_CHECK(before == nullptr || to != instructions_.end());
  // One rotation either way keeps everything else in order.
  if (from < to) {
    std::rotate(from, from + 1, to);
  } else {
    std::rotate(to, from, from + 1);
  }
  for (auto it = std::min(from, to); it != std::max(from + 1, to); ++it) {
    (*it)->position_ = it - instructions_.begin();
  }
}

void Computation::SetParameters(std::vector<Instruction*> parameters) {
  for (size_t i = 0; i < parameters.size(); ++i) {
    Instruction* parameter = parameters[i];
    XJIT_CHECK(parameter != nullptr && parameter->parent() == this &&
               parameter->opcode() == Opcode::kParameter);
    parameter->mutable_attrs()->parameter_number = static_cast<int64_t>(i);
  }
  parameters_ = std::move(parameters);
}

}  // namespace xjit
