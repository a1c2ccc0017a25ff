#include "passes/simplify_algebra.h"

#include <cmath>
#include <deque>
#include <numeric>
#include <vector>

#include "ir/literal.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// The bit pattern of `value` in `type` when `type` represents it exactly with
// the same sign (so -0.0 exists only where the type has a negative zero).
std::optional<uint64_t> ExactBits(ElementType type, double value) {
  if (!IsFloat(type) && !IsInteger(type) && !IsPred(type)) return std::nullopt;
  const uint64_t bits = BitsOf(type, value);
  Literal check(Shape::Scalar(type));
  check.SetBits({}, bits);
  if (IsFloat(type)) {
    const double back = check.GetDouble({});
    if (back != value || std::signbit(back) != std::signbit(value)) return std::nullopt;
  } else if (check.GetInt({}) != static_cast<int64_t>(value) && !IsUnsignedInteger(type)) {
    return std::nullopt;
  }
  return bits;
}

bool IsSplatOf(const Instruction* instruction, double value) {
  // The splat first: most operands are not constants, and ExactBits builds
  // literals (a few percent of compiling an elementwise chain).
  const std::optional<uint64_t> splat = SplatBits(*instruction);
  if (!splat.has_value()) return false;
  const ElementType type = instruction->shape().element_type();
  std::optional<uint64_t> bits = ExactBits(type, value);
  return bits.has_value() && *splat == *bits;
}

// The additive identity of a float type: -0.0 where the type has it (x + -0
// = x for every x, while +0 turns -0 into +0), +0.0 for types without a
// negative zero.
std::optional<uint64_t> FloatAdditiveIdentity(ElementType type) {
  std::optional<uint64_t> negative_zero = ExactBits(type, -0.0);
  if (negative_zero.has_value()) return negative_zero;
  return ExactBits(type, 0.0);
}

class Simplifier {
 public:
  Simplifier(Computation* computation, SideEffectCache* effects)
      : computation_(computation), effects_(effects) {}

  // Rewrites the computation; returns whether anything changed.
  absl::StatusOr<bool> Run() {
    std::deque<Instruction*> work;
    for (Instruction* i : InstructionsOf(*computation_)) work.push_back(i);
    bool changed = false;
    while (!work.empty()) {
      Instruction* instruction = work.front();
      work.pop_front();
      // Unused instructions are left for the final cleanup.
      if (instruction->users().empty() && computation_->root() != instruction) continue;
      if (effects_->HasSideEffectDeep(*instruction) ||
          !instruction->control_predecessors().empty()) {
        continue;
      }
      const int64_t before = computation_->instruction_count();
      XJIT_ASSIGN_OR_RETURN(Instruction * replacement, Rewrite(instruction));
      if (replacement == nullptr) continue;
      // The users that will read the replacement: only they (and new
      // instructions) may simplify further. Its other users are unchanged;
      // revisiting them all made a chain of negates quadratic (each
      // neg(neg(x)) -> x gave x one more user to revisit).
      const std::vector<Instruction*> moved_users = instruction->users();
      if (!ReplaceAllUses(instruction, replacement)) {
        // Only a rule's own new instructions can be dropped here.
        if (computation_->instruction_count() > before) {
          RemoveIfDead(absl::MakeConstSpan(&replacement, 1), effects_);
        }
        continue;
      }
      changed = true;
      // New instructions may simplify further (a composed transpose may be
      // the identity); so may the users of the replacement.
      const auto& all = computation_->instructions();
      for (int64_t k = before; k < static_cast<int64_t>(all.size()); ++k) {
        work.push_back(all[k].get());
      }
      for (Instruction* user : moved_users) work.push_back(user);
    }
    if (changed) {
      RemoveDeadInstructions(computation_, effects_);
      computation_->SortTopologically();
    }
    return changed;
  }

 private:
  // `candidate` if it may replace `instruction` (equal shapes), else null.
  static Instruction* IfSameShape(const Instruction* instruction, Instruction* candidate) {
    return candidate->shape() == instruction->shape() ? candidate : nullptr;
  }

  absl::StatusOr<Instruction*> Add(NewInstruction spec) {
    return AddInstruction(computation_, std::move(spec));
  }

