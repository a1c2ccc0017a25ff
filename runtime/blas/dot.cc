// DotGeneral planning and execution; see dot.h for the contract.
//
// Planning tries, for each of the M, N and K groups, the dimension orders
// that sort the group by the strides of each operand indexing it (size-1
// dimensions dropped), and keeps the combination that copies the fewest
// bytes: an operand needs no copy when its groups merge into single strided
// dimensions that form a BLAS matrix (one unit stride, a leading dimension
// no smaller than the other extent) or, for gemv/dot, a strided vector.
#include "runtime/blas/dot.h"

#include <algorithm>
#include <climits>
#include <cstdint>
#include <complex>
#include <cstring>
#include <cstdlib>
#include <thread>
#include <type_traits>

#include <cblas.h>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "runtime/blas/axpy_gemv.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/element_io_internal.h"
#include "runtime/blas/small_gemm.h"
#include "runtime/blas/small_gemv.h"
#include "runtime/blas/strided_internal.h"
#include "runtime/thread_pool.h"

namespace xjit::runtime::blas {

namespace {

constexpr int64_t kBlasIntMax = INT_MAX;

enum class Sel : uint8_t { kLhs, kRhs, kOut };

int64_t& StrideRef(DotDim& d, Sel s) {
  return s == Sel::kLhs ? d.lhs_stride : s == Sel::kRhs ? d.rhs_stride : d.out_stride;
}
int64_t Stride(const DotDim& d, Sel s) {
  return s == Sel::kLhs ? d.lhs_stride : s == Sel::kRhs ? d.rhs_stride : d.out_stride;
}

int64_t Product(const std::vector<DotDim>& dims) {
  int64_t p = 1;
  for (const DotDim& d : dims) p *= d.size;
  return p;
}

bool IsBlasType(ElementType t) {
  return t == ElementType::kF32 || t == ElementType::kF64 || t == ElementType::kC64 ||
         t == ElementType::kC128;
}

// The group without its size-1 dimensions, largest `key` stride first.
std::vector<DotDim> OrderBy(const std::vector<DotDim>& dims, Sel key) {
  std::vector<DotDim> out;
  for (const DotDim& d : dims) {
    if (d.size != 1) out.push_back(d);
  }
  std::stable_sort(out.begin(), out.end(),
                   [key](const DotDim& a, const DotDim& b) { return Stride(a, key) > Stride(b, key); });
  return out;
}

struct Collapsed {
  bool ok = true;
  int64_t size = 1;
  int64_t stride = 0;
};

// One (size, stride) for the ordered group when its `sel` strides chain.
Collapsed Collapse(const std::vector<DotDim>& ordered, Sel sel) {
  Collapsed c;
  if (ordered.empty()) return c;
  for (size_t i = 0; i + 1 < ordered.size(); ++i) {
    if (Stride(ordered[i], sel) != Stride(ordered[i + 1], sel) * ordered[i + 1].size) {
      c.ok = false;
    }
  }
  c.size = Product(ordered);
  c.stride = Stride(ordered.back(), sel);
  return c;
}

// How a rows x cols strided matrix can be handed to BLAS.
struct MatrixFit {
  bool row_ok = false;  // row-major: unit column stride
  bool col_ok = false;  // column-major: unit row stride
  int64_t row_ld = 0;
  int64_t col_ld = 0;
  bool any() const { return row_ok || col_ok; }
};

MatrixFit FitMatrix(int64_t rows, int64_t rs, int64_t cols, int64_t cs) {
  MatrixFit f;
  f.row_ld = rows <= 1 ? std::max<int64_t>(1, cols) : rs;
  f.row_ok = (cols <= 1 || cs == 1) && f.row_ld >= std::max<int64_t>(1, cols) &&
             f.row_ld <= kBlasIntMax;
  f.col_ld = cols <= 1 ? std::max<int64_t>(1, rows) : cs;
  f.col_ok = (rows <= 1 || rs == 1) && f.col_ld >= std::max<int64_t>(1, rows) &&
             f.col_ld <= kBlasIntMax;
  return f;
}

bool VectorOk(const Collapsed& c) {
  return c.ok && (c.size <= 1 || (c.stride != 0 && c.stride <= kBlasIntMax && c.stride >= -kBlasIntMax));
}

struct Fits {
  bool lhs = false, rhs = false, out = false;
};

Fits Evaluate(const std::vector<DotDim>& m, const std::vector<DotDim>& n,
              const std::vector<DotDim>& k) {
  const int64_t mt = Product(m), nt = Product(n), kt = Product(k);
  Fits f;
  Collapsed lm = Collapse(m, Sel::kLhs), lk = Collapse(k, Sel::kLhs);
  f.lhs = mt > 1 ? lm.ok && lk.ok && FitMatrix(mt, lm.stride, kt, lk.stride).any() : VectorOk(lk);
  Collapsed rk = Collapse(k, Sel::kRhs), rn = Collapse(n, Sel::kRhs);
  f.rhs = nt > 1 ? rk.ok && rn.ok && FitMatrix(kt, rk.stride, nt, rn.stride).any() : VectorOk(rk);
  Collapsed om = Collapse(m, Sel::kOut), on = Collapse(n, Sel::kOut);
  if (mt > 1 && nt > 1) {
    f.out = om.ok && on.ok && FitMatrix(mt, om.stride, nt, on.stride).any();
  } else if (mt > 1) {
    f.out = VectorOk(om);
  } else if (nt > 1) {
    f.out = VectorOk(on);
  } else {
    f.out = true;
  }
  return f;
}

int64_t MinStride(const std::vector<DotDim>& dims, Sel sel) {
  int64_t s = INT64_MAX;
  for (const DotDim& d : dims) s = std::min(s, std::abs(Stride(d, sel)));
  return s;
}

// Gives `sel` a dense image layout: batch dims outermost, then `first`, then
// `second` (innermost); records the copy and rewrites the strides.
StridedCopy MakeImage(Sel sel, ElementType type, int64_t operand_offset,
                      std::vector<DotDim*> batch, std::vector<DotDim*> first,
                      std::vector<DotDim*> second) {
  StridedCopy copy;
  copy.operand = sel == Sel::kLhs   ? StridedCopy::Operand::kLhs
                 : sel == Sel::kRhs ? StridedCopy::Operand::kRhs
                                    : StridedCopy::Operand::kOut;
  copy.element_bytes = ByteWidth(type);
  copy.operand_offset = operand_offset;
  std::vector<DotDim*> all = batch;
  all.insert(all.end(), first.begin(), first.end());
  all.insert(all.end(), second.begin(), second.end());
  int64_t stride = 1;
  std::vector<int64_t> dense(all.size());
  for (size_t i = all.size(); i-- > 0;) {
    dense[i] = stride;
    stride *= all[i]->size;
  }
  for (size_t i = 0; i < all.size(); ++i) {
    copy.sizes.push_back(all[i]->size);
    copy.operand_strides.push_back(Stride(*all[i], sel));
    copy.scratch_strides.push_back(dense[i]);
    StrideRef(*all[i], sel) = dense[i];
  }
  return copy;
}

std::vector<DotDim*> Pointers(std::vector<DotDim>& dims) {
  std::vector<DotDim*> out;
  for (DotDim& d : dims) out.push_back(&d);
  return out;
}

// Merges adjacent dimensions whose strides chain for every selected operand.
std::vector<DotDim> MergeAdjacent(std::vector<DotDim> dims, bool use_lhs, bool use_rhs,
                                  bool use_out) {
  std::vector<DotDim> out;
  for (const DotDim& d : dims) {
    if (d.size == 1) continue;
    if (!out.empty()) {
      DotDim& p = out.back();
      bool chain = (!use_lhs || p.lhs_stride == d.lhs_stride * d.size) &&
                   (!use_rhs || p.rhs_stride == d.rhs_stride * d.size) &&
                   (!use_out || p.out_stride == d.out_stride * d.size);
      if (chain) {
        p.size *= d.size;
        p.lhs_stride = d.lhs_stride;
        p.rhs_stride = d.rhs_stride;
        p.out_stride = d.out_stride;
        continue;
      }
    }
    out.push_back(d);
  }
  return out;
}

int64_t Align64(int64_t x) { return (x + 63) / 64 * 64; }

// The most multiply-adds a "tiny" BLAS call does (IsTinyBlasCall). Measured
// on a dot inside a 10,000-trip loop (docs/models.md, "Programs against
// XLA:CPU"): a plain-loop GEMV beats the OpenBLAS call from 2x2 (34 against
// 100 ns) to 8x8 (64 against 101 ns) and is even at 16x16.
constexpr int64_t kTinyBlasProducts = 64;

// ---- The plain loop ----

template <typename Acc>
struct Ops;

template <>
struct Ops<uint64_t> {
  static uint64_t Load(ElementType t, const uint8_t* p) { return internal::LoadInt(t, p); }
  static void Store(ElementType t, uint8_t* p, uint64_t v) { internal::StoreInt(t, p, v); }
};
template <>
struct Ops<float> {
  static float Load(ElementType t, const uint8_t* p) {
    if (t == ElementType::kF32) {
      float f;
      std::memcpy(&f, p, 4);
      return f;
    }
    if (t == ElementType::kBF16) {
      // bf16 is the top half of an f32: widening is exact, and the generic
      // decoder (a libm scalbn per element) made bf16 dots 2000x slower
      // than f32 ones on a GPT-2 block.
      uint16_t half;
      std::memcpy(&half, p, 2);
      const uint32_t bits = static_cast<uint32_t>(half) << 16;
      float f;
      std::memcpy(&f, &bits, 4);
      return f;
    }
    return static_cast<float>(internal::LoadReal(t, p));
  }
  static void Store(ElementType t, uint8_t* p, float v) { internal::StoreReal(t, p, v); }
};
template <>
struct Ops<double> {
  static double Load(ElementType t, const uint8_t* p) { return internal::LoadReal(t, p); }
  static void Store(ElementType t, uint8_t* p, double v) { internal::StoreReal(t, p, v); }
};
template <typename T>
struct Ops<std::complex<T>> {
  static std::complex<T> Load(ElementType t, const uint8_t* p) {
    return std::complex<T>(internal::LoadComplex(t, p));
  }
  static void Store(ElementType t, uint8_t* p, std::complex<T> v) {
    internal::StoreComplex(t, p, std::complex<double>(v));
  }
};

// Integers of one type T for the operands and the result: loads widen T to
// the 64-bit accumulator as LoadInt does (sign- or zero-extended), stores
// keep the low bits, without decoding the element type per element (which
// made s8 convolutions 25x slower than the evaluator, issue 30).
template <typename T>
struct TypedInt {
  using Wide = std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>;
  static uint64_t Load(ElementType, const uint8_t* p) {
    T v;
    std::memcpy(&v, p, sizeof(T));
    return static_cast<uint64_t>(static_cast<Wide>(v));
  }
  static void Store(ElementType, uint8_t* p, uint64_t v) {
    const T t = static_cast<T>(v);
    std::memcpy(p, &t, sizeof(T));
  }
};

template <typename Acc, typename Codec = Ops<Acc>>
void RunLoopAs(const DotProblem& p, const uint8_t* lhs, const uint8_t* rhs, uint8_t* out) {
  // Outer dims: batch, m, n; inner: k.
  int64_t sizes[kMaxLoopDims], ls[kMaxLoopDims], rs[kMaxLoopDims], os[kMaxLoopDims];
  int nd = 0;
  auto add = [&](const std::vector<DotDim>& dims, bool l, bool r, bool o) {
    for (const DotDim& d : dims) {
      sizes[nd] = d.size;
      ls[nd] = l ? d.lhs_stride : 0;
      rs[nd] = r ? d.rhs_stride : 0;
      os[nd] = o ? d.out_stride : 0;
      ++nd;
    }
  };
  add(p.batch, true, true, true);
  add(p.m, true, false, true);
  add(p.n, false, true, true);
  int64_t ksizes[kMaxLoopDims], kls[kMaxLoopDims], krs[kMaxLoopDims], kzero[kMaxLoopDims] = {};
  int nk = 0;
  for (const DotDim& d : p.k) {
    ksizes[nk] = d.size;
    kls[nk] = d.lhs_stride;
    krs[nk] = d.rhs_stride;
    ++nk;
  }
  const ElementType lt = p.lhs_type, rt = p.rhs_type, ot = p.out_type;
  const int64_t lw = ByteWidth(lt), rw = ByteWidth(rt), ow = ByteWidth(ot);
  internal::ForEachOffset(
      nd, sizes, ls, rs, os, p.lhs_offset, p.rhs_offset, p.out_offset,
      [&](int64_t lo, int64_t ro, int64_t oo) {
        Acc sum{};
        internal::ForEachOffset(nk, ksizes, kls, krs, kzero, lo, ro, 0,
                                [&](int64_t a, int64_t b, int64_t) {
                                  sum += Codec::Load(lt, lhs + a * lw) *
                                         Codec::Load(rt, rhs + b * rw);
                                });
        Codec::Store(ot, out + oo * ow, sum);
      });
}

void RunLoop(const DotProblem& p, const void* lhs, const void* rhs, void* out) {
  auto l = static_cast<const uint8_t*>(lhs);
  auto r = static_cast<const uint8_t*>(rhs);
  auto o = static_cast<uint8_t*>(out);
  switch (ChooseDotLoopCodec(p)) {
    case DotLoopCodec::kComplex:
      if (p.out_type == ElementType::kC64) return RunLoopAs<std::complex<float>>(p, l, r, o);
      return RunLoopAs<std::complex<double>>(p, l, r, o);
    case DotLoopCodec::kF64: return RunLoopAs<double>(p, l, r, o);
    case DotLoopCodec::kF32: return RunLoopAs<float>(p, l, r, o);
    case DotLoopCodec::kDecodedInt: return RunLoopAs<uint64_t>(p, l, r, o);
    case DotLoopCodec::kTypedInt: break;
  }
  switch (p.out_type) {
    case ElementType::kS8: return RunLoopAs<uint64_t, TypedInt<int8_t>>(p, l, r, o);
    case ElementType::kS16: return RunLoopAs<uint64_t, TypedInt<int16_t>>(p, l, r, o);
    case ElementType::kS32: return RunLoopAs<uint64_t, TypedInt<int32_t>>(p, l, r, o);
    case ElementType::kS64: return RunLoopAs<uint64_t, TypedInt<int64_t>>(p, l, r, o);
    case ElementType::kU8: return RunLoopAs<uint64_t, TypedInt<uint8_t>>(p, l, r, o);
    case ElementType::kU16: return RunLoopAs<uint64_t, TypedInt<uint16_t>>(p, l, r, o);
    case ElementType::kU32: return RunLoopAs<uint64_t, TypedInt<uint32_t>>(p, l, r, o);
    case ElementType::kU64: return RunLoopAs<uint64_t, TypedInt<uint64_t>>(p, l, r, o);
    default: return RunLoopAs<uint64_t>(p, l, r, o);  // Not reached (ChooseDotLoopCodec).
  }
}

// ---- BLAS calls, by type ----

CBLAS_ORDER Order(bool row_major) { return row_major ? CblasRowMajor : CblasColMajor; }
CBLAS_TRANSPOSE Trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

// The f32 GEMM of `p` over rows_m x cols_n of C (the whole p.m x p.n, or a
// band) as SmallGemm sees it (row-major C): a column-major C = op(A) op(B) is
// the row-major C^T = op(B)^T op(A)^T.
SmallGemmArgs SmallGemmForm(const DotPlan& p, int64_t rows_m, int64_t cols_n, const float* a,
                            const float* b, float* c) {
  SmallGemmArgs g;
  const float* lhs = a;
  const float* rhs = b;
  bool trans_lhs = p.trans_a, trans_rhs = p.trans_b;
  int64_t ld_lhs = p.lda, ld_rhs = p.ldb;
  g.m = rows_m;
  g.n = cols_n;
  if (!p.row_major) {
    std::swap(lhs, rhs);
    std::swap(trans_lhs, trans_rhs);
    std::swap(ld_lhs, ld_rhs);
    std::swap(g.m, g.n);
  }
  // In row-major terms a stored matrix's rows are ld apart; "trans" means
  // the operand is stored as its transpose.
  g.k = p.k;
  g.a = lhs;
  g.a_row_stride = trans_lhs ? 1 : ld_lhs;
  g.a_col_stride = trans_lhs ? ld_lhs : 1;
  g.b = rhs;
  g.b_transposed = trans_rhs;
  g.ldb = ld_rhs;
  g.c = c;
  g.ldc = p.ldc;
  return g;
}

// C = op(A) op(B) with the plan's flags and leading dimensions, over rows_m
// rows and cols_n columns of C (p.m, p.n, or a band of them).
// With `accumulate`, C += op(A) op(B) (beta 1: a call of the K loop after
// the first).
void Gemm(ElementType t, const DotPlan& p, int64_t rows_m, int64_t cols_n, const void* a,
          const void* b, void* c, bool accumulate) {
  const int m = static_cast<int>(rows_m), n = static_cast<int>(cols_n), k = static_cast<int>(p.k);
  const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb),
            ldc = static_cast<int>(p.ldc);
  const double beta = accumulate ? 1.0 : 0.0;
  switch (t) {
    case ElementType::kF32:
      if (p.small_gemm && p.k_loop_sizes.empty()) {
        // A call that is one part of a split runs on its own thread.
        const int threads = p.split == DotPlan::Split::kNone ? p.threads : 1;
        const SmallGemmArgs g =
            SmallGemmForm(p, rows_m, cols_n, static_cast<const float*>(a),
                          static_cast<const float*>(b), static_cast<float*>(c));
        if (PreferSmallGemm(g, threads)) {
          SmallGemm(g, threads);
          return;
        }
      }
      cblas_sgemm(Order(p.row_major), Trans(p.trans_a), Trans(p.trans_b), m, n, k, 1.0f,
                  static_cast<const float*>(a), lda, static_cast<const float*>(b), ldb,
                  static_cast<float>(beta), static_cast<float*>(c), ldc);
      return;
    case ElementType::kF64:
      cblas_dgemm(Order(p.row_major), Trans(p.trans_a), Trans(p.trans_b), m, n, k, 1.0,
                  static_cast<const double*>(a), lda, static_cast<const double*>(b), ldb, beta,
                  static_cast<double*>(c), ldc);
      return;
    case ElementType::kC64: {
      const std::complex<float> one(1), b0(static_cast<float>(beta));
      cblas_cgemm(Order(p.row_major), Trans(p.trans_a), Trans(p.trans_b), m, n, k, &one, a, lda,
                  b, ldb, &b0, c, ldc);
      return;
    }
    default: {
      const std::complex<double> one(1), b0(beta);
      cblas_zgemm(Order(p.row_major), Trans(p.trans_a), Trans(p.trans_b), m, n, k, &one, a, lda,
                  b, ldb, &b0, c, ldc);
      return;
    }
  }
}

// y = op(A) x for a matrix of a few elements, as cblas_?gemv computes it
// (A(i, j) at a[i * lda + j] row-major, a[i + j * lda] column-major): below
// about a hundred elements OpenBLAS's call costs more than the arithmetic
// (a solver's 2x2 Jacobian times a vector: 60 ns against 10).
template <typename T>
void TinyGemv(const DotPlan& p, const T* a, const T* x, T* y) {
  const int64_t rows = p.m, cols = p.n, lda = p.lda;
  const auto element = [&](int64_t i, int64_t j) {
    return p.row_major ? a[i * lda + j] : a[i + j * lda];
  };
  if (!p.trans_a) {
    for (int64_t i = 0; i < rows; ++i) {
      T sum = 0;
      for (int64_t j = 0; j < cols; ++j) sum += element(i, j) * x[j * p.incx];
      y[i * p.incy] = sum;
    }
  } else {
    for (int64_t j = 0; j < cols; ++j) {
      T sum = 0;
      for (int64_t i = 0; i < rows; ++i) sum += element(i, j) * x[i * p.incx];
      y[j * p.incy] = sum;
    }
  }
}

// f32 y = op(A) x by small_gemv.h's kernels where PreferSmallGemv says they
// beat cblas_sgemv; false (nothing written) otherwise. The matrix is taken
// by its contiguous rows: A itself when row-major, A^T when column-major.
bool SmallGemvWhereFaster(const DotPlan& p, const void* a, const void* x, void* y) {
  SmallGemvArgs g;
  g.rows = p.row_major ? p.m : p.n;
  g.cols = p.row_major ? p.n : p.m;
  g.p = static_cast<const float*>(a);
  g.ldp = p.lda;
  g.transposed = p.row_major == p.trans_a;
  g.x = static_cast<const float*>(x);
  g.incx = p.incx;
  g.y = static_cast<float*>(y);
  g.incy = p.incy;
  if (!PreferSmallGemv(g)) return false;
  SmallGemv(g);
  return true;
}

// Whether the plan's gemv (any band of it included) runs as AxpyGemv: the
// axpy form (outputs along A's contiguous dimension: row-major transposed,
// column-major not) in f32 or f64 with positive strides, where the CPU has
// the kernels. They replace cblas_?gemv there at every size above TinyGemv's
// (and SmallGemv's, which keeps the f32 shapes it is preferred for): at
// least as fast on one thread (benchmarks/blas/axpy_gemv_benchmark.cc,
// docs/zoo.md "Session 16"), and their sums do not depend on an output's
// position, so the form can be cut into bands.
bool AxpyGemvRuns(const DotPlan& p) {
  return p.kind == DotPlan::Kind::kGemv && p.row_major == p.trans_a &&
         (p.compute_type == ElementType::kF32 || p.compute_type == ElementType::kF64) &&
         p.incx > 0 && p.incy > 0 && AxpyGemvAvailable();
}

// y = op(A) x over rows x cols of A (the whole call or a band) by AxpyGemv
// (AxpyGemvRuns(p)): the matrix taken by its contiguous rows, A itself when
// row-major (transposed), A^T when column-major.
template <typename T>
void RunAxpyGemv(const DotPlan& p, int64_t rows, int64_t cols, const void* a, const void* x,
                 void* y) {
  AxpyGemvArgs<T> g;
  g.rows = p.row_major ? rows : cols;
  g.cols = p.row_major ? cols : rows;
  g.p = static_cast<const T*>(a);
  g.ldp = p.lda;
  g.x = static_cast<const T*>(x);
  g.incx = p.incx;
  g.y = static_cast<T*>(y);
  g.incy = p.incy;
  AxpyGemv(g);
}

// The plan's axpy-form gemv in two halves of its rows (DotPlan::
// axpy_half_rows): the first into y, the rest into scratch, on two threads
// when the plan is split, then y = first + rest, element by element.
template <typename T>
void RunAxpyGemvInHalves(const DotPlan& p, const void* a, const void* x, void* y,
                         uint8_t* scratch, int threads) {
  AxpyGemvArgs<T> first;
  first.rows = p.axpy_half_rows;
  first.cols = p.row_major ? p.n : p.m;
  first.p = static_cast<const T*>(a);
  first.ldp = p.lda;
  first.x = static_cast<const T*>(x);
  first.incx = p.incx;
  first.y = static_cast<T*>(y);
  first.incy = p.incy;
  AxpyGemvArgs<T> rest = first;
  rest.rows = (p.row_major ? p.m : p.n) - first.rows;
  rest.p += first.rows * p.lda;
  rest.x += first.rows * p.incx;
  rest.y = reinterpret_cast<T*>(scratch + p.axpy_scratch_offset);
  rest.incy = 1;
  auto half = [&](int64_t i) { AxpyGemv(i == 0 ? first : rest); };
  if (p.split == DotPlan::Split::kRows && p.threads >= 2 && threads >= 2) {
    ThreadPool::Shared().ParallelFor(2, 1, half);
  } else {
    half(0);
    half(1);
  }
  T* out = first.y;
  for (int64_t i = 0; i < first.cols; ++i) out[i * p.incy] += rest.y[i];
}

// y = op(A) x for the plan's gemv; `band`: one of several bands of the
// output (rows m, columns n of A), which always goes where the whole call
// would (bands are cut only from calls too large for TinyGemv and
// SmallGemv: to cblas_?gemv for the dots form, AxpyGemv for the axpy form),
// so every element is the same sum on any thread count.
void Gemv(ElementType t, const DotPlan& p, int64_t rows, int64_t cols, bool band, const void* a,
          const void* x, void* y) {
  if (!band && IsTinyBlasCall(p) && p.incx > 0 && p.incy > 0) {
    if (t == ElementType::kF32) {
      return TinyGemv(p, static_cast<const float*>(a), static_cast<const float*>(x),
                      static_cast<float*>(y));
    }
    if (t == ElementType::kF64) {
      return TinyGemv(p, static_cast<const double*>(a), static_cast<const double*>(x),
                      static_cast<double*>(y));
    }
  }
  if (!band && t == ElementType::kF32 && SmallGemvWhereFaster(p, a, x, y)) return;
  if (AxpyGemvRuns(p)) {
    if (t == ElementType::kF32) return RunAxpyGemv<float>(p, rows, cols, a, x, y);
    return RunAxpyGemv<double>(p, rows, cols, a, x, y);
  }
  const int m = static_cast<int>(rows), n = static_cast<int>(cols);
  const int lda = static_cast<int>(p.lda), incx = static_cast<int>(p.incx),
            incy = static_cast<int>(p.incy);
  // y is cleared first: beta = 0 must not let stale NaNs through whatever the
  // BLAS build does with beta.
  const int64_t len = p.trans_a ? cols : rows;
  const int64_t w = ByteWidth(t);
  // One call for a contiguous y: a call per element (4 bytes each) was a
  // fifth of a sampler's run whose gemv writes 2048 elements per step.
  if (incy == 1) {
    std::memset(y, 0, static_cast<size_t>(len * w));
  } else {
    for (int64_t i = 0; i < len; ++i) std::memset(static_cast<uint8_t*>(y) + i * incy * w, 0, w);
  }
  switch (t) {
    case ElementType::kF32:
      cblas_sgemv(Order(p.row_major), Trans(p.trans_a), m, n, 1.0f, static_cast<const float*>(a),
                  lda, static_cast<const float*>(x), incx, 0.0f, static_cast<float*>(y), incy);
      return;
    case ElementType::kF64:
      cblas_dgemv(Order(p.row_major), Trans(p.trans_a), m, n, 1.0, static_cast<const double*>(a),
                  lda, static_cast<const double*>(x), incx, 0.0, static_cast<double*>(y), incy);
      return;
    case ElementType::kC64: {
      const std::complex<float> one(1), zero(0);
      cblas_cgemv(Order(p.row_major), Trans(p.trans_a), m, n, &one, a, lda, x, incx, &zero, y,
                  incy);
      return;
    }
    default: {
      const std::complex<double> one(1), zero(0);
      cblas_zgemv(Order(p.row_major), Trans(p.trans_a), m, n, &one, a, lda, x, incx, &zero, y,
                  incy);
      return;
    }
  }
}

void Dot(ElementType t, const DotPlan& p, const void* x, const void* y, void* out) {
  const int k = static_cast<int>(p.k), incx = static_cast<int>(p.incx),
            incy = static_cast<int>(p.incy);
  switch (t) {
    case ElementType::kF32: {
      float r = cblas_sdot(k, static_cast<const float*>(x), incx, static_cast<const float*>(y), incy);
      std::memcpy(out, &r, sizeof(r));
      return;
    }
    case ElementType::kF64: {
      double r =
          cblas_ddot(k, static_cast<const double*>(x), incx, static_cast<const double*>(y), incy);
      std::memcpy(out, &r, sizeof(r));
      return;
    }
    case ElementType::kC64: {
      std::complex<float> r;
      cblas_cdotu_sub(k, x, incx, y, incy, &r);
      std::memcpy(out, &r, sizeof(r));
      return;
    }
    default: {
      std::complex<double> r;
      cblas_zdotu_sub(k, x, incx, y, incy, &r);
      std::memcpy(out, &r, sizeof(r));
      return;
    }
  }
}

absl::Status CheckPlainLayout(const Shape& shape, absl::string_view what) {
  if (!shape.IsArray()) return absl::InvalidArgumentError(absl::StrCat(what, " is not an array"));
  if (shape.is_dynamic()) {
    return absl::UnimplementedError(absl::StrCat(what, " has dynamic dimensions"));
  }
  if (!shape.has_layout()) return absl::OkStatus();
  const Layout& l = shape.layout();
  if (!l.tiles.empty() || !l.padded_dimensions.empty() ||
      (l.element_size_in_bits != 0 &&
       l.element_size_in_bits != 8 * ByteWidth(shape.element_type()))) {
    return absl::UnimplementedError(
        absl::StrCat(what, " layout ", l.ToString(), " is not a plain layout"));
  }
  if (static_cast<int64_t>(l.minor_to_major.size()) != shape.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(what, " layout does not match its rank"));
  }
  return absl::OkStatus();
}

}  // namespace

