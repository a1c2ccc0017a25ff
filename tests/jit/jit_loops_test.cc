// While-loop semantics on the JIT against the evaluator, on every instruction
// set the host has, over the three ways a kWhile step runs: as emitted code
// (runtime/native_loop.h, CompileOptions::native_loops, on targets with a
// loop emitter), over bound steps (runtime/bound_steps.h, bind_loops on) and
// step by step (bind_loops off). Each case says which way its loops must have run, and
// the run's LoopCounts (runtime/run_context.h) must agree, so a case cannot
// pass on the wrong path. In guard-page mode (XJIT_GUARD_PAGES, the
// jit_loops_guarded run) every loop must run step by step.
#include <chrono>
#include <cstdint>
#include <cstring>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "jit/compile.h"
#include "jit/compile_options.h"
#include "jit/target.h"
#include "runtime/executable.h"
#include "runtime/executable_internal.h"
#include "runtime/host/interrupt.h"
#include "runtime/move_bytes.h"
#include "runtime/run_context.h"
#include "tests/jit/jit_test_util.h"

namespace xjit::jit::testing {
namespace {

// In-place state updated by a data-dependent condition: the loop stops at
// the clamped count n (negative and zero counts give zero-trip loops) or as
// soon as x[0] reaches 100 (early exit; a NaN or infinite x[0] stops it at
// once), and n passes through unchanged.
constexpr char kEarlyExit[] = R"(
HloModule early_exit

cond {
  s = (s32[], s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[8] get-tuple-element(s), index=2
  x0s = f32[1] slice(x), slice={[0:1]}
  x0 = f32[] reshape(x0s)
  below = pred[] compare(i, n), direction=LT
  small = pred[] compare(x0, f32[] constant(100)), direction=LT
  ROOT go = pred[] and(below, small)
}

body {
  s = (s32[], s32[], f32[8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=1
  x = f32[8] get-tuple-element(s), index=2
  two = f32[8] broadcast(f32[] constant(2)), dimensions={}
  one = f32[8] broadcast(f32[] constant(1)), dimensions={}
  x1 = f32[8] add(multiply(x, two), one)
  ROOT next = (s32[], s32[], f32[8]) tuple(add(i, s32[] constant(1)), n, x1)
}

ENTRY e {
  x = f32[8] parameter(0)
  n = s32[] parameter(1)
  nc = s32[] clamp(s32[] constant(-2), n, s32[] constant(40))
  init = (s32[], s32[], f32[8]) tuple(s32[] constant(0), nc, x)
  ROOT w = (s32[], s32[], f32[8]) while(init), condition=cond, body=body
}
)";

// Aliasing between the loop state and the values around it: one parameter
// is two init leaves (which then diverge), two leaves swap every iteration,
// a state leaf is returned twice, the parameter is still read after the
// loop, and the whole state is returned as well.
constexpr char kAliasing[] = R"(
HloModule aliasing

cond {
  s = (s32[], f32[4], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT
}

body {
  s = (s32[], f32[4], f32[4], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[4] get-tuple-element(s), index=1
  b = f32[4] get-tuple-element(s), index=2
  c = f32[4] get-tuple-element(s), index=3
  d = f32[4] get-tuple-element(s), index=4
  a1 = f32[4] add(a, b)
  half = f32[4] broadcast(f32[] constant(0.5)), dimensions={}
  b1 = f32[4] multiply(b, half)
  ROOT next = (s32[], f32[4], f32[4], f32[4], f32[4]) tuple(add(i, s32[] constant(1)), a1, b1, d, c)
}

ENTRY e {
  x = f32[4] parameter(0)
  y = f32[4] parameter(1)
  init = (s32[], f32[4], f32[4], f32[4], f32[4]) tuple(s32[] constant(0), x, x, x, y)
  w = (s32[], f32[4], f32[4], f32[4], f32[4]) while(init), condition=cond, body=body
  a = f32[4] get-tuple-element(w), index=1
  d = f32[4] get-tuple-element(w), index=4
  ROOT r = (f32[4], f32[4], f32[4], f32[4], (s32[], f32[4], f32[4], f32[4], f32[4])) tuple(a, a, d, x, w)
}
)";

// A condition false from the start: the body (which would change every
// leaf) never runs, and the state is the init, a parameter included.
constexpr char kZeroTrip[] = R"(
HloModule zero_trip

cond {
  s = (s32[], f32[6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

body {
  s = (s32[], f32[6]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[6] get-tuple-element(s), index=1
  ROOT next = (s32[], f32[6]) tuple(add(i, s32[] constant(1)), negate(x))
}

ENTRY e {
  x = f32[6] parameter(0)
  init = (s32[], f32[6]) tuple(s32[] constant(5), x)
  w = (s32[], f32[6]) while(init), condition=cond, body=body
  ROOT r = ((s32[], f32[6]), f32[6]) tuple(w, x)
}
)";

// A while in a while's body (outer iteration i runs 2i inner ones): the
// inner loop binds inside the outer one's bound body (over flat state
// buffers, bound once for all its runs).
constexpr char kNested[] = R"(
HloModule nested

inner_cond {
  s = (s32[], s32[], f64[5]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  twice = s32[] add(i, i)
  ROOT lt = pred[] compare(j, twice), direction=LT
}

inner_body {
  s = (s32[], s32[], f64[5]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  i = s32[] get-tuple-element(s), index=1
  a = f64[5] get-tuple-element(s), index=2
  jb = f64[5] broadcast(f64[] convert(j)), dimensions={}
  ROOT next = (s32[], s32[], f64[5]) tuple(add(j, s32[] constant(1)), i, add(multiply(a, jb), jb))
}

outer_cond {
  s = (s32[], f64[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT
}

outer_body {
  s = (s32[], f64[5]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f64[5] get-tuple-element(s), index=1
  start = (s32[], s32[], f64[5]) tuple(s32[] constant(0), i, a)
  done = (s32[], s32[], f64[5]) while(start), condition=inner_cond, body=inner_body
  a1 = f64[5] get-tuple-element(done), index=2
  ROOT next = (s32[], f64[5]) tuple(add(i, s32[] constant(1)), a1)
}

ENTRY e {
  a = f64[5] parameter(0)
  init = (s32[], f64[5]) tuple(s32[] constant(0), a)
  ROOT w = (s32[], f64[5]) while(init), condition=outer_cond, body=outer_body
}
)";

// A sampler's shape: an inner loop (leapfrog steps) in an outer one, both
// carrying a matrix and a vector that their bodies read and pass through
// unchanged. The inner loop runs on its state's leaves in the outer body's
// slots (bound_steps.cc, NestedLoop); the passed-through leaves are read
// where they lie. After the inner loop the outer body reads the inner
// loop's copy of the matrix and the operand's (`data` and `m1`), and
// updates the inner loop's copy of the vector in place (`y2`), which must
// leave the operand's vector as it was for the next outer iteration.
constexpr char kNestedPassThrough[] = R"(
HloModule nested_pass_through

inner_cond {
  s = (s32[], f32[8], f32[16,8], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(j, s32[] constant(3)), direction=LT
}

inner_body {
  s = (s32[], f32[8], f32[16,8], f32[16]) parameter(0)
  j = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  m = f32[16,8] get-tuple-element(s), index=2
  y = f32[16] get-tuple-element(s), index=3
  mx = f32[16] dot(m, x), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  r = f32[16] subtract(y, mx)
  g = f32[8] dot(r, m), lhs_contracting_dims={0}, rhs_contracting_dims={0}
  step = f32[8] broadcast(f32[] constant(0.01)), dimensions={}
  x1 = f32[8] add(x, multiply(g, step))
  ROOT next = (s32[], f32[8], f32[16,8], f32[16]) tuple(add(j, s32[] constant(1)), x1, m, y)
}

outer_cond {
  s = (s32[], f32[8], f32[16,8], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(4)), direction=LT
}

outer_body {
  s = (s32[], f32[8], f32[16,8], f32[16], f32[16]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[8] get-tuple-element(s), index=1
  m = f32[16,8] get-tuple-element(s), index=2
  y = f32[16] get-tuple-element(s), index=3
  acc = f32[16] get-tuple-element(s), index=4
  start = (s32[], f32[8], f32[16,8], f32[16]) tuple(s32[] constant(0), x, m, y)
  done = (s32[], f32[8], f32[16,8], f32[16]) while(start), condition=inner_cond, body=inner_body
  x1 = f32[8] get-tuple-element(done), index=1
  m1 = f32[16,8] get-tuple-element(done), index=2
  y1 = f32[16] get-tuple-element(done), index=3
  data = f32[16] dot(m1, x1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  y2 = f32[16] add(y1, data)
  acc1 = f32[16] add(acc, y2)
  ROOT next = (s32[], f32[8], f32[16,8], f32[16], f32[16]) tuple(add(i, s32[] constant(1)), x1, m, y, acc1)
}

ENTRY e {
  x = f32[8] parameter(0)
  m = f32[16,8] parameter(1)
  y = f32[16] parameter(2)
  zero = f32[16] broadcast(f32[] constant(0)), dimensions={}
  init = (s32[], f32[8], f32[16,8], f32[16], f32[16]) tuple(s32[] constant(0), x, m, y, zero)
  ROOT w = (s32[], f32[8], f32[16,8], f32[16], f32[16]) while(init), condition=outer_cond, body=outer_body
}
)";

// A conditional in a loop body: the branch taken alternates with the
// counter's parity. Both branches bind, so the loop does.
constexpr char kConditionalInLoop[] = R"(
HloModule conditional_in_loop

cond {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(7)), direction=LT
}

odd {
  p = f32[4] parameter(0)
  ROOT r = f32[4] negate(p)
}

even {
  p = f32[4] parameter(0)
  k = f32[4] broadcast(f32[] constant(1.5)), dimensions={}
  ROOT r = f32[4] add(p, k)
}

body {
  s = (s32[], f32[4]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[4] get-tuple-element(s), index=1
  parity = s32[] remainder(i, s32[] constant(2))
  is_odd = pred[] compare(parity, s32[] constant(1)), direction=EQ
  x1 = f32[4] conditional(is_odd, x, x), true_computation=odd, false_computation=even
  ROOT next = (s32[], f32[4]) tuple(add(i, s32[] constant(1)), x1)
}

ENTRY e {
  x = f32[4] parameter(0)
  init = (s32[], f32[4]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f32[4]) while(init), condition=cond, body=body
}
)";

// A loop in a conditional's branch, the conditional run once on c and once
// on not(c), so that the loop runs whatever the random c.
constexpr char kLoopInConditional[] = R"(
HloModule loop_in_conditional

loop_cond {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(4)), direction=LT
}

loop_body {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = s64[3] get-tuple-element(s), index=1
  ib = s64[3] broadcast(s64[] convert(i)), dimensions={}
  ROOT next = (s32[], s64[3]) tuple(add(i, s32[] constant(1)), add(a, ib))
}

looping {
  p = s64[3] parameter(0)
  init = (s32[], s64[3]) tuple(s32[] constant(0), p)
  w = (s32[], s64[3]) while(init), condition=loop_cond, body=loop_body
  ROOT r = s64[3] get-tuple-element(w), index=1
}

straight {
  p = s64[3] parameter(0)
  ROOT r = s64[3] negate(p)
}

ENTRY e {
  c = pred[] parameter(0)
  a = s64[3] parameter(1)
  nc = pred[] not(c)
  r0 = s64[3] conditional(c, a, a), true_computation=looping, false_computation=straight
  r1 = s64[3] conditional(nc, a, a), true_computation=looping, false_computation=straight
  ROOT r = (s64[3], s64[3]) tuple(r0, r1)
}
)";

// A conditional in a loop body whose taken branch holds a loop: the branch
// binds with its loop, and the outer loop with both branches.
constexpr char kLoopInConditionalInLoop[] = R"(
HloModule loop_in_conditional_in_loop

inner_cond {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

inner_body {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = s64[3] get-tuple-element(s), index=1
  ib = s64[3] broadcast(s64[] convert(i)), dimensions={}
  ROOT next = (s32[], s64[3]) tuple(add(i, s32[] constant(1)), add(a, ib))
}

looping {
  p = s64[3] parameter(0)
  init = (s32[], s64[3]) tuple(s32[] constant(0), p)
  w = (s32[], s64[3]) while(init), condition=inner_cond, body=inner_body
  ROOT r = s64[3] get-tuple-element(w), index=1
}

straight {
  p = s64[3] parameter(0)
  ROOT r = s64[3] negate(p)
}

cond {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(4)), direction=LT
}

body {
  s = (s32[], s64[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = s64[3] get-tuple-element(s), index=1
  parity = s32[] remainder(i, s32[] constant(2))
  even = pred[] compare(parity, s32[] constant(0)), direction=EQ
  a1 = s64[3] conditional(even, a, a), true_computation=looping, false_computation=straight
  ROOT next = (s32[], s64[3]) tuple(add(i, s32[] constant(1)), a1)
}

ENTRY e {
  a = s64[3] parameter(0)
  init = (s32[], s64[3]) tuple(s32[] constant(0), a)
  ROOT w = (s32[], s64[3]) while(init), condition=cond, body=body
}
)";

// Loop state of many element types (integer wrap-around, pred, 16-bit
// floats, f64) in one tuple, a nested tuple included.
constexpr char kMixedTypes[] = R"(
HloModule mixed_types

cond {
  s = (s32[], f64[3], u8[5], pred[], (bf16[4], s64[]), f16[2,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(6)), direction=LT
}

body {
  s = (s32[], f64[3], u8[5], pred[], (bf16[4], s64[]), f16[2,3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  d = f64[3] get-tuple-element(s), index=1
  u = u8[5] get-tuple-element(s), index=2
  p = pred[] get-tuple-element(s), index=3
  t = (bf16[4], s64[]) get-tuple-element(s), index=4
  h = f16[2,3] get-tuple-element(s), index=5
  b = bf16[4] get-tuple-element(t), index=0
  l = s64[] get-tuple-element(t), index=1
  dk = f64[3] broadcast(f64[] constant(1.5)), dimensions={}
  d1 = f64[3] multiply(d, dk)
  uk = u8[5] broadcast(u8[] constant(77)), dimensions={}
  u1 = u8[5] add(u, uk)
  bk = bf16[4] broadcast(bf16[] constant(0.5)), dimensions={}
  b1 = bf16[4] add(b, bk)
  l1 = s64[] add(l, s64[] convert(i))
  t1 = (bf16[4], s64[]) tuple(b1, l1)
  ROOT next = (s32[], f64[3], u8[5], pred[], (bf16[4], s64[]), f16[2,3]) tuple(add(i, s32[] constant(1)), d1, u1, not(p), t1, negate(h))
}

ENTRY e {
  d = f64[3] parameter(0)
  u = u8[5] parameter(1)
  p = pred[] parameter(2)
  b = bf16[4] parameter(3)
  l = s64[] parameter(4)
  h = f16[2,3] parameter(5)
  t = (bf16[4], s64[]) tuple(b, l)
  init = (s32[], f64[3], u8[5], pred[], (bf16[4], s64[]), f16[2,3]) tuple(s32[] constant(0), d, u, p, t, h)
  ROOT w = (s32[], f64[3], u8[5], pred[], (bf16[4], s64[]), f16[2,3]) while(init), condition=cond, body=body
}
)";

// Size-0 arrays in the loop state, beside non-empty ones, updated by the
// body and returned twice.
constexpr char kEmptyArrays[] = R"(
HloModule empty_arrays

cond {
  s = (s32[], f32[0], s32[2,0], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

body {
  s = (s32[], f32[0], s32[2,0], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  e = f32[0] get-tuple-element(s), index=1
  z = s32[2,0] get-tuple-element(s), index=2
  x = f32[3] get-tuple-element(s), index=3
  ROOT next = (s32[], f32[0], s32[2,0], f32[3]) tuple(add(i, s32[] constant(1)), add(e, e), negate(z), add(x, x))
}

ENTRY e {
  e = f32[0] parameter(0)
  z = s32[2,0] parameter(1)
  x = f32[3] parameter(2)
  init = (s32[], f32[0], s32[2,0], f32[3]) tuple(s32[] constant(0), e, z, x)
  w = (s32[], f32[0], s32[2,0], f32[3]) while(init), condition=cond, body=body
  e1 = f32[0] get-tuple-element(w), index=1
  ROOT r = ((s32[], f32[0], s32[2,0], f32[3]), f32[0], f32[0]) tuple(w, e1, e1)
}
)";

// A counter loop of exactly `trips` iterations over a small array.
std::string CountedLoop(int64_t trips) {
  return absl::StrCat(R"(
HloModule counted

cond {
  s = (s64[], f32[3]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s64[] constant()", trips, R"()), direction=LT
}

body {
  s = (s64[], f32[3]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  x = f32[3] get-tuple-element(s), index=1
  quarter = f32[3] broadcast(f32[] constant(0.25)), dimensions={}
  ROOT next = (s64[], f32[3]) tuple(add(i, s64[] constant(1)), add(x, quarter))
}

ENTRY e {
  x = f32[3] parameter(0)
  init = (s64[], f32[3]) tuple(s64[] constant(0), x)
  ROOT w = (s64[], f32[3]) while(init), condition=cond, body=body
}
)");
}

// An s32-indexed conditional of three branches in a loop, its index i - 2
// running from -2 to 6: out of range below and above (the last branch),
// and each branch in range.
constexpr char kIndexedConditionalInLoop[] = R"(
HloModule indexed_conditional_in_loop

cond {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(9)), direction=LT
}

b0 {
  p = f32[3] parameter(0)
  ROOT r = f32[3] negate(p)
}

b1 {
  p = f32[3] parameter(0)
  h = f32[3] broadcast(f32[] constant(0.5)), dimensions={}
  ROOT r = f32[3] add(p, h)
}

b2 {
  p = f32[3] parameter(0)
  t = f32[3] broadcast(f32[] constant(3)), dimensions={}
  ROOT r = f32[3] multiply(p, t)
}

body {
  s = (s32[], f32[3]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[3] get-tuple-element(s), index=1
  k = s32[] subtract(i, s32[] constant(2))
  x1 = f32[3] conditional(k, x, x, x), branch_computations={b0, b1, b2}
  ROOT next = (s32[], f32[3]) tuple(add(i, s32[] constant(1)), x1)
}

ENTRY e {
  x = f32[3] parameter(0)
  init = (s32[], f32[3]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f32[3]) while(init), condition=cond, body=body
}
)";

// Loop state leaves of every size around the emitted copies' word widths
// and their inline limit (1 to 100 bytes), swapped in pairs each iteration
// (b to a, a + 1 to b): copies between state buffers of each size.
std::string SwappedLeaves() {
  const int sizes[] = {1, 2, 3, 5, 7, 8, 12, 16, 17, 40, 56, 57, 100};
  std::string types = "s32[]", reads, next = "add(i, s32[] constant(1))", init = "s32[] constant(0)";
  std::string params;
  int k = 0;
  for (int n : sizes) {
    absl::StrAppend(&types, ", u8[", n, "], u8[", n, "]");
    absl::StrAppend(&reads, "  a", n, " = u8[", n, "] get-tuple-element(s), index=", 2 * k + 1,
                    "\n  b", n, " = u8[", n, "] get-tuple-element(s), index=", 2 * k + 2,
                    "\n  one", n, " = u8[", n, "] broadcast(u8[] constant(1)), dimensions={}\n");
    absl::StrAppend(&next, ", b", n, ", add(a", n, ", one", n, ")");
    absl::StrAppend(&params, "  p", n, " = u8[", n, "] parameter(", k, ")\n");
    absl::StrAppend(&init, ", p", n, ", p", n);
    ++k;
  }
  return absl::StrCat("HloModule swapped_leaves\n\ncond {\n  s = (", types,
                      ") parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
                      "  ROOT lt = pred[] compare(i, s32[] constant(5)), direction=LT\n}\n\n"
                      "body {\n  s = (",
                      types, ") parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n", reads,
                      "  ROOT next = (", types, ") tuple(", next, ")\n}\n\nENTRY e {\n", params,
                      "  init = (", types, ") tuple(", init, ")\n  ROOT w = (", types,
                      ") while(init), condition=cond, body=body\n}\n");
}

// A matrix product in a loop body (a library call on OpenBLAS, whose plan
// needs no run context) beside elementwise kernels. The matrices hold small
// integers, so that every partial sum is exact and the library's summation
// order cannot change a bit.
constexpr char kDotInLoop[] = R"(
HloModule dot_in_loop

cond {
  s = (s32[], f32[8,8], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

body {
  s = (s32[], f32[8,8], f32[8,8]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[8,8] get-tuple-element(s), index=1
  b = f32[8,8] get-tuple-element(s), index=2
  d = f32[8,8] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  q = f32[8,8] broadcast(f32[] constant(0.125)), dimensions={}
  a1 = f32[8,8] multiply(d, q)
  ROOT next = (s32[], f32[8,8], f32[8,8]) tuple(add(i, s32[] constant(1)), a1, b)
}

ENTRY e {
  ai = s32[8,8] parameter(0)
  bi = s32[8,8] parameter(1)
  lo = s32[8,8] broadcast(s32[] constant(-3)), dimensions={}
  hi = s32[8,8] broadcast(s32[] constant(3)), dimensions={}
  a = f32[8,8] convert(s32[8,8] clamp(lo, ai, hi))
  b = f32[8,8] convert(s32[8,8] clamp(lo, bi, hi))
  init = (s32[], f32[8,8], f32[8,8]) tuple(s32[] constant(0), a, b)
  ROOT w = (s32[], f32[8,8], f32[8,8]) while(init), condition=cond, body=body
}
)";

// A dot over state leaves that a flat buffer packs off their alignment (the
// f32 leaves follow a u8[3]): the loop's flat state (while_state_in_place
// off) and the conditional's flat argument both hand the routine misaligned
// addresses, which a bound loop stages through aligned copies as the stepped
// path does.
constexpr char kMisalignedDotInLoop[] = R"(
HloModule misaligned_dot_in_loop

cond {
  s = (u8[3], f32[5,5], f32[5,5]) parameter(0)
  c = u8[3] get-tuple-element(s), index=0
  i = u8[1] slice(c), slice={[0:1]}
  ROOT lt = pred[] compare(u8[] reshape(i), u8[] constant(3)), direction=LT
}

then {
  p = (u8[3], f32[5,5], f32[5,5]) parameter(0)
  a = f32[5,5] get-tuple-element(p), index=1
  b = f32[5,5] get-tuple-element(p), index=2
  ROOT d = f32[5,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}

else {
  p = (u8[3], f32[5,5], f32[5,5]) parameter(0)
  a = f32[5,5] get-tuple-element(p), index=1
  b = f32[5,5] get-tuple-element(p), index=2
  ROOT d = f32[5,5] dot(b, a), lhs_contracting_dims={0}, rhs_contracting_dims={1}
}

body {
  s = (u8[3], f32[5,5], f32[5,5]) parameter(0)
  c = u8[3] get-tuple-element(s), index=0
  a = f32[5,5] get-tuple-element(s), index=1
  b = f32[5,5] get-tuple-element(s), index=2
  d = f32[5,5] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c0 = u8[1] slice(c), slice={[0:1]}
  i = u8[] reshape(c0)
  odd = pred[] compare(u8[] and(i, u8[] constant(1)), u8[] constant(1)), direction=EQ
  e = f32[5,5] conditional(odd, s, s), true_computation=then, false_computation=else
  q = f32[5,5] broadcast(f32[] constant(0.25)), dimensions={}
  a1 = f32[5,5] multiply(add(d, e), q)
  one = u8[3] broadcast(u8[] constant(1)), dimensions={}
  c1 = u8[3] add(c, one)
  ROOT next = (u8[3], f32[5,5], f32[5,5]) tuple(c1, a1, b)
}

ENTRY e {
  ai = s32[5,5] parameter(0)
  bi = s32[5,5] parameter(1)
  lo = s32[5,5] broadcast(s32[] constant(-3)), dimensions={}
  hi = s32[5,5] broadcast(s32[] constant(3)), dimensions={}
  a = f32[5,5] convert(s32[5,5] clamp(lo, ai, hi))
  b = f32[5,5] convert(s32[5,5] clamp(lo, bi, hi))
  init = (u8[3], f32[5,5], f32[5,5]) tuple(u8[3] constant({0, 7, 9}), a, b)
  ROOT w = (u8[3], f32[5,5], f32[5,5]) while(init), condition=cond, body=body
}
)";

// Which ways a module's loops must run with bind_loops on: some over bound
// steps, some step by step (a loop whose body holds a while or conditional
// step, for instance). With bind_loops off, or in guard-page mode, every
// loop runs step by step.
struct Paths {
  bool bound = false;
  bool stepped = false;
};

struct JitRun {
  absl::StatusOr<Literal> result;
  int64_t bound = 0;
  int64_t stepped = 0;
  int64_t native = 0;
  int64_t native_inlined = 0;
};

// Whether bound loops run as emitted code on this host (x86-64).
bool HostEmitsLoops() { return HostLoopEmitter() != nullptr; }

JitRun RunCounted(const runtime::Executable& executable, absl::Span<const Literal> arguments) {
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  runtime::LoopCounts counts;
  runtime::RunContext context;
  context.loop_counts = &counts;
  JitRun run{executable.Run(pointers, context)};
  run.bound = counts.bound.load();
  run.stepped = counts.stepped.load();
  run.native = counts.native.load();
  run.native_inlined = counts.native_inlined.load();
  return run;
}

// Compiles (every instruction compiled: an interpreted step would keep a
// loop off the bound path for a reason the case does not intend) and runs.
JitRun RunJit(const Module& module, absl::Span<const Literal> arguments,
              const CompileOptions& options) {
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(module, options, &report);
  if (!executable.ok()) return {executable.status()};
  if (!report.interpreted_steps.empty()) {
    return {absl::InternalError(absl::StrCat("interpreted: ", report.interpreted_steps[0]))};
  }
  return RunCounted(**executable, arguments);
}

class JitLoops : public ::testing::TestWithParam<Isa> {
 protected:
  // Runs `hlo` on the evaluator and on the JIT (bind_loops on and off) for
  // a few seeds of random arguments: the same result, or the same error
  // code, and the loops on the paths `expected` says.
  void Check(absl::string_view hlo, Paths expected, int64_t max_iterations = -1) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    const bool guarded = runtime::internal::GuardPagesRequested();
    for (uint64_t seed = 1; seed <= 4; ++seed) {
      std::mt19937_64 rng(seed);
      std::vector<Literal> arguments;
      for (const Instruction* parameter : (*module)->entry()->parameters()) {
        arguments.push_back(RandomLiteral(parameter->shape(), rng));
      }
      EvaluatorOptions evaluator_options;
      evaluator_options.max_while_iterations = max_iterations;
      absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments, evaluator_options);
      // while_state_in_place off: the state lives in two flat buffers that
      // swap (bound as two phases) instead of in the while's output slots.
      // Native loops from the first iteration on (native_loop_after 0), and
      // off: bound steps alone.
      for (int mode = 0; mode < 6; ++mode) {
        const bool bind = mode < 4;
        const bool native = mode < 2;
        const bool in_place = mode % 2 == 0;
        SCOPED_TRACE(absl::StrCat("seed ", seed, " bind_loops ", bind, " native ", native,
                                  " in place ", in_place));
        CompileOptions options;
        options.isa = GetParam();
        options.bind_loops = bind;
        options.native_loops = native;
        options.native_loop_after = 0;
        options.while_state_in_place = in_place;
        options.max_while_iterations = max_iterations;
        JitRun run = RunJit(**module, arguments, options);
        ASSERT_EQ(run.result.status().code(), reference.status().code())
            << "jit: " << run.result.status() << "\nevaluator: " << reference.status();
        if (reference.ok()) {
          EXPECT_EQ(Difference(*reference, *run.result), "");
        }
        const bool may_bind = bind && !guarded;
        EXPECT_EQ(run.bound > 0, may_bind && expected.bound) << run.bound << " bound loops";
        EXPECT_EQ(run.stepped > 0, !may_bind || expected.stepped)
            << run.stepped << " loops step by step";
        EXPECT_EQ(run.native > 0, may_bind && expected.bound && native && HostEmitsLoops())
            << run.native << " native loops";
      }
    }
  }
};

TEST_P(JitLoops, EarlyExitAndZeroTripWithStateInPlace) { Check(kEarlyExit, {true, false}); }
TEST_P(JitLoops, AliasingBetweenStateAndOutputs) { Check(kAliasing, {true, false}); }
TEST_P(JitLoops, ZeroTrip) { Check(kZeroTrip, {true, false}); }
TEST_P(JitLoops, NestedLoops) {
  Check(kNested, {true, false});
  // Under a bound of 5 the outer loop's 5 iterations may run, but the inner
  // loop of its fourth needs 6: the run fails there, and the error names
  // the inner loop on both paths.
  Check(kNested, {true, false}, 5);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kNested);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(1);
  std::vector<Literal> arguments;
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  for (bool bind : {true, false}) {
    CompileOptions options;
    options.isa = GetParam();
    options.bind_loops = bind;
    options.native_loop_after = 0;
    options.max_while_iterations = 5;
    JitRun run = RunJit(**module, arguments, options);
    EXPECT_EQ(run.result.status().message(), "while loop done ran more than 5 iterations")
        << "bind_loops " << bind;
  }
}
TEST_P(JitLoops, NestedLoopsPassingStateThrough) { Check(kNestedPassThrough, {true, false}); }
TEST_P(JitLoops, ConditionalInLoop) { Check(kConditionalInLoop, {true, false}); }
TEST_P(JitLoops, IndexedConditionalInLoop) { Check(kIndexedConditionalInLoop, {true, false}); }
TEST_P(JitLoops, CopiesOfEverySize) { Check(SwappedLeaves(), {true, false}); }
TEST_P(JitLoops, LoopInConditional) { Check(kLoopInConditional, {true, false}); }
TEST_P(JitLoops, LoopInConditionalInLoop) { Check(kLoopInConditionalInLoop, {true, false}); }
TEST_P(JitLoops, LibraryCallInLoop) { Check(kDotInLoop, {true, false}); }
TEST_P(JitLoops, MisalignedLibraryCallInLoop) { Check(kMisalignedDotInLoop, {true, false}); }
TEST_P(JitLoops, MixedElementTypes) { Check(kMixedTypes, {true, false}); }
TEST_P(JitLoops, EmptyArraysInState) { Check(kEmptyArrays, {true, false}); }

// The evaluator's rule: a loop of N iterations runs with a bound of N and
// fails with ResourceExhausted under a bound of N - 1 (Check compares the
// error codes with the evaluator's, bound and step by step alike).
TEST_P(JitLoops, MaxWhileIterationsBoundary) {
  constexpr int64_t kTrips = 10;
  const std::string hlo = CountedLoop(kTrips);
  Check(hlo, {true, false}, kTrips);
  Check(hlo, {true, false}, kTrips - 1);
  Check(CountedLoop(0), {true, false}, 0);
  // The error names the loop, on both paths.
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  std::mt19937_64 rng(1);
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  for (bool bind : {true, false}) {
    CompileOptions options;
    options.isa = GetParam();
    options.bind_loops = bind;
    options.native_loop_after = 0;
    options.max_while_iterations = kTrips - 1;
    JitRun run = RunJit(**module, arguments, options);
    ASSERT_EQ(run.result.status().code(), absl::StatusCode::kResourceExhausted);
    EXPECT_EQ(run.result.status().message(), "while loop w ran more than 9 iterations");
  }
}

// A body kernel large enough to be split between threads (decided once, as
// RunKernel decides) binds as a routine that splits it (bound_steps.h), so
// the loop binds at 2 threads as at 1; it used to run step by step.
TEST_P(JitLoops, ThreadedKernelBinds) {
  // f32[32768]: 128 KiB written per iteration, over parallel_min_bytes.
  constexpr char kLarge[] = R"(
HloModule large

cond {
  s = (s32[], f32[32768]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(3)), direction=LT
}

body {
  s = (s32[], f32[32768]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f32[32768] get-tuple-element(s), index=1
  ROOT next = (s32[], f32[32768]) tuple(add(i, s32[] constant(1)), add(x, x))
}

ENTRY e {
  x = f32[32768] parameter(0)
  init = (s32[], f32[32768]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f32[32768]) while(init), condition=cond, body=body
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kLarge);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(3);
  std::vector<Literal> arguments;
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments);
  ASSERT_TRUE(reference.ok()) << reference.status();
  const bool guarded = runtime::internal::GuardPagesRequested();
  for (int threads : {1, 2}) {
    CompileOptions options;
    options.isa = GetParam();
    options.threads = threads;
    options.split_min_chunk_ns = 0;  // Split at 2 threads, however cheap the kernel.
    JitRun run = RunJit(**module, arguments, options);
    ASSERT_TRUE(run.result.ok()) << run.result.status();
    EXPECT_EQ(Difference(*reference, *run.result), "");
    EXPECT_EQ(run.bound, guarded ? 0 : 1) << threads << " threads";
    EXPECT_EQ(run.stepped, guarded ? 1 : 0) << threads << " threads";
  }
}

// An interpreted step (an s64 to f8e8m0fnu convert has no compiled code
// yet) runs through the run's evaluator, so its loop runs step by step even
// with bind_loops on; its results still match.
TEST_P(JitLoops, InterpretedStepRunsStepByStep) {
  constexpr char kConvertLoop[] = R"(
HloModule convert_loop

cond {
  s = (s64[], f8e8m0fnu[3]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s64[] constant(3)), direction=LT
}

body {
  s = (s64[], f8e8m0fnu[3]) parameter(0)
  i = s64[] get-tuple-element(s), index=0
  ib = s64[3] broadcast(i), dimensions={}
  e = f8e8m0fnu[3] convert(ib)
  ROOT next = (s64[], f8e8m0fnu[3]) tuple(add(i, s64[] constant(1)), e)
}

ENTRY e {
  x = s64[3] parameter(0)
  e = f8e8m0fnu[3] convert(x)
  init = (s64[], f8e8m0fnu[3]) tuple(s64[] constant(0), e)
  ROOT w = (s64[], f8e8m0fnu[3]) while(init), condition=cond, body=body
}
)";
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(kConvertLoop);
  ASSERT_TRUE(module.ok()) << module.status();
  std::mt19937_64 rng(5);
  std::vector<Literal> arguments;
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments);
  ASSERT_TRUE(reference.ok()) << reference.status();
  CompileOptions options;
  options.isa = GetParam();
  CompileReport report;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      Compile(**module, options, &report);
  ASSERT_TRUE(executable.ok()) << executable.status();
  ASSERT_FALSE(report.interpreted_steps.empty());
  JitRun run = RunCounted(**executable, arguments);
  ASSERT_TRUE(run.result.ok()) << run.result.status();
  EXPECT_EQ(Difference(*reference, *run.result), "");
  EXPECT_EQ(run.bound, 0);
  EXPECT_EQ(run.stepped, 1);
}

// A routine that reads the run's context (replica-id) keeps its loop step
// by step.
TEST_P(JitLoops, ContextRoutineRunsStepByStep) {
  constexpr char kReplicaLoop[] = R"(
HloModule replica_loop

cond {
  s = (u32[], u32[]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, u32[] constant(4)), direction=LT
}

body {
  s = (u32[], u32[]) parameter(0)
  i = u32[] get-tuple-element(s), index=0
  a = u32[] get-tuple-element(s), index=1
  r = u32[] replica-id()
  ROOT next = (u32[], u32[]) tuple(add(i, u32[] constant(1)), add(a, add(r, i)))
}

ENTRY e {
  a = u32[] parameter(0)
  init = (u32[], u32[]) tuple(u32[] constant(0), a)
  ROOT w = (u32[], u32[]) while(init), condition=cond, body=body
}
)";
  Check(kReplicaLoop, {false, true});
}

// Ctrl-C (RequestInterrupt) stops a loop of 2^40 iterations promptly with
// Cancelled, bound and step by step; an interrupt already requested stops
// it before the first iteration.
TEST_P(JitLoops, InterruptStopsLoop) {
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(CountedLoop(int64_t{1} << 40));
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  std::mt19937_64 rng(1);
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  for (bool bind : {true, false}) {
    SCOPED_TRACE(absl::StrCat("bind_loops ", bind));
    CompileOptions options;
    options.isa = GetParam();
    options.bind_loops = bind;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = Compile(**module, options);
    ASSERT_TRUE(executable.ok()) << executable.status();
    const auto start = std::chrono::steady_clock::now();
    std::thread interrupter([] {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
      RequestInterrupt();
    });
    JitRun run = RunCounted(**executable, arguments);
    interrupter.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ClearInterrupt();
    EXPECT_EQ(run.result.status().code(), absl::StatusCode::kCancelled) << run.result.status();
    // A loop that ignored the request would run for an hour or more.
    EXPECT_LT(seconds, 2.0);
    EXPECT_EQ(run.bound, bind && !runtime::internal::GuardPagesRequested() ? 1 : 0);
    EXPECT_EQ(run.bound + run.stepped, 1);
    // Bound, the loop turns native after native_loop_after (256) iterations:
    // the emitted code polls the flag too.
    EXPECT_EQ(run.native, run.bound > 0 && HostEmitsLoops() ? 1 : 0);

    RequestInterrupt();
    JitRun early = RunCounted(**executable, arguments);
    ClearInterrupt();
    EXPECT_EQ(early.result.status().code(), absl::StatusCode::kCancelled);
  }
}

// An executable keeps each loop as a run bound it (runtime/kept_loop.h),
// with its native code once emitted, for its next runs: later runs with other arguments (so other values, other
// trip counts and other branches), runs into other result buffers (the
// state leaves elsewhere: bound afresh), and runs from two threads at once
// (each its own binding) all give the evaluator's result.
TEST_P(JitLoops, KeptLoopsServeLaterRuns) {
  for (const char* hlo : {kLoopInConditionalInLoop, kMisalignedDotInLoop, kMixedTypes}) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
    ASSERT_TRUE(module.ok()) << module.status();
    std::vector<std::vector<Literal>> arguments;
    std::vector<Literal> expected;
    for (uint64_t seed = 1; seed <= 3; ++seed) {
      std::mt19937_64 rng(seed);
      arguments.emplace_back();
      for (const Instruction* parameter : (*module)->entry()->parameters()) {
        arguments.back().push_back(RandomLiteral(parameter->shape(), rng));
      }
      absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments.back());
      ASSERT_TRUE(reference.ok()) << reference.status();
      expected.push_back(*std::move(reference));
    }
    for (bool in_place : {true, false}) {
      SCOPED_TRACE(absl::StrCat((*module)->name(), " in place ", in_place));
      CompileOptions options;
      options.isa = GetParam();
      options.while_state_in_place = in_place;
      // Native code emitted in the middle of an early run, then run from
      // the start by later ones.
      options.native_loop_after = 3;
      absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
          Compile(**module, options);
      ASSERT_TRUE(executable.ok()) << executable.status();
      const auto run_all = [&](int rounds) {
        std::string failures;
        for (int round = 0; round < rounds; ++round) {
          for (size_t k = 0; k < arguments.size(); ++k) {
            JitRun run = RunCounted(**executable, arguments[k]);
            if (!run.result.ok()) {
              failures += run.result.status().ToString();
            } else {
              failures += Difference(expected[k], *run.result);
            }
          }
        }
        return failures;
      };
      EXPECT_EQ(run_all(2), "");
      std::string failures[2];
      std::thread other([&] { failures[1] = run_all(8); });
      failures[0] = run_all(8);
      other.join();
      EXPECT_EQ(failures[0], "");
      EXPECT_EQ(failures[1], "");
    }
  }
}

// A loop turns native at whatever iteration native_loop_after says, in
// either phase of a two-phase state, and later runs start native: each run
// gives the evaluator's result, under a bound and past it.
TEST_P(JitLoops, NativeFromAnyIteration) {
  if (!HostEmitsLoops()) GTEST_SKIP() << "no loop emitter on this target";
  if (runtime::internal::GuardPagesRequested()) GTEST_SKIP() << "loops step in guard-page mode";
  for (int64_t max_iterations : {int64_t{-1}, int64_t{10}, int64_t{5}}) {
    absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(CountedLoop(10));
    ASSERT_TRUE(module.ok()) << module.status();
    std::mt19937_64 rng(7);
    std::vector<Literal> arguments;
    arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
    EvaluatorOptions evaluator_options;
    evaluator_options.max_while_iterations = max_iterations;
    absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments, evaluator_options);
    for (int64_t after : {1, 2, 3, 9, 10, 11}) {
      for (bool in_place : {true, false}) {
        SCOPED_TRACE(absl::StrCat("after ", after, " in place ", in_place, " max ",
                                  max_iterations));
        CompileOptions options;
        options.isa = GetParam();
        options.native_loop_after = after;
        options.while_state_in_place = in_place;
        options.max_while_iterations = max_iterations;
        absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
            Compile(**module, options);
        ASSERT_TRUE(executable.ok()) << executable.status();
        for (int round = 0; round < 3; ++round) {
          JitRun run = RunCounted(**executable, arguments);
          ASSERT_EQ(run.result.status().code(), reference.status().code()) << run.result.status();
          if (reference.ok()) {
            EXPECT_EQ(Difference(*reference, *run.result), "");
          }
          // 10 iterations per run over bound steps, summed over runs: native
          // at the first iteration boundary where they reach `after` (the
          // 11th boundary of a 10-trip run is its last condition), and from
          // the start of every later run. A failed run (5 iterations under a
          // bound of 5) does not keep its loop: each starts afresh. A loop
          // on leaves (in place) is kept only where the next run's result
          // lands at the same address, which the allocator decides (never
          // under ASan's quarantine): its count may restart every run.
          const bool afresh = max_iterations == 5 ? after <= 5 : 10 >= after;
          const bool carried = max_iterations == 5 ? after <= 5 : (round + 1) * 10 >= after;
          if (in_place && run.native == (afresh ? 1 : 0)) continue;
          EXPECT_EQ(run.native, carried ? 1 : 0) << "round " << round;
        }
      }
    }
  }
}

// Scalar state held in registers (jit/x64/x64_loop_kernels.h): one-element
// kernels emitted inline in the native loop. Every element type they take,
// and the operations they lower, over 23 iterations.
constexpr char kScalarTypes[] = R"(
HloModule scalar_types

cond {
  s = (s32[], f32[], f64[], u32[], s64[], u64[], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(23)), direction=LT
}

body {
  s = (s32[], f32[], f64[], u32[], s64[], u64[], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  f = f32[] get-tuple-element(s), index=1
  d = f64[] get-tuple-element(s), index=2
  u = u32[] get-tuple-element(s), index=3
  l = s64[] get-tuple-element(s), index=4
  q = u64[] get-tuple-element(s), index=5
  p = pred[] get-tuple-element(s), index=6
  i1 = s32[] add(i, s32[] constant(1))
  fi = f32[] convert(i)
  f0 = f32[] multiply(f, f32[] constant(-0.75))
  f1 = f32[] subtract(f0, fi)
  f2 = f32[] maximum(f1, f32[] divide(f, f32[] constant(3)))
  f4 = f32[] select(p, f2, f32[] minimum(f2, negate(f)))
  f5 = f32[] add(sqrt(abs(f4)), round-nearest-even(multiply(f4, f32[] constant(0.5))))
  f3 = f32[] subtract(add(f4, floor(f5)), ceil(multiply(f5, f32[] constant(0.25))))
  d0 = f64[] divide(d, f64[] constant(1.25))
  d1 = f64[] add(d0, f64[] convert(f3))
  dge = pred[] compare(d1, d), direction=GE
  d3 = f64[] select(dge, abs(d1), negate(d1))
  d4 = f64[] add(sqrt(abs(d3)), round-nearest-even(multiply(d3, f64[] constant(1.5))))
  d2 = f64[] add(d3, subtract(floor(d4), ceil(multiply(d4, f64[] constant(-0.75)))))
  u0 = u32[] multiply(u, u32[] constant(2654435761))
  u1 = u32[] xor(u0, u32[] convert(i))
  ult = pred[] compare(u1, u), direction=LT
  u2 = u32[] select(ult, maximum(u1, u), minimum(u1, not(u)))
  l0 = s64[] subtract(l, s64[] convert(i))
  l1 = s64[] add(l0, s64[] convert(u2))
  lgt = pred[] compare(l1, l), direction=GT
  l2 = s64[] select(lgt, l1, negate(l1))
  q0 = u64[] add(q, q)
  q1 = u64[] xor(q0, u64[] convert(u2))
  qle = pred[] compare(q1, q), direction=LE
  q2 = u64[] select(qle, q1, not(q1))
  i3 = s32[] multiply(i, s32[] constant(3))
  u3 = u32[] shift-left(u2, u32[] convert(i3))
  u4 = u32[] xor(u3, shift-right-logical(u2, u32[] convert(i)))
  sa = s32[] shift-right-arithmetic(multiply(i1, s32[] constant(-77777)), i3)
  sl = s32[] shift-left(i1, subtract(s32[] constant(20), i))
  l3 = s64[] shift-right-logical(l2, s64[] convert(i3))
  l4 = s64[] add(xor(l3, shift-left(l2, s64[] convert(i))), s64[] convert(add(sa, sl)))
  pf = pred[] compare(f3, f32[] convert(d2)), direction=NE
  pi = pred[] compare(i, s32[] convert(l2)), direction=GE
  pu = pred[] compare(q2, u64[] convert(u2)), direction=GT
  p1 = pred[] xor(and(p, pf), or(pi, not(pu)))
  ROOT next = (s32[], f32[], f64[], u32[], s64[], u64[], pred[]) tuple(i1, f3, d2, u4, l4, q2, p1)
}

ENTRY e {
  f = f32[] parameter(0)
  d = f64[] parameter(1)
  u = u32[] parameter(2)
  l = s64[] parameter(3)
  q = u64[] parameter(4)
  p = pred[] parameter(5)
  init = (s32[], f32[], f64[], u32[], s64[], u64[], pred[]) tuple(s32[] constant(0), f, d, u, l, q, p)
  ROOT w = (s32[], f32[], f64[], u32[], s64[], u64[], pred[]) while(init), condition=cond, body=body
}
)";

// NaN, infinities and signed zeros through maximum, minimum, compares and
// selects (the state starts from them whatever the arguments).
constexpr char kScalarSpecials[] = R"(
HloModule scalar_specials

cond {
  s = (s32[], f32[], f32[], f64[], f64[], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(6)), direction=LT
}

body {
  s = (s32[], f32[], f32[], f64[], f64[], pred[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  a = f32[] get-tuple-element(s), index=1
  b = f32[] get-tuple-element(s), index=2
  c = f64[] get-tuple-element(s), index=3
  e = f64[] get-tuple-element(s), index=4
  p = pred[] get-tuple-element(s), index=5
  a1 = f32[] maximum(b, a)
  b1 = f32[] minimum(a, negate(b))
  c1 = f64[] maximum(e, c)
  e1 = f64[] minimum(negate(c), multiply(e, f64[] constant(-0)))
  lt = pred[] compare(a, b), direction=LT
  ne = pred[] compare(c, e), direction=NE
  eq = pred[] compare(a1, a1), direction=EQ
  p1 = pred[] or(xor(p, lt), and(ne, eq))
  a2 = f32[] select(p1, b1, a1)
  ROOT next = (s32[], f32[], f32[], f64[], f64[], pred[]) tuple(add(i, s32[] constant(1)), a2, a1, e1, c1, p1)
}

ENTRY e {
  x = f32[] parameter(0)
  init = (s32[], f32[], f32[], f64[], f64[], pred[]) tuple(s32[] constant(0), f32[] constant(nan), f32[] constant(-0), f64[] constant(inf), f64[] constant(-0), pred[] constant(false))
  w = (s32[], f32[], f32[], f64[], f64[], pred[]) while(init), condition=cond, body=body
  k = f32[] get-tuple-element(w), index=1
  init2 = (s32[], f32[], f32[], f64[], f64[], pred[]) tuple(s32[] constant(0), f32[] constant(-inf), k, f64[] constant(nan), f64[] constant(0), pred[] constant(true))
  ROOT w2 = (s32[], f32[], f32[], f64[], f64[], pred[]) while(init2), condition=cond, body=body
}
)";

// Scalars and arrays in one state: the counter's new value is read by a
// broadcast kernel and a reduction (calls) in the same body, and the
// reduction's result by an inlined kernel after them. A trip count from the
// argument (zero trips when it is negative).
constexpr char kScalarsReadByCalls[] = R"(
HloModule scalars_read_by_calls

cond {
  s = (s32[], f32[16], f32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  n = s32[] get-tuple-element(s), index=3
  ROOT lt = pred[] compare(i, n), direction=LT
}

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT r = f32[] add(x, y)
}

body {
  s = (s32[], f32[16], f32[], s32[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  v = f32[16] get-tuple-element(s), index=1
  acc = f32[] get-tuple-element(s), index=2
  n = s32[] get-tuple-element(s), index=3
  i1 = s32[] add(i, s32[] constant(1))
  c = f32[] convert(i1)
  vc = f32[16] broadcast(c), dimensions={}
  v1 = f32[16] add(v, vc)
  r = f32[] reduce(v1, f32[] constant(0)), dimensions={0}, to_apply=add
  acc1 = f32[] add(multiply(acc, f32[] constant(0.5)), r)
  ROOT next = (s32[], f32[16], f32[], s32[]) tuple(i1, v1, acc1, n)
}

ENTRY e {
  v = f32[16] parameter(0)
  m = s32[] parameter(1)
  n = s32[] remainder(m, s32[] constant(40))
  init = (s32[], f32[16], f32[], s32[]) tuple(s32[] constant(0), v, f32[] constant(0), n)
  ROOT w = (s32[], f32[16], f32[], s32[]) while(init), condition=cond, body=body
}
)";

// Inlined kernels in both branches of a conditional and after it.
constexpr char kScalarConditional[] = R"(
HloModule scalar_conditional

cond {
  s = (s32[], f64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(i, s32[] constant(9)), direction=LT
}

halve {
  p = f64[] parameter(0)
  ROOT r = f64[] multiply(p, f64[] constant(0.5))
}

grow {
  p = f64[] parameter(0)
  ROOT r = f64[] add(multiply(p, f64[] constant(3)), f64[] constant(1))
}

body {
  s = (s32[], f64[]) parameter(0)
  i = s32[] get-tuple-element(s), index=0
  x = f64[] get-tuple-element(s), index=1
  big = pred[] compare(x, f64[] constant(10)), direction=GT
  x1 = f64[] conditional(big, x, x), true_computation=halve, false_computation=grow
  ROOT next = (s32[], f64[]) tuple(add(i, s32[] constant(1)), subtract(x1, f64[] constant(0.25)))
}

ENTRY e {
  x = f64[] parameter(0)
  init = (s32[], f64[]) tuple(s32[] constant(0), x)
  ROOT w = (s32[], f64[]) while(init), condition=cond, body=body
}
)";

// Every compare direction on each type at its equality point: counters that
// step exactly through the constants compared with, each direction's
// outcome summed with its own weight.
constexpr char kScalarCompares[] = R"(
HloModule scalar_compares

cond {
  s = (f32[], f64[], u32[], s64[], s32[]) parameter(0)
  c = f32[] get-tuple-element(s), index=0
  ROOT lt = pred[] compare(c, f32[] constant(12)), direction=LT
}

body {
  s = (f32[], f64[], u32[], s64[], s32[]) parameter(0)
  c = f32[] get-tuple-element(s), index=0
  d = f64[] get-tuple-element(s), index=1
  m = u32[] get-tuple-element(s), index=2
  l = s64[] get-tuple-element(s), index=3
  k = s32[] get-tuple-element(s), index=4
  c1 = f32[] add(c, f32[] constant(1))
  d1 = f64[] add(d, f64[] constant(0.5))
  m1 = u32[] add(m, u32[] constant(1))
  l1 = s64[] subtract(l, s64[] constant(1))
  p0 = pred[] compare(c1, f32[] constant(6)), direction=LE
  p1 = pred[] compare(d1, f64[] constant(3)), direction=GE
  p2 = pred[] compare(c1, f32[] constant(9)), direction=GT
  p3 = pred[] compare(d1, f64[] constant(4)), direction=EQ
  p4 = pred[] compare(c1, f32[] constant(7)), direction=NE
  p5 = pred[] compare(d1, f64[] constant(2)), direction=LT
  p6 = pred[] compare(m1, u32[] constant(5)), direction=LE
  p7 = pred[] compare(m1, u32[] constant(8)), direction=GE
  p8 = pred[] compare(l1, s64[] constant(-4)), direction=LT
  p9 = pred[] compare(l1, s64[] constant(-6)), direction=GT
  pa = pred[] compare(l1, s64[] constant(-3)), direction=EQ
  pb = pred[] compare(m1, u32[] constant(4294967295)), direction=LT
  w0 = s32[] select(p0, s32[] constant(1), s32[] constant(0))
  w1 = s32[] select(p1, s32[] constant(2), s32[] constant(0))
  w2 = s32[] select(p2, s32[] constant(4), s32[] constant(0))
  w3 = s32[] select(p3, s32[] constant(8), s32[] constant(0))
  w4 = s32[] select(p4, s32[] constant(16), s32[] constant(0))
  w5 = s32[] select(p5, s32[] constant(32), s32[] constant(0))
  w6 = s32[] select(p6, s32[] constant(64), s32[] constant(0))
  w7 = s32[] select(p7, s32[] constant(128), s32[] constant(0))
  w8 = s32[] select(p8, s32[] constant(256), s32[] constant(0))
  w9 = s32[] select(p9, s32[] constant(512), s32[] constant(0))
  wa = s32[] select(pa, s32[] constant(1024), s32[] constant(0))
  wb = s32[] select(pb, s32[] constant(2048), s32[] constant(0))
  t0 = s32[] add(add(add(w0, w1), add(w2, w3)), add(add(w4, w5), add(w6, w7)))
  t1 = s32[] add(add(w8, w9), add(wa, wb))
  k1 = s32[] add(multiply(k, s32[] constant(3)), add(t0, t1))
  ROOT next = (f32[], f64[], u32[], s64[], s32[]) tuple(c1, d1, m1, l1, k1)
}

ENTRY e {
  init = (f32[], f64[], u32[], s64[], s32[]) tuple(f32[] constant(0), f64[] constant(0), u32[] constant(0), s64[] constant(0), s32[] constant(0))
  ROOT w = (f32[], f64[], u32[], s64[], s32[]) while(init), condition=cond, body=body
}
)";

// Checks `hlo` natively from the first iteration, state in place and in two
// phases, against the evaluator: with inline_loop_kernels the loop must run
// with kernels inline (LoopCounts::native_inlined), without it must not.
void CheckInlined(absl::string_view hlo, Isa isa, int64_t max_iterations = -1) {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseVerified(hlo);
  ASSERT_TRUE(module.ok()) << module.status();
  for (uint64_t seed = 1; seed <= 3; ++seed) {
    std::mt19937_64 rng(seed);
    std::vector<Literal> arguments;
    for (const Instruction* parameter : (*module)->entry()->parameters()) {
      arguments.push_back(RandomLiteral(parameter->shape(), rng));
    }
    EvaluatorOptions evaluator_options;
    evaluator_options.max_while_iterations = max_iterations;
    absl::StatusOr<Literal> reference = EvaluateModule(**module, arguments, evaluator_options);
    for (bool inline_kernels : {true, false}) {
      for (bool in_place : {true, false}) {
        SCOPED_TRACE(absl::StrCat("seed ", seed, " inline ", inline_kernels, " in place ",
                                  in_place));
        CompileOptions options;
        options.isa = isa;
        options.native_loop_after = 0;
        options.inline_loop_kernels = inline_kernels;
        options.while_state_in_place = in_place;
        options.max_while_iterations = max_iterations;
        JitRun run = RunJit(**module, arguments, options);
        ASSERT_EQ(run.result.status().code(), reference.status().code())
            << "jit: " << run.result.status() << "\nevaluator: " << reference.status();
        if (reference.ok()) {
          EXPECT_EQ(Difference(*reference, *run.result), "");
        }
        EXPECT_GT(run.native, 0);
        EXPECT_EQ(run.native_inlined > 0, inline_kernels) << run.native_inlined;
      }
    }
  }
}

TEST_P(JitLoops, InlinedScalarState) {
  if (!HostEmitsLoops()) GTEST_SKIP() << "no loop emitter on this target";
  if (runtime::internal::GuardPagesRequested()) GTEST_SKIP() << "loops step in guard-page mode";
  CheckInlined(kScalarTypes, GetParam());
  CheckInlined(kScalarSpecials, GetParam());
  CheckInlined(kScalarCompares, GetParam());
  CheckInlined(kScalarsReadByCalls, GetParam());
  CheckInlined(kScalarConditional, GetParam());
  // ResourceExhausted from the register path: 9 iterations needed, 8 and 9
  // allowed.
  CheckInlined(kScalarConditional, GetParam(), 8);
  CheckInlined(kScalarConditional, GetParam(), 9);
}

// An interrupt stops a loop whose state is in registers.
TEST_P(JitLoops, InterruptStopsInlinedLoop) {
  if (!HostEmitsLoops()) GTEST_SKIP() << "no loop emitter on this target";
  if (runtime::internal::GuardPagesRequested()) GTEST_SKIP() << "loops step in guard-page mode";
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseVerified(CountedLoop(int64_t{1} << 40));
  ASSERT_TRUE(module.ok()) << module.status();
  std::vector<Literal> arguments;
  std::mt19937_64 rng(1);
  arguments.push_back(RandomLiteral((*module)->entry()->parameters()[0]->shape(), rng));
  CompileOptions options;
  options.isa = GetParam();
  options.native_loop_after = 0;
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable = Compile(**module, options);
  ASSERT_TRUE(executable.ok()) << executable.status();
  std::thread interrupter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    RequestInterrupt();
  });
  JitRun run = RunCounted(**executable, arguments);
  interrupter.join();
  ClearInterrupt();
  EXPECT_EQ(run.result.status().code(), absl::StatusCode::kCancelled) << run.result.status();
  EXPECT_EQ(run.native_inlined, 1);
}

// MoveBytes (the copies of bound loops) is memmove: every size around its
// word and 16-byte piece boundaries up to past the inline limit (128),
// ranges apart and overlapping either way.
TEST(MoveBytes, IsMemmove) {
  for (size_t bytes = 0; bytes <= 140; ++bytes) {
    for (int shift : {-40, -17, -16, -5, -1, 0, 1, 5, 15, 16, 33}) {
      uint8_t expected[256], actual[256];
      for (int i = 0; i < 256; ++i) expected[i] = actual[i] = static_cast<uint8_t>(i * 7 + 1);
      std::memmove(expected + 48 + shift, expected + 48, bytes);
      runtime::MoveBytes(actual + 48 + shift, actual + 48, bytes);
      EXPECT_EQ(std::memcmp(expected, actual, sizeof(actual)), 0)
          << bytes << " bytes shifted by " << shift;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, JitLoops, ::testing::ValuesIn(HostIsas()),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(IsaName(info.param));
                         });

}  // namespace
}  // namespace xjit::jit::testing
