// runtime/sort/key_sort: the fast path of runtime/sort for comparators that
// the compile driver recognised as "compare these keys lexicographically"
// (jit/calls/sort_comparator.h): each key becomes an unsigned integer whose order
// is the comparator's, and slices are sorted by those integers with a stable
// LSD radix sort instead of a merge sort calling the comparator kernel.
//
// Why the result is the evaluator's, bit for bit: when the comparator is a
// strict weak order, a stable sort's permutation is unique (equivalent
// elements keep their index order), so the evaluator's merge sort and any
// other stable sort agree. A recognised comparator is one when its keys are
// integers, floats under type=TOTALORDER, or floats under the default
// (partial) compare without NaN: there -0 and +0 are equivalent (both map to
// the key of +0). A slice holding a NaN under a partial compare is not
// sortable here (ComputeKeys says so) and the caller uses the merge sort.
//
// The radix sort sorts items that pair the key with the element's position,
// so items are distinct and sorting them by (key, position) is the stable
// order; only the key's bytes are radix passes (a pass whose digit is the
// same for every item is skipped), tiny slices use an insertion sort.
#ifndef XJIT_RUNTIME_SORT_KEY_SORT_H_
#define XJIT_RUNTIME_SORT_KEY_SORT_H_

#include <cstdint>
#include <string>

#include "ir/element_type.h"

namespace xjit::runtime::sort {

// One key of a recognised comparator: operand `operand`'s element, replaced
// by `nan_to` when it is a NaN and by `zero_to` when it is ±0 (JAX
// canonicalises float keys so), then ordered per `order`, descending when
// `descending` (the comparator is GT, or LT with its parameters swapped).
struct SortKey {
  enum class Order : uint8_t {
    kUnsigned,      // integer bits zero-extended (also pred)
    kSigned,        // integer bits sign-extended
    kFloatTotal,    // -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN
    kFloatPartial,  // IEEE <, -0 == +0; no strict weak order with NaN
  };
  int64_t operand = 0;
  ElementType type = ElementType::kF32;  // pred, 8..64-bit ints, f16, bf16, f32, f64
  Order order = Order::kUnsigned;
  bool descending = false;
  bool replace_nan = false;
  uint64_t nan_to = 0;  // bits of type
  bool replace_zero = false;
  uint64_t zero_to = 0;

  bool operator==(const SortKey&) const = default;
  std::string ToString() const;
};

// Whether SortKey supports elements of `type` (the widths and float formats
// ComputeKeys knows).
bool IsSortKeyType(ElementType type);

// keys[i] = the key of element i of `elements` (n contiguous elements of
// key.type): below 2^BitWidth(key.type), ascending in the key's order.
// Returns false, leaving keys unspecified, when some element is a NaN (after
// replacement) under kFloatPartial.
bool ComputeKeys(const SortKey& key, const void* elements, int64_t n, uint64_t* keys);

// Bytes of working memory StableSortByKey needs for slices of n elements.
int64_t StableSortWorkBytes(int64_t n);

// Stably permutes order[0, n): afterwards keys[order[i]] ascend, and entries
// with equal keys keep their relative order. keys[j] < 2^key_bits for every
// j; n < 2^32; `work` holds StableSortWorkBytes(n) bytes aligned to 8.
// `identity_order`: order[i] == i on entry (the first key sorted), which
// saves a pass.
void StableSortByKey(const uint64_t* keys, int key_bits, int64_t* order, int64_t n, void* work,
                     bool identity_order = false);

}  // namespace xjit::runtime::sort

#endif  // XJIT_RUNTIME_SORT_KEY_SORT_H_
