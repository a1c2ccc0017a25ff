// Lowering of a KernelProgram to x86-64 machine code with asmjit's Compiler
// (virtual registers; asmjit allocates the machine registers).
//
// The function is `void kernel(void* const* buffers, int64_t begin, int64_t
// end)` (runtime::KernelFunction): the outermost loop runs [begin, end). The
// loop nest is emitted as counted loops; index operations are placed at the outermost loop
// level their operands allow, value operations in the innermost body.
//
// The innermost loop has up to two parts. When every value operation of the
// program has vector code (see Vectorizable), a vector part handles `lanes`
// elements per iteration with full-width loads and stores; the remaining
// elements (and every element of a program without vector code) go through
// the scalar part, one element per iteration, so no access ever leaves a
// buffer. A rank-1 kernel's loop also runs scalar iterations first, until
// its output is 64-byte aligned (EmitRangedInnerLoop).
//
// Scalar representation: index values and integers are 64-bit general
// registers holding the value sign- or zero-extended from its type's width
// (pred is 0 or 1); f32 and f64 live in lane 0 of an xmm register; f16 and
// bf16 are either their raw 16 bits in a general register (as loaded, so
// pure data movement is bit exact) or an f32 in an xmm register holding a
// value of the narrow type (after arithmetic, which is done in f32 and
// rounded to the narrow type after every operation).
//
// Vector representation (one lane width W per program: f32/f64 or integers
// of 8, 16, 32 or 64 bits, signed and unsigned mixed freely; a float type and
// integers of its width may share a program): values in xmm (SSE4.1), ymm
// (AVX2) or zmm (AVX-512) registers; pred values are lane masks of width W
// (all ones = true), also with AVX-512 (compares write a k register, which
// vpmovm2d/q turns into a lane mask; selects are vpternlogd bit selects); a
// program of preds only uses W = 8. f16 and bf16 values are the f32 they
// widen to, in 32-bit lanes next to f32 (x64_half.cc): loads widen, every
// operation with a 16-bit float result rounds to its type, stores narrow,
// so the bits are the scalar code's.
//
// AVX-512: a kernel uses zmm when ZmmVectorizable accepts it (W of 32 or 64
// bits and every operation in its list) and its vectorised loop has at least
// 16 (W = 32) or 8 (W = 64) elements; every other kernel gets the AVX2 (ymm)
// code. Both run with 32 vector registers (asmjit keeps VEX-only
// instructions in the first 16). Instructions without an EVEX form are
// swapped for their EVEX equivalents where the destination is a zmm register
// (EmitZmm): vpand -> vpandd, vmovdqu -> vmovdqu32, vroundps -> vrndscaleps,
// compares -> compare into k + vpmovm2d/q. A compare whose only users are
// selects stays in its k register and the selects are merge-masked moves
// (PlanMasks); maximum/minimum patch NaN lanes in the same way. Tails stay
// scalar, as with AVX2.
//
// The primitive float operations of vector math (kConst, kFma, kBits,
// kBitShift) use packed instructions in both representations; kFma exists
// only with AVX2 (FMA3), in whichever of the 132/213/231 forms overwrites
// an operand that dies there (vector mode), so it needs no register copy.
//
// Vector loops of non-reduction programs: loop-invariant values (constants,
// broadcast loads), most used first, are computed once before the loop and
// kept in registers (asmjit spills if it must); with AVX, a constant read
// only by instructions that accept a memory source (add, subtract,
// multiply, divide, fma, bit operations, compare) stays in the constant
// pool as their memory operand instead (with AVX-512 only once the larger
// register budget is used up). Only scheduling and register use
// change: every element runs the same operations in the same order.
//
// Calls of complex helpers (kCall; scalar code only, Vectorizable refuses
// them): the operands' components are stored to a stack slot, the helper
// is invoked through asmjit (which saves the live caller-saved registers
// around it), and the result's parts are loaded back; kCallImag takes the
// imaginary part the call left in call_imag_.
//
// Index values (kernel_program.h, IndexValueOps: a dynamic-slice's start
// index loaded from a buffer, clamped, perhaps computed in s32 first) are
// scalar code in both representations, placed like index operations at the
// outermost loop their operands allow; a loop vectorises when they are
// invariant along it, the start then being loaded and clamped once, before
// it, and the slice read as an ordinary strided access.
//
// Float remainder (scalar code only) is exact: an integer division of the
// significands over the exponent difference (see FloatRemainder).
//
// Float operations use packed instructions in both representations (the
// scalar one just ignores lanes other than 0), so the two share code.
//
// Tiled loops (x64_tiled.cc): a non-reduction program of rank >= 2 with a
// load or store that jumps a cache line or more per step of the innermost
// loop but moves by one element per step of the loop outside it (a
// transpose: an operand or output in another layout than the first output)
// runs the two innermost loops in blocks: for each block of T iterations of
// the outer one (T elements fill a cache line), the innermost loop runs
// over its whole extent and, per inner step, the T outer iterations. Every
// line the transposed access touches is then used whole while it is in L1,
// instead of one element per line per pass. Strided accesses of 32- and
// 64-bit lanes are vectorised there: loads as gathers (AVX2, AVX-512) or
// lane by lane (SSE4.1), stores as scatters (AVX-512) or lane by lane
// (SSE4.1, AVX2); f16/bf16 loads lane by lane as 16-bit words, then widened
// (VecGather16); other programs run the same tiled order in scalar code.
// Only the order of iterations changes, and each computes the same bits.
//
// Reduction programs (reduction_loops > 0): the innermost output loop runs,
// per output element, the kPre operations (accumulators initialised in
// registers), the reduction loops with the kBody operations (accumulator
// writes deferred to the end of each iteration, as one parallel copy), then
// the kPost operations and stores. Three ways to vectorise, tried in order:
//   - across outputs ("column"): when every operation has vector code along
//     the innermost output loop, `lanes` output elements run together, each
//     lane an accumulator visiting its reduced elements in program order
//     (results identical to the scalar code's);
//   - across the innermost reduction loop ("row"): when every accumulator
//     update is add/multiply/maximum/minimum of f32/f64 or of 8..64-bit
//     integers (integers also and/or/xor; reassociating them is exact)
//     with its own previous value, the body runs in vector mode on up to 4 independent
//     vector accumulators starting at the operation's identity, which are
//     combined and folded into the scalar accumulator before the scalar
//     tail (a reassociation XLA allows for reductions);
//   - across outputs with gathers (AVX2, AVX-512; PlanColumnGathers): the
//     column form again where a row is too short for the row form and the
//     reduce input moves by a constant other than 0 or 1 per output (rows
//     of 2 or 5): loads gather each lane's row, outputs of the reduce
//     input's dimensions scatter; results identical to the scalar code's.
// Row programs with several passes (ProgramPhases) run, per output element,
// the kPre operations, then each pass's reduction loops (only the body
// operations and accumulator writes of that pass) followed by the kPost
// operations of the next stage. They use the row strategy (every pass's
// body vectorised along the innermost reduction loop, body stores as vector
// stores) or scalar code, never the column strategy. With the row strategy
// and one reduction loop, an expensive value that a later pass needs again
// (softmax's exp(x - max), read by the sum and by the quotient) is carried:
// stored into a row-sized stack scratch (in L1) in the pass that first
// computes it and loaded there by the later passes (PlanCarries, with the
// shared planner of jit/kernel/row_carries.h), instead of
// being computed again. The same bits either way. Rows of arrays too large
// for the caches stream (PlanRowStreaming): the passes after the first
// prefetch the next row, and large outputs are written with non-temporal
// stores where the row is aligned for them, or from the first aligned
// element on after a scalar head (a storing pass that accumulates nothing).
#ifndef XJIT_JIT_X64_X64_LOWERING_H_
#define XJIT_JIT_X64_X64_LOWERING_H_

