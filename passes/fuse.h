// Fuse ("fuse"): groups instructions into `fusion` instructions, each of which
// the JIT turns into one kernel (one pass over memory).
//
// Requires: a verified module, best after assign-layouts (fusion decisions do
// not depend on layouts, but the kernels read them). Guarantees: a verified
// module with the same results, where
//   - every fusion is `%fusion = shape fusion(operands), kind=K,
//     calls=%fused_computation`; the fused computation's parameter i is the
//     fusion's operand i, and the fusion's operands are distinct;
//   - kind=kLoop: the root is elementwise or data movement (or a tuple of
//     such roots of one iteration space: multi-output);
//   - kind=kInput: a reduce is the root (or among the tuple's elements), with
//     its elementwise and data-movement producers inside; or (a row fusion)
//     the root is elementwise or data movement over the reduces' input
//     dimensions and reads reduces inside only through broadcasts along
//     their reduced dimensions;
//   - kind=kOutput: exactly one dot or convolution, whose operands are
//     parameters of the fused computation, followed by an elementwise
//     epilogue (bias add, scaling, relu = maximum with 0, tanh, logistic,
//     clamp, convert) that runs on the GEMM result;
//   - only the computations that run as sequences of steps are fused: the
//     entry and the bodies, conditions and branches of while, conditional
//     and call, each separately; reducers and other applied computations are
//     left alone;
//   - nothing with a side effect (infeed/outfeed, send/recv, rng,
//     custom-call, opt-barrier, after-all, collectives, ...), no parameter, no
//     instruction with control edges and no dynamically shaped value is ever
//     fused.
//
// The rules are documented in fuse.cc (the design note at its top).
#ifndef XJIT_PASSES_FUSE_H_
#define XJIT_PASSES_FUSE_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace xjit {

struct FuseOptions {
  // A cheap producer (data movement, simple arithmetic) is duplicated into at
  // most this many consumers, even when it must also be materialised.
  int64_t max_cheap_fanout = 8;
  // An expensive producer (exp, log, tanh, divide, power, ...) is duplicated
  // only into consumers that all fuse it (so that it is never materialised),
  // and into at most this many. 1 by default: on a CPU, computing exp twice
  // costs more than writing it once and reading it back from cache
  // (measured on softmax, f32[256,1024]: 2 gave 1.2x the time of 1;
  // benchmarks/pipeline_benchmark.cc).
  int64_t max_expensive_fanout = 1;
  // Fused computations stop growing at this many instructions.
  int64_t max_fusion_size = 128;
  // A producer joins a consumer only while the fused kernel evaluates each
  // of its computed values at most this many times per element it writes
  // (one value read through several index maps, slices of a stencil or the
  // even/odd halves of an interleave, is computed once per map; fuse.cc,
  // IndexEvaluations). Values that only move data (slices, pads, ...) are
  // not bounded: evaluating one again is an index and a load. At 8
  // lax.associative_scan's down-sweep ran 1.45x faster than at 32 and 1.1x
  // than at 16 (docs/zoo.md, session 20), and no other zoo program's
  // kernels changed. (XLA's fusion allows 15 copies of an instruction.)
  int64_t max_index_evaluations = 8;
  // Epilogues after dot and convolution.
  bool output_fusion = true;
  // Siblings reading the same operand of at least this many bytes share one
  // loop (a multi-output fusion); negative: off.
  int64_t multi_output_min_bytes = 1024;
  // Elementwise, data-movement and reduce instructions left alone become
  // single-instruction fusions, so that every loop the program runs is a
  // fusion the JIT emits.
  bool wrap_single_instructions = true;
  // A reduce whose result is broadcast back along its reduced dimensions
  // joins its consumer (rule 5 in fuse.cc): one kernel per row-wise chain
  // (softmax, layer norm). Needs wrap_single_instructions. Off for targets
  // that cannot lower row programs with several passes (AArch64).
  bool row_fusion = true;
};

class Fuse : public Pass {
 public:
  explicit Fuse(FuseOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "fuse"; }
  absl::StatusOr<bool> Run(Module* module) override;

 private:
  FuseOptions options_;
};

// Instruction classes the rules use (exposed for the JIT and tests).
// Elementwise or data movement: may be fused into a loop as producer or
// consumer (constants and iota as producers).
bool IsLoopFusible(const Instruction& instruction);
// Elementwise operations costly enough that recomputing them in several
// consumers does not pay: IsExpensiveElementwise, a column of the opcode
// table (ir/opcode.h).
// The dot or convolution of a kOutput fusion's computation (null if none).
const Instruction* FusedContraction(const Computation& fused);
// The scatter a consumer runs (rule 6): a one-operand scatter itself, or
// the root of a fusion rooted at one; null for anything else.
const Instruction* ScatterOf(const Instruction& instruction);

}  // namespace xjit

#endif  // XJIT_PASSES_FUSE_H_
