// Kernel-program fragments that decode and encode the floats narrower than
// f16 (the f8 family and f4e2m1fn; IsMiniFloat), so that kernels hold them.
//
// In a kernel program a mini-float value is its raw bits in a u8 (buffers of
// mini-floats are u8 buffers, one element per byte); the emitter decodes to
// f32 to compute (XLA's way: arithmetic in f32, converted back after every
// operation) and encodes results back to bits. Both directions are built
// only from integer and f32/f64 operations every target already lowers
// (and, or, shifts, add, unsigned compare, select, bitcast, one float add or
// multiply), so every target and ISA vectorises them alike.
//
// Exactness against the evaluator (ir/float_format.h is the oracle):
//   - Decode is exact: every mini-float value is an f32 (f8e8m0fnu's 2^-127
//     as an f32 subnormal). NaN decodes to a quiet f32 NaN with the sign.
//   - Encode rounds the f32 or f64 value once, to nearest even (f8e8m0fnu:
//     ties up, as XLA does), with each format's overflow, NaN, -0 and
//     saturation rules (see float_format.h).
//     The normal range rounds the source bits as an integer (adding half an
//     ulp less one plus the kept low bit, then shifting); the subnormal range
//     adds 2^(e_min - m + M) (M: the source's mantissa bits) in the source
//     float type, so the hardware's round-to-nearest-even does the rounding,
//     and subtracts that constant's bits again.
//   - Arithmetic in f32 then one encode equals the evaluator's double then
//     one rounding for +, -, *, /, sqrt (f32's 24 bits are at least 2p + 2
//     for every mini-float precision p <= 5, so the double rounding is
//     innocuous) and for the exact operations (max, min, abs, negate,
//     floor, ceil, round, remainder, compare, clamp). f8e8m0fnu's binary
//     operations are computed in f64: f32 flushes its smallest products.
// NaN payloads are kept where the evaluator keeps them for an f32 or f64
// source; tests treat every NaN as equal (tests/jit/jit_test_util.h).
#ifndef XJIT_JIT_MINIFLOAT_CODEC_H_
#define XJIT_JIT_MINIFLOAT_CODEC_H_

#include <cstdint>
#include <functional>

#include "ir/element_type.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

// The type a value of `type` has inside a kernel program: u8 for a
// mini-float, `type` itself otherwise.
ElementType ProgramElementType(ElementType type);

class MiniFloatCodec {
 public:
  // `add` appends an operation to the program and returns its id.
  using AddOp = std::function<int(const KOp&)>;
  explicit MiniFloatCodec(AddOp add) : add_(std::move(add)) {}

  // The f32 value of the mini-float raw bits `bits` (a u8 value).
  int Decode(ElementType type, int bits);
  // The raw bits (u8) of `value` (of program type `from`: kF32 or kF64)
  // rounded to the mini-float `type`. `nan_quieted`: the evaluator reads
  // this source through a quieting f32 -> double conversion, so the NaN
  // payload's top bit is set (true for f32 sources).
  int Encode(ElementType type, int value, ElementType from, bool nan_quieted);

 private:
  int EncodeE8m0(int value, ElementType from);
  int Int(ElementType type, uint64_t value);
  int Bin(Opcode opcode, ElementType type, int a, int b);
  int BinConst(Opcode opcode, ElementType type, int a, uint64_t b) {
    return Bin(opcode, type, a, Int(type, b));
  }
  int Cmp(ComparisonDirection direction, ElementType type, int a, int b);
  int CmpConst(ComparisonDirection direction, ElementType type, int a, uint64_t b) {
    return Cmp(direction, type, a, Int(type, b));
  }
  int Select(ElementType type, int predicate, int on_true, int on_false);
  int Unary(KOpKind kind, ElementType type, ElementType from, int a);
  int FloatConst(ElementType type, double value);

  AddOp add_;
};

}  // namespace xjit::jit

#endif  // XJIT_JIT_MINIFLOAT_CODEC_H_
