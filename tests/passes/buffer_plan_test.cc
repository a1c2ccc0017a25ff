// Unit tests of scheduling and buffer allocation (and of the GEMM form that
// layout assignment leaves for dots). Expected byte counts are worked out by
// hand in the comments: X is the size of one array.
//
// The second half is a golden test of the plan text: every
// tests/passes/golden/allocate_buffers/<case>.hlo is run through the passes
// of its CHECK-AFTER line, and its plan must equal <case>.plan next to it
// (UPDATE_GOLDEN=1 rewrites the .plan files).
#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/verifier.h"
#include "passes/allocate_buffers.h"
#include "passes/assign_layouts.h"
#include "passes/buffer_plan.h"
#include "passes/fuse.h"
#include "passes/pipeline.h"
#include "passes/schedule.h"

namespace xjit {
namespace {

std::unique_ptr<Module> Parse(const std::string& text) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  EXPECT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);
  return std::move(*module);
}

BufferPlan Plan(const Module& module, BufferPlanOptions options = {}) {
  absl::StatusOr<BufferPlan> plan = ComputeBufferPlan(module, options);
  EXPECT_TRUE(plan.ok()) << plan.status();
  return plan.ok() ? std::move(*plan) : BufferPlan();
}

const Instruction* Find(const Module& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    if (const Instruction* found = computation->FindInstruction(name)) return found;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

BufferSlice SliceOf(const BufferPlan& plan, const Module& module, const std::string& name,
                    const ShapeIndex& index = {}) {
  std::optional<BufferSlice> slice = plan.Slice(Find(module, name), index);
  EXPECT_TRUE(slice.has_value()) << name;
  return slice.value_or(BufferSlice{});
}

BufferAllocation::Kind KindOf(const BufferPlan& plan, const BufferSlice& slice) {
  return plan.allocation(slice.allocation).kind;
}

// f32[1024]: X = 4096 bytes.
constexpr int64_t kX = 4096;
constexpr char kChain[] = R"(
HloModule chain
ENTRY %main (p: f32[1024]) -> f32[1024] {
  %p = f32[1024]{0} parameter(0)
  %e1 = f32[1024]{0} negate(%p)
  %e2 = f32[1024]{0} exponential(%e1)
  %e3 = f32[1024]{0} log(%e2)
  ROOT %e4 = f32[1024]{0} sqrt(%e3)
}
)";

// Without in-place updates: e1 and e2 are live together (e2 reads e1), e3
// reuses e1's bytes, e4 is the result: 2X of temps, peak = p + 2X.
TEST(BufferPlanTest, ChainWithoutInPlaceNeedsTwoTemps) {
  auto module = Parse(kChain);
  BufferPlan plan = Plan(*module, {.in_place = false});
  EXPECT_EQ(plan.temp_bytes(), 2 * kX) << plan.ToString();
  EXPECT_EQ(plan.peak_bytes(), 3 * kX) << plan.ToString();
  EXPECT_EQ(SliceOf(plan, *module, "e1"), SliceOf(plan, *module, "e3"));
  EXPECT_NE(SliceOf(plan, *module, "e1").offset, SliceOf(plan, *module, "e2").offset);
}

// Without reuse either, every temp has its own bytes: 3X.
TEST(BufferPlanTest, ChainWithoutReuseNeedsThreeTemps) {
  auto module = Parse(kChain);
  BufferPlan plan = Plan(*module, {.in_place = false, .reuse = false});
  EXPECT_EQ(plan.temp_bytes(), 3 * kX) << plan.ToString();
}

// In place: e1 cannot overwrite the parameter, but e2, e3, e4 each
// overwrite their dying operand, and since e4 is the result the whole chain
// lives in the result buffer: no temps at all; peak = p + result.
TEST(BufferPlanTest, ChainInPlaceNeedsNoTemps) {
  auto module = Parse(kChain);
  BufferPlan plan = Plan(*module);
  EXPECT_EQ(plan.temp_bytes(), 0) << plan.ToString();
  EXPECT_EQ(plan.peak_bytes(), 2 * kX) << plan.ToString();
  const BufferSlice e1 = SliceOf(plan, *module, "e1");
  EXPECT_EQ(KindOf(plan, e1), BufferAllocation::Kind::kResult);
  EXPECT_EQ(SliceOf(plan, *module, "e4"), e1);
  EXPECT_FALSE(plan.InPlaceOperand(Find(*module, "e1")).has_value());
  EXPECT_EQ(plan.InPlaceOperand(Find(*module, "e2")), 0);
}

