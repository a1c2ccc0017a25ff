// Evaluation of sort (variadic, any dimension) and topk.
//
// sort: every 1-D slice along `dimensions={d}` is sorted with the stable merge
// sort of interpreter/merge_sort.h, which the JIT's runtime shares (so is_stable=false
// results are one of the allowed orders). The comparator is called with 2N
// scalars: (operand0[i], operand0[j], operand1[i], operand1[j], ...) and
// returns PRED "i before j". The merge sort is ours rather than
// <algorithm>'s so that a comparator that is not a strict weak order (a user
// can write one) cannot make it misbehave.
//
// topk: along the last dimension, the k largest (or smallest) elements in
// XLA CPU's order: floats by their total order (-NaN < -inf < ... < -0 < +0 <
// ... < +inf < +NaN, so NaN is greater than everything for largest=true),
// integers by value; ties keep the lower index first. Indices are s32.
#include <algorithm>
#include <cstdint>
#include <numeric>
#include <vector>

#include "absl/status/status.h"
#include "ir/computation.h"
#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "interpreter/merge_sort.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

// A key whose unsigned order is the total order of a float's bit pattern.
uint64_t FloatTotalOrderKey(uint64_t bits, int bit_width) {
  const uint64_t sign = uint64_t{1} << (bit_width - 1);
  const uint64_t mask = bit_width == 64 ? ~uint64_t{0} : (uint64_t{1} << bit_width) - 1;
  bits &= mask;
  return (bits & sign) ? (~bits & mask) : (bits | sign);
}

// A key whose unsigned order is the element's value order (total order for
// floats).
uint64_t OrderKey(const Literal& literal, const Index& index) {
  ElementType type = literal.shape().element_type();
  uint64_t bits = literal.GetBits(index);
  if (IsFloat(type)) return FloatTotalOrderKey(bits, BitWidth(type));
  if (IsSignedInteger(type)) {
    return static_cast<uint64_t>(literal.GetInt(index)) ^ (uint64_t{1} << 63);
  }
  return bits;
}

}  // namespace

absl::StatusOr<Literal> EvalSort(const Instruction& instruction, Operands operands,
                                 const Context& context) {
  if (operands.empty()) return internal::OperandError(instruction, "needs operands");
  if (instruction.called_computations().empty()) {
    return internal::OperandError(instruction, "has no comparator");
  }
  const Computation& comparator = *instruction.to_apply();
  const int64_t n = static_cast<int64_t>(operands.size());
  const Shape& first = operands[0]->shape();
  for (const Literal* operand : operands) {
    if (!operand->shape().IsArray() || operand->shape().dimensions() != first.dimensions()) {
      return internal::OperandError(instruction, "operands must be arrays of the same dimensions");
    }
  }
  const int64_t rank = first.rank();
  int64_t dimension = instruction.attrs().dimensions.empty() ? rank - 1
                                                             : instruction.attrs().dimensions[0];
  if (rank == 0) dimension = 0;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) {
    return internal::OperandError(instruction, "sort dimension out of range");
  }
  const Shape& shape = instruction.shape();
  if ((n > 1 || shape.IsTuple()) && !(shape.IsTuple() && shape.tuple_size() == n)) {
    return internal::OperandError(instruction, "result must be a tuple of N arrays");
  }
  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& element_shape = shape.IsTuple() ? shape.tuple_shapes(i) : shape;
    if (!element_shape.IsArray() || element_shape.rank() != rank ||
        element_shape.element_type() != operands[i]->shape().element_type()) {
      return internal::OperandError(instruction, "result shape does not match the operands");
    }
    results.emplace_back(internal::WithDims(element_shape, first.dimensions()));
  }

  // Iterate over every slice: the index with `dimension` held at 0.
  std::vector<int64_t> outer_dims(first.dimensions().begin(), first.dimensions().end());
  const int64_t length = rank == 0 ? 1 : outer_dims[dimension];
  if (rank > 0) outer_dims[dimension] = 1;
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(outer_dims, [&](const Index& base) {
    // scalars[i][p]: operand i at position p of this slice.
    std::vector<std::vector<Literal>> scalars(n);
    Index index = base;
    for (int64_t p = 0; p < length; ++p) {
      if (rank > 0) index[dimension] = p;
      for (int64_t i = 0; i < n; ++i) scalars[i].push_back(internal::ScalarFrom(*operands[i], index));
    }
    std::vector<int64_t> order(length);
    std::iota(order.begin(), order.end(), 0);
    std::vector<const Literal*> args(2 * n);
    auto less = [&](int64_t a, int64_t b) -> absl::StatusOr<bool> {
      for (int64_t i = 0; i < n; ++i) {
        args[2 * i] = &scalars[i][a];
        args[2 * i + 1] = &scalars[i][b];
      }
      XJIT_ASSIGN_OR_RETURN(std::vector<Literal> r,
                            internal::CallScalars(context, comparator, args, 1));
      return internal::ScalarIsTrue(r[0]);
    };
    std::vector<int64_t> buffer(length);
    XJIT_RETURN_IF_ERROR(MergeSort(order.data(), buffer.data(), length, less));
    for (int64_t p = 0; p < length; ++p) {
      if (rank > 0) index[dimension] = p;
      for (int64_t i = 0; i < n; ++i) {
        internal::CopyElement(scalars[i][order[p]], Index(), results[i], index);
      }
    }
    return absl::OkStatus();
  }));
  if (shape.IsTuple()) return Literal::MakeTuple(std::move(results));
  return std::move(results[0]);
}

