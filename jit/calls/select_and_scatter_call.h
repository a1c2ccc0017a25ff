// The compile driver's glue for HLO `select-and-scatter`: a library-call
// step running runtime/select_and_scatter. Select and scatter computations
// it recognises (compare GE/GT/LE/LT of the two parameters; add) run as a
// templated loop; any others are compiled as scalar kernels of their own
// (EmitComputationKernel) that the routine calls. Unimplemented (the driver
// then interprets the instruction) when a computation has no kernel or has
// side effects, or a shape is not a plain array.
#ifndef XJIT_JIT_SELECT_AND_SCATTER_CALL_H_
#define XJIT_JIT_SELECT_AND_SCATTER_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "jit/target.h"
#include "runtime/executable.h"

namespace xjit::jit {

// The library call computing `instruction` (opcode kSelectAndScatter):
// inputs are its operand, source and init_value slots, the output its
// result's. `description`, if not null, receives the plan in words.
absl::StatusOr<runtime::LibraryCall> PlanSelectAndScatterCall(const Instruction& instruction,
                                                              Target& target,
                                                              std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_SELECT_AND_SCATTER_CALL_H_
