// Literal storage and text (see literal.h).
//
// Storage: an array's buffer is ByteSize(shape) bytes holding
// PhysicalElementCount slots of ElementSizeInBits bits each, in the physical
// order layout_util computes. Slots of 8 bits or more are whole bytes, little
// endian (the host's order), so a buffer can be handed to compiled code as is.
// Slots narrower than a byte are packed low bits first: with 4-bit slots,
// element slot 2k sits in bits 0-3 of byte k and slot 2k+1 in bits 4-7 (with
// 2-bit slots, slot 4k+j is in bits 2j..2j+1). Unused high bits of a slot
// (an s4 stored in a byte) are zero. GetBits/SetBits see the low 64 bits of
// a slot: for c64 the real part's bits in the low half and the imaginary
// part's in the high half; for c128 only the real part (use GetComplex).
// Accesses outside the array read 0 and write nothing.
//
// Text follows XLA's one-line literal printer: rank 1 is `{1, 2}`, higher
// ranks nest with inner spaces `{ { 1, 2 }, { 3, 4 } }`, empty dimensions are
// `{}`. Floats print as XLA's RoundTripFpToString does: f32 with 6 significant
// digits, or 9 when 6 do not read back as the same float; f64 with 15, else
// 17; every narrower type with its max_digits10 (f16 5, bf16 4, f8e4m3* and
// f8e3m4 3, f8e5m2* 2, f8e8m0fnu 2, f4e2m1fn 2; 17 where those digits would
// read back as another value: f8e8m0fnu's 2^-127). NaN prints as `nan`/`-nan`
// from its sign bit, followed for IEEE-like types by `(0x<payload>)` when the
// mantissa is not the plain quiet NaN (only the top mantissa bit set).
#include "ir/literal.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/float_format.h"
#include "ir/layout_util.h"
#include "ir/literal_text.h"

