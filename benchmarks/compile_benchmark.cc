// Compile time and memory per instruction (issue 14), from 10 to 100,000
// instructions, so that docs/compile_time.md can state that the cost per
// instruction is flat:
//
//   CompileChain/KIND/N   jit::Compile (the pass pipeline on, parse
//                         excluded) of an entry of N chained elementwise
//                         instructions over f32[1024], which the pipeline
//                         fuses into kernels of at most 128 instructions
//                         (FuseOptions::max_fusion_size). KIND 0: add (x_i =
//                         x_{i-1} + p1); 1: sine (x_i = sin(x_{i-1})); 2: a math
//                         mix (exp, log, tanh, sine, cosine, logistic, erf,
//                         add, multiply in turn); 3: the two-user add chain
//                         x_i = x_{i-1} + x_{i-2} (every value has two users;
//                         fused into O(n^2) kernels before issue 14's fuse
//                         fix, now O(n)). Counters: us_per_inst (the
//                         time per iteration / N), code_bytes (the kernels'),
//                         kernels, interpreted.
//   CompileWideTuple/N    jit::Compile of an entry whose root is a tuple of N
//                         scalars, each computed by its own add (2N + 2
//                         instructions; us_per_inst as above).
//   FirstCompile          the first jit::Compile in a fresh process (a forked
//                         child) against the second, of the 100-add chain.
//   CompileMath/MODE      100 chained sines, fused, with the math lowering
//                         forced: 0 inline, 1 out of line (the default rule
//                         picks 1 for this kernel).
//   MathKernelRun/K/MODE  run time of one kernel of K chained math functions
//                         over f32[4M], inline (0) or out of line (1).
//   CompileCached/N       the same N-add module compiled again with the
//                         compile cache on (jit/compile_cache.h): a hit.
//   CompileNested/KIND/D  jit::Compile of computations nested D deep (the
//                         verifier allows 256 levels): KIND 0, each level a
//                         while loop whose body holds the next one (every
//                         body is compiled as a program of its own); 1, each
//                         level a call of the next (the pipeline inlines
//                         them all into the entry). Counter: us_per_level
//                         (process CPU time per iteration / D, since deep
//                         modules compile on a thread of their own): flat
//                         when compiling is
//                         linear in the depth (issue 15; each body's compile
//                         copied the whole module before, quadratic).
//   CompileProgram/I      jit::Compile (parse excluded) of the I-th program
//                         of models/programs (kPrograms below: modules that
//                         JAX and third-party libraries wrote, with nested
//                         while loops and conditionals; issue 26). The
//                         directory is $XJIT_PROGRAMS, else models/programs
//                         under the working directory; a missing fixture
//                         skips the case with a message. Counters:
//                         instructions (all computations), us_per_inst
//                         (process CPU time per iteration / instructions).
//                         XLA:CPU's compile times are in
//                         models/programs/programs.json.
//   Memory/KIND/N         peak heap bytes per instruction while building
//                         the module with ir/builder.h (build_B_per_inst),
//                         parsing its text (parse_B_per_inst) and compiling
//                         it (compile_B_per_inst); measured by counting
//                         this binary's operator new/delete.
//
// Built by meson, never run as a test:
//   build/benchmarks/compile_benchmark --benchmark_min_time=0.2
#include <benchmark/benchmark.h>

#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <memory>
#include <new>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "benchmarks/parse_or_die.h"
#include "ir/builder.h"
#include "ir/hlo_text/parser.h"
#include "ir/module.h"
#include "jit/compile.h"
#include "jit/compile_cache.h"
#include "runtime/executable.h"

