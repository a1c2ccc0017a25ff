// The evaluator's elementwise operations: unary and binary arithmetic,
// compare, select, clamp, convert, bitcast-convert, reduce-precision and
// stochastic-convert. The edge-case semantics are listed in interpreter/evaluator.h.
//
// Every element is decoded into one of three host representations (integers
// and pred as 64-bit two's complement, real floats as double, complex as
// complex<double>), computed there, and encoded back into the result type with
// one rounding. Sub-byte integers use the same code at their own width.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interpreter/complex_math.h"
#include "ir/element_type.h"
#include "interpreter/evaluator_internal.h"
#include "ir/float_format.h"
#include "ir/status_macros.h"

namespace xjit::eval {
namespace {

using Complex = std::complex<double>;
using Index = absl::Span<const int64_t>;

enum class Kind { kPred, kSigned, kUnsigned, kFloat, kComplex, kOther };

Kind KindOf(ElementType type) {
  if (IsPred(type)) return Kind::kPred;
  if (IsSignedInteger(type)) return Kind::kSigned;
  if (IsUnsignedInteger(type)) return Kind::kUnsigned;
  if (IsFloat(type)) return Kind::kFloat;
  if (IsComplex(type)) return Kind::kComplex;
  return Kind::kOther;
}

uint64_t Mask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

int64_t SignExtend(uint64_t bits, int width) {
  if (width >= 64) return static_cast<int64_t>(bits);
  const uint64_t sign = uint64_t{1} << (width - 1);
  bits &= Mask(width);
  return static_cast<int64_t>((bits ^ sign) - sign);
}

// ---- Element readers and writers ----

// Integers and pred: the value as uint64 two's complement (signed types
// sign-extended, pred 0 or 1).
uint64_t ReadInt(const Literal& literal, Index index) {
  const ElementType type = literal.shape().element_type();
  const uint64_t bits = literal.GetBits(index);
  if (IsPred(type)) return bits != 0 ? 1 : 0;
  if (IsSignedInteger(type)) return static_cast<uint64_t>(SignExtend(bits, BitWidth(type)));
  return bits & Mask(BitWidth(type));
}

double ReadFloat(const Literal& literal, Index index) {
  return FloatBitsToDouble(literal.shape().element_type(), literal.GetBits(index));
}

Complex ReadComplex(const Literal& literal, Index index) { return literal.GetComplex(index); }

void WriteInt(Literal& literal, Index index, uint64_t value) {
  const ElementType type = literal.shape().element_type();
  if (IsPred(type)) {
    literal.SetBits(index, value != 0 ? 1 : 0);
  } else {
    literal.SetBits(index, value & Mask(BitWidth(type)));
  }
}

void WriteFloat(Literal& literal, Index index, double value) {
  literal.SetBits(index, DoubleToFloatBits(literal.shape().element_type(), value));
}

void WriteComplex(Literal& literal, Index index, Complex value) {
  literal.SetComplex(index, value);
}

// The index into an operand that may be a scalar broadcast implicitly
// (select's predicate, clamp's bounds).
Index OperandIndex(const Literal& operand, Index index) {
  return operand.shape().rank() == 0 ? Index() : index;
}

absl::Status TypeError(const Instruction& instruction, ElementType type) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "%s is not defined for element type %s", OpcodeName(instruction.opcode()),
      ElementTypeName(type)));
}

// The result shape of an elementwise instruction whose operand `like` may
// carry runtime (dynamic) sizes.
Shape ResultShape(const Instruction& instruction, const Literal& like) {
  if (like.shape().rank() != instruction.shape().rank()) return instruction.shape();
  return WithRuntimeDimensions(instruction.shape(), like.shape().dimensions());
}

// ---- Float helpers ----

double IeeeMaximum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) return std::signbit(a) ? b : a;
  return a > b ? a : b;
}

double IeeeMinimum(double a, double b) {
  if (std::isnan(a)) return a;
  if (std::isnan(b)) return b;
  if (a == 0 && b == 0) return std::signbit(a) ? a : b;
  return a < b ? a : b;
}

double FloatSign(double x) {
  if (std::isnan(x) || x == 0) return x;
  return x < 0 ? -1.0 : 1.0;
}

// A signed key whose integer order is the total order of the float bits
// `bits` of width `width`: -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN.
int64_t TotalOrderKey(uint64_t bits, int width) {
  const uint64_t sign = uint64_t{1} << (width - 1);
  const int64_t magnitude = static_cast<int64_t>(bits & (sign - 1));
  return (bits & sign) != 0 ? -magnitude - 1 : magnitude;
}

// Rounds an integer to a double with round-to-odd at 53 bits, so that a
// following rounding to any narrower float format (at most 51 significant
// bits) is a single correct round-to-nearest-even of the integer.
double IntegerToDoubleRoundToOdd(bool negative, uint64_t magnitude) {
  double d;
  if (magnitude < (uint64_t{1} << 53)) {
    d = static_cast<double>(magnitude);
  } else {
    const int length = 64 - std::countl_zero(magnitude);
    const int shift = length - 53;
    uint64_t top = magnitude >> shift;
    if ((magnitude & ((uint64_t{1} << shift) - 1)) != 0) top |= 1;
    d = std::ldexp(static_cast<double>(top), shift);
  }
  return negative ? -d : d;
}

