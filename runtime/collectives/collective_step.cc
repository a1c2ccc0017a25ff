// Library-call steps of collectives (see collective_step.h).
#include "runtime/collectives/collective_step.h"

#include <algorithm>
#include <cstring>
#include <functional>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/collectives.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/status_macros.h"

namespace xjit::collectives {
namespace {

struct CollectivePlan {
  const Instruction* instruction = nullptr;
  // Array operands (the step's first buffers; the tokens of send/recv have
  // none).
  int64_t inputs = 0;
  // The all-reduce fast path: the recognised reducer and element type.
  std::optional<ReductionKind> reduction;
  ElementType type = ElementType::kF32;
  int64_t count = 0;
  // The array all-to-all whose blocks are byte runs (one plain layout, the
  // split dimension major-most): Communicator::AllToAll moves them.
  bool block_exchange = false;
};

// A group of one: what a plain run's collectives see.
class SoloCommunicator : public Communicator {
 public:
  int64_t replica_id() const override { return 0; }
  int64_t replica_count() const override { return 1; }
  absl::Status AllGather(const Instruction&, absl::Span<const int64_t>,
                         absl::Span<const uint8_t> mine, absl::Span<uint8_t> all) override {
    if (!mine.empty()) std::memcpy(all.data(), mine.data(), mine.size());
    return absl::OkStatus();
  }
};

// The evaluator's rule for a plain run: a collective that implies more than
// one participant needs a replicated run.
absl::Status CheckSingleParticipant(const Instruction& instruction) {
  bool many = false;
  const Module* module =
      instruction.parent() != nullptr ? instruction.parent()->parent() : nullptr;
  if (module != nullptr && (module->replica_count() > 1 || module->num_partitions() > 1)) {
    many = true;
  }
  for (const std::vector<int64_t>& group : instruction.attrs().replica_groups) {
    if (group.size() > 1) many = true;
  }
  if (instruction.opcode() == Opcode::kSend || instruction.opcode() == Opcode::kRecv) many = true;
  if (!many) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      OpcodeName(instruction.opcode()), " ", instruction.name(),
      " with more than one replica or partition needs a replicated run (xjit run "
      "[--replicas N], xjit_execute_replicated)"));
}

// Gathers every group member's `contribution` (the same shape everywhere).
absl::StatusOr<std::vector<Literal>> GatherLiterals(Communicator& communicator,
                                                   const Instruction& site,
                                                   absl::Span<const int64_t> group,
                                                   const Literal& contribution) {
  const std::vector<uint8_t> mine = runtime::FlattenLiteral(contribution);
  std::vector<uint8_t> all(mine.size() * group.size());
  XJIT_RETURN_IF_ERROR(communicator.AllGather(site, group, mine, absl::MakeSpan(all)));
  std::vector<Literal> values;
  values.reserve(group.size());
  for (size_t m = 0; m < group.size(); ++m) {
    values.push_back(runtime::UnflattenLiteral(contribution.shape(), all.data() + m * mine.size()));
  }
  return values;
}

Literal TupleOf(std::vector<Literal> elements) { return Literal::MakeTuple(std::move(elements)); }

eval::DeviceGrid Grid(const Communicator& communicator) {
  return eval::DeviceGrid{communicator.replica_count(), communicator.partition_count()};
}

// The devices of this device's group (eval::ParticipantDevices).
absl::StatusOr<std::vector<int64_t>> Group(const Communicator& communicator,
                                           const Instruction& instruction) {
  return eval::ParticipantDevices(instruction, Grid(communicator), communicator.replica_id(),
                                  communicator.partition_id());
}

