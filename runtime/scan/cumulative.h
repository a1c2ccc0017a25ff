// runtime/scan/cumulative: the forward cumulative reduce-window (JAX's cumsum,
// cumprod, cummax, cummin: along dimension d a window as long as the
// dimension, stride 1, padded low by its length less one) in one pass over
// the array instead of one fold per window.
//
// The evaluator folds each window from the init value: init, then one init
// per padding position (length - 1 - i of them), then x[0..i]
// (interpreter/reduce_window.cc). When init is a fixed point of the reducer
// (f(init, init) has init's bits: 0 for add, 1 for multiply, -inf for max,
// ...) the paddings change nothing and out[i] = f(out[i - 1], x[i]) with
// out[-1] = init: the same folds in the same order, so the same bits. With
// any other init every window is folded whole, as the evaluator does
// (quadratic in the length; no program seen so far has such an init).
// The folds are collectives::FoldRange's (the evaluator's scalar
// semantics: NaN and -0 rules, wrapping integers, rounding each step).
#ifndef XJIT_RUNTIME_SCAN_CUMULATIVE_H_
#define XJIT_RUNTIME_SCAN_CUMULATIVE_H_

#include <cstdint>
#include <string>

#include "ir/element_type.h"
#include "runtime/collectives/communicator.h"

namespace xjit::runtime::scan {

// The array as (outer, length, inner): element (o, i, r) of the scanned
// dimension's position i lies at (o * length + i) * inner + r, in elements,
// in both the operand and the result (one layout).
struct CumulativePlan {
  ElementType type = ElementType::kF32;
  collectives::ReductionKind kind = collectives::ReductionKind::kSum;
  int64_t outer = 1;
  int64_t length = 0;
  int64_t inner = 1;
  // Rows transposed per block when inner == 1 (so that each fold step runs
  // across a block of rows); the scratch holds two such blocks.
  int64_t block_rows = 1;
  int64_t scratch_bytes = 0;

  std::string ToString() const;
};

// The plan for an array of `type` (collectives::CanFold(type, kind) must
// hold) of the given geometry.
CumulativePlan PlanCumulative(ElementType type, collectives::ReductionKind kind, int64_t outer,
                              int64_t length, int64_t inner);

// runtime::LibraryFunction: buffers = {operand, init (one element), result};
// the result must not overlap the operand.
void RunCumulativeCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::scan

#endif  // XJIT_RUNTIME_SCAN_CUMULATIVE_H_