namespace internal {

std::vector<int64_t> ElementStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  const Layout layout = shape.has_layout() ? shape.layout() : Layout::Default(shape.rank());
  int64_t stride = 1;
  for (int64_t d : layout.minor_to_major) {
    strides[d] = stride;
    stride *= shape.dimensions(d);
  }
  return strides;
}

absl::Status CheckPlainArray(const Shape& shape, absl::string_view what) {
  return CheckPlainLayout(shape, what);
}

inline float BitsToFloat(uint32_t bits) {
  float f;
  std::memcpy(&f, &bits, 4);
  return f;
}

inline uint32_t FloatToBits(float f) {
  uint32_t bits;
  std::memcpy(&bits, &f, 4);
  return bits;
}

// bf16 <-> f32: bf16 is the top half of an f32, so widening is exact;
// narrowing rounds to nearest even (NaNs through the evaluator's encoder,
// which keeps their payload as it does).
inline float WidenBf16(uint16_t half) { return BitsToFloat(static_cast<uint32_t>(half) << 16); }

inline uint16_t NarrowToBf16(float f) {
  uint32_t bits = FloatToBits(f);
  if ((bits & 0x7fffffffu) > 0x7f800000u) [[unlikely]] {
    return static_cast<uint16_t>(DoubleToFloatBits(ElementType::kBF16, f));
  }
  bits += 0x7fffu + ((bits >> 16) & 1u);
  return static_cast<uint16_t>(bits >> 16);
}

