// The compile driver's glue for `custom-call`: a library-call step calling
// the target found when the module is compiled.
//
//   - A target of the typed registry (runtime/host/ffi_registry.h) is called
//     with typed buffers for every array leaf of the operands and the result
//     and may fail the run with its status.
//   - A target of the untyped registry (runtime/host/custom_call_registry.h)
//     is called as `target(out, in)` exactly as the evaluator calls it:
//     in[i] is operand i's buffer, or for a tuple operand a table of its
//     elements' pointers (nested for nested tuples); out the result's
//     buffer or table. An operand whose operand_layout_constraints= entry
//     differs from its layout is copied into scratch in that layout first;
//     an output named by output_to_operand_aliasing= (operand_index {},
//     output_index {} or {k}) starts as a copy of that operand, as the
//     evaluator's does (when buffer allocation placed the output over the
//     operand, the copy is the operand itself). api_version original only.
//   - An unregistered target is looked up when the step runs (typed, then
//     untyped, as the evaluator does) and, if still unregistered, fails the
//     run with the evaluator's NOT_FOUND error (`NAME: custom-call target
//     "T" is not registered`), what `xjit run` always did. The targets the
//     evaluator gives a meaning of their own when unregistered (the
//     annotations, TopK, Qr, ProductOfElementaryHouseholderReflectors) are
//     the exception: Unimplemented here, the driver's own plans take them.
// Anything else (other api_versions and aliasing forms of a registered
// untyped target) is Unimplemented here, and the driver leaves the
// instruction to the evaluator.
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