#include <asmjit/x86.h>

#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "jit/kernel/kernel_program.h"
#include "jit/kernel/uniform_lanes.h"

namespace xjit::jit::x64 {

struct Features {
  bool avx2 = false;  // AVX2 + FMA + F16C
  // AVX512F/DQ/BW/VL (avx2 is set as well): zmm code for the kernels
  // ZmmVectorizable accepts, 32 vector registers for every kernel.
  bool avx512 = false;
  bool f16c = false;
  bool popcnt = false;
  bool lzcnt = false;
};

// Tests only: row programs stream whatever their arrays' sizes (the next
// row prefetched, non-temporal stores: PlanRowStreaming), so that the
// streaming code runs on arrays small enough for the evaluator. Kernels
// compiled meanwhile differ from the usual ones: compile them with the
// compile cache off.
void StreamAllRowsForTesting(bool on);

class KernelLowering {
 public:
  KernelLowering(asmjit::x86::Compiler* cc, const KernelProgram& program,
                 const Features& features);

  // Emits the whole function into the compiler. `*lanes` receives the
  // number of elements per vector iteration (1 when only scalar code).
  absl::Status Emit(int* lanes);

  // When set before Emit, a label is bound before the code of each emitted
  // operation and recorded with the operation's id (code address -> program
  // line for jitdump, jit/code/jitdump.h). The labels split the function into
  // more basic blocks, so this is for profiling builds only.
  void set_op_marks(std::vector<std::pair<asmjit::Label, int>>* marks) { op_marks_ = marks; }

  // Emits the program as an out-of-line math routine instead of a kernel
  // (x64_math_routines.h): the program is MathRoutineProgram's, expanded;
  // its loads are the routine's vector arguments and its store the return
  // value. `vector_bytes` 0: scalar code (lane 0); otherwise the vector
  // width the features give (16 SSE4.1, 32 AVX2, 64 AVX-512 zmm).
  absl::Status EmitMathRoutine(int vector_bytes);

