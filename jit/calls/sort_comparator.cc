// RecognizeSortComparator (see sort_comparator.h).
#include "jit/calls/sort_comparator.h"

#include <utility>

#include "ir/element_type.h"
#include "ir/instruction.h"

namespace xjit::jit {
namespace {

using runtime::sort::SortKey;

// One side of a key compare: a parameter and the replacements K applies.
struct KeySide {
  int64_t parameter = -1;
  bool replace_nan = false;
  uint64_t nan_to = 0;
  bool replace_zero = false;
  uint64_t zero_to = 0;

  bool SameK(const KeySide& other) const {
    return replace_nan == other.replace_nan && nan_to == other.nan_to &&
           replace_zero == other.replace_zero && zero_to == other.zero_to;
  }
};

bool IsScalar(const Instruction& instruction) {
  return instruction.shape().IsArray() && instruction.shape().rank() == 0;
}

// The partial (IEEE) float compare: the default or FLOAT type.
bool IsPartialFloatCompare(const Instruction& compare) {
  const ComparisonType type = compare.attrs().comparison_type;
  return IsFloat(compare.operand(0)->shape().element_type()) &&
         (type == ComparisonType::kDefault || type == ComparisonType::kFloat);
}

std::optional<uint64_t> ScalarConstantBits(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kConstant || !IsScalar(instruction)) return std::nullopt;
  return instruction.literal().GetBits({});
}

// K(x) of sort_comparator.h; nullopt when `value` is not of that form.
std::optional<KeySide> MatchKeySide(const Instruction* value) {
  if (!IsScalar(*value)) return std::nullopt;
  if (value->opcode() == Opcode::kParameter) {
    KeySide side;
    side.parameter = value->attrs().parameter_number;
    return side;
  }
  if (value->opcode() != Opcode::kSelect) return std::nullopt;
  const Instruction* test = value->operand(0);
  const std::optional<uint64_t> replacement = ScalarConstantBits(*value->operand(1));
  if (!replacement || value->operand(1)->shape().element_type() != value->shape().element_type()) {
    return std::nullopt;
  }
  std::optional<KeySide> side = MatchKeySide(value->operand(2));
  if (!side) return std::nullopt;
  // The test must be on the parameter itself, under the partial compare.
  if (test->opcode() != Opcode::kCompare || !IsPartialFloatCompare(*test)) return std::nullopt;
  auto is_parameter = [&](const Instruction* x) {
    return x->opcode() == Opcode::kParameter && x->attrs().parameter_number == side->parameter;
  };
  auto is_zero = [](const Instruction* x) {
    const std::optional<uint64_t> bits = ScalarConstantBits(*x);
    if (!bits) return false;
    const int width = BitWidth(x->shape().element_type());
    const uint64_t magnitude_mask = (uint64_t{1} << (width - 1)) - 1;
    return (*bits & magnitude_mask) == 0;
  };
  const Instruction* a = test->operand(0);
  const Instruction* b = test->operand(1);
  const ComparisonDirection direction = test->attrs().comparison_direction;
  // An outer select decides before the inner ones: its replacement wins.
  if (direction == ComparisonDirection::kNe && a == b && is_parameter(a)) {
    side->replace_nan = true;
    side->nan_to = *replacement;
    return side;
  }
  if (direction == ComparisonDirection::kEq &&
      ((is_parameter(a) && is_zero(b)) || (is_zero(a) && is_parameter(b)))) {
    side->replace_zero = true;
    side->zero_to = *replacement;
    return side;
  }
  return std::nullopt;
}

// The order class a compare of `type` elements under its comparison type
// gives, as the evaluator defines it (interpreter/elementwise.cc), or
// nullopt for combinations the key path does not reproduce.
std::optional<SortKey::Order> OrderOf(ElementType type, ComparisonType comparison) {
  if (!runtime::sort::IsSortKeyType(type)) return std::nullopt;
  if (IsPred(type)) return SortKey::Order::kUnsigned;
  if (IsFloat(type)) {
    if (comparison == ComparisonType::kTotalOrder) return SortKey::Order::kFloatTotal;
    if (comparison == ComparisonType::kDefault || comparison == ComparisonType::kFloat) {
      return SortKey::Order::kFloatPartial;
    }
    return std::nullopt;
  }
  switch (comparison) {
    case ComparisonType::kDefault:
      return IsSignedInteger(type) ? SortKey::Order::kSigned : SortKey::Order::kUnsigned;
    case ComparisonType::kSigned:
    case ComparisonType::kTotalOrder:
      return SortKey::Order::kSigned;
    case ComparisonType::kUnsigned:
      return SortKey::Order::kUnsigned;
    case ComparisonType::kFloat:
      return std::nullopt;
  }
  return std::nullopt;
}

// A compare of K(p_2i) with K(p_2i+1) (in either order): the key it
// defines (direction as written, not yet LT/GT) and whether the parameters
// are swapped.
struct KeyCompare {
  SortKey key;
  bool swapped = false;
};

std::optional<KeyCompare> MatchKeyCompare(const Instruction& compare) {
  if (compare.opcode() != Opcode::kCompare || !IsScalar(compare)) return std::nullopt;
  const std::optional<KeySide> a = MatchKeySide(compare.operand(0));
  const std::optional<KeySide> b = MatchKeySide(compare.operand(1));
  if (!a || !b || !a->SameK(*b) || a->parameter / 2 != b->parameter / 2 ||
      a->parameter == b->parameter) {
    return std::nullopt;
  }
  const ElementType type = compare.operand(0)->shape().element_type();
  const std::optional<SortKey::Order> order = OrderOf(type, compare.attrs().comparison_type);
  if (!order) return std::nullopt;
  KeyCompare result;
  result.key.operand = a->parameter / 2;
  result.key.type = type;
  result.key.order = *order;
  result.key.replace_nan = a->replace_nan;
  result.key.nan_to = a->nan_to;
  result.key.replace_zero = a->replace_zero;
  result.key.zero_to = a->zero_to;
  result.swapped = a->parameter % 2 == 1;
  return result;
}

// `key` of sort_comparator.h: a strict LT or GT key compare.
std::optional<SortKey> MatchStrictKey(const Instruction& compare) {
  std::optional<KeyCompare> match = MatchKeyCompare(compare);
  if (!match) return std::nullopt;
  const ComparisonDirection direction = compare.attrs().comparison_direction;
  if (direction != ComparisonDirection::kLt && direction != ComparisonDirection::kGt) {
    return std::nullopt;
  }
  match->key.descending = (direction == ComparisonDirection::kGt) != match->swapped;
  return match->key;
}

// Whether `compare` is key equality of the same K and order class as `key`.
bool IsKeyEquality(const Instruction& compare, const SortKey& key) {
  std::optional<KeyCompare> match = MatchKeyCompare(compare);
  if (!match || compare.attrs().comparison_direction != ComparisonDirection::kEq) return false;
  SortKey equality = match->key;
  equality.descending = key.descending;
  // Equality of integers does not depend on signedness.
  if (!IsFloat(key.type)) equality.order = key.order;
  return equality == key;
}

bool MatchOrder(const Instruction& value, std::vector<SortKey>* keys) {
  if (!IsScalar(value) || value.shape().element_type() != ElementType::kPred) return false;
  if (value.opcode() == Opcode::kCompare) {
    std::optional<SortKey> key = MatchStrictKey(value);
    if (!key) return false;
    keys->push_back(*key);
    return true;
  }
  if (value.opcode() != Opcode::kOr) return false;
  for (int first = 0; first < 2; ++first) {
    const Instruction& strict = *value.operand(first);
    const Instruction& tie = *value.operand(1 - first);
    if (strict.opcode() != Opcode::kCompare || tie.opcode() != Opcode::kAnd) continue;
    std::optional<SortKey> key = MatchStrictKey(strict);
    if (!key) continue;
    for (int eq = 0; eq < 2; ++eq) {
      if (!IsKeyEquality(*tie.operand(eq), *key)) continue;
      std::vector<SortKey> rest;
      if (!MatchOrder(*tie.operand(1 - eq), &rest)) continue;
      keys->push_back(*key);
      keys->insert(keys->end(), rest.begin(), rest.end());
      return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::vector<SortKey>> RecognizeSortComparator(const Computation& comparator) {
  if (comparator.root() == nullptr) return std::nullopt;
  std::vector<SortKey> keys;
  if (!MatchOrder(*comparator.root(), &keys)) return std::nullopt;
  // Parameters must be the operands' scalars, in order (the caller checks
  // their types against the operands).
  for (const SortKey& key : keys) {
    if (2 * key.operand + 1 >= comparator.parameter_count()) return std::nullopt;
  }
  return keys;
}

}  // namespace xjit::jit
