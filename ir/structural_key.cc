// The structural key (see structural_key.h).
#include "ir/structural_key.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "ir/attributes.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/layout.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace xjit {

// The key writes every field by name: a new field must be written too. The
// sizes below (x86-64 and AArch64 Linux with libstdc++) change when a field
// is added; update the key (and structural_key_test), then the size.
#if defined(__GLIBCXX__) && defined(__LP64__)
static_assert(sizeof(InstructionAttributes) == 1456,
              "InstructionAttributes changed: add the new field to AppendAttributes in "
              "ir/structural_key.cc, then update this size");
static_assert(sizeof(Layout) == 200,
              "Layout changed: add the new field to AppendLayout in ir/structural_key.cc, then "
              "update this size");
static_assert(sizeof(Shape) == 304,
              "Shape changed: add the new field to AppendShape in ir/structural_key.cc, then "
              "update this size");
static_assert(sizeof(Literal) == 344,
              "Literal changed: add the new field to AppendLiteral in ir/structural_key.cc, then "
              "update this size");
// (An instruction's operand and user indexes and its position are derived
// from its operands, its users and its computation's order, which the key
// holds.)
static_assert(sizeof(Instruction) == 520,
              "Instruction changed: add the new field to AppendInstruction in "
              "ir/structural_key.cc, then update this size");
// (The name indexes of Computation and Module, and Free's memory in them, are
// derived from the names of instructions and computations, which the key
// holds; a computation's count of removed slots and its lock are bookkeeping.)
static_assert(sizeof(Computation) == 216 + sizeof(std::mutex),  // 40 bytes on x86-64, 48 on AArch64
              "Computation changed: add the new field to AppendStructuralKey in "
              "ir/structural_key.cc, then update this size");
static_assert(sizeof(Module) == 560,
              "Module changed: add the new field to AppendStructuralKey in ir/structural_key.cc, "
              "then update this size");
#endif

namespace {

// Writes into `out` through a raw pointer, growing the string in large
// steps: std::string::append per byte (a capacity check and a size update
// each) was a third of the key's cost.
class KeyWriter {
 public:
  explicit KeyWriter(std::string* out) : out_(out), size_(out->size()) {}
  ~KeyWriter() { out_->resize(size_); }
  KeyWriter(const KeyWriter&) = delete;
  KeyWriter& operator=(const KeyWriter&) = delete;

  // Integers as LEB128 varints of their zigzag form: most are small.
  void Int(int64_t value) {
    uint64_t v = (static_cast<uint64_t>(value) << 1) ^ static_cast<uint64_t>(value >> 63);
    char* p = Reserve(10);
    while (v >= 0x80) {
      *p++ = static_cast<char>(v | 0x80);
      v >>= 7;
    }
    *p++ = static_cast<char>(v);
    size_ = p - out_->data();
  }
  void Byte(uint8_t value) {
    *Reserve(1) = static_cast<char>(value);
    ++size_;
  }
  void Bool(bool value) { Byte(value ? 1 : 0); }
  template <typename E>
    requires std::is_enum_v<E>
  void Enum(E value) {
    Int(static_cast<int64_t>(value));
  }
  void Double(double value) { Raw(&value, sizeof(double)); }
  void Bytes(const void* data, size_t size) {
    Int(static_cast<int64_t>(size));
    Raw(data, size);
  }
  void String(const std::string& s) { Bytes(s.data(), s.size()); }
  void Ints(const std::vector<int64_t>& values) {
    Int(static_cast<int64_t>(values.size()));
    for (int64_t v : values) Int(v);
  }
  void Strings(const std::vector<std::string>& values) {
    Int(static_cast<int64_t>(values.size()));
    for (const std::string& v : values) String(v);
  }
  // A sequence, each element written by `write`.
  template <typename T, typename F>
  void List(const std::vector<T>& values, F write) {
    Int(static_cast<int64_t>(values.size()));
    for (const T& v : values) write(v);
  }

