// Typed attribute values carried by instructions: dimension numbers, windows,
// padding and slice configurations, and the small enums of the operation set.
// Each is plain data; parsing and printing live in the HLO text code.
#ifndef XJIT_IR_ATTRIBUTES_H_
#define XJIT_IR_ATTRIBUTES_H_

#include <cstdint>
#include <string>
#include <vector>

namespace xjit {

enum class ComparisonDirection : uint8_t { kEq, kNe, kGe, kGt, kLe, kLt };
// kDefault: FLOAT for floats, SIGNED/UNSIGNED for integers (not printed).
enum class ComparisonType : uint8_t { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };

struct SliceDimension {
  int64_t start = 0;
  int64_t limit = 0;
  int64_t stride = 1;
  bool operator==(const SliceDimension&) const = default;
};

// Pad: low and high edge padding (may be negative) and interior padding.
struct PaddingDimension {
  int64_t low = 0;
  int64_t high = 0;
  int64_t interior = 0;
  bool operator==(const PaddingDimension&) const = default;
};
using PaddingConfig = std::vector<PaddingDimension>;

// One spatial dimension of a window (ReduceWindow, SelectAndScatter,
// Convolution). base_dilation is `lhs_dilate`, window_dilation `rhs_dilate`.
struct WindowDimension {
  int64_t size = 1;
  int64_t stride = 1;
  int64_t padding_low = 0;
  int64_t padding_high = 0;
  int64_t base_dilation = 1;
  int64_t window_dilation = 1;
  bool window_reversal = false;
  bool operator==(const WindowDimension&) const = default;
};
using Window = std::vector<WindowDimension>;

// `dim_labels=b01f_01io->b01f`.
struct ConvolutionDimensionNumbers {
  int64_t input_batch_dimension = 0;
  int64_t input_feature_dimension = 1;
  std::vector<int64_t> input_spatial_dimensions;
  int64_t kernel_input_feature_dimension = 1;
  int64_t kernel_output_feature_dimension = 0;
  std::vector<int64_t> kernel_spatial_dimensions;
  int64_t output_batch_dimension = 0;
  int64_t output_feature_dimension = 1;
  std::vector<int64_t> output_spatial_dimensions;
  bool operator==(const ConvolutionDimensionNumbers&) const = default;
};

struct DotDimensionNumbers {
  std::vector<int64_t> lhs_batch_dimensions;
  std::vector<int64_t> rhs_batch_dimensions;
  std::vector<int64_t> lhs_contracting_dimensions;
  std::vector<int64_t> rhs_contracting_dimensions;
  bool operator==(const DotDimensionNumbers&) const = default;
};

struct GatherDimensionNumbers {
  std::vector<int64_t> offset_dims;
  std::vector<int64_t> collapsed_slice_dims;
  std::vector<int64_t> start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> operand_batching_dims;
  std::vector<int64_t> start_indices_batching_dims;
  bool operator==(const GatherDimensionNumbers&) const = default;
};

struct ScatterDimensionNumbers {
  std::vector<int64_t> update_window_dims;
  std::vector<int64_t> inserted_window_dims;
  std::vector<int64_t> scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> input_batching_dims;
  std::vector<int64_t> scatter_indices_batching_dims;
  bool operator==(const ScatterDimensionNumbers&) const = default;
};

enum class FftType : uint8_t { kFft, kIfft, kRfft, kIrfft };
enum class TriangularSolveTranspose : uint8_t { kNoTranspose, kTranspose, kAdjoint };
enum class RandomDistribution : uint8_t { kUniform, kNormal };
enum class RandomAlgorithm : uint8_t { kDefault, kThreeFry, kPhilox };
enum class FusionKind : uint8_t { kLoop, kInput, kOutput, kCustom };
enum class Precision : uint8_t { kDefault, kHigh, kHighest };

// Text spellings, as HLO text writes them ("EQ", "TOTALORDER", "FFT",
// "TRANSPOSE", "rng_uniform", "rng_three_fry", "kLoop", "highest").
std::string ComparisonDirectionName(ComparisonDirection direction);
std::string ComparisonTypeName(ComparisonType type);
std::string FftTypeName(FftType type);
std::string TriangularSolveTransposeName(TriangularSolveTranspose transpose);
std::string RandomDistributionName(RandomDistribution distribution);
std::string RandomAlgorithmName(RandomAlgorithm algorithm);
std::string FusionKindName(FusionKind kind);
std::string PrecisionName(Precision precision);

}  // namespace xjit

#endif  // XJIT_IR_ATTRIBUTES_H_
