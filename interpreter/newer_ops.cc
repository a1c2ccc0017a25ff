// Evaluation of XLA's newer opcodes, whose semantics come from XLA's own
// expansions of them (read for facts only):
//   - ragged-dot (xla/hlo/transforms/expanders/ragged_dot_rewriter.cc, and the
//     group_sizes forms of jax.lax.ragged_dot_general's documentation): the
//     lhs ragged dimension is split into consecutive groups of group_sizes
//     rows (group g covers [sum of sizes before g, that + size g)).
//       * ragged non-contracting dimension (rhs_group_dims={d}): an lhs row in
//         group g is multiplied with rhs group g; rows in no group give 0.
//       * ragged contracting dimension: result [g, batch..., lhs free...,
//         rhs free...], group g contracting only over its range.
//       * ragged batch dimension: a plain dot (XLA's expansion ignores the
//         sizes).
//     group_sizes is [g], or [lhs batch dims..., lhs dims outer to the
//     ragged dimension (non-contracting ones for a non-contracting ragged
//     dimension, contracting ones for a contracting one, batch ones for a
//     batch one)..., g]: the sizes can differ per such index.
//     A negative size makes an empty range and moves the next groups back, as
//     in XLA's mask (rows can then count in two groups).
//   - scaled-dot(lhs, rhs, lhs_scale, rhs_scale) (xla/backends/gpu/transforms/
//     scaled_dot_rewriter.cc): each operand with a non-scalar scale is
//     converted, with its scale, to a common type (bf16 when both are
//     narrower than 16 bits; the type itself when equal; f32 for two types of
//     one width; else the wider) and multiplied elementwise by the scale
//     block it falls in (scale dimension s of operand dimension o covers o/s
//     elements), rounding in that type; a scalar scale leaves its operand
//     unscaled. Then a dot with the dot dimension numbers.
//   - scan (xla/service/scan_expander.cc): operands (inputs..., inits...) with
//     num_carries= inits; for i = 0..n-1 along dimensions={d} (n-1..0 with
//     is_reverse=true) to_apply gets (input slices at i..., carries...) and
//     returns (outputs..., new carries...); output k's slice i is the k-th
//     output. The result is (output arrays..., final carries...), or the only
//     element when there is one.
//   - shuffle (xla/hlo/transforms/expanders/shuffle_expander.cc):
//     mode=rotate, shifts={s...}: along each listed dimension, result[i] =
//     operand[(i + s) mod n]; mode=permute, indices=LITERAL: every element
//     takes the operand element whose coordinates along the listed
//     dimensions are the indices' values at its position (indices of shape
//     [operand dims..., listed dims], a dimension of size 1 shared, the last
//     one left out when one dimension is listed); out-of-range coordinates
//     clamp as gather's do. Other modes are Unimplemented.
// ragged-dot's lhs_ragged_dims/rhs_group_dims and the scan and shuffle
// attributes are kept as opaque attributes by the parser, read here.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "ir/computation.h"
#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/hlo_text/parser.h"
#include "ir/module.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

namespace {

const std::string* Opaque(const Instruction& instruction, absl::string_view key) {
  for (const OpaqueAttribute& attribute : instruction.opaque_attributes()) {
    if (attribute.name == key) return &attribute.value;
  }
  return nullptr;
}

// `{1,2}` (or a bare integer) from an opaque attribute; nullopt when absent.
absl::StatusOr<std::optional<std::vector<int64_t>>> OpaqueInts(const Instruction& instruction,
                                                               absl::string_view key) {
  const std::string* text = Opaque(instruction, key);
  if (text == nullptr) return std::optional<std::vector<int64_t>>();
  absl::string_view body = absl::StripAsciiWhitespace(*text);
  if (absl::ConsumePrefix(&body, "{") && !absl::ConsumeSuffix(&body, "}")) {
    return internal::OperandError(instruction, absl::StrCat("malformed ", key, "=", *text));
  }
  std::vector<int64_t> values;
  body = absl::StripAsciiWhitespace(body);
  if (body.empty()) return std::optional<std::vector<int64_t>>(values);
  for (absl::string_view part : absl::StrSplit(body, ',')) {
    int64_t value;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(part), &value)) {
      return internal::OperandError(instruction, absl::StrCat("malformed ", key, "=", *text));
    }
    values.push_back(value);
  }
  return std::optional<std::vector<int64_t>>(values);
}

