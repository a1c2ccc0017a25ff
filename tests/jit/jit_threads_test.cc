// Threaded kernels (CompileOptions::threads): a large kernel's outermost
// loop is split between threads; results must equal the single-threaded
// ones bit for bit and the evaluator's, for odd sizes, empty arrays,
// scalars, ranks 1 to 4 and non-default layouts, also when one threaded
// executable runs from several threads at once; batched dots split over the
// threads; runs that reuse an earlier run's arena. And the shared ThreadPool.
#include <atomic>
#include <cstring>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "jit/compile.h"
#include "runtime/blas/dot.h"
#include "runtime/thread_pool.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

struct Case {
  const char* name;
  std::string hlo;
  int ulp_tolerance = 0;  // Against the evaluator (vector math).
};

std::string Binary(const std::string& type, const std::string& dims, const std::string& layout,
                   const std::string& op) {
  return absl::StrCat("HloModule m\nENTRY e {\n  a = ", type, "[", dims, "] parameter(0)\n",
                      "  b = ", type, "[", dims, "]", layout, " parameter(1)\n",
                      "  ROOT r = ", type, "[", dims, "]", layout, " ", op, "(a, b)\n}\n");
}

std::vector<Case> Cases() {
  std::vector<Case> cases = {
      // Rank 1, vectorised, odd sizes (tails at the real end only).
      {"f32_rank1", Binary("f32", "100003", "", "add")},
      {"f64_rank1", Binary("f64", "8193", "", "multiply")},
      {"f32_rank1_aligned", Binary("f32", "65536", "", "maximum")},
      // Rank 1, scalar code only (f16 is not vectorised).
      {"f16_rank1", Binary("f16", "70001", "", "add")},
      {"s32_rank1", Binary("s32", "40009", "", "multiply")},
      // Ranks 2 to 4, default and non-default layouts.
      {"f32_rank2_transposed", Binary("f32", "257,129", "{0,1}", "subtract")},
      {"f32_rank2_outer2", Binary("f32", "2,40001", "", "add")},
      {"f32_rank2_outer1", Binary("f32", "1,70001", "", "add")},
      {"s32_rank3", Binary("s32", "7,65,37", "{1,0,2}", "add")},
      {"f64_rank4", Binary("f64", "3,5,33,37", "{1,3,0,2}", "divide")},
      // Empty and scalar.
      {"f32_empty", Binary("f32", "0,100000", "", "add")},
      {"f32_scalar", Binary("f32", "", "", "add")},
      // Small (16 units of 64 elements).
      {"f32_small", Binary("f32", "1001", "", "add")},
      // Vector math, and a fusion of several operations with a broadcast.
      {"tanh_chain",
       "HloModule m\nENTRY e {\n  a = f32[50021] parameter(0)\n  x = f32[50021] parameter(1)\n"
       "  c = f32[] constant(0.25)\n  cb = f32[50021] broadcast(c), dimensions={}\n"
       "  m = f32[50021] multiply(a, x)\n  s = f32[50021] add(m, cb)\n"
       "  ROOT t = f32[50021] tanh(s)\n}\n",
       4},
      {"broadcast_rank3",
       "HloModule m\nENTRY e {\n  a = f32[131] parameter(0)\n  x = f32[5,131,29] parameter(1)\n"
       "  ab = f32[5,131,29] broadcast(a), dimensions={1}\n"
       "  ROOT r = f32[5,131,29]{0,2,1} add(ab, x)\n}\n"},
  };
  return cases;
}

bool SameBytes(const Literal& x, const Literal& y) {
  if (!(x.shape() == y.shape())) return false;
  absl::Span<const uint8_t> a = x.data(), b = y.data();
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size()) == 0);
}

absl::StatusOr<std::unique_ptr<runtime::Executable>> CompileWithThreads(const Module& module,
                                                                       int threads, Isa isa) {
  CompileOptions options;
  options.threads = threads;
  // Split every kernel that can be, however cheap: the split is tested.
  options.split_min_chunk_ns = 0;
  options.isa = isa;
  return Compile(module, options);
}

