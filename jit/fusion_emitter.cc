// The loop-fusion emitter (see fusion_emitter.h).
#include "jit/fusion_emitter.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"

namespace xjit::jit {
namespace {

constexpr int64_t kWideLow = std::numeric_limits<int64_t>::min() / 4;
constexpr int64_t kWideHigh = std::numeric_limits<int64_t>::max() / 4;

int64_t Clip(__int128 v) {
  if (v < kWideLow) return kWideLow;
  if (v > kWideHigh) return kWideHigh;
  return static_cast<int64_t>(v);
}

absl::Status Unsupported(const Instruction& instruction, absl::string_view why) {
  return absl::UnimplementedError(
      absl::StrCat("no kernel for ", instruction.name(), " (", OpcodeName(instruction.opcode()),
                   "): ", why));
}

bool IsKernelElementType(ElementType type) {
  if (IsPred(type) || IsInteger(type)) return true;
  switch (type) {
    case ElementType::kF16: case ElementType::kBF16: case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

// Appends operations to a program, folding constants, simplifying index
// arithmetic with known ranges, and sharing identical operations.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(KernelProgram* program) : program_(program) {}

  int Add(KOp op) {
    const auto key = std::make_tuple(op.kind, op.type, op.operand_type, op.opcode, op.direction,
                                     op.comparison, op.a, op.b, op.c, op.imm);
    if (op.kind != KOpKind::kStore) {
      auto it = cse_.find(key);
      if (it != cse_.end()) return it->second;
    }
    const int id = static_cast<int>(program_->ops.size());
    program_->ops.push_back(op);
    ranges_.push_back({kWideLow, kWideHigh});
    if (op.kind != KOpKind::kStore) cse_[key] = id;
    return id;
  }

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
  int IAdd(int a, int b) {
    if (IsConst(a, 0)) return b;
    if (IsConst(b, 0)) return a;
    if (IsConst(a) && IsConst(b)) return Const(Value(a) + Value(b));
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
  // a / divisor for a >= 0.
  int IDiv(int a, int64_t divisor) {
    if (divisor == 1) return a;
    if (Low(a) >= 0 && High(a) < divisor) return Const(0);
    if (IsConst(a)) return Const(Value(a) / divisor);
    return Ranged(IndexOp(KOpKind::kIDiv, a, -1, divisor), std::max<int64_t>(Low(a), 0) / divisor,
                  High(a) / divisor);
  }
  // a % divisor for a >= 0.
  int IRem(int a, int64_t divisor) {
    if (divisor == 1) return Const(0);
    if (Low(a) >= 0 && High(a) < divisor) return a;
    if (IsConst(a)) return Const(Value(a) % divisor);
    return Ranged(IndexOp(KOpKind::kIRem, a, -1, divisor), 0,
                  std::min(divisor - 1, std::max<int64_t>(High(a), 0)));
  }
  int ILt(int a, int b) {
    if (High(a) < Low(b)) return Const(1);
    if (Low(a) >= High(b)) return Const(0);
    return Ranged(IndexOp(KOpKind::kILt, a, b), 0, 1);
  }
  int IEq(int a, int b) {
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
  int Ranged(KOp op, int64_t low, int64_t high) {
    const int id = Add(op);
    ranges_[id] = {std::max(ranges_[id].first, low), std::min(ranges_[id].second, high)};
    return id;
  }

  KernelProgram* program_;
  std::vector<std::pair<int64_t, int64_t>> ranges_;
  absl::flat_hash_map<std::tuple<KOpKind, ElementType, ElementType, Opcode, ComparisonDirection,
                                 ComparisonType, int, int, int, int64_t>,
                      int>
      cse_;
};

using Index = std::vector<int>;

// Emits instructions elementally. Leaves (the instructions whose values come
// from input buffers) are decided by the caller.
class ElementEmitter {
 public:
  ElementEmitter(KernelSpec* spec, ProgramBuilder* builder) : spec_(spec), b_(*builder) {}

  // Declares `leaf` to be read from a new input buffer holding the value of
  // `source` (an instruction outside the emitted computation).
  absl::Status AddLeaf(const Instruction& leaf, const Instruction* source) {
    if (!IsKernelCompatibleShape(leaf.shape())) {
      return Unsupported(leaf, absl::StrCat("unsupported shape ", leaf.shape().ToString()));
    }
    leaf_buffer_[&leaf] = static_cast<int>(spec_->program.buffers.size());
    spec_->program.buffers.push_back({leaf.shape().element_type(), PhysicalElementCount(leaf.shape())});
    spec_->inputs.push_back(source);
    return absl::OkStatus();
  }

  // The value of `instruction` at `index` (one index value per dimension).
  absl::StatusOr<int> Emit(const Instruction& instruction, const Index& index) {
    auto key = std::make_pair(&instruction, index);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    XJIT_ASSIGN_OR_RETURN(int value, EmitUncached(instruction, index));
    memo_[key] = value;
    return value;
  }

  // The physical position of `index` in an array of `shape`.
  int Offset(const Shape& shape, const Index& index) {
    int offset = b_.Const(0);
    int64_t stride = 1;
    for (int64_t dim : shape.layout().minor_to_major) {
      offset = b_.IAdd(offset, b_.IMul(index[dim], b_.Const(stride)));
      stride *= shape.dimensions(dim);
    }
    return offset;
  }

 private:
  absl::StatusOr<int> EmitUncached(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitPad(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitConcatenate(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitDynamicSlice(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitDynamicUpdateSlice(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitReshape(const Instruction& instr, const Index& index);
  // The start indices of a dynamic (update) slice, clamped so that a window
  // of `sizes` fits in `operand`.
  absl::StatusOr<Index> ClampedStarts(const Instruction& instr, int first_index_operand,
                                      const Shape& operand, absl::Span<const int64_t> sizes);
  // An operand that may be a scalar standing for every element.
  absl::StatusOr<int> EmitMaybeScalar(const Instruction& operand, const Index& index) {
    if (operand.shape().rank() == 0) return Emit(operand, {});
    return Emit(operand, index);
  }
  int Select(int predicate_index, int on_true, int on_false, ElementType type) {
    if (b_.IsConst(predicate_index)) return b_.Value(predicate_index) != 0 ? on_true : on_false;
    const int predicate = b_.Value(KOpKind::kFromIndex, ElementType::kPred, predicate_index);
    return b_.Value(KOpKind::kSelect, type, predicate, on_true, on_false);
  }

  KernelSpec* spec_;
  ProgramBuilder& b_;
  absl::flat_hash_map<const Instruction*, int> leaf_buffer_;
  absl::flat_hash_map<std::pair<const Instruction*, Index>, int> memo_;
};

ComparisonType ResolveComparison(ComparisonType requested, ElementType type) {
  if (IsFloat(type)) {
    return requested == ComparisonType::kTotalOrder ? ComparisonType::kTotalOrder
                                                    : ComparisonType::kFloat;
  }
  if (IsSignedInteger(type)) {
    if (requested == ComparisonType::kDefault || requested == ComparisonType::kSigned ||
        requested == ComparisonType::kTotalOrder) {
      return ComparisonType::kSigned;
    }
    return ComparisonType::kUnsigned;
  }
  if (IsUnsignedInteger(type)) {
    return requested == ComparisonType::kSigned || requested == ComparisonType::kTotalOrder
               ? ComparisonType::kSigned
               : ComparisonType::kUnsigned;
  }
  return ComparisonType::kUnsigned;  // pred
}

absl::StatusOr<int> ElementEmitter::EmitUncached(const Instruction& instr, const Index& index) {
  auto leaf = leaf_buffer_.find(&instr);
  if (leaf != leaf_buffer_.end()) {
    KOp load;
    load.kind = KOpKind::kLoad;
    load.type = instr.shape().element_type();
    load.imm = leaf->second;
    load.a = Offset(instr.shape(), index);
    return b_.Add(load);
  }
  const Shape& shape = instr.shape();
  if (!shape.IsArray() || !IsKernelElementType(shape.element_type()) || shape.is_dynamic()) {
    return Unsupported(instr, absl::StrCat("unsupported shape ", shape.ToString()));
  }
  const ElementType type = shape.element_type();
  const Opcode opcode = instr.opcode();
  for (const Instruction* operand : instr.operands()) {
    if (!operand->shape().IsArray() || !IsKernelElementType(operand->shape().element_type()) ||
        operand->shape().is_dynamic()) {
      return Unsupported(instr, absl::StrCat("unsupported operand shape ",
                                             operand->shape().ToString()));
    }
  }
  switch (opcode) {
    case Opcode::kCopy:
      return Emit(*instr.operand(0), index);
    case Opcode::kConvert: {
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      if (instr.operand(0)->shape().element_type() == type) return x;
      return b_.Value(KOpKind::kConvert, type, x);
    }
    case Opcode::kBitcastConvert: {
      const ElementType from = instr.operand(0)->shape().element_type();
      if (BitWidth(from) != BitWidth(type) || IsPred(from) || IsPred(type) ||
          BitWidth(type) < 8) {
        return Unsupported(instr, "bitcast-convert between these types");
      }
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      if (from == type) return x;
      return b_.Value(KOpKind::kBitcast, type, x);
    }
    case Opcode::kCompare: {
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(1), index));
      KOp op;
      op.kind = KOpKind::kCompare;
      op.type = ElementType::kPred;
      op.operand_type = instr.operand(0)->shape().element_type();
      op.direction = instr.attrs().comparison_direction;
      op.comparison = ResolveComparison(instr.attrs().comparison_type, op.operand_type);
      op.a = x;
      op.b = y;
      return b_.Add(op);
    }
    case Opcode::kSelect: {
      XJIT_ASSIGN_OR_RETURN(int p, EmitMaybeScalar(*instr.operand(0), index));
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(1), index));
      XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(2), index));
      return b_.Value(KOpKind::kSelect, type, p, x, y);
    }
    case Opcode::kClamp: {
      XJIT_ASSIGN_OR_RETURN(int low, EmitMaybeScalar(*instr.operand(0), index));
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(1), index));
      XJIT_ASSIGN_OR_RETURN(int high, EmitMaybeScalar(*instr.operand(2), index));
      KOp op;
      op.kind = KOpKind::kClamp;
      op.type = type;
      op.operand_type = type;
      op.a = low;
      op.b = x;
      op.c = high;
      return b_.Add(op);
    }
    case Opcode::kIota: {
      if (IsPred(type)) return Unsupported(instr, "pred iota");
      const int64_t dim = instr.attrs().iota_dimension;
      if (dim < 0 || dim >= shape.rank()) return Unsupported(instr, "bad iota dimension");
      return b_.Value(KOpKind::kFromIndex, type, index[dim]);
    }
    case Opcode::kBroadcast: {
      const Instruction& operand = *instr.operand(0);
      const std::vector<int64_t>& dims = instr.attrs().dimensions;
      if (static_cast<int64_t>(dims.size()) != operand.shape().rank()) {
        return Unsupported(instr, "broadcast dimensions do not match the operand");
      }
      // A size-1 operand dimension may map to a larger output dimension (it
      // repeats, as in BroadcastInDim); it is always read at index 0.
      Index operand_index;
      for (size_t k = 0; k < dims.size(); ++k) {
        const bool repeats = operand.shape().dimensions(k) == 1 &&
                             instr.shape().dimensions(dims[k]) != 1;
        operand_index.push_back(repeats ? b_.Const(0) : index[dims[k]]);
      }
      return Emit(operand, operand_index);
    }
    case Opcode::kTranspose: {
      const std::vector<int64_t>& perm = instr.attrs().dimensions;
      Index operand_index(perm.size());
      for (size_t k = 0; k < perm.size(); ++k) operand_index[perm[k]] = index[k];
      return Emit(*instr.operand(0), operand_index);
    }
    case Opcode::kReshape:
      return EmitReshape(instr, index);
    case Opcode::kSlice: {
      const std::vector<SliceDimension>& slice = instr.attrs().slice;
      Index operand_index(index.size());
      for (size_t d = 0; d < index.size(); ++d) {
        operand_index[d] =
            b_.IAdd(b_.Const(slice[d].start), b_.IMul(index[d], b_.Const(slice[d].stride)));
      }
      return Emit(*instr.operand(0), operand_index);
    }
    case Opcode::kReverse: {
      Index operand_index = index;
      for (int64_t d : instr.attrs().dimensions) {
        operand_index[d] = b_.ISub(b_.Const(shape.dimensions(d) - 1), index[d]);
      }
      return Emit(*instr.operand(0), operand_index);
    }
    case Opcode::kPad:
      return EmitPad(instr, index);
    case Opcode::kConcatenate:
      return EmitConcatenate(instr, index);
    case Opcode::kDynamicSlice:
      return EmitDynamicSlice(instr, index);
    case Opcode::kDynamicUpdateSlice:
      return EmitDynamicUpdateSlice(instr, index);
    default:
      break;
  }
  if (IsElementwiseUnary(opcode) && instr.operand_count() == 1) {
    XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
    KOp op;
    op.kind = KOpKind::kUnary;
    op.opcode = opcode;
    op.type = type;
    op.operand_type = instr.operand(0)->shape().element_type();
    op.a = x;
    return b_.Add(op);
  }
  if (IsElementwiseBinary(opcode) && instr.operand_count() == 2) {
    XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
    XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(1), index));
    KOp op;
    op.kind = KOpKind::kBinary;
    op.opcode = opcode;
    op.type = type;
    op.operand_type = instr.operand(0)->shape().element_type();
    op.a = x;
    op.b = y;
    return b_.Add(op);
  }
  return Unsupported(instr, "not a loop-fusible operation");
}

