#include "passes/rewrite_util.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/shape_inference/shape_inference.h"
#include "ir/status_macros.h"

namespace xjit {

bool IsCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllGather: case Opcode::kAllGatherStart: case Opcode::kAllGatherDone:
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllReduceDone:
    case Opcode::kAllToAll: case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectivePermuteDone: case Opcode::kCollectiveReduce:
    case Opcode::kReduceScatter: case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

namespace {

bool HasSideEffectShallow(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (HasSideEffect(opcode) || IsCollective(opcode)) return true;
  switch (opcode) {
    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kCopyStart: case Opcode::kCopyDone:
      return true;
    case Opcode::kCustomCall:
      return instruction.attrs().custom_call_has_side_effect;
    default:
      return false;
  }
}

// Instructions looked at by side-effect walks (SideEffectWalkInstructions).
std::atomic<int64_t> side_effect_walk_instructions{0};

}  // namespace

bool HasSideEffectDeep(const Instruction& instruction) {
  // A cache for one question costs what a plain walk would: each computation
  // reachable from the instruction once.
  return SideEffectCache().HasSideEffectDeep(instruction);
}

int64_t SideEffectWalkInstructions() {
  return side_effect_walk_instructions.load(std::memory_order_relaxed);
}

SideEffectCache::SideEffectCache(bool (*shallow)(const Instruction&))
    : shallow_(shallow != nullptr ? shallow : &HasSideEffectShallow) {}

bool SideEffectCache::HasSideEffectDeep(const Instruction& instruction) {
  if (shallow_(instruction)) return true;
  for (const Computation* callee : instruction.called_computations()) {
    if (callee != nullptr && HasSideEffect(*callee)) return true;
  }
  return false;
}

bool SideEffectCache::HasSideEffect(const Computation& computation) {
  if (auto it = answers_.find(&computation); it != answers_.end()) return it->second;
  // The computations reachable from `computation` not answered yet, callees
  // before callers (an iterative depth-first walk: nesting may be deep). An
  // entry is pushed a second time, marked, once its callees are pushed; it is
  // answered when that mark comes off, after them.
  std::vector<const Computation*> order;
  absl::flat_hash_set<const Computation*> visited;
  std::vector<std::pair<const Computation*, bool>> stack = {{&computation, false}};
  while (!stack.empty()) {
    const auto [current, callees_done] = stack.back();
    stack.pop_back();
    if (callees_done) {
      order.push_back(current);
      continue;
    }
    if (!visited.insert(current).second || answers_.contains(current)) continue;
    stack.push_back({current, true});
    for (const auto& inner : current->instructions()) {
      for (const Computation* callee : inner->called_computations()) {
        if (callee != nullptr && !visited.contains(callee)) stack.push_back({callee, false});
      }
    }
  }
  for (const Computation* current : order) {
    side_effect_walk_instructions.fetch_add(current->instruction_count(),
                                            std::memory_order_relaxed);
    bool effect = false;
    for (const auto& inner : current->instructions()) {
      if (shallow_(*inner)) effect = true;
      for (const Computation* callee : inner->called_computations()) {
        if (callee == nullptr) continue;
        // Unknown only on a cycle of calls, which the verifier rejects:
        // assume the worst.
        auto known = answers_.find(callee);
        if (known == answers_.end() || known->second) effect = true;
      }
      if (effect) break;
    }
    answers_[current] = effect;
  }
  return answers_.at(&computation);
}

bool HasControlEdges(const Instruction& instruction) {
  if (!instruction.control_predecessors().empty()) return true;
  const Computation* parent = instruction.parent();
  if (parent == nullptr) return false;
  for (const auto& other : parent->instructions()) {
    const auto& preds = other->control_predecessors();
    if (std::find(preds.begin(), preds.end(), &instruction) != preds.end()) return true;
  }
  return false;
}

std::vector<Computation*> ComputationsOf(const Module& module) {
  std::vector<Computation*> out;
  out.reserve(module.computations().size());
  for (const auto& c : module.computations()) out.push_back(c.get());
  return out;
}

std::vector<Instruction*> InstructionsOf(const Computation& computation) {
  std::vector<Instruction*> out;
  out.reserve(computation.instructions().size());
  for (const auto& i : computation.instructions()) out.push_back(i.get());
  return out;
}

namespace {

// `name` without a trailing `.N` (digits only).
absl::string_view StripNumericSuffix(absl::string_view name) {
  size_t dot = name.rfind('.');
  if (dot == absl::string_view::npos || dot + 1 == name.size() || dot == 0) return name;
  for (size_t i = dot + 1; i < name.size(); ++i) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(name[i]))) return name;
  }
  return name.substr(0, dot);
}

