// KernelLowering: float arithmetic shared by the scalar and vector
// representations, integer vector arithmetic, and the vector loads, stores
// and lane masks (see x64_lowering.h). Integer semantics are the
// evaluator's: wrapping arithmetic, shift amounts read as unsigned at the
// type's width with amounts >= width giving 0 (or sign fill). Semantics follow interpreter/evaluator.h: maximum/minimum propagate
// NaN and order -0 below +0; compare is IEEE (NE true on NaN).
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT
namespace Inst = x86::Inst;

namespace {

uint32_t Pick(bool f64, uint32_t ps, uint32_t pd) { return f64 ? pd : ps; }

bool IsHalf(ElementType type) { return type == ElementType::kF16 || type == ElementType::kBF16; }

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
constexpr int kCmpGeAvx = 13;  // GE_OS (VEX only)
constexpr int kCmpGtAvx = 14;  // GT_OS (VEX only)

}  // namespace

namespace {

// The EVEX instruction that does what VEX-only `id` does, on zmm registers.
uint32_t EvexEquivalent(uint32_t id) {
  switch (id) {
    case Inst::kIdVpand: return Inst::kIdVpandd;
    case Inst::kIdVpandn: return Inst::kIdVpandnd;
    case Inst::kIdVpor: return Inst::kIdVpord;
    case Inst::kIdVpxor: return Inst::kIdVpxord;
    case Inst::kIdVmovdqu: return Inst::kIdVmovdqu32;
    case Inst::kIdVmovdqa: return Inst::kIdVmovdqa32;
    // The same immediate: rounding mode in bits 0-1, MXCSR in bit 2,
    // inexact suppressed in bit 3; scale (bits 4-7) 0.
    case Inst::kIdVroundps: return Inst::kIdVrndscaleps;
    case Inst::kIdVroundpd: return Inst::kIdVrndscalepd;
    default: return id;
  }
}

// Lane width of the mask a compare writes (its EVEX form writes a k
// register), 0 for other instructions.
int CompareLaneBits(uint32_t id) {
  switch (id) {
    case Inst::kIdVcmpps: case Inst::kIdVpcmpeqd: case Inst::kIdVpcmpgtd:
      return 32;
    case Inst::kIdVcmppd: case Inst::kIdVpcmpeqq: case Inst::kIdVpcmpgtq:
      return 64;
    default:
      return 0;
  }
}

}  // namespace

x86::Vec KernelLowering::NewVec() {
  if (mode_ == Mode::kVector && features_.avx2) return zmm_ ? x86::Vec(cc_.newZmm())
                                                            : x86::Vec(cc_.newYmm());
  return cc_.newXmm();
}

int KernelLowering::VecBytes() const {
  if (mode_ != Mode::kVector) return 16;
  return zmm_ ? 64 : features_.avx2 ? 32 : 16;
}

void KernelLowering::EmitZmm(uint32_t avx, const x86::Vec& d, const Operand& a, const Operand& b,
                             int imm_value) {
  auto emit = [&](uint32_t id, const Operand& d_operand) {
    if (b.isNone()) {
      imm_value < 0 ? cc_.emit(id, d_operand, a) : cc_.emit(id, d_operand, a, imm(imm_value));
    } else {
      imm_value < 0 ? cc_.emit(id, d_operand, a, b)
                    : cc_.emit(id, d_operand, a, b, imm(imm_value));
    }
  };
  const int compare_bits = CompareLaneBits(avx);
  if (compare_bits == 0) {
    emit(EvexEquivalent(avx), d);
    return;
  }
  x86::KReg k = cc_.newKq();
  emit(avx, k);
  cc_.emit(compare_bits == 32 ? Inst::kIdVpmovm2d : Inst::kIdVpmovm2q, d, k);
}

void KernelLowering::V2(uint32_t sse, uint32_t avx, const x86::Vec& d, const Operand& a) {
  if (d.isZmm()) return EmitZmm(avx, d, a, Operand(), -1);
  cc_.emit(features_.avx2 ? avx : sse, d, a);
}

void KernelLowering::V2i(uint32_t sse, uint32_t avx, const x86::Vec& d, const Operand& a,
                         int imm_value) {
  if (d.isZmm()) return EmitZmm(avx, d, a, Operand(), imm_value);
  cc_.emit(features_.avx2 ? avx : sse, d, a, imm(imm_value));
}

void KernelLowering::V3(uint32_t sse, uint32_t avx, const x86::Vec& d, const x86::Vec& a,
                        const Operand& b) {
  if (d.isZmm()) return EmitZmm(avx, d, a, b, -1);
  if (features_.avx2) {
    cc_.emit(avx, d, a, b);
    return;
  }
  cc_.emit(Inst::kIdMovaps, d, a);
  cc_.emit(sse, d, b);
}

void KernelLowering::V3i(uint32_t sse, uint32_t avx, const x86::Vec& d, const x86::Vec& a,
                         const Operand& b, int imm_value) {
  if (d.isZmm()) return EmitZmm(avx, d, a, b, imm_value);
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
  uint8_t data[64];
  const int lane = f64 ? 8 : 4;
  for (int i = 0; i < 64; i += lane) std::memcpy(data + i, &lane_bits, lane);
  x86::Vec d = NewVec();
  x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, data, d.size());
  V2(Inst::kIdMovups, Inst::kIdVmovups, d, m);
  return d;
}

Operand KernelLowering::ConstSource(bool f64, uint64_t lane_bits) {
  if (!features_.avx2) return Const(f64, lane_bits);
  uint8_t data[64];
  const int lane = f64 ? 8 : 4;
  for (int i = 0; i < 64; i += lane) std::memcpy(data + i, &lane_bits, lane);
  return cc_.newConst(ConstPoolScope::kLocal, data, VecBytes());
}

x86::Vec KernelLowering::Blend(bool f64, x86::Vec if_false, x86::Vec if_true, x86::Vec mask) {
  x86::Vec d = NewVec();
  if (d.size() != if_false.size()) d = cc_.newXmm();
  if (d.isZmm()) {
    // No vblendv for zmm: a bit select with the lane mask (all ones or all
    // zeros per lane), d = mask ? if_true : if_false (truth table 0xCA of
    // (d, if_true, if_false)).
    cc_.vmovaps(d, mask);
    cc_.vpternlogd(d, if_true, if_false, 0xCA);
    return d;
  }
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
  if (r.isZmm()) {
    // The NaN lanes as k masks, patched in by merge-masked moves.
    const uint32_t move = Pick(f64, Inst::kIdVmovaps, Inst::kIdVmovapd);
    x86::KReg b_nan = cc_.newKq();
    cc_.emit(cmp_avx, b_nan, b, b, imm(kCmpUnord));
    cc_.k(b_nan).emit(move, r, b);
    x86::KReg a_nan = cc_.newKq();
    cc_.emit(cmp_avx, a_nan, a, a, imm(kCmpUnord));
    cc_.k(a_nan).emit(move, r, a);
    return r;
  }
  x86::Vec b_nan = NewVec();
  V3i(cmp_sse, cmp_avx, b_nan, b, b, kCmpUnord);
  r = Blend(f64, r, b, b_nan);
  x86::Vec a_nan = NewVec();
  V3i(cmp_sse, cmp_avx, a_nan, a, a, kCmpUnord);
  return Blend(f64, r, a, a_nan);
}

