// KernelLowering: function frame, loop nest, index arithmetic, memory
// addressing and the choice between vector and scalar code (see
// x64_lowering.h).
#include "jit/x64/x64_lowering.h"

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"

namespace xjit::jit::x64 {

using namespace asmjit;  // NOLINT: asmjit's API is designed for this.

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
  uint32_t shift = 0;
  while ((1 << shift) < element_bytes) ++shift;
  return x86::ptr(buffers_[buffer], vals_[offset_op].gp, shift);
}

bool KernelLowering::Vectorizable(ElementType* type, int* lanes) const {
  if (program_.loop_extents.empty()) return false;
  const std::vector<std::optional<int64_t>> strides = InnerStrides(program_);
  std::optional<ElementType> t;
  auto set_type = [&](ElementType candidate) {
    if (candidate != ElementType::kF32 && candidate != ElementType::kF64) return false;
    if (t && *t != candidate) return false;
    t = candidate;
    return true;
  };
  for (size_t i = 0; i < program_.ops.size(); ++i) {
    const KOp& op = program_.ops[i];
    if (IsIndexOp(op.kind)) continue;
    switch (op.kind) {
      case KOpKind::kLoad: {
        if (op.type != ElementType::kPred && !set_type(op.type)) return false;
        const std::optional<int64_t> s = strides[op.a];
        if (!s || (*s != 0 && *s != 1)) return false;
        break;
      }
      case KOpKind::kStore: {
        if (op.operand_type != ElementType::kPred && !set_type(op.operand_type)) return false;
        if (strides[op.a] != 1) return false;
        break;
      }
      case KOpKind::kConst:
      case KOpKind::kBits:
      case KOpKind::kBitShift:
        if (!set_type(op.type)) return false;
        break;
      case KOpKind::kFma:
        if (!features_.avx2 || !set_type(op.type)) return false;
        break;
      case KOpKind::kUnary:
        if (op.type == ElementType::kPred && op.operand_type == ElementType::kPred &&
            op.opcode == Opcode::kNot) {
          break;
        }
        if (op.operand_type != op.type || !set_type(op.type)) return false;
        switch (op.opcode) {
          case Opcode::kAbs: case Opcode::kNegate: case Opcode::kSqrt: case Opcode::kFloor:
          case Opcode::kCeil: case Opcode::kRoundNearestEven: case Opcode::kRoundNearestAfz:
          case Opcode::kSign:
            break;
          default:
            return false;
        }
        break;
      case KOpKind::kBinary:
        if (op.type == ElementType::kPred) {
          switch (op.opcode) {
            case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor: case Opcode::kMultiply:
            case Opcode::kMinimum: case Opcode::kAdd: case Opcode::kMaximum:
              break;
            default:
              return false;
          }
          break;
        }
        if (!set_type(op.type)) return false;
        switch (op.opcode) {
          case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply:
          case Opcode::kDivide: case Opcode::kMaximum: case Opcode::kMinimum:
            break;
          default:
            return false;
        }
        break;
      case KOpKind::kCompare:
        if (op.comparison != ComparisonType::kFloat || !set_type(op.operand_type)) return false;
        break;
      case KOpKind::kSelect:
      case KOpKind::kClamp:
        if (!set_type(op.type)) return false;
        break;
      default:
        return false;
    }
  }
  if (!t) return false;
  const int vector_bytes = features_.avx2 ? 32 : 16;
  *type = *t;
  *lanes = vector_bytes / static_cast<int>(ByteWidth(*t));
  return program_.loop_extents.back() >= *lanes;
}

