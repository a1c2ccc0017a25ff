// KernelProgram: the target-independent form of one loop-fusion kernel.
//
// A kernel computes one output array from input buffers. Its program is a
// loop nest over the output's dimensions in physical order (outermost =
// major-most, innermost = minor-most, so the output is written sequentially)
// and a body: a list of operations in SSA form, each naming earlier
// operations by their position. The body computes one output element for the
// current loop indices and stores it.
//
// Operations come in two families:
//   - index operations: signed 64-bit integers that are the same for every
//     lane of a vector (loop indices, constants, +, -, *, min, max, division
//     and remainder by a positive constant of a non-negative value, < and ==
//     giving 0/1);
//   - value operations: typed elements (loads, stores, the elementwise HLO
//     opcodes, compare, select, clamp, convert, bitcast-convert, and the
//     conversions between indices and values);
//   - primitive float operations (constants, fused multiply-add, integer
//     arithmetic and shifts on the bits of float lanes), into which
//     ExpandMath (jit/kernel/vector_math.h) rewrites the transcendental opcodes, so
//     that a target only implements these few operations to get vector math;
//   - calls of complex helpers (kCall, kCallArgs, kCallImag): complex math
//     without component code, one C++ call per element.
// Memory addresses are element positions in a buffer's physical order, so
// a target sees only "load element k of buffer b". A target lowers a program
// one element at a time or, where the innermost loop index moves the loads
// and stores by one element per iteration (see InnerStrides), several
// elements at once.
//
// Reductions and multi-output kernels: a program may end its loop nest with
// `reduction_loops` loops over the reduced elements of the current output
// element (see KernelProgram). Accumulators are numbered slots, initialised
// before the reduction loops (kAccInit), read and rewritten once per
// reduction iteration (kAccRead, kAccWrite) and read once after them
// (kAccResult). A program may store into several output buffers (kStore's
// imm is the output number).
//
// Element semantics are the evaluator's (interpreter/evaluator.h), op for op; types
// narrower than f32 (f16, bf16) are computed in f32 and rounded to their type
// after every operation, which gives the same bits as the evaluator for the
// operations targets implement natively.
#ifndef XJIT_JIT_KERNEL_PROGRAM_H_
#define XJIT_JIT_KERNEL_PROGRAM_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "ir/attributes.h"
#include "ir/element_type.h"
#include "ir/opcode.h"

