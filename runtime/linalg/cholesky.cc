// Cholesky through ?potrf (see cholesky.h).
#include "runtime/linalg/cholesky.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <complex>
#include <limits>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/host/lapack_routines.h"

namespace xjit::runtime::linalg {
namespace {

template <typename T>
T NaNValue() {
  if constexpr (std::is_floating_point_v<T>) {
    return std::numeric_limits<T>::quiet_NaN();
  } else {
    using R = typename T::value_type;
    return T(std::numeric_limits<R>::quiet_NaN(), std::numeric_limits<R>::quiet_NaN());
  }
}

template <typename T>
bool IsNaN(T x) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(x);
  } else {
    return std::isnan(x.real()) || std::isnan(x.imag());
  }
}

void Potrf(float* a, char uplo, blasint n, blasint* info) {
  spotrf_(&uplo, &n, a, &n, info, 1);
}
void Potrf(double* a, char uplo, blasint n, blasint* info) {
  dpotrf_(&uplo, &n, a, &n, info, 1);
}
void Potrf(std::complex<float>* a, char uplo, blasint n, blasint* info) {
  cpotrf_(&uplo, &n, a, &n, info, 1);
}
void Potrf(std::complex<double>* a, char uplo, blasint n, blasint* info) {
  zpotrf_(&uplo, &n, a, &n, info, 1);
}

template <typename T>
void Run(const CholeskyPlan& plan, const T* in, T* out, T* scratch) {
  const int64_t n = plan.n;
  const MatrixBatch& a = plan.operand;
  const MatrixBatch& r = plan.result;
  // The work matrix's strides: the result's, or column-major scratch.
  const int64_t wr = plan.in_place ? r.row_stride : 1;
  const int64_t wc = plan.in_place ? r.col_stride : n;
  for (size_t b = 0; b < r.offsets.size(); ++b) {
    const T* src = in + a.offsets[b];
    T* work = plan.in_place ? out + r.offsets[b] : scratch;
    // The triangle read, zeros in the other one (?potrf leaves it alone).
    for (int64_t i = 0; i < n; ++i) {
      const T* src_row = src + i * a.row_stride;
      T* work_row = work + i * wr;
      const int64_t begin = plan.lower ? 0 : i, end = plan.lower ? i + 1 : n;
      if (a.col_stride == 1 && wc == 1) {  // Both row-major: runs of a row.
        std::fill(work_row, work_row + begin, T(0));
        std::copy(src_row + begin, src_row + end, work_row + begin);
        std::fill(work_row + end, work_row + n, T(0));
        continue;
      }
      for (int64_t j = 0; j < n; ++j) {
        work_row[j * wc] = j >= begin && j < end ? src_row[j * a.col_stride] : T(0);
      }
    }
    blasint info = 0;
    Potrf(work, plan.uplo, static_cast<blasint>(n), &info);
    // OpenBLAS's ?potrf stops at a pivot <= 0 but not at a NaN one (NaN <= 0
    // is false): NaN anywhere in the triangle read reaches the diagonal
    // (each L(i, j) enters pivot i), so a NaN diagonal is a failure too.
    for (int64_t i = 0; i < n && info == 0; ++i) {
      if (IsNaN(work[i * (wr + wc)])) info = static_cast<blasint>(i + 1);
    }
    T* dst = out + r.offsets[b];
    if (info != 0) {
      const T nan = NaNValue<T>();
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) dst[i * r.row_stride + j * r.col_stride] = nan;
      }
    } else if (!plan.in_place) {
      for (int64_t i = 0; i < n; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          dst[i * r.row_stride + j * r.col_stride] = work[i * wr + j * wc];
        }
      }
    }
  }
}

}  // namespace

std::string CholeskyPlan::ToString() const {
  return absl::StrCat("potrf n=", n, " lower=", lower ? 1 : 0, " uplo=", std::string(1, uplo),
                      " batch=", result.offsets.size(), in_place ? " in_place" : " via_scratch",
                      " threads=", threads);
}

absl::StatusOr<CholeskyPlan> PlanCholesky(const Instruction& cholesky, int threads) {
  if (cholesky.opcode() != Opcode::kCholesky || cholesky.operand_count() != 1) {
    return absl::InvalidArgumentError("not a cholesky with one operand");
  }
  const Shape& in = cholesky.operand(0)->shape();
  const Shape& out = cholesky.shape();
  if (!in.IsArray() || !out.IsArray() || !IsLinalgType(in.element_type()) ||
      out.element_type() != in.element_type()) {
    return absl::UnimplementedError(
        absl::StrCat("cholesky of ", in.ToString(), ": types other than f32/f64/c64/c128"));
  }
  CholeskyPlan plan;
  plan.type = in.element_type();
  plan.lower = cholesky.attrs().lower;
  plan.threads = threads;
  absl::StatusOr<MatrixBatch> operand = DescribeMatrixBatch(in, "cholesky operand");
  if (!operand.ok()) return operand.status();
  absl::StatusOr<MatrixBatch> result = DescribeMatrixBatch(out, "cholesky result");
  if (!result.ok()) return result.status();
  plan.operand = *std::move(operand);
  plan.result = *std::move(result);
  plan.n = plan.result.rows;
  if (plan.operand.rows != plan.n || plan.operand.cols != plan.n || plan.result.cols != plan.n ||
      plan.operand.offsets.size() != plan.result.offsets.size()) {
    return absl::InvalidArgumentError("cholesky: operand and result must be square matrices "
                                      "of the same dimensions");
  }
  if (plan.n > INT_MAX) return absl::UnimplementedError("cholesky: matrix too large for LAPACK");
  // Column-major work: the triangle is the one HLO names. Row-major: LAPACK
  // sees the transpose, whose other triangle holds the same elements (and,
  // conjugated, the same Hermitian matrix's factor transposed).
  plan.in_place = plan.result.IsColumnMajor() || plan.result.IsRowMajor();
  const bool row_major = plan.in_place && !plan.result.IsColumnMajor();
  plan.uplo = (plan.lower != row_major) ? 'L' : 'U';
  if (!plan.in_place) plan.scratch_bytes = plan.n * plan.n * ByteWidth(plan.type);
  // Per matrix: potrf is about n^3 / 3 multiply-adds.
  plan.threads = runtime::blas::BlasThreadsForWork(threads, plan.n * plan.n * plan.n / 3);
  return plan;
}

void RunCholesky(const CholeskyPlan& plan, void* const* buffers, void* scratch) {
  if (plan.n == 0) return;
  runtime::blas::ScopedBlasThreads threads(plan.threads);
  switch (plan.type) {
    case ElementType::kF32:
      return Run(plan, static_cast<const float*>(buffers[0]), static_cast<float*>(buffers[1]),
                 static_cast<float*>(scratch));
    case ElementType::kF64:
      return Run(plan, static_cast<const double*>(buffers[0]), static_cast<double*>(buffers[1]),
                 static_cast<double*>(scratch));
    case ElementType::kC64:
      return Run(plan, static_cast<const std::complex<float>*>(buffers[0]),
                 static_cast<std::complex<float>*>(buffers[1]),
                 static_cast<std::complex<float>*>(scratch));
    default:
      return Run(plan, static_cast<const std::complex<double>*>(buffers[0]),
                 static_cast<std::complex<double>*>(buffers[1]),
                 static_cast<std::complex<double>*>(scratch));
  }
}

void RunCholeskyCall(const void* plan, void* const* buffers, void* scratch) {
  RunCholesky(*static_cast<const CholeskyPlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::linalg
