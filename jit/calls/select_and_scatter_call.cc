// The driver's glue for select-and-scatter (see select_and_scatter_call.h).
#include "jit/calls/select_and_scatter_call.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/status_macros.h"
#include "jit/kernel/fusion_emitter.h"
#include "jit/kernel/vector_math.h"
#include "passes/rewrite_util.h"
#include "runtime/select_and_scatter/select_and_scatter.h"

namespace xjit::jit {
namespace {

using runtime::select_and_scatter::FastScatter;
using runtime::select_and_scatter::FastSelect;

bool IsFastType(ElementType type) {
  switch (type) {
    case ElementType::kF32: case ElementType::kF64: case ElementType::kS32:
    case ElementType::kS64: case ElementType::kU32: case ElementType::kU64:
      return true;
    default:
      return false;
  }
}

// Whether `computation` is (a, b) -> op(a, b) or op(b, a) of its two scalar
// parameters of `type`; `swapped` says which.
bool IsBinaryOfParameters(const Computation& computation, Opcode opcode, ElementType type,
                          bool* swapped) {
  if (computation.parameter_count() != 2) return false;
  for (int64_t k = 0; k < 2; ++k) {
    const Shape& shape = computation.parameter(k)->shape();
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != type) return false;
  }
  const Instruction* root = computation.root();
  if (root->opcode() != opcode || root->operand_count() != 2) return false;
  const Instruction* a = computation.parameter(0);
  const Instruction* b = computation.parameter(1);
  if (root->operand(0) == a && root->operand(1) == b) {
    *swapped = false;
    return true;
  }
  if (root->operand(0) == b && root->operand(1) == a) {
    *swapped = true;
    return true;
  }
  return false;
}

// select = compare(selected, candidate) with an ordering direction and the
// type's ordinary comparison (IEEE for floats, not total order).
FastSelect RecognizeSelect(const Computation& select, ElementType type) {
  bool swapped = false;
  if (!IsFastType(type) || !IsBinaryOfParameters(select, Opcode::kCompare, type, &swapped)) {
    return FastSelect::kNone;
  }
  const Instruction* root = select.root();
  const ComparisonType comparison = root->attrs().comparison_type;
  const bool ordinary =
      comparison == ComparisonType::kDefault ||
      (IsFloat(type) && comparison == ComparisonType::kFloat) ||
      (IsSignedInteger(type) && comparison == ComparisonType::kSigned) ||
      (IsUnsignedInteger(type) && comparison == ComparisonType::kUnsigned);
  if (!ordinary) return FastSelect::kNone;
  switch (root->attrs().comparison_direction) {
    case ComparisonDirection::kGe: return swapped ? FastSelect::kLe : FastSelect::kGe;
    case ComparisonDirection::kGt: return swapped ? FastSelect::kLt : FastSelect::kGt;
    case ComparisonDirection::kLe: return swapped ? FastSelect::kGe : FastSelect::kLe;
    case ComparisonDirection::kLt: return swapped ? FastSelect::kGt : FastSelect::kLt;
    default: return FastSelect::kNone;
  }
}

FastScatter RecognizeScatter(const Computation& scatter, ElementType type) {
  bool swapped = false;
  if (!IsFastType(type) || !IsBinaryOfParameters(scatter, Opcode::kAdd, type, &swapped)) {
    return FastScatter::kNone;
  }
  return swapped ? FastScatter::kAddUpdateFirst : FastScatter::kAddCurrentFirst;
}

// `computation` (two scalar parameters of `type`, a scalar result of
// `result_type`) as a kernel without loops, with the constants it reads.
absl::Status CompileScalarComputation(const Computation& computation, ElementType type,
                                      ElementType result_type, Target& target,
                                      runtime::KernelFunction* function,
                                      std::vector<std::vector<uint8_t>>* constants,
                                      int64_t* code_bytes) {
  if (computation.parameter_count() != 2) {
    return absl::UnimplementedError("select-and-scatter: computation parameter count");
  }
  for (int64_t k = 0; k < 2; ++k) {
    const Shape& shape = computation.parameter(k)->shape();
    if (!shape.IsArray() || shape.rank() != 0 || shape.element_type() != type) {
      return absl::UnimplementedError("select-and-scatter: computation parameter shapes");
    }
  }
  const Shape& root = computation.root()->shape();
  if (!root.IsArray() || root.rank() != 0 || root.element_type() != result_type) {
    return absl::UnimplementedError("select-and-scatter: computation result shape");
  }
  XJIT_ASSIGN_OR_RETURN(KernelSpec kernel, EmitComputationKernel(computation));
  if (kernel.output_count != 1 || kernel.program.buffers.size() != kernel.inputs.size() + 1) {
    return absl::UnimplementedError("select-and-scatter: computation kernel outputs");
  }
  for (size_t k = 0; k < kernel.inputs.size(); ++k) {
    const Instruction* input = kernel.inputs[k];
    if (k < 2) {
      if (input != computation.parameter(static_cast<int64_t>(k))) {
        return absl::InternalError("select-and-scatter: kernel inputs out of order");
      }
    } else if (input->opcode() == Opcode::kConstant) {
      constants->push_back(runtime::FlattenLiteral(input->literal()));
    } else {
      return absl::UnimplementedError(
          absl::StrCat("select-and-scatter: computation kernel reads ", input->name()));
    }
  }
  MathOptions math;
  math.fused_multiply_add = target.HasFusedMultiplyAdd();
  math.native_scale = target.HasNativeScale();
  ExpandMath(&kernel.program, math);
  XJIT_ASSIGN_OR_RETURN(LoweredKernel lowered, target.Lower(kernel.program));
  *function = lowered.function;
  *code_bytes += lowered.code_size;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<runtime::LibraryCall> PlanSelectAndScatterCall(const Instruction& instruction,
                                                              Target& target,
                                                              std::string* description) {
  if (instruction.opcode() != Opcode::kSelectAndScatter || instruction.operand_count() != 3 ||
      instruction.called_computations().size() != 2) {
    return absl::UnimplementedError("not a select-and-scatter with select and scatter");
  }
  if (HasSideEffectDeep(instruction)) {
    return absl::UnimplementedError("side effects inside select or scatter");
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& init = instruction.operand(2)->shape();
  if (!operand.IsArray() || !init.IsArray() || init.rank() != 0 ||
      init.element_type() != operand.element_type()) {
    return absl::UnimplementedError("select-and-scatter: operand and init shapes");
  }
  const ElementType type = operand.element_type();
  const Computation& select = *instruction.called_computations()[0];
  const Computation& scatter = *instruction.called_computations()[1];
  FastSelect fast_select = RecognizeSelect(select, type);
  FastScatter fast_scatter = RecognizeScatter(scatter, type);
  runtime::KernelFunction select_kernel = nullptr, scatter_kernel = nullptr;
  std::vector<std::vector<uint8_t>> select_constants, scatter_constants;
  int64_t code_bytes = 0;
  if (fast_select == FastSelect::kNone || fast_scatter == FastScatter::kNone) {
    fast_select = FastSelect::kNone;
    fast_scatter = FastScatter::kNone;
    XJIT_RETURN_IF_ERROR(CompileScalarComputation(select, type, ElementType::kPred, target,
                                                  &select_kernel, &select_constants,
                                                  &code_bytes));
    XJIT_RETURN_IF_ERROR(CompileScalarComputation(scatter, type, type, target, &scatter_kernel,
                                                  &scatter_constants, &code_bytes));
  }
  XJIT_ASSIGN_OR_RETURN(
      runtime::select_and_scatter::SelectAndScatterPlan plan,
      runtime::select_and_scatter::PlanSelectAndScatter(
          operand, instruction.operand(1)->shape(), instruction.shape(),
          instruction.attrs().window, fast_select, fast_scatter, select_kernel,
          std::move(select_constants), scatter_kernel, std::move(scatter_constants)));
  runtime::LibraryCall call;
  call.routine = "select-and-scatter";
  call.function = &runtime::select_and_scatter::RunSelectAndScatterCall;
  call.scratch_bytes = plan.scratch_bytes;
  if (description != nullptr) {
    *description = absl::StrCat(plan.ToString(), code_bytes > 0 ? " kernel_code_bytes=" : "",
                                code_bytes > 0 ? absl::StrCat(code_bytes) : "");
  }
  call.plan =
      std::make_shared<const runtime::select_and_scatter::SelectAndScatterPlan>(std::move(plan));
  return call;
}

}  // namespace xjit::jit
