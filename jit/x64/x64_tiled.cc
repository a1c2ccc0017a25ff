// KernelLowering: tiled loops for kernels whose operands or outputs disagree
// in layout (a transpose inside a loop fusion), with gathers and scatters for
// their strided accesses (see "Tiled loops" in x64_lowering.h), or lane by
// lane moves where the instruction set has no gather (SSE4.1) or scatter
// (SSE4.1, AVX2).
//
// Why: such a kernel iterates in its first output's physical order, so an
// access laid out the other way jumps a whole row per step of the innermost
// loop. Over f32[1024,1024] that is 4 KiB per step: each element costs a
// cache miss and, after 64 rows, a TLB miss (mlp_train's weight-gradient
// kernels ran at ~25 ns per element, docs/models.md). Running T iterations
// of the next loop out for each inner step, T chosen so that T consecutive
// elements fill a cache line, makes every line the strided access touches
// used whole while it is in L1; the contiguous accesses then write or read T
// lines in parallel, which L1 holds as easily.
#include <cstring>
#include <vector>

#include "ir/status_macros.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.
namespace Inst = x86::Inst;

namespace {

constexpr int64_t kCacheLineBytes = 64;

// The element width of a load's value or a store's operand, in bytes (0 for
// pred, which vector code moves as lane masks, and for sub-byte types).
bool IsHalf(ElementType type) { return type == ElementType::kF16 || type == ElementType::kBF16; }

int64_t AccessBytes(const KOp& op) {
  const ElementType type = op.kind == KOpKind::kStore ? op.operand_type : op.type;
  if (type == ElementType::kPred) return 0;
  return ByteWidth(type);
}

}  // namespace

void KernelLowering::PlanTiling() {
  tile_level_ = -1;
  tile_rows_ = 1;
  const int loops = static_cast<int>(program_.loop_extents.size());
  // Skips jump to the end of an iteration of the plain loops (skip_to_).
  if (program_.reduction_loops > 0 || loops < 2 || program_.claims_range || skips_) return;
  const int outer = loops - 2;
  if (program_.loop_extents[outer] < 2 || program_.loop_extents[outer + 1] < 2) return;
  const std::vector<std::optional<int64_t>> inner_strides = InnerStrides(program_);
  const std::vector<std::optional<int64_t>> outer_strides = StridesAlong(program_, outer);
  // The widest element among the accesses that tiling helps sets T, so that
  // T of them fill a line (narrower ones then use part of theirs).
  int64_t widest = 0;
  for (const KOp& op : program_.ops) {
    if (op.kind != KOpKind::kLoad && op.kind != KOpKind::kStore) continue;
    const int64_t bytes = AccessBytes(op);
    const std::optional<int64_t> inner = inner_strides[op.a];
    if (bytes == 0 || !inner.has_value() || outer_strides[op.a] != 1) continue;
    const int64_t jump = *inner < 0 ? -*inner : *inner;
    if (jump * bytes < kCacheLineBytes) continue;
    widest = std::max(widest, bytes);
  }
  if (widest == 0) return;
  tile_level_ = outer;
  tile_rows_ = std::max<int64_t>(kCacheLineBytes / widest, 4);
}

bool KernelLowering::StridedAccessVectorizable(
    const KOp& op, const std::vector<std::optional<int64_t>>& strides) const {
  if (tile_level_ < 0) return false;
  if (op.kind != KOpKind::kLoad && op.kind != KOpKind::kStore) return false;
  const std::optional<int64_t> stride = strides[op.a];
  if (!stride.has_value() || *stride == 0) return false;
  const int64_t bytes = AccessBytes(op);
  const int64_t jump = *stride < 0 ? -*stride : *stride;
  // f16/bf16 loads: 16-bit words lane by lane (k < 16) at k * stride * 2.
  if (bytes == 2) {
    return op.kind == KOpKind::kLoad && IsHalf(op.type) &&
           jump <= ((int64_t{1} << 31) - 1) / (15 * bytes);
  }
  if (bytes != 4 && bytes != 8) return false;
  // Gathers and scatters take the lane offsets k * stride (k < 16) as dword
  // indices; the lane-by-lane forms (UsesLaneMoves) address lane k (k < 8)
  // at the displacement k * stride * bytes.
  if (UsesLaneMoves(op)) return jump <= ((int64_t{1} << 31) - 1) / (7 * bytes);
  return jump <= (int64_t{1} << 31) / 16 - 1;
}

