// custom-call as a library call (see custom_call.h).
#include "jit/custom_call.h"

#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"

namespace xjit::jit {
namespace {

struct CustomCallPlan {
  const Instruction* instruction = nullptr;
  std::shared_ptr<const FfiHandler> handler;  // Typed; or
  CustomCallFunction function = nullptr;      // untyped.
  int64_t operand_leaves = 0;
  int64_t result_leaves = 0;
  bool tuple_result = false;
};

absl::Status RunCustomCall(const void* plan_pointer, void* const* buffers, void* /*scratch*/,
                           const runtime::RunContext& /*context*/) {
  const CustomCallPlan& plan = *static_cast<const CustomCallPlan*>(plan_pointer);
  if (plan.handler != nullptr) {
    return InvokeFfi(*plan.handler, *plan.instruction,
                     absl::MakeConstSpan(buffers, plan.operand_leaves),
                     absl::MakeConstSpan(buffers + plan.operand_leaves, plan.result_leaves));
  }
  // The untyped convention: in[i] is operand i's buffer; out the result's,
  // or the table of a tuple result's element buffers.
  std::vector<void*> in(buffers, buffers + plan.operand_leaves);
  std::vector<void*> table(buffers + plan.operand_leaves,
                           buffers + plan.operand_leaves + plan.result_leaves);
  void* out = plan.tuple_result ? static_cast<void*>(table.data())
                                : (table.empty() ? nullptr : table[0]);
  plan.function(out, in.data());
  return absl::OkStatus();
}

int64_t ArrayLeaves(const Shape& shape) {
  if (shape.IsArray()) return 1;
  if (!shape.IsTuple()) return 0;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += ArrayLeaves(element);
  return count;
}

}  // namespace

bool IsAnnotationCustomCall(absl::string_view target) {
  return target == "Sharding" || target == "SPMDFullToShardShape" ||
         target == "SPMDShardToFullShape" || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "LayoutConstraint" || target == "annotate_device_placement";
}

absl::StatusOr<runtime::LibraryCall> PlanCustomCall(const Instruction& custom_call) {
  const InstructionAttributes& attrs = custom_call.attrs();
  const std::string& target = attrs.custom_call_target;
  auto plan = std::make_shared<CustomCallPlan>();
  plan->instruction = &custom_call;
  for (const Instruction* operand : custom_call.operands()) {
    if (operand->shape().is_dynamic()) {
      return absl::UnimplementedError("custom-call with a dynamically sized operand");
    }
    plan->operand_leaves += ArrayLeaves(operand->shape());
  }
  plan->result_leaves = ArrayLeaves(custom_call.shape());
  runtime::LibraryCall call;
  plan->handler = FfiRegistry::Global().Find(target);
  if (plan->handler != nullptr) {
    call.routine = absl::StrCat("custom call ", target, " (typed)");
  } else {
    plan->function = CustomCallRegistry::Global().Find(target);
    if (plan->function == nullptr) {
      return absl::UnimplementedError(
          absl::StrCat("custom-call target \"", target, "\" is not registered"));
    }
    if (!attrs.api_version.empty() && attrs.api_version != "API_VERSION_ORIGINAL") {
      return absl::UnimplementedError(absl::StrCat("api_version ", attrs.api_version));
    }
    if (!attrs.output_to_operand_aliasing.empty()) {
      return absl::UnimplementedError("custom-call with output_to_operand_aliasing=");
    }
    for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
      const Shape& shape = custom_call.operand(i)->shape();
      if (!shape.IsArray()) return absl::UnimplementedError("custom-call with a tuple operand");
      if (attrs.has_operand_layout_constraints &&
          i < static_cast<int64_t>(attrs.operand_layout_constraints.size()) &&
          !(attrs.operand_layout_constraints[i] == shape)) {
        return absl::UnimplementedError("custom-call whose operand layout constraint differs");
      }
    }
    const Shape& result = custom_call.shape();
    if (result.IsTuple()) {
      for (const Shape& element : result.tuple_shapes()) {
        if (!element.IsArray()) {
          return absl::UnimplementedError("custom-call with a nested tuple result");
        }
      }
      plan->tuple_result = true;
    } else if (!result.IsArray()) {
      return absl::UnimplementedError("custom-call with a token result");
    }
    call.routine = absl::StrCat("custom call ", target);
  }
  call.context_function = &RunCustomCall;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::jit