// Writes the integer (value, signedness) into a float-typed element.
void WriteIntegerAsFloat(Literal& literal, Index index, uint64_t value, bool is_signed) {
  const ElementType type = literal.shape().element_type();
  const bool negative = is_signed && static_cast<int64_t>(value) < 0;
  const uint64_t magnitude = negative ? (~value + 1) : value;
  if (IsComplex(type)) {
    const ElementType component = ComplexComponentType(type);
    double re;
    if (component == ElementType::kF64) {
      re = is_signed ? static_cast<double>(static_cast<int64_t>(value))
                     : static_cast<double>(value);
    } else {
      re = static_cast<float>(IntegerToDoubleRoundToOdd(negative, magnitude));
    }
    literal.SetComplex(index, Complex(re, 0.0));
    return;
  }
  if (type == ElementType::kF64) {
    WriteFloat(literal, index,
               is_signed ? static_cast<double>(static_cast<int64_t>(value))
                         : static_cast<double>(value));
  } else {
    WriteFloat(literal, index, IntegerToDoubleRoundToOdd(negative, magnitude));
  }
}

// Float to integer: truncation toward zero, saturation, NaN -> 0.
uint64_t FloatToInteger(double x, ElementType type) {
  if (std::isnan(x)) return 0;
  const int width = BitWidth(type);
  if (IsSignedInteger(type)) {
    const double limit = std::ldexp(1.0, width - 1);  // 2^(w-1)
    if (x >= limit) return static_cast<uint64_t>((uint64_t{1} << (width - 1)) - 1);
    if (x < -limit) return static_cast<uint64_t>(SignExtend(uint64_t{1} << (width - 1), width));
    return static_cast<uint64_t>(static_cast<int64_t>(std::trunc(x)));
  }
  const double limit = std::ldexp(1.0, width);  // 2^w
  if (x >= limit) return Mask(width);
  if (x <= 0) return 0;
  return static_cast<uint64_t>(std::trunc(x));
}

// ---- Unary ----

absl::StatusOr<Literal> EvalUnary(const Instruction& instruction, const Literal& operand) {
  const Opcode opcode = instruction.opcode();
  const ElementType in_type = operand.shape().element_type();
  Literal result(ResultShape(instruction, operand));
  const Kind kind = KindOf(in_type);
  absl::Status status = absl::OkStatus();

  if (kind == Kind::kPred) {
    if (opcode != Opcode::kNot) return TypeError(instruction, in_type);
    ForEachIndex(operand.shape().dimensions(), [&](Index index) {
      WriteInt(result, index, ReadInt(operand, index) == 0 ? 1 : 0);
    });
    return result;
  }

  if (kind == Kind::kSigned || kind == Kind::kUnsigned) {
    const bool is_signed = kind == Kind::kSigned;
    const int width = BitWidth(in_type);
    switch (opcode) {
      case Opcode::kAbs: case Opcode::kNegate: case Opcode::kNot: case Opcode::kSign:
      case Opcode::kClz: case Opcode::kPopulationCount:
        break;
      default:
        return TypeError(instruction, in_type);
    }
    ForEachIndex(operand.shape().dimensions(), [&](Index index) {
      const uint64_t x = ReadInt(operand, index);
      const int64_t sx = static_cast<int64_t>(x);
      uint64_t r = 0;
      switch (opcode) {
        case Opcode::kAbs: r = (is_signed && sx < 0) ? ~x + 1 : x; break;
        case Opcode::kNegate: r = ~x + 1; break;
        case Opcode::kNot: r = ~x; break;
        case Opcode::kSign:
          r = is_signed ? static_cast<uint64_t>(sx > 0 ? 1 : (sx < 0 ? -1 : 0)) : (x != 0 ? 1 : 0);
          break;
        case Opcode::kClz: {
          const uint64_t v = x & Mask(width);
          r = v == 0 ? width : std::countl_zero(v) - (64 - width);
          break;
        }
        case Opcode::kPopulationCount: r = std::popcount(x & Mask(width)); break;
        default: break;
      }
      WriteInt(result, index, r);
    });
    return result;
  }

  if (kind == Kind::kFloat) {
    const ElementType out_type = result.shape().element_type();
    switch (opcode) {
      case Opcode::kClz: case Opcode::kPopulationCount: case Opcode::kNot:
        return TypeError(instruction, in_type);
      default:
        break;
    }
    const bool ieee = in_type == ElementType::kF16 || in_type == ElementType::kBF16 ||
                      in_type == ElementType::kF32 || in_type == ElementType::kF64;
    if ((opcode == Opcode::kNegate || opcode == Opcode::kAbs) && out_type == in_type && ieee) {
      // The sign bit alone, as XLA's (LLVM's) fneg and fabs: a NaN keeps its
      // payload, signalling or not (arithmetic through double would quiet an
      // f32 one).
      const uint64_t sign = uint64_t{1} << (BitWidth(in_type) - 1);
      ForEachIndex(operand.shape().dimensions(), [&](Index index) {
        const uint64_t bits = operand.GetBits(index);
        result.SetBits(index, opcode == Opcode::kNegate ? bits ^ sign : bits & ~sign);
      });
      return result;
    }
    ForEachIndex(operand.shape().dimensions(), [&](Index index) {
      const double x = ReadFloat(operand, index);
      double r = 0;
      switch (opcode) {
        case Opcode::kAbs: r = std::fabs(x); break;
        case Opcode::kAcos: r = std::acos(x); break;
        case Opcode::kAcosh: r = std::acosh(x); break;
        case Opcode::kAsin: r = std::asin(x); break;
        case Opcode::kAsinh: r = std::asinh(x); break;
        case Opcode::kAtan: r = std::atan(x); break;
        case Opcode::kAtanh: r = std::atanh(x); break;
        case Opcode::kCbrt: r = std::cbrt(x); break;
        case Opcode::kCeil: r = std::ceil(x); break;
        case Opcode::kCos: r = std::cos(x); break;
        case Opcode::kCosh: r = std::cosh(x); break;
        case Opcode::kErf: r = std::erf(x); break;
        case Opcode::kExp: r = std::exp(x); break;
        case Opcode::kExpm1: r = std::expm1(x); break;
        case Opcode::kFloor: r = std::floor(x); break;
        case Opcode::kImag: r = 0; break;
        case Opcode::kIsFinite: r = std::isfinite(x) ? 1 : 0; break;
        case Opcode::kLog: r = std::log(x); break;
        case Opcode::kLog1p: r = std::log1p(x); break;
        case Opcode::kLogistic: r = 1.0 / (1.0 + std::exp(-x)); break;
        case Opcode::kNegate: r = -x; break;
        case Opcode::kReal: r = x; break;
        case Opcode::kRoundNearestAfz: r = std::round(x); break;
        case Opcode::kRoundNearestEven: r = std::nearbyint(x); break;
        case Opcode::kRsqrt: r = 1.0 / std::sqrt(x); break;
        case Opcode::kSign: r = FloatSign(x); break;
        case Opcode::kSin: r = std::sin(x); break;
        case Opcode::kSinh: r = std::sinh(x); break;
        case Opcode::kSqrt: r = std::sqrt(x); break;
        case Opcode::kTan: r = std::tan(x); break;
        case Opcode::kTanh: r = std::tanh(x); break;
        default: break;
      }
      // An arithmetic operation returns a quiet NaN (IEEE 754; XLA's code,
      // which computes f16 in f32, too). A signalling NaN read from an f16 or
      // f64 reaches here still signalling, and libm's ceil, floor, round
      // and sign's pass it through unchanged: adding it to itself quiets it,
      // payload and sign kept (found by jit_random_test: f16 ceil of
      // 0xfcbf). real is an identity and keeps the bits.
      if (std::isnan(r) && opcode != Opcode::kReal) r = r + r;
      if (IsPred(out_type)) {
        WriteInt(result, index, r != 0 ? 1 : 0);
      } else {
        WriteFloat(result, index, r);
      }
    });
    return result;
  }

  if (kind == Kind::kComplex) {
    const ElementType out_type = result.shape().element_type();
    if (!HasComplexUnary(opcode)) return TypeError(instruction, in_type);
    ForEachIndex(operand.shape().dimensions(), [&](Index index) {
      const Complex r = ComplexUnary(opcode, ReadComplex(operand, index));
      if (IsComplex(out_type)) {
        WriteComplex(result, index, r);
      } else {
        WriteFloat(result, index, r.real());
      }
    });
    return result;
  }
  return TypeError(instruction, in_type);
}

