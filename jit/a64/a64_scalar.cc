// KernelLowering (AArch64): value operations one element at a time (see
// a64_lowering.h for the representation). Integer semantics are the
// evaluator's (interpreter/evaluator.h): wrap-around arithmetic, x/0 = -1,
// x%0 = x, INT_MIN/-1 = INT_MIN, out-of-range shifts, saturating
// float-to-integer with NaN -> 0.
#include <cmath>
#include <cstring>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/a64/a64_lowering.h"
#include "jit/kernel/complex_calls.h"

namespace xjit::jit::a64 {

using namespace asmjit;  // NOLINT
namespace arm64 = asmjit::a64;
using asmjit::arm::CondCode;
using asmjit::a64::Gp;
using asmjit::a64::Vec;

namespace {

bool IsIntegerOrPred(ElementType type) { return IsInteger(type) || IsPred(type); }
bool IsNarrowFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16;
}
bool IsF32OrF64(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kF64;
}

absl::Status NoCode(const KOp& op, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("aarch64: no code for ", what, " on ",
                                               ElementTypeName(op.operand_type), " -> ",
                                               ElementTypeName(op.type)));
}

uint64_t WidthMask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

Imm Cond(CondCode code) { return Imm(code); }

// Makes `call` clobber x30 (the link register) for the register allocator.
// asmjit's AArch64 calling convention (the 2022 revision xjit builds with;
// asmjit issue #526, fixed upstream later) lists x30 among the registers a
// callee preserves and leaves x30 allocatable, so a value that lives across
// the call (a buffer pointer of the output loop) could stay in x30, which
// `blr` overwrites with the return address: det_c128's complex-call kernel
// read its second batch through the return address and gave NaN. With x30
// clobbered the allocator spills such a value around the call. Harmless
// where asmjit already gets this right.
void ClobberLinkRegister(InvokeNode* call) {
  CallConv& conv = const_cast<CallConv&>(call->detail().callConv());
  conv.setPreservedRegs(RegGroup::kGp,
                        conv.preservedRegs(RegGroup::kGp) & ~(RegMask{1} << 30));
}

// The fmod functions the remainder calls (exact, as the evaluator's).
float FmodF32(float a, float b) { return std::fmod(a, b); }
double FmodF64(double a, double b) { return std::fmod(a, b); }

}  // namespace

void KernelLowering::Normalize(Gp g, ElementType type) {
  if (IsPred(type)) return;
  const int width = BitWidth(type);
  if (width >= 64) return;
  if (IsSignedInteger(type)) {
    cc_.sbfx(g, g, 0, width);
  } else {
    cc_.ubfx(g, g, 0, width);
  }
}

Vec KernelLowering::AsF32(int id, ElementType type) {
  if (vals_[id].in_vec) return vals_[id].vec;
  const Gp raw = vals_[id].gp;
  Vec v = NewVec();
  if (type == ElementType::kBF16) {
    Gp t = NewGp();
    cc_.lsl(t.w(), raw.w(), 16);
    cc_.fmov(v.s(), t.w());
  } else {
    cc_.fmov(v.s(), raw.w());  // The f16 bits in the low half.
    cc_.fcvt(v.s(), v.h());
  }
  return v;
}

Gp KernelLowering::AsRaw16(int id, ElementType type) {
  if (!vals_[id].in_vec) return vals_[id].gp;
  const Vec x = vals_[id].vec;
  Gp d = NewGp();
  if (type == ElementType::kBF16) {
    // Already a bf16 value: the low 16 bits of its f32 are zero.
    cc_.fmov(d.w(), x.s());
    cc_.lsr(d.w(), d.w(), 16);
  } else {
    Vec h = NewVec();
    cc_.fcvt(h.h(), x.s());  // Exact: the value is an f16 value.
    cc_.fmov(d.w(), h.s());  // Writing h zeroed the rest of the register.
  }
  return d;
}

Vec KernelLowering::Quantize(Vec f32, ElementType type) {
  Vec v = NewVec();
  if (type == ElementType::kF16) {
    // fcvt rounds to nearest even (FPCR default), subnormals and overflow
    // included; back to f32 exactly.
    cc_.fcvt(v.h(), f32.s());
    cc_.fcvt(v.s(), v.h());
    return v;
  }
  // bf16: round the f32 bits to nearest even at bit 16; NaNs stay NaN
  // (quieted).
  Gp bits = NewGp();
  Gp t = NewGp();
  Gp quiet = NewGp();
  Gp magnitude = NewGp();
  cc_.fmov(bits.w(), f32.s());
  cc_.orr(quiet.w(), bits.w(), 0x00400000);
  cc_.ubfx(t.w(), bits.w(), 16, 1);
  cc_.add(t.w(), t.w(), bits.w());
  Gp half = NewGp();
  cc_.mov(half.w(), 0x7FFF);
  cc_.add(t.w(), t.w(), half.w());
  cc_.and_(magnitude.w(), bits.w(), 0x7FFFFFFF);
  Gp inf = NewGp();
  MovImm(inf, 0x7F800000);
  cc_.cmp(magnitude.w(), inf.w());
  cc_.csel(t.w(), quiet.w(), t.w(), Cond(CondCode::kHI));
  cc_.and_(t.w(), t.w(), 0xFFFF0000);
  cc_.fmov(v.s(), t.w());
  return v;
}