  // A splat of the scalar `bits` in `shape`: a constant for a scalar, else a
  // broadcast of one.
  absl::StatusOr<Instruction*> Splat(const Shape& shape, uint64_t bits) {
    Literal scalar(Shape::Scalar(shape.element_type()));
    scalar.SetBits({}, bits);
    Instruction* constant = AddConstant(computation_, std::move(scalar));
    if (shape.IsScalar()) return constant;
    return AddBroadcastScalar(computation_, constant, shape);
  }

  absl::StatusOr<Instruction*> Rewrite(Instruction* i) {
    switch (i->opcode()) {
      case Opcode::kAdd: return RewriteAdd(i);
      case Opcode::kSubtract: return RewriteSubtract(i);
      case Opcode::kMultiply: return RewriteMultiply(i);
      case Opcode::kDivide: return RewriteDivide(i);
      case Opcode::kNegate:
      case Opcode::kNot:
        // An involution applied twice.
        if (i->operand(0)->opcode() == i->opcode()) {
          return IfSameShape(i, i->operand(0)->operand(0));
        }
        return nullptr;
      case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      case Opcode::kMaximum: case Opcode::kMinimum:
        return RewriteBitwiseOrMinMax(i);
      case Opcode::kCompare: return RewriteCompare(i);
      case Opcode::kReshape: return RewriteReshape(i);
      case Opcode::kTranspose: return RewriteTranspose(i);
      case Opcode::kBroadcast: return RewriteBroadcast(i);
      case Opcode::kSlice: return RewriteSlice(i);
      case Opcode::kConcatenate: return RewriteConcatenate(i);
      case Opcode::kPad: {
        for (const PaddingDimension& p : i->attrs().padding) {
          if (p.low != 0 || p.high != 0 || p.interior != 0) return nullptr;
        }
        return IfSameShape(i, i->operand(0));
      }
      case Opcode::kSelect: return RewriteSelect(i);
      case Opcode::kConvert:
      case Opcode::kCopy:
        // Same type and layout: nothing to convert or copy.
        return IfSameShape(i, i->operand(0));
      case Opcode::kReverse: {
        const Shape& shape = i->operand(0)->shape();
        for (int64_t d : i->attrs().dimensions) {
          if (d < 0 || d >= shape.rank() || shape.dimensions(d) > 1) return nullptr;
        }
        return IfSameShape(i, i->operand(0));
      }
      case Opcode::kGetTupleElement: {
        Instruction* tuple = i->operand(0);
        const int64_t index = i->attrs().tuple_index;
        if (tuple->opcode() != Opcode::kTuple || index < 0 || index >= tuple->operand_count()) {
          return nullptr;
        }
        return IfSameShape(i, tuple->operand(index));
      }
      default:
        return nullptr;
    }
  }

  absl::StatusOr<Instruction*> RewriteAdd(Instruction* i) {
    const ElementType type = i->shape().element_type();
    // Most adds read no constant: skip building the identity's literals.
    if (!SplatBits(*i->operand(0)).has_value() && !SplatBits(*i->operand(1)).has_value()) {
      return nullptr;
    }
    std::optional<uint64_t> identity;
    if (IsInteger(type)) identity = 0;
    if (IsFloat(type)) identity = FloatAdditiveIdentity(type);
    if (!identity.has_value()) return nullptr;
    for (int k = 0; k < 2; ++k) {
      if (IsSplatBits(*i->operand(1 - k), *identity)) {
        if (Instruction* r = IfSameShape(i, i->operand(k))) return r;
      }
    }
    return nullptr;
  }

  absl::StatusOr<Instruction*> RewriteSubtract(Instruction* i) {
    const ElementType type = i->shape().element_type();
    // x - (+0) = x + (-0) = x, also for floats.
    if ((IsInteger(type) || IsFloat(type)) && IsSplatOf(i->operand(1), 0.0)) {
      return IfSameShape(i, i->operand(0));
    }
    if (IsInteger(type) && i->operand(0) == i->operand(1)) return Splat(i->shape(), 0);
    return nullptr;
  }

  absl::StatusOr<Instruction*> RewriteMultiply(Instruction* i) {
    const ElementType type = i->shape().element_type();
    if (!IsInteger(type) && !IsFloat(type)) return nullptr;
    for (int k = 0; k < 2; ++k) {
      Instruction* other = i->operand(1 - k);
      if (IsSplatOf(other, 1.0)) {
        if (Instruction* r = IfSameShape(i, i->operand(k))) return r;
      }
      // x * 0 = 0 holds for integers only (NaN * 0 and -1 * 0 for floats).
      if (IsInteger(type) && IsSplatOf(other, 0.0)) {
        if (Instruction* r = IfSameShape(i, other)) return r;
        return Splat(i->shape(), 0);
      }
    }
    return nullptr;
  }

