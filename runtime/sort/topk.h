// runtime/sort/topk: HLO `topk` over raw buffers, by selection.
//
// The k largest (or smallest) elements of every row (the last dimension),
// in the evaluator's order (interpreter/sort.cc): floats by their total
// order (-NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN), integers by
// value, equal elements by lower index first; indices are s32. Each element
// gets the integer key of runtime/sort/key_sort.h (descending for largest),
// and the row's k smallest (key, index) pairs are kept in a sorted buffer
// of k while the row is scanned once: a pair enters only when it is below
// the k-th kept one, which for most rows is a few dozen times, so a row
// costs about one pass plus O(k) per entry instead of a full sort
// (pairs are distinct, so the result is exactly the stable sort's first
// k). When k is a large part of the row, or keys are 64-bit, the row is
// sorted by key_sort's stable radix sort instead and its first k taken.
//
// Rows are independent: with TopKPlan::threads > 1 they are split between
// threads of the shared ThreadPool, each with its own part of the scratch.
// The plan is made at compile time; RunTopK allocates nothing.
#ifndef XJIT_RUNTIME_SORT_TOPK_H_
#define XJIT_RUNTIME_SORT_TOPK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/shape.h"
#include "runtime/sort/key_sort.h"

namespace xjit::runtime::sort {

struct TopKPlan {
  SortKey key;         // operand 0's order; descending for largest
  int64_t length = 0;  // elements per row
  int64_t k = 0;
  int64_t row_count = 0;
  bool select = false;  // the kept-buffer selection (else: sort the row)
  // The dimensions other than the last, and the strides (elements) along
  // them of the operand, the values and the indices; the operand's stride
  // along the row.
  std::vector<int64_t> outer_dimensions;
  std::vector<int64_t> operand_outer_strides, values_outer_strides, indices_outer_strides;
  int64_t operand_stride = 1, values_stride = 1, indices_stride = 1;
  int64_t element_bytes = 0;
  int threads = 1;
  // One thread's scratch (byte offsets): the row, its keys, the order, the
  // sort's work (or the kept buffer).
  int64_t row_offset = 0, keys_offset = 0, order_offset = 0, work_offset = 0;
  int64_t thread_scratch_bytes = 0;
  int64_t scratch_bytes = 0;  // threads * thread_scratch_bytes

  std::string ToString() const;
};

// Whether RunTopK handles operands of `type` (the types key_sort orders).
bool IsTopKType(ElementType type);

// The plan for topk(operand), k, largest, into `values` and `indices` (s32)
// of the operand's dimensions but the last, k; plain layouts (no tiles,
// padding or packed elements). Unimplemented for what it does not handle.
absl::StatusOr<TopKPlan> PlanTopK(const Shape& operand, const Shape& values, const Shape& indices,
                                  int64_t k, bool largest, int threads);

// buffers = {operand, values, indices}; `scratch` holds plan.scratch_bytes
// bytes aligned to 64 (or is null when that is 0).
void RunTopK(const TopKPlan& plan, void* const* buffers, void* scratch);

// RunTopK as a runtime::LibraryFunction (`plan` is a TopKPlan).
void RunTopKCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::sort

#endif  // XJIT_RUNTIME_SORT_TOPK_H_
