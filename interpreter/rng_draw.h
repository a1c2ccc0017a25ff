// The draws of HLO `rng` (RngUniform / RngNormal), shared by the evaluator's
// EvalRng and the JIT's rng step (runtime/rng/rng_step.h) so that both give
// the same bits: the sequence is a property of the state, not of who runs
// it. The generator and the mapping to values are stated in rng.cc.
#ifndef XJIT_INTERPRETER_RNG_DRAW_H_
#define XJIT_INTERPRETER_RNG_DRAW_H_

#include <cstdint>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "ir/instruction.h"
#include "ir/literal.h"

namespace xjit::eval {

// Draws `count` elements of `type` with `distribution` from the scalar
// parameters `a` and `b` (of `type`): write(e, bits) receives element e's raw
// bits, e in row-major order. `state` advances by the draws made.
// InvalidArgument / Unimplemented for types the distribution does not take.
absl::Status DrawRng(RandomDistribution distribution, const Literal& a, const Literal& b,
                     ElementType type, int64_t count, uint64_t& state,
                     absl::FunctionRef<void(int64_t, uint64_t)> write);

}  // namespace xjit::eval

#endif  // XJIT_INTERPRETER_RNG_DRAW_H_