// After fusion the chain is one loop from the parameter to the result.
TEST(BufferPlanTest, ChainAfterFusionNeedsNoTemps) {
  auto module = Parse(kChain);
  ASSERT_TRUE(Fuse().Run(module.get()).ok());
  BufferPlan plan = Plan(*module, {.in_place = false});
  EXPECT_EQ(plan.temp_bytes(), 0) << plan.ToString();
  EXPECT_EQ(plan.peak_bytes(), 2 * kX) << plan.ToString();
}

// A parameter is never written: negate(p) as the root gets its own result
// buffer and is not in place.
TEST(BufferPlanTest, ParameterNeverOverwritten) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (p: f32[16]) -> f32[16] {
  %p = f32[16]{0} parameter(0)
  ROOT %n = f32[16]{0} negate(%p)
})");
  BufferPlan plan = Plan(*module);
  const BufferSlice p = SliceOf(plan, *module, "p");
  const BufferSlice n = SliceOf(plan, *module, "n");
  EXPECT_EQ(KindOf(plan, p), BufferAllocation::Kind::kParameter);
  EXPECT_EQ(KindOf(plan, n), BufferAllocation::Kind::kResult);
  EXPECT_NE(p.allocation, n.allocation);
  EXPECT_FALSE(plan.InPlaceOperand(Find(*module, "n")).has_value());
  EXPECT_EQ(plan.ParameterAllocation(0), p.allocation);
}

// input_output_alias donates the parameter: the result is computed in it.
TEST(BufferPlanTest, DonatedParameterUpdatedInPlace) {
  auto module = Parse(R"(
HloModule m, input_output_alias={ {}: (0, {}, may-alias) }
ENTRY %main (p: f32[16]) -> f32[16] {
  %p = f32[16]{0} parameter(0)
  ROOT %n = f32[16]{0} negate(%p)
})");
  BufferPlan plan = Plan(*module);
  EXPECT_EQ(SliceOf(plan, *module, "n"), SliceOf(plan, *module, "p"));
  EXPECT_EQ(plan.InPlaceOperand(Find(*module, "n")), 0);
  const BufferAllocation& allocation = plan.allocation(SliceOf(plan, *module, "p").allocation);
  ASSERT_EQ(allocation.result_indices.size(), 1u);
  EXPECT_EQ(allocation.result_indices[0], ShapeIndex{});
  EXPECT_EQ(plan.temp_bytes(), 0);
}

// Tuple, get-tuple-element and bitcast define no storage.
TEST(BufferPlanTest, TupleAndBitcastAlias) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (p: f32[2,8]) -> (f32[16], f32[2,8]) {
  %p = f32[2,8]{1,0} parameter(0)
  %a = f32[2,8]{1,0} negate(%p)
  %b = f32[2,8]{1,0} exponential(%p)
  %t = (f32[2,8]{1,0}, f32[2,8]{1,0}) tuple(%a, %b)
  %g = f32[2,8]{1,0} get-tuple-element(%t), index=0
  %c = f32[16]{0} bitcast(%g)
  %h = f32[2,8]{1,0} get-tuple-element(%t), index=1
  ROOT %r = (f32[16]{0}, f32[2,8]{1,0}) tuple(%c, %h)
})");
  BufferPlan plan = Plan(*module);
  EXPECT_EQ(SliceOf(plan, *module, "t", {0}), SliceOf(plan, *module, "a"));
  EXPECT_EQ(SliceOf(plan, *module, "t", {1}), SliceOf(plan, *module, "b"));
  EXPECT_EQ(SliceOf(plan, *module, "g"), SliceOf(plan, *module, "a"));
  EXPECT_EQ(SliceOf(plan, *module, "c"), SliceOf(plan, *module, "a"));
  EXPECT_EQ(SliceOf(plan, *module, "r", {1}), SliceOf(plan, *module, "b"));
  // Both results are result buffers; no temps.
  EXPECT_EQ(KindOf(plan, SliceOf(plan, *module, "a")), BufferAllocation::Kind::kResult);
  EXPECT_EQ(KindOf(plan, SliceOf(plan, *module, "b")), BufferAllocation::Kind::kResult);
  EXPECT_EQ(plan.temp_bytes(), 0);
  EXPECT_EQ(plan.result_bytes(), 2 * 64);
}

