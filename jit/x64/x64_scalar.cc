// KernelLowering: value operations one element at a time, for every element
// type (see x64_lowering.h for the representation). Integer semantics are the
// evaluator's (interpreter/evaluator.h): wrap-around arithmetic, x/0 = -1, x%0 = x,
// INT_MIN/-1 = INT_MIN, out-of-range shifts, saturating float-to-integer.
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/float_format.h"
#include "ir/status_macros.h"
#include "jit/kernel/complex_calls.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT
namespace Inst = x86::Inst;

namespace {

bool IsNarrowFloat(ElementType type) {
  return type == ElementType::kF16 || type == ElementType::kBF16;
}

bool IsIntegerOrPred(ElementType type) { return IsInteger(type) || IsPred(type); }

absl::Status NoCode(const KOp& op, absl::string_view what) {
  return absl::UnimplementedError(absl::StrCat("x86-64: no code for ", what, " on ",
                                               ElementTypeName(op.operand_type), " -> ",
                                               ElementTypeName(op.type)));
}

uint64_t WidthMask(int width) {
  return width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
}

}  // namespace

// ---- Representation helpers ----

void KernelLowering::ZeroExtendedCopy(x86::Gp d, x86::Gp g, int width, bool is_signed) {
  if (!is_signed || width >= 64) {
    cc_.mov(d, g);  // Unsigned values are held zero-extended.
  } else if (width == 32) {
    cc_.mov(d.r32(), g.r32());  // Writing the low half clears the high one.
  } else {
    cc_.mov(d, g);
    cc_.and_(d, static_cast<int32_t>(WidthMask(width)));
  }
}

void KernelLowering::Normalize(x86::Gp g, ElementType type) {
  if (IsPred(type)) return;
  const int width = BitWidth(type);
  if (width >= 64) return;
  if (IsSignedInteger(type)) {
    switch (width) {
      case 8: cc_.movsx(g, g.r8()); return;
      case 16: cc_.movsx(g, g.r16()); return;
      case 32: cc_.movsxd(g, g.r32()); return;
      default:
        cc_.shl(g, 64 - width);
        cc_.sar(g, 64 - width);
        return;
    }
  }
  switch (width) {
    case 8: cc_.movzx(g.r32(), g.r8()); return;
    case 16: cc_.movzx(g.r32(), g.r16()); return;
    case 32: cc_.mov(g.r32(), g.r32()); return;
    default: cc_.and_(g, static_cast<int32_t>(WidthMask(width))); return;
  }
}

x86::Gp KernelLowering::IntegerToIndexSaturating(x86::Gp g, ElementType type) {
  x86::Gp d = NewGp();
  cc_.mov(d, g);
  if (type == ElementType::kU64) {
    // Values above INT64_MAX read as INT64_MAX (they clamp like it).
    x86::Gp max = NewGp();
    cc_.mov(max, std::numeric_limits<int64_t>::max());
    cc_.test(d, d);
    cc_.cmovs(d, max);
  }
  return d;
}

x86::Gp KernelLowering::MaskToPred(x86::Vec mask) {
  x86::Gp d = NewGp();
  if (features_.avx2) {
    cc_.vmovd(d.r32(), mask.xmm());
  } else {
    cc_.movd(d.r32(), mask.xmm());
  }
  cc_.and_(d.r32(), 1);
  return d;
}

x86::Vec KernelLowering::PredToMask(x86::Gp pred) {
  x86::Gp m = NewGp();
  cc_.mov(m, pred);
  cc_.neg(m);
  x86::Xmm v = cc_.newXmm();
  if (features_.avx2) {
    cc_.vmovq(v, m);
  } else {
    cc_.movq(v, m);
  }
  return v;
}

x86::Vec KernelLowering::Widen16(x86::Gp raw, ElementType type) {
  x86::Xmm v = cc_.newXmm();
  if (type == ElementType::kBF16) {
    x86::Gp t = NewGp();
    cc_.mov(t.r32(), raw.r32());
    cc_.shl(t.r32(), 16);
    if (features_.avx2) {
      cc_.vmovd(v, t.r32());
    } else {
      cc_.movd(v, t.r32());
    }
    return v;
  }
  if (features_.f16c && features_.avx2) {
    cc_.vmovd(v, raw.r32());
    cc_.vcvtph2ps(v, v);
    // vcvtph2ps quietens a signalling NaN; the widening is exact elsewhere
    // (as below without F16C), so that clamp, select, max/min give the
    // operand's bits back: a NaN takes its sign and payload from `raw`.
    x86::Gp t = NewGp();
    x86::Gp nan = NewGp();
    x86::Gp bits = NewGp();
    cc_.vmovd(bits.r32(), v);
    cc_.mov(nan.r32(), raw.r32());
    cc_.and_(nan.r32(), 0x3FF);
    cc_.shl(nan.r32(), 13);
    cc_.or_(nan.r32(), 0x7F800000);
    cc_.mov(t.r32(), raw.r32());
    cc_.and_(t.r32(), 0x8000);
    cc_.shl(t.r32(), 16);
    cc_.or_(nan.r32(), t.r32());
    cc_.mov(t.r32(), raw.r32());
    cc_.and_(t.r32(), 0x7FFF);
    cc_.cmp(t.r32(), 0x7C00);
    cc_.cmova(bits.r32(), nan.r32());
    x86::Xmm r = cc_.newXmm();
    cc_.vmovd(r, bits.r32());
    return r;
  }
  // Without F16C: the exponent and fraction moved into f32 position and
  // scaled by 2^(127-15) in f32 (exact, also for subnormals, which become
  // normal); exponent 31 (inf, NaN) maps to 255 keeping the fraction.
  x86::Gp t = NewGp();
  x86::Gp special = NewGp();
  x86::Gp bits = NewGp();
  x86::Gp sign = NewGp();
  cc_.mov(t.r32(), raw.r32());
  cc_.and_(t.r32(), 0x7FFF);
  cc_.shl(t.r32(), 13);
  cc_.movd(v, t.r32());
  cc_.mulss(v, Const(false, 0x77800000u).xmm());  // 2^112
  cc_.movd(bits.r32(), v);
  cc_.mov(special.r32(), t.r32());
  cc_.or_(special.r32(), 0x7F800000);
  cc_.cmp(t.r32(), 0x0F800000);  // f16 exponent 31
  cc_.cmovae(bits.r32(), special.r32());
  cc_.mov(sign.r32(), raw.r32());
  cc_.and_(sign.r32(), 0x8000);
  cc_.shl(sign.r32(), 16);
  cc_.or_(bits.r32(), sign.r32());
  x86::Xmm r = cc_.newXmm();
  cc_.movd(r, bits.r32());
  return r;
}

