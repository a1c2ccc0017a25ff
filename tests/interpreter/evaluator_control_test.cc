// The evaluator's driver: argument checking and relayout, control flow
// (while, conditional, call, map, fusion), tuples, custom calls, host
// transfers, single-replica collectives and Unimplemented reporting.
#include <cstdint>
#include <cstring>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "runtime/host/custom_call_registry.h"
#include "interpreter/evaluator.h"
#include "runtime/host/host_queues.h"
#include "ir/hlo_text/parser.h"
#include "tests/interpreter/evaluator_test_util.h"

namespace xjit::testing {
namespace {

#define ASSERT_OK_AND_ASSIGN(lhs, expr)            \
  auto lhs##_or = (expr);                          \
  ASSERT_TRUE(lhs##_or.ok()) << lhs##_or.status(); \
  auto lhs = std::move(*lhs##_or)

using V = std::vector<int64_t>;

TEST(EvaluatorDriver, ChecksArgumentCountAndShapes) {
  const char* hlo = "HloModule m\nENTRY e {\n  ROOT p = s32[2] parameter(0)\n}\n";
  auto none = RunHlo(hlo, {});
  EXPECT_EQ(none.status().code(), absl::StatusCode::kInvalidArgument);
  auto wrong = RunHlo(hlo, {Ints("s32[3]", {1, 2, 3})});
  EXPECT_EQ(wrong.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(wrong.status().message().find("s32[3]"), absl::string_view::npos) << wrong.status();
  auto type = RunHlo(hlo, {Doubles("f32[2]", {1, 2})});
  EXPECT_EQ(type.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(EvaluatorDriver, RelayoutsArgumentsToTheParameterLayout) {
  const char* hlo = "HloModule m\nENTRY e {\n  ROOT p = s32[2,2]{0,1} parameter(0)\n}\n";
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Ints("s32[2,2]{1,0}", {1, 2, 3, 4})}));
  EXPECT_EQ(Ints(r), (V{1, 2, 3, 4}));
  EXPECT_EQ(r.shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));
}

TEST(EvaluatorDriver, TuplesAndGetTupleElement) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
ENTRY e {
  a = s32[] constant(1)
  b = f32[2] constant({2, 3})
  t = (s32[], f32[2]) tuple(a, b)
  u = ((s32[], f32[2]), s32[]) tuple(t, a)
  g = (s32[], f32[2]) get-tuple-element(u), index=0
  ROOT h = f32[2] get-tuple-element(g), index=1
})"));
  EXPECT_EQ(Doubles(r), (std::vector<double>{2, 3}));
}

TEST(EvaluatorDriver, WhileLoop) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
cond {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] constant(5)
  ROOT lt = pred[] compare(i, n), direction=LT
}
body {
  s = (s32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  acc = s32[] get-tuple-element(s), index=1
  one = s32[] constant(1)
  i2 = s32[] add(i, one)
  acc2 = s32[] add(acc, i)
  ROOT t = (s32[], s32[]) tuple(i2, acc2)
}
ENTRY e {
  zero = s32[] constant(0)
  init = (s32[], s32[]) tuple(zero, zero)
  w = (s32[], s32[]) while(init), condition=cond, body=body
  ROOT acc = s32[] get-tuple-element(w), index=1
})"));
  EXPECT_EQ(Ints(r), (V{10}));
}

TEST(EvaluatorDriver, WhileIterationLimit) {
  const char* hlo = R"(
HloModule m
cond {
  s = s32[] parameter(0)
  ROOT t = pred[] constant(true)
}
body {
  ROOT s = s32[] parameter(0)
}
ENTRY e {
  z = s32[] constant(0)
  ROOT w = s32[] while(z), condition=cond, body=body
})";
  EvaluatorOptions options;
  options.max_while_iterations = 100;
  auto r = RunHlo(hlo, {}, options);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kResourceExhausted);
}

