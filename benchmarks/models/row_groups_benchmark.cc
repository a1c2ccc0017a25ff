// Row-wise fusion against memory bandwidth, in one run:
//
//   RowWise/op/mode/threads/misaligned  softmax (op 0) or layer norm (op 1) over the
//                               rows of f32[4096,4096], CompileOptions::
//                               threads = threads; mode 0: separate kernels
//                               (row fusion and row groups off), 1: row
//                               groups (jit/kernel/row_groups.h), 2: row fusion,
//                               one kernel (passes/fuse.cc rule 5, the
//                               default).
//   Triad/threads               a[i] = b[i] + s*c[i] over 16M floats, written
//                               by hand (O3), split over the shared pool.
//
// Every array starts at a 64-byte boundary, as xjit's own buffers do
// (runtime/buffer_plan.h); RowWise/.../misaligned:1 writes the output one
// float past it (row fusion streams it after a scalar head per row:
// jit/x64 PlanRowStreaming), misaligned:2 half a float past it, which no
// element ever aligns, so row fusion uses ordinary stores there (what
// misaligned:1 got before the head): the two versions in one process.
//
// bytes_per_second counts the bytes each must move at the least: softmax and
// layer norm read x and write the result (2 x 64 MiB; layer norm's scale and
// offset rows are noise), the triad reads two arrays and writes one (3 x 64
// MiB). They reach the triad's rate when they move only those bytes at the
// triad's speed.
//   build/benchmarks/models/row_groups_benchmark --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmarks/parse_or_die.h"
#include "jit/compile.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"

namespace xjit {
namespace {

constexpr int64_t kRows = 4096, kCols = 4096;

constexpr char kReducers[] = R"(
%max (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %m = f32[] maximum(%a, %b)
}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(%a, %b)
}
)";

// One HLO line per source line.
// clang-format off
std::string Softmax() {
  const std::string m = absl::StrCat("f32[", kRows, ",", kCols, "]");
  const std::string r = absl::StrCat("f32[", kRows, "]");
  return absl::StrCat("HloModule softmax\n", kReducers, "ENTRY e {\n",
      "  x = ", m, " parameter(0)\n",
      "  ninf = f32[] constant(-inf)\n",
      "  zero = f32[] constant(0)\n",
      "  mx = ", r, " reduce(x, ninf), dimensions={1}, to_apply=%max\n",
      "  mxb = ", m, " broadcast(mx), dimensions={0}\n",
      "  sh = ", m, " subtract(x, mxb)\n",
      "  ex = ", m, " exponential(sh)\n",
      "  sm = ", r, " reduce(ex, zero), dimensions={1}, to_apply=%add\n",
      "  smb = ", m, " broadcast(sm), dimensions={0}\n",
      "  ROOT out = ", m, " divide(ex, smb)\n}\n");
}
// clang-format on

// One HLO line per source line.
// clang-format off
std::string LayerNorm() {
  const std::string m = absl::StrCat("f32[", kRows, ",", kCols, "]");
  const std::string r = absl::StrCat("f32[", kRows, "]");
  const std::string c = absl::StrCat("f32[", kCols, "]");
  return absl::StrCat("HloModule layer_norm\n", kReducers, "ENTRY e {\n",
      "  x = ", m, " parameter(0)\n",
      "  g = ", c, " parameter(1)\n",
      "  b = ", c, " parameter(2)\n",
      "  zero = f32[] constant(0)\n",
      "  n = f32[] constant(", kCols, ")\n",
      "  eps = f32[] constant(1e-5)\n",
      "  s = ", r, " reduce(x, zero), dimensions={1}, to_apply=%add\n",
      "  nb = ", r, " broadcast(n), dimensions={}\n",
      "  mean = ", r, " divide(s, nb)\n",
      "  meanb = ", m, " broadcast(mean), dimensions={0}\n",
      "  xc = ", m, " subtract(x, meanb)\n",
      "  sq = ", m, " multiply(xc, xc)\n",
      "  ss = ", r, " reduce(sq, zero), dimensions={1}, to_apply=%add\n",
      "  var = ", r, " divide(ss, nb)\n",
      "  epsb = ", r, " broadcast(eps), dimensions={}\n",
      "  ve = ", r, " add(var, epsb)\n",
      "  rs = ", r, " rsqrt(ve)\n",
      "  rsb = ", m, " broadcast(rs), dimensions={0}\n",
      "  y = ", m, " multiply(xc, rsb)\n",
      "  gb = ", m, " broadcast(g), dimensions={1}\n",
      "  bb = ", m, " broadcast(b), dimensions={1}\n",
      "  yg = ", m, " multiply(y, gb)\n",
      "  ROOT out = ", m, " add(yg, bb)\n}\n");
}
// clang-format on

