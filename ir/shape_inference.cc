// Shape inference for every opcode of ir/opcode.h.
//
// Each rule reads only what its opcode needs: operand shapes, the typed
// attributes of InstructionAttributes and the signatures of called
// computations. Nothing here trusts its input: operands may be null, attribute
// indices out of range, sizes negative or huge; every such case is an error
// naming the opcode and the rule. Arithmetic on sizes is overflow-checked.
//
// Dimensions may be bounded-dynamic (the stored size is the bound, so rules
// treat them as static sizes and propagate the flag) or unbounded
// (Shape::kUnboundedSize): an unbounded size matches any size, and a result
// size computed from an unbounded one is unbounded.
//
// Opcodes whose result is not determined by their operands (parameter,
// constant, iota, reshape, rng, custom-call, infeed, recv, ...) take the
// instruction's own shape and check it against operands and attributes.
// Every array of the returned shape carries the default layout.
#include "ir/shape_inference.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/status_macros.h"

namespace xjit {
namespace {

constexpr int64_t kUnbounded = Shape::kUnboundedSize;

// ---------------------------------------------------------------------------
// Small utilities.

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
std::string TypeName(ElementType type) { return std::string(ElementTypeName(type)); }
std::string DimsStr(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

bool IsUnbounded(int64_t size) { return size == kUnbounded; }

// Sizes match when equal or when either is unbounded.
bool SizesMatch(int64_t a, int64_t b) { return a == b || IsUnbounded(a) || IsUnbounded(b); }

// The size a result takes from two matching sizes: the bounded one if any.
int64_t MergeSize(int64_t a, int64_t b) { return IsUnbounded(a) ? b : a; }

bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

// Same rank and matching sizes (element types not compared).
bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesMatch(a.dimensions(i), b.dimensions(i))) return false;
  }
  return true;
}

// Compatible() that lets an unbounded size match any size.
bool ShapesMatch(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple()) {
    if (a.tuple_size() != b.tuple_size()) return false;
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      if (!ShapesMatch(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (!a.IsArray()) return true;
  return SameDimensions(a, b);
}

// An array with the default layout and the given dynamic flags (empty = none).
Shape MakeArray(ElementType type, absl::Span<const int64_t> dims,
                const std::vector<bool>& dynamic = {}) {
  Shape shape = Shape::Array(type, dims);
  for (size_t i = 0; i < dynamic.size() && i < dims.size(); ++i) {
    if (dynamic[i]) shape.set_dynamic_dimension(static_cast<int64_t>(i), true);
  }
  return shape;
}

std::vector<int64_t> Dims(const Shape& shape) {
  return std::vector<int64_t>(shape.dimensions().begin(), shape.dimensions().end());
}

std::vector<bool> DynamicFlags(const Shape& shape) {
  std::vector<bool> flags(shape.rank(), false);
  for (int64_t i = 0; i < shape.rank(); ++i) flags[i] = shape.is_dynamic_dimension(i);
  return flags;
}

// `shape` with every array given the default layout (replacing any other).
Shape WithDefaultLayout(Shape shape) {
  if (shape.IsTuple()) {
    for (Shape& element : *shape.mutable_tuple_shapes()) element = WithDefaultLayout(element);
  } else if (shape.IsArray()) {
    shape.set_layout(Layout::Default(shape.rank()));
  } else {
    shape.clear_layout();
  }
  return shape;
}

// Checks that sizes are non-negative (or unbounded) and that the element
// count of every array fits in int64.
absl::Status CheckWellFormed(const Shape& shape, int depth = 0) {
  if (depth > 1000) return absl::InvalidArgumentError("shape nesting is too deep");
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      XJIT_RETURN_IF_ERROR(CheckWellFormed(element, depth + 1));
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    if (shape.rank() != 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("shape ", TypeName(shape.element_type()), " cannot have dimensions"));
    }
    return absl::OkStatus();
  }
  int64_t count = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t size = shape.dimensions(i);
    if (IsUnbounded(size)) continue;
    if (size < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shape %s has negative size %d in dimension %d", Str(shape), size, i));
    }
    if (MulOverflows(count, size, &count)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shape %s has too many elements", Str(shape)));
    }
  }
  return absl::OkStatus();
}

// Element count with unbounded sizes counted as 1; callers check
// well-formedness first, so this cannot overflow.
int64_t BoundedElementCount(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape.dimensions()) {
    if (!IsUnbounded(d)) count *= d;
  }
  return count;
}

bool HasUnbounded(const Shape& shape) {
  for (int64_t d : shape.dimensions()) {
    if (IsUnbounded(d)) return true;
  }
  return false;
}

bool IsNumeric(ElementType t) { return IsInteger(t) || IsFloat(t) || IsComplex(t); }
bool IsFloatOrComplex(ElementType t) { return IsFloat(t) || IsComplex(t); }

// ---------------------------------------------------------------------------
// The per-instruction context: error construction and operand access.

class Ctx {
 public:
  explicit Ctx(const Instruction& instruction)
      : instr(instruction), attrs(instruction.attrs()), op(OpcodeName(instruction.opcode())) {}

  template <typename... Args>
  absl::Status Error(const absl::FormatSpec<Args...>& format, const Args&... args) const {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", absl::StrFormat(format, args...)));
  }
  absl::Status Error(absl::string_view message) const {
    return absl::InvalidArgumentError(absl::StrCat(op, ": ", message));
  }

  int64_t operand_count() const { return instr.operand_count(); }

  absl::Status ExpectOperandCount(int64_t n) const {
    if (operand_count() != n) {
      return Error("expects %d operands, has %d", n, operand_count());
    }
    return absl::OkStatus();
  }
  absl::Status ExpectMinOperandCount(int64_t n) const {
    if (operand_count() < n) {
      return Error("expects at least %d operands, has %d", n, operand_count());
    }
    return absl::OkStatus();
  }

  // The shape of operand i, after checking it exists and is well formed.
  absl::StatusOr<const Shape*> Operand(int64_t i) const {
    if (i < 0 || i >= operand_count()) return Error("missing operand %d", i);
    const Instruction* operand = instr.operand(i);
    if (operand == nullptr) return Error("operand %d is null", i);
    absl::Status status = CheckWellFormed(operand->shape());
    if (!status.ok()) return Error("operand %d: %s", i, status.message());
    return &operand->shape();
  }

  absl::StatusOr<const Shape*> ArrayOperand(int64_t i, absl::string_view what) const {
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, Operand(i));
    if (!shape->IsArray()) return Error("%s must be an array, got %s", what, Str(*shape));
    return shape;
  }

  absl::StatusOr<const Shape*> ScalarOperand(int64_t i, absl::string_view what) const {
    XJIT_ASSIGN_OR_RETURN(const Shape* shape, Operand(i));
    if (!shape->IsScalar()) return Error("%s must be a scalar, got %s", what, Str(*shape));
    return shape;
  }

  // The instruction's own shape, for opcodes whose result it defines.
  absl::StatusOr<Shape> GivenShape() const {
    absl::Status status = CheckWellFormed(instr.shape());
    if (!status.ok()) return Error("result shape: %s", status.message());
    return WithDefaultLayout(instr.shape());
  }
  absl::StatusOr<Shape> GivenArrayShape() const {
    XJIT_ASSIGN_OR_RETURN(Shape shape, GivenShape());
    if (!shape.IsArray()) return Error("result must be an array, got %s", Str(shape));
    return shape;
  }

  absl::StatusOr<const Computation*> Called(int64_t i, absl::string_view role) const {
    const auto& called = instr.called_computations();
    if (i < 0 || i >= static_cast<int64_t>(called.size()) || called[i] == nullptr) {
      return Error("missing %s computation", role);
    }
    return called[i];
  }

  absl::Status ExpectCalledCount(int64_t n) const {
    int64_t have = static_cast<int64_t>(instr.called_computations().size());
    if (have != n) return Error("expects %d called computations, has %d", n, have);
    return absl::OkStatus();
  }

  // A dimension index attribute in [0, rank).
  absl::Status CheckDimension(int64_t dim, int64_t rank, absl::string_view what) const {
    if (dim < 0 || dim >= rank) return Error("%s %d is out of range for rank %d", what, dim, rank);
    return absl::OkStatus();
  }

  // A list of distinct dimension indices in [0, rank), sorted if asked.
  absl::Status CheckDimensionList(absl::Span<const int64_t> dims, int64_t rank,
                                  absl::string_view what, bool sorted = false) const {
    absl::flat_hash_set<int64_t> seen;
    for (size_t i = 0; i < dims.size(); ++i) {
      XJIT_RETURN_IF_ERROR(CheckDimension(dims[i], rank, what));
      if (!seen.insert(dims[i]).second) return Error("%s %d is repeated", what, dims[i]);
      if (sorted && i > 0 && dims[i] < dims[i - 1]) {
        return Error("%s %s must be sorted", what, DimsStr(dims));
      }
    }
    return absl::OkStatus();
  }

  const Instruction& instr;
  const InstructionAttributes& attrs;
  absl::string_view op;
};

// The parameter shapes and root shape of a called computation.
struct Signature {
  std::vector<const Shape*> params;
  const Shape* result = nullptr;
};

absl::StatusOr<Signature> GetSignature(const Ctx& ctx, const Computation* computation,
                                       absl::string_view role) {
  Signature signature;
  if (computation->root() == nullptr) {
    return ctx.Error("%s computation %s has no root", role, computation->name());
  }
  signature.result = &computation->root()->shape();
  for (int64_t i = 0; i < computation->parameter_count(); ++i) {
    const Instruction* param = computation->parameter(i);
    if (param == nullptr) {
      return ctx.Error("%s computation %s has no parameter %d", role, computation->name(), i);
    }
    signature.params.push_back(&param->shape());
  }
  return signature;
}

// Checks a called computation's parameters against the shapes the caller
// passes (layouts aside) and returns its signature.
absl::StatusOr<Signature> CheckParams(const Ctx& ctx, const Computation* computation,
                                      absl::string_view role,
                                      const std::vector<const Shape*>& args) {
  XJIT_ASSIGN_OR_RETURN(Signature sig, GetSignature(ctx, computation, role));
  if (sig.params.size() != args.size()) {
    return ctx.Error("%s computation %s takes %d parameters, expected %d", role,
                     computation->name(), sig.params.size(), args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!ShapesMatch(*sig.params[i], *args[i])) {
      return ctx.Error("%s computation %s parameter %d has shape %s, expected %s", role,
                       computation->name(), i, Str(*sig.params[i]), Str(*args[i]));
    }
  }
  return sig;
}

// The window output size of one dimension: the number of valid placements of
// a (dilated) window of `size` with `stride` over the padded, dilated base.
absl::StatusOr<int64_t> WindowOutputSize(const Ctx& ctx, int64_t base, const WindowDimension& w,
                                         int64_t dim) {
  if (w.size <= 0 || w.stride <= 0 || w.base_dilation <= 0 || w.window_dilation <= 0) {
    return ctx.Error(
        "window dimension %d must have positive size, stride and dilations (size=%d stride=%d "
        "lhs_dilate=%d rhs_dilate=%d)",
        dim, w.size, w.stride, w.base_dilation, w.window_dilation);
  }
  if (IsUnbounded(base)) return kUnbounded;
  int64_t dilated_base = 0;
  if (base > 0) {
    if (MulOverflows(base - 1, w.base_dilation, &dilated_base) ||
        AddOverflows(dilated_base, 1, &dilated_base)) {
      return ctx.Error("window dimension %d: dilated size overflows", dim);
    }
  }
  int64_t padded = 0;
  if (AddOverflows(dilated_base, w.padding_low, &padded) ||
      AddOverflows(padded, w.padding_high, &padded)) {
    return ctx.Error("window dimension %d: padded size overflows", dim);
  }
  int64_t dilated_window = 0;
  if (MulOverflows(w.size - 1, w.window_dilation, &dilated_window) ||
      AddOverflows(dilated_window, 1, &dilated_window)) {
    return ctx.Error("window dimension %d: dilated window size overflows", dim);
  }
  if (padded < 0) {
    return ctx.Error("window dimension %d: padded base size %d is negative", dim, padded);
  }
  if (padded < dilated_window) return 0;
  return (padded - dilated_window) / w.stride + 1;
}

