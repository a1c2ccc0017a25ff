// runtime/fft against FFTW (FFTW_MEASURE plans, one thread), c64 forward
// transforms out of place, same run:
//   build/benchmarks/fft/fft_benchmark --benchmark_min_time=0.2
//     --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
//     --benchmark_report_aggregates_only=true
// (benchmarks/fft/ratios.sh runs that and prints the ratios).
// The ratio of a length is FFTW's time / xjit's time (>= 1: xjit faster),
// from the "min" aggregates (CPU time): on a shared machine the fastest of
// interleaved repetitions is the one least disturbed by other load.
// FFTW (GPL) is linked into this benchmark only, never into the library;
// without it only the xjit side is built.
#include <algorithm>
#include <complex>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "benchmark/benchmark.h"
#include "ir/shape.h"
#include "runtime/fft/fft.h"

#if defined(XJIT_BENCHMARK_FFTW)
#include <fftw3.h>
#endif

namespace {

using xjit::ElementType;
using xjit::FftType;
using xjit::Shape;

// 64-byte aligned buffers, as the executable's arena gives them.
struct Buffer {
  explicit Buffer(int64_t bytes) : storage(bytes + 64) {
    uintptr_t address = reinterpret_cast<uintptr_t>(storage.data());
    data = storage.data() + ((64 - address % 64) % 64);
  }
  std::vector<uint8_t> storage;
  uint8_t* data;
};

void Fill(float* data, int64_t count) {
  std::mt19937 rng(1);
  std::uniform_real_distribution<float> uniform(-1, 1);
  for (int64_t i = 0; i < count; ++i) data[i] = uniform(rng);
}

double Min(const std::vector<double>& values) {
  return *std::min_element(values.begin(), values.end());
}

void BM_Xjit(benchmark::State& state) {
  const int64_t n = state.range(0);
  const Shape shape = Shape::Array(ElementType::kC64, {n});
  auto plan = xjit::runtime::fft::PlanFft(FftType::kFft, {n}, shape, shape, 1);
  if (!plan.ok()) {
    state.SkipWithError(std::string(plan.status().message()).c_str());
    return;
  }
  Buffer in(8 * n), out(8 * n), scratch(plan->scratch_bytes);
  Fill(reinterpret_cast<float*>(in.data), 2 * n);
  void* buffers[2] = {in.data, out.data};
  for (auto _ : state) {
    xjit::runtime::fft::RunFft(*plan, buffers, scratch.data);
    benchmark::DoNotOptimize(out.data);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(plan->ToString());
}

#if defined(XJIT_BENCHMARK_FFTW)
void BM_Fftw(benchmark::State& state) {
  const int64_t n = state.range(0);
  fftwf_complex* in = fftwf_alloc_complex(n);
  fftwf_complex* out = fftwf_alloc_complex(n);
  fftwf_plan plan = fftwf_plan_dft_1d(static_cast<int>(n), in, out, FFTW_FORWARD, FFTW_MEASURE);
  Fill(reinterpret_cast<float*>(in), 2 * n);  // After planning: MEASURE overwrites.
  for (auto _ : state) {
    fftwf_execute(plan);
    benchmark::DoNotOptimize(out);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * n);
  fftwf_destroy_plan(plan);
  fftwf_free(in);
  fftwf_free(out);
}
BENCHMARK(BM_Fftw)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Arg(1009)->ComputeStatistics(
    "min", Min);
#endif
BENCHMARK(BM_Xjit)->Arg(1 << 10)->Arg(1 << 16)->Arg(1 << 20)->Arg(1009)->ComputeStatistics(
    "min", Min);

}  // namespace

BENCHMARK_MAIN();
