// Layout assignment. The pass works in three steps per module:
//   1. Reset: every array gets the default layout, except the entry
//      parameters (the caller's layouts) and the results of bitcasts and
//      custom-calls (whose meaning depends on the layouts as written). The
//      original shapes are remembered for the consumers pinned to them.
//   2. Walk each computation in definition order. An instruction's operands
//      are final when it is reached, so each consumer either accepts an
//      operand's layout or gets a conversion (a copy, or a relaid-out
//      constant) shared by every consumer that needs the same layout.
//      A transpose gets the layout that makes it free (a bitcast of its
//      operand) when its users accept that layout.
//   3. The root of each computation gets its required layout (the caller's
//      for the entry, the default elsewhere), then copies that the reset made
//      into identities are removed.
// Layouts never change what a value is (every operation but bitcast is
// defined on logical indices), so each step keeps the module's results.
#include "passes/assign_layouts.h"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

Shape WithAllDefaultLayouts(const Shape& shape) {
  Shape out = shape;
  if (out.IsTuple()) {
    for (Shape& element : *out.mutable_tuple_shapes()) element = WithAllDefaultLayouts(element);
  } else if (out.IsArray()) {
    out.set_layout(Layout::Default(out.rank()));
  }
  return out;
}

Shape WithMinorToMajor(const Shape& shape, std::vector<int64_t> minor_to_major) {
  Shape out = shape;
  Layout layout;
  layout.minor_to_major = std::move(minor_to_major);
  out.set_layout(std::move(layout));
  return out;
}

bool IsPlainArray(const Shape& shape) {
  return shape.IsArray() && shape.has_layout() && shape.layout().IsPlain();
}

bool IsDefaultPlain(const Shape& shape) {
  return IsPlainArray(shape) && shape.layout().minor_to_major == Layout::Default(shape.rank()).minor_to_major;
}

bool Contains(absl::Span<const int64_t> list, int64_t value) {
  return std::find(list.begin(), list.end(), value) != list.end();
}

// Dimensions of an operand that are neither batch nor contracting.
std::vector<int64_t> FreeDimensions(int64_t rank, absl::Span<const int64_t> batch,
                                    absl::Span<const int64_t> contracting) {
  std::vector<int64_t> free;
  for (int64_t d = 0; d < rank; ++d) {
    if (!Contains(batch, d) && !Contains(contracting, d)) free.push_back(d);
  }
  return free;
}

bool FitsGemm(const Shape& operand, absl::Span<const int64_t> batch,
              absl::Span<const int64_t> contracting) {
  return operand.IsArray() && contracting.size() == 1 &&
         FreeDimensions(operand.rank(), batch, contracting).size() <= 1;
}

// The no-transpose GEMM layout: for the lhs [m,k] with k minor, for the rhs
// [k,n] with n minor; batch dimensions major in order.
Shape GemmLayout(const Shape& operand, absl::Span<const int64_t> batch,
                 absl::Span<const int64_t> contracting, bool is_lhs) {
  std::vector<int64_t> free = FreeDimensions(operand.rank(), batch, contracting);
  std::vector<int64_t> m2m;
  if (is_lhs) {
    m2m.push_back(contracting[0]);
    for (int64_t d : free) m2m.push_back(d);
  } else {
    for (int64_t d : free) m2m.push_back(d);
    m2m.push_back(contracting[0]);
  }
  for (auto it = batch.rbegin(); it != batch.rend(); ++it) m2m.push_back(*it);
  return WithMinorToMajor(operand, std::move(m2m));
}

std::vector<int64_t> ConvolutionInputLayout(const ConvolutionDimensionNumbers& dn) {
  std::vector<int64_t> m2m = {dn.input_feature_dimension};
  for (auto it = dn.input_spatial_dimensions.rbegin(); it != dn.input_spatial_dimensions.rend(); ++it) {
    m2m.push_back(*it);
  }
  m2m.push_back(dn.input_batch_dimension);
  return m2m;
}

std::vector<int64_t> ConvolutionKernelLayout(const ConvolutionDimensionNumbers& dn) {
  std::vector<int64_t> m2m = {dn.kernel_output_feature_dimension, dn.kernel_input_feature_dimension};
  for (auto it = dn.kernel_spatial_dimensions.rbegin(); it != dn.kernel_spatial_dimensions.rend();
       ++it) {
    m2m.push_back(*it);
  }
  return m2m;
}

