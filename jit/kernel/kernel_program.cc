// KernelProgram printing and analyses (see kernel_program.h).
#include "jit/kernel/kernel_program.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"

namespace xjit::jit {
namespace {

const char* KindName(KOpKind kind) {
  switch (kind) {
    case KOpKind::kLoopIndex: return "loop_index";
    case KOpKind::kIConst: return "iconst";
    case KOpKind::kIAdd: return "iadd";
    case KOpKind::kISub: return "isub";
    case KOpKind::kIMul: return "imul";
    case KOpKind::kIMin: return "imin";
    case KOpKind::kIMax: return "imax";
    case KOpKind::kIDiv: return "idiv";
    case KOpKind::kIRem: return "irem";
    case KOpKind::kILt: return "ilt";
    case KOpKind::kIEq: return "ieq";
    case KOpKind::kIAnd: return "iand";
    case KOpKind::kLoopEnd: return "loop_end";
    case KOpKind::kSkipUnless: return "skip_unless";
    case KOpKind::kLoad: return "load";
    case KOpKind::kStore: return "store";
    case KOpKind::kFromIndex: return "from_index";
    case KOpKind::kToIndex: return "to_index";
    case KOpKind::kUnary: return "unary";
    case KOpKind::kBinary: return "binary";
    case KOpKind::kCompare: return "compare";
    case KOpKind::kSelect: return "select";
    case KOpKind::kClamp: return "clamp";
    case KOpKind::kConvert: return "convert";
    case KOpKind::kBitcast: return "bitcast";
    case KOpKind::kCall: return "call";
    case KOpKind::kCallArgs: return "call_args";
    case KOpKind::kCallImag: return "call_imag";
    case KOpKind::kConst: return "const";
    case KOpKind::kFma: return "fma";
    case KOpKind::kScale: return "scale";
    case KOpKind::kBits: return "bits";
    case KOpKind::kBitShift: return "bitshift";
    case KOpKind::kAccInit: return "acc_init";
    case KOpKind::kAccRead: return "acc_read";
    case KOpKind::kAccWrite: return "acc_write";
    case KOpKind::kAccResult: return "acc_result";
  }
  return "?";
}

}  // namespace

bool IsIndexOp(KOpKind kind) { return kind <= KOpKind::kSkipUnless; }

uint64_t ReductionIdentityBits(Opcode opcode, ElementType type) {
  if (type == ElementType::kF32 || type == ElementType::kF64) {
    const bool f64 = type == ElementType::kF64;
    switch (opcode) {
      case Opcode::kAdd: return f64 ? 0x8000000000000000ull : 0x80000000u;  // -0
      case Opcode::kMultiply: return f64 ? 0x3FF0000000000000ull : 0x3F800000u;
      case Opcode::kMaximum: return f64 ? 0xFFF0000000000000ull : 0xFF800000u;  // -inf
      default: return f64 ? 0x7FF0000000000000ull : 0x7F800000u;  // +inf (minimum)
    }
  }
  const int width = BitWidth(type);
  const uint64_t all = width >= 64 ? ~uint64_t{0} : (uint64_t{1} << width) - 1;
  const uint64_t sign = uint64_t{1} << (width - 1);
  const bool is_signed = IsSignedInteger(type);
  switch (opcode) {
    case Opcode::kMultiply: return 1;
    case Opcode::kAnd: return all;
    case Opcode::kMaximum: return is_signed ? sign : 0;
    case Opcode::kMinimum: return is_signed ? sign - 1 : all;
    default: return 0;  // add, or, xor
  }
}

int64_t KernelProgram::element_count() const {
  int64_t n = 1;
  for (int level = 0; level < output_loops(); ++level) n *= loop_extents[level];
  return n;
}

std::string KernelProgram::ToString(bool with_origins) const {
  std::string out = absl::StrCat("kernel ", name, " loops [", absl::StrJoin(loop_extents, ","),
                                 "]");
  if (reduction_loops > 0) absl::StrAppend(&out, " (last ", reduction_loops, " reduce)");
  if (claims_range) absl::StrAppend(&out, " (loop 0 claimed)");
  absl::StrAppend(&out, "\n");
  for (size_t i = 0; i < buffers.size(); ++i) {
    const int output = static_cast<int>(i) - input_count();
    absl::StrAppend(&out, "  buffer ", i, ": ", ElementTypeName(buffers[i].type), "[",
                    buffers[i].element_count, "]",
                    output >= 0 ? absl::StrCat(" (output ", output, ")") : "", "\n");
  }
  for (size_t i = 0; i < ops.size(); ++i) {
    const KOp& op = ops[i];
    std::string line = absl::StrCat("  %", i, " = ");
    if (op.kind != KOpKind::kStore) absl::StrAppend(&line, ElementTypeName(op.type), " ");
    switch (op.kind) {
      case KOpKind::kUnary:
      case KOpKind::kBinary:
        absl::StrAppend(&line, OpcodeName(op.opcode));
        break;
      case KOpKind::kCompare:
        absl::StrAppend(&line, "compare ", ComparisonDirectionName(op.direction), " ",
                        ComparisonTypeName(op.comparison));
        break;
      case KOpKind::kBits:
      case KOpKind::kBitShift:
      case KOpKind::kCall:
        absl::StrAppend(&line, KindName(op.kind), " ", OpcodeName(op.opcode));
        break;
      default:
        absl::StrAppend(&line, KindName(op.kind));
        break;
    }
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) absl::StrAppend(&line, " %", operand);
    }
    switch (op.kind) {
      case KOpKind::kIMin: case KOpKind::kIMax:
        if (IsGuard(op)) absl::StrAppend(&line, " guard");
        break;
      case KOpKind::kLoopIndex: case KOpKind::kIConst: case KOpKind::kIDiv:
      case KOpKind::kIRem: case KOpKind::kLoad: case KOpKind::kBitShift: case KOpKind::kStore:
      case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
      case KOpKind::kAccResult:
        absl::StrAppend(&line, " #", op.imm);
        break;
      case KOpKind::kConst:
        absl::StrAppend(&line, " 0x", absl::Hex(static_cast<uint64_t>(op.imm)));
        break;
      case KOpKind::kConvert: case KOpKind::kBitcast:
        absl::StrAppend(&line, " from ", ElementTypeName(op.operand_type));
        break;
      default:
        break;
    }
    if (with_origins && op.origin >= 0 && op.origin < static_cast<int>(origins.size())) {
      absl::StrAppend(&line, "  ; ", origins[op.origin]);
    }
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::vector<std::optional<int64_t>> InnerStrides(const KernelProgram& program) {
  return StridesAlong(program, static_cast<int>(program.loop_extents.size()) - 1);
}

namespace {

std::vector<std::optional<int64_t>> Strides(const KernelProgram& program, int inner,
                                            bool through_guards) {
  std::vector<std::optional<int64_t>> stride(program.ops.size());
  auto get = [&](int operand) -> std::optional<int64_t> {
    return operand < 0 ? std::optional<int64_t>(0) : stride[operand];
  };
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const KOp& op = program.ops[i];
    const std::optional<int64_t> a = get(op.a);
    const std::optional<int64_t> b = get(op.b);
    const std::optional<int64_t> c = get(op.c);
    const bool invariant = a == 0 && b == 0 && c == 0;
    std::optional<int64_t> s;
    switch (op.kind) {
      case KOpKind::kLoopIndex:
        s = op.imm == inner ? 1 : 0;
        break;
      case KOpKind::kIConst: case KOpKind::kLoopEnd:
        s = 0;
        break;
      case KOpKind::kIAdd:
        if (a && b) s = *a + *b;
        break;
      case KOpKind::kISub:
        if (a && b) s = *a - *b;
        break;
      case KOpKind::kIMul: {
        // Affine times an invariant constant stays affine.
        const KOp& x = program.ops[op.a];
        const KOp& y = program.ops[op.b];
        if (a == 0 && b == 0) {
          s = 0;
        } else if (a && y.kind == KOpKind::kIConst) {
          s = *a * y.imm;
        } else if (b && x.kind == KOpKind::kIConst) {
          s = *b * x.imm;
        }
        break;
      }
      case KOpKind::kIMin: case KOpKind::kIMax:
        if (through_guards && IsGuard(op)) {
          s = a;
        } else if (invariant) {
          s = 0;
        }
        break;
      case KOpKind::kLoad:
        // The loaded value is invariant only when its position is.
        if (a == 0) s = 0;
        break;
      case KOpKind::kAccInit: case KOpKind::kAccRead: case KOpKind::kAccWrite:
      case KOpKind::kAccResult:
        break;
      default:
        if (invariant) s = 0;
        break;
    }
    stride[i] = s;
  }
  return stride;
}

}  // namespace

