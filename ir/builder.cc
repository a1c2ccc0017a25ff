// The C++ builder (see builder.h for the contract). Each free function checks
// what it must index before indexing (so malformed arguments become errors,
// never crashes), lowers the seed's sugar to HLO instructions, and hands each
// instruction to Builder::AddInstruction, which infers or checks its shape.
#include "ir/builder.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <numeric>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/float_format.h"
#include "ir/opcode.h"
#include "ir/shape_inference/shape_inference.h"

namespace xjit {

struct Builder::State {
  std::unique_ptr<Module> module;
  absl::Status first_error;
  absl::flat_hash_set<std::string> computation_names;
  bool built = false;

  std::string UniqueComputationName(absl::string_view base) {
    std::string name(base.empty() ? "computation" : base);
    if (computation_names.insert(name).second) return name;
    for (int64_t i = 1;; ++i) {
      std::string candidate = absl::StrCat(name, ".", i);
      if (computation_names.insert(candidate).second) return candidate;
    }
  }
};

namespace {

const Shape& EmptyTupleShape() {
  static const Shape* shape = new Shape(Shape::Tuple({}));
  return *shape;
}

bool IsIdentifier(absl::string_view name) {
  if (name.empty()) return false;
  if (!(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return false;
  for (char c : name) {
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-')) {
      return false;
    }
  }
  return true;
}

// Gives every array in `shape` the default layout where it has none.
Shape WithLayouts(Shape shape) {
  if (shape.IsTuple()) {
    for (Shape& element : *shape.mutable_tuple_shapes()) element = WithLayouts(element);
  } else if (shape.IsArray() && !shape.has_layout()) {
    shape.set_layout(Layout::Default(shape.rank()));
  }
  return shape;
}

// Opcodes whose result shape is an argument of the operation rather than a
// function of the operands: the builder's shape is kept (InferShape only
// checks it).
bool ShapeIsGiven(Opcode opcode) {
  switch (opcode) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kIota:
    case Opcode::kReshape:
    case Opcode::kDynamicReshape:
    case Opcode::kBroadcast:
    case Opcode::kConvert:
    case Opcode::kBitcast:
    case Opcode::kBitcastConvert:
    case Opcode::kCustomCall:
    case Opcode::kInfeed:
    case Opcode::kRecv:
    case Opcode::kRng:
    case Opcode::kRngBitGenerator:
    case Opcode::kRngGetAndUpdateState:
    case Opcode::kFusion:
    case Opcode::kStochasticConvert:
    case Opcode::kAllGather:
    case Opcode::kReduceScatter:
      return true;
    default:
      return false;
  }
}

std::string DimsToString(absl::Span<const int64_t> dims) {
  return absl::StrCat("{", absl::StrJoin(dims, ","), "}");
}

// An array shape like `like` (dimensions, dynamic flags) with another type.
Shape ArrayLike(const Shape& like, ElementType type, absl::Span<const int64_t> dims) {
  Shape shape = Shape::Array(type, dims);
  if (like.IsArray() && like.rank() == static_cast<int64_t>(dims.size())) {
    for (int64_t i = 0; i < like.rank(); ++i) {
      shape.set_dynamic_dimension(i, like.is_dynamic_dimension(i));
    }
  }
  return shape;
}

Builder* BuilderOf(std::initializer_list<Op> ops) {
  for (const Op& op : ops) {
    if (op.builder() != nullptr) return op.builder();
  }
  return nullptr;
}

Builder* BuilderOf(absl::Span<const Op> ops) {
  for (const Op& op : ops) {
    if (op.builder() != nullptr) return op.builder();
  }
  return nullptr;
}

bool AllValid(absl::Span<const Op> ops) {
  for (const Op& op : ops) {
    if (!op.valid()) return false;
  }
  return true;
}

// Explicit (low, high) padding for each spatial dimension, as Padding::kSame
// or kValid describe it: SAME pads so that the output has ceil(in / stride)
// elements, splitting the total with the smaller half low.
std::vector<std::pair<int64_t, int64_t>> MakePadding(absl::Span<const int64_t> input_dims,
                                                     absl::Span<const int64_t> window_dims,
                                                     absl::Span<const int64_t> strides,
                                                     Padding padding) {
  std::vector<std::pair<int64_t, int64_t>> result(input_dims.size(), {0, 0});
  if (padding == Padding::kValid) return result;
  for (size_t i = 0; i < input_dims.size(); ++i) {
    const int64_t stride = std::max<int64_t>(strides[i], 1);
    const int64_t output = (input_dims[i] + stride - 1) / stride;
    const int64_t total =
        std::max<int64_t>((output - 1) * stride + window_dims[i] - input_dims[i], 0);
    result[i] = {total / 2, total - total / 2};
  }
  return result;
}

Op Unary(absl::string_view name, Opcode opcode, Op operand) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  return b->AddInstruction(name, opcode, Shape(), {operand}, {});
}

// Reshapes away the size-1 dimensions of `operand` that `mapping` sends to
// larger output dimensions, then broadcasts into `out_dims`. `mapping[i]` is
// the output dimension of operand dimension i.
Op BroadcastTo(absl::string_view name, Op operand, absl::Span<const int64_t> out_dims,
               absl::Span<const int64_t> mapping) {
  Builder* b = operand.builder();
  const Shape& shape = operand.shape();
  std::vector<int64_t> kept_dims, kept_mapping;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.dimensions(i) == out_dims[mapping[i]]) {
      kept_dims.push_back(shape.dimensions(i));
      kept_mapping.push_back(mapping[i]);
    } else if (shape.dimensions(i) != 1) {
      return b->ReportError(
          name, absl::StrCat("cannot broadcast dimension ", i, " of size ", shape.dimensions(i),
                             " to size ", out_dims[mapping[i]]));
    }
  }
  if (static_cast<int64_t>(out_dims.size()) == shape.rank() &&
      std::equal(out_dims.begin(), out_dims.end(), shape.dimensions().begin())) {
    return operand;
  }
  Op source = operand;
  if (static_cast<int64_t>(kept_dims.size()) != shape.rank()) {
    InstructionAttributes reshape_attrs;
    source =
        b->AddInstruction(name, Opcode::kReshape, Shape::Array(shape.element_type(), kept_dims),
                          {operand}, reshape_attrs);
  }
  InstructionAttributes attrs;
  attrs.dimensions = kept_mapping;
  attrs.has_dimensions = true;
  return b->AddInstruction(name, Opcode::kBroadcast, Shape::Array(shape.element_type(), out_dims),
                           {source}, attrs);
}

// Makes the operands of a binary operation the same dimensions, as 003
// describes: the lower-rank operand is mapped by broadcast_dimensions (or is
// a scalar), and size-1 dimensions stretch. Mismatches that cannot be
// resolved are left to shape inference, which names them.
bool ImplicitBroadcast(absl::string_view name, Op* lhs, Op* rhs,
                       absl::Span<const int64_t> broadcast_dimensions) {
  Builder* b = lhs->builder();
  const Shape& ls = lhs->shape();
  const Shape& rs = rhs->shape();
  if (!ls.IsArray() || !rs.IsArray()) return true;
  if (ls.rank() == rs.rank() && broadcast_dimensions.empty()) {
    std::vector<int64_t> out(ls.dimensions().begin(), ls.dimensions().end());
    bool changed = false;
    for (int64_t i = 0; i < ls.rank(); ++i) {
      if (ls.dimensions(i) == rs.dimensions(i)) continue;
      if (ls.dimensions(i) == 1) {
        out[i] = rs.dimensions(i);
        changed = true;
      } else if (rs.dimensions(i) == 1) {
        changed = true;
      } else {
        return true;  // Shape inference reports the mismatch.
      }
    }
    if (!changed) return true;
    std::vector<int64_t> identity(ls.rank());
    std::iota(identity.begin(), identity.end(), 0);
    *lhs = BroadcastTo(name, *lhs, out, identity);
    *rhs = BroadcastTo(name, *rhs, out, identity);
    return lhs->valid() && rhs->valid();
  }
  const bool lhs_is_lower = ls.rank() < rs.rank();
  Op* lo = lhs_is_lower ? lhs : rhs;
  Op* hi = lhs_is_lower ? rhs : lhs;
  const Shape& los = lo->shape();
  const Shape& his = hi->shape();
  std::vector<int64_t> mapping(broadcast_dimensions.begin(), broadcast_dimensions.end());
  if (mapping.empty() && los.rank() != 0) {
    b->ReportError(name, absl::StrCat("operands of different ranks (", ls.ToString(false), " and ",
                                      rs.ToString(false), ") need broadcast_dimensions"));
    return false;
  }
  if (static_cast<int64_t>(mapping.size()) != los.rank()) {
    b->ReportError(name, absl::StrCat("broadcast_dimensions ", DimsToString(mapping),
                                      " must have one entry per dimension of the lower-rank "
                                      "operand ",
                                      los.ToString(false)));
    return false;
  }
  std::vector<int64_t> out(his.dimensions().begin(), his.dimensions().end());
  for (size_t i = 0; i < mapping.size(); ++i) {
    const int64_t d = mapping[i];
    if (d < 0 || d >= his.rank() || (i > 0 && d <= mapping[i - 1])) {
      b->ReportError(name, absl::StrCat("broadcast_dimensions ", DimsToString(mapping),
                                        " must be increasing dimensions of ", his.ToString(false)));
      return false;
    }
    const int64_t lo_size = los.dimensions(i);
    if (lo_size == his.dimensions(d) || lo_size == 1) continue;
    if (his.dimensions(d) == 1) {
      out[d] = lo_size;
    } else {
      b->ReportError(name, absl::StrCat("dimension ", i, " of ", los.ToString(false), " (size ",
                                        lo_size, ") does not match dimension ", d, " of ",
                                        his.ToString(false), " (size ", his.dimensions(d), ")"));
      return false;
    }
  }
  *lo = BroadcastTo(name, *lo, out, mapping);
  std::vector<int64_t> identity(his.rank());
  std::iota(identity.begin(), identity.end(), 0);
  *hi = BroadcastTo(name, *hi, out, identity);
  return lo->valid() && hi->valid();
}

