// C++ builder: constructs an ir::Module op by op with calls that mirror the
// XlaBuilder interface of the seed "Operation semantics" (003), so that its
// examples translate line by line:
//
//   Builder b("example");
//   Op x = Parameter(&b, 0, Shape::Array(ElementType::kF32, {2}), "x");
//   Op y = Add(x, ConstantR1<float>(&b, {1, 2}));
//   std::unique_ptr<Module> m = b.Build(y).value();
//
// Sub-computations (reducers, comparators, loop bodies) are built with a
// nested builder that shares the module under construction:
//
//   Builder add = b.CreateSubBuilder("add");
//   Op p = Parameter(&add, 0, Shape::Scalar(ElementType::kF32), "p");
//   Op q = Parameter(&add, 1, Shape::Scalar(ElementType::kF32), "q");
//   Computation* add_c = add.BuildSubComputation(Add(p, q));
//   Op r = Reduce(x, ConstantR0<float>(&b, 0), add_c, {0});
//
// Contract:
// * Result shapes come from InferShape (ir/shape_inference/shape_inference.h); the builder
//   computes the shape itself only where the operation's arguments give it
//   (Reshape, ConvertElementType, Iota, CustomCall, Rng*, ...).
// * Sugar is lowered when the op is added: Dot to dot with default dimension
//   numbers, Collapse to reshape, Broadcast / BroadcastInDim to broadcast
//   (with a reshape first when size-1 dimensions are expanded), Conv's
//   Padding::kSame / kValid to explicit padding, CrossReplicaSum to all-reduce
//   with an add computation, binary ops with broadcast_dimensions (or a
//   scalar / size-1 operand) to explicit broadcast instructions, Infeed /
//   Send / Recv to their token-threaded HLO sequences.
// * Errors never crash. Like XlaBuilder, the first error is recorded (shared
//   by a builder and all its sub-builders); every later op returns an invalid
//   Op, and Build() / BuildSubComputation() report it as a status whose message
//   names the builder operation and the instruction ("Add (add.3): ...").
// * Instruction names are "<opcode>.<n>", unique within their computation;
//   parameters keep the name given when it is a fresh identifier.
// * Builders are neither copyable nor movable (Ops point at them); a sub-builder
//   is returned by value through guaranteed copy elision.
#ifndef XJIT_IR_BUILDER_H_
#define XJIT_IR_BUILDER_H_

#include <complex>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/attributes.h"
#include "ir/computation.h"
#include "ir/element_type.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"

namespace xjit {

class Builder;

// A handle to an instruction under construction. Cheap to copy. An Op whose
// creation failed is invalid (valid() false); passing it on yields more
// invalid Ops and the builder reports the first error.
class Op {
 public:
  Op() = default;
  Op(Builder* builder, Instruction* instruction) : builder_(builder), instruction_(instruction) {}

  Builder* builder() const { return builder_; }
  Instruction* instruction() const { return instruction_; }
  bool valid() const { return builder_ != nullptr && instruction_ != nullptr; }
  // The result shape; the empty tuple for an invalid Op.
  const Shape& shape() const;

 private:
  Builder* builder_ = nullptr;
  Instruction* instruction_ = nullptr;
};

// Window padding shorthand (ReduceWindow, SelectAndScatter, Conv).
enum class Padding { kSame, kValid };

class Builder {
 public:
  explicit Builder(absl::string_view name);
  ~Builder();
  Builder(const Builder&) = delete;
  Builder& operator=(const Builder&) = delete;
  Builder(Builder&&) = delete;
  Builder& operator=(Builder&&) = delete;

  const std::string& name() const { return name_; }

  // A builder for a computation of the same module (reducer, comparator,
  // branch, loop body ...). Its computation joins the module when built.
  Builder CreateSubBuilder(absl::string_view name);

  // Finishes the entry computation with `root` (or the last instruction) as
  // root and returns the module. Only on the outermost builder, once.
  absl::StatusOr<std::unique_ptr<Module>> Build(Op root);
  absl::StatusOr<std::unique_ptr<Module>> Build();

  // Finishes a sub-builder's computation and adds it to the module; the
  // pointer stays valid in the module Build() returns. On error (recorded,
  // so the outer Build() fails too) returns null.
  Computation* BuildSubComputation(Op root);
  Computation* BuildSubComputation();