absl::Status KernelLowering::IntegerToNarrow(int id, Gp value, ElementType from,
                                             ElementType to) {
  Vec d = NewVec();
  if (to == ElementType::kF16) {
    // Integers below 2^24 are exact in f32 and those above overflow f16
    // (max 65504) either way: one rounding.
    from == ElementType::kU64 ? cc_.ucvtf(d.s(), value) : cc_.scvtf(d.s(), value);
    SetVec(id, Quantize(d, to));
    return absl::OkStatus();
  }
  if (BitWidth(from) < 64) {
    cc_.scvtf(d.d(), value);  // Exact.
  } else {
    // The magnitude rounded to odd at bit 11 when it has more than 53 bits
    // (the low 11 bits folded into bit 11 as a sticky bit), which makes it
    // exact in f64; rounding to odd and then to nearest at far fewer bits is
    // one correct rounding. INT64_MIN's magnitude is 2^63 as unsigned.
    const bool is_signed = from == ElementType::kS64;
    Gp m = NewGp();
    if (is_signed) {
      cc_.cmp(value, 0);
      cc_.cneg(m, value, Imm(CondCode::kLT));
    } else {
      cc_.mov(m, value);
    }
    Gp sticky = NewGp();
    cc_.tst(m, 0x7FF);
    cc_.cset(sticky, Imm(CondCode::kNE));
    Gp odd = NewGp();
    cc_.and_(odd, m, ~uint64_t{0x7FF});
    cc_.orr(odd, odd, sticky, arm64::lsl(11));
    Gp limit = NewGp();
    MovImm(limit, uint64_t{1} << 53);
    cc_.cmp(m, limit);
    cc_.csel(m, odd, m, Cond(CondCode::kHS));
    cc_.ucvtf(d.d(), m);
    if (is_signed) {
      Vec negated = NewVec();
      cc_.fneg(negated.d(), d.d());
      cc_.cmp(value, 0);
      cc_.fcsel(d.d(), negated.d(), d.d(), Imm(CondCode::kLT));
    }
  }
  // Exact in f64, then to f32 rounding to odd (fcvtxn), then to bf16: one
  // correct rounding.
  Vec f = NewVec();
  cc_.fcvtxn(f.s(), d.d());
  SetVec(id, Quantize(f, to));
  return absl::OkStatus();
}

// ---- Loads and stores ----

