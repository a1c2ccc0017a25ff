// Unit tests of the HLO text parser: module structure, every attribute kind
// into its typed field, shapes and layouts, literals, and error positions.
// Expected values are written by hand from shared/HLO_TEXT.md.
#include "ir/hlo_text/parser.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/printer.h"

namespace xjit {
namespace {

std::unique_ptr<Module> MustParse(absl::string_view text) {
  auto module = ParseHloModule(text);
  EXPECT_TRUE(module.ok()) << module.status().message();
  if (!module.ok()) return nullptr;
  return std::move(*module);
}

std::string ParseError(absl::string_view text) {
  auto module = ParseHloModule(text, "m.hlo");
  EXPECT_FALSE(module.ok());
  if (module.ok()) return "";
  EXPECT_EQ(module.status().code(), absl::StatusCode::kInvalidArgument);
  return std::string(module.status().message());
}

// The instruction named `name` in the entry computation.
const Instruction* Find(const Module& module, const std::string& name) {
  for (const auto& c : module.computations()) {
    if (const Instruction* i = c->FindInstruction(name)) return i;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

// Wraps one instruction line in an entry computation with parameters.
std::string Entry(absl::string_view params, absl::string_view body) {
  return absl::StrCat("HloModule t\n\n%add (a: f32[], b: f32[]) -> f32[] {\n",
                      "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n",
                      "  ROOT %s = f32[] add(f32[] %a, f32[] %b)\n}\n\n",
                      "ENTRY %main {\n", params, body, "\n}\n");
}

TEST(HloParserTest, MinimalExampleFromTheGrammar) {
  auto module = MustParse(R"(
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
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "m");
  ASSERT_EQ(module->computations().size(), 2u);
  const Computation* entry = module->entry();
  EXPECT_EQ(entry->name(), "main");
  EXPECT_EQ(entry->root()->name(), "r");
  EXPECT_EQ(entry->parameter_count(), 1);
  const Instruction* r = entry->root();
  EXPECT_EQ(r->opcode(), Opcode::kReduce);
  EXPECT_EQ(r->attrs().dimensions, std::vector<int64_t>({0}));
  ASSERT_EQ(r->called_computations().size(), 1u);
  EXPECT_EQ(r->to_apply()->name(), "add");
  const Instruction* p0 = entry->parameter(0);
  ASSERT_EQ(p0->opaque_attributes().size(), 1u);
  EXPECT_EQ(p0->opaque_attributes()[0].name, "metadata");
  EXPECT_EQ(p0->opaque_attributes()[0].value, "{op_name=\"x\"}");
  ASSERT_TRUE(module->entry_parameter_layouts().has_value());
  EXPECT_EQ(module->entry_result_layout()->ToString(), "f32[3]{0}");
}

TEST(HloParserTest, HeaderlessModuleWithoutPercentOrSignatures) {
  auto module = MustParse(R"(
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
main {
  x = f32[4] parameter(0)
  y = f32[4] negate(x)
  z = f32[4] add(x, y)
}
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->name(), "main");  // the last computation
  EXPECT_EQ(module->entry()->root()->name(), "z");  // the last instruction
  EXPECT_EQ(module->entry()->root()->shape().layout().minor_to_major,
            std::vector<int64_t>({0}));
}

TEST(HloParserTest, OldHeaderFormAndModuleAttributes) {
  auto module = MustParse(R"(HloModule old_style:
ENTRY e { ROOT c = s32[] constant(1) })");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->name(), "old_style");

  EXPECT_FALSE(ParseHloModule(R"(
ENTRY e { p = (f32[], (f32[], s32[])) parameter(0)
  ROOT t = (f32[], s32[]) tuple(f32[] get-tuple-element(p), index=0)
})").ok()) << "nested operands cannot have attributes";
  module = MustParse(R"(HloModule m, is_scheduled=true, replica_count=4, num_partitions=2,
  input_output_alias={ {0}: (0, {}, may-alias), {1}: (1, {1}) },
  frontend_attributes={a="b"}, allow_spmd_sharding_propagation_to_output={true}
ENTRY e { p = (f32[], (f32[], s32[])) parameter(0)
  ROOT g = f32[] get-tuple-element(p), index=0
})");
  ASSERT_NE(module, nullptr);
  EXPECT_TRUE(module->is_scheduled());
  EXPECT_EQ(module->replica_count(), 4);
  EXPECT_EQ(module->num_partitions(), 2);
  ASSERT_EQ(module->input_output_aliases().size(), 2u);
  EXPECT_EQ(module->input_output_aliases()[0].kind, "may-alias");
  EXPECT_EQ(module->input_output_aliases()[1].parameter_number, 1);
  EXPECT_EQ(module->input_output_aliases()[1].parameter_index, ShapeIndex({1}));
  ASSERT_EQ(module->opaque_attributes().size(), 2u);
  EXPECT_EQ(module->opaque_attributes()[0].value, "{a=\"b\"}");
  EXPECT_EQ(module->opaque_attributes()[1].name, "allow_spmd_sharding_propagation_to_output");
}

TEST(HloParserTest, StackFramesSectionIsSkipped) {
  auto module = MustParse(R"(HloModule m, entry_computation_layout={()->f32[]}

FileNames
1 "a.py"
FunctionNames
1 "f"
FileLocations
1 {file_name_id=1 function_name_id=1 line=3 end_line=3 column=1 end_column=2}
StackFrames
1 {file_location_id=1 parent_frame_id=0}

ENTRY %e () -> f32[] {
  ROOT %c = f32[] constant(1), metadata={op_name="c" stack_frame_id=1}
}, execution_thread="main"
)");
  ASSERT_NE(module, nullptr);
  EXPECT_EQ(module->entry()->execution_thread(), "main");
  EXPECT_EQ(module->entry()->root()->opaque_attributes()[0].value,
            "{op_name=\"c\" stack_frame_id=1}");
}

TEST(HloParserTest, NestedOperandsGetFreshNames) {
  auto module = MustParse(R"(
ENTRY e {
  a = f32[2] parameter(0)
  ROOT r = f32[2] add(f32[2] multiply(a, a), negate(a))
  add.1 = f32[2] copy(a)
})");
  ASSERT_NE(module, nullptr);
  const Computation* e = module->entry();
  ASSERT_EQ(e->instruction_count(), 5);
  EXPECT_EQ(e->root()->name(), "r");
  EXPECT_EQ(e->root()->operand(0)->opcode(), Opcode::kMultiply);
  EXPECT_EQ(e->root()->operand(1)->opcode(), Opcode::kNegate);
  EXPECT_EQ(e->root()->operand(1)->shape().ToString(), "f32[2]{0}");  // inferred
  EXPECT_NE(e->root()->operand(0)->name(), e->root()->operand(1)->name());
  EXPECT_NE(e->root()->operand(0)->name(), "add.1");
}

TEST(HloParserTest, InlineComputationsComeBeforeTheCaller) {
  auto module = MustParse(R"(
ENTRY e {
  p = f32[8] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply={
    x = f32[] parameter(0)
    y = f32[] parameter(1)
    ROOT m = f32[] maximum(x, y)
  }
})");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->computations().size(), 2u);
  EXPECT_EQ(module->computations()[1].get(), module->entry());
  EXPECT_EQ(module->entry()->root()->to_apply(), module->computations()[0].get());
  EXPECT_FALSE(module->computations()[0]->name().empty());
}

TEST(HloParserTest, ShapesAndLayouts) {
  auto s = ParseShape("f32[2,3]{0,1}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layout().minor_to_major, std::vector<int64_t>({0, 1}));
  s = ParseShape("f32[2,3]");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->layout().minor_to_major, std::vector<int64_t>({1, 0}));
  s = ParseShape("(s32[], token[], (pred[4]{0}))");
  ASSERT_TRUE(s.ok());
  EXPECT_EQ(s->tuple_size(), 3);
  EXPECT_TRUE(s->tuple_shapes(1).IsToken());
  s = ParseShape("f32[<=10,?]");
  ASSERT_TRUE(s.ok());
  EXPECT_TRUE(s->is_dynamic_dimension(0));
  EXPECT_EQ(s->dimensions(0), 10);
  EXPECT_EQ(s->dimensions(1), Shape::kUnboundedSize);
  EXPECT_EQ(s->ToString(), "f32[<=10,?]{1,0}");

  s = ParseShape(
      "bf16[256,128]{1,0:D(D,C+~)T(8,128)(2,1)(*,2)L(4)#(u16)*(u32)E(16)S(1)SC(0:1,2)"
      "P(f32[4]{0})M(8)PD(256,130)PV(highest)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  const Layout& l = s->layout();
  EXPECT_EQ(l.dim_level_types, std::vector<std::string>({"D", "C+~"}));
  ASSERT_EQ(l.tiles.size(), 3u);
  EXPECT_EQ(l.tiles[0].dimensions, std::vector<int64_t>({8, 128}));
  EXPECT_EQ(l.tiles[2].dimensions, std::vector<int64_t>({Tile::kCombineDimension, 2}));
  EXPECT_EQ(l.tail_padding_alignment_in_elements, 4);
  EXPECT_EQ(l.index_type, ElementType::kU16);
  EXPECT_EQ(l.pointer_type, ElementType::kU32);
  EXPECT_EQ(l.element_size_in_bits, 16);
  EXPECT_EQ(l.memory_space, 1);
  EXPECT_EQ(l.split_configs, std::vector<std::string>({"0:1,2"}));
  EXPECT_EQ(l.physical_shape, "f32[4]{0}");
  EXPECT_EQ(l.dynamic_shape_metadata_prefix_bytes, 8);
  EXPECT_EQ(l.padded_dimensions, std::vector<int64_t>({256, 130}));
  EXPECT_EQ(l.padding_value, PaddingValue::kHighest);

  s = ParseShape("f32[]{:T(256)}");
  ASSERT_TRUE(s.ok()) << s.status().message();
  EXPECT_EQ(s->layout().tiles.size(), 1u);

  EXPECT_FALSE(ParseShape("f32[2,3]{0}").ok());   // wrong rank
  EXPECT_FALSE(ParseShape("f32[2,3]{0,0}").ok()); // not a permutation
  EXPECT_FALSE(ParseShape("f32[-1]").ok());
  EXPECT_FALSE(ParseShape("f32[2] x").ok());
}

TEST(HloParserTest, Literals) {
  auto module = MustParse(R"(
ENTRY e {
  a = f32[2,3] constant({ {1, 2, 3}, {4, 5.5, -6e1} })
  b = s8[3]{0} constant({-128, 127, 0})
  c = pred[2] constant({true, 0})
  d = c64[] constant((1.5, -2))
  e = f32[4] constant({...})
  f = bf16[2,2] constant(3)
  g = (f32[2,1], s32[]) constant(({ {1}, {2} }, 42))
  h = f32[3] constant({nan, -inf, nan(0x1)})
  i = u64[] constant(18446744073709551615)
  j = f32[0,3] constant({})
  ROOT k = f32[2]{0} constant({1 2})
})");
  ASSERT_NE(module, nullptr);
  const Literal& a = Find(*module, "a")->literal();
  EXPECT_EQ(a.GetDouble({1, 1}), 5.5);
  EXPECT_EQ(a.GetDouble({1, 2}), -60);
  EXPECT_EQ(Find(*module, "b")->literal().GetInt({0}), -128);
  EXPECT_EQ(Find(*module, "c")->literal().GetInt({1}), 0);
  EXPECT_EQ(Find(*module, "d")->literal().GetComplex({}), std::complex<double>(1.5, -2));
  EXPECT_EQ(Find(*module, "e")->literal().GetDouble({3}), 0);
  const Literal& f = Find(*module, "f")->literal();  // bare scalar: element 0 only
  EXPECT_EQ(f.GetDouble({0, 0}), 3);
  EXPECT_EQ(f.GetDouble({1, 1}), 0);
  const Literal& g = Find(*module, "g")->literal();
  EXPECT_EQ(g.element(0).GetDouble({1, 0}), 2);
  EXPECT_EQ(g.element(1).GetInt({}), 42);
  const Literal& h = Find(*module, "h")->literal();
  EXPECT_EQ(h.GetBits({0}), 0x7fc00000u);
  EXPECT_EQ(h.GetBits({1}), 0xff800000u);
  EXPECT_EQ(h.GetBits({2}), 0x7f800001u);
  EXPECT_EQ(Find(*module, "i")->literal().GetBits({}), ~uint64_t{0});
  EXPECT_EQ(Find(*module, "k")->literal().GetDouble({1}), 2);

  auto literal = ParseLiteral("s32[2]{0} {1, 2}");
  ASSERT_TRUE(literal.ok()) << literal.status().message();
  EXPECT_EQ(literal->GetInt({1}), 2);
  literal = ParseLiteral("(f32[] 1.5, (s32[2]{0} {3, 4}))");
  ASSERT_TRUE(literal.ok()) << literal.status().message();
  EXPECT_EQ(literal->element(1).element(0).GetInt({1}), 4);
  literal = ParseLiteral("(f32[], s32[]) (1.5, 2)");
  ASSERT_TRUE(literal.ok()) << literal.status().message();
  EXPECT_EQ(literal->element(1).GetInt({}), 2);

  EXPECT_FALSE(ParseLiteral("s8[] 128").ok());
  EXPECT_FALSE(ParseLiteral("u8[] -1").ok());
  EXPECT_FALSE(ParseLiteral("f32[2] {1, 2, 3}").ok());
  EXPECT_FALSE(ParseLiteral("f32[2] {1}").ok());
}

TEST(HloParserTest, WindowsDimLabelsAndConvolution) {
  auto module = MustParse(Entry(
      "  x = f32[1,5,5,2] parameter(0)\n  k = f32[3,3,2,4] parameter(1)\n",
      "  ROOT c = f32[1,3,3,8] convolution(x, k), window={size=3x3 stride=2x1 pad=1_1x0_-1 "
      "lhs_dilate=1x2 rhs_dilate=2x1 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f, "
      "feature_group_count=2, batch_group_count=1, operand_precision={high,highest}"));
  ASSERT_NE(module, nullptr);
  const Instruction* c = Find(*module, "c");
  const Window& w = c->attrs().window;
  ASSERT_EQ(w.size(), 2u);
  EXPECT_EQ(w[0].size, 3);
  EXPECT_EQ(w[0].stride, 2);
  EXPECT_EQ(w[1].stride, 1);
  EXPECT_EQ(w[0].padding_low, 1);
  EXPECT_EQ(w[1].padding_high, -1);
  EXPECT_EQ(w[1].base_dilation, 2);
  EXPECT_EQ(w[0].window_dilation, 2);
  EXPECT_TRUE(w[0].window_reversal);
  EXPECT_FALSE(w[1].window_reversal);
  const ConvolutionDimensionNumbers& d = c->attrs().convolution_dimension_numbers;
  EXPECT_EQ(d.input_batch_dimension, 0);
  EXPECT_EQ(d.input_feature_dimension, 3);
  EXPECT_EQ(d.input_spatial_dimensions, std::vector<int64_t>({1, 2}));
  EXPECT_EQ(d.kernel_input_feature_dimension, 2);
  EXPECT_EQ(d.kernel_output_feature_dimension, 3);
  EXPECT_EQ(d.kernel_spatial_dimensions, std::vector<int64_t>({0, 1}));
  EXPECT_EQ(d.output_feature_dimension, 3);
  EXPECT_EQ(c->attrs().feature_group_count, 2);
  EXPECT_EQ(c->attrs().operand_precision,
            std::vector<Precision>({Precision::kHigh, Precision::kHighest}));

  module = MustParse(Entry("  x = f32[2,3,4,5] parameter(0)\n  k = f32[4,3,1,1] parameter(1)\n",
                           "  ROOT c = f32[2,4,4,5] convolution(x, k), window={size=1x1}, "
                           "dim_labels=bf01_oi01->bf01"));
  ASSERT_NE(module, nullptr);
  const ConvolutionDimensionNumbers& d2 =
      Find(*module, "c")->attrs().convolution_dimension_numbers;
  EXPECT_EQ(d2.input_feature_dimension, 1);
  EXPECT_EQ(d2.input_spatial_dimensions, std::vector<int64_t>({2, 3}));
  EXPECT_EQ(d2.kernel_output_feature_dimension, 0);
  EXPECT_EQ(d2.kernel_input_feature_dimension, 1);
}

TEST(HloParserTest, SlicePadDotGatherScatterAttributes) {
  auto module = MustParse(R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  p = f32[4,6] parameter(0)
  z = f32[] constant(0)
  i = s32[3,1] parameter(1)
  sl = f32[2,2] slice(p), slice={[0:2], [1:6:3]}
  pd = f32[7,13] pad(p, z), padding=1_2x-1_2_2
  d = f32[4,4] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={1}, algorithm=dot_f32_f32_f32
  g = f32[3,6] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,6}, indices_are_sorted=true
  u = f32[3,6] parameter(2)
  ROOT sc = f32[4,6] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, to_apply=add
})");
  ASSERT_NE(module, nullptr);
  const auto& s = Find(*module, "sl")->attrs().slice;
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1], (SliceDimension{1, 6, 3}));
  const auto& pd = Find(*module, "pd")->attrs().padding;
  ASSERT_EQ(pd.size(), 2u);
  EXPECT_EQ(pd[0], (PaddingDimension{1, 2, 0}));
  EXPECT_EQ(pd[1], (PaddingDimension{-1, 2, 2}));
  const Instruction* d = Find(*module, "d");
  EXPECT_EQ(d->attrs().dot_dimension_numbers.rhs_contracting_dimensions,
            std::vector<int64_t>({1}));
  EXPECT_EQ(d->attrs().algorithm, "dot_f32_f32_f32");
  const Instruction* g = Find(*module, "g");
  EXPECT_EQ(g->attrs().gather_dimension_numbers.index_vector_dim, 1);
  EXPECT_EQ(g->attrs().slice_sizes, std::vector<int64_t>({1, 6}));
  EXPECT_TRUE(g->attrs().indices_are_sorted);
  const Instruction* sc = Find(*module, "sc");
  EXPECT_EQ(sc->attrs().scatter_dimension_numbers.scatter_dims_to_operand_dims,
            std::vector<int64_t>({0}));
  EXPECT_TRUE(sc->attrs().unique_indices);
  EXPECT_EQ(sc->to_apply()->name(), "add");
}

TEST(HloParserTest, CollectiveAttributesAndIotaReplicaGroups) {
  auto module = MustParse(R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ENTRY e {
  p = f32[4] parameter(0)
  r1 = f32[4] all-reduce(p), replica_groups={{0,1},{2,3}}, channel_id=3, use_global_device_ids=true, to_apply=add
  r2 = f32[4] all-reduce(p), replica_groups=[2,2]<=[4], to_apply=add
  r3 = f32[4] all-reduce(p), replica_groups=[3,2]<=[2,3]T(1,0), to_apply=add
  r4 = f32[4] all-reduce(p), replica_groups={}, to_apply=add
  ROOT cp = f32[4] collective-permute(p), source_target_pairs={{0,1},{1,0}}
})");
  ASSERT_NE(module, nullptr);
  const Instruction* r1 = Find(*module, "r1");
  EXPECT_EQ(r1->attrs().replica_groups, (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  EXPECT_EQ(r1->attrs().channel_id, 3);
  EXPECT_TRUE(r1->attrs().use_global_device_ids);
  EXPECT_EQ(Find(*module, "r2")->attrs().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}}));
  // iota(6) as [2,3] = {{0,1,2},{3,4,5}}, transposed to [3,2] = {{0,3},{1,4},{2,5}}.
  EXPECT_EQ(Find(*module, "r3")->attrs().replica_groups,
            (std::vector<std::vector<int64_t>>{{0, 3}, {1, 4}, {2, 5}}));
  EXPECT_TRUE(Find(*module, "r4")->attrs().has_replica_groups);
  EXPECT_TRUE(Find(*module, "r4")->attrs().replica_groups.empty());
  EXPECT_EQ(Find(*module, "cp")->attrs().source_target_pairs,
            (std::vector<std::pair<int64_t, int64_t>>{{0, 1}, {1, 0}}));
}

TEST(HloParserTest, MiscellaneousTypedAttributes) {
  auto module = MustParse(R"(
cmp { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT lt = pred[] compare(a, b), direction=LT, type=TOTALORDER }
cond { t = (s32[]) parameter(0)  ROOT c = pred[] constant(false) }
body { t = (s32[]) parameter(0)  g = s32[] get-tuple-element(t), index=0  ROOT c = (s32[]) tuple(g) }
)" R"(
ENTRY e {
  p = f32[4,4] parameter(0)
  io = s32[4,4] iota(), iota_dimension=1
  bc = f32[2,4,4] broadcast(p), dimensions={1,2}
  t = f32[4,4] transpose(p), dimensions={1,0}
  rs = f32[16] reshape(p), inferred_dimension=0
  so = f32[4,4] sort(p), dimensions={1}, is_stable=true, to_apply=cmp
  tk = (f32[4,2], s32[4,2]) topk(p), k=2, largest=false
  ff = c64[4,4] fft(c64[4,4] convert(p)), fft_type=IFFT, fft_length={4}
  ts = f32[4,4] triangular-solve(p, p), left_side=true, lower=true, unit_diagonal=true, transpose_a=ADJOINT
  ch = f32[4,4] cholesky(p), lower=true
  rp = f32[4,4] reduce-precision(p), exponent_bits=5, mantissa_bits=10
  bn = f32[4,4] batch-norm-inference(p, f32[4] parameter(1), f32[4] parameter(2), f32[4] parameter(3), f32[4] parameter(4)), epsilon=0.001, feature_index=1
  rn = f32[4] rng(f32[] constant(0), f32[] constant(1)), distribution=rng_normal
  rb = (u64[2], u32[4]) rng-bit-generator(u64[2] parameter(5)), algorithm=rng_philox
  w = (s32[]) while((s32[]) tuple(s32[] constant(0))), condition=cond, body=body
  cc = f32[4] custom-call(p), custom_call_target="foo\"bar", api_version=API_VERSION_TYPED_FFI, backend_config={"x": [1, {"y": 2}]}, custom_call_has_side_effect=true, operand_layout_constraints={f32[4,4]{0,1}}
  fu = f32[4,4] fusion(p), kind=kLoop, calls={ x = f32[4,4] parameter(0)  ROOT n = f32[4,4] negate(x) }, output_to_operand_aliasing={{}: (0, {})}
  ROOT r = f32[4,4] copy(p), control-predecessors={fu, cc}, sharding={devices=[2,1]0,1}
})");
  ASSERT_NE(module, nullptr);
  const Instruction* lt = Find(*module, "lt");
  EXPECT_EQ(lt->attrs().comparison_direction, ComparisonDirection::kLt);
  EXPECT_EQ(lt->attrs().comparison_type, ComparisonType::kTotalOrder);
  EXPECT_EQ(Find(*module, "io")->attrs().iota_dimension, 1);
  EXPECT_EQ(Find(*module, "bc")->attrs().dimensions, std::vector<int64_t>({1, 2}));
  EXPECT_EQ(Find(*module, "rs")->attrs().inferred_dimension, 0);
  EXPECT_TRUE(Find(*module, "so")->attrs().is_stable);
  EXPECT_EQ(Find(*module, "tk")->attrs().k, 2);
  EXPECT_FALSE(Find(*module, "tk")->attrs().largest);
  EXPECT_EQ(Find(*module, "ff")->attrs().fft_type, FftType::kIfft);
  const Instruction* ts = Find(*module, "ts");
  EXPECT_TRUE(ts->attrs().left_side && ts->attrs().lower && ts->attrs().unit_diagonal);
  EXPECT_EQ(ts->attrs().transpose_a, TriangularSolveTranspose::kAdjoint);
  EXPECT_TRUE(Find(*module, "ch")->attrs().lower);
  EXPECT_EQ(Find(*module, "rp")->attrs().mantissa_bits, 10);
  EXPECT_EQ(Find(*module, "bn")->attrs().epsilon, 0.001);
  EXPECT_EQ(Find(*module, "bn")->attrs().feature_index, 1);
  EXPECT_EQ(Find(*module, "rn")->attrs().distribution, RandomDistribution::kNormal);
  EXPECT_EQ(Find(*module, "rb")->attrs().rng_algorithm, RandomAlgorithm::kPhilox);
  const Instruction* w = Find(*module, "w");
  EXPECT_EQ(w->while_condition()->name(), "cond");
  EXPECT_EQ(w->while_body()->name(), "body");
  const Instruction* cc = Find(*module, "cc");
  EXPECT_EQ(cc->attrs().custom_call_target, "foo\"bar");
  EXPECT_EQ(cc->attrs().api_version, "API_VERSION_TYPED_FFI");
  EXPECT_EQ(cc->attrs().backend_config, "{\"x\": [1, {\"y\": 2}]}");
  EXPECT_TRUE(cc->attrs().custom_call_has_side_effect);
  ASSERT_EQ(cc->attrs().operand_layout_constraints.size(), 1u);
  EXPECT_EQ(cc->attrs().operand_layout_constraints[0].ToString(), "f32[4,4]{0,1}");
  const Instruction* fu = Find(*module, "fu");
  EXPECT_EQ(fu->attrs().fusion_kind, FusionKind::kLoop);
  ASSERT_EQ(fu->called_computations().size(), 1u);
  ASSERT_EQ(fu->attrs().output_to_operand_aliasing.size(), 1u);
  const Instruction* r = Find(*module, "r");
  ASSERT_EQ(r->control_predecessors().size(), 2u);
  EXPECT_EQ(r->control_predecessors()[0], fu);
  ASSERT_EQ(r->opaque_attributes().size(), 1u);
  EXPECT_EQ(r->opaque_attributes()[0].value, "{devices=[2,1]0,1}");
}

TEST(HloParserTest, MoreTypedAttributes) {
  auto module = MustParse(R"(
add { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = f32[] add(a, b) }
ge { a = f32[] parameter(0)  b = f32[] parameter(1)  ROOT s = pred[] compare(a, b), direction=GE }
ENTRY e {
  p = f32[4,4] parameter(0)
  z = f32[] constant(0)
  sas = f32[4,4] select-and-scatter(p, f32[2,2] parameter(1), z), window={size=2x2 stride=2x2}, select=ge, scatter=add
  rw = f32[3,3] reduce-window(p, z), window={size=2x2}, to_apply=add
  mp = f32[4,4] map(p, p), dimensions={0,1}, to_apply=add
  cl = f32[] call(z, z), to_apply=add, is_composite=true
  tok = token[] after-all()
  inf = ((f32[2], s32[]), token[]) infeed(tok), infeed_config="cfg"
  out = token[] outfeed(p, tok), outfeed_shape=f32[4,4]{1,0}, outfeed_config="o"
  snd = (f32[4,4], u32[], token[]) send(p, tok), channel_id=5, is_host_transfer=true
  sd = token[] send-done(snd), channel_id=5, is_host_transfer=true
  st = u64[] rng-get-and-update-state(), delta=7
  ag = f32[8,4] all-gather(p), replica_groups={{0,1}}, dimensions={0}, constrain_layout=true
  gd = s32[] get-dimension-size(p), dimensions={1}
  cv = f32[4,4] custom-call(p, p), custom_call_target="conv", window={size=1x1}, dim_labels=bf_io->bf, feature_group_count=2, called_computations={add, ge}, output_to_operand_aliasing={{}: (0, {})}
  as = ((f32[]), f32[], s32[]) async-start(z), calls=add, async_execution_thread="t"
  ROOT ad = f32[] async-done(as)
})");
  ASSERT_NE(module, nullptr);
  const Instruction* sas = Find(*module, "sas");
  EXPECT_EQ(sas->attrs().window[1].stride, 2);
  ASSERT_EQ(sas->called_computations().size(), 2u);
  EXPECT_EQ(sas->called_computations()[0]->name(), "ge");
  EXPECT_EQ(sas->called_computations()[1]->name(), "add");
  EXPECT_EQ(Find(*module, "rw")->attrs().window.size(), 2u);
  EXPECT_EQ(Find(*module, "mp")->to_apply()->name(), "add");
  EXPECT_TRUE(Find(*module, "cl")->attrs().is_composite);
  EXPECT_EQ(Find(*module, "inf")->attrs().infeed_config, "cfg");
  const Instruction* out = Find(*module, "out");
  EXPECT_EQ(out->attrs().outfeed_config, "o");
  ASSERT_TRUE(out->attrs().outfeed_shape.has_value());
  EXPECT_EQ(out->attrs().outfeed_shape->ToString(), "f32[4,4]{1,0}");
  EXPECT_EQ(Find(*module, "snd")->attrs().channel_id, 5);
  EXPECT_TRUE(Find(*module, "sd")->attrs().is_host_transfer);
  EXPECT_EQ(Find(*module, "st")->attrs().delta, 7);
  const Instruction* ag = Find(*module, "ag");
  EXPECT_EQ(ag->attrs().dimensions, std::vector<int64_t>({0}));
  EXPECT_TRUE(ag->attrs().constrain_layout);
  EXPECT_EQ(Find(*module, "gd")->attrs().dimensions, std::vector<int64_t>({1}));
  const Instruction* cv = Find(*module, "cv");
  EXPECT_TRUE(cv->attrs().has_window);
  EXPECT_EQ(cv->attrs().convolution_dimension_numbers.kernel_input_feature_dimension, 0);
  EXPECT_EQ(cv->attrs().feature_group_count, 2);
  EXPECT_EQ(cv->called_computations().size(), 2u);
  EXPECT_EQ(cv->attrs().output_to_operand_aliasing[0].operand_number, 0);
  const Instruction* as = Find(*module, "as");
  EXPECT_EQ(as->called_computations()[0]->name(), "add");
  EXPECT_EQ(as->opaque_attributes()[0].name, "async_execution_thread");
  EXPECT_EQ(Find(*module, "ad")->called_computations()[0]->name(), "add");
  // And it prints to a fixed point.
  std::string printed = PrintModule(*module);
  auto again = ParseHloModule(printed);
  ASSERT_TRUE(again.ok()) << again.status().message() << "\n" << printed;
  EXPECT_EQ(PrintModule(**again), printed);
}

TEST(HloParserTest, ConditionalForms) {
  auto module = MustParse(R"(
a { x = f32[] parameter(0)  ROOT n = f32[] negate(x) }
b { x = f32[] parameter(0)  ROOT n = f32[] abs(x) }
ENTRY e {
  p = pred[] parameter(0)
  i = s32[] parameter(1)
  x = f32[] parameter(2)
  c1 = f32[] conditional(p, x, x), true_computation=a, false_computation=b
  ROOT c2 = f32[] conditional(i, x, x), branch_computations={a, b}
})");
  ASSERT_NE(module, nullptr);
  const Instruction* c1 = Find(*module, "c1");
  ASSERT_EQ(c1->called_computations().size(), 2u);
  EXPECT_EQ(c1->called_computations()[0]->name(), "a");
  EXPECT_EQ(Find(*module, "c2")->called_computations()[1]->name(), "b");
}

TEST(HloParserTest, ErrorsCarryLineAndColumn) {
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] foo(a)\n}"),
            "m.hlo:3:13: error: unknown opcode 'foo'");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] negate(%c)\n}"),
            "m.hlo:3:20: error: use of undefined value '%c'");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  a = f32[] negate(a)\n}"),
            "m.hlo:3:3: error: duplicate instruction name '%a'");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  b = f32[] add(a, a, a)\n}"),
            "m.hlo:3:13: error: wrong number of operands for add: expected 2, got 3");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n  ROOT b = f32[] call(a), "
                       "to_apply=nope\n}"),
            "m.hlo:3:36: error: unknown computation '%nope'");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[2 parameter(0)\n}"),
            "m.hlo:2:13: error: expected ',' or ']', found 'parameter'");
  EXPECT_EQ(ParseError("ENTRY e {\n  a = f32[] parameter(0)\n"),
            "m.hlo:3:1: error: expected instruction or '}', found end of file");
  EXPECT_EQ(ParseError("HloModule m\nENTRY e {\n  a f32[] parameter(0)\n}"),
            "m.hlo:3:5: error: expected '=' after the instruction name, found 'f32'");
  EXPECT_EQ(ParseError("ENTRY e {\n  c = s8[] constant(300)\n}"),
            "m.hlo:2:21: error: value 300 is out of range for s8");
  EXPECT_EQ(ParseError("ENTRY e {\n  c = f32[] constant(1), sharding={maximal device=0\n"),
            "m.hlo:3:1: error: expected closing bracket, found end of file");
  // StableHLO (jax's .as_text() default) gets a hint, not "expected '{', found '@'".
  const std::string mlir_hint =
      "error: this is MLIR (StableHLO) text, not HLO text: xjit reads HLO text, as XLA dumps it "
      "(--xla_dump_to) or as JAX writes it with jax.jit(f).lower(...).as_text(dialect=\"hlo\")";
  EXPECT_EQ(ParseError("module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n}\n"),
            "m.hlo:1:1: " + mlir_hint);
  EXPECT_EQ(ParseError("\nfunc.func @main() {\n}\n"), "m.hlo:2:1: " + mlir_hint);
  // A computation may still be called "module".
  EXPECT_TRUE(ParseHloModule("module {\n  ROOT c = f32[] constant(1)\n}\n", "m.hlo").ok());
}