// ---------------------------------------------------------------------------
// Elementwise operations.

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

// ---------------------------------------------------------------------------
// Shape manipulation.

absl::StatusOr<Shape> InferBroadcast(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (given.element_type() != operand->element_type()) {
    return ctx.Error("result element type %s differs from operand element type %s",
                     TypeName(given.element_type()), TypeName(operand->element_type()));
  }
  const auto& dims = ctx.attrs.dimensions;
  if (static_cast<int64_t>(dims.size()) != operand->rank()) {
    return ctx.Error("dimensions %s must have one entry per operand dimension (rank %d)",
                     DimsStr(dims), operand->rank());
  }
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(dims, given.rank(), "dimension"));
  for (int64_t i = 0; i < operand->rank(); ++i) {
    // A size-1 operand dimension may be expanded (BroadcastInDim's
    // degenerate broadcast, which StableHLO's broadcast_in_dim lowers to).
    if (operand->dimensions(i) != 1 &&
        !SizesMatch(operand->dimensions(i), given.dimensions(dims[i]))) {
      return ctx.Error("operand dimension %d has size %d but result dimension %d has size %d", i,
                       operand->dimensions(i), dims[i], given.dimensions(dims[i]));
    }
  }
  return given;
}

absl::StatusOr<Shape> InferReshape(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (given.element_type() != operand->element_type()) {
    return ctx.Error("result element type %s differs from operand element type %s",
                     TypeName(given.element_type()), TypeName(operand->element_type()));
  }
  if (!HasUnbounded(*operand) && !HasUnbounded(given) &&
      BoundedElementCount(*operand) != BoundedElementCount(given)) {
    return ctx.Error("element counts differ: operand %s has %d, result %s has %d", Str(*operand),
                     BoundedElementCount(*operand), Str(given), BoundedElementCount(given));
  }
  if (ctx.attrs.inferred_dimension.has_value()) {
    XJIT_RETURN_IF_ERROR(
        ctx.CheckDimension(*ctx.attrs.inferred_dimension, given.rank(), "inferred_dimension"));
  }
  return given;
}

absl::StatusOr<Shape> InferDynamicReshape(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (given.element_type() != operand->element_type()) {
    return ctx.Error("result element type %s differs from operand element type %s",
                     TypeName(given.element_type()), TypeName(operand->element_type()));
  }
  if (ctx.operand_count() - 1 != given.rank()) {
    return ctx.Error("expects one size operand per result dimension (%d), has %d", given.rank(),
                     ctx.operand_count() - 1);
  }
  for (int64_t i = 1; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* size, ctx.ScalarOperand(i, absl::StrCat("size ", i - 1)));
    if (size->element_type() != ElementType::kS32) {
      return ctx.Error("size operand %d must be s32[], got %s", i - 1, Str(*size));
    }
  }
  return given;
}

absl::StatusOr<Shape> InferTranspose(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const auto& perm = ctx.attrs.dimensions;
  if (static_cast<int64_t>(perm.size()) != operand->rank()) {
    return ctx.Error("dimensions %s is not a permutation of the operand's %d dimensions",
                     DimsStr(perm), operand->rank());
  }
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(perm, operand->rank(), "dimension"));
  std::vector<int64_t> dims(perm.size());
  std::vector<bool> dynamic(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) {
    dims[i] = operand->dimensions(perm[i]);
    dynamic[i] = operand->is_dynamic_dimension(perm[i]);
  }
  return MakeArray(operand->element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferSlice(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const auto& slice = ctx.attrs.slice;
  if (static_cast<int64_t>(slice.size()) != operand->rank()) {
    return ctx.Error("slice has %d entries for an operand of rank %d", slice.size(),
                     operand->rank());
  }
  std::vector<int64_t> dims(slice.size());
  for (size_t i = 0; i < slice.size(); ++i) {
    const SliceDimension& s = slice[i];
    const int64_t size = operand->dimensions(i);
    if (s.stride <= 0) return ctx.Error("dimension %d: stride %d must be positive", i, s.stride);
    if (s.start < 0 || s.start > s.limit || (!IsUnbounded(size) && s.limit > size)) {
      return ctx.Error("dimension %d: slice [%d:%d] is not within [0:%d] with start <= limit", i,
                       s.start, s.limit, size);
    }
    dims[i] = (s.limit - s.start) / s.stride + ((s.limit - s.start) % s.stride != 0 ? 1 : 0);
  }
  return MakeArray(operand->element_type(), dims, DynamicFlags(*operand));
}

// The start indices of dynamic-slice and dynamic-update-slice, from operand
// `first` on: one integer scalar per dimension, or (older form) one rank-1
// integer vector holding them all.
absl::Status CheckStartIndices(const Ctx& ctx, int64_t first, int64_t rank) {
  const int64_t count = ctx.operand_count() - first;
  if (count == 1 && rank != 0) {
    XJIT_ASSIGN_OR_RETURN(const Shape* indices, ctx.ArrayOperand(first, "start indices"));
    if (indices->rank() == 1) {
      if (!IsInteger(indices->element_type()) || !SizesMatch(indices->dimensions(0), rank)) {
        return ctx.Error("start index vector %s must be an integer vector of %d elements",
                         Str(*indices), rank);
      }
      return absl::OkStatus();
    }
  }
  if (count != rank) {
    return ctx.Error("expects %d start indices (one per operand dimension), has %d", rank, count);
  }
  ElementType type = ElementType::kS32;
  for (int64_t i = 0; i < count; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* index,
                          ctx.ScalarOperand(first + i, absl::StrCat("start index ", i)));
    if (!IsInteger(index->element_type())) {
      return ctx.Error("start index %d has non-integer type %s", i, Str(*index));
    }
    if (i == 0) type = index->element_type();
    if (index->element_type() != type) {
      return ctx.Error("start indices have different types %s and %s", TypeName(type),
                       TypeName(index->element_type()));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferDynamicSlice(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_RETURN_IF_ERROR(CheckStartIndices(ctx, 1, operand->rank()));
  const auto& sizes = ctx.attrs.slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != operand->rank()) {
    return ctx.Error("dynamic_slice_sizes %s must have one entry per operand dimension (rank %d)",
                     DimsStr(sizes), operand->rank());
  }
  for (int64_t i = 0; i < operand->rank(); ++i) {
    const int64_t bound = operand->dimensions(i);
    if (sizes[i] < 0 || (!IsUnbounded(bound) && sizes[i] > bound)) {
      return ctx.Error("slice size %d of dimension %d is not within [0, %d]", sizes[i], i, bound);
    }
  }
  return MakeArray(operand->element_type(), sizes);
}

absl::StatusOr<Shape> InferDynamicUpdateSlice(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* update, ctx.ArrayOperand(1, "update"));
  if (update->element_type() != operand->element_type()) {
    return ctx.Error("update element type %s differs from operand element type %s",
                     TypeName(update->element_type()), TypeName(operand->element_type()));
  }
  if (update->rank() != operand->rank()) {
    return ctx.Error("update rank %d differs from operand rank %d", update->rank(),
                     operand->rank());
  }
  for (int64_t i = 0; i < operand->rank(); ++i) {
    const int64_t u = update->dimensions(i);
    const int64_t o = operand->dimensions(i);
    if (!IsUnbounded(u) && !IsUnbounded(o) && u > o) {
      return ctx.Error("update dimension %d has size %d, larger than the operand's %d", i, u, o);
    }
  }
  XJIT_RETURN_IF_ERROR(CheckStartIndices(ctx, 2, operand->rank()));
  return MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferPad(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* value, ctx.ScalarOperand(1, "padding value"));
  if (value->element_type() != operand->element_type()) {
    return ctx.Error("padding value type %s differs from operand element type %s",
                     TypeName(value->element_type()), TypeName(operand->element_type()));
  }
  const PaddingConfig& padding = ctx.attrs.padding;
  if (static_cast<int64_t>(padding.size()) != operand->rank()) {
    return ctx.Error("padding has %d entries for an operand of rank %d", padding.size(),
                     operand->rank());
  }
  std::vector<int64_t> dims(padding.size());
  for (size_t i = 0; i < padding.size(); ++i) {
    const PaddingDimension& p = padding[i];
    if (p.interior < 0) {
      return ctx.Error("dimension %d: interior padding %d is negative", i, p.interior);
    }
    const int64_t d = operand->dimensions(i);
    if (IsUnbounded(d)) {
      dims[i] = kUnbounded;
      continue;
    }
    int64_t size = 0;
    if (MulOverflows(std::max<int64_t>(d - 1, 0), p.interior, &size) ||
        AddOverflows(size, d, &size) || AddOverflows(size, p.low, &size) ||
        AddOverflows(size, p.high, &size)) {
      return ctx.Error("dimension %d: padded size overflows", i);
    }
    if (size < 0) {
      return ctx.Error("dimension %d: padded size %d + %d + %d + %d*%d = %d is negative", i, p.low,
                       p.high, d, std::max<int64_t>(d - 1, 0), p.interior, size);
    }
    dims[i] = size;
  }
  return MakeArray(operand->element_type(), dims, DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferConcatenate(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* first, ctx.ArrayOperand(0, "operand 0"));
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  const int64_t axis = ctx.attrs.dimensions[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(axis, first->rank(), "dimension"));
  std::vector<int64_t> dims = Dims(*first);
  std::vector<bool> dynamic = DynamicFlags(*first);
  for (int64_t i = 1; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (operand->element_type() != first->element_type()) {
      return ctx.Error("operand %d element type %s differs from operand 0's %s", i,
                       TypeName(operand->element_type()), TypeName(first->element_type()));
    }
    if (operand->rank() != first->rank()) {
      return ctx.Error("operand %d rank %d differs from operand 0's %d", i, operand->rank(),
                       first->rank());
    }
    for (int64_t d = 0; d < first->rank(); ++d) {
      const int64_t size = operand->dimensions(d);
      dynamic[d] = dynamic[d] || operand->is_dynamic_dimension(d);
      if (d == axis) {
        if (IsUnbounded(size) || IsUnbounded(dims[d])) {
          dims[d] = kUnbounded;
        } else if (AddOverflows(dims[d], size, &dims[d])) {
          return ctx.Error("concatenated size overflows");
        }
      } else if (!SizesMatch(size, dims[d])) {
        return ctx.Error("operand %d shape %s differs from operand 0's %s outside dimension %d",
                         i, Str(*operand), Str(*first), axis);
      } else {
        dims[d] = MergeSize(dims[d], size);
      }
    }
  }
  return MakeArray(first->element_type(), dims, dynamic);
}

absl::StatusOr<Shape> InferReverse(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_RETURN_IF_ERROR(
      ctx.CheckDimensionList(ctx.attrs.dimensions, operand->rank(), "dimension"));
  return MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferIota(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (given.rank() == 0) return ctx.Error("result must not be a scalar");
  if (!IsNumeric(given.element_type())) {
    return ctx.Error("result element type %s is not numeric", TypeName(given.element_type()));
  }
  XJIT_RETURN_IF_ERROR(
      ctx.CheckDimension(ctx.attrs.iota_dimension, given.rank(), "iota_dimension"));
  return given;
}

absl::StatusOr<Shape> InferGetDimensionSize(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(ctx.attrs.dimensions[0], operand->rank(), "dimension"));
  return Shape::Scalar(ElementType::kS32);
}

absl::StatusOr<Shape> InferSetDimensionSize(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* size, ctx.ScalarOperand(1, "size"));
  if (size->element_type() != ElementType::kS32) {
    return ctx.Error("size must be s32[], got %s", Str(*size));
  }
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  const int64_t dim = ctx.attrs.dimensions[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(dim, operand->rank(), "dimension"));
  if (IsUnbounded(operand->dimensions(dim))) {
    return ctx.Error("dimension %d is unbounded", dim);
  }
  Shape result =
      MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand));
  result.set_dynamic_dimension(dim, true);
  return result;
}

