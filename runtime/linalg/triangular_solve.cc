// Triangular solve through ?trsm (see triangular_solve.h).
#include "runtime/linalg/triangular_solve.h"

#include <algorithm>
#include <climits>
#include <complex>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/host/lapack_routines.h"

namespace xjit::runtime::linalg {
namespace {

int64_t AlignUp(int64_t n) { return (n + 63) / 64 * 64; }

void Trsm(const TriangularSolvePlan& p, const float* a, float* x) {
  cblas_strsm(CblasColMajor, static_cast<CBLAS_SIDE>(p.side), static_cast<CBLAS_UPLO>(p.uplo),
              static_cast<CBLAS_TRANSPOSE>(p.trans), static_cast<CBLAS_DIAG>(p.diag),
              static_cast<blasint>(p.m), static_cast<blasint>(p.n), 1.0f, a,
              static_cast<blasint>(p.lda), x, static_cast<blasint>(p.ldb));
}
void Trsm(const TriangularSolvePlan& p, const double* a, double* x) {
  cblas_dtrsm(CblasColMajor, static_cast<CBLAS_SIDE>(p.side), static_cast<CBLAS_UPLO>(p.uplo),
              static_cast<CBLAS_TRANSPOSE>(p.trans), static_cast<CBLAS_DIAG>(p.diag),
              static_cast<blasint>(p.m), static_cast<blasint>(p.n), 1.0, a,
              static_cast<blasint>(p.lda), x, static_cast<blasint>(p.ldb));
}
void Trsm(const TriangularSolvePlan& p, const std::complex<float>* a, std::complex<float>* x) {
  const std::complex<float> one(1.0f, 0.0f);
  cblas_ctrsm(CblasColMajor, static_cast<CBLAS_SIDE>(p.side), static_cast<CBLAS_UPLO>(p.uplo),
              static_cast<CBLAS_TRANSPOSE>(p.trans), static_cast<CBLAS_DIAG>(p.diag),
              static_cast<blasint>(p.m), static_cast<blasint>(p.n), &one, a,
              static_cast<blasint>(p.lda), x, static_cast<blasint>(p.ldb));
}
void Trsm(const TriangularSolvePlan& p, const std::complex<double>* a, std::complex<double>* x) {
  const std::complex<double> one(1.0, 0.0);
  cblas_ztrsm(CblasColMajor, static_cast<CBLAS_SIDE>(p.side), static_cast<CBLAS_UPLO>(p.uplo),
              static_cast<CBLAS_TRANSPOSE>(p.trans), static_cast<CBLAS_DIAG>(p.diag),
              static_cast<blasint>(p.m), static_cast<blasint>(p.n), &one, a,
              static_cast<blasint>(p.lda), x, static_cast<blasint>(p.ldb));
}

// dst(i, j) = src(i, j) over a rows x cols matrix.
template <typename T>
void CopyMatrix(const T* src, int64_t src_rs, int64_t src_cs, T* dst, int64_t dst_rs,
                int64_t dst_cs, int64_t rows, int64_t cols) {
  for (int64_t i = 0; i < rows; ++i) {
    for (int64_t j = 0; j < cols; ++j) dst[i * dst_rs + j * dst_cs] = src[i * src_rs + j * src_cs];
  }
}

template <typename T>
void Run(const TriangularSolvePlan& p, const T* a, const T* b, T* out, uint8_t* scratch) {
  T* a_work = reinterpret_cast<T*>(scratch + p.a_scratch_offset);
  T* x_scratch = reinterpret_cast<T*>(scratch + p.x_scratch_offset);
  const int64_t rows = p.result.rows, cols = p.result.cols, m = p.a.rows;
  for (size_t k = 0; k < p.result.offsets.size(); ++k) {
    const T* a_matrix = a + p.a.offsets[k];
    if (p.copy_a) {
      CopyMatrix(a_matrix, p.a.row_stride, p.a.col_stride, a_work, p.a_work_row_stride,
                 p.a_work_col_stride, m, m);
      a_matrix = a_work;
    }
    T* dst = out + p.result.offsets[k];
    T* x = p.x_in_place ? dst : x_scratch;
    CopyMatrix(b + p.b.offsets[k], p.b.row_stride, p.b.col_stride, x, p.x_work_row_stride,
               p.x_work_col_stride, rows, cols);
    Trsm(p, a_matrix, x);
    if (!p.x_in_place) {
      CopyMatrix(x, p.x_work_row_stride, p.x_work_col_stride, dst, p.result.row_stride,
                 p.result.col_stride, rows, cols);
    }
  }
}

}  // namespace

std::string TriangularSolvePlan::ToString() const {
  return absl::StrCat("trsm side=", side == CblasLeft ? "L" : "R",
                      " uplo=", uplo == CblasLower ? "L" : "U",
                      " trans=", trans == CblasNoTrans ? "N" : trans == CblasTrans ? "T" : "C",
                      " diag=", diag == CblasUnit ? "U" : "N", " m=", m, " n=", n,
                      " batch=", result.offsets.size(), copy_a ? " copy_a" : "",
                      x_in_place ? "" : " x_via_scratch", " threads=", threads);
}

absl::StatusOr<TriangularSolvePlan> PlanTriangularSolve(const Instruction& solve, int threads) {
  if (solve.opcode() != Opcode::kTriangularSolve || solve.operand_count() != 2) {
    return absl::InvalidArgumentError("not a triangular-solve with two operands");
  }
  const Shape& a_shape = solve.operand(0)->shape();
  const Shape& b_shape = solve.operand(1)->shape();
  const Shape& out = solve.shape();
  if (!a_shape.IsArray() || !b_shape.IsArray() || !out.IsArray()) {
    return absl::InvalidArgumentError("triangular-solve: operands and result must be arrays");
  }
  const ElementType type = out.element_type();
  if (!IsLinalgType(type) ||
      a_shape.element_type() != type || b_shape.element_type() != type) {
    return absl::UnimplementedError("triangular-solve: types other than f32/f64/c64/c128");
  }
  TriangularSolvePlan p;
  p.type = type;
  p.threads = threads;
  absl::StatusOr<MatrixBatch> a = DescribeMatrixBatch(a_shape, "triangular-solve a");
  if (!a.ok()) return a.status();
  absl::StatusOr<MatrixBatch> b = DescribeMatrixBatch(b_shape, "triangular-solve b");
  if (!b.ok()) return b.status();
  absl::StatusOr<MatrixBatch> result = DescribeMatrixBatch(out, "triangular-solve result");
  if (!result.ok()) return result.status();
  p.a = *std::move(a);
  p.b = *std::move(b);
  p.result = *std::move(result);
  const InstructionAttributes& attrs = solve.attrs();
  const int64_t m = p.a.rows;
  const int64_t rows = p.result.rows, cols = p.result.cols;
  if (p.a.cols != m || p.b.rows != rows || p.b.cols != cols ||
      (attrs.left_side ? rows : cols) != m || p.a.offsets.size() != p.result.offsets.size() ||
      p.b.offsets.size() != p.result.offsets.size()) {
    return absl::InvalidArgumentError("triangular-solve: operand dimensions do not fit");
  }
  if (m > INT_MAX || rows > INT_MAX || cols > INT_MAX) {
    return absl::UnimplementedError("triangular-solve: matrices too large for BLAS");
  }
  const int64_t bytes = ByteWidth(type);
  int64_t scratch = 0;
  // X: BLAS sees the result's matrix, or column-major scratch.
  p.x_in_place = p.result.IsColumnMajor() || p.result.IsRowMajor();
  const bool x_row = p.x_in_place && !p.result.IsColumnMajor();
  if (p.x_in_place) {
    p.x_work_row_stride = p.result.row_stride;
    p.x_work_col_stride = p.result.col_stride;
  } else {
    p.x_work_row_stride = 1;
    p.x_work_col_stride = rows;
    p.x_scratch_offset = scratch;
    scratch += AlignUp(rows * cols * bytes);
  }
  // The matrix BLAS must apply, as (transpose t, conjugate c) of A: op(A),
  // transposed once more when X is row-major (BLAS sees X^T).
  const bool conjugate = attrs.transpose_a == TriangularSolveTranspose::kAdjoint;
  const bool t = (attrs.transpose_a != TriangularSolveTranspose::kNoTranspose) != x_row;
  // A as BLAS reads it: s = whether that is A^T (row-major memory). BLAS
  // conjugates only together with a transposition, so conjugation needs
  // the transposed view (s = !t).
  const bool a_col = p.a.IsColumnMajor(), a_row = p.a.IsRowMajor();
  bool s;
  if (conjugate) {
    s = !t;
    p.copy_a = s ? !a_row : !a_col;
  } else {
    s = !a_col && a_row;
    p.copy_a = !a_col && !a_row;
  }
  if (p.copy_a) {
    p.a_work_row_stride = s ? m : 1;
    p.a_work_col_stride = s ? 1 : m;
    p.a_scratch_offset = scratch;
    scratch += AlignUp(m * m * bytes);
  }
  const bool blas_transposes = t != s;
  p.side = (attrs.left_side != x_row) ? CblasLeft : CblasRight;
  p.uplo = (attrs.lower != s) ? CblasLower : CblasUpper;
  p.trans = !blas_transposes ? CblasNoTrans : conjugate ? CblasConjTrans : CblasTrans;
  p.diag = attrs.unit_diagonal ? CblasUnit : CblasNonUnit;
  p.m = x_row ? cols : rows;
  p.n = x_row ? rows : cols;
  p.lda = std::max<int64_t>(m, 1);
  p.ldb = std::max<int64_t>(p.m, 1);
  p.scratch_bytes = scratch;
  // Per matrix: trsm is about m^2 / 2 multiply-adds per right-hand side.
  p.threads = runtime::blas::BlasThreadsForWork(threads, m * (rows * cols) / 2);
  return p;
}

void RunTriangularSolve(const TriangularSolvePlan& plan, void* const* buffers, void* scratch) {
  if (plan.m == 0 || plan.n == 0) return;
  runtime::blas::ScopedBlasThreads threads(plan.threads);
  uint8_t* s = static_cast<uint8_t*>(scratch);
  switch (plan.type) {
    case ElementType::kF32:
      return Run(plan, static_cast<const float*>(buffers[0]),
                 static_cast<const float*>(buffers[1]), static_cast<float*>(buffers[2]), s);
    case ElementType::kF64:
      return Run(plan, static_cast<const double*>(buffers[0]),
                 static_cast<const double*>(buffers[1]), static_cast<double*>(buffers[2]), s);
    case ElementType::kC64:
      return Run(plan, static_cast<const std::complex<float>*>(buffers[0]),
                 static_cast<const std::complex<float>*>(buffers[1]),
                 static_cast<std::complex<float>*>(buffers[2]), s);
    default:
      return Run(plan, static_cast<const std::complex<double>*>(buffers[0]),
                 static_cast<const std::complex<double>*>(buffers[1]),
                 static_cast<std::complex<double>*>(buffers[2]), s);
  }
}

void RunTriangularSolveCall(const void* plan, void* const* buffers, void* scratch) {
  RunTriangularSolve(*static_cast<const TriangularSolvePlan*>(plan), buffers, scratch);
}

}  // namespace xjit::runtime::linalg
