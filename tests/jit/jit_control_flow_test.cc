// While loops and conditionals compiled as steps that run executables of
// their own (runtime::Step::Kind::kWhile, kConditional), against the
// evaluator on every instruction set the host supports, with the pass
// pipeline on and off; and the cases the driver leaves to the evaluator.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// Counts i from 0 to n (a parameter: the random arguments give negative,
// zero and large counts, so zero-trip loops are covered), updating an array
// and a nested tuple on the way.
constexpr char kCountedLoop[] = R"(
HloModule counted

cond {
  s = (s32[], f32[37], (s32[], f32[37])) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  inner = (s32[], f32[37]) get-tuple-element(s), index=2
  n = s32[] get-tuple-element(inner), index=0
  clamped = s32[] clamp(s32[] constant(-1), n, s32[] constant(20))
  ROOT lt = pred[] compare(i, clamped), direction=LT
}

body {
  s = (s32[], f32[37], (s32[], f32[37])) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[37] get-tuple-element(s), index=1
  inner = (s32[], f32[37]) get-tuple-element(s), index=2
  n = s32[] get-tuple-element(inner), index=0
  y = f32[37] get-tuple-element(inner), index=1
  i1 = s32[] add(i, s32[] constant(1))
  h = f32[37] broadcast(f32[] constant(0.5)), dimensions={}
  t = f32[37] multiply(x, h)
  x1 = f32[37] add(t, y)
  y1 = f32[37] subtract(y, x)
  inner1 = (s32[], f32[37]) tuple(n, y1)
  ROOT next = (s32[], f32[37], (s32[], f32[37])) tuple(i1, x1, inner1)
}

ENTRY e {
  x = f32[37] parameter(0)
  y = f32[37] parameter(1)
  n = s32[] parameter(2)
  inner = (s32[], f32[37]) tuple(n, y)
  init = (s32[], f32[37], (s32[], f32[37])) tuple(s32[] constant(0), x, inner)
  ROOT w = (s32[], f32[37], (s32[], f32[37])) while(init), condition=cond, body=body
}
)";

// A while in a while's body: a triangle of sums.
constexpr char kNestedLoops[] = R"(
HloModule nested

