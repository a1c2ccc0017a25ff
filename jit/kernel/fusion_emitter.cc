// The loop-fusion emitter (see fusion_emitter.h).
#include "jit/kernel/fusion_emitter.h"

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
#include "jit/kernel/minifloat_codec.h"
#include "passes/rewrite_util.h"

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
ElementType BufferType(ElementType type) {
  return IsComplex(type) ? ComplexComponentType(type) : ProgramElementType(type);
}
// Sub-byte elements packed several to a byte (a layout's E(n) with n < 8):
// the bits per element, or 0 for an unpacked array.
int PackedBits(const Shape& shape) {
  if (!shape.IsArray() || !shape.has_layout()) return 0;
  const int64_t bits = shape.layout().element_size_in_bits;
  return bits > 0 && bits < 8 && bits < 8 * ByteWidth(shape.element_type()) ? static_cast<int>(bits)
                                                                            : 0;
}
// A packed array whose layout is otherwise plain.
bool IsPackedPlainLayout(const Shape& shape) {
  if (PackedBits(shape) == 0 || !ValidateLayout(shape).ok()) return false;
  Shape unpacked = shape;
  unpacked.mutable_layout()->element_size_in_bits = 0;
  return IsPlainLayout(unpacked);
}
// A packed array is a u8 buffer of its bytes, element k in bits
// [k * n, k * n + n) counted from the low bit of byte 0 (ir/literal.h).
ElementType BufferType(const Shape& shape) {
  return PackedBits(shape) > 0 ? ElementType::kU8 : BufferType(shape.element_type());
}
int64_t BufferElements(const Shape& shape) {
  if (const int bits = PackedBits(shape); bits > 0) {
    return (PhysicalElementCount(shape) * bits + 7) / 8;
  }
  return PhysicalElementCount(shape) * (IsComplex(shape.element_type()) ? 2 : 1);
}

// Complex values live in the program as pairs of component values. The
// emitter's value handles are op ids; a complex value's handle is
// kPairTag + its number in the emitter's pair table.
constexpr int kPairTag = 1 << 29;

// Appends operations to a program, folding constants, simplifying index
// arithmetic with known ranges, and sharing identical operations.
class ProgramBuilder {
 public:
  explicit ProgramBuilder(KernelProgram* program) : program_(program) {}