std::vector<std::optional<int64_t>> StridesAlong(const KernelProgram& program, int inner) {
  return Strides(program, inner, /*through_guards=*/false);
}

std::vector<std::optional<int64_t>> GuardedStridesAlong(const KernelProgram& program, int inner) {
  return Strides(program, inner, /*through_guards=*/true);
}

void RemoveDeadOps(KernelProgram* program) {
  std::vector<KOp>& ops = program->ops;
  std::vector<bool> live(ops.size(), false);
  for (size_t i = ops.size(); i-- > 0;) {
    if (ops[i].kind == KOpKind::kStore || ops[i].kind == KOpKind::kAccInit ||
        ops[i].kind == KOpKind::kAccWrite || ops[i].kind == KOpKind::kSkipUnless) {
      live[i] = true;
    }
    if (!live[i]) continue;
    for (int operand : {ops[i].a, ops[i].b, ops[i].c}) {
      if (operand >= 0) live[operand] = true;
    }
  }
  std::vector<int> renumber(ops.size(), -1);
  std::vector<KOp> kept;
  for (size_t i = 0; i < ops.size(); ++i) {
    if (!live[i]) continue;
    KOp op = ops[i];
    for (int* operand : {&op.a, &op.b, &op.c}) {
      if (*operand >= 0) *operand = renumber[*operand];
    }
    renumber[i] = static_cast<int>(kept.size());
    kept.push_back(op);
  }
  ops = std::move(kept);
}

