// The compile driver (see compile.h).
#include "jit/compile.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interpreter/collectives.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"
#include "jit/calls/async_call.h"
#include "jit/calls/cumulative_call.h"
#include "jit/calls/custom_call.h"
#include "jit/calls/host_transfer_call.h"
#include "jit/calls/library_calls.h"
#include "jit/calls/lapack_call.h"
#include "jit/calls/linalg_call.h"
#include "jit/calls/relayout_call.h"
#include "jit/code/jitdump.h"
#include "jit/code/perf_map.h"
#include "jit/compile_cache.h"
#include "jit/kernel/fusion_emitter.h"
#include "jit/kernel/row_groups.h"
#include "jit/kernel/vector_math.h"
#include "jit/target.h"
#include "passes/allocate_buffers.h"
#include "passes/pipeline.h"
#include "passes/rewrite_util.h"
#include "runtime/collectives/collective_step.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"
#include "runtime/host/large_stack.h"
#include "runtime/split_cost.h"

namespace xjit::jit {
namespace {

// One-element kernels up to this many operations keep their program for the
// loop emitter (which takes at most 48 value and index operations).
constexpr size_t kInlineProgramOps = 64;

using runtime::BufferSlot;
using xjit::BufferPlan;

// Whether an annotation custom call returns its operand: any but the SPMD
// sharding calls, and those when their sharding cuts one tile (or is
// absent); expand-sharding-calls has rewritten the others, which reach the
// evaluator only when that pass is off.
bool CutsOneTile(const Instruction& instruction) {
  if (!eval::IsShardingCall(instruction.attrs().custom_call_target)) return true;
  const Module* module =
      instruction.parent() != nullptr ? instruction.parent()->parent() : nullptr;
  absl::StatusOr<std::optional<ShardTiling>> tiling =
      eval::ShardingCallTiling(instruction, module != nullptr ? module->num_partitions() : 1);
  return tiling.ok() && (!tiling->has_value() || (*tiling)->owner.size() == 1);
}

int64_t AlignUp(int64_t n) {
  return (n + runtime::kBufferAlignment - 1) / runtime::kBufferAlignment *
         runtime::kBufferAlignment;
}

// Whether one instruction by itself has a side effect as HasSideEffectDeep
// (passes/rewrite_util.h) counts them, with the collectives and host
// transfers, which compile to context steps (runtime/collectives/,
// jit/calls/host_transfer_call.h), left out. CompileContext::side_effects applies
// it through called computations.
bool HasSideEffectBesidesCollectivesShallow(const Instruction& i) {
  if (collectives::IsCollectiveStep(i.opcode())) return false;
  switch (i.opcode()) {
    case Opcode::kAllReduceDone: case Opcode::kAllGatherDone:
    case Opcode::kCollectivePermuteDone:
    // Host transfers use the run's queues, which subprograms receive too.
    case Opcode::kInfeed: case Opcode::kOutfeed: case Opcode::kSend: case Opcode::kSendDone:
    case Opcode::kRecv: case Opcode::kRecvDone: case Opcode::kAfterAll:
      return false;
    default:
      return IsCollective(i.opcode()) || HasSideEffect(i.opcode()) ||
             i.opcode() == Opcode::kAsyncStart || i.opcode() == Opcode::kAsyncUpdate ||
             i.opcode() == Opcode::kAsyncDone || i.opcode() == Opcode::kCopyStart ||
             i.opcode() == Opcode::kCopyDone ||
             (i.opcode() == Opcode::kCustomCall && i.attrs().custom_call_has_side_effect);
  }
}

runtime::Step CopyStep(int source, int destination) {
  runtime::Step step;
  step.kind = runtime::Step::Kind::kCopy;
  step.inputs = {source};
  step.outputs = {destination};
  return step;
}

// The text a kernel's jitdump line table refers to: its program (one line
// per operation, KernelProgram::ToString, each naming the HLO instruction it
// belongs to) and, after it, the HLO instruction it computes (with the fused
// computation of a fusion).
std::string JitDumpSource(const KernelProgram& program, const Instruction& instruction) {
  std::string text = absl::StrCat(program.ToString(/*origins=*/true), "\n# computes:\n",
                                  PrintInstruction(instruction), "\n");
  if (instruction.opcode() == Opcode::kFusion && !instruction.called_computations().empty()) {
    absl::StrAppend(&text, PrintComputation(*instruction.called_computations()[0]));
  }
  return text;
}

// Program operation ids -> lines of that text: line 1 is the program's
// header, then one line per buffer, then one per operation. Code before the
// first operation (the prologue) maps to the header.
std::vector<CodeLine> JitDumpLines(const KernelProgram& program,
                                   const std::vector<std::pair<int64_t, int>>& op_offsets) {
  std::vector<CodeLine> lines = {CodeLine{0, 1}};
  const int first_op_line = 2 + static_cast<int>(program.buffers.size());
  for (const auto& [offset, op] : op_offsets) lines.push_back(CodeLine{offset, first_op_line + op});
  return lines;
}

bool HasDynamicShape(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->shape().is_dynamic()) return true;
  }
  return false;
}

// What the compiles of one module share: the target (its code memory holds
// every kernel) and each called computation compiled once. A computation
// called from several places (a branch used by many conditionals, nested
// conditionals whose branches call the same inner ones) is compiled the
// first time and its executable shared, so compile time grows with the
// number of computations, not with the number of paths through the call
// graph (which doubles with each level of such nesting).
//
// Every loop body and branch is compiled from the one module the pipeline
// prepared (the entry's compile makes it), without copying it: each compile
// handles its own computation only, so compiling computations nested d deep
// takes time linear in d (a copy of what each one reaches made it quadratic).
struct CompileContext {
  Target* target = nullptr;
  // The prepared module; set by the entry's compile before any callee's.
  std::shared_ptr<const Module> module;
  // Whether runs belong on a large stack (runtime/host/large_stack.h).
  bool needs_large_stack = false;
  // By computation (of `module`) and whether it runs as a while body over
  // the loop state in place (ExecutableSpec::state_in_place).
  absl::flat_hash_map<std::pair<const Computation*, bool>,
                      std::shared_ptr<const runtime::Executable>>
      compiled;
  // Whether a computation (of `module`) has a side effect other than
  // collectives and host transfers, each found once, so that asking for
  // every loop of a chain d deep costs time linear in d, not quadratic.
  SideEffectCache side_effects{&HasSideEffectBesidesCollectivesShallow};
  // Side effects as HasSideEffectDeep has them, for the buffer plans
  // (their schedules keep effects in order).
  SideEffectCache effects;
};

// Compiles `callee`, a computation of context->module, as a program of its
// own (a loop body, a branch, an async computation), once per context.
// state_in_place: `callee` is a while body that its kWhile step runs over
// the loop state in place (ExecutableSpec::state_in_place).
absl::StatusOr<std::shared_ptr<const runtime::Executable>> CompileCallee(
    const Computation& callee, const CompileOptions& options, CompileReport* report,
    CompileContext* context, bool state_in_place);

// Builds the steps and slots of the entry computation from its buffer plan
// (passes/buffer_plan.h): steps follow the plan's schedule; each allocation
// has a home (a parameter or result buffer at a flattened offset, a
// constant, the arena), and each array leaf a slot at its slice's offset in
// that home.
class ExecutableBuilder {
 public:
  ExecutableBuilder(const CompileOptions& options, CompileContext* context,
                    CompileReport* report, bool state_in_place)
      : options_(options),
        context_(context),
        target_(context->target),
        report_(report),
        state_in_place_(state_in_place) {}

