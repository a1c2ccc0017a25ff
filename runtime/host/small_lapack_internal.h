// Unblocked LU factorisation with partial pivoting (getrf) and triangular
// solves (trsm) for tiny matrices, in place of OpenBLAS's for jaxlib's LAPACK
// custom calls (jaxlib_lapack_run.cc) when getrf's matrix, and trsm's
// right-hand sides B (so its triangle too), are at most kSmallLapackOrder in
// both dimensions. Private to runtime/host/jaxlib_lapack*.cc.
//
// Why: an implicit ODE solver factors and solves a 3x3 system per stage and
// per Newton iteration for every element of a vmapped batch. OpenBLAS's
// ?getrf_ / ?trsm_ spend far more on their interface than on the arithmetic
// there (argument checks, blas_memory_alloc / free of a buffer under a lock,
// packing copies, a GEMM kernel for a 3x1 update): diffrax's Kvaerno5 spent
// about half its run inside such calls.
//
// Contract: the same results as LAPACK's up to rounding (the same algorithm
// in another summation order: right-looking getf2 with LAPACK's pivot
// choice, the first largest |re| + |im| at or below the diagonal, its
// reciprocal-multiply scaling above sfmin and its info, the first zero pivot;
// trsm by substitution, dividing by the diagonal as the reference BLAS
// does). Matrices are column-major with a leading dimension, as LAPACK's.
#ifndef XJIT_RUNTIME_HOST_SMALL_LAPACK_INTERNAL_H_
#define XJIT_RUNTIME_HOST_SMALL_LAPACK_INTERNAL_H_

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <utility>

namespace xjit::runtime::host {

// The largest dimension (rows and columns of getrf's matrix and of trsm's
// B) that takes these routines: below it OpenBLAS's per-call overhead
// dominates. A wide B goes to OpenBLAS whatever the triangle's order: a
// 16x16 triangle against 4096 right-hand sides (numpyro's multivariate
// normal) ran 1.4x slower by substitution than through its blocked trsm.
inline constexpr int64_t kSmallLapackOrder = 16;

namespace small_lapack {

template <typename T>
struct RealOf {
  using Type = T;
};
template <typename R>
struct RealOf<std::complex<R>> {
  using Type = R;
};

// LAPACK's i?amax measure: |x| for reals, |re| + |im| for complex numbers.
template <typename T>
typename RealOf<T>::Type Abs1(T x) {
  if constexpr (std::is_same_v<T, typename RealOf<T>::Type>) {
    return std::abs(x);
  } else {
    return std::abs(x.real()) + std::abs(x.imag());
  }
}

template <typename T>
T Conj(T x) {
  if constexpr (std::is_same_v<T, typename RealOf<T>::Type>) {
    return x;
  } else {
    return std::conj(x);
  }
}

}  // namespace small_lapack

// LU with partial pivoting of the m x n matrix `a` (leading dimension lda):
// L (unit, below the diagonal) and U in place, ipiv 1-based row swaps
// (min(m, n) of them); returns LAPACK's info (0, or the first j with
// U(j, j) = 0, 1-based).
template <typename T>
int32_t SmallGetrf(int64_t m, int64_t n, T* a, int64_t lda, int32_t* ipiv) {
  using R = typename small_lapack::RealOf<T>::Type;
  const R sfmin = std::numeric_limits<R>::min();
  int32_t info = 0;
  const int64_t k = m < n ? m : n;
  for (int64_t j = 0; j < k; ++j) {
    T* column = a + j * lda;
    int64_t p = j;
    R best = small_lapack::Abs1(column[j]);
    for (int64_t i = j + 1; i < m; ++i) {
      const R v = small_lapack::Abs1(column[i]);
      if (v > best) {
        best = v;
        p = i;
      }
    }
    ipiv[j] = static_cast<int32_t>(p + 1);
    if (column[p] != T(0)) {
      if (p != j) {
        for (int64_t c = 0; c < n; ++c) std::swap(a[c * lda + j], a[c * lda + p]);
      }
      const T pivot = column[j];
      if (std::abs(pivot) >= sfmin) {
        const T reciprocal = T(1) / pivot;
        for (int64_t i = j + 1; i < m; ++i) column[i] *= reciprocal;
      } else {
        for (int64_t i = j + 1; i < m; ++i) column[i] /= pivot;
      }
    } else if (info == 0) {
      info = static_cast<int32_t>(j + 1);
    }
    for (int64_t c = j + 1; c < n; ++c) {
      T* target = a + c * lda;
      const T t = target[j];
      for (int64_t i = j + 1; i < m; ++i) target[i] -= column[i] * t;
    }
  }
  return info;
}

// op(A) X = B (side 'L', A m x m) or X op(A) = B (side 'R', A n x n), X
// over B (m x n, leading dimension ldb), op by trans ('N', 'T', 'C'), only
// the `uplo` triangle of A read, its diagonal not at all when diag is 'U'.
template <typename T>
void SmallTrsm(char side, char uplo, char trans, char diag, int64_t m, int64_t n, const T* a,
               int64_t lda, T* b, int64_t ldb) {
  const bool left = side == 'L';
  const bool unit = diag == 'U';
  const bool conjugate = trans == 'C';
  // Each right-hand side is a vector x of `order` elements at `stride`
  // (a column of X, or a row on the right: X op(A) = B is op(A)^T x = r),
  // solved with M = op(A) (left) or op(A)^T (right), M(i, j) at
  // a[i * row + j * col].
  const bool transposed = (trans != 'N') != !left;
  const int64_t row = transposed ? lda : 1;
  const int64_t col = transposed ? 1 : lda;
  const bool lower = (uplo == 'L') != transposed;
  const int64_t order = left ? m : n;
  const int64_t count = left ? n : m;
  const int64_t stride = left ? 1 : ldb;
  const int64_t step = left ? ldb : 1;
  const auto matrix = [&](int64_t i, int64_t j) {
    const T x = a[i * row + j * col];
    return conjugate ? small_lapack::Conj(x) : x;
  };
  for (int64_t r = 0; r < count; ++r) {
    T* x = b + r * step;
    if (lower) {
      for (int64_t i = 0; i < order; ++i) {
        T s = x[i * stride];
        for (int64_t j = 0; j < i; ++j) s -= matrix(i, j) * x[j * stride];
        x[i * stride] = unit ? s : s / matrix(i, i);
      }
    } else {
      for (int64_t i = order - 1; i >= 0; --i) {
        T s = x[i * stride];
        for (int64_t j = i + 1; j < order; ++j) s -= matrix(i, j) * x[j * stride];
        x[i * stride] = unit ? s : s / matrix(i, i);
      }
    }
  }
}

}  // namespace xjit::runtime::host

#endif  // XJIT_RUNTIME_HOST_SMALL_LAPACK_INTERNAL_H_