// HLO_TEXT.md §1/§3: a computation name may be written with or without '%',
// with or without a signature, for the entry and for other computations.
TEST(HloParserTest, ComputationHeadersWithAndWithoutPercentOrSignature) {
  for (bool header : {false, true}) {
    for (bool percent : {false, true}) {
      for (bool signature : {false, true}) {
        const std::string p = percent ? "%" : "";
        const std::string text = absl::StrCat(
            header ? "HloModule m\n\n" : "",
            p, "max_f32", signature ? " (a: f32[], b: f32[]) -> f32[]" : "", " {\n",
            "  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n",
            "  ROOT m = f32[] maximum(a, b)\n}\n\n",
            "ENTRY ", p, "main", signature ? " (x: f32[4]) -> f32[]" : "", " {\n",
            "  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n",
            "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=", p, "max_f32\n}\n\n",
            // A non-entry computation after the entry.
            p, "min_f32", signature ? " (c: f32[], d: f32[]) -> f32[]" : "", "{\n",
            "  c = f32[] parameter(0)\n  d = f32[] parameter(1)\n",
            "  ROOT n = f32[] minimum(c, d)\n}\n");
        SCOPED_TRACE(text);
        auto module = MustParse(text);
        ASSERT_NE(module, nullptr);
        ASSERT_EQ(module->computations().size(), 3u);
        EXPECT_EQ(module->computations()[0]->name(), "max_f32");
        EXPECT_EQ(module->computations()[2]->name(), "min_f32");
        EXPECT_EQ(module->entry()->name(), "main");
        EXPECT_EQ(module->entry()->root()->to_apply()->name(), "max_f32");
        EXPECT_EQ(module->computations()[2]->root()->opcode(), Opcode::kMinimum);
      }
    }
  }
  // The headers that were reported as rejected, verbatim.
  ASSERT_NE(MustParse("max_f32 {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"),
            nullptr);
  ASSERT_NE(MustParse("max_f32 (a: f32[]) -> f32[] {\n  a = f32[] parameter(0)\n"
                      "  ROOT n = f32[] negate(a)\n}\n"),
            nullptr);
  // A header with no name at all is still an error, at the '{'.
  EXPECT_EQ(ParseError("ENTRY {\n  a = f32[] parameter(0)\n}"),
            "m.hlo:1:7: error: expected computation name, found '{'");
}