namespace xjit::jit {

enum class KOpKind : uint8_t {
  // ---- Index operations (type kS64) ----
  kLoopIndex,  // imm: the loop level (0 = outermost).
  kIConst,     // imm: the value.
  kIAdd,       // a + b
  kISub,       // a - b
  kIMul,       // a * b
  kIMin,       // min(a, b); imm 1 marks a guard (see below).
  kIMax,       // max(a, b); imm 1 marks a guard (see below).
  kIDiv,       // a / imm; a >= 0, imm > 0.
  kIRem,       // a % imm; a >= 0, imm > 0.
  kILt,        // a < b ? 1 : 0
  kIEq,        // a == b ? 1 : 0
  kIAnd,       // a & b (of 0/1 values)
  kLoopEnd,    // The end of loop 0's range in this call (programs that claim
               // ranges only; see KernelProgram::claims_range).
  kSkipUnless, // Control, not a value: where a (a 0/1 index) is 0, the rest of
               // the current iteration of the loop at this operation's level
               // (OpLevels) is skipped: the operations of that level after
               // this one and every loop inside it. No operation reads it.
  // ---- Value operations ----
  kLoad,       // imm: buffer number; a: element position. Type: the buffer's.
  kStore,      // Stores b at position a of output imm (0 = the first output buffer).
  kFromIndex,  // Index a converted to `type` (as convert from s64; pred: a != 0).
  kToIndex,    // Integer or pred value a as an index (sign- or zero-extended).
  kUnary,      // opcode(a): an elementwise unary HLO opcode.
  kBinary,     // opcode(a, b): an elementwise binary HLO opcode (not compare).
  kCompare,    // a <direction> b under comparison_type; type pred.
  kSelect,     // a ? b : c (a is pred).
  kClamp,      // min(max(b, a), c), i.e. clamp(lo = a, x = b, hi = c).
  kConvert,    // a converted from operand_type to type.
  kBitcast,    // a's bits reinterpreted (same width).
  // ---- Calls of complex helpers (jit/kernel/complex_calls.h) ----
  // Complex math the emitter does not expand into component code is one
  // call of a C++ helper per element, always scalar code (a loop containing
  // a call is not vectorised). type and operand_type: the component type (f32 for c64, f64 for
  // c128).
  kCall,       // ComplexCallFunction(opcode, operand_type) applied to the complex
               // value (a, b) and, for a binary opcode, to the second operand
               // (c: a kCallArgs). The value: the result's real part (abs:
               // the result).
  kCallArgs,   // (a, b): the second complex operand of the kCall that names this
               // op as its c; read by nothing else, no value of its own.
  kCallImag,   // The imaginary part of the result of the kCall a.
  // ---- Primitive float operations (f32 and f64 only) ----
  // Produced by ExpandMath (jit/kernel/vector_math.h) from the math opcodes; the
  // fusion emitter never creates them from HLO directly.
  kConst,      // imm: the bits of a value of `type`.
  kFma,        // a * b + c rounded once.
  kBits,       // opcode (kAnd, kOr, kXor, kAdd, kSubtract) applied to the bits of a
               // and b as unsigned integers of the type's width (wrapping); the
               // resulting bits read as `type`.
  kBitShift,   // a's bits shifted by imm (0 < imm < width) to the left
               // (opcode kShiftLeft) or right with zero fill
               // (kShiftRightLogical); the resulting bits read as `type`.
  kScale,      // a * 2^b rounded once (b integer-valued), into the subnormals
               // and to infinity as a multiplication would; only from
               // ExpandMath with MathOptions::native_scale (a target with
               // such an instruction: x86-64 AVX-512's vscalefps/pd).
  // ---- Accumulators (reduction programs; imm: the slot, type: its type) ----
  kAccInit,    // Before the reduction loops of an output element: slot = a.
  kAccRead,    // In the reduction body: the slot's value before this iteration.
  kAccWrite,   // In the reduction body: the slot's value after this iteration
               // is a. At most one per slot; every kAccRead of the slot in the
               // same iteration sees the old value.
  kAccResult,  // After the reduction loops: the slot's final value.
};

// Guards. A kIMin or kIMax with imm 1 is a clamp that only keeps a position
// in bounds: the program uses what depends on it only for elements where it
// does not bind (min(a, b) == a, max(a, b) == a), and for the others any
// in-bounds value will do (a concatenate's part read where another part is
// selected, a pad's operand read where the padding value is). Scalar code
// computes it as min/max like any other; a vector loop may compute a in its
// place (GuardedStridesAlong) provided every load whose position then moves
// along the loop reads in bounds for all of its lanes.
struct KOp {
  KOpKind kind = KOpKind::kIConst;
  // The result type; kS64 for index operations, kTuple for kStore.
  ElementType type = ElementType::kS64;
  // The type of operand a (for value operations that read values).
  ElementType operand_type = ElementType::kS64;
  Opcode opcode = Opcode::kAdd;  // kUnary, kBinary, kCall.
  ComparisonDirection direction = ComparisonDirection::kEq;  // kCompare.
  // kCompare: never kDefault (resolved to kFloat, kTotalOrder, kSigned or
  // kUnsigned when the program is built).
  ComparisonType comparison = ComparisonType::kSigned;
  int a = -1;
  int b = -1;
  int c = -1;
  int64_t imm = 0;
  // Provenance: the HLO instruction this operation computes part of, as an
  // index into KernelProgram::origins (-1: none recorded). Every rewrite
  // keeps it (a copied operation carries it; operations a rewrite creates in
  // place of one take that one's), so that a profile of the kernel (jitdump,
  // `perf annotate`) names the instruction of each line. Not part of an
  // operation's identity: CSE shares operations of different origins (the
  // first one's is kept).
  int origin = -1;
};

bool IsIndexOp(KOpKind kind);

// The value a reduction by `opcode` starts from on `type`, as lane bits:
// for f32/f64 -0 (add), 1 (multiply), -inf (maximum), +inf (minimum); for
// integers 0 (add, or, xor), 1 (multiply), all ones (and) and the type's
// least (maximum) or greatest (minimum) value. Both targets' accumulators
// start from it.
uint64_t ReductionIdentityBits(Opcode opcode, ElementType type);

struct KernelBuffer {
  ElementType type = ElementType::kF32;
  // Element slots in the buffer (its physical element count).
  int64_t element_count = 0;
};

// Where an operation runs in a reduction program (see KernelProgram).
enum class KSection : uint8_t {
  kPre,   // Once per output element, before the reduction loops.
  kBody,  // Once per reduction iteration.
  kPost,  // Once per output element, after the reduction loops.
};

struct KernelProgram {
  std::string name;
  // Inputs, then the `output_count` outputs (the last buffers), in the order
  // of the computed value's tuple elements (one output for an array).
  std::vector<KernelBuffer> buffers;
  int output_count = 1;
  // Loop trip counts, outermost first. The first `output_loops()` loops run
  // over output elements (in the first output's physical order), the last
  // `reduction_loops` over the reduced elements of one output element. Loop
  // 0 is always an output loop (a scalar reduction has one loop of extent 1)
  // and disjoint ranges of it may run concurrently; reduction loops have
  // extents >= 1 (an empty reduction has no loops: its result is the init
  // value).
  std::vector<int64_t> loop_extents;
  int reduction_loops = 0;
  // Whether loop 0 is a range the kernel claims rather than a loop it runs:
  // a call for [begin, end) runs the body once, with loop 0's index at
  // begin and kLoopEnd at end, and the body decides which work falls in its
  // range (a scatter split by target rows: each call scans every update and
  // applies those whose row it owns, skipping the others with kSkipUnless).
  // Calls for disjoint ranges may still run concurrently; each call's cost
  // does not shrink with its range, so a runtime splits such a kernel into
  // at most one range per thread. No reduction loops.
  bool claims_range = false;
  std::vector<KOp> ops;
  // The names of the HLO instructions that KOp::origin indexes.
  std::vector<std::string> origins;

