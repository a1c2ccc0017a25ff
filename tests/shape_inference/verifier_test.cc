// The module verifier: one test per rule, each building the smallest module
// that breaks it and checking that the message names the computation, the
// instruction and the rule.
#include "ir/verifier.h"

#include <string>

#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "tests/shape_inference/test_graph.h"

namespace xjit::testing {
namespace {

#define EXPECT_VERIFY_ERROR(module, substring)                                    \
  do {                                                                           \
    absl::Status status_ = VerifyModule(module);                                 \
    ASSERT_FALSE(status_.ok()) << "the verifier accepted the module";            \
    EXPECT_NE(std::string(status_.message()).find(substring), std::string::npos) \
        << "message: " << status_.message();                                    \
  } while (0)

// entry(p0: f32[2], p1: f32[2]) -> f32[2] { add }
struct SmallModule {
  SmallModule() {
    p0 = g.Param(0, F32({2}));
    p1 = g.Param(1, F32({2}));
    add = g.Add(Opcode::kAdd, F32({2}), {p0, p1});
    add->set_name("sum");
  }
  Graph g;
  Instruction* p0;
  Instruction* p1;
  Instruction* add;
};

TEST(VerifierTest, AcceptsWellFormedModule) {
  SmallModule m;
  EXPECT_TRUE(VerifyModule(m.g.module()).ok()) << VerifyModule(m.g.module());
}

TEST(VerifierTest, NeedsEntry) {
  SmallModule m;
  m.g.module().set_entry(nullptr);
  EXPECT_VERIFY_ERROR(m.g.module(), "module m: has no entry computation");
}

TEST(VerifierTest, NeedsRoot) {
  SmallModule m;
  m.g.entry()->set_root(nullptr);
  EXPECT_VERIFY_ERROR(m.g.module(), "computation entry: has no root");
}

TEST(VerifierTest, ShapeMustMatchInference) {
  SmallModule m;
  *m.add->mutable_shape() = F32({3});
  EXPECT_VERIFY_ERROR(m.g.module(),
                      "computation entry, instruction sum: add: shape f32[3] differs from the "
                      "inferred shape f32[2]");
}

TEST(VerifierTest, InferenceErrorsNameTheInstruction) {
  SmallModule m;
  auto* other = m.g.Param(2, F32({3}));
  auto* bad = m.g.Add(Opcode::kAdd, F32({2}), {m.p0, other});
  bad->set_name("bad");
  EXPECT_VERIFY_ERROR(m.g.module(),
                      "computation entry, instruction bad: add: operand shapes f32[2] and f32[3] "
                      "differ");
}

TEST(VerifierTest, NamesAreUnique) {
  SmallModule m;
  m.p1->set_name("p0");
  EXPECT_VERIFY_ERROR(m.g.module(), "computation entry, instruction p0: name is used");
}

TEST(VerifierTest, SameNamesInDifferentComputationsAreFine) {
  SmallModule m;
  Computation* add = m.g.ScalarBinary("add", ElementType::kF32, Opcode::kAdd);
  (void)add;  // p0/p1 exist in both computations
  m.g.module().RemoveComputation(m.g.entry());
  SmallModule fresh;
  Computation* scalar = fresh.g.ScalarBinary("scalar_add", ElementType::kF32, Opcode::kAdd);
  auto* zero = fresh.g.Param(2, F32({}));
  auto* reduce = fresh.g.Add(Opcode::kReduce, F32({}), {fresh.add, zero},
                             [](InstructionAttributes* a) { a->dimensions = {0}; }, {scalar});
  (void)reduce;
  EXPECT_TRUE(VerifyModule(fresh.g.module()).ok()) << VerifyModule(fresh.g.module());
}

TEST(VerifierTest, OperandsPrecedeUsers) {
  Graph g;
  auto* p0 = g.Param(0, F32({2}));
  // Build `neg` after `use` by adding it through a second instruction order:
  // create both, then make the first use the second.
  auto* use = g.Add(Opcode::kNegate, F32({2}), {p0});
  auto* later = g.Add(Opcode::kNegate, F32({2}), {p0});
  use->ReplaceOperand(0, later);
  later->set_name("later");
  EXPECT_VERIFY_ERROR(g.module(), "operand 0 (later) is defined after its user");
}

TEST(VerifierTest, OperandsBelongToTheComputation) {
  Graph g;
  Computation* other = g.NewComputation("other");
  auto* foreign = g.Param(other, 0, F32({2}));
  other->set_root(foreign);
  foreign->set_name("foreign");
  auto* p0 = g.Param(0, F32({2}));
  auto* neg = g.Add(Opcode::kNegate, F32({2}), {p0});
  neg->ReplaceOperand(0, foreign);
  EXPECT_VERIFY_ERROR(g.module(), "operand 0 (foreign) belongs to another computation");
}

TEST(VerifierTest, ParameterNumbersAreDense) {
  Graph g;
  auto* p0 = g.Param(0, F32({2}));
  g.Param(2, F32({2}));
  g.Add(Opcode::kNegate, F32({2}), {p0});
  EXPECT_VERIFY_ERROR(g.module(), "computation entry: parameter numbers are not dense");
}

TEST(VerifierTest, ParameterNumbersAreUnique) {
  Graph g;
  auto* a = g.Param(0, F32({2}));
  auto* b = g.Param(0, F32({2}));
  b->set_name("again");
  g.Add(Opcode::kAdd, F32({2}), {a, b});
  EXPECT_VERIFY_ERROR(g.module(), "instruction p0: parameter number 0");
}

TEST(VerifierTest, ArityMatchesOpcode) {
  Graph g;
  auto* p0 = g.Param(0, F32({2}));
  g.Add(Opcode::kAdd, F32({2}), {p0})->set_name("lonely");
  EXPECT_VERIFY_ERROR(g.module(), "instruction lonely: add takes 2 operands, has 1");
}

TEST(VerifierTest, CalledComputationsBelongToTheModule) {
  Graph g;
  Computation outside("outside");
  auto* p0 = g.Param(0, F32({2}));
  auto* zero = g.Param(1, F32({}));
  g.Add(Opcode::kReduce, F32({}), {p0, zero}, [](InstructionAttributes* a) { a->dimensions = {0}; },
        {&outside})
      ->set_name("r");
  EXPECT_VERIFY_ERROR(g.module(), "instruction r: called computation outside is not in the module");
}

TEST(VerifierTest, CalledComputationSignatures) {
  Graph g;
  Computation* wrong = g.ScalarBinary("mul_s32", ElementType::kS32, Opcode::kMultiply);
  auto* p0 = g.Param(0, F32({2}));
  auto* zero = g.Param(1, F32({}));
  g.Add(Opcode::kReduce, F32({}), {p0, zero}, [](InstructionAttributes* a) { a->dimensions = {0}; },
        {wrong})
      ->set_name("r");
  EXPECT_VERIFY_ERROR(g.module(), "instruction r: reduce: to_apply computation mul_s32 parameter 0");
}

TEST(VerifierTest, RejectsRecursion) {
  Graph g;
  Computation* self = g.NewComputation("self");
  auto* q = g.Param(self, 0, F32({2}));
  g.Add(self, Opcode::kCall, F32({2}), {q}, nullptr, {self});
  auto* p0 = g.Param(0, F32({2}));
  g.Add(Opcode::kCall, F32({2}), {p0}, nullptr, {self});
  EXPECT_VERIFY_ERROR(g.module(), "computation self: calls itself");
}

TEST(VerifierTest, LayoutsMustBeValid) {
  SmallModule m;
  m.add->mutable_shape()->mutable_layout()->minor_to_major = {0, 0};
  EXPECT_VERIFY_ERROR(m.g.module(), "computation entry, instruction sum: invalid layout");
}

TEST(VerifierTest, TilesAndMemorySpacesAreAllowed) {
  Graph g;
  Shape tiled = F32({16, 256});
  tiled.mutable_layout()->tiles = {Tile{{8, 128}}};
  tiled.mutable_layout()->memory_space = 1;
  auto* p0 = g.Param(0, tiled);
  auto* neg = g.Add(Opcode::kNegate, tiled, {p0});
  (void)neg;
  EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
}

TEST(VerifierTest, LayoutsAndDynamicFlagsAside) {
  Graph g;
  auto* p0 = g.Param(0, Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 1}));
  auto* size = g.Param(1, S32({}));
  auto* neg = g.Add(Opcode::kNegate, F32({2, 3}), {p0});
  // set-dimension-size makes dimension 1 dynamic; declaring it static is accepted.
  g.Add(Opcode::kSetDimensionSize, F32({2, 3}), {neg, size},
        [](InstructionAttributes* a) { a->dimensions = {1}; });
  EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
}

