// cholesky, triangular-solve and select-and-scatter compiled (library calls:
// runtime/linalg over OpenBLAS, runtime/select_and_scatter) next to their
// baselines in the same run (issue 16). One thread, OpenBLAS included.
//
//   Cholesky/{xjit,lapack}          f32[512,512] lower: the compiled module
//                                   vs memcpy + spotrf on the same matrix
//                                   (?potrf factors in place, so the bare
//                                   call needs the copy too). Target:
//                                   lapack time / xjit time >= 0.95.
//   TriangularSolve/{xjit,blas}     f32[512,512] A (lower), B f32[512,512],
//                                   left_side, no transpose: the module vs
//                                   memcpy + cblas_strsm. Target >= 0.95.
//   MaxPoolGrad/{xjit,c_loop,evaluator}
//                                   select-and-scatter (select GE, scatter
//                                   add, init 0) of f32[8,56,56,64] with a
//                                   3x3 stride-2 window (SAME padding: high
//                                   1) and source f32[8,28,28,64]: the
//                                   module vs a hand-written C loop vs the
//                                   evaluator. Target: c_loop time / xjit
//                                   time >= 0.8.
// Built by meson, never run as a test:
//   build/benchmarks/linalg_benchmark --benchmark_min_time=0.5
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "benchmarks/parse_or_die.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "jit/compile.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/executable.h"

extern "C" void spotrf_(const char* uplo, const blasint* n, float* a, const blasint* lda,
                        blasint* info, size_t uplo_length);

namespace xjit {
namespace {

constexpr int kN = 512;

std::vector<float> RandomFloats(int64_t n, uint64_t seed, float low = -1.0f,
                                float high = 1.0f) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  std::vector<float> out(n);
  for (float& v : out) v = uniform(rng);
  return out;
}

// M M^T + n I: symmetric positive definite, row-major.
std::vector<float> PositiveDefinite(int n) {
  const std::vector<float> m = RandomFloats(int64_t{n} * n, 1);
  std::vector<float> a(int64_t{n} * n);
  cblas_ssyrk(CblasRowMajor, CblasLower, CblasNoTrans, n, n, 1.0f, m.data(), n, 0.0f, a.data(),
              n);
  for (int i = 0; i < n; ++i) {
    a[int64_t{i} * n + i] += static_cast<float>(n);
    for (int j = i + 1; j < n; ++j) a[int64_t{i} * n + j] = a[int64_t{j} * n + i];
  }
  return a;
}

// Lower triangular with a dominant diagonal (row-major).
std::vector<float> Triangular(int n) {
  std::vector<float> a = RandomFloats(int64_t{n} * n, 2, -1.0f / n, 1.0f / n);
  for (int i = 0; i < n; ++i) a[int64_t{i} * n + i] = 2.0f;
  return a;
}

std::unique_ptr<runtime::Executable> CompileOrDie(const std::string& hlo) {
  std::unique_ptr<Module> module = ParseOrDie(hlo);
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, jit::CompileOptions(), &report);
  if (!executable.ok() || !report.interpreted_steps.empty()) std::abort();
  return *std::move(executable);
}

void Run(benchmark::State& state, const runtime::Executable& executable,
         const std::vector<const void*>& parameters, void* result) {
  for (auto _ : state) {
    absl::Status status = executable.Execute(parameters, result);
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result);
  }
}

void BM_Cholesky_xjit(benchmark::State& state) {
  const std::vector<float> a = PositiveDefinite(kN);
  std::vector<float> l(a.size());
  auto executable = CompileOrDie(
      "HloModule m\nENTRY e {\n  a = f32[512,512] parameter(0)\n"
      "  ROOT l = f32[512,512] cholesky(a), lower=true\n}\n");
  Run(state, *executable, {a.data()}, l.data());
}
BENCHMARK(BM_Cholesky_xjit)->Name("Cholesky/xjit")->Unit(benchmark::kMillisecond);

void BM_Cholesky_lapack(benchmark::State& state) {
  const std::vector<float> a = PositiveDefinite(kN);
  std::vector<float> l(a.size());
  runtime::blas::ScopedBlasThreads threads(1);
  const blasint n = kN;
  for (auto _ : state) {
    std::memcpy(l.data(), a.data(), a.size() * sizeof(float));
    blasint info = 0;
    spotrf_("U", &n, l.data(), &n, &info, 1);  // Row-major lower = column-major upper.
    benchmark::DoNotOptimize(l.data());
  }
}
BENCHMARK(BM_Cholesky_lapack)->Name("Cholesky/lapack")->Unit(benchmark::kMillisecond);

