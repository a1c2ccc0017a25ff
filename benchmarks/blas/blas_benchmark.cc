// Benchmarks of runtime/blas, each against a baseline measured in the same
// run on the same buffers:
//   - DotGeneral f32 [n,n] x [n,n] (n = 256, 1024, 2048) through
//     PlanDot/RunDot vs one direct cblas_sgemm call;
//   - DotGeneral bf16 and f16 [m,k] x [k,n] through RunDot (f32 images and
//     sgemm) vs cblas_sgemm of the same shape on f32 data;
//   - ResNet-50 convolutions (NHWC, HWIO kernel, batch 1 and 8) through
//     PlanConvolution/RunConvolution vs a straightforward im2col into a
//     [pixels][kh*kw*c] matrix and one cblas_sgemm, and (when built with
//     oneDNN, XJIT_BENCHMARK_DNNL) vs oneDNN's forward-inference convolution
//     in two forms: `nhwc` (source and destination plain NHWC as xjit sees
//     them, weights in the format oneDNN picks, reordered once outside the
//     timed loop) and `any` (every tensor in oneDNN's own blocked format,
//     all reorders outside the timed loop: oneDNN's best case).
//     BM_ConvRunConvolution takes the direct kernel (direct_convolution.h)
//     where the plan has one; BM_ConvRunConvolutionGemm runs the same plan
//     with the direct kernel dropped (xjit's im2col + GEMM);
//   - BM_ConvDirectThreads: the direct kernel planned for 1 and for 2
//     threads, in wall time (the 2-thread scaling is the ratio of a layer's
//     two rows); BM_ConvGemmThreads the same for im2col + GEMM;
//   - BM_ConvModel: the cnn_forward / cnn_train models' convolutions
//     (forward, input and kernel gradients), the planner's choice and both
//     paths, on 1 and 2 threads;
//   - BM_ConvElementType: one 3x3 NHWC layer in f32 (im2col + sgemm, the
//     baseline) and in s8, s16, s32 and u8 (im2col + the dot's typed integer
//     loop; issue 30: on the loop that decoded each element's type, s8 was
//     25-30x slower than the evaluator).
// Except the *Threads and BM_ConvModel rows, every side runs on one thread: OpenBLAS through
// SetBlasThreads(1), oneDNN (OpenMP build) through omp_set_num_threads(1). GFLOP/s is reported as
// the `flops` rate counter, over CPU time (the machine is shared; compare only rows of one run).
#include <cstring>
#include <string>
#include <random>
#include <unordered_map>
#include <vector>

#include <cblas.h>

#include "benchmark/benchmark.h"
#if XJIT_BENCHMARK_DNNL
#include <omp.h>

#include "oneapi/dnnl/dnnl.hpp"
#endif
#include "absl/strings/str_cat.h"
#include "ir/float_format.h"
#include "ir/hlo_text/parser.h"
#include "ir/module.h"
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

// bf16 (or f16) [m,k] x [k,n] -> bf16 (f16) through RunDot (widened into
// f32 images, sgemm, rounded once) against cblas_sgemm of the same shape on
// f32 data: the ratio is the cost of the conversions. Args: m, k, n (square
// ones and the GPT-2 block's projections at the benchmark's 512 tokens).
void RunDotNarrow(benchmark::State& state, ElementType type) {
  SetBlasThreads(1);
  const int64_t m = state.range(0), k = state.range(1), n = state.range(2);
  DotDimensionNumbers d;
  d.lhs_contracting_dimensions = {1};
  d.rhs_contracting_dimensions = {0};
  auto plan = PlanDot(Shape::Array(type, {m, k}), Shape::Array(type, {k, n}),
                      Shape::Array(type, {m, n}), d);
  if (!plan.ok()) {
    state.SkipWithError("plan failed");
    return;
  }
  auto narrow = [type](const std::vector<float>& v) {
    std::vector<uint16_t> out(v.size());
    for (size_t i = 0; i < v.size(); ++i) {
      out[i] = static_cast<uint16_t>(DoubleToFloatBits(type, v[i]));
    }
    return out;
  };
  std::vector<uint16_t> a = narrow(RandomFloats(m * k, 1)), b = narrow(RandomFloats(k * n, 2)),
                        c(m * n);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunDot(*plan, a.data(), b.data(), c.data(), scratch.data());
    benchmark::DoNotOptimize(c.data());
  }
  state.SetLabel(plan->ToString());
  SetFlops(state, 2.0 * m * n * k);
}

