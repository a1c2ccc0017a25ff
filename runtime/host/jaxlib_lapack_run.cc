// Running jaxlib's LAPACK custom calls (see jaxlib_lapack.h): LAPACK's
// workspace queries at plan time, and per batch element a gather of the
// operands into packed column-major copies, the routine, and a scatter of
// the results.
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "runtime/host/jaxlib_lapack.h"
#include "runtime/host/jaxlib_lapack_internal.h"
#include "runtime/host/lapack_typed_internal.h"
#include "runtime/host/small_lapack_internal.h"

namespace xjit::runtime::host {
namespace {

static_assert(sizeof(blasint) == sizeof(int32_t),
              "jaxlib's ipiv, jpvt and info are s32: LAPACK with 32-bit integers");

using C64 = std::complex<float>;
using C128 = std::complex<double>;

blasint Ld(int64_t rows) { return static_cast<blasint>(std::max<int64_t>(1, rows)); }

// An element of `width` bytes, for copies of any type.
template <int width>
struct Bytes {
  uint8_t b[width];
};

// Copies a rows x cols item between a strided place and a packed
// column-major copy (`to_packed`: strided -> packed).
template <int width>
void CopyItem(const LapackArray& a, uint8_t* strided, uint8_t* packed, bool to_packed) {
  using E = Bytes<width>;
  E* s = reinterpret_cast<E*>(strided);
  E* p = reinterpret_cast<E*>(packed);
  for (int64_t j = 0; j < a.cols; ++j) {
    if (a.row_stride == 1) {
      if (to_packed) {
        std::memcpy(p + j * a.rows, s + j * a.col_stride, a.rows * width);
      } else {
        std::memcpy(s + j * a.col_stride, p + j * a.rows, a.rows * width);
      }
      continue;
    }
    for (int64_t i = 0; i < a.rows; ++i) {
      E* place = s + i * a.row_stride + j * a.col_stride;
      if (to_packed) {
        p[j * a.rows + i] = *place;
      } else {
        *place = p[j * a.rows + i];
      }
    }
  }
}

// Whether an item's elements lie as its packed column-major copy would: then
// the routine can work on the item where it lies.
bool IsPacked(const LapackArray& a) {
  return (a.rows <= 1 || a.row_stride == 1) && (a.cols <= 1 || a.col_stride == a.rows);
}

// The bytes from an item's first element to its last element's end.
int64_t ItemSpan(const LapackArray& a) {
  if (a.rows == 0 || a.cols == 0) return 0;
  return ((a.rows - 1) * a.row_stride + (a.cols - 1) * a.col_stride + 1) * ByteWidth(a.type);
}

bool Overlap(const uint8_t* x, int64_t x_bytes, const uint8_t* y, int64_t y_bytes) {
  return x < y + y_bytes && y < x + x_bytes;
}

// Copies the item of `a` at `strided` (elements of `width` bytes) to or from
// its packed copy at `packed`.
void Copy(const LapackArray& a, uint8_t* strided, int64_t width, uint8_t* packed,
          bool to_packed) {
  if (IsPacked(a)) {
    // One move, none where the two are the same place (a result factored
    // in its operand's buffer).
    if (packed == strided) return;
    const size_t bytes = static_cast<size_t>(a.Elements() * width);
    if (to_packed) {
      std::memmove(packed, strided, bytes);
    } else {
      std::memmove(strided, packed, bytes);
    }
    return;
  }
  switch (width) {
    case 4: return CopyItem<4>(a, strided, packed, to_packed);
    case 8: return CopyItem<8>(a, strided, packed, to_packed);
    default: return CopyItem<16>(a, strided, packed, to_packed);
  }
}

template <typename T>
bool AllFinite(const T* data, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(std::real(data[i])) || !std::isfinite(std::imag(data[i]))) return false;
  }
  return true;
}