x86::Gp KernelLowering::Narrow16(x86::Vec f32, ElementType type) {
  x86::Gp d = NewGp();
  if (type == ElementType::kBF16) {
    // The value is already a bf16 value: its low 16 bits are zero.
    if (features_.avx2) {
      cc_.vmovd(d.r32(), f32.xmm());
    } else {
      cc_.movd(d.r32(), f32.xmm());
    }
    cc_.shr(d.r32(), 16);
    return d;
  }
  if (features_.f16c && features_.avx2) {
    x86::Xmm t = cc_.newXmm();
    cc_.vcvtps2ph(t, f32.xmm(), 0);
    cc_.vmovd(d.r32(), t);
    cc_.movzx(d.r32(), d.r16());
    return d;
  }
  // Without F16C: round to nearest even in integer arithmetic for normal
  // results, by an f32 addition of 0.5 (whose rounding is the same) for
  // subnormal ones; overflow gives inf, NaN a quiet NaN with the top of the
  // payload.
  x86::Gp x = NewGp();
  x86::Gp sign = NewGp();
  x86::Gp a = NewGp();
  x86::Gp odd = NewGp();
  x86::Gp sub = NewGp();
  x86::Gp inf = NewGp();
  x86::Gp nan = NewGp();
  cc_.movd(x.r32(), f32.xmm());
  cc_.mov(sign.r32(), x.r32());
  cc_.shr(sign.r32(), 16);
  cc_.and_(sign.r32(), 0x8000);
  cc_.mov(a.r32(), x.r32());
  cc_.and_(a.r32(), 0x7FFFFFFF);
  // Normal: rebias the exponent by -112, add 0xFFF + the lowest kept bit,
  // drop 13 bits (a carry into the exponent is the right result).
  cc_.mov(odd.r32(), a.r32());
  cc_.shr(odd.r32(), 13);
  cc_.and_(odd.r32(), 1);
  cc_.mov(d.r32(), a.r32());
  cc_.add(d.r32(), 0xC8000FFF);
  cc_.add(d.r32(), odd.r32());
  cc_.shr(d.r32(), 13);
  // Subnormal (|x| < 2^-14): |x| + 0.5 rounds at 2^-24, the f16 quantum;
  // the result's low bits are the f16 bits (0x400 = the smallest normal).
  x86::Xmm s = cc_.newXmm();
  cc_.movd(s, a.r32());
  cc_.addss(s, Const(false, 0x3F000000u).xmm());
  cc_.movd(sub.r32(), s);
  cc_.sub(sub.r32(), 0x3F000000);
  cc_.cmp(a.r32(), 0x38800000);
  cc_.cmovb(d.r32(), sub.r32());
  // |x| >= 65520 rounds to inf.
  cc_.mov(inf.r32(), 0x7C00);
  cc_.cmp(a.r32(), 0x477FF000);
  cc_.cmovae(d.r32(), inf.r32());
  cc_.mov(nan.r32(), a.r32());
  cc_.shr(nan.r32(), 13);
  cc_.and_(nan.r32(), 0x3FF);
  cc_.or_(nan.r32(), 0x7E00);
  cc_.cmp(a.r32(), 0x7F800000);
  cc_.cmova(d.r32(), nan.r32());
  cc_.or_(d.r32(), sign.r32());
  return d;
}

x86::Vec KernelLowering::Quantize(x86::Vec f32, ElementType type) {
  if (type == ElementType::kF16) return Widen16(Narrow16(f32, type), type);
  // bf16: round the f32 bits to nearest even at bit 16; NaNs stay NaN.
  x86::Gp bits = NewGp();
  x86::Gp t = NewGp();
  x86::Gp quiet = NewGp();
  if (features_.avx2) {
    cc_.vmovd(bits.r32(), f32.xmm());
  } else {
    cc_.movd(bits.r32(), f32.xmm());
  }
  cc_.mov(quiet.r32(), bits.r32());
  cc_.or_(quiet.r32(), 0x00400000);
  cc_.mov(t.r32(), bits.r32());
  cc_.shr(t.r32(), 16);
  cc_.and_(t.r32(), 1);
  cc_.add(t.r32(), 0x7FFF);
  cc_.add(t.r32(), bits.r32());
  cc_.and_(bits.r32(), 0x7FFFFFFF);
  cc_.cmp(bits.r32(), 0x7F800000);
  cc_.cmova(t.r32(), quiet.r32());
  cc_.and_(t.r32(), 0xFFFF0000);
  x86::Xmm v = cc_.newXmm();
  if (features_.avx2) {
    cc_.vmovd(v, t.r32());
  } else {
    cc_.movd(v, t.r32());
  }
  return v;
}

x86::Vec KernelLowering::AsF32(int id, ElementType type) {
  if (vals_[id].in_vec) return vals_[id].vec;
  return Widen16(vals_[id].gp, type);
}

x86::Gp KernelLowering::AsRaw16(int id, ElementType type) {
  if (!vals_[id].in_vec) return vals_[id].gp;
  return Raw16(vals_[id].vec, type);
}

x86::Gp KernelLowering::Raw16(x86::Vec f32, ElementType type) {
  x86::Gp d = Narrow16(f32, type);
  if (type != ElementType::kF16) return d;  // bf16: Narrow16 keeps the bits.
  // The f32 holds an f16 value exactly (a widened one, or a rounded result),
  // so a NaN there is a widened f16 NaN: its bits come back unchanged, a
  // signalling one included, as the evaluator keeps them through clamp,
  // select, max/min. Narrow16 (a conversion) would quieten it. A payload
  // with nothing in the top 10 bits keeps Narrow16's quiet NaN.
  x86::Gp bits = NewGp();
  x86::Gp a = NewGp();
  x86::Gp nan = NewGp();
  x86::Gp sign = NewGp();
  if (features_.avx2) {
    cc_.vmovd(bits.r32(), f32.xmm());
  } else {
    cc_.movd(bits.r32(), f32.xmm());
  }
  cc_.mov(nan.r32(), bits.r32());
  cc_.shr(nan.r32(), 13);
  cc_.and_(nan.r32(), 0x3FF);
  cc_.or_(nan.r32(), 0x7C00);
  cc_.mov(sign.r32(), bits.r32());
  cc_.shr(sign.r32(), 16);
  cc_.and_(sign.r32(), 0x8000);
  cc_.or_(nan.r32(), sign.r32());
  cc_.test(bits.r32(), 0x007FE000);
  cc_.cmovz(nan.r32(), d.r32());
  cc_.mov(a.r32(), bits.r32());
  cc_.and_(a.r32(), 0x7FFFFFFF);
  cc_.cmp(a.r32(), 0x7F800000);
  cc_.cmova(d.r32(), nan.r32());
  return d;
}

// ---- Loads and stores ----

void KernelLowering::ScalarLoad(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.type;
  const int bytes = static_cast<int>(ByteWidth(type));
  const x86::Mem m = Address(static_cast<int>(op.imm), op.a, bytes);
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    x86::Xmm v = cc_.newXmm();
    const bool f64 = type == ElementType::kF64;
    if (features_.avx2) {
      f64 ? cc_.vmovsd(v, m) : cc_.vmovss(v, m);
    } else {
      f64 ? cc_.movsd(v, m) : cc_.movss(v, m);
    }
    SetVec(id, v);
    return;
  }
  x86::Gp d = NewGp();
  if (IsNarrowFloat(type)) {
    cc_.movzx(d.r32(), x86::Mem(m).cloneResized(2));
    SetGp(id, d);
    return;
  }
  if (IsPred(type)) {
    cc_.xor_(d.r32(), d.r32());
    cc_.cmp(x86::Mem(m).cloneResized(1), 0);
    cc_.setne(d.r8());
    SetGp(id, d);
    return;
  }
  const bool is_signed = IsSignedInteger(type);
  switch (bytes) {
    case 1:
      cc_.movzx(d.r32(), x86::Mem(m).cloneResized(1));
      break;
    case 2:
      cc_.movzx(d.r32(), x86::Mem(m).cloneResized(2));
      break;
    case 4:
      cc_.mov(d.r32(), x86::Mem(m).cloneResized(4));
      break;
    default:
      cc_.mov(d, x86::Mem(m).cloneResized(8));
      break;
  }
  // Sign-extend (or mask sub-byte values) into the canonical form.
  if (is_signed || BitWidth(type) < 8) Normalize(d, type);
  SetGp(id, d);
}