  absl::StatusOr<Instruction*> RewriteDivide(Instruction* i) {
    const ElementType type = i->shape().element_type();
    if ((IsInteger(type) || IsFloat(type)) && IsSplatOf(i->operand(1), 1.0)) {
      return IfSameShape(i, i->operand(0));
    }
    return nullptr;
  }

  absl::StatusOr<Instruction*> RewriteBitwiseOrMinMax(Instruction* i) {
    const Opcode opcode = i->opcode();
    if (opcode != Opcode::kXor && i->operand(0) == i->operand(1)) {
      return IfSameShape(i, i->operand(0));
    }
    const ElementType type = i->shape().element_type();
    if (!IsInteger(type) && !IsPred(type)) return nullptr;
    // The neutral element: all ones for and, zero for or and xor.
    std::optional<uint64_t> neutral;
    if (opcode == Opcode::kAnd) neutral = IsPred(type) ? 1 : BitsOf(type, -1);
    if (opcode == Opcode::kOr || opcode == Opcode::kXor) neutral = 0;
    if (!neutral.has_value()) return nullptr;
    for (int k = 0; k < 2; ++k) {
      if (IsSplatBits(*i->operand(1 - k), *neutral)) {
        if (Instruction* r = IfSameShape(i, i->operand(k))) return r;
      }
    }
    return nullptr;
  }

  absl::StatusOr<Instruction*> RewriteCompare(Instruction* i) {
    const ElementType type = i->operand(0)->shape().element_type();
    if (i->operand(0) != i->operand(1) || !(IsInteger(type) || IsPred(type))) return nullptr;
    bool value = false;
    switch (i->attrs().comparison_direction) {
      case ComparisonDirection::kEq: case ComparisonDirection::kGe: case ComparisonDirection::kLe:
        value = true;
        break;
      default:
        value = false;
    }
    return Splat(i->shape(), value ? 1 : 0);
  }

  absl::StatusOr<Instruction*> RewriteReshape(Instruction* i) {
    Instruction* operand = i->operand(0);
    if (Instruction* r = IfSameShape(i, operand)) return r;
    if (operand->opcode() != Opcode::kReshape) return nullptr;
    Instruction* source = operand->operand(0);
    if (Instruction* r = IfSameShape(i, source)) return r;
    NewInstruction reshape;
    reshape.opcode = Opcode::kReshape;
    reshape.operands = {source};
    reshape.shape = i->shape();
    return Add(std::move(reshape));
  }

