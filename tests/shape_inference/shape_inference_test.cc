// Shape inference, one family of opcodes per test. Expected shapes come from
// the worked examples of the operation semantics (seeds/003) where it gives
// them, otherwise from hand calculation written next to the case.
#include "ir/shape_inference/shape_inference.h"

#include <string>

#include "gtest/gtest.h"
#include "tests/shape_inference/test_graph.h"

namespace xjit::testing {
namespace {

#define EXPECT_SHAPE(expr, text)                                        \
  do {                                                                  \
    auto result_ = (expr);                                              \
    ASSERT_TRUE(result_.ok()) << result_.status().message();            \
    EXPECT_EQ(Text(*result_), text);                                    \
  } while (0)

#define EXPECT_ERROR(expr, substring)                                            \
  do {                                                                           \
    auto result_ = (expr);                                                       \
    ASSERT_FALSE(result_.ok()) << "unexpectedly inferred " << Text(*result_);    \
    EXPECT_NE(std::string(result_.status().message()).find(substring),           \
              std::string::npos)                                                 \
        << "message: " << result_.status().message();                           \
  } while (0)

using A = InstructionAttributes;

// ---------------------------------------------------------------------------
// Elementwise.

TEST(ElementwiseTest, BinaryShapesMustMatchExactly) {
  Graph g;
  auto* a = g.Param(0, F32({2}));
  auto* b = g.Param(1, F32({3}));
  auto* c = g.Param(2, F32({2}));
  auto* s = g.Param(3, F32({}));
  auto* i = g.Param(4, S32({2}));
  EXPECT_SHAPE(g.Infer(Opcode::kAdd, {a, c}), "f32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kAdd, {a, b}), "add: operand shapes f32[2] and f32[3] differ");
  // No implicit broadcasting of scalars in HLO.
  EXPECT_ERROR(g.Infer(Opcode::kMultiply, {a, s}), "multiply: operand shapes");
  EXPECT_ERROR(g.Infer(Opcode::kSubtract, {a, i}), "element types f32 and s32 differ");
}

TEST(ElementwiseTest, BinaryTypeRules) {
  Graph g;
  auto* f = g.Param(0, F32({2, 3}));
  auto* d = g.Param(1, Arr(ElementType::kF64, {4}));
  auto* i = g.Param(2, S32({2, 3}));
  auto* p = g.Param(3, Arr(ElementType::kPred, {2, 3}));
  auto* h = g.Param(4, Arr(ElementType::kF16, {2}));
  EXPECT_SHAPE(g.Infer(Opcode::kCompare, {f, f}), "pred[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kCompare, {i, i}), "pred[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kComplex, {f, f}), "c64[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kComplex, {d, d}), "c128[4]");
  EXPECT_ERROR(g.Infer(Opcode::kComplex, {h, h}), "complex: operand element type f16");
  EXPECT_ERROR(g.Infer(Opcode::kComplex, {i, i}), "complex");
  EXPECT_SHAPE(g.Infer(Opcode::kShiftLeft, {i, i}), "s32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kShiftRightLogical, {f, f}), "shift-right-logical");
  EXPECT_SHAPE(g.Infer(Opcode::kAnd, {p, p}), "pred[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kXor, {i, i}), "s32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kOr, {f, f}), "or: operand element type f32");
  EXPECT_SHAPE(g.Infer(Opcode::kAtan2, {f, f}), "f32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kAtan2, {i, i}), "atan2");
  EXPECT_SHAPE(g.Infer(Opcode::kRemainder, {i, i}), "s32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kDivide, {p, p}), "divide");
  EXPECT_SHAPE(g.Infer(Opcode::kMaximum, {p, p}), "pred[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kMulhi, {f, f}), "mulhi");
}

TEST(ElementwiseTest, UnaryTypeRules) {
  Graph g;
  auto* f = g.Param(0, F32({2}));
  auto* c64 = g.Param(1, Arr(ElementType::kC64, {2}));
  auto* c128 = g.Param(2, Arr(ElementType::kC128, {3}));
  auto* i = g.Param(3, S32({2}));
  auto* u = g.Param(4, Arr(ElementType::kU32, {2}));
  auto* p = g.Param(5, Arr(ElementType::kPred, {2}));
  // abs/real/imag of complex give the component type.
  EXPECT_SHAPE(g.Infer(Opcode::kAbs, {c64}), "f32[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kAbs, {i}), "s32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kAbs, {u}), "abs: operand element type u32");
  EXPECT_SHAPE(g.Infer(Opcode::kReal, {c128}), "f64[3]");
  EXPECT_SHAPE(g.Infer(Opcode::kImag, {c64}), "f32[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kImag, {f}), "f32[2]");  // 0 for real operands
  EXPECT_ERROR(g.Infer(Opcode::kReal, {i}), "real");
  EXPECT_SHAPE(g.Infer(Opcode::kIsFinite, {f}), "pred[2]");
  EXPECT_ERROR(g.Infer(Opcode::kIsFinite, {i}), "is-finite");
  EXPECT_SHAPE(g.Infer(Opcode::kNot, {p}), "pred[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kNot, {u}), "u32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kNot, {f}), "not");
  EXPECT_SHAPE(g.Infer(Opcode::kPopulationCount, {u}), "u32[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kClz, {i}), "s32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kClz, {f}), "count-leading-zeros");
  EXPECT_SHAPE(g.Infer(Opcode::kExp, {c64}), "c64[2]");
  EXPECT_ERROR(g.Infer(Opcode::kExp, {i}), "exponential");
  EXPECT_SHAPE(g.Infer(Opcode::kNegate, {i}), "s32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kNegate, {p}), "negate");
  EXPECT_SHAPE(g.Infer(Opcode::kSign, {f}), "f32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kFloor, {c64}), "floor");
  EXPECT_SHAPE(g.Infer(Opcode::kRoundNearestEven, {f}), "f32[2]");
}

TEST(ElementwiseTest, DynamicFlagsPropagate) {
  Graph g;
  Shape dyn = F32({10});
  dyn.set_dynamic_dimension(0, true);
  auto* a = g.Param(0, dyn);
  auto* b = g.Param(1, F32({10}));
  auto result = g.Infer(Opcode::kAdd, {a, b});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(Text(*result), "f32[<=10]");
}

TEST(ElementwiseTest, SelectAndClamp) {
  Graph g;
  auto* pred = g.Param(0, Arr(ElementType::kPred, {2, 3}));
  auto* scalar_pred = g.Param(1, Arr(ElementType::kPred, {}));
  auto* x = g.Param(2, F32({2, 3}));
  auto* y = g.Param(3, F32({2, 3}));
  auto* lo = g.Param(4, F32({}));
  auto* wrong = g.Param(5, F32({3}));
  auto* ints = g.Param(6, S32({2, 3}));
  EXPECT_SHAPE(g.Infer(Opcode::kSelect, {pred, x, y}), "f32[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kSelect, {scalar_pred, x, y}), "f32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kSelect, {ints, x, y}), "predicate element type s32 is not pred");
  EXPECT_ERROR(g.Infer(Opcode::kSelect, {pred, x, ints}), "on_true shape");
  // Clamp bounds may be scalars or match the operand.
  EXPECT_SHAPE(g.Infer(Opcode::kClamp, {lo, x, lo}), "f32[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kClamp, {x, y, x}), "f32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kClamp, {wrong, x, lo}), "clamp: min shape f32[3]");
  EXPECT_ERROR(g.Infer(Opcode::kClamp, {lo, ints, lo}), "min element type f32");
}

TEST(ConvertTest, ConvertKeepsDimensions) {
  Graph g;
  auto* a = g.Param(0, S32({2, 3}));
  auto* c = g.Param(1, Arr(ElementType::kC64, {2}));
  EXPECT_SHAPE(g.Infer(Opcode::kConvert, {a}, nullptr, {}, F32({2, 3})), "f32[2,3]");
  // The given dimensions do not override the operand's: the verifier will
  // reject the instruction.
  EXPECT_SHAPE(g.Infer(Opcode::kConvert, {a}, nullptr, {}, F32({6})), "f32[2,3]");
  // Complex to real keeps the real part.
  EXPECT_SHAPE(g.Infer(Opcode::kConvert, {c}, nullptr, {}, F32({2})), "f32[2]");
}

// seeds/003, BitcastConvertType: f32[10] -> f16[10,2]; f32[] -> f16[2];
// f16[10,2] -> f32[10].
TEST(ConvertTest, BitcastConvertBetweenWidths) {
  Graph g;
  auto* f32_10 = g.Param(0, F32({10}));
  auto* f32_scalar = g.Param(1, F32({}));
  auto* f16_10_2 = g.Param(2, Arr(ElementType::kF16, {10, 2}));
  auto* f16_10_3 = g.Param(3, Arr(ElementType::kF16, {10, 3}));
  auto* s32_2 = g.Param(4, S32({4, 2}));
  auto* u8 = g.Param(5, Arr(ElementType::kU8, {3, 8}));
  const Shape f16 = Arr(ElementType::kF16, {});
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {f32_10}, nullptr, {}, f16), "f16[10,2]");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {f32_scalar}, nullptr, {}, f16), "f16[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {f16_10_2}, nullptr, {}, F32({})), "f32[10]");
  EXPECT_ERROR(g.Infer(Opcode::kBitcastConvert, {f16_10_3}, nullptr, {}, F32({})),
               "minor-most dimension of size 2");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {s32_2}, nullptr, {}, F32({})), "f32[4,2]");
  // One s32 element becomes 4 s8 elements; 8 u8 become one f64.
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {s32_2}, nullptr, {}, Arr(ElementType::kS8, {})),
               "s8[4,2,4]");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {u8}, nullptr, {}, Arr(ElementType::kF64, {})),
               "f64[3]");
  // PRED is one bit wide for bitcast-convert: 64 preds make one s64.
  auto* preds = g.Param(6, Arr(ElementType::kPred, {64}));
  auto* s64 = g.Param(7, Arr(ElementType::kS64, {}));
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {preds}, nullptr, {}, Arr(ElementType::kS64, {})),
               "s64[]");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcastConvert, {s64}, nullptr, {}, Arr(ElementType::kPred, {})),
               "pred[64]");
}

