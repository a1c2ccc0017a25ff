// Small scalar kernels inline in an x86-64 loop function (see
// x64_loop_kernels.h).
//
// Every value lives in lane 0 of an xmm register: f32 and f64 as themselves,
// s32/u32 in the low dword, s64/u64 in the low qword, pred as a low qword
// of 0 or 1 (what a byte load zero-extends to; a compare's mask is reduced
// to it). What the upper bits hold is never read. Operations are the
// VEX-encoded scalar and lane-0 integer instructions that compute the
// evaluator's element semantics exactly (the kernels' own choices: IEEE
// arithmetic under the default rounding, wrapping integers, maximum and
// minimum that order -0 below +0 and propagate NaN, shifts whose counts of
// the width or more give 0 or the sign, sqrt and the rounding modes the
// kernels use); anything else — float to integer conversions, divisions of
// integers, other math functions, total-order compares, clamps — leaves the
// kernel a call.
#include "jit/x64/x64_loop_kernels.h"

#include <algorithm>
#include <cstring>
#include <optional>

namespace xjit::jit::x64 {
namespace {

using namespace asmjit;  // NOLINT

// Kernels larger than this stay calls: the code is emitted per loop, and a
// kernel this long no longer waits on its loads.
constexpr size_t kMaxInlineOps = 48;
// xmm0..xmm13 hold locations and temporaries; xmm14 and xmm15 are scratch.
constexpr int kRegisters = 14;
const x86::Xmm kScratch0 = x86::xmm14;
const x86::Xmm kScratch1 = x86::xmm15;

bool Is64(ElementType type) { return type == ElementType::kS64 || type == ElementType::kU64; }
bool Is32(ElementType type) { return type == ElementType::kS32 || type == ElementType::kU32; }
bool IsF(ElementType type) { return type == ElementType::kF32 || type == ElementType::kF64; }
bool Held(ElementType type) {
  return IsF(type) || Is32(type) || Is64(type) || type == ElementType::kPred;
}

// Whether lane-0 code for `op` exists here (operands' kinds checked by the
// caller).
bool Lowered(const KOp& op) {
  switch (op.kind) {
    case KOpKind::kLoad:
    case KOpKind::kStore:
    case KOpKind::kFromIndex:
    case KOpKind::kSelect:
    case KOpKind::kBitcast:
      return Held(op.type) || op.kind == KOpKind::kStore;
    case KOpKind::kConst:
      return IsF(op.type);
    case KOpKind::kBinary:
      switch (op.opcode) {
        case Opcode::kAdd:
        case Opcode::kSubtract:
          return IsF(op.type) || Is32(op.type) || Is64(op.type);
        case Opcode::kMultiply:
          return IsF(op.type) || Is32(op.type);
        case Opcode::kDivide:
          return IsF(op.type);
        case Opcode::kMaximum:
        case Opcode::kMinimum:
          return IsF(op.type) || Is32(op.type);
        case Opcode::kAnd:
        case Opcode::kOr:
        case Opcode::kXor:
          return Is32(op.type) || Is64(op.type) || op.type == ElementType::kPred;
        case Opcode::kShiftLeft:
        case Opcode::kShiftRightLogical:
          return Is32(op.type) || Is64(op.type);
        case Opcode::kShiftRightArithmetic:
          return Is32(op.type);
        default:
          return false;
      }
    case KOpKind::kUnary:
      switch (op.opcode) {
        case Opcode::kNegate:
          return IsF(op.type) || Is32(op.type) || Is64(op.type);
        case Opcode::kAbs:
          return IsF(op.type) || op.type == ElementType::kS32;
        case Opcode::kSqrt:
        case Opcode::kFloor:
        case Opcode::kCeil:
        case Opcode::kRoundNearestEven:
          return IsF(op.type);
        case Opcode::kNot:
          return Is32(op.type) || Is64(op.type) || op.type == ElementType::kPred;
        default:
          return false;
      }
    case KOpKind::kCompare:
      if (!Held(op.operand_type)) return false;
      return IsF(op.operand_type) ? op.comparison == ComparisonType::kFloat
                                  : op.comparison != ComparisonType::kFloat &&
                                        op.comparison != ComparisonType::kTotalOrder;
    case KOpKind::kConvert: {
      const ElementType from = op.operand_type, to = op.type;
      if (!Held(from) || !Held(to)) return false;
      if (from == to) return true;
      if (IsF(from)) return IsF(to);  // f32 <-> f64; float to integer is not here.
      if (to == ElementType::kPred) return false;
      if (IsF(to)) return from == ElementType::kS32 || from == ElementType::kPred;
      return true;  // Integer and pred to integer: moves and extensions.
    }
    default:
      return false;
  }
}

// The constant bits of index value `v` converted to `type` (kFromIndex: as
// convert from s64; pred v != 0).
uint64_t IndexBits(int64_t v, ElementType type) {
  switch (type) {
    case ElementType::kF32: {
      const float f = static_cast<float>(v);
      uint32_t bits;
      std::memcpy(&bits, &f, sizeof(bits));
      return bits;
    }
    case ElementType::kF64: {
      const double d = static_cast<double>(v);
      uint64_t bits;
      std::memcpy(&bits, &d, sizeof(bits));
      return bits;
    }
    case ElementType::kPred:
      return v != 0 ? 1 : 0;
    case ElementType::kS32:
    case ElementType::kU32:
      return static_cast<uint32_t>(v);
    default:
      return static_cast<uint64_t>(v);
  }
}

void Constant(x86::Assembler& a, const x86::Xmm& to, uint64_t bits) {
  a.mov(x86::rax, Imm(bits));
  a.vmovq(to, x86::rax);
}

}  // namespace

bool LoopKernels::HostSupported() {
  const CpuFeatures::X86& host = CpuInfo::host().features().x86();
  return host.hasAVX() && host.hasSSE4_1() && host.hasSSE4_2();
}

void LoopKernels::Collect(const runtime::BoundSteps& steps) {
  for (const Op& op : steps.ops()) {
    if (op.kind == Op::Kind::kKernel && op.inline_program != nullptr) {
      candidates_.push_back(&op);
    } else if (op.kind == Op::Kind::kConditional) {
      for (const runtime::BoundSteps& branch : op.conditional->branches) Collect(branch);
    }
  }
}

void LoopKernels::Plan() {
  for (const Op* op : candidates_) {
    const auto& program = *static_cast<const KernelProgram*>(op->inline_program);
    if (program.ops.size() > kMaxInlineOps) continue;
    Kernel kernel;
    if (!EvaluateIndices(program, &kernel)) continue;
    for (size_t i = 0; i < program.ops.size(); ++i) {
      const KOp& k = program.ops[i];
      if (k.a < 0 || !kernel.known[k.a]) continue;
      int buffer = -1;
      if (k.kind == KOpKind::kStore && k.imm >= 0 && k.imm < program.output_count) {
        buffer = program.output_buffer(static_cast<int>(k.imm));
      } else if (k.kind == KOpKind::kLoad && k.imm >= 0 &&
                 k.imm < static_cast<int64_t>(program.buffers.size())) {
        buffer = static_cast<int>(k.imm);
      }
      if (buffer < 0) continue;
      const ElementType type = program.buffers[buffer].type;
      (k.kind == KOpKind::kStore ? stored_ : loaded_)
          .insert({reinterpret_cast<uintptr_t>(op->addresses[buffer]) +
                       static_cast<uintptr_t>(kernel.index[k.a] * ByteWidth(type)),
                   type});
    }
  }
  for (const Op* op : candidates_) PlanKernel(*op);
  valid_.assign(locations_.size(), true);
}

bool LoopKernels::EvaluateIndices(const KernelProgram& program, Kernel* kernel) {
  const size_t n = program.ops.size();
  kernel->index.assign(n, 0);
  kernel->known.assign(n, false);
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (!IsIndexOp(k.kind)) continue;
    const auto operand = [&](int id) -> std::optional<int64_t> {
      if (id < 0 || static_cast<size_t>(id) >= i || !kernel->known[id]) return std::nullopt;
      return kernel->index[id];
    };
    std::optional<int64_t> x = operand(k.a), y = operand(k.b);
    int64_t v = 0;
    switch (k.kind) {
      case KOpKind::kLoopIndex:
        v = 0;
        break;
      case KOpKind::kIConst:
        v = k.imm;
        break;
      case KOpKind::kIAdd:
        if (!x || !y) return false;
        v = *x + *y;
        break;
      case KOpKind::kISub:
        if (!x || !y) return false;
        v = *x - *y;
        break;
      case KOpKind::kIMul:
        if (!x || !y) return false;
        v = *x * *y;
        break;
      case KOpKind::kIMin:
        if (!x || !y) return false;
        v = std::min(*x, *y);
        break;
      case KOpKind::kIMax:
        if (!x || !y) return false;
        v = std::max(*x, *y);
        break;
      case KOpKind::kIDiv:
        if (!x || k.imm <= 0 || *x < 0) return false;
        v = *x / k.imm;
        break;
      case KOpKind::kIRem:
        if (!x || k.imm <= 0 || *x < 0) return false;
        v = *x % k.imm;
        break;
      case KOpKind::kILt:
        if (!x || !y) return false;
        v = *x < *y ? 1 : 0;
        break;
      case KOpKind::kIEq:
        if (!x || !y) return false;
        v = *x == *y ? 1 : 0;
        break;
      case KOpKind::kIAnd:
        if (!x || !y) return false;
        v = (*x != 0 && *y != 0) ? 1 : 0;
        break;
      default:
        return false;
    }
    kernel->known[i] = true;
    kernel->index[i] = v;
  }
  return true;
}

