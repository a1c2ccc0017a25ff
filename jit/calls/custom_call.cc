// custom-call as a library call (see custom_call.h).
#include "jit/calls/custom_call.h"

#include <deque>
#include <memory>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"
#include "runtime/host/jaxlib_lapack.h"
#include "runtime/linalg/qr.h"
#include "runtime/strided_copy.h"

namespace xjit::jit {
namespace {

// An operand the untyped convention passes in another layout than its
// buffer's (operand_layout_constraints=): copied into scratch first.
struct Relayout {
  std::vector<int64_t> dimensions, from_strides, to_strides;
  int64_t element_bytes = 0;
  int64_t scratch_offset = 0;
};

// An output that starts as an operand's value (output_to_operand_aliasing=,
// the forms the evaluator takes): the operand, as the call sees it, copied
// into result leaf `output_leaf` before the call.
struct AliasCopy {
  int64_t operand = 0;
  int64_t output_leaf = 0;
  std::vector<int64_t> dimensions, from_strides, to_strides;
  int64_t element_bytes = 0;
};

struct CustomCallPlan {
  const Instruction* instruction = nullptr;
  std::shared_ptr<const FfiHandler> handler;  // Typed; or
  CustomCallFunction function = nullptr;      // untyped.
  int64_t operand_leaves = 0;
  int64_t result_leaves = 0;
  // Untyped: each operand's shape (a tuple operand is passed as a table of
  // its elements' pointers, nested as the evaluator does), its first leaf,
  // and its relayout (empty dimensions when none); the result's shape.
  std::vector<Shape> operand_shapes;
  std::vector<int64_t> first_leaf;
  std::vector<std::optional<Relayout>> relayouts;
  std::vector<AliasCopy> aliases;
  Shape result_shape;
  // Unregistered when compiled: the target is looked up when the step runs
  // (typed, then untyped); untyped_status is why the untyped convention
  // cannot run this instruction, if it cannot.
  bool late_bound = false;
  absl::Status untyped_status;
};

// The untyped convention's pointer for a value of `shape` whose array
// leaves are `leaves[*next]...`: the leaf's buffer, or for a tuple a table
// (kept in `tables`) of its elements' pointers.
void* PointerFor(const Shape& shape, void* const* leaves, int64_t* next,
                 std::deque<std::vector<void*>>* tables) {
  if (shape.IsTuple()) {
    std::vector<void*> table;
    for (const Shape& element : shape.tuple_shapes()) {
      table.push_back(PointerFor(element, leaves, next, tables));
    }
    tables->push_back(std::move(table));
    return tables->back().data();
  }
  if (!shape.IsArray()) return nullptr;  // A token: no buffer.
  return leaves[(*next)++];
}

// The typed convention: every array leaf as a typed buffer.
absl::Status RunTyped(const CustomCallPlan& plan, const FfiHandler& handler,
                      void* const* buffers) {
  return InvokeFfi(handler, *plan.instruction, absl::MakeConstSpan(buffers, plan.operand_leaves),
                   absl::MakeConstSpan(buffers + plan.operand_leaves, plan.result_leaves));
}

// The untyped convention: in[i] is operand i's buffer (or table); out the
// result's, or the table of a tuple result's element buffers.
absl::Status RunUntyped(const CustomCallPlan& plan, CustomCallFunction function,
                        void* const* buffers, void* scratch) {
  std::deque<std::vector<void*>> tables;
  std::vector<void*> in;
  for (size_t i = 0; i < plan.operand_shapes.size(); ++i) {
    int64_t next = plan.first_leaf[i];
    void* pointer = PointerFor(plan.operand_shapes[i], buffers, &next, &tables);
    if (plan.relayouts[i].has_value()) {
      const Relayout& relayout = *plan.relayouts[i];
      uint8_t* copy = static_cast<uint8_t*>(scratch) + relayout.scratch_offset;
      runtime::CopyStrided(relayout.dimensions, relayout.from_strides, relayout.to_strides,
                           relayout.element_bytes, static_cast<const uint8_t*>(pointer), copy);
      pointer = copy;
    }
    in.push_back(pointer);
  }
  void* const* results = buffers + plan.operand_leaves;
  for (const AliasCopy& alias : plan.aliases) {
    if (in[alias.operand] == results[alias.output_leaf] &&
        alias.from_strides == alias.to_strides) {
      continue;  // Allocated in place: the output is the operand already.
    }
    runtime::CopyStrided(alias.dimensions, alias.from_strides, alias.to_strides,
                         alias.element_bytes, static_cast<const uint8_t*>(in[alias.operand]),
                         static_cast<uint8_t*>(results[alias.output_leaf]));
  }
  int64_t next = 0;
  void* out = PointerFor(plan.result_shape, results, &next, &tables);
  function(out, in.data());
  return absl::OkStatus();
}

absl::Status RunCustomCall(const void* plan_pointer, void* const* buffers, void* scratch,
                           const runtime::RunContext& /*context*/) {
  const CustomCallPlan& plan = *static_cast<const CustomCallPlan*>(plan_pointer);
  if (!plan.late_bound) {
    if (plan.handler != nullptr) return RunTyped(plan, *plan.handler, buffers);
    return RunUntyped(plan, plan.function, buffers, scratch);
  }
  // Unregistered when compiled: looked up now, in the evaluator's order, so
  // the step behaves as the evaluator would at this point of the run.
  const std::string& target = plan.instruction->attrs().custom_call_target;
  if (std::shared_ptr<const FfiHandler> handler = FfiRegistry::Global().Find(target)) {
    return RunTyped(plan, *handler, buffers);
  }
  if (CustomCallFunction function = CustomCallRegistry::Global().Find(target)) {
    if (!plan.untyped_status.ok()) return plan.untyped_status;
    return RunUntyped(plan, function, buffers, scratch);
  }
  // The evaluator's error, word for word (it prefixes the instruction).
  return absl::NotFoundError(absl::StrCat(plan.instruction->name(), ": custom-call target \"",
                                          target, "\" is not registered"));
}

int64_t ArrayLeaves(const Shape& shape) {
  if (shape.IsArray()) return 1;
  if (!shape.IsTuple()) return 0;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += ArrayLeaves(element);
  return count;
}

// The element-bytes and strides of a plain array shape, for CopyStrided.
absl::Status PlainCopyOf(const Shape& from, const Shape& to, std::vector<int64_t>* dimensions,
                         std::vector<int64_t>* from_strides, std::vector<int64_t>* to_strides,
                         int64_t* element_bytes) {
  if (!IsPlainLayout(from) || !IsPlainLayout(to) || from.element_type() != to.element_type() ||
      from.dimensions() != to.dimensions()) {
    return absl::UnimplementedError(absl::StrCat("custom-call: a copy from ", from.ToString(true),
                                                 " to ", to.ToString(true)));
  }
  dimensions->assign(from.dimensions().begin(), from.dimensions().end());
  *from_strides = PlainStrides(from);
  *to_strides = PlainStrides(to);
  *element_bytes = ByteWidth(from.element_type());
  return absl::OkStatus();
}

// The untyped convention's plan: operand tables, operands relaid to their
// layout constraints (in scratch), outputs that start as operands.
absl::Status PlanUntyped(const Instruction& custom_call, CustomCallPlan* plan,
                         int64_t* scratch_bytes) {
  const InstructionAttributes& attrs = custom_call.attrs();
  std::vector<Shape> seen;  // Each operand as the function sees it.
  int64_t leaf = 0;
  for (int64_t i = 0; i < custom_call.operand_count(); ++i) {
    const Shape& shape = custom_call.operand(i)->shape();
    plan->operand_shapes.push_back(shape);
    plan->first_leaf.push_back(leaf);
    leaf += ArrayLeaves(shape);
    std::optional<Relayout> relayout;
    Shape as_seen = shape;
    if (attrs.has_operand_layout_constraints &&
        i < static_cast<int64_t>(attrs.operand_layout_constraints.size()) &&
        !(attrs.operand_layout_constraints[i] == shape)) {
      const Shape& wanted = attrs.operand_layout_constraints[i];
      if (!shape.IsArray()) {
        return absl::UnimplementedError("custom-call: a layout constraint on a tuple operand");
      }
      relayout.emplace();
      XJIT_RETURN_IF_ERROR(PlainCopyOf(shape, wanted, &relayout->dimensions,
                                       &relayout->from_strides, &relayout->to_strides,
                                       &relayout->element_bytes));
      relayout->scratch_offset = *scratch_bytes;
      *scratch_bytes += (ByteSize(wanted) + 63) / 64 * 64;
      as_seen = wanted;
    }
    plan->relayouts.push_back(std::move(relayout));
    seen.push_back(std::move(as_seen));
  }
  const Shape& result = custom_call.shape();
  plan->result_shape = result;
  for (const OutputOperandAlias& alias : attrs.output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= custom_call.operand_count() ||
        !alias.operand_index.empty() || alias.output_index.size() > 1) {
      return absl::UnimplementedError("custom-call: this output_to_operand_aliasing form");
    }
    const Shape& source = seen[alias.operand_number];
    AliasCopy copy;
    copy.operand = alias.operand_number;
    const Shape* output = &result;
    if (!alias.output_index.empty()) {
      const int64_t k = alias.output_index[0];
      if (!result.IsTuple() || k < 0 || k >= result.tuple_size()) {
        return absl::InvalidArgumentError("custom-call: aliased output index out of range");
      }
      for (int64_t e = 0; e < k; ++e) copy.output_leaf += ArrayLeaves(result.tuple_shapes(e));
      output = &result.tuple_shapes(k);
    }
    if (!source.IsArray() || !output->IsArray()) {
      return absl::UnimplementedError("custom-call: output_to_operand_aliasing of a tuple");
    }
    XJIT_RETURN_IF_ERROR(PlainCopyOf(source, *output, &copy.dimensions, &copy.from_strides,
                                     &copy.to_strides, &copy.element_bytes));
    plan->aliases.push_back(std::move(copy));
  }
  return absl::OkStatus();
}

absl::Status CheckApiVersion(const InstructionAttributes& attrs) {
  if (!attrs.api_version.empty() && attrs.api_version != "API_VERSION_ORIGINAL") {
    return absl::UnimplementedError(absl::StrCat("api_version ", attrs.api_version));
  }
  return absl::OkStatus();
}

// Targets to which the evaluator gives a meaning of its own when no handler
// is registered (interpreter/evaluator.cc's EvalCustomCall).
bool HasEvaluatorMeaning(absl::string_view target) {
  return IsAnnotationCustomCall(target) || target == "TopK" ||
         runtime::linalg::IsQrTarget(target) || runtime::host::IsJaxlibLapackTarget(target);
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
  } else if ((plan->function = CustomCallRegistry::Global().Find(target)) != nullptr) {
    XJIT_RETURN_IF_ERROR(CheckApiVersion(attrs));
    XJIT_RETURN_IF_ERROR(PlanUntyped(custom_call, plan.get(), &call.scratch_bytes));
    call.routine = absl::StrCat("custom call ", target);
  } else if (HasEvaluatorMeaning(target)) {
    // Unregistered, the evaluator computes these itself (annotations,
    // TopK, QR): the driver's own plans take them, or the evaluator does.
    return absl::UnimplementedError(
        absl::StrCat("custom-call target \"", target, "\" is not registered"));
  } else {
    // Unregistered: a step that looks the target up when it runs and, still
    // unregistered then, fails with the evaluator's NOT_FOUND error.
    plan->late_bound = true;
    plan->untyped_status = CheckApiVersion(attrs);
    if (plan->untyped_status.ok()) {
      plan->untyped_status = PlanUntyped(custom_call, plan.get(), &call.scratch_bytes);
    }
    call.routine = absl::StrCat("custom call ", target, " (unregistered: looked up when it runs)");
  }
  call.context_function = &RunCustomCall;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::jit
