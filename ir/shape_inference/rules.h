// Internal to shape inference: the rule of each opcode family, one file per
// family under ir/shape_inference/, dispatched on the opcode by InferShape in
// ir/shape_inference/shape_inference.cc. Each rule takes the instruction's context and returns
// the result shape with default layouts, or an error naming the opcode.
#ifndef XJIT_IR_SHAPE_INFERENCE_RULES_H_
#define XJIT_IR_SHAPE_INFERENCE_RULES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/shape.h"
#include "ir/shape_inference/infer_util.h"

namespace xjit::shape_inference_internal {

// elementwise.cc
absl::StatusOr<Shape> InferUnary(const Ctx& ctx);
absl::StatusOr<Shape> InferBinary(const Ctx& ctx);
absl::StatusOr<Shape> InferSelect(const Ctx& ctx);
absl::StatusOr<Shape> InferClamp(const Ctx& ctx);
absl::StatusOr<Shape> InferConvert(const Ctx& ctx);
absl::StatusOr<Shape> InferStochasticConvert(const Ctx& ctx);
absl::StatusOr<Shape> InferBitcastConvert(const Ctx& ctx);
absl::StatusOr<Shape> InferReducePrecision(const Ctx& ctx);
absl::StatusOr<Shape> InferMap(const Ctx& ctx);

// data_movement.cc
absl::StatusOr<Shape> InferBroadcast(const Ctx& ctx);
absl::StatusOr<Shape> InferReshape(const Ctx& ctx);
absl::StatusOr<Shape> InferDynamicReshape(const Ctx& ctx);
absl::StatusOr<Shape> InferTranspose(const Ctx& ctx);
absl::StatusOr<Shape> InferSlice(const Ctx& ctx);
absl::StatusOr<Shape> InferDynamicSlice(const Ctx& ctx);
absl::StatusOr<Shape> InferDynamicUpdateSlice(const Ctx& ctx);
absl::StatusOr<Shape> InferPad(const Ctx& ctx);
absl::StatusOr<Shape> InferConcatenate(const Ctx& ctx);
absl::StatusOr<Shape> InferReverse(const Ctx& ctx);
absl::StatusOr<Shape> InferIota(const Ctx& ctx);
absl::StatusOr<Shape> InferGetDimensionSize(const Ctx& ctx);
absl::StatusOr<Shape> InferSetDimensionSize(const Ctx& ctx);
absl::StatusOr<Shape> InferTuple(const Ctx& ctx);
absl::StatusOr<Shape> InferGetTupleElement(const Ctx& ctx);
absl::StatusOr<Shape> InferSameAsOperand(const Ctx& ctx);
absl::StatusOr<Shape> InferAfterAll(const Ctx& ctx);
absl::StatusOr<Shape> InferAddDependency(const Ctx& ctx);
absl::StatusOr<Shape> InferBitcast(const Ctx& ctx);
absl::StatusOr<Shape> InferShuffle(const Ctx& ctx);

// gather_scatter.cc
absl::StatusOr<Shape> InferGather(const Ctx& ctx);
absl::StatusOr<Shape> InferScatter(const Ctx& ctx);

// contraction.cc
absl::StatusOr<Shape> InferDot(const Ctx& ctx);
absl::StatusOr<Shape> InferScaledDot(const Ctx& ctx);
absl::StatusOr<Shape> InferRaggedDot(const Ctx& ctx);
absl::StatusOr<Shape> InferConvolution(const Ctx& ctx);

// reduction.cc
absl::StatusOr<Shape> InferReduce(const Ctx& ctx);
absl::StatusOr<Shape> InferReduceWindow(const Ctx& ctx);
absl::StatusOr<Shape> InferSelectAndScatter(const Ctx& ctx);
absl::StatusOr<Shape> InferScan(const Ctx& ctx);

// control_flow.cc
absl::StatusOr<Shape> InferWhile(const Ctx& ctx);
absl::StatusOr<Shape> InferConditional(const Ctx& ctx);
absl::StatusOr<Shape> InferCall(const Ctx& ctx, absl::string_view role);
absl::StatusOr<Shape> InferCustomCall(const Ctx& ctx);
absl::StatusOr<Shape> InferTupleElementOfOperand(const Ctx& ctx, int64_t index);
absl::StatusOr<Shape> InferCopyStart(const Ctx& ctx);
absl::StatusOr<Shape> InferStartWithContext(const Ctx& ctx);
absl::StatusOr<Shape> InferAsyncStart(const Ctx& ctx);

// collectives.cc
absl::StatusOr<Shape> InferAllReduce(const Ctx& ctx);
absl::StatusOr<Shape> InferGatherOrScatterCollective(const Ctx& ctx, bool gather);
absl::StatusOr<Shape> InferAllToAll(const Ctx& ctx);
absl::StatusOr<Shape> InferCollectivePermute(const Ctx& ctx);
absl::StatusOr<Shape> InferRaggedAllToAll(const Ctx& ctx);

// misc.cc
absl::StatusOr<Shape> InferSort(const Ctx& ctx);
absl::StatusOr<Shape> InferTopK(const Ctx& ctx);
absl::StatusOr<Shape> InferFft(const Ctx& ctx);
absl::StatusOr<Shape> InferCholesky(const Ctx& ctx);
absl::StatusOr<Shape> InferTriangularSolve(const Ctx& ctx);
absl::StatusOr<Shape> InferBatchNorm(const Ctx& ctx);
absl::StatusOr<Shape> InferRng(const Ctx& ctx);
absl::StatusOr<Shape> InferRngBitGenerator(const Ctx& ctx);
absl::StatusOr<Shape> InferRngGetAndUpdateState(const Ctx& ctx);
absl::StatusOr<Shape> InferInfeed(const Ctx& ctx);
absl::StatusOr<Shape> InferOutfeed(const Ctx& ctx);
absl::StatusOr<Shape> InferSend(const Ctx& ctx);
absl::StatusOr<Shape> InferRecv(const Ctx& ctx);
absl::StatusOr<Shape> InferSendRecvDone(const Ctx& ctx);

}  // namespace xjit::shape_inference_internal

#endif  // XJIT_IR_SHAPE_INFERENCE_RULES_H_