inner_cond {
  s = (s32[], s32[], s64[5]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  ROOT lt = pred[] compare(j, i), direction=LT
}

inner_body {
  s = (s32[], s32[], s64[5]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  a = s64[5] get-tuple-element(s), index=2
  jc = s64[] convert(j)
  jb = s64[5] broadcast(jc), dimensions={}
  ROOT next = (s32[], s32[], s64[5]) tuple(add(j, s32[] constant(1)), i, add(a, jb))
}

outer_cond {
  s = (s32[], s64[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(6)), direction=LT
}

outer_body {
  s = (s32[], s64[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = s64[5] get-tuple-element(s), index=1
  start = (s32[], s32[], s64[5]) tuple(s32[] constant(0), i, a)
  done = (s32[], s32[], s64[5]) while(start), condition=inner_cond, body=inner_body
  a1 = s64[5] get-tuple-element(done), index=2
  ROOT next = (s32[], s64[5]) tuple(add(i, s32[] constant(1)), a1)
}

ENTRY e {
  a = s64[5] parameter(0)
  init = (s32[], s64[5]) tuple(s32[] constant(0), a)
  w = (s32[], s64[5]) while(init), condition=outer_cond, body=outer_body
  ROOT r = s64[5] get-tuple-element(w), index=1
}
)";

// Three branches on an s32 index (random values: negative and large ones
// select the last branch), with operands of different shapes.
constexpr char kIndexedConditional[] = R"(
HloModule indexed

b0 {
  p = f32[3,5]{0,1} parameter(0)
  ROOT r = f32[3,5]{1,0} exponential(p)
}

b1 {
  p = s32[] parameter(0)
  c = f32[] convert(p)
  ROOT r = f32[3,5]{1,0} broadcast(c), dimensions={}
}

b2 {
  p = (f32[3,5]{1,0}, f32[3,5]{1,0}) parameter(0)
  a = f32[3,5]{1,0} get-tuple-element(p), index=0
  b = f32[3,5]{1,0} get-tuple-element(p), index=1
  ROOT r = f32[3,5]{1,0} maximum(a, b)
}

ENTRY e {
  k = s32[] parameter(0)
  x = f32[3,5]{0,1} parameter(1)
  n = s32[] parameter(2)
  a = f32[3,5]{1,0} parameter(3)
  b = f32[3,5]{1,0} parameter(4)
  t = (f32[3,5]{1,0}, f32[3,5]{1,0}) tuple(a, b)
  ROOT c = f32[3,5]{1,0} conditional(k, x, n, t), branch_computations={b0, b1, b2}
}
)";

constexpr char kPredConditional[] = R"(
HloModule pred

on_true {
  p = (u8[9], u8[9]) parameter(0)
  a = u8[9] get-tuple-element(p), index=0
  b = u8[9] get-tuple-element(p), index=1
  ROOT r = (u8[9], u8[9]) tuple(add(a, b), b)
}

on_false {
  p = u8[9] parameter(0)
  ROOT r = (u8[9], u8[9]) tuple(p, not(p))
}

ENTRY e {
  c = pred[] parameter(0)
  a = u8[9] parameter(1)
  b = u8[9] parameter(2)
  t = (u8[9], u8[9]) tuple(a, b)
  ROOT r = (u8[9], u8[9]) conditional(c, t, a), true_computation=on_true, false_computation=on_false
}
)";

// A scan as JAX writes it, updating its state in place (the body is compiled
// with state_in_place): a dynamic-update-slice of a stacked output at the
// counter (and one at a start past the end, which clamps), pass-through
// leaves, two leaves that swap every iteration, a leaf reset to a constant,
// one value in two leaves, and the same body run by two loops. Outside the
// loops a dynamic-update-slice at a random start over a parameter (copied
// first) and over a dying temp (in place).
constexpr char kScanLoop[] = R"(
HloModule scan

cond {
  s = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(16)), direction=LT
}

body {
  s = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  h = f32[3,5] get-tuple-element(s), index=1
  ys = f32[16,3,5] get-tuple-element(s), index=2
  zs = f32[16,3,5]{1,2,0} get-tuple-element(s), index=3
  a = f32[7] get-tuple-element(s), index=4
  b = f32[7] get-tuple-element(s), index=5
  w = f32[3,5] get-tuple-element(s), index=8
  zero = s32[] constant(0)
  half = f32[3,5] broadcast(f32[] constant(0.5)), dimensions={}
  h1 = f32[3,5] add(multiply(h, w), half)
  u = f32[1,3,5] reshape(h1)
  ys1 = f32[16,3,5] dynamic-update-slice(ys, u, i, zero, zero)
  past = s32[] add(i, s32[] constant(14))
  uz = f32[1,3,5]{1,2,0} reshape(h)
  zs1 = f32[16,3,5]{1,2,0} dynamic-update-slice(zs, uz, past, zero, zero)
  i1 = s32[] add(i, s32[] constant(1))
  ROOT next = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) tuple(i1, h1, ys1, zs1, b, a, s32[] constant(7), i1, w)
}

ENTRY e {
  h = f32[3,5] parameter(0)
  ys = f32[16,3,5] parameter(1)
  a = f32[7] parameter(2)
  b = f32[7] parameter(3)
  w = f32[3,5] parameter(4)
  k = s32[] parameter(5)
  zs = f32[16,3,5]{1,2,0} copy(ys)
  kc = s32[] clamp(s32[] constant(-3), k, s32[] constant(20))
  init = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) tuple(s32[] constant(0), h, ys, zs, a, b, k, k, w)
  w1 = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) while(init), condition=cond, body=body
  init2 = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) tuple(kc, h, ys, zs, b, a, k, k, w)
  w2 = (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]) while(init2), condition=cond, body=body
  u = f32[2,3,5] slice(ys), slice={[0:2], [0:3], [0:5]}
  d1 = f32[16,3,5] dynamic-update-slice(ys, u, k, k, k)
  n = f32[16,3,5] negate(ys)
  d2 = f32[16,3,5] dynamic-update-slice(n, u, k, s32[] constant(1), s32[] constant(0))
  ROOT r = ((s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]), (s32[], f32[3,5], f32[16,3,5], f32[16,3,5]{1,2,0}, f32[7], f32[7], s32[], s32[], f32[3,5]), f32[16,3,5], f32[16,3,5]) tuple(w1, w2, d1, d2)
}
)";

// Loop state kept in the while's output slots (runtime RunWhile): one zero
// broadcast feeds three leaves, two of which are dead after the loop (the
// plan gives all three results the broadcast's bytes, so two of them run in
// private buffers and the live one is copied out last), a parameter passes
// through (copied in once), and an init leaf is still read after the loop
// (so the loop cannot write over it).
constexpr char kStateInOutputs[] = R"(
HloModule state_in_outputs