bool IsPermutation(const std::vector<int64_t>& m2m, int64_t rank) {
  if (static_cast<int64_t>(m2m.size()) != rank) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : m2m) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// Whether a convolution takes its input in the channels-major layout it has
// (NCHW, NCW: batch major, the feature dimension major to every spatial
// one) instead of a copy to channels-minor: no feature or batch groups, no
// base dilation, fewer than 16 output features, and a default-layout result
// that is channels-major too. Such a convolution runs as im2col + GEMM in
// any layout (the direct kernel wants 16 or more output features), and
// with the features minor its GEMM has so few columns that OpenBLAS spends
// more time packing the im2col image than multiplying (equinox_conv1d, 8
// output features: 39% of its time in sgemm_incopy, 21% in the input's
// transpose). Channels-major, the image is built along the spatial
// dimensions and each image's GEMM has as few rows as there are output
// features, which the few-row kernels (runtime/blas/small_gemm.h) run
// without packing, and nothing is transposed.
bool KeepsChannelsMajorInput(const Instruction& convolution, const Shape& input) {
  if (!IsPlainArray(input) || convolution.operand_count() != 2) return false;
  const InstructionAttributes& attrs = convolution.attrs();
  if (attrs.feature_group_count != 1 || attrs.batch_group_count != 1) return false;
  for (const WindowDimension& w : attrs.window) {
    if (w.base_dilation != 1) return false;
  }
  const ConvolutionDimensionNumbers& dn = attrs.convolution_dimension_numbers;
  const Shape& kernel = convolution.operand(1)->shape();
  if (!kernel.IsArray() || dn.kernel_output_feature_dimension >= kernel.rank() ||
      kernel.dimensions(dn.kernel_output_feature_dimension) >= 16) {
    return false;
  }
  // Position of each dimension from the minor end.
  auto position = [](const Shape& shape, int64_t dimension) {
    const std::vector<int64_t>& m2m = shape.layout().minor_to_major;
    return std::find(m2m.begin(), m2m.end(), dimension) - m2m.begin();
  };
  if (position(input, dn.input_batch_dimension) != input.rank() - 1) return false;
  for (int64_t d : dn.input_spatial_dimensions) {
    if (position(input, dn.input_feature_dimension) < position(input, d)) return false;
  }
  // The result's default layout: dimension d is major to d + 1.
  for (int64_t d : dn.output_spatial_dimensions) {
    if (dn.output_feature_dimension > d) return false;
  }
  return dn.output_batch_dimension < dn.output_feature_dimension;
}

class Assigner {
 public:
  Assigner(Module* module, const AssignLayoutsOptions& options)
      : module_(module), options_(options) {}

  absl::Status Run() {
    Reset();
    for (Computation* computation : ComputationsOf(*module_)) {
      XJIT_RETURN_IF_ERROR(AssignComputation(computation));
    }
    // A constant all of whose users took a relaid-out copy is replaced by it,
    // under its name.
    absl::flat_hash_set<const Instruction*> removed;
    for (auto [relaid, original] : relaid_constants_) {
      if (removed.contains(original)) continue;
      if (!original->users().empty() || original->parent()->root() == original) continue;
      removed.insert(original);
      std::string name = original->name();
      original->parent()->RemoveInstruction(original);
      relaid->set_name(std::move(name));
    }
    for (Computation* computation : ComputationsOf(*module_)) {
      RemoveIdentityCopies(computation);
      computation->SortTopologically();
    }
    return absl::OkStatus();
  }

 private:
  // Step 1.
  void Reset() {
    Computation* entry = module_->entry();
    for (Computation* computation : ComputationsOf(*module_)) {
      for (Instruction* instruction : InstructionsOf(*computation)) {
        std::vector<Shape> operand_shapes;
        for (const Instruction* operand : instruction->operands()) {
          operand_shapes.push_back(operand->shape());
        }
        original_operand_shapes_[instruction] = std::move(operand_shapes);
      }
    }
    desired_entry_root_ = module_->entry_result_layout().has_value()
                              ? *module_->entry_result_layout()
                              : entry->root()->shape();
    for (Computation* computation : ComputationsOf(*module_)) {
      for (Instruction* instruction : InstructionsOf(*computation)) {
        const Opcode opcode = instruction->opcode();
        if (computation == entry && opcode == Opcode::kParameter) {
          const int64_t number = instruction->attrs().parameter_number;
          if (module_->entry_parameter_layouts().has_value() &&
              number < static_cast<int64_t>(module_->entry_parameter_layouts()->size())) {
            *instruction->mutable_shape() = (*module_->entry_parameter_layouts())[number];
          }
          continue;
        }
        if (opcode == Opcode::kBitcast || opcode == Opcode::kCustomCall) continue;
        Shape reset = WithAllDefaultLayouts(instruction->shape());
        if (reset == instruction->shape()) continue;
        if (opcode == Opcode::kConstant) instruction->set_literal(instruction->literal().Relayout(reset));
        *instruction->mutable_shape() = std::move(reset);
      }
    }
    // The entry's root tuple takes the caller's layouts now, so that consumers
    // deciding earlier (a transpose feeding the tuple) see them.
    if (entry->root()->opcode() == Opcode::kTuple) {
      *entry->root()->mutable_shape() = desired_entry_root_;
    }
  }

