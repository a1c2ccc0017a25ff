// The evaluator's data-movement operations and the element helpers shared by
// the driver's files (see interpreter/evaluator_internal.h). Every operation is written
// as "for each result index, which operand element (or padding value) goes
// there", the direct reading of the operation semantics.
#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "interpreter/evaluator_internal.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using Index = absl::Span<const int64_t>;

// ---- Shared helpers ----

void CopyElement(const Literal& source, Index source_index, Literal& target, Index target_index) {
  if (source.shape().element_type() == ElementType::kC128) {
    target.SetComplex(target_index, source.GetComplex(source_index));
  } else {
    target.SetBits(target_index, source.GetBits(source_index));
  }
}

unsigned __int128 GetRawBits(const Literal& literal, Index index) {
  if (literal.shape().element_type() == ElementType::kC128) {
    const std::complex<double> c = literal.GetComplex(index);
    return static_cast<unsigned __int128>(std::bit_cast<uint64_t>(c.real())) |
           (static_cast<unsigned __int128>(std::bit_cast<uint64_t>(c.imag())) << 64);
  }
  return literal.GetBits(index);
}

void SetRawBits(Literal& literal, Index index, unsigned __int128 bits) {
  if (literal.shape().element_type() == ElementType::kC128) {
    const double re = std::bit_cast<double>(static_cast<uint64_t>(bits));
    const double im = std::bit_cast<double>(static_cast<uint64_t>(bits >> 64));
    literal.SetComplex(index, std::complex<double>(re, im));
    return;
  }
  literal.SetBits(index, static_cast<uint64_t>(bits));
}

Shape WithRuntimeDimensions(const Shape& shape, Index dimensions) {
  Shape result = shape;
  if (!result.IsArray() || result.rank() != static_cast<int64_t>(dimensions.size())) {
    return result;
  }
  for (int64_t i = 0; i < result.rank(); ++i) {
    if (result.dimensions(i) != dimensions[i]) {
      result.set_dimensions(i, dimensions[i]);
      result.set_dynamic_dimension(i, true);
    }
  }
  return result;
}

absl::Status RequireStaticOperands(const Instruction& instruction, Operands operands) {
  for (size_t i = 0; i < operands.size() && static_cast<int64_t>(i) < instruction.operand_count();
       ++i) {
    const Shape& value = operands[i]->shape();
    const Shape& declared = instruction.operand(i)->shape();
    if (value.IsArray() && declared.IsArray() && !value.SameDimensions(declared)) {
      return absl::UnimplementedError(absl::StrFormat(
          "evaluator: %s of a dynamically sized operand (%s, declared %s) is not supported yet",
          OpcodeName(instruction.opcode()), value.ToString(), declared.ToString()));
    }
  }
  return absl::OkStatus();
}

int64_t ReadIndexScalar(const Literal& literal) {
  const ElementType type = literal.shape().element_type();
  const uint64_t bits = literal.GetBits({});
  const int width = BitWidth(type);
  if (IsSignedInteger(type)) {
    if (width >= 64) return static_cast<int64_t>(bits);
    const uint64_t sign = uint64_t{1} << (width - 1);
    const uint64_t masked = bits & ((uint64_t{1} << width) - 1);
    return static_cast<int64_t>((masked ^ sign) - sign);
  }
  const uint64_t masked = width >= 64 ? bits : bits & ((uint64_t{1} << width) - 1);
  return masked > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(masked);
}

std::string Describe(const Instruction& instruction) {
  return absl::StrCat(instruction.name(), " (", OpcodeName(instruction.opcode()), ")");
}

// The runtime shape of a value of static shape `shape` whose arrays have the
// dimensions of `value` (recursively through tuples).
Shape RuntimeShapeLike(const Shape& shape, const Shape& value) {
  if (shape.IsTuple() && value.IsTuple() && shape.tuple_size() == value.tuple_size()) {
    std::vector<Shape> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(RuntimeShapeLike(shape.tuple_shapes(i), value.tuple_shapes(i)));
    }
    return Shape::Tuple(std::move(elements));
  }
  if (shape.IsArray() && value.IsArray()) return WithRuntimeDimensions(shape, value.dimensions());
  return shape;
}

namespace {

absl::Status Invalid(const Instruction& instruction, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat(OpcodeName(instruction.opcode()), ": ", message));
}

