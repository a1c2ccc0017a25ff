// Bit-level conversions for the floating-point element types narrower than
// f32 (f16, bf16, the f8 family, f4e2m1fn) and for f32/f64 themselves.
// Rounding is to nearest, ties to even. Overflow follows each format: types
// with infinities overflow to inf; finite-only types (the *fn, *fnuz, e8m0
// families) produce NaN where they have one (saturation is the caller's
// choice: see ConvertElementType in the evaluator). FNUZ types have no
// negative zero (it becomes +0) and a single NaN (the bit pattern 0x80).
// f8e8m0fnu (no zero, no sign; ml_dtypes' float8_e8m0fnu) converts as XLA
// does (ml_dtypes 0.6 and later): +-0, negative values, NaN, +-inf and
// overflow give NaN (0xFF); other values go to a power of two, m * 2^u
// (1 <= m < 2) to 2^(u+1) when m >= 1.5 (0.75 -> 1), and below 2^-126 to
// 2^-127 (code 0) for values up to 2^-127 and to 2^-126 above it (see
// float_format.cc).
// f4e2m1fn has neither inf nor NaN: as ml_dtypes does, overflow and +-inf
// saturate to +-6 and NaN becomes 0x8 (-0). NaN payloads of IEEE-like types
// are kept (top bits), so every code round-trips bits -> double -> bits.
#ifndef XJIT_IR_FLOAT_FORMAT_H_
#define XJIT_IR_FLOAT_FORMAT_H_

#include <cstdint>

#include "ir/element_type.h"

namespace xjit {

// The value of a real float element given its raw bits.
double FloatBitsToDouble(ElementType type, uint64_t bits);
// The raw bits of `value` rounded to `type` (round to nearest even).
uint64_t DoubleToFloatBits(ElementType type, double value);

// The largest finite value and the smallest positive normal value of a float
// type, as doubles.
double FloatMax(ElementType type);
double FloatMinNormal(ElementType type);
bool FloatHasInfinity(ElementType type);
bool FloatHasNan(ElementType type);
// Exponent and mantissa (fraction) bit counts, e.g. f32: 8 and 23.
int FloatExponentBits(ElementType type);
int FloatMantissaBits(ElementType type);

}  // namespace xjit

#endif  // XJIT_IR_FLOAT_FORMAT_H_
