// The evaluator's driver: checks and relayouts the entry arguments, walks a
// computation's instructions in definition order (operands first), and
// dispatches each instruction to the family that evaluates it: elementwise
// and data movement (interpreter/elementwise.cc, interpreter/data_movement.cc), the involved operations of
// interpreter/ (ops.h), and here control flow, tuples, custom calls, host
// transfers and collectives (single-replica here; across replica threads
// through interpreter/collectives.h in RunModuleReplicated).
//
// Only instructions the root depends on, or that have side effects (directly
// or through a called computation), and their operands, are evaluated, so an
// unused instruction of an unsupported opcode does not fail a program.
#include "interpreter/evaluator.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <system_error>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interpreter/collectives.h"
#include "runtime/host/ffi_registry.h"
#include "interpreter/ops.h"
#include "interpreter/evaluator_internal.h"
#include "ir/status_macros.h"
#include "runtime/host/interrupt.h"
#include "runtime/host/jaxlib_lapack.h"
#include "runtime/host/large_stack.h"
#include "runtime/host/out_of_memory.h"

namespace xjit {

using eval::Operands;

namespace {

absl::Status WithContext(const absl::Status& status, const Instruction& instruction) {
  return absl::Status(status.code(), absl::StrCat(instruction.name(), ": ", status.message()));
}

// Whether a value of shape `value` may stand for static shape `shape`: same
// structure and element types, array sizes equal or (dynamic) smaller.
bool ValueFits(const Shape& value, const Shape& shape) {
  if (shape.IsTuple()) {
    if (!value.IsTuple() || value.tuple_size() != shape.tuple_size()) return false;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      if (!ValueFits(value.tuple_shapes(i), shape.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (shape.IsArray()) {
    if (!value.IsArray() || value.element_type() != shape.element_type() ||
        value.rank() != shape.rank()) {
      return false;
    }
    for (int64_t i = 0; i < shape.rank(); ++i) {
      if (value.dimensions(i) == shape.dimensions(i)) continue;
      if (!shape.is_dynamic_dimension(i) || value.dimensions(i) > shape.dimensions(i)) {
        return false;
      }
    }
    return true;
  }
  return value.element_type() == shape.element_type();
}

// `value` in the layout of `shape` (keeping runtime sizes).
absl::StatusOr<Literal> Conform(Literal value, const Shape& shape) {
  if (!ValueFits(value.shape(), shape)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "value of shape %s does not match the expected shape %s", value.shape().ToString(),
        shape.ToString()));
  }
  if (!shape.IsArray() && !shape.IsTuple()) return value;
  const Shape target = eval::RuntimeShapeLike(shape, value.shape());
  if (value.shape() == target) return value;
  return value.Relayout(target);
}

using eval::IsCrossReplicaTransfer;

bool IsCollective(Opcode opcode) {
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllGather:
    case Opcode::kAllGatherStart: case Opcode::kAllToAll: case Opcode::kReduceScatter:
    case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart:
    case Opcode::kCollectiveBroadcast: case Opcode::kCollectiveReduce:
    case Opcode::kRaggedAllToAll:
      return true;
    default:
      return false;
  }
}

// Custom-call targets that XLA's own pipelines emit as annotations: they
// return their (single) operand unchanged.
// (SPMDFullToShardShape and SPMDShardToFullShape cut and assemble tiles:
// eval::ShardOf, eval::FullFromShards.)
bool IsIdentityCustomCall(absl::string_view target) {
  return target == "Sharding" || target == "MoveToHost" || target == "MoveToDevice" ||
         target == "LayoutConstraint" || target == "annotate_device_placement";
}

}  // namespace

class Evaluator::Impl {
 public:
  // Unimplemented when `instruction` is a collective (or a send/recv between
  // replicas) that needs more than one participant.
  absl::Status CheckSingleParticipant(const Instruction& instruction) const;
  void SetModuleParticipants(int64_t replicas, int64_t partitions) {
    module_replica_count_ = replicas;
    module_partition_count_ = partitions;
  }

  explicit Impl(EvaluatorOptions options)
      : options_(std::move(options)),
        own_rng_state_(options_.rng_seed),
        rng_state_(options_.rng_state != nullptr ? options_.rng_state : &own_rng_state_) {}

  const EvaluatorOptions& options() const { return options_; }

  // Makes this evaluator replica `replica_id`, partition `partition_id` of
  // a replicated run whose collectives meet in `rendezvous`.
  void JoinReplicas(int64_t replica_id, int64_t partition_id, eval::ReplicaExchange* rendezvous) {
    replica_id_ = replica_id;
    partition_id_ = partition_id;
    rendezvous_ = rendezvous;
  }

  absl::StatusOr<Literal> RunModule(const Module& module, absl::Span<const Literal> arguments);
  absl::StatusOr<Literal> RunComputation(const Computation& computation,
                                         absl::Span<const Literal* const> arguments);
  absl::StatusOr<Literal> EvalInstruction(const Instruction& instruction, Operands operands);

 private:
  HostQueues& queues() { return options_.queues != nullptr ? *options_.queues : own_queues_; }
  eval::Context MakeContext();
  bool HasSideEffects(const Instruction& instruction);
  bool ComputationHasSideEffects(const Computation& computation);