void BM_DotRunDotBf16(benchmark::State& state) { RunDotNarrow(state, ElementType::kBF16); }
void BM_DotRunDotF16(benchmark::State& state) { RunDotNarrow(state, ElementType::kF16); }

void BM_DotSgemmShape(benchmark::State& state) {
  SetBlasThreads(1);
  const int m = static_cast<int>(state.range(0)), k = static_cast<int>(state.range(1)),
            n = static_cast<int>(state.range(2));
  std::vector<float> a = RandomFloats(int64_t{m} * k, 1), b = RandomFloats(int64_t{k} * n, 2),
                     c(int64_t{m} * n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, m, n, k, 1.0f, a.data(), k, b.data(),
                n, 0.0f, c.data(), n);
    benchmark::DoNotOptimize(c.data());
  }
  SetFlops(state, 2.0 * m * n * k);
}

void Bf16Shapes(benchmark::internal::Benchmark* b) {
  b->Args({256, 256, 256})->Args({1024, 1024, 1024})->Args({512, 768, 2304})
      ->Args({512, 768, 3072})->Args({512, 3072, 768})->Args({512, 768, 4096});
}

BENCHMARK(BM_DotRunDotBf16)->Apply(Bf16Shapes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DotRunDotF16)->Apply(Bf16Shapes)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_DotSgemmShape)->Apply(Bf16Shapes)->Unit(benchmark::kMillisecond);

// A square-window NHWC convolution layer (the batch is a benchmark argument).
struct Layer {
  const char* name;
  int64_t size, in_c, out_c, kernel, stride, pad;
  int64_t out_size() const { return (size + 2 * pad - kernel) / stride + 1; }
  double flops(int64_t batch) const {
    return 2.0 * batch * out_size() * out_size() * out_c * in_c * kernel * kernel;
  }
};

// clang-format off
const Layer kLayers[] = {
    {"7x7/2 3->64 @224", 224, 3, 64, 7, 2, 3},
    {"3x3 64->64 @56", 56, 64, 64, 3, 1, 1},
    {"1x1 256->64 @56", 56, 256, 64, 1, 1, 0},
    {"3x3/2 128->128 @56", 56, 128, 128, 3, 2, 1},
    {"3x3 512->512 @7", 7, 512, 512, 3, 1, 1},
};
// clang-format on
constexpr int64_t kLayerCount = sizeof(kLayers) / sizeof(kLayers[0]);

// range(2) != 0 drops the direct kernel from the plan; range(3) is the
// thread count the plan is made for (the direct kernel splits
// its work over that many threads of the shared pool; BLAS gets as many).
void BM_ConvRunConvolution(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(3));
  SetBlasThreads(threads);
  const Layer& l = kLayers[state.range(0)];
  const int64_t batch = state.range(1);
  Shape in = Shape::Array(ElementType::kF32, {batch, l.size, l.size, l.in_c});
  Shape k = Shape::Array(ElementType::kF32, {l.kernel, l.kernel, l.in_c, l.out_c});
  Shape out = Shape::Array(ElementType::kF32, {batch, l.out_size(), l.out_size(), l.out_c});
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
  auto plan = PlanConvolution(in, k, out, w, dn, 1, 1, threads);
  if (!plan.ok()) {
    state.SkipWithError("plan failed");
    return;
  }
  // range(2): 0 the direct kernel, 1 im2col + GEMM.
  plan->use_direct = state.range(2) == 0;
  if (plan->use_direct && !plan->has_direct) {
    state.SkipWithError("no direct plan (the CPU lacks AVX-512F and AVX2+FMA)");
    return;
  }
  SetBlasThreads(plan->BlasThreads());
  state.SetLabel(std::string(l.name) + "; " + plan->ToString());
  std::vector<float> x = RandomFloats(in.element_count(), 1), f = RandomFloats(k.element_count(), 2),
                     y(out.element_count());
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunConvolution(*plan, x.data(), f.data(), y.data(), scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, l.flops(batch));
  SetBlasThreads(1);
}

