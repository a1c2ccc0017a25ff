// The driver's glue for rng and rng-bit-generator (see rng_call.h).
#include "jit/calls/rng_call.h"

#include <memory>
#include <utility>

#include "runtime/rng/bit_generator.h"
#include "runtime/rng/rng_step.h"

namespace xjit::jit {

bool IsRngCall(Opcode opcode) {
  return opcode == Opcode::kRng || opcode == Opcode::kRngBitGenerator;
}

absl::StatusOr<runtime::LibraryCall> PlanRngCall(const Instruction& instruction, int threads,
                                                 std::string* description) {
  runtime::LibraryCall call;
  if (instruction.opcode() == Opcode::kRngBitGenerator) {
    absl::StatusOr<runtime::rng::BitGeneratorPlan> plan =
        runtime::rng::PlanBitGenerator(instruction, threads);
    if (!plan.ok()) return plan.status();
    call.routine = "rng-bit-generator";
    call.function = &runtime::rng::RunBitGeneratorCall;
    call.scratch_bytes = plan->scratch_bytes;
    if (description != nullptr) *description = plan->ToString();
    call.plan = std::make_shared<const runtime::rng::BitGeneratorPlan>(*std::move(plan));
    return call;
  }
  if (instruction.opcode() == Opcode::kRng) {
    absl::StatusOr<runtime::rng::RngPlan> plan = runtime::rng::PlanRng(instruction);
    if (!plan.ok()) return plan.status();
    call.routine = "rng";
    call.context_function = &runtime::rng::RunRngCall;
    call.scratch_bytes = plan->scratch_bytes;
    if (description != nullptr) *description = plan->ToString();
    call.plan = std::make_shared<const runtime::rng::RngPlan>(*std::move(plan));
    return call;
  }
  return absl::UnimplementedError("not an rng operation");
}

}  // namespace xjit::jit
