// Runs a compiled Executable as N in-process replicas: one thread per
// replica, each running the same executable on its own arguments and
// buffers, with a RunContext whose replica id is its own and whose
// communicator (InProcessCommunicator) meets the others at collectives. The
// compiled counterpart of the evaluator's RunModuleReplicated, with the same
// rules: the module's replica_count must be 1 or N and num_partitions 1
// (Unimplemented otherwise, as there); a failing replica aborts the others
// at their next collective and the run reports the first cause
// ("replica r: ..."); replicas that disagree on their collectives fail
// with FailedPrecondition instead of hanging.
#ifndef XJIT_RUNTIME_COLLECTIVES_REPLICATED_RUN_H_
#define XJIT_RUNTIME_COLLECTIVES_REPLICATED_RUN_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/literal.h"
#include "runtime/executable.h"
#include "runtime/host/host_queues.h"

namespace xjit::collectives {

// Calls run(r, context) for r in [0, count) on `count` threads (the caller's
// for count 1) with replica r's context; `queues` (may be null) is every
// replica's. Returns the first cause of failure, prefixed "replica r: ".
absl::Status RunReplicas(int64_t count, HostQueues* queues,
                         const std::function<absl::Status(int64_t, const runtime::RunContext&)>& run);

// Checks the module's replica_count and num_partitions against `count`.
absl::Status CheckReplicaCount(const runtime::Executable& executable, int64_t count);

// Replica r runs on arguments[r]; returns each replica's result in order.
absl::StatusOr<std::vector<Literal>> RunReplicated(
    const runtime::Executable& executable, absl::Span<const std::vector<Literal>> arguments,
    HostQueues* queues = nullptr);

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_REPLICATED_RUN_H_
