// KernelLowering (AArch64): float operations shared by the scalar and vector
// representations, and the NEON vector form of every operation Vectorizable
// accepts (see a64_lowering.h).
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/a64/a64_lowering.h"

namespace xjit::jit::a64 {

using namespace asmjit;  // NOLINT
namespace arm64 = asmjit::a64;
using asmjit::arm::CondCode;
using asmjit::a64::Gp;
using asmjit::a64::Vec;

namespace {

bool IsF32OrF64(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64;
}

absl::Status NoVectorCode(const KOp& op) {
  return absl::InternalError(absl::StrCat("aarch64: no vector code for ", OpcodeName(op.opcode),
                                          " on ", ElementTypeName(op.type),
                                          " (Vectorizable accepted it)"));
}

uint64_t LaneMask(int width) { return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1; }

}  // namespace

// ---- Views and constants ----

Vec KernelLowering::F(const Vec& v, bool f64) const {
  if (mode_ == Mode::kVector) return f64 ? Vec(v.d2()) : Vec(v.s4());
  return f64 ? Vec(v.d()) : Vec(v.s());
}

Vec KernelLowering::I(const Vec& v, int width) const {
  switch (width) {
    case 8: return v.b16();
    case 16: return v.h8();
    case 32: return v.s4();
    default: return v.d2();
  }
}

Vec KernelLowering::B16(const Vec& v) const { return v.b16(); }

Vec KernelLowering::Dup(Gp g, int width) {
  Vec v = NewVec();
  cc_.dup(I(v, width), width == 64 ? Gp(g) : Gp(g.w()));
  return v;
}

Vec KernelLowering::ConstVec(int width, uint64_t bits) {
  bits &= LaneMask(width);
  if (bits == 0) {
    Vec v = NewVec();
    cc_.movi(v.b16(), 0);
    return v;
  }
  Gp g = NewGp();
  MovImm(g, bits);
  if (mode_ == Mode::kVector) return Dup(g, width);
  Vec v = NewVec();
  if (width == 64) {
    cc_.fmov(v.d(), g);
  } else {
    cc_.fmov(v.s(), g.w());
  }
  return v;
}

Vec KernelLowering::Blend(Vec mask, Vec if_true, Vec if_false) {
  Vec d = NewVec();
  cc_.mov(d.b16(), mask.b16());
  cc_.bsl(d.b16(), if_true.b16(), if_false.b16());
  return d;
}

Vec KernelLowering::SelectInPlace(int id) {
  const KOp& op = program_.ops[id];
  const Vec mask = vals_[op.a].vec;
  const Vec if_true = vals_[op.b].vec;
  const Vec if_false = vals_[op.c].vec;
  if (Killable(op.a, id)) {  // mask = (mask & if_true) | (~mask & if_false)
    cc_.bsl(mask.b16(), if_true.b16(), if_false.b16());
    return mask;
  }
  if (Killable(op.c, id)) {  // if_false gets if_true's bits where mask is set.
    cc_.bit(if_false.b16(), if_true.b16(), mask.b16());
    return if_false;
  }
  if (Killable(op.b, id)) {  // if_true gets if_false's bits where mask is clear.
    cc_.bif(if_true.b16(), if_false.b16(), mask.b16());
    return if_true;
  }
  return Blend(mask, if_true, if_false);
}

// ---- Float operations (both representations) ----

absl::Status KernelLowering::FloatUnary(Opcode opcode, bool f64, Vec x, Vec* out) {
  Vec d = NewVec();
  switch (opcode) {
    case Opcode::kAbs: cc_.fabs(F(d, f64), F(x, f64)); break;  // Sign bit only.
    case Opcode::kNegate: cc_.fneg(F(d, f64), F(x, f64)); break;
    case Opcode::kSqrt: cc_.fsqrt(F(d, f64), F(x, f64)); break;
    case Opcode::kFloor: cc_.frintm(F(d, f64), F(x, f64)); break;
    case Opcode::kCeil: cc_.frintp(F(d, f64), F(x, f64)); break;
    case Opcode::kRoundNearestEven: cc_.frintn(F(d, f64), F(x, f64)); break;
    case Opcode::kRoundNearestAfz: cc_.frinta(F(d, f64), F(x, f64)); break;
    case Opcode::kSign: {
      // copysign(1, x) where |x| > 0, else x itself (zeros, NaN).
      const int width = f64 ? 64 : 32;
      const uint64_t sign = uint64_t{1} << (width - 1);
      Vec one = ConstVec(width, f64 ? 0x3FF0000000000000ull : 0x3F800000u);
      Vec sign_mask = ConstVec(width, sign);
      Vec signed_one = Blend(sign_mask, x, one);
      Vec ax = NewVec();
      cc_.fabs(F(ax, f64), F(x, f64));
      Vec zero = ConstVec(width, 0);
      Vec nonzero = NewVec();
      cc_.fcmgt(F(nonzero, f64), F(ax, f64), F(zero, f64));
      d = Blend(nonzero, signed_one, x);
      break;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat("aarch64: no code for ", OpcodeName(opcode), " on floats"));
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status KernelLowering::FloatBinary(Opcode opcode, bool f64, Vec a, Vec b, Vec* out) {
  Vec d = NewVec();
  switch (opcode) {
    case Opcode::kAdd: cc_.fadd(F(d, f64), F(a, f64), F(b, f64)); break;
    case Opcode::kSubtract: cc_.fsub(F(d, f64), F(a, f64), F(b, f64)); break;
    case Opcode::kMultiply: cc_.fmul(F(d, f64), F(a, f64), F(b, f64)); break;
    case Opcode::kDivide: cc_.fdiv(F(d, f64), F(a, f64), F(b, f64)); break;
    // fmax/fmin: NaN if either operand is NaN, and -0 < +0: XLA's maximum
    // and minimum exactly.
    case Opcode::kMaximum: cc_.fmax(F(d, f64), F(a, f64), F(b, f64)); break;
    case Opcode::kMinimum: cc_.fmin(F(d, f64), F(a, f64), F(b, f64)); break;
    default:
      return absl::UnimplementedError(
          absl::StrCat("aarch64: no code for ", OpcodeName(opcode), " on floats"));
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitFloatPrimitive(int id) {
  const KOp& op = program_.ops[id];
  if (!IsF32OrF64(op.type)) {
    return absl::UnimplementedError("aarch64: primitive float op on a non-float type");
  }
  const bool f64 = op.type == ElementType::kF64;
  const int width = f64 ? 64 : 32;
  switch (op.kind) {
    case KOpKind::kConst:
      SetVec(id, ConstVec(width, static_cast<uint64_t>(op.imm)));
      return absl::OkStatus();
    case KOpKind::kFma: {
      Vec d;
      if (mode_ == Mode::kVector) {
        // fmla accumulates into its destination: the addend's own register
        // where the addend dies here, else a copy of it.
        if (Killable(op.c, id)) {
          d = vals_[op.c].vec;
        } else {
          d = NewVec();
          cc_.mov(d.b16(), vals_[op.c].vec.b16());
        }
        cc_.fmla(F(d, f64), F(vals_[op.a].vec, f64), F(vals_[op.b].vec, f64));
      } else {
        d = NewVec();
        cc_.fmadd(F(d, f64), F(vals_[op.a].vec, f64), F(vals_[op.b].vec, f64),
                  F(vals_[op.c].vec, f64));
      }
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kBits: {
      // Vector forms in both modes (the scalar one ignores lanes above 0).
      Vec d = NewVec();
      const Vec a = vals_[op.a].vec;
      const Vec b = vals_[op.b].vec;
      switch (op.opcode) {
        case Opcode::kAnd: cc_.and_(d.b16(), a.b16(), b.b16()); break;
        case Opcode::kOr: cc_.orr(d.b16(), a.b16(), b.b16()); break;
        case Opcode::kXor: cc_.eor(d.b16(), a.b16(), b.b16()); break;
        case Opcode::kAdd: cc_.add(I(d, width), I(a, width), I(b, width)); break;
        case Opcode::kSubtract: cc_.sub(I(d, width), I(a, width), I(b, width)); break;
        default:
          return absl::UnimplementedError("aarch64: unknown bit operation");
      }
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kBitShift: {
      Vec d = NewVec();
      const Vec a = vals_[op.a].vec;
      if (op.opcode == Opcode::kShiftLeft) {
        cc_.shl(I(d, width), I(a, width), Imm(op.imm));
      } else {
        cc_.ushr(I(d, width), I(a, width), Imm(op.imm));
      }
      SetVec(id, d);
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("not a primitive float op");
  }
}

// ---- Vector masks ----

Vec KernelLowering::FloatCompareMask(ComparisonDirection direction, bool f64, Vec a, Vec b) {
  Vec d = NewVec();
  switch (direction) {
    case ComparisonDirection::kEq: cc_.fcmeq(F(d, f64), F(a, f64), F(b, f64)); break;
    case ComparisonDirection::kNe:
      cc_.fcmeq(F(d, f64), F(a, f64), F(b, f64));
      cc_.mvn(d.b16(), d.b16());  // True for NaN operands.
      break;
    case ComparisonDirection::kGt: cc_.fcmgt(F(d, f64), F(a, f64), F(b, f64)); break;
    case ComparisonDirection::kGe: cc_.fcmge(F(d, f64), F(a, f64), F(b, f64)); break;
    case ComparisonDirection::kLt: cc_.fcmgt(F(d, f64), F(b, f64), F(a, f64)); break;
    case ComparisonDirection::kLe: cc_.fcmge(F(d, f64), F(b, f64), F(a, f64)); break;
  }
  return d;
}

Vec KernelLowering::IntCompareMask(ComparisonDirection direction, bool is_signed, Vec a, Vec b) {
  const int w = lane_bits_;
  Vec d = NewVec();
  auto greater = [&](Vec x, Vec y) {
    is_signed ? cc_.cmgt(I(d, w), I(x, w), I(y, w)) : cc_.cmhi(I(d, w), I(x, w), I(y, w));
  };
  auto greater_equal = [&](Vec x, Vec y) {
    is_signed ? cc_.cmge(I(d, w), I(x, w), I(y, w)) : cc_.cmhs(I(d, w), I(x, w), I(y, w));
  };
  switch (direction) {
    case ComparisonDirection::kEq: cc_.cmeq(I(d, w), I(a, w), I(b, w)); break;
    case ComparisonDirection::kNe:
      cc_.cmeq(I(d, w), I(a, w), I(b, w));
      cc_.mvn(d.b16(), d.b16());
      break;
    case ComparisonDirection::kGt: greater(a, b); break;
    case ComparisonDirection::kGe: greater_equal(a, b); break;
    case ComparisonDirection::kLt: greater(b, a); break;
    case ComparisonDirection::kLe: greater_equal(b, a); break;
  }
  return d;
}

Vec KernelLowering::IntMaxMin(bool max, bool is_signed, Vec a, Vec b) {
  const int w = lane_bits_;
  if (w < 64) {
    Vec d = NewVec();
    if (max) {
      is_signed ? cc_.smax(I(d, w), I(a, w), I(b, w)) : cc_.umax(I(d, w), I(a, w), I(b, w));
    } else {
      is_signed ? cc_.smin(I(d, w), I(a, w), I(b, w)) : cc_.umin(I(d, w), I(a, w), I(b, w));
    }
    return d;
  }
  // No 64-bit smax/umax: a compare and a bit select.
  Vec greater = IntCompareMask(ComparisonDirection::kGt, is_signed, a, b);
  return max ? Blend(greater, a, b) : Blend(greater, b, a);
}

Vec KernelLowering::Multiply64(Vec a, Vec b) {
  // NEON has no 64-bit lane multiply. With a = ah * 2^32 + al (and b
  // likewise), a * b mod 2^64 = al * bl + ((ah * bl + al * bh) << 32): the
  // cross products need only their low 32 bits (a 32-bit lane mul of a with
  // b's halves swapped), summed pairwise into 64 bits (uaddlp), shifted up,
  // plus the full 64-bit product of the low halves (umlal).
  Vec swapped = NewVec();
  cc_.rev64(swapped.s4(), b.s4());
  Vec cross = NewVec();
  cc_.mul(cross.s4(), swapped.s4(), a.s4());
  Vec d = NewVec();
  cc_.uaddlp(d.d2(), cross.s4());
  cc_.shl(d.d2(), d.d2(), Imm(32));
  Vec a_low = NewVec();
  Vec b_low = NewVec();
  cc_.xtn(a_low.s2(), a.d2());
  cc_.xtn(b_low.s2(), b.d2());
  cc_.umlal(d.d2(), a_low.s2(), b_low.s2());
  return d;
}

// ---- Vector value operations ----

absl::Status KernelLowering::EmitVectorValueOp(int id) {
  const KOp& op = program_.ops[id];
  const int w = lane_bits_;
  switch (op.kind) {
    case KOpKind::kLoad: {
      const int bytes = static_cast<int>(ByteWidth(op.type));
      const Gp address = ElementAddress(static_cast<int>(op.imm), op.a, bytes);
      Vec v = NewVec();
      if (strides_[op.a] == 0) {
        if (IsPred(op.type)) {
          Gp g = NewGp();
          cc_.ldrb(g.w(), arm64::ptr(address));
          cc_.cmp(g, 0);
          cc_.csetm(g, Imm(CondCode::kNE));
          SetVec(id, Dup(g, w));
          return absl::OkStatus();
        }
        cc_.ld1r(I(v, bytes * 8), arm64::ptr(address));  // Every lane.
        SetVec(id, v);
        return absl::OkStatus();
      }
      if (IsPred(op.type)) {
        // One byte per lane: load lanes_ bytes, widen to the lane width,
        // then 0/1 to masks.
        switch (lanes_) {
          case 16: cc_.ldr(v.q(), arm64::ptr(address)); break;
          case 8: cc_.ldr(v.d(), arm64::ptr(address)); break;
          case 4: cc_.ldr(v.s(), arm64::ptr(address)); break;
          default: cc_.ldr(v.h(), arm64::ptr(address)); break;
        }
        if (w >= 16) cc_.uxtl(v.h8(), v.b8());
        if (w >= 32) cc_.uxtl(v.s4(), v.h4());
        if (w >= 64) cc_.uxtl(v.d2(), v.s2());
        Vec m = NewVec();
        cc_.cmtst(I(m, w), I(v, w), I(v, w));
        SetVec(id, m);
        return absl::OkStatus();
      }
      cc_.ldr(v.q(), arm64::ptr(address));
      SetVec(id, v);
      return absl::OkStatus();
    }
    case KOpKind::kStore: {
      const ElementType type = op.operand_type;
      const int bytes = static_cast<int>(ByteWidth(type));
      const Gp address =
          ElementAddress(program_.output_buffer(static_cast<int>(op.imm)), op.a, bytes);
      Vec v = vals_[op.b].vec;
      if (IsPred(type)) {
        // Masks narrowed to one byte per lane (xtn keeps the low half of
        // each lane), 0/1, lanes_ bytes stored.
        Vec t = NewVec();
        cc_.mov(t.b16(), v.b16());
        if (w >= 64) cc_.xtn(t.s2(), t.d2());
        if (w >= 32) cc_.xtn(t.h4(), t.s4());
        if (w >= 16) cc_.xtn(t.b8(), t.h8());
        Vec one = ConstVec(8, 1);
        cc_.and_(t.b16(), t.b16(), one.b16());
        switch (lanes_) {
          case 16: cc_.str(t.q(), arm64::ptr(address)); break;
          case 8: cc_.str(t.d(), arm64::ptr(address)); break;
          case 4: cc_.str(t.s(), arm64::ptr(address)); break;
          default: cc_.str(t.h(), arm64::ptr(address)); break;
        }
        return absl::OkStatus();
      }
      cc_.str(v.q(), arm64::ptr(address));
      return absl::OkStatus();
    }
    case KOpKind::kFromIndex: {
      const Gp index = vals_[op.a].gp;
      if (IsPred(op.type)) {
        Gp g = NewGp();
        cc_.cmp(index, 0);
        cc_.csetm(g, Imm(CondCode::kNE));
        SetVec(id, Dup(g, w));
        return absl::OkStatus();
      }
      if (IsF32OrF64(op.type)) {  // Invariant (Vectorizable): convert, broadcast.
        const bool f64 = op.type == ElementType::kF64;
        Vec s = NewVec();
        cc_.scvtf(f64 ? Vec(s.d()) : Vec(s.s()), index);
        Vec v = NewVec();
        cc_.dup(F(v, f64), f64 ? Vec(s.d(0)) : Vec(s.s(0)));
        SetVec(id, v);
        return absl::OkStatus();
      }
      // Integers: lane k holds index + k * stride, wrapped to the width.
      Vec v = Dup(index, w);
      const int64_t stride = *strides_[op.a];
      if (stride != 0) {
        Vec offsets = NewVec();
        cc_.movi(offsets.b16(), 0);
        Gp lane = NewGp();
        for (int k = 1; k < lanes_; ++k) {
          MovImm(lane, static_cast<uint64_t>(k * stride));
          switch (w) {
            case 8: cc_.ins(offsets.b(k), lane.w()); break;
            case 16: cc_.ins(offsets.h(k), lane.w()); break;
            case 32: cc_.ins(offsets.s(k), lane.w()); break;
            default: cc_.ins(offsets.d(k), lane); break;
          }
        }
        cc_.add(I(v, w), I(v, w), I(offsets, w));
      }
      SetVec(id, v);
      return absl::OkStatus();
    }
    case KOpKind::kConst: case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift:
      return EmitFloatPrimitive(id);
    case KOpKind::kSelect:
      SetVec(id, SelectInPlace(id));
      return absl::OkStatus();
    case KOpKind::kClamp: {
      const Vec lo = vals_[op.a].vec;
      const Vec x = vals_[op.b].vec;
      const Vec hi = vals_[op.c].vec;
      if (IsF32OrF64(op.type)) {
        const bool f64 = op.type == ElementType::kF64;
        Vec low;
        Vec r;
        XJIT_RETURN_IF_ERROR(FloatBinary(Opcode::kMaximum, f64, lo, x, &low));
        XJIT_RETURN_IF_ERROR(FloatBinary(Opcode::kMinimum, f64, hi, low, &r));
        SetVec(id, r);
        return absl::OkStatus();
      }
      const bool is_signed = IsSignedInteger(op.type);
      SetVec(id, IntMaxMin(false, is_signed, hi, IntMaxMin(true, is_signed, lo, x)));
      return absl::OkStatus();
    }
    case KOpKind::kCompare: {
      const Vec a = vals_[op.a].vec;
      const Vec b = vals_[op.b].vec;
      if (IsF32OrF64(op.operand_type)) {
        SetVec(id, FloatCompareMask(op.direction, op.operand_type == ElementType::kF64, a, b));
      } else if (IsPred(op.operand_type)) {
        // Masks (true = all ones) order as false < true when compared
        // unsigned, whatever the comparison type says.
        SetVec(id, IntCompareMask(op.direction, /*is_signed=*/false, a, b));
      } else {
        SetVec(id,
               IntCompareMask(op.direction, op.comparison == ComparisonType::kSigned, a, b));
      }
      return absl::OkStatus();
    }
    case KOpKind::kBitcast:
      SetVec(id, vals_[op.a].vec);  // Same lane width (Vectorizable).
      return absl::OkStatus();
    case KOpKind::kConvert: {
      const ElementType from = op.operand_type;
      const ElementType to = op.type;
      const Vec x = vals_[op.a].vec;
      if (from == to || (IsInteger(from) && IsInteger(to))) {
        SetVec(id, x);  // Same width: the same lane bits.
        return absl::OkStatus();
      }
      Vec d = NewVec();
      if (IsPred(from)) {  // Mask to 0/1 (or 1.0).
        const uint64_t one = to == ElementType::kF32   ? 0x3F800000u
                             : to == ElementType::kF64 ? 0x3FF0000000000000ull
                                                       : 1;
        Vec k = ConstVec(w, one);
        cc_.and_(d.b16(), x.b16(), k.b16());
      } else if (IsPred(to)) {  // x != 0 (NaN is true).
        if (IsF32OrF64(from)) {
          d = FloatCompareMask(ComparisonDirection::kNe, from == ElementType::kF64, x,
                               ConstVec(w, 0));
        } else {
          cc_.cmtst(I(d, w), I(x, w), I(x, w));
        }
      } else if (IsF32OrF64(from)) {
        // fcvtzs/fcvtzu: truncate, saturate, NaN -> 0 (XLA's semantics).
        const bool f64 = from == ElementType::kF64;
        IsSignedInteger(to) ? cc_.fcvtzs(F(d, f64), F(x, f64)) : cc_.fcvtzu(F(d, f64), F(x, f64));
      } else {
        const bool f64 = to == ElementType::kF64;
        IsSignedInteger(from) ? cc_.scvtf(F(d, f64), F(x, f64)) : cc_.ucvtf(F(d, f64), F(x, f64));
      }
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kUnary:
    case KOpKind::kBinary:
      break;
    default:
      return NoVectorCode(op);
  }
  // Unary and binary operations.
  if (IsPred(op.type)) {
    const Vec a = vals_[op.a].vec;
    Vec d = NewVec();
    if (op.kind == KOpKind::kUnary) {
      cc_.mvn(d.b16(), a.b16());
    } else {
      const Vec b = vals_[op.b].vec;
      switch (op.opcode) {
        case Opcode::kAnd: case Opcode::kMultiply: case Opcode::kMinimum:
          cc_.and_(d.b16(), a.b16(), b.b16());
          break;
        case Opcode::kOr: case Opcode::kAdd: case Opcode::kMaximum:
          cc_.orr(d.b16(), a.b16(), b.b16());
          break;
        default:
          cc_.eor(d.b16(), a.b16(), b.b16());
          break;
      }
    }
    SetVec(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(op.type)) return EmitIntVectorOp(id);
  const bool f64 = op.type == ElementType::kF64;
  Vec r;
  if (op.kind == KOpKind::kUnary) {
    XJIT_RETURN_IF_ERROR(FloatUnary(op.opcode, f64, vals_[op.a].vec, &r));
  } else {
    XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, vals_[op.a].vec, vals_[op.b].vec, &r));
  }
  SetVec(id, r);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitIntVectorOp(int id) {
  const KOp& op = program_.ops[id];
  const int w = lane_bits_;
  const bool is_signed = IsSignedInteger(op.type);
  const Vec a = vals_[op.a].vec;
  Vec d = NewVec();
  if (op.kind == KOpKind::kUnary) {
    switch (op.opcode) {
      case Opcode::kAbs:
        if (is_signed) {
          cc_.abs(I(d, w), I(a, w));  // abs(INT_MIN) wraps to INT_MIN, as XLA.
        } else {
          d = a;
        }
        break;
      case Opcode::kNegate: cc_.neg(I(d, w), I(a, w)); break;
      case Opcode::kNot: cc_.mvn(d.b16(), a.b16()); break;
      case Opcode::kSign: {
        Vec zero = ConstVec(w, 0);
        if (is_signed) {
          // (x < 0 mask = -1) - (x > 0 mask = -1): -1, 0 or 1.
          Vec negative = NewVec();
          Vec positive = NewVec();
          cc_.cmgt(I(negative, w), I(zero, w), I(a, w));
          cc_.cmgt(I(positive, w), I(a, w), I(zero, w));
          cc_.sub(I(d, w), I(negative, w), I(positive, w));
        } else {
          // (x == 0 mask) + 1: 0 or 1.
          Vec is_zero = NewVec();
          cc_.cmeq(I(is_zero, w), I(a, w), I(zero, w));
          Vec one = ConstVec(w, 1);
          cc_.add(I(d, w), I(is_zero, w), I(one, w));
        }
        break;
      }
      default:
        return NoVectorCode(op);
    }
    SetVec(id, d);
    return absl::OkStatus();
  }
  const Vec b = vals_[op.b].vec;
  switch (op.opcode) {
    case Opcode::kAdd: cc_.add(I(d, w), I(a, w), I(b, w)); break;
    case Opcode::kSubtract: cc_.sub(I(d, w), I(a, w), I(b, w)); break;
    case Opcode::kMultiply:
      if (w == 64) {
        d = Multiply64(a, b);
      } else {
        cc_.mul(I(d, w), I(a, w), I(b, w));
      }
      break;
    case Opcode::kAnd: cc_.and_(d.b16(), a.b16(), b.b16()); break;
    case Opcode::kOr: cc_.orr(d.b16(), a.b16(), b.b16()); break;
    case Opcode::kXor: cc_.eor(d.b16(), a.b16(), b.b16()); break;
    case Opcode::kMaximum: d = IntMaxMin(true, is_signed, a, b); break;
    case Opcode::kMinimum: d = IntMaxMin(false, is_signed, a, b); break;
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: {
      // sshl/ushl shift by the signed low byte of each lane (negative:
      // right). Amounts are unsigned at the lane width; those >= width give
      // 0 (left, logical) or the sign fill (arithmetic: the amount clamped
      // to width - 1).
      Vec limit = ConstVec(w, static_cast<uint64_t>(w - 1));
      Vec too_big = NewVec();
      cc_.cmhi(I(too_big, w), I(b, w), I(limit, w));
      if (op.opcode == Opcode::kShiftLeft) {
        cc_.ushl(I(d, w), I(a, w), I(b, w));
        cc_.bic(d.b16(), d.b16(), too_big.b16());
      } else if (op.opcode == Opcode::kShiftRightLogical) {
        Vec negative = NewVec();
        cc_.neg(I(negative, w), I(b, w));
        cc_.ushl(I(d, w), I(a, w), I(negative, w));
        cc_.bic(d.b16(), d.b16(), too_big.b16());
      } else {
        Vec amount = Blend(too_big, limit, b);
        Vec negative = NewVec();
        cc_.neg(I(negative, w), I(amount, w));
        cc_.sshl(I(d, w), I(a, w), I(negative, w));
      }
      break;
    }
    default:
      return NoVectorCode(op);
  }
  SetVec(id, d);
  return absl::OkStatus();
}

}  // namespace xjit::jit::a64
