// The complex elementwise functions of the evaluator, shared with the JIT's
// runtime helpers (jit/kernel/complex_calls.h) so that compiled kernels compute
// exactly the evaluator's values: both call these very functions. Each
// takes and returns std::complex<double> (c64 operands are widened exactly
// by the caller and the result rounded once per part).
#ifndef XJIT_INTERPRETER_COMPLEX_MATH_H_
#define XJIT_INTERPRETER_COMPLEX_MATH_H_

#include <complex>

#include "ir/opcode.h"

namespace xjit {

// Whether ComplexUnary / ComplexBinary define `opcode`.
bool HasComplexUnary(Opcode opcode);
bool HasComplexBinary(Opcode opcode);

// abs, acos, acosh, asin, asinh, atan, atanh, cbrt (principal root), cos,
// cosh, exp, expm1, imag, log, log1p, logistic, negate, real, rsqrt, sign,
// sin, sinh, sqrt, tan, tanh of `z` (abs, real and imag: a real result in
// the real part). Other opcodes: 0.
std::complex<double> ComplexUnary(Opcode opcode, std::complex<double> z);

// add, subtract, multiply, divide, power (0^0 = 1, 0^b = 0), maximum and
// minimum (lexicographic: real part, then imaginary part, as StableHLO),
// atan2 (-i log((b + ia) / sqrt(b^2 + a^2))). Other opcodes: 0.
std::complex<double> ComplexBinary(Opcode opcode, std::complex<double> a,
                                   std::complex<double> b);

}  // namespace xjit

#endif  // XJIT_INTERPRETER_COMPLEX_MATH_H_