void SplitIndexChains(KernelProgram* program) {
  std::vector<KOp>& ops = program->ops;
  const size_t n = ops.size();
  const auto is_value_kind = [](KOpKind kind) {
    switch (kind) {
      case KOpKind::kLoad: case KOpKind::kFromIndex: case KOpKind::kUnary:
      case KOpKind::kBinary: case KOpKind::kCompare: case KOpKind::kSelect:
      case KOpKind::kClamp: case KOpKind::kConvert: case KOpKind::kBitcast:
      case KOpKind::kConst: case KOpKind::kFma: case KOpKind::kBits: case KOpKind::kBitShift:
        return true;
      default:
        return false;
    }
  };
  // The index chains: value operations kToIndex reads, through value
  // operations (operands come before their users, so one backward sweep).
  std::vector<bool> chain(n, false);
  for (size_t i = n; i-- > 0;) {
    if (ops[i].kind != KOpKind::kToIndex && !chain[i]) continue;
    for (int operand : {ops[i].a, ops[i].b, ops[i].c}) {
      if (operand >= 0 && is_value_kind(ops[operand].kind)) chain[operand] = true;
    }
  }
  // Which chain operations are also read as values: by an operation other
  // than kToIndex that is outside the chains or itself read as a value.
  std::vector<bool> read_as_value(n, false);
  bool any = false;
  for (size_t i = n; i-- > 0;) {
    if (!chain[i]) read_as_value[i] = true;
    if (!read_as_value[i] || ops[i].kind == KOpKind::kToIndex) continue;
    for (int operand : {ops[i].a, ops[i].b, ops[i].c}) {
      if (operand >= 0 && chain[operand] && !read_as_value[operand]) {
        read_as_value[operand] = true;
        any = true;
      }
    }
  }
  if (!any) return;
  // Rebuild: a chain operation read both ways becomes two, the value one
  // (read by value users) and right after it the index one (read by kToIndex
  // and the index sides of other chain operations).
  std::vector<int> as_value(n, -1), as_index(n, -1);
  std::vector<KOp> rebuilt;
  rebuilt.reserve(n + n / 4);
  for (size_t i = 0; i < n; ++i) {
    const auto add = [&](const std::vector<int>& map) {
      KOp op = ops[i];
      for (int* operand : {&op.a, &op.b, &op.c}) {
        if (*operand >= 0) *operand = map[*operand] >= 0 ? map[*operand] : as_value[*operand];
      }
      rebuilt.push_back(op);
      return static_cast<int>(rebuilt.size()) - 1;
    };
    if (!chain[i]) {
      as_value[i] = add(ops[i].kind == KOpKind::kToIndex ? as_index : as_value);
      continue;
    }
    if (read_as_value[i]) as_value[i] = add(as_value);
    as_index[i] = read_as_value[i] ? add(as_index) : (as_value[i] = add(as_index));
  }
  ops = std::move(rebuilt);
}