// geev's real eigenvectors to complex ones: a pair (wi > 0) is stored as
// its real and imaginary columns j, j + 1 (jaxlib's UnpackEigenvectors).
template <typename R>
void UnpackEigenvectors(int64_t n, const R* wi, const R* packed, std::complex<R>* out) {
  for (int64_t j = 0; j < n;) {
    if (wi[j] == 0 || std::isnan(wi[j]) || j + 1 == n) {
      for (int64_t i = 0; i < n; ++i) out[j * n + i] = {packed[j * n + i], 0};
      ++j;
    } else {
      for (int64_t i = 0; i < n; ++i) {
        const R re = packed[j * n + i], im = packed[(j + 1) * n + i];
        out[j * n + i] = {re, im};
        out[(j + 1) * n + i] = {re, -im};
      }
      j += 2;
    }
  }
}

// One batch element's routine over its packed operands `ins` and results
// `outs` (packed copies in `s`, or the items where they lie), workspaces in
// `s`.
template <typename T>
void RunItem(const JaxlibLapackPlan& p, uint8_t* s, void* const* ins, void* const* outs) {
  using L = Lapack<T>;
  using R = typename L::Real;
  auto in = [&](int i) { return static_cast<T*>(ins[i]); };
  auto out = [&](int j) { return static_cast<T*>(outs[j]); };
  auto out_real = [&](int j) { return static_cast<R*>(outs[j]); };
  auto out_int = [&](int j) { return static_cast<blasint*>(outs[j]); };
  T* work = reinterpret_cast<T*>(s + p.work_offset);
  R* rwork = reinterpret_cast<R*>(s + p.rwork_offset);
  blasint* iwork = reinterpret_cast<blasint*>(s + p.iwork_offset);
  const blasint lwork = static_cast<blasint>(p.lwork);
  const LapackArray& r0 = p.results[0];
  const blasint m = static_cast<blasint>(r0.rows), n = static_cast<blasint>(r0.cols);
  blasint info = 0;
  switch (p.routine) {
    case LapackRoutine::kTrsm:
      if (m > 0 && n > 0 && m <= kSmallLapackOrder && n <= kSmallLapackOrder) {
        SmallTrsm(p.side, p.uplo, p.trans, p.diag, m, n, in(0), Ld(p.operands[0].rows), out(0),
                  Ld(m));
      } else if (m > 0 && n > 0) {
        L::Trsm(p.side, p.uplo, p.trans, p.diag, m, n, in(0), Ld(p.operands[0].rows), out(0),
                Ld(m));
      }
      return;
    case LapackRoutine::kGetrf:
      if (m > 0 && n > 0 && m <= kSmallLapackOrder && n <= kSmallLapackOrder) {
        info = SmallGetrf(m, n, out(0), Ld(m), out_int(1));
      } else if (m > 0 && n > 0) {
        L::Getrf(m, n, out(0), Ld(m), out_int(1), &info);
      }
      *out_int(2) = info;
      return;
    case LapackRoutine::kGeqrf:
      if (m > 0 && n > 0) L::Geqrf(m, n, out(0), Ld(m), out(1), work, lwork, &info);
      return;
    case LapackRoutine::kGeqp3:
      if (m > 0 && n > 0) {
        L::Geqp3(m, n, out(0), Ld(m), out_int(1), out(2), work, lwork, rwork, &info);
      }
      return;
    case LapackRoutine::kOrgqr:
      if (m > 0 && n > 0) {
        L::Orgqr(m, n, static_cast<blasint>(p.operands[1].rows), out(0), Ld(m), in(1), work,
                 lwork, &info);
      }
      return;
    case LapackRoutine::kOrmqr:
      if (m > 0 && n > 0) {
        L::Ormqr(p.side, p.trans, m, n, static_cast<blasint>(p.operands[0].cols), in(0),
                 Ld(p.operands[0].rows), in(1), out(0), Ld(m), work, lwork, &info);
      }
      return;
    case LapackRoutine::kPotrf:
      if (n > 0) L::Potrf(p.uplo, n, out(0), Ld(n), &info);
      *out_int(1) = info;
      return;
    case LapackRoutine::kSyevd:
      if (n > 0) {
        L::Syevd(p.mode, p.uplo, n, out(0), Ld(n), out_real(1), work, lwork, rwork,
                 static_cast<blasint>(p.lrwork), iwork, static_cast<blasint>(p.liwork), &info);
      }
      *out_int(2) = info;
      return;
    case LapackRoutine::kGesdd:
    case LapackRoutine::kGesvd: {
      // A matrix holding an Inf sends LAPACK 3.9's bidiagonal QR (sbdsqr,
      // OpenBLAS 0.3.21's) into a loop that never ends; jaxlib does the
      // same (XLA:CPU hangs on jnp.linalg.svd of one). LAPACK 3.10's gesdd
      // answers a NaN with info = -4 (argument 4, the matrix, is bad): that
      // answer for any element that is not finite, without calling LAPACK.
      // jnp.linalg.svd then returns NaNs.
      if (!AllFinite(out(0), static_cast<int64_t>(m) * n)) {
        *out_int(4) = -4;
        return;
      }
      const blasint ldvt = Ld(p.results[3].rows);
      if (p.routine == LapackRoutine::kGesdd) {
        L::Gesdd(p.mode, m, n, out(0), Ld(m), out_real(1), out(2), Ld(m), out(3), ldvt, work,
                 lwork, rwork, iwork, &info);
      } else {
        L::Gesvd(p.mode, m, n, out(0), Ld(m), out_real(1), out(2), Ld(m), out(3), ldvt, work,
                 lwork, rwork, &info);
      }
      *out_int(4) = info;
      return;
    }
    case LapackRoutine::kGeev: {
      const int64_t size = static_cast<int64_t>(p.operands[0].rows);
      const blasint order = static_cast<blasint>(size);
      const int vl = L::kComplex ? 1 : 2;  // The results' indices.
      const int info_index = vl + 2;
      if (!AllFinite(in(0), size * size)) {
        *out_int(info_index) = -4;  // jaxlib's answer, without calling LAPACK.
        return;
      }
      if constexpr (L::kComplex) {
        L::Geev(p.jobvl, p.jobvr, order, in(0), Ld(size), out(0), nullptr, out(1), Ld(size),
                out(2), Ld(size), work, lwork, rwork, &info);
      } else {
        R* vl_real = reinterpret_cast<R*>(s + p.extra_offset);
        R* vr_real = vl_real + size * size;
        L::Geev(p.jobvl, p.jobvr, order, in(0), Ld(size), out(0), out(1), vl_real, Ld(size),
                vr_real, Ld(size), work, lwork, rwork, &info);
        using Complex = std::complex<R>;
        if (info == 0 && p.jobvl == 'V') {
          UnpackEigenvectors(size, out(1), vl_real, reinterpret_cast<Complex*>(out(2)));
        }
        if (info == 0 && p.jobvr == 'V') {
          UnpackEigenvectors(size, out(1), vr_real, reinterpret_cast<Complex*>(out(3)));
        }
      }
      if (info != 0) {  // Eigenvectors are not defined: zero.
        for (int j = vl; j < vl + 2; ++j) {
          std::memset(static_cast<void*>(out(j)), 0,
                      p.results[j].Elements() * ByteWidth(p.results[j].type));
        }
      }
      *out_int(info_index) = info;
      return;
    }
    case LapackRoutine::kGees: {
      const int sdim = L::kComplex ? 3 : 4;
      blasint selected = 0;
      if (n > 0) {
        L::Gees(p.mode, n, out(0), Ld(n), &selected, out(2), L::kComplex ? nullptr : out(3),
                out(1), Ld(n), work, lwork, rwork, iwork, &info);
      }
      *out_int(sdim) = selected;
      *out_int(sdim + 1) = info;
      return;
    }
    case LapackRoutine::kGehrd:
      L::Gehrd(n, static_cast<blasint>(p.ilo), static_cast<blasint>(p.ihi), out(0), Ld(n),
               out(1), work, lwork, &info);
      *out_int(2) = info;
      return;
    case LapackRoutine::kSytrd:
      L::Sytrd(p.uplo, n, out(0), Ld(n), out_real(1), out_real(2), out(3), work, lwork, &info);
      *out_int(4) = info;
      return;
    case LapackRoutine::kGtsv: {
      const blasint rows = static_cast<blasint>(p.results[3].rows);
      const blasint rhs = static_cast<blasint>(p.results[3].cols);
      if (rows > 0) L::Gtsv(rows, rhs, out(0) + 1, out(1), out(2), out(3), Ld(rows), &info);
      *out_int(4) = info;
      return;
    }
  }
}

