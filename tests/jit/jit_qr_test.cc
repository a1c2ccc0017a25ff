// XLA's QR custom calls ("Qr", "ProductOfElementaryHouseholderReflectors")
// compiled as library calls (runtime/linalg/qr.h: OpenBLAS's ?geqrf and
// ?orgqr / ?ungqr), against the evaluator (interpreter/qr.cc): m > n, m < n,
// square, 1x1, size 0 and batch 0, batched, past LAPACK's blocking, f32 /
// f64 / c64 / c128, and column-major (in place), row-major and batch-minor
// (through scratch) matrices, strided taus.
//
// Tolerance: LAPACK rounds in the element type, the evaluator computes in
// double and rounds once; the sign conventions are the same, so the results
// are the same numbers up to rounding. Each result is compared element by
// element within 2e-5 (f32, c64) or 1e-12 (f64, c128) times (1 + its
// largest element's magnitude), on matrices kept well conditioned (a random
// [-1, 1] matrix plus max(m, n) on its diagonal; product operands whose
// taus make each reflector unitary).
//
// Also: a handler registered under "Qr" takes precedence on both backends,
// and a matrix inverse written with both calls and a triangular solve (the
// form of XLA's MatrixInverse test in ../shared/corpus) gives the inverse.
#include <algorithm>
#include <cmath>
#include <complex>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "runtime/host/custom_call_registry.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

using Complex = std::complex<double>;

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

double Tolerance(const std::string& type) {
  return type == "f32" || type == "c64" ? 2e-5 : 1e-12;
}

// Calls fn(index) for every element of `shape`.
template <typename F>
void ForEachElement(const Shape& shape, F&& fn) {
  if (shape.element_count() == 0) return;
  std::vector<int64_t> index(shape.rank(), 0);
  do {
    fn(index);
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
}

// Random [-1, 1] entries; `diagonal` added on each matrix's diagonal.
Literal WellConditioned(const Shape& shape, double diagonal, std::mt19937_64& rng) {
  Literal literal(shape);
  const bool complex = IsComplex(shape.element_type());
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int64_t rank = shape.rank();
  ForEachElement(shape, [&](const std::vector<int64_t>& index) {
    Complex value(u(rng), complex ? u(rng) : 0.0);
    if (rank >= 2 && index[rank - 1] == index[rank - 2]) value += diagonal;
    literal.SetComplex(index, value);
  });
  return literal;
}

// Taus for the vectors in `a`'s strict lower triangle that make each
// reflector unitary: tau_j = 2 / (1 + sum_{i > j} |a(i, j)|^2).
Literal UnitaryTaus(const Literal& a, const Shape& taus_shape) {
  Literal taus(taus_shape);
  const int64_t rank = a.shape().rank();
  const int64_t m = a.shape().dimensions(rank - 2);
  ForEachElement(taus_shape, [&](const std::vector<int64_t>& index) {
    std::vector<int64_t> at = index;
    const int64_t j = index.back();
    at.push_back(0);
    at[rank - 1] = j;
    double sum = 1.0;
    for (int64_t i = j + 1; i < m; ++i) {
      at[rank - 2] = i;
      sum += std::norm(a.GetComplex(at));
    }
    taus.SetComplex(index, Complex(2.0 / sum));
  });
  return taus;
}

// "" when `actual` matches `expected` within tolerance * (1 + max
// |expected|), per array (tuple elements each on their own); NaN only where
// NaN is expected.
std::string Compare(const Literal& expected, const Literal& actual, double tolerance) {
  if (expected.shape().IsTuple()) {
    if (!actual.shape().IsTuple() || actual.elements().size() != expected.elements().size()) {
      return "tuple structure differs";
    }
    for (size_t i = 0; i < expected.elements().size(); ++i) {
      std::string difference = Compare(expected.element(i), actual.element(i), tolerance);
      if (!difference.empty()) return absl::StrCat("element ", i, ": ", difference);
    }
    return "";
  }
  if (!expected.shape().SameDimensions(actual.shape()) ||
      expected.shape().element_type() != actual.shape().element_type()) {
    return absl::StrCat("shape ", actual.shape().ToString(), " != ", expected.shape().ToString());
  }
  double scale = 0;
  ForEachElement(expected.shape(), [&](const std::vector<int64_t>& index) {
    const double magnitude = std::abs(expected.GetComplex(index));
    if (std::isfinite(magnitude)) scale = std::max(scale, magnitude);
  });
  std::string difference;
  ForEachElement(expected.shape(), [&](const std::vector<int64_t>& index) {
    if (!difference.empty()) return;
    const Complex e = expected.GetComplex(index), a = actual.GetComplex(index);
    const bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
    const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
    const bool ok = e_nan || a_nan ? e_nan && a_nan : std::abs(a - e) <= tolerance * (1 + scale);
    if (!ok) {
      difference = absl::StrCat("at {", absl::StrJoin(index, ","), "}: expected (", e.real(), ",",
                                e.imag(), ") got (", a.real(), ",", a.imag(), ")");
    }
  });
  return difference;
}

// Compiles `hlo`, requires no interpreted step and a library call of
// `routine` (unless the result is empty), and compares with the evaluator.
void Check(const std::string& hlo, const std::vector<Literal>& arguments,
           const std::string& routine, double tolerance) {
  SCOPED_TRACE(hlo);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions(), &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.interpreted_steps.empty()) << absl::StrJoin(report.interpreted_steps, "\n");
  bool found = false;
  for (const LibraryCallInfo& call : report.library_calls) found |= call.routine == routine;
  const Shape& first = (*module)->entry()->parameter(0)->shape();
  if (first.element_count() > 0) {
    EXPECT_TRUE(found) << "no " << routine << " library call";
  }
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(Compare(*expected, *actual, tolerance), "");
}

