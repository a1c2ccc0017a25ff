// RunBoundWhile: a while loop over bound steps (see bound_while.h).
#include "runtime/bound_while.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <memory>
#include <new>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "runtime/host/interrupt.h"

namespace xjit::runtime {
namespace {

// How often the loop looks at the interrupt flag. The look is a call into
// another library: 1.8 ns of a scalar loop's 7.7 ns per iteration
// (BM_ScalarWhile/trips:100000/bound:1), so a light loop looks once per
// kInterruptInterval iterations, at most, and at least once per
// kInterruptBytes of buffer traffic, so that an interrupt waits for about
// as much work as one iteration of a loop of 64 KiB arrays (microseconds).
// A loop that calls a library routine or runs a nested loop (whose work its
// bytes do not bound) looks every iteration.
constexpr int64_t kInterruptBytes = int64_t{64} << 10;
constexpr int64_t kInterruptInterval = 1024;

int64_t InterruptInterval(absl::Span<const BoundPhase> phases) {
  int64_t bytes = 1;
  for (const BoundPhase& phase : phases) {
    if (phase.condition->has_unbounded_step() || phase.body->has_unbounded_step()) return 1;
    bytes = std::max(bytes, phase.condition->bytes_touched() + phase.body->bytes_touched());
  }
  return std::clamp<int64_t>(kInterruptBytes / bytes, 1, kInterruptInterval);
}

absl::Status TooManyIterations(absl::string_view name, int64_t max_iterations) {
  return absl::ResourceExhaustedError(
      absl::StrFormat("while loop %s ran more than %d iterations", name, max_iterations));
}

// Runs the rest of the loop, from `iteration`, as native code.
absl::Status RunNative(const NativeLoop& loop, int64_t iteration, int64_t max_iterations,
                       absl::string_view name, int64_t* iterations) {
  NativeLoopFrame frame;
  frame.iteration = iteration;
  loop.function(&frame);
  switch (frame.exit) {
    case NativeLoopExit::kDone:
      *iterations = frame.iteration;
      return absl::OkStatus();
    case NativeLoopExit::kInterrupted:
      return absl::CancelledError("interrupted");
    case NativeLoopExit::kTooMany:
      return TooManyIterations(name, max_iterations);
    case NativeLoopExit::kFailed:
      return *frame.failed;
  }
  return absl::InternalError(absl::StrCat("while loop ", name, ": bad native exit"));
}

// Emits the loop's code unless it has been emitted or refused; whether
// there is code to run.
bool EnsureNative(absl::Span<const BoundPhase> phases, int64_t max_iterations,
                  NativeLoopState& native) {
  if (native.loop.function != nullptr) return true;
  if (native.refused) return false;
  absl::StatusOr<NativeLoop> loop = native.emit(phases, max_iterations);
  if (!loop.ok() || loop->function == nullptr) {
    // The bound steps run the loop as well: an emitter's failure costs
    // speed, never the run.
    native.refused = true;
    return false;
  }
  native.loop = *std::move(loop);
  return true;
}

}  // namespace

absl::Status RunBoundWhile(absl::Span<const BoundPhase> phases, int64_t max_iterations,
                           absl::string_view name, int64_t* iterations, NativeLoopState* native) {
  const size_t phase_count = phases.size();
  // Code already emitted runs the loop from the start (an inner loop is
  // entered once per outer iteration: nothing else is done per entry).
  if (native != nullptr && native->loop.function != nullptr) {
    native->last_native = true;
    return RunNative(native->loop, 0, max_iterations, name, iterations);
  }
  // Iterations over bound steps before the switch to native code (never:
  // the largest count).
  int64_t until_native = std::numeric_limits<int64_t>::max();
  if (native != nullptr) {
    native->last_native = false;
    if (native->emit != nullptr && !native->refused) {
      until_native = std::max<int64_t>(native->after - native->stepped, 0);
    }
  }
  size_t phase = 0;
  const int64_t interval = InterruptInterval(phases);
  // Counts down to the next look; the first is before the first iteration.
  int64_t until_check = 0;
  int64_t iteration = 0;
  bool switched = false;
  const absl::Status status = [&]() -> absl::Status {
    for (;; ++iteration) {
      if (--until_native < 0) {
        if (EnsureNative(phases, max_iterations, *native)) {
          switched = true;
          return absl::OkStatus();
        }
        // Refused: on over bound steps.
        until_native = std::numeric_limits<int64_t>::max();
      }
      if (--until_check < 0) {
        // CheckInterrupt builds a status even when it is OK; the flag alone
        // is one load.
        if (InterruptRequested()) return CheckInterrupt();
        until_check = interval - 1;
      }
      const BoundPhase& current = phases[phase];
      if (const absl::Status* failed = current.condition->Run()) return *failed;
      if (*current.predicate == 0) return absl::OkStatus();
      if (max_iterations >= 0 && iteration >= max_iterations) {
        return TooManyIterations(name, max_iterations);
      }
      if (const absl::Status* failed = current.body->Run()) return *failed;
      if (++phase == phase_count) phase = 0;
    }
  }();
  if (switched) {
    native->last_native = true;
    return RunNative(native->loop, iteration, max_iterations, name, iterations);
  }
  // Counted whether the loop ended or failed: work done over bound steps.
  if (native != nullptr) native->stepped += iteration;
  if (status.ok()) *iterations = iteration;
  return status;
}

bool BoundFlatWhile::Bind(const Executable& condition, const Executable& body,
                          int64_t state_bytes) {
  const bool in_place = body.state_in_place();
  phase_count_ = in_place ? 1 : 2;
  const auto allocate = [](int64_t bytes) {
    return std::unique_ptr<uint8_t[]>(
        new (std::nothrow) uint8_t[static_cast<size_t>(std::max<int64_t>(bytes, 1))]);
  };
  native_ = NativeLoopState();
  native_.emit = body.shared_spec()->emit_native_loop;
  native_.after = body.shared_spec()->native_loop_after;
  for (size_t p = 0; p < phase_count_; ++p) {
    buffers_[p] = allocate(state_bytes);
    if (buffers_[p] == nullptr) return false;
  }
  condition_arena_ = allocate(condition.arena_bytes());
  body_arena_ = allocate(body.arena_bytes());
  if (condition_arena_ == nullptr || body_arena_ == nullptr) return false;
  for (size_t p = 0; p < phase_count_; ++p) {
    const void* parameter = buffers_[p].get();
    BindBuffers condition_buffers;
    condition_buffers.parameters = {&parameter, 1};
    condition_buffers.result = &keep_going_;
    condition_buffers.arena = condition_arena_.get();
    BindBuffers body_buffers;
    body_buffers.parameters = {&parameter, 1};
    body_buffers.result = in_place ? buffers_[0].get() : buffers_[1 - p].get();
    body_buffers.arena = body_arena_.get();
    if (!conditions_[p].Bind(condition, condition_buffers) ||
        !bodies_[p].Bind(body, body_buffers)) {
      return false;
    }
    phases_[p] = BoundPhase{&conditions_[p], &keep_going_, &bodies_[p]};
  }
  return true;
}

absl::Status BoundFlatWhile::Run(int64_t max_iterations, absl::string_view name) {
  int64_t iterations = 0;
  const absl::Status status = RunBoundWhile(absl::MakeConstSpan(phases_, phase_count_),
                                            max_iterations, name, &iterations, &native_);
  // After an odd number of iterations of a swapping loop the last body
  // wrote the second buffer.
  final_state_ = buffers_[phase_count_ == 2 && iterations % 2 == 1 ? 1 : 0].get();
  return status;
}

}  // namespace xjit::runtime
