// KernelLowering: loads whose position is not affine along the vector loop
// (a broadcast along a merged minor dimension reads position m / 2), as
// gathers at positions computed lane by lane in dword vectors
// (jit/kernel/lane_positions.h says which index operations can be); pred
// loads there as bytes gathered within their aligned dwords, and indices
// converted to 32-bit integers as the dword positions themselves.
#include <cstdint>
#include <vector>

#include "ir/status_macros.h"
#include "jit/kernel/lane_positions.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.
namespace Inst = x86::Inst;

bool KernelLowering::LaneGatherable(const KOp& op) const {
  if (lane_index_.empty() || tile_level_ >= 0 || !features_.avx2) return false;
  if (op.a < 0 || !lane_index_[op.a]) return false;
  const int bits = BitWidth(op.type);
  // The positions themselves as 32-bit integers (an iota along merged
  // dimensions: m % 5 of a merged [n, 5]).
  if (op.kind == KOpKind::kFromIndex) return IsInteger(op.type) && bits == 32;
  if (op.kind != KOpKind::kLoad) return false;
  // A pred byte within its aligned dword; 32-bit lanes only (VectorizableOps).
  if (op.type == ElementType::kPred) return true;
  const bool lane_type =
      IsInteger(op.type) || op.type == ElementType::kF32 || op.type == ElementType::kF64;
  return lane_type && (bits == 32 || bits == 64);
}

x86::Vec KernelLowering::LaneIndices(int id) {
  if (auto it = lane_indices_.find(id); it != lane_indices_.end()) return it->second;
  const x86::Vec d = ComputeLaneIndices(id);
  lane_indices_[id] = d;
  return d;
}

x86::Vec KernelLowering::ComputeLaneIndices(int id) {
  const KOp& op = program_.ops[id];
  // One dword per lane: 4, 8 or 16 of them.
  const int bytes = lanes_ * 4;
  const bool zmm = bytes == 64;
  auto new_vec = [&]() -> x86::Vec {
    return zmm ? x86::Vec(cc_.newZmm()) : bytes == 32 ? x86::Vec(cc_.newYmm())
                                                      : x86::Vec(cc_.newXmm());
  };
  auto lane_constant = [&](auto value_of_lane) {
    std::vector<int32_t> values(static_cast<size_t>(lanes_));
    for (int k = 0; k < lanes_; ++k) values[k] = static_cast<int32_t>(value_of_lane(k));
    x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, values.data(), values.size() * 4);
    return m.cloneResized(static_cast<uint32_t>(bytes));
  };
  x86::Vec d = new_vec();
  if (strides_[id].has_value()) {
    // Lane k = lane 0 (the scalar value) + k strides.
    const x86::Gp scalar = vals_[id].gp.r32();
    if (zmm) {
      cc_.vpbroadcastd(d, scalar);
    } else {
      x86::Xmm low = cc_.newXmm();
      cc_.vmovd(low, scalar);
      cc_.vpbroadcastd(d, low);
    }
    const int64_t stride = *strides_[id];
    if (stride != 0) cc_.vpaddd(d, d, lane_constant([&](int k) { return k * stride; }));
    return d;
  }
  const x86::Vec a = LaneIndices(op.a);
  const bool power_of_two = op.imm > 0 && (op.imm & (op.imm - 1)) == 0;
  if ((op.kind == KOpKind::kIDiv || op.kind == KOpKind::kIRem) && !power_of_two) {
    // a in [0, 2^31), d < 2^31 (LaneIndexOps): the quotient by a
    // multiply-high (LaneDivisor). vpmuludq multiplies the even dwords into
    // qwords; the odd ones are shifted down first. Each quotient lands in
    // the low dword of its qword, whose high dword the shift clears, so
    // the odd quotients moved up combine with an or.
    const LaneDivisor div = LaneDivisorFor(op.imm);
    const x86::Mem multiplier = lane_constant([&](int) { return div.multiplier; });
    x86::Vec even = new_vec(), odd = new_vec();
    cc_.vpmuludq(even, a, multiplier);
    cc_.vpsrlq(even, even, div.shift);
    cc_.vpsrlq(odd, a, 32);
    cc_.vpmuludq(odd, odd, multiplier);
    cc_.vpsrlq(odd, odd, div.shift);
    cc_.vpsllq(odd, odd, 32);
    if (zmm) {
      cc_.vpord(d, even, odd);
    } else {
      cc_.vpor(d, even, odd);
    }
    if (op.kind == KOpKind::kIRem) {  // a - (a / d) * d
      x86::Vec product = new_vec();
      cc_.vpmulld(product, d, lane_constant([&](int) { return op.imm; }));
      x86::Vec r = new_vec();
      cc_.vpsubd(r, a, product);
      return r;
    }
    return d;
  }
  switch (op.kind) {
    case KOpKind::kIDiv:  // a >= 0, a power of two (LaneIndexOps).
      cc_.vpsrld(d, a, __builtin_ctzll(static_cast<uint64_t>(op.imm)));
      return d;
    case KOpKind::kIRem:
      if (zmm) {
        cc_.vpandd(d, a, lane_constant([&](int) { return op.imm - 1; }));
      } else {
        cc_.vpand(d, a, lane_constant([&](int) { return op.imm - 1; }));
      }
      return d;
    default:
      break;
  }
  const x86::Vec b = LaneIndices(op.b);
  switch (op.kind) {
    case KOpKind::kIAdd: cc_.vpaddd(d, a, b); break;
    case KOpKind::kISub: cc_.vpsubd(d, a, b); break;
    case KOpKind::kIMul: cc_.vpmulld(d, a, b); break;
    case KOpKind::kIMin: cc_.vpminsd(d, a, b); break;
    case KOpKind::kIMax: cc_.vpmaxsd(d, a, b); break;
    default: XJIT_CHECK(false);  // LaneIndexOps accepts no other.
  }
  return d;
}

