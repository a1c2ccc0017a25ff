// In-process replicated runs of an Executable (see replicated_run.h).
#include "runtime/collectives/replicated_run.h"

#include <optional>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "interpreter/collectives.h"
#include "ir/module.h"
#include "ir/status_macros.h"
#include "runtime/collectives/in_process.h"
#include "runtime/host/out_of_memory.h"

namespace xjit::collectives {

absl::Status RunReplicas(
    int64_t replicas, int64_t partitions, HostQueues* queues,
    const std::function<absl::Status(int64_t, const runtime::RunContext&)>& run) {
  if (replicas < 1) return absl::InvalidArgumentError("a replicated run needs at least one replica");
  if (partitions < 1) return absl::InvalidArgumentError("a run needs at least one partition");
  const int64_t count = replicas * partitions;
  eval::Rendezvous rendezvous(replicas, partitions);
  std::vector<std::unique_ptr<InProcessCommunicator>> communicators;
  for (int64_t d = 0; d < count; ++d) {
    communicators.push_back(
        std::make_unique<InProcessCommunicator>(&rendezvous, d / partitions, d % partitions));
  }
  std::vector<absl::Status> statuses(count);
  auto run_device = [&](int64_t d) {
    runtime::RunContext context;
    context.replica_id = d / partitions;
    context.partition_id = d % partitions;
    context.communicator = communicators[d].get();
    context.queues = queues;
    statuses[d] = StatusOnOutOfMemory([&] { return run(d, context); });
    communicators[d]->Finish(statuses[d]);
  };
  if (count == 1) {
    run_device(0);
  } else {
    // As RunModuleReplicated: a device whose thread cannot start fails, and
    // the rendezvous aborts the running ones wherever they wait.
    std::vector<std::thread> threads;
    for (int64_t d = 0; d < count; ++d) {
      try {
        threads.emplace_back(run_device, d);
      } catch (const std::system_error& error) {
        const absl::Status status = absl::ResourceExhaustedError(
            absl::StrCat("cannot start a thread for ", rendezvous.DeviceName(d), " of ", count,
                         " devices: ", error.what()));
        for (int64_t k = d; k < count; ++k) {
          communicators[k]->Finish(status);
          statuses[k] = status;
        }
        break;
      }
    }
    for (std::thread& thread : threads) thread.join();
  }
  // The cause: an error other than the aborts it led to.
  std::optional<int64_t> failed;
  for (int64_t d = 0; d < count; ++d) {
    if (statuses[d].ok()) continue;
    if (!failed.has_value() || (statuses[*failed].code() == absl::StatusCode::kAborted &&
                                statuses[d].code() != absl::StatusCode::kAborted)) {
      failed = d;
    }
  }
  if (!failed.has_value()) return absl::OkStatus();
  const absl::Status& status = statuses[*failed];
  return absl::Status(status.code(),
                      absl::StrCat(rendezvous.DeviceName(*failed), ": ", status.message()));
}

absl::Status CheckReplicaCount(const runtime::Executable& executable, int64_t replicas,
                               int64_t partitions) {
  if (replicas < 1) return absl::InvalidArgumentError("a replicated run needs at least one replica");
  const Module& module = executable.module();
  if (partitions < 1 || (module.num_partitions() > 1 && module.num_partitions() != partitions)) {
    return absl::InvalidArgumentError(absl::StrCat("the module has num_partitions=",
                                                   module.num_partitions(), " but runs on ",
                                                   partitions, " partitions"));
  }
  if (module.replica_count() > 1 && module.replica_count() != replicas) {
    return absl::InvalidArgumentError(absl::StrCat("the module has replica_count=",
                                                   module.replica_count(), " but runs on ",
                                                   replicas, " replicas"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Literal>> RunReplicated(
    const runtime::Executable& executable, absl::Span<const std::vector<Literal>> arguments,
    HostQueues* queues, int64_t partitions) {
  const int64_t count = static_cast<int64_t>(arguments.size());
  if (partitions == 0) partitions = executable.module().num_partitions();
  if (partitions < 1 || count % partitions != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        count, " argument lists for ", partitions, " partitions (one per device is needed)"));
  }
  const int64_t replicas = count / partitions;
  XJIT_RETURN_IF_ERROR(CheckReplicaCount(executable, replicas, partitions));
  std::vector<std::optional<Literal>> results(count);
  XJIT_RETURN_IF_ERROR(RunReplicas(
      replicas, partitions, queues,
      [&](int64_t d, const runtime::RunContext& context) -> absl::Status {
        std::vector<const Literal*> pointers;
        for (const Literal& argument : arguments[d]) pointers.push_back(&argument);
        XJIT_ASSIGN_OR_RETURN(Literal result, executable.Run(pointers, context));
        results[d] = std::move(result);
        return absl::OkStatus();
      }));
  std::vector<Literal> values;
  for (std::optional<Literal>& result : results) values.push_back(std::move(*result));
  return values;
}

}  // namespace xjit::collectives
