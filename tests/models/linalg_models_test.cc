// jax.numpy.linalg / jax.scipy.linalg modules (models/linalg/generate.py) on
// both backends against XLA:CPU's outputs: jaxlib's LAPACK custom calls
// (runtime/host/jaxlib_lapack.h).
//
// Every fixture directory under XJIT_LINALG_MODELS (models/linalg/fixtures,
// meson sets it) is one case: nothing is skipped, and the directory must hold
// at least one. For every case and backend the test parses and verifies the
// module, runs it on argI.npy and compares each output with XLA's outI.npy.
// On the JIT the compile report must list no interpreted step and at least
// one `lapack` library call.
//
// Bound (docs/linalg.md): |xjit - XLA| <= tol * max(1, max |XLA's array|)
// per element, tol = 2e-4 for f32 / c64 outputs and 1e-10 for f64 / c128
// (about 1700 and 450000 units of roundoff). The inputs are well conditioned
// (condition numbers below about 10, sizes up to 7), so each factorisation is
// accurate to a few n u ||A||; outputs that are not unique (eigenvectors, SVD
// vectors, Schur and Hessenberg forms, Q's signs) enter only through
// reconstructions and residuals the module computes (A V - V diag(w),
// U^H U, Q R, ...), whose XLA values are rounding noise around 0 or I, hence
// the absolute floor of 1. Integer outputs (pivots) compare exactly; NaN
// matches NaN (a failed factorisation).
#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/models/fixture_files.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "tools/npy.h"

