// Executable: runs steps over a buffer plan (see executable.h).
#include "runtime/executable.h"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "runtime/bound_steps.h"
#include "runtime/bound_while.h"
#include "runtime/collectives/communicator.h"
#include "runtime/executable_internal.h"
#include "runtime/kept_loop.h"
#include "runtime/host/interrupt.h"
#include "runtime/host/large_stack.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime {
namespace internal {

namespace {

// The units a kernel step's outer loop splits into: every range but the
// last a multiple of its alignment; a kernel that claims its range (whose
// every call walks all of its index work) at most one per thread.
int64_t SplitUnits(const Step& step, int threads) {
  const int64_t alignment = std::max<int64_t>(step.outer_alignment, 1);
  const int64_t units = (step.outer_extent + alignment - 1) / alignment;
  return step.claims_range ? std::min<int64_t>(units, threads) : units;
}

}  // namespace

int64_t KernelSplitChunks(const Step& step, int threads, int64_t min_chunk_ns) {
  return SplitChunks(step.cost_ns, SplitUnits(step, threads), threads, min_chunk_ns);
}

int64_t KernelWarmSplitChunks(const Step& step, int threads, int64_t min_chunk_ns) {
  const int64_t units = SplitUnits(step, threads);
  return std::max(WarmSplitChunks(step.arithmetic_ns, units, threads, min_chunk_ns),
                  SplitChunks(step.cost_ns, units, threads, min_chunk_ns));
}

// A copy of a few MiB (a loop's state taking a large parameter, once per
// run) runs at one core's bandwidth on one thread. Bytes only, so no warm
// split (WarmSplitChunks counts arithmetic).
void CopySplit(uint8_t* destination, const uint8_t* source, int64_t bytes, int threads,
               int64_t min_chunk_ns) {
  constexpr int64_t kPage = 4096;
  const int64_t cost = EstimateKernelNanoseconds(2 * bytes, 0, 0);
  const int64_t units = bytes / kPage;
  const bool apart = destination + bytes <= source || source + bytes <= destination;
  const int64_t chunks = apart ? SplitChunks(cost, units, threads, min_chunk_ns) : 1;
  if (chunks <= 1) {
    if (bytes > 0) std::memmove(destination, source, static_cast<size_t>(bytes));
    return;
  }
  const int helpers = static_cast<int>(std::min<int64_t>(threads, chunks) - 1);
  ThreadPool::Shared().ParallelFor(chunks, helpers, [&](int64_t k) {
    const int64_t begin = k * units / chunks * kPage;
    const int64_t end = k + 1 == chunks ? bytes : (k + 1) * units / chunks * kPage;
    std::memcpy(destination + begin, source + begin, static_cast<size_t>(end - begin));
  });
}

int64_t RowGroupSplitParts(const Step& group, const std::vector<BufferSlot>& slots, int threads,
                           int64_t min_chunk_ns, int64_t min_bytes, bool warm) {
  // The group as one kernel over its row chunks (the units it splits at),
  // of the members' summed estimates.
  int64_t output_bytes = 0, cost_ns = 0, arithmetic_ns = 0;
  for (const Step& member : group.members) {
    for (int slot : member.outputs) output_bytes += slots[slot].size;
    cost_ns += member.cost_ns;
    arithmetic_ns += member.arithmetic_ns;
  }
  if (output_bytes < min_bytes) return 1;
  const int64_t chunk = std::max<int64_t>(group.row_chunk, 1);
  const int64_t units = (group.outer_extent + chunk - 1) / chunk;
  int64_t parts = SplitChunks(cost_ns, units, threads, min_chunk_ns);
  if (warm) parts = std::max(parts, WarmSplitChunks(arithmetic_ns, units, threads, min_chunk_ns));
  return std::min<int64_t>(parts, std::max(threads, 1));
}

int64_t ChunksNow(int64_t cold, int64_t warm) {
  if (cold > 1 || warm <= 1) return cold;
  return ThreadPool::Shared().HasWatchingWorker() ? warm : 1;
}

// Chunk k covers units [k*units/chunks, (k+1)*units/chunks) of `alignment`
// iterations, so only the last chunk can end off the alignment.
void RunKernelSplit(KernelFunction function, void* const* addresses, int64_t extent,
                    int64_t alignment, int64_t chunks, int threads) {
  alignment = std::max<int64_t>(alignment, 1);
  const int64_t units = (extent + alignment - 1) / alignment;
  chunks = std::clamp<int64_t>(chunks, 1, std::max<int64_t>(units, 1));
  const int helpers = static_cast<int>(std::min<int64_t>(threads, chunks) - 1);
  ThreadPool::Shared().ParallelFor(chunks, helpers, [&](int64_t k) {
    const int64_t begin = k * units / chunks * alignment;
    const int64_t end = std::min(extent, (k + 1) * units / chunks * alignment);
    if (begin < end) function(addresses, begin, end);
  });
}

uintptr_t ElementAlignment(const Shape& shape) {
  if (!shape.IsArray()) return 1;
  const ElementType type = shape.element_type();
  const int64_t width =
      IsComplex(type) ? ByteWidth(ComplexComponentType(type)) : ByteWidth(type);
  return width > 1 ? static_cast<uintptr_t>(width) : 1;
}

// Guard-page mode: machine code is not instrumented by sanitizers, so in
// this mode each kernel runs on copies of its buffers, each placed to end exactly
// where an inaccessible page begins and to start one inaccessible page after
// another: a kernel that reads or writes one byte past either end of any
// buffer faults at once. Results are copied back. Slow (two mappings per
// buffer per step); for tests only.
bool GuardPagesRequested() {
  static const bool requested = [] {
    const char* value = std::getenv("XJIT_GUARD_PAGES");
    return value != nullptr && value[0] != '\0' && std::strcmp(value, "0") != 0;
  }();
  return requested;
}

// A loop whose body updates its state in place runs with the state in the
// while's output slots (Executable::ExecuteOnLeaves): init leaf k (at
// from[k]) is copied to output leaf k (at to[k]) unless it is there already
// (the plan wrote the while's state over its init), nothing is copied out,
// and the condition's and body's arenas are allocated once for all
// iterations. An output slot that cannot hold its leaf for the whole loop —
// it overlaps an earlier leaf's slot (the plan lets a dead result share
// bytes), or copying into it would overwrite an init leaf not yet copied —
// gets a private buffer instead, copied out at the end, in leaf order as
// the flat loop copies out (a later leaf's bytes win). With `bind`, the
// condition and body are bound over those leaves and arenas (bound_steps.h).
// Returns the loop so prepared, for these addresses (kept_loop.h).
absl::StatusOr<std::unique_ptr<KeptLoop>> PrepareLoopOnLeaves(
    const Step& step, const Executable& condition, const Executable& body,
    absl::Span<uint8_t* const> from, absl::Span<uint8_t* const> to,
    absl::Span<const int64_t> sizes, bool bind) {
  const auto overlap = [&](const uint8_t* a, int64_t a_size, const uint8_t* b, int64_t b_size) {
    return a_size > 0 && b_size > 0 && a < b + b_size && b < a + a_size;
  };
  auto loop = std::make_unique<KeptLoop>();
  loop->on_leaves = true;
  loop->from.assign(from.begin(), from.end());
  loop->to.assign(to.begin(), to.end());
  const size_t n = to.size();
  loop->leaves.resize(n);
  loop->own.resize(n);
  for (size_t k = 0; k < n; ++k) {
    bool direct = true;
    for (size_t j = 0; j < k && direct; ++j) direct = !overlap(to[k], sizes[k], to[j], sizes[j]);
    for (size_t j = 0; j < n && direct && from[k] != to[k]; ++j) {
      direct = !overlap(to[k], sizes[k], from[j], sizes[j]);
    }
    if (direct) {
      loop->leaves[k] = to[k];
      continue;
    }
    loop->own[k].reset(new (std::nothrow) uint8_t[std::max<int64_t>(sizes[k], 1)]);
    if (loop->own[k] == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "out of memory: while loop ", step.name, " needs ", sizes[k], " bytes of state"));
    }
    loop->leaves[k] = loop->own[k].get();
  }
  const auto allocate = [](const Executable& executable) {
    return std::unique_ptr<uint8_t[]>(new (std::nothrow)
                                          uint8_t[executable.arena_bytes()]);
  };
  loop->condition_arena = allocate(condition);
  loop->body_arena = allocate(body);
  if (loop->condition_arena == nullptr || loop->body_arena == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory: while loop ", step.name, " needs ",
                     condition.arena_bytes() + body.arena_bytes(), " bytes of temporaries"));
  }
  BindBuffers condition_buffers;
  condition_buffers.leaves = loop->leaves;
  condition_buffers.result = &loop->keep_going;
  condition_buffers.arena = loop->condition_arena.get();
  BindBuffers body_buffers;
  body_buffers.leaves = loop->leaves;
  body_buffers.arena = loop->body_arena.get();
  loop->bound = bind && loop->condition.Bind(condition, condition_buffers) &&
                loop->body.Bind(body, body_buffers);
  loop->native.emit = body.shared_spec()->emit_native_loop;
  loop->native.after = body.shared_spec()->native_loop_after;
  return loop;
}

}  // namespace internal

