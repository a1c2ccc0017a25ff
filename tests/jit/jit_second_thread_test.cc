// What a second thread changes in a run, against the evaluator and bit for
// bit against one thread (docs/zoo.md "Session 15: the second thread"):
//   - conditionals whose branches run on the operand's leaves where they
//     lie, with a result buffer kept from run to run (runtime RunConditional
//     and BoundSteps' bound conditionals): tuple operands and results,
//     size-0 leaves, nested conditionals, conditionals in while bodies,
//     s32 selectors out of range, a branch whose result is its operand;
//   - loops whose body has a kernel large enough to be split between
//     threads: bound (bound_steps.h) with the split kernel as a routine;
//   - the split cost model (runtime/split_cost.h): a cheap kernel or row
//     group stays on the calling thread, a costly one runs in chunks;
//   - the OpenBLAS thread count of library calls: 1 below
//     kBlasThreadedMinWork multiply-adds, and for every gemv;
//   - scatters split by target rows (KernelProgram::claims_range): fused
//     and alone, with and without windows, an f64 multiply, a variadic
//     one, duplicate and out-of-range indices; a window spanning rows and
//     one-element windows stay whole.
#include <atomic>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "jit/compile.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/blas/dot.h"
#include "runtime/executable_internal.h"
#include "runtime/run_context.h"
#include "runtime/split_cost.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// Tuple operands of different shapes per branch (a size-0 leaf, a scalar,
// an odd-sized vector), a tuple result; branch 2 returns its operand's
// leaves as they are; an s32 selector (random values: negative and large
// ones pick the last branch).
constexpr char kTupleBranches[] = R"(
HloModule tuple_branches

sum {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

b0 {
  p = (f32[0], f32[], f32[37]) parameter(0)
  z = f32[0] get-tuple-element(p), index=0
  s = f32[] get-tuple-element(p), index=1
  v = f32[37] get-tuple-element(p), index=2
  sb = f32[37] broadcast(s), dimensions={}
  a = f32[37] add(v, sb)
  ROOT r = (f32[37], f32[0], f32[]) tuple(a, z, s)
}

b1 {
  p = (f32[37], f32[37]) parameter(0)
  a = f32[37] get-tuple-element(p), index=0
  b = f32[37] get-tuple-element(p), index=1
  m = f32[37] multiply(a, b)
  z = f32[0] constant({})
  zero = f32[] constant(0)
  t = f32[] reduce(m, zero), dimensions={0}, to_apply=sum
  ROOT r = (f32[37], f32[0], f32[]) tuple(m, z, t)
}

b2 {
  ROOT p = (f32[37], f32[0], f32[]) parameter(0)
}

ENTRY e {
  k = s32[] parameter(0)
  s = f32[] parameter(1)
  v = f32[37] parameter(2)
  w = f32[37] parameter(3)
  z = f32[0] parameter(4)
  o0 = (f32[0], f32[], f32[37]) tuple(z, s, v)
  o1 = (f32[37], f32[37]) tuple(v, w)
  o2 = (f32[37], f32[0], f32[]) tuple(w, z, s)
  c = (f32[37], f32[0], f32[]) conditional(k, o0, o1, o2), branch_computations={b0, b1, b2}
  r0 = f32[37] get-tuple-element(c), index=0
  r1 = f32[0] get-tuple-element(c), index=1
  r2 = f32[] get-tuple-element(c), index=2
  r3 = f32[37] add(r0, v)
  ROOT r = (f32[37], f32[0], f32[], f32[37]) tuple(r0, r1, r2, r3)
}
)";

// A conditional in a conditional's branch, both on pred selectors.
constexpr char kNestedConditionals[] = R"(
HloModule nested_conditionals

inner_t {
  p = (f32[5,7], f32[]) parameter(0)
  x = f32[5,7] get-tuple-element(p), index=0
  ROOT n = f32[5,7] negate(x)
}

inner_f {
  p = (f32[5,7], f32[]) parameter(0)
  x = f32[5,7] get-tuple-element(p), index=0
  s = f32[] get-tuple-element(p), index=1
  sb = f32[5,7] broadcast(s), dimensions={}
  ROOT m = f32[5,7] multiply(x, sb)
}

outer_t {
  p = (pred[], f32[5,7], f32[]) parameter(0)
  c = pred[] get-tuple-element(p), index=0
  x = f32[5,7] get-tuple-element(p), index=1
  s = f32[] get-tuple-element(p), index=2
  o = (f32[5,7], f32[]) tuple(x, s)
  ROOT r = f32[5,7] conditional(c, o, o), true_computation=inner_t, false_computation=inner_f
}

outer_f {
  p = f32[5,7] parameter(0)
  ROOT e = f32[5,7] exponential(p)
}