// Per batch element: each result's packed copy starts as its operand (or
// zeros), the other operands are gathered, the routine runs, the results
// are scattered. An array whose items are already packed (jaxlib asks for
// column-major ones, so most are) is used where it lies instead: a result is
// factored in its own buffer, an operand read from its own, unless the item
// overlaps another array's item of the same batch element (then its copy
// keeps the old order of reads and writes).
template <typename T>
void Run(const JaxlibLapackPlan& plan, const void* const* operands, void* const* results,
         uint8_t* scratch) {
  // PlanJaxlibLapack refuses more arrays than kMaxLapackArrays.
  constexpr size_t kMost = kMaxLapackArrays;
  const size_t operand_count = plan.operands.size(), result_count = plan.results.size();
  // geev overwrites its matrix and ormqr its reflectors (restored on exit):
  // their operands are read from copies, never where they lie.
  const bool read_in_place =
      plan.routine != LapackRoutine::kGeev && plan.routine != LapackRoutine::kOrmqr;
  // Which operands a result starts from (gathered with it).
  bool aliased[kMost] = {};
  for (int from : plan.from_operand) {
    if (from >= 0) aliased[from] = true;
  }
  bool result_packed[kMost], operand_packed[kMost];
  int64_t result_width[kMost], operand_width[kMost];
  int64_t result_span[kMost], operand_span[kMost];
  for (size_t j = 0; j < result_count; ++j) {
    result_packed[j] = IsPacked(plan.results[j]);
    result_width[j] = ByteWidth(plan.results[j].type);
    result_span[j] = ItemSpan(plan.results[j]);
  }
  for (size_t i = 0; i < operand_count; ++i) {
    operand_packed[i] = IsPacked(plan.operands[i]);
    operand_width[i] = ByteWidth(plan.operands[i].type);
    operand_span[i] = ItemSpan(plan.operands[i]);
  }
  void* ins[kMost];
  void* outs[kMost];
  bool direct[kMost];
  uint8_t* result_at[kMost];
  uint8_t* operand_at[kMost];
  for (int64_t b = 0; b < plan.batch; ++b) {
    for (size_t j = 0; j < result_count; ++j) {
      result_at[j] =
          static_cast<uint8_t*>(results[j]) + plan.results[j].offsets[b] * result_width[j];
    }
    for (size_t i = 0; i < operand_count; ++i) {
      operand_at[i] = static_cast<uint8_t*>(const_cast<void*>(operands[i])) +
                      plan.operands[i].offsets[b] * operand_width[i];
    }
    // Where each result is worked on: in place when packed and clear of
    // every other array's item (its own operand may be the same place).
    for (size_t j = 0; j < result_count; ++j) {
      direct[j] = result_packed[j];
      for (size_t i = 0; i < operand_count && direct[j]; ++i) {
        const bool same = plan.from_operand[j] == static_cast<int>(i) &&
                          operand_at[i] == result_at[j] && operand_packed[i];
        if (!same && Overlap(operand_at[i], operand_span[i], result_at[j], result_span[j])) {
          direct[j] = false;
        }
      }
      for (size_t k = 0; k < result_count && direct[j]; ++k) {
        if (k != j && Overlap(result_at[k], result_span[k], result_at[j], result_span[j])) {
          direct[j] = false;
        }
      }
      outs[j] = direct[j] ? static_cast<void*>(result_at[j])
                          : static_cast<void*>(scratch + plan.results[j].packed_offset);
      const int from = plan.from_operand[j];
      if (from >= 0) {
        Copy(plan.operands[from], operand_at[from], operand_width[from],
             static_cast<uint8_t*>(outs[j]), /*to_packed=*/true);
        ins[from] = outs[j];
      } else {
        std::memset(outs[j], 0, plan.results[j].Elements() * result_width[j]);
      }
    }
    for (size_t i = 0; i < operand_count; ++i) {
      if (aliased[i]) continue;
      bool clear = read_in_place && operand_packed[i];
      for (size_t j = 0; j < result_count && clear; ++j) {
        if (Overlap(operand_at[i], operand_span[i], result_at[j], result_span[j])) clear = false;
      }
      if (clear) {
        ins[i] = operand_at[i];
      } else {
        ins[i] = scratch + plan.operands[i].packed_offset;
        Copy(plan.operands[i], operand_at[i], operand_width[i], static_cast<uint8_t*>(ins[i]),
             /*to_packed=*/true);
      }
    }
    RunItem<T>(plan, scratch, ins, outs);
    for (size_t j = 0; j < result_count; ++j) {
      if (!direct[j]) {
        Copy(plan.results[j], result_at[j], result_width[j], static_cast<uint8_t*>(outs[j]),
             /*to_packed=*/false);
      }
    }
  }
}

