// All-reduce over MPI: xjit's fixed-order f32 all-reduce (MpiCommunicator,
// runtime/collectives/mpi_communicator.h) against a bare MPI_Allreduce of
// the same buffer, in the same run. Run under mpirun (docs/mpi.md):
//
//   mpirun --oversubscribe -np 2 build/benchmarks/mpi_allreduce_benchmark
//
// (as root, with OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1).
//
// Cases, each on 64 MiB of f32 (and 1 MiB) per rank:
//   BareMpiAllreduce    MPI_Allreduce(MPI_FLOAT, MPI_SUM) on MPI_COMM_WORLD;
//   CommunicatorSum     MpiCommunicator::AllReduce (kSum, f32): the bits
//                       fixed by xjit whatever the rank placement;
//   CompiledAllReduce   a compiled `all-reduce(x), to_apply=add` module run
//                       with Executable::Execute on this rank (the step
//                       plus the executable's own copies).
// Every rank runs every iteration (fixed counts: MPI ranks must agree on
// them, so no adaptive iteration count); each iteration starts after an
// MPI_Barrier and its time is this rank's (manual time). Rank 0 reports.
#include <mpi.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "benchmark/benchmark.h"
#include "benchmarks/parse_or_die.h"
#include "jit/compile.h"
#include "runtime/collectives/mpi_communicator.h"
#include "runtime/executable.h"

namespace xjit {
namespace {

std::vector<float> Values(int64_t count, int rank) {
  std::vector<float> values(count);
  for (int64_t i = 0; i < count; ++i) {
    values[i] = static_cast<float>((i * 7 + rank * 13) % 1000) * 0.001f - 0.5f;
  }
  return values;
}

std::string ModuleText(int64_t count) {
  return absl::StrCat(
      "HloModule allreduce\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[", count, "] parameter(0)\n"
      "  ROOT r = f32[", count, "] all-reduce(x), replica_groups={}, to_apply=add\n}\n");
}

int Rank() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int Size() {
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

template <typename Body>
void TimeIterations(benchmark::State& state, Body body) {
  for (auto _ : state) {
    MPI_Barrier(MPI_COMM_WORLD);
    const double start = MPI_Wtime();
    if (!body()) {
      state.SkipWithError("the all-reduce failed");
      return;
    }
    state.SetIterationTime(MPI_Wtime() - start);
  }
  state.SetBytesProcessed(state.iterations() * state.range(0) * 4);
}

void BareMpiAllreduce(benchmark::State& state) {
  const int64_t count = state.range(0);
  std::vector<float> in = Values(count, Rank()), out(count);
  TimeIterations(state, [&] {
    return MPI_Allreduce(in.data(), out.data(), static_cast<int>(count), MPI_FLOAT, MPI_SUM,
                         MPI_COMM_WORLD) == MPI_SUCCESS;
  });
}

void CommunicatorSum(benchmark::State& state) {
  const int64_t count = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(ModuleText(count));
  const Instruction& site = *module->entry()->root();
  absl::StatusOr<std::unique_ptr<collectives::Communicator>> communicator =
      collectives::MakeMpiCommunicator(MPI_Comm_c2f(MPI_COMM_WORLD));
  if (!communicator.ok()) {
    state.SkipWithError(std::string(communicator.status().message()).c_str());
    return;
  }
  std::vector<int64_t> group;
  for (int r = 0; r < Size(); ++r) group.push_back(r);
  std::vector<float> in = Values(count, Rank()), out(count);
  TimeIterations(state, [&] {
    return (*communicator)
        ->AllReduce(site, group, ElementType::kF32, collectives::ReductionKind::kSum, in.data(),
                    out.data(), count)
        .ok();
  });
}

void CompiledAllReduce(benchmark::State& state) {
  const int64_t count = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(ModuleText(count));
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = jit::Compile(*module, jit::CompileOptions(), nullptr);
  absl::StatusOr<std::unique_ptr<collectives::Communicator>> communicator =
      collectives::MakeMpiCommunicator(MPI_Comm_c2f(MPI_COMM_WORLD));
  if (!executable.ok() || !communicator.ok()) {
    state.SkipWithError("compile or communicator failed");
    return;
  }
  runtime::RunContext context;
  context.replica_id = Rank();
  context.communicator = communicator->get();
  std::vector<float> in = Values(count, Rank()), out(count);
  const void* parameters[] = {in.data()};
  TimeIterations(state, [&] {
    return (*executable)->Execute(parameters, out.data(), context).ok();
  });
}

// 64 MiB and 1 MiB of f32.
#define XJIT_MPI_CASE(name)                                                              \
  BENCHMARK(name)->Arg(int64_t{16} << 20)->Arg(int64_t{256} << 10)->Iterations(10)->   \
      Repetitions(5)->ReportAggregatesOnly(true)->UseManualTime()->Unit(benchmark::kMillisecond)
XJIT_MPI_CASE(BareMpiAllreduce);
XJIT_MPI_CASE(CommunicatorSum);
XJIT_MPI_CASE(CompiledAllReduce);

// Ranks other than 0 run every iteration and report nothing.
class Silent : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>&) override {}
};

}  // namespace
}  // namespace xjit

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_SERIALIZED, &provided);
  benchmark::Initialize(&argc, argv);
  if (xjit::Rank() == 0) {
    benchmark::RunSpecifiedBenchmarks();
  } else {
    xjit::Silent silent;
    benchmark::RunSpecifiedBenchmarks(&silent);
  }
  benchmark::Shutdown();
  MPI_Finalize();
  return 0;
}
