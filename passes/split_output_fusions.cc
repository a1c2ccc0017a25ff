// SplitOutputFusions (see split_output_fusions.h).
#include "passes/split_output_fusions.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "passes/fuse.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// Builds the epilogue computation: `fused` with `contraction` read from a
// parameter. Parameters are numbered as `operands` receives the outer
// instructions they stand for (the contraction's result first).
std::unique_ptr<Computation> BuildEpilogue(const Computation& fused,
                                           const Instruction& contraction,
                                           Instruction* outer_contraction,
                                           const Instruction& fusion,
                                           std::vector<Instruction*>* operands) {
  auto body = std::make_unique<Computation>(absl::StrCat(fused.name(), ".epilogue"));
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  auto add_parameter = [&](Instruction* outer) {
    auto owned = std::make_unique<Instruction>(Opcode::kParameter, outer->shape());
    const int64_t number = static_cast<int64_t>(operands->size());
    owned->mutable_attrs()->parameter_number = number;
    owned->set_name(absl::StrCat("param_", number));
    operands->push_back(outer);
    return body->AddInstruction(std::move(owned));
  };
  map[&contraction] = add_parameter(outer_contraction);
  for (const auto& instruction : fused.instructions()) {
    if (instruction.get() == &contraction) continue;
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> instruction_operands;
    for (const Instruction* operand : instruction->operands()) {
      auto it = map.find(operand);
      if (it == map.end()) {
        // A parameter the epilogue reads (the bias, a scale): one per
        // distinct outer operand, made on first use.
        Instruction* outer = fusion.operand(operand->attrs().parameter_number);
        it = map.emplace(operand, add_parameter(outer)).first;
      }
      instruction_operands.push_back(it->second);
    }
    map[instruction.get()] = CloneInstruction(*instruction, body.get(), instruction_operands);
  }
  body->set_root(map.at(fused.root()));
  body->SortTopologically();
  return body;
}

// The computations the JIT compiles as programs: the entry and, through
// while, conditional and async-start, the computations they call (the
// others run in the evaluator).
std::vector<Computation*> ProgramComputations(Module* module) {
  std::vector<Computation*> programs = {module->entry()};
  absl::flat_hash_set<const Computation*> seen = {module->entry()};
  for (size_t next = 0; next < programs.size(); ++next) {
    for (Instruction* instruction : InstructionsOf(*programs[next])) {
      const Opcode opcode = instruction->opcode();
      if (opcode != Opcode::kWhile && opcode != Opcode::kConditional &&
          opcode != Opcode::kAsyncStart) {
        continue;
      }
      for (Computation* callee : instruction->called_computations()) {
        if (callee != nullptr && seen.insert(callee).second) programs.push_back(callee);
      }
    }
  }
  return programs;
}

// Splits the output fusions of `entry`, one of `module`'s computations;
// returns how many it split.
absl::StatusOr<int> SplitOutputFusionsOf(Module* module, Computation* entry) {
  int split = 0;
  for (Instruction* fusion : InstructionsOf(*entry)) {
    if (fusion->opcode() != Opcode::kFusion ||
        fusion->attrs().fusion_kind != FusionKind::kOutput ||
        fusion->called_computations().empty() || HasControlEdges(*fusion)) {
      continue;
    }
    const Computation& fused = *fusion->called_computations()[0];
    const Instruction* contraction = FusedContraction(fused);
    if (contraction == nullptr || !fused.root()->shape().IsArray()) continue;
    std::vector<Instruction*> contraction_operands;
    for (const Instruction* operand : contraction->operands()) {
      contraction_operands.push_back(fusion->operand(operand->attrs().parameter_number));
    }
    Instruction* outer = CloneInstruction(*contraction, entry, contraction_operands);
    Instruction* replacement = outer;
    if (fused.root() != contraction) {
      std::vector<Instruction*> operands;
      std::unique_ptr<Computation> body =
          BuildEpilogue(fused, *contraction, outer, *fusion, &operands);
      body->set_name(UniqueComputationName(*module, body->name()));
      Computation* installed = module->AddComputation(std::move(body));
      auto owned = std::make_unique<Instruction>(Opcode::kFusion, fusion->shape());
      owned->mutable_attrs()->fusion_kind = FusionKind::kLoop;
      owned->set_called_computations({installed});
      owned->set_name(UniqueInstructionName(*entry, absl::StrCat(fusion->name(), ".epilogue")));
      replacement = entry->AddInstruction(std::move(owned));
      for (Instruction* operand : operands) replacement->AppendOperand(operand);
    }
    Computation* old_body = fusion->called_computations()[0];
    if (!ReplaceInstruction(fusion, replacement)) {
      return absl::InternalError(
          absl::StrCat("split-output-fusions: cannot replace ", fusion->name()));
    }
    // The old fused computation is now unused unless another fusion shares it.
    bool still_called = false;
    for (const auto& computation : module->computations()) {
      for (const auto& instruction : computation->instructions()) {
        for (const Computation* called : instruction->called_computations()) {
          still_called |= called == old_body;
        }
      }
    }
    if (!still_called) module->RemoveComputation(old_body);
    ++split;
  }
  if (split > 0) entry->SortTopologically();
  return split;
}

}  // namespace

absl::StatusOr<bool> SplitOutputFusions::Run(Module* module) {
  if (module->entry() == nullptr) return false;
  int split = 0;
  for (Computation* program : ProgramComputations(module)) {
    XJIT_ASSIGN_OR_RETURN(int n, SplitOutputFusionsOf(module, program));
    split += n;
  }
  return split > 0;
}

}  // namespace xjit