std::vector<int> UseCounts(const KernelProgram& program) {
  std::vector<int> uses(program.ops.size(), 0);
  for (const KOp& op : program.ops) {
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) ++uses[operand];
    }
  }
  return uses;
}

std::vector<int> OpLevels(const KernelProgram& program) {
  return OpLevels(program, std::vector<bool>(program.ops.size(), false));
}

std::vector<int> OpLevels(const KernelProgram& program, const std::vector<bool>& index_values) {
  const int inner = static_cast<int>(program.loop_extents.size()) - 1;
  const int inner_output = program.output_loops() - 1;
  const std::vector<KSection> sections = OpSections(program);
  std::vector<int> level(program.ops.size(), -1);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const KOp& op = program.ops[i];
    if (!IsIndexOp(op.kind) && !index_values[i]) {
      level[i] = sections[i] == KSection::kBody ? inner : inner_output;
      continue;
    }
    int l = op.kind == KOpKind::kLoopIndex ? static_cast<int>(op.imm) : -1;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) l = std::max(l, level[operand]);
    }
    level[i] = l;
  }
  return level;
}

std::vector<bool> IndexValueOps(const KernelProgram& program) {
  const size_t n = program.ops.size();
  std::vector<bool> member(n, false);
  std::vector<std::vector<int>> users(n);
  for (size_t i = 0; i < n; ++i) {
    const KOp& op = program.ops[i];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0) users[operand].push_back(static_cast<int>(i));
    }
    switch (op.kind) {
      case KOpKind::kLoad: case KOpKind::kFromIndex: case KOpKind::kToIndex:
      case KOpKind::kUnary: case KOpKind::kBinary: case KOpKind::kCompare:
      case KOpKind::kSelect: case KOpKind::kClamp: case KOpKind::kConvert:
      case KOpKind::kBitcast: case KOpKind::kConst: case KOpKind::kFma: case KOpKind::kBits:
      case KOpKind::kBitShift:
        member[i] = true;
        break;
      default:  // Index operations, stores, accumulators, calls.
        break;
    }
  }
  // The largest set closed both ways: drop members read by a non-member
  // value operation (kToIndex's users read an index), sweeping from the last
  // operation back so that a drop reaches a whole chain at once, then members
  // with a value operand that is not a member, sweeping forward; repeat until
  // nothing changes (rarely more than twice: the sweeps are linear).
  auto drop = [&](size_t i) {
    member[i] = false;
    return true;
  };
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = n; i-- > 0;) {
      if (!member[i] || program.ops[i].kind == KOpKind::kToIndex) continue;
      bool keep = !users[i].empty();
      for (int user : users[i]) keep = keep && member[user];
      if (!keep) changed = drop(i);
    }
    for (size_t i = 0; i < n; ++i) {
      if (!member[i]) continue;
      const KOp& op = program.ops[i];
      bool keep = true;
      for (int operand : {op.a, op.b, op.c}) {
        keep = keep &&
               (operand < 0 || IsIndexOp(program.ops[operand].kind) || member[operand]);
      }
      if (!keep) changed = drop(i);
    }
  }
  return member;
}

}  // namespace xjit::jit

