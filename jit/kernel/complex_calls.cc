// Complex helpers for compiled kernels (see complex_calls.h). They call the
// evaluator's own functions (interpreter/complex_math.h), so a compiled kernel
// computes exactly the evaluator's values; jit_complex_test checks every
// helper against the evaluator bit for bit.
#include "jit/kernel/complex_calls.h"

#include <complex>

#include "interpreter/complex_math.h"

namespace xjit::jit {
namespace {

using Complex = std::complex<double>;

// Operand k's components (T = float: widened exactly, as Literal::GetComplex).
template <typename T>
Complex Read(const void* in, int k) {
  const T* p = static_cast<const T*>(in);
  return Complex(static_cast<double>(p[2 * k]), static_cast<double>(p[2 * k + 1]));
}

// Each part rounded once to T, as Literal::SetComplex (and, for abs's real
// result, DoubleToFloatBits) do.
template <typename T>
void Write(void* out, Complex r) {
  T* p = static_cast<T*>(out);
  p[0] = static_cast<T>(r.real());
  p[1] = static_cast<T>(r.imag());
}

template <Opcode kOp, typename T>
void UnaryCall(const void* in, void* out) {
  Write<T>(out, ComplexUnary(kOp, Read<T>(in, 0)));
}

template <Opcode kOp, typename T>
void BinaryCall(const void* in, void* out) {
  Write<T>(out, ComplexBinary(kOp, Read<T>(in, 0), Read<T>(in, 1)));
}

template <Opcode kOp>
ComplexCallFn UnaryFor(bool f64) {
  return f64 ? &UnaryCall<kOp, double> : &UnaryCall<kOp, float>;
}

template <Opcode kOp>
ComplexCallFn BinaryFor(bool f64) {
  return f64 ? &BinaryCall<kOp, double> : &BinaryCall<kOp, float>;
}

}  // namespace

int ComplexCallArity(Opcode opcode) {
  // negate, real and imag are component code in kernels.
  if (opcode == Opcode::kNegate || opcode == Opcode::kReal || opcode == Opcode::kImag) return 0;
  if (HasComplexUnary(opcode)) return 1;
  return opcode == Opcode::kPower || opcode == Opcode::kAtan2 || opcode == Opcode::kDivide ? 2 : 0;
}

ComplexCallFn ComplexCallFunction(Opcode opcode, ElementType component) {
  if (component != ElementType::kF32 && component != ElementType::kF64) return nullptr;
  const bool f64 = component == ElementType::kF64;
  switch (opcode) {
    case Opcode::kAbs: return UnaryFor<Opcode::kAbs>(f64);
    case Opcode::kAcos: return UnaryFor<Opcode::kAcos>(f64);
    case Opcode::kAcosh: return UnaryFor<Opcode::kAcosh>(f64);
    case Opcode::kAsin: return UnaryFor<Opcode::kAsin>(f64);
    case Opcode::kAsinh: return UnaryFor<Opcode::kAsinh>(f64);
    case Opcode::kAtan: return UnaryFor<Opcode::kAtan>(f64);
    case Opcode::kAtanh: return UnaryFor<Opcode::kAtanh>(f64);
    case Opcode::kCbrt: return UnaryFor<Opcode::kCbrt>(f64);
    case Opcode::kCos: return UnaryFor<Opcode::kCos>(f64);
    case Opcode::kCosh: return UnaryFor<Opcode::kCosh>(f64);
    case Opcode::kExp: return UnaryFor<Opcode::kExp>(f64);
    case Opcode::kExpm1: return UnaryFor<Opcode::kExpm1>(f64);
    case Opcode::kLog: return UnaryFor<Opcode::kLog>(f64);
    case Opcode::kLog1p: return UnaryFor<Opcode::kLog1p>(f64);
    case Opcode::kLogistic: return UnaryFor<Opcode::kLogistic>(f64);
    case Opcode::kRsqrt: return UnaryFor<Opcode::kRsqrt>(f64);
    case Opcode::kSign: return UnaryFor<Opcode::kSign>(f64);
    case Opcode::kSin: return UnaryFor<Opcode::kSin>(f64);
    case Opcode::kSinh: return UnaryFor<Opcode::kSinh>(f64);
    case Opcode::kSqrt: return UnaryFor<Opcode::kSqrt>(f64);
    case Opcode::kTan: return UnaryFor<Opcode::kTan>(f64);
    case Opcode::kTanh: return UnaryFor<Opcode::kTanh>(f64);
    case Opcode::kPower: return BinaryFor<Opcode::kPower>(f64);
    case Opcode::kAtan2: return BinaryFor<Opcode::kAtan2>(f64);
    case Opcode::kDivide: return BinaryFor<Opcode::kDivide>(f64);
    default: return nullptr;
  }
}

std::optional<ComplexCallOperands> ComplexCallOperandsOf(const KernelProgram& program,
                                                         const KOp& op) {
  const ElementType component = op.operand_type;
  ComplexCallOperands call;
  call.fn = ComplexCallFunction(op.opcode, component);
  const int arity = ComplexCallArity(op.opcode);
  if (call.fn == nullptr || op.type != component || arity != (op.c >= 0 ? 2 : 1)) {
    return std::nullopt;
  }
  call.f64 = component == ElementType::kF64;
  call.component_bytes = call.f64 ? 8 : 4;
  call.parts = {op.a, op.b};
  if (op.c >= 0) {
    call.parts.push_back(program.ops[op.c].a);
    call.parts.push_back(program.ops[op.c].b);
  }
  return call;
}

}  // namespace xjit::jit
