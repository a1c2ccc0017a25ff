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
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/collectives.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "jit/compile.h"
#include "runtime/collectives/communicator.h"
#include "runtime/collectives/in_process.h"
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

// Runs `module` with each replica's `arguments` on both backends and expects
// the same bits on every replica (ulp_tolerance: for dots, whose rounding
// differs).
void ExpectReplicasMatchOn(const Module& module, const std::vector<std::vector<Literal>>& arguments,
                           int ulp_tolerance = 0) {
  const int replicas = static_cast<int>(arguments.size());
  ASSERT_OK_AND_ASSIGN(expected, RunModuleReplicated(module, arguments));
  std::unique_ptr<runtime::Executable> executable = CompileAll(module);
  ASSERT_NE(executable, nullptr);
  ASSERT_OK_AND_ASSIGN(actual, collectives::RunReplicated(*executable, arguments));
  ASSERT_EQ(actual.size(), expected.size());
  for (int r = 0; r < replicas; ++r) {
    EXPECT_EQ(Difference(expected[r], actual[r], ulp_tolerance), "") << "replica " << r;
  }
}

// The same with random arguments, different per replica.
void ExpectReplicasMatch(const std::string& hlo, int replicas, uint64_t seed, int ulp_tolerance = 0,
                         bool ordinary = false) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(hlo));
  ExpectReplicasMatchOn(*module, RandomArguments(*module, replicas, seed, ordinary), ulp_tolerance);
}

// Runs `module` on both backends and expects both to fail with `code`.
void ExpectBothFail(const Module& module, const std::vector<std::vector<Literal>>& arguments,
                    absl::StatusCode code) {
  absl::StatusOr<std::vector<Literal>> expected = RunModuleReplicated(module, arguments);
  EXPECT_EQ(expected.status().code(), code) << expected.status();
  std::unique_ptr<runtime::Executable> executable = CompileAll(module);
  ASSERT_NE(executable, nullptr);
  absl::StatusOr<std::vector<Literal>> actual = collectives::RunReplicated(*executable, arguments);
  EXPECT_EQ(actual.status().code(), code) << actual.status();
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
  // the order shows), a variadic (tuple) all-reduce, which the evaluated
  // path computes, and f16 and bf16 sums (the typed fold).
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

// The typed fold of 8- and 16-bit floats rounds after every member, as the
// evaluated reducer does (found by replicas_corpus: a bf16 all-reduce of 16
// devices took 33 s through the evaluated path). Random bits: NaN payloads,
// infinities, signed zeros, subnormals; 257 elements cross the fold's
// blocks.
TEST(JitReplicas, NarrowFloatReducersFoldAsTheEvaluator) {
  std::string hlo = "HloModule m\n";
  std::string entry = "ENTRY e {\n";
  std::string root = "  ROOT t = (";
  std::string tuple;
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"bf16", "add"}, {"bf16", "maximum"}, {"bf16", "minimum"}, {"f16", "multiply"},
      {"f16", "add"},  {"f8e4m3fn", "add"}, {"f8e5m2", "maximum"}};
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& [type, op] = cases[i];
    const std::string n = std::to_string(i);
    hlo += absl::StrCat("r", n, " {\n  a = ", type, "[] parameter(0)\n  b = ", type,
                        "[] parameter(1)\n  ROOT c = ", type, "[] ", op, "(a, b)\n}\n");
    entry += absl::StrCat("  p", n, " = ", type, "[257] parameter(", n, ")\n  s", n, " = ", type,
                          "[257] all-reduce(p", n, "), replica_groups={{3,1,0,2}}, to_apply=r", n,
                          "\n");
    root += absl::StrCat(i ? ", " : "", type, "[257]");
    tuple += absl::StrCat(i ? ", " : "", "s", n);
  }
  hlo += entry + root + ") tuple(" + tuple + ")\n}\n";
  ExpectReplicasMatch(hlo, 4, 11);
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
// Found by UBSan in the sanitizer stage (DataParallelMlpStep): a replica's
// share of a small all-reduce is an empty range whose output is a null
// pointer, which Fold passed to memmove. An empty range touches nothing.
TEST(FoldRange, AnEmptyRangeTouchesNothing) {
  const float a = 1, b = 2;
  const void* inputs[] = {&a, &b};
  using collectives::ReductionKind;
  for (auto [type, kind] : {std::pair(ElementType::kF32, ReductionKind::kSum),
                            std::pair(ElementType::kPred, ReductionKind::kOr)}) {
    collectives::FoldRange(type, kind, inputs, 2, 1, 1, nullptr);
    collectives::FoldRange(type, kind, inputs, 2, 0, 0, nullptr);
  }
}

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

