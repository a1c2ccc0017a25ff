// KernelLowering (AArch64): function frame, loop nest, index arithmetic,
// accumulators and the choice between vector and scalar code (see
// a64_lowering.h).
#include "jit/a64/a64_lowering.h"

#include <algorithm>

#include "ir/status_macros.h"
#include "jit/kernel/row_carries.h"
#include "jit/kernel/vector_forms.h"

namespace xjit::jit::a64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.
namespace arm64 = asmjit::a64;
using asmjit::arm::CondCode;
using asmjit::a64::Gp;
using asmjit::a64::Vec;

namespace {

// Loop-invariant values kept in registers across a vector loop (of 32
// vector registers; asmjit spills beyond what fits).
constexpr int kHoistBudget = 20;
// Row programs: at most this many bytes of row scratch for carried values
// (PlanCarries), so that they stay in L1/L2 with the row.
constexpr int64_t kMaxCarryBytes = int64_t{48} << 10;

}  // namespace

KernelLowering::KernelLowering(arm64::Compiler* cc, const KernelProgram& program)
    : cc_(*cc), program_(program) {}

Gp KernelLowering::NewGp() { return cc_.newGpx(); }
Vec KernelLowering::NewVec() { return cc_.newVecQ(); }

void KernelLowering::SetGp(int id, Gp g) {
  vals_[id].gp = g;
  vals_[id].in_vec = false;
}

void KernelLowering::SetVec(int id, Vec v) {
  vals_[id].vec = v;
  vals_[id].in_vec = true;
}

void KernelLowering::MovImm(Gp g, uint64_t value) {
  // movz + movk per non-zero 16-bit chunk (movn for small negatives).
  if (static_cast<int64_t>(value) < 0 && static_cast<int64_t>(value) >= -65536) {
    cc_.movn(g, Imm(~value & 0xFFFF));
    return;
  }
  cc_.movz(g, Imm(value & 0xFFFF));
  for (int k = 1; k < 4; ++k) {
    const uint64_t chunk = (value >> (16 * k)) & 0xFFFF;
    if (chunk != 0) cc_.movk(g, Imm(chunk), Imm(arm64::lsl(16 * k)));
  }
}

Gp KernelLowering::ElementAddress(int buffer, int position_op, int element_bytes) {
  uint32_t shift = 0;
  while ((1 << shift) < element_bytes) ++shift;
  Gp address = NewGp();
  cc_.add(address, buffers_[buffer], vals_[position_op].gp, Imm(arm64::lsl(shift)));
  return address;
}

bool KernelLowering::Vectorizable() {
  if (program_.loop_extents.empty() || program_.reduction_loops > 0) return false;
  const std::vector<bool> all(program_.ops.size(), true);
  if (!VectorizableOps(all, all, strides_)) return false;
  return program_.loop_extents.back() >= lanes_;
}

bool KernelLowering::VectorizableOps(const std::vector<bool>& include,
                                     const std::vector<bool>& inside,
                                     const std::vector<std::optional<int64_t>>& strides) {
  // The forms every target has (jit/kernel/vector_forms.h), plus what NEON adds:
  // fmla for kFma, per-lane shifts of every width (ushl/sshl), and
  // conversions between a float type and integers of its width.
  LaneType lanes;
  bool any_value = false;
  auto is_float = [](ElementType t) { return t == ElementType::kF32 || t == ElementType::kF64; };
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    if (!include[i]) continue;
    // An index value is scalar code computed outside the vector loop, so it
    // must not move along it.
    if (IsIndexValue(static_cast<int>(i)) && strides[i] != 0) return false;
    if (ScalarOnly(static_cast<int>(i))) continue;
    any_value = true;
    // Values from outside (computed before the loop) are broadcast.
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || inside[operand] || ScalarOnly(operand)) continue;
      if (!lanes.Add(program_.ops[operand].type)) return false;
    }
    if (!HasVectorAccess(op, strides)) return false;
    switch (op.kind) {
      case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
      case KOpKind::kAccResult: case KOpKind::kLoad: case KOpKind::kFromIndex:
      case KOpKind::kSelect:
        if (!lanes.Add(op.type)) return false;
        break;
      case KOpKind::kStore:
        if (!lanes.Add(op.operand_type)) return false;
        break;
      case KOpKind::kConst: case KOpKind::kBits: case KOpKind::kBitShift: case KOpKind::kFma:
        if (!is_float(op.type) || !lanes.Add(op.type)) return false;
        break;
      case KOpKind::kUnary:
        if (IsPred(op.type) && IsPred(op.operand_type) && op.opcode == Opcode::kNot) break;
        if (op.operand_type != op.type || !lanes.Add(op.type)) return false;
        if (!HasVectorUnary(op.type, op.opcode)) return false;
        break;
      case KOpKind::kBinary:
        if (!lanes.Add(op.type) || !HasVectorBinary(op.type, op.opcode)) return false;
        break;
      case KOpKind::kCompare:
        // Preds compare as masks, unsigned (true = all ones).
        if (!lanes.Add(op.operand_type) || !HasVectorCompare(op)) return false;
        break;
      case KOpKind::kClamp:
        if (IsPred(op.type) || !lanes.Add(op.type)) return false;
        break;
      case KOpKind::kConvert: {
        const ElementType from = op.operand_type;
        const ElementType to = op.type;
        if (!lanes.Add(from) || !lanes.Add(to)) return false;  // Same lane width.
        // Between integers of one width, pred and anything, float <-> int of
        // its width (fcvtzs/fcvtzu saturate and map NaN to 0, as XLA).
        const bool ok = from == to || (IsInteger(from) && IsInteger(to)) || IsPred(from) ||
                        IsPred(to) || (is_float(from) && IsInteger(to)) ||
                        (IsInteger(from) && is_float(to));
        if (!ok) return false;
        break;
      }
      case KOpKind::kBitcast:
        if (IsPred(op.type) || IsPred(op.operand_type)) return false;
        if (!lanes.Add(op.operand_type) || !lanes.Add(op.type)) return false;
        break;
      default:
        return false;
    }
  }
  if (!any_value) return false;
  vector_type_ = lanes.type();
  lane_bits_ = lanes.width();
  lanes_ = 128 / lane_bits_;
  return true;
}