// The baseline: a plain NHWC im2col (rows = output pixels, columns =
// (kh, kw, c)) and one sgemm against the HWIO kernel viewed as [kh*kw*c][o].
void BM_ConvIm2colSgemm(benchmark::State& state) {
  SetBlasThreads(1);
  const Layer& l = kLayers[state.range(0)];
  const int64_t batch = state.range(1);
  state.SetLabel(l.name);
  const int64_t os = l.out_size(), kk = l.kernel * l.kernel * l.in_c;
  std::vector<float> x = RandomFloats(batch * l.size * l.size * l.in_c, 1),
                     f = RandomFloats(kk * l.out_c, 2), y(batch * os * os * l.out_c),
                     col(batch * os * os * kk);
  for (auto _ : state) {
    float* dst = col.data();
    for (int64_t n = 0; n < batch; ++n) {
      const float* image = x.data() + n * l.size * l.size * l.in_c;
      for (int64_t oy = 0; oy < os; ++oy) {
        for (int64_t ox = 0; ox < os; ++ox) {
          for (int64_t ky = 0; ky < l.kernel; ++ky) {
            const int64_t iy = oy * l.stride + ky - l.pad;
            for (int64_t kx = 0; kx < l.kernel; ++kx) {
              const int64_t ix = ox * l.stride + kx - l.pad;
              if (iy < 0 || iy >= l.size || ix < 0 || ix >= l.size) {
                std::memset(dst, 0, l.in_c * sizeof(float));
              } else {
                std::memcpy(dst, image + (iy * l.size + ix) * l.in_c, l.in_c * sizeof(float));
              }
              dst += l.in_c;
            }
          }
        }
      }
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<int>(batch * os * os),
                static_cast<int>(l.out_c), static_cast<int>(kk), 1.0f, col.data(),
                static_cast<int>(kk), f.data(), static_cast<int>(l.out_c), 0.0f, y.data(),
                static_cast<int>(l.out_c));
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, l.flops(batch));
}

// Arguments: layer index, batch.
void ConvArgs(benchmark::internal::Benchmark* b) {
  for (int64_t batch : {1, 8}) {
    for (int64_t layer = 0; layer < kLayerCount; ++layer) b->Args({layer, batch});
  }
}

void RunConvolutionArgs(benchmark::internal::Benchmark* b, int64_t gemm) {
  for (int64_t batch : {1, 8}) {
    for (int64_t layer = 0; layer < kLayerCount; ++layer) b->Args({layer, batch, gemm, 1});
  }
}