  // The layout `user` needs for operand `i`, whose shape is `current`;
  // `current` itself when it is accepted.
  Shape Required(const Instruction& user, int64_t i, const Shape& current) {
    if (!current.IsArray() && !current.IsTuple()) return current;
    switch (user.opcode()) {
      case Opcode::kCopy:
      case Opcode::kGetTupleElement:
        return current;
      case Opcode::kTranspose:
        if (free_moves_.contains(&user)) return current;
        break;
      case Opcode::kBitcast: {
        auto it = original_operand_shapes_.find(&user);
        if (it == original_operand_shapes_.end()) return current;
        return it->second[i];
      }
      case Opcode::kCustomCall: {
        if (user.attrs().has_operand_layout_constraints &&
            i < static_cast<int64_t>(user.attrs().operand_layout_constraints.size())) {
          return user.attrs().operand_layout_constraints[i];
        }
        auto it = original_operand_shapes_.find(&user);
        if (it == original_operand_shapes_.end()) return current;
        return it->second[i];
      }
      case Opcode::kTuple:
        return user.shape().tuple_shapes(i);
      case Opcode::kDot:
        return RequiredDotOperand(user, i, current);
      case Opcode::kConvolution:
        if (i == 0 && KeepsChannelsMajorInput(user, current)) return current;
        if (options_.canonical_convolution_layouts && current.IsArray()) {
          const auto& dn = user.attrs().convolution_dimension_numbers;
          std::vector<int64_t> m2m = i == 0 ? ConvolutionInputLayout(dn) : ConvolutionKernelLayout(dn);
          if (IsPermutation(m2m, current.rank())) return WithMinorToMajor(current, std::move(m2m));
        }
        break;
      case Opcode::kReduce: {
        const int64_t inputs = user.operand_count() / 2;
        if (i >= inputs || !current.IsArray()) break;
        const Shape& first = user.operand(0)->shape();
        if (i == 0) return IsPlainArray(current) ? current : WithAllDefaultLayouts(current);
        if (IsPlainArray(first)) return WithMinorToMajor(current, first.layout().minor_to_major);
        break;
      }
      default:
        break;
    }
    return WithAllDefaultLayouts(current);
  }

  Shape RequiredDotOperand(const Instruction& dot, int64_t i, const Shape& current) {
    const DotDimensionNumbers& dn = dot.attrs().dot_dimension_numbers;
    const auto& batch = i == 0 ? dn.lhs_batch_dimensions : dn.rhs_batch_dimensions;
    const auto& contracting = i == 0 ? dn.lhs_contracting_dimensions : dn.rhs_contracting_dimensions;
    if (!FitsGemm(current, batch, contracting)) return WithAllDefaultLayouts(current);
    if (IsGemmOperandLayout(current, batch, contracting)) return current;
    Shape plain = WithAllDefaultLayouts(current);
    if (IsGemmOperandLayout(plain, batch, contracting)) return plain;
    return GemmLayout(current, batch, contracting, /*is_lhs=*/i == 0);
  }

  // The shape the root of `computation` must have.
  Shape DesiredRoot(const Computation* computation) {
    if (computation == module_->entry()) return desired_entry_root_;
    return WithAllDefaultLayouts(computation->root()->shape());
  }

  bool AllUsersAccept(Instruction* instruction, const Shape& candidate) {
    Computation* computation = instruction->parent();
    if (computation->root() == instruction && DesiredRoot(computation) != candidate) return false;
    for (Instruction* user : instruction->users()) {
      for (int64_t i = 0; i < user->operand_count(); ++i) {
        if (user->operand(i) == instruction && Required(*user, i, candidate) != candidate) {
          return false;
        }
      }
    }
    return true;
  }

