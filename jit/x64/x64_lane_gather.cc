// KernelLowering: loads whose position is not affine along the vector loop
// (a broadcast along a merged minor dimension reads position m / 2), as
// gathers at positions computed lane by lane in dword vectors
// (jit/kernel/lane_positions.h says which index operations can be).
#include <cstdint>
#include <vector>

#include "ir/status_macros.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.

bool KernelLowering::LaneGatherable(const KOp& op) const {
  if (lane_index_.empty() || tile_level_ >= 0 || !features_.avx2) return false;
  if (op.kind != KOpKind::kLoad || !lane_index_[op.a]) return false;
  const int bits = BitWidth(op.type);
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
  const bool wide = BitWidth(op.type) == 64;
  const x86::Vec indices = LaneIndices(op.a);
  SetVec(id, GatherAll(x86::ptr(buffers_[op.imm], indices, wide ? 3 : 2), wide));
  return absl::OkStatus();
}

}  // namespace xjit::jit::x64
