// The program builder of the fusion emitter (fusion_emitter.h): appends
// operations to a KernelProgram, folding constants, simplifying index
// arithmetic with the ranges it tracks, and sharing identical operations;
// plus the buffer conventions the element emitter and the kernel assembler
// share (how an array of each type is declared as a kernel buffer). Internal
// to jit/kernel/: only the fusion emitter's files include it.
#ifndef XJIT_JIT_KERNEL_PROGRAM_BUILDER_H_
#define XJIT_JIT_KERNEL_PROGRAM_BUILDER_H_

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/float_format.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "jit/kernel/complex_calls.h"
#include "jit/kernel/kernel_program.h"
#include "jit/kernel/minifloat_codec.h"
#include "passes/rewrite_util.h"

namespace xjit::jit::fusion_internal {

inline constexpr int64_t kWideLow = std::numeric_limits<int64_t>::min() / 4;
inline constexpr int64_t kWideHigh = std::numeric_limits<int64_t>::max() / 4;

inline int64_t Clip(__int128 v) {
  if (v < kWideLow) return kWideLow;
  if (v > kWideHigh) return kWideHigh;
  return static_cast<int64_t>(v);
}

inline absl::Status Unsupported(const Instruction& instruction, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("no kernel for ", instruction.name(), " (", OpcodeName(instruction.opcode()),
                   "): ", why));
}

inline bool IsKernelElementType(ElementType type) {
  if (IsPred(type) || IsInteger(type) || IsMiniFloat(type)) return true;
  switch (type) {
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32:
    case ElementType::kF64: case ElementType::kC64: case ElementType::kC128:
      return true;
    default:
      return false;
  }
}

// The type a kernel buffer of `type` is declared with: a complex array is a
// buffer of its component type with twice the elements (re, im interleaved).
// A mini-float array is a u8 buffer of raw bits (jit/kernel/minifloat_codec.h).
inline ElementType BufferType(ElementType type) {
  return IsComplex(type) ? ComplexComponentType(type) : ProgramElementType(type);
}
// Sub-byte elements packed several to a byte (a layout's E(n) with n < 8):
// the bits per element, or 0 for an unpacked array.
inline int PackedBits(const Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return 0;
  const int64_t bits = shape.layout().element_size_in_bits;
  return bits > 0 && bits < 8 && bits < 8 * ByteWidth(shape.element_type()) ? static_cast<int>(bits)
                                                                            : 0;
}
// A packed array whose layout is otherwise plain.
inline bool IsPackedPlainLayout(const Shape& shape) {
  if (PackedBits(shape) == 0 || !ValidateLayout(shape).ok()) return false;
  Shape unpacked = shape;
  unpacked.mutable_layout()->element_size_in_bits = 0;
  return IsPlainLayout(unpacked);
}
// A packed array is a u8 buffer of its bytes, element k in bits
// [k * n, k * n + n) counted from the low bit of byte 0 (ir/literal.h).
inline ElementType BufferType(const Shape& shape) {
  return PackedBits(shape) > 0 ? ElementType::kU8 : BufferType(shape.element_type());
}
inline int64_t BufferElements(const Shape& shape) {
  if (const int bits = PackedBits(shape); bits > 0) {
    return (PhysicalElementCount(shape) * bits + 7) / 8;
  }
  return PhysicalElementCount(shape) * (IsComplex(shape.element_type()) ? 2 : 1);
}

// Complex values live in the program as pairs of component values. The
// emitter's value handles are op ids; a complex value's handle is
// kPairTag + its number in the emitter's pair table.
inline constexpr int kPairTag = 1 << 29;