BENCHMARK(BM_ConvRunConvolution)
    ->Apply([](benchmark::internal::Benchmark* b) { RunConvolutionArgs(b, 0); })
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvRunConvolution)
    ->Name("BM_ConvRunConvolutionGemm")
    ->Apply([](benchmark::internal::Benchmark* b) { RunConvolutionArgs(b, 1); })
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_ConvIm2colSgemm)->Apply(ConvArgs)->Unit(benchmark::kMillisecond);
// The direct kernel on 1 and 2 threads, each layer's two rows next to each
// other; wall time (UseRealTime), so `flops` is per wall second: the 2-thread
// scaling is the ratio of the two rows' times.
BENCHMARK(BM_ConvRunConvolution)
    ->Name("BM_ConvDirectThreads")
    ->Apply([](benchmark::internal::Benchmark* b) {
      b->ArgNames({"layer", "batch", "gemm", "threads"});
      for (int64_t batch : {1, 8}) {
        for (int64_t layer = 0; layer < kLayerCount; ++layer) {
          for (int64_t threads : {1, 2}) b->Args({layer, batch, 0, threads});
        }
      }
    })
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);
// The same for im2col + GEMM (the image built on the threads, OpenBLAS on
// as many).
BENCHMARK(BM_ConvRunConvolution)
    ->Name("BM_ConvGemmThreads")
    ->Apply([](benchmark::internal::Benchmark* b) {
      b->ArgNames({"layer", "batch", "gemm", "threads"});
      for (int64_t batch : {1, 8}) {
        for (int64_t layer = 0; layer < kLayerCount; ++layer) {
          for (int64_t threads : {1, 2}) b->Args({layer, batch, 1, threads});
        }
      }
    })
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// The convolutions of the cnn_forward / cnn_train models of
// benchmarks/models at their benchmark size, with the layouts the pass
// pipeline gives them (`xjit compile --dump`, final.hlo): the forward
// layers, the input gradient (kernel transposed, `01oi`) and the kernel
// gradients (the batch is the contracted "feature", the window is the
// image). Wall time (UseRealTime).
struct ModelConvolution {
  const char* name;
  const char* hlo;  // the entry computation's body: parameters a, b; ROOT c
  double flops;
};

const ModelConvolution kModelConvolutions[] = {
    {"fwd 3x3 3->64 @32 b16",
     "a = f32[16,32,32,3]{3,2,1,0} parameter(0)\n"
     "b = f32[3,3,3,64]{3,2,1,0} parameter(1)\n"
     "ROOT c = f32[16,32,32,64]{3,2,1,0} convolution(a, b), window={size=3x3 pad=1_1x1_1}, "
     "dim_labels=b01f_01io->b01f",
     2.0 * 16 * 32 * 32 * 64 * 27},
    {"fwd 3x3 64->64 @16 b16",
     "a = f32[16,16,16,64]{3,2,1,0} parameter(0)\n"
     "b = f32[3,3,64,64]{3,2,1,0} parameter(1)\n"
     "ROOT c = f32[16,16,16,64]{3,2,1,0} convolution(a, b), window={size=3x3 pad=1_1x1_1}, "
     "dim_labels=b01f_01io->b01f",
     2.0 * 16 * 16 * 16 * 64 * 576},
    {"input-grad 3x3 64->64 @16 b16",
     "a = f32[16,16,16,64]{3,2,1,0} parameter(0)\n"
     "b = f32[3,3,64,64]{2,3,1,0} parameter(1)\n"
     "ROOT c = f32[16,16,16,64]{3,2,1,0} convolution(a, b), window={size=3x3 pad=1_1x1_1}, "
     "dim_labels=b01f_01oi->b01f",
     2.0 * 16 * 16 * 16 * 64 * 576},
    {"kernel-grad 3x3 64x64 @16 b16",
     "a = f32[16,16,16,64]{0,2,1,3} parameter(0)\n"
     "b = f32[16,16,16,64]{3,0,2,1} parameter(1)\n"
     "ROOT c = f32[3,3,64,64]{3,2,1,0} convolution(a, b), window={size=16x16 pad=1_1x1_1}, "
     "dim_labels=f01b_i01o->01bf",
     2.0 * 16 * 16 * 16 * 64 * 576},
    {"kernel-grad 3x3 3x64 @32 b16",
     "a = f32[16,32,32,3]{0,2,1,3} parameter(0)\n"
     "b = f32[16,32,32,64]{3,0,2,1} parameter(1)\n"
     "ROOT c = f32[3,3,3,64]{3,2,1,0} convolution(a, b), window={size=32x32 pad=1_1x1_1}, "
     "dim_labels=f01b_i01o->01bf",
     2.0 * 16 * 32 * 32 * 64 * 27},
};

