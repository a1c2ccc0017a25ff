// The compile driver (see compile.h).
#include "jit/compile.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <memory>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"
#include "jit/fusion_emitter.h"
#include "jit/perf_map.h"
#include "jit/target.h"
#include "jit/vector_math.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/convolution.h"
#include "runtime/blas/dot.h"

namespace xjit::jit {
namespace {

using runtime::BufferSlot;

int64_t AlignUp(int64_t n) {
  return (n + runtime::kBufferAlignment - 1) / runtime::kBufferAlignment *
         runtime::kBufferAlignment;
}

runtime::Step CopyStep(int source, int destination) {
  runtime::Step step;
  step.kind = runtime::Step::Kind::kCopy;
  step.inputs = {source};
  step.output = destination;
  return step;
}

// Library routines as library-call steps call them (runtime::LibraryFunction).
void RunDotCall(const void* plan, void* const* buffers, void* scratch) {
  runtime::blas::RunDot(*static_cast<const runtime::blas::DotPlan*>(plan), buffers[0],
                        buffers[1], buffers[2], scratch);
}

void RunConvolutionCall(const void* plan, void* const* buffers, void* scratch) {
  runtime::blas::RunConvolution(*static_cast<const runtime::blas::ConvolutionPlan*>(plan),
                                buffers[0], buffers[1], buffers[2], scratch);
}

bool IsLibraryCall(Opcode opcode) {
  return opcode == Opcode::kDot || opcode == Opcode::kConvolution;
}

bool HasDynamicShape(const Computation& computation) {
  for (const auto& instruction : computation.instructions()) {
    if (instruction->shape().is_dynamic()) return true;
  }
  return false;
}

// Builds the steps and buffer plan of the entry computation.
class ExecutableBuilder {
 public:
  ExecutableBuilder(const CompileOptions& options, Target* target, CompileReport* report)
      : options_(options), target_(target), report_(report) {}

  absl::Status Build(const Computation& entry, runtime::ExecutableSpec* spec) {
    spec_ = spec;
    root_ = entry.root();
    for (const auto& owned : entry.instructions()) {
      XJIT_RETURN_IF_ERROR(Add(*owned));
    }
    // A root that is only a place (parameter, constant, tuple element) is
    // copied into the result.
    const int root_slot = slot_of_.at(root_);
    if (spec_->plan.slots[root_slot].kind != BufferSlot::Kind::kResult) {
      BufferSlot result;
      result.kind = BufferSlot::Kind::kResult;
      result.shape = root_->shape();
      result.size = ByteSize(root_->shape());
      const int result_slot = NewSlot(result);
      spec_->steps.push_back(CopyStep(root_slot, result_slot));
    }
    spec_->plan.result_bytes = ByteSize(root_->shape());
    // Scratch of library calls: one range after every value, sized for the
    // largest call (the calls run one at a time).
    if (spec_->plan.scratch_bytes > 0) {
      spec_->plan.scratch_offset = AlignUp(spec_->plan.temp_bytes);
      spec_->plan.temp_bytes = spec_->plan.scratch_offset + spec_->plan.scratch_bytes;
    }
    return absl::OkStatus();
  }

 private:
  int NewSlot(BufferSlot slot) {
    spec_->plan.slots.push_back(std::move(slot));
    return static_cast<int>(spec_->plan.slots.size()) - 1;
  }

  // The slot an instruction computed by a step writes.
  int OutputSlot(const Instruction& instruction) {
    BufferSlot slot;
    slot.shape = instruction.shape();
    slot.size = ByteSize(instruction.shape());
    if (&instruction == root_) {
      slot.kind = BufferSlot::Kind::kResult;
    } else {
      slot.kind = BufferSlot::Kind::kTemp;
      slot.offset = AlignUp(spec_->plan.temp_bytes);
      spec_->plan.temp_bytes = slot.offset + slot.size;
    }
    return NewSlot(std::move(slot));
  }

  int ConstantSlot(const Instruction& constant) {
    auto it = constant_slot_.find(&constant);
    if (it != constant_slot_.end()) return it->second;
    BufferSlot slot;
    slot.kind = BufferSlot::Kind::kConstant;
    slot.index = static_cast<int64_t>(spec_->constants.size());
    slot.shape = constant.shape();
    slot.size = ByteSize(constant.shape());
    spec_->constants.push_back(runtime::FlattenLiteral(constant.literal()));
    const int id = NewSlot(std::move(slot));
    constant_slot_[&constant] = id;
    return id;
  }

