// MergeSort: the stable sort of HLO `sort`, shared by the reference
// evaluator (interpreter/sort.cc) and the JIT's runtime routine
// (runtime/sort/sort.h) so that both call the comparator on the same pairs
// in the same order and so give the same permutation bit for bit, also for
// a comparator that is not a strict weak order (a user can write one; a
// std::stable_sort could then misbehave, this sort cannot).
//
// Bottom-up: runs of width 1, 2, 4, ... are merged pairwise; a merge takes
// from the right run only when less(right, left) is true, so equal elements
// keep their order. `order` holds the n indices to permute and `buffer` n
// entries of working memory; the routine allocates nothing.
//
// `less(a, b)` returns bool, or absl::StatusOr<bool>: then the sort stops at
// the first error and returns it (`order` is then unspecified).
#ifndef XJIT_INTERPRETER_MERGE_SORT_H_
#define XJIT_INTERPRETER_MERGE_SORT_H_

#include <algorithm>
#include <cstdint>
#include <type_traits>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace xjit {

template <typename Less>
absl::Status MergeSort(int64_t* order, int64_t* buffer, int64_t n, Less&& less) {
  constexpr bool kPlainBool = std::is_same_v<std::decay_t<decltype(less(int64_t{0}, int64_t{0}))>,
                                             bool>;
  int64_t* from = order;
  int64_t* to = buffer;
  for (int64_t width = 1; width < n; width *= 2) {
    for (int64_t lo = 0; lo < n; lo += 2 * width) {
      const int64_t mid = std::min(lo + width, n);
      const int64_t hi = std::min(lo + 2 * width, n);
      int64_t a = lo, b = mid, out = lo;
      while (a < mid && b < hi) {
        bool right_first;
        if constexpr (kPlainBool) {
          right_first = less(from[b], from[a]);
        } else {
          absl::StatusOr<bool> result = less(from[b], from[a]);
          if (!result.ok()) return result.status();
          right_first = *result;
        }
        to[out++] = right_first ? from[b++] : from[a++];
      }
      while (a < mid) to[out++] = from[a++];
      while (b < hi) to[out++] = from[b++];
    }
    std::swap(from, to);
  }
  if (from != order) std::copy(from, from + n, order);
  return absl::OkStatus();
}

}  // namespace xjit

#endif  // XJIT_INTERPRETER_MERGE_SORT_H_