absl::Status KernelLowering::EmitFoldedSelect(int id, Mode mode) {
  const KOp& op = program_.ops[id];
  const bool f64 = op.type == ElementType::kF64;
  const bool max = select_fold_[id] == 1;
  mode_ = mode;
  if (mode == Mode::kVector) {
    x86::Vec d = NewVec();
    V3(max ? Pick(f64, Inst::kIdMaxps, Inst::kIdMaxpd) : Pick(f64, Inst::kIdMinps, Inst::kIdMinpd),
       max ? Pick(f64, Inst::kIdVmaxps, Inst::kIdVmaxpd)
           : Pick(f64, Inst::kIdVminps, Inst::kIdVminpd),
       d, VecReg(op.b), VecSource(op.c));
    SetVec(id, d);
    return absl::OkStatus();
  }
  if (!vals_[op.b].in_vec || !vals_[op.c].in_vec) {
    // Not in vector registers here: the compare and the select after all.
    select_fold_[id] = 0;
    folded_compare_[op.a] = false;
    absl::Status status = EmitOp(op.a, mode);
    if (status.ok()) status = EmitOp(id, mode);
    select_fold_[id] = max ? 1 : 2;
    folded_compare_[op.a] = true;
    return status;
  }
  x86::Vec d = cc_.newXmm();
  V3(max ? Pick(f64, Inst::kIdMaxss, Inst::kIdMaxsd) : Pick(f64, Inst::kIdMinss, Inst::kIdMinsd),
     max ? Pick(f64, Inst::kIdVmaxss, Inst::kIdVmaxsd)
         : Pick(f64, Inst::kIdVminss, Inst::kIdVminsd),
     d, vals_[op.b].vec.xmm(), vals_[op.c].vec.xmm());
  SetVec(id, d);
  return absl::OkStatus();
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
      V3(and_sse, and_avx, d, x, ConstSource(f64, AbsBits(f64)));
      break;
    case Opcode::kNegate:
      V3(Pick(f64, Inst::kIdXorps, Inst::kIdXorpd), Pick(f64, Inst::kIdVxorps, Inst::kIdVxorpd), d,
         x, ConstSource(f64, SignBits(f64)));
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
                                         x86::Vec* out, Operand b_source) {
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
  if (b_source.isMem()) {
    V3(sse, avx, d, a, b_source);
  } else {
    V3(sse, avx, d, a, b);
  }
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
      if (IsMemSource(id)) {
        // Read by its users as a memory operand (see PlanVectorLoop).
        uint8_t data[64];
        const int lane = f64 ? 8 : 4;
        const uint64_t bits = static_cast<uint64_t>(op.imm);
        for (int i = 0; i < 64; i += lane) std::memcpy(data + i, &bits, lane);
        deferred_mem_[id] = cc_.newConst(ConstPoolScope::kLocal, data, VecBytes());
        vals_[id] = Val();
        return absl::OkStatus();
      }
      d = Const(f64, static_cast<uint64_t>(op.imm));
      break;
    case KOpKind::kFma: {
      if (!avx) return absl::UnimplementedError("x86-64: fused multiply-add needs AVX2/FMA");
      // a*b + c in one of the three forms, overwriting an operand that dies
      // here when there is one (a*b is commutative and exact before the one
      // rounding, so every form gives the same bits).
      const uint32_t f132 = Pick(f64, Inst::kIdVfmadd132ps, Inst::kIdVfmadd132pd);
      const uint32_t f213 = Pick(f64, Inst::kIdVfmadd213ps, Inst::kIdVfmadd213pd);
      const uint32_t f231 = Pick(f64, Inst::kIdVfmadd231ps, Inst::kIdVfmadd231pd);
      int a = op.a;
      int b = op.b;
      const int c = op.c;
      if (IsMemSource(a) && !IsMemSource(b)) std::swap(a, b);
      bool a_own = Killable(a, id) || IsMemSource(a);
      const x86::Vec av = VecReg(a);  // Loads a constant (then a register of its own).
      const bool b_mem = IsMemSource(b);
      bool c_mem = IsMemSource(c);
      bool c_own = Killable(c, id);
      x86::Vec cv;
      if (c_mem && b_mem) {
        cv = VecReg(c);
        c_mem = false;
        c_own = true;
      } else if (!c_mem) {
        cv = vals_[c].vec;
      }
      const bool b_own = !b_mem && Killable(b, id);
      if (c_own) {
        d = cv;
        cc_.emit(f231, d, av, VecSource(b));
      } else if (a_own || b_own) {
        // The dying factor is the destination; the other factor x.
        d = a_own ? av : vals_[b].vec;
        const Operand x = a_own ? VecSource(b) : Operand(av);
        if (c_mem) {
          // x is a register: b_mem && c_mem was handled above.
          cc_.emit(f213, d, x, deferred_mem_[c]);
        } else if (x.isMem()) {
          cc_.emit(f132, d, cv, x);
        } else {
          cc_.emit(f213, d, x, cv);
        }
      } else if (!c_mem) {
        d = Copy(cv);
        cc_.emit(f231, d, av, VecSource(b));
      } else {
        d = VecReg(c);
        cc_.emit(f231, d, av, VecSource(b));
      }
      break;
    }
    case KOpKind::kBits: {
      uint32_t sse = 0;
      uint32_t vex = 0;
      bool commutative = true;
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
          commutative = false;
          break;
        default:
          return absl::UnimplementedError(
              absl::StrCat("x86-64: no bit operation ", OpcodeName(op.opcode)));
      }
      int a = op.a;
      int b = op.b;
      if (commutative && IsMemSource(a) && !IsMemSource(b)) std::swap(a, b);
      d = NewVec();
      V3(sse, vex, d, VecReg(a), VecSource(b));
      break;
    }
    case KOpKind::kScale: {
      // a * 2^floor(b), rounded once (vscalefps/pd; scalar mode: the ss/sd
      // form, so that no other lane takes part).
      if (!features_.avx512) return absl::UnimplementedError("x86-64: kScale needs AVX-512");
      d = NewVec();
      if (mode_ == Mode::kVector) {
        V3(0, Pick(f64, Inst::kIdVscalefps, Inst::kIdVscalefpd), d, VecReg(op.a), VecSource(op.b));
      } else {
        cc_.emit(Pick(f64, Inst::kIdVscalefss, Inst::kIdVscalefsd), d.xmm(), vals_[op.a].vec.xmm(),
                 vals_[op.b].vec.xmm());
      }
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

namespace {

// Instruction ids by lane width (8, 16, 32, 64 bits).
int WidthIndex(int width) { return width == 8 ? 0 : width == 16 ? 1 : width == 32 ? 2 : 3; }

struct ByWidth {
  uint32_t sse[4];
  uint32_t avx[4];
};

constexpr ByWidth kPadd = {{Inst::kIdPaddb, Inst::kIdPaddw, Inst::kIdPaddd, Inst::kIdPaddq},
                           {Inst::kIdVpaddb, Inst::kIdVpaddw, Inst::kIdVpaddd, Inst::kIdVpaddq}};
constexpr ByWidth kPsub = {{Inst::kIdPsubb, Inst::kIdPsubw, Inst::kIdPsubd, Inst::kIdPsubq},
                           {Inst::kIdVpsubb, Inst::kIdVpsubw, Inst::kIdVpsubd, Inst::kIdVpsubq}};
constexpr ByWidth kPcmpeq = {
    {Inst::kIdPcmpeqb, Inst::kIdPcmpeqw, Inst::kIdPcmpeqd, Inst::kIdPcmpeqq},
    {Inst::kIdVpcmpeqb, Inst::kIdVpcmpeqw, Inst::kIdVpcmpeqd, Inst::kIdVpcmpeqq}};
// 64-bit: AVX2 only (SSE4.2's pcmpgtq is emulated on SSE4.1).
constexpr ByWidth kPcmpgt = {
    {Inst::kIdPcmpgtb, Inst::kIdPcmpgtw, Inst::kIdPcmpgtd, Inst::kIdNone},
    {Inst::kIdVpcmpgtb, Inst::kIdVpcmpgtw, Inst::kIdVpcmpgtd, Inst::kIdVpcmpgtq}};
// 64-bit: none (compare and blend).
constexpr ByWidth kPmaxs = {{Inst::kIdPmaxsb, Inst::kIdPmaxsw, Inst::kIdPmaxsd, Inst::kIdNone},
                            {Inst::kIdVpmaxsb, Inst::kIdVpmaxsw, Inst::kIdVpmaxsd, Inst::kIdNone}};
constexpr ByWidth kPmins = {{Inst::kIdPminsb, Inst::kIdPminsw, Inst::kIdPminsd, Inst::kIdNone},
                            {Inst::kIdVpminsb, Inst::kIdVpminsw, Inst::kIdVpminsd, Inst::kIdNone}};
constexpr ByWidth kPmaxu = {{Inst::kIdPmaxub, Inst::kIdPmaxuw, Inst::kIdPmaxud, Inst::kIdNone},
                            {Inst::kIdVpmaxub, Inst::kIdVpmaxuw, Inst::kIdVpmaxud, Inst::kIdNone}};
constexpr ByWidth kPminu = {{Inst::kIdPminub, Inst::kIdPminuw, Inst::kIdPminud, Inst::kIdNone},
                            {Inst::kIdVpminub, Inst::kIdVpminuw, Inst::kIdVpminud, Inst::kIdNone}};
// Shifts by a count register (no 8-bit forms; no 64-bit arithmetic form).
constexpr ByWidth kPsll = {{Inst::kIdNone, Inst::kIdPsllw, Inst::kIdPslld, Inst::kIdPsllq},
                           {Inst::kIdNone, Inst::kIdVpsllw, Inst::kIdVpslld, Inst::kIdVpsllq}};
constexpr ByWidth kPsrl = {{Inst::kIdNone, Inst::kIdPsrlw, Inst::kIdPsrld, Inst::kIdPsrlq},
                           {Inst::kIdNone, Inst::kIdVpsrlw, Inst::kIdVpsrld, Inst::kIdVpsrlq}};
constexpr ByWidth kPsra = {{Inst::kIdNone, Inst::kIdPsraw, Inst::kIdPsrad, Inst::kIdNone},
                           {Inst::kIdNone, Inst::kIdVpsraw, Inst::kIdVpsrad, Inst::kIdNone}};

}  // namespace

void KernelLowering::ShiftImm(uint32_t sse, uint32_t avx, const x86::Vec& d, const x86::Vec& a,
                              int count) {
  if (d.isZmm()) return EmitZmm(avx, d, a, Operand(), count);
  if (features_.avx2) {
    cc_.emit(avx, d, a, imm(count));
    return;
  }
  cc_.emit(Inst::kIdMovdqa, d, a);
  cc_.emit(sse, d, imm(count));
}

x86::Vec KernelLowering::IntConst(int width, uint64_t value) {
  uint8_t data[64];
  const int bytes = width / 8;
  for (int i = 0; i < 64; i += bytes) std::memcpy(data + i, &value, bytes);
  x86::Vec d = NewVec();
  x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, data, d.size());
  V2(Inst::kIdMovdqu, Inst::kIdVmovdqu, d, m);
  return d;
}

