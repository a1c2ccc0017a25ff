// XLA's QR custom calls, which its QrExpander expands (so any XLA backend
// runs them): "Qr" and "ProductOfElementaryHouseholderReflectors", on
// batches of matrices (every dimension but the two minor ones is a batch
// dimension), in complex<double> arithmetic (real types have zero imaginary
// parts, and then every step below is real), rounded once to the result
// type. An unblocked Householder QR (Golub and Van Loan, algorithm 5.2.1),
// the conventions being LAPACK's ?geqrf / ?orgqr ones, which XLA follows:
//
// Qr(a T[..., m, n]) -> (T[..., m, n], taus T[..., min(m, n)]). For column
// j < min(m, n) of the matrix being reduced, alpha = a(j, j) and x = a(j+1:,
// j): when x is zero and alpha is real, tau = 0 and nothing changes (H = I);
// else beta = -sign(re alpha) * |(alpha, x)| (+|...| when re alpha < 0, else
// -|...|, XLA's test), tau = (beta - alpha) / beta with alpha's imaginary part
// negated ((beta - re alpha) / beta - i im alpha / beta), v = (1, x / (alpha -
// beta)). The columns right of j get H_j^H = I - conj(tau) v v^H applied,
// a(j, j) becomes beta and a(j+1:, j) the tail of v. So the first result
// holds R on and above the diagonal (a real diagonal) and the vectors below
// it, with A = H_0 ... H_{k-1} R and H_j = I - tau_j v_j v_j^H.
//
// ProductOfElementaryHouseholderReflectors(a T[..., m, n], taus T[..., k])
// with m >= n >= k -> T[..., m, n]: the first n columns of H_0 ... H_{k-1},
// v_j from the strict lower triangle of a's column j (nothing else of a is
// read), applied to the m x n identity from H_{k-1} down to H_0.
//
// Norms are computed scaled by the largest component, so no square
// overflows or underflows; NaN anywhere in a column makes that batch
// element's results NaN from there on.
#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/ops.h"
#include "interpreter/ops_internal.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;
using Complex = std::complex<double>;

namespace {

// sqrt(sum |values|^2) without overflow or underflow of the squares.
double ScaledNorm(const std::vector<double>& values) {
  double scale = 0.0;
  for (double value : values) {
    if (std::isnan(value)) return value;
    scale = std::max(scale, std::abs(value));
  }
  if (scale == 0.0 || std::isinf(scale)) return scale;
  double sum = 0.0;
  for (double value : values) sum += (value / scale) * (value / scale);
  return scale * std::sqrt(sum);
}

// Calls fn(index) for every batch element of dims[0..rank-minor), with the
// index's last `minor` positions left at 0 for the caller to set.
absl::Status ForEachBatchOf(absl::Span<const int64_t> dims, int64_t minor,
                            const std::function<absl::Status(Index&)>& fn) {
  std::vector<int64_t> batch(dims.begin(), dims.end());
  for (int64_t d = 0; d < minor; ++d) batch[batch.size() - 1 - d] = 1;
  return internal::ForEachIndex(batch, [&](const Index& index) {
    Index copy = index;
    return fn(copy);
  });
}

// The matrix of batch element `index` (rank r; its two minor positions are
// overwritten), row-major m x n.
std::vector<Complex> ReadMatrix(const Literal& literal, Index& index, int64_t m, int64_t n) {
  const int64_t rank = literal.shape().rank();
  std::vector<Complex> matrix(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      index[rank - 2] = i;
      index[rank - 1] = j;
      matrix[i * n + j] = internal::ReadComplex(literal, index);
    }
  }
  return matrix;
}

void WriteMatrix(Literal& literal, Index& index, int64_t m, int64_t n,
                 const std::vector<Complex>& matrix) {
  const int64_t rank = literal.shape().rank();
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      index[rank - 2] = i;
      index[rank - 1] = j;
      internal::WriteComplex(literal, index, matrix[i * n + j]);
    }
  }
}

// Applies I - tau v v^H from the left to columns [first, n) of the m x n
// row-major matrix `a`, where v(i) = 0 for i < j, v(j) = 1, v(i) = a(i, j)
// below (read from `vectors`, row-major with `vectors_n` columns).
void ApplyReflector(std::vector<Complex>& a, int64_t m, int64_t n, int64_t first,
                    const std::vector<Complex>& vectors, int64_t vectors_n, int64_t j,
                    Complex tau) {
  if (tau == Complex(0.0)) return;
  auto v = [&](int64_t i) { return i == j ? Complex(1.0) : vectors[i * vectors_n + j]; };
  for (int64_t c = first; c < n; ++c) {
    Complex w = 0.0;  // v^H a(:, c)
    for (int64_t i = j; i < m; ++i) w += std::conj(v(i)) * a[i * n + c];
    const Complex t = tau * w;
    for (int64_t i = j; i < m; ++i) a[i * n + c] -= v(i) * t;
  }
}