// ---------------------------------------------------------------------------
// Tuples, tokens and pass-through operations.

absl::StatusOr<Shape> InferTuple(const Ctx& ctx) {
  std::vector<Shape> elements;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(i));
    elements.push_back(WithDefaultLayout(*operand));
  }
  return Shape::Tuple(std::move(elements));
}

absl::StatusOr<Shape> InferGetTupleElement(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  if (!operand->IsTuple()) return ctx.Error("operand %s is not a tuple", Str(*operand));
  const int64_t index = ctx.attrs.tuple_index;
  if (index < 0 || index >= operand->tuple_size()) {
    return ctx.Error("index %d is out of range for a tuple of %d elements", index,
                     operand->tuple_size());
  }
  return WithDefaultLayout(operand->tuple_shapes(index));
}

// The operand's shape unchanged (copy, domain, opt-barrier, ...).
absl::StatusOr<Shape> InferSameAsOperand(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  return WithDefaultLayout(*operand);
}

absl::StatusOr<Shape> InferAfterAll(const Ctx& ctx) {
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(i));
    if (!operand->IsToken()) return ctx.Error("operand %d is %s, not a token", i, Str(*operand));
  }
  return Shape::Token();
}

absl::StatusOr<Shape> InferAddDependency(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(1));
  if (!token->IsToken()) return ctx.Error("operand 1 is %s, not a token", Str(*token));
  return WithDefaultLayout(*operand);
}

absl::StatusOr<Shape> InferBitcast(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (ByteWidth(given.element_type()) != ByteWidth(operand->element_type())) {
    return ctx.Error("element byte sizes differ: operand %s, result %s",
                     TypeName(operand->element_type()), TypeName(given.element_type()));
  }
  if (!HasUnbounded(*operand) && !HasUnbounded(given) &&
      BoundedElementCount(*operand) != BoundedElementCount(given)) {
    return ctx.Error("element counts differ: operand %s has %d, result %s has %d", Str(*operand),
                     BoundedElementCount(*operand), Str(given), BoundedElementCount(given));
  }
  return given;
}

// ---------------------------------------------------------------------------
// Contractions.

// The result element type of dot-like operations: the instruction's own
// (its preferred element type) when it is an array, else the lhs type.
absl::StatusOr<ElementType> ContractionResultType(const Ctx& ctx, const Shape& lhs,
                                                  const Shape& rhs) {
  const ElementType l = lhs.element_type();
  const ElementType r = rhs.element_type();
  const bool mixable = l == r || (IsFloat(l) && IsFloat(r)) || (IsInteger(l) && IsInteger(r)) ||
                       (IsFloatOrComplex(l) && IsFloatOrComplex(r));
  if (!mixable) {
    return ctx.Error("operand element types %s and %s cannot be mixed", TypeName(l), TypeName(r));
  }
  if (ctx.instr.shape().IsArray()) return ctx.instr.shape().element_type();
  return l;
}

// The dot rule: result = batch dims, lhs free dims, rhs free dims.
absl::StatusOr<Shape> DotShape(const Ctx& ctx, const Shape& lhs, const Shape& rhs,
                               const DotDimensionNumbers& dnums) {
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size()) {
    return ctx.Error("lhs has %d batch dimensions but rhs has %d",
                     dnums.lhs_batch_dimensions.size(), dnums.rhs_batch_dimensions.size());
  }
  if (dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return ctx.Error("lhs has %d contracting dimensions but rhs has %d",
                     dnums.lhs_contracting_dimensions.size(),
                     dnums.rhs_contracting_dimensions.size());
  }
  for (const auto& [shape, batch, contracting, side] :
       {std::tuple{&lhs, &dnums.lhs_batch_dimensions, &dnums.lhs_contracting_dimensions, "lhs"},
        std::tuple{&rhs, &dnums.rhs_batch_dimensions, &dnums.rhs_contracting_dimensions, "rhs"}}) {
    std::vector<int64_t> all = *batch;
    all.insert(all.end(), contracting->begin(), contracting->end());
    XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(all, shape->rank(),
                                                absl::StrCat(side, " batch/contracting dimension")));
  }
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    const int64_t l = dnums.lhs_batch_dimensions[i];
    const int64_t r = dnums.rhs_batch_dimensions[i];
    if (!SizesMatch(lhs.dimensions(l), rhs.dimensions(r))) {
      return ctx.Error("batch dimension sizes differ: lhs dim %d has %d, rhs dim %d has %d", l,
                       lhs.dimensions(l), r, rhs.dimensions(r));
    }
  }
  for (size_t i = 0; i < dnums.lhs_contracting_dimensions.size(); ++i) {
    const int64_t l = dnums.lhs_contracting_dimensions[i];
    const int64_t r = dnums.rhs_contracting_dimensions[i];
    if (!SizesMatch(lhs.dimensions(l), rhs.dimensions(r))) {
      return ctx.Error("contracting dimension sizes differ: lhs dim %d has %d, rhs dim %d has %d",
                       l, lhs.dimensions(l), r, rhs.dimensions(r));
    }
  }
  XJIT_ASSIGN_OR_RETURN(ElementType type, ContractionResultType(ctx, lhs, rhs));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    const int64_t l = dnums.lhs_batch_dimensions[i];
    const int64_t r = dnums.rhs_batch_dimensions[i];
    dims.push_back(MergeSize(lhs.dimensions(l), rhs.dimensions(r)));
    dynamic.push_back(lhs.is_dynamic_dimension(l) || rhs.is_dynamic_dimension(r));
  }
  auto append_free = [&](const Shape& shape, const std::vector<int64_t>& batch,
                         const std::vector<int64_t>& contracting) {
    for (int64_t d = 0; d < shape.rank(); ++d) {
      if (std::find(batch.begin(), batch.end(), d) != batch.end()) continue;
      if (std::find(contracting.begin(), contracting.end(), d) != contracting.end()) continue;
      dims.push_back(shape.dimensions(d));
      dynamic.push_back(shape.is_dynamic_dimension(d));
    }
  };
  append_free(lhs, dnums.lhs_batch_dimensions, dnums.lhs_contracting_dimensions);
  append_free(rhs, dnums.rhs_batch_dimensions, dnums.rhs_contracting_dimensions);
  return MakeArray(type, dims, dynamic);
}

absl::StatusOr<Shape> InferDot(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  return DotShape(ctx, *lhs, *rhs, ctx.attrs.dot_dimension_numbers);
}

// The integers of an opaque attribute `key={1,2}` (or `key=3`); nullopt when
// absent. ragged-dot's ragged dimension numbers and the scan and shuffle
// attributes stay opaque in InstructionAttributes.
absl::StatusOr<std::optional<std::vector<int64_t>>> OpaqueInts(const Ctx& ctx,
                                                               absl::string_view key) {
  for (const OpaqueAttribute& attribute : ctx.instr.opaque_attributes()) {
    if (attribute.name != key) continue;
    std::string text;
    for (char c : attribute.value) {
      if (c != ' ' && c != '{' && c != '}') text.push_back(c);
    }
    std::vector<int64_t> values;
    if (text.empty()) return std::optional<std::vector<int64_t>>(values);
    size_t begin = 0;
    while (begin <= text.size()) {
      const size_t end = std::min(text.find(',', begin), text.size());
      int64_t value = 0;
      if (!absl::SimpleAtoi(absl::string_view(text).substr(begin, end - begin), &value)) {
        return ctx.Error("malformed %s=%s", std::string(key), attribute.value);
      }
      values.push_back(value);
      begin = end + 1;
    }
    return std::optional<std::vector<int64_t>>(values);
  }
  return std::optional<std::vector<int64_t>>();
}

// scaled-dot(lhs, rhs, lhs_scale, rhs_scale) (XLA's operand order): the dot
// rule on lhs and rhs; a scale is a scalar or has its operand's rank with
// dimensions that divide the operand's.
absl::StatusOr<Shape> InferScaledDot(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(4));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs_scale, ctx.ArrayOperand(2, "lhs scale"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs_scale, ctx.ArrayOperand(3, "rhs scale"));
  for (const auto& [operand, scale, side] :
       {std::tuple(lhs, lhs_scale, "lhs"), std::tuple(rhs, rhs_scale, "rhs")}) {
    if (scale->IsScalar()) continue;
    if (scale->rank() != operand->rank()) {
      return ctx.Error("%s scale rank %d differs from %s rank %d", side, scale->rank(), side,
                       operand->rank());
    }
    for (int64_t d = 0; d < operand->rank(); ++d) {
      const int64_t s = scale->dimensions(d);
      if (s <= 0 || operand->dimensions(d) % s != 0) {
        return ctx.Error("%s scale dimension %d (%d) does not divide %s's (%d)", side, d, s, side,
                         operand->dimensions(d));
      }
    }
  }
  return DotShape(ctx, *lhs, *rhs, ctx.attrs.dot_dimension_numbers);
}

// ragged-dot(lhs, rhs, group_sizes), lhs_ragged_dims={r}, rhs_group_dims={d}
// (XLA): a ragged non-contracting r needs rhs group dimension d (of size g,
// removed from the result); a ragged contracting r gives [g, dot dims...]; a
// ragged batch r gives the dot's shape. group_sizes is [g] or [lhs batch
// dims..., lhs dims of r's kind before r..., g].
absl::StatusOr<Shape> InferRaggedDot(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(3));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* groups, ctx.ArrayOperand(2, "group sizes"));
  if (!IsInteger(groups->element_type()) || groups->rank() < 1) {
    return ctx.Error("group sizes %s must be an integer array of rank >= 1", Str(*groups));
  }
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ragged,
                        OpaqueInts(ctx, "lhs_ragged_dims"));
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> group_dims,
                        OpaqueInts(ctx, "rhs_group_dims"));
  if (!ragged.has_value() || ragged->size() != 1) {
    return ctx.Error("needs lhs_ragged_dims={d} with one dimension");
  }
  const int64_t r = (*ragged)[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(r, lhs->rank(), "lhs ragged dimension"));
  const DotDimensionNumbers& dnums = ctx.attrs.dot_dimension_numbers;
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  const bool contracting = contains(dnums.lhs_contracting_dimensions, r);
  const bool batch = contains(dnums.lhs_batch_dimensions, r);
  const std::vector<int64_t> rhs_groups = group_dims.value_or(std::vector<int64_t>{});
  const int64_t g = groups->dimensions(groups->rank() - 1);
  if (groups->rank() > 1) {
    std::vector<int64_t> prefix = batch ? std::vector<int64_t>{} : dnums.lhs_batch_dimensions;
    for (int64_t d = 0; d < r; ++d) {
      const bool is_batch = contains(dnums.lhs_batch_dimensions, d);
      const bool is_contracting = contains(dnums.lhs_contracting_dimensions, d);
      if (batch ? is_batch : (!is_batch && is_contracting == contracting)) prefix.push_back(d);
    }
    bool fits = groups->rank() == static_cast<int64_t>(prefix.size()) + 1;
    for (int64_t i = 0; fits && i + 1 < groups->rank(); ++i) {
      fits = groups->dimensions(i) == lhs->dimensions(prefix[i]);
    }
    if (!fits) {
      return ctx.Error("group sizes %s are neither [g] nor [lhs batch dims..., lhs dims outer to "
                       "the ragged dimension..., g]", Str(*groups));
    }
  }
  if (batch || contracting) {
    if (!rhs_groups.empty()) {
      return ctx.Error("rhs_group_dims must be empty when the ragged dimension is a %s dimension",
                       batch ? "batch" : "contracting");
    }
    XJIT_ASSIGN_OR_RETURN(Shape shape, DotShape(ctx, *lhs, *rhs, dnums));
    if (batch) return shape;
    std::vector<int64_t> dims = {g};
    std::vector<bool> dynamic = {false};
    for (int64_t d = 0; d < shape.rank(); ++d) {
      dims.push_back(shape.dimensions(d));
      dynamic.push_back(shape.is_dynamic_dimension(d));
    }
    return MakeArray(shape.element_type(), dims, dynamic);
  }
  if (rhs_groups.size() != 1) {
    return ctx.Error("a ragged non-contracting dimension needs rhs_group_dims={d}");
  }
  const int64_t group = rhs_groups[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(group, rhs->rank(), "rhs group dimension"));
  if (contains(dnums.rhs_batch_dimensions, group) ||
      contains(dnums.rhs_contracting_dimensions, group)) {
    return ctx.Error("rhs group dimension %d is also a batch or contracting dimension", group);
  }
  if (rhs->dimensions(group) != g) {
    return ctx.Error("rhs group dimension %d has %d groups, group sizes %d", group,
                     rhs->dimensions(group), g);
  }
  // The dot rule on rhs without its group dimension.
  std::vector<int64_t> rhs_dims;
  for (int64_t d = 0; d < rhs->rank(); ++d) {
    if (d != group) rhs_dims.push_back(rhs->dimensions(d));
  }
  const Shape rhs_less = MakeArray(rhs->element_type(), rhs_dims);
  DotDimensionNumbers less = dnums;
  for (std::vector<int64_t>* v : {&less.rhs_batch_dimensions, &less.rhs_contracting_dimensions}) {
    for (int64_t& d : *v) {
      if (d > group) --d;
    }
  }
  return DotShape(ctx, *lhs, rhs_less, less);
}