// ---- Binary ----

bool CompareOrdered(ComparisonDirection direction, int order) {
  switch (direction) {
    case ComparisonDirection::kEq: return order == 0;
    case ComparisonDirection::kNe: return order != 0;
    case ComparisonDirection::kGe: return order >= 0;
    case ComparisonDirection::kGt: return order > 0;
    case ComparisonDirection::kLe: return order <= 0;
    case ComparisonDirection::kLt: return order < 0;
  }
  return false;
}

template <typename T>
int Order(T a, T b) { return a < b ? -1 : (a > b ? 1 : 0); }

bool CompareFloat(ComparisonDirection direction, double a, double b) {
  switch (direction) {
    case ComparisonDirection::kEq: return a == b;
    case ComparisonDirection::kNe: return a != b;
    case ComparisonDirection::kGe: return a >= b;
    case ComparisonDirection::kGt: return a > b;
    case ComparisonDirection::kLe: return a <= b;
    case ComparisonDirection::kLt: return a < b;
  }
  return false;
}

absl::StatusOr<Literal> EvalCompare(const Instruction& instruction, const Literal& lhs,
                                    const Literal& rhs) {
  const ElementType type = lhs.shape().element_type();
  const ComparisonDirection direction = instruction.attrs().comparison_direction;
  ComparisonType comparison = instruction.attrs().comparison_type;
  const Kind kind = KindOf(type);
  if (comparison == ComparisonType::kDefault) {
    switch (kind) {
      case Kind::kFloat: case Kind::kComplex: comparison = ComparisonType::kFloat; break;
      case Kind::kSigned: comparison = ComparisonType::kSigned; break;
      default: comparison = ComparisonType::kUnsigned; break;
    }
  }
  Literal result(ResultShape(instruction, lhs));
  if (kind == Kind::kComplex) {
    if (direction != ComparisonDirection::kEq && direction != ComparisonDirection::kNe) {
      return absl::InvalidArgumentError(absl::StrCat(
          "compare: complex operands support only EQ and NE, not ",
          ComparisonDirectionName(direction)));
    }
    ForEachIndex(lhs.shape().dimensions(), [&](Index index) {
      const bool equal = ReadComplex(lhs, index) == ReadComplex(rhs, index);
      WriteInt(result, index, (direction == ComparisonDirection::kEq) == equal ? 1 : 0);
    });
    return result;
  }
  if (kind == Kind::kFloat) {
    const int width = BitWidth(type);
    ForEachIndex(lhs.shape().dimensions(), [&](Index index) {
      bool r;
      if (comparison == ComparisonType::kTotalOrder) {
        r = CompareOrdered(direction, Order(TotalOrderKey(lhs.GetBits(index), width),
                                            TotalOrderKey(rhs.GetBits(index), width)));
      } else {
        r = CompareFloat(direction, ReadFloat(lhs, index), ReadFloat(rhs, index));
      }
      WriteInt(result, index, r ? 1 : 0);
    });
    return result;
  }
  if (kind == Kind::kOther) return TypeError(instruction, type);
  // Integers and pred: SIGNED reads sign-extended, UNSIGNED zero-extended.
  const int width = IsPred(type) ? 1 : BitWidth(type);
  ForEachIndex(lhs.shape().dimensions(), [&](Index index) {
    const uint64_t a = lhs.GetBits(index) & Mask(width);
    const uint64_t b = rhs.GetBits(index) & Mask(width);
    int order;
    if (comparison == ComparisonType::kSigned || comparison == ComparisonType::kTotalOrder) {
      order = IsPred(type) ? Order(a, b) : Order(SignExtend(a, width), SignExtend(b, width));
    } else {
      order = Order(a, b);
    }
    WriteInt(result, index, CompareOrdered(direction, order) ? 1 : 0);
  });
  return result;
}