// collective-permute (and -start): this device receives its source's
// operand (the tuple of the operands in the combined form), or zeros when no
// pair targets it (EvalReplicatedPermute).
absl::StatusOr<Literal> Permute(Communicator& communicator, const Instruction& instruction,
                                const Literal& operand) {
  const Shape& shape = instruction.shape();
  const bool start = instruction.opcode() == Opcode::kCollectivePermuteStart;
  if (start && (!shape.IsTuple() || shape.tuple_size() < 2)) {
    return absl::InvalidArgumentError("collective-permute-start has a tuple result");
  }
  const Shape& result_shape = start ? shape.tuple_shapes(1) : shape;
  XJIT_ASSIGN_OR_RETURN(eval::PermutePeers peers,
                        eval::PermuteDevices(instruction, Grid(communicator),
                                             communicator.replica_id(),
                                             communicator.partition_id()));
  const std::vector<int64_t>& group = peers.group;
  const std::optional<int64_t>& source = peers.source;
  Literal result(result_shape);
  if (std::find(group.begin(), group.end(), communicator.device_id()) != group.end()) {
    XJIT_ASSIGN_OR_RETURN(std::vector<Literal> values,
                          GatherLiterals(communicator, instruction, group, operand));
    if (source.has_value()) {
      const int64_t i = std::find(group.begin(), group.end(), *source) - group.begin();
      result = values[i].Relayout(result_shape);
    }
  }
  if (!start) return result;
  std::vector<Literal> elements;
  elements.push_back(operand.Relayout(shape.tuple_shapes(0)));
  elements.push_back(std::move(result));
  for (int64_t i = 2; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
  return TupleOf(std::move(elements));
}

// Every other collective (EvalReplicatedCollective).
absl::StatusOr<Literal> Collective(Communicator& communicator, const Instruction& instruction,
                                   std::vector<Literal> operands) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kCollectivePermute || opcode == Opcode::kCollectivePermuteStart) {
    if (eval::IsCombinedPermute(instruction)) {
      return Permute(communicator, instruction, TupleOf(std::move(operands)));
    }
    return Permute(communicator, instruction, operands[0]);
  }
  Literal contribution = operands.size() == 1 ? std::move(operands[0]) : TupleOf(std::move(operands));
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> group, Group(communicator, instruction));
  const int64_t position =
      std::find(group.begin(), group.end(), communicator.device_id()) - group.begin();
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> values,
                        GatherLiterals(communicator, instruction, group, contribution));
  // Reducers the fast path does not take are evaluated on scalars.
  Evaluator evaluator;
  eval::Context context;
  context.call = [&evaluator](const Computation& computation,
                              absl::Span<const Literal* const> arguments) {
    return evaluator.EvaluateComputation(computation, arguments);
  };
  const Shape& shape = instruction.shape();
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart:
      return eval::AllReduceResult(instruction, values, shape, context);
    case Opcode::kAllGather:
      return eval::AllGatherResult(instruction, values, shape);
    case Opcode::kAllGatherStart: {
      if (!shape.IsTuple() || shape.tuple_size() != 2) {
        return absl::InvalidArgumentError("all-gather-start has an (operands, results) result");
      }
      std::vector<Literal> elements;
      elements.push_back(contribution.Relayout(shape.tuple_shapes(0)));
      XJIT_ASSIGN_OR_RETURN(Literal out,
                            eval::AllGatherResult(instruction, values, shape.tuple_shapes(1)));
      elements.push_back(std::move(out));
      return TupleOf(std::move(elements));
    }
    case Opcode::kReduceScatter:
      return eval::ReduceScatterResult(instruction, values, position, shape, context);
    case Opcode::kAllToAll:
      return eval::AllToAllResult(instruction, values, position, shape);
    case Opcode::kCollectiveBroadcast:
      return values[0].Relayout(shape);
    case Opcode::kRaggedAllToAll:
      // Every member's six operands travel: the receiver needs the senders'
      // offsets and sizes as well as their rows.
      return eval::RaggedAllToAllResult(instruction, values, position, shape);
    default:
      return absl::UnimplementedError(absl::StrCat(OpcodeName(opcode), " is not a collective step"));
  }
}

// send/recv between replicas (EvalHostTransfer's replicated branch): a send
// passes its operand to each target and never waits, a recv waits for its
// source's value (zeros without a source). Values travel in the default
// layout, so the two ends' layouts may differ. Results are (data, u32 0).
absl::StatusOr<Literal> SendRecv(Communicator& communicator, const Instruction& instruction,
                                 std::vector<Literal> operands) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() < 2 || !shape.tuple_shapes(0).IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpcodeName(instruction.opcode()), " has an (array, ..., token) result"));
  }
  if (communicator.partition_count() > 1) {
    return absl::UnimplementedError(
        absl::StrCat(OpcodeName(instruction.opcode()),
                     " between replicas of a module with num_partitions > 1 is not supported yet"));
  }
  XJIT_ASSIGN_OR_RETURN(eval::SendRecvPeers peers,
                        eval::CrossReplicaPeers(instruction, communicator.replica_count(),
                                                communicator.replica_id()));
  const Shape canonical = WithDefaultLayouts(shape.tuple_shapes(0));
  Literal data(canonical);
  if (instruction.opcode() == Opcode::kSend) {
    if (operands.size() != 1) return absl::InvalidArgumentError("send needs an operand");
    data = operands[0].Relayout(canonical);
    for (int64_t target : peers.targets) {
      XJIT_RETURN_IF_ERROR(communicator.Send(instruction, target, eval::kSendRecvTag, data.data()));
    }
  } else if (peers.source.has_value()) {
    XJIT_RETURN_IF_ERROR(
        communicator.Recv(instruction, *peers.source, eval::kSendRecvTag, data.data()));
  }
  std::vector<Literal> elements;
  elements.push_back(data.Relayout(shape.tuple_shapes(0)));
  for (int64_t i = 1; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
  return TupleOf(std::move(elements));
}

