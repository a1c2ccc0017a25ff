// KernelLowering: f16 and bf16 values in vector code (see x64_lowering.h).
//
// A vector lane holds a 16-bit float as the f32 it widens to (exactly), so
// arithmetic, compares, selects and max/min are the f32 instructions. What
// this file adds is the edge of that representation, each step giving the
// same bits as the scalar code (x64_scalar.cc: Widen16, Narrow16, Quantize,
// AsRaw16), which the tests check against the evaluator:
//   - loads widen: bf16 is shifted into the high half of a 32-bit lane; f16
//     goes through vcvtph2ps where F16C is there (AVX2/AVX-512), a
//     signalling NaN's quiet bit put back, and is otherwise (SSE4.1, and
//     broadcasts) rebuilt in integer and f32 arithmetic as the scalar code
//     without F16C does (exact, a signalling NaN kept signalling);
//   - each operation whose result is f16/bf16 rounds its f32 result to that
//     type (VecQuantize): bf16 by an integer round to nearest even of the f32
//     bits with NaNs made quiet, f16 by vcvtps2ph (round to nearest even)
//     and vcvtph2ps where F16C is there (AVX2/AVX-512), by the scalar code's
//     integer sequence otherwise (SSE4.1);
//   - stores narrow (VecRaw16) and pack the 16-bit values (packusdw, or
//     vpmovdw on zmm).
// AVX512_BF16's vcvtneps2bf16 is not used: it flushes subnormal inputs and
// results to zero, which the evaluator and the scalar code do not.
#include <vector>

#include "ir/status_macros.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT
namespace Inst = x86::Inst;

namespace {

constexpr uint32_t kAbs32 = 0x7FFFFFFF;
constexpr uint32_t kInf32 = 0x7F800000;

}  // namespace

x86::Vec KernelLowering::VecShift32(bool left, x86::Vec a, int count) {
  x86::Vec d = NewVec();
  if (left) {
    ShiftImm(Inst::kIdPslld, Inst::kIdVpslld, d, a, count);
  } else {
    ShiftImm(Inst::kIdPsrld, Inst::kIdVpsrld, d, a, count);
  }
  return d;
}

x86::Vec KernelLowering::VecIntConstOp(uint32_t sse, uint32_t avx, x86::Vec a, uint32_t value) {
  if (!features_.avx2) return IntOp(sse, avx, a, IntConst(32, value));
  // AVX: the constant as the instruction's memory operand (no register).
  const Operand m = ConstSource(false, value);
  x86::Vec d = NewVec();
  if (d.isZmm()) {
    EmitZmm(avx, d, a, m, -1);
  } else {
    cc_.emit(avx, d, a, m);
  }
  return d;
}

x86::Vec KernelLowering::VecAnd32(x86::Vec a, uint32_t value) {
  return VecIntConstOp(Inst::kIdPand, Inst::kIdVpand, a, value);
}

x86::Vec KernelLowering::VecGreater32(x86::Vec a, uint32_t value) {
  return VecIntConstOp(Inst::kIdPcmpgtd, Inst::kIdVpcmpgtd, a, value);
}

x86::Vec KernelLowering::VecWiden16(x86::Vec raw, ElementType type) {
  if (type == ElementType::kBF16) return VecShift32(true, raw, 16);
  // f16: the exponent and fraction moved into f32 position and scaled by
  // 2^(127-15) in f32 (exact, subnormals included); exponent 31 (inf,
  // NaN) maps to 255 keeping the fraction; then the sign.
  const x86::Vec t = VecShift32(true, VecAnd32(raw, 0x7FFF), 13);
  x86::Vec scaled;
  (void)FloatBinary(Opcode::kMultiply, false, t, Const(false, 0x77800000u), &scaled);  // 2^112
  const x86::Vec special = IntOp(Inst::kIdPor, Inst::kIdVpor, t, IntConst(32, kInf32));
  const x86::Vec bits = Blend(false, scaled, special, VecGreater32(t, 0x0F7FFFFF));
  const x86::Vec sign = VecShift32(true, VecAnd32(raw, 0x8000), 16);
  return IntOp(Inst::kIdPor, Inst::kIdVpor, bits, sign);
}

