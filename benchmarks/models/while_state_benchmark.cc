// The cost of one iteration of a scan-shaped while loop against its trip
// count and its state size, with the state updated in place (the default)
// and without (CompileOptions::while_state_in_place = false, the baseline),
// in one run:
//
//   Scan/steps/width/in_place   a loop of `steps` iterations over the state
//                               (i, h: f32[width], ys: f32[steps,width]):
//                               h = h * 0.5 + 1; ys[i] = h; i += 1. The
//                               stacked output ys is steps x width floats.
//                               native: CompileOptions::native_loops (the
//                               loop as emitted code, runtime/native_loop.h)
//                               or over bound steps.
//
//   Module/in_place/threads     the module in the file $XJIT_WHILE_MODULE
//                               (skipped when unset), every parameter
//                               filled with 0.01f-ish bytes: a whole model
//                               (models/generate.py's LSTM) with and without
//                               the state in place.
//
// Counter `ns_per_iteration` = CPU time of a run / steps. With the state in
// place an iteration writes one row of ys (width floats) and nothing else of
// the state, so its cost must not grow with `steps` (the state's size); the
// baseline rewrites all of ys every iteration, so its cost grows with it.
//   build/benchmarks/models/while_state_benchmark --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmarks/parse_or_die.h"
#include "ir/layout_util.h"
#include "jit/compile.h"
#include "runtime/executable.h"

namespace xjit {
namespace {

// One HLO line per source line.
// clang-format off
std::string Scan(int64_t steps, int64_t width) {
  const std::string h = absl::StrCat("f32[", width, "]");
  const std::string row = absl::StrCat("f32[1,", width, "]");
  const std::string ys = absl::StrCat("f32[", steps, ",", width, "]");
  const std::string state = absl::StrCat("(s32[], ", h, ", ", ys, ")");
  return absl::StrCat("HloModule scan\n",
      "cond {\n",
      "  s = ", state, " parameter(0)\n",
      "  i = s32[] get-tuple-element(s), index=0\n",
      "  ROOT lt = pred[] compare(i, s32[] constant(", steps, ")), direction=LT\n}\n",
      "body {\n",
      "  s = ", state, " parameter(0)\n",
      "  i = s32[] get-tuple-element(s), index=0\n",
      "  h = ", h, " get-tuple-element(s), index=1\n",
      "  ys = ", ys, " get-tuple-element(s), index=2\n",
      "  half = ", h, " broadcast(f32[] constant(0.5)), dimensions={}\n",
      "  one = ", h, " broadcast(f32[] constant(1)), dimensions={}\n",
      "  h1 = ", h, " add(multiply(h, half), one)\n",
      "  u = ", row, " reshape(h1)\n",
      "  ys1 = ", ys, " dynamic-update-slice(ys, u, i, s32[] constant(0))\n",
      "  ROOT next = ", state, " tuple(add(i, s32[] constant(1)), h1, ys1)\n}\n",
      "ENTRY e {\n",
      "  h = ", h, " parameter(0)\n",
      "  ys = ", ys, " broadcast(f32[] constant(0)), dimensions={}\n",
      "  init = ", state, " tuple(s32[] constant(0), h, ys)\n",
      "  w = ", state, " while(init), condition=cond, body=body\n",
      "  ROOT r = ", ys, " get-tuple-element(w), index=2\n}\n");
}
// clang-format on

void BM_Scan(benchmark::State& state) {
  const int64_t steps = state.range(0), width = state.range(1);
  std::unique_ptr<Module> module = ParseOrDie(Scan(steps, width));
  jit::CompileOptions options;
  options.while_state_in_place = state.range(2) != 0;
  options.native_loops = state.range(3) != 0;
  options.cache = false;
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  std::vector<float> h(width, 0.25f), ys(steps * width);
  const void* parameters[] = {h.data()};
  for (auto _ : state) {
    absl::Status status = (*executable)->Execute(parameters, ys.data());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(ys.data());
  }
  state.counters["ns_per_iteration"] = benchmark::Counter(
      static_cast<double>(steps), benchmark::Counter::kIsIterationInvariantRate |
                                      benchmark::Counter::kInvert);
  state.counters["state_bytes"] = static_cast<double>((steps + 1) * width * 4 + 4);
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

void BM_Module(benchmark::State& state) {
  const char* path = std::getenv("XJIT_WHILE_MODULE");
  if (path == nullptr) {
    state.SkipWithError("set XJIT_WHILE_MODULE to an HLO file");
    return;
  }
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  std::unique_ptr<Module> module = ParseOrDie(text.str());
  jit::CompileOptions options;
  options.while_state_in_place = state.range(0) != 0;
  options.threads = static_cast<int>(state.range(1));
  options.cache = false;
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
    parameters.emplace_back(ByteSize(shape) / 4 + 1, 0.01f);
  }
  for (const auto& p : parameters) addresses.push_back(p.data());
  std::vector<uint8_t> result((*executable)->plan().result_bytes);
  for (auto _ : state) {
    absl::Status status = (*executable)->Execute(addresses, result.data());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result.data());
  }
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

BENCHMARK(BM_Module)
    ->ArgNames({"in_place", "threads"})
    ->ArgsProduct({{1, 0}, {1, 2}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_Scan)
    ->ArgNames({"steps", "width", "in_place", "native"})
    ->ArgsProduct({{64, 256, 1024}, {64, 256}, {1, 0}, {1, 0}})
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
