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
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
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
  const size_t num_batch = dnums.lhs_batch_dimensions.size();
  const std::vector<int64_t> lhs_strides =
      internal::RowMajorStrides(lhs.shape().dimensions());
  const std::vector<int64_t> rhs_strides =
      internal::RowMajorStrides(rhs.shape().dimensions());
  // Offsets of every contracting index (row-major over the contracting sizes).
  std::vector<int64_t> lhs_k_offsets;
  std::vector<int64_t> rhs_k_offsets;
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(contracting_sizes, [&](const Index& k) {
    int64_t l = 0, r = 0;
    for (size_t i = 0; i < k.size(); ++i) {
      l += k[i] * lhs_strides[dnums.lhs_contracting_dimensions[i]];
      r += k[i] * rhs_strides[dnums.rhs_contracting_dimensions[i]];
    }
    lhs_k_offsets.push_back(l);
    rhs_k_offsets.push_back(r);
    return absl::OkStatus();
  }));

  auto run = [&](const auto& lhs_values, const auto& rhs_values, auto zero, auto store) {
    return internal::ForEachIndex(result_dims, [&](const Index& out) {
      int64_t lhs_base = 0, rhs_base = 0;
      size_t pos = 0;
      for (size_t i = 0; i < num_batch; ++i, ++pos) {
        lhs_base += out[pos] * lhs_strides[dnums.lhs_batch_dimensions[i]];
        rhs_base += out[pos] * rhs_strides[dnums.rhs_batch_dimensions[i]];
      }
      for (int64_t d : lhs_free) lhs_base += out[pos++] * lhs_strides[d];
      for (int64_t d : rhs_free) rhs_base += out[pos++] * rhs_strides[d];
      auto sum = zero;
      for (size_t k = 0; k < lhs_k_offsets.size(); ++k) {
        sum += lhs_values[lhs_base + lhs_k_offsets[k]] * rhs_values[rhs_base + rhs_k_offsets[k]];
      }
      store(out, sum);
      return absl::OkStatus();
    });
  };
  if (IsComplex(type)) {
    XJIT_RETURN_IF_ERROR(run(internal::DenseComplexes(lhs), internal::DenseComplexes(rhs),
                             std::complex<double>(0),
                             [&](const Index& out, std::complex<double> v) {
                               result.SetComplex(out, v);
                             }));
  } else if (IsFloat(type)) {
    XJIT_RETURN_IF_ERROR(run(internal::DenseDoubles(lhs), internal::DenseDoubles(rhs), 0.0,
                             [&](const Index& out, double v) { result.SetDouble(out, v); }));
  } else {
    // Integers wrap; PRED sums the true pairs and stores sum != 0 (or of ands).
    XJIT_RETURN_IF_ERROR(run(internal::DenseIntBits(lhs), internal::DenseIntBits(rhs), uint64_t{0},
                             [&](const Index& out, uint64_t v) {
                               internal::WriteIntBits(result, out, v);
                             }));
  }
  return result;
}

}  // namespace xjit::eval
