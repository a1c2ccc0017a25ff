// The driver's glue for dot and convolution (see blas_call.h).
#include "jit/calls/blas_call.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "ir/status_macros.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/convolution.h"
#include "runtime/blas/dot.h"

namespace xjit::jit {
namespace {

// A BLAS routine's plan and the OpenBLAS thread count of the executable
// that calls it (set around the call only, runtime/blas/blas_threads.h).
template <typename Plan>
struct BlasCall {
  Plan plan;
  int threads = 1;
};

void RunDotCall(const void* call, void* const* buffers, void* scratch) {
  const auto& dot = *static_cast<const BlasCall<runtime::blas::DotPlan>*>(call);
  // A tiny call runs single-threaded in OpenBLAS whatever its setting: no
  // scope (a mutex and two OpenBLAS calls, a tenth of a small solver's run).
  std::optional<runtime::blas::ScopedBlasThreads> threads;
  if (!runtime::blas::IsTinyBlasCall(dot.plan)) threads.emplace(dot.plan.blas_threads);
  runtime::blas::RunDot(dot.plan, buffers[0], buffers[1], buffers[2], scratch, dot.threads);
}

void RunConvolutionCall(const void* call, void* const* buffers, void* scratch) {
  const auto& convolution = *static_cast<const BlasCall<runtime::blas::ConvolutionPlan>*>(call);
  runtime::blas::ScopedBlasThreads threads(convolution.threads);
  runtime::blas::RunConvolution(convolution.plan, buffers[0], buffers[1], buffers[2], scratch);
}

}  // namespace

absl::StatusOr<runtime::LibraryCall> PlanDotCall(const Instruction& dot, int threads,
                                                 std::string* description) {
  XJIT_ASSIGN_OR_RETURN(runtime::blas::DotPlan plan, runtime::blas::PlanDot(dot));
  plan.small_gemm = true;
  if (runtime::blas::DotSplitDisabledByEnvironment()) {
    plan.threads = plan.blas_threads = threads;  // OpenBLAS's own threads (for measuring)
  } else {
    // The calls split over the pool, OpenBLAS single-threaded.
    runtime::blas::PlanDotThreads(plan, threads);
  }
  runtime::LibraryCall call;
  call.routine = "dot";
  call.function = &RunDotCall;
  call.scratch_bytes = plan.scratch_bytes;
  *description = plan.ToString();
  call.plan = std::make_shared<const BlasCall<runtime::blas::DotPlan>>(
      BlasCall<runtime::blas::DotPlan>{std::move(plan), threads});
  return call;
}

absl::StatusOr<runtime::LibraryCall> PlanConvolutionCall(const Instruction& convolution,
                                                         int threads, std::string* description) {
  XJIT_ASSIGN_OR_RETURN(runtime::blas::ConvolutionPlan plan,
                        runtime::blas::PlanConvolution(convolution, threads));
  runtime::LibraryCall call;
  call.routine = "convolution";
  call.function = &RunConvolutionCall;
  call.scratch_bytes = plan.ChosenScratchBytes();
  *description = plan.ToString();
  // OpenBLAS gets the thread count the plan wants (1 where it splits its
  // work over the pool itself).
  const int blas_threads = plan.BlasThreads();
  call.plan = std::make_shared<const BlasCall<runtime::blas::ConvolutionPlan>>(
      BlasCall<runtime::blas::ConvolutionPlan>{std::move(plan), blas_threads});
  return call;
}

}  // namespace xjit::jit
