// runtime/sort/topk: HLO topk by selection (see topk.h).
#include "runtime/sort/topk.h"

#include <algorithm>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/element_type.h"
#include "ir/layout_util.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::sort {
namespace {

int64_t AlignUp(int64_t n, int64_t alignment) {
  return (n + alignment - 1) / alignment * alignment;
}

bool IsPlainArray(const Shape& shape) {
  return shape.IsArray() && IsPlainLayout(shape) && ByteWidth(shape.element_type()) > 0 &&
         ByteSize(shape) == PhysicalElementCount(shape) * ByteWidth(shape.element_type());
}

// As in runtime/sort: a split costs about a few thousand elements' work.
constexpr int64_t kParallelMinElements = 8192;

int64_t RowStart(int64_t row, const std::vector<int64_t>& dimensions,
                 const std::vector<int64_t>& strides) {
  int64_t start = 0;
  for (int64_t d = static_cast<int64_t>(dimensions.size()) - 1; d >= 0; --d) {
    start += row % dimensions[d] * strides[d];
    row /= dimensions[d];
  }
  return start;
}

// The positions of the k smallest keys[0, n) (ties: lower position first),
// in that order, into order[0, k); `kept` holds k entries. Keys are below
// 2^32 and n < 2^32: an entry is the key above the position, so entries are
// distinct and compare as (key, position).
void SelectSmallest(const uint64_t* keys, int64_t n, int64_t k, uint64_t* kept, int64_t* order) {
  auto insert = [&](int64_t size, uint64_t entry) {
    int64_t j = size;
    for (; j > 0 && kept[j - 1] > entry; --j) kept[j] = kept[j - 1];
    kept[j] = entry;
  };
  for (int64_t i = 0; i < k; ++i) insert(i, keys[i] << 32 | static_cast<uint64_t>(i));
  // A later position loses every tie, so only a key strictly below the
  // k-th kept key enters.
  uint64_t threshold = kept[k - 1] >> 32;
  for (int64_t i = k; i < n; ++i) {
    if (keys[i] >= threshold) continue;
    insert(k - 1, keys[i] << 32 | static_cast<uint64_t>(i));
    threshold = kept[k - 1] >> 32;
  }
  for (int64_t j = 0; j < k; ++j) order[j] = static_cast<int64_t>(kept[j] & 0xffffffff);
}

void RunRows(const TopKPlan& plan, void* const* buffers, uint8_t* base, int64_t first,
             int64_t last) {
  const int64_t n = plan.length;
  const int64_t k = plan.k;
  const int64_t width = plan.element_bytes;
  uint8_t* row = base + plan.row_offset;
  uint64_t* keys = reinterpret_cast<uint64_t*>(base + plan.keys_offset);
  int64_t* order = reinterpret_cast<int64_t*>(base + plan.order_offset);
  void* work = base + plan.work_offset;
  const int key_bits = BitWidth(plan.key.type);
  for (int64_t r = first; r < last; ++r) {
    const uint8_t* from = static_cast<const uint8_t*>(buffers[0]) +
                          RowStart(r, plan.outer_dimensions, plan.operand_outer_strides) * width;
    const uint8_t* elements = from;
    if (plan.operand_stride != 1) {
      const int64_t stride = plan.operand_stride * width;
      for (int64_t p = 0; p < n; ++p) std::memcpy(row + p * width, from + p * stride, width);
      elements = row;
    }
    // Total orders only (floats by TOTALORDER): every row has its keys.
    (void)ComputeKeys(plan.key, elements, n, keys);
    if (plan.select) {
      SelectSmallest(keys, n, k, static_cast<uint64_t*>(work), order);
    } else {
      for (int64_t p = 0; p < n; ++p) order[p] = p;
      StableSortByKey(keys, key_bits, order, n, work, /*identity_order=*/true);
    }
    uint8_t* values = static_cast<uint8_t*>(buffers[1]) +
                      RowStart(r, plan.outer_dimensions, plan.values_outer_strides) * width;
    int32_t* indices = static_cast<int32_t*>(buffers[2]) +
                       RowStart(r, plan.outer_dimensions, plan.indices_outer_strides);
    for (int64_t j = 0; j < k; ++j) {
      std::memcpy(values + j * plan.values_stride * width, elements + order[j] * width, width);
      indices[j * plan.indices_stride] = static_cast<int32_t>(order[j]);
    }
  }
}

}  // namespace

std::string TopKPlan::ToString() const {
  return absl::StrCat("key=", key.ToString(), " length=", length, " k=", k, " rows=", row_count,
                      select ? " select" : " sort", " threads=", threads,
                      " scratch=", scratch_bytes);
}

