// KernelProgram printing and analyses (see kernel_program.h).
#include "jit/kernel_program.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

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
    case KOpKind::kConst: return "const";
    case KOpKind::kFma: return "fma";
    case KOpKind::kBits: return "bits";
    case KOpKind::kBitShift: return "bitshift";
  }
  return "?";
}

}  // namespace

bool IsIndexOp(KOpKind kind) { return kind <= KOpKind::kIAnd; }

int64_t KernelProgram::element_count() const {
  int64_t n = 1;
  for (int64_t e : loop_extents) n *= e;
  return n;
}

std::string KernelProgram::ToString() const {
  std::string out = absl::StrCat("kernel ", name, " loops [", absl::StrJoin(loop_extents, ","),
                                 "]\n");
  for (size_t i = 0; i < buffers.size(); ++i) {
    absl::StrAppend(&out, "  buffer ", i, ": ", ElementTypeName(buffers[i].type), "[",
                    buffers[i].element_count, "]", i + 1 == buffers.size() ? " (output)" : "",
                    "\n");
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
      case KOpKind::kLoopIndex: case KOpKind::kIConst: case KOpKind::kIDiv:
      case KOpKind::kIRem: case KOpKind::kLoad: case KOpKind::kBitShift:
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
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::vector<std::optional<int64_t>> InnerStrides(const KernelProgram& program) {
  const int inner = static_cast<int>(program.loop_extents.size()) - 1;
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
      case KOpKind::kIConst:
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
      case KOpKind::kLoad:
        // The loaded value is invariant only when its position is.
        if (a == 0) s = 0;
        break;
      default:
        if (invariant) s = 0;
        break;
    }
    stride[i] = s;
  }
  return stride;
}

void RemoveDeadOps(KernelProgram* program) {
  std::vector<KOp>& ops = program->ops;
  std::vector<bool> live(ops.size(), false);
  for (size_t i = ops.size(); i-- > 0;) {
    if (ops[i].kind == KOpKind::kStore) live[i] = true;
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

std::vector<int> OpLevels(const KernelProgram& program) {
  const int inner = static_cast<int>(program.loop_extents.size()) - 1;
  std::vector<int> level(program.ops.size(), -1);
  for (size_t i = 0; i < program.ops.size(); ++i) {
    const KOp& op = program.ops[i];
    if (!IsIndexOp(op.kind)) {
      level[i] = inner;
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

}  // namespace xjit::jit