template <typename Taken>
std::string UniqueName(absl::string_view base, const Taken& taken) {
  std::string wanted(base);
  if (!taken(wanted)) return wanted;
  const absl::string_view stem = StripNumericSuffix(base);
  for (int64_t n = 1;; ++n) {
    std::string candidate = absl::StrCat(stem, ".", n);
    if (!taken(candidate)) return candidate;
  }
}

}  // namespace

std::string UniqueInstructionName(const Computation& computation, absl::string_view base) {
  return computation.FreeInstructionName(base);
}

std::string UniqueComputationName(const Module& module, absl::string_view base) {
  return module.FreeComputationName(base);
}

namespace {

// UniqueName's answer for the `count` names `for_each_name` visits, in one
// pass: the smallest free `stem.N` is at most count + 1.
template <typename ForEachName>
std::string UniqueNameOnePass(absl::string_view base, int64_t count,
                              const ForEachName& for_each_name) {
  const absl::string_view stem = StripNumericSuffix(base);
  bool base_taken = false;
  std::vector<bool> suffix_taken(count + 2, false);
  for_each_name([&](absl::string_view name) {
    if (name == base) base_taken = true;
    if (name.size() <= stem.size() + 1 || name[stem.size()] != '.' ||
        name.substr(0, stem.size()) != stem) {
      return;
    }
    // Only canonical numbers: "stem.01" is not a candidate's spelling.
    const absl::string_view digits = name.substr(stem.size() + 1);
    if (digits[0] == '0' || digits.size() > 18) return;
    int64_t n = 0;
    for (char c : digits) {
      if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return;
      n = n * 10 + (c - '0');
    }
    if (n <= count + 1) suffix_taken[n] = true;
  });
  if (!base_taken) return std::string(base);
  int64_t n = 1;
  while (suffix_taken[n]) ++n;
  return absl::StrCat(stem, ".", n);
}

}  // namespace

std::string UniqueInstructionNameOnePass(const Computation& computation, absl::string_view base) {
  return UniqueNameOnePass(base, computation.instruction_count(), [&](const auto& visit) {
    for (const auto& instruction : computation.instructions()) visit(instruction->name());
  });
}


std::string UniqueNameAmong(absl::string_view base, const absl::flat_hash_set<std::string>& taken) {
  return UniqueName(base, [&](const std::string& name) { return taken.contains(name); });
}

NameSet::NameSet(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) taken_.insert(instruction->name());
}

std::string NameSet::Unique(absl::string_view base) {
  std::string name(base);
  if (taken_.insert(name).second) return name;
  const std::string stem(StripNumericSuffix(base));
  auto [next, inserted] = next_.try_emplace(stem, 1);
  // Every stem.N below next->second is taken (names are never given back).
  for (int64_t& n = next->second;; ++n) {
    name = absl::StrCat(stem, ".", n);
    if (taken_.insert(name).second) {
      ++n;
      return name;
    }
  }
}

absl::StatusOr<Instruction*> AddInstruction(Computation* computation, NewInstruction spec) {
  auto owned = std::make_unique<Instruction>(spec.opcode, spec.shape.value_or(Shape()));
  owned->set_attrs(spec.attrs);
  owned->set_called_computations(std::move(spec.called_computations));
  const absl::string_view hint =
      spec.name.empty() ? OpcodeName(spec.opcode) : absl::string_view(spec.name);
  owned->set_name(UniqueInstructionName(*computation, hint));
  Instruction* instruction = computation->AddInstruction(std::move(owned));
  for (Instruction* operand : spec.operands) instruction->AppendOperand(operand);
  absl::StatusOr<Shape> inferred = InferShape(*instruction);
  absl::Status status = inferred.status();
  if (status.ok() && spec.shape.has_value() && !inferred->Compatible(*spec.shape)) {
    status = absl::InternalError(absl::StrCat("new ", OpcodeName(spec.opcode), " has shape ",
                                              spec.shape->ToString(), " but inference gives ",
                                              inferred->ToString()));
  }
  if (!status.ok()) {
    computation->RemoveInstruction(instruction);
    return status;
  }
  if (!spec.shape.has_value()) *instruction->mutable_shape() = WithDefaultLayouts(*inferred);
  return instruction;
}

