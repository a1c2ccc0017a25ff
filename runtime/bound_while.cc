// RunBoundWhile: a while loop over bound steps (see bound_while.h).
#include "runtime/bound_while.h"

#include <cstdint>

#include "absl/strings/str_format.h"
#include "runtime/host/interrupt.h"

namespace xjit::runtime {

absl::Status RunBoundWhile(absl::Span<const BoundPhase> phases, int64_t max_iterations,
                           absl::string_view name, int64_t* iterations) {
  const size_t phase_count = phases.size();
  size_t phase = 0;
  for (int64_t iteration = 0;; ++iteration) {
    // CheckInterrupt builds a status even when it is OK; the flag alone is
    // one load.
    if (InterruptRequested()) return CheckInterrupt();
    const BoundPhase& current = phases[phase];
    current.condition->Run();
    if (*current.predicate == 0) {
      *iterations = iteration;
      return absl::OkStatus();
    }
    if (max_iterations >= 0 && iteration >= max_iterations) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "while loop %s ran more than %d iterations", name, max_iterations));
    }
    current.body->Run();
    if (++phase == phase_count) phase = 0;
  }
}

}  // namespace xjit::runtime