namespace {

using internal::ElementAlignment;
using internal::GuardPagesRequested;
using internal::RunPlaces;
using internal::SlotAddress;

const std::vector<Literal>& Elements(const Literal& literal) { return literal.elements(); }
std::vector<Literal>& Elements(Literal& literal) { return *literal.mutable_elements(); }

// Visits the array leaves of `literal` (a Literal or const Literal) depth
// first: the flattened order of buffer_plan.h. Tokens and opaques hold none.
template <typename L, typename Visit>
void ForEachArrayLeaf(L* literal, Visit&& visit) {
  if (literal->shape().IsTuple()) {
    for (auto& element : Elements(*literal)) ForEachArrayLeaf(&element, visit);
  } else if (literal->shape().IsArray()) {
    visit(literal);
  }
}

// Visits the array leaves of `shape` depth first (the flattened order).
template <typename Visit>
void ForEachArrayLeafShape(const Shape& shape, Visit&& visit) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) ForEachArrayLeafShape(element, visit);
  } else if (shape.IsArray()) {
    visit(shape);
  }
}

// Runs a library-call step. Routines may assume naturally aligned elements,
// which a packed tuple leaf or a caller's buffer need not be; such a buffer
// goes through an aligned heap copy (rare, so the common path allocates
// nothing).
absl::Status RunLibraryCall(const Step& step, const std::vector<BufferSlot>& slots,
                            const RunPlaces& places, uint8_t* scratch,
                            const RunContext& context) {
  std::vector<void*> addresses;
  std::vector<std::unique_ptr<uint8_t[]>> staged;
  auto address = [&](int slot_number, bool is_output) -> void* {
    const BufferSlot& slot = slots[slot_number];
    uint8_t* place = SlotAddress(slot_number, places);
    if (reinterpret_cast<uintptr_t>(place) % ElementAlignment(slot.shape) == 0) return place;
    // operator new[] aligns to at least 16 bytes, more than any element needs.
    staged.push_back(std::make_unique<uint8_t[]>(static_cast<size_t>(slot.size)));
    if (!is_output && slot.size > 0) std::memcpy(staged.back().get(), place, slot.size);
    return staged.back().get();
  };
  for (int slot : step.inputs) addresses.push_back(address(slot, false));
  for (int slot : step.outputs) addresses.push_back(address(slot, true));
  const LibraryCall& call = step.library_call;
  void* call_scratch = call.scratch_bytes > 0 ? scratch : nullptr;
  if (call.context_function != nullptr) {
    XJIT_RETURN_IF_ERROR(
        call.context_function(call.plan.get(), addresses.data(), call_scratch, context));
  } else {
    call.function(call.plan.get(), addresses.data(), call_scratch);
  }
  for (size_t k = 0; k < step.outputs.size(); ++k) {
    const BufferSlot& output = slots[step.outputs[k]];
    uint8_t* place = SlotAddress(step.outputs[k], places);
    void* written = addresses[step.inputs.size() + k];
    if (written != place && output.size > 0) std::memcpy(place, written, output.size);
  }
  return absl::OkStatus();
}