bool Contains(const std::vector<int64_t>& v, int64_t x) {
  return std::find(v.begin(), v.end(), x) != v.end();
}

absl::Status CheckRange(const Instruction& instruction, const std::vector<int64_t>& dims,
                        int64_t rank, absl::string_view what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= rank) {
      return internal::OperandError(instruction,
                                    absl::StrCat(what, " dimension ", d, " out of range"));
    }
  }
  return absl::OkStatus();
}

// A dot of `lhs` and `rhs` with `dnums` into the shape of `instruction`.
absl::StatusOr<Literal> Dot(const Instruction& instruction, const DotDimensionNumbers& dnums,
                            const Literal& lhs, const Literal& rhs, const Context& context) {
  Instruction dot(Opcode::kDot, instruction.shape());
  dot.set_name(instruction.name());
  dot.mutable_attrs()->dot_dimension_numbers = dnums;
  const Literal* operands[2] = {&lhs, &rhs};
  return EvalDot(dot, operands, context);
}

std::vector<int64_t> Shifted(const std::vector<int64_t>& dims) {
  std::vector<int64_t> out;
  for (int64_t d : dims) out.push_back(d + 1);
  return out;
}

// `value` rounded to `type` (through a scalar of that type).
double RoundTo(ElementType type, double value) {
  Literal scalar(Shape::Scalar(type));
  internal::WriteDouble(scalar, {}, value);
  return internal::ReadDouble(scalar, {});
}

ElementType ScaledTargetType(ElementType a, ElementType b) {
  if (BitWidth(a) < 16 && BitWidth(b) < 16) return ElementType::kBF16;
  if (a == b) return a;
  if (BitWidth(a) == BitWidth(b)) return ElementType::kF32;
  return BitWidth(a) > BitWidth(b) ? a : b;
}

absl::StatusOr<Literal> Dequantize(const Instruction& instruction, const Literal& operand,
                                   const Literal& scale, absl::string_view side) {
  if (scale.shape().rank() == 0) return operand;
  const Shape& shape = operand.shape();
  if (scale.shape().rank() != shape.rank()) {
    return internal::OperandError(
        instruction, absl::StrCat(side, " scale rank ", scale.shape().rank(),
                                  " differs from the operand rank ", shape.rank()));
  }
  std::vector<int64_t> block(shape.rank());
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t s = scale.shape().dimensions(d);
    if (s == 0 || shape.dimensions(d) % s != 0) {
      return internal::OperandError(
          instruction, absl::StrCat(side, " scale dimension ", d, " (", s,
                                    ") does not divide the operand's (", shape.dimensions(d), ")"));
    }
    block[d] = shape.dimensions(d) / s;
  }
  const ElementType target = ScaledTargetType(shape.element_type(), scale.shape().element_type());
  if (!IsFloat(target)) {
    return absl::UnimplementedError(absl::StrCat(
        "evaluator: scaled-dot with ", ElementTypeName(target), " operands"));
  }
  Literal result(Shape::Array(target, shape.dimensions()));
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
    Index scale_index = index;
    for (size_t d = 0; d < index.size(); ++d) scale_index[d] = index[d] / block[d];
    const double a = RoundTo(target, internal::ReadDouble(operand, index));
    const double s = RoundTo(target, internal::ReadDouble(scale, scale_index));
    internal::WriteDouble(result, index, a * s);
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalScaledDot(const Instruction& instruction, Operands operands,
                                      const Context& context) {
  if (operands.size() != 4) return internal::OperandError(instruction, "needs 4 operands");
  XJIT_ASSIGN_OR_RETURN(Literal lhs,
                        Dequantize(instruction, *operands[0], *operands[2], "lhs"));
  XJIT_ASSIGN_OR_RETURN(Literal rhs,
                        Dequantize(instruction, *operands[1], *operands[3], "rhs"));
  return Dot(instruction, instruction.attrs().dot_dimension_numbers, lhs, rhs, context);
}