Op Binary(absl::string_view name, Opcode opcode, Op lhs, Op rhs,
          absl::Span<const int64_t> broadcast_dimensions,
          const InstructionAttributes& attrs = InstructionAttributes()) {
  Builder* b = BuilderOf({lhs, rhs});
  if (b == nullptr) return Op();
  if (lhs.valid() && rhs.valid() && lhs.builder() == rhs.builder()) {
    if (!ImplicitBroadcast(name, &lhs, &rhs, broadcast_dimensions)) return Op(b, nullptr);
  }
  return b->AddInstruction(name, opcode, Shape(), {lhs, rhs}, attrs);
}

// A scalar operand broadcast to `like`'s dimensions (select's pred, clamp's
// bounds); other operands unchanged.
Op BroadcastScalarTo(absl::string_view name, Op scalar, const Shape& like) {
  if (!scalar.valid() || !scalar.shape().IsScalar() || !like.IsArray() || like.rank() == 0) {
    return scalar;
  }
  std::vector<int64_t> dims(like.dimensions().begin(), like.dimensions().end());
  return BroadcastTo(name, scalar, dims, {});
}

Window MakeWindow(absl::Span<const int64_t> sizes, absl::Span<const int64_t> strides,
                  absl::Span<const std::pair<int64_t, int64_t>> padding,
                  absl::Span<const int64_t> base_dilations,
                  absl::Span<const int64_t> window_dilations) {
  Window window(sizes.size());
  for (size_t i = 0; i < sizes.size(); ++i) {
    window[i].size = sizes[i];
    if (i < strides.size()) window[i].stride = strides[i];
    if (i < padding.size()) {
      window[i].padding_low = padding[i].first;
      window[i].padding_high = padding[i].second;
    }
    if (i < base_dilations.size()) window[i].base_dilation = base_dilations[i];
    if (i < window_dilations.size()) window[i].window_dilation = window_dilations[i];
  }
  return window;
}

// Checks that each named list has `n` entries (empty allowed where `optional`).
bool CheckLengths(Builder* b, absl::string_view name, int64_t n,
                  std::initializer_list<std::pair<absl::string_view, int64_t>> lists,
                  bool allow_empty) {
  for (const auto& [what, size] : lists) {
    if (size == n || (allow_empty && size == 0)) continue;
    b->ReportError(name, absl::StrCat(what, " has ", size, " entries but ", n, " are needed"));
    return false;
  }
  return true;
}

Computation* ScalarBinaryComputation(Builder* builder, absl::string_view name, ElementType type,
                                     Op (*op)(Op, Op, absl::Span<const int64_t>)) {
  if (builder == nullptr) return nullptr;
  Builder sub = builder->CreateSubBuilder(name);
  Op a = Parameter(&sub, 0, Shape::Scalar(type), "lhs");
  Op b = Parameter(&sub, 1, Shape::Scalar(type), "rhs");
  return sub.BuildSubComputation(op(a, b, {}));
}

Computation* ScalarComparator(Builder* builder, absl::string_view name,
                              absl::Span<const ElementType> types, ComparisonDirection direction) {
  if (builder == nullptr) return nullptr;
  Builder sub = builder->CreateSubBuilder(name);
  std::vector<Op> params;
  for (size_t i = 0; i < types.size(); ++i) {
    params.push_back(Parameter(&sub, 2 * i, Shape::Scalar(types[i]), absl::StrCat("lhs.", i)));
    params.push_back(Parameter(&sub, 2 * i + 1, Shape::Scalar(types[i]), absl::StrCat("rhs.", i)));
  }
  if (params.empty()) {
    sub.ReportError(name, "a comparator needs at least one operand type");
    return sub.BuildSubComputation();
  }
  return sub.BuildSubComputation(Compare(params[0], params[1], {}, direction));
}

}  // namespace

// ---------------------------------------------------------------------------
// Op and Builder

const Shape& Op::shape() const {
  return instruction_ != nullptr ? instruction_->shape() : EmptyTupleShape();
}

Builder::Builder(absl::string_view name) : state_(std::make_shared<State>()) {
  state_->module = std::make_unique<Module>(std::string(name.empty() ? "module" : name));
  name_ = state_->UniqueComputationName(name);
  computation_ = std::make_unique<Computation>(name_);
}

Builder::Builder(absl::string_view name, std::shared_ptr<State> state, bool is_sub)
    : state_(std::move(state)), is_sub_(is_sub) {
  name_ = state_->UniqueComputationName(name);
  computation_ = std::make_unique<Computation>(name_);
}

Builder::~Builder() = default;

Builder Builder::CreateSubBuilder(absl::string_view name) {
  return Builder(name, state_, /*is_sub=*/true);
}

absl::Status Builder::first_error() const { return state_->first_error; }
bool Builder::has_error() const { return !state_->first_error.ok(); }

void Builder::set_replica_count(int64_t n) {
  if (state_->module != nullptr) state_->module->set_replica_count(n);
}
void Builder::set_num_partitions(int64_t n) {
  if (state_->module != nullptr) state_->module->set_num_partitions(n);
}

absl::StatusOr<Shape> Builder::GetShape(Op op) const {
  if (!op.valid()) {
    if (has_error()) return first_error();
    return absl::InvalidArgumentError("GetShape: invalid op");
  }
  return op.shape();
}

Op Builder::ReportError(absl::Status status) {
  if (state_->first_error.ok()) state_->first_error = std::move(status);
  return Op(this, nullptr);
}

Op Builder::ReportError(absl::string_view op_name, absl::string_view message) {
  return ReportError(
      absl::InvalidArgumentError(absl::StrCat("builder '", name_, "': ", op_name, ": ", message)));
}

std::string Builder::UniqueInstructionName(absl::string_view base) {
  for (;;) {
    std::string name = absl::StrCat(base, ".", next_id_++);
    if (used_names_.insert(name).second) return name;
  }
}

Op Builder::AddInstruction(absl::string_view op_name, Opcode opcode, Shape shape,
                           absl::Span<const Op> operands, const InstructionAttributes& attrs,
                           std::vector<Computation*> called, std::vector<OpaqueAttribute> opaque) {
  if (has_error()) return Op(this, nullptr);
  if (finished_ || computation_ == nullptr) {
    return ReportError(op_name, "the builder's computation is already built");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i].valid()) {
      return ReportError(op_name, absl::StrCat("operand ", i, " is not a valid op"));
    }
    if (operands[i].builder() != this) {
      return ReportError(
          op_name, absl::StrCat("operand ", i, " (", operands[i].instruction()->name(),
                                ") belongs to builder '", operands[i].builder()->name(), "'"));
    }
  }
  for (size_t i = 0; i < called.size(); ++i) {
    if (called[i] == nullptr) {
      return ReportError(op_name, absl::StrCat("called computation ", i, " is null"));
    }
  }
  auto instruction = std::make_unique<Instruction>(opcode, WithLayouts(std::move(shape)));
  instruction->set_name(UniqueInstructionName(OpcodeName(opcode)));
  instruction->set_attrs(attrs);
  instruction->set_called_computations(std::move(called));
  *instruction->mutable_opaque_attributes() = std::move(opaque);
  for (const Op& operand : operands) instruction->AppendOperand(operand.instruction());
  Instruction* raw = computation_->AddInstruction(std::move(instruction));
  absl::StatusOr<Shape> inferred = InferShape(*raw);
  if (!inferred.ok()) {
    std::string name = raw->name();
    computation_->RemoveInstruction(raw);
    return ReportError(absl::Status(inferred.status().code(),
                                    absl::StrCat("builder '", name_, "': ", op_name, " (", name,
                                                 "): ", inferred.status().message())));
  }
  if (!ShapeIsGiven(opcode)) *raw->mutable_shape() = WithLayouts(*std::move(inferred));
  return Op(this, raw);
}

Op Builder::AddConstant(absl::string_view op_name, Literal literal) {
  if (has_error()) return Op(this, nullptr);
  if (finished_ || computation_ == nullptr) {
    return ReportError(op_name, "the builder's computation is already built");
  }
  auto instruction = std::make_unique<Instruction>(Opcode::kConstant, WithLayouts(literal.shape()));
  instruction->set_name(UniqueInstructionName("constant"));
  instruction->set_literal(std::move(literal));
  Instruction* raw = computation_->AddInstruction(std::move(instruction));
  absl::StatusOr<Shape> inferred = InferShape(*raw);
  if (!inferred.ok()) {
    std::string name = raw->name();
    computation_->RemoveInstruction(raw);
    return ReportError(absl::Status(inferred.status().code(),
                                    absl::StrCat("builder '", name_, "': ", op_name, " (", name,
                                                 "): ", inferred.status().message())));
  }
  return Op(this, raw);
}

Op Builder::AddParameter(int64_t number, const Shape& shape, absl::string_view name) {
  if (has_error()) return Op(this, nullptr);
  if (finished_ || computation_ == nullptr) {
    return ReportError("Parameter", "the builder's computation is already built");
  }
  if (number < 0) {
    return ReportError("Parameter", absl::StrCat("negative parameter number ", number));
  }
  if (number < computation_->parameter_count() && computation_->parameter(number) != nullptr) {
    return ReportError("Parameter",
                       absl::StrCat("parameter number ", number, " is already defined (",
                                    computation_->parameter(number)->name(), ")"));
  }
  auto instruction = std::make_unique<Instruction>(Opcode::kParameter, WithLayouts(shape));
  std::string instruction_name(name);
  if (!IsIdentifier(instruction_name) || !used_names_.insert(instruction_name).second) {
    instruction_name = UniqueInstructionName("parameter");
  }
  instruction->set_name(instruction_name);
  instruction->mutable_attrs()->parameter_number = number;
  Instruction* raw = computation_->AddInstruction(std::move(instruction));
  return Op(this, raw);
}

