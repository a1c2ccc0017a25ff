// Tests of the C++ builder (ir/builder.h): the examples of the seed
// "Operation semantics" (003) written with the builder line by line, checked
// structurally (opcodes, shapes, attributes, that the module verifies and
// prints) and evaluated with the reference evaluator against the values the
// seed states. Also: errors are recorded, reported by Build() naming the op,
// and never crash.
#include "ir/builder.h"

#include <complex>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/verifier.h"

namespace xjit {
namespace {

constexpr ElementType F32 = ElementType::kF32;
constexpr ElementType S32 = ElementType::kS32;

Shape MakeShape(ElementType type, std::initializer_list<int64_t> dims) {
  return Shape::Array(type, dims);
}

// Builds, verifies, checks the printed text parses back to the same text, and
// returns the module.
std::unique_ptr<Module> BuildChecked(Builder& b, Op root) {
  absl::StatusOr<std::unique_ptr<Module>> module = b.Build(root);
  EXPECT_TRUE(module.ok()) << module.status();
  if (!module.ok()) return nullptr;
  absl::Status verified = VerifyModule(**module);
  EXPECT_TRUE(verified.ok()) << verified << "\n" << PrintModule(**module);
  const std::string printed = PrintModule(**module);
  absl::StatusOr<std::unique_ptr<Module>> reparsed = ParseHloModule(printed, "builder");
  EXPECT_TRUE(reparsed.ok()) << reparsed.status() << "\n" << printed;
  if (reparsed.ok()) {
    EXPECT_EQ(PrintModule(**reparsed), printed);
  }
  return std::move(*module);
}

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> values;
  const Shape& shape = literal.shape();
  std::vector<int64_t> index(shape.rank(), 0);
  if (shape.element_count() == 0) return values;
  do {
    values.push_back(literal.GetDouble(index));
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return values;
}

std::vector<int64_t> Ints(const Literal& literal) {
  std::vector<int64_t> values;
  const Shape& shape = literal.shape();
  std::vector<int64_t> index(shape.rank(), 0);
  if (shape.element_count() == 0) return values;
  do {
    values.push_back(literal.GetInt(index));
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return values;
}

Literal R1(std::vector<double> values) {
  return Literal::FromDoubles(MakeShape(F32, {static_cast<int64_t>(values.size())}), values);
}

absl::StatusOr<Literal> Evaluate(const Module& module, std::vector<Literal> args = {}) {
  return EvaluateModule(module, args);
}

int CountOpcode(const Module& module, Opcode opcode) {
  int n = 0;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == opcode) ++n;
    }
  }
  return n;
}

// ---------------------------------------------------------------------------
// Structure

TEST(BuilderTest, ParameterConstantAddAndNames) {
  Builder b("name");
  Op x = Parameter(&b, 0, MakeShape(F32, {2}), "x");
  Op y = Add(x, ConstantR1<float>(&b, {1, 2}), /*broadcast_dimensions=*/{});
  std::unique_ptr<Module> m = BuildChecked(b, y);
  ASSERT_NE(m, nullptr);
  const Computation* entry = m->entry();
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->instruction_count(), 3);
  EXPECT_EQ(entry->root()->opcode(), Opcode::kAdd);
  EXPECT_EQ(entry->root()->shape().ToString(false), "f32[2]");
  EXPECT_EQ(entry->parameter(0)->name(), "x");
  EXPECT_TRUE(absl::StartsWith(entry->root()->name(), "add."));
  // Names are unique within the computation.
  std::set<std::string> names;
  for (const auto& instruction : entry->instructions()) {
    EXPECT_TRUE(names.insert(instruction->name()).second) << instruction->name();
  }
  absl::StatusOr<Literal> r = Evaluate(*m, {R1({10, 20})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{11, 22}));
}

TEST(BuilderTest, SubComputationReduceSeedExample) {
  // 003 "Reduce": a [4,2,3] array whose four slices hold 1..6; reducing
  // dimensions 0 and 1 with add gives [20, 28, 36], all dimensions 84.
  Builder b("reduce");
  Builder add = b.CreateSubBuilder("add");
  Op p = Parameter(&add, 0, Shape::Scalar(F32), "p");
  Op q = Parameter(&add, 1, Shape::Scalar(F32), "q");
  Computation* add_c = add.BuildSubComputation(Add(p, q));
  ASSERT_NE(add_c, nullptr);
  Op v = ConstantR3<float>(&b, {{{1, 2, 3}, {4, 5, 6}},
                                {{1, 2, 3}, {4, 5, 6}},
                                {{1, 2, 3}, {4, 5, 6}},
                                {{1, 2, 3}, {4, 5, 6}}});
  Op zero = ConstantR0<float>(&b, 0);
  Op r01 = Reduce(v, zero, add_c, {0, 1});
  Op all = Reduce(v, zero, add_c, {0, 1, 2});
  Op t = Tuple(&b, {r01, all});
  std::unique_ptr<Module> m = BuildChecked(b, t);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computations().size(), 2u);
  EXPECT_EQ(m->computations().front()->name(), "add");  // callee before caller
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "(f32[3], f32[])");
  absl::StatusOr<Literal> r = Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->element(0)), (std::vector<double>{20, 28, 36}));
  EXPECT_EQ(Doubles(r->element(1)), (std::vector<double>{84}));
}