  absl::StatusOr<Literal> EvalMap(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalWhile(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalConditional(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalCustomCall(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalHostTransfer(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalCollective(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalAsync(const Instruction& instruction, Operands operands);
  absl::StatusOr<Literal> EvalReplicatedCollective(const Instruction& instruction,
                                                   Operands operands);
  absl::StatusOr<Literal> EvalReplicatedPermute(const Instruction& instruction,
                                                Operands operands);
  absl::StatusOr<Literal> EvalShardingCall(const Instruction& instruction, Operands operands);
  // The run's devices (one in a plain run) and this evaluator's device id.
  eval::DeviceGrid Grid() const {
    if (rendezvous_ == nullptr) return eval::DeviceGrid{1, 1};
    return eval::DeviceGrid{rendezvous_->replica_count(), rendezvous_->partition_count()};
  }
  int64_t device_id() const { return Grid().Device(replica_id_, partition_id_); }
  // The values of every member of `group` (this replica's included) at this
  // execution of `instruction`.
  absl::StatusOr<std::vector<Literal>> Exchange(const Instruction& instruction,
                                                const std::vector<int64_t>& group,
                                                Literal value);

  EvaluatorOptions options_;
  uint64_t own_rng_state_;
  uint64_t* rng_state_;  // options_.rng_state or &own_rng_state_.
  HostQueues own_queues_;
  absl::flat_hash_map<const Computation*, bool> side_effect_memo_;
  // The module's own replica and partition counts (1 outside RunModule).
  int64_t module_replica_count_ = 1;
  int64_t module_partition_count_ = 1;
  // Replicated runs: this device's replica and partition, the shared
  // rendezvous (null in a plain run) and how often each collective has run
  // on this device.
  int64_t replica_id_ = 0;
  int64_t partition_id_ = 0;
  eval::ReplicaExchange* rendezvous_ = nullptr;
  absl::flat_hash_map<const Instruction*, int64_t> occurrences_;
};

absl::Status Evaluator::Impl::CheckSingleParticipant(const Instruction& instruction) const {
  const Opcode opcode = instruction.opcode();
  const bool transfer = (opcode == Opcode::kSend || opcode == Opcode::kRecv) &&
                        IsCrossReplicaTransfer(instruction);
  const bool sharding_call = opcode == Opcode::kCustomCall &&
                             eval::IsShardingCall(instruction.attrs().custom_call_target);
  if (sharding_call) {
    // A tile or the whole array of a partition other than the only one.
    if (rendezvous_ != nullptr || module_partition_count_ <= 1) return absl::OkStatus();
    return absl::UnimplementedError(absl::StrCat(
        "evaluator: ", instruction.attrs().custom_call_target, " ", instruction.name(),
        " of a module with num_partitions=", module_partition_count_,
        " needs a run of every partition (xjit run; RunModuleReplicated)"));
  }
  if (!IsCollective(opcode) && !transfer) return absl::OkStatus();
  if (rendezvous_ != nullptr) {
    if (opcode == Opcode::kCollectiveReduce) {
      return absl::UnimplementedError(absl::StrCat(
          "evaluator: ", OpcodeName(opcode), " ", instruction.name(),
          " across replicas is not supported yet"));
    }
    return absl::OkStatus();
  }
  bool many = options_.replica_count > 1 || module_replica_count_ > 1 ||
              module_partition_count_ > 1 || transfer;
  for (const std::vector<int64_t>& group : instruction.attrs().replica_groups) {
    if (group.size() > 1) many = true;
  }
  if (!many) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "evaluator: ", OpcodeName(opcode), " ", instruction.name(),
      " with more than one replica or partition needs a replicated run (RunModuleReplicated, "
      "xjit run --backend=interpreter [--replicas N])"));
}

eval::Context Evaluator::Impl::MakeContext() {
  eval::Context context;
  context.call = [this](const Computation& computation,
                        absl::Span<const Literal* const> arguments) {
    return RunComputation(computation, arguments);
  };
  context.rng_state = rng_state_;
  return context;
}

bool Evaluator::Impl::HasSideEffects(const Instruction& instruction) {
  if (HasSideEffect(instruction.opcode())) return true;
  if (instruction.opcode() == Opcode::kCustomCall &&
      instruction.attrs().custom_call_has_side_effect) {
    return true;
  }
  for (const Computation* called : instruction.called_computations()) {
    if (called != nullptr && ComputationHasSideEffects(*called)) return true;
  }
  return false;
}

bool Evaluator::Impl::ComputationHasSideEffects(const Computation& computation) {
  auto it = side_effect_memo_.find(&computation);
  if (it != side_effect_memo_.end()) return it->second;
  side_effect_memo_[&computation] = false;  // Breaks (invalid) recursion.
  bool result = false;
  for (const auto& instruction : computation.instructions()) {
    if (HasSideEffects(*instruction)) {
      result = true;
      break;
    }
  }
  side_effect_memo_[&computation] = result;
  return result;
}

absl::StatusOr<Literal> Evaluator::Impl::RunModule(const Module& module,
                                                   absl::Span<const Literal> arguments) {
  const Computation* entry = module.entry();
  if (entry == nullptr) return absl::InvalidArgumentError("the module has no entry computation");
  if (static_cast<int64_t>(arguments.size()) != entry->parameter_count()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "the entry computation %s takes %d arguments, got %d", entry->name(),
        entry->parameter_count(), arguments.size()));
  }
  module_replica_count_ = module.replica_count();
  module_partition_count_ = module.num_partitions();
  // Fail fast (before evaluating large producers) on collectives that need
  // more than one participant.
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      XJIT_RETURN_IF_ERROR(CheckSingleParticipant(*instruction));
    }
  }
  std::vector<Literal> converted;
  converted.reserve(arguments.size());
  for (int64_t i = 0; i < entry->parameter_count(); ++i) {
    const Instruction* parameter = entry->parameter(i);
    if (parameter == nullptr) {
      return absl::InvalidArgumentError(absl::StrFormat("entry parameter %d is missing", i));
    }
    if (!ValueFits(arguments[i].shape(), parameter->shape())) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "argument %d has shape %s but entry parameter %d (%s) has shape %s", i,
          arguments[i].shape().ToString(false), i, parameter->name(),
          parameter->shape().ToString(false)));
    }
    XJIT_ASSIGN_OR_RETURN(Literal value, Conform(arguments[i], parameter->shape()));
    converted.push_back(std::move(value));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& value : converted) pointers.push_back(&value);
  XJIT_ASSIGN_OR_RETURN(Literal result, RunComputation(*entry, pointers));
  // entry_computation_layout= decides the result's layout where given.
  if (module.entry_result_layout().has_value() &&
      ValueFits(result.shape(), *module.entry_result_layout())) {
    return Conform(std::move(result), *module.entry_result_layout());
  }
  return result;
}

absl::StatusOr<Literal> Evaluator::Impl::RunComputation(
    const Computation& computation, absl::Span<const Literal* const> arguments) {
  if (static_cast<int64_t>(arguments.size()) != computation.parameter_count()) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "computation %s takes %d arguments, got %d", computation.name(),
        computation.parameter_count(), arguments.size()));
  }
  const Instruction* root = computation.root();
  if (root == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("computation ", computation.name(), " has no root"));
  }
  const auto& instructions = computation.instructions();
  absl::flat_hash_map<const Instruction*, int64_t> position;
  for (int64_t i = 0; i < static_cast<int64_t>(instructions.size()); ++i) {
    position[instructions[i].get()] = i;
  }
  // Liveness: the root, side-effecting instructions, and everything they
  // depend on (operands and control predecessors).
  std::vector<bool> live(instructions.size(), false);
  std::vector<const Instruction*> work = {root};
  for (const auto& instruction : instructions) {
    if (HasSideEffects(*instruction)) work.push_back(instruction.get());
  }
  while (!work.empty()) {
    const Instruction* instruction = work.back();
    work.pop_back();
    auto it = position.find(instruction);
    if (it == position.end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "instruction %s is used in computation %s but does not belong to it",
          instruction->name(), computation.name()));
    }
    if (live[it->second]) continue;
    live[it->second] = true;
    for (const Instruction* operand : instruction->operands()) work.push_back(operand);
    for (const Instruction* predecessor : instruction->control_predecessors()) {
      work.push_back(predecessor);
    }
  }

  std::vector<std::optional<Literal>> values(instructions.size());
  std::vector<const Literal*> operands;
  for (int64_t i = 0; i < static_cast<int64_t>(instructions.size()); ++i) {
    if (!live[i]) continue;
    const Instruction& instruction = *instructions[i];
    if (instruction.opcode() == Opcode::kParameter) {
      const int64_t number = instruction.attrs().parameter_number;
      if (number < 0 || number >= static_cast<int64_t>(arguments.size())) {
        return WithContext(absl::InvalidArgumentError("parameter number out of range"),
                           instruction);
      }
      values[i] = *arguments[number];
      continue;
    }
    operands.clear();
    for (const Instruction* operand : instruction.operands()) {
      const int64_t p = position.at(operand);
      if (p >= i || !values[p].has_value()) {
        return WithContext(absl::InvalidArgumentError(absl::StrCat(
                               "operand ", operand->name(), " is not defined before its use")),
                           instruction);
      }
      operands.push_back(&*values[p]);
    }
    absl::StatusOr<Literal> value = EvalInstruction(instruction, operands);
    if (!value.ok()) return WithContext(value.status(), instruction);
    values[i] = std::move(*value);
  }
  return std::move(*values[position.at(root)]);
}