namespace xjit {
namespace {

// An element's raw bits; `hi` is used only by c128 (its imaginary part).
struct RawElement {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const RawElement&) const = default;
};

uint64_t TypeMask(ElementType type) {
  const int width = BitWidth(type);
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

// Whether the physical slot of logical row-major position i is i.
bool IsRowMajorDense(const Shape& shape) {
  if (!shape.has_layout()) return true;
  const Layout& layout = shape.layout();
  if (!layout.tiles.empty() || !layout.padded_dimensions.empty() ||
      layout.tail_padding_alignment_in_elements > 1) {
    return false;
  }
  const int64_t rank = shape.rank();
  if (static_cast<int64_t>(layout.minor_to_major.size()) != rank) return false;
  for (int64_t i = 0; i < rank; ++i) {
    if (layout.minor_to_major[i] != rank - 1 - i) return false;
  }
  return true;
}

RawElement ReadSlot(const Shape& shape, absl::Span<const uint8_t> data, int64_t slot) {
  RawElement raw;
  const int64_t bits = ElementSizeInBits(shape);
  if (bits <= 0 || slot < 0) return raw;
  if (bits % 8 == 0) {
    const int64_t bytes = bits / 8;
    // Compared by division: slot * bytes may wrap around (a slot computed
    // from a tile of 2^63 - 1; found by jit_fuzzer).
    if (static_cast<uint64_t>(slot) >= data.size() / static_cast<uint64_t>(bytes)) return raw;
    const uint64_t offset = static_cast<uint64_t>(slot) * bytes;
    std::memcpy(&raw.lo, data.data() + offset, std::min<int64_t>(bytes, 8));
    if (bytes > 8) std::memcpy(&raw.hi, data.data() + offset + 8, std::min<int64_t>(bytes - 8, 8));
    return raw;
  }
  // Packed: bit b of the slot is bit (slot*bits + b) of the buffer, counting
  // from bit 0 of byte 0.
  if (static_cast<uint64_t>(slot) >= data.size() * 8 / static_cast<uint64_t>(bits)) return raw;
  const uint64_t first = static_cast<uint64_t>(slot) * bits;
  for (int64_t b = 0; b < std::min<int64_t>(bits, 64); ++b) {
    const uint64_t pos = first + b;
    raw.lo |= static_cast<uint64_t>((data[pos / 8] >> (pos % 8)) & 1) << b;
  }
  return raw;
}

void WriteSlot(const Shape& shape, absl::Span<uint8_t> data, int64_t slot, RawElement raw) {
  const int64_t bits = ElementSizeInBits(shape);
  if (bits <= 0 || slot < 0) return;
  if (bits % 8 == 0) {
    const int64_t bytes = bits / 8;
    if (static_cast<uint64_t>(slot) >= data.size() / static_cast<uint64_t>(bytes)) return;
    const uint64_t offset = static_cast<uint64_t>(slot) * bytes;
    std::memcpy(data.data() + offset, &raw.lo, std::min<int64_t>(bytes, 8));
    if (bytes > 8) std::memcpy(data.data() + offset + 8, &raw.hi, std::min<int64_t>(bytes - 8, 8));
    return;
  }
  if (static_cast<uint64_t>(slot) >= data.size() * 8 / static_cast<uint64_t>(bits)) return;
  const uint64_t first = static_cast<uint64_t>(slot) * bits;
  for (int64_t b = 0; b < bits; ++b) {
    const uint64_t pos = first + b;
    const uint8_t bit = b < 64 ? static_cast<uint8_t>((raw.lo >> b) & 1) : 0;
    data[pos / 8] = static_cast<uint8_t>((data[pos / 8] & ~(1u << (pos % 8))) | (bit << (pos % 8)));
  }
}

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  bits &= (uint64_t{1} << width) - 1;
  return static_cast<int64_t>((bits ^ sign) - sign);
}

// A double as a two's-complement bit pattern: truncated toward zero, NaN is 0,
// and values outside the 64-bit range wrap modulo 2^64.
uint64_t DoubleToWrappedInt(double value) {
  if (std::isnan(value) || std::isinf(value)) return 0;
  double t = std::trunc(value);
  constexpr double kTwo63 = 9223372036854775808.0;
  constexpr double kTwo64 = 18446744073709551616.0;
  if (t >= -kTwo63 && t < kTwo63) return static_cast<uint64_t>(static_cast<int64_t>(t));
  t = std::fmod(t, kTwo64);
  if (t < 0) t += kTwo64;
  if (t >= kTwo64) return 0;
  return static_cast<uint64_t>(t);
}

float BitsToF32(uint64_t bits) {
  const uint32_t narrow = static_cast<uint32_t>(bits);
  float value;
  std::memcpy(&value, &narrow, sizeof(value));
  return value;
}

uint64_t F32ToBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

double BitsToF64(uint64_t bits) {
  double value;
  std::memcpy(&value, &bits, sizeof(value));
  return value;
}

uint64_t F64ToBits(double value) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

std::complex<double> RawToComplex(ElementType type, RawElement raw) {
  if (type == ElementType::kC64) return {BitsToF32(raw.lo), BitsToF32(raw.lo >> 32)};
  if (type == ElementType::kC128) return {BitsToF64(raw.lo), BitsToF64(raw.hi)};
  return {0, 0};
}

RawElement ComplexToRaw(ElementType type, std::complex<double> value) {
  if (type == ElementType::kC64) {
    return {F32ToBits(static_cast<float>(value.real())) |
                (F32ToBits(static_cast<float>(value.imag())) << 32),
            0};
  }
  return {F64ToBits(value.real()), F64ToBits(value.imag())};
}

double RawToDouble(ElementType type, RawElement raw) {
  if (IsFloat(type)) return FloatBitsToDouble(type, raw.lo);
  if (IsComplex(type)) return RawToComplex(type, raw).real();
  const uint64_t bits = raw.lo & TypeMask(type);
  if (IsSignedInteger(type)) return static_cast<double>(SignExtend(bits, BitWidth(type)));
  if (IsPred(type)) return bits != 0 ? 1.0 : 0.0;
  return static_cast<double>(bits);
}

int64_t RawToInt(ElementType type, RawElement raw) {
  if (IsFloat(type) || IsComplex(type)) {
    return static_cast<int64_t>(DoubleToWrappedInt(RawToDouble(type, raw)));
  }
  const uint64_t bits = raw.lo & TypeMask(type);
  if (IsSignedInteger(type)) return SignExtend(bits, BitWidth(type));
  if (IsPred(type)) return bits != 0 ? 1 : 0;
  return static_cast<int64_t>(bits);
}

RawElement DoubleToRaw(ElementType type, double value) {
  if (IsFloat(type)) return {DoubleToFloatBits(type, value), 0};
  if (IsComplex(type)) return ComplexToRaw(type, {value, 0});
  if (IsPred(type)) return {value != 0 ? uint64_t{1} : 0, 0};
  return {DoubleToWrappedInt(value) & TypeMask(type), 0};
}

RawElement IntToRaw(ElementType type, int64_t value) {
  if (IsPred(type)) return {value != 0 ? uint64_t{1} : 0, 0};
  if (IsInteger(type)) return {static_cast<uint64_t>(value) & TypeMask(type), 0};
  return DoubleToRaw(type, static_cast<double>(value));
}

// The value padding slots of the older layout form hold.
RawElement PaddingRaw(ElementType type, PaddingValue padding) {
  const bool highest = padding == PaddingValue::kHighest;
  switch (padding) {
    case PaddingValue::kZero: return {};
    case PaddingValue::kOne: return IntToRaw(type, 1);
    case PaddingValue::kLowest:
    case PaddingValue::kHighest:
      break;
  }
  if (IsPred(type)) return {highest ? uint64_t{1} : 0, 0};
  if (IsSignedInteger(type)) {
    const uint64_t sign = uint64_t{1} << (BitWidth(type) - 1);
    return {highest ? (sign - 1) : sign, 0};
  }
  if (IsUnsignedInteger(type)) return {highest ? TypeMask(type) : 0, 0};
  const ElementType real = IsComplex(type) ? ComplexComponentType(type) : type;
  double value = FloatHasInfinity(real) ? std::numeric_limits<double>::infinity() : FloatMax(real);
  if (!highest) value = real == ElementType::kF8E8M0FNU ? FloatMinNormal(real) : -value;
  return DoubleToRaw(type, value);
}

// Text of one real float value of `type` given its bits.
std::string FloatToText(ElementType type, uint64_t bits) {
  const double value = FloatBitsToDouble(type, bits);
  if (std::isnan(value)) {
    const int width = BitWidth(type);
    bool negative = type != ElementType::kF8E8M0FNU && ((bits >> (width - 1)) & 1) != 0;
    std::string text = negative ? "-nan" : "nan";
    if (FloatHasInfinity(type)) {  // IEEE-like: the NaN carries a payload.
      const int mantissa_bits = FloatMantissaBits(type);
      const uint64_t payload = bits & ((uint64_t{1} << mantissa_bits) - 1);
      if (payload != (uint64_t{1} << (mantissa_bits - 1))) {
        absl::StrAppend(&text, "(0x", absl::Hex(payload), ")");
      }
    }
    return text;
  }
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  if (type == ElementType::kF32) {
    const float f = static_cast<float>(value);
    std::string text = absl::StrFormat("%.*g", 6, value);
    if (std::strtof(text.c_str(), nullptr) != f) text = absl::StrFormat("%.*g", 9, value);
    return text;
  }
  if (type == ElementType::kF64) {
    std::string text = absl::StrFormat("%.*g", 15, value);
    if (std::strtod(text.c_str(), nullptr) != value) text = absl::StrFormat("%.*g", 17, value);
    return text;
  }
  // max_digits10 = ceil(1 + digits * log10(2)), digits = mantissa bits + 1.
  const int digits = FloatMantissaBits(type) + 1;
  const int max_digits10 = static_cast<int>(std::ceil(1 + digits * std::log10(2.0)));
  std::string text = absl::StrFormat("%.*g", max_digits10, value);
  // Where those digits read back as another code (f8e8m0fnu's 2^-127 as
  // "5.9e-39", which converts to 2^-126), 17 digits give the double exactly.
  if (DoubleToFloatBits(type, std::strtod(text.c_str(), nullptr)) !=
      DoubleToFloatBits(type, value)) {
    text = absl::StrFormat("%.17g", value);
  }
  return text;
}

std::string ElementToText(ElementType type, RawElement raw) {
  if (IsPred(type)) return (raw.lo & 0xFF) != 0 ? "true" : "false";
  if (IsSignedInteger(type)) return absl::StrCat(SignExtend(raw.lo & TypeMask(type), BitWidth(type)));
  if (IsUnsignedInteger(type)) return absl::StrCat(raw.lo & TypeMask(type));
  if (IsFloat(type)) return FloatToText(type, raw.lo & TypeMask(type));
  if (IsComplex(type)) {
    if (type == ElementType::kC64) {
      return absl::StrCat("(", FloatToText(ElementType::kF32, raw.lo & 0xFFFFFFFFu), ", ",
                          FloatToText(ElementType::kF32, raw.lo >> 32), ")");
    }
    return absl::StrCat("(", FloatToText(ElementType::kF64, raw.lo), ", ",
                        FloatToText(ElementType::kF64, raw.hi), ")");
  }
  return "";
}

int64_t SlotOf(const Shape& shape, absl::Span<const int64_t> index) {
  if (static_cast<int64_t>(index.size()) != shape.rank()) return -1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (index[i] < 0 || index[i] >= shape.dimensions(i)) return -1;
  }
  return LinearIndex(shape, index);
}