TEST(BuilderTest, VariadicReduceArgmax) {
  // 003 "Variadic Reduce": max and argmax computed together.
  Builder b("argmax");
  Builder f = b.CreateSubBuilder("f");
  Op max = Parameter(&f, 0, Shape::Scalar(F32), "max");
  Op argmax = Parameter(&f, 1, Shape::Scalar(S32), "argmax");
  Op value = Parameter(&f, 2, Shape::Scalar(F32), "value");
  Op index = Parameter(&f, 3, Shape::Scalar(S32), "index");
  Op ge = Ge(value, max);
  Computation* fc =
      f.BuildSubComputation(Tuple(&f, {Select(ge, value, max), Select(ge, index, argmax)}));
  Op v = ConstantR1<float>(&b, {3, 9, 2, 9, 1});
  Op k = Iota(&b, S32, 5);
  Op r = Reduce(&b, {v, k}, {MinValue(&b, F32), ConstantR0<int32_t>(&b, 0)}, fc, {0});
  std::unique_ptr<Module> m = BuildChecked(b, r);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{9}));
  // `value >= max` takes the later of equal maxima.
  EXPECT_EQ(Ints(out->element(1)), (std::vector<int64_t>{3}));
}

TEST(BuilderTest, ImplicitBroadcastWithBroadcastDimensions) {
  // Matrix + vector: the vector maps to dimension 1 ({1, 2} added to each row).
  Builder b("bcast");
  Op m = ConstantR2<float>(&b, {{1, 2}, {3, 4}, {5, 6}});
  Op v = ConstantR1<float>(&b, {10, 20});
  Op rows = Add(m, v, {1});
  Op w = ConstantR1<float>(&b, {100, 200, 300});
  Op cols = Add(m, w, {0});
  Op scalar = Mul(m, ConstantR0<float>(&b, 2));
  std::unique_ptr<Module> mod = BuildChecked(b, Tuple(&b, {rows, cols, scalar}));
  ASSERT_NE(mod, nullptr);
  EXPECT_EQ(CountOpcode(*mod, Opcode::kBroadcast), 3);
  absl::StatusOr<Literal> r = Evaluate(*mod);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(r->element(0)), (std::vector<double>{11, 22, 13, 24, 15, 26}));
  EXPECT_EQ(Doubles(r->element(1)), (std::vector<double>{101, 102, 203, 204, 305, 306}));
  EXPECT_EQ(Doubles(r->element(2)), (std::vector<double>{2, 4, 6, 8, 10, 12}));
}

TEST(BuilderTest, DegenerateBroadcast) {
  // [2,1] + [1,3] -> [2,3]: size-1 dimensions stretch.
  Builder b("degenerate");
  Op a = ConstantR2<float>(&b, {{1}, {2}});
  Op c = ConstantR2<float>(&b, {{10, 20, 30}});
  std::unique_ptr<Module> m = BuildChecked(b, Add(a, c));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "f32[2,3]");
  absl::StatusOr<Literal> r = Evaluate(*m);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(Doubles(*r), (std::vector<double>{11, 21, 31, 12, 22, 32}));
}

TEST(BuilderTest, ClampSeedExample) {
  // 003 "Clamp": operand {-1, 5, 9}, min 0, max 6 -> {0, 5, 6}.
  Builder b("clamp");
  Op operand = ConstantR1<int32_t>(&b, {-1, 5, 9});
  Op r = Clamp(ConstantR0<int32_t>(&b, 0), operand, ConstantR0<int32_t>(&b, 6));
  std::unique_ptr<Module> m = BuildChecked(b, r);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(*out), (std::vector<int64_t>{0, 5, 6}));
}

TEST(BuilderTest, SelectSeedExamples) {
  // 003 "Select": with an array pred and with a scalar pred.
  Builder b("select");
  Op pred = ConstantR1<bool>(&b, {true, false, false, true});
  Op v1 = ConstantR1<int32_t>(&b, {1, 2, 3, 4});
  Op v2 = ConstantR1<int32_t>(&b, {100, 200, 300, 400});
  Op a = Select(pred, v1, v2);
  Op s = Select(ConstantR0<bool>(&b, true), v1, v2);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {a, s}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(out->element(0)), (std::vector<int64_t>{1, 200, 300, 4}));
  EXPECT_EQ(Ints(out->element(1)), (std::vector<int64_t>{1, 2, 3, 4}));
}