  // Whether the program has vector code with positions moving by strides_
  // along the innermost loop; sets the vector element type. Width as chosen
  // by zmm_ (see Emit).
  bool Vectorizable(ElementType* type, int* lanes) const;
  // Guarded vector loops (kernel_program.h, "Guards"): whether the program
  // vectorises with its guards computed as their operand
  // (GuardedStridesAlong), every index computed from such a guard being
  // read only as a load's stride-1 position or converted to an integer
  // value (a lane compare). If so sets strides_ to those strides and
  // guarded_load_; the vector loop then checks before each such load that
  // all its lanes are in the buffer, and runs an iteration that is not as
  // `lanes_` scalar iterations (EmitVectorLoop) — except loads that
  // MaskedGuardedLoad takes.
  bool PlanGuardedLoads();
  // Whether guarded load `id` runs in vector code as a masked load (AVX2's
  // vmaskmov, AVX-512's {k}{z}): its lanes outside the buffer read nothing
  // (no fault) and give 0, which the guard's contract leaves unused, so no
  // iteration falls back to scalar code for it. 32- and 64-bit elements in
  // lanes of their width (not pred, f16 or bf16); SSE4.1 keeps the check.
  // Where pieces narrower than a vector are concatenated (four gate biases
  // of 16 in an LSTM's [n, 64] epilogue) nearly every iteration fell back.
  bool MaskedGuardedLoad(int id) const;
  absl::Status EmitMaskedGuardedLoad(int id);
  // Whether the operations with `include[i]`, which VectorizableOps accepts
  // with lanes of `width` bits, all have zmm code: W of 32 or 64 bits and
  // only the operations listed there. Anything else (8/16-bit lanes, preds
  // only) keeps the ymm code under AVX-512.
  bool ZmmVectorizable(const std::vector<bool>& include, int width) const;

 private:
  enum class Mode { kScalar, kVector };
  enum class Strategy { kNone, kInner, kColumn, kRow };
  // Whether the operations with `include[i]` have vector code when loop
  // positions move by `strides`; sets the type and lanes.
  bool VectorizableOps(const std::vector<std::optional<int64_t>>& strides,
                       const std::vector<bool>& include, ElementType* type, int* lanes) const;
  // The slot's update for row vectorisation: the combining binary op id, or
  // -1 when the update is not `op(acc, x)` with a reassociable float op.
  int RowCombiner(int write_id) const;
  bool RowVectorizable(ElementType* type, int* lanes) const;
  bool ColumnVectorizable(ElementType* type, int* lanes) const;
  // Emits a counted loop at `level` (level 0: the caller's range) whose body
  // is `body(mode)`, with a vector part when `vector`.
  template <typename Body>
  absl::Status EmitSplitLoop(int level, bool vector, int unroll, Body body);
  // Runs `emit` once per unrolled copy of the innermost output loop (see
  // copies_), each with its own values, accumulators and loop index.
  template <typename Fn>
  absl::Status ForEachCopy(Fn emit);
  absl::Status EmitElementBlock(Mode mode);
  absl::Status EmitReductionLoops(size_t level, Mode mode);
  absl::Status EmitReductionBody(Mode mode);
  absl::Status EmitRowReduction();
  // Combines an integer row reduction's vector partials across vectors and
  // lanes into the scalar accumulator `acc`.
  absl::Status FoldIntegerPartials(Opcode opcode, ElementType type,
                                   const std::vector<asmjit::x86::Vec>& partial,
                                   asmjit::x86::Gp acc);
  absl::Status EmitAccumulatorWrites();
  absl::Status EmitAccOp(int id, Mode mode);
  struct Val {
    asmjit::x86::Gp gp;
    asmjit::x86::Vec vec;
    bool in_vec = false;
    // zmm: a compare in mask_in_k_ (then `vec` is unset).
    asmjit::x86::KReg k;
  };

