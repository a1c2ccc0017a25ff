// Evaluation of convolution: N spatial dimensions in any dimension order
// (ConvolutionDimensionNumbers), window strides, low/high padding (negative
// too), lhs (base) dilation, rhs (window) dilation, window reversal,
// feature_group_count and batch_group_count.
//
// For output (b, o, spatial s), with G = feature_group_count and
// B = batch_group_count:
//   feature group  g = o / (output_features / G),
//   batch group    h = o / (output_features / B),
//   input batch    = h * (input_batch / B) + b,
//   input feature  = g * kernel_input_features + c, c over the kernel's input features,
//   input spatial  = (s * stride + k * rhs_dilation - padding_low) / lhs_dilation
//                    when divisible and inside the input (else the term is zero),
//   kernel spatial = k, or size - 1 - k when the window is reversed.
// Accumulation as for dot (see dot.cc): double for real floats, rounded once;
// exact wrap-around for integers; complex<double> for complex.
#include <complex>
#include <vector>

#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

absl::StatusOr<Literal> EvalConvolution(const Instruction& instruction, Operands operands,
                                        const Context& context) {
  if (operands.size() != 2) return internal::OperandError(instruction, "needs 2 operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const ConvolutionDimensionNumbers& dn = instruction.attrs().convolution_dimension_numbers;
  const Window& window = instruction.attrs().window;
  const int64_t fgc = instruction.attrs().feature_group_count;
  const int64_t bgc = instruction.attrs().batch_group_count;
  const int64_t rank = lhs.shape().rank();
  const size_t num_spatial = dn.input_spatial_dimensions.size();
  const Shape& shape = instruction.shape();
  if (rank != rhs.shape().rank() || !shape.IsArray() || shape.rank() != rank ||
      rank != static_cast<int64_t>(num_spatial) + 2 ||
      dn.kernel_spatial_dimensions.size() != num_spatial ||
      dn.output_spatial_dimensions.size() != num_spatial ||
      (window.size() != num_spatial && !(window.empty() && num_spatial == 0))) {
    return internal::OperandError(instruction, "ranks do not match the dimension numbers");
  }
  auto in_range = [rank](int64_t d) { return d >= 0 && d < rank; };
  bool dims_ok = in_range(dn.input_batch_dimension) && in_range(dn.input_feature_dimension) &&
                 in_range(dn.kernel_input_feature_dimension) &&
                 in_range(dn.kernel_output_feature_dimension) &&
                 in_range(dn.output_batch_dimension) && in_range(dn.output_feature_dimension);
  for (size_t i = 0; i < num_spatial; ++i) {
    dims_ok = dims_ok && in_range(dn.input_spatial_dimensions[i]) &&
              in_range(dn.kernel_spatial_dimensions[i]) && in_range(dn.output_spatial_dimensions[i]);
  }
  if (!dims_ok) return internal::OperandError(instruction, "dimension number out of range");

  const int64_t input_batch = lhs.shape().dimensions(dn.input_batch_dimension);
  const int64_t input_features = lhs.shape().dimensions(dn.input_feature_dimension);
  const int64_t kernel_input_features = rhs.shape().dimensions(dn.kernel_input_feature_dimension);
  const int64_t output_features = rhs.shape().dimensions(dn.kernel_output_feature_dimension);
  if (fgc < 1 || bgc < 1 || input_features != kernel_input_features * fgc ||
      output_features % fgc != 0 || output_features % bgc != 0 || input_batch % bgc != 0) {
    return internal::OperandError(instruction, "feature/batch group counts do not divide");
  }
  const int64_t output_batch = input_batch / bgc;
  const int64_t out_features_per_fgroup = output_features / fgc;
  const int64_t out_features_per_bgroup = output_features / bgc;

  std::vector<int64_t> out_dims(rank);
  out_dims[dn.output_batch_dimension] = output_batch;
  out_dims[dn.output_feature_dimension] = output_features;
  std::vector<int64_t> kernel_sizes(num_spatial);
  std::vector<int64_t> input_sizes(num_spatial);
  for (size_t i = 0; i < num_spatial; ++i) {
    const WindowDimension& w = window[i];
    if (w.stride < 1 || w.base_dilation < 1 || w.window_dilation < 1) {
      return internal::OperandError(instruction, "invalid window");
    }
    input_sizes[i] = lhs.shape().dimensions(dn.input_spatial_dimensions[i]);
    kernel_sizes[i] = rhs.shape().dimensions(dn.kernel_spatial_dimensions[i]);
    int64_t dilated = input_sizes[i] == 0 ? 0 : (input_sizes[i] - 1) * w.base_dilation + 1;
    int64_t padded = dilated + w.padding_low + w.padding_high;
    int64_t dilated_window = kernel_sizes[i] == 0 ? 0 : (kernel_sizes[i] - 1) * w.window_dilation + 1;
    out_dims[dn.output_spatial_dimensions[i]] =
        padded < dilated_window ? 0 : (padded - dilated_window) / w.stride + 1;
  }
  Literal result(internal::WithDims(shape, out_dims));
  const ElementType type = shape.element_type();
  const std::vector<int64_t> ls = internal::RowMajorStrides(lhs.shape().dimensions());
  const std::vector<int64_t> rs = internal::RowMajorStrides(rhs.shape().dimensions());

  // Kernel spatial positions, iterated for every output element.
  const bool kernel_empty = internal::ElementCount(kernel_sizes) == 0;
  auto run = [&](const auto& lhs_values, const auto& rhs_values, auto zero, auto store) {
    return internal::ForEachIndex(out_dims, [&](const Index& out) {
      const int64_t b = out[dn.output_batch_dimension];
      const int64_t o = out[dn.output_feature_dimension];
      const int64_t fgroup = o / out_features_per_fgroup;
      const int64_t bgroup = o / out_features_per_bgroup;
      const int64_t lhs_base = (bgroup * output_batch + b) * ls[dn.input_batch_dimension] +
                               fgroup * kernel_input_features * ls[dn.input_feature_dimension];
      const int64_t rhs_base = o * rs[dn.kernel_output_feature_dimension];
      auto sum = zero;
      if (!kernel_empty) {
        Index k(num_spatial, 0);
        do {
          int64_t lhs_offset = lhs_base;
          int64_t rhs_offset = rhs_base;
          bool inside = true;
          for (size_t i = 0; i < num_spatial; ++i) {
            const WindowDimension& w = window[i];
            int64_t p = out[dn.output_spatial_dimensions[i]] * w.stride +
                        k[i] * w.window_dilation - w.padding_low;
            if (p < 0 || p % w.base_dilation != 0 || p / w.base_dilation >= input_sizes[i]) {
              inside = false;
              break;
            }
            lhs_offset += (p / w.base_dilation) * ls[dn.input_spatial_dimensions[i]];
            rhs_offset += (w.window_reversal ? kernel_sizes[i] - 1 - k[i] : k[i]) *
                          rs[dn.kernel_spatial_dimensions[i]];
          }
          if (inside) {
            for (int64_t c = 0; c < kernel_input_features; ++c) {
              sum += lhs_values[lhs_offset + c * ls[dn.input_feature_dimension]] *
                     rhs_values[rhs_offset + c * rs[dn.kernel_input_feature_dimension]];
            }
          }
        } while (internal::NextIndex(kernel_sizes, k));
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
    // Integers wrap; PRED sums the true pairs and stores sum != 0.
    XJIT_RETURN_IF_ERROR(run(internal::DenseIntBits(lhs), internal::DenseIntBits(rhs), uint64_t{0},
                             [&](const Index& out, uint64_t v) {
                               internal::WriteIntBits(result, out, v);
                             }));
  }
  return result;
}

}  // namespace xjit::eval
