// One-dimensional complex and real transforms (see transform.h).
#include "runtime/fft/transform.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xjit::runtime::fft {
namespace {

// The convolution length of Bluestein's algorithm for n: a smooth m >=
// 2n - 1, a power of two unless a smooth length is much shorter (the
// radix-4 passes are the fastest per point).
int64_t BluesteinLength(int64_t n) {
  const int64_t need = 2 * n - 1;
  int64_t power = 1;
  while (power < need) power *= 2;
  int64_t smooth = need;
  while (!IsSmooth(smooth)) ++smooth;
  return 4 * power <= 5 * smooth ? power : smooth;
}

std::string Radices(const StockhamPlan<float>& plan) {
  std::vector<int> radices;
  for (const StockhamStage& stage : plan.stages) radices.push_back(stage.radix);
  return absl::StrJoin(radices, "x");
}
std::string Radices(const StockhamPlan<double>& plan) {
  std::vector<int> radices;
  for (const StockhamStage& stage : plan.stages) radices.push_back(stage.radix);
  return absl::StrJoin(radices, "x");
}

template <typename T>
inline void MulComplex(const T* a, const T* b, T* out) {
  const T re = a[0] * b[0] - a[1] * b[1];
  const T im = a[0] * b[1] + a[1] * b[0];
  out[0] = re;
  out[1] = im;
}

// Bluestein's algorithm on one transform at unit stride.
template <typename T>
void RunBluestein(const ComplexPlan<T>& plan, const T* in, T* out, T* scratch) {
  const int64_t n = plan.n, m = plan.m;
  T* a = scratch;
  T* b = a + 2 * m;
  T* s = b + 2 * m;
  const T* chirp = plan.chirp.data();
  for (int64_t j = 0; j < n; ++j) MulComplex(in + 2 * j, chirp + 2 * j, a + 2 * j);
  std::memset(a + 2 * n, 0, sizeof(T) * 2 * (m - n));
  RunStockham(plan.m_forward, a, b, 1, s);
  const T* kernel = plan.kernel.data();
  for (int64_t j = 0; j < m; ++j) MulComplex(b + 2 * j, kernel + 2 * j, b + 2 * j);
  RunStockham(plan.m_inverse, b, a, 1, s);
  for (int64_t k = 0; k < n; ++k) MulComplex(a + 2 * k, chirp + 2 * k, out + 2 * k);
}

}  // namespace

template <typename T>
int64_t ComplexPlan<T>::ScratchSize(int64_t inner) const {
  if (!bluestein) return n * inner;
  return 2 * n + 3 * m;
}

template <typename T>
std::string ComplexPlan<T>::ToString() const {
  if (!bluestein) return absl::StrCat(n, "=", n <= 1 ? "1" : Radices(direct));
  return absl::StrCat(n, "=bluestein(", m, "=", Radices(m_forward), ")");
}

template <typename T>
ComplexPlan<T> MakeComplexPlan(int64_t n, bool forward) {
  ComplexPlan<T> plan;
  plan.n = n;
  plan.forward = forward;
  if (n <= 1 || IsSmooth(n)) {
    plan.direct = MakeStockhamPlan<T>(n, forward);
    return plan;
  }
  plan.bluestein = true;
  const int64_t m = BluesteinLength(n);
  plan.m = m;
  plan.m_forward = MakeStockhamPlan<T>(m, true);
  plan.m_inverse = MakeStockhamPlan<T>(m, false);
  // c_j = exp(-+ pi i j^2 / n) = exp(-+ 2 pi i (j^2 mod 2n) / 2n), exactly
  // reduced in integers.
  std::vector<double> chirp(2 * n);
  for (int64_t j = 0; j < n; ++j) {
    const int64_t r = static_cast<int64_t>((static_cast<unsigned __int128>(j) * j) %
                                           static_cast<unsigned __int128>(2 * n));
    UnitRoot(r, 2 * n, forward, &chirp[2 * j], &chirp[2 * j + 1]);
  }
  // The kernel conj(c) wrapped around (index -j at m - j), transformed in
  // double and divided by m (the unscaled inverse transform follows).
  std::vector<double> wrapped(2 * m, 0.0), transformed(2 * m), scratch(2 * m);
  for (int64_t j = 0; j < n; ++j) {
    wrapped[2 * j] = chirp[2 * j];
    wrapped[2 * j + 1] = -chirp[2 * j + 1];
    if (j > 0) {
      wrapped[2 * (m - j)] = chirp[2 * j];
      wrapped[2 * (m - j) + 1] = -chirp[2 * j + 1];
    }
  }
  const StockhamPlan<double> kernel_plan = MakeStockhamPlan<double>(m, true);
  RunStockham(kernel_plan, wrapped.data(), transformed.data(), 1, scratch.data());
  plan.chirp.assign(chirp.begin(), chirp.end());
  plan.kernel.resize(2 * m);
  for (int64_t j = 0; j < 2 * m; ++j) {
    plan.kernel[j] = static_cast<T>(transformed[j] / static_cast<double>(m));
  }
  return plan;
}

