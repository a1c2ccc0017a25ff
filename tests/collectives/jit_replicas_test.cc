// The JIT's replicated runs (runtime/collectives/replicated_run.h) and its
// host transfers and custom calls (library-call steps), each against the
// evaluator: RunModuleReplicated / EvaluateModule on the same arguments.
// Every compile must report no interpreted step.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "runtime/collectives/communicator.h"
#include "runtime/collectives/replicated_run.h"
#include "runtime/host/ffi_registry.h"
#include "runtime/host/host_queues.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

// The values of an f32 array in row-major order.
std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> values;
  for (int64_t i = 0; i < literal.element_count(); ++i) {
    const uint32_t bits = static_cast<uint32_t>(literal.GetBitsLinear(i));
    float value;
    std::memcpy(&value, &bits, sizeof(value));
    values.push_back(value);
  }
  return values;
}

// Compiles with no interpreted step.
std::unique_ptr<runtime::Executable> CompileAll(const Module& module) {
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, CompileOptions(), &report);
  EXPECT_TRUE(executable.ok()) << executable.status();
  if (!executable.ok()) return nullptr;
  const std::vector<std::string> interpreted = UnexpectedInterpretedSteps(report);
  EXPECT_TRUE(interpreted.empty()) << interpreted[0];
  return std::move(*executable);
}

// Replica r's arguments: random values of the entry's parameter shapes,
// different per replica.
std::vector<std::vector<Literal>> RandomArguments(const Module& module, int replicas,
                                                  uint64_t seed, bool ordinary = false) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(-1, 1);
  std::vector<std::vector<Literal>> arguments(replicas);
  for (int r = 0; r < replicas; ++r) {
    for (const Instruction* parameter : module.entry()->parameters()) {
      if (ordinary) {
        std::vector<double> values(parameter->shape().element_count());
        for (double& v : values) v = uniform(rng);
        arguments[r].push_back(Literal::FromDoubles(parameter->shape(), values));
      } else {
        arguments[r].push_back(RandomLiteral(parameter->shape(), rng));
      }
    }
  }
  return arguments;
}

// Runs `hlo` on `replicas` replicas on both backends and expects the same
// bits on every replica (ulp_tolerance: for dots, whose rounding differs).
void ExpectReplicasMatch(const std::string& hlo, int replicas, uint64_t seed,
                         int ulp_tolerance = 0, bool ordinary = false) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(hlo));
  const std::vector<std::vector<Literal>> arguments =
      RandomArguments(*module, replicas, seed, ordinary);
  ASSERT_OK_AND_ASSIGN(expected, RunModuleReplicated(*module, arguments));
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  ASSERT_OK_AND_ASSIGN(actual, collectives::RunReplicated(*executable, arguments));
  ASSERT_EQ(actual.size(), expected.size());
  for (int r = 0; r < replicas; ++r) {
    EXPECT_EQ(Difference(expected[r], actual[r], ulp_tolerance), "") << "replica " << r;
  }
}

constexpr const char* kAddF32 = R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
)";

TEST(JitReplicas, EveryCollectiveEqualsTheEvaluator) {
  const std::string hlo = std::string("HloModule m\n") + kAddF32 + R"(
maxf {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(b, a)
}
ENTRY e {
  x = f32[4,6] parameter(0)
  id = u32[] replica-id()
  pid = u32[] partition-id()
  f = f32[] convert(id)
  bf = f32[4,6] broadcast(f), dimensions={}
  y = f32[4,6] add(x, bf)
  ar = f32[4,6] all-reduce(y), replica_groups={}, to_apply=add
  mx = f32[4,6] all-reduce(y), replica_groups={}, to_apply=maxf
  ag = f32[4,12] all-gather(y), dimensions={1}, replica_groups={{0,1}}
  rs = f32[4,3] reduce-scatter(y), dimensions={1}, replica_groups={{1,0}}, to_apply=add
  a2a = f32[4,6] all-to-all(y), dimensions={1}, replica_groups={{0,1}}
  cp = f32[4,6] collective-permute(y), source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[4,6], f32[4,6], f32[4,12], f32[4,3], f32[4,6], f32[4,6], u32[], u32[]) tuple(ar, mx, ag, rs, a2a, cp, id, pid)
})";
  ExpectReplicasMatch(hlo, 2, 1);
}