// ---- Heap accounting (this binary only) ----
namespace {
std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> peak_bytes{0};

void* Allocate(std::size_t size) {
  // The size is kept in front of the block so that delete can subtract it.
  void* block = std::malloc(size + 16);
  if (block == nullptr) throw std::bad_alloc();
  *static_cast<std::size_t*>(block) = size;
  const int64_t now = live_bytes.fetch_add(static_cast<int64_t>(size)) + static_cast<int64_t>(size);
  int64_t peak = peak_bytes.load();
  while (now > peak && !peak_bytes.compare_exchange_weak(peak, now)) {
  }
  return static_cast<char*>(block) + 16;
}

void Free(void* p) {
  if (p == nullptr) return;
  void* block = static_cast<char*>(p) - 16;
  live_bytes.fetch_sub(static_cast<int64_t>(*static_cast<std::size_t*>(block)));
  std::free(block);
}

// Peak live bytes above the level at the call of Start.
class PeakMeter {
 public:
  PeakMeter() : base_(live_bytes.load()) { peak_bytes.store(base_); }
  int64_t Peak() const { return peak_bytes.load() - base_; }

 private:
  int64_t base_;
};
}  // namespace

void* operator new(std::size_t size) { return Allocate(size); }
void* operator new[](std::size_t size) { return Allocate(size); }
void operator delete(void* p) noexcept { Free(p); }
void operator delete[](void* p) noexcept { Free(p); }
void operator delete(void* p, std::size_t) noexcept { Free(p); }
void operator delete[](void* p, std::size_t) noexcept { Free(p); }