// Runs a kernel step whose buffer addresses are `addresses`, split between
// up to `threads` threads when its estimated cost pays for it
// (KernelSplitChunks; KernelWarmSplitChunks when a worker is awake;
// RunKernelSplit).
void RunKernel(const Step& step, void* const* addresses, int threads, int64_t min_chunk_ns) {
  const int64_t chunks =
      internal::ChunksNow(internal::KernelSplitChunks(step, threads, min_chunk_ns),
                          internal::KernelWarmSplitChunks(step, threads, min_chunk_ns));
  if (chunks <= 1) {
    step.function(addresses, 0, step.outer_extent);
    return;
  }
  internal::RunKernelSplit(step.function, addresses, step.outer_extent, step.outer_alignment,
                           chunks, threads);
}

// Runs a kRowGroup step: chunk after chunk of rows, every member on the chunk
// before the next chunk, private slots redirected to this thread's scratch
// (the address of row `begin` of a private slot is its area's start).
void RunRowGroup(const Step& group, const std::vector<BufferSlot>& slots,
                 const RunPlaces& places, uint8_t* scratch, int threads, int64_t min_chunk_ns,
                 int64_t min_bytes) {
  std::vector<std::vector<void*>> addresses(group.members.size());
  for (size_t m = 0; m < group.members.size(); ++m) {
    const Step& member = group.members[m];
    for (int slot : member.inputs) addresses[m].push_back(SlotAddress(slot, places));
    for (int slot : member.outputs) addresses[m].push_back(SlotAddress(slot, places));
  }
  const int64_t rows = group.outer_extent;
  const int64_t chunk = std::max<int64_t>(group.row_chunk, 1);
  const int64_t chunks = (rows + chunk - 1) / chunk;
  const auto run_chunks = [&](int64_t first, int64_t last, uint8_t* thread_scratch) {
    std::vector<void*> redirected;
    for (int64_t c = first; c < last; ++c) {
      const int64_t begin = c * chunk;
      const int64_t end = std::min(rows, begin + chunk);
      for (size_t m = 0; m < group.members.size(); ++m) {
        const Step& member = group.members[m];
        redirected = addresses[m];
        const size_t inputs = member.inputs.size();
        for (size_t k = 0; k < redirected.size(); ++k) {
          const int slot = k < inputs ? member.inputs[k] : member.outputs[k - inputs];
          for (const RowGroupSlot& p : group.private_slots) {
            if (p.slot != slot) continue;
            // Row `begin` of the slot is the area's first byte. Integer
            // arithmetic: the address of row 0 may lie outside any object,
            // and the kernel only forms addresses of rows [begin, end).
            redirected[k] = reinterpret_cast<void*>(
                reinterpret_cast<uintptr_t>(thread_scratch + p.scratch_offset) -
                static_cast<uintptr_t>(begin * p.row_bytes));
          }
        }
        member.function(redirected.data(), begin, end);
      }
    }
  };
  // By the cost model, as a kernel: a split by size alone (every group
  // writing 64 KiB) woke a blocked worker (25-45 us) for a 27 us group in
  // each trip of a solver's loop, and made it twice as slow at 2 threads as
  // at 1 (docs/zoo.md, "Session 18").
  const int64_t workers = std::min<int64_t>(
      internal::ChunksNow(
          internal::RowGroupSplitParts(group, slots, threads, min_chunk_ns, min_bytes, false),
          internal::RowGroupSplitParts(group, slots, threads, min_chunk_ns, min_bytes, true)),
      chunks);
  if (workers <= 1) {
    run_chunks(0, chunks, scratch);
    return;
  }
  ThreadPool::Shared().ParallelFor(workers, static_cast<int>(workers - 1), [&](int64_t t) {
    run_chunks(t * chunks / workers, (t + 1) * chunks / workers,
               scratch + t * group.group_scratch_per_thread);
  });
}

absl::Status RunKernelGuarded(const Step& step, void* const* addresses,
                              absl::Span<const int64_t> sizes, int threads, int64_t min_chunk_ns) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  struct Region {
    void* base = nullptr;
    size_t length = 0;
    uint8_t* data = nullptr;
  };
  std::vector<Region> regions;
  const auto unmap = [&regions] {
    for (const Region& region : regions) munmap(region.base, region.length);
  };
  std::vector<void*> guarded(sizes.size());
  const size_t inputs = step.inputs.size();
  for (size_t k = 0; k < sizes.size(); ++k) {
    // A buffer that appears twice (an in-place step) gets one copy.
    for (size_t j = 0; j < k; ++j) {
      if (addresses[j] == addresses[k] && sizes[j] == sizes[k]) guarded[k] = guarded[j];
    }
    if (guarded[k] != nullptr) continue;
    const size_t size = static_cast<size_t>(sizes[k]);
    const size_t body = (size + page - 1) / page * page;
    Region region;
    region.length = body + 2 * page;
    region.base = mmap(nullptr, region.length, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (region.base == MAP_FAILED ||
        (body > 0 && mprotect(static_cast<uint8_t*>(region.base) + page, body,
                              PROT_READ | PROT_WRITE) != 0)) {
      if (region.base != MAP_FAILED) munmap(region.base, region.length);
      unmap();
      return absl::ResourceExhaustedError("guard pages: cannot map a buffer");
    }
    region.data = static_cast<uint8_t*>(region.base) + page + body - size;
    if (size > 0) std::memcpy(region.data, addresses[k], size);
    regions.push_back(region);
    guarded[k] = region.data;
  }
  RunKernel(step, guarded.data(), threads, min_chunk_ns);
  for (size_t k = inputs; k < sizes.size(); ++k) {
    if (sizes[k] > 0) std::memcpy(addresses[k], guarded[k], static_cast<size_t>(sizes[k]));
  }
  unmap();
  return absl::OkStatus();
}