// shuffle(operand), dimensions={...}, mode=rotate|permute, ...: the operand's
// shape (XLA's shuffle moves elements within the array).
absl::StatusOr<Shape> InferShuffle(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, OpaqueInts(ctx, "dimensions"));
  if (dims.has_value()) {
    XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(*dims, operand->rank(), "shuffled dimension"));
  }
  return MakeArray(operand->element_type(), operand->dimensions(),
                   std::vector<bool>(operand->rank(), false));
}

// scan(inputs..., inits...), dimensions={d}, num_carries=c: (outputs...,
// carries...) with each carry of its init's shape and every input and output
// holding dimension d of one size. The outputs' shapes are the given ones.
absl::Status CheckAllOperands(const Ctx& ctx);

absl::StatusOr<Shape> InferScan(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_ASSIGN_OR_RETURN(Shape shape, ctx.GivenShape());
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> carries_attr,
                        OpaqueInts(ctx, "num_carries"));
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> dims, OpaqueInts(ctx, "dimensions"));
  if (!dims.has_value() || dims->size() != 1) return ctx.Error("needs dimensions={d}");
  const int64_t dim = (*dims)[0];
  const int64_t carries =
      carries_attr.has_value() && carries_attr->size() == 1 ? (*carries_attr)[0] : 0;
  const int64_t count = ctx.operand_count();
  const int64_t results = shape.IsTuple() ? shape.tuple_size() : 1;
  if (carries < 0 || carries > count || carries > results) {
    return ctx.Error("num_carries=%d does not fit %d operands and %d results", carries, count,
                     results);
  }
  auto result = [&](int64_t i) -> const Shape& {
    return shape.IsTuple() ? shape.tuple_shapes(i) : shape;
  };
  int64_t n = -1;
  auto check_scanned = [&](const Shape& s, absl::string_view what) -> absl::Status {
    if (!s.IsArray() || dim < 0 || dim >= s.rank()) {
      return ctx.Error("scan dimension %d is out of range for %s %s", dim, std::string(what),
                       Str(s));
    }
    if (n >= 0 && s.dimensions(dim) != n) {
      return ctx.Error("%s %s does not have %d elements along dimension %d", std::string(what),
                       Str(s), n, dim);
    }
    n = s.dimensions(dim);
    return absl::OkStatus();
  };
  for (int64_t i = 0; i < count - carries; ++i) {
    XJIT_RETURN_IF_ERROR(check_scanned(ctx.instr.operand(i)->shape(), "input"));
  }
  for (int64_t i = 0; i < results - carries; ++i) {
    XJIT_RETURN_IF_ERROR(check_scanned(result(i), "output"));
  }
  for (int64_t c = 0; c < carries; ++c) {
    const Shape& init = ctx.instr.operand(count - carries + c)->shape();
    const Shape& out = result(results - carries + c);
    if (!init.IsArray() || !out.IsArray() || init.element_type() != out.element_type() ||
        !SameDimensions(init, out)) {
      return ctx.Error("carry %d: init %s and result %s differ", c, Str(init), Str(out));
    }
  }
  return shape;
}

absl::StatusOr<Shape> InferConvolution(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  const ConvolutionDimensionNumbers& dn = ctx.attrs.convolution_dimension_numbers;
  const Window& window = ctx.attrs.window;
  const int64_t n = static_cast<int64_t>(dn.input_spatial_dimensions.size());
  if (static_cast<int64_t>(dn.kernel_spatial_dimensions.size()) != n ||
      static_cast<int64_t>(dn.output_spatial_dimensions.size()) != n) {
    return ctx.Error("dim_labels have %d input, %d kernel and %d output spatial dimensions", n,
                     dn.kernel_spatial_dimensions.size(), dn.output_spatial_dimensions.size());
  }
  if (lhs->rank() != n + 2 || rhs->rank() != n + 2) {
    return ctx.Error(
        "dim_labels have %d spatial dimensions, so lhs %s and rhs %s must both have rank %d", n,
        Str(*lhs), Str(*rhs), n + 2);
  }
  if (static_cast<int64_t>(window.size()) != n) {
    return ctx.Error("window has %d dimensions but dim_labels have %d spatial dimensions",
                     window.size(), n);
  }
  auto check_labels = [&](int64_t a, int64_t b, const std::vector<int64_t>& spatial,
                          absl::string_view what) {
    std::vector<int64_t> all = {a, b};
    all.insert(all.end(), spatial.begin(), spatial.end());
    return ctx.CheckDimensionList(all, n + 2, absl::StrCat(what, " dimension"));
  };
  XJIT_RETURN_IF_ERROR(check_labels(dn.input_batch_dimension, dn.input_feature_dimension,
                                    dn.input_spatial_dimensions, "input"));
  XJIT_RETURN_IF_ERROR(check_labels(dn.kernel_input_feature_dimension,
                                    dn.kernel_output_feature_dimension,
                                    dn.kernel_spatial_dimensions, "kernel"));
  XJIT_RETURN_IF_ERROR(check_labels(dn.output_batch_dimension, dn.output_feature_dimension,
                                    dn.output_spatial_dimensions, "output"));
  const int64_t fgc = ctx.attrs.feature_group_count;
  const int64_t bgc = ctx.attrs.batch_group_count;
  if (fgc <= 0 || bgc <= 0) {
    return ctx.Error("feature_group_count %d and batch_group_count %d must be positive", fgc, bgc);
  }
  if (fgc > 1 && bgc > 1) {
    return ctx.Error("feature_group_count %d and batch_group_count %d cannot both exceed 1", fgc,
                     bgc);
  }
  const int64_t input_batch = lhs->dimensions(dn.input_batch_dimension);
  const int64_t input_features = lhs->dimensions(dn.input_feature_dimension);
  const int64_t kernel_input_features = rhs->dimensions(dn.kernel_input_feature_dimension);
  const int64_t kernel_output_features = rhs->dimensions(dn.kernel_output_feature_dimension);
  if (!IsUnbounded(input_features) && !IsUnbounded(kernel_input_features)) {
    if (input_features % fgc != 0) {
      return ctx.Error("input feature size %d is not a multiple of feature_group_count %d",
                       input_features, fgc);
    }
    if (input_features / fgc != kernel_input_features) {
      return ctx.Error(
          "input feature size %d / feature_group_count %d must equal the kernel input feature "
          "size %d",
          input_features, fgc, kernel_input_features);
    }
  }
  if (!IsUnbounded(kernel_output_features)) {
    if (kernel_output_features % fgc != 0) {
      return ctx.Error("kernel output feature size %d is not a multiple of feature_group_count %d",
                       kernel_output_features, fgc);
    }
    if (kernel_output_features % bgc != 0) {
      return ctx.Error("kernel output feature size %d is not a multiple of batch_group_count %d",
                       kernel_output_features, bgc);
    }
  }
  if (!IsUnbounded(input_batch) && input_batch % bgc != 0) {
    return ctx.Error("input batch size %d is not a multiple of batch_group_count %d", input_batch,
                     bgc);
  }
  XJIT_ASSIGN_OR_RETURN(ElementType type, ContractionResultType(ctx, *lhs, *rhs));
  std::vector<int64_t> dims(n + 2);
  std::vector<bool> dynamic(n + 2, false);
  dims[dn.output_batch_dimension] = IsUnbounded(input_batch) ? kUnbounded : input_batch / bgc;
  dynamic[dn.output_batch_dimension] = lhs->is_dynamic_dimension(dn.input_batch_dimension);
  dims[dn.output_feature_dimension] = kernel_output_features;
  dynamic[dn.output_feature_dimension] =
      rhs->is_dynamic_dimension(dn.kernel_output_feature_dimension);
  for (int64_t i = 0; i < n; ++i) {
    const int64_t kernel_size = rhs->dimensions(dn.kernel_spatial_dimensions[i]);
    if (!SizesMatch(window[i].size, kernel_size)) {
      return ctx.Error("window size %d of spatial dimension %d differs from the kernel's %d",
                       window[i].size, i, kernel_size);
    }
    XJIT_ASSIGN_OR_RETURN(
        dims[dn.output_spatial_dimensions[i]],
        WindowOutputSize(ctx, lhs->dimensions(dn.input_spatial_dimensions[i]), window[i], i));
    dynamic[dn.output_spatial_dimensions[i]] =
        lhs->is_dynamic_dimension(dn.input_spatial_dimensions[i]);
  }
  return MakeArray(type, dims, dynamic);
}

// ---------------------------------------------------------------------------
// Reductions.

// Checks a reducer of N accumulators: parameters (acc_0..acc_{N-1},
// value_0..value_{N-1}) are scalars, accumulators of the init types, values
// of the init or input types; the root is the accumulators (a tuple if N > 1).
absl::Status CheckReducer(const Ctx& ctx, const Computation* comp, absl::string_view role,
                          const std::vector<ElementType>& inits,
                          const std::vector<ElementType>& inputs) {
  XJIT_ASSIGN_OR_RETURN(Signature sig, GetSignature(ctx, comp, role));
  const size_t n = inits.size();
  if (sig.params.size() != 2 * n) {
    return ctx.Error("%s computation %s takes %d parameters, expected %d", role, comp->name(),
                     sig.params.size(), 2 * n);
  }
  for (size_t i = 0; i < 2 * n; ++i) {
    const Shape& p = *sig.params[i];
    const ElementType want = inits[i % n];
    const bool ok = p.IsScalar() &&
                    (p.element_type() == want || (i >= n && p.element_type() == inputs[i % n]));
    if (!ok) {
      return ctx.Error("%s computation %s parameter %d has shape %s, expected %s[]", role,
                       comp->name(), i, Str(p), TypeName(want));
    }
  }
  std::vector<Shape> expected;
  for (ElementType t : inits) expected.push_back(Shape::Scalar(t));
  const Shape want = n == 1 ? expected[0] : Shape::Tuple(expected);
  if (!ShapesMatch(*sig.result, want)) {
    return ctx.Error("%s computation %s returns %s, expected %s", role, comp->name(),
                     Str(*sig.result), Str(want));
  }
  return absl::OkStatus();
}

// Splits the operands of reduce / reduce-window into N inputs and N inits.
absl::Status SplitInputsAndInits(const Ctx& ctx, std::vector<const Shape*>* inputs,
                                 std::vector<const Shape*>* inits) {
  if (ctx.operand_count() < 2 || ctx.operand_count() % 2 != 0) {
    return ctx.Error("expects N inputs and N init values, has %d operands", ctx.operand_count());
  }
  const int64_t n = ctx.operand_count() / 2;
  for (int64_t i = 0; i < n; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* input, ctx.ArrayOperand(i, absl::StrCat("input ", i)));
    XJIT_ASSIGN_OR_RETURN(const Shape* init,
                          ctx.ScalarOperand(n + i, absl::StrCat("init value ", i)));
    if (!inputs->empty() && !SameDimensions(*input, *(*inputs)[0])) {
      return ctx.Error("input %d shape %s differs from input 0's %s", i, Str(*input),
                       Str(*(*inputs)[0]));
    }
    inputs->push_back(input);
    inits->push_back(init);
  }
  return absl::OkStatus();
}