bool IsPermutation(Index permutation, int64_t rank) {
  if (static_cast<int64_t>(permutation.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t p : permutation) {
    if (p < 0 || p >= rank || seen[p]) return false;
    seen[p] = true;
  }
  return true;
}

absl::StatusOr<Literal> Broadcast(const Instruction& instruction, const Literal& operand) {
  const Shape& shape = instruction.shape();
  const std::vector<int64_t>& dims = instruction.attrs().dimensions;
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(dims.size()) != rank) {
    return Invalid(instruction, "dimensions= needs one entry per operand dimension");
  }
  std::vector<int64_t> out_dims(shape.dimensions().begin(), shape.dimensions().end());
  std::vector<bool> expand(rank, false);
  for (int64_t k = 0; k < rank; ++k) {
    if (dims[k] < 0 || dims[k] >= shape.rank()) return Invalid(instruction, "dimension out of range");
    // Equal sizes, a smaller runtime size of a dynamic dimension, or (as
    // StableHLO's broadcast_in_dim allows) a size-1 dimension that repeats.
    const int64_t size = operand.shape().dimensions(k);
    if (size == 1 && shape.dimensions(dims[k]) != 1) {
      expand[k] = true;
      continue;
    }
    if (size > shape.dimensions(dims[k])) {
      return Invalid(instruction, "operand dimension size differs from the result's");
    }
    out_dims[dims[k]] = size;
  }
  Literal result(WithRuntimeDimensions(shape, out_dims));
  std::vector<int64_t> source(rank);
  ForEachIndex(result.shape().dimensions(), [&](Index index) {
    for (int64_t k = 0; k < rank; ++k) source[k] = expand[k] ? 0 : index[dims[k]];
    CopyElement(operand, source, result, index);
  });
  return result;
}

absl::StatusOr<Literal> Reshape(const Shape& shape, const Literal& operand,
                                const Instruction& instruction) {
  Literal result(shape);
  if (result.element_count() != operand.element_count()) {
    return Invalid(instruction, absl::StrFormat("element counts differ (%d vs %d)",
                                                result.element_count(), operand.element_count()));
  }
  // Both sides walk their logical row-major order.
  std::vector<int64_t> source(operand.shape().rank(), 0);
  const auto source_dims = operand.shape().dimensions();
  ForEachIndex(result.shape().dimensions(), [&](Index index) {
    CopyElement(operand, source, result, index);
    for (int64_t i = static_cast<int64_t>(source.size()) - 1; i >= 0; --i) {
      if (++source[i] < source_dims[i]) break;
      source[i] = 0;
    }
  });
  return result;
}

absl::StatusOr<Literal> Transpose(const Instruction& instruction, const Literal& operand) {
  const std::vector<int64_t>& permutation = instruction.attrs().dimensions;
  const int64_t rank = operand.shape().rank();
  if (!IsPermutation(permutation, rank)) {
    return Invalid(instruction, "dimensions= must be a permutation of the operand dimensions");
  }
  std::vector<int64_t> out_dims(rank);
  for (int64_t i = 0; i < rank; ++i) out_dims[i] = operand.shape().dimensions(permutation[i]);
  Literal result(WithRuntimeDimensions(instruction.shape(), out_dims));
  std::vector<int64_t> source(rank);
  ForEachIndex(result.shape().dimensions(), [&](Index index) {
    for (int64_t i = 0; i < rank; ++i) source[permutation[i]] = index[i];
    CopyElement(operand, source, result, index);
  });
  return result;
}

absl::StatusOr<Literal> Slice(const Instruction& instruction, const Literal& operand) {
  const std::vector<SliceDimension>& slice = instruction.attrs().slice;
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(slice.size()) != rank) {
    return Invalid(instruction, "slice= needs one range per dimension");
  }
  for (int64_t i = 0; i < rank; ++i) {
    const SliceDimension& s = slice[i];
    if (s.stride <= 0 || s.start < 0 || s.limit < s.start ||
        s.limit > operand.shape().dimensions(i)) {
      return Invalid(instruction, absl::StrFormat("invalid slice [%d:%d:%d] of dimension %d size %d",
                                                  s.start, s.limit, s.stride, i,
                                                  operand.shape().dimensions(i)));
    }
    // Ceiling division that cannot overflow (a stride near INT64_MAX).
    const int64_t extent = s.limit - s.start;
    if (instruction.shape().dimensions(i) != extent / s.stride + (extent % s.stride != 0)) {
      return Invalid(instruction, "result shape does not match the slice");
    }
  }
  Literal result(instruction.shape());
  std::vector<int64_t> source(rank);
  ForEachIndex(result.shape().dimensions(), [&](Index index) {
    for (int64_t i = 0; i < rank; ++i) source[i] = slice[i].start + index[i] * slice[i].stride;
    CopyElement(operand, source, result, index);
  });
  return result;
}

