// Shape rules of the elementwise operations: unary and binary arithmetic,
// comparison and logic, select, clamp, the conversions (convert,
// stochastic-convert, bitcast-convert, reduce-precision) and map. Operands
// share their dimensions (unbounded sizes match any); the result keeps them,
// with the element type the opcode defines.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

absl::StatusOr<Shape> InferUnary(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const ElementType t = operand->element_type();
  ElementType result = t;
  auto bad_type = [&](absl::string_view expected) {
    return ctx.Error("operand element type %s is not %s", TypeName(t), expected);
  };
  switch (ctx.instr.opcode()) {
    case Opcode::kAbs:
      if (!IsSignedInteger(t) && !IsFloatOrComplex(t)) {
        return bad_type("a signed integer, float or complex type");
      }
      if (IsComplex(t)) result = ComplexComponentType(t);
      break;
    case Opcode::kReal:
    case Opcode::kImag:
      if (!IsFloatOrComplex(t)) return bad_type("a float or complex type");
      if (IsComplex(t)) result = ComplexComponentType(t);
      break;
    case Opcode::kNegate:
      if (!IsNumeric(t)) return bad_type("a numeric type");
      break;
    case Opcode::kSign:
      if (!IsSignedInteger(t) && !IsFloatOrComplex(t)) {
        return bad_type("a signed integer, float or complex type");
      }
      break;
    case Opcode::kNot:
      if (!IsPred(t) && !IsInteger(t)) return bad_type("pred or an integer type");
      break;
    case Opcode::kPopulationCount:
    case Opcode::kClz:
      if (!IsInteger(t)) return bad_type("an integer type");
      break;
    case Opcode::kIsFinite:
      if (!IsFloat(t)) return bad_type("a float type");
      result = ElementType::kPred;
      break;
    case Opcode::kCeil:
    case Opcode::kFloor:
    case Opcode::kRoundNearestAfz:
    case Opcode::kRoundNearestEven:
    case Opcode::kErf:
      if (!IsFloat(t)) return bad_type("a float type");
      break;
    default:  // Transcendental functions.
      if (!IsFloatOrComplex(t)) return bad_type("a float or complex type");
      break;
  }
  return MakeArray(result, operand->dimensions(), DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferBinary(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  if (!SameDimensions(*lhs, *rhs)) {
    return ctx.Error("operand shapes %s and %s differ", Str(*lhs), Str(*rhs));
  }
  const ElementType t = lhs->element_type();
  if (t != rhs->element_type()) {
    return ctx.Error("operand element types %s and %s differ", TypeName(t),
                     TypeName(rhs->element_type()));
  }
  auto bad_type = [&](absl::string_view expected) {
    return ctx.Error("operand element type %s is not %s", TypeName(t), expected);
  };
  ElementType result = t;
  switch (ctx.instr.opcode()) {
    case Opcode::kCompare:
      result = ElementType::kPred;
      break;
    case Opcode::kComplex:
      if (t == ElementType::kF32) {
        result = ElementType::kC64;
      } else if (t == ElementType::kF64) {
        result = ElementType::kC128;
      } else {
        return bad_type("f32 or f64");
      }
      break;
    case Opcode::kAnd:
    case Opcode::kOr:
    case Opcode::kXor:
      if (!IsPred(t) && !IsInteger(t)) return bad_type("pred or an integer type");
      break;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightArithmetic:
    case Opcode::kShiftRightLogical:
    case Opcode::kMulhi:
      if (!IsInteger(t)) return bad_type("an integer type");
      break;
    case Opcode::kAtan2:
      if (!IsFloatOrComplex(t)) return bad_type("a float or complex type");
      break;
    case Opcode::kDivide:
    case Opcode::kRemainder:
    case Opcode::kPower:
      if (!IsNumeric(t)) return bad_type("a numeric type");
      break;
    default:  // add, subtract, multiply, maximum, minimum: any array type.
      break;
  }
  std::vector<int64_t> dims(lhs->rank());
  std::vector<bool> dynamic(lhs->rank());
  for (int64_t i = 0; i < lhs->rank(); ++i) {
    dims[i] = MergeSize(lhs->dimensions(i), rhs->dimensions(i));
    dynamic[i] = lhs->is_dynamic_dimension(i) || rhs->is_dynamic_dimension(i);
  }
  return MakeArray(result, dims, dynamic);
}

absl::StatusOr<Shape> InferSelect(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(3));
  XJIT_ASSIGN_OR_RETURN(const Shape* pred, ctx.ArrayOperand(0, "predicate"));
  XJIT_ASSIGN_OR_RETURN(const Shape* on_true, ctx.ArrayOperand(1, "on_true"));
  XJIT_ASSIGN_OR_RETURN(const Shape* on_false, ctx.ArrayOperand(2, "on_false"));
  if (pred->element_type() != ElementType::kPred) {
    return ctx.Error("predicate element type %s is not pred", TypeName(pred->element_type()));
  }
  if (!ShapesMatch(*on_true, *on_false)) {
    return ctx.Error("on_true shape %s and on_false shape %s differ", Str(*on_true),
                     Str(*on_false));
  }
  if (!pred->IsScalar() && !SameDimensions(*pred, *on_true)) {
    return ctx.Error("predicate shape %s does not match operand shape %s", Str(*pred),
                     Str(*on_true));
  }
  std::vector<bool> dynamic = DynamicFlags(*on_true);
  std::vector<int64_t> dims = Dims(*on_true);
  for (int64_t i = 0; i < on_true->rank(); ++i) {
    dims[i] = MergeSize(dims[i], on_false->dimensions(i));
    dynamic[i] = dynamic[i] || on_false->is_dynamic_dimension(i);
  }
  return MakeArray(on_true->element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferClamp(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(3));
  XJIT_ASSIGN_OR_RETURN(const Shape* min, ctx.ArrayOperand(0, "min"));
  XJIT_ASSIGN_OR_RETURN(const Shape* x, ctx.ArrayOperand(1, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* max, ctx.ArrayOperand(2, "max"));
  for (const auto& [bound, name] : {std::pair{min, "min"}, std::pair{max, "max"}}) {
    if (bound->element_type() != x->element_type()) {
      return ctx.Error("%s element type %s differs from operand element type %s", name,
                       TypeName(bound->element_type()), TypeName(x->element_type()));
    }
    if (!bound->IsScalar() && !SameDimensions(*bound, *x)) {
      return ctx.Error("%s shape %s must be a scalar or match operand shape %s", name,
                       Str(*bound), Str(*x));
    }
  }
  return MakeArray(x->element_type(), x->dimensions(), DynamicFlags(*x));
}

absl::StatusOr<Shape> InferConvert(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  // Any array type converts to any other; complex to real keeps the real
  // part (as StableHLO's convert does).
  return MakeArray(given.element_type(), operand->dimensions(), DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferStochasticConvert(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* random, ctx.ArrayOperand(1, "random"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (!IsFloat(operand->element_type())) {
    return ctx.Error("operand element type %s is not a float type",
                     TypeName(operand->element_type()));
  }
  if (!IsUnsignedInteger(random->element_type()) ||
      BitWidth(random->element_type()) != BitWidth(operand->element_type())) {
    return ctx.Error("random element type %s must be an unsigned integer as wide as %s",
                     TypeName(random->element_type()), TypeName(operand->element_type()));
  }
  if (!SameDimensions(*operand, *random)) {
    return ctx.Error("operand shape %s and random shape %s differ", Str(*operand), Str(*random));
  }
  if (!IsInteger(given.element_type()) && !IsFloat(given.element_type())) {
    return ctx.Error("result element type %s is not an integer or float type",
                     TypeName(given.element_type()));
  }
  return MakeArray(given.element_type(), operand->dimensions(), DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferBitcastConvert(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  const ElementType to = given.element_type();
  // PRED counts as one bit here, as in XLA's bitcast-convert rule
  // (pred[64] <-> s64[]), although it is stored in a byte.
  auto bits = [](ElementType t) -> int64_t { return IsPred(t) ? 1 : BitWidth(t); };
  const int64_t from_bits = bits(operand->element_type());
  const int64_t to_bits = bits(to);
  std::vector<int64_t> dims = Dims(*operand);
  std::vector<bool> dynamic = DynamicFlags(*operand);
  if (from_bits > to_bits) {
    if (from_bits % to_bits != 0) {
      return ctx.Error("cannot bitcast %s to %s: widths %d and %d are not multiples",
                       TypeName(operand->element_type()), TypeName(to), from_bits, to_bits);
    }
    dims.push_back(from_bits / to_bits);
    dynamic.push_back(false);
  } else if (to_bits > from_bits) {
    if (to_bits % from_bits != 0) {
      return ctx.Error("cannot bitcast %s to %s: widths %d and %d are not multiples",
                       TypeName(operand->element_type()), TypeName(to), from_bits, to_bits);
    }
    const int64_t ratio = to_bits / from_bits;
    if (dims.empty() || dims.back() != ratio) {
      return ctx.Error(
          "bitcast from %s to the wider %s needs a minor-most dimension of size %d, operand is %s",
          TypeName(operand->element_type()), TypeName(to), ratio, Str(*operand));
    }
    dims.pop_back();
    dynamic.pop_back();
  }
  return MakeArray(to, dims, dynamic);
}

absl::StatusOr<Shape> InferReducePrecision(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  if (!IsFloat(operand->element_type())) {
    return ctx.Error("operand element type %s is not a float type",
                     TypeName(operand->element_type()));
  }
  if (ctx.attrs.exponent_bits < 1) {
    return ctx.Error("exponent_bits must be at least 1, got %d", ctx.attrs.exponent_bits);
  }
  if (ctx.attrs.mantissa_bits < 0) {
    return ctx.Error("mantissa_bits must be non-negative, got %d", ctx.attrs.mantissa_bits);
  }
  return MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand));
}

// Map: a scalar computation of N operands applied elementwise.
absl::StatusOr<Shape> InferMap(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* first, ctx.ArrayOperand(0, "operand 0"));
  std::vector<Shape> scalars;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (!SameDimensions(*operand, *first)) {
      return ctx.Error("operand shapes %s and %s differ", Str(*first), Str(*operand));
    }
    scalars.push_back(Shape::Scalar(operand->element_type()));
  }
  if (ctx.attrs.has_dimensions) {
    bool identity = static_cast<int64_t>(ctx.attrs.dimensions.size()) == first->rank();
    for (size_t i = 0; identity && i < ctx.attrs.dimensions.size(); ++i) {
      identity = ctx.attrs.dimensions[i] == static_cast<int64_t>(i);
    }
    if (!identity) {
      return ctx.Error("dimensions %s must list every operand dimension in order",
                       DimsStr(ctx.attrs.dimensions));
    }
  }
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  std::vector<const Shape*> args;
  for (const Shape& s : scalars) args.push_back(&s);
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, "to_apply", args));
  if (!sig.result->IsScalar()) {
    return ctx.Error("to_apply computation must return a scalar, returns %s", Str(*sig.result));
  }
  return MakeArray(sig.result->element_type(), first->dimensions(), DynamicFlags(*first));
}

}  // namespace xjit::shape_inference_internal