absl::StatusOr<int> ElementEmitter::EmitReshape(const Instruction& instr, const Index& index) {
  const Shape& out = instr.shape();
  const Instruction& operand = *instr.operand(0);
  const Shape& in = operand.shape();
  // Row-major linear position of `index`, then the operand index with that
  // position. The range analysis removes the divisions and remainders of
  // dimensions that map one to one.
  int linear = b_.Const(0);
  int64_t stride = 1;
  for (int64_t d = out.rank() - 1; d >= 0; --d) {
    linear = b_.IAdd(linear, b_.IMul(index[d], b_.Const(stride)));
    stride *= out.dimensions(d);
  }
  Index operand_index(in.rank());
  stride = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    operand_index[d] = b_.IRem(b_.IDiv(linear, stride), std::max<int64_t>(in.dimensions(d), 1));
    stride *= in.dimensions(d);
  }
  return Emit(operand, operand_index);
}

absl::StatusOr<int> ElementEmitter::EmitPad(const Instruction& instr, const Index& index) {
  const Instruction& operand = *instr.operand(0);
  XJIT_ASSIGN_OR_RETURN(int padding_value, Emit(*instr.operand(1), {}));
  const PaddingConfig& padding = instr.attrs().padding;
  if (operand.shape().element_count() == 0) return padding_value;
  int inside = b_.Const(1);
  Index operand_index(index.size());
  for (size_t d = 0; d < index.size(); ++d) {
    const int64_t period = padding[d].interior + 1;
    const int64_t size = operand.shape().dimensions(d);
    // t = position relative to the operand's first element.
    const int t = b_.ISub(index[d], b_.Const(padding[d].low));
    const int t_clamped = b_.IMax(t, b_.Const(0));
    const int q = b_.IDiv(t_clamped, period);
    const int r = b_.IRem(t_clamped, period);
    int in_d = b_.IAnd(b_.IGe(t, b_.Const(0)), b_.ILt(q, b_.Const(size)));
    in_d = b_.IAnd(in_d, b_.IEq(r, b_.Const(0)));
    inside = b_.IAnd(inside, in_d);
    operand_index[d] = b_.IMin(q, b_.Const(size - 1));
  }
  if (b_.IsConst(inside, 0)) return padding_value;
  XJIT_ASSIGN_OR_RETURN(int value, Emit(operand, operand_index));
  return Select(inside, value, padding_value, instr.shape().element_type());
}

