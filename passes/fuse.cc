// Fusion: the design note.
//
// A fusion is legal when the fused instructions can run as one loop nest that
// reads the fusion's operands and writes its result once: every fused
// instruction is pure (no side effect, no control edge, static shape) and the
// fused computation is a DAG hanging off one root (or a tuple of roots).
// Whether a legal fusion pays is a question of memory traffic against
// recomputation, which the rules below answer.
//
// 1. Output (epilogue) fusion, first: a dot or convolution whose only user is
//    an epilogue op of the same dimensions (add, subtract, multiply, divide,
//    maximum, minimum, clamp, tanh, logistic, convert, negate, select) is
//    fused with it into kind=kOutput, and the fusion keeps growing down
//    single-user chains of such ops. The GEMM writes its result once and the
//    epilogue runs on it in cache. Later producers may join a kOutput fusion
//    only through parameters that feed the epilogue (a bias broadcast), never
//    the contraction's own operands, which BLAS must read from memory.
// 2. Producer-into-consumer fusion, one sweep over each computation from the
//    root backwards. A consumer is an elementwise or data-movement op, a
//    reduce (the fusion becomes kind=kInput: sum of squares is one pass), or a
//    fusion. A producer is an elementwise or data-movement op, a constant, or
//    a kLoop fusion. Fusing a producer with one user moves it (always pays).
//    A producer with several users is duplicated into this consumer when
//      - it is cheap (data movement, simple arithmetic, a small constant) and
//        has at most max_cheap_fanout users, even if some user must still
//        materialise it: re-reading its operands costs about what reading its
//        result would;
//      - it is expensive (exp, log, tanh, divide, power, ...) only if every
//        user can fuse it, so that it is never materialised, and it has at
//        most max_expensive_fanout users.
//    An expensive producer is never fused into a consumer that iterates over
//    more elements than the producer has (a broadcast would recompute it per
//    copy).
// 3. Elementwise, data-movement and reduce instructions still alone become
//    single-instruction fusions (option), so the JIT sees only fusions.
// 4. Multi-output (sibling) fusion: two kLoop/kInput fusions that read the
//    same operand of at least multi_output_min_bytes, iterate over the same
//    index space (a kLoop's result dimensions, a kInput's reduce input
//    dimensions) and do not depend on each other are merged; the root becomes
//    a tuple of their results and their users read it through
//    get-tuple-element. The shared input is then read once.
// Fusions never cross computations: the entry and every while / conditional
// / call body are fused separately; reducers and comparators are untouched.
#include "passes/fuse.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/hlo_printer.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {

bool IsExpensiveElementwise(Opcode opcode) {
  switch (opcode) {
    case Opcode::kExp: case Opcode::kExpm1: case Opcode::kLog: case Opcode::kLog1p:
    case Opcode::kLogistic: case Opcode::kTanh: case Opcode::kSin: case Opcode::kCos:
    case Opcode::kTan: case Opcode::kAtan2: case Opcode::kPower: case Opcode::kDivide:
    case Opcode::kRemainder: case Opcode::kSqrt: case Opcode::kRsqrt: case Opcode::kCbrt:
    case Opcode::kErf: case Opcode::kAcos: case Opcode::kAcosh: case Opcode::kAsin:
    case Opcode::kAsinh: case Opcode::kAtan: case Opcode::kAtanh: case Opcode::kCosh:
    case Opcode::kSinh:
      return true;
    default:
      return false;
  }
}

namespace {

bool IsDataMovement(Opcode opcode) {
  switch (opcode) {
    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kTranspose: case Opcode::kSlice:
    case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kIota: case Opcode::kBitcast:
    case Opcode::kReverse: case Opcode::kDynamicSlice: case Opcode::kCopy:
      return true;
    default:
      return false;
  }
}

bool IsEpilogueOp(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kClamp: case Opcode::kTanh:
    case Opcode::kLogistic: case Opcode::kConvert: case Opcode::kNegate: case Opcode::kSelect:
      return true;
    default:
      return false;
  }
}

bool IsContraction(Opcode opcode) {
  return opcode == Opcode::kDot || opcode == Opcode::kConvolution;
}

// Pure, static, array-shaped, free of control edges: the precondition of
// every fusion decision.
bool IsPlainPure(const Instruction& instruction) {
  if (!instruction.shape().IsArray() || instruction.shape().is_dynamic()) return false;
  for (const Instruction* operand : instruction.operands()) {
    if (operand->shape().is_dynamic()) return false;
  }
  return !HasSideEffectDeep(instruction) && !HasControlEdges(instruction);
}