std::vector<ElementType> ElementTypes(const std::vector<const Shape*>& shapes) {
  std::vector<ElementType> types;
  for (const Shape* s : shapes) types.push_back(s->element_type());
  return types;
}

// One array per init type with the given dims; a tuple when there are several.
Shape PerInitResult(const std::vector<const Shape*>& inits, const std::vector<int64_t>& dims,
                    const std::vector<bool>& dynamic) {
  std::vector<Shape> results;
  for (const Shape* init : inits) results.push_back(MakeArray(init->element_type(), dims, dynamic));
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferReduce(const Ctx& ctx) {
  std::vector<const Shape*> inputs, inits;
  XJIT_RETURN_IF_ERROR(SplitInputsAndInits(ctx, &inputs, &inits));
  const Shape& first = *inputs[0];
  XJIT_RETURN_IF_ERROR(
      ctx.CheckDimensionList(ctx.attrs.dimensions, first.rank(), "reduced dimension"));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  XJIT_RETURN_IF_ERROR(CheckReducer(ctx, comp, "to_apply", ElementTypes(inits),
                                    ElementTypes(inputs)));
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  for (int64_t d = 0; d < first.rank(); ++d) {
    const auto& reduced = ctx.attrs.dimensions;
    if (std::find(reduced.begin(), reduced.end(), d) != reduced.end()) continue;
    dims.push_back(first.dimensions(d));
    dynamic.push_back(first.is_dynamic_dimension(d));
  }
  return PerInitResult(inits, dims, dynamic);
}

absl::StatusOr<std::vector<int64_t>> WindowedDims(const Ctx& ctx, const Shape& base) {
  const Window& window = ctx.attrs.window;
  if (static_cast<int64_t>(window.size()) != base.rank()) {
    return ctx.Error("window has %d dimensions for an operand of rank %d", window.size(),
                     base.rank());
  }
  std::vector<int64_t> dims(base.rank());
  for (int64_t i = 0; i < base.rank(); ++i) {
    XJIT_ASSIGN_OR_RETURN(dims[i], WindowOutputSize(ctx, base.dimensions(i), window[i], i));
  }
  return dims;
}

absl::StatusOr<Shape> InferReduceWindow(const Ctx& ctx) {
  std::vector<const Shape*> inputs, inits;
  XJIT_RETURN_IF_ERROR(SplitInputsAndInits(ctx, &inputs, &inits));
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, WindowedDims(ctx, *inputs[0]));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  XJIT_RETURN_IF_ERROR(CheckReducer(ctx, comp, "to_apply", ElementTypes(inits),
                                    ElementTypes(inputs)));
  return PerInitResult(inits, dims, DynamicFlags(*inputs[0]));
}

absl::StatusOr<Shape> InferSelectAndScatter(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(3));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* source, ctx.ArrayOperand(1, "source"));
  XJIT_ASSIGN_OR_RETURN(const Shape* init, ctx.ScalarOperand(2, "init value"));
  const ElementType t = operand->element_type();
  if (init->element_type() != source->element_type()) {
    return ctx.Error("init value type %s differs from source element type %s",
                     TypeName(init->element_type()), TypeName(source->element_type()));
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> dims, WindowedDims(ctx, *operand));
  const Shape windowed = MakeArray(source->element_type(), dims);
  if (!ShapesMatch(windowed, *source)) {
    return ctx.Error("source shape %s differs from the windowed operand shape %s", Str(*source),
                     Str(windowed));
  }
  XJIT_ASSIGN_OR_RETURN(const Computation* select, ctx.Called(0, "select"));
  const Shape scalar = Shape::Scalar(t);
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, select, "select", {&scalar, &scalar}));
  if (!ShapesMatch(*sig.result, Shape::Scalar(ElementType::kPred))) {
    return ctx.Error("select computation must return pred[], returns %s", Str(*sig.result));
  }
  XJIT_ASSIGN_OR_RETURN(const Computation* scatter, ctx.Called(1, "scatter"));
  XJIT_RETURN_IF_ERROR(
      CheckReducer(ctx, scatter, "scatter", {init->element_type()}, {source->element_type()}));
  return MakeArray(t, operand->dimensions(), DynamicFlags(*operand));
}

// ---------------------------------------------------------------------------
// Gather and scatter.

// A dimension list that must be sorted and distinct within [0, rank).
absl::Status CheckSortedDims(const Ctx& ctx, const std::vector<int64_t>& dims, int64_t rank,
                             absl::string_view what) {
  return ctx.CheckDimensionList(dims, rank, what, /*sorted=*/true);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::StatusOr<Shape> InferGather(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(const Shape* indices, ctx.ArrayOperand(1, "start indices"));
  const GatherDimensionNumbers& g = ctx.attrs.gather_dimension_numbers;
  const auto& slice_sizes = ctx.attrs.slice_sizes;
  if (!IsInteger(indices->element_type())) {
    return ctx.Error("start indices element type %s is not an integer type",
                     TypeName(indices->element_type()));
  }
  if (g.index_vector_dim < 0 || g.index_vector_dim > indices->rank()) {
    return ctx.Error("index_vector_dim %d is out of range [0, %d]", g.index_vector_dim,
                     indices->rank());
  }
  // The indices' dimensions with the index vector dimension made explicit.
  std::vector<int64_t> expanded = Dims(*indices);
  if (g.index_vector_dim == indices->rank()) expanded.push_back(1);
  const int64_t index_vector_size = expanded[g.index_vector_dim];
  if (!SizesMatch(index_vector_size, static_cast<int64_t>(g.start_index_map.size()))) {
    return ctx.Error("index vector size %d differs from start_index_map size %d",
                     index_vector_size, g.start_index_map.size());
  }
  const int64_t batch_rank = static_cast<int64_t>(expanded.size()) - 1;
  const int64_t output_rank = static_cast<int64_t>(g.offset_dims.size()) + batch_rank;
  XJIT_RETURN_IF_ERROR(CheckSortedDims(ctx, g.offset_dims, output_rank, "offset_dims entry"));
  XJIT_RETURN_IF_ERROR(
      CheckSortedDims(ctx, g.collapsed_slice_dims, operand->rank(), "collapsed_slice_dims entry"));
  XJIT_RETURN_IF_ERROR(CheckSortedDims(ctx, g.operand_batching_dims, operand->rank(),
                                       "operand_batching_dims entry"));
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(g.start_index_map, operand->rank(),
                                              "start_index_map entry"));
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(g.start_indices_batching_dims, indices->rank(),
                                              "start_indices_batching_dims entry"));
  if (static_cast<int64_t>(slice_sizes.size()) != operand->rank()) {
    return ctx.Error("slice_sizes %s must have one entry per operand dimension (rank %d)",
                     DimsStr(slice_sizes), operand->rank());
  }
  if (static_cast<int64_t>(g.offset_dims.size() + g.collapsed_slice_dims.size() +
                           g.operand_batching_dims.size()) != operand->rank()) {
    return ctx.Error(
        "offset_dims (%d) + collapsed_slice_dims (%d) + operand_batching_dims (%d) must equal "
        "the operand rank %d",
        g.offset_dims.size(), g.collapsed_slice_dims.size(), g.operand_batching_dims.size(),
        operand->rank());
  }
  if (g.operand_batching_dims.size() != g.start_indices_batching_dims.size()) {
    return ctx.Error("operand_batching_dims and start_indices_batching_dims differ in size");
  }
  for (int64_t d : g.collapsed_slice_dims) {
    if (Contains(g.operand_batching_dims, d)) {
      return ctx.Error("dimension %d is both collapsed and a batching dimension", d);
    }
  }
  for (int64_t d : g.start_index_map) {
    if (Contains(g.operand_batching_dims, d)) {
      return ctx.Error("start_index_map entry %d is an operand batching dimension", d);
    }
  }
  for (int64_t d : g.start_indices_batching_dims) {
    if (d == g.index_vector_dim) {
      return ctx.Error("start_indices_batching_dims contains index_vector_dim %d", d);
    }
  }
  for (int64_t i = 0; i < operand->rank(); ++i) {
    const int64_t bound = operand->dimensions(i);
    if (slice_sizes[i] < 0 || (!IsUnbounded(bound) && slice_sizes[i] > bound)) {
      return ctx.Error("slice size %d of dimension %d is not within [0, %d]", slice_sizes[i], i,
                       bound);
    }
    if ((Contains(g.collapsed_slice_dims, i) || Contains(g.operand_batching_dims, i)) &&
        slice_sizes[i] > 1) {
      return ctx.Error("collapsed or batching dimension %d must have slice size <= 1, has %d", i,
                       slice_sizes[i]);
    }
  }
  for (size_t i = 0; i < g.operand_batching_dims.size(); ++i) {
    const int64_t o = operand->dimensions(g.operand_batching_dims[i]);
    const int64_t s = indices->dimensions(g.start_indices_batching_dims[i]);
    if (!SizesMatch(o, s)) {
      return ctx.Error("operand batching dimension %d has size %d but indices dimension %d has %d",
                       g.operand_batching_dims[i], o, g.start_indices_batching_dims[i], s);
    }
  }
  std::vector<int64_t> offset_sizes;
  for (int64_t i = 0; i < operand->rank(); ++i) {
    if (!Contains(g.collapsed_slice_dims, i) && !Contains(g.operand_batching_dims, i)) {
      offset_sizes.push_back(slice_sizes[i]);
    }
  }
  std::vector<int64_t> dims(output_rank);
  size_t offset_i = 0;
  int64_t batch_i = 0;
  for (int64_t i = 0; i < output_rank; ++i) {
    if (Contains(g.offset_dims, i)) {
      dims[i] = offset_sizes[offset_i++];
    } else {
      if (batch_i == g.index_vector_dim) ++batch_i;
      dims[i] = expanded[batch_i++];
    }
  }
  return MakeArray(operand->element_type(), dims);
}

