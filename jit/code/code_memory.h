// CodeMemory: the pages that hold a target's machine code, kept W^X.
//
// A page is never writable and executable at once: Install maps fresh
// read-write pages, lets the caller write (and relocate) the code into them,
// then makes them read-execute for good. Nothing ever writes to them again;
// the pages are unmapped when the CodeMemory is destroyed. Each piece of code
// gets pages of its own (kernels are small; a page or two each), so that no
// page that already holds running code is ever made writable.
//
// Target independent: a target (jit/x64/, jit/a64/) hands Install a callback
// that copies its assembler's output to the address it is given.
#ifndef XJIT_JIT_CODE_MEMORY_H_
#define XJIT_JIT_CODE_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <utility>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xjit::jit {

class CodeMemory {
 public:
  CodeMemory() = default;
  CodeMemory(const CodeMemory&) = delete;
  CodeMemory& operator=(const CodeMemory&) = delete;
  ~CodeMemory();

  // Maps `size` bytes read-write, calls `write(address)` to fill them (the
  // code must be relocated to `address`), then makes them read-execute and
  // returns the address. ResourceExhausted when mapping fails; write's error
  // is returned as is (the pages are unmapped).
  absl::StatusOr<const void*> Install(size_t size,
                                      absl::FunctionRef<absl::Status(void* address)> write);

 private:
  std::mutex mutex_;
  std::vector<std::pair<void*, size_t>> mappings_;
};

}  // namespace xjit::jit

#endif  // XJIT_JIT_CODE_MEMORY_H_
