// XLA's QR custom calls in the evaluator (interpreter/qr.cc), from first
// principles: a 2x2 example worked by hand; then, on random matrices of
// every shape class (m > n, m < n, square, 1x1, size 0, batched) and the
// four types, the properties that define the factorisation — Q R
// reconstructs A, Q's columns are orthonormal, the Householder vectors and
// taus of the first result rebuild, reflector by reflector, the Q that
// ProductOfElementaryHouseholderReflectors returns, R's diagonal is real,
// and real taus are 0 or in [1, 2] — and the shape errors.
#include <algorithm>
#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/interpreter/ops_test_util.h"

namespace xjit::testing {
namespace {

using Complex = std::complex<double>;
// Row-major m x n.
struct Matrix {
  int64_t m = 0, n = 0;
  std::vector<Complex> v;
  Complex& operator()(int64_t i, int64_t j) { return v[i * n + j]; }
  Complex operator()(int64_t i, int64_t j) const { return v[i * n + j]; }
};

Matrix Zeros(int64_t m, int64_t n) { return Matrix{m, n, std::vector<Complex>(m * n)}; }

Matrix Multiply(const Matrix& a, const Matrix& b) {
  Matrix c = Zeros(a.m, b.n);
  for (int64_t i = 0; i < a.m; ++i) {
    for (int64_t j = 0; j < b.n; ++j) {
      for (int64_t k = 0; k < a.n; ++k) c(i, j) += a(i, k) * b(k, j);
    }
  }
  return c;
}

double MaxDifference(const Matrix& a, const Matrix& b) {
  double worst = 0;
  for (size_t i = 0; i < a.v.size(); ++i) worst = std::max(worst, std::abs(a.v[i] - b.v[i]));
  return worst;
}

// Matrix `b` of a rank-(2 + batch) literal, batch index `batch`.
Matrix Read(const Literal& literal, const std::vector<int64_t>& batch) {
  const Shape& shape = literal.shape();
  const int64_t rank = shape.rank();
  Matrix matrix = Zeros(shape.dimensions(rank - 2), shape.dimensions(rank - 1));
  std::vector<int64_t> index = batch;
  index.resize(rank);
  for (int64_t i = 0; i < matrix.m; ++i) {
    for (int64_t j = 0; j < matrix.n; ++j) {
      index[rank - 2] = i;
      index[rank - 1] = j;
      matrix(i, j) = literal.GetComplex(index);
    }
  }
  return matrix;
}

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

Shape ZeroShape(const std::string& type, const std::vector<int64_t>& dims) {
  absl::StatusOr<Shape> shape = ParseShape(absl::StrCat(type, "[", Dims(dims), "]"));
  EXPECT_TRUE(shape.ok()) << shape.status();
  return shape.ok() ? *shape : Shape();
}

// Uniform [-1, 1] entries (imaginary parts too for complex types).
Literal Random(const std::string& type, const std::vector<int64_t>& dims, std::mt19937_64& rng) {
  Literal literal(ZeroShape(type, dims));
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const bool complex = type[0] == 'c';
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  std::vector<int64_t> index(dims.size(), 0);
  for (int64_t e = 0; e < count; ++e) {
    literal.SetComplex(index, Complex(u(rng), complex ? u(rng) : 0.0));
    for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
      if (++index[d] < dims[d]) break;
      index[d] = 0;
    }
  }
  return literal;
}

// The module: qr = Qr(p0); q = the product of its first min(m, n) columns'
// reflectors (a[..., :, :min(m, n)] so that m >= n there); result (a, taus,
// q).
std::string QrModule(const std::string& type, const std::vector<int64_t>& batch, int64_t m,
                     int64_t n) {
  const int64_t k = std::min(m, n);
  auto shape = [&](std::vector<int64_t> minor) {
    std::vector<int64_t> dims = batch;
    dims.insert(dims.end(), minor.begin(), minor.end());
    return absl::StrCat(type, "[", Dims(dims), "]");
  };
  std::string slice;
  for (size_t d = 0; d < batch.size(); ++d) absl::StrAppend(&slice, "[0:", batch[d], "], ");
  absl::StrAppend(&slice, "[0:", m, "], [0:", k, "]");
  return absl::StrCat("HloModule m\nENTRY e {\n  p0 = ", shape({m, n}), " parameter(0)\n",
                      "  qr = (", shape({m, n}), ", ", shape({k}),
                      ") custom-call(p0), custom_call_target=\"Qr\"\n",
                      "  a = ", shape({m, n}), " get-tuple-element(qr), index=0\n",
                      "  taus = ", shape({k}), " get-tuple-element(qr), index=1\n",
                      "  v = ", shape({m, k}), " slice(a), slice={", slice, "}\n",
                      "  q = ", shape({m, k}), " custom-call(v, taus), "
                      "custom_call_target=\"ProductOfElementaryHouseholderReflectors\"\n",
                      "  ROOT r = (", shape({m, n}), ", ", shape({k}), ", ", shape({m, k}),
                      ") tuple(a, taus, q)\n}\n");
}

TEST(QrTest, HandWorkedExample) {
  // A = {{3, 1}, {4, 2}}. Column 0: alpha = 3, |x| = 4, beta = -5, tau =
  // (-5 - 3) / -5 = 1.6, v = (1, 4 / (3 + 5)) = (1, 0.5). H^T on column 1:
  // w = v . (1, 2) = 2, (1, 2) - 1.6 * 2 * v = (-2.2, 0.4). Column 1:
  // alpha = 0.4, nothing below: tau = 0. Q = I - 1.6 v v^T =
  // {{-0.6, -0.8}, {-0.8, 0.6}}, and Q R = A.
  absl::StatusOr<Literal> r = RunHlo(QrModule("f64", {}, 2, 2), {Lit("f64[2,2] {{3,1},{4,2}}")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(LiteralsNear(r->element(0), Lit("f64[2,2] {{-5,-2.2},{0.5,0.4}}"), 1e-15));
  EXPECT_TRUE(LiteralsNear(r->element(1), Lit("f64[2]{0} {1.6,0}"), 1e-15));
  EXPECT_TRUE(LiteralsNear(r->element(2), Lit("f64[2,2] {{-0.6,-0.8},{-0.8,0.6}}"), 1e-15));
  // A column that is zero below a real pivot is left alone: tau 0, and a
  // negative pivot keeps its sign (beta = alpha).
  r = RunHlo(QrModule("f32", {}, 2, 2), {Lit("f32[2,2] {{-2,1},{0,3}}")});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(LiteralsNear(r->element(0), Lit("f32[2,2] {{-2,1},{0,3}}"), 0));
  EXPECT_TRUE(LiteralsNear(r->element(1), Lit("f32[2]{0} {0,0}"), 0));
  EXPECT_TRUE(LiteralsNear(r->element(2), Lit("f32[2,2] {{1,0},{0,1}}"), 0));
}

// The defining properties on one batch element of the module's result.
void CheckProperties(const Literal& a_literal, const Literal& result,
                     const std::vector<int64_t>& batch, bool complex, double tolerance) {
  const Matrix a = Read(a_literal, batch);
  const Matrix factors = Read(result.element(0), batch);
  const Matrix q = Read(result.element(2), batch);
  const int64_t m = a.m, n = a.n, k = std::min(m, n);
  std::vector<int64_t> tau_index = batch;
  tau_index.push_back(0);
  std::vector<Complex> taus(k);
  for (int64_t j = 0; j < k; ++j) {
    tau_index.back() = j;
    taus[j] = result.element(1).GetComplex(tau_index);
  }
  // R: the upper trapezoid of the first result (k x n), real diagonal.
  Matrix r = Zeros(k, n);
  for (int64_t i = 0; i < k; ++i) {
    for (int64_t j = i; j < n; ++j) r(i, j) = factors(i, j);
    EXPECT_EQ(factors(i, i).imag(), 0.0) << "diagonal " << i;
  }
  // Q R = A and Q^H Q = I.
  EXPECT_LE(MaxDifference(Multiply(q, r), a), tolerance) << "Q R != A";
  Matrix qh = Zeros(k, m);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) qh(j, i) = std::conj(q(i, j));
  }
  Matrix identity = Zeros(k, k);
  for (int64_t i = 0; i < k; ++i) identity(i, i) = 1.0;
  EXPECT_LE(MaxDifference(Multiply(qh, q), identity), tolerance) << "Q^H Q != I";
  // Q is H_0 ... H_{k-1}, H_j = I - tau_j v_j v_j^H, v_j from column j of
  // the first result below the diagonal (1 on it): built here explicitly.
  Matrix product = Zeros(m, m);
  for (int64_t i = 0; i < m; ++i) product(i, i) = 1.0;
  for (int64_t j = 0; j < k; ++j) {
    Matrix h = Zeros(m, m);
    for (int64_t x = 0; x < m; ++x) {
      for (int64_t y = 0; y < m; ++y) {
        const Complex vx = x < j ? 0.0 : x == j ? 1.0 : factors(x, j);
        const Complex vy = y < j ? 0.0 : y == j ? 1.0 : factors(y, j);
        h(x, y) = (x == y ? 1.0 : 0.0) - taus[j] * vx * std::conj(vy);
      }
    }
    product = Multiply(product, h);
  }
  Matrix thin = Zeros(m, k);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < k; ++j) thin(i, j) = product(i, j);
  }
  EXPECT_LE(MaxDifference(thin, q), tolerance) << "the product of the reflectors";
  if (!complex) {
    for (Complex tau : taus) EXPECT_TRUE(tau == 0.0 || (tau.real() >= 1 && tau.real() <= 2));
  }
}

