// Shape inference for every opcode of ir/opcode.h.
//
// Each rule reads only what its opcode needs: operand shapes, the typed
// attributes of InstructionAttributes and the signatures of called
// computations. Nothing here trusts its input: operands may be null, attribute
// indices out of range, sizes negative or huge; every such case is an error
// naming the opcode and the rule. Arithmetic on sizes is overflow-checked.
//
// Dimensions may be bounded-dynamic (the stored size is the bound, so rules
// treat them as static sizes and propagate the flag) or unbounded
// (Shape::kUnboundedSize): an unbounded size matches any size, and a result
// size computed from an unbounded one is unbounded.
//
// Opcodes whose result is not determined by their operands (parameter,
// constant, iota, reshape, rng, custom-call, infeed, recv, ...) take the
// instruction's own shape and check it against operands and attributes.
// Every array of the returned shape carries the default layout.
//
// The rules live in ir/shape_inference/, one file per opcode family (see
// rules.h); infer_util.h holds the context and helpers they share. This file
// only dispatches on the opcode.
#include "ir/shape_inference/shape_inference.h"

#include "ir/shape_inference/infer_util.h"
#include "ir/shape_inference/rules.h"
#include "ir/status_macros.h"

namespace xjit {
namespace shape_inference_internal {
namespace {

absl::StatusOr<Shape> InferByOpcode(const Instruction& instruction) {
  Ctx ctx(instruction);
  const Opcode opcode = instruction.opcode();
  if (IsElementwiseUnary(opcode)) return InferUnary(ctx);
  if (IsElementwiseBinary(opcode)) return InferBinary(ctx);
  switch (opcode) {
    case Opcode::kSelect: return InferSelect(ctx);
    case Opcode::kClamp: return InferClamp(ctx);
    case Opcode::kConvert: return InferConvert(ctx);
    case Opcode::kStochasticConvert: return InferStochasticConvert(ctx);
    case Opcode::kBitcastConvert: return InferBitcastConvert(ctx);
    case Opcode::kReducePrecision: return InferReducePrecision(ctx);
    case Opcode::kMap: return InferMap(ctx);
    case Opcode::kBroadcast: return InferBroadcast(ctx);
    case Opcode::kReshape: return InferReshape(ctx);
    case Opcode::kDynamicReshape: return InferDynamicReshape(ctx);
    case Opcode::kTranspose: return InferTranspose(ctx);
    case Opcode::kSlice: return InferSlice(ctx);
    case Opcode::kDynamicSlice: return InferDynamicSlice(ctx);
    case Opcode::kDynamicUpdateSlice: return InferDynamicUpdateSlice(ctx);
    case Opcode::kPad: return InferPad(ctx);
    case Opcode::kConcatenate: return InferConcatenate(ctx);
    case Opcode::kReverse: return InferReverse(ctx);
    case Opcode::kIota: return InferIota(ctx);
    case Opcode::kGetDimensionSize: return InferGetDimensionSize(ctx);
    case Opcode::kSetDimensionSize: return InferSetDimensionSize(ctx);
    case Opcode::kTuple: return InferTuple(ctx);
    case Opcode::kGetTupleElement: return InferGetTupleElement(ctx);
    case Opcode::kCopy:
    case Opcode::kDomain:
    case Opcode::kOptimizationBarrier:
    case Opcode::kAllReduceDone:
    case Opcode::kAsyncUpdate:
      return InferSameAsOperand(ctx);
    case Opcode::kAfterAll: return InferAfterAll(ctx);
    case Opcode::kAddDependency: return InferAddDependency(ctx);
    case Opcode::kBitcast: return InferBitcast(ctx);
    case Opcode::kDot: return InferDot(ctx);
    case Opcode::kScaledDot: return InferScaledDot(ctx);
    case Opcode::kRaggedDot: return InferRaggedDot(ctx);
    case Opcode::kConvolution: return InferConvolution(ctx);
    case Opcode::kReduce: return InferReduce(ctx);
    case Opcode::kReduceWindow: return InferReduceWindow(ctx);
    case Opcode::kSelectAndScatter: return InferSelectAndScatter(ctx);
    case Opcode::kGather: return InferGather(ctx);
    case Opcode::kScatter: return InferScatter(ctx);
    case Opcode::kSort: return InferSort(ctx);
    case Opcode::kTopK: return InferTopK(ctx);
    case Opcode::kFft: return InferFft(ctx);
    case Opcode::kCholesky: return InferCholesky(ctx);
    case Opcode::kTriangularSolve: return InferTriangularSolve(ctx);
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      return InferBatchNorm(ctx);
    case Opcode::kWhile: return InferWhile(ctx);
    case Opcode::kConditional: return InferConditional(ctx);
    case Opcode::kCall: return InferCall(ctx, "to_apply");
    case Opcode::kFusion: return InferCall(ctx, "fused");
    case Opcode::kCustomCall: return InferCustomCall(ctx);
    case Opcode::kRng: return InferRng(ctx);
    case Opcode::kRngBitGenerator: return InferRngBitGenerator(ctx);
    case Opcode::kRngGetAndUpdateState: return InferRngGetAndUpdateState(ctx);
    case Opcode::kInfeed: return InferInfeed(ctx);
    case Opcode::kOutfeed: return InferOutfeed(ctx);
    case Opcode::kSend: return InferSend(ctx);
    case Opcode::kRecv: return InferRecv(ctx);
    case Opcode::kSendDone:
    case Opcode::kRecvDone:
      return InferSendRecvDone(ctx);
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
      return InferAllReduce(ctx);
    case Opcode::kAllGather: return InferGatherOrScatterCollective(ctx, /*gather=*/true);
    case Opcode::kReduceScatter: return InferGatherOrScatterCollective(ctx, /*gather=*/false);
    case Opcode::kAllToAll: return InferAllToAll(ctx);
    case Opcode::kCollectivePermute:
    case Opcode::kCollectiveBroadcast:
      return InferCollectivePermute(ctx);
    case Opcode::kRaggedAllToAll: return InferRaggedAllToAll(ctx);
    case Opcode::kCopyStart: return InferCopyStart(ctx);
    case Opcode::kCopyDone: return InferTupleElementOfOperand(ctx, 0);
    case Opcode::kAllGatherStart:
    case Opcode::kCollectivePermuteStart:
      return InferStartWithContext(ctx);
    case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
    case Opcode::kAsyncDone:
      return InferTupleElementOfOperand(ctx, 1);
    case Opcode::kAsyncStart: return InferAsyncStart(ctx);
    case Opcode::kScan: return InferScan(ctx);
    case Opcode::kShuffle: return InferShuffle(ctx);
    case Opcode::kCollectiveReduce:
      // Semantics not modelled: operands must be well formed; the given shape stands.
      XJIT_RETURN_IF_ERROR(CheckAllOperands(ctx));
      return ctx.GivenShape();
    case Opcode::kParameter:
    case Opcode::kConstant:
      XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
      return ctx.GivenShape();
    case Opcode::kReplicaId:
    case Opcode::kPartitionId:
      XJIT_RETURN_IF_ERROR(ctx.ExpectOperandCount(0));
      return Shape::Scalar(ElementType::kU32);
    default:
      return ctx.Error("has no shape rule");
  }
}

}  // namespace
}  // namespace shape_inference_internal

absl::StatusOr<Shape> InferShape(const Instruction& instruction) {
  return shape_inference_internal::InferByOpcode(instruction);
}

}  // namespace xjit