TEST(ConvertTest, ReducePrecisionAndStochasticConvert) {
  Graph g;
  auto* f = g.Param(0, F32({4}));
  auto* bits = g.Param(1, Arr(ElementType::kU32, {4}));
  auto* i = g.Param(2, S32({4}));
  EXPECT_SHAPE(g.Infer(Opcode::kReducePrecision, {f},
                       [](A* a) { a->exponent_bits = 5; a->mantissa_bits = 10; }),
               "f32[4]");
  EXPECT_ERROR(g.Infer(Opcode::kReducePrecision, {f},
                       [](A* a) { a->exponent_bits = 0; a->mantissa_bits = 10; }),
               "exponent_bits");
  EXPECT_ERROR(g.Infer(Opcode::kReducePrecision, {i},
                       [](A* a) { a->exponent_bits = 5; a->mantissa_bits = 10; }),
               "float");
  EXPECT_SHAPE(g.Infer(Opcode::kStochasticConvert, {f, bits}, nullptr, {},
                       Arr(ElementType::kS8, {4})),
               "s8[4]");
  EXPECT_ERROR(g.Infer(Opcode::kStochasticConvert, {f, i}, nullptr, {}, Arr(ElementType::kS8, {4})),
               "random element type s32");
}

// ---------------------------------------------------------------------------
// Shape manipulation.

TEST(ShapeOpsTest, Broadcast) {
  Graph g;
  auto* v = g.Param(0, F32({3}));
  auto* s = g.Param(1, F32({}));
  auto dims = [](std::vector<int64_t> d) { return [d](A* a) { a->dimensions = d; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kBroadcast, {v}, dims({1}), {}, F32({2, 3})), "f32[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kBroadcast, {s}, dims({}), {}, F32({2, 3})), "f32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kBroadcast, {v}, dims({0}), {}, F32({2, 3})),
               "operand dimension 0 has size 3 but result dimension 0 has size 2");
  // seeds/003 BroadcastInDim: a size-1 dimension may be expanded.
  auto* m = g.Param(2, F32({3, 1}));
  EXPECT_SHAPE(g.Infer(Opcode::kBroadcast, {m}, dims({0, 2}), {}, F32({3, 2, 2})), "f32[3,2,2]");
  EXPECT_ERROR(g.Infer(Opcode::kBroadcast, {v}, dims({2}), {}, F32({2, 3})), "out of range");
  EXPECT_ERROR(g.Infer(Opcode::kBroadcast, {v}, dims({}), {}, F32({2, 3})),
               "one entry per operand dimension");
  EXPECT_ERROR(g.Infer(Opcode::kBroadcast, {v}, dims({1}), {}, S32({2, 3})), "element type");
}