// Replicas whose loops run an all-reduce a different number of times
// (replica r: r + 4 iterations): both backends report the deadlock at the
// same execution of the all-reduce, the 5th (the JIT's in-process
// all-reduce meets three times per execution, and named the meeting, not
// the execution: "execution 13", issue 30).
TEST(JitReplicas, DeadlocksNameTheExecutionOnBothBackends) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(std::string("HloModule m\n") + kAddF32 + R"(
cond {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  id = u32[] replica-id()
  n = s32[] convert(id)
  four = s32[] constant(4)
  limit = s32[] add(n, four)
  ROOT lt = pred[] compare(i, limit), direction=LT
}
body {
  s = (s32[], f32[2]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[2] get-tuple-element(s), index=1
  one = s32[] constant(1)
  j = s32[] add(i, one)
  r = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  ROOT t = (s32[], f32[2]) tuple(j, r)
}
ENTRY e {
  x = f32[2] parameter(0)
  zero = s32[] constant(0)
  s = (s32[], f32[2]) tuple(zero, x)
  w = (s32[], f32[2]) while(s), condition=cond, body=body
  ROOT y = f32[2] get-tuple-element(w), index=1
})"));
  const std::vector<std::vector<Literal>> arguments = RandomArguments(*module, 2, 9);
  absl::StatusOr<std::vector<Literal>> interpreted = RunModuleReplicated(*module, arguments);
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  absl::StatusOr<std::vector<Literal>> compiled = collectives::RunReplicated(*executable, arguments);
  for (const absl::Status& status : {interpreted.status(), compiled.status()}) {
    EXPECT_EQ(status.code(), absl::StatusCode::kFailedPrecondition) << status;
    EXPECT_NE(status.message().find("(execution 5)"), absl::string_view::npos) << status;
  }
}

// send/recv between replicas: a recv issued before its send (control
// predecessor), different channels on the two ends (matched by replica
// pair, as NCCL does), send-done/recv-done and tokens, a replica without a
// source (zeros), layouts that differ between the ends.
TEST(JitSendRecv, BetweenReplicasEqualTheEvaluator) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m
ENTRY e {
  x = f32[2,3]{0,1} parameter(0)
  id = u32[] replica-id()
  f = f32[] convert(id)
  bf = f32[2,3]{0,1} broadcast(f), dimensions={}
  y = f32[2,3]{0,1} add(x, bf)
  tok = token[] after-all()
  recv = (f32[2,3]{1,0}, u32[], token[]) recv(tok), channel_id=2,
    frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  send = (f32[2,3]{0,1}, u32[], token[]) send(y, tok), channel_id=1,
    control-predecessors={recv},
    frontend_attributes={_xla_send_recv_source_target_pairs="{{0,1},{1,2},{2,3}}"}
  recv-done = (f32[2,3]{1,0}, token[]) recv-done(recv), channel_id=2
  send-done = token[] send-done(send), channel_id=1
  data = f32[2,3]{1,0} get-tuple-element(recv-done), index=0
  ROOT t = (f32[2,3]{1,0}, u32[]) tuple(data, id)
})"));
  std::vector<std::vector<Literal>> arguments = RandomArguments(*module, 4, 21);
  ExpectReplicasMatchOn(*module, arguments);
  // The values themselves: replica r gets replica r-1's x + (r-1); replica 0 zeros.
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  ASSERT_OK_AND_ASSIGN(results, collectives::RunReplicated(*executable, arguments));
  for (int r = 0; r < 4; ++r) {
    const std::vector<double> got = Doubles(results[r].element(0));
    const std::vector<double> x = Doubles(arguments[r == 0 ? 0 : r - 1][0]);
    for (size_t i = 0; i < got.size(); ++i) {
      const double want = r == 0 ? 0.0 : static_cast<float>(x[i] + (r - 1));
      EXPECT_EQ(got[i], want) << "replica " << r << " element " << i;
    }
  }
}

