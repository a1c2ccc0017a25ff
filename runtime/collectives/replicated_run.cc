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

namespace xjit::collectives {

absl::Status RunReplicas(
    int64_t count, HostQueues* queues,
    const std::function<absl::Status(int64_t, const runtime::RunContext&)>& run) {
  if (count < 1) return absl::InvalidArgumentError("a replicated run needs at least one replica");
  eval::Rendezvous rendezvous(count);
  std::vector<std::unique_ptr<InProcessCommunicator>> communicators;
  for (int64_t r = 0; r < count; ++r) {
    communicators.push_back(std::make_unique<InProcessCommunicator>(&rendezvous, r));
  }
  std::vector<absl::Status> statuses(count);
  auto run_replica = [&](int64_t r) {
    runtime::RunContext context;
    context.replica_id = r;
    context.communicator = communicators[r].get();
    context.queues = queues;
    statuses[r] = run(r, context);
    communicators[r]->Finish(statuses[r]);
  };
  if (count == 1) {
    run_replica(0);
  } else {
    // As RunModuleReplicated: a replica whose thread cannot start fails, and
    // the rendezvous aborts the running ones wherever they wait.
    std::vector<std::thread> threads;
    for (int64_t r = 0; r < count; ++r) {
      try {
        threads.emplace_back(run_replica, r);
      } catch (const std::system_error& error) {
        const absl::Status status = absl::ResourceExhaustedError(absl::StrCat(
            "cannot start a thread for replica ", r, " of ", count, ": ", error.what()));
        for (int64_t k = r; k < count; ++k) {
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
  for (int64_t r = 0; r < count; ++r) {
    if (statuses[r].ok()) continue;
    if (!failed.has_value() || (statuses[*failed].code() == absl::StatusCode::kAborted &&
                                statuses[r].code() != absl::StatusCode::kAborted)) {
      failed = r;
    }
  }
  if (!failed.has_value()) return absl::OkStatus();
  const absl::Status& status = statuses[*failed];
  return absl::Status(status.code(), absl::StrCat("replica ", *failed, ": ", status.message()));
}

absl::Status CheckReplicaCount(const runtime::Executable& executable, int64_t count) {
  if (count < 1) return absl::InvalidArgumentError("a replicated run needs at least one replica");
  const Module& module = executable.module();
  if (module.num_partitions() > 1) {
    return absl::UnimplementedError(absl::StrCat(
        "the module has num_partitions=", module.num_partitions(),
        "; replicated runs support one partition"));
  }
  if (module.replica_count() > 1 && module.replica_count() != count) {
    return absl::InvalidArgumentError(absl::StrCat("the module has replica_count=",
                                                   module.replica_count(), " but runs on ",
                                                   count, " replicas"));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<Literal>> RunReplicated(
    const runtime::Executable& executable, absl::Span<const std::vector<Literal>> arguments,
    HostQueues* queues) {
  const int64_t count = static_cast<int64_t>(arguments.size());
  XJIT_RETURN_IF_ERROR(CheckReplicaCount(executable, count));
  std::vector<std::optional<Literal>> results(count);
  XJIT_RETURN_IF_ERROR(RunReplicas(
      count, queues, [&](int64_t r, const runtime::RunContext& context) -> absl::Status {
        std::vector<const Literal*> pointers;
        for (const Literal& argument : arguments[r]) pointers.push_back(&argument);
        XJIT_ASSIGN_OR_RETURN(Literal result, executable.Run(pointers, context));
        results[r] = std::move(result);
        return absl::OkStatus();
      }));
  std::vector<Literal> values;
  for (std::optional<Literal>& result : results) values.push_back(std::move(*result));
  return values;
}

}  // namespace xjit::collectives