struct QrCase {
  std::vector<int64_t> batch;
  int64_t m, n;
  std::string a_layout, result_layout, taus_layout;  // "" = default.
};

void CheckQr(const std::string& type, const QrCase& c, uint64_t seed) {
  std::vector<int64_t> dims = c.batch, taus = c.batch;
  dims.insert(dims.end(), {c.m, c.n});
  taus.push_back(std::min(c.m, c.n));
  const std::string hlo = OneOp(
      {absl::StrCat(type, "[", Dims(dims), "]", c.a_layout)},
      absl::StrCat("(", type, "[", Dims(dims), "]", c.result_layout, ", ", type, "[", Dims(taus),
                   "]", c.taus_layout, ") custom-call(p0), custom_call_target=\"Qr\""));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(WellConditioned((*module)->entry()->parameter(0)->shape(),
                                      static_cast<double>(std::max(c.m, c.n)), rng));
  Check(hlo, arguments, "qr", Tolerance(type));
}

struct ProductCase {
  std::vector<int64_t> batch;
  int64_t m, n, k;
  std::string a_layout, taus_layout, result_layout;
};

void CheckProduct(const std::string& type, const ProductCase& c, uint64_t seed) {
  std::vector<int64_t> dims = c.batch, taus = c.batch;
  dims.insert(dims.end(), {c.m, c.n});
  taus.push_back(c.k);
  const std::string hlo = OneOp(
      {absl::StrCat(type, "[", Dims(dims), "]", c.a_layout),
       absl::StrCat(type, "[", Dims(taus), "]", c.taus_layout)},
      absl::StrCat(type, "[", Dims(dims), "]", c.result_layout,
                   " custom-call(p0, p1), "
                   "custom_call_target=\"ProductOfElementaryHouseholderReflectors\""));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(WellConditioned((*module)->entry()->parameter(0)->shape(), 0.0, rng));
  arguments.push_back(UnitaryTaus(arguments[0], (*module)->entry()->parameter(1)->shape()));
  Check(hlo, arguments, "householder-product", Tolerance(type));
}

class JitQr : public ::testing::TestWithParam<std::string> {};

