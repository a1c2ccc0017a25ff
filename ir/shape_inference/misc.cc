// Shape rules of the opcodes that belong to no larger family: sort and
// top-k, fft, cholesky, triangular-solve, batch-norm-*, the random number
// operations, and host transfer and channels (infeed, outfeed, send, recv and
// their done forms). Those whose result the operands do not determine check
// the instruction's own shape.
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit::shape_inference_internal {

absl::StatusOr<Shape> InferSort(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectMinOperandCount(1));
  std::vector<Shape> results;
  std::vector<Shape> scalars;
  XJIT_ASSIGN_OR_RETURN(const Shape* first, ctx.ArrayOperand(0, "operand 0"));
  for (int64_t i = 0; i < ctx.operand_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (!SameDimensions(*operand, *first)) {
      return ctx.Error("operand %d shape %s differs from operand 0's %s", i, Str(*operand),
                       Str(*first));
    }
    results.push_back(
        MakeArray(operand->element_type(), operand->dimensions(), DynamicFlags(*operand)));
    scalars.push_back(Shape::Scalar(operand->element_type()));
    scalars.push_back(Shape::Scalar(operand->element_type()));
  }
  if (ctx.attrs.dimensions.size() != 1) {
    return ctx.Error("dimensions must hold exactly one dimension, got %s",
                     DimsStr(ctx.attrs.dimensions));
  }
  XJIT_RETURN_IF_ERROR(ctx.CheckDimension(ctx.attrs.dimensions[0], first->rank(), "dimension"));
  XJIT_ASSIGN_OR_RETURN(const Computation* comp, ctx.Called(0, "comparator"));
  std::vector<const Shape*> args;
  for (const Shape& s : scalars) args.push_back(&s);
  XJIT_ASSIGN_OR_RETURN(Signature sig, CheckParams(ctx, comp, "comparator", args));
  if (!ShapesMatch(*sig.result, Shape::Scalar(ElementType::kPred))) {
    return ctx.Error("comparator must return pred[], returns %s", Str(*sig.result));
  }
  return results.size() == 1 ? results[0] : Shape::Tuple(std::move(results));
}

absl::StatusOr<Shape> InferTopK(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  if (operand->rank() < 1) return ctx.Error("operand must have rank >= 1");
  const int64_t k = ctx.attrs.k;
  const int64_t last = operand->dimensions(operand->rank() - 1);
  if (k < 0 || (!IsUnbounded(last) && k > last)) {
    return ctx.Error("k = %d is not within [0, %d] (the last dimension's size)", k, last);
  }
  std::vector<int64_t> dims = Dims(*operand);
  dims.back() = k;
  std::vector<bool> dynamic = DynamicFlags(*operand);
  dynamic.back() = false;
  return Shape::Tuple({MakeArray(operand->element_type(), dims, dynamic),
                       MakeArray(ElementType::kS32, dims, dynamic)});
}

// ---------------------------------------------------------------------------
// FFT and linear algebra.

absl::StatusOr<Shape> InferFft(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const auto& length = ctx.attrs.fft_length;
  const int64_t n = static_cast<int64_t>(length.size());
  if (n < 1 || n > 3) return ctx.Error("fft_length must have 1 to 3 entries, has %d", n);
  if (operand->rank() < n) {
    return ctx.Error("operand rank %d is less than the %d transformed dimensions",
                     operand->rank(), n);
  }
  for (int64_t l : length) {
    if (l < 0) return ctx.Error("fft_length %s has a negative entry", DimsStr(length));
  }
  const ElementType t = operand->element_type();
  std::vector<int64_t> dims = Dims(*operand);
  const int64_t first = operand->rank() - n;
  // Every transformed dimension but the last has size fft_length in both
  // domains; the last differs for the real transforms.
  for (int64_t i = 0; i + 1 < n; ++i) {
    if (!SizesMatch(dims[first + i], length[i])) {
      return ctx.Error("dimension %d has size %d but fft_length[%d] is %d", first + i,
                       dims[first + i], i, length[i]);
    }
  }
  int64_t& last = dims.back();
  ElementType result = t;
  switch (ctx.attrs.fft_type) {
    case FftType::kFft:
    case FftType::kIfft:
      if (!IsComplex(t)) return ctx.Error("operand element type %s is not complex", TypeName(t));
      if (!SizesMatch(last, length.back())) {
        return ctx.Error("last dimension has size %d but fft_length ends with %d", last,
                         length.back());
      }
      break;
    case FftType::kRfft:
      if (t != ElementType::kF32 && t != ElementType::kF64) {
        return ctx.Error("RFFT operand element type %s is not f32 or f64", TypeName(t));
      }
      if (!SizesMatch(last, length.back())) {
        return ctx.Error("last dimension has size %d but fft_length ends with %d", last,
                         length.back());
      }
      result = t == ElementType::kF32 ? ElementType::kC64 : ElementType::kC128;
      last = length.back() == 0 ? 0 : length.back() / 2 + 1;
      break;
    case FftType::kIrfft:
      if (!IsComplex(t)) {
        return ctx.Error("IRFFT operand element type %s is not complex", TypeName(t));
      }
      if (length.back() != 0 && !SizesMatch(last, length.back() / 2 + 1)) {
        return ctx.Error("IRFFT last dimension has size %d but fft_length %d needs %d", last,
                         length.back(), length.back() / 2 + 1);
      }
      result = ComplexComponentType(t);
      last = length.back();
      break;
  }
  return MakeArray(result, dims, DynamicFlags(*operand));
}