TEST(JitThreads, ThreadCountsAgreeBitForBitAndMatchEvaluator) {
  for (Isa isa : HostIsas()) {
    for (const Case& c : Cases()) {
      SCOPED_TRACE(absl::StrCat(c.name, " isa ", IsaName(isa)));
      absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(c.hlo);
      ASSERT_TRUE(module.ok()) << module.status();
      std::mt19937_64 rng(7);
      std::vector<Literal> arguments;
      for (const Instruction* p : (*module)->entry()->parameters()) {
        arguments.push_back(RandomLiteral(p->shape(), rng));
      }
      absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
      ASSERT_TRUE(expected.ok()) << expected.status();
      std::optional<Literal> single;
      for (int threads : {1, 2, 3, 7}) {
        SCOPED_TRACE(absl::StrCat("threads ", threads));
        CompileReport report;
        CompileOptions options;
        options.threads = threads;
        // Split every kernel that can be, however cheap: the split is tested.
        options.split_min_chunk_ns = 0;
        options.isa = isa;
        auto executable = Compile(**module, options, &report);
        ASSERT_TRUE(executable.ok()) << executable.status();
        EXPECT_TRUE(report.interpreted_steps.empty());
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
        ASSERT_TRUE(actual.ok()) << actual.status();
        EXPECT_EQ(Difference(*expected, *actual, c.ulp_tolerance), "");
        if (!single) {
          single = std::move(*actual);
        } else {
          EXPECT_TRUE(SameBytes(*single, *actual));
        }
      }
    }
  }
  // The large kernels were really split: 7 threads asked for 6 workers.
  EXPECT_GE(runtime::ThreadPool::Shared().worker_count(), 6);
}

TEST(JitThreads, ConcurrentRunsOfAThreadedExecutable) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(Binary("f32", "3,30011", "{0,1}", "multiply"));
  ASSERT_TRUE(module.ok()) << module.status();
  auto one = CompileWithThreads(**module, 1, Isa::kAuto);
  auto three = CompileWithThreads(**module, 3, Isa::kAuto);
  ASSERT_TRUE(one.ok() && three.ok());
  std::vector<std::vector<Literal>> arguments(4);
  std::vector<Literal> expected;
  for (int t = 0; t < 4; ++t) {
    std::mt19937_64 rng(100 + t);
    for (const Instruction* p : (*module)->entry()->parameters()) {
      arguments[t].push_back(RandomLiteral(p->shape(), rng));
    }
    absl::StatusOr<Literal> want = (*one)->Run(arguments[t]);
    ASSERT_TRUE(want.ok());
    expected.push_back(std::move(*want));
  }
  std::atomic<int> mismatches{0};
  std::vector<std::thread> runners;
  for (int t = 0; t < 4; ++t) {
    runners.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        absl::StatusOr<Literal> got = (*three)->Run(arguments[t]);
        if (!got.ok() || !SameBytes(expected[t], *got)) ++mismatches;
      }
    });
  }
  for (std::thread& runner : runners) runner.join();
  EXPECT_EQ(mismatches.load(), 0);
}

// Small integers in f32: every dot below sums exactly, so the JIT's results
// equal the evaluator's bit for bit whatever the summation order.
Literal SmallIntegers(const Shape& shape, int seed) {
  Literal literal(shape);
  float* data = reinterpret_cast<float*>(literal.data().data());
  for (int64_t i = 0; i < shape.element_count(); ++i) {
    data[i] = static_cast<float>((i * 7 + seed) % 9 - 4);
  }
  return literal;
}