// dynamic-update-slice writes over its operand 0 when that dies there, and
// copies (is not in place) when operand 0 is a parameter.
TEST(BufferPlanTest, DynamicUpdateSliceInPlace) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (p: f32[64], u: f32[4], i: s32[]) -> (f32[64], f32[64]) {
  %p = f32[64]{0} parameter(0)
  %u = f32[4]{0} parameter(1)
  %i = s32[] parameter(2)
  %n = f32[64]{0} negate(%p)
  %d = f32[64]{0} dynamic-update-slice(%n, %u, %i)
  %q = f32[64]{0} dynamic-update-slice(%p, %u, %i)
  ROOT %r = (f32[64]{0}, f32[64]{0}) tuple(%d, %q)
})");
  BufferPlan plan = Plan(*module);
  EXPECT_EQ(plan.InPlaceOperand(Find(*module, "d")), 0);
  EXPECT_EQ(SliceOf(plan, *module, "d"), SliceOf(plan, *module, "n"));
  EXPECT_FALSE(plan.InPlaceOperand(Find(*module, "q")).has_value());
  EXPECT_NE(SliceOf(plan, *module, "q").allocation, SliceOf(plan, *module, "p").allocation);
}

// An operand still needed later is not overwritten.
TEST(BufferPlanTest, NoInPlaceOverLiveOperand) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (p: f32[16]) -> f32[16] {
  %p = f32[16]{0} parameter(0)
  %a = f32[16]{0} negate(%p)
  %b = f32[16]{0} exponential(%a)
  ROOT %c = f32[16]{0} add(%a, %b)
})");
  BufferPlan plan = Plan(*module);
  EXPECT_FALSE(plan.InPlaceOperand(Find(*module, "b")).has_value());
  EXPECT_NE(SliceOf(plan, *module, "a"), SliceOf(plan, *module, "b"));
  // c may overwrite either dying operand.
  EXPECT_TRUE(plan.InPlaceOperand(Find(*module, "c")).has_value());
}

// Temps of 12 bytes sit at 64-byte aligned offsets.
TEST(BufferPlanTest, TempOffsetsAligned) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (p: f32[3]) -> f32[3] {
  %p = f32[3]{0} parameter(0)
  %a = f32[3]{0} negate(%p)
  %b = f32[3]{0} exponential(%p)
  %c = f32[3]{0} add(%a, %b)
  ROOT %d = f32[3]{0} multiply(%c, %a)
})");
  BufferPlan plan = Plan(*module, {.in_place = false});
  const BufferSlice a = SliceOf(plan, *module, "a");
  const BufferSlice b = SliceOf(plan, *module, "b");
  EXPECT_EQ(a.offset % kBufferAlignment, 0);
  EXPECT_EQ(b.offset % kBufferAlignment, 0);
  EXPECT_NE(a.offset, b.offset);
  EXPECT_EQ(a.size, 12);
  // a, b and c are live together at c: three aligned slots.
  EXPECT_EQ(plan.temp_bytes(), 2 * 64 + 12) << plan.ToString();
}

