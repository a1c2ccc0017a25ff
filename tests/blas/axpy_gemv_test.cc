// AxpyGemv (runtime/blas/axpy_gemv.h) against a double-precision loop (f32,
// f64; widths around the vector and strip sizes, row counts around the row
// block, rows wider than the columns taken, strided x and y), its contract
// that every output is the same sum wherever it lies (any band of columns
// gives the whole call's bits), and NaN / infinity propagation. RunDot's use
// of it, bands on threads included, is tested against the evaluator in
// dot_test.cc.
#include "runtime/blas/axpy_gemv.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"

namespace xjit::runtime::blas {
namespace {

template <typename T>
struct Case {
  std::vector<T> p, x, y;
  AxpyGemvArgs<T> args;
};

// P [rows, cols] with 5 spare elements per row, x and y with strides incx
// and incy, y's spare elements 7 (and every element 7 before the call).
template <typename T>
Case<T> Make(int64_t rows, int64_t cols, int64_t incx, int64_t incy, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> d(-1, 1);
  Case<T> c;
  AxpyGemvArgs<T>& g = c.args;
  g.rows = rows;
  g.cols = cols;
  g.ldp = cols + 5;
  g.incx = incx;
  g.incy = incy;
  c.p.resize(rows * g.ldp + 1);
  for (T& v : c.p) v = static_cast<T>(d(rng));
  c.x.resize(rows * incx + 1);
  for (T& v : c.x) v = static_cast<T>(d(rng));
  c.y.assign(cols * incy + 1, T(7));
  g.p = c.p.data();
  g.x = c.x.data();
  g.y = c.y.data();
  return c;
}

template <typename T>
double Exact(const Case<T>& c, int64_t col) {
  double sum = 0;
  for (int64_t r = 0; r < c.args.rows; ++r) {
    sum += static_cast<double>(c.p[r * c.args.ldp + col]) * c.x[r * c.args.incx];
  }
  return sum;
}

template <typename T>
void ExpectMatchesExact(int64_t rows, int64_t cols, int64_t incx, int64_t incy) {
  SCOPED_TRACE(absl::StrCat(sizeof(T) == 4 ? "f32 " : "f64 ", rows, "x", cols, " incx ", incx,
                            " incy ", incy));
  Case<T> c = Make<T>(rows, cols, incx, incy, rows * 1009 + cols * 7 + incx);
  AxpyGemv(c.args);
  const double eps = std::numeric_limits<T>::epsilon();
  for (int64_t i = 0; i < cols; ++i) {
    ASSERT_NEAR(c.y[i * incy], Exact(c, i), (rows + 1) * eps * 2) << "column " << i;
    for (int64_t s = 1; s < incy; ++s) ASSERT_EQ(c.y[i * incy + s], T(7));
  }
  EXPECT_EQ(c.y[cols * incy], T(7)) << "past the end";
}

TEST(AxpyGemv, MatchesTheExactSums) {
  if (!AxpyGemvAvailable()) GTEST_SKIP() << "no AVX2+FMA here";
  for (int64_t cols : {1, 3, 4, 7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129, 300,
                       777, 2049, 2500}) {
    for (int64_t rows : {1, 2, 7, 8, 9, 16, 17, 100}) {
      ExpectMatchesExact<float>(rows, cols, 1, 1);
      ExpectMatchesExact<double>(rows, cols, 1, 1);
    }
  }
  for (auto [incx, incy] : {std::pair<int64_t, int64_t>{3, 1}, {1, 2}, {2, 3}}) {
    for (int64_t cols : {5, 40, 2100}) {
      ExpectMatchesExact<float>(19, cols, incx, incy);
      ExpectMatchesExact<double>(19, cols, incx, incy);
    }
  }
}

// No rows: every output is 0 (and nothing is read).
TEST(AxpyGemv, NoRowsGiveZeros) {
  if (!AxpyGemvAvailable()) GTEST_SKIP() << "no AVX2+FMA here";
  for (int64_t incy : {1, 2}) {
    Case<float> c = Make<float>(0, 37, 1, incy, 3);
    AxpyGemv(c.args);
    for (int64_t i = 0; i < 37; ++i) EXPECT_EQ(c.y[i * incy], 0.0f);
  }
}

// The whole call's bits from any band of columns: every start (in and out
// of vector alignment) and width, f32 and f64, contiguous and strided y.
template <typename T>
void ExpectBandsGiveTheWholeBits(int64_t rows, int64_t cols, int64_t incy) {
  SCOPED_TRACE(absl::StrCat(sizeof(T) == 4 ? "f32 " : "f64 ", rows, "x", cols, " incy ", incy));
  Case<T> whole = Make<T>(rows, cols, 1, incy, rows + cols);
  AxpyGemv(whole.args);
  std::mt19937_64 rng(cols);
  for (int trial = 0; trial < 40; ++trial) {
    const int64_t first = static_cast<int64_t>(rng() % cols);
    const int64_t width = 1 + static_cast<int64_t>(rng() % (cols - first));
    std::vector<T> y(cols * incy, T(-1));
    AxpyGemvArgs<T> band = whole.args;
    band.p += first;
    band.cols = width;
    band.y = y.data() + first * incy;
    AxpyGemv(band);
    for (int64_t i = first; i < first + width; ++i) {
      ASSERT_EQ(std::memcmp(&y[i * incy], &whole.y[i * incy], sizeof(T)), 0)
          << "column " << i << " of band [" << first << ", " << first + width << ")";
    }
  }
}

TEST(AxpyGemv, BandsGiveTheWholeCallsBits) {
  if (!AxpyGemvAvailable()) GTEST_SKIP() << "no AVX2+FMA here";
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{1, 50}, {9, 1000}, {100, 777},
                            {333, 2049}, {16, 9000}}) {
    for (int64_t incy : {1, 3}) {
      ExpectBandsGiveTheWholeBits<float>(rows, cols, incy);
      ExpectBandsGiveTheWholeBits<double>(rows, cols, incy);
    }
  }
}

TEST(AxpyGemv, NanAndInfinityPropagate) {
  if (!AxpyGemvAvailable()) GTEST_SKIP() << "no AVX2+FMA here";
  Case<float> c = Make<float>(21, 70, 1, 1, 5);
  const int64_t ld = c.args.ldp;
  c.p[4 * ld + 7] = std::numeric_limits<float>::quiet_NaN();
  c.p[9 * ld + 66] = std::numeric_limits<float>::infinity();  // in the masked tail vector
  c.x[13] = -std::numeric_limits<float>::infinity();          // every column of row 13
  c.p[13 * ld + 30] = 0.0f;                                   // 0 x inf: NaN
  AxpyGemv(c.args);
  EXPECT_TRUE(std::isnan(c.y[7]));
  EXPECT_TRUE(std::isnan(c.y[30]));
  // Column 66 sums +inf x x[9] and -inf x P[13, 66]: inf of either sign or
  // NaN, as the evaluator's double sum; column 1 only -inf x P[13, 1].
  EXPECT_FALSE(std::isfinite(c.y[66]));
  EXPECT_TRUE(std::isinf(c.y[1]));
  EXPECT_EQ(std::signbit(c.y[1]), !std::signbit(c.p[13 * ld + 1]));
}

}  // namespace
}  // namespace xjit::runtime::blas