// A batch of products that divides among the threads is split over them,
// one OpenBLAS thread per product (runtime/blas/dot.h PlanDotThreads, here
// without its minimum of work): batch 6 with 2 and 3 threads, and a batch of
// 2 x 3 over two batch dimensions, one of them not the outermost. Compiled
// (with the minimum) they match the evaluator on 1, 2, 3 and 7 threads.
TEST(JitThreads, BatchedDotSplitOverThreadsMatchesEvaluator) {
  const std::string modules[] = {
      "HloModule m\nENTRY e {\n  a = f32[6,33,17] parameter(0)\n"
      "  b = f32[6,17,29] parameter(1)\n"
      "  ROOT d = f32[6,33,29] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
      "rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
      "HloModule m\nENTRY e {\n  a = f32[2,19,3,8]{3,1,2,0} parameter(0)\n"
      "  b = f32[2,3,8,21] parameter(1)\n"
      "  ROOT d = f32[2,3,19,21] dot(a, b), lhs_batch_dims={0,2}, lhs_contracting_dims={3}, "
      "rhs_batch_dims={0,1}, rhs_contracting_dims={2}\n}\n",
  };
  for (const std::string& hlo : modules) {
    SCOPED_TRACE(hlo);
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<Literal> arguments;
    int seed = 0;
    for (const Instruction* p : (*module)->entry()->parameters()) {
      arguments.push_back(SmallIntegers(p->shape(), seed++));
    }
    absl::StatusOr<runtime::blas::DotPlan> plan =
        runtime::blas::PlanDot(*(*module)->entry()->root());
    ASSERT_TRUE(plan.ok()) << plan.status();
    for (int threads : {2, 3}) {
      runtime::blas::DotPlan split = *plan;
      runtime::blas::PlanDotThreads(split, threads, runtime::blas::DotSplitLimits{16, 0});
      EXPECT_EQ(split.split, runtime::blas::DotPlan::Split::kBatch) << threads;
    }
    absl::StatusOr<Literal> expected = EvaluateModule(**module, arguments);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (int threads : {1, 2, 3, 7}) {
      SCOPED_TRACE(absl::StrCat("threads ", threads));
      auto executable = CompileWithThreads(**module, threads, Isa::kAuto);
      ASSERT_TRUE(executable.ok()) << executable.status();
      for (int run = 0; run < 3; ++run) {
        absl::StatusOr<Literal> actual = (*executable)->Run(arguments);
        ASSERT_TRUE(actual.ok()) << actual.status();
        EXPECT_TRUE(SameBytes(*expected, *actual));
      }
    }
  }
}

// Runs keep an arena for the next run (runtime/executable.h): a run after
// runs on other arguments, whose temporaries are still in the arena, gives
// what a fresh executable gives.
TEST(JitThreads, RunsAfterOtherRunsMatchAFreshExecutable) {
  const std::string hlo =
      "HloModule m\nadd {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n"
      "  ROOT s = f32[] add(x, y)\n}\n"
      "ENTRY e {\n  a = f32[64,48] parameter(0)\n  b = f32[48,40] parameter(1)\n"
      "  c = f32[64,40] parameter(2)\n  t = f32[64,48] negate(a)\n"
      "  d = f32[64,40] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  e = f32[64,40] multiply(d, c)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[40] reduce(e, z), dimensions={0}, to_apply=add\n}\n";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<std::vector<Literal>> arguments(3);
  for (int set = 0; set < 3; ++set) {
    int seed = 10 * set;
    for (const Instruction* p : (*module)->entry()->parameters()) {
      arguments[set].push_back(SmallIntegers(p->shape(), seed++));
    }
  }
  for (int threads : {1, 2}) {
    SCOPED_TRACE(absl::StrCat("threads ", threads));
    auto reused = CompileWithThreads(**module, threads, Isa::kAuto);
    ASSERT_TRUE(reused.ok()) << reused.status();
    ASSERT_GT((*reused)->plan().temp_bytes, 0);
    for (int round = 0; round < 2; ++round) {
      for (int set = 0; set < 3; ++set) {
        auto fresh = CompileWithThreads(**module, threads, Isa::kAuto);
        ASSERT_TRUE(fresh.ok()) << fresh.status();
        absl::StatusOr<Literal> want = (*fresh)->Run(arguments[set]);
        absl::StatusOr<Literal> got = (*reused)->Run(arguments[set]);
        ASSERT_TRUE(want.ok() && got.ok());
        EXPECT_TRUE(SameBytes(*want, *got)) << "round " << round << " set " << set;
      }
    }
  }
}

TEST(ThreadPool, EveryChunkRunsOnceFromConcurrentCallers) {
  runtime::ThreadPool pool;
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    callers.emplace_back([&, t] {
      for (int round = 0; round < 50; ++round) {
        const int64_t count = 1 + (round * 7 + t) % 23;
        std::vector<std::atomic<int>> hits(count);
        pool.ParallelFor(count, 1 + (round + t) % 5, [&](int64_t k) { ++hits[k]; });
        for (int64_t k = 0; k < count; ++k) {
          if (hits[k].load() != 1) ++failures;
        }
      }
    });
  }
  for (std::thread& caller : callers) caller.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_LE(pool.worker_count(), 5);
  int zero_calls = 0;
  pool.ParallelFor(0, 3, [&](int64_t) { ++zero_calls; });
  pool.ParallelFor(5, 0, [&](int64_t) { ++zero_calls; });  // No helpers: caller only.
  EXPECT_EQ(zero_calls, 5);
}

}  // namespace
}  // namespace xjit::jit::testing
