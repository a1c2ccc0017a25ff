// rng-bit-generator compiled (runtime/rng: vector loops, AVX2 where the CPU
// has it) next to its baselines in the same run (issue 16). u32[1024,1024]
// (4 MiB of bits), one thread.
//
//   BitGenerator/{threefry,philox}/xjit       the compiled module;
//   BitGenerator/{threefry,philox}/scalar     the evaluator's own scalar
//                                             block functions
//                                             (eval::internal::ThreeFry2x32,
//                                             Philox4x32) in a plain loop
//                                             writing the same words;
//   BitGenerator/{threefry,philox}/evaluator  EvaluateModule.
// Ratios: scalar time / xjit time (the vector loops' gain) and evaluator
// time / xjit time.
// Built by meson, never run as a test:
//   build/benchmarks/rng_benchmark --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "benchmarks/parse_or_die.h"
#include "interpreter/evaluator.h"
#include "interpreter/ops_internal.h"
#include "jit/compile.h"
#include "runtime/executable.h"

namespace xjit {
namespace {

constexpr int64_t kRows = 1024, kCols = 1024;

std::string BitGeneratorModule(bool three_fry) {
  const std::string state = three_fry ? "u64[2]" : "u64[3]";
  return "HloModule m\nENTRY e {\n  s = " + state + " parameter(0)\n  ROOT r = (" + state +
         ", u32[1024,1024]) rng-bit-generator(s), algorithm=" +
         (three_fry ? "rng_three_fry" : "rng_philox") + "\n}\n";
}

void BM_Xjit(benchmark::State& state, bool three_fry) {
  std::unique_ptr<Module> module = ParseOrDie(BitGeneratorModule(three_fry));
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, jit::CompileOptions(), &report);
  if (!executable.ok() || !report.interpreted_steps.empty()) std::abort();
  const std::vector<uint64_t> seed = {42, 7, 0};
  std::vector<uint8_t> result((*executable)->plan().result_bytes);
  const std::vector<const void*> parameters = {seed.data()};
  for (auto _ : state) {
    absl::Status status = (*executable)->Execute(parameters, result.data());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result.data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 4);
}

// The same words as the compiled module writes (the ThreeFry split along the
// even first dimension: rows 2j and 2j + 1 from one block per column).
void BM_Scalar(benchmark::State& state, bool three_fry) {
  std::vector<uint32_t> out(kRows * kCols);
  const std::array<uint32_t, 2> key = {42, 0};
  for (auto _ : state) {
    if (three_fry) {
      for (int64_t j = 0; j < kRows / 2; ++j) {
        for (int64_t i = 0; i < kCols; ++i) {
          const uint64_t c = 7 + static_cast<uint64_t>(j * kCols + i);
          const auto r = eval::internal::ThreeFry2x32(
              {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32)}, key);
          out[(2 * j) * kCols + i] = r[0];
          out[(2 * j + 1) * kCols + i] = r[1];
        }
      }
    } else {
      for (int64_t b = 0; b < kRows * kCols / 4; ++b) {
        const uint64_t c = 7 + static_cast<uint64_t>(b);
        const auto r = eval::internal::Philox4x32(
            {static_cast<uint32_t>(c), static_cast<uint32_t>(c >> 32), 0, 0}, key);
        for (int w = 0; w < 4; ++w) out[4 * b + w] = r[w];
      }
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 4);
}

void BM_Evaluator(benchmark::State& state, bool three_fry) {
  std::unique_ptr<Module> module = ParseOrDie(BitGeneratorModule(three_fry));
  Literal seed(Shape::Array(ElementType::kU64, {three_fry ? 2 : 3}));
  seed.SetBits({0}, 42);
  seed.SetBits({1}, 7);
  std::vector<Literal> arguments;
  arguments.push_back(std::move(seed));
  for (auto _ : state) {
    absl::StatusOr<Literal> result = EvaluateModule(*module, arguments);
    if (!result.ok()) std::abort();
    benchmark::DoNotOptimize(*result);
  }
  state.SetBytesProcessed(state.iterations() * kRows * kCols * 4);
}

BENCHMARK_CAPTURE(BM_Xjit, threefry, true)->Name("BitGenerator/threefry/xjit")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Scalar, threefry, true)->Name("BitGenerator/threefry/scalar")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluator, threefry, true)->Name("BitGenerator/threefry/evaluator")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Xjit, philox, false)->Name("BitGenerator/philox/xjit")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Scalar, philox, false)->Name("BitGenerator/philox/scalar")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Evaluator, philox, false)->Name("BitGenerator/philox/evaluator")
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xjit
BENCHMARK_MAIN();
