// Which kernel-program operations have a vector form on every target, and
// the one lane type a vector loop computes in. Both targets (jit/x64/,
// jit/a64/) decide whether a loop vectorises with these, adding only what
// depends on their instruction set (FMA, per-lane shifts, which conversions
// they have code for, calls), so the two cannot drift apart on the rest.
//
// A vector program has one lane width W for every value: at most one float
// type (f32 or f64, of width W), integers of width W of either signedness,
// and preds (lane masks of width W; a program of preds only uses byte
// masks). Loads run along the loop at stride 0 (broadcast) or 1, stores at
// stride 1. A target that widens f16/bf16 into f32 lanes (x86-64: loads
// widen, every rounding operation rounds to the 16-bit type, stores narrow)
// asks LaneType to count them as f32 (LaneType(true), LaneComputeType).
#ifndef XJIT_JIT_VECTOR_FORMS_H_
#define XJIT_JIT_VECTOR_FORMS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/element_type.h"
#include "ir/opcode.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

// The lane type of a vector program, built up from its values' types.
class LaneType {
 public:
  // `widen_16bit_floats`: f16 and bf16 values live in f32 lanes (they count
  // as f32 here); otherwise they have no vector form.
  explicit LaneType(bool widen_16bit_floats = false) : widen_16bit_floats_(widen_16bit_floats) {}
  // Adds the type of a value; false when it cannot share lanes with those
  // added before (another width, a second float type, f16/bf16 unless
  // widened, complex). Preds fit any width.
  bool Add(ElementType type);
  // The width W in bits (8 when only preds were added).
  int width() const { return width_.value_or(8); }
  // The float type if any, else the first integer type, else u8.
  ElementType type() const;

 private:
  bool widen_16bit_floats_ = false;
  std::optional<int> width_;
  std::optional<ElementType> float_type_;
  std::optional<ElementType> int_type_;
};

// The type a value of `type` is computed in by a target that widens
// f16/bf16 into f32 lanes: f32 for those two, `type` itself otherwise.
ElementType LaneComputeType(ElementType type);

// Elementwise unary opcodes with vector code on every target for an operand
// and result of `type` (integer or f32/f64; pred: not only).
bool HasVectorUnary(ElementType type, Opcode opcode);
// Elementwise binary opcodes with vector code on every target for operands
// and result of `type` (pred, integer or f32/f64). Integer shifts are
// included: a target without per-lane shifts refuses them itself.
bool HasVectorBinary(ElementType type, Opcode opcode);
// Whether a comparison of `op.operand_type` with `op.comparison` has vector
// code (float comparisons, signed/unsigned integers, preds).
bool HasVectorCompare(const KOp& op);
// Loads, stores and kFromIndex: whether the position (or index) moves along
// the vector loop as vector code needs (`strides`: InnerStrides or
// StridesAlong). Other operations: true.
bool HasVectorAccess(const KOp& op, const std::vector<std::optional<int64_t>>& strides);

}  // namespace xjit::jit

#endif  // XJIT_JIT_VECTOR_FORMS_H_
