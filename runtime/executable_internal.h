// Private to the runtime: where a run's buffers lie and the per-step rules
// that both ways of running steps share — Executable::RunFrame, which
// resolves every address as it goes, and BoundSteps (bound_steps.h), which
// resolves them once for many runs. Keeping the rules in one place is what
// lets the two ways give the same bytes.
#ifndef XJIT_RUNTIME_EXECUTABLE_INTERNAL_H_
#define XJIT_RUNTIME_EXECUTABLE_INTERNAL_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/shape.h"
#include "runtime/buffer_plan.h"
#include "runtime/executable.h"

namespace xjit::runtime {
struct KeptLoop;
}  // namespace xjit::runtime

namespace xjit::runtime::internal {

// The addresses of the places a run uses.
struct RunPlaces {
  const std::vector<BufferSlot>* slots = nullptr;
  absl::Span<const void* const> parameters;
  uint8_t* temp = nullptr;  // The arena, aligned (AlignArena).
  uint8_t* result = nullptr;
  const std::vector<std::shared_ptr<const std::vector<uint8_t>>>* constants = nullptr;
  // Non-null when parameter 0 comes leaf by leaf (Executable::ExecuteOnLeaves):
  // the leaves' addresses, and where each slot lies among them.
  void* const* leaves = nullptr;
  const Executable::LeafRef* leaf_refs = nullptr;
  // The executable's threads and split bound (ExecutableSpec), for the
  // copies a run makes (loop states, branch operands: CopySplit).
  int threads = 1;
  int64_t split_min_chunk_ns = kSplitMinChunkNs;
};

inline uint8_t* SlotAddress(int number, const RunPlaces& places) {
  const BufferSlot& slot = (*places.slots)[number];
  if (places.leaves != nullptr && places.leaf_refs[number].leaf >= 0) {
    const Executable::LeafRef& ref = places.leaf_refs[number];
    return static_cast<uint8_t*>(places.leaves[ref.leaf]) + ref.offset;
  }
  switch (slot.kind) {
    case BufferSlot::Kind::kParameter:
      // Kernels write parameter ranges only of a state_in_place executable.
      return const_cast<uint8_t*>(static_cast<const uint8_t*>(places.parameters[slot.index])) +
             slot.offset;
    case BufferSlot::Kind::kTemp:
      return places.temp + slot.offset;
    case BufferSlot::Kind::kConstant:
      return const_cast<uint8_t*>((*places.constants)[slot.index]->data()) + slot.offset;
    case BufferSlot::Kind::kResult:
      return places.result + slot.offset;
  }
  return nullptr;
}

// The first kBufferAlignment boundary at or after `arena` (which has
// arena_bytes() = temp_bytes + kBufferAlignment bytes): aligned by hand so
// that no allocator guarantee is assumed.
inline uint8_t* AlignArena(uint8_t* arena) {
  return arena + (kBufferAlignment - reinterpret_cast<uintptr_t>(arena) % kBufferAlignment) %
                     kBufferAlignment;
}

// The chunks a kernel step runs in at `threads` threads (SplitChunks of its
// estimated cost, runtime/split_cost.h): 1 when the calling thread runs it
// alone, as one call over its whole outer loop; else RunKernel splits it.
// A property of the step and the executable's spec, not of the run, so it
// may be decided once.
int64_t KernelSplitChunks(const Step& step, int threads, int64_t min_chunk_ns);

// The chunks the same step runs in when a pool worker is watching for work
// at the time it starts (WarmSplitChunks, ThreadPool::HasWatchingWorker):
// at least KernelSplitChunks. Only when this is > 1 and KernelSplitChunks is
// 1 does the run's state decide; chunking never changes a result.
int64_t KernelWarmSplitChunks(const Step& step, int threads, int64_t min_chunk_ns);

// The threads a kRowGroup step runs on (parts of consecutive row chunks,
// one per thread, each with its thread's scratch) at `threads` threads when
// a pool worker is (`warm`) or is not watching for work: as a kernel of
// the members' summed cost over the group's row chunks would split
// (KernelSplitChunks, KernelWarmSplitChunks), capped at `threads`; 1 also
// when the members write fewer than `min_bytes` bytes. The sum overstates a
// group (its private temporaries stay in cache), so a group splits no more
// readily than its kernels would alone. Parts never change a result: every
// row chunk runs the same code on any thread.
int64_t RowGroupSplitParts(const Step& group, const std::vector<BufferSlot>& slots, int threads,
                           int64_t min_chunk_ns, int64_t min_bytes, bool warm);

// The chunks to run a step of `cold` (KernelSplitChunks) and `warm`
// (KernelWarmSplitChunks) chunks in now: `warm` if `cold` is 1 and a worker
// is watching for work, else `cold`.
int64_t ChunksNow(int64_t cold, int64_t warm);

// Runs a kernel over its whole outer loop (`extent` iterations) in `chunks`
// chunks that start at multiples of `alignment` (Step::outer_alignment),
// taken by the calling thread and up to `threads` - 1 of ThreadPool's
// workers: what RunKernel does with a step of KernelSplitChunks > 1.
void RunKernelSplit(KernelFunction function, void* const* addresses, int64_t extent,
                    int64_t alignment, int64_t chunks, int threads);

// Copies `bytes` from `source` to `destination` (memmove's contract): split
// like a kernel by its estimated time (SplitChunks of reading and writing
// `bytes`) in chunks of whole 4 KiB pages where the two ranges do not
// overlap.
void CopySplit(uint8_t* destination, const uint8_t* source, int64_t bytes, int threads,
               int64_t min_chunk_ns);

// The alignment a library routine may assume for the elements of `shape`:
// their natural one (a complex number's is its component's).
uintptr_t ElementAlignment(const Shape& shape);

// Guard-page test mode (XJIT_GUARD_PAGES=1 in the environment; see
// docs/limits.md): every kernel runs on guarded copies of its buffers.
bool GuardPagesRequested();

// A while step whose body updates its state in place, prepared to run on
// the state's leaves where the step's outputs lie (`from`: the operand's
// leaves, `to`: the outputs', `sizes`: their bytes; kept_loop.h), bound when
// `bind` and the condition and body bind. Defined in executable.cc beside
// RunWhileOnLeaves; BoundSteps binds a nested loop the same way.
absl::StatusOr<std::unique_ptr<KeptLoop>> PrepareLoopOnLeaves(
    const Step& step, const Executable& condition, const Executable& body,
    absl::Span<uint8_t* const> from, absl::Span<uint8_t* const> to,
    absl::Span<const int64_t> sizes, bool bind);

}  // namespace xjit::runtime::internal

#endif  // XJIT_RUNTIME_EXECUTABLE_INTERNAL_H_
