// The compile driver's glue for infeed, outfeed, send and recv with the
// host: library-call steps over the run's HostQueues
// (runtime/run_context.h; shared by every replica of a replicated run), with
// the evaluator's semantics (interpreter/evaluator.h, EvalHostTransfer):
//   - infeed pops the infeed queue into its (data, token) result; an empty
//     queue fails the run (FailedPrecondition) and a value of another shape
//     fails it (InvalidArgument); an empty tuple's infeed reads nothing;
//   - outfeed pushes its operand (in outfeed_shape='s layout when given);
//   - send pushes its operand to channel channel_id (0 without one) and
//     passes it on as element 0 of its result; recv pops that channel into
//     element 0 of its; send-done and recv-done pass their part on;
//   - without queues in the context (a plain run) an infeed or recv fails
//     and an outfeed's or send's value is dropped, as the evaluator's private
//     queues behave.
// Static shapes only, and send/recv between replicas
// (_xla_send_recv_source_target_pairs) are not host transfers: both are
// Unimplemented here (the evaluator then runs them).
#ifndef XJIT_JIT_HOST_TRANSFER_CALL_H_
#define XJIT_JIT_HOST_TRANSFER_CALL_H_

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

bool IsHostTransfer(Opcode opcode);

// Inputs: the array leaves of the operands, operand after operand; outputs:
// the result's array leaves. `instruction` must outlive the call.
absl::StatusOr<runtime::LibraryCall> PlanHostTransferCall(const Instruction& instruction);

}  // namespace xjit::jit

#endif  // XJIT_JIT_HOST_TRANSFER_CALL_H_
