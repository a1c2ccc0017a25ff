// ScanCumulativeWindows ("scan-cumulative-windows"): rewrites a cumulative
// reduce-window (a window as long as one dimension of length n >= 2, stride
// 1, padded n - 1 low -- JAX's cumsum, cumlogsumexp, ... -- or n - 1 high,
// reverse=True, no dilation or reversal, 1 wide elsewhere) into a log-depth
// (Hillis-Steele) scan: ceil(log2 n) elementwise steps
//   y = select(i >= s, f(x shifted by s, x), x)      s = 1, 2, 4, ...
// (the shift a slice and a pad with the init value; i an iota along the
// scanned dimension; reverse: the shift the other way and f(x, shifted x)),
// then f(init, y), with the reducer f's computation inlined elementwise.
// Each step's input and each shift pass through an opt-barrier, so that
// fusion neither recomputes earlier steps (a step reads its input twice) nor
// puts the shift in the arithmetic's kernel (the steps then vectorise).
// The fusion pass and the vectorised loop kernels then compile it: O(n log n)
// work, vectorised across the other dimensions, where a window kernel folds
// every window whole (O(n^2)).
//
// Taken when: one operand (not variadic) of a real float or integer type, the
// init a scalar constant with f(init, init) == init bit for bit (evaluated:
// every init JAX writes, the reducer's identity), and a reducer whose
// instructions are parameters, scalar constants and elementwise operations
// (ir/opcode.h: IsElementwise). A forward window whose reducer is a plain
// add, multiply, maximum, minimum, and or or of its two parameters is left
// alone: the JIT runs it as a one-pass library call (jit/calls/
// cumulative_call.h), which is faster and gives the evaluator's bits.
//
// Rounding: the steps fold the elements in a tree, where the evaluator folds
// each window from left to right. XLA takes reduce-window reducers to be
// associative and so does this pass; for floats with a non-exact reducer
// (add, logaddexp, ...) the results may differ from the evaluator's by
// rounding; for integers, min/max and other exact reducers they are equal.
// With f(init, init) == init, f(init, fold of x[0..i]) equals the
// evaluator's fold of init, the n - 1 - i padding inits and x[0..i] under
// associativity.
//   Requires: a verified module. Guarantees: each such reduce-window is
//   replaced; its users see the same shape; the reducer is left for DCE.
#ifndef XJIT_PASSES_SCAN_CUMULATIVE_WINDOWS_H_
#define XJIT_PASSES_SCAN_CUMULATIVE_WINDOWS_H_

#include "passes/pass.h"

namespace xjit {

class ScanCumulativeWindows : public Pass {
 public:
  absl::string_view name() const override { return "scan-cumulative-windows"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_SCAN_CUMULATIVE_WINDOWS_H_
