// cholesky and triangular-solve compiled as library calls (runtime/linalg:
// OpenBLAS's ?potrf and ?trsm), against the evaluator: every left_side /
// lower / transpose_a / unit_diagonal form, f32/f64/c64/c128, batched, odd
// sizes, size-0 and size-1 dimensions, and operands and results in row-major,
// column-major and batch-minor layouts (the last go through scratch).
//
// LAPACK rounds in the element type where the evaluator computes in double,
// so results agree to a tolerance relative to the result's size, on inputs
// that keep the problems well conditioned (Hermitian positive definite
// matrices; triangular matrices with a dominant diagonal). What must match
// exactly: the zero triangle of a cholesky result, the NaN matrix of a
// batch element that is not positive definite, and that the triangle (and,
// with unit_diagonal, the diagonal) a solve must not read is not read: it
// holds NaN here.
#include <cmath>
#include <complex>
#include <limits>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

using Complex = std::complex<double>;

// Calls fn(batch index prefix) for every batch element of `dims`.
template <typename F>
void ForEachBatch(const std::vector<int64_t>& dims, F&& fn) {
  std::vector<int64_t> batch(dims.begin(), dims.end() - 2);
  for (int64_t d : batch) {
    if (d == 0) return;
  }
  std::vector<int64_t> index(batch.size(), 0);
  while (true) {
    fn(index);
    int64_t d = static_cast<int64_t>(batch.size()) - 1;
    for (; d >= 0; --d) {
      if (++index[d] < batch[d]) break;
      index[d] = 0;
    }
    if (d < 0) return;
  }
}

std::vector<int64_t> At(std::vector<int64_t> batch, int64_t i, int64_t j) {
  batch.push_back(i);
  batch.push_back(j);
  return batch;
}

bool IsComplexShape(const Shape& shape) { return IsComplex(shape.element_type()); }

// Hermitian positive definite matrices M M^H + n I (both triangles set).
Literal PositiveDefinite(const Shape& shape, std::mt19937_64& rng) {
  Literal literal(shape);
  const std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  const int64_t n = dims.back();
  const bool complex = IsComplexShape(shape);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ForEachBatch(dims, [&](const std::vector<int64_t>& b) {
    std::vector<Complex> m(n * n);
    for (Complex& x : m) x = Complex(u(rng), complex ? u(rng) : 0.0);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex sum = i == j ? Complex(static_cast<double>(n)) : Complex(0.0);
        for (int64_t k = 0; k < n; ++k) sum += m[i * n + k] * std::conj(m[j * n + k]);
        literal.SetComplex(At(b, i, j), sum);
      }
    }
  });
  return literal;
}

// Triangular matrices (triangle `lower`) with entries in [-1, 1] / n off the
// diagonal and |diagonal| in [1, 2]; NaN in the other triangle, and on the
// diagonal too when `unit_diagonal`: a solve that reads them fails.
Literal Triangular(const Shape& shape, bool lower, bool unit_diagonal, std::mt19937_64& rng) {
  Literal literal(shape);
  const std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  const int64_t n = dims.back();
  const bool complex = IsComplexShape(shape);
  const double nan = std::numeric_limits<double>::quiet_NaN();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  ForEachBatch(dims, [&](const std::vector<int64_t>& b) {
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex value;
        if (i == j) {
          const double magnitude = 1.0 + std::abs(u(rng));
          value = unit_diagonal ? Complex(nan, complex ? nan : 0.0)
                                : Complex(u(rng) < 0 ? -magnitude : magnitude,
                                          complex ? u(rng) : 0.0);
        } else if (lower ? j < i : j > i) {
          value = Complex(u(rng), complex ? u(rng) : 0.0) / static_cast<double>(n);
        } else {
          value = Complex(nan, complex ? nan : 0.0);
        }
        literal.SetComplex(At(b, i, j), value);
      }
    }
  });
  return literal;
}

