#include "jit/kernel/row_groups.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <tuple>
#include <utility>
#include <vector>

#include "runtime/buffer_plan.h"

namespace xjit::jit {
namespace {

using runtime::BufferSlot;
using runtime::Step;

// Bytes of all buffers' rows in one chunk: well inside any L2 cache, so the
// chunk is still cached when the next member reads it.
constexpr int64_t kChunkBytes = int64_t{128} << 10;
// Below this many bytes written by the members, their arrays stay in cache
// between kernels anyway, and chunking would only add calls.
constexpr int64_t kMinWrittenBytes = int64_t{512} << 10;

// Where a slot's bytes are: place (kind and index) and byte range. Slots with
// equal keys are the same memory.
struct Range {
  BufferSlot::Kind kind;
  int64_t index;
  int64_t offset;
  int64_t size;
  bool operator<(const Range& o) const {
    return std::tie(kind, index, offset, size) < std::tie(o.kind, o.index, o.offset, o.size);
  }
  bool operator==(const Range& o) const {
    return kind == o.kind && index == o.index && offset == o.offset && size == o.size;
  }
  bool Overlaps(const Range& o) const {
    return kind == o.kind && index == o.index && offset < o.offset + o.size &&
           o.offset < offset + size && size > 0 && o.size > 0;
  }
};

Range RangeOf(const BufferSlot& slot) { return {slot.kind, slot.index, slot.offset, slot.size}; }

// What the group under construction knows of one range.
struct RangeUse {
  bool written = false;
  bool read_after_write = false;      // Read by a member after one wrote it.
  std::vector<int64_t> row_elements;  // Of every access (-1: not rows).
};

int64_t Lcm(int64_t a, int64_t b) {
  int64_t x = a, y = b;
  while (y != 0) std::tie(x, y) = std::make_pair(y, x % y);
  return a / x * b;
}

class GroupBuilder {
 public:
  explicit GroupBuilder(const std::vector<BufferSlot>& slots) : slots_(slots) {}

  // Adds `step` to the group if the rules allow; false (and no change)
  // otherwise.
  bool TryAdd(const Step& step) {
    if (step.kind != Step::Kind::kKernel || step.row_elements.empty() ||
        step.row_elements.size() != step.inputs.size() + step.outputs.size() ||
        step.outer_extent < 2) {
      return false;
    }
    if (!members_.empty() && step.outer_extent != members_[0].outer_extent) return false;
    std::map<Range, RangeUse> uses = uses_;
    const size_t inputs = step.inputs.size();
    for (size_t k = 0; k < step.row_elements.size(); ++k) {
      const int slot = k < inputs ? step.inputs[k] : step.outputs[k - inputs];
      const BufferSlot& s = slots_[slot];
      RangeUse& use = uses[RangeOf(s)];
      if (k < inputs) {
        if (use.written) use.read_after_write = true;
      } else {
        use.written = true;
      }
      use.row_elements.push_back(step.row_elements[k]);
    }
    // Written ranges: accessed as rows of one size, and overlapping no other
    // range of the group.
    for (const auto& [range, use] : uses) {
      if (!use.written) continue;
      for (int64_t n : use.row_elements) {
        if (n < 0 || n != use.row_elements[0]) return false;
      }
      for (const auto& [other, other_use] : uses) {
        if (!(other == range) && other.Overlaps(range)) return false;
      }
    }
    uses_ = std::move(uses);
    members_.push_back(step);
    return true;
  }

  bool Worthwhile() const {
    if (members_.size() < 2) return false;
    bool handed_on = false;
    int64_t written_bytes = 0;
    for (const auto& [range, use] : uses_) {
      handed_on = handed_on || use.read_after_write;
      if (use.written) written_bytes += range.size;
    }
    return handed_on && written_bytes >= kMinWrittenBytes;
  }

