// Definitions of the helpers that several shape-inference rule families share
// (see infer_util.h for each one's contract). Messages are part of the
// verifier's and the tests' contract: keep their wording.
#include "ir/shape_inference/infer_util.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/computation.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }
std::string TypeName(ElementType type) { return std::string(ElementTypeName(type)); }
std::string DimsStr(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

bool IsUnbounded(int64_t size) { return size == kUnbounded; }

bool SizesMatch(int64_t a, int64_t b) { return a == b || IsUnbounded(a) || IsUnbounded(b); }

int64_t MergeSize(int64_t a, int64_t b) { return IsUnbounded(a) ? b : a; }

bool AddOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_add_overflow(a, b, out); }
bool MulOverflows(int64_t a, int64_t b, int64_t* out) { return __builtin_mul_overflow(a, b, out); }

bool SameDimensions(const Shape& a, const Shape& b) {
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    if (!SizesMatch(a.dimensions(i), b.dimensions(i))) return false;
  }
  return true;
}

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

Shape MakeArray(ElementType type, absl::Span<const int64_t> dims,
                const std::vector<bool>& dynamic) {
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

absl::Status CheckWellFormed(const Shape& shape, int depth) {
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

std::vector<ElementType> ElementTypes(const std::vector<const Shape*>& shapes) {
  std::vector<ElementType> types;
  for (const Shape* s : shapes) types.push_back(s->element_type());
  return types;
}

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

absl::StatusOr<Shape> OperandsAsResult(const Ctx& ctx, bool force_tuple) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  std::vector<Shape> shapes;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(i));
    shapes.push_back(WithDefaultLayout(*operand));
  }
  if (shapes.size() == 1 && !force_tuple) return shapes[0];
  return Shape::Tuple(std::move(shapes));
}

}  // namespace xjit::shape_inference_internal
