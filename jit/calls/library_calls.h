// The library calls by opcode: one table (library_calls.cc) from an opcode
// to the function that plans its call, so that the compile driver asks one
// question, FindLibraryCallPlanner, instead of keeping a list of opcodes and
// a chain of ifs in step. Adding a library call touches this room only: its
// glue in a file of its own (a planner of the LibraryCallPlanner shape) and
// one row of the table.
//
// A planner returns the call (runtime::LibraryCall: routine, function,
// plan, scratch) whose inputs are the operands' array slots, operand after
// operand, and whose outputs are the result's leaves; an error
// (Unimplemented for layouts or types the routine does not take) leaves the
// instruction to the evaluator. `description` receives what the plan will
// do, for the compile report.
//
// Not in the table: calls the driver reaches by more than the opcode
// (custom calls by target and registry, QR among them; collectives; host
// transfers; async-start, which needs a compiled subprogram; relayout
// copies, which are copies between layouts).
#ifndef XJIT_JIT_CALLS_LIBRARY_CALLS_H_
#define XJIT_JIT_CALLS_LIBRARY_CALLS_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "ir/opcode.h"
#include "jit/target.h"
#include "runtime/executable.h"

namespace xjit::jit {

// What a planner may use besides the instruction.
struct LibraryCallContext {
  // The target, for calls that compile code of their own (sort's comparator,
  // select-and-scatter's selection). Never null.
  Target* target = nullptr;
  // The executable's thread count, at least 1.
  int threads = 1;
};

using LibraryCallPlanner = absl::StatusOr<runtime::LibraryCall> (*)(
    const Instruction& instruction, const LibraryCallContext& context, std::string* description);

// The planner of `opcode`'s library call, or null when no library runs it.
LibraryCallPlanner FindLibraryCallPlanner(Opcode opcode);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CALLS_LIBRARY_CALLS_H_