void BM_TriangularSolve_xjit(benchmark::State& state) {
  const std::vector<float> a = Triangular(kN);
  const std::vector<float> b = RandomFloats(int64_t{kN} * kN, 3);
  std::vector<float> x(b.size());
  auto executable = CompileOrDie(
      "HloModule m\nENTRY e {\n  a = f32[512,512] parameter(0)\n  b = f32[512,512] parameter(1)\n"
      "  ROOT x = f32[512,512] triangular-solve(a, b), left_side=true, lower=true, "
      "unit_diagonal=false, transpose_a=NO_TRANSPOSE\n}\n");
  Run(state, *executable, {a.data(), b.data()}, x.data());
}
BENCHMARK(BM_TriangularSolve_xjit)->Name("TriangularSolve/xjit")->Unit(benchmark::kMillisecond);

void BM_TriangularSolve_blas(benchmark::State& state) {
  const std::vector<float> a = Triangular(kN);
  const std::vector<float> b = RandomFloats(int64_t{kN} * kN, 3);
  std::vector<float> x(b.size());
  runtime::blas::ScopedBlasThreads threads(1);
  for (auto _ : state) {
    std::memcpy(x.data(), b.data(), b.size() * sizeof(float));
    cblas_strsm(CblasRowMajor, CblasLeft, CblasLower, CblasNoTrans, CblasNonUnit, kN, kN, 1.0f,
                a.data(), kN, x.data(), kN);
    benchmark::DoNotOptimize(x.data());
  }
}
BENCHMARK(BM_TriangularSolve_blas)->Name("TriangularSolve/blas")->Unit(benchmark::kMillisecond);

// Max-pool gradient geometry.
constexpr int kBatch = 8, kSize = 56, kChannels = 64, kOut = 28;

const char kMaxPoolGrad[] = R"(HloModule m
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY e {
  x = f32[8,56,56,64] parameter(0)
  s = f32[8,28,28,64] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[8,56,56,64] select-and-scatter(x, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
}
)";

void BM_MaxPoolGrad_xjit(benchmark::State& state) {
  const std::vector<float> x = RandomFloats(int64_t{kBatch} * kSize * kSize * kChannels, 4);
  const std::vector<float> s = RandomFloats(int64_t{kBatch} * kOut * kOut * kChannels, 5);
  std::vector<float> r(x.size());
  auto executable = CompileOrDie(kMaxPoolGrad);
  Run(state, *executable, {x.data(), s.data()}, r.data());
}
BENCHMARK(BM_MaxPoolGrad_xjit)->Name("MaxPoolGrad/xjit")->Unit(benchmark::kMillisecond);

// The loop one would write for NHWC, 3x3 stride 2, SAME (high padding 1):
// the first in-bounds element of the window is selected, a later one
// replaces it unless selected >= it (select-and-scatter's rule).
void MaxPoolGradLoop(const float* x, const float* s, float* r) {
  std::memset(r, 0, sizeof(float) * kBatch * kSize * kSize * kChannels);
  for (int n = 0; n < kBatch; ++n) {
    for (int oh = 0; oh < kOut; ++oh) {
      for (int ow = 0; ow < kOut; ++ow) {
        for (int c = 0; c < kChannels; ++c) {
          int64_t best_at = -1;
          float best = 0.0f;
          for (int kh = 0; kh < 3; ++kh) {
            const int h = oh * 2 + kh;
            if (h >= kSize) continue;
            for (int kw = 0; kw < 3; ++kw) {
              const int w = ow * 2 + kw;
              if (w >= kSize) continue;
              const int64_t at = ((int64_t{n} * kSize + h) * kSize + w) * kChannels + c;
              if (best_at < 0 || !(best >= x[at])) {
                best = x[at];
                best_at = at;
              }
            }
          }
          r[best_at] += s[((int64_t{n} * kOut + oh) * kOut + ow) * kChannels + c];
        }
      }
    }
  }
}

void BM_MaxPoolGrad_c_loop(benchmark::State& state) {
  const std::vector<float> x = RandomFloats(int64_t{kBatch} * kSize * kSize * kChannels, 4);
  const std::vector<float> s = RandomFloats(int64_t{kBatch} * kOut * kOut * kChannels, 5);
  std::vector<float> r(x.size());
  for (auto _ : state) {
    MaxPoolGradLoop(x.data(), s.data(), r.data());
    benchmark::DoNotOptimize(r.data());
  }
}
BENCHMARK(BM_MaxPoolGrad_c_loop)->Name("MaxPoolGrad/c_loop")->Unit(benchmark::kMillisecond);

void BM_MaxPoolGrad_evaluator(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(kMaxPoolGrad);
  std::vector<Literal> arguments;
  uint64_t seed = 4;
  for (const Instruction* parameter : module->entry()->parameters()) {
    Literal literal(parameter->shape());
    const std::vector<float> values = RandomFloats(parameter->shape().element_count(), seed++);
    std::memcpy(literal.data().data(), values.data(), values.size() * sizeof(float));
    arguments.push_back(std::move(literal));
  }
  for (auto _ : state) {
    absl::StatusOr<Literal> result = EvaluateModule(*module, arguments);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->data().data());
  }
}
BENCHMARK(BM_MaxPoolGrad_evaluator)
    ->Name("MaxPoolGrad/evaluator")
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