  absl::Status Build(const Computation& entry, const BufferPlan& plan,
                     runtime::ExecutableSpec* spec) {
    spec_ = spec;
    plan_ = &plan;
    const ComputationBufferPlan* entry_plan = plan.ForComputation(&entry);
    if (entry_plan == nullptr) return absl::InternalError("buffer plan: no plan for the entry");
    PlaceAllocations(entry, *entry_plan);
    for (const Instruction* instruction : entry_plan->schedule) {
      XJIT_RETURN_IF_ERROR(Add(*instruction));
    }
    // Result leaves the plan leaves outside the caller's result buffer (a
    // parameter, a constant, a second copy of one value) are copied there.
    // Under state_in_place the result buffer is the parameter's: a copy out
    // of another parameter leaf (the body permutes its state) could read
    // bytes an earlier copy wrote, so those sources are first staged in the
    // arena, all of them before any copy into the result.
    for (auto& [source, destination] : result_copies_) {
      const BufferSlot& from = spec_->plan.slots[source];
      if (!state_in_place_ || from.kind != BufferSlot::Kind::kParameter) continue;
      Home stage;
      stage.offset = ReserveArena(from.size);
      const int stage_slot = SlotAt(stage, 0, from.shape);
      spec_->steps.push_back(CopyStep(source, stage_slot));
      source = stage_slot;
    }
    for (const auto& [source, destination] : result_copies_) {
      spec_->steps.push_back(CopyStep(source, destination));
    }
    spec_->plan.result_bytes = ByteSize(entry.root()->shape());
    // Scratch of library calls: one range after every value, sized for the
    // largest call (the calls run one at a time).
    if (spec_->plan.scratch_bytes > 0) {
      spec_->plan.scratch_offset = AlignUp(spec_->plan.temp_bytes);
      spec_->plan.temp_bytes = spec_->plan.scratch_offset + spec_->plan.scratch_bytes;
    }
    return absl::OkStatus();
  }

 private:
  struct Home {
    BufferSlot::Kind kind = BufferSlot::Kind::kTemp;
    int64_t index = 0;
    int64_t offset = 0;
  };

  int NewSlot(BufferSlot slot) {
    spec_->plan.slots.push_back(std::move(slot));
    return static_cast<int>(spec_->plan.slots.size()) - 1;
  }

  int SlotAt(const Home& home, int64_t offset, const Shape& shape) {
    BufferSlot slot;
    slot.kind = home.kind;
    slot.index = home.index;
    slot.offset = home.offset + offset;
    slot.shape = shape;
    slot.size = ByteSize(shape);
    return NewSlot(std::move(slot));
  }

  // Arena bytes of their own, after the entry's temps.
  int64_t ReserveArena(int64_t bytes) {
    const int64_t offset = AlignUp(spec_->plan.temp_bytes);
    spec_->plan.temp_bytes = offset + bytes;
    return offset;
  }

  void PlaceAllocations(const Computation& entry, const ComputationBufferPlan& entry_plan) {
    const Shape& result_shape = entry.root()->shape();
    for (const BufferAllocation& allocation : plan_->allocations()) {
      Home home;
      switch (allocation.kind) {
        case BufferAllocation::Kind::kParameter:
          home.kind = BufferSlot::Kind::kParameter;
          home.index = allocation.parameter_number;
          home.offset = flat_offsets_.Of(entry.parameter(allocation.parameter_number)->shape(),
                                            allocation.parameter_index);
          break;
        case BufferAllocation::Kind::kConstant:
          continue;  // Placed with their constant (AddConstantSlots).
        case BufferAllocation::Kind::kTemp:
          if (allocation.id != entry_plan.arena) continue;  // Run by the evaluator.
          home.offset = ReserveArena(allocation.size);
          break;
        case BufferAllocation::Kind::kResult: {
          const ShapeIndex& first = allocation.result_indices.at(0);
          if (allocation.size == ByteSize(Subshape(result_shape, first))) {
            home.kind = BufferSlot::Kind::kResult;
            home.offset = flat_offsets_.Of(result_shape, first);
          } else {
            home.offset = ReserveArena(allocation.size);  // Larger: copied out.
          }
          break;
        }
      }
      home_[allocation.id] = home;
    }
  }

  // Each leaf of a constant becomes a constant of the executable: an array
  // constant's bytes are its literal's, shared (a 1 GiB constant compiles
  // in one copy, docs/limits.md); a tuple's leaves are copied out.
  void AddConstantSlots(const Instruction& constant) {
    const Literal& literal = constant.literal();
    std::vector<uint8_t> flat;  // A tuple's leaves, flattened when first needed.
    for (const LeafSlice& leaf : plan_->Slices(&constant)) {
      if (home_.contains(leaf.slice.allocation)) continue;
      const int64_t begin = flat_offsets_.Of(constant.shape(), leaf.index);
      if (constant.shape().IsArray() && begin == 0 &&
          leaf.slice.size == static_cast<int64_t>(literal.data().size())) {
        home_[leaf.slice.allocation] = AddConstant(literal);
        continue;
      }
      if (flat.empty()) flat = runtime::FlattenLiteral(literal);
      Home home;
      home.kind = BufferSlot::Kind::kConstant;
      home.index = static_cast<int64_t>(spec_->constants.size());
      spec_->constants.push_back(std::make_shared<const std::vector<uint8_t>>(
          flat.begin() + begin, flat.begin() + begin + leaf.slice.size));
      home_[leaf.slice.allocation] = home;
    }
  }

  // A constant of the executable holding an array literal's bytes, shared
  // with it.
  Home AddConstant(const Literal& array) {
    Home home;
    home.kind = BufferSlot::Kind::kConstant;
    home.index = static_cast<int64_t>(spec_->constants.size());
    std::shared_ptr<const std::vector<uint8_t>> bytes = array.SharedData();
    if (bytes == nullptr) bytes = std::make_shared<const std::vector<uint8_t>>();
    spec_->constants.push_back(std::move(bytes));
    return home;
  }

  // The slots of `instruction`'s array leaves, in leaf order.
  absl::StatusOr<std::vector<int>> LeafSlots(const Instruction& instruction) {
    auto it = slots_of_.find(&instruction);
    if (it != slots_of_.end()) return it->second;
    std::vector<int> slots;
    for (const LeafSlice& leaf : plan_->Slices(&instruction)) {
      auto home = home_.find(leaf.slice.allocation);
      if (home == home_.end()) {
        return absl::InternalError(absl::StrCat("buffer plan: ", instruction.name(),
                                                " has a slice outside the entry's places"));
      }
      slots.push_back(SlotAt(home->second, leaf.slice.offset,
                             Subshape(instruction.shape(), leaf.index)));
    }
    if (static_cast<int64_t>(slots.size()) != runtime::ArrayLeafCount(instruction.shape())) {
      return absl::InternalError(
          absl::StrCat("buffer plan: ", instruction.name(), " lacks slices for some leaves"));
    }
    slots_of_[&instruction] = slots;
    return slots;
  }

  // The single slot of an array operand.
  absl::StatusOr<int> ArraySlot(const Instruction& instruction) {
    XJIT_ASSIGN_OR_RETURN(std::vector<int> slots, LeafSlots(instruction));
    if (slots.size() != 1 || !instruction.shape().IsArray()) {
      return absl::UnimplementedError(absl::StrCat(instruction.name(), " is not an array"));
    }
    return slots[0];
  }