TEST(VerifierTest, ConstantLiteralMatchesShape) {
  Graph g;
  auto* c = g.Add(Opcode::kConstant, F32({2}), {});
  c->set_name("c");
  c->set_literal(Literal(F32({3})));
  EXPECT_VERIFY_ERROR(g.module(), "instruction c: constant: literal shape f32[3] differs");
  c->set_literal(Literal(F32({2})));
  EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
}

TEST(VerifierTest, EntryComputationLayout) {
  SmallModule m;
  m.g.module().set_entry_computation_layout({F32({2}), F32({2})}, F32({2}));
  EXPECT_TRUE(VerifyModule(m.g.module()).ok()) << VerifyModule(m.g.module());
  m.g.module().set_entry_computation_layout({F32({2})}, F32({2}));
  EXPECT_VERIFY_ERROR(m.g.module(), "entry_computation_layout has 1 parameters");
  m.g.module().set_entry_computation_layout({F32({2}), F32({2})}, S32({2}));
  EXPECT_VERIFY_ERROR(m.g.module(), "entry_computation_layout result s32[2] differs");
  Shape bad_layout = F32({2});
  bad_layout.mutable_layout()->minor_to_major = {1};
  m.g.module().set_entry_computation_layout({bad_layout, F32({2})}, F32({2}));
  EXPECT_VERIFY_ERROR(m.g.module(), "entry_computation_layout parameter 0");
}