TEST_P(JitQr, Factorization) {
  const std::vector<QrCase> cases = {
      {{}, 4, 4, "", "", ""},
      {{}, 7, 3, "", "", ""},
      {{}, 3, 7, "", "", ""},
      {{}, 1, 1, "", "", ""},
      {{}, 1, 5, "", "", ""},
      {{}, 5, 1, "", "", ""},
      {{2, 3}, 5, 4, "", "", ""},
      {{0}, 3, 3, "", "", ""},
      {{2}, 0, 3, "", "", ""},
      {{2}, 3, 0, "", "", ""},
      {{}, 6, 5, "{0,1}", "{0,1}", ""},            // Column-major: in place.
      {{}, 5, 6, "{0,1}", "{1,0}", ""},
      {{3}, 4, 5, "{0,2,1}", "{1,0,2}", "{0,1}"},  // Batch-minor; strided taus.
      {{3}, 6, 4, "{1,2,0}", "{1,2,0}", "{1,0}"},  // Column-major, batch major.
      {{}, 70, 67, "", "{0,1}", ""},               // Past LAPACK's blocking.
      {{}, 40, 75, "", "", ""},
  };
  uint64_t seed = 1;
  for (const QrCase& c : cases) CheckQr(GetParam(), c, seed++);
}

TEST_P(JitQr, HouseholderProduct) {
  const std::vector<ProductCase> cases = {
      {{}, 4, 4, 4, "", "", ""},
      {{}, 7, 3, 3, "", "", ""},
      {{}, 7, 3, 2, "", "", ""},
      {{}, 5, 3, 0, "", "", ""},  // No reflectors: the identity's columns.
      {{}, 1, 1, 1, "", "", ""},
      {{}, 6, 1, 1, "", "", ""},
      {{2, 3}, 6, 4, 4, "", "", ""},
      {{0}, 3, 3, 3, "", "", ""},
      {{2}, 3, 0, 0, "", "", ""},
      {{}, 6, 5, 5, "{0,1}", "", "{0,1}"},
      {{3}, 5, 4, 3, "{0,2,1}", "{0,1}", "{1,0,2}"},
      {{3}, 6, 4, 4, "{1,2,0}", "{1,0}", "{1,2,0}"},
      {{}, 70, 67, 67, "", "", "{0,1}"},
  };
  uint64_t seed = 100;
  for (const ProductCase& c : cases) CheckProduct(GetParam(), c, seed++);
}

// NaN in one batch element's matrix stays in that element: the others match
// the evaluator, and both backends give NaN in that element's R.
TEST_P(JitQr, NaNStaysInItsBatchElement) {
  const std::string type = GetParam();
  const std::string hlo = OneOp(
      {absl::StrCat(type, "[3,4,4]")},
      absl::StrCat("(", type, "[3,4,4], ", type, "[3,4]) custom-call(p0), custom_call_target=\"Qr\""));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(3);
  std::vector<Literal> arguments;
  arguments.push_back(WellConditioned((*module)->entry()->parameter(0)->shape(), 4.0, rng));
  arguments[0].SetComplex({1, 2, 0}, Complex(std::numeric_limits<double>::quiet_NaN()));
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions());
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  for (const Literal* result : {&*expected, &*actual}) {
    EXPECT_TRUE(std::isnan(result->element(0).GetComplex({1, 0, 0}).real()));
  }
  // |R| and |v| stay below about 6 here (entries in [-1, 1] plus 4 on the
  // diagonal): the tolerance relative to that scale.
  for (int64_t b : {0, 2}) {
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const Complex e = expected->element(0).GetComplex({b, i, j});
        EXPECT_LE(std::abs(actual->element(0).GetComplex({b, i, j}) - e), Tolerance(type) * 7)
            << b << "," << i << "," << j;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, JitQr, ::testing::Values("f32", "f64", "c64", "c128"));

