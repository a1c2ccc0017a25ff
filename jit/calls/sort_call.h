// The compile driver's glue for HLO `sort`: a library-call step running
// runtime/sort with the comparator compiled as a kernel of its own.
//
// The comparator computation becomes a kernel without loops
// (EmitComputationKernel) whose inputs are its 2N scalar parameters (then
// the constants it reads) and whose output is its pred result; the runtime
// routine calls it for every comparison of the evaluator's merge sort, so
// results equal the evaluator's bit for bit. A comparator of the forms
// jit/calls/sort_comparator.h recognises also gives the plan its keys: slices are
// then sorted by integer keys (runtime/sort/key_sort.h), with the same
// result. Unimplemented (the driver then
// interprets the sort) when the comparator has no kernel or has side
// effects, or when a shape is not a plain array.
#ifndef XJIT_JIT_SORT_CALL_H_
#define XJIT_JIT_SORT_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "jit/target.h"
#include "runtime/executable.h"

namespace xjit::jit {

// The library call computing `sort` (opcode kSort): inputs are its operands'
// slots, outputs its result's leaves (one per operand). `description`, if
// not null, receives the plan in words. `threads`: how many threads may
// share the slices of a large sort.
absl::StatusOr<runtime::LibraryCall> PlanSortCall(const Instruction& sort, Target& target,
                                                  int threads, std::string* description);

// The library call computing `topk` (runtime/sort/topk.h: a selection of
// the k first in the evaluator's order, not a full sort): input its
// operand's slot, outputs the values' and indices' leaves. Unimplemented
// (the driver then interprets it) for element types or layouts the runtime
// does not handle; expand-topk turns those into a sort beforehand.
absl::StatusOr<runtime::LibraryCall> PlanTopKCall(const Instruction& topk, int threads,
                                                  std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_SORT_CALL_H_