namespace xjit {
namespace {

constexpr const char* kMix[] = {"exponential", "log",      "tanh", "sine",    "cosine",
                                "logistic",    "erf",      "add",  "multiply"};

bool IsBinary(absl::string_view op) { return op == "add" || op == "multiply"; }

absl::string_view OpFor(int kind, int64_t i) {
  switch (kind) {
    case 0: return "add";
    case 1: return "sine";
    case 3: return "add";
    default: return kMix[i % 9];
  }
}

// N chained elementwise instructions over f32[1024] (see the file comment).
std::string ChainModule(int kind, int64_t n) {
  const std::string s = "f32[1024]{0}";
  std::string text = absl::StrCat("HloModule chain\n\nENTRY e {\n  p0 = ", s,
                                  " parameter(0)\n  p1 = ", s, " parameter(1)\n");
  std::string prev = "p0";
  std::string prev2 = "p1";
  for (int64_t i = 0; i < n; ++i) {
    const absl::string_view op = OpFor(kind, i);
    const std::string name = absl::StrCat("v", i);
    // KIND 0: x_i = x_{i-1} + p1; KIND 3: x_i = x_{i-1} + x_{i-2}.
    const std::string second = kind == 0 ? "p1" : prev2;
    absl::StrAppend(&text, i + 1 == n ? "  ROOT " : "  ", name, " = ", s, " ", op, "(", prev,
                    IsBinary(op) ? absl::StrCat(", ", second) : "", ")\n");
    prev2 = prev;
    prev = name;
  }
  absl::StrAppend(&text, "}\n");
  return text;
}

// The same chain through the builder.
std::unique_ptr<Module> BuildChain(int kind, int64_t n) {
  Builder b("chain");
  const Shape shape = Shape::Array(ElementType::kF32, {1024});
  Op prev = Parameter(&b, 0, shape, "p0");
  Op p1 = Parameter(&b, 1, shape, "p1");
  Op prev2 = p1;
  for (int64_t i = 0; i < n; ++i) {
    const absl::string_view op = OpFor(kind, i);
    Op next;
    if (op == "add") next = Add(prev, kind == 0 ? p1 : prev2);
    else if (op == "multiply") next = Mul(prev, prev2);
    else if (op == "sine") next = Sin(prev);
    else if (op == "cosine") next = Cos(prev);
    else if (op == "exponential") next = Exp(prev);
    else if (op == "log") next = Log(prev);
    else if (op == "tanh") next = Tanh(prev);
    else if (op == "logistic") next = Logistic(prev);
    else next = Erf(prev);
    prev2 = prev;
    prev = next;
  }
  absl::StatusOr<std::unique_ptr<Module>> module = b.Build(prev);
  if (!module.ok()) std::abort();
  return *std::move(module);
}

void SetCompileCounters(benchmark::State& state, int64_t n, const jit::CompileReport& report) {
  int64_t code = 0;
  for (const jit::KernelInfo& kernel : report.kernels) code += kernel.code_size;
  state.counters["code_bytes"] = static_cast<double>(code);
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
  state.counters["us_per_inst"] = benchmark::Counter(
      static_cast<double>(n) * 1e-6, benchmark::Counter::kIsIterationInvariantRate |
                                         benchmark::Counter::kInvert);
}

// Compiles `module` once per benchmark iteration (the compile cache off);
// false, with the benchmark skipped and the error said, when it fails.
bool CompileEachIteration(benchmark::State& state, const Module& module,
                          jit::CompileOptions options, jit::CompileReport* report) {
  options.cache = false;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        jit::Compile(module, options, report);
    if (!executable.ok()) {
      state.SkipWithError(std::string(executable.status().message()).c_str());
      return false;
    }
    benchmark::DoNotOptimize(executable->get());
  }
  return true;
}

void RunCompile(benchmark::State& state, int kind, int64_t n, jit::CompileOptions options) {
  std::unique_ptr<Module> module = ParseOrDie(ChainModule(kind, n));
  jit::CompileReport report;
  if (!CompileEachIteration(state, *module, options, &report)) return;
  SetCompileCounters(state, n, report);
}

void BM_CompileChain(benchmark::State& state) {
  RunCompile(state, static_cast<int>(state.range(0)), state.range(1), jit::CompileOptions());
}

// D levels of while loops (KIND 0) or calls (KIND 1) around an s32 add.
std::string NestedModule(int kind, int64_t depth) {
  std::string text = "HloModule nested\n";
  if (kind == 0) {
    text +=
        "cond {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n"
        "  ROOT lt = pred[] compare(p, one), direction=LT\n}\n";
  }
  absl::StrAppend(&text, "c0 {\n  p = s32[] parameter(0)\n  one = s32[] constant(1)\n",
                  "  ROOT r = s32[] add(p, one)\n}\n");
  for (int64_t k = 1; k <= depth; ++k) {
    const std::string inner =
        kind == 0 ? absl::StrCat("while(p), condition=cond, body=c", k - 1)
                  : absl::StrCat("call(p), to_apply=c", k - 1);
    absl::StrAppend(&text, k == depth ? "ENTRY " : "", "c", k,
                    " {\n  p = s32[] parameter(0)\n  q = s32[] ", inner,
                    "\n  one = s32[] constant(1)\n  ROOT r = s32[] add(q, one)\n}\n");
  }
  return text;
}

// A root tuple of N scalars, x_i = p + i, each its own fusion (issue 30:
// a scan over the tuple per element, in the schedule, the flat offsets of
// the result and the naming of fused computations, made it quadratic).
std::string WideTupleModule(int64_t n) {
  std::string text = "HloModule wide\n\nENTRY e {\n  p = f32[] parameter(0)\n";
  std::vector<std::string> types, names;
  for (int64_t i = 0; i < n; ++i) {
    absl::StrAppend(&text, "  c", i, " = f32[] constant(", i, ")\n  x", i, " = f32[] add(p, c", i,
                    ")\n");
    types.push_back("f32[]");
    names.push_back(absl::StrCat("x", i));
  }
  absl::StrAppend(&text, "  ROOT t = (", absl::StrJoin(types, ", "), ") tuple(",
                  absl::StrJoin(names, ", "), ")\n}\n");
  return text;
}

void BM_CompileWideTuple(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(WideTupleModule(n));
  jit::CompileReport report;
  if (!CompileEachIteration(state, *module, jit::CompileOptions(), &report)) return;
  SetCompileCounters(state, 2 * n + 2, report);
}

void BM_CompileNested(benchmark::State& state) {
  const int64_t depth = state.range(1);
  std::unique_ptr<Module> module = ParseOrDie(NestedModule(static_cast<int>(state.range(0)), depth));
  jit::CompileReport report;
  if (!CompileEachIteration(state, *module, jit::CompileOptions(), &report)) return;
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["us_per_level"] = benchmark::Counter(
      static_cast<double>(depth) * 1e-6,
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

void BM_CompileMath(benchmark::State& state) {
  jit::CompileOptions options;
  options.math = state.range(0) == 0 ? jit::MathLowering::kInline : jit::MathLowering::kOutOfLine;
  RunCompile(state, 1, 100, options);
}

void BM_CompileCached(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(ChainModule(0, n));
  jit::CompileOptions options;
  options.cache = true;
  jit::CompileReport report;
  if (!jit::Compile(*module, options, &report).ok()) {
    state.SkipWithError("compile failed");
    return;
  }
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        jit::Compile(*module, options, &report);
    if (!executable.ok() || !report.cache_hit) {
      state.SkipWithError("no cache hit");
      return;
    }
    benchmark::DoNotOptimize(executable->get());
  }
  SetCompileCounters(state, n, report);
}

void BM_Memory(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  const int64_t n = state.range(1);
  const std::string text = ChainModule(kind, n);
  int64_t build = 0, parse = 0, compile = 0;
  for (auto _ : state) {
    {
      PeakMeter meter;
      std::unique_ptr<Module> built = BuildChain(kind, n);
      build = meter.Peak();
    }
    PeakMeter parse_meter;
    std::unique_ptr<Module> module = ParseOrDie(text);
    parse = parse_meter.Peak();
    PeakMeter compile_meter;
    jit::CompileOptions options;
    options.cache = false;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        jit::Compile(*module, options);
    compile = compile_meter.Peak();
    if (!executable.ok()) {
      state.SkipWithError(std::string(executable.status().message()).c_str());
      return;
    }
  }
  state.counters["build_B_per_inst"] = static_cast<double>(build) / n;
  state.counters["parse_B_per_inst"] = static_cast<double>(parse) / n;
  state.counters["compile_B_per_inst"] = static_cast<double>(compile) / n;
}

// Run time of one kernel of K chained math functions (tanh, exp, sine in
// turn, the first over a*x+b as in jit_benchmark's Chain) over f32[4M],
// inline (MODE 0) or calling routines (MODE 1): the measurement behind
// kOutOfLineMathMinOps (jit/kernel/vector_math.h).
void BM_MathKernelRun(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0));
  const int64_t n = int64_t{4} << 20;
  const std::string s = absl::StrCat("f32[", n, "]{0}");
  std::string text = absl::StrCat("HloModule math\n\nENTRY e {\n  a = ", s,
                                   " parameter(0)\n  x = ", s, " parameter(1)\n  c = f32[] constant(0.25)\n  cb = ", s,
                                   " broadcast(c), dimensions={}\n  ax = ", s,
                                   " multiply(a, x)\n  v0 = ", s, " add(ax, cb)\n");
  const char* functions[] = {"tanh", "exponential", "sine"};
  for (int i = 1; i <= k; ++i) {
    absl::StrAppend(&text, i == k ? "  ROOT " : "  ", "v", i, " = ", s, " ", functions[(i - 1) % 3],
                    "(v", i - 1, ")\n");
  }
  absl::StrAppend(&text, "}\n");
  std::unique_ptr<Module> module = ParseOrDie(text);
  jit::CompileOptions options;
  options.cache = false;
  options.math = state.range(1) == 0 ? jit::MathLowering::kInline : jit::MathLowering::kOutOfLine;
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok() || report.kernels.size() != 1) {
    state.SkipWithError("expected one kernel");
    return;
  }
  std::vector<float> a(n, 0.5f), x(n, 0.25f), out(n);
  const void* parameters[] = {a.data(), x.data()};
  for (auto _ : state) {
    absl::Status status = (*executable)->Execute(parameters, out.data());
    if (!status.ok()) {
      state.SkipWithError("execute failed");
      return;
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["code_bytes"] = static_cast<double>(report.kernels[0].code_size);
  state.SetItemsProcessed(state.iterations() * n);
}

// The first compile in a process against the second (the cost `xjit
// compile` pays on every run): each iteration forks a child that has not
// compiled anything yet, compiles the 100-add chain twice (cache off) and
// reports both times. Counters: first_ms, second_ms (means).
void BM_FirstCompile(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(ChainModule(0, 100));
  double first = 0, second = 0;
  for (auto _ : state) {
    int fds[2];
    if (pipe(fds) != 0) {
      state.SkipWithError("pipe failed");
      return;
    }
    const pid_t child = fork();
    if (child == 0) {
      jit::CompileOptions options;
      options.cache = false;
      double ms[2];
      for (double& m : ms) {
        const auto start = std::chrono::steady_clock::now();
        if (!jit::Compile(*module, options).ok()) _exit(1);
        m = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                .count();
      }
      if (write(fds[1], ms, sizeof(ms)) != static_cast<ssize_t>(sizeof(ms))) _exit(1);
      _exit(0);
    }
    double ms[2] = {0, 0};
    const bool ok = read(fds[0], ms, sizeof(ms)) == static_cast<ssize_t>(sizeof(ms));
    close(fds[0]);
    close(fds[1]);
    int status = 0;
    waitpid(child, &status, 0);
    if (!ok || status != 0) {
      state.SkipWithError("child failed");
      return;
    }
    first += ms[0];
    second += ms[1];
  }
  state.counters["first_ms"] = first / static_cast<double>(state.iterations());
  state.counters["second_ms"] = second / static_cast<double>(state.iterations());
}

// models/programs (models/programs/generate.py), smallest first.
constexpr const char* kPrograms[] = {"optax_adam",    "scan_rnn",      "equinox_mlp",
                                     "odeint",        "bfgs_minimize", "blackjax_nuts",
                                     "diffrax_tsit5"};

void BM_CompileProgram(benchmark::State& state) {
  const char* name = kPrograms[state.range(0)];
  const char* root = std::getenv("XJIT_PROGRAMS");
  const std::string path =
      absl::StrCat(root != nullptr ? root : "models/programs", "/", name, "/module.hlo");
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    state.SkipWithError(absl::StrCat(name, ": no ", path,
                                     " (run from the source root or set XJIT_PROGRAMS)")
                            .c_str());
    return;
  }
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(
      std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()), path);
  if (!module.ok()) {
    state.SkipWithError(std::string(module.status().message()).c_str());
    return;
  }
  int64_t instructions = 0;
  for (const auto& computation : (*module)->computations()) {
    instructions += computation->instruction_count();
  }
  jit::CompileReport report;
  if (!CompileEachIteration(state, **module, jit::CompileOptions(), &report)) return;
  state.SetLabel(name);
  SetCompileCounters(state, instructions, report);
  state.counters["instructions"] = static_cast<double>(instructions);
}

void ChainArgs(benchmark::internal::Benchmark* b) {
  for (int kind : {0, 1, 2}) {
    for (int64_t n : {10, 100, 1000, 10000, 100000}) b->Args({kind, n});
  }
  for (int64_t n : {100, 1000, 10000}) b->Args({3, n});
}

BENCHMARK(BM_FirstCompile)->Iterations(20)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileChain)->Apply(ChainArgs)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileWideTuple)->Arg(1000)->Arg(5000)->Arg(20000)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileNested)
    ->ArgsProduct({{0, 1}, {16, 64, 255}})
    ->MeasureProcessCPUTime()  // Deep modules compile on a thread of their own.
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileProgram)
    ->DenseRange(0, std::size(kPrograms) - 1)
    ->MeasureProcessCPUTime()  // Loop bodies may compile on threads of their own.
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileMath)->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_MathKernelRun)
    ->ArgsProduct({{1, 2, 3, 4, 8}, {0, 1}})
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_CompileCached)->Arg(100)->Arg(10000)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Memory)
    ->Args({0, 1000})
    ->Args({0, 10000})
    ->Args({0, 100000})
    ->Args({2, 10000})
    ->Iterations(1)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
