// AxpyGemv (runtime/blas/axpy_gemv.h) against cblas_?gemv on the same
// buffers, one thread (OpenBLAS through SetBlasThreads(1)): y = P^T x for a
// row-major P[rows, cols] (the row-major transposed call dot.cc makes for
// this form, y cleared first as it does). Shapes with the matrix in L2
// (512x512 f32: 1 MB), L3 (1024x1024, 4096x256, 256x4096, 2049x777,
// 16x100000: 4-6.4 MB) and DRAM (4096x4096: 64 MB), f32 and f64.
// Arguments: rows, cols, f64. Compare rows of one run (the machine is shared).
//   build/benchmarks/blas/axpy_gemv_benchmark --benchmark_min_time=0.2
#include <cblas.h>

#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/blas/axpy_gemv.h"
#include "runtime/blas/blas_threads.h"

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
    state.SkipWithError("no AVX2/AVX-512 here");
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

BENCHMARK(BM_AxpyGemv)->Apply(Shapes);
BENCHMARK(BM_CblasGemv)->Apply(Shapes);

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
