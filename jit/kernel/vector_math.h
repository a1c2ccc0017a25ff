// Vector math: rewrites the transcendental opcodes of a KernelProgram into
// primitive operations every target has (arithmetic, compare/select,
// round-to-integer, constants, fused multiply-add, integer arithmetic and
// shifts on the bits of float lanes), so a target vectorises exp or atan2 like
// an add, with no per-element calls, and a new target gets them for free.
//
// Expanded (f32 and f64; f16 and bf16 are computed in f32 and rounded once
// to their type at the end): exp, exponential-minus-one, log, log-plus-one,
// tanh, logistic, sine, cosine, tan, atan2, erf, power, cbrt, rsqrt, atan,
// asin, acos (through atan2), sinh, cosh, asinh, acosh, atanh (through exp and
// log1p). sqrt is already primitive.
//
// Accuracy (measured by tests/jit/jit_math_accuracy_test.cc against a long
// double reference over the whole range, special values included; the
// bounds asserted there): at most 2 ulp for f32 exp, log, tanh and
// logistic, at most 4 ulp for every other function and for f64, with or
// without fused multiply-add. sin, cos and tan reduce their argument by
// k pi/2 (pi/2 in four parts, exact products, double-word sums): the bound
// holds for |x| <= 2^22 (f32) and |x| <= 2^51 (f64), where k is exact; beyond
// that the results are finite (sin and cos in [-1, 1]) but not accurate
// (there is no Payne-Hanek reduction for huge arguments). Special values
// follow C's <math.h> (the evaluator's libm): NaN in, NaN out; exp(-inf) = 0,
// log(0) = -inf, log(x < 0) = NaN, tanh(+-inf) = +-1, pow's and atan2's
// special cases of C99 Annex F, signed zeros kept (sin(-0) = -0, ...).
//
// The coefficients are minimax fits derived by jit/kernel/vector_math_fit.py
// (jit/kernel/vector_math_coefficients.h).
#ifndef XJIT_JIT_VECTOR_MATH_H_
#define XJIT_JIT_VECTOR_MATH_H_

#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

struct MathOptions {
  // Whether the target has a native fused multiply-add (kFma). With it,
  // polynomials use kFma and exact products are one kFma; without it,
  // polynomials round the product and the sum separately (the accuracy
  // bounds above hold either way) and exact products use Dekker's splitting.
  bool fused_multiply_add = false;
  // Out-of-line math (docs/compile_time.md): leave every f32/f64 math
  // operation (see IsExpandedMathOp; f16 and bf16 ones converted to f32 and
  // back around it) as the kUnary/kBinary operation it is, for a target
  // whose Target::HasOutOfLineMath() is true to call its routine for that
  // function, type and width. Integer power is expanded either way.
  bool out_of_line = false;
  // Whether the target has kScale (x * 2^n for an integer-valued n, one
  // rounding): exp and the functions built on it then scale their result
  // with it instead of two multiplications by built powers of two (the
  // same bits: both round once).
  bool native_scale = false;
};

// The routine kernels call for an out-of-line math operation computes
// exactly what its inline expansion computes: targets build it from the
// expansion of MathRoutineProgram (ExpandMath, inline, on the same
// options otherwise). The program reads its operand(s) from input buffers
// 0 (and 1) at the loop index and stores the result: `lanes` elements.
KernelProgram MathRoutineProgram(Opcode opcode, ElementType type, int64_t lanes);

// The rule for choosing out-of-line math for one kernel when the options
// leave it to the compiler (MathLowering::kAuto): a kernel with at least
// kOutOfLineMathMinOps math operations calls routines, one with fewer
// expands them inline (measured, docs/compile_time.md: a call spills the
// vector registers live across it, which costs a short kernel more than
// the expansion's compile time saves).
inline constexpr int kOutOfLineMathMinOps = 3;
// Math operations (IsExpandedMathOp, integer power excluded) in `program`.
int CountMathOps(const KernelProgram& program);

// Whether ExpandMath rewrites `op`.
bool IsExpandedMathOp(const KOp& op);

// Replaces every math operation (see IsExpandedMathOp) by its expansion and
// removes the operations left dead.
void ExpandMath(KernelProgram* program, const MathOptions& options);

}  // namespace xjit::jit

#endif  // XJIT_JIT_VECTOR_MATH_H_