bool LoopKernels::PlanKernel(const Op& op) {
  if (kernels_.contains(&op)) return true;
  const auto& program = *static_cast<const KernelProgram*>(op.inline_program);
  if (program.reduction_loops != 0 || program.ops.size() > kMaxInlineOps ||
      program.element_count() != 1) {
    return false;
  }
  const size_t n = program.ops.size();
  Kernel kernel;
  kernel.program = &program;
  kernel.location.assign(n, -1);
  kernel.temporary.assign(n, -1);
  kernel.address.assign(n, 0);
  if (!EvaluateIndices(program, &kernel)) return false;
  const std::vector<bool>& known = kernel.known;
  // Value operations: supported, operands value operations (an index for
  // kFromIndex and positions), locations in bounds and not overlapping any
  // other location but exactly.
  std::vector<Location> added;
  const auto location_of = [&](int buffer, int64_t position, ElementType type) -> int {
    if (buffer < 0 || buffer >= static_cast<int>(program.buffers.size())) return -1;
    const KernelBuffer& b = program.buffers[buffer];
    if (b.type != type || position < 0 || position >= b.element_count) return -1;
    const int64_t bytes = ByteWidth(type);
    const uintptr_t address = reinterpret_cast<uintptr_t>(op.addresses[buffer]) +
                              static_cast<uintptr_t>(position * bytes);
    const auto find = [&](const std::vector<Location>& in, int base) -> int {
      for (size_t k = 0; k < in.size(); ++k) {
        const Location& l = in[k];
        if (l.address == address && l.type == type) return base + static_cast<int>(k);
        if (address < l.address + l.bytes && l.address < address + bytes) return -2;
      }
      return -1;
    };
    int found = find(locations_, 0);
    if (found == -1) found = find(added, static_cast<int>(locations_.size()));
    if (found == -2) return -1;
    if (found >= 0) return found;
    added.push_back({address, type, bytes});
    return static_cast<int>(locations_.size() + added.size() - 1);
  };
  const auto value = [&](int id, size_t i) {
    return id >= 0 && static_cast<size_t>(id) < i && !IsIndexOp(program.ops[id].kind) &&
           program.ops[id].kind != KOpKind::kStore;
  };
  std::vector<size_t> last_use(n, 0);
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (IsIndexOp(k.kind)) continue;
    if (!Lowered(k)) return false;
    last_use[i] = i;
    switch (k.kind) {
      case KOpKind::kLoad: {
        if (k.a < 0 || !known[k.a]) return false;
        const int buffer = static_cast<int>(k.imm);
        if (buffer < 0 || buffer >= static_cast<int>(program.buffers.size())) return false;
        const KernelBuffer& b = program.buffers[buffer];
        const int64_t position = kernel.index[k.a];
        if (b.type != k.type || position < 0 || position >= b.element_count) return false;
        const uintptr_t address = reinterpret_cast<uintptr_t>(op.addresses[buffer]) +
                                  static_cast<uintptr_t>(position * ByteWidth(k.type));
        if (stored_.contains({address, k.type}) && loaded_.contains({address, k.type})) {
          kernel.location[i] = location_of(buffer, position, k.type);
          if (kernel.location[i] < 0) return false;
        } else {
          kernel.address[i] = address;  // Read from memory into a temporary.
        }
        break;
      }
      case KOpKind::kStore: {
        if (k.a < 0 || !known[k.a] || !value(k.b, i) || k.imm < 0 ||
            k.imm >= program.output_count) {
          return false;
        }
        const int buffer = program.output_buffer(static_cast<int>(k.imm));
        const KernelBuffer& b = program.buffers[buffer];
        const int64_t position = kernel.index[k.a];
        if (program.ops[k.b].type != b.type || position < 0 || position >= b.element_count) {
          return false;
        }
        const uintptr_t address = reinterpret_cast<uintptr_t>(op.addresses[buffer]) +
                                  static_cast<uintptr_t>(position * ByteWidth(b.type));
        if (loaded_.contains({address, b.type})) {
          kernel.location[i] = location_of(buffer, position, b.type);
          if (kernel.location[i] < 0) return false;
        } else {
          kernel.address[i] = address;  // Written to memory only.
        }
        // Stores are emitted after every other operation.
        last_use[k.b] = n;
        break;
      }
      case KOpKind::kFromIndex:
        if (k.a < 0 || !known[k.a]) return false;
        break;
      case KOpKind::kConst:
        break;
      default: {
        const int operands[] = {k.a, k.b, k.c};
        const int count = k.kind == KOpKind::kSelect                                  ? 3
                          : k.kind == KOpKind::kBinary || k.kind == KOpKind::kCompare ? 2
                                                                                      : 1;
        for (int j = 0; j < count; ++j) {
          if (!value(operands[j], i)) return false;
          last_use[operands[j]] = std::max(last_use[operands[j]], i);
        }
        if (k.kind == KOpKind::kSelect && program.ops[k.a].type != ElementType::kPred) return false;
        break;
      }
    }
  }
  // Temporaries: a result gets the lowest free one before its operands'
  // last uses free theirs (so a result never shares an operand's register).
  std::vector<bool> busy;
  int temporaries = 0;
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (IsIndexOp(k.kind) || k.kind == KOpKind::kStore) continue;
    if (k.kind == KOpKind::kLoad && kernel.location[i] >= 0) continue;
    int t = 0;
    while (t < static_cast<int>(busy.size()) && busy[t]) ++t;
    if (t == static_cast<int>(busy.size())) busy.push_back(false);
    busy[t] = true;
    kernel.temporary[i] = t;
    temporaries = std::max(temporaries, t + 1);
    for (int id : {k.a, k.b, k.c}) {
      if (k.kind == KOpKind::kFromIndex || k.kind == KOpKind::kLoad) break;
      if (id >= 0 && kernel.temporary[id] >= 0 && last_use[id] == i)
        busy[kernel.temporary[id]] = false;
    }
    if (last_use[i] == i) busy[t] = false;
  }
  const int total = static_cast<int>(locations_.size() + added.size());
  if (total + std::max(temporaries_, temporaries) > kRegisters) return false;
  locations_.insert(locations_.end(), added.begin(), added.end());
  temporaries_ = std::max(temporaries_, temporaries);
  kernels_.emplace(&op, std::move(kernel));
  return true;
}

