// The interrupt flag (see interrupt.h).
#include "runtime/host/interrupt.h"

#include <atomic>

namespace xjit {
namespace {

std::atomic<bool> interrupt_requested{false};
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");
// Emitted code reads it as one byte.
static_assert(sizeof(std::atomic<bool>) == 1);

}  // namespace

void RequestInterrupt() { interrupt_requested.store(true, std::memory_order_relaxed); }

void ClearInterrupt() { interrupt_requested.store(false, std::memory_order_relaxed); }

bool InterruptRequested() { return interrupt_requested.load(std::memory_order_relaxed); }

const void* InterruptFlagAddress() { return &interrupt_requested; }

absl::Status CheckInterrupt() {
  return InterruptRequested() ? absl::CancelledError("interrupted") : absl::OkStatus();
}

}  // namespace xjit