absl::StatusOr<int> ElementEmitter::EmitConcatenate(const Instruction& instr,
                                                    const Index& index) {
  if (instr.attrs().dimensions.size() != 1) return Unsupported(instr, "bad dimensions");
  const int64_t dim = instr.attrs().dimensions[0];
  // Operands holding elements along `dim`, with their start positions.
  std::vector<std::pair<const Instruction*, int64_t>> parts;
  int64_t start = 0;
  for (const Instruction* operand : instr.operands()) {
    const int64_t size = operand->shape().dimensions(dim);
    if (size > 0) parts.push_back({operand, start});
    start += size;
  }
  if (parts.empty()) return Unsupported(instr, "empty concatenate");  // No elements to emit.
  // From the last part backwards: value = i < start_k ? (earlier parts) : part_k.
  int result = -1;
  for (size_t k = parts.size(); k-- > 0;) {
    const Instruction& operand = *parts[k].first;
    const int64_t part_start = parts[k].second;
    const int64_t size = operand.shape().dimensions(dim);
    Index operand_index = index;
    operand_index[dim] =
        b_.IClamp(b_.ISub(index[dim], b_.Const(part_start)), 0, size - 1);
    XJIT_ASSIGN_OR_RETURN(int value, Emit(operand, operand_index));
    if (result < 0) {
      result = value;
    } else {
      // Here `result` holds the parts after k.
      const int64_t next_start = parts[k + 1].second;
      result = Select(b_.ILt(index[dim], b_.Const(next_start)), value, result,
                      instr.shape().element_type());
    }
  }
  return result;
}