absl::StatusOr<Literal> Pad(const Instruction& instruction, const Literal& operand,
                            const Literal& padding_value) {
  const PaddingConfig& padding = instruction.attrs().padding;
  const int64_t rank = operand.shape().rank();
  if (static_cast<int64_t>(padding.size()) != rank) {
    return Invalid(instruction, "padding= needs one entry per dimension");
  }
  for (int64_t i = 0; i < rank; ++i) {
    const PaddingDimension& p = padding[i];
    const int64_t n = operand.shape().dimensions(i);
    const int64_t expected = p.low + p.high + n + std::max<int64_t>(n - 1, 0) * p.interior;
    if (p.interior < 0 || expected != instruction.shape().dimensions(i)) {
      return Invalid(instruction, "result shape does not match the padding");
    }
  }
  if (padding_value.shape().rank() != 0) return Invalid(instruction, "padding value must be a scalar");
  Literal result(instruction.shape());
  std::vector<int64_t> source(rank);
  ForEachIndex(result.shape().dimensions(), [&](Index index) {
    bool is_padding = false;
    for (int64_t i = 0; i < rank && !is_padding; ++i) {
      const int64_t offset = index[i] - padding[i].low;
      const int64_t step = padding[i].interior + 1;
      if (offset < 0 || offset % step != 0 || offset / step >= operand.shape().dimensions(i)) {
        is_padding = true;
      } else {
        source[i] = offset / step;
      }
    }
    if (is_padding) {
      CopyElement(padding_value, {}, result, index);
    } else {
      CopyElement(operand, source, result, index);
    }
  });
  return result;
}

absl::StatusOr<Literal> Concatenate(const Instruction& instruction, Operands operands) {
  if (instruction.attrs().dimensions.size() != 1) {
    return Invalid(instruction, "dimensions= needs exactly one dimension");
  }
  const int64_t dimension = instruction.attrs().dimensions[0];
  const int64_t rank = instruction.shape().rank();
  if (dimension < 0 || dimension >= rank) return Invalid(instruction, "dimension out of range");
  int64_t total = 0;
  for (const Literal* operand : operands) {
    if (operand->shape().rank() != rank) return Invalid(instruction, "operand ranks differ");
    total += operand->shape().dimensions(dimension);
  }
  if (total != instruction.shape().dimensions(dimension)) {
    return Invalid(instruction, "result shape does not match the operands");
  }
  Literal result(instruction.shape());
  int64_t offset = 0;
  std::vector<int64_t> target(rank);
  for (const Literal* operand : operands) {
    ForEachIndex(operand->shape().dimensions(), [&](Index index) {
      std::copy(index.begin(), index.end(), target.begin());
      target[dimension] += offset;
      CopyElement(*operand, index, result, target);
    });
    offset += operand->shape().dimensions(dimension);
  }
  return result;
}

absl::StatusOr<Literal> Reverse(const Instruction& instruction, const Literal& operand) {
  const int64_t rank = operand.shape().rank();
  std::vector<bool> reversed(rank, false);
  for (int64_t d : instruction.attrs().dimensions) {
    if (d < 0 || d >= rank) return Invalid(instruction, "dimension out of range");
    reversed[d] = true;
  }
  Literal result(WithRuntimeDimensions(instruction.shape(), operand.shape().dimensions()));
  std::vector<int64_t> source(rank);
  ForEachIndex(operand.shape().dimensions(), [&](Index index) {
    for (int64_t i = 0; i < rank; ++i) {
      source[i] = reversed[i] ? operand.shape().dimensions(i) - 1 - index[i] : index[i];
    }
    CopyElement(operand, source, result, index);
  });
  return result;
}

// Start indices of dynamic-slice / dynamic-update-slice: either one scalar per
// dimension or (the older form) one rank-1 array. Each is clamped into
// [0, operand_dim - size].
absl::StatusOr<std::vector<int64_t>> StartIndices(const Instruction& instruction,
                                                  Operands index_operands, const Shape& operand,
                                                  Index sizes) {
  const int64_t rank = operand.rank();
  std::vector<int64_t> starts(rank, 0);
  if (index_operands.size() == 1 && index_operands[0]->shape().rank() == 1) {
    const Literal& vector = *index_operands[0];
    if (vector.shape().dimensions(0) != rank) {
      return Invalid(instruction, "start index vector needs one entry per dimension");
    }
    for (int64_t i = 0; i < rank; ++i) {
      Literal scalar(Shape::Scalar(vector.shape().element_type()));
      scalar.SetBits({}, vector.GetBits({i}));
      starts[i] = ReadIndexScalar(scalar);
    }
  } else {
    if (static_cast<int64_t>(index_operands.size()) != rank) {
      return Invalid(instruction, "needs one start index per operand dimension");
    }
    for (int64_t i = 0; i < rank; ++i) {
      const Literal& index = *index_operands[i];
      if (!index.shape().IsArray() || index.shape().rank() != 0 ||
          !IsInteger(index.shape().element_type())) {
        return Invalid(instruction, "start indices must be integer scalars");
      }
      starts[i] = ReadIndexScalar(index);
    }
  }
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t largest = operand.dimensions(i) - sizes[i];
    if (largest < 0) return Invalid(instruction, "slice size exceeds the operand dimension");
    starts[i] = std::clamp<int64_t>(starts[i], 0, largest);
  }
  return starts;
}

