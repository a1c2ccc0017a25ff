// Relayout copies as library calls (see relayout_call.h).
#include "jit/calls/relayout_call.h"

#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"
#include "passes/isolate_tiled_layouts.h"

namespace xjit::jit {
namespace {

struct RelayoutPlan {
  Shape from, to;
  int64_t element_bytes = 0;
  int64_t to_bytes = 0;
};

void RunRelayout(const void* plan_pointer, void* const* buffers, void* /*scratch*/) {
  const RelayoutPlan& plan = *static_cast<const RelayoutPlan*>(plan_pointer);
  const uint8_t* from = static_cast<const uint8_t*>(buffers[0]);
  uint8_t* to = static_cast<uint8_t*>(buffers[1]);
  if (plan.to_bytes > 0) std::memset(to, 0, static_cast<size_t>(plan.to_bytes));
  const std::vector<int64_t> dimensions(plan.from.dimensions().begin(),
                                        plan.from.dimensions().end());
  for (int64_t d : dimensions) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(dimensions.size(), 0);
  const size_t bytes = static_cast<size_t>(plan.element_bytes);
  do {
    std::memcpy(to + LinearIndex(plan.to, index) * plan.element_bytes,
                from + LinearIndex(plan.from, index) * plan.element_bytes, bytes);
  } while (NextIndex(dimensions, absl::MakeSpan(index)));
}

}  // namespace

bool IsRelayoutCopy(const Instruction& instruction) {
  return instruction.opcode() == Opcode::kCopy && instruction.operand_count() == 1 &&
         instruction.shape().IsArray() &&
         (HasTiledLayout(instruction.shape()) || HasTiledLayout(instruction.operand(0)->shape()));
}

absl::StatusOr<runtime::LibraryCall> PlanRelayoutCall(const Instruction& copy) {
  const Shape& from = copy.operand(0)->shape();
  const Shape& to = copy.shape();
  for (const Shape* shape : {&from, &to}) {
    if (!HasTiledLayout(*shape) && !IsPlainLayout(*shape)) {
      return absl::UnimplementedError(
          absl::StrCat("relayout: layout of ", shape->ToString(true)));
    }
  }
  if (from.element_type() != to.element_type() || from.dimensions() != to.dimensions()) {
    return absl::InvalidArgumentError("relayout: a copy must keep the type and dimensions");
  }
  auto plan = std::make_shared<RelayoutPlan>();
  plan->from = from;
  plan->to = to;
  plan->element_bytes = ByteWidth(to.element_type());
  plan->to_bytes = ByteSize(to);
  runtime::LibraryCall call;
  call.routine = "relayout";
  call.function = &RunRelayout;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::jit