// Appends operations to a program, folding constants, simplifying index
// arithmetic with known ranges, and sharing identical operations.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(KernelProgram* program) : program_(program) {}

  int Add(KOp op) {
    if (op.origin < 0) op.origin = origin_;
    MapMiniFloatTypes(&op);
    const auto key = std::make_tuple(op.kind, op.type, op.operand_type, op.opcode, op.direction,
                                     op.comparison, op.a, op.b, op.c, op.imm);
    if (op.kind != KOpKind::kStore) {
      auto it = cse_.find(key);
      if (it != cse_.end()) return it->second;
    }
    const int id = static_cast<int>(program_->ops.size());
    program_->ops.push_back(op);
    ranges_.push_back({kWideLow, kWideHigh});
    uint64_t loops = op.kind == KOpKind::kLoopIndex ? LoopBit(op.imm) : 0;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) loops |= loops_[operand];
    }
    loops_.push_back(loops);
    if (op.kind != KOpKind::kStore) cse_[key] = id;
    return id;
  }

  // Provenance (KOp::origin): operations added from now on belong to
  // `instruction`, until RestoreOrigin(the returned value) is called.
  int EnterOrigin(const Instruction& instruction) {
    const int previous = origin_;
    auto [it, inserted] =
        origin_ids_.try_emplace(&instruction, static_cast<int>(program_->origins.size()));
    if (inserted) program_->origins.push_back(instruction.name());
    origin_ = it->second;
    return previous;
  }
  void RestoreOrigin(int previous) { origin_ = previous; }

  // Whether an operation on mini-float values reached the program other than
  // as raw bits (a bug the emitter reports as Unimplemented, never a wrong
  // kernel).
  bool mini_float_misuse() const { return mini_float_misuse_; }

  // ---- Index operations ----
  int Const(int64_t value) {
    const int id = Add(IndexOp(KOpKind::kIConst, -1, -1, value));
    ranges_[id] = {value, value};
    return id;
  }
  int LoopIndex(int level, int64_t extent) {
    const int id = Add(IndexOp(KOpKind::kLoopIndex, -1, -1, level));
    ranges_[id] = {0, std::max<int64_t>(extent - 1, 0)};
    return id;
  }
  // The end of loop 0's range in a program that claims ranges
  // (KernelProgram::claims_range) whose loop 0 has `extent` iterations.
  int LoopEnd(int64_t extent) {
    const int id = Add(IndexOp(KOpKind::kLoopEnd, -1, -1, 0));
    ranges_[id] = {1, std::max<int64_t>(extent, 1)};
    return id;
  }
  // Skips the rest of the current iteration of the loop `predicate` is
  // computed in where it is 0 (KOpKind::kSkipUnless).
  void SkipUnless(int predicate) {
    if (IsConst(predicate, 1)) return;
    Add(IndexOp(KOpKind::kSkipUnless, predicate, -1, 0));
  }
  int IAdd(int a, int b) {
    if (IsConst(a, 0)) return b;
    if (IsConst(b, 0)) return a;
    if (IsConst(a) && IsConst(b)) return Const(Value(a) + Value(b));
    if (int joined; JoinSplit(a, b, &joined) || JoinSplit(b, a, &joined)) return joined;
    return Ranged(IndexOp(KOpKind::kIAdd, a, b), Clip(__int128(Low(a)) + Low(b)),
                  Clip(__int128(High(a)) + High(b)));
  }
  int ISub(int a, int b) {
    if (IsConst(b, 0)) return a;
    if (IsConst(a) && IsConst(b)) return Const(Value(a) - Value(b));
    return Ranged(IndexOp(KOpKind::kISub, a, b), Clip(__int128(Low(a)) - High(b)),
                  Clip(__int128(High(a)) - Low(b)));
  }
  int IMul(int a, int b) {
    if (IsConst(a, 1)) return b;
    if (IsConst(b, 1)) return a;
    if (IsConst(a, 0) || IsConst(b, 0)) return Const(0);
    if (IsConst(a) && IsConst(b)) return Const(Value(a) * Value(b));
    int64_t low = kWideLow, high = kWideHigh;
    if (Low(a) >= 0 && Low(b) >= 0) {
      low = Clip(__int128(Low(a)) * Low(b));
      high = Clip(__int128(High(a)) * High(b));
    }
    return Ranged(IndexOp(KOpKind::kIMul, a, b), low, high);
  }
  int IMin(int a, int b) {
    if (High(a) <= Low(b)) return a;
    if (High(b) <= Low(a)) return b;
    return Ranged(IndexOp(KOpKind::kIMin, a, b), std::min(Low(a), Low(b)),
                  std::min(High(a), High(b)));
  }
  int IMax(int a, int b) {
    if (Low(a) >= High(b)) return a;
    if (Low(b) >= High(a)) return b;
    return Ranged(IndexOp(KOpKind::kIMax, a, b), std::max(Low(a), Low(b)),
                  std::max(High(a), High(b)));
  }
  int IClamp(int x, int64_t low, int64_t high) { return IMin(IMax(x, Const(low)), Const(high)); }
  // IClamp made of guards (kernel_program.h, "Guards"): for positions used
  // only where x is within [low, high].
  int IGuardClamp(int x, int64_t low, int64_t high) {
    const int lo = Const(low);
    const int hi = Const(high);
    int y = x;
    if (Low(y) < High(lo)) {
      y = High(y) <= Low(lo) ? lo
                             : Ranged(IndexOp(KOpKind::kIMax, y, lo, 1), std::max(Low(y), low),
                                      std::max(High(y), low));
    }
    if (High(y) > Low(hi)) {
      y = Low(y) >= High(hi) ? hi
                             : Ranged(IndexOp(KOpKind::kIMin, y, hi, 1), std::min(Low(y), high),
                                      std::min(High(y), high));
    }
    return y;
  }
  // Whether operation `id` depends on the innermost loop created so far
  // (the loop a target vectorises).
  bool VariesInnermost(int id) const {
    const int64_t loops = static_cast<int64_t>(program_->loop_extents.size());
    return loops > 0 && (loops_[id] & LoopBit(loops - 1)) != 0;
  }
  // a / divisor for a >= 0.
  int IDiv(int a, int64_t divisor) {
    if (divisor == 1) return a;
    if (Low(a) >= 0 && High(a) < divisor) return Const(0);
    if (IsConst(a)) return Const(Value(a) / divisor);
    int quotient, remainder;
    if (SplitMultiple(a, divisor, &quotient, &remainder)) return quotient;
    return Ranged(IndexOp(KOpKind::kIDiv, a, -1, divisor), std::max<int64_t>(Low(a), 0) / divisor,
                  High(a) / divisor);
  }
  // a % divisor for a >= 0.
  int IRem(int a, int64_t divisor) {
    if (divisor == 1) return Const(0);
    if (Low(a) >= 0 && High(a) < divisor) return a;
    if (IsConst(a)) return Const(Value(a) % divisor);
    int quotient, remainder;
    if (SplitMultiple(a, divisor, &quotient, &remainder)) return remainder;
    return Ranged(IndexOp(KOpKind::kIRem, a, -1, divisor), 0,
                  std::min(divisor - 1, std::max<int64_t>(High(a), 0)));
  }
  int ILt(int a, int b) {
    if (High(a) < Low(b)) return Const(1);
    if (Low(a) >= High(b)) return Const(0);
    return Ranged(IndexOp(KOpKind::kILt, a, b), 0, 1);
  }
  int IEq(int a, int b) {
    if (a == b) return Const(1);
    if (IsConst(a) && IsConst(b)) return Const(Value(a) == Value(b) ? 1 : 0);
    if (High(a) < Low(b) || High(b) < Low(a)) return Const(0);
    return Ranged(IndexOp(KOpKind::kIEq, a, b), 0, 1);
  }
  int IAnd(int a, int b) {
    if (IsConst(a, 0) || IsConst(b, 0)) return Const(0);
    if (IsConst(a, 1)) return b;
    if (IsConst(b, 1)) return a;
    return Ranged(IndexOp(KOpKind::kIAnd, a, b), 0, 1);
  }
  // a >= b, as 0/1.
  int IGe(int a, int b) { return ISub(Const(1), ILt(a, b)); }

  // ---- Value operations ----
  int Value(KOpKind kind, ElementType type, int a = -1, int b = -1, int c = -1) {
    KOp op;
    op.kind = kind;
    op.type = type;
    op.a = a;
    op.b = b;
    op.c = c;
    if (a >= 0) op.operand_type = program_->ops[a].type;
    return Add(op);
  }

  bool IsConst(int id) const { return program_->ops[id].kind == KOpKind::kIConst; }
  bool IsConst(int id, int64_t value) const { return IsConst(id) && Value(id) == value; }
  int64_t Value(int id) const { return program_->ops[id].imm; }
  int64_t Low(int id) const { return ranges_[id].first; }
  int64_t High(int id) const { return ranges_[id].second; }

 private:
  static KOp IndexOp(KOpKind kind, int a, int b, int64_t imm = 0) {
    KOp op;
    op.kind = kind;
    op.type = ElementType::kS64;
    op.a = a;
    op.b = b;
    op.imm = imm;
    return op;
  }
  // Whether a is a sum of terms m * (k * divisor) (m >= 0) and at most one
  // term r with 0 <= r < divisor; then a / divisor is the sum of the m * k
  // and a % divisor = r (0 without such a term). A reshape that merged
  // dimensions into a row-major linear index and splits it again at the
  // same strides needs no division this way, so the split indices stay
  // affine in the loop indices (and the loop vectorisable).
  bool SplitMultiple(int a, int64_t divisor, int* quotient, int* remainder, int depth = 0) {
    if (divisor <= 0 || depth > 8) return false;
    const KOp op = program_->ops[a];  // A copy: the calls below add operations.
    if (op.kind == KOpKind::kIMul) {
      for (auto [x, c] : {std::pair{op.a, op.b}, std::pair{op.b, op.a}}) {
        if (IsConst(c) && Value(c) > 0 && Value(c) % divisor == 0 && Low(x) >= 0) {
          *quotient = IMul(x, Const(Value(c) / divisor));
          *remainder = Const(0);
          return true;
        }
      }
      return false;
    }
    if (op.kind != KOpKind::kIAdd) return false;
    for (auto [x, y] : {std::pair{op.a, op.b}, std::pair{op.b, op.a}}) {
      int qy, ry;
      if (!SplitMultiple(y, divisor, &qy, &ry, depth + 1) || !IsConst(ry, 0)) continue;
      if (Low(x) >= 0 && High(x) < divisor) {
        *quotient = qy;
        *remainder = x;
        return true;
      }
      int qx, rx;
      if (SplitMultiple(x, divisor, &qx, &rx, depth + 1)) {
        *quotient = IAdd(qx, qy);
        *remainder = rx;
        return true;
      }
    }
    return false;
  }
  // Whether r + t is an index x split at a divisor d and put together again:
  // r = x % d and t = (x / d) * d give x; t = ((x / d) % m) * d gives
  // x % (d * m) (x >= 0). A loop over merged dimensions (the fusion
  // emitter's collapsed loops) splits its index into the array's indices,
  // and an array in the same layout linearises them again: folded, the
  // position is the loop index itself, affine, so the loop vectorises.
  bool JoinSplit(int r, int t, int* joined) {
    const KOp rem = program_->ops[r];
    const KOp mul = program_->ops[t];
    if (rem.kind != KOpKind::kIRem || mul.kind != KOpKind::kIMul || Low(rem.a) < 0) return false;
    const int64_t d = rem.imm;
    int y = -1;
    if (IsConst(mul.b, d)) y = mul.a;
    if (IsConst(mul.a, d)) y = mul.b;
    if (y < 0) return false;
    const KOp q = program_->ops[y];
    if (q.kind == KOpKind::kIDiv && q.a == rem.a && q.imm == d) {
      *joined = rem.a;
      return true;
    }
    if (q.kind == KOpKind::kIRem) {
      const KOp inner = program_->ops[q.a];
      if (inner.kind == KOpKind::kIDiv && inner.a == rem.a && inner.imm == d &&
          q.imm <= kWideHigh / d) {
        *joined = IRem(rem.a, d * q.imm);
        return true;
      }
    }
    return false;
  }
  static uint64_t LoopBit(int64_t level) { return uint64_t{1} << std::min<int64_t>(level, 63); }
  int Ranged(KOp op, int64_t low, int64_t high) {
    const int id = Add(op);
    ranges_[id] = {std::max(ranges_[id].first, low), std::min(ranges_[id].second, high)};
    return id;
  }

  // Operations that only move values carry a mini-float as its raw bits
  // (u8); every other use must have been decoded by the emitter first.
  void MapMiniFloatTypes(KOp* op) {
    if (!IsMiniFloat(op->type) && !IsMiniFloat(op->operand_type)) return;
    switch (op->kind) {
      case KOpKind::kLoad:
      case KOpKind::kStore:
      case KOpKind::kSelect:
      case KOpKind::kAccInit:
      case KOpKind::kAccRead:
      case KOpKind::kAccWrite:
      case KOpKind::kAccResult:
        op->type = ProgramElementType(op->type);
        op->operand_type = ProgramElementType(op->operand_type);
        break;
      default:
        mini_float_misuse_ = true;
        break;
    }
  }

  KernelProgram* program_;
  // The origin of operations added now (-1: none) and each instruction's
  // index in program_->origins.
  int origin_ = -1;
  absl::flat_hash_map<const Instruction*, int> origin_ids_;
  bool mini_float_misuse_ = false;
  std::vector<std::pair<int64_t, int64_t>> ranges_;
  // By operation: the loop levels it depends on, a bit each (levels from 63
  // on share the last bit).
  std::vector<uint64_t> loops_;
  absl::flat_hash_map<std::tuple<KOpKind, ElementType, ElementType, Opcode, ComparisonDirection,
                                 ComparisonType, int, int, int, int64_t>,
                      int>
      cse_;
};

}  // namespace xjit::jit::fusion_internal

#endif  // XJIT_JIT_KERNEL_PROGRAM_BUILDER_H_
