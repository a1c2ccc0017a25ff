// Host transfers as library calls (see host_transfer_call.h).
#include "jit/calls/host_transfer_call.h"

#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/collectives.h"
#include "ir/layout_util.h"
#include "ir/literal.h"
#include "ir/status_macros.h"
#include "runtime/host/host_queues.h"

namespace xjit::jit {
namespace {

struct TransferPlan {
  const Instruction* instruction = nullptr;
  std::vector<int64_t> input_bytes;   // Per input leaf.
  std::vector<int64_t> output_bytes;  // Per output leaf.
};

// The operand's value from its leaves (the flattened order).
Literal ReadOperand(const Shape& shape, const TransferPlan& plan, void* const* buffers) {
  std::vector<uint8_t> flat;
  for (size_t k = 0; k < plan.input_bytes.size(); ++k) {
    const uint8_t* data = static_cast<const uint8_t*>(buffers[k]);
    flat.insert(flat.end(), data, data + plan.input_bytes[k]);
  }
  return runtime::UnflattenLiteral(shape, flat.data());
}

// Writes `value` (the result's shape) to the output leaves.
void WriteResult(const Literal& value, const TransferPlan& plan, void* const* buffers) {
  const std::vector<uint8_t> flat = runtime::FlattenLiteral(value);
  void* const* outputs = buffers + plan.input_bytes.size();
  int64_t offset = 0;
  for (size_t k = 0; k < plan.output_bytes.size(); ++k) {
    if (plan.output_bytes[k] > 0) std::memcpy(outputs[k], flat.data() + offset, plan.output_bytes[k]);
    offset += plan.output_bytes[k];
  }
}

// (first, zeros...) in the instruction's tuple shape.
Literal TupleWith(const Shape& shape, Literal first) {
  std::vector<Literal> elements;
  elements.push_back(std::move(first));
  for (int64_t i = 1; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
  return Literal::MakeTuple(std::move(elements));
}

absl::Status RunHostTransfer(const void* plan_pointer, void* const* buffers, void* /*scratch*/,
                             const runtime::RunContext& context) {
  const TransferPlan& plan = *static_cast<const TransferPlan*>(plan_pointer);
  const Instruction& instruction = *plan.instruction;
  const Shape& shape = instruction.shape();
  HostQueues* queues = context.queues;
  const int64_t channel = instruction.attrs().channel_id.value_or(0);
  switch (instruction.opcode()) {
    case Opcode::kInfeed: {
      const Shape& data_shape = shape.tuple_shapes(0);
      if (data_shape.IsTuple() && data_shape.tuple_size() == 0) return absl::OkStatus();
      std::optional<Literal> value = queues != nullptr ? queues->PopInfeed() : std::nullopt;
      if (!value.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            instruction.name(), ": infeed of ", data_shape.ToString(),
            ": the infeed queue is empty"));
      }
      if (!value->shape().Compatible(data_shape) || value->shape().is_dynamic()) {
        return absl::InvalidArgumentError(absl::StrCat(
            instruction.name(), ": infeed expects ", data_shape.ToString(false),
            " but the queue holds ", value->shape().ToString(false)));
      }
      WriteResult(TupleWith(shape, value->Relayout(data_shape)), plan, buffers);
      return absl::OkStatus();
    }
    case Opcode::kOutfeed: {
      Literal value = ReadOperand(instruction.operand(0)->shape(), plan, buffers);
      if (instruction.attrs().outfeed_shape.has_value()) {
        value = value.Relayout(*instruction.attrs().outfeed_shape);
      }
      if (queues != nullptr) queues->PushOutfeed(std::move(value));
      return absl::OkStatus();
    }
    case Opcode::kSend: {
      Literal value = ReadOperand(instruction.operand(0)->shape(), plan, buffers);
      WriteResult(TupleWith(shape, value.Relayout(shape.tuple_shapes(0))), plan, buffers);
      if (queues != nullptr) queues->PushChannel(channel, std::move(value));
      return absl::OkStatus();
    }
    case Opcode::kRecv: {
      std::optional<Literal> value = queues != nullptr ? queues->PopChannel(channel) : std::nullopt;
      if (!value.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            instruction.name(), ": recv: channel ", channel, " has no value to receive"));
      }
      const Shape& data_shape = shape.tuple_shapes(0);
      if (!value->shape().Compatible(data_shape) || value->shape().is_dynamic()) {
        return absl::InvalidArgumentError(absl::StrCat(
            instruction.name(), ": recv expects ", data_shape.ToString(false),
            " but channel ", channel, " holds ", value->shape().ToString(false)));
      }
      WriteResult(TupleWith(shape, value->Relayout(data_shape)), plan, buffers);
      return absl::OkStatus();
    }
    default:
      return absl::InternalError("not a host transfer");
  }
}

void CollectLeafBytes(const Shape& shape, std::vector<int64_t>* out) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) CollectLeafBytes(element, out);
  } else if (shape.IsArray()) {
    out->push_back(ByteSize(shape));
  }
}

}  // namespace

bool IsHostTransfer(Opcode opcode) {
  return opcode == Opcode::kInfeed || opcode == Opcode::kOutfeed || opcode == Opcode::kSend ||
         opcode == Opcode::kRecv;
}

absl::StatusOr<runtime::LibraryCall> PlanHostTransferCall(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (!IsHostTransfer(opcode)) {
    return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " is not a host transfer"));
  }
  if ((opcode == Opcode::kSend || opcode == Opcode::kRecv) &&
      eval::IsCrossReplicaTransfer(instruction)) {
    return absl::InvalidArgumentError("send/recv between replicas is a collective step");
  }
  const Shape& shape = instruction.shape();
  if (shape.is_dynamic()) return absl::UnimplementedError("a dynamically sized transfer");
  const bool tuple_result = opcode != Opcode::kOutfeed;
  if (tuple_result && (!shape.IsTuple() || shape.tuple_size() < 2)) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpcodeName(opcode), " has a (data, ..., token) result"));
  }
  if ((opcode == Opcode::kOutfeed || opcode == Opcode::kSend) &&
      (instruction.operand_count() < 1 || instruction.operand(0)->shape().is_dynamic())) {
    return absl::UnimplementedError(absl::StrCat(OpcodeName(opcode), " without a static operand"));
  }
  auto plan = std::make_shared<TransferPlan>();
  plan->instruction = &instruction;
  for (const Instruction* operand : instruction.operands()) {
    CollectLeafBytes(operand->shape(), &plan->input_bytes);
  }
  CollectLeafBytes(shape, &plan->output_bytes);
  runtime::LibraryCall call;
  call.routine = std::string(OpcodeName(opcode));
  call.context_function = &RunHostTransfer;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::jit
