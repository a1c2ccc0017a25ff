// jaxlib's CPU LAPACK custom calls (`lapack_<t><routine>_ffi`, typed FFI,
// what jax.numpy.linalg and jax.scipy.linalg lower to on a CPU), decoded and
// run through OpenBLAS's LAPACK with jaxlib's contract. Both backends use
// this file: the evaluator plans and runs the call per evaluation; the JIT
// plans it once at compile time (jit/calls/lapack_call.h) and runs it per
// call with the plan's scratch.
//
// The contract (jaxlib/cpu/lapack_kernels.cc, jax/_src/lax/linalg.py):
//   - t is s, d, c or z (f32, f64, c64, c128); the routines are trsm, getrf,
//     geqrf, geqp3, orgqr/ungqr, ormqr/unmqr, potrf, syevd/heevd, gesdd,
//     gesvd, geev, gees, gehrd, sytrd/hetrd and gtsv. Every dimension before
//     a matrix's two (a vector's one, a scalar's none) is a batch dimension,
//     the same for every operand and result.
//   - Operands and results are read and written in whatever plain layout the
//     instruction's shapes have (jaxlib asks for column-major through
//     operand_layout_constraints / the result layout; any other is copied).
//   - The results jaxlib aliases to operands (output_operand_aliases) start
//     as copies of those operands and are factored in place, as jaxlib's
//     CopyIfDiffBuffer does: getrf, geqrf, potrf, syevd, gesdd, gesvd, gees,
//     gehrd, sytrd: result 0 <- operand 0; trsm: result <- b; orgqr: result
//     <- a; ormqr: result <- c; geqp3: (a, jpvt) <- (a, jpvt); gtsv: (dl, d,
//     du, b) <- the four operands.
//   - `info` results (s32 per batch element) are LAPACK's info; jax turns a
//     nonzero info into NaN outputs in HLO around the call. geev of a matrix
//     with a non-finite element skips LAPACK and gives info = -4 (jaxlib's
//     rule). Outputs LAPACK does not write (u and vt with mode 'N', the
//     eigenvectors not asked for, geev's vectors when info != 0) are zero.
//   - Attributes come from backend_config (`{uplo = 76 : ui8, ...}`): uplo,
//     side, trans_x, diag, mode, compute_left, compute_right, sort, low,
//     high, left, transpose.
// Unimplemented (naming the target): another lapack_*_ffi target, gesdd /
// gesvd mode 'O', gees with sort != 'N' (jaxlib's own error), element types
// that do not match the target's letter.
#ifndef XJIT_RUNTIME_HOST_JAXLIB_LAPACK_H_
#define XJIT_RUNTIME_HOST_JAXLIB_LAPACK_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"

namespace xjit::runtime::host {

enum class LapackRoutine {
  kTrsm, kGetrf, kGeqrf, kGeqp3, kOrgqr, kOrmqr, kPotrf, kSyevd, kGesdd, kGesvd,
  kGeev, kGees, kGehrd, kSytrd, kGtsv,
};

// One operand or result of the call: a batch of items (a matrix rows x
// cols, a vector rows x 1, or a scalar 1 x 1), each gathered into (or
// scattered from) a packed column-major copy in scratch.
struct LapackArray {
  ElementType type = ElementType::kF32;
  int64_t rows = 1, cols = 1;
  int64_t row_stride = 0, col_stride = 0;  // In elements, in the buffer.
  std::vector<int64_t> offsets;            // Element offset of each item.
  int64_t packed_offset = 0;               // Bytes into scratch.
  int64_t Elements() const { return rows * cols; }
};

struct JaxlibLapackPlan {
  std::string target;
  LapackRoutine routine = LapackRoutine::kPotrf;
  ElementType type = ElementType::kF32;  // The data type (the letter).
  int64_t batch = 1;
  std::vector<LapackArray> operands, results;
  // results[i] starts as operands[from_operand[i]] (-1: as zeros); an
  // aliased operand is gathered straight into the result's packed copy.
  std::vector<int> from_operand;
  // Attributes, as LAPACK's characters and numbers.
  char uplo = 'L', side = 'L', trans = 'N', diag = 'N', mode = 'N';
  char jobvl = 'N', jobvr = 'N', sort = 'N';
  int64_t ilo = 1, ihi = 1;
  // Workspaces (elements) at their byte offsets in scratch: work of the data
  // type, rwork of its real type, iwork of blasint; extra: geev's real
  // eigenvector matrices (2 n^2 reals).
  int64_t lwork = 1, lrwork = 1, liwork = 1;
  int64_t work_offset = 0, rwork_offset = 0, iwork_offset = 0, extra_offset = 0;
  int64_t scratch_bytes = 0;

  std::string ToString() const;
};

// Whether `target` names a jaxlib CPU LAPACK target (`lapack_*_ffi`), known
// or not: the evaluator and the JIT take these when no handler is
// registered under the name.
bool IsJaxlibLapackTarget(absl::string_view target);

// The plan of a custom-call of such a target, workspaces queried from LAPACK
// now. Unimplemented for targets and forms listed above, InvalidArgument
// for shapes that do not fit the routine.
absl::StatusOr<JaxlibLapackPlan> PlanJaxlibLapack(const Instruction& custom_call);

// Whether running the plan calls OpenBLAS (so needs its thread setting):
// false where tiny matrices take xjit's own unblocked routines
// (small_lapack_internal.h: getrf of matrices, trsm of right-hand sides, up
// to 16 x 16).
bool RunsOnOpenBlas(const JaxlibLapackPlan& plan);

// Runs the plan: operands[i] / results[j] are the array leaves' buffers,
// scratch holds plan.scratch_bytes (aligned to 64 bytes is best, 16 needed).
void RunJaxlibLapack(const JaxlibLapackPlan& plan, const void* const* operands,
                     void* const* results, void* scratch);

}  // namespace xjit::runtime::host

#endif  // XJIT_RUNTIME_HOST_JAXLIB_LAPACK_H_
