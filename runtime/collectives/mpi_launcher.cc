// StartedByMpiLauncher (mpi_process.h): compiled with and without MPI, so
// that a build without MPI recognises mpirun and says what is missing.
#include <cstdlib>

#include "runtime/collectives/mpi_process.h"

namespace xjit::collectives {

bool StartedByMpiLauncher() {
  // Open MPI's mpirun, PMIx launchers (Open MPI 5, Slurm), MPICH's hydra.
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    if (std::getenv(name) != nullptr) return true;
  }
  return false;
}

}  // namespace xjit::collectives
