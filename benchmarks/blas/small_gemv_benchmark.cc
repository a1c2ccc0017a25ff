// SmallGemv (runtime/blas/small_gemv.h) against cblas_sgemv on the same
// buffers, one thread (OpenBLAS through SetBlasThreads(1)), in both forms:
// dots (row-major no-transpose, y = P x) and axpys (row-major transpose,
// y = P^T x), on a sampler's X[2048, 32] and shapes around PreferSmallGemv's
// limits (rows of 2 and 3 below them, 512 and 2048 above). Arguments: rows,
// cols, transposed. The label says whether PreferSmallGemv takes the shape;
// compare rows of one run (the machine is shared).
//   build/benchmarks/blas/small_gemv_benchmark --benchmark_min_time=0.2
#include <cblas.h>

#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/small_gemv.h"

namespace xjit::runtime::blas {
namespace {

struct Problem {
  std::vector<float> p, x, y;
  SmallGemvArgs args;
};

Problem MakeProblem(const benchmark::State& state) {
  const int64_t rows = state.range(0), cols = state.range(1);
  const bool transposed = state.range(2) != 0;
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<float> d(-1, 1);
  Problem pr;
  pr.p.resize(rows * cols);
  for (float& v : pr.p) v = d(rng);
  pr.x.resize(transposed ? rows : cols);
  for (float& v : pr.x) v = d(rng);
  pr.y.assign(transposed ? cols : rows, 0.0f);
  SmallGemvArgs& g = pr.args;
  g.rows = rows;
  g.cols = cols;
  g.p = pr.p.data();
  g.ldp = cols;
  g.transposed = transposed;
  g.x = pr.x.data();
  g.y = pr.y.data();
  return pr;
}

void BM_SmallGemv(benchmark::State& state) {
  Problem pr = MakeProblem(state);
  if (!SmallGemvAvailable() || !PreferSmallGemv(pr.args)) {
    state.SkipWithError("not taken by PreferSmallGemv here");
    return;
  }
  for (auto _ : state) {
    SmallGemv(pr.args);
    benchmark::DoNotOptimize(pr.y.data());
  }
}

// As dot.cc's Gemv calls it: y cleared, then beta 0.
void BM_CblasSgemv(benchmark::State& state) {
  SetBlasThreads(1);
  Problem pr = MakeProblem(state);
  const SmallGemvArgs& g = pr.args;
  for (auto _ : state) {
    std::memset(pr.y.data(), 0, pr.y.size() * sizeof(float));
    cblas_sgemv(CblasRowMajor, g.transposed ? CblasTrans : CblasNoTrans,
                static_cast<int>(g.rows), static_cast<int>(g.cols), 1.0f, g.p,
                static_cast<int>(g.ldp), g.x, 1, 0.0f, pr.y.data(), 1);
    benchmark::DoNotOptimize(pr.y.data());
  }
  state.SetLabel(PreferSmallGemv(pr.args) ? "preferred" : "not_preferred");
}

void Shapes(benchmark::internal::Benchmark* b) {
  for (int transposed : {0, 1}) {
    for (auto [rows, cols] : {std::pair{2048, 32}, {256, 2}, {1000, 3}, {16, 16}, {64, 64},
                              {17, 33}, {4096, 64}, {512, 512}, {32, 2048}}) {
      b->Args({rows, cols, transposed});
    }
  }
}

BENCHMARK(BM_SmallGemv)->Apply(Shapes);
BENCHMARK(BM_CblasSgemv)->Apply(Shapes);

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
