// Lowering of a KernelProgram to AArch64 machine code with asmjit's a64
// Compiler (virtual registers; asmjit allocates the machine registers).
//
// The function is `void kernel(void* const* buffers, int64_t begin, int64_t
// end)` (runtime::KernelFunction), as on x86-64: the outermost loop runs
// [begin, end); index operations are placed at the outermost loop level
// their operands allow, value operations in the innermost body.
//
// Scalar representation: index values, integers and preds are 64-bit
// general registers holding the value sign- or zero-extended from its type's
// width (pred is 0 or 1); f32 and f64 live in lane 0 of a vector register
// and use the scalar forms of the float instructions (fadd s, fcmp d, ...).
// f16 and bf16 are raw bits in a general register or, after arithmetic, an
// f32 (rounded to the narrow type after every operation) in a vector
// register, as on x86-64; they have scalar code only.
//
// Vector representation (NEON, 128-bit; one lane width W per program as on
// x86-64: f32 (4 lanes), f64 (2), or integers of 8, 16, 32, 64 bits (16, 8,
// 4, 2 lanes); a float type and integers of its width may share a program):
// preds are lane masks of width W (all ones = true); compares write masks
// (fcmeq/fcmgt/fcmge, cmeq/cmgt/cmhi/...), selects are bsl bit selects.
// The innermost loop has a vector part over the largest multiple of the
// lane count and a scalar tail, so no access leaves a buffer. Loop-invariant
// values (constants, broadcast loads) are computed once before the vector
// loop (Hoist). The primitive float operations of vector math (kConst, kFma
// as fmla/fmadd, kBits, kBitShift) have code in both representations, so
// ExpandMath's polynomials vectorise like an add.
//
// Semantics are the evaluator's, as on x86-64; AArch64 gives several of
// them directly: fcvtzs/fcvtzu saturate and map NaN to 0; fmax/fmin
// propagate NaN and order -0 below +0; sdiv/udiv do not trap (x/0 = 0 and
// INT_MIN/-1 = INT_MIN, fixed up to XLA's x/0 = -1 with one csinv).
//
// Reduction programs: per output element, the kPre operations, the
// reduction loops with the kBody operations (accumulator writes deferred to
// the end of each iteration, as one parallel copy), then kPost and stores.
// When every accumulator update of the innermost reduction loop is
// add/multiply/maximum/minimum (integers also and/or/xor) of its own
// previous value and a value free of accumulators, that loop runs `lanes`
// reduced elements at once in vector accumulators starting at the
// operation's identity, folded lane by lane into the scalar accumulator
// before the scalar tail (a reassociation XLA allows for reductions, as the
// x86-64 target's "row" strategy). Its main loop is unrolled with one
// independent partial accumulator per copy (4 copies, 2 for bodies of
// more than 24 operations, 1 beyond 80), combined in order after the loop,
// so that the combining operation's latency does not bound the loop; each
// combining operation writes its accumulator's register in place. Tried first, as on x86-64, is the
// "column" strategy: when every operation has vector code along the
// innermost output loop, `lanes` output elements run together, each lane an
// accumulator visiting its reduced elements in program order (results
// identical to the scalar code's). Other reductions run as scalar loops.
//
// Row programs with several passes over the reduced elements
// (kernel_program.h, ProgramPhases: softmax, layer norm) run, per output
// element, the kPre operations, then each pass's reduction loops (only the
// body operations, accumulator writes and body stores of that pass),
// followed by the kPost operations of the next stage, as on x86-64. A pass
// uses the row strategy above (its body vectorised along the innermost
// reduction loop, body stores as vector stores, the per-row values it
// reads broadcast to every lane) when every body operation has vector
// code, else scalar code; never the column strategy. A pass that makes no
// reduction (the quotient of softmax, the scaled output of layer norm)
// just runs its elements. With the row strategy and one reduction loop, an
// expensive value that a later pass needs again (softmax's exp(x - max),
// read by the sum and by the quotient) is carried, as on x86-64: stored
// into a row-sized stack scratch (at most 48 KB, so it stays in L1/L2 with
// the row) by the pass that first computes it and loaded by the later
// passes (PlanCarries, with the planner it shares with x86-64:
// jit/kernel/row_carries.h). The same bits either way.
//
// Index values (kernel_program.h, IndexValueOps: a dynamic-slice's start
// index loaded from a buffer, clamped, perhaps computed in s32 first) are
// scalar code in both representations, placed like index operations at the
// outermost loop their operands allow; a loop vectorises when they are
// invariant along it (the start loaded and clamped once, before it, and the
// slice read as an ordinary stride-1 access), as on x86-64.
//
// Complex math without component code calls its helper
// (jit/kernel/complex_calls.h) per element, scalar code only. f16/bf16 have no
// vector form (scalar loops).
#ifndef XJIT_JIT_A64_A64_LOWERING_H_
#define XJIT_JIT_A64_A64_LOWERING_H_