absl::StatusOr<Shape> InferCholesky(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ArrayOperand(0, "operand"));
  if (!IsFloatOrComplex(a->element_type())) {
    return ctx.Error("operand element type %s is not float or complex",
                     TypeName(a->element_type()));
  }
  if (a->rank() < 2) return ctx.Error("operand %s must have rank >= 2", Str(*a));
  if (!SizesMatch(a->dimensions(a->rank() - 1), a->dimensions(a->rank() - 2))) {
    return ctx.Error("operand %s is not square in its two minor dimensions", Str(*a));
  }
  return MakeArray(a->element_type(), a->dimensions(), DynamicFlags(*a));
}

absl::StatusOr<Shape> InferTriangularSolve(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ArrayOperand(0, "a"));
  XJIT_ASSIGN_OR_RETURN(const Shape* b, ctx.ArrayOperand(1, "b"));
  if (!IsFloatOrComplex(a->element_type())) {
    return ctx.Error("a element type %s is not float or complex", TypeName(a->element_type()));
  }
  if (a->element_type() != b->element_type()) {
    return ctx.Error("a element type %s differs from b's %s", TypeName(a->element_type()),
                     TypeName(b->element_type()));
  }
  if (a->rank() < 2 || a->rank() != b->rank()) {
    return ctx.Error("a %s and b %s must have the same rank, at least 2", Str(*a), Str(*b));
  }
  const int64_t r = a->rank();
  if (!SizesMatch(a->dimensions(r - 1), a->dimensions(r - 2))) {
    return ctx.Error("a %s is not square in its two minor dimensions", Str(*a));
  }
  for (int64_t i = 0; i + 2 < r; ++i) {
    if (!SizesMatch(a->dimensions(i), b->dimensions(i))) {
      return ctx.Error("batch dimension %d differs: a has %d, b has %d", i, a->dimensions(i),
                       b->dimensions(i));
    }
  }
  const int64_t solved = ctx.attrs.left_side ? b->dimensions(r - 2) : b->dimensions(r - 1);
  if (!SizesMatch(solved, a->dimensions(r - 1))) {
    return ctx.Error("b %s does not match a %s on the %s side", Str(*b), Str(*a),
                     ctx.attrs.left_side ? "left" : "right");
  }
  return MakeArray(b->element_type(), b->dimensions(), DynamicFlags(*b));
}

// batch-norm-*: operand 0 is the data; the others are rank-1 per-feature arrays.
absl::StatusOr<Shape> InferBatchNorm(const Ctx& ctx) {
  const Opcode opcode = ctx.instr.opcode();
  const int64_t count = opcode == Opcode::kBatchNormTraining ? 3 : 5;
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(count));
  XJIT_ASSIGN_OR_RETURN(const Shape* operand, ctx.ArrayOperand(0, "operand"));
  const ElementType t = operand->element_type();
  if (!IsFloat(t)) return ctx.Error("operand element type %s is not a float type", TypeName(t));
  if (operand->rank() < 1) return ctx.Error("operand must have rank >= 1");
  XJIT_RETURN_IF_ERROR(
      ctx.CheckDimension(ctx.attrs.feature_index, operand->rank(), "feature_index"));
  const int64_t features = operand->dimensions(ctx.attrs.feature_index);
  // For batch-norm-grad the last operand is grad_output, shaped like operand.
  const int64_t per_feature_end = opcode == Opcode::kBatchNormGrad ? count - 1 : count;
  for (int64_t i = 1; i < per_feature_end; ++i) {
    XJIT_ASSIGN_OR_RETURN(const Shape* s, ctx.ArrayOperand(i, absl::StrCat("operand ", i)));
    if (s->element_type() != t || s->rank() != 1 || !SizesMatch(s->dimensions(0), features)) {
      return ctx.Error("operand %d must be %s[%d] (one value per feature), got %s", i,
                       TypeName(t), features, Str(*s));
    }
  }
  const Shape data = MakeArray(t, operand->dimensions(), DynamicFlags(*operand));
  if (opcode == Opcode::kBatchNormGrad) {
    XJIT_ASSIGN_OR_RETURN(const Shape* grad, ctx.ArrayOperand(count - 1, "grad_output"));
    if (!ShapesMatch(*grad, data)) {
      return ctx.Error("grad_output %s differs from operand %s", Str(*grad), Str(*operand));
    }
  }
  if (opcode == Opcode::kBatchNormInference) return data;
  const Shape per_feature = MakeArray(t, {features});
  return Shape::Tuple({data, per_feature, per_feature});
}

