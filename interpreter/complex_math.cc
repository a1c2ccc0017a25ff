// The evaluator's complex elementwise functions (see complex_math.h).
#include "interpreter/complex_math.h"

#include <cmath>

namespace xjit {

using Complex = std::complex<double>;

// The opcode table's complex-math column (ir/opcode.h), by arity.
bool HasComplexUnary(Opcode opcode) {
  return IsElementwiseUnary(opcode) && HasComplexMath(opcode);
}

bool HasComplexBinary(Opcode opcode) {
  return IsElementwiseBinary(opcode) && HasComplexMath(opcode);
}

Complex ComplexUnary(Opcode opcode, Complex z) {
  switch (opcode) {
    case Opcode::kAbs: return std::abs(z);
    case Opcode::kAcos: return std::acos(z);
    case Opcode::kAcosh: return std::acosh(z);
    case Opcode::kAsin: return std::asin(z);
    case Opcode::kAsinh: return std::asinh(z);
    case Opcode::kAtan: return std::atan(z);
    case Opcode::kAtanh: return std::atanh(z);
    case Opcode::kCbrt:  // The principal cube root.
      return z == Complex(0, 0) ? z : std::exp(std::log(z) / 3.0);
    case Opcode::kCos: return std::cos(z);
    case Opcode::kCosh: return std::cosh(z);
    case Opcode::kExp: return std::exp(z);
    case Opcode::kLogistic: return Complex(1, 0) / (Complex(1, 0) + std::exp(-z));
    case Opcode::kExpm1: {
      // exp(z) - 1 without cancellation for small z.
      const double half_sin = std::sin(z.imag() / 2);
      return Complex(std::expm1(z.real()) * std::cos(z.imag()) - 2 * half_sin * half_sin,
                     std::exp(z.real()) * std::sin(z.imag()));
    }
    case Opcode::kImag: return z.imag();
    case Opcode::kLog: return std::log(z);
    case Opcode::kLog1p: return std::log(Complex(1.0, 0.0) + z);
    case Opcode::kNegate: return -z;
    case Opcode::kReal: return z.real();
    case Opcode::kRsqrt: return Complex(1.0, 0.0) / std::sqrt(z);
    case Opcode::kSign: return (z == Complex(0, 0)) ? z : z / std::abs(z);
    case Opcode::kSin: return std::sin(z);
    case Opcode::kSinh: return std::sinh(z);
    case Opcode::kSqrt: return std::sqrt(z);
    case Opcode::kTan: return std::tan(z);
    case Opcode::kTanh: return std::tanh(z);
    default: return 0;
  }
}

Complex ComplexBinary(Opcode opcode, Complex a, Complex b) {
  auto less = [](Complex x, Complex y) {
    return x.real() < y.real() || (x.real() == y.real() && x.imag() < y.imag());
  };
  switch (opcode) {
    case Opcode::kAdd: return a + b;
    case Opcode::kSubtract: return a - b;
    case Opcode::kMultiply: return a * b;
    case Opcode::kDivide: return a / b;
    case Opcode::kPower:
      if (a == Complex(0, 0)) return b == Complex(0, 0) ? Complex(1, 0) : Complex(0, 0);
      return std::pow(a, b);
    case Opcode::kMaximum: return less(a, b) ? b : a;
    case Opcode::kMinimum: return less(b, a) ? b : a;
    case Opcode::kAtan2: {
      // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)).
      const Complex i(0, 1);
      return -i * std::log((b + i * a) / std::sqrt(b * b + a * a));
    }
    default: return 0;
  }
}

}  // namespace xjit
