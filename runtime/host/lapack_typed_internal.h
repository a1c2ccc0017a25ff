// The LAPACK routines of lapack_routines.h under one name per routine for
// the four element types (Lapack<float>::Getrf, Lapack<std::complex<double>>
// ::Getrf, ...), the complex ones with their real workspace. Private to
// runtime/host/jaxlib_lapack*.cc. Dimensions are blasint; callers check that
// they fit.
#ifndef XJIT_RUNTIME_HOST_LAPACK_TYPED_INTERNAL_H_
#define XJIT_RUNTIME_HOST_LAPACK_TYPED_INTERNAL_H_

#include <complex>

#include "runtime/host/lapack_routines.h"

namespace xjit::runtime::host {

template <typename T>
struct Lapack;

// The wrappers whose calls are the same for real and complex types.
#define XJIT_LAPACK_SHARED(T, p)                                                                \
    static void Trsm(char side, char uplo, char trans, char diag, blasint m, blasint n,        \
                     const T* a, blasint lda, T* b, blasint ldb) {                              \
      const T one = 1;                                                                          \
      p##trsm_(&side, &uplo, &trans, &diag, &m, &n, &one, a, &lda, b, &ldb, 1, 1, 1, 1);        \
    }                                                                                           \
    static void Getrf(blasint m, blasint n, T* a, blasint lda, blasint* ipiv, blasint* info) { \
      p##getrf_(&m, &n, a, &lda, ipiv, info);                                                   \
    }                                                                                           \
    static void Potrf(char uplo, blasint n, T* a, blasint lda, blasint* info) {                \
      p##potrf_(&uplo, &n, a, &lda, info, 1);                                                   \
    }                                                                                           \
    static void Geqrf(blasint m, blasint n, T* a, blasint lda, T* tau, T* work, blasint lwork, \
                      blasint* info) {                                                          \
      p##geqrf_(&m, &n, a, &lda, tau, work, &lwork, info);                                      \
    }                                                                                           \
    static void Gehrd(blasint n, blasint ilo, blasint ihi, T* a, blasint lda, T* tau, T* work, \
                      blasint lwork, blasint* info) {                                           \
      p##gehrd_(&n, &ilo, &ihi, a, &lda, tau, work, &lwork, info);                              \
    }                                                                                           \
    static void Gtsv(blasint n, blasint nrhs, T* dl, T* d, T* du, T* b, blasint ldb,           \
                     blasint* info) {                                                           \
      p##gtsv_(&n, &nrhs, dl, d, du, b, &ldb, info);                                            \
    }

// Real types: rwork arguments are accepted and ignored, so callers write one
// call for both kinds.
#define XJIT_LAPACK_REAL(T, p)                                                                  \
  template <>                                                                                   \
  struct Lapack<T> {                                                                            \
    using Real = T;                                                                             \
    static constexpr bool kComplex = false;                                                     \
    XJIT_LAPACK_SHARED(T, p)                                                                    \
    static void Geqp3(blasint m, blasint n, T* a, blasint lda, blasint* jpvt, T* tau, T* work, \
                      blasint lwork, Real*, blasint* info) {                                    \
      p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, info);                                \
    }                                                                                           \
    static void Orgqr(blasint m, blasint n, blasint k, T* a, blasint lda, const T* tau,        \
                      T* work, blasint lwork, blasint* info) {                                  \
      p##orgqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);                                  \
    }                                                                                           \
    static void Ormqr(char side, char trans, blasint m, blasint n, blasint k, const T* a,      \
                      blasint lda, const T* tau, T* c, blasint ldc, T* work, blasint lwork,     \
                      blasint* info) {                                                          \
      p##ormqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);    \
    }                                                                                           \
    static void Syevd(char jobz, char uplo, blasint n, T* a, blasint lda, Real* w, T* work,    \
                      blasint lwork, Real*, blasint, blasint* iwork, blasint liwork,            \
                      blasint* info) {                                                          \
      p##syevd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, iwork, &liwork, info, 1, 1);        \
    }                                                                                           \
    static void Gesdd(char jobz, blasint m, blasint n, T* a, blasint lda, Real* s, T* u,       \
                      blasint ldu, T* vt, blasint ldvt, T* work, blasint lwork, Real*,          \
                      blasint* iwork, blasint* info) {                                          \
      p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, iwork, info, 1);   \
    }                                                                                           \
    static void Gesvd(char job, blasint m, blasint n, T* a, blasint lda, Real* s, T* u,        \
                      blasint ldu, T* vt, blasint ldvt, T* work, blasint lwork, Real*,          \
                      blasint* info) {                                                          \
      p##gesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, info, 1, 1);  \
    }                                                                                           \
    static void Sytrd(char uplo, blasint n, T* a, blasint lda, Real* d, Real* e, T* tau,       \
                      T* work, blasint lwork, blasint* info) {                                  \
      p##sytrd_(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info, 1);                          \
    }                                                                                           \
    static void Geev(char jobvl, char jobvr, blasint n, T* a, blasint lda, T* wr, T* wi,       \
                     T* vl, blasint ldvl, T* vr, blasint ldvr, T* work, blasint lwork, Real*,   \
                     blasint* info) {                                                           \
      p##geev_(&jobvl, &jobvr, &n, a, &lda, wr, wi, vl, &ldvl, vr, &ldvr, work, &lwork, info,   \
               1, 1);                                                                           \
    }                                                                                           \
    static void Gees(char jobvs, blasint n, T* a, blasint lda, blasint* sdim, T* wr, T* wi,    \
                     T* vs, blasint ldvs, T* work, blasint lwork, Real*, blasint* bwork,        \
                     blasint* info) {                                                           \
      const char sort = 'N';                                                                    \
      p##gees_(&jobvs, &sort, nullptr, &n, a, &lda, sdim, wr, wi, vs, &ldvs, work, &lwork,      \
               bwork, info, 1, 1);                                                              \
    }                                                                                           \
  };