  // Whether `instruction` is its computation's root, or an operand of a root
  // tuple, whose required layout there is `candidate`. A value the result
  // takes in another layout costs a copy that nothing can fuse away (the
  // result's bytes must be written), so a transpose that is free in the
  // result's layout takes it, and its other users get the copy instead,
  // which fuses into their loops as a transposed read (mlp_train's weight
  // gradients: JAX asks for them as {0,1}, docs/models.md).
  bool RootWants(const Instruction& instruction, const Shape& candidate) {
    const Computation* computation = instruction.parent();
    const Instruction* root = computation->root();
    const Shape desired = DesiredRoot(computation);
    if (root == &instruction) return desired == candidate;
    if (root->opcode() != Opcode::kTuple || !desired.IsTuple()) return false;
    for (int64_t i = 0; i < root->operand_count(); ++i) {
      if (root->operand(i) == &instruction && i < desired.tuple_size() &&
          desired.tuple_shapes(i) == candidate) {
        return true;
      }
    }
    return false;
  }

  // The operand of `transpose` stored so that the transpose moves nothing.
  static std::optional<Shape> BitcastLayoutOfTranspose(const Instruction& transpose) {
    const Shape& operand = transpose.operand(0)->shape();
    if (!IsPlainArray(operand) || operand.is_dynamic() || transpose.shape().is_dynamic()) {
      return std::nullopt;
    }
    const std::vector<int64_t>& perm = transpose.attrs().dimensions;
    if (static_cast<int64_t>(perm.size()) != operand.rank()) return std::nullopt;
    std::vector<int64_t> result_dim_of(operand.rank());
    for (int64_t j = 0; j < operand.rank(); ++j) result_dim_of[perm[j]] = j;
    std::vector<int64_t> m2m;
    for (int64_t d : operand.layout().minor_to_major) m2m.push_back(result_dim_of[d]);
    return WithMinorToMajor(transpose.shape(), std::move(m2m));
  }

  absl::StatusOr<Instruction*> Convert(Instruction* operand, const Shape& shape) {
    const std::pair<Instruction*, std::string> key = {operand, shape.ToString()};
    auto it = conversions_.find(key);
    if (it != conversions_.end()) return it->second;
    Computation* computation = operand->parent();
    Instruction* converted;
    if (operand->opcode() == Opcode::kConstant) {
      converted = AddConstant(computation, operand->literal().Relayout(shape), operand->name());
      relaid_constants_.push_back({converted, operand});
    } else if (shape.IsTuple()) {
      // Element by element (the kernels copy arrays, not tuples).
      NewInstruction tuple;
      tuple.opcode = Opcode::kTuple;
      tuple.shape = shape;
      for (int64_t i = 0; i < shape.tuple_size(); ++i) {
        NewInstruction element;
        element.opcode = Opcode::kGetTupleElement;
        element.operands = {operand};
        element.attrs.tuple_index = i;
        element.shape = operand->shape().tuple_shapes(i);
        XJIT_ASSIGN_OR_RETURN(Instruction* gte, AddInstruction(computation, std::move(element)));
        if (gte->shape() == shape.tuple_shapes(i)) {
          tuple.operands.push_back(gte);
        } else {
          XJIT_ASSIGN_OR_RETURN(Instruction* copy, Convert(gte, shape.tuple_shapes(i)));
          tuple.operands.push_back(copy);
        }
      }
      XJIT_ASSIGN_OR_RETURN(converted, AddInstruction(computation, std::move(tuple)));
    } else {
      NewInstruction spec;
      spec.opcode = Opcode::kCopy;
      spec.operands = {operand};
      spec.shape = shape;
      spec.name = absl::StrCat(operand->name(), ".copy");
      XJIT_ASSIGN_OR_RETURN(converted, AddInstruction(computation, std::move(spec)));
    }
    conversions_[key] = converted;
    return converted;
  }

