// Evaluation of batch-norm-training, batch-norm-inference and
// batch-norm-grad with the seeds' formulas, per feature l (the elements whose
// index along feature_index is l; N of them), in double arithmetic rounded
// once to the result type:
//   training:  mean = sum(x)/N, var = sum((x-mean)^2)/N (biased),
//              y = scale * (x-mean) / sqrt(var+eps) + offset; result (y, mean, var).
//   inference: y = scale * (x-mean) / sqrt(var+eps) + offset with the given mean/var.
//   grad:      d = sum(dy)/N, c = sum(dy*(x-mean)) / (N*(var+eps)),
//              dx = scale/sqrt(var+eps) * (dy - d - c*(x-mean)),
//              dscale = sum(dy*(x-mean)) / sqrt(var+eps), doffset = sum(dy);
//              result (dx, dscale, doffset).
#include <cmath>
#include <vector>

#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

absl::Status CheckFeatureOperands(const Instruction& instruction, Operands operands,
                                  int64_t first_vector, int64_t* features) {
  const Literal& x = *operands[0];
  const int64_t f = instruction.attrs().feature_index;
  if (!x.shape().IsArray() || f < 0 || f >= x.shape().rank()) {
    return internal::OperandError(instruction, "feature_index out of range");
  }
  *features = x.shape().dimensions(f);
  for (size_t i = first_vector; i < operands.size(); ++i) {
    const Shape& s = operands[i]->shape();
    if (!s.IsArray() || s.rank() != 1 || s.dimensions(0) != *features) {
      return internal::OperandError(instruction, "feature vectors must have the feature size");
    }
  }
  return absl::OkStatus();
}

// Per-feature sums over every element of x: fn(feature, index).
absl::Status ForEachElement(const Literal& x, int64_t feature_index,
                            const std::function<void(int64_t, const Index&)>& fn) {
  return internal::ForEachIndex(x.shape().dimensions(), [&](const Index& index) {
    fn(index[feature_index], index);
    return absl::OkStatus();
  });
}

double Vec(const Literal& v, int64_t l) { return internal::ReadDouble(v, Index{l}); }

}  // namespace

absl::StatusOr<Literal> EvalBatchNormTraining(const Instruction& instruction, Operands operands,
                                              const Context& context) {
  if (operands.size() != 3) return internal::OperandError(instruction, "needs 3 operands");
  int64_t features = 0;
  XJIT_RETURN_IF_ERROR(CheckFeatureOperands(instruction, operands, 1, &features));
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 3) {
    return internal::OperandError(instruction, "result must be an (output, mean, var) tuple");
  }
  const Literal& x = *operands[0];
  const Literal& scale = *operands[1];
  const Literal& offset = *operands[2];
  const int64_t f = instruction.attrs().feature_index;
  const double eps = static_cast<float>(instruction.attrs().epsilon);  // an f32 attribute in XLA
  const double count = static_cast<double>(x.element_count()) / (features == 0 ? 1 : features);
  std::vector<double> mean(features, 0.0), var(features, 0.0);
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    mean[l] += internal::ReadDouble(x, i);
  }));
  for (double& m : mean) m /= count;
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    double d = internal::ReadDouble(x, i) - mean[l];
    var[l] += d * d;
  }));
  for (double& v : var) v /= count;
  Literal y(internal::WithDims(shape.tuple_shapes(0), x.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    double value = Vec(scale, l) * (internal::ReadDouble(x, i) - mean[l]) / std::sqrt(var[l] + eps) +
                   Vec(offset, l);
    internal::WriteDouble(y, i, value);
  }));
  Literal mean_out(shape.tuple_shapes(1));
  Literal var_out(shape.tuple_shapes(2));
  if (mean_out.shape().rank() != 1 || var_out.shape().rank() != 1 ||
      mean_out.shape().dimensions(0) != features || var_out.shape().dimensions(0) != features) {
    return internal::OperandError(instruction, "mean/var results must have the feature size");
  }
  for (int64_t l = 0; l < features; ++l) {
    internal::WriteDouble(mean_out, Index{l}, mean[l]);
    internal::WriteDouble(var_out, Index{l}, var[l]);
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(y));
  elements.push_back(std::move(mean_out));
  elements.push_back(std::move(var_out));
  return Literal::MakeTuple(std::move(elements));
}

