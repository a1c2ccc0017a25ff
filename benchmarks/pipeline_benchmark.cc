// What the pass pipeline buys (issue 5) and what an epilogue costs after a
// GEMM (issue 6), each next to a baseline measured in the same run:
//
//   MlpLayer/{xjit,sgemm}     relu(x . W + b), x f32[64,1024], W f32[1024,1024]:
//                             the compiled module (GEMM library call, then
//                             the bias-add + relu epilogue in place on its
//                             result) vs cblas_sgemm alone on the same
//                             buffers. Target: xjit <= 1.05 x sgemm.
//   Mlp/passes:{1,0}          a 3-layer MLP (64x1024 -> 1024 -> 1024 -> 16,
//                             relu, softmax) compiled with the pass pipeline
//                             on and off.
//   Softmax/passes:{1,0}      softmax over the rows of f32[256,1024].
//   LayerNorm/passes:{1,0}    layer normalisation over the rows of
//                             f32[256,1024] (mean, variance, scale, shift).
//   WhileLoop/compiled:{1,0}  100 iterations of x = tanh(x * 0.5) + x over
//                             f32[4096] in a while loop: the loop compiled
//                             (a while step running the body's executable)
//                             vs the same executable with the loop left to
//                             the evaluator (an interpreted step).
//
// Counters: peak_KiB and temp_KiB are the compile report's peak and temp
// bytes; kernels, library_calls and interpreted say what ran. One thread
// (OpenBLAS too). Built by meson, never run as a test:
//   build/benchmarks/pipeline_benchmark --benchmark_min_time=0.2
#include <benchmark/benchmark.h>
#include <cblas.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "ir/layout_util.h"
#include "benchmarks/parse_or_die.h"
#include "ir/module.h"
#include "jit/compile.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/executable.h"

namespace xjit {
namespace {

std::vector<float> RandomFloats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  std::vector<float> out(n);
  for (float& v : out) v = uniform(rng);
  return out;
}

// Compiles `hlo` and times Execute on random f32 parameters.
void RunModule(benchmark::State& state, const std::string& hlo, jit::CompileOptions options) {
  std::unique_ptr<Module> module = ParseOrDie(hlo);
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  std::vector<std::vector<float>> parameters;
  std::vector<const void*> addresses;
  for (const Shape& shape : (*executable)->parameter_shapes()) {
    parameters.push_back(RandomFloats(shape.element_count(), parameters.size() + 1));
    addresses.push_back(parameters.back().data());
  }
  std::vector<uint8_t> result(ByteSize((*executable)->result_shape()));
  for (auto _ : state) {
    absl::Status status = (*executable)->Execute(addresses, result.data());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result.data());
  }
  state.counters["peak_KiB"] = static_cast<double>(report.peak_bytes) / 1024;
  state.counters["temp_KiB"] = static_cast<double>(report.temp_bytes) / 1024;
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["library_calls"] = static_cast<double>(report.library_calls.size());
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

void RunModule(benchmark::State& state, const std::string& hlo, bool run_passes) {
  jit::CompileOptions options;
  options.run_passes = run_passes;
  RunModule(state, hlo, options);
}

constexpr int kBatch = 64;
constexpr int kWidth = 1024;

constexpr char kMlpLayer[] = R"(HloModule mlp_layer
ENTRY e {
  x = f32[64,1024] parameter(0)
  w = f32[1024,1024] parameter(1)
  b = f32[1024] parameter(2)
  d = f32[64,1024] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[64,1024] broadcast(b), dimensions={1}
  s = f32[64,1024] add(d, bb)
  zero = f32[] constant(0)
  zeros = f32[64,1024] broadcast(zero), dimensions={}
  ROOT relu = f32[64,1024] maximum(s, zeros)
}
)";