// A pipeline: a while loop passes its value one replica on per iteration
// (XLA's pipeline-parallel pattern), and send/recv wrapped in async-start
// with token operands.
TEST(JitSendRecv, InLoopsAndAsyncWrappers) {
  ExpectReplicasMatch(R"(HloModule m
cond {
  p = (u32[], f32[2,2]) parameter(0)
  i = u32[] get-tuple-element(p), index=0
  n = u32[] constant(3)
  ROOT c = pred[] compare(i, n), direction=LT
}
body {
  p = (u32[], f32[2,2]) parameter(0)
  i = u32[] get-tuple-element(p), index=0
  v = f32[2,2] get-tuple-element(p), index=1
  tok = token[] after-all()
  w = f32[2,2] multiply(v, v)
  s = (f32[2,2], u32[], token[]) send(w, tok), channel_id=1,
    frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3},{3,0}}}
  r = (f32[2,2], u32[], token[]) recv(tok), channel_id=1,
    frontend_attributes={_xla_send_recv_source_target_pairs={{0,1},{1,2},{2,3},{3,0}}}
  sd = token[] send-done(s), channel_id=1
  rd = (f32[2,2], token[]) recv-done(r), channel_id=1
  got = f32[2,2] get-tuple-element(rd), index=0
  one = u32[] constant(1)
  j = u32[] add(i, one)
  ROOT t = (u32[], f32[2,2]) tuple(j, got)
}
wrapped {
  a = s32[3] parameter(0)
  ta = token[] parameter(1)
  tb = token[] parameter(2)
  s = (s32[3], u32[], token[]) send(a, ta), channel_id=0,
    frontend_attributes={_xla_send_recv_source_target_pairs={{1,0},{3,2}}}
  r = (s32[3], u32[], token[]) recv(tb), channel_id=0,
    frontend_attributes={_xla_send_recv_source_target_pairs={{1,0},{3,2}}}
  ROOT t = ((s32[3], u32[], token[]), (s32[3], u32[], token[])) tuple(s, r)
}
ENTRY e {
  x = f32[2,2] parameter(0)
  a = s32[3] parameter(1)
  zero = u32[] constant(0)
  init = (u32[], f32[2,2]) tuple(zero, x)
  loop = (u32[], f32[2,2]) while(init), condition=cond, body=body
  v = f32[2,2] get-tuple-element(loop), index=1
  tok = token[] after-all()
  start = ((s32[3], token[], token[]), ((s32[3], u32[], token[]), (s32[3], u32[], token[])), s32[])
    async-start(a, tok, tok), calls=wrapped
  done = ((s32[3], u32[], token[]), (s32[3], u32[], token[])) async-done(start)
  rt = (s32[3], u32[], token[]) get-tuple-element(done), index=1
  got = s32[3] get-tuple-element(rt), index=0
  ROOT t = (f32[2,2], s32[3]) tuple(v, got)
})",
                      4, 22);
}

