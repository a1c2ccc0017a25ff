// Mini-float decode and encode as kernel-program operations (see
// minifloat_codec.h). The format rules mirror ir/float_format.cc's table.
#include "jit/kernel/minifloat_codec.h"

#include <bit>
#include <cmath>

#include "ir/float_format.h"

namespace xjit::jit {
namespace {

enum class Family { kIeee, kFn, kFnuz, kE8m0, kNoSpecials };

struct Format {
  int exponent_bits;
  int mantissa_bits;
  int bias;
  Family family;
  int total_bits() const {
    return (family == Family::kE8m0 ? 0 : 1) + exponent_bits + mantissa_bits;
  }
  uint64_t mantissa_mask() const { return (uint64_t{1} << mantissa_bits) - 1; }
  // The exponent field all ones, in place.
  uint64_t exponent_ones() const { return ((uint64_t{1} << exponent_bits) - 1) << mantissa_bits; }
  uint64_t max_finite() const {
    switch (family) {
      case Family::kIeee:
        return (exponent_ones() - (uint64_t{1} << mantissa_bits)) | mantissa_mask();
      case Family::kFn:
        return (exponent_ones() | mantissa_mask()) - 1;
      default:
        return exponent_ones() | mantissa_mask();
    }
  }
};

Format FormatOf(ElementType type) {
  Format f;
  f.exponent_bits = FloatExponentBits(type);
  f.mantissa_bits = FloatMantissaBits(type);
  f.bias = 1 - std::ilogb(FloatMinNormal(type));
  switch (type) {
    case ElementType::kF8E4M3FN:
      f.family = Family::kFn;
      break;
    case ElementType::kF8E4M3FNUZ:
    case ElementType::kF8E5M2FNUZ:
    case ElementType::kF8E4M3B11FNUZ:
      f.family = Family::kFnuz;
      break;
    case ElementType::kF8E8M0FNU:
      f.family = Family::kE8m0;
      break;
    default:
      f.family = FloatHasInfinity(type) ? Family::kIeee
                 : FloatHasNan(type)    ? Family::kFn
                                        : Family::kNoSpecials;
      break;
  }
  return f;
}

constexpr auto kEq = ComparisonDirection::kEq;
constexpr auto kNe = ComparisonDirection::kNe;
constexpr auto kLt = ComparisonDirection::kLt;
constexpr auto kLe = ComparisonDirection::kLe;
constexpr auto kGt = ComparisonDirection::kGt;
constexpr auto kGe = ComparisonDirection::kGe;

}  // namespace

ElementType ProgramElementType(ElementType type) {
  return IsMiniFloat(type) ? ElementType::kU8 : type;
}

int MiniFloatCodec::Int(ElementType type, uint64_t value) {
  KOp index;
  index.kind = KOpKind::kIConst;
  index.type = ElementType::kS64;
  index.imm = static_cast<int64_t>(value);
  const int constant = add_(index);
  return Unary(KOpKind::kFromIndex, type, ElementType::kS64, constant);
}

int MiniFloatCodec::Bin(Opcode opcode, ElementType type, int a, int b) {
  KOp op;
  op.kind = KOpKind::kBinary;
  op.opcode = opcode;
  op.type = type;
  op.operand_type = type;
  op.a = a;
  op.b = b;
  return add_(op);
}

int MiniFloatCodec::Cmp(ComparisonDirection direction, ElementType type, int a, int b) {
  KOp op;
  op.kind = KOpKind::kCompare;
  op.type = ElementType::kPred;
  op.operand_type = type;
  op.direction = direction;
  op.comparison = ComparisonType::kUnsigned;
  op.a = a;
  op.b = b;
  return add_(op);
}

int MiniFloatCodec::Select(ElementType type, int predicate, int on_true, int on_false) {
  KOp op;
  op.kind = KOpKind::kSelect;
  op.type = type;
  op.operand_type = ElementType::kPred;
  op.a = predicate;
  op.b = on_true;
  op.c = on_false;
  return add_(op);
}

int MiniFloatCodec::Unary(KOpKind kind, ElementType type, ElementType from, int a) {
  KOp op;
  op.kind = kind;
  op.type = type;
  op.operand_type = from;
  op.a = a;
  return add_(op);
}

int MiniFloatCodec::FloatConst(ElementType type, double value) {
  KOp op;
  op.kind = KOpKind::kConst;
  op.type = type;
  op.operand_type = type;
  op.imm = type == ElementType::kF64
               ? std::bit_cast<int64_t>(value)
               : static_cast<int64_t>(std::bit_cast<uint32_t>(static_cast<float>(value)));
  return add_(op);
}

int MiniFloatCodec::Decode(ElementType type, int bits) {
  constexpr ElementType kU = ElementType::kU32;
  constexpr ElementType kF = ElementType::kF32;
  const Format f = FormatOf(type);
  int v = Unary(KOpKind::kConvert, kU, ElementType::kU8, bits);
  if (f.total_bits() < 8) v = BinConst(Opcode::kAnd, kU, v, (uint64_t{1} << f.total_bits()) - 1);
  if (f.family == Family::kE8m0) {
    // 2^(v - 127) is the f32 with exponent field v, except code 0 (2^-127,
    // an f32 subnormal) and 0xFF (NaN).
    int r = BinConst(Opcode::kShiftLeft, kU, v, 23);
    r = Select(kU, CmpConst(kEq, kU, v, 0), Int(kU, 0x00400000), r);
    r = Select(kU, CmpConst(kEq, kU, v, 0xFF), Int(kU, 0x7FC00000), r);
    return Unary(KOpKind::kBitcast, kF, kU, r);
  }
  const int t = f.total_bits();
  const int m = f.mantissa_bits;
  const uint64_t sign_bit = uint64_t{1} << (t - 1);
  const int sign32 =
      BinConst(Opcode::kShiftLeft, kU, BinConst(Opcode::kAnd, kU, v, sign_bit), 32 - t);
  const int magnitude = BinConst(Opcode::kAnd, kU, v, sign_bit - 1);
  // The magnitude's bits in f32 position read as an f32 with bias 127;
  // scaling by 2^(127 - bias) is exact (subnormals included).
  const int shifted =
      Unary(KOpKind::kBitcast, kF, kU, BinConst(Opcode::kShiftLeft, kU, magnitude, 23 - m));
  const int scaled =
      Bin(Opcode::kMultiply, kF, shifted, FloatConst(kF, std::ldexp(1.0, 127 - f.bias)));
  int r = Bin(Opcode::kOr, kU, Unary(KOpKind::kBitcast, kU, kF, scaled), sign32);
  switch (f.family) {
    case Family::kIeee: {
      const int mantissa = BinConst(
          Opcode::kShiftLeft, kU, BinConst(Opcode::kAnd, kU, magnitude, f.mantissa_mask()), 23 - m);
      const int quiet = Select(kU, CmpConst(kGt, kU, magnitude, f.exponent_ones()),
                               Int(kU, 0x7FC00000), Int(kU, 0x7F800000));
      const int special = Bin(Opcode::kOr, kU, Bin(Opcode::kOr, kU, quiet, mantissa), sign32);
      r = Select(kU, CmpConst(kGe, kU, magnitude, f.exponent_ones()), special, r);
      break;
    }
    case Family::kFn:
      r = Select(kU, CmpConst(kEq, kU, magnitude, f.exponent_ones() | f.mantissa_mask()),
                 BinConst(Opcode::kOr, kU, sign32, 0x7FC00000), r);
      break;
    case Family::kFnuz:
      r = Select(kU, CmpConst(kEq, kU, v, 0x80), Int(kU, 0x7FC00000), r);
      break;
    default:
      break;
  }
  return Unary(KOpKind::kBitcast, kF, kU, r);
}

int MiniFloatCodec::EncodeE8m0(int value, ElementType from) {
  const bool f64 = from == ElementType::kF64;
  const ElementType u = f64 ? ElementType::kU64 : ElementType::kU32;
  const int width = f64 ? 64 : 32;
  const int mw = f64 ? 52 : 23;
  const int a = Unary(KOpKind::kBitcast, u, from, value);
  const int negative = CmpConst(kNe, u, BinConst(Opcode::kShiftRightLogical, u, a, width - 1), 0);
  const int magnitude = BinConst(Opcode::kAnd, u, a, (uint64_t{1} << (width - 1)) - 1);
  // As XLA (ml_dtypes) converts: m * 2^u goes up a power of two when
  // m >= 1.5, i.e. when the mantissa's top bit is set (the source's biased
  // exponent plus that bit; inf and NaN land at or past 255).
  const int rounded = BinConst(Opcode::kShiftRightLogical, u,
                               BinConst(Opcode::kAdd, u, magnitude, uint64_t{1} << (mw - 1)), mw);
  // The source's field of 2^-127 (f32: a subnormal's top mantissa bit).
  const uint64_t tiny = f64 ? uint64_t{896} << mw : uint64_t{0x400000};
  // Fields from 2^-126 up: the code is the rounded field re-biased. Below:
  // 2^-127 and everything smaller give code 0, (2^-127, 2^-126) code 1.
  const uint64_t normal = f64 ? uint64_t{897} << mw : uint64_t{0x800000};
  const int below = Select(u, CmpConst(kGt, u, magnitude, tiny), Int(u, 1), Int(u, 0));
  const int rebased = f64 ? BinConst(Opcode::kSubtract, u, rounded, 896) : rounded;
  int code = Select(u, CmpConst(kGe, u, magnitude, normal), rebased, below);
  code = Select(u, CmpConst(kGe, u, code, 255), Int(u, 255), code);  // Overflow, inf, NaN.
  // Zero (either sign) and negative numbers are NaN: the format has neither.
  code = Select(u, CmpConst(kEq, u, magnitude, 0), Int(u, 255), code);
  code = Select(u, negative, Int(u, 255), code);
  return Unary(KOpKind::kConvert, ElementType::kU8, u, code);
}

int MiniFloatCodec::Encode(ElementType type, int value, ElementType from, bool nan_quieted) {
  const Format f = FormatOf(type);
  if (f.family == Family::kE8m0) return EncodeE8m0(value, from);
  const bool f64 = from == ElementType::kF64;
  const ElementType u = f64 ? ElementType::kU64 : ElementType::kU32;
  const int width = f64 ? 64 : 32;
  const int mw = f64 ? 52 : 23;
  const int bw = f64 ? 1023 : 127;
  const int m = f.mantissa_bits;
  const int k = mw - m;
  const uint64_t source_inf = ((uint64_t{1} << (width - 1 - mw)) - 1) << mw;

  const int a = Unary(KOpKind::kBitcast, u, from, value);
  const int sign = BinConst(Opcode::kShiftRightLogical, u, a, width - 1);
  const int magnitude = BinConst(Opcode::kAnd, u, a, (uint64_t{1} << (width - 1)) - 1);
  // Normal range: round the source bits to k fewer mantissa bits (ties to
  // even), then re-bias the exponent field.
  const int odd =
      BinConst(Opcode::kAnd, u, BinConst(Opcode::kShiftRightLogical, u, magnitude, k), 1);
  const int rounded = BinConst(
      Opcode::kShiftRightLogical, u,
      Bin(Opcode::kAdd, u, BinConst(Opcode::kAdd, u, magnitude, (uint64_t{1} << (k - 1)) - 1), odd),
      k);
  const int normal =
      BinConst(Opcode::kSubtract, u, rounded, static_cast<uint64_t>(bw - f.bias) << m);
  // Subnormal range: |x| + C rounds |x| to a multiple of the smallest
  // subnormal, which the low bits of the sum then count.
  const double c = std::ldexp(1.0, 1 - f.bias - m + mw);
  const int abs_value = Unary(KOpKind::kBitcast, from, u, magnitude);
  const int sum = Bin(Opcode::kAdd, from, abs_value, FloatConst(from, c));
  const uint64_t c_bits =
      f64 ? std::bit_cast<uint64_t>(c) : std::bit_cast<uint32_t>(static_cast<float>(c));
  const int subnormal =
      BinConst(Opcode::kSubtract, u, Unary(KOpKind::kBitcast, u, from, sum), c_bits);
  const uint64_t min_normal_bits = static_cast<uint64_t>(bw + 1 - f.bias) << mw;
  int mag = Select(u, CmpConst(kLt, u, magnitude, min_normal_bits), subnormal, normal);

  const int t = f.total_bits();
  const int sign_bit = BinConst(Opcode::kShiftLeft, u, sign, t - 1);
  const int overflow = CmpConst(kGt, u, mag, f.max_finite());
  const int nan = CmpConst(kGt, u, magnitude, source_inf);
  int r = Bin(Opcode::kOr, u, sign_bit, mag);
  int overflow_bits, nan_bits;
  switch (f.family) {
    case Family::kIeee: {
      overflow_bits = BinConst(Opcode::kOr, u, sign_bit, f.exponent_ones());
      const uint64_t quiet = uint64_t{1} << (m - 1);
      int payload = BinConst(Opcode::kAnd, u, BinConst(Opcode::kShiftRightLogical, u, magnitude, k),
                             f.mantissa_mask());
      if (nan_quieted) {
        payload = BinConst(Opcode::kOr, u, payload, quiet);
      } else {
        payload = Select(u, CmpConst(kEq, u, payload, 0), Int(u, quiet), payload);
      }
      nan_bits = Bin(Opcode::kOr, u, overflow_bits, payload);
      break;
    }
    case Family::kFn:
      overflow_bits = nan_bits =
          BinConst(Opcode::kOr, u, sign_bit, f.exponent_ones() | f.mantissa_mask());
      break;
    case Family::kFnuz:
      overflow_bits = nan_bits = Int(u, 0x80);
      r = Select(u, CmpConst(kEq, u, mag, 0), Int(u, 0), r);  // No -0.
      break;
    default:  // f4e2m1fn: saturates; NaN becomes -0.
      overflow_bits = BinConst(Opcode::kOr, u, sign_bit, f.max_finite());
      nan_bits = Int(u, uint64_t{1} << (t - 1));
      break;
  }
  r = Select(u, overflow, overflow_bits, r);
  r = Select(u, nan, nan_bits, r);
  return Unary(KOpKind::kConvert, ElementType::kU8, u, r);
}

}  // namespace xjit::jit