// The physical slot of logical row-major position i (-1 if out of range).
int64_t SlotOfLinear(const Shape& shape, int64_t i) {
  if (i < 0 || i >= shape.element_count()) return -1;
  if (IsRowMajorDense(shape)) return i;
  std::vector<int64_t> index(shape.rank());
  for (int64_t d = shape.rank() - 1; d >= 0; --d) {
    index[d] = i % shape.dimensions(d);
    i /= shape.dimensions(d);
  }
  return LinearIndex(shape, index);
}

bool HasEmptyDimension(const Shape& shape) {
  for (int64_t d : shape.dimensions()) {
    if (d <= 0) return true;
  }
  return false;
}

}  // namespace

Literal::Literal(const Shape& shape) : shape_(WithDefaultLayouts(shape)) {
  if (shape_.IsTuple()) {
    for (const Shape& element : shape_.tuple_shapes()) elements_.emplace_back(element);
    return;
  }
  if (!shape_.IsArray()) return;
  // A size that overflowed int64 (absurd dimensions) leaves the buffer empty;
  // every access is bounds-checked, so such a literal reads as zeros.
  const int64_t bytes = ByteSize(shape_);
  if (bytes > 0) data_ = std::make_shared<std::vector<uint8_t>>(static_cast<size_t>(bytes), 0);
  const Layout& layout = shape_.layout();
  if (!layout.padded_dimensions.empty() && layout.padding_value != PaddingValue::kZero) {
    const RawElement padding = PaddingRaw(shape_.element_type(), layout.padding_value);
    const int64_t slots = PhysicalElementCount(shape_);
    for (int64_t slot = 0; slot < slots; ++slot) {
      if (!MultiIndex(shape_, slot).has_value()) WriteSlot(shape_, data(), slot, padding);
    }
  }
}

