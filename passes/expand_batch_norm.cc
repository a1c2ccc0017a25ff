#include "passes/expand_batch_norm.h"

#include <memory>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// Types narrower than f32 compute in f32 and round once at the end, as the
// evaluator (which computes in double) nearly does; N itself may not even be
// representable in f16.
ElementType ComputeType(ElementType type) {
  return (type == ElementType::kF64 || type == ElementType::kF32) ? type : ElementType::kF32;
}

class Expander {
 public:
  Expander(Module* module, Computation* computation, SideEffectCache* effects)
      : module_(module), c_(computation), effects_(effects) {}

  absl::StatusOr<bool> Run() {
    bool changed = false;
    for (Instruction* instruction : InstructionsOf(*c_)) {
      const Opcode opcode = instruction->opcode();
      if (opcode != Opcode::kBatchNormTraining && opcode != Opcode::kBatchNormInference &&
          opcode != Opcode::kBatchNormGrad) {
        continue;
      }
      if (HasControlEdges(*instruction)) continue;
      XJIT_RETURN_IF_ERROR(Expand(instruction));
      changed = true;
    }
    if (changed) {
      RemoveDeadInstructions(c_, effects_);
      c_->SortTopologically();
    }
    return changed;
  }

 private:
  absl::StatusOr<Instruction*> Op(Opcode opcode, std::vector<Instruction*> operands,
                                  std::optional<Shape> shape = std::nullopt) {
    NewInstruction spec;
    spec.opcode = opcode;
    spec.operands = std::move(operands);
    spec.shape = std::move(shape);
    return AddInstruction(c_, std::move(spec));
  }

  // `value` converted to `shape` (type and layout) when it differs.
  absl::StatusOr<Instruction*> ConvertTo(Instruction* value, const Shape& shape) {
    if (value->shape() == shape) return value;
    if (value->shape().element_type() == shape.element_type()) {
      return Op(Opcode::kCopy, {value}, shape);
    }
    return Op(Opcode::kConvert, {value}, shape);
  }

  absl::StatusOr<Instruction*> ToCompute(Instruction* value) {
    Shape shape = Shape::Array(type_, value->shape().dimensions());
    return ConvertTo(value, shape);
  }

  absl::StatusOr<Instruction*> Splat(double value, absl::Span<const int64_t> dimensions) {
    Instruction* scalar = AddConstant(c_, Literal::Scalar(type_, value));
    return AddBroadcastScalar(c_, scalar, Shape::Array(type_, dimensions));
  }

  // A per-feature vector [F] spread along the feature dimension of x.
  absl::StatusOr<Instruction*> PerFeature(Instruction* vector) {
    NewInstruction spec;
    spec.opcode = Opcode::kBroadcast;
    spec.operands = {vector};
    spec.attrs.dimensions = {feature_};
    spec.attrs.has_dimensions = true;
    spec.shape = Shape::Array(type_, dims_);
    return AddInstruction(c_, std::move(spec));
  }

