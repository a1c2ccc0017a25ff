// runtime/linalg: HLO `triangular-solve` over raw buffers through BLAS's
// ?trsm (OpenBLAS), with the plan made at compile time.
//
// Semantics (those of the evaluator, interpreter/linalg.cc): solves
// op(A) X = B (left_side) or X op(A) = B for X, where A is the lower or upper
// triangle of `a` (the other triangle is never read; with unit_diagonal the
// diagonal is taken as 1 and not read either) and op is the identity,
// transpose or adjoint; batched over every dimension but the two minor ones.
//
// B is copied into the result (or into column-major scratch when the
// result's matrices are not contiguous) and solved in place. A row-major
// matrix is what BLAS sees as its transpose, so the plan rewrites the
// equation for the forms it reads in place: a row-major X turns a left
// solve into a right one with op(A)^T; a row-major A flips the triangle and
// the transposition. BLAS has no "conjugate without transposing", so that
// form (and an A whose matrices are not contiguous) reads a copy of A laid
// out so that it becomes a conjugate transpose.
#ifndef XJIT_RUNTIME_LINALG_TRIANGULAR_SOLVE_H_
#define XJIT_RUNTIME_LINALG_TRIANGULAR_SOLVE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/linalg/matrix_batch.h"

namespace xjit::runtime::linalg {

struct TriangularSolvePlan {
  ElementType type = ElementType::kF32;
  MatrixBatch a;
  MatrixBatch b;
  MatrixBatch result;
  // A as BLAS reads it: in place, or copied into scratch (a_scratch_offset
  // bytes) with the strides a_work_row_stride / a_work_col_stride.
  bool copy_a = false;
  int64_t a_scratch_offset = 0;
  int64_t a_work_row_stride = 0;
  int64_t a_work_col_stride = 0;
  // X: solved in the result, or in column-major scratch (x_scratch_offset).
  bool x_in_place = false;
  int64_t x_scratch_offset = 0;
  int64_t x_work_row_stride = 0;
  int64_t x_work_col_stride = 0;
  // The ?trsm call (column-major): CBLAS enum values.
  int side = 0, uplo = 0, trans = 0, diag = 0;
  int64_t m = 0, n = 0, lda = 1, ldb = 1;
  int64_t scratch_bytes = 0;
  int threads = 1;

  std::string ToString() const;
};

// The plan for `triangular-solve` (opcode kTriangularSolve): f32/f64/c64/
// c128, plain layouts; Unimplemented otherwise.
absl::StatusOr<TriangularSolvePlan> PlanTriangularSolve(const Instruction& solve, int threads);

// Runs: buffers = {a, b, result}; scratch holds plan.scratch_bytes.
void RunTriangularSolve(const TriangularSolvePlan& plan, void* const* buffers, void* scratch);
// RunTriangularSolve as a runtime::LibraryFunction.
void RunTriangularSolveCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::linalg

#endif  // XJIT_RUNTIME_LINALG_TRIANGULAR_SOLVE_H_
