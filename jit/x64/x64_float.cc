// KernelLowering: float arithmetic shared by the scalar and vector
// representations, and the vector loads, stores and lane masks (see
// x64_lowering.h). Semantics follow ir/evaluator.h: maximum/minimum propagate
// NaN and order -0 below +0; compare is IEEE (NE true on NaN).
#include <cstring>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT
namespace Inst = x86::Inst;

namespace {

uint32_t Pick(bool f64, uint32_t ps, uint32_t pd) { return f64 ? pd : ps; }

constexpr uint64_t kSign32 = 0x80000000u;
constexpr uint64_t kSign64 = 0x8000000000000000ull;

uint64_t SignBits(bool f64) { return f64 ? kSign64 : kSign32; }
uint64_t AbsBits(bool f64) { return f64 ? ~kSign64 : 0x7FFFFFFFu; }
uint64_t OneBits(bool f64) { return f64 ? 0x3FF0000000000000ull : 0x3F800000u; }
uint64_t HalfBits(bool f64) { return f64 ? 0x3FE0000000000000ull : 0x3F000000u; }

// cmpps predicates.
constexpr int kCmpEq = 0;     // EQ_OQ
constexpr int kCmpLt = 1;     // LT_OS
constexpr int kCmpLe = 2;     // LE_OS
constexpr int kCmpUnord = 3;  // UNORD_Q
constexpr int kCmpNe = 4;     // NEQ_UQ

}  // namespace

x86::Vec KernelLowering::NewVec() {
  if (mode_ == Mode::kVector && features_.avx2) return cc_.newYmm();
  return cc_.newXmm();
}

void KernelLowering::V2(uint32_t sse, uint32_t avx, const x86::Vec& d, const Operand& a) {
  cc_.emit(features_.avx2 ? avx : sse, d, a);
}

void KernelLowering::V2i(uint32_t sse, uint32_t avx, const x86::Vec& d, const Operand& a,
                         int imm_value) {
  cc_.emit(features_.avx2 ? avx : sse, d, a, imm(imm_value));
}

void KernelLowering::V3(uint32_t sse, uint32_t avx, const x86::Vec& d, const x86::Vec& a,
                        const Operand& b) {
  if (features_.avx2) {
    cc_.emit(avx, d, a, b);
    return;
  }
  cc_.emit(Inst::kIdMovaps, d, a);
  cc_.emit(sse, d, b);
}

void KernelLowering::V3i(uint32_t sse, uint32_t avx, const x86::Vec& d, const x86::Vec& a,
                         const Operand& b, int imm_value) {
  if (features_.avx2) {
    cc_.emit(avx, d, a, b, imm(imm_value));
    return;
  }
  cc_.emit(Inst::kIdMovaps, d, a);
  cc_.emit(sse, d, b, imm(imm_value));
}

x86::Vec KernelLowering::Copy(x86::Vec a) {
  x86::Vec d = NewVec();
  V2(Inst::kIdMovaps, Inst::kIdVmovaps, d, a);
  return d;
}

x86::Vec KernelLowering::Const(bool f64, uint64_t lane_bits) {
  uint8_t data[32];
  const int lane = f64 ? 8 : 4;
  for (int i = 0; i < 32; i += lane) std::memcpy(data + i, &lane_bits, lane);
  x86::Vec d = NewVec();
  const size_t size = d.isYmm() ? 32 : 16;
  x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, data, size);
  V2(Inst::kIdMovups, Inst::kIdVmovups, d, m);
  return d;
}

x86::Vec KernelLowering::Blend(bool f64, x86::Vec if_false, x86::Vec if_true, x86::Vec mask) {
  x86::Vec d = NewVec();
  if (d.size() != if_false.size()) d = cc_.newXmm();
  if (features_.avx2) {
    cc_.emit(Pick(f64, Inst::kIdVblendvps, Inst::kIdVblendvpd), d, if_false, if_true, mask);
  } else {
    cc_.emit(Inst::kIdMovaps, d, if_false);
    cc_.emit(Pick(f64, Inst::kIdBlendvps, Inst::kIdBlendvpd), d, if_true, mask);
  }
  return d;
}

