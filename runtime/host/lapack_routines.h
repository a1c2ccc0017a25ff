// The Fortran LAPACK/BLAS routines xjit calls (jaxlib's CPU custom calls,
// runtime/host/jaxlib_lapack.h; HLO cholesky and the QR custom call,
// runtime/linalg), declared here because Debian's OpenBLAS exports them
// without a C header. Fortran convention: every argument by address,
// column-major matrices, and one hidden length argument at the end for each
// character argument, in order. Complex matrices are void* (pairs of reals).
#ifndef XJIT_RUNTIME_HOST_LAPACK_ROUTINES_H_
#define XJIT_RUNTIME_HOST_LAPACK_ROUTINES_H_

#include <cstddef>

#include "cblas.h"

extern "C" {
using LapackLength = size_t;

// ?trsm: op(A) X = alpha B or X op(A) = alpha B, B overwritten by X.
void strsm_(const char* side, const char* uplo, const char* trans, const char* diag,
            const blasint* m, const blasint* n, const float* alpha, const float* a,
            const blasint* lda, float* b, const blasint* ldb, LapackLength, LapackLength,
            LapackLength, LapackLength);
void dtrsm_(const char* side, const char* uplo, const char* trans, const char* diag,
            const blasint* m, const blasint* n, const double* alpha, const double* a,
            const blasint* lda, double* b, const blasint* ldb, LapackLength, LapackLength,
            LapackLength, LapackLength);
void ctrsm_(const char* side, const char* uplo, const char* trans, const char* diag,
            const blasint* m, const blasint* n, const void* alpha, const void* a,
            const blasint* lda, void* b, const blasint* ldb, LapackLength, LapackLength,
            LapackLength, LapackLength);
void ztrsm_(const char* side, const char* uplo, const char* trans, const char* diag,
            const blasint* m, const blasint* n, const void* alpha, const void* a,
            const blasint* lda, void* b, const blasint* ldb, LapackLength, LapackLength,
            LapackLength, LapackLength);

// ?getrf: LU with partial pivoting, ipiv 1-based.
void sgetrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, blasint* ipiv,
             blasint* info);
void dgetrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, blasint* ipiv,
             blasint* info);
void cgetrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, blasint* ipiv,
             blasint* info);
void zgetrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, blasint* ipiv,
             blasint* info);

// ?potrf: Cholesky in the triangle uplo names.
void spotrf_(const char* uplo, const blasint* n, float* a, const blasint* lda, blasint* info,
             LapackLength);
void dpotrf_(const char* uplo, const blasint* n, double* a, const blasint* lda, blasint* info,
             LapackLength);
void cpotrf_(const char* uplo, const blasint* n, void* a, const blasint* lda, blasint* info,
             LapackLength);
void zpotrf_(const char* uplo, const blasint* n, void* a, const blasint* lda, blasint* info,
             LapackLength);

// ?geqrf: QR (Householder form). lwork = -1 queries.
void sgeqrf_(const blasint* m, const blasint* n, float* a, const blasint* lda, float* tau,
             float* work, const blasint* lwork, blasint* info);
void dgeqrf_(const blasint* m, const blasint* n, double* a, const blasint* lda, double* tau,
             double* work, const blasint* lwork, blasint* info);
void cgeqrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, void* tau,
             void* work, const blasint* lwork, blasint* info);
void zgeqrf_(const blasint* m, const blasint* n, void* a, const blasint* lda, void* tau,
             void* work, const blasint* lwork, blasint* info);

// ?geqp3: QR with column pivoting; jpvt in/out (1-based, nonzero = fixed).
void sgeqp3_(const blasint* m, const blasint* n, float* a, const blasint* lda, blasint* jpvt,
             float* tau, float* work, const blasint* lwork, blasint* info);
void dgeqp3_(const blasint* m, const blasint* n, double* a, const blasint* lda, blasint* jpvt,
             double* tau, double* work, const blasint* lwork, blasint* info);
void cgeqp3_(const blasint* m, const blasint* n, void* a, const blasint* lda, blasint* jpvt,
             void* tau, void* work, const blasint* lwork, float* rwork, blasint* info);
void zgeqp3_(const blasint* m, const blasint* n, void* a, const blasint* lda, blasint* jpvt,
             void* tau, void* work, const blasint* lwork, double* rwork, blasint* info);

// ?orgqr / ?ungqr: the first n columns of H(1)...H(k).
void sorgqr_(const blasint* m, const blasint* n, const blasint* k, float* a, const blasint* lda,
             const float* tau, float* work, const blasint* lwork, blasint* info);
void dorgqr_(const blasint* m, const blasint* n, const blasint* k, double* a, const blasint* lda,
             const double* tau, double* work, const blasint* lwork, blasint* info);
void cungqr_(const blasint* m, const blasint* n, const blasint* k, void* a, const blasint* lda,
             const void* tau, void* work, const blasint* lwork, blasint* info);
void zungqr_(const blasint* m, const blasint* n, const blasint* k, void* a, const blasint* lda,
             const void* tau, void* work, const blasint* lwork, blasint* info);