absl::StatusOr<Literal> Evaluator::Impl::EvalInstruction(const Instruction& instruction,
                                                         Operands operands) {
  const Opcode opcode = instruction.opcode();
  const eval::Context context = MakeContext();
  auto first = [&]() -> absl::StatusOr<Literal> {
    if (operands.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " needs an operand"));
    }
    return Conform(*operands[0], instruction.shape());
  };
  auto called = [&](size_t i) -> absl::StatusOr<const Computation*> {
    if (instruction.called_computations().size() <= i ||
        instruction.called_computations()[i] == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpcodeName(opcode), " is missing a called computation"));
    }
    return instruction.called_computations()[i];
  };

  if (IsElementwise(opcode) || opcode == Opcode::kBitcastConvert) {
    return eval::EvalElementwise(instruction, operands);
  }
  if (IsCollective(opcode)) return EvalCollective(instruction, operands);

  switch (opcode) {
    case Opcode::kParameter:
      return absl::InvalidArgumentError("a parameter has no value outside its computation");
    case Opcode::kConstant:
      return Conform(instruction.literal(), instruction.shape());

    case Opcode::kBroadcast: case Opcode::kReshape: case Opcode::kDynamicReshape:
    case Opcode::kTranspose: case Opcode::kSlice: case Opcode::kPad: case Opcode::kConcatenate:
    case Opcode::kReverse: case Opcode::kDynamicSlice: case Opcode::kDynamicUpdateSlice:
    case Opcode::kIota: case Opcode::kCopy: case Opcode::kBitcast:
    case Opcode::kGetDimensionSize: case Opcode::kSetDimensionSize:
      return eval::EvalDataMovement(instruction, operands);

    case Opcode::kTuple: {
      std::vector<Literal> elements;
      elements.reserve(operands.size());
      for (const Literal* operand : operands) elements.push_back(*operand);
      return Literal::MakeTuple(std::move(elements));
    }
    case Opcode::kGetTupleElement: {
      if (operands.size() != 1 || !operands[0]->shape().IsTuple()) {
        return absl::InvalidArgumentError("get-tuple-element needs one tuple operand");
      }
      const int64_t index = instruction.attrs().tuple_index;
      if (index < 0 || index >= static_cast<int64_t>(operands[0]->elements().size())) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "tuple index %d is out of range for %s", index, operands[0]->shape().ToString()));
      }
      return operands[0]->element(index);
    }

    case Opcode::kCall: case Opcode::kFusion: {
      XJIT_ASSIGN_OR_RETURN(const Computation* computation, called(0));
      XJIT_ASSIGN_OR_RETURN(Literal result, RunComputation(*computation, operands));
      return Conform(std::move(result), instruction.shape());
    }
    case Opcode::kMap: return EvalMap(instruction, operands);
    case Opcode::kWhile: return EvalWhile(instruction, operands);
    case Opcode::kConditional: return EvalConditional(instruction, operands);
    case Opcode::kCustomCall: return EvalCustomCall(instruction, operands);

    case Opcode::kOptimizationBarrier: case Opcode::kAddDependency: case Opcode::kDomain:
      return first();
    case Opcode::kAfterAll:
      return Literal(Shape::Token());
    case Opcode::kReplicaId: case Opcode::kPartitionId: {
      Literal result(instruction.shape());
      if (result.shape().IsArray() && result.element_count() == 1) {
        result.SetBitsLinear(0, static_cast<uint64_t>(opcode == Opcode::kReplicaId
                                                          ? replica_id_
                                                          : partition_id_));
      }
      return result;
    }

    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kSendDone:
    case Opcode::kRecv: case Opcode::kRecvDone:
      return EvalHostTransfer(instruction, operands);

    case Opcode::kAsyncStart: case Opcode::kAsyncUpdate: case Opcode::kAsyncDone:
    case Opcode::kCopyStart: case Opcode::kCopyDone: case Opcode::kAllReduceDone:
    case Opcode::kAllGatherDone: case Opcode::kCollectivePermuteDone:
      return EvalAsync(instruction, operands);

    case Opcode::kRngGetAndUpdateState: {
      Literal result(instruction.shape());
      if (!result.shape().IsArray() || result.element_count() < 1) {
        return absl::InvalidArgumentError("rng-get-and-update-state has a u64[2] result");
      }
      result.SetBitsLinear(0, *rng_state_);
      *rng_state_ += static_cast<uint64_t>(instruction.attrs().delta);
      return result;
    }

    case Opcode::kDot: return eval::EvalDot(instruction, operands, context);
    case Opcode::kConvolution: return eval::EvalConvolution(instruction, operands, context);
    case Opcode::kFft: return eval::EvalFft(instruction, operands, context);
    case Opcode::kCholesky: return eval::EvalCholesky(instruction, operands, context);
    case Opcode::kTriangularSolve:
      return eval::EvalTriangularSolve(instruction, operands, context);
    case Opcode::kGather: return eval::EvalGather(instruction, operands, context);
    case Opcode::kScatter: return eval::EvalScatter(instruction, operands, context);
    case Opcode::kSort: return eval::EvalSort(instruction, operands, context);
    case Opcode::kTopK: return eval::EvalTopK(instruction, operands, context);
    case Opcode::kReduce: return eval::EvalReduce(instruction, operands, context);
    case Opcode::kReduceWindow: return eval::EvalReduceWindow(instruction, operands, context);
    case Opcode::kSelectAndScatter:
      return eval::EvalSelectAndScatter(instruction, operands, context);
    case Opcode::kBatchNormTraining:
      return eval::EvalBatchNormTraining(instruction, operands, context);
    case Opcode::kBatchNormInference:
      return eval::EvalBatchNormInference(instruction, operands, context);
    case Opcode::kBatchNormGrad: return eval::EvalBatchNormGrad(instruction, operands, context);
    case Opcode::kRngBitGenerator:
      return eval::EvalRngBitGenerator(instruction, operands, context);
    case Opcode::kRng: return eval::EvalRng(instruction, operands, context);
    case Opcode::kRaggedDot: return eval::EvalRaggedDot(instruction, operands, context);
    case Opcode::kScaledDot: return eval::EvalScaledDot(instruction, operands, context);
    case Opcode::kScan: return eval::EvalScan(instruction, operands, context);
    case Opcode::kShuffle: return eval::EvalShuffle(instruction, operands, context);

    default:
      return absl::UnimplementedError(absl::StrCat(
          "evaluator: ", OpcodeName(opcode), " is not supported yet"));
  }
}

absl::StatusOr<Literal> Evaluator::Impl::EvalMap(const Instruction& instruction,
                                                 Operands operands) {
  if (instruction.called_computations().empty()) {
    return absl::InvalidArgumentError("map needs to_apply=");
  }
  const Computation& computation = *instruction.to_apply();
  if (operands.empty()) return absl::InvalidArgumentError("map needs operands");
  for (const Literal* operand : operands) {
    if (!operand->shape().IsArray() || !operand->shape().SameDimensions(operands[0]->shape())) {
      return absl::InvalidArgumentError("map operands must be arrays of the same dimensions");
    }
  }
  Literal result(eval::WithRuntimeDimensions(instruction.shape(), operands[0]->shape().dimensions()));
  std::vector<Literal> scalars;
  for (const Literal* operand : operands) {
    scalars.emplace_back(Shape::Scalar(operand->shape().element_type()));
  }
  std::vector<const Literal*> arguments;
  for (const Literal& scalar : scalars) arguments.push_back(&scalar);
  absl::Status status = absl::OkStatus();
  eval::ForEachIndex(operands[0]->shape().dimensions(), [&](absl::Span<const int64_t> index) {
    if (!status.ok()) return;
    for (size_t k = 0; k < operands.size(); ++k) {
      eval::CopyElement(*operands[k], index, scalars[k], {});
    }
    absl::StatusOr<Literal> value = RunComputation(computation, arguments);
    if (!value.ok()) {
      status = value.status();
      return;
    }
    if (!value->shape().IsArray() || value->shape().rank() != 0 ||
        value->shape().element_type() != result.shape().element_type()) {
      status = absl::InvalidArgumentError("map's computation must return a scalar of the result type");
      return;
    }
    eval::CopyElement(*value, {}, result, index);
  });
  XJIT_RETURN_IF_ERROR(status);
  return result;
}