TEST(BuilderTest, CollapseAndReshapeSeedExamples) {
  Builder b("collapse");
  Op v = ConstantR3<float>(&b, {{{10, 11, 12}, {15, 16, 17}},
                                {{20, 21, 22}, {25, 26, 27}},
                                {{30, 31, 32}, {35, 36, 37}},
                                {{40, 41, 42}, {45, 46, 47}}});
  Op v012 = Collapse(v, {0, 1, 2});
  Op v01 = Collapse(v, {0, 1});
  Op v12 = Collapse(v, {1, 2});
  Op v83 = Reshape(v, {8, 3});
  Op five = Reshape(ConstantR2<float>(&b, {{5}}), {});
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {v012, v01, v12, v83, five}));
  ASSERT_NE(m, nullptr);
  // 003 defines Collapse as replacing the listed consecutive dimensions by
  // one of their product, so {0,1} of [4,2,3] is [8,3] and {1,2} is [4,6];
  // the seed's example captions have the two the other way round (the
  // element order, checked below, is the same either way).
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[24], f32[8,3], f32[4,6], f32[8,3], f32[])");
  EXPECT_EQ(CountOpcode(*m, Opcode::kReshape), 5);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> flat = {10, 11, 12, 15, 16, 17, 20, 21, 22, 25, 26, 27,
                                    30, 31, 32, 35, 36, 37, 40, 41, 42, 45, 46, 47};
  EXPECT_EQ(Doubles(out->element(0)), flat);
  EXPECT_EQ(Doubles(out->element(1)), flat);
  EXPECT_EQ(Doubles(out->element(2)), flat);
  EXPECT_EQ(Doubles(out->element(4)), (std::vector<double>{5}));
}

TEST(BuilderTest, ConcatSeedExamples) {
  Builder b("concat");
  Op c1 = ConcatInDim(&b,
                      {ConstantR1<int32_t>(&b, {2, 3}), ConstantR1<int32_t>(&b, {4, 5}),
                       ConstantR1<int32_t>(&b, {6, 7})},
                      0);
  Op a = ConstantR2<int32_t>(&b, {{1, 2}, {3, 4}, {5, 6}});
  Op bb = ConstantR2<int32_t>(&b, {{7, 8}});
  Op c2 = ConcatInDim(&b, {a, bb}, 0);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {c1, c2}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(out->element(0)), (std::vector<int64_t>{2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(Ints(out->element(1)), (std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8}));
}

TEST(BuilderTest, ConvertElementTypeSeedExample) {
  Builder b("convert");
  Op a = ConstantR1<int32_t>(&b, {0, 1, 2});
  std::unique_ptr<Module> m = BuildChecked(b, ConvertElementType(a, F32));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "f32[3]");
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{0, 1, 2}));
}

TEST(BuilderTest, BitcastConvertBetweenWidths) {
  // 003: f32[10] -> f16[10,2]; f16[10,2] -> f32[10].
  Builder b("bitcast");
  Op x = Parameter(&b, 0, MakeShape(F32, {10}), "x");
  Op h = BitcastConvertType(x, ElementType::kF16);
  Op back = BitcastConvertType(h, F32);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {h, back}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "(f16[10,2], f32[10])");
}

TEST(BuilderTest, DotAndDotGeneralSeedExamples) {
  Builder b("dot");
  Op lhs = ConstantR2<float>(&b, {{1, 2, 3}, {4, 5, 6}});
  Op rhs = ConstantR2<float>(&b, {{1, 1, 1}, {2, 2, 2}});
  DotDimensionNumbers dnums;
  dnums.lhs_contracting_dimensions = {1};
  dnums.rhs_contracting_dimensions = {1};
  Op g = DotGeneral(lhs, rhs, dnums);
  Op bl = ConstantR3<float>(&b, {{{1, 2}, {3, 4}}, {{5, 6}, {7, 8}}});
  Op br = ConstantR3<float>(&b, {{{1, 0}, {0, 1}}, {{1, 0}, {0, 1}}});
  DotDimensionNumbers batch;
  batch.lhs_contracting_dimensions = {2};
  batch.rhs_contracting_dimensions = {1};
  batch.lhs_batch_dimensions = {0};
  batch.rhs_batch_dimensions = {0};
  Op bg = DotGeneral(bl, br, batch);
  Op mv = Dot(lhs, ConstantR1<float>(&b, {1, 0, -1}));
  Op mm = Dot(lhs, ConstantR2<float>(&b, {{1}, {1}, {1}}));
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {g, bg, mv, mm}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[2,2], f32[2,2,2], f32[2], f32[2,1])");
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{6, 12, 15, 30}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{1, 2, 3, 4, 5, 6, 7, 8}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{-2, -2}));
  EXPECT_EQ(Doubles(out->element(3)), (std::vector<double>{6, 15}));
}

