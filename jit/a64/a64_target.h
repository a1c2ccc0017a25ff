// The AArch64 target: KernelPrograms to machine code with asmjit's a64
// backend, scalar code plus NEON (Advanced SIMD, 128-bit) vector loops (see
// a64_lowering.h for how programs are lowered).
#ifndef XJIT_JIT_A64_A64_TARGET_H_
#define XJIT_JIT_A64_A64_TARGET_H_

#include <memory>

#include "jit/target.h"

namespace xjit::jit::a64 {

// `options.isa` must be kNeon (the driver resolves kAuto first).
std::unique_ptr<Target> CreateA64Target(const TargetOptions& options);

}  // namespace xjit::jit::a64

#endif  // XJIT_JIT_A64_A64_TARGET_H_
