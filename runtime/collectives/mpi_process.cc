// The command line's MPI process (see mpi_process.h). Built only with MPI.
#include "runtime/collectives/mpi_process.h"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <vector>

#include "absl/strings/str_cat.h"

namespace xjit::collectives {

absl::StatusOr<std::unique_ptr<MpiProcess>> MpiProcess::Init() {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (initialized) return absl::FailedPreconditionError("MPI is already initialised");
  int provided = 0;
  if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_SERIALIZED, &provided) != MPI_SUCCESS) {
    return absl::UnavailableError("MPI_Init_thread failed");
  }
  std::unique_ptr<MpiProcess> process(new MpiProcess());
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  process->rank_ = rank;
  process->size_ = size;
  process->world_handle_ = MPI_Comm_c2f(MPI_COMM_WORLD);
  if (provided < MPI_THREAD_SERIALIZED) {
    return absl::UnavailableError("the MPI library does not provide MPI_THREAD_SERIALIZED");
  }
  return process;
}

MpiProcess::~MpiProcess() { MPI_Finalize(); }

absl::Status MpiProcess::Agree(const absl::Status& mine) {
  // The lowest failing rank (size_ when none) tells the others its error.
  int candidate = mine.ok() ? static_cast<int>(size_) : static_cast<int>(rank_);
  int failed = 0;
  MPI_Allreduce(&candidate, &failed, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (failed == size_) return absl::OkStatus();
  int code = static_cast<int>(mine.code());
  std::string message(mine.message());
  int length = static_cast<int>(std::min<size_t>(message.size(), 1 << 20));
  MPI_Bcast(&code, 1, MPI_INT, failed, MPI_COMM_WORLD);
  MPI_Bcast(&length, 1, MPI_INT, failed, MPI_COMM_WORLD);
  message.resize(length);
  MPI_Bcast(message.data(), length, MPI_CHAR, failed, MPI_COMM_WORLD);
  return absl::Status(static_cast<absl::StatusCode>(code),
                      absl::StrCat("replica ", failed, ": ", message));
}

absl::StatusOr<std::string> MpiProcess::GatherText(const std::string& mine) {
  // Every rank learns the total first, so that all refuse alike.
  int64_t length = static_cast<int64_t>(mine.size()), total = 0;
  MPI_Allreduce(&length, &total, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
  if (total > INT_MAX) {
    return absl::ResourceExhaustedError("the replicas' printed results exceed 2 GiB (use --out)");
  }
  const int mine_length = static_cast<int>(length);
  std::vector<int> lengths(rank_ == 0 ? size_ : 0), offsets(lengths.size());
  MPI_Gather(&mine_length, 1, MPI_INT, lengths.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int offset = 0;
  for (size_t r = 0; r < lengths.size(); ++r) {
    offsets[r] = offset;
    offset += lengths[r];
  }
  std::string all(rank_ == 0 ? static_cast<size_t>(total) : 0, '\0');
  MPI_Gatherv(mine.data(), mine_length, MPI_CHAR, all.data(), lengths.data(), offsets.data(),
              MPI_CHAR, 0, MPI_COMM_WORLD);
  return all;
}

void MpiProcess::Abort(int code) {
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);  // MPI_Abort does not return; in case it does.
}

}  // namespace xjit::collectives