TEST(QrTest, PropertiesOnRandomMatrices) {
  struct Case {
    std::vector<int64_t> batch;
    int64_t m, n;
  };
  const std::vector<Case> cases = {
      {{}, 4, 4}, {{}, 6, 3}, {{}, 3, 6}, {{}, 1, 1}, {{}, 1, 5}, {{}, 5, 1},
      {{2, 3}, 5, 4}, {{2}, 4, 7}, {{0}, 3, 3}, {{2}, 0, 3}, {{2}, 3, 0}, {{}, 17, 13},
  };
  std::mt19937_64 rng(5);
  for (const std::string type : {"f32", "f64", "c64", "c128"}) {
    const double tolerance = type == "f32" || type == "c64" ? 1e-5 : 1e-12;
    for (const Case& c : cases) {
      std::vector<int64_t> dims = c.batch;
      dims.insert(dims.end(), {c.m, c.n});
      SCOPED_TRACE(absl::StrCat(type, "[", Dims(dims), "]"));
      Literal a = Random(type, dims, rng);
      absl::StatusOr<Literal> r = RunHlo(QrModule(type, c.batch, c.m, c.n), {a});
      ASSERT_TRUE(r.ok()) << r.status();
      int64_t batch_count = 1;
      for (int64_t d : c.batch) batch_count *= d;
      for (int64_t b = 0; b < batch_count; ++b) {
        std::vector<int64_t> index(c.batch.size());
        for (int64_t d = static_cast<int64_t>(c.batch.size()) - 1, rest = b; d >= 0; --d) {
          index[d] = rest % c.batch[d];
          rest /= c.batch[d];
        }
        // The f32 result reconstructs the f32 input to its rounding.
        CheckProperties(a, *r, index, type[0] == 'c', tolerance * (c.m + c.n));
      }
    }
  }
}