// n floats at a 64-byte boundary (and one spare float for misaligned:1).
struct Floats {
  explicit Floats(int64_t n)
      : data(static_cast<float*>(std::aligned_alloc(64, (n * sizeof(float) + 64 + 63) / 64 * 64))) {
    if (data == nullptr) std::abort();
    std::fill(data, data + n + 1, 0.0f);
  }
  ~Floats() { std::free(data); }
  Floats(const Floats&) = delete;
  Floats& operator=(const Floats&) = delete;
  float* data;
};

std::unique_ptr<Floats> RandomFloats(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<float> dist(-4.0f, 4.0f);
  auto v = std::make_unique<Floats>(n);
  for (int64_t i = 0; i < n; ++i) v->data[i] = dist(rng);
  return v;
}

// range(0): 0 softmax, 1 layer norm; range(1): mode (above); range(2):
// threads; range(3): the output 0, 4 (1) or 2 (2) bytes past a 64-byte
// boundary.
void BM_RowWise(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(state.range(0) == 0 ? Softmax() : LayerNorm());
  jit::CompileOptions options;
  options.row_groups = state.range(1) == 1;
  options.row_fusion = state.range(1) == 2;
  options.threads = static_cast<int>(state.range(2));
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
      jit::Compile(*module, options, &report);
  if (!exe.ok()) {
    state.SkipWithError(std::string(exe.status().message()).c_str());
    return;
  }
  int groups = 0;
  for (const runtime::Step& step : (*exe)->steps()) {
    groups += step.kind == runtime::Step::Kind::kRowGroup;
  }
  std::unique_ptr<Floats> x = RandomFloats(kRows * kCols, 1), g = RandomFloats(kCols, 2),
                         b = RandomFloats(kCols, 3), out = std::make_unique<Floats>(kRows * kCols);
  const int64_t offset = state.range(3) == 1 ? 4 : state.range(3) == 2 ? 2 : 0;
  float* result = reinterpret_cast<float*>(reinterpret_cast<char*>(out->data) + offset);
  std::vector<const void*> parameters = {x->data};
  if (state.range(0) == 1) parameters = {x->data, g->data, b->data};
  for (auto _ : state) {
    absl::Status s = (*exe)->Execute(parameters, result);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 2 * kRows * kCols *
                          static_cast<int64_t>(sizeof(float)));
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["groups"] = groups;
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

__attribute__((noinline)) void Triad(float* a, const float* b, const float* c, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

void BM_Triad(benchmark::State& state) {
  const int64_t n = kRows * kCols;
  const int threads = static_cast<int>(state.range(0));
  Floats a(n);
  std::unique_ptr<Floats> b = RandomFloats(n, 1), c = RandomFloats(n, 2);
  for (auto _ : state) {
    if (threads <= 1) {
      Triad(a.data, b->data, c->data, 0.5f, n);
    } else {
      runtime::ThreadPool::Shared().ParallelFor(threads, threads - 1, [&](int64_t k) {
        const int64_t begin = n * k / threads, end = n * (k + 1) / threads;
        Triad(a.data + begin, b->data + begin, c->data + begin, 0.5f, end - begin);
      });
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * static_cast<int64_t>(sizeof(float)));
}

BENCHMARK(BM_Triad)
    ->ArgName("threads")
    ->Arg(1)
    ->Arg(2)
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_RowWise)
    ->ArgNames({"op", "mode", "threads", "misaligned"})
    ->ArgsProduct({{0, 1}, {0, 1, 2}, {1, 2}, {0}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_RowWise)
    ->ArgNames({"op", "mode", "threads", "misaligned"})
    ->ArgsProduct({{0, 1}, {2}, {1, 2}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
