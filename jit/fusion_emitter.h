// The loop-fusion emitter: lowers a fused computation of elementwise and
// data-movement operations (or one such instruction alone) to a
// KernelProgram. It knows HLO semantics and index arithmetic, and nothing
// about any machine.
//
// Each instruction is emitted "elementally": to get the value of an
// instruction at a multi-index, the emitter asks for its operands' values at
// the indices the operation maps that index to (broadcast drops dimensions,
// transpose permutes them, slice scales and shifts them, pad and concatenate
// select between operands under index conditions, ...). Requests are
// memoised by (instruction, index), so a value used twice is computed once.
// Indices that only feed a guarded select (pad, concatenate, dynamic update)
// are clamped into their operand, so no load ever leaves its buffer.
//
// Supported: arrays of pred, every integer width (sub-byte types one element
// per byte), f16, bf16, f32, f64 with plain layouts (minor_to_major only: no
// tiles, no padding, no packed sub-byte elements), static shapes. Anything
// else is Unimplemented, and the driver runs the instruction through the
// evaluator instead.
#ifndef XJIT_JIT_FUSION_EMITTER_H_
#define XJIT_JIT_FUSION_EMITTER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "jit/kernel_program.h"

namespace xjit::jit {

struct KernelSpec {
  KernelProgram program;
  // The instruction whose value each input buffer holds, in buffer order:
  // operands of the computed instruction (or of the fusion instruction), or
  // constants inside a fused computation.
  std::vector<const Instruction*> inputs;
};

// The kernel computing `instruction` alone from its operands.
absl::StatusOr<KernelSpec> EmitInstructionKernel(const Instruction& instruction);

// The kernel of a loop fusion instruction (opcode kFusion): its fused
// computation's parameter k reads the fusion's operand k.
absl::StatusOr<KernelSpec> EmitFusionKernel(const Instruction& fusion);

// Whether the emitter accepts arrays of this shape as kernel inputs/outputs.
bool IsKernelCompatibleShape(const Shape& shape);

}  // namespace xjit::jit

#endif  // XJIT_JIT_FUSION_EMITTER_H_