Computation* FusedComputation(const Instruction& fusion) {
  return fusion.called_computations().empty() ? nullptr : fusion.called_computations()[0];
}

bool HasTupleRoot(const Instruction& fusion) { return fusion.shape().IsTuple(); }

int64_t FusedSize(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion) return 1;
  const Computation* body = FusedComputation(instruction);
  return body == nullptr ? 1 : body->instruction_count() - body->parameter_count();
}

bool ContainsExpensive(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kFusion) return IsExpensiveElementwise(instruction.opcode());
  for (const auto& inner : FusedComputation(instruction)->instructions()) {
    if (IsExpensiveElementwise(inner->opcode())) return true;
  }
  return false;
}

// The reduce of a kInput fusion (the first one among the roots).
const Instruction* FusedReduce(const Computation& body) {
  const Instruction* root = body.root();
  if (root->opcode() == Opcode::kReduce) return root;
  if (root->opcode() == Opcode::kTuple) {
    for (const Instruction* element : root->operands()) {
      if (element->opcode() == Opcode::kReduce) return element;
    }
  }
  return nullptr;
}

// Dimensions of the loop an instruction or fusion runs: a reduce's input,
// otherwise the (first) result.
std::vector<int64_t> IterationDimensions(const Instruction& instruction) {
  const Instruction* reduce = nullptr;
  const Instruction* first = &instruction;
  if (instruction.opcode() == Opcode::kFusion) {
    const Computation& body = *FusedComputation(instruction);
    reduce = FusedReduce(body);
    first = body.root()->opcode() == Opcode::kTuple ? body.root()->operand(0) : body.root();
  } else if (instruction.opcode() == Opcode::kReduce) {
    reduce = &instruction;
  }
  const Shape& shape = reduce != nullptr ? reduce->operand(0)->shape() : first->shape();
  if (!shape.IsArray()) return {};
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

int64_t IterationElements(const Instruction& instruction) {
  int64_t n = 1;
  for (int64_t d : IterationDimensions(instruction)) n *= d;
  return n;
}

FusionKind KindOf(const Computation& body) {
  for (const auto& instruction : body.instructions()) {
    if (IsContraction(instruction->opcode())) return FusionKind::kOutput;
  }
  return FusedReduce(body) != nullptr ? FusionKind::kInput : FusionKind::kLoop;
}

}  // namespace

bool IsLoopFusible(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  return IsElementwise(opcode) || IsDataMovement(opcode) || opcode == Opcode::kConstant;
}

const Instruction* FusedContraction(const Computation& fused) {
  for (const auto& instruction : fused.instructions()) {
    if (IsContraction(instruction->opcode())) return instruction.get();
  }
  return nullptr;
}

namespace {

class Fuser {
 public:
  Fuser(Module* module, const FuseOptions& options) : module_(module), options_(options) {}

  absl::Status Run() {
    for (Computation* computation : SequentialComputations()) {
      if (options_.output_fusion) XJIT_RETURN_IF_ERROR(FuseEpilogues(computation));
      XJIT_RETURN_IF_ERROR(FuseProducers(computation));
      if (options_.wrap_single_instructions) XJIT_RETURN_IF_ERROR(WrapSingles(computation));
      if (options_.multi_output_min_bytes >= 0) XJIT_RETURN_IF_ERROR(FuseSiblings(computation));
      computation->SortTopologically();
    }
    return absl::OkStatus();
  }

 private:
  // The entry and, transitively, the computations control flow runs as
  // sequences of steps.
  std::vector<Computation*> SequentialComputations() {
    std::vector<Computation*> out;
    absl::flat_hash_set<Computation*> seen;
    std::vector<Computation*> work = {module_->entry()};
    seen.insert(module_->entry());
    while (!work.empty()) {
      Computation* computation = work.back();
      work.pop_back();
      out.push_back(computation);
      for (const auto& instruction : computation->instructions()) {
        const Opcode opcode = instruction->opcode();
        if (opcode != Opcode::kWhile && opcode != Opcode::kConditional && opcode != Opcode::kCall) {
          continue;
        }
        for (Computation* callee : instruction->called_computations()) {
          if (seen.insert(callee).second) work.push_back(callee);
        }
      }
    }
    return out;
  }

