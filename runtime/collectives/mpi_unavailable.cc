// Stand-ins for mpi_communicator.h and mpi_process.h in a build without MPI
// (meson found no MPI library): every entry point says so.
#include <cstdlib>

#include "runtime/collectives/mpi_communicator.h"
#include "runtime/collectives/mpi_process.h"

namespace xjit::collectives {
namespace {

absl::Status NoMpi() {
  return absl::UnimplementedError(
      "this xjit was built without MPI (install libopenmpi-dev and reconfigure; docs/mpi.md)");
}

}  // namespace

bool MpiAvailable() { return false; }

absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(int64_t, const MpiOptions&) {
  return NoMpi();
}

absl::StatusOr<std::unique_ptr<MpiProcess>> MpiProcess::Init() { return NoMpi(); }
MpiProcess::~MpiProcess() = default;
absl::Status MpiProcess::Agree(const absl::Status& mine) { return mine; }
absl::StatusOr<std::string> MpiProcess::GatherText(const std::string& mine) { return mine; }
void MpiProcess::Abort(int code) { std::_Exit(code); }

}  // namespace xjit::collectives
