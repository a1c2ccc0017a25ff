// Complex math that compiled kernels do by calling a runtime helper
// (KOpKind::kCall): one C++ function per (opcode, component type), each
// calling the evaluator's own function (interpreter/complex_math.h), c64 parts
// widened exactly to double and each result part rounded once to float as
// the evaluator's Literal::SetComplex does. Kernels therefore match the evaluator bit for
// bit, NaN payloads included.
//
// Covered: the evaluator's complex unary operations other than negate,
// real and imag (which are plain component code): abs, acos, acosh, asin,
// asinh, atan, atanh, cbrt, cos, cosh, exp, expm1, log, log1p, logistic,
// rsqrt, sign, sin, sinh, sqrt, tan, tanh; and the binary power, atan2 and
// (see kComplexDivideByCall) divide.
#ifndef XJIT_JIT_COMPLEX_CALLS_H_
#define XJIT_JIT_COMPLEX_CALLS_H_

#include <optional>
#include <vector>

#include "ir/element_type.h"
#include "ir/opcode.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

// `in` holds the operands' components as `component` values (float for
// c64, double for c128): re, im of the first operand, then re, im of the
// second for binary operations. `out` receives the result's re, im (abs:
// |z| and +0). Both arrays are 16-byte aligned in kernels; the helpers do
// not rely on it.
using ComplexCallFn = void (*)(const void* in, void* out);

// Whether kernels divide complex numbers through the helper rather than the
// emitter's component code (EmitComplexDivide). The evaluator's division is
// libgcc's __divdc3. On x86-64 that rounds every operation and the component
// code reproduces it bit for bit; AArch64's libgcc is compiled with fused
// multiply-adds (GCC's default contraction there), which component code
// cannot know, so on AArch64 kernels call the evaluator's own division.
#if defined(__aarch64__)
inline constexpr bool kComplexDivideByCall = true;
#else
inline constexpr bool kComplexDivideByCall = false;
#endif

// The number of complex operands of `opcode`'s helper (1 or 2), 0 when it
// has none (divide: 2, used where kComplexDivideByCall).
int ComplexCallArity(Opcode opcode);

// The helper for `opcode` on complex numbers with components of type
// `component` (kF32 for c64, kF64 for c128); nullptr when there is none.
ComplexCallFn ComplexCallFunction(Opcode opcode, ElementType component);

// What a target needs to lower the kCall `op` of `program`: the helper, its
// component type, and the program values holding the operands' components
// in the helper's order (`in`: re, im of the first operand, then of the
// second, read from the call and its kCallArgs). nullopt when there is no
// helper for the opcode and type or the call's operand count is not the
// helper's arity. Both targets marshal a call through it, so they agree on
// which calls they lower and on the order of `in`.
struct ComplexCallOperands {
  ComplexCallFn fn = nullptr;
  bool f64 = false;         // Components are double (c128) rather than float.
  int component_bytes = 4;  // 8 for f64.
  std::vector<int> parts;   // Program value ids, one per component of `in`.
};
std::optional<ComplexCallOperands> ComplexCallOperandsOf(const KernelProgram& program,
                                                         const KOp& op);

}  // namespace xjit::jit

#endif  // XJIT_JIT_COMPLEX_CALLS_H_