Literal Uniform(const Shape& shape, std::mt19937_64& rng) {
  Literal literal(shape);
  const bool complex = IsComplexShape(shape);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<int64_t> index(shape.rank(), 0);
  if (shape.element_count() == 0) return literal;
  do {
    literal.SetComplex(index, Complex(u(rng), complex ? u(rng) : 0.0));
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return literal;
}

// "" when `actual` matches `expected` within `tolerance` * (1 + max |expected|)
// per element (NaN only where NaN is expected; exact zeros stay exact).
std::string Compare(const Literal& expected, const Literal& actual, double tolerance) {
  if (!(expected.shape() == actual.shape())) {
    return absl::StrCat("shape ", actual.shape().ToString(true), " != ",
                        expected.shape().ToString(true));
  }
  const Shape& shape = expected.shape();
  if (shape.element_count() == 0) return "";
  double scale = 0;
  std::vector<int64_t> index(shape.rank(), 0);
  do {
    const Complex e = expected.GetComplex(index);
    if (std::isfinite(std::abs(e))) scale = std::max(scale, std::abs(e));
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  std::fill(index.begin(), index.end(), 0);
  do {
    const Complex e = expected.GetComplex(index);
    const Complex a = actual.GetComplex(index);
    const bool e_nan = std::isnan(e.real()) || std::isnan(e.imag());
    const bool a_nan = std::isnan(a.real()) || std::isnan(a.imag());
    bool ok;
    if (e_nan || a_nan) {
      ok = e_nan && a_nan;
    } else if (e == Complex(0.0)) {
      ok = a == Complex(0.0);
    } else {
      ok = std::abs(a - e) <= tolerance * (1.0 + scale);
    }
    if (!ok) {
      return absl::StrCat("at {", absl::StrJoin(index, ","), "}: expected (", e.real(), ",",
                          e.imag(), ") got (", a.real(), ",", a.imag(), ")");
    }
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return "";
}

double Tolerance(const std::string& type) {
  return type == "f32" || type == "c64" ? 2e-5 : 1e-12;
}

// Compiles `hlo`, requires exactly one library call of `routine` and no
// interpreted step, and compares with the evaluator on `arguments`.
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
  if (expected->shape().element_count() > 0) {
    ASSERT_EQ(report.library_calls.size(), 1u);
    EXPECT_EQ(report.library_calls[0].routine, routine);
  }
  absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(Compare(*expected, *actual, tolerance), "");
}

std::string Dims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, ","); }

// ---------------------------------------------------------------- cholesky ---

struct CholeskyCase {
  std::vector<int64_t> batch;
  int64_t n;
  std::string in_layout, out_layout;  // "" = default
};

void CheckCholesky(const std::string& type, bool lower, const CholeskyCase& c, uint64_t seed) {
  std::vector<int64_t> dims = c.batch;
  dims.push_back(c.n);
  dims.push_back(c.n);
  const std::string in = absl::StrCat(type, "[", Dims(dims), "]", c.in_layout);
  const std::string out = absl::StrCat(type, "[", Dims(dims), "]", c.out_layout);
  const std::string hlo = OneOp({in}, absl::StrCat(out, " cholesky(p0), lower=",
                                                   lower ? "true" : "false"));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(PositiveDefinite((*module)->entry()->parameter(0)->shape(), rng));
  Check(hlo, arguments, "cholesky", Tolerance(type));
}

class JitCholesky : public ::testing::TestWithParam<std::string> {};