uint64_t IntegerPower(uint64_t base, uint64_t exponent, bool is_signed) {
  if (is_signed && static_cast<int64_t>(exponent) < 0) {
    const int64_t b = static_cast<int64_t>(base);
    if (b == 1) return 1;
    if (b == -1) return (exponent & 1) != 0 ? static_cast<uint64_t>(-1) : 1;
    return 0;
  }
  uint64_t result = 1;
  while (exponent != 0) {
    if ((exponent & 1) != 0) result *= base;
    base *= base;
    exponent >>= 1;
  }
  return result;
}

absl::StatusOr<Literal> EvalBinary(const Instruction& instruction, const Literal& lhs,
                                   const Literal& rhs) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kCompare) return EvalCompare(instruction, lhs, rhs);
  const ElementType type = lhs.shape().element_type();
  const Kind kind = KindOf(type);
  Literal result(ResultShape(instruction, lhs));
  const auto dims = lhs.shape().dimensions();

  if (kind == Kind::kPred) {
    switch (opcode) {
      case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kAdd:
      case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
        break;
      default:
        return TypeError(instruction, type);
    }
    ForEachIndex(dims, [&](Index index) {
      const bool a = ReadInt(lhs, index) != 0;
      const bool b = ReadInt(rhs, index) != 0;
      bool r = false;
      switch (opcode) {
        case Opcode::kAnd: case Opcode::kMultiply: case Opcode::kMinimum: r = a && b; break;
        case Opcode::kOr: case Opcode::kAdd: case Opcode::kMaximum: r = a || b; break;
        case Opcode::kXor: r = a != b; break;
        default: break;
      }
      WriteInt(result, index, r ? 1 : 0);
    });
    return result;
  }

  if (kind == Kind::kSigned || kind == Kind::kUnsigned) {
    const bool is_signed = kind == Kind::kSigned;
    const int width = BitWidth(type);
    switch (opcode) {
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
      case Opcode::kRemainder: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kAnd:
      case Opcode::kOr: case Opcode::kXor: case Opcode::kShiftLeft:
      case Opcode::kShiftRightArithmetic: case Opcode::kShiftRightLogical: case Opcode::kPower:
      case Opcode::kMulhi:
        break;
      default:
        return TypeError(instruction, type);
    }
    const int64_t int_min = width >= 64 ? std::numeric_limits<int64_t>::min()
                                        : -(int64_t{1} << (width - 1));
    ForEachIndex(dims, [&](Index index) {
      const uint64_t a = ReadInt(lhs, index);
      const uint64_t b = ReadInt(rhs, index);
      const int64_t sa = static_cast<int64_t>(a);
      const int64_t sb = static_cast<int64_t>(b);
      const uint64_t ua = a & Mask(width);
      const uint64_t ub = b & Mask(width);
      uint64_t r = 0;
      switch (opcode) {
        case Opcode::kAdd: r = a + b; break;
        case Opcode::kSubtract: r = a - b; break;
        case Opcode::kMultiply: r = a * b; break;
        case Opcode::kDivide:
          if (b == 0) {
            r = ~uint64_t{0};
          } else if (is_signed) {
            r = (sa == int_min && sb == -1) ? a : static_cast<uint64_t>(sa / sb);
          } else {
            r = ua / ub;
          }
          break;
        case Opcode::kRemainder:
          if (b == 0) {
            r = a;
          } else if (is_signed) {
            r = (sa == int_min && sb == -1) ? 0 : static_cast<uint64_t>(sa % sb);
          } else {
            r = ua % ub;
          }
          break;
        case Opcode::kMaximum:
          r = is_signed ? (sa >= sb ? a : b) : (ua >= ub ? a : b);
          break;
        case Opcode::kMinimum:
          r = is_signed ? (sa <= sb ? a : b) : (ua <= ub ? a : b);
          break;
        case Opcode::kAnd: r = a & b; break;
        case Opcode::kOr: r = a | b; break;
        case Opcode::kXor: r = a ^ b; break;
        case Opcode::kShiftLeft: r = ub >= static_cast<uint64_t>(width) ? 0 : a << ub; break;
        case Opcode::kShiftRightLogical:
          r = ub >= static_cast<uint64_t>(width) ? 0 : ua >> ub;
          break;
        case Opcode::kShiftRightArithmetic: {
          // Sign-extended for signed types; an unsigned type shifts in its
          // own top bit too (the instruction is arithmetic on the bits).
          const int64_t s = SignExtend(ua, width);
          r = static_cast<uint64_t>(ub >= static_cast<uint64_t>(width) ? (s < 0 ? -1 : 0)
                                                                       : s >> ub);
          break;
        }
        case Opcode::kPower: r = IntegerPower(a, b, is_signed); break;
        case Opcode::kMulhi:
          if (is_signed) {
            const __int128 p = static_cast<__int128>(sa) * static_cast<__int128>(sb);
            r = static_cast<uint64_t>(p >> width);
          } else {
            const unsigned __int128 p =
                static_cast<unsigned __int128>(ua) * static_cast<unsigned __int128>(ub);
            r = static_cast<uint64_t>(p >> width);
          }
          break;
        default: break;
      }
      WriteInt(result, index, r);
    });
    return result;
  }

  if (kind == Kind::kFloat) {
    switch (opcode) {
      case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
      case Opcode::kRemainder: case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kPower:
      case Opcode::kAtan2: case Opcode::kComplex:
        break;
      default:
        return TypeError(instruction, type);
    }
    ForEachIndex(dims, [&](Index index) {
      const double a = ReadFloat(lhs, index);
      const double b = ReadFloat(rhs, index);
      double r = 0;
      switch (opcode) {
        case Opcode::kAdd: r = a + b; break;
        case Opcode::kSubtract: r = a - b; break;
        case Opcode::kMultiply: r = a * b; break;
        case Opcode::kDivide: r = a / b; break;
        case Opcode::kRemainder: r = std::fmod(a, b); break;
        case Opcode::kMaximum:
        case Opcode::kMinimum:
          // A NaN operand is the result with its bits (XLA's select-based
          // max/min; reading an f32 into a double would quieten a
          // signalling one; found by jit_random_test).
          if (std::isnan(a) || std::isnan(b)) {
            result.SetBits(index, std::isnan(a) ? lhs.GetBits(index) : rhs.GetBits(index));
            return;
          }
          r = opcode == Opcode::kMaximum ? IeeeMaximum(a, b) : IeeeMinimum(a, b);
          break;
        case Opcode::kPower: r = std::pow(a, b); break;
        case Opcode::kAtan2: r = std::atan2(a, b); break;
        case Opcode::kComplex: WriteComplex(result, index, Complex(a, b)); return;
        default: break;
      }
      WriteFloat(result, index, r);
    });
    return result;
  }

  if (kind == Kind::kComplex) {
    if (!HasComplexBinary(opcode)) return TypeError(instruction, type);
    ForEachIndex(dims, [&](Index index) {
      const Complex r =
          ComplexBinary(opcode, ReadComplex(lhs, index), ReadComplex(rhs, index));
      WriteComplex(result, index, r);
    });
    return result;
  }
  return TypeError(instruction, type);
}

