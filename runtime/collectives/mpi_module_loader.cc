// MpiAvailable and MakeMpiCommunicator (mpi_communicator.h) for libxjit.so
// and libxjit.a: instead of calling MPI, they load the MPI transport from
// libxjit_mpi.so (mpi_module.h) on first use and forward to it, so that the
// library needs no MPI until a program runs replicas as MPI processes
// (xjit_execute_mpi). The module is looked for beside the object this code
// is in (dladdr: libxjit.so's directory, as installed or in the build tree),
// then through the dynamic loader's own search (LD_LIBRARY_PATH, the cache).
// It is loaded once per process and never unloaded (communicators made by it
// may outlive any caller); a failure is remembered and returned to every
// later call, with dlerror's text, so the user sees why.
#include <dlfcn.h>
#include <unistd.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "runtime/collectives/mpi_module.h"

namespace xjit::collectives {
namespace {

struct LoadedModule {
  const MpiModule* module = nullptr;  // null when loading failed
  absl::Status error;                 // why, when it failed
};

// The directory (with a trailing '/') of the object that contains this code,
// or "" when the dynamic loader does not say (a static executable).
std::string OwnDirectory() {
  static const char kAnchor = 0;
  Dl_info info;
  if (dladdr(&kAnchor, &info) == 0 || info.dli_fname == nullptr) return "";
  const std::string path = info.dli_fname;
  const size_t slash = path.rfind('/');
  return slash == std::string::npos ? "" : path.substr(0, slash + 1);
}

std::string LastDlError() {
  const char* error = dlerror();
  return error != nullptr ? error : "unknown error";
}

LoadedModule Load() {
  // RTLD_GLOBAL: Open MPI's own components (which libmpi loads with dlopen)
  // expect libmpi's symbols in the global scope; the module itself exports
  // only kMpiModuleEntry (lib/libxjit_mpi.map).
  constexpr int kFlags = RTLD_NOW | RTLD_GLOBAL;
  const std::string beside = OwnDirectory().empty() ? "" : OwnDirectory() + kMpiModuleFileName;
  void* handle = nullptr;
  std::string error;
  if (!beside.empty() && access(beside.c_str(), F_OK) == 0) {
    // It is there: its own failure (say, libmpi.so.40 missing) is the one
    // to report.
    handle = dlopen(beside.c_str(), kFlags);
    if (handle == nullptr) error = LastDlError();
  } else {
    handle = dlopen(kMpiModuleFileName, kFlags);
    if (handle == nullptr) {
      error = LastDlError();
      if (!beside.empty()) absl::StrAppend(&error, " (nor is it at ", beside, ")");
    }
  }
  if (handle == nullptr) {
    return {nullptr, absl::FailedPreconditionError(absl::StrCat(
                         "cannot load ", kMpiModuleFileName, ": ", error,
                         "; replicas as MPI processes need it (and Open MPI) installed beside "
                         "libxjit.so (docs/library.md)"))};
  }
  using Entry = const MpiModule* (*)();
  auto entry = reinterpret_cast<Entry>(dlsym(handle, kMpiModuleEntry));
  if (entry == nullptr) {
    return {nullptr, absl::FailedPreconditionError(absl::StrCat(
                         kMpiModuleFileName, " has no ", kMpiModuleEntry, ": ", LastDlError()))};
  }
  const MpiModule* module = entry();
  if (module == nullptr || module->abi_version != kMpiModuleAbiVersion ||
      std::string(module->project_version) != XJIT_PROJECT_VERSION) {
    return {nullptr,
            absl::FailedPreconditionError(absl::StrCat(
                kMpiModuleFileName, " is from another build of xjit (",
                module == nullptr ? "no version" : module->project_version, ", module ABI ",
                module == nullptr ? 0 : module->abi_version, ") than libxjit ",
                XJIT_PROJECT_VERSION, " (module ABI ", kMpiModuleAbiVersion,
                "); install the two from one build"))};
  }
  return {module, absl::OkStatus()};
}

const LoadedModule& Module() {
  static const LoadedModule* const loaded = new LoadedModule(Load());
  return *loaded;
}

}  // namespace

bool MpiAvailable() { return Module().module != nullptr; }

absl::StatusOr<std::unique_ptr<Communicator>> MakeMpiCommunicator(int64_t fortran_handle,
                                                                  const MpiOptions& options) {
  const LoadedModule& loaded = Module();
  if (loaded.module == nullptr) return loaded.error;
  return loaded.module->make_communicator(fortran_handle, options);
}

}  // namespace xjit::collectives
