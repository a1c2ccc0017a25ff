// Shared helpers of the evaluator's per-family files; see ops_internal.h.
#include "interpreter/ops_internal.h"

#include <cmath>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/element_type.h"
#include "ir/instruction.h"
#include "ir/opcode.h"
#include "ir/status_macros.h"

namespace xjit::eval::internal {

bool NextIndex(absl::Span<const int64_t> dims, Index& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

int64_t ElementCount(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

absl::Status ForEachIndex(absl::Span<const int64_t> dims,
                          const std::function<absl::Status(const Index&)>& fn) {
  for (int64_t d : dims) {
    if (d <= 0) return absl::OkStatus();
  }
  Index index(dims.size(), 0);
  do {
    absl::Status status = fn(index);
    if (!status.ok()) return status;
  } while (NextIndex(dims, index));
  return absl::OkStatus();
}

Shape WithDims(const Shape& shape, absl::Span<const int64_t> dims) {
  Shape result = shape;
  if (result.IsArray() && result.rank() == static_cast<int64_t>(dims.size())) {
    for (int64_t i = 0; i < result.rank(); ++i) result.set_dimensions(i, dims[i]);
  }
  return result;
}

double ReadDouble(const Literal& literal, absl::Span<const int64_t> index) {
  ElementType type = literal.shape().element_type();
  if (IsFloat(type)) return literal.GetDouble(index);
  if (IsComplex(type)) return literal.GetComplex(index).real();
  if (IsUnsignedInteger(type)) return static_cast<double>(literal.GetBits(index));
  return static_cast<double>(literal.GetInt(index));
}

std::complex<double> ReadComplex(const Literal& literal, absl::Span<const int64_t> index) {
  if (IsComplex(literal.shape().element_type())) return literal.GetComplex(index);
  return {ReadDouble(literal, index), 0.0};
}

uint64_t ReadIntBits(const Literal& literal, absl::Span<const int64_t> index) {
  ElementType type = literal.shape().element_type();
  if (IsFloat(type) || IsComplex(type)) {
    double value = ReadDouble(literal, index);
    if (std::isnan(value)) return 0;
    if (value >= 9.2233720368547758e18) return static_cast<uint64_t>(INT64_MAX);
    if (value <= -9.2233720368547758e18) return static_cast<uint64_t>(INT64_MIN);
    return static_cast<uint64_t>(static_cast<int64_t>(value));
  }
  if (IsUnsignedInteger(type)) return literal.GetBits(index);
  return static_cast<uint64_t>(literal.GetInt(index));
}

int64_t ReadIndexValue(const Literal& literal, absl::Span<const int64_t> index) {
  ElementType type = literal.shape().element_type();
  if (IsUnsignedInteger(type)) {
    uint64_t bits = literal.GetBits(index);
    return bits > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(bits);
  }
  return static_cast<int64_t>(ReadIntBits(literal, index));
}

void WriteDouble(Literal& literal, absl::Span<const int64_t> index, double value) {
  ElementType type = literal.shape().element_type();
  if (IsFloat(type)) {
    literal.SetDouble(index, value);
  } else if (IsComplex(type)) {
    literal.SetComplex(index, {value, 0.0});
  } else if (IsPred(type)) {
    literal.SetInt(index, value != 0 ? 1 : 0);
  } else {
    // Float to integer: truncation toward zero, saturating (as a convert).
    if (std::isnan(value)) {
      literal.SetInt(index, 0);
    } else if (IsUnsignedInteger(type) && value >= 1.8446744073709552e19) {
      literal.SetBits(index, ~uint64_t{0});
    } else if (IsUnsignedInteger(type) && value >= 9.2233720368547758e18) {
      literal.SetBits(index, static_cast<uint64_t>(value));
    } else if (value >= 9.2233720368547758e18) {
      literal.SetInt(index, INT64_MAX);
    } else if (value <= -9.2233720368547758e18) {
      literal.SetInt(index, INT64_MIN);
    } else {
      literal.SetInt(index, static_cast<int64_t>(value));
    }
  }
}

void WriteComplex(Literal& literal, absl::Span<const int64_t> index, std::complex<double> value) {
  if (IsComplex(literal.shape().element_type())) {
    literal.SetComplex(index, value);
  } else {
    WriteDouble(literal, index, value.real());
  }
}

void WriteIntBits(Literal& literal, absl::Span<const int64_t> index, uint64_t value) {
  ElementType type = literal.shape().element_type();
  if (IsPred(type)) {
    literal.SetInt(index, value != 0 ? 1 : 0);
  } else if (IsFloat(type) || IsComplex(type)) {
    WriteDouble(literal, index, static_cast<double>(static_cast<int64_t>(value)));
  } else {
    literal.SetInt(index, static_cast<int64_t>(value));
  }
}

std::vector<int64_t> RowMajorStrides(absl::Span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (int64_t d = static_cast<int64_t>(dims.size()) - 2; d >= 0; --d) {
    strides[d] = strides[d + 1] * dims[d + 1];
  }
  return strides;
}

namespace {

template <typename T, typename Read>
std::vector<T> Dense(const Literal& literal, Read read) {
  std::vector<T> values;
  values.reserve(literal.element_count());
  absl::Status status = ForEachIndex(literal.shape().dimensions(), [&](const Index& index) {
    values.push_back(read(literal, index));
    return absl::OkStatus();
  });
  (void)status;  // The callback never fails.
  return values;
}

}  // namespace

std::vector<double> DenseDoubles(const Literal& literal) {
  return Dense<double>(literal, ReadDouble);
}

std::vector<std::complex<double>> DenseComplexes(const Literal& literal) {
  return Dense<std::complex<double>>(literal, ReadComplex);
}

std::vector<uint64_t> DenseIntBits(const Literal& literal) {
  return Dense<uint64_t>(literal, ReadIntBits);
}

Literal ScalarFrom(const Literal& literal, absl::Span<const int64_t> index) {
  Literal scalar(Shape::Scalar(literal.shape().element_type()));
  CopyElement(literal, index, scalar, {});
  return scalar;
}

void CopyElement(const Literal& from, absl::Span<const int64_t> from_index, Literal& to,
                 absl::Span<const int64_t> to_index) {
  // c128 is the one type wider than GetBits's 64 bits; its parts are doubles,
  // which GetComplex and SetComplex carry exactly.
  if (from.shape().element_type() == ElementType::kC128) {
    to.SetComplex(to_index, from.GetComplex(from_index));
  } else {
    to.SetBits(to_index, from.GetBits(from_index));
  }
}

absl::StatusOr<std::vector<Literal>> CallScalars(const Context& context,
                                                 const Computation& computation,
                                                 absl::Span<const Literal* const> args,
                                                 int64_t expected_count) {
  if (!context.call) {
    return absl::InternalError("evaluator context has no way to call computations");
  }
  XJIT_ASSIGN_OR_RETURN(Literal result, context.call(computation, args));
  std::vector<Literal> values;
  if (result.shape().IsTuple()) {
    values = std::move(*result.mutable_elements());
  } else {
    values.push_back(std::move(result));
  }
  if (static_cast<int64_t>(values.size()) != expected_count) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " returned ", values.size(),
                     " values; expected ", expected_count));
  }
  for (const Literal& value : values) {
    if (!value.shape().IsArray() || value.element_count() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "computation ", computation.name(), " must return scalars; got ",
          value.shape().ToString()));
    }
  }
  return values;
}

bool ScalarIsTrue(const Literal& literal) {
  Index index(literal.shape().rank(), 0);
  return literal.GetBits(index) != 0;
}

absl::Status OperandError(const Instruction& instruction, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(OpcodeName(instruction.opcode()), " ",
                                                 instruction.name(), ": ", what));
}

}  // namespace xjit::eval::internal
