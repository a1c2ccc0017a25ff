// Verifier: checks that a module is well formed, so that every later stage
// (passes, evaluator, JIT) may assume it. Rules: an entry exists; names are
// unique within a computation; operands belong to the same computation and
// precede their users; parameter numbers are dense; arity matches the opcode
// table; called computations have the signatures their callers need; every
// instruction's shape equals the inferred one (layouts aside) and its layout
// is valid; no array needs more than kMaxArrayBytes (layout_util.h), with
// padding and tiles; operands and control predecessors form no cycle; calls
// nest at most kMaxCallDepth deep. The error names the computation, the
// instruction and the rule.
#ifndef XJIT_IR_VERIFIER_H_
#define XJIT_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/module.h"

namespace xjit {

// How deeply computations may call computations (call, fusion, while,
// conditional, map, reduce...: the entry is depth 1). The evaluator and the
// compiler walk nested computations recursively; with this bound, a deep
// module fits the stack they then run on (runtime/host/large_stack.h) in
// every build, sanitizers included. Real programs nest a few levels.
inline constexpr int kMaxCallDepth = 256;

absl::Status VerifyModule(const Module& module);

// The verifier's rules for one shape, alone: sizes non-negative (or
// unbounded), element counts and byte sizes in range, every array layout
// valid (tiles, padding, element sizes). For shapes that come from outside
// a module (the C API's xjit_shape_parse), so that a caller never sizes a
// buffer from a shape that no module may have.
absl::Status VerifyShape(const Shape& shape);

}  // namespace xjit

#endif  // XJIT_IR_VERIFIER_H_