ENTRY e {
  a = pred[] parameter(0)
  b = pred[] parameter(1)
  x = f32[5,7] parameter(2)
  s = f32[] parameter(3)
  o = (pred[], f32[5,7], f32[]) tuple(b, x, s)
  ROOT r = f32[5,7] conditional(a, o, x), true_computation=outer_t, false_computation=outer_f
}
)";

// A loop whose body selects one of two updates per iteration (the
// conditional's operand is made from the loop state; its result becomes
// the next state) and has a kernel of 20,000 f32 (80 KB: with
// CompileOptions::split_min_chunk_ns 0, as these tests compile it, split at
// 2 threads; the cost model alone would keep it whole),
// and the loop must still bind and give the 1-thread bytes.
constexpr char kLoopWithBranchAndLargeKernel[] = R"(
HloModule loop_branch_large

up {
  p = (f32[20000], f32[7]) parameter(0)
  x = f32[20000] get-tuple-element(p), index=0
  y = f32[7] get-tuple-element(p), index=1
  one = f32[7] broadcast(f32[] constant(1)), dimensions={}
  y1 = f32[7] add(y, one)
  ROOT r = (f32[20000], f32[7]) tuple(x, y1)
}

down {
  p = (f32[20000], f32[7]) parameter(0)
  x = f32[20000] get-tuple-element(p), index=0
  y = f32[7] get-tuple-element(p), index=1
  h = f32[20000] broadcast(f32[] constant(0.5)), dimensions={}
  x1 = f32[20000] multiply(x, h)
  y1 = f32[7] negate(y)
  ROOT r = (f32[20000], f32[7]) tuple(x1, y1)
}

cond {
  s = (s32[], f32[20000], f32[7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(6)), direction=LT
}

body {
  s = (s32[], f32[20000], f32[7]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[20000] get-tuple-element(s), index=1
  y = f32[7] get-tuple-element(s), index=2
  q = f32[20000] broadcast(f32[] constant(0.25)), dimensions={}
  t = f32[20000] subtract(x, q)
  r = s32[] remainder(i, s32[] constant(2))
  odd = pred[] compare(r, s32[] constant(1)), direction=EQ
  o = (f32[20000], f32[7]) tuple(t, y)
  c = (f32[20000], f32[7]) conditional(odd, o, o), true_computation=up, false_computation=down
  x1 = f32[20000] get-tuple-element(c), index=0
  y1 = f32[7] get-tuple-element(c), index=1
  i1 = s32[] add(i, s32[] constant(1))
  ROOT next = (s32[], f32[20000], f32[7]) tuple(i1, x1, y1)
}

ENTRY e {
  x = f32[20000] parameter(0)
  y = f32[7] parameter(1)
  init = (s32[], f32[20000], f32[7]) tuple(s32[] constant(0), x, y)
  ROOT w = (s32[], f32[20000], f32[7]) while(init), condition=cond, body=body
}
)";

bool SameBytes(const Literal& x, const Literal& y) {
  if (!(x.shape() == y.shape())) return false;
  absl::Span<const uint8_t> a = x.data(), b = y.data();
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

// What CheckThreads runs and checks beyond the defaults.
struct ThreadCheck {
  int ulp = 0;  // Float tolerance against the evaluator (vector math).
  std::vector<int> threads = {1, 2};
  int runs = 3;  // Of each executable (later runs reuse kept buffers and loops).
  uint64_t seeds = 4;
  // Replaces arguments after the random fill (indices of a chosen range),
  // given the seed's generator and the seed.
  std::function<void(std::vector<Literal>&, std::mt19937_64&, uint64_t)> arguments;
  // Looks at each executable's steps (at `threads` threads).
  std::function<void(const runtime::ExecutableSpec&, int threads)> inspect;
};

// Runs `hlo` on every host ISA at each of `check.threads`, with every
// kernel that can split split, on random arguments from a few seeds; every
// run must match the evaluator (within `ulp` for vector math) and the bytes
// of the first thread count's first run.
void CheckThreads(const char* hlo, const ThreadCheck& check) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  for (Isa isa : HostIsas()) {
    for (uint64_t seed = 1; seed <= check.seeds; ++seed) {
      SCOPED_TRACE(absl::StrCat("isa ", IsaName(isa), " seed ", seed));
      std::mt19937_64 rng(seed);
      std::vector<Literal> arguments;
      for (const Instruction* p : (*module)->entry()->parameters()) {
        arguments.push_back(RandomLiteral(p->shape(), rng));
      }
      if (check.arguments) check.arguments(arguments, rng, seed);
      absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
      ASSERT_TRUE(expected.ok()) << expected.status();
      std::optional<Literal> single;
      for (int threads : check.threads) {
        CompileOptions options;
        options.threads = threads;
        // Split every kernel that can be: the split kernels are tested.
        options.split_min_chunk_ns = 0;
        options.isa = isa;
        CompileReport report;
        auto executable = Compile(**module, options, &report);
        ASSERT_TRUE(executable.ok()) << executable.status();
        EXPECT_TRUE(UnexpectedInterpretedSteps(report).empty());
        if (check.inspect) check.inspect(*(*executable)->shared_spec(), threads);
        for (int run = 0; run < check.runs; ++run) {
          SCOPED_TRACE(absl::StrCat("threads ", threads, " run ", run));
          absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
          ASSERT_TRUE(actual.ok()) << actual.status();
          EXPECT_EQ(Difference(*expected, *actual, check.ulp), "");
          if (!single) {
            single = std::move(*actual);
          } else {
            EXPECT_TRUE(SameBytes(*single, *actual));
          }
        }
      }
    }
  }
}

// The same at 1 and 2 threads, three runs each; `selectors` (in and out of
// range: the random ones are mostly large) replace argument 0, one a seed.
void CheckThreads(const char* hlo, int ulp = 0, const std::vector<int32_t>& selectors = {}) {
  ThreadCheck check;
  check.ulp = ulp;
  if (!selectors.empty()) {
    check.arguments = [&selectors](std::vector<Literal>& arguments, std::mt19937_64&,
                                   uint64_t seed) {
      const int32_t k = selectors[seed % selectors.size()];
      std::memcpy(arguments[0].data().data(), &k, sizeof(k));
    };
  }
  CheckThreads(hlo, check);
}

TEST(JitSecondThread, ConditionalWithTupleOperandsAndSizeZeroLeaves) {
  CheckThreads(kTupleBranches, 0, {0, 1, 2, -1, 3, 1000});
}

TEST(JitSecondThread, NestedConditionals) { CheckThreads(kNestedConditionals, 4); }

TEST(JitSecondThread, LoopWithConditionalAndSplitKernel) {
  CheckThreads(kLoopWithBranchAndLargeKernel);
}

// At 2 threads the loop's large kernel is split (the pool gets a worker)
// and the loop still runs over bound steps, not step by step.
TEST(JitSecondThread, LoopWithSplitKernelBinds) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kLoopWithBranchAndLargeKernel);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(5);
  std::vector<Literal> arguments;
  for (const Instruction* p : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(p->shape(), rng));
  }
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  CompileOptions options;
  options.threads = 2;
  options.split_min_chunk_ns = 0;  // The large kernel is split, however cheap.
  auto executable = Compile(**module, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  for (int run = 0; run < 2; ++run) {
    runtime::LoopCounts counts;
    runtime::RunContext context;
    context.loop_counts = &counts;
    absl::StatusOr<Literal> result = (*executable)->Run(pointers, context);
    ASSERT_TRUE(result.ok()) << result.status();
    // Guard-page mode runs every loop step by step (bound_steps.h).
    const bool guarded = runtime::internal::GuardPagesRequested();
    EXPECT_EQ(counts.bound.load(), guarded ? 0 : 1);
    EXPECT_EQ(counts.stepped.load(), guarded ? 1 : 0);
  }
  EXPECT_GE(runtime::ThreadPool::Shared().worker_count(), 1);
}

