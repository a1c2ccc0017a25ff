// The compile driver's glue for HLO `cholesky` and `triangular-solve`, and
// for XLA's `Qr` and `ProductOfElementaryHouseholderReflectors` custom calls:
// library-call steps running runtime/linalg (OpenBLAS's ?potrf, ?trsm,
// ?geqrf, ?orgqr / ?ungqr) with plans made at compile time. Unimplemented
// (the driver then interprets the instruction) for types or layouts the
// plans do not take.
#ifndef XJIT_JIT_LINALG_CALL_H_
#define XJIT_JIT_LINALG_CALL_H_

#include <string>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/executable.h"

namespace xjit::jit {

// Whether `opcode` is one PlanLinalgCall takes.
bool IsLinalgCall(Opcode opcode);

// Whether `instruction` is a custom-call of target Qr or
// ProductOfElementaryHouseholderReflectors that no handler is registered
// for (typed or untyped, in the global registries): XLA's QR, which
// PlanLinalgCall takes. A registered handler takes precedence, as for TopK.
bool IsQrCustomCall(const Instruction& instruction);

// The library call computing `instruction` (cholesky, triangular-solve, or
// a custom call IsQrCustomCall accepts):
// inputs are its operands' slots, the output its result's. `threads`: the
// OpenBLAS threads the call may use. `description`, if not null, receives
// the plan in words.
absl::StatusOr<runtime::LibraryCall> PlanLinalgCall(const Instruction& instruction, int threads,
                                                    std::string* description);

}  // namespace xjit::jit

#endif  // XJIT_JIT_LINALG_CALL_H_