// f16 -> f32, exact: the exponent and mantissa bits moved into f32's places
// read as an f32 that is the f16 value times 2^-112 (the difference of the
// exponent biases), normal and subnormal alike, so one multiplication by
// 2^112 (exact) gives the value; exponent 31 (inf, NaN) becomes 255 with the
// mantissa kept.
inline float WidenF16(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t magnitude = half & 0x7fffu;
  uint32_t bits = FloatToBits(BitsToFloat(magnitude << 13) * 0x1p112f);
  if (magnitude >= 0x7c00u) bits = (magnitude << 13) | 0x7f800000u;
  return BitsToFloat(bits | sign);
}

// f32 -> f16, rounded to nearest even (NaNs through the evaluator's encoder).
inline uint16_t NarrowToF16(float f) {
  const uint32_t bits = FloatToBits(f);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) [[unlikely]] {
    return static_cast<uint16_t>(DoubleToFloatBits(ElementType::kF16, f));
  }
  // 65520 (halfway between the largest f16, 65504, and 2^16) and above: inf.
  if (magnitude >= 0x477ff000u) return sign | 0x7c00u;
  if (magnitude < 0x38800000u) {
    // Below 2^-14, f16's subnormals: 0.5 + |f| is an f32 in [0.5, 1), whose
    // ulp, 2^-24, is f16's subnormal spacing, so the addition rounds |f| to
    // nearest even in those units and leaves the count in the mantissa (up
    // to 0x400, the smallest normal f16, when it rounds up).
    return sign | static_cast<uint16_t>(FloatToBits(BitsToFloat(magnitude) + 0.5f) - 0x3f000000u);
  }
  // Normal: round the 13 dropped mantissa bits to nearest even (a carry
  // runs into the exponent, as it should), then rebias the exponent.
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return sign | static_cast<uint16_t>((rounded - 0x38000000u) >> 13);
}