// Runs an interpreted step: its operands are read from their leaves' slots
// and its result is written to its leaves' slots.
absl::Status RunInterpreted(const Step& step, const std::vector<BufferSlot>& slots,
                            const RunPlaces& places, std::unique_ptr<Evaluator>* evaluator,
                            const RunContext& context) {
  const Instruction& instruction = *step.instruction;
  std::vector<Literal> operands;
  operands.reserve(instruction.operand_count());
  size_t next = 0;
  for (const Instruction* operand : instruction.operands()) {
    Literal value(operand->shape());
    ForEachArrayLeaf(&value, [&](Literal* leaf) {
      const int slot = step.inputs[next++];
      absl::Span<uint8_t> bytes = leaf->data();
      if (!bytes.empty()) std::memcpy(bytes.data(), SlotAddress(slot, places), bytes.size());
    });
    operands.push_back(std::move(value));
  }
  XJIT_CHECK(next == step.inputs.size());
  std::vector<const Literal*> operand_pointers;
  for (const Literal& operand : operands) operand_pointers.push_back(&operand);
  if (*evaluator == nullptr) {
    // The host queues are the run's; a collective left to the evaluator in a
    // replicated run fails (it would see one replica) instead of computing a
    // single replica's answer.
    EvaluatorOptions options;
    options.queues = context.queues;
    options.rng_state = context.rng_state;
    if (context.communicator != nullptr) {
      options.replica_count = context.communicator->replica_count();
    }
    *evaluator = std::make_unique<Evaluator>(options);
  }
  absl::StatusOr<Literal> value = (*evaluator)->EvaluateInstruction(instruction, operand_pointers);
  // EvaluateInstruction's errors name the instruction already.
  if (!value.ok()) return value.status();
  Literal result = value->Relayout(instruction.shape());
  next = 0;
  absl::Status status;
  ForEachArrayLeaf(&result, [&](Literal* leaf) {
    const int slot = step.outputs[next++];
    absl::Span<const uint8_t> bytes = leaf->data();
    if (static_cast<int64_t>(bytes.size()) != slots[slot].size) {
      status = absl::InternalError(absl::StrCat(instruction.name(), ": evaluator returned ",
                                                bytes.size(), " bytes, expected ", slots[slot].size));
      return;
    }
    if (!bytes.empty()) std::memcpy(SlotAddress(slot, places), bytes.data(), bytes.size());
  });
  XJIT_CHECK(next == step.outputs.size());
  return status;
}

// Whether `argument` may stand for a parameter of shape `parameter`.
// The bytes of `leaves` one after another (the flattened layout of
// buffer_plan.h), copied into `flat` or, with `from_flat`, out of it.
void CopyLeaves(absl::Span<const int> leaves, const std::vector<BufferSlot>& slots,
                const RunPlaces& places, uint8_t* flat, bool from_flat) {
  for (int leaf : leaves) {
    const BufferSlot& slot = slots[leaf];
    if (slot.size == 0) continue;
    uint8_t* address = SlotAddress(leaf, places);
    if (from_flat) {
      internal::CopySplit(address, flat, slot.size, places.threads, places.split_min_chunk_ns);
    } else {
      internal::CopySplit(flat, address, slot.size, places.threads, places.split_min_chunk_ns);
    }
    flat += slot.size;
  }
}

int64_t LeafBytes(absl::Span<const int> leaves, const std::vector<BufferSlot>& slots) {
  int64_t bytes = 0;
  for (int leaf : leaves) bytes += slots[leaf].size;
  return bytes;
}

