// Scheduling: the sequential order in which a computation's instructions run.
//
// ComputeSchedule is an analysis (it changes nothing): a list scheduler that,
// among the instructions whose operands and control predecessors have run,
// picks the one that frees the most bytes net of the bytes it defines, so
// that big buffers die early and peak memory stays low; ties go to the
// earlier instruction in definition order, which keeps the schedule stable.
// Instructions with side effects (HasSideEffectDeep) keep their relative
// order. Parameters come first.
#ifndef XJIT_PASSES_SCHEDULE_H_
#define XJIT_PASSES_SCHEDULE_H_

#include <vector>

#include "ir/computation.h"
#include "ir/instruction.h"

namespace xjit {

class SideEffectCache;  // passes/rewrite_util.h

// Every instruction of `computation` exactly once, operands and control
// predecessors before users.
std::vector<const Instruction*> ComputeSchedule(const Computation& computation);
// The same with side effects found by `effects` (shared by the schedules of
// one module; null: a cache of its own).
std::vector<const Instruction*> ComputeSchedule(const Computation& computation,
                                                SideEffectCache* effects);

// Whether an instruction defines no storage of its own but shares its
// operand's (bitcast, get-tuple-element, tuple, opt-barrier, domain,
// add-dependency).
bool IsAliasingInstruction(const Instruction& instruction);

}  // namespace xjit

#endif  // XJIT_PASSES_SCHEDULE_H_
