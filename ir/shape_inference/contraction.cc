// Shape rules of the contractions: dot, scaled-dot, ragged-dot and
// convolution. The result element type is the instruction's preferred one
// when given; dimension numbers are checked before any size is read.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

namespace {

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

}  // namespace

absl::StatusOr<Shape> InferDot(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* lhs, ctx.ArrayOperand(0, "lhs"));
  XJIT_ASSIGN_OR_RETURN(const Shape* rhs, ctx.ArrayOperand(1, "rhs"));
  return DotShape(ctx, *lhs, *rhs, ctx.attrs.dot_dimension_numbers);
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

}  // namespace xjit::shape_inference_internal