namespace xjit::jit {

std::vector<KSection> OpSections(const KernelProgram& program) {
  const int output_loops = program.output_loops();
  std::vector<KSection> section(program.ops.size(), KSection::kPre);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const KOp& op = program.ops[i];
    KSection s = KSection::kPre;
    switch (op.kind) {
      case KOpKind::kLoopIndex:
        if (op.imm >= output_loops) s = KSection::kBody;
        break;
      case KOpKind::kAccRead: case KOpKind::kAccWrite:
        s = KSection::kBody;
        break;
      case KOpKind::kAccResult:
        s = KSection::kPost;
        break;
      default:
        break;
    }
    for (int operand : {op.a, op.b, op.c}) {
      if (operand < 0) continue;
      if (section[operand] == KSection::kBody) s = KSection::kBody;
      if (section[operand] == KSection::kPost && s != KSection::kBody) s = KSection::kPost;
    }
    section[i] = s;
  }
  return section;
}

ProgramPhases ComputePhases(const KernelProgram& program) {
  const size_t n = program.ops.size();
  const std::vector<KSection> sections = OpSections(program);
  ProgramPhases phases;
  phases.pass.assign(n, -1);
  phases.stage.assign(n, -1);
  int64_t max_slot = -1;
  for (const KOp& op : program.ops) {
    if (op.kind == KOpKind::kAccInit) max_slot = std::max(max_slot, op.imm);
  }
  phases.slot_pass.assign(static_cast<size_t>(max_slot + 1), -1);
  auto slot_pass = [&](int64_t slot) {
    return slot >= 0 && slot <= max_slot ? std::max(phases.slot_pass[slot], 0) : 0;
  };
  // The slots whose running value each body operation reads (a bit per
  // slot; slots from 63 on share the last bit, which only makes them share
  // a pass). A slot written from another slot's running value must run in
  // the same pass as that slot.
  std::vector<uint64_t> reads(n, 0);
  auto bit = [](int64_t slot) { return uint64_t{1} << std::min<int64_t>(slot, 63); };
  // Accumulator reads see their slot's pass, which the slot's write (later
  // in the program) decides; passes only grow, so repeat until stable.
  for (bool changed = true; changed;) {
    changed = false;
    for (size_t i = 0; i < n; ++i) {
      const KOp& op = program.ops[i];
      int value = 0;
      for (int operand : {op.a, op.b, op.c}) {
        if (operand < 0) continue;
        value = std::max(value, sections[operand] == KSection::kBody ? phases.pass[operand]
                                                                     : phases.stage[operand]);
        reads[i] |= reads[operand];
      }
      if (sections[i] != KSection::kBody) {
        if (op.kind == KOpKind::kAccResult) value = slot_pass(op.imm) + 1;
        phases.stage[i] = value;
        reads[i] = 0;
        continue;
      }
      if (op.kind == KOpKind::kAccRead) {
        value = std::max(value, slot_pass(op.imm));
        reads[i] |= bit(op.imm);
      }
      if (op.kind == KOpKind::kAccWrite) {
        value = std::max(value, slot_pass(op.imm));
        for (int64_t slot = 0; slot <= max_slot; ++slot) {
          if (slot != op.imm && (reads[i] & bit(slot)) == 0) continue;
          if (value > phases.slot_pass[slot]) {
            phases.slot_pass[slot] = value;
            changed = true;
          }
        }
      }
      phases.pass[i] = value;
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const KOp& op = program.ops[i];
    if (sections[i] == KSection::kBody &&
        (op.kind == KOpKind::kAccWrite || op.kind == KOpKind::kStore)) {
      phases.count = std::max(phases.count, phases.pass[i] + 1);
    }
  }
  return phases;
}

std::vector<bool> ProgramPhases::InPass(const KernelProgram& program, int p,
                                        const std::vector<int>* carried_from) const {
  const size_t n = program.ops.size();
  std::vector<bool> in(n, false);
  for (size_t i = n; i-- > 0;) {
    const KOp& op = program.ops[i];
    const bool root = pass[i] == p && (op.kind == KOpKind::kAccWrite || op.kind == KOpKind::kStore);
    if (!root && !in[i]) continue;
    in[i] = true;
    if (carried_from != nullptr && (*carried_from)[i] >= 0 && (*carried_from)[i] < p) continue;
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= 0 && pass[operand] >= 0) in[operand] = true;
    }
  }
  return in;
}