TEST(BuilderTest, DynamicSliceAndUpdateSeedExamples) {
  Builder b("dynamic");
  Op a = ConstantR1<float>(&b, {0, 1, 2, 3, 4});
  Op ds1 = DynamicSlice(a, {ConstantR0<int32_t>(&b, 2)}, {2});
  Op bm = ConstantR2<float>(&b, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}});
  Op ds2 = DynamicSlice(bm, {ConstantR0<int32_t>(&b, 2), ConstantR0<int32_t>(&b, 1)}, {2, 2});
  Op u = ConstantR1<float>(&b, {5, 6});
  Op dus1 = DynamicUpdateSlice(a, u, {ConstantR0<int32_t>(&b, 2)});
  Op u2 = ConstantR2<float>(&b, {{12, 13}, {14, 15}, {16, 17}});
  Op dus2 = DynamicUpdateSlice(bm, u2, {ConstantR0<int32_t>(&b, 1), ConstantR0<int32_t>(&b, 1)});
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {ds1, ds2, dus1, dus2}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{2, 3}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{7, 8, 10, 11}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{0, 1, 5, 6, 4}));
  EXPECT_EQ(Doubles(out->element(3)),
            (std::vector<double>{0, 1, 2, 3, 12, 13, 6, 14, 15, 9, 16, 17}));
}

TEST(BuilderTest, SliceSeedExamples) {
  Builder b("slice");
  Op a = ConstantR1<float>(&b, {0, 1, 2, 3, 4});
  Op s1 = Slice(a, {2}, {4}, {1});
  Op bm = ConstantR2<float>(&b, {{0, 1, 2}, {3, 4, 5}, {6, 7, 8}, {9, 10, 11}});
  Op s2 = Slice(bm, {2, 1}, {4, 3}, {1, 1});
  Op s3 = SliceInDim(a, 0, 5, 2, 0);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {s1, s2, s3}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{2, 3}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{7, 8, 10, 11}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{0, 2, 4}));
}

TEST(BuilderTest, IotaSeedExample) {
  Builder b("iota");
  Op rows = Iota(&b, MakeShape(S32, {4, 8}), 0);
  Op cols = Iota(&b, MakeShape(S32, {4, 8}), 1);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {rows, cols}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  std::vector<int64_t> expected_rows, expected_cols;
  for (int i = 0; i < 4; ++i) {
    for (int j = 0; j < 8; ++j) {
      expected_rows.push_back(i);
      expected_cols.push_back(j);
    }
  }
  EXPECT_EQ(Ints(out->element(0)), expected_rows);
  EXPECT_EQ(Ints(out->element(1)), expected_cols);
}

TEST(BuilderTest, ReduceWindowSeedExamples) {
  // 003 "ReduceWindow": 4x6 max pool with 2x3 windows; and the min with
  // window 3, stride 2 over [10000, 1000, 100, 10, 1]: VALID gives [100, 1],
  // SAME gives [1000, 10, 1].
  Builder b("reduce_window_2x3");
  Builder max = b.CreateSubBuilder("max");
  Op y = Parameter(&max, 0, Shape::Scalar(F32), "y");
  Op x = Parameter(&max, 1, Shape::Scalar(F32), "x");
  Computation* max_c = max.BuildSubComputation(Max(y, x));
  Op input = Parameter(&b, 0, MakeShape(F32, {4, 6}), "input");
  Op pool = ReduceWindow(input, MinValue(&b, F32), max_c, {2, 3}, {2, 3}, Padding::kValid);
  Computation* min_c = CreateScalarMinComputation(&b, F32);
  Op v = ConstantR1<float>(&b, {10000, 1000, 100, 10, 1});
  Op valid = ReduceWindow(v, MaxValue(&b, F32), min_c, {3}, {2}, Padding::kValid);
  Op same = ReduceWindow(v, MaxValue(&b, F32), min_c, {3}, {2}, Padding::kSame);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {pool, valid, same}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "(f32[2,2], f32[2], f32[3])");
  std::vector<double> in(24);
  for (int i = 0; i < 24; ++i) in[i] = i;
  absl::StatusOr<Literal> out = Evaluate(*m, {Literal::FromDoubles(MakeShape(F32, {4, 6}), in)});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{8, 11, 20, 23}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{100, 1}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{1000, 10, 1}));
}

TEST(BuilderTest, ConvSamePaddingIsExplicit) {
  // Conv with Padding::kSame keeps the spatial size at stride 1: a 3x3 kernel
  // gets padding 1 on each side.
  Builder b("conv");
  Op lhs = Parameter(&b, 0, MakeShape(F32, {1, 1, 4, 4}), "lhs");
  Op rhs = Parameter(&b, 1, MakeShape(F32, {2, 1, 3, 3}), "rhs");
  Op same = Conv(lhs, rhs, {1, 1}, Padding::kSame);
  Op strided = Conv(lhs, rhs, {2, 2}, Padding::kValid);
  Op general = ConvWithGeneralPadding(lhs, rhs, {1, 1}, {{2, 3}, {0, 0}});
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {same, strided, general}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[1,2,4,4], f32[1,2,1,1], f32[1,2,7,2])");
  const Instruction* conv = same.instruction();
  ASSERT_EQ(conv->attrs().window.size(), 2u);
  EXPECT_EQ(conv->attrs().window[0].padding_low, 1);
  EXPECT_EQ(conv->attrs().window[0].padding_high, 1);
  EXPECT_EQ(conv->attrs().window[1].size, 3);
  // A ones kernel over ones: interior points see 9 values, corners 4.
  std::vector<double> ones16(16, 1.0), ones18(18, 1.0);
  absl::StatusOr<Literal> out =
      Evaluate(*m, {Literal::FromDoubles(MakeShape(F32, {1, 1, 4, 4}), ones16),
                    Literal::FromDoubles(MakeShape(F32, {2, 1, 3, 3}), ones18)});
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<double> s = Doubles(out->element(0));
  ASSERT_EQ(s.size(), 32u);
  EXPECT_EQ(s[0], 4);
  EXPECT_EQ(s[5], 9);
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{9, 9}));
}