#include <asmjit/arm.h>
#include <asmjit/arm/a64compiler.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit::a64 {

class KernelLowering {
 public:
  KernelLowering(asmjit::a64::Compiler* cc, const KernelProgram& program);

  // Emits the whole function into the compiler. `*lanes` receives the
  // number of elements per vector iteration (1 when only scalar code).
  absl::Status Emit(int* lanes);

 private:
  enum class Mode { kScalar, kVector };
  struct Val {
    asmjit::a64::Gp gp;
    asmjit::a64::Vec vec;
    bool in_vec = false;
  };

  // Whether every value operation has vector code; sets the lane type,
  // width and count.
  bool Vectorizable();
  // Whether the operations with `include[i]` have vector code when loop
  // positions move by `strides`; their value operands are vectors where
  // `inside`, else values from before the loop that are broadcast. Sets the
  // lane type, width and count.
  bool VectorizableOps(const std::vector<bool>& include, const std::vector<bool>& inside,
                       const std::vector<std::optional<int64_t>>& strides);
  // Row reductions: whether the innermost reduction loop can run `lanes_`
  // reduced elements at once (every accumulator update is op(acc, x) with a
  // reassociable op and x free of accumulators); fills row_body_ and
  // row_combiner_.
  bool RowVectorizable();
  // Column reductions: whether every operation has vector code along the
  // innermost output loop, so that `lanes_` output elements (each lane its
  // own accumulator, in program order) run at once.
  bool ColumnVectorizable();

  // ---- Structure (a64_lowering.cc) ----
  absl::Status EmitLoops(size_t level);
  absl::Status EmitInnerLoop(size_t level);
  absl::Status EmitElementBlock();
  // The passes of the element block's reduction loops, each followed by
  // the kPost operations it made computable (one pass: the loops, then
  // kPost).
  absl::Status EmitPasses();
  // The innermost output loop of a column-vectorised reduction.
  absl::Status EmitColumnLoop(size_t level);
  absl::Status EmitReductionLoops(size_t level);
  // The innermost reduction loop, vectorised across its iterations (see
  // RowVectorizable): vector accumulators from the identity, a vector loop,
  // a fold into the scalar accumulators, the scalar tail.
  absl::Status EmitRowReduction(size_t level);
  // acc = opcode(acc, x) on scalar values of `type` (for folding).
  absl::Status CombineScalar(Opcode opcode, ElementType type, const Val& x, Val* acc);
  // acc = opcode(acc, x) on vectors of `type`, written into acc's register
  // (a loop-carried accumulator needs no copy).
  absl::Status CombineVector(Opcode opcode, ElementType type, asmjit::a64::Vec acc,
                             asmjit::a64::Vec x);
  absl::Status EmitAccumulatorWrites();
  absl::Status EmitAccOp(int id);
  absl::Status EmitOpsAtLevel(int level, Mode mode);
  absl::Status EmitSectionAtLevel(int level, KSection section);
  // Before a vector loop at `level`: the loop-invariant value operations,
  // in vector form (hoisted_vals_).
  absl::Status Hoist(int level);
  absl::Status EmitOp(int id, Mode mode);
  void EmitIndexOp(int id);