absl::StatusOr<Literal> EvalRaggedDot(const Instruction& instruction, Operands operands,
                                      const Context& context) {
  if (operands.size() != 3) return internal::OperandError(instruction, "needs 3 operands");
  const Literal& lhs = *operands[0];
  const Literal& rhs = *operands[1];
  const Literal& sizes = *operands[2];
  const DotDimensionNumbers& dnums = instruction.attrs().dot_dimension_numbers;
  const int64_t lhs_rank = lhs.shape().rank();
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> ragged,
                        OpaqueInts(instruction, "lhs_ragged_dims"));
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> group,
                        OpaqueInts(instruction, "rhs_group_dims"));
  if (!ragged.has_value() || ragged->size() != 1) {
    return internal::OperandError(instruction, "needs lhs_ragged_dims={d} (one dimension)");
  }
  const int64_t r = (*ragged)[0];
  XJIT_RETURN_IF_ERROR(CheckRange(instruction, *ragged, lhs_rank, "lhs ragged"));
  XJIT_RETURN_IF_ERROR(CheckRange(instruction, dnums.lhs_batch_dimensions, lhs_rank, "lhs batch"));
  XJIT_RETURN_IF_ERROR(
      CheckRange(instruction, dnums.lhs_contracting_dimensions, lhs_rank, "lhs contracting"));
  const bool contracting = Contains(dnums.lhs_contracting_dimensions, r);
  const bool batch = Contains(dnums.lhs_batch_dimensions, r);
  const std::vector<int64_t> groups = group.value_or(std::vector<int64_t>{});
  if (batch) {
    if (!groups.empty()) {
      return internal::OperandError(instruction,
                                    "a ragged batch dimension takes no rhs_group_dims");
    }
    return Dot(instruction, dnums, lhs, rhs, context);
  }
  if (contracting != groups.empty()) {
    return internal::OperandError(
        instruction, contracting ? "a ragged contracting dimension takes no rhs_group_dims"
                                 : "a ragged non-contracting dimension needs rhs_group_dims={d}");
  }
  if (!IsInteger(sizes.shape().element_type()) || sizes.shape().rank() < 1) {
    return internal::OperandError(instruction, "group_sizes must be an integer array");
  }
  // The lhs dimensions that index group_sizes before its last dimension.
  std::vector<int64_t> prefix = dnums.lhs_batch_dimensions;
  for (int64_t d = 0; d < r; ++d) {
    if (Contains(dnums.lhs_batch_dimensions, d)) continue;
    if (Contains(dnums.lhs_contracting_dimensions, d) == contracting) prefix.push_back(d);
  }
  const int64_t sizes_rank = sizes.shape().rank();
  if (sizes_rank != 1) {
    bool fits = sizes_rank == static_cast<int64_t>(prefix.size()) + 1;
    for (int64_t i = 0; fits && i + 1 < sizes_rank; ++i) {
      fits = sizes.shape().dimensions(i) == lhs.shape().dimensions(prefix[i]);
    }
    if (!fits) {
      return internal::OperandError(
          instruction, absl::StrCat("group_sizes ", sizes.shape().ToString(false),
                                    " is neither [g] nor [lhs batch dims..., lhs dims outer to "
                                    "the ragged dimension..., g]"));
    }
  } else {
    prefix.clear();
  }
  const int64_t g = sizes.shape().dimensions(sizes_rank - 1);
  // Dense lhs [g, lhs...]: element (k, i) is lhs(i) when i's ragged index is
  // in group k's range, else 0.
  std::vector<int64_t> dense_dims = {g};
  for (int64_t d : lhs.shape().dimensions()) dense_dims.push_back(d);
  Literal dense(Shape::Array(lhs.shape().element_type(), dense_dims));
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(lhs.shape().dimensions(), [&](const Index& index) {
    Index sizes_index;
    for (int64_t d : prefix) sizes_index.push_back(index[d]);
    sizes_index.push_back(0);
    int64_t start = 0;
    for (int64_t k = 0; k < g; ++k) {
      sizes_index.back() = k;
      const int64_t end = start + internal::ReadIndexValue(sizes, sizes_index);
      if (start <= index[r] && index[r] < end) {
        Index target = {k};
        target.insert(target.end(), index.begin(), index.end());
        internal::CopyElement(lhs, index, dense, target);
      }
      start = end;
    }
    return absl::OkStatus();
  }));
  DotDimensionNumbers d;
  if (!contracting) {
    const int64_t rhs_group = groups[0];
    if (groups.size() != 1 || rhs_group < 0 || rhs_group >= rhs.shape().rank() ||
        rhs.shape().dimensions(rhs_group) != g) {
      return internal::OperandError(instruction,
                                    "rhs_group_dims must name one rhs dimension of size g");
    }
    d.lhs_batch_dimensions = Shifted(dnums.lhs_batch_dimensions);
    d.rhs_batch_dimensions = dnums.rhs_batch_dimensions;
    d.lhs_contracting_dimensions = {0};
    for (int64_t x : Shifted(dnums.lhs_contracting_dimensions)) {
      d.lhs_contracting_dimensions.push_back(x);
    }
    d.rhs_contracting_dimensions = {rhs_group};
    for (int64_t x : dnums.rhs_contracting_dimensions) d.rhs_contracting_dimensions.push_back(x);
    return Dot(instruction, d, dense, rhs, context);
  }
  // Ragged contracting: every group sees the whole rhs.
  std::vector<int64_t> rhs_dims = {g};
  for (int64_t x : rhs.shape().dimensions()) rhs_dims.push_back(x);
  Literal wide(Shape::Array(rhs.shape().element_type(), rhs_dims));
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(rhs_dims, [&](const Index& index) {
    internal::CopyElement(rhs, absl::MakeConstSpan(index).subspan(1), wide, index);
    return absl::OkStatus();
  }));
  d.lhs_batch_dimensions = {0};
  d.rhs_batch_dimensions = {0};
  for (int64_t x : Shifted(dnums.lhs_batch_dimensions)) d.lhs_batch_dimensions.push_back(x);
  for (int64_t x : Shifted(dnums.rhs_batch_dimensions)) d.rhs_batch_dimensions.push_back(x);
  d.lhs_contracting_dimensions = Shifted(dnums.lhs_contracting_dimensions);
  d.rhs_contracting_dimensions = Shifted(dnums.rhs_contracting_dimensions);
  return Dot(instruction, d, dense, wide, context);
}