// Two independent broadcast-then-reduce chains: running each chain to the
// end before starting the other keeps one big buffer live, not two.
TEST(ScheduleTest, FinishesAChainBeforeStartingAnother) {
  auto module = Parse(R"(
HloModule m
%add (x: f32[], y: f32[]) -> f32[] {
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}
ENTRY %main (p: f32[4], q: f32[4]) -> (f32[4], f32[4]) {
  %p = f32[4]{0} parameter(0)
  %q = f32[4]{0} parameter(1)
  %z = f32[] constant(0)
  %b1 = f32[4,1024]{1,0} broadcast(%p), dimensions={0}
  %b2 = f32[4,1024]{1,0} broadcast(%q), dimensions={0}
  %r1 = f32[4]{0} reduce(%b1, %z), dimensions={1}, to_apply=%add
  %r2 = f32[4]{0} reduce(%b2, %z), dimensions={1}, to_apply=%add
  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%r1, %r2)
})");
  std::vector<const Instruction*> schedule = ComputeSchedule(*module->entry());
  auto position = [&](const std::string& name) {
    for (size_t i = 0; i < schedule.size(); ++i) {
      if (schedule[i]->name() == name) return static_cast<int64_t>(i);
    }
    return int64_t{-1};
  };
  ASSERT_EQ(schedule.size(), module->entry()->instructions().size());
  EXPECT_LT(position("r1"), position("b2"));
  BufferPlan plan = Plan(*module);
  // One 16 KiB broadcast at a time.
  EXPECT_EQ(plan.temp_bytes(), 4 * 1024 * 4) << plan.ToString();
}