  // The kRowGroup step. The group's members are steps[first, first +
  // size()); the other steps tell which ranges are used elsewhere.
  Step Build(const std::vector<Step>& steps, size_t first, runtime::ExecutableSpec* spec) {
    Step group;
    group.kind = Step::Kind::kRowGroup;
    group.name = members_[0].name;
    for (size_t m = 1; m < members_.size(); ++m) group.name += "+" + members_[m].name;
    group.outer_extent = members_[0].outer_extent;
    int64_t alignment = 1;
    int64_t row_bytes = 0;
    for (const Step& member : members_) {
      alignment = Lcm(alignment, std::max<int64_t>(member.outer_alignment, 1));
    }
    for (const auto& [range, use] : uses_) row_bytes += range.size / group.outer_extent;
    int64_t chunk = std::max<int64_t>(1, kChunkBytes / std::max<int64_t>(row_bytes, 1));
    chunk = std::min(chunk, group.outer_extent);
    chunk = (chunk + alignment - 1) / alignment * alignment;
    group.row_chunk = chunk;
    group.outer_alignment = chunk;

    // Private ranges: temporaries written here that nothing outside uses.
    std::vector<Range> outside;
    for (size_t i = 0; i < steps.size(); ++i) {
      if (i >= first && i < first + members_.size()) continue;
      for (const std::vector<int>* list : {&steps[i].inputs, &steps[i].outputs}) {
        for (int slot : *list) outside.push_back(RangeOf(slots_[slot]));
      }
    }
    std::map<Range, int64_t> scratch_offsets;
    int64_t per_thread = 0;
    for (const auto& [range, use] : uses_) {
      if (!use.written || range.kind != BufferSlot::Kind::kTemp) continue;
      bool used_outside = false;
      for (const Range& o : outside) used_outside = used_outside || o.Overlaps(range);
      if (used_outside) continue;
      scratch_offsets[range] = per_thread;
      const int64_t bytes = range.size / group.outer_extent * chunk;
      per_thread += (bytes + runtime::kBufferAlignment - 1) / runtime::kBufferAlignment *
                    runtime::kBufferAlignment;
    }
    for (const Step& member : members_) {
      for (const std::vector<int>* list : {&member.inputs, &member.outputs}) {
        for (int slot : *list) {
          auto it = scratch_offsets.find(RangeOf(slots_[slot]));
          if (it == scratch_offsets.end()) continue;
          bool listed = false;
          for (const runtime::RowGroupSlot& p : group.private_slots) listed |= p.slot == slot;
          if (!listed) {
            group.private_slots.push_back(
                {slot, slots_[slot].size / group.outer_extent, it->second});
          }
        }
      }
    }
    if (per_thread > 0) {
      int64_t& temp = spec->plan.temp_bytes;
      temp = (temp + runtime::kBufferAlignment - 1) / runtime::kBufferAlignment *
             runtime::kBufferAlignment;
      group.group_scratch_offset = temp;
      group.group_scratch_per_thread = per_thread;
      temp += per_thread * std::max(spec->threads, 1);
    }
    group.members = std::move(members_);
    return group;
  }

  size_t size() const { return members_.size(); }

 private:
  const std::vector<BufferSlot>& slots_;
  std::vector<Step> members_;
  std::map<Range, RangeUse> uses_;
};

}  // namespace

std::vector<int64_t> RowElements(const KernelProgram& program) {
  if (program.loop_extents.empty() || program.loop_extents[0] < 2 || program.claims_range) {
    return {};
  }
  const int64_t extent = program.loop_extents[0];
  const std::vector<std::optional<int64_t>> strides = StridesAlong(program, 0);
  std::vector<int64_t> result(program.buffers.size(), -1);
  std::vector<bool> bad(program.buffers.size(), false);
  for (size_t b = 0; b < program.buffers.size(); ++b) {
    const int64_t count = program.buffers[b].element_count;
    if (count % extent == 0) result[b] = count / extent;
  }
  for (const KOp& op : program.ops) {
    int buffer = -1;
    if (op.kind == KOpKind::kLoad) buffer = static_cast<int>(op.imm);
    if (op.kind == KOpKind::kStore) buffer = program.output_buffer(static_cast<int>(op.imm));
    if (buffer < 0 || buffer >= static_cast<int>(result.size())) continue;
    const std::optional<int64_t>& stride = strides[op.a];
    if (!stride.has_value() || *stride != result[buffer]) bad[buffer] = true;
  }
  for (size_t b = 0; b < result.size(); ++b) {
    if (bad[b]) result[b] = -1;
  }
  return result;
}

int FormRowGroups(runtime::ExecutableSpec* spec) {
  const std::vector<Step> steps = std::move(spec->steps);
  spec->steps.clear();
  int groups = 0;
  size_t i = 0;
  while (i < steps.size()) {
    GroupBuilder builder(spec->plan.slots);
    size_t j = i;
    while (j < steps.size() && builder.TryAdd(steps[j])) ++j;
    if (builder.Worthwhile()) {
      spec->steps.push_back(builder.Build(steps, i, spec));
      ++groups;
      i = j;
    } else {
      spec->steps.push_back(steps[i]);
      ++i;
    }
  }
  return groups;
}

}  // namespace xjit::jit