  int Add(KOp op) {
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
    if (op.kind != KOpKind::kStore) cse_[key] = id;
    return id;
  }

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
  bool mini_float_misuse_ = false;
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
    spec_->program.buffers.push_back({BufferType(leaf.shape()), BufferElements(leaf.shape())});
    spec_->inputs.push_back(source);
    spec_->input_elements.push_back(-1);
    return absl::OkStatus();
  }

  // An input buffer holding element `element` of the tuple-shaped `value`
  // (a variadic scatter reading its own outputs); read with LoadElement.
  absl::Status AddTupleElementLeaf(const Instruction& value, int element) {
    const Shape& shape = value.shape().tuple_shapes(element);
    if (!IsKernelCompatibleShape(shape)) {
      return Unsupported(value, absl::StrCat("unsupported shape ", shape.ToString()));
    }
    element_buffer_[{&value, element}] = static_cast<int>(spec_->program.buffers.size());
    spec_->program.buffers.push_back({BufferType(shape.element_type()), BufferElements(shape)});
    spec_->inputs.push_back(&value);
    spec_->input_elements.push_back(element);
    return absl::OkStatus();
  }

  // The value at `index` of the buffer AddTupleElementLeaf added.
  absl::StatusOr<int> LoadElement(const Instruction& value, int element, const Index& index) {
    auto it = element_buffer_.find({&value, element});
    if (it == element_buffer_.end()) return Unsupported(value, "tuple element without a buffer");
    return LoadFrom(it->second, value.shape().tuple_shapes(element), index);
  }

  // Runs `body` with the parameters of `computation` standing for the
  // operations `args` and a fresh memo (a reducer is applied to new values
  // each time).
  template <typename Body>
  absl::Status WithFixedParameters(const Computation& computation, const std::vector<int>& args,
                                   Body body) {
    if (static_cast<int64_t>(args.size()) != computation.parameter_count()) {
      return absl::UnimplementedError("applied computation with the wrong parameter count");
    }
    absl::flat_hash_map<std::pair<const Instruction*, Index>, int> saved;
    std::swap(saved, memo_);
    for (size_t k = 0; k < args.size(); ++k) fixed_[computation.parameter(k)] = args[k];
    absl::Status status = body();
    for (size_t k = 0; k < args.size(); ++k) fixed_.erase(computation.parameter(k));
    std::swap(saved, memo_);
    return status;
  }

  // The value of `instruction` at `index` (one index value per dimension).
  absl::StatusOr<int> Emit(const Instruction& instruction, const Index& index) {
    auto fixed = fixed_.find(&instruction);
    if (fixed != fixed_.end()) return fixed->second;
    auto key = std::make_pair(&instruction, index);
    auto it = memo_.find(key);
    if (it != memo_.end()) return it->second;
    if (depth_ >= kChainDepth && IsElementwise(instruction.opcode())) {
      XJIT_RETURN_IF_ERROR(EmitChainOperands(instruction, index));
    }
    ++depth_;
    absl::StatusOr<int> value = EmitUncached(instruction, index);
    --depth_;
    if (!value.ok()) return value.status();
    memo_[key] = *value;
    return *value;
  }

  // Emits, deepest first and without recursion, the elementwise operands
  // (transitively) that `instruction` reads at its own `index`: every
  // elementwise instruction reads its same-shaped operands at its own index,
  // so these are exactly values the recursive Emit would ask for, and with
  // them memoised its recursion stays shallow. A chain of 100,000
  // elementwise instructions would otherwise recurse 100,000 deep.
  absl::Status EmitChainOperands(const Instruction& instruction, const Index& index) {
    auto same_index = [&](const Instruction& operand) {
      return IsElementwise(operand.opcode()) && !fixed_.contains(&operand) &&
             operand.shape().IsArray() &&
             operand.shape().dimensions() == instruction.shape().dimensions() &&
             !memo_.contains(std::make_pair(&operand, index));
    };
    // Iterative post-order walk: (instruction, next operand to visit).
    std::vector<std::pair<const Instruction*, int64_t>> stack = {{&instruction, 0}};
    absl::flat_hash_set<const Instruction*> visited = {&instruction};
    std::vector<const Instruction*> order;
    while (!stack.empty()) {
      auto& [current, next] = stack.back();
      if (next < current->operand_count()) {
        const Instruction* operand = current->operand(next++);
        if (same_index(*operand) && visited.insert(operand).second) {
          stack.push_back({operand, 0});
        }
        continue;
      }
      if (current != &instruction) order.push_back(current);
      stack.pop_back();
    }
    for (const Instruction* operand : order) {
      XJIT_RETURN_IF_ERROR(Emit(*operand, index).status());
    }
    return absl::OkStatus();
  }

  // Complex values: a pair of component values (see kPairTag).
  static bool IsPair(int handle) { return handle >= kPairTag; }
  int Pair(int re, int im) {
    pairs_.push_back({re, im});
    return kPairTag + static_cast<int>(pairs_.size()) - 1;
  }
  int Re(int handle) const { return pairs_[handle - kPairTag].first; }
  int Im(int handle) const { return pairs_[handle - kPairTag].second; }
  // The position of component `part` of element `offset` of a complex buffer.
  int ComponentPosition(int offset, int part) {
    return b_.IAdd(b_.IMul(offset, b_.Const(2)), b_.Const(part));
  }

  // on_true or on_false by an index value (0/1), values of `type`.
  int Select(int predicate_index, int on_true, int on_false, ElementType type) {
    if (b_.IsConst(predicate_index)) return b_.Value(predicate_index) != 0 ? on_true : on_false;
    const int predicate = b_.Value(KOpKind::kFromIndex, ElementType::kPred, predicate_index);
    return SelectValue(predicate, on_true, on_false, type);
  }

  // The index of the element at physical position `position` of `shape`.
  Index IndexAt(const Shape& shape, int position) {
    Index index(shape.rank());
    int64_t stride = 1;
    for (int64_t d : shape.layout().minor_to_major) {
      index[d] = b_.IRem(b_.IDiv(position, stride), std::max<int64_t>(shape.dimensions(d), 1));
      stride *= shape.dimensions(d);
    }
    return index;
  }

  // A packed element's `bits` raw bits (a u8 value, high bits clear) as a
  // value of `type`, and back.
  int FromRawBits(ElementType type, int bits, int width) {
    constexpr ElementType kU8 = ElementType::kU8;
    if (IsMiniFloat(type)) return bits;
    if (IsPred(type)) return b_.Value(KOpKind::kConvert, ElementType::kPred, bits);
    if (IsUnsignedInteger(type)) return b_.Value(KOpKind::kConvert, type, bits);
    const int sign = IntValue(kU8, int64_t{1} << (width - 1));  // Sign-extends by xor, subtract.
    const int extended =
        FBinary(Opcode::kSubtract, kU8, FBinary(Opcode::kXor, kU8, bits, sign), sign);
    const int s8 = b_.Value(KOpKind::kBitcast, ElementType::kS8, extended);
    return type == ElementType::kS8 ? s8 : b_.Value(KOpKind::kConvert, type, s8);
  }
  int ToRawBits(ElementType type, int value, int width) {
    constexpr ElementType kU8 = ElementType::kU8;
    const int byte = IsMiniFloat(type) ? value : b_.Value(KOpKind::kConvert, kU8, value);
    return FBinary(Opcode::kAnd, kU8, byte, IntValue(kU8, (int64_t{1} << width) - 1));
  }

  int U8Binary(Opcode opcode, int a, int b) { return FBinary(opcode, ElementType::kU8, a, b); }
  int U8Const(int64_t value) { return IntValue(ElementType::kU8, value); }

  // The element at `index` of a packed leaf array (PackedBits).
  int EmitPackedLoad(const Instruction& instr, int buffer, const Index& index) {
    constexpr ElementType kU8 = ElementType::kU8;
    const int bits = PackedBits(instr.shape());
    const int per_byte = 8 / bits;
    const int position = Offset(instr.shape(), index);
    KOp load;
    load.kind = KOpKind::kLoad;
    load.type = kU8;
    load.imm = buffer;
    load.a = b_.IDiv(position, per_byte);
    const int byte = b_.Add(load);
    const int shift =
        b_.Value(KOpKind::kFromIndex, kU8, b_.IMul(b_.IRem(position, per_byte), b_.Const(bits)));
    const int piece =
        FBinary(Opcode::kAnd, kU8, FBinary(Opcode::kShiftRightLogical, kU8, byte, shift),
                IntValue(kU8, (int64_t{1} << bits) - 1));
    return FromRawBits(instr.shape().element_type(), piece, bits);
  }

  // The start indices of a dynamic (update) slice, clamped so that a window
  // of `sizes` fits in `operand`.
  absl::StatusOr<Index> ClampedStarts(const Instruction& instr, int first_index_operand,
                                      const Shape& operand, absl::Span<const int64_t> sizes);

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
  // A load of element `index` of input buffer `buffer`, an array of `shape`.
  int LoadFrom(int buffer, const Shape& shape, const Index& index);
  absl::StatusOr<int> EmitPad(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitConcatenate(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitDynamicSlice(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitDynamicUpdateSlice(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitGather(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitReshape(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitComplex(const Instruction& instr, const Index& index);
  // real/imag of real floats, get/set-dimension-size of static shapes, map,
  // reduce-precision (EmitSmallOp); bitcast-convert that changes the
  // element count (EmitBitcastConvertWidths).
  absl::StatusOr<int> EmitSmallOp(const Instruction& instr, const Index& index);
  // Inside an applied computation (a map's): a nested loop fusion
  // inlined, and get-tuple-element of a tuple or of a multi-output fusion.
  absl::StatusOr<int> EmitInlined(const Instruction& instr, const Index& index);
  absl::StatusOr<int> EmitReducePrecision(const Instruction& instr, const Index& index);
  // reduce-precision of `value` (program type `type`: f16, bf16, f32, f64).
  absl::StatusOr<int> ReducePrecisionValue(const Instruction& instr, ElementType type, int value);
  // Operations that compute on f8/f4 values (anything but data movement):
  // decoded to f32, computed there, encoded back (jit/kernel/minifloat_codec.h).
  absl::StatusOr<int> EmitMiniFloat(const Instruction& instr, const Index& index);
  // `x` (program value of HLO type `from`) converted to `to` where either is
  // a mini-float.
  absl::StatusOr<int> ConvertMiniFloat(const Instruction& instr, ElementType from, ElementType to,
                                       int x);
  absl::StatusOr<int> EmitStochasticConvert(const Instruction& instr, const Index& index);
  MiniFloatCodec Codec() {
    return MiniFloatCodec([this](const KOp& op) { return b_.Add(op); });
  }
  absl::StatusOr<int> EmitBitcastConvertWidths(const Instruction& instr, const Index& index);
  // A value of integer `type` from a non-negative constant.
  int IntValue(ElementType type, int64_t value) {
    return b_.Value(KOpKind::kFromIndex, type, b_.Const(value));
  }
  int UnsignedCompare(ComparisonDirection direction, int a, int b) {
    KOp op;
    op.kind = KOpKind::kCompare;
    op.type = ElementType::kPred;
    op.operand_type = b_program_type(a);
    op.direction = direction;
    op.comparison = ComparisonType::kUnsigned;
    op.a = a;
    op.b = b;
    return b_.Add(op);
  }
  absl::StatusOr<int> EmitComplexMultiply(int x, int y, ElementType component);
  absl::StatusOr<int> EmitComplexDivide(int x, int y, ElementType component);
  // Math without component code: a kCall of its complex helper.
  absl::StatusOr<int> EmitComplexCall(const Instruction& instr, const Index& index);
  // Component-type helpers for complex arithmetic.
  int FConst(ElementType type, double value);
  int FUnary(Opcode opcode, ElementType type, int a);
  int FBinary(Opcode opcode, ElementType type, int a, int b);
  int FBits(Opcode opcode, ElementType type, int a, int b);
  int FCompare(ComparisonDirection direction, int a, int b);
  int PredBinary(Opcode opcode, int a, int b);
  int Convert(ElementType to, int a);
  ElementType b_program_type(int op) const { return spec_->program.ops[op].type; }
  int SelectValue(int predicate, int on_true, int on_false, ElementType type) {
    if (IsComplex(type)) {
      const ElementType c = ComplexComponentType(type);
      return Pair(b_.Value(KOpKind::kSelect, c, predicate, Re(on_true), Re(on_false)),
                  b_.Value(KOpKind::kSelect, c, predicate, Im(on_true), Im(on_false)));
    }
    return b_.Value(KOpKind::kSelect, type, predicate, on_true, on_false);
  }
  // An operand that may be a scalar standing for every element.
  absl::StatusOr<int> EmitMaybeScalar(const Instruction& operand, const Index& index) {
    if (operand.shape().rank() == 0) return Emit(operand, {});
    return Emit(operand, index);
  }

  // Emit's recursion depth; past kChainDepth it emits elementwise chains
  // iteratively (EmitChainOperands).
  static constexpr int kChainDepth = 64;
  int depth_ = 0;
  KernelSpec* spec_;
  ProgramBuilder& b_;
  absl::flat_hash_map<const Instruction*, int> leaf_buffer_;
  absl::flat_hash_map<std::pair<const Instruction*, int>, int> element_buffer_;
  absl::flat_hash_map<const Instruction*, int> fixed_;
  absl::flat_hash_map<std::pair<const Instruction*, Index>, int> memo_;
  std::vector<std::pair<int, int>> pairs_;
  // How a reduce inside the fused computation is emitted (a row program's
  // accumulator); unset: a reduce is not a loop-fusible operation.
  std::function<absl::StatusOr<int>(const Instruction&, const Index&)> reduce_hook_;

 public:
  void set_reduce_hook(std::function<absl::StatusOr<int>(const Instruction&, const Index&)> hook) {
    reduce_hook_ = std::move(hook);
  }
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

int ElementEmitter::LoadFrom(int buffer, const Shape& shape, const Index& index) {
  KOp load;
  load.kind = KOpKind::kLoad;
  load.type = BufferType(shape.element_type());
  load.imm = buffer;
  load.a = Offset(shape, index);
  if (!IsComplex(shape.element_type())) return b_.Add(load);
  const int offset = load.a;
  load.a = ComponentPosition(offset, 0);
  const int re = b_.Add(load);
  load.a = ComponentPosition(offset, 1);
  const int im = b_.Add(load);
  return Pair(re, im);
}

absl::StatusOr<int> ElementEmitter::EmitUncached(const Instruction& instr, const Index& index) {
  if (instr.opcode() == Opcode::kConstant && !leaf_buffer_.contains(&instr)) {
    XJIT_RETURN_IF_ERROR(AddLeaf(instr, &instr));
  }
  if (instr.opcode() == Opcode::kParameter && !leaf_buffer_.contains(&instr)) {
    return Unsupported(instr, "parameter without a value");
  }
  auto leaf = leaf_buffer_.find(&instr);
  if (leaf != leaf_buffer_.end() && PackedBits(instr.shape()) > 0) {
    return EmitPackedLoad(instr, leaf->second, index);
  }
  if (leaf != leaf_buffer_.end()) return LoadFrom(leaf->second, instr.shape(), index);
  if (instr.opcode() == Opcode::kGetTupleElement || instr.opcode() == Opcode::kFusion) {
    return EmitInlined(instr, index);
  }
  if (instr.opcode() == Opcode::kReduce && reduce_hook_) return reduce_hook_(instr, index);
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
  bool mini = IsMiniFloat(type);
  for (const Instruction* operand : instr.operands()) {
    mini = mini || IsMiniFloat(operand->shape().element_type());
  }
  if (opcode == Opcode::kStochasticConvert) return EmitStochasticConvert(instr, index);
  if (mini) {
    switch (opcode) {
      // Data movement: the generic code moves the raw bits.
      case Opcode::kCopy:
      case Opcode::kBroadcast:
      case Opcode::kTranspose:
      case Opcode::kReshape:
      case Opcode::kBitcast:
      case Opcode::kSlice:
      case Opcode::kReverse:
      case Opcode::kPad:
      case Opcode::kConcatenate:
      case Opcode::kDynamicSlice:
      case Opcode::kDynamicUpdateSlice:
      case Opcode::kSelect:
      case Opcode::kGather:
      case Opcode::kMap:
      case Opcode::kGetDimensionSize:
      case Opcode::kSetDimensionSize:
      case Opcode::kBitcastConvert:
      case Opcode::kReal:
        break;
      default:
        return EmitMiniFloat(instr, index);
    }
  }
  bool complex = IsComplex(type);
  for (const Instruction* operand : instr.operands()) {
    complex = complex || IsComplex(operand->shape().element_type());
  }
  if (complex) {
    switch (opcode) {
      // Data movement: the generic code moves pairs like any value.
      case Opcode::kCopy: case Opcode::kBroadcast: case Opcode::kTranspose:
      case Opcode::kReshape: case Opcode::kBitcast: case Opcode::kSlice: case Opcode::kReverse:
      case Opcode::kPad: case Opcode::kConcatenate: case Opcode::kDynamicSlice:
      case Opcode::kDynamicUpdateSlice: case Opcode::kSelect: case Opcode::kGather:
      case Opcode::kMap:  // Its computation decides (EmitSmallOp).
        break;
      default:
        return EmitComplex(instr, index);
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
      if (!instr.operand(0)->shape().SameDimensions(shape)) {
        return EmitBitcastConvertWidths(instr, index);  // Element count changes.
      }
      if (BitWidth(from) != BitWidth(type) || IsPred(from) || IsPred(type) ||
          BitWidth(type) < 8) {
        return Unsupported(instr, "bitcast-convert between these types");
      }
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      if (ProgramElementType(from) == ProgramElementType(type)) return x;  // Raw bits.
      return b_.Value(KOpKind::kBitcast, ProgramElementType(type), x);
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
      return SelectValue(p, x, y, type);
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
    case Opcode::kBitcast: {
      // The same physical element: the position in the result's layout,
      // split along the operand's layout.
      const Instruction& operand = *instr.operand(0);
      const Shape& in = operand.shape();
      if (!IsKernelCompatibleShape(shape) || !IsKernelCompatibleShape(in) ||
          in.element_type() != type || in.element_count() != shape.element_count()) {
        return Unsupported(instr, "bitcast that changes the element type or count");
      }
      const int linear = Offset(shape, index);
      Index operand_index(in.rank());
      int64_t stride = 1;
      for (int64_t d : in.layout().minor_to_major) {
        operand_index[d] =
            b_.IRem(b_.IDiv(linear, stride), std::max<int64_t>(in.dimensions(d), 1));
        stride *= in.dimensions(d);
      }
      return Emit(operand, operand_index);
    }
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
    case Opcode::kGather:
      return EmitGather(instr, index);
    case Opcode::kReal: case Opcode::kImag: case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize: case Opcode::kMap: case Opcode::kReducePrecision:
      return EmitSmallOp(instr, index);
    case Opcode::kReplicaId: case Opcode::kPartitionId:
      // An executable runs one replica of one partition (the evaluator's
      // interpreted steps see the same).
      return b_.Value(KOpKind::kFromIndex, type, b_.Const(0));
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

int ElementEmitter::FConst(ElementType type, double value) {
  KOp op;
  op.kind = KOpKind::kConst;
  op.type = type;
  op.operand_type = type;
  if (type == ElementType::kF64) {
    op.imm = std::bit_cast<int64_t>(value);
  } else {
    op.imm = static_cast<int64_t>(std::bit_cast<uint32_t>(static_cast<float>(value)));
  }
  return b_.Add(op);
}

int ElementEmitter::FUnary(Opcode opcode, ElementType type, int a) {
  KOp op;
  op.kind = KOpKind::kUnary;
  op.opcode = opcode;
  op.type = type;
  op.operand_type = b_program_type(a);
  op.a = a;
  return b_.Add(op);
}

int ElementEmitter::FBinary(Opcode opcode, ElementType type, int a, int b) {
  KOp op;
  op.kind = KOpKind::kBinary;
  op.opcode = opcode;
  op.type = type;
  op.operand_type = b_program_type(a);
  op.a = a;
  op.b = b;
  return b_.Add(op);
}

int ElementEmitter::FBits(Opcode opcode, ElementType type, int a, int b) {
  KOp op;
  op.kind = KOpKind::kBits;
  op.opcode = opcode;
  op.type = type;
  op.operand_type = type;
  op.a = a;
  op.b = b;
  return b_.Add(op);
}

int ElementEmitter::FCompare(ComparisonDirection direction, int a, int b) {
  KOp op;
  op.kind = KOpKind::kCompare;
  op.type = ElementType::kPred;
  op.operand_type = b_program_type(a);
  op.direction = direction;
  op.comparison = ComparisonType::kFloat;
  op.a = a;
  op.b = b;
  return b_.Add(op);
}

int ElementEmitter::PredBinary(Opcode opcode, int a, int b) {
  return FBinary(opcode, ElementType::kPred, a, b);
}

int ElementEmitter::Convert(ElementType to, int a) {
  if (b_program_type(a) == to) return a;
  return b_.Value(KOpKind::kConvert, to, a);
}

// The evaluator multiplies complex<double> values (c64 widened exactly), as
// GCC's complex multiply does: re = ac - bd, im = ad + bc, and when both are
// NaN, C99 Annex G's recovery of infinities (libgcc's __muldc3): an infinite
// factor is "boxed" to (±1 or ±0) with NaN parts of the other factor set to
// ±0, or (neither factor infinite but a partial product overflowed) all NaN
// parts set to ±0, and the result recomputed times infinity. c64 results
// are rounded from the double result once, like the evaluator's.
absl::StatusOr<int> ElementEmitter::EmitComplexMultiply(int x, int y, ElementType component) {
  constexpr ElementType kW = ElementType::kF64;
  const int a = Convert(kW, Re(x)), b = Convert(kW, Im(x));
  const int c = Convert(kW, Re(y)), d = Convert(kW, Im(y));
  auto mul = [&](int p, int q) { return FBinary(Opcode::kMultiply, kW, p, q); };
  const int ac = mul(a, c), bd = mul(b, d), ad = mul(a, d), bc = mul(b, c);
  const int re = FBinary(Opcode::kSubtract, kW, ac, bd);
  const int im = FBinary(Opcode::kAdd, kW, ad, bc);
  const int zero = FConst(kW, 0.0), one = FConst(kW, 1.0);
  const int inf = FConst(kW, std::numeric_limits<double>::infinity());
  KOp sign_op;
  sign_op.kind = KOpKind::kConst;
  sign_op.type = kW;
  sign_op.operand_type = kW;
  sign_op.imm = std::numeric_limits<int64_t>::min();  // The sign bit.
  const int sign_mask = b_.Add(sign_op);
  auto is_nan = [&](int v) { return FCompare(ComparisonDirection::kNe, v, v); };
  auto is_inf = [&](int v) {
    return FCompare(ComparisonDirection::kEq, FUnary(Opcode::kAbs, kW, v), inf);
  };
  auto sel = [&](int p, int t, int f) { return b_.Value(KOpKind::kSelect, kW, p, t, f); };
  auto sign_of = [&](int v) { return FBits(Opcode::kAnd, kW, v, sign_mask); };  // ±0.
  // copysign(isinf(v) ? 1 : 0, v).
  auto box = [&](int v) { return FBits(Opcode::kOr, kW, sign_of(v), sel(is_inf(v), one, zero)); };
  // isnan(v) ? copysign(0, v) : v.
  auto unnan = [&](int v) { return sel(is_nan(v), sign_of(v), v); };
  auto por = [&](int p, int q) { return PredBinary(Opcode::kOr, p, q); };
  auto pand = [&](int p, int q) { return PredBinary(Opcode::kAnd, p, q); };
  const int z_inf = por(is_inf(a), is_inf(b));
  // Step 1: z infinite.
  const int a1 = sel(z_inf, box(a), a), b1 = sel(z_inf, box(b), b);
  const int c1 = sel(z_inf, unnan(c), c), d1 = sel(z_inf, unnan(d), d);
  // Step 2: w infinite (isinf(c1) == isinf(c)).
  const int w_inf = por(is_inf(c), is_inf(d));
  const int c2 = sel(w_inf, box(c1), c1), d2 = sel(w_inf, box(d1), d1);
  const int a2 = sel(w_inf, unnan(a1), a1), b2 = sel(w_inf, unnan(b1), b1);
  // Step 3: overflow (only when neither factor is infinite: a2..d2 == a..d).
  const int boxed = por(z_inf, w_inf);
  const int overflow = pand(FUnary(Opcode::kNot, ElementType::kPred, boxed),
                            por(por(is_inf(ac), is_inf(bd)), por(is_inf(ad), is_inf(bc))));
  const int a3 = sel(overflow, unnan(a2), a2), b3 = sel(overflow, unnan(b2), b2);
  const int c3 = sel(overflow, unnan(c2), c2), d3 = sel(overflow, unnan(d2), d2);
  const int recalc = pand(pand(is_nan(re), is_nan(im)), por(boxed, overflow));
  const int re2 = mul(inf, FBinary(Opcode::kSubtract, kW, mul(a3, c3), mul(b3, d3)));
  const int im2 = mul(inf, FBinary(Opcode::kAdd, kW, mul(a3, d3), mul(b3, c3)));
  return Pair(Convert(component, sel(recalc, re2, re)), Convert(component, sel(recalc, im2, im)));
}

// The evaluator divides complex<double> values, which GCC compiles to a call
// of libgcc's __divdc3 (GCC 12): Smith's method scaled by the larger of |c|,
// |d| ("big"; the other is "small"), with the operands halved when big is
// near the top of the range, or multiplied by 2^52 when big (or a numerator
// part, with the others moderate) is tiny, an alternate order when the ratio
// is subnormal, and then C99 Annex G's recovery of infinities and zeros from
// NaN + iNaN. Every branch is computed and chosen with selects, in f64; c64
// results are rounded from the double result once, like the evaluator's.
absl::StatusOr<int> ElementEmitter::EmitComplexDivide(int x, int y, ElementType component) {
  constexpr ElementType kW = ElementType::kF64;
  constexpr ElementType kP = ElementType::kPred;
  const int a0 = Convert(kW, Re(x)), b0 = Convert(kW, Im(x));
  const int c0 = Convert(kW, Re(y)), d0 = Convert(kW, Im(y));
  const double kMax = std::numeric_limits<double>::max();
  const double kRBig = kMax / 2, kRMin = std::numeric_limits<double>::min();
  const double kRMin2 = std::numeric_limits<double>::epsilon();
  const double kRMinScal = 1 / kRMin2, kRMax2 = kRBig * kRMin2;
  auto k = [&](double v) { return FConst(kW, v); };
  auto bin = [&](Opcode op, int p, int q) { return FBinary(op, kW, p, q); };
  auto mul = [&](int p, int q) { return bin(Opcode::kMultiply, p, q); };
  auto div = [&](int p, int q) { return bin(Opcode::kDivide, p, q); };
  auto add = [&](int p, int q) { return bin(Opcode::kAdd, p, q); };
  auto sub = [&](int p, int q) { return bin(Opcode::kSubtract, p, q); };
  auto abs = [&](int v) { return FUnary(Opcode::kAbs, kW, v); };
  auto lt = [&](int p, int q) { return FCompare(ComparisonDirection::kLt, p, q); };
  auto sel = [&](int p, int t, int f) { return b_.Value(KOpKind::kSelect, kW, p, t, f); };
  auto por = [&](int p, int q) { return PredBinary(Opcode::kOr, p, q); };
  auto pand = [&](int p, int q) { return PredBinary(Opcode::kAnd, p, q); };
  auto pnot = [&](int p) { return FUnary(Opcode::kNot, kP, p); };
  const int inf = k(std::numeric_limits<double>::infinity());
  KOp sign_op;
  sign_op.kind = KOpKind::kConst;
  sign_op.type = kW;
  sign_op.operand_type = kW;
  sign_op.imm = std::numeric_limits<int64_t>::min();
  const int sign_mask = b_.Add(sign_op);
  auto sign_of = [&](int v) { return FBits(Opcode::kAnd, kW, v, sign_mask); };
  auto is_nan = [&](int v) { return FCompare(ComparisonDirection::kNe, v, v); };
  auto is_inf = [&](int v) { return FCompare(ComparisonDirection::kEq, abs(v), inf); };
  auto is_finite = [&](int v) { return lt(abs(v), inf); };
  auto box = [&](int v) { return FBits(Opcode::kOr, kW, sign_of(v), sel(is_inf(v), k(1), k(0))); };
  // swap: |c| < |d| (libgcc's first branch): big = d, small = c.
  const int swap = lt(abs(c0), abs(d0));
  // Halve everything when big is huge.
  const int halve = FCompare(ComparisonDirection::kGe, abs(sel(swap, d0, c0)), k(kRBig));
  const int two = k(2);
  const int a1 = sel(halve, div(a0, two), a0), b1 = sel(halve, div(b0, two), b0);
  const int c1 = sel(halve, div(c0, two), c0), d1 = sel(halve, div(d0, two), d0);
  const int big1 = abs(sel(swap, d1, c1));
  const int rmin = k(kRMin), rmax2 = k(kRMax2);
  const int scale_up = por(
      lt(big1, k(kRMin2)),
      pand(lt(big1, rmax2), por(pand(lt(abs(a1), rmin), lt(abs(b1), rmax2)),
                                pand(lt(abs(b1), rmin), lt(abs(a1), rmax2)))));
  const int scal = k(kRMinScal);
  const int a = sel(scale_up, mul(a1, scal), a1), b = sel(scale_up, mul(b1, scal), b1);
  const int c = sel(scale_up, mul(c1, scal), c1), d = sel(scale_up, mul(d1, scal), d1);
  const int big = sel(swap, d, c), small = sel(swap, c, d);
  const int ratio = div(small, big);
  const int denom = add(mul(small, ratio), big);
  const int normal = FCompare(ComparisonDirection::kGt, abs(ratio), rmin);  // false for NaN.
  // swap: x = (a r + b) / D, y = (b r - a) / D; tiny r: x = (c (a/d) + b) / D,
  // y = (c (b/d) - a) / D. Otherwise x = (b r + a) / D, y = (b - a r) / D;
  // tiny r: x = (a + d (b/c)) / D, y = (b - d (a/c)) / D.
  const int xs = sel(normal, add(mul(a, ratio), b), add(mul(small, div(a, big)), b));
  const int ys = sel(normal, sub(mul(b, ratio), a), sub(mul(small, div(b, big)), a));
  const int xn = sel(normal, add(mul(b, ratio), a), add(a, mul(small, div(b, big))));
  const int yn = sel(normal, sub(b, mul(a, ratio)), sub(b, mul(small, div(a, big))));
  const int x0 = div(sel(swap, xs, xn), denom);
  const int y0 = div(sel(swap, ys, yn), denom);
  // Recovery when both parts are NaN.
  const int zero_den = pand(FCompare(ComparisonDirection::kEq, c, k(0)),
                            FCompare(ComparisonDirection::kEq, d, k(0)));
  const int r1 = pand(zero_den, por(pnot(is_nan(a)), pnot(is_nan(b))));
  const int signed_inf = FBits(Opcode::kOr, kW, sign_of(c), inf);
  const int x1 = mul(signed_inf, a), y1 = mul(signed_inf, b);
  const int r2 = pand(por(is_inf(a), is_inf(b)), pand(is_finite(c), is_finite(d)));
  const int ab = box(a), bb = box(b);
  const int x2 = mul(inf, add(mul(ab, c), mul(bb, d)));
  const int y2 = mul(inf, sub(mul(bb, c), mul(ab, d)));
  const int r3 = pand(por(is_inf(c), is_inf(d)), pand(is_finite(a), is_finite(b)));
  const int cb = box(c), db = box(d);
  const int x3 = mul(k(0), add(mul(a, cb), mul(b, db)));
  const int y3 = mul(k(0), sub(mul(b, cb), mul(a, db)));
  const int both_nan = pand(is_nan(x0), is_nan(y0));
  const int x_rec = sel(r1, x1, sel(r2, x2, sel(r3, x3, x0)));
  const int y_rec = sel(r1, y1, sel(r2, y2, sel(r3, y3, y0)));
  return Pair(Convert(component, sel(both_nan, x_rec, x0)),
              Convert(component, sel(both_nan, y_rec, y0)));
}

// One kCall per element of the helper computing the operation as the
// evaluator does (jit/kernel/complex_calls.h); abs's real result is the call's
// real part, a complex result adds its kCallImag.
absl::StatusOr<int> ElementEmitter::EmitComplexCall(const Instruction& instr,
                                                    const Index& index) {
  const int arity = ComplexCallArity(instr.opcode());
  const ElementType type = instr.shape().element_type();
  const ElementType in_type = instr.operand(0)->shape().element_type();
  if (arity != instr.operand_count() || !IsComplex(in_type)) {
    return Unsupported(instr, "complex operand types");
  }
  for (const Instruction* operand : instr.operands()) {
    if (operand->shape().element_type() != in_type) {
      return Unsupported(instr, "complex operand types");
    }
  }
  const ElementType c = ComplexComponentType(in_type);
  const bool real_result = instr.opcode() == Opcode::kAbs;
  if (type != (real_result ? c : in_type)) return Unsupported(instr, "complex result type");
  XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
  KOp call;
  call.kind = KOpKind::kCall;
  call.opcode = instr.opcode();
  call.type = c;
  call.operand_type = c;
  call.a = Re(x);
  call.b = Im(x);
  if (arity == 2) {
    XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(1), index));
    KOp args;
    args.kind = KOpKind::kCallArgs;
    args.type = c;
    args.operand_type = c;
    args.a = Re(y);
    args.b = Im(y);
    call.c = b_.Add(args);
  }
  const int re = b_.Add(call);
  if (real_result) return re;
  KOp imag;
  imag.kind = KOpKind::kCallImag;
  imag.type = c;
  imag.operand_type = c;
  imag.a = re;
  return Pair(re, b_.Add(imag));
}

absl::StatusOr<int> ElementEmitter::EmitComplex(const Instruction& instr, const Index& index) {
  const ElementType type = instr.shape().element_type();
  const Opcode opcode = instr.opcode();
  const ElementType in_type = instr.operand_count() > 0
                                  ? instr.operand(0)->shape().element_type()
                                  : type;
  switch (opcode) {
    case Opcode::kIota: {  // (index, +0).
      const int64_t dim = instr.attrs().iota_dimension;
      if (dim < 0 || dim >= instr.shape().rank()) return Unsupported(instr, "bad iota dimension");
      const ElementType c = ComplexComponentType(type);
      return Pair(b_.Value(KOpKind::kFromIndex, c, index[dim]), FConst(c, 0.0));
    }
    case Opcode::kConvert: {
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      if (IsComplex(in_type) && IsComplex(type)) {
        const ElementType c = ComplexComponentType(type);
        return Pair(Convert(c, Re(x)), Convert(c, Im(x)));
      }
      if (IsComplex(type)) {  // Real to complex: (x, +0).
        const ElementType c = ComplexComponentType(type);
        return Pair(Convert(c, x), FConst(c, 0.0));
      }
      // Complex to real: the real part, converted as a real float is.
      return Convert(type, Re(x));
    }
    case Opcode::kBitcastConvert: {
      if (in_type == type) return Emit(*instr.operand(0), index);
      // c64 <-> a 64-bit type: the real part's bits are the low half.
      const ElementType other = IsComplex(in_type) ? type : in_type;
      if ((in_type != ElementType::kC64 && type != ElementType::kC64) ||
          (other != ElementType::kS64 && other != ElementType::kU64 &&
           other != ElementType::kF64)) {
        return Unsupported(instr, "complex bitcast-convert between these types");
      }
      constexpr ElementType kU64 = ElementType::kU64, kU32 = ElementType::kU32;
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      const int shift = b_.Value(KOpKind::kFromIndex, kU64, b_.Const(32));
      auto bitcast = [&](ElementType to, int v) {
        return b_program_type(v) == to ? v : b_.Value(KOpKind::kBitcast, to, v);
      };
      if (IsComplex(in_type)) {
        const int re = Convert(kU64, bitcast(kU32, Re(x)));
        const int im = Convert(kU64, bitcast(kU32, Im(x)));
        const int bits = FBinary(Opcode::kOr, kU64, re, FBinary(Opcode::kShiftLeft, kU64, im, shift));
        return bitcast(type, bits);
      }
      const int bits = bitcast(kU64, x);
      const int lo = Convert(kU32, bits);
      const int hi = Convert(kU32, FBinary(Opcode::kShiftRightLogical, kU64, bits, shift));
      return Pair(bitcast(ElementType::kF32, lo), bitcast(ElementType::kF32, hi));
    }
    case Opcode::kReal: case Opcode::kImag: {
      if (!IsComplex(in_type) || ComplexComponentType(in_type) != type) {
        return Unsupported(instr, "real/imag types");
      }
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      return opcode == Opcode::kReal ? Re(x) : Im(x);
    }
    case Opcode::kComplex: {
      if (!IsComplex(type) || instr.operand(1)->shape().element_type() != in_type ||
          ComplexComponentType(type) != in_type) {
        return Unsupported(instr, "complex() types");
      }
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(1), index));
      return Pair(x, y);
    }
    case Opcode::kNegate: {
      if (in_type != type) return Unsupported(instr, "negate types");
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      const ElementType c = ComplexComponentType(type);
      return Pair(FUnary(Opcode::kNegate, c, Re(x)), FUnary(Opcode::kNegate, c, Im(x)));
    }
    case Opcode::kAdd: case Opcode::kSubtract: case Opcode::kMultiply: case Opcode::kDivide:
    case Opcode::kMaximum: case Opcode::kMinimum: case Opcode::kCompare: {
      if (instr.operand_count() != 2 || instr.operand(1)->shape().element_type() != in_type ||
          !IsComplex(in_type) || (opcode != Opcode::kCompare && type != in_type)) {
        return Unsupported(instr, "complex operand types");
      }
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      XJIT_ASSIGN_OR_RETURN(int y, Emit(*instr.operand(1), index));
      const ElementType c = ComplexComponentType(in_type);
      switch (opcode) {
        case Opcode::kAdd: case Opcode::kSubtract:
          // The evaluator's double sum of two c64 parts rounds to the float sum.
          return Pair(FBinary(opcode, c, Re(x), Re(y)), FBinary(opcode, c, Im(x), Im(y)));
        case Opcode::kMultiply:
          return EmitComplexMultiply(x, y, c);
        case Opcode::kDivide:
          // x and y are memoized: the call reuses their components.
          if (kComplexDivideByCall) return EmitComplexCall(instr, index);
          return EmitComplexDivide(x, y, c);
        case Opcode::kMaximum: case Opcode::kMinimum: {
          // Lexicographic order (real, then imaginary): max = less(x, y) ? y : x,
          // min = less(y, x) ? y : x.
          const int p = opcode == Opcode::kMaximum ? x : y;
          const int q = opcode == Opcode::kMaximum ? y : x;
          const int less = PredBinary(
              Opcode::kOr, FCompare(ComparisonDirection::kLt, Re(p), Re(q)),
              PredBinary(Opcode::kAnd, FCompare(ComparisonDirection::kEq, Re(p), Re(q)),
                         FCompare(ComparisonDirection::kLt, Im(p), Im(q))));
          return SelectValue(less, y, x, type);
        }
        default: {  // kCompare
          const ComparisonDirection direction = instr.attrs().comparison_direction;
          if (direction == ComparisonDirection::kEq) {
            return PredBinary(Opcode::kAnd, FCompare(direction, Re(x), Re(y)),
                              FCompare(direction, Im(x), Im(y)));
          }
          if (direction == ComparisonDirection::kNe) {
            return PredBinary(Opcode::kOr, FCompare(direction, Re(x), Re(y)),
                              FCompare(direction, Im(x), Im(y)));
          }
          return Unsupported(instr, "complex compare other than EQ/NE");
        }
      }
    }
    default:
      if (ComplexCallArity(opcode) > 0) return EmitComplexCall(instr, index);
      return Unsupported(instr, "complex operation without a kernel");
  }
}

absl::StatusOr<int> ElementEmitter::EmitSmallOp(const Instruction& instr, const Index& index) {
  const ElementType type = instr.shape().element_type();
  switch (instr.opcode()) {
    case Opcode::kReal: case Opcode::kImag: {  // Of a real float: x, or +0.
      const ElementType in_type = instr.operand(0)->shape().element_type();
      if (!IsFloat(in_type) || in_type != type) return Unsupported(instr, "real/imag types");
      if (instr.opcode() == Opcode::kImag) {
        if (type == ElementType::kF32 || type == ElementType::kF64) return FConst(type, 0.0);
        return Convert(type, FConst(ElementType::kF32, 0.0));
      }
      return Emit(*instr.operand(0), index);
    }
    case Opcode::kGetDimensionSize: {  // A static size: a constant.
      const Shape& operand = instr.operand(0)->shape();
      const std::vector<int64_t>& dims = instr.attrs().dimensions;
      if (dims.size() != 1 || dims[0] < 0 || dims[0] >= operand.rank() ||
          operand.is_dynamic() || !IsInteger(type)) {
        return Unsupported(instr, "get-dimension-size of a dynamic or odd shape");
      }
      return IntValue(type, operand.dimensions(dims[0]));
    }
    case Opcode::kSetDimensionSize:  // A static result: the operand's elements.
      if (instr.shape().is_dynamic() || !instr.operand(0)->shape().SameDimensions(instr.shape())) {
        return Unsupported(instr, "set-dimension-size with a dynamic result");
      }
      return Emit(*instr.operand(0), index);
    case Opcode::kMap: {  // The computation inlined on the operands' elements.
      const Computation* computation =
          instr.called_computations().size() == 1 ? instr.called_computations()[0] : nullptr;
      if (computation == nullptr || HasSideEffectDeep(instr)) {
        return Unsupported(instr, "map without a side-effect-free computation");
      }
      std::vector<int> args;
      for (const Instruction* operand : instr.operands()) {
        if (!operand->shape().SameDimensions(instr.shape())) {
          return Unsupported(instr, "map operands of other dimensions");
        }
        XJIT_ASSIGN_OR_RETURN(int value, Emit(*operand, index));
        args.push_back(value);
      }
      int result = -1;
      XJIT_RETURN_IF_ERROR(WithFixedParameters(*computation, args, [&]() -> absl::Status {
        const Instruction* root = computation->root();
        if (!root->shape().IsArray() || root->shape().rank() != 0) {
          return Unsupported(instr, "map computation without a scalar result");
        }
        XJIT_ASSIGN_OR_RETURN(result, Emit(*root, {}));
        return absl::OkStatus();
      }));
      return result;
    }
    case Opcode::kReducePrecision:
      return EmitReducePrecision(instr, index);
    default:
      return Unsupported(instr, "not a loop-fusible operation");
  }
}

absl::StatusOr<int> ElementEmitter::EmitInlined(const Instruction& instr, const Index& index) {
  // The fusion `fusion` with its parameters bound to its operands' values
  // at `index`, then `part` (its root or one of the root tuple's operands).
  auto inline_fusion = [&](const Instruction& fusion, int64_t part) -> absl::StatusOr<int> {
    if (fusion.called_computations().size() != 1 || HasSideEffectDeep(fusion)) {
      return Unsupported(fusion, "fusion without one side-effect-free computation");
    }
    const Computation& fused = *fusion.called_computations()[0];
    const Instruction* root = fused.root();
    if (part >= 0) {
      if (root->opcode() != Opcode::kTuple || part >= root->operand_count()) {
        return Unsupported(instr, "get-tuple-element of a fusion without a root tuple");
      }
      root = root->operand(part);
    }
    if (!root->shape().IsArray() || !root->shape().SameDimensions(instr.shape())) {
      return Unsupported(instr, "inlined fusion of other dimensions");
    }
    std::vector<int> args;
    for (const Instruction* operand : fusion.operands()) {
      if (!operand->shape().IsArray() || !operand->shape().SameDimensions(instr.shape())) {
        return Unsupported(instr, "inlined fusion operands of other dimensions");
      }
      XJIT_ASSIGN_OR_RETURN(int value, Emit(*operand, index));
      args.push_back(value);
    }
    int result = -1;
    XJIT_RETURN_IF_ERROR(WithFixedParameters(fused, args, [&]() -> absl::Status {
      XJIT_ASSIGN_OR_RETURN(result, Emit(*root, index));
      return absl::OkStatus();
    }));
    return result;
  };
  if (instr.opcode() == Opcode::kFusion) {
    if (!instr.shape().IsArray() || instr.shape().rank() != 0) {
      return Unsupported(instr, "nested fusion");
    }
    return inline_fusion(instr, -1);
  }
  const Instruction& tuple = *instr.operand(0);
  const int64_t k = instr.attrs().tuple_index;
  if (tuple.opcode() == Opcode::kTuple && k >= 0 && k < tuple.operand_count()) {
    return Emit(*tuple.operand(k), index);
  }
  if (tuple.opcode() == Opcode::kFusion && instr.shape().IsArray() &&
      instr.shape().rank() == 0) {
    return inline_fusion(tuple, k);
  }
  return Unsupported(instr, absl::StrCat("unsupported shape ", tuple.shape().ToString()));
}

// The evaluator's ReducePrecisionBits (interpreter/elementwise.cc, XLA's
// emitter's algorithm) on the bits of f16, bf16, f32 and f64 values, as
// unsigned integers of their width.
absl::StatusOr<int> ElementEmitter::EmitReducePrecision(const Instruction& instr,
                                                        const Index& index) {
  const ElementType type = instr.shape().element_type();
  if (IsMiniFloat(type)) {
    // As the evaluator: on the f32 value (exact), then rounded back.
    if (instr.operand(0)->shape().element_type() != type) {
      return Unsupported(instr, "reduce-precision attributes");
    }
    XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
    MiniFloatCodec codec = Codec();
    XJIT_ASSIGN_OR_RETURN(int reduced,
                          ReducePrecisionValue(instr, ElementType::kF32, codec.Decode(type, x)));
    return codec.Encode(type, reduced, ElementType::kF32, /*nan_quieted=*/true);
  }
  if (instr.operand(0)->shape().element_type() != type) {
    return Unsupported(instr, "reduce-precision attributes");
  }
  XJIT_ASSIGN_OR_RETURN(int value, Emit(*instr.operand(0), index));
  return ReducePrecisionValue(instr, type, value);
}

absl::StatusOr<int> ElementEmitter::ReducePrecisionValue(const Instruction& instr, ElementType type,
                                                         int value) {
  ElementType bits_type;
  switch (type) {
    case ElementType::kF16: case ElementType::kBF16: bits_type = ElementType::kU16; break;
    case ElementType::kF32: bits_type = ElementType::kU32; break;
    case ElementType::kF64: bits_type = ElementType::kU64; break;
    default: return Unsupported(instr, "reduce-precision of this type");
  }
  const int64_t exponent_bits = instr.attrs().exponent_bits;
  const int64_t mantissa_bits = instr.attrs().mantissa_bits;
  if (exponent_bits < 1 || mantissa_bits < 0) {
    return Unsupported(instr, "reduce-precision attributes");
  }
  const int width = BitWidth(type);
  const int src_mantissa = FloatMantissaBits(type);
  const int src_exponent = FloatExponentBits(type);
  const int original = b_.Value(KOpKind::kBitcast, bits_type, value);
  int x = original;
  const ElementType u = bits_type;
  if (mantissa_bits < src_mantissa) {
    const int64_t shift = src_mantissa - mantissa_bits;
    const int64_t last_bit = int64_t{1} << shift;
    const int shift_value = IntValue(u, shift);
    const int x_last = FBinary(Opcode::kAnd, u, FBinary(Opcode::kShiftRightLogical, u, x,
                                                        shift_value), IntValue(u, 1));
    x = FBinary(Opcode::kAdd, u, FBinary(Opcode::kAdd, u, x, x_last),
                IntValue(u, (last_bit >> 1) - 1));
    // Clears the low `shift` bits.
    x = FBinary(Opcode::kShiftLeft, u, FBinary(Opcode::kShiftRightLogical, u, x, shift_value),
                shift_value);
  }
  const int64_t exponent_mask = ((int64_t{1} << src_exponent) - 1) << src_mantissa;
  if (exponent_bits < src_exponent) {
    const int64_t exponent_bias = (int64_t{1} << (src_exponent - 1)) - 1;
    const int64_t reduced_bias = (int64_t{1} << (exponent_bits - 1)) - 1;
    const int64_t reduced_max = (exponent_bias + reduced_bias) << src_mantissa;
    const int64_t reduced_min = (exponent_bias - reduced_bias) << src_mantissa;
    const int sign_mask =
        FBinary(Opcode::kShiftLeft, u, IntValue(u, 1), IntValue(u, width - 1));
    const int x_exponent = FBinary(Opcode::kAnd, u, x, IntValue(u, exponent_mask));
    const int signed_zero = FBinary(Opcode::kAnd, u, x, sign_mask);
    const int signed_inf = FBinary(Opcode::kOr, u, signed_zero, IntValue(u, exponent_mask));
    x = SelectValue(UnsignedCompare(ComparisonDirection::kLe, x_exponent,
                                    IntValue(u, reduced_min)),
                    signed_zero, x, u);
    x = SelectValue(UnsignedCompare(ComparisonDirection::kGt, x_exponent,
                                    IntValue(u, reduced_max)),
                    signed_inf, x, u);
  }
  // NaN keeps its bits (mantissa_bits > 0) or becomes +inf.
  const int is_nan = FCompare(ComparisonDirection::kNe, value, value);
  x = SelectValue(is_nan, mantissa_bits > 0 ? original : IntValue(u, exponent_mask), x, u);
  return b_.Value(KOpKind::kBitcast, type, x);
}

absl::StatusOr<int> ElementEmitter::ConvertMiniFloat(const Instruction& instr, ElementType from,
                                                     ElementType to, int x) {
  constexpr ElementType kF32 = ElementType::kF32, kF64 = ElementType::kF64;
  if (from == to) return x;
  if (IsComplex(from) || IsComplex(to)) return Unsupported(instr, "f8/f4 <-> complex convert");
  MiniFloatCodec codec = Codec();
  if (IsMiniFloat(from)) {
    const int f = codec.Decode(from, x);  // Exact.
    if (IsMiniFloat(to)) return codec.Encode(to, f, kF32, /*nan_quieted=*/false);
    return to == kF32 ? f : b_.Value(KOpKind::kConvert, to, f);
  }
  if (from == kF32) return codec.Encode(to, x, kF32, /*nan_quieted=*/true);
  if (from == kF64) return codec.Encode(to, x, kF64, /*nan_quieted=*/false);
  if (from == ElementType::kF16 || from == ElementType::kBF16) {
    return codec.Encode(to, b_.Value(KOpKind::kConvert, kF32, x), kF32, /*nan_quieted=*/false);
  }
  // Integers: exact in f32 up to 16 bits and in f64 up to 32; a 64-bit
  // integer rounds to f64 first, which cannot change the second rounding
  // where every value >= 2^53 overflows the target (all but f8e8m0fnu).
  if (IsPred(from) || BitWidth(from) <= 16) {
    return codec.Encode(to, b_.Value(KOpKind::kConvert, kF32, x), kF32, true);
  }
  if (BitWidth(from) == 64 && to == ElementType::kF8E8M0FNU) {
    return Unsupported(instr, "64-bit integer to f8e8m0fnu (needs one rounding)");
  }
  return codec.Encode(to, b_.Value(KOpKind::kConvert, kF64, x), kF64, false);
}

absl::StatusOr<int> ElementEmitter::EmitMiniFloat(const Instruction& instr, const Index& index) {
  const ElementType type = instr.shape().element_type();
  const Opcode opcode = instr.opcode();
  MiniFloatCodec codec = Codec();
  // An operand's value at `index` (a scalar operand where HLO allows one),
  // decoded to f32 if it is a mini-float.
  auto operand = [&](int k) -> absl::StatusOr<int> {
    const Instruction& op = *instr.operand(k);
    XJIT_ASSIGN_OR_RETURN(int x, EmitMaybeScalar(op, index));
    const ElementType t = op.shape().element_type();
    return IsMiniFloat(t) ? codec.Decode(t, x) : x;
  };
  // The f32 result of an operation, encoded when the result is a mini-float.
  auto result = [&](int f) {
    return IsMiniFloat(type) ? codec.Encode(type, f, ElementType::kF32, true) : f;
  };
  const ElementType compute = IsMiniFloat(type) ? ElementType::kF32 : type;
  switch (opcode) {
    case Opcode::kConvert: {
      XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
      return ConvertMiniFloat(instr, instr.operand(0)->shape().element_type(), type, x);
    }
    case Opcode::kReducePrecision:
      return EmitReducePrecision(instr, index);
    case Opcode::kImag:  // Of a real mini-float: +0 in its encoding.
      return IntValue(ElementType::kU8, static_cast<int64_t>(DoubleToFloatBits(type, 0.0)));
    case Opcode::kIota: {
      const int64_t dim = instr.attrs().iota_dimension;
      if (dim < 0 || dim >= instr.shape().rank()) return Unsupported(instr, "bad iota dimension");
      const int x = b_.Value(KOpKind::kFromIndex, ElementType::kF64, index[dim]);
      return codec.Encode(type, x, ElementType::kF64, false);
    }
    case Opcode::kCompare: {
      if (instr.attrs().comparison_type == ComparisonType::kTotalOrder) {
        // The evaluator's order of the raw bits: sign-magnitude read as
        // -magnitude - 1 for a set top bit, compared as signed integers.
        constexpr ElementType kU8 = ElementType::kU8, kS32 = ElementType::kS32;
        const int width = BitWidth(instr.operand(0)->shape().element_type());
        auto key = [&](int k) -> absl::StatusOr<int> {
          XJIT_ASSIGN_OR_RETURN(int x, EmitMaybeScalar(*instr.operand(k), index));
          const int sign = IntValue(kU8, int64_t{1} << (width - 1));
          const int magnitude = b_.Value(
              KOpKind::kConvert, kS32,
              FBinary(Opcode::kAnd, kU8, x, IntValue(kU8, (int64_t{1} << (width - 1)) - 1)));
          const int negative = UnsignedCompare(
              ComparisonDirection::kNe, FBinary(Opcode::kAnd, kU8, x, sign), IntValue(kU8, 0));
          const int flipped = FBinary(Opcode::kSubtract, kS32,
                                      b_.Value(KOpKind::kFromIndex, kS32, b_.Const(-1)), magnitude);
          return SelectValue(negative, flipped, magnitude, kS32);
        };
        XJIT_ASSIGN_OR_RETURN(int x, key(0));
        XJIT_ASSIGN_OR_RETURN(int y, key(1));
        KOp op;
        op.kind = KOpKind::kCompare;
        op.type = ElementType::kPred;
        op.operand_type = kS32;
        op.direction = instr.attrs().comparison_direction;
        op.comparison = ComparisonType::kSigned;
        op.a = x;
        op.b = y;
        return b_.Add(op);
      }
      XJIT_ASSIGN_OR_RETURN(int x, operand(0));
      XJIT_ASSIGN_OR_RETURN(int y, operand(1));
      return FCompare(instr.attrs().comparison_direction, x, y);
    }
    case Opcode::kClamp: {
      XJIT_ASSIGN_OR_RETURN(int low, operand(0));
      XJIT_ASSIGN_OR_RETURN(int x, operand(1));
      XJIT_ASSIGN_OR_RETURN(int high, operand(2));
      KOp op;
      op.kind = KOpKind::kClamp;
      op.type = compute;
      op.operand_type = compute;
      op.a = low;
      op.b = x;
      op.c = high;
      return result(b_.Add(op));
    }
    default:
      break;
  }
  const bool float_operands = IsFloat(instr.operand(0)->shape().element_type());
  if (IsElementwiseUnary(opcode) && instr.operand_count() == 1 && float_operands) {
    XJIT_ASSIGN_OR_RETURN(int x, operand(0));
    return result(FUnary(opcode, compute, x));
  }
  if (IsElementwiseBinary(opcode) && instr.operand_count() == 2 && float_operands) {
    XJIT_ASSIGN_OR_RETURN(int x, operand(0));
    XJIT_ASSIGN_OR_RETURN(int y, operand(1));
    return result(FBinary(opcode, compute, x, y));
  }
  return Unsupported(instr, "this operation on f8/f4 values");
}

// Stochastic convert (float -> signed integer) as the evaluator does it: |x|
// rounded down, then up when the random bits are below the dropped fraction
// scaled to 2^bits(random); negated for negative x; NaN -> 0; saturated.
// Computed in f64, where every step is exact.
absl::StatusOr<int> ElementEmitter::EmitStochasticConvert(const Instruction& instr,
                                                          const Index& index) {
  constexpr ElementType kF64 = ElementType::kF64;
  const ElementType in_type = instr.operand(0)->shape().element_type();
  const ElementType random_type = instr.operand(1)->shape().element_type();
  const ElementType type = instr.shape().element_type();
  if (!IsFloat(in_type) || !IsSignedInteger(type) || !IsUnsignedInteger(random_type) ||
      !instr.operand(1)->shape().SameDimensions(instr.operand(0)->shape())) {
    return Unsupported(instr, "stochastic-convert types");
  }
  XJIT_ASSIGN_OR_RETURN(int value, Emit(*instr.operand(0), index));
  XJIT_ASSIGN_OR_RETURN(int random, Emit(*instr.operand(1), index));
  if (IsMiniFloat(in_type)) value = Codec().Decode(in_type, value);
  const int x = Convert(kF64, value);
  const int width = BitWidth(type);
  const double min = -std::ldexp(1.0, width - 1);
  const double max = std::ldexp(1.0, width - 1) - 1;
  const int magnitude = FUnary(Opcode::kAbs, kF64, x);
  const int truncated = FUnary(Opcode::kFloor, kF64, magnitude);
  const int fixed =
      FBinary(Opcode::kMultiply, kF64, FBinary(Opcode::kSubtract, kF64, magnitude, truncated),
              FConst(kF64, std::ldexp(1.0, BitWidth(random_type))));
  const int round_up = UnsignedCompare(ComparisonDirection::kLt, random,
                                       b_.Value(KOpKind::kConvert, random_type, fixed));
  int v = FBinary(Opcode::kAdd, type, b_.Value(KOpKind::kConvert, type, truncated),
                  b_.Value(KOpKind::kConvert, type, round_up));
  v = SelectValue(FCompare(ComparisonDirection::kLt, x, FConst(kF64, 0.0)),
                  FUnary(Opcode::kNegate, type, v), v, type);
  const int64_t low =
      width >= 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (width - 1));
  const int64_t high =
      width >= 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (width - 1)) - 1;
  v = SelectValue(FCompare(ComparisonDirection::kGe, x, FConst(kF64, max)), IntValue(type, high), v,
                  type);
  v = SelectValue(FCompare(ComparisonDirection::kLe, x, FConst(kF64, min)),
                  b_.Value(KOpKind::kFromIndex, type, b_.Const(low)), v, type);
  return SelectValue(FCompare(ComparisonDirection::kNe, x, x), IntValue(type, 0), v, type);
}

// bitcast-convert between element widths (the evaluator's rules, XLA's):
// a wider element splits into a new minor dimension of pieces, least
// significant first; narrower elements along the operand's minor dimension
// join into one. pred counts as one bit where the byte reading does not fit
// the dimensions (StableHLO's i1).
absl::StatusOr<int> ElementEmitter::EmitBitcastConvertWidths(const Instruction& instr,
                                                             const Index& index) {
  const Shape& in = instr.operand(0)->shape();
  const Shape& out = instr.shape();
  const ElementType in_type = in.element_type(), out_type = out.element_type();
  if (IsComplex(in_type) || IsComplex(out_type) || BitWidth(in_type) < 8 ||
      BitWidth(out_type) < 8) {
    return Unsupported(instr, "bitcast-convert between these types");
  }
  auto fits = [&](int in_bits, int out_bits) {
    if (in_bits == out_bits) return false;  // Same dimensions: not this form.
    const Shape& wide = in_bits > out_bits ? in : out;
    const Shape& narrow = in_bits > out_bits ? out : in;
    const int big = std::max(in_bits, out_bits), small = std::min(in_bits, out_bits);
    if (big % small != 0 || narrow.rank() != wide.rank() + 1) return false;
    for (int64_t d = 0; d < wide.rank(); ++d) {
      if (wide.dimensions(d) != narrow.dimensions(d)) return false;
    }
    return narrow.dimensions(narrow.rank() - 1) == big / small;
  };
  int in_bits = BitWidth(in_type), out_bits = BitWidth(out_type);
  if (!fits(in_bits, out_bits)) {
    in_bits = IsPred(in_type) ? 1 : in_bits;
    out_bits = IsPred(out_type) ? 1 : out_bits;
    if (!fits(in_bits, out_bits)) return Unsupported(instr, "bitcast-convert shapes");
  }
  // A pred piece of a byte's width would keep that byte's raw bits (any
  // value, not 0/1), which a kernel's pred cannot hold.
  if (IsPred(out_type) && out_bits != 1) return Unsupported(instr, "bitcast-convert to pred");
  auto unsigned_of = [](int bits) {
    switch (bits) {
      case 8: return ElementType::kU8;
      case 16: return ElementType::kU16;
      case 32: return ElementType::kU32;
      default: return ElementType::kU64;
    }
  };
  // The raw bits of a value (pred: 0 or 1), and a value of `type` from bits.
  auto to_bits = [&](int value, ElementType type) {
    if (IsPred(type)) return Convert(ElementType::kU8, value);
    const ElementType u = unsigned_of(BitWidth(type));
    return b_program_type(value) == u ? value : b_.Value(KOpKind::kBitcast, u, value);
  };
  auto from_bits = [&](int bits, ElementType type) {
    if (IsPred(type)) return Convert(ElementType::kPred, bits);  // The bit: 0 or 1.
    const ElementType program_type = ProgramElementType(type);
    return b_program_type(bits) == program_type ? bits
                                                : b_.Value(KOpKind::kBitcast, program_type, bits);
  };
  if (in_bits > out_bits) {
    // Piece j (the last index) of element index[0..rank-1].
    const ElementType u = unsigned_of(BitWidth(in_type));
    Index operand_index(index.begin(), index.end() - 1);
    XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), operand_index));
    const int shift = b_.Value(KOpKind::kFromIndex, u, b_.IMul(index.back(), b_.Const(out_bits)));
    int piece = FBinary(Opcode::kShiftRightLogical, u, to_bits(x, in_type), shift);
    if (IsPred(out_type)) {
      return Convert(ElementType::kPred, FBinary(Opcode::kAnd, u, piece, IntValue(u, 1)));
    }
    return from_bits(Convert(unsigned_of(out_bits), piece), out_type);
  }
  // Joins the operand's minor pieces, the first least significant.
  const ElementType u = unsigned_of(BitWidth(out_type));
  const int64_t ratio = out_bits / in_bits;
  int bits = -1;
  for (int64_t j = 0; j < ratio; ++j) {
    Index operand_index = index;
    operand_index.push_back(b_.Const(j));
    XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), operand_index));
    int piece = Convert(u, to_bits(x, in_type));
    if (j > 0) piece = FBinary(Opcode::kShiftLeft, u, piece, IntValue(u, j * in_bits));
    bits = bits < 0 ? piece : FBinary(Opcode::kOr, u, bits, piece);
  }
  return from_bits(bits, out_type);
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
  // Every operand is empty along `dim`, so each has the result's (empty)
  // shape: operand 0 read at the result's index is the concatenate itself.
  if (parts.empty()) return Emit(*instr.operand(0), index);
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

