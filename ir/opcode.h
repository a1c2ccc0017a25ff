// The opcode table: every HLO opcode with its text name, arity (-1 for
// variadic) and properties (elementwise class, expensive, complex math, side
// effect, place). The enum, name lookup, parser and printer dispatch and
// every classification of opcodes below derive from this one list, which
// follows XLA's hlo_opcode.h (newest sources).
#ifndef XJIT_IR_OPCODE_H_
#define XJIT_IR_OPCODE_H_

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace xjit {

// The columns after name and arity are the properties the rest of xjit asks
// of an opcode, so that no list of "which ops are X" is kept by hand elsewhere:
//
// - elementwise class: kUnary and kBinary elementwise operations (one result
//   element from the operands' elements at the same index); kOther for the
//   remaining elementwise ones (select, clamp, convert, reduce-precision,
//   stochastic-convert); kNone otherwise.
// - flags, any of (kNoFlags for none):
//   kExpensive: an elementwise operation worth computing once rather than
//     again in every consumer (fusion does not duplicate it).
//   kComplexMath: defined on complex operands as complex arithmetic (the
//     evaluator's ComplexUnary/ComplexBinary, interpreter/complex_math.h).
//   kSideEffect: its execution has effects beyond its result.
//   kPlace: computes nothing; its value is an operand's, a parameter's or a
//     literal's (buffer planning gives it no code of its own).
//
// Properties only a higher layer can state stay there, beside what they
// decide: whether an opcode runs as a library call is the JIT's table
// (jit/calls/library_calls.cc), which side effects the JIT compiles to
// context steps is the driver's (jit/compile.cc).
//
// Each row is R(V, opcode, name, arity, elementwise class, flags); R picks
// the columns a user wants (XJIT_OPCODES: the first three).
#define XJIT_OPCODE_ROWS(R, V) \
  R(V, kAbs, "abs", 1, kUnary, kComplexMath) \
  R(V, kAcos, "acos", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kAcosh, "acosh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kAdd, "add", 2, kBinary, kComplexMath) \
  R(V, kAddDependency, "add-dependency", 2, kNone, kSideEffect | kPlace) \
  R(V, kAfterAll, "after-all", -1, kNone, kSideEffect) \
  R(V, kAllGather, "all-gather", -1, kNone, kNoFlags) \
  R(V, kAllGatherDone, "all-gather-done", 1, kNone, kNoFlags) \
  R(V, kAllGatherStart, "all-gather-start", -1, kNone, kNoFlags) \
  R(V, kAllReduce, "all-reduce", -1, kNone, kNoFlags) \
  R(V, kAllReduceDone, "all-reduce-done", 1, kNone, kNoFlags) \
  R(V, kAllReduceStart, "all-reduce-start", -1, kNone, kNoFlags) \
  R(V, kAllToAll, "all-to-all", -1, kNone, kNoFlags) \
  R(V, kAnd, "and", 2, kBinary, kNoFlags) \
  R(V, kAsin, "asin", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kAsinh, "asinh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kAsyncDone, "async-done", 1, kNone, kNoFlags) \
  R(V, kAsyncStart, "async-start", -1, kNone, kNoFlags) \
  R(V, kAsyncUpdate, "async-update", 1, kNone, kNoFlags) \
  R(V, kAtan, "atan", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kAtan2, "atan2", 2, kBinary, kExpensive | kComplexMath) \
  R(V, kAtanh, "atanh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kBatchNormGrad, "batch-norm-grad", 5, kNone, kNoFlags) \
  R(V, kBatchNormInference, "batch-norm-inference", 5, kNone, kNoFlags) \
  R(V, kBatchNormTraining, "batch-norm-training", 3, kNone, kNoFlags) \
  R(V, kBitcast, "bitcast", 1, kNone, kPlace) \
  R(V, kBitcastConvert, "bitcast-convert", 1, kNone, kNoFlags) \
  R(V, kBroadcast, "broadcast", 1, kNone, kNoFlags) \
  R(V, kCall, "call", -1, kNone, kNoFlags) \
  R(V, kCbrt, "cbrt", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kCeil, "ceil", 1, kUnary, kNoFlags) \
  R(V, kCholesky, "cholesky", 1, kNone, kNoFlags) \
  R(V, kClamp, "clamp", 3, kOther, kNoFlags) \
  R(V, kClz, "count-leading-zeros", 1, kUnary, kNoFlags) \
  R(V, kCollectiveBroadcast, "collective-broadcast", -1, kNone, kNoFlags) \
  R(V, kCollectivePermute, "collective-permute", -1, kNone, kNoFlags) \
  R(V, kCollectivePermuteDone, "collective-permute-done", 1, kNone, kNoFlags) \
  R(V, kCollectivePermuteStart, "collective-permute-start", -1, kNone, kNoFlags) \
  R(V, kCollectiveReduce, "collective-reduce", -1, kNone, kNoFlags) \
  R(V, kCompare, "compare", 2, kBinary, kNoFlags) \
  R(V, kComplex, "complex", 2, kBinary, kNoFlags) \
  R(V, kConcatenate, "concatenate", -1, kNone, kNoFlags) \
  R(V, kConditional, "conditional", -1, kNone, kNoFlags) \
  R(V, kConstant, "constant", 0, kNone, kPlace) \
  R(V, kConvert, "convert", 1, kOther, kNoFlags) \
  R(V, kConvolution, "convolution", 2, kNone, kNoFlags) \
  R(V, kCopy, "copy", 1, kNone, kNoFlags) \
  R(V, kCopyDone, "copy-done", 1, kNone, kNoFlags) \
  R(V, kCopyStart, "copy-start", 1, kNone, kNoFlags) \
  R(V, kCos, "cosine", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kCosh, "cosh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kCustomCall, "custom-call", -1, kNone, kNoFlags) \
  R(V, kDivide, "divide", 2, kBinary, kExpensive | kComplexMath) \
  R(V, kDomain, "domain", 1, kNone, kPlace) \
  R(V, kDot, "dot", 2, kNone, kNoFlags) \
  R(V, kDynamicReshape, "dynamic-reshape", -1, kNone, kNoFlags) \
  R(V, kDynamicSlice, "dynamic-slice", -1, kNone, kNoFlags) \
  R(V, kDynamicUpdateSlice, "dynamic-update-slice", -1, kNone, kNoFlags) \
  R(V, kErf, "erf", 1, kUnary, kExpensive) \
  R(V, kExp, "exponential", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kExpm1, "exponential-minus-one", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kFft, "fft", 1, kNone, kNoFlags) \
  R(V, kFloor, "floor", 1, kUnary, kNoFlags) \
  R(V, kFusion, "fusion", -1, kNone, kNoFlags) \
  R(V, kGather, "gather", 2, kNone, kNoFlags) \
  R(V, kGetDimensionSize, "get-dimension-size", 1, kNone, kNoFlags) \
  R(V, kGetTupleElement, "get-tuple-element", 1, kNone, kPlace) \
  R(V, kImag, "imag", 1, kUnary, kComplexMath) \
  R(V, kInfeed, "infeed", 1, kNone, kSideEffect) \
  R(V, kIota, "iota", 0, kNone, kNoFlags) \
  R(V, kIsFinite, "is-finite", 1, kUnary, kNoFlags) \
  R(V, kLog, "log", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kLog1p, "log-plus-one", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kLogistic, "logistic", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kMap, "map", -1, kNone, kNoFlags) \
  R(V, kMaximum, "maximum", 2, kBinary, kComplexMath) \
  R(V, kMinimum, "minimum", 2, kBinary, kComplexMath) \
  R(V, kMulhi, "mulhi", 2, kBinary, kNoFlags) \
  R(V, kMultiply, "multiply", 2, kBinary, kComplexMath) \
  R(V, kNegate, "negate", 1, kUnary, kComplexMath) \
  R(V, kNot, "not", 1, kUnary, kNoFlags) \
  R(V, kOptimizationBarrier, "opt-barrier", 1, kNone, kSideEffect | kPlace) \
  R(V, kOr, "or", 2, kBinary, kNoFlags) \
  R(V, kOutfeed, "outfeed", 2, kNone, kSideEffect) \
  R(V, kPad, "pad", 2, kNone, kNoFlags) \
  R(V, kParameter, "parameter", 0, kNone, kPlace) \
  R(V, kPartitionId, "partition-id", 0, kNone, kNoFlags) \
  R(V, kPopulationCount, "popcnt", 1, kUnary, kNoFlags) \
  R(V, kPower, "power", 2, kBinary, kExpensive | kComplexMath) \
  R(V, kRaggedAllToAll, "ragged-all-to-all", 6, kNone, kNoFlags) \
  R(V, kRaggedDot, "ragged-dot", 3, kNone, kNoFlags) \
  R(V, kReal, "real", 1, kUnary, kComplexMath) \
  R(V, kRecv, "recv", 1, kNone, kSideEffect) \
  R(V, kRecvDone, "recv-done", 1, kNone, kSideEffect) \
  R(V, kReduce, "reduce", -1, kNone, kNoFlags) \
  R(V, kReducePrecision, "reduce-precision", 1, kOther, kNoFlags) \
  R(V, kReduceScatter, "reduce-scatter", -1, kNone, kNoFlags) \
  R(V, kReduceWindow, "reduce-window", -1, kNone, kNoFlags) \
  R(V, kRemainder, "remainder", 2, kBinary, kExpensive) \
  R(V, kReplicaId, "replica-id", 0, kNone, kNoFlags) \
  R(V, kReshape, "reshape", 1, kNone, kNoFlags) \
  R(V, kReverse, "reverse", 1, kNone, kNoFlags) \
  R(V, kRng, "rng", -1, kNone, kSideEffect) \
  R(V, kRngBitGenerator, "rng-bit-generator", 1, kNone, kNoFlags) \
  R(V, kRngGetAndUpdateState, "rng-get-and-update-state", 0, kNone, kSideEffect) \
  R(V, kRoundNearestAfz, "round-nearest-afz", 1, kUnary, kNoFlags) \
  R(V, kRoundNearestEven, "round-nearest-even", 1, kUnary, kNoFlags) \
  R(V, kRsqrt, "rsqrt", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kScaledDot, "scaled-dot", 4, kNone, kNoFlags) \
  R(V, kScan, "scan", -1, kNone, kNoFlags) \
  R(V, kScatter, "scatter", -1, kNone, kNoFlags) \
  R(V, kSelect, "select", 3, kOther, kNoFlags) \
  R(V, kSelectAndScatter, "select-and-scatter", 3, kNone, kNoFlags) \
  R(V, kSend, "send", 2, kNone, kSideEffect) \
  R(V, kSendDone, "send-done", 1, kNone, kSideEffect) \
  R(V, kSetDimensionSize, "set-dimension-size", 2, kNone, kNoFlags) \
  R(V, kShiftLeft, "shift-left", 2, kBinary, kNoFlags) \
  R(V, kShiftRightArithmetic, "shift-right-arithmetic", 2, kBinary, kNoFlags) \
  R(V, kShiftRightLogical, "shift-right-logical", 2, kBinary, kNoFlags) \
  R(V, kShuffle, "shuffle", 1, kNone, kNoFlags) \
  R(V, kSign, "sign", 1, kUnary, kComplexMath) \
  R(V, kSin, "sine", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kSinh, "sinh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kSlice, "slice", 1, kNone, kNoFlags) \
  R(V, kSort, "sort", -1, kNone, kNoFlags) \
  R(V, kSqrt, "sqrt", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kStochasticConvert, "stochastic-convert", 2, kOther, kNoFlags) \
  R(V, kSubtract, "subtract", 2, kBinary, kComplexMath) \
  R(V, kTan, "tan", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kTanh, "tanh", 1, kUnary, kExpensive | kComplexMath) \
  R(V, kTopK, "topk", 1, kNone, kNoFlags) \
  R(V, kTranspose, "transpose", 1, kNone, kNoFlags) \
  R(V, kTriangularSolve, "triangular-solve", 2, kNone, kNoFlags) \
  R(V, kTuple, "tuple", -1, kNone, kPlace) \
  R(V, kWhile, "while", 1, kNone, kNoFlags) \
  R(V, kXor, "xor", 2, kBinary, kNoFlags)

#define XJIT_OPCODE_ROW_NAME_ARITY(V, e, name, arity, elementwise, flags) V(e, name, arity)
#define XJIT_OPCODE_ROW_ALL(V, e, name, arity, elementwise, flags) \
  V(e, name, arity, elementwise, flags)
// V(e, name, arity) per opcode.
#define XJIT_OPCODES(V) XJIT_OPCODE_ROWS(XJIT_OPCODE_ROW_NAME_ARITY, V)
// V(e, name, arity, elementwise class, flags) per opcode; the class and the
// flags are names from ElementwiseClass and opcode_flags, unqualified.
#define XJIT_OPCODES_WITH_PROPERTIES(V) XJIT_OPCODE_ROWS(XJIT_OPCODE_ROW_ALL, V)

enum class Opcode : uint8_t {
#define XJIT_DECLARE_OPCODE(e, name, arity) e,
  XJIT_OPCODES(XJIT_DECLARE_OPCODE)
#undef XJIT_DECLARE_OPCODE
};

inline constexpr int kNumOpcodes = 0
#define XJIT_COUNT_OPCODE(e, name, arity) +1
    XJIT_OPCODES(XJIT_COUNT_OPCODE)
#undef XJIT_COUNT_OPCODE
    ;

inline constexpr int kVariadic = -1;

// The elementwise-class column of the table.
enum class ElementwiseClass : uint8_t { kNone, kUnary, kBinary, kOther };

// The flags column of the table: bits, or'ed.
namespace opcode_flags {
inline constexpr uint8_t kNoFlags = 0;
inline constexpr uint8_t kExpensive = 1 << 0;
inline constexpr uint8_t kComplexMath = 1 << 1;
inline constexpr uint8_t kSideEffect = 1 << 2;
inline constexpr uint8_t kPlace = 1 << 3;
}  // namespace opcode_flags

// The HLO text name: "add", "exponential", "count-leading-zeros", ...
absl::string_view OpcodeName(Opcode opcode);
std::optional<Opcode> ParseOpcode(absl::string_view name);
// Number of operands, or kVariadic.
int OpcodeArity(Opcode opcode);

// Classification used by shape inference, the evaluator, fusion and the
// JIT: each reads one column of the table.
ElementwiseClass OpcodeElementwiseClass(Opcode opcode);
bool IsElementwiseUnary(Opcode opcode);   // abs, exp, convert excluded, ...
bool IsElementwiseBinary(Opcode opcode);  // add, compare, atan2, complex, ...
// Elementwise in the XLA sense: unary, binary, select, clamp, convert,
// bitcast-convert of equal widths is not included (it may change rank).
bool IsElementwise(Opcode opcode);
// Elementwise operations worth computing once rather than in every consumer
// (transcendentals, divide, power, ...): fusion does not duplicate them.
bool IsExpensiveElementwise(Opcode opcode);
// Elementwise operations defined on complex operands as complex arithmetic.
bool HasComplexMath(Opcode opcode);
// Operations whose execution has effects beyond their result (infeed,
// outfeed, send/recv, rng, side-effecting custom-call is decided per
// instruction).
bool HasSideEffect(Opcode opcode);
// Instructions that compute nothing: parameter, constant, bitcast,
// get-tuple-element, tuple, opt-barrier, domain, add-dependency.
bool IsPlace(Opcode opcode);

}  // namespace xjit

#endif  // XJIT_IR_OPCODE_H_
