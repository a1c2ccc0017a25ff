#include "jit/kernel/lane_positions.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <optional>
#include <utility>
#include <vector>

#include "ir/element_type.h"

namespace xjit::jit {

namespace {

std::optional<IndexRange> RangeOfType(ElementType type) {
  switch (type) {
    case ElementType::kPred: return IndexRange{0, 1};
    case ElementType::kS8: return IndexRange{-128, 127};
    case ElementType::kU8: return IndexRange{0, 255};
    case ElementType::kS16: return IndexRange{-32768, 32767};
    case ElementType::kU16: return IndexRange{0, 65535};
    case ElementType::kS32:
      return IndexRange{std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()};
    case ElementType::kU32: return IndexRange{0, std::numeric_limits<uint32_t>::max()};
    default: return std::nullopt;
  }
}

bool FitsInt32(const IndexRange& range) {
  return range.lo >= std::numeric_limits<int32_t>::min() &&
         range.hi <= std::numeric_limits<int32_t>::max();
}

bool IsPowerOfTwo(int64_t x) { return x > 0 && (x & (x - 1)) == 0; }

}  // namespace

std::vector<std::optional<IndexRange>> IndexRanges(const KernelProgram& program) {
  const size_t n = program.ops.size();
  std::vector<std::optional<IndexRange>> range(n);
  for (size_t i = 0; i < n; ++i) {
    const KOp& op = program.ops[i];
    if (op.kind == KOpKind::kToIndex) {
      range[i] = RangeOfType(program.ops[op.a].type);
      continue;
    }
    if (!IsIndexOp(op.kind)) continue;
    // The operands' ranges ({0, 0} for an absent operand); an operand
    // without one leaves the operation without one.
    IndexRange a, b;
    bool known = true;
    for (auto [operand, out] : {std::pair{op.a, &a}, std::pair{op.b, &b}}) {
      if (operand < 0) continue;
      known = known && range[operand].has_value();
      if (range[operand]) *out = *range[operand];
    }
    if (!known) continue;
    IndexRange r;
    bool overflow = false;
    switch (op.kind) {
      case KOpKind::kLoopIndex:
        r = {0, std::max<int64_t>(program.loop_extents[op.imm] - 1, 0)};
        break;
      case KOpKind::kIConst:
        r = {op.imm, op.imm};
        break;
      case KOpKind::kIAdd:
        overflow = __builtin_add_overflow(a.lo, b.lo, &r.lo) ||
                   __builtin_add_overflow(a.hi, b.hi, &r.hi);
        break;
      case KOpKind::kISub:
        overflow = __builtin_sub_overflow(a.lo, b.hi, &r.lo) ||
                   __builtin_sub_overflow(a.hi, b.lo, &r.hi);
        break;
      case KOpKind::kIMul: {
        int64_t p[4];
        overflow = __builtin_mul_overflow(a.lo, b.lo, &p[0]) ||
                   __builtin_mul_overflow(a.lo, b.hi, &p[1]) ||
                   __builtin_mul_overflow(a.hi, b.lo, &p[2]) ||
                   __builtin_mul_overflow(a.hi, b.hi, &p[3]);
        r = {*std::min_element(p, p + 4), *std::max_element(p, p + 4)};
        break;
      }
      case KOpKind::kIMin:
        r = {std::min(a.lo, b.lo), std::min(a.hi, b.hi)};
        break;
      case KOpKind::kIMax:
        r = {std::max(a.lo, b.lo), std::max(a.hi, b.hi)};
        break;
      case KOpKind::kIDiv:  // a >= 0 (the operation's contract).
        r = {std::max<int64_t>(a.lo, 0) / op.imm, std::max<int64_t>(a.hi, 0) / op.imm};
        break;
      case KOpKind::kIRem:
        r = {0, std::min(op.imm - 1, std::max<int64_t>(a.hi, 0))};
        break;
      case KOpKind::kILt: case KOpKind::kIEq: case KOpKind::kIAnd:
        r = {0, 1};
        break;
      default:
        overflow = true;
        break;
    }
    if (!overflow) range[i] = r;
  }
  return range;
}

std::vector<bool> LaneIndexOps(const KernelProgram& program,
                               const std::vector<std::optional<int64_t>>& strides) {
  const size_t n = program.ops.size();
  const std::vector<std::optional<IndexRange>> range = IndexRanges(program);
  std::vector<bool> lane(n, false);
  // Lane k of an affine value is lane 0 plus k strides, k < 16.
  constexpr int64_t kMaxStride = std::numeric_limits<int32_t>::max() / 15;
  for (size_t i = 0; i < n; ++i) {
    const KOp& op = program.ops[i];
    if (!IsIndexOp(op.kind) || !range[i] || !FitsInt32(*range[i])) continue;
    if (strides[i].has_value()) {
      lane[i] = *strides[i] >= -kMaxStride && *strides[i] <= kMaxStride;
      continue;
    }
    switch (op.kind) {
      case KOpKind::kIAdd: case KOpKind::kISub: case KOpKind::kIMul: case KOpKind::kIMin:
      case KOpKind::kIMax:
        lane[i] = lane[op.a] && lane[op.b];
        break;
      case KOpKind::kIDiv: case KOpKind::kIRem:
        // Other divisors by a multiply-high (LaneDivisor), exact for
        // dividends in [0, 2^31): a merged row of 5 (a categorical over 5
        // classes, a vmapped [n, 5] draw) reads position m / 5 or m % 5.
        lane[i] = lane[op.a] && op.imm > 0 &&
                  (IsPowerOfTwo(op.imm) ||
                   (op.imm <= std::numeric_limits<int32_t>::max() && range[op.a] &&
                    range[op.a]->lo >= 0));
        break;
      default:
        break;
    }
  }
  return lane;
}

LaneDivisor LaneDivisorFor(int64_t d) {
  int log2_ceil = 0;
  while ((int64_t{1} << log2_ceil) < d) ++log2_ceil;
  LaneDivisor r;
  r.shift = 31 + log2_ceil;
  // ceil(2^shift / d); below 2^32 since d > 2^(log2_ceil - 1).
  // (shift <= 62, so the sum fits in 64 bits.)
  const uint64_t numerator = uint64_t{1} << r.shift;
  r.multiplier = static_cast<uint32_t>((numerator + static_cast<uint64_t>(d) - 1) /
                                       static_cast<uint64_t>(d));
  return r;
}

bool GatherableAlongInnermost(const KernelProgram& program) {
  if (program.loop_extents.empty() || program.reduction_loops != 0) return false;
  const std::vector<std::optional<int64_t>> strides = InnerStrides(program);
  const std::vector<bool> lane = LaneIndexOps(program, strides);
  const size_t n = program.ops.size();
  std::vector<bool> not_affine(n, false);
  for (size_t i = 0; i < n; ++i) {
    const KOp& op = program.ops[i];
    if (!IsIndexOp(op.kind) || strides[i].has_value()) continue;
    if (!lane[i]) return false;
    not_affine[i] = true;
  }
  bool gathers = false;
  for (const KOp& op : program.ops) {
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0 || !not_affine[operand] || IsIndexOp(op.kind)) continue;
      const int bits = BitWidth(op.type);
      const bool lane_type = IsInteger(op.type) || op.type == ElementType::kF32 ||
                             op.type == ElementType::kF64;
      const bool only_a = operand == op.a && op.b != operand && op.c != operand;
      // A load of 4- or 8-byte elements, a pred load (a byte gathered
      // within its aligned dword) or the index itself as a 32-bit integer
      // (an iota along the merged dimensions).
      const bool gather =
          only_a && ((op.kind == KOpKind::kLoad &&
                      ((lane_type && (bits == 32 || bits == 64)) || op.type == ElementType::kPred)) ||
                     (op.kind == KOpKind::kFromIndex && IsInteger(op.type) && bits == 32));
      if (!gather) return false;
      gathers = true;
    }
  }
  return gathers;
}

}  // namespace xjit::jit
