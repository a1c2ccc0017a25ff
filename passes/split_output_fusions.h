// SplitOutputFusions ("split-output-fusions"): how the JIT runs an output
// (epilogue) fusion. The first pass of the JIT's preparation (pipeline.h:
// RunJitPipeline).
//
// The fuse pass groups a dot or convolution with the elementwise epilogue
// that follows it (bias add, scaling, activation, convert) into one
// kind=kOutput fusion. The contraction is a library call (OpenBLAS), which
// cannot run arbitrary code per element, so this pass splits each such
// fusion into
//   %contraction = the dot or convolution, on the fusion's operands;
//   %epilogue = fusion(%contraction, the other operands), kind=kLoop,
// where the epilogue's fused computation is the original one with the
// contraction replaced by a parameter. The epilogue reads the contraction's
// result elementwise, so buffer allocation writes it in place over the GEMM
// result (passes/allocate_buffers.h): the epilogue costs one pass over a
// buffer that the GEMM has just written, and no extra memory. A fusion
// whose root is the contraction itself becomes the contraction alone.
//
// Only the computations the JIT compiles as programs are split (the entry,
// and the loop bodies, branches and async computations it reaches through
// while, conditional and async-start): the other sequential computations
// run in the evaluator, which runs fusions of any kind.
//   Requires: a verified module. Guarantees: a verified module with the same
//   results and no output fusion with a contraction in those computations.
#ifndef XJIT_PASSES_SPLIT_OUTPUT_FUSIONS_H_
#define XJIT_PASSES_SPLIT_OUTPUT_FUSIONS_H_

#include "passes/pass.h"

namespace xjit {

class SplitOutputFusions : public Pass {
 public:
  absl::string_view name() const override { return "split-output-fusions"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_SPLIT_OUTPUT_FUSIONS_H_