// A pivot of exactly -0.0: XLA's test (alpha < 0) and so the evaluator take
// it as positive (beta = -|x|), LAPACK's SIGN as negative (beta = +|x|), the
// one documented difference (docs/linalg.md). Both are QR factorisations:
// Q R = A with Q = H_0 H_1 built from each backend's own result.
TEST(JitQrSigns, NegativeZeroPivot) {
  const std::string hlo = OneOp({"f64[2,2]"}, "(f64[2,2], f64[2]) custom-call(p0), "
                                              "custom_call_target=\"Qr\"");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromDoubles((*module)->entry()->parameter(0)->shape(),
                                           {-0.0, 1.0, 1.0, 0.0}));
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions());
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<Literal> jit = (*executable)->Run(arguments);
  absl::StatusOr<Literal> evaluator = EvaluateModule(**module, arguments);
  ASSERT_TRUE(jit.ok()) << jit.status();
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  EXPECT_EQ(evaluator->element(0).GetDouble({0, 0}), -1.0);
  EXPECT_EQ(jit->element(0).GetDouble({0, 0}), 1.0);
  for (const Literal* result : {&*jit, &*evaluator}) {
    const Literal& f = result->element(0);
    // Q = (I - tau0 v0 v0^T)(I - tau1 e1 e1^T), v0 = (1, f(1, 0)).
    const double tau0 = result->element(1).GetDouble({0});
    const double tau1 = result->element(1).GetDouble({1});
    const double v = f.GetDouble({1, 0});
    const double h[2][2] = {{1 - tau0, -tau0 * v}, {-tau0 * v, 1 - tau0 * v * v}};
    const double q[2][2] = {{h[0][0], h[0][1] * (1 - tau1)}, {h[1][0], h[1][1] * (1 - tau1)}};
    const double r[2][2] = {{f.GetDouble({0, 0}), f.GetDouble({0, 1})}, {0, f.GetDouble({1, 1})}};
    const double a[2][2] = {{0, 1}, {1, 0}};
    for (int i = 0; i < 2; ++i) {
      for (int j = 0; j < 2; ++j) {
        EXPECT_NEAR(q[i][0] * r[0][j] + q[i][1] * r[1][j], a[i][j], 1e-15) << i << "," << j;
      }
    }
  }
}

// A handler registered under "Qr" runs instead of the built-in meaning.
extern "C" void XjitTestFakeQr(void* out, void** in) {
  void** table = static_cast<void**>(out);
  const float* a = static_cast<const float*>(in[0]);
  for (int i = 0; i < 4; ++i) static_cast<float*>(table[0])[i] = a[i] + 100.0f;
  for (int i = 0; i < 2; ++i) static_cast<float*>(table[1])[i] = -1.0f;
}

TEST(JitQrRegistry, RegisteredHandlerTakesPrecedence) {
  CustomCallRegistry::Global().Register("Qr", &XjitTestFakeQr);
  const std::string hlo =
      OneOp({"f32[2,2]"}, "(f32[2,2], f32[2]) custom-call(p0), custom_call_target=\"Qr\"");
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions(), &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_EQ(report.library_calls.size(), 1u);
  EXPECT_EQ(report.library_calls[0].routine, "custom call Qr");
  std::vector<Literal> arguments;
  arguments.push_back(Literal::FromDoubles(module.value()->entry()->parameter(0)->shape(),
                                           {1, 2, 3, 4}));
  absl::StatusOr<Literal> jit = (*executable)->Run(arguments);
  absl::StatusOr<Literal> evaluator = EvaluateModule(**module, arguments);
  CustomCallRegistry::Global().Unregister("Qr");
  ASSERT_TRUE(jit.ok()) << jit.status();
  ASSERT_TRUE(evaluator.ok()) << evaluator.status();
  for (const Literal* result : {&*jit, &*evaluator}) {
    EXPECT_EQ(result->element(0).GetDouble({1, 1}), 104.0);
    EXPECT_EQ(result->element(1).GetDouble({0}), -1.0);
  }
}

