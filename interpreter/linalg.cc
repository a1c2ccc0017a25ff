// Evaluation of cholesky and triangular-solve on batches of matrices (every
// dimension but the two minor ones is a batch dimension), in
// complex<double> arithmetic (real types have zero imaginary parts), rounded
// once to the result type.
//
// cholesky: lower=true reads the lower triangle of A (Hermitian) and returns
// L with A = L L^H; lower=false reads the upper triangle and returns U with
// A = U^H U (XLA computes it as the transpose of the lower factor of A^T).
// The other triangle of the result, which XLA leaves unspecified, is zero.
// When a diagonal pivot is not a positive real (zero or negative: not
// positive definite; or NaN input) the whole matrix of that batch element is
// NaN, as XLA's expander produces.
//
// triangular-solve: solves op(A) X = B (left_side) or X op(A) = B, where A is
// the lower or upper triangle of `a` (the other triangle is never read; with
// unit_diagonal the diagonal is taken as 1 and not read) and op is identity,
// transpose or adjoint. Division by a zero pivot gives inf/NaN, as IEEE does.
#include <cmath>
#include <complex>
#include <limits>
#include <vector>

#include "ir/element_type.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;
using Complex = std::complex<double>;

namespace {

// Calls fn(batch_index_prefix) for every batch element of an array of rank
// >= 2 (the index has the two minor positions left at 0).
absl::Status ForEachBatch(absl::Span<const int64_t> dims,
                          const std::function<absl::Status(Index&)>& fn) {
  std::vector<int64_t> batch_dims(dims.begin(), dims.end());
  batch_dims[batch_dims.size() - 1] = 1;
  batch_dims[batch_dims.size() - 2] = 1;
  return internal::ForEachIndex(batch_dims, [&](const Index& index) {
    Index copy = index;
    return fn(copy);
  });
}

}  // namespace

