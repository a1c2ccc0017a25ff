// runtime/sort: HLO `sort` over raw buffers, with a compiled comparator.
//
// Every 1-D slice along the sort dimension is gathered into contiguous
// scratch (one run per operand: operands and results may have any plain
// layout, so a slice is strided), an index permutation is sorted with the
// evaluator's own merge sort (interpreter/merge_sort.h), calling the comparator kernel
// on the addresses of (op0[a], op0[b], op1[a], op1[b], ...), and the permuted
// elements are written to each result in its layout. Since the sort and the
// pairs it compares are those of the evaluator, the results are the same bit
// for bit, whatever the comparator (also one that is not a strict weak
// order). Elements move as raw bytes of their width (sub-byte types take one
// byte each in xjit buffers), so any element type can be sorted.
//
// Fast path: when the compile driver recognised the comparator as a
// lexicographic compare of keys (SortPlan::keys, jit/calls/sort_comparator.h), a
// slice is sorted by integer keys with a stable radix sort instead
// (runtime/sort/key_sort.h explains why the result is the same); a slice
// whose keys make the comparator no strict weak order (NaN under a partial
// float compare) falls back to the merge sort above.
//
// Slices are independent: with SortPlan::threads > 1, contiguous ranges of
// slices run on the shared ThreadPool, each thread in its own part of the
// scratch; the result does not depend on the split.
//
// The plan is made at compile time; RunSort allocates nothing (the library
// call's scratch holds the working memory, SortPlan::scratch_bytes).
#ifndef XJIT_RUNTIME_SORT_SORT_H_
#define XJIT_RUNTIME_SORT_SORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/shape.h"
#include "runtime/executable.h"
#include "runtime/sort/key_sort.h"

namespace xjit::runtime::sort {

struct SortPlan {
  int64_t operand_count = 0;
  // Slice geometry: elements per slice, and the dimensions other than the
  // sort dimension (a slice's position), with each operand's and result's
  // strides (elements) along them and along the sort dimension.
  int64_t length = 0;
  int64_t slice_count = 0;
  std::vector<int64_t> outer_dimensions;
  std::vector<std::vector<int64_t>> input_outer_strides;   // [operand][outer dim]
  std::vector<std::vector<int64_t>> output_outer_strides;  // [operand][outer dim]
  std::vector<int64_t> input_strides;                      // [operand], sort dimension
  std::vector<int64_t> output_strides;
  std::vector<int64_t> element_bytes;  // [operand]
  // The comparator: a kernel without loops whose buffers are the 2N scalar
  // parameters, then `constants` (data it reads), then its pred result.
  KernelFunction comparator = nullptr;
  std::vector<std::vector<uint8_t>> constants;
  // The recognised comparator, most significant key first; empty: the
  // comparator kernel orders every pair.
  std::vector<SortKey> keys;
  // Threads sharing the slices (the caller's and threads - 1 pool workers).
  int threads = 1;
  // Scratch layout (byte offsets within one thread's part, which takes
  // thread_scratch_bytes): the permutation, the merge buffer, the
  // comparator's argument addresses, its result byte, each operand's run,
  // then for the fast path each key's keys and the radix sort's work.
  int64_t order_offset = 0;
  int64_t buffer_offset = 0;
  int64_t arguments_offset = 0;
  int64_t result_offset = 0;
  std::vector<int64_t> run_offsets;
  std::vector<int64_t> key_offsets;
  int64_t work_offset = 0;
  int64_t thread_scratch_bytes = 0;
  int64_t scratch_bytes = 0;  // threads * thread_scratch_bytes

  std::string ToString() const;
};

// The plan for sorting `operands` (arrays of equal dimensions, plain
// layouts: no tiles, padding or packed elements) along `dimension` into
// `results` (arrays of the operands' dimensions and element types, any plain
// layout). `keys`: the comparator recognised (see SortPlan::keys), or
// empty. `threads`: at most this many threads share large sorts.
// Unimplemented for shapes it does not handle; InvalidArgument for keys
// that do not match the operands.
absl::StatusOr<SortPlan> PlanSort(absl::Span<const Shape> operands, absl::Span<const Shape> results,
                                  int64_t dimension, KernelFunction comparator,
                                  std::vector<std::vector<uint8_t>> comparator_constants,
                                  std::vector<SortKey> keys = {}, int threads = 1);

// Sorts: `buffers` = the N operands, then the N results; `scratch` holds at
// least plan.scratch_bytes bytes aligned to 64 (or is null when that is 0).
void RunSort(const SortPlan& plan, void* const* buffers, void* scratch);

// RunSort as a runtime::LibraryFunction (`plan` is a SortPlan).
void RunSortCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::sort

#endif  // XJIT_RUNTIME_SORT_SORT_H_