x86::Vec KernelLowering::FloatCompareMask(ComparisonDirection direction, bool f64, x86::Vec a,
                                          x86::Vec b) {
  int predicate = kCmpEq;
  bool swap = false;
  switch (direction) {
    case ComparisonDirection::kEq: predicate = kCmpEq; break;
    case ComparisonDirection::kNe: predicate = kCmpNe; break;
    case ComparisonDirection::kLt: predicate = kCmpLt; break;
    case ComparisonDirection::kLe: predicate = kCmpLe; break;
    case ComparisonDirection::kGt: predicate = kCmpLt; swap = true; break;
    case ComparisonDirection::kGe: predicate = kCmpLe; swap = true; break;
  }
  x86::Vec d = NewVec();
  V3i(Pick(f64, Inst::kIdCmpps, Inst::kIdCmppd), Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd), d,
      swap ? b : a, swap ? a : b, predicate);
  return d;
}

x86::Vec KernelLowering::FloatMaxMin(bool max, bool f64, x86::Vec a, x86::Vec b) {
  // maxps returns its second operand when the operands are equal (+0/-0)
  // or either is NaN. Taking both orders and combining (and for max, or for
  // min) orders -0 below +0; NaN operands are then patched in, a first.
  const uint32_t sse = max ? Pick(f64, Inst::kIdMaxps, Inst::kIdMaxpd)
                           : Pick(f64, Inst::kIdMinps, Inst::kIdMinpd);
  const uint32_t avx = max ? Pick(f64, Inst::kIdVmaxps, Inst::kIdVmaxpd)
                           : Pick(f64, Inst::kIdVminps, Inst::kIdVminpd);
  x86::Vec ab = NewVec();
  x86::Vec ba = NewVec();
  V3(sse, avx, ab, a, b);
  V3(sse, avx, ba, b, a);
  x86::Vec r = NewVec();
  if (max) {
    V3(Pick(f64, Inst::kIdAndps, Inst::kIdAndpd), Pick(f64, Inst::kIdVandps, Inst::kIdVandpd), r,
       ab, ba);
  } else {
    V3(Pick(f64, Inst::kIdOrps, Inst::kIdOrpd), Pick(f64, Inst::kIdVorps, Inst::kIdVorpd), r, ab,
       ba);
  }
  const uint32_t cmp_sse = Pick(f64, Inst::kIdCmpps, Inst::kIdCmppd);
  const uint32_t cmp_avx = Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd);
  x86::Vec b_nan = NewVec();
  V3i(cmp_sse, cmp_avx, b_nan, b, b, kCmpUnord);
  r = Blend(f64, r, b, b_nan);
  x86::Vec a_nan = NewVec();
  V3i(cmp_sse, cmp_avx, a_nan, a, a, kCmpUnord);
  return Blend(f64, r, a, a_nan);
}