// Unit-stride bf16 rows are converted 16 elements at a time in GCC/Clang
// vector types (SSE2 or NEON code at the baseline ISA): the compiler left
// the plain loops scalar at -O2, and 8% of gpt_train_bf16's time went to
// these copies.
#if defined(__GNUC__)
#define XJIT_DOT_VECTOR_ROWS 1
typedef uint16_t U16x16 __attribute__((vector_size(32)));
typedef uint32_t U32x16 __attribute__((vector_size(64)));
typedef int32_t I32x4 __attribute__((vector_size(16)));
#else
#define XJIT_DOT_VECTOR_ROWS 0
#endif

// The conversions of a narrow operand image, by the operand's type (bf16 or
// f16), as function-object types so that the loops below inline them.
struct Bf16Codec {
  static float Widen(uint16_t h) { return WidenBf16(h); }
  static uint16_t Narrow(float f) { return NarrowToBf16(f); }
  static void WidenRow(const uint16_t* from, float* to, int64_t n) {
    int64_t i = 0;
#if XJIT_DOT_VECTOR_ROWS
    for (; i + 16 <= n; i += 16) {
      U16x16 h;
      std::memcpy(&h, from + i, sizeof(h));
      const U32x16 bits = __builtin_convertvector(h, U32x16) << 16;
      std::memcpy(to + i, &bits, sizeof(bits));
    }
#endif
    for (; i < n; ++i) to[i] = WidenBf16(from[i]);
  }
  static void NarrowRow(const float* from, uint16_t* to, int64_t n) {
    int64_t i = 0;
#if XJIT_DOT_VECTOR_ROWS
    for (; i + 16 <= n; i += 16) {
      U32x16 bits;
      std::memcpy(&bits, from + i, sizeof(bits));
      // NaNs go through the encoder, as in NarrowToBf16. The magnitudes
      // compare as signed 128-bit vectors (GCC made one scalar compare per
      // element of an unsigned or a wider one at the SSE2 baseline).
      I32x4 nan = {0, 0, 0, 0};
      for (int q = 0; q < 4; ++q) {
        I32x4 quarter;
        std::memcpy(&quarter, from + i + 4 * q, sizeof(quarter));
        nan |= (quarter & 0x7fffffff) > 0x7f800000;
      }
      uint64_t any[2];
      std::memcpy(any, &nan, sizeof(any));
      if ((any[0] | any[1]) != 0) [[unlikely]] {
        for (int64_t j = i; j < i + 16; ++j) to[j] = NarrowToBf16(from[j]);
        continue;
      }
      const U32x16 rounded = (bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16;
      const U16x16 h = __builtin_convertvector(rounded, U16x16);
      std::memcpy(to + i, &h, sizeof(h));
    }
#endif
    for (; i < n; ++i) to[i] = NarrowToBf16(from[i]);
  }
};
struct F16Codec {
  static float Widen(uint16_t h) { return WidenF16(h); }
  static uint16_t Narrow(float f) { return NarrowToF16(f); }
  static void WidenRow(const uint16_t* from, float* to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = WidenF16(from[i]);
  }
  static void NarrowRow(const float* from, uint16_t* to, int64_t n) {
    for (int64_t i = 0; i < n; ++i) to[i] = NarrowToF16(from[i]);
  }
};

// The part of a copy that `part` of `parts` threads runs: a range of its
// outermost dimension with at least `parts` elements (the whole copy for
// part 0 when no dimension has that many), as sizes (into `sizes`, of
// copy.sizes.size() entries) and starting offsets in elements. False when
// this part has nothing to do.
bool CopyPart(const StridedCopy& copy, int part, int parts, int64_t* sizes,
              int64_t* operand_offset, int64_t* image_offset) {
  const int nd = static_cast<int>(copy.sizes.size());
  std::copy(copy.sizes.begin(), copy.sizes.end(), sizes);
  *operand_offset = copy.operand_offset;
  *image_offset = 0;
  int split = -1;
  for (int d = 0; d < nd && parts > 1 && split < 0; ++d) {
    if (copy.sizes[d] >= parts) split = d;
  }
  if (split < 0) return part == 0;
  const int64_t begin = copy.sizes[split] * part / parts;
  const int64_t end = copy.sizes[split] * (part + 1) / parts;
  sizes[split] = end - begin;
  *operand_offset += begin * copy.operand_strides[split];
  *image_offset = begin * copy.scratch_strides[split];
  return end > begin;
}

// A strided copy between a bf16 or f16 operand and its f32 image (see
// RunStridedCopy).
template <typename Codec>
void RunWideningCopy(const StridedCopy& copy, const void* operand_in, void* operand_out,
                     uint8_t* scratch, bool to_image, int part, int parts) {
  const int nd = static_cast<int>(copy.sizes.size());
  auto* image = reinterpret_cast<float*>(scratch + copy.scratch_offset);
  if (nd == 0) {  // A scalar: one element.
    if (part != 0) return;
    if (to_image) {
      image[0] = Codec::Widen(static_cast<const uint16_t*>(operand_in)[copy.operand_offset]);
    } else {
      static_cast<uint16_t*>(operand_out)[copy.operand_offset] = Codec::Narrow(image[0]);
    }
    return;
  }
  int64_t sizes[kMaxLoopDims];
  int64_t operand_offset = 0, image_offset = 0;
  if (!CopyPart(copy, part, parts, sizes, &operand_offset, &image_offset)) return;
  // Rows of the innermost dimension at a time: a unit-stride row (the
  // usual case: the image keeps the operand's minor order) goes through
  // the codec's vectorised row loop.
  int64_t zero[kMaxLoopDims] = {};
  const int inner = nd - 1;
  const int64_t n = sizes[inner];
  const int64_t ss = copy.operand_strides[inner], ds = copy.scratch_strides[inner];
  if (to_image) {
    auto src = static_cast<const uint16_t*>(operand_in);
    ForEachOffset(inner, sizes, copy.operand_strides.data(), copy.scratch_strides.data(), zero,
                  operand_offset, image_offset, 0, [&](int64_t s, int64_t d, int64_t) {
                    const uint16_t* from = src + s;
                    float* to = image + d;
                    if (ss == 1 && ds == 1) {
                      Codec::WidenRow(from, to, n);
                    } else {
                      for (int64_t i = 0; i < n; ++i) to[i * ds] = Codec::Widen(from[i * ss]);
                    }
                  });
  } else {
    auto dst = static_cast<uint16_t*>(operand_out);
    ForEachOffset(inner, sizes, copy.operand_strides.data(), copy.scratch_strides.data(), zero,
                  operand_offset, image_offset, 0, [&](int64_t s, int64_t d, int64_t) {
                    uint16_t* to = dst + s;
                    const float* from = image + d;
                    if (ss == 1 && ds == 1) {
                      Codec::NarrowRow(from, to, n);
                    } else {
                      for (int64_t i = 0; i < n; ++i) to[i * ss] = Codec::Narrow(from[i * ds]);
                    }
                  });
  }
}

void RunStridedCopy(const StridedCopy& copy, const void* operand_in, void* operand_out,
                    uint8_t* scratch, bool to_image, int part, int parts) {
  if (copy.widened_from == ElementType::kBF16) {
    RunWideningCopy<Bf16Codec>(copy, operand_in, operand_out, scratch, to_image, part, parts);
    return;
  }
  if (copy.widened_from == ElementType::kF16) {
    RunWideningCopy<F16Codec>(copy, operand_in, operand_out, scratch, to_image, part, parts);
    return;
  }
  const int nd = static_cast<int>(copy.sizes.size());
  const int64_t w = copy.element_bytes;
  int64_t zero[kMaxLoopDims] = {};
  int64_t sizes[kMaxLoopDims];
  int64_t operand_offset = 0, image_offset = 0;
  if (!CopyPart(copy, part, parts, sizes, &operand_offset, &image_offset)) return;
  uint8_t* image = scratch + copy.scratch_offset;
  auto src = static_cast<const uint8_t*>(operand_in);
  auto dst = static_cast<uint8_t*>(operand_out);
  // A minor dimension contiguous on both sides (the image keeps the
  // operand's minor order: a batched gemv's 3-vectors, a transposed
  // matrix's rows) moves a row per copy, not an element: element by element
  // the loop's bookkeeping cost more than the bytes (a third of the copies'
  // time on diffrax's [16,7,3] stage weights).
  if (nd >= 1 && copy.operand_strides[nd - 1] == 1 && copy.scratch_strides[nd - 1] == 1 &&
      sizes[nd - 1] > 1) {
    const size_t row = static_cast<size_t>(sizes[nd - 1] * w);
    ForEachOffset(nd - 1, sizes, copy.operand_strides.data(), copy.scratch_strides.data(), zero,
                  operand_offset, image_offset, 0, [&](int64_t s, int64_t d, int64_t) {
                    if (to_image) {
                      std::memcpy(image + d * w, src + s * w, row);
                    } else {
                      std::memcpy(dst + s * w, image + d * w, row);
                    }
                  });
    return;
  }
  // The element width and the direction are template arguments, so that
  // each loop is a plain fixed-size copy.
  auto body = [&](auto width, auto into_image) {
    ForEachOffset(nd, sizes, copy.operand_strides.data(), copy.scratch_strides.data(), zero,
                  operand_offset, image_offset, 0, [&](int64_t s, int64_t d, int64_t) {
                    if constexpr (decltype(into_image)::value) {
                      std::memcpy(image + d * width, src + s * width, width);
                    } else {
                      std::memcpy(dst + s * width, image + d * width, width);
                    }
                  });
  };
  auto with_width = [&](auto into_image) {
    switch (w) {
      case 4: body(std::integral_constant<int64_t, 4>(), into_image); break;
      case 8: body(std::integral_constant<int64_t, 8>(), into_image); break;
      case 16: body(std::integral_constant<int64_t, 16>(), into_image); break;
      default: body(w, into_image);
    }
  };
  if (to_image) {
    with_width(std::true_type());
  } else {
    with_width(std::false_type());
  }
}

}  // namespace internal

