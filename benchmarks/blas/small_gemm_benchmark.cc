// SmallGemm (runtime/blas/small_gemm.h) against cblas_sgemm on the same
// buffers, one thread each (OpenBLAS through SetBlasThreads(1)) or, in the
// *Threads rows, two each in wall time (SmallGemm on the shared pool), on the
// GEMMs of a recurrent step (batch 32, input 128, hidden 256, four gates:
// 1024 columns) and of its gradient, and a few row counts around them to
// place PreferSmallGemm's limit. Arguments: m, n, k, form (0 NN: B [k,n];
// 1 NT: B given as [n,k]; 2 TN: A given as [k,m]), threads. GFLOP/s is the `flops`
// counter over CPU time (the machine is shared: compare rows of one run).
// SmallGemm runs the CPU's best kernels (AVX-512F, else AVX2+FMA).
//   build/benchmarks/blas/small_gemm_benchmark --benchmark_min_time=0.2
#include <cblas.h>

#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/small_gemm.h"

namespace xjit::runtime::blas {
namespace {

std::vector<float> RandomFloats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

struct Problem {
  std::vector<float> a, b, c;
  SmallGemmArgs args;
};

Problem MakeProblem(const benchmark::State& state) {
  const int64_t m = state.range(0), n = state.range(1), k = state.range(2);
  const int64_t form = state.range(3);
  Problem p;
  p.a = RandomFloats(m * k, 1);
  p.b = RandomFloats(k * n, 2);
  p.c.assign(m * n, 0.0f);
  SmallGemmArgs& g = p.args;
  g.m = m;
  g.n = n;
  g.k = k;
  g.a = p.a.data();
  g.a_row_stride = form == 2 ? 1 : k;
  g.a_col_stride = form == 2 ? m : 1;
  g.b = p.b.data();
  g.b_transposed = form == 1;
  g.ldb = form == 1 ? k : n;
  g.c = p.c.data();
  g.ldc = n;
  return p;
}

void SetFlops(benchmark::State& state) {
  state.counters["flops"] = benchmark::Counter(
      2.0 * state.range(0) * state.range(1) * state.range(2),
      benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_SmallGemm(benchmark::State& state) {
  if (!SmallGemmAvailable()) {
    state.SkipWithError("no AVX-512F or AVX2+FMA on this CPU");
    return;
  }
  Problem p = MakeProblem(state);
  const int threads = state.range(4);
  for (auto _ : state) {
    SmallGemm(p.args, threads);
    benchmark::DoNotOptimize(p.c.data());
  }
  state.SetLabel(PreferSmallGemm(p.args, threads) ? "preferred" : "not_preferred");
  SetFlops(state);
}

void BM_CblasSgemm(benchmark::State& state) {
  SetBlasThreads(static_cast<int>(state.range(4)));
  Problem p = MakeProblem(state);
  const SmallGemmArgs& g = p.args;
  const int64_t form = state.range(3);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, form == 2 ? CblasTrans : CblasNoTrans,
                form == 1 ? CblasTrans : CblasNoTrans, static_cast<int>(g.m),
                static_cast<int>(g.n), static_cast<int>(g.k), 1.0f, g.a,
                static_cast<int>(form == 2 ? g.m : g.k), g.b, static_cast<int>(g.ldb), 0.0f,
                g.c, static_cast<int>(g.ldc));
    benchmark::DoNotOptimize(p.c.data());
  }
  SetFlops(state);
  SetBlasThreads(1);
}

void Shapes(benchmark::internal::Benchmark* b) {
  // The step's gate dots (NN), its input and hidden gradients (NT), its
  // weight gradients (TN), then other row counts of the NN and NT forms.
  b->Args({32, 1024, 128, 0, 1})->Args({32, 1024, 256, 0, 1});
  b->Args({32, 256, 1024, 1, 1})->Args({32, 128, 1024, 1, 1});
  b->Args({128, 1024, 32, 2, 1})->Args({256, 1024, 32, 2, 1});
  for (int64_t m : {1, 8, 16, 64, 96, 128}) b->Args({m, 1024, 256, 0, 1});
  for (int64_t m : {8, 64, 96, 128}) b->Args({m, 256, 1024, 1, 1});
  // Small operands (an LSTM cell of 16 units: [32, 48] x [48, 64]): B's
  // panel stays in L1, OpenBLAS's packing and fixed costs dominate.
  b->Args({32, 64, 48, 0, 1})->Args({32, 64, 128, 0, 1})->Args({32, 256, 64, 0, 1});
  b->Args({32, 512, 256, 0, 1})->Args({8, 128, 128, 0, 1});
  // Many rows over a short K: attention's Q K^T over one head (NN, or NT
  // on transposed panels of B), an input projection of few features.
  for (int64_t k : {8, 16, 32}) b->Args({128, 128, k, 0, 1})->Args({128, 128, k, 1, 1});
  b->Args({512, 512, 16, 0, 1})->Args({512, 512, 16, 1, 1})->Args({2048, 64, 16, 0, 1});
  // An outer product (per-example gradients of a dense layer).
  b->Args({256, 512, 1, 0, 1});
  // A narrow C of many rows: a graph network's layers ([nodes, features] x
  // [features, 16]), coordinates times a 3 x 3 matrix.
  for (int64_t n : {3, 8, 16, 32, 48}) b->Args({8192, n, 64, 0, 1});
  for (int64_t k : {3, 16, 256}) b->Args({8192, 16, k, 0, 1});
  b->Args({8192, 48, 48, 0, 1})->Args({512, 16, 64, 0, 1})->Args({64, 16, 64, 0, 1});
  b->Args({2048, 32, 256, 0, 1})->Args({2048, 24, 256, 0, 1})->Args({2048, 32, 32, 0, 1});
  // A long K (B from L2 or beyond for every tile of rows): where the narrow
  // rule stops on K.
  for (int64_t k : {4096, 16384, 65536}) b->Args({512, 16, k, 0, 1});
  for (int64_t k : {64, 1024, 4096, 16384}) b->Args({512, 16, k, 2, 1});
  b->Args({8192, 16, 64, 2, 1})->Args({8192, 16, 256, 2, 1})->Args({1024, 10, 256, 2, 1});
}

// The step's GEMMs on two threads each, in wall time.
void ThreadShapes(benchmark::internal::Benchmark* b) {
  b->Args({32, 1024, 128, 0, 2})->Args({32, 1024, 256, 0, 2});
  b->Args({32, 256, 1024, 1, 2})->Args({32, 128, 1024, 1, 2});
  b->Args({128, 1024, 32, 2, 2})->Args({256, 1024, 32, 2, 2});
  b->Args({8192, 16, 64, 0, 2})->Args({8192, 16, 16, 0, 2});
  b->UseRealTime();
}

BENCHMARK(BM_SmallGemm)->Apply(Shapes);
BENCHMARK(BM_CblasSgemm)->Apply(Shapes);
BENCHMARK(BM_SmallGemm)->Name("BM_SmallGemmThreads")->Apply(ThreadShapes);
BENCHMARK(BM_CblasSgemm)->Name("BM_CblasSgemmThreads")->Apply(ThreadShapes);

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