absl::StatusOr<Literal> Evaluator::Impl::EvalWhile(const Instruction& instruction,
                                                   Operands operands) {
  if (operands.size() != 1 || instruction.called_computations().size() < 2) {
    return absl::InvalidArgumentError("while needs one operand, condition= and body=");
  }
  const Computation& condition = *instruction.while_condition();
  const Computation& body = *instruction.while_body();
  Literal state = *operands[0];
  for (int64_t iteration = 0;; ++iteration) {
    XJIT_RETURN_IF_ERROR(CheckInterrupt());  // Ctrl-C in the command line.
    if (options_.max_while_iterations >= 0 && iteration > options_.max_while_iterations) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "while loop ran more than %d iterations", options_.max_while_iterations));
    }
    const Literal* argument = &state;
    XJIT_ASSIGN_OR_RETURN(Literal keep_going, RunComputation(condition, {&argument, 1}));
    if (!keep_going.shape().IsArray() || keep_going.shape().element_type() != ElementType::kPred ||
        keep_going.element_count() != 1) {
      return absl::InvalidArgumentError("a while condition must return pred[]");
    }
    if (keep_going.GetBitsLinear(0) == 0) break;
    XJIT_ASSIGN_OR_RETURN(Literal next, RunComputation(body, {&argument, 1}));
    state = std::move(next);
  }
  return Conform(std::move(state), instruction.shape());
}

absl::StatusOr<Literal> Evaluator::Impl::EvalConditional(const Instruction& instruction,
                                                         Operands operands) {
  const auto& branches = instruction.called_computations();
  if (operands.empty() || branches.empty() || operands.size() != branches.size() + 1) {
    return absl::InvalidArgumentError(
        "conditional needs a selector and one operand per branch computation");
  }
  const Literal& selector = *operands[0];
  if (!selector.shape().IsArray() || selector.shape().rank() != 0) {
    return absl::InvalidArgumentError("the conditional selector must be a scalar");
  }
  const int64_t n = static_cast<int64_t>(branches.size());
  int64_t branch;
  if (selector.shape().element_type() == ElementType::kPred) {
    if (n != 2) return absl::InvalidArgumentError("a pred conditional needs two branches");
    branch = selector.GetBits({}) != 0 ? 0 : 1;
  } else if (IsInteger(selector.shape().element_type())) {
    branch = eval::ReadIndexScalar(selector);
    if (branch < 0 || branch >= n) branch = n - 1;
  } else {
    return absl::InvalidArgumentError("the conditional selector must be pred or an integer");
  }
  const Literal* argument = operands[1 + branch];
  XJIT_ASSIGN_OR_RETURN(Literal result, RunComputation(*branches[branch], {&argument, 1}));
  return Conform(std::move(result), instruction.shape());
}

namespace {

// The data addresses of `literal`'s array leaves, depth first.
void ForEachArrayLeafData(Literal& literal, std::vector<void*>* out) {
  if (literal.shape().IsTuple()) {
    for (Literal& element : *literal.mutable_elements()) ForEachArrayLeafData(element, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(literal.data().data());
  }
}

// Pointer tables that give a custom-call function its buffers: an array is its
// data pointer, a tuple a table of its elements' pointers.
class BufferTables {
 public:
  void* PointerTo(Literal& literal) {
    if (literal.shape().IsTuple()) {
      std::vector<void*>& table = tables_.emplace_back();
      for (Literal& element : *literal.mutable_elements()) table.push_back(PointerTo(element));
      return table.data();
    }
    return literal.data().data();
  }

 private:
  std::deque<std::vector<void*>> tables_;
};

}  // namespace

// A jaxlib LAPACK call: planned (LAPACK's workspace queries) and run into a
// fresh result. The plan reads each operand's data with the strides of the
// operand instruction's layout, so a value that arrives in another layout (a
// call's argument bound to a parameter that declares a different layout) is
// relaid out to it first.
static absl::StatusOr<Literal> EvalJaxlibLapack(const Instruction& instruction,
                                                absl::Span<const Literal* const> operands) {
  XJIT_ASSIGN_OR_RETURN(runtime::host::JaxlibLapackPlan plan,
                        runtime::host::PlanJaxlibLapack(instruction));
  if (operands.size() != instruction.operands().size()) {
    return absl::InvalidArgumentError(absl::StrCat(plan.target, ": operand count mismatch"));
  }
  std::vector<Literal> conformed;
  conformed.reserve(operands.size());
  std::vector<const void*> in;
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!operands[i]->shape().IsArray()) {
      return absl::InvalidArgumentError(absl::StrCat(plan.target, ": operands must be arrays"));
    }
    XJIT_ASSIGN_OR_RETURN(Literal value,
                          Conform(*operands[i], instruction.operands()[i]->shape()));
    conformed.push_back(std::move(value));
    in.push_back(conformed.back().data().data());
  }
  Literal result(instruction.shape());
  std::vector<void*> out;
  ForEachArrayLeafData(result, &out);
  std::vector<uint64_t> scratch((plan.scratch_bytes + 7) / 8 + 2);
  runtime::host::RunJaxlibLapack(plan, in.data(), out.data(), scratch.data());
  return result;
}

