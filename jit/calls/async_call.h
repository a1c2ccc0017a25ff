// The compile driver's glue for the generic asynchronous wrapper
// `async-start(operands...), calls=C` (XLA's form for reduce-scatter,
// all-to-all and other asynchronous collectives): a library-call step that
// runs C, compiled as an executable of its own, with the run's context (so
// a collective inside meets the other replicas), at the start — the
// evaluator's rule. async-update and async-done copy (compile.cc).
//
// The step's inputs are the array operands' slots (a token operand, as
// around send/recv, has none and passes no bytes), its
// outputs the leaves of ((operands...), result, context...): the operands
// are copied into element 0, C's result is written into element 1, any
// further (context) elements are zeroed, as the evaluator makes them.
#ifndef XJIT_JIT_ASYNC_CALL_H_
#define XJIT_JIT_ASYNC_CALL_H_

#include <memory>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

absl::StatusOr<runtime::LibraryCall> PlanAsyncCall(
    const Instruction& async_start, std::shared_ptr<const runtime::Executable> callee);

}  // namespace xjit::jit

#endif  // XJIT_JIT_ASYNC_CALL_H_
