// Helpers shared by the evaluator's per-family files (dot.cc, reduce.cc, ...):
// multi-index iteration, element reads and writes that work across element
// types, scalar literals for calling computations, and the result shape with
// run-time dimension sizes. Internal to interpreter/.
#ifndef XJIT_INTERPRETER_OPS_INTERNAL_H_
#define XJIT_INTERPRETER_OPS_INTERNAL_H_

#include <array>
#include <complex>
#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "interpreter/ops.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace xjit::eval::internal {

using Index = std::vector<int64_t>;

// Advances `index` to the next multi-index of `dims` in row-major order.
// Returns false (leaving `index` all zeros) after the last one.
bool NextIndex(absl::Span<const int64_t> dims, Index& index);

// Number of elements of an array with these dimensions.
int64_t ElementCount(absl::Span<const int64_t> dims);

// Calls `fn` on every multi-index of `dims` in row-major order (once for
// rank 0, never when a dimension is 0). Stops at the first error.
absl::Status ForEachIndex(absl::Span<const int64_t> dims,
                          const std::function<absl::Status(const Index&)>& fn);

// `shape` (an array) with its dimensions replaced by `dims` (same rank), for
// results whose run-time sizes come from the operands' run-time sizes.
Shape WithDims(const Shape& shape, absl::Span<const int64_t> dims);

// Element reads that accept any array element type: integers are read exactly
// (u64 through its bits), PRED as 0/1, complex through its real part where a
// real is asked for.
double ReadDouble(const Literal& literal, absl::Span<const int64_t> index);
std::complex<double> ReadComplex(const Literal& literal, absl::Span<const int64_t> index);
// Integers and PRED as a 64-bit two's-complement pattern (signed values
// sign-extended, u64 as its bits); floats truncated toward zero.
uint64_t ReadIntBits(const Literal& literal, absl::Span<const int64_t> index);
// An index value (gather/scatter/dynamic starts): signed read, u64 values above
// INT64_MAX saturate to INT64_MAX.
int64_t ReadIndexValue(const Literal& literal, absl::Span<const int64_t> index);

// Element writes from a value computed in a wider domain: floats round once to
// the element type, complex keep both parts, integers wrap, PRED is value != 0.
void WriteDouble(Literal& literal, absl::Span<const int64_t> index, double value);
void WriteComplex(Literal& literal, absl::Span<const int64_t> index, std::complex<double> value);
void WriteIntBits(Literal& literal, absl::Span<const int64_t> index, uint64_t value);

// Row-major strides of `dims` (the last dimension has stride 1).
std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims);

// Every element of an array in row-major order, read with ReadDouble /
// ReadComplex / ReadIntBits: a dense copy for the arithmetic-heavy ops.
std::vector<double> DenseDoubles(const Literal& literal);
std::vector<std::complex<double>> DenseComplexes(const Literal& literal);
std::vector<uint64_t> DenseIntBits(const Literal& literal);

// A scalar literal holding element `index` of `literal` (same element type).
Literal ScalarFrom(const Literal& literal, absl::Span<const int64_t> index);
// Copies element `from_index` of `from` into element `to_index` of `to`; both
// have the same element type.
void CopyElement(const Literal& from, absl::Span<const int64_t> from_index, Literal& to,
                 absl::Span<const int64_t> to_index);

// Calls `computation` with `args` and returns its root value as a list of N
// scalars: the tuple's elements when the result is a tuple, else the value.
absl::StatusOr<std::vector<Literal>> CallScalars(const Context& context,
                                                 const Computation& computation,
                                                 absl::Span<const Literal* const> args,
                                                 int64_t expected_count);

// Interprets a PRED (or any integer) scalar result of a comparator.
bool ScalarIsTrue(const Literal& literal);

// The counter-based generators of rng-bit-generator (rng.cc), exposed for
// known-answer tests: ThreeFry-2x32 with 20 rounds and Philox-4x32 with 10
// rounds, words in Random123's order.
std::array<uint32_t, 2> ThreeFry2x32(std::array<uint32_t, 2> counter, std::array<uint32_t, 2> key);
std::array<uint32_t, 4> Philox4x32(std::array<uint32_t, 4> counter, std::array<uint32_t, 2> key);

// An error for an operation whose operands do not have what the op needs.
absl::Status OperandError(const Instruction& instruction, absl::string_view what);

}  // namespace xjit::eval::internal

#endif  // XJIT_INTERPRETER_OPS_INTERNAL_H_
