// KernelLowering: function frame, loop nest, index arithmetic, memory
// addressing and the choice between vector and scalar code (see
// x64_lowering.h).
#include "jit/x64/x64_lowering.h"

#include <algorithm>
#include <atomic>
#include <limits>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/kernel/lane_positions.h"
#include "jit/kernel/row_carries.h"
#include "jit/kernel/vector_forms.h"
#include "jit/kernel/vector_math.h"
#include "jit/x64/x64_math_routines.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.
namespace Inst = x86::Inst;

namespace {

// Vector loops of non-reduction programs: bodies per iteration, and how
// many loop-invariant values (constants, broadcasts) are kept in registers
// across the loop (of 16 vector registers, 32 with AVX-512). Unrolling by 2
// or 4 measured no faster than 1 for tanh(a*x+b)*c (out-of-order execution
// already overlaps iterations; jit_benchmark Chain, AVX2), so it is off.
constexpr int kVectorUnroll = 1;
// The output alignment the vector loop of a rank-1 kernel starts at.
constexpr int kAlignBytes = 64;
constexpr int kHoistBudgetAvx = 10;
constexpr int kHoistBudgetSse = 8;
// Of 32 vector registers (AVX-512).
constexpr int kHoistBudgetAvx512 = 20;
// Row programs: at most this many bytes of row scratch for carried values
// (PlanCarries), so that they stay in L1 with the row.
constexpr int64_t kMaxCarryBytes = int64_t{48} << 10;
// Row programs: inputs at least this large are prefetched a row ahead
// (PlanRowPrefetches); smaller ones stay in L2 between rows anyway.
constexpr int64_t kPrefetchMinBytes = int64_t{1} << 20;
// Gather prefetches (PlanGatherPrefetches): how many rows ahead.
constexpr int kGatherPrefetchRows = 16;
// Row programs: outputs at least this large are written with non-temporal
// stores where aligned (PlanRowStreaming): larger than the caches a next
// kernel could read them from (2 MiB of L2 per core, a share of L3).
constexpr int64_t kStreamStoreMinBytes = int64_t{16} << 20;
// StreamAllRowsForTesting: both thresholds 0.
std::atomic<bool> stream_all_rows{false};
int64_t PrefetchMinBytes() { return stream_all_rows.load() ? 0 : kPrefetchMinBytes; }
int64_t StreamStoreMinBytes() { return stream_all_rows.load() ? 0 : kStreamStoreMinBytes; }

}  // namespace

void StreamAllRowsForTesting(bool on) { stream_all_rows.store(on); }

KernelLowering::KernelLowering(x86::Compiler* cc, const KernelProgram& program,
                               const Features& features)
    : cc_(*cc), program_(program), features_(features) {}

x86::Gp KernelLowering::NewGp() { return cc_.newGpq(); }

void KernelLowering::SetGp(int id, x86::Gp g) {
  vals_[id].gp = g;
  vals_[id].in_vec = false;
}

void KernelLowering::SetVec(int id, x86::Vec v) {
  vals_[id].vec = v;
  vals_[id].in_vec = true;
}

x86::Mem KernelLowering::Address(int buffer, int offset_op, int element_bytes) {
  // A constant position is a displacement (see EmitIndexOp).
  if (const std::optional<int32_t> k = IndexImmediate(offset_op)) {
    const int64_t displacement = int64_t{*k} * element_bytes;
    if (displacement >= INT32_MIN && displacement <= INT32_MAX) {
      return x86::ptr(buffers_[buffer], static_cast<int32_t>(displacement));
    }
  }
  uint32_t shift = 0;
  while ((1 << shift) < element_bytes) ++shift;
  return x86::ptr(buffers_[buffer], vals_[offset_op].gp, shift);
}

bool KernelLowering::Vectorizable(ElementType* type, int* lanes) const {
  if (program_.loop_extents.empty() || program_.reduction_loops > 0) return false;
  const std::vector<bool> include(program_.ops.size(), true);
  if (!VectorizableOps(strides_, include, type, lanes)) return false;
  return program_.loop_extents.back() >= *lanes;
}

bool KernelLowering::PlanGuardedLoads() {
  if (program_.loop_extents.empty() || program_.reduction_loops > 0 || tile_level_ >= 0) {
    return false;
  }
  // One body per iteration, so that a fallback redoes exactly one.
  if (kVectorUnroll != 1) return false;
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  const std::vector<std::optional<int64_t>> guarded = GuardedStridesAlong(program_, inner);
  const size_t n = program_.ops.size();
  // Index operations computed from a guard that moves along the loop.
  std::vector<bool> tainted(n, false);
  std::vector<bool> loads(n, false);
  bool any = false;
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (IsIndexOp(op.kind)) {
      tainted[id] = IsGuard(op) && guarded[id] != 0;
      for (int operand : {op.a, op.b, op.c}) {
        tainted[id] = tainted[id] || (operand >= 0 && tainted[operand]);
      }
      continue;
    }
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || !IsIndexOp(program_.ops[operand].kind) || !tainted[operand]) continue;
      // A load's position (checked in bounds before the load), or an index
      // converted to a value (a nested concatenate's lane compare: where a
      // guard binds, its value is not used). A store's position and scalar
      // index values stay scalar.
      if (IsIndexValue(static_cast<int>(id))) return false;
      if (op.kind == KOpKind::kFromIndex && IsInteger(op.type)) continue;
      if (op.kind != KOpKind::kLoad || operand != op.a || guarded[operand] != 1) return false;
      loads[id] = true;
      any = true;
    }
  }
  if (!any) return false;
  strides_ = guarded;
  guarded_load_ = std::move(loads);
  identity_guard_.assign(n, false);
  for (size_t id = 0; id < n; ++id) {
    identity_guard_[id] = IsGuard(program_.ops[id]) && guarded[id] != 0;
  }
  return true;
}