absl::StatusOr<Index> ElementEmitter::ClampedStarts(const Instruction& instr,
                                                    int first_index_operand,
                                                    const Shape& operand,
                                                    absl::Span<const int64_t> sizes) {
  const int64_t rank = operand.rank();
  Index starts(rank);
  const int64_t index_operands = instr.operand_count() - first_index_operand;
  for (int64_t d = 0; d < rank; ++d) {
    int start;
    if (index_operands == rank) {
      const Instruction& s = *instr.operand(first_index_operand + d);
      if (s.shape().rank() != 0 || !(IsInteger(s.shape().element_type()))) {
        return Unsupported(instr, "start index is not an integer scalar");
      }
      XJIT_ASSIGN_OR_RETURN(int value, Emit(s, {}));
      start = b_.Value(KOpKind::kToIndex, ElementType::kS64, value);
    } else if (index_operands == 1 && instr.operand(first_index_operand)->shape().rank() == 1) {
      const Instruction& s = *instr.operand(first_index_operand);
      if (!IsInteger(s.shape().element_type())) return Unsupported(instr, "bad start indices");
      XJIT_ASSIGN_OR_RETURN(int value, Emit(s, {b_.Const(d)}));
      start = b_.Value(KOpKind::kToIndex, ElementType::kS64, value);
    } else {
      return Unsupported(instr, "unexpected start index operands");
    }
    starts[d] = b_.IClamp(start, 0, std::max<int64_t>(operand.dimensions(d) - sizes[d], 0));
  }
  return starts;
}