TEST_P(JitCholesky, AllForms) {
  const std::vector<CholeskyCase> cases = {
      {{}, 1, "", ""},
      {{}, 4, "", ""},
      {{}, 7, "{0,1}", "{0,1}"},
      {{}, 6, "{1,0}", "{0,1}"},
      {{}, 5, "{0,1}", "{1,0}"},
      {{2, 3}, 5, "", ""},
      {{3}, 9, "{0,2,1}", "{0,1,2}"},   // Batch-minor result: scratch.
      {{3}, 4, "{1,2,0}", "{1,2,0}"},   // Column-major matrices, batch major.
      {{0}, 3, "", ""},
      {{2}, 0, "", ""},
      {{1, 1}, 1, "", ""},
      {{}, 67, "", ""},  // Past OpenBLAS's blocking.
  };
  uint64_t seed = 1;
  for (bool lower : {true, false}) {
    for (const CholeskyCase& c : cases) CheckCholesky(GetParam(), lower, c, seed++);
  }
}

// A batch element that is not positive definite (a negative pivot, a NaN on
// the diagonal, the zero matrix) gives a NaN matrix, the others their
// factors.
TEST_P(JitCholesky, NotPositiveDefinite) {
  const std::string type = GetParam();
  for (bool lower : {true, false}) {
    const std::string hlo =
        OneOp({absl::StrCat(type, "[4,4,4]")},
              absl::StrCat(type, "[4,4,4] cholesky(p0), lower=", lower ? "true" : "false"));
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok());
    std::mt19937_64 rng(7);
    std::vector<Literal> arguments;
    arguments.push_back(PositiveDefinite((*module)->entry()->parameter(0)->shape(), rng));
    arguments[0].SetComplex({1, 2, 2}, Complex(-50.0));   // Indefinite.
    arguments[0].SetComplex({2, 3, 3}, Complex(std::numeric_limits<double>::quiet_NaN()));
    for (int64_t i = 0; i < 4; ++i) {  // Zero: positive semi-definite only.
      for (int64_t j = 0; j < 4; ++j) arguments[0].SetComplex({3, i, j}, Complex(0.0));
    }
    Check(hlo, arguments, "cholesky", Tolerance(type));
  }
}

INSTANTIATE_TEST_SUITE_P(Types, JitCholesky, ::testing::Values("f32", "f64", "c64", "c128"));

// -------------------------------------------------------- triangular-solve ---

struct SolveCase {
  std::vector<int64_t> batch;
  int64_t m, other;  // A is m x m; B is m x other (left) or other x m.
  std::string a_layout, b_layout, out_layout;
};

void CheckSolve(const std::string& type, bool left, bool lower, const std::string& transpose,
                bool unit, const SolveCase& c, uint64_t seed) {
  std::vector<int64_t> a_dims = c.batch, b_dims = c.batch;
  a_dims.insert(a_dims.end(), {c.m, c.m});
  if (left) {
    b_dims.insert(b_dims.end(), {c.m, c.other});
  } else {
    b_dims.insert(b_dims.end(), {c.other, c.m});
  }
  const std::string hlo = OneOp(
      {absl::StrCat(type, "[", Dims(a_dims), "]", c.a_layout),
       absl::StrCat(type, "[", Dims(b_dims), "]", c.b_layout)},
      absl::StrCat(type, "[", Dims(b_dims), "]", c.out_layout,
                   " triangular-solve(p0, p1), left_side=", left ? "true" : "false",
                   ", lower=", lower ? "true" : "false",
                   ", unit_diagonal=", unit ? "true" : "false", ", transpose_a=", transpose));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status() << "\n" << hlo;
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(Triangular((*module)->entry()->parameter(0)->shape(), lower, unit, rng));
  arguments.push_back(Uniform((*module)->entry()->parameter(1)->shape(), rng));
  Check(hlo, arguments, "triangular-solve", Tolerance(type));
}

class JitTriangularSolve : public ::testing::TestWithParam<std::string> {};

// Every form on batched odd sizes, both contiguous layouts of each operand.
TEST_P(JitTriangularSolve, AllForms) {
  uint64_t seed = 1;
  for (bool left : {true, false}) {
    for (bool lower : {true, false}) {
      for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
        for (bool unit : {false, true}) {
          for (const SolveCase& c : std::vector<SolveCase>{
                   {{2, 3}, 5, 3, "", "", ""},
                   {{}, 7, 4, "{0,1}", "", ""},
                   {{}, 6, 5, "", "{0,1}", "{0,1}"},
                   {{}, 5, 2, "{0,1}", "{1,0}", "{0,1}"},
               }) {
            CheckSolve(GetParam(), left, lower, transpose, unit, c, seed++);
          }
        }
      }
    }
  }
}

