// The structural key (ir/structural_key.h): equal for structurally identical
// modules (the same text parsed twice, a module and its clone), different
// whenever any part of the module differs: every attribute field, the shape,
// layout, literal, operands and their order, names, called computations and
// the module's own fields. The compile cache serves a hit on an equal key,
// so a field the key missed would return another module's executable.
#include "ir/structural_key.h"

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "ir/computation.h"
#include "ir/hlo_text/parser.h"
#include "ir/instruction.h"
#include "ir/module.h"

namespace xjit {
namespace {

const char kModule[] = R"(HloModule m

add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}

ENTRY e {
  p0 = f32[4,8]{1,0} parameter(0)
  p1 = f32[4,8]{1,0} parameter(1)
  c = f32[] constant(1.5)
  b = f32[4,8]{1,0} broadcast(c), dimensions={}
  a = f32[4,8]{1,0} add(p0, b)
  m = f32[4,8]{1,0} multiply(a, p1)
  ROOT r = f32[4]{0} reduce(m, c), dimensions={1}, to_apply=add
}
)";

std::unique_ptr<Module> Parse() {
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(kModule);
  EXPECT_TRUE(module.ok()) << module.status();
  return module.ok() ? *std::move(module) : nullptr;
}

std::string Key(const Module& module) {
  std::string key;
  AppendStructuralKey(module, &key);
  return key;
}

Instruction* Find(const Module& module, const std::string& name) {
  for (const auto& computation : module.computations()) {
    if (Instruction* instruction = computation->FindInstruction(name)) return instruction;
  }
  ADD_FAILURE() << "no instruction " << name;
  return nullptr;
}

TEST(StructuralKeyTest, EqualForTheSameModule) {
  std::unique_ptr<Module> a = Parse();
  std::unique_ptr<Module> b = Parse();
  ASSERT_NE(a, nullptr);
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(Key(*a), Key(*b));
  EXPECT_EQ(Key(*a), Key(*a->Clone()));
  // Attributes allocated but left at their defaults are no attributes.
  Find(*b, "a")->mutable_attrs();
  EXPECT_EQ(Key(*a), Key(*b));
}

// Changes one thing in the parsed module; the key must change.
struct Change {
  std::string what;
  std::function<void(Module*)> apply;
};

void ExpectEveryChangeDiffers(const std::vector<Change>& changes) {
  std::unique_ptr<Module> base = Parse();
  ASSERT_NE(base, nullptr);
  const std::string base_key = Key(*base);
  for (const Change& change : changes) {
    std::unique_ptr<Module> module = Parse();
    change.apply(module.get());
    EXPECT_NE(Key(*module), base_key) << change.what;
  }
}