TEST(BuilderTest, SortSeedExample) {
  // 003 "Sort": operands [3, 1], [42, 50], [-3.0, 1.1] sorted by operand 0.
  Builder b("sort");
  Computation* lt = CreateScalarLtComputation(&b, {S32, S32, F32});
  Op o0 = ConstantR1<int32_t>(&b, {3, 1});
  Op o1 = ConstantR1<int32_t>(&b, {42, 50});
  Op o2 = ConstantR1<float>(&b, {-3.0f, 1.1f});
  std::unique_ptr<Module> m = BuildChecked(b, Sort({o0, o1, o2}, lt));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(out->element(0)), (std::vector<int64_t>{1, 3}));
  EXPECT_EQ(Ints(out->element(1)), (std::vector<int64_t>{50, 42}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{1.1f, -3.0f}));
}

TEST(BuilderTest, WhileSeedExample) {
  // 003 "While": init {0, zeros[10]}; while i < 1000: i += 1, v += ones.
  Builder b("while");
  const Shape state = Shape::Tuple({Shape::Scalar(S32), MakeShape(F32, {10})});
  Builder cond = b.CreateSubBuilder("condition");
  Op s = Parameter(&cond, 0, state, "s");
  Computation* cond_c =
      cond.BuildSubComputation(Lt(GetTupleElement(s, 0), ConstantR0<int32_t>(&cond, 1000)));
  Builder body = b.CreateSubBuilder("body");
  Op r = Parameter(&body, 0, state, "result");
  Op iteration = Add(GetTupleElement(r, 0), ConstantR0<int32_t>(&body, 1));
  Op new_vector = Add(GetTupleElement(r, 1), ConstantR1<float>(&body, 10, 1.0f));
  Computation* body_c = body.BuildSubComputation(Tuple(&body, {iteration, new_vector}));
  Op init = Tuple(&b, {ConstantR0<int32_t>(&b, 0), ConstantR1<float>(&b, 10, 0.0f)});
  std::unique_ptr<Module> m = BuildChecked(b, While(cond_c, body_c, init));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->computations().size(), 3u);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(out->element(0)), (std::vector<int64_t>{1000}));
  EXPECT_EQ(Doubles(out->element(1)), std::vector<double>(10, 1000.0));
}

TEST(BuilderTest, TupleAndGetTupleElementSeedExample) {
  Builder b("tuple");
  Op v = Iota(&b, F32, 10);
  Op s = ConstantR0<int32_t>(&b, 5);
  Op t = Tuple(&b, {v, s});
  Op element_1 = GetTupleElement(t, 1);
  EXPECT_EQ(element_1.shape().ToString(false), "s32[]");
  std::unique_ptr<Module> m = BuildChecked(b, element_1);
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(*out), (std::vector<int64_t>{5}));
}

TEST(BuilderTest, ConditionalBothForms) {
  Builder b("cond");
  Builder neg = b.CreateSubBuilder("neg");
  Computation* neg_c = neg.BuildSubComputation(Neg(Parameter(&neg, 0, Shape::Scalar(F32), "x")));
  Builder twice = b.CreateSubBuilder("twice");
  Op tx = Parameter(&twice, 0, Shape::Scalar(F32), "x");
  Computation* twice_c = twice.BuildSubComputation(Add(tx, tx));
  Op x = ConstantR0<float>(&b, 3);
  Op by_pred = Conditional(ConstantR0<bool>(&b, false), x, neg_c, x, twice_c);
  Computation* branches[] = {neg_c, twice_c};
  Op by_index = Conditional(ConstantR0<int32_t>(&b, 7), branches, {x, x});  // out of range: last
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {by_pred, by_index}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{6}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{6}));
}

TEST(BuilderTest, MapAndCall) {
  Builder b("map");
  Computation* add_c = CreateScalarAddComputation(&b, F32);
  Op a = ConstantR1<float>(&b, {1, 2, 3});
  Op c = ConstantR1<float>(&b, {10, 20, 30});
  Op mapped = Map(&b, {a, c}, add_c, {0});
  Op called = Call(&b, add_c, {ConstantR0<float>(&b, 1), ConstantR0<float>(&b, 2)});
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {mapped, called}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{11, 22, 33}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{3}));
}