// ---- Select and clamp ----

absl::StatusOr<Literal> EvalSelect(const Instruction& instruction, Operands operands) {
  const Literal& pred = *operands[0];
  const Literal& on_true = *operands[1];
  const Literal& on_false = *operands[2];
  if (!on_true.shape().IsArray()) {
    return absl::UnimplementedError("select on tuples is not supported");
  }
  Literal result(ResultShape(instruction, on_true));
  ForEachIndex(on_true.shape().dimensions(), [&](Index index) {
    const bool p = pred.GetBits(OperandIndex(pred, index)) != 0;
    CopyElement(p ? on_true : on_false, index, result, index);
  });
  return result;
}

absl::StatusOr<Literal> EvalClamp(const Instruction& instruction, Operands operands) {
  const Literal& low = *operands[0];
  const Literal& x = *operands[1];
  const Literal& high = *operands[2];
  const ElementType type = x.shape().element_type();
  const Kind kind = KindOf(type);
  Literal result(ResultShape(instruction, x));
  if (kind == Kind::kFloat) {
    ForEachIndex(x.shape().dimensions(), [&](Index index) {
      const double v = IeeeMinimum(ReadFloat(high, OperandIndex(high, index)),
                                   IeeeMaximum(ReadFloat(low, OperandIndex(low, index)),
                                               ReadFloat(x, index)));
      WriteFloat(result, index, v);
    });
    return result;
  }
  if (kind == Kind::kSigned || kind == Kind::kUnsigned || kind == Kind::kPred) {
    const bool is_signed = kind == Kind::kSigned;
    auto less = [&](uint64_t a, uint64_t b) {
      return is_signed ? static_cast<int64_t>(a) < static_cast<int64_t>(b) : a < b;
    };
    ForEachIndex(x.shape().dimensions(), [&](Index index) {
      const uint64_t lo = ReadInt(low, OperandIndex(low, index));
      const uint64_t hi = ReadInt(high, OperandIndex(high, index));
      uint64_t v = ReadInt(x, index);
      if (less(v, lo)) v = lo;
      if (less(hi, v)) v = hi;
      WriteInt(result, index, v);
    });
    return result;
  }
  return TypeError(instruction, type);
}

