// List scheduling by memory pressure; see schedule.h.
#include "passes/schedule.h"

#include <cstdint>
#include <queue>

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
  // The bytes that running `i` now would free: its operands (each once,
  // not the root) whose last unscheduled user it is.
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

  // The ready instructions in a heap ordered as the choice is made:
  // parameters first, then the highest score (bytes freed net of bytes
  // defined), then the earliest. A ready instruction's score only grows
  // (when one of its operands is left with it as its one unscheduled
  // user); each change pushes a new entry and stale ones are skipped. A
  // scan of every ready instruction per choice made wide computations
  // quadratic (a root tuple of 20,000 results compiled in 50 s).
  struct Entry {
    bool is_parameter;
    int64_t score;
    int64_t index;
  };
  const auto after = [](const Entry& a, const Entry& b) {
    if (a.is_parameter != b.is_parameter) return b.is_parameter;
    if (a.score != b.score) return a.score < b.score;
    return a.index > b.index;
  };
  std::priority_queue<Entry, std::vector<Entry>, decltype(after)> ready(after);
  std::vector<int64_t> score(n, 0);
  std::vector<bool> is_ready(n, false), scheduled(n, false);
  const auto make_ready = [&](int64_t i) {
    const Instruction& instruction = *instructions[i];
    score[i] = frees(i) - DefinedBytes(instruction);
    is_ready[i] = true;
    ready.push({instruction.opcode() == Opcode::kParameter, score[i], i});
  };
  for (int64_t i = 0; i < n; ++i) {
    if (pending[i] == 0) make_ready(i);
  }

  std::vector<const Instruction*> schedule;
  schedule.reserve(n);
  while (!ready.empty()) {
    const Entry top = ready.top();
    ready.pop();
    const int64_t chosen = top.index;
    if (scheduled[chosen] || top.score != score[chosen]) continue;  // Stale.
    scheduled[chosen] = true;
    const Instruction* instruction = instructions[chosen].get();
    schedule.push_back(instruction);
    absl::flat_hash_set<const Instruction*> seen;
    for (const Instruction* operand : instruction->operands()) {
      if (!seen.insert(operand).second) continue;
      auto it = position.find(operand);
      if (it == position.end() || --unscheduled_users[it->second] != 1 ||
          operand == computation.root()) {
        continue;
      }
      // `operand` dies with its last unscheduled user: if that one is
      // ready, running it now frees the operand's bytes too.
      for (const Instruction* user : operand->users()) {
        auto u = position.find(user);
        if (u == position.end() || scheduled[u->second]) continue;
        if (is_ready[u->second]) {
          score[u->second] += DefinedBytes(*operand);
          ready.push({user->opcode() == Opcode::kParameter, score[u->second], u->second});
        }
        break;
      }
    }
    for (int64_t next : successors[chosen]) {
      if (--pending[next] == 0) make_ready(next);
    }
  }
  return schedule;
}

}  // namespace xjit