absl::StatusOr<Literal> EvalCholesky(const Instruction& instruction, Operands operands,
                                     const Context& context) {
  if (operands.size() != 1) return internal::OperandError(instruction, "needs 1 operand");
  const Literal& a = *operands[0];
  const int64_t rank = a.shape().rank();
  if (rank < 2 || a.shape().dimensions(rank - 1) != a.shape().dimensions(rank - 2) ||
      !instruction.shape().IsArray() || instruction.shape().rank() != rank) {
    return internal::OperandError(instruction, "operand must be a batch of square matrices");
  }
  const int64_t n = a.shape().dimensions(rank - 1);
  const bool lower = instruction.attrs().lower;
  Literal result(internal::WithDims(instruction.shape(), a.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachBatch(a.shape().dimensions(), [&](Index& index) {
    // m(i, j) = lower ? a(i, j) : a(j, i), read for i >= j only.
    auto m = [&](int64_t i, int64_t j) {
      index[rank - 2] = lower ? i : j;
      index[rank - 1] = lower ? j : i;
      return internal::ReadComplex(a, index);
    };
    std::vector<Complex> l(n * n, 0.0);
    bool failed = false;
    for (int64_t j = 0; j < n && !failed; ++j) {
      double diag = m(j, j).real();
      for (int64_t k = 0; k < j; ++k) diag -= std::norm(l[j * n + k]);
      // Not positive (zero, negative or NaN): LAPACK's ?potrf stops there
      // too, and the compiled cholesky (runtime/linalg) gives the same NaN.
      if (!(diag > 0.0)) {
        failed = true;
        break;
      }
      double pivot = std::sqrt(diag);
      l[j * n + j] = pivot;
      for (int64_t i = j + 1; i < n; ++i) {
        Complex sum = m(i, j);
        for (int64_t k = 0; k < j; ++k) sum -= l[i * n + k] * std::conj(l[j * n + k]);
        l[i * n + j] = sum / pivot;
      }
    }
    const double nan = std::numeric_limits<double>::quiet_NaN();
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        // Lower: L(i, j). Upper: U = L^T, so U(i, j) = L(j, i).
        Complex value = failed ? Complex(nan, IsComplex(a.shape().element_type()) ? nan : 0.0)
                               : (lower ? l[i * n + j] : l[j * n + i]);
        index[rank - 2] = i;
        index[rank - 1] = j;
        internal::WriteComplex(result, index, value);
      }
    }
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<Literal> EvalTriangularSolve(const Instruction& instruction, Operands operands,
                                            const Context& context) {
  if (operands.size() != 2) return internal::OperandError(instruction, "needs 2 operands");
  const Literal& a = *operands[0];
  const Literal& b = *operands[1];
  const InstructionAttributes& attrs = instruction.attrs();
  const int64_t rank = a.shape().rank();
  if (rank < 2 || b.shape().rank() != rank ||
      a.shape().dimensions(rank - 1) != a.shape().dimensions(rank - 2) ||
      !instruction.shape().IsArray() || instruction.shape().rank() != rank) {
    return internal::OperandError(instruction, "operands must be batches of matrices");
  }
  for (int64_t d = 0; d < rank - 2; ++d) {
    if (a.shape().dimensions(d) != b.shape().dimensions(d)) {
      return internal::OperandError(instruction, "batch dimensions differ");
    }
  }
  const int64_t m = a.shape().dimensions(rank - 1);
  const int64_t rows = b.shape().dimensions(rank - 2);
  const int64_t cols = b.shape().dimensions(rank - 1);
  if ((attrs.left_side ? rows : cols) != m) {
    return internal::OperandError(instruction, "b does not match a");
  }
  const bool transpose = attrs.transpose_a != TriangularSolveTranspose::kNoTranspose;
  const bool conjugate = attrs.transpose_a == TriangularSolveTranspose::kAdjoint;
  // op(A) is lower triangular iff (lower xor transposed).
  const bool op_lower = attrs.lower != transpose;
  Literal result(internal::WithDims(instruction.shape(), b.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachBatch(b.shape().dimensions(), [&](Index& index) {
    // t = op(tri(A)), dense m x m.
    std::vector<Complex> t(m * m, 0.0);
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        bool in_triangle = attrs.lower ? j <= i : j >= i;
        if (!in_triangle) continue;
        Complex value;
        if (i == j && attrs.unit_diagonal) {
          value = 1.0;
        } else {
          index[rank - 2] = i;
          index[rank - 1] = j;
          value = internal::ReadComplex(a, index);
        }
        if (conjugate) value = std::conj(value);
        if (transpose) {
          t[j * m + i] = value;
        } else {
          t[i * m + j] = value;
        }
      }
    }
    std::vector<Complex> x(rows * cols);
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        index[rank - 2] = i;
        index[rank - 1] = j;
        x[i * cols + j] = internal::ReadComplex(b, index);
      }
    }
    if (attrs.left_side) {
      // T X = B, column by column: forward substitution when T is lower.
      for (int64_t c = 0; c < cols; ++c) {
        for (int64_t s = 0; s < m; ++s) {
          int64_t i = op_lower ? s : m - 1 - s;
          Complex sum = x[i * cols + c];
          for (int64_t k = 0; k < m; ++k) {
            if (k == i || (op_lower ? k > i : k < i)) continue;
            sum -= t[i * m + k] * x[k * cols + c];
          }
          x[i * cols + c] = sum / t[i * m + i];
        }
      }
    } else {
      // X T = B, row by row: x_j T_jj = b_j - sum_{k != j} x_k T_kj, solved
      // in increasing j when T is upper.
      for (int64_t r = 0; r < rows; ++r) {
        for (int64_t s = 0; s < m; ++s) {
          int64_t j = op_lower ? m - 1 - s : s;
          Complex sum = x[r * cols + j];
          for (int64_t k = 0; k < m; ++k) {
            if (k == j || (op_lower ? k < j : k > j)) continue;
            sum -= x[r * cols + k] * t[k * m + j];
          }
          x[r * cols + j] = sum / t[j * m + j];
        }
      }
    }
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        index[rank - 2] = i;
        index[rank - 1] = j;
        internal::WriteComplex(result, index, x[i * cols + j]);
      }
    }
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
