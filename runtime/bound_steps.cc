// BoundSteps: resolving an executable's step addresses once (see
// bound_steps.h).
#include "runtime/bound_steps.h"

#include <cstdint>
#include <vector>

#include "runtime/buffer_plan.h"
#include "runtime/executable_internal.h"

namespace xjit::runtime {

using internal::SlotAddress;

bool BoundSteps::Bind(const Executable& executable, const BindBuffers& buffers) {
  ops_.clear();
  addresses_.clear();
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
  // Addresses go into addresses_ first and ops point into it once it has
  // stopped growing; until then an op keeps its first index in `addresses`.
  std::vector<size_t> first_address;
  const auto refuse = [this] {
    ops_.clear();
    addresses_.clear();
    return false;
  };
  for (const Step& step : spec.steps) {
    Op op;
    const size_t first = addresses_.size();
    switch (step.kind) {
      case Step::Kind::kKernel: {
        int64_t output_bytes = 0;
        for (int slot : step.outputs) output_bytes += slots[slot].size;
        if (!internal::KernelRunsUnsplit(step, output_bytes, spec.threads,
                                         spec.parallel_min_bytes)) {
          return refuse();
        }
        op.kind = Op::Kind::kKernel;
        op.kernel = step.function;
        op.extent = step.outer_extent;
        for (int slot : step.inputs) addresses_.push_back(SlotAddress(slot, places));
        for (int slot : step.outputs) addresses_.push_back(SlotAddress(slot, places));
        break;
      }
      case Step::Kind::kLibraryCall: {
        const LibraryCall& call = step.library_call;
        // A context routine returns a status and reads the run's context.
        if (call.function == nullptr) return refuse();
        bool aligned = true;
        const auto add = [&](int slot) {
          uint8_t* place = SlotAddress(slot, places);
          aligned = aligned && reinterpret_cast<uintptr_t>(place) %
                                       internal::ElementAlignment(slots[slot].shape) ==
                                   0;
          addresses_.push_back(place);
        };
        for (int slot : step.inputs) add(slot);
        for (int slot : step.outputs) add(slot);
        if (!aligned) return refuse();
        op.kind = Op::Kind::kLibraryCall;
        op.library = call.function;
        op.plan = call.plan.get();
        op.scratch = call.scratch_bytes > 0 ? places.temp + spec.plan.scratch_offset : nullptr;
        break;
      }
      case Step::Kind::kCopy: {
        const int64_t bytes = slots[step.inputs[0]].size;
        if (bytes == 0) continue;
        op.kind = Op::Kind::kCopy;
        op.destination = SlotAddress(step.outputs[0], places);
        op.source = SlotAddress(step.inputs[0], places);
        op.bytes = static_cast<size_t>(bytes);
        break;
      }
      case Step::Kind::kInterpreted:
      case Step::Kind::kWhile:
      case Step::Kind::kConditional:
      case Step::Kind::kRowGroup:
        return refuse();
    }
    ops_.push_back(op);
    first_address.push_back(first);
  }
  for (size_t k = 0; k < ops_.size(); ++k) {
    if (ops_[k].kind != Op::Kind::kCopy) ops_[k].addresses = addresses_.data() + first_address[k];
  }
  return true;
}

}  // namespace xjit::runtime
