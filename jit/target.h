// Target: turns KernelPrograms into machine code for one instruction set.
//
// The fusion emitter above this interface knows nothing about machines; a
// target (jit/x64/ for x86-64, jit/a64/ for AArch64; the host's is built)
// implements the kernel program's operations: loads, stores and broadcasts,
// arithmetic, compare and select, conversions, and the loop nest, choosing
// per kernel whether the innermost loop runs several elements at once.
// Lower returns Unimplemented for an operation or type it has no code for;
// the driver then falls back to the evaluator, so a target never needs to be
// complete to be correct.
#ifndef XJIT_JIT_TARGET_H_
#define XJIT_JIT_TARGET_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "jit/compile_options.h"
#include "jit/kernel/kernel_program.h"
#include "runtime/executable.h"

namespace xjit::jit {

struct LoweredKernel {
  runtime::KernelFunction function = nullptr;
  const void* code = nullptr;  // Start of the machine code.
  int64_t code_size = 0;
  // Elements per iteration of the innermost loop's main part (1 = scalar).
  int vector_lanes = 1;
  std::string asm_text;  // When collected.
  // When collected (TargetOptions::collect_op_offsets): (code offset, op id)
  // where the code of each emitted copy of a program operation begins.
  std::vector<std::pair<int64_t, int>> op_offsets;
};

class Target {
 public:
  virtual ~Target() = default;
  // "x86-64 sse4.1", "x86-64 avx2", "x86-64 avx512", "aarch64 neon".
  virtual std::string name() const = 0;
  virtual absl::StatusOr<LoweredKernel> Lower(const KernelProgram& program) = 0;
  // Whether kFma (a*b+c rounded once) is a native instruction. ExpandMath
  // uses it for polynomials and exact products only then; otherwise it
  // emits no kFma at all (see jit/kernel/vector_math.h).
  virtual bool HasFusedMultiplyAdd() const { return false; }
  // Whether kScale (x * 2^n, one rounding) is a native instruction; ExpandMath
  // emits kScale only then (MathOptions::native_scale).
  virtual bool HasNativeScale() const { return false; }
  // Whether Lower accepts the f32/f64 math operations that ExpandMath
  // leaves with MathOptions::out_of_line (exp, sin, ... as kUnary/kBinary):
  // the target calls a routine per function, type and vector width, built
  // once per process from the same expansion (docs/compile_time.md gives
  // the calling convention). A target without them gets expanded math.
  virtual bool HasOutOfLineMath() const { return false; }
  // Whether Lower accepts row programs: a reduce whose result is broadcast
  // back along its reduced dimensions fused with the loop that reads it, one
  // program making several passes over a row (passes/fuse.h,
  // FuseOptions::row_fusion). The driver asks fusion for row fusions only
  // then, so a target without them never sees one.
  virtual bool HasRowPrograms() const { return false; }
  // Whether Lower vectorises a loop whose loads are not all affine along it
  // by computing their positions lane by lane and gathering
  // (jit/kernel/lane_positions.h). The emitter then merges a short minor
  // dimension into the loop even where that breaks affinity (a broadcast
  // along it); a target without gathers keeps the separate loops.
  virtual bool HasGathers() const { return false; }
  // Whether Lower supports KernelProgram::claims_range and kSkipUnless
  // (a scatter's kernel split between threads by target rows).
  virtual bool HasRangeClaims() const { return false; }
  // Owns the memory of every kernel lowered so far; kernels stay valid while
  // a reference is held.
  virtual std::shared_ptr<const void> code_owner() const = 0;
};

struct TargetOptions {
  Isa isa = Isa::kAuto;
  bool collect_asm = false;
  // Record where each program operation's code begins (jitdump line tables).
  bool collect_op_offsets = false;
};

// The target for the host machine. InvalidArgument if `options.isa` asks for
// an instruction set the host lacks, Unimplemented on a host architecture
// without a target.
absl::StatusOr<std::unique_ptr<Target>> CreateHostTarget(const TargetOptions& options);

// Whether the host can run code for `isa` (kAuto: always).
bool HostSupportsIsa(Isa isa);
// The instruction set kAuto resolves to on this host.
Isa BestHostIsa();

// The host's emitter of bound while loops as machine code
// (runtime/native_loop.h): x86-64's; null on AArch64, whose bound loops stay
// on bound steps (docs/aarch64.md).
runtime::EmitNativeLoopFunction HostLoopEmitter();

}  // namespace xjit::jit

#endif  // XJIT_JIT_TARGET_H_