absl::Status RunCollectiveCall(const void* plan_pointer, void* const* buffers, void* /*scratch*/,
                               const runtime::RunContext& run) {
  const CollectivePlan& plan = *static_cast<const CollectivePlan*>(plan_pointer);
  const Instruction& instruction = *plan.instruction;
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kReplicaId || opcode == Opcode::kPartitionId) {
    const uint32_t id = static_cast<uint32_t>(opcode == Opcode::kReplicaId ? run.replica_id
                                                                            : run.partition_id);
    std::memcpy(buffers[0], &id, sizeof(id));  // u32[] (the verifier's shape).
    return absl::OkStatus();
  }
  SoloCommunicator solo;
  Communicator* communicator = run.communicator;
  if (communicator == nullptr) {
    XJIT_RETURN_IF_ERROR(CheckSingleParticipant(instruction));
    communicator = &solo;
  }
  const int64_t operand_count = plan.inputs;
  if (plan.reduction.has_value()) {
    XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> group, Group(*communicator, instruction));
    return communicator->AllReduce(instruction, group, plan.type, *plan.reduction, buffers[0],
                                   buffers[1], plan.count);
  }
  if (plan.block_exchange) {
    XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> group, Group(*communicator, instruction));
    const Shape& shape = instruction.shape();
    const int64_t members = static_cast<int64_t>(group.size());
    // Otherwise the general path below reports the uneven split.
    if (shape.dimensions(instruction.attrs().dimensions[0]) % members == 0) {
      return communicator->AllToAll(instruction, group, buffers[0], buffers[1],
                                    ByteSize(shape) / members);
    }
  }
  std::vector<Literal> operands;
  operands.reserve(operand_count);
  for (int64_t i = 0; i < operand_count; ++i) {
    Literal value(instruction.operand(i)->shape());
    absl::Span<uint8_t> bytes = value.data();
    if (!bytes.empty()) std::memcpy(bytes.data(), buffers[i], bytes.size());
    operands.push_back(std::move(value));
  }
  const bool send_recv = opcode == Opcode::kSend || opcode == Opcode::kRecv;
  absl::StatusOr<Literal> result =
      send_recv ? SendRecv(*communicator, instruction, std::move(operands))
                : Collective(*communicator, instruction, std::move(operands));
  if (!result.ok()) {
    return absl::Status(result.status().code(),
                        absl::StrCat(instruction.name(), ": ", result.status().message()));
  }
  const std::vector<uint8_t> flat =
      runtime::FlattenLiteral(result->Relayout(instruction.shape()));
  // The result's array leaves, one buffer each, in flattened order.
  int64_t offset = 0;
  int64_t leaf = 0;
  std::function<void(const Shape&)> write = [&](const Shape& shape) {
    if (shape.IsTuple()) {
      for (const Shape& element : shape.tuple_shapes()) write(element);
    } else if (shape.IsArray()) {
      const int64_t size = ByteSize(shape);
      if (size > 0) std::memcpy(buffers[operand_count + leaf], flat.data() + offset, size);
      offset += size;
      ++leaf;
    }
  };
  write(instruction.shape());
  return absl::OkStatus();
}

}  // namespace

