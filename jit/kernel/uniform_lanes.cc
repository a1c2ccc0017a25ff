// FindUniformLaneRange (see uniform_lanes.h).
#include "jit/kernel/uniform_lanes.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

namespace xjit::jit {
namespace {

// An index operation's value as `innermost * coefficient + offset` with a
// coefficient of 0 or 1, or nothing when it reads any other loop (or is
// not a sum of constants and the innermost index).
struct Affine {
  int64_t coefficient = 0;
  int64_t offset = 0;
};

std::vector<std::optional<Affine>> InnermostAffine(const KernelProgram& program, int level) {
  std::vector<std::optional<Affine>> affine(program.ops.size());
  for (size_t id = 0; id < program.ops.size(); ++id) {
    const KOp& op = program.ops[id];
    switch (op.kind) {
      case KOpKind::kLoopIndex:
        if (op.imm == level) affine[id] = Affine{1, 0};
        break;
      case KOpKind::kIConst:
        affine[id] = Affine{0, op.imm};
        break;
      case KOpKind::kIAdd:
      case KOpKind::kISub: {
        const std::optional<Affine>& a = affine[op.a];
        const std::optional<Affine>& b = affine[op.b];
        if (!a || !b) break;
        const int sign = op.kind == KOpKind::kIAdd ? 1 : -1;
        const int64_t coefficient = a->coefficient + sign * b->coefficient;
        int64_t offset;
        const bool overflow = op.kind == KOpKind::kIAdd
                                  ? __builtin_add_overflow(a->offset, b->offset, &offset)
                                  : __builtin_sub_overflow(a->offset, b->offset, &offset);
        if (!overflow && (coefficient == 0 || coefficient == 1)) {
          affine[id] = Affine{coefficient, offset};
        }
        break;
      }
      default:
        break;
    }
  }
  return affine;
}

// A compare of the innermost index (lanes x = start + lane + shift) against
// a constant: `x direction bound`.
struct LaneCompare {
  int op = -1;
  ComparisonDirection direction = ComparisonDirection::kEq;
  int64_t shift = 0;
  int64_t bound = 0;
};

bool Holds(ComparisonDirection direction, int64_t x, int64_t bound) {
  switch (direction) {
    case ComparisonDirection::kEq: return x == bound;
    case ComparisonDirection::kNe: return x != bound;
    case ComparisonDirection::kLt: return x < bound;
    case ComparisonDirection::kLe: return x <= bound;
    case ComparisonDirection::kGt: return x > bound;
    case ComparisonDirection::kGe: return x >= bound;
  }
  return false;
}

// bound <direction> x as x <direction'> bound.
ComparisonDirection Mirrored(ComparisonDirection direction) {
  switch (direction) {
    case ComparisonDirection::kLt: return ComparisonDirection::kGt;
    case ComparisonDirection::kLe: return ComparisonDirection::kGe;
    case ComparisonDirection::kGt: return ComparisonDirection::kLt;
    case ComparisonDirection::kGe: return ComparisonDirection::kLe;
    default: return direction;
  }
}

// -1 when the lanes of the iteration starting at `start` disagree, else the
// value all of them have. Every direction is monotone in x or (eq, ne) true
// or false at one x only, so the first and last lanes decide unless the
// bound lies strictly inside for eq / ne.
int Uniform(const LaneCompare& c, int64_t start, int lanes) {
  const int64_t first = start + c.shift;
  const int64_t last = first + lanes - 1;
  const bool at_first = Holds(c.direction, first, c.bound);
  if (at_first != Holds(c.direction, last, c.bound)) return -1;
  const bool point = c.direction == ComparisonDirection::kEq ||
                     c.direction == ComparisonDirection::kNe;
  if (point && c.bound > first && c.bound < last) return -1;
  return at_first ? 1 : 0;
}

bool IsPredLogic(const KOp& op) {
  if (op.type != ElementType::kPred) return false;
  if (op.kind == KOpKind::kUnary) return op.opcode == Opcode::kNot;
  return op.kind == KOpKind::kBinary && (op.opcode == Opcode::kAnd || op.opcode == Opcode::kOr);
}

}  // namespace

UniformLaneRange FindUniformLaneRange(const KernelProgram& program,
                                      const std::vector<int>& levels, int level,
                                      int64_t extent, int lanes) {
  UniformLaneRange range;
  const size_t n = program.ops.size();
  if (lanes < 2 || program.reduction_loops > 0) return range;
  const int64_t iterations = extent / lanes;
  if (iterations < 2) return range;
  // The values of x stay far from int64's ends (offsets come from shapes).
  constexpr int64_t kLimit = int64_t{1} << 50;

  const std::vector<std::optional<Affine>> affine = InnermostAffine(program, level);
  auto affine_of = [&](int from_index) -> std::optional<Affine> {
    const KOp& op = program.ops[from_index];
    if (op.kind != KOpKind::kFromIndex || !IsInteger(op.type)) return std::nullopt;
    return affine[op.a];
  };
  std::vector<LaneCompare> compares;
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program.ops[id];
    if (op.kind != KOpKind::kCompare || op.comparison != ComparisonType::kSigned ||
        levels[id] != level) {
      continue;
    }
    const std::optional<Affine> a = affine_of(op.a);
    const std::optional<Affine> b = affine_of(op.b);
    if (!a || !b || a->coefficient + b->coefficient != 1) continue;
    // Both sides were converted to the compare's lane type; they are exact
    // there only when the lane type holds every value they take.
    const int64_t widest = op.operand_type == ElementType::kS64   ? kLimit
                           : op.operand_type == ElementType::kS32 ? std::numeric_limits<int32_t>::max()
                           : op.operand_type == ElementType::kS16 ? std::numeric_limits<int16_t>::max()
                           : op.operand_type == ElementType::kS8  ? std::numeric_limits<int8_t>::max()
                                                                  : -1;
    const Affine& index = a->coefficient == 1 ? *a : *b;
    const Affine& constant = a->coefficient == 1 ? *b : *a;
    const int64_t low = std::min(index.offset, constant.offset);
    const int64_t high = std::max(index.offset + extent - 1, constant.offset);
    if (widest < 0 || low < -widest - 1 || high > widest) continue;
    LaneCompare c;
    c.op = static_cast<int>(id);
    c.direction = a->coefficient == 1 ? op.direction : Mirrored(op.direction);
    c.shift = index.offset;
    c.bound = constant.offset;
    compares.push_back(c);
  }
  if (compares.empty()) return range;
  // Too many to scan iteration by iteration: leave the loop as it is.
  if (iterations * static_cast<int64_t>(compares.size()) > (int64_t{1} << 22)) return range;