// A list that is neither continued nor closed names both possibilities.
TEST(HloParserTest, UnfinishedListsExpectCommaOrClose) {
  EXPECT_EQ(ParseError("ENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] add(x, x\n}"),
            "m.hlo:4:1: error: expected ',' or ')', found '}'");
  EXPECT_EQ(ParseError("ENTRY e {\n  x = f32[2,3] parameter(0)\n"
                       "  ROOT y = f32[3,2] transpose(x), dimensions={1 0}\n}"),
            "m.hlo:3:49: error: expected ',' or '}', found '0'");
  EXPECT_EQ(ParseError("ENTRY e (x: f32[] y: f32[]) -> f32[] {\n  ROOT x = f32[] parameter(0)\n}"),
            "m.hlo:1:19: error: expected ',' or ')', found 'y:'");
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT x = (f32[] s32[]) parameter(0)\n}"),
            "m.hlo:2:19: error: expected ',' or ')', found 's32'");
  // A name not followed by '=' is reported at the token after the name.
  EXPECT_EQ(ParseError("ENTRY e {\n  %x f32[2] parameter(0)\n}"),
            "m.hlo:2:6: error: expected '=' after the instruction name, found 'f32'");
  EXPECT_EQ(ParseError("ENTRY e {\n  ROOT x\n}"),
            "m.hlo:3:1: error: expected '=' after the instruction name, found '}'");
}