absl::StatusOr<Literal> EvalShuffle(const Instruction& instruction, Operands operands,
                                    const Context& context) {
  if (operands.size() != 1) return internal::OperandError(instruction, "needs 1 operand");
  const Literal& operand = *operands[0];
  const Shape& shape = operand.shape();
  const std::string* mode = Opaque(instruction, "mode");
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> listed,
                        OpaqueInts(instruction, "dimensions"));
  std::vector<int64_t> dims = instruction.attrs().dimensions;
  if (listed.has_value()) dims = *listed;
  XJIT_RETURN_IF_ERROR(CheckRange(instruction, dims, shape.rank(), "shuffle"));
  if (!instruction.shape().IsArray() || !instruction.shape().SameDimensions(shape) ||
      instruction.shape().element_type() != shape.element_type()) {
    return internal::OperandError(instruction, "the result has the operand's shape");
  }
  Literal result(instruction.shape());
  if (mode != nullptr && *mode == "rotate") {
    XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> shifts,
                          OpaqueInts(instruction, "shifts"));
    if (!shifts.has_value() || shifts->size() != dims.size()) {
      return internal::OperandError(instruction, "mode=rotate needs one shift per dimension");
    }
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
      Index from = index;
      for (size_t k = 0; k < dims.size(); ++k) {
        const int64_t n = shape.dimensions(dims[k]);
        const int64_t s = ((*shifts)[k] % n + n) % n;
        from[dims[k]] = (from[dims[k]] + s) % n;
      }
      internal::CopyElement(operand, from, result, index);
      return absl::OkStatus();
    }));
    return result;
  }
  if (mode != nullptr && *mode == "permute") {
    const std::string* text = Opaque(instruction, "indices");
    if (text == nullptr) return internal::OperandError(instruction, "mode=permute needs indices=");
    absl::StatusOr<Literal> parsed = ParseLiteral(*text);
    if (!parsed.ok()) {
      return internal::OperandError(instruction,
                                    absl::StrCat("indices=: ", parsed.status().message()));
    }
    const Literal& indices = *parsed;
    const Shape& ishape = indices.shape();
    const int64_t rank = shape.rank();
    const int64_t k = static_cast<int64_t>(dims.size());
    // Target [operand dims..., k]; the indices may leave the last out (k = 1)
    // and hold size 1 where they share a coordinate.
    std::vector<int64_t> target(shape.dimensions().begin(), shape.dimensions().end());
    target.push_back(k);
    bool fits = ishape.IsArray() && IsInteger(ishape.element_type()) &&
                (ishape.rank() == rank + 1 || (ishape.rank() == rank && k == 1));
    for (int64_t d = 0; fits && d < ishape.rank(); ++d) {
      fits = ishape.dimensions(d) == target[d] || ishape.dimensions(d) == 1;
    }
    if (!fits) {
      return internal::OperandError(
          instruction, absl::StrCat("indices ", ishape.ToString(false), " do not fit ",
                                    shape.ToString(false), " with ", k, " shuffled dimensions"));
    }
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
      Index from = index;
      for (int64_t c = 0; c < k; ++c) {
        Index at(ishape.rank());
        for (int64_t d = 0; d < ishape.rank(); ++d) {
          const int64_t position = d < rank ? index[d] : c;
          at[d] = ishape.dimensions(d) == 1 ? 0 : position;
        }
        const int64_t n = shape.dimensions(dims[c]);
        from[dims[c]] = std::clamp<int64_t>(internal::ReadIndexValue(indices, at), 0, n - 1);
      }
      internal::CopyElement(operand, from, result, index);
      return absl::OkStatus();
    }));
    return result;
  }
  return absl::UnimplementedError(absl::StrCat(
      "evaluator: shuffle mode=", mode == nullptr ? "(none)" : *mode,
      " is not supported (XLA's expansion defines rotate and permute only)"));
}