absl::Span<uint8_t> Literal::data() {
  if (data_ == nullptr) return absl::Span<uint8_t>();
  // Another literal holds these bytes: this one writes to a copy of its own.
  if (data_.use_count() > 1) data_ = std::make_shared<std::vector<uint8_t>>(*data_);
  return absl::MakeSpan(*data_);
}

uint64_t Literal::GetBits(absl::Span<const int64_t> index) const {
  if (!shape_.IsArray()) return 0;
  return ReadSlot(shape_, data(), SlotOf(shape_, index)).lo & TypeMask(shape_.element_type());
}

void Literal::SetBits(absl::Span<const int64_t> index, uint64_t bits) {
  if (!shape_.IsArray()) return;
  const int64_t slot = SlotOf(shape_, index);
  RawElement raw = ReadSlot(shape_, data(), slot);  // Keeps c128's imaginary part.
  raw.lo = bits & TypeMask(shape_.element_type());
  WriteSlot(shape_, data(), slot, raw);
}

int64_t Literal::GetInt(absl::Span<const int64_t> index) const {
  if (!shape_.IsArray()) return 0;
  return RawToInt(shape_.element_type(), ReadSlot(shape_, data(), SlotOf(shape_, index)));
}

double Literal::GetDouble(absl::Span<const int64_t> index) const {
  if (!shape_.IsArray()) return 0;
  return RawToDouble(shape_.element_type(), ReadSlot(shape_, data(), SlotOf(shape_, index)));
}