// ---- Conversions ----

absl::StatusOr<Literal> EvalConvert(const Instruction& instruction, const Literal& operand) {
  const ElementType in_type = operand.shape().element_type();
  Literal result(ResultShape(instruction, operand));
  const ElementType out_type = result.shape().element_type();
  const Kind in_kind = KindOf(in_type);
  const Kind out_kind = KindOf(out_type);
  if (in_kind == Kind::kOther || out_kind == Kind::kOther) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "convert from %s to %s", ElementTypeName(in_type), ElementTypeName(out_type)));
  }
  ForEachIndex(operand.shape().dimensions(), [&](Index index) {
    switch (in_kind) {
      case Kind::kPred: case Kind::kSigned: case Kind::kUnsigned: {
        const uint64_t v = ReadInt(operand, index);
        if (out_kind == Kind::kFloat || out_kind == Kind::kComplex) {
          WriteIntegerAsFloat(result, index, v, in_kind == Kind::kSigned);
        } else {
          WriteInt(result, index, v);
        }
        break;
      }
      case Kind::kFloat: case Kind::kComplex: {
        Complex z = in_kind == Kind::kFloat ? Complex(ReadFloat(operand, index), 0.0)
                                            : ReadComplex(operand, index);
        switch (out_kind) {
          case Kind::kPred:
            WriteInt(result, index, z.real() != 0 ? 1 : 0);  // The real part, as XLA.
            break;
          case Kind::kSigned: case Kind::kUnsigned:
            WriteInt(result, index, FloatToInteger(z.real(), out_type));
            break;
          case Kind::kFloat: WriteFloat(result, index, z.real()); break;
          case Kind::kComplex: WriteComplex(result, index, z); break;
          default: break;
        }
        break;
      }
      default: break;
    }
  });
  return result;
}

// Whether bitcast-convert between element widths `in_bits` and `out_bits`
// fits the operand and result dimensions.
bool BitcastShapesFit(const Shape& in, const Shape& out, int in_bits, int out_bits) {
  if (in_bits == out_bits) return in.SameDimensions(out);
  if (in_bits > out_bits) {
    if (in_bits % out_bits != 0 || out.rank() != in.rank() + 1) return false;
    for (int64_t i = 0; i < in.rank(); ++i) {
      if (in.dimensions(i) != out.dimensions(i)) return false;
    }
    return out.dimensions(out.rank() - 1) == in_bits / out_bits;
  }
  return BitcastShapesFit(out, in, out_bits, in_bits);
}

absl::StatusOr<Literal> EvalBitcastConvert(const Instruction& instruction,
                                           const Literal& operand) {
  const ElementType in_type = operand.shape().element_type();
  const ElementType out_type = instruction.shape().element_type();
  int in_bits = BitWidth(in_type);
  int out_bits = BitWidth(out_type);
  if (in_bits == 0 || out_bits == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bitcast-convert from %s to %s", ElementTypeName(in_type), ElementTypeName(out_type)));
  }
  if (!BitcastShapesFit(operand.shape(), instruction.shape(), in_bits, out_bits)) {
    // StableHLO's i1 is one bit wide; accept that reading where it fits.
    const int in_pred = IsPred(in_type) ? 1 : in_bits;
    const int out_pred = IsPred(out_type) ? 1 : out_bits;
    if ((in_pred != in_bits || out_pred != out_bits) &&
        BitcastShapesFit(operand.shape(), instruction.shape(), in_pred, out_pred)) {
      in_bits = in_pred;
      out_bits = out_pred;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "bitcast-convert from %s to %s does not fit the element widths",
          operand.shape().ToString(false), instruction.shape().ToString(false)));
    }
  }
  Literal result(instruction.shape());
  const Shape& out_shape = result.shape();
  const auto in_dims = operand.shape().dimensions();
  if (in_bits == out_bits) {
    if (!out_shape.SameDimensions(operand.shape())) {
      return absl::InvalidArgumentError("bitcast-convert: dimensions differ");
    }
    ForEachIndex(in_dims, [&](Index index) {
      SetRawBits(result, index, GetRawBits(operand, index));
    });
    return result;
  }
  if (in_bits > out_bits) {
    // Each element splits into a new minor dimension of in_bits / out_bits
    // pieces, the least significant piece first (little-endian bytes).
    const int64_t ratio = in_bits / out_bits;
    if (in_bits % out_bits != 0 || out_shape.rank() != operand.shape().rank() + 1 ||
        out_shape.dimensions(out_shape.rank() - 1) != ratio) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "bitcast-convert from %s to %s needs a new minor dimension of size %d",
          ElementTypeName(in_type), ElementTypeName(out_type), ratio));
    }
    const unsigned __int128 mask = (static_cast<unsigned __int128>(1) << out_bits) - 1;
    std::vector<int64_t> out_index;
    ForEachIndex(in_dims, [&](Index index) {
      const unsigned __int128 raw = GetRawBits(operand, index);
      out_index.assign(index.begin(), index.end());
      out_index.push_back(0);
      for (int64_t j = 0; j < ratio; ++j) {
        out_index.back() = j;
        SetRawBits(result, out_index, (raw >> (j * out_bits)) & mask);
      }
    });
    return result;
  }
  const int64_t ratio = out_bits / in_bits;
  if (out_bits % in_bits != 0 || operand.shape().rank() != out_shape.rank() + 1 ||
      operand.shape().dimensions(operand.shape().rank() - 1) != ratio) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bitcast-convert from %s to %s needs a minor operand dimension of size %d",
        ElementTypeName(in_type), ElementTypeName(out_type), ratio));
  }
  const unsigned __int128 mask = (static_cast<unsigned __int128>(1) << in_bits) - 1;
  std::vector<int64_t> in_index;
  ForEachIndex(out_shape.dimensions(), [&](Index index) {
    in_index.assign(index.begin(), index.end());
    in_index.push_back(0);
    unsigned __int128 raw = 0;
    for (int64_t j = 0; j < ratio; ++j) {
      in_index.back() = j;
      raw |= (GetRawBits(operand, in_index) & mask) << (j * in_bits);
    }
    SetRawBits(result, index, raw);
  });
  return result;
}