TEST(JitReplicas, GroupsChannelsAndFourReplicas) {
  const std::string hlo = std::string("HloModule m, replica_count=4\n") + kAddF32 + R"(
mul {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT m = s32[] multiply(a, b)
}
ENTRY e {
  x = f32[8] parameter(0)
  i = s32[8] parameter(1)
  ar = f32[8] all-reduce(x), channel_id=1, replica_groups={{0,2},{1,3}}, use_global_device_ids=true, to_apply=add
  pr = s32[8] all-reduce(i), replica_groups={{3,2,1,0}}, to_apply=mul
  ag = f32[16] all-gather(x), channel_id=2, dimensions={0}, replica_groups={{2,0},{3,1}}
  rs = f32[2] reduce-scatter(x), dimensions={0}, replica_groups={}, to_apply=add
  a2a = f32[8] all-to-all(x), dimensions={0}, replica_groups={{0,1,2,3}}
  cp = f32[8] collective-permute(x), source_target_pairs={{0,1},{1,2},{2,3}}
  cpc = f32[8] collective-permute(x), channel_id=3, source_target_pairs={{0,0}}
  ROOT t = (f32[8], s32[8], f32[16], f32[2], f32[8], f32[8], f32[8]) tuple(ar, pr, ag, rs, a2a, cp, cpc)
})";
  ExpectReplicasMatch(hlo, 4, 2);
}

TEST(JitReplicas, AnyReducerAndAnyTypeFoldInGroupOrder) {
  // A reducer that is not a plain binary op, on f32 (not associative:
  // the order shows), a variadic (tuple) all-reduce, and f16 and bf16
  // sums, which the evaluated path computes.
  const std::string hlo = R"(HloModule m
odd {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  t = f32[] constant(0.5)
  h = f32[] multiply(a, t)
  ROOT s = f32[] subtract(h, b)
}
addh {
  a = f16[] parameter(0)
  b = f16[] parameter(1)
  ROOT s = f16[] add(a, b)
}
addb {
  a = bf16[] parameter(0)
  b = bf16[] parameter(1)
  ROOT s = bf16[] add(a, b)
}
ENTRY e {
  x = f32[5] parameter(0)
  h = f16[5] parameter(1)
  b = bf16[5] parameter(2)
  o = f32[5] all-reduce(x), replica_groups={{2,0,3,1}}, to_apply=odd
  s = (f16[5], f16[5]) all-reduce(h, h), replica_groups={}, to_apply=addh
  sb = bf16[5] all-reduce(b), replica_groups={}, to_apply=addb
  ROOT t = (f32[5], (f16[5], f16[5]), bf16[5]) tuple(o, s, sb)
})";
  ExpectReplicasMatch(hlo, 4, 3);
}

TEST(JitReplicas, CollectivesInLoopsAndAsyncForms) {
  const std::string hlo = std::string("HloModule m\n") + kAddF32 + R"(
cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[4] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[4] all-reduce(v), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[4]) tuple(j, r)
}
scatter {
  p = f32[4] parameter(0)
  ROOT r = f32[2] reduce-scatter(p), dimensions={0}, replica_groups={}, to_apply=add
}
ENTRY e {
  x = f32[4] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[4]) tuple(zero, x)
  w = (s32[], f32[4]) while(init), condition=cond, body=body
  v = f32[4] get-tuple-element(w), index=1
  ars = f32[4] all-reduce-start(v), replica_groups={}, to_apply=add
  ard = f32[4] all-reduce-done(ars)
  ags = (f32[4], f32[8]) all-gather-start(ard), dimensions={0}, replica_groups={}
  agd = f32[8] all-gather-done(ags)
  rss = ((f32[4]), f32[2]) async-start(x), calls=scatter
  rsd = f32[2] async-done(rss), calls=scatter
  ROOT t = (f32[8], f32[2]) tuple(agd, rsd)
})";
  ExpectReplicasMatch(hlo, 2, 4);
}