TEST(ShapeOpsTest, ReshapeAndTranspose) {
  Graph g;
  auto* a = g.Param(0, F32({2, 3, 4}));
  EXPECT_SHAPE(g.Infer(Opcode::kReshape, {a}, nullptr, {}, F32({6, 4})), "f32[6,4]");
  EXPECT_ERROR(g.Infer(Opcode::kReshape, {a}, nullptr, {}, F32({5, 5})),
               "element counts differ");
  auto perm = [](std::vector<int64_t> d) { return [d](A* a) { a->dimensions = d; }; };
  // Output dimension i is operand dimension perm[i].
  EXPECT_SHAPE(g.Infer(Opcode::kTranspose, {a}, perm({2, 0, 1})), "f32[4,2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kTranspose, {a}, perm({0, 0, 1})), "repeated");
  EXPECT_ERROR(g.Infer(Opcode::kTranspose, {a}, perm({0, 1})), "permutation");
  EXPECT_ERROR(g.Infer(Opcode::kTranspose, {a}, perm({0, 1, 3})), "out of range");
}

TEST(ShapeOpsTest, Slice) {
  Graph g;
  auto* a = g.Param(0, F32({10, 5}));
  auto slice = [](std::vector<SliceDimension> s) { return [s](A* a) { a->slice = s; }; };
  // [2:9:3] picks 2, 5, 8; [0:5] all five.
  EXPECT_SHAPE(g.Infer(Opcode::kSlice, {a}, slice({{2, 9, 3}, {0, 5, 1}})), "f32[3,5]");
  EXPECT_SHAPE(g.Infer(Opcode::kSlice, {a}, slice({{4, 4, 1}, {1, 3, 1}})), "f32[0,2]");
  EXPECT_ERROR(g.Infer(Opcode::kSlice, {a}, slice({{5, 3, 1}, {0, 5, 1}})), "dimension 0");
  EXPECT_ERROR(g.Infer(Opcode::kSlice, {a}, slice({{0, 11, 1}, {0, 5, 1}})), "dimension 0");
  EXPECT_ERROR(g.Infer(Opcode::kSlice, {a}, slice({{0, 5, 0}, {0, 5, 1}})), "stride");
  EXPECT_ERROR(g.Infer(Opcode::kSlice, {a}, slice({{0, 5, 1}})), "slice has 1 entries");
}

// seeds/003 DynamicSlice / DynamicUpdateSlice 2-D examples: b is f32[4,3];
// DynamicSlice(b, s, {2, 2}) is 2x2; the update u is 3x2.
TEST(ShapeOpsTest, DynamicSliceAndUpdate) {
  Graph g;
  auto* b = g.Param(0, F32({4, 3}));
  auto* i0 = g.Param(1, S32({}));
  auto* i1 = g.Param(2, S32({}));
  auto* vec = g.Param(3, S32({2}));
  auto* u = g.Param(4, F32({3, 2}));
  auto* big = g.Param(5, F32({5, 2}));
  auto* f_index = g.Param(6, F32({}));
  auto sizes = [](std::vector<int64_t> s) { return [s](A* a) { a->slice_sizes = s; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kDynamicSlice, {b, i0, i1}, sizes({2, 2})), "f32[2,2]");
  EXPECT_SHAPE(g.Infer(Opcode::kDynamicSlice, {b, vec}, sizes({2, 2})), "f32[2,2]");
  EXPECT_ERROR(g.Infer(Opcode::kDynamicSlice, {b, i0}, sizes({2, 2})), "start indices");
  EXPECT_ERROR(g.Infer(Opcode::kDynamicSlice, {b, i0, i1}, sizes({5, 2})), "slice size 5");
  EXPECT_ERROR(g.Infer(Opcode::kDynamicSlice, {b, i0, f_index}, sizes({2, 2})), "non-integer");
  EXPECT_SHAPE(g.Infer(Opcode::kDynamicUpdateSlice, {b, u, i0, i1}), "f32[4,3]");
  EXPECT_ERROR(g.Infer(Opcode::kDynamicUpdateSlice, {b, big, i0, i1}), "larger than");
}

TEST(ShapeOpsTest, Pad) {
  Graph g;
  auto* a = g.Param(0, F32({2, 3}));
  auto* zero = g.Param(1, F32({}));
  auto* empty = g.Param(2, F32({0}));
  auto* izero = g.Param(3, S32({}));
  auto pad = [](PaddingConfig p) { return [p](A* a) { a->padding = p; }; };
  // dim 0: 1 + 2 + 2 + (2-1)*1 = 6; dim 1: -1 + 0 + 3 = 2.
  EXPECT_SHAPE(g.Infer(Opcode::kPad, {a, zero}, pad({{1, 2, 1}, {-1, 0, 0}})), "f32[6,2]");
  // Interior padding of 2 between 3 elements: 3 + 2*2 = 7.
  EXPECT_SHAPE(g.Infer(Opcode::kPad, {a, zero}, pad({{0, 0, 0}, {0, 0, 2}})), "f32[2,7]");
  // An empty dimension gets no interior padding: 1 + 1 + 0 = 2.
  EXPECT_SHAPE(g.Infer(Opcode::kPad, {empty, zero}, pad({{1, 1, 5}})), "f32[2]");
  EXPECT_ERROR(g.Infer(Opcode::kPad, {a, zero}, pad({{-3, 0, 0}, {0, 0, 0}})), "negative");
  EXPECT_ERROR(g.Infer(Opcode::kPad, {a, zero}, pad({{0, 0, -1}, {0, 0, 0}})), "interior");
  EXPECT_ERROR(g.Infer(Opcode::kPad, {a, izero}, pad({{0, 0, 0}, {0, 0, 0}})), "padding value");
  EXPECT_ERROR(g.Infer(Opcode::kPad, {a, zero}, pad({{INT64_MAX, INT64_MAX, 0}, {0, 0, 0}})),
               "overflow");
}

TEST(ShapeOpsTest, ConcatenateReverseIota) {
  Graph g;
  auto* a = g.Param(0, F32({2, 3}));
  auto* b = g.Param(1, F32({4, 3}));
  auto* c = g.Param(2, F32({4, 4}));
  auto dims = [](std::vector<int64_t> d) { return [d](A* a) { a->dimensions = d; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kConcatenate, {a, b, a}, dims({0})), "f32[8,3]");
  EXPECT_ERROR(g.Infer(Opcode::kConcatenate, {a, c}, dims({0})), "outside dimension 0");
  EXPECT_ERROR(g.Infer(Opcode::kConcatenate, {a, b}, dims({2})), "out of range");
  EXPECT_SHAPE(g.Infer(Opcode::kReverse, {a}, dims({0, 1})), "f32[2,3]");
  EXPECT_ERROR(g.Infer(Opcode::kReverse, {a}, dims({1, 1})), "repeated");
  // seeds/003 Iota(s32[4, 8], 0).
  EXPECT_SHAPE(g.Infer(Opcode::kIota, {}, [](A* a) { a->iota_dimension = 0; }, {}, S32({4, 8})),
               "s32[4,8]");
  EXPECT_ERROR(g.Infer(Opcode::kIota, {}, [](A* a) { a->iota_dimension = 2; }, {}, S32({4, 8})),
               "iota_dimension 2 is out of range");
  EXPECT_ERROR(g.Infer(Opcode::kIota, {}, nullptr, {}, S32({})), "scalar");
}

TEST(ShapeOpsTest, DimensionSizes) {
  Graph g;
  auto* v = g.Param(0, F32({10}));
  auto* five = g.Param(1, S32({}));
  auto dim = [](int64_t d) { return [d](A* a) { a->dimensions = {d}; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kGetDimensionSize, {v}, dim(0)), "s32[]");
  EXPECT_ERROR(g.Infer(Opcode::kGetDimensionSize, {v}, dim(1)), "out of range");
  // seeds/003 SetDimensionSize: the bound stays 10, the dimension is dynamic.
  EXPECT_SHAPE(g.Infer(Opcode::kSetDimensionSize, {v, five}, dim(0)), "f32[<=10]");
  EXPECT_ERROR(g.Infer(Opcode::kSetDimensionSize, {v, v}, dim(0)), "size must be");
}

// seeds/003 GetTupleElement: t = (f32[10], s32); element 1 is s32.
TEST(TupleTest, TupleAndGetTupleElement) {
  Graph g;
  auto* v = g.Param(0, F32({10}));
  auto* s = g.Param(1, S32({}));
  auto* t = g.Add(Opcode::kTuple, Shape::Tuple({F32({10}), S32({})}), {v, s});
  EXPECT_SHAPE(InferShape(*t), "(f32[10], s32[])");
  EXPECT_SHAPE(g.Infer(Opcode::kGetTupleElement, {t}, [](A* a) { a->tuple_index = 1; }), "s32[]");
  EXPECT_ERROR(g.Infer(Opcode::kGetTupleElement, {t}, [](A* a) { a->tuple_index = 2; }),
               "index 2 is out of range");
  EXPECT_ERROR(g.Infer(Opcode::kGetTupleElement, {t}, [](A* a) { a->tuple_index = -1; }),
               "out of range");
  EXPECT_ERROR(g.Infer(Opcode::kGetTupleElement, {v}), "not a tuple");
}

TEST(TupleTest, TokensAndPassThrough) {
  Graph g;
  auto* v = g.Param(0, F32({10}));
  auto* token = g.Add(Opcode::kAfterAll, Shape::Token(), {});
  EXPECT_SHAPE(InferShape(*token), "token[]");
  EXPECT_SHAPE(g.Infer(Opcode::kAfterAll, {token, token}), "token[]");
  EXPECT_ERROR(g.Infer(Opcode::kAfterAll, {token, v}), "not a token");
  EXPECT_SHAPE(g.Infer(Opcode::kAddDependency, {v, token}), "f32[10]");
  EXPECT_ERROR(g.Infer(Opcode::kAddDependency, {v, v}), "not a token");
  EXPECT_SHAPE(g.Infer(Opcode::kCopy, {v}), "f32[10]");
  EXPECT_SHAPE(g.Infer(Opcode::kOptimizationBarrier, {v}), "f32[10]");
  EXPECT_SHAPE(g.Infer(Opcode::kReplicaId, {}), "u32[]");
  EXPECT_SHAPE(g.Infer(Opcode::kPartitionId, {}), "u32[]");
  EXPECT_SHAPE(g.Infer(Opcode::kBitcast, {v}, nullptr, {}, S32({2, 5})), "s32[2,5]");
  EXPECT_ERROR(g.Infer(Opcode::kBitcast, {v}, nullptr, {}, Arr(ElementType::kF16, {10})),
               "byte sizes differ");
  EXPECT_ERROR(g.Infer(Opcode::kBitcast, {v}, nullptr, {}, F32({11})), "element counts differ");
  EXPECT_SHAPE(g.Infer(Opcode::kCopyStart, {v}), "(f32[10], f32[10], u32[])");
}

// ---------------------------------------------------------------------------
// Dot and convolution.

DotDimensionNumbers Dnums(std::vector<int64_t> lb, std::vector<int64_t> rb,
                          std::vector<int64_t> lc, std::vector<int64_t> rc) {
  DotDimensionNumbers d;
  d.lhs_batch_dimensions = lb;
  d.rhs_batch_dimensions = rb;
  d.lhs_contracting_dimensions = lc;
  d.rhs_contracting_dimensions = rc;
  return d;
}

AttrSetter DotAttrs(DotDimensionNumbers d) {
  return [d](A* a) { a->dot_dimension_numbers = d; };
}

TEST(DotTest, SeedExamples) {
  Graph g;
  // DotGeneral with contracting dims {1}, {1}: f32[2,3] x f32[2,3] -> [2,2].
  auto* lhs = g.Param(0, F32({2, 3}));
  auto* rhs = g.Param(1, F32({2, 3}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({}, {}, {1}, {1}))), "f32[2,2]");
  // Batch example: batch size 2, 2x2 matrices.
  auto* bl = g.Param(2, F32({2, 2, 2}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {bl, bl}, DotAttrs(Dnums({0}, {0}, {2}, {1}))),
               "f32[2,2,2]");
  // [b0, m, k] dot [b0, k, n] -> [b0, m, n].
  auto* l3 = g.Param(3, F32({5, 3, 4}));
  auto* r3 = g.Param(4, F32({5, 4, 7}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {l3, r3}, DotAttrs(Dnums({0}, {0}, {2}, {1}))),
               "f32[5,3,7]");
  // [b0, b1, m, k] dot [b0, b1, k, n] -> [b0, b1, m, n].
  auto* l4 = g.Param(5, F32({6, 5, 3, 4}));
  auto* r4 = g.Param(6, F32({6, 5, 4, 7}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {l4, r4}, DotAttrs(Dnums({0, 1}, {0, 1}, {3}, {2}))),
               "f32[6,5,3,7]");
  // Dot: vector . vector -> scalar; [m x k] . [k] -> [m]; [m x k] . [k x n] -> [m x n].
  auto* v = g.Param(7, F32({4}));
  auto* m = g.Param(8, F32({3, 4}));
  auto* n = g.Param(9, F32({4, 7}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {v, v}, DotAttrs(Dnums({}, {}, {0}, {0}))), "f32[]");
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {m, v}, DotAttrs(Dnums({}, {}, {1}, {0}))), "f32[3]");
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {m, n}, DotAttrs(Dnums({}, {}, {1}, {0}))), "f32[3,7]");
  // No contraction: outer product.
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {v, m}, DotAttrs(Dnums({}, {}, {}, {}))), "f32[4,3,4]");
}