  absl::StatusOr<Computation*> Adder() {
    auto it = adders_.find(type_);
    if (it != adders_.end()) return it->second;
    auto owned = std::make_unique<Computation>(
        UniqueComputationName(*module_, absl::StrCat("add_", ElementTypeName(type_))));
    Computation* adder = owned.get();
    std::vector<Instruction*> parameters;
    for (int64_t i = 0; i < 2; ++i) {
      auto parameter = std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(type_));
      parameter->mutable_attrs()->parameter_number = i;
      parameter->set_name(i == 0 ? "lhs" : "rhs");
      parameters.push_back(adder->AddInstruction(std::move(parameter)));
    }
    NewInstruction add;
    add.opcode = Opcode::kAdd;
    add.operands = parameters;
    XJIT_ASSIGN_OR_RETURN(Instruction * sum, AddInstruction(adder, std::move(add)));
    adder->set_root(sum);
    module_->AddComputation(std::move(owned));
    adders_[type_] = adder;
    return adder;
  }

  // The sum over every dimension but the feature one: [F].
  absl::StatusOr<Instruction*> Sum(Instruction* value) {
    XJIT_ASSIGN_OR_RETURN(Computation * adder, Adder());
    Instruction* zero = AddConstant(c_, Literal::Scalar(type_, 0.0));
    NewInstruction spec;
    spec.opcode = Opcode::kReduce;
    spec.operands = {value, zero};
    for (int64_t d = 0; d < static_cast<int64_t>(dims_.size()); ++d) {
      if (d != feature_) spec.attrs.dimensions.push_back(d);
    }
    spec.attrs.has_dimensions = true;
    spec.called_computations = {adder};
    return AddInstruction(c_, std::move(spec));
  }

  absl::Status Expand(Instruction* bn) {
    const Shape& x_shape = bn->operand(0)->shape();
    type_ = ComputeType(x_shape.element_type());
    dims_.assign(x_shape.dimensions().begin(), x_shape.dimensions().end());
    feature_ = bn->attrs().feature_index;
    const int64_t features = dims_[feature_];
    const std::vector<int64_t> f_dims = {features};
    const double count = features == 0 ? 0.0
                                       : static_cast<double>(x_shape.element_count()) / features;
    const double epsilon = static_cast<float>(bn->attrs().epsilon);  // an f32 attribute

    std::vector<Instruction*> in;
    for (Instruction* operand : bn->operands()) {
      XJIT_ASSIGN_OR_RETURN(Instruction * converted, ToCompute(operand));
      in.push_back(converted);
    }
    Instruction* x = in[0];
    // rsqrt(var + eps) and x - mean, given var and mean as [F].
    auto scale_factor = [&](Instruction* var) -> absl::StatusOr<Instruction*> {
      XJIT_ASSIGN_OR_RETURN(Instruction * eps, Splat(epsilon, f_dims));
      XJIT_ASSIGN_OR_RETURN(Instruction * shifted, Op(Opcode::kAdd, {var, eps}));
      return Op(Opcode::kRsqrt, {shifted});
    };
    auto centred = [&](Instruction* mean) -> absl::StatusOr<Instruction*> {
      XJIT_ASSIGN_OR_RETURN(Instruction * spread, PerFeature(mean));
      return Op(Opcode::kSubtract, {x, spread});
    };
    // y = xc * (scale * r) + offset, with the final op in `shape`.
    auto normalise = [&](Instruction* xc, Instruction* scale, Instruction* r, Instruction* offset)
        -> absl::StatusOr<Instruction*> {
      XJIT_ASSIGN_OR_RETURN(Instruction * k, Op(Opcode::kMultiply, {scale, r}));
      XJIT_ASSIGN_OR_RETURN(Instruction * k_spread, PerFeature(k));
      XJIT_ASSIGN_OR_RETURN(Instruction * scaled, Op(Opcode::kMultiply, {xc, k_spread}));
      XJIT_ASSIGN_OR_RETURN(Instruction * offset_spread, PerFeature(offset));
      return Op(Opcode::kAdd, {scaled, offset_spread});
    };
    auto divide_by_count = [&](Instruction* value) -> absl::StatusOr<Instruction*> {
      XJIT_ASSIGN_OR_RETURN(Instruction * n, Splat(count, f_dims));
      return Op(Opcode::kDivide, {value, n});
    };

    std::vector<Instruction*> results;
    switch (bn->opcode()) {
      case Opcode::kBatchNormInference: {
        XJIT_ASSIGN_OR_RETURN(Instruction * xc, centred(in[3]));
        XJIT_ASSIGN_OR_RETURN(Instruction * r, scale_factor(in[4]));
        XJIT_ASSIGN_OR_RETURN(Instruction * y, normalise(xc, in[1], r, in[2]));
        results = {y};
        break;
      }
      case Opcode::kBatchNormTraining: {
        XJIT_ASSIGN_OR_RETURN(Instruction * sum, Sum(x));
        XJIT_ASSIGN_OR_RETURN(Instruction * mean, divide_by_count(sum));
        XJIT_ASSIGN_OR_RETURN(Instruction * xc, centred(mean));
        XJIT_ASSIGN_OR_RETURN(Instruction * square, Op(Opcode::kMultiply, {xc, xc}));
        XJIT_ASSIGN_OR_RETURN(Instruction * square_sum, Sum(square));
        XJIT_ASSIGN_OR_RETURN(Instruction * var, divide_by_count(square_sum));
        XJIT_ASSIGN_OR_RETURN(Instruction * r, scale_factor(var));
        XJIT_ASSIGN_OR_RETURN(Instruction * y, normalise(xc, in[1], r, in[2]));
        results = {y, mean, var};
        break;
      }
      case Opcode::kBatchNormGrad: {
        Instruction* scale = in[1];
        Instruction* dy = in[4];
        XJIT_ASSIGN_OR_RETURN(Instruction * xc, centred(in[2]));
        XJIT_ASSIGN_OR_RETURN(Instruction * r, scale_factor(in[3]));
        XJIT_ASSIGN_OR_RETURN(Instruction * doffset, Sum(dy));
        XJIT_ASSIGN_OR_RETURN(Instruction * dy_xc, Op(Opcode::kMultiply, {dy, xc}));
        XJIT_ASSIGN_OR_RETURN(Instruction * s, Sum(dy_xc));
        XJIT_ASSIGN_OR_RETURN(Instruction * dscale, Op(Opcode::kMultiply, {s, r}));
        // dx = (scale * r) * (dy - doffset / N - xc * (s * r * r / N))
        XJIT_ASSIGN_OR_RETURN(Instruction * mean_dy, divide_by_count(doffset));
        XJIT_ASSIGN_OR_RETURN(Instruction * r2, Op(Opcode::kMultiply, {r, r}));
        XJIT_ASSIGN_OR_RETURN(Instruction * s_r2, Op(Opcode::kMultiply, {s, r2}));
        XJIT_ASSIGN_OR_RETURN(Instruction * c, divide_by_count(s_r2));
        XJIT_ASSIGN_OR_RETURN(Instruction * c_spread, PerFeature(c));
        XJIT_ASSIGN_OR_RETURN(Instruction * xc_c, Op(Opcode::kMultiply, {xc, c_spread}));
        XJIT_ASSIGN_OR_RETURN(Instruction * mean_dy_spread, PerFeature(mean_dy));
        XJIT_ASSIGN_OR_RETURN(Instruction * t0, Op(Opcode::kSubtract, {dy, mean_dy_spread}));
        XJIT_ASSIGN_OR_RETURN(Instruction * t1, Op(Opcode::kSubtract, {t0, xc_c}));
        XJIT_ASSIGN_OR_RETURN(Instruction * k, Op(Opcode::kMultiply, {scale, r}));
        XJIT_ASSIGN_OR_RETURN(Instruction * k_spread, PerFeature(k));
        XJIT_ASSIGN_OR_RETURN(Instruction * dx, Op(Opcode::kMultiply, {k_spread, t1}));
        results = {dx, dscale, doffset};
        break;
      }
      default:
        return absl::InternalError("not a batch-norm instruction");
    }

    // Back to the instruction's types and layouts.
    const Shape& shape = bn->shape();
    if (shape.IsArray()) {
      XJIT_ASSIGN_OR_RETURN(Instruction * y, ConvertTo(results[0], shape));
      XJIT_CHECK(ReplaceAllUses(bn, y));
      return absl::OkStatus();
    }
    std::vector<Instruction*> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      XJIT_ASSIGN_OR_RETURN(Instruction * element, ConvertTo(results[i], shape.tuple_shapes(i)));
      elements.push_back(element);
    }
    // get-tuple-element users take the element directly; anything else gets
    // a tuple.
    for (Instruction* user : std::vector<Instruction*>(bn->users())) {
      if (user->opcode() == Opcode::kGetTupleElement && user->attrs().tuple_index >= 0 &&
          user->attrs().tuple_index < shape.tuple_size()) {
        ReplaceAllUses(user, elements[user->attrs().tuple_index]);
      }
    }
    NewInstruction tuple;
    tuple.opcode = Opcode::kTuple;
    tuple.operands = elements;
    tuple.shape = shape;
    XJIT_ASSIGN_OR_RETURN(Instruction * result, AddInstruction(c_, std::move(tuple)));
    XJIT_CHECK(ReplaceAllUses(bn, result));
    return absl::OkStatus();
  }

  Module* module_;
  Computation* c_;
  SideEffectCache* effects_;
  absl::flat_hash_map<ElementType, Computation*> adders_;
  ElementType type_ = ElementType::kF32;
  std::vector<int64_t> dims_;
  int64_t feature_ = 0;
};

}  // namespace

absl::StatusOr<bool> ExpandBatchNorm::Run(Module* module) {
  bool changed = false;
  SideEffectCache effects;  // One walk per computation for the whole module.
  for (Computation* computation : ComputationsOf(*module)) {
    XJIT_ASSIGN_OR_RETURN(bool expanded, Expander(module, computation, &effects).Run());
    changed = changed || expanded;
  }
  return changed;
}

}  // namespace xjit
