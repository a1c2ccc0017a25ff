// runtime/sort: HLO sort with a compiled comparator (see sort.h).
#include "runtime/sort/sort.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/element_type.h"
#include "ir/layout_util.h"
#include "interpreter/merge_sort.h"

namespace xjit::runtime::sort {
namespace {

int64_t AlignUp(int64_t n, int64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

// Whether elements of `shape` lie one per ByteWidth bytes at the positions
// its minor_to_major gives (no tiles, padding or packing).
bool IsPlainArray(const Shape& shape) {
  return IsPlainLayout(shape) && ByteWidth(shape.element_type()) > 0 &&
         ByteSize(shape) == PhysicalElementCount(shape) * ByteWidth(shape.element_type());
}


// Copies one element of `width` bytes; the common widths as single moves.
inline void CopyElement(uint8_t* to, const uint8_t* from, int64_t width) {
  switch (width) {
    case 1: *to = *from; return;
    case 2: std::memcpy(to, from, 2); return;
    case 4: std::memcpy(to, from, 4); return;
    case 8: std::memcpy(to, from, 8); return;
    case 16: std::memcpy(to, from, 16); return;
    default: std::memcpy(to, from, static_cast<size_t>(width)); return;
  }
}

}  // namespace

std::string SortPlan::ToString() const {
  return absl::StrCat("operands=", operand_count, " length=", length, " slices=", slice_count,
                      " element_bytes=[", absl::StrJoin(element_bytes, ","), "] scratch=",
                      scratch_bytes);
}

absl::StatusOr<SortPlan> PlanSort(absl::Span<const Shape> operands,
                                  absl::Span<const Shape> results, int64_t dimension,
                                  KernelFunction comparator,
                                  std::vector<std::vector<uint8_t>> comparator_constants) {
  if (operands.empty() || operands.size() != results.size()) {
    return absl::UnimplementedError("sort: needs as many results as operands");
  }
  if (comparator == nullptr) return absl::UnimplementedError("sort: no comparator");
  const Shape& first = operands[0];
  const int64_t rank = first.IsArray() ? first.rank() : 0;
  if (rank > 0 && (dimension < 0 || dimension >= rank)) {
    return absl::UnimplementedError("sort: dimension out of range");
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (!IsPlainArray(operands[i]) || !IsPlainArray(results[i])) {
      return absl::UnimplementedError(absl::StrCat("sort: operand or result ", i,
                                                   " is not a plain array"));
    }
    if (operands[i].dimensions() != first.dimensions() ||
        results[i].dimensions() != first.dimensions() ||
        operands[i].element_type() != results[i].element_type()) {
      return absl::UnimplementedError("sort: operand and result shapes differ");
    }
  }
  SortPlan plan;
  const int64_t n = static_cast<int64_t>(operands.size());
  plan.operand_count = n;
  plan.comparator = comparator;
  plan.constants = std::move(comparator_constants);
  plan.length = rank == 0 ? 1 : first.dimensions(dimension);
  plan.slice_count = 1;
  for (int64_t d = 0; d < rank; ++d) {
    if (d == dimension) continue;
    plan.outer_dimensions.push_back(first.dimensions(d));
    plan.slice_count *= first.dimensions(d);
  }
  plan.input_outer_strides.resize(n);
  plan.output_outer_strides.resize(n);
  for (int64_t i = 0; i < n; ++i) {
    const std::vector<int64_t> in = PlainStrides(operands[i]);
    const std::vector<int64_t> out = PlainStrides(results[i]);
    for (int64_t d = 0; d < rank; ++d) {
      if (d == dimension) continue;
      plan.input_outer_strides[i].push_back(in[d]);
      plan.output_outer_strides[i].push_back(out[d]);
    }
    plan.input_strides.push_back(rank == 0 ? 1 : in[dimension]);
    plan.output_strides.push_back(rank == 0 ? 1 : out[dimension]);
    plan.element_bytes.push_back(ByteWidth(operands[i].element_type()));
  }
  // Scratch.
  int64_t offset = 0;
  plan.order_offset = offset;
  offset += plan.length * 8;
  plan.buffer_offset = offset;
  offset += plan.length * 8;
  plan.arguments_offset = offset;
  offset += (2 * n + static_cast<int64_t>(plan.constants.size()) + 1) * 8;
  plan.result_offset = offset;
  offset = AlignUp(offset + 1, 64);
  for (int64_t i = 0; i < n; ++i) {
    plan.run_offsets.push_back(offset);
    offset = AlignUp(offset + plan.length * plan.element_bytes[i], 64);
  }
  plan.scratch_bytes = offset;
  return plan;
}

void RunSort(const SortPlan& plan, void* const* buffers, void* scratch) {
  const int64_t n = plan.operand_count;
  const int64_t length = plan.length;
  if (length == 0 || plan.slice_count == 0) return;
  uint8_t* base = static_cast<uint8_t*>(scratch);
  int64_t* order = reinterpret_cast<int64_t*>(base + plan.order_offset);
  int64_t* buffer = reinterpret_cast<int64_t*>(base + plan.buffer_offset);
  void** arguments = reinterpret_cast<void**>(base + plan.arguments_offset);
  uint8_t* result = base + plan.result_offset;
  const int64_t constant_count = static_cast<int64_t>(plan.constants.size());
  for (int64_t c = 0; c < constant_count; ++c) {
    arguments[2 * n + c] = const_cast<uint8_t*>(plan.constants[c].data());
  }
  arguments[2 * n + constant_count] = result;
  const KernelFunction comparator = plan.comparator;
  const int64_t outer_rank = static_cast<int64_t>(plan.outer_dimensions.size());

  auto less = [&](int64_t a, int64_t b) {
    for (int64_t i = 0; i < n; ++i) {
      uint8_t* run = base + plan.run_offsets[i];
      const int64_t width = plan.element_bytes[i];
      arguments[2 * i] = run + a * width;
      arguments[2 * i + 1] = run + b * width;
    }
    *result = 0;
    comparator(arguments, 0, 1);
    return *result != 0;
  };

  // One operand (the common case): no loop per comparison.
  uint8_t* const run0 = base + plan.run_offsets[0];
  const int64_t width0 = plan.element_bytes[0];
  auto less1 = [&](int64_t a, int64_t b) {
    arguments[0] = run0 + a * width0;
    arguments[1] = run0 + b * width0;
    *result = 0;
    comparator(arguments, 0, 1);
    return *result != 0;
  };

  for (int64_t slice = 0; slice < plan.slice_count; ++slice) {
    // The slice's first element in each operand (the slice number read as a
    // row-major index over the outer dimensions).
    for (int64_t i = 0; i < n; ++i) {
      int64_t in_start = 0;
      int64_t rest = slice;
      for (int64_t k = outer_rank - 1; k >= 0; --k) {
        const int64_t extent = plan.outer_dimensions[k];
        in_start += rest % extent * plan.input_outer_strides[i][k];
        rest /= extent;
      }
      // Gathered for every operand before any result is written: a result
      // may share its operand's buffer if their layouts agree.
      const int64_t width = plan.element_bytes[i];
      const uint8_t* from = static_cast<const uint8_t*>(buffers[i]) + in_start * width;
      uint8_t* run = base + plan.run_offsets[i];
      const int64_t stride = plan.input_strides[i] * width;
      if (stride == width) {
        std::memcpy(run, from, static_cast<size_t>(length * width));
      } else {
        for (int64_t p = 0; p < length; ++p) CopyElement(run + p * width, from + p * stride, width);
      }
    }
    for (int64_t p = 0; p < length; ++p) order[p] = p;
    if (n == 1) {
      (void)MergeSort(order, buffer, length, less1);
    } else {
      (void)MergeSort(order, buffer, length, less);
    }
    for (int64_t i = 0; i < n; ++i) {
      int64_t out_start = 0;
      int64_t rest = slice;
      for (int64_t k = outer_rank - 1; k >= 0; --k) {
        const int64_t extent = plan.outer_dimensions[k];
        out_start += rest % extent * plan.output_outer_strides[i][k];
        rest /= extent;
      }
      const int64_t width = plan.element_bytes[i];
      const uint8_t* run = base + plan.run_offsets[i];
      uint8_t* to = static_cast<uint8_t*>(buffers[n + i]) + out_start * width;
      const int64_t stride = plan.output_strides[i] * width;
      for (int64_t p = 0; p < length; ++p) {
        CopyElement(to + p * stride, run + order[p] * width, width);
      }
    }
  }
}

void RunSortCall(const void* plan, void* const* buffers, void* scratch) {
  RunSort(*static_cast<const SortPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::sort
