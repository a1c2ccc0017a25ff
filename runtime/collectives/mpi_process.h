// MpiProcess: the xjit command line as one rank of an MPI job
// (`mpirun -np N xjit run M.hlo ... --replicas N`, docs/mpi.md). It owns
// MPI_Init/MPI_Finalize for the process and gives the run its world
// communicator, plus what the command needs around the run itself:
//   - Agree: an error-propagating barrier, so that a rank that fails before
//     the run (an unreadable argument file, a compile error) makes every
//     rank exit with that error instead of leaving them waiting;
//   - GatherText: rank 0 prints every replica's results in order;
//   - Abort: a failure during the run (others may wait in a collective
//     that will never complete) ends the whole job (MPI_Abort).
// Like mpi_communicator.h it does not include mpi.h; without MPI, Init
// fails with Unimplemented.
#ifndef XJIT_RUNTIME_COLLECTIVES_MPI_PROCESS_H_
#define XJIT_RUNTIME_COLLECTIVES_MPI_PROCESS_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xjit::collectives {

// Whether an MPI launcher (mpirun, mpiexec, srun with PMI/PMIx) started this
// process: its environment names a rank.
bool StartedByMpiLauncher();

class MpiProcess {
 public:
  // MPI_Init_thread (MPI_THREAD_SERIALIZED: a deeply nested module runs on
  // a thread of its own). One per process.
  static absl::StatusOr<std::unique_ptr<MpiProcess>> Init();
  ~MpiProcess();  // MPI_Finalize.
  MpiProcess(const MpiProcess&) = delete;
  MpiProcess& operator=(const MpiProcess&) = delete;

  int64_t rank() const { return rank_; }
  int64_t size() const { return size_; }
  // MPI_COMM_WORLD's Fortran handle, for MakeMpiCommunicator.
  int64_t world_handle() const { return world_handle_; }

  // Every rank passes its status; all get OK if every one was OK, otherwise
  // the lowest failing rank's error, prefixed "replica R: ".
  absl::Status Agree(const absl::Status& mine);

  // Rank 0 gets every rank's `mine` concatenated in rank order; the others
  // an empty string.
  absl::StatusOr<std::string> GatherText(const std::string& mine);

  // Ends every rank of the job with exit status `code`.
  [[noreturn]] void Abort(int code);

 private:
  MpiProcess() = default;
  int64_t rank_ = 0;
  int64_t size_ = 1;
  int64_t world_handle_ = 0;
};

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_MPI_PROCESS_H_
