// The x86-64 loop emitter: a bound while loop (runtime/bound_while.h) as one
// function of machine code (the contract is runtime/native_loop.h's).
//
// System V calling convention only (Linux, the BSDs, macOS); elsewhere the
// emitter declines and loops stay on bound steps.
#ifndef XJIT_JIT_X64_X64_LOOP_H_
#define XJIT_JIT_X64_X64_LOOP_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "runtime/bound_while.h"
#include "runtime/native_loop.h"

namespace xjit::jit::x64 {

absl::StatusOr<runtime::NativeLoop> EmitX64Loop(absl::Span<const runtime::BoundPhase> phases,
                                                int64_t max_iterations);

}  // namespace xjit::jit::x64

#endif  // XJIT_JIT_X64_X64_LOOP_H_