absl::StatusOr<Literal> DynamicSlice(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const Shape& shape = instruction.shape();
  if (shape.rank() != operand.shape().rank()) return Invalid(instruction, "rank mismatch");
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        StartIndices(instruction, operands.subspan(1), operand.shape(),
                                     shape.dimensions()));
  Literal result(shape);
  std::vector<int64_t> source(shape.rank());
  ForEachIndex(shape.dimensions(), [&](Index index) {
    for (int64_t i = 0; i < shape.rank(); ++i) source[i] = starts[i] + index[i];
    CopyElement(operand, source, result, index);
  });
  return result;
}

absl::StatusOr<Literal> DynamicUpdateSlice(const Instruction& instruction, Operands operands) {
  const Literal& operand = *operands[0];
  const Literal& update = *operands[1];
  if (update.shape().rank() != operand.shape().rank()) return Invalid(instruction, "rank mismatch");
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> starts,
                        StartIndices(instruction, operands.subspan(2), operand.shape(),
                                     update.shape().dimensions()));
  Literal result = operand.Relayout(instruction.shape());
  const int64_t rank = operand.shape().rank();
  std::vector<int64_t> target(rank);
  ForEachIndex(update.shape().dimensions(), [&](Index index) {
    for (int64_t i = 0; i < rank; ++i) target[i] = starts[i] + index[i];
    CopyElement(update, index, result, target);
  });
  return result;
}

absl::StatusOr<Literal> Iota(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  const int64_t dimension = instruction.attrs().iota_dimension;
  if (!shape.IsArray() || dimension < 0 || dimension >= shape.rank()) {
    return Invalid(instruction, "iota_dimension out of range");
  }
  const ElementType type = shape.element_type();
  Literal result(shape);
  ForEachIndex(shape.dimensions(), [&](Index index) {
    const int64_t value = index[dimension];
    if (IsComplex(type)) {
      result.SetComplex(index, std::complex<double>(static_cast<double>(value), 0.0));
    } else if (IsFloat(type)) {
      result.SetDouble(index, static_cast<double>(value));
    } else if (IsPred(type)) {
      result.SetBits(index, value != 0 ? 1 : 0);
    } else {
      result.SetInt(index, value);
    }
  });
  return result;
}

absl::StatusOr<Literal> Bitcast(const Instruction& instruction, const Literal& operand) {
  Literal result(instruction.shape());
  if (!result.shape().IsArray() || !operand.shape().IsArray()) {
    return absl::UnimplementedError("bitcast of tuples is not supported");
  }
  if (result.data().size() != operand.data().size()) {
    return Invalid(instruction,
                   absl::StrFormat("operand has %d bytes but the result needs %d (%s -> %s)",
                                   operand.data().size(), result.data().size(),
                                   operand.shape().ToString(), result.shape().ToString()));
  }
  if (!result.data().empty()) {
    std::memcpy(result.data().data(), operand.data().data(), result.data().size());
  }
  return result;
}