bool KernelLowering::ColumnScatterable(const KOp& op,
                                       const std::vector<std::optional<int64_t>>& strides) const {
  // lane_index_ is set only while the column strategy with gathers is
  // planned or chosen in a reduction (PlanColumnGathers).
  if (lane_index_.empty() || program_.reduction_loops == 0 || op.kind != KOpKind::kStore) {
    return false;
  }
  if (op.operand_type == ElementType::kPred || IsHalf(op.operand_type)) return false;
  const std::optional<int64_t> stride = strides[op.a];
  if (!stride.has_value() || *stride == 0) return false;
  const int64_t bytes = AccessBytes(op);
  const int64_t jump = *stride < 0 ? -*stride : *stride;
  if (bytes != 4 && bytes != 8) return false;
  // As StridedAccessVectorizable: lane k at k * stride (k < 16) as dword
  // indices, or (lane moves) at the displacement k * stride * bytes.
  if (UsesLaneMoves(op)) return jump <= ((int64_t{1} << 31) - 1) / (7 * bytes);
  return jump <= (int64_t{1} << 31) / 16 - 1;
}

bool KernelLowering::UsesLaneMoves(const KOp& op) const {
  if (AccessBytes(op) == 2) return true;  // No 16-bit gathers.
  return op.kind == KOpKind::kStore ? !features_.avx512 : !features_.avx2;
}

x86::Vec KernelLowering::StrideOffsets(int64_t stride) {
  auto it = stride_offsets_.find(stride);
  if (it != stride_offsets_.end()) return it->second;
  // Dword indices: as many as the vector has lanes (64-bit lanes take half
  // a vector of them).
  const int index_bytes = lanes_ * 4;
  std::vector<int32_t> offsets(static_cast<size_t>(lanes_));
  for (int k = 0; k < lanes_; ++k) offsets[k] = static_cast<int32_t>(stride * k);
  x86::Mem m = cc_.newConst(ConstPoolScope::kLocal, offsets.data(), offsets.size() * 4);
  x86::Vec v = index_bytes == 64   ? x86::Vec(cc_.newZmm())
               : index_bytes == 32 ? x86::Vec(cc_.newYmm())
                                   : x86::Vec(cc_.newXmm());
  if (v.isZmm()) {
    cc_.vmovdqu32(v, m.cloneResized(64));
  } else {
    cc_.vmovdqu(v, m.cloneResized(static_cast<uint32_t>(index_bytes)));
  }
  stride_offsets_[stride] = v;
  return v;
}

absl::Status KernelLowering::EmitGather(int id) {
  const KOp& op = program_.ops[id];
  if (IsHalf(op.type)) {
    SetVec(id, VecGather16(id));
    return absl::OkStatus();
  }
  const int width = lane_bits_;
  if (width != 32 && width != 64) return absl::InternalError("gather of a lane width but 32/64");
  const int bytes = width / 8;
  const bool wide = width == 64;
  x86::Gp base = NewGp();
  cc_.lea(base, Address(static_cast<int>(op.imm), op.a, bytes));
  if (UsesLaneMoves(op)) {
    // SSE4.1: the lanes one by one, at constant displacements (pure moves:
    // the bits are kept, NaN payloads included).
    const int32_t step = static_cast<int32_t>(*strides_[op.a] * bytes);
    x86::Xmm v = NewVec().xmm();
    if (wide) {
      cc_.movsd(v, x86::ptr(base, 0, 8));
      cc_.movhpd(v, x86::ptr(base, step, 8));
    } else {
      cc_.movss(v, x86::ptr(base, 0, 4));
      for (int k = 1; k < 4; ++k) cc_.insertps(v, x86::ptr(base, k * step, 4), k << 4);
    }
    SetVec(id, v);
    return absl::OkStatus();
  }
  auto it = stride_offsets_.find(*strides_[op.a]);
  if (it == stride_offsets_.end()) return absl::InternalError("gather without its lane offsets");
  SetVec(id, GatherAll(x86::ptr(base, it->second, __builtin_ctz(bytes)), wide));
  return absl::OkStatus();
}

x86::Vec KernelLowering::GatherAll(const x86::Mem& m, bool wide) {
  x86::Vec v = NewVec();
  if (features_.avx512) {
    // Every lane enabled; the gather clears the mask as it goes.
    x86::KReg k = cc_.newKq();
    cc_.kxnorw(k, k, k);
    cc_.vpxord(v, v, v);
    cc_.k(k).emit(wide ? Inst::kIdVgatherdpd : Inst::kIdVgatherdps, v, m);
  } else {
    x86::Vec mask = NewVec();
    cc_.vpcmpeqd(mask, mask, mask);
    cc_.vpxor(v, v, v);
    cc_.emit(wide ? Inst::kIdVgatherdpd : Inst::kIdVgatherdps, v, m, mask);
  }
  return v;
}

