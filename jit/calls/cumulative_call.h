// The compile driver's glue for cumulative reduce-windows (JAX's cumsum,
// cumprod, cummax, cummin): a library-call step running
// runtime/scan/cumulative.h, one pass over the array, where the kernel
// emitter would fold every window whole (quadratic in the row length).
#ifndef XJIT_JIT_CALLS_CUMULATIVE_CALL_H_
#define XJIT_JIT_CALLS_CUMULATIVE_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "jit/calls/library_calls.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Whether `instruction` is a forward cumulative reduce-window that
// PlanCumulativeCall takes: one operand and a scalar init of one type that
// the typed folds take (collectives::CanFold), a reducer that is a plain
// add/multiply/maximum/minimum/and/or of its parameters, the result in the
// operand's shape and plain layout, and a window that is 1 wide everywhere
// but along one dimension of length N > 1, where it is N long, stride 1,
// padded N - 1 low and 0 high, without dilation or reversal.
bool IsCumulativeWindow(const Instruction& instruction);

// The library call of such an instruction (a LibraryCallPlanner): inputs
// the operand and the init value, the output its result.
absl::StatusOr<runtime::LibraryCall> PlanCumulativeCall(const Instruction& instruction,
                                                        const LibraryCallContext& context,
                                                        std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CALLS_CUMULATIVE_CALL_H_