TEST(DotTest, Errors) {
  Graph g;
  auto* lhs = g.Param(0, F32({2, 3}));
  auto* rhs = g.Param(1, F32({4, 5}));
  auto* ints = g.Param(2, S32({3, 5}));
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({}, {}, {1}, {0}))),
               "dot: contracting dimension sizes differ: lhs dim 1 has 3, rhs dim 0 has 4");
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({}, {}, {2}, {0}))),
               "out of range");
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({}, {}, {1}, {}))),
               "contracting dimensions");
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({0}, {0}, {0}, {1}))),
               "repeated");
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({0}, {0}, {1}, {1}))),
               "batch dimension sizes differ");
  EXPECT_ERROR(g.Infer(Opcode::kDot, {lhs, ints}, DotAttrs(Dnums({}, {}, {1}, {0}))),
               "cannot be mixed");
}

TEST(DotTest, PreferredElementType) {
  Graph g;
  auto* lhs = g.Param(0, Arr(ElementType::kBF16, {2, 3}));
  auto* rhs = g.Param(1, Arr(ElementType::kBF16, {3, 4}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {lhs, rhs}, DotAttrs(Dnums({}, {}, {1}, {0})), {},
                       F32({2, 4})),
               "f32[2,4]");
  auto* s8 = g.Param(2, Arr(ElementType::kS8, {2, 3}));
  auto* s8r = g.Param(3, Arr(ElementType::kS8, {3, 4}));
  EXPECT_SHAPE(g.Infer(Opcode::kDot, {s8, s8r}, DotAttrs(Dnums({}, {}, {1}, {0})), {},
                       S32({2, 4})),
               "s32[2,4]");
}

ConvolutionDimensionNumbers NhwcHwio() {  // b01f_01io->b01f
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_feature_dimension = 3;
  d.input_spatial_dimensions = {1, 2};
  d.kernel_input_feature_dimension = 2;
  d.kernel_output_feature_dimension = 3;
  d.kernel_spatial_dimensions = {0, 1};
  d.output_batch_dimension = 0;
  d.output_feature_dimension = 3;
  d.output_spatial_dimensions = {1, 2};
  return d;
}

ConvolutionDimensionNumbers NchwOihw() {  // bf01_oi01->bf01
  ConvolutionDimensionNumbers d;
  d.input_batch_dimension = 0;
  d.input_feature_dimension = 1;
  d.input_spatial_dimensions = {2, 3};
  d.kernel_output_feature_dimension = 0;
  d.kernel_input_feature_dimension = 1;
  d.kernel_spatial_dimensions = {2, 3};
  d.output_batch_dimension = 0;
  d.output_feature_dimension = 1;
  d.output_spatial_dimensions = {2, 3};
  return d;
}

WindowDimension Win(int64_t size, int64_t stride = 1, int64_t lo = 0, int64_t hi = 0,
                    int64_t lhs_dilate = 1, int64_t rhs_dilate = 1) {
  WindowDimension w;
  w.size = size;
  w.stride = stride;
  w.padding_low = lo;
  w.padding_high = hi;
  w.base_dilation = lhs_dilate;
  w.window_dilation = rhs_dilate;
  return w;
}

AttrSetter ConvAttrs(ConvolutionDimensionNumbers d, Window w, int64_t fgc = 1, int64_t bgc = 1) {
  return [=](A* a) {
    a->convolution_dimension_numbers = d;
    a->window = w;
    a->has_window = true;
    a->feature_group_count = fgc;
    a->batch_group_count = bgc;
  };
}

TEST(ConvolutionTest, OutputSizes) {
  Graph g;
  auto* input = g.Param(0, F32({2, 7, 7, 3}));
  auto* kernel = g.Param(1, F32({3, 3, 3, 8}));
  // VALID, stride 1: 7 - 3 + 1 = 5.
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)})),
               "f32[2,5,5,8]");
  // Pad 1 each side, stride 2: (7 + 2 - 3) / 2 + 1 = 4.
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3, 2, 1, 1), Win(3, 2, 1, 1)})),
               "f32[2,4,4,8]");
  // lhs_dilate 2: base (7-1)*2+1 = 13, 13 - 3 + 1 = 11. rhs_dilate 2: window
  // (3-1)*2+1 = 5, 7 - 5 + 1 = 3.
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3, 1, 0, 0, 2), Win(3, 1, 0, 0, 1, 2)})),
               "f32[2,11,3,8]");
  // Negative padding removes elements: 7 - 2 - 3 + 1 = 3.
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3, 1, -1, -1), Win(3)})),
               "f32[2,3,5,8]");
  // A window larger than the padded base has no valid placement.
  auto* big = g.Param(2, F32({9, 9, 3, 8}));
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, big},
                       ConvAttrs(NhwcHwio(), {Win(9), Win(9)})),
               "f32[2,0,0,8]");
  // NCHW / OIHW: input [1,3,10,10], kernel [16,3,5,5], stride 1 pad 2 -> 10.
  auto* nchw = g.Param(3, F32({1, 3, 10, 10}));
  auto* oihw = g.Param(4, F32({16, 3, 5, 5}));
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {nchw, oihw},
                       ConvAttrs(NchwOihw(), {Win(5, 1, 2, 2), Win(5, 1, 2, 2)})),
               "f32[1,16,10,10]");
}

TEST(ConvolutionTest, Groups) {
  Graph g;
  // feature_group_count 2: input features 6 = 2 * kernel input features 3;
  // output features 8 divisible by 2.
  auto* input = g.Param(0, F32({2, 7, 7, 6}));
  auto* kernel = g.Param(1, F32({3, 3, 3, 8}));
  auto* bad_kernel = g.Param(2, F32({3, 3, 4, 8}));
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)}, /*fgc=*/2)),
               "f32[2,5,5,8]");
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, bad_kernel},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)}, /*fgc=*/2)),
               "feature_group_count");
  // batch_group_count 2: output batch = 4 / 2 = 2.
  auto* batched = g.Param(3, F32({4, 7, 7, 3}));
  EXPECT_SHAPE(g.Infer(Opcode::kConvolution, {batched, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)}, 1, /*bgc=*/2)),
               "f32[2,5,5,8]");
  auto* odd_batch = g.Param(4, F32({3, 7, 7, 3}));
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {odd_batch, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)}, 1, /*bgc=*/2)),
               "batch_group_count");
}

TEST(ConvolutionTest, Errors) {
  Graph g;
  auto* input = g.Param(0, F32({2, 7, 7, 3}));
  auto* kernel = g.Param(1, F32({3, 3, 3, 8}));
  auto* wrong_features = g.Param(2, F32({3, 3, 4, 8}));
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(2), Win(3)})),
               "window size 2 of spatial dimension 0 differs from the kernel's 3");
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, wrong_features},
                       ConvAttrs(NhwcHwio(), {Win(3), Win(3)})),
               "kernel input feature size 4");
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, kernel}, ConvAttrs(NhwcHwio(), {Win(3)})),
               "window has 1 dimensions");
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(NhwcHwio(), {Win(3, 0), Win(3)})),
               "positive");
  ConvolutionDimensionNumbers bad = NhwcHwio();
  bad.input_feature_dimension = 7;
  EXPECT_ERROR(g.Infer(Opcode::kConvolution, {input, kernel},
                       ConvAttrs(bad, {Win(3), Win(3)})),
               "input dimension 7 is out of range");
}

