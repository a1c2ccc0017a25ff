// Evaluation of dot (DotGeneral): sum of products over the contracting
// dimensions, for every (batch, lhs free, rhs free) index of the result.
//
// Accumulation: integers (and PRED as logical or/and) in exact 64-bit
// wrap-around arithmetic, stored with wrap-around to the result type, which
// equals XLA's arithmetic in the result type. Real floats of every width
// accumulate in double and round once to the result type (XLA CPU accumulates
// f16/bf16 in f32 and f32 in f32, so results can differ from XLA's in the last
// bits; tests compare floats with a tolerance). Complex accumulate in
// complex<double>. Operands may have element types other than the result's
// (e.g. s8 x s8 -> s32); each value is read exactly before the arithmetic.
#include <complex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/element_type.h"
#include "ir/evaluator/ops.h"
#include "ir/evaluator/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  for (int64_t e : v) {
    if (e == x) return true;
  }
  return false;
}

absl::Status CheckDims(const Instruction& instruction, const std::vector<int64_t>& dims,
                       int64_t rank, absl::string_view what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return internal::OperandError(instruction, absl::StrCat(what, " dimension ", d,
                                                              " out of range"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> EvalDot(const Instruction& instruction, Operands operands,
                                const Context& context) {
  if (operands.size() != 2) return internal::OperandError(instruction, "needs 2 operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const DotDimensionNumbers& dnums = instruction.attrs().dot_dimension_numbers;
  const int64_t lhs_rank = lhs.shape().rank();
  const int64_t rhs_rank = rhs.shape().rank();
  XJIT_RETURN_IF_ERROR(CheckDims(instruction, dnums.lhs_batch_dimensions, lhs_rank, "lhs batch"));
  XJIT_RETURN_IF_ERROR(CheckDims(instruction, dnums.rhs_batch_dimensions, rhs_rank, "rhs batch"));
  XJIT_RETURN_IF_ERROR(
      CheckDims(instruction, dnums.lhs_contracting_dimensions, lhs_rank, "lhs contracting"));
  XJIT_RETURN_IF_ERROR(
      CheckDims(instruction, dnums.rhs_contracting_dimensions, rhs_rank, "rhs contracting"));
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size() ||
      dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return internal::OperandError(instruction, "mismatched dimension numbers");
  }

  // Result dimensions: batch, lhs free, rhs free.
  std::vector<int64_t> result_dims;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    int64_t l = lhs.shape().dimensions(dnums.lhs_batch_dimensions[i]);
    int64_t r = rhs.shape().dimensions(dnums.rhs_batch_dimensions[i]);
    if (l != r) return internal::OperandError(instruction, "batch dimension sizes differ");
    result_dims.push_back(l);
  }
  std::vector<int64_t> lhs_free;
  std::vector<int64_t> rhs_free;
  for (int64_t d = 0; d < lhs_rank; ++d) {
    if (!Contains(dnums.lhs_batch_dimensions, d) && !Contains(dnums.lhs_contracting_dimensions, d)) {
      lhs_free.push_back(d);
      result_dims.push_back(lhs.shape().dimensions(d));
    }
  }
  for (int64_t d = 0; d < rhs_rank; ++d) {
    if (!Contains(dnums.rhs_batch_dimensions, d) && !Contains(dnums.rhs_contracting_dimensions, d)) {
      rhs_free.push_back(d);
      result_dims.push_back(rhs.shape().dimensions(d));
    }
  }
  std::vector<int64_t> contracting_sizes;
  for (size_t i = 0; i < dnums.lhs_contracting_dimensions.size(); ++i) {
    int64_t l = lhs.shape().dimensions(dnums.lhs_contracting_dimensions[i]);
    int64_t r = rhs.shape().dimensions(dnums.rhs_contracting_dimensions[i]);
    if (l != r) return internal::OperandError(instruction, "contracting dimension sizes differ");
    contracting_sizes.push_back(l);
  }
  const Shape& shape = instruction.shape();
  if (!shape.IsArray() || shape.rank() != static_cast<int64_t>(result_dims.size())) {
    return internal::OperandError(instruction, "result rank does not match dimension numbers");
  }
  Literal result(internal::WithDims(shape, result_dims));
  const ElementType type = shape.element_type();
  const bool contracting_empty = internal::ElementCount(contracting_sizes) == 0;
  const size_t num_batch = dnums.lhs_batch_dimensions.size();

  Index lhs_index(lhs_rank, 0);
  Index rhs_index(rhs_rank, 0);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(result_dims, [&](const Index& out) {
    size_t pos = 0;
    for (size_t i = 0; i < num_batch; ++i, ++pos) {
      lhs_index[dnums.lhs_batch_dimensions[i]] = out[pos];
      rhs_index[dnums.rhs_batch_dimensions[i]] = out[pos];
    }
    for (int64_t d : lhs_free) lhs_index[d] = out[pos++];
    for (int64_t d : rhs_free) rhs_index[d] = out[pos++];

    std::complex<double> complex_sum = 0;
    double real_sum = 0;
    uint64_t int_sum = 0;
    if (!contracting_empty) {
      Index k(contracting_sizes.size(), 0);
      do {
        for (size_t i = 0; i < k.size(); ++i) {
          lhs_index[dnums.lhs_contracting_dimensions[i]] = k[i];
          rhs_index[dnums.rhs_contracting_dimensions[i]] = k[i];
        }
        if (IsComplex(type)) {
          complex_sum += internal::ReadComplex(lhs, lhs_index) * internal::ReadComplex(rhs, rhs_index);
        } else if (IsFloat(type)) {
          real_sum += internal::ReadDouble(lhs, lhs_index) * internal::ReadDouble(rhs, rhs_index);
        } else if (IsPred(type)) {
          if (internal::ReadIntBits(lhs, lhs_index) != 0 &&
              internal::ReadIntBits(rhs, rhs_index) != 0) {
            int_sum = 1;
          }
        } else {
          int_sum += internal::ReadIntBits(lhs, lhs_index) * internal::ReadIntBits(rhs, rhs_index);
        }
      } while (internal::NextIndex(contracting_sizes, k));
    }
    if (IsComplex(type)) {
      result.SetComplex(out, complex_sum);
    } else if (IsFloat(type)) {
      result.SetDouble(out, real_sum);
    } else {
      internal::WriteIntBits(result, out, int_sum);
    }
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
