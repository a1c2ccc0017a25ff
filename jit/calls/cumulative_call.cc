// The driver's glue for cumulative reduce-windows (see cumulative_call.h).
#include "jit/calls/cumulative_call.h"

#include <memory>
#include <optional>
#include <utility>

#include "ir/layout_util.h"
#include "runtime/collectives/collective_step.h"
#include "runtime/collectives/communicator.h"
#include "runtime/scan/cumulative.h"

namespace xjit::jit {
namespace {

// The scanned dimension of a cumulative window over `dims`, or nullopt.
std::optional<int64_t> ScannedDimension(const Window& window, absl::Span<const int64_t> dims) {
  if (window.size() != dims.size()) return std::nullopt;
  std::optional<int64_t> scanned;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDimension& w = window[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.window_reversal ||
        w.padding_high != 0) {
      return std::nullopt;
    }
    if (w.size == 1 && w.padding_low == 0) continue;
    if (scanned.has_value() || dims[d] < 2 || w.size != dims[d] || w.padding_low != dims[d] - 1) {
      return std::nullopt;
    }
    scanned = static_cast<int64_t>(d);
  }
  return scanned;
}

std::optional<collectives::ReductionKind> Reduction(const Instruction& instruction) {
  if (instruction.called_computations().size() != 1 ||
      instruction.called_computations()[0] == nullptr) {
    return std::nullopt;
  }
  const Computation& reducer = *instruction.called_computations()[0];
  std::optional<collectives::ReductionKind> kind = collectives::RecognizeReducer(reducer);
  if (!kind.has_value() ||
      reducer.root()->shape().element_type() != instruction.shape().element_type()) {
    return std::nullopt;
  }
  return kind;
}

}  // namespace

bool IsCumulativeWindow(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kReduceWindow || instruction.operand_count() != 2) {
    return false;
  }
  const Shape& shape = instruction.shape();
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& init = instruction.operand(1)->shape();
  if (!shape.IsArray() || !(operand == shape) || !IsPlainLayout(shape) || !init.IsArray() ||
      init.rank() != 0 || init.element_type() != shape.element_type() ||
      ByteSize(shape) != shape.element_count() * ByteWidth(shape.element_type())) {
    return false;
  }
  const std::optional<collectives::ReductionKind> kind = Reduction(instruction);
  return kind.has_value() && collectives::CanFold(shape.element_type(), *kind) &&
         ScannedDimension(instruction.attrs().window, shape.dimensions()).has_value();
}

absl::StatusOr<runtime::LibraryCall> PlanCumulativeCall(const Instruction& instruction,
                                                        const LibraryCallContext& /*context*/,
                                                        std::string* description) {
  if (!IsCumulativeWindow(instruction)) {
    return absl::UnimplementedError("not a cumulative reduce-window");
  }
  const Shape& shape = instruction.shape();
  const int64_t scanned = *ScannedDimension(instruction.attrs().window, shape.dimensions());
  // Dimensions more minor than the scanned one make the inner extent, the
  // more major ones the outer.
  int64_t inner = 1, outer = 1;
  bool minor = true;
  for (int64_t d : shape.layout().minor_to_major) {
    if (d == scanned) {
      minor = false;
    } else if (minor) {
      inner *= shape.dimensions(d);
    } else {
      outer *= shape.dimensions(d);
    }
  }
  runtime::scan::CumulativePlan plan =
      runtime::scan::PlanCumulative(shape.element_type(), *Reduction(instruction), outer,
                                    shape.dimensions(scanned), inner);
  runtime::LibraryCall call;
  call.routine = "cumulative reduce-window";
  call.function = &runtime::scan::RunCumulativeCall;
  call.scratch_bytes = plan.scratch_bytes;
  if (description != nullptr) *description = plan.ToString();
  call.plan = std::make_shared<const runtime::scan::CumulativePlan>(std::move(plan));
  return call;
}

}  // namespace xjit::jit