absl::StatusOr<Literal> Evaluator::Impl::EvalCustomCall(const Instruction& instruction,
                                                        Operands operands) {
  const InstructionAttributes& attrs = instruction.attrs();
  const std::string& target = attrs.custom_call_target;
  if (std::shared_ptr<const FfiHandler> handler = FfiRegistry::Global().Find(target)) {
    // The typed convention (runtime/host/ffi_registry.h): operands as
    // given, array leaves as typed buffers; the handler's status is the
    // result's.
    std::vector<Literal> inputs;
    for (const Literal* operand : operands) {
      if (operand->shape().is_dynamic()) {
        return absl::UnimplementedError("custom-call with dynamically sized operands");
      }
      inputs.push_back(*operand);
    }
    std::vector<void*> in, out;
    for (Literal& input : inputs) ForEachArrayLeafData(input, &in);
    Literal result(instruction.shape());
    ForEachArrayLeafData(result, &out);
    XJIT_RETURN_IF_ERROR(InvokeFfi(*handler, instruction, in, out));
    return result;
  }
  const CustomCallRegistry& registry =
      options_.custom_calls != nullptr ? *options_.custom_calls : CustomCallRegistry::Global();
  CustomCallFunction function = registry.Find(target);
  if (function == nullptr) {
    if (eval::IsShardingCall(target)) return EvalShardingCall(instruction, operands);
    if (IsIdentityCustomCall(target) && operands.size() == 1) {
      return Conform(*operands[0], instruction.shape());
    }
    // XLA's CPU and GPU compilers write a large enough top-k as this custom
    // call (TopkRewriter): one operand [batch, n] or [n], result (values,
    // s32 indices) with k = the values' last dimension, largest first.
    // Unregistered, it is topk with largest=true (ties and NaN as topk's).
    if (target == "TopK" && operands.size() == 1 && instruction.shape().IsTuple() &&
        instruction.shape().tuple_size() == 2 && instruction.shape().tuple_shapes(0).IsArray() &&
        instruction.shape().tuple_shapes(0).rank() >= 1) {
      const Shape& values = instruction.shape().tuple_shapes(0);
      return eval::TopK(instruction, *operands[0], values.dimensions(values.rank() - 1),
                        /*largest=*/true);
    }
    // XLA's QR (its QrExpander expands these on every backend): LAPACK's
    // ?geqrf and ?orgqr forms, see qr.cc.
    if (target == "Qr") {
      if (operands.size() != 1) return absl::InvalidArgumentError("Qr takes one operand");
      return eval::Qr(instruction, *operands[0]);
    }
    if (target == "ProductOfElementaryHouseholderReflectors") {
      if (operands.size() != 2) {
        return absl::InvalidArgumentError(
            "ProductOfElementaryHouseholderReflectors takes two operands (a, taus)");
      }
      return eval::HouseholderProduct(instruction, *operands[0], *operands[1]);
    }
    // jaxlib's CPU LAPACK calls (lapack_*_ffi): LAPACK itself, with
    // jaxlib's contract (runtime/host/jaxlib_lapack.h).
    if (runtime::host::IsJaxlibLapackTarget(target)) return EvalJaxlibLapack(instruction, operands);
    return absl::NotFoundError(
        absl::StrCat("custom-call target \"", target, "\" is not registered"));
  }
  if (!attrs.api_version.empty() && attrs.api_version != "API_VERSION_ORIGINAL") {
    return absl::UnimplementedError(absl::StrCat(
        "custom-call \"", target, "\": api_version ", attrs.api_version, " is not supported"));
  }
  std::vector<Literal> inputs;
  inputs.reserve(operands.size());
  for (size_t i = 0; i < operands.size(); ++i) {
    if (attrs.has_operand_layout_constraints && i < attrs.operand_layout_constraints.size()) {
      XJIT_ASSIGN_OR_RETURN(Literal value,
                            Conform(*operands[i], attrs.operand_layout_constraints[i]));
      inputs.push_back(std::move(value));
    } else {
      inputs.push_back(*operands[i]);
    }
    if (inputs.back().shape().is_dynamic()) {
      return absl::UnimplementedError("custom-call with dynamically sized operands");
    }
  }
  BufferTables tables;
  std::vector<void*> in;
  for (Literal& input : inputs) in.push_back(tables.PointerTo(input));
  Literal result(instruction.shape());
  // An output aliased with an operand starts with that operand's value.
  for (const OutputOperandAlias& alias : attrs.output_to_operand_aliasing) {
    if (alias.operand_number < 0 || alias.operand_number >= static_cast<int64_t>(inputs.size()) ||
        !alias.operand_index.empty() || alias.output_index.size() > 1) {
      return absl::UnimplementedError("custom-call: this output_to_operand_aliasing form");
    }
    const Literal& source = inputs[alias.operand_number];
    if (alias.output_index.empty()) {
      XJIT_ASSIGN_OR_RETURN(result, Conform(source, instruction.shape()));
    } else {
      const int64_t i = alias.output_index[0];
      if (!result.shape().IsTuple() || i < 0 || i >= result.shape().tuple_size()) {
        return absl::InvalidArgumentError("custom-call: aliased output index out of range");
      }
      XJIT_ASSIGN_OR_RETURN((*result.mutable_elements())[i],
                            Conform(source, instruction.shape().tuple_shapes(i)));
    }
  }
  void* out = tables.PointerTo(result);
  function(out, in.data());
  return result;
}

absl::StatusOr<Literal> Evaluator::Impl::EvalHostTransfer(const Instruction& instruction,
                                                          Operands operands) {
  const Shape& shape = instruction.shape();
  auto make_tuple_with = [&](Literal first) -> absl::StatusOr<Literal> {
    if (!shape.IsTuple() || shape.tuple_size() < 2) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpcodeName(instruction.opcode()), " has a tuple result"));
    }
    std::vector<Literal> elements;
    XJIT_ASSIGN_OR_RETURN(Literal data, Conform(std::move(first), shape.tuple_shapes(0)));
    elements.push_back(std::move(data));
    for (int64_t i = 1; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
    return Literal::MakeTuple(std::move(elements));
  };
  XJIT_RETURN_IF_ERROR(CheckSingleParticipant(instruction));
  if (rendezvous_ != nullptr && IsCrossReplicaTransfer(instruction) &&
      (instruction.opcode() == Opcode::kSend || instruction.opcode() == Opcode::kRecv)) {
    // Between replicas (eval::CrossReplicaPeers): a send posts its operand
    // to each target and never waits; a recv waits for its source's.
    if (rendezvous_->partition_count() > 1) {
      return absl::UnimplementedError(absl::StrCat(
          "evaluator: ", OpcodeName(instruction.opcode()),
          " between replicas of a module with num_partitions > 1 is not supported yet"));
    }
    XJIT_ASSIGN_OR_RETURN(
        eval::SendRecvPeers peers,
        eval::CrossReplicaPeers(instruction, rendezvous_->replica_count(), replica_id_));
    if (instruction.opcode() == Opcode::kSend) {
      if (operands.empty()) return absl::InvalidArgumentError("send needs an operand");
      for (int64_t target : peers.targets) {
        XJIT_RETURN_IF_ERROR(
            rendezvous_->Post(instruction, replica_id_, target, eval::kSendRecvTag, *operands[0]));
      }
      return make_tuple_with(*operands[0]);
    }
    if (!shape.IsTuple() || shape.tuple_size() < 2) {
      return absl::InvalidArgumentError("recv has a tuple result");
    }
    if (!peers.source.has_value()) return make_tuple_with(Literal(shape.tuple_shapes(0)));
    XJIT_ASSIGN_OR_RETURN(Literal value, rendezvous_->Take(instruction, *peers.source,
                                                           replica_id_, eval::kSendRecvTag));
    if (!ValueFits(value.shape(), shape.tuple_shapes(0))) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "recv expects %s but replica %d sent %s", shape.tuple_shapes(0).ToString(false),
          *peers.source, value.shape().ToString(false)));
    }
    return make_tuple_with(std::move(value));
  }
  // A send or recv without channel_id= uses channel 0.
  auto channel = [&]() -> absl::StatusOr<int64_t> {
    return instruction.attrs().channel_id.value_or(0);
  };
  switch (instruction.opcode()) {
    case Opcode::kInfeed: {
      if (!shape.IsTuple() || shape.tuple_size() != 2) {
        return absl::InvalidArgumentError("infeed has a (data, token) result");
      }
      const Shape& data_shape = shape.tuple_shapes(0);
      if (data_shape.IsTuple() && data_shape.tuple_size() == 0) {
        return make_tuple_with(Literal(data_shape));  // Reads nothing (003).
      }
      std::optional<Literal> value = queues().PopInfeed();
      if (!value.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            "infeed of ", data_shape.ToString(), ": the infeed queue is empty"));
      }
      if (!ValueFits(value->shape(), data_shape)) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "infeed expects %s but the queue holds %s", data_shape.ToString(false),
            value->shape().ToString(false)));
      }
      return make_tuple_with(std::move(*value));
    }
    case Opcode::kOutfeed: {
      if (operands.empty()) return absl::InvalidArgumentError("outfeed needs an operand");
      Literal value = *operands[0];
      if (instruction.attrs().outfeed_shape.has_value()) {
        XJIT_ASSIGN_OR_RETURN(value, Conform(std::move(value), *instruction.attrs().outfeed_shape));
      }
      queues().PushOutfeed(std::move(value));
      return Literal(Shape::Token());
    }
    case Opcode::kSend: {
      if (operands.empty()) return absl::InvalidArgumentError("send needs an operand");
      XJIT_ASSIGN_OR_RETURN(int64_t id, channel());
      queues().PushChannel(id, *operands[0]);
      return make_tuple_with(*operands[0]);
    }
    case Opcode::kSendDone:
      return Literal(Shape::Token());
    case Opcode::kRecv: {
      XJIT_ASSIGN_OR_RETURN(int64_t id, channel());
      if (!shape.IsTuple() || shape.tuple_size() < 2) {
        return absl::InvalidArgumentError("recv has a tuple result");
      }
      std::optional<Literal> value = queues().PopChannel(id);
      if (!value.has_value()) {
        return absl::FailedPreconditionError(
            absl::StrFormat("recv: channel %d has no value to receive", id));
      }
      return make_tuple_with(std::move(*value));
    }
    case Opcode::kRecvDone: {
      if (operands.empty() || !operands[0]->shape().IsTuple() ||
          operands[0]->elements().empty()) {
        return absl::InvalidArgumentError("recv-done needs the recv tuple");
      }
      return make_tuple_with(operands[0]->element(0));
    }
    default:
      return absl::InternalError("not a host transfer");
  }
}

