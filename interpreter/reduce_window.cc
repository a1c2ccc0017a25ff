// Evaluation of reduce-window (variadic) and select-and-scatter.
//
// Window geometry (both ops): along each dimension the base is dilated
// (base_dilation - 1 holes between elements) and padded (padding_low /
// padding_high, possibly negative); window position o covers padded
// coordinates o * stride + k * window_dilation - padding_low, k in [0, size),
// the window reversed when window_reversal is set.
//
// reduce-window: as the seeds describe (and the StableHLO spec defines),
// padding and dilation holes hold the init value: every window coordinate
// contributes one to_apply call, to_apply(acc..., value...), in row-major
// order over the window, starting from the init values. With an init value
// that is the identity of to_apply (the only meaningful case) this equals
// skipping them, which is what XLA's implementations do.
//
// select-and-scatter: for each source element (row-major order) the window's
// in-bounds operand elements are visited in row-major order; the first is
// selected, and each later one replaces the selection when
// select(selected, candidate) is false. Padding is never selected. The result
// starts as init_value everywhere and the selected element becomes
// scatter(result[selected], source[o]).
#include <optional>
#include <vector>

#include "ir/computation.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

// Per dimension: the dilated base size and the number of window positions.
struct Geometry {
  std::vector<int64_t> dilated_base;
  std::vector<int64_t> output_sizes;
  std::vector<int64_t> window_sizes;
};

absl::StatusOr<Geometry> ComputeGeometry(const Instruction& instruction,
                                         absl::Span<const int64_t> base_dims) {
  const Window& window = instruction.attrs().window;
  if (window.size() != base_dims.size()) {
    return internal::OperandError(instruction, "window rank does not match the operand rank");
  }
  Geometry g;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDimension& w = window[d];
    if (w.size < 0 || w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return internal::OperandError(instruction, "invalid window");
    }
    int64_t dilated = base_dims[d] == 0 ? 0 : (base_dims[d] - 1) * w.base_dilation + 1;
    int64_t padded = dilated + w.padding_low + w.padding_high;
    int64_t dilated_window = w.size == 0 ? 0 : (w.size - 1) * w.window_dilation + 1;
    int64_t out = padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
    g.dilated_base.push_back(dilated);
    g.output_sizes.push_back(out);
    g.window_sizes.push_back(w.size);
  }
  return g;
}

// Maps window position `out` and window offset `k` to an operand index;
// false when the coordinate is padding or a dilation hole.
bool WindowToOperand(const Window& window, const Geometry& g, const Index& out, const Index& k,
                     Index& operand_index) {
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDimension& w = window[d];
    int64_t kk = w.window_reversal ? w.size - 1 - k[d] : k[d];
    int64_t p = out[d] * w.stride + kk * w.window_dilation - w.padding_low;
    if (p < 0 || p >= g.dilated_base[d] || p % w.base_dilation != 0) return false;
    operand_index[d] = p / w.base_dilation;
  }
  return true;
}

}  // namespace