// ---------------------------------------------------------------------------
// Reductions.

TEST(ReduceTest, SingleAndVariadic) {
  Graph g;
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  // Variadic reducer: (f32 acc, s32 acc, f32 x, s32 y) -> (f32, s32).
  Computation* argmax = g.Signature("argmax", {F32({}), S32({}), F32({}), S32({})},
                                    Shape::Tuple({F32({}), S32({})}));
  auto* x = g.Param(0, F32({2, 3}));
  auto* zero = g.Param(1, F32({}));
  auto* idx = g.Param(2, S32({2, 3}));
  auto* izero = g.Param(3, S32({}));
  auto dims = [](std::vector<int64_t> d) { return [d](A* a) { a->dimensions = d; }; };
  // HLO_TEXT.md's example: reduce f32[2,3] over {0} -> f32[3].
  EXPECT_SHAPE(g.Infer(Opcode::kReduce, {x, zero}, dims({0}), {add}), "f32[3]");
  EXPECT_SHAPE(g.Infer(Opcode::kReduce, {x, zero}, dims({0, 1}), {add}), "f32[]");
  EXPECT_SHAPE(g.Infer(Opcode::kReduce, {x, zero}, dims({}), {add}), "f32[2,3]");
  EXPECT_SHAPE(g.Infer(Opcode::kReduce, {x, idx, zero, izero}, dims({1}), {argmax}),
               "(f32[2], s32[2])");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, zero}, dims({2}), {add}), "out of range");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, zero}, dims({0, 0}), {add}), "repeated");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, zero}, dims({0}), {argmax}),
               "takes 4 parameters, expected 2");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, idx, zero, izero}, dims({1}), {add}),
               "takes 2 parameters, expected 4");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, x}, dims({0}), {add}), "init value 0 must be a scalar");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, izero}, dims({0}), {add}), "parameter 0");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, zero, x}, dims({0}), {add}), "N init values");
  EXPECT_ERROR(g.Infer(Opcode::kReduce, {x, zero}, dims({0})), "missing to_apply");
}

// seeds/003 ReduceWindow: [4x6] with window and stride [2x3], VALID -> [2x2];
// the 1-D example [5] with window 3 stride 2: VALID -> [2], SAME (pad 1,1) -> [3].
TEST(ReduceTest, ReduceWindow) {
  Graph g;
  Computation* max = g.ScalarBinary("max", ElementType::kF32, Opcode::kMaximum);
  auto* x = g.Param(0, F32({4, 6}));
  auto* v = g.Param(1, F32({5}));
  auto* init = g.Param(2, F32({}));
  auto window = [](Window w) { return [w](A* a) { a->window = w; a->has_window = true; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kReduceWindow, {x, init}, window({Win(2, 2), Win(3, 3)}), {max}),
               "f32[2,2]");
  EXPECT_SHAPE(g.Infer(Opcode::kReduceWindow, {v, init}, window({Win(3, 2)}), {max}), "f32[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kReduceWindow, {v, init}, window({Win(3, 2, 1, 1)}), {max}),
               "f32[3]");
  // Base dilation 2: (5-1)*2+1 = 9; window 3 stride 1 -> 7.
  EXPECT_SHAPE(g.Infer(Opcode::kReduceWindow, {v, init}, window({Win(3, 1, 0, 0, 2)}), {max}),
               "f32[7]");
  EXPECT_ERROR(g.Infer(Opcode::kReduceWindow, {x, init}, window({Win(2)}), {max}),
               "window has 1 dimensions");
  EXPECT_ERROR(g.Infer(Opcode::kReduceWindow, {v, init}, window({Win(0)}), {max}), "positive");
}

TEST(ReduceTest, SelectAndScatter) {
  Graph g;
  Computation* ge = g.ScalarBinary("ge", ElementType::kF32, Opcode::kCompare);
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  auto* operand = g.Param(0, F32({4, 6}));
  auto* source = g.Param(1, F32({2, 2}));
  auto* wrong_source = g.Param(2, F32({2, 3}));
  auto* init = g.Param(3, F32({}));
  auto window = [](A* a) { a->window = {Win(2, 2), Win(3, 3)}; a->has_window = true; };
  EXPECT_SHAPE(g.Infer(Opcode::kSelectAndScatter, {operand, source, init}, window, {ge, add}),
               "f32[4,6]");
  EXPECT_ERROR(
      g.Infer(Opcode::kSelectAndScatter, {operand, wrong_source, init}, window, {ge, add}),
      "source shape f32[2,3] differs from the windowed operand shape f32[2,2]");
  EXPECT_ERROR(g.Infer(Opcode::kSelectAndScatter, {operand, source, init}, window, {add, add}),
               "select computation must return pred[]");
}

// ---------------------------------------------------------------------------
// Gather and scatter.

AttrSetter GatherAttrs(std::vector<int64_t> offset, std::vector<int64_t> collapsed,
                       std::vector<int64_t> start_index_map, int64_t index_vector_dim,
                       std::vector<int64_t> slice_sizes) {
  return [=](A* a) {
    a->gather_dimension_numbers.offset_dims = offset;
    a->gather_dimension_numbers.collapsed_slice_dims = collapsed;
    a->gather_dimension_numbers.start_index_map = start_index_map;
    a->gather_dimension_numbers.index_vector_dim = index_vector_dim;
    a->slice_sizes = slice_sizes;
  };
}

// seeds/003 Gather: 5 slices of [8,6] from [16,11] with s64[5,2] indices give
// [5,8,6]; with [4,5,2] indices, [4,5,8,6]; the gather_nd form with
// slice_sizes [1,11] and one index per position gives rows of 11.
TEST(GatherTest, SeedExamples) {
  Graph g;
  auto* operand = g.Param(0, F32({16, 11}));
  auto* idx52 = g.Param(1, Arr(ElementType::kS64, {5, 2}));
  auto* idx452 = g.Param(2, Arr(ElementType::kS64, {4, 5, 2}));
  auto* idx451 = g.Param(3, Arr(ElementType::kS64, {4, 5, 1}));
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx52},
                       GatherAttrs({1, 2}, {}, {0, 1}, 1, {8, 6})),
               "f32[5,8,6]");
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx452},
                       GatherAttrs({2, 3}, {}, {0, 1}, 2, {8, 6})),
               "f32[4,5,8,6]");
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx451},
                       GatherAttrs({2}, {0}, {0}, 2, {1, 11})),
               "f32[4,5,11]");
  // Offset dims first: output [8,6,5].
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx52},
                       GatherAttrs({0, 1}, {}, {0, 1}, 1, {8, 6})),
               "f32[8,6,5]");
  // index_vector_dim == rank: an implicit trailing 1 (one index per position).
  auto* idx5 = g.Param(4, S32({5}));
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx5}, GatherAttrs({1}, {0}, {0}, 1, {1, 11})),
               "f32[5,11]");
}

TEST(GatherTest, Errors) {
  Graph g;
  auto* operand = g.Param(0, F32({16, 11}));
  auto* idx = g.Param(1, S32({5, 2}));
  auto* fidx = g.Param(2, F32({5, 2}));
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({1, 2}, {}, {0, 1}, 1, {17, 6})),
               "slice size 17");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({1}, {0}, {0, 1}, 1, {2, 6})),
               "slice size <= 1");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({1, 2}, {}, {0}, 1, {8, 6})),
               "start_index_map size 1");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({1, 2}, {}, {0, 1}, 3, {8, 6})),
               "index_vector_dim 3");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({2, 1}, {}, {0, 1}, 1, {8, 6})),
               "sorted");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, idx}, GatherAttrs({1}, {}, {0, 1}, 1, {8, 6})),
               "must equal the operand rank");
  EXPECT_ERROR(g.Infer(Opcode::kGather, {operand, fidx}, GatherAttrs({1, 2}, {}, {0, 1}, 1, {8, 6})),
               "not an integer type");
}

TEST(GatherTest, BatchingDims) {
  Graph g;
  // operand [3(batch),16,11], indices [3,5,1] with batching dims 0/0:
  // output = batch dims of indices (3,5) then the offset 11.
  auto* operand = g.Param(0, F32({3, 16, 11}));
  auto* idx = g.Param(1, S32({3, 5, 1}));
  auto attrs = [](A* a) {
    a->gather_dimension_numbers.offset_dims = {2};
    a->gather_dimension_numbers.collapsed_slice_dims = {1};
    a->gather_dimension_numbers.start_index_map = {1};
    a->gather_dimension_numbers.index_vector_dim = 2;
    a->gather_dimension_numbers.operand_batching_dims = {0};
    a->gather_dimension_numbers.start_indices_batching_dims = {0};
    a->slice_sizes = {1, 1, 11};
  };
  EXPECT_SHAPE(g.Infer(Opcode::kGather, {operand, idx}, attrs), "f32[3,5,11]");
}