TEST(BuilderTest, BroadcastAndBroadcastInDim) {
  Builder b("broadcast");
  Op s = ConstantR0<float>(&b, 2.0f);
  Op bs = Broadcast(s, {2, 3});  // 003: every value 2.0
  Op v = ConstantR1<float>(&b, {1, 2});
  Op pre = Broadcast(v, {3});  // [3,2]
  Op in_dim = BroadcastInDim(v, {2, 3}, {0});
  Op one = ConstantR2<float>(&b, {{7}});
  Op stretched = BroadcastInDim(one, {2, 2}, {0, 1});  // size-1 dims expand
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {bs, pre, in_dim, stretched}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[2,3], f32[3,2], f32[2,3], f32[2,2])");
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), std::vector<double>(6, 2.0));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{1, 2, 1, 2, 1, 2}));
  EXPECT_EQ(Doubles(out->element(2)), (std::vector<double>{1, 1, 1, 2, 2, 2}));
  EXPECT_EQ(Doubles(out->element(3)), std::vector<double>(4, 7.0));
}

TEST(BuilderTest, ComparisonsAndTotalOrder) {
  Builder b("compare");
  Op x = ConstantR1<float>(&b, {-0.0f, 1.0f});
  Op y = ConstantR1<float>(&b, {0.0f, 1.0f});
  Op eq = Eq(x, y);
  Op eq_total = EqTotalOrder(x, y);
  Op lt_total = LtTotalOrder(x, y);
  EXPECT_EQ(eq_total.instruction()->attrs().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(eq.instruction()->attrs().comparison_direction, ComparisonDirection::kEq);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {eq, eq_total, lt_total}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Ints(out->element(0)), (std::vector<int64_t>{1, 1}));
  EXPECT_EQ(Ints(out->element(1)), (std::vector<int64_t>{0, 1}));  // -0 < +0 in total order
  EXPECT_EQ(Ints(out->element(2)), (std::vector<int64_t>{1, 0}));
}

TEST(BuilderTest, PadSeedShapes) {
  Builder b("pad");
  Op x = ConstantR2<float>(&b, {{1, 2, 3}, {4, 5, 6}});
  PaddingConfig config = {{1, 0, 1}, {-1, 2, 0}};
  Op p = Pad(x, ConstantR0<float>(&b, 0), config);
  std::unique_ptr<Module> m = BuildChecked(b, p);
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "f32[4,4]");
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(*out), (std::vector<double>{0, 0, 0, 0, 2, 3, 0, 0, 0, 0, 0, 0, 5, 6, 0, 0}));
}

TEST(BuilderTest, CollectivesLowerToHlo) {
  Builder b("alltoall");
  b.set_replica_count(4);
  Op x = Parameter(&b, 0, MakeShape(F32, {4, 16}), "x");
  Op a2a = AllToAll(x, /*split_dimension=*/1, /*concat_dimension=*/0, /*split_count=*/4);
  EXPECT_EQ(a2a.shape().ToString(false), "f32[16,4]");  // 003's AllToAll example
  Op crs = CrossReplicaSum(x);
  Op gathered = AllGather(x, 0, 4);
  Computation* add_c = CreateScalarAddComputation(&b, F32);
  Op scattered = ReduceScatter(x, add_c, 1, 4);
  Op permuted = CollectivePermute(x, {{0, 1}, {1, 2}, {2, 3}, {3, 0}});
  Op id = ReplicaId(&b);
  std::unique_ptr<Module> m =
      BuildChecked(b, Tuple(&b, {a2a, crs, gathered, scattered, permuted, id}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[16,4], f32[4,16], f32[16,16], f32[4,4], f32[4,16], u32[])");
  EXPECT_EQ(CountOpcode(*m, Opcode::kAllReduce), 1);
  const Instruction* all_reduce = crs.instruction();
  ASSERT_EQ(all_reduce->called_computations().size(), 1u);
  EXPECT_EQ(all_reduce->to_apply()->root()->opcode(), Opcode::kAdd);
}

TEST(BuilderTest, SideEffectsAndTokens) {
  Builder b("io");
  Op data = Infeed(&b, MakeShape(F32, {3}), "cfg");
  Op sent = Send(data, 1);
  Op received = Recv(&b, MakeShape(F32, {3}), 2);
  Op out = OutfeedWithToken(received, sent, MakeShape(F32, {3}));
  Op rng = RngUniform(ConstantR0<float>(&b, 0), ConstantR0<float>(&b, 1), MakeShape(F32, {2}));
  Op bits = RngBitGenerator(RandomAlgorithm::kThreeFry, ConstantR1<uint64_t>(&b, {1, 2}),
                            Shape::Array(ElementType::kU32, {4}));
  Op cc = CustomCall(&b, "myfunc", {data, rng}, MakeShape(F32, {3, 3}));
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {out, bits, cc}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(CountOpcode(*m, Opcode::kInfeed), 1);
  EXPECT_EQ(CountOpcode(*m, Opcode::kSendDone), 1);
  EXPECT_EQ(CountOpcode(*m, Opcode::kRecvDone), 1);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false), "(token[], (u64[2], u32[4]), f32[3,3])");
}

