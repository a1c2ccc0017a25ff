// FoldConstants ("fold-constants"): replaces an instruction whose operands are
// all constants by a constant holding its value, computed by the reference
// evaluator (Evaluator::EvaluateInstruction), so folding agrees with
// interpretation bit for bit.
//
// Also folds an elementwise operation whose operands are all broadcasts of
// scalar constants into a broadcast of the folded scalar (so that
// `broadcast(2) * broadcast(3)` becomes `broadcast(6)` without materialising
// either array).
//
// Never folded:
//   - instructions with side effects or a result that may differ between runs
//     (HasSideEffectDeep: rng, infeed, recv, collectives, custom-calls with
//     side effects), custom-calls of any kind, rng-bit-generator, while loops
//     (they may not terminate), and instructions in control edges;
//   - instructions without operands (parameter, iota, replica-id,
//     partition-id, ...): iota is cheap to keep and the others are not
//     constants;
//   - broadcast (a broadcast of a constant is cheap to keep and fuses; folding
//     would only materialise it);
//   - results with tuple, token or dynamic shapes;
//   - results with more than max_elements elements when that is more than
//     the largest constant operand (folding must not blow up the module);
//   - instructions the evaluator cannot evaluate (they stay as they are).
//   Requires: a verified module. Guarantees: a verified module; the folded
//   constant has the instruction's shape, layout included.
#ifndef XJIT_PASSES_FOLD_CONSTANTS_H_
#define XJIT_PASSES_FOLD_CONSTANTS_H_

#include <cstdint>

#include "passes/pass.h"

namespace xjit {

class FoldConstants : public Pass {
 public:
  explicit FoldConstants(int64_t max_elements = 1024) : max_elements_(max_elements) {}
  absl::string_view name() const override { return "fold-constants"; }
  absl::StatusOr<bool> Run(Module* module) override;

 private:
  int64_t max_elements_;
};

}  // namespace xjit

#endif  // XJIT_PASSES_FOLD_CONSTANTS_H_
