#!/bin/bash
# Runs PROGRAM under `mpirun --oversubscribe -np NP` for a meson test, with
# the environment Open MPI needs to run as root set for this run only; exits
# 77 (skip) with a message when mpirun is absent.
#   run_mpi.sh NP PROGRAM [ARGS...]
set -uo pipefail
np=$1
shift
if ! command -v mpirun >/dev/null 2>&1; then
  echo "SKIP: mpirun not found (Debian: apt-get install openmpi-bin)"
  exit 77
fi
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One machine: shared memory only (no network interfaces probed), and no
# single-copy (CMA needs ptrace rights that containers often withhold).
export OMPI_MCA_btl=self,vader OMPI_MCA_btl_vader_single_copy_mechanism=none
exec timeout 600 mpirun --oversubscribe -np "$np" "$@"