  bool IsRoot(const Instruction* instruction) const {
    return instruction->parent()->root() == instruction;
  }

  bool CanBeProducer(const Instruction& producer) const {
    if (!IsPlainPure(producer)) return false;
    if (producer.opcode() == Opcode::kFusion) {
      return producer.attrs().fusion_kind == FusionKind::kLoop && !HasTupleRoot(producer) &&
             FusedComputation(producer) != nullptr;
    }
    return IsLoopFusible(producer);
  }

  bool CanBeConsumer(const Instruction& consumer) const {
    if (!IsPlainPure(consumer)) return false;
    const Opcode opcode = consumer.opcode();
    if (opcode == Opcode::kFusion) {
      return !HasTupleRoot(consumer) && FusedComputation(consumer) != nullptr &&
             consumer.attrs().fusion_kind != FusionKind::kCustom;
    }
    if (opcode == Opcode::kReduce) return consumer.operand_count() == 2;
    return IsLoopFusible(consumer) && opcode != Opcode::kConstant && opcode != Opcode::kIota;
  }

  bool IsCheap(const Instruction& producer) const {
    if (ContainsExpensive(producer)) return false;
    if (producer.opcode() == Opcode::kConstant) return ByteSize(producer.shape()) <= 1024;
    if (producer.opcode() == Opcode::kFusion) {
      for (const auto& inner : FusedComputation(producer)->instructions()) {
        if (inner->opcode() == Opcode::kConstant && ByteSize(inner->shape()) > 1024) return false;
      }
      return FusedSize(producer) <= 8;
    }
    return true;
  }

  // In a kOutput fusion, whether operand `i` feeds the contraction directly.
  static bool FeedsContraction(const Instruction& fusion, int64_t i) {
    if (fusion.opcode() != Opcode::kFusion || fusion.attrs().fusion_kind != FusionKind::kOutput) {
      return false;
    }
    const Instruction* parameter = FusedComputation(fusion)->parameter(i);
    for (const Instruction* user : parameter->users()) {
      if (IsContraction(user->opcode())) return true;
    }
    return false;
  }