absl::StatusOr<Literal> EvalScan(const Instruction& instruction, Operands operands,
                                 const Context& context) {
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> carries_attr,
                        OpaqueInts(instruction, "num_carries"));
  XJIT_ASSIGN_OR_RETURN(std::optional<std::vector<int64_t>> listed,
                        OpaqueInts(instruction, "dimensions"));
  std::vector<int64_t> dims = instruction.attrs().dimensions;
  if (listed.has_value()) dims = *listed;
  if (dims.size() != 1) return internal::OperandError(instruction, "needs dimensions={d}");
  const int64_t dim = dims[0];
  const int64_t carries =
      carries_attr.has_value() && carries_attr->size() == 1 ? (*carries_attr)[0] : 0;
  const std::string* reverse_text = Opaque(instruction, "is_reverse");
  const bool reverse = reverse_text != nullptr && *reverse_text == "true";
  // to_apply: a called computation, or (kept opaque by the parser) a name in
  // the module.
  const Computation* body = nullptr;
  if (!instruction.called_computations().empty()) body = instruction.called_computations()[0];
  if (const std::string* name = Opaque(instruction, "to_apply");
      body == nullptr && name != nullptr && instruction.parent() != nullptr &&
      instruction.parent()->parent() != nullptr) {
    body = instruction.parent()->parent()->FindComputation(
        std::string(absl::StripPrefix(*name, "%")));
  }
  if (body == nullptr) return internal::OperandError(instruction, "needs to_apply=");
  const int64_t count = static_cast<int64_t>(operands.size());
  if (carries < 0 || carries > count) {
    return internal::OperandError(instruction, "num_carries exceeds the operand count");
  }
  const int64_t inputs = count - carries;
  const Shape& shape = instruction.shape();
  const int64_t results = shape.IsTuple() ? shape.tuple_size() : 1;
  const int64_t outputs = results - carries;
  if (outputs < 0) return internal::OperandError(instruction, "fewer results than carries");
  auto result_shape = [&](int64_t i) -> const Shape& {
    return shape.IsTuple() ? shape.tuple_shapes(i) : shape;
  };
  int64_t n = -1;
  for (int64_t i = 0; i < inputs; ++i) {
    const Shape& s = operands[i]->shape();
    if (!s.IsArray() || dim < 0 || dim >= s.rank()) {
      return internal::OperandError(instruction, "scan dimension out of range for an input");
    }
    if (n >= 0 && s.dimensions(dim) != n) {
      return internal::OperandError(instruction, "inputs differ in the scan dimension's size");
    }
    n = s.dimensions(dim);
  }
  std::vector<Literal> out;
  for (int64_t k = 0; k < outputs; ++k) {
    const Shape& s = result_shape(k);
    if (!s.IsArray() || dim < 0 || dim >= s.rank()) {
      return internal::OperandError(instruction, "scan dimension out of range for an output");
    }
    if (n < 0) n = s.dimensions(dim);
    if (s.dimensions(dim) != n) {
      return internal::OperandError(instruction, "an output's scan dimension differs");
    }
    out.emplace_back(s);
  }
  if (n < 0) return internal::OperandError(instruction, "no input or output gives the length");
  std::vector<Literal> carry;
  for (int64_t i = inputs; i < count; ++i) carry.push_back(*operands[i]);
  for (int64_t step = 0; step < n; ++step) {
    const int64_t at = reverse ? n - 1 - step : step;
    std::vector<Literal> slices;
    for (int64_t i = 0; i < inputs; ++i) {
      const Shape& s = operands[i]->shape();
      std::vector<int64_t> sliced;
      for (int64_t d = 0; d < s.rank(); ++d) {
        if (d != dim) sliced.push_back(s.dimensions(d));
      }
      Literal slice(Shape::Array(s.element_type(), sliced));
      XJIT_RETURN_IF_ERROR(internal::ForEachIndex(sliced, [&](const Index& index) {
        Index from = index;
        from.insert(from.begin() + dim, at);
        internal::CopyElement(*operands[i], from, slice, index);
        return absl::OkStatus();
      }));
      slices.push_back(std::move(slice));
    }
    std::vector<const Literal*> args;
    for (const Literal& s : slices) args.push_back(&s);
    for (const Literal& c : carry) args.push_back(&c);
    if (!context.call) return absl::InternalError("evaluator context cannot call computations");
    XJIT_ASSIGN_OR_RETURN(Literal value, context.call(*body, args));
    std::vector<Literal> parts;
    if (value.shape().IsTuple()) {
      parts = std::move(*value.mutable_elements());
    } else {
      parts.push_back(std::move(value));
    }
    if (static_cast<int64_t>(parts.size()) != results) {
      return internal::OperandError(
          instruction, absl::StrCat("to_apply returned ", parts.size(), " values; expected ",
                                    results, " (outputs, then carries)"));
    }
    for (int64_t k = 0; k < outputs; ++k) {
      const Literal& part = parts[k];
      const Shape& s = out[k].shape();
      if (!part.shape().IsArray() || part.shape().element_type() != s.element_type() ||
          part.shape().rank() + 1 != s.rank()) {
        return internal::OperandError(instruction, "an output slice has the wrong shape");
      }
      XJIT_RETURN_IF_ERROR(
          internal::ForEachIndex(part.shape().dimensions(), [&](const Index& index) {
            Index to = index;
            to.insert(to.begin() + dim, at);
            internal::CopyElement(part, index, out[k], to);
            return absl::OkStatus();
          }));
    }
    for (int64_t c = 0; c < carries; ++c) carry[c] = std::move(parts[outputs + c]);
  }
  std::vector<Literal> elements = std::move(out);
  for (int64_t c = 0; c < carries; ++c) {
    const Shape& s = result_shape(outputs + c);
    if (carry[c].shape().IsArray() && s.IsArray() && carry[c].shape().SameDimensions(s) &&
        carry[c].shape().element_type() == s.element_type()) {
      elements.push_back(carry[c].Relayout(s));
    } else {
      return internal::OperandError(instruction, "a carry does not match its result shape");
    }
  }
  if (!shape.IsTuple()) return std::move(elements[0]);
  return Literal::MakeTuple(std::move(elements));
}

}  // namespace xjit::eval