bool KernelLowering::VectorizableOps(const std::vector<std::optional<int64_t>>& strides,
                                     const std::vector<bool>& include, ElementType* type,
                                     int* lanes) const {
  // The forms every target has (jit/kernel/vector_forms.h), plus what depends on
  // the instruction set: FMA (AVX2), per-lane shifts (AVX2, 32/64-bit),
  // out-of-line math routine calls, and f32 <-> s32 conversions. f16 and
  // bf16 values live in f32 lanes (loads widen them, stores narrow them,
  // and each operation with a 16-bit float result rounds to it: see
  // VecQuantize), so they count as f32 here.
  LaneType lane_type(/*widen_16bit_floats=*/true);
  bool any_value = false;
  bool lane_pred_gather = false;  // 32-bit lanes only (EmitLanePredGather).
  auto is_float = [](ElementType t) { return t == ElementType::kF32 || t == ElementType::kF64; };
  auto is_narrow = [](ElementType t) { return t == ElementType::kF16 || t == ElementType::kBF16; };
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    if (!include[i]) continue;
    // An index value is scalar code computed outside the vector loop, so it
    // must not move along it.
    if (IsIndexValue(static_cast<int>(i)) && strides[i] != 0) return false;
    if (ScalarOnly(static_cast<int>(i))) continue;
    any_value = true;
    if (!HasVectorAccess(op, strides) && !StridedAccessVectorizable(op, strides) &&
        !LaneGatherable(op) && !ColumnScatterable(op, strides)) {
      return false;
    }
    lane_pred_gather = lane_pred_gather || (op.kind == KOpKind::kLoad &&
                                            op.type == ElementType::kPred &&
                                            !HasVectorAccess(op, strides));
    switch (op.kind) {
      case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
      case KOpKind::kAccResult: case KOpKind::kLoad: case KOpKind::kSelect:
        if (!lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kFromIndex:  // An index converted to f16/bf16: scalar code.
        if (is_narrow(op.type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kStore:
        if (!lane_type.Add(op.operand_type)) return false;
        break;
      case KOpKind::kConst:
      case KOpKind::kBits:
      case KOpKind::kBitShift:
        if (!is_float(op.type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kFma:
        if (!features_.avx2 || !is_float(op.type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kScale:
        if (!features_.avx512 || !is_float(op.type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kUnary:
        if (op.type == ElementType::kPred && op.operand_type == ElementType::kPred &&
            op.opcode == Opcode::kNot) {
          break;
        }
        if (IsExpandedMathOp(op)) {  // A routine call (f32/f64 only).
          if (is_narrow(op.type) || !lane_type.Add(op.type)) return false;
          break;
        }
        if (op.operand_type != op.type || !lane_type.Add(op.type)) return false;
        if (!HasVectorUnary(LaneComputeType(op.type), op.opcode)) return false;
        break;
      case KOpKind::kBinary:
        if (!lane_type.Add(op.type)) return false;
        if (IsExpandedMathOp(op) && is_float(op.type)) break;  // A routine call.
        if (!HasVectorBinary(LaneComputeType(op.type), op.opcode)) return false;
        if (IsInteger(op.type) && (op.opcode == Opcode::kShiftLeft ||
                                   op.opcode == Opcode::kShiftRightLogical ||
                                   op.opcode == Opcode::kShiftRightArithmetic)) {
          // Per-lane amounts: AVX2's vpsllv/vpsrlv/vpsrav (32/64-bit);
          // one amount for all lanes: psll/psrl/psra with a count.
          if (strides[op.b] != 0 && !(features_.avx2 && BitWidth(op.type) >= 32)) {
            return false;
          }
        }
        break;
      case KOpKind::kCompare: {
        KOp lane_op = op;  // f16/bf16 compare as the f32 values they widen to.
        lane_op.operand_type = LaneComputeType(op.operand_type);
        if (!lane_type.Add(op.operand_type) || !HasVectorCompare(lane_op)) return false;
        break;
      }
      case KOpKind::kClamp:
        if (IsPred(op.type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kConvert: {
        const ElementType from = op.operand_type;
        const ElementType to = op.type;
        if (!lane_type.Add(from) || !lane_type.Add(to)) return false;  // Same lane width.
        // Between integers of one width, pred and anything, f32 <-> s32,
        // among f32/f16/bf16 (widening is exact, narrowing rounds once),
        // f16/bf16 -> s32 (as the f32 they widen to). Not s32 -> f16/bf16:
        // the scalar code rounds to odd at f32 first.
        const bool from_f32 = from == ElementType::kF32 || is_narrow(from);
        const bool ok = from == to || (IsInteger(from) && IsInteger(to)) || IsPred(from) ||
                        IsPred(to) ||
                        (from == ElementType::kS32 && to == ElementType::kF32) ||
                        (from_f32 && to == ElementType::kS32) ||
                        (from_f32 && (to == ElementType::kF32 || is_narrow(to)));
        if (!ok) return false;
        break;
      }
      case KOpKind::kBitcast:
        // f16/bf16 lanes hold f32 values, not their bits.
        if ((is_narrow(op.operand_type) || is_narrow(op.type)) && op.operand_type != op.type) {
          return false;
        }
        if (!lane_type.Add(op.operand_type) || !lane_type.Add(op.type)) return false;
        break;
      case KOpKind::kCall: case KOpKind::kCallArgs: case KOpKind::kCallImag:
        return false;  // A helper call per element: scalar code only.
      default:
        return false;
    }
  }
  if (!any_value) return false;
  const int w = lane_type.width();
  if (lane_pred_gather && w != 32) return false;
  if (zmm_ && !ZmmVectorizable(include, w)) return false;
  const int vector_bytes = zmm_ ? 64 : features_.avx2 ? 32 : 16;
  *type = lane_type.type();
  *lanes = vector_bytes * 8 / w;
  return true;
}

bool KernelLowering::ZmmVectorizable(const std::vector<bool>& include, int width) const {
  if (!features_.avx512 || (width != 32 && width != 64)) return false;
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    if (ScalarOnly(static_cast<int>(i)) || !include[i]) continue;
    switch (op.kind) {
      // With lanes of 32 or 64 bits, every form VectorizableOps accepts of
      // these has zmm code (x64_float.cc: EmitZmm's replacements, the
      // vpternlogd blends, the pred loads and stores through vpmovzx and
      // vpmovdb/vpmovqb).
      case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
      case KOpKind::kAccResult: case KOpKind::kLoad: case KOpKind::kStore:
      case KOpKind::kFromIndex: case KOpKind::kConst: case KOpKind::kBits:
      case KOpKind::kBitShift: case KOpKind::kFma: case KOpKind::kScale: case KOpKind::kUnary:
      case KOpKind::kBinary:
      case KOpKind::kCompare: case KOpKind::kSelect: case KOpKind::kClamp:
      case KOpKind::kConvert: case KOpKind::kBitcast:
        break;
      default:
        return false;
    }
  }
  return true;
}

int KernelLowering::RowCombiner(int write_id) const {
  const KOp& write = program_.ops[write_id];
  const bool is_float = write.type == ElementType::kF32 || write.type == ElementType::kF64;
  // Integer add/multiply wrap and every listed op is associative and
  // commutative: the reassociated integer result is exact.
  const bool is_int = IsInteger(write.type) && BitWidth(write.type) >= 8;
  // f16/bf16: maximum and minimum are exact, so any order gives the scalar
  // result (up to which NaN when there are several, as for f32). Sums and
  // products round to the type after every application of the reducer, in
  // each lane and in every combining step (EmitRowReduction): another
  // order of applying the same rounded reducer, which HLO leaves
  // unspecified (docs/types.md, "Reductions in f16 and bf16").
  const bool is_narrow = write.type == ElementType::kF16 || write.type == ElementType::kBF16;
  if (!is_float && !is_int && !is_narrow) return -1;
  const KOp& update = program_.ops[write.a];
  if (update.kind != KOpKind::kBinary || update.type != write.type) return -1;
  switch (update.opcode) {
    case Opcode::kAdd: case Opcode::kMultiply:
      break;
    case Opcode::kMaximum: case Opcode::kMinimum:
      break;
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      if (!is_int) return -1;
      break;
    default:
      return -1;
  }
  auto is_acc = [&](int id) {
    return program_.ops[id].kind == KOpKind::kAccRead && program_.ops[id].imm == write.imm;
  };
  if (is_acc(update.a) == is_acc(update.b)) return -1;
  return write.a;
}

bool KernelLowering::RowVectorizable(ElementType* type, int* lanes) const {
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  std::vector<bool> include(program_.ops.size(), false);
  // Every accumulator read feeds only its own slot's combining op, and the
  // other operand of that op does not depend on any accumulator.
  const std::vector<int> uses = UseCounts(program_);
  std::vector<bool> reads_acc(program_.ops.size(), false);
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    bool r = op.kind == KOpKind::kAccRead;
    for (int operand : {op.a, op.b, op.c}) r = r || (operand >= 0 && reads_acc[operand]);
    reads_acc[i] = r;
    if (sections_[i] == KSection::kBody) include[i] = true;
  }
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    if (op.kind == KOpKind::kAccRead && uses[i] != 1) return false;
    if (op.kind != KOpKind::kAccWrite) continue;
    const int combiner = RowCombiner(static_cast<int>(i));
    if (combiner < 0 || uses[combiner] != 1) return false;
    const KOp& c = program_.ops[combiner];
    const int x = program_.ops[c.a].kind == KOpKind::kAccRead ? c.b : c.a;
    if (reads_acc[x]) return false;
  }
  if (!VectorizableOps(StridesAlong(program_, inner), include, type, lanes)) return false;
  return program_.loop_extents[inner] >= *lanes;
}

bool KernelLowering::PlanColumnGathers() {
  // After the row strategy, so a row that fills vectors keeps its stride-1
  // loads: only rows shorter than a vector (or a reducer the row strategy
  // cannot reassociate) gather, e.g. a sum over the 2 coordinates of each
  // of 256 particles, reading element 2i + r in lane i.
  const int level = program_.output_loops() - 1;
  strides_ = StridesAlong(program_, level);
  lane_index_ = LaneIndexOps(program_, strides_);
  bool gathers = false;
  for (const KOp& op : program_.ops) {
    gathers = gathers || ((op.kind == KOpKind::kLoad || op.kind == KOpKind::kStore) &&
                         strides_[op.a] != 0 && strides_[op.a] != 1);
  }
  if (gathers && features_.avx2) {
    auto fits = [&] { return ColumnVectorizable(&vector_type_, &lanes_); };
    if (features_.avx512) {
      zmm_ = true;
      if (fits()) return true;
    }
    zmm_ = false;
    if (fits()) return true;
  }
  lane_index_.clear();
  strides_ = InnerStrides(program_);
  return false;
}

bool KernelLowering::ColumnVectorizable(ElementType* type, int* lanes) const {
  const int level = program_.output_loops() - 1;
  const std::vector<bool> include(program_.ops.size(), true);
  if (!VectorizableOps(StridesAlong(program_, level), include, type, lanes)) return false;
  return program_.loop_extents[level] >= *lanes;
}

absl::Status KernelLowering::Emit(int* lanes) {
  FuncNode* func =
      cc_.addFunc(FuncSignatureT<void, void* const*, int64_t, int64_t>(CallConvId::kHost));
  // Null when asmjit could not allocate the node (its arena is exhausted).
  if (func == nullptr) {
    return absl::ResourceExhaustedError("asmjit could not allocate the kernel's function");
  }
  if (features_.avx2) {
    func->frame().setAvxEnabled();
    // vzeroupper on return, so SSE code in the caller pays no transition.
    func->frame().setAvxCleanup();
  }
  // 32 vector registers and the k registers.
  if (features_.avx512) func->frame().setAvx512Enabled();
  x86::Gp args = cc_.newIntPtr("buffers");
  func->setArg(0, args);
  begin_ = cc_.newGpq("begin");
  end_ = cc_.newGpq("end");
  func->setArg(1, begin_);
  func->setArg(2, end_);

  XJIT_RETURN_IF_ERROR(ValidateProgram(program_));
  index_value_ = IndexValueOps(program_);
  levels_ = OpLevels(program_, index_value_);
  sections_ = OpSections(program_);
  phases_ = ComputePhases(program_);
  in_pass_.assign(program_.ops.size(), true);
  per_copy_.assign(program_.ops.size(), false);
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    bool p = (op.kind == KOpKind::kLoopIndex && op.imm == program_.output_loops() - 1) ||
             op.kind == KOpKind::kStore || op.kind == KOpKind::kAccInit ||
             op.kind == KOpKind::kAccRead || op.kind == KOpKind::kAccWrite ||
             op.kind == KOpKind::kAccResult;
    for (int operand : {op.a, op.b, op.c}) p = p || (operand >= 0 && per_copy_[operand]);
    per_copy_[id] = p;
  }
  strides_ = InnerStrides(program_);
  const int innermost = static_cast<int>(program_.loop_extents.size()) - 1;
  if (program_.claims_range && innermost < 1) {
    return absl::InternalError(absl::StrCat("kernel ", program_.name,
                                            ": a claimed range needs a loop inside it"));
  }
  bool inner_skip = false;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (program_.ops[id].kind != KOpKind::kSkipUnless) continue;
    skips_ = true;
    inner_skip = inner_skip || levels_[id] == innermost;
  }
  skip_to_.assign(program_.loop_extents.size() + 1, Label());
  skip_folded_.assign(program_.ops.size(), false);
  if (skips_) {
    // From the last operation back, so a conjunction's operands see it.
    std::vector<std::vector<int>> users(program_.ops.size());
    for (size_t id = 0; id < program_.ops.size(); ++id) {
      const KOp& op = program_.ops[id];
      for (int operand : {op.a, op.b, op.c}) {
        if (operand >= 0) users[operand].push_back(static_cast<int>(id));
      }
    }
    for (size_t id = program_.ops.size(); id-- > 0;) {
      const KOp& op = program_.ops[id];
      const bool foldable =
          op.kind == KOpKind::kILt || op.kind == KOpKind::kIEq || op.kind == KOpKind::kIAnd;
      bool only_skips = foldable && !users[id].empty();
      for (int user : users[id]) {
        only_skips = only_skips && (program_.ops[user].kind == KOpKind::kSkipUnless ||
                                    (program_.ops[user].kind == KOpKind::kIAnd &&
                                     skip_folded_[user]));
      }
      skip_folded_[id] = only_skips;
    }
  }
  vals_.assign(program_.ops.size(), Val());
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    x86::Gp pointer = cc_.newIntPtr();
    cc_.mov(pointer, x86::qword_ptr(args, static_cast<int32_t>(8 * b)));
    buffers_.push_back(pointer);
  }
  // Each strategy with zmm first (AVX-512), then with the AVX2/SSE width.
  auto fits = [&](auto strategy_fits) {
    if (features_.avx512) {
      zmm_ = true;
      if (strategy_fits()) return true;
    }
    zmm_ = false;
    return strategy_fits();
  };
  PlanTiling();
  if (inner_skip) {
    // A skip inside the vector loop would need a branch per lane.
    strategy_ = Strategy::kNone;
  } else if (program_.reduction_loops == 0) {
    // Guarded loads first: a position that only a guard keeps from moving
    // by one element per lane (max(j - 1, 0) in jnp.roll / jnp.pad "edge")
    // is then an ordinary stride-1 load checked in bounds, where the lane
    // gathers below would gather it (vgatherdps: about one element a cycle;
    // a 5-point roll stencil ran 2x slower that way). Without gathers here,
    // so a kernel that also needs one takes the gathers' plan as before.
    if (PlanGuardedLoads()) {
      vectorize_ = fits([&] { return Vectorizable(&vector_type_, &lanes_); });
      if (!vectorize_) {
        strides_ = InnerStrides(program_);
        guarded_load_.clear();
        identity_guard_.clear();
      }
    }
    if (!vectorize_) {
      if (tile_level_ < 0) lane_index_ = LaneIndexOps(program_, strides_);
      vectorize_ = fits([&] { return Vectorizable(&vector_type_, &lanes_); });
      if (!vectorize_) lane_index_.clear();
    }
    strategy_ = vectorize_ ? Strategy::kInner : Strategy::kNone;
  } else if (phases_.count == 1 &&
             fits([&] { return ColumnVectorizable(&vector_type_, &lanes_); })) {
    strategy_ = Strategy::kColumn;
    strides_ = StridesAlong(program_, program_.output_loops() - 1);
  } else if (fits([&] { return RowVectorizable(&vector_type_, &lanes_); })) {
    strategy_ = Strategy::kRow;
    strides_ = StridesAlong(program_, static_cast<int>(program_.loop_extents.size()) - 1);
  } else if (phases_.count == 1 && PlanColumnGathers()) {
    strategy_ = Strategy::kColumn;
  } else {
    strategy_ = Strategy::kNone;
  }
  vectorize_ = strategy_ != Strategy::kNone;
  if (!vectorize_) {
    lanes_ = 1;
    zmm_ = false;
  }
  lane_bits_ = vectorize_ ? (zmm_ ? 512 : features_.avx2 ? 256 : 128) / lanes_ : 32;
  *lanes = lanes_;
  PlanVectorLoop();
  PlanMasks();
  PlanSelectFolds();
  PlanCmovCompares();
  PlanCarries();
  PlanRowStreaming();
  PlanGatherPrefetches();

  if (strategy_ == Strategy::kColumn && !lane_index_.empty()) {
    // Scatters' lane offsets (ColumnScatterable), before the loops as in
    // tiled loops (StrideOffsets).
    for (const KOp& op : program_.ops) {
      if (op.kind == KOpKind::kStore && strides_[op.a] != 1 && !UsesLaneMoves(op)) {
        StrideOffsets(*strides_[op.a]);
      }
    }
  }
  bool empty = false;
  for (int64_t extent : program_.loop_extents) empty = empty || extent == 0;
  if (!empty) {
    if (program_.loop_extents.empty()) {
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
    } else {
      // An empty range does nothing (the loops below test at the bottom).
      Label done = cc_.newLabel();
      skip_to_[0] = done;
      cc_.cmp(begin_, end_);
      cc_.jge(done);
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
      XJIT_RETURN_IF_ERROR(EmitLoops(0));
      cc_.bind(done);
    }
  }
  // Non-temporal stores are weakly ordered: complete them before the
  // caller (or a thread waiting on this range) reads the output.
  if (streamed_) cc_.sfence();
  cc_.endFunc();
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitLoops(size_t level) {
  if (static_cast<int>(level) == tile_level_) return EmitTiledLoops();
  if (program_.reduction_loops > 0 && static_cast<int>(level) + 1 == program_.output_loops()) {
    int unroll = 1;
    if (strategy_ == Strategy::kColumn) {
      int value_ops = 0;
      for (size_t id = 0; id < program_.ops.size(); ++id) {
        value_ops += ScalarOnly(static_cast<int>(id)) ? 0 : 1;
      }
      unroll = value_ops <= 8 ? 8 : value_ops <= 24 ? 4 : value_ops <= 64 ? 2 : 1;
      while (unroll > 1 && program_.loop_extents[level] < unroll * lanes_) unroll /= 2;
    }
    return EmitSplitLoop(static_cast<int>(level), strategy_ == Strategy::kColumn, unroll,
                         [&](Mode mode) { return EmitElementBlock(mode); });
  }
  if (level + 1 == program_.loop_extents.size()) return EmitInnerLoop();
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  loop_vars_[level] = i;
  Label head = cc_.newLabel();
  // The outermost loop runs the caller's range [begin, end), never empty
  // here; inner ones their whole extent (positive: empty nests emit no
  // loops). A claimed range runs the body once, at begin.
  if (level == 0) {
    cc_.mov(i, begin_);
  } else {
    cc_.xor_(i.r32(), i.r32());
  }
  cc_.bind(head);
  if (static_cast<int>(level) == gather_level_) {
    XJIT_RETURN_IF_ERROR(EmitGatherPrefetches(static_cast<int>(level), i));
  }
  if (skips_) skip_to_[level + 1] = cc_.newLabel();
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
  XJIT_RETURN_IF_ERROR(EmitLoops(level + 1));
  if (skips_) cc_.bind(skip_to_[level + 1]);
  if (level == 0 && program_.claims_range) return absl::OkStatus();
  cc_.inc(i);
  if (level == 0) {
    cc_.cmp(i, end_);
  } else {
    cc_.cmp(i, program_.loop_extents[level]);
  }
  cc_.jl(head);
  return absl::OkStatus();
}

void KernelLowering::PlanGatherPrefetches() {
  gather_prefetches_.clear();
  gather_chain_.clear();
  gather_level_ = -1;
  const int levels = static_cast<int>(program_.loop_extents.size());
  if (levels < 2 || program_.reduction_loops > 0 || tile_level_ >= 0 ||
      strategy_ == Strategy::kRow || strategy_ == Strategy::kColumn) {
    return;
  }
  const int inner = levels - 1;
  const int row = inner - 1;
  const size_t n = program_.ops.size();
  // Index operations whose value depends on a value loaded from a buffer.
  std::vector<bool> dynamic(n, false);
  for (size_t id = 0; id < n; ++id) {
    if (!ScalarOnly(static_cast<int>(id))) continue;
    const KOp& op = program_.ops[id];
    dynamic[id] = IsIndexValue(static_cast<int>(id));
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && dynamic[operand]) dynamic[id] = true;
    }
  }
  std::vector<bool> needed(n, false);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (op.kind != KOpKind::kLoad || ScalarOnly(static_cast<int>(id)) ||
        levels_[id] != inner) {
      continue;
    }
    const KOp& position = program_.ops[op.a];
    if (position.kind != KOpKind::kIAdd) continue;
    int base = -1;
    for (auto [x, y] : {std::pair{position.a, position.b}, std::pair{position.b, position.a}}) {
      if (levels_[x] == row && dynamic[x] && levels_[y] == inner &&
          program_.ops[y].kind == KOpKind::kLoopIndex) {
        base = x;
      }
    }
    if (base < 0) continue;
    const KernelBuffer& buffer = program_.buffers[op.imm];
    const int element_bytes = static_cast<int>(ByteWidth(buffer.type));
    if (element_bytes <= 0 || buffer.element_count * element_bytes < PrefetchMinBytes()) continue;
    GatherPrefetch prefetch;
    prefetch.buffer = static_cast<int>(op.imm);
    prefetch.base = base;
    prefetch.element_bytes = element_bytes;
    // At most 8 lines a row: longer rows are streamed by the hardware
    // prefetcher once their first lines are read.
    prefetch.bytes = std::min<int64_t>(program_.loop_extents[inner] * element_bytes, 512);
    gather_prefetches_.push_back(prefetch);
    needed[base] = true;
  }
  if (gather_prefetches_.empty()) return;
  // The loop's own operations the bases read (operands come first).
  for (size_t id = n; id-- > 0;) {
    if (!needed[id]) continue;
    const KOp& op = program_.ops[id];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && levels_[operand] == row) needed[operand] = true;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    if (needed[id]) gather_chain_.push_back(static_cast<int>(id));
  }
  gather_level_ = row;
}

absl::Status KernelLowering::EmitGatherPrefetches(int level, x86::Gp i) {
  // Row i + kGatherPrefetchRows, or the last row: every position the bases'
  // operations read there is one the kernel reads in that row.
  x86::Gp ahead = NewGp();
  cc_.lea(ahead, x86::ptr(i, kGatherPrefetchRows));
  x86::Gp last = NewGp();
  cc_.mov(last, program_.loop_extents[level] - 1);
  cc_.cmp(ahead, last);
  cc_.cmovg(ahead, last);
  const x86::Gp row = loop_vars_[level];
  loop_vars_[level] = ahead;
  const Mode saved_mode = mode_;
  mode_ = Mode::kScalar;
  for (int id : gather_chain_) XJIT_RETURN_IF_ERROR(EmitOp(id, Mode::kScalar));
  for (const GatherPrefetch& prefetch : gather_prefetches_) {
    uint32_t shift = 0;
    while ((1 << shift) < prefetch.element_bytes) ++shift;
    for (int64_t offset = 0; offset < prefetch.bytes; offset += 64) {
      cc_.prefetcht0(x86::ptr(buffers_[prefetch.buffer], vals_[prefetch.base].gp, shift,
                              static_cast<int32_t>(offset)));
    }
  }
  loop_vars_[level] = row;
  mode_ = saved_mode;
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitInnerLoop() {
  const size_t level = program_.loop_extents.size() - 1;
  const int64_t extent = program_.loop_extents[level];
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  loop_vars_[level] = i;
  if (level == 0) return EmitRangedInnerLoop(i);
  cc_.xor_(i.r32(), i.r32());
  int64_t scalar_start = 0;
  if (vectorize_) {
    const int64_t vector_count = extent / lanes_;
    scalar_start = vector_count * lanes_;
    // Where the lane compares of the loop index are uniform, a body
    // specialised to their values, between general ones (uniform_lanes.h).
    if (strategy_ == Strategy::kInner && tile_level_ < 0) {
      uniform_ = FindUniformLaneRange(program_, levels_, static_cast<int>(level), extent, lanes_);
    }
    std::vector<std::pair<int64_t, bool>> stretches;  // (end, specialised)
    if (!uniform_.empty()) {
      stretches = {{uniform_.begin * lanes_, false}, {uniform_.end * lanes_, true}};
    }
    stretches.push_back({scalar_start, false});
    for (const auto& [end, specialised] : stretches) {
      x86::Gp vector_end = cc_.newGpq();
      cc_.mov(vector_end, end);
      specialised_ = specialised;
      const absl::Status status = EmitVectorLoop(static_cast<int>(level), i, vector_end);
      specialised_ = false;
      XJIT_RETURN_IF_ERROR(status);
    }
  }
  if (scalar_start < extent) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    if (skips_) skip_to_[level + 1] = cc_.newLabel();
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
    if (skips_) cc_.bind(skip_to_[level + 1]);
    cc_.inc(i);
    cc_.cmp(i, extent);
    cc_.jl(head);
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitRangedInnerLoop(x86::Gp i) {
  // Scalar iterations first until the first output's next element is 64-byte
  // aligned (a vector store that straddles two cache lines costs about twice,
  // and zmm stores of a misaligned output always do; inputs laid out like the
  // output get aligned too); then vector iterations over the largest
  // multiple of `lanes_` elements left; the scalar tail the rest. Scalar and
  // vector code compute the same bits, so where a range is split (threads)
  // changes no result.
  // One copy of the scalar code serves the peel and the tail: after the
  // peel, the vector loop runs and jumps back to it with the real end.
  cc_.mov(i, begin_);
  x86::Gp stop = cc_.newGpq();
  cc_.mov(stop, end_);
  x86::Gp tail = cc_.newGpq();  // 1 once the vector part has run.
  cc_.mov(tail, 1);
  if (vectorize_) {
    cc_.xor_(tail.r32(), tail.r32());
    const int output = program_.output_buffer(0);
    const int bytes = static_cast<int>(ByteWidth(program_.buffers[output].type));
    if (bytes > 0 && (bytes & (bytes - 1)) == 0 && bytes < kAlignBytes) {
      // stop = min(end, i + ((-address) mod 64) / bytes) when the address is
      // a multiple of `bytes`, else i.
      x86::Gp address = cc_.newGpq();
      cc_.lea(address, x86::ptr(buffers_[output], i, __builtin_ctz(bytes)));
      cc_.mov(stop, address);
      cc_.neg(stop);
      cc_.and_(stop, kAlignBytes - 1);
      x86::Gp zero = cc_.newGpq();
      cc_.xor_(zero.r32(), zero.r32());
      cc_.test(address, bytes - 1);
      cc_.cmovnz(stop, zero);
      cc_.shr(stop, __builtin_ctz(bytes));
      cc_.add(stop, i);
      cc_.cmp(stop, end_);
      cc_.cmovg(stop, end_);
    } else {
      cc_.mov(stop, i);
    }
  }
  Label check = cc_.newLabel();
  Label head = cc_.newLabel();
  Label after = cc_.newLabel();
  Label done = cc_.newLabel();
  cc_.bind(check);
  cc_.cmp(i, stop);
  cc_.jge(after);
  cc_.bind(head);
  if (skips_) skip_to_[1] = cc_.newLabel();
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(0, Mode::kScalar));
  if (skips_) cc_.bind(skip_to_[1]);
  cc_.inc(i);
  cc_.cmp(i, stop);
  cc_.jl(head);
  cc_.bind(after);
  if (vectorize_) {
    cc_.test(tail, tail);
    cc_.jnz(done);
    cc_.mov(tail, 1);
    x86::Gp vector_end = cc_.newGpq();
    cc_.mov(vector_end, end_);
    cc_.sub(vector_end, i);
    cc_.and_(vector_end, -static_cast<int64_t>(lanes_));  // lanes_ is a power of 2.
    cc_.add(vector_end, i);
    XJIT_RETURN_IF_ERROR(EmitVectorLoop(0, i, vector_end));
    cc_.mov(stop, end_);
    cc_.jmp(check);
  }
  cc_.bind(done);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitVectorLoop(int level, x86::Gp i, x86::Gp vector_end) {
  Label done = cc_.newLabel();
  cc_.cmp(i, vector_end);
  cc_.jge(done);
  XJIT_RETURN_IF_ERROR(EmitHoisted());
  if (kVectorUnroll > 1) {
    // Independent bodies per iteration (every element still runs the same
    // operations; only the schedule changes).
    x86::Gp last = cc_.newGpq();
    cc_.lea(last, x86::ptr(vector_end, -kVectorUnroll * lanes_));
    Label skip = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.cmp(i, last);
    cc_.jg(skip);
    cc_.bind(head);
    for (int u = 0; u < kVectorUnroll; ++u) {
      if (u > 0) {
        x86::Gp next = cc_.newGpq();
        cc_.lea(next, x86::ptr(i, u * lanes_));
        loop_vars_[level] = next;
      }
      absl::Status status = EmitOpsAtLevel(level, Mode::kVector);
      loop_vars_[level] = i;
      XJIT_RETURN_IF_ERROR(status);
    }
    cc_.add(i, kVectorUnroll * lanes_);
    cc_.cmp(i, last);
    cc_.jle(head);
    cc_.bind(skip);
    cc_.cmp(i, vector_end);
    cc_.jge(done);
  }
  Label head = cc_.newLabel();
  const bool guarded = !guarded_load_.empty();
  if (guarded) guard_fallback_ = cc_.newLabel();
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(level, Mode::kVector));
  cc_.add(i, lanes_);
  cc_.cmp(i, vector_end);
  cc_.jl(head);
  if (guarded) {
    // An iteration whose guarded loads would leave their buffers: its
    // elements one by one in scalar code, whose guards clamp.
    cc_.jmp(done);
    cc_.bind(guard_fallback_);
    x86::Gp stop = cc_.newGpq();
    cc_.lea(stop, x86::ptr(i, lanes_));
    Label scalar_head = cc_.newLabel();
    cc_.bind(scalar_head);
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(level, Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, stop);
    cc_.jl(scalar_head);
    cc_.cmp(i, vector_end);
    cc_.jl(head);
  }
  cc_.bind(done);
  return absl::OkStatus();
}

namespace {

// Operations whose vector result is always a register of their own, and
// which never return an operand's register as theirs.
bool FreshVectorResult(const KOp& op) {
  const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
  switch (op.kind) {
    case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift: case KOpKind::kScale:
      return true;
    case KOpKind::kLoad: case KOpKind::kBinary: case KOpKind::kUnary:
      return is_float;
    default:
      return false;
  }
}

// Operations that read their vector operands without aliasing them.
bool NonAliasingUser(const KOp& op) {
  const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
  switch (op.kind) {
    case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift: case KOpKind::kScale:
    case KOpKind::kStore:
      return true;
    case KOpKind::kBinary: case KOpKind::kUnary: case KOpKind::kSelect: case KOpKind::kClamp:
      return is_float;
    case KOpKind::kCompare:
      return op.comparison == ComparisonType::kFloat &&
             (op.operand_type == ElementType::kF32 || op.operand_type == ElementType::kF64);
    default:
      return false;
  }
}

// Users that take a constant as a VEX memory operand (see VecSource).
bool MemSourceUser(const KOp& op) {
  const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
  switch (op.kind) {
    case KOpKind::kFma: case KOpKind::kBits:
      return true;
    case KOpKind::kBinary:
      return is_float && (op.opcode == Opcode::kAdd || op.opcode == Opcode::kSubtract ||
                          op.opcode == Opcode::kMultiply || op.opcode == Opcode::kDivide);
    case KOpKind::kCompare:
      return op.comparison == ComparisonType::kFloat &&
             (op.operand_type == ElementType::kF32 || op.operand_type == ElementType::kF64);
    default:
      return false;
  }
}

}  // namespace

void KernelLowering::PlanVectorLoop() {
  const size_t n = program_.ops.size();
  hoisted_.assign(n, false);
  deferred_.assign(n, false);
  deferred_mem_.assign(n, x86::Mem());
  last_user_.assign(n, -1);
  fresh_.assign(n, false);
  if (program_.reduction_loops > 0 || strategy_ != Strategy::kInner) return;
  std::vector<int> uses(n, 0);
  std::vector<bool> mem_users(n, true);
  std::vector<bool> plain_users(n, true);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (ScalarOnly(static_cast<int>(id))) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || ScalarOnly(operand)) continue;
      ++uses[operand];
      last_user_[operand] = static_cast<int>(id);
      if (!MemSourceUser(op)) mem_users[operand] = false;
      if (!NonAliasingUser(op)) plain_users[operand] = false;
    }
  }
  // Loop-invariant values: constants and broadcast loads (their position
  // is computed outside the innermost loop). The most used first, up to a
  // register budget; the rest of the constants, where every user takes a
  // memory operand, stay in the constant pool.
  std::vector<int> invariant;
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
    // Tiled loops: the loop outside the innermost runs inside the vector
    // loop, so only positions computed outside both are invariant there.
    // Integer broadcasts too (lane-width integers; not pred, whose loads
    // widen bytes into lane masks): threefry's rotation amounts and key
    // words were loaded again in every iteration.
    const bool lane_integer = IsInteger(op.type);
    const bool broadcast = op.kind == KOpKind::kLoad && (is_float || lane_integer) &&
                           strides_[op.a] == 0 &&
                           (tile_level_ < 0 || levels_[op.a] < tile_level_);
    if ((op.kind == KOpKind::kConst || broadcast) && uses[id] > 0 &&
        !IsIndexValue(static_cast<int>(id))) {
      invariant.push_back(static_cast<int>(id));
    }
  }
  std::stable_sort(invariant.begin(), invariant.end(),
                   [&](int x, int y) { return uses[x] > uses[y]; });
  const int budget = features_.avx512 ? kHoistBudgetAvx512
                     : features_.avx2  ? kHoistBudgetAvx
                                       : kHoistBudgetSse;
  int hoisted = PlanDerivedInvariants(uses, budget);
  for (int id : invariant) {
    if (hoisted_[id]) continue;  // Read by a hoisted derived value.
    // A constant read once by an instruction that takes a memory operand
    // costs no register and no extra instruction. With AVX-512's 32
    // registers such constants take the registers left over instead of a
    // 64-byte load in every iteration (tanh(a*x+b)*c over 16M f32 took
    // about 7% less CPU time that way on Zen 4, jit_benchmark Chain).
    const bool fold = features_.avx2 && !features_.avx512 &&
                      program_.ops[id].kind == KOpKind::kConst && mem_users[id] &&
                      uses[id] == 1;
    if (!fold && hoisted < budget) {
      hoisted_[id] = true;
      ++hoisted;
    } else if (features_.avx2 && program_.ops[id].kind == KOpKind::kConst && mem_users[id]) {
      deferred_[id] = true;
    }
  }
  HoistInvariantArithmetic(uses, budget - hoisted);
  for (size_t id = 0; id < n; ++id) {
    fresh_[id] = !hoisted_[id] && plain_users[id] && FreshVectorResult(program_.ops[id]);
  }
}