Computation* Builder::Finish(Op root, bool has_root, absl::string_view what) {
  if (has_error()) return nullptr;
  if (finished_) {
    ReportError(what, "the computation is already built");
    return nullptr;
  }
  if (state_->module == nullptr) {
    ReportError(what, "the module is already built");
    return nullptr;
  }
  Instruction* root_instruction = nullptr;
  if (has_root) {
    if (!root.valid() || root.builder() != this) {
      ReportError(what, "the root is not an op of this builder");
      return nullptr;
    }
    root_instruction = root.instruction();
  } else {
    if (computation_->instructions().empty()) {
      ReportError(what, "the computation has no instructions");
      return nullptr;
    }
    root_instruction = computation_->instructions().back().get();
  }
  for (int64_t i = 0; i < computation_->parameter_count(); ++i) {
    if (computation_->parameter(i) == nullptr) {
      ReportError(what,
                  absl::StrCat("parameter ", i, " is missing (parameter numbers must be dense)"));
      return nullptr;
    }
  }
  computation_->set_root(root_instruction);
  finished_ = true;
  return state_->module->AddComputation(std::move(computation_));
}

absl::StatusOr<std::unique_ptr<Module>> Builder::Build(Op root) {
  if (is_sub_)
    return absl::FailedPreconditionError("Build: use BuildSubComputation on a sub-builder");
  Computation* entry = Finish(root, /*has_root=*/true, "Build");
  if (entry == nullptr) return first_error();
  state_->module->set_entry(entry);
  return std::move(state_->module);
}

absl::StatusOr<std::unique_ptr<Module>> Builder::Build() {
  if (is_sub_)
    return absl::FailedPreconditionError("Build: use BuildSubComputation on a sub-builder");
  Computation* entry = Finish(Op(), /*has_root=*/false, "Build");
  if (entry == nullptr) return first_error();
  state_->module->set_entry(entry);
  return std::move(state_->module);
}

Computation* Builder::BuildSubComputation(Op root) {
  if (!is_sub_) {
    ReportError("BuildSubComputation", "only a sub-builder builds a sub-computation");
    return nullptr;
  }
  return Finish(root, /*has_root=*/true, "BuildSubComputation");
}

Computation* Builder::BuildSubComputation() {
  if (!is_sub_) {
    ReportError("BuildSubComputation", "only a sub-builder builds a sub-computation");
    return nullptr;
  }
  return Finish(Op(), /*has_root=*/false, "BuildSubComputation");
}

// ---------------------------------------------------------------------------
// Parameters and constants

Op Parameter(Builder* builder, int64_t parameter_number, const Shape& shape,
             absl::string_view name) {
  if (builder == nullptr) return Op();
  return builder->AddParameter(parameter_number, shape, name);
}

Op ConstantLiteral(Builder* builder, const Literal& literal) {
  if (builder == nullptr) return Op();
  return builder->AddConstant("ConstantLiteral", literal);
}

namespace {

Op ScalarConstant(Builder* builder, absl::string_view name, ElementType type, int which) {
  // which: 0 zero, 1 one, 2 min, 3 max.
  if (builder == nullptr) return Op();
  if (!IsArrayElementType(type)) {
    return builder->ReportError(name,
                                absl::StrCat("not an array element type: ", ElementTypeName(type)));
  }
  Literal literal(Shape::Scalar(type));
  const int64_t index[] = {0};
  absl::Span<const int64_t> scalar_index(index, 0);
  if (IsFloat(type) || IsComplex(type)) {
    double value = which == 1 ? 1.0 : 0.0;
    if (which >= 2) {
      const ElementType real = IsComplex(type) ? ComplexComponentType(type) : type;
      const double big =
          FloatHasInfinity(real) ? std::numeric_limits<double>::infinity() : FloatMax(real);
      value = which == 2 ? -big : big;
      if (which == 2 && type == ElementType::kF8E8M0FNU) value = FloatMinNormal(real);
    }
    if (IsComplex(type)) {
      literal.SetComplex(scalar_index, std::complex<double>(value, 0));
    } else {
      literal.SetDouble(scalar_index, value);
    }
  } else if (IsPred(type)) {
    literal.SetInt(scalar_index, which == 1 || which == 3 ? 1 : 0);
  } else {
    const int bits = BitWidth(type);
    uint64_t value = which == 1 ? 1 : 0;
    if (which == 2 && IsSignedInteger(type)) value = uint64_t{1} << (bits - 1);
    if (which == 3) {
      value = bits == 64 ? ~uint64_t{0} : (uint64_t{1} << bits) - 1;
      if (IsSignedInteger(type)) value >>= 1;
    }
    literal.SetBits(scalar_index, value);
  }
  return builder->AddConstant(name, std::move(literal));
}

}  // namespace

Op Zero(Builder* builder, ElementType type) { return ScalarConstant(builder, "Zero", type, 0); }
Op One(Builder* builder, ElementType type) { return ScalarConstant(builder, "One", type, 1); }
Op MinValue(Builder* builder, ElementType type) {
  return ScalarConstant(builder, "MinValue", type, 2);
}
Op MaxValue(Builder* builder, ElementType type) {
  return ScalarConstant(builder, "MaxValue", type, 3);
}

Op Iota(Builder* builder, const Shape& shape, int64_t iota_dimension) {
  if (builder == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.iota_dimension = iota_dimension;
  return builder->AddInstruction("Iota", Opcode::kIota, shape, {}, attrs);
}

Op Iota(Builder* builder, ElementType type, int64_t size) {
  return Iota(builder, Shape::Array(type, {size}), 0);
}

// ---------------------------------------------------------------------------
// Element-wise

Op Abs(Op x) { return Unary("Abs", Opcode::kAbs, x); }
Op Acos(Op x) { return Unary("Acos", Opcode::kAcos, x); }
Op Acosh(Op x) { return Unary("Acosh", Opcode::kAcosh, x); }
Op Asin(Op x) { return Unary("Asin", Opcode::kAsin, x); }
Op Asinh(Op x) { return Unary("Asinh", Opcode::kAsinh, x); }
Op Atan(Op x) { return Unary("Atan", Opcode::kAtan, x); }
Op Atanh(Op x) { return Unary("Atanh", Opcode::kAtanh, x); }
Op Cbrt(Op x) { return Unary("Cbrt", Opcode::kCbrt, x); }
Op Ceil(Op x) { return Unary("Ceil", Opcode::kCeil, x); }
Op Clz(Op x) { return Unary("Clz", Opcode::kClz, x); }
Op Cos(Op x) { return Unary("Cos", Opcode::kCos, x); }
Op Cosh(Op x) { return Unary("Cosh", Opcode::kCosh, x); }
Op Erf(Op x) { return Unary("Erf", Opcode::kErf, x); }
Op Exp(Op x) { return Unary("Exp", Opcode::kExp, x); }
Op Expm1(Op x) { return Unary("Expm1", Opcode::kExpm1, x); }
Op Floor(Op x) { return Unary("Floor", Opcode::kFloor, x); }
Op Imag(Op x) { return Unary("Imag", Opcode::kImag, x); }
Op IsFinite(Op x) { return Unary("IsFinite", Opcode::kIsFinite, x); }
Op Log(Op x) { return Unary("Log", Opcode::kLog, x); }
Op Log1p(Op x) { return Unary("Log1p", Opcode::kLog1p, x); }
Op Logistic(Op x) { return Unary("Logistic", Opcode::kLogistic, x); }
Op Neg(Op x) { return Unary("Neg", Opcode::kNegate, x); }
Op Not(Op x) { return Unary("Not", Opcode::kNot, x); }
Op PopulationCount(Op x) { return Unary("PopulationCount", Opcode::kPopulationCount, x); }
Op Real(Op x) { return Unary("Real", Opcode::kReal, x); }
Op Round(Op x) { return Unary("Round", Opcode::kRoundNearestAfz, x); }
Op RoundNearestEven(Op x) { return Unary("RoundNearestEven", Opcode::kRoundNearestEven, x); }
Op Rsqrt(Op x) { return Unary("Rsqrt", Opcode::kRsqrt, x); }
Op Sign(Op x) { return Unary("Sign", Opcode::kSign, x); }
Op Sin(Op x) { return Unary("Sin", Opcode::kSin, x); }
Op Sinh(Op x) { return Unary("Sinh", Opcode::kSinh, x); }
Op Sqrt(Op x) { return Unary("Sqrt", Opcode::kSqrt, x); }
Op Tan(Op x) { return Unary("Tan", Opcode::kTan, x); }
Op Tanh(Op x) { return Unary("Tanh", Opcode::kTanh, x); }
Op Copy(Op x) { return Unary("Copy", Opcode::kCopy, x); }
Op OptimizationBarrier(Op x) {
  return Unary("OptimizationBarrier", Opcode::kOptimizationBarrier, x);
}

#define XJIT_BUILDER_BINARY(Name, opcode)                                   \
  Op Name(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions) { \
    return Binary(#Name, Opcode::opcode, lhs, rhs, broadcast_dimensions);   \
  }
XJIT_BUILDER_BINARY(Add, kAdd)
XJIT_BUILDER_BINARY(Sub, kSubtract)
XJIT_BUILDER_BINARY(Mul, kMultiply)
XJIT_BUILDER_BINARY(Div, kDivide)
XJIT_BUILDER_BINARY(Pow, kPower)
XJIT_BUILDER_BINARY(Rem, kRemainder)
XJIT_BUILDER_BINARY(Max, kMaximum)
XJIT_BUILDER_BINARY(Min, kMinimum)
XJIT_BUILDER_BINARY(And, kAnd)
XJIT_BUILDER_BINARY(Or, kOr)
XJIT_BUILDER_BINARY(Xor, kXor)
XJIT_BUILDER_BINARY(ShiftLeft, kShiftLeft)
XJIT_BUILDER_BINARY(ShiftRightArithmetic, kShiftRightArithmetic)
XJIT_BUILDER_BINARY(ShiftRightLogical, kShiftRightLogical)
XJIT_BUILDER_BINARY(Atan2, kAtan2)
XJIT_BUILDER_BINARY(Complex, kComplex)
#undef XJIT_BUILDER_BINARY

Op Compare(Op lhs, Op rhs, absl::Span<const int64_t> broadcast_dimensions,
           ComparisonDirection direction, ComparisonType type) {
  InstructionAttributes attrs;
  attrs.comparison_direction = direction;
  attrs.comparison_type = type;
  return Binary(absl::StrCat("Compare ", ComparisonDirectionName(direction)), Opcode::kCompare, lhs,
                rhs, broadcast_dimensions, attrs);
}

namespace {
Op TotalOrderCompare(Op lhs, Op rhs, absl::Span<const int64_t> dims, ComparisonDirection d) {
  const bool is_float = lhs.valid() && lhs.shape().IsArray() && IsFloat(lhs.shape().element_type());
  return Compare(lhs, rhs, dims, d,
                 is_float ? ComparisonType::kTotalOrder : ComparisonType::kDefault);
}
}  // namespace

Op Eq(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kEq);
}
Op Ne(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kNe);
}
Op Ge(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kGe);
}
Op Gt(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kGt);
}
Op Le(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kLe);
}
Op Lt(Op l, Op r, absl::Span<const int64_t> d) {
  return Compare(l, r, d, ComparisonDirection::kLt);
}
Op EqTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kEq);
}
Op NeTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kNe);
}
Op GeTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kGe);
}
Op GtTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kGt);
}
Op LeTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kLe);
}
Op LtTotalOrder(Op l, Op r, absl::Span<const int64_t> d) {
  return TotalOrderCompare(l, r, d, ComparisonDirection::kLt);
}

