// The compile driver's glue for `custom-call`: a library-call step calling
// the target found when the module is compiled.
//
//   - A target of the typed registry (runtime/host/ffi_registry.h) is called
//     with typed buffers for every array leaf of the operands and the result
//     and may fail the run with its status.
//   - A target of the untyped registry (runtime/host/custom_call_registry.h)
//     is called as `target(out, in)` exactly as the evaluator calls it, for
//     the forms whose buffers are the step's own: array operands in their
//     own layouts (no operand_layout_constraints= that differ), no
//     output_to_operand_aliasing=, api_version original, an array result or
//     a tuple of arrays (out is then the table of its elements' addresses).
// Anything else — an unregistered target included — is Unimplemented here,
// and the driver leaves the instruction to the evaluator, which reports an
// unregistered target when the program runs (what `xjit run` always did).
#ifndef XJIT_JIT_CUSTOM_CALL_H_
#define XJIT_JIT_CUSTOM_CALL_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Targets XLA's own pipelines emit as annotations (Sharding,
// SPMDFullToShardShape, ...): unregistered, they return their one operand
// unchanged (the evaluator's rule); the driver copies.
bool IsAnnotationCustomCall(absl::string_view target);

// Inputs: the array leaves of the operands, operand after operand; outputs:
// the result's array leaves. `custom_call` must outlive the call (it is the
// executable's own module's).
absl::StatusOr<runtime::LibraryCall> PlanCustomCall(const Instruction& custom_call);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CUSTOM_CALL_H_