absl::StatusOr<Shape> InferScatter(const Ctx& ctx) {
  const int64_t count = ctx.operand_count();
  if (count < 3 || count % 2 != 1) {
    return ctx.Error("expects N operands, the indices and N updates, has %d operands", count);
  }
  const int64_t n = (count - 1) / 2;
  std::vector<const Shape*> operands, updates;
  for (int64_t i = 0; i < n; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    XJIT_ASSIGN_OR_RETURN(const Shape* update,
                          ctx.ArrayOperand(n + 1 + i, absl::StrCat("update ", i)));
    if (i > 0 && !SameDimensions(*operand, *operands[0])) {
      return ctx.Error("operand %d shape %s differs from operand 0's %s", i, Str(*operand),
                       Str(*operands[0]));
    }
    if (i > 0 && !SameDimensions(*update, *updates[0])) {
      return ctx.Error("update %d shape %s differs from update 0's %s", i, Str(*update),
                       Str(*updates[0]));
    }
    operands.push_back(operand);
    updates.push_back(update);
  }
  XJIT_ASSIGN_OR_RETURN(const Shape* indices, ctx.ArrayOperand(n, "scatter indices"));
  if (!IsInteger(indices->element_type())) {
    return ctx.Error("scatter indices element type %s is not an integer type",
                     TypeName(indices->element_type()));
  }
  const ScatterDimensionNumbers& s = ctx.attrs.scatter_dimension_numbers;
  const Shape& operand = *operands[0];
  const Shape& update = *updates[0];
  if (s.index_vector_dim < 0 || s.index_vector_dim > indices->rank()) {
    return ctx.Error("index_vector_dim %d is out of range [0, %d]", s.index_vector_dim,
                     indices->rank());
  }
  std::vector<int64_t> expanded = Dims(*indices);
  if (s.index_vector_dim == indices->rank()) expanded.push_back(1);
  const int64_t index_vector_size = expanded[s.index_vector_dim];
  if (!SizesMatch(index_vector_size,
                  static_cast<int64_t>(s.scatter_dims_to_operand_dims.size()))) {
    return ctx.Error("index vector size %d differs from scatter_dims_to_operand_dims size %d",
                     index_vector_size, s.scatter_dims_to_operand_dims.size());
  }
  const int64_t scatter_rank = static_cast<int64_t>(expanded.size()) - 1;
  if (update.rank() != static_cast<int64_t>(s.update_window_dims.size()) + scatter_rank) {
    return ctx.Error("update rank %d must be update_window_dims (%d) + scatter dimensions (%d)",
                     update.rank(), s.update_window_dims.size(), scatter_rank);
  }
  XJIT_RETURN_IF_ERROR(
      CheckSortedDims(ctx, s.update_window_dims, update.rank(), "update_window_dims entry"));
  XJIT_RETURN_IF_ERROR(CheckSortedDims(ctx, s.inserted_window_dims, operand.rank(),
                                       "inserted_window_dims entry"));
  XJIT_RETURN_IF_ERROR(CheckSortedDims(ctx, s.input_batching_dims, operand.rank(),
                                       "input_batching_dims entry"));
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(s.scatter_dims_to_operand_dims, operand.rank(),
                                              "scatter_dims_to_operand_dims entry"));
  XJIT_RETURN_IF_ERROR(ctx.CheckDimensionList(s.scatter_indices_batching_dims, indices->rank(),
                                              "scatter_indices_batching_dims entry"));
  if (s.input_batching_dims.size() != s.scatter_indices_batching_dims.size()) {
    return ctx.Error("input_batching_dims and scatter_indices_batching_dims differ in size");
  }
  for (int64_t d : s.inserted_window_dims) {
    if (Contains(s.input_batching_dims, d)) {
      return ctx.Error("dimension %d is both inserted and a batching dimension", d);
    }
  }
  for (int64_t d : s.scatter_dims_to_operand_dims) {
    if (Contains(s.input_batching_dims, d)) {
      return ctx.Error("scatter_dims_to_operand_dims entry %d is an input batching dimension", d);
    }
  }
  for (int64_t d : s.scatter_indices_batching_dims) {
    if (d == s.index_vector_dim) {
      return ctx.Error("scatter_indices_batching_dims contains index_vector_dim %d", d);
    }
  }
  if (static_cast<int64_t>(s.update_window_dims.size() + s.inserted_window_dims.size() +
                           s.input_batching_dims.size()) != operand.rank()) {
    return ctx.Error(
        "update_window_dims (%d) + inserted_window_dims (%d) + input_batching_dims (%d) must "
        "equal the operand rank %d",
        s.update_window_dims.size(), s.inserted_window_dims.size(), s.input_batching_dims.size(),
        operand.rank());
  }
  // Window dimensions of the update are bounded by the operand's
  // non-inserted, non-batching dimensions, in order.
  size_t window_i = 0;
  for (int64_t d = 0; d < operand.rank(); ++d) {
    if (Contains(s.inserted_window_dims, d) || Contains(s.input_batching_dims, d)) continue;
    const int64_t update_dim = s.update_window_dims[window_i++];
    const int64_t u = update.dimensions(update_dim);
    const int64_t o = operand.dimensions(d);
    if (!IsUnbounded(u) && !IsUnbounded(o) && u > o) {
      return ctx.Error("update window dimension %d has size %d, larger than operand dimension "
                       "%d's %d",
                       update_dim, u, d, o);
    }
  }
  // Scatter dimensions of the update match the indices' batch dimensions.
  int64_t index_i = 0;
  for (int64_t d = 0; d < update.rank(); ++d) {
    if (Contains(s.update_window_dims, d)) continue;
    if (index_i == s.index_vector_dim) ++index_i;
    if (!SizesMatch(update.dimensions(d), expanded[index_i])) {
      return ctx.Error("update scatter dimension %d has size %d but the indices' dimension %d has "
                       "%d",
                       d, update.dimensions(d), index_i, expanded[index_i]);
    }
    ++index_i;
  }
  for (size_t i = 0; i < s.input_batching_dims.size(); ++i) {
    const int64_t o = operand.dimensions(s.input_batching_dims[i]);
    const int64_t x = indices->dimensions(s.scatter_indices_batching_dims[i]);
    if (!SizesMatch(o, x)) {
      return ctx.Error("operand batching dimension %d has size %d but indices dimension %d has %d",
                       s.input_batching_dims[i], o, s.scatter_indices_batching_dims[i], x);
    }
  }
  for (int64_t i = 0; i < n; ++i) {
    if (updates[i]->element_type() != operands[i]->element_type()) {
      return ctx.Error("update %d element type %s differs from operand %d's %s", i,
                       TypeName(updates[i]->element_type()), i,
                       TypeName(operands[i]->element_type()));
    }
  }
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  XJIT_RETURN_IF_ERROR(
      CheckReducer(ctx, comp, "to_apply", ElementTypes(operands), ElementTypes(updates)));
  std::vector<Shape> results;
  for (const Shape* o : operands) {
    results.push_back(MakeArray(o->element_type(), o->dimensions(), DynamicFlags(*o)));
  }
  return n == 1 ? results[0] : Shape::Tuple(std::move(results));
}

// ---------------------------------------------------------------------------
// Sorting.

absl::StatusOr<Shape> InferSort(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  std::vector<Shape> results;
  std::vector<Shape> scalars;
  XJIT_ASSIGN_OR_RETURN(const Shape* first, ctx.ArrayOperand(0, "operand 0"));
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (!SameDimensions(*operand, *first)) {
      return ctx.Error("operand %d shape %s differs from operand 0's %s", i, Str(*operand),
                       Str(*first));
    }
    results.push_back(
        MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand)));
    scalars.push_back(Shape::Scalar(operand->element_type()));
    scalars.push_back(Shape::Scalar(operand->element_type()));
  }
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(ctx.attrs.dimensions[0], first->rank(), "dimension"));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "comparator"));
  std::vector<const Shape*> args;
  for (const Shape& s : scalars) args.push_back(&s);
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, "comparator", args));
  if (!ShapesMatch(*sig.result, Shape::Scalar(ElementType::kPred))) {
    return ctx.Error("comparator must return pred[], returns %s", Str(*sig.result));
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferTopK(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  if (operand->rank() < 1) return ctx.Error("operand must have rank >= 1");
  const int64_t k = ctx.attrs.k;
  const int64_t last = operand->dimensions(operand->rank() - 1);
  if (k < 0 || (!IsUnbounded(last) && k > last)) {
    return ctx.Error("k = %d is not within [0, %d] (the last dimension's size)", k, last);
  }
  std::vector<int64_t> dims = Dims(*operand);
  dims.back() = k;
  std::vector<bool> dynamic = DynamicFlags(*operand);
  dynamic.back() = false;
  return Shape::Tuple({MakeArray(operand->element_type(), dims, dynamic),
                       MakeArray(ElementType::kS32, dims, dynamic)});
}

// ---------------------------------------------------------------------------
// FFT and linear algebra.

absl::StatusOr<Shape> InferFft(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const auto& length = ctx.attrs.fft_length;
  const int64_t n = static_cast<int64_t>(length.size());
  if (n < 1 || n > 3) return ctx.Error("fft_length must have 1 to 3 entries, has %d", n);
  if (operand->rank() < n) {
    return ctx.Error("operand rank %d is less than the %d transformed dimensions",
                     operand->rank(), n);
  }
  for (int64_t l : length) {
    if (l < 0) return ctx.Error("fft_length %s has a negative entry", DimsStr(length));
  }
  const ElementType t = operand->element_type();
  std::vector<int64_t> dims = Dims(*operand);
  const int64_t first = operand->rank() - n;
  // Every transformed dimension but the last has size fft_length in both
  // domains; the last differs for the real transforms.
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (!SizesMatch(dims[first + i], length[i])) {
      return ctx.Error("dimension %d has size %d but fft_length[%d] is %d", first + i,
                       dims[first + i], i, length[i]);
    }
  }
  int64_t& last = dims.back();
  ElementType result = t;
  switch (ctx.attrs.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) return ctx.Error("operand element type %s is not complex", TypeName(t));
      if (!SizesMatch(last, length.back())) {
        return ctx.Error("last dimension has size %d but fft_length ends with %d", last,
                         length.back());
      }
      break;
    case FftType::kRfft:
      if (t != ElementType::kF32 && t != ElementType::kF64) {
        return ctx.Error("RFFT operand element type %s is not f32 or f64", TypeName(t));
      }
      if (!SizesMatch(last, length.back())) {
        return ctx.Error("last dimension has size %d but fft_length ends with %d", last,
                         length.back());
      }
      result = t == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128;
      last = length.back() == 0 ? 0 : length.back() / 2 + 1;
      break;
    case FftType::kIrfft:
      if (!IsComplex(t)) {
        return ctx.Error("IRFFT operand element type %s is not complex", TypeName(t));
      }
      if (length.back() != 0 && !SizesMatch(last, length.back() / 2 + 1)) {
        return ctx.Error("IRFFT last dimension has size %d but fft_length %d needs %d", last,
                         length.back(), length.back() / 2 + 1);
      }
      result = ComplexComponentType(t);
      last = length.back();
      break;
  }
  return MakeArray(result, dims, DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferCholesky(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ArrayOperand(0, "operand"));
  if (!IsFloatOrComplex(a->element_type())) {
    return ctx.Error("operand element type %s is not float or complex",
                     TypeName(a->element_type()));
  }
  if (a->rank() < 2) return ctx.Error("operand %s must have rank >= 2", Str(*a));
  if (!SizesMatch(a->dimensions(a->rank() - 1), a->dimensions(a->rank() - 2))) {
    return ctx.Error("operand %s is not square in its two minor dimensions", Str(*a));
  }
  return MakeArray(a->element_type(), a->dimensions(), DynamicFlags(*a));
}

absl::StatusOr<Shape> InferTriangularSolve(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ArrayOperand(0, "a"));
  XJIT_ASSIGN_OR_RETURN(const Shape* b, ctx.ArrayOperand(1, "b"));
  if (!IsFloatOrComplex(a->element_type())) {
    return ctx.Error("a element type %s is not float or complex", TypeName(a->element_type()));
  }
  if (a->element_type() != b->element_type()) {
    return ctx.Error("a element type %s differs from b's %s", TypeName(a->element_type()),
                     TypeName(b->element_type()));
  }
  if (a->rank() < 2 || a->rank() != b->rank()) {
    return ctx.Error("a %s and b %s must have the same rank, at least 2", Str(*a), Str(*b));
  }
  const int64_t r = a->rank();
  if (!SizesMatch(a->dimensions(r - 1), a->dimensions(r - 2))) {
    return ctx.Error("a %s is not square in its two minor dimensions", Str(*a));
  }
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (!SizesMatch(a->dimensions(i), b->dimensions(i))) {
      return ctx.Error("batch dimension %d differs: a has %d, b has %d", i, a->dimensions(i),
                       b->dimensions(i));
    }
  }
  const int64_t solved = ctx.attrs.left_side ? b->dimensions(r - 2) : b->dimensions(r - 1);
  if (!SizesMatch(solved, a->dimensions(r - 1))) {
    return ctx.Error("b %s does not match a %s on the %s side", Str(*b), Str(*a),
                     ctx.attrs.left_side ? "left" : "right");
  }
  return MakeArray(b->element_type(), b->dimensions(), DynamicFlags(*b));
}

