// The JIT's figures (issue 4), each next to a baseline measured in the same
// run, so that the README can state ratios rather than absolute times:
//
//   Chain/{tanh,notanh}/N   tanh(a*x+b)*c (or a*x+b then *c) as ONE loop
//                           fusion, a and x f32[N] arrays, b and c scalar
//                           constants: two streams read, one written.
//   StreamTriad/N           a[i] = b[i] + s*c[i], written by hand (O3): the
//                           same bytes moved, the memory-bandwidth baseline.
//   .../threads:2           the chain compiled with CompileOptions::threads =
//                           2, and the triad split in two halves on the same
//                           shared ThreadPool the executable uses.
//   ChainEvaluator/.../N    the same module run by the reference evaluator.
//   ChainScalar/.../N       the same chain as a scalar C++ loop calling libm's
//                           tanhf per element.
//   Compile100/fused:F/passes:P  jit::Compile of a 100-instruction elementwise
//                           module (parsed once, outside the timed loop): as
//                           100 entry instructions (F=0) or one loop fusion
//                           (F=1), with the pass pipeline on (P=1) or off.
//   OneAdd/{execute,run}    one call of a one-add executable: raw buffers
//                           (Execute) and host literals (Run).
//   ScalarWhile/trips/bound a while loop over an f32 counter (c < trips:
//                           c + 1), issue 26's yardstick: counter
//                           per_iteration in seconds (XLA:CPU ~0.6 ns;
//                           OneAdd/execute, the cost of one whole run, is the
//                           baseline), run over bound steps (bound:1,
//                           runtime/bound_steps.h) or step by step (bound:0,
//                           CompileOptions::bind_loops off); bound and
//                           native:1, as emitted code (runtime/native_loop.h)
//                           calling its kernels; native:2, with one-element
//                           kernels inline, the state in registers
//                           (jit/x64/x64_loop_kernels.h).
//   NativeLoopEmit/native   a 1-trip ScalarWhile bound afresh per run, its
//                           loop emitted as native code per run or not: the
//                           emitter's cost, what native_loop_after weighs.
//   ArrayWhile/n/bound      1,000 iterations of x = x * 0.5 + 1 over an
//                           f32[n] state: counter per_iteration, bound and
//                           stepped as ScalarWhile (how the saving shrinks
//                           as the body's work grows).
//   IntKernel/kind/isa      integer kernels of 16M elements, one thread:
//                           kind 0 s32 add, 1 s8 add, 2 s32 max(x, y) & z
//                           via compare+select, 3 u16 shift by a scalar
//                           (isa 0 sse4, 1 avx2).
//   IntAddLoop/width        the s32 (s8) add as a hand-written O3 loop: the
//                           baseline for IntKernel (same bytes moved).
//   ThreefryRounds/isa      four threefry2x32 rounds and a key injection as
//                           JAX writes them (rotates as two shifts and an or,
//                           amounts read from a u32[4] table, every value
//                           with two or three users) over u32[8192,64], one
//                           thread (isa 0 sse4, 1 avx2, 2 avx512); the two
//                           words xored into one result.
//   ThreefryLoop            the same rounds as a hand-written O3 loop: the
//                           baseline.
//
// Counters: `kernels` and `interpreted` say what the JIT made of the module
// (a chain whose fusion has an interpreted step is not measuring emitted
// code). Built by meson, never run as a test:
//   build/benchmarks/jit_benchmark --benchmark_min_time=0.1
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "benchmarks/parse_or_die.h"
#include "ir/module.h"
#include "jit/compile.h"
#include "runtime/executable.h"
#include "runtime/thread_pool.h"

