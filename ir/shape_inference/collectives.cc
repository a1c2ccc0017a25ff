// Shape rules of the cross-replica collectives: all-reduce, all-gather,
// reduce-scatter, all-to-all, ragged-all-to-all, collective-permute and
// collective-broadcast. Replica groups, when given, must be uniform; the
// group size scales the gathered or scattered dimension.
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/module.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

namespace {

// The size of each replica group when replica_groups are given and uniform;
// nullopt when the group spans devices the instruction does not name.
absl::StatusOr<std::optional<int64_t>> GroupSize(const Ctx& ctx) {
  const auto& groups = ctx.attrs.replica_groups;
  if (groups.empty()) return std::optional<int64_t>();
  const int64_t size = static_cast<int64_t>(groups[0].size());
  for (const auto& group : groups) {
    if (static_cast<int64_t>(group.size()) != size) {
      return ctx.Error("replica groups have different sizes");
    }
  }
  if (size == 0) return ctx.Error("replica groups are empty");
  // Each replica (or device) is in at most one group, at most once.
  absl::flat_hash_set<int64_t> seen;
  for (const auto& group : groups) {
    for (int64_t id : group) {
      if (id < 0) return ctx.Error("replica groups name a negative id %d", id);
      if (!seen.insert(id).second) {
        return ctx.Error("replica groups name id %d more than once", id);
      }
    }
  }
  // XLA's cross-replica-and-partition mode (channel_id on all-reduce,
  // all-gather or reduce-scatter without use_global_device_ids): the ids are
  // replicas, each with every partition of the module (none known: the
  // group size is not written).
  const Opcode opcode = ctx.instr.opcode();
  if (ctx.attrs.channel_id.has_value() && !ctx.attrs.use_global_device_ids &&
      (opcode == Opcode::kAllGather || opcode == Opcode::kAllGatherStart ||
       opcode == Opcode::kReduceScatter || opcode == Opcode::kAllReduce ||
       opcode == Opcode::kAllReduceStart)) {
    const Computation* computation = ctx.instr.parent();
    const Module* module = computation != nullptr ? computation->parent() : nullptr;
    if (module == nullptr) return std::optional<int64_t>();
    return std::optional<int64_t>(size * module->num_partitions());
  }
  return std::optional<int64_t>(size);
}

// A binary scalar reduction computation (T, T) -> T.
absl::Status CheckBinaryReducer(const Ctx& ctx) {
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "to_apply"));
  XJIT_ASSIGN_OR_RETURN(Signature sig, GetSignature(ctx, comp, "to_apply"));
  if (sig.params.size() != 2 || !sig.params[0]->IsScalar() || !sig.params[1]->IsScalar() ||
      !sig.result->IsScalar()) {
    return ctx.Error("to_apply computation %s must map two scalars to a scalar", comp->name());
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Shape> InferAllReduce(const Ctx& ctx) {
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_RETURN_IF_ERROR(ctx.ArrayOperand(i, absl::StrCat("operand ", i)).status());
  }
  XJIT_RETURN_IF_ERROR(GroupSize(ctx).status());
  XJIT_RETURN_IF_ERROR(CheckBinaryReducer(ctx));
  return OperandsAsResult(ctx);
}

// all-gather multiplies, reduce-scatter divides the dimension by the group
// size. With no replica groups the group size comes from the result shape.
absl::StatusOr<Shape> InferGatherOrScatterCollective(const Ctx& ctx, bool gather) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(std::optional<int64_t> group, GroupSize(ctx));
  if (!gather) XJIT_RETURN_IF_ERROR(CheckBinaryReducer(ctx));
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  const int64_t dim = ctx.attrs.dimensions[0];
  const Shape& given = ctx.instr.shape();
  std::vector<Shape> results;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    XJIT_RETURN_IF_ERROR(ctx.CheckDimension(dim, operand->rank(), "dimension"));
    const int64_t size = operand->dimensions(dim);
    // The group size written nowhere: read it off the given result.
    std::optional<int64_t> factor = group;
    const Shape* given_i = given.IsTuple() ? (i < given.tuple_size() ? &given.tuple_shapes(i)
                                                                     : nullptr)
                                           : (ctx.operand_count() == 1 ? &given : nullptr);
    if (!factor.has_value() && given_i != nullptr && given_i->IsArray() &&
        given_i->rank() == operand->rank() && !IsUnbounded(size)) {
      const int64_t g = given_i->dimensions(dim);
      if (gather && size > 0 && g >= 0 && g % size == 0) factor = g / size;
      if (!gather && g > 0 && size % g == 0) factor = size / g;
      if (size == 0 && g == 0) factor = 1;
    }
    if (!factor.has_value() || *factor <= 0) {
      return ctx.Error("cannot determine the group size for operand %s", Str(*operand));
    }
    std::vector<int64_t> dims = Dims(*operand);
    if (IsUnbounded(size)) {
      // Stays unbounded.
    } else if (gather) {
      if (MulOverflows(size, *factor, &dims[dim])) return ctx.Error("gathered size overflows");
    } else {
      if (size % *factor != 0) {
        return ctx.Error("dimension %d of size %d is not divisible by the group size %d", dim,
                         size, *factor);
      }
      dims[dim] = size / *factor;
    }
    results.push_back(MakeArray(operand->element_type(), dims, DynamicFlags(*operand)));
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferAllToAll(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(std::optional<int64_t> group, GroupSize(ctx));
  if (ctx.attrs.dimensions.empty()) {
    // The tuple form: one array per participant, exchanged whole.
    for (int64_t i = 0; i < ctx.operand_count(); ++i) {
      XJIT_RETURN_IF_ERROR(ctx.ArrayOperand(i, absl::StrCat("operand ", i)).status());
    }
    return OperandsAsResult(ctx, /*force_tuple=*/true);
  }
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one split dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const int64_t dim = ctx.attrs.dimensions[0];
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(dim, operand->rank(), "split dimension"));
  const int64_t size = operand->dimensions(dim);
  if (group.has_value() && !IsUnbounded(size) && size % *group != 0) {
    return ctx.Error("split dimension %d of size %d is not divisible by the group size %d", dim,
                     size, *group);
  }
  return WithDefaultLayout(*operand);
}

absl::StatusOr<Shape> InferCollectivePermute(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  for (const auto& [source, target] : ctx.attrs.source_target_pairs) {
    if (source < 0 || target < 0) {
      return ctx.Error("source_target_pairs has a negative id {%d,%d}", source, target);
    }
  }
  // The in-place form: (input, output, input start indices, output start
  // indices) writes into `output`.
  if (ctx.operand_count() == 4 && ctx.instr.operand(2)->shape().IsTuple()) {
    return WithDefaultLayout(ctx.instr.operand(1)->shape());
  }
  return OperandsAsResult(ctx);
}

absl::StatusOr<Shape> InferRaggedAllToAll(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(6));
  XJIT_ASSIGN_OR_RETURN(const Shape* input, ctx.ArrayOperand(0, "input"));
  XJIT_ASSIGN_OR_RETURN(const Shape* output, ctx.ArrayOperand(1, "output"));
  if (input->element_type() != output->element_type() || input->rank() != output->rank()) {
    return ctx.Error("input %s and output %s differ in element type or rank", Str(*input),
                     Str(*output));
  }
  for (int64_t i = 2; i < 6; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* s, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (!IsInteger(s->element_type())) {
      return ctx.Error("offset/size operand %d %s is not an integer array", i, Str(*s));
    }
  }
  return WithDefaultLayout(*output);
}

}  // namespace xjit::shape_inference_internal