TEST(JitSendRecv, BadPairsAndMissingSendsFailOnBothBackends) {
  // A pair that names replica 5 of 4.
  ASSERT_OK_AND_ASSIGN(outside, ParseVerified(R"(HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  tok = token[] after-all()
  s = (f32[2], u32[], token[]) send(x, tok), channel_id=1,
    frontend_attributes={_xla_send_recv_source_target_pairs={{0,5}}}
  ROOT d = token[] send-done(s), channel_id=1
})"));
  ExpectBothFail(*outside, RandomArguments(*outside, 4, 23), absl::StatusCode::kInvalidArgument);
  // A recv whose source never sends: a deadlock error, not a hang.
  ASSERT_OK_AND_ASSIGN(missing, ParseVerified(R"(HloModule m
ENTRY e {
  tok = token[] after-all()
  r = (f32[2], u32[], token[]) recv(tok), channel_id=1,
    frontend_attributes={_xla_send_recv_source_target_pairs={{0,1}}}
  d = (f32[2], token[]) recv-done(r), channel_id=1
  ROOT v = f32[2] get-tuple-element(d), index=0
})"));
  ExpectBothFail(*missing, std::vector<std::vector<Literal>>(2),
                 absl::StatusCode::kFailedPrecondition);
}

// collective-permute's combined form: two operands of different types
// permuted together.
TEST(JitReplicas, CombinedCollectivePermute) {
  ExpectReplicasMatch(R"(HloModule m
ENTRY e {
  a = u32[2] parameter(0)
  b = f32[3,2]{0,1} parameter(1)
  ROOT p = (u32[2], f32[3,2]{1,0}) collective-permute(a, b), source_target_pairs={{1,0},{0,2},{2,1}}
})",
                      4, 24);
  // Outside a replicated run, a replica permuting to itself.
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(R"(HloModule m
ENTRY e {
  a = u32[2] parameter(0)
  b = f32[3] parameter(1)
  ROOT p = (u32[2], f32[3]) collective-permute(a, b), source_target_pairs={{0,0}}
})"));
  std::vector<std::vector<Literal>> arguments = RandomArguments(*module, 1, 25);
  ASSERT_OK_AND_ASSIGN(expected, EvaluateModule(*module, arguments[0]));
  std::unique_ptr<runtime::Executable> executable = CompileAll(*module);
  ASSERT_NE(executable, nullptr);
  ASSERT_OK_AND_ASSIGN(actual, executable->Run(arguments[0]));
  EXPECT_EQ(Difference(expected, actual), "");
  EXPECT_EQ(Difference(arguments[0][1], expected.element(1)), "");
}

// Arguments of a ragged-all-to-all whose offsets agree between replicas:
// in `groups` (each of `group_size` replicas, positions in group order),
// member q sends (q + p + u) % 3 rows (update u of k) to member p, packed in
// its input in (p, u) order and placed in p's output in (q, u) order after
// `gap` rows.
std::vector<std::vector<Literal>> RaggedArguments(const Module& module,
                                                  const std::vector<std::vector<int>>& groups,
                                                  int k, int gap, uint64_t seed) {
  const Instruction* root = module.entry()->root();
  const Shape& input_shape = root->operand(0)->shape();
  const Shape& output_shape = root->operand(1)->shape();
  const Shape& index_shape = root->operand(2)->shape();
  int replicas = 0;
  for (const auto& group : groups) replicas += static_cast<int>(group.size());
  std::mt19937_64 rng(seed);
  std::vector<std::vector<Literal>> arguments(replicas);
  for (const auto& group : groups) {
    const int n = static_cast<int>(group.size());
    auto size = [&](int q, int p, int u) { return (q + p + u) % 3; };
    for (int q = 0; q < n; ++q) {
      std::vector<int64_t> in_offsets, sizes, out_offsets, recv_sizes;
      int64_t in_at = 0;
      for (int p = 0; p < n; ++p) {
        for (int u = 0; u < k; ++u) {
          in_offsets.push_back(in_at);
          sizes.push_back(size(q, p, u));
          in_at += size(q, p, u);
          int64_t out_at = gap;  // Where q's update u lands in p's output.
          for (int q2 = 0; q2 < q; ++q2) {
            for (int u2 = 0; u2 < k; ++u2) out_at += size(q2, p, u2);
          }
          for (int u2 = 0; u2 < u; ++u2) out_at += size(q, p, u2);
          out_offsets.push_back(out_at);
          recv_sizes.push_back(size(p, q, u));
        }
      }
      std::vector<Literal>& mine = arguments[group[q]];
      mine.push_back(RandomLiteral(input_shape, rng));
      mine.push_back(RandomLiteral(output_shape, rng));
      for (const auto* values : {&in_offsets, &sizes, &out_offsets, &recv_sizes}) {
        mine.push_back(Literal::FromInts(index_shape, *values));
      }
    }
  }
  return arguments;
}

