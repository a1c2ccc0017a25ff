// Benchmarks of runtime/blas, each against a baseline measured in the same
// run on the same buffers:
//   - DotGeneral f32 [n,n] x [n,n] (n = 256, 1024, 2048) through
//     PlanDot/RunDot vs one direct cblas_sgemm call;
//   - ResNet-50 convolutions (NHWC, HWIO kernel, batch 1) through
//     PlanConvolution/RunConvolution vs a straightforward im2col into a
//     [pixels][kh*kw*c] matrix and one cblas_sgemm.
// Both sides run with OpenBLAS on one thread (SetBlasThreads(1)); GFLOP/s is
// reported as the `flops` rate counter.
#include <cstring>
#include <string>
#include <random>
#include <vector>

#include <cblas.h>

#include "benchmark/benchmark.h"
#include "ir/shape.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/convolution.h"
#include "runtime/blas/dot.h"

namespace xjit::runtime::blas {
namespace {

std::vector<float> RandomFloats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> d(-1, 1);
  std::vector<float> v(n);
  for (float& x : v) x = d(rng);
  return v;
}

void SetFlops(benchmark::State& state, double flops) {
  state.counters["flops"] =
      benchmark::Counter(flops, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1000);
}

void BM_DotRunDot(benchmark::State& state) {
  SetBlasThreads(1);
  const int64_t n = state.range(0);
  Shape s = Shape::Array(ElementType::kF32, {n, n});
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  auto plan = PlanDot(s, s, s, d);
  if (!plan.ok()) {
    state.SkipWithError("plan failed");
    return;
  }
  std::vector<float> a = RandomFloats(n * n, 1), b = RandomFloats(n * n, 2), c(n * n);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunDot(*plan, a.data(), b.data(), c.data(), scratch.data());
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
}

void BM_DotSgemm(benchmark::State& state) {
  SetBlasThreads(1);
  const int n = static_cast<int>(state.range(0));
  std::vector<float> a = RandomFloats(int64_t{n} * n, 1), b = RandomFloats(int64_t{n} * n, 2),
                     c(int64_t{n} * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, a.data(), n, b.data(),
                n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * n * n * n);
}

BENCHMARK(BM_DotRunDot)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DotSgemm)->Arg(256)->Arg(1024)->Arg(2048)->Unit(benchmark::kMillisecond);

// A square-window NHWC convolution layer with batch 1.
struct Layer {
  const char* name;
  int64_t size, in_c, out_c, kernel, stride, pad;
  int64_t out_size() const { return (size + 2 * pad - kernel) / stride + 1; }
  double flops() const {
    return 2.0 * out_size() * out_size() * out_c * in_c * kernel * kernel;
  }
};

const Layer kLayers[] = {
    {"7x7/2 3->64 @224", 224, 3, 64, 7, 2, 3},
    {"3x3 64->64 @56", 56, 64, 64, 3, 1, 1},
    {"1x1 256->64 @56", 56, 256, 64, 1, 1, 0},
    {"3x3/2 128->128 @56", 56, 128, 128, 3, 2, 1},
};

void BM_ConvRunConvolution(benchmark::State& state) {
  SetBlasThreads(1);
  const Layer& l = kLayers[state.range(0)];
  state.SetLabel(l.name);
  Shape in = Shape::Array(ElementType::kF32, {1, l.size, l.size, l.in_c});
  Shape k = Shape::Array(ElementType::kF32, {l.kernel, l.kernel, l.in_c, l.out_c});
  Shape out = Shape::Array(ElementType::kF32, {1, l.out_size(), l.out_size(), l.out_c});
  ConvolutionDimensionNumbers dn;
  dn.input_batch_dimension = 0;
  dn.input_feature_dimension = 3;
  dn.input_spatial_dimensions = {1, 2};
  dn.kernel_spatial_dimensions = {0, 1};
  dn.kernel_input_feature_dimension = 2;
  dn.kernel_output_feature_dimension = 3;
  dn.output_batch_dimension = 0;
  dn.output_feature_dimension = 3;
  dn.output_spatial_dimensions = {1, 2};
  Window w(2);
  for (WindowDimension& wd : w) {
    wd.size = l.kernel;
    wd.stride = l.stride;
    wd.padding_low = wd.padding_high = l.pad;
  }
  auto plan = PlanConvolution(in, k, out, w, dn, 1, 1);
  if (!plan.ok()) {
    state.SkipWithError("plan failed");
    return;
  }
  state.SetLabel(std::string(l.name) + "; " + plan->ToString());
  std::vector<float> x = RandomFloats(in.element_count(), 1), f = RandomFloats(k.element_count(), 2),
                     y(out.element_count());
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunConvolution(*plan, x.data(), f.data(), y.data(), scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, l.flops());
}

// The baseline: a plain NHWC im2col (rows = output pixels, columns =
// (kh, kw, c)) and one sgemm against the HWIO kernel viewed as [kh*kw*c][o].
void BM_ConvIm2colSgemm(benchmark::State& state) {
  SetBlasThreads(1);
  const Layer& l = kLayers[state.range(0)];
  state.SetLabel(l.name);
  const int64_t os = l.out_size(), kk = l.kernel * l.kernel * l.in_c;
  std::vector<float> x = RandomFloats(l.size * l.size * l.in_c, 1),
                     f = RandomFloats(kk * l.out_c, 2), y(os * os * l.out_c), col(os * os * kk);
  for (auto _ : state) {
    float* dst = col.data();
    for (int64_t oy = 0; oy < os; ++oy) {
      for (int64_t ox = 0; ox < os; ++ox) {
        for (int64_t ky = 0; ky < l.kernel; ++ky) {
          const int64_t iy = oy * l.stride + ky - l.pad;
          for (int64_t kx = 0; kx < l.kernel; ++kx) {
            const int64_t ix = ox * l.stride + kx - l.pad;
            if (iy < 0 || iy >= l.size || ix < 0 || ix >= l.size) {
              std::memset(dst, 0, l.in_c * sizeof(float));
            } else {
              std::memcpy(dst, x.data() + (iy * l.size + ix) * l.in_c, l.in_c * sizeof(float));
            }
            dst += l.in_c;
          }
        }
      }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(os * os),
                static_cast<int>(l.out_c), static_cast<int>(kk), 1.0f, col.data(),
                static_cast<int>(kk), f.data(), static_cast<int>(l.out_c), 0.0f, y.data(),
                static_cast<int>(l.out_c));
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, l.flops());
}

BENCHMARK(BM_ConvRunConvolution)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvIm2colSgemm)->DenseRange(0, 3)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