#define XJIT_LAPACK_COMPLEX(T, R, p, sy, qn)                                                    \
  template <>                                                                                   \
  struct Lapack<T> {                                                                            \
    using Real = R;                                                                             \
    static constexpr bool kComplex = true;                                                      \
    XJIT_LAPACK_SHARED(T, p)                                                                    \
    static void Geqp3(blasint m, blasint n, T* a, blasint lda, blasint* jpvt, T* tau, T* work, \
                      blasint lwork, Real* rwork, blasint* info) {                              \
      p##geqp3_(&m, &n, a, &lda, jpvt, tau, work, &lwork, rwork, info);                         \
    }                                                                                           \
    static void Orgqr(blasint m, blasint n, blasint k, T* a, blasint lda, const T* tau,        \
                      T* work, blasint lwork, blasint* info) {                                  \
      p##qn##gqr_(&m, &n, &k, a, &lda, tau, work, &lwork, info);                                \
    }                                                                                           \
    static void Ormqr(char side, char trans, blasint m, blasint n, blasint k, const T* a,      \
                      blasint lda, const T* tau, T* c, blasint ldc, T* work, blasint lwork,     \
                      blasint* info) {                                                          \
      p##qn##mqr_(&side, &trans, &m, &n, &k, a, &lda, tau, c, &ldc, work, &lwork, info, 1, 1);  \
    }                                                                                           \
    static void Syevd(char jobz, char uplo, blasint n, T* a, blasint lda, Real* w, T* work,    \
                      blasint lwork, Real* rwork, blasint lrwork, blasint* iwork,               \
                      blasint liwork, blasint* info) {                                          \
      p##sy##evd_(&jobz, &uplo, &n, a, &lda, w, work, &lwork, rwork, &lrwork, iwork, &liwork,   \
                  info, 1, 1);                                                                  \
    }                                                                                           \
    static void Gesdd(char jobz, blasint m, blasint n, T* a, blasint lda, Real* s, T* u,       \
                      blasint ldu, T* vt, blasint ldvt, T* work, blasint lwork, Real* rwork,    \
                      blasint* iwork, blasint* info) {                                          \
      p##gesdd_(&jobz, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, iwork,      \
                info, 1);                                                                       \
    }                                                                                           \
    static void Gesvd(char job, blasint m, blasint n, T* a, blasint lda, Real* s, T* u,        \
                      blasint ldu, T* vt, blasint ldvt, T* work, blasint lwork, Real* rwork,    \
                      blasint* info) {                                                          \
      p##gesvd_(&job, &job, &m, &n, a, &lda, s, u, &ldu, vt, &ldvt, work, &lwork, rwork, info,  \
                1, 1);                                                                          \
    }                                                                                           \
    static void Sytrd(char uplo, blasint n, T* a, blasint lda, Real* d, Real* e, T* tau,       \
                      T* work, blasint lwork, blasint* info) {                                  \
      p##sy##trd_(&uplo, &n, a, &lda, d, e, tau, work, &lwork, info, 1);                        \
    }                                                                                           \
    static void Geev(char jobvl, char jobvr, blasint n, T* a, blasint lda, T* w, T*, T* vl,    \
                     blasint ldvl, T* vr, blasint ldvr, T* work, blasint lwork, Real* rwork,    \
                     blasint* info) {                                                           \
      p##geev_(&jobvl, &jobvr, &n, a, &lda, w, vl, &ldvl, vr, &ldvr, work, &lwork, rwork, info, \
               1, 1);                                                                           \
    }                                                                                           \
    static void Gees(char jobvs, blasint n, T* a, blasint lda, blasint* sdim, T* w, T*, T* vs, \
                     blasint ldvs, T* work, blasint lwork, Real* rwork, blasint* bwork,         \
                     blasint* info) {                                                           \
      const char sort = 'N';                                                                    \
      p##gees_(&jobvs, &sort, nullptr, &n, a, &lda, sdim, w, vs, &ldvs, work, &lwork, rwork,    \
               bwork, info, 1, 1);                                                              \
    }                                                                                           \
  };

XJIT_LAPACK_REAL(float, s)
XJIT_LAPACK_REAL(double, d)
XJIT_LAPACK_COMPLEX(std::complex<float>, float, c, he, un)
XJIT_LAPACK_COMPLEX(std::complex<double>, double, z, he, un)

#undef XJIT_LAPACK_REAL
#undef XJIT_LAPACK_COMPLEX
#undef XJIT_LAPACK_SHARED

}  // namespace xjit::runtime::host

#endif  // XJIT_RUNTIME_HOST_LAPACK_TYPED_INTERNAL_H_