int KernelLowering::PlanDerivedInvariants(const std::vector<int>& uses, int budget) {
  // Recomputing such a value costs several instructions per vector
  // iteration (a pred broadcast: compare, set, negate, move, broadcast; a
  // select of two broadcasts: a blend), where a plain broadcast reloads in
  // one; so they take the registers first, and the plain invariants the
  // rest (PlanVectorLoop). Tiled loops keep their own rule.
  if (tile_level_ >= 0) return 0;
  const size_t n = program_.ops.size();
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  auto outer_invariant_index = [&](int index) {
    return ScalarOnly(index) && strides_[index].has_value() && *strides_[index] == 0 &&
           levels_[index] < inner;
  };
  std::vector<bool> invariant(n, false);
  std::vector<bool> derived(n, false);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (ScalarOnly(static_cast<int>(id))) continue;
    if (!guarded_load_.empty() && guarded_load_[id]) continue;
    const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
    switch (op.kind) {
      case KOpKind::kConst:
        invariant[id] = true;
        break;
      case KOpKind::kLoad:
        invariant[id] = outer_invariant_index(op.a);
        derived[id] = invariant[id] && !is_float;
        break;
      case KOpKind::kFromIndex:
        invariant[id] = derived[id] = outer_invariant_index(op.a);
        break;
      case KOpKind::kUnary: case KOpKind::kBinary: case KOpKind::kCompare:
      case KOpKind::kSelect: case KOpKind::kClamp: case KOpKind::kConvert:
      case KOpKind::kBitcast: case KOpKind::kFma: case KOpKind::kBits:
      case KOpKind::kBitShift: case KOpKind::kScale: {
        if ((op.kind == KOpKind::kUnary || op.kind == KOpKind::kBinary) && is_float &&
            IsExpandedMathOp(op)) {
          break;  // A routine call: left in the loop.
        }
        bool all = true;
        for (int operand : {op.a, op.b, op.c}) {
          if (operand >= 0) all = all && !ScalarOnly(operand) && invariant[operand];
        }
        invariant[id] = derived[id] = all;
        break;
      }
      default:
        break;
    }
  }
  // A value read by scalar code (an index value) stays where it is, and
  // so do the values computed from it (operands come before users).
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (!ScalarOnly(static_cast<int>(id))) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) invariant[operand] = false;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (ScalarOnly(static_cast<int>(id))) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && !ScalarOnly(operand) && !invariant[operand]) invariant[id] = false;
    }
  }
  // Roots: invariant values read inside the loop.
  std::vector<bool> root(n, false);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (ScalarOnly(static_cast<int>(id)) || invariant[id]) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && invariant[operand]) root[operand] = true;
    }
  }
  std::vector<int> candidates;
  for (size_t id = 0; id < n; ++id) {
    if (root[id] && derived[id] && uses[id] > 0) candidates.push_back(static_cast<int>(id));
  }
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](int x, int y) { return uses[x] > uses[y]; });
  int live = 0;
  std::vector<int> closure;
  for (int candidate : candidates) {
    if (hoisted_[candidate]) continue;
    closure.clear();
    closure.push_back(candidate);
    std::vector<bool> seen(n, false);
    seen[candidate] = true;
    int added = 0;
    for (size_t k = 0; k < closure.size(); ++k) {
      const KOp& op = program_.ops[closure[k]];
      if (root[closure[k]]) ++added;
      for (int operand : {op.a, op.b, op.c}) {
        if (operand >= 0 && invariant[operand] && !hoisted_[operand] && !seen[operand]) {
          seen[operand] = true;
          closure.push_back(operand);
        }
      }
    }
    if (live + added > budget) continue;
    live += added;
    for (int id : closure) hoisted_[id] = true;
  }
  return live;
}