// Runs a loop on its leaves (PrepareLoopOnLeaves) with `kept`, the loop as
// an earlier run of this step prepared it, when it was prepared for these
// addresses; otherwise prepares it afresh into `kept`.
absl::Status RunWhileOnLeaves(const Step& step, const Executable& condition, const Executable& body,
                              absl::Span<uint8_t* const> from, absl::Span<uint8_t* const> to,
                              absl::Span<const int64_t> sizes, int64_t max_iterations, bool bind,
                              const RunContext& context, int threads, int64_t min_chunk_ns,
                              std::unique_ptr<KeptLoop>& kept) {
  const bool fits = kept != nullptr && kept->on_leaves && (bind || !kept->bound) &&
                    absl::c_equal(kept->from, from) && absl::c_equal(kept->to, to);
  if (!fits) {
    kept.reset();
    XJIT_ASSIGN_OR_RETURN(kept,
                          internal::PrepareLoopOnLeaves(step, condition, body, from, to,
                                                                  sizes, bind));
  }
  KeptLoop& loop = *kept;
  const size_t n = to.size();
  // Private leaves first: copies into output slots never touch an init leaf.
  for (size_t k = 0; k < n; ++k) {
    if (loop.own[k] != nullptr && sizes[k] > 0) {
      internal::CopySplit(static_cast<uint8_t*>(loop.leaves[k]), from[k], sizes[k], threads,
                          min_chunk_ns);
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (loop.own[k] == nullptr && from[k] != to[k] && sizes[k] > 0) {
      internal::CopySplit(to[k], from[k], sizes[k], threads, min_chunk_ns);
    }
  }
  if (loop.bound) {
    if (context.loop_counts != nullptr) {
      context.loop_counts->bound.fetch_add(1, std::memory_order_relaxed);
    }
    const BoundPhase phase{&loop.condition, &loop.keep_going, &loop.body};
    int64_t iterations = 0;
    const absl::Status status =
        RunBoundWhile({&phase, 1}, max_iterations, step.name, &iterations, &loop.native);
    if (loop.native.last_native && context.loop_counts != nullptr) {
      context.loop_counts->native.fetch_add(1, std::memory_order_relaxed);
      if (loop.native.loop.inlined_kernels > 0) {
        context.loop_counts->native_inlined.fetch_add(1, std::memory_order_relaxed);
      }
    }
    XJIT_RETURN_IF_ERROR(status);
  } else {
    if (context.loop_counts != nullptr) {
      context.loop_counts->stepped.fetch_add(1, std::memory_order_relaxed);
    }
    for (int64_t iteration = 0;; ++iteration) {
      XJIT_RETURN_IF_ERROR(CheckInterrupt());
      XJIT_RETURN_IF_ERROR(condition.ExecuteOnLeaves(loop.leaves, &loop.keep_going,
                                                     loop.condition_arena.get(), context));
      if (loop.keep_going == 0) break;
      // The evaluator's rule, as in RunWhile.
      if (max_iterations >= 0 && iteration >= max_iterations) {
        return absl::ResourceExhaustedError(absl::StrFormat(
            "while loop %s ran more than %d iterations", step.name, max_iterations));
      }
      XJIT_RETURN_IF_ERROR(
          body.ExecuteOnLeaves(loop.leaves, nullptr, loop.body_arena.get(), context));
    }
  }
  for (size_t k = 0; k < n; ++k) {
    if (loop.own[k] != nullptr && sizes[k] > 0) {
      internal::CopySplit(to[k], static_cast<const uint8_t*>(loop.leaves[k]), sizes[k], threads,
                          min_chunk_ns);
    }
  }
  return absl::OkStatus();
}

// The loop state lives in the while's output slots when the body updates
// it in place (RunWhileOnLeaves); otherwise in one flat buffer that the
// body updates in place (state_in_place), or in two: the body reads one and
// writes the other, then they swap. Either way, with `bind`, a loop whose
// condition and body bind (bound_steps.h) runs over bound steps, bound in
// an earlier run of this step when `kept` holds that binding (kept_loop.h).
absl::Status RunWhile(const Step& step, const std::vector<BufferSlot>& slots,
                      const RunPlaces& places, int64_t max_iterations, bool bind,
                      const RunContext& context, std::unique_ptr<KeptLoop>& kept) {
  const Executable& condition = *step.subprograms[0];
  const Executable& body = *step.subprograms[1];
  if (body.state_in_place() && body.runs_on_leaves() && condition.runs_on_leaves() &&
      step.inputs.size() == step.outputs.size() && !step.outputs.empty()) {
    std::vector<uint8_t*> from, to;
    std::vector<int64_t> sizes;
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      from.push_back(SlotAddress(step.inputs[k], places));
      to.push_back(SlotAddress(step.outputs[k], places));
      sizes.push_back(slots[step.outputs[k]].size);
    }
    return RunWhileOnLeaves(step, condition, body, from, to, sizes, max_iterations, bind, context,
                            places.threads, places.split_min_chunk_ns, kept);
  }
  const size_t bytes = static_cast<size_t>(LeafBytes(step.inputs, slots));
  if (bind) {
    if (kept == nullptr || kept->on_leaves) {
      kept = std::make_unique<KeptLoop>();
      auto flat = std::make_unique<BoundFlatWhile>();
      kept->bound = flat->Bind(condition, body, static_cast<int64_t>(bytes));
      if (kept->bound) kept->flat = std::move(flat);
    }
    if (kept->bound) {
      BoundFlatWhile& bound = *kept->flat;
      if (context.loop_counts != nullptr) {
        context.loop_counts->bound.fetch_add(1, std::memory_order_relaxed);
      }
      CopyLeaves(step.inputs, slots, places, bound.state(), /*from_flat=*/false);
      const absl::Status status = bound.Run(max_iterations, step.name);
      if (bound.ran_native() && context.loop_counts != nullptr) {
        context.loop_counts->native.fetch_add(1, std::memory_order_relaxed);
        if (bound.ran_inlined()) {
          context.loop_counts->native_inlined.fetch_add(1, std::memory_order_relaxed);
        }
      }
      XJIT_RETURN_IF_ERROR(status);
      CopyLeaves(step.outputs, slots, places, bound.final_state(), /*from_flat=*/true);
      return absl::OkStatus();
    }
  }
  const bool in_place = body.state_in_place();
  // Uninitialised: every byte is copied in before it is read.
  std::unique_ptr<uint8_t[]> state(new uint8_t[std::max<size_t>(bytes, 1)]);
  std::unique_ptr<uint8_t[]> next(in_place ? nullptr : new uint8_t[std::max<size_t>(bytes, 1)]);
  CopyLeaves(step.inputs, slots, places, state.get(), /*from_flat=*/false);
  if (context.loop_counts != nullptr) {
    context.loop_counts->stepped.fetch_add(1, std::memory_order_relaxed);
  }
  for (int64_t iteration = 0;; ++iteration) {
    XJIT_RETURN_IF_ERROR(CheckInterrupt());
    uint8_t keep_going = 0;
    const void* argument = state.get();
    XJIT_RETURN_IF_ERROR(condition.Execute({&argument, 1}, &keep_going, context));
    if (keep_going == 0) break;
    // The evaluator's rule (interpreter/evaluator.cc): the body may run
    // max_iterations times; needing one more iteration is the error.
    if (max_iterations >= 0 && iteration >= max_iterations) {
      return absl::ResourceExhaustedError(absl::StrFormat(
          "while loop %s ran more than %d iterations", step.name, max_iterations));
    }
    if (in_place) {
      XJIT_RETURN_IF_ERROR(body.Execute({&argument, 1}, state.get(), context));
      continue;
    }
    XJIT_RETURN_IF_ERROR(body.Execute({&argument, 1}, next.get(), context));
    state.swap(next);
  }
  CopyLeaves(step.outputs, slots, places, state.get(), /*from_flat=*/true);
  return absl::OkStatus();
}

