// Evaluation of reduce (variadic): for every result index, the N accumulators
// start at the N init values and to_apply is called once per reduced element
// as to_apply(acc_0..acc_{N-1}, value_0..value_{N-1}), the reduced elements
// visited in row-major order over the reduced dimensions (in increasing
// dimension number). XLA leaves the order unspecified; this one is the
// sequential order of the seeds' pseudo-code. Run-time (dynamic) sizes are the
// operand literals' dimensions.
#include <algorithm>
#include <vector>

#include "ir/computation.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

absl::StatusOr<Literal> EvalReduce(const Instruction& instruction, Operands operands,
                                   const Context& context) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return internal::OperandError(instruction, "needs N inputs and N init values");
  }
  if (instruction.called_computations().empty()) {
    return internal::OperandError(instruction, "has no to_apply computation");
  }
  const Computation& to_apply = *instruction.to_apply();
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  const Shape& input_shape = operands[0]->shape();
  for (int64_t i = 0; i < n; ++i) {
    if (!operands[i]->shape().IsArray() || operands[i]->shape().dimensions() != input_shape.dimensions()) {
      return internal::OperandError(instruction, "inputs must be arrays of the same dimensions");
    }
    if (!operands[n + i]->shape().IsArray() || operands[n + i]->element_count() != 1) {
      return internal::OperandError(instruction, "init values must be scalars");
    }
  }
  const int64_t rank = input_shape.rank();
  std::vector<bool> reduced(rank, false);
  for (int64_t d : instruction.attrs().dimensions) {
    if (d < 0 || d >= rank) return internal::OperandError(instruction, "dimension out of range");
    reduced[d] = true;
  }
  std::vector<int64_t> kept_dims;
  std::vector<int64_t> kept_sizes;
  std::vector<int64_t> reduced_dims;
  std::vector<int64_t> reduced_sizes;
  for (int64_t d = 0; d < rank; ++d) {
    if (reduced[d]) {
      reduced_dims.push_back(d);
      reduced_sizes.push_back(input_shape.dimensions(d));
    } else {
      kept_dims.push_back(d);
      kept_sizes.push_back(input_shape.dimensions(d));
    }
  }

  const Shape& shape = instruction.shape();
  if ((n > 1 || shape.IsTuple()) && !(shape.IsTuple() && shape.tuple_size() == n)) {
    return internal::OperandError(instruction, "result must be a tuple of N arrays");
  }
  std::vector<Literal> results;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& element_shape = shape.IsTuple() ? shape.tuple_shapes(i) : shape;
    if (!element_shape.IsArray() || element_shape.rank() != static_cast<int64_t>(kept_dims.size())) {
      return internal::OperandError(instruction, "result shape does not match the reduction");
    }
    results.emplace_back(internal::WithDims(element_shape, kept_sizes));
  }

  const Index scalar_index;
  Index input_index(rank, 0);
  std::vector<Literal> values(n);
  std::vector<const Literal*> args(2 * n);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(kept_sizes, [&](const Index& out) {
    for (size_t k = 0; k < kept_dims.size(); ++k) input_index[kept_dims[k]] = out[k];
    std::vector<Literal> acc;
    for (int64_t i = 0; i < n; ++i) {
      acc.push_back(internal::ScalarFrom(*operands[n + i], Index(operands[n + i]->shape().rank(), 0)));
    }
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(reduced_sizes, [&](const Index& r) {
      for (size_t k = 0; k < reduced_dims.size(); ++k) input_index[reduced_dims[k]] = r[k];
      for (int64_t i = 0; i < n; ++i) {
        values[i] = internal::ScalarFrom(*operands[i], input_index);
        args[i] = &acc[i];
        args[n + i] = &values[i];
      }
      XJIT_ASSIGN_OR_RETURN(acc, internal::CallScalars(context, to_apply, args, n));
      return absl::OkStatus();
    }));
    for (int64_t i = 0; i < n; ++i) {
      if (acc[i].shape().element_type() != results[i].shape().element_type()) {
        return internal::OperandError(instruction, "to_apply returned the wrong element type");
      }
      internal::CopyElement(acc[i], Index(acc[i].shape().rank(), 0), results[i], out);
    }
    return absl::OkStatus();
  }));
  if (shape.IsTuple()) return Literal::MakeTuple(std::move(results));
  return std::move(results[0]);
}

}  // namespace xjit::eval