// The inverse through QR, as XLA's MatrixInverse test writes it: A = Q R,
// A^-1 = R^-1 Q^T (R from the upper triangle of Qr's first result, Q^T
// transposed from the product, then a left upper triangular solve).
constexpr char kInverseModule[] = R"(HloModule inverse
ENTRY inverse {
  a = T[2,3,4,4] parameter(0)
  qr = (T[2,3,4,4], T[2,3,4]) custom-call(a), custom_call_target="Qr"
  factors = T[2,3,4,4] get-tuple-element(qr), index=0
  taus = T[2,3,4] get-tuple-element(qr), index=1
  rows = s32[4,4] iota(), iota_dimension=0
  cols = s32[4,4] iota(), iota_dimension=1
  below = pred[4,4] compare(rows, cols), direction=GT
  below_b = pred[2,3,4,4] broadcast(below), dimensions={2,3}
  zero = T[] constant(0)
  zeros = T[2,3,4,4] broadcast(zero), dimensions={}
  r = T[2,3,4,4] select(below_b, zeros, factors)
  q = T[2,3,4,4] custom-call(factors, taus), custom_call_target="ProductOfElementaryHouseholderReflectors"
  qt = T[2,3,4,4]{2,3,1,0} transpose(q), dimensions={0,1,3,2}
  ROOT x = T[2,3,4,4]{2,3,1,0} triangular-solve(r, qt), left_side=true, lower=false, transpose_a=NO_TRANSPOSE
}
)";

std::string WithType(std::string text, const std::string& type) {
  for (size_t at = text.find("T["); at != std::string::npos; at = text.find("T[", at)) {
    text.replace(at, 1, type);
  }
  return text;
}

std::string InverseModule(const std::string& type) { return WithType(kInverseModule, type); }

// max |A X - I| over the batch: X is A's inverse when small.
double InverseResidual(const Literal& a, const Literal& x) {
  const Shape& shape = a.shape();
  const int64_t rank = shape.rank(), n = shape.dimensions(rank - 1);
  double worst = 0;
  ForEachElement(shape, [&](const std::vector<int64_t>& index) {
    // index = (batch..., i, j): (A X)(i, j) - delta(i, j).
    const int64_t i = index[rank - 2], j = index[rank - 1];
    std::vector<int64_t> ai = index, xj = index;
    Complex sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      ai[rank - 1] = k;
      xj[rank - 2] = k;
      xj[rank - 1] = j;
      sum += a.GetComplex(ai) * x.GetComplex(xj);
    }
    worst = std::max(worst, std::abs(sum - Complex(i == j ? 1.0 : 0.0)));
  });
  return worst;
}

TEST(JitQrInverse, MatrixInverseModule) {
  for (const std::string type : {"f32", "f64"}) {
    const std::string hlo = InverseModule(type);
    SCOPED_TRACE(hlo);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(11);
    std::vector<Literal> arguments;
    arguments.push_back(WellConditioned((*module)->entry()->parameter(0)->shape(), 4.0, rng));
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, CompileOptions(), &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    EXPECT_TRUE(report.interpreted_steps.empty()) << absl::StrJoin(report.interpreted_steps, "\n");
    absl::StatusOr<Literal> jit = (*executable)->Run(arguments);
    ASSERT_TRUE(jit.ok()) << jit.status();
    absl::StatusOr<Literal> evaluator = EvaluateModule(**module, arguments);
    ASSERT_TRUE(evaluator.ok()) << evaluator.status();
    const double tolerance = type == "f32" ? 1e-5 : 1e-13;
    EXPECT_LE(InverseResidual(arguments[0], *jit), tolerance);
    EXPECT_LE(InverseResidual(arguments[0], *evaluator), tolerance);
    EXPECT_EQ(Compare(*evaluator, *jit, Tolerance(type)), "");
  }
}

// The corpus module itself (XLA's matmul_test MatrixInverse), when
// ../shared is here: compiled without interpreted steps, it inverts.
TEST(JitQrInverse, CorpusModule) {
  const std::filesystem::path path = std::filesystem::path(XJIT_SHARED_DIR) / "corpus" /
                                     "xla-tests" / "xla__tests__matmul_test.cc__L96.hlo";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path << " (../shared is absent)";
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(text.str());
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(12);
  std::vector<Literal> arguments;
  arguments.push_back(WellConditioned((*module)->entry()->parameter(0)->shape(), 2.0, rng));
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions(), &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  EXPECT_TRUE(report.interpreted_steps.empty()) << absl::StrJoin(report.interpreted_steps, "\n");
  absl::StatusOr<Literal> jit = (*executable)->Run(arguments);
  ASSERT_TRUE(jit.ok()) << jit.status();
  EXPECT_LE(InverseResidual(arguments[0], *jit), 1e-5);
}

}  // namespace
}  // namespace xjit::jit::testing