TEST(StructuralKeyTest, EveryAttributeFieldCounts) {
  // Each field of InstructionAttributes set to a value other than the
  // parsed one, on the broadcast `b` (attributes present).
  std::vector<Change> changes;
  auto attr = [&](std::string what, std::function<void(InstructionAttributes*)> set) {
    changes.push_back({what, [set](Module* m) { set(Find(*m, "b")->mutable_attrs()); }});
  };
  attr("parameter_number", [](auto* a) { a->parameter_number = 7; });
  attr("tuple_index", [](auto* a) { a->tuple_index = 7; });
  attr("iota_dimension", [](auto* a) { a->iota_dimension = 7; });
  attr("dimensions", [](auto* a) { a->dimensions = {0}; });
  attr("has_dimensions", [](auto* a) { a->has_dimensions = !a->has_dimensions; });
  attr("inferred_dimension", [](auto* a) { a->inferred_dimension = 1; });
  attr("slice", [](auto* a) { a->slice = {SliceDimension{0, 1, 1}}; });
  attr("padding", [](auto* a) { a->padding = {PaddingDimension{1, 0, 0}}; });
  attr("window", [](auto* a) { a->window = {WindowDimension{}}; });
  attr("window.size", [](auto* a) { a->window = {WindowDimension{.size = 3}}; });
  attr("window.reversal", [](auto* a) { a->window = {WindowDimension{.window_reversal = true}}; });
  attr("has_window", [](auto* a) { a->has_window = true; });
  attr("conv.input_batch", [](auto* a) { a->convolution_dimension_numbers.input_batch_dimension = 5; });
  attr("conv.input_feature", [](auto* a) { a->convolution_dimension_numbers.input_feature_dimension = 5; });
  attr("conv.input_spatial", [](auto* a) { a->convolution_dimension_numbers.input_spatial_dimensions = {2}; });
  attr("conv.kernel_input", [](auto* a) { a->convolution_dimension_numbers.kernel_input_feature_dimension = 5; });
  attr("conv.kernel_output", [](auto* a) { a->convolution_dimension_numbers.kernel_output_feature_dimension = 5; });
  attr("conv.kernel_spatial", [](auto* a) { a->convolution_dimension_numbers.kernel_spatial_dimensions = {2}; });
  attr("conv.output_batch", [](auto* a) { a->convolution_dimension_numbers.output_batch_dimension = 5; });
  attr("conv.output_feature", [](auto* a) { a->convolution_dimension_numbers.output_feature_dimension = 5; });
  attr("conv.output_spatial", [](auto* a) { a->convolution_dimension_numbers.output_spatial_dimensions = {2}; });
  attr("feature_group_count", [](auto* a) { a->feature_group_count = 2; });
  attr("batch_group_count", [](auto* a) { a->batch_group_count = 2; });
  attr("dot.lhs_batch", [](auto* a) { a->dot_dimension_numbers.lhs_batch_dimensions = {0}; });
  attr("dot.rhs_batch", [](auto* a) { a->dot_dimension_numbers.rhs_batch_dimensions = {0}; });
  attr("dot.lhs_contracting", [](auto* a) { a->dot_dimension_numbers.lhs_contracting_dimensions = {0}; });
  attr("dot.rhs_contracting", [](auto* a) { a->dot_dimension_numbers.rhs_contracting_dimensions = {0}; });
  attr("operand_precision", [](auto* a) { a->operand_precision = {Precision::kHigh}; });
  attr("algorithm", [](auto* a) { a->algorithm = "dot_bf16_bf16_f32"; });
  attr("gather.offset_dims", [](auto* a) { a->gather_dimension_numbers.offset_dims = {1}; });
  attr("gather.collapsed", [](auto* a) { a->gather_dimension_numbers.collapsed_slice_dims = {1}; });
  attr("gather.start_index_map", [](auto* a) { a->gather_dimension_numbers.start_index_map = {1}; });
  attr("gather.index_vector_dim", [](auto* a) { a->gather_dimension_numbers.index_vector_dim = 3; });
  attr("gather.operand_batching", [](auto* a) { a->gather_dimension_numbers.operand_batching_dims = {1}; });
  attr("gather.indices_batching", [](auto* a) { a->gather_dimension_numbers.start_indices_batching_dims = {1}; });
  attr("slice_sizes", [](auto* a) { a->slice_sizes = {1}; });
  attr("scatter.update_window", [](auto* a) { a->scatter_dimension_numbers.update_window_dims = {1}; });
  attr("scatter.inserted", [](auto* a) { a->scatter_dimension_numbers.inserted_window_dims = {1}; });
  attr("scatter.to_operand", [](auto* a) { a->scatter_dimension_numbers.scatter_dims_to_operand_dims = {1}; });
  attr("scatter.index_vector_dim", [](auto* a) { a->scatter_dimension_numbers.index_vector_dim = 3; });
  attr("scatter.input_batching", [](auto* a) { a->scatter_dimension_numbers.input_batching_dims = {1}; });
  attr("scatter.indices_batching", [](auto* a) { a->scatter_dimension_numbers.scatter_indices_batching_dims = {1}; });
  attr("indices_are_sorted", [](auto* a) { a->indices_are_sorted = true; });
  attr("unique_indices", [](auto* a) { a->unique_indices = true; });
  attr("comparison_direction", [](auto* a) { a->comparison_direction = ComparisonDirection::kLt; });
  attr("comparison_type", [](auto* a) { a->comparison_type = ComparisonType::kTotalOrder; });
  attr("is_stable", [](auto* a) { a->is_stable = true; });
  attr("k", [](auto* a) { a->k = 3; });
  attr("largest", [](auto* a) { a->largest = false; });
  attr("fft_type", [](auto* a) { a->fft_type = FftType::kIrfft; });
  attr("fft_length", [](auto* a) { a->fft_length = {8}; });
  attr("left_side", [](auto* a) { a->left_side = true; });
  attr("lower", [](auto* a) { a->lower = true; });
  attr("unit_diagonal", [](auto* a) { a->unit_diagonal = true; });
  attr("transpose_a", [](auto* a) { a->transpose_a = TriangularSolveTranspose::kAdjoint; });
  attr("epsilon", [](auto* a) { a->epsilon = 1e-5; });
  attr("feature_index", [](auto* a) { a->feature_index = 1; });
  attr("exponent_bits", [](auto* a) { a->exponent_bits = 5; });
  attr("mantissa_bits", [](auto* a) { a->mantissa_bits = 10; });
  attr("distribution", [](auto* a) { a->distribution = RandomDistribution::kNormal; });
  attr("rng_algorithm", [](auto* a) { a->rng_algorithm = RandomAlgorithm::kPhilox; });
  attr("delta", [](auto* a) { a->delta = 4; });
  attr("fusion_kind", [](auto* a) { a->fusion_kind = FusionKind::kInput; });
  attr("custom_call_target", [](auto* a) { a->custom_call_target = "f"; });
  attr("api_version", [](auto* a) { a->api_version = "API_VERSION_TYPED_FFI"; });
  attr("custom_call_has_side_effect", [](auto* a) { a->custom_call_has_side_effect = true; });
  attr("backend_config", [](auto* a) { a->backend_config = "{}"; });
  attr("operand_layout_constraints", [](auto* a) {
    a->operand_layout_constraints = {Shape::Scalar(ElementType::kF32)};
  });
  attr("has_operand_layout_constraints", [](auto* a) { a->has_operand_layout_constraints = true; });
  attr("output_to_operand_aliasing", [](auto* a) {
    a->output_to_operand_aliasing = {OutputOperandAlias{{}, 1, {}}};
  });
  attr("channel_id", [](auto* a) { a->channel_id = 2; });
  attr("is_host_transfer", [](auto* a) { a->is_host_transfer = true; });
  attr("replica_groups", [](auto* a) { a->replica_groups = {{0, 1}}; });
  attr("has_replica_groups", [](auto* a) { a->has_replica_groups = true; });
  attr("use_global_device_ids", [](auto* a) { a->use_global_device_ids = true; });
  attr("constrain_layout", [](auto* a) { a->constrain_layout = true; });
  attr("source_target_pairs", [](auto* a) { a->source_target_pairs = {{0, 1}}; });
  attr("infeed_config", [](auto* a) { a->infeed_config = "x"; });
  attr("outfeed_config", [](auto* a) { a->outfeed_config = "x"; });
  attr("outfeed_shape", [](auto* a) { a->outfeed_shape = Shape::Scalar(ElementType::kF32); });
  attr("is_composite", [](auto* a) { a->is_composite = true; });
  // An instruction without attributes that gets some.
  changes.push_back({"attributes on add",
                     [](Module* m) { Find(*m, "a")->mutable_attrs()->dimensions = {1}; }});
  ExpectEveryChangeDiffers(changes);
}