  // A constant of a fused computation (kernel inputs that are not operands).
  int FusedConstantSlot(const Instruction& constant) {
    auto it = fused_constant_slot_.find(&constant);
    if (it != fused_constant_slot_.end()) return it->second;
    Home home;
    if (constant.shape().IsArray()) {
      home = AddConstant(constant.literal());
    } else {
      home.kind = BufferSlot::Kind::kConstant;
      home.index = static_cast<int64_t>(spec_->constants.size());
      spec_->constants.push_back(std::make_shared<const std::vector<uint8_t>>(
          runtime::FlattenLiteral(constant.literal())));
    }
    const int id = SlotAt(home, 0, constant.shape());
    fused_constant_slot_[&constant] = id;
    return id;
  }

  // Entry result leaves held by allocations outside the result buffer, or
  // by one allocation for several leaves, are copied at the end.
  void NoteResultCopies(const Instruction& root) {
    const Shape& result_shape = root.shape();
    for (const LeafSlice& leaf : plan_->Slices(&root)) {
      const Home& home = home_.at(leaf.slice.allocation);
      // Under state_in_place, parameter 0 is the result buffer.
      const bool in_place = (home.kind == BufferSlot::Kind::kResult ||
                             (state_in_place_ && home.kind == BufferSlot::Kind::kParameter &&
                              home.index == 0)) &&
                            home.offset + leaf.slice.offset ==
                                flat_offsets_.Of(result_shape, leaf.index);
      if (in_place) continue;
      const Shape& shape = Subshape(result_shape, leaf.index);
      Home result;
      result.kind = BufferSlot::Kind::kResult;
      result_copies_.push_back({SlotAt(home, leaf.slice.offset, shape),
                                SlotAt(result, flat_offsets_.Of(result_shape, leaf.index),
                                       shape)});
    }
  }

  absl::Status Add(const Instruction& instruction) {
    if (instruction.opcode() == Opcode::kConstant) AddConstantSlots(instruction);
    XJIT_ASSIGN_OR_RETURN(std::vector<int> outputs, LeafSlots(instruction));
    if (&instruction == instruction.parent()->root()) NoteResultCopies(instruction);
    // A place (ir/opcode.h) computes nothing: its leaves are other values'
    // slices (buffer_plan.h), or places the caller or the executable provides.
    if (IsPlace(instruction.opcode())) return absl::OkStatus();
    int64_t output_bytes = 0;
    for (int slot : outputs) output_bytes += spec_->plan.slots[slot].size;
    if (output_bytes == 0 && instruction.shape().IsArray() &&
        !HasSideEffect(instruction.opcode())) {
      return absl::OkStatus();
    }
    absl::Status kernel_status = absl::UnimplementedError("interpret_only");
    if (target_ != nullptr) {
      const Opcode opcode = instruction.opcode();
      if (collectives::IsCollectiveStep(instruction)) {
        kernel_status = AddContextCall(instruction, outputs);
      } else if (opcode == Opcode::kCustomCall) {
        kernel_status = AddCustomCall(instruction, outputs);
      } else if (IsHostTransfer(opcode)) {
        kernel_status = AddHostTransfer(instruction, outputs);
      } else if (opcode == Opcode::kAfterAll) {
        kernel_status = absl::OkStatus();  // A token: no data, nothing to run.
      } else if (opcode == Opcode::kAsyncStart) {
        kernel_status = AddAsyncStart(instruction, outputs);
      } else if (opcode == Opcode::kAllReduceDone || opcode == Opcode::kAllGatherDone ||
                 opcode == Opcode::kCollectivePermuteDone || opcode == Opcode::kAsyncUpdate ||
                 opcode == Opcode::kAsyncDone || opcode == Opcode::kSendDone ||
                 opcode == Opcode::kRecvDone) {
        kernel_status = AddCollectiveDone(instruction, outputs);
      } else if (IsCumulativeWindow(instruction)) {  // jit/calls/cumulative_call.h.
        kernel_status = AddLibraryCall(instruction, &PlanCumulativeCall, outputs);
      } else if (LibraryCallPlanner plan = FindLibraryCallPlanner(opcode)) {
        kernel_status = AddLibraryCall(instruction, plan, outputs);  // jit/calls/library_calls.h.
      } else if (IsRelayoutCopy(instruction)) {  // jit/calls/relayout_call.h.
        kernel_status = AddRelayout(instruction, outputs);
      } else if (opcode == Opcode::kWhile || opcode == Opcode::kConditional) {
        kernel_status = AddControlFlow(instruction, outputs);
      } else {
        kernel_status = AddKernel(instruction, outputs);
      }
    }
    if (kernel_status.ok()) return absl::OkStatus();
    runtime::Step step;
    step.kind = runtime::Step::Kind::kInterpreted;
    step.name = instruction.name();
    step.instruction = &instruction;
    for (const Instruction* operand : instruction.operands()) {
      XJIT_ASSIGN_OR_RETURN(std::vector<int> leaves, LeafSlots(*operand));
      step.inputs.insert(step.inputs.end(), leaves.begin(), leaves.end());
    }
    step.outputs = std::move(outputs);
    spec_->steps.push_back(std::move(step));
    if (report_ != nullptr) {
      report_->interpreted_steps.push_back(absl::StrCat(instruction.name(), " (",
                                                        OpcodeName(instruction.opcode()), "): ",
                                                        kernel_status.message()));
    }
    return absl::OkStatus();
  }

