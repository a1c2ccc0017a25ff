// Shape inference: the result shape an instruction must have, from its
// opcode, its operands' shapes, its attributes and its called computations.
// Errors name the rule that failed ("dot: lhs contracting dimension 1 has
// size 3 but rhs contracting dimension 0 has size 4"); the verifier prefixes
// the instruction's name.
#ifndef XJIT_IR_SHAPE_INFERENCE_SHAPE_INFERENCE_H_
#define XJIT_IR_SHAPE_INFERENCE_SHAPE_INFERENCE_H_

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "ir/shape.h"

namespace xjit {

// The inferred shape, with the default layout on arrays. For opcodes whose
// result shape is not determined by operands (parameter, constant, iota,
// reshape, convert, bitcast, bitcast-convert, custom-call, infeed, rng,
// rng-bit-generator, fusion, ...) it checks the given shape for
// consistency with operands and returns it.
absl::StatusOr<Shape> InferShape(const Instruction& instruction);

}  // namespace xjit

#endif  // XJIT_IR_SHAPE_INFERENCE_SHAPE_INFERENCE_H_