// Output element `index` of a gather: its batch dimensions pick an index
// vector, whose entries (clamped so that the slice fits, as dynamic-slice
// does) give the slice's start in the start_index_map dimensions; operand
// batching dimensions take the matching batch index; offset dimensions add
// the position inside the slice. Every operand index stays in bounds.
absl::StatusOr<int> ElementEmitter::EmitGather(const Instruction& instr, const Index& index) {
  const Instruction& operand = *instr.operand(0);
  const Instruction& indices = *instr.operand(1);
  const GatherDimensionNumbers& dn = instr.attrs().gather_dimension_numbers;
  const std::vector<int64_t>& slice_sizes = instr.attrs().slice_sizes;
  const int64_t operand_rank = operand.shape().rank();
  const int64_t indices_rank = indices.shape().rank();
  const int64_t out_rank = instr.shape().rank();
  if (!IsInteger(indices.shape().element_type())) {
    return Unsupported(instr, "start indices are not integers");
  }
  auto contains = [](const std::vector<int64_t>& v, int64_t x) {
    return std::find(v.begin(), v.end(), x) != v.end();
  };
  // The shape checks the verifier made, restated where a violation would
  // index out of range here.
  if (static_cast<int64_t>(slice_sizes.size()) != operand_rank || dn.index_vector_dim < 0 ||
      dn.index_vector_dim > indices_rank ||
      dn.operand_batching_dims.size() != dn.start_indices_batching_dims.size()) {
    return Unsupported(instr, "malformed gather dimension numbers");
  }
  Index batch;  // Output batch dimensions in order = indices dims without index_vector_dim.
  for (int64_t d = 0; d < out_rank; ++d) {
    if (!contains(dn.offset_dims, d)) batch.push_back(index[d]);
  }
  if (static_cast<int64_t>(batch.size()) !=
      indices_rank - (dn.index_vector_dim < indices_rank ? 1 : 0)) {
    return Unsupported(instr, "result rank does not match the indices");
  }
  Index operand_index(operand_rank, b_.Const(0));
  Index indices_index(indices_rank);
  for (int64_t d = 0, b = 0; d < indices_rank; ++d) {
    if (d != dn.index_vector_dim) indices_index[d] = batch[b++];
  }
  for (size_t k = 0; k < dn.start_index_map.size(); ++k) {
    const int64_t d = dn.start_index_map[k];
    if (d < 0 || d >= operand_rank) return Unsupported(instr, "start_index_map out of range");
    if (dn.index_vector_dim < indices_rank) {
      indices_index[dn.index_vector_dim] = b_.Const(static_cast<int64_t>(k));
    }
    XJIT_ASSIGN_OR_RETURN(int value, Emit(indices, indices_index));
    const int64_t largest = std::max<int64_t>(operand.shape().dimensions(d) - slice_sizes[d], 0);
    const int start = b_.Value(KOpKind::kToIndex, ElementType::kS64, value);
    operand_index[d] = b_.IAdd(operand_index[d], b_.IClamp(start, 0, largest));
  }
  for (size_t i = 0; i < dn.operand_batching_dims.size(); ++i) {
    const int64_t d = dn.start_indices_batching_dims[i];
    if (d < 0 || d >= indices_rank || d == dn.index_vector_dim) {
      return Unsupported(instr, "start_indices_batching_dims out of range");
    }
    const int64_t od = dn.operand_batching_dims[i];
    operand_index[od] = b_.IAdd(operand_index[od], indices_index[d]);
  }
  for (int64_t d = 0, k = 0; d < operand_rank; ++d) {
    if (contains(dn.collapsed_slice_dims, d) || contains(dn.operand_batching_dims, d)) continue;
    if (k >= static_cast<int64_t>(dn.offset_dims.size())) {
      return Unsupported(instr, "offset_dims do not match the slice");
    }
    operand_index[d] = b_.IAdd(operand_index[d], index[dn.offset_dims[k++]]);
  }
  return Emit(operand, operand_index);
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
// values, one per logical dimension. A rank-0 output gets one loop of extent
// 1 when `at_least_one` (reduction programs need an output loop).
Index LoopNest(const Shape& output, ProgramBuilder* builder, KernelProgram* program,
               bool at_least_one = false) {
  const int64_t rank = output.rank();
  Index index(rank);
  const std::vector<int64_t>& minor_to_major = output.layout().minor_to_major;
  for (int64_t level = 0; level < rank; ++level) {
    const int64_t dim = minor_to_major[rank - 1 - level];
    program->loop_extents.push_back(output.dimensions(dim));
    index[dim] = builder->LoopIndex(static_cast<int>(level), output.dimensions(dim));
  }
  if (rank == 0 && at_least_one) {
    program->loop_extents.push_back(1);
    builder->LoopIndex(0, 1);
  }
  return index;
}

// One output buffer of a kernel: element `element` of `value`'s result (a
// variadic reduce has several; -1 for an array result).
struct OutputPlan {
  const Instruction* value = nullptr;
  int element = -1;
  Shape shape;
};

// Whether `reducer` is one binary add/multiply/maximum/minimum/and/or/xor of
// its two scalar parameters: then the order of the reduced elements does
// not matter (up to float rounding), so the loops follow memory order.
bool IsSimpleMonoid(const Computation& reducer) {
  const Instruction* root = reducer.root();
  if (root == nullptr || reducer.parameter_count() != 2 || root->operand_count() != 2) return false;
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr: case Opcode::kXor:
      break;
    default:
      return false;
  }
  return root->operand(0)->opcode() == Opcode::kParameter &&
         root->operand(1)->opcode() == Opcode::kParameter &&
         root->operand(0) != root->operand(1);
}

