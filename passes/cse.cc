#include "passes/cse.h"

#include <algorithm>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "ir/hlo_text/printer.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// The identity of an instruction for CSE: its printed line without the name
// and without the attributes that do not change semantics. Operands print by
// name, which is unique in the computation, so equal keys mean the same
// operand instructions. The printer prints exactly the attributes an opcode
// uses, so the key covers them whatever fields InstructionAttributes gains.
std::string Key(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kConstant) {
    // By a hash of the bits, not text: printing a large literal is slow, and
    // its text may not distinguish NaN payloads; the bits themselves made a
    // key as large as the constant (a second GiB for a 1 GiB constant).
    // SameConstant compares the bits of constants whose keys match.
    const auto data = instruction.literal().data();
    return absl::StrCat("constant|", instruction.shape().ToString(), "|",
                        absl::Hash<absl::string_view>{}(absl::string_view(
                            reinterpret_cast<const char*>(data.data()), data.size())));
  }
  std::string text = PrintInstruction(instruction);
  const size_t eq = text.find(" = ");
  std::string key = eq == std::string::npos ? text : text.substr(eq + 3);
  const auto& opaque = instruction.opaque_attributes();
  for (auto it = opaque.rbegin(); it != opaque.rend(); ++it) {
    const std::string suffix = absl::StrCat(", ", it->name, "=", it->value);
    if (absl::EndsWith(key, suffix)) key.resize(key.size() - suffix.size());
  }
  return key;
}

// Whether constants with equal keys hold the same bits (not a hash
// collision).
bool SameConstant(const Instruction& a, const Instruction& b) {
  const auto x = a.literal().data(), y = b.literal().data();
  return a.literal().SharesDataWith(b.literal()) ||
         (x.size() == y.size() && std::equal(x.begin(), x.end(), y.begin()));
}

bool Eligible(const Instruction& instruction,
              const absl::flat_hash_set<const Instruction*>& control_preds,
              SideEffectCache* effects) {
  const Opcode opcode = instruction.opcode();
  // A custom call is eligible unless it has side effects (the check below):
  // XLA's contract makes one without custom_call_has_side_effect a pure
  // function of its operands, which DCE already relies on.
  if (opcode == Opcode::kParameter) return false;
  if (opcode == Opcode::kConstant && !instruction.shape().IsArray()) return false;
  if (!instruction.control_predecessors().empty() || control_preds.contains(&instruction)) {
    return false;
  }
  return !effects->HasSideEffectDeep(instruction);
}

bool RunOnComputation(Computation* computation, SideEffectCache* effects) {
  absl::flat_hash_set<const Instruction*> control_preds;
  for (const auto& i : computation->instructions()) {
    for (const Instruction* p : i->control_predecessors()) control_preds.insert(p);
  }
  absl::flat_hash_map<std::string, Instruction*> first;
  std::vector<Instruction*> replaced;
  for (Instruction* instruction : InstructionsOf(*computation)) {
    if (!Eligible(*instruction, control_preds, effects)) continue;
    auto [it, inserted] = first.try_emplace(Key(*instruction), instruction);
    if (inserted) continue;
    Instruction* earlier = it->second;
    if (instruction->opcode() == Opcode::kConstant && !SameConstant(*instruction, *earlier)) {
      continue;
    }
    // Redirect uses only; removal waits until the walk is done so that no
    // instruction in `first` is deleted under it.
    std::vector<Instruction*> users = instruction->users();
    for (Instruction* user : users) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction) user->ReplaceOperand(i, earlier);
      }
    }
    if (computation->root() == instruction) computation->set_root(earlier);
    replaced.push_back(instruction);
  }
  RemoveIfDead(replaced, effects);
  return !replaced.empty();
}

}  // namespace

absl::StatusOr<bool> EliminateCommonSubexpressions::Run(Module* module) {
  bool changed = false;
  SideEffectCache effects;  // One walk per computation for the whole module.
  for (Computation* computation : ComputationsOf(*module)) {
    if (RunOnComputation(computation, &effects)) changed = true;
  }
  return changed;
}

}  // namespace xjit
