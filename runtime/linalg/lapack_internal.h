// The LAPACK routines runtime/linalg calls, declared here because Debian's
// OpenBLAS ships them (its libopenblas exports the Fortran symbols) without a
// C header. Fortran convention: every argument by address, column-major
// matrices, and a hidden length argument after the last one for each
// character argument (OpenBLAS's own C implementations ignore it).
// Private to runtime/linalg.
#ifndef XJIT_RUNTIME_LINALG_LAPACK_INTERNAL_H_
#define XJIT_RUNTIME_LINALG_LAPACK_INTERNAL_H_

#include <cstddef>

#include "cblas.h"

extern "C" {
// ?potrf: the Cholesky factor of a Hermitian positive definite matrix, in
// place in the triangle `uplo` names ('L': A = L L^H, 'U': A = U^H U); the
// other triangle is neither read nor written. info > 0: the leading minor
// of that order is not positive definite (a pivot <= 0 or NaN).
void spotrf_(const char* uplo, const blasint* n, float* a, const blasint* lda, blasint* info,
             size_t uplo_length);
void dpotrf_(const char* uplo, const blasint* n, double* a, const blasint* lda, blasint* info,
             size_t uplo_length);
void cpotrf_(const char* uplo, const blasint* n, void* a, const blasint* lda, blasint* info,
             size_t uplo_length);
void zpotrf_(const char* uplo, const blasint* n, void* a, const blasint* lda, blasint* info,
             size_t uplo_length);

// ?geqrf: the QR factorisation of an m x n matrix in place: R on and above
// the diagonal, the Householder vectors below it, their scalars in tau
// (min(m, n) of them). work holds lwork elements; lwork = -1 is a query that
// writes the optimal size to work[0].
void sgeqrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, float* tau,
             float* work, const blasint* lwork, blasint* info);
void dgeqrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, double* tau,
             double* work, const blasint* lwork, blasint* info);
void cgeqrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, void* tau,
             void* work, const blasint* lwork, blasint* info);
void zgeqrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, void* tau,
             void* work, const blasint* lwork, blasint* info);

// ?orgqr / ?ungqr: overwrites the m x n matrix a (m >= n >= k), whose first k
// columns hold ?geqrf's Householder vectors below the diagonal, with the
// first n columns of H(1) ... H(k). Workspace as ?geqrf's.
void sorgqr_(const blasint* m, const blasint* n, const blasint* k, float* a, const blasint* lda,
             const float* tau, float* work, const blasint* lwork, blasint* info);
void dorgqr_(const blasint* m, const blasint* n, const blasint* k, double* a, const blasint* lda,
             const double* tau, double* work, const blasint* lwork, blasint* info);
void cungqr_(const blasint* m, const blasint* n, const blasint* k, void* a, const blasint* lda,
             const void* tau, void* work, const blasint* lwork, blasint* info);
void zungqr_(const blasint* m, const blasint* n, const blasint* k, void* a, const blasint* lda,
             const void* tau, void* work, const blasint* lwork, blasint* info);
}

#endif  // XJIT_RUNTIME_LINALG_LAPACK_INTERNAL_H_