  // A step that needs the run's context (runtime/run_context.h): the
  // collectives and replica-id / partition-id (runtime/collectives/). Its
  // inputs are the array operands' slots, its outputs the result's leaves.
  absl::Status AddContextCall(const Instruction& instruction, const std::vector<int>& outputs) {
    XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call,
                          collectives::PlanCollectiveCall(instruction));
    // send/recv's token operands have no slot (leaves skips them).
    const bool tokens =
        instruction.opcode() == Opcode::kSend || instruction.opcode() == Opcode::kRecv;
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/tokens));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                       "in-process or transport collective (runtime/collectives)");
    return absl::OkStatus();
  }

  // The -done half of an asynchronous collective: the -start step computed
  // everything, so this copies its results part (all of all-reduce-start's
  // value, element 1 of the others' tuples) into place.
  absl::Status AddCollectiveDone(const Instruction& instruction, const std::vector<int>& outputs) {
    if (instruction.operand_count() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(OpcodeName(instruction.opcode()),
                                                     " needs one operand"));
    }
    const Instruction& start = *instruction.operand(0);
    XJIT_ASSIGN_OR_RETURN(std::vector<int> leaves, LeafSlots(start));
    size_t first = 0;
    if (instruction.opcode() == Opcode::kSendDone) return absl::OkStatus();  // A token.
    if (instruction.opcode() == Opcode::kRecvDone) {
      // (data, token) from the recv's (data, context, token): element 0.
      if (!start.shape().IsTuple() || start.shape().tuple_size() < 1 ||
          !instruction.shape().IsTuple() || instruction.shape().tuple_size() < 1) {
        return absl::InvalidArgumentError("recv-done needs the recv tuple");
      }
    } else if (instruction.opcode() != Opcode::kAllReduceDone &&
               instruction.opcode() != Opcode::kAsyncUpdate) {
      if (!start.shape().IsTuple() || start.shape().tuple_size() < 2) {
        return absl::InvalidArgumentError(absl::StrCat(OpcodeName(instruction.opcode()),
                                                       " needs the tuple of its -start"));
      }
      first = static_cast<size_t>(runtime::ArrayLeafCount(start.shape().tuple_shapes(0)));
    }
    if (first + outputs.size() > leaves.size()) {
      return absl::InternalError(absl::StrCat(instruction.name(), ": leaves do not match"));
    }
    for (size_t k = 0; k < outputs.size(); ++k) {
      const BufferSlot& from = spec_->plan.slots[leaves[first + k]];
      const BufferSlot& to = spec_->plan.slots[outputs[k]];
      if (from.size != to.size || !(from.shape == to.shape)) {
        return absl::UnimplementedError("a -done whose layout differs from its -start's");
      }
      runtime::Step step = CopyStep(leaves[first + k], outputs[k]);
      step.name = instruction.name();
      spec_->steps.push_back(std::move(step));
    }
    return absl::OkStatus();
  }

  // custom-call: the target looked up now (jit/calls/custom_call.h); its inputs
  // are every array leaf of the operands.
  absl::Status AddCustomCall(const Instruction& instruction, const std::vector<int>& outputs) {
    const std::string& target = instruction.attrs().custom_call_target;
    if (IsQrCustomCall(instruction)) {  // XLA's QR, unregistered: jit/calls/linalg_call.h.
      std::string description;
      XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call,
                            PlanLinalgCall(instruction, std::max(options_.threads, 1),
                                           &description));
      XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/true));
      AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                         std::move(description));
      return absl::OkStatus();
    }
    if (IsJaxlibLapackCustomCall(instruction)) {  // jaxlib's LAPACK: jit/calls/lapack_call.h.
      std::string description;
      XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call,
                            PlanLapackCall(instruction, std::max(options_.threads, 1),
                                           &description));
      XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/true));
      AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                         std::move(description));
      return absl::OkStatus();
    }
    if (IsAnnotationCustomCall(target) && instruction.operand_count() == 1 &&
        FfiRegistry::Global().Find(target) == nullptr &&
        CustomCallRegistry::Global().Find(target) == nullptr &&
        instruction.operand(0)->shape() == instruction.shape() &&
        CutsOneTile(instruction)) {
      XJIT_ASSIGN_OR_RETURN(std::vector<int> leaves, LeafSlots(*instruction.operand(0)));
      if (leaves.size() != outputs.size()) return absl::InternalError("annotation leaves");
      for (size_t k = 0; k < leaves.size(); ++k) {
        runtime::Step step = CopyStep(leaves[k], outputs[k]);
        step.name = instruction.name();
        spec_->steps.push_back(std::move(step));
      }
      return absl::OkStatus();
    }
    XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call, PlanCustomCall(instruction));
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/true));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call), "");
    return absl::OkStatus();
  }

  // A copy into or out of a tiled layout (jit/calls/relayout_call.h).
  absl::Status AddRelayout(const Instruction& instruction, const std::vector<int>& outputs) {
    XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call, PlanRelayoutCall(instruction));
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/false));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                       absl::StrCat(instruction.operand(0)->shape().ToString(true), " -> ",
                                    instruction.shape().ToString(true)));
    return absl::OkStatus();
  }

  // infeed, outfeed, send and recv over the run's host queues
  // (jit/calls/host_transfer_call.h).
  absl::Status AddHostTransfer(const Instruction& instruction, const std::vector<int>& outputs) {
    XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call, PlanHostTransferCall(instruction));
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/true));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call), "");
    return absl::OkStatus();
  }

  // async-start: its computation compiled as a subprogram, run by a
  // library call with the run's context (jit/calls/async_call.h).
  absl::Status AddAsyncStart(const Instruction& instruction, const std::vector<int>& outputs) {
    const std::vector<Computation*>& callees = instruction.called_computations();
    if (callees.size() != 1 || callees[0] == nullptr) {
      return absl::InvalidArgumentError("async-start needs calls=");
    }
    const Computation& callee = *callees[0];
    for (const auto& inner : callee.instructions()) {
      if (context_->side_effects.HasSideEffectDeep(*inner)) {
        return absl::UnimplementedError("side effects inside the called computation");
      }
    }
    XJIT_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::Executable> program,
                          Subprogram(instruction, callee));
    XJIT_ASSIGN_OR_RETURN(runtime::LibraryCall call, PlanAsyncCall(instruction, program));
    // Array operands have one leaf each (PlanAsyncCall checks), tokens none.
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/true));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                       absl::StrCat("runs ", callee.name(), " compiled"));
    return absl::OkStatus();
  }

  // A call into a library (jit/calls/library_calls.h) with a plan made now
  // by `plan`; the plan's error (Unimplemented for layouts or types it does
  // not handle) leaves the instruction to the evaluator.
  absl::Status AddLibraryCall(const Instruction& instruction, LibraryCallPlanner plan,
                              const std::vector<int>& outputs) {
    std::string description;
    XJIT_ASSIGN_OR_RETURN(
        runtime::LibraryCall call,
        plan(instruction, LibraryCallContext{target_, std::max(options_.threads, 1)},
             &description));
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, OperandSlots(instruction, /*leaves=*/false));
    AddLibraryCallStep(instruction, std::move(inputs), outputs, std::move(call),
                       std::move(description));
    return absl::OkStatus();
  }

  // The slots `instruction`'s operands are read from: each operand's array
  // slot, or with `leaves` every leaf of tuple-shaped operands.
  absl::StatusOr<std::vector<int>> OperandSlots(const Instruction& instruction, bool leaves) {
    std::vector<int> slots;
    for (const Instruction* operand : instruction.operands()) {
      if (leaves) {
        XJIT_ASSIGN_OR_RETURN(std::vector<int> operand_leaves, LeafSlots(*operand));
        slots.insert(slots.end(), operand_leaves.begin(), operand_leaves.end());
      } else {
        XJIT_ASSIGN_OR_RETURN(int slot, ArraySlot(*operand));
        slots.push_back(slot);
      }
    }
    return slots;
  }

  // Appends a step running `call` from `inputs` into `outputs`, makes room
  // for its scratch, and reports it with `plan` (what the call will do).
  void AddLibraryCallStep(const Instruction& instruction, std::vector<int> inputs,
                          const std::vector<int>& outputs, runtime::LibraryCall call,
                          std::string plan) {
    runtime::Step step;
    step.kind = runtime::Step::Kind::kLibraryCall;
    step.name = instruction.name();
    step.inputs = std::move(inputs);
    step.outputs = outputs;
    spec_->plan.scratch_bytes = std::max(spec_->plan.scratch_bytes, call.scratch_bytes);
    if (report_ != nullptr) {
      LibraryCallInfo info;
      info.name = instruction.name();
      info.routine = call.routine;
      info.plan = std::move(plan);
      info.scratch_bytes = call.scratch_bytes;
      report_->library_calls.push_back(std::move(info));
    }
    step.library_call = std::move(call);
    spec_->steps.push_back(std::move(step));
  }

  // A while or conditional whose called computations are compiled as
  // executables of their own (runtime::Step::Kind::kWhile, kConditional),
  // from the module the pipeline already optimised (their fusions are made).
  // The loop state (a branch operand) must have one layout in every
  // computation, as the step passes flattened bytes; and nothing inside may
  // have a side effect: each run of an executable interprets with a fresh
  // evaluator, which would restart an rng sequence at every iteration.
  // Collectives are the exception: their steps reach the other replicas
  // through the run's context, which subprograms receive too.
  absl::Status AddControlFlow(const Instruction& instruction, const std::vector<int>& outputs) {
    if (context_->side_effects.HasSideEffectDeep(instruction)) {
      return absl::UnimplementedError("side effects inside the called computations");
    }
    const bool is_while = instruction.opcode() == Opcode::kWhile;
    const std::vector<Computation*>& callees = instruction.called_computations();
    if (is_while) {
      const Shape& state = instruction.shape();
      if (callees.size() != 2 || !(instruction.operand(0)->shape() == state) ||
          !(callees[0]->parameter(0)->shape() == state) ||
          !(callees[1]->parameter(0)->shape() == state) ||
          !(callees[1]->root()->shape() == state)) {
        return absl::UnimplementedError("loop state layouts differ between the computations");
      }
    } else {
      for (size_t k = 0; k < callees.size(); ++k) {
        if (callees[k]->parameter_count() != 1 ||
            !(callees[k]->parameter(0)->shape() == instruction.operand(k + 1)->shape()) ||
            !(callees[k]->root()->shape() == instruction.shape())) {
          return absl::UnimplementedError("branch layouts differ from the operands or result");
        }
      }
    }
    runtime::Step step;
    step.kind = is_while ? runtime::Step::Kind::kWhile : runtime::Step::Kind::kConditional;
    step.name = instruction.name();
    for (size_t c = 0; c < callees.size(); ++c) {
      // A while body updates the loop state in place (RunWhile); the same
      // computation run elsewhere is compiled again, reading its parameter.
      const bool in_place = is_while && c == 1 && options_.while_state_in_place;
      XJIT_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::Executable> program,
                            Subprogram(instruction, *callees[c], in_place));
      step.subprograms.push_back(std::move(program));
    }
    for (int64_t k = 0; k < instruction.operand_count(); ++k) {
      XJIT_ASSIGN_OR_RETURN(std::vector<int> leaves, LeafSlots(*instruction.operand(k)));
      step.inputs.insert(step.inputs.end(), leaves.begin(), leaves.end());
      if (!is_while && k > 0) step.operand_leaves.push_back(static_cast<int>(leaves.size()));
    }
    step.outputs = outputs;
    spec_->steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  // `callee`, which `instruction` runs, compiled as a program of its own
  // the first time it is asked for. The report lists a shared computation's
  // kernels once, under the first instruction that called it.
  absl::StatusOr<std::shared_ptr<const runtime::Executable>> Subprogram(
      const Instruction& instruction, const Computation& callee, bool state_in_place = false) {
    auto cached = context_->compiled.find(std::make_pair(&callee, state_in_place));
    if (cached != context_->compiled.end()) return cached->second;
    CompileOptions options = options_;
    options.run_passes = false;
    options.dump_dir.clear();
    CompileReport report;
    XJIT_ASSIGN_OR_RETURN(std::shared_ptr<const runtime::Executable> program,
                          CompileCallee(callee, options, &report, context_, state_in_place));
    context_->compiled[std::make_pair(&callee, state_in_place)] = program;
    if (report_ != nullptr) {
      MergeReport(absl::StrCat(instruction.name(), "/", callee.name()), std::move(report));
    }
    return program;
  }

  // Adds what a called computation's compile reported, its names prefixed.
  void MergeReport(const std::string& prefix, CompileReport report) {
    for (KernelInfo& kernel : report.kernels) {
      kernel.name = absl::StrCat(prefix, "/", kernel.name);
      report_->kernels.push_back(std::move(kernel));
    }
    for (LibraryCallInfo& call : report.library_calls) {
      call.name = absl::StrCat(prefix, "/", call.name);
      report_->library_calls.push_back(std::move(call));
    }
    for (std::string& line : report.interpreted_steps) {
      report_->interpreted_steps.push_back(absl::StrCat(prefix, "/", line));
    }
  }

  EmitTarget emit_target() const {
    EmitTarget target;
    target.gathers = target_ != nullptr && target_->HasGathers();
    target.range_claims = target_ != nullptr && target_->HasRangeClaims();
    return target;
  }

  absl::Status AddKernel(const Instruction& instruction, const std::vector<int>& outputs) {
    if (outputs.size() == 1 && ConcatenateParts(instruction) > 1 &&
        AddConcatenateParts(instruction, outputs[0]).ok()) {
      return absl::OkStatus();
    }
    absl::StatusOr<KernelSpec> kernel = instruction.opcode() == Opcode::kFusion
                                            ? EmitFusionKernel(instruction, -1, emit_target())
                                            : EmitInstructionKernel(instruction, emit_target());
    if (!kernel.ok() && instruction.opcode() == Opcode::kFusion && outputs.size() > 1) {
      // One loop nest cannot make every output (outputs of different
      // dimensions): one kernel per output, if each can be made.
      if (AddKernelPerOutput(instruction, outputs).ok()) return absl::OkStatus();
    }
    if (!kernel.ok()) return kernel.status();
    XJIT_ASSIGN_OR_RETURN(std::vector<int> inputs, KernelInputSlots(instruction, *kernel));
    return AddKernelStep(instruction, *std::move(kernel), std::move(inputs), outputs,
                         instruction.name());
  }

  // A loop fusion whose root concatenates along the minor-most dimension as
  // one kernel per operand, each writing its own part of the output
  // (jit/kernel/fusion_emitter.h, ConcatenateParts), so that each inner loop is an
  // ordinary vectorisable one and computes only its operand. All are
  // emitted before any step is added; when an input shares bytes with the
  // output (buffer allocation may write a result over an operand), a part
  // could overwrite what a later one reads: Unimplemented, and the caller
  // emits the one-kernel form.
  absl::Status AddConcatenateParts(const Instruction& fusion, int output) {
    const int parts = ConcatenateParts(fusion);
    std::vector<KernelSpec> kernels;
    std::vector<std::vector<int>> inputs;
    const BufferSlot& out = spec_->plan.slots[output];
    for (int k = 0; k < parts; ++k) {
      XJIT_ASSIGN_OR_RETURN(KernelSpec kernel, EmitConcatenatePart(fusion, k));
      XJIT_ASSIGN_OR_RETURN(std::vector<int> slots, KernelInputSlots(fusion, kernel));
      for (int slot : slots) {
        const BufferSlot& in = spec_->plan.slots[slot];
        if (in.kind == out.kind && in.index == out.index && in.size > 0 && out.size > 0 &&
            in.offset < out.offset + out.size && out.offset < in.offset + in.size) {
          return absl::UnimplementedError("a concatenate part reads its output's bytes");
        }
      }
      kernels.push_back(std::move(kernel));
      inputs.push_back(std::move(slots));
    }
    // A part the target cannot lower takes the parts added before it back.
    const size_t steps = spec_->steps.size();
    const size_t reported = report_ != nullptr ? report_->kernels.size() : 0;
    for (int k = 0; k < parts; ++k) {
      absl::Status status = AddKernelStep(fusion, std::move(kernels[k]), std::move(inputs[k]),
                                          {output}, absl::StrCat(fusion.name(), ".part", k));
      if (!status.ok()) {
        spec_->steps.resize(steps);
        if (report_ != nullptr) report_->kernels.resize(reported);
        return status;
      }
    }
    return absl::OkStatus();
  }

  // A multi-output fusion as one kernel per output (leaf), each computing
  // what its output needs from the fusion's operands (shared producers are
  // computed once per kernel that needs them). All are emitted before any
  // step is added, so a failure leaves the fusion to the evaluator. An
  // output written in place of an operand (buffer allocation may put it
  // there) is written only after every other kernel that reads that operand
  // has run; when no order does that, Unimplemented.
  absl::Status AddKernelPerOutput(const Instruction& fusion, const std::vector<int>& outputs) {
    const size_t n = outputs.size();
    std::vector<KernelSpec> kernels;
    std::vector<std::vector<int>> inputs;
    for (size_t k = 0; k < n; ++k) {
      XJIT_ASSIGN_OR_RETURN(KernelSpec kernel,
                            EmitFusionKernel(fusion, static_cast<int>(k), emit_target()));
      XJIT_ASSIGN_OR_RETURN(std::vector<int> slots, KernelInputSlots(fusion, kernel));
      kernels.push_back(std::move(kernel));
      inputs.push_back(std::move(slots));
    }
    auto overlap = [&](int a, int b) {
      const BufferSlot& x = spec_->plan.slots[a];
      const BufferSlot& y = spec_->plan.slots[b];
      return x.kind == y.kind && x.index == y.index && x.size > 0 && y.size > 0 &&
             x.offset < y.offset + y.size && y.offset < x.offset + x.size;
    };
    // before[k]: the kernels that must run before kernel k (they read what
    // k overwrites).
    std::vector<std::vector<size_t>> before(n);
    for (size_t k = 0; k < n; ++k) {
      for (size_t j = 0; j < n; ++j) {
        if (j == k) continue;
        for (int slot : inputs[j]) {
          if (overlap(slot, outputs[k])) {
            before[k].push_back(j);
            break;
          }
        }
        // Two outputs in one place would be a planning error.
        if (overlap(outputs[j], outputs[k])) {
          return absl::InternalError(absl::StrCat(fusion.name(), ": outputs overlap"));
        }
      }
    }
    std::vector<size_t> order;
    std::vector<bool> done(n, false);
    while (order.size() < n) {
      bool progressed = false;
      for (size_t k = 0; k < n; ++k) {
        if (done[k]) continue;
        bool ready = true;
        for (size_t j : before[k]) ready = ready && done[j];
        if (!ready) continue;
        done[k] = true;
        order.push_back(k);
        progressed = true;
      }
      if (!progressed) {
        return absl::UnimplementedError("per-output kernels overwrite each other's operands");
      }
    }
    for (size_t k : order) {
      XJIT_RETURN_IF_ERROR(AddKernelStep(fusion, std::move(kernels[k]), std::move(inputs[k]),
                                         {outputs[k]}, absl::StrCat(fusion.name(), ".", k)));
    }
    return absl::OkStatus();
  }

  // The slots of a kernel's input buffers.
  absl::StatusOr<std::vector<int>> KernelInputSlots(const Instruction& instruction,
                                                    const KernelSpec& kernel) {
    std::vector<int> slots;
    for (size_t k = 0; k < kernel.inputs.size(); ++k) {
      const Instruction* input = kernel.inputs[k];
      const int element = k < kernel.input_elements.size() ? kernel.input_elements[k] : -1;
      if (element >= 0) {  // One leaf of a tuple value (a variadic scatter's own).
        XJIT_ASSIGN_OR_RETURN(std::vector<int> leaves, LeafSlots(*input));
        if (element >= static_cast<int>(leaves.size()) || !input->shape().IsTuple() ||
            !input->shape().tuple_shapes(element).IsArray()) {
          return absl::InternalError(absl::StrCat("kernel input ", input->name(), " element ",
                                                  element, " is not an array leaf"));
        }
        slots.push_back(leaves[element]);
      } else if (input->parent() == instruction.parent()) {
        XJIT_ASSIGN_OR_RETURN(int slot, ArraySlot(*input));
        slots.push_back(slot);
      } else {
        slots.push_back(FusedConstantSlot(*input));
      }
    }
    return slots;
  }

  // The estimated single-thread time of a kernel (runtime/split_cost.h)
  // whose program had `program_ops` operations, `math_calls` of them vector
  // math calls, before ExpandMath, runs `lanes` elements per vector
  // iteration and reads and writes the given slots. Every loop of the
  // program counts (a reduction's too); a program's operations outside its
  // innermost loop are counted as if inside it, which overstates reductions
  // with long prologues, harmlessly: those are rarely split.
  int64_t KernelCostNanoseconds(const KernelProgram& program, int64_t program_ops,
                                int64_t math_calls, int lanes, const std::vector<int>& inputs,
                                const std::vector<int>& outputs) const {
    int64_t bytes = 0;
    for (const std::vector<int>* slots : {&inputs, &outputs}) {
      for (int slot : *slots) bytes += spec_->plan.slots[slot].size;
    }
    // A kernel that claims loop 0's range runs its body once per call.
    double iterations = 1;
    for (size_t level = program.claims_range ? 1 : 0; level < program.loop_extents.size();
         ++level) {
      iterations *= static_cast<double>(program.loop_extents[level]);
    }
    const double vector_iterations = iterations / std::max(lanes, 1);
    const int64_t ops = program_ops + (runtime::kSplitOpsPerMathCall - 1) * math_calls;
    return runtime::EstimateKernelNanoseconds(
        bytes, static_cast<int64_t>(std::min(vector_iterations, 1e15)), ops);
  }

  // Lowers `kernel` (computing `instruction`, or one output of it) and
  // appends its step, named `name`, reading `inputs` and writing `outputs`.
  absl::Status AddKernelStep(const Instruction& instruction, KernelSpec kernel_spec,
                             std::vector<int> inputs, const std::vector<int>& outputs,
                             const std::string& name) {
    KernelSpec* kernel = &kernel_spec;
    const size_t kernel_outputs = kernel->program.buffers.size() - kernel->inputs.size();
    if (kernel_outputs != outputs.size()) {
      return absl::InternalError(absl::StrCat("kernel of ", instruction.name(), " writes ",
                                              kernel_outputs, " buffers, the value has ",
                                              outputs.size(), " leaves"));
    }
    runtime::Step step;
    step.kind = runtime::Step::Kind::kKernel;
    step.name = name;
    step.inputs = std::move(inputs);
    step.outputs = outputs;
    // Counted before ExpandMath, which may turn math calls into many
    // operations or into one out-of-line call.
    const int64_t math_calls = CountMathOps(kernel->program);
    const int64_t program_ops = static_cast<int64_t>(kernel->program.ops.size());
    MathOptions math;
    math.fused_multiply_add = target_->HasFusedMultiplyAdd();
    math.native_scale = target_->HasNativeScale();
    math.out_of_line = target_->HasOutOfLineMath() &&
                       (options_.math == MathLowering::kOutOfLine ||
                        (options_.math == MathLowering::kAuto &&
                         CountMathOps(kernel->program) >= kOutOfLineMathMinOps));
    ExpandMath(&kernel->program, math);
    XJIT_ASSIGN_OR_RETURN(LoweredKernel lowered, target_->Lower(kernel->program));
    step.function = lowered.function;
    // A one-element kernel's program, kept for a loop emitter that inlines
    // it (Step::inline_program); checked in full there.
    if (options_.inline_loop_kernels && options_.native_loops && HostLoopEmitter() != nullptr &&
        kernel->program.reduction_loops == 0 && kernel->program.ops.size() <= kInlineProgramOps &&
        kernel->program.element_count() == 1) {
      step.inline_program = std::make_shared<const KernelProgram>(kernel->program);
    }
    // A rank-1 kernel's only loop is also its vectorised inner loop: ranges
    // split at multiples of 64 elements (a multiple of every vector width),
    // so each range but the last has no scalar tail and starts at the
    // alignment the whole buffer has (the scalar and vector code compute the
    // same bits in any case).
    const std::vector<int64_t>& extents = kernel->program.loop_extents;
    step.outer_extent = extents.empty() ? 1 : extents[0];
    step.outer_alignment = extents.size() == 1 ? 64 : 1;
    step.claims_range = kernel->program.claims_range;
    step.row_elements = RowElements(kernel->program);
    step.cost_ns = KernelCostNanoseconds(kernel->program, program_ops, math_calls,
                                         lowered.vector_lanes, step.inputs, outputs);
    step.arithmetic_ns = KernelCostNanoseconds(kernel->program, program_ops, math_calls,
                                               lowered.vector_lanes, {}, {});
    // A scatter's or dynamic-update-slice's kernel updates its outputs,
    // which start as operands (KernelSpec::start_operands).
    if (!kernel->start_operands.empty()) {
      if (kernel->start_operands.size() != outputs.size()) {
        return absl::InternalError(absl::StrCat("kernel of ", instruction.name(),
                                                " starts from the wrong number of operands"));
      }
      for (size_t k = 0; k < outputs.size(); ++k) {
        XJIT_ASSIGN_OR_RETURN(int operand,
                              ArraySlot(*instruction.operand(kernel->start_operands[k])));
        const BufferSlot& from = spec_->plan.slots[operand];
        const BufferSlot& to = spec_->plan.slots[outputs[k]];
        if (from.kind != to.kind || from.index != to.index || from.offset != to.offset) {
          spec_->steps.push_back(CopyStep(operand, outputs[k]));
        }
      }
    }
    spec_->steps.push_back(std::move(step));

    // Kernels of called computations (loop bodies, branches) carry their
    // computation's name, unique in the module: several are called "fusion"
    // and were indistinguishable in `perf report`.
    const Computation* computation = instruction.parent();
    const bool in_entry = computation == nullptr || computation->parent() == nullptr ||
                          computation->parent()->entry() == computation;
    const std::string perf_name =
        absl::StrCat("xjit:", spec_->name, ":", in_entry ? "" : computation->name() + "/", name);
    if (PerfMapEnabled(options_.perf_map)) {
      WritePerfMapEntry(lowered.code, lowered.code_size, perf_name);
    }
    if (options_.jitdump || JitDumpRequestedByEnvironment()) {
      WriteJitDumpEntry(lowered.code, lowered.code_size, perf_name,
                        JitDumpSource(kernel->program, instruction),
                        JitDumpLines(kernel->program, lowered.op_offsets));
    }
    if (!options_.dump_dir.empty()) {
      std::ofstream file(std::filesystem::path(options_.dump_dir) /
                         absl::StrCat(spec_->name, ".", name, ".kernel.txt"));
      file << kernel->program.ToString(/*origins=*/true) << "\n" << lowered.asm_text;
    }
    if (report_ != nullptr) {
      KernelInfo info;
      info.name = name;
      info.code_size = lowered.code_size;
      info.vector_lanes = lowered.vector_lanes;
      info.program = kernel->program.ToString();
      info.asm_text = std::move(lowered.asm_text);
      report_->kernels.push_back(std::move(info));
    }
    return absl::OkStatus();
  }

  const CompileOptions& options_;
  CompileContext* context_;
  Target* target_;
  CompileReport* report_;
  runtime::ExecutableSpec* spec_ = nullptr;
  const BufferPlan* plan_ = nullptr;
  absl::flat_hash_map<int64_t, Home> home_;  // By allocation id.
  absl::flat_hash_map<const Instruction*, std::vector<int>> slots_of_;
  absl::flat_hash_map<const Instruction*, int> fused_constant_slot_;
  std::vector<std::pair<int, int>> result_copies_;
  runtime::FlatOffsets flat_offsets_;  // Of the module's shapes.
  bool state_in_place_ = false;
};