// Degenerate and awkward shapes: size 0 and 1, batch-minor layouts
// (scratch copies of A and X), matrices past OpenBLAS's blocking.
TEST_P(JitTriangularSolve, Shapes) {
  const std::vector<SolveCase> cases = {
      {{}, 1, 1, "", "", ""},
      {{}, 1, 6, "", "", ""},
      {{}, 6, 1, "", "", ""},
      {{0}, 3, 2, "", "", ""},
      {{2}, 3, 0, "", "", ""},
      {{2}, 0, 3, "", "", ""},
      {{3}, 4, 5, "{0,2,1}", "{0,1,2}", "{0,2,1}"},
      {{3}, 4, 5, "{1,2,0}", "{1,0,2}", "{0,1,2}"},
      {{}, 70, 33, "", "", ""},
  };
  uint64_t seed = 100;
  for (bool left : {true, false}) {
    for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
      for (const SolveCase& c : cases) {
        CheckSolve(GetParam(), left, /*lower=*/seed % 2 == 0, transpose, /*unit=*/seed % 3 == 0,
                   c, seed);
        ++seed;
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, JitTriangularSolve,
                         ::testing::Values("f32", "f64", "c64", "c128"));

// ------------------------------------ jaxlib's trsm and getrf, tiny matrices ---
// runtime/host/small_lapack_internal.h solves and factors matrices up to
// 16 x 16 itself (OpenBLAS above, and for trsm with more right-hand sides).
// Both backends run the custom calls through that code, so the oracle for
// trsm is the evaluator's own triangular-solve (in double) on the same
// operands; for getrf, P L U = A rebuilt in double, multipliers bounded
// (partial pivoting) and LAPACK's info. Orders 1-5, 16 (the largest small
// one) and 17 (OpenBLAS), column-major as jaxlib asks, and row-major
// operands (gathered through scratch).

std::string TypeLetter(const std::string& type) {
  return type == "f32" ? "s" : type == "f64" ? "d" : type == "c64" ? "c" : "z";
}

// The module's result on the JIT.
absl::StatusOr<Literal> RunJit(const Module& module, absl::Span<const Literal> arguments) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, CompileOptions(), nullptr);
  if (!executable.ok()) return executable.status();
  return (*executable)->Run(arguments);
}