Instruction* AddConstant(Computation* computation, Literal literal, absl::string_view name) {
  auto owned = std::make_unique<Instruction>(Opcode::kConstant, literal.shape());
  owned->set_literal(std::move(literal));
  owned->set_name(UniqueInstructionName(*computation, name));
  return computation->AddInstruction(std::move(owned));
}

absl::StatusOr<Instruction*> AddBroadcastScalar(Computation* computation, Instruction* scalar,
                                                const Shape& shape) {
  NewInstruction spec;
  spec.opcode = Opcode::kBroadcast;
  spec.operands = {scalar};
  spec.attrs.has_dimensions = true;
  spec.shape = shape;
  return AddInstruction(computation, std::move(spec));
}

namespace {

Instruction* CloneNamed(const Instruction& source, Computation* dest,
                        absl::Span<Instruction* const> operands, std::string name) {
  auto owned = std::make_unique<Instruction>(source.opcode(), source.shape());
  owned->CopyAttributesFrom(source);
  owned->set_called_computations(source.called_computations());
  owned->set_name(std::move(name));
  Instruction* clone = dest->AddInstruction(std::move(owned));
  for (Instruction* operand : operands) clone->AppendOperand(operand);
  return clone;
}

}  // namespace

Instruction* CloneInstruction(const Instruction& source, Computation* dest,
                              absl::Span<Instruction* const> operands) {
  return CloneNamed(source, dest, operands, UniqueInstructionName(*dest, source.name()));
}

Instruction* CloneInstruction(const Instruction& source, Computation* dest,
                              absl::Span<Instruction* const> operands, NameSet* names) {
  return CloneNamed(source, dest, operands, names->Unique(source.name()));
}

Computation* CloneComputation(const Computation& source, Module* module, absl::string_view name) {
  auto owned = std::make_unique<Computation>(UniqueComputationName(*module, name));
  owned->set_execution_thread(source.execution_thread());
  Computation* copy = owned.get();
  NameSet names(*copy);
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (const auto& instruction : source.instructions()) {
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    Instruction* clone = CloneInstruction(*instruction, copy, operands, &names);
    for (Instruction* pred : instruction->control_predecessors()) {
      clone->AddControlPredecessor(map.at(pred));
    }
    map[instruction.get()] = clone;
  }
  if (source.root() != nullptr) copy->set_root(map.at(source.root()));
  return module->AddComputation(std::move(owned));
}

bool IsRemovable(const Instruction& instruction) { return IsRemovable(instruction, nullptr); }

bool IsRemovable(const Instruction& instruction, SideEffectCache* effects) {
  if (instruction.opcode() == Opcode::kParameter) return false;
  const Computation* parent = instruction.parent();
  if (parent != nullptr && parent->root() == &instruction) return false;
  const bool effect = effects != nullptr ? effects->HasSideEffectDeep(instruction)
                                         : HasSideEffectDeep(instruction);
  return !effect && !HasControlEdges(instruction);
}

int64_t RemoveIfDead(Instruction* instruction) {
  return RemoveIfDead(absl::MakeConstSpan(&instruction, 1));
}

int64_t RemoveIfDead(absl::Span<Instruction* const> instructions) {
  return RemoveIfDead(instructions, nullptr);
}

