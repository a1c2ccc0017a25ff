// The compile driver's glue for `dot` and `convolution`: library-call steps
// into runtime/blas with plans made at compile time. A dot is an OpenBLAS
// GEMM (small ones by xjit's own kernel), split over the executable's
// thread pool with OpenBLAS single-threaded unless the environment asks for
// OpenBLAS's own threads; a convolution is im2col + GEMM or the direct
// AVX-512 convolution, as its plan chooses. The plan's error (Unimplemented
// for layouts or types it does not handle) leaves the instruction to the
// evaluator.
#ifndef XJIT_JIT_CALLS_BLAS_CALL_H_
#define XJIT_JIT_CALLS_BLAS_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Inputs: the two operands' slots; output: the result's. `threads` (at
// least 1) is the executable's thread count. `description` receives the
// plan in words.
absl::StatusOr<runtime::LibraryCall> PlanDotCall(const Instruction& dot, int threads,
                                                 std::string* description);
absl::StatusOr<runtime::LibraryCall> PlanConvolutionCall(const Instruction& convolution,
                                                         int threads, std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CALLS_BLAS_CALL_H_
