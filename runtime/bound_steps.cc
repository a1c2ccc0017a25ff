// BoundSteps: resolving an executable's step addresses once (see
// bound_steps.h).
#include "runtime/bound_steps.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "runtime/bound_while.h"
#include "runtime/buffer_plan.h"
#include "runtime/executable_internal.h"
#include "runtime/kept_loop.h"

namespace xjit::runtime {

using internal::SlotAddress;

// Arranged as RunWhile arranges it: on the state's leaves in the while's
// output slots when the body updates the state in place (`on_leaves`), else
// in flat buffers (`flat`).
struct BoundSteps::NestedLoop {
  // On leaves: the loop bound over its leaves, and per leaf where it starts
  // (the operand's slot) and its bytes. A leaf already where the loop runs
  // on it (from == its leaf) costs nothing per entry: a state element the
  // plan keeps in one place across the loop — one the body passes through
  // unchanged, such as a sampler's data matrix — is neither copied in nor out.
  std::unique_ptr<KeptLoop> on_leaves;
  std::vector<int64_t> sizes;
  // Flat: the loop over its own buffers.
  BoundFlatWhile flat;
  // The operand's leaves into flat.state(), as RunWhile's CopyLeaves.
  BoundSteps copy_in;
  // Each output leaf's place and size, filled from the final state in order.
  std::vector<std::pair<uint8_t*, int64_t>> outputs;
  int64_t max_iterations = -1;
  std::string name;
  absl::Status status;
};

// A kernel that RunKernel splits between threads (always, or when a worker
// is awake: KernelWarmSplitChunks): bound as a library call
// (a plan and the buffers' addresses), so that everything that runs bound
// ops — Run, and native loops (native_loop.h), which call routines they do
// not emit — runs it with RunKernel's chunks.
struct BoundSteps::SplitKernel {
  KernelFunction function;
  int64_t extent;
  int64_t alignment;
  int64_t chunks;       // KernelSplitChunks
  int64_t warm_chunks;  // KernelWarmSplitChunks
  int threads;
};

void BoundSteps::RunSplitKernel(const void* plan, void* const* buffers, void* /*scratch*/) {
  const SplitKernel& kernel = *static_cast<const SplitKernel*>(plan);
  const int64_t chunks = internal::ChunksNow(kernel.chunks, kernel.warm_chunks);
  if (chunks <= 1) {
    kernel.function(buffers, 0, kernel.extent);
    return;
  }
  internal::RunKernelSplit(kernel.function, buffers, kernel.extent, kernel.alignment, chunks,
                           kernel.threads);
}

BoundSteps::BoundSteps() = default;
BoundSteps::~BoundSteps() = default;
BoundSteps::BoundSteps(BoundSteps&&) noexcept = default;
BoundSteps& BoundSteps::operator=(BoundSteps&&) noexcept = default;

bool BoundSteps::Bind(const Executable& executable, const BindBuffers& buffers) {
  ops_.clear();
  addresses_.clear();
  conditionals_.clear();
  loops_.clear();
  staging_.clear();
  split_kernels_.clear();
  bytes_touched_ = 0;
  has_unbounded_step_ = false;
  const ExecutableSpec& spec = *executable.shared_spec();
  const std::vector<BufferSlot>& slots = spec.plan.slots;
  internal::RunPlaces places;
  places.slots = &slots;
  places.parameters = buffers.parameters;
  places.temp = internal::AlignArena(buffers.arena);
  places.result = static_cast<uint8_t*>(buffers.result);
  places.constants = &spec.constants;
  if (!buffers.leaves.empty()) {
    if (!executable.runs_on_leaves()) return false;
    places.leaves = buffers.leaves.data();
    places.leaf_refs = executable.leaf_refs().data();
  }
  const auto refuse = [this] {
    ops_.clear();
    addresses_.clear();
    conditionals_.clear();
    loops_.clear();
    staging_.clear();
    split_kernels_.clear();
    return false;
  };
  for (const Step& step : spec.steps) {
    Op op;
    op.first_address = addresses_.size();
    switch (step.kind) {
      case Step::Kind::kKernel: {
        int64_t output_bytes = 0;
        for (int slot : step.outputs) output_bytes += slots[slot].size;
        for (int slot : step.inputs) {
          addresses_.push_back(SlotAddress(slot, places));
          bytes_touched_ += slots[slot].size;
        }
        for (int slot : step.outputs) addresses_.push_back(SlotAddress(slot, places));
        bytes_touched_ += output_bytes;
        const int64_t chunks =
            internal::KernelSplitChunks(step, spec.threads, spec.split_min_chunk_ns);
        const int64_t warm_chunks =
            internal::KernelWarmSplitChunks(step, spec.threads, spec.split_min_chunk_ns);
        if (warm_chunks > 1) {
          // Split as RunKernel splits it, called as a routine is.
          split_kernels_.push_back(std::make_unique<SplitKernel>(
              SplitKernel{step.function, step.outer_extent, step.outer_alignment, chunks,
                          warm_chunks, spec.threads}));
          op.kind = Op::Kind::kLibraryCall;
          op.library = &RunSplitKernel;
          op.plan = split_kernels_.back().get();
          break;
        }
        op.kind = Op::Kind::kKernel;
        op.kernel = step.function;
        op.extent = step.outer_extent;
        op.inline_program = step.inline_program.get();
        break;
      }
      case Step::Kind::kLibraryCall: {
        const LibraryCall& call = step.library_call;
        // A context routine returns a status and reads the run's context.
        if (call.function == nullptr) return refuse();
        // Routines may assume naturally aligned elements; a packed tuple
        // leaf need not be. As RunLibraryCall does per call, such a buffer
        // goes through an aligned copy — allocated once here, and copied by
        // bound copy steps around the call.
        struct CopyOut {
          uint8_t* place;
          const uint8_t* staged;
          int64_t size;
        };
        std::vector<CopyOut> copies_out;
        const auto add = [&](int slot, bool is_output) {
          uint8_t* place = SlotAddress(slot, places);
          const int64_t size = slots[slot].size;
          if (reinterpret_cast<uintptr_t>(place) % internal::ElementAlignment(slots[slot].shape) ==
              0) {
            addresses_.push_back(place);
            return true;
          }
          // operator new[] aligns to at least 16 bytes, more than any element needs.
          staging_.emplace_back(new (std::nothrow) uint8_t[static_cast<size_t>(
              std::max<int64_t>(size, 1))]);
          uint8_t* staged = staging_.back().get();
          if (staged == nullptr) return false;
          if (is_output) {
            copies_out.push_back({place, staged, size});
          } else {
            AddCopy(staged, place, size);
          }
          addresses_.push_back(staged);
          return true;
        };
        for (int slot : step.inputs) {
          if (!add(slot, false)) return refuse();
        }
        for (int slot : step.outputs) {
          if (!add(slot, true)) return refuse();
        }
        has_unbounded_step_ = true;
        op.kind = Op::Kind::kLibraryCall;
        op.library = call.function;
        op.plan = call.plan.get();
        op.scratch = call.scratch_bytes > 0 ? places.temp + spec.plan.scratch_offset : nullptr;
        ops_.push_back(op);
        for (const CopyOut& copy : copies_out) AddCopy(copy.place, copy.staged, copy.size);
        continue;
      }
      case Step::Kind::kCopy:
        AddCopy(SlotAddress(step.outputs[0], places), SlotAddress(step.inputs[0], places),
                slots[step.inputs[0]].size);
        continue;
      case Step::Kind::kConditional:
        if (!BindConditional(executable, step, places)) return refuse();
        continue;
      case Step::Kind::kWhile:
        if (!spec.bind_loops || !BindWhile(executable, step, places)) return refuse();
        continue;
      case Step::Kind::kInterpreted:
      case Step::Kind::kRowGroup:
        return refuse();
    }
    ops_.push_back(op);
  }
  // addresses_ has stopped growing: the ops that take addresses point into it.
  for (Op& op : ops_) {
    if (op.kind == Op::Kind::kKernel || op.kind == Op::Kind::kLibraryCall) {
      op.addresses = addresses_.data() + op.first_address;
    }
  }
  return true;
}

void BoundSteps::AddCopy(uint8_t* destination, const uint8_t* source, int64_t bytes) {
  if (bytes == 0) return;
  Op op;
  op.kind = Op::Kind::kCopy;
  op.destination = destination;
  op.source = source;
  op.bytes = static_cast<size_t>(bytes);
  ops_.push_back(op);
  bytes_touched_ += 2 * bytes;
}

// Each branch runs over buffers of its own, as RunConditional's are: the
// operand's leaves where they lie (a branch that runs on leaves) or a flat
// argument they are copied into, the flat result (copied out to the step's
// outputs) and the branch's arena.
bool BoundSteps::BindConditional(const Executable& executable, const Step& step,
                                 const internal::RunPlaces& places) {
  const std::vector<BufferSlot>& slots = executable.plan().slots;
  auto conditional = std::make_unique<Conditional>();
  conditional->selector = SlotAddress(step.inputs[0], places);
  conditional->pred_selector = slots[step.inputs[0]].shape.element_type() == ElementType::kPred;
  const auto allocate = [&](int64_t bytes) -> uint8_t* {
    conditional->storage.emplace_back(
        new (std::nothrow) uint8_t[static_cast<size_t>(std::max<int64_t>(bytes, 1))]);
    return conditional->storage.back().get();
  };
  int64_t result_bytes = 0;
  for (int leaf : step.outputs) result_bytes += slots[leaf].size;
  size_t first = 1;
  int64_t branch_bytes = 0;
  for (size_t k = 0; k < step.subprograms.size(); ++k) {
    const Executable& branch = *step.subprograms[k];
    const absl::Span<const int> operand =
        absl::MakeConstSpan(step.inputs).subspan(first, step.operand_leaves[k]);
    first += operand.size();
    // A branch that runs on leaves reads the operand where it lies; another
    // gets a flat argument, its leaves copied in before the branch's steps.
    const bool on_leaves = branch.runs_on_leaves() && !branch.state_in_place();
    int64_t argument_bytes = 0;
    for (int leaf : operand) argument_bytes += slots[leaf].size;
    uint8_t* argument = on_leaves ? nullptr : allocate(argument_bytes);
    uint8_t* result = allocate(result_bytes);
    uint8_t* arena = allocate(branch.arena_bytes());
    if ((!on_leaves && argument == nullptr) || result == nullptr || arena == nullptr) {
      return false;
    }
    const void* parameter = argument;
    std::vector<void*> leaves;
    BindBuffers buffers;
    if (on_leaves) {
      for (int leaf : operand) leaves.push_back(SlotAddress(leaf, places));
      buffers.leaves = leaves;
    } else {
      buffers.parameters = {&parameter, 1};
    }
    buffers.result = result;
    buffers.arena = arena;
    BoundSteps bound;
    if (!bound.Bind(branch, buffers)) return false;
    if (!on_leaves) {
      BoundSteps copies;
      for (int leaf : operand) {
        copies.AddCopy(argument, SlotAddress(leaf, places), slots[leaf].size);
        argument += slots[leaf].size;
      }
      bound.ops_.insert(bound.ops_.begin(), copies.ops_.begin(), copies.ops_.end());
    }
    for (int leaf : step.outputs) {
      bound.AddCopy(SlotAddress(leaf, places), result, slots[leaf].size);
      result += slots[leaf].size;
    }
    branch_bytes = std::max(branch_bytes, bound.bytes_touched_);
    has_unbounded_step_ = has_unbounded_step_ || bound.has_unbounded_step_;
    conditional->branches.push_back(std::move(bound));
  }
  bytes_touched_ += branch_bytes;
  Op op;
  op.kind = Op::Kind::kConditional;
  op.conditional = conditional.get();
  conditionals_.push_back(std::move(conditional));
  ops_.push_back(op);
  return true;
}

// RunWhile's flat arrangement, bound: the flat state buffers stay where
// they are for every run of the nested loop, so they are bound once here.
bool BoundSteps::BindWhile(const Executable& executable, const Step& step,
                           const internal::RunPlaces& places) {
  const std::vector<BufferSlot>& slots = executable.plan().slots;
  const Executable& condition = *step.subprograms[0];
  const Executable& body = *step.subprograms[1];
  auto nested = std::make_unique<NestedLoop>();
  nested->max_iterations = executable.shared_spec()->max_while_iterations;
  nested->name = step.name;
  has_unbounded_step_ = true;
  // RunWhile's choice of arrangement, made once: the addresses do not move.
  if (body.state_in_place() && body.runs_on_leaves() && condition.runs_on_leaves() &&
      step.inputs.size() == step.outputs.size() && !step.outputs.empty()) {
    std::vector<uint8_t*> from, to;
    for (size_t k = 0; k < step.outputs.size(); ++k) {
      from.push_back(SlotAddress(step.inputs[k], places));
      to.push_back(SlotAddress(step.outputs[k], places));
      nested->sizes.push_back(slots[step.outputs[k]].size);
    }
    absl::StatusOr<std::unique_ptr<KeptLoop>> prepared = internal::PrepareLoopOnLeaves(
        step, condition, body, from, to, nested->sizes, /*bind=*/true);
    if (!prepared.ok() || !(*prepared)->bound) return false;
    nested->on_leaves = *std::move(prepared);
    const KeptLoop& loop = *nested->on_leaves;
    for (size_t k = 0; k < from.size(); ++k) {
      // A private leaf is copied in and out; another only where it does not
      // already lie in its output slot.
      if (loop.own[k] != nullptr) {
        bytes_touched_ += 4 * nested->sizes[k];
      } else if (from[k] != to[k]) {
        bytes_touched_ += 2 * nested->sizes[k];
      }
    }
  } else {
    int64_t state_bytes = 0;
    for (int leaf : step.inputs) state_bytes += slots[leaf].size;
    if (!nested->flat.Bind(condition, body, state_bytes)) return false;
    uint8_t* state = nested->flat.state();
    for (int leaf : step.inputs) {
      nested->copy_in.AddCopy(state, SlotAddress(leaf, places), slots[leaf].size);
      state += slots[leaf].size;
    }
    for (int leaf : step.outputs) {
      if (slots[leaf].size > 0) {
        nested->outputs.emplace_back(SlotAddress(leaf, places), slots[leaf].size);
      }
    }
    bytes_touched_ += nested->copy_in.bytes_touched_ + 2 * state_bytes;
  }
  Op op;
  op.kind = Op::Kind::kWhile;
  op.loop = nested.get();
  loops_.push_back(std::move(nested));
  ops_.push_back(op);
  return true;
}

const absl::Status* BoundSteps::RunCompound(const Op& op) {
  if (op.kind == Op::Kind::kConditional) {
    return op.conditional->branches[op.conditional->Select()].Run();
  }
  NestedLoop& nested = *op.loop;
  if (nested.on_leaves != nullptr) {
    // RunWhileOnLeaves' copies, in its order: private leaves first, so that
    // copies into output slots never touch an init leaf.
    KeptLoop& loop = *nested.on_leaves;
    const size_t n = loop.leaves.size();
    for (size_t k = 0; k < n; ++k) {
      if (loop.own[k] != nullptr && nested.sizes[k] > 0) {
        MoveBytes(loop.own[k].get(), loop.from[k], static_cast<size_t>(nested.sizes[k]));
      }
    }
    for (size_t k = 0; k < n; ++k) {
      if (loop.own[k] == nullptr && loop.from[k] != loop.to[k] && nested.sizes[k] > 0) {
        MoveBytes(loop.to[k], loop.from[k], static_cast<size_t>(nested.sizes[k]));
      }
    }
    const BoundPhase phase{&loop.condition, &loop.keep_going, &loop.body};
    int64_t iterations = 0;
    nested.status = RunBoundWhile({&phase, 1}, nested.max_iterations, nested.name, &iterations,
                                  &loop.native);
    if (!nested.status.ok()) return &nested.status;
    for (size_t k = 0; k < n; ++k) {
      if (loop.own[k] != nullptr && nested.sizes[k] > 0) {
        MoveBytes(loop.to[k], loop.own[k].get(), static_cast<size_t>(nested.sizes[k]));
      }
    }
    return nullptr;
  }
  (void)nested.copy_in.Run();  // Copies only: nothing to fail.
  nested.status = nested.flat.Run(nested.max_iterations, nested.name);
  if (!nested.status.ok()) return &nested.status;
  const uint8_t* from = nested.flat.final_state();
  // Mostly scalars: inline (a libc call per leaf showed in numpyro_hmc's
  // leapfrog loops).
  for (const auto& [to, bytes] : nested.outputs) {
    MoveBytes(to, from, static_cast<size_t>(bytes));
    from += bytes;
  }
  return nullptr;
}

}  // namespace xjit::runtime
