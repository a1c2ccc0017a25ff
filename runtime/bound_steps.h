// BoundSteps: an executable's steps with every buffer address resolved once,
// for a caller that runs the same executable many times over the same
// buffers — a while loop's condition and body, whose state leaves, arenas
// and constants do not move from one iteration to the next.
//
// Contract. Bind succeeds only when no step needs a decision at run time:
//   - a kKernel step: one that RunKernel would run on the calling thread as
//     one call (internal::KernelSplitChunks, decided here from the
//     executable's threads and the step's estimated cost, exactly as
//     RunKernel decides it) as a kernel op; one it would split between threads as a
//     library-call op that splits it the same way (RunKernelSplit). A split
//     kernel used to refuse the binding, so a loop with one large kernel
//     ran step by step at 2 threads and bound at 1 (a least-squares
//     solver's loop ran 30% slower at 2 threads than at 1);
//   - a kCopy step;
//   - a kLibraryCall step whose routine needs no RunContext (no status, no
//     collectives); a buffer not aligned to its elements (a packed tuple
//     leaf) goes through an aligned buffer owned here, copied in before the
//     call and out after it, as RunFrame stages it per call;
//   - a kConditional step whose every branch binds: each branch gets its
//     own result and arena buffers (owned here), and runs as RunConditional
//     runs it — on the selected operand's leaves where they lie (a branch
//     that runs on leaves; otherwise they are copied into an argument
//     buffer owned here), the branch's steps, the result copied to the
//     outputs;
//   - a kWhile step whose condition and body bind: a loop over flat state
//     buffers (BoundFlatWhile, bound_while.h; RunWhile's flat arrangement),
//     the operand's leaves copied in and the final state copied out, under
//     the executable's max_while_iterations.
// Any other step (interpreted, kRowGroup, a context routine) makes Bind
// return false, and the caller runs the executable step
// by step. Guard-page mode (XJIT_GUARD_PAGES) is the caller's to check:
// there every kernel must run on guarded copies.
// After a successful Bind, Run() does what RunFrame does for those buffers
// — the same calls with the same addresses in the same order; a nested
// loop's state in flat buffers where RunFrame may keep it in the loop's
// output slots, the same bytes either way — with no status, allocation (but
// a split kernel's fork-join), lookup or dispatch beyond one switch per step
// (a nested loop makes one status per run of that loop, and is not counted
// in RunContext::loop_counts: it runs with the loop that bound it). The addresses stay
// valid while the executable and the buffers given to Bind live and stay
// where they are.
#ifndef XJIT_RUNTIME_BOUND_STEPS_H_
#define XJIT_RUNTIME_BOUND_STEPS_H_

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "runtime/executable.h"
#include "runtime/move_bytes.h"

namespace xjit::runtime {
namespace internal {
struct RunPlaces;
}  // namespace internal

// The buffers of the runs to bind, as Execute or ExecuteOnLeaves takes them:
// either `parameters` (flat, as Execute) or `leaves` (parameter 0 leaf by
// leaf, as ExecuteOnLeaves, for an executable that runs_on_leaves()).
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

  BoundSteps();
  ~BoundSteps();
  BoundSteps(BoundSteps&&) noexcept;
  BoundSteps& operator=(BoundSteps&&) noexcept;

  // Runs the bound steps once: null, or the error of a nested loop that
  // failed (ResourceExhausted, Cancelled), kept by this until the next Run.
  // Inline: a loop calls it per iteration.
  const absl::Status* Run() const {
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
          MoveBytes(op.destination, op.source, op.bytes);
          break;
        case Op::Kind::kConditional:
        case Op::Kind::kWhile:
          // Out of line, so that Run is not recursive and inlines into the
          // loop that calls it.
          if (const absl::Status* failed = RunCompound(op)) return failed;
          break;
      }
    }
    return nullptr;
  }

  // A bound on one Run's work for a caller that must stay responsive (a
  // loop checking for interrupts): the bytes of every buffer its kernels
  // and copies read and write (a conditional counts its largest branch),
  // and whether a step's work is not bounded by its bytes (a library
  // routine: a GEMM, a sort; a nested loop).
  int64_t bytes_touched() const { return bytes_touched_; }
  bool has_unbounded_step() const { return has_unbounded_step_; }

  // A bound kWhile step (bound_steps.cc).
  struct NestedLoop;
  // A bound kConditional step: the selector's address and type, and per
  // branch the bound copies in, steps and copies out, over the buffers in
  // `storage`.
  struct Conditional {
    const uint8_t* selector = nullptr;
    bool pred_selector = false;
    std::vector<BoundSteps> branches;
    std::vector<std::unique_ptr<uint8_t[]>> storage;
    // RunConditional's rule: a pred picks branch 0 when true; an s32 index
    // outside [0, N) picks the last branch.
    size_t Select() const {
      if (pred_selector) return *selector != 0 ? 0 : 1;
      int32_t index;
      std::memcpy(&index, selector, sizeof(index));
      const size_t n = branches.size();
      return index < 0 || static_cast<size_t>(index) >= n ? n - 1 : static_cast<size_t>(index);
    }
  };
  struct Op {
    enum class Kind : uint8_t { kKernel, kLibraryCall, kCopy, kConditional, kWhile };
    Kind kind = Kind::kKernel;
    // kKernel and kLibraryCall: inputs' then outputs' addresses (into
    // addresses_, from index first_address).
    void* const* addresses = nullptr;
    size_t first_address = 0;
    KernelFunction kernel = nullptr;
    int64_t extent = 1;
    // kKernel: Step::inline_program (owned by the executable), or null.
    const void* inline_program = nullptr;
    LibraryFunction library = nullptr;
    const void* plan = nullptr;
    void* scratch = nullptr;
    // kCopy: never 0 bytes (such a copy is dropped at Bind).
    uint8_t* destination = nullptr;
    const uint8_t* source = nullptr;
    size_t bytes = 0;
    // kConditional (into conditionals_), kWhile (into loops_).
    const Conditional* conditional = nullptr;
    NestedLoop* loop = nullptr;
  };
  // What Bind made, for a target that emits the loop as machine code
  // (native_loop.h): the ops Run runs, in order, at addresses that stay put
  // while this lives. The code calls RunCompound for what it does not emit
  // itself.
  absl::Span<const Op> ops() const { return ops_; }
  // Runs a kConditional or kWhile op (Run's result).
  static const absl::Status* RunCompound(const Op& op);

 private:
  bool BindConditional(const Executable& executable, const Step& step,
                       const internal::RunPlaces& places);
  bool BindWhile(const Executable& executable, const Step& step,
                 const internal::RunPlaces& places);
  void AddCopy(uint8_t* destination, const uint8_t* source, int64_t bytes);
  struct SplitKernel;
  static void RunSplitKernel(const void* plan, void* const* buffers, void* scratch);

  std::vector<Op> ops_;
  std::vector<void*> addresses_;
  std::vector<std::unique_ptr<Conditional>> conditionals_;
  std::vector<std::unique_ptr<NestedLoop>> loops_;
  // Aligned copies of misaligned library-call buffers.
  std::vector<std::unique_ptr<uint8_t[]>> staging_;
  std::vector<std::unique_ptr<SplitKernel>> split_kernels_;
  int64_t bytes_touched_ = 0;
  bool has_unbounded_step_ = false;
};

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_BOUND_STEPS_H_