Op Select(Op pred, Op on_true, Op on_false) {
  Builder* b = BuilderOf({pred, on_true, on_false});
  if (b == nullptr) return Op();
  if (AllValid({pred, on_true, on_false}))
    pred = BroadcastScalarTo("Select", pred, on_true.shape());
  return b->AddInstruction("Select", Opcode::kSelect, Shape(), {pred, on_true, on_false}, {});
}

Op Clamp(Op min, Op operand, Op max) {
  Builder* b = BuilderOf({min, operand, max});
  if (b == nullptr) return Op();
  if (AllValid({min, operand, max})) {
    min = BroadcastScalarTo("Clamp", min, operand.shape());
    max = BroadcastScalarTo("Clamp", max, operand.shape());
  }
  return b->AddInstruction("Clamp", Opcode::kClamp, Shape(), {min, operand, max}, {});
}

// ---------------------------------------------------------------------------
// Shape manipulation

Op Broadcast(Op operand, absl::Span<const int64_t> broadcast_sizes) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid())
    return b->AddInstruction("Broadcast", Opcode::kBroadcast, Shape(), {operand}, {});
  const Shape& shape = operand.shape();
  if (!shape.IsArray()) return b->ReportError("Broadcast", "the operand must be an array");
  std::vector<int64_t> dims(broadcast_sizes.begin(), broadcast_sizes.end());
  dims.insert(dims.end(), shape.dimensions().begin(), shape.dimensions().end());
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    attrs.dimensions.push_back(static_cast<int64_t>(broadcast_sizes.size()) + i);
  }
  Shape out = Shape::Array(shape.element_type(), dims);
  for (int64_t i = 0; i < shape.rank(); ++i) {
    out.set_dynamic_dimension(broadcast_sizes.size() + i, shape.is_dynamic_dimension(i));
  }
  return b->AddInstruction("Broadcast", Opcode::kBroadcast, out, {operand}, attrs);
}

Op BroadcastInDim(Op operand, absl::Span<const int64_t> out_dim_size,
                  absl::Span<const int64_t> broadcast_dimensions) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid())
    return b->AddInstruction("BroadcastInDim", Opcode::kBroadcast, Shape(), {operand}, {});
  const Shape& shape = operand.shape();
  if (!shape.IsArray()) return b->ReportError("BroadcastInDim", "the operand must be an array");
  if (static_cast<int64_t>(broadcast_dimensions.size()) != shape.rank()) {
    return b->ReportError(
        "BroadcastInDim",
        absl::StrCat("broadcast_dimensions ", DimsToString(broadcast_dimensions),
                     " must have one entry per operand dimension (rank ", shape.rank(), ")"));
  }
  for (size_t i = 0; i < broadcast_dimensions.size(); ++i) {
    const int64_t d = broadcast_dimensions[i];
    if (d < 0 || d >= static_cast<int64_t>(out_dim_size.size())) {
      return b->ReportError("BroadcastInDim",
                            absl::StrCat("broadcast dimension ", d, " is out of range for ",
                                         out_dim_size.size(), " output dimensions"));
    }
  }
  for (int64_t size : out_dim_size) {
    if (size < 0) return b->ReportError("BroadcastInDim", "negative output dimension size");
  }
  // A shape-preserving broadcast is still an instruction, as XlaBuilder emits.
  const std::vector<int64_t> out(out_dim_size.begin(), out_dim_size.end());
  bool needs_reshape = false;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (shape.dimensions(i) != out[broadcast_dimensions[i]]) needs_reshape = true;
  }
  if (needs_reshape) return BroadcastTo("BroadcastInDim", operand, out, broadcast_dimensions);
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions.assign(broadcast_dimensions.begin(), broadcast_dimensions.end());
  return b->AddInstruction("BroadcastInDim", Opcode::kBroadcast,
                           Shape::Array(shape.element_type(), out), {operand}, attrs);
}

Op Reshape(Op operand, absl::Span<const int64_t> new_sizes) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  const ElementType type = operand.valid() ? operand.shape().element_type() : ElementType::kF32;
  if (operand.valid() && !operand.shape().IsArray()) {
    return b->ReportError("Reshape", "the operand must be an array");
  }
  for (int64_t size : new_sizes) {
    if (size < 0) return b->ReportError("Reshape", "negative dimension size");
  }
  return b->AddInstruction("Reshape", Opcode::kReshape, Shape::Array(type, new_sizes), {operand},
                           {});
}

Op Reshape(Op operand, absl::Span<const int64_t> dimensions, absl::Span<const int64_t> new_sizes) {
  return Reshape(Transpose(operand, dimensions), new_sizes);
}

Op Collapse(Op operand, absl::Span<const int64_t> dimensions) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid()) return Reshape(operand, {});
  const Shape& shape = operand.shape();
  if (!shape.IsArray()) return b->ReportError("Collapse", "the operand must be an array");
  if (dimensions.empty()) return operand;
  for (size_t i = 0; i < dimensions.size(); ++i) {
    if (dimensions[i] < 0 || dimensions[i] >= shape.rank() ||
        (i > 0 && dimensions[i] != dimensions[i - 1] + 1)) {
      return b->ReportError(
          "Collapse",
          absl::StrCat("dimensions ", DimsToString(dimensions),
                       " must be consecutive, in order, dimensions of ", shape.ToString(false)));
    }
  }
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < shape.rank();) {
    if (i == dimensions.front()) {
      int64_t product = 1;
      for (int64_t d : dimensions) product *= shape.dimensions(d);
      sizes.push_back(product);
      i = dimensions.back() + 1;
    } else {
      sizes.push_back(shape.dimensions(i++));
    }
  }
  return Reshape(operand, sizes);
}

Op Transpose(Op operand, absl::Span<const int64_t> permutation) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions.assign(permutation.begin(), permutation.end());
  return b->AddInstruction("Transpose", Opcode::kTranspose, Shape(), {operand}, attrs);
}

Op Rev(Op operand, absl::Span<const int64_t> dimensions) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions.assign(dimensions.begin(), dimensions.end());
  return b->AddInstruction("Rev", Opcode::kReverse, Shape(), {operand}, attrs);
}

Op Slice(Op operand, absl::Span<const int64_t> start_indices,
         absl::Span<const int64_t> limit_indices, absl::Span<const int64_t> strides) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  const int64_t n = static_cast<int64_t>(start_indices.size());
  if (!CheckLengths(b, "Slice", n,
                    {{"limit_indices", static_cast<int64_t>(limit_indices.size())},
                     {"strides", static_cast<int64_t>(strides.size())}},
                    /*allow_empty=*/false)) {
    return Op(b, nullptr);
  }
  InstructionAttributes attrs;
  for (int64_t i = 0; i < n; ++i) {
    attrs.slice.push_back({start_indices[i], limit_indices[i], strides[i]});
  }
  return b->AddInstruction("Slice", Opcode::kSlice, Shape(), {operand}, attrs);
}

Op SliceInDim(Op operand, int64_t start_index, int64_t limit_index, int64_t stride, int64_t dimno) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid()) return Slice(operand, {}, {}, {});
  const Shape& shape = operand.shape();
  if (!shape.IsArray() || dimno < 0 || dimno >= shape.rank()) {
    return b->ReportError("SliceInDim", absl::StrCat("dimension ", dimno, " is out of range for ",
                                                     shape.ToString(false)));
  }
  std::vector<int64_t> starts(shape.rank(), 0),
      limits(shape.dimensions().begin(), shape.dimensions().end()), strides(shape.rank(), 1);
  starts[dimno] = start_index;
  limits[dimno] = limit_index;
  strides[dimno] = stride;
  return Slice(operand, starts, limits, strides);
}

Op DynamicSlice(Op operand, absl::Span<const Op> start_indices,
                absl::Span<const int64_t> slice_sizes) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  std::vector<Op> operands = {operand};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  InstructionAttributes attrs;
  attrs.slice_sizes.assign(slice_sizes.begin(), slice_sizes.end());
  return b->AddInstruction("DynamicSlice", Opcode::kDynamicSlice, Shape(), operands, attrs);
}

