// The driver's glue for jaxlib's LAPACK custom calls (see lapack_call.h).
#include "jit/calls/lapack_call.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"
#include "runtime/host/jaxlib_lapack.h"

namespace xjit::jit {
namespace {

struct LapackCall {
  runtime::host::JaxlibLapackPlan plan;
  int threads = 1;
};

void RunLapackCall(const void* call_pointer, void* const* buffers, void* scratch) {
  const LapackCall& call = *static_cast<const LapackCall*>(call_pointer);
  runtime::blas::ScopedBlasThreads threads(call.threads);
  runtime::host::RunJaxlibLapack(call.plan, buffers, buffers + call.plan.operands.size(),
                                 scratch);
}

}  // namespace

bool IsJaxlibLapackCustomCall(const Instruction& instruction) {
  if (instruction.opcode() != Opcode::kCustomCall) return false;
  const std::string& target = instruction.attrs().custom_call_target;
  return runtime::host::IsJaxlibLapackTarget(target) &&
         FfiRegistry::Global().Find(target) == nullptr &&
         CustomCallRegistry::Global().Find(target) == nullptr;
}

absl::StatusOr<runtime::LibraryCall> PlanLapackCall(const Instruction& instruction, int threads,
                                                    std::string* description) {
  auto call = std::make_shared<LapackCall>();
  XJIT_ASSIGN_OR_RETURN(call->plan, runtime::host::PlanJaxlibLapack(instruction));
  // Multiply-adds per matrix, about: the largest operand's or result's
  // elements times the largest of their shorter sides (geqrf m x n: m n n;
  // potrf, getrf, eigen and singular value routines n x n: n^3; trsm and
  // ormqr: the right-hand sides' elements times the order of A).
  int64_t elements = 0, side = 0;
  for (const auto* arrays : {&call->plan.operands, &call->plan.results}) {
    for (const runtime::host::LapackArray& array : *arrays) {
      elements = std::max(elements, array.Elements());
      side = std::max(side, std::min(array.rows, array.cols));
    }
  }
  call->threads = runtime::blas::BlasThreadsForWork(threads, elements * side);
  runtime::LibraryCall library_call;
  library_call.routine = absl::StrCat("lapack ", call->plan.target);
  library_call.function = &RunLapackCall;
  library_call.scratch_bytes = call->plan.scratch_bytes;
  if (description != nullptr) *description = call->plan.ToString();
  library_call.plan = std::move(call);
  return library_call;
}

}  // namespace xjit::jit