// ---------------------------------------------------------------------------
// Random numbers.

absl::StatusOr<Shape> InferRng(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* a, ctx.ScalarOperand(0, "parameter a"));
  XJIT_ASSIGN_OR_RETURN(const Shape* b, ctx.ScalarOperand(1, "parameter b"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  const ElementType t = given.element_type();
  if (a->element_type() != t || b->element_type() != t) {
    return ctx.Error("parameters %s and %s must have the result element type %s", Str(*a),
                     Str(*b), TypeName(t));
  }
  if (ctx.attrs.distribution == RandomDistribution::kNormal) {
    if (!IsFloat(t)) return ctx.Error("rng_normal needs a float type, got %s", TypeName(t));
  } else if (!IsPred(t) && !IsInteger(t) && !IsFloat(t)) {
    return ctx.Error("rng_uniform needs a pred, integer or float type, got %s", TypeName(t));
  }
  return given;
}

absl::StatusOr<Shape> InferRngBitGenerator(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* state, ctx.ArrayOperand(0, "state"));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 2 || !given.tuple_shapes(1).IsArray()) {
    return ctx.Error("result must be a (state, output array) tuple, got %s", Str(given));
  }
  const ElementType out = given.tuple_shapes(1).element_type();
  if (!IsInteger(out) && !IsFloat(out) && !IsPred(out)) {
    return ctx.Error("output element type %s cannot hold random bits", TypeName(out));
  }
  if (state->rank() != 1) return ctx.Error("state %s must have rank 1", Str(*state));
  auto want_state = [&](int64_t size) -> absl::Status {
    if (state->element_type() != ElementType::kU64 || state->dimensions(0) != size) {
      return ctx.Error("%s needs state u64[%d], got %s",
                       RandomAlgorithmName(ctx.attrs.rng_algorithm), size, Str(*state));
    }
    return absl::OkStatus();
  };
  if (ctx.attrs.rng_algorithm == RandomAlgorithm::kThreeFry) XJIT_RETURN_IF_ERROR(want_state(2));
  if (ctx.attrs.rng_algorithm == RandomAlgorithm::kPhilox) XJIT_RETURN_IF_ERROR(want_state(3));
  return Shape::Tuple({MakeArray(state->element_type(), state->dimensions()),
                       given.tuple_shapes(1)});
}

absl::StatusOr<Shape> InferRngGetAndUpdateState(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenArrayShape());
  return given;
}

// ---------------------------------------------------------------------------
// Host transfer and channels.

absl::StatusOr<Shape> InferInfeed(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(0));
  if (!token->IsToken()) return ctx.Error("operand %s is not a token", Str(*token));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 2 || !given.tuple_shapes(1).IsToken()) {
    return ctx.Error("result must be a (data, token) tuple, got %s", Str(given));
  }
  return given;
}

absl::StatusOr<Shape> InferOutfeed(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* data, ctx.Operand(0));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(1));
  if (!token->IsToken()) return ctx.Error("operand 1 %s is not a token", Str(*token));
  if (ctx.attrs.outfeed_shape.has_value() && !ShapesMatch(*ctx.attrs.outfeed_shape, *data)) {
    return ctx.Error("outfeed_shape %s differs from the data shape %s",
                     Str(*ctx.attrs.outfeed_shape), Str(*data));
  }
  return Shape::Token();
}

absl::StatusOr<Shape> InferSend(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(2));
  XJIT_ASSIGN_OR_RETURN(const Shape* data, ctx.Operand(0));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(1));
  if (!token->IsToken()) return ctx.Error("operand 1 %s is not a token", Str(*token));
  return Shape::Tuple(
      {WithDefaultLayout(*data), Shape::Scalar(ElementType::kU32), Shape::Token()});
}

absl::StatusOr<Shape> InferRecv(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* token, ctx.Operand(0));
  if (!token->IsToken()) return ctx.Error("operand %s is not a token", Str(*token));
  XJIT_ASSIGN_OR_RETURN(Shape given, ctx.GivenShape());
  if (!given.IsTuple() || given.tuple_size() != 3 ||
      !ShapesMatch(given.tuple_shapes(1), Shape::Scalar(ElementType::kU32)) ||
      !given.tuple_shapes(2).IsToken()) {
    return ctx.Error("result must be a (data, u32[], token) tuple, got %s", Str(given));
  }
  return given;
}

// send-done / recv-done take the context tuple of send / recv.
absl::StatusOr<Shape> InferSendRecvDone(const Ctx& ctx) {
  XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(1));
  XJIT_ASSIGN_OR_RETURN(const Shape* context, ctx.Operand(0));
  if (!context->IsTuple() || context->tuple_size() != 3 || !context->tuple_shapes(2).IsToken()) {
    return ctx.Error("operand must be a (data, u32[], token) context, got %s", Str(*context));
  }
  if (ctx.instr.opcode() == Opcode::kSendDone) return Shape::Token();
  return Shape::Tuple({WithDefaultLayout(context->tuple_shapes(0)), Shape::Token()});
}

}  // namespace xjit::shape_inference_internal
