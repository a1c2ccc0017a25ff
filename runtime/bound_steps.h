// BoundSteps: an executable's steps with every buffer address resolved once,
// for a caller that runs the same executable many times over the same
// buffers — a while loop's condition and body, whose state leaves, arenas
// and constants do not move from one iteration to the next.
//
// Contract. Bind succeeds only when no step needs a decision at run time:
//   - a kKernel step that RunKernel would run on the calling thread as one
//     call (internal::KernelRunsUnsplit, decided here from the executable's
//     threads and parallel_min_bytes, exactly as RunKernel decides it);
//   - a kCopy step;
//   - a kLibraryCall step whose routine needs no RunContext (no status, no
//     collectives) and whose buffers all lie at addresses aligned to their
//     elements (RunFrame would stage a misaligned one through a heap copy).
// Any other step (interpreted, kWhile, kConditional, kRowGroup, a threaded
// kernel, a context routine) makes Bind return false, and the caller runs
// the executable step by step. Guard-page mode (XJIT_GUARD_PAGES) is the
// caller's to check: there every kernel must run on guarded copies.
// After a successful Bind, Run() does what RunFrame does for those buffers
// — the same calls with the same addresses in the same order — with no
// status, allocation, lookup or dispatch beyond one switch per step. The
// addresses stay valid while the executable and the buffers given to Bind
// live and stay where they are.
#ifndef XJIT_RUNTIME_BOUND_STEPS_H_
#define XJIT_RUNTIME_BOUND_STEPS_H_

#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/types/span.h"
#include "runtime/executable.h"

namespace xjit::runtime {

// The buffers of the runs to bind, as Execute or ExecuteOnLeaves takes them:
// either `parameters` (flat, as Execute) or `leaves` (parameter 0 leaf by
// leaf, as ExecuteOnLeaves; then the executable must runs_on_leaves()).
// `result` as those calls take it; `arena` is arena_bytes() bytes.
struct BindBuffers {
  absl::Span<const void* const> parameters;
  absl::Span<void* const> leaves;
  void* result = nullptr;
  uint8_t* arena = nullptr;
};

class BoundSteps {
 public:
  // Resolves the addresses of every step of `executable` over `buffers`;
  // false (and nothing bound) when a step needs a decision at run time (see
  // above). Rebinding replaces what was bound.
  bool Bind(const Executable& executable, const BindBuffers& buffers);

  // Runs the bound steps once. Inline: a loop calls it per iteration.
  void Run() const {
    for (const Op& op : ops_) {
      switch (op.kind) {
        case Op::Kind::kKernel:
          op.kernel(op.addresses, 0, op.extent);
          break;
        case Op::Kind::kLibraryCall:
          op.library(op.plan, op.addresses, op.scratch);
          break;
        case Op::Kind::kCopy:
          // Overlapping ranges are possible (a copy onto itself): memmove,
          // as RunFrame.
          std::memmove(op.destination, op.source, op.bytes);
          break;
      }
    }
  }

  int64_t size() const { return static_cast<int64_t>(ops_.size()); }

 private:
  struct Op {
    enum class Kind : uint8_t { kKernel, kLibraryCall, kCopy };
    Kind kind = Kind::kKernel;
    // kKernel and kLibraryCall: inputs' then outputs' addresses (into
    // addresses_).
    void* const* addresses = nullptr;
    KernelFunction kernel = nullptr;
    int64_t extent = 1;
    LibraryFunction library = nullptr;
    const void* plan = nullptr;
    void* scratch = nullptr;
    // kCopy: never 0 bytes (such a copy is dropped at Bind).
    uint8_t* destination = nullptr;
    const uint8_t* source = nullptr;
    size_t bytes = 0;
  };
  std::vector<Op> ops_;
  std::vector<void*> addresses_;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_BOUND_STEPS_H_