  // A dot whose only user is a transpose: the result layout (still a
  // GEMM's output: batch dimensions major, its lhs-free and rhs-free
  // dimension groups minor in either order; an outer product, with no
  // contracting dimension, included) under which that transpose, in the default layout,
  // moves nothing. The GEMM then writes the transposed matrix itself (a
  // column-major C costs BLAS nothing), instead of a consumer reading the
  // row-major result down its columns (a gradient accumulated as
  // `w + transpose(dot)`, as a scan's backward pass does every step).
  // Not when the transpose is a result whose required layout makes it free
  // as the dot stands (see RootWants): the GEMM's row-major C is then the
  // result itself, and only the transpose's other users read it transposed.
  std::optional<Shape> DotLayoutForTransposedUse(const Instruction& dot) {
    if (dot.users().size() != 1 || dot.parent()->root() == &dot) return std::nullopt;
    const Instruction& user = *dot.users()[0];
    if (user.opcode() != Opcode::kTranspose || user.parent() != dot.parent() ||
        !IsPlainArray(dot.shape()) || dot.shape().is_dynamic()) {
      return std::nullopt;
    }
    if (std::optional<Shape> free = BitcastLayoutOfTranspose(user);
        free.has_value() && RootWants(user, *free)) {
      return std::nullopt;
    }
    const DotDimensionNumbers& dn = dot.attrs().dot_dimension_numbers;
    const int64_t rank = dot.shape().rank();
    const int64_t batch = static_cast<int64_t>(dn.lhs_batch_dimensions.size());
    const std::vector<int64_t>& perm = user.attrs().dimensions;
    if (static_cast<int64_t>(perm.size()) != rank) return std::nullopt;
    // The dot's result dimensions are batch, then the lhs's free ones, then
    // the rhs's (each group in operand order). The GEMM can write C
    // column-major for free, which in general is the two free groups swapped
    // with each group's order kept: [batch..., rhs free..., lhs free...]
    // major to minor. Any other order would break a free group apart, so
    // that the strided plan could not merge it into one matrix dimension.
    const int64_t lhs_free = dot.operand(0)->shape().rank() - batch -
                             static_cast<int64_t>(dn.lhs_contracting_dimensions.size());
    const int64_t rhs_free = rank - batch - lhs_free;
    if (lhs_free <= 0 || rhs_free <= 0) return std::nullopt;
    // Transpose result dimension j is dot dimension perm[j]; the default
    // layout of the result is major-to-minor 0..rank-1, so the dot's
    // major-to-minor order must be perm itself.
    std::vector<int64_t> wanted;
    for (int64_t j = 0; j < batch; ++j) wanted.push_back(j);  // Batch dimensions stay major.
    for (int64_t j = 0; j < rhs_free; ++j) wanted.push_back(batch + lhs_free + j);
    for (int64_t j = 0; j < lhs_free; ++j) wanted.push_back(batch + j);
    if (perm != wanted) return std::nullopt;
    std::vector<int64_t> m2m(perm.rbegin(), perm.rend());
    Shape candidate = WithMinorToMajor(dot.shape(), std::move(m2m));
    if (candidate == dot.shape()) return std::nullopt;
    return candidate;
  }

  absl::Status AssignComputation(Computation* computation) {
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (instruction->parent() != computation) continue;
      if (instruction->opcode() == Opcode::kDot) {
        if (std::optional<Shape> layout = DotLayoutForTransposedUse(*instruction)) {
          *instruction->mutable_shape() = *layout;
        }
      }
      if (instruction->opcode() == Opcode::kTranspose) {
        std::optional<Shape> candidate = BitcastLayoutOfTranspose(*instruction);
        if (candidate.has_value() &&
            (IsDefaultPlain(*candidate) || AllUsersAccept(instruction, *candidate) ||
             RootWants(*instruction, *candidate))) {
          *instruction->mutable_shape() = *candidate;
          free_moves_.insert(instruction);
          continue;
        }
      }
      if (instruction->opcode() == Opcode::kGetTupleElement) {
        const Shape& tuple = instruction->operand(0)->shape();
        const int64_t index = instruction->attrs().tuple_index;
        if (tuple.IsTuple() && index >= 0 && index < tuple.tuple_size()) {
          *instruction->mutable_shape() = tuple.tuple_shapes(index);
        }
      }
      for (int64_t i = 0; i < instruction->operand_count(); ++i) {
        Instruction* operand = instruction->operand(i);
        Shape required = Required(*instruction, i, operand->shape());
        if (required == operand->shape()) continue;
        XJIT_ASSIGN_OR_RETURN(Instruction * converted, Convert(operand, required));
        instruction->ReplaceOperand(i, converted);
      }
    }
    Instruction* root = computation->root();
    Shape desired = DesiredRoot(computation);
    if (root->shape() != desired) {
      XJIT_ASSIGN_OR_RETURN(Instruction * converted, Convert(root, desired));
      computation->set_root(converted);
    }
    return absl::OkStatus();
  }

  // Copies whose operand already has their layout (the reset made them so)
  // are dropped, except at a root, where a copy keeps the result distinct
  // from a parameter.
  void RemoveIdentityCopies(Computation* computation) {
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (instruction->opcode() != Opcode::kCopy || computation->root() == instruction) continue;
      if (instruction->operand(0)->shape() != instruction->shape()) continue;
      if (HasControlEdges(*instruction)) continue;
      ReplaceInstruction(instruction, instruction->operand(0));
    }
  }

  Module* module_;
  AssignLayoutsOptions options_;
  Shape desired_entry_root_;
  absl::flat_hash_map<const Instruction*, std::vector<Shape>> original_operand_shapes_;
  // Transposes given the layout that makes them move nothing.
  absl::flat_hash_set<const Instruction*> free_moves_;
  std::map<std::pair<Instruction*, std::string>, Instruction*> conversions_;
  std::vector<std::pair<Instruction*, Instruction*>> relaid_constants_;  // (new, original)
};

}  // namespace