std::complex<double> Literal::GetComplex(absl::Span<const int64_t> index) const {
  if (!shape_.IsArray()) return 0;
  const ElementType type = shape_.element_type();
  const RawElement raw = ReadSlot(shape_, data(), SlotOf(shape_, index));
  if (IsComplex(type)) return RawToComplex(type, raw);
  return {RawToDouble(type, raw), 0};
}

void Literal::SetInt(absl::Span<const int64_t> index, int64_t value) {
  if (!shape_.IsArray()) return;
  WriteSlot(shape_, data(), SlotOf(shape_, index), IntToRaw(shape_.element_type(), value));
}

void Literal::SetDouble(absl::Span<const int64_t> index, double value) {
  if (!shape_.IsArray()) return;
  WriteSlot(shape_, data(), SlotOf(shape_, index), DoubleToRaw(shape_.element_type(), value));
}

void Literal::SetComplex(absl::Span<const int64_t> index, std::complex<double> value) {
  if (!shape_.IsArray()) return;
  const ElementType type = shape_.element_type();
  const RawElement raw =
      IsComplex(type) ? ComplexToRaw(type, value) : DoubleToRaw(type, value.real());
  WriteSlot(shape_, data(), SlotOf(shape_, index), raw);
}

uint64_t Literal::GetBitsLinear(int64_t i) const {
  if (!shape_.IsArray()) return 0;
  return ReadSlot(shape_, data(), SlotOfLinear(shape_, i)).lo & TypeMask(shape_.element_type());
}

void Literal::SetBitsLinear(int64_t i, uint64_t bits) {
  if (!shape_.IsArray()) return;
  const int64_t slot = SlotOfLinear(shape_, i);
  RawElement raw = ReadSlot(shape_, data(), slot);
  raw.lo = bits & TypeMask(shape_.element_type());
  WriteSlot(shape_, data(), slot, raw);
}

Literal Literal::MakeTuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  shapes.reserve(elements.size());
  for (const Literal& element : elements) shapes.push_back(element.shape());
  Literal tuple(Shape::Tuple({}));
  tuple.shape_ = Shape::Tuple(std::move(shapes));
  tuple.elements_ = std::move(elements);
  return tuple;
}

Literal Literal::Relayout(const Shape& layout_shape) const {
  if (!shape_.Compatible(layout_shape)) return *this;
  if (shape_.IsTuple()) {
    Literal result(Shape::Tuple({}));
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape_.tuple_size(); ++i) {
      elements.push_back(elements_[i].Relayout(layout_shape.tuple_shapes(i)));
    }
    return MakeTuple(std::move(elements));
  }
  if (!shape_.IsArray()) return *this;
  Shape target = WithDefaultLayouts(layout_shape);
  // Keep this literal's dynamic flags: only the layout changes.
  for (int64_t i = 0; i < shape_.rank(); ++i) {
    target.set_dynamic_dimension(i, shape_.is_dynamic_dimension(i));
  }
  if (target == shape_) return *this;  // Shares the bytes (copy on write).
  Literal result(target);
  if (HasEmptyDimension(shape_)) return result;
  std::vector<int64_t> index(shape_.rank(), 0);
  do {
    WriteSlot(result.shape_, result.data(), LinearIndex(result.shape_, index),
              ReadSlot(shape_, data(), LinearIndex(shape_, index)));
  } while (NextIndex(shape_.dimensions(), absl::MakeSpan(index)));
  return result;
}