std::string RaggedModule(const std::string& type, const std::string& input,
                         const std::string& output, const std::string& index,
                         const std::string& groups) {
  return "HloModule m\nENTRY e {\n  input = " + type + input + " parameter(0)\n  output = " + type +
         output + " parameter(1)\n  io = " + index + " parameter(2)\n  ss = " + index +
         " parameter(3)\n  oo = " + index + " parameter(4)\n  rs = " + index +
         " parameter(5)\n  ROOT r = " + type + output +
         " ragged-all-to-all(input, output, io, ss, oo, rs), replica_groups=" + groups + "\n}\n";
}

// ragged-all-to-all: every element type, s32/s64/u32 offsets, several
// updates per peer, groups in and out of id order, rank 3 with layouts.
TEST(JitRaggedAllToAll, EveryTypeAndFormEqualsTheEvaluator) {
  struct Case {
    std::string type, input, output, index, groups;
    std::vector<std::vector<int>> members;
    int k, gap;
  };
  const std::vector<Case> cases = {
      {"f32", "[12]", "[14]", "s32[2]", "{{0,1}}", {{0, 1}}, 1, 2},
      {"bf16", "[16,5,3]", "[16,5,3]", "s64[2]", "{{1,0}}", {{1, 0}}, 1, 1},
      {"f32", "[16,4,2]{0,2,1}", "[16,4,2]{0,1,2}", "s32[4]", "{{0,1}}", {{0, 1}}, 2, 0},
      {"s8", "[20,3]", "[24,3]", "s32[8]", "{{0,1},{2,3}}", {{0, 1}, {2, 3}}, 4, 1},
      {"u64", "[12,2]", "[12,2]", "u32[4]", "{{0,1,2,3}}", {{0, 1, 2, 3}}, 1, 0},
      {"pred", "[12]", "[13]", "s64[4]", "{{3,1,2,0}}", {{3, 1, 2, 0}}, 1, 1},
      {"c64", "[10,2]", "[10,2]", "s32[4]", "{{0,2},{1,3}}", {{0, 2}, {1, 3}}, 2, 0},
      {"f64", "[6]", "[6]", "s32[1]", "{{0},{1},{2},{3}}", {{0}, {1}, {2}, {3}}, 1, 3},
      {"s16", "[6]", "[6]", "s32[2]", "{{0,1}}", {{0, 1}}, 1, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type + c.input + " " + c.groups);
    ASSERT_OK_AND_ASSIGN(module,
                         ParseVerified(RaggedModule(c.type, c.input, c.output, c.index, c.groups)));
    ExpectReplicasMatchOn(*module, RaggedArguments(*module, c.members, c.k, c.gap, 25));
  }
  // recv_sizes that disagree with the sender, and rows out of range.
  ASSERT_OK_AND_ASSIGN(module,
                       ParseVerified(RaggedModule("f32", "[4]", "[4]", "s32[2]", "{{0,1}}")));
  std::vector<std::vector<Literal>> arguments = RaggedArguments(*module, {{0, 1}}, 1, 0, 26);
  arguments[1][5] = Literal::FromInts(module->entry()->parameter(5)->shape(), {2, 2});
  ExpectBothFail(*module, arguments, absl::StatusCode::kInvalidArgument);
  arguments = RaggedArguments(*module, {{0, 1}}, 1, 3, 27);
  ExpectBothFail(*module, arguments, absl::StatusCode::kInvalidArgument);
}