Op DynamicUpdateSlice(Op operand, Op update, absl::Span<const Op> start_indices) {
  Builder* b = BuilderOf({operand, update});
  if (b == nullptr) return Op();
  std::vector<Op> operands = {operand, update};
  operands.insert(operands.end(), start_indices.begin(), start_indices.end());
  return b->AddInstruction("DynamicUpdateSlice", Opcode::kDynamicUpdateSlice, Shape(), operands,
                           {});
}

Op ConcatInDim(Builder* builder, absl::Span<const Op> operands, int64_t dimension) {
  if (builder == nullptr) return Op();
  if (operands.empty()) return builder->ReportError("ConcatInDim", "needs at least one operand");
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions = {dimension};
  return builder->AddInstruction("ConcatInDim", Opcode::kConcatenate, Shape(), operands, attrs);
}

Op Concatenate(Builder* builder, absl::Span<const Op> operands, int64_t dimension) {
  return ConcatInDim(builder, operands, dimension);
}

Op Pad(Op operand, Op padding_value, const PaddingConfig& padding_config) {
  Builder* b = BuilderOf({operand, padding_value});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.padding = padding_config;
  return b->AddInstruction("Pad", Opcode::kPad, Shape(), {operand, padding_value}, attrs);
}

Op GetDimensionSize(Op operand, int64_t dimension) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions = {dimension};
  return b->AddInstruction("GetDimensionSize", Opcode::kGetDimensionSize, Shape(), {operand},
                           attrs);
}

Op SetDimensionSize(Op operand, Op size, int64_t dimension) {
  Builder* b = BuilderOf({operand, size});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions = {dimension};
  return b->AddInstruction("SetDimensionSize", Opcode::kSetDimensionSize, Shape(), {operand, size},
                           attrs);
}

// ---------------------------------------------------------------------------
// Types

Op ConvertElementType(Op operand, ElementType new_element_type) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid())
    return b->AddInstruction("ConvertElementType", Opcode::kConvert, Shape(), {operand}, {});
  const Shape& shape = operand.shape();
  if (!shape.IsArray() || !IsArrayElementType(new_element_type)) {
    return b->ReportError("ConvertElementType",
                          absl::StrCat("cannot convert ", shape.ToString(false), " to ",
                                       ElementTypeName(new_element_type)));
  }
  return b->AddInstruction("ConvertElementType", Opcode::kConvert,
                           ArrayLike(shape, new_element_type, shape.dimensions()), {operand}, {});
}

Op BitcastConvertType(Op operand, ElementType new_element_type) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid()) {
    return b->AddInstruction("BitcastConvertType", Opcode::kBitcastConvert, Shape(), {operand}, {});
  }
  const Shape& shape = operand.shape();
  if (!shape.IsArray() || !IsArrayElementType(new_element_type)) {
    return b->ReportError("BitcastConvertType",
                          absl::StrCat("cannot bitcast ", shape.ToString(false), " to ",
                                       ElementTypeName(new_element_type)));
  }
  const int from = BitWidth(shape.element_type());
  const int to = BitWidth(new_element_type);
  std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  if (from > to) {
    if (from % to != 0) {
      return b->ReportError("BitcastConvertType", "the element widths must divide each other");
    }
    dims.push_back(from / to);
  } else if (to > from) {
    if (to % from != 0 || dims.empty() || dims.back() != to / from) {
      return b->ReportError(
          "BitcastConvertType",
          absl::StrCat("converting ", shape.ToString(false), " to ",
                       ElementTypeName(new_element_type), " needs a minor-most dimension of size ",
                       to / std::max(from, 1)));
    }
    dims.pop_back();
  }
  return b->AddInstruction("BitcastConvertType", Opcode::kBitcastConvert,
                           Shape::Array(new_element_type, dims), {operand}, {});
}

Op ReducePrecision(Op operand, int64_t exponent_bits, int64_t mantissa_bits) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.exponent_bits = exponent_bits;
  attrs.mantissa_bits = mantissa_bits;
  return b->AddInstruction("ReducePrecision", Opcode::kReducePrecision,
                           operand.valid() ? operand.shape() : Shape(), {operand}, attrs);
}

// ---------------------------------------------------------------------------
// Tuples

Op Tuple(Builder* builder, absl::Span<const Op> elements) {
  if (builder == nullptr) return Op();
  return builder->AddInstruction("Tuple", Opcode::kTuple, Shape(), elements, {});
}

Op GetTupleElement(Op tuple, int64_t index) {
  Builder* b = tuple.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.tuple_index = index;
  return b->AddInstruction("GetTupleElement", Opcode::kGetTupleElement, Shape(), {tuple}, attrs);
}

// ---------------------------------------------------------------------------
// Linear algebra

Op Dot(Op lhs, Op rhs, std::vector<Precision> precision) {
  Builder* b = BuilderOf({lhs, rhs});
  if (b == nullptr) return Op();
  DotDimensionNumbers dnums;
  if (lhs.valid() && rhs.valid()) {
    if (!lhs.shape().IsArray() || !rhs.shape().IsArray() || lhs.shape().rank() < 1 ||
        lhs.shape().rank() > 2 || rhs.shape().rank() < 1 || rhs.shape().rank() > 2) {
      return b->ReportError(
          "Dot", absl::StrCat("operands must be vectors or matrices, got ",
                              lhs.shape().ToString(false), " and ", rhs.shape().ToString(false)));
    }
    dnums.lhs_contracting_dimensions = {lhs.shape().rank() - 1};
    dnums.rhs_contracting_dimensions = {0};
  }
  InstructionAttributes attrs;
  attrs.dot_dimension_numbers = dnums;
  attrs.operand_precision = std::move(precision);
  return b->AddInstruction("Dot", Opcode::kDot, Shape(), {lhs, rhs}, attrs);
}

Op DotGeneral(Op lhs, Op rhs, const DotDimensionNumbers& dimension_numbers,
              std::vector<Precision> precision) {
  Builder* b = BuilderOf({lhs, rhs});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.dot_dimension_numbers = dimension_numbers;
  attrs.operand_precision = std::move(precision);
  return b->AddInstruction("DotGeneral", Opcode::kDot, Shape(), {lhs, rhs}, attrs);
}

ConvolutionDimensionNumbers DefaultConvolutionDimensionNumbers(int64_t num_spatial_dims) {
  ConvolutionDimensionNumbers dnums;
  dnums.input_batch_dimension = 0;
  dnums.input_feature_dimension = 1;
  dnums.kernel_output_feature_dimension = 0;
  dnums.kernel_input_feature_dimension = 1;
  dnums.output_batch_dimension = 0;
  dnums.output_feature_dimension = 1;
  for (int64_t i = 0; i < num_spatial_dims; ++i) {
    dnums.input_spatial_dimensions.push_back(i + 2);
    dnums.kernel_spatial_dimensions.push_back(i + 2);
    dnums.output_spatial_dimensions.push_back(i + 2);
  }
  return dnums;
}

namespace {

Op ConvImpl(absl::string_view name, Op lhs, Op rhs, absl::Span<const int64_t> window_strides,
            std::optional<Padding> padding_kind,
            absl::Span<const std::pair<int64_t, int64_t>> padding,
            absl::Span<const int64_t> lhs_dilation, absl::Span<const int64_t> rhs_dilation,
            std::optional<ConvolutionDimensionNumbers> given_dnums, int64_t feature_group_count,
            int64_t batch_group_count) {
  Builder* b = BuilderOf({lhs, rhs});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.feature_group_count = feature_group_count;
  attrs.batch_group_count = batch_group_count;
  attrs.has_window = true;
  if (!lhs.valid() || !rhs.valid()) {
    return b->AddInstruction(name, Opcode::kConvolution, Shape(), {lhs, rhs}, attrs);
  }
  const Shape& ls = lhs.shape();
  const Shape& rs = rhs.shape();
  if (!ls.IsArray() || !rs.IsArray() || ls.rank() < 2 || ls.rank() != rs.rank()) {
    return b->ReportError(name,
                          absl::StrCat("lhs and rhs must be arrays of the same rank >= 2, got ",
                                       ls.ToString(false), " and ", rs.ToString(false)));
  }
  const int64_t n = ls.rank() - 2;
  ConvolutionDimensionNumbers dnums =
      given_dnums.has_value() ? *given_dnums : DefaultConvolutionDimensionNumbers(n);
  if (static_cast<int64_t>(dnums.input_spatial_dimensions.size()) != n ||
      static_cast<int64_t>(dnums.kernel_spatial_dimensions.size()) != n ||
      static_cast<int64_t>(dnums.output_spatial_dimensions.size()) != n) {
    return b->ReportError(name,
                          absl::StrCat("dimension numbers must list ", n, " spatial dimensions"));
  }
  for (int64_t i = 0; i < n; ++i) {
    const int64_t in = dnums.input_spatial_dimensions[i];
    const int64_t k = dnums.kernel_spatial_dimensions[i];
    if (in < 0 || in >= ls.rank() || k < 0 || k >= rs.rank()) {
      return b->ReportError(name, "spatial dimension number out of range");
    }
  }
  if (!CheckLengths(b, name, n,
                    {{"window_strides", static_cast<int64_t>(window_strides.size())},
                     {"padding", static_cast<int64_t>(padding_kind ? n : padding.size())},
                     {"lhs_dilation", static_cast<int64_t>(lhs_dilation.size())},
                     {"rhs_dilation", static_cast<int64_t>(rhs_dilation.size())}},
                    /*allow_empty=*/true)) {
    return Op(b, nullptr);
  }
  std::vector<int64_t> input_sizes, kernel_sizes;
  for (int64_t i = 0; i < n; ++i) {
    input_sizes.push_back(ls.dimensions(dnums.input_spatial_dimensions[i]));
    kernel_sizes.push_back(rs.dimensions(dnums.kernel_spatial_dimensions[i]));
  }
  std::vector<int64_t> strides(window_strides.begin(), window_strides.end());
  if (strides.empty()) strides.assign(n, 1);
  std::vector<std::pair<int64_t, int64_t>> pads(padding.begin(), padding.end());
  if (padding_kind.has_value()) {
    pads = MakePadding(input_sizes, kernel_sizes, strides, *padding_kind);
  }
  attrs.window = MakeWindow(kernel_sizes, strides, pads, lhs_dilation, rhs_dilation);
  attrs.convolution_dimension_numbers = dnums;
  return b->AddInstruction(name, Opcode::kConvolution, Shape(), {lhs, rhs}, attrs);
}

}  // namespace

