// Verifier: checks that a module is well formed, so that every later stage
// (passes, evaluator, JIT) may assume it. Rules: an entry exists; names are
// unique within a computation; operands belong to the same computation and
// precede their users; parameter numbers are dense; arity matches the opcode
// table; called computations have the signatures their callers need; every
// instruction's shape equals the inferred one (layouts aside) and its layout
// is valid. The error names the computation, the instruction and the rule.
#ifndef XJIT_IR_VERIFIER_H_
#define XJIT_IR_VERIFIER_H_

#include "absl/status/status.h"
#include "ir/module.h"

namespace xjit {

absl::Status VerifyModule(const Module& module);

}  // namespace xjit

#endif  // XJIT_IR_VERIFIER_H_