// The in-process AllReduce (each member folds a share in place) against
// FoldInGroupOrder over the gathered arrays: counts that do not divide among
// the members, an output that is its member's input, every kind on s32 and
// max/min with NaN and signed zeros on f32.
TEST(InProcessAllReduce, SharesEqualTheGroupOrderFold) {
  ASSERT_OK_AND_ASSIGN(module, ParseVerified(std::string("HloModule m\n") + kAddF32 + R"(
ENTRY e {
  x = f32[4] parameter(0)
  ROOT r = f32[4] all-reduce(x), replica_groups={}, to_apply=add
})"));
  const Instruction& site = *module->entry()->root();
  using collectives::ReductionKind;
  struct Case {
    ElementType type;
    ReductionKind kind;
  };
  const std::vector<Case> cases = {
      {ElementType::kS32, ReductionKind::kSum}, {ElementType::kS32, ReductionKind::kProduct},
      {ElementType::kS32, ReductionKind::kMax}, {ElementType::kS32, ReductionKind::kMin},
      {ElementType::kS32, ReductionKind::kAnd}, {ElementType::kS32, ReductionKind::kOr},
      {ElementType::kF32, ReductionKind::kMax}, {ElementType::kF32, ReductionKind::kMin},
      {ElementType::kF32, ReductionKind::kSum}, {ElementType::kPred, ReductionKind::kAnd}};
  const std::vector<int64_t> group = {2, 0, 1};
  const int64_t members = 3;
  for (const Case& c : cases) {
    for (int64_t count : {1, 7, 3000}) {
      const int64_t width = ByteWidth(c.type);
      std::mt19937_64 rng(count);
      std::vector<std::vector<uint8_t>> in(members, std::vector<uint8_t>(count * width));
      for (auto& bytes : in) {
        for (int64_t i = 0; i < count; ++i) {
          if (c.type == ElementType::kF32) {
            const float pool[] = {0.0f, -0.0f, 1.5f, -2.0f, NAN, -NAN};
            std::memcpy(bytes.data() + i * 4, &pool[rng() % 6], 4);
          } else if (c.type == ElementType::kPred) {
            bytes[i] = rng() % 2;
          } else {
            const int32_t v = static_cast<int32_t>(rng() % 11) - 5;
            std::memcpy(bytes.data() + i * 4, &v, 4);
          }
        }
      }
      // Group order: replica 2, 0, 1.
      std::vector<uint8_t> gathered;
      for (int64_t r : group) gathered.insert(gathered.end(), in[r].begin(), in[r].end());
      std::vector<uint8_t> expected(count * width);
      collectives::FoldInGroupOrder(c.type, c.kind, gathered.data(), members, count,
                                    expected.data());
      eval::Rendezvous rendezvous(members);
      std::vector<std::vector<uint8_t>> out(members, std::vector<uint8_t>(count * width));
      std::vector<absl::Status> statuses(members);
      std::vector<std::thread> threads;
      for (int64_t r = 0; r < members; ++r) {
        threads.emplace_back([&, r] {
          collectives::InProcessCommunicator communicator(&rendezvous, r);
          // Replica 1 reduces in place.
          void* target = r == 1 ? static_cast<void*>(in[r].data()) : out[r].data();
          statuses[r] =
              communicator.AllReduce(site, group, c.type, c.kind, in[r].data(), target, count);
          if (r == 1) out[r] = in[r];
        });
      }
      for (std::thread& t : threads) t.join();
      for (int64_t r = 0; r < members; ++r) {
        EXPECT_TRUE(statuses[r].ok()) << statuses[r];
        EXPECT_EQ(out[r], expected)
            << "replica " << r << " count " << count << " kind " << static_cast<int>(c.kind);
      }
    }
  }
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
