// Executable: a compiled program, as a short list of steps over a buffer plan.
//
// Steps run in order. A kernel step calls emitted machine code with the
// addresses of its buffers; a library-call step calls a routine of a runtime
// library (runtime/blas: dot and convolution over OpenBLAS) with the plan
// made for it at compile time (a routine that needs the run's RunContext —
// collectives, replica-id, host queues, custom calls — gets it and may fail
// the run); an interpreted step runs one instruction
// through the reference evaluator (for operations that have no compiled code
// yet); a copy step copies one range to another of the same size.
//
// Run and Execute keep all mutable state (the temporary arena, library-call
// scratch included, and the evaluator of interpreted steps) local to the
// call, so one Executable may be run from many threads at once. The one
// exception is memory only: a run's arena is kept by the Executable (one at
// most) when it ends and the next run takes it from there (under a mutex),
// so a large arena is not mapped and faulted in, page by page, on every run
// (a 66 MB arena cost 16K page faults per run); so is each while loop as a
// run bound it, with its arenas (runtime/kept_loop.h). Neither holds values
// between runs: every slot is written before it is read within a run.
// Threaded kernel steps share the process-wide ThreadPool, which is safe for
// runs from many threads.
// A kernel step that writes a large output is split into ranges of its
// outermost loop run on ExecutableSpec::threads threads; the split never
// changes a result bit. Each run starts the `rng` generator's state afresh
// (RunContext::rng_state, at the evaluator's seed), so an `rng` instruction
// gives the same values on every run, and the values RunModule gives.
#ifndef XJIT_RUNTIME_EXECUTABLE_H_
#define XJIT_RUNTIME_EXECUTABLE_H_

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "runtime/buffer_plan.h"
#include "runtime/native_loop.h"
#include "runtime/run_context.h"
#include "runtime/split_cost.h"