x86::Vec KernelLowering::VecNarrow16(x86::Vec f32, ElementType type) {
  if (type == ElementType::kBF16) return VecShift32(false, VecQuantize(f32, type), 16);
  if (features_.f16c && features_.avx2) {
    // vcvtps2ph with immediate 0: round to nearest even; NaNs made quiet
    // keeping the top of the payload (as the scalar Narrow16).
    x86::Vec packed = f32.isZmm() ? x86::Vec(cc_.newYmm()) : x86::Vec(cc_.newXmm());
    cc_.vcvtps2ph(packed, f32, imm(0));
    x86::Vec d = NewVec();
    cc_.vpmovzxwd(d, packed);
    return d;
  }
  // Round to nearest even in integer arithmetic for normal results, by an
  // f32 addition of 0.5 (whose rounding is the same) for subnormal ones;
  // overflow gives inf, NaN a quiet NaN with the top of the payload.
  const x86::Vec sign = VecAnd32(VecShift32(false, f32, 16), 0x8000);
  const x86::Vec a = VecAnd32(f32, kAbs32);
  // Normal: rebias the exponent by -112, add 0xFFF + the lowest kept bit,
  // drop 13 bits (a carry into the exponent is the right result).
  const x86::Vec odd = VecAnd32(VecShift32(false, a, 13), 1);
  x86::Vec d = IntOp(Inst::kIdPaddd, Inst::kIdVpaddd, a, IntConst(32, 0xC8000FFFu));
  d = VecShift32(false, IntOp(Inst::kIdPaddd, Inst::kIdVpaddd, d, odd), 13);
  // Subnormal (|x| < 2^-14): |x| + 0.5 rounds at 2^-24, the f16 quantum.
  x86::Vec s;
  (void)FloatBinary(Opcode::kAdd, false, a, Const(false, 0x3F000000u), &s);
  const x86::Vec sub = IntOp(Inst::kIdPsubd, Inst::kIdVpsubd, s, IntConst(32, 0x3F000000u));
  const x86::Vec small = IntOp(Inst::kIdPcmpgtd, Inst::kIdVpcmpgtd, IntConst(32, 0x38800000u), a);
  d = Blend(false, d, sub, small);
  d = Blend(false, d, IntConst(32, 0x7C00), VecGreater32(a, 0x477FEFFFu));  // |x| >= 65520
  const x86::Vec nan =
      IntOp(Inst::kIdPor, Inst::kIdVpor, VecAnd32(VecShift32(false, a, 13), 0x3FF),
            IntConst(32, 0x7E00));
  d = Blend(false, d, nan, VecGreater32(a, kInf32));
  return IntOp(Inst::kIdPor, Inst::kIdVpor, d, sign);
}

x86::Vec KernelLowering::VecQuantize(x86::Vec f32, ElementType type) {
  if (type == ElementType::kF16) {
    if (features_.f16c && features_.avx2) {
      x86::Vec packed = f32.isZmm() ? x86::Vec(cc_.newYmm()) : x86::Vec(cc_.newXmm());
      cc_.vcvtps2ph(packed, f32, imm(0));
      x86::Vec d = NewVec();
      cc_.vcvtph2ps(d, packed);
      return d;
    }
    return VecWiden16(VecNarrow16(f32, type), type);
  }
  // bf16: round the f32 bits to nearest even at bit 16; NaNs become quiet.
  const x86::Vec lsb = VecAnd32(VecShift32(false, f32, 16), 1);
  x86::Vec t = VecIntConstOp(Inst::kIdPaddd, Inst::kIdVpaddd, f32, 0x7FFF);
  t = IntOp(Inst::kIdPaddd, Inst::kIdVpaddd, t, lsb);
  if (t.isZmm()) {
    // The NaN lanes as a k mask; the quiet NaN merged in under it.
    x86::KReg nan = cc_.newKq();
    cc_.vcmpps(nan, f32, f32, imm(3));  // UNORD_Q
    cc_.k(nan).emit(Inst::kIdVpord, t, f32, ConstSource(false, 0x00400000));
    return VecAnd32(t, 0xFFFF0000u);
  }
  const x86::Vec quiet = VecIntConstOp(Inst::kIdPor, Inst::kIdVpor, f32, 0x00400000);
  t = Blend(false, t, quiet, VecGreater32(VecAnd32(f32, kAbs32), kInf32));
  return VecAnd32(t, 0xFFFF0000u);
}

x86::Vec KernelLowering::VecRaw16(x86::Vec f32, ElementType type) {
  // The f32 holds a value of the type exactly (widened or rounded).
  if (type == ElementType::kBF16) return VecShift32(false, f32, 16);
  x86::Vec d = VecNarrow16(f32, type);
  // As AsRaw16: a NaN's bits come back unchanged (a signalling one too,
  // which the conversion would quieten), unless nothing of its payload is
  // in the top 10 bits (then the conversion's quiet NaN).
  const x86::Vec payload = VecAnd32(VecShift32(false, f32, 13), 0x3FF);
  const x86::Vec sign = VecAnd32(VecShift32(false, f32, 16), 0x8000);
  const x86::Vec nan = IntOp(Inst::kIdPor, Inst::kIdVpor,
                             IntOp(Inst::kIdPor, Inst::kIdVpor, payload, sign),
                             IntConst(32, 0x7C00));
  const x86::Vec is_nan = VecGreater32(VecAnd32(f32, kAbs32), kInf32);
  const x86::Vec no_payload =
      IntOp(Inst::kIdPcmpeqd, Inst::kIdVpcmpeqd, VecAnd32(f32, 0x007FE000), Zero());
  // is_nan and not no_payload.
  const x86::Vec patch = IntOp(Inst::kIdPandn, Inst::kIdVpandn, no_payload, is_nan);
  return Blend(false, d, nan, patch);
}

