// MpiCommunicator: the Communicator (communicator.h) of a replica that is a
// process of an MPI job: rank r of the communicator it is given runs
// replica r. The MPI counterpart of InProcessCommunicator; the compiled
// program and the evaluator do not change (docs/mpi.md).
//
// This header does not include mpi.h: the communicator arrives as its
// Fortran handle (MPI_Comm_c2f), so that the command line, the C API
// (xjit.h) and builds without MPI compile against it. Without MPI (meson
// found none) MakeMpiCommunicator fails with Unimplemented.
//
// Mapping (mpi_communicator.cc):
//   - xjit duplicates the given communicator, so its messages never match
//     the application's; a replica group other than every rank in order
//     gets its own communicator (MPI_Comm_create_group, ranks in group
//     order), created at the group's first collective and cached;
//   - AllGather is MPI_Allgather;
//   - AllReduce on integers and pred is MPI_Allreduce (exact in any order);
//     on f32/f64 xjit fixes the order itself so that the bits do not depend
//     on the MPI library's algorithm or on rank placement: member j
//     receives block j of everyone's array (point to point, in segments),
//     folds it in group order f(...f(f(v0, v1), v2)..., vn) exactly as
//     FoldInGroupOrder (and the in-process transport) does, and the folded
//     blocks are all-gathered;
//   - Send/Recv (point to point: HLO send/recv between replicas) are
//     MPI_Isend of a copy (Send never waits) and a matched probe then
//     receive (MPI_Mprobe/MPI_Mrecv: a message of another size is consumed
//     and reported), on a second duplicate of the communicator so that they
//     never match the all-reduce's own messages; tags must lie within the
//     MPI library's MPI_TAG_UB (at least 32767);
//   - before each collective the members exchange a small header (the
//     instruction, how often this replica reached it, the byte count), so
//     replicas that reach different collectives fail with FailedPrecondition
//     instead of mixing their data; ProgramDone and Leave send such headers
//     to every rank at the end of a run and of the last run, so a rank
//     still waiting for a finished one fails at once. Headers go point to
//     point on a third duplicate of the communicator, whatever the group,
//     so the end of a run reaches a rank waiting in a subgroup collective
//     too; a group's communicator is created after its members agree.
// A collective waits at most `timeout_seconds` (when > 0) for the others
// and then fails with DeadlineExceeded; the communicator is then broken
// (its unfinished MPI operations cannot be cancelled) and every later call
// fails. The creation of a group's communicator waits without a limit.
//
// Threads: one replica's collectives run one at a time, on the thread that
// runs its program (or the large-stack thread of a deeply nested module):
// MPI must be initialised with at least MPI_THREAD_SERIALIZED for the
// latter.
#ifndef XJIT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_
#define XJIT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"

namespace xjit::collectives {

// Whether this build of xjit has MPI.
bool MpiAvailable();

struct MpiOptions {
  // Longest wait of one collective for the other replicas; <= 0: no limit.
  double timeout_seconds = 0;
};

// A communicator whose replica r is rank r of the MPI communicator with
// Fortran handle `fortran_handle` (MPI_Comm_c2f; its size is the replica
// count). MPI must be initialised, and stay so until the result is
// destroyed.
absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(int64_t fortran_handle,
                                                                  const MpiOptions& options = {});

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_MPI_COMMUNICATOR_H_