// Runs the branch the selector picks. A branch that runs on leaves (every
// branch has one parameter; Executable::ExecuteOnLeaves) reads the
// operand's leaves where they lie; another gets them copied into one flat
// argument. The result goes into a flat buffer, `kept_result`, allocated on
// the step's first run and kept by the executable for its next ones (not
// zero-filled: the branch writes every byte), then out to the outputs. A
// zero-filled argument and result allocated per run were a quarter of a
// solver's run at 2 threads (page faults and memsets when malloc gave the
// pages back between runs), and the operand copy was 256 KB per iteration
// of a CG loop.
absl::Status RunConditional(const Step& step, const std::vector<BufferSlot>& slots,
                            const RunPlaces& places, const RunContext& context,
                            std::unique_ptr<uint8_t[]>& kept_result) {
  const BufferSlot& selector = slots[step.inputs[0]];
  const uint8_t* selector_address = SlotAddress(step.inputs[0], places);
  const int64_t n = static_cast<int64_t>(step.subprograms.size());
  int64_t branch;
  if (selector.shape.element_type() == ElementType::kPred) {
    branch = *selector_address != 0 ? 0 : 1;
  } else {
    int32_t index;  // The verifier allows pred or s32 selectors only.
    std::memcpy(&index, selector_address, sizeof(index));
    branch = index < 0 || index >= n ? n - 1 : index;
  }
  size_t first = 1;
  for (int64_t k = 0; k < branch; ++k) first += step.operand_leaves[k];
  const absl::Span<const int> operand =
      absl::MakeConstSpan(step.inputs).subspan(first, step.operand_leaves[branch]);
  const int64_t result_bytes = LeafBytes(step.outputs, slots);
  if (kept_result == nullptr) {
    kept_result.reset(new (std::nothrow) uint8_t[std::max<int64_t>(result_bytes, 1)]);
    if (kept_result == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "out of memory: conditional ", step.name, " needs ", result_bytes, " bytes of result"));
    }
  }
  const Executable& chosen = *step.subprograms[branch];
  if (chosen.runs_on_leaves() && !chosen.state_in_place()) {
    absl::InlinedVector<void*, 16> leaves;
    for (int leaf : operand) leaves.push_back(SlotAddress(leaf, places));
    XJIT_RETURN_IF_ERROR(chosen.ExecuteOnLeaves(leaves, kept_result.get(), nullptr, context));
  } else {
    const int64_t argument_bytes = LeafBytes(operand, slots);
    std::unique_ptr<uint8_t[]> argument_bytes_buffer(
        new (std::nothrow) uint8_t[std::max<int64_t>(argument_bytes, 1)]);
    if (argument_bytes_buffer == nullptr) {
      return absl::ResourceExhaustedError(absl::StrCat("out of memory: conditional ", step.name,
                                                       " needs ", argument_bytes,
                                                       " bytes of operand"));
    }
    CopyLeaves(operand, slots, places, argument_bytes_buffer.get(), /*from_flat=*/false);
    const void* argument = argument_bytes_buffer.get();
    XJIT_RETURN_IF_ERROR(chosen.Execute({&argument, 1}, kept_result.get(), context));
  }
  CopyLeaves(step.outputs, slots, places, kept_result.get(), /*from_flat=*/true);
  return absl::OkStatus();
}

absl::Status CheckArgument(const Shape& parameter, const Literal& argument, int64_t i) {
  if (!parameter.Compatible(argument.shape())) {
    return absl::InvalidArgumentError(
        absl::StrCat("argument ", i, " has shape ", argument.shape().ToString(false),
                     " but parameter ", i, " has shape ", parameter.ToString(false)));
  }
  return absl::OkStatus();
}

}  // namespace

int64_t FlatOffsets::Of(const Shape& shape, const ShapeIndex& index) {
  int64_t offset = 0;
  const Shape* current = &shape;
  for (int64_t i : index) {
    std::vector<int64_t>& starts = element_offsets_[current];
    if (starts.empty()) {
      int64_t start = 0;
      for (const Shape& element : current->tuple_shapes()) {
        starts.push_back(start);
        start += ByteSize(element);
      }
    }
    offset += starts[i];
    current = &current->tuple_shapes(i);
  }
  return offset;
}

int64_t ArrayLeafCount(const Shape& shape) {
  if (shape.IsArray()) return 1;
  if (!shape.IsTuple()) return 0;
  int64_t count = 0;
  for (const Shape& element : shape.tuple_shapes()) count += ArrayLeafCount(element);
  return count;
}

std::vector<uint8_t> FlattenLiteral(const Literal& literal) {
  std::vector<uint8_t> out;
  ForEachArrayLeaf(&literal, [&](const Literal* leaf) {
    absl::Span<const uint8_t> data = leaf->data();
    out.insert(out.end(), data.begin(), data.end());
  });
  return out;
}

Literal UnflattenLiteral(const Shape& shape, const uint8_t* data) {
  Literal literal(shape);
  ForEachArrayLeaf(&literal, [&](Literal* leaf) {
    absl::Span<uint8_t> bytes = leaf->data();
    if (!bytes.empty()) std::memcpy(bytes.data(), data, bytes.size());
    data += bytes.size();
  });
  return literal;
}

Executable::Executable(ExecutableSpec spec)
    : Executable(std::make_shared<const ExecutableSpec>(std::move(spec))) {}

Executable::~Executable() = default;

Executable::Executable(std::shared_ptr<const ExecutableSpec> spec) : spec_(std::move(spec)) {
  kept_loops_.resize(spec_->steps.size());
  kept_results_.resize(spec_->steps.size());
  for (const Step& step : spec_->steps) {
    if (step.kind != Step::Kind::kLibraryCall) continue;
    XJIT_CHECK((step.library_call.function != nullptr) !=
               (step.library_call.context_function != nullptr));
    XJIT_CHECK(step.library_call.scratch_bytes <= spec_->plan.scratch_bytes);
  }
  deep_ = spec_->needs_large_stack.has_value()
              ? *spec_->needs_large_stack
              : spec_->module != nullptr && NeedsLargeStack(*spec_->module);
  XJIT_CHECK(spec_->plan.scratch_offset % kBufferAlignment == 0);
  XJIT_CHECK(spec_->plan.scratch_offset + spec_->plan.scratch_bytes <= spec_->plan.temp_bytes ||
             spec_->plan.scratch_bytes == 0);
  MapSlotsToLeaves();
}