Op Conv(Op lhs, Op rhs, absl::Span<const int64_t> window_strides, Padding padding,
        int64_t feature_group_count, int64_t batch_group_count) {
  return ConvImpl("Conv", lhs, rhs, window_strides, padding, {}, {}, {}, std::nullopt,
                  feature_group_count, batch_group_count);
}

Op ConvWithGeneralPadding(Op lhs, Op rhs, absl::Span<const int64_t> window_strides,
                          absl::Span<const std::pair<int64_t, int64_t>> padding,
                          int64_t feature_group_count, int64_t batch_group_count) {
  return ConvImpl("ConvWithGeneralPadding", lhs, rhs, window_strides, std::nullopt, padding, {}, {},
                  std::nullopt, feature_group_count, batch_group_count);
}

Op ConvGeneralDilated(Op lhs, Op rhs, absl::Span<const int64_t> window_strides,
                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                      absl::Span<const int64_t> lhs_dilation,
                      absl::Span<const int64_t> rhs_dilation,
                      const ConvolutionDimensionNumbers& dimension_numbers,
                      int64_t feature_group_count, int64_t batch_group_count) {
  return ConvImpl("ConvGeneralDilated", lhs, rhs, window_strides, std::nullopt, padding,
                  lhs_dilation, rhs_dilation, dimension_numbers, feature_group_count,
                  batch_group_count);
}

Op Fft(Op operand, FftType fft_type, absl::Span<const int64_t> fft_length) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.fft_type = fft_type;
  attrs.fft_length.assign(fft_length.begin(), fft_length.end());
  return b->AddInstruction("Fft", Opcode::kFft, Shape(), {operand}, attrs);
}

Op Cholesky(Op a, bool lower) {
  Builder* b = a.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.lower = lower;
  return b->AddInstruction("Cholesky", Opcode::kCholesky, Shape(), {a}, attrs);
}

Op TriangularSolve(Op a, Op b_op, bool left_side, bool lower, bool unit_diagonal,
                   TriangularSolveTranspose transpose_a) {
  Builder* b = BuilderOf({a, b_op});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.left_side = left_side;
  attrs.lower = lower;
  attrs.unit_diagonal = unit_diagonal;
  attrs.transpose_a = transpose_a;
  return b->AddInstruction("TriangularSolve", Opcode::kTriangularSolve, Shape(), {a, b_op}, attrs);
}

Op BatchNormTraining(Op operand, Op scale, Op offset, float epsilon, int64_t feature_index) {
  Builder* b = BuilderOf({operand, scale, offset});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  return b->AddInstruction("BatchNormTraining", Opcode::kBatchNormTraining, Shape(),
                           {operand, scale, offset}, attrs);
}

Op BatchNormInference(Op operand, Op scale, Op offset, Op mean, Op variance, float epsilon,
                      int64_t feature_index) {
  Builder* b = BuilderOf({operand, scale, offset, mean, variance});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  return b->AddInstruction("BatchNormInference", Opcode::kBatchNormInference, Shape(),
                           {operand, scale, offset, mean, variance}, attrs);
}

Op BatchNormGrad(Op operand, Op scale, Op mean, Op variance, Op grad_output, float epsilon,
                 int64_t feature_index) {
  Builder* b = BuilderOf({operand, scale, mean, variance, grad_output});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.epsilon = epsilon;
  attrs.feature_index = feature_index;
  return b->AddInstruction("BatchNormGrad", Opcode::kBatchNormGrad, Shape(),
                           {operand, scale, mean, variance, grad_output}, attrs);
}

// ---------------------------------------------------------------------------
// Reductions and windows

Op Reduce(Op operand, Op init_value, Computation* computation,
          absl::Span<const int64_t> dimensions_to_reduce) {
  return Reduce(BuilderOf({operand, init_value}), {operand}, {init_value}, computation,
                dimensions_to_reduce);
}

Op Reduce(Builder* builder, absl::Span<const Op> operands, absl::Span<const Op> init_values,
          Computation* computation, absl::Span<const int64_t> dimensions_to_reduce) {
  if (builder == nullptr) return Op();
  if (operands.size() != init_values.size() || operands.empty()) {
    return builder->ReportError(
        "Reduce", absl::StrCat("needs N >= 1 operands and N init values, got ", operands.size(),
                               " and ", init_values.size()));
  }
  std::vector<Op> all(operands.begin(), operands.end());
  all.insert(all.end(), init_values.begin(), init_values.end());
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions.assign(dimensions_to_reduce.begin(), dimensions_to_reduce.end());
  return builder->AddInstruction("Reduce", Opcode::kReduce, Shape(), all, attrs, {computation});
}

Op ReduceWindow(Op operand, Op init_value, Computation* computation,
                absl::Span<const int64_t> window_dimensions,
                absl::Span<const int64_t> window_strides, Padding padding) {
  return ReduceWindow(BuilderOf({operand, init_value}), {operand}, {init_value}, computation,
                      window_dimensions, window_strides, padding);
}

namespace {

Op ReduceWindowImpl(Builder* builder, absl::Span<const Op> operands,
                    absl::Span<const Op> init_values, Computation* computation,
                    absl::Span<const int64_t> window_dimensions,
                    absl::Span<const int64_t> window_strides, std::optional<Padding> padding_kind,
                    absl::Span<const int64_t> base_dilations,
                    absl::Span<const int64_t> window_dilations,
                    absl::Span<const std::pair<int64_t, int64_t>> padding) {
  if (builder == nullptr) return Op();
  const char* name = "ReduceWindow";
  if (operands.size() != init_values.size() || operands.empty()) {
    return builder->ReportError(name, absl::StrCat("needs N >= 1 operands and N init values, got ",
                                                   operands.size(), " and ", init_values.size()));
  }
  std::vector<Op> all(operands.begin(), operands.end());
  all.insert(all.end(), init_values.begin(), init_values.end());
  InstructionAttributes attrs;
  attrs.has_window = true;
  if (AllValid(operands)) {
    const Shape& shape = operands[0].shape();
    if (!shape.IsArray()) return builder->ReportError(name, "operands must be arrays");
    const int64_t n = shape.rank();
    if (!CheckLengths(builder, name, n,
                      {{"window_dimensions", static_cast<int64_t>(window_dimensions.size())},
                       {"window_strides", static_cast<int64_t>(window_strides.size())}},
                      /*allow_empty=*/false) ||
        !CheckLengths(builder, name, n,
                      {{"padding", static_cast<int64_t>(padding_kind ? n : padding.size())},
                       {"base_dilations", static_cast<int64_t>(base_dilations.size())},
                       {"window_dilations", static_cast<int64_t>(window_dilations.size())}},
                      /*allow_empty=*/true)) {
      return Op(builder, nullptr);
    }
    std::vector<std::pair<int64_t, int64_t>> pads(padding.begin(), padding.end());
    if (padding_kind.has_value()) {
      pads = MakePadding(shape.dimensions(), window_dimensions, window_strides, *padding_kind);
    }
    attrs.window =
        MakeWindow(window_dimensions, window_strides, pads, base_dilations, window_dilations);
  }
  return builder->AddInstruction(name, Opcode::kReduceWindow, Shape(), all, attrs, {computation});
}

}  // namespace

Op ReduceWindow(Builder* builder, absl::Span<const Op> operands, absl::Span<const Op> init_values,
                Computation* computation, absl::Span<const int64_t> window_dimensions,
                absl::Span<const int64_t> window_strides, Padding padding) {
  return ReduceWindowImpl(builder, operands, init_values, computation, window_dimensions,
                          window_strides, padding, {}, {}, {});
}

Op ReduceWindowWithGeneralPadding(Builder* builder, absl::Span<const Op> operands,
                                  absl::Span<const Op> init_values, Computation* computation,
                                  absl::Span<const int64_t> window_dimensions,
                                  absl::Span<const int64_t> window_strides,
                                  absl::Span<const int64_t> base_dilations,
                                  absl::Span<const int64_t> window_dilations,
                                  absl::Span<const std::pair<int64_t, int64_t>> padding) {
  return ReduceWindowImpl(builder, operands, init_values, computation, window_dimensions,
                          window_strides, std::nullopt, base_dilations, window_dilations, padding);
}

namespace {

Op SelectAndScatterImpl(Op operand, Computation* select,
                        absl::Span<const int64_t> window_dimensions,
                        absl::Span<const int64_t> window_strides,
                        std::optional<Padding> padding_kind,
                        absl::Span<const std::pair<int64_t, int64_t>> padding, Op source,
                        Op init_value, Computation* scatter) {
  Builder* b = BuilderOf({operand, source, init_value});
  if (b == nullptr) return Op();
  const char* name = "SelectAndScatter";
  InstructionAttributes attrs;
  attrs.has_window = true;
  if (operand.valid()) {
    const Shape& shape = operand.shape();
    if (!shape.IsArray()) return b->ReportError(name, "the operand must be an array");
    const int64_t n = shape.rank();
    if (!CheckLengths(b, name, n,
                      {{"window_dimensions", static_cast<int64_t>(window_dimensions.size())},
                       {"window_strides", static_cast<int64_t>(window_strides.size())},
                       {"padding", static_cast<int64_t>(padding_kind ? n : padding.size())}},
                      /*allow_empty=*/false)) {
      return Op(b, nullptr);
    }
    std::vector<std::pair<int64_t, int64_t>> pads(padding.begin(), padding.end());
    if (padding_kind.has_value()) {
      pads = MakePadding(shape.dimensions(), window_dimensions, window_strides, *padding_kind);
    }
    attrs.window = MakeWindow(window_dimensions, window_strides, pads, {}, {});
  }
  return b->AddInstruction(name, Opcode::kSelectAndScatter, Shape(), {operand, source, init_value},
                           attrs, {select, scatter});
}

}  // namespace