absl::Status KernelLowering::FloatUnary(Opcode opcode, bool f64, x86::Vec x, x86::Vec* out) {
  const uint32_t and_sse = Pick(f64, Inst::kIdAndps, Inst::kIdAndpd);
  const uint32_t and_avx = Pick(f64, Inst::kIdVandps, Inst::kIdVandpd);
  const uint32_t or_sse = Pick(f64, Inst::kIdOrps, Inst::kIdOrpd);
  const uint32_t or_avx = Pick(f64, Inst::kIdVorps, Inst::kIdVorpd);
  const uint32_t round_sse = Pick(f64, Inst::kIdRoundps, Inst::kIdRoundpd);
  const uint32_t round_avx = Pick(f64, Inst::kIdVroundps, Inst::kIdVroundpd);
  x86::Vec d = NewVec();
  switch (opcode) {
    case Opcode::kAbs:
      V3(and_sse, and_avx, d, x, Const(f64, AbsBits(f64)));
      break;
    case Opcode::kNegate:
      V3(Pick(f64, Inst::kIdXorps, Inst::kIdXorpd), Pick(f64, Inst::kIdVxorps, Inst::kIdVxorpd), d,
         x, Const(f64, SignBits(f64)));
      break;
    case Opcode::kSqrt:
      V2(Pick(f64, Inst::kIdSqrtps, Inst::kIdSqrtpd), Pick(f64, Inst::kIdVsqrtps, Inst::kIdVsqrtpd),
         d, x);
      break;
    case Opcode::kFloor:
      V2i(round_sse, round_avx, d, x, 0x9);
      break;
    case Opcode::kCeil:
      V2i(round_sse, round_avx, d, x, 0xA);
      break;
    case Opcode::kRoundNearestEven:
      V2i(round_sse, round_avx, d, x, 0x8);
      break;
    case Opcode::kRoundNearestAfz: {
      // t = trunc(x); add copysign(1, x) when |x - t| >= 0.5 (x - t is exact).
      x86::Vec t = NewVec();
      V2i(round_sse, round_avx, t, x, 0xB);
      x86::Vec diff = NewVec();
      V3(Pick(f64, Inst::kIdSubps, Inst::kIdSubpd), Pick(f64, Inst::kIdVsubps, Inst::kIdVsubpd),
         diff, x, t);
      x86::Vec abs_diff = NewVec();
      V3(and_sse, and_avx, abs_diff, diff, Const(f64, AbsBits(f64)));
      x86::Vec big = NewVec();
      V3i(Pick(f64, Inst::kIdCmpps, Inst::kIdCmppd), Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd),
          big, Const(f64, HalfBits(f64)), abs_diff, kCmpLe);
      x86::Vec sign = NewVec();
      V3(and_sse, and_avx, sign, x, Const(f64, SignBits(f64)));
      x86::Vec one = NewVec();
      V3(or_sse, or_avx, one, sign, Const(f64, OneBits(f64)));
      // t keeps the sign of x (also for -0) when nothing is added.
      x86::Vec stepped = NewVec();
      V3(Pick(f64, Inst::kIdAddps, Inst::kIdAddpd), Pick(f64, Inst::kIdVaddps, Inst::kIdVaddpd),
         stepped, t, one);
      d = Blend(f64, t, stepped, big);
      break;
    }
    case Opcode::kSign: {
      // copysign(1, x), except x itself for +-0 and NaN.
      x86::Vec sign = NewVec();
      V3(and_sse, and_avx, sign, x, Const(f64, SignBits(f64)));
      x86::Vec one = NewVec();
      V3(or_sse, or_avx, one, sign, Const(f64, OneBits(f64)));
      const uint32_t cmp_sse = Pick(f64, Inst::kIdCmpps, Inst::kIdCmppd);
      const uint32_t cmp_avx = Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd);
      x86::Vec zero_mask = NewVec();
      V3i(cmp_sse, cmp_avx, zero_mask, x, Const(f64, 0), kCmpEq);
      x86::Vec nan_mask = NewVec();
      V3i(cmp_sse, cmp_avx, nan_mask, x, x, kCmpUnord);
      x86::Vec keep = NewVec();
      V3(or_sse, or_avx, keep, zero_mask, nan_mask);
      d = Blend(f64, one, x, keep);
      break;
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat("x86-64: no code for ", OpcodeName(opcode), " on floats"));
  }
  *out = d;
  return absl::OkStatus();
}