int64_t StridedCopy::bytes() const {
  int64_t n = element_bytes;
  for (int64_t s : sizes) n *= s;
  return n;
}

DotLoopCodec ChooseDotLoopCodec(const DotProblem& problem) {
  const ElementType t = problem.out_type;
  if (t == ElementType::kC64 || t == ElementType::kC128) return DotLoopCodec::kComplex;
  if (t == ElementType::kF64) return DotLoopCodec::kF64;
  if (IsFloat(t)) return DotLoopCodec::kF32;
  // Integers of 8, 16, 32 or 64 bits are C++ types; packed sub-byte ones
  // (s4, u2, ...) and PRED are not.
  const bool typed = problem.lhs_type == t && problem.rhs_type == t && IsInteger(t) &&
                     BitWidth(t) >= 8;
  return typed ? DotLoopCodec::kTypedInt : DotLoopCodec::kDecodedInt;
}

std::string DotPlan::ToString() const {
  std::string kind_name;
  switch (kind) {
    case Kind::kNothing: kind_name = "nothing"; break;
    case Kind::kGemm: kind_name = "gemm"; break;
    case Kind::kGemv: kind_name = "gemv"; break;
    case Kind::kDot: kind_name = "dot"; break;
    case Kind::kLoop: kind_name = "loop"; break;
  }
  int64_t batch = 1;
  for (int64_t s : batch_sizes) batch *= s;
  std::string s = absl::StrCat(kind_name, " ", ElementTypeName(out_type));
  if ((compute_type != out_type || compute_type != lhs_type || compute_type != rhs_type) &&
      kind != Kind::kLoop && kind != Kind::kNothing) {
    absl::StrAppend(&s, " on ", ElementTypeName(compute_type), " images");
  }
  if (kind == Kind::kGemm || kind == Kind::kGemv) {
    absl::StrAppend(&s, row_major ? " row_major" : " col_major", trans_a ? " T" : " N");
    if (kind == Kind::kGemm) absl::StrAppend(&s, trans_b ? " T" : " N");
  }
  if (kind != Kind::kLoop && kind != Kind::kNothing) {
    absl::StrAppend(&s, " m=", m, " n=", n, " k=", k, " batch=", batch);
  }
  if (axpy_half_rows > 0) absl::StrAppend(&s, " axpy_half_rows=", axpy_half_rows);
  if (!k_loop_sizes.empty()) {
    int64_t steps = 1;
    for (int64_t size : k_loop_sizes) steps *= size;
    absl::StrAppend(&s, " k_loop=", steps);
  }
  if (kind == Kind::kLoop) {
    switch (ChooseDotLoopCodec(loop)) {
      case DotLoopCodec::kTypedInt: absl::StrAppend(&s, " typed"); break;
      case DotLoopCodec::kDecodedInt: absl::StrAppend(&s, " decoded"); break;
      default: break;
    }
  }
  absl::StrAppend(&s, " copies=", copies.size(), " copy_bytes=", copy_bytes,
                  " scratch=", scratch_bytes);
  switch (split) {
    case Split::kNone: break;
    case Split::kBatch: absl::StrAppend(&s, " split=batch threads=", threads); break;
    case Split::kRows: absl::StrAppend(&s, " split=rows bands=", bands); break;
    case Split::kColumns: absl::StrAppend(&s, " split=columns bands=", bands); break;
  }
  if (blas_threads > 1) absl::StrAppend(&s, " blas_threads=", blas_threads);
  return s;
}

namespace {

// Where band `band` of `bands` starts along a dimension of `size` (band ==
// bands: the end). Starts are multiples of 16 when every band is at least
// that long: OpenBLAS's kernels work in tiles of up to 16 rows or columns
// and sum the last, partial tile in another order (c64 bands of 100 columns
// differed from the whole call in the elements of the tail), so a band must
// start where one of the whole call's tiles starts.
int64_t BandStart(int64_t size, int64_t band, int64_t bands) {
  if (band >= bands) return size;
  const int64_t start = size * band / bands;
  return size / bands >= 16 ? start / 16 * 16 : start;
}

// How many bands a GEMM large enough for them is cut into, whatever the
// thread count: the machine's cores (2 to 8). OpenBLAS's Haswell/Zen SGEMM
// kernels sum an element of C in an order that depends on where the call's
// bounds fall, whatever the tile alignment (a 1024x32x64 sgemm cut at row
// 256, 384, 512, 640 or 768 changed elements far from the cut), so bands
// planned per thread count gave other bits at 2 threads than at 1; its
// SkylakeX kernels did not.
int64_t GemmBands() {
  static const int64_t bands =
      std::clamp<int64_t>(static_cast<int64_t>(std::thread::hardware_concurrency()), 2, 8);
  return bands;
}

}  // namespace

