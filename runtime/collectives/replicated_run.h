// Runs a compiled Executable on in-process devices: R replicas of P
// partitions, device d = r * P + p (XLA's default device assignment), one
// thread per device, each running the same executable on its own arguments
// and buffers, with a RunContext whose replica and partition ids are its own
// and whose communicator (InProcessCommunicator) meets the others at
// collectives. The compiled counterpart of the evaluator's
// RunModuleReplicated, with the same rules: the module's replica_count must
// be 1 or R and its num_partitions 1 or P; a failing device aborts the
// others at their next collective and the run reports the first cause
// ("replica r: ...", or "replica r partition p: ..." with partitions);
// devices that disagree on their collectives fail with FailedPrecondition
// instead of hanging.
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

// Calls run(d, context) for every device d of `replicas` x `partitions` on
// its own thread (the caller's for one device) with device d's context;
// `queues` (may be null) is every device's. Returns the first cause of
// failure, prefixed with the device ("replica r: ").
absl::Status RunReplicas(int64_t replicas, int64_t partitions, HostQueues* queues,
                         const std::function<absl::Status(int64_t, const runtime::RunContext&)>& run);
inline absl::Status RunReplicas(
    int64_t count, HostQueues* queues,
    const std::function<absl::Status(int64_t, const runtime::RunContext&)>& run) {
  return RunReplicas(count, 1, queues, run);
}

// Checks the module's replica_count and num_partitions against a run of
// `replicas` x `partitions` devices.
absl::Status CheckReplicaCount(const runtime::Executable& executable, int64_t replicas,
                               int64_t partitions = 1);

// Device d runs on arguments[d]; returns each device's result in device
// order. The devices are arguments.size() / P replicas of P partitions,
// P = `partitions`, or the module's num_partitions when 0.
absl::StatusOr<std::vector<Literal>> RunReplicated(
    const runtime::Executable& executable, absl::Span<const std::vector<Literal>> arguments,
    HostQueues* queues = nullptr, int64_t partitions = 0);

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_REPLICATED_RUN_H_