// ?ormqr / ?unmqr: C := op(Q) C or C op(Q).
void sormqr_(const char* side, const char* trans, const blasint* m, const blasint* n,
             const blasint* k, const float* a, const blasint* lda, const float* tau, float* c,
             const blasint* ldc, float* work, const blasint* lwork, blasint* info, LapackLength,
             LapackLength);
void dormqr_(const char* side, const char* trans, const blasint* m, const blasint* n,
             const blasint* k, const double* a, const blasint* lda, const double* tau, double* c,
             const blasint* ldc, double* work, const blasint* lwork, blasint* info, LapackLength,
             LapackLength);
void cunmqr_(const char* side, const char* trans, const blasint* m, const blasint* n,
             const blasint* k, const void* a, const blasint* lda, const void* tau, void* c,
             const blasint* ldc, void* work, const blasint* lwork, blasint* info, LapackLength,
             LapackLength);
void zunmqr_(const char* side, const char* trans, const blasint* m, const blasint* n,
             const blasint* k, const void* a, const blasint* lda, const void* tau, void* c,
             const blasint* ldc, void* work, const blasint* lwork, blasint* info, LapackLength,
             LapackLength);

// ?syevd / ?heevd: symmetric / Hermitian eigendecomposition (divide and
// conquer). Workspace queries with lwork = liwork (= lrwork) = -1.
void ssyevd_(const char* jobz, const char* uplo, const blasint* n, float* a, const blasint* lda,
             float* w, float* work, const blasint* lwork, blasint* iwork, const blasint* liwork,
             blasint* info, LapackLength, LapackLength);
void dsyevd_(const char* jobz, const char* uplo, const blasint* n, double* a, const blasint* lda,
             double* w, double* work, const blasint* lwork, blasint* iwork,
             const blasint* liwork, blasint* info, LapackLength, LapackLength);
void cheevd_(const char* jobz, const char* uplo, const blasint* n, void* a, const blasint* lda,
             float* w, void* work, const blasint* lwork, float* rwork, const blasint* lrwork,
             blasint* iwork, const blasint* liwork, blasint* info, LapackLength, LapackLength);
void zheevd_(const char* jobz, const char* uplo, const blasint* n, void* a, const blasint* lda,
             double* w, void* work, const blasint* lwork, double* rwork, const blasint* lrwork,
             blasint* iwork, const blasint* liwork, blasint* info, LapackLength, LapackLength);

// ?gesdd: SVD by divide and conquer. iwork: 8 min(m, n).
void sgesdd_(const char* jobz, const blasint* m, const blasint* n, float* a, const blasint* lda,
             float* s, float* u, const blasint* ldu, float* vt, const blasint* ldvt, float* work,
             const blasint* lwork, blasint* iwork, blasint* info, LapackLength);
void dgesdd_(const char* jobz, const blasint* m, const blasint* n, double* a, const blasint* lda,
             double* s, double* u, const blasint* ldu, double* vt, const blasint* ldvt,
             double* work, const blasint* lwork, blasint* iwork, blasint* info, LapackLength);
void cgesdd_(const char* jobz, const blasint* m, const blasint* n, void* a, const blasint* lda,
             float* s, void* u, const blasint* ldu, void* vt, const blasint* ldvt, void* work,
             const blasint* lwork, float* rwork, blasint* iwork, blasint* info, LapackLength);
void zgesdd_(const char* jobz, const blasint* m, const blasint* n, void* a, const blasint* lda,
             double* s, void* u, const blasint* ldu, void* vt, const blasint* ldvt, void* work,
             const blasint* lwork, double* rwork, blasint* iwork, blasint* info, LapackLength);

// ?gesvd: SVD by QR iteration.
void sgesvd_(const char* jobu, const char* jobvt, const blasint* m, const blasint* n, float* a,
             const blasint* lda, float* s, float* u, const blasint* ldu, float* vt,
             const blasint* ldvt, float* work, const blasint* lwork, blasint* info, LapackLength,
             LapackLength);
void dgesvd_(const char* jobu, const char* jobvt, const blasint* m, const blasint* n, double* a,
             const blasint* lda, double* s, double* u, const blasint* ldu, double* vt,
             const blasint* ldvt, double* work, const blasint* lwork, blasint* info,
             LapackLength, LapackLength);
void cgesvd_(const char* jobu, const char* jobvt, const blasint* m, const blasint* n, void* a,
             const blasint* lda, float* s, void* u, const blasint* ldu, void* vt,
             const blasint* ldvt, void* work, const blasint* lwork, float* rwork, blasint* info,
             LapackLength, LapackLength);
void zgesvd_(const char* jobu, const char* jobvt, const blasint* m, const blasint* n, void* a,
             const blasint* lda, double* s, void* u, const blasint* ldu, void* vt,
             const blasint* ldvt, void* work, const blasint* lwork, double* rwork, blasint* info,
             LapackLength, LapackLength);