class KernelAssembler {
 public:
  KernelAssembler(KernelSpec* spec, const Instruction& kernel)
      : spec_(spec), kernel_(kernel), builder_(&spec->program), emitter_(spec, &builder_) {}

  ElementEmitter& emitter() { return emitter_; }

  // Run then emits only part `k` of the one output, a concatenate
  // (EmitConcatenatePart).
  void set_concatenate_part(int k) { concatenate_part_ = k; }

  // Emits the loops and stores of `outputs` (in output buffer order).
  absl::Status Run(const std::vector<OutputPlan>& outputs) {
    for (const OutputPlan& output : outputs) {
      if (!IsKernelCompatibleShape(output.shape)) {
        return Unsupported(kernel_, absl::StrCat("unsupported result shape ",
                                                 output.shape.ToString()));
      }
    }
    const Instruction* reduce = nullptr;
    for (const OutputPlan& output : outputs) {
      if (output.value->opcode() == Opcode::kReduce) {
        reduce = output.value;
        break;
      }
    }
    // A row fusion (passes/fuse.h): reduces inside, read back through
    // broadcasts by the outputs, which have the reduces' input dimensions.
    // Only a reduce the outputs read counts (a kernel making some of a
    // fusion's outputs may need none).
    if (reduce == nullptr && kernel_.opcode() == Opcode::kFusion &&
        kernel_.attrs().fusion_kind == FusionKind::kInput &&
        kernel_.called_computations().size() == 1) {
      std::vector<const Instruction*> pending;
      absl::flat_hash_set<const Instruction*> read;
      for (const OutputPlan& output : outputs) pending.push_back(output.value);
      while (!pending.empty()) {
        const Instruction* value = pending.back();
        pending.pop_back();
        if (!read.insert(value).second) continue;
        for (const Instruction* operand : value->operands()) pending.push_back(operand);
      }
      for (const auto& instruction : kernel_.called_computations()[0]->instructions()) {
        if (instruction->opcode() == Opcode::kReduce && read.contains(instruction.get())) {
          reduce = instruction.get();
          break;
        }
      }
    }
    if (concatenate_part_ >= 0) {
      if (outputs.size() != 1 || outputs[0].value->opcode() != Opcode::kConcatenate) {
        return Unsupported(kernel_, "a concatenate part of something else");
      }
      XJIT_RETURN_IF_ERROR(RunConcatenatePart(outputs[0], concatenate_part_));
    } else if (outputs[0].value->opcode() == Opcode::kReduceWindow) {
      XJIT_RETURN_IF_ERROR(RunReduceWindow(outputs));
    } else if (outputs[0].value->opcode() == Opcode::kScatter) {
      XJIT_RETURN_IF_ERROR(RunScatter(outputs));
    } else if (outputs[0].value->opcode() == Opcode::kDynamicUpdateSlice &&
               spec_->outputs_start_as_operands) {
      XJIT_RETURN_IF_ERROR(RunDynamicUpdateSlice(*outputs[0].value));
    } else if (reduce == nullptr) {
      XJIT_RETURN_IF_ERROR(RunLoop(outputs));
    } else {
      XJIT_RETURN_IF_ERROR(RunReduce(outputs, *reduce));
    }
    if (builder_.mini_float_misuse()) {
      return Unsupported(kernel_, "an f8/f4 operation the emitter does not decode");
    }
    spec_->program.output_count = static_cast<int>(outputs.size());
    for (const OutputPlan& output : outputs) {
      spec_->program.buffers.push_back({BufferType(output.shape), BufferElements(output.shape)});
    }
    RemoveDeadOps(&spec_->program);
    return absl::OkStatus();
  }

