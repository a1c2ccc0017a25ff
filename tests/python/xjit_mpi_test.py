"""xjit.MpiCommunicator and Executable.execute_mpi (issue 29): two MPI ranks
run the replicas of an all-reduce and compare with execute_replicated.

The test starts itself under `mpirun -np 2` (with XJIT_MPI_WORKER=1); each
rank initialises MPI through mpi4py when it is installed, else through
Open MPI's libmpi with ctypes. Skips (exit 77) where mpirun, libmpi or
libxjit_mpi.so is missing."""
import ctypes
import ctypes.util
import os
import shutil
import subprocess
import sys

import numpy as np

import xjit

ALL_REDUCE = """
HloModule allreduce, replica_count=2
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}
ENTRY e {
  a = f32[5] parameter(0)
  s = f32[5] all-reduce(a), replica_groups={}, to_apply=add
  id = u32[] replica-id()
  ROOT t = (f32[5], u32[]) tuple(s, id)
}
"""


def world_communicator():
    """(Fortran handle of MPI_COMM_WORLD, finalize function)."""
    try:
        from mpi4py import MPI
        return MPI.COMM_WORLD.py2f(), lambda: None
    except ImportError:
        pass
    libmpi = ctypes.CDLL(ctypes.util.find_library("mpi") or "libmpi.so.40",
                         mode=ctypes.RTLD_GLOBAL)
    libmpi.MPI_Init(None, None)
    # Open MPI's MPI_COMM_WORLD is the address of this object.
    world = ctypes.addressof(ctypes.c_char.in_dll(libmpi, "ompi_mpi_comm_world"))
    libmpi.MPI_Comm_c2f.argtypes = [ctypes.c_void_p]
    libmpi.MPI_Comm_c2f.restype = ctypes.c_int
    return libmpi.MPI_Comm_c2f(world), libmpi.MPI_Finalize


def worker():
    handle, finalize = world_communicator()
    f = xjit.compile(ALL_REDUCE)
    inputs = [np.arange(5, dtype=np.float32), np.float32([10, 20, 30, 40, 50])]
    with xjit.MpiCommunicator(handle, timeout=60) as communicator:
        rank = communicator.rank
        assert communicator.size == 2, communicator.size
        s, replica = f.execute_mpi(communicator, inputs[rank])
        want = f.execute_replicated([(x,) for x in inputs])[rank]
        np.testing.assert_array_equal(s, want[0])
        assert int(replica) == rank
        # out= as for a call.
        out = (np.empty(5, np.float32), np.empty((), np.uint32))
        f.execute_mpi(communicator, inputs[rank], out=out)
        np.testing.assert_array_equal(out[0], want[0])
    print(f"rank {rank}: ok", flush=True)
    finalize()


def main():
    mpirun = shutil.which("mpirun")
    if mpirun is None:
        print("SKIP: mpirun not found")
        return 77
    library = xjit.library_path()
    if not os.path.exists(os.path.join(os.path.dirname(library), "libxjit_mpi.so")):
        print(f"SKIP: no libxjit_mpi.so beside {library}")
        return 77
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        if ctypes.util.find_library("mpi") is None:
            print("SKIP: neither mpi4py nor libmpi")
            return 77
    env = dict(os.environ, XJIT_MPI_WORKER="1", OMPI_ALLOW_RUN_AS_ROOT="1",
               OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_btl="self,vader",
               OMPI_MCA_btl_vader_single_copy_mechanism="none")
    run = subprocess.run([mpirun, "--oversubscribe", "-np", "2", sys.executable,
                          os.path.abspath(__file__)], env=env, timeout=300,
                         capture_output=True, text=True)
    print(run.stdout)
    print(run.stderr, file=sys.stderr)
    if run.returncode != 0 or run.stdout.count(": ok") != 2:
        print(f"FAIL: mpirun exited {run.returncode}")
        return 1
    return 0


if __name__ == "__main__":
    if os.environ.get("XJIT_MPI_WORKER") == "1":
        worker()
    else:
        sys.exit(main())