const char* kConditionalIndex = R"(
HloModule m
b0 {
  x = s32[] parameter(0)
  ROOT r = s32[] add(x, x)
}
b1 {
  x = s32[] parameter(0)
  ROOT r = s32[] multiply(x, x)
}
b2 {
  x = s32[] parameter(0)
  ROOT r = s32[] negate(x)
}
ENTRY e {
  i = s32[] parameter(0)
  x = s32[] parameter(1)
  ROOT c = s32[] conditional(i, x, x, x), branch_computations={b0, b1, b2}
})";

TEST(EvaluatorDriver, ConditionalBranchIndex) {
  auto run = [](int64_t index) {
    auto r = RunHlo(kConditionalIndex, {Ints("s32[]", {index}), Ints("s32[]", {5})});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? Ints(*r)[0] : -999;
  };
  EXPECT_EQ(run(0), 10);
  EXPECT_EQ(run(1), 25);
  EXPECT_EQ(run(2), -5);
  EXPECT_EQ(run(7), -5);   // out of range: the last branch
  EXPECT_EQ(run(-1), -5);
}

TEST(EvaluatorDriver, ConditionalPredicate) {
  const char* hlo = R"(
HloModule m
t {
  x = f32[] parameter(0)
  ROOT r = f32[] add(x, x)
}
f {
  y = s32[] parameter(0)
  ROOT r = f32[] convert(y)
}
ENTRY e {
  p = pred[] parameter(0)
  a = f32[] constant(1.5)
  b = s32[] constant(7)
  ROOT c = f32[] conditional(p, a, b), true_computation=t, false_computation=f
})";
  ASSERT_OK_AND_ASSIGN(yes, RunHlo(hlo, {Ints("pred[]", {1})}));
  EXPECT_EQ(Doubles(yes), (std::vector<double>{3}));
  ASSERT_OK_AND_ASSIGN(no, RunHlo(hlo, {Ints("pred[]", {0})}));
  EXPECT_EQ(Doubles(no), (std::vector<double>{7}));
}

TEST(EvaluatorDriver, CallMapAndFusion) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
sq {
  x = s32[] parameter(0)
  y = s32[] parameter(1)
  ROOT r = s32[] multiply(x, y)
}
fused {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT s = s32[3] subtract(a, b)
}
dotlike {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  ROOT g = s32[] get-dimension-size(a), dimensions={0}
}
ENTRY e {
  p = s32[3] parameter(0)
  m = s32[3] map(p, p), dimensions={0}, to_apply=sq
  c = s32[] call(p, p), to_apply=dotlike
  f = s32[3] fusion(m, p), kind=kLoop, calls=fused
  ROOT t = (s32[3], s32[]) tuple(f, c)
})", {Ints("s32[3]", {1, 2, 3})}));
  EXPECT_EQ(Ints(r.element(0)), (V{0, 2, 6}));
  EXPECT_EQ(Ints(r.element(1)), (V{3}));
}

extern "C" void XjitTestAddVectors(void* out, void** in) {
  const float* x = static_cast<const float*>(in[0]);
  const float* y = static_cast<const float*>(in[1]);
  float* z = static_cast<float*>(out);
  for (int i = 0; i < 3; ++i) z[i] = x[i] + 10 * y[i];
}

extern "C" void XjitTestSplit(void* out, void** in) {
  const int32_t* x = static_cast<const int32_t*>(in[0]);
  void** outs = static_cast<void**>(out);
  static_cast<int32_t*>(outs[0])[0] = x[0] + x[1];
  static_cast<float*>(outs[1])[0] = 0.5f;
}

XJIT_REGISTER_CUSTOM_CALL("xjit_test_add_vectors", XjitTestAddVectors);

