// HLO text printer (see printer.h). The output is what ir/hlo_text/parser.cc
// reads back to the same module, so printing is a fixed point of
// parse-then-print. Typed attributes are printed per opcode in a fixed order,
// omitted where they equal the defaults XLA omits; opaque attributes follow
// verbatim in their original order.
#include "ir/hlo_text/printer.h"

#include <cctype>
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/literal.h"

namespace xjit {
namespace {

std::string IntList(absl::Span<const int64_t> values) {
  return absl::StrCat("{", absl::StrJoin(values, ","), "}");
}

std::string Quoted(absl::string_view text) { return absl::StrCat("\"", absl::CEscape(text), "\""); }

std::string Name(absl::string_view name) { return absl::StrCat("%", name); }

// A literal in module text (`literal=` of custom-call): shape then value. In a
// module a dynamic dimension's size is its bound, so the shape prints as
// written (`f32[<=4]`), unlike Literal::ToString, which reads the sizes of a
// dynamic array as runtime sizes.
std::string ShapedLiteralText(const Literal& literal) {
  if (literal.shape().IsTuple()) {
    return absl::StrCat("(",
                        absl::StrJoin(literal.elements(), ", ",
                                      [](std::string* out, const Literal& element) {
                                        absl::StrAppend(out, ShapedLiteralText(element));
                                      }),
                        ")");
  }
  return absl::StrCat(literal.shape().ToString(), " ", literal.ValueToString());
}

// The shortest decimal text that reads back as exactly `value`.
std::string DoubleText(double value) {
  if (std::isnan(value)) return std::signbit(value) ? "-nan" : "nan";
  if (std::isinf(value)) return value < 0 ? "-inf" : "inf";
  for (int precision = 1; precision <= 17; ++precision) {
    std::string text = absl::StrFormat("%.*g", precision, value);
    if (std::strtod(text.c_str(), nullptr) == value) return text;
  }
  return absl::StrFormat("%.17g", value);
}

std::string ShapeIndexText(const ShapeIndex& index) { return IntList(index); }

std::string WindowText(const Window& window) {
  std::vector<std::string> parts;
  auto join_dims = [&](auto field) {
    return absl::StrJoin(window, "x", [&](std::string* out, const WindowDimension& d) {
      absl::StrAppend(out, field(d));
    });
  };
  auto any = [&](auto predicate) {
    for (const WindowDimension& d : window) {
      if (predicate(d)) return true;
    }
    return false;
  };
  if (!window.empty()) {
    parts.push_back("size=" + join_dims([](const WindowDimension& d) { return d.size; }));
  }
  if (any([](const WindowDimension& d) { return d.stride != 1; })) {
    parts.push_back("stride=" + join_dims([](const WindowDimension& d) { return d.stride; }));
  }
  if (any([](const WindowDimension& d) { return d.padding_low != 0 || d.padding_high != 0; })) {
    parts.push_back("pad=" + join_dims([](const WindowDimension& d) {
                      return absl::StrCat(d.padding_low, "_", d.padding_high);
                    }));
  }
  if (any([](const WindowDimension& d) { return d.base_dilation != 1; })) {
    parts.push_back("lhs_dilate=" +
                    join_dims([](const WindowDimension& d) { return d.base_dilation; }));
  }
  if (any([](const WindowDimension& d) { return d.window_dilation != 1; })) {
    parts.push_back("rhs_dilate=" +
                    join_dims([](const WindowDimension& d) { return d.window_dilation; }));
  }
  if (any([](const WindowDimension& d) { return d.window_reversal; })) {
    parts.push_back("rhs_reversal=" + join_dims([](const WindowDimension& d) {
                      return d.window_reversal ? 1 : 0;
                    }));
  }
  return absl::StrCat("{", absl::StrJoin(parts, " "), "}");
}

std::string DimLabelsText(const ConvolutionDimensionNumbers& d) {
  auto labels = [](int64_t a_pos, char a, int64_t b_pos, char b,
                    const std::vector<int64_t>& spatial) {
    int64_t rank = 2 + static_cast<int64_t>(spatial.size());
    std::string s(rank, '?');
    auto put = [&](int64_t pos, char c) {
      if (pos >= 0 && pos < rank) s[pos] = c;
    };
    put(a_pos, a);
    put(b_pos, b);
    for (size_t k = 0; k < spatial.size(); ++k) put(spatial[k], static_cast<char>('0' + k));
    return s;
  };
  return absl::StrCat(
      labels(d.input_batch_dimension, 'b', d.input_feature_dimension, 'f',
             d.input_spatial_dimensions),
      "_",
      labels(d.kernel_input_feature_dimension, 'i', d.kernel_output_feature_dimension, 'o',
             d.kernel_spatial_dimensions),
      "->",
      labels(d.output_batch_dimension, 'b', d.output_feature_dimension, 'f',
             d.output_spatial_dimensions));
}

std::string PaddingText(const PaddingConfig& config) {
  bool interior = false;
  for (const PaddingDimension& d : config) interior |= d.interior != 0;
  return absl::StrJoin(config, "x", [&](std::string* out, const PaddingDimension& d) {
    absl::StrAppend(out, d.low, "_", d.high);
    if (interior) absl::StrAppend(out, "_", d.interior);
  });
}

std::string SliceText(const std::vector<SliceDimension>& slices) {
  return absl::StrCat("{",
                      absl::StrJoin(slices, ", ",
                                    [](std::string* out, const SliceDimension& d) {
                                      absl::StrAppend(out, "[", d.start, ":", d.limit);
                                      if (d.stride != 1) absl::StrAppend(out, ":", d.stride);
                                      absl::StrAppend(out, "]");
                                    }),
                      "}");
}

std::string IntListList(const std::vector<std::vector<int64_t>>& lists) {
  return absl::StrCat("{",
                      absl::StrJoin(lists, ",",
                                    [](std::string* out, const std::vector<int64_t>& l) {
                                      absl::StrAppend(out, IntList(l));
                                    }),
                      "}");
}

std::string OutputOperandAliasingText(const std::vector<OutputOperandAlias>& aliases) {
  return absl::StrCat("{",
                      absl::StrJoin(aliases, ", ",
                                    [](std::string* out, const OutputOperandAlias& a) {
                                      absl::StrAppend(out, ShapeIndexText(a.output_index), ": (",
                                                      a.operand_number, ", ",
                                                      ShapeIndexText(a.operand_index), ")");
                                    }),
                      "}");
}

std::string ComputationList(const std::vector<Computation*>& computations) {
  return absl::StrCat("{",
                      absl::StrJoin(computations, ", ",
                                    [](std::string* out, const Computation* c) {
                                      absl::StrAppend(out, Name(c->name()));
                                    }),
                      "}");
}

// The typed attributes of `instruction`, in canonical order, as "key=value".
std::vector<std::string> TypedAttributes(const Instruction& instruction) {
  const InstructionAttributes& a = instruction.attrs();
  const std::vector<Computation*>& called = instruction.called_computations();
  std::vector<std::string> out;
  auto add = [&](absl::string_view key, absl::string_view value) {
    out.push_back(absl::StrCat(key, "=", value));
  };
  auto add_bool_if_true = [&](absl::string_view key, bool value) {
    if (value) add(key, "true");
  };
  auto add_to_apply = [&]() {
    if (!called.empty()) add("to_apply", Name(called[0]->name()));
  };
  auto add_dimensions = [&]() { add("dimensions", IntList(a.dimensions)); };
  auto add_collective = [&](bool with_dimensions) {
    if (a.channel_id.has_value()) add("channel_id", absl::StrCat(*a.channel_id));
    if (a.has_replica_groups || !a.replica_groups.empty()) {
      add("replica_groups", IntListList(a.replica_groups));
    }
    add_bool_if_true("constrain_layout", a.constrain_layout);
    add_bool_if_true("use_global_device_ids", a.use_global_device_ids);
    if (with_dimensions && (a.has_dimensions || !a.dimensions.empty())) add_dimensions();
  };
  auto add_precision = [&]() {
    bool any = false;
    for (Precision p : a.operand_precision) any |= p != Precision::kDefault;
    if (!any) return;
    add("operand_precision",
        absl::StrCat("{",
                     absl::StrJoin(a.operand_precision, ",",
                                   [](std::string* s, Precision p) {
                                     absl::StrAppend(s, PrecisionName(p));
                                   }),
                     "}"));
  };
  auto add_conv = [&](bool always) {
    if (always || a.has_window) add("window", WindowText(a.window));
    if (always || a.convolution_dimension_numbers != ConvolutionDimensionNumbers{}) {
      add("dim_labels", DimLabelsText(a.convolution_dimension_numbers));
    }
    if (a.feature_group_count != 1) add("feature_group_count", absl::StrCat(a.feature_group_count));
    if (a.batch_group_count != 1) add("batch_group_count", absl::StrCat(a.batch_group_count));
  };

  switch (instruction.opcode()) {
    case Opcode::kScan:
      add_to_apply();
      break;
    case Opcode::kCompare:
      add("direction", ComparisonDirectionName(a.comparison_direction));
      if (a.comparison_type != ComparisonType::kDefault) {
        add("type", ComparisonTypeName(a.comparison_type));
      }
      break;
    case Opcode::kIota:
      add("iota_dimension", absl::StrCat(a.iota_dimension));
      break;
    case Opcode::kBroadcast:
    case Opcode::kTranspose:
    case Opcode::kReverse:
    case Opcode::kConcatenate:
    case Opcode::kGetDimensionSize:
    case Opcode::kSetDimensionSize:
      add_dimensions();
      break;
    case Opcode::kMap:
      // An absent dimensions= (all of them) must not print as an explicit
      // empty list, which the verifier rejects (found by hlo_text_fuzzer).
      if (a.has_dimensions || !a.dimensions.empty()) add_dimensions();
      add_to_apply();
      break;
    case Opcode::kReduce:
      add_dimensions();
      add_to_apply();
      break;
    case Opcode::kReshape:
      if (a.inferred_dimension.has_value()) {
        add("inferred_dimension", absl::StrCat(*a.inferred_dimension));
      }
      break;
    case Opcode::kSlice:
      add("slice", SliceText(a.slice));
      break;
    case Opcode::kDynamicSlice:
      add("dynamic_slice_sizes", IntList(a.slice_sizes));
      break;
    case Opcode::kPad:
      add("padding", PaddingText(a.padding));
      break;
    case Opcode::kDot:
    case Opcode::kScaledDot:
    case Opcode::kRaggedDot: {
      const DotDimensionNumbers& d = a.dot_dimension_numbers;
      if (!d.lhs_batch_dimensions.empty()) add("lhs_batch_dims", IntList(d.lhs_batch_dimensions));
      add("lhs_contracting_dims", IntList(d.lhs_contracting_dimensions));
      if (!d.rhs_batch_dimensions.empty()) add("rhs_batch_dims", IntList(d.rhs_batch_dimensions));
      add("rhs_contracting_dims", IntList(d.rhs_contracting_dimensions));
      add_precision();
      if (!a.algorithm.empty()) add("algorithm", a.algorithm);
      break;
    }
    case Opcode::kConvolution:
      add_conv(true);
      add_precision();
      break;
    case Opcode::kReduceWindow:
      add("window", WindowText(a.window));
      add_to_apply();
      break;
    case Opcode::kSelectAndScatter:
      add("window", WindowText(a.window));
      if (called.size() >= 2) {
        add("select", Name(called[0]->name()));
        add("scatter", Name(called[1]->name()));
      }
      break;
    case Opcode::kGather: {
      const GatherDimensionNumbers& g = a.gather_dimension_numbers;
      add("offset_dims", IntList(g.offset_dims));
      add("collapsed_slice_dims", IntList(g.collapsed_slice_dims));
      add("start_index_map", IntList(g.start_index_map));
      if (!g.operand_batching_dims.empty()) {
        add("operand_batching_dims", IntList(g.operand_batching_dims));
      }
      if (!g.start_indices_batching_dims.empty()) {
        add("start_indices_batching_dims", IntList(g.start_indices_batching_dims));
      }
      add("index_vector_dim", absl::StrCat(g.index_vector_dim));
      add("slice_sizes", IntList(a.slice_sizes));
      add_bool_if_true("indices_are_sorted", a.indices_are_sorted);
      break;
    }
    case Opcode::kScatter: {
      const ScatterDimensionNumbers& s = a.scatter_dimension_numbers;
      add("update_window_dims", IntList(s.update_window_dims));
      add("inserted_window_dims", IntList(s.inserted_window_dims));
      add("scatter_dims_to_operand_dims", IntList(s.scatter_dims_to_operand_dims));
      if (!s.input_batching_dims.empty()) add("input_batching_dims", IntList(s.input_batching_dims));
      if (!s.scatter_indices_batching_dims.empty()) {
        add("scatter_indices_batching_dims", IntList(s.scatter_indices_batching_dims));
      }
      add("index_vector_dim", absl::StrCat(s.index_vector_dim));
      add_bool_if_true("indices_are_sorted", a.indices_are_sorted);
      add_bool_if_true("unique_indices", a.unique_indices);
      add_to_apply();
      break;
    }
    case Opcode::kSort:
      add_dimensions();
      add_bool_if_true("is_stable", a.is_stable);
      add_to_apply();
      break;
    case Opcode::kTopK:
      add("k", absl::StrCat(a.k));
      add("largest", a.largest ? "true" : "false");
      break;
    case Opcode::kWhile:
      if (called.size() >= 2) {
        add("condition", Name(called[0]->name()));
        add("body", Name(called[1]->name()));
      }
      break;
    case Opcode::kConditional:
      if (instruction.operand_count() > 0 &&
          instruction.operand(0)->shape().element_type() == ElementType::kPred &&
          called.size() == 2) {
        add("true_computation", Name(called[0]->name()));
        add("false_computation", Name(called[1]->name()));
      } else {
        add("branch_computations", ComputationList(called));
      }
      break;
    case Opcode::kCall:
      add_to_apply();
      add_bool_if_true("is_composite", a.is_composite);
      break;
    case Opcode::kFusion:
      add("kind", FusionKindName(a.fusion_kind));
      if (!called.empty()) add("calls", Name(called[0]->name()));
      if (!a.output_to_operand_aliasing.empty()) {
        add("output_to_operand_aliasing", OutputOperandAliasingText(a.output_to_operand_aliasing));
      }
      break;
    case Opcode::kCustomCall:
      add("custom_call_target", Quoted(a.custom_call_target));
      add_conv(false);
      if (a.has_operand_layout_constraints) {
        add("operand_layout_constraints",
            absl::StrCat("{",
                         absl::StrJoin(a.operand_layout_constraints, ", ",
                                       [](std::string* s, const Shape& shape) {
                                         absl::StrAppend(s, shape.ToString());
                                       }),
                         "}"));
      }
      add_bool_if_true("custom_call_has_side_effect", a.custom_call_has_side_effect);
      if (!a.output_to_operand_aliasing.empty()) {
        add("output_to_operand_aliasing", OutputOperandAliasingText(a.output_to_operand_aliasing));
      }
      if (!(instruction.literal().shape().IsTuple() &&
            instruction.literal().shape().tuple_size() == 0)) {
        add("literal", ShapedLiteralText(instruction.literal()));
      }
      if (called.size() == 1) {
        add("to_apply", Name(called[0]->name()));
      } else if (called.size() > 1) {
        add("called_computations", ComputationList(called));
      }
      if (!a.api_version.empty()) add("api_version", a.api_version);
      if (!a.backend_config.empty()) add("backend_config", a.backend_config);
      break;
    case Opcode::kFft:
      add("fft_type", FftTypeName(a.fft_type));
      add("fft_length", IntList(a.fft_length));
      break;
    case Opcode::kTriangularSolve:
      add_bool_if_true("left_side", a.left_side);
      add_bool_if_true("lower", a.lower);
      add_bool_if_true("unit_diagonal", a.unit_diagonal);
      add("transpose_a", TriangularSolveTransposeName(a.transpose_a));
      break;
    case Opcode::kCholesky:
      add_bool_if_true("lower", a.lower);
      break;
    case Opcode::kReducePrecision:
      add("exponent_bits", absl::StrCat(a.exponent_bits));
      add("mantissa_bits", absl::StrCat(a.mantissa_bits));
      break;
    case Opcode::kBatchNormTraining:
    case Opcode::kBatchNormInference:
    case Opcode::kBatchNormGrad:
      add("epsilon", DoubleText(a.epsilon));
      add("feature_index", absl::StrCat(a.feature_index));
      break;
    case Opcode::kRng:
      add("distribution", RandomDistributionName(a.distribution));
      break;
    case Opcode::kRngBitGenerator:
      add("algorithm", RandomAlgorithmName(a.rng_algorithm));
      break;
    case Opcode::kRngGetAndUpdateState:
      add("delta", absl::StrCat(a.delta));
      break;
    case Opcode::kGetTupleElement:
      add("index", absl::StrCat(a.tuple_index));
      break;
    case Opcode::kInfeed:
      if (!a.infeed_config.empty()) add("infeed_config", Quoted(a.infeed_config));
      break;
    case Opcode::kOutfeed:
      if (a.outfeed_shape.has_value()) add("outfeed_shape", a.outfeed_shape->ToString());
      if (!a.outfeed_config.empty()) add("outfeed_config", Quoted(a.outfeed_config));
      break;
    case Opcode::kSend:
    case Opcode::kRecv:
    case Opcode::kSendDone:
    case Opcode::kRecvDone:
      if (a.channel_id.has_value()) add("channel_id", absl::StrCat(*a.channel_id));
      add_bool_if_true("is_host_transfer", a.is_host_transfer);
      break;
    case Opcode::kAllReduce:
    case Opcode::kAllReduceStart:
    case Opcode::kReduceScatter:
    case Opcode::kCollectiveReduce:
      add_collective(true);
      add_to_apply();
      break;
    case Opcode::kAllGather:
    case Opcode::kAllGatherStart:
    case Opcode::kAllToAll:
    case Opcode::kCollectiveBroadcast:
    case Opcode::kRaggedAllToAll:
      add_collective(true);
      break;
    case Opcode::kCollectivePermute:
    case Opcode::kCollectivePermuteStart:
      if (a.channel_id.has_value()) add("channel_id", absl::StrCat(*a.channel_id));
      add("source_target_pairs",
          absl::StrCat("{",
                       absl::StrJoin(a.source_target_pairs, ",",
                                     [](std::string* s, const std::pair<int64_t, int64_t>& p) {
                                       absl::StrAppend(s, "{", p.first, ",", p.second, "}");
                                     }),
                       "}"));
      break;
    case Opcode::kAsyncStart:
    case Opcode::kAsyncUpdate:
    case Opcode::kAsyncDone:
      if (!called.empty()) add("calls", Name(called[0]->name()));
      break;
    default:
      break;
  }
  return out;
}

std::string SignatureText(const Computation& computation) {
  std::vector<std::string> params;
  for (const Instruction* p : computation.parameters()) {
    if (p == nullptr) continue;
    params.push_back(absl::StrCat(p->name(), ": ", p->shape().ToString()));
  }
  std::string result =
      computation.root() != nullptr ? computation.root()->shape().ToString() : "()";
  return absl::StrCat("(", absl::StrJoin(params, ", "), ") -> ", result);
}

void AppendComputation(const Computation& computation, bool is_entry, std::string* out) {
  absl::StrAppend(out, is_entry ? "ENTRY " : "", Name(computation.name()), " ",
                  SignatureText(computation), " {\n");
  for (const auto& instruction : computation.instructions()) {
    absl::StrAppend(out, "  ", instruction.get() == computation.root() ? "ROOT " : "",
                    PrintInstruction(*instruction), "\n");
  }
  absl::StrAppend(out, "}");
  if (!computation.execution_thread().empty()) {
    absl::StrAppend(out, ", execution_thread=", Quoted(computation.execution_thread()));
  }
  absl::StrAppend(out, "\n");
}

// Callees before callers, otherwise in module order, the entry last.
void PostOrder(const Computation* computation, absl::flat_hash_set<const Computation*>* visited,
               std::vector<const Computation*>* order) {
  // Iterative DFS: call graphs of generated modules can be deep.
  struct Frame {
    const Computation* computation;
    std::vector<const Computation*> callees;
    size_t next = 0;
  };
  if (!visited->insert(computation).second) return;
  auto callees_of = [](const Computation* c) {
    std::vector<const Computation*> callees;
    for (const auto& instruction : c->instructions()) {
      for (const Computation* callee : instruction->called_computations()) {
        if (callee != nullptr) callees.push_back(callee);
      }
    }
    return callees;
  };
  std::vector<Frame> stack;
  stack.push_back({computation, callees_of(computation)});
  while (!stack.empty()) {
    Frame& frame = stack.back();
    if (frame.next < frame.callees.size()) {
      const Computation* callee = frame.callees[frame.next++];
      if (visited->insert(callee).second) stack.push_back({callee, callees_of(callee)});
      continue;
    }
    order->push_back(frame.computation);
    stack.pop_back();
  }
}

}  // namespace

std::string PrintInstruction(const Instruction& instruction) {
  std::string out = absl::StrCat(Name(instruction.name()), " = ", instruction.shape().ToString(),
                                 " ", OpcodeName(instruction.opcode()), "(");
  switch (instruction.opcode()) {
    case Opcode::kParameter:
      absl::StrAppend(&out, instruction.attrs().parameter_number);
      break;
    case Opcode::kConstant:
      absl::StrAppend(&out, instruction.literal().ValueToString());
      break;
    default:
      absl::StrAppend(&out, absl::StrJoin(instruction.operands(), ", ",
                                          [](std::string* s, const Instruction* operand) {
                                            absl::StrAppend(s, operand->shape().ToString(), " ",
                                                            Name(operand->name()));
                                          }));
      break;
  }
  absl::StrAppend(&out, ")");
  for (const std::string& attribute : TypedAttributes(instruction)) {
    absl::StrAppend(&out, ", ", attribute);
  }
  if (!instruction.control_predecessors().empty()) {
    absl::StrAppend(&out, ", control-predecessors={",
                    absl::StrJoin(instruction.control_predecessors(), ", ",
                                  [](std::string* s, const Instruction* p) {
                                    absl::StrAppend(s, Name(p->name()));
                                  }),
                    "}");
  }
  for (const OpaqueAttribute& attribute : instruction.opaque_attributes()) {
    absl::StrAppend(&out, ", ", attribute.name, "=", attribute.value);
  }
  return out;
}

std::string PrintComputation(const Computation& computation) {
  std::string out;
  bool is_entry = computation.parent() != nullptr && computation.parent()->entry() == &computation;
  AppendComputation(computation, is_entry, &out);
  return out;
}

std::string PrintModule(const Module& module) {
  // A name that does not lex as an identifier (`%4_indices` read as a
  // module name) keeps its '%', so that the text parses back (found by
  // hlo_text_fuzzer).
  const std::string& name = module.name();
  const bool ident =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  std::string out = absl::StrCat("HloModule ", ident ? "" : "%", name);
  if (module.is_scheduled()) absl::StrAppend(&out, ", is_scheduled=true");
  if (module.entry_parameter_layouts().has_value() && module.entry_result_layout().has_value()) {
    absl::StrAppend(&out, ", entry_computation_layout={(",
                    absl::StrJoin(*module.entry_parameter_layouts(), ", ",
                                  [](std::string* s, const Shape& shape) {
                                    absl::StrAppend(s, shape.ToString());
                                  }),
                    ")->", module.entry_result_layout()->ToString(), "}");
  } else if (module.entry() != nullptr && module.entry()->root() != nullptr) {
    std::vector<std::string> params;
    for (const Instruction* p : module.entry()->parameters()) {
      if (p != nullptr) params.push_back(p->shape().ToString());
    }
    absl::StrAppend(&out, ", entry_computation_layout={(", absl::StrJoin(params, ", "), ")->",
                    module.entry()->root()->shape().ToString(), "}");
  }
  if (!module.input_output_aliases().empty()) {
    absl::StrAppend(
        &out, ", input_output_alias={ ",
        absl::StrJoin(module.input_output_aliases(), ", ",
                      [](std::string* s, const InputOutputAlias& a) {
                        absl::StrAppend(s, ShapeIndexText(a.output_index), ": (",
                                        a.parameter_number, ", ",
                                        ShapeIndexText(a.parameter_index));
                        if (!a.kind.empty()) absl::StrAppend(s, ", ", a.kind);
                        absl::StrAppend(s, ")");
                      }),
        " }");
  }
  if (module.replica_count() != 1) absl::StrAppend(&out, ", replica_count=", module.replica_count());
  if (module.num_partitions() != 1) {
    absl::StrAppend(&out, ", num_partitions=", module.num_partitions());
  }
  for (const OpaqueAttribute& attribute : module.opaque_attributes()) {
    absl::StrAppend(&out, ", ", attribute.name, "=", attribute.value);
  }
  absl::StrAppend(&out, "\n");

  absl::flat_hash_set<const Computation*> visited;
  std::vector<const Computation*> order;
  if (module.entry() != nullptr) visited.insert(module.entry());
  for (const auto& computation : module.computations()) {
    PostOrder(computation.get(), &visited, &order);
  }
  if (module.entry() != nullptr) {
    // The entry's callees that nothing else called were skipped above only
    // if reached through the entry; visit them now, then the entry.
    visited.erase(module.entry());
    std::vector<const Computation*> rest;
    PostOrder(module.entry(), &visited, &rest);
    for (const Computation* c : rest) order.push_back(c);
  }
  for (const Computation* computation : order) {
    absl::StrAppend(&out, "\n");
    AppendComputation(*computation, computation == module.entry(), &out);
  }
  return out;
}

}  // namespace xjit