  // ---- Structure ----
  absl::Status EmitLoops(size_t level);
  absl::Status EmitInnerLoop();
  // The innermost loop when it is also the outermost (rank 1): it runs the
  // caller's range, with the vector/scalar split computed at run time.
  absl::Status EmitRangedInnerLoop(asmjit::x86::Gp i);
  absl::Status EmitOpsAtLevel(int level, Mode mode);
  // cmp g, value: an immediate where it fits in 32 bits.
  void CompareWith(asmjit::x86::Gp g, int64_t value);
  // Vector loop of a non-reduction program (strategy kInner): decides which
  // loop-invariant values live in registers across the loop (hoisted_) and
  // which constants stay in the constant pool as instruction memory
  // operands (deferred_); computes each value's last user.
  void PlanVectorLoop();
  // Part of PlanVectorLoop: values computed from loop invariants only
  // (lane masks of outer-index conditions, selects between broadcasts,
  // pred and integer broadcasts, index constants as lanes) are hoisted_
  // with the invariants they read, up to `budget` values live across the
  // loop; `uses` counts each op's vector users. Returns how many registers
  // the hoisted values hold across the loop.
  int PlanDerivedInvariants(const std::vector<int>& uses, int budget);
  // Part of PlanVectorLoop: integer arithmetic on hoisted values is hoisted
  // too, up to `budget` registers.
  void HoistInvariantArithmetic(const std::vector<int>& uses, int budget);
  // Emits the hoisted values (vector mode), before the vector loop.
  absl::Status EmitHoisted();
  // The vector loop over [i, vector_end) (a multiple of lanes_ long):
  // several independent bodies per iteration while that many vectors are
  // left, then one.
  absl::Status EmitVectorLoop(int level, asmjit::x86::Gp i, asmjit::x86::Gp vector_end);
  // Op `id`'s vector value as an instruction source: the constant pool
  // entry of a deferred constant (AVX only: VEX and EVEX memory operands
  // need no alignment), else its register.
  asmjit::Operand VecSource(int id);
  bool IsMemSource(int id) const;
  // A compare's operands with a deferred constant (memory operand) second:
  // swaps them and mirrors the direction when it is first.
  void MemSourceSecond(int* a, int* b, ComparisonDirection* direction) const;
  // Op `id`'s vector value in a register (loads a deferred constant).
  asmjit::x86::Vec VecReg(int id);
  // Whether `user` may overwrite op `operand`'s register: the operand is a
  // fresh register computed in this loop body and `user` is its last use.
  bool Killable(int operand, int user) const;
  // Only operations of `section` (index operations count as kPre at output
  // levels and kBody at reduction levels); kAccWrite is left to
  // EmitAccumulatorWrites.
  absl::Status EmitSectionAtLevel(int level, Mode mode, KSection section);
  absl::Status EmitOp(int id, Mode mode);
  // Index values (see IndexValueOps) are scalar code in both modes.
  bool IsIndexValue(int id) const { return !index_value_.empty() && index_value_[id]; }
  // Index operations and index values: scalars in general registers, the
  // same for every lane.
  bool ScalarOnly(int id) const { return IsIndexOp(program_.ops[id].kind) || IsIndexValue(id); }
  void EmitIndexOp(int id);
  // Jumps to `skip` unless index op `predicate` (0/1) is 1: compares and
  // their conjunctions as compare-and-branch (kSkipUnless).
  void EmitSkipUnless(int predicate, asmjit::Label skip);
  // The value of index constant `id` where it fits an instruction's 32-bit
  // immediate (sign-extended), else nullopt.
  std::optional<int32_t> IndexImmediate(int id) const;
  // Index op `id` as a register: a constant one in a register of its own,
  // moved there here (cmp and cmov take no 64-bit immediate).
  asmjit::x86::Gp IndexRegister(int id);
  // An f32/f64 math operation left by ExpandMath for a routine call (see
  // MathOptions::out_of_line): calls the routine of the current mode's
  // width.
  absl::Status EmitMathCall(int id);

