// Bit-exact float conversions (see float_format.h).
//
// Every narrow format is described by a small table entry (exponent and
// mantissa widths, bias, and how it spells infinity, NaN and zero); one
// generic encoder and decoder serve them all. Encoding rounds the exact double
// value directly to the target (no intermediate f32), to nearest with ties to
// even, subnormals included.
//
// Special cases, per format family:
//   IEEE-like (f16, bf16, f8e5m2, f8e4m3, f8e3m4): +-inf, NaN with sign and
//     payload (the payload's top bits are kept, quiet bit included or not; a
//     payload that truncates to zero becomes the plain quiet NaN, never inf);
//     overflow gives +-inf.
//   f8e4m3fn: no inf; NaN is S.1111.111; overflow and +-inf give NaN with the
//     input's sign.
//   FNUZ (f8e4m3fnuz, f8e5m2fnuz, f8e4m3b11fnuz): no inf, no -0 (a negative
//     result that rounds to zero is +0); the single NaN is 0x80; overflow,
//     +-inf and NaN give 0x80.
//   f8e8m0fnu: unsigned powers of two 2^(e-127), 0xFF = NaN, no zero. As
//     XLA converts (its evaluator casts with ml_dtypes' float8_e8m0fnu,
//     version 0.6 and later): +-0, negative numbers, NaN, +-inf and overflow
//     give NaN; a value m * 2^u (1 <= m < 2) with u >= -126 rounds up when
//     m >= 1.5 (ties away from zero: the significand's implicit 1 is the
//     "odd" bit that round-to-nearest-even keeps), so 0.75 -> 1 and 3 -> 4;
//     in [2^-127, 2^-126) exactly 2^-127 gives code 0 and anything above it
//     2^-126 (code 1); every positive value below 2^-127 gives code 0.
//   f4e2m1fn: no inf, no NaN. As in ml_dtypes (the reference XLA uses),
//     overflow and +-inf saturate to +-6, and NaN becomes 0x8 (-0).
#include "ir/float_format.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