x86::Xmm LoopKernels::Value(const Kernel& kernel, int id) const {
  if (kernel.location[id] >= 0) return x86::xmm(static_cast<uint32_t>(kernel.location[id]));
  return x86::xmm(static_cast<uint32_t>(locations_.size() + kernel.temporary[id]));
}

void LoopKernels::Load(x86::Assembler& a, int location) {
  const Location& l = locations_[location];
  LoadMemory(a, l.address, l.type, x86::xmm(static_cast<uint32_t>(location)));
  valid_[location] = true;
}

void LoopKernels::LoadMemory(x86::Assembler& a, uintptr_t address, ElementType type,
                             const x86::Xmm& to) {
  a.mov(x86::rax, Imm(static_cast<uint64_t>(address)));
  switch (type) {
    case ElementType::kF32:
      a.vmovss(to, x86::dword_ptr(x86::rax));
      break;
    case ElementType::kF64:
      a.vmovsd(to, x86::qword_ptr(x86::rax));
      break;
    case ElementType::kS32:
    case ElementType::kU32:
      a.vmovd(to, x86::dword_ptr(x86::rax));
      break;
    case ElementType::kPred:
      a.movzx(x86::eax, x86::byte_ptr(x86::rax));
      a.vmovd(to, x86::eax);
      break;
    default:
      a.vmovq(to, x86::qword_ptr(x86::rax));
      break;
  }
}