template <typename T>
void RunComplex(const ComplexPlan<T>& plan, const T* in, T* out, int64_t inner, T* scratch) {
  if (plan.n == 0 || inner == 0) return;
  if (!plan.bluestein) return RunStockham(plan.direct, in, out, inner, scratch);
  if (inner == 1) return RunBluestein(plan, in, out, scratch);
  // Strided transforms: each gathered to unit stride and scattered back.
  const int64_t n = plan.n;
  T* column = scratch;
  T* result = column + 2 * n;
  T* rest = result + 2 * n;
  // (ScratchSize: 2n for these two, 3m for Bluestein, which needs only 3m.)
  for (int64_t b = 0; b < inner; ++b) {
    for (int64_t j = 0; j < n; ++j) {
      column[2 * j] = in[2 * (j * inner + b)];
      column[2 * j + 1] = in[2 * (j * inner + b) + 1];
    }
    RunBluestein(plan, column, result, rest);
    for (int64_t j = 0; j < n; ++j) {
      out[2 * (j * inner + b)] = result[2 * j];
      out[2 * (j * inner + b) + 1] = result[2 * j + 1];
    }
  }
}

template <typename T>
int64_t RealPlan<T>::ScratchSize() const {
  if (n % 2 == 0) return n / 2 + complex.ScratchSize(1);
  return 2 * n + complex.ScratchSize(1);
}

template <typename T>
std::string RealPlan<T>::ToString() const {
  return absl::StrCat(forward ? "r2c(" : "c2r(", n, n % 2 == 0 ? " via " : " as ",
                      complex.ToString(), ")");
}

template <typename T>
RealPlan<T> MakeRealPlan(int64_t n, bool forward) {
  RealPlan<T> plan;
  plan.n = n;
  plan.forward = forward;
  if (n % 2 == 0 && n > 0) {
    plan.complex = MakeComplexPlan<T>(n / 2, forward);
    for (int64_t k = 0; k <= n / 4; ++k) {
      double re, im;
      UnitRoot(k, n, forward, &re, &im);
      plan.twiddles.push_back(static_cast<T>(re));
      plan.twiddles.push_back(static_cast<T>(im));
    }
  } else {
    plan.complex = MakeComplexPlan<T>(n, forward);
  }
  return plan;
}