namespace xjit {
namespace {

namespace fs = std::filesystem;
using fixtures::CountFiles;
using fixtures::ForEachIndex;
using fixtures::ReadFile;

enum class Backend { kJit, kInterpreter };

struct Param {
  std::string name;
  Backend backend;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.name << (p.backend == Backend::kJit ? " on the jit" : " on the interpreter");
}

std::string ParamName(const testing::TestParamInfo<Param>& info) {
  return absl::StrCat(info.param.name, info.param.backend == Backend::kJit ? "_jit" : "_interp");
}

fs::path Root() {
  const char* root = std::getenv("XJIT_LINALG_MODELS");
  return fs::path(root != nullptr ? root : "models/linalg/fixtures");
}

double Tolerance(ElementType type) {
  return type == ElementType::kF32 || type == ElementType::kC64 ? 2e-4 : 1e-10;
}

// "" when `got` matches `want` within the bound above; else what differs.
std::string Compare(const Literal& want, const Literal& got, double* worst_ratio) {
  const Shape& shape = want.shape();
  const std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  const ElementType type = shape.element_type();
  const bool complex = IsComplex(type);
  const bool is_float = complex || IsFloat(type);
  auto value = [&](const Literal& l, const std::vector<int64_t>& i) {
    return complex ? l.GetComplex(i) : std::complex<double>(l.GetDouble(i), 0);
  };
  double scale = 1;
  if (is_float) {
    ForEachIndex(dims, [&](const std::vector<int64_t>& i) {
      const double v = std::abs(value(want, i));
      if (std::isfinite(v)) scale = std::max(scale, v);
    });
  }
  const double bound = is_float ? Tolerance(type) * scale : 0;
  int64_t bad = 0;
  std::string first;
  ForEachIndex(dims, [&](const std::vector<int64_t>& i) {
    bool ok;
    std::string seen;
    if (is_float) {
      const std::complex<double> w = value(want, i), g = value(got, i);
      const bool w_nan = std::isnan(w.real()) || std::isnan(w.imag());
      const bool g_nan = std::isnan(g.real()) || std::isnan(g.imag());
      const double err = w_nan || g_nan ? (w_nan && g_nan ? 0 : INFINITY) : std::abs(w - g);
      ok = err <= bound;
      *worst_ratio = std::max(*worst_ratio, err / bound);
      seen = absl::StrCat("XLA (", w.real(), ", ", w.imag(), "), xjit (", g.real(), ", ",
                          g.imag(), ")");
    } else {
      ok = want.GetInt(i) == got.GetInt(i);
      seen = absl::StrCat("XLA ", want.GetInt(i), ", xjit ", got.GetInt(i));
    }
    if (!ok && first.empty()) first = absl::StrCat("[", absl::StrJoin(i, ","), "]: ", seen);
    if (!ok) ++bad;
  });
  if (bad == 0) return "";
  return absl::StrCat(bad, " elements differ beyond ", bound, "; first ", first);
}

class LinalgModelsTest : public testing::TestWithParam<Param> {};

TEST_P(LinalgModelsTest, MatchesXla) {
  const fs::path dir = Root() / GetParam().name;
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule(ReadFile(dir / "module.hlo"), (dir / "module.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  const Computation& entry = *(*module)->entry();
  const int n_args = CountFiles(dir, "arg");
  ASSERT_EQ(n_args, entry.parameter_count());
  std::vector<Literal> args;
  for (int i = 0; i < n_args; ++i) {
    absl::StatusOr<npy::Array> array = npy::ReadNpyFile(dir / absl::StrCat("arg", i, ".npy"));
    ASSERT_TRUE(array.ok()) << array.status();
    absl::StatusOr<Literal> literal = npy::LiteralFromArray(*array, entry.parameter(i)->shape());
    ASSERT_TRUE(literal.ok()) << "arg" << i << ": " << literal.status();
    args.push_back(*std::move(literal));
  }
  absl::StatusOr<Literal> result;
  if (GetParam().backend == Backend::kJit) {
    jit::CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
        jit::Compile(**module, jit::CompileOptions(), &report);
    ASSERT_TRUE(exe.ok()) << exe.status();
    for (const std::string& step : report.interpreted_steps) {
      ADD_FAILURE() << "interpreted step on the jit: " << step;
    }
    int lapack_calls = 0;
    for (const jit::LibraryCallInfo& call : report.library_calls) {
      lapack_calls += call.routine.rfind("lapack ", 0) == 0;
    }
    EXPECT_GT(lapack_calls, 0) << "no jaxlib LAPACK call was compiled";
    result = (*exe)->Run(args);
  } else {
    result = EvaluateModule(**module, args);
  }
  ASSERT_TRUE(result.ok()) << result.status();
  std::vector<const Literal*> outs;
  if (result->shape().IsTuple()) {
    for (const Literal& e : result->elements()) outs.push_back(&e);
  } else {
    outs.push_back(&*result);
  }
  ASSERT_EQ(static_cast<int>(outs.size()), CountFiles(dir, "out"));
  double worst = 0;
  for (size_t i = 0; i < outs.size(); ++i) {
    absl::StatusOr<npy::Array> array = npy::ReadNpyFile(dir / absl::StrCat("out", i, ".npy"));
    ASSERT_TRUE(array.ok()) << array.status();
    absl::StatusOr<Literal> want = npy::LiteralFromArray(*array, outs[i]->shape());
    ASSERT_TRUE(want.ok()) << "out" << i << ": " << want.status();
    EXPECT_EQ(Compare(*want, *outs[i], &worst), "") << GetParam().name << " output " << i;
  }
  std::cout << GetParam().name << ": largest error " << worst << " of the bound\n";
}

std::vector<Param> AllParams() {
  std::vector<std::string> names;
  std::error_code error;
  for (const fs::directory_entry& entry : fs::directory_iterator(Root(), error)) {
    if (entry.is_directory()) names.push_back(entry.path().filename().string());
  }
  std::sort(names.begin(), names.end());
  std::vector<Param> params;
  for (const std::string& name : names) {
    params.push_back({name, Backend::kJit});
    params.push_back({name, Backend::kInterpreter});
  }
  return params;
}

INSTANTIATE_TEST_SUITE_P(Linalg, LinalgModelsTest, testing::ValuesIn(AllParams()), ParamName);

// The fixture folder must not be empty or missing: a missing folder would
// otherwise run no case at all.
TEST(LinalgModelsFixtures, Present) {
  EXPECT_GE(AllParams().size(), 2u) << "no fixtures under " << Root();
}


// A lapack_*_ffi target xjit does not implement: both backends fail with an
// error naming it (the JIT leaves the step to the evaluator).
TEST(LinalgModelsUnknownTarget, ErrorNamesTheTarget) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(R"(
HloModule m
ENTRY e {
  a = f32[3,3]{1,0} parameter(0)
  ROOT r = (f32[3,3]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_sfoo_ffi", operand_layout_constraints={f32[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
}
)",
                                                                   "unknown.hlo");
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> args;
  args.emplace_back(Shape::Array(ElementType::kF32, {3, 3}));
  absl::StatusOr<Literal> evaluated = EvaluateModule(**module, args);
  ASSERT_FALSE(evaluated.ok());
  EXPECT_EQ(evaluated.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(evaluated.status().message().find("\"lapack_sfoo_ffi\""), std::string::npos)
      << evaluated.status();
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
      jit::Compile(**module, jit::CompileOptions());
  ASSERT_TRUE(exe.ok()) << exe.status();
  absl::StatusOr<Literal> run = (*exe)->Run(args);
  ASSERT_FALSE(run.ok());
  EXPECT_NE(run.status().message().find("\"lapack_sfoo_ffi\""), std::string::npos)
      << run.status();
}
}  // namespace
}  // namespace xjit