  absl::Status Add(const Instruction& instruction) {
    switch (instruction.opcode()) {
      case Opcode::kParameter: {
        BufferSlot slot;
        slot.kind = BufferSlot::Kind::kParameter;
        slot.index = instruction.attrs().parameter_number;
        slot.shape = instruction.shape();
        slot.size = ByteSize(instruction.shape());
        slot_of_[&instruction] = NewSlot(std::move(slot));
        return absl::OkStatus();
      }
      case Opcode::kConstant:
        slot_of_[&instruction] = ConstantSlot(instruction);
        return absl::OkStatus();
      case Opcode::kGetTupleElement: {
        BufferSlot slot = spec_->plan.slots[slot_of_.at(instruction.operand(0))];
        const int64_t index = instruction.attrs().tuple_index;
        slot.offset += runtime::TupleElementOffset(slot.shape, index);
        slot.shape = Shape(slot.shape.tuple_shapes(index));
        slot.size = ByteSize(slot.shape);
        slot_of_[&instruction] = NewSlot(std::move(slot));
        return absl::OkStatus();
      }
      case Opcode::kTuple: {
        const int out = OutputSlot(instruction);
        slot_of_[&instruction] = out;
        for (int64_t k = 0; k < instruction.operand_count(); ++k) {
          BufferSlot part = spec_->plan.slots[out];
          part.offset += runtime::TupleElementOffset(instruction.shape(), k);
          part.shape = instruction.shape().tuple_shapes(k);
          part.size = ByteSize(part.shape);
          if (part.size == 0) continue;
          const int part_slot = NewSlot(std::move(part));
          spec_->steps.push_back(CopyStep(slot_of_.at(instruction.operand(k)), part_slot));
        }
        return absl::OkStatus();
      }
      default:
        break;
    }
    const int out = OutputSlot(instruction);
    slot_of_[&instruction] = out;
    const bool empty_array =
        instruction.shape().IsArray() && instruction.shape().element_count() == 0;
    if (empty_array && !HasSideEffect(instruction.opcode())) return absl::OkStatus();
    absl::Status kernel_status = absl::UnimplementedError("interpret_only");
    if (target_ != nullptr) {
      kernel_status = IsLibraryCall(instruction.opcode()) ? AddLibraryCall(instruction, out)
                                                          : AddKernel(instruction, out);
    }
    if (kernel_status.ok()) return absl::OkStatus();
    runtime::Step step;
    step.kind = runtime::Step::Kind::kInterpreted;
    step.name = instruction.name();
    step.instruction = &instruction;
    for (const Instruction* operand : instruction.operands()) {
      step.inputs.push_back(slot_of_.at(operand));
    }
    step.output = out;
    spec_->steps.push_back(std::move(step));
    if (report_ != nullptr) {
      report_->interpreted_steps.push_back(absl::StrCat(instruction.name(), " (",
                                                        OpcodeName(instruction.opcode()), "): ",
                                                        kernel_status.message()));
    }
    return absl::OkStatus();
  }

  // A dot or convolution as a call into runtime/blas with a plan made now;
  // the plan's error (Unimplemented for layouts or types it does not
  // handle) leaves the instruction to the evaluator.
  absl::Status AddLibraryCall(const Instruction& instruction, int out) {
    runtime::LibraryCall call;
    std::string description;
    if (instruction.opcode() == Opcode::kDot) {
      XJIT_ASSIGN_OR_RETURN(runtime::blas::DotPlan plan, runtime::blas::PlanDot(instruction));
      call.routine = "dot";
      call.function = &RunDotCall;
      call.scratch_bytes = plan.scratch_bytes;
      description = plan.ToString();
      call.plan = std::make_shared<const runtime::blas::DotPlan>(std::move(plan));
    } else {
      XJIT_ASSIGN_OR_RETURN(runtime::blas::ConvolutionPlan plan,
                            runtime::blas::PlanConvolution(instruction));
      call.routine = "convolution";
      call.function = &RunConvolutionCall;
      call.scratch_bytes = plan.scratch_bytes;
      description = plan.ToString();
      call.plan = std::make_shared<const runtime::blas::ConvolutionPlan>(std::move(plan));
    }
    spec_->plan.scratch_bytes = std::max(spec_->plan.scratch_bytes, call.scratch_bytes);
    if (report_ != nullptr) {
      LibraryCallInfo info;
      info.name = instruction.name();
      info.routine = call.routine;
      info.plan = std::move(description);
      info.scratch_bytes = call.scratch_bytes;
      report_->library_calls.push_back(std::move(info));
    }
    runtime::Step step;
    step.kind = runtime::Step::Kind::kLibraryCall;
    step.name = instruction.name();
    step.library_call = std::move(call);
    for (const Instruction* operand : instruction.operands()) {
      step.inputs.push_back(slot_of_.at(operand));
    }
    step.output = out;
    spec_->steps.push_back(std::move(step));
    return absl::OkStatus();
  }