 private:
  void Raw(const void* data, size_t size) {
    if (size == 0) return;
    std::memcpy(Reserve(size), data, size);
    size_ += size;
  }
  // Room for `n` more bytes at the end of what was written; returns where
  // they go.
  char* Reserve(size_t n) {
    if (size_ + n > out_->size()) out_->resize(std::max(2 * out_->size(), size_ + n + 256));
    return out_->data() + size_;
  }

  std::string* out_;
  size_t size_;  // Bytes written (out_ is longer: its tail is scratch).
};

// Layout::IsPlain without its copy of minor_to_major: every field but
// minor_to_major has its default.
bool IsPlainLayout(const Layout& layout) {
  static const Layout* const defaults = new Layout();
  return layout.dim_level_types.empty() && layout.tiles.empty() &&
         layout.tail_padding_alignment_in_elements ==
             defaults->tail_padding_alignment_in_elements &&
         layout.index_type == defaults->index_type &&
         layout.pointer_type == defaults->pointer_type &&
         layout.element_size_in_bits == defaults->element_size_in_bits &&
         layout.memory_space == defaults->memory_space && layout.split_configs.empty() &&
         layout.physical_shape.empty() &&
         layout.dynamic_shape_metadata_prefix_bytes ==
             defaults->dynamic_shape_metadata_prefix_bytes &&
         layout.padded_dimensions.empty() && layout.padding_value == defaults->padding_value;
}

void AppendLayout(const Layout& layout, KeyWriter* w) {
  // Most layouts are a plain minor_to_major: one tag byte says so.
  const bool plain = IsPlainLayout(layout);
  w->Bool(plain);
  w->Ints(layout.minor_to_major);
  if (plain) return;
  w->Strings(layout.dim_level_types);
  w->List(layout.tiles, [&](const Tile& tile) { w->Ints(tile.dimensions); });
  w->Int(layout.tail_padding_alignment_in_elements);
  w->Enum(layout.index_type);
  w->Enum(layout.pointer_type);
  w->Int(layout.element_size_in_bits);
  w->Int(layout.memory_space);
  w->Strings(layout.split_configs);
  w->String(layout.physical_shape);
  w->Int(layout.dynamic_shape_metadata_prefix_bytes);
  w->Ints(layout.padded_dimensions);
  w->Enum(layout.padding_value);
}

void AppendShape(const Shape& shape, KeyWriter* w) {
  w->Enum(shape.element_type());
  const int64_t rank = shape.rank();
  w->Int(rank);
  for (int64_t i = 0; i < rank; ++i) {
    w->Int(shape.dimensions(i));
    w->Bool(shape.is_dynamic_dimension(i));
  }
  w->Bool(shape.has_layout());
  if (shape.has_layout()) AppendLayout(shape.layout(), w);
  w->List(shape.tuple_shapes(), [&](const Shape& element) { AppendShape(element, w); });
}

void AppendOptionalShape(const std::optional<Shape>& shape, KeyWriter* w) {
  w->Bool(shape.has_value());
  if (shape.has_value()) AppendShape(*shape, w);
}

void AppendLiteral(const Literal& literal, KeyWriter* w) {
  AppendShape(literal.shape(), w);
  w->Bytes(literal.data().data(), literal.data().size());
  w->List(literal.elements(), [&](const Literal& element) { AppendLiteral(element, w); });
}

void AppendOpaque(const std::vector<OpaqueAttribute>& attributes, KeyWriter* w) {
  w->List(attributes, [&](const OpaqueAttribute& a) {
    w->String(a.name);
    w->String(a.value);
  });
}

void AppendAttributes(const InstructionAttributes& a, KeyWriter* w) {
  w->Int(a.parameter_number);
  w->Int(a.tuple_index);
  w->Int(a.iota_dimension);
  w->Ints(a.dimensions);
  w->Bool(a.has_dimensions);
  w->Bool(a.inferred_dimension.has_value());
  if (a.inferred_dimension.has_value()) w->Int(*a.inferred_dimension);
  w->List(a.slice, [&](const SliceDimension& d) {
    w->Int(d.start);
    w->Int(d.limit);
    w->Int(d.stride);
  });
  w->List(a.padding, [&](const PaddingDimension& d) {
    w->Int(d.low);
    w->Int(d.high);
    w->Int(d.interior);
  });
  w->List(a.window, [&](const WindowDimension& d) {
    w->Int(d.size);
    w->Int(d.stride);
    w->Int(d.padding_low);
    w->Int(d.padding_high);
    w->Int(d.base_dilation);
    w->Int(d.window_dilation);
    w->Bool(d.window_reversal);
  });
  w->Bool(a.has_window);
  const ConvolutionDimensionNumbers& c = a.convolution_dimension_numbers;
  w->Int(c.input_batch_dimension);
  w->Int(c.input_feature_dimension);
  w->Ints(c.input_spatial_dimensions);
  w->Int(c.kernel_input_feature_dimension);
  w->Int(c.kernel_output_feature_dimension);
  w->Ints(c.kernel_spatial_dimensions);
  w->Int(c.output_batch_dimension);
  w->Int(c.output_feature_dimension);
  w->Ints(c.output_spatial_dimensions);
  w->Int(a.feature_group_count);
  w->Int(a.batch_group_count);
  const DotDimensionNumbers& d = a.dot_dimension_numbers;
  w->Ints(d.lhs_batch_dimensions);
  w->Ints(d.rhs_batch_dimensions);
  w->Ints(d.lhs_contracting_dimensions);
  w->Ints(d.rhs_contracting_dimensions);
  w->List(a.operand_precision, [&](Precision p) { w->Enum(p); });
  w->String(a.algorithm);
  const GatherDimensionNumbers& g = a.gather_dimension_numbers;
  w->Ints(g.offset_dims);
  w->Ints(g.collapsed_slice_dims);
  w->Ints(g.start_index_map);
  w->Int(g.index_vector_dim);
  w->Ints(g.operand_batching_dims);
  w->Ints(g.start_indices_batching_dims);
  w->Ints(a.slice_sizes);
  const ScatterDimensionNumbers& s = a.scatter_dimension_numbers;
  w->Ints(s.update_window_dims);
  w->Ints(s.inserted_window_dims);
  w->Ints(s.scatter_dims_to_operand_dims);
  w->Int(s.index_vector_dim);
  w->Ints(s.input_batching_dims);
  w->Ints(s.scatter_indices_batching_dims);
  w->Bool(a.indices_are_sorted);
  w->Bool(a.unique_indices);
  w->Enum(a.comparison_direction);
  w->Enum(a.comparison_type);
  w->Bool(a.is_stable);
  w->Int(a.k);
  w->Bool(a.largest);
  w->Enum(a.fft_type);
  w->Ints(a.fft_length);
  w->Bool(a.left_side);
  w->Bool(a.lower);
  w->Bool(a.unit_diagonal);
  w->Enum(a.transpose_a);
  w->Double(a.epsilon);
  w->Int(a.feature_index);
  w->Int(a.exponent_bits);
  w->Int(a.mantissa_bits);
  w->Enum(a.distribution);
  w->Enum(a.rng_algorithm);
  w->Int(a.delta);
  w->Enum(a.fusion_kind);
  w->String(a.custom_call_target);
  w->String(a.api_version);
  w->Bool(a.custom_call_has_side_effect);
  w->String(a.backend_config);
  w->List(a.operand_layout_constraints, [&](const Shape& shape) { AppendShape(shape, w); });
  w->Bool(a.has_operand_layout_constraints);
  w->List(a.output_to_operand_aliasing, [&](const OutputOperandAlias& alias) {
    w->Ints(alias.output_index);
    w->Int(alias.operand_number);
    w->Ints(alias.operand_index);
  });
  w->Bool(a.channel_id.has_value());
  if (a.channel_id.has_value()) w->Int(*a.channel_id);
  w->Bool(a.is_host_transfer);
  w->List(a.replica_groups, [&](const std::vector<int64_t>& group) { w->Ints(group); });
  w->Bool(a.has_replica_groups);
  w->Bool(a.use_global_device_ids);
  w->Bool(a.constrain_layout);
  w->List(a.source_target_pairs, [&](const std::pair<int64_t, int64_t>& pair) {
    w->Int(pair.first);
    w->Int(pair.second);
  });
  w->String(a.infeed_config);
  w->String(a.outfeed_config);
  AppendOptionalShape(a.outfeed_shape, w);
  w->Bool(a.is_composite);
}

// Positions of instructions and computations in the module (instructions
// numbered across all computations, in order): operands, control
// predecessors, roots and callees are written as positions, so that the key
// does not depend on names being unique, and an operand taken from another
// computation (which the verifier rejects) does not look like a local one.
class Positions {
 public:
  explicit Positions(const Module& module) {
    int64_t count = 0;
    for (const auto& computation : module.computations()) {
      computations_.emplace(computation.get(), static_cast<int64_t>(computations_.size()));
      count += static_cast<int64_t>(computation->instructions().size());
    }
    instructions_.reserve(count);
    for (const auto& computation : module.computations()) {
      for (const auto& instruction : computation->instructions()) {
        instructions_.emplace(instruction.get(), static_cast<int64_t>(instructions_.size()));
      }
    }
  }
  // -1 for a pointer outside the module (null, or another module's).
  int64_t Of(const Instruction* instruction) const {
    auto it = instructions_.find(instruction);
    return it == instructions_.end() ? -1 : it->second;
  }
  int64_t Of(const Computation* computation) const {
    auto it = computations_.find(computation);
    return it == computations_.end() ? -1 : it->second;
  }