bool KernelLowering::ColumnVectorizable() {
  if (program_.reduction_loops == 0 || program_.output_loops() < 1) return false;
  const int level = program_.output_loops() - 1;
  const std::vector<std::optional<int64_t>> strides = StridesAlong(program_, level);
  const std::vector<bool> all(program_.ops.size(), true);
  if (!VectorizableOps(all, all, strides)) return false;
  if (program_.loop_extents[level] < lanes_) return false;
  strides_ = strides;
  return true;
}

bool KernelLowering::RowVectorizable() {
  if (program_.reduction_loops == 0) return false;
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  const std::vector<std::optional<int64_t>> strides = StridesAlong(program_, inner);
  row_body_.assign(program_.ops.size(), false);
  row_combiner_.clear();
  const std::vector<int> uses = UseCounts(program_);
  // Depends on an accumulator read (other than through its combiner).
  std::vector<bool> reads_acc(program_.ops.size(), false);
  std::vector<bool> combiners(program_.ops.size(), false);
  for (const KOp& op : program_.ops) {
    if (op.kind == KOpKind::kAccWrite) combiners[op.a] = true;
  }
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (levels_[id] != inner || sections_[id] != KSection::kBody) {
      if (op.kind == KOpKind::kAccWrite || op.kind == KOpKind::kAccRead) return false;
      continue;
    }
    if (op.kind == KOpKind::kAccRead) {
      reads_acc[id] = true;
      continue;
    }
    if (op.kind == KOpKind::kAccWrite) {
      const KOp& update = program_.ops[op.a];
      if (update.kind != KOpKind::kBinary || update.type != op.type) return false;
      const int a = update.a;
      const int b = update.b;
      const bool a_acc = program_.ops[a].kind == KOpKind::kAccRead && program_.ops[a].imm == op.imm;
      const bool b_acc = program_.ops[b].kind == KOpKind::kAccRead && program_.ops[b].imm == op.imm;
      if (a_acc == b_acc) return false;
      const int acc = a_acc ? a : b;
      const int x = a_acc ? b : a;
      if (reads_acc[x] || uses[acc] != 1 || uses[op.a] != 1) return false;
      const ElementType t = op.type;
      switch (update.opcode) {
        case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
          break;
        case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
          if (!IsInteger(t)) return false;
          break;
        default:
          return false;
      }
      if (!(t == ElementType::kF32 || t == ElementType::kF64 || IsInteger(t))) return false;
      row_combiner_[op.imm] = update.opcode;
      continue;
    }
    // Only the combiners read accumulators (checked at their writes: their
    // accumulator operand has no other use, their other operand reads none).
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && reads_acc[operand] && !combiners[id]) return false;
    }
    row_body_[id] = !ScalarOnly(static_cast<int>(id));
  }
  // A row program's passes all run the row strategy; a pass that only
  // stores (no accumulator) runs its elements in the same loop shape.
  if (row_combiner_.empty()) return false;
  // Every accumulator read must feed its combiner.
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (!row_body_[id] || op.kind != KOpKind::kBinary) continue;
    for (int operand : {op.a, op.b}) {
      if (program_.ops[operand].kind != KOpKind::kAccRead) continue;
      auto it = row_combiner_.find(program_.ops[operand].imm);
      if (it == row_combiner_.end()) return false;
    }
  }
  // The accumulator reads feeding the combiners are vector accumulators;
  // values from before the loop are broadcast.
  std::vector<bool> inside = row_body_;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (program_.ops[id].kind == KOpKind::kAccRead && levels_[id] == inner) inside[id] = true;
  }
  if (!VectorizableOps(row_body_, inside, strides)) return false;
  if (program_.loop_extents.back() < lanes_) return false;
  strides_ = strides;
  return true;
}