 private:
  // Part `k` of a concatenate (EmitConcatenatePart): the loop nest runs over
  // operand k's dimensions in the output's layout, and element i of the
  // operand is stored at i shifted by the operand's offset along the
  // concatenated dimension.
  absl::Status RunConcatenatePart(const OutputPlan& output, int k) {
    const Instruction& concat = *output.value;
    const Shape& shape = output.shape;
    if (PackedBits(shape) > 0) return Unsupported(kernel_, "a packed concatenate");
    const int64_t dim = concat.attrs().dimensions.empty() ? -1 : concat.attrs().dimensions[0];
    if (dim < 0 || dim >= shape.rank() || k < 0 || k >= concat.operand_count()) {
      return Unsupported(kernel_, "no such concatenate part");
    }
    int64_t offset = 0;
    for (int j = 0; j < k; ++j) offset += concat.operand(j)->shape().dimensions(dim);
    Shape part = shape;
    part.set_dimensions(dim, concat.operand(k)->shape().dimensions(dim));
    const Index index = LoopNest(part, &builder_, &spec_->program);
    Index out = index;
    out[dim] = builder_.IAdd(index[dim], builder_.Const(offset));
    XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*concat.operand(k), index));
    Store(0, shape, out, value);
    return absl::OkStatus();
  }

  absl::Status RunLoop(const std::vector<OutputPlan>& outputs) {
    const Shape& first = outputs[0].shape;
    for (const OutputPlan& output : outputs) {
      if (output.shape.dimensions() != first.dimensions() || output.element >= 0) {
        return Unsupported(kernel_, "outputs of different dimensions");
      }
    }
    if (PackedBits(first) > 0) return RunPackedLoop(outputs);
    const Index index = LoopNest(first, &builder_, &spec_->program);
    for (size_t k = 0; k < outputs.size(); ++k) {
      XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*outputs[k].value, index));
      Store(static_cast<int>(k), outputs[k].shape, index, value);
    }
    return absl::OkStatus();
  }

  // A packed output (PackedBits): the loop runs over its bytes, and each
  // iteration computes the elements of one byte and stores it whole, so
  // no two iterations (or threads) write one byte. The bits past the last
  // element are zero.
  absl::Status RunPackedLoop(const std::vector<OutputPlan>& outputs) {
    constexpr ElementType kU8 = ElementType::kU8;
    if (outputs.size() != 1) return Unsupported(kernel_, "a packed output among several");
    const Shape& shape = outputs[0].shape;
    const int bits = PackedBits(shape);
    const int per_byte = 8 / bits;
    const int64_t n = PhysicalElementCount(shape);
    const Shape bytes = Shape::Array(kU8, {(n * bits + 7) / 8});
    const int j = LoopNest(bytes, &builder_, &spec_->program)[0];
    int byte = -1;
    for (int p = 0; p < per_byte; ++p) {
      const int position =
          builder_.IAdd(builder_.IMul(j, builder_.Const(per_byte)), builder_.Const(p));
      const int clamped = builder_.IMin(position, builder_.Const(std::max<int64_t>(n - 1, 0)));
      XJIT_ASSIGN_OR_RETURN(int value,
                            emitter_.Emit(*outputs[0].value, emitter_.IndexAt(shape, clamped)));
      int piece = emitter_.ToRawBits(shape.element_type(), value, bits);
      if (p > 0) piece = emitter_.U8Binary(Opcode::kShiftLeft, piece, emitter_.U8Const(p * bits));
      piece = emitter_.Select(builder_.ILt(position, builder_.Const(n)), piece, emitter_.U8Const(0),
                              kU8);
      byte = byte < 0 ? piece : emitter_.U8Binary(Opcode::kOr, byte, piece);
    }
    KOp store;
    store.kind = KOpKind::kStore;
    store.type = ElementType::kTuple;
    store.operand_type = kU8;
    store.a = j;
    store.b = byte;
    builder_.Add(store);
    return absl::OkStatus();
  }

  void Store(int output, const Shape& shape, const Index& index, int value) {
    KOp store;
    store.kind = KOpKind::kStore;
    store.type = ElementType::kTuple;
    store.operand_type = BufferType(shape.element_type());
    store.a = emitter_.Offset(shape, index);
    store.b = value;
    store.imm = output;
    if (!IsComplex(shape.element_type())) {
      builder_.Add(store);
      return;
    }
    const int offset = store.a;
    store.a = emitter_.ComponentPosition(offset, 0);
    store.b = emitter_.Re(value);
    builder_.Add(store);
    store.a = emitter_.ComponentPosition(offset, 1);
    store.b = emitter_.Im(value);
    builder_.Add(store);
  }

  int Acc(KOpKind kind, ElementType type, int slot, int a = -1) {
    KOp op;
    op.kind = kind;
    op.type = type;
    op.imm = slot;
    op.a = a;
    if (a >= 0) op.operand_type = spec_->program.ops[a].type;
    return builder_.Add(op);
  }

  absl::Status CheckReduce(const Instruction& reduce) {
    const int64_t n = reduce.operand_count() / 2;
    if (n < 1 || reduce.operand_count() != 2 * n || reduce.called_computations().size() != 1) {
      return Unsupported(reduce, "malformed reduce");
    }
    const Computation& reducer = *reduce.to_apply();
    if (reducer.parameter_count() != 2 * n || reducer.root() == nullptr) {
      return Unsupported(reduce, "reducer does not take 2N parameters");
    }
    for (int64_t i = 0; i < n; ++i) {
      const Shape& input = reduce.operand(i)->shape();
      const Shape& init = reduce.operand(n + i)->shape();
      const Shape& result = n == 1 && !reduce.shape().IsTuple() ? reduce.shape()
                                                                 : reduce.shape().tuple_shapes(i);
      if (!input.IsArray() || input.dimensions() != reduce.operand(0)->shape().dimensions() ||
          !init.IsArray() || init.rank() != 0 || !result.IsArray() ||
          init.element_type() != result.element_type() ||
          input.element_type() != result.element_type() ||
          !IsKernelElementType(result.element_type())) {
        return Unsupported(reduce, "reduce operand, init or result types");
      }
      for (int64_t k : {i, n + i}) {
        const Shape& p = reducer.parameter(k)->shape();
        if (!p.IsArray() || p.rank() != 0 || p.element_type() != result.element_type()) {
          return Unsupported(reduce, "reducer parameters are not scalars of the result type");
        }
      }
    }
    const Instruction* root = reducer.root();
    if (n > 1 && (root->opcode() != Opcode::kTuple || root->operand_count() != n)) {
      return Unsupported(reduce, "variadic reducer without a tuple root");
    }
    for (int64_t i = 0; i < n; ++i) {
      const Shape& r = n > 1 ? root->operand(i)->shape() : root->shape();
      if (!r.IsArray() || r.rank() != 0 ||
          r.element_type() != reducer.parameter(i)->shape().element_type()) {
        return Unsupported(reduce, "reducer result is not a scalar of the accumulator type");
      }
    }
    return absl::OkStatus();
  }

  // The reducer applied to (accumulators..., values...).
  absl::StatusOr<std::vector<int>> ApplyReducer(const Instruction& reduce,
                                                const std::vector<int>& args) {
    const Computation& reducer = *reduce.to_apply();
    const int64_t n = reduce.operand_count() / 2;
    std::vector<int> results;
    XJIT_RETURN_IF_ERROR(emitter_.WithFixedParameters(reducer, args, [&]() -> absl::Status {
      const Instruction* root = reducer.root();
      for (int64_t i = 0; i < n; ++i) {
        const Instruction& r = n > 1 ? *root->operand(i) : *root;
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(r, {}));
        results.push_back(value);
      }
      return absl::OkStatus();
    }));
    return results;
  }

  // Folds `values()` (the N values at the current iteration of the
  // reduction loops) into accumulators that start at `inits`, with the
  // reducer of `reduce` (a reduce or reduce-window, N inputs then N inits);
  // `count` iterations in all. Returns the N results: the inits for no
  // iteration, the reducer applied once (no accumulator) for one. `slot` is
  // the next free accumulator slot.
  template <typename Values>
  absl::StatusOr<std::vector<int>> Fold(const Instruction& reduce, const std::vector<int>& inits,
                                        int64_t count, int* slot, Values values) {
    const int64_t n = reduce.operand_count() / 2;
    if (count == 0) return inits;
    if (count == 1) {
      std::vector<int> args = inits;
      XJIT_ASSIGN_OR_RETURN(std::vector<int> xs, values());
      args.insert(args.end(), xs.begin(), xs.end());
      return ApplyReducer(reduce, args);
    }
    // One slot per accumulator; a complex accumulator has two (re, im).
    std::vector<int> args;
    std::vector<int> first_slot(n);
    for (int64_t i = 0; i < n; ++i) {
      const ElementType type = reduce.operand(i)->shape().element_type();
      first_slot[i] = *slot;
      if (IsComplex(type)) {
        const ElementType c = ComplexComponentType(type);
        Acc(KOpKind::kAccInit, c, *slot, emitter_.Re(inits[i]));
        Acc(KOpKind::kAccInit, c, *slot + 1, emitter_.Im(inits[i]));
        args.push_back(emitter_.Pair(Acc(KOpKind::kAccRead, c, *slot),
                                     Acc(KOpKind::kAccRead, c, *slot + 1)));
        *slot += 2;
      } else {
        Acc(KOpKind::kAccInit, type, *slot, inits[i]);
        args.push_back(Acc(KOpKind::kAccRead, type, *slot));
        *slot += 1;
      }
    }
    XJIT_ASSIGN_OR_RETURN(std::vector<int> xs, values());
    args.insert(args.end(), xs.begin(), xs.end());
    XJIT_ASSIGN_OR_RETURN(std::vector<int> updated, ApplyReducer(reduce, args));
    std::vector<int> results(n);
    for (int64_t i = 0; i < n; ++i) {
      const ElementType type = reduce.operand(i)->shape().element_type();
      const int s = first_slot[i];
      if (IsComplex(type)) {
        const ElementType c = ComplexComponentType(type);
        Acc(KOpKind::kAccWrite, c, s, emitter_.Re(updated[i]));
        Acc(KOpKind::kAccWrite, c, s + 1, emitter_.Im(updated[i]));
        results[i] =
            emitter_.Pair(Acc(KOpKind::kAccResult, c, s), Acc(KOpKind::kAccResult, c, s + 1));
      } else {
        Acc(KOpKind::kAccWrite, type, s, updated[i]);
        results[i] = Acc(KOpKind::kAccResult, type, s);
      }
    }
    return results;
  }

  // A reduce-window alone (variadic: one output per result): output loops
  // over its result, reduction loops over the window in row-major order (the
  // evaluator's), and every window coordinate contributes one reducer call,
  // padding and base-dilation holes with the init value (interpreter/
  // reduce_window.cc); loads are clamped into the operand.
  absl::Status RunReduceWindow(const std::vector<OutputPlan>& outputs) {
    const Instruction& rw = *outputs[0].value;
    XJIT_RETURN_IF_ERROR(CheckReduce(rw));
    const int64_t n = rw.operand_count() / 2;
    const Shape& input = rw.operand(0)->shape();
    const Window& window = rw.attrs().window;
    const int64_t rank = input.rank();
    if (static_cast<int64_t>(window.size()) != rank ||
        static_cast<int64_t>(outputs.size()) != n) {
      return Unsupported(rw, "window rank or result count");
    }
    for (const OutputPlan& output : outputs) {
      if (output.value != &rw || output.shape.dimensions() != outputs[0].shape.dimensions()) {
        return Unsupported(kernel_, "reduce-window with other outputs");
      }
    }
    const Index out_index = LoopNest(outputs[0].shape, &builder_, &spec_->program, true);
    Index window_index(rank);
    int64_t window_count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (window[d].size < 0 || window[d].stride < 1 || window[d].base_dilation < 1 ||
          window[d].window_dilation < 1) {
        return Unsupported(rw, "invalid window");
      }
      window_count *= window[d].size;
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (window[d].size <= 1 || window_count == 0) {
        window_index[d] = builder_.Const(0);
        continue;
      }
      const int level = static_cast<int>(spec_->program.loop_extents.size());
      spec_->program.loop_extents.push_back(window[d].size);
      ++spec_->program.reduction_loops;
      window_index[d] = builder_.LoopIndex(level, window[d].size);
    }
    // The padded coordinate p of each dimension, whether every p is on a base
    // element, and the operand index there.
    int inside = builder_.Const(1);
    Index in_index(rank);
    for (int64_t d = 0; d < rank; ++d) {
      const WindowDimension& w = window[d];
      int k = window_index[d];
      if (w.window_reversal) k = builder_.ISub(builder_.Const(w.size - 1), k);
      const int p = builder_.ISub(
          builder_.IAdd(builder_.IMul(out_index[d], builder_.Const(w.stride)),
                        builder_.IMul(k, builder_.Const(w.window_dilation))),
          builder_.Const(w.padding_low));
      const int64_t size = input.dimensions(d);
      const int64_t dilated = size == 0 ? 0 : (size - 1) * w.base_dilation + 1;
      int ok = builder_.IAnd(builder_.IGe(p, builder_.Const(0)),
                             builder_.ILt(p, builder_.Const(dilated)));
      const int clamped = builder_.IClamp(p, 0, std::max<int64_t>(dilated - 1, 0));
      if (w.base_dilation > 1) {
        ok = builder_.IAnd(ok, builder_.IEq(builder_.IRem(clamped, w.base_dilation),
                                            builder_.Const(0)));
      }
      inside = builder_.IAnd(inside, ok);
      in_index[d] = builder_.IClamp(builder_.IDiv(clamped, w.base_dilation), 0,
                                    std::max<int64_t>(size - 1, 0));
    }
    std::vector<int> inits;
    for (int64_t i = 0; i < n; ++i) {
      XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*rw.operand(n + i), {}));
      inits.push_back(init);
    }
    bool empty_input = input.element_count() == 0;
    auto values = [&]() -> absl::StatusOr<std::vector<int>> {
      if (empty_input || builder_.IsConst(inside, 0)) return inits;
      std::vector<int> xs;
      for (int64_t i = 0; i < n; ++i) {
        XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*rw.operand(i), in_index));
        xs.push_back(emitter_.Select(inside, x, inits[i],
                                          rw.operand(i)->shape().element_type()));
      }
      return xs;
    };
    int slot = 0;
    XJIT_ASSIGN_OR_RETURN(std::vector<int> results, Fold(rw, inits, window_count, &slot, values));
    for (int64_t i = 0; i < n; ++i) {
      Store(static_cast<int>(i), outputs[i].shape, out_index, results[i]);
    }
    return absl::OkStatus();
  }

  // A scatter alone (one operand): the driver first copies the operand into
  // the output (a no-op when the buffer plan puts them in one place), and
  // the kernel, which also reads the output as an input (the scatter's own
  // value), applies the update computation window by window in the
  // evaluator's order (interpreter/gather_scatter.cc): scatter indices in
  // row-major order, then window elements. A window whose start is out of
  // bounds in some dimension is skipped: its stores write back the value
  // they read. Loop 0 has one iteration, so the kernel is never split
  // between threads (updates to one element must stay in order).
  //
  // A variadic scatter (N operands, N updates, a tuple of N results) is the
  // same loop with N outputs: each iteration reads the N current values
  // (input buffers over its own outputs, KernelSpec::input_elements),
  // applies the update computation to all of them at once, and stores N.
  absl::Status RunScatter(const std::vector<OutputPlan>& outputs) {
    const Instruction& scatter = *outputs[0].value;
    const int64_t n = (scatter.operand_count() - 1) / 2;
    if (n < 1 || scatter.operand_count() != 2 * n + 1 ||
        static_cast<int64_t>(outputs.size()) != n || scatter.called_computations().size() != 1) {
      return Unsupported(scatter, "scatter operands and results do not match");
    }
    const bool variadic = scatter.shape().IsTuple();
    auto result_shape = [&](int64_t k) -> const Shape& {
      return variadic ? scatter.shape().tuple_shapes(k) : scatter.shape();
    };
    const Shape& shape = result_shape(0);
    const Instruction& indices = *scatter.operand(n);
    const Instruction& updates = *scatter.operand(n + 1);
    const Computation& combiner = *scatter.to_apply();
    if (!IsInteger(indices.shape().element_type()) || combiner.parameter_count() != 2 * n ||
        combiner.root() == nullptr) {
      return Unsupported(scatter, "scatter types or update computation");
    }
    // The combiner's results: its root, or the operands of its root tuple.
    std::vector<const Instruction*> combined_roots;
    if (variadic) {
      if (combiner.root()->opcode() != Opcode::kTuple || combiner.root()->operand_count() != n) {
        return Unsupported(scatter, "a variadic update computation whose root is not a tuple");
      }
      combined_roots.assign(combiner.root()->operands().begin(),
                            combiner.root()->operands().end());
    } else {
      combined_roots.push_back(combiner.root());
    }
    for (int64_t k = 0; k < n; ++k) {
      const Shape& result = result_shape(k);
      const ElementType type = result.element_type();
      // The driver's copy moves the operand's bytes: they must be in the
      // result's layout (layout assignment makes them so; with passes off,
      // a different layout leaves the scatter to the evaluator).
      if (!(scatter.operand(k)->shape() == result)) {
        return Unsupported(scatter, "operand layout differs from the result's");
      }
      const Shape& root = combined_roots[k]->shape();
      if (!root.IsArray() || root.rank() != 0 || root.element_type() != type ||
          scatter.operand(n + 1 + k)->shape().element_type() != type ||
          scatter.operand(n + 1 + k)->shape().dimensions() != updates.shape().dimensions() ||
          result.dimensions() != shape.dimensions()) {
        return Unsupported(scatter, "scatter types or update computation");
      }
    }
    const ScatterDimensionNumbers& dn = scatter.attrs().scatter_dimension_numbers;
    const int64_t operand_rank = shape.rank();
    const int64_t indices_rank = indices.shape().rank();
    const int64_t update_rank = updates.shape().rank();
    auto contains = [](const std::vector<int64_t>& v, int64_t x) {
      return std::find(v.begin(), v.end(), x) != v.end();
    };
    if (dn.index_vector_dim < 0 || dn.index_vector_dim > indices_rank ||
        dn.input_batching_dims.size() != dn.scatter_indices_batching_dims.size()) {
      return Unsupported(scatter, "malformed scatter dimension numbers");
    }
    std::vector<int64_t> window_operand_dims;
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (!contains(dn.inserted_window_dims, d) && !contains(dn.input_batching_dims, d)) {
        window_operand_dims.push_back(d);
      }
    }
    std::vector<int64_t> scatter_dims;  // Update dimensions that pick an index vector.
    for (int64_t d = 0; d < update_rank; ++d) {
      if (!contains(dn.update_window_dims, d)) scatter_dims.push_back(d);
    }
    if (window_operand_dims.size() != dn.update_window_dims.size() ||
        static_cast<int64_t>(scatter_dims.size()) !=
            indices_rank - (dn.index_vector_dim < indices_rank ? 1 : 0)) {
      return Unsupported(scatter, "scatter dimension numbers do not match the shapes");
    }
    // Loop 0 (one iteration), then the scatter dimensions, then the window's.
    spec_->program.loop_extents.push_back(1);
    builder_.LoopIndex(0, 1);
    Index update_index(update_rank);
    for (int64_t d : scatter_dims) update_index[d] = Loop(updates.shape().dimensions(d));
    for (int64_t d : dn.update_window_dims) update_index[d] = Loop(updates.shape().dimensions(d));
    Index start(operand_rank, builder_.Const(0));
    Index indices_index(indices_rank);
    for (size_t b = 0, d = 0; d < static_cast<size_t>(indices_rank); ++d) {
      if (static_cast<int64_t>(d) != dn.index_vector_dim) {
        indices_index[d] = update_index[scatter_dims[b++]];
      }
    }
    for (size_t k = 0; k < dn.scatter_dims_to_operand_dims.size(); ++k) {
      const int64_t d = dn.scatter_dims_to_operand_dims[k];
      if (d < 0 || d >= operand_rank) return Unsupported(scatter, "bad scatter_dims_to_operand_dims");
      if (dn.index_vector_dim < indices_rank) {
        indices_index[dn.index_vector_dim] = builder_.Const(static_cast<int64_t>(k));
      }
      XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(indices, indices_index));
      start[d] = builder_.IAdd(start[d], builder_.Value(KOpKind::kToIndex, ElementType::kS64, value));
    }
    for (size_t i = 0; i < dn.input_batching_dims.size(); ++i) {
      const int64_t d = dn.scatter_indices_batching_dims[i];
      if (d < 0 || d >= indices_rank || d == dn.index_vector_dim) {
        return Unsupported(scatter, "bad scatter_indices_batching_dims");
      }
      const int64_t od = dn.input_batching_dims[i];
      start[od] = builder_.IAdd(start[od], indices_index[d]);
    }
    std::vector<int64_t> window_size(operand_rank, 1);
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      window_size[window_operand_dims[k]] = updates.shape().dimensions(dn.update_window_dims[k]);
    }
    // A window longer than its dimension (an empty operand, say) is never in
    // bounds: nothing is updated, and the clamped index below would address
    // an element that does not exist (found by jit_random_test: a variadic
    // scatter into s32[0,6] wrote past its empty buffers).
    for (int64_t d = 0; d < operand_rank; ++d) {
      if (window_size[d] > shape.dimensions(d)) return absl::OkStatus();
    }
    int inside = builder_.Const(1);
    Index operand_index(operand_rank);
    for (int64_t d = 0; d < operand_rank; ++d) {
      const int64_t last_start = shape.dimensions(d) - window_size[d];
      inside = builder_.IAnd(inside, builder_.IAnd(builder_.IGe(start[d], builder_.Const(0)),
                                                   builder_.ILt(start[d],
                                                                builder_.Const(last_start + 1))));
      operand_index[d] = builder_.IClamp(start[d], 0, std::max<int64_t>(last_start, 0));
    }
    for (size_t k = 0; k < window_operand_dims.size(); ++k) {
      const int64_t d = window_operand_dims[k];
      operand_index[d] = builder_.IAdd(operand_index[d], update_index[dn.update_window_dims[k]]);
    }
    if (updates.shape().element_count() == 0 || builder_.IsConst(inside, 0)) return absl::OkStatus();
    std::vector<int> arguments;  // The current values, then the updates.
    for (int64_t k = 0; k < n; ++k) {
      XJIT_ASSIGN_OR_RETURN(int current,
                            variadic ? emitter_.LoadElement(scatter, static_cast<int>(k),
                                                            operand_index)
                                     : emitter_.Emit(scatter, operand_index));
      arguments.push_back(current);
    }
    for (int64_t k = 0; k < n; ++k) {
      XJIT_ASSIGN_OR_RETURN(int update, emitter_.Emit(*scatter.operand(n + 1 + k), update_index));
      arguments.push_back(update);
    }
    std::vector<int> combined;
    XJIT_RETURN_IF_ERROR(emitter_.WithFixedParameters(combiner, arguments,
                                                      [&]() -> absl::Status {
      for (const Instruction* root : combined_roots) {
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*root, {}));
        combined.push_back(value);
      }
      return absl::OkStatus();
    }));
    for (int64_t k = 0; k < n; ++k) {
      Store(static_cast<int>(k), result_shape(k), operand_index,
            emitter_.Select(inside, combined[k], arguments[k], result_shape(k).element_type()));
    }
    return absl::OkStatus();
  }

  // A dynamic-update-slice over its output where it stands: the output
  // already holds operand 0 (the driver copies it there unless buffer
  // allocation wrote the result over the operand, as in a loop's state), and
  // the kernel stores the update's elements only, at the clamped start, so
  // its cost is the update's size, not the operand's. Loop 0 has one
  // iteration (stores are not split between threads); the update's loops
  // follow its physical order, so that a contiguous row of the update is a
  // vectorised inner loop.
  absl::Status RunDynamicUpdateSlice(const Instruction& dus) {
    const Shape& shape = dus.shape();
    const Instruction& update = *dus.operand(1);
    spec_->program.loop_extents.push_back(1);
    builder_.LoopIndex(0, 1);
    if (update.shape().element_count() == 0) return absl::OkStatus();
    XJIT_ASSIGN_OR_RETURN(Index starts, emitter_.ClampedStarts(dus, 2, shape,
                                                               update.shape().dimensions()));
    const int64_t rank = shape.rank();
    Index update_index(rank);
    const std::vector<int64_t>& minor_to_major = update.shape().layout().minor_to_major;
    for (int64_t level = rank - 1; level >= 0; --level) {
      const int64_t dim = minor_to_major[level];
      update_index[dim] = Loop(update.shape().dimensions(dim));
    }
    Index out_index(rank);
    for (int64_t d = 0; d < rank; ++d) out_index[d] = builder_.IAdd(starts[d], update_index[d]);
    XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(update, update_index));
    Store(0, shape, out_index, value);
    return absl::OkStatus();
  }

  // A new loop (after the existing ones) of `extent`; extent 1 needs none.
  int Loop(int64_t extent) {
    if (extent == 1) return builder_.Const(0);
    const int level = static_cast<int>(spec_->program.loop_extents.size());
    spec_->program.loop_extents.push_back(extent);
    return builder_.LoopIndex(level, extent);
  }

  absl::Status RunReduce(const std::vector<OutputPlan>& outputs, const Instruction& first) {
    XJIT_RETURN_IF_ERROR(CheckReduce(first));
    const Shape& input = first.operand(0)->shape();
    const int64_t rank = input.rank();
    std::vector<bool> reduced(rank, false);
    for (int64_t d : first.attrs().dimensions) {
      if (d < 0 || d >= rank || reduced[d]) return Unsupported(first, "bad reduce dimensions");
      reduced[d] = true;
    }
    std::vector<int64_t> kept;
    for (int64_t d = 0; d < rank; ++d) {
      if (!reduced[d]) kept.push_back(d);
    }
    std::vector<int64_t> kept_sizes;
    for (int64_t d : kept) kept_sizes.push_back(input.dimensions(d));
    // Every reduce reduces the same dimensions of inputs of the same
    // dimensions; other outputs are of the input's or the result's
    // dimensions.
    std::vector<const Instruction*> reduces;
    bool simple = true;
    for (const OutputPlan& output : outputs) {
      const Instruction& value = *output.value;
      if (value.opcode() == Opcode::kReduce) {
        if (std::find(reduces.begin(), reduces.end(), &value) == reduces.end()) {
          XJIT_RETURN_IF_ERROR(CheckReduce(value));
          std::vector<int64_t> dims = value.attrs().dimensions;
          std::vector<int64_t> first_dims = first.attrs().dimensions;
          std::sort(dims.begin(), dims.end());
          std::sort(first_dims.begin(), first_dims.end());
          if (value.operand(0)->shape().dimensions() != input.dimensions() || dims != first_dims) {
            return Unsupported(kernel_, "reduces over different iteration spaces in one kernel");
          }
          reduces.push_back(&value);
          simple = simple && IsSimpleMonoid(*value.to_apply());
        }
      } else if (output.shape.dimensions() != input.dimensions() &&
                 std::vector<int64_t>(output.shape.dimensions().begin(),
                                      output.shape.dimensions().end()) != kept_sizes) {
        return Unsupported(kernel_, "an output is neither of the reduce's input nor result size");
      }
    }
    // Every reduce inside a fusion counts for the loop order (a row
    // fusion's reduces are all inside).
    if (kernel_.opcode() == Opcode::kFusion && kernel_.called_computations().size() == 1) {
      for (const auto& instruction : kernel_.called_computations()[0]->instructions()) {
        if (instruction->opcode() == Opcode::kReduce) {
          simple = simple && instruction->called_computations().size() == 1 &&
                   IsSimpleMonoid(*instruction->to_apply());
        }
      }
    }
    // Output loops over the first reduce's (first) result.
    const Shape& result_shape = first.shape().IsTuple() ? first.shape().tuple_shapes(0)
                                                        : first.shape();
    const Index out_index = LoopNest(result_shape, &builder_, &spec_->program, true);
    Index in_index(rank, -1);
    for (size_t k = 0; k < kept.size(); ++k) in_index[kept[k]] = out_index[k];
    // Reduction loops: reduced dimensions of size > 1, in memory order (major
    // first) for simple reducers, in the evaluator's order otherwise.
    std::vector<int64_t> order;
    if (simple) {
      const std::vector<int64_t>& m2m = input.layout().minor_to_major;
      for (size_t k = m2m.size(); k-- > 0;) order.push_back(m2m[k]);
    } else {
      for (int64_t d = 0; d < rank; ++d) order.push_back(d);
    }
    int64_t reduced_count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      if (reduced[d]) reduced_count *= input.dimensions(d);
    }
    for (int64_t d : order) {
      if (!reduced[d]) continue;
      if (input.dimensions(d) <= 1 || reduced_count == 0) {
        in_index[d] = builder_.Const(0);
        continue;
      }
      const int level = static_cast<int>(spec_->program.loop_extents.size());
      spec_->program.loop_extents.push_back(input.dimensions(d));
      ++spec_->program.reduction_loops;
      in_index[d] = builder_.LoopIndex(level, input.dimensions(d));
    }
    // The value of each reduce result.
    absl::flat_hash_map<std::pair<const Instruction*, int>, int> result_of;
    int slot = 0;
    // Reduces the outputs read (a row fusion's: passes/fuse.h): the
    // reduction of the row that the requested index names, folded in this
    // output element's reduction loops; a kAccResult that later reads of the
    // row use (kernel_program.h: row programs). The index must not move
    // along the reduced dimensions (the fusion pass forms only fusions whose
    // reduces are read through broadcasts along them).
    const int output_loops =
        static_cast<int>(spec_->program.loop_extents.size()) - spec_->program.reduction_loops;
    std::vector<int8_t> varies;  // By op: -1 unknown, 0 no, 1 yes.
    std::function<bool(int)> moves = [&](int id) -> bool {
      if (id < 0) return false;
      if (static_cast<size_t>(id) >= varies.size()) varies.resize(id + 1, -1);
      if (varies[id] >= 0) return varies[id] != 0;
      const KOp& op = spec_->program.ops[id];
      bool v = op.kind == KOpKind::kLoopIndex && op.imm >= output_loops;
      v = v || op.kind == KOpKind::kAccRead || moves(op.a) || moves(op.b) || moves(op.c);
      varies[id] = v ? 1 : 0;
      return v;
    };
    std::vector<int64_t> first_dims = first.attrs().dimensions;
    std::sort(first_dims.begin(), first_dims.end());
    emitter_.set_reduce_hook([&](const Instruction& r, const Index& at) -> absl::StatusOr<int> {
      XJIT_RETURN_IF_ERROR(CheckReduce(r));
      if (r.operand_count() != 2 || r.shape().IsTuple()) {
        return Unsupported(r, "a variadic reduce read back by a row fusion");
      }
      std::vector<int64_t> dims = r.attrs().dimensions;
      std::sort(dims.begin(), dims.end());
      if (r.operand(0)->shape().dimensions() != input.dimensions() || dims != first_dims ||
          static_cast<int64_t>(at.size()) != rank - static_cast<int64_t>(dims.size())) {
        return Unsupported(r, "reduces over different iteration spaces in one row fusion");
      }
      for (int v : at) {
        if (moves(v)) return Unsupported(r, "a reduce read along its reduced dimensions");
      }
      Index row_index(rank, -1);
      size_t k = 0;
      for (int64_t d = 0; d < rank; ++d) row_index[d] = reduced[d] ? in_index[d] : at[k++];
      XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*r.operand(1), {}));
      if (moves(init) || OpSections(spec_->program)[init] != KSection::kPre) {
        return Unsupported(r, "a reduce whose init is computed from a reduction");
      }
      auto values = [&]() -> absl::StatusOr<std::vector<int>> {
        XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*r.operand(0), row_index));
        return std::vector<int>{x};
      };
      XJIT_ASSIGN_OR_RETURN(std::vector<int> results,
                            Fold(r, {init}, reduced_count, &slot, values));
      return results[0];
    });
    absl::Status status = EmitReduceOutputs(outputs, input, reduces, reduced_count, in_index,
                                            out_index, &slot, &result_of);
    emitter_.set_reduce_hook(nullptr);
    return status;
  }

  absl::Status EmitReduceOutputs(
      const std::vector<OutputPlan>& outputs, const Shape& input,
      const std::vector<const Instruction*>& reduces, int64_t reduced_count, const Index& in_index,
      const Index& out_index, int* slot_counter,
      absl::flat_hash_map<std::pair<const Instruction*, int>, int>* result_map) {
    int& slot = *slot_counter;
    auto& result_of = *result_map;
    for (const Instruction* reduce : reduces) {
      const int64_t n = reduce->operand_count() / 2;
      std::vector<int> inits;
      for (int64_t i = 0; i < n; ++i) {
        XJIT_ASSIGN_OR_RETURN(int init, emitter_.Emit(*reduce->operand(n + i), {}));
        inits.push_back(init);
      }
      auto values = [&]() -> absl::StatusOr<std::vector<int>> {
        std::vector<int> xs;
        for (int64_t i = 0; i < n; ++i) {
          XJIT_ASSIGN_OR_RETURN(int x, emitter_.Emit(*reduce->operand(i), in_index));
          xs.push_back(x);
        }
        return xs;
      };
      XJIT_ASSIGN_OR_RETURN(std::vector<int> results,
                            Fold(*reduce, inits, reduced_count, &slot, values));
      for (int64_t i = 0; i < n; ++i) {
        result_of[{reduce, reduce->shape().IsTuple() ? static_cast<int>(i) : -1}] = results[i];
      }
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const OutputPlan& output = outputs[k];
      if (output.value->opcode() == Opcode::kReduce) {
        auto it = result_of.find({output.value, output.element});
        if (it == result_of.end()) return Unsupported(kernel_, "reduce output mismatch");
        Store(static_cast<int>(k), output.shape, out_index, it->second);
      } else if (output.shape.dimensions() == input.dimensions()) {
        if (reduced_count == 0) continue;  // No elements.
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*output.value, in_index));
        Store(static_cast<int>(k), output.shape, in_index, value);
      } else {
        XJIT_ASSIGN_OR_RETURN(int value, emitter_.Emit(*output.value, out_index));
        Store(static_cast<int>(k), output.shape, out_index, value);
      }
    }
    return absl::OkStatus();
  }

  KernelSpec* spec_;
  const Instruction& kernel_;
  ProgramBuilder builder_;
  ElementEmitter emitter_;
  int concatenate_part_ = -1;
};