x86::Vec KernelLowering::AllOnes() {
  x86::Vec d = NewVec();
  if (d.isZmm()) {
    // vpternlogd reads its destination, which asmjit would then load as an
    // uninitialised value: zero it first (an idiom asmjit knows writes only).
    cc_.vpxord(d, d, d);
    cc_.vpternlogd(d, d, d, 0xFF);
    return d;
  }
  features_.avx2 ? cc_.vpcmpeqd(d, d, d) : cc_.pcmpeqd(d.xmm(), d.xmm());
  return d;
}

x86::Vec KernelLowering::Zero() {
  x86::Vec d = NewVec();
  if (d.isZmm()) {
    cc_.vpxord(d, d, d);
    return d;
  }
  features_.avx2 ? cc_.vpxor(d, d, d) : cc_.pxor(d.xmm(), d.xmm());
  return d;
}

x86::Vec KernelLowering::IntOp(uint32_t sse, uint32_t avx, x86::Vec a, x86::Vec b) {
  x86::Vec d = NewVec();
  if (d.isZmm()) {
    EmitZmm(avx, d, a, b, -1);
  } else if (features_.avx2) {
    cc_.emit(avx, d, a, b);
  } else {
    cc_.emit(Inst::kIdMovdqa, d, a);
    cc_.emit(sse, d, b);
  }
  return d;
}

x86::Vec KernelLowering::BroadcastLane0(x86::Vec x, int width) {
  x86::Vec d = NewVec();
  const x86::Xmm lane = x.xmm();
  if (features_.avx2) {
    switch (width) {
      case 8: cc_.vpbroadcastb(d, lane); break;
      case 16: cc_.vpbroadcastw(d, lane); break;
      case 32: cc_.vpbroadcastd(d, lane); break;
      default: cc_.vpbroadcastq(d, lane); break;
    }
    return d;
  }
  switch (width) {
    case 8: {
      x86::Vec zero = Zero();
      cc_.movdqa(d.xmm(), lane);
      cc_.pshufb(d.xmm(), zero.xmm());
      break;
    }
    case 16:
      cc_.pshuflw(d.xmm(), lane, 0);
      cc_.pshufd(d.xmm(), d.xmm(), 0);
      break;
    case 32: cc_.pshufd(d.xmm(), lane, 0); break;
    default: cc_.pshufd(d.xmm(), lane, 0x44); break;
  }
  return d;
}

x86::Vec KernelLowering::BroadcastGp(x86::Gp g, int width) {
  x86::Xmm lane = cc_.newXmm();
  features_.avx2 ? cc_.vmovq(lane, g) : cc_.movq(lane, g);
  return BroadcastLane0(lane, width);
}

x86::Vec KernelLowering::ByteBlend(x86::Vec if_false, x86::Vec if_true, x86::Vec mask) {
  x86::Vec d = NewVec();
  if (d.isZmm()) {
    // A bit select (see Blend): the masks are whole lanes of 32/64 bits.
    cc_.vmovdqa32(d, mask);
    cc_.vpternlogd(d, if_true, if_false, 0xCA);
    return d;
  }
  if (features_.avx2) {
    cc_.vpblendvb(d, if_false, if_true, mask);
  } else {
    // pblendvb's mask is implicitly xmm0; asmjit's allocator places it.
    cc_.movdqa(d.xmm(), if_false.xmm());
    cc_.pblendvb(d.xmm(), if_true.xmm(), mask.xmm());
  }
  return d;
}

