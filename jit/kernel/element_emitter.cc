// The element emitter (see element_emitter.h).
#include "jit/kernel/element_emitter.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
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
#include "jit/kernel/vector_forms.h"
#include "passes/rewrite_util.h"

namespace xjit::jit::fusion_internal {
namespace {

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

}  // namespace


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
      if (std::optional<int> folded = ConvertIndexValue(type, x)) return *folded;
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
    const ElementType from = instr.operand(0)->shape().element_type();
    if (opcode == Opcode::kIsFinite &&
        (from == ElementType::kF32 || from == ElementType::kF64)) {
      // |x| < inf, an ordered compare (false for NaN): forms every target
      // vectorises, where a pred result of a float operand is scalar-only
      // as a unary op (is-finite guards JAX's samplers' and solvers' loops).
      return FCompare(ComparisonDirection::kLt, FUnary(Opcode::kAbs, from, x),
                      FConst(from, std::numeric_limits<double>::infinity()));
    }
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
    if (std::optional<int> folded = BinaryIndexValue(instr, x, y)) return *folded;
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

namespace {

// The value of a scalar integer constant (through broadcasts, reshapes and
// copies), if `instr` is one that fits an int64_t.
std::optional<int64_t> ScalarIntegerConstant(const Instruction& instr) {
  const Instruction* at = &instr;
  while (at->opcode() == Opcode::kBroadcast || at->opcode() == Opcode::kReshape ||
         at->opcode() == Opcode::kCopy || at->opcode() == Opcode::kBitcast) {
    if (at->operand_count() != 1) return std::nullopt;
    at = at->operand(0);
  }
  if (at->opcode() != Opcode::kConstant || !at->has_literal() || !at->shape().IsArray() ||
      at->shape().element_count() != 1 || !IsInteger(at->shape().element_type()) ||
      at->literal().element_count() != 1) {
    return std::nullopt;
  }
  const uint64_t bits = at->literal().GetBitsLinear(0);
  const int width = BitWidth(at->shape().element_type());
  if (IsUnsignedInteger(at->shape().element_type())) {
    if (width == 64 && bits > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
      return std::nullopt;
    }
    return static_cast<int64_t>(bits);
  }
  return at->literal().GetInt(std::vector<int64_t>(at->shape().rank(), 0));
}

}  // namespace

std::optional<int> ElementEmitter::IndexOfValue(int value, ElementType type) const {
  const KOp& op = spec_->program.ops[value];
  if (op.kind != KOpKind::kFromIndex || !IsInteger(op.type) || !IsInteger(type) ||
      !FitsLowHalf(op.a, std::min(BitWidth(op.type), BitWidth(type)))) {
    return std::nullopt;
  }
  return op.a;
}

bool ElementEmitter::FitsLowHalf(int index, int width) const {
  const int64_t high = width >= 64 ? fusion_internal::kWideHigh - 1
                                   : (int64_t{1} << (width - 1)) - 1;
  return b_.Low(index) >= 0 && b_.High(index) <= high;
}

std::optional<int> ElementEmitter::ConvertIndexValue(ElementType type, int x) {
  const std::optional<int> a = IndexOfValue(x, type);
  if (!a) return std::nullopt;
  return b_.Value(KOpKind::kFromIndex, type, *a);
}

std::optional<int> ElementEmitter::BinaryIndexValue(const Instruction& instr, int x, int y) {
  const ElementType type = instr.shape().element_type();
  if (!IsInteger(type)) return std::nullopt;
  const int width = BitWidth(type);
  auto operand = [&](int k, int value) -> std::optional<int> {
    if (std::optional<int64_t> c = ScalarIntegerConstant(*instr.operand(k))) {
      if (*c < 0 || *c > fusion_internal::kWideHigh) return std::nullopt;
      return b_.Const(*c);
    }
    return IndexOfValue(value, type);
  };
  const std::optional<int> a = operand(0, x);
  const std::optional<int> b = operand(1, y);
  if (!a || !b || (b_.IsConst(*a) && b_.IsConst(*b))) return std::nullopt;
  int result = -1;
  switch (instr.opcode()) {
    case Opcode::kAdd:
      result = b_.IAdd(*a, *b);
      break;
    case Opcode::kMultiply:
      // By a constant only: a product of two moving indices is not affine.
      if (!b_.IsConst(*a) && !b_.IsConst(*b)) return std::nullopt;
      result = b_.IMul(*a, *b);
      break;
    case Opcode::kShiftRightLogical:
      // Only when every bit shifts out (JAX's high word of a counter that
      // fits 32 bits): the value is 0.
      if (!b_.IsConst(*b) || b_.Value(*b) >= 63 || (b_.High(*a) >> b_.Value(*b)) != 0) {
        return std::nullopt;
      }
      result = b_.Const(0);
      break;
    default:
      return std::nullopt;
  }
  if (!FitsLowHalf(result, width)) return std::nullopt;
  return b_.Value(KOpKind::kFromIndex, type, result);
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

int ElementEmitter::EmitComplexAbs64(int x) {
  constexpr ElementType kW = ElementType::kF64;
  const int re = Convert(kW, Re(x));
  const int im = Convert(kW, Im(x));
  const int sum = FBinary(Opcode::kAdd, kW, FBinary(Opcode::kMultiply, kW, re, re),
                          FBinary(Opcode::kMultiply, kW, im, im));
  const int root = FUnary(Opcode::kSqrt, kW, sum);
  // hypot(±inf, NaN) is +inf; every other NaN part gives NaN through the sum.
  const int inf = FConst(kW, std::numeric_limits<double>::infinity());
  const int any_inf =
      PredBinary(Opcode::kOr, FCompare(ComparisonDirection::kEq, FUnary(Opcode::kAbs, kW, re), inf),
                 FCompare(ComparisonDirection::kEq, FUnary(Opcode::kAbs, kW, im), inf));
  return Convert(ElementType::kF32, b_.Value(KOpKind::kSelect, kW, any_inf, inf, root));
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
      if (opcode == Opcode::kAbs && instr.operand_count() == 1 && type == ElementType::kF32 &&
          instr.operand(0)->shape().element_type() == ElementType::kC64) {
        XJIT_ASSIGN_OR_RETURN(int x, Emit(*instr.operand(0), index));
        return EmitComplexAbs64(x);
      }
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
    if (type == ElementType::kF8E8M0FNU) {
      // Products and quotients of f8e8m0fnu values span 2^-254 .. 2^254:
      // f32 would flush the smallest to zero, which encodes as NaN, where
      // the evaluator's double keeps them (code 0). f64 holds them all.
      const int x64 = b_.Value(KOpKind::kConvert, ElementType::kF64, x);
      const int y64 = b_.Value(KOpKind::kConvert, ElementType::kF64, y);
      return codec.Encode(type, FBinary(opcode, ElementType::kF64, x64, y64), ElementType::kF64,
                          true);
    }
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

int ElementEmitter::LaneIndexCompare(int index, ComparisonDirection direction, int64_t bound,
                                     ElementType type) {
  if (IsComplex(type) || IsMiniFloat(type) || !b_.VariesInnermost(index)) return -1;
  const int width = IsPred(type) ? 8 : BitWidth(LaneComputeType(type));
  ElementType lane_type;
  switch (width) {
    case 8: lane_type = ElementType::kS8; break;
    case 16: lane_type = ElementType::kS16; break;
    case 32: lane_type = ElementType::kS32; break;
    case 64: lane_type = ElementType::kS64; break;
    default: return -1;
  }
  const int64_t high = width == 64 ? std::numeric_limits<int64_t>::max()
                                   : (int64_t{1} << (width - 1)) - 1;
  const int64_t low = -high - 1;
  if (b_.Low(index) < low || b_.High(index) > high || bound < low || bound > high) return -1;
  KOp op;
  op.kind = KOpKind::kCompare;
  op.type = ElementType::kPred;
  op.operand_type = lane_type;
  op.direction = direction;
  op.comparison = ComparisonType::kSigned;
  op.a = b_.Value(KOpKind::kFromIndex, lane_type, index);
  op.b = b_.Value(KOpKind::kFromIndex, lane_type, b_.Const(bound));
  return b_.Add(op);
}

absl::StatusOr<int> ElementEmitter::EmitPad(const Instruction& instr, const Index& index) {
  const Instruction& operand = *instr.operand(0);
  const ElementType type = instr.shape().element_type();
  XJIT_ASSIGN_OR_RETURN(int padding_value, Emit(*instr.operand(1), {}));
  const PaddingConfig& padding = instr.attrs().padding;
  if (operand.shape().element_count() == 0) return padding_value;
  int inside = b_.Const(1);
  // Per-element conditions (LaneIndexCompare) of dimensions without
  // interior padding that move along the innermost loop; -1 when none.
  int lane_inside = -1;
  Index operand_index(index.size());
  for (size_t d = 0; d < index.size(); ++d) {
    const int64_t period = padding[d].interior + 1;
    const int64_t size = operand.shape().dimensions(d);
    if (period == 1) {
      // Inside when low <= index < low + size; the operand is read at
      // index - low, guarded (it is used only inside).
      const int64_t low = padding[d].low;
      operand_index[d] = b_.IGuardClamp(b_.ISub(index[d], b_.Const(low)), 0, size - 1);
      const bool test_low = b_.Low(index[d]) < low;
      const bool test_high = b_.High(index[d]) >= low + size;
      if (!test_low && !test_high) continue;
      const int ge =
          test_low ? LaneIndexCompare(index[d], ComparisonDirection::kGe, low, type) : -2;
      const int lt =
          test_high ? LaneIndexCompare(index[d], ComparisonDirection::kLt, low + size, type)
                    : -2;
      if (ge != -1 && lt != -1) {
        for (int p : {ge, lt}) {
          if (p < 0) continue;
          lane_inside =
              lane_inside < 0 ? p : FBinary(Opcode::kAnd, ElementType::kPred, lane_inside, p);
        }
        continue;
      }
      const int in_d = b_.IAnd(b_.IGe(index[d], b_.Const(low)),
                               b_.ILt(index[d], b_.Const(low + size)));
      inside = b_.IAnd(inside, in_d);
      continue;
    }
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
  if (lane_inside < 0) return Select(inside, value, padding_value, type);
  if (!b_.IsConst(inside, 1)) {
    lane_inside = FBinary(Opcode::kAnd, ElementType::kPred, lane_inside,
                          b_.Value(KOpKind::kFromIndex, ElementType::kPred, inside));
  }
  return SelectValue(lane_inside, value, padding_value, type);
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
    // Guarded: the part is selected only where the index is inside it.
    operand_index[dim] =
        b_.IGuardClamp(b_.ISub(index[dim], b_.Const(part_start)), 0, size - 1);
    XJIT_ASSIGN_OR_RETURN(int value, Emit(operand, operand_index));
    if (result < 0) {
      result = value;
    } else {
      // Here `result` holds the parts after k.
      const int64_t next_start = parts[k + 1].second;
      const ElementType type = instr.shape().element_type();
      const int lane_before =
          LaneIndexCompare(index[dim], ComparisonDirection::kLt, next_start, type);
      result = lane_before >= 0
                   ? SelectValue(lane_before, value, result, type)
                   : Select(b_.ILt(index[dim], b_.Const(next_start)), value, result, type);
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

}  // namespace xjit::jit::fusion_internal