absl::Status KernelLowering::EmitScatter(int id) {
  const KOp& op = program_.ops[id];
  const int width = lane_bits_;
  if (width != 32 && width != 64) return absl::InternalError("scatter of a lane width but 32/64");
  const int bytes = width / 8;
  const bool wide = width == 64;
  x86::Gp base = NewGp();
  cc_.lea(base, Address(program_.output_buffer(static_cast<int>(op.imm)), op.a, bytes));
  const x86::Vec value = vals_[op.b].vec;
  if (UsesLaneMoves(op)) {
    // SSE4.1 and AVX2: the lanes one by one, each 128-bit half in turn.
    const int32_t step = static_cast<int32_t>(*strides_[op.a] * bytes);
    const bool avx = features_.avx2;
    std::vector<x86::Xmm> halves = {value.xmm()};
    if (value.isYmm()) {
      x86::Xmm high = cc_.newXmm();
      cc_.vextractf128(high, value.ymm(), 1);
      halves.push_back(high);
    }
    const int per_half = wide ? 2 : 4;
    for (size_t h = 0; h < halves.size(); ++h) {
      for (int j = 0; j < per_half; ++j) {
        const int32_t displacement = static_cast<int32_t>(h * per_half + j) * step;
        const x86::Mem m = x86::ptr(base, displacement, static_cast<uint32_t>(bytes));
        if (wide) {
          if (j == 0) {
            avx ? cc_.vmovlpd(m, halves[h]) : cc_.movlpd(m, halves[h]);
          } else {
            avx ? cc_.vmovhpd(m, halves[h]) : cc_.movhpd(m, halves[h]);
          }
        } else {
          avx ? cc_.vextractps(m, halves[h], j) : cc_.extractps(m, halves[h], j);
        }
      }
    }
    return absl::OkStatus();
  }
  auto it = stride_offsets_.find(*strides_[op.a]);
  if (it == stride_offsets_.end()) return absl::InternalError("scatter without its lane offsets");
  const x86::Mem m = x86::ptr(base, it->second, __builtin_ctz(bytes));
  x86::KReg k = cc_.newKq();
  cc_.kxnorw(k, k, k);
  cc_.k(k).emit(wide ? Inst::kIdVscatterdpd : Inst::kIdVscatterdps, m, value);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitTiledLoops() {
  const int outer = tile_level_;
  const int inner = outer + 1;
  const int64_t inner_extent = program_.loop_extents[inner];
  loop_vars_.resize(program_.loop_extents.size());
  // Before the loops: the gathers' and scatters' lane offsets and the
  // hoisted invariants (PlanVectorLoop keeps positions that depend on the
  // outer loop out of those).
  int64_t vector_end = 0;
  if (vectorize_) {
    vector_end = inner_extent / lanes_ * lanes_;
    mode_ = Mode::kVector;
    for (size_t id = 0; id < program_.ops.size(); ++id) {
      const KOp& op = program_.ops[id];
      if (op.kind != KOpKind::kLoad && op.kind != KOpKind::kStore) continue;
      const std::optional<int64_t> stride = strides_[op.a];
      if (stride.has_value() && *stride != 0 && *stride != 1 && !UsesLaneMoves(op)) {
        StrideOffsets(*stride);
      }
    }
    XJIT_RETURN_IF_ERROR(EmitHoisted());
  }
  // The outer loop's range: the caller's at level 0, else its extent.
  x86::Gp block = cc_.newGpq("block");
  x86::Gp outer_end = cc_.newGpq();
  if (outer == 0) {
    cc_.mov(block, begin_);
    cc_.mov(outer_end, end_);
  } else {
    cc_.xor_(block.r32(), block.r32());
    cc_.mov(outer_end, program_.loop_extents[outer]);
  }
  x86::Gp block_end = cc_.newGpq();
  x86::Gp o = cc_.newGpq("o");
  x86::Gp i = cc_.newGpq("i");
  loop_vars_[outer] = o;
  loop_vars_[inner] = i;
  // One inner step: the block's outer iterations, each with the operations
  // of the outer level (index arithmetic) and of the inner one.
  auto block_rows = [&](Mode mode) -> absl::Status {
    Label head = cc_.newLabel();
    cc_.mov(o, block);
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(outer, Mode::kScalar));
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(inner, mode));
    cc_.inc(o);
    cc_.cmp(o, block_end);
    cc_.jl(head);
    return absl::OkStatus();
  };
  Label block_head = cc_.newLabel();
  cc_.bind(block_head);
  cc_.lea(block_end, x86::ptr(block, static_cast<int32_t>(tile_rows_)));
  cc_.cmp(block_end, outer_end);
  cc_.cmovg(block_end, outer_end);
  cc_.xor_(i.r32(), i.r32());
  if (vector_end > 0) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(block_rows(Mode::kVector));
    cc_.add(i, lanes_);
    cc_.cmp(i, vector_end);
    cc_.jl(head);
  }
  if (vector_end < inner_extent) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(block_rows(Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, inner_extent);
    cc_.jl(head);
  }
  cc_.mov(block, block_end);
  cc_.cmp(block, outer_end);
  cc_.jl(block_head);
  return absl::OkStatus();
}

}  // namespace xjit::jit::x64
