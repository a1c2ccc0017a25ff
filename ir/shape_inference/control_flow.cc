// Shape rules of control flow and calls (while, conditional, call, fusion,
// custom-call) and of the asynchronous start/done pairs (copy-start,
// *-start, async-start, and the done forms that unpack their context). A
// called computation's parameters must match what the caller passes.
#include <cstdint>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

absl::StatusOr<Shape> InferWhile(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* init, ctx.Operand(0));
  XJIT_RETURN_IF_ERROR(ctx.ExpectCalledCount(2));
  XJIT_ASSIGN_OR_RETURN(const Computation* condition, ctx.Called(0, "condition"));
  XJIT_ASSIGN_OR_RETURN(const Computation* body, ctx.Called(1, "body"));
  XJIT_ASSIGN_OR_RETURN(Signature cond_sig, CheckParams(ctx, condition, "condition", {init}));
  if (!ShapesMatch(*cond_sig.result, Shape::Scalar(ElementType::kPred))) {
    return ctx.Error("condition computation %s must return pred[], returns %s",
                     condition->name(), Str(*cond_sig.result));
  }
  XJIT_ASSIGN_OR_RETURN(Signature body_sig, CheckParams(ctx, body, "body", {init}));
  if (!ShapesMatch(*body_sig.result, *init)) {
    return ctx.Error("body computation %s returns %s, but the loop state is %s", body->name(),
                     Str(*body_sig.result), Str(*init));
  }
  return WithDefaultLayout(*init);
}

absl::StatusOr<Shape> InferConditional(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* index, ctx.ScalarOperand(0, "branch index"));
  const int64_t branches = static_cast<int64_t>(ctx.instr.called_computations().size());
  if (index->element_type() == ElementType::kPred) {
    if (branches != 2) return ctx.Error("a pred index needs 2 branches, has %d", branches);
  } else if (index->element_type() == ElementType::kS32) {
    if (branches < 1) return ctx.Error("needs at least one branch computation");
  } else {
    return ctx.Error("branch index must be pred[] or s32[], got %s", Str(*index));
  }
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(branches + 1));
  const Shape* result = nullptr;
  for (int64_t b = 0; b < branches; ++b) {
    XJIT_ASSIGN_OR_RETURN(const Computation* branch, ctx.Called(b, "branch"));
    XJIT_ASSIGN_OR_RETURN(const Shape* arg, ctx.Operand(b + 1));
    XJIT_ASSIGN_OR_RETURN(Signature sig,
                          CheckParams(ctx, branch, absl::StrCat("branch ", b), {arg}));
    if (result == nullptr) {
      result = sig.result;
    } else if (!ShapesMatch(*sig.result, *result)) {
      return ctx.Error("branch %d computation %s returns %s, but branch 0 returns %s", b,
                       branch->name(), Str(*sig.result), Str(*result));
    }
  }
  return WithDefaultLayout(*result);
}

// call, fusion: the callee takes the operands and its root is the result.
absl::StatusOr<Shape> InferCall(const Ctx& ctx, absl::string_view role) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_RETURN_IF_ERROR(ctx.ExpectCalledCount(1));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, role));
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, role, OperandShapes(ctx)));
  return WithDefaultLayout(*sig.result);
}

absl::StatusOr<Shape> InferCustomCall(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  if (ctx.attrs.custom_call_target.empty()) return ctx.Error("custom_call_target is empty");
  if (ctx.attrs.has_operand_layout_constraints) {
    const auto& constraints = ctx.attrs.operand_layout_constraints;
    if (static_cast<int64_t>(constraints.size()) != ctx.operand_count()) {
      return ctx.Error("operand_layout_constraints has %d shapes for %d operands",
                       constraints.size(), ctx.operand_count());
    }
    for (int64_t i = 0; i < ctx.operand_count(); ++i) {
      if (!ShapesMatch(constraints[i], ctx.instr.operand(i)->shape())) {
        return ctx.Error("operand_layout_constraints shape %d %s differs from operand %s", i,
                         Str(constraints[i]), Str(ctx.instr.operand(i)->shape()));
      }
    }
  }
  for (const OutputOperandAlias& alias : ctx.attrs.output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= ctx.operand_count()) {
      return ctx.Error("output_to_operand_aliasing names operand %d, which does not exist",
                       alias.operand_number);
    }
  }
  for (size_t i = 0; i < ctx.instr.called_computations().size(); ++i) {
    XJIT_RETURN_IF_ERROR(ctx.Called(i, "called").status());
  }
  return ctx.GivenShape();
}

// ---------------------------------------------------------------------------
// Asynchronous pairs.

// The element `index` of the operand's tuple (copy-done, *-done).
absl::StatusOr<Shape> InferTupleElementOfOperand(const Ctx& ctx, int64_t index) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  if (!operand->IsTuple() || operand->tuple_size() <= index) {
    return ctx.Error("operand %s must be a tuple of at least %d elements", Str(*operand),
                     index + 1);
  }
  return WithDefaultLayout(operand->tuple_shapes(index));
}

absl::StatusOr<Shape> InferCopyStart(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.Operand(0));
  const Shape data = WithDefaultLayout(*operand);
  return Shape::Tuple({data, data, Shape::Scalar(ElementType::kU32)});
}

// The *-start forms whose context layout varies between XLA versions: the
// given tuple, checked to hold the operands and a result of the right kind.
absl::StatusOr<Shape> InferStartWithContext(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() < 2) {
    return ctx.Error("result must be a tuple of operands, results and context, got %s",
                     Str(given));
  }
  XJIT_ASSIGN_OR_RETURN(Shape operands, OperandsAsResult(ctx));
  if (!ShapesMatch(given.tuple_shapes(0), operands)) {
    return ctx.Error("result element 0 %s differs from the operands %s",
                     Str(given.tuple_shapes(0)), Str(operands));
  }
  return given;
}

absl::StatusOr<Shape> InferAsyncStart(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "async"));
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, "async", OperandShapes(ctx)));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() < 2) {
    return ctx.Error("result must be an ((operands), result, context...) tuple, got %s",
                     Str(given));
  }
  std::vector<Shape> operands;
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    operands.push_back(WithDefaultLayout(ctx.instr.operand(i)->shape()));
  }
  if (!ShapesMatch(given.tuple_shapes(0), Shape::Tuple(operands))) {
    return ctx.Error("result element 0 %s differs from the operands %s",
                     Str(given.tuple_shapes(0)), Str(Shape::Tuple(operands)));
  }
  if (!ShapesMatch(given.tuple_shapes(1), *sig.result)) {
    return ctx.Error("result element 1 %s differs from the async computation's result %s",
                     Str(given.tuple_shapes(1)), Str(*sig.result));
  }
  return given;
}

}  // namespace xjit::shape_inference_internal