void KernelLowering::ScalarStore(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  const int bytes = static_cast<int>(ByteWidth(type));
  const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, bytes);
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    const x86::Xmm v = vals_[op.b].vec.xmm();
    const bool f64 = type == ElementType::kF64;
    if (features_.avx2) {
      f64 ? cc_.vmovsd(m, v) : cc_.vmovss(m, v);
    } else {
      f64 ? cc_.movsd(m, v) : cc_.movss(m, v);
    }
    return;
  }
  if (IsNarrowFloat(type)) {
    cc_.mov(x86::Mem(m).cloneResized(2), AsRaw16(op.b, type).r16());
    return;
  }
  x86::Gp v = vals_[op.b].gp;
  if (BitWidth(type) < 8 && !IsPred(type)) {
    x86::Gp t = NewGp();
    cc_.mov(t, v);
    cc_.and_(t, static_cast<int32_t>(WidthMask(BitWidth(type))));
    v = t;
  }
  switch (bytes) {
    case 1: cc_.mov(x86::Mem(m).cloneResized(1), v.r8()); break;
    case 2: cc_.mov(x86::Mem(m).cloneResized(2), v.r16()); break;
    case 4: cc_.mov(x86::Mem(m).cloneResized(4), v.r32()); break;
    default: cc_.mov(x86::Mem(m).cloneResized(8), v); break;
  }
}

// ---- Dispatch ----