bool Literal::operator==(const Literal& other) const {
  if (!shape_.Compatible(other.shape_)) return false;
  if (shape_.IsTuple()) {
    for (int64_t i = 0; i < shape_.tuple_size(); ++i) {
      if (elements_[i] != other.elements_[i]) return false;
    }
    return true;
  }
  if (!shape_.IsArray()) return true;
  if (HasEmptyDimension(shape_)) return true;
  const uint64_t mask = TypeMask(shape_.element_type());
  std::vector<int64_t> index(shape_.rank(), 0);
  do {
    RawElement a = ReadSlot(shape_, data(), LinearIndex(shape_, index));
    RawElement b = ReadSlot(other.shape_, other.data(), LinearIndex(other.shape_, index));
    a.lo &= mask;
    b.lo &= mask;
    if (!(a == b)) return false;
  } while (NextIndex(shape_.dimensions(), absl::MakeSpan(index)));
  return true;
}

void PrintLiteralValue(const Literal& literal, TextSink sink) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    sink("(");
    for (size_t i = 0; i < literal.elements().size(); ++i) {
      if (i > 0) sink(", ");
      PrintLiteralValue(literal.elements()[i], sink);
    }
    sink(")");
    return;
  }
  if (shape.IsToken()) return sink("token");
  if (shape.IsOpaque()) return sink("opaque");
  const ElementType type = shape.element_type();
  const int64_t rank = shape.rank();
  const absl::Span<const uint8_t> data = literal.data();
  std::vector<int64_t> index(rank, 0);
  auto element_text = [&]() {
    return ElementToText(type, ReadSlot(shape, data, LinearIndex(shape, index)));
  };
  if (rank == 0) return sink(element_text());
  // Rank 1 prints `{1, 2}`; every level of a higher rank prints `{ ... }`.
  const absl::string_view open = rank == 1 ? "{" : "{ ";
  const absl::string_view close = rank == 1 ? "}" : " }";
  auto print_level = [&](auto&& self, int64_t dim) -> void {
    const int64_t size = shape.dimensions(dim);
    if (size <= 0) {
      sink("{}");
      return;
    }
    sink(open);
    for (int64_t i = 0; i < size; ++i) {
      if (i > 0) sink(", ");
      index[dim] = i;
      if (dim + 1 == rank) {
        sink(element_text());
      } else {
        self(self, dim + 1);
      }
    }
    sink(close);
  };
  print_level(print_level, 0);
}

void PrintLiteral(const Literal& literal, TextSink sink) {
  const Shape& shape = literal.shape();
  if (shape.IsTuple()) {
    sink("(");
    for (size_t i = 0; i < literal.elements().size(); ++i) {
      if (i > 0) sink(", ");
      PrintLiteral(literal.elements()[i], sink);
    }
    sink(")");
    return;
  }
  if (!shape.IsArray() || !shape.is_dynamic()) {
    sink(shape.ToString());
    sink(" ");
    PrintLiteralValue(literal, sink);
    return;
  }
  // A runtime-sized array: the shape holds the runtime sizes, not the bounds,
  // so `<=` would misstate them. Print them as plain sizes and, as XLA marks a
  // dynamic literal, the runtime sizes again in parentheses.
  Shape sizes = shape;
  for (int64_t i = 0; i < sizes.rank(); ++i) sizes.set_dynamic_dimension(i, false);
  sink(absl::StrCat(sizes.ToString(), "(", absl::StrJoin(shape.dimensions(), ","), ") "));
  PrintLiteralValue(literal, sink);
}