// For ExecuteOnLeaves: finds the leaf of parameter 0 that holds each slot of
// the parameter (and of a state_in_place result, which has the parameter's
// leaves). A slot is a range within one leaf (a leaf's buffer or a part of
// it, as a bitcast's); one that is not leaves the executable without that
// way to run.
void Executable::MapSlotsToLeaves() {
  if (spec_->parameter_shapes.size() != 1) return;
  std::vector<int64_t> starts;
  std::vector<int64_t> sizes;
  int64_t offset = 0;
  ForEachArrayLeafShape(spec_->parameter_shapes[0], [&](const Shape& leaf) {
    starts.push_back(offset);
    sizes.push_back(ByteSize(leaf));
    offset += sizes.back();
  });
  if (starts.empty()) return;
  const std::vector<BufferSlot>& slots = spec_->plan.slots;
  std::vector<LeafRef> refs(slots.size());
  for (size_t i = 0; i < slots.size(); ++i) {
    const BufferSlot& slot = slots[i];
    const bool of_state = slot.kind == BufferSlot::Kind::kParameter ||
                          (spec_->state_in_place && slot.kind == BufferSlot::Kind::kResult);
    if (!of_state) continue;
    // The leaf that holds the whole range; a size-0 slot may take any
    // leaf whose range its offset touches (nothing is read or written).
    for (size_t k = 0; k < starts.size() && refs[i].leaf < 0; ++k) {
      if (starts[k] <= slot.offset && slot.offset + slot.size <= starts[k] + sizes[k] &&
          (sizes[k] > 0 || slot.size == 0)) {
        refs[i].leaf = static_cast<int>(k);
        refs[i].offset = slot.offset - starts[k];
      }
    }
    if (refs[i].leaf < 0) return;
  }
  leaf_refs_ = std::move(refs);
  parameter_leaves_ = static_cast<int64_t>(starts.size());
  runs_on_leaves_ = true;
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal> arguments) const {
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  return Run(absl::MakeConstSpan(pointers));
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal* const> arguments) const {
  return Run(arguments, RunContext());
}

absl::StatusOr<Literal> Executable::Run(absl::Span<const Literal* const> arguments,
                                        const RunContext& context) const {
  const std::vector<Shape>& parameters = spec_->parameter_shapes;
  if (arguments.size() != parameters.size()) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", parameters.size(),
                                                   " arguments, got ", arguments.size()));
  }
  std::vector<std::vector<uint8_t>> flattened(arguments.size());
  std::vector<const void*> addresses(arguments.size());
  for (size_t i = 0; i < arguments.size(); ++i) {
    if (arguments[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat("argument ", i, " is null"));
    }
    XJIT_RETURN_IF_ERROR(CheckArgument(parameters[i], *arguments[i], static_cast<int64_t>(i)));
    if (arguments[i]->shape() == parameters[i] && parameters[i].IsArray()) {
      addresses[i] = arguments[i]->data().data();
    } else {
      flattened[i] = FlattenLiteral(arguments[i]->Relayout(parameters[i]));
      addresses[i] = flattened[i].data();
    }
  }
  // The result at a kBufferAlignment boundary, as the arena's buffers are:
  // a large heap block starts 16 bytes past a page, which costs vector
  // stores that split cache lines (and row programs' streamed stores a
  // scalar head per row).
  const int64_t result_bytes = spec_->plan.result_bytes;
  std::unique_ptr<uint8_t[]> block(new (std::nothrow) uint8_t[result_bytes + kBufferAlignment]);
  if (block == nullptr) {
    return absl::ResourceExhaustedError(
        absl::StrCat("out of memory: the result needs ", result_bytes, " bytes"));
  }
  uint8_t* result = block.get();
  result += (kBufferAlignment - reinterpret_cast<uintptr_t>(result) % kBufferAlignment) %
            kBufferAlignment;
  XJIT_RETURN_IF_ERROR(Execute(addresses, result, context));
  return UnflattenLiteral(spec_->result_shape, result);
}

absl::Status Executable::Execute(absl::Span<const void* const> parameters, void* result) const {
  return Execute(parameters, result, RunContext());
}

absl::Status Executable::Execute(absl::Span<const void* const> parameters, void* result,
                                 const RunContext& context) const {
  if (parameters.size() != spec_->parameter_shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected ", spec_->parameter_shapes.size(), " parameter buffers, got ", parameters.size()));
  }
  for (size_t i = 0; i < parameters.size(); ++i) {
    if (parameters[i] == nullptr && ByteSize(spec_->parameter_shapes[i]) > 0) {
      return absl::InvalidArgumentError(absl::StrCat("parameter buffer ", i, " is null"));
    }
  }
  if (result == nullptr && spec_->plan.result_bytes > 0) {
    return absl::InvalidArgumentError("result buffer is null");
  }
  if (spec_->state_in_place && (parameters.size() != 1 || parameters[0] != result)) {
    return absl::InvalidArgumentError(
        "this executable updates its state in place: the result buffer must be parameter 0's");
  }
  Frame frame;
  frame.parameters = parameters;
  frame.result = result;
  return RunFrame(frame, context);
}

absl::Status Executable::ExecuteOnLeaves(absl::Span<void* const> leaves, void* result,
                                         uint8_t* arena, const RunContext& context) const {
  if (!runs_on_leaves_) {
    return absl::FailedPreconditionError(
        absl::StrCat(spec_->name, ": this executable cannot run on its parameter's leaves"));
  }
  if (static_cast<int64_t>(leaves.size()) != parameter_leaves_) {
    return absl::InvalidArgumentError(absl::StrCat("expected ", parameter_leaves_,
                                                   " parameter leaves, got ", leaves.size()));
  }
  if (!spec_->state_in_place && result == nullptr && spec_->plan.result_bytes > 0) {
    return absl::InvalidArgumentError("result buffer is null");
  }
  Frame frame;
  frame.result = result;
  frame.leaves = leaves;
  frame.arena = arena;
  return RunFrame(frame, context);
}

std::unique_ptr<uint8_t[]> Executable::TakeArena() const {
  {
    std::lock_guard<std::mutex> lock(arena_mutex_);
    if (kept_arena_ != nullptr) return std::move(kept_arena_);
  }
  return std::unique_ptr<uint8_t[]>(new (std::nothrow)
                                        uint8_t[spec_->plan.temp_bytes + kBufferAlignment]);
}

void Executable::KeepArena(std::unique_ptr<uint8_t[]> arena) const {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  if (kept_arena_ == nullptr) kept_arena_ = std::move(arena);
}

std::unique_ptr<KeptLoop> Executable::TakeKeptLoop(size_t step) const {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  return std::move(kept_loops_[step]);
}

void Executable::KeepLoop(size_t step, std::unique_ptr<KeptLoop> loop) const {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  if (kept_loops_[step] == nullptr) kept_loops_[step] = std::move(loop);
}

std::unique_ptr<uint8_t[]> Executable::TakeKeptResult(size_t step) const {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  return std::move(kept_results_[step]);
}

