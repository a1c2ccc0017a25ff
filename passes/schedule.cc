// List scheduling by memory pressure; see schedule.h.
#include "passes/schedule.h"

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/layout_util.h"
#include "passes/rewrite_util.h"

namespace xjit {

bool IsAliasingInstruction(const Instruction& instruction) {
  switch (instruction.opcode()) {
    case Opcode::kBitcast: case Opcode::kGetTupleElement: case Opcode::kTuple:
    case Opcode::kOptimizationBarrier: case Opcode::kDomain: case Opcode::kAddDependency:
      return true;
    default:
      return false;
  }
}

namespace {

// Bytes of storage an instruction defines itself.
int64_t DefinedBytes(const Instruction& instruction) {
  if (IsAliasingInstruction(instruction) || instruction.opcode() == Opcode::kParameter ||
      instruction.opcode() == Opcode::kConstant) {
    return 0;
  }
  return ByteSize(instruction.shape());
}

}  // namespace

std::vector<const Instruction*> ComputeSchedule(const Computation& computation) {
  return ComputeSchedule(computation, nullptr);
}

std::vector<const Instruction*> ComputeSchedule(const Computation& computation,
                                                SideEffectCache* effects) {
  SideEffectCache own_effects;
  if (effects == nullptr) effects = &own_effects;
  const auto& instructions = computation.instructions();
  const int64_t n = static_cast<int64_t>(instructions.size());
  absl::flat_hash_map<const Instruction*, int64_t> position;
  for (int64_t i = 0; i < n; ++i) position[instructions[i].get()] = i;

  // Dependencies: operands, control predecessors, and the previous
  // side-effecting instruction.
  std::vector<std::vector<int64_t>> successors(n);
  std::vector<int64_t> pending(n, 0);
  auto add_edge = [&](int64_t from, int64_t to) {
    successors[from].push_back(to);
    ++pending[to];
  };
  int64_t previous_effect = -1;
  for (int64_t i = 0; i < n; ++i) {
    const Instruction* instruction = instructions[i].get();
    absl::flat_hash_set<int64_t> preds;
    for (const Instruction* operand : instruction->operands()) {
      auto it = position.find(operand);
      if (it != position.end()) preds.insert(it->second);
    }
    for (const Instruction* predecessor : instruction->control_predecessors()) {
      auto it = position.find(predecessor);
      if (it != position.end()) preds.insert(it->second);
    }
    if (effects->HasSideEffectDeep(*instruction)) {
      if (previous_effect >= 0) preds.insert(previous_effect);
      previous_effect = i;
    }
    for (int64_t p : preds) add_edge(p, i);
  }

  // Users not yet scheduled, per instruction (each user counted once).
  std::vector<int64_t> unscheduled_users(n, 0);
  for (int64_t i = 0; i < n; ++i) {
    unscheduled_users[i] = static_cast<int64_t>(instructions[i]->users().size());
  }
  auto frees = [&](int64_t i) -> int64_t {
    int64_t bytes = 0;
    absl::flat_hash_set<const Instruction*> seen;
    for (const Instruction* operand : instructions[i]->operands()) {
      if (!seen.insert(operand).second) continue;
      auto it = position.find(operand);
      if (it == position.end() || operand == computation.root()) continue;
      if (unscheduled_users[it->second] == 1) bytes += DefinedBytes(*operand);
    }
    return bytes;
  };

  std::vector<const Instruction*> schedule;
  schedule.reserve(n);
  std::vector<int64_t> ready;
  for (int64_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    size_t best = 0;
    int64_t best_score = INT64_MIN;
    bool best_is_parameter = false;
    for (size_t r = 0; r < ready.size(); ++r) {
      const Instruction* candidate = instructions[ready[r]].get();
      const bool is_parameter = candidate->opcode() == Opcode::kParameter;
      const int64_t score = frees(ready[r]) - DefinedBytes(*candidate);
      const bool better = (is_parameter && !best_is_parameter) ||
                          (is_parameter == best_is_parameter &&
                           (score > best_score || (score == best_score && ready[r] < ready[best])));
      if (r == 0 || better) {
        best = r;
        best_score = score;
        best_is_parameter = is_parameter;
      }
    }
    const int64_t chosen = ready[best];
    ready.erase(ready.begin() + best);
    const Instruction* instruction = instructions[chosen].get();
    schedule.push_back(instruction);
    absl::flat_hash_set<const Instruction*> seen;
    for (const Instruction* operand : instruction->operands()) {
      if (!seen.insert(operand).second) continue;
      auto it = position.find(operand);
      if (it != position.end()) --unscheduled_users[it->second];
    }
    for (int64_t next : successors[chosen]) {
      if (--pending[next] == 0) ready.push_back(next);
    }
  }
  return schedule;
}

}  // namespace xjit