  // The first error of this builder tree (OK if none).
  absl::Status first_error() const;
  absl::StatusOr<Shape> GetShape(Op op) const;

  // Module attributes.
  void set_replica_count(int64_t n);
  void set_num_partitions(int64_t n);

  // ---- Low-level interface used by the free functions. ----
  // Adds an instruction: checks the operands, sets `shape` (used as given for
  // opcodes whose shape is not inferable, replaced by InferShape's result
  // otherwise), names it and records any error under `op_name`.
  Op AddInstruction(absl::string_view op_name, Opcode opcode, Shape shape,
                    absl::Span<const Op> operands, const InstructionAttributes& attrs,
                    std::vector<Computation*> called = {},
                    std::vector<OpaqueAttribute> opaque = {});
  Op AddConstant(absl::string_view op_name, Literal literal);
  Op AddParameter(int64_t number, const Shape& shape, absl::string_view name);
  // Records `status` as the first error (if none yet) and returns an invalid Op.
  Op ReportError(absl::Status status);
  Op ReportError(absl::string_view op_name, absl::string_view message);
  bool has_error() const;

 private:
  struct State;
  Builder(absl::string_view name, std::shared_ptr<State> state, bool is_sub);
  std::string UniqueInstructionName(absl::string_view base);
  Computation* Finish(Op root, bool has_root, absl::string_view what);

