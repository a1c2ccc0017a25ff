// Out of memory as a status on threads of xjit's own: a std::bad_alloc that
// leaves a thread's function ends the process (std::terminate), so the
// functions that replica threads run go through StatusOnOutOfMemory, which
// turns it into ResourceExhausted like the main thread's allocations
// (docs/limits.md: an allocation that fails is an error, not an abort).
#ifndef XJIT_RUNTIME_HOST_OUT_OF_MEMORY_H_
#define XJIT_RUNTIME_HOST_OUT_OF_MEMORY_H_

#include <new>
#include <utility>

#include "absl/status/status.h"

namespace xjit {

// fn() (an absl::Status or absl::StatusOr), or ResourceExhausted "out of
// memory" when it throws std::bad_alloc (callers name the thread).
template <typename Fn>
auto StatusOnOutOfMemory(Fn&& fn) -> decltype(fn()) {
  try {
    return std::forward<Fn>(fn)();
  } catch (const std::bad_alloc&) {
    return absl::ResourceExhaustedError("out of memory");
  }
}

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_OUT_OF_MEMORY_H_