// The outputs of an instruction whose value is `root` (a tuple: its
// elements; a variadic reduce: its results).
absl::StatusOr<std::vector<OutputPlan>> PlanOutputs(const Instruction& kernel,
                                                    const Instruction& root) {
  std::vector<OutputPlan> outputs;
  auto add = [&](const Instruction& value) -> absl::Status {
    if (value.shape().IsTuple()) {
      if (value.opcode() != Opcode::kReduce && value.opcode() != Opcode::kReduceWindow &&
          value.opcode() != Opcode::kScatter) {
        return Unsupported(kernel, "nested tuple result");
      }
      for (int64_t i = 0; i < value.shape().tuple_size(); ++i) {
        outputs.push_back({&value, static_cast<int>(i), value.shape().tuple_shapes(i)});
      }
      return absl::OkStatus();
    }
    outputs.push_back({&value, -1, value.shape()});
    return absl::OkStatus();
  };
  if (root.opcode() == Opcode::kTuple) {
    if (root.operand_count() == 0) return Unsupported(kernel, "empty tuple result");
    for (const Instruction* element : root.operands()) {
      if (element->shape().IsTuple()) return Unsupported(kernel, "nested tuple result");
      XJIT_RETURN_IF_ERROR(add(*element));
    }
  } else {
    XJIT_RETURN_IF_ERROR(add(root));
  }
  return outputs;
}

}  // namespace