  std::string name_;
  std::shared_ptr<State> state_;
  bool is_sub_ = false;
  bool finished_ = false;
  std::unique_ptr<Computation> computation_;
  absl::flat_hash_set<std::string> used_names_;
  int64_t next_id_ = 1;
};

// ---------------------------------------------------------------------------
// Element types of C++ scalars (for the Constant templates).
template <typename T>
struct NativeElementType;
template <>
struct NativeElementType<bool> {
  static constexpr ElementType value = ElementType::kPred;
};
template <>
struct NativeElementType<int8_t> {
  static constexpr ElementType value = ElementType::kS8;
};
template <>
struct NativeElementType<int16_t> {
  static constexpr ElementType value = ElementType::kS16;
};
template <>
struct NativeElementType<int32_t> {
  static constexpr ElementType value = ElementType::kS32;
};
template <>
struct NativeElementType<int64_t> {
  static constexpr ElementType value = ElementType::kS64;
};
template <>
struct NativeElementType<uint8_t> {
  static constexpr ElementType value = ElementType::kU8;
};
template <>
struct NativeElementType<uint16_t> {
  static constexpr ElementType value = ElementType::kU16;
};
template <>
struct NativeElementType<uint32_t> {
  static constexpr ElementType value = ElementType::kU32;
};
template <>
struct NativeElementType<uint64_t> {
  static constexpr ElementType value = ElementType::kU64;
};
template <>
struct NativeElementType<float> {
  static constexpr ElementType value = ElementType::kF32;
};
template <>
struct NativeElementType<double> {
  static constexpr ElementType value = ElementType::kF64;
};
template <>
struct NativeElementType<std::complex<float>> {
  static constexpr ElementType value = ElementType::kC64;
};
template <>
struct NativeElementType<std::complex<double>> {
  static constexpr ElementType value = ElementType::kC128;
};

namespace builder_internal {
template <typename T>
void SetElement(Literal* literal, absl::Span<const int64_t> index, T value) {
  if constexpr (std::is_same_v<T, std::complex<float>> || std::is_same_v<T, std::complex<double>>) {
    literal->SetComplex(index, std::complex<double>(value.real(), value.imag()));
  } else if constexpr (std::is_floating_point_v<T>) {
    literal->SetDouble(index, static_cast<double>(value));
  } else if constexpr (std::is_same_v<T, uint64_t>) {
    literal->SetBits(index, value);
  } else {
    literal->SetInt(index, static_cast<int64_t>(value));
  }
}
}  // namespace builder_internal

// ---- Parameters and constants ----
Op Parameter(Builder* builder, int64_t parameter_number, const Shape& shape,
             absl::string_view name);
Op ConstantLiteral(Builder* builder, const Literal& literal);

template <typename T>
Op ConstantR0(Builder* builder, T value) {
  Literal literal(Shape::Scalar(NativeElementType<T>::value));
  builder_internal::SetElement<T>(&literal, {}, value);
  return ConstantLiteral(builder, literal);
}
template <typename T>
Op ConstantR1(Builder* builder, absl::Span<const T> values) {
  Literal literal(Shape::Array(NativeElementType<T>::value, {static_cast<int64_t>(values.size())}));
  for (size_t i = 0; i < values.size(); ++i) {
    const int64_t index[] = {static_cast<int64_t>(i)};
    builder_internal::SetElement<T>(&literal, index, values[i]);
  }
  return ConstantLiteral(builder, literal);
}
template <typename T>
Op ConstantR1(Builder* builder, std::initializer_list<T> values) {
  return ConstantR1<T>(builder, absl::Span<const T>(values.begin(), values.size()));
}
// `length` copies of `value`.
template <typename T>
Op ConstantR1(Builder* builder, int64_t length, T value) {
  std::vector<T> values(length > 0 ? length : 0, value);
  return ConstantR1<T>(builder, absl::Span<const T>(values.data(), values.size()));
}
template <typename T>
Op ConstantR2(Builder* builder, std::initializer_list<std::initializer_list<T>> values) {
  const int64_t rows = static_cast<int64_t>(values.size());
  const int64_t cols = rows == 0 ? 0 : static_cast<int64_t>(values.begin()->size());
  for (const auto& row : values) {
    if (static_cast<int64_t>(row.size()) != cols) {
      return builder->ReportError("ConstantR2", "rows of different lengths");
    }
  }
  Literal literal(Shape::Array(NativeElementType<T>::value, {rows, cols}));
  int64_t i = 0;
  for (const auto& row : values) {
    int64_t j = 0;
    for (const T& v : row) {
      const int64_t index[] = {i, j++};
      builder_internal::SetElement<T>(&literal, index, v);
    }
    ++i;
  }
  return ConstantLiteral(builder, literal);
}
template <typename T>
Op ConstantR3(Builder* builder,
              std::initializer_list<std::initializer_list<std::initializer_list<T>>> values) {
  const int64_t d0 = static_cast<int64_t>(values.size());
  const int64_t d1 = d0 == 0 ? 0 : static_cast<int64_t>(values.begin()->size());
  const int64_t d2 = d1 == 0 ? 0 : static_cast<int64_t>(values.begin()->begin()->size());
  for (const auto& plane : values) {
    if (static_cast<int64_t>(plane.size()) != d1) {
      return builder->ReportError("ConstantR3", "planes of different sizes");
    }
    for (const auto& row : plane) {
      if (static_cast<int64_t>(row.size()) != d2) {
        return builder->ReportError("ConstantR3", "rows of different lengths");
      }
    }
  }
  Literal literal(Shape::Array(NativeElementType<T>::value, {d0, d1, d2}));
  int64_t i = 0;
  for (const auto& plane : values) {
    int64_t j = 0;
    for (const auto& row : plane) {
      int64_t k = 0;
      for (const T& v : row) {
        const int64_t index[] = {i, j, k++};
        builder_internal::SetElement<T>(&literal, index, v);
      }
      ++j;
    }
    ++i;
  }
  return ConstantLiteral(builder, literal);
}
// Scalars of any array element type.
Op Zero(Builder* builder, ElementType type);
Op One(Builder* builder, ElementType type);
// The lowest value (-inf for floats that have it) / the highest (+inf).
Op MinValue(Builder* builder, ElementType type);
Op MaxValue(Builder* builder, ElementType type);
Op Iota(Builder* builder, const Shape& shape, int64_t iota_dimension);
Op Iota(Builder* builder, ElementType type, int64_t size);

// ---- Element-wise unary ----
Op Abs(Op operand);
Op Acos(Op operand);
Op Acosh(Op operand);
Op Asin(Op operand);
Op Asinh(Op operand);
Op Atan(Op operand);
Op Atanh(Op operand);
Op Cbrt(Op operand);
Op Ceil(Op operand);
Op Clz(Op operand);
Op Cos(Op operand);
Op Cosh(Op operand);
Op Erf(Op operand);
Op Exp(Op operand);
Op Expm1(Op operand);
Op Floor(Op operand);
Op Imag(Op operand);
Op IsFinite(Op operand);
Op Log(Op operand);
Op Log1p(Op operand);
Op Logistic(Op operand);
Op Neg(Op operand);
Op Not(Op operand);
Op PopulationCount(Op operand);
Op Real(Op operand);
Op Round(Op operand);  // round-nearest-afz
Op RoundNearestEven(Op operand);
Op Rsqrt(Op operand);
Op Sign(Op operand);
Op Sin(Op operand);
Op Sinh(Op operand);
Op Sqrt(Op operand);
Op Tan(Op operand);
Op Tanh(Op operand);
Op Copy(Op operand);
Op OptimizationBarrier(Op operand);

// ---- Element-wise binary, with optional broadcast_dimensions ----
// broadcast_dimensions maps the lower-rank operand's dimensions to the
// higher-rank one's; size-1 dimensions broadcast ("degenerate" broadcast).
Op Add(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Sub(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Mul(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Div(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Pow(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Rem(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Max(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Min(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op And(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Or(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Xor(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op ShiftLeft(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op ShiftRightArithmetic(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op ShiftRightLogical(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Atan2(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Complex(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});

// ---- Comparisons ----
Op Compare(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions,
           ComparisonDirection direction, ComparisonType type = ComparisonType::kDefault);
Op Eq(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Ne(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Ge(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Gt(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Le(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op Lt(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
// Total order on floats (-NaN < -Inf < ... < +Inf < +NaN); the plain forms on
// other types.
Op EqTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op NeTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op GeTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op GtTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op LeTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});
Op LtTotalOrder(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions = {});

// ---- Ternary ----
// A scalar pred (with array branches) or scalar min/max is broadcast.
Op Select(Op pred, Op on_true, Op on_false);
Op Clamp(Op min, Op operand, Op max);

// ---- Shape manipulation ----
Op Broadcast(Op operand, absl::Span<const int64_t> broadcast_sizes);
Op BroadcastInDim(Op operand, absl::Span<const int64_t> out_dim_size,
                  absl::Span<const int64_t> broadcast_dimensions);
Op Reshape(Op operand, absl::Span<const int64_t> new_sizes);
// Transposes by `dimensions` first, then reshapes.
Op Reshape(Op operand, absl::Span<const int64_t> dimensions, absl::Span<const int64_t> new_sizes);
Op Collapse(Op operand, absl::Span<const int64_t> dimensions);
Op Transpose(Op operand, absl::Span<const int64_t> permutation);
Op Rev(Op operand, absl::Span<const int64_t> dimensions);
Op Slice(Op operand, absl::Span<const int64_t> start_indices,
         absl::Span<const int64_t> limit_indices, absl::Span<const int64_t> strides);
Op SliceInDim(Op operand, int64_t start_index, int64_t limit_index, int64_t stride, int64_t dimno);
Op DynamicSlice(Op operand, absl::Span<const Op> start_indices,
                absl::Span<const int64_t> slice_sizes);
Op DynamicUpdateSlice(Op operand, Op update, absl::Span<const Op> start_indices);
Op ConcatInDim(Builder* builder, absl::Span<const Op> operands, int64_t dimension);
Op Concatenate(Builder* builder, absl::Span<const Op> operands, int64_t dimension);
Op Pad(Op operand, Op padding_value, const PaddingConfig& padding_config);
Op GetDimensionSize(Op operand, int64_t dimension);
Op SetDimensionSize(Op operand, Op size, int64_t dimension);

// ---- Types ----
Op ConvertElementType(Op operand, ElementType new_element_type);
// Between equal widths element-wise; between different widths the minor-most
// dimension grows or shrinks by the width ratio.
Op BitcastConvertType(Op operand, ElementType new_element_type);
Op ReducePrecision(Op operand, int64_t exponent_bits, int64_t mantissa_bits);

// ---- Tuples ----
Op Tuple(Builder* builder, absl::Span<const Op> elements);
Op GetTupleElement(Op tuple, int64_t index);

// ---- Linear algebra ----
Op Dot(Op lhs, Op rhs, std::vector<Precision> precision = {});
Op DotGeneral(Op lhs, Op rhs, const DotDimensionNumbers& dimension_numbers,
              std::vector<Precision> precision = {});
// Default dimension numbers: lhs b,f,spatial...; rhs o,i,spatial...; out b,f,spatial...
ConvolutionDimensionNumbers DefaultConvolutionDimensionNumbers(int64_t num_spatial_dims);
Op Conv(Op lhs, Op rhs, absl::Span<const int64_t> window_strides, Padding padding,
        int64_t feature_group_count = 1, int64_t batch_group_count = 1);
Op ConvWithGeneralPadding(Op lhs, Op rhs, absl::Span<const int64_t> window_strides,
                          absl::Span<const std::pair<int64_t, int64_t>> padding,
                          int64_t feature_group_count = 1, int64_t batch_group_count = 1);
Op ConvGeneralDilated(Op lhs, Op rhs, absl::Span<const int64_t> window_strides,
                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                      absl::Span<const int64_t> lhs_dilation,
                      absl::Span<const int64_t> rhs_dilation,
                      const ConvolutionDimensionNumbers& dimension_numbers,
                      int64_t feature_group_count = 1, int64_t batch_group_count = 1);
Op Fft(Op operand, FftType fft_type, absl::Span<const int64_t> fft_length);
Op Cholesky(Op a, bool lower);
Op TriangularSolve(Op a, Op b, bool left_side, bool lower, bool unit_diagonal,
                   TriangularSolveTranspose transpose_a);
Op BatchNormTraining(Op operand, Op scale, Op offset, float epsilon, int64_t feature_index);
Op BatchNormInference(Op operand, Op scale, Op offset, Op mean, Op variance, float epsilon,
                      int64_t feature_index);
Op BatchNormGrad(Op operand, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                 int64_t feature_index);

// ---- Reductions and windows ----
Op Reduce(Op operand, Op init_value, Computation* computation,
          absl::Span<const int64_t> dimensions_to_reduce);
Op Reduce(Builder* builder, absl::Span<const Op> operands, absl::Span<const Op> init_values,
          Computation* computation, absl::Span<const int64_t> dimensions_to_reduce);
Op ReduceWindow(Op operand, Op init_value, Computation* computation,
                absl::Span<const int64_t> window_dimensions,
                absl::Span<const int64_t> window_strides, Padding padding);
Op ReduceWindow(Builder* builder, absl::Span<const Op> operands, absl::Span<const Op> init_values,
                Computation* computation, absl::Span<const int64_t> window_dimensions,
                absl::Span<const int64_t> window_strides, Padding padding);
Op ReduceWindowWithGeneralPadding(Builder* builder, absl::Span<const Op> operands,
                                  absl::Span<const Op> init_values, Computation* computation,
                                  absl::Span<const int64_t> window_dimensions,
                                  absl::Span<const int64_t> window_strides,
                                  absl::Span<const int64_t> base_dilations,
                                  absl::Span<const int64_t> window_dilations,
                                  absl::Span<const std::pair<int64_t, int64_t>> padding);
Op SelectAndScatter(Op operand, Computation* select, absl::Span<const int64_t> window_dimensions,
                    absl::Span<const int64_t> window_strides, Padding padding, Op source,
                    Op init_value, Computation* scatter);
Op SelectAndScatterWithGeneralPadding(Op operand, Computation* select,
                                      absl::Span<const int64_t> window_dimensions,
                                      absl::Span<const int64_t> window_strides,
                                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                                      Op source, Op init_value, Computation* scatter);
Op Map(Builder* builder, absl::Span<const Op> operands, Computation* computation,
       absl::Span<const int64_t> dimensions);
// dimension -1 sorts along the last dimension.
Op Sort(absl::Span<const Op> operands, Computation* comparator, int64_t dimension = -1,
        bool is_stable = false);
Op TopK(Op operand, int64_t k, bool largest = true);
Op Gather(Op operand, Op start_indices, const GatherDimensionNumbers& dimension_numbers,
          absl::Span<const int64_t> slice_sizes, bool indices_are_sorted = false);
Op Scatter(Op operand, Op scatter_indices, Op updates, Computation* update_computation,
           const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted = false,
           bool unique_indices = false);
Op Scatter(absl::Span<const Op> operands, Op scatter_indices, absl::Span<const Op> updates,
           Computation* update_computation, const ScatterDimensionNumbers& dimension_numbers,
           bool indices_are_sorted = false, bool unique_indices = false);

// ---- Control flow and calls ----
Op Call(Builder* builder, Computation* computation, absl::Span<const Op> operands);
// A call with is_composite=true; name, attributes and version go to the
// composite.* frontend attributes.
Op CompositeCall(Builder* builder, Computation* computation, absl::Span<const Op> operands,
                 absl::string_view name, std::optional<absl::string_view> attributes = std::nullopt,
                 std::optional<int64_t> version = std::nullopt);
Op Conditional(Op predicate, Op true_operand, Computation* true_computation, Op false_operand,
               Computation* false_computation);
Op Conditional(Op branch_index, absl::Span<Computation* const> branch_computations,
               absl::Span<const Op> branch_operands);
Op While(Computation* condition, Computation* body, Op init);
Op CustomCall(Builder* builder, absl::string_view call_target_name, absl::Span<const Op> operands,
              const Shape& shape, absl::string_view opaque = "", bool has_side_effect = false);

// ---- Random numbers ----
Op RngNormal(Op mu, Op sigma, const Shape& shape);
Op RngUniform(Op a, Op b, const Shape& shape);
// Result: (new state, random bits of `shape`).
Op RngBitGenerator(RandomAlgorithm algorithm, Op initial_state, const Shape& shape);

// ---- Tokens, I/O, channels ----
Op CreateToken(Builder* builder);
Op AfterAll(Builder* builder, absl::Span<const Op> tokens);
// Infeed returns the data; InfeedWithToken the (data, token) tuple.
Op Infeed(Builder* builder, const Shape& shape, absl::string_view config = "");
Op InfeedWithToken(Op token, const Shape& shape, absl::string_view config = "");
Op OutfeedWithToken(Op operand, Op token, const Shape& shape_with_layout,
                    absl::string_view outfeed_config = "");
// Send returns send-done's token; Recv returns the received data.
Op Send(Op operand, int64_t channel_id);
Op Recv(Builder* builder, const Shape& shape, int64_t channel_id);
Op SendWithToken(Op operand, Op token, int64_t channel_id);
Op RecvWithToken(Op token, const Shape& shape, int64_t channel_id);  // (data, token)

// ---- Collectives ----
using ReplicaGroups = std::vector<std::vector<int64_t>>;
Op ReplicaId(Builder* builder);
Op PartitionId(Builder* builder);
Op AllGather(Op operand, int64_t all_gather_dimension, int64_t shard_count,
             const ReplicaGroups& replica_groups = {},
             std::optional<int64_t> channel_id = std::nullopt);
Op AllReduce(Op operand, Computation* computation, const ReplicaGroups& replica_groups = {},
             std::optional<int64_t> channel_id = std::nullopt);
// split_dimension != concat_dimension lowers to reshape, all-to-all,
// transpose, reshape.
Op AllToAll(Op operand, int64_t split_dimension, int64_t concat_dimension, int64_t split_count,
            const ReplicaGroups& replica_groups = {});
Op CollectivePermute(Op operand, absl::Span<const std::pair<int64_t, int64_t>> source_target_pairs);
Op ReduceScatter(Op operand, Computation* computation, int64_t scatter_dimension,
                 int64_t shard_count, const ReplicaGroups& replica_groups = {},
                 std::optional<int64_t> channel_id = std::nullopt);
Op CrossReplicaSum(Op operand, const ReplicaGroups& replica_groups = {});

// ---- Scalar computations for reducers and comparators ----
// (a, b) -> a OP b over scalars of `type`, added to builder's module.
Computation* CreateScalarAddComputation(Builder* builder, ElementType type);
Computation* CreateScalarMultiplyComputation(Builder* builder, ElementType type);
Computation* CreateScalarMaxComputation(Builder* builder, ElementType type);
Computation* CreateScalarMinComputation(Builder* builder, ElementType type);
Computation* CreateScalarAndComputation(Builder* builder, ElementType type);
Computation* CreateScalarOrComputation(Builder* builder, ElementType type);
// A sort comparator over `types` (one per operand) comparing operand 0 with
// LT (ascending) or GT (descending).
Computation* CreateScalarLtComputation(Builder* builder, absl::Span<const ElementType> types);
Computation* CreateScalarGtComputation(Builder* builder, absl::Span<const ElementType> types);

}  // namespace xjit

#endif  // XJIT_IR_BUILDER_H_