// batch-norm-*: operand 0 is the data; the others are rank-1 per-feature arrays.
absl::StatusOr<Shape> InferBatchNorm(const Ctx& ctx) {
  const Opcode opcode = ctx.instr.opcode();
  const int64_t count = opcode == Opcode::kBatchNormTraining ? 3 : 5;
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(count));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const ElementType t = operand->element_type();
  if (!IsFloat(t)) return ctx.Error("operand element type %s is not a float type", TypeName(t));
  if (operand->rank() < 1) return ctx.Error("operand must have rank >= 1");
  XJIT_RETURN_IF_ERROR(
      ctx.CheckDimension(ctx.attrs.feature_index, operand->rank(), "feature_index"));
  const int64_t features = operand->dimensions(ctx.attrs.feature_index);
  // For batch-norm-grad the last operand is grad_output, shaped like operand.
  const int64_t per_feature_end = opcode == Opcode::kBatchNormGrad ? count - 1 : count;
  for (int64_t i = 1; i < per_feature_end; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* s, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (s->element_type() != t || s->rank() != 1 || !SizesMatch(s->dimensions(0), features)) {
      return ctx.Error("operand %d must be %s[%d] (one value per feature), got %s", i,
                       TypeName(t), features, Str(*s));
    }
  }
  const Shape data = MakeArray(t, operand->dimensions(), DynamicFlags(*operand));
  if (opcode == Opcode::kBatchNormGrad) {
    XJIT_ASSIGN_OR_RETURN(const Shape* grad, ctx.ArrayOperand(count - 1, "grad_output"));
    if (!ShapesMatch(*grad, data)) {
      return ctx.Error("grad_output %s differs from operand %s", Str(*grad), Str(*operand));
    }
  }
  if (opcode == Opcode::kBatchNormInference) return data;
  const Shape per_feature = MakeArray(t, {features});
  return Shape::Tuple({data, per_feature, per_feature});
}

// ---------------------------------------------------------------------------
// Control flow and calls.

std::vector<const Shape*> OperandShapes(const Ctx& ctx) {
  std::vector<const Shape*> shapes;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    const Instruction* operand = ctx.instr.operand(i);
    shapes.push_back(operand == nullptr ? nullptr : &operand->shape());
  }
  return shapes;
}

absl::Status CheckAllOperands(const Ctx& ctx) {
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_RETURN_IF_ERROR(ctx.Operand(i).status());
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferWhile(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* init, ctx.Operand(0));
  XJIT_RETURN_IF_ERROR(ctx.ExpectCalledCount(2));
  XJIT_ASSIGN_OR_RETURN(const Computation* condition, ctx.Called(0, "condition"));
  XJIT_ASSIGN_OR_RETURN(const Computation* body, ctx.Called(1, "body"));
  XJIT_ASSIGN_OR_RETURN(Signature cond_sig, CheckParams(ctx, condition, "condition", {init}));
  if (!ShapesMatch(*cond_sig.result, Shape::Scalar(ElementType::kPred))) {
    return ctx.Error("condition computation %s must return pred[], returns %s",
                     condition->name(), Str(*cond_sig.result));
  }
  XJIT_ASSIGN_OR_RETURN(Signature body_sig, CheckParams(ctx, body, "body", {init}));
  if (!ShapesMatch(*body_sig.result, *init)) {
    return ctx.Error("body computation %s returns %s, but the loop state is %s", body->name(),
                     Str(*body_sig.result), Str(*init));
  }
  return WithDefaultLayout(*init);
}

absl::StatusOr<Shape> InferConditional(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* index, ctx.ScalarOperand(0, "branch index"));
  const int64_t branches = static_cast<int64_t>(ctx.instr.called_computations().size());
  if (index->element_type() == ElementType::kPred) {
    if (branches != 2) return ctx.Error("a pred index needs 2 branches, has %d", branches);
  } else if (index->element_type() == ElementType::kS32) {
    if (branches < 1) return ctx.Error("needs at least one branch computation");
  } else {
    return ctx.Error("branch index must be pred[] or s32[], got %s", Str(*index));
  }
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(branches + 1));
  const Shape* result = nullptr;
  for (int64_t b = 0; b < branches; ++b) {
    XJIT_ASSIGN_OR_RETURN(const Computation* branch, ctx.Called(b, "branch"));
    XJIT_ASSIGN_OR_RETURN(const Shape* arg, ctx.Operand(b + 1));
    XJIT_ASSIGN_OR_RETURN(Signature sig,
                          CheckParams(ctx, branch, absl::StrCat("branch ", b), {arg}));
    if (result == nullptr) {
      result = sig.result;
    } else if (!ShapesMatch(*sig.result, *result)) {
      return ctx.Error("branch %d computation %s returns %s, but branch 0 returns %s", b,
                       branch->name(), Str(*sig.result), Str(*result));
    }
  }
  return WithDefaultLayout(*result);
}

// call, fusion: the callee takes the operands and its root is the result.
absl::StatusOr<Shape> InferCall(const Ctx& ctx, absl::string_view role) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_RETURN_IF_ERROR(ctx.ExpectCalledCount(1));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, role));
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, role, OperandShapes(ctx)));
  return WithDefaultLayout(*sig.result);
}

absl::StatusOr<Shape> InferCustomCall(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  if (ctx.attrs.custom_call_target.empty()) return ctx.Error("custom_call_target is empty");
  if (ctx.attrs.has_operand_layout_constraints) {
    const auto& constraints = ctx.attrs.operand_layout_constraints;
    if (static_cast<int64_t>(constraints.size()) != ctx.operand_count()) {
      return ctx.Error("operand_layout_constraints has %d shapes for %d operands",
                       constraints.size(), ctx.operand_count());
    }
    for (int64_t i = 0; i < ctx.operand_count(); ++i) {
      if (!ShapesMatch(constraints[i], ctx.instr.operand(i)->shape())) {
        return ctx.Error("operand_layout_constraints shape %d %s differs from operand %s", i,
                         Str(constraints[i]), Str(ctx.instr.operand(i)->shape()));
      }
    }
  }
  for (const OutputOperandAlias& alias : ctx.attrs.output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= ctx.operand_count()) {
      return ctx.Error("output_to_operand_aliasing names operand %d, which does not exist",
                       alias.operand_number);
    }
  }
  for (size_t i = 0; i < ctx.instr.called_computations().size(); ++i) {
    XJIT_RETURN_IF_ERROR(ctx.Called(i, "called").status());
  }
  return ctx.GivenShape();
}

// ---------------------------------------------------------------------------
// Random numbers.

absl::StatusOr<Shape> InferRng(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ScalarOperand(0, "parameter a"));
  XJIT_ASSIGN_OR_RETURN(const Shape* b, ctx.ScalarOperand(1, "parameter b"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  const ElementType t = given.element_type();
  if (a->element_type() != t || b->element_type() != t) {
    return ctx.Error("parameters %s and %s must have the result element type %s", Str(*a),
                     Str(*b), TypeName(t));
  }
  if (ctx.attrs.distribution == RandomDistribution::kNormal) {
    if (!IsFloat(t)) return ctx.Error("rng_normal needs a float type, got %s", TypeName(t));
  } else if (!IsPred(t) && !IsInteger(t) && !IsFloat(t)) {
    return ctx.Error("rng_uniform needs a pred, integer or float type, got %s", TypeName(t));
  }
  return given;
}

absl::StatusOr<Shape> InferRngBitGenerator(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* state, ctx.ArrayOperand(0, "state"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 2 || !given.tuple_shapes(1).IsArray()) {
    return ctx.Error("result must be a (state, output array) tuple, got %s", Str(given));
  }
  const ElementType out = given.tuple_shapes(1).element_type();
  if (!IsInteger(out) && !IsFloat(out) && !IsPred(out)) {
    return ctx.Error("output element type %s cannot hold random bits", TypeName(out));
  }
  if (state->rank() != 1) return ctx.Error("state %s must have rank 1", Str(*state));
  auto want_state = [&](int64_t size) -> absl::Status {
    if (state->element_type() != ElementType::kU64 || state->dimensions(0) != size) {
      return ctx.Error("%s needs state u64[%d], got %s",
                       RandomAlgorithmName(ctx.attrs.rng_algorithm), size, Str(*state));
    }
    return absl::OkStatus();
  };
  if (ctx.attrs.rng_algorithm == RandomAlgorithm::kThreeFry) XJIT_RETURN_IF_ERROR(want_state(2));
  if (ctx.attrs.rng_algorithm == RandomAlgorithm::kPhilox) XJIT_RETURN_IF_ERROR(want_state(3));
  return Shape::Tuple({MakeArray(state->element_type(), state->dimensions()),
                       given.tuple_shapes(1)});
}

absl::StatusOr<Shape> InferRngGetAndUpdateState(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  return given;
}

// ---------------------------------------------------------------------------
// Host transfer and channels.

absl::StatusOr<Shape> InferInfeed(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(0));
  if (!token->IsToken()) return ctx.Error("operand %s is not a token", Str(*token));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 2 || !given.tuple_shapes(1).IsToken()) {
    return ctx.Error("result must be a (data, token) tuple, got %s", Str(given));
  }
  return given;
}

absl::StatusOr<Shape> InferOutfeed(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* data, ctx.Operand(0));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(1));
  if (!token->IsToken()) return ctx.Error("operand 1 %s is not a token", Str(*token));
  if (ctx.attrs.outfeed_shape.has_value() && !ShapesMatch(*ctx.attrs.outfeed_shape, *data)) {
    return ctx.Error("outfeed_shape %s differs from the data shape %s",
                     Str(*ctx.attrs.outfeed_shape), Str(*data));
  }
  return Shape::Token();
}

absl::StatusOr<Shape> InferSend(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* data, ctx.Operand(0));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(1));
  if (!token->IsToken()) return ctx.Error("operand 1 %s is not a token", Str(*token));
  return Shape::Tuple(
      {WithDefaultLayout(*data), Shape::Scalar(ElementType::kU32), Shape::Token()});
}

absl::StatusOr<Shape> InferRecv(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(0));
  if (!token->IsToken()) return ctx.Error("operand %s is not a token", Str(*token));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 3 ||
      !ShapesMatch(given.tuple_shapes(1), Shape::Scalar(ElementType::kU32)) ||
      !given.tuple_shapes(2).IsToken()) {
    return ctx.Error("result must be a (data, u32[], token) tuple, got %s", Str(given));
  }
  return given;
}

// send-done / recv-done take the context tuple of send / recv.
absl::StatusOr<Shape> InferSendRecvDone(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* context, ctx.Operand(0));
  if (!context->IsTuple() || context->tuple_size() != 3 || !context->tuple_shapes(2).IsToken()) {
    return ctx.Error("operand must be a (data, u32[], token) context, got %s", Str(*context));
  }
  if (ctx.instr.opcode() == Opcode::kSendDone) return Shape::Token();
  return Shape::Tuple({WithDefaultLayout(context->tuple_shapes(0)), Shape::Token()});
}

// ---------------------------------------------------------------------------
// Collectives.

// The size of each replica group when replica_groups are given and uniform;
// nullopt when the group spans devices the instruction does not name.
absl::StatusOr<std::optional<int64_t>> GroupSize(const Ctx& ctx) {
  const auto& groups = ctx.attrs.replica_groups;
  if (groups.empty()) return std::optional<int64_t>();
  const int64_t size = static_cast<int64_t>(groups[0].size());
  for (const auto& group : groups) {
    if (static_cast<int64_t>(group.size()) != size) {
      return ctx.Error("replica groups have different sizes");
    }
  }
  if (size == 0) return ctx.Error("replica groups are empty");
  return std::optional<int64_t>(size);
}

// Shapes of all operands with default layouts; a tuple if there are several.
absl::StatusOr<Shape> OperandsAsResult(const Ctx& ctx, bool force_tuple = false) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(i));
    shapes.push_back(WithDefaultLayout(*operand));
  }
  if (shapes.size() == 1 && !force_tuple) return shapes[0];
  return Shape::Tuple(std::move(shapes));
}

// A binary scalar reduction computation (T, T) -> T.
absl::Status CheckBinaryReducer(const Ctx& ctx) {
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  XJIT_ASSIGN_OR_RETURN(Signature sig, GetSignature(ctx, comp, "to_apply"));
  if (sig.params.size() != 2 || !sig.params[0]->IsScalar() || !sig.params[1]->IsScalar() ||
      !sig.result->IsScalar()) {
    return ctx.Error("to_apply computation %s must map two scalars to a scalar", comp->name());
  }
  return absl::OkStatus();
}