absl::Status KernelLowering::Emit(int* lanes) {
  FuncNode* func =
      cc_.addFunc(FuncSignatureT<void, void* const*, int64_t, int64_t>(CallConvId::kHost));
  Gp args = cc_.newGpx("buffers");
  func->setArg(0, args);
  begin_ = cc_.newGpx("begin");
  end_ = cc_.newGpx("end");
  func->setArg(1, begin_);
  func->setArg(2, end_);

  XJIT_RETURN_IF_ERROR(ValidateProgram(program_));
  index_value_ = IndexValueOps(program_);
  levels_ = OpLevels(program_, index_value_);
  sections_ = OpSections(program_);
  phases_ = ComputePhases(program_);
  in_pass_.assign(program_.ops.size(), true);
  strides_ = InnerStrides(program_);
  vals_.assign(program_.ops.size(), Val());
  hoisted_.assign(program_.ops.size(), false);
  hoisted_vals_.assign(program_.ops.size(), Val());
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    Gp pointer = NewGp();
    cc_.ldr(pointer, arm64::ptr(args, static_cast<int32_t>(8 * b)));
    buffers_.push_back(pointer);
  }
  vectorize_ = Vectorizable();
  // The column strategy runs one pass over the reduced elements per group
  // of outputs; row programs need several.
  column_ = !vectorize_ && phases_.count == 1 && ColumnVectorizable();
  row_ = !vectorize_ && !column_ && RowVectorizable();
  if (!vectorize_ && !row_ && !column_) lanes_ = 1;
  *lanes = lanes_;
  PlanCarries();
  PlanInPlace();

  bool empty = false;
  for (int64_t extent : program_.loop_extents) empty = empty || extent == 0;
  if (!empty) {
    if (program_.loop_extents.empty()) {
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
    } else {
      Label done = cc_.newLabel();
      cc_.cmp(begin_, end_);
      cc_.b_ge(done);
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
      XJIT_RETURN_IF_ERROR(EmitLoops(0));
      cc_.bind(done);
    }
  }
  cc_.endFunc();
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitLoops(size_t level) {
  loop_vars_.resize(program_.loop_extents.size());
  const bool element_loop =
      program_.reduction_loops > 0 && static_cast<int>(level) + 1 == program_.output_loops();
  if (!element_loop && level + 1 == program_.loop_extents.size()) return EmitInnerLoop(level);
  if (element_loop && column_) return EmitColumnLoop(level);
  auto [i, stop] = LoopBounds(level);
  Label head = cc_.newLabel();
  cc_.bind(head);
  if (element_loop) {
    XJIT_RETURN_IF_ERROR(EmitElementBlock());
  } else {
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
    XJIT_RETURN_IF_ERROR(EmitLoops(level + 1));
  }
  cc_.add(i, i, 1);
  cc_.cmp(i, stop);
  cc_.b_lt(head);
  return absl::OkStatus();
}

// The outermost loop runs the caller's range [begin, end), never empty
// here; inner ones their whole extent (positive: empty nests emit no loops).
std::pair<Gp, Gp> KernelLowering::LoopBounds(size_t level) {
  Gp i = NewGp();
  loop_vars_[level] = i;
  Gp stop = NewGp();
  if (level == 0) {
    cc_.mov(i, begin_);
    cc_.mov(stop, end_);
  } else {
    cc_.mov(i, arm64::xzr);
    MovImm(stop, static_cast<uint64_t>(program_.loop_extents[level]));
  }
  return {i, stop};
}

absl::Status KernelLowering::EmitInnerLoop(size_t level) {
  auto [i, stop] = LoopBounds(level);
  if (vectorize_) {
    // Vector iterations over the largest multiple of lanes_ elements, then
    // the scalar tail; both compute the same bits per element.
    Gp vector_end = NewGp();
    cc_.sub(vector_end, stop, i);
    cc_.and_(vector_end, vector_end, Imm(~static_cast<uint64_t>(lanes_ - 1)));
    cc_.add(vector_end, vector_end, i);
    Label skip = cc_.newLabel();
    cc_.cmp(i, vector_end);
    cc_.b_ge(skip);
    XJIT_RETURN_IF_ERROR(Hoist(static_cast<int>(level)));
    Label head = cc_.newLabel();
    cc_.bind(head);
    in_place_ = true;
    in_place_level_ = static_cast<int>(level);
    const absl::Status body = EmitOpsAtLevel(static_cast<int>(level), Mode::kVector);
    in_place_ = false;
    XJIT_RETURN_IF_ERROR(body);
    cc_.add(i, i, lanes_);
    cc_.cmp(i, vector_end);
    cc_.b_lt(head);
    cc_.bind(skip);
  }
  Label done = cc_.newLabel();
  Label head = cc_.newLabel();
  cc_.cmp(i, stop);
  cc_.b_ge(done);
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
  cc_.add(i, i, 1);
  cc_.cmp(i, stop);
  cc_.b_lt(head);
  cc_.bind(done);
  return absl::OkStatus();
}

namespace {

// Operations whose vector result is a new register, written by their own
// instruction (so an in-place user may overwrite it once it dies).
bool OwnVectorResult(const KOp& op) {
  const bool is_float = op.type == ElementType::kF32 || op.type == ElementType::kF64;
  switch (op.kind) {
    case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift: case KOpKind::kSelect:
      return true;
    case KOpKind::kLoad:
      return !IsPred(op.type);
    case KOpKind::kUnary: case KOpKind::kBinary:
      return is_float;
    case KOpKind::kCompare:
      return op.operand_type == ElementType::kF32 || op.operand_type == ElementType::kF64;
    default:
      return false;
  }
}

// Users whose vector value may be their operand's register itself.
bool AliasingUser(const KOp& op) {
  return op.kind == KOpKind::kBitcast || op.kind == KOpKind::kConvert;
}

}  // namespace

