// The driver's glue for sort (see sort_call.h).
#include "jit/calls/sort_call.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "jit/calls/sort_comparator.h"
#include "jit/kernel/fusion_emitter.h"
#include "jit/kernel/vector_math.h"
#include "passes/rewrite_util.h"
#include "runtime/sort/sort.h"
#include "runtime/sort/topk.h"

namespace xjit::jit {

absl::StatusOr<runtime::LibraryCall> PlanSortCall(const Instruction& sort, Target& target,
                                                  int threads, std::string* description) {
  if (sort.opcode() != Opcode::kSort) return absl::UnimplementedError("not a sort");
  if (sort.called_computations().size() != 1 || sort.operand_count() == 0) {
    return absl::UnimplementedError("sort without one comparator and operands");
  }
  if (HasSideEffectDeep(sort)) {
    return absl::UnimplementedError("side effects inside the comparator");
  }
  const Computation& comparator = *sort.called_computations()[0];
  const int64_t n = sort.operand_count();
  std::vector<Shape> operands, results;
  for (const Instruction* operand : sort.operands()) operands.push_back(operand->shape());
  const Shape& shape = sort.shape();
  if (shape.IsTuple()) {
    if (shape.tuple_size() != n) return absl::UnimplementedError("sort: result arity");
    for (const Shape& element : shape.tuple_shapes()) results.push_back(element);
  } else {
    if (n != 1) return absl::UnimplementedError("sort: result arity");
    results.push_back(shape);
  }
  // The comparator: 2N scalar parameters of the operands' types, one pred.
  if (comparator.parameter_count() != 2 * n) {
    return absl::UnimplementedError("sort: comparator parameter count");
  }
  for (int64_t k = 0; k < 2 * n; ++k) {
    const Shape& parameter = comparator.parameter(k)->shape();
    if (!parameter.IsArray() || parameter.rank() != 0 || !operands[k / 2].IsArray() ||
        parameter.element_type() != operands[k / 2].element_type()) {
      return absl::UnimplementedError("sort: comparator parameter shapes");
    }
  }
  const Shape& root = comparator.root()->shape();
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != ElementType::kPred) {
    return absl::UnimplementedError("sort: comparator must return a pred scalar");
  }
  const int64_t rank = operands[0].IsArray() ? operands[0].rank() : 0;
  const int64_t dimension = sort.attrs().dimensions.empty() ? rank - 1 : sort.attrs().dimensions[0];

  XJIT_ASSIGN_OR_RETURN(KernelSpec kernel, EmitComputationKernel(comparator));
  if (kernel.output_count != 1 || kernel.program.buffers.size() != kernel.inputs.size() + 1) {
    return absl::UnimplementedError("sort: comparator kernel has more than one output");
  }
  // Inputs past the parameters are constants the comparator reads.
  std::vector<std::vector<uint8_t>> constants;
  for (size_t k = 0; k < kernel.inputs.size(); ++k) {
    const Instruction* input = kernel.inputs[k];
    if (static_cast<int64_t>(k) < 2 * n) {
      if (input != comparator.parameter(static_cast<int64_t>(k))) {
        return absl::InternalError("sort: comparator kernel inputs out of order");
      }
    } else if (input->opcode() == Opcode::kConstant) {
      constants.push_back(runtime::FlattenLiteral(input->literal()));
    } else {
      return absl::UnimplementedError(
          absl::StrCat("sort: comparator kernel reads ", input->name()));
    }
  }
  MathOptions math;
  math.fused_multiply_add = target.HasFusedMultiplyAdd();
  math.native_scale = target.HasNativeScale();
  ExpandMath(&kernel.program, math);
  XJIT_ASSIGN_OR_RETURN(LoweredKernel lowered, target.Lower(kernel.program));
  // The comparator kernel stays: slices the key path refuses use it.
  std::vector<runtime::sort::SortKey> keys =
      RecognizeSortComparator(comparator).value_or(std::vector<runtime::sort::SortKey>{});
  XJIT_ASSIGN_OR_RETURN(runtime::sort::SortPlan plan,
                        runtime::sort::PlanSort(operands, results, dimension, lowered.function,
                                                std::move(constants), std::move(keys), threads));
  runtime::LibraryCall call;
  call.routine = "sort";
  call.function = &runtime::sort::RunSortCall;
  call.scratch_bytes = plan.scratch_bytes;
  if (description != nullptr) {
    *description = absl::StrCat("dimension=", dimension, " ", plan.ToString(),
                                " comparator_code_bytes=", lowered.code_size);
  }
  call.plan = std::make_shared<const runtime::sort::SortPlan>(std::move(plan));
  return call;
}

absl::StatusOr<runtime::LibraryCall> PlanTopKCall(const Instruction& topk, int threads,
                                                  std::string* description) {
  if (topk.opcode() != Opcode::kTopK || topk.operand_count() != 1) {
    return absl::UnimplementedError("not a topk of one operand");
  }
  const Shape& shape = topk.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 2) {
    return absl::UnimplementedError("topk: result is not a (values, indices) tuple");
  }
  XJIT_ASSIGN_OR_RETURN(runtime::sort::TopKPlan plan,
                        runtime::sort::PlanTopK(topk.operand(0)->shape(), shape.tuple_shapes(0),
                                                shape.tuple_shapes(1), topk.attrs().k,
                                                topk.attrs().largest, threads));
  runtime::LibraryCall call;
  call.routine = "topk";
  call.function = &runtime::sort::RunTopKCall;
  call.scratch_bytes = plan.scratch_bytes;
  if (description != nullptr) *description = plan.ToString();
  call.plan = std::make_shared<const runtime::sort::TopKPlan>(std::move(plan));
  return call;
}

}  // namespace xjit::jit