void PrintLiteral(const Literal& literal, const Shape& declared, TextSink sink) {
  const Shape& shape = literal.shape();
  const std::vector<Literal>& elements = literal.elements();
  if (shape.IsTuple()) {
    if (!declared.IsTuple() || declared.tuple_size() != static_cast<int64_t>(elements.size())) {
      return PrintLiteral(literal, sink);
    }
    sink("(");
    for (size_t i = 0; i < elements.size(); ++i) {
      if (i > 0) sink(", ");
      PrintLiteral(elements[i], declared.tuple_shapes(i), sink);
    }
    sink(")");
    return;
  }
  if (!shape.IsArray() || !declared.IsArray() ||
      declared.element_type() != shape.element_type() || declared.rank() != shape.rank()) {
    return PrintLiteral(literal, sink);
  }
  // XLA's form: the declared shape with its bounds, then the runtime sizes.
  Shape bounds = shape;
  for (int64_t i = 0; i < bounds.rank(); ++i) {
    const int64_t bound = declared.dimensions(i);
    const bool dynamic = declared.is_dynamic_dimension(i) || bound == Shape::kUnboundedSize;
    if (dynamic && bound != Shape::kUnboundedSize && bound < shape.dimensions(i)) {
      return PrintLiteral(literal, sink);  // Not a value of the declared shape.
    }
    if (!dynamic && bound != shape.dimensions(i)) return PrintLiteral(literal, sink);
    bounds.set_dimensions(i, bound);
    bounds.set_dynamic_dimension(i, dynamic);
  }
  if (!bounds.is_dynamic()) {
    sink(absl::StrCat(bounds.ToString(), " "));
  } else {
    sink(absl::StrCat(bounds.ToString(), "(", absl::StrJoin(shape.dimensions(), ","), ") "));
  }
  PrintLiteralValue(literal, sink);
}

namespace {

// A sink that appends to `out`.
auto AppendTo(std::string* out) {
  return [out](absl::string_view piece) { out->append(piece.data(), piece.size()); };
}

}  // namespace

std::string Literal::ValueToString() const {
  std::string out;
  PrintLiteralValue(*this, AppendTo(&out));
  return out;
}

std::string Literal::ToString() const {
  std::string out;
  PrintLiteral(*this, AppendTo(&out));
  return out;
}

std::string Literal::ToString(const Shape& declared) const {
  std::string out;
  PrintLiteral(*this, declared, AppendTo(&out));
  return out;
}

Literal Literal::Scalar(ElementType type, double value) {
  Literal literal(Shape::Scalar(type));
  literal.SetDouble({}, value);
  return literal;
}

Literal Literal::ScalarInt(ElementType type, int64_t value) {
  Literal literal(Shape::Scalar(type));
  literal.SetInt({}, value);
  return literal;
}

Literal Literal::FromDoubles(const Shape& shape, absl::Span<const double> row_major_values) {
  Literal literal(shape);
  if (!literal.shape_.IsArray()) return literal;
  const ElementType type = literal.shape_.element_type();
  const int64_t count =
      std::min<int64_t>(literal.element_count(), static_cast<int64_t>(row_major_values.size()));
  for (int64_t i = 0; i < count; ++i) {
    WriteSlot(literal.shape_, literal.data(), SlotOfLinear(literal.shape_, i),
              DoubleToRaw(type, row_major_values[i]));
  }
  return literal;
}

Literal Literal::FromInts(const Shape& shape, absl::Span<const int64_t> row_major_values) {
  Literal literal(shape);
  if (!literal.shape_.IsArray()) return literal;
  const ElementType type = literal.shape_.element_type();
  const int64_t count =
      std::min<int64_t>(literal.element_count(), static_cast<int64_t>(row_major_values.size()));
  for (int64_t i = 0; i < count; ++i) {
    WriteSlot(literal.shape_, literal.data(), SlotOfLinear(literal.shape_, i),
              IntToRaw(type, row_major_values[i]));
  }
  return literal;
}

}  // namespace xjit