  int output_buffer(int output = 0) const {
    return static_cast<int>(buffers.size()) - output_count + output;
  }
  int input_count() const { return static_cast<int>(buffers.size()) - output_count; }
  int output_loops() const { return static_cast<int>(loop_extents.size()) - reduction_loops; }
  // The product of the output loops' extents.
  int64_t element_count() const;
  // One operation per line, e.g. "%5 = f32 add %3 %4"; with `origins`,
  // followed by "  ; " and the HLO instruction the operation belongs to,
  // where recorded (the jitdump text and `xjit compile --dump`; golden
  // programs leave it out).
  std::string ToString(bool origins = false) const;
};

// For every operation: how its value moves when the innermost loop index
// grows by one. For index operations: the constant step when the value is
// affine in the innermost index (0 = invariant), nullopt when it is not
// affine. For value operations: 0 when the value is invariant, nullopt
// otherwise (a loaded value varies even when its position is affine).
std::vector<std::optional<int64_t>> InnerStrides(const KernelProgram& program);
// The same with respect to loop `level` (other loop indices are invariant;
// accumulator values vary).
std::vector<std::optional<int64_t>> StridesAlong(const KernelProgram& program, int level);

// StridesAlong with every guard (see KOp) taken as its operand a: the
// strides of a vector loop that computes guards that way.
std::vector<std::optional<int64_t>> GuardedStridesAlong(const KernelProgram& program, int level);
// Whether operation `op` is a guard.
inline bool IsGuard(const KOp& op) {
  return (op.kind == KOpKind::kIMin || op.kind == KOpKind::kIMax) && op.imm == 1;
}

// Removes operations no store or accumulator update depends on, renumbering
// the rest.
void RemoveDeadOps(KernelProgram* program);

// Gives the value operations that kToIndex reads (directly or through other
// value operations: a loaded gather index, its wrap-around select) their
// own copies wherever one is also read as a value, renumbering the program.
// A value read both ways cannot be an index value (IndexValueOps), so a
// gather position derived from it is not affine and keeps the whole kernel
// scalar (an embedding bag masked by its own indices: 7x XLA's time); with
// the chain copied, the index side is scalar index arithmetic and the value
// side vector code. The copies compute the same values: loads and pure
// operations only.
void SplitIndexChains(KernelProgram* program);

// For every operation: how many times later operations name it as an
// operand (a, b or c; an operation naming it twice counts twice).
std::vector<int> UseCounts(const KernelProgram& program);

// For every operation: the outermost loop level at which it can be computed
// (-1 = before all loops). Value operations are at the innermost level of
// their section: the innermost loop for kBody, the innermost output loop for
// kPre and kPost (without reduction loops, every value operation is kPre at
// the innermost loop).
std::vector<int> OpLevels(const KernelProgram& program);

// Index values: value operations that only compute indices. Each is a
// load, constant, conversion or elementwise operation whose operands are
// index operations or index values and whose every user is an index value
// or reads it as an index (kToIndex is one; its result is an index). A
// dynamic-slice's start index loaded from a buffer, clamped, perhaps computed
// in s32 first (JAX wraps a negative index with a compare, an add and a
// select), is such a chain. Its value depends only on the loops its operands
// depend on, so a target may compute it in scalar code where an index
// operation with those operands would be (OpLevels with index_values), and
// vectorise the loop that reads through it when it is invariant there.
std::vector<bool> IndexValueOps(const KernelProgram& program);
// OpLevels, with the operations `index_values` marks (IndexValueOps) placed
// like index operations: at the outermost loop level their operands allow.
std::vector<int> OpLevels(const KernelProgram& program, const std::vector<bool>& index_values);

// For every operation: its section. Index operations are kPre when they
// depend on output loops only, kBody otherwise. A value operation is kBody
// when it depends on a reduction loop index or a kAccRead (or is a
// kAccRead/kAccWrite), kPost when it depends on a kAccResult, kPre otherwise.
std::vector<KSection> OpSections(const KernelProgram& program);

// Row programs: several passes over the reduced elements.
//
// A body operation may read a kAccResult (or a kPost value made from one):
// softmax's exp(x - max) over a row reads the row's maximum, which is
// complete only after a whole pass over the row. Such a program runs, per
// output element, the kPre operations, then pass 0 of the reduction loops,
// the kPost operations that pass 0 made computable, pass 1, and so on: one
// kernel in which the row is reread from cache, not from memory. Each body
// operation is computed in every pass that needs it (a load of x in the
// maximum's pass and again in the sum's), never carried between passes.
// Passes are derived from the dependencies alone:
//   - a slot's pass is the pass of the value its kAccWrite writes; a kPost
//     value's stage is 1 + the latest pass of the slots whose results it
//     reads (0 for kPre values): it is computed after that many passes;
//   - a body operation's pass is the largest of its body operands' passes,
//     its non-body operands' stages and, for kAccRead/kAccWrite, its slot's
//     pass; a body kStore runs in its pass;
//   - `count` is 1 + the largest pass of any slot or body store (1 for every
//     program without such dependencies, which runs as before).
struct ProgramPhases {
  int count = 1;
  std::vector<int> pass;       // Body operations: their pass; others -1.
  std::vector<int> stage;      // kPre/kPost operations: their stage; body -1.
  std::vector<int> slot_pass;  // By accumulator slot (-1: no such slot).
  // Whether operation `id` runs in pass `p`: a body operation that an
  // accumulator write of a slot of pass p or a body store of pass p needs.
  // `carried_from` (optional, by op): a body value computed in pass c >= 0
  // and kept for later passes (a target's choice); in passes after c it is
  // read back, so the walk stops there (it runs, its operands need not).
  std::vector<bool> InPass(const KernelProgram& program, int p,
                           const std::vector<int>* carried_from = nullptr) const;
};
ProgramPhases ComputePhases(const KernelProgram& program);

// Checks the structural rules above (loop counts, accumulator slots, no
// operation both in the body and after it, operands before users); the
// emitter's programs always pass, a target calls it before lowering.
absl::Status ValidateProgram(const KernelProgram& program);

}  // namespace xjit::jit

#endif  // XJIT_JIT_KERNEL_PROGRAM_H_
