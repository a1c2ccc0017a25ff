// HLO sort of f32[256,4096] rows with an s32 payload (an argsort: what the
// sparse model's sort and top-k do, issue 17), each variant in the same run:
//
//   Sort/keys/T        the compiled sort whose comparator (LT, TOTALORDER)
//                      is recognised: integer keys and a radix sort
//                      (runtime/sort/key_sort.h), T threads;
//   Sort/generic/T     the compiled sort with the same order written so
//                      that it is not recognised (and(lt, true), passes
//                      off so the simplifier keeps it): the merge sort
//                      calling the comparator kernel per comparison;
//   Sort/stable_sort   std::stable_sort of (total-order key, index) pairs
//                      per row, then the values and indices written out:
//                      the standard library doing the same work;
//   TopK/T             topk k=16 of the same rows (largest, through
//                      expand-topk and whatever path the driver picks).
// Ratios: generic / keys and stable_sort / keys. Arguments: normal-ish
// random floats with a few ties.
// Built by meson, never run as a test:
//   build/benchmarks/sort_benchmark --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "benchmarks/parse_or_die.h"
#include "jit/compile.h"
#include "runtime/executable.h"

namespace xjit {
namespace {

constexpr int64_t kRows = 256, kCols = 4096, kTopK = 16;

std::string SortModule(bool recognised) {
  const std::string root = recognised
                               ? "  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
                               : "  lt = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
                                 "  t = pred[] constant(true)\n"
                                 "  ROOT r = pred[] and(lt, t)\n";
  return "HloModule m\ncmp {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
         "  i = s32[] parameter(2)\n  j = s32[] parameter(3)\n" +
         root +
         "}\nENTRY e {\n  p = f32[256,4096] parameter(0)\n  q = s32[256,4096] parameter(1)\n"
         "  ROOT s = (f32[256,4096], s32[256,4096]) sort(p, q), dimensions={1}, "
         "is_stable=true, to_apply=cmp\n}\n";
}

std::string TopKModule() {
  return "HloModule m\nENTRY e {\n  p = f32[256,4096] parameter(0)\n"
         "  ROOT t = (f32[256,16], s32[256,16]) topk(p), k=16, largest=true\n}\n";
}

std::vector<float> Values() {
  std::mt19937 rng(5);
  std::normal_distribution<float> normal;
  std::vector<float> values(kRows * kCols);
  for (float& v : values) v = rng() % 64 == 0 ? 1.0f : normal(rng);
  return values;
}

std::vector<int32_t> Positions() {
  std::vector<int32_t> positions(kRows * kCols);
  for (int64_t i = 0; i < kRows * kCols; ++i) positions[i] = static_cast<int32_t>(i % kCols);
  return positions;
}

// Compiles `hlo`; aborts unless every sort's plan has (or has not) keys.
std::unique_ptr<runtime::Executable> CompileOrDie(const std::string& hlo, int threads,
                                                  bool run_passes, int expect_keys) {
  std::unique_ptr<Module> module = ParseOrDie(hlo);
  jit::CompileOptions options;
  options.threads = threads;
  options.run_passes = run_passes;
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok() || !report.interpreted_steps.empty()) std::abort();
  for (const jit::LibraryCallInfo& call : report.library_calls) {
    if (call.routine == "sort" && expect_keys >= 0 &&
        absl::StrContains(call.plan, "keys=") != (expect_keys == 1)) {
      std::abort();
    }
  }
  return *std::move(executable);
}

void RunExecutable(benchmark::State& state, const runtime::Executable& executable,
                   const std::vector<const void*>& parameters) {
  std::vector<uint8_t> result(executable.plan().result_bytes);
  for (auto _ : state) {
    absl::Status status = executable.Execute(parameters, result.data());
    if (!status.ok()) {
      state.SkipWithError(std::string(status.message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}

void BM_Sort(benchmark::State& state, bool recognised) {
  const int threads = static_cast<int>(state.range(0));
  std::unique_ptr<runtime::Executable> executable =
      CompileOrDie(SortModule(recognised), threads, /*run_passes=*/false, recognised ? 1 : 0);
  const std::vector<float> values = Values();
  const std::vector<int32_t> positions = Positions();
  RunExecutable(state, *executable, {values.data(), positions.data()});
}

void BM_StableSort(benchmark::State& state) {
  const std::vector<float> values = Values();
  std::vector<float> sorted(kRows * kCols);
  std::vector<int32_t> indices(kRows * kCols);
  std::vector<std::pair<uint32_t, int32_t>> row(kCols);
  for (auto _ : state) {
    for (int64_t r = 0; r < kRows; ++r) {
      const float* x = values.data() + r * kCols;
      for (int64_t i = 0; i < kCols; ++i) {
        uint32_t bits;
        std::memcpy(&bits, &x[i], 4);
        row[i] = {(bits & 0x80000000u) != 0 ? ~bits : bits | 0x80000000u, static_cast<int32_t>(i)};
      }
      std::stable_sort(row.begin(), row.end(),
                       [](const auto& a, const auto& b) { return a.first < b.first; });
      for (int64_t i = 0; i < kCols; ++i) {
        sorted[r * kCols + i] = x[row[i].second];
        indices[r * kCols + i] = row[i].second;
      }
    }
    benchmark::DoNotOptimize(sorted.data());
    benchmark::DoNotOptimize(indices.data());
  }
  state.SetItemsProcessed(state.iterations() * kRows * kCols);
}

void BM_TopK(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  std::unique_ptr<runtime::Executable> executable =
      CompileOrDie(TopKModule(), threads, /*run_passes=*/true, /*expect_keys=*/-1);
  const std::vector<float> values = Values();
  RunExecutable(state, *executable, {values.data()});
}

BENCHMARK_CAPTURE(BM_Sort, keys, true)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Sort, generic, false)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_StableSort)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_TopK)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