// The module the executable runs: `module` after the JIT's pipeline
// (passes/pipeline.h: RunJitPipeline), that is the default passes when
// options ask for them, then the JIT's preparation, which runs whichever
// default passes ran: output fusions split, passed-on values in the layouts
// written, tiled layouts isolated in copies. `target` (null with
// interpret_only) says whether fusion may form row fusions.
absl::StatusOr<std::unique_ptr<Module>> PrepareModule(const Module& module,
                                                      const CompileOptions& options,
                                                      const Target* target) {
  std::unique_ptr<Module> prepared = module.Clone();
  PipelineOptions pipeline;
  pipeline.verify = false;  // The input was verified; each pass keeps it so.
  pipeline.disabled_passes = options.disabled_passes;
  pipeline.only_passes = options.only_passes;
  pipeline.dump_dir = options.dump_dir;
  // Row fusions only where the target lowers row programs. Without a target
  // (interpret_only) nothing is lowered and the option decides alone.
  pipeline.fuse.row_fusion =
      options.row_fusion && (target == nullptr || target->HasRowPrograms());
  // The driver computes the plan itself, after splitting output fusions;
  // the pipeline's copy is only worth its time in a dump.
  if (options.dump_dir.empty() && options.only_passes.empty()) {
    pipeline.disabled_passes.push_back("allocate-buffers");
  }
  // only_passes chooses among the default passes; the compiled program needs
  // the preparation whichever of them run (it can still be disabled by name).
  if (!pipeline.only_passes.empty()) {
    for (std::string& name : JitPreparationPassNames()) {
      pipeline.only_passes.push_back(std::move(name));
    }
  }
  XJIT_RETURN_IF_ERROR(RunJitPipeline(prepared.get(), pipeline, options.run_passes));
  return prepared;
}

}  // namespace