 private:
  absl::flat_hash_map<const Instruction*, int64_t> instructions_;
  absl::flat_hash_map<const Computation*, int64_t> computations_;
};

void AppendInstruction(const Instruction& instruction, const Positions& positions,
                       KeyWriter* w) {
  w->Enum(instruction.opcode());
  w->String(instruction.name());
  AppendShape(instruction.shape(), w);
  w->List(instruction.operands(), [&](const Instruction* operand) { w->Int(positions.Of(operand)); });
  w->List(instruction.control_predecessors(),
          [&](const Instruction* predecessor) { w->Int(positions.Of(predecessor)); });
  w->List(instruction.called_computations(),
          [&](const Computation* callee) { w->Int(positions.Of(callee)); });
  // Default attributes (absent, or allocated and left as they were) are
  // written as one byte, so that a module built with the builder and the
  // same module parsed get the same key.
  static const InstructionAttributes* const defaults = new InstructionAttributes();
  const bool attributes = instruction.has_attrs() && !(instruction.attrs() == *defaults);
  w->Bool(attributes);
  if (attributes) AppendAttributes(instruction.attrs(), w);
  w->Bool(instruction.has_literal());
  if (instruction.has_literal()) AppendLiteral(instruction.literal(), w);
  AppendOpaque(instruction.opaque_attributes(), w);
}

}  // namespace

