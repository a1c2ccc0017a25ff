// The compile driver's glue for jaxlib's CPU LAPACK custom calls
// (`lapack_*_ffi`, runtime/host/jaxlib_lapack.h) when no handler is
// registered under the target: a library-call step whose plan (routine,
// attributes, layouts, LAPACK's workspace sizes) is made once at compile
// time; each run gathers, calls LAPACK per batch element and scatters, with
// the plan's scratch and no allocation. An unknown lapack_*_ffi target or an
// unsupported form is Unimplemented (naming the target), and the driver
// leaves the instruction to the evaluator, which reports the same error.
#ifndef XJIT_JIT_CALLS_LAPACK_CALL_H_
#define XJIT_JIT_CALLS_LAPACK_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Whether `instruction` is a custom-call of a jaxlib LAPACK target that no
// handler is registered for (typed or untyped, in the global registries).
bool IsJaxlibLapackCustomCall(const Instruction& instruction);

// Inputs: the operands' array leaves; outputs: the result's leaves.
// `threads`: the OpenBLAS threads the call may use. `description`, if not
// null, receives the plan in words.
absl::StatusOr<runtime::LibraryCall> PlanLapackCall(const Instruction& instruction, int threads,
                                                    std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CALLS_LAPACK_CALL_H_
