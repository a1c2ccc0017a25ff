// SplitOutputFusions: how the JIT runs an output (epilogue) fusion.
//
// The fuse pass groups a dot or convolution with the elementwise epilogue
// that follows it (bias add, scaling, activation, convert) into one
// kind=kOutput fusion. The contraction is a library call (OpenBLAS), which
// cannot run arbitrary code per element, so the JIT splits each such fusion
// of the entry computation into
//   %contraction = the dot or convolution, on the fusion's operands;
//   %epilogue = fusion(%contraction, the other operands), kind=kLoop,
// where the epilogue's fused computation is the original one with the
// contraction replaced by a parameter. The epilogue reads the contraction's
// result elementwise, so buffer allocation writes it in place over the GEMM
// result (passes/allocate_buffers.h): the epilogue costs one pass over a
// buffer that the GEMM has just written, and no extra memory. A fusion
// whose root is the contraction itself becomes the contraction alone.
//
// Requires a verified module; keeps it verified with the same results. Only
// the computations the JIT compiles as programs are split (the entry, and
// the loop bodies and branches it compiles separately): the other
// sequential computations run in the evaluator, which runs fusions of any
// kind.
#ifndef XJIT_JIT_SPLIT_OUTPUT_FUSIONS_H_
#define XJIT_JIT_SPLIT_OUTPUT_FUSIONS_H_

#include "absl/status/statusor.h"
#include "ir/module.h"

namespace xjit::jit {

// Splits the fusions of the entry; returns the number of fusions split.
absl::StatusOr<int> SplitOutputFusions(Module* module);
// The same for `computation`, one of `module`'s.
absl::StatusOr<int> SplitOutputFusions(Module* module, Computation* computation);

}  // namespace xjit::jit

#endif  // XJIT_JIT_SPLIT_OUTPUT_FUSIONS_H_
