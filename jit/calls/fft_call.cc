// The driver's glue for fft (see fft_call.h).
#include "jit/calls/fft_call.h"

#include <memory>
#include <utility>

#include "ir/status_macros.h"
#include "runtime/fft/fft.h"

namespace xjit::jit {

absl::StatusOr<runtime::LibraryCall> PlanFftCall(const Instruction& fft, int threads,
                                                 std::string* description) {
  XJIT_ASSIGN_OR_RETURN(
      runtime::fft::FftPlan plan,
      runtime::fft::PlanFft(fft.attrs().fft_type, fft.attrs().fft_length,
                            fft.operand(0)->shape(), fft.shape(), threads));
  runtime::LibraryCall call;
  call.routine = "fft";
  call.function = &runtime::fft::RunFftCall;
  call.scratch_bytes = plan.scratch_bytes;
  *description = plan.ToString();
  call.plan = std::make_shared<const runtime::fft::FftPlan>(std::move(plan));
  return call;
}

}  // namespace xjit::jit
