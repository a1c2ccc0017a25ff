// Out-of-line vector math for x86-64: one routine per math function,
// element type (f32, f64), instruction-set level and vector width, emitted
// on first use and kept for the life of the process; kernels call it
// instead of expanding the function inline (MathOptions::out_of_line).
//
// Calling convention (the C ABI's vector convention, System V on x86-64,
// so a routine is also an ordinary C function `__m256 f(__m256[, __m256])`):
// the operand(s) in xmm0/ymm0/zmm0 (and xmm1/ymm1/zmm1 for atan2 and power),
// the result in xmm0/ymm0/zmm0; every vector and mask register and the
// caller-saved general registers may be clobbered. Width 16/32/64 bytes:
// every lane computed (vector code); width 0: lane 0 only, computed by the
// scalar code (the kernels' scalar tails). Each routine is the inline
// expansion lowered alone (jit/kernel/vector_math.h MathRoutineProgram), so it
// computes the same bits as the inline code.
#ifndef XJIT_JIT_X64_X64_MATH_ROUTINES_H_
#define XJIT_JIT_X64_X64_MATH_ROUTINES_H_

#include <cstdint>

#include "absl/status/statusor.h"
#include "ir/element_type.h"
#include "ir/opcode.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {

// The routine's address (emitted now if this process has none yet).
// `vector_bytes`: 0 (scalar), 16, 32 (AVX2) or 64 (AVX-512). Thread-safe.
absl::StatusOr<const void*> MathRoutine(Opcode opcode, ElementType type,
                                        const Features& features, int vector_bytes);

struct MathRoutineStats {
  int64_t routines = 0;    // Emitted so far in this process.
  int64_t code_bytes = 0;  // Their machine code.
};
MathRoutineStats GetMathRoutineStats();

}  // namespace xjit::jit::x64

#endif  // XJIT_JIT_X64_X64_MATH_ROUTINES_H_