absl::StatusOr<Shape> InferAllReduce(const Ctx& ctx) {
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_RETURN_IF_ERROR(ctx.ArrayOperand(i, absl::StrCat("operand ", i)).status());
  }
  XJIT_RETURN_IF_ERROR(GroupSize(ctx).status());
  XJIT_RETURN_IF_ERROR(CheckBinaryReducer(ctx));
  return OperandsAsResult(ctx);
}

// all-gather multiplies, reduce-scatter divides the dimension by the group
// size. With no replica groups the group size comes from the result shape.
absl::StatusOr<Shape> InferGatherOrScatterCollective(const Ctx& ctx, bool gather) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(std::optional<int64_t> group, GroupSize(ctx));
  if (!gather) XJIT_RETURN_IF_ERROR(CheckBinaryReducer(ctx));
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  const int64_t dim = ctx.attrs.dimensions[0];
  const Shape& given = ctx.instr.shape();
  std::vector<Shape> results;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    XJIT_RETURN_IF_ERROR(ctx.CheckDimension(dim, operand->rank(), "dimension"));
    const int64_t size = operand->dimensions(dim);
    // The group size written nowhere: read it off the given result.
    std::optional<int64_t> factor = group;
    const Shape* given_i = given.IsTuple() ? (i < given.tuple_size() ? &given.tuple_shapes(i)
                                                                     : nullptr)
                                           : (ctx.operand_count() == 1 ? &given : nullptr);
    if (!factor.has_value() && given_i != nullptr && given_i->IsArray() &&
        given_i->rank() == operand->rank() && !IsUnbounded(size)) {
      const int64_t g = given_i->dimensions(dim);
      if (gather && size > 0 && g >= 0 && g % size == 0) factor = g / size;
      if (!gather && g > 0 && size % g == 0) factor = size / g;
      if (size == 0 && g == 0) factor = 1;
    }
    if (!factor.has_value() || *factor <= 0) {
      return ctx.Error("cannot determine the group size for operand %s", Str(*operand));
    }
    std::vector<int64_t> dims = Dims(*operand);
    if (IsUnbounded(size)) {
      // Stays unbounded.
    } else if (gather) {
      if (MulOverflows(size, *factor, &dims[dim])) return ctx.Error("gathered size overflows");
    } else {
      if (size % *factor != 0) {
        return ctx.Error("dimension %d of size %d is not divisible by the group size %d", dim,
                         size, *factor);
      }
      dims[dim] = size / *factor;
    }
    results.push_back(MakeArray(operand->element_type(), dims, DynamicFlags(*operand)));
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferAllToAll(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(std::optional<int64_t> group, GroupSize(ctx));
  if (ctx.attrs.dimensions.empty()) {
    // The tuple form: one array per participant, exchanged whole.
    for (int64_t i = 0; i < ctx.operand_count(); ++i) {
      XJIT_RETURN_IF_ERROR(ctx.ArrayOperand(i, absl::StrCat("operand ", i)).status());
    }
    return OperandsAsResult(ctx, /*force_tuple=*/true);
  }
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one split dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const int64_t dim = ctx.attrs.dimensions[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(dim, operand->rank(), "split dimension"));
  const int64_t size = operand->dimensions(dim);
  if (group.has_value() && !IsUnbounded(size) && size % *group != 0) {
    return ctx.Error("split dimension %d of size %d is not divisible by the group size %d", dim,
                     size, *group);
  }
  return WithDefaultLayout(*operand);
}

absl::StatusOr<Shape> InferCollectivePermute(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  for (const auto& [source, target] : ctx.attrs.source_target_pairs) {
    if (source < 0 || target < 0) {
      return ctx.Error("source_target_pairs has a negative id {%d,%d}", source, target);
    }
  }
  // The in-place form: (input, output, input start indices, output start
  // indices) writes into `output`.
  if (ctx.operand_count() == 4 && ctx.instr.operand(2)->shape().IsTuple()) {
    return WithDefaultLayout(ctx.instr.operand(1)->shape());
  }
  return OperandsAsResult(ctx);
}

absl::StatusOr<Shape> InferRaggedAllToAll(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(6));
  XJIT_ASSIGN_OR_RETURN(const Shape* input, ctx.ArrayOperand(0, "input"));
  XJIT_ASSIGN_OR_RETURN(const Shape* output, ctx.ArrayOperand(1, "output"));
  if (input->element_type() != output->element_type() || input->rank() != output->rank()) {
    return ctx.Error("input %s and output %s differ in element type or rank", Str(*input),
                     Str(*output));
  }
  for (int64_t i = 2; i < 6; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* s, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (!IsInteger(s->element_type())) {
      return ctx.Error("offset/size operand %d %s is not an integer array", i, Str(*s));
    }
  }
  return WithDefaultLayout(*output);
}

// ---------------------------------------------------------------------------
// Asynchronous pairs.

// The element `index` of the operand's tuple (copy-done, *-done).
absl::StatusOr<Shape> InferTupleElementOfOperand(const Ctx& ctx, int64_t index) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  if (!operand->IsTuple() || operand->tuple_size() <= index) {
    return ctx.Error("operand %s must be a tuple of at least %d elements", Str(*operand),
                     index + 1);
  }
  return WithDefaultLayout(operand->tuple_shapes(index));
}

absl::StatusOr<Shape> InferCopyStart(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  const Shape data = WithDefaultLayout(*operand);
  return Shape::Tuple({data, data, Shape::Scalar(ElementType::kU32)});
}

// The *-start forms whose context layout varies between XLA versions: the
// given tuple, checked to hold the operands and a result of the right kind.
absl::StatusOr<Shape> InferStartWithContext(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() < 2) {
    return ctx.Error("result must be a tuple of operands, results and context, got %s",
                     Str(given));
  }
  XJIT_ASSIGN_OR_RETURN(Shape operands, OperandsAsResult(ctx));
  if (!ShapesMatch(given.tuple_shapes(0), operands)) {
    return ctx.Error("result element 0 %s differs from the operands %s",
                     Str(given.tuple_shapes(0)), Str(operands));
  }
  return given;
}

absl::StatusOr<Shape> InferAsyncStart(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "async"));
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, "async", OperandShapes(ctx)));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() < 2) {
    return ctx.Error("result must be an ((operands), result, context...) tuple, got %s",
                     Str(given));
  }
  std::vector<Shape> operands;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    operands.push_back(WithDefaultLayout(ctx.instr.operand(i)->shape()));
  }
  if (!ShapesMatch(given.tuple_shapes(0), Shape::Tuple(operands))) {
    return ctx.Error("result element 0 %s differs from the operands %s",
                     Str(given.tuple_shapes(0)), Str(Shape::Tuple(operands)));
  }
  if (!ShapesMatch(given.tuple_shapes(1), *sig.result)) {
    return ctx.Error("result element 1 %s differs from the async computation's result %s",
                     Str(given.tuple_shapes(1)), Str(*sig.result));
  }
  return given;
}

}  // namespace

absl::StatusOr<Shape> InferShape(const Instruction& instruction) {
  Ctx ctx(instruction);
  const Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode)) return InferUnary(ctx);
  if (IsElementwiseBinary(opcode)) return InferBinary(ctx);
  switch (opcode) {
    case Opcode::kSelect: return InferSelect(ctx);
    case Opcode::kClamp: return InferClamp(ctx);
    case Opcode::kConvert: return InferConvert(ctx);
    case Opcode::kStochasticConvert: return InferStochasticConvert(ctx);
    case Opcode::kBitcastConvert: return InferBitcastConvert(ctx);
    case Opcode::kReducePrecision: return InferReducePrecision(ctx);
    case Opcode::kMap: return InferMap(ctx);
    case Opcode::kBroadcast: return InferBroadcast(ctx);
    case Opcode::kReshape: return InferReshape(ctx);
    case Opcode::kDynamicReshape: return InferDynamicReshape(ctx);
    case Opcode::kTranspose: return InferTranspose(ctx);
    case Opcode::kSlice: return InferSlice(ctx);
    case Opcode::kDynamicSlice: return InferDynamicSlice(ctx);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(ctx);
    case Opcode::kPad: return InferPad(ctx);
    case Opcode::kConcatenate: return InferConcatenate(ctx);
    case Opcode::kReverse: return InferReverse(ctx);
    case Opcode::kIota: return InferIota(ctx);
    case Opcode::kGetDimensionSize: return InferGetDimensionSize(ctx);
    case Opcode::kSetDimensionSize: return InferSetDimensionSize(ctx);
    case Opcode::kTuple: return InferTuple(ctx);
    case Opcode::kGetTupleElement: return InferGetTupleElement(ctx);
    case Opcode::kCopy:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAllReduceDone:
    case Opcode::kAsyncUpdate:
      return InferSameAsOperand(ctx);
    case Opcode::kAfterAll: return InferAfterAll(ctx);
    case Opcode::kAddDependency: return InferAddDependency(ctx);
    case Opcode::kBitcast: return InferBitcast(ctx);
    case Opcode::kDot: return InferDot(ctx);
    case Opcode::kScaledDot: return InferScaledDot(ctx);
    case Opcode::kRaggedDot: return InferRaggedDot(ctx);
    case Opcode::kConvolution: return InferConvolution(ctx);
    case Opcode::kReduce: return InferReduce(ctx);
    case Opcode::kReduceWindow: return InferReduceWindow(ctx);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(ctx);
    case Opcode::kGather: return InferGather(ctx);
    case Opcode::kScatter: return InferScatter(ctx);
    case Opcode::kSort: return InferSort(ctx);
    case Opcode::kTopK: return InferTopK(ctx);
    case Opcode::kFft: return InferFft(ctx);
    case Opcode::kCholesky: return InferCholesky(ctx);
    case Opcode::kTriangularSolve: return InferTriangularSolve(ctx);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNorm(ctx);
    case Opcode::kWhile: return InferWhile(ctx);
    case Opcode::kConditional: return InferConditional(ctx);
    case Opcode::kCall: return InferCall(ctx, "to_apply");
    case Opcode::kFusion: return InferCall(ctx, "fused");
    case Opcode::kCustomCall: return InferCustomCall(ctx);
    case Opcode::kRng: return InferRng(ctx);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(ctx);
    case Opcode::kRngGetAndUpdateState: return InferRngGetAndUpdateState(ctx);
    case Opcode::kInfeed: return InferInfeed(ctx);
    case Opcode::kOutfeed: return InferOutfeed(ctx);
    case Opcode::kSend: return InferSend(ctx);
    case Opcode::kRecv: return InferRecv(ctx);
    case Opcode::kSendDone:
    case Opcode::kRecvDone:
      return InferSendRecvDone(ctx);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return InferAllReduce(ctx);
    case Opcode::kAllGather: return InferGatherOrScatterCollective(ctx, /*gather=*/true);
    case Opcode::kReduceScatter: return InferGatherOrScatterCollective(ctx, /*gather=*/false);
    case Opcode::kAllToAll: return InferAllToAll(ctx);
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
      return InferCollectivePermute(ctx);
    case Opcode::kRaggedAllToAll: return InferRaggedAllToAll(ctx);
    case Opcode::kCopyStart: return InferCopyStart(ctx);
    case Opcode::kCopyDone: return InferTupleElementOfOperand(ctx, 0);
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
      return InferStartWithContext(ctx);
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncDone:
      return InferTupleElementOfOperand(ctx, 1);
    case Opcode::kAsyncStart: return InferAsyncStart(ctx);
    case Opcode::kScan: return InferScan(ctx);
    case Opcode::kShuffle: return InferShuffle(ctx);
    case Opcode::kCollectiveReduce:
      // Semantics not modelled: operands must be well formed; the given shape stands.
      XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
      return ctx.GivenShape();
    case Opcode::kParameter:
    case Opcode::kConstant:
      XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
      return ctx.GivenShape();
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
      return Shape::Scalar(ElementType::kU32);
    default:
      return ctx.Error("has no shape rule");
  }
}

}  // namespace xjit