void PlanDotThreads(DotPlan& plan, int threads, const DotSplitLimits& limits) {
  plan.split = DotPlan::Split::kNone;
  plan.bands = 1;
  // Each thread of a split calls OpenBLAS, which then wants a buffer for it.
  plan.threads = std::max(std::min(threads, BlasThreadsTheAddressSpaceAllows()), 1);
  plan.blas_threads = 1;
  // Large gemv (m x n >= 2^20) once kept OpenBLAS's own threads; its
  // workers then spun in sched_yield for up to 0.1 s after every call,
  // taking the core the pool's next kernels wanted: a 4096x256 gemv made an
  // optimizer step 3x to 30x slower at 2 threads than at 1 on a loaded
  // machine. A gemv (memory-bound) now runs on one OpenBLAS thread, in
  // bands of output elements on the pool where it is large enough.
  if (plan.kind != DotPlan::Kind::kGemm && plan.kind != DotPlan::Kind::kGemv &&
      plan.kind != DotPlan::Kind::kDot) {
    return;  // kNothing, kLoop: no BLAS calls
  }
  int64_t batch = 1;
  for (int64_t b : plan.batch_sizes) batch *= b;
  // A single f32 GEMM that SmallGemm takes stays one call: SmallGemm splits
  // its columns (a narrow C's rows) over the threads itself, with the same
  // bits on any thread count.
  if (plan.small_gemm && plan.kind == DotPlan::Kind::kGemm && batch == 1 &&
      plan.k_loop_sizes.empty() &&
      plan.compute_type == ElementType::kF32 &&
      PreferSmallGemm(SmallGemmForm(plan, plan.m, plan.n, nullptr, nullptr, nullptr),
                      plan.threads)) {
    return;
  }
  // Multiply-adds of one call; a batch worth less in all than one band is
  // not worth waking a helper for.
  const int64_t call = plan.kind == DotPlan::Kind::kGemm   ? plan.m * plan.n * plan.k
                       : plan.kind == DotPlan::Kind::kGemv ? plan.m * plan.n
                                                           : plan.k;
  const bool batch_pays = batch >= 2 && batch * call > limits.min_band_products;
  // A GEMM large enough is cut into the same bands at any thread count
  // (GemmBands), so that one thread makes the same calls as several and gets
  // the same bits; the pool runs batch index x band. Along the larger of M
  // and N: a band repacks the other operand whole. A batch that pays for a
  // split keeps its GEMMs whole (also at one thread) and is split over the
  // batch below.
  if (plan.kind == DotPlan::Kind::kGemm && !batch_pays) {
    const bool rows = plan.n <= plan.m;
    const int64_t size = rows ? plan.m : plan.n;
    int64_t bands =
        std::min<int64_t>(GemmBands(), size / std::max<int64_t>(limits.min_band_rows, 1));
    auto smallest = [&](int64_t b) {
      int64_t least = size;
      for (int64_t j = 0; j < b; ++j) {
        least = std::min(least, BandStart(size, j + 1, b) - BandStart(size, j, b));
      }
      return least;
    };
    while (bands >= 2 &&
           smallest(bands) * (rows ? plan.n : plan.m) * plan.k <= limits.min_band_products) {
      --bands;
    }
    if (bands >= 2) {
      plan.split = rows ? DotPlan::Split::kRows : DotPlan::Split::kColumns;
      plan.bands = bands;
      return;
    }
  }
  if (plan.threads == 1) return;
  const int64_t t = plan.threads;
  const bool batch_divides = batch >= t && (batch % t == 0 || batch >= 4 * t);
  if (batch_divides && batch_pays) {
    plan.split = DotPlan::Split::kBatch;
    return;
  }
  if (plan.axpy_half_rows > 0) {
    // Two halves of the rows (DotPlan::axpy_half_rows), one per thread.
    plan.split = DotPlan::Split::kRows;
    plan.bands = 2;
    return;
  }
  if (plan.kind == DotPlan::Kind::kGemv && batch == 1 &&
      (plan.row_major != plan.trans_a || AxpyGemvRuns(plan)) &&
      plan.m * plan.n >= std::max<int64_t>(limits.min_gemv_products, 1)) {
    // Bands of output elements, each a call on its own thread of the pool:
    // OpenBLAS's own threads spin in sched_yield after every call, taking
    // the core the pool's next kernels want. Where each output element is
    // a dot over a contiguous row of A, the bands are cblas calls; in the
    // other form (axpys along A's columns) OpenBLAS sums an element in
    // another order when the call has other bounds (a 1000x1000 sgemv in
    // bands starting at 496 or 384, 2049x777 likewise: not the same bits),
    // so that form is cut only where AxpyGemv runs it (whose sums do not
    // depend on the bounds) and otherwise stays one call.
    const int64_t size = plan.trans_a ? plan.n : plan.m;
    const int64_t bands = std::min<int64_t>(t, size / std::max<int64_t>(limits.min_band_rows, 1));
    if (bands >= 2) {
      plan.split = DotPlan::Split::kRows;
      plan.bands = bands;
      return;
    }
  }
  // A small GEMM, gemv or dot: split over whatever batch there is.
  if (batch_pays) plan.split = DotPlan::Split::kBatch;
}

bool DotSplitDisabledByEnvironment() {
  static const bool disabled = [] {
    const char* value = std::getenv("XJIT_DOT_BANDS");
    return value != nullptr && std::strcmp(value, "0") == 0;
  }();
  return disabled;
}

bool IsTinyBlasCall(const DotPlan& plan) {
  switch (plan.kind) {
    case DotPlan::Kind::kGemv:
      return plan.m * plan.n <= kTinyBlasProducts;
    case DotPlan::Kind::kDot:
      return plan.k <= kTinyBlasProducts;
    case DotPlan::Kind::kGemm:
      return plan.m * plan.n * plan.k <= kTinyBlasProducts;
    default:
      return false;
  }
}