TEST(EvaluatorDriver, CustomCall) {
  ASSERT_OK_AND_ASSIGN(
      r, RunOne({"f32[3]", "f32[3]"}, "f32[3] custom-call(p0, p1), custom_call_target=\"xjit_test_add_vectors\"",
                {Doubles("f32[3]", {1, 2, 3}), Doubles("f32[3]", {4, 5, 6})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{41, 52, 63}));
}

TEST(EvaluatorDriver, CustomCallTupleResultAndPrivateRegistry) {
  CustomCallRegistry registry;
  registry.Register("split", XjitTestSplit);
  ASSERT_OK_AND_ASSIGN(module, ParseHloModule(R"(
HloModule m
ENTRY e {
  p = s32[2] parameter(0)
  ROOT c = (s32[], f32[]) custom-call(p), custom_call_target="split"
})"));
  EvaluatorOptions options;
  options.custom_calls = &registry;
  ASSERT_OK_AND_ASSIGN(r, EvaluateModule(*module, {Ints("s32[2]", {3, 4})}, options));
  EXPECT_EQ(Ints(r.element(0)), (V{7}));
  EXPECT_EQ(Doubles(r.element(1)), (std::vector<double>{0.5}));
}

// jaxlib's LAPACK calls read their operands with the strides of the operand
// instruction's layout. Here the operand is a parameter of a called
// computation declared row-major ({1,0}) while the call passes a transpose's
// column-major ({0,1}) value, as JAX writes a triangular solve of x.T (NumPyro's
// MultivariateNormal.log_prob): the evaluator relays it out first. L is lower
// triangular (the 100 above the diagonal is ignored, uplo = L), X = L^-1 B.
TEST(EvaluatorDriver, JaxlibLapackOperandInAnotherLayoutThanItsParameter) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
solve {
  a = f32[2,2]{1,0} parameter(0)
  b = f32[2,3]{1,0} parameter(1)
  ROOT x = f32[2,3]{0,1} custom-call(a, b), custom_call_target="lapack_strsm_ffi", operand_layout_constraints={f32[2,2]{0,1}, f32[2,3]{0,1}}, output_to_operand_aliasing={{}: (1, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={diag = 78 : ui8, side = 76 : ui8, trans_x = 78 : ui8, uplo = 76 : ui8}
}
ENTRY e {
  l = f32[2,2]{1,0} parameter(0)
  bt = f32[3,2]{1,0} parameter(1)
  b = f32[2,3]{0,1} transpose(bt), dimensions={1,0}
  ROOT c = f32[2,3]{0,1} call(l, b), to_apply=solve
})",
                                 {Doubles("f32[2,2]", {2, 100, 1, 4}),
                                  Doubles("f32[3,2]", {2, 5, 4, 6, 6, 7})}));
  EXPECT_EQ(Doubles(r), (std::vector<double>{1, 2, 3, 1, 1, 1}));
}

// An SVD of a matrix holding an Inf would never return from OpenBLAS
// 0.3.21's LAPACK (nor from jaxlib's): the call answers info = -4 at once,
// as LAPACK 3.10 answers a NaN, and a finite matrix still gets its SVD.
TEST(EvaluatorDriver, JaxlibSvdOfANonFiniteMatrixReturnsAnError) {
  const std::string hlo = R"(
HloModule m
ENTRY e {
  a = f32[3,2]{0,1} parameter(0)
  s = (f32[3,2]{0,1}, f32[2], f32[3,2]{0,1}, f32[2,2]{0,1}, s32[]) custom-call(a), custom_call_target="lapack_sgesdd_ffi", operand_layout_constraints={f32[3,2]{0,1}}, output_to_operand_aliasing={{0}: (0, {})}, api_version=API_VERSION_TYPED_FFI, backend_config={mode = 83 : ui8}
  v = f32[2] get-tuple-element(s), index=1
  i = s32[] get-tuple-element(s), index=4
  ROOT t = (f32[2], s32[]) tuple(v, i)
})";
  for (const double bad : {std::numeric_limits<double>::infinity(),
                           std::numeric_limits<double>::quiet_NaN()}) {
    ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Doubles("f32[3,2]", {1, 0, 0, bad, 0, 0})}));
    EXPECT_EQ(Ints(r.element(1)), (V{-4}));
  }
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Doubles("f32[3,2]", {3, 0, 0, 0, 0, 4})}));
  EXPECT_EQ(Ints(r.element(1)), (V{0}));
  EXPECT_EQ(Doubles(r.element(0)), (std::vector<double>{4, 3}));
}