template <typename T>
void RunReal(const RealPlan<T>& plan, const T* in, T* out, T* scratch) {
  const int64_t n = plan.n;
  if (n == 0) return;
  const int64_t half = n / 2;
  if (n % 2 == 1) {
    T* y = scratch;
    T* z = y + 2 * n;
    T* rest = z + 2 * n;
    if (plan.forward) {
      for (int64_t j = 0; j < n; ++j) {
        y[2 * j] = in[j];
        y[2 * j + 1] = T(0);
      }
      RunComplex(plan.complex, y, z, 1, rest);
      std::memcpy(out, z, sizeof(T) * 2 * (half + 1));
    } else {
      // The Hermitian extension of the half spectrum (Im X_0 dropped).
      y[0] = in[0];
      y[1] = T(0);
      for (int64_t k = 1; k <= half; ++k) {
        y[2 * k] = in[2 * k];
        y[2 * k + 1] = in[2 * k + 1];
        y[2 * (n - k)] = in[2 * k];
        y[2 * (n - k) + 1] = -in[2 * k + 1];
      }
      RunComplex(plan.complex, y, z, 1, rest);
      for (int64_t j = 0; j < n; ++j) out[j] = z[2 * j];
    }
    return;
  }
  const T* w = plan.twiddles.data();
  if (plan.forward) {
    // Z = DFT_{n/2}(x_2j + i x_2j+1) into out[0, n/2), then split in place:
    // with E = (Z_k + conj Z_{n/2-k}) / 2 and O = -i (Z_k - conj Z_{n/2-k}) / 2,
    // X_k = E + w^k O and X_{n/2-k} = conj(E - w^k O).
    RunComplex(plan.complex, in, out, 1, scratch);
    const T z0re = out[0], z0im = out[1];
    out[0] = z0re + z0im;
    out[1] = T(0);
    out[2 * half] = z0re - z0im;
    out[2 * half + 1] = T(0);
    for (int64_t k = 1; k <= half - k; ++k) {
      const int64_t j = half - k;
      const T zkre = out[2 * k], zkim = out[2 * k + 1];
      const T zjre = out[2 * j], zjim = out[2 * j + 1];
      const T ere = T(0.5) * (zkre + zjre), eim = T(0.5) * (zkim - zjim);
      // O = -i D with D = (Z_k - conj Z_j) / 2.
      const T dre = T(0.5) * (zkre - zjre), dim = T(0.5) * (zkim + zjim);
      const T ore = dim, oim = -dre;
      const T wre = w[2 * k], wim = w[2 * k + 1];
      const T pre = wre * ore - wim * oim, pim = wre * oim + wim * ore;
      out[2 * k] = ere + pre;
      out[2 * k + 1] = eim + pim;
      out[2 * j] = ere - pre;
      out[2 * j + 1] = -(eim - pim);
    }
    return;
  }
  // Inverse: Z_k = E + i O with E = X_k + conj X_{n/2-k} and O = (X_k -
  // conj X_{n/2-k}) exp(2 pi i k / n) (twice the even and odd halves'
  // spectra), then z = the unscaled inverse DFT_{n/2}(Z) is (x_2j + i x_2j+1)
  // times n.
  T* z = scratch;
  T* rest = z + 2 * half;
  const T r0 = in[0], rn = in[2 * half];
  z[0] = r0 + rn;
  z[1] = r0 - rn;
  for (int64_t k = 1; k < half; ++k) {
    const int64_t j = half - k;
    const T xkre = in[2 * k], xkim = in[2 * k + 1];
    const T xjre = in[2 * j], xjim = in[2 * j + 1];
    const T ere = xkre + xjre, eim = xkim - xjim;
    const T dre = xkre - xjre, dim = xkim + xjim;
    T vre, vim;  // exp(2 pi i k / n); for k > n/4 as -conj of the entry n/2 - k.
    if (k <= n / 4) {
      vre = w[2 * k];
      vim = w[2 * k + 1];
    } else {
      vre = -w[2 * j];
      vim = w[2 * j + 1];
    }
    const T ore = dre * vre - dim * vim, oim = dre * vim + dim * vre;
    z[2 * k] = ere - oim;
    z[2 * k + 1] = eim + ore;
  }
  RunComplex(plan.complex, z, out, 1, rest);
}

template struct ComplexPlan<float>;
template struct ComplexPlan<double>;
template struct RealPlan<float>;
template struct RealPlan<double>;
template ComplexPlan<float> MakeComplexPlan<float>(int64_t, bool);
template ComplexPlan<double> MakeComplexPlan<double>(int64_t, bool);
template RealPlan<float> MakeRealPlan<float>(int64_t, bool);
template RealPlan<double> MakeRealPlan<double>(int64_t, bool);
template void RunComplex<float>(const ComplexPlan<float>&, const float*, float*, int64_t, float*);
template void RunComplex<double>(const ComplexPlan<double>&, const double*, double*, int64_t,
                                 double*);
template void RunReal<float>(const RealPlan<float>&, const float*, float*, float*);
template void RunReal<double>(const RealPlan<double>&, const double*, double*, double*);

}  // namespace xjit::runtime::fft
