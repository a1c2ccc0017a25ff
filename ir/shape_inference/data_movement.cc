// Shape rules of the operations that move or reinterpret elements without
// arithmetic: broadcast, reshape, transpose, slicing, pad, concatenate,
// reverse, iota, dimension-size queries and shuffle, and the tuple, token and
// pass-through operations (tuple, get-tuple-element, copy, after-all,
// add-dependency, bitcast). Gather and scatter are in gather_scatter.cc.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

namespace {

// The instruction's given result (broadcast, reshape, dynamic-reshape): an
// array of the operand's element type.
absl::StatusOr<Shape> GivenArrayOfOperandType(const Ctx& ctx, const Shape& operand) {
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  if (given.element_type() != operand.element_type()) {
    return ctx.Error("result element type %s differs from operand element type %s",
                     TypeName(given.element_type()), TypeName(operand.element_type()));
  }
  return given;
}

}  // namespace

absl::StatusOr<Shape> InferBroadcast(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  XJIT_ASSIGN_OR_RETURN(Shape given, GivenArrayOfOperandType(ctx, *operand));
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
  XJIT_ASSIGN_OR_RETURN(Shape given, GivenArrayOfOperandType(ctx, *operand));
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
  XJIT_ASSIGN_OR_RETURN(Shape given, GivenArrayOfOperandType(ctx, *operand));
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

namespace {

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

}  // namespace

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

}  // namespace xjit::shape_inference_internal