TEST(StructuralKeyTest, EveryPartOfTheModuleCounts) {
  std::vector<Change> changes = {
      {"name", [](Module* m) { Find(*m, "a")->set_name("a2"); }},
      {"element type",
       [](Module* m) { Find(*m, "a")->mutable_shape()->set_element_type(ElementType::kF64); }},
      {"dimension", [](Module* m) { Find(*m, "a")->mutable_shape()->set_dimensions(0, 5); }},
      {"dynamic", [](Module* m) { Find(*m, "a")->mutable_shape()->set_dynamic_dimension(0, true); }},
      {"layout", [](Module* m) { Find(*m, "a")->mutable_shape()->mutable_layout()->minor_to_major = {0, 1}; }},
      {"tiles", [](Module* m) { Find(*m, "a")->mutable_shape()->mutable_layout()->tiles = {Tile{{8}}}; }},
      {"memory space", [](Module* m) { Find(*m, "a")->mutable_shape()->mutable_layout()->memory_space = 1; }},
      {"element size", [](Module* m) { Find(*m, "a")->mutable_shape()->mutable_layout()->element_size_in_bits = 4; }},
      {"no layout", [](Module* m) { Find(*m, "a")->mutable_shape()->clear_layout(); }},
      {"operand order",
       [](Module* m) {
         Instruction* a = Find(*m, "a");
         Instruction* p0 = a->operand(0);
         Instruction* b = a->operand(1);
         a->ReplaceOperand(0, b);
         a->ReplaceOperand(1, p0);
       }},
      {"operand", [](Module* m) { Find(*m, "m")->ReplaceOperand(1, Find(*m, "p0")); }},
      {"operand from another computation",
       [](Module* m) { Find(*m, "m")->ReplaceOperand(1, Find(*m, "x")); }},
      {"control predecessor", [](Module* m) { Find(*m, "m")->AddControlPredecessor(Find(*m, "b")); }},
      {"called computation", [](Module* m) { Find(*m, "r")->set_called_computations({}); }},
      {"literal",
       [](Module* m) {
         Instruction* c = Find(*m, "c");
         Literal value(c->shape());
         value.SetDouble({}, 2.5);
         c->set_literal(std::move(value));
       }},
      {"opaque attribute",
       [](Module* m) { Find(*m, "a")->mutable_opaque_attributes()->push_back({"metadata", "{}"}); }},
      {"opaque value",
       [](Module* m) {
         Find(*m, "a")->mutable_opaque_attributes()->push_back({"metadata", "{op_name=\"x\"}"});
       }},
      {"root", [](Module* m) { m->entry()->set_root(Find(*m, "m")); }},
      {"computation name", [](Module* m) { m->entry()->set_name("e2"); }},
      {"execution thread", [](Module* m) { m->entry()->set_execution_thread("side"); }},
      {"module name", [](Module* m) { m->set_name("m2"); }},
      {"entry", [](Module* m) { m->set_entry(m->computations().front().get()); }},
      {"entry layout",
       [](Module* m) {
         m->set_entry_computation_layout({Shape::Array(ElementType::kF32, {4, 8})},
                                         Shape::Array(ElementType::kF32, {4}));
       }},
      {"replica count", [](Module* m) { m->set_replica_count(2); }},
      {"partitions", [](Module* m) { m->set_num_partitions(2); }},
      {"scheduled", [](Module* m) { m->set_is_scheduled(true); }},
      {"input output alias",
       [](Module* m) { m->mutable_input_output_aliases()->push_back({{}, 0, {}, "may-alias"}); }},
      {"module opaque", [](Module* m) { m->mutable_opaque_attributes()->push_back({"x", "y"}); }},
  };
  ExpectEveryChangeDiffers(changes);
}

}  // namespace
}  // namespace xjit