absl::Status KernelLowering::Emit(int* lanes) {
  FuncNode* func =
      cc_.addFunc(FuncSignatureT<void, void* const*, int64_t, int64_t>(CallConvId::kHost));
  if (features_.avx2) {
    func->frame().setAvxEnabled();
    // vzeroupper on return, so SSE code in the caller pays no transition.
    func->frame().setAvxCleanup();
  }
  x86::Gp args = cc_.newIntPtr("buffers");
  func->setArg(0, args);
  begin_ = cc_.newGpq("begin");
  end_ = cc_.newGpq("end");
  func->setArg(1, begin_);
  func->setArg(2, end_);

  levels_ = OpLevels(program_);
  strides_ = InnerStrides(program_);
  vals_.assign(program_.ops.size(), Val());
  for (size_t b = 0; b < program_.buffers.size(); ++b) {
    x86::Gp pointer = cc_.newIntPtr();
    cc_.mov(pointer, x86::qword_ptr(args, static_cast<int32_t>(8 * b)));
    buffers_.push_back(pointer);
  }
  vectorize_ = Vectorizable(&vector_type_, &lanes_);
  if (!vectorize_) lanes_ = 1;
  *lanes = lanes_;

  bool empty = false;
  for (int64_t extent : program_.loop_extents) empty = empty || extent == 0;
  if (!empty) {
    if (program_.loop_extents.empty()) {
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
    } else {
      // An empty range does nothing (the loops below test at the bottom).
      Label done = cc_.newLabel();
      cc_.cmp(begin_, end_);
      cc_.jge(done);
      XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(-1, Mode::kScalar));
      XJIT_RETURN_IF_ERROR(EmitLoops(0));
      cc_.bind(done);
    }
  }
  cc_.endFunc();
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitLoops(size_t level) {
  if (level + 1 == program_.loop_extents.size()) return EmitInnerLoop();
  x86::Gp i = cc_.newGpq();
  loop_vars_.resize(program_.loop_extents.size());
  loop_vars_[level] = i;
  Label head = cc_.newLabel();
  // The outermost loop runs the caller's range [begin, end), never empty
  // here; inner ones their whole extent (positive: empty nests emit no
  // loops).
  if (level == 0) {
    cc_.mov(i, begin_);
  } else {
    cc_.xor_(i.r32(), i.r32());
  }
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
  XJIT_RETURN_IF_ERROR(EmitLoops(level + 1));
  cc_.inc(i);
  if (level == 0) {
    cc_.cmp(i, end_);
  } else {
    cc_.cmp(i, program_.loop_extents[level]);
  }
  cc_.jl(head);
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
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kVector));
    cc_.add(i, lanes_);
    cc_.cmp(i, scalar_start);
    cc_.jl(head);
  }
  if (scalar_start < extent) {
    Label head = cc_.newLabel();
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(static_cast<int>(level), Mode::kScalar));
    cc_.inc(i);
    cc_.cmp(i, extent);
    cc_.jl(head);
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitRangedInnerLoop(x86::Gp i) {
  // Vector iterations cover the largest multiple of `lanes_` elements from
  // begin; the scalar tail the rest. The caller splits ranges at multiples
  // of the lanes, so every element runs the code it would run unsplit.
  cc_.mov(i, begin_);
  if (vectorize_) {
    x86::Gp vector_end = cc_.newGpq();
    cc_.mov(vector_end, end_);
    cc_.sub(vector_end, begin_);
    cc_.and_(vector_end, -static_cast<int64_t>(lanes_));  // lanes_ is a power of 2.
    cc_.add(vector_end, begin_);
    Label skip = cc_.newLabel();
    Label head = cc_.newLabel();
    cc_.cmp(i, vector_end);
    cc_.jge(skip);
    cc_.bind(head);
    XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(0, Mode::kVector));
    cc_.add(i, lanes_);
    cc_.cmp(i, vector_end);
    cc_.jl(head);
    cc_.bind(skip);
  }
  Label done = cc_.newLabel();
  Label head = cc_.newLabel();
  cc_.cmp(i, end_);
  cc_.jge(done);
  cc_.bind(head);
  XJIT_RETURN_IF_ERROR(EmitOpsAtLevel(0, Mode::kScalar));
  cc_.inc(i);
  cc_.cmp(i, end_);
  cc_.jl(head);
  cc_.bind(done);
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitOpsAtLevel(int level, Mode mode) {
  mode_ = mode;
  for (size_t id = 0; id < program_.ops.size(); ++id) {
    if (levels_[id] != level) continue;
    XJIT_RETURN_IF_ERROR(EmitOp(static_cast<int>(id), mode));
  }
  return absl::OkStatus();
}

absl::Status KernelLowering::EmitOp(int id, Mode mode) {
  const KOp& op = program_.ops[id];
  if (IsIndexOp(op.kind)) {
    EmitIndexOp(id);
    return absl::OkStatus();
  }
  if (mode == Mode::kVector) return EmitVectorValueOp(id);
  return EmitScalarValueOp(id);
}

void KernelLowering::EmitIndexOp(int id) {
  const KOp& op = program_.ops[id];
  auto a = [&] { return vals_[op.a].gp; };
  auto b = [&] { return vals_[op.b].gp; };
  x86::Gp d = NewGp();
  switch (op.kind) {
    case KOpKind::kLoopIndex:
      cc_.mov(d, loop_vars_[op.imm]);
      break;
    case KOpKind::kIConst:
      cc_.mov(d, op.imm);
      break;
    case KOpKind::kIAdd:
      cc_.mov(d, a());
      cc_.add(d, b());
      break;
    case KOpKind::kISub:
      cc_.mov(d, a());
      cc_.sub(d, b());
      break;
    case KOpKind::kIMul:
      cc_.mov(d, a());
      cc_.imul(d, b());
      break;
    case KOpKind::kIMin:
      cc_.mov(d, a());
      cc_.cmp(d, b());
      cc_.cmovg(d, b());
      break;
    case KOpKind::kIMax:
      cc_.mov(d, a());
      cc_.cmp(d, b());
      cc_.cmovl(d, b());
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
      cc_.cmp(a(), b());
      if (op.kind == KOpKind::kILt) {
        cc_.setl(d.r8());
      } else {
        cc_.sete(d.r8());
      }
      break;
    case KOpKind::kIAnd:
      cc_.mov(d, a());
      cc_.and_(d, b());
      break;
    default:
      XJIT_CHECK(false);
  }
  SetGp(id, d);
}

}  // namespace xjit::jit::x64