TEST(VerifierTest, InputOutputAliases) {
  SmallModule m;
  m.g.module().mutable_input_output_aliases()->push_back({{}, 1, {}, ""});
  EXPECT_TRUE(VerifyModule(m.g.module()).ok()) << VerifyModule(m.g.module());
  m.g.module().mutable_input_output_aliases()->push_back({{}, 5, {}, ""});
  EXPECT_VERIFY_ERROR(m.g.module(), "input_output_alias names parameter 5");
  m.g.module().mutable_input_output_aliases()->back() = {{0}, 0, {}, ""};
  EXPECT_VERIFY_ERROR(m.g.module(), "output index");
}

// As in XLA, an output may alias a parameter of another shape with the same
// byte size (a bitcast of it), but not one of another size.
TEST(VerifierTest, InputOutputAliasComparesByteSizes) {
  Graph g;
  auto* p0 = g.Param(0, F32({2, 6}));
  g.Add(Opcode::kBitcast, S32({3, 4}), {p0});
  g.module().mutable_input_output_aliases()->push_back({{}, 0, {}, ""});
  EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
  Graph h;
  auto* q0 = h.Param(0, F32({2, 6}));
  h.Add(Opcode::kSlice, F32({2, 3}), {q0},
        [](InstructionAttributes* a) { a->slice = {{0, 2, 1}, {0, 3, 1}}; });
  h.module().mutable_input_output_aliases()->push_back({{}, 0, {}, ""});
  EXPECT_VERIFY_ERROR(h.module(), "byte sizes differ");
}

TEST(VerifierTest, MalformedShapesDoNotCrash) {
  {
    Graph g;
    auto* p0 = g.Param(0, F32({-3}));
    g.Add(Opcode::kNegate, F32({-3}), {p0});
    EXPECT_VERIFY_ERROR(g.module(), "negative size -3");
  }
  {
    Graph g;
    auto* p0 = g.Param(0, F32({INT64_MAX, INT64_MAX}));
    g.Add(Opcode::kNegate, F32({INT64_MAX, INT64_MAX}), {p0});
    EXPECT_VERIFY_ERROR(g.module(), "too many elements");
  }
  {
    Graph g;
    auto* p0 = g.Param(0, F32({2, 3}));
    g.Add(Opcode::kTranspose, F32({3, 2}), {p0},
          [](InstructionAttributes* a) { a->dimensions = {1, 99}; });
    EXPECT_VERIFY_ERROR(g.module(), "transpose: dimension 99 is out of range for rank 2");
  }
  {
    // A large rank is handled without trouble.
    Graph g;
    std::vector<int64_t> ones(5000, 1);
    Shape big = Shape::Array(ElementType::kF32, ones);
    auto* p0 = g.Param(0, big);
    g.Add(Opcode::kNegate, big, {p0});
    EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
  }
}