Op SelectAndScatter(Op operand, Computation* select, absl::Span<const int64_t> window_dimensions,
                    absl::Span<const int64_t> window_strides, Padding padding, Op source,
                    Op init_value, Computation* scatter) {
  return SelectAndScatterImpl(operand, select, window_dimensions, window_strides, padding, {},
                              source, init_value, scatter);
}

Op SelectAndScatterWithGeneralPadding(Op operand, Computation* select,
                                      absl::Span<const int64_t> window_dimensions,
                                      absl::Span<const int64_t> window_strides,
                                      absl::Span<const std::pair<int64_t, int64_t>> padding,
                                      Op source, Op init_value, Computation* scatter) {
  return SelectAndScatterImpl(operand, select, window_dimensions, window_strides, std::nullopt,
                              padding, source, init_value, scatter);
}

Op Map(Builder* builder, absl::Span<const Op> operands, Computation* computation,
       absl::Span<const int64_t> dimensions) {
  if (builder == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions.assign(dimensions.begin(), dimensions.end());
  if (attrs.dimensions.empty() && !operands.empty() && operands[0].valid() &&
      operands[0].shape().IsArray()) {
    for (int64_t i = 0; i < operands[0].shape().rank(); ++i) attrs.dimensions.push_back(i);
  }
  return builder->AddInstruction("Map", Opcode::kMap, Shape(), operands, attrs, {computation});
}

Op Sort(absl::Span<const Op> operands, Computation* comparator, int64_t dimension, bool is_stable) {
  Builder* b = BuilderOf(operands);
  if (b == nullptr) return Op();
  if (dimension == -1 && !operands.empty() && operands[0].valid() &&
      operands[0].shape().IsArray()) {
    dimension = operands[0].shape().rank() - 1;
  }
  InstructionAttributes attrs;
  attrs.has_dimensions = true;
  attrs.dimensions = {dimension};
  attrs.is_stable = is_stable;
  return b->AddInstruction("Sort", Opcode::kSort, Shape(), operands, attrs, {comparator});
}

Op TopK(Op operand, int64_t k, bool largest) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.k = k;
  attrs.largest = largest;
  return b->AddInstruction("TopK", Opcode::kTopK, Shape(), {operand}, attrs);
}

Op Gather(Op operand, Op start_indices, const GatherDimensionNumbers& dimension_numbers,
          absl::Span<const int64_t> slice_sizes, bool indices_are_sorted) {
  Builder* b = BuilderOf({operand, start_indices});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.gather_dimension_numbers = dimension_numbers;
  attrs.slice_sizes.assign(slice_sizes.begin(), slice_sizes.end());
  attrs.indices_are_sorted = indices_are_sorted;
  return b->AddInstruction("Gather", Opcode::kGather, Shape(), {operand, start_indices}, attrs);
}

Op Scatter(Op operand, Op scatter_indices, Op updates, Computation* update_computation,
           const ScatterDimensionNumbers& dimension_numbers, bool indices_are_sorted,
           bool unique_indices) {
  return Scatter(std::vector<Op>{operand}, scatter_indices, std::vector<Op>{updates},
                 update_computation, dimension_numbers, indices_are_sorted, unique_indices);
}

Op Scatter(absl::Span<const Op> operands, Op scatter_indices, absl::Span<const Op> updates,
           Computation* update_computation, const ScatterDimensionNumbers& dimension_numbers,
           bool indices_are_sorted, bool unique_indices) {
  Builder* b = BuilderOf(operands);
  if (b == nullptr) b = scatter_indices.builder();
  if (b == nullptr) return Op();
  if (operands.empty() || operands.size() != updates.size()) {
    return b->ReportError("Scatter", absl::StrCat("needs N >= 1 operands and N updates, got ",
                                                  operands.size(), " and ", updates.size()));
  }
  std::vector<Op> all(operands.begin(), operands.end());
  all.push_back(scatter_indices);
  all.insert(all.end(), updates.begin(), updates.end());
  InstructionAttributes attrs;
  attrs.scatter_dimension_numbers = dimension_numbers;
  attrs.indices_are_sorted = indices_are_sorted;
  attrs.unique_indices = unique_indices;
  return b->AddInstruction("Scatter", Opcode::kScatter, Shape(), all, attrs, {update_computation});
}

// ---------------------------------------------------------------------------
// Control flow and calls

Op Call(Builder* builder, Computation* computation, absl::Span<const Op> operands) {
  if (builder == nullptr) return Op();
  return builder->AddInstruction("Call", Opcode::kCall, Shape(), operands, {}, {computation});
}

Op CompositeCall(Builder* builder, Computation* computation, absl::Span<const Op> operands,
                 absl::string_view name, std::optional<absl::string_view> attributes,
                 std::optional<int64_t> version) {
  if (builder == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.is_composite = true;
  // Frontend attributes print sorted by key.
  std::vector<std::string> entries;
  if (attributes.has_value()) {
    entries.push_back(absl::StrCat("composite.attributes=",
                                   absl::StartsWith(*attributes, "{")
                                       ? std::string(*attributes)
                                       : absl::StrCat("\"", absl::CEscape(*attributes), "\"")));
  }
  entries.push_back(absl::StrCat("composite.name=\"", absl::CEscape(name), "\""));
  entries.push_back(absl::StrCat("composite.version=\"", version.value_or(0), "\""));
  std::vector<OpaqueAttribute> opaque = {
      {"frontend_attributes", absl::StrCat("{", absl::StrJoin(entries, ","), "}")}};
  return builder->AddInstruction("CompositeCall", Opcode::kCall, Shape(), operands, attrs,
                                 {computation}, std::move(opaque));
}

Op Conditional(Op predicate, Op true_operand, Computation* true_computation, Op false_operand,
               Computation* false_computation) {
  Builder* b = BuilderOf({predicate, true_operand, false_operand});
  if (b == nullptr) return Op();
  return b->AddInstruction("Conditional", Opcode::kConditional, Shape(),
                           {predicate, true_operand, false_operand}, {},
                           {true_computation, false_computation});
}

Op Conditional(Op branch_index, absl::Span<Computation* const> branch_computations,
               absl::Span<const Op> branch_operands) {
  Builder* b = branch_index.builder();
  if (b == nullptr) return Op();
  if (branch_computations.empty() || branch_computations.size() != branch_operands.size()) {
    return b->ReportError(
        "Conditional", absl::StrCat("needs N >= 1 branch computations and N operands, got ",
                                    branch_computations.size(), " and ", branch_operands.size()));
  }
  std::vector<Op> all = {branch_index};
  all.insert(all.end(), branch_operands.begin(), branch_operands.end());
  return b->AddInstruction(
      "Conditional", Opcode::kConditional, Shape(), all, {},
      std::vector<Computation*>(branch_computations.begin(), branch_computations.end()));
}

Op While(Computation* condition, Computation* body, Op init) {
  Builder* b = init.builder();
  if (b == nullptr) return Op();
  return b->AddInstruction("While", Opcode::kWhile, Shape(), {init}, {}, {condition, body});
}

Op CustomCall(Builder* builder, absl::string_view call_target_name, absl::Span<const Op> operands,
              const Shape& shape, absl::string_view opaque, bool has_side_effect) {
  if (builder == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.custom_call_target = std::string(call_target_name);
  attrs.custom_call_has_side_effect = has_side_effect;
  if (!opaque.empty()) attrs.backend_config = absl::StrCat("\"", absl::CEscape(opaque), "\"");
  return builder->AddInstruction("CustomCall", Opcode::kCustomCall, shape, operands, attrs);
}

// ---------------------------------------------------------------------------
// Random numbers

Op RngNormal(Op mu, Op sigma, const Shape& shape) {
  Builder* b = BuilderOf({mu, sigma});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.distribution = RandomDistribution::kNormal;
  return b->AddInstruction("RngNormal", Opcode::kRng, shape, {mu, sigma}, attrs);
}

Op RngUniform(Op a, Op b_op, const Shape& shape) {
  Builder* b = BuilderOf({a, b_op});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.distribution = RandomDistribution::kUniform;
  return b->AddInstruction("RngUniform", Opcode::kRng, shape, {a, b_op}, attrs);
}

Op RngBitGenerator(RandomAlgorithm algorithm, Op initial_state, const Shape& shape) {
  Builder* b = initial_state.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.rng_algorithm = algorithm;
  Shape result = Shape::Tuple({initial_state.valid() ? initial_state.shape() : Shape(), shape});
  return b->AddInstruction("RngBitGenerator", Opcode::kRngBitGenerator, result, {initial_state},
                           attrs);
}

// ---------------------------------------------------------------------------
// Tokens, I/O, channels

Op CreateToken(Builder* builder) { return AfterAll(builder, {}); }

Op AfterAll(Builder* builder, absl::Span<const Op> tokens) {
  if (builder == nullptr) return Op();
  return builder->AddInstruction("AfterAll", Opcode::kAfterAll, Shape::Token(), tokens, {});
}

Op InfeedWithToken(Op token, const Shape& shape, absl::string_view config) {
  Builder* b = token.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.infeed_config = std::string(config);
  return b->AddInstruction("Infeed", Opcode::kInfeed, Shape::Tuple({shape, Shape::Token()}),
                           {token}, attrs);
}

Op Infeed(Builder* builder, const Shape& shape, absl::string_view config) {
  return GetTupleElement(InfeedWithToken(CreateToken(builder), shape, config), 0);
}

Op OutfeedWithToken(Op operand, Op token, const Shape& shape_with_layout,
                    absl::string_view outfeed_config) {
  Builder* b = BuilderOf({operand, token});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.outfeed_shape = WithLayouts(shape_with_layout);
  attrs.outfeed_config = std::string(outfeed_config);
  return b->AddInstruction("Outfeed", Opcode::kOutfeed, Shape::Token(), {operand, token}, attrs);
}

Op SendWithToken(Op operand, Op token, int64_t channel_id) {
  Builder* b = BuilderOf({operand, token});
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.channel_id = channel_id;
  Shape context = Shape::Tuple({operand.valid() ? operand.shape() : Shape(),
                                Shape::Scalar(ElementType::kU32), Shape::Token()});
  Op send = b->AddInstruction("Send", Opcode::kSend, context, {operand, token}, attrs);
  return b->AddInstruction("Send", Opcode::kSendDone, Shape::Token(), {send}, attrs);
}

Op Send(Op operand, int64_t channel_id) {
  return SendWithToken(operand, CreateToken(operand.builder()), channel_id);
}

Op RecvWithToken(Op token, const Shape& shape, int64_t channel_id) {
  Builder* b = token.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.channel_id = channel_id;
  Shape context = Shape::Tuple({shape, Shape::Scalar(ElementType::kU32), Shape::Token()});
  Op recv = b->AddInstruction("Recv", Opcode::kRecv, context, {token}, attrs);
  return b->AddInstruction("Recv", Opcode::kRecvDone, Shape::Tuple({shape, Shape::Token()}), {recv},
                           attrs);
}

Op Recv(Builder* builder, const Shape& shape, int64_t channel_id) {
  return GetTupleElement(RecvWithToken(CreateToken(builder), shape, channel_id), 0);
}

// ---------------------------------------------------------------------------
// Collectives

namespace {

InstructionAttributes CollectiveAttrs(const ReplicaGroups& replica_groups,
                                      std::optional<int64_t> channel_id) {
  InstructionAttributes attrs;
  attrs.replica_groups = replica_groups;
  attrs.has_replica_groups = true;
  attrs.channel_id = channel_id;
  return attrs;
}

}  // namespace

Op ReplicaId(Builder* builder) {
  if (builder == nullptr) return Op();
  return builder->AddInstruction("ReplicaId", Opcode::kReplicaId, Shape::Scalar(ElementType::kU32),
                                 {}, {});
}

Op PartitionId(Builder* builder) {
  if (builder == nullptr) return Op();
  return builder->AddInstruction("PartitionId", Opcode::kPartitionId,
                                 Shape::Scalar(ElementType::kU32), {}, {});
}

Op AllGather(Op operand, int64_t all_gather_dimension, int64_t shard_count,
             const ReplicaGroups& replica_groups, std::optional<int64_t> channel_id) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs = CollectiveAttrs(replica_groups, channel_id);
  attrs.has_dimensions = true;
  attrs.dimensions = {all_gather_dimension};
  Shape shape;
  if (operand.valid()) {
    const Shape& in = operand.shape();
    if (!in.IsArray() || all_gather_dimension < 0 || all_gather_dimension >= in.rank()) {
      return b->ReportError("AllGather", absl::StrCat("dimension ", all_gather_dimension,
                                                      " is out of range for ", in.ToString(false)));
    }
    if (shard_count < 1) return b->ReportError("AllGather", "shard_count must be positive");
    std::vector<int64_t> dims(in.dimensions().begin(), in.dimensions().end());
    dims[all_gather_dimension] *= shard_count;
    shape = Shape::Array(in.element_type(), dims);
  }
  return b->AddInstruction("AllGather", Opcode::kAllGather, shape, {operand}, attrs);
}

Op AllReduce(Op operand, Computation* computation, const ReplicaGroups& replica_groups,
             std::optional<int64_t> channel_id) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  return b->AddInstruction("AllReduce", Opcode::kAllReduce, Shape(), {operand},
                           CollectiveAttrs(replica_groups, channel_id), {computation});
}