// The optimal size LAPACK's query wrote, at least `minimum`.
template <typename T>
int64_t Size(T written, int64_t minimum) {
  return std::max<int64_t>(minimum, static_cast<int64_t>(std::ceil(std::real(written))));
}

template <typename T>
absl::Status Query(JaxlibLapackPlan* p) {
  using L = Lapack<T>;
  using R = typename L::Real;
  const LapackArray& a = p->operands[0];
  const blasint m = static_cast<blasint>(a.rows), n = static_cast<blasint>(a.cols);
  const int64_t mn = std::min<int64_t>(m, n), mx = std::max<int64_t>(m, n);
  T w{};
  R rw{};
  R rdummy[8] = {};  // Some queries write rwork(1) (ctrevc3 through cgeev).
  blasint iw = 0, info = 0;
  p->lwork = p->lrwork = p->liwork = 1;
  if (m == 0 || n == 0) return absl::OkStatus();
  switch (p->routine) {
    case LapackRoutine::kTrsm:
    case LapackRoutine::kGetrf:
    case LapackRoutine::kPotrf:
    case LapackRoutine::kGtsv:
      return absl::OkStatus();
    case LapackRoutine::kGeqrf:
      L::Geqrf(m, n, nullptr, Ld(m), nullptr, &w, -1, &info);
      p->lwork = Size(w, n);
      break;
    case LapackRoutine::kGeqp3:
      L::Geqp3(m, n, nullptr, Ld(m), nullptr, nullptr, &w, -1, rdummy, &info);
      p->lwork = Size(w, 3 * n + 1);
      p->lrwork = 2 * n;
      break;
    case LapackRoutine::kOrgqr:
      L::Orgqr(m, n, static_cast<blasint>(p->operands[1].rows), nullptr, Ld(m), nullptr, &w, -1,
               &info);
      p->lwork = Size(w, n);
      break;
    case LapackRoutine::kOrmqr: {
      const LapackArray& c = p->operands[2];
      const blasint cm = static_cast<blasint>(c.rows), cn = static_cast<blasint>(c.cols);
      if (cm == 0 || cn == 0) return absl::OkStatus();
      L::Ormqr(p->side, p->trans, cm, cn, n, nullptr, Ld(m), nullptr, nullptr, Ld(cm), &w, -1,
               &info);
      p->lwork = Size(w, p->side == 'L' ? cn : cm);
      break;
    }
    case LapackRoutine::kSyevd:
      L::Syevd(p->mode, p->uplo, n, nullptr, Ld(n), nullptr, &w, -1, &rw, -1, &iw, -1, &info);
      p->lwork = Size(w, 1);
      p->lrwork = Size(rw, 1);
      p->liwork = std::max<int64_t>(1, iw);
      break;
    case LapackRoutine::kGesdd:
      L::Gesdd(p->mode, m, n, nullptr, Ld(m), nullptr, nullptr, Ld(m), nullptr,
               Ld(p->results[3].rows), &w, -1, rdummy, &iw, &info);
      p->lwork = Size(w, 1);
      p->liwork = 8 * mn;
      if (L::kComplex) {
        p->lrwork = p->mode == 'N' ? 7 * mn
                                   : std::max(5 * mn * mn + 5 * mn, 2 * mx * mn + 2 * mn * mn + mn);
      }
      break;
    case LapackRoutine::kGesvd:
      L::Gesvd(p->mode, m, n, nullptr, Ld(m), nullptr, nullptr, Ld(m), nullptr,
               Ld(p->results[3].rows), &w, -1, rdummy, &info);
      p->lwork = Size(w, 1);
      p->lrwork = 5 * mn;
      break;
    case LapackRoutine::kGeev:
      L::Geev(p->jobvl, p->jobvr, n, nullptr, Ld(n), nullptr, nullptr, nullptr, Ld(n), nullptr,
              Ld(n), &w, -1, rdummy, &info);
      p->lwork = Size(w, 4 * n);
      p->lrwork = 2 * n;
      break;
    case LapackRoutine::kGees:
      L::Gees(p->mode, n, nullptr, Ld(n), &iw, nullptr, nullptr, nullptr, Ld(n), &w, -1,
              rdummy, nullptr, &info);
      p->lwork = Size(w, 3 * n);
      p->lrwork = n;
      p->liwork = n;
      break;
    case LapackRoutine::kGehrd:
      L::Gehrd(n, static_cast<blasint>(p->ilo), static_cast<blasint>(p->ihi), nullptr, Ld(n),
               nullptr, &w, -1, &info);
      p->lwork = Size(w, n);
      break;
    case LapackRoutine::kSytrd:
      L::Sytrd(p->uplo, n, nullptr, Ld(n), nullptr, nullptr, nullptr, &w, -1, &info);
      p->lwork = Size(w, 1);
      break;
  }
  if (info != 0) {
    return absl::InternalError(
        absl::StrCat("custom-call \"", p->target, "\": LAPACK's workspace query gave info ", info));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status SizeLapackWorkspaces(JaxlibLapackPlan* plan) {
  switch (plan->type) {
    case ElementType::kF32: return Query<float>(plan);
    case ElementType::kF64: return Query<double>(plan);
    case ElementType::kC64: return Query<C64>(plan);
    default: return Query<C128>(plan);
  }
}

bool RunsOnOpenBlas(const JaxlibLapackPlan& plan) {
  const LapackArray& r0 = plan.results[0];
  switch (plan.routine) {
    case LapackRoutine::kTrsm:
    case LapackRoutine::kGetrf:
      return r0.rows > kSmallLapackOrder || r0.cols > kSmallLapackOrder;
    default:
      return true;
  }
}

void RunJaxlibLapack(const JaxlibLapackPlan& plan, const void* const* operands,
                     void* const* results, void* scratch) {
  uint8_t* bytes = static_cast<uint8_t*>(scratch);
  switch (plan.type) {
    case ElementType::kF32: return Run<float>(plan, operands, results, bytes);
    case ElementType::kF64: return Run<double>(plan, operands, results, bytes);
    case ElementType::kC64: return Run<C64>(plan, operands, results, bytes);
    default: return Run<C128>(plan, operands, results, bytes);
  }
}

}  // namespace xjit::runtime::host