TEST(BuilderTest, LinalgFftAndBatchNormShapes) {
  Builder b("misc");
  Op a = Parameter(&b, 0, MakeShape(F32, {3, 3}), "a");
  Op rhs = Parameter(&b, 1, MakeShape(F32, {3, 2}), "rhs");
  Op l = Cholesky(a, /*lower=*/true);
  Op x = TriangularSolve(l, rhs, true, true, false, TriangularSolveTranspose::kNoTranspose);
  Op r = Parameter(&b, 2, MakeShape(F32, {2, 8}), "r");
  Op spectrum = Fft(r, FftType::kRfft, {8});
  Op back = Fft(spectrum, FftType::kIrfft, {8});
  Op bn_in = Parameter(&b, 3, MakeShape(F32, {2, 3, 4}), "bn");
  Op scale = Parameter(&b, 4, MakeShape(F32, {3}), "scale");
  Op bn = BatchNormTraining(bn_in, scale, scale, 0.001f, 1);
  Op topk = TopK(r, 3);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {x, spectrum, back, bn, topk}));
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->entry()->root()->shape().ToString(false),
            "(f32[3,2], c64[2,5], f32[2,8], (f32[2,3,4], f32[3], f32[3]), (f32[2,3], s32[2,3]))");
}

TEST(BuilderTest, GatherAndScatter) {
  Builder b("gather");
  Op operand = ConstantR2<float>(&b, {{1, 2, 3}, {4, 5, 6}, {7, 8, 9}});
  Op indices = ConstantR1<int32_t>(&b, {2, 0});
  GatherDimensionNumbers g;
  g.offset_dims = {1};
  g.collapsed_slice_dims = {0};
  g.start_index_map = {0};
  g.index_vector_dim = 1;
  Op rows = Gather(operand, indices, g, {1, 3});
  ScatterDimensionNumbers s;
  s.update_window_dims = {1};
  s.inserted_window_dims = {0};
  s.scatter_dims_to_operand_dims = {0};
  s.index_vector_dim = 1;
  Computation* add_c = CreateScalarAddComputation(&b, F32);
  Op updated =
      Scatter(operand, indices, ConstantR2<float>(&b, {{10, 10, 10}, {1, 1, 1}}), add_c, s);
  std::unique_ptr<Module> m = BuildChecked(b, Tuple(&b, {rows, updated}));
  ASSERT_NE(m, nullptr);
  absl::StatusOr<Literal> out = Evaluate(*m);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Doubles(out->element(0)), (std::vector<double>{7, 8, 9, 1, 2, 3}));
  EXPECT_EQ(Doubles(out->element(1)), (std::vector<double>{2, 3, 4, 4, 5, 6, 17, 18, 19}));
}

TEST(BuilderTest, RemainingOperationsBuildVerifyAndPrint) {
  Builder b("remaining");
  Op x = Parameter(&b, 0, MakeShape(F32, {4, 6}), "x");
  Op n = Parameter(&b, 1, Shape::Scalar(S32), "n");
  Builder decomposition = b.CreateSubBuilder("decomposition");
  Computation* exp_c = decomposition.BuildSubComputation(
      Exp(Parameter(&decomposition, 0, MakeShape(F32, {4, 6}), "p")));
  Op composite = CompositeCall(&b, exp_c, {x}, "my.exp", "{n = 1 : i32}", 1);
  Op reduced = ReducePrecision(x, 5, 10);
  Op dynamic = SetDimensionSize(x, n, 0);
  Op size = GetDimensionSize(dynamic, 0);
  Op normal = RngNormal(ConstantR0<float>(&b, 0), ConstantR0<float>(&b, 1), MakeShape(F32, {3}));
  Builder select = b.CreateSubBuilder("select");
  Computation* select_c =
      select.BuildSubComputation(Ge(Parameter(&select, 0, Shape::Scalar(F32), "a"),
                                    Parameter(&select, 1, Shape::Scalar(F32), "b")));
  Computation* add_c = CreateScalarAddComputation(&b, F32);
  Op sas =
      SelectAndScatter(x, select_c, {2, 3}, {2, 3}, Padding::kValid,
                       ConstantR2<float>(&b, {{1, 2}, {3, 4}}), ConstantR0<float>(&b, 0), add_c);
  Op reversed = Rev(x, {0, 1});
  Op transposed = Transpose(x, {1, 0});
  Op barrier = OptimizationBarrier(Tuple(&b, {reversed, transposed}));
  Op unary = Tanh(Logistic(Sqrt(Abs(x))));
  Op ints = ConstantR1<int32_t>(&b, {1, -2, 3});
  Op bits = Xor(ShiftLeft(ints, ConstantR1<int32_t>(&b, {1, 1, 1})), PopulationCount(Clz(ints)));
  Op cplx = Complex(ConstantR1<float>(&b, {1}), ConstantR1<float>(&b, {2}));
  Op parts = Tuple(&b, {Real(cplx), Imag(cplx)});
  std::unique_ptr<Module> m = BuildChecked(
      b, Tuple(&b, {composite, reduced, dynamic, size, normal, sas, barrier, unary, bits, parts}));
  ASSERT_NE(m, nullptr);
  EXPECT_TRUE(composite.instruction()->attrs().is_composite);
  EXPECT_EQ(dynamic.shape().ToString(false), "f32[<=4,6]");
  EXPECT_EQ(size.shape().ToString(false), "s32[]");
  EXPECT_EQ(sas.shape().ToString(false), "f32[4,6]");
}

