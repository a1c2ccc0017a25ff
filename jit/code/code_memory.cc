// CodeMemory (see code_memory.h).
#include "jit/code/code_memory.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace xjit::jit {

CodeMemory::~CodeMemory() {
  for (const auto& [address, size] : mappings_) munmap(address, size);
}

absl::StatusOr<const void*> CodeMemory::Install(
    size_t size, absl::FunctionRef<absl::Status(void* address)> write) {
  if (size == 0) return absl::InvalidArgumentError("no code to install");
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const size_t mapped = (size + page - 1) / page * page;
  void* address = mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (address == MAP_FAILED) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot map ", mapped, " bytes for code: ", std::strerror(errno)));
  }
  absl::Status written = write(address);
  if (!written.ok()) {
    munmap(address, mapped);
    return written;
  }
  // Instruction caches that do not snoop data writes (AArch64) must see the
  // new code; on x86-64 this compiles to nothing.
  __builtin___clear_cache(static_cast<char*>(address), static_cast<char*>(address) + size);
  if (mprotect(address, mapped, PROT_READ | PROT_EXEC) != 0) {
    const int error = errno;
    munmap(address, mapped);
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot make code executable: ", std::strerror(error)));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  mappings_.emplace_back(address, mapped);
  return static_cast<const void*>(address);
}

}  // namespace xjit::jit