// Integer arithmetic whose every operand is hoisted is the same in every
// iteration: it is hoisted too (in program order, so its operands come
// first), up to `budget` more registers. JAX's threefry computes each
// rotate's right shift as 32 - r from a loaded r; that subtraction ran in
// every iteration, four times per round group. Float arithmetic is left
// where it is (the vector-math expansion's constants are already folded).
// In untiled loops PlanDerivedInvariants has already hoisted the derived
// values read most; this takes what its budget left, and tiled loops.
void KernelLowering::HoistInvariantArithmetic(const std::vector<int>& uses, int budget) {
  for (size_t id = 0; id < program_.ops.size() && budget > 0; ++id) {
    const KOp& op = program_.ops[id];
    if (op.kind != KOpKind::kBinary || !IsInteger(op.type) || uses[id] == 0 ||
        IsIndexValue(static_cast<int>(id)) || hoisted_[id]) {
      continue;
    }
    if (!hoisted_[op.a] || !hoisted_[op.b]) continue;
    hoisted_[id] = true;
    --budget;
  }
}

void KernelLowering::PlanMasks() {
  const size_t n = program_.ops.size();
  mask_in_k_.assign(n, false);
  if (!zmm_) return;
  std::vector<bool> only_select_predicate(n, true);
  std::vector<int> uses(n, 0);
  for (size_t user = 0; user < n; ++user) {
    const KOp& op = program_.ops[user];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0) continue;
      ++uses[operand];
      // In the same section, so that both run in vector mode (row
      // reductions broadcast values from outside the body as lane masks).
      const bool predicate_use = op.kind == KOpKind::kSelect && operand == op.a &&
                                 op.b != operand && op.c != operand &&
                                 sections_[operand] == sections_[user];
      if (!predicate_use) only_select_predicate[operand] = false;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    // A hoisted compare stays a lane mask: it lives across the loop, where
    // masked loads and blends take k registers of their own.
    const bool hoisted = !hoisted_.empty() && hoisted_[id];
    mask_in_k_[id] = program_.ops[id].kind == KOpKind::kCompare && uses[id] > 0 && !hoisted &&
                     only_select_predicate[id] && !IsIndexValue(static_cast<int>(id)) &&
                     (strategy_ != Strategy::kRow || sections_[id] == KSection::kBody);
  }
}

void KernelLowering::PlanSelectFolds() {
  const size_t n = program_.ops.size();
  select_fold_.assign(n, 0);
  folded_compare_.assign(n, false);
  const std::vector<int> uses = UseCounts(program_);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (op.kind != KOpKind::kSelect ||
        (op.type != ElementType::kF32 && op.type != ElementType::kF64)) {
      continue;
    }
    const KOp& cmp = program_.ops[op.a];
    const bool lt = cmp.direction == ComparisonDirection::kLt;
    if (cmp.kind != KOpKind::kCompare || cmp.comparison != ComparisonType::kFloat ||
        cmp.operand_type != op.type || uses[op.a] != 1 || sections_[op.a] != sections_[id] ||
        (!lt && cmp.direction != ComparisonDirection::kGt) || cmp.a == cmp.b) {
      continue;
    }
    // select(p, b, c) with p = b > c is max(b, c); with p = b < c, min.
    int8_t fold = 0;
    if (op.b == cmp.b && op.c == cmp.a) fold = lt ? 1 : 2;  // p = c <> b
    if (op.b == cmp.a && op.c == cmp.b) fold = lt ? 2 : 1;  // p = b <> c
    if (fold == 0) continue;
    select_fold_[id] = fold;
    folded_compare_[op.a] = true;
  }
}

absl::Status KernelLowering::EmitHoisted() {
  if (hoisted_.empty()) return absl::OkStatus();
  mode_ = Mode::kVector;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (hoisted_[id] && !Specialised(static_cast<int>(id))) {
      XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), Mode::kVector));
    }
  }
  return absl::OkStatus();
}

bool KernelLowering::IsMemSource(int id) const {
  return mode_ == Mode::kVector && !deferred_.empty() && deferred_[id];
}

Operand KernelLowering::VecSource(int id) {
  if (IsMemSource(id)) return deferred_mem_[id];
  return vals_[id].vec;
}

x86::Vec KernelLowering::VecReg(int id) {
  if (!IsMemSource(id)) return vals_[id].vec;
  x86::Vec d = NewVec();
  V2(Inst::kIdMovups, Inst::kIdVmovups, d, deferred_mem_[id]);
  return d;
}

bool KernelLowering::Killable(int operand, int user) const {
  return mode_ == Mode::kVector && !fresh_.empty() && fresh_[operand] &&
         last_user_[operand] == user;
}

absl::Status KernelLowering::EmitOpsAtLevel(int level, Mode mode) {
  mode_ = mode;
  lane_indices_.clear();  // Computed anew in every body (LaneIndices).
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (levels_[id] != level) continue;
    if (mode == Mode::kVector && !hoisted_.empty() && hoisted_[id]) continue;
    if (mode == Mode::kVector && Specialised(static_cast<int>(id))) continue;
    if (mode == Mode::kVector && !guarded_load_.empty() && guarded_load_[id] &&
        !MaskedGuardedLoad(static_cast<int>(id))) {
      // All lanes [p, p + lanes) in the buffer, else the scalar iterations.
      const KOp& op = program_.ops[id];
      const x86::Gp position = vals_[op.a].gp;
      CompareWith(position, program_.buffers[op.imm].element_count - lanes_);
      cc_.jg(guard_fallback_);
      cc_.test(position, position);
      cc_.js(guard_fallback_);
    }
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
  }
  return absl::OkStatus();
}

