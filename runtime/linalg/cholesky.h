// runtime/linalg: HLO `cholesky` over raw buffers through LAPACK's ?potrf
// (OpenBLAS), with the plan made at compile time.
//
// Semantics (those of the evaluator, interpreter/linalg.cc, and of XLA):
// lower=true reads the lower triangle of each (Hermitian) matrix A and
// returns L with A = L L^H; lower=false reads the upper triangle and returns
// U with A = U^H U. The other triangle of the result is zero. When a pivot
// is not positive (zero or negative: not positive definite; or NaN in the
// triangle read) the whole matrix of that batch element is NaN (complex:
// NaN + NaN i), as XLA's expander produces.
//
// Each matrix is copied (its read triangle, zeros in the other) into the
// result when the result's matrices are contiguous (row-major ones are
// factored as the transpose: the other triangle, no transposition), else into
// column-major scratch that is copied out after, so any plain layouts of
// operand and result work.
#ifndef XJIT_RUNTIME_LINALG_CHOLESKY_H_
#define XJIT_RUNTIME_LINALG_CHOLESKY_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/linalg/matrix_batch.h"

namespace xjit::runtime::linalg {

struct CholeskyPlan {
  ElementType type = ElementType::kF32;
  int64_t n = 0;
  bool lower = true;
  MatrixBatch operand;
  MatrixBatch result;
  bool in_place = false;  // Factor in the result buffer (else in scratch).
  char uplo = 'L';        // The triangle ?potrf works on, of the work matrix.
  int64_t scratch_bytes = 0;
  int threads = 1;  // OpenBLAS threads around the call.

  std::string ToString() const;
};

// The plan for `cholesky` (opcode kCholesky): f32/f64/c64/c128, plain
// layouts; Unimplemented otherwise.
absl::StatusOr<CholeskyPlan> PlanCholesky(const Instruction& cholesky, int threads);

// Runs: buffers = {operand, result}; scratch holds plan.scratch_bytes.
void RunCholesky(const CholeskyPlan& plan, void* const* buffers, void* scratch);
// RunCholesky as a runtime::LibraryFunction (`plan` is a CholeskyPlan).
void RunCholeskyCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::linalg

#endif  // XJIT_RUNTIME_LINALG_CHOLESKY_H_