  absl::Status AddKernel(const Instruction& instruction, int out) {
    absl::StatusOr<KernelSpec> kernel = instruction.opcode() == Opcode::kFusion
                                            ? EmitFusionKernel(instruction)
                                            : EmitInstructionKernel(instruction);
    if (!kernel.ok()) return kernel.status();
    MathOptions math;
    math.fused_multiply_add = target_->HasFusedMultiplyAdd();
    ExpandMath(&kernel->program, math);
    XJIT_ASSIGN_OR_RETURN(LoweredKernel lowered, target_->Lower(kernel->program));
    runtime::Step step;
    step.kind = runtime::Step::Kind::kKernel;
    step.name = instruction.name();
    step.function = lowered.function;
    // A rank-1 kernel's only loop is also its vectorised inner loop: ranges
    // split at multiples of 64 elements (a multiple of every vector width),
    // so each range but the last has no scalar tail and the elements are
    // computed by exactly the code a single-threaded run uses.
    const std::vector<int64_t>& extents = kernel->program.loop_extents;
    step.outer_extent = extents.empty() ? 1 : extents[0];
    step.outer_alignment = extents.size() == 1 ? 64 : 1;
    for (const Instruction* input : kernel->inputs) {
      auto it = slot_of_.find(input);
      step.inputs.push_back(it != slot_of_.end() ? it->second : ConstantSlot(*input));
    }
    step.output = out;
    spec_->steps.push_back(std::move(step));

    const std::string perf_name =
        absl::StrCat("xjit:", spec_->name, ":", instruction.name());
    if (options_.perf_map || PerfMapRequestedByEnvironment()) {
      WritePerfMapEntry(lowered.code, lowered.code_size, perf_name);
    }
    if (!options_.dump_dir.empty()) {
      std::error_code error;
      std::filesystem::create_directories(options_.dump_dir, error);
      std::ofstream file(std::filesystem::path(options_.dump_dir) /
                         absl::StrCat(spec_->name, ".", instruction.name(), ".kernel.txt"));
      file << kernel->program.ToString() << "\n" << lowered.asm_text;
    }
    if (report_ != nullptr) {
      KernelInfo info;
      info.name = instruction.name();
      info.code_size = lowered.code_size;
      info.vector_lanes = lowered.vector_lanes;
      info.program = kernel->program.ToString();
      info.asm_text = std::move(lowered.asm_text);
      report_->kernels.push_back(std::move(info));
    }
    return absl::OkStatus();
  }

  const CompileOptions& options_;
  Target* target_;
  CompileReport* report_;
  runtime::ExecutableSpec* spec_ = nullptr;
  const Instruction* root_ = nullptr;
  absl::flat_hash_map<const Instruction*, int> slot_of_;
  absl::flat_hash_map<const Instruction*, int> constant_slot_;
};

}  // namespace

std::string CompileReport::Summary() const {
  return absl::StrFormat(
      "library calls: %d\nkernels: %d\ninterpreted steps: %d\ntemp bytes: %d\npeak bytes: %d\n"
      "compile ms: %.3f\n",
      library_calls.size(), kernels.size(), interpreted_steps.size(), temp_bytes, peak_bytes,
      compile_ms);
}

absl::StatusOr<std::unique_ptr<runtime::Executable>> Compile(const Module& module,
                                                             const CompileOptions& options,
                                                             CompileReport* report) {
  const auto start = std::chrono::steady_clock::now();
  CompileReport local_report;
  if (report == nullptr) report = &local_report;
  *report = CompileReport();

  XJIT_RETURN_IF_ERROR(VerifyModule(module));
  if (module.entry() == nullptr) return absl::InvalidArgumentError("module has no entry");
  if (HasDynamicShape(*module.entry())) {
    return absl::UnimplementedError("the jit does not support dynamic shapes yet");
  }
  std::unique_ptr<Target> target;
  if (!options.interpret_only) {
    TargetOptions target_options;
    target_options.isa = options.isa;
    target_options.collect_asm = options.collect_asm || !options.dump_dir.empty();
    XJIT_ASSIGN_OR_RETURN(target, CreateHostTarget(target_options));
    report->target = target->name();
  } else {
    report->target = "none";
  }

  runtime::ExecutableSpec spec;
  spec.name = module.name();
  spec.module = module.Clone();
  const Computation& entry = *spec.module->entry();
  for (const Instruction* parameter : entry.parameters()) {
    spec.parameter_shapes.push_back(parameter->shape());
  }
  spec.result_shape = entry.root()->shape();
  ExecutableBuilder builder(options, target.get(), report);
  XJIT_RETURN_IF_ERROR(builder.Build(entry, &spec));
  if (target != nullptr) spec.code_owner = target->code_owner();
  spec.threads = std::max(options.threads, 1);
  // OpenBLAS's thread count is process-wide (see CompileOptions::threads);
  // only a module that calls it changes it.
  if (!report->library_calls.empty() && runtime::blas::BlasThreads() != options.threads) {
    runtime::blas::SetBlasThreads(options.threads);
  }

  report->temp_bytes = spec.plan.temp_bytes;
  report->peak_bytes = spec.plan.temp_bytes + spec.plan.result_bytes;
  auto executable = std::make_unique<runtime::Executable>(std::move(spec));
  report->compile_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
          .count();
  return executable;
}

}  // namespace xjit::jit
