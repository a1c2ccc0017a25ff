// Evaluation of gather and scatter (variadic), with every dimension number:
// index_vector_dim (== rank of the indices means a trailing size-1 index
// vector), offset/collapsed/start_index_map for gather, update_window /
// inserted_window / scatter_dims_to_operand_dims for scatter, and the
// operand/indices batching dimensions of both.
//
// gather: each start index is clamped so that the whole slice lies inside the
// operand (XLA's dynamic-slice rule); batching dimensions take the index of
// the matching batch dimension and are not clamped.
//
// scatter: the update windows are applied in row-major order of the scatter
// (batch) index, each window's elements in row-major order, as
// update_computation(current operand values..., update values...). A window
// whose start is not in [0, operand_dim - window_size] in every dimension is
// skipped entirely (XLA's ScatterExpander does the same; the seeds leave
// out-of-bounds updates implementation-defined).
#include <algorithm>
#include <vector>

#include "ir/computation.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

// Reads the index vector for batch index `batch` (the indices' dimensions
// other than index_vector_dim, in order) into `out` (size `count`).
void ReadIndexVector(const Literal& indices, int64_t index_vector_dim, const Index& batch,
                     int64_t count, std::vector<int64_t>& out) {
  const int64_t rank = indices.shape().rank();
  Index full(rank, 0);
  int64_t b = 0;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == index_vector_dim) continue;
    full[d] = batch[b++];
  }
  out.assign(count, 0);
  for (int64_t i = 0; i < count; ++i) {
    if (index_vector_dim < rank) full[index_vector_dim] = i;
    out[i] = internal::ReadIndexValue(indices, full);
  }
}

// Position in the batch index of indices dimension `d` (index_vector_dim
// removed).
int64_t BatchPosition(int64_t d, int64_t index_vector_dim) {
  return d < index_vector_dim ? d : d - 1;
}