bool IsKernelCompatibleShape(const Shape& shape) {
  return shape.IsArray() && IsKernelElementType(shape.element_type()) &&
         (IsPlainLayout(shape) || IsPackedPlainLayout(shape));
}

absl::StatusOr<KernelSpec> EmitInstructionKernel(const Instruction& instruction) {
  KernelSpec spec;
  spec.program.name = instruction.name();
  switch (instruction.opcode()) {
    case Opcode::kParameter: case Opcode::kConstant: case Opcode::kFusion: case Opcode::kTuple:
      return Unsupported(instruction, "not an elemental operation");
    default:
      break;
  }
  if (instruction.shape().IsTuple() && instruction.opcode() != Opcode::kReduce &&
      instruction.opcode() != Opcode::kReduceWindow && instruction.opcode() != Opcode::kScatter) {
    return Unsupported(instruction,
                       absl::StrCat("unsupported result shape ", instruction.shape().ToString()));
  }
  KernelAssembler assembler(&spec, instruction);
  for (const Instruction* operand : instruction.operands()) {
    bool seen = false;
    for (const Instruction* input : spec.inputs) seen = seen || input == operand;
    if (!seen) XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*operand, operand));
  }
  // A scatter updates its output where it stands (see RunScatter), and so
  // does a dynamic-update-slice whose operand has the result's layout (its
  // bytes are the output's starting value), unless that layout is packed: a
  // packed output is written a whole byte at a time (RunPackedLoop), so the
  // kernel computes every element, the update's and the operand's.
  if (instruction.opcode() == Opcode::kScatter) {
    if (instruction.shape().IsTuple()) {
      for (int64_t k = 0; k < instruction.shape().tuple_size(); ++k) {
        XJIT_RETURN_IF_ERROR(
            assembler.emitter().AddTupleElementLeaf(instruction, static_cast<int>(k)));
      }
    } else {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(instruction, &instruction));
    }
    spec.outputs_start_as_operands = true;
  }
  if (instruction.opcode() == Opcode::kDynamicUpdateSlice && instruction.shape().IsArray() &&
      PackedBits(instruction.shape()) == 0 && instruction.operand_count() >= 2 &&
      instruction.operand(0)->shape() == instruction.shape() &&
      instruction.operand(1)->shape().has_layout() &&
      instruction.operand(1)->shape().rank() == instruction.shape().rank()) {
    spec.outputs_start_as_operands = true;
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(instruction, instruction));
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