int64_t RemoveIfDead(absl::Span<Instruction* const> instructions, SideEffectCache* effects) {
  int64_t removed = 0;
  // Pointers are compared after deletion but never dereferenced once in
  // `gone`; nothing is allocated meanwhile, so no address is reused.
  absl::flat_hash_set<Instruction*> gone;
  std::vector<Instruction*> work(instructions.rbegin(), instructions.rend());
  while (!work.empty()) {
    Instruction* candidate = work.back();
    work.pop_back();
    if (gone.contains(candidate)) continue;
    if (!candidate->users().empty() || !IsRemovable(*candidate, effects)) continue;
    std::vector<Instruction*> operands = candidate->operands();
    candidate->parent()->RemoveInstruction(candidate);
    gone.insert(candidate);
    ++removed;
    for (Instruction* operand : operands) {
      if (!gone.contains(operand)) work.push_back(operand);
    }
  }
  return removed;
}

bool ReplaceInstruction(Instruction* old, Instruction* replacement) {
  if (!ReplaceAllUses(old, replacement)) return false;
  RemoveIfDead(old);
  return true;
}

bool ReplaceAllUses(Instruction* old, Instruction* replacement) {
  if (old == replacement || old->shape() != replacement->shape()) return false;
  // A replacement may itself use `old` (x -> reshape(x)); its own operand
  // stays.
  std::vector<Instruction*> users = old->users();
  for (Instruction* user : users) {
    if (user == replacement) continue;
    for (int64_t i = 0; i < user->operand_count(); ++i) {
      if (user->operand(i) == old) user->ReplaceOperand(i, replacement);
    }
  }
  Computation* parent = old->parent();
  if (parent != nullptr && parent->root() == old) parent->set_root(replacement);
  return true;
}

int64_t RemoveDeadInstructions(Computation* computation) {
  SideEffectCache effects;
  return RemoveDeadInstructions(computation, &effects);
}

int64_t RemoveDeadInstructions(Computation* computation, SideEffectCache* effects) {
  if (effects == nullptr) return RemoveDeadInstructions(computation);
  absl::flat_hash_set<const Instruction*> live;
  std::vector<const Instruction*> work;
  auto mark = [&](const Instruction* i) {
    if (i != nullptr && live.insert(i).second) work.push_back(i);
  };
  mark(computation->root());
  absl::flat_hash_set<const Instruction*> control_preds;
  for (const auto& i : computation->instructions()) {
    for (const Instruction* p : i->control_predecessors()) control_preds.insert(p);
  }
  for (const auto& i : computation->instructions()) {
    if (i->opcode() == Opcode::kParameter || !i->control_predecessors().empty() ||
        control_preds.contains(i.get()) || effects->HasSideEffectDeep(*i)) {
      mark(i.get());
    }
  }
  while (!work.empty()) {
    const Instruction* i = work.back();
    work.pop_back();
    for (const Instruction* operand : i->operands()) mark(operand);
    for (const Instruction* pred : i->control_predecessors()) mark(pred);
  }
  // Remove users before operands: walk backwards, repeating in case the
  // computation is not in definition order.
  int64_t removed = 0;
  bool progress = true;
  while (progress) {
    progress = false;
    std::vector<Instruction*> all = InstructionsOf(*computation);
    for (auto it = all.rbegin(); it != all.rend(); ++it) {
      Instruction* i = *it;
      if (live.contains(i) || !i->users().empty()) continue;
      computation->RemoveInstruction(i);
      ++removed;
      progress = true;
    }
  }
  return removed;
}