absl::Status KernelLowering::FloatBinary(Opcode opcode, bool f64, x86::Vec a, x86::Vec b,
                                         x86::Vec* out) {
  uint32_t sse = 0;
  uint32_t avx = 0;
  switch (opcode) {
    case Opcode::kAdd:
      sse = Pick(f64, Inst::kIdAddps, Inst::kIdAddpd);
      avx = Pick(f64, Inst::kIdVaddps, Inst::kIdVaddpd);
      break;
    case Opcode::kSubtract:
      sse = Pick(f64, Inst::kIdSubps, Inst::kIdSubpd);
      avx = Pick(f64, Inst::kIdVsubps, Inst::kIdVsubpd);
      break;
    case Opcode::kMultiply:
      sse = Pick(f64, Inst::kIdMulps, Inst::kIdMulpd);
      avx = Pick(f64, Inst::kIdVmulps, Inst::kIdVmulpd);
      break;
    case Opcode::kDivide:
      sse = Pick(f64, Inst::kIdDivps, Inst::kIdDivpd);
      avx = Pick(f64, Inst::kIdVdivps, Inst::kIdVdivpd);
      break;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      *out = FloatMaxMin(opcode == Opcode::kMaximum, f64, a, b);
      return absl::OkStatus();
    default:
      return absl::UnimplementedError(
          absl::StrCat("x86-64: no code for ", OpcodeName(opcode), " on floats"));
  }
  x86::Vec d = NewVec();
  V3(sse, avx, d, a, b);
  *out = d;
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitFloatPrimitive(int id) {
  const KOp& op = program_.ops[id];
  if (op.type != ElementType::kF32 && op.type != ElementType::kF64) {
    return absl::UnimplementedError(absl::StrCat("x86-64: no primitive float code for ",
                                                 ElementTypeName(op.type)));
  }
  const bool f64 = op.type == ElementType::kF64;
  const bool avx = features_.avx2;
  x86::Vec d;
  switch (op.kind) {
    case KOpKind::kConst:
      d = Const(f64, static_cast<uint64_t>(op.imm));
      break;
    case KOpKind::kFma: {
      if (!avx) return absl::UnimplementedError("x86-64: fused multiply-add needs AVX2/FMA");
      d = Copy(vals_[op.c].vec);
      cc_.emit(Pick(f64, Inst::kIdVfmadd231ps, Inst::kIdVfmadd231pd), d, vals_[op.a].vec,
               vals_[op.b].vec);
      break;
    }
    case KOpKind::kBits: {
      uint32_t sse = 0;
      uint32_t vex = 0;
      switch (op.opcode) {
        case Opcode::kAnd: sse = Inst::kIdAndps; vex = Inst::kIdVandps; break;
        case Opcode::kOr: sse = Inst::kIdOrps; vex = Inst::kIdVorps; break;
        case Opcode::kXor: sse = Inst::kIdXorps; vex = Inst::kIdVxorps; break;
        case Opcode::kAdd:
          sse = Pick(f64, Inst::kIdPaddd, Inst::kIdPaddq);
          vex = Pick(f64, Inst::kIdVpaddd, Inst::kIdVpaddq);
          break;
        case Opcode::kSubtract:
          sse = Pick(f64, Inst::kIdPsubd, Inst::kIdPsubq);
          vex = Pick(f64, Inst::kIdVpsubd, Inst::kIdVpsubq);
          break;
        default:
          return absl::UnimplementedError(
              absl::StrCat("x86-64: no bit operation ", OpcodeName(op.opcode)));
      }
      d = NewVec();
      V3(sse, vex, d, vals_[op.a].vec, vals_[op.b].vec);
      break;
    }
    case KOpKind::kBitShift: {
      const int width = f64 ? 64 : 32;
      if (op.imm <= 0 || op.imm >= width) return absl::InvalidArgumentError("bad bit shift");
      uint32_t sse = 0;
      uint32_t vex = 0;
      if (op.opcode == Opcode::kShiftLeft) {
        sse = Pick(f64, Inst::kIdPslld, Inst::kIdPsllq);
        vex = Pick(f64, Inst::kIdVpslld, Inst::kIdVpsllq);
      } else if (op.opcode == Opcode::kShiftRightLogical) {
        sse = Pick(f64, Inst::kIdPsrld, Inst::kIdPsrlq);
        vex = Pick(f64, Inst::kIdVpsrld, Inst::kIdVpsrlq);
      } else {
        return absl::UnimplementedError(
            absl::StrCat("x86-64: no bit shift ", OpcodeName(op.opcode)));
      }
      d = NewVec();
      if (avx) {
        cc_.emit(vex, d, vals_[op.a].vec, imm(op.imm));
      } else {
        cc_.emit(Inst::kIdMovaps, d, vals_[op.a].vec);
        cc_.emit(sse, d, imm(op.imm));
      }
      break;
    }
    default:
      return absl::UnimplementedError("x86-64: not a primitive float operation");
  }
  SetVec(id, d);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitVectorValueOp(int id) {
  const KOp& op = program_.ops[id];
  const bool f64 = vector_type_ == ElementType::kF64;
  const bool avx = features_.avx2;
  switch (op.kind) {
    case KOpKind::kLoad: {
      const bool uniform = strides_[op.a] == 0;
      if (op.type == ElementType::kPred) {
        x86::Vec mask = NewVec();
        if (uniform) {
          ScalarLoad(id);  // 0 or 1 in a general register.
          x86::Vec lane = PredToMask(vals_[id].gp);
          if (avx) {
            cc_.vpbroadcastq(mask.ymm(), lane.xmm());
          } else {
            cc_.pshufd(mask.xmm(), lane.xmm(), 0x44);
          }
          SetVec(id, mask);
          return absl::OkStatus();
        }
        const x86::Mem m = Address(static_cast<int>(op.imm), op.a, 1);
        x86::Vec wide = NewVec();
        if (avx) {
          f64 ? cc_.vpmovzxbq(wide.ymm(), x86::Mem(m).cloneResized(4))
              : cc_.vpmovzxbd(wide.ymm(), x86::Mem(m).cloneResized(8));
        } else {
          f64 ? cc_.pmovzxbq(wide.xmm(), x86::Mem(m).cloneResized(2))
              : cc_.pmovzxbd(wide.xmm(), x86::Mem(m).cloneResized(4));
        }
        // mask = (byte != 0) = not (lane == 0).
        x86::Vec zero = NewVec();
        avx ? cc_.vpxor(zero, zero, zero) : cc_.pxor(zero.xmm(), zero.xmm());
        x86::Vec is_zero = NewVec();
        V3(Pick(f64, Inst::kIdPcmpeqd, Inst::kIdPcmpeqq),
           Pick(f64, Inst::kIdVpcmpeqd, Inst::kIdVpcmpeqq), is_zero, wide, zero);
        x86::Vec ones = NewVec();
        avx ? cc_.vpcmpeqd(ones, ones, ones) : cc_.pcmpeqd(ones.xmm(), ones.xmm());
        V3(Inst::kIdPxor, Inst::kIdVpxor, mask, is_zero, ones);
        SetVec(id, mask);
        return absl::OkStatus();
      }
      const int bytes = f64 ? 8 : 4;
      const x86::Mem m = Address(static_cast<int>(op.imm), op.a, bytes);
      x86::Vec v = NewVec();
      if (uniform) {
        if (avx) {
          f64 ? cc_.vbroadcastsd(v.ymm(), x86::Mem(m).cloneResized(8))
              : cc_.vbroadcastss(v.ymm(), x86::Mem(m).cloneResized(4));
        } else if (f64) {
          cc_.movddup(v.xmm(), x86::Mem(m).cloneResized(8));
        } else {
          cc_.movss(v.xmm(), x86::Mem(m).cloneResized(4));
          cc_.shufps(v.xmm(), v.xmm(), 0);
        }
      } else {
        V2(Inst::kIdMovups, Inst::kIdVmovups, v, x86::Mem(m).cloneResized(avx ? 32 : 16));
      }
      SetVec(id, v);
      return absl::OkStatus();
    }
    case KOpKind::kStore: {
      const x86::Vec value = vals_[op.b].vec;
      if (op.operand_type != ElementType::kPred) {
        const int bytes = f64 ? 8 : 4;
        const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, bytes);
        cc_.emit(avx ? Inst::kIdVmovups : Inst::kIdMovups, x86::Mem(m).cloneResized(avx ? 32 : 16),
                 value);
        return absl::OkStatus();
      }
      // Lane masks to bytes 0/1.
      const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, 1);
      x86::Vec bits = NewVec();
      if (avx) {
        cc_.emit(Pick(f64, Inst::kIdVpsrld, Inst::kIdVpsrlq), bits, value, imm(f64 ? 63 : 31));
      } else {
        cc_.emit(Inst::kIdMovaps, bits, value);
        cc_.emit(Pick(f64, Inst::kIdPsrld, Inst::kIdPsrlq), bits, imm(f64 ? 63 : 31));
      }
      x86::Xmm low = cc_.newXmm();
      if (avx) {
        x86::Xmm high = cc_.newXmm();
        cc_.vextracti128(high, bits.ymm(), 1);
        if (f64) {
          cc_.vshufps(low, bits.xmm(), high, 0x88);  // qword lanes -> dwords 0..3
        } else {
          cc_.vpackusdw(low, bits.xmm(), high);  // dwords -> 8 words
        }
        if (f64) cc_.vpackusdw(low, low, low);
        cc_.vpackuswb(low, low, low);
        if (f64) {
          cc_.vmovd(x86::Mem(m).cloneResized(4), low);
        } else {
          cc_.vmovq(x86::Mem(m).cloneResized(8), low);
        }
      } else {
        if (f64) {
          cc_.pshufd(low, bits.xmm(), 0x08);  // qword lanes 0, 1 -> dwords 0, 1
        } else {
          cc_.movaps(low, bits.xmm());
        }
        cc_.packusdw(low, low);
        cc_.packuswb(low, low);
        if (f64) {
          x86::Gp two = NewGp();
          cc_.movd(two.r32(), low);
          cc_.mov(x86::Mem(m).cloneResized(2), two.r16());
        } else {
          cc_.movd(x86::Mem(m).cloneResized(4), low);
        }
      }
      return absl::OkStatus();
    }
    case KOpKind::kConst:
    case KOpKind::kFma:
    case KOpKind::kBits:
    case KOpKind::kBitShift:
      return EmitFloatPrimitive(id);
    case KOpKind::kUnary: {
      if (op.type == ElementType::kPred) {  // not: flip every bit of the mask.
        x86::Vec ones = NewVec();
        avx ? cc_.vpcmpeqd(ones, ones, ones) : cc_.pcmpeqd(ones.xmm(), ones.xmm());
        x86::Vec d = NewVec();
        V3(Inst::kIdXorps, Inst::kIdVxorps, d, vals_[op.a].vec, ones);
        SetVec(id, d);
        return absl::OkStatus();
      }
      x86::Vec r;
      XJIT_RETURN_IF_ERROR(FloatUnary(op.opcode, f64, vals_[op.a].vec, &r));
      SetVec(id, r);
      return absl::OkStatus();
    }
    case KOpKind::kBinary: {
      if (op.type == ElementType::kPred) {
        // Masks: and/multiply/minimum = and; or/add/maximum = or; xor.
        uint32_t sse = Inst::kIdXorps;
        uint32_t vex = Inst::kIdVxorps;
        switch (op.opcode) {
          case Opcode::kAnd: case Opcode::kMultiply: case Opcode::kMinimum:
            sse = Inst::kIdAndps;
            vex = Inst::kIdVandps;
            break;
          case Opcode::kOr: case Opcode::kAdd: case Opcode::kMaximum:
            sse = Inst::kIdOrps;
            vex = Inst::kIdVorps;
            break;
          case Opcode::kXor:
            break;
          default:
            return absl::UnimplementedError("x86-64: no vector code for this pred operation");
        }
        x86::Vec d = NewVec();
        V3(sse, vex, d, vals_[op.a].vec, vals_[op.b].vec);
        SetVec(id, d);
        return absl::OkStatus();
      }
      x86::Vec r;
      XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, vals_[op.a].vec, vals_[op.b].vec, &r));
      SetVec(id, r);
      return absl::OkStatus();
    }
    case KOpKind::kCompare:
      SetVec(id, FloatCompareMask(op.direction, f64, vals_[op.a].vec, vals_[op.b].vec));
      return absl::OkStatus();
    case KOpKind::kSelect:
      SetVec(id, Blend(f64, vals_[op.c].vec, vals_[op.b].vec, vals_[op.a].vec));
      return absl::OkStatus();
    case KOpKind::kClamp:
      SetVec(id, FloatMaxMin(false, f64, vals_[op.c].vec,
                             FloatMaxMin(true, f64, vals_[op.a].vec, vals_[op.b].vec)));
      return absl::OkStatus();
    default:
      return absl::UnimplementedError("x86-64: operation has no vector code");
  }
}

}  // namespace xjit::jit::x64