cond {
  s = (s32[], f32[6,5], f32[6,5], f32[6,5], f32[6,5], f32[6,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT
}

body {
  s = (s32[], f32[6,5], f32[6,5], f32[6,5], f32[6,5], f32[6,5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[6,5] get-tuple-element(s), index=1
  b = f32[6,5] get-tuple-element(s), index=2
  c = f32[6,5] get-tuple-element(s), index=3
  x = f32[6,5] get-tuple-element(s), index=4
  y = f32[6,5] get-tuple-element(s), index=5
  a1 = f32[6,5] add(a, x)
  b1 = f32[6,5] add(multiply(b, y), a)
  c1 = f32[6,5] subtract(c, b)
  q = f32[6,5] broadcast(f32[] constant(0.75)), dimensions={}
  y1 = f32[6,5] multiply(y, q)
  ROOT next = (s32[], f32[6,5], f32[6,5], f32[6,5], f32[6,5], f32[6,5]) tuple(add(i, s32[] constant(1)), a1, b1, c1, x, y1)
}

ENTRY e {
  x = f32[6,5] parameter(0)
  y = f32[6,5] parameter(1)
  z = f32[6,5] broadcast(f32[] constant(0)), dimensions={}
  init = (s32[], f32[6,5], f32[6,5], f32[6,5], f32[6,5], f32[6,5]) tuple(s32[] constant(0), z, z, z, x, y)
  w = (s32[], f32[6,5], f32[6,5], f32[6,5], f32[6,5], f32[6,5]) while(init), condition=cond, body=body
  c = f32[6,5] get-tuple-element(w), index=3
  x1 = f32[6,5] get-tuple-element(w), index=4
  ROOT r = (f32[6,5], f32[6,5]) tuple(c, add(x1, y))
}
)";

class JitControlFlow : public ::testing::TestWithParam<Isa> {
 protected:
  void Check(const char* hlo) {
    for (bool passes : {true, false}) {
      for (uint64_t seed = 1; seed <= 6; ++seed) {
        CheckOptions options;
        options.isa = GetParam();
        options.seed = seed;
        options.run_passes = passes;
        EXPECT_TRUE(MatchesEvaluator(hlo, options)) << "passes " << passes << " seed " << seed;
      }
    }
  }
};

TEST_P(JitControlFlow, CountedLoop) { Check(kCountedLoop); }
TEST_P(JitControlFlow, NestedLoops) { Check(kNestedLoops); }
TEST_P(JitControlFlow, IndexedConditional) { Check(kIndexedConditional); }
TEST_P(JitControlFlow, PredConditional) { Check(kPredConditional); }
TEST_P(JitControlFlow, ScanUpdatesStateInPlace) { Check(kScanLoop); }
TEST_P(JitControlFlow, StateInOutputSlots) { Check(kStateInOutputs); }

// What makes the scan cheap: the body runs over the one state buffer, copies
// none of the stacked outputs (f32[16,3,5], 240 bytes) per iteration, and
// its dynamic-update-slice kernels loop over the update's 3 x 5 elements
// only. With CompileOptions::while_state_in_place off the body copies.
TEST(JitWhileState, BodyCopiesNoStackedOutput) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kScanLoop);
  ASSERT_TRUE(module.ok()) << module.status();
  for (bool in_place : {true, false}) {
    CompileOptions options;
    options.while_state_in_place = in_place;
    CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
        Compile(**module, options, &report);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const runtime::Executable* body = nullptr;
    for (const runtime::Step& step : (*executable)->steps()) {
      if (step.kind == runtime::Step::Kind::kWhile) body = step.subprograms[1].get();
    }
    ASSERT_NE(body, nullptr);
    EXPECT_EQ(body->state_in_place(), in_place);
    // The loop can keep its state in the while's output slots.
    EXPECT_TRUE(body->runs_on_leaves());
    int stacked_copies = 0;
    for (const runtime::Step& step : body->steps()) {
      if (step.kind == runtime::Step::Kind::kCopy &&
          body->plan().slots[step.inputs[0]].size == 16 * 3 * 5 * 4) {
        ++stacked_copies;
      }
    }
    EXPECT_EQ(stacked_copies, in_place ? 0 : 2) << "in place " << in_place;
    bool update_loops = false;
    for (const KernelInfo& kernel : report.kernels) {
      if (kernel.name == "w1/body/ys1") {
        update_loops = kernel.program.rfind("kernel ys1 loops [1,3,5]\n", 0) == 0;
      }
    }
    EXPECT_TRUE(update_loops);
  }
}

// ExecuteOnLeaves (the runtime's loops run condition and body on the state's
// leaves wherever they lie) refuses a wrong number of leaves, and gives what
// Execute gives on the flat state.
TEST(JitWhileState, ExecuteOnLeaves) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kStateInOutputs);
  ASSERT_TRUE(module.ok()) << module.status();
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, CompileOptions(), &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  const runtime::Executable* body = nullptr;
  for (const runtime::Step& step : (*executable)->steps()) {
    if (step.kind == runtime::Step::Kind::kWhile) body = step.subprograms[1].get();
  }
  ASSERT_NE(body, nullptr);
  ASSERT_TRUE(body->state_in_place() && body->runs_on_leaves());
  // The state: i = 2, then five f32[6,5] leaves of distinct values.
  constexpr int kLeafFloats = 30;
  std::vector<float> flat(1 + 5 * kLeafFloats);
  const int32_t two = 2;
  std::memcpy(flat.data(), &two, sizeof(two));
  for (size_t k = 1; k < flat.size(); ++k) flat[k] = 0.25f * static_cast<float>(k % 17) - 1.0f;
  // The same bytes, each leaf in a buffer of its own.
  std::vector<std::vector<float>> separate(6);
  std::vector<void*> leaves;
  separate[0].assign(1, flat[0]);
  leaves.push_back(separate[0].data());
  for (int k = 0; k < 5; ++k) {
    separate[k + 1].assign(flat.begin() + 1 + k * kLeafFloats,
                           flat.begin() + 1 + (k + 1) * kLeafFloats);
    leaves.push_back(separate[k + 1].data());
  }
  void* state = flat.data();
  const void* parameter = state;
  ASSERT_TRUE(body->Execute({&parameter, 1}, state).ok());
  std::vector<uint8_t> arena(static_cast<size_t>(body->arena_bytes()));
  ASSERT_TRUE(body->ExecuteOnLeaves(leaves, nullptr, arena.data(), runtime::RunContext()).ok());
  EXPECT_EQ(std::memcmp(separate[0].data(), flat.data(), 4), 0);
  for (int k = 0; k < 5; ++k) {
    EXPECT_EQ(std::memcmp(separate[k + 1].data(), flat.data() + 1 + k * kLeafFloats,
                          kLeafFloats * 4),
              0)
        << "leaf " << k + 1;
  }
  absl::Status wrong =
      body->ExecuteOnLeaves(absl::MakeSpan(leaves).subspan(1), nullptr, nullptr,
                            runtime::RunContext());
  EXPECT_EQ(wrong.code(), absl::StatusCode::kInvalidArgument) << wrong;
}