bool IsTopKType(ElementType type) { return IsSortKeyType(type); }

absl::StatusOr<TopKPlan> PlanTopK(const Shape& operand, const Shape& values, const Shape& indices,
                                  int64_t k, bool largest, int threads) {
  if (!IsPlainArray(operand) || !IsPlainArray(values) || !IsPlainArray(indices)) {
    return absl::UnimplementedError("topk: operand or result is not a plain array");
  }
  const ElementType type = operand.element_type();
  if (!IsTopKType(type)) {
    return absl::UnimplementedError(
        absl::StrCat("topk: no compiled topk of ", ElementTypeName(type)));
  }
  const int64_t rank = operand.rank();
  if (rank < 1) return absl::UnimplementedError("topk: operand of rank 0");
  const int64_t length = operand.dimensions(rank - 1);
  if (k < 0 || k > length || length >= (int64_t{1} << 31)) {
    return absl::UnimplementedError("topk: k or row length out of range");
  }
  if (values.element_type() != type || indices.element_type() != ElementType::kS32 ||
      values.rank() != rank || indices.rank() != rank || values.dimensions(rank - 1) != k ||
      values.dimensions() != indices.dimensions()) {
    return absl::UnimplementedError("topk: result shapes do not match the operand");
  }
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (values.dimensions(d) != operand.dimensions(d)) {
      return absl::UnimplementedError("topk: result shapes do not match the operand");
    }
  }
  TopKPlan plan;
  plan.key.operand = 0;
  plan.key.type = type;
  plan.key.order = IsFloat(type)           ? SortKey::Order::kFloatTotal
                   : IsSignedInteger(type) ? SortKey::Order::kSigned
                                           : SortKey::Order::kUnsigned;
  plan.key.descending = largest;
  plan.length = length;
  plan.k = k;
  plan.row_count = 1;
  const std::vector<int64_t> in = PlainStrides(operand);
  const std::vector<int64_t> out_values = PlainStrides(values);
  const std::vector<int64_t> out_indices = PlainStrides(indices);
  for (int64_t d = 0; d + 1 < rank; ++d) {
    plan.outer_dimensions.push_back(operand.dimensions(d));
    plan.row_count *= operand.dimensions(d);
    plan.operand_outer_strides.push_back(in[d]);
    plan.values_outer_strides.push_back(out_values[d]);
    plan.indices_outer_strides.push_back(out_indices[d]);
  }
  plan.operand_stride = in[rank - 1];
  plan.values_stride = out_values[rank - 1];
  plan.indices_stride = out_indices[rank - 1];
  plan.element_bytes = ByteWidth(type);
  // Selection pays while few entries enter the kept buffer (k small against
  // the row); 64-bit keys do not fit beside a position in one word.
  plan.select = k > 0 && BitWidth(type) <= 32 && k * 16 <= length;
  int64_t offset = 0;
  plan.row_offset = offset;
  offset = AlignUp(offset + length * plan.element_bytes, 64);
  plan.keys_offset = offset;
  offset = AlignUp(offset + length * 8, 64);
  plan.order_offset = offset;
  offset = AlignUp(offset + length * 8, 64);
  plan.work_offset = offset;
  offset = AlignUp(offset + (plan.select ? k * 8 : StableSortWorkBytes(length)), 64);
  plan.thread_scratch_bytes = offset;
  plan.threads = 1;
  if (plan.row_count >= 2 && plan.row_count * length >= kParallelMinElements) {
    plan.threads = static_cast<int>(std::clamp<int64_t>(threads, 1, plan.row_count));
  }
  plan.scratch_bytes = plan.threads * plan.thread_scratch_bytes;
  return plan;
}

void RunTopK(const TopKPlan& plan, void* const* buffers, void* scratch) {
  if (plan.k == 0 || plan.row_count == 0) return;
  uint8_t* base = static_cast<uint8_t*>(scratch);
  const int threads = plan.threads;
  if (threads <= 1) {
    RunRows(plan, buffers, base, 0, plan.row_count);
    return;
  }
  ThreadPool::Shared().ParallelFor(threads, threads - 1, [&](int64_t t) {
    RunRows(plan, buffers, base + t * plan.thread_scratch_bytes, plan.row_count * t / threads,
            plan.row_count * (t + 1) / threads);
  });
}

void RunTopKCall(const void* plan, void* const* buffers, void* scratch) {
  RunTopK(*static_cast<const TopKPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::sort