void KernelLowering::PlanInPlace() {
  const size_t n = program_.ops.size();
  last_user_.assign(n, -1);
  own_register_.assign(n, false);
  if (!vectorize_ && !row_) return;
  std::vector<bool> aliased(n, false);
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program_.ops[id];
    if (ScalarOnly(static_cast<int>(id))) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || ScalarOnly(operand)) continue;
      last_user_[operand] = static_cast<int>(id);
      if (AliasingUser(op)) aliased[operand] = true;
    }
  }
  for (size_t id = 0; id < n; ++id) {
    own_register_[id] = !aliased[id] && !ScalarOnly(static_cast<int>(id)) &&
                        OwnVectorResult(program_.ops[id]);
  }
}

bool KernelLowering::Killable(int operand, int user) const {
  return in_place_ && mode_ == Mode::kVector && operand >= 0 && own_register_[operand] &&
         last_user_[operand] == user && levels_[operand] == in_place_level_ &&
         !hoisted_[operand] && vals_[operand].in_vec;
}

absl::Status KernelLowering::Hoist(int level) {
  mode_ = Mode::kVector;
  int budget = kHoistBudget;
  for (size_t id = 0; id < program_.ops.size() && budget > 0; ++id) {
    const KOp& op = program_.ops[id];
    if (levels_[id] != level || ScalarOnly(static_cast<int>(id)) || op.kind == KOpKind::kStore) {
      continue;
    }
    if (strides_[id] != 0) continue;
    bool ready = true;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0) continue;
      const bool outer_index = ScalarOnly(operand) && levels_[operand] < level;
      ready = ready && (outer_index || hoisted_[operand]);
    }
    if (!ready) continue;
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), Mode::kVector));
    hoisted_[id] = true;
    hoisted_vals_[id] = vals_[id];
    --budget;
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitOpsAtLevel(int level, Mode mode) {
  mode_ = mode;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (levels_[id] != level) continue;
    if (mode == Mode::kVector && hoisted_[id]) {
      vals_[id] = hoisted_vals_[id];
      continue;
    }
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitSectionAtLevel(int level, KSection section) {
  mode_ = block_mode_;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (levels_[id] != level || sections_[id] != section) continue;
    if (program_.ops[id].kind == KOpKind::kAccWrite) continue;
    if (section == KSection::kBody && !in_pass_[id]) continue;
    if (section == KSection::kPost && phases_.stage[id] != pass_ + 1) continue;
    if (section == KSection::kBody) {
      XJIT_RETURN_IF_ERROR(EmitBodyOp(static_cast<int>(id), block_mode_));
      continue;
    }
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), block_mode_));
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitBodyOp(int id, Mode mode) {
  if (!carry_pass_.empty() && carry_pass_[id] >= 0 && carry_pass_[id] != pass_) {
    return EmitCarry(id, mode, /*store=*/false);
  }
  XJIT_RETURN_IF_ERROR(EmitOp(id, mode));
  if (!carry_pass_.empty() && carry_pass_[id] == pass_) {
    return EmitCarry(id, mode, /*store=*/true);
  }
  return absl::OkStatus();
}

void KernelLowering::PlanCarries() {
  carry_pass_.clear();
  carry_base_.clear();
  if (!row_) return;
  RowCarryPlan plan = PlanRowCarries(program_, phases_, sections_,
                                     [this](int id) { return ScalarOnly(id); }, kMaxCarryBytes);
  if (plan.bytes == 0) return;
  carry_pass_ = std::move(plan.carried_from);
  // One base register per carried value (their offsets exceed what load
  // and store immediates encode), set once for the whole kernel.
  const arm64::Mem scratch = cc_.newStack(static_cast<uint32_t>(plan.bytes), 16);
  Gp base = NewGp();
  cc_.loadAddressOf(base, scratch);
  for (size_t id = 0; id < carry_pass_.size(); ++id) {
    if (carry_pass_[id] < 0) continue;
    Gp at = NewGp();
    MovImm(at, static_cast<uint64_t>(plan.offset[id]));
    cc_.add(at, at, base);
    carry_base_[static_cast<int>(id)] = at;
  }
}