void CheckJaxlibTrsm(const std::string& type, char side, char uplo, char trans, char diag,
                     int64_t batch, int64_t m, int64_t other, const std::string& layout,
                     uint64_t seed) {
  const bool left = side == 'L';
  const std::string a_shape = absl::StrCat(type, "[", batch, ",", m, ",", m, "]", layout);
  const std::string b_shape =
      absl::StrCat(type, "[", batch, ",", left ? m : other, ",", left ? other : m, "]", layout);
  const std::string call = absl::StrCat(
      b_shape, " custom-call(p0, p1), custom_call_target=\"lapack_", TypeLetter(type),
      "trsm_ffi\", operand_layout_constraints={", a_shape, ", ", b_shape,
      "}, output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, "
      "backend_config={diag = ", static_cast<int>(diag), " : ui8, side = ",
      static_cast<int>(side), " : ui8, trans_x = ", static_cast<int>(trans),
      " : ui8, uplo = ", static_cast<int>(uplo), " : ui8}");
  const std::string hlo = OneOp({a_shape, b_shape}, call);
  const std::string reference = OneOp(
      {a_shape, b_shape},
      absl::StrCat(b_shape, " triangular-solve(p0, p1), left_side=", left ? "true" : "false",
                   ", lower=", uplo == 'L' ? "true" : "false",
                   ", unit_diagonal=", diag == 'U' ? "true" : "false", ", transpose_a=",
                   trans == 'N' ? "NO_TRANSPOSE" : trans == 'T' ? "TRANSPOSE" : "ADJOINT"));
  SCOPED_TRACE(hlo);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  absl::StatusOr<std::unique_ptr<Module>> reference_module = ParseVerified(reference);
  ASSERT_TRUE(reference_module.ok()) << reference_module.status();
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(
      Triangular((*module)->entry()->parameter(0)->shape(), uplo == 'L', diag == 'U', rng));
  arguments.push_back(Uniform((*module)->entry()->parameter(1)->shape(), rng));
  absl::StatusOr<Literal> expected = EvaluateModule(**reference_module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  absl::StatusOr<Literal> evaluated = EvaluateModule(**module, arguments);
  ASSERT_TRUE(evaluated.ok()) << evaluated.status();
  absl::StatusOr<Literal> actual = RunJit(**module, arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(Compare(*expected, *actual, Tolerance(type)), "");
  // Both backends run the same routine: the same bits.
  EXPECT_EQ(Compare(*evaluated, *actual, 0), "");
}

class JitJaxlibSmallLapack : public ::testing::TestWithParam<std::string> {};

TEST_P(JitJaxlibSmallLapack, TrsmEveryForm) {
  uint64_t seed = 500;
  for (char side : {'L', 'R'}) {
    for (char uplo : {'L', 'U'}) {
      for (char trans : {'N', 'T', 'C'}) {
        for (char diag : {'N', 'U'}) {
          for (int64_t m : {1, 3, 5, 16, 17}) {
            CheckJaxlibTrsm(GetParam(), side, uplo, trans, diag, /*batch=*/3, m,
                            /*other=*/m == 3 ? 1 : 4, "{1,2,0}", seed++);
          }
          CheckJaxlibTrsm(GetParam(), side, uplo, trans, diag, 2, 4, 3, "{2,1,0}", seed++);
          // Many right-hand sides: OpenBLAS.
          CheckJaxlibTrsm(GetParam(), side, uplo, trans, diag, 2, 5, 40, "{1,2,0}", seed++);
        }
      }
    }
  }
}

// getrf of a batch of m x n matrices: P L U rebuilt from the result and the
// pivots equals A; every multiplier is bounded as partial pivoting bounds it;
// info 0.
void CheckJaxlibGetrf(const std::string& type, int64_t batch, int64_t m, int64_t n,
                      const std::string& layout, uint64_t seed) {
  const int64_t k = std::min(m, n);
  const std::string a_shape = absl::StrCat(type, "[", batch, ",", m, ",", n, "]", layout);
  const std::string hlo = OneOp(
      {a_shape},
      absl::StrCat("(", a_shape, ", s32[", batch, ",", k, "]{1,0}, s32[", batch,
                   "]{0}) custom-call(p0), custom_call_target=\"lapack_", TypeLetter(type),
                   "getrf_ffi\", operand_layout_constraints={", a_shape,
                   "}, output_to_operand_aliasing={{0}: (0, {})}, "
                   "api_version=API_VERSION_TYPED_FFI"));
  SCOPED_TRACE(hlo);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  arguments.push_back(Uniform((*module)->entry()->parameter(0)->shape(), rng));
  const Literal& a = arguments[0];
  absl::StatusOr<Literal> evaluated = EvaluateModule(**module, arguments);
  ASSERT_TRUE(evaluated.ok()) << evaluated.status();
  absl::StatusOr<Literal> actual = RunJit(**module, arguments);
  ASSERT_TRUE(actual.ok()) << actual.status();
  ASSERT_EQ(actual->elements().size(), 3u);
  for (size_t e = 0; e < 3; ++e) {
    EXPECT_EQ(Compare(evaluated->elements()[e], actual->elements()[e], 0), "") << "result " << e;
  }
  const Literal& lu = actual->elements()[0];
  const Literal& pivots = actual->elements()[1];
  const Literal& info = actual->elements()[2];
  const double tolerance = Tolerance(type) * static_cast<double>(n);
  for (int64_t b = 0; b < batch; ++b) {
    EXPECT_EQ(info.GetInt({b}), 0);
    // Rows of P^T A, swapped as the pivots say.
    std::vector<int64_t> row(m);
    for (int64_t i = 0; i < m; ++i) row[i] = i;
    for (int64_t j = 0; j < k; ++j) {
      const int64_t p = pivots.GetInt({b, j}) - 1;
      ASSERT_GE(p, j);
      ASSERT_LT(p, m);
      std::swap(row[j], row[p]);
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        Complex sum = 0;
        for (int64_t t = 0; t <= std::min(i, j) && t < k; ++t) {
          const Complex l = t == i ? Complex(1) : lu.GetComplex({b, i, t});
          sum += l * lu.GetComplex({b, t, j});
        }
        const Complex want = a.GetComplex({b, row[i], j});
        EXPECT_LE(std::abs(sum - want), tolerance) << "batch " << b << " at " << i << "," << j;
        if (j < i && j < k) {
          // The pivot is the largest in |re| + |im| (LAPACK's i?amax): a
          // multiplier's modulus is at most 1, or sqrt(2) for complex ones.
          const double bound = IsComplex(lu.shape().element_type()) ? std::sqrt(2.0) : 1.0;
          EXPECT_LE(std::abs(lu.GetComplex({b, i, j})), bound + 1e-6);
        }
      }
    }
  }
}

TEST_P(JitJaxlibSmallLapack, GetrfShapes) {
  uint64_t seed = 900;
  for (const auto& [m, n] : std::vector<std::pair<int64_t, int64_t>>{
           {1, 1}, {2, 2}, {3, 3}, {5, 5}, {4, 2}, {2, 5}, {16, 16}, {17, 17}}) {
    CheckJaxlibGetrf(GetParam(), 4, m, n, "{1,2,0}", seed++);
  }
  CheckJaxlibGetrf(GetParam(), 2, 3, 3, "{2,1,0}", seed++);
}

// A zero column: no pivot there, info names it (1-based), the rest goes on.
TEST_P(JitJaxlibSmallLapack, GetrfSingularInfo) {
  const std::string type = GetParam();
  const std::string a_shape = absl::StrCat(type, "[1,3,3]{1,2,0}");
  const std::string hlo = OneOp(
      {a_shape},
      absl::StrCat("(", a_shape, ", s32[1,3]{1,0}, s32[1]{0}) custom-call(p0), "
                   "custom_call_target=\"lapack_", TypeLetter(type), "getrf_ffi\", "
                   "operand_layout_constraints={", a_shape, "}, "
                   "output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI"));
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  Literal a((*module)->entry()->parameter(0)->shape());
  const double values[3][3] = {{2, 0, 1}, {4, 0, 3}, {1, 0, 5}};
  for (int64_t i = 0; i < 3; ++i) {
    for (int64_t j = 0; j < 3; ++j) a.SetComplex({0, i, j}, Complex(values[i][j], 0));
  }
  absl::StatusOr<Literal> actual = RunJit(**module, {a});
  ASSERT_TRUE(actual.ok()) << actual.status();
  EXPECT_EQ(actual->elements()[2].GetInt({0}), 2);
  EXPECT_EQ(actual->elements()[1].GetInt({0, 0}), 2);  // |4| is the largest.
  EXPECT_EQ(actual->elements()[1].GetInt({0, 1}), 2);  // No pivot: the diagonal.
}

INSTANTIATE_TEST_SUITE_P(Types, JitJaxlibSmallLapack,
                         ::testing::Values("f32", "f64", "c64", "c128"));

}  // namespace
}  // namespace xjit::jit::testing