// ---------------------------------------------------------------------------
// Errors

TEST(BuilderErrorTest, ShapeMismatchIsReportedByBuildNamingTheOp) {
  Builder b("bad");
  Op x = Parameter(&b, 0, MakeShape(F32, {2}), "x");
  Op y = Parameter(&b, 1, MakeShape(F32, {3}), "y");
  Op sum = Add(x, y);
  EXPECT_FALSE(sum.valid());
  Op later = Neg(sum);  // keeps going without crashing
  EXPECT_FALSE(later.valid());
  absl::StatusOr<std::unique_ptr<Module>> m = b.Build(later);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "Add")) << m.status();
}

TEST(BuilderErrorTest, FirstErrorWins) {
  Builder b("first");
  Op x = Parameter(&b, 0, MakeShape(F32, {2, 3}), "x");
  Transpose(x, {0, 0});
  Reshape(x, {7});
  absl::StatusOr<std::unique_ptr<Module>> m = b.Build(x);
  ASSERT_FALSE(m.ok());
  EXPECT_TRUE(absl::StrContains(m.status().message(), "Transpose")) << m.status();
}

TEST(BuilderErrorTest, BadArgumentsNeverCrash) {
  Builder b("robust");
  Op x = Parameter(&b, 0, MakeShape(F32, {2, 3}), "x");
  EXPECT_FALSE(Collapse(x, {1, 0}).valid());
  EXPECT_FALSE(b.first_error().ok());
  // Everything after the first error is invalid but safe.
  EXPECT_FALSE(SliceInDim(x, 0, 1, 1, 5).valid());
  EXPECT_FALSE(Conv(x, x, {1}, Padding::kSame).valid());
  EXPECT_FALSE(AllToAll(x, 3, 0, 2).valid());
  EXPECT_FALSE(Reduce(x, Op(), nullptr, {0}).valid());
  EXPECT_FALSE(GetTupleElement(Op(), 0).valid());
  EXPECT_FALSE(b.Build(x).ok());
}

TEST(BuilderErrorTest, EachKindOfMisuseIsAnError) {
  {
    Builder b("null_computation");
    Op x = Parameter(&b, 0, MakeShape(F32, {2}), "x");
    Op r = Reduce(x, ConstantR0<float>(&b, 0), nullptr, {0});
    EXPECT_FALSE(r.valid());
    EXPECT_FALSE(b.Build(r).ok());
  }
  {
    Builder b("other_builder");
    Builder c("c");
    Op x = Parameter(&b, 0, MakeShape(F32, {2}), "x");
    Op y = Parameter(&c, 0, MakeShape(F32, {2}), "y");
    EXPECT_FALSE(Add(x, y).valid());
    absl::StatusOr<std::unique_ptr<Module>> m = b.Build(x);
    ASSERT_FALSE(m.ok());
    EXPECT_TRUE(absl::StrContains(m.status().message(), "Add")) << m.status();
  }
  {
    Builder b("duplicate_parameter");
    Parameter(&b, 0, MakeShape(F32, {2}), "x");
    EXPECT_FALSE(Parameter(&b, 0, MakeShape(F32, {2}), "y").valid());
    EXPECT_FALSE(b.Build().ok());
  }
  {
    Builder b("sparse_parameters");
    Op x = Parameter(&b, 1, MakeShape(F32, {2}), "x");
    EXPECT_FALSE(b.Build(x).ok());
  }
  {
    Builder b("ranks");
    Op m = ConstantR2<float>(&b, {{1, 2}, {3, 4}});
    Op v = ConstantR1<float>(&b, {1, 2});
    EXPECT_FALSE(Add(m, v).valid());  // different ranks need broadcast_dimensions
    EXPECT_FALSE(b.Build().ok());
  }
  {
    Builder b("sub_build");
    Builder sub = b.CreateSubBuilder("sub");
    EXPECT_FALSE(sub.Build().ok());
    Op one = ConstantR0<float>(&b, 1);
    EXPECT_EQ(b.BuildSubComputation(one), nullptr);
    EXPECT_FALSE(b.Build(one).ok());
  }
  {
    Builder b("twice");
    Op one = ConstantR0<float>(&b, 1);
    EXPECT_TRUE(b.Build(one).ok());
    EXPECT_FALSE(b.Build(one).ok());
  }
  {
    Builder b("ragged_constant");
    EXPECT_FALSE(ConstantR2<float>(&b, {{1, 2}, {3}}).valid());
    EXPECT_FALSE(b.Build().ok());
  }
}

}  // namespace
}  // namespace xjit
