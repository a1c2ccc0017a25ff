// ExpandBatchNorm ("expand-batch-norm"): rewrites batch-norm-training,
// batch-norm-inference and batch-norm-grad into reduce, broadcast and
// elementwise arithmetic in the operand's element type, so that the rest of
// the compiler (fusion, the JIT) needs no batch-norm kernel. Turn it off by
// name when a runtime kernel handles these operations directly.
//
// With F the feature dimension, N the element count divided by its size, and
// every per-feature value broadcast along F:
//   inference: y = (x - mean) * (scale * rsqrt(var + eps)) + offset
//   training:  mean = sum(x) / N; var = sum((x - mean)^2) / N (biased);
//              y as above; result tuple(y, mean, var)
//   grad:      r = rsqrt(var + eps); xc = x - mean;
//              doffset = sum(dy); s = sum(dy * xc); dscale = s * r;
//              dx = (scale * r) * (dy - doffset / N - xc * (s * r * r / N))
//              result tuple(dx, dscale, doffset)
// The formulas equal the evaluator's (seeds/003) in exact arithmetic; they
// round once per operation in the element type, so results agree with the
// evaluator's to within a few ulp, not bit for bit.
//   Requires: a verified module. Guarantees: no batch-norm-* instruction is
//   left; the tuple results become `tuple` instructions (the algebraic
//   simplifier then forwards get-tuple-element through them).
#ifndef XJIT_PASSES_EXPAND_BATCH_NORM_H_
#define XJIT_PASSES_EXPAND_BATCH_NORM_H_

#include "passes/pass.h"

namespace xjit {

class ExpandBatchNorm : public Pass {
 public:
  absl::string_view name() const override { return "expand-batch-norm"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_EXPAND_BATCH_NORM_H_