// A data-parallel training step of a small MLP: each replica computes the
// gradients of its own batch, the gradients are summed with all-reduce, and
// every replica applies the same update. The weights must come out the
// same on every replica (bit for bit) and equal the evaluator's up to the
// dots' rounding.
TEST(JitReplicas, DataParallelMlpStep) {
  const std::string hlo = std::string("HloModule mlp_step\n") + kAddF32 + R"(
ENTRY step {
  x = f32[8,4] parameter(0)
  y = f32[8,2] parameter(1)
  w1 = f32[4,8] parameter(2)
  b1 = f32[8] parameter(3)
  w2 = f32[8,2] parameter(4)
  xw = f32[8,8] dot(x, w1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,8] broadcast(b1), dimensions={1}
  pre = f32[8,8] add(xw, bb)
  zero = f32[] constant(0)
  zeros = f32[8,8] broadcast(zero), dimensions={}
  h = f32[8,8] maximum(pre, zeros)
  out = f32[8,2] dot(h, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  diff = f32[8,2] subtract(out, y)
  scale = f32[] constant(0.125)
  scales = f32[8,2] broadcast(scale), dimensions={}
  dout = f32[8,2] multiply(diff, scales)
  sq = f32[8,2] multiply(diff, diff)
  loss = f32[] reduce(sq, zero), dimensions={0,1}, to_apply=add
  dw2 = f32[8,2] dot(h, dout), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  dh = f32[8,8] dot(dout, w2), lhs_contracting_dims={1}, rhs_contracting_dims={1}
  pos = pred[8,8] compare(pre, zeros), direction=GT
  dpre = f32[8,8] select(pos, dh, zeros)
  dw1 = f32[4,8] dot(x, dpre), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  db1 = f32[8] reduce(dpre, zero), dimensions={0}, to_apply=add
  gw1 = f32[4,8] all-reduce(dw1), replica_groups={}, to_apply=add
  gb1 = f32[8] all-reduce(db1), replica_groups={}, to_apply=add
  gw2 = f32[8,2] all-reduce(dw2), replica_groups={}, to_apply=add
  total = f32[] all-reduce(loss), replica_groups={}, to_apply=add
  lr = f32[] constant(0.05)
  lw1 = f32[4,8] broadcast(lr), dimensions={}
  lb1 = f32[8] broadcast(lr), dimensions={}
  lw2 = f32[8,2] broadcast(lr), dimensions={}
  uw1 = f32[4,8] multiply(gw1, lw1)
  ub1 = f32[8] multiply(gb1, lb1)
  uw2 = f32[8,2] multiply(gw2, lw2)
  nw1 = f32[4,8] subtract(w1, uw1)
  nb1 = f32[8] subtract(b1, ub1)
  nw2 = f32[8,2] subtract(w2, uw2)
  ROOT t = (f32[4,8], f32[8], f32[8,2], f32[]) tuple(nw1, nb1, nw2, total)
})";
  for (int replicas : {2, 4}) {
    ASSERT_OK_AND_ASSIGN(module, ParseVerified(hlo));
    std::vector<std::vector<Literal>> arguments =
        RandomArguments(*module, replicas, 5, /*ordinary=*/true);
    // The same initial weights everywhere, as data parallelism starts.
    for (int r = 1; r < replicas; ++r) {
      for (int k = 2; k < 5; ++k) arguments[r][k] = arguments[0][k];
    }
    ASSERT_OK_AND_ASSIGN(expected, RunModuleReplicated(*module, arguments));
    std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
    ASSERT_NE(executable, nullptr);
    ASSERT_OK_AND_ASSIGN(actual, collectives::RunReplicated(*executable, arguments));
    for (int r = 0; r < replicas; ++r) {
      EXPECT_EQ(Difference(actual[0], actual[r]), "") << "replica " << r << " of " << replicas;
      EXPECT_EQ(Difference(expected[r], actual[r], 64), "") << "replica " << r;
    }
  }
}

TEST(JitReplicas, FailuresEndEveryReplica) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(std::string("HloModule m\n") + kAddF32 + R"(
yes {
  p = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(p), replica_groups={}, to_apply=add
}
no {
  ROOT p = f32[2] parameter(0)
}
ENTRY e {
  x = f32[2] parameter(0)
  id = u32[] replica-id()
  zero = u32[] constant(0)
  first = pred[] compare(id, zero), direction=EQ
  ROOT c = f32[2] conditional(first, x, x), true_computation=yes, false_computation=no
})"));
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  // Only replica 0 reaches the all-reduce: a clear error, no hang.
  std::vector<std::vector<Literal>> arguments = RandomArguments(*module, 3, 6);
  absl::StatusOr<std::vector<Literal>> result = collectives::RunReplicated(*executable, arguments);
  EXPECT_EQ(result.status().code(), absl::StatusCode::kFailedPrecondition) << result.status();
  // A replica count the module refuses, and a collective without replicas.
  ASSERT_OK_AND_ASSIGN(declared, ParseVerified(std::string("HloModule m, replica_count=2\n") +
                                               kAddF32 + R"(
ENTRY e {
  x = f32[2] parameter(0)
  ROOT r = f32[2] all-reduce(x), replica_groups={}, to_apply=add
})"));
  std::unique_ptr<runtime::Executable> two = CompileAll(*declared);
  ASSERT_NE(two, nullptr);
  EXPECT_EQ(collectives::RunReplicated(*two, RandomArguments(*declared, 3, 7)).status().code(),
            absl::StatusCode::kInvalidArgument);
  std::vector<std::vector<Literal>> one = RandomArguments(*declared, 1, 8);
  EXPECT_EQ(two->Run(one[0]).status().code(), absl::StatusCode::kUnimplemented);
}