void KernelLowering::CompareWith(x86::Gp g, int64_t value) {
  if (value >= std::numeric_limits<int32_t>::min() && value <= std::numeric_limits<int32_t>::max()) {
    cc_.cmp(g, static_cast<int32_t>(value));
    return;
  }
  x86::Gp t = NewGp();
  cc_.mov(t, value);
  cc_.cmp(g, t);
}

bool KernelLowering::MaskedGuardedLoad(int id) const {
  if (guarded_load_.empty() || !guarded_load_[id] || !features_.avx2) return false;
  const KOp& op = program_.ops[id];
  const ElementType t = op.type;
  if (t == ElementType::kPred || t == ElementType::kF16 || t == ElementType::kBF16) return false;
  return (lane_bits_ == 32 || lane_bits_ == 64) && BitWidth(t) == lane_bits_;
}

absl::Status KernelLowering::EmitMaskedGuardedLoad(int id) {
  const KOp& op = program_.ops[id];
  const bool wide = lane_bits_ == 64;
  const x86::Gp position = vals_[op.a].gp;
  const int64_t count = program_.buffers[op.imm].element_count;
  const int bytes = lane_bits_ / 8;
  const x86::Mem m =
      x86::Mem(Address(static_cast<int>(op.imm), op.a, bytes)).cloneResized(VecBytes());
  x86::Vec v = NewVec();
  Label masked = cc_.newLabel(), done = cc_.newLabel();
  if (count >= lanes_) {
    // All lanes inside (position in [0, count - lanes], one unsigned
    // compare): the plain load, as in the rows' interiors.
    CompareWith(position, count - lanes_);
    cc_.ja(masked);
    cc_.emit(wide ? Inst::kIdVmovupd : Inst::kIdVmovups, v, m);
    cc_.jmp(done);
  }
  cc_.bind(masked);
  // Lanes [lo, hi) lie in the buffer: lo = clamp(-position, 0, lanes),
  // hi = clamp(count - position, 0, lanes).
  x86::Gp lo = NewGp(), hi = NewGp(), bound = NewGp();
  cc_.xor_(bound.r32(), bound.r32());
  cc_.mov(lo, position);
  cc_.neg(lo);
  cc_.cmp(lo, bound);
  cc_.cmovl(lo, bound);
  cc_.mov(hi, count);
  cc_.sub(hi, position);
  cc_.cmp(hi, bound);
  cc_.cmovl(hi, bound);
  cc_.mov(bound, lanes_);
  cc_.cmp(lo, bound);
  cc_.cmovg(lo, bound);
  cc_.cmp(hi, bound);
  cc_.cmovg(hi, bound);
  // The lane numbers 0..lanes-1 and the bounds as dwords.
  const int dword_bytes = lanes_ * 4;
  auto dword_vec = [&]() -> x86::Vec {
    return dword_bytes == 64 ? x86::Vec(cc_.newZmm())
                             : dword_bytes == 32 ? x86::Vec(cc_.newYmm()) : x86::Vec(cc_.newXmm());
  };
  std::vector<int32_t> numbers(static_cast<size_t>(lanes_));
  for (int k = 0; k < lanes_; ++k) numbers[k] = k;
  const x86::Mem lane_numbers =
      cc_.newConst(ConstPoolScope::kLocal, numbers.data(), numbers.size() * 4)
          .cloneResized(static_cast<uint32_t>(dword_bytes));
  x86::Vec lane = dword_vec(), lo_v = dword_vec(), hi_v = dword_vec();
  if (zmm_) {
    cc_.vpbroadcastd(lo_v, lo.r32());
    cc_.vpbroadcastd(hi_v, hi.r32());
    cc_.vmovdqu32(lane, lane_numbers);
    x86::KReg k = cc_.newKq();
    cc_.vpcmpd(k, lane, hi_v, imm(1));  // lane < hi
    cc_.k(k).vpcmpd(k, lane, lo_v, imm(5));  // and lane >= lo
    cc_.k(k).z().emit(wide ? Inst::kIdVmovupd : Inst::kIdVmovups, v, m);
  } else {
    x86::Xmm low = cc_.newXmm();
    cc_.vmovd(low, lo.r32());
    cc_.vpbroadcastd(lo_v, low);
    cc_.vmovd(low, hi.r32());
    cc_.vpbroadcastd(hi_v, low);
    cc_.vmovdqu(lane, lane_numbers);
    x86::Vec below_hi = dword_vec(), below_lo = dword_vec(), mask = dword_vec();
    cc_.vpcmpgtd(below_hi, hi_v, lane);  // hi > lane
    cc_.vpcmpgtd(below_lo, lo_v, lane);  // lo > lane: before the buffer
    cc_.vpandn(mask, below_lo, below_hi);
    if (wide) {  // Each dword's sign into its qword lane.
      x86::Vec qmask = NewVec();
      cc_.vpmovsxdq(qmask, mask.xmm());
      mask = qmask;
    }
    cc_.emit(wide ? Inst::kIdVmaskmovpd : Inst::kIdVmaskmovps, v, mask, m);
  }
  cc_.bind(done);
  SetVec(id, v);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitSectionAtLevel(int level, Mode mode, KSection section) {
  mode_ = mode;
  // Lane positions come from this copy's loop index (ForEachCopy): never
  // reuse another section's or copy's.
  lane_indices_.clear();
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (levels_[id] != level || sections_[id] != section) continue;
    if (program_.ops[id].kind == KOpKind::kAccWrite) continue;
    if (section == KSection::kBody && !in_pass_[id]) continue;
    if (section == KSection::kPost && phases_.stage[id] != pass_ + 1) continue;
    if (section == KSection::kBody && !carry_pass_.empty() && carry_pass_[id] >= 0 &&
        carry_pass_[id] != pass_) {
      XJIT_RETURN_IF_ERROR(EmitCarry(static_cast<int>(id), mode, /*store=*/false));
      continue;
    }
    if (copies_ > 1 && !per_copy_[id]) {
      if (current_copy_ != 0) continue;
      XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
      for (int u = 1; u < copies_; ++u) copy_vals_[u][id] = vals_[id];
      continue;
    }
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
    if (section == KSection::kBody && !carry_pass_.empty() && carry_pass_[id] == pass_) {
      XJIT_RETURN_IF_ERROR(EmitCarry(static_cast<int>(id), mode, /*store=*/true));
    }
  }
  return absl::OkStatus();
}

void KernelLowering::PlanCarries() {
  carry_pass_.clear();
  carry_offset_.clear();
  if (strategy_ != Strategy::kRow) return;
  RowCarryPlan plan = PlanRowCarries(program_, phases_, sections_,
                                     [this](int id) { return ScalarOnly(id); }, kMaxCarryBytes);
  if (plan.bytes == 0) return;
  carry_pass_ = std::move(plan.carried_from);
  carry_offset_ = std::move(plan.offset);
  x86::Mem scratch = cc_.newStack(static_cast<uint32_t>(plan.bytes), 64);
  carry_base_ = cc_.newIntPtr("carry");
  cc_.lea(carry_base_, scratch);
}

void KernelLowering::PlanRowStreaming() {
  // A row program reads its rows from memory in its first pass and then
  // computes from cache: without help the memory idles during the later
  // passes (the hardware prefetchers see no misses there), and every output
  // line is first read for ownership. So, for arrays too large to stay in
  // cache, the later passes prefetch the next row, and large outputs are
  // written with non-temporal stores (no read, no cache pollution) where
  // the row is aligned for them.
  row_prefetches_.clear();
  stream_store_.assign(program_.ops.size(), false);
  any_stream_store_ = false;
  peel_ = false;
  peel_pass_.assign(static_cast<size_t>(phases_.count), false);
  if (phases_.count < 2 || strategy_ != Strategy::kRow || program_.reduction_loops != 1) return;
  const std::vector<std::optional<int64_t>> along_rows =
      StridesAlong(program_, program_.output_loops() - 1);
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    const bool store = op.kind == KOpKind::kStore;
    if ((op.kind != KOpKind::kLoad && !store) || sections_[id] != KSection::kBody) continue;
    const ElementType type = store ? op.operand_type : op.type;
    if (type != ElementType::kF32 && type != ElementType::kF64) continue;
    const int buffer = store ? program_.output_buffer(static_cast<int>(op.imm))
                             : static_cast<int>(op.imm);
    const int64_t bytes = type == ElementType::kF64 ? 8 : 4;
    const int64_t size = program_.buffers[static_cast<size_t>(buffer)].element_count * bytes;
    // Unit stride along the row, a fixed distance to the next row.
    if (strides_[op.a] != 1 || !along_rows[op.a].has_value() || *along_rows[op.a] == 0) continue;
    const int64_t distance = *along_rows[op.a] * bytes;
    if (size < PrefetchMinBytes() || distance > (int64_t{1} << 30) ||
        distance < -(int64_t{1} << 30)) {
      continue;
    }
    if (store && size >= StreamStoreMinBytes()) {
      stream_store_[id] = true;
      any_stream_store_ = true;
      peel_pass_[static_cast<size_t>(phases_.pass[id])] = true;
    }
    bool seen = false;
    for (const auto& [other, unused] : row_prefetches_) {
      const KOp& o = program_.ops[other];
      seen = seen || (o.kind == op.kind && o.a == op.a && o.imm == op.imm);
    }
    if (!seen) row_prefetches_.push_back({static_cast<int>(id), distance});
  }
  // A pass that accumulates would add a peeled row's head in another order
  // (scalar, before the vector partials) than an aligned row's: such
  // passes keep streaming aligned rows only.
  peel_ = any_stream_store_;
  for (int slot_pass : phases_.slot_pass) {
    if (slot_pass >= 0 && peel_pass_[static_cast<size_t>(slot_pass)]) peel_ = false;
  }
  if (!peel_) peel_pass_.assign(peel_pass_.size(), false);
}

void KernelLowering::EmitRowPrefetches() {
  for (const auto& [id, distance] : row_prefetches_) {
    const KOp& op = program_.ops[id];
    // Positions this pass computes anyway (in a general register).
    if (!in_pass_[op.a] || vals_[op.a].in_vec) continue;
    const bool store = op.kind == KOpKind::kStore;
    // Lines about to be written by non-temporal stores are not fetched;
    // prefetchw only from AVX2 machines on (a no-op before Broadwell).
    if (store && (streaming_ || !features_.avx2)) continue;
    const ElementType type = store ? op.operand_type : op.type;
    const int buffer = store ? program_.output_buffer(static_cast<int>(op.imm))
                             : static_cast<int>(op.imm);
    x86::Mem m = Address(buffer, op.a, type == ElementType::kF64 ? 8 : 4);
    m.addOffset(distance);
    m.setSize(1);
    // Into L2 (prefetcht1): measured faster than into L1 (prefetcht0),
    // which the current row, its carried values and its output fill.
    store ? cc_.prefetchw(m) : cc_.prefetcht1(m);
  }
}

x86::Gp KernelLowering::EmitRowStoreAddress(int id) {
  // The body index operations the store's position needs, emitted again
  // with a zero loop index (pure, so the pass recomputes them as before).
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  loop_vars_.resize(program_.loop_extents.size());
  const x86::Gp saved = loop_vars_[inner];
  x86::Gp zero = NewGp();
  cc_.xor_(zero.r32(), zero.r32());
  loop_vars_[inner] = zero;
  const KOp& store = program_.ops[id];
  std::vector<bool> need(program_.ops.size(), false);
  need[static_cast<size_t>(store.a)] = true;
  for (int i = store.a; i >= 0; --i) {
    if (!need[i]) continue;
    const KOp& op = program_.ops[i];
    for (int o : {op.a, op.b, op.c}) {
      if (o >= 0 && sections_[o] == KSection::kBody) need[o] = true;
    }
  }
  for (int i = 0; i <= store.a; ++i) {
    if (need[i] && sections_[i] == KSection::kBody) EmitIndexOp(i);
  }
  x86::Gp address = NewGp();
  cc_.lea(address, Address(program_.output_buffer(static_cast<int>(store.imm)), store.a,
                           store.operand_type == ElementType::kF64 ? 8 : 4));
  loop_vars_[inner] = saved;
  return address;
}

x86::Gp KernelLowering::EmitRowHead(x86::Gp address, int element_bytes) {
  // Elements before the first aligned one, rounded down: an address off
  // the element size never gets aligned (EmitStreamingCheck sends such
  // rows to the ordinary version).
  x86::Gp head = NewGp();
  cc_.mov(head, address);
  cc_.neg(head);
  cc_.and_(head, StreamAlignment() - 1);
  cc_.shr(head, element_bytes == 8 ? 3 : 2);
  return head;
}

