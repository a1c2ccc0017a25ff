// The driver's glue for cholesky, triangular-solve and QR (see linalg_call.h).
#include "jit/calls/linalg_call.h"

#include <memory>
#include <utility>

#include "absl/status/status.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"
#include "runtime/linalg/cholesky.h"
#include "runtime/linalg/qr.h"
#include "runtime/linalg/triangular_solve.h"

namespace xjit::jit {

bool IsLinalgCall(Opcode opcode) {
  return opcode == Opcode::kCholesky || opcode == Opcode::kTriangularSolve;
}

bool IsQrCustomCall(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  const std::string& target = instruction.attrs().custom_call_target;
  return runtime::linalg::IsQrTarget(target) && FfiRegistry::Global().Find(target) == nullptr &&
         CustomCallRegistry::Global().Find(target) == nullptr;
}

absl::StatusOr<runtime::LibraryCall> PlanLinalgCall(const Instruction& instruction, int threads,
                                                    std::string* description) {
  runtime::LibraryCall call;
  if (instruction.opcode() == Opcode::kCustomCall) {
    absl::StatusOr<runtime::linalg::QrPlan> plan = runtime::linalg::PlanQr(instruction, threads);
    if (!plan.ok()) return plan.status();
    call.routine = plan->householder_product ? "householder-product" : "qr";
    call.function = &runtime::linalg::RunQrCall;
    call.scratch_bytes = plan->scratch_bytes;
    if (description != nullptr) *description = plan->ToString();
    call.plan = std::make_shared<const runtime::linalg::QrPlan>(*std::move(plan));
    return call;
  }
  if (instruction.opcode() == Opcode::kCholesky) {
    absl::StatusOr<runtime::linalg::CholeskyPlan> plan =
        runtime::linalg::PlanCholesky(instruction, threads);
    if (!plan.ok()) return plan.status();
    call.routine = "cholesky";
    call.function = &runtime::linalg::RunCholeskyCall;
    call.scratch_bytes = plan->scratch_bytes;
    if (description != nullptr) *description = plan->ToString();
    call.plan = std::make_shared<const runtime::linalg::CholeskyPlan>(*std::move(plan));
    return call;
  }
  if (instruction.opcode() == Opcode::kTriangularSolve) {
    absl::StatusOr<runtime::linalg::TriangularSolvePlan> plan =
        runtime::linalg::PlanTriangularSolve(instruction, threads);
    if (!plan.ok()) return plan.status();
    call.routine = "triangular-solve";
    call.function = &runtime::linalg::RunTriangularSolveCall;
    call.scratch_bytes = plan->scratch_bytes;
    if (description != nullptr) *description = plan->ToString();
    call.plan = std::make_shared<const runtime::linalg::TriangularSolvePlan>(*std::move(plan));
    return call;
  }
  return absl::UnimplementedError("not a linear algebra operation");
}

}  // namespace xjit::jit
