// runtime/sort: HLO sort with a compiled comparator (see sort.h).
#include "runtime/sort/sort.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/merge_sort.h"
#include "ir/element_type.h"
#include "ir/layout_util.h"
#include "runtime/thread_pool.h"

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
    case 1:
      *to = *from;
      return;
    case 2:
      std::memcpy(to, from, 2);
      return;
    case 4:
      std::memcpy(to, from, 4);
      return;
    case 8:
      std::memcpy(to, from, 8);
      return;
    case 16:
      std::memcpy(to, from, 16);
      return;
    default:
      std::memcpy(to, from, static_cast<size_t>(width));
      return;
  }
}

// to[p * stride] = run[order[p]] for elements of kWidth bytes.
template <int kWidth>
void PermuteInto(uint8_t* to, int64_t stride, const uint8_t* run, const int64_t* order,
                 int64_t length) {
  for (int64_t p = 0; p < length; ++p) {
    std::memcpy(to + p * stride, run + order[p] * kWidth, kWidth);
  }
}

// A sort is split between threads only when it has at least this many
// elements (waking a worker costs about as much as sorting a few thousand).
constexpr int64_t kParallelMinElements = 8192;

// The row-major index `slice` over `dimensions`, as an offset with `strides`.
int64_t SliceStart(int64_t slice, const std::vector<int64_t>& dimensions,
                   const std::vector<int64_t>& strides) {
  int64_t start = 0;
  for (int64_t k = static_cast<int64_t>(dimensions.size()) - 1; k >= 0; --k) {
    start += slice % dimensions[k] * strides[k];
    slice /= dimensions[k];
  }
  return start;
}

}  // namespace

std::string SortPlan::ToString() const {
  std::string text =
      absl::StrCat("operands=", operand_count, " length=", length, " slices=", slice_count,
                   " element_bytes=[", absl::StrJoin(element_bytes, ","), "]");
  if (!keys.empty()) {
    absl::StrAppend(
        &text, " keys=[",
        absl::StrJoin(keys, ",",
                      [](std::string* out, const SortKey& key) { out->append(key.ToString()); }),
        "]");
  }
  absl::StrAppend(&text, " threads=", threads, " scratch=", scratch_bytes);
  return text;
}

absl::StatusOr<SortPlan> PlanSort(absl::Span<const Shape> operands, absl::Span<const Shape> results,
                                  int64_t dimension, KernelFunction comparator,
                                  std::vector<std::vector<uint8_t>> comparator_constants,
                                  std::vector<SortKey> keys, int threads) {
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
      return absl::UnimplementedError(
          absl::StrCat("sort: operand or result ", i, " is not a plain array"));
    }
    if (operands[i].dimensions() != first.dimensions() ||
        results[i].dimensions() != first.dimensions() ||
        operands[i].element_type() != results[i].element_type()) {
      return absl::UnimplementedError("sort: operand and result shapes differ");
    }
  }
  const int64_t n = static_cast<int64_t>(operands.size());
  for (const SortKey& key : keys) {
    if (key.operand < 0 || key.operand >= n || !IsSortKeyType(key.type) ||
        operands[key.operand].element_type() != key.type) {
      return absl::InvalidArgumentError(
          absl::StrCat("sort: key ", key.ToString(), " does not match the operands"));
    }
  }
  SortPlan plan;
  plan.keys = std::move(keys);
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
  // The radix sort pairs a key with a 32-bit position.
  if (plan.length >= (int64_t{1} << 32)) plan.keys.clear();
  for (size_t k = 0; k < plan.keys.size(); ++k) {
    plan.key_offsets.push_back(offset);
    offset = AlignUp(offset + plan.length * 8, 64);
  }
  plan.work_offset = offset;
  if (!plan.keys.empty()) offset = AlignUp(offset + StableSortWorkBytes(plan.length), 64);
  plan.thread_scratch_bytes = offset;
  plan.threads = 1;
  if (plan.slice_count >= 2 && plan.slice_count * plan.length >= kParallelMinElements) {
    plan.threads = static_cast<int>(std::clamp<int64_t>(threads, 1, plan.slice_count));
  }
  plan.scratch_bytes = plan.threads * plan.thread_scratch_bytes;
  return plan;
}