namespace xjit {
namespace {

enum class Family { kIeee, kFn, kFnuz, kE8m0, kNoSpecials };

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Family family;
};

Format GetFormat(ElementType type) {
  switch (type) {
    case ElementType::kF16: return {5, 10, 15, Family::kIeee};
    case ElementType::kBF16: return {8, 7, 127, Family::kIeee};
    case ElementType::kF32: return {8, 23, 127, Family::kIeee};
    case ElementType::kF64: return {11, 52, 1023, Family::kIeee};
    case ElementType::kF8E5M2: return {5, 2, 15, Family::kIeee};
    case ElementType::kF8E4M3: return {4, 3, 7, Family::kIeee};
    case ElementType::kF8E4M3FN: return {4, 3, 7, Family::kFn};
    case ElementType::kF8E3M4: return {3, 4, 3, Family::kIeee};
    case ElementType::kF8E4M3FNUZ: return {4, 3, 8, Family::kFnuz};
    case ElementType::kF8E5M2FNUZ: return {5, 2, 16, Family::kFnuz};
    case ElementType::kF8E4M3B11FNUZ: return {4, 3, 11, Family::kFnuz};
    case ElementType::kF8E8M0FNU: return {8, 0, 127, Family::kE8m0};
    case ElementType::kF4E2M1FN: return {2, 1, 1, Family::kNoSpecials};
    default: return {11, 52, 1023, Family::kIeee};  // Not a real float: treat as f64.
  }
}

bool HasSign(const Format& f) { return f.family != Family::kE8m0; }
int TotalBits(const Format& f) { return (HasSign(f) ? 1 : 0) + f.exponent_bits + f.mantissa_bits; }
uint64_t SignBit(const Format& f) { return uint64_t{1} << (TotalBits(f) - 1); }
uint64_t MantissaMask(const Format& f) { return (uint64_t{1} << f.mantissa_bits) - 1; }
uint64_t ExponentAllOnes(const Format& f) { return (uint64_t{1} << f.exponent_bits) - 1; }

// The largest finite magnitude's bit pattern (sign clear).
uint64_t MaxFiniteBits(const Format& f) {
  const uint64_t all_ones = (ExponentAllOnes(f) << f.mantissa_bits) | MantissaMask(f);
  switch (f.family) {
    case Family::kIeee: return ((ExponentAllOnes(f) - 1) << f.mantissa_bits) | MantissaMask(f);
    case Family::kFn: return all_ones - 1;
    case Family::kFnuz: return all_ones;
    case Family::kE8m0: return all_ones - 1;
    case Family::kNoSpecials: return all_ones;
  }
  return all_ones;
}

uint64_t QuietNanBits(const Format& f, bool negative) {
  switch (f.family) {
    case Family::kIeee:
      return (negative ? SignBit(f) : 0) | (ExponentAllOnes(f) << f.mantissa_bits) |
             (uint64_t{1} << (f.mantissa_bits - 1));
    case Family::kFn:
      return (negative ? SignBit(f) : 0) | (ExponentAllOnes(f) << f.mantissa_bits) |
             MantissaMask(f);
    case Family::kFnuz: return 0x80;
    case Family::kE8m0: return 0xFF;
    case Family::kNoSpecials: return SignBit(f);  // -0, as ml_dtypes does.
  }
  return 0;
}

// What a value too large for the format (or an infinity) becomes.
uint64_t OverflowBits(const Format& f, bool negative) {
  const uint64_t sign = negative ? SignBit(f) : 0;
  switch (f.family) {
    case Family::kIeee: return sign | (ExponentAllOnes(f) << f.mantissa_bits);
    case Family::kFn: return QuietNanBits(f, negative);
    case Family::kFnuz: return 0x80;
    case Family::kE8m0: return 0xFF;
    case Family::kNoSpecials: return sign | MaxFiniteBits(f);
  }
  return 0;
}

uint64_t EncodeE8m0(double value) {
  // Zero has no code and the format no sign: both are NaN, as in XLA.
  if (!(value > 0) || std::isinf(value)) return 0xFF;
  int e = 0;
  const double fraction = std::frexp(value, &e);  // value = fraction * 2^e, fraction in [0.5, 1)
  const int exponent = e - 1;                      // value = (2 * fraction) * 2^exponent
  const double significand = 2 * fraction;         // in [1, 2)
  if (exponent < -127) return 0;
  if (exponent == -127) return significand > 1 ? 1 : 0;
  const int code = exponent + 127 + (significand >= 1.5 ? 1 : 0);
  return code >= 255 ? 0xFF : static_cast<uint64_t>(code);
}

uint64_t Encode(const Format& f, double value) {
  if (f.family == Family::kE8m0) return EncodeE8m0(value);
  const bool negative = std::signbit(value);
  const uint64_t sign = negative ? SignBit(f) : 0;
  if (std::isnan(value)) {
    if (f.family != Family::kIeee) return QuietNanBits(f, negative);
    uint64_t raw;
    std::memcpy(&raw, &value, sizeof(raw));
    uint64_t payload = (raw & ((uint64_t{1} << 52) - 1)) >> (52 - f.mantissa_bits);
    // The top payload bits are kept as they are (so every NaN code round-trips
    // through double); a payload truncated to nothing becomes the quiet NaN
    // rather than infinity.
    if (payload == 0) payload = uint64_t{1} << (f.mantissa_bits - 1);
    return sign | (ExponentAllOnes(f) << f.mantissa_bits) | payload;
  }
  if (std::isinf(value)) return OverflowBits(f, negative);
  const double magnitude = std::fabs(value);
  const bool unsigned_zero = f.family == Family::kFnuz;
  if (magnitude == 0) return unsigned_zero ? 0 : sign;

  const int min_exponent = 1 - f.bias;  // Exponent of the smallest normal.
  int e = 0;
  const double fraction = std::frexp(magnitude, &e);
  int exponent = e - 1;  // magnitude = 1.xxx * 2^exponent
  const int64_t max_field = static_cast<int64_t>(ExponentAllOnes(f));
  if (exponent + f.bias > max_field + 1) return OverflowBits(f, negative);

  uint64_t magnitude_bits;
  if (exponent < min_exponent) {
    // Subnormal: count quanta of 2^(min_exponent - mantissa_bits). A result of
    // 2^mantissa_bits is the smallest normal, which this encoding yields too.
    const double quanta = std::ldexp(magnitude, f.mantissa_bits - min_exponent);
    magnitude_bits = static_cast<uint64_t>(std::nearbyint(quanta));
  } else {
    const double significand = std::ldexp(fraction, f.mantissa_bits + 1);  // [2^m, 2^(m+1))
    uint64_t rounded = static_cast<uint64_t>(std::nearbyint(significand));
    if (rounded == (uint64_t{1} << (f.mantissa_bits + 1))) {
      rounded >>= 1;
      ++exponent;
    }
    const uint64_t field = static_cast<uint64_t>(exponent + f.bias);
    magnitude_bits = (field << f.mantissa_bits) | (rounded & MantissaMask(f));
  }
  if (magnitude_bits > MaxFiniteBits(f)) return OverflowBits(f, negative);
  if (magnitude_bits == 0 && unsigned_zero) return 0;
  return sign | magnitude_bits;
}

double Decode(const Format& f, uint64_t bits) {
  bits &= (TotalBits(f) >= 64) ? ~uint64_t{0} : ((uint64_t{1} << TotalBits(f)) - 1);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  if (f.family == Family::kE8m0) {
    if (bits == 0xFF) return nan;
    return std::ldexp(1.0, static_cast<int>(bits) - 127);
  }
  const bool negative = (bits & SignBit(f)) != 0;
  const uint64_t field = (bits >> f.mantissa_bits) & ExponentAllOnes(f);
  const uint64_t mantissa = bits & MantissaMask(f);
  if (f.family == Family::kFnuz && bits == 0x80) return nan;
  if (field == ExponentAllOnes(f)) {
    if (f.family == Family::kIeee) {
      if (mantissa == 0) {
        return negative ? -std::numeric_limits<double>::infinity()
                        : std::numeric_limits<double>::infinity();
      }
      // Keep sign and payload so that encoding the double gives the bits back.
      uint64_t raw = (negative ? uint64_t{1} << 63 : 0) | (uint64_t{0x7FF} << 52) |
                     (mantissa << (52 - f.mantissa_bits));
      double result;
      std::memcpy(&result, &raw, sizeof(result));
      return result;
    }
    if (f.family == Family::kFn && mantissa == MantissaMask(f)) return negative ? -nan : nan;
  }
  double magnitude;
  if (field == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - f.bias - f.mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (uint64_t{1} << f.mantissa_bits)),
                           static_cast<int>(field) - f.bias - f.mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

}  // namespace

double FloatBitsToDouble(ElementType type, uint64_t bits) {
  if (type == ElementType::kF64) {
    double value;
    std::memcpy(&value, &bits, sizeof(value));
    return value;
  }
  if (type == ElementType::kF32) {
    const uint32_t narrow = static_cast<uint32_t>(bits);
    float value;
    std::memcpy(&value, &narrow, sizeof(value));
    return value;
  }
  return Decode(GetFormat(type), bits);
}

uint64_t DoubleToFloatBits(ElementType type, double value) {
  if (type == ElementType::kF64) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    return bits;
  }
  if (type == ElementType::kF32) {
    // The hardware conversion rounds to nearest even and keeps NaN payloads.
    const float narrow = static_cast<float>(value);
    uint32_t bits;
    std::memcpy(&bits, &narrow, sizeof(bits));
    return bits;
  }
  return Encode(GetFormat(type), value);
}

double FloatMax(ElementType type) {
  if (type == ElementType::kF64) return std::numeric_limits<double>::max();
  const Format f = GetFormat(type);
  return Decode(f, MaxFiniteBits(f));
}

double FloatMinNormal(ElementType type) {
  if (type == ElementType::kF64) return std::numeric_limits<double>::min();
  const Format f = GetFormat(type);
  if (f.family == Family::kE8m0) return std::ldexp(1.0, -127);
  return std::ldexp(1.0, 1 - f.bias);
}

bool FloatHasInfinity(ElementType type) { return GetFormat(type).family == Family::kIeee; }

bool FloatHasNan(ElementType type) { return GetFormat(type).family != Family::kNoSpecials; }

int FloatExponentBits(ElementType type) { return GetFormat(type).exponent_bits; }

int FloatMantissaBits(ElementType type) { return GetFormat(type).mantissa_bits; }

}  // namespace xjit