// The split cost model (runtime/split_cost.h): no split at one thread or
// one unit, none under two chunks' worth of estimated time, and at most
// kSplitChunksPerThread chunks per thread, never more than the units.
TEST(SplitCost, ChunksFollowTheEstimatedCost) {
  using runtime::SplitChunks;
  constexpr int64_t kMin = 20000;
  EXPECT_EQ(SplitChunks(int64_t{1} << 40, 1000, 1, kMin), 1);
  EXPECT_EQ(SplitChunks(int64_t{1} << 40, 1, 2, kMin), 1);
  EXPECT_EQ(SplitChunks(2 * kMin - 1, 1000, 2, kMin), 1);
  EXPECT_EQ(SplitChunks(2 * kMin, 1000, 2, kMin), 2);
  EXPECT_EQ(SplitChunks(5 * kMin, 1000, 2, kMin), 5);
  EXPECT_EQ(SplitChunks(int64_t{1} << 40, 1000, 2, kMin), 2 * runtime::kSplitChunksPerThread);
  EXPECT_EQ(SplitChunks(int64_t{1} << 40, 3, 2, kMin), 3);
  // 0: every kernel of two or more units (CompileOptions::split_min_chunk_ns).
  EXPECT_EQ(SplitChunks(0, 1000, 2, 0), 2 * runtime::kSplitChunksPerThread);
  // A 64 Ki-element f32 add (768 KiB read and written, a few operations per
  // 8-lane vector) is estimated at about its measured 10 us.
  const int64_t add = runtime::EstimateKernelNanoseconds(768 << 10, 8192, 5);
  EXPECT_GT(add, 5000);
  EXPECT_LT(add, 20000);
}