namespace xjit::runtime {

// The calling convention of emitted kernels: `buffers` holds the address of
// each buffer the kernel reads, in the kernel's input order, then the address
// of the buffer it writes. The kernel runs iterations [begin, end) of its
// outermost loop (0 <= begin < end <= that loop's trip count; a kernel
// without loops ignores them and is called with 0, 1), so disjoint ranges
// may run on different threads at once.
using KernelFunction = void (*)(void* const* buffers, int64_t begin, int64_t end);

// A library routine as a step calls it: `plan` (read only, shared by
// concurrent runs), the addresses of the step's inputs then its outputs (as
// for kernels), and `scratch`, per-run memory of at least the call's
// scratch_bytes (null when that is 0). It must not allocate or keep state.
using LibraryFunction = void (*)(const void* plan, void* const* buffers, void* scratch);

// A library routine that needs the run's context (collectives, replica-id,
// host queues, custom calls) and may fail: as LibraryFunction, plus the
// run's RunContext; an error fails the run.
using ContextLibraryFunction = absl::Status (*)(const void* plan, void* const* buffers,
                                                void* scratch, const RunContext& context);

// What a library-call step runs. The runtime does not know the plan's type:
// the compile driver pairs each plan with the function that reads it, so
// this library stays independent of the libraries it calls.
struct LibraryCall {
  std::string routine;  // "dot", "convolution", "sort": for reports.
  // Exactly one of the two is set.
  LibraryFunction function = nullptr;
  ContextLibraryFunction context_function = nullptr;
  std::shared_ptr<const void> plan;
  int64_t scratch_bytes = 0;
};

class Executable;
struct KeptLoop;  // kept_loop.h

// One step of the program. Kinds:
//   kKernel: calls `function` with the addresses of `inputs` then `outputs`
//     (several outputs for a multi-output fusion);
//   kLibraryCall: calls `library_call` on `inputs` then `outputs` (one, or
//     one per result leaf for a routine with several, as sort's), with
//     the plan's scratch range (BufferPlan::scratch_offset); a buffer that is
//     not aligned to its element type (an unaligned caller buffer) is staged
//     through an aligned copy;
//   kInterpreted: evaluates `instruction` (of the Executable's own module).
//     `inputs` holds the array leaves of its operands, operand after operand,
//     each operand's leaves depth first (see ArrayLeafCount); `outputs` the
//     leaves of its result;
//   kCopy: copies `inputs[0]` to `outputs[0]` (same size);
//   kWhile: a while loop whose condition and body were compiled as
//     executables of their own, `subprograms` = {condition, body}, each
//     taking the loop state as its one (flattened) parameter: `inputs` (the
//     operand's leaves) are copied into a state buffer, the body maps state to
//     state while the condition gives true, and the final state is copied to
//     `outputs`. A body with state_in_place updates the one state buffer
//     (nothing is copied per iteration but what its plan copies); another
//     writes a second buffer and the two swap. A state_in_place body whose
//     condition and body run on leaves (Executable::ExecuteOnLeaves) keeps
//     the state in the `outputs` slots instead: each input leaf is copied
//     there unless it is there already, and nothing is copied out (an output
//     slot that overlaps another or an input gets a private buffer);
//   kConditional: `subprograms` holds the compiled branches; `inputs` the
//     selector's leaf, then each branch operand's leaves (`operand_leaves[k]`
//     of them for branch k). A pred selector picks branch 0 when true, 1 when
//     false; an integer one outside [0, N) the last branch (XLA's rule).
//   kRowGroup: consecutive kernel steps (`members`, each a kKernel) whose
//     outer loops all have `outer_extent` iterations and each iteration i of
//     which touches only "row" i of every buffer (row_elements below). They
//     run interleaved over chunks of `row_chunk` rows: every member on rows
//     [0, R), then every member on [R, 2R), ..., so a row written by one
//     member is still in cache when the next reads it (jit/kernel/row_groups.h).
//     Each private slot (values made and consumed inside the group) lives in
//     a chunk-sized scratch area instead of its planned range; with several
//     threads, each takes whole chunks and has its own scratch.
// An output may be the same range as an input: buffer allocation lets an
// elementwise kernel write over an operand that dies there.
struct RowGroupSlot {
  int slot = 0;
  int64_t row_bytes = 0;       // Bytes of one row of the slot.
  int64_t scratch_offset = 0;  // Of its area within one thread's scratch.
};

struct Step {
  enum class Kind : uint8_t {
    kKernel, kLibraryCall, kInterpreted, kCopy, kWhile, kConditional, kRowGroup
  };
  Kind kind = Kind::kCopy;
  std::string name;  // The instruction (or fusion) the step computes.
  KernelFunction function = nullptr;
  // kKernel: the trip count of the kernel's outermost loop (1 without
  // loops), and the multiple of which every range but the last must start
  // and end when it is split between threads (so that a vectorised loop's
  // scalar tail stays at the real end).
  int64_t outer_extent = 1;
  int64_t outer_alignment = 1;
  // kKernel: whether the kernel claims its range rather than looping over
  // it (jit KernelProgram::claims_range: each call costs about the whole
  // kernel's index work, so it splits into at most one range per thread).
  bool claims_range = false;
  // kKernel: when iteration i of the outer loop reads and writes only
  // elements [i*n, (i+1)*n) of each buffer, n for each buffer (inputs then
  // outputs); empty otherwise. What kRowGroup needs of its members.
  std::vector<int64_t> row_elements;
  // kKernel: the estimated nanoseconds of one single-threaded run
  // (runtime/split_cost.h), from which its split is decided; 0: never split.
  int64_t cost_ns = 0;
  // kKernel: the arithmetic part of cost_ns (vector operations, not bytes),
  // which alone decides a split while a worker is awake (WarmSplitChunks):
  // the bytes term counts whole input buffers, of which a slicing kernel
  // reads a sliver.
  int64_t arithmetic_ns = 0;
  // kRowGroup (see above): outer_extent rows, chunks of row_chunk rows (a
  // multiple of every member's outer_alignment), the private slots, and the
  // scratch: per_thread bytes for each of up to `threads` threads, from
  // byte scratch_offset of the arena.
  std::vector<Step> members;
  int64_t row_chunk = 1;
  std::vector<RowGroupSlot> private_slots;
  int64_t group_scratch_offset = 0;
  int64_t group_scratch_per_thread = 0;
  LibraryCall library_call;
  const Instruction* instruction = nullptr;
  std::vector<int> inputs;   // Slot numbers.
  std::vector<int> outputs;  // Slot numbers.
  // kWhile and kConditional.
  std::vector<std::shared_ptr<const Executable>> subprograms;
  std::vector<int> operand_leaves;
  // kKernel, optional: the target's description of a small kernel's code (in
  // jit/, its KernelProgram) that a loop emitter may emit inline in a native
  // loop (native_loop.h) instead of calling `function`; null for most.
  std::shared_ptr<const void> inline_program;
};

// Everything an Executable is made of; the compile driver fills it in.
struct ExecutableSpec {
  std::string name;
  // The module the steps refer to (interpreted steps evaluate its
  // instructions). The executables of a module's loop bodies and branches
  // share their caller's (each runs one computation of it).
  std::shared_ptr<const Module> module;
  // Whether a run belongs on a large stack (runtime/host/large_stack.h);
  // unset: NeedsLargeStack(*module). The compile driver sets it once for an
  // executable and its subprograms, which share one module.
  std::optional<bool> needs_large_stack;
  std::vector<Shape> parameter_shapes;
  Shape result_shape;
  BufferPlan plan;
  std::vector<Step> steps;
  // Constant data, flattened like any value, indexed by BufferSlot::index;
  // never null. An array constant shares its literal's bytes (ir/literal.h:
  // copy on write, so they never change while the executable holds them).
  std::vector<std::shared_ptr<const std::vector<uint8_t>>> constants;
  // Keeps emitted code alive for as long as the Executable exists.
  std::shared_ptr<const void> code_owner;
  // Threads a kernel step may use (the caller's plus threads - 1 workers of
  // the shared ThreadPool, runtime/thread_pool.h); a kernel is split only
  // in chunks of at least split_min_chunk_ns of its estimated time
  // (Step::cost_ns, runtime/split_cost.h), a row group likewise by its
  // members' summed cost and only when they write at least
  // parallel_min_bytes. 1: every step on the calling thread.
  int threads = 1;
  int64_t split_min_chunk_ns = kSplitMinChunkNs;
  int64_t parallel_min_bytes = int64_t{64} << 10;
  // Upper bound on the iterations of one run of a kWhile step (a loop that
  // would run more fails the run with ResourceExhausted); < 0: none.
  int64_t max_while_iterations = -1;
  // Run a kWhile step over bound steps (runtime/bound_steps.h) when its
  // condition and body allow; off, always step by step. The same bits
  // either way.
  bool bind_loops = true;
  // The host target's loop emitter (runtime/native_loop.h): a bound loop
  // runs as one emitted function once it has run native_loop_after
  // iterations over bound steps. Null: bound loops stay on bound steps.
  EmitNativeLoopFunction emit_native_loop = nullptr;
  int64_t native_loop_after = 2048;
  // A while body compiled to update the loop state in place
  // (BufferPlanOptions::state_in_place): Execute must get the same buffer as
  // parameter 0 and as the result, and writes it.
  bool state_in_place = false;
};

class Executable {
 public:
  explicit Executable(ExecutableSpec spec);
  // Shares a spec with other executables: runs keep all their mutable
  // state to themselves (see above), so the compile cache
  // (jit/compile_cache.h) hands out executables over one spec.
  explicit Executable(std::shared_ptr<const ExecutableSpec> spec);
  ~Executable();
  Executable(const Executable&) = delete;
  Executable& operator=(const Executable&) = delete;

