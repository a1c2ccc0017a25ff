// Axpy-form gemv kernels; see axpy_gemv.h for the contract and the order of
// the sums.
#include "runtime/blas/axpy_gemv.h"

#include <algorithm>

// The kernels are compiled for x86-64 only, in functions with their own
// target attributes (so the rest of the build needs no -mavx2),
// and run only when the CPU has the instructions.
#if defined(__x86_64__) && defined(__GNUC__)
#define XJIT_AXPY_GEMV_X86 1
#include <immintrin.h>
#else
#define XJIT_AXPY_GEMV_X86 0
#endif

namespace xjit::runtime::blas {

namespace {

#if XJIT_AXPY_GEMV_X86

// Rows per block: the block's rows are read side by side as that many
// sequential streams, their x values held in registers (8 of AVX2's 16).
// 8 was faster than 4 and 16 on Zen 3 (AVX2; docs/zoo.md, "Session 16").
constexpr int kRows = 8;
// Columns per chunk: the part of y a chunk sums stays in L1 (8 KB) while
// all the rows go by.
constexpr int64_t kChunkBytes = 8192;

#define XJIT_AVX2 __attribute__((target("avx2,fma"))) static inline

// One ISA's vector operations for one element type. Mask(count): the lanes
// of `count` (1..kLanes) leading elements.
template <typename T>
struct Avx2;
template <>
struct Avx2<float> {
  using V = __m256;
  using M = __m256i;
  static constexpr int kLanes = 8;
  XJIT_AVX2 M Mask(int64_t count) {
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(count)),
                              _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
  }
  XJIT_AVX2 V Zero() { return _mm256_setzero_ps(); }
  XJIT_AVX2 V Broadcast(const float* x) { return _mm256_broadcast_ss(x); }
  XJIT_AVX2 V Load(M m, const float* p) { return _mm256_maskload_ps(p, m); }
  XJIT_AVX2 void Store(float* p, M m, V v) { _mm256_maskstore_ps(p, m, v); }
  XJIT_AVX2 V Lanes(bool masked, const M& m, const float* p) {
    return masked ? Load(m, p) : _mm256_loadu_ps(p);
  }
  XJIT_AVX2 void StoreLanes(bool masked, const M& m, float* p, V v) {
    if (masked) {
      Store(p, m, v);
    } else {
      _mm256_storeu_ps(p, v);
    }
  }
  XJIT_AVX2 V Fma(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  XJIT_AVX2 V Mul(V a, V b) { return _mm256_mul_ps(a, b); }
  XJIT_AVX2 V Add(V a, V b) { return _mm256_add_ps(a, b); }
};
template <>
struct Avx2<double> {
  using V = __m256d;
  using M = __m256i;
  static constexpr int kLanes = 4;
  XJIT_AVX2 M Mask(int64_t count) {
    return _mm256_cmpgt_epi64(_mm256_set1_epi64x(count), _mm256_setr_epi64x(0, 1, 2, 3));
  }
  XJIT_AVX2 V Zero() { return _mm256_setzero_pd(); }
  XJIT_AVX2 V Broadcast(const double* x) { return _mm256_broadcast_sd(x); }
  XJIT_AVX2 V Load(M m, const double* p) { return _mm256_maskload_pd(p, m); }
  XJIT_AVX2 void Store(double* p, M m, V v) { _mm256_maskstore_pd(p, m, v); }
  XJIT_AVX2 V Lanes(bool masked, const M& m, const double* p) {
    return masked ? Load(m, p) : _mm256_loadu_pd(p);
  }
  XJIT_AVX2 void StoreLanes(bool masked, const M& m, double* p, V v) {
    if (masked) {
      Store(p, m, v);
    } else {
      _mm256_storeu_pd(p, v);
    }
  }
  XJIT_AVX2 V Fma(V a, V b, V c) { return _mm256_fmadd_pd(a, b, c); }
  XJIT_AVX2 V Mul(V a, V b) { return _mm256_mul_pd(a, b); }
  XJIT_AVX2 V Add(V a, V b) { return _mm256_add_pd(a, b); }
};

#undef XJIT_AVX2

// (GCC's ABI note for ISA vectors in a function without the ISA, -Wpsabi,
// does not apply to bodies that are always inlined into one.)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"

// The bodies below take the ISA's operations as a parameter: they have no
// target of their own and are inlined into the ISA's function (Avx2Rows),
// where the ISA's operations (plain inline functions with that target: GCC
// refuses always_inline ones in a body without it) are inlined in turn.

// The sums of V vectors of columns from c over a block's rows (R of them,
// or `rows` when R == 0): the block's sum (its first row's products, then
// one multiply-add per row, in order) added to y's (or to 0 for the first
// block). With kTail, the last vector's lanes are `last` (masked loads and
// stores, which AVX2 makes slow, only there).
template <typename I, int R, int V, bool kTail, typename T, typename Vec, typename M>
__attribute__((always_inline)) inline void Columns(const T* const* row, const Vec* xr,
                                                   int64_t rows, bool first, T* y, int64_t c,
                                                   const M& last) {
  constexpr int64_t L = I::kLanes;
  Vec acc[V];
#pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    acc[v] = I::Mul(I::Lanes(kTail && v + 1 == V, last, row[0] + c + v * L), xr[0]);
  }
  const int64_t count = R > 0 ? R : rows;
#pragma GCC unroll 16
  for (int64_t i = 1; i < count; ++i) {
#pragma GCC unroll 16
    for (int v = 0; v < V; ++v) {
      acc[v] = I::Fma(I::Lanes(kTail && v + 1 == V, last, row[i] + c + v * L), xr[i], acc[v]);
    }
  }
#pragma GCC unroll 16
  for (int v = 0; v < V; ++v) {
    const bool masked = kTail && v + 1 == V;
    T* out = y + c + v * L;
    I::StoreLanes(masked, last, out,
                  I::Add(first ? I::Zero() : I::Lanes(masked, last, out), acc[v]));
  }
}

// Columns [0, cols) of y (unit stride) over rows [0, n) of a block (R == n
// when R > 0; R == 0: a last block of fewer than kRows rows) from p: four
// vectors of columns at a time, then single ones, then the masked last one,
// the same arithmetic for every column.
template <typename I, int R, typename T>
__attribute__((always_inline)) inline void RowBlock(const T* p, int64_t ldp, const T* x,
                                                    int64_t incx, int64_t n, bool first, T* y,
                                                    int64_t cols) {
  using Vec = typename I::V;
  constexpr int64_t L = I::kLanes;
  constexpr int kCount = R > 0 ? R : kRows;
  const int64_t rows = R > 0 ? R : n;
  Vec xr[kCount];
  const T* row[kCount];
#pragma GCC unroll 16
  for (int i = 0; i < kCount; ++i) {
    if (i < rows) {
      xr[i] = I::Broadcast(x + i * incx);
      row[i] = p + i * ldp;
    }
  }
  const auto full = I::Mask(L);
  int64_t c = 0;
  for (; c + 4 * L <= cols; c += 4 * L) Columns<I, R, 4, false>(row, xr, rows, first, y, c, full);
  for (; c + L <= cols; c += L) Columns<I, R, 1, false>(row, xr, rows, first, y, c, full);
  if (c < cols) Columns<I, R, 1, true>(row, xr, rows, first, y, c, I::Mask(cols - c));
}

// All rows of the matrix into columns [c0, c0 + cols) of y (unit stride,
// y[0] being column c0), in blocks of kRows rows from row 0 (so the blocks,
// and each column's sum, do not depend on c0 or cols).
template <typename I, typename T>
__attribute__((always_inline)) inline void RowsBody(const AxpyGemvArgs<T>& g, int64_t c0,
                                                    int64_t cols, T* y) {
  const int64_t r1 = g.rows;
  int64_t r = 0;
  for (; r + kRows <= r1; r += kRows) {
    RowBlock<I, kRows>(g.p + r * g.ldp + c0, g.ldp, g.x + r * g.incx, g.incx, kRows, r == 0, y,
                       cols);
  }
  if (r < r1) {
    RowBlock<I, 0>(g.p + r * g.ldp + c0, g.ldp, g.x + r * g.incx, g.incx, r1 - r, r == 0, y,
                   cols);
  }
}
#pragma GCC diagnostic pop

template <typename T>
__attribute__((target("avx2,fma"))) void Avx2Rows(const AxpyGemvArgs<T>& g, int64_t c0,
                                                  int64_t cols, T* y) {
  RowsBody<Avx2<T>>(g, c0, cols, y);
}

// Chunks of columns (so that a chunk of y stays in L1 over all the rows),
// each over all rows. A strided y is summed into a contiguous chunk on the
// stack and copied out.
template <typename T>
void AxpyGemvWith(void (*rows_fn)(const AxpyGemvArgs<T>&, int64_t, int64_t, T*),
                  const AxpyGemvArgs<T>& g) {
  if (g.rows == 0) {
    for (int64_t c = 0; c < g.cols; ++c) g.y[c * g.incy] = T(0);
    return;
  }
  constexpr int64_t kChunk = kChunkBytes / sizeof(T);
  alignas(64) T chunk[kChunk];
  for (int64_t c0 = 0; c0 < g.cols; c0 += kChunk) {
    const int64_t cols = std::min(kChunk, g.cols - c0);
    if (g.incy == 1) {
      rows_fn(g, c0, cols, g.y + c0);
    } else {
      rows_fn(g, c0, cols, chunk);
      for (int64_t c = 0; c < cols; ++c) g.y[(c0 + c) * g.incy] = chunk[c];
    }
  }
}

template <typename T>
void Run(const AxpyGemvArgs<T>& g) {
  AxpyGemvWith<T>(Avx2Rows<T>, g);
}

#endif  // XJIT_AXPY_GEMV_X86

}  // namespace

bool AxpyGemvAvailable() {
#if XJIT_AXPY_GEMV_X86
  // AVX2 + FMA only: an AVX-512 version was written but never run on an
  // AVX-512 CPU (session 16's machines had none), so none is shipped.
  static const bool supported = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return supported;
#else
  return false;
#endif
}

void AxpyGemv(const AxpyGemvArgs<float>& args) {
#if XJIT_AXPY_GEMV_X86
  Run(args);
#else
  (void)args;
#endif
}

void AxpyGemv(const AxpyGemvArgs<double>& args) {
#if XJIT_AXPY_GEMV_X86
  Run(args);
#else
  (void)args;
#endif
}

}  // namespace xjit::runtime::blas