absl::StatusOr<Literal> Evaluator::Impl::EvalCollective(const Instruction& instruction,
                                                        Operands operands) {
  const Opcode opcode = instruction.opcode();
  XJIT_RETURN_IF_ERROR(CheckSingleParticipant(instruction));
  if (rendezvous_ != nullptr) return EvalReplicatedCollective(instruction, operands);
  if (operands.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " needs operands"));
  }
  // With one participant every collective passes its operands through.
  auto passthrough = [&](const Shape& shape) -> absl::StatusOr<Literal> {
    Literal value;
    if (operands.size() == 1 && !(shape.IsTuple() && !operands[0]->shape().IsTuple())) {
      value = *operands[0];
    } else {
      std::vector<Literal> elements;
      for (const Literal* operand : operands) elements.push_back(*operand);
      value = Literal::MakeTuple(std::move(elements));
    }
    if (!ValueFits(value.shape(), shape)) {
      // E.g. an all-gather whose result is larger than its operand.
      return absl::UnimplementedError(absl::StrFormat(
          "evaluator: %s from %s to %s implies more than one replica, which is not supported "
          "yet", OpcodeName(opcode), value.shape().ToString(false), shape.ToString(false)));
    }
    return Conform(std::move(value), shape);
  };
  switch (opcode) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllGather:
    case Opcode::kAllToAll: case Opcode::kReduceScatter: case Opcode::kCollectiveBroadcast:
    case Opcode::kCollectiveReduce:
      return passthrough(instruction.shape());
    case Opcode::kAllGatherStart: {
      const Shape& shape = instruction.shape();
      if (!shape.IsTuple() || shape.tuple_size() != 2) {
        return absl::InvalidArgumentError("all-gather-start has an (operands, results) result");
      }
      XJIT_ASSIGN_OR_RETURN(Literal in, passthrough(shape.tuple_shapes(0)));
      XJIT_ASSIGN_OR_RETURN(Literal out, passthrough(shape.tuple_shapes(1)));
      std::vector<Literal> elements;
      elements.push_back(std::move(in));
      elements.push_back(std::move(out));
      return Literal::MakeTuple(std::move(elements));
    }
    case Opcode::kRaggedAllToAll: {
      std::vector<Literal> elements;
      for (const Literal* operand : operands) elements.push_back(*operand);
      std::vector<Literal> values;
      values.push_back(Literal::MakeTuple(std::move(elements)));
      return eval::RaggedAllToAllResult(instruction, values, 0, instruction.shape());
    }
    case Opcode::kCollectivePermute: case Opcode::kCollectivePermuteStart: {
      // Pairs naming a device other than the only one fail, as on the JIT
      // (XLA rejects them when it compiles for one device).
      XJIT_RETURN_IF_ERROR(
          eval::PermuteDevices(instruction, Grid(), replica_id_, partition_id_).status());
      const bool combined = eval::IsCombinedPermute(instruction);
      if (operands.size() != 1 && !combined) {
        return absl::UnimplementedError(
            "evaluator: collective-permute with in-place buffer operands is not supported yet");
      }
      bool self = false;
      for (const auto& [source, target] : instruction.attrs().source_target_pairs) {
        if (source == 0 && target == 0) self = true;
      }
      const Shape& shape = instruction.shape();
      const Shape& result_shape =
          opcode == Opcode::kCollectivePermute ? shape
          : (shape.IsTuple() && shape.tuple_size() >= 2 ? shape.tuple_shapes(1) : shape);
      Literal result(result_shape);
      if (self && combined) {
        std::vector<Literal> elements;
        for (const Literal* operand : operands) elements.push_back(*operand);
        XJIT_ASSIGN_OR_RETURN(result,
                              Conform(Literal::MakeTuple(std::move(elements)), result_shape));
      } else if (self) {
        XJIT_ASSIGN_OR_RETURN(result, Conform(*operands[0], result_shape));
      }
      if (opcode == Opcode::kCollectivePermute) return result;
      if (!shape.IsTuple() || shape.tuple_size() < 2) {
        return absl::InvalidArgumentError("collective-permute-start has a tuple result");
      }
      std::vector<Literal> elements;
      XJIT_ASSIGN_OR_RETURN(Literal in, Conform(*operands[0], shape.tuple_shapes(0)));
      elements.push_back(std::move(in));
      elements.push_back(std::move(result));
      for (int64_t i = 2; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
      return Literal::MakeTuple(std::move(elements));
    }
    default:
      return absl::UnimplementedError(
          absl::StrCat("evaluator: ", OpcodeName(opcode), " is not supported yet"));
  }
}

absl::StatusOr<std::vector<Literal>> Evaluator::Impl::Exchange(const Instruction& instruction,
                                                               const std::vector<int64_t>& group,
                                                               Literal value) {
  const int64_t occurrence = occurrences_[&instruction]++;
  if (group.size() == 1) {
    std::vector<Literal> values;
    values.push_back(std::move(value));
    return values;
  }
  return rendezvous_->Exchange(instruction, eval::MeetingKey(occurrence, 0), group, device_id(),
                               std::move(value));
}