// The loop body's kernels are reported under the loop's name.
TEST_P(JitControlFlow, ReportsKernelsOfCalledComputations) {
  CompileReport report;
  CheckOptions options;
  options.isa = GetParam();
  options.report = &report;
  ASSERT_TRUE(MatchesEvaluator(kCountedLoop, options));
  EXPECT_TRUE(report.interpreted_steps.empty());
  bool body_kernel = false;
  for (const KernelInfo& kernel : report.kernels) {
    body_kernel = body_kernel || kernel.name.rfind("w/body/", 0) == 0;
  }
  EXPECT_TRUE(body_kernel);
}

// A body with an rng stays one interpreted step (an evaluator per run would
// restart the rng sequence every iteration); results still match.
TEST_P(JitControlFlow, SideEffectsStayInterpreted) {
  constexpr char kRngLoop[] = R"(
HloModule rng_loop

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  r = f32[4] rng(f32[] constant(0), f32[] constant(1)), distribution=rng_uniform
  ROOT next = (s32[], f32[4]) tuple(add(i, s32[] constant(1)), add(x, r))
}

ENTRY e {
  x = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)";
  CompileReport report;
  CheckOptions options;
  options.isa = GetParam();
  options.report = &report;
  options.require_all_compiled = false;
  EXPECT_TRUE(MatchesEvaluator(kRngLoop, options));
  ASSERT_EQ(report.interpreted_steps.size(), 1u);
  EXPECT_NE(report.interpreted_steps[0].find("side effects"), std::string::npos)
      << report.interpreted_steps[0];
}

INSTANTIATE_TEST_SUITE_P(Isas, JitControlFlow, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