// HLO_TEXT.md §4: an instruction without one of its required attributes is
// rejected by the parser, at the opcode, naming the attribute.
TEST(HloParserTest, MissingRequiredAttributesAreParseErrors) {
  const std::string computations =
      "HloModule t\n\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT s = pred[] compare(a, b), direction=LT\n}\n"
      "neg {\n  a = f32[] parameter(0)\n  ROOT n = f32[] negate(a)\n}\n"
      "cond {\n  a = f32[] parameter(0)\n  ROOT c = pred[] constant(false)\n}\n";
  struct Case {
    std::string params;
    std::string root;  // the ROOT instruction after "r = "
    std::string opcode;
    std::string attribute;
  };
  const std::string x2 = "  x = f32[2] parameter(0)\n";
  const std::string v4 = "  v = f32[4] parameter(0)\n  z = f32[] constant(0)\n";
  const std::string gather_params = "  o = f32[3,3] parameter(0)\n  i = s32[2] parameter(1)\n";
  const std::string scatter_params =
      "  o = f32[3] parameter(0)\n  i = s32[1] parameter(1)\n  u = f32[1] parameter(2)\n";
  const std::string conv_params =
      "  i = f32[1,1,4,4] parameter(0)\n  k = f32[1,1,3,3] parameter(1)\n";
  const std::vector<Case> cases = {
      {gather_params,
       "f32[2,3] gather(o, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1",
       "gather", "slice_sizes"},
      {gather_params,
       "f32[2,3] gather(o, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
       "slice_sizes={1,3}",
       "gather", "index_vector_dim"},
      {gather_params,
       "f32[2,3] gather(o, i), collapsed_slice_dims={0}, start_index_map={0}, "
       "index_vector_dim=1, slice_sizes={1,3}",
       "gather", "offset_dims"},
      {scatter_params,
       "f32[3] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1",
       "scatter", "to_apply"},
      {scatter_params,
       "f32[3] scatter(o, i, u), inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, "
       "index_vector_dim=1, to_apply=add",
       "scatter", "update_window_dims"},
      {x2, "pred[2] compare(x, x)", "compare", "direction"},
      {conv_params, "f32[1,1,2,2] convolution(i, k), window={size=3x3}", "convolution",
       "dim_labels"},
      {"  t = (f32[], f32[]) parameter(0)\n", "f32[] get-tuple-element(t)", "get-tuple-element",
       "index"},
      {"", "s32[4] iota()", "iota", "iota_dimension"},
      {"  y = f32[] parameter(0)\n", "f32[] fusion(y, y), calls=add", "fusion", "kind"},
      {"  y = f32[] parameter(0)\n", "f32[] fusion(y, y), kind=kLoop", "fusion", "calls"},
      {x2, "f32[2] custom-call(x)", "custom-call", "custom_call_target"},
      {v4, "f32[] reduce(v, z), dimensions={0}", "reduce", "to_apply"},
      {v4, "f32[] reduce(v, z), to_apply=add", "reduce", "dimensions"},
      {v4, "f32[4] map(v, v), dimensions={0}", "map", "to_apply"},
      {v4, "f32[4] sort(v), dimensions={0}", "sort", "to_apply"},
      {"  y = f32[] parameter(0)\n", "f32[] while(y), body=neg", "while", "condition"},
      {"  y = f32[] parameter(0)\n", "f32[] while(y), condition=cond", "while", "body"},
      {x2, "f32[2] transpose(x)", "transpose", "dimensions"},
      {x2, "f32[1] slice(x)", "slice", "slice"},
      {v4, "f32[6] pad(v, z)", "pad", "padding"},
      {x2, "f32[2] call(x)", "call", "to_apply"},
  };
  for (const Case& c : cases) {
    const std::string head = absl::StrCat(computations, "ENTRY main {\n", c.params);
    const std::string root_prefix = "  ROOT r = ";
    const std::string text = absl::StrCat(head, root_prefix, c.root, "\n}\n");
    // Line and column of the opcode, counted by hand from the text built here.
    const int line = 1 + static_cast<int>(std::count(head.begin(), head.end(), '\n'));
    const size_t column = root_prefix.size() + c.root.find(c.opcode + "(") + 1;
    SCOPED_TRACE(text);
    EXPECT_EQ(ParseError(text), absl::StrCat("m.hlo:", line, ":", column,
                                             ": error: missing required attribute '",
                                             c.attribute, "' for ", c.opcode));
  }
}

