// The element emitter of the fusion emitter (fusion_emitter.h): emits an
// instruction's value at a multi-index "elementally", asking for its
// operands' values at the indices the operation maps that index to, with
// requests memoised by (instruction, index). Its leaves (the instructions
// read from input buffers) are declared by the caller, the kernel assembler.
// Internal to jit/kernel/: only the fusion emitter's files include it.
#ifndef XJIT_JIT_KERNEL_ELEMENT_EMITTER_H_
#define XJIT_JIT_KERNEL_ELEMENT_EMITTER_H_

#include <optional>

#include "jit/kernel/fusion_emitter.h"
#include "jit/kernel/program_builder.h"

namespace xjit::jit::fusion_internal {

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
    const int outer_origin = b_.EnterOrigin(instruction);
    absl::StatusOr<int> value = EmitUncached(instruction, index);
    b_.RestoreOrigin(outer_origin);
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
  // Integer values that are indices (iota, and arithmetic on it such as
  // JAX's threefry counters: a u64 iota times a constant plus another iota,
  // shifted right by 32, converted to u32) are computed as index
  // operations, where the range analysis folds them (a split index
  // linearised again) and a vector loop sees an affine index instead of
  // 64-bit lanes beside 32-bit ones. Only where this is exact: every index
  // lies in [0, 2^(w-1)) for the w-bit types involved, so nothing wraps and
  // signedness does not matter.
  // The index whose kFromIndex `value` is, when it fits a value of `type`
  // and of its own type that way.
  std::optional<int> IndexOfValue(int value, ElementType type) const;
  // Whether index `index` lies in [0, 2^(width-1)).
  bool FitsLowHalf(int index, int width) const;
  // `x` converted to integer `type` as a kFromIndex, when IndexOfValue.
  std::optional<int> ConvertIndexValue(ElementType type, int x);
  // add, multiply by a constant, or a shift right that leaves 0, of index
  // values or scalar constants (operands x and y of `instr`), as a
  // kFromIndex of the index arithmetic.
  std::optional<int> BinaryIndexValue(const Instruction& instr, int x, int y);
  // abs of the c64 value `x` (an f32) in component code instead of a call
  // (EmitComplexCall): the evaluator takes hypot of the parts widened to
  // double. Those squares are exact in double (48 significant bits, no
  // overflow or underflow from f32 magnitudes), so sqrt(re^2 + im^2) in
  // double rounds the sum (exact unless the parts' magnitudes differ by
  // more than about 2^2.5) and the root once each, within one double ulp
  // of hypot's, and the rounding to f32 gives hypot's float unless the
  // magnitude lies within a few double ulps of the midpoint between two
  // floats (checked against the evaluator on edge values and on random and
  // near-tie parts, jit_complex_test).
  int EmitComplexAbs64(int x);
  // A load of element `index` of input buffer `buffer`, an array of `shape`.
  int LoadFrom(int buffer, const Shape& shape, const Index& index);
  absl::StatusOr<int> EmitPad(const Instruction& instr, const Index& index);
  // `index` <direction> `bound` as a pred value computed element by element,
  // so that a vector loop compares each lane's index: for an index that
  // moves along the innermost loop and, like `bound`, fits a signed integer
  // as wide as a lane of `type` (f16/bf16 lanes are f32). Otherwise -1: the
  // caller compares with index operations (one result for every lane).
  int LaneIndexCompare(int index, ComparisonDirection direction, int64_t bound, ElementType type);
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

}  // namespace xjit::jit::fusion_internal

#endif  // XJIT_JIT_KERNEL_ELEMENT_EMITTER_H_