  // ---- Scalar value operations (a64_scalar.cc) ----
  absl::Status EmitScalarValueOp(int id);
  absl::Status ScalarLoad(int id);
  absl::Status ScalarStore(int id);
  absl::Status EmitScalarUnary(int id);
  absl::Status EmitScalarBinary(int id);
  absl::Status ScalarIntegerBinary(int id);
  absl::Status EmitScalarCompare(int id);
  absl::Status EmitScalarConvert(int id);
  absl::Status EmitScalarBitcast(int id);
  absl::Status ConvertFromInteger(int id, asmjit::a64::Gp value, ElementType from, ElementType to);
  // Complex helper calls (kCall, kCallArgs, kCallImag): the components
  // through stack slots to ComplexCallFunction's helper (jit/kernel/complex_calls.h).
  absl::Status EmitScalarCall(int id);
  asmjit::a64::Gp FloatToInteger(asmjit::a64::Vec x, bool f64, ElementType to);
  // std::fmod through a call (exact, as the evaluator's).
  asmjit::a64::Vec FloatRemainder(bool f64, asmjit::a64::Vec a, asmjit::a64::Vec b);
  void Normalize(asmjit::a64::Gp g, ElementType type);
  // f16/bf16 values are either their raw 16 bits in a general register (as
  // loaded: pure data movement is bit exact) or an f32 in a vector register
  // holding a value of the narrow type (after arithmetic, which is done in
  // f32 and rounded to the narrow type after every operation).
  asmjit::a64::Vec AsF32(int id, ElementType type);
  asmjit::a64::Gp AsRaw16(int id, ElementType type);
  // Rounds an f32 value to f16 or bf16 (result still an f32).
  asmjit::a64::Vec Quantize(asmjit::a64::Vec f32, ElementType type);
  // An integer (canonical, of type `from`) to f16/bf16 with one rounding.
  absl::Status IntegerToNarrow(int id, asmjit::a64::Gp value, ElementType from, ElementType to);
  void MovImm(asmjit::a64::Gp g, uint64_t value);

  // ---- Float operations in both representations, and vector operations
  // (a64_vector.cc) ----
  absl::Status EmitVectorValueOp(int id);
  absl::Status EmitIntVectorOp(int id);
  absl::Status EmitFloatPrimitive(int id);
  absl::Status FloatUnary(Opcode opcode, bool f64, asmjit::a64::Vec x, asmjit::a64::Vec* out);
  absl::Status FloatBinary(Opcode opcode, bool f64, asmjit::a64::Vec a, asmjit::a64::Vec b,
                           asmjit::a64::Vec* out);
  // Lane masks (vector mode) of a float or integer comparison.
  asmjit::a64::Vec FloatCompareMask(ComparisonDirection direction, bool f64, asmjit::a64::Vec a,
                                    asmjit::a64::Vec b);
  asmjit::a64::Vec IntCompareMask(ComparisonDirection direction, bool is_signed,
                                  asmjit::a64::Vec a, asmjit::a64::Vec b);
  // a * b in 64-bit lanes (wrapping; NEON multiplies lanes of up to 32).
  asmjit::a64::Vec Multiply64(asmjit::a64::Vec a, asmjit::a64::Vec b);
  asmjit::a64::Vec IntMaxMin(bool max, bool is_signed, asmjit::a64::Vec a, asmjit::a64::Vec b);
  // mask ? if_true : if_false, bitwise.
  asmjit::a64::Vec Blend(asmjit::a64::Vec mask, asmjit::a64::Vec if_true,
                         asmjit::a64::Vec if_false);
  // Blend for select op `id` (operands a: mask, b: if true, c: if false):
  // in place into whichever operand dies there (bsl, bif, bit), else Blend.
  asmjit::a64::Vec SelectInPlace(int id);
  // A constant: lane 0 in scalar mode, every lane in vector mode; `width`
  // bits per lane.
  asmjit::a64::Vec ConstVec(int width, uint64_t bits);
  // Every lane (of `width` bits) = the low bits of `g`.
  asmjit::a64::Vec Dup(asmjit::a64::Gp g, int width);
  // The float view of `v` in the current mode: s/d (scalar) or 4s/2d.
  asmjit::a64::Vec F(const asmjit::a64::Vec& v, bool f64) const;
  // The integer view of `v` with lanes of `width` bits (16b, 8h, 4s, 2d).
  asmjit::a64::Vec I(const asmjit::a64::Vec& v, int width) const;
  asmjit::a64::Vec B16(const asmjit::a64::Vec& v) const;
  asmjit::a64::Vec NewVec();
  asmjit::a64::Gp NewGp();
  // Loop `level`'s counter (also in loop_vars_) and bound, initialised.
  std::pair<asmjit::a64::Gp, asmjit::a64::Gp> LoopBounds(size_t level);
  // base + position * element_bytes, as a register.
  asmjit::a64::Gp ElementAddress(int buffer, int position_op, int element_bytes);
  void SetGp(int id, asmjit::a64::Gp g);
  void SetVec(int id, asmjit::a64::Vec v);

