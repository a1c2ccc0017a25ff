// Canonicalize ("canonicalize"): gives each operation one spelling before the
// other passes look at it.
//
// Most of XLA's client-side sugar never reaches an xjit module: HLO text and
// the C++ builder already write Dot as `dot` with explicit dimension numbers,
// Collapse as `reshape`, Broadcast as `broadcast` with explicit dimensions,
// SAME/VALID convolution padding as an explicit window, and CrossReplicaSum
// as `all-reduce` (see ir/builder.h). What remains, and what this pass
// rewrites:
//   - `call` is inlined: the callee's body is copied into the caller, so that
//     the simplifications and fusion see through it. Calls with control edges
//     or whose callee disagrees in layout with the call site are kept.
//   - dot with neither contracting nor batch dimensions (an outer product) is
//     written as multiply(broadcast(lhs), broadcast(rhs)), which fusion
//     handles and GEMM would not. Operands are converted to the result's
//     element type first (a dot's result type may be wider); one product
//     per element, so the result is bit-identical.
// Computations that only calls used, and that were inlined wherever they
// were called, are removed (inlining into them too, and leaving them to the
// later passes, made a chain of calls d deep cost time quadratic in d);
// other callees left without callers are removed by DCE.
//   Requires: a verified module. Guarantees: a verified module with no `call`
//   instructions except the kept ones above.
#ifndef XJIT_PASSES_CANONICALIZE_H_
#define XJIT_PASSES_CANONICALIZE_H_

#include "passes/pass.h"

namespace xjit {

class Canonicalize : public Pass {
 public:
  absl::string_view name() const override { return "canonicalize"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_CANONICALIZE_H_