absl::StatusOr<Literal> SetDimensionSize(const Instruction& instruction, const Literal& operand,
                                         const Literal& size_literal) {
  if (instruction.attrs().dimensions.size() != 1) {
    return Invalid(instruction, "dimensions= needs exactly one dimension");
  }
  const int64_t dimension = instruction.attrs().dimensions[0];
  const Shape& shape = instruction.shape();
  if (dimension < 0 || dimension >= shape.rank()) return Invalid(instruction, "dimension out of range");
  if (size_literal.shape().rank() != 0 || !IsInteger(size_literal.shape().element_type())) {
    return Invalid(instruction, "size must be an integer scalar");
  }
  const int64_t size = ReadIndexScalar(size_literal);
  const int64_t bound = shape.dimensions(dimension);
  if (size < 0 || size > bound) {
    return Invalid(instruction,
                   absl::StrFormat("size %d is outside [0, %d] for dimension %d", size, bound,
                                   dimension));
  }
  std::vector<int64_t> dims(operand.shape().dimensions().begin(),
                            operand.shape().dimensions().end());
  dims[dimension] = size;
  Shape result_shape = WithRuntimeDimensions(shape, dims);
  result_shape.set_dynamic_dimension(dimension, true);
  Literal result(result_shape);
  // Elements beyond the operand's own runtime size (when it grows) are zero.
  ForEachIndex(result_shape.dimensions(), [&](Index index) {
    if (index[dimension] < operand.shape().dimensions(dimension)) {
      CopyElement(operand, index, result, index);
    }
  });
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalDataMovement(const Instruction& instruction, Operands operands) {
  const Opcode opcode = instruction.opcode();
  auto need = [&](int64_t n) -> absl::Status {
    if (static_cast<int64_t>(operands.size()) < n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s takes %d operands, got %d", OpcodeName(opcode), n, operands.size()));
    }
    return absl::OkStatus();
  };
  auto need_arrays = [&]() -> absl::Status {
    for (const Literal* operand : operands) {
      if (!operand->shape().IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpcodeName(opcode), " takes array operands"));
      }
    }
    if (!instruction.shape().IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " has an array result"));
    }
    return absl::OkStatus();
  };
  switch (opcode) {
    case Opcode::kBroadcast:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      return Broadcast(instruction, *operands[0]);
    case Opcode::kReshape:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return Reshape(instruction.shape(), *operands[0], instruction);
    case Opcode::kDynamicReshape: {
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      // The operand's runtime elements, in row-major order, fill the result's
      // runtime dimensions; so a dynamically sized operand is fine here.
      const Shape& shape = instruction.shape();
      if (static_cast<int64_t>(operands.size()) != 1 + shape.rank()) {
        return Invalid(instruction, "needs one size operand per result dimension");
      }
      std::vector<int64_t> dims(shape.rank());
      for (int64_t i = 0; i < shape.rank(); ++i) {
        dims[i] = ReadIndexScalar(*operands[1 + i]);
        if (dims[i] < 0 || dims[i] > shape.dimensions(i)) {
          return Invalid(instruction, absl::StrFormat("size %d of dimension %d exceeds its bound %d",
                                                      dims[i], i, shape.dimensions(i)));
        }
      }
      return Reshape(WithRuntimeDimensions(shape, dims), *operands[0], instruction);
    }
    case Opcode::kTranspose:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      return Transpose(instruction, *operands[0]);
    case Opcode::kSlice:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return Slice(instruction, *operands[0]);
    case Opcode::kPad:
      XJIT_RETURN_IF_ERROR(need(2));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return Pad(instruction, *operands[0], *operands[1]);
    case Opcode::kConcatenate:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return Concatenate(instruction, operands);
    case Opcode::kReverse:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      return Reverse(instruction, *operands[0]);
    case Opcode::kDynamicSlice:
      XJIT_RETURN_IF_ERROR(need(2));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return DynamicSlice(instruction, operands);
    case Opcode::kDynamicUpdateSlice:
      XJIT_RETURN_IF_ERROR(need(3));
      XJIT_RETURN_IF_ERROR(need_arrays());
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return DynamicUpdateSlice(instruction, operands);
    case Opcode::kIota:
      return Iota(instruction);
    case Opcode::kCopy:
      XJIT_RETURN_IF_ERROR(need(1));
      return operands[0]->Relayout(RuntimeShapeLike(instruction.shape(), operands[0]->shape()));
    case Opcode::kBitcast:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return Bitcast(instruction, *operands[0]);
    case Opcode::kGetDimensionSize: {
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(need_arrays());
      if (instruction.attrs().dimensions.size() != 1) {
        return Invalid(instruction, "dimensions= needs exactly one dimension");
      }
      const int64_t dimension = instruction.attrs().dimensions[0];
      if (dimension < 0 || dimension >= operands[0]->shape().rank()) {
        return Invalid(instruction, "dimension out of range");
      }
      Literal result(instruction.shape());
      result.SetInt({}, operands[0]->shape().dimensions(dimension));
      return result;
    }
    case Opcode::kSetDimensionSize:
      XJIT_RETURN_IF_ERROR(need(2));
      XJIT_RETURN_IF_ERROR(need_arrays());
      return SetDimensionSize(instruction, *operands[0], *operands[1]);
    default:
      return absl::InternalError(
          absl::StrCat("EvalDataMovement called for ", OpcodeName(opcode)));
  }
}

}  // namespace xjit::eval