AttrSetter ScatterAttrs(std::vector<int64_t> update_window, std::vector<int64_t> inserted,
                        std::vector<int64_t> to_operand, int64_t index_vector_dim) {
  return [=](A* a) {
    a->scatter_dimension_numbers.update_window_dims = update_window;
    a->scatter_dimension_numbers.inserted_window_dims = inserted;
    a->scatter_dimension_numbers.scatter_dims_to_operand_dims = to_operand;
    a->scatter_dimension_numbers.index_vector_dim = index_vector_dim;
  };
}

TEST(ScatterTest, RowsAndVariadic) {
  Graph g;
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  Computation* pair = g.Signature("pair", {F32({}), S32({}), F32({}), S32({})},
                                  Shape::Tuple({F32({}), S32({})}));
  // Scatter two rows of 3 into f32[3,3]: indices s32[2], updates f32[2,3].
  auto* operand = g.Param(0, F32({3, 3}));
  auto* indices = g.Param(1, S32({2}));
  auto* updates = g.Param(2, F32({2, 3}));
  auto* ioperand = g.Param(3, S32({3, 3}));
  auto* iupdates = g.Param(4, S32({2, 3}));
  auto* bad_updates = g.Param(5, F32({2, 4}));
  auto* wrong_rank = g.Param(6, F32({3}));
  auto attrs = ScatterAttrs({1}, {0}, {0}, 1);
  EXPECT_SHAPE(g.Infer(Opcode::kScatter, {operand, indices, updates}, attrs, {add}), "f32[3,3]");
  EXPECT_SHAPE(
      g.Infer(Opcode::kScatter, {operand, ioperand, indices, updates, iupdates}, attrs, {pair}),
      "(f32[3,3], s32[3,3])");
  EXPECT_ERROR(g.Infer(Opcode::kScatter, {operand, indices, bad_updates}, attrs, {add}),
               "larger than operand dimension");
  EXPECT_ERROR(g.Infer(Opcode::kScatter, {operand, indices, wrong_rank}, attrs, {add}),
               "update rank 1");
  EXPECT_ERROR(g.Infer(Opcode::kScatter, {operand, indices, updates}, attrs, {pair}),
               "takes 4 parameters");
  EXPECT_ERROR(g.Infer(Opcode::kScatter, {operand, indices, updates}, ScatterAttrs({1}, {0}, {0, 1}, 1),
                       {add}),
               "index vector size 1 differs");
}

// ---------------------------------------------------------------------------
// Sorting, FFT and linear algebra.

TEST(SortTest, SortAndTopK) {
  Graph g;
  Computation* lt = g.ScalarBinary("lt", ElementType::kF32, Opcode::kCompare);
  Computation* lt2 = g.Signature("lt2", {F32({}), F32({}), S32({}), S32({})},
                                 Arr(ElementType::kPred, {}));
  auto* keys = g.Param(0, F32({5, 10}));
  auto* values = g.Param(1, S32({5, 10}));
  auto dim = [](int64_t d) { return [d](A* a) { a->dimensions = {d}; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kSort, {keys}, dim(1), {lt}), "f32[5,10]");
  EXPECT_SHAPE(g.Infer(Opcode::kSort, {keys, values}, dim(0), {lt2}), "(f32[5,10], s32[5,10])");
  EXPECT_ERROR(g.Infer(Opcode::kSort, {keys, values}, dim(0), {lt}), "takes 2 parameters");
  EXPECT_ERROR(g.Infer(Opcode::kSort, {keys}, dim(2), {lt}), "out of range");
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  EXPECT_ERROR(g.Infer(Opcode::kSort, {keys}, dim(0), {add}), "must return pred[]");
  // seeds/003 TopK: [A, ..., Q] with k <= Q gives ([A, ..., k], s32[A, ..., k]).
  EXPECT_SHAPE(g.Infer(Opcode::kTopK, {keys}, [](A* a) { a->k = 3; }), "(f32[5,3], s32[5,3])");
  EXPECT_ERROR(g.Infer(Opcode::kTopK, {keys}, [](A* a) { a->k = 11; }), "k = 11");
}

TEST(FftTest, AllFourTypes) {
  Graph g;
  auto* c = g.Param(0, Arr(ElementType::kC64, {4, 8}));
  auto* r = g.Param(1, F32({4, 16}));
  auto* half = g.Param(2, Arr(ElementType::kC64, {4, 9}));
  auto* r3 = g.Param(3, Arr(ElementType::kF64, {3, 8, 16}));
  auto fft = [](FftType t, std::vector<int64_t> l) {
    return [=](A* a) { a->fft_type = t; a->fft_length = l; };
  };
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {c}, fft(FftType::kFft, {8})), "c64[4,8]");
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {c}, fft(FftType::kIfft, {4, 8})), "c64[4,8]");
  // RFFT: the last axis becomes fft_length/2 + 1 = 9.
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {r}, fft(FftType::kRfft, {16})), "c64[4,9]");
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {r3}, fft(FftType::kRfft, {8, 16})), "c128[3,8,9]");
  // IRFFT: 9 complex values expand to fft_length 16 (or 17) real ones.
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {half}, fft(FftType::kIrfft, {16})), "f32[4,16]");
  EXPECT_SHAPE(g.Infer(Opcode::kFft, {half}, fft(FftType::kIrfft, {17})), "f32[4,17]");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {c}, fft(FftType::kIrfft, {8})), "IRFFT last dimension");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {c}, fft(FftType::kRfft, {8})), "RFFT operand element type");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {r}, fft(FftType::kFft, {16})), "not complex");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {c}, fft(FftType::kFft, {})), "1 to 3 entries");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {c}, fft(FftType::kFft, {1, 2, 4, 8})), "1 to 3 entries");
  EXPECT_ERROR(g.Infer(Opcode::kFft, {c}, fft(FftType::kFft, {5})), "fft_length ends with 5");
}

TEST(LinalgTest, CholeskyAndTriangularSolve) {
  Graph g;
  auto* a = g.Param(0, F32({3, 4, 4}));
  auto* rect = g.Param(1, F32({3, 4, 5}));
  auto* b_left = g.Param(2, F32({3, 4, 2}));
  auto* b_right = g.Param(3, F32({3, 2, 4}));
  EXPECT_SHAPE(g.Infer(Opcode::kCholesky, {a}), "f32[3,4,4]");
  EXPECT_ERROR(g.Infer(Opcode::kCholesky, {rect}), "not square");
  EXPECT_SHAPE(g.Infer(Opcode::kTriangularSolve, {a, b_left}, [](A* x) { x->left_side = true; }),
               "f32[3,4,2]");
  EXPECT_SHAPE(g.Infer(Opcode::kTriangularSolve, {a, b_right}), "f32[3,2,4]");
  EXPECT_ERROR(g.Infer(Opcode::kTriangularSolve, {a, b_right}, [](A* x) { x->left_side = true; }),
               "left side");
  EXPECT_ERROR(g.Infer(Opcode::kTriangularSolve, {rect, b_left}), "not square");
}

TEST(LinalgTest, BatchNorm) {
  Graph g;
  auto* x = g.Param(0, F32({2, 3, 4, 5}));
  auto* f = g.Param(1, F32({5}));
  auto* wrong = g.Param(2, F32({4}));
  auto feature = [](int64_t i) { return [i](A* a) { a->feature_index = i; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kBatchNormTraining, {x, f, f}, feature(3)),
               "(f32[2,3,4,5], f32[5], f32[5])");
  EXPECT_SHAPE(g.Infer(Opcode::kBatchNormInference, {x, f, f, f, f}, feature(3)),
               "f32[2,3,4,5]");
  EXPECT_SHAPE(g.Infer(Opcode::kBatchNormGrad, {x, f, f, f, x}, feature(3)),
               "(f32[2,3,4,5], f32[5], f32[5])");
  EXPECT_ERROR(g.Infer(Opcode::kBatchNormTraining, {x, wrong, f}, feature(3)), "operand 1");
  EXPECT_ERROR(g.Infer(Opcode::kBatchNormTraining, {x, f, f}, feature(4)), "feature_index");
  EXPECT_ERROR(g.Infer(Opcode::kBatchNormGrad, {x, f, f, f, f}, feature(3)), "grad_output");
}