std::string CompileReport::Summary() const {
  return absl::StrFormat(
      "library calls: %d\nkernels: %d\ninterpreted steps: %d\ntemp bytes: %d\npeak bytes: %d\n"
      "compile ms: %.3f\n",
      library_calls.size(), kernels.size(), interpreted_steps.size(), temp_bytes, peak_bytes,
      compile_ms);
}

namespace {

// Plans `entry` (a computation of spec->module) and builds the executable
// that runs it; the rest of `spec` is filled in. With `plan_callees`, the
// plan covers the computations it calls too (for the peak the report gives).
// state_in_place: `entry` is a while body run over the loop state in place.
absl::StatusOr<std::unique_ptr<runtime::Executable>> BuildExecutable(
    const Computation& entry, runtime::ExecutableSpec spec, bool plan_callees,
    bool state_in_place, const CompileOptions& options, CompileReport* report,
    CompileContext* context, std::chrono::steady_clock::time_point start) {
  BufferPlanOptions plan_options;
  // Execute's contract: parameter buffers are only read (but for a while
  // body run in place, whose parameter is the state it updates).
  plan_options.donate_parameters = false;
  plan_options.plan_callees = plan_callees;
  plan_options.state_in_place = state_in_place;
  plan_options.side_effects = &context->effects;
  spec.state_in_place = state_in_place;
  XJIT_ASSIGN_OR_RETURN(BufferPlan plan, ComputeBufferPlan(*spec.module, entry, plan_options));
  if (!options.dump_dir.empty()) {
    std::ofstream(std::filesystem::path(options.dump_dir) / "final.hlo")
        << PrintModule(*spec.module);
    std::ofstream(std::filesystem::path(options.dump_dir) / "buffer-plan.txt")
        << plan.ToString();
  }
  ExecutableBuilder builder(options, context, report, state_in_place);
  XJIT_RETURN_IF_ERROR(builder.Build(entry, plan, &spec));
  if (context->target != nullptr) spec.code_owner = context->target->code_owner();
  spec.threads = std::max(options.threads, 1);
  spec.split_min_chunk_ns =
      options.split_min_chunk_ns >= 0 ? options.split_min_chunk_ns : runtime::kSplitMinChunkNs;
  if (options.row_groups) FormRowGroups(&spec);
  spec.max_while_iterations = options.max_while_iterations;
  spec.bind_loops = options.bind_loops;
  if (options.native_loops) spec.emit_native_loop = HostLoopEmitter();
  spec.native_loop_after = options.native_loop_after;
  spec.needs_large_stack = context->needs_large_stack;

  report->temp_bytes = spec.plan.temp_bytes;
  // The plan's peak (parameters, results and temps live at once over the
  // schedule) plus what the executable adds: library-call scratch, and
  // arena bytes of result values copied out.
  const int64_t arena = plan.ForComputation(&entry)->arena;
  const int64_t planned_arena_bytes = arena >= 0 ? plan.allocation(arena).size : 0;
  report->peak_bytes = plan.peak_bytes() + spec.plan.temp_bytes - planned_arena_bytes;
  auto executable = std::make_unique<runtime::Executable>(std::move(spec));
  report->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
  return executable;
}

// Compiles the module's entry: verifies, prepares the module every program
// of this compile shares (context->module), and builds the entry's program.
absl::StatusOr<std::unique_ptr<runtime::Executable>> CompileInContext(
    const Module& module, const CompileOptions& options, CompileReport* report,
    CompileContext* context) {
  const auto start = std::chrono::steady_clock::now();
  *report = CompileReport();
  XJIT_RETURN_IF_ERROR(VerifyModule(module));
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  if (HasDynamicShape(*module.entry())) {
    return absl::UnimplementedError("the jit does not support dynamic shapes yet");
  }
  Target* target = context->target;
  report->target = target != nullptr ? target->name() : "none";

  if (!options.dump_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.dump_dir, error);
  }
  runtime::ExecutableSpec spec;
  spec.name = module.name();
  XJIT_ASSIGN_OR_RETURN(spec.module, PrepareModule(module, options, target));
  context->module = spec.module;
  const Computation& entry = *spec.module->entry();
  for (const Instruction* parameter : entry.parameters()) {
    spec.parameter_shapes.push_back(parameter->shape());
  }
  spec.result_shape = entry.root()->shape();
  // The caller's buffers are in the layouts the module was written with: its
  // parameters' and root's, or its entry_computation_layout, which layout
  // assignment applies to the entry (passes/assign_layouts.h).
  const std::optional<std::vector<Shape>>& entry_layouts = module.entry_parameter_layouts();
  for (size_t i = 0; i < spec.parameter_shapes.size(); ++i) {
    const Shape& shape = spec.parameter_shapes[i];
    if (!(shape == module.entry()->parameter(i)->shape()) &&
        !(entry_layouts.has_value() && shape == (*entry_layouts)[i])) {
      return absl::InternalError(absl::StrCat("the pass pipeline changed parameter ", i,
                                              "'s shape to ", shape.ToString(true)));
    }
  }
  const std::optional<Shape>& result_layout = module.entry_result_layout();
  if (!(spec.result_shape == module.entry()->root()->shape()) &&
      !(result_layout.has_value() && spec.result_shape == *result_layout)) {
    return absl::InternalError(absl::StrCat("the pass pipeline changed the result shape to ",
                                            spec.result_shape.ToString(true)));
  }
  return BuildExecutable(entry, std::move(spec), /*plan_callees=*/true,
                         /*state_in_place=*/false, options, report, context, start);
}