// The while state is updated in place: the body's new values are written
// into the loop's own buffers, so no copy-back is needed.
TEST(BufferPlanTest, WhileStateInPlace) {
  auto module = Parse(R"(
HloModule m
%cond (s: (s32[], f32[64])) -> pred[] {
  %s = (s32[], f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}
%body (s: (s32[], f32[64])) -> (s32[], f32[64]) {
  %s = (s32[], f32[64]{0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %v = f32[64]{0} get-tuple-element(%s), index=1
  %one = s32[] constant(1)
  %j = s32[] add(%i, %one)
  %w = f32[64]{0} multiply(%v, %v)
  ROOT %t = (s32[], f32[64]{0}) tuple(%j, %w)
}
ENTRY %main (a: f32[64]) -> f32[64] {
  %a = f32[64]{0} parameter(0)
  %zero = s32[] constant(0)
  %na = f32[64]{0} negate(%a)
  %init = (s32[], f32[64]{0}) tuple(%zero, %na)
  %loop = (s32[], f32[64]{0}) while(%init), condition=%cond, body=%body
  ROOT %r = f32[64]{0} get-tuple-element(%loop), index=1
})");
  BufferPlan plan = Plan(*module);
  // The state's f32 leaf is the init's buffer (which dies at the loop), and
  // it is the result.
  EXPECT_EQ(SliceOf(plan, *module, "loop", {1}), SliceOf(plan, *module, "na"));
  EXPECT_EQ(KindOf(plan, SliceOf(plan, *module, "na")), BufferAllocation::Kind::kResult);
  const Computation* body = module->FindComputation("body");
  const BufferSlice state_v = SliceOf(plan, *module, "loop", {1});
  EXPECT_EQ(*plan.Slice(body->FindInstruction("v")), state_v);
  EXPECT_EQ(*plan.Slice(body->FindInstruction("w")), state_v);
  EXPECT_EQ(*plan.Slice(body->FindInstruction("j")), SliceOf(plan, *module, "loop", {0}));
  ASSERT_NE(plan.ForComputation(body), nullptr);
  EXPECT_EQ(plan.ForComputation(body)->arena, -1) << plan.ToString();
}

// A while body planned on its own with state_in_place (as the JIT runs it):
// the dynamic-update-slice of a large state leaf writes over that leaf,
// pass-through leaves keep the parameter's bytes, and no result leaf gets a
// buffer of its own (a value that cannot be written over its leaf is a temp
// that the runtime copies back).
constexpr char kScanBody[] = R"(
HloModule body
ENTRY %body (s: (s32[], f32[4], f32[64,4], f32[64,4])) -> (s32[], f32[4], f32[64,4], f32[64,4]) {
  %s = (s32[], f32[4]{0}, f32[64,4]{1,0}, f32[64,4]{1,0}) parameter(0)
  %i = s32[] get-tuple-element(%s), index=0
  %h = f32[4]{0} get-tuple-element(%s), index=1
  %xs = f32[64,4]{1,0} get-tuple-element(%s), index=2
  %ys = f32[64,4]{1,0} get-tuple-element(%s), index=3
  %zero = s32[] constant(0)
  %x = f32[1,4]{1,0} dynamic-slice(%xs, %i, %zero), dynamic_slice_sizes={1,4}
  %xr = f32[4]{0} reshape(%x)
  %h1 = f32[4]{0} add(%h, %xr)
  %u = f32[1,4]{1,0} reshape(%h1)
  %ys1 = f32[64,4]{1,0} dynamic-update-slice(%ys, %u, %i, %zero)
  %one = s32[] constant(1)
  %i1 = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[4]{0}, f32[64,4]{1,0}, f32[64,4]{1,0}) tuple(%i1, %h1, %xs, %ys1)
})";

TEST(BufferPlanTest, StateInPlaceUpdatesTheBodysParameter) {
  auto module = Parse(kScanBody);
  BufferPlan plan = Plan(*module, {.donate_parameters = false, .state_in_place = true});
  const BufferSlice ys = SliceOf(plan, *module, "s", {3});
  EXPECT_EQ(KindOf(plan, ys), BufferAllocation::Kind::kParameter);
  EXPECT_EQ(SliceOf(plan, *module, "ys1"), ys);
  EXPECT_EQ(plan.InPlaceOperand(Find(*module, "ys1")), 0);
  EXPECT_EQ(SliceOf(plan, *module, "t", {2}), SliceOf(plan, *module, "s", {2}));
  EXPECT_EQ(SliceOf(plan, *module, "t", {3}), ys);
  // h1 is elementwise over h, which dies there: in place as well.
  EXPECT_EQ(SliceOf(plan, *module, "h1"), SliceOf(plan, *module, "s", {1}));
  for (const BufferAllocation& allocation : plan.allocations()) {
    EXPECT_NE(allocation.kind, BufferAllocation::Kind::kResult) << plan.ToString();
  }
  // Without state_in_place the parameter is only read: the update copies.
  BufferPlan reading = Plan(*module, {.donate_parameters = false});
  EXPECT_FALSE(reading.InPlaceOperand(Find(*module, "ys1")).has_value());
}

// A value over a state leaf must become that same leaf: the swapped leaves'
// new values (negations of the other leaf) cannot be written over either
// parameter leaf, since each is still read by the other's negation.
TEST(BufferPlanTest, StateInPlaceNeverWritesAnotherLeaf) {
  auto module = Parse(R"(
HloModule m
ENTRY %body (s: (f32[16], f32[16])) -> (f32[16], f32[16]) {
  %s = (f32[16]{0}, f32[16]{0}) parameter(0)
  %a = f32[16]{0} get-tuple-element(%s), index=0
  %b = f32[16]{0} get-tuple-element(%s), index=1
  %nb = f32[16]{0} negate(%b)
  %na = f32[16]{0} negate(%a)
  ROOT %t = (f32[16]{0}, f32[16]{0}) tuple(%nb, %na)
})");
  BufferPlan plan = Plan(*module, {.donate_parameters = false, .state_in_place = true});
  EXPECT_NE(SliceOf(plan, *module, "nb"), SliceOf(plan, *module, "b"));
  EXPECT_NE(SliceOf(plan, *module, "na"), SliceOf(plan, *module, "a"));
  EXPECT_EQ(KindOf(plan, SliceOf(plan, *module, "nb")), BufferAllocation::Kind::kTemp);
}

// A result leaf whose old state leaf is read for the last time before the
// new value is written takes that leaf's bytes, so no copy follows the body
// (a never-read leaf a under n0; c, read by n1 before n2 is computed). n1
// cannot go over b, which n2 still reads after n1 is written.
TEST(BufferPlanTest, StateInPlaceWritesOverDeadLeaves) {
  auto module = Parse(R"(
HloModule m
ENTRY %body (s: (f32[16], f32[16], f32[16])) -> (f32[16], f32[16], f32[16]) {
  %s = (f32[16]{0}, f32[16]{0}, f32[16]{0}) parameter(0)
  %a = f32[16]{0} get-tuple-element(%s), index=0
  %b = f32[16]{0} get-tuple-element(%s), index=1
  %c = f32[16]{0} get-tuple-element(%s), index=2
  %n0 = f32[16]{0} negate(%b)
  %n1 = f32[16]{0} negate(%c)
  %n2 = f32[16]{0} add(%b, %n1)
  ROOT %t = (f32[16]{0}, f32[16]{0}, f32[16]{0}) tuple(%n0, %n1, %n2)
})");
  BufferPlan plan = Plan(*module, {.donate_parameters = false, .state_in_place = true});
  EXPECT_EQ(SliceOf(plan, *module, "n0"), SliceOf(plan, *module, "a")) << plan.ToString();
  EXPECT_EQ(SliceOf(plan, *module, "n2"), SliceOf(plan, *module, "c")) << plan.ToString();
  EXPECT_NE(SliceOf(plan, *module, "n1"), SliceOf(plan, *module, "b")) << plan.ToString();
  EXPECT_EQ(KindOf(plan, SliceOf(plan, *module, "n1")), BufferAllocation::Kind::kTemp);
}

// An inner loop that passes a matrix through (a sampler's data, read by
// every leapfrog step) in an outer body planned as the JIT runs it: the
// inner while's result leaf is the outer state's leaf, so no copy moves the
// matrix in or out of the inner loop. Its vector is passed through as well,
// but the outer body then negates the inner loop's copy while the root
// still holds the operand's: the negation cannot go over that buffer. At
// the entry, a loop passing an argument through gives its result leaf
// bytes of its own (a run whose state is flat copies the final state back
// there, and an argument is never written).
constexpr char kPassThroughOuterBody[] = R"(
HloModule outer
%inner_cond (s: (s32[], f32[64,8], f32[8])) -> pred[] {
  %s = (s32[], f32[64,8]{1,0}, f32[8]{0}) parameter(0)
  %j = s32[] get-tuple-element(%s), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%j, %n), direction=LT
}
%inner_body (s: (s32[], f32[64,8], f32[8])) -> (s32[], f32[64,8], f32[8]) {
  %s = (s32[], f32[64,8]{1,0}, f32[8]{0}) parameter(0)
  %j = s32[] get-tuple-element(%s), index=0
  %m = f32[64,8]{1,0} get-tuple-element(%s), index=1
  %v = f32[8]{0} get-tuple-element(%s), index=2
  %one = s32[] constant(1)
  %j1 = s32[] add(%j, %one)
  ROOT %t = (s32[], f32[64,8]{1,0}, f32[8]{0}) tuple(%j1, %m, %v)
}
ENTRY %outer (os: (f32[64,8], f32[8], f32[8])) -> (f32[64,8], f32[8], f32[8]) {
  %os = (f32[64,8]{1,0}, f32[8]{0}, f32[8]{0}) parameter(0)
  %m = f32[64,8]{1,0} get-tuple-element(%os), index=0
  %v = f32[8]{0} get-tuple-element(%os), index=1
  %zero = s32[] constant(0)
  %init = (s32[], f32[64,8]{1,0}, f32[8]{0}) tuple(%zero, %m, %v)
  %done = (s32[], f32[64,8]{1,0}, f32[8]{0}) while(%init), condition=%inner_cond, body=%inner_body
  %m1 = f32[64,8]{1,0} get-tuple-element(%done), index=1
  %v1 = f32[8]{0} get-tuple-element(%done), index=2
  %nv = f32[8]{0} negate(%v1)
  ROOT %t = (f32[64,8]{1,0}, f32[8]{0}, f32[8]{0}) tuple(%m1, %v, %nv)
})";