  // The longest run of iterations where every compare keeps one uniform value.
  std::vector<int> current(compares.size()), previous;
  int64_t run_begin = 0;
  for (int64_t k = 0; k <= iterations; ++k) {
    bool uniform = k < iterations;
    for (size_t c = 0; uniform && c < compares.size(); ++c) {
      current[c] = Uniform(compares[c], k * lanes, lanes);
      uniform = current[c] >= 0;
    }
    const bool continues = uniform && k > run_begin && current == previous;
    if (!continues) {
      if (k - run_begin > range.end - range.begin && !previous.empty()) {
        range.begin = run_begin;
        range.end = k;
      }
      run_begin = uniform ? k : k + 1;
      previous.clear();
      if (uniform) previous = current;
    }
  }
  if (range.end - range.begin < 2) return UniformLaneRange();

  range.known.assign(n, -1);
  for (const LaneCompare& c : compares) {
    range.known[c.op] = static_cast<int8_t>(Uniform(c, range.begin * lanes, lanes));
  }
  for (size_t id = 0; id < n; ++id) {
    const KOp& op = program.ops[id];
    if (levels[id] != level || range.known[id] >= 0) continue;
    if (IsPredLogic(op)) {
      const int a = range.known[op.a];
      if (op.kind == KOpKind::kUnary) {
        if (a >= 0) range.known[id] = static_cast<int8_t>(1 - a);
        continue;
      }
      const int b = range.known[op.b];
      const int absorbing = op.opcode == Opcode::kAnd ? 0 : 1;
      if (a == absorbing || b == absorbing) {
        range.known[id] = static_cast<int8_t>(absorbing);
      } else if (a >= 0 && b >= 0) {
        range.known[id] = static_cast<int8_t>(1 - absorbing);
      }
    } else if (op.kind == KOpKind::kSelect && op.type == ElementType::kPred &&
               range.known[op.a] >= 0) {
      range.known[id] = range.known[range.known[op.a] ? op.b : op.c];
    }
  }

  // Liveness, users before operands. A select with a known predicate reads
  // only the operand it picks; nothing reads a known pred except through such
  // a select unless some live user needs its lanes.
  range.live.assign(n, false);
  bool changes = false;
  for (size_t id = n; id-- > 0;) {
    const KOp& op = program.ops[id];
    if (levels[id] != level || op.kind == KOpKind::kStore) range.live[id] = true;
    if (!range.live[id]) {
      changes = true;
      continue;
    }
    if (op.kind == KOpKind::kSelect && range.known[op.a] >= 0) {
      range.live[range.known[op.a] ? op.b : op.c] = true;
      changes = true;
      continue;
    }
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) range.live[operand] = true;
    }
  }
  if (!changes) return UniformLaneRange();
  return range;
}

}  // namespace xjit::jit