TEST(EvaluatorDriver, UnknownCustomCallIsNotFound) {
  auto r = RunOne({"f32[3]"}, "f32[3] custom-call(p0), custom_call_target=\"no_such_target\"",
                  {Doubles("f32[3]", {1, 2, 3})});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(r.status().message().find("no_such_target"), absl::string_view::npos);
}

TEST(EvaluatorDriver, InfeedAndOutfeed) {
  ASSERT_OK_AND_ASSIGN(module, ParseHloModule(R"(
HloModule m
ENTRY e {
  tok = token[] after-all()
  in = (s32[2], token[]) infeed(tok)
  x = s32[2] get-tuple-element(in), index=0
  t2 = token[] get-tuple-element(in), index=1
  in2 = (s32[2], token[]) infeed(t2)
  y = s32[2] get-tuple-element(in2), index=0
  s = s32[2] add(x, y)
  out = token[] outfeed(s, tok)
  ROOT r = s32[2] multiply(x, y)
})"));
  HostQueues queues;
  queues.PushInfeed(Ints("s32[2]", {1, 2}));
  queues.PushInfeed(Ints("s32[2]", {10, 20}));
  EvaluatorOptions options;
  options.queues = &queues;
  ASSERT_OK_AND_ASSIGN(r, EvaluateModule(*module, {}, options));
  EXPECT_EQ(Ints(r), (V{10, 40}));
  EXPECT_EQ(queues.infeed_size(), 0);
  std::optional<Literal> out = queues.PopOutfeed();
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ(Ints(*out), (V{11, 22}));
  // Empty queue: an error, not a hang or a crash.
  auto again = EvaluateModule(*module, {}, options);
  EXPECT_EQ(again.status().code(), absl::StatusCode::kFailedPrecondition);
}

TEST(EvaluatorDriver, SendAndRecvThroughChannels) {
  ASSERT_OK_AND_ASSIGN(module, ParseHloModule(R"(
HloModule m
ENTRY e {
  x = f32[2] parameter(0)
  tok = token[] after-all()
  snd = (f32[2], u32[], token[]) send(x, tok), channel_id=1
  sd = token[] send-done(snd), channel_id=1
  rcv = (f32[2], u32[], token[]) recv(tok), channel_id=2
  rd = (f32[2], token[]) recv-done(rcv), channel_id=2
  ROOT y = f32[2] get-tuple-element(rd), index=0
})"));
  HostQueues queues;
  queues.PushChannel(2, Doubles("f32[2]", {7, 8}));
  EvaluatorOptions options;
  options.queues = &queues;
  ASSERT_OK_AND_ASSIGN(r, EvaluateModule(*module, {Doubles("f32[2]", {1, 2})}, options));
  EXPECT_EQ(Doubles(r), (std::vector<double>{7, 8}));
  std::optional<Literal> sent = queues.PopChannel(1);
  ASSERT_TRUE(sent.has_value());
  EXPECT_EQ(Doubles(*sent), (std::vector<double>{1, 2}));
}

TEST(EvaluatorDriver, SingleReplicaCollectives) {
  const char* hlo = R"(
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2] parameter(0)
  r = f32[2] all-reduce(x), replica_groups={}, to_apply=add
  g = f32[2] all-gather(r), dimensions={0}, replica_groups={{0}}
  p = f32[2] collective-permute(g), source_target_pairs={{0,0}}
  q = f32[2] collective-permute(g), source_target_pairs={}
  id = u32[] replica-id()
  ROOT t = (f32[2], f32[2], u32[]) tuple(p, q, id)
})";
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {Doubles("f32[2]", {1, 2})}));
  EXPECT_EQ(Doubles(r.element(0)), (std::vector<double>{1, 2}));
  EXPECT_EQ(Doubles(r.element(1)), (std::vector<double>{0, 0}));  // No source: zeros.
  EXPECT_EQ(Ints(r.element(2)), (V{0}));
  // A pair naming a replica the run does not have is an error, as on the JIT
  // (it returned zeros before, issue 30).
  const std::string missing =
      absl::StrReplaceAll(hlo, {{"source_target_pairs={}", "source_target_pairs={{0,1}}"}});
  auto to_missing = RunHlo(missing, {Doubles("f32[2]", {1, 2})});
  EXPECT_EQ(to_missing.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(to_missing.status().message().find("names replica 1 but there is 1 replica"),
            absl::string_view::npos)
      << to_missing.status();
  EvaluatorOptions two;
  two.replica_count = 2;
  auto multi = RunHlo(hlo, {Doubles("f32[2]", {1, 2})}, two);
  EXPECT_EQ(multi.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(multi.status().message().find("more than one replica"), absl::string_view::npos);
}

TEST(EvaluatorDriver, OptimizationBarrierAndAddDependency) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m
ENTRY e {
  x = s32[2] parameter(0)
  tok = token[] after-all()
  d = s32[2] add-dependency(x, tok)
  t = (s32[2], token[]) tuple(d, tok)
  b = (s32[2], token[]) opt-barrier(t)
  ROOT g = s32[2] get-tuple-element(b), index=0
})", {Ints("s32[2]", {4, 5})}));
  EXPECT_EQ(Ints(r), (V{4, 5}));
}

