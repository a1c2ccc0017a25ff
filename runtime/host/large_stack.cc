#include "runtime/host/large_stack.h"

#include <pthread.h>

#include <algorithm>
#include <cstring>
#include <exception>

#include "absl/container/flat_hash_map.h"

#include "absl/strings/str_cat.h"

namespace xjit {
namespace {

struct Work {
  absl::FunctionRef<void()> body;
  std::exception_ptr error;
};

thread_local bool on_large_stack = false;

void* RunWork(void* arg) {
  Work* work = static_cast<Work*>(arg);
  on_large_stack = true;
  // An exception must not leave a thread's start routine (that terminates
  // the process): it is carried back to the caller.
  try {
    work->body();
  } catch (...) {
    work->error = std::current_exception();
  }
  return nullptr;
}

// Nesting up to this depth runs on any caller's stack: each level takes a few
// KiB in an optimized build and a few tens of KiB under AddressSanitizer.
constexpr int kShallowDepth = 16;

// The call depth below `computation` (itself included), capped at
// kShallowDepth + 1, memoized in `depth`; `level` is its own depth below the
// entry. The recursion stops at the cap, so it stays shallow whatever the
// module (a recursive, unverified one included): any path that reaches the
// cap means the entry is deep, which is all the caller asks.
int Depth(const Computation* computation, int level,
          absl::flat_hash_map<const Computation*, int>* depth) {
  constexpr int kCap = kShallowDepth + 1;
  if (level >= kCap) return kCap;
  if (auto it = depth->find(computation); it != depth->end()) return it->second;
  int result = 1;
  for (const auto& instruction : computation->instructions()) {
    for (const Computation* callee : instruction->called_computations()) {
      if (callee == nullptr) continue;
      result = std::min(kCap, std::max(result, Depth(callee, level + 1, depth) + 1));
    }
  }
  (*depth)[computation] = result;
  return result;
}

}  // namespace

bool OnLargeStack() { return on_large_stack; }

bool NeedsLargeStack(const Module& module) {
  if (module.entry() == nullptr) return false;
  absl::flat_hash_map<const Computation*, int> depth;
  return Depth(module.entry(), 1, &depth) > kShallowDepth;
}

absl::Status RunOnLargeStack(absl::FunctionRef<void()> body, size_t stack_bytes) {
  pthread_attr_t attr;
  if (int error = pthread_attr_init(&attr); error != 0) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot start a thread: ", std::strerror(error)));
  }
  Work work{body, nullptr};
  pthread_t thread;
  int error = pthread_attr_setstacksize(&attr, stack_bytes);
  if (error == 0) error = pthread_create(&thread, &attr, &RunWork, &work);
  pthread_attr_destroy(&attr);
  if (error != 0) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot start a thread with a ",
                                                     stack_bytes >> 20, " MiB stack: ",
                                                     std::strerror(error)));
  }
  pthread_join(thread, nullptr);
  if (work.error) std::rethrow_exception(work.error);
  return absl::OkStatus();
}

}  // namespace xjit
