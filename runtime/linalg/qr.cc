// XLA's QR custom calls through ?geqrf and ?orgqr / ?ungqr (see qr.h).
#include "runtime/linalg/qr.h"

#include <algorithm>
#include <climits>
#include <complex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/host/lapack_routines.h"

namespace xjit::runtime::linalg {
namespace {

using C64 = std::complex<float>;
using C128 = std::complex<double>;

// The four element types' routines, under one name each.
void Geqrf(blasint m, blasint n, float* a, blasint lda, float* tau, float* work, blasint lwork,
           blasint* info) {
  sgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void Geqrf(blasint m, blasint n, double* a, blasint lda, double* tau, double* work,
           blasint lwork, blasint* info) {
  dgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void Geqrf(blasint m, blasint n, C64* a, blasint lda, C64* tau, C64* work, blasint lwork,
           blasint* info) {
  cgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void Geqrf(blasint m, blasint n, C128* a, blasint lda, C128* tau, C128* work, blasint lwork,
           blasint* info) {
  zgeqrf_(&m, &n, a, &lda, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, blasint k, float* a, blasint lda, const float* tau,
           float* work, blasint lwork, blasint* info) {
  sorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, blasint k, double* a, blasint lda, const double* tau,
           double* work, blasint lwork, blasint* info) {
  dorgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, blasint k, C64* a, blasint lda, const C64* tau, C64* work,
           blasint lwork, blasint* info) {
  cungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}
void Orgqr(blasint m, blasint n, blasint k, C128* a, blasint lda, const C128* tau, C128* work,
           blasint lwork, blasint* info) {
  zungqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);
}

// LAPACK's optimal workspace (in elements) for the plan's call: its own
// query (lwork = -1), at least the documented minimum max(1, n).
template <typename T>
int64_t QueryWorkspace(const QrPlan& plan) {
  const int64_t minimum = std::max<int64_t>(1, plan.n);
  if (plan.m == 0 || plan.n == 0) return minimum;
  T size{};
  blasint info = 0;
  const blasint m = static_cast<blasint>(plan.m), n = static_cast<blasint>(plan.n);
  const blasint lda = static_cast<blasint>(plan.lda);
  if (plan.householder_product) {
    Orgqr(m, n, static_cast<blasint>(plan.k), nullptr, lda, nullptr, &size, -1, &info);
  } else {
    Geqrf(m, n, nullptr, lda, nullptr, &size, -1, &info);
  }
  if (info != 0) return minimum;
  return std::max(minimum, static_cast<int64_t>(std::real(size)));
}

// to(i, j) = from(i, j) for an m x n matrix, each side with its strides;
// contiguous runs (either side's unit stride shared by both) as copies.
template <typename T>
void CopyMatrix(int64_t m, int64_t n, const T* from, int64_t from_row, int64_t from_col, T* to,
                int64_t to_row, int64_t to_col) {
  if (from_row == 1 && to_row == 1) {  // Column by column.
    for (int64_t j = 0; j < n; ++j) std::copy(from + j * from_col, from + j * from_col + m, to + j * to_col);
    return;
  }
  if (from_col == 1 && to_col == 1) {  // Row by row.
    for (int64_t i = 0; i < m; ++i) std::copy(from + i * from_row, from + i * from_row + n, to + i * to_row);
    return;
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) to[i * to_row + j * to_col] = from[i * from_row + j * from_col];
  }
}

// buffers: Qr {a, result, taus}; the product {a, taus, result}.
template <typename T>
void Run(const QrPlan& plan, void* const* buffers, void* scratch) {
  const T* a = static_cast<const T*>(buffers[0]);
  T* result = static_cast<T*>(buffers[plan.householder_product ? 2 : 1]);
  T* taus = static_cast<T*>(buffers[plan.householder_product ? 1 : 2]);
  uint8_t* bytes = static_cast<uint8_t*>(scratch);
  T* work_matrix = reinterpret_cast<T*>(bytes + plan.work_offset);
  T* staged_tau = reinterpret_cast<T*>(bytes + plan.tau_offset);
  T* lapack_work = reinterpret_cast<T*>(bytes + plan.lwork_offset);
  const blasint m = static_cast<blasint>(plan.m), n = static_cast<blasint>(plan.n);
  const blasint k = static_cast<blasint>(plan.k), lda = static_cast<blasint>(plan.lda);
  const int64_t tau_length = plan.taus.length;
  for (size_t b = 0; b < plan.result.offsets.size(); ++b) {
    T* work = plan.in_place ? result + plan.result.offsets[b] : work_matrix;
    CopyMatrix(plan.m, plan.n, a + plan.a.offsets[b], plan.a.row_stride, plan.a.col_stride, work,
               1, plan.lda);
    T* tau = plan.stage_taus ? staged_tau : taus + plan.taus.offsets[b];
    blasint info = 0;  // Only argument errors, which the plan rules out.
    if (plan.householder_product) {
      if (plan.stage_taus) {
        CopyMatrix<T>(1, tau_length, taus + plan.taus.offsets[b], 0, plan.taus.stride, staged_tau,
                      0, 1);
      }
      Orgqr(m, n, k, work, lda, tau, lapack_work, static_cast<blasint>(plan.lwork), &info);
    } else {
      Geqrf(m, n, work, lda, tau, lapack_work, static_cast<blasint>(plan.lwork), &info);
      if (plan.stage_taus) {
        CopyMatrix<T>(1, tau_length, staged_tau, 0, 1, taus + plan.taus.offsets[b], 0,
                      plan.taus.stride);
      }
    }
    if (!plan.in_place) {
      CopyMatrix(plan.m, plan.n, work, 1, plan.lda, result + plan.result.offsets[b],
                 plan.result.row_stride, plan.result.col_stride);
    }
  }
}

int64_t Aligned(int64_t bytes) { return (bytes + 63) / 64 * 64; }

}  // namespace

bool IsQrTarget(absl::string_view target) {
  return target == kQrTarget || target == kHouseholderProductTarget;
}

std::string QrPlan::ToString() const {
  return absl::StrCat(householder_product ? "orgqr" : "geqrf", " m=", m, " n=", n, " k=", k,
                      " batch=", result.offsets.size(), in_place ? " in_place" : " via_scratch",
                      stage_taus ? " taus_via_scratch" : "", " lwork=", lwork,
                      " threads=", threads);
}

absl::StatusOr<QrPlan> PlanQr(const Instruction& custom_call, int threads) {
  const std::string& target = custom_call.attrs().custom_call_target;
  if (custom_call.opcode() != Opcode::kCustomCall || !IsQrTarget(target)) {
    return absl::InvalidArgumentError("not a Qr or ProductOfElementaryHouseholderReflectors call");
  }
  QrPlan plan;
  plan.householder_product = target == kHouseholderProductTarget;
  plan.threads = threads;
  const int64_t operands = plan.householder_product ? 2 : 1;
  if (custom_call.operand_count() != operands) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call ", target, " takes ", operands, " operand(s)"));
  }
  const Shape& a = custom_call.operand(0)->shape();
  const Shape* result = &custom_call.shape();
  const Shape* taus = nullptr;
  if (plan.householder_product) {
    taus = &custom_call.operand(1)->shape();
  } else {
    if (!result->IsTuple() || result->tuple_size() != 2) {
      return absl::InvalidArgumentError("custom-call Qr: the result must be a tuple (a, taus)");
    }
    taus = &result->tuple_shapes(1);
    result = &result->tuple_shapes(0);
  }
  if (!a.IsArray() || a.rank() < 2 || !result->IsArray() || !taus->IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call ", target, ": operand a must be an array of rank >= 2"));
  }
  if (result->element_type() != a.element_type() || taus->element_type() != a.element_type()) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call ", target, ": a, taus and the result must have one type"));
  }
  if (!IsLinalgType(a.element_type())) {
    return absl::UnimplementedError(absl::StrCat(
        "custom-call ", target, " of ", a.ToString(), ": types other than f32/f64/c64/c128"));
  }
  const int64_t rank = a.rank();
  const int64_t m = a.dimensions(rank - 2), n = a.dimensions(rank - 1);
  const bool taus_batch_matches =
      taus->rank() == rank - 1 &&
      std::equal(a.dimensions().begin(), a.dimensions().end() - 2, taus->dimensions().begin());
  if (!result->SameDimensions(a) || !taus_batch_matches) {
    return absl::InvalidArgumentError(
        absl::StrCat("custom-call ", target, ": the result must have a's dimensions and taus "
                     "a's batch dimensions and one more"));
  }
  plan.type = a.element_type();
  plan.m = m;
  plan.n = n;
  plan.k = taus->dimensions(rank - 2);
  if (plan.householder_product) {
    if (m < n || plan.k > n) {
      return absl::InvalidArgumentError(absl::StrCat(
          "custom-call ", target, ": needs m >= n >= k, got a ", a.ToString(false), " and taus ",
          taus->ToString(false)));
    }
  } else if (plan.k != std::min(m, n)) {
    return absl::InvalidArgumentError("custom-call Qr: taus must have min(m, n) elements");
  }
  if (m > INT_MAX || n > INT_MAX) {
    return absl::UnimplementedError(absl::StrCat("custom-call ", target, ": too large for LAPACK"));
  }
  absl::StatusOr<MatrixBatch> a_batch = DescribeMatrixBatch(a, "custom-call a");
  if (!a_batch.ok()) return a_batch.status();
  absl::StatusOr<MatrixBatch> result_batch = DescribeMatrixBatch(*result, "custom-call result");
  if (!result_batch.ok()) return result_batch.status();
  absl::StatusOr<VectorBatch> taus_batch = DescribeVectorBatch(*taus, "custom-call taus");
  if (!taus_batch.ok()) return taus_batch.status();
  plan.a = *std::move(a_batch);
  plan.result = *std::move(result_batch);
  plan.taus = *std::move(taus_batch);
  plan.lda = std::max<int64_t>(1, m);
  // Column-major (leading dimension m) is what LAPACK reads; an empty
  // matrix is any layout.
  plan.in_place = plan.result.row_stride == 1 && (n <= 1 || plan.result.col_stride == m);
  plan.stage_taus = plan.taus.stride != 1 && plan.k > 1;
  switch (plan.type) {
    case ElementType::kF32: plan.lwork = QueryWorkspace<float>(plan); break;
    case ElementType::kF64: plan.lwork = QueryWorkspace<double>(plan); break;
    case ElementType::kC64: plan.lwork = QueryWorkspace<C64>(plan); break;
    default: plan.lwork = QueryWorkspace<C128>(plan); break;
  }
  const int64_t width = ByteWidth(plan.type);
  int64_t bytes = 0;
  if (!plan.in_place) {
    plan.work_offset = bytes;
    bytes += Aligned(m * n * width);
  }
  if (plan.stage_taus) {
    plan.tau_offset = bytes;
    bytes += Aligned(plan.k * width);
  }
  plan.lwork_offset = bytes;
  bytes += Aligned(plan.lwork * width);
  plan.scratch_bytes = bytes;
  // Per matrix: geqrf and orgqr are about m * n * k multiply-adds.
  plan.threads = runtime::blas::BlasThreadsForWork(threads, plan.m * plan.n * plan.k);
  return plan;
}

void RunQr(const QrPlan& plan, void* const* buffers, void* scratch) {
  if (plan.m == 0 || plan.n == 0) return;  // Nothing to factor, taus empty.
  runtime::blas::ScopedBlasThreads threads(plan.threads);
  switch (plan.type) {
    case ElementType::kF32: return Run<float>(plan, buffers, scratch);
    case ElementType::kF64: return Run<double>(plan, buffers, scratch);
    case ElementType::kC64: return Run<C64>(plan, buffers, scratch);
    default: return Run<C128>(plan, buffers, scratch);
  }
}

void RunQrCall(const void* plan, void* const* buffers, void* scratch) {
  RunQr(*static_cast<const QrPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::linalg