absl::Status KernelLowering::EmitScalarValueOp(int id) {
  const KOp& op = program_.ops[id];
  switch (op.kind) {
    case KOpKind::kLoad:
      ScalarLoad(id);
      return absl::OkStatus();
    case KOpKind::kStore:
      ScalarStore(id);
      return absl::OkStatus();
    case KOpKind::kFromIndex:
      if (IsPred(op.type)) {
        x86::Gp d = NewGp();
        const KOpKind from = program_.ops[op.a].kind;
        if (from == KOpKind::kILt || from == KOpKind::kIEq || from == KOpKind::kIAnd) {
          // Already 0 or 1 (index conditions and their conjunctions).
          cc_.mov(d, vals_[op.a].gp);
          SetGp(id, d);
          return absl::OkStatus();
        }
        cc_.xor_(d.r32(), d.r32());
        cc_.test(vals_[op.a].gp, vals_[op.a].gp);
        cc_.setne(d.r8());
        SetGp(id, d);
        return absl::OkStatus();
      }
      return ConvertFromInteger(id, vals_[op.a].gp, ElementType::kS64, op.type);
    case KOpKind::kToIndex:
      SetGp(id, IntegerToIndexSaturating(vals_[op.a].gp, op.operand_type));
      return absl::OkStatus();
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
    case KOpKind::kCall:
    case KOpKind::kCallArgs:
    case KOpKind::kCallImag:
      return EmitScalarCall(id);
    case KOpKind::kConst:
    case KOpKind::kFma:
    case KOpKind::kBits:
    case KOpKind::kBitShift:
    case KOpKind::kScale:
      return EmitFloatPrimitive(id);
    case KOpKind::kSelect: {
      const ElementType type = op.type;
      if (!cmov_compare_.empty() && cmov_compare_[op.a]) {
        // The compare left out by PlanCmovCompares: cmp, then cmov.
        const KOp& cmp = program_.ops[op.a];
        x86::Gp d = NewGp();
        cc_.mov(d, vals_[op.c].gp);
        cc_.cmp(vals_[cmp.a].gp, vals_[cmp.b].gp);
        cc_.cmov(*CmovCondition(op.a), d, vals_[op.b].gp);
        SetGp(id, d);
        return absl::OkStatus();
      }
      const x86::Gp p = vals_[op.a].gp;
      if (IsIntegerOrPred(type) ||
          (IsNarrowFloat(type) && !vals_[op.b].in_vec && !vals_[op.c].in_vec)) {
        x86::Gp d = NewGp();
        cc_.mov(d, vals_[op.c].gp);
        cc_.test(p, p);
        cc_.cmovnz(d, vals_[op.b].gp);
        SetGp(id, d);
        return absl::OkStatus();
      }
      x86::Vec t = IsNarrowFloat(type) ? AsF32(op.b, type) : vals_[op.b].vec;
      x86::Vec f = IsNarrowFloat(type) ? AsF32(op.c, type) : vals_[op.c].vec;
      SetVec(id, Blend(type == ElementType::kF64, f, t, PredToMask(p)));
      return absl::OkStatus();
    }
    case KOpKind::kClamp: {
      const ElementType type = op.type;
      if (IsIntegerOrPred(type)) {
        const bool is_signed = IsSignedInteger(type);
        x86::Gp d = NewGp();
        cc_.mov(d, vals_[op.b].gp);
        cc_.cmp(d, vals_[op.a].gp);
        is_signed ? cc_.cmovl(d, vals_[op.a].gp) : cc_.cmovb(d, vals_[op.a].gp);
        cc_.cmp(d, vals_[op.c].gp);
        is_signed ? cc_.cmovg(d, vals_[op.c].gp) : cc_.cmova(d, vals_[op.c].gp);
        SetGp(id, d);
        return absl::OkStatus();
      }
      const bool narrow = IsNarrowFloat(type);
      const bool f64 = type == ElementType::kF64;
      x86::Vec low = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
      x86::Vec x = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
      x86::Vec high = narrow ? AsF32(op.c, type) : vals_[op.c].vec;
      // Clamping never creates a new value, so no rounding is needed.
      SetVec(id, FloatMaxMin(false, f64, high, FloatMaxMin(true, f64, low, x)));
      return absl::OkStatus();
    }
    default:
      return NoCode(op, "operation");
  }
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
  auto store = [&](const x86::Mem& m, const x86::Vec& v) {
    if (features_.avx2) {
      f64 ? cc_.vmovsd(m, v.xmm()) : cc_.vmovss(m, v.xmm());
    } else {
      f64 ? cc_.movsd(m, v.xmm()) : cc_.movss(m, v.xmm());
    }
  };
  auto load = [&](const x86::Mem& m) {
    x86::Xmm v = cc_.newXmm();
    if (features_.avx2) {
      f64 ? cc_.vmovsd(v, m) : cc_.vmovss(v, m);
    } else {
      f64 ? cc_.movsd(v, m) : cc_.movss(v, m);
    }
    return v;
  };
  x86::Mem in = cc_.newStack(4 * bytes, 16);
  x86::Mem out = cc_.newStack(2 * bytes, 16);
  for (size_t k = 0; k < parts.size(); ++k) {
    x86::Mem m = in;
    m.addOffset(static_cast<int64_t>(k) * bytes);
    m.setSize(bytes);
    store(m, vals_[parts[k]].vec);
  }
  x86::Gp in_ptr = cc_.newIntPtr();
  x86::Gp out_ptr = cc_.newIntPtr();
  cc_.lea(in_ptr, in);
  cc_.lea(out_ptr, out);
  InvokeNode* call = nullptr;
  cc_.invoke(&call, reinterpret_cast<uint64_t>(fn),
             FuncSignatureT<void, const void*, void*>(CallConvId::kHost));
  call->setArg(0, in_ptr);
  call->setArg(1, out_ptr);
  x86::Mem re = out;
  re.setSize(bytes);
  x86::Mem im = out;
  im.addOffset(bytes);
  im.setSize(bytes);
  SetVec(id, load(re));
  call_imag_[id] = load(im);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitScalarUnary(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  if (IsPred(type)) {
    if (op.opcode != Opcode::kNot) return NoCode(op, OpcodeName(op.opcode));
    x86::Gp d = NewGp();
    cc_.mov(d, vals_[op.a].gp);
    cc_.xor_(d, 1);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    const x86::Gp a = vals_[op.a].gp;
    const bool is_signed = IsSignedInteger(type);
    const int width = BitWidth(type);
    x86::Gp d = NewGp();
    switch (op.opcode) {
      case Opcode::kAbs:
        cc_.mov(d, a);
        if (is_signed) {
          cc_.neg(d);
          cc_.cmovs(d, a);
          Normalize(d, type);
        }
        break;
      case Opcode::kNegate:
        cc_.mov(d, a);
        cc_.neg(d);
        Normalize(d, type);
        break;
      case Opcode::kNot:
        cc_.mov(d, a);
        cc_.not_(d);
        Normalize(d, type);
        break;
      case Opcode::kSign: {
        cc_.xor_(d.r32(), d.r32());
        if (is_signed) {
          x86::Gp t = NewGp();
          cc_.xor_(t.r32(), t.r32());
          cc_.test(a, a);
          cc_.setg(d.r8());
          cc_.setl(t.r8());
          cc_.sub(d, t);
        } else {
          cc_.test(a, a);
          cc_.setne(d.r8());
        }
        break;
      }
      case Opcode::kClz: {
        x86::Gp v = NewGp();
        cc_.mov(v, a);
        if (width < 64) {
          x86::Gp mask = NewGp();
          cc_.mov(mask, WidthMask(width));
          cc_.and_(v, mask);
        }
        if (features_.lzcnt) {
          cc_.lzcnt(d, v);
          cc_.sub(d, 64 - width);
        } else {
          x86::Gp minus_one = NewGp();
          x86::Gp top = NewGp();
          cc_.mov(minus_one, -1);
          cc_.bsr(top, v);
          cc_.cmovz(top, minus_one);
          cc_.mov(d, width - 1);
          cc_.sub(d, top);
        }
        // s1/s2: the count (up to the width) wraps in the type (found by
        // jit_random_test: clz of an s2 zero is 2, which s2 holds as -2).
        if (width < 8) Normalize(d, type);
        break;
      }
      case Opcode::kPopulationCount: {
        x86::Gp v = NewGp();
        cc_.mov(v, a);
        if (width < 64) {
          x86::Gp mask = NewGp();
          cc_.mov(mask, WidthMask(width));
          cc_.and_(v, mask);
        }
        if (features_.popcnt) {
          cc_.popcnt(d, v);
        } else {
          // Bit-parallel count (no POPCNT on this target).
          x86::Gp t = NewGp();
          x86::Gp k = NewGp();
          cc_.mov(t, v);
          cc_.shr(t, 1);
          cc_.mov(k, 0x5555555555555555ull);
          cc_.and_(t, k);
          cc_.sub(v, t);
          cc_.mov(k, 0x3333333333333333ull);
          cc_.mov(t, v);
          cc_.shr(t, 2);
          cc_.and_(t, k);
          cc_.and_(v, k);
          cc_.add(v, t);
          cc_.mov(t, v);
          cc_.shr(t, 4);
          cc_.add(v, t);
          cc_.mov(k, 0x0F0F0F0F0F0F0F0Full);
          cc_.and_(v, k);
          cc_.mov(k, 0x0101010101010101ull);
          cc_.imul(v, k);
          cc_.shr(v, 56);
          cc_.mov(d, v);
        }
        if (width < 8) Normalize(d, type);  // s1/s2: as clz.
        break;
      }
      default:
        return NoCode(op, OpcodeName(op.opcode));
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  // Floats.
  const bool narrow = IsNarrowFloat(type);
  if (!narrow && type != ElementType::kF32 && type != ElementType::kF64) {
    return NoCode(op, OpcodeName(op.opcode));
  }
  if (narrow && op.type == type &&
      (op.opcode == Opcode::kNegate || op.opcode == Opcode::kAbs)) {
    // The sign bit of the raw 16 bits, as XLA's fneg/fabs: a NaN keeps its
    // payload (converted to f32, a signalling one would be quieted).
    x86::Gp d = NewGp();
    cc_.mov(d, AsRaw16(op.a, type));
    if (op.opcode == Opcode::kNegate) {
      cc_.xor_(d.r32(), 0x8000);
    } else {
      cc_.and_(d.r32(), 0x7FFF);
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool f64 = type == ElementType::kF64;
  const x86::Vec x = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  if (op.opcode == Opcode::kIsFinite) {
    // Exponent all ones means inf or NaN.
    x86::Gp bits = NewGp();
    x86::Gp d = NewGp();
    if (f64) {
      features_.avx2 ? cc_.vmovq(bits, x.xmm()) : cc_.movq(bits, x.xmm());
      x86::Gp k = NewGp();
      cc_.mov(k, 0x7FF0000000000000ull);
      cc_.and_(bits, k);
      cc_.xor_(d.r32(), d.r32());
      cc_.cmp(bits, k);
    } else {
      features_.avx2 ? cc_.vmovd(bits.r32(), x.xmm()) : cc_.movd(bits.r32(), x.xmm());
      cc_.and_(bits.r32(), 0x7F800000);
      cc_.xor_(d.r32(), d.r32());
      cc_.cmp(bits.r32(), 0x7F800000);
    }
    cc_.setne(d.r8());
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (op.type != type) return NoCode(op, OpcodeName(op.opcode));
  x86::Vec r;
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
    x86::Gp d = NewGp();
    cc_.mov(d, vals_[op.a].gp);
    switch (op.opcode) {
      case Opcode::kAnd: case Opcode::kMultiply: case Opcode::kMinimum:
        cc_.and_(d, vals_[op.b].gp);
        break;
      case Opcode::kOr: case Opcode::kAdd: case Opcode::kMaximum:
        cc_.or_(d, vals_[op.b].gp);
        break;
      case Opcode::kXor:
        cc_.xor_(d, vals_[op.b].gp);
        break;
      default:
        return NoCode(op, OpcodeName(op.opcode));
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(type)) {
    const x86::Gp a = vals_[op.a].gp;
    const x86::Gp b = vals_[op.b].gp;
    const bool is_signed = IsSignedInteger(type);
    const int width = BitWidth(type);
    x86::Gp d = NewGp();
    switch (op.opcode) {
      case Opcode::kAdd:
        cc_.mov(d, a);
        cc_.add(d, b);
        Normalize(d, type);
        break;
      case Opcode::kSubtract:
        cc_.mov(d, a);
        cc_.sub(d, b);
        Normalize(d, type);
        break;
      case Opcode::kMultiply:
        cc_.mov(d, a);
        cc_.imul(d, b);
        Normalize(d, type);
        break;
      case Opcode::kAnd:
        cc_.mov(d, a);
        cc_.and_(d, b);
        break;
      case Opcode::kOr:
        cc_.mov(d, a);
        cc_.or_(d, b);
        break;
      case Opcode::kXor:
        cc_.mov(d, a);
        cc_.xor_(d, b);
        break;
      case Opcode::kMaximum:
        cc_.mov(d, a);
        cc_.cmp(d, b);
        is_signed ? cc_.cmovl(d, b) : cc_.cmovb(d, b);
        break;
      case Opcode::kMinimum:
        cc_.mov(d, a);
        cc_.cmp(d, b);
        is_signed ? cc_.cmovg(d, b) : cc_.cmova(d, b);
        break;
      case Opcode::kDivide:
      case Opcode::kRemainder: {
        // b == 0 and (signed) b == -1 are handled apart from the divide,
        // which then cannot fault.
        const bool divide = op.opcode == Opcode::kDivide;
        Label special = cc_.newLabel();
        Label done = cc_.newLabel();
        cc_.test(b, b);
        cc_.jz(special);
        if (is_signed) {
          cc_.cmp(b, -1);
          cc_.je(special);
        }
        x86::Gp hi = NewGp();
        x86::Gp lo = NewGp();
        cc_.mov(lo, a);
        if (is_signed) {
          cc_.cqo(hi, lo);
          cc_.idiv(hi, lo, b);
        } else {
          cc_.xor_(hi.r32(), hi.r32());
          cc_.div(hi, lo, b);
        }
        cc_.mov(d, divide ? lo : hi);
        cc_.jmp(done);
        cc_.bind(special);
        // b == 0: x/0 = -1 (all ones), x%0 = x. b == -1: x/-1 = -x
        // (wrapping), x%-1 = 0.
        Label zero_divisor = cc_.newLabel();
        cc_.test(b, b);
        cc_.jz(zero_divisor);
        if (divide) {
          cc_.mov(d, a);
          cc_.neg(d);
        } else {
          cc_.xor_(d.r32(), d.r32());
        }
        cc_.jmp(done);
        cc_.bind(zero_divisor);
        if (divide) {
          cc_.mov(d, -1);
        } else {
          cc_.mov(d, a);
        }
        cc_.bind(done);
        Normalize(d, type);
        break;
      }
      case Opcode::kShiftLeft:
      case Opcode::kShiftRightLogical:
      case Opcode::kShiftRightArithmetic: {
        // The amount is read as unsigned at the type's width (an unsigned
        // value is held zero-extended already: a plain copy).
        x86::Gp amount = NewGp();
        ZeroExtendedCopy(amount, b, width, is_signed);
        x86::Gp value = NewGp();
        if (op.opcode == Opcode::kShiftRightLogical) {
          ZeroExtendedCopy(value, a, width, is_signed);
        } else {
          cc_.mov(value, a);
        }
        x86::Gp overflow = NewGp();  // The result for amounts >= width.
        if (op.opcode == Opcode::kShiftLeft) {
          cc_.shl(value, amount.r8());
          cc_.xor_(overflow.r32(), overflow.r32());
        } else if (op.opcode == Opcode::kShiftRightLogical) {
          cc_.shr(value, amount.r8());
          cc_.xor_(overflow.r32(), overflow.r32());
        } else {
          // Arithmetic: sign fill from the type's own top bit.
          if (!is_signed && width < 64) {
            cc_.shl(value, 64 - width);
            cc_.sar(value, 64 - width);
          }
          cc_.mov(overflow, value);
          cc_.sar(overflow, 63);
          cc_.sar(value, amount.r8());
        }
        cc_.cmp(amount, width);
        cc_.cmovae(value, overflow);
        cc_.mov(d, value);
        Normalize(d, type);
        break;
      }
      case Opcode::kMulhi: {
        if (width < 64) {
          // The full product fits in 64 bits.
          cc_.mov(d, a);
          cc_.imul(d, b);
          is_signed ? cc_.sar(d, width) : cc_.shr(d, width);
        } else {
          x86::Gp hi = NewGp();
          x86::Gp lo = NewGp();
          cc_.mov(lo, a);
          is_signed ? cc_.imul(hi, lo, b) : cc_.mul(hi, lo, b);
          cc_.mov(d, hi);
        }
        Normalize(d, type);
        break;
      }
      default:
        return NoCode(op, OpcodeName(op.opcode));
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool narrow = IsNarrowFloat(type);
  if (!narrow && type != ElementType::kF32 && type != ElementType::kF64) {
    return NoCode(op, OpcodeName(op.opcode));
  }
  const bool f64 = type == ElementType::kF64;
  const x86::Vec a = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  const x86::Vec b = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
  x86::Vec r;
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

x86::Vec KernelLowering::FloatRemainder(bool f64, x86::Vec a, x86::Vec b) {
  // fmod(x, y) = x - n*y with n = trunc(x/y), always representable: with
  // x = mx * 2^ex, y = my * 2^ey (integer significands, ex >= ey), the
  // result is ((mx * 2^(ex-ey)) mod my) * 2^ey, computed by dividing
  // r * 2^s (128 bits, s <= 63 at a time) by my while r < my. Sign of x;
  // NaN for x infinite, y zero or a NaN operand; x itself when |x| < |y|.
  const int m = f64 ? 52 : 23;
  const int sign_bit = f64 ? 63 : 31;
  const uint64_t inf = f64 ? 0x7FF0000000000000ull : 0x7F800000ull;
  x86::Vec result = cc_.newXmm();
  x86::Gp xa = NewGp();
  x86::Gp xb = NewGp();
  const uint32_t move = f64 ? (features_.avx2 ? Inst::kIdVmovq : Inst::kIdMovq)
                            : (features_.avx2 ? Inst::kIdVmovd : Inst::kIdMovd);
  if (f64) {
    cc_.emit(move, xa, a.xmm());
    cc_.emit(move, xb, b.xmm());
  } else {
    cc_.emit(move, xa.r32(), a.xmm());  // Zero-extends.
    cc_.emit(move, xb.r32(), b.xmm());
  }
  x86::Gp ux = NewGp();
  x86::Gp uy = NewGp();
  x86::Gp sx = NewGp();
  cc_.mov(ux, xa);
  cc_.btr(ux, sign_bit);
  cc_.mov(uy, xb);
  cc_.btr(uy, sign_bit);
  cc_.mov(sx, xa);
  cc_.xor_(sx, ux);
  Label nan = cc_.newLabel();
  Label keep_x = cc_.newLabel();
  Label zero = cc_.newLabel();
  Label to_xmm = cc_.newLabel();
  Label done = cc_.newLabel();
  x86::Gp bits = NewGp();
  x86::Gp limit = NewGp();
  cc_.mov(limit, inf);
  cc_.cmp(ux, limit);
  cc_.jae(nan);  // x is infinite or NaN.
  cc_.cmp(uy, limit);
  cc_.ja(nan);  // y is NaN.
  cc_.test(uy, uy);
  cc_.jz(nan);
  cc_.cmp(ux, uy);
  cc_.jb(keep_x);  // Also x = 0 and y infinite.
  cc_.je(zero);
  // Both finite and nonzero, |x| > |y|: significands and exponents
  // (subnormals: exponent 1, no implicit bit).
  x86::Gp one = NewGp();
  cc_.mov(one, 1);
  x86::Gp mant_mask = NewGp();
  cc_.mov(mant_mask, (uint64_t{1} << m) - 1);
  auto split = [&](x86::Gp u, x86::Gp e, x86::Gp mant) {
    cc_.mov(e, u);
    cc_.shr(e, m);
    cc_.mov(mant, u);
    cc_.and_(mant, mant_mask);
    x86::Gp implicit = NewGp();
    cc_.xor_(implicit.r32(), implicit.r32());
    cc_.test(e, e);
    cc_.setnz(implicit.r8());
    cc_.shl(implicit, m);
    cc_.or_(mant, implicit);
    cc_.test(e, e);
    cc_.cmovz(e, one);
  };
  x86::Gp ex = NewGp();
  x86::Gp mx = NewGp();
  x86::Gp ey = NewGp();
  x86::Gp my = NewGp();
  split(ux, ex, mx);
  split(uy, ey, my);
  // r = mx mod my (quotient < 2^(m+1): fits).
  x86::Gp r = NewGp();
  {
    x86::Gp hi = NewGp();
    x86::Gp lo = NewGp();
    cc_.mov(lo, mx);
    cc_.xor_(hi.r32(), hi.r32());
    cc_.div(hi, lo, my);
    cc_.mov(r, hi);
  }
  x86::Gp left = NewGp();  // Exponent difference still to divide out.
  cc_.mov(left, ex);
  cc_.sub(left, ey);
  Label loop = cc_.newLabel();
  Label loop_end = cc_.newLabel();
  cc_.bind(loop);
  cc_.test(left, left);
  cc_.jz(loop_end);
  {
    // r < my, so (r * 2^s) / my < 2^s fits the quotient register.
    x86::Gp s = NewGp();
    x86::Gp max_step = NewGp();
    cc_.mov(s, left);
    cc_.mov(max_step, 63);
    cc_.cmp(s, max_step);
    cc_.cmova(s, max_step);
    x86::Gp hi = NewGp();
    x86::Gp lo = NewGp();
    cc_.mov(lo, r);
    cc_.xor_(hi.r32(), hi.r32());
    cc_.shld(hi, lo, s.r8());
    cc_.shl(lo, s.r8());
    cc_.div(hi, lo, my);
    cc_.mov(r, hi);
    cc_.sub(left, s);
  }
  cc_.jmp(loop);
  cc_.bind(loop_end);
  cc_.test(r, r);
  cc_.jz(zero);
  // r * 2^(ey - 1) in the format's units: normalise the top bit to bit m
  // unless that needs an exponent below 1 (a subnormal result).
  {
    x86::Gp top = NewGp();
    cc_.bsr(top, r);
    x86::Gp shift = NewGp();
    cc_.mov(shift, m);
    cc_.sub(shift, top);
    x86::Gp room = NewGp();
    cc_.mov(room, ey);
    cc_.sub(room, 1);
    cc_.cmp(shift, room);
    cc_.cmova(shift, room);
    cc_.shl(r, shift.r8());
    x86::Gp e = NewGp();
    cc_.mov(e, ey);
    cc_.sub(e, shift);
    cc_.sub(e, 1);
    cc_.shl(e, m);
    cc_.mov(bits, r);
    cc_.add(bits, e);
    cc_.or_(bits, sx);
  }
  cc_.jmp(to_xmm);
  cc_.bind(keep_x);
  cc_.mov(bits, xa);
  cc_.jmp(to_xmm);
  cc_.bind(zero);
  cc_.mov(bits, sx);
  cc_.bind(to_xmm);
  if (f64) {
    cc_.emit(move, result, bits);
  } else {
    cc_.emit(move, result, bits.r32());
  }
  cc_.jmp(done);
  cc_.bind(nan);
  {
    // x*y / (x*y): NaN for every case that reaches here, quiet, keeping a
    // NaN operand's payload.
    x86::Vec product = NewVec();
    FloatBinary(Opcode::kMultiply, f64, a, b, &product).IgnoreError();
    V3(f64 ? Inst::kIdDivpd : Inst::kIdDivps, f64 ? Inst::kIdVdivpd : Inst::kIdVdivps, result,
       product, product);
  }
  cc_.bind(done);
  return result;
}

std::optional<x86::CondCode> KernelLowering::CmovCondition(int id) const {
  const KOp& op = program_.ops[id];
  const ElementType type = op.operand_type;
  if (op.kind != KOpKind::kCompare || !IsIntegerOrPred(type)) return std::nullopt;
  const bool is_signed = op.comparison == ComparisonType::kSigned;
  if (!is_signed && op.comparison != ComparisonType::kUnsigned) return std::nullopt;
  // EmitScalarCompare reinterprets these first (shifts), more than one cmp.
  if (is_signed && IsUnsignedInteger(type)) return std::nullopt;
  switch (op.direction) {
    case ComparisonDirection::kEq: return x86::CondCode::kE;
    case ComparisonDirection::kNe: return x86::CondCode::kNE;
    case ComparisonDirection::kLt: return is_signed ? x86::CondCode::kL : x86::CondCode::kB;
    case ComparisonDirection::kLe: return is_signed ? x86::CondCode::kLE : x86::CondCode::kBE;
    case ComparisonDirection::kGt: return is_signed ? x86::CondCode::kG : x86::CondCode::kA;
    case ComparisonDirection::kGe: return is_signed ? x86::CondCode::kGE : x86::CondCode::kAE;
  }
  return std::nullopt;
}

void KernelLowering::PlanCmovCompares() {
  const size_t n = program_.ops.size();
  cmov_compare_.assign(n, false);
  std::vector<bool> only_selects(n, true);
  std::vector<int> uses(n, 0);
  for (size_t user = 0; user < n; ++user) {
    const KOp& op = program_.ops[user];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0) continue;
      ++uses[operand];
      // A select with an integer or pred result (its general-register
      // form), in the same section and the same representation (both
      // index values or neither), so that both run in scalar code together.
      const bool predicate_use = op.kind == KOpKind::kSelect && operand == op.a &&
                                 op.b != operand && op.c != operand &&
                                 IsIntegerOrPred(op.type) &&
                                 sections_[operand] == sections_[user] &&
                                 IsIndexValue(operand) == IsIndexValue(static_cast<int>(user));
      if (!predicate_use) only_selects[operand] = false;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    cmov_compare_[id] = uses[id] > 0 && only_selects[id] &&
                        (folded_compare_.empty() || !folded_compare_[id]) &&
                        CmovCondition(static_cast<int>(id)).has_value();
  }
}

absl::Status KernelLowering::EmitScalarCompare(int id) {
  const KOp& op = program_.ops[id];
  // Each select reading it compares for itself (PlanCmovCompares).
  if (!cmov_compare_.empty() && cmov_compare_[id]) return absl::OkStatus();
  const ElementType type = op.operand_type;
  x86::Gp d = NewGp();
  if (IsIntegerOrPred(type) || op.comparison == ComparisonType::kTotalOrder) {
    x86::Gp a;
    x86::Gp b;
    bool is_signed = op.comparison == ComparisonType::kSigned ||
                     op.comparison == ComparisonType::kTotalOrder;
    if (IsIntegerOrPred(type)) {
      a = vals_[op.a].gp;
      b = vals_[op.b].gp;
      if (is_signed && IsUnsignedInteger(type)) {
        // Read the unsigned bits as signed at the same width.
        x86::Gp sa = NewGp();
        x86::Gp sb = NewGp();
        cc_.mov(sa, a);
        cc_.mov(sb, b);
        const int width = BitWidth(type);
        if (width < 64) {
          cc_.shl(sa, 64 - width);
          cc_.sar(sa, 64 - width);
          cc_.shl(sb, 64 - width);
          cc_.sar(sb, 64 - width);
        }
        a = sa;
        b = sb;
      }
    } else {
      // Total order: flip the magnitude bits of negative floats, then the
      // signed integer order is the total order (of the type's own bits).
      const bool f64 = type == ElementType::kF64;
      const bool narrow = IsNarrowFloat(type);
      a = NewGp();
      b = NewGp();
      for (auto [g, operand] : {std::pair{a, op.a}, std::pair{b, op.b}}) {
        if (narrow) {
          cc_.movsx(g, AsRaw16(operand, type).r16());
        } else if (f64) {
          const x86::Xmm v = vals_[operand].vec.xmm();
          features_.avx2 ? cc_.vmovq(g, v) : cc_.movq(g, v);
        } else {
          const x86::Xmm v = vals_[operand].vec.xmm();
          features_.avx2 ? cc_.vmovd(g.r32(), v) : cc_.movd(g.r32(), v);
          cc_.movsxd(g, g.r32());
        }
        x86::Gp s = NewGp();
        cc_.mov(s, g);
        cc_.sar(s, 63);
        cc_.shr(s, 1);
        cc_.xor_(g, s);
      }
      is_signed = true;
    }
    cc_.xor_(d.r32(), d.r32());
    cc_.cmp(a, b);
    switch (op.direction) {
      case ComparisonDirection::kEq: cc_.sete(d.r8()); break;
      case ComparisonDirection::kNe: cc_.setne(d.r8()); break;
      case ComparisonDirection::kLt: is_signed ? cc_.setl(d.r8()) : cc_.setb(d.r8()); break;
      case ComparisonDirection::kLe: is_signed ? cc_.setle(d.r8()) : cc_.setbe(d.r8()); break;
      case ComparisonDirection::kGt: is_signed ? cc_.setg(d.r8()) : cc_.seta(d.r8()); break;
      case ComparisonDirection::kGe: is_signed ? cc_.setge(d.r8()) : cc_.setae(d.r8()); break;
    }
    SetGp(id, d);
    return absl::OkStatus();
  }
  const bool narrow = IsNarrowFloat(type);
  if (!narrow && type != ElementType::kF32 && type != ElementType::kF64) {
    return NoCode(op, "compare");
  }
  const bool f64 = type == ElementType::kF64;
  x86::Vec x = narrow ? AsF32(op.a, type) : vals_[op.a].vec;
  x86::Vec y = narrow ? AsF32(op.b, type) : vals_[op.b].vec;
  SetGp(id, MaskToPred(FloatCompareMask(op.direction, f64, x, y)));
  return absl::OkStatus();
}

// ---- Conversions ----

x86::Vec KernelLowering::IntegerToFloat(x86::Gp g, ElementType from, bool to_f64) {
  x86::Xmm d = cc_.newXmm();
  auto convert = [&](x86::Gp source) {
    if (features_.avx2) {
      cc_.vxorps(d, d, d);
      to_f64 ? cc_.vcvtsi2sd(d, d, source) : cc_.vcvtsi2ss(d, d, source);
    } else {
      cc_.xorps(d, d);
      to_f64 ? cc_.cvtsi2sd(d, source) : cc_.cvtsi2ss(d, source);
    }
  };
  if (from != ElementType::kU64) {
    convert(g);  // Every other canonical value is exact as a signed 64-bit integer.
    return d;
  }
  // u64 above INT64_MAX: halve with the lost bit kept as sticky, convert
  // (one rounding), double.
  Label big = cc_.newLabel();
  Label done = cc_.newLabel();
  cc_.test(g, g);
  cc_.js(big);
  convert(g);
  cc_.jmp(done);
  cc_.bind(big);
  x86::Gp half = NewGp();
  x86::Gp low_bit = NewGp();
  cc_.mov(half, g);
  cc_.shr(half, 1);
  cc_.mov(low_bit, g);
  cc_.and_(low_bit, 1);
  cc_.or_(half, low_bit);
  convert(half);
  if (features_.avx2) {
    to_f64 ? cc_.vaddsd(d, d, d) : cc_.vaddss(d, d, d);
  } else {
    to_f64 ? cc_.addsd(d, d) : cc_.addss(d, d);
  }
  cc_.bind(done);
  return d;
}

x86::Vec KernelLowering::IntegerToF32RoundToOdd(x86::Gp g, ElementType from) {
  // Rounds to odd at f32 precision so that one more rounding to f16/bf16 is
  // a single correct rounding of the integer.
  const bool is_signed = IsSignedInteger(from);
  x86::Gp m = NewGp();
  x86::Gp sign = NewGp();
  cc_.mov(m, g);
  cc_.xor_(sign.r32(), sign.r32());
  if (is_signed) {
    cc_.mov(sign, g);
    cc_.sar(sign, 63);
    cc_.xor_(m, sign);
    cc_.sub(m, sign);  // |g|, INT64_MIN as 2^63 unsigned.
  }
  x86::Xmm d = cc_.newXmm();
  auto convert = [&](x86::Gp source) {
    if (features_.avx2) {
      cc_.vxorps(d, d, d);
      cc_.vcvtsi2ss(d, d, source);
    } else {
      cc_.xorps(d, d);
      cc_.cvtsi2ss(d, source);
    }
  };
  Label small = cc_.newLabel();
  Label signs = cc_.newLabel();
  x86::Gp limit = NewGp();
  cc_.mov(limit, int64_t{1} << 24);
  cc_.cmp(m, limit);
  cc_.jb(small);
  {
    x86::Gp shift = NewGp();
    x86::Gp top = NewGp();
    x86::Gp lost = NewGp();
    x86::Gp sticky = NewGp();
    x86::Gp lost_shift = NewGp();
    cc_.bsr(shift, m);
    cc_.sub(shift, 23);  // 1..40
    cc_.mov(top, m);
    cc_.shr(top, shift.r8());
    cc_.mov(lost_shift, 64);
    cc_.sub(lost_shift, shift);
    cc_.mov(lost, m);
    cc_.shl(lost, lost_shift.r8());
    cc_.xor_(sticky.r32(), sticky.r32());
    cc_.test(lost, lost);
    cc_.setne(sticky.r8());
    cc_.or_(top, sticky);
    convert(top);  // Exact: top < 2^24.
    // Scale by 2^shift (exact).
    x86::Gp scale_bits = NewGp();
    cc_.mov(scale_bits, shift);
    cc_.add(scale_bits, 127);
    cc_.shl(scale_bits, 23);
    x86::Xmm scale = cc_.newXmm();
    if (features_.avx2) {
      cc_.vmovd(scale, scale_bits.r32());
      cc_.vmulss(d, d, scale);
    } else {
      cc_.movd(scale, scale_bits.r32());
      cc_.mulss(d, scale);
    }
    cc_.jmp(signs);
  }
  cc_.bind(small);
  convert(m);
  cc_.bind(signs);
  if (is_signed) {
    // Negate when the input was negative: flip the sign bit.
    x86::Gp bits = NewGp();
    if (features_.avx2) {
      cc_.vmovd(bits.r32(), d);
    } else {
      cc_.movd(bits.r32(), d);
    }
    x86::Gp sign_bit = NewGp();
    cc_.mov(sign_bit.r32(), sign.r32());
    cc_.and_(sign_bit.r32(), 0x80000000);
    cc_.or_(bits.r32(), sign_bit.r32());
    x86::Xmm r = cc_.newXmm();
    if (features_.avx2) {
      cc_.vmovd(r, bits.r32());
    } else {
      cc_.movd(r, bits.r32());
    }
    return r;
  }
  return d;
}

x86::Vec KernelLowering::F64ToF32RoundToOdd(x86::Vec x) {
  x86::Xmm r = cc_.newXmm();
  x86::Xmm back = cc_.newXmm();
  x86::Gp bits = NewGp();
  Label done = cc_.newLabel();
  Label not_larger = cc_.newLabel();
  if (features_.avx2) {
    cc_.vcvtsd2ss(r, x.xmm(), x.xmm());
    cc_.vcvtss2sd(back, r, r);
    cc_.vmovd(bits.r32(), r);
    cc_.vucomisd(back, x.xmm());
  } else {
    cc_.xorps(r, r);
    cc_.cvtsd2ss(r, x.xmm());
    cc_.xorps(back, back);
    cc_.cvtss2sd(back, r);
    cc_.movd(bits.r32(), r);
    cc_.ucomisd(back, x.xmm());
  }
  cc_.jp(done);  // NaN: already a NaN of the right sign.
  cc_.je(done);  // Exact.
  // Inexact: truncate toward zero (one step back if rounding went up in
  // magnitude), then set the lowest bit.
  x86::Xmm abs_back = cc_.newXmm();
  x86::Xmm abs_x = cc_.newXmm();
  x86::Vec mask = Const(true, 0x7FFFFFFFFFFFFFFFull);
  if (features_.avx2) {
    cc_.vandpd(abs_back, back, mask.xmm());
    cc_.vandpd(abs_x, x.xmm(), mask.xmm());
    cc_.vucomisd(abs_back, abs_x);
  } else {
    cc_.movapd(abs_back, back);
    cc_.andpd(abs_back, mask.xmm());
    cc_.movapd(abs_x, x.xmm());
    cc_.andpd(abs_x, mask.xmm());
    cc_.ucomisd(abs_back, abs_x);
  }
  cc_.jbe(not_larger);
  cc_.sub(bits.r32(), 1);
  cc_.bind(not_larger);
  cc_.or_(bits.r32(), 1);
  cc_.bind(done);
  x86::Xmm d = cc_.newXmm();
  if (features_.avx2) {
    cc_.vmovd(d, bits.r32());
  } else {
    cc_.movd(d, bits.r32());
  }
  return d;
}

x86::Gp KernelLowering::FloatToInteger(x86::Vec x_f64, ElementType to) {
  // Truncation toward zero, saturating; NaN gives 0.
  const int width = BitWidth(to);
  const bool is_signed = IsSignedInteger(to);
  const x86::Xmm x = x_f64.xmm();
  x86::Gp d = NewGp();
  Label done = cc_.newLabel();
  Label nan = cc_.newLabel();
  Label high = cc_.newLabel();
  Label low = cc_.newLabel();
  auto ucomi = [&](x86::Xmm a, x86::Xmm b) {
    features_.avx2 ? cc_.vucomisd(a, b) : cc_.ucomisd(a, b);
  };
  auto truncate = [&](x86::Gp out, x86::Xmm value) {
    features_.avx2 ? cc_.vcvttsd2si(out, value) : cc_.cvttsd2si(out, value);
  };
  auto double_const = [&](double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, 8);
    return Const(true, bits).xmm();
  };
  const double upper = std::ldexp(1.0, is_signed ? width - 1 : width);
  const x86::Xmm upper_reg = double_const(upper);
  ucomi(x, x);
  cc_.jp(nan);
  ucomi(x, upper_reg);
  cc_.jae(high);
  if (is_signed) {
    const x86::Xmm lower_reg = double_const(-upper);
    ucomi(lower_reg, x);
    cc_.ja(low);  // x < -2^(w-1)
    truncate(d, x);
  } else {
    const x86::Xmm zero = double_const(0.0);
    ucomi(x, zero);
    cc_.jbe(nan);  // x <= 0 truncates (or saturates) to 0.
    if (width == 64) {
      Label in_range = cc_.newLabel();
      const x86::Xmm two63 = double_const(std::ldexp(1.0, 63));
      ucomi(x, two63);
      cc_.jb(in_range);
      x86::Xmm shifted = cc_.newXmm();
      if (features_.avx2) {
        cc_.vsubsd(shifted, x, two63);
      } else {
        cc_.movapd(shifted, x);
        cc_.subsd(shifted, two63);
      }
      truncate(d, shifted);
      x86::Gp top = NewGp();
      cc_.mov(top, uint64_t{1} << 63);
      cc_.xor_(d, top);
      cc_.jmp(done);
      cc_.bind(in_range);
    }
    truncate(d, x);
  }
  cc_.jmp(done);
  cc_.bind(nan);
  cc_.xor_(d.r32(), d.r32());
  cc_.jmp(done);
  cc_.bind(high);
  cc_.mov(d, is_signed ? WidthMask(width - 1) : WidthMask(width));
  cc_.jmp(done);
  cc_.bind(low);
  if (is_signed) cc_.mov(d, ~WidthMask(width - 1));
  cc_.bind(done);
  Normalize(d, to);
  return d;
}

absl::Status KernelLowering::ConvertFromInteger(int id, x86::Gp value, ElementType from,
                                                ElementType to) {
  if (IsPred(to)) {
    x86::Gp d = NewGp();
    cc_.xor_(d.r32(), d.r32());
    cc_.test(value, value);
    cc_.setne(d.r8());
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsInteger(to)) {
    x86::Gp d = NewGp();
    cc_.mov(d, value);
    Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (to == ElementType::kF32 || to == ElementType::kF64) {
    SetVec(id, IntegerToFloat(value, from, to == ElementType::kF64));
    return absl::OkStatus();
  }
  if (IsNarrowFloat(to)) {
    SetVec(id, Quantize(IntegerToF32RoundToOdd(value, from), to));
    return absl::OkStatus();
  }
  return NoCode(program_.ops[id], "convert");
}

absl::Status KernelLowering::ConvertFromFloat(int id, x86::Vec x, bool x_is_f64,
                                              ElementType from, ElementType to) {
  const KOp& op = program_.ops[id];
  if (IsPred(to)) {
    // x != 0; NaN is true.
    x86::Vec zero = Const(x_is_f64, 0);
    SetGp(id, MaskToPred(FloatCompareMask(ComparisonDirection::kNe, x_is_f64, x, zero)));
    return absl::OkStatus();
  }
  if (IsInteger(to)) {
    x86::Vec wide = x;
    if (!x_is_f64) {
      x86::Xmm w = cc_.newXmm();
      features_.avx2 ? cc_.vcvtss2sd(w, x.xmm(), x.xmm()) : cc_.cvtss2sd(w, x.xmm());
      wide = w;
    }
    SetGp(id, FloatToInteger(wide, to));
    return absl::OkStatus();
  }
  if (to == ElementType::kF64) {
    if (x_is_f64) {
      SetVec(id, x);
    } else {
      x86::Xmm w = cc_.newXmm();
      features_.avx2 ? cc_.vcvtss2sd(w, x.xmm(), x.xmm()) : cc_.cvtss2sd(w, x.xmm());
      SetVec(id, w);
    }
    return absl::OkStatus();
  }
  if (to == ElementType::kF32) {
    if (!x_is_f64) {
      SetVec(id, x);
    } else {
      x86::Xmm n = cc_.newXmm();
      if (features_.avx2) {
        cc_.vcvtsd2ss(n, x.xmm(), x.xmm());
      } else {
        cc_.xorps(n, n);
        cc_.cvtsd2ss(n, x.xmm());
      }
      SetVec(id, n);
    }
    return absl::OkStatus();
  }
  if (IsNarrowFloat(to)) {
    x86::Vec f32 = x_is_f64 ? F64ToF32RoundToOdd(x) : x;
    SetVec(id, Quantize(f32, to));
    return absl::OkStatus();
  }
  (void)from;
  return NoCode(op, "convert");
}

absl::Status KernelLowering::EmitScalarConvert(int id) {
  const KOp& op = program_.ops[id];
  const ElementType from = op.operand_type;
  const ElementType to = op.type;
  if (IsIntegerOrPred(from)) return ConvertFromInteger(id, vals_[op.a].gp, from, to);
  if (from == ElementType::kF32 || from == ElementType::kF64) {
    return ConvertFromFloat(id, vals_[op.a].vec, from == ElementType::kF64, from, to);
  }
  if (IsNarrowFloat(from)) {
    if (IsNarrowFloat(to) && from == to) {
      vals_[id] = vals_[op.a];
      return absl::OkStatus();
    }
    return ConvertFromFloat(id, AsF32(op.a, from), false, from, to);
  }
  return NoCode(op, "convert");
}

absl::Status KernelLowering::EmitScalarBitcast(int id) {
  const KOp& op = program_.ops[id];
  const ElementType from = op.operand_type;
  const ElementType to = op.type;
  auto gp_bits = [&]() -> x86::Gp {
    if (IsNarrowFloat(from)) return AsRaw16(op.a, from);
    if (from == ElementType::kF32 || from == ElementType::kF64) {
      x86::Gp g = NewGp();
      if (from == ElementType::kF64) {
        features_.avx2 ? cc_.vmovq(g, vals_[op.a].vec.xmm()) : cc_.movq(g, vals_[op.a].vec.xmm());
      } else {
        features_.avx2 ? cc_.vmovd(g.r32(), vals_[op.a].vec.xmm())
                       : cc_.movd(g.r32(), vals_[op.a].vec.xmm());
      }
      return g;
    }
    return vals_[op.a].gp;
  };
  x86::Gp bits = gp_bits();
  if (IsInteger(to)) {
    x86::Gp d = NewGp();
    cc_.mov(d, bits);
    Normalize(d, to);
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (IsNarrowFloat(to)) {
    x86::Gp d = NewGp();
    cc_.movzx(d.r32(), bits.r16());
    SetGp(id, d);
    return absl::OkStatus();
  }
  if (to == ElementType::kF32 || to == ElementType::kF64) {
    x86::Xmm v = cc_.newXmm();
    if (to == ElementType::kF64) {
      features_.avx2 ? cc_.vmovq(v, bits) : cc_.movq(v, bits);
    } else {
      features_.avx2 ? cc_.vmovd(v, bits.r32()) : cc_.movd(v, bits.r32());
    }
    SetVec(id, v);
    return absl::OkStatus();
  }
  return NoCode(op, "bitcast-convert");
}

}  // namespace xjit::jit::x64
