// Private to the evaluator's driver (interpreter/evaluator.cc) and its helper files
// interpreter/elementwise.cc and interpreter/data_movement.cc: the entry
// points for the operation families the driver evaluates itself, and the
// element-access helpers they share. Same conventions as interpreter/ops.h:
// each function takes the instruction and its evaluated operands and returns
// the result in the instruction's shape and layout (with runtime sizes for
// dynamic dimensions).
#ifndef XJIT_INTERPRETER_EVALUATOR_INTERNAL_H_
#define XJIT_INTERPRETER_EVALUATOR_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "interpreter/ops.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace xjit::eval {

// Elementwise family: every opcode with IsElementwiseUnary or
// IsElementwiseBinary, select, clamp, convert, bitcast-convert,
// reduce-precision, stochastic-convert.
absl::StatusOr<Literal> EvalElementwise(const Instruction& instruction, Operands operands);

// Data movement family: broadcast, reshape, dynamic-reshape, transpose, slice,
// pad, concatenate, reverse, dynamic-slice, dynamic-update-slice, iota, copy,
// bitcast, get-dimension-size, set-dimension-size.
absl::StatusOr<Literal> EvalDataMovement(const Instruction& instruction, Operands operands);

// ---- Shared helpers ----

// Calls `f(index)` for every logical index of `dimensions` in row-major
// order (once for rank 0, never when a dimension is 0).
template <typename F>
void ForEachIndex(absl::Span<const int64_t> dimensions, F&& f) {
  for (int64_t d : dimensions) {
    if (d <= 0) return;
  }
  std::vector<int64_t> index(dimensions.size(), 0);
  while (true) {
    f(absl::Span<const int64_t>(index));
    int64_t i = static_cast<int64_t>(dimensions.size()) - 1;
    for (; i >= 0; --i) {
      if (++index[i] < dimensions[i]) break;
      index[i] = 0;
    }
    if (i < 0) return;
  }
}

// Copies one element between literals of the same element type, bit for bit.
void CopyElement(const Literal& source, absl::Span<const int64_t> source_index, Literal& target,
                 absl::Span<const int64_t> target_index);

// The raw bits of an element, up to 128 (c128 is real bits | imag bits << 64;
// c64 real bits | imag bits << 32).
unsigned __int128 GetRawBits(const Literal& literal, absl::Span<const int64_t> index);
void SetRawBits(Literal& literal, absl::Span<const int64_t> index, unsigned __int128 bits);

// `shape` with the dimensions of `dimensions`; a dimension that differs from
// the static one is marked dynamic.
Shape WithRuntimeDimensions(const Shape& shape, absl::Span<const int64_t> dimensions);

// The runtime shape of a value of static shape `shape` whose arrays have the
// dimensions of `value` (recursively through tuples).
Shape RuntimeShapeLike(const Shape& shape, const Shape& value);

// OK when every array operand literal has the static dimensions of its
// operand instruction; Unimplemented (naming the opcode) otherwise.
absl::Status RequireStaticOperands(const Instruction& instruction, Operands operands);

// Reads an integer (or pred) scalar, sign-extended for signed types. For
// unsigned values above INT64_MAX returns INT64_MAX (callers clamp).
int64_t ReadIndexScalar(const Literal& literal);

// "opcode name" for messages: "add.3 (add)".
std::string Describe(const Instruction& instruction);

}  // namespace xjit::eval

#endif  // XJIT_INTERPRETER_EVALUATOR_INTERNAL_H_