TEST(HloParserTest, GenericAsyncForms) {
  auto module = MustParse(R"(
ENTRY e {
  a = f32[2] parameter(0)
  s = ((f32[2], f32[2]), f32[2], s32[]) add-start(a, a), metadata={op_name="x"}
  u = ((f32[2], f32[2]), f32[2], s32[]) add-update(s)
  ROOT d = f32[2] add-done(u)
})");
  ASSERT_NE(module, nullptr);
  ASSERT_EQ(module->computations().size(), 2u);
  const Instruction* s = Find(*module, "s");
  EXPECT_EQ(s->opcode(), Opcode::kAsyncStart);
  EXPECT_EQ(s->operand_count(), 2);
  ASSERT_EQ(s->called_computations().size(), 1u);
  const Computation* wrapped = s->called_computations()[0];
  EXPECT_EQ(wrapped, module->computations()[0].get());
  EXPECT_EQ(wrapped->root()->opcode(), Opcode::kAdd);
  EXPECT_EQ(wrapped->root()->shape().ToString(), "f32[2]{0}");
  EXPECT_EQ(wrapped->root()->opaque_attributes().size(), 1u);
  EXPECT_EQ(wrapped->parameter_count(), 2);
  EXPECT_EQ(Find(*module, "u")->opcode(), Opcode::kAsyncUpdate);
  EXPECT_EQ(Find(*module, "d")->opcode(), Opcode::kAsyncDone);
  EXPECT_EQ(Find(*module, "d")->called_computations()[0], wrapped);
  // Without the async tuple shape the form is refused clearly.
  std::string error = ParseError(
      "ENTRY e {\n  a = f32[] parameter(0)\n  s = f32[] add-start(a, a)\n}");
  EXPECT_NE(error.find("m.hlo:3:13: error: unsupported"), std::string::npos) << error;
}