void LoopKernels::LoadAll(x86::Assembler& a) {
  for (size_t k = 0; k < locations_.size(); ++k) Load(a, static_cast<int>(k));
}

void LoopKernels::Clobbered() { valid_.assign(locations_.size(), false); }

void LoopKernels::Written(const uint8_t* destination, size_t bytes) {
  const uintptr_t begin = reinterpret_cast<uintptr_t>(destination);
  for (size_t k = 0; k < locations_.size(); ++k) {
    const Location& l = locations_[k];
    if (l.address < begin + bytes && begin < l.address + l.bytes) valid_[k] = false;
  }
}

void LoopKernels::Meet(const std::vector<bool>& other) {
  for (size_t k = 0; k < valid_.size(); ++k) valid_[k] = valid_[k] && other[k];
}

void LoopKernels::ReloadStale(x86::Assembler& a) {
  for (size_t k = 0; k < locations_.size(); ++k) {
    if (!valid_[k]) Load(a, static_cast<int>(k));
  }
}

void LoopKernels::Emit(x86::Assembler& a, const Op& op) {
  const Kernel& kernel = kernels_.at(&op);
  const KernelProgram& program = *kernel.program;
  const size_t n = program.ops.size();
  for (size_t i = 0; i < n; ++i) {
    if (program.ops[i].kind == KOpKind::kLoad && kernel.location[i] >= 0 &&
        !valid_[kernel.location[i]]) {
      Load(a, kernel.location[i]);
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (IsIndexOp(k.kind) || k.kind == KOpKind::kStore) continue;
    if (k.kind == KOpKind::kLoad) {
      if (kernel.location[i] < 0) LoadMemory(a, kernel.address[i], k.type, Value(kernel, i));
      continue;
    }
    EmitOperation(a, kernel, static_cast<int>(i));
  }
  // The stores: memory first, from registers no store has changed yet
  // (a value loaded from a location another store writes is still the old
  // one), then the locations' registers.
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (k.kind != KOpKind::kStore) continue;
    const int to = kernel.location[i];
    const uintptr_t address = to >= 0 ? locations_[to].address : kernel.address[i];
    const ElementType type =
        kernel.program->buffers[program.output_buffer(static_cast<int>(k.imm))].type;
    const x86::Xmm from = Value(kernel, k.b);
    a.mov(x86::rax, Imm(static_cast<uint64_t>(address)));
    switch (type) {
      case ElementType::kF32:
        a.vmovss(x86::dword_ptr(x86::rax), from);
        break;
      case ElementType::kF64:
        a.vmovsd(x86::qword_ptr(x86::rax), from);
        break;
      case ElementType::kS32:
      case ElementType::kU32:
        a.vmovd(x86::dword_ptr(x86::rax), from);
        break;
      case ElementType::kPred:
        a.vpextrb(x86::byte_ptr(x86::rax), from, 0);
        break;
      default:
        a.vmovq(x86::qword_ptr(x86::rax), from);
        break;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const KOp& k = program.ops[i];
    if (k.kind != KOpKind::kStore) continue;
    const int to = kernel.location[i];
    if (to < 0) {
      // Memory only: a register of another type over the same bytes is
      // stale now.
      const int64_t bytes = ByteWidth(program.ops[k.b].type);
      Written(reinterpret_cast<const uint8_t*>(kernel.address[i]), static_cast<size_t>(bytes));
    } else if (kernel.temporary[k.b] >= 0) {
      a.vmovaps(x86::xmm(static_cast<uint32_t>(to)), Value(kernel, k.b));
      valid_[to] = true;
    } else if (kernel.location[k.b] != to) {
      // A location stored unchanged into another: read back from memory
      // when next needed (rare: state moves are copies, not kernels).
      valid_[to] = false;
    }
  }
}

void LoopKernels::EmitOperation(x86::Assembler& a, const Kernel& kernel, int id) {
  const KOp& k = kernel.program->ops[id];
  const x86::Xmm d = Value(kernel, id);
  const ElementType type = k.type;
  const bool f64 = type == ElementType::kF64;
  const auto x = [&] { return Value(kernel, k.a); };
  const auto y = [&] { return Value(kernel, k.b); };
  switch (k.kind) {
    case KOpKind::kConst:
      Constant(a, d, static_cast<uint64_t>(k.imm));
      return;
    case KOpKind::kFromIndex:
      Constant(a, d, IndexBits(kernel.index[k.a], type));
      return;
    case KOpKind::kBitcast:
      a.vmovaps(d, x());
      return;
    case KOpKind::kSelect:
      // The pred's 0/1 qword as an all-ones mask picks b's whole lane 0.
      a.vpxor(kScratch0, kScratch0, kScratch0);
      a.vpsubq(kScratch0, kScratch0, x());
      a.vblendvpd(d, Value(kernel, k.c), y(), kScratch0);
      return;
    case KOpKind::kConvert: {
      const ElementType from = k.operand_type;
      if (IsF(from)) {
        if (from == type) {
          a.vmovaps(d, x());
        } else if (f64) {
          a.vcvtss2sd(d, x(), x());
        } else {
          a.vcvtsd2ss(d, x(), x());
        }
      } else if (IsF(type)) {  // From s32 or pred (0/1 in the low dword).
        if (f64) {
          a.vcvtdq2pd(d, x());
        } else {
          a.vcvtdq2ps(d, x());
        }
      } else if (Is64(type) && from == ElementType::kS32) {
        a.vpmovsxdq(d, x());
      } else if (Is64(type) && from == ElementType::kU32) {
        a.vpmovzxdq(d, x());
      } else {
        // Same width, narrowing (the low dword is the result) or from pred
        // (a 0/1 qword is 0/1 at every width).
        a.vmovaps(d, x());
      }
      return;
    }
    case KOpKind::kUnary:
      switch (k.opcode) {
        case Opcode::kNegate:
          if (IsF(type)) {
            Constant(a, kScratch0, f64 ? uint64_t{1} << 63 : uint64_t{1} << 31);
            a.vxorps(d, x(), kScratch0);
          } else {
            a.vpxor(kScratch0, kScratch0, kScratch0);
            if (Is64(type)) {
              a.vpsubq(d, kScratch0, x());
            } else {
              a.vpsubd(d, kScratch0, x());
            }
          }
          return;
        case Opcode::kAbs:
          if (IsF(type)) {
            Constant(a, kScratch0, f64 ? ~(uint64_t{1} << 63) : (uint64_t{1} << 31) - 1);
            a.vandps(d, x(), kScratch0);
          } else {
            a.vpabsd(d, x());
          }
          return;
        case Opcode::kSqrt:
          f64 ? a.vsqrtsd(d, x(), x()) : a.vsqrtss(d, x(), x());
          return;
        case Opcode::kFloor:
        case Opcode::kCeil:
        case Opcode::kRoundNearestEven: {
          // The kernels' rounding modes, precision exception suppressed.
          const int mode = k.opcode == Opcode::kFloor ? 0x9 : k.opcode == Opcode::kCeil ? 0xA : 0x8;
          f64 ? a.vroundsd(d, x(), x(), Imm(mode)) : a.vroundss(d, x(), x(), Imm(mode));
          return;
        }
        default:  // kNot.
          if (type == ElementType::kPred) {
            Constant(a, kScratch0, 1);
          } else {
            a.vpcmpeqd(kScratch0, kScratch0, kScratch0);
          }
          a.vpxor(d, x(), kScratch0);
          return;
      }
    case KOpKind::kBinary: {
      const x86::Xmm p = x(), q = y();
      if (IsF(type)) {
        switch (k.opcode) {
          case Opcode::kAdd:
            f64 ? a.vaddsd(d, p, q) : a.vaddss(d, p, q);
            return;
          case Opcode::kSubtract:
            f64 ? a.vsubsd(d, p, q) : a.vsubss(d, p, q);
            return;
          case Opcode::kMultiply:
            f64 ? a.vmulsd(d, p, q) : a.vmulss(d, p, q);
            return;
          case Opcode::kDivide:
            f64 ? a.vdivsd(d, p, q) : a.vdivss(d, p, q);
            return;
          default: {
            // max/minss return their second operand when the operands are
            // equal or either is NaN: both orders, combined (and for max, or
            // for min), order -0 below +0; NaN operands are patched in.
            const bool max = k.opcode == Opcode::kMaximum;
            if (f64) {
              max ? a.vmaxsd(kScratch0, p, q) : a.vminsd(kScratch0, p, q);
              max ? a.vmaxsd(kScratch1, q, p) : a.vminsd(kScratch1, q, p);
              max ? a.vandpd(d, kScratch0, kScratch1) : a.vorpd(d, kScratch0, kScratch1);
              a.vcmpsd(kScratch0, q, q, Imm(3));  // Unordered.
              a.vblendvpd(d, d, q, kScratch0);
              a.vcmpsd(kScratch0, p, p, Imm(3));
              a.vblendvpd(d, d, p, kScratch0);
            } else {
              max ? a.vmaxss(kScratch0, p, q) : a.vminss(kScratch0, p, q);
              max ? a.vmaxss(kScratch1, q, p) : a.vminss(kScratch1, q, p);
              max ? a.vandps(d, kScratch0, kScratch1) : a.vorps(d, kScratch0, kScratch1);
              a.vcmpss(kScratch0, q, q, Imm(3));
              a.vblendvps(d, d, q, kScratch0);
              a.vcmpss(kScratch0, p, p, Imm(3));
              a.vblendvps(d, d, p, kScratch0);
            }
            return;
          }
        }
      }
      const bool is_signed = type == ElementType::kS32 || type == ElementType::kS64;
      switch (k.opcode) {
        case Opcode::kAdd:
          Is64(type) ? a.vpaddq(d, p, q) : a.vpaddd(d, p, q);
          return;
        case Opcode::kSubtract:
          Is64(type) ? a.vpsubq(d, p, q) : a.vpsubd(d, p, q);
          return;
        case Opcode::kMultiply:
          a.vpmulld(d, p, q);
          return;
        case Opcode::kMaximum:
          is_signed ? a.vpmaxsd(d, p, q) : a.vpmaxud(d, p, q);
          return;
        case Opcode::kMinimum:
          is_signed ? a.vpminsd(d, p, q) : a.vpminud(d, p, q);
          return;
        case Opcode::kAnd:
          a.vpand(d, p, q);
          return;
        case Opcode::kOr:
          a.vpor(d, p, q);
          return;
        case Opcode::kShiftLeft:
        case Opcode::kShiftRightLogical:
        case Opcode::kShiftRightArithmetic: {
          // The count is the low qword of its register: a 32-bit count
          // zero-extended first, so that a count of the type's width or
          // more (a negative one too, as unsigned) gives 0, or the sign
          // for arithmetic: the evaluator's rule.
          const bool left = k.opcode == Opcode::kShiftLeft;
          if (Is64(type)) {
            left ? a.vpsllq(d, p, q) : a.vpsrlq(d, p, q);
          } else {
            a.vpmovzxdq(kScratch0, q);
            if (left) {
              a.vpslld(d, p, kScratch0);
            } else if (k.opcode == Opcode::kShiftRightLogical) {
              a.vpsrld(d, p, kScratch0);
            } else {
              a.vpsrad(d, p, kScratch0);
            }
          }
          return;
        }
        default:
          a.vpxor(d, p, q);
          return;  // kXor.
      }
    }
    case KOpKind::kCompare: {
      const ElementType t = k.operand_type;
      x86::Xmm p = x(), q = y();
      bool invert = false;
      if (IsF(t)) {
        // vcmpss predicates, all quiet: NE is true on NaN, the others false.
        int predicate = 0;
        switch (k.direction) {
          case ComparisonDirection::kEq:
            predicate = 0x00;
            break;
          case ComparisonDirection::kNe:
            predicate = 0x04;
            break;
          case ComparisonDirection::kLt:
            predicate = 0x11;
            break;
          case ComparisonDirection::kLe:
            predicate = 0x12;
            break;
          case ComparisonDirection::kGt:
            predicate = 0x1E;
            break;
          case ComparisonDirection::kGe:
            predicate = 0x1D;
            break;
        }
        t == ElementType::kF64 ? a.vcmpsd(d, p, q, Imm(predicate))
                               : a.vcmpss(d, p, q, Imm(predicate));
      } else {
        // Integers (and pred as a 0/1 qword): greater-than and equal,
        // unsigned ones biased by the sign bit into signed order.
        const bool wide = Is64(t) || t == ElementType::kPred;
        if (k.comparison == ComparisonType::kUnsigned && t != ElementType::kPred) {
          Constant(a, kScratch1, wide ? uint64_t{1} << 63 : uint64_t{1} << 31);
          a.vpxor(kScratch0, p, kScratch1);
          a.vpxor(kScratch1, q, kScratch1);
          p = kScratch0;
          q = kScratch1;
        }
        const auto gt = [&](const x86::Xmm& l, const x86::Xmm& r) {
          wide ? a.vpcmpgtq(d, l, r) : a.vpcmpgtd(d, l, r);
        };
        switch (k.direction) {
          case ComparisonDirection::kEq:
            wide ? a.vpcmpeqq(d, p, q) : a.vpcmpeqd(d, p, q);
            break;
          case ComparisonDirection::kNe:
            wide ? a.vpcmpeqq(d, p, q) : a.vpcmpeqd(d, p, q);
            invert = true;
            break;
          case ComparisonDirection::kLt:
            gt(q, p);
            break;
          case ComparisonDirection::kGe:
            gt(q, p);
            invert = true;
            break;
          case ComparisonDirection::kGt:
            gt(p, q);
            break;
          case ComparisonDirection::kLe:
            gt(p, q);
            invert = true;
            break;
        }
      }
      // The mask's bit 0 as the pred's 0/1 qword.
      Constant(a, kScratch0, 1);
      a.vpand(d, d, kScratch0);
      if (invert) a.vpxor(d, d, kScratch0);
      return;
    }
    default:
      return;  // Not planned (Lowered).
  }
}

}  // namespace xjit::jit::x64