// ?geev: eigenvalues and left/right eigenvectors of a general matrix.
void sgeev_(const char* jobvl, const char* jobvr, const blasint* n, float* a, const blasint* lda,
            float* wr, float* wi, float* vl, const blasint* ldvl, float* vr, const blasint* ldvr,
            float* work, const blasint* lwork, blasint* info, LapackLength, LapackLength);
void dgeev_(const char* jobvl, const char* jobvr, const blasint* n, double* a,
            const blasint* lda, double* wr, double* wi, double* vl, const blasint* ldvl,
            double* vr, const blasint* ldvr, double* work, const blasint* lwork, blasint* info,
            LapackLength, LapackLength);
void cgeev_(const char* jobvl, const char* jobvr, const blasint* n, void* a, const blasint* lda,
            void* w, void* vl, const blasint* ldvl, void* vr, const blasint* ldvr, void* work,
            const blasint* lwork, float* rwork, blasint* info, LapackLength, LapackLength);
void zgeev_(const char* jobvl, const char* jobvr, const blasint* n, void* a, const blasint* lda,
            void* w, void* vl, const blasint* ldvl, void* vr, const blasint* ldvr, void* work,
            const blasint* lwork, double* rwork, blasint* info, LapackLength, LapackLength);

// ?gees: Schur form, no sorting here (select null, bwork unreferenced).
void sgees_(const char* jobvs, const char* sort, void* select, const blasint* n, float* a,
            const blasint* lda, blasint* sdim, float* wr, float* wi, float* vs,
            const blasint* ldvs, float* work, const blasint* lwork, blasint* bwork,
            blasint* info, LapackLength, LapackLength);
void dgees_(const char* jobvs, const char* sort, void* select, const blasint* n, double* a,
            const blasint* lda, blasint* sdim, double* wr, double* wi, double* vs,
            const blasint* ldvs, double* work, const blasint* lwork, blasint* bwork,
            blasint* info, LapackLength, LapackLength);
void cgees_(const char* jobvs, const char* sort, void* select, const blasint* n, void* a,
            const blasint* lda, blasint* sdim, void* w, void* vs, const blasint* ldvs,
            void* work, const blasint* lwork, float* rwork, blasint* bwork, blasint* info,
            LapackLength, LapackLength);
void zgees_(const char* jobvs, const char* sort, void* select, const blasint* n, void* a,
            const blasint* lda, blasint* sdim, void* w, void* vs, const blasint* ldvs,
            void* work, const blasint* lwork, double* rwork, blasint* bwork, blasint* info,
            LapackLength, LapackLength);

// ?gehrd: Hessenberg reduction of rows/columns ilo..ihi.
void sgehrd_(const blasint* n, const blasint* ilo, const blasint* ihi, float* a,
             const blasint* lda, float* tau, float* work, const blasint* lwork, blasint* info);
void dgehrd_(const blasint* n, const blasint* ilo, const blasint* ihi, double* a,
             const blasint* lda, double* tau, double* work, const blasint* lwork, blasint* info);
void cgehrd_(const blasint* n, const blasint* ilo, const blasint* ihi, void* a,
             const blasint* lda, void* tau, void* work, const blasint* lwork, blasint* info);
void zgehrd_(const blasint* n, const blasint* ilo, const blasint* ihi, void* a,
             const blasint* lda, void* tau, void* work, const blasint* lwork, blasint* info);

// ?sytrd / ?hetrd: tridiagonal reduction; d, e real.
void ssytrd_(const char* uplo, const blasint* n, float* a, const blasint* lda, float* d,
             float* e, float* tau, float* work, const blasint* lwork, blasint* info,
             LapackLength);
void dsytrd_(const char* uplo, const blasint* n, double* a, const blasint* lda, double* d,
             double* e, double* tau, double* work, const blasint* lwork, blasint* info,
             LapackLength);
void chetrd_(const char* uplo, const blasint* n, void* a, const blasint* lda, float* d, float* e,
             void* tau, void* work, const blasint* lwork, blasint* info, LapackLength);
void zhetrd_(const char* uplo, const blasint* n, void* a, const blasint* lda, double* d,
             double* e, void* tau, void* work, const blasint* lwork, blasint* info,
             LapackLength);

// ?gtsv: tridiagonal solve (dl, du of length n - 1), B overwritten by X.
void sgtsv_(const blasint* n, const blasint* nrhs, float* dl, float* d, float* du, float* b,
            const blasint* ldb, blasint* info);
void dgtsv_(const blasint* n, const blasint* nrhs, double* dl, double* d, double* du, double* b,
            const blasint* ldb, blasint* info);
void cgtsv_(const blasint* n, const blasint* nrhs, void* dl, void* d, void* du, void* b,
            const blasint* ldb, blasint* info);
void zgtsv_(const blasint* n, const blasint* nrhs, void* dl, void* d, void* du, void* b,
            const blasint* ldb, blasint* info);
}

#endif  // XJIT_RUNTIME_HOST_LAPACK_ROUTINES_H_
