// runtime/linalg: XLA's QR custom calls over raw buffers through LAPACK
// (OpenBLAS's ?geqrf and ?orgqr / ?ungqr), with the plan made at compile
// time.
//
// Semantics (XLA's QrExpander; the evaluator's, interpreter/qr.cc), batched
// over every dimension but the two minor ones:
//   - custom-call target "Qr": operand a T[..., m, n]; result the tuple
//     (T[..., m, n], T[..., min(m, n)]) in LAPACK ?geqrf form: R on and above
//     the diagonal (upper trapezoidal when m < n; a real diagonal), below it
//     the Householder vectors v_j (v_j(j) = 1 implied, v_j(i < j) = 0), and
//     taus with H_j = I - tau_j v_j v_j^H, Q = H_0 H_1 ... H_{k-1}, A = Q R.
//   - "ProductOfElementaryHouseholderReflectors": operands a T[..., m, n]
//     (m >= n) and taus T[..., k] (k <= n); result T[..., m, n], the first n
//     columns of H_0 ... H_{k-1}, with v_j read from the strict lower
//     triangle of a's column j (?orgqr / ?ungqr). Nothing else of a is read.
//
// Each matrix is copied into the result when the result's matrices are
// column-major (LAPACK's form) and factored there, else into column-major
// scratch that is copied out after; a taus vector whose elements are not
// contiguous goes through scratch too. So any plain layouts work. (A
// row-major matrix cannot be read as its transpose here, unlike cholesky:
// the QR of A^T is another factorisation.) LAPACK's workspace is sized at
// compile time by its own workspace query.
#ifndef XJIT_RUNTIME_LINALG_QR_H_
#define XJIT_RUNTIME_LINALG_QR_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "runtime/linalg/matrix_batch.h"

namespace xjit::runtime::linalg {

inline constexpr absl::string_view kQrTarget = "Qr";
inline constexpr absl::string_view kHouseholderProductTarget =
    "ProductOfElementaryHouseholderReflectors";

struct QrPlan {
  bool householder_product = false;  // ?orgqr; else ?geqrf ("Qr").
  ElementType type = ElementType::kF32;
  int64_t m = 0, n = 0, k = 0;  // k: the number of reflectors.
  MatrixBatch a;                // The operand.
  MatrixBatch result;           // Qr's first result; the product's result.
  VectorBatch taus;             // Qr's second result; the product's operand.
  // The work matrix (column-major, leading dimension lda): the result's own
  // matrix, or scratch at work_offset bytes.
  bool in_place = false;
  int64_t lda = 1;
  int64_t work_offset = 0;
  // taus through scratch (at tau_offset) when its elements are strided.
  bool stage_taus = false;
  int64_t tau_offset = 0;
  // LAPACK's workspace: lwork elements at lwork_offset.
  int64_t lwork = 1;
  int64_t lwork_offset = 0;
  int64_t scratch_bytes = 0;
  int threads = 1;  // OpenBLAS threads around the call.

  std::string ToString() const;
};

// Whether `target` is one of the two custom-call targets above.
bool IsQrTarget(absl::string_view target);

// The plan for a custom-call of either target: f32/f64/c64/c128 and plain
// layouts (Unimplemented otherwise); InvalidArgument for shapes that are not
// the forms above.
absl::StatusOr<QrPlan> PlanQr(const Instruction& custom_call, int threads);

// Runs. buffers: Qr {a, result a, result taus}; the product {a, taus,
// result}. scratch holds plan.scratch_bytes.
void RunQr(const QrPlan& plan, void* const* buffers, void* scratch);
// RunQr as a runtime::LibraryFunction (`plan` is a QrPlan).
void RunQrCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::linalg

#endif  // XJIT_RUNTIME_LINALG_QR_H_