  // ---- Scalar value operations (x64_scalar.cc) ----
  absl::Status EmitScalarValueOp(int id);
  absl::Status EmitScalarUnary(int id);
  absl::Status EmitScalarBinary(int id);
  absl::Status EmitScalarCompare(int id);
  absl::Status EmitScalarConvert(int id);
  absl::Status EmitScalarBitcast(int id);
  // kCall, kCallArgs, kCallImag.
  absl::Status EmitScalarCall(int id);
  void ScalarLoad(int id);
  void ScalarStore(int id);
  // Converts the canonical integer in `value` (of type `from`, pred included)
  // to `to`; the result is stored as op `id`'s value.
  absl::Status ConvertFromInteger(int id, asmjit::x86::Gp value, ElementType from, ElementType to);
  // Converts a float held as f32 or f64 in lane 0 of `x` (f32 also for f16
  // and bf16) to `to`.
  absl::Status ConvertFromFloat(int id, asmjit::x86::Vec x, bool x_is_f64, ElementType from,
                                ElementType to);
  void Normalize(asmjit::x86::Gp g, ElementType type);
  asmjit::x86::Gp IntegerToIndexSaturating(asmjit::x86::Gp g, ElementType type);
  asmjit::x86::Vec AsF32(int id, ElementType type);  // f16/bf16 value as f32
  asmjit::x86::Gp AsRaw16(int id, ElementType type);  // f16/bf16 value as bits
  asmjit::x86::Vec Widen16(asmjit::x86::Gp raw, ElementType type);
  asmjit::x86::Gp Narrow16(asmjit::x86::Vec f32, ElementType type);
  // Rounds an f32 value to f16 or bf16 (result still an f32).
  asmjit::x86::Vec Quantize(asmjit::x86::Vec f32, ElementType type);
  // The raw bits of an f32 in lane 0 that holds an f16/bf16 value exactly
  // (a NaN's payload kept: see AsRaw16).
  asmjit::x86::Gp Raw16(asmjit::x86::Vec f32, ElementType type);
  asmjit::x86::Vec F64ToF32RoundToOdd(asmjit::x86::Vec x);
  // std::fmod(a, b) of f32 or f64 values in lane 0 (exact: an integer
  // long division of the significands).
  asmjit::x86::Vec FloatRemainder(bool f64, asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec IntegerToF32RoundToOdd(asmjit::x86::Gp g, ElementType from);
  asmjit::x86::Vec IntegerToFloat(asmjit::x86::Gp g, ElementType from, bool to_f64);
  asmjit::x86::Gp FloatToInteger(asmjit::x86::Vec x_f64, ElementType to);
  asmjit::x86::Gp MaskToPred(asmjit::x86::Vec mask);
  asmjit::x86::Vec PredToMask(asmjit::x86::Gp pred);
  asmjit::x86::Gp NewGp();
  void SetGp(int id, asmjit::x86::Gp g);
  void SetVec(int id, asmjit::x86::Vec v);

  // ---- Float and vector operations (x64_float.cc) ----
  absl::Status EmitVectorValueOp(int id);
  // kConst, kFma, kBits, kBitShift: the same packed code in both
  // representations.
  absl::Status EmitFloatPrimitive(int id);
  // Float unary/binary/compare shared by both representations; `f64`
  // chooses the element width.
  absl::Status FloatUnary(Opcode opcode, bool f64, asmjit::x86::Vec x, asmjit::x86::Vec* out);
  // `b_source`, when a memory operand, replaces b (add/subtract/multiply/
  // divide only).
  absl::Status FloatBinary(Opcode opcode, bool f64, asmjit::x86::Vec a, asmjit::x86::Vec b,
                           asmjit::x86::Vec* out, asmjit::Operand b_source = asmjit::Operand());
  asmjit::x86::Vec FloatCompareMask(ComparisonDirection direction, bool f64, asmjit::x86::Vec a,
                                    asmjit::x86::Vec b);
  asmjit::x86::Vec FloatMaxMin(bool max, bool f64, asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec NewVec();  // Full width in vector mode, xmm otherwise.
  asmjit::x86::Vec Const(bool f64, uint64_t lane_bits);
  asmjit::x86::Vec Copy(asmjit::x86::Vec a);
  // A constant as a source operand: the constant pool entry with AVX (VEX
  // memory operands need no alignment), a register with SSE.
  asmjit::Operand ConstSource(bool f64, uint64_t lane_bits);
  void V2(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& d, const asmjit::Operand& a);
  void V3(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& d, const asmjit::x86::Vec& a,
          const asmjit::Operand& b);
  void V2i(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& d, const asmjit::Operand& a,
           int imm);
  void V3i(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& d, const asmjit::x86::Vec& a,
           const asmjit::Operand& b, int imm);
  // Emits the AVX instruction `avx` (d, a[, b][, imm >= 0]) with a zmm
  // destination: VEX-only instructions become their EVEX equivalents, and
  // a compare writes a k register that is widened into the lane mask d.
  void EmitZmm(uint32_t avx, const asmjit::x86::Vec& d, const asmjit::Operand& a,
               const asmjit::Operand& b, int imm);
  // Vector bytes of the current mode (16 in scalar mode).
  int VecBytes() const;
  asmjit::x86::Vec Blend(bool f64, asmjit::x86::Vec if_false, asmjit::x86::Vec if_true,
                         asmjit::x86::Vec mask);
  // zmm: compare op `id` into a k register (vcmpps/vcmppd with any
  // predicate, vpcmp[u]d/q), a memory operand for a deferred constant.
  asmjit::x86::KReg CompareToK(int id);
  // zmm: marks the compares whose every user is a select's predicate
  // (mask_in_k_): they stay in k and the selects blend under it
  // (vblendmps/pd), without the lane mask in between.
  void PlanMasks();
  // Selects between the two operands of a float compare that only they
  // read, select(u < v, v, u) and the like: exactly what maxps/minps
  // compute (the first operand where the strict comparison holds, else
  // the second, so NaN and equal operands give the second), one
  // instruction instead of a compare and a blend (vector math's clamps).
  // By op: 1 maximum, 2 minimum of (b, c); folded_compare_: compares left
  // out because of that.
  std::vector<int8_t> select_fold_;
  std::vector<bool> folded_compare_;
  void PlanSelectFolds();
  // Scalar code: integer compares whose every user is a select's predicate
  // in the same section (cmov_compare_) emit nothing; each select compares
  // the operands itself and picks with one cmov (x64_scalar.cc), instead
  // of setcc into a 0/1 register that the select tests again.
  std::vector<bool> cmov_compare_;
  void PlanCmovCompares();
  // The condition of integer compare `id` as one cmp of its operands'
  // registers, or nothing where it needs more (unsigned bits read as
  // signed, total order).
  std::optional<asmjit::x86::CondCode> CmovCondition(int id) const;
  // d = g's low `width` bits, zero-extended (g in the scalar representation
  // of an integer of that width and signedness).
  void ZeroExtendedCopy(asmjit::x86::Gp d, asmjit::x86::Gp g, int width, bool is_signed);
  absl::Status EmitFoldedSelect(int id, Mode mode);
  asmjit::x86::Mem Address(int buffer, int offset_op, int element_bytes);

  // ---- f16/bf16 in vector code (x64_half.cc): values are the f32 they
  // widen to, in 32-bit lanes; each step gives the scalar code's bits ----
  // `raw`: 16-bit float bits zero-extended in 32-bit lanes -> their f32.
  asmjit::x86::Vec VecWiden16(asmjit::x86::Vec raw, ElementType type);
  // f32 lanes -> the type's bits in 32-bit lanes, rounded to nearest even.
  asmjit::x86::Vec VecNarrow16(asmjit::x86::Vec f32, ElementType type);
  // f32 lanes rounded to the type (still f32), as Quantize.
  asmjit::x86::Vec VecQuantize(asmjit::x86::Vec f32, ElementType type);
  // f32 lanes holding values of the type exactly -> their bits (as AsRaw16).
  asmjit::x86::Vec VecRaw16(asmjit::x86::Vec f32, ElementType type);
  // kLoad / kStore of an f16/bf16 buffer.
  asmjit::x86::Vec VecLoad16(int id);
  // A strided f16/bf16 load in tiled loops: the lanes' 16-bit words moved
  // one by one (pinsrw), zero-extended and widened as VecLoad16's.
  asmjit::x86::Vec VecGather16(int id);
  void VecStore16(int id);
  asmjit::x86::Vec VecShift32(bool left, asmjit::x86::Vec a, int count);
  // Integer op `sse`/`avx` of a and a 32-bit constant in every lane (a
  // memory operand with AVX).
  asmjit::x86::Vec VecIntConstOp(uint32_t sse, uint32_t avx, asmjit::x86::Vec a, uint32_t value);
  asmjit::x86::Vec VecAnd32(asmjit::x86::Vec a, uint32_t value);
  // Signed a > value per 32-bit lane, as a lane mask.
  asmjit::x86::Vec VecGreater32(asmjit::x86::Vec a, uint32_t value);

  // ---- Integer vector operations (x64_float.cc; lanes of lane_bits_) ----
  absl::Status EmitIntVectorOp(int id);
  // Every lane = `value` (its low `width` bits).
  asmjit::x86::Vec IntConst(int width, uint64_t value);
  // d = a shifted by an immediate count (psllw/psrlq/psrad...).
  void ShiftImm(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& d, const asmjit::x86::Vec& a,
                int count);
  asmjit::x86::Vec AllOnes();
  asmjit::x86::Vec Zero();
  // Every lane = the low `width` bits of `g`.
  asmjit::x86::Vec BroadcastGp(asmjit::x86::Gp g, int width);
  // Every lane = lane 0 of `x` (`width` bits).
  asmjit::x86::Vec BroadcastLane0(asmjit::x86::Vec x, int width);
  asmjit::x86::Vec IntOp(uint32_t sse, uint32_t avx, asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec IntCompareMask(ComparisonDirection direction, bool is_signed, int width,
                                  asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec IntGreater(bool is_signed, int width, asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec IntMaxMin(bool max, bool is_signed, int width, asmjit::x86::Vec a,
                             asmjit::x86::Vec b);
  asmjit::x86::Vec IntMultiply(int width, asmjit::x86::Vec a, asmjit::x86::Vec b);
  asmjit::x86::Vec SignMask(int width, asmjit::x86::Vec x);  // x < 0 as a mask.
  // `x` shifted per XLA (amounts >= width: 0 or sign fill); `uniform`: every
  // lane of `amount` is the same.
  // x shifted by the 64-bit count in `count`'s low lane (psll/psrl/psra).
  asmjit::x86::Vec ShiftByCount(uint32_t sse, uint32_t avx, const asmjit::x86::Vec& x,
                                const asmjit::x86::Xmm& count);
  absl::Status IntShift(Opcode opcode, int width, asmjit::x86::Vec x, asmjit::x86::Vec amount,
                        bool uniform, asmjit::x86::Vec* out);
  absl::Status IntBinary(Opcode opcode, ElementType type, asmjit::x86::Vec a, asmjit::x86::Vec b,
                         bool uniform_b, asmjit::x86::Vec* out);
  asmjit::x86::Vec ByteBlend(asmjit::x86::Vec if_false, asmjit::x86::Vec if_true,
                             asmjit::x86::Vec mask);

  // ---- Tiled loops (x64_tiled.cc) ----
  // Decides tile_level_ and tile_rows_ (see "Tiled loops" above).
  void PlanTiling();
  // Whether a load or store that does not move by 0 or 1 element per step
  // of the innermost loop has vector code here (a gather or scatter).
  bool StridedAccessVectorizable(const KOp& op,
                                 const std::vector<std::optional<int64_t>>& strides) const;
  // The loops from tile_level_ inwards, in blocks (replaces EmitLoops there).
  absl::Status EmitTiledLoops();
  // Whether the strided load or store `op` moves its lanes one by one
  // (no gather: SSE4.1; no scatter: SSE4.1, AVX2) instead of a gather or
  // scatter instruction.
  bool UsesLaneMoves(const KOp& op) const;
  absl::Status EmitGather(int id);
  absl::Status EmitScatter(int id);
  // The lanes' element offsets k * stride (dword lanes, loaded before the
  // tiled loops: live across them, so never the register of a gather's
  // destination).
  asmjit::x86::Vec StrideOffsets(int64_t stride);
  // ---- Gathers at positions computed per lane (x64_lane_gather.cc) ----
  // Whether the load `op`, whose position is not affine along the innermost
  // loop, has vector code as a gather at positions computed lane by lane
  // (jit/kernel/lane_positions.h): AVX2 or AVX-512, 32- or 64-bit lanes,
  // the plain inner-loop strategy or a reduction's column strategy
  // (lane_index_ set), no tiling.
  // Also a pred load (a byte within its aligned dword; 32-bit lanes only)
  // and an index converted to a 32-bit integer (the dword positions
  // themselves: an iota along merged dimensions).
  bool LaneGatherable(const KOp& op) const;
  // The column strategy of a reduction with lane gathers (loads whose
  // position moves by a constant other than 0 or 1 per output, or is
  // computed per lane): sets strides_, lane_index_, vector_type_, lanes_
  // and zmm_ and returns true where every operation then has vector code;
  // otherwise leaves lane_index_ empty and strides_ as InnerStrides.
  bool PlanColumnGathers();
  // Whether the store `op` of that strategy, whose position moves by a
  // constant other than 0 or 1 per output (a kInput fusion's output of the
  // reduce input's dimensions: element 2i + r of a [n, 2] row), has vector
  // code as a scatter (EmitScatter: vscatter on AVX-512, lane by lane on
  // AVX2).
  bool ColumnScatterable(const KOp& op,
                         const std::vector<std::optional<int64_t>>& strides) const;
  absl::Status EmitLaneGather(int id);
  absl::Status EmitLanePredGather(int id);
  // kFromIndex `id` of a lane-computed index: its 32-bit values.
  asmjit::x86::Vec LaneIndexValue(int id);
  // Index operation `id`'s values in the current vector iteration, one
  // dword per lane (LaneIndexOps says which operations have them).
  asmjit::x86::Vec LaneIndices(int id);
  asmjit::x86::Vec ComputeLaneIndices(int id);  // LaneIndices without the cache.
  // A gather of 32-bit (or, `wide`, 64-bit) elements at the VSIB address
  // `m`, every lane enabled (also the strided gathers of tiled loops).
  asmjit::x86::Vec GatherAll(const asmjit::x86::Mem& m, bool wide);
  // LaneIndexOps over strides_ while the inner-loop strategy, or the column
  // strategy with gathers (PlanColumnGathers), is planned or chosen; empty
  // otherwise (no lane gathers), so the row strategy's VectorizableOps
  // never accepts a lane gather.
  std::vector<bool> lane_index_;
  // LaneIndices' values in the body being emitted, so that loads sharing a
  // position chain compute it once (cleared by EmitOpsAtLevel).
  absl::flat_hash_map<int, asmjit::x86::Vec> lane_indices_;

  // The outer loop of the tiled pair (-1: not tiled) and its block length.
  int tile_level_ = -1;
  int64_t tile_rows_ = 1;
  absl::flat_hash_map<int64_t, asmjit::x86::Vec> stride_offsets_;

  asmjit::x86::Compiler& cc_;
  const KernelProgram& program_;
  const Features features_;
  std::vector<int> levels_;
  std::vector<KSection> sections_;
  std::vector<bool> index_value_;  // IndexValueOps (all false in math routines).
  // Row programs (kernel_program.h, ProgramPhases): the passes, the one
  // being emitted, and which body operations it runs (all of them when
  // there is one pass).
  ProgramPhases phases_;
  int pass_ = 0;
  std::vector<bool> in_pass_;
  // Carried values (PlanCarries): by op, the pass that computes and stores
  // it into the row scratch (-1: recomputed where needed), and its byte
  // offset there; the scratch's address.
  std::vector<int> carry_pass_;
  std::vector<int64_t> carry_offset_;
  asmjit::x86::Gp carry_base_;
  void PlanCarries();
  absl::Status EmitCarry(int id, Mode mode, bool store);
  // Row streaming (PlanRowStreaming): memory traffic of a row program
  // overlapped with its passes over cached rows. `row_prefetches_`: loads
  // and stores (by op) whose row streams through memory, with the distance
  // of the next output element's row in bytes: in passes after the first,
  // the next row's input lines are prefetched into L2 and, unless this row
  // streams its stores, its output lines for writing. `stream_store_` (by
  // op): vector stores of large outputs written with non-temporal stores
  // when the row's output is aligned (checked per row:
  // EmitStreamingCheck); `streaming_`: whether the code being emitted is
  // that version; `streamed_`: whether any was emitted (sfence at the end).
  // `peel_`: every pass with streamed stores accumulates nothing, so its
  // elements are independent and a row whose output starts anywhere (at an
  // element boundary) streams too: in a third version of the passes
  // (EmitElementBlock), each such pass runs scalar iterations up to the
  // first vector-aligned output element, then its vector loops from
  // there (EmitRowReduction). Same bits per element either way.
  std::vector<std::pair<int, int64_t>> row_prefetches_;
  std::vector<bool> stream_store_;
  bool any_stream_store_ = false;
  bool streaming_ = false;
  bool streamed_ = false;
  bool peel_ = false;
  bool peeling_ = false;  // Emitting the peeling version (streaming_ too).
  std::vector<bool> peel_pass_;  // By pass: has streamed stores (and peel_).
  asmjit::x86::Gp head_;
  void PlanRowStreaming();
  void EmitRowPrefetches();
  // Rows read at data-dependent positions (an embedding bag's table rows,
  // a scatter's target rows: the position of a load in the innermost loop
  // is a row base loaded from an index buffer in the loop outside it plus
  // the innermost index): the loop outside computes the bases of the row
  // kGatherPrefetchRows ahead with its own index operations and prefetches
  // those rows, so that cache misses of several rows overlap where the
  // out-of-order window covers about one. Only for buffers of at least
  // PrefetchMinBytes (smaller ones stay cached).
  void PlanGatherPrefetches();
  absl::Status EmitGatherPrefetches(int level, asmjit::x86::Gp i);
  struct GatherPrefetch {
    int buffer = 0;
    int base = 0;         // The row base's index op (elements).
    int element_bytes = 0;
    int64_t bytes = 0;    // Bytes of the row to prefetch.
  };
  std::vector<GatherPrefetch> gather_prefetches_;
  std::vector<int> gather_chain_;  // Ops of that loop the bases need, in order.
  int gather_level_ = -1;
  // A register that is zero when the row about to run can take a
  // streaming version: every streamed store starts at a vector-aligned
  // address or, with peel_, they all reach one after the same number of
  // elements, which goes into head_ (0: the plain streaming version).
  asmjit::x86::Gp EmitStreamingCheck();
  // Streamed store `id`'s address at the row's first element.
  asmjit::x86::Gp EmitRowStoreAddress(int id);
  // Elements from `address` to the next StreamAlignment() boundary.
  asmjit::x86::Gp EmitRowHead(asmjit::x86::Gp address, int element_bytes);
  // What non-temporal vector stores need: the vector width in bytes.
  int StreamAlignment() const;
  absl::Status EmitPasses(Mode mode);
  // Accumulator registers by slot (the representation of the current mode).
  absl::flat_hash_map<int64_t, Val> accs_;
  Strategy strategy_ = Strategy::kNone;
  // Column vectorisation runs `copies_` vectors of outputs per iteration of
  // the innermost output loop, interleaved inside the reduction loops; copy
  // u's state is kept in copy_vals_[u] / copy_accs_[u] while another runs.
  int copies_ = 1;
  int current_copy_ = 0;
  // Operations that differ between copies (they depend on the innermost
  // output loop's index or on an accumulator); the others are emitted once,
  // by copy 0, and shared.
  std::vector<bool> per_copy_;
  std::vector<std::vector<Val>> copy_vals_;
  std::vector<absl::flat_hash_map<int64_t, Val>> copy_accs_;
  std::vector<asmjit::x86::Gp> copy_index_;
  std::vector<std::optional<int64_t>> strides_;
  std::vector<asmjit::x86::Gp> buffers_;
  std::vector<asmjit::x86::Gp> loop_vars_;
  asmjit::x86::Gp begin_;  // The outermost loop's range.
  asmjit::x86::Gp end_;
  // Where a kSkipUnless at loop level L jumps: skip_to_[L + 1] is bound at
  // the end of the iteration being emitted at level L (skip_to_[0]: the
  // kernel's end). See KOpKind::kSkipUnless; skips never sit in a vector
  // body (Emit keeps a kernel with one at the innermost level scalar).
  std::vector<asmjit::Label> skip_to_;
  bool skips_ = false;
  // Predicate operations only skips read, which EmitSkipUnless branches on
  // instead of computing them.
  std::vector<bool> skip_folded_;
  std::vector<Val> vals_;
  // The imaginary part of each kCall's result, by the call's id (scalar).
  absl::flat_hash_map<int, asmjit::x86::Vec> call_imag_;
  // See PlanVectorLoop (empty when not planned).
  std::vector<bool> hoisted_;
  std::vector<bool> deferred_;
  std::vector<asmjit::x86::Mem> deferred_mem_;
  std::vector<int> last_user_;
  std::vector<bool> fresh_;  // Value always in a register of its own.
  std::vector<bool> mask_in_k_;  // See PlanMasks.
  // See PlanGuardedLoads (empty when the vector loop has no guards), and
  // where a guarded load that would leave its buffer jumps (valid while the
  // vector loop's body is emitted).
  std::vector<bool> guarded_load_;
  std::vector<bool> identity_guard_;  // Guards the vector loop computes as a.
  asmjit::Label guard_fallback_;
  // The innermost loop's stretch of uniform lane compares (FindUniformLaneRange),
  // and whether the vector body being emitted is the one specialised to it:
  // then selects with a known predicate copy the operand they pick and dead
  // operations are left out (see EmitInnerLoop).
  UniformLaneRange uniform_;
  bool specialised_ = false;
  bool Specialised(int id) const { return specialised_ && !uniform_.live[id]; }
  // The representation being emitted, and for vector mode its element type.
  Mode mode_ = Mode::kScalar;
  // The float type of a vector program with floats, else an integer type of
  // its lane width.
  ElementType vector_type_ = ElementType::kF32;
  int lane_bits_ = 32;
  int lanes_ = 1;
  bool vectorize_ = false;
  // Vector mode uses zmm registers (AVX-512; see ZmmVectorizable).
  bool zmm_ = false;
  std::vector<std::pair<asmjit::Label, int>>* op_marks_ = nullptr;
};

}  // namespace xjit::jit::x64

#endif  // XJIT_JIT_X64_X64_LOWERING_H_