// Checks the shapes of both targets (XLA's forms; see the file comment).
absl::Status CheckQrShapes(const Instruction& instruction, const Shape& a, const Shape& result,
                           const Shape& taus, bool householder_product) {
  if (!a.IsArray() || a.rank() < 2 || !result.IsArray() || !taus.IsArray()) {
    return internal::OperandError(instruction, "operand a must be an array of rank >= 2");
  }
  if (!IsFloat(a.element_type()) && !IsComplex(a.element_type())) {
    return internal::OperandError(instruction, "a must have a floating-point or complex type");
  }
  if (result.element_type() != a.element_type() || taus.element_type() != a.element_type()) {
    return internal::OperandError(instruction, "a, taus and the result must have one type");
  }
  const int64_t rank = a.rank();
  const int64_t m = a.dimensions(rank - 2), n = a.dimensions(rank - 1);
  if (!result.SameDimensions(a) || taus.rank() != rank - 1 ||
      !std::equal(a.dimensions().begin(), a.dimensions().end() - 2, taus.dimensions().begin())) {
    return internal::OperandError(instruction, "the result must have a's dimensions, and taus "
                                               "a's batch dimensions and one more");
  }
  const int64_t k = taus.dimensions(rank - 2);
  if (householder_product && (m < n || k > n)) {
    return internal::OperandError(instruction, absl::StrCat("needs m >= n >= k, got m=", m,
                                                            " n=", n, " k=", k));
  }
  if (!householder_product && k != std::min(m, n)) {
    return internal::OperandError(instruction, "taus must have min(m, n) elements");
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Literal> Qr(const Instruction& instruction, const Literal& a) {
  const Shape& shape = instruction.shape();
  if (!shape.IsTuple() || shape.tuple_size() != 2) {
    return internal::OperandError(instruction, "the result must be a tuple (a, taus)");
  }
  XJIT_RETURN_IF_ERROR(CheckQrShapes(instruction, a.shape(), shape.tuple_shapes(0),
                                     shape.tuple_shapes(1), /*householder_product=*/false));
  const int64_t rank = a.shape().rank();
  const int64_t m = a.shape().dimensions(rank - 2), n = a.shape().dimensions(rank - 1);
  const int64_t k = std::min(m, n);
  Literal factors(internal::WithDims(shape.tuple_shapes(0), a.shape().dimensions()));
  Literal taus(shape.tuple_shapes(1));
  XJIT_RETURN_IF_ERROR(ForEachBatchOf(a.shape().dimensions(), 2, [&](Index& index) {
    std::vector<Complex> r = ReadMatrix(a, index, m, n);
    std::vector<Complex> tau(k, 0.0);
    for (int64_t j = 0; j < k; ++j) {
      const Complex alpha = r[j * n + j];
      std::vector<double> tail;  // The components of a(j+1:, j).
      for (int64_t i = j + 1; i < m; ++i) {
        tail.push_back(r[i * n + j].real());
        tail.push_back(r[i * n + j].imag());
      }
      const double x_norm = ScaledNorm(tail);
      if (x_norm == 0.0 && alpha.imag() == 0.0) continue;  // H_j = I, tau_j = 0.
      const double mu = ScaledNorm({alpha.real(), alpha.imag(), x_norm});
      const double beta = alpha.real() < 0.0 ? mu : -mu;
      tau[j] = Complex((beta - alpha.real()) / beta, -alpha.imag() / beta);
      const Complex scale = 1.0 / (alpha - beta);
      for (int64_t i = j + 1; i < m; ++i) r[i * n + j] *= scale;
      // H_j^H = I - conj(tau) v v^H on the columns right of j; v is column j
      // below the diagonal now (its diagonal entry is implied).
      ApplyReflector(r, m, n, j + 1, r, n, j, std::conj(tau[j]));
      r[j * n + j] = beta;
    }
    WriteMatrix(factors, index, m, n, r);
    Index tau_index(index.begin(), index.end() - 1);
    for (int64_t j = 0; j < k; ++j) {
      tau_index[rank - 2] = j;
      internal::WriteComplex(taus, tau_index, tau[j]);
    }
    return absl::OkStatus();
  }));
  std::vector<Literal> elements;
  elements.push_back(std::move(factors));
  elements.push_back(std::move(taus));
  return Literal::MakeTuple(std::move(elements)).Relayout(shape);
}

absl::StatusOr<Literal> HouseholderProduct(const Instruction& instruction, const Literal& a,
                                           const Literal& taus) {
  XJIT_RETURN_IF_ERROR(CheckQrShapes(instruction, a.shape(), instruction.shape(), taus.shape(),
                                     /*householder_product=*/true));
  const int64_t rank = a.shape().rank();
  const int64_t m = a.shape().dimensions(rank - 2), n = a.shape().dimensions(rank - 1);
  const int64_t k = taus.shape().dimensions(rank - 2);
  Literal result(internal::WithDims(instruction.shape(), a.shape().dimensions()));
  XJIT_RETURN_IF_ERROR(ForEachBatchOf(a.shape().dimensions(), 2, [&](Index& index) {
    const std::vector<Complex> vectors = ReadMatrix(a, index, m, n);
    Index tau_index(index.begin(), index.end() - 1);
    std::vector<Complex> q(m * n, 0.0);
    for (int64_t i = 0; i < n; ++i) q[i * n + i] = 1.0;
    for (int64_t j = k - 1; j >= 0; --j) {
      tau_index[rank - 2] = j;
      ApplyReflector(q, m, n, 0, vectors, n, j, internal::ReadComplex(taus, tau_index));
    }
    WriteMatrix(result, index, m, n, q);
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