void BM_MlpLayer_Xjit(benchmark::State& state) {
  runtime::blas::SetBlasThreads(1);
  RunModule(state, kMlpLayer, /*run_passes=*/true);
}
BENCHMARK(BM_MlpLayer_Xjit)->Name("MlpLayer/xjit")->Unit(benchmark::kMicrosecond);

void BM_MlpLayer_Sgemm(benchmark::State& state) {
  runtime::blas::SetBlasThreads(1);
  std::vector<float> x = RandomFloats(kBatch * kWidth, 1);
  std::vector<float> w = RandomFloats(kWidth * kWidth, 2);
  std::vector<float> out(kBatch * kWidth);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, kBatch, kWidth, kWidth, 1.0f,
                x.data(), kWidth, w.data(), kWidth, 0.0f, out.data(), kWidth);
    benchmark::DoNotOptimize(out.data());
  }
}
BENCHMARK(BM_MlpLayer_Sgemm)->Name("MlpLayer/sgemm")->Unit(benchmark::kMicrosecond);

// One dense layer with relu, as HLO text: `input` (f32[64,IN]) -> `name`.
std::string Layer(const std::string& input, const std::string& name, int in, int out,
                  int parameter, bool relu) {
  std::string text = absl::StrReplaceAll(
      R"(  NAME_w = f32[IN,OUT] parameter(P)
  NAME_b = f32[OUT] parameter(Q)
  NAME_d = f32[64,OUT] dot(INPUT, NAME_w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  NAME_bb = f32[64,OUT] broadcast(NAME_b), dimensions={1}
  NAME_s = f32[64,OUT] add(NAME_d, NAME_bb)
)",
      {{"NAME", name}, {"INPUT", input}, {"IN", absl::StrCat(in)}, {"OUT", absl::StrCat(out)},
       {"(P)", absl::StrCat("(", parameter, ")")}, {"(Q)", absl::StrCat("(", parameter + 1, ")")}});
  if (relu) {
    text += absl::StrReplaceAll(R"(  NAME_zeros = f32[64,OUT] broadcast(zero), dimensions={}
  NAME = f32[64,OUT] maximum(NAME_s, NAME_zeros)
)",
                                {{"NAME", name}, {"OUT", absl::StrCat(out)}});
  } else {
    text += absl::StrCat("  ", name, " = f32[64,", out, "] copy(", name, "_s)\n");
  }
  return text;
}

// Row softmax of `input` (f32[ROWS,COLS]) into `name`; the last line is ROOT.
std::string Softmax(const std::string& input, const std::string& name, int rows, int cols) {
  return absl::StrReplaceAll(
      R"(  NAME_ninf = f32[] constant(-inf)
  NAME_max = f32[ROWS] reduce(INPUT, NAME_ninf), dimensions={1}, to_apply=max
  NAME_maxb = f32[ROWS,COLS] broadcast(NAME_max), dimensions={0}
  NAME_shift = f32[ROWS,COLS] subtract(INPUT, NAME_maxb)
  NAME_exp = f32[ROWS,COLS] exponential(NAME_shift)
  NAME_zero = f32[] constant(0)
  NAME_sum = f32[ROWS] reduce(NAME_exp, NAME_zero), dimensions={1}, to_apply=add
  NAME_sumb = f32[ROWS,COLS] broadcast(NAME_sum), dimensions={0}
  ROOT NAME = f32[ROWS,COLS] divide(NAME_exp, NAME_sumb)
)",
      {{"NAME", name}, {"INPUT", input}, {"ROWS", absl::StrCat(rows)},
       {"COLS", absl::StrCat(cols)}});
}

constexpr char kReducers[] = R"(add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}
)";

std::string MlpModule() {
  return absl::StrCat("HloModule mlp\n", kReducers, "ENTRY e {\n",
                      "  x = f32[64,1024] parameter(0)\n  zero = f32[] constant(0)\n",
                      Layer("x", "h1", 1024, 1024, 1, true), Layer("h1", "h2", 1024, 1024, 3, true),
                      Layer("h2", "logits", 1024, 16, 5, false),
                      Softmax("logits", "probs", 64, 16), "}\n");
}

