// The in-process all-reduce (runtime/collectives/in_process.h) next to its
// baselines in the same run. Replicas are threads; every figure is the wall
// time of one all-reduce as seen by replica 0 (UseRealTime), for an f32 sum
// of `bytes` per replica:
//
//   AllReduce/in_place/BYTES/N     InProcessCommunicator::AllReduce: the
//                                  members exchange addresses, each folds
//                                  1/N of the elements and writes it into
//                                  every member's output.
//   AllReduce/gather_fold/BYTES/N  the interface's default (what the
//                                  in-process transport did before): every
//                                  member's array gathered through the
//                                  rendezvous, then folded by each replica.
//   Memcpy/BYTES                   one memcpy of the same size on one
//                                  thread: the floor a replica pays to
//                                  receive the result at all.
//
// Report in_place / memcpy (ratio of times) and in_place / gather_fold.
// Built by meson, never run as a test:
//   build/benchmarks/collectives_benchmark --benchmark_min_time=0.5
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <thread>
#include <vector>

#include "benchmarks/parse_or_die.h"
#include "interpreter/collectives.h"
#include "ir/module.h"
#include "runtime/collectives/in_process.h"

namespace xjit {
namespace {

// A site for the rendezvous to key on (its identity is all that matters).
const Instruction& Site() {
  static const Module* module = ParseOrDie(R"(HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=add
})")
                                    .release();
  return *module->entry()->root();
}

void RunAllReduce(benchmark::State& state, bool in_place) {
  const int64_t count = state.range(0) / 4;
  const int64_t replicas = state.range(1);
  const int64_t rounds = state.max_iterations;
  eval::Rendezvous rendezvous(replicas);
  std::vector<std::unique_ptr<collectives::InProcessCommunicator>> communicators;
  std::vector<int64_t> group;
  for (int64_t r = 0; r < replicas; ++r) {
    communicators.push_back(std::make_unique<collectives::InProcessCommunicator>(&rendezvous, r));
    group.push_back(r);
  }
  std::vector<std::vector<float>> in(replicas, std::vector<float>(count, 1.0f));
  std::vector<std::vector<float>> out(replicas, std::vector<float>(count));
  const Instruction& site = Site();
  auto once = [&](int64_t r) {
    collectives::InProcessCommunicator& c = *communicators[r];
    absl::Status status =
        in_place ? c.AllReduce(site, group, ElementType::kF32, collectives::ReductionKind::kSum,
                               in[r].data(), out[r].data(), count)
                 : c.Communicator::AllReduce(site, group, ElementType::kF32,
                                             collectives::ReductionKind::kSum, in[r].data(),
                                             out[r].data(), count);
    if (!status.ok()) std::abort();
  };
  // Replicas 1..N-1 run `rounds` all-reduces on their own threads; replica 0
  // runs one per benchmark iteration.
  std::vector<std::thread> others;
  for (int64_t r = 1; r < replicas; ++r) {
    others.emplace_back([&, r] {
      for (int64_t i = 0; i < rounds; ++i) once(r);
    });
  }
  for (auto _ : state) once(0);
  for (std::thread& t : others) t.join();
  if (out[0][count / 2] != static_cast<float>(replicas)) state.SkipWithError("wrong sum");
  state.SetBytesProcessed(state.iterations() * count * 4);
}

void BM_AllReduceInPlace(benchmark::State& state) { RunAllReduce(state, true); }
void BM_AllReduceGatherFold(benchmark::State& state) { RunAllReduce(state, false); }

void BM_Memcpy(benchmark::State& state) {
  const int64_t bytes = state.range(0);
  std::vector<uint8_t> from(bytes, 1), to(bytes);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::DoNotOptimize(to.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

// A fixed number of iterations: the other replicas' threads must know it.
BENCHMARK(BM_AllReduceInPlace)
    ->Name("AllReduce/in_place")
    ->Args({1 << 20, 2})
    ->Args({1 << 20, 4})
    ->Args({16 << 20, 4})
    ->Iterations(200)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_AllReduceGatherFold)
    ->Name("AllReduce/gather_fold")
    ->Args({1 << 20, 2})
    ->Args({1 << 20, 4})
    ->Args({16 << 20, 4})
    ->Iterations(50)
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memcpy)->Arg(1 << 20)->Arg(16 << 20)->UseRealTime()->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