absl::StatusOr<Literal> EvalTopK(const Instruction& instruction, Operands operands,
                                 const Context& context) {
  if (operands.size() != 1) return internal::OperandError(instruction, "needs 1 operand");
  return TopK(instruction, *operands[0], instruction.attrs().k, instruction.attrs().largest);
}

absl::StatusOr<Literal> TopK(const Instruction& instruction, const Literal& operand, int64_t k,
                             bool largest) {
  const Shape& shape = instruction.shape();
  if (!operand.shape().IsArray() || operand.shape().rank() < 1) {
    return internal::OperandError(instruction, "operand must be an array of rank >= 1");
  }
  if (!shape.IsTuple() || shape.tuple_size() != 2) {
    return internal::OperandError(instruction, "result must be a (values, indices) tuple");
  }
  const int64_t rank = operand.shape().rank();
  const int64_t length = operand.shape().dimensions(rank - 1);
  if (k < 0 || k > length) return internal::OperandError(instruction, "k out of range");
  std::vector<int64_t> out_dims(operand.shape().dimensions().begin(),
                                operand.shape().dimensions().end());
  out_dims[rank - 1] = k;
  Literal values(internal::WithDims(shape.tuple_shapes(0), out_dims));
  Literal indices(internal::WithDims(shape.tuple_shapes(1), out_dims));
  if (values.shape().element_type() != operand.shape().element_type() ||
      values.shape().rank() != rank || indices.shape().rank() != rank) {
    return internal::OperandError(instruction, "result shapes do not match the operand");
  }
  std::vector<int64_t> outer_dims = out_dims;
  outer_dims[rank - 1] = 1;
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(outer_dims, [&](const Index& base) {
    Index index = base;
    std::vector<uint64_t> keys(length);
    for (int64_t p = 0; p < length; ++p) {
      index[rank - 1] = p;
      keys[p] = OrderKey(operand, index);
    }
    std::vector<int64_t> order(length);
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
      return largest ? keys[a] > keys[b] : keys[a] < keys[b];
    });
    Index out = base;
    for (int64_t j = 0; j < k; ++j) {
      index[rank - 1] = order[j];
      out[rank - 1] = j;
      internal::CopyElement(operand, index, values, out);
      internal::WriteIntBits(indices, out, static_cast<uint64_t>(order[j]));
    }
    return absl::OkStatus();
  }));
  std::vector<Literal> elements;
  elements.push_back(std::move(values));
  elements.push_back(std::move(indices));
  return Literal::MakeTuple(std::move(elements));
}

}  // namespace xjit::eval