absl::StatusOr<Literal> EvalReduceWindow(const Instruction& instruction, Operands operands,
                                         const Context& context) {
  if (operands.empty() || operands.size() % 2 != 0) {
    return internal::OperandError(instruction, "needs N inputs and N init values");
  }
  if (instruction.called_computations().empty()) {
    return internal::OperandError(instruction, "has no to_apply computation");
  }
  const Computation& to_apply = *instruction.to_apply();
  const int64_t n = static_cast<int64_t>(operands.size() / 2);
  const Shape& base_shape = operands[0]->shape();
  for (int64_t i = 0; i < n; ++i) {
    if (!operands[i]->shape().IsArray() ||
        operands[i]->shape().dimensions() != base_shape.dimensions()) {
      return internal::OperandError(instruction, "inputs must be arrays of the same dimensions");
    }
    if (!operands[n + i]->shape().IsArray() || operands[n + i]->element_count() != 1) {
      return internal::OperandError(instruction, "init values must be scalars");
    }
  }
  XJIT_ASSIGN_OR_RETURN(Geometry g, ComputeGeometry(instruction, base_shape.dimensions()));
  const Shape& shape = instruction.shape();
  if ((n > 1 || shape.IsTuple()) && !(shape.IsTuple() && shape.tuple_size() == n)) {
    return internal::OperandError(instruction, "result must be a tuple of N arrays");
  }
  std::vector<Literal> results;
  std::vector<Literal> inits;
  for (int64_t i = 0; i < n; ++i) {
    const Shape& element_shape = shape.IsTuple() ? shape.tuple_shapes(i) : shape;
    if (!element_shape.IsArray() || element_shape.rank() != base_shape.rank()) {
      return internal::OperandError(instruction, "result rank does not match the operand rank");
    }
    results.emplace_back(internal::WithDims(element_shape, g.output_sizes));
    inits.push_back(
        internal::ScalarFrom(*operands[n + i], Index(operands[n + i]->shape().rank(), 0)));
  }

  const Window& window = instruction.attrs().window;
  Index operand_index(base_shape.rank(), 0);
  std::vector<Literal> values(n);
  std::vector<const Literal*> args(2 * n);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(g.output_sizes, [&](const Index& out) {
    std::vector<Literal> acc = inits;
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(g.window_sizes, [&](const Index& k) {
      bool in_base = WindowToOperand(window, g, out, k, operand_index);
      for (int64_t i = 0; i < n; ++i) {
        values[i] = in_base ? internal::ScalarFrom(*operands[i], operand_index) : inits[i];
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

absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& instruction, Operands operands,
                                             const Context& context) {
  if (operands.size() != 3) {
    return internal::OperandError(instruction, "needs operand, source and init_value");
  }
  if (instruction.called_computations().size() != 2) {
    return internal::OperandError(instruction, "needs select and scatter computations");
  }
  const Computation& select = *instruction.called_computations()[0];
  const Computation& scatter = *instruction.called_computations()[1];
  const Literal& operand = *operands[0];
  const Literal& source = *operands[1];
  const Literal& init = *operands[2];
  if (!operand.shape().IsArray() || !source.shape().IsArray() || init.element_count() != 1) {
    return internal::OperandError(instruction, "operand and source must be arrays, init a scalar");
  }
  XJIT_ASSIGN_OR_RETURN(Geometry g, ComputeGeometry(instruction, operand.shape().dimensions()));
  if (source.shape().dimensions() != absl::Span<const int64_t>(g.output_sizes)) {
    return internal::OperandError(instruction, "source shape does not match the window positions");
  }
  if (!instruction.shape().IsArray() || instruction.shape().rank() != operand.shape().rank()) {
    return internal::OperandError(instruction, "result must have the operand's rank");
  }
  Literal result(internal::WithDims(instruction.shape(), operand.shape().dimensions()));
  const Index init_index(init.shape().rank(), 0);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(operand.shape().dimensions(), [&](const Index& i) {
    internal::CopyElement(init, init_index, result, i);
    return absl::OkStatus();
  }));

  const Window& window = instruction.attrs().window;
  Index operand_index(operand.shape().rank(), 0);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(g.output_sizes, [&](const Index& out) {
    std::optional<Index> selected_index;
    Literal selected;
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(g.window_sizes, [&](const Index& k) {
      if (!WindowToOperand(window, g, out, k, operand_index)) return absl::OkStatus();
      Literal candidate = internal::ScalarFrom(operand, operand_index);
      if (!selected_index.has_value()) {
        selected_index = operand_index;
        selected = std::move(candidate);
        return absl::OkStatus();
      }
      const Literal* args[] = {&selected, &candidate};
      XJIT_ASSIGN_OR_RETURN(std::vector<Literal> keep,
                            internal::CallScalars(context, select, args, 1));
      if (!internal::ScalarIsTrue(keep[0])) {
        selected_index = operand_index;
        selected = std::move(candidate);
      }
      return absl::OkStatus();
    }));
    if (!selected_index.has_value()) return absl::OkStatus();
    Literal current = internal::ScalarFrom(result, *selected_index);
    Literal update = internal::ScalarFrom(source, out);
    const Literal* args[] = {&current, &update};
    XJIT_ASSIGN_OR_RETURN(std::vector<Literal> combined,
                          internal::CallScalars(context, scatter, args, 1));
    if (combined[0].shape().element_type() != result.shape().element_type()) {
      return internal::OperandError(instruction, "scatter returned the wrong element type");
    }
    internal::CopyElement(combined[0], Index(combined[0].shape().rank(), 0), result,
                          *selected_index);
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