absl::StatusOr<int> ElementEmitter::EmitDynamicSlice(const Instruction& instr,
                                                     const Index& index) {
  const Instruction& operand = *instr.operand(0);
  XJIT_ASSIGN_OR_RETURN(Index starts,
                        ClampedStarts(instr, 1, operand.shape(), instr.shape().dimensions()));
  Index operand_index(index.size());
  for (size_t d = 0; d < index.size(); ++d) operand_index[d] = b_.IAdd(index[d], starts[d]);
  return Emit(operand, operand_index);
}

absl::StatusOr<int> ElementEmitter::EmitDynamicUpdateSlice(const Instruction& instr,
                                                           const Index& index) {
  const Instruction& operand = *instr.operand(0);
  const Instruction& update = *instr.operand(1);
  XJIT_ASSIGN_OR_RETURN(int original, Emit(operand, index));
  if (update.shape().element_count() == 0) return original;
  XJIT_ASSIGN_OR_RETURN(Index starts,
                        ClampedStarts(instr, 2, operand.shape(), update.shape().dimensions()));
  int inside = b_.Const(1);
  Index update_index(index.size());
  for (size_t d = 0; d < index.size(); ++d) {
    const int64_t size = update.shape().dimensions(d);
    const int t = b_.ISub(index[d], starts[d]);
    inside = b_.IAnd(inside, b_.IAnd(b_.IGe(t, b_.Const(0)), b_.ILt(t, b_.Const(size))));
    update_index[d] = b_.IClamp(t, 0, size - 1);
  }
  if (b_.IsConst(inside, 0)) return original;
  XJIT_ASSIGN_OR_RETURN(int updated, Emit(update, update_index));
  return Select(inside, updated, original, instr.shape().element_type());
}

// Sets up the loop nest over `output`'s physical order and returns its index
// values, one per logical dimension.
Index LoopNest(const Shape& output, ProgramBuilder* builder, KernelProgram* program) {
  const int64_t rank = output.rank();
  Index index(rank);
  const std::vector<int64_t>& minor_to_major = output.layout().minor_to_major;
  for (int64_t level = 0; level < rank; ++level) {
    const int64_t dim = minor_to_major[rank - 1 - level];
    program->loop_extents.push_back(output.dimensions(dim));
    index[dim] = builder->LoopIndex(static_cast<int>(level), output.dimensions(dim));
  }
  return index;
}