absl::StatusOr<Literal> Evaluator::Impl::EvalReplicatedCollective(const Instruction& instruction,
                                                                  Operands operands) {
  const Opcode opcode = instruction.opcode();
  if (operands.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(OpcodeName(opcode), " needs operands"));
  }
  XJIT_RETURN_IF_ERROR(eval::RequireStaticOperands(instruction, operands));
  if (opcode == Opcode::kCollectivePermute || opcode == Opcode::kCollectivePermuteStart) {
    return EvalReplicatedPermute(instruction, operands);
  }
  Literal contribution;
  if (operands.size() == 1) {
    contribution = *operands[0];
  } else {
    std::vector<Literal> elements;
    for (const Literal* operand : operands) elements.push_back(*operand);
    contribution = Literal::MakeTuple(std::move(elements));
  }
  XJIT_ASSIGN_OR_RETURN(std::vector<int64_t> group,
                        eval::ParticipantDevices(instruction, Grid(), replica_id_, partition_id_));
  const int64_t position = std::find(group.begin(), group.end(), device_id()) - group.begin();
  const Shape& shape = instruction.shape();
  const eval::Context context = MakeContext();
  Literal own = contribution;
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> values,
                        Exchange(instruction, group, std::move(contribution)));
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
      XJIT_ASSIGN_OR_RETURN(Literal in, Conform(std::move(own), shape.tuple_shapes(0)));
      elements.push_back(std::move(in));
      XJIT_ASSIGN_OR_RETURN(Literal out,
                            eval::AllGatherResult(instruction, values, shape.tuple_shapes(1)));
      elements.push_back(std::move(out));
      return Literal::MakeTuple(std::move(elements));
    }
    case Opcode::kReduceScatter:
      return eval::ReduceScatterResult(instruction, values, position, shape, context);
    case Opcode::kAllToAll:
      return eval::AllToAllResult(instruction, values, position, shape);
    case Opcode::kCollectiveBroadcast:
      return Conform(std::move(values[0]), shape);
    case Opcode::kRaggedAllToAll:
      return eval::RaggedAllToAllResult(instruction, values, position, shape);
    default:
      return absl::UnimplementedError(absl::StrCat(
          "evaluator: ", OpcodeName(opcode), " across replicas is not supported yet"));
  }
}

absl::StatusOr<Literal> Evaluator::Impl::EvalReplicatedPermute(const Instruction& instruction,
                                                               Operands operands) {
  const Opcode opcode = instruction.opcode();
  const bool combined = eval::IsCombinedPermute(instruction);
  if (operands.size() != 1 && !combined) {
    return absl::UnimplementedError(
        "evaluator: collective-permute with in-place buffer operands is not supported yet");
  }
  // The combined form permutes the tuple of its operands.
  Literal contribution;
  if (combined) {
    std::vector<Literal> elements;
    for (const Literal* operand : operands) elements.push_back(*operand);
    contribution = Literal::MakeTuple(std::move(elements));
  } else {
    contribution = *operands[0];
  }
  const Shape& shape = instruction.shape();
  const bool start = opcode == Opcode::kCollectivePermuteStart;
  if (start && (!shape.IsTuple() || shape.tuple_size() < 2)) {
    return absl::InvalidArgumentError("collective-permute-start has a tuple result");
  }
  const Shape& result_shape = start ? shape.tuple_shapes(1) : shape;
  // With channel_id= the pairs name partitions, without it replicas.
  XJIT_ASSIGN_OR_RETURN(eval::PermutePeers peers,
                        eval::PermuteDevices(instruction, Grid(), replica_id_, partition_id_));
  const std::vector<int64_t>& group = peers.group;
  const std::optional<int64_t>& source = peers.source;
  Literal result(result_shape);
  if (std::find(group.begin(), group.end(), device_id()) != group.end()) {
    XJIT_ASSIGN_OR_RETURN(std::vector<Literal> values, Exchange(instruction, group, contribution));
    if (source.has_value()) {
      const int64_t i = std::find(group.begin(), group.end(), *source) - group.begin();
      XJIT_ASSIGN_OR_RETURN(result, Conform(std::move(values[i]), result_shape));
    }
  }
  if (!start) return result;
  std::vector<Literal> elements;
  XJIT_ASSIGN_OR_RETURN(Literal in, Conform(*operands[0], shape.tuple_shapes(0)));
  elements.push_back(std::move(in));
  elements.push_back(std::move(result));
  for (int64_t i = 2; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
  return Literal::MakeTuple(std::move(elements));
}

absl::StatusOr<Literal> Evaluator::Impl::EvalShardingCall(const Instruction& instruction,
                                                          Operands operands) {
  XJIT_RETURN_IF_ERROR(CheckSingleParticipant(instruction));
  if (operands.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(instruction.attrs().custom_call_target, " takes one operand"));
  }
  const int64_t partitions = Grid().partitions;
  if (instruction.attrs().custom_call_target == "SPMDFullToShardShape") {
    return eval::ShardOf(instruction, *operands[0], partition_id_, partitions);
  }
  // One tile (or no sharding): this partition's own operand, no exchange.
  XJIT_ASSIGN_OR_RETURN(std::optional<ShardTiling> tiling,
                        eval::ShardingCallTiling(instruction, partitions));
  if (!tiling.has_value() || tiling->owner.size() == 1) {
    return Conform(*operands[0], instruction.shape());
  }
  // Every partition's shard, in partition order: the partitions of this
  // replica exchange them.
  std::vector<int64_t> group;
  for (int64_t p = 0; p < partitions; ++p) group.push_back(Grid().Device(replica_id_, p));
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> shards,
                        Exchange(instruction, group, *operands[0]));
  return eval::FullFromShards(instruction, shards, partition_id_, partitions);
}

absl::StatusOr<Literal> Evaluator::Impl::EvalAsync(const Instruction& instruction,
                                                   Operands operands) {
  const Opcode opcode = instruction.opcode();
  const Shape& shape = instruction.shape();
  auto element_of_operand = [&](int64_t i) -> absl::StatusOr<Literal> {
    if (operands.size() != 1 || !operands[0]->shape().IsTuple() ||
        static_cast<int64_t>(operands[0]->elements().size()) <= i) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpcodeName(opcode), " needs the tuple of its -start operation"));
    }
    return Conform(operands[0]->element(i), shape);
  };
  switch (opcode) {
    case Opcode::kAsyncStart: {
      // ((operands...), result, context...): the wrapped computation runs now.
      if (instruction.called_computations().empty()) {
        return absl::InvalidArgumentError("async-start needs calls=");
      }
      if (!shape.IsTuple() || shape.tuple_size() < 2) {
        return absl::InvalidArgumentError("async-start has a tuple result");
      }
      XJIT_ASSIGN_OR_RETURN(Literal value,
                            RunComputation(*instruction.called_computations()[0], operands));
      std::vector<Literal> inputs;
      for (const Literal* operand : operands) inputs.push_back(*operand);
      std::vector<Literal> elements;
      XJIT_ASSIGN_OR_RETURN(Literal in,
                            Conform(Literal::MakeTuple(std::move(inputs)), shape.tuple_shapes(0)));
      elements.push_back(std::move(in));
      XJIT_ASSIGN_OR_RETURN(Literal out, Conform(std::move(value), shape.tuple_shapes(1)));
      elements.push_back(std::move(out));
      for (int64_t i = 2; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
      return Literal::MakeTuple(std::move(elements));
    }
    case Opcode::kAsyncUpdate:
      if (operands.size() != 1) return absl::InvalidArgumentError("async-update needs an operand");
      return Conform(*operands[0], shape);
    case Opcode::kAsyncDone: case Opcode::kAllGatherDone: case Opcode::kCollectivePermuteDone:
      return element_of_operand(1);
    case Opcode::kCopyDone:
      return element_of_operand(0);
    case Opcode::kAllReduceDone:
      if (operands.size() != 1) return absl::InvalidArgumentError("all-reduce-done needs an operand");
      return Conform(*operands[0], shape);
    case Opcode::kCopyStart: {
      if (operands.size() != 1 || !shape.IsTuple() || shape.tuple_size() < 2) {
        return absl::InvalidArgumentError("copy-start has a (destination, source, context) result");
      }
      std::vector<Literal> elements;
      XJIT_ASSIGN_OR_RETURN(Literal destination, Conform(*operands[0], shape.tuple_shapes(0)));
      elements.push_back(std::move(destination));
      XJIT_ASSIGN_OR_RETURN(Literal source, Conform(*operands[0], shape.tuple_shapes(1)));
      elements.push_back(std::move(source));
      for (int64_t i = 2; i < shape.tuple_size(); ++i) elements.emplace_back(shape.tuple_shapes(i));
      return Literal::MakeTuple(std::move(elements));
    }
    default:
      return absl::InternalError("not an asynchronous operation");
  }
}

