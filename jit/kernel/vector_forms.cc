// Operations with vector forms on every target (see vector_forms.h).
#include "jit/kernel/vector_forms.h"

namespace xjit::jit {
namespace {

bool IsF32OrF64(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64;
}

}  // namespace

ElementType LaneComputeType(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16 ? ElementType::kF32 : type;
}

bool LaneType::Add(ElementType type) {
  if (IsPred(type)) return true;
  if (widen_16bit_floats_) type = LaneComputeType(type);
  int w = 0;
  if (IsF32OrF64(type)) {
    if (float_type_ && *float_type_ != type) return false;
    float_type_ = type;
    w = BitWidth(type);
  } else if (IsInteger(type)) {
    w = BitWidth(type);
    if (w != 8 && w != 16 && w != 32 && w != 64) return false;
    if (!int_type_) int_type_ = type;
  } else {
    return false;
  }
  if (width_ && *width_ != w) return false;
  width_ = w;
  return true;
}

ElementType LaneType::type() const {
  if (float_type_) return *float_type_;
  if (int_type_) return *int_type_;
  return ElementType::kU8;
}

bool HasVectorUnary(ElementType type, Opcode opcode) {
  if (IsInteger(type)) {
    switch (opcode) {
      case Opcode::kAbs: case Opcode::kNegate: case Opcode::kNot: case Opcode::kSign:
        return true;
      default:
        return false;
    }
  }
  if (!IsF32OrF64(type)) return false;
  switch (opcode) {
    case Opcode::kAbs: case Opcode::kNegate: case Opcode::kSqrt: case Opcode::kFloor:
    case Opcode::kCeil: case Opcode::kRoundNearestEven: case Opcode::kRoundNearestAfz:
    case Opcode::kSign:
      return true;
    default:
      return false;
  }
}

bool HasVectorBinary(ElementType type, Opcode opcode) {
  if (IsPred(type)) {
    // Masks: and/multiply/minimum are and, or/add/maximum are or.
    switch (opcode) {
      case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kMultiply:
      case Opcode::kMinimum: case Opcode::kAdd: case Opcode::kMaximum:
        return true;
      default:
        return false;
    }
  }
  if (IsInteger(type)) {
    switch (opcode) {
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kAnd:
      case Opcode::kOr: case Opcode::kXor: case Opcode::kMaximum: case Opcode::kMinimum:
      case Opcode::kShiftLeft: case Opcode::kShiftRightLogical:
      case Opcode::kShiftRightArithmetic:
        return true;
      default:
        return false;
    }
  }
  if (!IsF32OrF64(type)) return false;
  switch (opcode) {
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum:
      return true;
    default:
      return false;
  }
}

bool HasVectorCompare(const KOp& op) {
  if (IsF32OrF64(op.operand_type)) return op.comparison == ComparisonType::kFloat;
  return op.comparison == ComparisonType::kSigned || op.comparison == ComparisonType::kUnsigned;
}

bool HasVectorAccess(const KOp& op, const std::vector<std::optional<int64_t>>& strides) {
  switch (op.kind) {
    case KOpKind::kLoad:  // Broadcast or consecutive.
      return strides[op.a] == 0 || strides[op.a] == 1;
    case KOpKind::kStore:
      return strides[op.a] == 1;
    case KOpKind::kFromIndex:  // Invariant, or affine lane offsets (integers).
      return strides[op.a] == 0 || (strides[op.a].has_value() && IsInteger(op.type));
    default:
      return true;
  }
}

}  // namespace xjit::jit