x86::Vec KernelLowering::SignMask(int width, x86::Vec x) {
  if (width < 64) return IntOp(kPcmpgt.sse[WidthIndex(width)], kPcmpgt.avx[WidthIndex(width)],
                               Zero(), x);
  // The high dword's sign, copied to both halves of the qword.
  x86::Vec t = NewVec();
  ShiftImm(Inst::kIdPsrad, Inst::kIdVpsrad, t, x, 31);
  x86::Vec d = NewVec();
  V2i(Inst::kIdPshufd, Inst::kIdVpshufd, d, t, 0xF5);
  return d;
}

x86::Vec KernelLowering::IntGreater(bool is_signed, int width, x86::Vec a, x86::Vec b) {
  const int w = WidthIndex(width);
  if (!is_signed) {
    // Unsigned order = signed order with the sign bits flipped.
    x86::Vec bias = IntConst(width, uint64_t{1} << (width - 1));
    a = IntOp(Inst::kIdPxor, Inst::kIdVpxor, a, bias);
    b = IntOp(Inst::kIdPxor, Inst::kIdVpxor, b, bias);
  }
  if (width < 64 || features_.avx2) return IntOp(kPcmpgt.sse[w], kPcmpgt.avx[w], a, b);
  // SSE4.1 has no pcmpgtq: compare the high dwords signed and the low
  // dwords unsigned (their sign bits flipped), then
  // gt = gt_high | (eq_high & gt_low).
  x86::Vec bias = IntConst(64, 0x80000000u);
  x86::Vec x = IntOp(Inst::kIdPxor, Inst::kIdVpxor, a, bias);
  x86::Vec y = IntOp(Inst::kIdPxor, Inst::kIdVpxor, b, bias);
  x86::Vec gt = IntOp(Inst::kIdPcmpgtd, Inst::kIdVpcmpgtd, x, y);
  x86::Vec eq = IntOp(Inst::kIdPcmpeqd, Inst::kIdVpcmpeqd, x, y);
  x86::Vec gt_low = NewVec();
  x86::Vec gt_high = NewVec();
  x86::Vec eq_high = NewVec();
  V2i(Inst::kIdPshufd, Inst::kIdVpshufd, gt_low, gt, 0xA0);
  V2i(Inst::kIdPshufd, Inst::kIdVpshufd, gt_high, gt, 0xF5);
  V2i(Inst::kIdPshufd, Inst::kIdVpshufd, eq_high, eq, 0xF5);
  return IntOp(Inst::kIdPor, Inst::kIdVpor, gt_high,
               IntOp(Inst::kIdPand, Inst::kIdVpand, eq_high, gt_low));
}

x86::Vec KernelLowering::IntCompareMask(ComparisonDirection direction, bool is_signed, int width,
                                        x86::Vec a, x86::Vec b) {
  const int w = WidthIndex(width);
  auto invert = [&](x86::Vec m) { return IntOp(Inst::kIdPxor, Inst::kIdVpxor, m, AllOnes()); };
  switch (direction) {
    case ComparisonDirection::kEq: return IntOp(kPcmpeq.sse[w], kPcmpeq.avx[w], a, b);
    case ComparisonDirection::kNe: return invert(IntOp(kPcmpeq.sse[w], kPcmpeq.avx[w], a, b));
    case ComparisonDirection::kGt: return IntGreater(is_signed, width, a, b);
    case ComparisonDirection::kLt: return IntGreater(is_signed, width, b, a);
    case ComparisonDirection::kGe: return invert(IntGreater(is_signed, width, b, a));
    case ComparisonDirection::kLe: return invert(IntGreater(is_signed, width, a, b));
  }
  return a;
}

x86::Vec KernelLowering::IntMaxMin(bool max, bool is_signed, int width, x86::Vec a, x86::Vec b) {
  const int w = WidthIndex(width);
  if (width < 64) {
    const ByWidth& table = max ? (is_signed ? kPmaxs : kPmaxu) : (is_signed ? kPmins : kPminu);
    return IntOp(table.sse[w], table.avx[w], a, b);
  }
  if (mode_ == Mode::kVector && zmm_) {
    const uint32_t id = max ? (is_signed ? Inst::kIdVpmaxsq : Inst::kIdVpmaxuq)
                            : (is_signed ? Inst::kIdVpminsq : Inst::kIdVpminuq);
    return IntOp(id, id, a, b);
  }
  x86::Vec a_greater = IntGreater(is_signed, width, a, b);
  return max ? ByteBlend(b, a, a_greater) : ByteBlend(a, b, a_greater);
}

x86::Vec KernelLowering::IntMultiply(int width, x86::Vec a, x86::Vec b) {
  if (width == 16) return IntOp(Inst::kIdPmullw, Inst::kIdVpmullw, a, b);
  if (width == 32) return IntOp(Inst::kIdPmulld, Inst::kIdVpmulld, a, b);
  if (width == 8) {
    // Even bytes: the low byte of each word's product; odd bytes: the
    // product of the high bytes, shifted back up.
    x86::Vec even = IntOp(Inst::kIdPand, Inst::kIdVpand,
                          IntOp(Inst::kIdPmullw, Inst::kIdVpmullw, a, b), IntConst(16, 0x00FF));
    x86::Vec a_high = NewVec();
    x86::Vec b_high = NewVec();
    ShiftImm(Inst::kIdPsrlw, Inst::kIdVpsrlw, a_high, a, 8);
    ShiftImm(Inst::kIdPsrlw, Inst::kIdVpsrlw, b_high, b, 8);
    x86::Vec odd_product = IntOp(Inst::kIdPmullw, Inst::kIdVpmullw, a_high, b_high);
    x86::Vec odd = NewVec();
    ShiftImm(Inst::kIdPsllw, Inst::kIdVpsllw, odd, odd_product, 8);
    return IntOp(Inst::kIdPor, Inst::kIdVpor, even, odd);
  }
  // The low 64 bits of the product (AVX512DQ).
  if (mode_ == Mode::kVector && zmm_) return IntOp(Inst::kIdVpmullq, Inst::kIdVpmullq, a, b);
  // 64: low(a)*low(b) + ((high(a)*low(b) + low(a)*high(b)) << 32).
  x86::Vec a_high = NewVec();
  x86::Vec b_high = NewVec();
  ShiftImm(Inst::kIdPsrlq, Inst::kIdVpsrlq, a_high, a, 32);
  ShiftImm(Inst::kIdPsrlq, Inst::kIdVpsrlq, b_high, b, 32);
  x86::Vec low = IntOp(Inst::kIdPmuludq, Inst::kIdVpmuludq, a, b);
  x86::Vec cross = IntOp(Inst::kIdPaddq, Inst::kIdVpaddq,
                         IntOp(Inst::kIdPmuludq, Inst::kIdVpmuludq, a_high, b),
                         IntOp(Inst::kIdPmuludq, Inst::kIdVpmuludq, a, b_high));
  x86::Vec shifted = NewVec();
  ShiftImm(Inst::kIdPsllq, Inst::kIdVpsllq, shifted, cross, 32);
  return IntOp(Inst::kIdPaddq, Inst::kIdVpaddq, low, shifted);
}