namespace {

// Sorts slices [first, last) with one thread's part of the scratch.
void RunSlices(const SortPlan& plan, void* const* buffers, uint8_t* base, int64_t first,
               int64_t last) {
  const int64_t n = plan.operand_count;
  const int64_t length = plan.length;
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

  // The fast path: false when a key refuses the slice (a NaN under a
  // partial compare), before `order` is touched.
  const int64_t key_count = static_cast<int64_t>(plan.keys.size());
  auto sort_by_keys = [&]() {
    for (int64_t k = 0; k < key_count; ++k) {
      const SortKey& key = plan.keys[k];
      uint64_t* keys = reinterpret_cast<uint64_t*>(base + plan.key_offsets[k]);
      if (!ComputeKeys(key, base + plan.run_offsets[key.operand], length, keys)) return false;
    }
    for (int64_t p = 0; p < length; ++p) order[p] = p;
    // Least significant key first: each pass is stable, so the last one
    // leaves ties of the first key in the order of the next, and so on.
    for (int64_t k = key_count - 1; k >= 0; --k) {
      StableSortByKey(reinterpret_cast<const uint64_t*>(base + plan.key_offsets[k]),
                      BitWidth(plan.keys[k].type), order, length, base + plan.work_offset,
                      /*identity_order=*/k == key_count - 1);
    }
    return true;
  };

  for (int64_t slice = first; slice < last; ++slice) {
    for (int64_t i = 0; i < n; ++i) {
      // Gathered for every operand before any result is written: a result
      // may share its operand's buffer if their layouts agree.
      const int64_t in_start =
          SliceStart(slice, plan.outer_dimensions, plan.input_outer_strides[i]);
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
    if (key_count == 0 || !sort_by_keys()) {
      for (int64_t p = 0; p < length; ++p) order[p] = p;
      if (n == 1) {
        (void)MergeSort(order, buffer, length, less1);
      } else {
        (void)MergeSort(order, buffer, length, less);
      }
    }
    for (int64_t i = 0; i < n; ++i) {
      const int64_t out_start =
          SliceStart(slice, plan.outer_dimensions, plan.output_outer_strides[i]);
      const int64_t width = plan.element_bytes[i];
      const uint8_t* run = base + plan.run_offsets[i];
      uint8_t* to = static_cast<uint8_t*>(buffers[n + i]) + out_start * width;
      const int64_t stride = plan.output_strides[i] * width;
      switch (width) {  // the common widths with the width known to the loop
        case 4: PermuteInto<4>(to, stride, run, order, length); break;
        case 8: PermuteInto<8>(to, stride, run, order, length); break;
        default:
          for (int64_t p = 0; p < length; ++p) {
            CopyElement(to + p * stride, run + order[p] * width, width);
          }
      }
    }
  }
}

}  // namespace

void RunSort(const SortPlan& plan, void* const* buffers, void* scratch) {
  if (plan.length == 0 || plan.slice_count == 0) return;
  uint8_t* base = static_cast<uint8_t*>(scratch);
  const int threads = plan.threads;
  if (threads <= 1) {
    RunSlices(plan, buffers, base, 0, plan.slice_count);
    return;
  }
  ThreadPool::Shared().ParallelFor(threads, threads - 1, [&](int64_t t) {
    RunSlices(plan, buffers, base + t * plan.thread_scratch_bytes, plan.slice_count * t / threads,
              plan.slice_count * (t + 1) / threads);
  });
}

void RunSortCall(const void* plan, void* const* buffers, void* scratch) {
  RunSort(*static_cast<const SortPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::sort
