// SmallGemv (runtime/blas/small_gemv.h) against a double-precision loop in
// both forms (dots, axpys), over every row length it takes (16..64: whole and
// partial vectors), row counts with partial blocks of 16, row strides wider
// than the rows, strided x and y; NaN and infinities propagate; and the
// rule PreferSmallGemv applies. Also RunDot on planned gemv dots in
// every layout, which reach the kernels through the plan's mapping of A.
#include "runtime/blas/small_gemv.h"

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/shape.h"
#include "runtime/blas/dot.h"
#include "runtime/blas/kernel_isa.h"
#include "tests/blas/kernel_isa_test.h"

namespace xjit::runtime::blas {
namespace {

struct Case {
  std::vector<float> p, x, y;
  SmallGemvArgs args;
};

// P [rows, cols] with 3 spare elements per row; x and y with strides incx,
// incy, y's spare elements 7.
Case Make(int64_t rows, int64_t cols, bool transposed, int64_t incx, int64_t incy,
          uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Case c;
  SmallGemvArgs& g = c.args;
  g.rows = rows;
  g.cols = cols;
  g.ldp = cols + 3;
  g.transposed = transposed;
  g.incx = incx;
  g.incy = incy;
  c.p.resize(rows * g.ldp);
  for (float& v : c.p) v = d(rng);
  const int64_t x_len = transposed ? rows : cols, y_len = transposed ? cols : rows;
  c.x.resize(x_len * incx);
  for (float& v : c.x) v = d(rng);
  c.y.assign(y_len * incy, 7.0f);
  g.p = c.p.data();
  g.x = c.x.data();
  g.y = c.y.data();
  return c;
}

double Exact(const Case& c, int64_t i) {
  const SmallGemvArgs& g = c.args;
  double sum = 0;
  const int64_t n = g.transposed ? g.rows : g.cols;
  for (int64_t k = 0; k < n; ++k) {
    const double p = g.transposed ? c.p[k * g.ldp + i] : c.p[i * g.ldp + k];
    sum += p * c.x[k * g.incx];
  }
  return sum;
}

// Each test runs once per kernel ISA (KernelIsaTest).
class SmallGemvIsa : public KernelIsaTest {};
INSTANTIATE_TEST_SUITE_P(Isa, SmallGemvIsa, kKernelIsas, KernelIsaTestName);

TEST_P(SmallGemvIsa, BothFormsEveryRowLength) {
  for (bool transposed : {false, true}) {
    for (int64_t cols = 16; cols <= 64; ++cols) {
      for (int64_t rows : {16, 17, 31, 48, 100}) {
        for (auto [incx, incy] : {std::pair<int64_t, int64_t>{1, 1}, {2, 3}}) {
          if (!transposed && incx != 1) continue;  // Dots need a contiguous x.
          SCOPED_TRACE(absl::StrCat(transposed ? "axpys " : "dots ", rows, "x", cols, " incx ",
                                    incx, " incy ", incy));
          Case c = Make(rows, cols, transposed, incx, incy, rows * 131 + cols);
          ASSERT_TRUE(PreferSmallGemv(c.args));
          SmallGemv(c.args);
          const int64_t y_len = transposed ? cols : rows;
          const int64_t n = transposed ? rows : cols;
          for (int64_t i = 0; i < y_len; ++i) {
            EXPECT_NEAR(c.y[i * incy], Exact(c, i), n * 1.2e-7 * 2) << "element " << i;
            for (int64_t s = 1; s < incy; ++s) EXPECT_EQ(c.y[i * incy + s], 7.0f);
          }
        }
      }
    }
  }
}

TEST_P(SmallGemvIsa, NanAndInfinityPropagate) {
  for (bool transposed : {false, true}) {
    Case c = Make(33, 20, transposed, 1, 1, 5);
    c.p[4 * c.args.ldp + 7] = std::numeric_limits<float>::quiet_NaN();
    c.p[9 * c.args.ldp + 2] = std::numeric_limits<float>::infinity();
    SmallGemv(c.args);
    const int64_t nan_at = transposed ? 7 : 4, inf_at = transposed ? 2 : 9;
    EXPECT_TRUE(std::isnan(c.y[nan_at]));
    EXPECT_EQ(std::isinf(c.y[inf_at]) || std::isnan(c.y[inf_at]), true);
    if (transposed) {
      EXPECT_TRUE(std::isinf(c.y[inf_at]) && c.y[inf_at] * c.x[9] > 0);
    }
    EXPECT_FALSE(std::isnan(c.y[1]));
  }
}

TEST(SmallGemv, PreferredShapes) {
  SmallGemvArgs g;
  g.rows = 2048;
  g.cols = 32;
  g.incx = g.incy = 1;
  EXPECT_EQ(PreferSmallGemv(g), SmallGemvAvailable());
  g.transposed = true;
  EXPECT_EQ(PreferSmallGemv(g), SmallGemvAvailable());
  for (auto [rows, cols] : {std::pair<int64_t, int64_t>{256, 2}, {1000, 3}, {8, 32}, {32, 65},
                            {8192, 64}}) {
    g.rows = rows;
    g.cols = cols;
    EXPECT_FALSE(PreferSmallGemv(g)) << rows << "x" << cols;
  }
  // 1 MB of matrix: AVX-512F's kernels only.
  g.rows = 4096;
  g.cols = 64;
  EXPECT_EQ(PreferSmallGemv(g), CurrentKernelIsa() == KernelIsa::kAvx512);
  g.rows = 64;
  g.cols = 32;
  g.transposed = false;
  g.incx = 2;
  EXPECT_FALSE(PreferSmallGemv(g));
}

// Through RunDot: X[m, k] . w[k] and v[m] . X[m, k] with X in both layouts
// (row-major dots/axpys, column-major axpys/dots after the plan's mapping).
TEST_P(SmallGemvIsa, PlannedDotsInEveryLayout) {
  for (const char* layout : {"{1,0}", "{0,1}"}) {
    for (int lhs_matrix = 0; lhs_matrix < 2; ++lhs_matrix) {
      const int64_t m = 37, k = 24;
      SCOPED_TRACE(absl::StrCat(layout, lhs_matrix ? " X.w" : " v.X"));
      absl::StatusOr<Shape> matrix = ParseShape(absl::StrCat("f32[37,24]", layout));
      ASSERT_TRUE(matrix.ok()) << matrix.status();
      const Shape vector_in = *ParseShape(lhs_matrix ? "f32[24]" : "f32[37]");
      const Shape result = *ParseShape(lhs_matrix ? "f32[37]" : "f32[24]");
      DotDimensionNumbers dnums;
      dnums.lhs_contracting_dimensions = {lhs_matrix ? 1 : 0};
      dnums.rhs_contracting_dimensions = {0};
      absl::StatusOr<DotPlan> plan = lhs_matrix ? PlanDot(*matrix, vector_in, result, dnums)
                                                : PlanDot(vector_in, *matrix, result, dnums);
      ASSERT_TRUE(plan.ok()) << plan.status();
      ASSERT_EQ(plan->kind, DotPlan::Kind::kGemv) << plan->ToString();
      std::mt19937_64 rng(3);
      std::uniform_real_distribution<float> d(-1, 1);
      std::vector<float> x(m * k), v(lhs_matrix ? k : m), out(lhs_matrix ? m : k, 7.0f);
      for (float& e : x) e = d(rng);
      for (float& e : v) e = d(rng);
      std::vector<uint8_t> scratch(plan->scratch_bytes);
      const bool row_major = std::string(layout) == "{1,0}";
      auto at = [&](int64_t i, int64_t j) { return row_major ? x[i * k + j] : x[i + j * m]; };
      if (lhs_matrix) {
        RunDot(*plan, x.data(), v.data(), out.data(), scratch.data());
      } else {
        RunDot(*plan, v.data(), x.data(), out.data(), scratch.data());
      }
      for (int64_t i = 0; i < static_cast<int64_t>(out.size()); ++i) {
        double sum = 0;
        if (lhs_matrix) {
          for (int64_t j = 0; j < k; ++j) sum += static_cast<double>(at(i, j)) * v[j];
        } else {
          for (int64_t j = 0; j < m; ++j) sum += static_cast<double>(at(j, i)) * v[j];
        }
        EXPECT_NEAR(out[i], sum, 1e-5) << plan->ToString() << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace xjit::runtime::blas