absl::Status KernelLowering::IntShift(Opcode opcode, int width, x86::Vec x, x86::Vec amount,
                                      bool uniform, x86::Vec* out) {
  const int w = WidthIndex(width);
  const bool avx = features_.avx2;
  if (opcode == Opcode::kShiftRightArithmetic && (width == 8 || width == 64)) {
    // No arithmetic form: s ^ ((x ^ s) >>> n) with s the sign mask; an
    // amount >= width leaves s (sign fill).
    x86::Vec s = SignMask(width, x);
    x86::Vec shifted;
    XJIT_RETURN_IF_ERROR(IntShift(Opcode::kShiftRightLogical, width,
                                  IntOp(Inst::kIdPxor, Inst::kIdVpxor, x, s), amount, uniform,
                                  &shifted));
    *out = IntOp(Inst::kIdPxor, Inst::kIdVpxor, shifted, s);
    return absl::OkStatus();
  }
  // AVX2 per-lane amounts (unsigned; >= width gives 0 or sign fill). One
  // amount for all lanes takes this form too where it exists: it reads the
  // broadcast amount as it is, where the count form first moves lane 0 into
  // a count register (vpmovzxdq) at every shift, and the count forms of
  // vpslld/vpsrld cost two micro-ops on Intel cores. Threefry's rotates by
  // an amount read from its rotation array are such shifts.
  if (!uniform || (avx && width >= 32)) {
    if (!avx || width < 32) return absl::UnimplementedError("x86-64: no per-lane shift");
    uint32_t id = 0;
    switch (opcode) {
      case Opcode::kShiftLeft: id = width == 32 ? Inst::kIdVpsllvd : Inst::kIdVpsllvq; break;
      case Opcode::kShiftRightLogical:
        id = width == 32 ? Inst::kIdVpsrlvd : Inst::kIdVpsrlvq;
        break;
      default: id = Inst::kIdVpsravd; break;
    }
    x86::Vec d = NewVec();
    cc_.emit(id, d, x, amount);
    *out = d;
    return absl::OkStatus();
  }
  // One amount: lane 0 zero-extended to 64 bits is the count, read as
  // unsigned at the type's width as XLA does; counts >= width give 0 (or
  // sign fill for psra), as XLA's semantics ask.
  x86::Xmm count = cc_.newXmm();
  switch (width) {
    case 8: avx ? cc_.vpmovzxbq(count, amount.xmm()) : cc_.pmovzxbq(count, amount.xmm()); break;
    case 16: avx ? cc_.vpmovzxwq(count, amount.xmm()) : cc_.pmovzxwq(count, amount.xmm()); break;
    case 32: avx ? cc_.vpmovzxdq(count, amount.xmm()) : cc_.pmovzxdq(count, amount.xmm()); break;
    default: count = amount.xmm(); break;
  }
  if (width == 8) {
    // Shift words, then clear the bits that crossed from the neighbouring
    // byte: the mask is the low byte of (0x00FF << n) or (0x00FF >> n).
    const bool left = opcode == Opcode::kShiftLeft;
    const uint32_t sse = left ? Inst::kIdPsllw : Inst::kIdPsrlw;
    const uint32_t vex = left ? Inst::kIdVpsllw : Inst::kIdVpsrlw;
    x86::Vec shifted = ShiftByCount(sse, vex, x, count);
    x86::Vec byte_mask = ShiftByCount(sse, vex, IntConst(16, 0x00FF), count);
    *out = IntOp(Inst::kIdPand, Inst::kIdVpand, shifted, BroadcastLane0(byte_mask, 8));
    return absl::OkStatus();
  }
  const ByWidth& table = opcode == Opcode::kShiftLeft            ? kPsll
                         : opcode == Opcode::kShiftRightLogical ? kPsrl
                                                                 : kPsra;
  *out = ShiftByCount(table.sse[w], table.avx[w], x, count);
  return absl::OkStatus();
}

x86::Vec KernelLowering::ShiftByCount(uint32_t sse, uint32_t avx, const x86::Vec& x,
                                      const x86::Xmm& count) {
  // The value is copied into the result first and shifted there: with a
  // spilled value as the first source, asmjit emitted its stack slot there
  // (`vpsrld ymm, m256, xmm`, a form that exists only with an immediate
  // count) and failed with "invalid memory operand" in an earlier attempt
  // to hoist loop invariants (jit_random_test seeds 632 and 765, AVX2). A
  // move may read the slot.
  x86::Vec d = NewVec();
  V2(Inst::kIdMovdqa, Inst::kIdVmovdqa, d, x);
  if (d.isZmm()) {
    EmitZmm(avx, d, d, count, -1);
  } else if (features_.avx2) {
    cc_.emit(avx, d, d, count);
  } else {
    cc_.emit(sse, d, count);
  }
  return d;
}