absl::StatusOr<DotPlan> PlanDotProblem(const DotProblem& problem) {
  DotProblem p = problem;
  for (const auto* group : {&p.batch, &p.m, &p.n, &p.k}) {
    for (const DotDim& d : *group) {
      if (d.size < 0) return absl::InvalidArgumentError("negative dimension size in dot");
    }
  }
  const bool out_int = IsInteger(p.out_type) || IsPred(p.out_type);
  for (ElementType t : {p.lhs_type, p.rhs_type}) {
    const bool in_int = IsInteger(t) || IsPred(t);
    if (!IsArrayElementType(t) || (out_int && !in_int) ||
        (!IsComplex(p.out_type) && IsComplex(t))) {
      return absl::UnimplementedError(absl::StrCat("dot of ", ElementTypeName(t), " into ",
                                                   ElementTypeName(p.out_type)));
    }
  }
  if (!IsArrayElementType(p.out_type)) return absl::InvalidArgumentError("bad dot result type");

  DotPlan plan;
  plan.lhs_type = p.lhs_type;
  plan.rhs_type = p.rhs_type;
  plan.out_type = p.out_type;
  plan.compute_type = p.out_type;
  const int64_t bt = Product(p.batch), mt = Product(p.m), nt = Product(p.n), kt = Product(p.k);
  if (bt == 0 || mt == 0 || nt == 0) {
    plan.kind = DotPlan::Kind::kNothing;
    return plan;
  }

  // Under an address-space limit without room for OpenBLAS's buffer, BLAS
  // would wait for it forever (blas_threads.h): the plain loop instead.
  const bool sizes_fit = kt > 0 && mt <= kBlasIntMax && nt <= kBlasIntMax &&
                         kt <= kBlasIntMax && BlasThreadsTheAddressSpaceAllows() > 0;
  // bf16 and f16 run in f32 on images of their narrow operands (dot.h).
  auto narrow = [](ElementType t) { return t == ElementType::kBF16 || t == ElementType::kF16; };
  auto narrow_or_f32 = [&](ElementType t) { return narrow(t) || t == ElementType::kF32; };
  const bool f32_images = sizes_fit && narrow_or_f32(p.out_type) && narrow_or_f32(p.lhs_type) &&
                          narrow_or_f32(p.rhs_type) &&
                          (narrow(p.out_type) || narrow(p.lhs_type) || narrow(p.rhs_type));
  if (f32_images) plan.compute_type = ElementType::kF32;
  const bool blas = f32_images || (IsBlasType(p.out_type) && p.lhs_type == p.out_type &&
                                    p.rhs_type == p.out_type && sizes_fit);
  if (!blas) {
    DotProblem loop = p;
    // Merge what can be merged, innermost loops on the smallest strides.
    loop.batch = MergeAdjacent(OrderBy(p.batch, Sel::kOut), true, true, true);
    loop.m = MergeAdjacent(OrderBy(p.m, Sel::kOut), true, false, true);
    loop.n = MergeAdjacent(OrderBy(p.n, Sel::kOut), false, true, true);
    loop.k = MergeAdjacent(OrderBy(p.k, Sel::kLhs), true, true, false);
    if (loop.batch.size() + loop.m.size() + loop.n.size() > kMaxLoopDims ||
        loop.k.size() > kMaxLoopDims) {
      return absl::UnimplementedError("dot with too many dimensions");
    }
    plan.kind = DotPlan::Kind::kLoop;
    plan.loop = std::move(loop);
    return plan;
  }

  // Choose group orders.
  auto candidates = [](const std::vector<DotDim>& dims, Sel a, Sel b) {
    std::vector<std::vector<DotDim>> c = {OrderBy(dims, a)};
    std::vector<DotDim> other = OrderBy(dims, b);
    bool same = other.size() == c[0].size();
    for (size_t i = 0; same && i < other.size(); ++i) {
      same = Stride(other[i], a) == Stride(c[0][i], a) && Stride(other[i], b) == Stride(c[0][i], b);
    }
    if (!same) c.push_back(std::move(other));
    return c;
  };
  const auto m_orders = candidates(p.m, Sel::kOut, Sel::kLhs);
  const auto n_orders = candidates(p.n, Sel::kOut, Sel::kRhs);
  const auto k_orders = candidates(p.k, Sel::kRhs, Sel::kLhs);
  int64_t best_cost = INT64_MAX;
  std::vector<DotDim> m, n, k, k_outer;
  Fits fits;
  // The K loop (dot.h) is considered for GEMMs whose result stays in cache
  // between the loop's calls (it is reread and rewritten by each) and whose
  // calls are large enough (an inner K of 32 or more, 2^17 multiply-adds or
  // more) not to be mostly OpenBLAS's packing and fixed costs (about a
  // microsecond a call); it only ever replaces an operand copy.
  constexpr int64_t kKLoopMaxResultBytes = 256 * 1024;
  constexpr int64_t kKLoopMinInnerK = 32;
  constexpr int64_t kKLoopMinCallProducts = int64_t{1} << 17;
  const bool k_loop_allowed = p.allow_k_loop && !f32_images && mt > 1 && nt > 1 &&
                              mt * nt * ByteWidth(p.out_type) <= kKLoopMaxResultBytes;
  for (const auto& mo : m_orders) {
    for (const auto& no : n_orders) {
      for (const auto& ko : k_orders) {
        Fits f = Evaluate(mo, no, ko);
        // A narrow operand is always copied (widened) into an f32 image.
        if (f32_images) {
          f.lhs = f.lhs && p.lhs_type == ElementType::kF32;
          f.rhs = f.rhs && p.rhs_type == ElementType::kF32;
          f.out = f.out && p.out_type == ElementType::kF32;
        }
        int64_t cost = (f.lhs ? 0 : bt * mt * kt) + (f.rhs ? 0 : bt * kt * nt) +
                       (f.out ? 0 : bt * mt * nt);
        if (cost < best_cost) {
          best_cost = cost;
          m = mo;
          n = no;
          k = ko;
          k_outer.clear();
          fits = f;
        }
        if (!k_loop_allowed || (f.lhs && f.rhs)) continue;
        // The outer dimensions of K (the largest strides come first) as a
        // loop, the rest as each call's K; the shallowest loop that lets
        // both operands go to BLAS as they lie.
        for (size_t split = 1; split < ko.size() && split <= kMaxLoopDims; ++split) {
          const std::vector<DotDim> inner(ko.begin() + static_cast<std::ptrdiff_t>(split), ko.end());
          if (Product(inner) < kKLoopMinInnerK || mt * nt * Product(inner) < kKLoopMinCallProducts) {
            break;
          }
          const Fits g = Evaluate(mo, no, inner);
          if (!g.lhs || !g.rhs) continue;
          const int64_t loop_cost = g.out ? 0 : bt * mt * nt;
          if (loop_cost < best_cost) {
            best_cost = loop_cost;
            m = mo;
            n = no;
            k = inner;
            k_outer.assign(ko.begin(), ko.begin() + static_cast<std::ptrdiff_t>(split));
            fits = g;
          }
          break;
        }
      }
    }
  }

  std::vector<DotDim> batch;
  for (const DotDim& d : p.batch) {
    if (d.size != 1) batch.push_back(d);
  }
  if (batch.size() > kMaxLoopDims) return absl::UnimplementedError("dot with too many batch dims");

  // Dense images for the operands that need them.
  int64_t scratch = 0;
  auto place = [&](StridedCopy copy, int64_t* offset) {
    copy.scratch_offset = scratch;
    *offset = scratch;
    scratch = Align64(scratch + copy.bytes());
    plan.copy_bytes += copy.bytes();
    plan.copies.push_back(std::move(copy));
  };
  // A dense image of the operand (or result) `sel` whose minor group is
  // whichever of its two groups is already the more minor one in memory.
  auto image = [&](Sel sel, ElementType type, int64_t* data_offset, std::vector<DotDim>& rows,
                   std::vector<DotDim>& cols, int64_t* scratch_offset, bool* in_scratch) {
    const bool cols_minor = MinStride(cols, sel) <= MinStride(rows, sel);
    const bool widen = f32_images && narrow(type);
    StridedCopy copy = MakeImage(sel, widen ? ElementType::kF32 : type, *data_offset,
                                 Pointers(batch), Pointers(cols_minor ? rows : cols),
                                 Pointers(cols_minor ? cols : rows));
    if (widen) copy.widened_from = type;
    place(std::move(copy), scratch_offset);
    *in_scratch = true;
    *data_offset = 0;
  };
  if (!fits.lhs) {
    image(Sel::kLhs, p.lhs_type, &p.lhs_offset, m, k, &plan.lhs_scratch_offset,
          &plan.lhs_in_scratch);
  }
  if (!fits.rhs) {
    image(Sel::kRhs, p.rhs_type, &p.rhs_offset, k, n, &plan.rhs_scratch_offset,
          &plan.rhs_in_scratch);
  }
  if (!fits.out) {
    image(Sel::kOut, p.out_type, &p.out_offset, m, n, &plan.out_scratch_offset,
          &plan.out_in_scratch);
  }
  plan.scratch_bytes = scratch;
  plan.lhs_offset = p.lhs_offset;
  plan.rhs_offset = p.rhs_offset;
  plan.out_offset = p.out_offset;

  // The batch loop.
  std::vector<DotDim> merged = MergeAdjacent(batch, true, true, true);
  for (const DotDim& d : merged) {
    plan.batch_sizes.push_back(d.size);
    plan.lhs_batch_strides.push_back(d.lhs_stride);
    plan.rhs_batch_strides.push_back(d.rhs_stride);
    plan.out_batch_strides.push_back(d.out_stride);
  }

  const Collapsed lm = Collapse(m, Sel::kLhs), lk = Collapse(k, Sel::kLhs);
  const Collapsed rk = Collapse(k, Sel::kRhs), rn = Collapse(n, Sel::kRhs);
  const Collapsed om = Collapse(m, Sel::kOut), on = Collapse(n, Sel::kOut);
  XJIT_CHECK(lm.ok && lk.ok && rk.ok && rn.ok && om.ok && on.ok);
  plan.m = mt;
  plan.n = nt;
  plan.k = kt;
  if (!k_outer.empty()) {
    plan.k = Product(k);
    for (const DotDim& d : MergeAdjacent(k_outer, true, true, false)) {
      plan.k_loop_sizes.push_back(d.size);
      plan.lhs_k_loop_strides.push_back(d.lhs_stride);
      plan.rhs_k_loop_strides.push_back(d.rhs_stride);
    }
  }
  if (mt > 1 && nt > 1) {
    plan.kind = DotPlan::Kind::kGemm;
    const MatrixFit a = FitMatrix(mt, lm.stride, plan.k, lk.stride);
    const MatrixFit b = FitMatrix(plan.k, rk.stride, nt, rn.stride);
    const MatrixFit c = FitMatrix(mt, om.stride, nt, on.stride);
    XJIT_CHECK(a.any() && b.any() && c.any());
    plan.row_major = c.row_ok;
    plan.ldc = c.row_ok ? c.row_ld : c.col_ld;
    if (plan.row_major) {
      plan.trans_a = !a.row_ok;
      plan.lda = a.row_ok ? a.row_ld : a.col_ld;
      plan.trans_b = !b.row_ok;
      plan.ldb = b.row_ok ? b.row_ld : b.col_ld;
    } else {
      plan.trans_a = !a.col_ok;
      plan.lda = a.col_ok ? a.col_ld : a.row_ld;
      plan.trans_b = !b.col_ok;
      plan.ldb = b.col_ok ? b.col_ld : b.row_ld;
    }
  } else if (mt > 1) {
    // y[m] = A[m, k] x[k] with A = lhs.
    plan.kind = DotPlan::Kind::kGemv;
    plan.gemv_lhs_is_matrix = true;
    const MatrixFit a = FitMatrix(mt, lm.stride, kt, lk.stride);
    plan.row_major = a.row_ok;
    plan.trans_a = false;
    plan.m = mt;
    plan.n = kt;
    plan.lda = a.row_ok ? a.row_ld : a.col_ld;
    plan.incx = kt > 1 ? rk.stride : 1;
    plan.incy = om.stride;
  } else if (nt > 1) {
    // y[n] = B[k, n]^T x[k] with B = rhs.
    plan.kind = DotPlan::Kind::kGemv;
    plan.gemv_lhs_is_matrix = false;
    const MatrixFit b = FitMatrix(kt, rk.stride, nt, rn.stride);
    plan.row_major = b.row_ok;
    plan.trans_a = true;
    plan.m = kt;
    plan.n = nt;
    plan.lda = b.row_ok ? b.row_ld : b.col_ld;
    plan.incx = kt > 1 ? lk.stride : 1;
    plan.incy = on.stride;
  } else {
    plan.kind = DotPlan::Kind::kDot;
    plan.incx = kt > 1 ? lk.stride : 1;
    plan.incy = kt > 1 ? rk.stride : 1;
  }
  // A large axpy-form gemv with at least as many rows as columns sums its
  // rows in two halves (DotPlan::axpy_half_rows), the second into scratch.
  if (AxpyGemvRuns(plan) && plan.batch_sizes.empty() &&
      plan.m * plan.n >= kDotSplitLimits.min_gemv_products) {
    const int64_t rows = plan.row_major ? plan.m : plan.n;
    const int64_t cols = plan.row_major ? plan.n : plan.m;
    // Halves of whole 8-row blocks (AxpyGemv's), so that neither half
    // ends in a partial block.
    const int64_t half = rows / 2 / 8 * 8;
    if (rows >= cols && half >= 8) {
      plan.axpy_half_rows = half;
      plan.axpy_scratch_offset = Align64(plan.scratch_bytes);
      plan.scratch_bytes = plan.axpy_scratch_offset + cols * ByteWidth(plan.compute_type);
    }
  }
  return plan;
}

absl::StatusOr<DotPlan> PlanDot(const Shape& lhs, const Shape& rhs, const Shape& result,
                                const DotDimensionNumbers& dnums) {
  XJIT_RETURN_IF_ERROR(CheckPlainLayout(lhs, "dot lhs"));
  XJIT_RETURN_IF_ERROR(CheckPlainLayout(rhs, "dot rhs"));
  XJIT_RETURN_IF_ERROR(CheckPlainLayout(result, "dot result"));
  const int64_t lr = lhs.rank(), rr = rhs.rank();
  if (dnums.lhs_batch_dimensions.size() != dnums.rhs_batch_dimensions.size() ||
      dnums.lhs_contracting_dimensions.size() != dnums.rhs_contracting_dimensions.size()) {
    return absl::InvalidArgumentError("dot: mismatched dimension numbers");
  }
  std::vector<int> lhs_use(lr, 0), rhs_use(rr, 0);
  auto mark = [](std::vector<int>& use, const std::vector<int64_t>& dims) {
    for (int64_t d : dims) {
      if (d < 0 || d >= static_cast<int64_t>(use.size()) || use[d]++ != 0) return false;
    }
    return true;
  };
  if (!mark(lhs_use, dnums.lhs_batch_dimensions) ||
      !mark(lhs_use, dnums.lhs_contracting_dimensions) ||
      !mark(rhs_use, dnums.rhs_batch_dimensions) ||
      !mark(rhs_use, dnums.rhs_contracting_dimensions)) {
    return absl::InvalidArgumentError("dot: dimension numbers out of range or repeated");
  }
  const std::vector<int64_t> ls = internal::ElementStrides(lhs);
  const std::vector<int64_t> rs = internal::ElementStrides(rhs);
  const std::vector<int64_t> os = internal::ElementStrides(result);
  DotProblem p;
  p.lhs_type = lhs.element_type();
  p.rhs_type = rhs.element_type();
  p.out_type = result.element_type();
  std::vector<int64_t> out_dims;
  for (size_t i = 0; i < dnums.lhs_batch_dimensions.size(); ++i) {
    const int64_t l = dnums.lhs_batch_dimensions[i], r = dnums.rhs_batch_dimensions[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return absl::InvalidArgumentError("dot: batch dimension sizes differ");
    }
    p.batch.push_back({lhs.dimensions(l), ls[l], rs[r], 0});
    out_dims.push_back(lhs.dimensions(l));
  }
  for (int64_t d = 0; d < lr; ++d) {
    if (lhs_use[d] == 0) {
      p.m.push_back({lhs.dimensions(d), ls[d], 0, 0});
      out_dims.push_back(lhs.dimensions(d));
    }
  }
  for (int64_t d = 0; d < rr; ++d) {
    if (rhs_use[d] == 0) {
      p.n.push_back({rhs.dimensions(d), 0, rs[d], 0});
      out_dims.push_back(rhs.dimensions(d));
    }
  }
  for (size_t i = 0; i < dnums.lhs_contracting_dimensions.size(); ++i) {
    const int64_t l = dnums.lhs_contracting_dimensions[i], r = dnums.rhs_contracting_dimensions[i];
    if (lhs.dimensions(l) != rhs.dimensions(r)) {
      return absl::InvalidArgumentError("dot: contracting dimension sizes differ");
    }
    p.k.push_back({lhs.dimensions(l), ls[l], rs[r], 0});
  }
  if (std::vector<int64_t>(result.dimensions().begin(), result.dimensions().end()) != out_dims) {
    return absl::InvalidArgumentError(absl::StrCat("dot: result shape ", result.ToString(),
                                                   " does not match [",
                                                   absl::StrJoin(out_dims, ","), "]"));
  }
  int64_t pos = 0;
  for (DotDim& d : p.batch) d.out_stride = os[pos++];
  for (DotDim& d : p.m) d.out_stride = os[pos++];
  for (DotDim& d : p.n) d.out_stride = os[pos++];
  p.allow_k_loop = true;
  return PlanDotProblem(p);
}

