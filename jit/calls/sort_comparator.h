// RecognizeSortComparator: finds, in a sort's comparator computation, the
// forms JAX and XLA emit for "order by these keys", so that runtime/sort can
// sort by integer keys (runtime/sort/key_sort.h) instead of calling the
// compiled comparator for every comparison.
//
// Recognised (p_2i, p_2i+1 are the comparator's parameters for operand i):
//   key:   compare(K(p_2i), K(p_2i+1)), direction=LT or GT, any type the
//          evaluator orders as a key (TOTALORDER or the default partial
//          compare for f16/bf16/f32/f64, SIGNED/UNSIGNED/TOTALORDER/default
//          for 8- to 64-bit integers, any for pred); the parameters swapped
//          reverse the direction;
//   K(x):  x, or select(P(x), constant, K(x)) where P(x) is
//          compare(x, x), direction=NE (x is NaN) or compare(x, ±0),
//          direction=EQ (x is ±0), both under the partial float compare,
//          on the parameter itself — JAX's canonicalisation of float keys
//          (NaN to one NaN, -0 to +0);
//   order: key, or or(key_i, and(eq_i, order)) (either operand order of or
//          and and), where eq_i is compare(K(p_2i), K(p_2i+1)),
//          direction=EQ, of the same K and order class as key_i: JAX's
//          lexicographic multi-key comparator (the iota tie-break).
// Anything else (other shapes, extra conditions, LE/GE, complex, sub-byte
// and 8-bit float types) is not recognised: the caller keeps the generic
// path, which is correct for every comparator.
#ifndef XJIT_JIT_SORT_COMPARATOR_H_
#define XJIT_JIT_SORT_COMPARATOR_H_

#include <optional>
#include <vector>

#include "ir/computation.h"
#include "runtime/sort/key_sort.h"

namespace xjit::jit {

// The keys, most significant first, or nullopt when `comparator` is not one
// of the forms above.
std::optional<std::vector<runtime::sort::SortKey>> RecognizeSortComparator(
    const Computation& comparator);

}  // namespace xjit::jit

#endif  // XJIT_JIT_SORT_COMPARATOR_H_