absl::StatusOr<std::shared_ptr<const runtime::Executable>> CompileCallee(
    const Computation& callee, const CompileOptions& options, CompileReport* report,
    CompileContext* context, bool state_in_place) {
  const auto start = std::chrono::steady_clock::now();
  *report = CompileReport();
  if (HasDynamicShape(callee)) {
    return absl::UnimplementedError("the jit does not support dynamic shapes yet");
  }
  report->target = context->target != nullptr ? context->target->name() : "none";
  runtime::ExecutableSpec spec;
  spec.name = context->module->name();
  spec.module = context->module;
  for (const Instruction* parameter : callee.parameters()) {
    spec.parameter_shapes.push_back(parameter->shape());
  }
  spec.result_shape = callee.root()->shape();
  // Its loop bodies and branches are compiled on their own too: planning
  // them again here would make compiling nested computations quadratic.
  return BuildExecutable(callee, std::move(spec), /*plan_callees=*/false, state_in_place,
                         options, report, context, start);
}

}  // namespace

absl::StatusOr<std::unique_ptr<runtime::Executable>> Compile(const Module& module,
                                                             const CompileOptions& options,
                                                             CompileReport* report) {
  const auto start = std::chrono::steady_clock::now();
  CompileReport local_report;
  if (report == nullptr) report = &local_report;
  // A cache hit skips verification and the target's set-up too: the same
  // text verified when it was compiled first.
  const std::optional<std::string> cache_key =
      module.entry() != nullptr ? CompileCacheKey(module, options) : std::nullopt;
  if (cache_key.has_value()) {
    if (std::optional<CachedCompile> hit = LookupCompileCache(*cache_key)) {
      *report = std::move(hit->report);
      report->cache_hit = true;
      report->compile_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count();
      return std::make_unique<runtime::Executable>(std::move(hit->spec));
    }
  }
  std::unique_ptr<Target> target;
  if (!options.interpret_only) {
    TargetOptions target_options;
    target_options.isa = options.isa;
    target_options.collect_asm = options.collect_asm || !options.dump_dir.empty();
    target_options.collect_op_offsets = options.jitdump || JitDumpRequestedByEnvironment();
    XJIT_ASSIGN_OR_RETURN(target, CreateHostTarget(target_options));
  }
  CompileContext context;
  context.target = target.get();
  context.needs_large_stack = NeedsLargeStack(module);
  // Compiling recurses once per level of nested while/conditional bodies:
  // a deeply nested module compiles on a stack of known size, so that every
  // depth the verifier accepts fits (runtime/host/large_stack.h); shallow ones
  // do not pay for a thread.
  absl::StatusOr<std::unique_ptr<runtime::Executable>> compiled =
      absl::InternalError("not compiled");
  const auto compile = [&] { compiled = CompileInContext(module, options, report, &context); };
  if (OnLargeStack() || !context.needs_large_stack) {
    compile();
  } else {
    XJIT_RETURN_IF_ERROR(RunOnLargeStack(compile));
  }
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> executable, std::move(compiled));
  if (cache_key.has_value()) {
    InsertCompileCache(*cache_key, CachedCompile{executable->shared_spec(), *report});
  }
  return executable;
}

}  // namespace xjit::jit