Evaluator::Evaluator(EvaluatorOptions options) : impl_(std::make_unique<Impl>(std::move(options))) {}
Evaluator::~Evaluator() = default;

absl::StatusOr<Literal> Evaluator::EvaluateModule(const Module& module,
                                                  absl::Span<const Literal> arguments) {
  // The evaluator recurses once per level of nested computations: deep
  // modules run on a stack of known size (runtime/host/large_stack.h).
  if (NeedsLargeStack(module) && !OnLargeStack()) {
    absl::StatusOr<Literal> result = absl::InternalError("not evaluated");
    XJIT_RETURN_IF_ERROR(RunOnLargeStack([&] { result = impl_->RunModule(module, arguments); }));
    return result;
  }
  return impl_->RunModule(module, arguments);
}

absl::StatusOr<Literal> Evaluator::EvaluateComputation(
    const Computation& computation, absl::Span<const Literal* const> arguments) {
  return impl_->RunComputation(computation, arguments);
}

absl::StatusOr<Literal> Evaluator::EvaluateInstruction(const Instruction& instruction,
                                                       absl::Span<const Literal* const> operands) {
  // An instruction of a module evaluates as it would in a run of that module:
  // a collective of a module with several replicas or partitions is refused
  // here (as RunModule refuses it) instead of acting as one participant.
  if (instruction.parent() != nullptr && instruction.parent()->parent() != nullptr) {
    const Module& module = *instruction.parent()->parent();
    impl_->SetModuleParticipants(module.replica_count(), module.num_partitions());
  }
  absl::StatusOr<Literal> result = impl_->EvalInstruction(instruction, operands);
  if (!result.ok()) return WithContext(result.status(), instruction);
  return result;
}

const EvaluatorOptions& Evaluator::options() const { return impl_->options(); }

absl::StatusOr<Literal> EvaluateModule(const Module& module, absl::Span<const Literal> arguments,
                                       const EvaluatorOptions& options) {
  Evaluator evaluator(options);
  return evaluator.EvaluateModule(module, arguments);
}

absl::StatusOr<std::vector<Literal>> RunModuleReplicated(
    const Module& module, absl::Span<const std::vector<Literal>> arguments,
    const EvaluatorOptions& options) {
  const int64_t count = static_cast<int64_t>(arguments.size());
  if (count < 1) return absl::InvalidArgumentError("a replicated run needs at least one replica");
  const int64_t partitions =
      options.partition_count > 0 ? options.partition_count : module.num_partitions();
  if (partitions < 1 || (module.num_partitions() > 1 && module.num_partitions() != partitions)) {
    return absl::InvalidArgumentError(absl::StrCat("the module has num_partitions=",
                                                   module.num_partitions(), " but runs on ",
                                                   partitions, " partitions"));
  }
  if (count % partitions != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        count, " argument lists for ", partitions, " partitions (one per device is needed)"));
  }
  const int64_t replicas = count / partitions;
  if (module.replica_count() > 1 && module.replica_count() != replicas) {
    return absl::InvalidArgumentError(absl::StrCat("the module has replica_count=",
                                                   module.replica_count(), " but runs on ",
                                                   replicas, " replicas"));
  }
  eval::Rendezvous rendezvous(replicas, partitions);
  EvaluatorOptions replica_options = options;
  replica_options.replica_count = replicas;
  std::vector<std::unique_ptr<Evaluator>> evaluators;
  std::vector<std::optional<absl::StatusOr<Literal>>> results(count);
  for (int64_t d = 0; d < count; ++d) {
    evaluators.push_back(std::make_unique<Evaluator>(replica_options));
    evaluators.back()->impl_->JoinReplicas(d / partitions, d % partitions, &rendezvous);
  }
  auto run = [&](int64_t r) {
    absl::StatusOr<Literal> result = StatusOnOutOfMemory(
        [&] { return evaluators[r]->impl_->RunModule(module, arguments[r]); });
    rendezvous.Finish(r, result.status());
    results[r] = std::move(result);
  };
  if (count == 1) {
    run(0);
  } else {
    // A replica whose thread cannot start fails; the rendezvous then aborts
    // the running ones wherever they wait, so every started thread ends and
    // is joined before the results are read.
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < count; ++r) {
      try {
        threads.emplace_back(run, r);
      } catch (const std::system_error& error) {
        const absl::Status status = absl::ResourceExhaustedError(
            absl::StrCat("cannot start a thread for ", rendezvous.DeviceName(r), " of ", count,
                         " devices: ", error.what()));
        for (int64_t k = r; k < count; ++k) {
          rendezvous.Finish(k, status);
          results[k] = status;
        }
        break;
      }
    }
    for (std::thread& thread : threads) thread.join();
  }
  // Report the cause: an error other than the aborts it led to.
  std::optional<int64_t> failed;
  for (int64_t r = 0; r < count; ++r) {
    const absl::Status& status = results[r]->status();
    if (status.ok()) continue;
    if (!failed.has_value() ||
        (results[*failed]->status().code() == absl::StatusCode::kAborted &&
         status.code() != absl::StatusCode::kAborted)) {
      failed = r;
    }
  }
  if (failed.has_value()) {
    const absl::Status& status = results[*failed]->status();
    return absl::Status(status.code(), absl::StrCat(rendezvous.DeviceName(*failed), ": ",
                                                    status.message()));
  }
  std::vector<Literal> values;
  for (int64_t r = 0; r < count; ++r) values.push_back(*std::move(*results[r]));
  return values;
}

absl::StatusOr<Literal> RunModuleAsReplica(const Module& module,
                                           absl::Span<const Literal> arguments,
                                           int64_t replica_id, eval::ReplicaExchange& exchange,
                                           const EvaluatorOptions& options) {
  const int64_t count = exchange.replica_count();
  if (replica_id < 0 || replica_id >= count) {
    return absl::InvalidArgumentError(
        absl::StrCat("replica ", replica_id, " of a run on ", count, " replicas"));
  }
  if (module.num_partitions() > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "evaluator: the module has num_partitions=", module.num_partitions(),
        "; replicated runs support one partition"));
  }
  if (module.replica_count() > 1 && module.replica_count() != count) {
    return absl::InvalidArgumentError(absl::StrCat("the module has replica_count=",
                                                   module.replica_count(), " but runs on ",
                                                   count, " replicas"));
  }
  EvaluatorOptions replica_options = options;
  replica_options.replica_count = count;
  Evaluator evaluator(replica_options);
  evaluator.impl_->JoinReplicas(replica_id, 0, &exchange);
  if (NeedsLargeStack(module) && !OnLargeStack()) {
    absl::StatusOr<Literal> result = absl::InternalError("not evaluated");
    XJIT_RETURN_IF_ERROR(
        RunOnLargeStack([&] { result = evaluator.impl_->RunModule(module, arguments); }));
    return result;
  }
  return evaluator.impl_->RunModule(module, arguments);
}

}  // namespace xjit