absl::Status KernelLowering::IntBinary(Opcode opcode, ElementType type, x86::Vec a, x86::Vec b,
                                       bool uniform_b, x86::Vec* out) {
  const int width = BitWidth(type);
  const int w = WidthIndex(width);
  const bool is_signed = IsSignedInteger(type);
  switch (opcode) {
    case Opcode::kAdd: *out = IntOp(kPadd.sse[w], kPadd.avx[w], a, b); break;
    case Opcode::kSubtract: *out = IntOp(kPsub.sse[w], kPsub.avx[w], a, b); break;
    case Opcode::kMultiply: *out = IntMultiply(width, a, b); break;
    case Opcode::kAnd: *out = IntOp(Inst::kIdPand, Inst::kIdVpand, a, b); break;
    case Opcode::kOr: *out = IntOp(Inst::kIdPor, Inst::kIdVpor, a, b); break;
    case Opcode::kXor: *out = IntOp(Inst::kIdPxor, Inst::kIdVpxor, a, b); break;
    case Opcode::kMaximum: *out = IntMaxMin(true, is_signed, width, a, b); break;
    case Opcode::kMinimum: *out = IntMaxMin(false, is_signed, width, a, b); break;
    case Opcode::kShiftLeft: case Opcode::kShiftRightLogical:
    case Opcode::kShiftRightArithmetic:
      return IntShift(opcode, width, a, b, uniform_b, out);
    default:
      return absl::UnimplementedError(
          absl::StrCat("x86-64: no vector code for ", OpcodeName(opcode), " on integers"));
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitIntVectorOp(int id) {
  const KOp& op = program_.ops[id];
  const ElementType type = op.type;
  const int width = lane_bits_;
  const int w = WidthIndex(width);
  switch (op.kind) {
    case KOpKind::kUnary: {
      const x86::Vec x = vals_[op.a].vec;
      x86::Vec d;
      switch (op.opcode) {
        case Opcode::kNot:
          d = IntOp(Inst::kIdPxor, Inst::kIdVpxor, x, AllOnes());
          break;
        case Opcode::kNegate:
          d = IntOp(kPsub.sse[w], kPsub.avx[w], Zero(), x);
          break;
        case Opcode::kAbs:
          if (!IsSignedInteger(type)) {
            d = x;
          } else if (width < 64) {
            static constexpr uint32_t kSse[] = {Inst::kIdPabsb, Inst::kIdPabsw, Inst::kIdPabsd};
            static constexpr uint32_t kAvx[] = {Inst::kIdVpabsb, Inst::kIdVpabsw,
                                                Inst::kIdVpabsd};
            d = NewVec();
            V2(kSse[w], kAvx[w], d, x);
          } else {
            x86::Vec s = SignMask(width, x);
            d = IntOp(kPsub.sse[w], kPsub.avx[w], IntOp(Inst::kIdPxor, Inst::kIdVpxor, x, s), s);
          }
          break;
        case Opcode::kSign: {
          x86::Vec zero = Zero();
          if (IsSignedInteger(type)) {
            // (x < 0 ? -1 : 0) - (x > 0 ? -1 : 0).
            d = IntOp(kPsub.sse[w], kPsub.avx[w], IntGreater(true, width, zero, x),
                      IntGreater(true, width, x, zero));
          } else {
            // (x == 0 ? -1 : 0) - (-1).
            d = IntOp(kPsub.sse[w], kPsub.avx[w],
                      IntOp(kPcmpeq.sse[w], kPcmpeq.avx[w], x, zero), AllOnes());
          }
          break;
        }
        default:
          return absl::UnimplementedError("x86-64: no vector code for this integer operation");
      }
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kBinary: {
      x86::Vec d;
      XJIT_RETURN_IF_ERROR(IntBinary(op.opcode, type, vals_[op.a].vec, vals_[op.b].vec,
                                     strides_[op.b] == 0, &d));
      SetVec(id, d);
      return absl::OkStatus();
    }
    case KOpKind::kClamp: {
      const bool is_signed = IsSignedInteger(type);
      SetVec(id, IntMaxMin(false, is_signed, width, vals_[op.c].vec,
                           IntMaxMin(true, is_signed, width, vals_[op.a].vec, vals_[op.b].vec)));
      return absl::OkStatus();
    }
    default:
      return absl::UnimplementedError("x86-64: no vector code for this integer operation");
  }
}

namespace {

// The VEX/EVEX vcmpps predicate of an IEEE comparison: ordered and false on
// NaN, except NE (unordered, true).
int AvxFloatPredicate(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kEq: return kCmpEq;
    case ComparisonDirection::kNe: return kCmpNe;
    case ComparisonDirection::kLt: return kCmpLt;
    case ComparisonDirection::kLe: return kCmpLe;
    case ComparisonDirection::kGt: return kCmpGtAvx;
    case ComparisonDirection::kGe: return kCmpGeAvx;
  }
  return kCmpEq;
}

}  // namespace

void KernelLowering::MemSourceSecond(int* a, int* b, ComparisonDirection* direction) const {
  if (!IsMemSource(*a) || IsMemSource(*b)) return;
  std::swap(*a, *b);
  switch (*direction) {
    case ComparisonDirection::kLt: *direction = ComparisonDirection::kGt; break;
    case ComparisonDirection::kLe: *direction = ComparisonDirection::kGe; break;
    case ComparisonDirection::kGt: *direction = ComparisonDirection::kLt; break;
    case ComparisonDirection::kGe: *direction = ComparisonDirection::kLe; break;
    default: break;
  }
}

x86::KReg KernelLowering::CompareToK(int id) {
  const KOp& op = program_.ops[id];
  x86::KReg k = cc_.newKq();
  ComparisonDirection direction = op.direction;
  int a = op.a;
  int b = op.b;
  MemSourceSecond(&a, &b, &direction);
  if (op.comparison == ComparisonType::kFloat) {
    const int predicate = AvxFloatPredicate(direction);
    const bool f64 = op.operand_type == ElementType::kF64;
    cc_.emit(Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd), k, VecReg(a), VecSource(b),
             imm(predicate));
    return k;
  }
  // vpcmp predicates: EQ 0, LT 1, LE 2, NE 4, NLT 5, NLE 6.
  int predicate = 0;
  switch (direction) {
    case ComparisonDirection::kEq: predicate = 0; break;
    case ComparisonDirection::kLt: predicate = 1; break;
    case ComparisonDirection::kLe: predicate = 2; break;
    case ComparisonDirection::kNe: predicate = 4; break;
    case ComparisonDirection::kGe: predicate = 5; break;
    case ComparisonDirection::kGt: predicate = 6; break;
  }
  const bool is_signed = op.comparison == ComparisonType::kSigned;
  // Lanes of the program's width (pred operands: lane masks, compared
  // unsigned, all ones above zero).
  const bool wide = lane_bits_ == 64;
  const uint32_t id32 = is_signed ? Inst::kIdVpcmpd : Inst::kIdVpcmpud;
  const uint32_t id64 = is_signed ? Inst::kIdVpcmpq : Inst::kIdVpcmpuq;
  cc_.emit(wide ? id64 : id32, k, vals_[a].vec, vals_[b].vec, imm(predicate));
  return k;
}

absl::Status KernelLowering::EmitVectorValueOp(int id) {
  const KOp& op = program_.ops[id];
  const bool f64 = vector_type_ == ElementType::kF64;
  const bool avx = features_.avx2;
  const int width = lane_bits_;
  const int w = WidthIndex(width);
  switch (op.kind) {
    case KOpKind::kLoad: {
      // Not 0 or 1 outside tiled loops: positions computed per lane.
      if (tile_level_ < 0 && strides_[op.a] != 0 && strides_[op.a] != 1) {
        return EmitLaneGather(id);
      }
      if (MaskedGuardedLoad(id)) return EmitMaskedGuardedLoad(id);
      const bool uniform = strides_[op.a] == 0;
      if (!uniform && strides_[op.a] != 1) return EmitGather(id);  // Tiled loops.
      if (IsHalf(op.type)) {  // Widened into f32 lanes (x64_half.cc).
        SetVec(id, VecLoad16(id));
        return absl::OkStatus();
      }
      if (op.type == ElementType::kPred) {
        if (uniform) {
          ScalarLoad(id);  // 0 or 1 in a general register.
          SetVec(id, BroadcastLane0(PredToMask(vals_[id].gp), width));
          return absl::OkStatus();
        }
        const x86::Mem m = Address(static_cast<int>(op.imm), op.a, 1);
        const int lanes = VecBytes() * 8 / width;
        x86::Vec wide = NewVec();
        switch (width) {
          case 8:
            V2(Inst::kIdMovdqu, Inst::kIdVmovdqu, wide, x86::Mem(m).cloneResized(lanes));
            break;
          case 16:
            V2(Inst::kIdPmovzxbw, Inst::kIdVpmovzxbw, wide, x86::Mem(m).cloneResized(lanes));
            break;
          case 32:
            V2(Inst::kIdPmovzxbd, Inst::kIdVpmovzxbd, wide, x86::Mem(m).cloneResized(lanes));
            break;
          default:
            V2(Inst::kIdPmovzxbq, Inst::kIdVpmovzxbq, wide, x86::Mem(m).cloneResized(lanes));
            break;
        }
        // mask = (byte != 0) = not (lane == 0).
        x86::Vec is_zero = IntOp(kPcmpeq.sse[w], kPcmpeq.avx[w], wide, Zero());
        SetVec(id, IntOp(Inst::kIdPxor, Inst::kIdVpxor, is_zero, AllOnes()));
        return absl::OkStatus();
      }
      const int bytes = width / 8;
      const x86::Mem m = Address(static_cast<int>(op.imm), op.a, bytes);
      x86::Vec v = NewVec();
      if (uniform) {
        if (avx) {
          switch (width) {
            case 8: cc_.vpbroadcastb(v, x86::Mem(m).cloneResized(1)); break;
            case 16: cc_.vpbroadcastw(v, x86::Mem(m).cloneResized(2)); break;
            case 32: cc_.vbroadcastss(v, x86::Mem(m).cloneResized(4)); break;
            default: cc_.vbroadcastsd(v, x86::Mem(m).cloneResized(8)); break;
          }
        } else if (width == 64) {
          cc_.movddup(v.xmm(), x86::Mem(m).cloneResized(8));
        } else if (width == 32) {
          cc_.movss(v.xmm(), x86::Mem(m).cloneResized(4));
          cc_.shufps(v.xmm(), v.xmm(), 0);
        } else {
          x86::Gp g = NewGp();
          cc_.movzx(g.r32(), x86::Mem(m).cloneResized(bytes));
          v = BroadcastGp(g, width);
        }
      } else {
        V2(Inst::kIdMovups, Inst::kIdVmovups, v, x86::Mem(m).cloneResized(VecBytes()));
      }
      SetVec(id, v);
      return absl::OkStatus();
    }
    case KOpKind::kStore: {
      if (strides_[op.a] != 1) return EmitScatter(id);  // Tiled loops.
      const x86::Vec value = vals_[op.b].vec;
      if (IsHalf(op.operand_type)) {  // Narrowed from f32 lanes (x64_half.cc).
        VecStore16(id);
        return absl::OkStatus();
      }
      if (op.operand_type != ElementType::kPred) {
        const int bytes = width / 8;
        const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, bytes);
        uint32_t move = avx ? Inst::kIdVmovups : Inst::kIdMovups;
        if (streaming_ && stream_store_[id] && (width == 32 || width == 64)) {
          // The row's main loop with its output aligned (PlanRowStreaming).
          move = avx ? (width == 64 ? Inst::kIdVmovntpd : Inst::kIdVmovntps)
                     : (width == 64 ? Inst::kIdMovntpd : Inst::kIdMovntps);
          streamed_ = true;
        }
        cc_.emit(move, x86::Mem(m).cloneResized(VecBytes()), value);
        return absl::OkStatus();
      }
      // Lane masks to bytes 0/1.
      const x86::Mem m = Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, 1);
      if (value.isZmm()) {
        // 0/1 per lane, truncated to bytes (16 or 8 of them).
        x86::Vec bits = NewVec();
        if (width == 32) {
          cc_.vpsrld(bits, value, 31);
          cc_.vpmovdb(x86::Mem(m).cloneResized(16), bits);
        } else {
          cc_.vpsrlq(bits, value, 63);
          cc_.vpmovqb(x86::Mem(m).cloneResized(8), bits);
        }
        return absl::OkStatus();
      }
      if (width == 8) {
        x86::Vec bytes = IntOp(Inst::kIdPand, Inst::kIdVpand, value, IntConst(8, 1));
        cc_.emit(avx ? Inst::kIdVmovdqu : Inst::kIdMovdqu, x86::Mem(m).cloneResized(avx ? 32 : 16),
                 bytes);
        return absl::OkStatus();
      }
      if (width == 16) {
        x86::Vec bits = NewVec();
        ShiftImm(Inst::kIdPsrlw, Inst::kIdVpsrlw, bits, value, 15);
        x86::Xmm low = cc_.newXmm();
        if (avx) {
          x86::Xmm high = cc_.newXmm();
          cc_.vextracti128(high, bits.ymm(), 1);
          cc_.vpackuswb(low, bits.xmm(), high);
          cc_.vmovdqu(x86::Mem(m).cloneResized(16), low);
        } else {
          cc_.movdqa(low, bits.xmm());
          cc_.packuswb(low, low);
          cc_.movq(x86::Mem(m).cloneResized(8), low);
        }
        return absl::OkStatus();
      }
      const bool wide = width == 64;
      x86::Vec bits = NewVec();
      if (avx) {
        cc_.emit(Pick(wide, Inst::kIdVpsrld, Inst::kIdVpsrlq), bits, value, imm(wide ? 63 : 31));
      } else {
        cc_.emit(Inst::kIdMovaps, bits, value);
        cc_.emit(Pick(wide, Inst::kIdPsrld, Inst::kIdPsrlq), bits, imm(wide ? 63 : 31));
      }
      x86::Xmm low = cc_.newXmm();
      if (avx) {
        x86::Xmm high = cc_.newXmm();
        cc_.vextracti128(high, bits.ymm(), 1);
        if (wide) {
          cc_.vshufps(low, bits.xmm(), high, 0x88);  // qword lanes -> dwords 0..3
        } else {
          cc_.vpackusdw(low, bits.xmm(), high);  // dwords -> 8 words
        }
        if (wide) cc_.vpackusdw(low, low, low);
        cc_.vpackuswb(low, low, low);
        if (wide) {
          cc_.vmovd(x86::Mem(m).cloneResized(4), low);
        } else {
          cc_.vmovq(x86::Mem(m).cloneResized(8), low);
        }
      } else {
        if (wide) {
          cc_.pshufd(low, bits.xmm(), 0x08);  // qword lanes 0, 1 -> dwords 0, 1
        } else {
          cc_.movaps(low, bits.xmm());
        }
        cc_.packusdw(low, low);
        cc_.packuswb(low, low);
        if (wide) {
          x86::Gp two = NewGp();
          cc_.movd(two.r32(), low);
          cc_.mov(x86::Mem(m).cloneResized(2), two.r16());
        } else {
          cc_.movd(x86::Mem(m).cloneResized(4), low);
        }
      }
      return absl::OkStatus();
    }
    case KOpKind::kFromIndex: {
      if (tile_level_ < 0 && !strides_[op.a].has_value()) {  // Computed per lane.
        SetVec(id, LaneIndexValue(id));
        return absl::OkStatus();
      }
      // The index is the same in every lane (or moves by a constant): the
      // scalar conversion, broadcast, plus the lane offsets. With zmm, the
      // scalar code runs in scalar mode (xmm), as it does in the tail.
      if (zmm_) mode_ = Mode::kScalar;
      const absl::Status scalar_status = EmitScalarValueOp(id);
      mode_ = Mode::kVector;
      XJIT_RETURN_IF_ERROR(scalar_status);
      const Val scalar = vals_[id];
      x86::Vec v;
      if (op.type == ElementType::kPred) {
        v = BroadcastLane0(PredToMask(scalar.gp), width);
      } else if (scalar.in_vec) {
        v = BroadcastLane0(scalar.vec, width);
      } else {
        v = BroadcastGp(scalar.gp, width);
      }
      const std::optional<int64_t> step = strides_[op.a];
      if (step && *step != 0) {
        uint8_t data[64] = {};
        const int bytes = width / 8;
        for (int lane = 0; lane * bytes < 64; ++lane) {
          const uint64_t offset = static_cast<uint64_t>(*step) * static_cast<uint64_t>(lane);
          std::memcpy(data + lane * bytes, &offset, bytes);
        }
        x86::Vec offsets = NewVec();
        V2(Inst::kIdMovdqu, Inst::kIdVmovdqu, offsets,
           cc_.newConst(ConstPoolScope::kLocal, data, offsets.size()));
        v = IntOp(kPadd.sse[w], kPadd.avx[w], v, offsets);
      }
      SetVec(id, v);
      return absl::OkStatus();
    }
    case KOpKind::kConst:
    case KOpKind::kFma:
    case KOpKind::kBits:
    case KOpKind::kBitShift:
    case KOpKind::kScale:
      return EmitFloatPrimitive(id);
    case KOpKind::kUnary: {
      if (op.type == ElementType::kPred) {  // not: flip every bit of the mask.
        SetVec(id, IntOp(Inst::kIdPxor, Inst::kIdVpxor, vals_[op.a].vec, AllOnes()));
        return absl::OkStatus();
      }
      if (IsInteger(op.type)) return EmitIntVectorOp(id);
      x86::Vec r;
      XJIT_RETURN_IF_ERROR(FloatUnary(op.opcode, f64, vals_[op.a].vec, &r));
      // f16/bf16: computed in f32, rounded to the type (abs and negate are
      // exact), as the scalar code.
      const bool exact = op.opcode == Opcode::kAbs || op.opcode == Opcode::kNegate;
      if (IsHalf(op.type) && !exact) r = VecQuantize(r, op.type);
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
      if (IsInteger(op.type)) return EmitIntVectorOp(id);
      // f16/bf16: computed in f32, rounded to the type (maximum and minimum
      // are exact), as the scalar code.
      const bool quantize = IsHalf(op.type) && op.opcode != Opcode::kMaximum &&
                            op.opcode != Opcode::kMinimum;
      if (IsMemSource(op.a) || IsMemSource(op.b)) {
        // A constant operand read from memory (AVX: add/subtract/multiply/
        // divide, see PlanVectorLoop).
        int a = op.a;
        int b = op.b;
        const bool commutative = op.opcode == Opcode::kAdd || op.opcode == Opcode::kMultiply;
        if (commutative && IsMemSource(a) && !IsMemSource(b)) std::swap(a, b);
        x86::Vec r;
        const x86::Vec a_reg = VecReg(a);
        if (IsMemSource(b)) {
          XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, a_reg, x86::Vec(), &r, VecSource(b)));
        } else {
          XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, a_reg, vals_[b].vec, &r));
        }
        SetVec(id, quantize ? VecQuantize(r, op.type) : r);
        return absl::OkStatus();
      }
      x86::Vec r;
      XJIT_RETURN_IF_ERROR(FloatBinary(op.opcode, f64, vals_[op.a].vec, vals_[op.b].vec, &r));
      SetVec(id, quantize ? VecQuantize(r, op.type) : r);
      return absl::OkStatus();
    }
    case KOpKind::kCompare:
      if (zmm_) {
        const x86::KReg k = CompareToK(id);
        if (mask_in_k_[id]) {
          vals_[id] = Val();
          vals_[id].in_vec = true;
          vals_[id].k = k;
        } else {
          x86::Vec d = NewVec();
          cc_.emit(width == 32 ? Inst::kIdVpmovm2d : Inst::kIdVpmovm2q, d, k);
          SetVec(id, d);
        }
        return absl::OkStatus();
      }
      if (op.comparison == ComparisonType::kFloat && (IsMemSource(op.a) || IsMemSource(op.b))) {
        // AVX: VEX predicates for every direction (no operand swap), so a
        // constant is the memory operand on either side.
        ComparisonDirection direction = op.direction;
        int a = op.a;
        int b = op.b;
        MemSourceSecond(&a, &b, &direction);
        const int predicate = AvxFloatPredicate(direction);
        x86::Vec d = NewVec();
        const uint32_t compare = Pick(f64, Inst::kIdVcmpps, Inst::kIdVcmppd);
        V3i(compare, compare, d, VecReg(a), VecSource(b), predicate);
        SetVec(id, d);
        return absl::OkStatus();
      }
      if (op.comparison == ComparisonType::kFloat) {
        SetVec(id, FloatCompareMask(op.direction, f64, vals_[op.a].vec, vals_[op.b].vec));
      } else {
        SetVec(id, IntCompareMask(op.direction, op.comparison == ComparisonType::kSigned, width,
                                  vals_[op.a].vec, vals_[op.b].vec));
      }
      return absl::OkStatus();
    case KOpKind::kSelect:
      if (zmm_ && mask_in_k_[op.a]) {
        // d = c, then b where the compare holds: a merge-masked move (not
        // vblendmps, whose masked form asmjit takes to read d).
        x86::Vec d = Copy(vals_[op.c].vec);
        cc_.k(vals_[op.a].k).emit(width == 32 ? Inst::kIdVmovaps : Inst::kIdVmovapd, d,
                                  vals_[op.b].vec);
        SetVec(id, d);
        return absl::OkStatus();
      }
      if (op.type == ElementType::kF32 || op.type == ElementType::kF64 || IsHalf(op.type)) {
        SetVec(id, Blend(f64, vals_[op.c].vec, vals_[op.b].vec, vals_[op.a].vec));
      } else {
        SetVec(id, ByteBlend(vals_[op.c].vec, vals_[op.b].vec, vals_[op.a].vec));
      }
      return absl::OkStatus();
    case KOpKind::kClamp:
      if (IsInteger(op.type)) return EmitIntVectorOp(id);
      SetVec(id, FloatMaxMin(false, f64, vals_[op.c].vec,
                             FloatMaxMin(true, f64, vals_[op.a].vec, vals_[op.b].vec)));
      return absl::OkStatus();
    case KOpKind::kBitcast:
      SetVec(id, vals_[op.a].vec);
      return absl::OkStatus();
    case KOpKind::kConvert: {
      const ElementType from = op.operand_type;
      const ElementType to = op.type;
      const x86::Vec x = vals_[op.a].vec;
      if (from == to || (IsInteger(from) && IsInteger(to)) ||
          (IsHalf(from) && to == ElementType::kF32)) {
        // Same width: the bits are kept (wrapping); f16/bf16 lanes already
        // hold the f32 value.
        SetVec(id, x);
      } else if (IsHalf(to) && !IsPred(from)) {
        // From f32, or the other 16-bit float (exact in f32): one rounding.
        SetVec(id, VecQuantize(x, to));
      } else if (IsPred(to)) {
        // x != 0 (NaN: true).
        x86::Vec is_zero;
        if (from == ElementType::kF32 || from == ElementType::kF64 || IsHalf(from)) {
          SetVec(id, FloatCompareMask(ComparisonDirection::kNe, f64, x, Zero()));
          return absl::OkStatus();
        }
        is_zero = IntOp(kPcmpeq.sse[w], kPcmpeq.avx[w], x, Zero());
        SetVec(id, IntOp(Inst::kIdPxor, Inst::kIdVpxor, is_zero, AllOnes()));
      } else if (IsPred(from)) {
        // The mask selects the bits of one.
        const uint64_t one = to == ElementType::kF32 || IsHalf(to) ? OneBits(false)
                             : to == ElementType::kF64 ? OneBits(true) : 1;
        SetVec(id, IntOp(Inst::kIdPand, Inst::kIdVpand, x, IntConst(width, one)));
      } else if (to == ElementType::kF32) {  // From s32: exact or rounded to nearest even.
        x86::Vec d = NewVec();
        V2(Inst::kIdCvtdq2ps, Inst::kIdVcvtdq2ps, d, x);
        SetVec(id, d);
      } else {
        // f32 -> s32: truncation; cvttps2dq gives INT_MIN for NaN and out
        // of range, which is right only below -2^31: >= 2^31 saturates to
        // INT_MAX and NaN gives 0.
        x86::Vec t = NewVec();
        V2(Inst::kIdCvttps2dq, Inst::kIdVcvttps2dq, t, x);
        x86::Vec big = NewVec();
        V3i(Inst::kIdCmpps, Inst::kIdVcmpps, big, Const(false, 0x4F000000u), x, kCmpLe);
        x86::Vec saturated = IntOp(Inst::kIdPxor, Inst::kIdVpxor, t, big);  // INT_MIN -> MAX
        x86::Vec ordered = NewVec();
        V3i(Inst::kIdCmpps, Inst::kIdVcmpps, ordered, x, x, kCmpEq);
        SetVec(id, IntOp(Inst::kIdPand, Inst::kIdVpand, saturated, ordered));
      }
      return absl::OkStatus();
    }
    default:
      return absl::UnimplementedError("x86-64: operation has no vector code");
  }
}

}  // namespace xjit::jit::x64
