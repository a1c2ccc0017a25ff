// Internal interface between the evaluator's driver (interpreter/evaluator.cc: walks
// computations, dispatches on opcode, evaluates the simple and elementwise
// operations) and the per-family files in this folder, which evaluate the
// operations with more involved semantics. Every function takes the
// instruction (for its shape, attributes and called computations) and its
// evaluated operands, and returns the result in the instruction's shape and
// layout. Errors are user-visible statuses (e.g. Unimplemented); operands are
// already verified to have the shapes the verifier requires.
#ifndef XJIT_INTERPRETER_OPS_H_
#define XJIT_INTERPRETER_OPS_H_

#include <cstdint>
#include <functional>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace xjit::eval {

// Runs a called computation (reduce's to_apply, sort's comparator, ...) on
// arguments and returns its root value.
using CallComputation =
    std::function<absl::StatusOr<Literal>(const Computation&, absl::Span<const Literal* const>)>;

struct Context {
  CallComputation call;
  // State of the rng used by `rng` (RngUniform / RngNormal): a documented,
  // seeded generator advanced on every use.
  uint64_t* rng_state = nullptr;
};

using Operands = absl::Span<const Literal* const>;

absl::StatusOr<Literal> EvalDot(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalConvolution(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalFft(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalCholesky(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalTriangularSolve(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalGather(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalScatter(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalSort(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalTopK(const Instruction& instruction, Operands operands, const Context& context);
// topk's values for `instruction`'s (values, indices) result, with k and
// largest given: EvalTopK, and the evaluator's "TopK" custom call (XLA's
// form of topk: k from the result, largest first; see evaluator.cc).
absl::StatusOr<Literal> TopK(const Instruction& instruction, const Literal& operand, int64_t k,
                             bool largest);
// XLA's QR custom calls (qr.cc, which states their semantics), which the
// evaluator runs when no handler is registered under their targets:
// "Qr" (result (a, taus)) and "ProductOfElementaryHouseholderReflectors".
absl::StatusOr<Literal> Qr(const Instruction& instruction, const Literal& a);
absl::StatusOr<Literal> HouseholderProduct(const Instruction& instruction, const Literal& a,
                                           const Literal& taus);
absl::StatusOr<Literal> EvalReduce(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalReduceWindow(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalSelectAndScatter(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalBatchNormTraining(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalBatchNormInference(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalBatchNormGrad(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalRngBitGenerator(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalRng(const Instruction& instruction, Operands operands, const Context& context);
// Newer XLA opcodes (newer_ops.cc, which states their semantics).
absl::StatusOr<Literal> EvalRaggedDot(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalScaledDot(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalScan(const Instruction& instruction, Operands operands, const Context& context);
absl::StatusOr<Literal> EvalShuffle(const Instruction& instruction, Operands operands, const Context& context);

}  // namespace xjit::eval

#endif  // XJIT_INTERPRETER_OPS_H_