// With the default cost model at 2 threads, a cheap kernel (an add over
// 20,000 f32: about 3 us) runs on the calling thread alone, and one with
// vector math over 2^20 elements is split in several chunks; both give the
// evaluator's values and the 1-thread bytes.
TEST(SplitCost, CheapKernelsStayWholeCostlyOnesSplit) {
  constexpr char kCheapAndCostly[] = R"(
HloModule cheap_and_costly

ENTRY e {
  a = f32[20000] parameter(0)
  b = f32[20000] parameter(1)
  x = f32[1048576] parameter(2)
  s = f32[20000] add(a, b)
  t = f32[1048576] exponential(x)
  ROOT r = (f32[20000], f32[1048576]) tuple(s, t)
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kCheapAndCostly);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(7);
  std::vector<Literal> arguments;
  for (const Instruction* p : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(p->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::optional<Literal> single;
  for (int threads : {1, 2}) {
    CompileOptions options;
    options.threads = threads;
    auto executable = Compile(**module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const runtime::ExecutableSpec& spec = *(*executable)->shared_spec();
    int kernels = 0;
    for (const runtime::Step& step : spec.steps) {
      if (step.kind != runtime::Step::Kind::kKernel) continue;
      ++kernels;
      const int64_t chunks =
          runtime::internal::KernelSplitChunks(step, spec.threads, spec.split_min_chunk_ns);
      SCOPED_TRACE(absl::StrCat(step.name, " threads ", threads, " cost ", step.cost_ns));
      if (threads == 1 || step.outer_extent == 20000) {
        EXPECT_EQ(chunks, 1);
      } else {
        EXPECT_GE(chunks, 2);
      }
    }
    EXPECT_EQ(kernels, 2);
    absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
    ASSERT_TRUE(actual.ok()) << actual.status();
    EXPECT_EQ(Difference(*expected, *actual, 4), "");
    if (!single) {
      single = std::move(*actual);
    } else {
      EXPECT_TRUE(SameBytes(*single, *actual));
    }
  }
}

// The chunks of a kernel when a pool worker is watching for work: the
// cost bound divided by kSplitWarmDivisor, never fewer than SplitChunks.
TEST(SplitCost, WarmChunksTakeASmallerBound) {
  using runtime::SplitChunks;
  using runtime::WarmSplitChunks;
  constexpr int64_t kMin = 20000;
  constexpr int64_t kWarm = kMin / runtime::kSplitWarmDivisor;
  EXPECT_EQ(WarmSplitChunks(int64_t{1} << 40, 1000, 1, kMin), 1);
  EXPECT_EQ(WarmSplitChunks(int64_t{1} << 40, 1, 2, kMin), 1);
  EXPECT_EQ(WarmSplitChunks(2 * kWarm - 1, 1000, 2, kMin), 1);
  EXPECT_EQ(WarmSplitChunks(2 * kWarm, 1000, 2, kMin), 2);
  EXPECT_EQ(WarmSplitChunks(2 * kMin - 1, 1000, 2, kMin), 7);
  EXPECT_EQ(SplitChunks(2 * kMin - 1, 1000, 2, kMin), 1);
  EXPECT_EQ(WarmSplitChunks(int64_t{1} << 40, 1000, 2, kMin),
            SplitChunks(int64_t{1} << 40, 1000, 2, kMin));
  // A bound of 0 (or one the divisor makes 0) keeps SplitChunks' rule.
  EXPECT_EQ(WarmSplitChunks(0, 1000, 2, 0), SplitChunks(0, 1000, 2, 0));
  EXPECT_EQ(WarmSplitChunks(100, 1000, 2, 3), SplitChunks(100, 1000, 2, 3));
}

// A worker that has run a chunk watches for the next job for a short while
// and then blocks: an idle pool soon says that no worker is watching. (That
// it says so while one watches is not tested: on a loaded machine the worker
// and the caller may share one CPU, and the watch passes while the caller
// is descheduled.)
TEST(ThreadPool, NoWorkerWatchesOnceThePoolIsIdle) {
  runtime::ThreadPool& pool = runtime::ThreadPool::Shared();
  std::atomic<int> chunks{0};
  pool.ParallelFor(4, 1, [&](int64_t) { chunks.fetch_add(1); });
  EXPECT_EQ(chunks.load(), 4);
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (pool.HasWatchingWorker() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  EXPECT_FALSE(pool.HasWatchingWorker());
}

// CopySplit: the bytes memmove gives, for ranges apart (split in page
// chunks, the last one partial) and overlapping (one memmove), at any bound.
TEST(SplitCost, CopySplitCopiesWhatMemmoveCopies) {
  constexpr int64_t kBytes = (int64_t{3} << 20) + 1234;
  std::vector<uint8_t> source(2 * kBytes);
  std::mt19937_64 rng(5);
  for (uint8_t& byte : source) byte = static_cast<uint8_t>(rng());
  for (int64_t min_chunk_ns : {int64_t{0}, runtime::kSplitMinChunkNs}) {
    for (int threads : {1, 2, 3}) {
      SCOPED_TRACE(absl::StrCat("threads ", threads, " bound ", min_chunk_ns));
      std::vector<uint8_t> apart(kBytes, 0);
      runtime::internal::CopySplit(apart.data(), source.data() + 7, kBytes, threads, min_chunk_ns);
      EXPECT_EQ(std::memcmp(apart.data(), source.data() + 7, kBytes), 0);
      // Overlapping, forward and backward by a few bytes.
      for (int64_t shift : {int64_t{5}, int64_t{-5}}) {
        std::vector<uint8_t> expected(source);
        std::vector<uint8_t> actual(source);
        std::memmove(expected.data() + kBytes / 2 + shift, expected.data() + kBytes / 2, kBytes);
        runtime::internal::CopySplit(actual.data() + kBytes / 2 + shift, actual.data() + kBytes / 2,
                                     kBytes, threads, min_chunk_ns);
        EXPECT_TRUE(expected == actual) << "shift " << shift;
      }
    }
  }
}

// A loop whose body has a kernel split at any time (tanh over 2^20
// elements) followed by one split only while the worker still watches
// (tanh over 2^15: 10-40 us by the estimate), carrying a 4 MiB array it never
// changes (copied into the loop's state when the loop starts, in chunks by
// its estimated time: CopySplit). At 2 threads, with the default cost model, the results
// are the evaluator's and the 1-thread bytes, run after run, whichever
// chunks each run took.
constexpr char kWarmSplitLoop[] = R"(
HloModule warm_split_loop

body {
  p = (s32[], f32[1048576], f32[32768], f32[1048576]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  big = f32[1048576] get-tuple-element(p), index=1
  mid = f32[32768] get-tuple-element(p), index=2
  kept = f32[1048576] get-tuple-element(p), index=3
  one = s32[] constant(1)
  next = s32[] add(i, one)
  t = f32[1048576] tanh(big)
  m = f32[32768] tanh(mid)
  ROOT r = (s32[], f32[1048576], f32[32768], f32[1048576]) tuple(next, t, m, kept)
}

cond {
  p = (s32[], f32[1048576], f32[32768], f32[1048576]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  n = s32[] constant(3)
  ROOT lt = pred[] compare(i, n), direction=LT
}

ENTRY e {
  a = f32[1048576] parameter(0)
  b = f32[32768] parameter(1)
  c = f32[1048576] parameter(2)
  zero = s32[] constant(0)
  init = (s32[], f32[1048576], f32[32768], f32[1048576]) tuple(zero, a, b, c)
  w = (s32[], f32[1048576], f32[32768], f32[1048576]) while(init), condition=cond, body=body
  t = f32[1048576] get-tuple-element(w), index=1
  m = f32[32768] get-tuple-element(w), index=2
  kept = f32[1048576] get-tuple-element(w), index=3
  m2 = f32[32768] tanh(m)
  ROOT r = (f32[1048576], f32[32768], f32[32768], f32[1048576]) tuple(t, m, m2, kept)
}
)";

TEST(SplitCost, WarmSplitsAndCopiesKeepTheBits) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kWarmSplitLoop);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(11);
  std::vector<Literal> arguments;
  for (const Instruction* p : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(p->shape(), rng));
  }
  absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::optional<Literal> single;
  for (int threads : {1, 2}) {
    CompileOptions options;
    options.threads = threads;
    auto executable = Compile(**module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const runtime::ExecutableSpec& spec = *(*executable)->shared_spec();
    bool mid_kernel = false;
    bool large_copy = false;
    for (const runtime::Step& step : spec.steps) {
      const int64_t cold =
          runtime::internal::KernelSplitChunks(step, spec.threads, spec.split_min_chunk_ns);
      const int64_t warm =
          runtime::internal::KernelWarmSplitChunks(step, spec.threads, spec.split_min_chunk_ns);
      if (step.kind == runtime::Step::Kind::kKernel && step.outer_extent == 32768) {
        mid_kernel = true;
        EXPECT_EQ(cold, 1) << step.name;
        EXPECT_EQ(warm >= 2, threads == 2) << step.name << " cost " << step.cost_ns;
      }
      if (step.kind == runtime::Step::Kind::kWhile) {
        for (int slot : step.inputs) large_copy |= spec.plan.slots[slot].size == int64_t{4} << 20;
      }
    }
    EXPECT_TRUE(mid_kernel);
    EXPECT_TRUE(large_copy);
    for (int run = 0; run < (threads == 1 ? 1 : 20); ++run) {
      absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
      ASSERT_TRUE(actual.ok()) << actual.status();
      SCOPED_TRACE(absl::StrCat("threads ", threads, " run ", run));
      EXPECT_EQ(Difference(*expected, *actual, 4), "");
      if (!single) {
        single = std::move(*actual);
      } else {
        EXPECT_TRUE(SameBytes(*single, *actual));
      }
    }
  }
}

// Scatters whose kernels claim target rows, and one that cannot (s4: a
// window spans 4 rows). Indices (parameter 2) repeat and some fall outside
// [0, 64) on either side; s1's updates are gathered rows (a fused gather,
// as graph networks send messages); h has no window (kept whole: see
// kClaimedWindowMinElements); s2 multiplies f64 rows; v is variadic.
constexpr char kRowScatters[] = R"(
HloModule row_scatters

add_f32 {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

add_s32 {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT s = s32[] add(x, y)
}

mul_f64 {
  x = f64[] parameter(0)
  y = f64[] parameter(1)
  ROOT m = f64[] multiply(x, y)
}

sum_and_max {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT t = (f32[], s32[]) tuple(s, m)
}

ENTRY e {
  table = f32[64,32] parameter(0)
  base = f32[64,32] parameter(1)
  idx = s32[3001,1] parameter(2)
  src = s32[3001,1] parameter(3)
  cm = f64[64,32] parameter(4)
  u = f64[32,3001] parameter(5)
  u4 = f32[200,4,32] parameter(6)
  vi = s32[64,32] parameter(7)
  vu = s32[3001,32] parameter(8)
  g = f32[3001,32] gather(table, src), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,32}
  s1 = f32[64,32] scatter(base, idx, g), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  zero = s32[] constant(0)
  hz = s32[64] broadcast(zero), dimensions={}
  one = s32[] constant(1)
  ones = s32[3001] broadcast(one), dimensions={}
  h = s32[64] scatter(hz, idx, ones), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s32
  s2 = f64[64,32] scatter(cm, idx, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul_f64
  idx4 = s32[200,1] slice(idx), slice={[0:200], [0:1]}
  s4 = f32[64,32] scatter(base, idx4, u4), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32
  v = (f32[64,32], s32[64,32]) scatter(base, vi, idx, g, vu), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=sum_and_max
  v0 = f32[64,32] get-tuple-element(v), index=0
  v1 = s32[64,32] get-tuple-element(v), index=1
  ROOT r = (f32[64,32], s32[64], f64[64,32], f32[64,32], f32[64,32], s32[64,32]) tuple(s1, h, s2, s4, v0, v1)
}
)";

// Indices into 64 rows: runs of ascending rows (as batched graphs' edges
// come) and random ones, a few below 0 or at 64 and beyond.
Literal RowIndices(int64_t count, std::mt19937_64& rng) {
  std::vector<int64_t> values(count);
  for (int64_t i = 0; i < count; ++i) {
    const uint64_t r = rng() % 100;
    values[i] = r < 5 ? -1 - static_cast<int64_t>(rng() % 3)
                : r < 10 ? 64 + static_cast<int64_t>(rng() % 3)
                : r < 55 ? i * 64 / count
                         : static_cast<int64_t>(rng() % 64);
  }
  return Literal::FromInts(Shape::Array(ElementType::kS32, {count, 1}), values);
}

TEST(JitSecondThread, ScattersSplitByTargetRows) {
  ThreadCheck check;
  check.threads = {1, 3};
  check.runs = 10;
  check.seeds = 3;
  check.arguments = [](std::vector<Literal>& arguments, std::mt19937_64& rng, uint64_t) {
    arguments[2] = RowIndices(3001, rng);
    arguments[3] = RowIndices(3001, rng);
    arguments[7] = Literal::FromInts(Shape::Array(ElementType::kS32, {64, 32}),
                                     std::vector<int64_t>(64 * 32, -5));
  };
  check.inspect = [](const runtime::ExecutableSpec& spec, int threads) {
    int claiming = 0;
    for (const runtime::Step& step : spec.steps) {
      if (step.kind != runtime::Step::Kind::kKernel || !step.claims_range) continue;
      ++claiming;
      EXPECT_EQ(step.outer_extent, 64) << step.name;
      EXPECT_EQ(runtime::internal::KernelSplitChunks(step, spec.threads, 0), threads)
          << step.name;
    }
    // s1, s2 and v on a target that claims rows (x86-64); h's windows (one
    // element) are too small to pay for a split.
    if (!HostTargetIsPartial()) {
      EXPECT_EQ(claiming, 3);
    }
  };
  CheckThreads(kRowScatters, check);
}

// A row group (jit/kernel/row_groups.h: m = s * p, kept, and the kernel
// that reads it, x + m or tanh(x + m), over f32[65536]: 512 KiB written,
// the step of lineax_cg's solver loop) is split like a kernel of its
// members' summed estimated cost (RowGroupSplitParts): the cheap group
// (about 25 us) stays on the calling thread at 2 threads unless a worker
// is watching, where its size alone once split it every time (lineax_cg ran
// twice as slow at 2 threads as at 1, docs/zoo.md "Session 18"); the costly
// one (vector math) runs in one part per thread. Both give the evaluator's
// values and the 1-thread bytes.
std::string ScaleAddModule(bool tanh) {
  return absl::StrCat(R"(
HloModule scale_add

ENTRY e {
  s = f32[] parameter(0)
  p = f32[65536] parameter(1)
  x = f32[65536] parameter(2)
  sb = f32[65536] broadcast(s), dimensions={}
  m = f32[65536] multiply(sb, p)
)",
                      tanh ? "  a0 = f32[65536] add(x, m)\n  a = f32[65536] tanh(a0)\n"
                           : "  a = f32[65536] add(x, m)\n",
                      "  ROOT r = (f32[65536], f32[65536]) tuple(m, a)\n}\n");
}

TEST(SplitCost, RowGroupsSplitByTheirCost) {
  for (bool tanh : {false, true}) {
    SCOPED_TRACE(tanh ? "tanh(x + s * p)" : "x + s * p");
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(ScaleAddModule(tanh));
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(13);
    std::vector<Literal> arguments;
    for (const Instruction* p : (*module)->entry()->parameters()) {
      arguments.push_back(RandomLiteral(p->shape(), rng));
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::optional<Literal> single;
    for (int threads : {1, 2}) {
      SCOPED_TRACE(absl::StrCat("threads ", threads));
      CompileOptions options;
      options.threads = threads;
      auto executable = Compile(**module, options);
      ASSERT_TRUE(executable.ok()) << executable.status();
      const runtime::ExecutableSpec& spec = *(*executable)->shared_spec();
      int groups = 0;
      for (const runtime::Step& step : spec.steps) {
        if (step.kind != runtime::Step::Kind::kRowGroup) continue;
        ++groups;
        const auto parts = [&](int64_t min_chunk_ns, bool warm) {
          return runtime::internal::RowGroupSplitParts(step, spec.plan.slots, spec.threads,
                                                       min_chunk_ns, spec.parallel_min_bytes,
                                                       warm);
        };
        EXPECT_EQ(parts(spec.split_min_chunk_ns, false), threads == 2 && tanh ? 2 : 1);
        EXPECT_GE(parts(spec.split_min_chunk_ns, true), parts(spec.split_min_chunk_ns, false));
        EXPECT_LE(parts(spec.split_min_chunk_ns, true), threads);
        // With no cost bound (the tests' split_min_chunk_ns 0) any group
        // of enough bytes splits, so that split groups stay tested.
        EXPECT_EQ(parts(0, false), threads);
      }
      EXPECT_EQ(groups, 1);
      for (int run = 0; run < 3; ++run) {
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
        ASSERT_TRUE(actual.ok()) << actual.status();
        EXPECT_EQ(Difference(*expected, *actual, 4), "");
        if (!single) {
          single = std::move(*actual);
        } else {
          EXPECT_TRUE(SameBytes(*single, *actual));
        }
      }
    }
  }
}

// The same loop, run from two threads at once: each run takes its own kept
// loop and result buffer.
TEST(JitSecondThread, ConcurrentRunsOfALoopWithConditional) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kLoopWithBranchAndLargeKernel);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(3);
  std::vector<Literal> arguments;
  for (const Instruction* p : (*module)->entry()->parameters()) {
    arguments.push_back(RandomLiteral(p->shape(), rng));
  }
  CompileOptions options;
  options.threads = 2;
  options.split_min_chunk_ns = 0;  // The large kernel is split, however cheap.
  auto executable = Compile(**module, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  absl::StatusOr<Literal> reference = (*executable)->Run(arguments);
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<bool> same(2, false);
  std::vector<std::thread> runners;
  for (int t = 0; t < 2; ++t) {
    runners.emplace_back([&, t] {
      bool all = true;
      for (int run = 0; run < 4; ++run) {
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
        all = all && actual.ok() && SameBytes(*reference, *actual);
      }
      same[t] = all;
    });
  }
  for (std::thread& runner : runners) runner.join();
  EXPECT_TRUE(same[0]);
  EXPECT_TRUE(same[1]);
}

// The cost model of library calls' OpenBLAS threads.
TEST(BlasThreadsForWork, OneThreadBelowTheThreshold) {
  using runtime::blas::BlasThreadsForWork;
  using runtime::blas::kBlasThreadedMinWork;
  EXPECT_EQ(BlasThreadsForWork(2, 0), 1);
  EXPECT_EQ(BlasThreadsForWork(2, 4100 * 4 * 4), 1);  // A 4100x4 QR.
  EXPECT_EQ(BlasThreadsForWork(2, kBlasThreadedMinWork - 1), 1);
  EXPECT_EQ(BlasThreadsForWork(2, kBlasThreadedMinWork), 2);
  EXPECT_EQ(BlasThreadsForWork(4, int64_t{512} * 512 * 512), 1);
  EXPECT_EQ(BlasThreadsForWork(4, int64_t{4096} * 4096 * 4096), 4);
  EXPECT_EQ(BlasThreadsForWork(1, int64_t{4096} * 4096 * 4096), 1);
  EXPECT_EQ(BlasThreadsForWork(0, int64_t{4096} * 4096 * 4096), 1);
}

// Compiled plans: a small QR (geqrf 4100x4), a small triangular solve, a
// 256x256 Cholesky and a 1024x512 QR run OpenBLAS single-threaded at 2
// threads, a 4096x4096 Cholesky with 2; a large gemv never asks for
// OpenBLAS threads.
TEST(BlasThreadsForWork, CompiledPlans) {
  struct Form {
    std::string hlo;
    std::string routine;  // A substring of the step's description.
    std::string threads;  // Expected in it.
  };
  const std::vector<Form> forms = {
      {"HloModule m\nENTRY e {\n  a = f32[4100,4]{0,1} parameter(0)\n"
       "  ROOT q = (f32[4100,4]{0,1}, f32[4]) custom-call(a), custom_call_target=\"Qr\"\n}\n",
       "geqrf", "threads=1"},
      {"HloModule m\nENTRY e {\n  a = f32[4,4] parameter(0)\n  b = f32[4,1] parameter(1)\n"
       "  ROOT x = f32[4,1] triangular-solve(a, b), left_side=true, lower=true, "
       "transpose_a=NO_TRANSPOSE\n}\n",
       "trsm", "threads=1"},
      {"HloModule m\nENTRY e {\n  a = f32[256,256] parameter(0)\n"
       "  ROOT c = f32[256,256] cholesky(a), lower=true\n}\n",
       "potrf", "threads=1"},
      {"HloModule m\nENTRY e {\n  a = f32[4096,4096] parameter(0)\n"
       "  ROOT c = f32[4096,4096] cholesky(a), lower=true\n}\n",
       "potrf", "threads=2"},
      // jaxlib's LAPACK calls: 512 reflectors applied to one column
      // (524,288 multiply-adds) single-threaded, and their 1024x512
      // factorization (2.7e8) too.
      {"HloModule m\nENTRY e {\n  a = f32[1024,512]{0,1} parameter(0)\n"
       "  t = f32[512] parameter(1)\n  c = f32[1024,1]{0,1} parameter(2)\n"
       "  ROOT q = f32[1024,1]{0,1} custom-call(a, t, c), custom_call_target=\"lapack_sormqr_ffi\", "
       "operand_layout_constraints={f32[1024,512]{0,1}, f32[512]{0}, f32[1024,1]{0,1}}, "
       "output_to_operand_aliasing={{}: (2, {})}, api_version=API_VERSION_TYPED_FFI, "
       "backend_config={left = true, transpose = true}\n}\n",
       "ormqr", "threads=1"},
      {"HloModule m\nENTRY e {\n  a = f32[1024,512]{0,1} parameter(0)\n"
       "  ROOT q = (f32[1024,512]{0,1}, f32[512]{0}) custom-call(a), "
       "custom_call_target=\"lapack_sgeqrf_ffi\", "
       "operand_layout_constraints={f32[1024,512]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, "
       "api_version=API_VERSION_TYPED_FFI, backend_config={}\n}\n",
       "geqrf", "threads=1"},
  };
  for (const Form& form : forms) {
    SCOPED_TRACE(form.hlo);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(form.hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    CompileOptions options;
    options.threads = 2;
    CompileReport report;
    auto executable = Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    bool found = false;
    for (const LibraryCallInfo& call : report.library_calls) {
      if (call.plan.find(form.routine) == std::string::npos) continue;
      found = true;
      EXPECT_NE(call.plan.find(form.threads), std::string::npos) << call.plan;
    }
    EXPECT_TRUE(found);
  }
  absl::StatusOr<std::unique_ptr<Module>> gemv = ParseVerified(
      "HloModule m\nENTRY e {\n  a = f32[4096,256] parameter(0)\n  x = f32[256] parameter(1)\n"
      "  ROOT y = f32[4096] dot(a, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n");
  ASSERT_TRUE(gemv.ok()) << gemv.status();
  absl::StatusOr<runtime::blas::DotPlan> plan =
      runtime::blas::PlanDot(*(*gemv)->entry()->root());
  ASSERT_TRUE(plan.ok()) << plan.status();
  runtime::blas::PlanDotThreads(*plan, 2);
  EXPECT_EQ(plan->blas_threads, 1) << plan->ToString();
}

}  // namespace
}  // namespace xjit::jit::testing