  const std::string& name() const { return spec_->name; }
  const std::vector<Shape>& parameter_shapes() const { return spec_->parameter_shapes; }
  const Shape& result_shape() const { return spec_->result_shape; }
  const BufferPlan& plan() const { return spec_->plan; }
  const std::vector<Step>& steps() const { return spec_->steps; }
  const Module& module() const { return *spec_->module; }
  const std::shared_ptr<const ExecutableSpec>& shared_spec() const { return spec_; }
  bool state_in_place() const { return spec_->state_in_place; }

  // Runs on host literals. Arguments must match the parameters' element
  // types and dimensions (InvalidArgument otherwise); any layout is accepted
  // and converted. The result is in the entry root's layout.
  absl::StatusOr<Literal> Run(absl::Span<const Literal> arguments) const;
  absl::StatusOr<Literal> Run(absl::Span<const Literal* const> arguments) const;
  absl::StatusOr<Literal> Run(absl::Span<const Literal* const> arguments,
                              const RunContext& context) const;

  // Runs on raw buffers: parameters[i] holds ByteSize(parameter_shapes()[i])
  // bytes in that shape's layout (tuples flattened, see buffer_plan.h) and
  // `result` receives ByteSize(result_shape()) bytes. Buffers need no
  // particular alignment. Parameter buffers are only read, but by an
  // executable with state_in_place(), which must get its one parameter's
  // buffer as `result` too (InvalidArgument otherwise) and updates it.
  absl::Status Execute(absl::Span<const void* const> parameters, void* result) const;
  // The same as one replica of a replicated run (runtime/collectives/) or
  // with host queues: `context` reaches every step, loops' and branches'
  // included.
  absl::Status Execute(absl::Span<const void* const> parameters, void* result,
                       const RunContext& context) const;