absl::Status KernelLowering::EmitCarry(int id, Mode mode, bool store) {
  const bool f64 = program_.ops[id].type == ElementType::kF64;
  const int inner = static_cast<int>(program_.loop_extents.size()) - 1;
  Gp address = NewGp();
  cc_.add(address, carry_base_.at(id), loop_vars_[inner], Imm(arm64::lsl(f64 ? 3 : 2)));
  mode_ = mode;
  if (store) {
    if (!vals_[id].in_vec) return absl::InternalError("carried value not in a vector register");
    const Vec v = vals_[id].vec;
    if (mode == Mode::kVector) {
      cc_.str(v.q(), arm64::ptr(address));
    } else if (f64) {
      cc_.str(v.d(), arm64::ptr(address));
    } else {
      cc_.str(v.s(), arm64::ptr(address));
    }
    return absl::OkStatus();
  }
  Vec v = NewVec();
  if (mode == Mode::kVector) {
    cc_.ldr(v.q(), arm64::ptr(address));
  } else if (f64) {
    cc_.ldr(v.d(), arm64::ptr(address));
  } else {
    cc_.ldr(v.s(), arm64::ptr(address));
  }
  SetVec(id, v);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitColumnLoop(size_t level) {
  // `lanes_` output elements at once, each lane its own accumulator
  // visiting its reduced elements in program order (the scalar code's
  // results exactly), then the scalar tail.
  auto [i, stop] = LoopBounds(level);
  Gp vector_end = NewGp();
  cc_.sub(vector_end, stop, i);
  cc_.and_(vector_end, vector_end, Imm(~static_cast<uint64_t>(lanes_ - 1)));
  cc_.add(vector_end, vector_end, i);
  Label skip = cc_.newLabel();
  cc_.cmp(i, vector_end);
  cc_.b_ge(skip);
  Label vector_head = cc_.newLabel();
  cc_.bind(vector_head);
  block_mode_ = Mode::kVector;
  absl::Status status = EmitElementBlock();
  block_mode_ = Mode::kScalar;
  XJIT_RETURN_IF_ERROR(status);
  cc_.add(i, i, lanes_);
  cc_.cmp(i, vector_end);
  cc_.b_lt(vector_head);
  cc_.bind(skip);
  Label done = cc_.newLabel();
  Label head = cc_.newLabel();
  cc_.cmp(i, stop);
  cc_.b_ge(done);
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitElementBlock());
  cc_.add(i, i, 1);
  cc_.cmp(i, stop);
  cc_.b_lt(head);
  cc_.bind(done);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitElementBlock() {
  const int level = program_.output_loops() - 1;
  XJIT_RETURN_IF_ERROR(EmitSectionAtLevel(level, KSection::kPre));
  return EmitPasses();
}

absl::Status KernelLowering::EmitPasses() {
  const int level = program_.output_loops() - 1;
  for (pass_ = 0; pass_ < phases_.count; ++pass_) {
    if (phases_.count > 1) {
      in_pass_ = phases_.InPass(program_, pass_, carry_pass_.empty() ? nullptr : &carry_pass_);
    }
    XJIT_RETURN_IF_ERROR(EmitReductionLoops(static_cast<size_t>(level) + 1));
    XJIT_RETURN_IF_ERROR(EmitSectionAtLevel(level, KSection::kPost));
  }
  pass_ = 0;
  in_pass_.assign(program_.ops.size(), true);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitReductionLoops(size_t level) {
  const bool innermost = level + 1 == program_.loop_extents.size();
  if (innermost && row_) return EmitRowReduction(level);
  Gp i = NewGp();
  loop_vars_[level] = i;
  Gp stop = NewGp();
  cc_.mov(i, arm64::xzr);
  MovImm(stop, static_cast<uint64_t>(program_.loop_extents[level]));
  Label head = cc_.newLabel();
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitSectionAtLevel(static_cast<int>(level), KSection::kBody));
  if (innermost) {
    XJIT_RETURN_IF_ERROR(EmitAccumulatorWrites());
  } else {
    XJIT_RETURN_IF_ERROR(EmitReductionLoops(level + 1));
  }
  cc_.add(i, i, 1);
  cc_.cmp(i, stop);
  cc_.b_lt(head);
  return absl::OkStatus();
}

absl::Status KernelLowering::CombineScalar(Opcode opcode, ElementType type, const Val& x,
                                           Val* acc) {
  mode_ = Mode::kScalar;
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    Vec r;
    XJIT_RETURN_IF_ERROR(FloatBinary(opcode, type == ElementType::kF64, acc->vec, x.vec, &r));
    cc_.mov(acc->vec.b16(), r.b16());
    return absl::OkStatus();
  }
  const bool is_signed = IsSignedInteger(type);
  const Gp a = acc->gp;
  const Gp b = x.gp;
  Gp d = NewGp();
  switch (opcode) {
    case Opcode::kAdd: cc_.add(d, a, b); break;
    case Opcode::kMultiply: cc_.mul(d, a, b); break;
    case Opcode::kAnd: cc_.and_(d, a, b); break;
    case Opcode::kOr: cc_.orr(d, a, b); break;
    case Opcode::kXor: cc_.eor(d, a, b); break;
    case Opcode::kMaximum:
      cc_.cmp(a, b);
      cc_.csel(d, a, b, Imm(is_signed ? CondCode::kGT : CondCode::kHI));
      break;
    case Opcode::kMinimum:
      cc_.cmp(a, b);
      cc_.csel(d, a, b, Imm(is_signed ? CondCode::kLT : CondCode::kLO));
      break;
    default:
      return absl::InternalError("not a reduction combiner");
  }
  Normalize(d, type);
  cc_.mov(acc->gp, d);
  return absl::OkStatus();
}