namespace {

// Registers the fused computation's parameters (as the fusion's operands)
// and constants as the kernel's leaves.
absl::Status AddFusionLeaves(const Instruction& fusion, const Computation& fused,
                             KernelAssembler& assembler) {
  for (const auto& instruction : fused.instructions()) {
    if (instruction->opcode() == Opcode::kParameter) {
      const int64_t number = instruction->attrs().parameter_number;
      if (number < 0 || number >= fusion.operand_count()) {
        return Unsupported(fusion, "fused parameter without an operand");
      }
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, fusion.operand(number)));
    } else if (instruction->opcode() == Opcode::kConstant) {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, instruction.get()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<KernelSpec> EmitFusionKernel(const Instruction& fusion, int only_output) {
  KernelSpec spec;
  spec.program.name = fusion.name();
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1) {
    return Unsupported(fusion, "not a fusion");
  }
  if (fusion.attrs().fusion_kind != FusionKind::kLoop &&
      fusion.attrs().fusion_kind != FusionKind::kInput) {
    return Unsupported(fusion, "only loop and input (reduce) fusions have kernels");
  }
  const Computation& fused = *fusion.called_computations()[0];
  if (fused.root() == nullptr) return Unsupported(fusion, "empty fused computation");
  KernelAssembler assembler(&spec, fusion);
  XJIT_RETURN_IF_ERROR(AddFusionLeaves(fusion, fused, assembler));
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(fusion, *fused.root()));
  if (only_output >= 0) {
    if (only_output >= static_cast<int>(outputs.size())) {
      return Unsupported(fusion, "no such output");
    }
    outputs = {outputs[only_output]};
  }
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

int ConcatenateParts(const Instruction& fusion) {
  if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().size() != 1 ||
      fusion.attrs().fusion_kind != FusionKind::kLoop) {
    return 0;
  }
  const Instruction* root = fusion.called_computations()[0]->root();
  if (root == nullptr || root->opcode() != Opcode::kConcatenate || !root->shape().IsArray() ||
      !root->shape().has_layout() || root->attrs().dimensions.size() != 1 ||
      root->operand_count() < 2 || PackedBits(root->shape()) > 0) {
    return 0;
  }
  const std::vector<int64_t>& minor_to_major = root->shape().layout().minor_to_major;
  // Only along the minor-most dimension of size > 1, where one loop nest
  // selects between the operands inside its vector loop.
  for (int64_t d : minor_to_major) {
    if (root->shape().dimensions(d) <= 1) continue;
    return d == root->attrs().dimensions[0] ? root->operand_count() : 0;
  }
  return 0;
}

absl::StatusOr<KernelSpec> EmitConcatenatePart(const Instruction& fusion, int part) {
  KernelSpec spec;
  spec.program.name = fusion.name();
  if (ConcatenateParts(fusion) <= part || part < 0) {
    return Unsupported(fusion, "not a part of a concatenate along the minor dimension");
  }
  const Computation& fused = *fusion.called_computations()[0];
  KernelAssembler assembler(&spec, fusion);
  XJIT_RETURN_IF_ERROR(AddFusionLeaves(fusion, fused, assembler));
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(fusion, *fused.root()));
  if (outputs.size() != 1 || !IsKernelCompatibleShape(outputs[0].shape)) {
    return Unsupported(fusion, "unsupported concatenate result");
  }
  assembler.set_concatenate_part(part);
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

absl::StatusOr<KernelSpec> EmitComputationKernel(const Computation& computation) {
  KernelSpec spec;
  spec.program.name = computation.name();
  if (computation.root() == nullptr) {
    return absl::UnimplementedError(absl::StrCat("no kernel for ", computation.name(),
                                                 ": empty computation"));
  }
  const Instruction& root = *computation.root();
  KernelAssembler assembler(&spec, root);
  for (int64_t k = 0; k < computation.parameter_count(); ++k) {
    const Instruction* parameter = computation.parameter(k);
    XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*parameter, parameter));
  }
  for (const auto& instruction : computation.instructions()) {
    if (instruction->opcode() == Opcode::kConstant) {
      XJIT_RETURN_IF_ERROR(assembler.emitter().AddLeaf(*instruction, instruction.get()));
    }
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<OutputPlan> outputs, PlanOutputs(root, root));
  XJIT_RETURN_IF_ERROR(assembler.Run(outputs));
  spec.output_count = spec.program.output_count;
  return spec;
}

}  // namespace xjit::jit
