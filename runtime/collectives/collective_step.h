// The library-call steps of collectives and of replica-id / partition-id:
// planned at compile time from the instruction, run with the run's
// RunContext (runtime/run_context.h) through its Communicator.
//
// Semantics are the evaluator's replicated ones (RunModuleReplicated in
// interpreter/evaluator.h; groups, results and reducers from
// interpreter/collectives.h), so a compiled replicated run equals the
// evaluator's bit for bit:
//   - all-reduce (and -start) with one array operand whose reducer is a
//     plain add/multiply/maximum/minimum/and/or of its two parameters, on a
//     type FoldInGroupOrder handles, reduces in place through
//     Communicator::AllReduce; any other reducer, type or operand count
//     gathers every member's contribution and folds it in group order with
//     the evaluated reducer;
//   - all-gather (and -start), reduce-scatter, all-to-all (array and tuple
//     forms), collective-broadcast and collective-permute (and -start)
//     gather the group's contributions and compute this replica's part;
//   - ragged-all-to-all gathers every member's six operands and computes
//     this replica's rows (eval::RaggedAllToAllResult); the combined
//     collective-permute (several operands) permutes their tuple;
//   - send/recv between replicas go through Communicator::Send/Recv (a
//     send never waits; a recv waits for its source's value);
//   - replica-id is the context's replica, partition-id its partition.
// Without a communicator (a plain run) a collective sees a group of one —
// unless the module declares more than one replica or partition, or a
// group names another replica: then the step fails as the evaluator does
// (Unimplemented: it needs a replicated run).
#ifndef XJIT_RUNTIME_COLLECTIVES_COLLECTIVE_STEP_H_
#define XJIT_RUNTIME_COLLECTIVES_COLLECTIVE_STEP_H_

#include <optional>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "runtime/collectives/communicator.h"
#include "runtime/executable.h"

namespace xjit::collectives {

// Whether `opcode` is computed by PlanCollectiveCall.
bool IsCollectiveStep(Opcode opcode);
// The same for an instruction: also send/recv between replicas
// (eval::IsCrossReplicaTransfer), whose token operands are not inputs.
bool IsCollectiveStep(const Instruction& instruction);

// add/multiply/maximum/minimum/and/or of the reducer's two scalar
// parameters (either order), or nullopt.
std::optional<ReductionKind> RecognizeReducer(const Computation& reducer);

// The library call of `instruction` (IsCollectiveStep): inputs are its
// operands' slots (array operands only; Unimplemented otherwise), outputs
// the array leaves of its result. `instruction` must outlive the call (it is
// the executable's own module's).
absl::StatusOr<runtime::LibraryCall> PlanCollectiveCall(const Instruction& instruction);

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_COLLECTIVE_STEP_H_