// range(0): the convolution; range(1): 0 the planner's choice, 1 the
// direct kernel, 2 im2col + GEMM; range(2): threads.
void BM_ConvModel(benchmark::State& state) {
  const ModelConvolution& c = kModelConvolutions[state.range(0)];
  const int64_t path = state.range(1);
  const int threads = static_cast<int>(state.range(2));
  SetBlasThreads(threads);
  auto module = ParseHloModule(absl::StrCat("HloModule m\nENTRY e {\n", c.hlo, "\n}\n"));
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  const Instruction& root = *(*module)->entry()->root();
  auto plan = PlanConvolution(root, threads);
  if (!plan.ok()) {
    state.SkipWithError(std::string(plan.status().message()).c_str());
    return;
  }
  if (path == 1 && !plan->has_direct) {
    state.SkipWithError("no direct plan");
    return;
  }
  if (path != 0) plan->use_direct = path == 1;
  SetBlasThreads(plan->BlasThreads());
  state.SetLabel(absl::StrCat(c.name, "; ", plan->ToString()));
  std::vector<float> x = RandomFloats(root.operand(0)->shape().element_count(), 1),
                     f = RandomFloats(root.operand(1)->shape().element_count(), 2),
                     y(root.shape().element_count());
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunConvolution(*plan, x.data(), f.data(), y.data(), scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, c.flops);
  SetBlasThreads(1);
}

BENCHMARK(BM_ConvModel)
    ->Apply([](benchmark::internal::Benchmark* b) {
      b->ArgNames({"conv", "path", "threads"});
      for (int64_t conv = 0; conv < 5; ++conv) {
        for (int64_t path : {0, 1, 2}) {
          for (int64_t threads : {1, 2}) b->Args({conv, path, threads});
        }
      }
    })
    ->UseRealTime()
    ->Unit(benchmark::kMillisecond);

// range(0): the element type (of input, kernel and output alike). Integer
// data are random bytes of 0-6 (wider types get larger values; products
// wrap at the type's width, as the evaluator's do).
void BM_ConvElementType(benchmark::State& state) {
  SetBlasThreads(1);
  const ElementType type = static_cast<ElementType>(state.range(0));
  auto module = ParseHloModule(absl::StrCat(
      "HloModule m\nENTRY e {\n  a = ", ElementTypeName(type), "[1,32,32,32] parameter(0)\n",
      "  b = ", ElementTypeName(type), "[3,3,32,32] parameter(1)\n", "  ROOT c = ",
      ElementTypeName(type), "[1,32,32,32] convolution(a, b), window={size=3x3 pad=1_1x1_1}, ",
      "dim_labels=b01f_01io->b01f\n}\n"));
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  const Instruction& root = *(*module)->entry()->root();
  auto plan = PlanConvolution(root, 1);
  if (!plan.ok()) {
    state.SkipWithError(std::string(plan.status().message()).c_str());
    return;
  }
  plan->use_direct = false;  // The same im2col + GEMM path for every type.
  state.SetLabel(absl::StrCat(ElementTypeName(type), "; ", plan->ToString()));
  const int64_t width = ByteWidth(type);
  std::mt19937_64 rng(3);
  auto fill = [&](const Shape& shape) {
    std::vector<uint8_t> bytes(shape.element_count() * width);
    if (type == ElementType::kF32) {
      std::vector<float> v = RandomFloats(shape.element_count(), rng());
      std::memcpy(bytes.data(), v.data(), bytes.size());
    } else {
      for (uint8_t& b : bytes) b = static_cast<uint8_t>(rng() % 7);
    }
    return bytes;
  };
  std::vector<uint8_t> x = fill(root.operand(0)->shape()), f = fill(root.operand(1)->shape()),
                       y(root.shape().element_count() * width);
  std::vector<uint8_t> scratch(plan->scratch_bytes);
  for (auto _ : state) {
    RunConvolution(*plan, x.data(), f.data(), y.data(), scratch.data());
    benchmark::DoNotOptimize(y.data());
  }
  SetFlops(state, 2.0 * 32 * 32 * 32 * 9 * 32);
}

