// Shape rules of gather and scatter. Both index an operand through an
// indices array whose index vector dimension (index_vector_dim, possibly one
// past the last) holds one start index per entry of the index map. Their
// dimension numbers must be distinct and in range (some sorted), batching
// dimensions disjoint from the removed and mapped ones; every attribute index
// is range-checked before it indexes a shape. Scatter's combiner is checked
// like a reducer.
#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "ir/computation.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

namespace {

// A dimension list that must be sorted and distinct within [0, rank).
absl::Status CheckSortedDims(const Ctx& ctx, const std::vector<int64_t>& dims, int64_t rank,
                             absl::string_view what) {
  return ctx.CheckDimensionList(dims, rank, what, /*sorted=*/true);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// What gather's and scatter's dimension numbers are called in messages.
struct IndexingNames {
  absl::string_view index_map;         // start_index_map / scatter_dims_to_operand_dims
  absl::string_view removed;           // "collapsed" / "inserted" (operand dimensions)
  absl::string_view operand_batching;  // "operand" / "input"
  absl::string_view indices_batching;  // start_indices_batching_dims / scatter_indices_...
};

// The indices' dimensions with the index vector dimension made explicit,
// after checking index_vector_dim and that the index vector has one entry
// per element of the index map.
absl::StatusOr<std::vector<int64_t>> ExpandedIndexDims(const Ctx& ctx, const Shape& indices,
                                                       int64_t index_vector_dim,
                                                       const std::vector<int64_t>& index_map,
                                                       const IndexingNames& names) {
  if (index_vector_dim < 0 || index_vector_dim > indices.rank()) {
    return ctx.Error("index_vector_dim %d is out of range [0, %d]", index_vector_dim,
                     indices.rank());
  }
  std::vector<int64_t> expanded = Dims(indices);
  if (index_vector_dim == indices.rank()) expanded.push_back(1);
  const int64_t index_vector_size = expanded[index_vector_dim];
  if (!SizesMatch(index_vector_size, static_cast<int64_t>(index_map.size()))) {
    return ctx.Error("index vector size %d differs from %s size %d", index_vector_size,
                     names.index_map, index_map.size());
  }
  return expanded;
}

// Batching dimensions are neither removed (collapsed or inserted) nor in the
// index map, and the index vector dimension is no indices batching dimension.
absl::Status CheckBatchingExclusions(const Ctx& ctx, const std::vector<int64_t>& removed,
                                     const std::vector<int64_t>& index_map,
                                     const std::vector<int64_t>& operand_batching,
                                     const std::vector<int64_t>& indices_batching,
                                     int64_t index_vector_dim, const IndexingNames& names) {
  for (int64_t d : removed) {
    if (Contains(operand_batching, d)) {
      return ctx.Error("dimension %d is both %s and a batching dimension", d, names.removed);
    }
  }
  for (int64_t d : index_map) {
    if (Contains(operand_batching, d)) {
      return ctx.Error("%s entry %d is an %s batching dimension", names.index_map, d,
                       names.operand_batching);
    }
  }
  for (int64_t d : indices_batching) {
    if (d == index_vector_dim) {
      return ctx.Error("%s contains index_vector_dim %d", names.indices_batching, d);
    }
  }
  return absl::OkStatus();
}

// Each operand batching dimension has the size of its indices batching dimension.
absl::Status CheckBatchingSizes(const Ctx& ctx, const Shape& operand, const Shape& indices,
                                const std::vector<int64_t>& operand_batching,
                                const std::vector<int64_t>& indices_batching) {
  for (size_t i = 0; i < operand_batching.size(); ++i) {
    const int64_t o = operand.dimensions(operand_batching[i]);
    const int64_t x = indices.dimensions(indices_batching[i]);
    if (!SizesMatch(o, x)) {
      return ctx.Error("operand batching dimension %d has size %d but indices dimension %d has %d",
                       operand_batching[i], o, indices_batching[i], x);
    }
  }
  return absl::OkStatus();
}

}  // namespace

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
  const IndexingNames names = {"start_index_map", "collapsed", "operand",
                               "start_indices_batching_dims"};
  XJIT_ASSIGN_OR_RETURN(
      std::vector<int64_t> expanded,
      ExpandedIndexDims(ctx, *indices, g.index_vector_dim, g.start_index_map, names));
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
  XJIT_RETURN_IF_ERROR(CheckBatchingExclusions(ctx, g.collapsed_slice_dims, g.start_index_map,
                                               g.operand_batching_dims,
                                               g.start_indices_batching_dims, g.index_vector_dim,
                                               names));
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
  XJIT_RETURN_IF_ERROR(CheckBatchingSizes(ctx, *operand, *indices, g.operand_batching_dims,
                                          g.start_indices_batching_dims));
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
  const IndexingNames names = {"scatter_dims_to_operand_dims", "inserted", "input",
                               "scatter_indices_batching_dims"};
  XJIT_ASSIGN_OR_RETURN(
      std::vector<int64_t> expanded,
      ExpandedIndexDims(ctx, *indices, s.index_vector_dim, s.scatter_dims_to_operand_dims, names));
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
  XJIT_RETURN_IF_ERROR(CheckBatchingExclusions(ctx, s.inserted_window_dims,
                                               s.scatter_dims_to_operand_dims,
                                               s.input_batching_dims,
                                               s.scatter_indices_batching_dims, s.index_vector_dim,
                                               names));
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
  XJIT_RETURN_IF_ERROR(CheckBatchingSizes(ctx, operand, *indices, s.input_batching_dims,
                                          s.scatter_indices_batching_dims));
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

}  // namespace xjit::shape_inference_internal
