// SmallGemm (runtime/blas/small_gemm.h) against a double-precision loop
// over odd and tile-edge shapes in its three forms (NN, NT, TN), with row
// strides wider than the rows, and the same bits on 1 and 2 threads, with
// each kernel ISA the CPU has (AVX-512F, AVX2+FMA: kernel_isa.h).
#include "runtime/blas/small_gemm.h"

#include <cmath>
#include <initializer_list>
#include <cstring>
#include <limits>
#include <random>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/shape.h"
#include "runtime/blas/dot.h"
#include "runtime/blas/kernel_isa.h"
#include "tests/blas/kernel_isa_test.h"

namespace xjit::runtime::blas {
namespace {

enum class Form { kNN, kNT, kTN };

struct Buffers {
  std::vector<float> a, b, c;
  SmallGemmArgs args;
};

// A [m,k] (TN: stored [k,m]) and B [k,n] (NT: stored [n,k]) with 3 spare
// elements per stored row, C [m,n] with 5, all from `seed`.
Buffers Make(Form form, int64_t m, int64_t n, int64_t k, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  Buffers x;
  SmallGemmArgs& g = x.args;
  g.m = m;
  g.n = n;
  g.k = k;
  const int64_t a_rows = form == Form::kTN ? k : m, a_cols = form == Form::kTN ? m : k;
  const int64_t lda = a_cols + 3;
  x.a.resize(a_rows * lda);
  for (float& v : x.a) v = d(rng);
  g.a_row_stride = form == Form::kTN ? 1 : lda;
  g.a_col_stride = form == Form::kTN ? lda : 1;
  const int64_t b_rows = form == Form::kNT ? n : k, b_cols = form == Form::kNT ? k : n;
  g.ldb = b_cols + 3;
  x.b.resize(b_rows * g.ldb);
  for (float& v : x.b) v = d(rng);
  g.b_transposed = form == Form::kNT;
  g.ldc = n + 5;
  x.c.assign(m * g.ldc, 7.0f);  // Spare elements must keep their 7.
  g.a = x.a.data();
  g.b = x.b.data();
  g.c = x.c.data();
  return x;
}

// Every element within the f32 summation bound of the exact product, and
// the spare elements of C untouched.
void ExpectProduct(const Buffers& x, const std::string& what) {
  const SmallGemmArgs& g = x.args;
  for (int64_t i = 0; i < g.m; ++i) {
    for (int64_t j = 0; j < g.ldc; ++j) {
      const float got = x.c[i * g.ldc + j];
      if (j >= g.n) {
        ASSERT_EQ(got, 7.0f) << what << " wrote spare element " << i << "," << j;
        continue;
      }
      double sum = 0, magnitude = 0;
      for (int64_t k = 0; k < g.k; ++k) {
        const double a = g.a[i * g.a_row_stride + k * g.a_col_stride];
        const double b = g.b_transposed ? g.b[j * g.ldb + k] : g.b[k * g.ldb + j];
        sum += a * b;
        magnitude += std::fabs(a * b);
      }
      const double bound = (g.k + 2) * 0x1p-24 * magnitude + 1e-30;
      ASSERT_LE(std::fabs(got - sum), bound) << what << " element " << i << "," << j;
    }
  }
}

// Each test runs once per kernel ISA (KernelIsaTest).
class SmallGemmIsa : public KernelIsaTest {};
INSTANTIATE_TEST_SUITE_P(Isa, SmallGemmIsa, kKernelIsas, KernelIsaTestName);

// SmallGemm on one thread against the double loop for every combination
// of the forms and sizes given, seeds counting up from `seed`.
void CheckEveryShape(std::initializer_list<Form> forms, std::initializer_list<int64_t> ms,
                     std::initializer_list<int64_t> ns, std::initializer_list<int64_t> ks,
                     uint64_t seed) {
  for (Form form : forms) {
    for (int64_t m : ms) {
      for (int64_t n : ns) {
        for (int64_t k : ks) {
          Buffers x = Make(form, m, n, k, seed++);
          SmallGemm(x.args, 1);
          ExpectProduct(x, absl::StrCat("form ", static_cast<int>(form), " m ", m, " n ", n,
                                        " k ", k));
          if (::testing::Test::HasFatalFailure()) return;
        }
      }
    }
  }
}

TEST_P(SmallGemmIsa, MatchesDoubleLoop) {
  CheckEveryShape({Form::kNN, Form::kNT, Form::kTN}, {1, 2, 5, 6, 7, 13, 32},
                  {1, 3, 15, 16, 17, 63, 64, 65, 130}, {1, 2, 15, 16, 17, 40, 100}, 1);
}

// Many rows over a short K, as attention's Q K^T over one head: NN and TN
// on the NN tiles, NT on transposed panels of B (K up to 32), on any row
// count and block edge.
TEST_P(SmallGemmIsa, ShortKOverManyRows) {
  CheckEveryShape({Form::kNN, Form::kNT, Form::kTN}, {33, 128}, {1, 23, 24, 25, 64, 65, 130},
                  {1, 8, 31, 32}, 100);
}

// A narrow C of many rows (a graph layer's [nodes, 16]): NN and TN on the
// six-row tiles of one or two vectors, every row and column tail.
TEST_P(SmallGemmIsa, NarrowCOverManyRows) {
  CheckEveryShape({Form::kNN, Form::kTN}, {6, 11, 1000}, {1, 3, 8, 9, 16}, {1, 3, 64}, 300);
}

// NN and TN with rows of B 512 floats apart or more and more than one tile
// of rows run on dense copies of B's column blocks (panels), over K up to
// 256 (257: without): every block edge, one tile and a half of rows.
TEST_P(SmallGemmIsa, PanelsOfFarApartRowsOfB) {
  CheckEveryShape({Form::kNN, Form::kTN}, {7, 33}, {509, 600}, {1, 255, 256, 257}, 200);
}

// Large enough to split: the columns are divided (a narrow C's rows), each
// element's sum is the same, so the bits are too.
TEST_P(SmallGemmIsa, SameBitsOnTwoThreads) {
  for (Form form : {Form::kNN, Form::kNT, Form::kTN}) {
    // The second of each: NT over a short K, on panels.
    for (const auto& [m, n, k] :
         {std::tuple<int64_t, int64_t, int64_t>{32, form == Form::kNT ? 257 : 1000,
                                                form == Form::kNT ? 300 : 70},
          std::tuple<int64_t, int64_t, int64_t>{512, 1000, 16},
          std::tuple<int64_t, int64_t, int64_t>{4099, 13, 64}}) {
      Buffers one = Make(form, m, n, k, 5);
      Buffers two = Make(form, m, n, k, 5);
      SmallGemm(one.args, 1);
      SmallGemm(two.args, 2);
      ExpectProduct(two, absl::StrCat("form ", static_cast<int>(form), " k ", k, " on 2 threads"));
      EXPECT_EQ(std::memcmp(one.c.data(), two.c.data(), one.c.size() * sizeof(float)), 0)
          << "form " << static_cast<int>(form) << " k " << k;
    }
  }
}

// NaN and infinities propagate as in the plain sum (an element of C reads
// only its row of A and its column of B), in every form and in vector
// tails: a NaN in A's row i makes row i NaN; an infinity in B's column j
// times a nonzero makes column j infinite (or NaN where both meet).
TEST_P(SmallGemmIsa, NanAndInfinity) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  for (Form form : {Form::kNN, Form::kNT, Form::kTN}) {
    for (int64_t n : {9, 31}) {
      const int64_t m = 5, k = 19;
      Buffers x = Make(form, m, n, k, 3);
      SmallGemmArgs& g = x.args;
      const auto a_at = [&](int64_t i, int64_t kk) {
        return &x.a[i * g.a_row_stride + kk * g.a_col_stride];
      };
      const auto b_at = [&](int64_t kk, int64_t j) {
        return g.b_transposed ? &x.b[j * g.ldb + kk] : &x.b[kk * g.ldb + j];
      };
      *a_at(1, k - 1) = nan;
      for (int64_t kk = 0; kk < k; ++kk) *b_at(kk, n - 1) = kk == 4 ? inf : 1.0f;
      for (int64_t i = 0; i < m; ++i) *a_at(i, 4) = 1.0f;
      SmallGemm(g, 1);
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          const float got = x.c[i * g.ldc + j];
          const std::string where = absl::StrCat("form ", static_cast<int>(form), " n ", n,
                                                 " element ", i, ",", j, ": ", got);
          if (i == 1) {
            EXPECT_TRUE(std::isnan(got)) << where;
          } else if (j == n - 1) {
            EXPECT_EQ(got, inf) << where;
          } else {
            EXPECT_TRUE(std::isfinite(got)) << where;
          }
        }
      }
    }
  }
}

