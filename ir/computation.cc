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
  instructions_.push_back(std::move(instruction));
  return raw;
}

void Computation::RemoveInstruction(Instruction* instruction) {
  XJIT_CHECK(instruction->users().empty());
  XJIT_CHECK(instruction != root_);
  // Searches run from the back: passes remove dead instructions last to
  // first (RemoveDeadInstructions), so each removal finds its instruction
  // (and itself among its operands' users) at or near the end, and removing
  // a dead chain costs linear time rather than a scan per instruction.
  const std::vector<Instruction*>& operands = instruction->operands_;
  for (size_t k = 0; k < operands.size(); ++k) {
    // A user is listed once however many operands it reads the value through.
    if (std::find(operands.begin(), operands.begin() + k, operands[k]) != operands.begin() + k) {
      continue;
    }
    std::vector<Instruction*>& users = operands[k]->users_;
    auto it = std::find(users.rbegin(), users.rend(), instruction);
    if (it != users.rend()) users.erase(std::next(it).base());
  }
  instruction->operands_.clear();
  if (instruction->opcode() == Opcode::kParameter) {
    for (auto& p : parameters_) {
      if (p == instruction) p = nullptr;
    }
  }
  auto it = std::find_if(instructions_.rbegin(), instructions_.rend(),
                         [instruction](const std::unique_ptr<Instruction>& i) {
                           return i.get() == instruction;
                         });
  XJIT_CHECK(it != instructions_.rend());
  names_.Remove(instruction);
  instructions_.erase(std::next(it).base());
}

Instruction* Computation::FindInstruction(absl::string_view name) const {
  if (Instruction* known = names_.Find(name)) return known;
  if (!names_.Contains(name)) return nullptr;
  // Several instructions share the name (a rewrite in progress; the verifier
  // rejects it): the first in definition order, as the contract says.
  for (const auto& instruction : instructions_) {
    if (instruction->name() == name) return instruction.get();
  }
  return nullptr;
}

void Computation::SortTopologically() {
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
}

void Computation::MoveInstructionBefore(Instruction* instruction, const Instruction* before) {
  if (instruction == before) return;
  auto find = [&](const Instruction* target) {
    return std::find_if(instructions_.begin(), instructions_.end(),
                        [target](const std::unique_ptr<Instruction>& i) { return i.get() == target; });
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