  asmjit::a64::Compiler& cc_;
  const KernelProgram& program_;
  std::vector<int> levels_;
  std::vector<KSection> sections_;
  // IndexValueOps: value operations that only compute indices (a loaded
  // dynamic-slice start, its clamp), scalar code placed like index
  // operations; a loop vectorises when they are invariant along it.
  std::vector<bool> index_value_;
  bool IsIndexValue(int id) const { return index_value_[id]; }
  // Index operations and index values: scalar code in both modes.
  bool ScalarOnly(int id) const { return IsIndexOp(program_.ops[id].kind) || IsIndexValue(id); }
  std::vector<std::optional<int64_t>> strides_;
  std::vector<asmjit::a64::Gp> buffers_;
  std::vector<asmjit::a64::Gp> loop_vars_;
  asmjit::a64::Gp begin_;
  asmjit::a64::Gp end_;
  // Row programs (kernel_program.h, ProgramPhases): the passes, the one
  // being emitted, and which body operations it runs (all of them when
  // there is one pass).
  ProgramPhases phases_;
  int pass_ = 0;
  std::vector<bool> in_pass_;
  // Carried values (PlanCarries): by op, the pass that computes and stores
  // it into the row scratch (-1: recomputed where needed; empty: nothing
  // carried), and the address of its part of the scratch.
  std::vector<int> carry_pass_;
  absl::flat_hash_map<int, asmjit::a64::Gp> carry_base_;
  void PlanCarries();
  // Stores (`store`) or loads carried value `id` at the current element of
  // the innermost reduction loop, `lanes_` of them in vector mode.
  absl::Status EmitCarry(int id, Mode mode, bool store);
  // Emits body operation `id` of the current pass in `mode`: computed, then
  // stored if this pass carries it, or loaded if an earlier pass did.
  absl::Status EmitBodyOp(int id, Mode mode);
  std::vector<Val> vals_;
  absl::flat_hash_map<int64_t, Val> accs_;
  // The imaginary parts of kCall results, by the kCall's id.
  absl::flat_hash_map<int, asmjit::a64::Vec> call_imag_;
  // Loop-invariant operations computed before the vector loop, and their
  // vector values (see Hoist).
  std::vector<bool> hoisted_;
  std::vector<Val> hoisted_vals_;
  // Destructive instructions in place (PlanInPlace): fmla accumulates into
  // its addend's register and bsl/bit/bif select into one operand's when
  // that value dies there, instead of copying it first. Only in the vector
  // loop of an elementwise kernel and in each unrolled copy of a row
  // reduction's vector loop (`in_place_` while they are emitted), where
  // every operation at the loop's level runs once per iteration (per copy).
  // By op: its last vector user (-1: none), and whether its vector value is
  // a register of its own there (a result of its own instruction, never
  // hoisted, never shared with another op's value by a bitcast or
  // same-width convert, and not a row reduction's combining operation,
  // whose value is its partial accumulator).
  std::vector<int> last_user_;
  std::vector<bool> own_register_;
  bool in_place_ = false;
  int in_place_level_ = -1;
  void PlanInPlace();
  // Whether `user` may overwrite `operand`'s register.
  bool Killable(int operand, int user) const;
  // Row reductions: the body operations run in vector mode, and for each
  // accumulator slot the op combining it with the iteration's value.
  bool row_ = false;
  bool column_ = false;
  // The representation of the element block being emitted (column
  // reductions run it in vector mode).
  Mode block_mode_ = Mode::kScalar;
  std::vector<bool> row_body_;
  absl::flat_hash_map<int64_t, Opcode> row_combiner_;
  absl::flat_hash_map<int64_t, asmjit::a64::Vec> row_accs_;
  Mode mode_ = Mode::kScalar;
  bool vectorize_ = false;
  // The float type of a vector program with floats, else an integer type of
  // the lane width.
  ElementType vector_type_ = ElementType::kF32;
  int lane_bits_ = 32;
  int lanes_ = 1;
};

}  // namespace xjit::jit::a64

#endif  // XJIT_JIT_A64_A64_LOWERING_H_