absl::Status KernelLowering::EmitLaneGather(int id) {
  const KOp& op = program_.ops[id];
  if (!LaneGatherable(op)) {
    return absl::InternalError("a load with no vector form reached vector code");
  }
  if (op.type == ElementType::kPred) return EmitLanePredGather(id);
  const bool wide = BitWidth(op.type) == 64;
  const x86::Vec indices = LaneIndices(op.a);
  SetVec(id, GatherAll(x86::ptr(buffers_[op.imm], indices, wide ? 3 : 2), wide));
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitLanePredGather(int id) {
  const KOp& op = program_.ops[id];
  if (lane_bits_ != 32) return absl::InternalError("a pred gather into lanes but 32-bit ones");
  // There is no byte gather: each lane gathers the 4-byte-aligned dword
  // holding its byte and shifts the byte down. An aligned dword never
  // crosses a page, so the bytes read past the buffer's end (at most 3)
  // lie in the page of a byte the scalar code reads: no fault, and the
  // extra bytes are masked off. Alignment is of the address, so the
  // buffer's own offset from 4 is added to every position first.
  const x86::Gp base = buffers_[op.imm];
  x86::Gp aligned_base = NewGp(), misalignment = NewGp();
  cc_.mov(aligned_base, base);
  cc_.and_(aligned_base, -4);
  cc_.mov(misalignment, base);
  cc_.and_(misalignment, 3);
  const x86::Vec indices = LaneIndices(op.a);
  x86::Vec offset = NewVec();
  if (zmm_) {
    cc_.vpbroadcastd(offset, misalignment.r32());
  } else {
    x86::Xmm low = cc_.newXmm();
    cc_.vmovd(low, misalignment.r32());
    cc_.vpbroadcastd(offset, low);
  }
  x86::Vec address = NewVec(), dword = NewVec(), shift = NewVec();
  cc_.vpaddd(address, indices, offset);
  const int32_t low_bits[1] = {3};
  const x86::Mem three = cc_.newConst(ConstPoolScope::kLocal, low_bits, 4);
  x86::Vec threes = NewVec();
  cc_.vpbroadcastd(threes, three);
  if (zmm_) {
    cc_.vpandd(shift, address, threes);
    cc_.vpandnd(dword, threes, address);
  } else {
    cc_.vpand(shift, address, threes);
    cc_.vpandn(dword, threes, address);
  }
  cc_.vpslld(shift, shift, 3);
  const x86::Vec gathered = GatherAll(x86::ptr(aligned_base, dword, 0), /*wide=*/false);
  x86::Vec byte = NewVec();
  cc_.vpsrlvd(byte, gathered, shift);
  const int32_t byte_mask[1] = {0xff};
  x86::Vec ff = NewVec();
  cc_.vpbroadcastd(ff, cc_.newConst(ConstPoolScope::kLocal, byte_mask, 4));
  if (zmm_) {
    cc_.vpandd(byte, byte, ff);
  } else {
    cc_.vpand(byte, byte, ff);
  }
  // mask = (byte != 0) = not (lane == 0), as a consecutive pred load.
  x86::Vec is_zero = IntOp(Inst::kIdPcmpeqd, Inst::kIdVpcmpeqd, byte, Zero());
  SetVec(id, IntOp(Inst::kIdPxor, Inst::kIdVpxor, is_zero, AllOnes()));
  return absl::OkStatus();
}

x86::Vec KernelLowering::LaneIndexValue(int id) {
  const KOp& op = program_.ops[id];
  // The dword positions are the 32-bit integer values (LaneGatherable).
  const x86::Vec positions = LaneIndices(op.a);
  x86::Vec v = NewVec();
  if (zmm_) {
    cc_.vmovdqa32(v, positions);
  } else {
    cc_.vmovdqa(v, positions);
  }
  return v;
}

}  // namespace xjit::jit::x64