BENCHMARK(BM_ConvElementType)
    ->Arg(static_cast<int64_t>(ElementType::kF32))
    ->Arg(static_cast<int64_t>(ElementType::kS8))
    ->Arg(static_cast<int64_t>(ElementType::kS16))
    ->Arg(static_cast<int64_t>(ElementType::kS32))
    ->Arg(static_cast<int64_t>(ElementType::kU8))
    ->Unit(benchmark::kMillisecond);

#if XJIT_BENCHMARK_DNNL
// oneDNN's convolution on the same layer; range(2) is 0 for `nhwc`
// (source/destination NHWC, weights `any`) and 1 for `any` (all `any`).
void BM_ConvOneDnn(benchmark::State& state) {
  omp_set_num_threads(1);
  const Layer& l = kLayers[state.range(0)];
  const int64_t batch = state.range(1);
  const bool all_any = state.range(2) != 0;
  using dnnl::memory;
  using tag = memory::format_tag;
  dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  dnnl::stream stream(engine);
  const memory::dims src_dims = {batch, l.in_c, l.size, l.size};
  const memory::dims wei_dims = {l.out_c, l.in_c, l.kernel, l.kernel};
  const memory::dims dst_dims = {batch, l.out_c, l.out_size(), l.out_size()};
  const auto f32 = memory::data_type::f32;
  memory::desc src_any(src_dims, f32, all_any ? tag::any : tag::nhwc);
  memory::desc wei_any(wei_dims, f32, tag::any);
  memory::desc dst_any(dst_dims, f32, all_any ? tag::any : tag::nhwc);
  dnnl::convolution_forward::desc desc(
      dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct, src_any, wei_any,
      dst_any, {l.stride, l.stride}, {l.pad, l.pad}, {l.pad, l.pad});
  dnnl::convolution_forward::primitive_desc pd(desc, engine);
  state.SetLabel(std::string(l.name) + (all_any ? "; any; " : "; nhwc; ") + pd.impl_info_str());
  // The data as xjit sees it (NHWC, HWIO), reordered once into oneDNN's formats.
  std::vector<float> x = RandomFloats(batch * l.size * l.size * l.in_c, 1),
                     f = RandomFloats(l.kernel * l.kernel * l.in_c * l.out_c, 2);
  memory x_user({src_dims, f32, tag::nhwc}, engine, x.data());
  memory f_user({wei_dims, f32, tag::hwio}, engine, f.data());
  memory src(pd.src_desc(), engine), wei(pd.weights_desc(), engine), dst(pd.dst_desc(), engine);
  dnnl::reorder(x_user, src).execute(stream, x_user, src);
  dnnl::reorder(f_user, wei).execute(stream, f_user, wei);
  stream.wait();
  dnnl::convolution_forward conv(pd);
  const std::unordered_map<int, memory> args = {
      {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, wei}, {DNNL_ARG_DST, dst}};
  for (auto _ : state) {
    conv.execute(stream, args);
    stream.wait();
    benchmark::DoNotOptimize(dst.get_data_handle());
  }
  SetFlops(state, l.flops(batch));
}

void OneDnnArgs(benchmark::internal::Benchmark* b) {
  for (int64_t form : {0, 1}) {
    for (int64_t batch : {1, 8}) {
      for (int64_t layer = 0; layer < kLayerCount; ++layer) b->Args({layer, batch, form});
    }
  }
}

BENCHMARK(BM_ConvOneDnn)->Apply(OneDnnArgs)->Unit(benchmark::kMillisecond);
#endif

}  // namespace
}  // namespace xjit::runtime::blas

BENCHMARK_MAIN();