absl::Status CheckDimList(const Instruction& instruction, const std::vector<int64_t>& dims,
                          int64_t rank) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) return internal::OperandError(instruction, "dimension out of range");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalGather(const Instruction& instruction, Operands operands,
                                   const Context& context) {
  if (operands.size() != 2) return internal::OperandError(instruction, "needs 2 operands");
  const Literal& operand = *operands[0];
  const Literal& indices = *operands[1];
  const GatherDimensionNumbers& dn = instruction.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = instruction.attrs().slice_sizes;
  const int64_t operand_rank = operand.shape().rank();
  const int64_t indices_rank = indices.shape().rank();
  const Shape& shape = instruction.shape();
  if (!shape.IsArray()) return internal::OperandError(instruction, "result must be an array");
  const int64_t out_rank = shape.rank();
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank) {
    return internal::OperandError(instruction, "slice_sizes must have one entry per dimension");
  }
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank) {
    return internal::OperandError(instruction, "index_vector_dim out of range");
  }
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.offset_dims, out_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.collapsed_slice_dims, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.start_index_map, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.operand_batching_dims, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.start_indices_batching_dims, indices_rank));
  const int64_t vector_size =
      dn.index_vector_dim < indices_rank ? indices.shape().dimensions(dn.index_vector_dim) : 1;
  if (static_cast<int64_t>(dn.start_index_map.size()) != vector_size ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return internal::OperandError(instruction, "start_index_map / batching dims mismatch");
  }
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (slice_sizes[d] < 0 || slice_sizes[d] > operand.shape().dimensions(d)) {
      return internal::OperandError(instruction, "slice size larger than the operand");
    }
  }

  // Operand dimensions that offset dims map to, in increasing order.
  std::vector<int64_t> offset_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.collapsed_slice_dims, d) && !Contains(dn.operand_batching_dims, d)) {
      offset_operand_dims.push_back(d);
    }
  }
  if (offset_operand_dims.size() != dn.offset_dims.size()) {
    return internal::OperandError(instruction, "offset_dims do not match the slice");
  }
  std::vector<int64_t> batch_dims;
  for (int64_t d = 0; d < out_rank; ++d) {
    if (!Contains(dn.offset_dims, d)) batch_dims.push_back(d);
  }
  if (static_cast<int64_t>(batch_dims.size()) != indices_rank - (dn.index_vector_dim < indices_rank ? 1 : 0)) {
    return internal::OperandError(instruction, "result rank does not match the indices");
  }

  // Result dimensions at run time: batch dims from the indices, offset dims
  // from the slice sizes.
  std::vector<int64_t> out_dims(out_rank);
  {
    int64_t b = 0;
    for (int64_t d = 0; d < indices_rank; ++d) {
      if (d == dn.index_vector_dim) continue;
      out_dims[batch_dims[b++]] = indices.shape().dimensions(d);
    }
    for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
      out_dims[dn.offset_dims[k]] = slice_sizes[offset_operand_dims[k]];
    }
  }
  Literal result(internal::WithDims(shape, out_dims));
  if (result.shape().element_type() != operand.shape().element_type()) {
    return internal::OperandError(instruction, "result element type differs from the operand");
  }

  Index batch(batch_dims.size(), 0);
  Index operand_index(operand_rank, 0);
  std::vector<int64_t> start;
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(out_dims, [&](const Index& out) {
    for (size_t b = 0; b < batch_dims.size(); ++b) batch[b] = out[batch_dims[b]];
    ReadIndexVector(indices, dn.index_vector_dim, batch, vector_size, start);
    std::fill(operand_index.begin(), operand_index.end(), 0);
    for (int64_t k = 0; k < vector_size; ++k) {
      int64_t d = dn.start_index_map[k];
      int64_t max_start = operand.shape().dimensions(d) - slice_sizes[d];
      operand_index[d] += std::clamp<int64_t>(start[k], 0, max_start);
    }
    for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
      operand_index[dn.operand_batching_dims[i]] +=
          batch[BatchPosition(dn.start_indices_batching_dims[i], dn.index_vector_dim)];
    }
    for (size_t k = 0; k < dn.offset_dims.size(); ++k) {
      operand_index[offset_operand_dims[k]] += out[dn.offset_dims[k]];
    }
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (operand_index[d] < 0 || operand_index[d] >= operand.shape().dimensions(d)) {
        return internal::OperandError(instruction, "index out of range");
      }
    }
    internal::CopyElement(operand, operand_index, result, out);
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<Literal> EvalScatter(const Instruction& instruction, Operands operands,
                                    const Context& context) {
  if (operands.size() < 3 || operands.size() % 2 != 1) {
    return internal::OperandError(instruction, "needs N operands, indices and N updates");
  }
  if (instruction.called_computations().empty()) {
    return internal::OperandError(instruction, "has no update computation");
  }
  const Computation& to_apply = *instruction.to_apply();
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  const Literal& indices = *operands[n];
  const ScatterDimensionNumbers& dn = instruction.attrs().scatter_dimension_numbers;
  const Shape& operand_shape = operands[0]->shape();
  const Shape& update_shape = operands[n + 1]->shape();
  const int64_t operand_rank = operand_shape.rank();
  const int64_t indices_rank = indices.shape().rank();
  const int64_t update_rank = update_shape.rank();
  for (int64_t i = 0; i < n; ++i) {
    if (operands[i]->shape().dimensions() != operand_shape.dimensions() ||
        operands[n + 1 + i]->shape().dimensions() != update_shape.dimensions()) {
      return internal::OperandError(instruction, "operands (updates) must have equal dimensions");
    }
  }
  if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank) {
    return internal::OperandError(instruction, "index_vector_dim out of range");
  }
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.update_window_dims, update_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.inserted_window_dims, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.scatter_dims_to_operand_dims, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.input_batching_dims, operand_rank));
  XJIT_RETURN_IF_ERROR(CheckDimList(instruction, dn.scatter_indices_batching_dims, indices_rank));
  const int64_t vector_size =
      dn.index_vector_dim < indices_rank ? indices.shape().dimensions(dn.index_vector_dim) : 1;
  if (static_cast<int64_t>(dn.scatter_dims_to_operand_dims.size()) != vector_size ||
      dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
    return internal::OperandError(instruction, "scatter_dims_to_operand_dims / batching mismatch");
  }
  std::vector<int64_t> window_operand_dims;
  for (int64_t d = 0; d < operand_rank; ++d) {
    if (!Contains(dn.inserted_window_dims, d) && !Contains(dn.input_batching_dims, d)) {
      window_operand_dims.push_back(d);
    }
  }
  if (window_operand_dims.size() != dn.update_window_dims.size()) {
    return internal::OperandError(instruction, "update_window_dims do not match the operand");
  }
  std::vector<int64_t> scatter_dims;  // update dims that index the scatter indices
  for (int64_t d = 0; d < update_rank; ++d) {
    if (!Contains(dn.update_window_dims, d)) scatter_dims.push_back(d);
  }
  if (static_cast<int64_t>(scatter_dims.size()) != indices_rank - (dn.index_vector_dim < indices_rank ? 1 : 0)) {
    return internal::OperandError(instruction, "updates rank does not match the indices");
  }
  // Window sizes per operand dimension: update window bounds, 1 elsewhere.
  std::vector<int64_t> window_size(operand_rank, 1);
  std::vector<int64_t> window_dims_sizes;
  for (size_t k = 0; k < dn.update_window_dims.size(); ++k) {
    int64_t size = update_shape.dimensions(dn.update_window_dims[k]);
    window_size[window_operand_dims[k]] = size;
    window_dims_sizes.push_back(size);
  }
  std::vector<int64_t> scatter_sizes;
  for (int64_t d : scatter_dims) scatter_sizes.push_back(update_shape.dimensions(d));

  const Shape& shape = instruction.shape();
  if ((n > 1 || shape.IsTuple()) && !(shape.IsTuple() && shape.tuple_size() == n)) {
    return internal::OperandError(instruction, "result must be a tuple of N arrays");
  }
  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& element_shape = shape.IsTuple() ? shape.tuple_shapes(i) : shape;
    if (!element_shape.IsArray() || element_shape.rank() != operand_rank ||
        element_shape.element_type() != operands[i]->shape().element_type()) {
      return internal::OperandError(instruction, "result shape does not match the operands");
    }
    results.push_back(operands[i]->Relayout(internal::WithDims(element_shape,
                                                               operand_shape.dimensions())));
  }

  Index update_index(update_rank, 0);
  Index operand_index(operand_rank, 0);
  std::vector<int64_t> start;
  std::vector<int64_t> full_start(operand_rank);
  std::vector<Literal> current(n);
  std::vector<Literal> updates(n);
  std::vector<const Literal*> args(2 * n);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(scatter_sizes, [&](const Index& batch) {
    ReadIndexVector(indices, dn.index_vector_dim, batch, vector_size, start);
    std::fill(full_start.begin(), full_start.end(), 0);
    for (int64_t k = 0; k < vector_size; ++k) full_start[dn.scatter_dims_to_operand_dims[k]] += start[k];
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      full_start[dn.input_batching_dims[i]] +=
          batch[BatchPosition(dn.scatter_indices_batching_dims[i], dn.index_vector_dim)];
    }
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (full_start[d] < 0 || full_start[d] > operand_shape.dimensions(d) - window_size[d]) {
        return absl::OkStatus();  // Out of bounds: the whole window is skipped.
      }
    }
    for (size_t b = 0; b < scatter_dims.size(); ++b) update_index[scatter_dims[b]] = batch[b];
    return internal::ForEachIndex(window_dims_sizes, [&](const Index& w) {
      for (int64_t d = 0; d < operand_rank; ++d) operand_index[d] = full_start[d];
      for (size_t k = 0; k < w.size(); ++k) {
        update_index[dn.update_window_dims[k]] = w[k];
        operand_index[window_operand_dims[k]] += w[k];
      }
      for (int64_t i = 0; i < n; ++i) {
        current[i] = internal::ScalarFrom(results[i], operand_index);
        updates[i] = internal::ScalarFrom(*operands[n + 1 + i], update_index);
        args[i] = &current[i];
        args[n + i] = &updates[i];
      }
      XJIT_ASSIGN_OR_RETURN(std::vector<Literal> combined,
                            internal::CallScalars(context, to_apply, args, n));
      for (int64_t i = 0; i < n; ++i) {
        if (combined[i].shape().element_type() != results[i].shape().element_type()) {
          return internal::OperandError(instruction, "update computation returned the wrong type");
        }
        internal::CopyElement(combined[i], Index(combined[i].shape().rank(), 0), results[i],
                              operand_index);
      }
      return absl::OkStatus();
    });
  }));
  if (shape.IsTuple()) return Literal::MakeTuple(std::move(results));
  return std::move(results[0]);
}

}  // namespace xjit::eval