// Reduce-precision on the bits of a float of `width` bits with
// `src_exponent_bits` / `src_mantissa_bits`, as XLA's emitter does it.
uint64_t ReducePrecisionBits(uint64_t x, int width, int src_exponent_bits, int src_mantissa_bits,
                             int exponent_bits, int mantissa_bits, bool is_nan) {
  const uint64_t original = x;
  if (mantissa_bits < src_mantissa_bits) {
    const uint64_t last_mantissa_bit_mask = uint64_t{1} << (src_mantissa_bits - mantissa_bits);
    const uint64_t base_rounding_bias = (last_mantissa_bit_mask >> 1) - 1;
    const uint64_t x_last_mantissa_bit =
        (x & last_mantissa_bit_mask) >> (src_mantissa_bits - mantissa_bits);
    const uint64_t truncation_mask = ~(last_mantissa_bit_mask - 1);
    x = ((x + x_last_mantissa_bit + base_rounding_bias) & truncation_mask) & Mask(width);
  }
  if (exponent_bits < src_exponent_bits) {
    const uint64_t sign_mask = uint64_t{1} << (width - 1);
    const uint64_t exponent_mask = Mask(src_exponent_bits) << src_mantissa_bits;
    const uint64_t exponent_bias = Mask(src_exponent_bits - 1);
    const uint64_t reduced_bias = Mask(exponent_bits - 1);
    const uint64_t reduced_max = exponent_bias + reduced_bias;
    const uint64_t reduced_min = exponent_bias - reduced_bias;
    const uint64_t x_exponent = x & exponent_mask;
    const uint64_t signed_zero = x & sign_mask;
    const uint64_t signed_inf = signed_zero | exponent_mask;
    if (x_exponent > (reduced_max << src_mantissa_bits)) {
      x = signed_inf;
    } else if (x_exponent <= (reduced_min << src_mantissa_bits)) {
      x = signed_zero;
    }
  }
  if (is_nan) {
    if (mantissa_bits > 0) return original;
    return Mask(src_exponent_bits) << src_mantissa_bits;  // +inf
  }
  return x;
}

absl::StatusOr<Literal> EvalReducePrecision(const Instruction& instruction,
                                            const Literal& operand) {
  const ElementType type = operand.shape().element_type();
  const int64_t exponent_bits = instruction.attrs().exponent_bits;
  const int64_t mantissa_bits = instruction.attrs().mantissa_bits;
  if (!IsFloat(type)) return TypeError(instruction, type);
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0, got %d and %d",
        exponent_bits, mantissa_bits));
  }
  Literal result(ResultShape(instruction, operand));
  // The IEEE-like formats reduce on their own bits; the f8/f4 families go
  // through f32 (where they are exact) and round back.
  const bool native = type == ElementType::kF16 || type == ElementType::kBF16 ||
                      type == ElementType::kF32 || type == ElementType::kF64;
  const ElementType work = native ? type : ElementType::kF32;
  const int width = BitWidth(work);
  const int src_mantissa = FloatMantissaBits(work);
  const int src_exponent = FloatExponentBits(work);
  const int e = static_cast<int>(std::min<int64_t>(exponent_bits, 64));
  const int m = static_cast<int>(std::min<int64_t>(mantissa_bits, 64));
  ForEachIndex(operand.shape().dimensions(), [&](Index index) {
    uint64_t bits = operand.GetBits(index);
    const double value = FloatBitsToDouble(type, bits);
    if (!native) bits = DoubleToFloatBits(work, value);
    bits = ReducePrecisionBits(bits, width, src_exponent, src_mantissa, e, m, std::isnan(value));
    if (native) {
      result.SetBits(index, bits);
    } else {
      WriteFloat(result, index, FloatBitsToDouble(work, bits));
    }
  });
  return result;
}