Op AllToAll(Op operand, int64_t split_dimension, int64_t concat_dimension, int64_t split_count,
            const ReplicaGroups& replica_groups) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  const char* name = "AllToAll";
  InstructionAttributes attrs = CollectiveAttrs(replica_groups, std::nullopt);
  attrs.has_dimensions = true;
  if (!operand.valid())
    return b->AddInstruction(name, Opcode::kAllToAll, Shape(), {operand}, attrs);
  const Shape& in = operand.shape();
  const int64_t rank = in.IsArray() ? in.rank() : 0;
  if (!in.IsArray() || split_dimension < 0 || split_dimension >= rank || concat_dimension < 0 ||
      concat_dimension >= rank) {
    return b->ReportError(
        name, absl::StrCat("split dimension ", split_dimension, " and concat dimension ",
                           concat_dimension, " must be dimensions of ", in.ToString(false)));
  }
  if (split_count < 1 || in.dimensions(split_dimension) % split_count != 0) {
    return b->ReportError(name, absl::StrCat("split dimension ", split_dimension, " (size ",
                                             in.dimensions(split_dimension),
                                             ") is not divisible by split_count ", split_count));
  }
  if (split_dimension == concat_dimension) {
    attrs.dimensions = {split_dimension};
    return b->AddInstruction(name, Opcode::kAllToAll, Shape(), {operand}, attrs);
  }
  // Split the split dimension into (split_count, chunk), exchange the chunks
  // along the new dimension, then move that dimension just before the concat
  // dimension and merge the two.
  const int64_t s = split_dimension;
  std::vector<int64_t> split_dims;
  for (int64_t i = 0; i < rank; ++i) {
    if (i == s) {
      split_dims.push_back(split_count);
      split_dims.push_back(in.dimensions(i) / split_count);
    } else {
      split_dims.push_back(in.dimensions(i));
    }
  }
  Op reshaped = Reshape(operand, split_dims);
  attrs.dimensions = {s};
  Op exchanged = b->AddInstruction(name, Opcode::kAllToAll, Shape(), {reshaped}, attrs);
  // Dimension i (i != s) of the input is dimension i (i < s) or i + 1 of the
  // split shape; dimension s + 1 holds the chunk, s the source replica.
  std::vector<int64_t> permutation;
  for (int64_t i = 0; i < rank; ++i) {
    const int64_t split_index = i < s ? i : i + 1;
    if (i == concat_dimension) permutation.push_back(s);
    permutation.push_back(split_index);
  }
  Op transposed = Transpose(exchanged, permutation);
  std::vector<int64_t> out_dims(in.dimensions().begin(), in.dimensions().end());
  out_dims[s] /= split_count;
  out_dims[concat_dimension] *= split_count;
  return Reshape(transposed, out_dims);
}

Op CollectivePermute(Op operand,
                     absl::Span<const std::pair<int64_t, int64_t>> source_target_pairs) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs;
  attrs.source_target_pairs.assign(source_target_pairs.begin(), source_target_pairs.end());
  return b->AddInstruction("CollectivePermute", Opcode::kCollectivePermute, Shape(), {operand},
                           attrs);
}

Op ReduceScatter(Op operand, Computation* computation, int64_t scatter_dimension,
                 int64_t shard_count, const ReplicaGroups& replica_groups,
                 std::optional<int64_t> channel_id) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  InstructionAttributes attrs = CollectiveAttrs(replica_groups, channel_id);
  attrs.has_dimensions = true;
  attrs.dimensions = {scatter_dimension};
  Shape shape;
  if (operand.valid()) {
    const Shape& in = operand.shape();
    if (!in.IsArray() || scatter_dimension < 0 || scatter_dimension >= in.rank()) {
      return b->ReportError("ReduceScatter",
                            absl::StrCat("dimension ", scatter_dimension, " is out of range for ",
                                         in.ToString(false)));
    }
    if (shard_count < 1 || in.dimensions(scatter_dimension) % shard_count != 0) {
      return b->ReportError(
          "ReduceScatter",
          absl::StrCat("dimension ", scatter_dimension, " (size ", in.dimensions(scatter_dimension),
                       ") is not divisible by shard_count ", shard_count));
    }
    std::vector<int64_t> dims(in.dimensions().begin(), in.dimensions().end());
    dims[scatter_dimension] /= shard_count;
    shape = Shape::Array(in.element_type(), dims);
  }
  return b->AddInstruction("ReduceScatter", Opcode::kReduceScatter, shape, {operand}, attrs,
                           {computation});
}

Op CrossReplicaSum(Op operand, const ReplicaGroups& replica_groups) {
  Builder* b = operand.builder();
  if (b == nullptr) return Op();
  if (!operand.valid()) return AllReduce(operand, nullptr, replica_groups);
  const Shape& shape = operand.shape();
  ElementType type = shape.element_type();
  if (shape.IsTuple()) {
    if (shape.tuple_size() == 0 || !shape.tuple_shapes(0).IsArray()) {
      return b->ReportError("CrossReplicaSum", "the operand must be an array or a tuple of arrays");
    }
    type = shape.tuple_shapes(0).element_type();
  }
  if (!IsArrayElementType(type)) {
    return b->ReportError("CrossReplicaSum", "the operand must be an array or a tuple of arrays");
  }
  Computation* add = CreateScalarAddComputation(b, type);
  return AllReduce(operand, add, replica_groups);
}

// ---------------------------------------------------------------------------
// Scalar computations

Computation* CreateScalarAddComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "add", type, (type == ElementType::kPred) ? Or : Add);
}
Computation* CreateScalarMultiplyComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "mul", type, (type == ElementType::kPred) ? And : Mul);
}
Computation* CreateScalarMaxComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "max", type, Max);
}
Computation* CreateScalarMinComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "min", type, Min);
}
Computation* CreateScalarAndComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "and", type, And);
}
Computation* CreateScalarOrComputation(Builder* builder, ElementType type) {
  return ScalarBinaryComputation(builder, "or", type, Or);
}
Computation* CreateScalarLtComputation(Builder* builder, absl::Span<const ElementType> types) {
  return ScalarComparator(builder, "lt", types, ComparisonDirection::kLt);
}
Computation* CreateScalarGtComputation(Builder* builder, absl::Span<const ElementType> types) {
  return ScalarComparator(builder, "gt", types, ComparisonDirection::kGt);
}

}  // namespace xjit