// ---------------------------------------------------------------------------
// Random numbers.

TEST(RngTest, RngAndBitGenerator) {
  Graph g;
  auto* lo = g.Param(0, F32({}));
  auto* ilo = g.Param(1, S32({}));
  auto* state2 = g.Param(2, Arr(ElementType::kU64, {2}));
  auto* state3 = g.Param(3, Arr(ElementType::kU64, {3}));
  EXPECT_SHAPE(g.Infer(Opcode::kRng, {lo, lo}, nullptr, {}, F32({3, 4})), "f32[3,4]");
  EXPECT_ERROR(g.Infer(Opcode::kRng, {ilo, ilo}, nullptr, {}, F32({3, 4})),
               "result element type f32");
  EXPECT_ERROR(g.Infer(Opcode::kRng, {ilo, ilo},
                       [](A* a) { a->distribution = RandomDistribution::kNormal; }, {},
                       S32({3})),
               "rng_normal");
  const Shape out2 = Shape::Tuple({Arr(ElementType::kU64, {2}), Arr(ElementType::kU32, {11, 17})});
  const Shape out3 = Shape::Tuple({Arr(ElementType::kU64, {3}), Arr(ElementType::kU32, {11, 17})});
  auto algorithm = [](RandomAlgorithm r) { return [r](A* a) { a->rng_algorithm = r; }; };
  EXPECT_SHAPE(g.Infer(Opcode::kRngBitGenerator, {state2}, algorithm(RandomAlgorithm::kThreeFry),
                       {}, out2),
               "(u64[2], u32[11,17])");
  EXPECT_SHAPE(g.Infer(Opcode::kRngBitGenerator, {state3}, algorithm(RandomAlgorithm::kPhilox),
                       {}, out3),
               "(u64[3], u32[11,17])");
  EXPECT_ERROR(g.Infer(Opcode::kRngBitGenerator, {state2}, algorithm(RandomAlgorithm::kPhilox),
                       {}, out2),
               "needs state u64[3]");
  EXPECT_ERROR(g.Infer(Opcode::kRngBitGenerator, {state2}, nullptr, {}, F32({2})),
               "(state, output array) tuple");
  EXPECT_SHAPE(g.Infer(Opcode::kRngGetAndUpdateState, {}, [](A* a) { a->delta = 4; }, {},
                       Arr(ElementType::kU64, {2})),
               "u64[2]");
}

// ---------------------------------------------------------------------------
// Control flow and calls.

TEST(ControlFlowTest, While) {
  Graph g;
  const Shape state = Shape::Tuple({S32({}), F32({4})});
  Computation* cond = g.Signature("cond", {state}, Arr(ElementType::kPred, {}));
  Computation* body = g.Signature("body", {state}, state, /*root_param=*/0);
  Computation* bad_cond = g.Signature("bad_cond", {state}, S32({}));
  Computation* bad_body = g.Signature("bad_body", {state}, F32({4}));
  Computation* two_params = g.Signature("two", {state, state}, state, 0);
  auto* i = g.Param(0, S32({}));
  auto* v = g.Param(1, F32({4}));
  auto* init = g.Add(Opcode::kTuple, state, {i, v});
  EXPECT_SHAPE(g.Infer(Opcode::kWhile, {init}, nullptr, {cond, body}), "(s32[], f32[4])");
  EXPECT_ERROR(g.Infer(Opcode::kWhile, {init}, nullptr, {bad_cond, body}),
               "condition computation bad_cond must return pred[]");
  EXPECT_ERROR(g.Infer(Opcode::kWhile, {init}, nullptr, {cond, bad_body}),
               "body computation bad_body returns f32[4]");
  EXPECT_ERROR(g.Infer(Opcode::kWhile, {init}, nullptr, {cond, two_params}),
               "takes 2 parameters, expected 1");
  EXPECT_ERROR(g.Infer(Opcode::kWhile, {init}, nullptr, {cond}), "expects 2 called computations");
  EXPECT_ERROR(g.Infer(Opcode::kWhile, {v}, nullptr, {cond, body}), "parameter 0 has shape");
}

TEST(ControlFlowTest, Conditional) {
  Graph g;
  Computation* b0 = g.Signature("b0", {F32({2})}, S32({3}));
  Computation* b1 = g.Signature("b1", {S32({})}, S32({3}));
  Computation* b2 = g.Signature("b2", {Shape::Tuple({})}, S32({3}));
  Computation* other = g.Signature("other", {S32({})}, F32({3}));
  auto* pred = g.Param(0, Arr(ElementType::kPred, {}));
  auto* index = g.Param(1, S32({}));
  auto* x = g.Param(2, F32({2}));
  auto* y = g.Param(3, S32({}));
  auto* empty = g.Add(Opcode::kTuple, Shape::Tuple({}), {});
  EXPECT_SHAPE(g.Infer(Opcode::kConditional, {pred, x, y}, nullptr, {b0, b1}), "s32[3]");
  EXPECT_SHAPE(g.Infer(Opcode::kConditional, {index, x, y, empty}, nullptr, {b0, b1, b2}),
               "s32[3]");
  EXPECT_ERROR(g.Infer(Opcode::kConditional, {pred, x, y, empty}, nullptr, {b0, b1, b2}),
               "a pred index needs 2 branches");
  EXPECT_ERROR(g.Infer(Opcode::kConditional, {pred, x, y}, nullptr, {b0, other}),
               "branch 1 computation other returns f32[3]");
  EXPECT_ERROR(g.Infer(Opcode::kConditional, {x, x, y}, nullptr, {b0, b1}), "scalar");
  EXPECT_ERROR(g.Infer(Opcode::kConditional, {pred, y, y}, nullptr, {b0, b1}),
               "branch 0 computation b0 parameter 0");
}

TEST(ControlFlowTest, CallMapFusionCustomCall) {
  Graph g;
  Computation* callee = g.Signature("callee", {F32({2}), S32({})}, Shape::Tuple({F32({2})}));
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  Computation* lt = g.ScalarBinary("lt", ElementType::kF32, Opcode::kCompare);
  auto* x = g.Param(0, F32({2}));
  auto* i = g.Param(1, S32({}));
  EXPECT_SHAPE(g.Infer(Opcode::kCall, {x, i}, nullptr, {callee}), "(f32[2])");
  EXPECT_ERROR(g.Infer(Opcode::kCall, {x}, nullptr, {callee}), "takes 2 parameters, expected 1");
  EXPECT_SHAPE(g.Infer(Opcode::kFusion, {x, i}, nullptr, {callee}), "(f32[2])");
  EXPECT_ERROR(g.Infer(Opcode::kFusion, {x, i}), "expects 1 called computations");
  EXPECT_SHAPE(g.Infer(Opcode::kMap, {x, x}, nullptr, {add}), "f32[2]");
  EXPECT_SHAPE(g.Infer(Opcode::kMap, {x, x}, nullptr, {lt}), "pred[2]");
  EXPECT_ERROR(g.Infer(Opcode::kMap, {x}, nullptr, {add}), "takes 2 parameters, expected 1");
  EXPECT_SHAPE(g.Infer(Opcode::kCustomCall, {x, i},
                       [](A* a) { a->custom_call_target = "foo"; }, {}, F32({7})),
               "f32[7]");
  EXPECT_ERROR(g.Infer(Opcode::kCustomCall, {x}, nullptr, {}, F32({7})), "custom_call_target");
}

TEST(ControlFlowTest, AsyncWrappers) {
  Graph g;
  Computation* wrapped = g.Signature("wrapped", {F32({2})}, S32({3}));
  auto* x = g.Param(0, F32({2}));
  const Shape start_shape = Shape::Tuple({Shape::Tuple({F32({2})}), S32({3}), S32({})});
  auto* start = g.Add(Opcode::kAsyncStart, start_shape, {x}, nullptr, {wrapped});
  EXPECT_SHAPE(InferShape(*start), "((f32[2]), s32[3], s32[])");
  EXPECT_SHAPE(g.Infer(Opcode::kAsyncUpdate, {start}), "((f32[2]), s32[3], s32[])");
  EXPECT_SHAPE(g.Infer(Opcode::kAsyncDone, {start}), "s32[3]");
  const Shape wrong = Shape::Tuple({Shape::Tuple({F32({2})}), F32({3}), S32({})});
  EXPECT_ERROR(g.Infer(Opcode::kAsyncStart, {x}, nullptr, {wrapped}, wrong),
               "differs from the async computation's result");
}