TEST(BufferPlanTest, PassedThroughLoopStateStaysWhereItLies) {
  auto module = Parse(kPassThroughOuterBody);
  BufferPlan plan = Plan(*module, {.donate_parameters = false, .state_in_place = true});
  const BufferSlice m = SliceOf(plan, *module, "os", {0});
  EXPECT_EQ(KindOf(plan, m), BufferAllocation::Kind::kParameter);
  EXPECT_EQ(SliceOf(plan, *module, "done", {1}), m) << plan.ToString();
  EXPECT_EQ(SliceOf(plan, *module, "done", {2}), SliceOf(plan, *module, "os", {1}));
  EXPECT_NE(SliceOf(plan, *module, "nv"), SliceOf(plan, *module, "os", {1})) << plan.ToString();
  // The same body as a plain entry: its parameter is a caller's argument.
  BufferPlan reading = Plan(*module, {.donate_parameters = false});
  EXPECT_NE(SliceOf(reading, *module, "done", {1}), SliceOf(reading, *module, "os", {0}));
  EXPECT_EQ(KindOf(reading, SliceOf(reading, *module, "done", {1})),
            BufferAllocation::Kind::kResult);
}

TEST(BufferPlanTest, StateInPlaceNeedsOneParameterOfTheRootsShape) {
  auto module = Parse(kChain);
  auto bad = Parse(R"(
HloModule m
ENTRY %main (p: f32[16]) -> f32[8] {
  %p = f32[16]{0} parameter(0)
  ROOT %s = f32[8]{0} slice(%p), slice={[0:8]}
})");
  EXPECT_TRUE(ComputeBufferPlan(*module, {.state_in_place = true}).ok());
  EXPECT_EQ(ComputeBufferPlan(*bad, {.state_in_place = true}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

// The plan text carries the totals as `xjit compile` prints them.
TEST(BufferPlanTest, TextHasTotals) {
  auto module = Parse(kChain);
  BufferPlan plan = Plan(*module, {.in_place = false});
  const std::string text = plan.ToString();
  EXPECT_TRUE(absl::StrContains(text, "temp bytes: 8192\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "peak bytes: 12288\n")) << text;
  EXPECT_TRUE(absl::StrContains(text, "0: parameter, 4096 bytes, parameter 0 {}")) << text;
}

// ---- GEMM form of dots after layout assignment ----

TEST(DotGemmFormTest, TransposedOperandIsAFlag) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (a: f32[4,3], b: f32[4,5]) -> f32[3,5] {
  %a = f32[4,3]{1,0} parameter(0)
  %b = f32[4,5]{1,0} parameter(1)
  %t = f32[3,4]{1,0} transpose(%a), dimensions={1,0}
  ROOT %d = f32[3,5]{1,0} dot(%t, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})");
  ASSERT_TRUE(AssignLayouts().Run(module.get()).ok());
  std::optional<DotGemmForm> form = ComputeDotGemmForm(*module->entry()->root());
  ASSERT_TRUE(form.has_value());
  // C[3,5] = A^T B with A stored [4][3]: m=3, k=4, n=5, lda=3.
  EXPECT_EQ(form->m, 3);
  EXPECT_EQ(form->n, 5);
  EXPECT_EQ(form->k, 4);
  EXPECT_TRUE(form->transpose_a);
  EXPECT_FALSE(form->transpose_b);
  EXPECT_EQ(form->lda, 3);
  EXPECT_EQ(form->ldb, 5);
  EXPECT_EQ(form->ldc, 5);
}

TEST(DotGemmFormTest, BatchedRhsTransposed) {
  auto module = Parse(R"(
HloModule m
ENTRY %main (a: f32[2,3,4], b: f32[2,5,4]) -> f32[2,3,5] {
  %a = f32[2,3,4]{2,1,0} parameter(0)
  %b = f32[2,5,4]{2,1,0} parameter(1)
  ROOT %d = f32[2,3,5]{2,1,0} dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}
})");
  std::optional<DotGemmForm> form = ComputeDotGemmForm(*module->entry()->root());
  ASSERT_TRUE(form.has_value());
  EXPECT_EQ(form->batch, 2);
  EXPECT_FALSE(form->transpose_a);
  EXPECT_TRUE(form->transpose_b);  // B stored [n][k].
  EXPECT_EQ(form->ldb, 4);
  EXPECT_EQ(form->stride_a, 12);
  EXPECT_EQ(form->stride_b, 20);
  EXPECT_EQ(form->stride_c, 15);
}

// ---- Golden plans ----

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::vector<std::string> PlanCases() {
  std::vector<std::string> cases;
  const fs::path root = fs::path(XJIT_GOLDEN_DIR) / "allocate_buffers";
  std::error_code error;
  if (!fs::is_directory(root, error)) return cases;
  for (const auto& entry : fs::directory_iterator(root, error)) {
    if (entry.path().extension() == ".hlo") cases.push_back(entry.path().stem().string());
  }
  std::sort(cases.begin(), cases.end());
  return cases;
}

class GoldenPlanTest : public ::testing::TestWithParam<std::string> {};

TEST_P(GoldenPlanTest, Matches) {
  const fs::path dir = fs::path(XJIT_GOLDEN_DIR) / "allocate_buffers";
  const std::string text = ReadFile(dir / (GetParam() + ".hlo"));
  const size_t check = text.find("// CHECK-AFTER");
  ASSERT_NE(check, std::string::npos);
  const size_t line_end = text.find('\n', check);
  std::string line = text.substr(check, line_end - check);
  absl::string_view names = absl::StripPrefix(line, "// CHECK-AFTER");
  auto module = Parse(text.substr(0, check));
  ASSERT_NE(module, nullptr);
  for (absl::string_view name : absl::StrSplit(names, ',')) {
    name = absl::StripAsciiWhitespace(name);
    if (name.empty() || name == "allocate-buffers") continue;
    absl::StatusOr<std::unique_ptr<Pass>> pass = CreatePass(name);
    ASSERT_TRUE(pass.ok()) << pass.status();
    ASSERT_TRUE((*pass)->Run(module.get()).ok());
  }
  const std::string actual = Plan(*module).ToString();
  const fs::path expected_path = dir / (GetParam() + ".plan");
  if (std::getenv("UPDATE_GOLDEN") != nullptr) {
    std::ofstream(expected_path, std::ios::binary | std::ios::trunc) << actual;
    return;
  }
  EXPECT_EQ(actual, ReadFile(expected_path)) << "plan of " << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Golden, GoldenPlanTest, ::testing::ValuesIn(PlanCases()));
GTEST_ALLOW_UNINSTANTIATED_PARAMETERIZED_TEST(GoldenPlanTest);

double CpuSeconds(const std::function<void()>& body) {
  timespec a{}, b{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &a);
  body();
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &b);
  return static_cast<double>(b.tv_sec - a.tv_sec) +
         1e-9 * static_cast<double>(b.tv_nsec - a.tv_nsec);
}

// Planning a root tuple of n scalars is linear in n (issue 30: compiling one
// of 100,000 grew twice as fast per element as one of 5,000). Two steps were
// quadratic: each step's callee planning copied the bytes-live-per-step
// vector, and each result set added its size to every step it spans. The
// test plans n and 8n in one run: linear work grows about 8-fold, quadratic
// 64-fold (it measured about 40 here before), so the bound of 24 leaves room
// for a loaded machine without letting a quadratic step through.
TEST(BufferPlanScale, WideRootTuplesPlanInLinearTime) {
  auto seconds = [](int n) {
    std::string text = "HloModule wide\nENTRY main {\n  p = f32[] parameter(0)\n";
    std::string types, names;
    for (int i = 0; i < n; ++i) {
      text += "  x" + std::to_string(i) + " = f32[] negate(p)\n";
      types += (i > 0 ? ", " : "") + std::string("f32[]");
      names += (i > 0 ? ", x" : "x") + std::to_string(i);
    }
    text += "  ROOT t = (" + types + ") tuple(" + names + ")\n}\n";
    std::unique_ptr<Module> module = Parse(text);
    if (module == nullptr) return 0.0;
    double best = 1e9;
    for (int k = 0; k < 2; ++k) best = std::min(best, CpuSeconds([&] { Plan(*module); }));
    return best;
  };
  const double small = seconds(2000);
  const double large = seconds(16000);
  EXPECT_LT(large, 24 * std::max(small, 1e-3)) << "2000: " << small << " s, 16000: " << large;
}

}  // namespace
}  // namespace xjit