absl::Status KernelLowering::CombineVector(Opcode opcode, ElementType type, Vec acc, Vec x) {
  mode_ = Mode::kVector;
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    const bool f64 = type == ElementType::kF64;
    switch (opcode) {
      case Opcode::kAdd: cc_.fadd(F(acc, f64), F(acc, f64), F(x, f64)); break;
      case Opcode::kMultiply: cc_.fmul(F(acc, f64), F(acc, f64), F(x, f64)); break;
      // fmax/fmin: XLA's maximum and minimum exactly (see FloatBinary).
      case Opcode::kMaximum: cc_.fmax(F(acc, f64), F(acc, f64), F(x, f64)); break;
      case Opcode::kMinimum: cc_.fmin(F(acc, f64), F(acc, f64), F(x, f64)); break;
      default: return absl::InternalError("not a float reduction combiner");
    }
    return absl::OkStatus();
  }
  const int w = lane_bits_;
  const bool is_signed = IsSignedInteger(type);
  switch (opcode) {
    case Opcode::kAdd: cc_.add(I(acc, w), I(acc, w), I(x, w)); break;
    case Opcode::kAnd: cc_.and_(acc.b16(), acc.b16(), x.b16()); break;
    case Opcode::kOr: cc_.orr(acc.b16(), acc.b16(), x.b16()); break;
    case Opcode::kXor: cc_.eor(acc.b16(), acc.b16(), x.b16()); break;
    case Opcode::kMultiply:
      if (w == 64) {
        cc_.mov(acc.b16(), Multiply64(acc, x).b16());
      } else {
        cc_.mul(I(acc, w), I(acc, w), I(x, w));
      }
      break;
    case Opcode::kMaximum:
    case Opcode::kMinimum:
      cc_.mov(acc.b16(), IntMaxMin(opcode == Opcode::kMaximum, is_signed, acc, x).b16());
      break;
    default:
      return absl::InternalError("not an integer reduction combiner");
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitRowReduction(size_t level) {
  const int inner = static_cast<int>(level);
  const int64_t extent = program_.loop_extents[level];
  const int64_t vector_end = extent / lanes_ * lanes_;  // >= lanes_ (RowVectorizable).
  const int w = lane_bits_;
  Gp i = NewGp();
  loop_vars_[level] = i;
  cc_.mov(i, arm64::xzr);
  // Values from before the loop, broadcast (their scalar values are put
  // back for the tail).
  mode_ = Mode::kVector;
  const std::vector<Val> scalar_vals = vals_;
  std::vector<bool> broadcast(program_.ops.size(), false);
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (!row_body_[id] || !in_pass_[id]) continue;
    const KOp& op = program_.ops[id];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || row_body_[operand] || broadcast[operand]) continue;
      const KOp& source = program_.ops[operand];
      if (ScalarOnly(operand) || source.kind == KOpKind::kAccRead) continue;
      const Val v = scalar_vals[operand];
      Vec d;
      if (v.in_vec) {
        d = NewVec();
        if (w == 64) {
          cc_.dup(d.d2(), v.vec.d(0));
        } else {
          cc_.dup(d.s4(), v.vec.s(0));
        }
      } else if (IsPred(source.type)) {
        Gp m = NewGp();
        cc_.neg(m, v.gp);  // 0/1 to a mask.
        d = Dup(m, w);
      } else {
        d = Dup(v.gp, w);
      }
      vals_[operand].vec = d;
      vals_[operand].in_vec = true;
      broadcast[operand] = true;
    }
  }
  // The slots this pass accumulates (all of them in a one-pass program).
  absl::flat_hash_map<int64_t, ElementType> slot_types;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (op.kind == KOpKind::kAccWrite && in_pass_[id]) slot_types[op.imm] = op.type;
  }
  std::vector<std::pair<int64_t, Opcode>> combiners;
  for (const auto& [slot, opcode] : row_combiner_) {
    if (slot_types.contains(slot)) combiners.push_back({slot, opcode});
  }
  std::sort(combiners.begin(), combiners.end());
  // The combining operation of each slot of this pass (by op id) and the
  // value it combines.
  absl::flat_hash_map<int, std::pair<int64_t, int>> combiner_ops;
  int body_ops = 0;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    const KOp& op = program_.ops[id];
    if (!in_pass_[id] || levels_[id] != inner || sections_[id] != KSection::kBody) continue;
    if (!ScalarOnly(static_cast<int>(id))) ++body_ops;
    if (op.kind != KOpKind::kAccWrite) continue;
    const KOp& update = program_.ops[op.a];
    const bool a_acc = program_.ops[update.a].kind == KOpKind::kAccRead;
    combiner_ops[op.a] = {op.imm, a_acc ? update.b : update.a};
  }
  // Independent partial accumulators hide the combining operation's
  // latency (fadd 2-4 cycles, a loop-carried chain); fewer for large
  // bodies, which have enough independent work (and use more registers).
  const int unroll = body_ops <= 24 ? 4 : body_ops <= 80 ? 2 : 1;
  const int64_t step = int64_t{unroll} * lanes_;
  const int64_t main_end = extent / step * step;
  std::vector<absl::flat_hash_map<int64_t, Vec>> partial(static_cast<size_t>(unroll));
  for (const auto& [slot, opcode] : combiners) {
    for (int u = 0; u < unroll; ++u) {
      partial[u][slot] = ConstVec(w, ReductionIdentityBits(opcode, slot_types.at(slot)));
    }
  }
  // `copies` consecutive vectors from i, copy u into partial[u]; each
  // combining operation writes its accumulator in place (no copy).
  auto vector_iteration = [&](int copies) -> absl::Status {
    for (int u = 0; u < copies; ++u) {
      Gp iu = i;
      if (u > 0) {
        iu = NewGp();
        cc_.add(iu, i, u * lanes_);
      }
      loop_vars_[level] = iu;
      row_accs_ = partial[u];
      mode_ = Mode::kVector;
      for (size_t id = 0; id < program_.ops.size(); ++id) {
        if (levels_[id] != inner || sections_[id] != KSection::kBody || !in_pass_[id]) continue;
        const KOp& op = program_.ops[id];
        if (op.kind == KOpKind::kAccWrite) continue;
        if (op.kind == KOpKind::kAccRead) {
          vals_[id].vec = row_accs_.at(op.imm);
          vals_[id].in_vec = true;
          continue;
        }
        if (auto it = combiner_ops.find(static_cast<int>(id)); it != combiner_ops.end()) {
          const auto& [slot, x] = it->second;
          own_register_[id] = false;  // Its value is the partial accumulator.
          XJIT_RETURN_IF_ERROR(CombineVector(op.opcode, op.type, row_accs_.at(slot), vals_[x].vec));
          SetVec(static_cast<int>(id), row_accs_.at(slot));
          continue;
        }
        in_place_ = true;
        in_place_level_ = inner;
        const absl::Status emitted = EmitBodyOp(static_cast<int>(id), Mode::kVector);
        in_place_ = false;
        XJIT_RETURN_IF_ERROR(emitted);
      }
    }
    loop_vars_[level] = i;
    return absl::OkStatus();
  };
  if (main_end > 0) {
    Gp end = NewGp();
    MovImm(end, static_cast<uint64_t>(main_end));
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(vector_iteration(unroll));
    cc_.add(i, i, step);
    cc_.cmp(i, end);
    cc_.b_lt(head);
  }
  if (vector_end > main_end) {
    Gp end = NewGp();
    MovImm(end, static_cast<uint64_t>(vector_end));
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(vector_iteration(1));
    cc_.add(i, i, lanes_);
    cc_.cmp(i, end);
    cc_.b_lt(head);
  }
  // The partials into partial[0], in order.
  mode_ = Mode::kVector;
  for (const auto& [slot, opcode] : combiners) {
    for (int u = 1; u < unroll; ++u) {
      XJIT_RETURN_IF_ERROR(
          CombineVector(opcode, slot_types.at(slot), partial[0].at(slot), partial[u].at(slot)));
    }
  }
  row_accs_ = partial[0];
  // Fold each vector accumulator lane by lane into its scalar accumulator.
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (broadcast[id]) vals_[id] = scalar_vals[id];
  }
  mode_ = Mode::kScalar;
  for (const auto& [slot, opcode] : combiners) {
    const ElementType type = slot_types.at(slot);
    const Vec v = row_accs_.at(slot);
    auto lane = [&](int k) {
      Val x;
      if (type == ElementType::kF32 || type == ElementType::kF64) {
        x.in_vec = true;
        x.vec = NewVec();
        if (w == 64) {
          cc_.dup(x.vec.d(), v.d(k));
        } else {
          cc_.dup(x.vec.s(), v.s(k));
        }
      } else {
        x.gp = NewGp();
        switch (w) {
          case 8: cc_.umov(x.gp.w(), v.b(k)); break;
          case 16: cc_.umov(x.gp.w(), v.h(k)); break;
          case 32: cc_.umov(x.gp.w(), v.s(k)); break;
          default: cc_.umov(x.gp, v.d(k)); break;
        }
        Normalize(x.gp, type);
      }
      return x;
    };
    Val folded = lane(0);
    for (int k = 1; k < lanes_; ++k) {
      XJIT_RETURN_IF_ERROR(CombineScalar(opcode, type, lane(k), &folded));
    }
    XJIT_RETURN_IF_ERROR(CombineScalar(opcode, type, folded, &accs_.at(slot)));
  }
  // The scalar tail.
  if (vector_end < extent) {
    Gp stop = NewGp();
    MovImm(stop, static_cast<uint64_t>(extent));
    Label tail = cc_.newLabel();
    cc_.bind(tail);
    XJIT_RETURN_IF_ERROR(EmitSectionAtLevel(inner, KSection::kBody));
    XJIT_RETURN_IF_ERROR(EmitAccumulatorWrites());
    cc_.add(i, i, 1);
    cc_.cmp(i, stop);
    cc_.b_lt(tail);
  }
  return absl::OkStatus();
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
    Val source = vals_[op.a];
    if (source.in_vec && !accs_.at(op.imm).in_vec) {
      source = Val{AsRaw16(op.a, op.type), Vec(), false};  // f16/bf16: raw bits.
    }
    pending.push_back({op.imm, source});
  }
  auto is_acc = [&](const Val& v) {
    for (const auto& [slot, acc] : accs_) {
      if (acc.in_vec == v.in_vec &&
          (v.in_vec ? acc.vec.id() == v.vec.id() : acc.gp.id() == v.gp.id())) {
        return true;
      }
    }
    return false;
  };
  for (Pending& p : pending) {
    if (!is_acc(p.source)) continue;
    if (p.source.in_vec) {
      Vec t = NewVec();
      cc_.mov(t.b16(), p.source.vec.b16());
      p.source.vec = t;
    } else {
      Gp t = NewGp();
      cc_.mov(t, p.source.gp);
      p.source.gp = t;
    }
  }
  for (const Pending& p : pending) {
    const Val& acc = accs_.at(p.slot);
    if (acc.in_vec != p.source.in_vec) {
      return absl::InternalError("accumulator write of another representation");
    }
    if (acc.in_vec) {
      if (acc.vec.id() != p.source.vec.id()) cc_.mov(acc.vec.b16(), p.source.vec.b16());
    } else if (acc.gp.id() != p.source.gp.id()) {
      cc_.mov(acc.gp, p.source.gp);
    }
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitAccOp(int id) {
  const KOp& op = program_.ops[id];
  switch (op.kind) {
    case KOpKind::kAccInit: {
      Val acc;
      const bool narrow = op.type == ElementType::kF16 || op.type == ElementType::kBF16;
      const Val init =
          narrow && !vals_[op.a].in_vec ? vals_[op.a]
          : narrow                      ? Val{AsRaw16(op.a, op.type), Vec(), false}
                                        : vals_[op.a];
      acc.in_vec = init.in_vec;
      if (init.in_vec) {
        acc.vec = NewVec();
        cc_.mov(acc.vec.b16(), init.vec.b16());
      } else {
        acc.gp = NewGp();
        cc_.mov(acc.gp, init.gp);
      }
      accs_[op.imm] = acc;
      return absl::OkStatus();
    }
    case KOpKind::kAccRead:
    case KOpKind::kAccResult: {
      auto it = accs_.find(op.imm);
      if (it == accs_.end()) return absl::InternalError("accumulator read before its init");
      vals_[id] = it->second;
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
    const absl::Status status = EmitScalarValueOp(id);
    mode_ = Mode::kVector;
    return status;
  }
  if (IsIndexOp(op.kind)) {
    EmitIndexOp(id);
    return absl::OkStatus();
  }
  switch (op.kind) {
    case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
    case KOpKind::kAccResult:
      return EmitAccOp(id);
    default:
      break;
  }
  if (mode == Mode::kVector) return EmitVectorValueOp(id);
  return EmitScalarValueOp(id);
}

void KernelLowering::EmitIndexOp(int id) {
  const KOp& op = program_.ops[id];
  auto a = [&] { return vals_[op.a].gp; };
  auto b = [&] { return vals_[op.b].gp; };
  Gp d = NewGp();
  switch (op.kind) {
    case KOpKind::kLoopIndex:
      cc_.mov(d, loop_vars_[op.imm]);
      break;
    case KOpKind::kIConst:
      MovImm(d, static_cast<uint64_t>(op.imm));
      break;
    case KOpKind::kIAdd:
      cc_.add(d, a(), b());
      break;
    case KOpKind::kISub:
      cc_.sub(d, a(), b());
      break;
    case KOpKind::kIMul:
      cc_.mul(d, a(), b());
      break;
    case KOpKind::kIMin:
      cc_.cmp(a(), b());
      cc_.csel(d, a(), b(), Imm(CondCode::kLT));
      break;
    case KOpKind::kIMax:
      cc_.cmp(a(), b());
      cc_.csel(d, a(), b(), Imm(CondCode::kGT));
      break;
    case KOpKind::kIDiv:
    case KOpKind::kIRem: {
      // a >= 0 and imm > 0: an unsigned division is exact.
      const int64_t divisor = op.imm;
      if ((divisor & (divisor - 1)) == 0) {
        int shift = 0;
        while ((int64_t{1} << shift) < divisor) ++shift;
        if (op.kind == KOpKind::kIDiv) {
          cc_.lsr(d, a(), shift);
        } else if (shift == 0) {
          cc_.mov(d, arm64::xzr);
        } else {
          cc_.ubfx(d, a(), 0, shift);
        }
        break;
      }
      Gp divisor_reg = NewGp();
      MovImm(divisor_reg, static_cast<uint64_t>(divisor));
      Gp q = NewGp();
      cc_.udiv(q, a(), divisor_reg);
      if (op.kind == KOpKind::kIDiv) {
        cc_.mov(d, q);
      } else {
        cc_.msub(d, q, divisor_reg, a());
      }
      break;
    }
    case KOpKind::kILt:
      cc_.cmp(a(), b());
      cc_.cset(d, Imm(CondCode::kLT));
      break;
    case KOpKind::kIEq:
      cc_.cmp(a(), b());
      cc_.cset(d, Imm(CondCode::kEQ));
      break;
    case KOpKind::kIAnd:
      cc_.and_(d, a(), b());
      break;
    default:
      XJIT_CHECK(false);
  }
  SetGp(id, d);
}

}  // namespace xjit::jit::a64
