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

// A call that never reaches OpenBLAS (tiny getrf and trsm) skips the thread
// scope: its lock and OpenBLAS's setting cost more than a 3x3 solve.
void RunLapackCallWithoutBlas(const void* call_pointer, void* const* buffers, void* scratch) {
  const LapackCall& call = *static_cast<const LapackCall*>(call_pointer);
  runtime::host::RunJaxlibLapack(call.plan, buffers, buffers + call.plan.operands.size(),
                                 scratch);
}

void RunLapackCall(const void* call_pointer, void* const* buffers, void* scratch) {
  runtime::blas::ScopedBlasThreads threads(static_cast<const LapackCall*>(call_pointer)->threads);
  RunLapackCallWithoutBlas(call_pointer, buffers, scratch);
}

// Multiply-adds per matrix, about (for BlasThreadsForWork). trsm and ormqr
// apply a factor to right-hand sides (their last operand): its elements
// times half the factor's order plus one (trsm: a triangle of n (n + 1) / 2
// multiply-adds per right-hand side; counted as the whole order, a 16x16
// solve of 4096 right-hand sides passed the threaded bound at half of it
// and forked OpenBLAS's worker) or its reflector count (ormqr's taus). The
// factorizations: the largest operand's or result's elements times the
// largest of their shorter sides (geqrf m x n: m n n; getrf, potrf, eigen
// and singular value routines n x n: n^3).
int64_t LapackWork(const runtime::host::JaxlibLapackPlan& plan) {
  using runtime::host::LapackRoutine;
  const auto& operands = plan.operands;
  if (plan.routine == LapackRoutine::kTrsm && operands.size() >= 2) {
    return operands.back().Elements() * ((operands[0].rows + 1) / 2);
  }
  if (plan.routine == LapackRoutine::kOrmqr && operands.size() >= 3) {
    return operands.back().Elements() * operands[1].Elements();
  }
  int64_t elements = 0, side = 0;
  for (const auto* arrays : {&plan.operands, &plan.results}) {
    for (const runtime::host::LapackArray& array : *arrays) {
      elements = std::max(elements, array.Elements());
      side = std::max(side, std::min(array.rows, array.cols));
    }
  }
  return elements * side;
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
  call->threads = runtime::blas::BlasThreadsForWork(threads, LapackWork(call->plan));
  runtime::LibraryCall library_call;
  library_call.routine = absl::StrCat("lapack ", call->plan.target);
  library_call.function = runtime::host::RunsOnOpenBlas(call->plan) ? &RunLapackCall
                                                                      : &RunLapackCallWithoutBlas;
  library_call.scratch_bytes = call->plan.scratch_bytes;
  if (description != nullptr) {
    *description = absl::StrCat(call->plan.ToString(), " threads=", call->threads);
  }
  library_call.plan = std::move(call);
  return library_call;
}

}  // namespace xjit::jit