bool IsGemmOperandLayout(const Shape& operand, absl::Span<const int64_t> batch_dimensions,
                         absl::Span<const int64_t> contracting_dimensions) {
  if (!IsPlainArray(operand) || !FitsGemm(operand, batch_dimensions, contracting_dimensions)) {
    return false;
  }
  const std::vector<int64_t>& m2m = operand.layout().minor_to_major;
  const int64_t rank = operand.rank();
  for (size_t j = 0; j < batch_dimensions.size(); ++j) {
    if (m2m[rank - 1 - j] != batch_dimensions[j]) return false;
  }
  return true;
}

std::optional<DotGemmForm> ComputeDotGemmForm(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) return std::nullopt;
  const DotDimensionNumbers& dn = dot.attrs().dot_dimension_numbers;
  const Shape& lhs = dot.operand(0)->shape();
  const Shape& rhs = dot.operand(1)->shape();
  const Shape& out = dot.shape();
  if (!IsGemmOperandLayout(lhs, dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions) ||
      !IsGemmOperandLayout(rhs, dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions) ||
      !IsDefaultPlain(out) || dn.lhs_batch_dimensions.size() != dn.rhs_batch_dimensions.size()) {
    return std::nullopt;
  }
  DotGemmForm form;
  for (int64_t d : dn.lhs_batch_dimensions) form.batch *= lhs.dimensions(d);
  const int64_t lhs_k = dn.lhs_contracting_dimensions[0];
  const int64_t rhs_k = dn.rhs_contracting_dimensions[0];
  form.k = lhs.dimensions(lhs_k);
  std::vector<int64_t> lhs_free =
      FreeDimensions(lhs.rank(), dn.lhs_batch_dimensions, dn.lhs_contracting_dimensions);
  std::vector<int64_t> rhs_free =
      FreeDimensions(rhs.rank(), dn.rhs_batch_dimensions, dn.rhs_contracting_dimensions);
  if (!lhs_free.empty()) {
    form.m = lhs.dimensions(lhs_free[0]);
    form.transpose_a = lhs.layout().minor_to_major[0] == lhs_free[0];
  }
  if (!rhs_free.empty()) {
    form.n = rhs.dimensions(rhs_free[0]);
    form.transpose_b = rhs.layout().minor_to_major[0] == rhs_k;
  }
  form.lda = form.transpose_a ? form.m : form.k;
  form.ldb = form.transpose_b ? form.k : form.n;
  form.ldc = form.n;
  form.stride_a = form.m * form.k;
  form.stride_b = form.k * form.n;
  form.stride_c = form.m * form.n;
  return form;
}

namespace {

// What the pass may change of an instruction: its shape (layouts included),
// its operands, and which instructions there are. Comparing these is much
// cheaper than printing the module.
struct InstructionState {
  const Instruction* instruction;
  Shape shape;
  std::vector<const Instruction*> operands;
  bool operator==(const InstructionState&) const = default;
};

std::vector<InstructionState> Snapshot(const Module& module) {
  std::vector<InstructionState> out;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      out.push_back({instruction.get(), instruction->shape(),
                     {instruction->operands().begin(), instruction->operands().end()}});
    }
  }
  return out;
}

}  // namespace

absl::StatusOr<bool> AssignLayouts::Run(Module* module) {
  if (module->entry() == nullptr || module->entry()->root() == nullptr) {
    return absl::InvalidArgumentError("assign-layouts: the module has no entry computation");
  }
  const std::vector<InstructionState> before = Snapshot(*module);
  Assigner assigner(module, options_);
  XJIT_RETURN_IF_ERROR(assigner.Run());
  return Snapshot(*module) != before;
}

}  // namespace xjit
