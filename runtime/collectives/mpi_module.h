// The MPI transport as a separately loaded module: libxjit.so and libxjit.a
// hold no MPI code, so that a program linking them loads without Open MPI
// (no libmpi in their NEEDED entries). MpiCommunicator and its MPI calls live
// in libxjit_mpi.so, installed beside libxjit.so; mpi_module_loader.cc
// implements MakeMpiCommunicator (mpi_communicator.h) by loading that module
// on first use (dlopen: beside the library that contains the loader, found
// through dladdr, then the loader's default search). The command line and
// in-tree tests link the transport directly (xjit_mpi_lib) and never load it.
//
// This header is the whole contract between the two: one extern "C" symbol,
// kMpiModuleEntry, returning a table of functions. The table passes C++
// types (absl::StatusOr, std::unique_ptr<Communicator>), so the module must
// come from the same build as the library that loads it; the loader refuses
// a module whose ABI version or project version differs, rather than call
// into code whose class layouts may not match.
#ifndef XJIT_RUNTIME_COLLECTIVES_MPI_MODULE_H_
#define XJIT_RUNTIME_COLLECTIVES_MPI_MODULE_H_

#include <cstdint>
#include <memory>

#include "absl/status/statusor.h"
#include "runtime/collectives/communicator.h"
#include "runtime/collectives/mpi_communicator.h"

namespace xjit::collectives {

// Bumped whenever MpiModule or a type it passes changes layout.
inline constexpr int kMpiModuleAbiVersion = 1;
// The module's file name, and the symbol the loader looks up in it.
inline constexpr char kMpiModuleFileName[] = "libxjit_mpi.so";
inline constexpr char kMpiModuleEntry[] = "xjit_mpi_module";

struct MpiModule {
  int abi_version;             // kMpiModuleAbiVersion of the module's build
  const char* project_version;  // meson's project version of the module's build
  // MakeMpiCommunicator of mpi_communicator.cc, inside the module.
  absl::StatusOr<std::unique_ptr<Communicator>> (*make_communicator)(int64_t fortran_handle,
                                                                     const MpiOptions& options);
};

}  // namespace xjit::collectives

// Defined by libxjit_mpi.so (mpi_module.cc): the module's table, never null.
extern "C" const xjit::collectives::MpiModule* xjit_mpi_module();

#endif  // XJIT_RUNTIME_COLLECTIVES_MPI_MODULE_H_
