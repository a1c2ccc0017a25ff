// BufferPlan accessors and its text form.
#include "passes/buffer_plan.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"

namespace xjit {

namespace {

void AppendLeaves(const Shape& shape, ShapeIndex* prefix, std::vector<ShapeIndex>* out) {
  if (shape.IsArray()) {
    out->push_back(*prefix);
    return;
  }
  if (!shape.IsTuple()) return;
  for (int64_t i = 0; i < shape.tuple_size(); ++i) {
    prefix->push_back(i);
    AppendLeaves(shape.tuple_shapes(i), prefix, out);
    prefix->pop_back();
  }
}

std::string IndexText(const ShapeIndex& index) {
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

}  // namespace

std::vector<ShapeIndex> ArrayLeafIndices(const Shape& shape) {
  std::vector<ShapeIndex> out;
  ShapeIndex prefix;
  AppendLeaves(shape, &prefix, &out);
  return out;
}

absl::string_view BufferAllocationKindName(BufferAllocation::Kind kind) {
  switch (kind) {
    case BufferAllocation::Kind::kParameter: return "parameter";
    case BufferAllocation::Kind::kResult: return "result";
    case BufferAllocation::Kind::kConstant: return "constant";
    case BufferAllocation::Kind::kTemp: return "temp";
  }
  return "?";
}

const ComputationBufferPlan* BufferPlan::ForComputation(const Computation* computation) const {
  for (const ComputationBufferPlan& plan : computations_) {
    if (plan.computation == computation) return &plan;
  }
  return nullptr;
}

const std::vector<LeafSlice>& BufferPlan::Slices(const Instruction* instruction) const {
  static const std::vector<LeafSlice>* const kNone = new std::vector<LeafSlice>();
  auto it = slices_.find(instruction);
  return it == slices_.end() ? *kNone : it->second;
}

std::optional<BufferSlice> BufferPlan::Slice(const Instruction* instruction,
                                             const ShapeIndex& index) const {
  for (const LeafSlice& leaf : Slices(instruction)) {
    if (leaf.index == index) return leaf.slice;
  }
  return std::nullopt;
}

std::optional<int64_t> BufferPlan::InPlaceOperand(const Instruction* instruction) const {
  auto it = in_place_.find(instruction);
  if (it == in_place_.end()) return std::nullopt;
  return it->second;
}

std::optional<int64_t> BufferPlan::ParameterAllocation(int64_t number, const ShapeIndex& index) const {
  for (const BufferAllocation& allocation : allocations_) {
    if (allocation.kind == BufferAllocation::Kind::kParameter &&
        allocation.parameter_number == number && allocation.parameter_index == index) {
      return allocation.id;
    }
  }
  return std::nullopt;
}

int64_t BufferPlan::AddAllocation(BufferAllocation allocation) {
  allocation.id = static_cast<int64_t>(allocations_.size());
  allocations_.push_back(std::move(allocation));
  return allocations_.back().id;
}

namespace {
int64_t SumOfKind(const std::vector<BufferAllocation>& allocations, BufferAllocation::Kind kind) {
  int64_t total = 0;
  for (const BufferAllocation& allocation : allocations) {
    if (allocation.kind == kind) total += allocation.size;
  }
  return total;
}
}  // namespace

int64_t BufferPlan::parameter_bytes() const {
  return SumOfKind(allocations_, BufferAllocation::Kind::kParameter);
}
int64_t BufferPlan::result_bytes() const {
  return SumOfKind(allocations_, BufferAllocation::Kind::kResult);
}
int64_t BufferPlan::constant_bytes() const {
  return SumOfKind(allocations_, BufferAllocation::Kind::kConstant);
}

std::string BufferPlan::ToString() const {
  std::string out = "allocations:\n";
  for (const BufferAllocation& allocation : allocations_) {
    absl::StrAppendFormat(&out, "  %d: %s, %d bytes", allocation.id,
                          BufferAllocationKindName(allocation.kind), allocation.size);
    switch (allocation.kind) {
      case BufferAllocation::Kind::kParameter:
        absl::StrAppend(&out, ", parameter ", allocation.parameter_number, " ",
                        IndexText(allocation.parameter_index));
        break;
      case BufferAllocation::Kind::kConstant:
        absl::StrAppend(&out, ", %", allocation.constant->name());
        break;
      case BufferAllocation::Kind::kTemp:
        absl::StrAppend(&out, ", arena of %", allocation.computation->name());
        break;
      case BufferAllocation::Kind::kResult:
        break;
    }
    if (!allocation.result_indices.empty()) {
      absl::StrAppend(&out, ", result ",
                      absl::StrJoin(allocation.result_indices, " ",
                                    [](std::string* s, const ShapeIndex& index) {
                                      absl::StrAppend(s, IndexText(index));
                                    }));
    }
    absl::StrAppend(&out, "\n");
  }
  for (const ComputationBufferPlan& plan : computations_) {
    absl::StrAppend(&out, "computation %", plan.computation->name(),
                    plan.parameters_bound ? "" : " (parameters copied in)", ":\n");
    for (size_t step = 0; step < plan.schedule.size(); ++step) {
      const Instruction* instruction = plan.schedule[step];
      absl::StrAppend(&out, "  ", step, " %", instruction->name());
      std::vector<std::string> leaves;
      for (const LeafSlice& leaf : Slices(instruction)) {
        leaves.push_back(absl::StrFormat("%s%d+%d[%d]",
                                         leaf.index.empty() ? "" : IndexText(leaf.index) + "=",
                                         leaf.slice.allocation, leaf.slice.offset, leaf.slice.size));
      }
      if (!leaves.empty()) absl::StrAppend(&out, " ", absl::StrJoin(leaves, " "));
      if (std::optional<int64_t> operand = InPlaceOperand(instruction)) {
        absl::StrAppend(&out, " (in place of operand ", *operand, ")");
      }
      absl::StrAppend(&out, "\n");
    }
  }
  absl::StrAppend(&out, "temp bytes: ", temp_bytes_, "\n");
  absl::StrAppend(&out, "peak bytes: ", peak_bytes_, "\n");
  return out;
}

}  // namespace xjit