namespace xjit {
namespace {

constexpr int64_t kLarge = int64_t{16} << 20;  // 16M elements, 64 MiB per f32 array.
constexpr int64_t kSmall = int64_t{1} << 20;   // 1M elements: the evaluator's size.
constexpr float kB = 0.25f;
constexpr float kC = 1.5f;

// One loop fusion computing tanh(a*x+b)*c, or (a*x+b)*c without tanh.
std::string ChainModule(int64_t n, bool with_tanh) {
  const std::string s = absl::StrCat("f32[", n, "]{0}");
  std::string body = absl::StrFormat(
      R"(  a = %1$s parameter(0)
  x = %1$s parameter(1)
  b = f32[] constant(%2$g)
  c = f32[] constant(%3$g)
  ax = %1$s multiply(a, x)
  bb = %1$s broadcast(b), dimensions={}
  s = %1$s add(ax, bb)
  cc = %1$s broadcast(c), dimensions={}
)",
      s, kB, kC);
  if (with_tanh) {
    absl::StrAppend(&body, "  t = ", s, " tanh(s)\n  ROOT r = ", s, " multiply(t, cc)\n");
  } else {
    absl::StrAppend(&body, "  ROOT r = ", s, " multiply(s, cc)\n");
  }
  return absl::StrCat("HloModule chain_", with_tanh ? "tanh" : "notanh", "\n\nfused {\n", body,
                      "}\n\nENTRY e {\n  a = ", s, " parameter(0)\n  x = ", s,
                      " parameter(1)\n  ROOT f = ", s,
                      " fusion(a, x), kind=kLoop, calls=fused\n}\n");
}

std::vector<float> RandomFloats(int64_t n, uint32_t seed) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(n));
  for (float& f : v) f = dist(gen);
  return v;
}

__attribute__((noinline)) void ScalarChain(const float* a, const float* x, float* out, int64_t n,
                                           bool with_tanh) {
  if (with_tanh) {
    for (int64_t i = 0; i < n; ++i) out[i] = std::tanh(a[i] * x[i] + kB) * kC;
  } else {
    for (int64_t i = 0; i < n; ++i) out[i] = (a[i] * x[i] + kB) * kC;
  }
}

__attribute__((noinline)) void Triad(float* a, const float* b, const float* c, float s,
                                     int64_t n) {
  for (int64_t i = 0; i < n; ++i) a[i] = b[i] + s * c[i];
}

void SetChainCounters(benchmark::State& state, int64_t n, const jit::CompileReport* report) {
  const int64_t bytes = 3 * n * static_cast<int64_t>(sizeof(float));
  state.SetBytesProcessed(state.iterations() * bytes);
  state.SetItemsProcessed(state.iterations() * n);
  if (report != nullptr) {
    state.counters["kernels"] = static_cast<double>(report->kernels.size());
    state.counters["interpreted"] = static_cast<double>(report->interpreted_steps.size());
    state.counters["lanes"] =
        report->kernels.empty() ? 0.0 : static_cast<double>(report->kernels[0].vector_lanes);
  }
}

// range(0): elements; range(1): 1 with tanh; range(2): threads.
void BM_Chain(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool with_tanh = state.range(1) != 0;
  std::unique_ptr<Module> module = ParseOrDie(ChainModule(n, with_tanh));
  jit::CompileReport report;
  jit::CompileOptions options;
  options.threads = static_cast<int>(state.range(2));
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  std::vector<float> a = RandomFloats(n, 1), x = RandomFloats(n, 2), out(n), want(n);
  const void* parameters[] = {a.data(), x.data()};
  // Checked once against the scalar loop, so a wrong kernel cannot post a
  // figure (tanh within a few ulp; the rest within rounding of FMA).
  absl::Status status = (*executable)->Execute(parameters, out.data());
  ScalarChain(a.data(), x.data(), want.data(), n, with_tanh);
  for (int64_t i = 0; status.ok() && i < n; ++i) {
    if (!(std::fabs(out[i] - want[i]) <= 1e-6f + 1e-5f * std::fabs(want[i]))) {
      state.SkipWithError(
          absl::StrFormat("wrong result at %d: %g, expected %g", i, out[i], want[i]).c_str());
      return;
    }
  }
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute(parameters, out.data());
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  SetChainCounters(state, n, &report);
}

// range(0): elements; range(1): threads (chunks of the shared pool).
void BM_StreamTriad(benchmark::State& state) {
  const int64_t n = state.range(0);
  const int threads = static_cast<int>(state.range(1));
  std::vector<float> a(n), b = RandomFloats(n, 1), c = RandomFloats(n, 2);
  for (auto _ : state) {
    if (threads <= 1) {
      Triad(a.data(), b.data(), c.data(), kC, n);
    } else {
      runtime::ThreadPool::Shared().ParallelFor(threads, threads - 1, [&](int64_t k) {
        const int64_t begin = n * k / threads, end = n * (k + 1) / threads;
        Triad(a.data() + begin, b.data() + begin, c.data() + begin, kC, end - begin);
      });
    }
    benchmark::ClobberMemory();
  }
  SetChainCounters(state, n, nullptr);
}