TEST(EvaluatorDriver, UnsupportedOpcodeIsUnimplementedAndDeadCodeIsSkipped) {
  Instruction shuffle(Opcode::kShuffle, Shape::Array(ElementType::kF32, {2}));
  Literal x = Doubles("f32[2]", {1, 2});
  const Literal* operands[] = {&x};
  Evaluator evaluator;
  auto r = evaluator.EvaluateInstruction(shuffle, operands);
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnimplemented);
  EXPECT_NE(r.status().message().find("shuffle"), absl::string_view::npos) << r.status();
}

TEST(EvaluatorDriver, RngGetAndUpdateStateAdvances) {
  const char* hlo = R"(
HloModule m
ENTRY e {
  a = u64[2] rng-get-and-update-state(), delta=5
  b = u64[2] rng-get-and-update-state(), delta=5
  ROOT t = (u64[2], u64[2]) tuple(a, b)
})";
  EvaluatorOptions options;
  options.rng_seed = 100;
  ASSERT_OK_AND_ASSIGN(r, RunHlo(hlo, {}, options));
  EXPECT_EQ(Bits(r.element(0))[0], 100u);
  EXPECT_EQ(Bits(r.element(1))[0], 105u);
}


TEST(EvaluatorDriver, CollectivesNeedingManyReplicasAreUnimplemented) {
  // A larger all-gather result implies more than one participant.
  auto gather = RunOne({"f32[1,2]"}, "f32[2,2] all-gather(p0), dimensions={0}, replica_groups={}",
                       {Doubles("f32[1,2]", {1, 2})});
  EXPECT_EQ(gather.status().code(), absl::StatusCode::kUnimplemented) << gather.status();
  auto groups = RunOne({"f32[2]"}, "f32[2] all-to-all(p0), dimensions={0}, replica_groups={{0,1}}",
                       {Doubles("f32[2]", {1, 2})});
  EXPECT_EQ(groups.status().code(), absl::StatusCode::kUnimplemented) << groups.status();
  // One operand, a one-element tuple result.
  ASSERT_OK_AND_ASSIGN(t, RunOne({"u32[2]"}, "(u32[2]) all-to-all(p0), replica_groups={{0}}",
                                 {Ints("u32[2]", {10, 20})}));
  EXPECT_EQ(Ints(t.element(0)), (V{10, 20}));
}

TEST(EvaluatorDriver, ResultFollowsEntryComputationLayout) {
  ASSERT_OK_AND_ASSIGN(r, RunHlo(R"(
HloModule m, entry_computation_layout={(s32[2,2]{1,0})->s32[2,2]{0,1}}
ENTRY e {
  p = s32[2,2]{1,0} parameter(0)
  ROOT n = s32[2,2]{1,0} negate(p)
})", {Ints("s32[2,2]", {1, 2, 3, 4})}));
  EXPECT_EQ(Ints(r), (V{-1, -2, -3, -4}));
  EXPECT_EQ(r.shape().layout().minor_to_major, (std::vector<int64_t>{0, 1}));
}

}  // namespace
}  // namespace xjit::testing
