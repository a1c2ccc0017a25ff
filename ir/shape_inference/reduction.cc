// Shape rules of the reductions over an operand's elements: reduce,
// reduce-window, select-and-scatter and scan. Their called computations are
// checked against the operand and init element types.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

namespace {

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

// One array per init type with the given dims; a tuple when there are several.
Shape PerInitResult(const std::vector<const Shape*>& inits, const std::vector<int64_t>& dims,
                    const std::vector<bool>& dynamic) {
  std::vector<Shape> results;
  for (const Shape* init : inits) results.push_back(MakeArray(init->element_type(), dims, dynamic));
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

}  // namespace

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

namespace {

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

}  // namespace

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

// scan(inputs..., inits...), dimensions={d}, num_carries=c: (outputs...,
// carries...) with each carry of its init's shape and every input and output
// holding dimension d of one size. The outputs' shapes are the given ones.

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

}  // namespace xjit::shape_inference_internal