absl::Status Finish(const Instruction& root, const Shape& output, int value,
                    ElementEmitter* emitter, ProgramBuilder* builder, KernelSpec* spec,
                    const Index& index) {
  KOp store;
  store.kind = KOpKind::kStore;
  store.type = ElementType::kTuple;
  store.operand_type = output.element_type();
  store.a = emitter->Offset(output, index);
  store.b = value;
  builder->Add(store);
  RemoveDeadOps(&spec->program);
  spec->program.buffers.push_back({output.element_type(), PhysicalElementCount(output)});
  return absl::OkStatus();
}

}  // namespace

bool IsKernelCompatibleShape(const Shape& shape) {
  if (!shape.IsArray() || shape.is_dynamic() || !IsKernelElementType(shape.element_type())) {
    return false;
  }
  if (!shape.has_layout()) return false;
  const Layout& layout = shape.layout();
  if (!layout.tiles.empty() || !layout.padded_dimensions.empty()) return false;
  if (layout.element_size_in_bits != 0 &&
      layout.element_size_in_bits != 8 * ByteWidth(shape.element_type())) {
    return false;
  }
  if (!ValidateLayout(shape).ok()) return false;
  return true;
}

absl::StatusOr<KernelSpec> EmitInstructionKernel(const Instruction& instruction) {
  KernelSpec spec;
  spec.program.name = instruction.name();
  if (!IsKernelCompatibleShape(instruction.shape())) {
    return Unsupported(instruction,
                       absl::StrCat("unsupported result shape ", instruction.shape().ToString()));
  }
  switch (instruction.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kFusion:
      return Unsupported(instruction, "not an elemental operation");
    default:
      break;
  }
  ProgramBuilder builder(&spec.program);
  ElementEmitter emitter(&spec, &builder);
  for (const Instruction* operand : instruction.operands()) {
    bool seen = false;
    for (const Instruction* input : spec.inputs) seen = seen || input == operand;
    if (!seen) XJIT_RETURN_IF_ERROR(emitter.AddLeaf(*operand, operand));
  }
  const Index index = LoopNest(instruction.shape(), &builder, &spec.program);
  XJIT_ASSIGN_OR_RETURN(int value, emitter.Emit(instruction, index));
  XJIT_RETURN_IF_ERROR(
      Finish(instruction, instruction.shape(), value, &emitter, &builder, &spec, index));
  return spec;
}

absl::StatusOr<KernelSpec> EmitFusionKernel(const Instruction& fusion) {
  KernelSpec spec;
  spec.program.name = fusion.name();
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1) {
    return Unsupported(fusion, "not a fusion");
  }
  if (fusion.attrs().fusion_kind != FusionKind::kLoop) {
    return Unsupported(fusion, "only loop fusions have kernels");
  }
  if (!IsKernelCompatibleShape(fusion.shape())) {
    return Unsupported(fusion, absl::StrCat("unsupported result shape ", fusion.shape().ToString()));
  }
  const Computation& fused = *fusion.called_computations()[0];
  ProgramBuilder builder(&spec.program);
  ElementEmitter emitter(&spec, &builder);
  for (const auto& instruction : fused.instructions()) {
    if (instruction->opcode() == Opcode::kParameter) {
      const int64_t number = instruction->attrs().parameter_number;
      if (number < 0 || number >= fusion.operand_count()) {
        return Unsupported(fusion, "fused parameter without an operand");
      }
      XJIT_RETURN_IF_ERROR(emitter.AddLeaf(*instruction, fusion.operand(number)));
    } else if (instruction->opcode() == Opcode::kConstant) {
      XJIT_RETURN_IF_ERROR(emitter.AddLeaf(*instruction, instruction.get()));
    }
  }
  const Index index = LoopNest(fusion.shape(), &builder, &spec.program);
  XJIT_ASSIGN_OR_RETURN(int value, emitter.Emit(*fused.root(), index));
  XJIT_RETURN_IF_ERROR(Finish(*fused.root(), fusion.shape(), value, &emitter, &builder, &spec,
                              index));
  return spec;
}

}  // namespace xjit::jit
