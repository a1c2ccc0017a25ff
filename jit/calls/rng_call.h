// The compile driver's glue for HLO `rng` and `rng-bit-generator`:
// library-call steps running runtime/rng with plans made at compile time.
// Unimplemented (the driver then interprets the instruction) for element
// types or layouts the plans do not take.
#ifndef XJIT_JIT_RNG_CALL_H_
#define XJIT_JIT_RNG_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Whether `opcode` is one PlanRngCall takes.
bool IsRngCall(Opcode opcode);

// The library call computing `instruction`: inputs are its operands'
// slots, the outputs its result's leaves. rng's call draws from the run's
// generator state (a context call); rng-bit-generator's is a plain one that
// may use `threads` threads. `description` receives the plan in words.
absl::StatusOr<runtime::LibraryCall> PlanRngCall(const Instruction& instruction, int threads,
                                                 std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_RNG_CALL_H_
