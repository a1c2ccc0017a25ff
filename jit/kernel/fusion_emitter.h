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
// Reductions: a `reduce` (alone, or the root or a root tuple element of a
// kInput fusion) becomes output loops over its result followed by reduction
// loops over the reduced dimensions, with one accumulator per reduce result
// (see KernelProgram); the reducer's instructions (elementwise operations on
// scalars, variadic reducers included) are inlined into the loop body and
// its producers are emitted elementally at the reduced index. Multi-output
// kernels: a root tuple gives one output buffer per element, in order
// (elements of a loop fusion share dimensions; in an input fusion, all
// reduces reduce the same dimensions of inputs of one size, and the other
// elements have the reduce input's dimensions, stored from the loop body,
// or its result's). A variadic reduce's results are consecutive outputs.
//
// Supported: arrays of pred, every integer width (sub-byte types one element
// per byte), f16, bf16, f32, f64, c64, c128 with plain layouts (minor_to_major
// only: no tiles, no padding, no packed sub-byte elements), static shapes.
// Complex values are pairs of component values in the program, and complex
// buffers are declared as component-type buffers of twice the elements
// (element k at positions 2k, 2k+1); only some complex operations are
// supported (docs/jit.md). Anything else is Unimplemented, and the driver
// runs the instruction through the evaluator instead.
#ifndef XJIT_JIT_FUSION_EMITTER_H_
#define XJIT_JIT_FUSION_EMITTER_H_

#include <vector>

#include "absl/status/statusor.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

struct KernelSpec {
  // Buffers: `inputs` (below), then `output_count` outputs: output k is tuple
  // element k of the computed value (a single array: one output).
  KernelProgram program;
  int output_count = 1;  // == program.output_count.
  // The instruction whose value each input buffer holds, in buffer order:
  // operands of the computed instruction (or of the fusion instruction), or
  // constants inside a fused computation.
  std::vector<const Instruction*> inputs;
  // Per input: -1 when it holds the whole (array) value, k when it holds
  // tuple element k of it (a variadic scatter reading its own outputs).
  std::vector<int> input_elements;
  // Empty: the kernel writes its outputs whole. Otherwise it writes only part
  // of them, and output k must hold the bytes of operand start_operands[k]
  // (of the computed instruction or fusion) when it starts: a scatter (output
  // k from operand k, variadic too; a scatter fusion from the operand its
  // scatter starts from) and a dynamic-update-slice. The driver copies them
  // there unless the output is that operand's buffer.
  std::vector<int64_t> start_operands;
};

// What the target lowering a kernel can do, for the emitter's choices.
struct EmitTarget {
  // Target::HasGathers: a merged loop nest whose positions are not affine
  // along the merged loop is kept when the target can gather them
  // (GatherableAlongInnermost, jit/kernel/lane_positions.h).
  bool gathers = false;
  // Target::HasRangeClaims: a scatter's kernel may claim target rows
  // (KernelProgram::claims_range), so that threads can share it.
  bool range_claims = false;
};

// The kernel computing `instruction` alone from its operands.
absl::StatusOr<KernelSpec> EmitInstructionKernel(const Instruction& instruction,
                                                 EmitTarget target = {});

// The kernel of a loop or input fusion instruction (opcode kFusion, kind
// kLoop or kInput): its fused computation's parameter k reads the fusion's
// operand k.
// With `only_output` >= 0, the kernel computes that output alone (leaf
// `only_output` of the fusion's value): how the driver runs a multi-output
// fusion whose outputs one loop nest cannot produce together (outputs of
// different dimensions), as one kernel per output.
absl::StatusOr<KernelSpec> EmitFusionKernel(const Instruction& fusion, int only_output = -1,
                                            EmitTarget target = {});

// A loop fusion whose root is a concatenate along the output's minor-most
// dimension (of size > 1) selects between its operands inside the inner
// loop, which keeps the kernel scalar, and computes every operand at every
// element (clamped). ConcatenateParts gives the number of operands of such
// a fusion (0 for any other instruction); EmitConcatenatePart the kernel of
// one operand's part of the output: a loop nest over that operand's
// dimensions storing at its offset along the concatenated dimension. The
// parts are disjoint and together cover the output, so the driver may run
// them one after another instead of the fusion's kernel.
int ConcatenateParts(const Instruction& fusion);
absl::StatusOr<KernelSpec> EmitConcatenatePart(const Instruction& fusion, int part);

// The kernel of a computation on its own (a sort's comparator): parameter k
// is input buffer k (spec.inputs[k] is the parameter instruction), constants
// it reads come after the parameters, then the root's outputs (a tuple root:
// one per element). A rank-0 root gives a kernel without loops.
absl::StatusOr<KernelSpec> EmitComputationKernel(const Computation& computation);

// Whether the emitter accepts arrays of this shape as kernel inputs/outputs.
bool IsKernelCompatibleShape(const Shape& shape);

}  // namespace xjit::jit

#endif  // XJIT_JIT_FUSION_EMITTER_H_