void AppendStructuralKey(const Module& module, std::string* out) {
  KeyWriter w(out);
  Positions positions(module);
  w.String(module.name());
  w.Int(static_cast<int64_t>(module.computations().size()));
  for (const auto& computation : module.computations()) {
    w.String(computation->name());
    w.String(computation->execution_thread());
    w.Int(static_cast<int64_t>(computation->instructions().size()));
    for (const auto& instruction : computation->instructions()) {
      AppendInstruction(*instruction, positions, &w);
    }
    w.Int(positions.Of(computation->root()));
    w.List(computation->parameters(),
           [&](const Instruction* parameter) { w.Int(positions.Of(parameter)); });
  }
  w.Int(positions.Of(module.entry()));
  w.Bool(module.entry_parameter_layouts().has_value());
  if (module.entry_parameter_layouts().has_value()) {
    w.List(*module.entry_parameter_layouts(), [&](const Shape& shape) { AppendShape(shape, &w); });
  }
  AppendOptionalShape(module.entry_result_layout(), &w);
  w.Int(module.replica_count());
  w.Int(module.num_partitions());
  w.Bool(module.is_scheduled());
  w.List(module.input_output_aliases(), [&](const InputOutputAlias& alias) {
    w.Ints(alias.output_index);
    w.Int(alias.parameter_number);
    w.Ints(alias.parameter_index);
    w.String(alias.kind);
  });
  AppendOpaque(module.opaque_attributes(), &w);
}

}  // namespace xjit