// The shape rule per ISA: NT (few rows, long K; or a short K) on any thread
// count; NN and TN on any thread count with AVX-512F, with AVX2 on one
// thread only while B is at most 256 KB.
TEST_P(SmallGemmIsa, PreferredShapesOfTheIsa) {
  const bool avx512 = GetParam() == KernelIsa::kAvx512;
  Buffers x = Make(Form::kNN, 32, 1024, 256, 1);
  EXPECT_EQ(PreferSmallGemm(x.args, 1), avx512);
  EXPECT_TRUE(PreferSmallGemm(x.args, 2));
  // A weight gradient (a short K: on panels of B, faster than OpenBLAS).
  Buffers w = Make(Form::kTN, 128, 1024, 32, 1);
  EXPECT_TRUE(PreferSmallGemm(w.args, 1));
  EXPECT_TRUE(PreferSmallGemm(w.args, 2));
  // Many rows over a K of 64: OpenBLAS's on one thread.
  Buffers l = Make(Form::kNN, 128, 1024, 64, 1);
  EXPECT_FALSE(PreferSmallGemm(l.args, 1));
  EXPECT_TRUE(PreferSmallGemm(l.args, 2));
  // A small B (an LSTM cell's [32,48] x [48,64]) on any thread count.
  Buffers s = Make(Form::kNN, 32, 64, 48, 1);
  EXPECT_TRUE(PreferSmallGemm(s.args, 1));
  EXPECT_TRUE(PreferSmallGemm(s.args, 2));
  Buffers t = Make(Form::kNT, 32, 256, 1024, 1);
  EXPECT_TRUE(PreferSmallGemm(t.args, 1));
  EXPECT_TRUE(PreferSmallGemm(t.args, 2));
  // A narrow C of many rows, NN or TN: the AVX2 tiles on any thread count;
  // TN (A stored transposed) only over a short K.
  for (Form form : {Form::kNN, Form::kTN}) {
    Buffers g = Make(form, 8192, 16, 64, 1);
    EXPECT_EQ(PreferSmallGemm(g.args, 1), !avx512);
    EXPECT_EQ(PreferSmallGemm(g.args, 2), !avx512);
    Buffers long_k = Make(form, 512, 16, 1024, 1);
    EXPECT_EQ(PreferSmallGemm(long_k.args, 1), !avx512 && form == Form::kNN);
  }
  // Attention's Q K^T over a head of 8, either form, on any thread count
  // (the same kernel, so the same bits, at 1 and 2 threads).
  for (Form form : {Form::kNN, Form::kNT}) {
    Buffers q = Make(form, 128, 128, 8, 1);
    EXPECT_TRUE(PreferSmallGemm(q.args, 1));
    EXPECT_TRUE(PreferSmallGemm(q.args, 2));
  }
}