// The product reads only the strict lower triangle of a's first k columns.
TEST(QrTest, ProductReadsOnlyTheVectors) {
  absl::StatusOr<Literal> r = RunHlo(R"(
HloModule m
ENTRY e {
  a = f64[3,2] constant({{99,99},{1,99},{2,3}})
  taus = f64[1] constant({0.5})
  ROOT q = f64[3,2] custom-call(a, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
})");
  ASSERT_TRUE(r.ok()) << r.status();
  // v = (1, 1, 2), H = I - 0.5 v v^T; its first two columns.
  EXPECT_TRUE(LiteralsNear(*r, Lit("f64[3,2] {{0.5,-0.5},{-0.5,0.5},{-1,-1}}"), 1e-15));
}

TEST(QrTest, ShapeErrors) {
  for (const char* root : {
           // Product: m < n; k > n; taus batch differs.
           "f32[2,3] custom-call(p0, p1), custom_call_target=\"ProductOfElementaryHouseholderReflectors\"",
           "f32[3,2] custom-call(p2, p3), custom_call_target=\"ProductOfElementaryHouseholderReflectors\"",
           "f32[3,2] custom-call(p2, p4), custom_call_target=\"ProductOfElementaryHouseholderReflectors\"",
           // Qr: wrong taus length; not a tuple; an integer type.
           "(f32[2,3], f32[3]) custom-call(p0), custom_call_target=\"Qr\"",
           "f32[2,3] custom-call(p0), custom_call_target=\"Qr\"",
           "(s32[2,2], s32[2]) custom-call(p5), custom_call_target=\"Qr\"",
       }) {
    const std::string hlo = absl::StrCat(
        "HloModule m\nENTRY e {\n  p0 = f32[2,3] parameter(0)\n  p1 = f32[2] parameter(1)\n"
        "  p2 = f32[3,2] parameter(2)\n  p3 = f32[3] parameter(3)\n"
        "  p4 = f32[2,2] parameter(4)\n  p5 = s32[2,2] parameter(5)\n  ROOT r = ",
        root, "\n}\n");
    std::vector<Literal> arguments;
    for (const char* shape : {"f32[2,3]", "f32[2]", "f32[3,2]", "f32[3]", "f32[2,2]", "s32[2,2]"}) {
      absl::StatusOr<Shape> parsed = ParseShape(shape);
      ASSERT_TRUE(parsed.ok());
      arguments.push_back(Literal(*parsed));
    }
    absl::StatusOr<Literal> r = RunHlo(hlo, arguments);
    EXPECT_FALSE(r.ok()) << root;
    if (!r.ok()) {
      EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
    }
  }
}

}  // namespace
}  // namespace xjit::testing
