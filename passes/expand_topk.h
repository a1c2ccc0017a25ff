// ExpandTopK ("expand-topk"): rewrites the topk the JIT cannot compile as
// such into a stable sort of the operand together with an iota along the
// last dimension, followed by slices of the first k columns, so that it
// runs as the compiled sort (runtime/sort with a compiled comparator)
// instead of an interpreted step. A topk of pred, 8- to 64-bit integers,
// f16, bf16, f32 or f64 is left alone: the JIT compiles it as a selection
// (runtime/sort/topk.h), O(n) per row where the sort is O(n log n). JAX's
// lax.top_k emits topk.
//
// The comparator is `a > b` (largest=true) or `a < b` (largest=false) on the
// values only, with type=TOTALORDER for floats (the evaluator's order: -NaN <
// -inf < ... < -0 < +0 < ... < +inf < +NaN); the sort is stable, so equal
// values keep ascending indices, as the evaluator's topk returns them. The
// result is therefore the evaluator's, bit for bit.
// XLA's "TopK" custom call (what its TopkRewriter writes: k from the result,
// largest first) is expanded the same way (whatever its element type) when
// no handler is registered for that target; the evaluator gives it topk's
// values (evaluator.cc).
//   Requires: a verified module. Guarantees: no topk instruction is left
//   but those of the element types above; each other one becomes
//   tuple(slice(gte(sort, 0)), slice(gte(sort, 1))) (the algebraic
//   simplifier forwards get-tuple-element through it).
#ifndef XJIT_PASSES_EXPAND_TOPK_H_
#define XJIT_PASSES_EXPAND_TOPK_H_

#include "passes/pass.h"

namespace xjit {

class ExpandTopK : public Pass {
 public:
  absl::string_view name() const override { return "expand-topk"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_EXPAND_TOPK_H_