  bool ShouldFuse(const Instruction& producer, const Instruction& consumer) const {
    if (!CanBeProducer(producer) || !CanBeConsumer(consumer)) return false;
    for (int64_t i = 0; i < consumer.operand_count(); ++i) {
      if (consumer.operand(i) == &producer && FeedsContraction(consumer, i)) return false;
    }
    if (FusedSize(producer) + FusedSize(consumer) > options_.max_fusion_size) return false;
    const bool expensive = ContainsExpensive(producer);
    if (expensive && IterationElements(consumer) > producer.shape().element_count()) return false;
    const int64_t uses = static_cast<int64_t>(producer.users().size()) + (IsRoot(&producer) ? 1 : 0);
    if (uses == 1) return true;
    if (!expensive) return IsCheap(producer) && uses <= options_.max_cheap_fanout;
    if (IsRoot(&producer) || uses > options_.max_expensive_fanout) return false;
    for (const Instruction* user : producer.users()) {
      if (!CanBeConsumer(*user)) return false;
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == &producer && FeedsContraction(*user, i)) return false;
      }
      if (IterationElements(*user) > producer.shape().element_count()) return false;
    }
    return true;
  }

  // A new parameter-to-operand mapping for a fused computation under
  // construction.
  class BodyBuilder {
   public:
    explicit BodyBuilder(std::unique_ptr<Computation> body) : body_(std::move(body)) {}

    Computation* body() { return body_.get(); }
    std::unique_ptr<Computation> Release() { return std::move(body_); }
    const std::vector<Instruction*>& operands() const { return operands_; }

    Instruction* ParameterFor(Instruction* outer) {
      auto it = parameter_of_.find(outer);
      if (it != parameter_of_.end()) return it->second;
      const int64_t number = static_cast<int64_t>(operands_.size());
      auto owned = std::make_unique<Instruction>(Opcode::kParameter, outer->shape());
      owned->mutable_attrs()->parameter_number = number;
      owned->set_name(UniqueInstructionName(*body_, absl::StrCat("param_", number)));
      Instruction* parameter = body_->AddInstruction(std::move(owned));
      operands_.push_back(outer);
      parameter_of_[outer] = parameter;
      return parameter;
    }

    // Copies `source` (a fused computation called with `outer_operands`)
    // into the body; returns the copy of its root.
    Instruction* Inline(const Computation& source, absl::Span<Instruction* const> outer_operands) {
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const auto& instruction : source.instructions()) {
        if (instruction->opcode() == Opcode::kParameter) {
          map[instruction.get()] = ParameterFor(outer_operands[instruction->attrs().parameter_number]);
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
        map[instruction.get()] = CloneInstruction(*instruction, body_.get(), operands);
      }
      return map.at(source.root());
    }

    // Copies `instruction` (an outer instruction, or a fusion, inlined) with
    // its operands mapped by `operand_for`.
    template <typename OperandFor>
    Instruction* Clone(Instruction* instruction, OperandFor operand_for) {
      if (instruction->opcode() == Opcode::kFusion) {
        return Inline(*FusedComputation(*instruction), instruction->operands());
      }
      std::vector<Instruction*> operands;
      for (Instruction* operand : instruction->operands()) operands.push_back(operand_for(operand));
      return CloneInstruction(*instruction, body_.get(), operands);
    }

   private:
    std::unique_ptr<Computation> body_;
    std::vector<Instruction*> operands_;
    absl::flat_hash_map<Instruction*, Instruction*> parameter_of_;
  };

  // Removes a fused computation that no instruction of `caller` calls any
  // more, if this pass made it (input modules may share theirs).
  void DropComputation(Computation* body) {
    if (body == nullptr || !created_.contains(body)) return;
    created_.erase(body);
    module_->RemoveComputation(body);
  }

  void Remove(Instruction* instruction) {
    Computation* body =
        instruction->opcode() == Opcode::kFusion ? FusedComputation(*instruction) : nullptr;
    instruction->parent()->RemoveInstruction(instruction);
    removed_.insert(instruction);
    DropComputation(body);
  }

  // Adds the fusion instruction for a finished body to `parent` and points
  // `replaced`'s users at it. `name` and `body_name` are reused names (empty:
  // fresh ones).
  Instruction* Install(Computation* parent, BodyBuilder builder, Instruction* body_root,
                       const Shape& shape, std::string name, std::string body_name) {
    std::unique_ptr<Computation> body = builder.Release();
    body->set_root(body_root);
    body->SortTopologically();
    const FusionKind kind = KindOf(*body);
    body->set_name(body_name.empty() ? UniqueComputationName(*module_, "fused_computation")
                                     : std::move(body_name));
    Computation* installed = module_->AddComputation(std::move(body));
    created_.insert(installed);
    auto owned = std::make_unique<Instruction>(Opcode::kFusion, shape);
    owned->mutable_attrs()->fusion_kind = kind;
    owned->set_called_computations({installed});
    owned->set_name(name.empty() ? UniqueInstructionName(*parent, "fusion") : std::move(name));
    Instruction* fusion = parent->AddInstruction(std::move(owned));
    for (Instruction* operand : builder.operands()) fusion->AppendOperand(operand);
    return fusion;
  }

  // Makes `consumer` (a fusion or a plain instruction) into a fusion that
  // also computes `producer` (one of its operands; null: just wrap).
  Instruction* FuseInto(Instruction* consumer, Instruction* producer) {
    Computation* parent = consumer->parent();
    BodyBuilder builder(std::make_unique<Computation>("fused_computation.tmp"));
    Instruction* producer_copy = nullptr;
    auto operand_for = [&](Instruction* outer) -> Instruction* {
      if (outer != producer) return builder.ParameterFor(outer);
      if (producer_copy == nullptr) {
        producer_copy = builder.Clone(producer, [&](Instruction* o) { return builder.ParameterFor(o); });
      }
      return producer_copy;
    };
    Instruction* root;
    std::string name, body_name;
    if (consumer->opcode() == Opcode::kFusion) {
      const Computation& old_body = *FusedComputation(*consumer);
      absl::flat_hash_map<const Instruction*, Instruction*> map;
      for (const auto& instruction : old_body.instructions()) {
        if (instruction->opcode() == Opcode::kParameter) {
          map[instruction.get()] = operand_for(consumer->operand(instruction->attrs().parameter_number));
          continue;
        }
        std::vector<Instruction*> operands;
        for (const Instruction* operand : instruction->operands()) operands.push_back(map.at(operand));
        map[instruction.get()] = CloneInstruction(*instruction, builder.body(), operands);
      }
      root = map.at(old_body.root());
    } else {
      root = builder.Clone(consumer, operand_for);
    }
    // The fusion that disappears into this one lends it its names (they are
    // freed before the new fusion takes them).
    Instruction* named = consumer;
    if (consumer->opcode() != Opcode::kFusion && producer != nullptr &&
        producer->opcode() == Opcode::kFusion && producer->users().size() == 1 && !IsRoot(producer)) {
      named = producer;
    }
    if (named->opcode() == Opcode::kFusion) {
      name = named->name();
      Computation* old_body = FusedComputation(*named);
      body_name = created_.contains(old_body) ? old_body->name() : "";
      old_body->set_name(absl::StrCat(old_body->name(), ".old"));
    }
    const Shape shape = consumer->shape();
    named->set_name(absl::StrCat(named->name(), ".replaced"));
    Instruction* fusion = Install(parent, std::move(builder), root, shape, name, body_name);
    consumer->ReplaceAllUsesWith(fusion);
    Remove(consumer);
    if (producer != nullptr && producer->users().empty() && IsRemovable(*producer)) Remove(producer);
    return fusion;
  }

  absl::Status FuseEpilogues(Computation* computation) {
    removed_.clear();
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (removed_.contains(instruction)) continue;
      if (!IsContraction(instruction->opcode()) || !IsPlainPure(*instruction)) continue;
      // `instruction` is gone once fused; keep what the loop compares.
      const Shape contraction_shape = instruction->shape();
      Instruction* current = instruction;
      while (current->users().size() == 1 && !IsRoot(current)) {
        Instruction* user = current->users()[0];
        if (!IsEpilogueOp(user->opcode()) || !IsPlainPure(*user) ||
            !user->shape().SameDimensions(contraction_shape)) {
          break;
        }
        current = FuseInto(user, current);
      }
    }
    return absl::OkStatus();
  }

  absl::Status FuseProducers(Computation* computation) {
    removed_.clear();
    std::vector<Instruction*> order = InstructionsOf(*computation);
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      if (removed_.contains(*it)) continue;
      Instruction* consumer = *it;
      if (consumer->users().empty() && !IsRoot(consumer)) continue;
      bool progress = true;
      while (progress && CanBeConsumer(*consumer)) {
        progress = false;
        for (Instruction* producer : consumer->operands()) {
          if (ShouldFuse(*producer, *consumer)) {
            consumer = FuseInto(consumer, producer);
            progress = true;
            break;
          }
        }
      }
    }
    return absl::OkStatus();
  }

  absl::Status WrapSingles(Computation* computation) {
    removed_.clear();
    for (Instruction* instruction : InstructionsOf(*computation)) {
      const Opcode opcode = instruction->opcode();
      if (opcode == Opcode::kFusion || opcode == Opcode::kConstant || opcode == Opcode::kBitcast ||
          opcode == Opcode::kParameter) {
        continue;
      }
      if (!CanBeConsumer(*instruction) && opcode != Opcode::kIota) continue;
      if (!IsPlainPure(*instruction)) continue;
      if (instruction->users().empty() && !IsRoot(instruction)) continue;
      FuseInto(instruction, nullptr);
    }
    return absl::OkStatus();
  }

  // Whether `to` is among the transitive operands of `from`.
  static bool Reaches(const Instruction* from, const Instruction* to) {
    absl::flat_hash_set<const Instruction*> seen;
    std::vector<const Instruction*> work = {from};
    while (!work.empty()) {
      const Instruction* current = work.back();
      work.pop_back();
      for (const Instruction* operand : current->operands()) {
        if (operand == to) return true;
        if (seen.insert(operand).second) work.push_back(operand);
      }
      for (const Instruction* predecessor : current->control_predecessors()) {
        if (predecessor == to) return true;
        if (seen.insert(predecessor).second) work.push_back(predecessor);
      }
    }
    return false;
  }

  bool CanBeSibling(const Instruction& instruction) const {
    if (instruction.opcode() != Opcode::kFusion || FusedComputation(instruction) == nullptr) {
      return false;
    }
    const FusionKind kind = instruction.attrs().fusion_kind;
    if (kind != FusionKind::kLoop && kind != FusionKind::kInput) return false;
    if (HasSideEffectDeep(instruction) || HasControlEdges(instruction)) return false;
    if (instruction.shape().IsTuple()) {
      for (const Instruction* user : instruction.users()) {
        if (user->opcode() != Opcode::kGetTupleElement) return false;
      }
      if (IsRoot(&instruction)) return false;
    }
    return true;
  }

  bool CanMergeSiblings(const Instruction& a, const Instruction& b) const {
    if (&a == &b || !CanBeSibling(a) || !CanBeSibling(b)) return false;
    if (IterationDimensions(a) != IterationDimensions(b)) return false;
    if (FusedSize(a) + FusedSize(b) > options_.max_fusion_size) return false;
    return !Reaches(&a, &b) && !Reaches(&b, &a);
  }

  // The root values of a fusion's body: the tuple's elements or the root.
  static std::vector<Instruction*> RootValues(Instruction* root) {
    if (root->opcode() == Opcode::kTuple) return root->operands();
    return {root};
  }

  Instruction* MergeSiblings(Instruction* a, Instruction* b) {
    Computation* parent = a->parent();
    BodyBuilder builder(std::make_unique<Computation>("fused_computation.tmp"));
    std::vector<Instruction*> values;
    std::vector<int64_t> offsets;
    for (Instruction* sibling : {a, b}) {
      offsets.push_back(static_cast<int64_t>(values.size()));
      Instruction* root = builder.Inline(*FusedComputation(*sibling), sibling->operands());
      for (Instruction* value : RootValues(root)) values.push_back(value);
    }
    std::vector<Shape> shapes;
    for (Instruction* value : values) shapes.push_back(value->shape());
    Shape shape = Shape::Tuple(shapes);
    auto tuple = std::make_unique<Instruction>(Opcode::kTuple, shape);
    tuple->set_name(UniqueInstructionName(*builder.body(), "tuple"));
    Instruction* root = builder.body()->AddInstruction(std::move(tuple));
    for (Instruction* value : values) root->AppendOperand(value);
    Instruction* fusion = Install(parent, std::move(builder), root, shape, "", "");
    const Instruction* siblings[2] = {a, b};
    for (int s = 0; s < 2; ++s) {
      Instruction* sibling = const_cast<Instruction*>(siblings[s]);
      if (sibling->shape().IsTuple()) {
        for (Instruction* user : std::vector<Instruction*>(sibling->users())) {
          user->mutable_attrs()->tuple_index += offsets[s];
          for (int64_t i = 0; i < user->operand_count(); ++i) {
            if (user->operand(i) == sibling) user->ReplaceOperand(i, fusion);
          }
        }
      } else {
        auto gte = std::make_unique<Instruction>(Opcode::kGetTupleElement, sibling->shape());
        gte->mutable_attrs()->tuple_index = offsets[s];
        gte->set_name(UniqueInstructionName(*parent, "get-tuple-element"));
        Instruction* element = parent->AddInstruction(std::move(gte));
        element->AppendOperand(fusion);
        sibling->ReplaceAllUsesWith(element);
      }
      Remove(sibling);
    }
    return fusion;
  }

  absl::Status FuseSiblings(Computation* computation) {
    removed_.clear();
    for (Instruction* shared : InstructionsOf(*computation)) {
      if (removed_.contains(shared)) continue;
      if (!shared->shape().IsArray() || ByteSize(shared->shape()) < options_.multi_output_min_bytes) {
        continue;
      }
      bool merged = true;
      while (merged) {
        merged = false;
        std::vector<Instruction*> users = shared->users();
        for (size_t i = 0; i < users.size() && !merged; ++i) {
          for (size_t j = i + 1; j < users.size() && !merged; ++j) {
            if (CanMergeSiblings(*users[i], *users[j])) {
              MergeSiblings(users[i], users[j]);
              merged = true;
            }
          }
        }
      }
    }
    return absl::OkStatus();
  }

  Module* module_;
  FuseOptions options_;
  // Instructions deleted during the current sweep (compared, never read).
  absl::flat_hash_set<const Instruction*> removed_;
  absl::flat_hash_set<const Computation*> created_;
};

}  // namespace

absl::StatusOr<bool> Fuse::Run(Module* module) {
  if (module->entry() == nullptr || module->entry()->root() == nullptr) {
    return absl::InvalidArgumentError("fuse: the module has no entry computation");
  }
  const std::string before = PrintModule(*module);
  Fuser fuser(module, options_);
  XJIT_RETURN_IF_ERROR(fuser.Run());
  return PrintModule(*module) != before;
}

}  // namespace xjit
