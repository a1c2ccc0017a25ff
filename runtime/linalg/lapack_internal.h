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
}

#endif  // XJIT_RUNTIME_LINALG_LAPACK_INTERNAL_H_
