// AxpyGemv (runtime/blas/axpy_gemv.h) against cblas_?gemv on the same
// buffers, one thread (OpenBLAS through SetBlasThreads(1)): y = P^T x for a
// row-major P[rows, cols] (the row-major transposed call dot.cc makes for
// this form, y cleared first as it does). Shapes with the matrix in L2
// (512x512 f32: 1 MB), L3 (1024x1024, 4096x256, 256x4096, 2049x777,
// 16x100000: 4-6.4 MB) and DRAM (4096x4096: 64 MB), f32 and f64.
// Arguments: rows, cols, f64. Compare rows of one run (the machine is shared).
// BM_RunDotGemv: a planned f32 gemv through RunDot on 1 or 2 threads (2: in
// two bands of outputs on the pool), in both forms (axpy: v . X, dots:
// X . w), so that the split is measured against the whole call in one
// process. Arguments: rows, cols, axpy form, threads.
//   build/benchmarks/blas/axpy_gemv_benchmark --benchmark_min_time=0.2
//     --benchmark_repetitions=9 --benchmark_enable_random_interleaving=true
// (one command line)
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/blas/axpy_gemv.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/dot.h"

namespace xjit::runtime::blas {
namespace {

// The matrix starts on a cache line, as xjit's buffers do (64-byte
// aligned); a vector's storage from malloc starts 16 bytes past one, which
// splits every full-vector load of a row in two.
template <typename T>
struct Problem {
  std::vector<T> storage, x, y;
  T* p = nullptr;
  AxpyGemvArgs<T> args;
};

template <typename T>
Problem<T> MakeProblem(const benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<T> d(-1, 1);
  Problem<T> pr;
  pr.storage.resize(rows * cols + 64 / sizeof(T));
  pr.p = pr.storage.data();
  while (reinterpret_cast<uintptr_t>(pr.p) % 64 != 0) ++pr.p;
  for (int64_t i = 0; i < rows * cols; ++i) pr.p[i] = d(rng);
  pr.x.resize(rows);
  for (T& v : pr.x) v = d(rng);
  pr.y.assign(cols, T(0));
  AxpyGemvArgs<T>& g = pr.args;
  g.rows = rows;
  g.cols = cols;
  g.p = pr.p;
  g.ldp = cols;
  g.x = pr.x.data();
  g.y = pr.y.data();
  return pr;
}

template <typename T>
void Bytes(benchmark::State& state) {
  state.SetBytesProcessed(state.iterations() * state.range(0) * state.range(1) *
                          static_cast<int64_t>(sizeof(T)));
}

template <typename T>
void RunAxpyGemv(benchmark::State& state) {
  Problem<T> pr = MakeProblem<T>(state);
  for (auto _ : state) {
    AxpyGemv(pr.args);
    benchmark::DoNotOptimize(pr.y.data());
  }
  Bytes<T>(state);
}

template <typename T>
void RunCblas(benchmark::State& state) {
  SetBlasThreads(1);
  Problem<T> pr = MakeProblem<T>(state);
  const AxpyGemvArgs<T>& g = pr.args;
  const int rows = static_cast<int>(g.rows), cols = static_cast<int>(g.cols);
  for (auto _ : state) {
    std::memset(pr.y.data(), 0, pr.y.size() * sizeof(T));
    if constexpr (sizeof(T) == 4) {
      cblas_sgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0f, g.p, cols, g.x, 1, 0.0f,
                  pr.y.data(), 1);
    } else {
      cblas_dgemv(CblasRowMajor, CblasTrans, rows, cols, 1.0, g.p, cols, g.x, 1, 0.0,
                  pr.y.data(), 1);
    }
    benchmark::DoNotOptimize(pr.y.data());
  }
  Bytes<T>(state);
}

void BM_AxpyGemv(benchmark::State& state) {
  if (!AxpyGemvAvailable()) {
    state.SkipWithError("no AVX2+FMA here");
    return;
  }
  if (state.range(2) != 0) {
    RunAxpyGemv<double>(state);
  } else {
    RunAxpyGemv<float>(state);
  }
}

void BM_CblasGemv(benchmark::State& state) {
  if (state.range(2) != 0) {
    RunCblas<double>(state);
  } else {
    RunCblas<float>(state);
  }
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int f64 : {0, 1}) {
    for (auto [rows, cols] : {std::pair{512, 512}, {1024, 1024}, {4096, 256}, {256, 4096},
                              {2049, 777}, {16, 100000}, {4096, 4096}, {2048, 32}, {100, 100}}) {
      b->Args({rows, cols, f64});
    }
  }
}

void BM_RunDotGemv(benchmark::State& state) {
  SetBlasThreads(1);
  const int64_t rows = state.range(0), cols = state.range(1);
  const bool axpy = state.range(2) != 0;
  const int threads = static_cast<int>(state.range(3));
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {axpy ? 0 : 1};
  d.rhs_contracting_dimensions = {0};
  const Shape matrix = Shape::Array(ElementType::kF32, {rows, cols});
  const Shape vector = Shape::Array(ElementType::kF32, {axpy ? rows : cols});
  const Shape result = Shape::Array(ElementType::kF32, {axpy ? cols : rows});
  absl::StatusOr<DotPlan> plan =
      axpy ? PlanDot(vector, matrix, result, d) : PlanDot(matrix, vector, result, d);
  if (!plan.ok()) {
    state.SkipWithError("not planned");
    return;
  }
  PlanDotThreads(*plan, threads);
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> u(-1, 1);
  std::vector<float> m(rows * cols + 16), v(axpy ? rows : cols), y((axpy ? cols : rows) + 16);
  for (float& e : m) e = u(rng);
  for (float& e : v) e = u(rng);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    if (axpy) {
      RunDot(*plan, v.data(), m.data(), y.data(), scratch.data(), threads);
    } else {
      RunDot(*plan, m.data(), v.data(), y.data(), scratch.data(), threads);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.SetLabel(plan->ToString());
  state.SetBytesProcessed(state.iterations() * rows * cols * 4);
}

BENCHMARK(BM_AxpyGemv)->Apply(Shapes);
BENCHMARK(BM_RunDotGemv)->ArgsProduct({{4096}, {256}, {0, 1}, {1, 2}});
BENCHMARK(BM_RunDotGemv)->ArgsProduct({{256}, {4096}, {0, 1}, {1, 2}});
BENCHMARK(BM_RunDotGemv)->ArgsProduct({{1024}, {1024}, {0, 1}, {1, 2}});
BENCHMARK(BM_CblasGemv)->Apply(Shapes);

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