absl::StatusOr<DotPlan> PlanDot(const Instruction& dot) {
  if (dot.opcode() != Opcode::kDot || dot.operand_count() != 2) {
    return absl::InvalidArgumentError("PlanDot needs a dot instruction with two operands");
  }
  return PlanDot(dot.operand(0)->shape(), dot.operand(1)->shape(), dot.shape(),
                 dot.attrs().dot_dimension_numbers);
}

void RunDot(const DotPlan& plan, const void* lhs, const void* rhs, void* out, void* scratch,
            int threads) {
  if (plan.kind == DotPlan::Kind::kNothing) return;
  if (plan.kind == DotPlan::Kind::kLoop) {
    RunLoop(plan.loop, lhs, rhs, out);
    return;
  }
  auto* s = static_cast<uint8_t*>(scratch);
  // The copies before (operands) or after (result) the BLAS calls, each
  // split over the threads when it has enough elements to pay for waking
  // them (about 10 us); part k of every copy runs on thread k.
  auto run_copies = [&](bool operands) {
    constexpr int64_t kElementsPerThread = 32768;
    int parts = 1;
    for (const StridedCopy& c : plan.copies) {
      if ((c.operand != StridedCopy::Operand::kOut) != operands) continue;
      const int64_t elements = c.bytes() / std::max<int64_t>(c.element_bytes, 1);
      parts = std::max<int64_t>(parts, std::min<int64_t>(threads, elements / kElementsPerThread));
    }
    auto run_part = [&](int64_t part) {
      for (const StridedCopy& c : plan.copies) {
        switch (c.operand) {
          case StridedCopy::Operand::kLhs:
            if (operands) internal::RunStridedCopy(c, lhs, nullptr, s, true, part, parts);
            break;
          case StridedCopy::Operand::kRhs:
            if (operands) internal::RunStridedCopy(c, rhs, nullptr, s, true, part, parts);
            break;
          case StridedCopy::Operand::kOut:
            if (!operands) internal::RunStridedCopy(c, nullptr, out, s, false, part, parts);
            break;
        }
      }
    };
    if (parts <= 1) {
      run_part(0);
    } else {
      ThreadPool::Shared().ParallelFor(parts, parts - 1, run_part);
    }
  };
  run_copies(true);
  const auto* a = plan.lhs_in_scratch ? s + plan.lhs_scratch_offset
                                      : static_cast<const uint8_t*>(lhs);
  const auto* b = plan.rhs_in_scratch ? s + plan.rhs_scratch_offset
                                      : static_cast<const uint8_t*>(rhs);
  auto* c = plan.out_in_scratch ? s + plan.out_scratch_offset : static_cast<uint8_t*>(out);
  // Every buffer the calls read or write is of the compute type (bf16 and
  // f16 operands and results are in f32 images).
  const ElementType t = plan.compute_type;
  const int64_t w = ByteWidth(t);
  if (plan.axpy_half_rows > 0) {
    const uint8_t* matrix = plan.gemv_lhs_is_matrix ? a + plan.lhs_offset * w
                                                    : b + plan.rhs_offset * w;
    const uint8_t* x = plan.gemv_lhs_is_matrix ? b + plan.rhs_offset * w
                                               : a + plan.lhs_offset * w;
    uint8_t* y = c + plan.out_offset * w;
    if (t == ElementType::kF32) {
      RunAxpyGemvInHalves<float>(plan, matrix, x, y, s, threads);
    } else {
      RunAxpyGemvInHalves<double>(plan, matrix, x, y, s, threads);
    }
    run_copies(false);
    return;
  }
  const int nd = static_cast<int>(plan.batch_sizes.size());
  // One BLAS call at these element offsets (a band: rows_m x cols_n of C).
  auto call = [&](int64_t lo, int64_t ro, int64_t oo, int64_t rows_m, int64_t cols_n) {
    const uint8_t* ap = a + lo * w;
    const uint8_t* bp = b + ro * w;
    uint8_t* cp = c + oo * w;
    switch (plan.kind) {
      case DotPlan::Kind::kGemm:
        if (plan.k_loop_sizes.empty()) {
          Gemm(t, plan, rows_m, cols_n, ap, bp, cp, /*accumulate=*/false);
        } else {
          bool accumulate = false;
          const int64_t unused[kMaxLoopDims] = {};
          internal::ForEachOffset(
              static_cast<int>(plan.k_loop_sizes.size()), plan.k_loop_sizes.data(),
              plan.lhs_k_loop_strides.data(), plan.rhs_k_loop_strides.data(), unused, 0, 0, 0,
              [&](int64_t lk, int64_t rk, int64_t) {
                Gemm(t, plan, rows_m, cols_n, ap + lk * w, bp + rk * w, cp, accumulate);
                accumulate = true;
              });
        }
        break;
      case DotPlan::Kind::kGemv: {
        // A band (RunDot's kRows split) passes its output length as rows_m.
        const bool band = rows_m != plan.m || cols_n != plan.n;
        if (plan.gemv_lhs_is_matrix) {
          Gemv(t, plan, rows_m, cols_n, band, ap, bp, cp);
        } else {
          Gemv(t, plan, rows_m, cols_n, band, bp, ap, cp);
        }
        break;
      }
      case DotPlan::Kind::kDot: Dot(t, plan, ap, bp, cp); break;
      default: break;
    }
  };
  // A GEMM's bands run on one thread too (PlanDotThreads: the same calls).
  if (plan.split == DotPlan::Split::kNone ||
      (plan.threads <= 1 && plan.kind != DotPlan::Kind::kGemm)) {
    internal::ForEachOffset(
        nd, plan.batch_sizes.data(), plan.lhs_batch_strides.data(), plan.rhs_batch_strides.data(),
        plan.out_batch_strides.data(), plan.lhs_offset, plan.rhs_offset, plan.out_offset,
        [&](int64_t lo, int64_t ro, int64_t oo) { call(lo, ro, oo, plan.m, plan.n); });
  } else {
    int64_t batch = 1;
    for (int64_t size : plan.batch_sizes) batch *= size;
    const int64_t bands = plan.split == DotPlan::Split::kBatch ? 1 : plan.bands;
    // Item i: batch index i / bands (its offsets from the index's digits,
    // innermost dimension first), band i % bands.
    ThreadPool::Shared().ParallelFor(batch * bands, plan.threads - 1, [&](int64_t item) {
      int64_t index = item / bands;
      int64_t lo = plan.lhs_offset, ro = plan.rhs_offset, oo = plan.out_offset;
      for (int d = nd - 1; d >= 0; --d) {
        const int64_t digit = index % plan.batch_sizes[d];
        index /= plan.batch_sizes[d];
        lo += digit * plan.lhs_batch_strides[d];
        ro += digit * plan.rhs_batch_strides[d];
        oo += digit * plan.out_batch_strides[d];
      }
      if (plan.split == DotPlan::Split::kBatch) {
        call(lo, ro, oo, plan.m, plan.n);
        return;
      }
      const int64_t band = item % bands;
      if (plan.kind == DotPlan::Kind::kGemv) {
        // Output elements [first, last): rows of A, or its columns when
        // transposed; A(i, j) is at i * lda + j row-major, i + j * lda
        // column-major.
        const int64_t size = plan.trans_a ? plan.n : plan.m;
        const int64_t first = BandStart(size, band, bands);
        const int64_t last = BandStart(size, band + 1, bands);
        const int64_t step = plan.row_major != plan.trans_a ? plan.lda : 1;
        int64_t& matrix = plan.gemv_lhs_is_matrix ? lo : ro;
        matrix += first * step;
        oo += first * plan.incy;
        call(lo, ro, oo, plan.trans_a ? plan.m : last - first,
             plan.trans_a ? last - first : plan.n);
        return;
      }
      const bool rows = plan.split == DotPlan::Split::kRows;
      const int64_t size = rows ? plan.m : plan.n;
      const int64_t first = BandStart(size, band, bands), last = BandStart(size, band + 1, bands);
      if (rows) {
        // Row i of op(A) starts lda elements after row i - 1 when A is
        // row-major and not transposed, or column-major and transposed; one
        // element after otherwise. Likewise C (never transposed).
        call(lo + first * (plan.row_major != plan.trans_a ? plan.lda : 1), ro,
             oo + first * (plan.row_major ? plan.ldc : 1), last - first, plan.n);
      } else {
        // Column j of op(B) starts one element after column j - 1 when B is
        // row-major and not transposed, or column-major and transposed; ldb
        // elements after otherwise. Likewise C.
        call(lo, ro + first * (plan.row_major != plan.trans_b ? 1 : plan.ldb),
             oo + first * (plan.row_major ? 1 : plan.ldc), plan.m, last - first);
      }
    });
  }
  run_copies(false);
}

}  // namespace xjit::runtime::blas