  absl::StatusOr<Instruction*> RewriteTranspose(Instruction* i) {
    Instruction* operand = i->operand(0);
    const std::vector<int64_t>& outer = i->attrs().dimensions;
    std::vector<int64_t> identity(outer.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (outer == identity) return IfSameShape(i, operand);
    if (operand->opcode() != Opcode::kTranspose) return nullptr;
    // Result dimension k is the inner result's dimension outer[k], which is
    // the source's dimension inner[outer[k]].
    const std::vector<int64_t>& inner = operand->attrs().dimensions;
    if (inner.size() != outer.size()) return nullptr;
    std::vector<int64_t> composed(outer.size());
    for (size_t k = 0; k < outer.size(); ++k) composed[k] = inner[outer[k]];
    Instruction* source = operand->operand(0);
    if (composed == identity) {
      if (Instruction* r = IfSameShape(i, source)) return r;
    }
    NewInstruction transpose;
    transpose.opcode = Opcode::kTranspose;
    transpose.operands = {source};
    transpose.attrs.dimensions = composed;
    transpose.attrs.has_dimensions = true;
    transpose.shape = i->shape();
    return Add(std::move(transpose));
  }

  absl::StatusOr<Instruction*> RewriteBroadcast(Instruction* i) {
    Instruction* operand = i->operand(0);
    const std::vector<int64_t>& outer = i->attrs().dimensions;
    std::vector<int64_t> identity(outer.size());
    std::iota(identity.begin(), identity.end(), 0);
    if (outer == identity && operand->shape().rank() == i->shape().rank()) {
      if (Instruction* r = IfSameShape(i, operand)) return r;
    }
    if (operand->opcode() != Opcode::kBroadcast) return nullptr;
    // Source dimension j lands in the inner result's dimension inner[j],
    // which lands in the result's dimension outer[inner[j]].
    const std::vector<int64_t>& inner = operand->attrs().dimensions;
    std::vector<int64_t> composed;
    for (int64_t d : inner) {
      if (d < 0 || d >= static_cast<int64_t>(outer.size())) return nullptr;
      composed.push_back(outer[d]);
    }
    NewInstruction broadcast;
    broadcast.opcode = Opcode::kBroadcast;
    broadcast.operands = {operand->operand(0)};
    broadcast.attrs.dimensions = composed;
    broadcast.attrs.has_dimensions = true;
    broadcast.shape = i->shape();
    return Add(std::move(broadcast));
  }

  absl::StatusOr<Instruction*> RewriteSlice(Instruction* i) {
    Instruction* operand = i->operand(0);
    const std::vector<SliceDimension>& slice = i->attrs().slice;
    const Shape& shape = i->shape();
    const Shape& operand_shape = operand->shape();
    if (static_cast<int64_t>(slice.size()) != shape.rank()) return nullptr;
    bool full = true;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (slice[d].start != 0 || shape.dimensions(d) != operand_shape.dimensions(d) ||
          (slice[d].stride != 1 && shape.dimensions(d) > 1)) {
        full = false;
      }
    }
    if (full) return IfSameShape(i, operand);
    if (operand->opcode() != Opcode::kSlice) return nullptr;
    // Element k of the result is inner element start + k*stride, which is
    // source element inner.start + (start + k*stride) * inner.stride.
    const std::vector<SliceDimension>& inner = operand->attrs().slice;
    if (inner.size() != slice.size()) return nullptr;
    NewInstruction composed;
    composed.opcode = Opcode::kSlice;
    composed.operands = {operand->operand(0)};
    for (int64_t d = 0; d < shape.rank(); ++d) {
      SliceDimension s;
      const int64_t n = shape.dimensions(d);
      if (n == 0) {
        // An empty slice may start past the source's end once composed
        // (an empty slice at the end of a strided one): [0:0] is valid.
        composed.attrs.slice.push_back(s);
        continue;
      }
      s.start = inner[d].start + slice[d].start * inner[d].stride;
      s.stride = inner[d].stride * slice[d].stride;
      s.limit = s.start + (n - 1) * s.stride + 1;
      composed.attrs.slice.push_back(s);
    }
    composed.shape = shape;
    return Add(std::move(composed));
  }

  absl::StatusOr<Instruction*> RewriteConcatenate(Instruction* i) {
    if (i->operand_count() == 1) return IfSameShape(i, i->operand(0));
    std::vector<Instruction*> kept;
    for (Instruction* operand : i->operands()) {
      if (operand->shape().element_count() != 0) kept.push_back(operand);
    }
    if (kept.empty() || kept.size() == i->operands().size()) return nullptr;
    if (kept.size() == 1) return IfSameShape(i, kept[0]);
    NewInstruction concatenate;
    concatenate.opcode = Opcode::kConcatenate;
    concatenate.operands = kept;
    concatenate.attrs.dimensions = i->attrs().dimensions;
    concatenate.attrs.has_dimensions = true;
    concatenate.shape = i->shape();
    return Add(std::move(concatenate));
  }

  absl::StatusOr<Instruction*> RewriteSelect(Instruction* i) {
    if (i->operand(1) == i->operand(2)) return IfSameShape(i, i->operand(1));
    std::optional<uint64_t> predicate = SplatBits(*i->operand(0));
    if (!predicate.has_value()) return nullptr;
    return IfSameShape(i, i->operand(*predicate != 0 ? 1 : 2));
  }

  Computation* computation_;
  SideEffectCache* effects_;
};

}  // namespace

absl::StatusOr<bool> SimplifyAlgebra::Run(Module* module) {
  bool changed = false;
  SideEffectCache effects;  // One walk per computation for the whole module.
  for (Computation* computation : ComputationsOf(*module)) {
    XJIT_ASSIGN_OR_RETURN(bool computation_changed, Simplifier(computation, &effects).Run());
    changed = changed || computation_changed;
  }
  return changed;
}

}  // namespace xjit