  // For the runtime's own loops (a kWhile step runs its condition and body
  // this way): an executable with one parameter may also run with that
  // parameter given leaf by leaf, `leaves[k]` holding array leaf k (in the
  // flattened order of buffer_plan.h) wherever it lies, so the loop state can
  // stay in the caller's buffers instead of being copied into one flat buffer
  // and back. A state_in_place() executable writes its result over those
  // leaves (`result` is unused); another writes `result`, flattened. `arena`
  // is arena_bytes() bytes for the run's temporaries (uninitialised, reused
  // from run to run by the caller), or null to allocate them for this run.
  // The leaves, the result and the arena must not overlap except where a
  // state_in_place result leaf is its own parameter leaf.
  bool runs_on_leaves() const { return runs_on_leaves_; }
  int64_t arena_bytes() const { return spec_->plan.temp_bytes + kBufferAlignment; }
  absl::Status ExecuteOnLeaves(absl::Span<void* const> leaves, void* result, uint8_t* arena,
                               const RunContext& context) const;

  // Where a slot of parameter 0 (or, state_in_place, of the result) lies
  // when the parameter comes leaf by leaf: array leaf `leaf`, `offset`
  // bytes in; leaf -1 for slots elsewhere.
  struct LeafRef {
    int leaf = -1;
    int64_t offset = 0;
  };
  // Those places by slot number (all of them, runs_on_leaves() only;
  // empty otherwise): what an ExecuteOnLeaves run resolves its slots by.
  absl::Span<const LeafRef> leaf_refs() const { return leaf_refs_; }

 private:
  // The buffers of one run (Execute or ExecuteOnLeaves).
  struct Frame {
    absl::Span<const void* const> parameters;
    void* result = nullptr;
    absl::Span<void* const> leaves;  // Non-empty: parameter 0 leaf by leaf.
    uint8_t* arena = nullptr;        // Null: allocated for the run.
  };
  absl::Status RunFrame(const Frame& frame, const RunContext& context) const;
  void MapSlotsToLeaves();

  // An arena of arena_bytes() kept from a finished run for the next one,
  // or null: a large arena is mapped afresh by the allocator on every run,
  // and touching its pages again costs a fault per page (7% of an LSTM
  // step's profile). Runs at once each take their own (only one is kept).
  std::unique_ptr<uint8_t[]> TakeArena() const;
  void KeepArena(std::unique_ptr<uint8_t[]> arena) const;
  // The loop a finished run bound for while step `step` (kept_loop.h), or
  // null; as with arenas, runs at once each take their own.
  std::unique_ptr<KeptLoop> TakeKeptLoop(size_t step) const;
  void KeepLoop(size_t step, std::unique_ptr<KeptLoop> loop) const;
  // The flat result buffer a finished run used for conditional step `step`
  // (its outputs' bytes), or null; as with arenas.
  std::unique_ptr<uint8_t[]> TakeKeptResult(size_t step) const;
  void KeepResult(size_t step, std::unique_ptr<uint8_t[]> result) const;
  // Guards kept_arena_, kept_loops_ and kept_results_.
  mutable std::mutex arena_mutex_;
  mutable std::unique_ptr<uint8_t[]> kept_arena_;
  mutable std::vector<std::unique_ptr<KeptLoop>> kept_loops_;  // By step.
  mutable std::vector<std::unique_ptr<uint8_t[]>> kept_results_;  // By step.

  std::shared_ptr<const ExecutableSpec> spec_;
  // By slot number (runs_on_leaves_ only).
  std::vector<LeafRef> leaf_refs_;
  int64_t parameter_leaves_ = 0;
  bool runs_on_leaves_ = false;
  // Its module nests computations deeply: a run goes onto a large stack
  // (runtime/host/large_stack.h), since running a while or conditional step
  // recurses into its subprograms.
  bool deep_ = false;
};

// Flattened bytes of a literal (see buffer_plan.h) and back.
std::vector<uint8_t> FlattenLiteral(const Literal& literal);
Literal UnflattenLiteral(const Shape& shape, const uint8_t* data);

}  // namespace xjit::runtime

#endif  // XJIT_RUNTIME_EXECUTABLE_H_