int KernelLowering::StreamAlignment() const { return zmm_ ? 64 : features_.avx2 ? 32 : 16; }

x86::Gp KernelLowering::EmitStreamingCheck() {
  head_ = x86::Gp();
  x86::Gp misaligned = NewGp();
  cc_.xor_(misaligned.r32(), misaligned.r32());
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (!stream_store_[id]) continue;
    const KOp& store = program_.ops[id];
    const int bytes = store.operand_type == ElementType::kF64 ? 8 : 4;
    x86::Gp address = EmitRowStoreAddress(static_cast<int>(id));
    if (peel_) {
      if (!head_.isValid()) head_ = EmitRowHead(address, bytes);
      // Aligned after head_ elements too.
      cc_.lea(address, x86::ptr(address, head_, bytes == 8 ? 3 : 2));
    }
    cc_.or_(misaligned, address);
  }
  cc_.and_(misaligned, StreamAlignment() - 1);
  return misaligned;
}

absl::Status KernelLowering::EmitCarry(int id, Mode mode, bool store) {
  const KOp& op = program_.ops[id];
  const bool f64 = op.type == ElementType::kF64;
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  x86::Mem at = x86::ptr(carry_base_, loop_vars_[inner], f64 ? 3 : 2,
                         static_cast<int32_t>(carry_offset_[id]));
  mode_ = mode;
  if (store) {
    const x86::Vec v = vals_[id].vec;
    if (!vals_[id].in_vec) return absl::InternalError("carried value not in a vector register");
    if (mode == Mode::kVector) {
      features_.avx2 ? cc_.vmovups(at, v) : cc_.movups(at, v.xmm());
    } else if (f64) {
      features_.avx2 ? cc_.vmovsd(at, v.xmm()) : cc_.movsd(at, v.xmm());
    } else {
      features_.avx2 ? cc_.vmovss(at, v.xmm()) : cc_.movss(at, v.xmm());
    }
    return absl::OkStatus();
  }
  x86::Vec v = NewVec();
  if (mode == Mode::kVector) {
    features_.avx2 ? cc_.vmovups(v, at) : cc_.movups(v.xmm(), at);
  } else if (f64) {
    features_.avx2 ? cc_.vmovsd(v.xmm(), at) : cc_.movsd(v.xmm(), at);
  } else {
    features_.avx2 ? cc_.vmovss(v.xmm(), at) : cc_.movss(v.xmm(), at);
  }
  SetVec(id, v);
  return absl::OkStatus();
}

template <typename Fn>
absl::Status KernelLowering::ForEachCopy(Fn emit) {
  if (copies_ == 1) return emit();
  const int level = program_.output_loops() - 1;
  for (int u = 0; u < copies_; ++u) {
    std::swap(vals_, copy_vals_[u]);
    std::swap(accs_, copy_accs_[u]);
    loop_vars_[level] = copy_index_[u];
    current_copy_ = u;
    absl::Status status = emit();
    current_copy_ = 0;
    std::swap(vals_, copy_vals_[u]);
    std::swap(accs_, copy_accs_[u]);
    XJIT_RETURN_IF_ERROR(status);
  }
  loop_vars_[level] = copy_index_[0];
  return absl::OkStatus();
}

