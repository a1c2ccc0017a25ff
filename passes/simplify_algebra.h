// SimplifyAlgebra ("simplify-algebra"): local rewrites that remove work users'
// graphs really contain. Each rule is exact: the result equals the original
// bit for bit for every input, NaN, infinities and signed zeros included
// (signalling NaNs aside: a removed arithmetic op no longer quiets them).
// That is why several familiar rules are restricted:
//   - x + 0.0 is NOT x for floats (-0.0 + 0.0 = +0.0); x + (-0.0) is. So:
//       add(x, c) -> x     integers: c = 0; floats: c = -0.0 (c = +0.0 for
//                          types without -0, the *fnuz f8 types);
//                          complex: never (skipped)
//       subtract(x, c) -> x  integers: c = 0; floats: c = +0.0 (x - +0 =
//                          x + -0)
//   - x * 0 -> 0 only for integers (floats: NaN * 0 = NaN, -1 * 0 = -0).
//   - compare(x, x) only for integers (floats: NaN != NaN).
// The rules (c is a constant or a broadcast of a scalar constant, all of
// whose elements are equal; "-> x" happens only where shapes match exactly,
// layouts included):
//   add(x, c) / add(c, x) -> x              (as above)
//   subtract(x, c) -> x                     (as above)
//   multiply(x, 1) / multiply(1, x) -> x    integers and real floats
//   multiply(x, 0) / multiply(0, x) -> 0    integers only (the zero operand)
//   divide(x, 1) -> x                       integers and real floats
//   negate(negate(x)) -> x; not(not(x)) -> x
//   and(x, x), or(x, x), maximum(x, x), minimum(x, x) -> x
//   and(x, all ones) / or(x, 0) / xor(x, 0) -> x  (pred and integers)
//   compare(x, x) -> broadcast(true/false)  integers and pred only
//   reshape(reshape(x)) -> reshape(x); reshape(x) -> x when shapes equal
//   transpose(transpose(x)) -> transpose(x) with the composed permutation,
//     or x when it is the identity; transpose(x, identity) -> x
//   broadcast(broadcast(x)) -> broadcast(x); broadcast(x) with the identity
//     mapping and x's shape -> x
//   slice(slice(x)) -> slice(x); slice covering all of x -> x
//   concatenate(x) -> x; zero-size operands of concatenate are dropped
//   pad(x, v) with all-zero padding -> x
//   select(c, a, b) with c a splat constant -> a or b; select(p, a, a) -> a
//   convert(x) to x's own type -> x; copy(x) with x's layout -> x
//   reverse(x) over no dimensions (or only size-1 ones) -> x
//   get-tuple-element(tuple(a0, ...), i) -> ai
// Rules apply repeatedly (each instruction is visited in definition order,
// after its operands, so chains collapse in one run). Instructions left
// unused are removed. Side-effecting instructions are never rewritten.
//   Requires: a verified module. Guarantees: a verified module in
//   definition order.
#ifndef XJIT_PASSES_SIMPLIFY_ALGEBRA_H_
#define XJIT_PASSES_SIMPLIFY_ALGEBRA_H_

#include "passes/pass.h"

namespace xjit {

class SimplifyAlgebra : public Pass {
 public:
  absl::string_view name() const override { return "simplify-algebra"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_SIMPLIFY_ALGEBRA_H_