void BM_Mlp(benchmark::State& state) {
  runtime::blas::SetBlasThreads(1);
  RunModule(state, MlpModule(), state.range(0) != 0);
}
BENCHMARK(BM_Mlp)->Name("Mlp")->ArgName("passes")->Arg(1)->Arg(0)->Unit(benchmark::kMicrosecond);

void BM_Softmax(benchmark::State& state) {
  const std::string hlo = absl::StrCat("HloModule softmax\n", kReducers,
                                       "ENTRY e {\n  x = f32[256,1024] parameter(0)\n",
                                       Softmax("x", "probs", 256, 1024), "}\n");
  RunModule(state, hlo, state.range(0) != 0);
}
BENCHMARK(BM_Softmax)
    ->Name("Softmax")
    ->ArgName("passes")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond);

constexpr char kLayerNorm[] = R"(HloModule layer_norm
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[256,1024] parameter(0)
  gamma = f32[1024] parameter(1)
  beta = f32[1024] parameter(2)
  zero = f32[] constant(0)
  n = f32[] constant(1024)
  eps = f32[] constant(1e-5)
  sum = f32[256] reduce(x, zero), dimensions={1}, to_apply=add
  nb = f32[256] broadcast(n), dimensions={}
  mean = f32[256] divide(sum, nb)
  meanb = f32[256,1024] broadcast(mean), dimensions={0}
  centered = f32[256,1024] subtract(x, meanb)
  squares = f32[256,1024] multiply(centered, centered)
  sumsq = f32[256] reduce(squares, zero), dimensions={1}, to_apply=add
  variance = f32[256] divide(sumsq, nb)
  epsb = f32[256] broadcast(eps), dimensions={}
  shifted = f32[256] add(variance, epsb)
  inv = f32[256] rsqrt(shifted)
  invb = f32[256,1024] broadcast(inv), dimensions={0}
  normalized = f32[256,1024] multiply(centered, invb)
  gammab = f32[256,1024] broadcast(gamma), dimensions={1}
  betab = f32[256,1024] broadcast(beta), dimensions={1}
  scaled = f32[256,1024] multiply(normalized, gammab)
  ROOT out = f32[256,1024] add(scaled, betab)
}
)";

void BM_LayerNorm(benchmark::State& state) {
  RunModule(state, kLayerNorm, state.range(0) != 0);
}
BENCHMARK(BM_LayerNorm)
    ->Name("LayerNorm")
    ->ArgName("passes")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond);

constexpr char kWhileLoop[] = R"(HloModule while_loop
cond {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(100)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4096]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4096] get-tuple-element(s), index=1
  one = s32[] constant(1)
  next_i = s32[] add(i, one)
  half = f32[] constant(0.5)
  halves = f32[4096] broadcast(half), dimensions={}
  scaled = f32[4096] multiply(x, halves)
  t = f32[4096] tanh(scaled)
  next_x = f32[4096] add(t, x)
  ROOT next = (s32[], f32[4096]) tuple(next_i, next_x)
}
ENTRY e {
  x = f32[4096] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4096]) tuple(zero, x)
  w = (s32[], f32[4096]) while(init), condition=cond, body=body
  ROOT out = f32[4096] get-tuple-element(w), index=1
}
)";

void BM_WhileLoop(benchmark::State& state) {
  jit::CompileOptions options;
  // Without a target every instruction is an interpreted step: the loop
  // runs in the evaluator, as it did before loops were compiled.
  options.interpret_only = state.range(0) == 0;
  RunModule(state, kWhileLoop, options);
}
BENCHMARK(BM_WhileLoop)
    ->Name("WhileLoop")
    ->ArgName("compiled")
    ->Arg(1)
    ->Arg(0)
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