template <typename Body>
absl::Status KernelLowering::EmitSplitLoop(int level, bool vector, int unroll, Body body) {
  const int64_t extent = program_.loop_extents[level];
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  loop_vars_[level] = i;
  x86::Gp stop = cc_.newGpq();
  if (level == 0) {
    cc_.mov(i, begin_);
    cc_.mov(stop, end_);
  } else {
    cc_.xor_(i.r32(), i.r32());
    cc_.mov(stop, extent);
  }
  if (vector && unroll > 1) {
    // `unroll` vectors per iteration while that many are left.
    const int64_t step = static_cast<int64_t>(unroll) * lanes_;
    x86::Gp last = cc_.newGpq();
    cc_.mov(last, stop);
    cc_.sub(last, step);
    Label skip = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.cmp(i, last);
    cc_.jg(skip);
    cc_.bind(head);
    copy_index_.assign(unroll, i);
    for (int u = 1; u < unroll; ++u) {
      copy_index_[u] = cc_.newGpq();
      cc_.lea(copy_index_[u], x86::ptr(i, u * lanes_));
    }
    copies_ = unroll;
    copy_vals_.assign(unroll, vals_);
    copy_accs_.assign(unroll, accs_);
    absl::Status status = body(Mode::kVector);
    copies_ = 1;
    loop_vars_[level] = i;
    XJIT_RETURN_IF_ERROR(status);
    cc_.add(i, step);
    cc_.cmp(i, last);
    cc_.jle(head);
    cc_.bind(skip);
  }
  if (vector) {
    // Vector iterations while at least `lanes_` elements are left.
    x86::Gp last = cc_.newGpq();
    cc_.mov(last, stop);
    cc_.sub(last, lanes_);
    Label skip = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.cmp(i, last);
    cc_.jg(skip);
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(body(Mode::kVector));
    cc_.add(i, lanes_);
    cc_.cmp(i, last);
    cc_.jle(head);
    cc_.bind(skip);
  }
  Label done = cc_.newLabel();
  Label head = cc_.newLabel();
  cc_.cmp(i, stop);
  cc_.jge(done);
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(body(Mode::kScalar));
  cc_.inc(i);
  cc_.cmp(i, stop);
  cc_.jl(head);
  cc_.bind(done);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitElementBlock(Mode mode) {
  const int level = program_.output_loops() - 1;
  XJIT_RETURN_IF_ERROR(ForEachCopy([&] { return EmitSectionAtLevel(level, mode, KSection::kPre); }));
  if (!any_stream_store_) return EmitPasses(mode);
  // The passes twice: with non-temporal stores where this row's output is
  // aligned for them, with ordinary stores (and the next row's output
  // prefetched for writing) where it is not. With peel_, three times: rows
  // that reach alignment after head_ > 0 elements take a third version
  // whose storing passes peel them; aligned rows keep the plain streaming
  // loops (compile-time bounds, no head). The same values in all.
  const x86::Gp misaligned = EmitStreamingCheck();
  Label ordinary = cc_.newLabel();
  Label peeled = cc_.newLabel();
  Label done = cc_.newLabel();
  cc_.test(misaligned, misaligned);
  cc_.jnz(ordinary);
  if (peel_) {
    cc_.test(head_, head_);
    cc_.jnz(peeled);
  }
  const std::vector<Val> vals = vals_;
  const absl::flat_hash_map<int64_t, Val> accs = accs_;
  streaming_ = true;
  absl::Status status = EmitPasses(mode);
  streaming_ = false;
  XJIT_RETURN_IF_ERROR(status);
  cc_.jmp(done);
  if (peel_) {
    cc_.bind(peeled);
    vals_ = vals;
    accs_ = accs;
    streaming_ = true;
    peeling_ = true;
    status = EmitPasses(mode);
    streaming_ = false;
    peeling_ = false;
    XJIT_RETURN_IF_ERROR(status);
    cc_.jmp(done);
  }
  cc_.bind(ordinary);
  vals_ = vals;
  accs_ = accs;
  XJIT_RETURN_IF_ERROR(EmitPasses(mode));
  cc_.bind(done);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitPasses(Mode mode) {
  const int level = program_.output_loops() - 1;
  for (pass_ = 0; pass_ < phases_.count; ++pass_) {
    if (phases_.count > 1) {
      in_pass_ = phases_.InPass(program_, pass_, carry_pass_.empty() ? nullptr : &carry_pass_);
    }
    XJIT_RETURN_IF_ERROR(EmitReductionLoops(static_cast<size_t>(level) + 1, mode));
    XJIT_RETURN_IF_ERROR(
        ForEachCopy([&] { return EmitSectionAtLevel(level, mode, KSection::kPost); }));
  }
  pass_ = 0;
  in_pass_.assign(program_.ops.size(), true);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitReductionLoops(size_t level, Mode mode) {
  const bool innermost = level + 1 == program_.loop_extents.size();
  if (innermost && strategy_ == Strategy::kRow) return EmitRowReduction();
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  loop_vars_[level] = i;
  Label head = cc_.newLabel();
  cc_.xor_(i.r32(), i.r32());
  cc_.bind(head);
  if (innermost) {
    XJIT_RETURN_IF_ERROR(ForEachCopy([&] { return EmitReductionBody(mode); }));
  } else {
    XJIT_RETURN_IF_ERROR(ForEachCopy(
        [&] { return EmitSectionAtLevel(static_cast<int>(level), mode, KSection::kBody); }));
    XJIT_RETURN_IF_ERROR(EmitReductionLoops(level + 1, mode));
  }
  cc_.inc(i);
  cc_.cmp(i, program_.loop_extents[level]);
  cc_.jl(head);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitReductionBody(Mode mode) {
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  XJIT_RETURN_IF_ERROR(EmitSectionAtLevel(inner, mode, KSection::kBody));
  return EmitAccumulatorWrites();
}

absl::Status KernelLowering::EmitAccumulatorWrites() {
  // A parallel copy: sources that are accumulator registers are copied
  // first, so a write never feeds another write of the same iteration.
  struct Pending {
    int64_t slot;
    Val source;
  };
  std::vector<Pending> pending;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (op.kind != KOpKind::kAccWrite || !in_pass_[id]) continue;
    Val source;
    if (vals_[op.a].in_vec) {
      source.in_vec = true;
      source.vec = vals_[op.a].vec;
    } else {
      source.gp = vals_[op.a].gp;
    }
    const Val& acc = accs_.at(op.imm);
    if (!acc.in_vec && source.in_vec) {
      source.in_vec = false;
      source.gp = AsRaw16(op.a, op.type);  // f16/bf16 accumulators hold raw bits.
    }
    pending.push_back({op.imm, source});
  }
  auto is_acc = [&](const Val& v) {
    for (const auto& [slot, acc] : accs_) {
      if (acc.in_vec == v.in_vec && (v.in_vec ? acc.vec.id() == v.vec.id()
                                              : acc.gp.id() == v.gp.id())) {
        return true;
      }
    }
    return false;
  };
  for (Pending& p : pending) {
    if (!is_acc(p.source)) continue;
    if (p.source.in_vec) {
      p.source.vec = Copy(p.source.vec);
    } else {
      x86::Gp t = NewGp();
      cc_.mov(t, p.source.gp);
      p.source.gp = t;
    }
  }
  for (const Pending& p : pending) {
    const Val& acc = accs_.at(p.slot);
    if (acc.in_vec) {
      if (acc.vec.id() != p.source.vec.id()) {
        V2(Inst::kIdMovaps, Inst::kIdVmovaps, acc.vec, p.source.vec);
      }
    } else if (acc.gp.id() != p.source.gp.id()) {
      cc_.mov(acc.gp, p.source.gp);
    }
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::FoldIntegerPartials(Opcode opcode, ElementType type,
                                                 const std::vector<x86::Vec>& partial,
                                                 x86::Gp acc) {
  const int width = BitWidth(type);
  mode_ = Mode::kVector;
  x86::Vec v = partial[0];
  for (size_t u = 1; u < partial.size(); ++u) {
    XJIT_RETURN_IF_ERROR(IntBinary(opcode, type, v, partial[u], false, &v));
  }
  if (v.isZmm()) {
    // Halves in ymm (the AVX2 code: zmm_ off while emitting them).
    x86::Ymm high = cc_.newYmm();
    cc_.vextracti64x4(high, v, 1);
    zmm_ = false;
    const absl::Status status = IntBinary(opcode, type, v.ymm(), high, false, &v);
    zmm_ = true;
    XJIT_RETURN_IF_ERROR(status);
  }
  mode_ = Mode::kScalar;
  if (v.isYmm()) {
    x86::Xmm high = cc_.newXmm();
    cc_.vextracti128(high, v.ymm(), 1);
    XJIT_RETURN_IF_ERROR(IntBinary(opcode, type, v.xmm(), high, false, &v));
  }
  // Halves of the remaining bytes, down to one lane.
  for (int bytes = 8; bytes >= width / 8; bytes /= 2) {
    x86::Xmm t = cc_.newXmm();
    if (features_.avx2) {
      cc_.vpsrldq(t, v.xmm(), bytes);
    } else {
      cc_.movdqa(t, v.xmm());
      cc_.psrldq(t, bytes);
    }
    XJIT_RETURN_IF_ERROR(IntBinary(opcode, type, v.xmm(), t, false, &v));
  }
  x86::Gp x = NewGp();
  if (width == 64) {
    features_.avx2 ? cc_.vmovq(x, v.xmm()) : cc_.movq(x, v.xmm());
  } else {
    features_.avx2 ? cc_.vmovd(x.r32(), v.xmm()) : cc_.movd(x.r32(), v.xmm());
    Normalize(x, type);
  }
  // Into the scalar accumulator (canonical form).
  const bool is_signed = IsSignedInteger(type);
  switch (opcode) {
    case Opcode::kAdd: cc_.add(acc, x); Normalize(acc, type); break;
    case Opcode::kMultiply: cc_.imul(acc, x); Normalize(acc, type); break;
    case Opcode::kAnd: cc_.and_(acc, x); break;
    case Opcode::kOr: cc_.or_(acc, x); break;
    case Opcode::kXor: cc_.xor_(acc, x); break;
    case Opcode::kMaximum:
      cc_.cmp(acc, x);
      is_signed ? cc_.cmovl(acc, x) : cc_.cmovb(acc, x);
      break;
    case Opcode::kMinimum:
      cc_.cmp(acc, x);
      is_signed ? cc_.cmovg(acc, x) : cc_.cmova(acc, x);
      break;
    default:
      return absl::InternalError("not an integer reduction op");
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitRowReduction() {
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  const int64_t extent = program_.loop_extents[inner];
  const bool f64 = vector_type_ == ElementType::kF64;
  struct Slot {
    int64_t slot;
    Opcode opcode;
    ElementType type;
    std::vector<x86::Vec> partial;
  };
  std::vector<Slot> slots;
  int body_ops = 0;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (!in_pass_[id]) continue;
    if (sections_[id] == KSection::kBody && !ScalarOnly(static_cast<int>(id))) ++body_ops;
    if (op.kind != KOpKind::kAccWrite) continue;
    const int combiner = RowCombiner(static_cast<int>(id));
    XJIT_CHECK(combiner >= 0);
    slots.push_back({op.imm, program_.ops[combiner].opcode, op.type, {}});
  }
  // Independent partial accumulators hide the combining op's latency;
  // fewer for large bodies (register pressure).
  const int unroll = body_ops <= 24 ? 4 : body_ops <= 80 ? 2 : 1;
  const int64_t step = static_cast<int64_t>(unroll) * lanes_;
  const int64_t main_end = extent / step * step;
  const int64_t vector_end = extent / lanes_ * lanes_;
  const absl::flat_hash_map<int64_t, Val> scalar_accs = accs_;
  // A pass of the peeling version (see peel_): the row's output reaches a
  // vector-aligned address after a head of elements, which run first, as
  // scalar iterations; then the vector loops from there, their bounds
  // checked at run time, and the scalar tail. The pass accumulates
  // nothing, so only where each element is computed changes, not its bits.
  const bool peeled = peeling_ && peel_pass_[static_cast<size_t>(pass_)];
  x86::Gp extent_reg;
  x86::Gp head_end;
  if (peeled) {
    // The head again (from the first streamed store, as the check did),
    // rather than a register kept live through the earlier passes; at most
    // the row (a short row runs all scalar).
    XJIT_CHECK(slots.empty());
    for (size_t id = 0; id < program_.ops.size() && !head_end.isValid(); ++id) {
      if (!stream_store_[id]) continue;
      head_end = EmitRowHead(EmitRowStoreAddress(static_cast<int>(id)),
                             program_.ops[id].operand_type == ElementType::kF64 ? 8 : 4);
    }
    extent_reg = cc_.newGpq();
    cc_.mov(extent_reg, extent);
    cc_.cmp(head_end, extent_reg);
    cc_.cmovg(head_end, extent_reg);
  }
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  cc_.xor_(i.r32(), i.r32());
  if (peeled) {
    loop_vars_[inner] = i;
    Label skip = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.test(head_end, head_end);
    cc_.jz(skip);
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitReductionBody(Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, head_end);
    cc_.jl(head);
    cc_.bind(skip);
  }

  // Values computed once per output element (scalar) that the vector body
  // reads are broadcast to every lane for the vector part.
  std::vector<std::pair<int, Val>> scalar_vals;
  mode_ = Mode::kVector;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (sections_[id] != KSection::kBody || ScalarOnly(static_cast<int>(id)) || !in_pass_[id]) {
      continue;
    }
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || sections_[operand] == KSection::kBody || ScalarOnly(operand)) {
        continue;
      }
      bool done = false;
      for (const auto& [done_id, unused] : scalar_vals) done = done || done_id == operand;
      if (done) continue;
      scalar_vals.push_back({operand, vals_[operand]});
      x86::Vec v;
      const ElementType type = program_.ops[operand].type;
      if (type == ElementType::kPred) {
        v = BroadcastLane0(PredToMask(vals_[operand].gp), lane_bits_);
      } else if ((type == ElementType::kF16 || type == ElementType::kBF16) &&
                 !vals_[operand].in_vec) {
        // Raw 16 bits: widened (scalar code) to the f32 the lanes hold.
        mode_ = Mode::kScalar;
        const x86::Vec f32 = Widen16(vals_[operand].gp, type);
        mode_ = Mode::kVector;
        v = BroadcastLane0(f32, lane_bits_);
      } else if (vals_[operand].in_vec) {
        v = BroadcastLane0(vals_[operand].vec, lane_bits_);
      } else {
        v = BroadcastGp(vals_[operand].gp, lane_bits_);
      }
      SetVec(operand, v);
    }
  }
  for (Slot& slot : slots) {
    for (int u = 0; u < unroll; ++u) {
      slot.partial.push_back(
          IsInteger(slot.type)
              ? IntConst(lane_bits_, ReductionIdentityBits(slot.opcode, slot.type))
              : Const(f64, ReductionIdentityBits(
                               slot.opcode, f64 ? ElementType::kF64 : ElementType::kF32)));
    }
  }
  // The main loop streams (see PlanRowStreaming): prefetches of the next
  // row in passes after the first, non-temporal stores.
  bool main_loop = false;
  auto vector_iteration = [&](int copies) -> absl::Status {
    for (int u = 0; u < copies; ++u) {
      x86::Gp iu = i;
      if (u > 0) {
        iu = cc_.newGpq();
        cc_.lea(iu, x86::ptr(i, u * lanes_));
      }
      loop_vars_[inner] = iu;
      for (Slot& slot : slots) {
        Val v;
        v.in_vec = true;
        v.vec = slot.partial[u];
        accs_[slot.slot] = v;
      }
      XJIT_RETURN_IF_ERROR(EmitReductionBody(Mode::kVector));
      // The next row's lines, one prefetch per 64 bytes, while this pass
      // computes from cache.
      if (main_loop && pass_ > 0 && (u * VecBytes()) % 64 == 0) EmitRowPrefetches();
    }
    return absl::OkStatus();
  };
  if (peeled) {
    // While `copies` whole vectors are left (i + copies * lanes <= extent).
    auto loop = [&](int copies) -> absl::Status {
      const int64_t length = static_cast<int64_t>(copies) * lanes_;
      if (extent < length) return absl::OkStatus();
      x86::Gp last = cc_.newGpq();
      cc_.mov(last, extent - length);
      Label skip = cc_.newLabel();
      Label head = cc_.newLabel();
      cc_.cmp(i, last);
      cc_.jg(skip);
      cc_.bind(head);
      main_loop = copies == unroll;
      const absl::Status status = vector_iteration(copies);
      main_loop = false;
      XJIT_RETURN_IF_ERROR(status);
      cc_.add(i, length);
      cc_.cmp(i, last);
      cc_.jle(head);
      cc_.bind(skip);
      return absl::OkStatus();
    };
    XJIT_RETURN_IF_ERROR(loop(unroll));
    if (unroll > 1) XJIT_RETURN_IF_ERROR(loop(1));
  } else if (main_end > 0) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    main_loop = true;
    const absl::Status status = vector_iteration(unroll);
    main_loop = false;
    XJIT_RETURN_IF_ERROR(status);
    cc_.add(i, step);
    cc_.cmp(i, main_end);
    cc_.jl(head);
  }
  if (!peeled && vector_end > main_end) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(vector_iteration(1));
    cc_.add(i, lanes_);
    cc_.cmp(i, vector_end);
    cc_.jl(head);
  }
  // Partials: pairwise into partial[0], then across lanes, then into the
  // scalar accumulator. An f16/bf16 sum or product rounds every combining
  // step to its type, in all the lanes the step writes (VecQuantize at
  // the width of the step's operands), as the reducer does.
  accs_ = scalar_accs;
  for (const auto& [id, val] : scalar_vals) vals_[id] = val;
  for (Slot& slot : slots) {
    if (IsInteger(slot.type)) {
      XJIT_RETURN_IF_ERROR(FoldIntegerPartials(slot.opcode, slot.type, slot.partial,
                                               accs_.at(slot.slot).gp));
      continue;
    }
    const bool round = (slot.type == ElementType::kF16 || slot.type == ElementType::kBF16) &&
                       (slot.opcode == Opcode::kAdd || slot.opcode == Opcode::kMultiply);
    // One combining step: a = a op b, rounded where the reducer rounds.
    auto combine = [&](x86::Vec a, x86::Vec b, x86::Vec* out) -> absl::Status {
      XJIT_RETURN_IF_ERROR(FloatBinary(slot.opcode, f64, a, b, out));
      if (round) *out = VecQuantize(*out, slot.type);
      return absl::OkStatus();
    };
    mode_ = Mode::kVector;
    x86::Vec v = slot.partial[0];
    for (int u = 1; u < unroll; ++u) {
      XJIT_RETURN_IF_ERROR(combine(v, slot.partial[u], &v));
    }
    if (v.isZmm()) {
      x86::Ymm high = cc_.newYmm();
      f64 ? cc_.vextractf64x4(high, v, 1) : cc_.vextractf32x8(high, v, 1);
      zmm_ = false;
      const absl::Status status = combine(v.ymm(), high, &v);
      zmm_ = true;
      XJIT_RETURN_IF_ERROR(status);
    }
    mode_ = Mode::kScalar;
    if (v.isYmm()) {
      x86::Xmm high = cc_.newXmm();
      cc_.vextractf128(high, v.ymm(), 1);
      XJIT_RETURN_IF_ERROR(combine(v.xmm(), high, &v));
    }
    x86::Vec t = cc_.newXmm();
    if (f64) {
      V3i(Inst::kIdShufpd, Inst::kIdVshufpd, t, v, v, 1);
      XJIT_RETURN_IF_ERROR(FloatBinary(slot.opcode, f64, v, t, &v));
    } else {
      V3(Inst::kIdMovhlps, Inst::kIdVmovhlps, t, v, v);
      XJIT_RETURN_IF_ERROR(combine(v, t, &v));
      x86::Vec t2 = cc_.newXmm();
      V3i(Inst::kIdShufps, Inst::kIdVshufps, t2, v, v, 0x55);
      XJIT_RETURN_IF_ERROR(combine(v, t2, &v));
    }
    const Val& acc = accs_.at(slot.slot);
    x86::Vec folded;
    if (!acc.in_vec) {
      // f16/bf16: the scalar accumulator holds raw bits; the sum or
      // product rounds (Quantize) as the scalar reducer's does.
      XJIT_RETURN_IF_ERROR(FloatBinary(slot.opcode, f64, Widen16(acc.gp, slot.type), v, &folded));
      if (round) folded = Quantize(folded, slot.type);
      cc_.mov(acc.gp, Raw16(folded, slot.type));
      continue;
    }
    XJIT_RETURN_IF_ERROR(FloatBinary(slot.opcode, f64, acc.vec, v, &folded));
    V2(Inst::kIdMovaps, Inst::kIdVmovaps, acc.vec, folded);
  }
  if (peeled) {
    loop_vars_[inner] = i;
    Label done = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.cmp(i, extent_reg);
    cc_.jge(done);
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitReductionBody(Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, extent_reg);
    cc_.jl(head);
    cc_.bind(done);
  } else if (vector_end < extent) {
    loop_vars_[inner] = i;
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitReductionBody(Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, extent);
    cc_.jl(head);
  }
  mode_ = Mode::kScalar;
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitAccOp(int id, Mode mode) {
  const KOp& op = program_.ops[id];
  switch (op.kind) {
    case KOpKind::kAccInit: {
      Val acc;
      if (mode == Mode::kVector || op.type == ElementType::kF32 ||
          op.type == ElementType::kF64) {
        acc.in_vec = true;
        acc.vec = Copy(vals_[op.a].vec);
      } else {
        const x86::Gp source =
            (op.type == ElementType::kF16 || op.type == ElementType::kBF16)
                ? AsRaw16(op.a, op.type) : vals_[op.a].gp;
        acc.gp = NewGp();
        cc_.mov(acc.gp, source);
      }
      accs_[op.imm] = acc;
      return absl::OkStatus();
    }
    case KOpKind::kAccRead:
    case KOpKind::kAccResult: {
      const Val& acc = accs_.at(op.imm);
      if (acc.in_vec) {
        SetVec(id, acc.vec);
      } else {
        SetGp(id, acc.gp);
      }
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("accumulator writes are emitted by EmitAccumulatorWrites");
  }
}

absl::Status KernelLowering::EmitOp(int id, Mode mode) {
  const KOp& op = program_.ops[id];
  if (mode == Mode::kVector && IsIndexValue(id)) {
    // The same for every lane: scalar code, read as an index.
    mode_ = Mode::kScalar;
    const absl::Status status = EmitOp(id, Mode::kScalar);
    mode_ = Mode::kVector;
    return status;
  }
  if (op_marks_ != nullptr) {
    op_marks_->emplace_back(cc_.newLabel(), id);
    cc_.bind(op_marks_->back().first);
  }
  if (IsIndexOp(op.kind)) {
    EmitIndexOp(id);
    return absl::OkStatus();
  }
  switch (op.kind) {
    case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
    case KOpKind::kAccResult:
      return EmitAccOp(id, mode);
    default:
      break;
  }
  if (mode == Mode::kVector && specialised_ && op.kind == KOpKind::kSelect &&
      uniform_.known[op.a] >= 0) {
    const int picked = uniform_.known[op.a] ? op.b : op.c;
    SetVec(id, IsMemSource(picked) ? VecReg(picked) : Copy(vals_[picked].vec));
    return absl::OkStatus();
  }
  if (!folded_compare_.empty() && folded_compare_[id]) return absl::OkStatus();
  if (!select_fold_.empty() && select_fold_[id] != 0) return EmitFoldedSelect(id, mode);
  if ((op.kind == KOpKind::kUnary || op.kind == KOpKind::kBinary) &&
      (op.type == ElementType::kF32 || op.type == ElementType::kF64) && IsExpandedMathOp(op)) {
    return EmitMathCall(id);
  }
  if (mode == Mode::kVector) return EmitVectorValueOp(id);
  return EmitScalarValueOp(id);
}

namespace {

TypeId VectorTypeId(bool f64, int bytes) {
  switch (bytes) {
    case 64: return f64 ? TypeId::kFloat64x8 : TypeId::kFloat32x16;
    case 32: return f64 ? TypeId::kFloat64x4 : TypeId::kFloat32x8;
    default: return f64 ? TypeId::kFloat64x2 : TypeId::kFloat32x4;
  }
}

}  // namespace

absl::Status KernelLowering::EmitMathCall(int id) {
  const KOp& op = program_.ops[id];
  const int bytes = mode_ == Mode::kVector ? VecBytes() : 0;
  XJIT_ASSIGN_OR_RETURN(const void* routine, MathRoutine(op.opcode, op.type, features_, bytes));
  const bool f64 = op.type == ElementType::kF64;
  const TypeId type = VectorTypeId(f64, bytes);
  FuncSignatureBuilder signature(CallConvId::kHost);
  signature.setRet(type);
  signature.addArg(type);
  if (op.b >= 0) signature.addArg(type);
  // Operands first: a deferred constant is loaded into a register.
  const x86::Vec a = mode_ == Mode::kVector ? VecReg(op.a) : vals_[op.a].vec;
  x86::Vec b;
  if (op.b >= 0) b = mode_ == Mode::kVector ? VecReg(op.b) : vals_[op.b].vec;
  InvokeNode* call = nullptr;
  cc_.invoke(&call, reinterpret_cast<uint64_t>(routine), signature);
  call->setArg(0, a);
  if (op.b >= 0) call->setArg(1, b);
  const x86::Vec result = NewVec();
  call->setRet(0, result);
  SetVec(id, result);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitMathRoutine(int vector_bytes) {
  XJIT_RETURN_IF_ERROR(ValidateProgram(program_));
  const ElementType type = program_.buffers[0].type;
  const bool f64 = type == ElementType::kF64;
  const int expected = features_.avx512 && vector_bytes == 64 ? 64 : features_.avx2 ? 32 : 16;
  if (vector_bytes != 0 && vector_bytes != expected) {
    return absl::InternalError(
        absl::StrCat("math routine of ", vector_bytes, " bytes for these features"));
  }
  const TypeId type_id = VectorTypeId(f64, vector_bytes);
  FuncSignatureBuilder signature(CallConvId::kHost);
  signature.setRet(type_id);
  const int inputs = program_.input_count();
  for (int k = 0; k < inputs; ++k) signature.addArg(type_id);
  FuncNode* func = cc_.addFunc(signature);
  // No vzeroupper on return: the result may be a ymm/zmm register.
  if (features_.avx2) func->frame().setAvxEnabled();
  if (features_.avx512) func->frame().setAvx512Enabled();

  const size_t n = program_.ops.size();
  index_value_.assign(n, false);
  levels_ = OpLevels(program_);
  sections_ = OpSections(program_);
  phases_ = ComputePhases(program_);
  in_pass_.assign(program_.ops.size(), true);
  per_copy_.assign(n, false);
  strides_ = InnerStrides(program_);
  vals_.assign(n, Val());
  vectorize_ = vector_bytes > 0;
  zmm_ = vector_bytes == 64;
  strategy_ = vectorize_ ? Strategy::kInner : Strategy::kNone;
  vector_type_ = type;
  lanes_ = vectorize_ ? vector_bytes * 8 / BitWidth(type) : 1;
  lane_bits_ = vectorize_ ? BitWidth(type) : 32;
  PlanVectorLoop();
  PlanMasks();
  PlanSelectFolds();
  const Mode mode = vectorize_ ? Mode::kVector : Mode::kScalar;
  mode_ = mode;
  std::vector<x86::Vec> args;
  for (int k = 0; k < inputs; ++k) {
    x86::Vec v = NewVec();
    func->setArg(k, v);
    args.push_back(v);
  }
  if (vectorize_) XJIT_RETURN_IF_ERROR(EmitHoisted());
  mode_ = mode;
  x86::Vec result;
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (IsIndexOp(op.kind)) continue;
    if (op.kind == KOpKind::kLoad) {
      // A copy: used directly, a zmm argument could be given a register
      // asmjit's argument shuffler then rejects (InvalidPhysId: f64 expm1,
      // sin and tan with AVX-512).
      SetVec(static_cast<int>(id), Copy(args.at(op.imm)));
      continue;
    }
    if (op.kind == KOpKind::kStore) {
      result = vectorize_ ? VecReg(op.b) : vals_[op.b].vec;
      continue;
    }
    if (vectorize_ && hoisted_[id]) continue;
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
  }
  if (!result.isValid()) return absl::InternalError("math routine without a result");
  cc_.ret(result);
  cc_.endFunc();
  return absl::OkStatus();
}

std::optional<int32_t> KernelLowering::IndexImmediate(int id) const {
  const KOp& op = program_.ops[id];
  if (op.kind != KOpKind::kIConst || op.imm < INT32_MIN || op.imm > INT32_MAX) return std::nullopt;
  return static_cast<int32_t>(op.imm);
}

x86::Gp KernelLowering::IndexRegister(int id) {
  const std::optional<int32_t> value = IndexImmediate(id);
  if (!value) return vals_[id].gp;
  x86::Gp t = NewGp();
  cc_.mov(t, *value);
  return t;
}

void KernelLowering::EmitSkipUnless(int predicate, Label skip) {
  const KOp& op = program_.ops[predicate];
  if (!skip_folded_[predicate]) {
    const x86::Gp value = vals_[predicate].gp;
    cc_.test(value, value);
    cc_.jz(skip);
    return;
  }
  if (op.kind == KOpKind::kIAnd) {
    EmitSkipUnless(op.a, skip);
    EmitSkipUnless(op.b, skip);
    return;
  }
  const std::optional<int32_t> b_imm = IndexImmediate(op.b);
  b_imm ? cc_.cmp(IndexRegister(op.a), *b_imm)
        : cc_.cmp(IndexRegister(op.a), IndexRegister(op.b));
  if (op.kind == KOpKind::kILt) {
    cc_.jge(skip);
  } else {
    cc_.jne(skip);
  }
}

void KernelLowering::EmitIndexOp(int id) {
  const KOp& op = program_.ops[id];
  // Branched on by its skip instead (EmitSkipUnless).
  if (!skip_folded_.empty() && skip_folded_[id]) return;

  // A constant operand that fits in 32 bits is the instruction's immediate,
  // or is moved into a register where it is used (cmov has no immediate
  // form): index constants are computed at the outermost level and would
  // otherwise hold a register across the whole loop nest, which in kernels
  // with many of them (a stencil's row bounds, a scatter's clamps) pushed
  // buffer pointers and constants to the stack.
  int first = op.a;
  int second = op.b;
  const bool commutes =
      op.kind == KOpKind::kIAdd || op.kind == KOpKind::kIMul || op.kind == KOpKind::kIAnd;
  if (commutes && IndexImmediate(first) && !IndexImmediate(second)) std::swap(first, second);
  auto reg = [&](int x) { return IndexRegister(x); };
  auto a = [&] { return reg(first); };
  auto b = [&] { return reg(second); };
  const std::optional<int32_t> second_imm =
      second >= 0 ? IndexImmediate(second) : std::nullopt;
  const bool b_imm = second_imm.has_value();
  const int32_t b_value = second_imm.value_or(0);
  x86::Gp d = NewGp();
  switch (op.kind) {
    case KOpKind::kLoopIndex:
      cc_.mov(d, loop_vars_[op.imm]);
      break;
    case KOpKind::kLoopEnd:
      cc_.mov(d, end_);
      break;
    case KOpKind::kSkipUnless:
      EmitSkipUnless(op.a, skip_to_[levels_[id] + 1]);
      return;
    case KOpKind::kIConst:
      cc_.mov(d, op.imm);
      break;
    // Sums as lea: three operands, so no copy of an operand that lives on
    // (a stencil's nine positions from one loop index).
    case KOpKind::kIAdd:
      b_imm ? cc_.lea(d, x86::ptr(a(), b_value)) : cc_.lea(d, x86::ptr(a(), b()));
      break;
    case KOpKind::kISub:
      if (b_imm && b_value != std::numeric_limits<int32_t>::min()) {
        cc_.lea(d, x86::ptr(a(), -b_value));
        break;
      }
      cc_.mov(d, a());
      b_imm ? cc_.sub(d, b_value) : cc_.sub(d, b());
      break;
    case KOpKind::kIMul:
      if (b_imm) {
        cc_.imul(d, a(), b_value);
        break;
      }
      cc_.mov(d, a());
      cc_.imul(d, b());
      break;
    case KOpKind::kIMin:
    case KOpKind::kIMax:
      cc_.mov(d, a());
      // A guard in a guarded vector loop is its operand (PlanGuardedLoads).
      if (mode_ == Mode::kVector && !identity_guard_.empty() && identity_guard_[id]) break;
      {
        const x86::Gp bound = b();
        cc_.cmp(d, bound);
        if (op.kind == KOpKind::kIMin) {
          cc_.cmovg(d, bound);
        } else {
          cc_.cmovl(d, bound);
        }
      }
      break;
    case KOpKind::kIDiv:
    case KOpKind::kIRem: {
      const int64_t divisor = op.imm;
      if ((divisor & (divisor - 1)) == 0) {
        int shift = 0;
        while ((int64_t{1} << shift) < divisor) ++shift;
        cc_.mov(d, a());
        if (op.kind == KOpKind::kIDiv) {
          cc_.shr(d, shift);
        } else {
          x86::Gp mask = NewGp();
          cc_.mov(mask, divisor - 1);
          cc_.and_(d, mask);
        }
        break;
      }
      x86::Gp hi = NewGp();
      x86::Gp lo = NewGp();
      x86::Gp divisor_reg = NewGp();
      cc_.mov(lo, a());
      cc_.xor_(hi.r32(), hi.r32());
      cc_.mov(divisor_reg, divisor);
      cc_.div(hi, lo, divisor_reg);
      cc_.mov(d, op.kind == KOpKind::kIDiv ? lo : hi);
      break;
    }
    case KOpKind::kILt:
    case KOpKind::kIEq:
      cc_.xor_(d.r32(), d.r32());
      b_imm ? cc_.cmp(a(), b_value) : cc_.cmp(a(), b());
      if (op.kind == KOpKind::kILt) {
        cc_.setl(d.r8());
      } else {
        cc_.sete(d.r8());
      }
      break;
    case KOpKind::kIAnd:
      cc_.mov(d, a());
      b_imm ? cc_.and_(d, b_value) : cc_.and_(d, b());
      break;
    default:
      XJIT_CHECK(false);
  }
  SetGp(id, d);
}

}  // namespace xjit::jit::x64