// Stochastic convert (float -> signed integer) as XLA's decomposition
// defines it: round |x| down, then up when the random bits are below the
// fraction scaled to 2^bits(random); negate for negative x; saturate.
absl::StatusOr<Literal> EvalStochasticConvert(const Instruction& instruction,
                                              const Literal& operand, const Literal& random) {
  const ElementType in_type = operand.shape().element_type();
  const ElementType random_type = random.shape().element_type();
  const ElementType out_type = instruction.shape().element_type();
  if (!IsFloat(in_type) || !IsSignedInteger(out_type) || !IsUnsignedInteger(random_type)) {
    return absl::UnimplementedError(absl::StrFormat(
        "stochastic-convert from %s to %s with %s random bits is not supported",
        ElementTypeName(in_type), ElementTypeName(out_type), ElementTypeName(random_type)));
  }
  Literal result(ResultShape(instruction, operand));
  const int out_width = BitWidth(out_type);
  const int random_width = BitWidth(random_type);
  const double min = -std::ldexp(1.0, out_width - 1);
  const double max = std::ldexp(1.0, out_width - 1) - 1;
  ForEachIndex(operand.shape().dimensions(), [&](Index index) {
    const double x = ReadFloat(operand, index);
    uint64_t r;
    if (std::isnan(x)) {
      r = 0;
    } else if (x <= min) {
      r = static_cast<uint64_t>(SignExtend(uint64_t{1} << (out_width - 1), out_width));
    } else if (x >= max) {
      r = Mask(out_width - 1);
    } else {
      const double magnitude = std::fabs(x);
      const double truncated = std::floor(magnitude);
      const double fixed = (magnitude - truncated) * std::ldexp(1.0, random_width);
      const uint64_t fixed_bits = FloatToInteger(fixed, random_type);
      const uint64_t random_bits = ReadInt(random, index);
      int64_t v = static_cast<int64_t>(truncated);
      if (random_bits < fixed_bits) ++v;
      if (x < 0) v = -v;
      r = static_cast<uint64_t>(v);
    }
    WriteInt(result, index, r);
  });
  return result;
}

}  // namespace

absl::StatusOr<Literal> EvalElementwise(const Instruction& instruction, Operands operands) {
  const Opcode opcode = instruction.opcode();
  auto need = [&](int64_t n) -> absl::Status {
    if (static_cast<int64_t>(operands.size()) != n) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s takes %d operands, got %d", OpcodeName(opcode), n, operands.size()));
    }
    for (const Literal* operand : operands) {
      if (!operand->shape().IsArray()) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpcodeName(opcode), " takes array operands"));
      }
    }
    return absl::OkStatus();
  };
  // Operands of elementwise operations must agree in dimensions (runtime
  // sizes included); scalars are allowed where HLO broadcasts them.
  auto same_dims = [&](const Literal& a, const Literal& b) -> absl::Status {
    if (!a.shape().SameDimensions(b.shape())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: operand dimensions %s and %s differ", OpcodeName(opcode), a.shape().ToString(),
          b.shape().ToString()));
    }
    return absl::OkStatus();
  };
  if (IsElementwiseUnary(opcode)) {
    XJIT_RETURN_IF_ERROR(need(1));
    return EvalUnary(instruction, *operands[0]);
  }
  if (IsElementwiseBinary(opcode)) {
    XJIT_RETURN_IF_ERROR(need(2));
    XJIT_RETURN_IF_ERROR(same_dims(*operands[0], *operands[1]));
    if (operands[0]->shape().element_type() != operands[1]->shape().element_type()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: operand element types %s and %s differ", OpcodeName(opcode),
          ElementTypeName(operands[0]->shape().element_type()),
          ElementTypeName(operands[1]->shape().element_type())));
    }
    return EvalBinary(instruction, *operands[0], *operands[1]);
  }
  switch (opcode) {
    case Opcode::kSelect:
      XJIT_RETURN_IF_ERROR(need(3));
      XJIT_RETURN_IF_ERROR(same_dims(*operands[1], *operands[2]));
      if (operands[0]->shape().rank() != 0) {
        XJIT_RETURN_IF_ERROR(same_dims(*operands[0], *operands[1]));
      }
      return EvalSelect(instruction, operands);
    case Opcode::kClamp:
      XJIT_RETURN_IF_ERROR(need(3));
      if (operands[0]->shape().rank() != 0) {
        XJIT_RETURN_IF_ERROR(same_dims(*operands[0], *operands[1]));
      }
      if (operands[2]->shape().rank() != 0) {
        XJIT_RETURN_IF_ERROR(same_dims(*operands[2], *operands[1]));
      }
      return EvalClamp(instruction, operands);
    case Opcode::kConvert:
      XJIT_RETURN_IF_ERROR(need(1));
      return EvalConvert(instruction, *operands[0]);
    case Opcode::kBitcastConvert:
      XJIT_RETURN_IF_ERROR(need(1));
      XJIT_RETURN_IF_ERROR(RequireStaticOperands(instruction, operands));
      return EvalBitcastConvert(instruction, *operands[0]);
    case Opcode::kReducePrecision:
      XJIT_RETURN_IF_ERROR(need(1));
      return EvalReducePrecision(instruction, *operands[0]);
    case Opcode::kStochasticConvert:
      XJIT_RETURN_IF_ERROR(need(2));
      XJIT_RETURN_IF_ERROR(same_dims(*operands[0], *operands[1]));
      return EvalStochasticConvert(instruction, *operands[0], *operands[1]);
    default:
      return absl::InternalError(
          absl::StrCat("EvalElementwise called for ", OpcodeName(opcode)));
  }
}

}  // namespace xjit::eval
