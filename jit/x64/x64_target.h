// The x86-64 target: KernelPrograms to machine code with asmjit, for SSE4.1,
// AVX2 + FMA + F16C, or that plus AVX-512 F/DQ/BW/VL (see x64_lowering.h for
// how programs are lowered).
#ifndef XJIT_JIT_X64_X64_TARGET_H_
#define XJIT_JIT_X64_X64_TARGET_H_

#include <memory>

#include "absl/status/statusor.h"
#include "jit/target.h"

namespace xjit::jit::x64 {

// Whether the host has the features `isa` needs (kAuto: SSE4.1).
bool HostHas(Isa isa);

// `options.isa` must not be kAuto (resolve it first) and must be supported
// by the host.
std::unique_ptr<Target> CreateX64Target(const TargetOptions& options);

}  // namespace xjit::jit::x64

#endif  // XJIT_JIT_X64_X64_TARGET_H_