x86::Vec KernelLowering::VecLoad16(int id) {
  const KOp& op = program_.ops[id];
  const x86::Mem m = Address(static_cast<int>(op.imm), op.a, 2);
  x86::Vec raw;
  if (strides_[op.a] == 0) {  // Broadcast.
    x86::Gp g = NewGp();
    cc_.movzx(g.r32(), x86::Mem(m).cloneResized(2));
    raw = BroadcastGp(g, 32);
  } else {
    raw = NewVec();
    V2(Inst::kIdPmovzxwd, Inst::kIdVpmovzxwd, raw, x86::Mem(m).cloneResized(VecBytes() / 2));
    if (op.type == ElementType::kF16 && features_.f16c && features_.avx2) {
      // vcvtph2ps widens exactly but sets the quiet bit (f32 bit 22) of a
      // NaN; the scalar code keeps the f16's bit 9 there (a signalling NaN
      // stays signalling): flip bit 22 back in NaN lanes whose bit 9 is 0.
      x86::Vec v = NewVec();
      cc_.vcvtph2ps(v, x86::Mem(m).cloneResized(VecBytes() / 2));
      const x86::Vec flip = VecIntConstOp(Inst::kIdPandn, Inst::kIdVpandn,
                                          VecShift32(true, raw, 13), 0x00400000);
      if (v.isZmm()) {
        x86::KReg nan = cc_.newKq();
        cc_.vcmpps(nan, v, v, imm(3));  // UNORD_Q
        cc_.k(nan).emit(Inst::kIdVpxord, v, v, flip);
        return v;
      }
      x86::Vec nan = NewVec();
      cc_.vcmpps(nan, v, v, imm(3));
      return IntOp(Inst::kIdPxor, Inst::kIdVpxor, v,
                   IntOp(Inst::kIdPand, Inst::kIdVpand, flip, nan));
    }
  }
  return VecWiden16(raw, op.type);
}

x86::Vec KernelLowering::VecGather16(int id) {
  const KOp& op = program_.ops[id];
  x86::Gp base = NewGp();
  cc_.lea(base, Address(static_cast<int>(op.imm), op.a, 2));
  const int32_t step = static_cast<int32_t>(*strides_[op.a] * 2);
  const bool avx = features_.avx2;
  // Eight words per xmm: the first through a general register (a full
  // write), the others inserted; 4 lanes use the low half of one.
  std::vector<x86::Xmm> parts;
  for (int first = 0; first < lanes_; first += 8) {
    x86::Xmm x = cc_.newXmm();
    x86::Gp g = NewGp();
    cc_.movzx(g.r32(), x86::word_ptr(base, first * step));
    avx ? cc_.vmovd(x, g.r32()) : cc_.movd(x, g.r32());
    for (int k = 1; k < 8 && first + k < lanes_; ++k) {
      const x86::Mem m = x86::word_ptr(base, (first + k) * step);
      if (avx) {
        cc_.vpinsrw(x, x, m, imm(k));
      } else {
        cc_.pinsrw(x, m, imm(k));
      }
    }
    parts.push_back(x);
  }
  x86::Vec raw = NewVec();
  if (raw.isZmm()) {
    x86::Ymm both = cc_.newYmm();
    cc_.vinserti128(both, parts[0].ymm(), parts[1], 1);
    cc_.vpmovzxwd(raw, both);
  } else if (raw.isYmm()) {
    cc_.vpmovzxwd(raw, parts[0]);
  } else {
    V2(Inst::kIdPmovzxwd, Inst::kIdVpmovzxwd, raw, parts[0]);
  }
  return VecWiden16(raw, op.type);
}

void KernelLowering::VecStore16(int id) {
  const KOp& op = program_.ops[id];
  const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, 2);
  const x86::Vec raw = VecRaw16(vals_[op.b].vec, op.operand_type);
  if (raw.isZmm()) {
    cc_.vpmovdw(x86::Mem(m).cloneResized(32), raw);  // Truncates each lane to 16 bits.
    return;
  }
  x86::Xmm low = cc_.newXmm();
  if (raw.isYmm()) {
    x86::Xmm high = cc_.newXmm();
    cc_.vextracti128(high, raw.ymm(), 1);
    cc_.vpackusdw(low, raw.xmm(), high);  // Lanes are < 2^16: no saturation.
    cc_.vmovdqu(x86::Mem(m).cloneResized(16), low);
    return;
  }
  if (features_.avx2) {
    cc_.vpackusdw(low, raw.xmm(), raw.xmm());
    cc_.vmovq(x86::Mem(m).cloneResized(8), low);
    return;
  }
  cc_.movdqa(low, raw.xmm());
  cc_.packusdw(low, low);
  cc_.movq(x86::Mem(m).cloneResized(8), low);
}

}  // namespace xjit::jit::x64