absl::Status InlineCall(Instruction* call, std::vector<Instruction*>* copies, NameSet* names) {
  if (call->opcode() != Opcode::kCall || call->called_computations().size() != 1) {
    return absl::FailedPreconditionError("InlineCall needs a call with one callee");
  }
  if (HasControlEdges(*call)) {
    return absl::FailedPreconditionError("call has control edges");
  }
  const Computation* callee = call->to_apply();
  // An array whose layout alone differs (JAX's modules before layout
  // assignment: a custom call's column-major result passed to a callee whose
  // parameter is row-major) goes through a copy into the other layout.
  auto relayout_only = [](const Shape& a, const Shape& b) {
    return a.IsArray() && b.IsArray() && a.Compatible(b);
  };
  if (callee->root() == nullptr ||
      (callee->root()->shape() != call->shape() &&
       !relayout_only(callee->root()->shape(), call->shape())) ||
      callee->parameter_count() != call->operand_count()) {
    return absl::FailedPreconditionError("callee signature differs from the call");
  }
  for (int64_t i = 0; i < callee->parameter_count(); ++i) {
    const Instruction* p = callee->parameter(i);
    if (p == nullptr || (p->shape() != call->operand(i)->shape() &&
                         !relayout_only(p->shape(), call->operand(i)->shape()))) {
      return absl::FailedPreconditionError("callee parameter layout differs from the operand");
    }
  }
  Computation* caller = call->parent();
  auto copy_to = [&](Instruction* value, const Shape& shape) -> absl::StatusOr<Instruction*> {
    if (value->shape() == shape) return value;
    NewInstruction copy;
    copy.opcode = Opcode::kCopy;
    copy.operands = {value};
    copy.shape = shape;
    copy.name = "relayout";
    XJIT_ASSIGN_OR_RETURN(Instruction * added, AddInstruction(caller, std::move(copy)));
    if (copies != nullptr) copies->push_back(added);
    return added;
  };
  absl::flat_hash_map<const Instruction*, Instruction*> map;
  for (int64_t i = 0; i < callee->parameter_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(Instruction * operand,
                          copy_to(call->operand(i), callee->parameter(i)->shape()));
    map[callee->parameter(i)] = operand;
  }
  for (const auto& instruction : callee->instructions()) {
    if (instruction->opcode() == Opcode::kParameter) continue;
    std::vector<Instruction*> operands;
    for (Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
    Instruction* clone = names != nullptr
                             ? CloneInstruction(*instruction, caller, operands, names)
                             : CloneInstruction(*instruction, caller, operands);
    for (Instruction* pred : instruction->control_predecessors()) {
      clone->AddControlPredecessor(map.at(pred));
    }
    map[instruction.get()] = clone;
    if (copies != nullptr) copies->push_back(clone);
  }
  XJIT_ASSIGN_OR_RETURN(Instruction * result, copy_to(map.at(callee->root()), call->shape()));
  XJIT_CHECK(ReplaceAllUses(call, result));
  // The call goes even when its callee has side effects (RemoveIfDead would
  // keep it): they now happen in the inlined copy, and a call left behind
  // would be inlined again, forever.
  std::vector<Instruction*> operands = call->operands();
  caller->RemoveInstruction(call);
  RemoveIfDead(operands);
  return absl::OkStatus();
}

std::optional<uint64_t> SplatBits(const Instruction& instruction) {
  if (instruction.opcode() == Opcode::kBroadcast) return SplatBits(*instruction.operand(0));
  if (instruction.opcode() != Opcode::kConstant) return std::nullopt;
  const Literal& literal = instruction.literal();
  // Complex elements are wider than the 64 bits GetBits returns.
  if (!literal.shape().IsArray() || IsComplex(literal.shape().element_type())) return std::nullopt;
  const int64_t n = literal.element_count();
  if (n == 0) return std::nullopt;
  const uint64_t first = literal.GetBitsLinear(0);
  // A dense array of whole-byte elements (no padding, tiles or packing) is
  // a splat exactly when its bytes equal themselves shifted by one element:
  // one memcmp, where reading element by element took seconds for a
  // constant of 256 MiB.
  const int64_t width = ByteWidth(literal.shape().element_type());
  const absl::Span<const uint8_t> bytes = literal.data();
  if ((width == 1 || width == 2 || width == 4 || width == 8) &&
      static_cast<int64_t>(bytes.size()) == n * width) {
    return std::memcmp(bytes.data(), bytes.data() + width, bytes.size() - width) == 0
               ? std::optional<uint64_t>(first)
               : std::nullopt;
  }
  for (int64_t i = 1; i < n; ++i) {
    if (literal.GetBitsLinear(i) != first) return std::nullopt;
  }
  return first;
}

bool IsSplatBits(const Instruction& instruction, uint64_t bits) {
  std::optional<uint64_t> splat = SplatBits(instruction);
  return splat.has_value() && *splat == bits;
}

uint64_t BitsOf(ElementType type, double value) {
  Literal literal = IsFloat(type) ? Literal::Scalar(type, value)
                                  : Literal::ScalarInt(type, static_cast<int64_t>(value));
  return literal.GetBits({});
}

}  // namespace xjit