bool IsCollectiveStep(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllGather:
    case Opcode::kAllGatherStart: case Opcode::kReduceScatter: case Opcode::kAllToAll:
    case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast: case Opcode::kReplicaId: case Opcode::kPartitionId:
    case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

bool IsCollectiveStep(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (opcode == Opcode::kSend || opcode == Opcode::kRecv) {
    return eval::IsCrossReplicaTransfer(instruction);
  }
  return IsCollectiveStep(opcode);
}

std::optional<ReductionKind> RecognizeReducer(const Computation& reducer) {
  if (reducer.parameter_count() != 2) return std::nullopt;
  const Instruction* root = reducer.root();
  if (root == nullptr || root->operand_count() != 2 || !root->shape().IsArray() ||
      root->shape().rank() != 0) {
    return std::nullopt;
  }
  const Instruction* a = reducer.parameter(0);
  const Instruction* b = reducer.parameter(1);
  const bool plain = (root->operand(0) == a && root->operand(1) == b) ||
                     (root->operand(0) == b && root->operand(1) == a);
  if (!plain || !(a->shape() == root->shape()) || !(b->shape() == root->shape())) {
    return std::nullopt;
  }
  switch (root->opcode()) {
    case Opcode::kAdd: return ReductionKind::kSum;
    case Opcode::kMultiply: return ReductionKind::kProduct;
    case Opcode::kMaximum: return ReductionKind::kMax;
    case Opcode::kMinimum: return ReductionKind::kMin;
    case Opcode::kAnd: return ReductionKind::kAnd;
    case Opcode::kOr: return ReductionKind::kOr;
    default: return std::nullopt;
  }
}

absl::StatusOr<runtime::LibraryCall> PlanCollectiveCall(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (!IsCollectiveStep(instruction)) {
    return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " is not a collective"));
  }
  const bool send_recv = opcode == Opcode::kSend || opcode == Opcode::kRecv;
  int64_t inputs = 0;
  for (const Instruction* operand : instruction.operands()) {
    if (send_recv && operand->shape().IsToken()) continue;
    if (!operand->shape().IsArray() || operand->shape().is_dynamic()) {
      return absl::UnimplementedError("collective with a tuple or dynamic operand");
    }
    ++inputs;
  }
  if (send_recv) {
    const Shape& shape = instruction.shape();
    if (!shape.IsTuple() || shape.tuple_size() < 2 || !shape.tuple_shapes(0).IsArray() ||
        shape.tuple_shapes(0).is_dynamic() || inputs != (opcode == Opcode::kSend ? 1 : 0)) {
      return absl::UnimplementedError(
          absl::StrCat(OpcodeName(opcode), " between replicas of other than one static array"));
    }
  }
  if ((opcode == Opcode::kCollectivePermute || opcode == Opcode::kCollectivePermuteStart) &&
      instruction.operand_count() != 1 && !eval::IsCombinedPermute(instruction)) {
    return absl::UnimplementedError("collective-permute with in-place buffer operands");
  }
  if (opcode != Opcode::kReplicaId && opcode != Opcode::kPartitionId && opcode != Opcode::kRecv &&
      instruction.operand_count() == 0) {
    return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " needs operands"));
  }
  auto plan = std::make_shared<CollectivePlan>();
  plan->instruction = &instruction;
  plan->inputs = inputs;
  runtime::LibraryCall call;
  call.routine = std::string(OpcodeName(opcode));
  const bool all_reduce = opcode == Opcode::kAllReduce || opcode == Opcode::kAllReduceStart;
  if (all_reduce && instruction.operand_count() == 1 &&
      !instruction.called_computations().empty() &&
      instruction.called_computations()[0] != nullptr &&
      instruction.operand(0)->shape() == instruction.shape()) {
    const Shape& shape = instruction.shape();
    std::optional<ReductionKind> kind = RecognizeReducer(*instruction.called_computations()[0]);
    if (kind.has_value() && shape.element_type() == instruction.called_computations()[0]
                                                         ->root()->shape().element_type() &&
        CanFold(shape.element_type(), *kind) &&
        ByteSize(shape) == shape.element_count() * ByteWidth(shape.element_type())) {
      plan->reduction = kind;
      plan->type = shape.element_type();
      plan->count = shape.element_count();
      call.routine = absl::StrCat(call.routine, " (typed fold)");
    }
  }
  const Shape& shape = instruction.shape();
  if (opcode == Opcode::kAllToAll && instruction.operand_count() == 1 &&
      instruction.attrs().dimensions.size() == 1 && shape.IsArray() && shape.rank() > 0 &&
      instruction.operand(0)->shape() == shape && shape.has_layout() &&
      shape.layout().IsPlain() &&
      shape.layout().minor_to_major.back() == instruction.attrs().dimensions[0] &&
      ByteSize(shape) == shape.element_count() * ByteWidth(shape.element_type())) {
    plan->block_exchange = true;
    call.routine = absl::StrCat(call.routine, " (blocks)");
  }
  call.context_function = &RunCollectiveCall;
  call.plan = std::move(plan);
  return call;
}

}  // namespace xjit::collectives