// Truncations and byte mutations of a valid module must fail cleanly or
// parse; never crash.
TEST(HloParserTest, FuzzedInputsNeverCrash) {
  const std::string base = R"(HloModule m, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}
%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %s = f32[] add(f32[] %a, f32[] %b)
}
ENTRY %main (p0: f32[2,3]) -> f32[3] {
  %p0 = f32[2,3]{1,0:T(2,128)} parameter(0), metadata={op_name="x"}
  %z = f32[] constant(0)
  %c = (f32[2], s32[]) constant(({1, nan(0x3)}, -1))
  %w = f32[1,1,2,3] reshape(%p0)
  %k = f32[1,1,3,3] broadcast(%z), dimensions={}
  %cv = f32[1,1,2,3] convolution(%w, %k), window={size=1x1 pad=0_0x1_1}, dim_labels=b01f_01io->b01f
  ROOT %r = f32[3]{0} reduce(f32[2,3]{1,0} %p0, f32[] %z), dimensions={0}, to_apply=%add
}
)";
  ASSERT_TRUE(ParseHloModule(base).ok()) << ParseHloModule(base).status().message();
  for (size_t n = 0; n < base.size(); ++n) {
    (void)ParseHloModule(base.substr(0, n));
  }
  std::mt19937 rng(1234);
  const std::string alphabet = "{}()[],:=%<>-_x.0123456789abfio?*#+~\"/ \nTSE";
  for (int iteration = 0; iteration < 3000; ++iteration) {
    std::string text = base;
    int edits = 1 + rng() % 4;
    for (int e = 0; e < edits; ++e) {
      size_t at = rng() % text.size();
      switch (rng() % 3) {
        case 0: text[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: text.erase(at, 1 + rng() % 5); break;
        default: text.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
      }
    }
    auto module = ParseHloModule(text);
    if (module.ok()) (void)PrintModule(**module);
  }
  // Deep nesting is rejected, not a stack overflow.
  std::string deep = "ENTRY e { ROOT c = " + std::string(100000, '(') + "f32[]" +
                     std::string(100000, ')') + " parameter(0) }";
  EXPECT_FALSE(ParseHloModule(deep).ok());
}

}  // namespace
}  // namespace xjit