void BM_ChainScalar(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool with_tanh = state.range(1) != 0;
  std::vector<float> a = RandomFloats(n, 1), x = RandomFloats(n, 2), out(n);
  for (auto _ : state) {
    ScalarChain(a.data(), x.data(), out.data(), n, with_tanh);
    benchmark::ClobberMemory();
  }
  SetChainCounters(state, n, nullptr);
}

void BM_ChainEvaluator(benchmark::State& state) {
  const int64_t n = state.range(0);
  const bool with_tanh = state.range(1) != 0;
  std::unique_ptr<Module> module = ParseOrDie(ChainModule(n, with_tanh));
  std::vector<float> a = RandomFloats(n, 1), x = RandomFloats(n, 2);
  const Shape shape = module->entry()->parameter(0)->shape();
  std::vector<Literal> arguments;
  for (const std::vector<float>* v : {&a, &x}) {
    Literal literal(shape);
    std::memcpy(literal.data().data(), v->data(), v->size() * sizeof(float));
    arguments.push_back(std::move(literal));
  }
  Evaluator evaluator;
  for (auto _ : state) {
    absl::StatusOr<Literal> result = evaluator.EvaluateModule(*module, arguments);
    if (!result.ok()) {
      state.SkipWithError(std::string(result.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(result->data().data());
  }
  SetChainCounters(state, n, nullptr);
}

// 100 elementwise instructions over f32[1024] (plus two parameters): a chain
// of add/multiply/subtract/maximum/minimum/negate/abs, each using the two
// latest values, so nothing is dead. range(0): 1 for one loop fusion of all
// 100, 0 for 100 entry instructions (each its own kernel today).
std::string HundredOpModule(bool fused) {
  const char* binary[] = {"add", "multiply", "subtract", "maximum", "minimum"};
  const char* unary[] = {"negate", "abs"};
  const std::string s = "f32[1024]{0}";
  std::string body = absl::StrCat("  v0 = ", s, " parameter(0)\n  v1 = ", s, " parameter(1)\n");
  for (int i = 2; i < 102; ++i) {
    const bool last = i == 101;
    std::string op = i % 7 == 3 ? absl::StrCat(unary[i % 2], "(v", i - 1, ")")
                                : absl::StrCat(binary[i % 5], "(v", i - 1, ", v", i - 2, ")");
    absl::StrAppend(&body, last ? "  ROOT " : "  ", "v", i, " = ", s, " ", op, "\n");
  }
  if (!fused) return absl::StrCat("HloModule hundred\n\nENTRY e {\n", body, "}\n");
  return absl::StrCat("HloModule hundred_fused\n\nfused {\n", body, "}\n\nENTRY e {\n  p0 = ", s,
                      " parameter(0)\n  p1 = ", s, " parameter(1)\n  ROOT f = ", s,
                      " fusion(p0, p1), kind=kLoop, calls=fused\n}\n");
}

void BM_Compile100(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(HundredOpModule(state.range(0) != 0));
  jit::CompileOptions options;
  options.run_passes = state.range(1) != 0;
  jit::CompileReport report;
  for (auto _ : state) {
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        jit::Compile(*module, options, &report);
    if (!executable.ok()) {
      state.SkipWithError(std::string(executable.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(executable->get());
  }
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

constexpr char kOneAdd[] = R"(HloModule one_add

ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

// range(0): 0 for Execute (raw buffers), 1 for Run (literals).
void BM_OneAdd(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(kOneAdd);
  jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, jit::CompileOptions(), &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  float a = 1.5f, b = 2.25f, out = 0;
  const void* parameters[] = {&a, &b};
  if (state.range(0) == 0) {
    for (auto _ : state) {
      absl::Status s = (*executable)->Execute(parameters, &out);
      benchmark::DoNotOptimize(s);
      benchmark::ClobberMemory();
    }
    if (out != 3.75f) state.SkipWithError("one add gave a wrong sum");
  } else {
    std::vector<Literal> arguments;
    arguments.push_back(Literal::Scalar(ElementType::kF32, a));
    arguments.push_back(Literal::Scalar(ElementType::kF32, b));
    for (auto _ : state) {
      absl::StatusOr<Literal> result = (*executable)->Run(arguments);
      benchmark::DoNotOptimize(result);
    }
  }
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

std::string ScalarWhileModule(int64_t trips) {
  return absl::StrFormat(R"(HloModule scalar_while
cond {
  s = (f32[]) parameter(0)
  c = f32[] get-tuple-element(s), index=0
  n = f32[] constant(%d)
  ROOT lt = pred[] compare(c, n), direction=LT
}
body {
  s = (f32[]) parameter(0)
  c = f32[] get-tuple-element(s), index=0
  one = f32[] constant(1)
  a = f32[] add(c, one)
  ROOT t = (f32[]) tuple(a)
}
ENTRY e {
  z = f32[] constant(0)
  init = (f32[]) tuple(z)
  w = (f32[]) while(init), condition=cond, body=body
  ROOT r = f32[] get-tuple-element(w), index=0
}
)",
                         trips);
}

// range(0): the loop's trip count; range(1): CompileOptions::bind_loops;
// range(2): CompileOptions::native_loops (1: kernels called, 2: one-element
// kernels inline, inline_loop_kernels).
void BM_ScalarWhile(benchmark::State& state) {
  const int64_t trips = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(ScalarWhileModule(trips));
  jit::CompileReport report;
  jit::CompileOptions options;
  options.bind_loops = state.range(1) != 0;
  options.native_loops = state.range(2) != 0;
  options.inline_loop_kernels = state.range(2) == 2;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  float out = 0;
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute({}, &out);
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  if (out != static_cast<float>(trips)) state.SkipWithError("the loop ran a wrong count");
  // Seconds per loop iteration (printed with an SI prefix: 45n is 45 ns).
  state.counters["per_iteration"] = benchmark::Counter(
      static_cast<double>(trips),
      benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

// The cost of emitting a loop (runtime/native_loop.h): a 1-trip ScalarWhile
// run into two result buffers in turn, so that every run binds the loop
// afresh (its state lives in the result: runtime/kept_loop.h), with native
// code emitted at the first iteration (native:1, native_loop_after 0) or
// not (native:0). The difference is the emitter's time per loop.
void BM_NativeLoopEmit(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(ScalarWhileModule(1));
  jit::CompileOptions options;
  options.native_loops = state.range(0) != 0;
  options.native_loop_after = 0;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  float out[2] = {0, 0};
  int which = 0;
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute({}, &out[which]);
    which = 1 - which;
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  if (out[0] != 1 || (state.iterations() > 1 && out[1] != 1)) {
    state.SkipWithError("the loop ran a wrong count");
  }
}

// 1,000 iterations of x = x * 0.5 + 1 over an f32[n] state beside an s32
// counter: a loop body with an array update (one fused kernel).
std::string ArrayWhileModule(int64_t n) {
  return absl::StrFormat(R"(HloModule array_while
cond {
  s = (s32[], f32[%1$d]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(1000)), direction=LT
}
body {
  s = (s32[], f32[%1$d]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[%1$d] get-tuple-element(s), index=1
  h = f32[%1$d] broadcast(f32[] constant(0.5)), dimensions={}
  o = f32[%1$d] broadcast(f32[] constant(1)), dimensions={}
  x1 = f32[%1$d] add(multiply(x, h), o)
  i1 = s32[] add(i, s32[] constant(1))
  ROOT t = (s32[], f32[%1$d]) tuple(i1, x1)
}
ENTRY e {
  x = f32[%1$d] parameter(0)
  init = (s32[], f32[%1$d]) tuple(s32[] constant(0), x)
  w = (s32[], f32[%1$d]) while(init), condition=cond, body=body
  ROOT r = f32[%1$d] get-tuple-element(w), index=1
}
)",
                         n);
}

// range(0): the state array's elements; range(1): CompileOptions::bind_loops;
// range(2): CompileOptions::native_loops (2: and inline_loop_kernels).
void BM_ArrayWhile(benchmark::State& state) {
  const int64_t n = state.range(0);
  std::unique_ptr<Module> module = ParseOrDie(ArrayWhileModule(n));
  jit::CompileOptions options;
  options.bind_loops = state.range(1) != 0;
  options.native_loops = state.range(2) != 0;
  options.inline_loop_kernels = state.range(2) == 2;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  std::vector<float> x(static_cast<size_t>(n), 1.0f);
  std::vector<float> out(static_cast<size_t>(n));
  const void* parameter = x.data();
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute({&parameter, 1}, out.data());
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  // From 1, x * 0.5 + 1 reaches its fixed point 2 (exactly, in f32) within 25 iterations.
  if (n > 0 && out[0] != 2.0f) state.SkipWithError("wrong result");
  state.counters["per_iteration"] = benchmark::Counter(
      1000.0, benchmark::Counter::kIsIterationInvariantRate | benchmark::Counter::kInvert);
}

std::string IntKernelModule(int kind, int64_t n) {
  const char* type = kind == 1 ? "s8" : kind == 3 ? "u16" : "s32";
  const std::string s = absl::StrCat(type, "[", n, "]{0}");
  std::string text = absl::StrCat("HloModule int_kernel\nENTRY e {\n  a = ", s,
                                  " parameter(0)\n  b = ", s, " parameter(1)\n");
  switch (kind) {
    case 2:
      absl::StrAppend(&text, "  c = pred[", n, "]{0} compare(a, b), direction=GT\n  m = ", s,
                      " select(c, a, b)\n  ROOT r = ", s, " and(m, b)\n");
      break;
    case 3:
      absl::StrAppend(&text, "  k = u16[] constant(3)\n  kb = ", s,
                      " broadcast(k), dimensions={}\n  t = ", s,
                      " shift-right-logical(a, kb)\n  ROOT r = ", s, " add(t, b)\n");
      break;
    default:
      absl::StrAppend(&text, "  ROOT r = ", s, " add(a, b)\n");
      break;
  }
  return text + "}\n";
}

// range(0): kind (see the top comment); range(1): 0 sse4, 1 avx2.
void BM_IntKernel(benchmark::State& state) {
  const int kind = static_cast<int>(state.range(0));
  const int64_t n = kLarge;
  const int64_t bytes = kind == 1 ? 1 : kind == 3 ? 2 : 4;
  std::unique_ptr<Module> module = ParseOrDie(IntKernelModule(kind, n));
  jit::CompileReport report;
  jit::CompileOptions options;
  options.isa = state.range(1) == 0 ? jit::Isa::kSse4 : jit::Isa::kAvx2;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  std::vector<uint8_t> a(n * bytes), b(n * bytes), out(n * bytes);
  std::mt19937 rng(7);
  for (auto& v : a) v = static_cast<uint8_t>(rng());
  for (auto& v : b) v = static_cast<uint8_t>(rng());
  const void* parameters[] = {a.data(), b.data()};
  absl::Status status = (*executable)->Execute(parameters, out.data());
  if (kind == 0) {  // checked against the obvious loop
    for (int64_t i = 0; status.ok() && i < n; ++i) {
      int32_t x, y, r;
      std::memcpy(&x, &a[4 * i], 4);
      std::memcpy(&y, &b[4 * i], 4);
      std::memcpy(&r, &out[4 * i], 4);
      if (r != static_cast<int32_t>(static_cast<uint32_t>(x) + static_cast<uint32_t>(y))) {
        state.SkipWithError("wrong result");
        return;
      }
    }
  }
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute(parameters, out.data());
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * bytes);
  state.counters["lanes"] =
      report.kernels.empty() ? 0.0 : static_cast<double>(report.kernels[0].vector_lanes);
  state.counters["interpreted"] = static_cast<double>(report.interpreted_steps.size());
}

template <typename T>
__attribute__((noinline)) void AddLoop(T* out, const T* a, const T* b, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<T>(a[i] + b[i]);
}

// range(0): element bits (32 or 8).
void BM_IntAddLoop(benchmark::State& state) {
  const int64_t n = kLarge;
  const bool narrow = state.range(0) == 8;
  const int64_t bytes = narrow ? 1 : 4;
  std::vector<uint8_t> a(n * bytes, 1), b(n * bytes, 2), out(n * bytes);
  for (auto _ : state) {
    if (narrow) {
      AddLoop(reinterpret_cast<int8_t*>(out.data()), reinterpret_cast<int8_t*>(a.data()),
              reinterpret_cast<int8_t*>(b.data()), n);
    } else {
      AddLoop(reinterpret_cast<int32_t*>(out.data()), reinterpret_cast<int32_t*>(a.data()),
              reinterpret_cast<int32_t*>(b.data()), n);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * 3 * n * bytes);
}

constexpr int64_t kThreefryRows = 8192;
constexpr int64_t kThreefryColumns = 64;
constexpr uint32_t kThreefryRotations[4] = {13, 15, 26, 6};

std::string ThreefryModule() {
  const std::string s = absl::StrCat("u32[", kThreefryRows, ",", kThreefryColumns, "]{1,0}");
  std::string text = absl::StrCat("HloModule threefry_rounds\nENTRY e {\n  x0 = ", s,
                                  " parameter(0)\n  x1 = ", s,
                                  " parameter(1)\n  rot = u32[4]{0} parameter(2)\n"
                                  "  ks = u32[2]{0} parameter(3)\n  k = u32[] constant(32)\n");
  std::string a = "x0", y = "x1";
  for (int i = 0; i < 4; ++i) {
    absl::StrAppendFormat(&text,
                          "  s%d = u32[1]{0} slice(rot), slice={[%d:%d]}\n"
                          "  r%d = u32[] reshape(s%d)\n  m%d = u32[] subtract(k, r%d)\n"
                          "  rb%d = %s broadcast(r%d), dimensions={}\n"
                          "  mb%d = %s broadcast(m%d), dimensions={}\n"
                          "  a%d = %s add(%s, %s)\n  l%d = %s shift-left(%s, rb%d)\n"
                          "  h%d = %s shift-right-logical(%s, mb%d)\n  o%d = %s or(l%d, h%d)\n"
                          "  y%d = %s xor(a%d, o%d)\n",
                          i, i, i + 1, i, i, i, i, i, s, i, i, s, i, i, s, a, y, i, s, y, i, i,
                          s, y, i, i, s, i, i, i, s, i, i);
    a = absl::StrCat("a", i);
    y = absl::StrCat("y", i);
  }
  absl::StrAppend(&text, "  k0 = u32[1]{0} slice(ks), slice={[0:1]}\n  k0s = u32[] reshape(k0)\n",
                  "  k1 = u32[1]{0} slice(ks), slice={[1:2]}\n  k1s = u32[] reshape(k1)\n",
                  "  kb0 = ", s, " broadcast(k0s), dimensions={}\n  kb1 = ", s,
                  " broadcast(k1s), dimensions={}\n  z0 = ", s, " add(", a, ", kb0)\n  z1 = ", s,
                  " add(", y, ", kb1)\n  ROOT r = ", s, " xor(z0, z1)\n}\n");
  return text;
}

__attribute__((noinline)) void ThreefryLoop(uint32_t* out, const uint32_t* x0, const uint32_t* x1,
                                            const uint32_t* rot, const uint32_t* ks, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    uint32_t a = x0[i], y = x1[i];
    for (int r = 0; r < 4; ++r) {
      a += y;
      y = ((y << rot[r]) | (y >> (32 - rot[r]))) ^ a;
    }
    out[i] = (a + ks[0]) ^ (y + ks[1]);
  }
}

struct ThreefryData {
  std::vector<uint32_t> x0, x1, out;
  uint32_t rot[4];
  uint32_t ks[2] = {0x1BD11BDA, 42};
  ThreefryData() : x0(kThreefryRows * kThreefryColumns), x1(x0.size()), out(x0.size()) {
    std::mt19937 rng(11);
    for (size_t i = 0; i < x0.size(); ++i) {
      x0[i] = rng();
      x1[i] = rng();
    }
    std::memcpy(rot, kThreefryRotations, sizeof(rot));
  }
};

// range(0): 0 sse4, 1 avx2, 2 avx512.
void BM_ThreefryRounds(benchmark::State& state) {
  std::unique_ptr<Module> module = ParseOrDie(ThreefryModule());
  jit::CompileReport report;
  jit::CompileOptions options;
  options.isa = state.range(0) == 0   ? jit::Isa::kSse4
                : state.range(0) == 1 ? jit::Isa::kAvx2
                                      : jit::Isa::kAvx512;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(*module, options, &report);
  if (!executable.ok()) {
    state.SkipWithError(std::string(executable.status().message()).c_str());
    return;
  }
  ThreefryData d;
  const void* parameters[] = {d.x0.data(), d.x1.data(), d.rot, d.ks};
  absl::Status status = (*executable)->Execute(parameters, d.out.data());
  std::vector<uint32_t> expected(d.out.size());
  ThreefryLoop(expected.data(), d.x0.data(), d.x1.data(), d.rot, d.ks,
               static_cast<int64_t>(expected.size()));
  if (status.ok() && expected != d.out) status = absl::InternalError("wrong result");
  if (!status.ok()) {
    state.SkipWithError(std::string(status.message()).c_str());
    return;
  }
  for (auto _ : state) {
    absl::Status s = (*executable)->Execute(parameters, d.out.data());
    benchmark::DoNotOptimize(s);
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d.out.size()));
  state.counters["kernels"] = static_cast<double>(report.kernels.size());
  state.counters["lanes"] =
      report.kernels.empty() ? 0.0 : static_cast<double>(report.kernels[0].vector_lanes);
}

void BM_ThreefryLoop(benchmark::State& state) {
  ThreefryData d;
  for (auto _ : state) {
    ThreefryLoop(d.out.data(), d.x0.data(), d.x1.data(), d.rot, d.ks,
                 static_cast<int64_t>(d.out.size()));
    benchmark::ClobberMemory();
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(d.out.size()));
}

BENCHMARK(BM_ThreefryRounds)->ArgName("isa")->Arg(0)->Arg(1)->Arg(2)
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_ThreefryLoop)->Unit(benchmark::kMicrosecond)->UseRealTime();

BENCHMARK(BM_IntKernel)
    ->ArgNames({"kind", "isa"})
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_IntAddLoop)->ArgName("bits")->Arg(32)->Arg(8)->Unit(benchmark::kMillisecond)
    ->UseRealTime();

BENCHMARK(BM_StreamTriad)
    ->ArgNames({"n", "threads"})
    ->Args({kLarge, 1})
    ->Args({kSmall, 1})
    ->Args({kLarge, 2})
    ->Args({kSmall, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Chain)
    ->ArgNames({"n", "tanh", "threads"})
    ->Args({kLarge, 1, 1})
    ->Args({kLarge, 0, 1})
    ->Args({kSmall, 1, 1})
    ->Args({kSmall, 0, 1})
    ->Args({kLarge, 1, 2})
    ->Args({kLarge, 0, 2})
    ->Args({kSmall, 1, 2})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ChainScalar)
    ->ArgNames({"n", "tanh"})
    ->Args({kLarge, 1})
    ->Args({kSmall, 1})
    ->Args({kSmall, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_ChainEvaluator)
    ->ArgNames({"n", "tanh"})
    ->Args({kSmall, 1})
    ->Args({kSmall, 0})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_Compile100)
    ->ArgNames({"fused", "passes"})
    ->Args({0, 1})
    ->Args({0, 0})
    ->Args({1, 1})
    ->Unit(benchmark::kMillisecond)
    ->UseRealTime();
BENCHMARK(BM_OneAdd)->ArgName("literals")->Arg(0)->Arg(1)->Unit(benchmark::kNanosecond)
    ->UseRealTime();
// Stepped, over bound steps, and native (runtime/native_loop.h).
void LoopArgs(benchmark::internal::Benchmark* b, std::initializer_list<int64_t> sizes) {
  for (int64_t size : sizes) {
    b->Args({size, 0, 0});
    b->Args({size, 1, 0});
    b->Args({size, 1, 1});
    b->Args({size, 1, 2});
  }
}
BENCHMARK(BM_ScalarWhile)
    ->ArgNames({"trips", "bound", "native"})
    ->Apply([](benchmark::internal::Benchmark* b) { LoopArgs(b, {1000, 100000}); })
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NativeLoopEmit)->ArgName("native")->Arg(0)->Arg(1)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_ArrayWhile)
    ->ArgNames({"n", "bound", "native"})
    ->Apply([](benchmark::internal::Benchmark* b) { LoopArgs(b, {64, 4096}); })
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace xjit

BENCHMARK_MAIN();