TEST(JitHostTransfers, InfeedOutfeedAndChannelsEqualTheEvaluator) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m
cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(2)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[3] get-tuple-element(s), index=1
  t0 = token[] after-all()
  in = (f32[3], token[]) infeed(t0)
  d = f32[3] get-tuple-element(in), index=0
  w = f32[3] add(v, d)
  t1 = token[] get-tuple-element(in), index=1
  o = token[] outfeed(w, t1)
  one = s32[] constant(1)
  j = s32[] add(i, one)
  ROOT r = (s32[], f32[3]) tuple(j, w)
}
ENTRY e {
  x = f32[3] parameter(0)
  zero = s32[] constant(0)
  init = (s32[], f32[3]) tuple(zero, x)
  loop = (s32[], f32[3]) while(init), condition=cond, body=body
  v = f32[3] get-tuple-element(loop), index=1
  t = token[] after-all()
  s = (f32[3], u32[], token[]) send(v, t), channel_id=7
  sd = token[] send-done(s), channel_id=7
  r = (f32[3], u32[], token[]) recv(t), channel_id=7
  rd = (f32[3], token[]) recv-done(r), channel_id=7
  ROOT g = f32[3] get-tuple-element(rd), index=0
})"));
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  const Literal x = Literal::FromDoubles(Shape::Array(ElementType::kF32, {3}), {1, 2, 3});
  auto fill = [](HostQueues& queues) {
    queues.PushInfeed(Literal::FromDoubles(Shape::Array(ElementType::kF32, {3}), {10, 20, 30}));
    queues.PushInfeed(Literal::FromDoubles(Shape::Array(ElementType::kF32, {3}), {0.5, 0, -1}));
  };
  HostQueues expected_queues, actual_queues;
  fill(expected_queues);
  fill(actual_queues);
  EvaluatorOptions options;
  options.queues = &expected_queues;
  ASSERT_OK_AND_ASSIGN(expected, EvaluateModule(*module, {&x, 1}, options));
  runtime::RunContext context;
  context.queues = &actual_queues;
  const Literal* argument = &x;
  ASSERT_OK_AND_ASSIGN(actual, executable->Run({&argument, 1}, context));
  EXPECT_EQ(Difference(expected, actual), "");
  EXPECT_EQ(Doubles(actual), (std::vector<double>{11.5, 22, 32}));
  ASSERT_EQ(actual_queues.outfeed_size(), 2);
  for (int k = 0; k < 2; ++k) {
    std::optional<Literal> want = expected_queues.PopOutfeed();
    std::optional<Literal> got = actual_queues.PopOutfeed();
    ASSERT_TRUE(want.has_value() && got.has_value());
    EXPECT_EQ(Difference(*want, *got), "");
  }
  // Without values in the queue the run fails clearly.
  absl::StatusOr<Literal> empty = executable->Run({&argument, 1}, context);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kFailedPrecondition) << empty.status();
}

TEST(JitCustomCalls, TypedTargetRunsAsALibraryCall) {
  int calls = 0;
  FfiRegistry::Global().Register("jit_replicas_test_scale", [&calls](const FfiCall& call) {
    ++calls;
    if (call.operands.size() != 1 || call.results.size() != 2 ||
        call.operands[0].type != ElementType::kF32) {
      return absl::InvalidArgumentError("wants one f32 operand and two results");
    }
    const FfiBuffer& in = call.operands[0];
    const int64_t n = in.byte_size / 4;
    for (int64_t i = 0; i < n; ++i) {
      float v;
      std::memcpy(&v, static_cast<const uint8_t*>(in.data) + 4 * i, 4);
      v *= 3;
      std::memcpy(static_cast<uint8_t*>(call.results[0].data) + 4 * i, &v, 4);
    }
    const int32_t count = static_cast<int32_t>(n);
    std::memcpy(call.results[1].data, &count, 4);
    return absl::OkStatus();
  });
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m
ENTRY e {
  x = f32[2,3] parameter(0)
  c = (f32[2,3], s32[]) custom-call(x), custom_call_target="jit_replicas_test_scale"
  v = f32[2,3] get-tuple-element(c), index=0
  ROOT n = f32[2,3] negate(v)
})"));
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  const Literal x =
      Literal::FromDoubles(Shape::Array(ElementType::kF32, {2, 3}), {1, 2, 3, 4, 5, 6});
  ASSERT_OK_AND_ASSIGN(expected, EvaluateModule(*module, {&x, 1}));
  ASSERT_OK_AND_ASSIGN(actual, executable->Run({&x, 1}));
  EXPECT_EQ(Difference(expected, actual), "");
  EXPECT_EQ(Doubles(actual), (std::vector<double>{-3, -6, -9, -12, -15, -18}));
  EXPECT_EQ(calls, 2);
  FfiRegistry::Global().Unregister("jit_replicas_test_scale");
}

}  // namespace
}  // namespace xjit::jit::testing