// ---------------------------------------------------------------------------
// Host transfer, channels and collectives.

TEST(ChannelTest, InfeedOutfeedSendRecv) {
  Graph g;
  auto* token = g.Add(Opcode::kAfterAll, Shape::Token(), {});
  auto* x = g.Param(0, F32({2}));
  const Shape infeed = Shape::Tuple({F32({3}), Shape::Token()});
  EXPECT_SHAPE(g.Infer(Opcode::kInfeed, {token}, nullptr, {}, infeed), "(f32[3], token[])");
  EXPECT_ERROR(g.Infer(Opcode::kInfeed, {token}, nullptr, {}, F32({3})), "(data, token)");
  EXPECT_SHAPE(g.Infer(Opcode::kOutfeed, {x, token}), "token[]");
  EXPECT_ERROR(g.Infer(Opcode::kOutfeed, {x, x}), "not a token");
  auto* send = g.Add(Opcode::kSend, Shape(), {x, token});
  EXPECT_SHAPE(InferShape(*send), "(f32[2], u32[], token[])");
  *send->mutable_shape() = *InferShape(*send);
  EXPECT_SHAPE(g.Infer(Opcode::kSendDone, {send}), "token[]");
  const Shape recv_shape = Shape::Tuple({F32({5}), Arr(ElementType::kU32, {}), Shape::Token()});
  auto* recv = g.Add(Opcode::kRecv, recv_shape, {token});
  EXPECT_SHAPE(InferShape(*recv), "(f32[5], u32[], token[])");
  EXPECT_SHAPE(g.Infer(Opcode::kRecvDone, {recv}), "(f32[5], token[])");
}

TEST(CollectiveTest, ShapesFollowGroups) {
  Graph g;
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  auto* x = g.Param(0, F32({4, 6}));
  auto* y = g.Param(1, F32({3}));
  auto groups = [](std::vector<std::vector<int64_t>> r, std::vector<int64_t> dims) {
    return [=](A* a) {
      a->replica_groups = r;
      a->has_replica_groups = true;
      a->dimensions = dims;
    };
  };
  EXPECT_SHAPE(g.Infer(Opcode::kAllReduce, {x}, groups({{0, 1}}, {}), {add}), "f32[4,6]");
  EXPECT_SHAPE(g.Infer(Opcode::kAllReduce, {x, y}, groups({}, {}), {add}), "(f32[4,6], f32[3])");
  EXPECT_ERROR(g.Infer(Opcode::kAllReduce, {x}, groups({}, {})), "missing to_apply");
  // all-gather: dimension 1 grows by the group size 2 -> 12.
  EXPECT_SHAPE(g.Infer(Opcode::kAllGather, {x}, groups({{0, 1}, {2, 3}}, {1})), "f32[4,12]");
  // Without groups the factor is read off the given result.
  EXPECT_SHAPE(g.Infer(Opcode::kAllGather, {x}, groups({}, {0}), {}, F32({16, 6})), "f32[16,6]");
  // reduce-scatter: dimension 1 shrinks by the group size 3 -> 2.
  EXPECT_SHAPE(g.Infer(Opcode::kReduceScatter, {x}, groups({{0, 1, 2}}, {1}), {add}), "f32[4,2]");
  EXPECT_ERROR(g.Infer(Opcode::kReduceScatter, {x}, groups({{0, 1, 2, 3, 4}}, {1}), {add}),
               "not divisible by the group size 5");
  EXPECT_SHAPE(g.Infer(Opcode::kAllToAll, {x}, groups({{0, 1}}, {0})), "f32[4,6]");
  EXPECT_ERROR(g.Infer(Opcode::kAllToAll, {x}, groups({{0, 1, 2, 3, 4}}, {0})), "not divisible");
  EXPECT_SHAPE(g.Infer(Opcode::kAllToAll, {x, y}, groups({{0, 1}}, {})), "(f32[4,6], f32[3])");
  EXPECT_SHAPE(g.Infer(Opcode::kCollectivePermute, {x}), "f32[4,6]");
  EXPECT_SHAPE(g.Infer(Opcode::kCollectiveBroadcast, {x}), "f32[4,6]");
  EXPECT_ERROR(g.Infer(Opcode::kAllGather, {x}, groups({{0, 1}, {2}}, {1})),
               "different sizes");
}

// ---------------------------------------------------------------------------
// Robustness: no input may crash shape inference.

TEST(RobustnessTest, GarbageAttributesNeverCrash) {
  Graph g;
  Computation* add = g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  Computation* empty = g.NewComputation("empty");  // no root, no parameters
  std::vector<Instruction*> pool = {
      g.Param(0, F32({})),
      g.Param(1, F32({2, 3})),
      g.Param(2, S32({})),
      g.Param(3, Arr(ElementType::kPred, {2, 3})),
      g.Param(4, Shape::Tuple({F32({2}), Shape::Token()})),
      g.Param(5, Shape::Token()),
      g.Param(6, Arr(ElementType::kC64, {4, 4})),
      g.Param(7, Arr(ElementType::kU64, {2})),
  };
  const std::vector<AttrSetter> garbage = {
      nullptr,
      [](A* a) {
        a->dimensions = {-1, 7, INT64_MAX};
        a->slice = {{-5, 3, 0}};
        a->slice_sizes = {-1, INT64_MAX};
        a->padding = {{INT64_MIN, INT64_MAX, -1}};
        a->tuple_index = INT64_MAX;
        a->iota_dimension = -3;
        a->feature_index = 99;
        a->k = -1;
        a->fft_length = {INT64_MAX, -2};
        a->window = {Win(INT64_MAX, 0, INT64_MIN, INT64_MAX, -1, 0)};
        a->feature_group_count = 0;
        a->batch_group_count = -4;
        a->dot_dimension_numbers = Dnums({9}, {-1}, {100}, {INT64_MIN});
        a->gather_dimension_numbers.offset_dims = {5, 100};
        a->gather_dimension_numbers.index_vector_dim = -7;
        a->gather_dimension_numbers.start_index_map = {INT64_MAX};
        a->scatter_dimension_numbers.update_window_dims = {-9};
        a->scatter_dimension_numbers.index_vector_dim = 1000;
        a->convolution_dimension_numbers.input_spatial_dimensions = {42};
        a->replica_groups = {{}, {1, 2, 3}};
        a->inferred_dimension = -5;
        a->exponent_bits = -1;
      },
      [](A* a) {
        a->dimensions = {0};
        a->slice = {{0, 2, INT64_MAX}, {1, 3, 1}};
        a->slice_sizes = {0, 0};
        a->padding = {{INT64_MAX, INT64_MAX, INT64_MAX}, {0, 0, INT64_MAX}};
        a->window = {Win(2, INT64_MAX, 0, 0, INT64_MAX, INT64_MAX), Win(1)};
        a->fft_type = FftType::kIrfft;
        a->fft_length = {0};
        a->convolution_dimension_numbers = NhwcHwio();
        a->gather_dimension_numbers.index_vector_dim = 1;
        a->gather_dimension_numbers.start_index_map = {0, 0};
        a->scatter_dimension_numbers.index_vector_dim = 0;
      },
  };
  const std::vector<std::vector<Computation*>> calls = {{}, {add}, {empty}, {add, empty, add}};
  const std::vector<Shape> givens = {Shape(), F32({2, 3}), Shape::Token(),
                                     Shape::Tuple({F32({1}), S32({})}), F32({-4})};
  int evaluated = 0;
  for (int op = 0; op < kNumOpcodes; ++op) {
    const Opcode opcode = static_cast<Opcode>(op);
    // Operand lists: none, one, two, three and five operands drawn from the pool.
    for (size_t start = 0; start < pool.size(); start += 3) {
      for (int count : {0, 1, 2, 3, 5}) {
        std::vector<Instruction*> operands;
        for (int k = 0; k < count; ++k) operands.push_back(pool[(start + k) % pool.size()]);
        for (const AttrSetter& set : garbage) {
          for (const auto& called : calls) {
            for (const Shape& given : givens) {
              absl::StatusOr<Shape> result = g.InferThenRemove(opcode, operands, set, called, given);
              ++evaluated;
              (void)result;
            }
          }
        }
      }
    }
  }
  EXPECT_GT(evaluated, 10000);
}

}  // namespace
}  // namespace xjit::testing