absl::StatusOr<Literal> EvalBatchNormInference(const Instruction& instruction, Operands operands,
                                               const Context& context) {
  if (operands.size() != 5) return internal::OperandError(instruction, "needs 5 operands");
  int64_t features = 0;
  XJIT_RETURN_IF_ERROR(CheckFeatureOperands(instruction, operands, 1, &features));
  const Literal& x = *operands[0];
  const Literal& scale = *operands[1];
  const Literal& offset = *operands[2];
  const Literal& mean = *operands[3];
  const Literal& var = *operands[4];
  const int64_t f = instruction.attrs().feature_index;
  const double eps = static_cast<float>(instruction.attrs().epsilon);  // an f32 attribute in XLA
  if (!instruction.shape().IsArray()) {
    return internal::OperandError(instruction, "result must be an array");
  }
  Literal y(internal::WithDims(instruction.shape(), x.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    double value = Vec(scale, l) * (internal::ReadDouble(x, i) - Vec(mean, l)) /
                       std::sqrt(Vec(var, l) + eps) +
                   Vec(offset, l);
    internal::WriteDouble(y, i, value);
  }));
  return y;
}

absl::StatusOr<Literal> EvalBatchNormGrad(const Instruction& instruction, Operands operands,
                                          const Context& context) {
  if (operands.size() != 5) return internal::OperandError(instruction, "needs 5 operands");
  int64_t features = 0;
  // operands: x, scale, mean, var, grad_output (the last has x's shape).
  XJIT_RETURN_IF_ERROR(CheckFeatureOperands(instruction, operands.subspan(0, 4), 1, &features));
  const Literal& x = *operands[0];
  const Literal& scale = *operands[1];
  const Literal& mean = *operands[2];
  const Literal& var = *operands[3];
  const Literal& dy = *operands[4];
  if (dy.shape().dimensions() != x.shape().dimensions()) {
    return internal::OperandError(instruction, "grad_output must have the operand's shape");
  }
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 3) {
    return internal::OperandError(instruction, "result must be a 3-tuple");
  }
  const int64_t f = instruction.attrs().feature_index;
  const double eps = static_cast<float>(instruction.attrs().epsilon);  // an f32 attribute in XLA
  const double count = static_cast<double>(x.element_count()) / (features == 0 ? 1 : features);
  std::vector<double> sum_dy(features, 0.0), sum_dy_xc(features, 0.0);
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    double g = internal::ReadDouble(dy, i);
    sum_dy[l] += g;
    sum_dy_xc[l] += g * (internal::ReadDouble(x, i) - Vec(mean, l));
  }));
  Literal dx(internal::WithDims(shape.tuple_shapes(0), x.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachElement(x, f, [&](int64_t l, const Index& i) {
    double ve = Vec(var, l) + eps;
    double d = sum_dy[l] / count;
    double c = sum_dy_xc[l] / (count * ve);
    double xc = internal::ReadDouble(x, i) - Vec(mean, l);
    double value = Vec(scale, l) / std::sqrt(ve) * (internal::ReadDouble(dy, i) - d - c * xc);
    internal::WriteDouble(dx, i, value);
  }));
  Literal dscale(shape.tuple_shapes(1));
  Literal doffset(shape.tuple_shapes(2));
  if (dscale.shape().rank() != 1 || doffset.shape().rank() != 1 ||
      dscale.shape().dimensions(0) != features || doffset.shape().dimensions(0) != features) {
    return internal::OperandError(instruction, "scale/offset gradients must have the feature size");
  }
  for (int64_t l = 0; l < features; ++l) {
    internal::WriteDouble(dscale, Index{l}, sum_dy_xc[l] / std::sqrt(Vec(var, l) + eps));
    internal::WriteDouble(doffset, Index{l}, sum_dy[l]);
  }
  std::vector<Literal> elements;
  elements.push_back(std::move(dx));
  elements.push_back(std::move(dscale));
  elements.push_back(std::move(doffset));
  return Literal::MakeTuple(std::move(elements));
}

}  // namespace xjit::eval