absl::Status ValidateProgram(const KernelProgram& program) {
  auto bad = [&](absl::string_view why) {
    return absl::InternalError(absl::StrCat("kernel ", program.name, ": ", why));
  };
  if (program.output_count < 1 || program.output_count > static_cast<int>(program.buffers.size())) {
    return bad("bad output count");
  }
  if (program.reduction_loops < 0 ||
      program.reduction_loops > static_cast<int>(program.loop_extents.size())) {
    return bad("bad reduction loop count");
  }
  if (program.reduction_loops > 0 && program.output_loops() < 1) {
    return bad("a reduction needs an output loop");
  }
  if (program.claims_range && (program.reduction_loops > 0 || program.loop_extents.empty())) {
    return bad("a range claim needs loop 0 and no reduction loops");
  }
  for (int level = program.output_loops(); level < static_cast<int>(program.loop_extents.size());
       ++level) {
    if (program.loop_extents[level] < 1) return bad("empty reduction loop");
  }
  const std::vector<KSection> sections = OpSections(program);
  const int ops = static_cast<int>(program.ops.size());
  absl::flat_hash_map<int64_t, ElementType> slots;
  absl::flat_hash_set<int64_t> written;
  for (int i = 0; i < ops; ++i) {
    const KOp& op = program.ops[i];
    for (int operand : {op.a, op.b, op.c}) {
      if (operand >= i) return bad("operand after its user");
      if (operand >= 0 && program.ops[operand].kind == KOpKind::kSkipUnless) {
        return bad("a skip read as a value");
      }
      if (operand >= 0 && program.ops[operand].kind == KOpKind::kCallArgs &&
          (op.kind != KOpKind::kCall || operand != op.c)) {
        return bad("call arguments read by something other than their call");
      }
    }
    switch (op.kind) {
      case KOpKind::kLoad:
        if (op.imm < 0 || op.imm >= program.input_count()) return bad("load from a non-input");
        break;
      case KOpKind::kStore:
        if (op.imm < 0 || op.imm >= program.output_count) return bad("store to a non-output");
        if (program.buffers[program.output_buffer(static_cast<int>(op.imm))].type !=
            op.operand_type) {
          return bad("store of the wrong type");
        }
        break;
      case KOpKind::kAccInit:
        if (program.reduction_loops == 0) return bad("accumulator without reduction loops");
        if (sections[i] != KSection::kPre) return bad("accumulator init after the reduction");
        if (!slots.emplace(op.imm, op.type).second) return bad("accumulator initialised twice");
        break;
      case KOpKind::kAccRead: case KOpKind::kAccWrite: case KOpKind::kAccResult: {
        auto it = slots.find(op.imm);
        if (it == slots.end() || it->second != op.type) return bad("undeclared accumulator");
        if (op.kind == KOpKind::kAccWrite) {
          if (!written.insert(op.imm).second) return bad("accumulator written twice");
        }
        break;
      }
      case KOpKind::kCall:
        if (op.a < 0 || op.b < 0 ||
            (op.c >= 0 && program.ops[op.c].kind != KOpKind::kCallArgs)) {
          return bad("bad call operands");
        }
        break;
      case KOpKind::kCallArgs:
        if (op.a < 0 || op.b < 0) return bad("bad call arguments");
        break;
      case KOpKind::kLoopEnd:
        if (!program.claims_range) return bad("loop end without a range claim");
        break;
      case KOpKind::kSkipUnless:
        if (op.a < 0 || program.reduction_loops > 0) return bad("bad skip");
        break;
      case KOpKind::kCallImag:
        if (op.a < 0 || program.ops[op.a].kind != KOpKind::kCall) {
          return bad("imaginary part of a non-call");
        }
        break;
      default:
        break;
    }
  }
  return absl::OkStatus();
}

}  // namespace xjit::jit