// The shape rule: few rows and enough columns (NT: enough K, and A with
// unit stride along K); nothing where the kernels cannot run.
TEST(SmallGemm, PreferredShapes) {
  Buffers x = Make(Form::kNN, 32, 1024, 256, 1);
  EXPECT_EQ(PreferSmallGemm(x.args), CurrentKernelIsa() == KernelIsa::kAvx512);
  x.args.m = 256;
  EXPECT_FALSE(PreferSmallGemm(x.args));
  // Many rows over K 64: OpenBLAS's on one thread, SmallGemm's on two; over
  // a short K (a weight gradient's shape) SmallGemm's on both.
  Buffers w = Make(Form::kTN, 128, 1024, 64, 1);
  EXPECT_FALSE(PreferSmallGemm(w.args, 1));
  EXPECT_EQ(PreferSmallGemm(w.args, 2), SmallGemmAvailable());
  w.args.k = 32;
  EXPECT_EQ(PreferSmallGemm(w.args, 1), SmallGemmAvailable());
  Buffers t = Make(Form::kNT, 32, 256, 1024, 1);
  EXPECT_EQ(PreferSmallGemm(t.args), SmallGemmAvailable());
  t.args.a_col_stride = 2;
  EXPECT_FALSE(PreferSmallGemm(t.args));
  t.args.a_col_stride = 1;
  t.args.k = 0;
  EXPECT_FALSE(PreferSmallGemm(t.args));
}