void Executable::KeepResult(size_t step, std::unique_ptr<uint8_t[]> result) const {
  std::lock_guard<std::mutex> lock(arena_mutex_);
  if (kept_results_[step] == nullptr) kept_results_[step] = std::move(result);
}

absl::Status Executable::RunFrame(const Frame& frame, const RunContext& context) const {
  if (deep_ && !OnLargeStack()) {
    absl::Status status;
    XJIT_RETURN_IF_ERROR(RunOnLargeStack([&] { status = RunFrame(frame, context); }));
    return status;
  }
  if (context.rng_state == nullptr) {
    // One generator state per run, shared by its rng steps, the evaluators
    // of its interpreted steps and its loops' and branches' runs; it starts
    // where a fresh evaluator's does, so a run draws what RunModule draws.
    RunContext with_state = context;
    uint64_t rng_state = EvaluatorOptions().rng_seed;
    with_state.rng_state = &rng_state;
    return RunFrame(frame, with_state);
  }
  // The arena, aligned by AlignArena below.
  const int64_t temp_bytes = spec_->plan.temp_bytes;
  std::unique_ptr<uint8_t[]> own_arena;
  uint8_t* temp = frame.arena;
  if (temp == nullptr) {
    own_arena = TakeArena();
    if (own_arena == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrCat("out of memory: the run needs ", temp_bytes, " bytes of temporaries"));
    }
    temp = own_arena.get();
  }
  // The arena goes back for the next run however this one ends.
  struct KeepOnExit {
    const Executable* executable;
    std::unique_ptr<uint8_t[]>* arena;
    ~KeepOnExit() {
      if (*arena != nullptr) executable->KeepArena(std::move(*arena));
    }
  } keep_on_exit{this, &own_arena};
  temp = internal::AlignArena(temp);

  RunPlaces places;
  places.slots = &spec_->plan.slots;
  places.parameters = frame.parameters;
  places.temp = temp;
  places.result = static_cast<uint8_t*>(frame.result);
  places.constants = &spec_->constants;
  places.threads = spec_->threads;
  places.split_min_chunk_ns = spec_->split_min_chunk_ns;
  if (!frame.leaves.empty()) {
    places.leaves = frame.leaves.data();
    places.leaf_refs = leaf_refs_.data();
  }
  const std::vector<BufferSlot>& slots = spec_->plan.slots;

  std::unique_ptr<Evaluator> evaluator;  // Created on the first interpreted step.
  // Inline: a loop body runs this once per iteration, and a heap block per
  // run was most of a scalar loop's iteration (malloc and free: 40%).
  absl::InlinedVector<void*, 16> addresses;
  for (const Step& step : spec_->steps) {
    switch (step.kind) {
      case Step::Kind::kKernel: {
        addresses.clear();
        for (int slot : step.inputs) addresses.push_back(SlotAddress(slot, places));
        for (int slot : step.outputs) addresses.push_back(SlotAddress(slot, places));
        if (GuardPagesRequested()) {
          std::vector<int64_t> sizes;
          for (int slot : step.inputs) sizes.push_back(slots[slot].size);
          for (int slot : step.outputs) sizes.push_back(slots[slot].size);
          XJIT_RETURN_IF_ERROR(RunKernelGuarded(step, addresses.data(), sizes, spec_->threads,
                                                spec_->split_min_chunk_ns));
          break;
        }
        RunKernel(step, addresses.data(), spec_->threads, spec_->split_min_chunk_ns);
        break;
      }
      case Step::Kind::kRowGroup:
        if (GuardPagesRequested()) {
          // Each member alone on guarded copies of its buffers, unchunked.
          for (const Step& member : step.members) {
            addresses.clear();
            std::vector<int64_t> sizes;
            for (int slot : member.inputs) {
              addresses.push_back(SlotAddress(slot, places));
              sizes.push_back(slots[slot].size);
            }
            for (int slot : member.outputs) {
              addresses.push_back(SlotAddress(slot, places));
              sizes.push_back(slots[slot].size);
            }
            XJIT_RETURN_IF_ERROR(RunKernelGuarded(member, addresses.data(), sizes, spec_->threads,
                                                  spec_->split_min_chunk_ns));
          }
          break;
        }
        RunRowGroup(step, slots, places, temp + step.group_scratch_offset, spec_->threads,
                    spec_->split_min_chunk_ns, spec_->parallel_min_bytes);
        break;
      case Step::Kind::kLibraryCall:
        XJIT_RETURN_IF_ERROR(
            RunLibraryCall(step, slots, places, temp + spec_->plan.scratch_offset, context));
        break;
      case Step::Kind::kCopy: {
        const BufferSlot& source = slots[step.inputs[0]];
        const BufferSlot& destination = slots[step.outputs[0]];
        XJIT_CHECK(source.size == destination.size);
        if (source.size > 0) {
          internal::CopySplit(SlotAddress(step.outputs[0], places),
                              SlotAddress(step.inputs[0], places), source.size, spec_->threads,
                              spec_->split_min_chunk_ns);
        }
        break;
      }
      case Step::Kind::kInterpreted:
        XJIT_RETURN_IF_ERROR(RunInterpreted(step, slots, places, &evaluator, context));
        break;
      case Step::Kind::kWhile: {
        // Guard-page mode needs every kernel run on guarded copies, which
        // only the step-by-step path makes.
        const size_t index = static_cast<size_t>(&step - spec_->steps.data());
        std::unique_ptr<KeptLoop> kept = TakeKeptLoop(index);
        XJIT_RETURN_IF_ERROR(RunWhile(step, slots, places, spec_->max_while_iterations,
                                      spec_->bind_loops && !GuardPagesRequested(), context,
                                      kept));
        KeepLoop(index, std::move(kept));
        break;
      }
      case Step::Kind::kConditional: {
        const size_t index = static_cast<size_t>(&step - spec_->steps.data());
        std::unique_ptr<uint8_t[]> kept = TakeKeptResult(index);
        const absl::Status status = RunConditional(step, slots, places, context, kept);
        KeepResult(index, std::move(kept));
        XJIT_RETURN_IF_ERROR(status);
        break;
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace xjit::runtime