absl::Status KernelLowering::ScalarLoad(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.type;
  const int bytes = static_cast<int>(ByteWidth(type));
  uint32_t shift = 0;
  while ((1 << shift) < bytes) ++shift;
  const Gp base = buffers_[op.imm];
  const Gp position = vals_[op.a].gp;
  const arm64::Mem m = shift == 0 ? arm64::ptr(base, position)
                                : arm64::ptr(base, position, arm64::lsl(shift));
  if (IsF32OrF64(type)) {
    Vec v = NewVec();
    cc_.ldr(type == ElementType::kF64 ? Vec(v.d()) : Vec(v.s()), m);
    SetVec(id, v);
    return absl::OkStatus();
  }
  Gp d = NewGp();
  if (IsNarrowFloat(type)) {
    cc_.ldrh(d.w(), m);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (!IsIntegerOrPred(type)) return NoCode(op, "load");
  if (IsPred(type)) {
    cc_.ldrb(d.w(), m);
    cc_.cmp(d, 0);
    cc_.cset(d, Cond(CondCode::kNE));
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool is_signed = IsSignedInteger(type);
  switch (bytes) {
    case 1: is_signed ? cc_.ldrsb(d, m) : cc_.ldrb(d.w(), m); break;
    case 2: is_signed ? cc_.ldrsh(d, m) : cc_.ldrh(d.w(), m); break;
    case 4: is_signed ? cc_.ldrsw(d, m) : cc_.ldr(d.w(), m); break;
    default: cc_.ldr(d, m); break;
  }
  if (BitWidth(type) < 8) Normalize(d, type);  // Sub-byte types in a byte.
  SetGp(id, d);
  return absl::OkStatus();
}

absl::Status KernelLowering::ScalarStore(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  const int bytes = static_cast<int>(ByteWidth(type));
  uint32_t shift = 0;
  while ((1 << shift) < bytes) ++shift;
  const Gp base = buffers_[program_.output_buffer(static_cast<int>(op.imm))];
  const Gp position = vals_[op.a].gp;
  const arm64::Mem m = shift == 0 ? arm64::ptr(base, position)
                                : arm64::ptr(base, position, arm64::lsl(shift));
  if (IsF32OrF64(type)) {
    const Vec v = vals_[op.b].vec;
    cc_.str(type == ElementType::kF64 ? Vec(v.d()) : Vec(v.s()), m);
    return absl::OkStatus();
  }
  if (IsNarrowFloat(type)) {
    cc_.strh(AsRaw16(op.b, type).w(), m);
    return absl::OkStatus();
  }
  if (!IsIntegerOrPred(type)) return NoCode(op, "store");
  Gp v = vals_[op.b].gp;
  if (BitWidth(type) < 8 && !IsPred(type)) {
    Gp t = NewGp();
    cc_.ubfx(t, v, 0, BitWidth(type));
    v = t;
  }
  switch (bytes) {
    case 1: cc_.strb(v.w(), m); break;
    case 2: cc_.strh(v.w(), m); break;
    case 4: cc_.str(v.w(), m); break;
    default: cc_.str(v, m); break;
  }
  return absl::OkStatus();
}

// ---- Dispatch ----

absl::Status KernelLowering::EmitScalarValueOp(int id) {
  const KOp& op = program_.ops[id];
  switch (op.kind) {
    case KOpKind::kLoad:
      return ScalarLoad(id);
    case KOpKind::kStore:
      return ScalarStore(id);
    case KOpKind::kFromIndex:
      return ConvertFromInteger(id, vals_[op.a].gp, ElementType::kS64, op.type);
    case KOpKind::kToIndex: {
      // u64 values above INT64_MAX read as INT64_MAX (they clamp like it).
      Gp d = NewGp();
      const Gp a = vals_[op.a].gp;
      if (op.operand_type == ElementType::kU64) {
        Gp max = NewGp();
        MovImm(max, static_cast<uint64_t>(std::numeric_limits<int64_t>::max()));
        cc_.cmp(a, 0);
        cc_.csel(d, max, a, Cond(CondCode::kLT));
      } else {
        cc_.mov(d, a);
      }
      SetGp(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kUnary:
      return EmitScalarUnary(id);
    case KOpKind::kBinary:
      return EmitScalarBinary(id);
    case KOpKind::kCompare:
      return EmitScalarCompare(id);
    case KOpKind::kConvert:
      return EmitScalarConvert(id);
    case KOpKind::kBitcast:
      return EmitScalarBitcast(id);
    case KOpKind::kConst: case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift:
      return EmitFloatPrimitive(id);
    case KOpKind::kCall: case KOpKind::kCallArgs: case KOpKind::kCallImag:
      return EmitScalarCall(id);
    case KOpKind::kSelect: {
      const Gp p = vals_[op.a].gp;
      const ElementType type = op.type;
      const bool narrow = IsNarrowFloat(type);
      if (IsIntegerOrPred(type) || (narrow && !vals_[op.b].in_vec && !vals_[op.c].in_vec)) {
        Gp d = NewGp();
        cc_.cmp(p, 0);
        cc_.csel(d, vals_[op.b].gp, vals_[op.c].gp, Cond(CondCode::kNE));
        SetGp(id, d);
        return absl::OkStatus();
      }
      if (!IsF32OrF64(type) && !narrow) return NoCode(op, "select");
      const bool f64 = type == ElementType::kF64;
      const Vec t = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
      const Vec f = narrow ? AsF32(op.c, type) : vals_[op.c].vec;
      Vec d = NewVec();
      cc_.cmp(p, 0);
      cc_.fcsel(F(d, f64), F(t, f64), F(f, f64), Cond(CondCode::kNE));
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kClamp: {
      const ElementType type = op.type;
      if (IsIntegerOrPred(type)) {
        const bool is_signed = IsSignedInteger(type);
        const Gp lo = vals_[op.a].gp;
        const Gp hi = vals_[op.c].gp;
        Gp t = NewGp();
        Gp d = NewGp();
        cc_.cmp(vals_[op.b].gp, lo);
        cc_.csel(t, vals_[op.b].gp, lo, Cond(is_signed ? CondCode::kGT : CondCode::kHI));
        cc_.cmp(t, hi);
        cc_.csel(d, t, hi, Cond(is_signed ? CondCode::kLT : CondCode::kLO));
        SetGp(id, d);
        return absl::OkStatus();
      }
      const bool narrow = IsNarrowFloat(type);
      if (!IsF32OrF64(type) && !narrow) return NoCode(op, "clamp");
      const bool f64 = type == ElementType::kF64;
      // Clamping never creates a new value, so no rounding is needed.
      const Vec lo = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
      const Vec x = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
      const Vec hi = narrow ? AsF32(op.c, type) : vals_[op.c].vec;
      Vec low;
      Vec r;
      XJIT_RETURN_IF_ERROR(FloatBinary(Opcode::kMaximum, f64, lo, x, &low));
      XJIT_RETURN_IF_ERROR(FloatBinary(Opcode::kMinimum, f64, hi, low, &r));
      SetVec(id, r);
      return absl::OkStatus();
    }
    default:
      return NoCode(op, "operation");
  }
}

absl::Status KernelLowering::EmitScalarUnary(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  if (IsPred(type)) {
    if (op.opcode != Opcode::kNot) return NoCode(op, OpcodeName(op.opcode));
    Gp d = NewGp();
    cc_.eor(d, vals_[op.a].gp, 1);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    const Gp a = vals_[op.a].gp;
    const bool is_signed = IsSignedInteger(type);
    const int width = BitWidth(type);
    Gp d = NewGp();
    switch (op.opcode) {
      case Opcode::kAbs:
        if (is_signed) {
          cc_.cmp(a, 0);
          cc_.cneg(d, a, Cond(CondCode::kLT));
          Normalize(d, type);
        } else {
          cc_.mov(d, a);
        }
        break;
      case Opcode::kNegate:
        cc_.neg(d, a);
        Normalize(d, type);
        break;
      case Opcode::kNot:
        cc_.mvn(d, a);
        Normalize(d, type);
        break;
      case Opcode::kSign:
        cc_.cmp(a, 0);
        if (is_signed) {
          Gp t = NewGp();
          cc_.cset(d, Cond(CondCode::kGT));
          cc_.csetm(t, Cond(CondCode::kLT));
          cc_.orr(d, d, t);
        } else {
          cc_.cset(d, Cond(CondCode::kNE));
        }
        break;
      case Opcode::kClz: {
        Gp v = NewGp();
        if (width < 64) {
          cc_.ubfx(v, a, 0, width);
        } else {
          cc_.mov(v, a);
        }
        cc_.clz(d, v);
        if (width < 64) cc_.sub(d, d, 64 - width);
        // s1/s2: the count (up to the width) wraps in the type.
        if (width < 8) Normalize(d, type);
        break;
      }
      case Opcode::kPopulationCount: {
        Gp v = NewGp();
        if (width < 64) {
          cc_.ubfx(v, a, 0, width);
        } else {
          cc_.mov(v, a);
        }
        Vec t = NewVec();
        cc_.fmov(t.d(), v);
        cc_.cnt(t.b8(), t.b8());
        cc_.addv(t.b(), t.b8());
        cc_.umov(d.w(), t.b(0));
        if (width < 8) Normalize(d, type);  // s1/s2: as clz.
        break;
      }
      default:
        return NoCode(op, OpcodeName(op.opcode));
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool narrow = IsNarrowFloat(type);
  if (!IsF32OrF64(type) && !narrow) return NoCode(op, OpcodeName(op.opcode));
  if (narrow && op.type == type &&
      (op.opcode == Opcode::kNegate || op.opcode == Opcode::kAbs)) {
    // The sign bit of the raw 16 bits, as XLA's fneg/fabs: a NaN keeps its
    // payload.
    Gp d = NewGp();
    const Gp raw = AsRaw16(op.a, type);
    if (op.opcode == Opcode::kNegate) {
      cc_.eor(d.w(), raw.w(), 0x8000);
    } else {
      cc_.and_(d.w(), raw.w(), 0x7FFF);
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool f64 = type == ElementType::kF64;
  const Vec x = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  if (op.opcode == Opcode::kIsFinite) {
    // |x| < inf: false for inf and NaN.
    Vec t = NewVec();
    cc_.fabs(F(t, f64), F(x, f64));
    Vec inf = ConstVec(f64 ? 64 : 32, f64 ? 0x7FF0000000000000ull : 0x7F800000u);
    cc_.fcmp(F(t, f64), F(inf, f64));
    Gp d = NewGp();
    cc_.cset(d, Cond(CondCode::kMI));
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (op.type != type) return NoCode(op, OpcodeName(op.opcode));
  Vec r;
  XJIT_RETURN_IF_ERROR(FloatUnary(op.opcode, f64, x, &r));
  const bool exact = op.opcode == Opcode::kAbs || op.opcode == Opcode::kNegate;
  if (narrow && !exact) r = Quantize(r, type);
  SetVec(id, r);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitScalarBinary(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.type;
  if (IsPred(type)) {
    Gp d = NewGp();
    const Gp a = vals_[op.a].gp;
    const Gp b = vals_[op.b].gp;
    switch (op.opcode) {
      case Opcode::kAnd: case Opcode::kMultiply: case Opcode::kMinimum:
        cc_.and_(d, a, b);
        break;
      case Opcode::kOr: case Opcode::kAdd: case Opcode::kMaximum:
        cc_.orr(d, a, b);
        break;
      case Opcode::kXor:
        cc_.eor(d, a, b);
        break;
      default:
        return NoCode(op, OpcodeName(op.opcode));
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(type)) return ScalarIntegerBinary(id);
  const bool narrow = IsNarrowFloat(type);
  if (!IsF32OrF64(type) && !narrow) return NoCode(op, OpcodeName(op.opcode));
  const bool f64 = type == ElementType::kF64;
  const Vec a = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  const Vec b = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
  Vec r;
  if (op.opcode == Opcode::kRemainder) {
    r = FloatRemainder(f64, a, b);  // Exact, so already of the narrow type.
  } else {
    XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, a, b, &r));
  }
  const bool exact = op.opcode == Opcode::kMaximum || op.opcode == Opcode::kMinimum ||
                     op.opcode == Opcode::kRemainder;
  if (narrow && !exact) r = Quantize(r, type);
  SetVec(id, r);
  return absl::OkStatus();
}

absl::Status KernelLowering::ScalarIntegerBinary(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.type;
  const Gp a = vals_[op.a].gp;
  const Gp b = vals_[op.b].gp;
  const bool is_signed = IsSignedInteger(type);
  const int width = BitWidth(type);
  Gp d = NewGp();
  switch (op.opcode) {
    case Opcode::kAdd:
      cc_.add(d, a, b);
      Normalize(d, type);
      break;
    case Opcode::kSubtract:
      cc_.sub(d, a, b);
      Normalize(d, type);
      break;
    case Opcode::kMultiply:
      cc_.mul(d, a, b);
      Normalize(d, type);
      break;
    case Opcode::kAnd:
      cc_.and_(d, a, b);
      break;
    case Opcode::kOr:
      cc_.orr(d, a, b);
      break;
    case Opcode::kXor:
      cc_.eor(d, a, b);
      break;
    case Opcode::kMaximum:
      cc_.cmp(a, b);
      cc_.csel(d, a, b, Cond(is_signed ? CondCode::kGT : CondCode::kHI));
      break;
    case Opcode::kMinimum:
      cc_.cmp(a, b);
      cc_.csel(d, a, b, Cond(is_signed ? CondCode::kLT : CondCode::kLO));
      break;
    case Opcode::kDivide:
    case Opcode::kRemainder: {
      // sdiv/udiv never trap: x/0 = 0 and INT64_MIN/-1 = INT64_MIN. The
      // canonical 64-bit values make narrower INT_MIN/-1 wrap back to
      // INT_MIN by normalisation; the remainder a - q*b is then x for b = 0
      // and 0 for b = -1, as XLA's. x/0 becomes -1 (all ones).
      Gp q = NewGp();
      if (is_signed) {
        cc_.sdiv(q, a, b);
      } else {
        cc_.udiv(q, a, b);
      }
      if (op.opcode == Opcode::kDivide) {
        cc_.cmp(b, 0);
        cc_.csinv(d, q, arm64::xzr, Cond(CondCode::kNE));
      } else {
        cc_.msub(d, q, b, a);
      }
      Normalize(d, type);
      break;
    }
    case Opcode::kShiftLeft:
    case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic: {
      // The amount is read as unsigned at the type's width; amounts >= width
      // give 0 (or the sign fill).
      Gp amount = NewGp();
      if (width < 64) {
        cc_.ubfx(amount, b, 0, width);
      } else {
        cc_.mov(amount, b);
      }
      Gp value = NewGp();
      cc_.cmp(amount, width);
      if (op.opcode == Opcode::kShiftLeft) {
        cc_.lsl(value, a, amount);
        cc_.csel(d, value, arm64::xzr, Cond(CondCode::kLO));
      } else if (op.opcode == Opcode::kShiftRightLogical) {
        Gp source = a;
        if (width < 64 && is_signed) {
          source = NewGp();
          cc_.ubfx(source, a, 0, width);
        }
        cc_.lsr(value, source, amount);
        cc_.csel(d, value, arm64::xzr, Cond(CondCode::kLO));
      } else {
        Gp source = a;
        if (width < 64 && !is_signed) {
          source = NewGp();
          cc_.sbfx(source, a, 0, width);
        }
        Gp count = NewGp();
        Gp top = NewGp();
        cc_.mov(top, 63);
        cc_.csel(count, amount, top, Cond(CondCode::kLO));
        cc_.asr(d, source, count);
      }
      Normalize(d, type);
      break;
    }
    case Opcode::kMulhi:
      if (width < 64) {
        // The full product fits in 64 bits.
        cc_.mul(d, a, b);
        is_signed ? cc_.asr(d, d, width) : cc_.lsr(d, d, width);
      } else {
        is_signed ? cc_.smulh(d, a, b) : cc_.umulh(d, a, b);
      }
      Normalize(d, type);
      break;
    default:
      return NoCode(op, OpcodeName(op.opcode));
  }
  SetGp(id, d);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitScalarCall(int id) {
  const KOp& op = program_.ops[id];
  if (op.kind == KOpKind::kCallArgs) return absl::OkStatus();  // Read by its kCall.
  if (op.kind == KOpKind::kCallImag) {
    auto it = call_imag_.find(op.a);
    if (it == call_imag_.end()) return absl::InternalError("call_imag before its call");
    SetVec(id, it->second);
    return absl::OkStatus();
  }
  const std::optional<ComplexCallOperands> call_operands = ComplexCallOperandsOf(program_, op);
  if (!call_operands.has_value()) {
    return NoCode(op, absl::StrCat("complex ", OpcodeName(op.opcode)));
  }
  const ComplexCallFn fn = call_operands->fn;
  const bool f64 = call_operands->f64;
  const int bytes = call_operands->component_bytes;
  const std::vector<int>& parts = call_operands->parts;
  for (int part : parts) {
    if (!vals_[part].in_vec) return NoCode(op, "complex call operand not in a register");
  }
  // The components go through two stack slots: fn(in, out).
  const arm64::Mem in = cc_.newStack(4 * 8, 16);
  const arm64::Mem out = cc_.newStack(2 * 8, 16);
  auto slot = [&](const arm64::Mem& base, int k) {
    arm64::Mem m = base;
    m.addOffset(static_cast<int64_t>(k) * bytes);
    return m;
  };
  for (size_t k = 0; k < parts.size(); ++k) {
    const Vec v = vals_[parts[k]].vec;
    cc_.str(f64 ? Vec(v.d()) : Vec(v.s()), slot(in, static_cast<int>(k)));
  }
  Gp in_ptr = NewGp();
  Gp out_ptr = NewGp();
  cc_.loadAddressOf(in_ptr, in);
  cc_.loadAddressOf(out_ptr, out);
  Gp target = NewGp();  // blr takes a register.
  MovImm(target, reinterpret_cast<uint64_t>(fn));
  InvokeNode* call = nullptr;
  cc_.invoke(&call, target, FuncSignatureT<void, const void*, void*>(CallConvId::kHost));
  ClobberLinkRegister(call);
  call->setArg(0, in_ptr);
  call->setArg(1, out_ptr);
  Vec re = NewVec();
  Vec im = NewVec();
  cc_.ldr(f64 ? Vec(re.d()) : Vec(re.s()), slot(out, 0));
  cc_.ldr(f64 ? Vec(im.d()) : Vec(im.s()), slot(out, 1));
  SetVec(id, re);
  call_imag_[id] = im;
  return absl::OkStatus();
}

Vec KernelLowering::FloatRemainder(bool f64, Vec a, Vec b) {
  InvokeNode* call = nullptr;
  Vec r = NewVec();
  Gp target = NewGp();  // blr takes a register.
  MovImm(target, f64 ? reinterpret_cast<uint64_t>(&FmodF64)
                     : reinterpret_cast<uint64_t>(&FmodF32));
  if (f64) {
    cc_.invoke(&call, target, FuncSignatureT<double, double, double>(CallConvId::kHost));
    ClobberLinkRegister(call);
    call->setArg(0, a.d());
    call->setArg(1, b.d());
    call->setRet(0, r.d());
  } else {
    cc_.invoke(&call, target, FuncSignatureT<float, float, float>(CallConvId::kHost));
    ClobberLinkRegister(call);
    call->setArg(0, a.s());
    call->setArg(1, b.s());
    call->setRet(0, r.s());
  }
  return r;
}

absl::Status KernelLowering::EmitScalarCompare(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  Gp d = NewGp();
  if (IsIntegerOrPred(type) || op.comparison == ComparisonType::kTotalOrder) {
    Gp a;
    Gp b;
    bool is_signed = op.comparison == ComparisonType::kSigned ||
                     op.comparison == ComparisonType::kTotalOrder;
    if (IsIntegerOrPred(type)) {
      a = vals_[op.a].gp;
      b = vals_[op.b].gp;
      const int width = BitWidth(type);
      if (is_signed && IsUnsignedInteger(type) && width < 64) {
        // Read the unsigned bits as signed at the same width.
        Gp sa = NewGp();
        Gp sb = NewGp();
        cc_.sbfx(sa, a, 0, width);
        cc_.sbfx(sb, b, 0, width);
        a = sa;
        b = sb;
      }
    } else {
      const bool narrow = IsNarrowFloat(type);
      if (!IsF32OrF64(type) && !narrow) return NoCode(op, "compare");
      // Total order: flip the magnitude bits of negative floats, then the
      // signed integer order is the total order.
      const bool f64 = type == ElementType::kF64;
      a = NewGp();
      b = NewGp();
      for (auto [g, operand] : {std::pair{a, op.a}, std::pair{b, op.b}}) {
        if (narrow) {
          cc_.sxth(g, AsRaw16(operand, type).w());
        } else if (f64) {
          cc_.fmov(g, vals_[operand].vec.d());
        } else {
          cc_.fmov(g.w(), vals_[operand].vec.s());
          cc_.sxtw(g, g.w());
        }
        Gp s = NewGp();
        cc_.asr(s, g, 63);
        cc_.lsr(s, s, 1);
        cc_.eor(g, g, s);
      }
      is_signed = true;
    }
    cc_.cmp(a, b);
    CondCode code = CondCode::kEQ;
    switch (op.direction) {
      case ComparisonDirection::kEq: code = CondCode::kEQ; break;
      case ComparisonDirection::kNe: code = CondCode::kNE; break;
      case ComparisonDirection::kLt: code = is_signed ? CondCode::kLT : CondCode::kLO; break;
      case ComparisonDirection::kLe: code = is_signed ? CondCode::kLE : CondCode::kLS; break;
      case ComparisonDirection::kGt: code = is_signed ? CondCode::kGT : CondCode::kHI; break;
      case ComparisonDirection::kGe: code = is_signed ? CondCode::kGE : CondCode::kHS; break;
    }
    cc_.cset(d, Cond(code));
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool narrow = IsNarrowFloat(type);
  if (!IsF32OrF64(type) && !narrow) return NoCode(op, "compare");
  const bool f64 = type == ElementType::kF64;
  const Vec x = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  const Vec y = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
  cc_.fcmp(F(x, f64), F(y, f64));
  // After fcmp, unordered sets C and V: these conditions are false for NaN
  // operands except ne, which is true (IEEE).
  CondCode code = CondCode::kEQ;
  switch (op.direction) {
    case ComparisonDirection::kEq: code = CondCode::kEQ; break;
    case ComparisonDirection::kNe: code = CondCode::kNE; break;
    case ComparisonDirection::kLt: code = CondCode::kMI; break;
    case ComparisonDirection::kLe: code = CondCode::kLS; break;
    case ComparisonDirection::kGt: code = CondCode::kGT; break;
    case ComparisonDirection::kGe: code = CondCode::kGE; break;
  }
  cc_.cset(d, Cond(code));
  SetGp(id, d);
  return absl::OkStatus();
}

// ---- Conversions ----

absl::Status KernelLowering::ConvertFromInteger(int id, Gp value, ElementType from,
                                                ElementType to) {
  if (IsPred(to)) {
    Gp d = NewGp();
    cc_.cmp(value, 0);
    cc_.cset(d, Cond(CondCode::kNE));
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(to)) {
    Gp d = NewGp();
    cc_.mov(d, value);
    Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsF32OrF64(to)) {
    // One rounding from the canonical 64-bit value (u64: unsigned).
    const bool f64 = to == ElementType::kF64;
    Vec d = NewVec();
    if (from == ElementType::kU64) {
      cc_.ucvtf(F(d, f64), value);
    } else {
      cc_.scvtf(F(d, f64), value);
    }
    SetVec(id, d);
    return absl::OkStatus();
  }
  if (IsNarrowFloat(to)) return IntegerToNarrow(id, value, from, to);
  return NoCode(program_.ops[id], "convert");
}

Gp KernelLowering::FloatToInteger(Vec x, bool f64, ElementType to) {
  // fcvtzs/fcvtzu truncate, saturate at the 64-bit range and give 0 for
  // NaN; narrower types clamp the 64-bit result to their range.
  const int width = BitWidth(to);
  const bool is_signed = IsSignedInteger(to);
  Gp d = NewGp();
  if (is_signed) {
    cc_.fcvtzs(d, F(x, f64));
  } else {
    cc_.fcvtzu(d, F(x, f64));
  }
  if (width < 64) {
    Gp hi = NewGp();
    MovImm(hi, is_signed ? WidthMask(width - 1) : WidthMask(width));
    cc_.cmp(d, hi);
    cc_.csel(d, d, hi, Cond(is_signed ? CondCode::kLT : CondCode::kLO));
    if (is_signed) {
      Gp lo = NewGp();
      MovImm(lo, ~WidthMask(width - 1));
      cc_.cmp(d, lo);
      cc_.csel(d, d, lo, Cond(CondCode::kGT));
    }
  }
  return d;
}

absl::Status KernelLowering::EmitScalarConvert(int id) {
  const KOp& op = program_.ops[id];
  const ElementType from = op.operand_type;
  const ElementType to = op.type;
  if (IsIntegerOrPred(from)) return ConvertFromInteger(id, vals_[op.a].gp, from, to);
  const bool narrow_from = IsNarrowFloat(from);
  if (!IsF32OrF64(from) && !narrow_from) return NoCode(op, "convert");
  if (narrow_from && to == from) {
    vals_[id] = vals_[op.a];
    return absl::OkStatus();
  }
  // f16 and bf16 go through their exact f32 value.
  const bool f64 = from == ElementType::kF64;
  const Vec x = narrow_from ? AsF32(op.a, from) : vals_[op.a].vec;
  if (IsNarrowFloat(to)) {
    if (!f64) {
      SetVec(id, Quantize(x, to));  // One rounding from an f32 value.
      return absl::OkStatus();
    }
    Vec d = NewVec();
    if (to == ElementType::kF16) {
      cc_.fcvt(d.h(), x.d());  // f64 -> f16 directly: one rounding.
      cc_.fcvt(d.s(), d.h());
      SetVec(id, d);
    } else {
      cc_.fcvtxn(d.s(), x.d());  // Round to odd, then to bf16: one rounding.
      SetVec(id, Quantize(d, to));
    }
    return absl::OkStatus();
  }
  if (IsPred(to)) {
    // x != 0; NaN is true.
    Gp d = NewGp();
    cc_.fcmp(F(x, f64), Imm(0));
    cc_.cset(d, Cond(CondCode::kNE));
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(to)) {
    SetGp(id, FloatToInteger(x, f64, to));
    return absl::OkStatus();
  }
  if (to == from || (narrow_from && to == ElementType::kF32)) {
    SetVec(id, x);
    return absl::OkStatus();
  }
  if (IsF32OrF64(to)) {
    Vec d = NewVec();
    cc_.fcvt(F(d, !f64), F(x, f64));
    SetVec(id, d);
    return absl::OkStatus();
  }
  return NoCode(op, "convert");
}

absl::Status KernelLowering::EmitScalarBitcast(int id) {
  const KOp& op = program_.ops[id];
  const ElementType from = op.operand_type;
  const ElementType to = op.type;
  if (BitWidth(from) != BitWidth(to) || IsPred(from) || IsPred(to)) {
    return NoCode(op, "bitcast-convert");
  }
  const bool f64 = BitWidth(to) == 64;
  if (IsNarrowFloat(from) || IsNarrowFloat(to)) {  // Raw 16 bits.
    Gp d = NewGp();
    if (IsNarrowFloat(from)) {
      cc_.mov(d, AsRaw16(op.a, from));
    } else {
      cc_.ubfx(d, vals_[op.a].gp, 0, 16);
    }
    if (IsInteger(to)) Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(from) && IsInteger(to)) {
    Gp d = NewGp();
    cc_.mov(d, vals_[op.a].gp);
    Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsF32OrF64(from) && IsF32OrF64(to)) {
    SetVec(id, vals_[op.a].vec);
    return absl::OkStatus();
  }
  if (IsF32OrF64(from) && IsInteger(to)) {
    Gp d = NewGp();
    if (f64) {
      cc_.fmov(d, vals_[op.a].vec.d());
    } else {
      cc_.fmov(d.w(), vals_[op.a].vec.s());
    }
    Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(from) && IsF32OrF64(to)) {
    Vec d = NewVec();
    if (f64) {
      cc_.fmov(d.d(), vals_[op.a].gp);
    } else {
      cc_.fmov(d.s(), vals_[op.a].gp.w());
    }
    SetVec(id, d);
    return absl::OkStatus();
  }
  return NoCode(op, "bitcast-convert");
}

}  // namespace xjit::jit::a64