// Through PlanDot/RunDot (DotPlan::small_gemm, as the compile driver sets
// it): every combination of row- and column-major operands and result, so
// that row- and column-major plans with either transpose reach the kernels,
// against the same plan run by cblas_sgemm.
TEST_P(SmallGemmIsa, DotPlansInEveryLayout) {
  // (5, 70, 90) takes the kernels in row-major plans; (20, 70, 32) in
  // column-major ones too (their row-major form has 32 rows and 20 columns).
  for (const auto& [m, k, n] : {std::tuple<int64_t, int64_t, int64_t>{5, 70, 90},
                                std::tuple<int64_t, int64_t, int64_t>{20, 70, 32}}) {
  DotDimensionNumbers dnums;
  dnums.lhs_contracting_dimensions = {1};
  dnums.rhs_contracting_dimensions = {0};
  std::mt19937_64 rng(9);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> lhs(m * k), rhs(k * n);
  for (float& v : lhs) v = d(rng);
  for (float& v : rhs) v = d(rng);
  for (int layouts = 0; layouts < 8; ++layouts) {
    const auto shape = [](int64_t rows, int64_t cols, bool column_major) {
      const int64_t dims[] = {rows, cols};
      const int64_t row_major[] = {1, 0}, col_major[] = {0, 1};
      return Shape::ArrayWithLayout(ElementType::kF32, dims,
                                    column_major ? col_major : row_major);
    };
    const Shape a = shape(m, k, layouts & 1), b = shape(k, n, layouts & 2),
                c = shape(m, n, layouts & 4);
    absl::StatusOr<DotPlan> plan = PlanDot(a, b, c, dnums);
    ASSERT_TRUE(plan.ok()) << plan.status();
    ASSERT_EQ(plan->kind, DotPlan::Kind::kGemm) << plan->ToString();
    std::vector<float> expected(m * n), actual(m * n);
    std::vector<uint8_t> scratch(static_cast<size_t>(plan->scratch_bytes) + 1);
    RunDot(*plan, lhs.data(), rhs.data(), expected.data(), scratch.data());
    DotPlan small = *plan;
    small.small_gemm = true;
    RunDot(small, lhs.data(), rhs.data(), actual.data(), scratch.data());
    for (int64_t i = 0; i < m * n; ++i) {
      ASSERT_NEAR(actual[i], expected[i], 1e-4) << "layouts " << layouts << " element " << i
                                                << " plan " << plan->ToString();
    }
  }
  }
}

}  // namespace
}  // namespace xjit::runtime::blas
