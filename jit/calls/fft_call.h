// The compile driver's glue for `fft`: a library-call step into runtime/fft
// with a plan made at compile time (Unimplemented for types, lengths or
// layouts the plan does not take; the driver then interprets the fft).
#ifndef XJIT_JIT_CALLS_FFT_CALL_H_
#define XJIT_JIT_CALLS_FFT_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Input: the operand's slot; output: the result's. The plan may use
// `threads` (at least 1) threads; `description` receives it in words.
absl::StatusOr<runtime::LibraryCall> PlanFftCall(const Instruction& fft, int threads,
                                                 std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CALLS_FFT_CALL_H_