TEST(VerifierTest, WhileLoopModule) {
  Graph g;
  const Shape state = Shape::Tuple({S32({}), F32({4})});
  Computation* cond = g.Signature("cond", {state}, Arr(ElementType::kPred, {}));
  Computation* body = g.Signature("body", {state}, state, /*root_param=*/0);
  auto* i = g.Param(0, S32({}));
  auto* v = g.Param(1, F32({4}));
  auto* init = g.Add(Opcode::kTuple, state, {i, v});
  auto* loop = g.Add(Opcode::kWhile, state, {init}, nullptr, {cond, body});
  EXPECT_TRUE(VerifyModule(g.module()).ok()) << VerifyModule(g.module());
  *loop->mutable_shape() = Shape::Tuple({S32({}), F32({5})});
  loop->set_name("loop");
  EXPECT_VERIFY_ERROR(g.module(), "instruction loop: while: shape (s32[], f32[5]) differs");
}

}  // namespace
}  // namespace xjit::testing

// The same rules on modules written as HLO text (through the parser).
namespace xjit::testing {
namespace {

absl::Status VerifyText(const std::string& text) {
  auto module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return VerifyModule(**module);
}

TEST(VerifierTextTest, HloTextExampleVerifies) {
  // shared/HLO_TEXT.md section 9.
  const std::string text = R"(
HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}

%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}

ENTRY %main (p0: f32[2,3]) -> f32[3] {
  %p0 = f32[2,3]{1,0} parameter(0), metadata={op_name="x"}
  %z = f32[] constant(0)
  ROOT %r = f32[3]{0} reduce(f32[2,3]{1,0} %p0, f32[] %z), dimensions={0}, to_apply=%add
})";
  absl::Status status = VerifyText(text);
  EXPECT_TRUE(status.ok()) << status.message();
}

TEST(VerifierTextTest, ErrorsNameComputationAndInstruction) {
  const std::string text = R"(
HloModule m
ENTRY main {
  p0 = f32[2,3] parameter(0)
  p1 = f32[4,5] parameter(1)
  ROOT d = f32[2,5] dot(p0, p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}
})";
  absl::Status status = VerifyText(text);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message())
                .find("computation main, instruction d: dot: contracting dimension sizes differ: "
                      "lhs dim 1 has 3, rhs dim 0 has 4"),
            std::string::npos)
      << status.message();
}

TEST(VerifierTextTest, ConvolutionAndPadFromText) {
  const std::string text = R"(
HloModule m
ENTRY main {
  input = f32[1,7,7,3] parameter(0)
  kernel = f32[3,3,3,8] parameter(1)
  conv = f32[1,4,4,8] convolution(input, kernel), window={size=3x3 stride=2x2 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  zero = f32[] constant(0)
  ROOT padded = f32[1,9,4,8] pad(conv, zero), padding=0_0x1_1_1x0_0x0_0
})";
  absl::Status status = VerifyText(text);
  EXPECT_TRUE(status.ok()) << status.message();
  // (7 + 2 - 3) / 2 + 1 = 4, not 5.
  std::string wrong = text;
  wrong.replace(wrong.find("conv = f32[1,4,4,8]"), 19, "conv = f32[1,5,4,8]");
  status = VerifyText(wrong);
  ASSERT_FALSE(status.ok());
  EXPECT_NE(std::string(status.message()).find("instruction conv: convolution: shape f32[1,5,4,8] "
                                               "differs from the inferred shape f32[1,4,4,8]"),
            std::string::npos)
      << status.message();
}

}  // namespace
}  // namespace xjit::testing
