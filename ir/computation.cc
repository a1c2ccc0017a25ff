#include "ir/computation.h"

#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace xjit {

namespace {

// `name` split as `stem.N` (N canonical: digits without a leading zero, at
// most 18 of them); false if it has no such suffix.
bool SplitNumericSuffix(absl::string_view name, absl::string_view* stem, int64_t* n) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot == 0 || dot + 1 == name.size()) return false;
  const absl::string_view digits = name.substr(dot + 1);
  if (digits[0] == '0' || digits.size() > 18) return false;
  int64_t value = 0;
  for (char c : digits) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return false;
    value = value * 10 + (c - '0');
  }
  *stem = name.substr(0, dot);
  *n = value;
  return true;
}

// `name` without a trailing `.N` (digits only, leading zeros included: the
// stem FreeInstructionName derives candidates from).
absl::string_view StripNumericSuffix(absl::string_view name) {
  const size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot + 1 == name.size() || dot == 0) return name;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, dot);
}

}  // namespace

void Computation::IndexName(Instruction* instruction) {
  NameEntry& entry = names_[instruction->name()];
  if (entry.count++ == 0) entry.instruction = instruction;
}

void Computation::UnindexName(Instruction* instruction) {
  auto it = names_.find(instruction->name());
  XJIT_CHECK(it != names_.end());
  if (--it->second.count == 0) {
    names_.erase(it);
    // The name is free again: FreeInstructionName must be able to return it.
    absl::string_view stem;
    int64_t n;
    if (SplitNumericSuffix(instruction->name(), &stem, &n)) {
      auto s = stems_.find(stem);
      if (s != stems_.end() && n < s->second.frontier) s->second.freed.insert(n);
    }
  } else if (it->second.instruction == instruction) {
    // Another instruction keeps the name; FindInstruction scans for it.
    it->second.instruction = nullptr;
  }
}

std::string Computation::FreeInstructionName(absl::string_view base) const {
  if (!names_.contains(base)) return std::string(base);
  const absl::string_view stem = StripNumericSuffix(base);
  StemState& state = stems_[stem];
  // A freed number may have been taken again since (a rename): drop those.
  while (!state.freed.empty()) {
    std::string name = absl::StrCat(stem, ".", *state.freed.begin());
    if (!names_.contains(name)) return name;
    state.freed.erase(state.freed.begin());
  }
  for (;; ++state.frontier) {
    std::string name = absl::StrCat(stem, ".", state.frontier);
    if (!names_.contains(name)) return name;
  }
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
  IndexName(raw);
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
  UnindexName(instruction);
  instructions_.erase(std::next(it).base());
}

Instruction* Computation::FindInstruction(absl::string_view name) const {
  auto it = names_.find(name);
  if (it == names_.end()) return nullptr;
  if (it->second.count == 1 && it->second.instruction != nullptr) return it->second.instruction;
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
