// async-start as a library call running its compiled computation (see
// async_call.h).
#include "jit/calls/async_call.h"

#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"

namespace xjit::jit {
namespace {

struct AsyncPlan {
  std::shared_ptr<const runtime::Executable> callee;
  int64_t operand_count = 0;  // Array operands: the step's first buffers.
  // Per operand of the async-start: whether it is a token (no buffer; the
  // callee reads nothing from its parameter).
  std::vector<bool> token;
  // Byte sizes of the output leaves, and how many belong to element 0
  // (the operands) and element 1 (the result); the rest are zeroed.
  std::vector<int64_t> leaf_bytes;
  int64_t operand_leaves = 0;
  int64_t result_leaves = 0;
  int64_t result_bytes = 0;
};

absl::Status RunAsyncCall(const void* plan_pointer, void* const* buffers, void* /*scratch*/,
                          const runtime::RunContext& context) {
  const AsyncPlan& plan = *static_cast<const AsyncPlan*>(plan_pointer);
  std::vector<const void*> parameters;
  int64_t next = 0;
  for (bool token : plan.token) parameters.push_back(token ? nullptr : buffers[next++]);
  std::vector<uint8_t> result(static_cast<size_t>(plan.result_bytes));
  XJIT_RETURN_IF_ERROR(plan.callee->Execute(parameters, result.data(), context));
  void* const* outputs = buffers + plan.operand_count;
  int64_t offset = 0;
  for (size_t k = 0; k < plan.leaf_bytes.size(); ++k) {
    const int64_t bytes = plan.leaf_bytes[k];
    if (bytes == 0) continue;
    const int64_t index = static_cast<int64_t>(k);
    if (index < plan.operand_leaves) {
      std::memmove(outputs[k], buffers[k], bytes);
    } else if (index < plan.operand_leaves + plan.result_leaves) {
      std::memcpy(outputs[k], result.data() + offset, bytes);
      offset += bytes;
    } else {
      std::memset(outputs[k], 0, bytes);
    }
  }
  return absl::OkStatus();
}

void CollectLeafBytes(const Shape& shape, std::vector<int64_t>* out) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) CollectLeafBytes(element, out);
  } else if (shape.IsArray()) {
    out->push_back(ByteSize(shape));
  }
}

}  // namespace

absl::StatusOr<runtime::LibraryCall> PlanAsyncCall(
    const Instruction& async_start, std::shared_ptr<const runtime::Executable> callee) {
  const Shape& shape = async_start.shape();
  if (!shape.IsTuple() || shape.tuple_size() < 2) {
    return absl::InvalidArgumentError("async-start has a tuple result");
  }
  const Shape& operands = shape.tuple_shapes(0);
  if (!operands.IsTuple() || operands.tuple_size() != async_start.operand_count()) {
    return absl::UnimplementedError("async-start whose first element is not its operands' tuple");
  }
  auto plan = std::make_shared<AsyncPlan>();
  for (int64_t i = 0; i < async_start.operand_count(); ++i) {
    const bool token = async_start.operand(i)->shape().IsToken();
    plan->token.push_back(token);
    if (!token) ++plan->operand_count;
    if (!(async_start.operand(i)->shape().IsArray() || token) ||
        !(async_start.operand(i)->shape() == operands.tuple_shapes(i))) {
      return absl::UnimplementedError("async-start with a tuple operand or a relayout");
    }
  }
  if (!(callee->result_shape() == shape.tuple_shapes(1))) {
    return absl::UnimplementedError("async-start whose result layout differs from its callee's");
  }
  plan->callee = std::move(callee);
  CollectLeafBytes(shape, &plan->leaf_bytes);
  plan->operand_leaves = plan->operand_count;
  std::vector<int64_t> result_leaves;
  CollectLeafBytes(shape.tuple_shapes(1), &result_leaves);
  plan->result_leaves = static_cast<int64_t>(result_leaves.size());
  plan->result_bytes = ByteSize(shape.tuple_shapes(1));
  runtime::LibraryCall call;
  call.routine = "async-start";
  call.context_function = &RunAsyncCall;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::jit
