// The module verifier. It runs in three passes so that each can rely on the
// one before: (1) structure: entry, roots, names, operand order, parameter
// numbering, arity, called computations and an acyclic call graph; (2)
// shapes: every instruction's shape is well formed with a valid layout, and
// agrees with InferShape (layouts and dynamic flags aside); constants' literals
// have the instruction's shape; (3) the module's entry layout and aliasing.
// Shape inference only runs once (1) has passed, since it follows operands and
// called computations.
//
// Errors read "computation C, instruction I: <rule>" so that users can find
// the culprit; module-level errors start with "module M: " and
// computation-level ones with "computation C: ".
#include "ir/verifier.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/layout_util.h"
#include "ir/shape_inference/shape_inference.h"
#include "ir/status_macros.h"

namespace xjit {
namespace {

std::string Str(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

absl::Status ModuleError(const Module& module, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("module ", module.name(), ": ", message));
}

absl::Status ComputationError(const Computation& computation, absl::string_view message) {
  return absl::InvalidArgumentError(
      absl::StrCat("computation ", computation.name(), ": ", message));
}

absl::Status InstructionError(const Computation& computation, const Instruction& instruction,
                              absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat("computation ", computation.name(),
                                                 ", instruction ", instruction.name(), ": ",
                                                 message));
}

// Sizes are non-negative (or unbounded), element counts fit in int64, and
// array layouts are valid.
absl::Status ValidateShape(const Shape& shape, int depth = 0) {
  if (depth > 1000) return absl::InvalidArgumentError("shape nesting is too deep");
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      XJIT_RETURN_IF_ERROR(ValidateShape(element, depth + 1));
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) {
    if (shape.rank() != 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "shape ", ElementTypeName(shape.element_type()), " cannot have dimensions"));
    }
    return absl::OkStatus();
  }
  int64_t count = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    const int64_t size = shape.dimensions(i);
    if (size == Shape::kUnboundedSize) continue;
    if (size < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shape %s has negative size %d in dimension %d", Str(shape), size, i));
    }
    if (__builtin_mul_overflow(count, size, &count)) {
      return absl::InvalidArgumentError(
          absl::StrFormat("shape %s has too many elements", Str(shape)));
    }
  }
  if (shape.has_layout()) {
    absl::Status status = ValidateLayout(shape);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid layout in ", shape.ToString(), ": ", status.message()));
    }
  }
  // Padding, tiles and element width can overflow the byte size even where
  // the element count fits; every buffer size downstream trusts this check.
  return CheckedByteSize(shape).status();
}

// Compatible() where an unbounded size matches any size.
bool ShapesAgree(const Shape& a, const Shape& b) {
  if (a.element_type() != b.element_type()) return false;
  if (a.IsTuple()) {
    if (a.tuple_size() != b.tuple_size()) return false;
    for (int64_t i = 0; i < a.tuple_size(); ++i) {
      if (!ShapesAgree(a.tuple_shapes(i), b.tuple_shapes(i))) return false;
    }
    return true;
  }
  if (!a.IsArray()) return true;
  if (a.rank() != b.rank()) return false;
  for (int64_t i = 0; i < a.rank(); ++i) {
    const int64_t x = a.dimensions(i);
    const int64_t y = b.dimensions(i);
    if (x != y && x != Shape::kUnboundedSize && y != Shape::kUnboundedSize) return false;
  }
  return true;
}

// Whether `index` names a subshape of `shape`.
bool ValidShapeIndex(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    if (!s->IsTuple() || i < 0 || i >= s->tuple_size()) return false;
    s = &s->tuple_shapes(i);
  }
  return true;
}

const Shape& SubshapeAt(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) s = &s->tuple_shapes(i);
  return *s;
}

// Pass 1 for one computation.
absl::Status VerifyStructure(const Computation& computation,
                             const absl::flat_hash_set<const Computation*>& module_computations) {
  absl::flat_hash_map<const Instruction*, int64_t> position;
  absl::flat_hash_set<std::string> names;
  const auto& instructions = computation.instructions();
  for (int64_t k = 0; k < static_cast<int64_t>(instructions.size()); ++k) {
    const Instruction* instruction = instructions[k].get();
    if (instruction == nullptr) {
      return ComputationError(computation, absl::StrCat("instruction #", k, " is null"));
    }
    const Instruction& instr = *instruction;
    if (instr.name().empty()) {
      return ComputationError(computation, absl::StrCat("instruction #", k, " (",
                                                        OpcodeName(instr.opcode()),
                                                        ") has no name"));
    }
    if (!names.insert(instr.name()).second) {
      return InstructionError(computation, instr, "name is used by another instruction");
    }
    if (instr.parent() != &computation) {
      return InstructionError(computation, instr, "instruction's parent is another computation");
    }
    const int arity = OpcodeArity(instr.opcode());
    if (arity != kVariadic && instr.operand_count() != arity) {
      return InstructionError(
          computation, instr,
          absl::StrFormat("%s takes %d operands, has %d", OpcodeName(instr.opcode()), arity,
                          instr.operand_count()));
    }
    for (int64_t i = 0; i < instr.operand_count(); ++i) {
      const Instruction* operand = instr.operand(i);
      if (operand == nullptr) {
        return InstructionError(computation, instr, absl::StrCat("operand ", i, " is null"));
      }
      auto it = position.find(operand);
      if (it == position.end()) {
        // Either later in this computation or not in it at all.
        const bool later = operand->parent() == &computation;
        return InstructionError(
            computation, instr,
            absl::StrCat("operand ", i, " (", operand->name(), ") ",
                         later ? "is defined after its user"
                               : "belongs to another computation"));
      }
    }
    for (const Instruction* predecessor : instr.control_predecessors()) {
      if (predecessor == nullptr || predecessor->parent() != &computation) {
        return InstructionError(computation, instr,
                                "control predecessor is null or in another computation");
      }
    }
    for (const Computation* called : instr.called_computations()) {
      if (called == nullptr) {
        return InstructionError(computation, instr, "a called computation is null");
      }
      if (!module_computations.contains(called)) {
        return InstructionError(
            computation, instr,
            absl::StrCat("called computation ", called->name(), " is not in the module"));
      }
    }
    if (instr.opcode() == Opcode::kParameter) {
      const int64_t number = instr.attrs().parameter_number;
      if (number < 0 || number >= computation.parameter_count() ||
          computation.parameter(number) != &instr) {
        return InstructionError(computation, instr,
                                absl::StrCat("parameter number ", number,
                                             " is negative or used by another parameter"));
      }
    }
    position[instruction] = k;
  }
  for (int64_t i = 0; i < computation.parameter_count(); ++i) {
    const Instruction* param = computation.parameter(i);
    if (param == nullptr) {
      return ComputationError(computation,
                              absl::StrCat("parameter numbers are not dense: no parameter ", i));
    }
    if (!position.contains(param)) {
      return ComputationError(computation,
                              absl::StrCat("parameter ", i, " is not one of its instructions"));
    }
  }
  if (computation.root() == nullptr) return ComputationError(computation, "has no root");
  if (!position.contains(computation.root())) {
    return ComputationError(computation, "root is not one of its instructions");
  }
  return absl::OkStatus();
}

// Rejects a cycle through operands and control predecessors (operands alone
// cannot form one: pass 1 has checked that they come first), naming the
// instructions on it. Iterative, so that long dependency chains cannot
// exhaust the stack.
absl::Status VerifyNoDependencyCycle(const Computation& computation) {
  enum State : uint8_t { kUnseen, kVisiting, kDone };
  absl::flat_hash_map<const Instruction*, State> state;
  struct Frame {
    const Instruction* instruction;
    size_t next;  // Index into operands, then control predecessors.
  };
  const auto predecessor = [](const Instruction* instr, size_t k) -> const Instruction* {
    const size_t operands = static_cast<size_t>(instr->operand_count());
    if (k < operands) return instr->operand(static_cast<int64_t>(k));
    k -= operands;
    const auto& control = instr->control_predecessors();
    return k < control.size() ? control[k] : nullptr;
  };
  for (const auto& start : computation.instructions()) {
    if (state[start.get()] != kUnseen) continue;
    std::vector<Frame> stack = {{start.get(), 0}};
    state[start.get()] = kVisiting;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const Instruction* next = predecessor(frame.instruction, frame.next++);
      if (next == nullptr) {
        state[frame.instruction] = kDone;
        stack.pop_back();
        continue;
      }
      State& s = state[next];
      if (s == kDone) continue;
      if (s == kVisiting) {
        // The cycle is the stack from `next` up; it runs user -> predecessor.
        std::vector<std::string> names;
        bool on_cycle = false;
        for (const Frame& f : stack) {
          if (f.instruction == next) on_cycle = true;
          if (on_cycle) names.push_back(f.instruction->name());
        }
        names.push_back(next->name());
        return InstructionError(
            computation, *next,
            absl::StrCat("operands and control-predecessors form a cycle: ",
                         absl::StrJoin(names, " waits for ")));
      }
      s = kVisiting;
      stack.push_back({next, 0});
    }
  }
  return absl::OkStatus();
}

// Rejects recursion (a computation that transitively calls itself) and
// calls nested deeper than kMaxCallDepth.
absl::Status VerifyAcyclic(const Module& module) {
  enum State { kVisiting = 1, kDone = 2 };
  absl::flat_hash_map<const Computation*, int> state;
  absl::flat_hash_map<const Computation*, int> height;  // Call depth below, itself included.
  for (const auto& start : module.computations()) {
    if (state[start.get()] == kDone) continue;
    // Iterative DFS: (computation, next instruction, next callee).
    struct Frame {
      const Computation* computation;
      size_t instruction;
      size_t callee;
    };
    std::vector<Frame> stack = {{start.get(), 0, 0}};
    state[start.get()] = kVisiting;
    while (!stack.empty()) {
      Frame& frame = stack.back();
      const auto& instructions = frame.computation->instructions();
      if (frame.instruction >= instructions.size()) {
        // Every callee is done: this computation's depth is one more than
        // the deepest of theirs.
        int depth = 1;
        for (const auto& instruction : instructions) {
          for (const Computation* callee : instruction->called_computations()) {
            depth = std::max(depth, height[callee] + 1);
          }
        }
        if (depth > kMaxCallDepth) {
          return ComputationError(
              *frame.computation,
              absl::StrCat("calls computations nested more than ", kMaxCallDepth,
                           " deep (the limit on nesting of call, fusion, while, conditional "
                           "and other called computations)"));
        }
        height[frame.computation] = depth;
        state[frame.computation] = kDone;
        stack.pop_back();
        continue;
      }
      const auto& called = instructions[frame.instruction]->called_computations();
      if (frame.callee >= called.size()) {
        ++frame.instruction;
        frame.callee = 0;
        continue;
      }
      const Computation* callee = called[frame.callee++];
      const int s = state[callee];
      if (s == kVisiting) {
        return ComputationError(*callee, "calls itself (recursion is not allowed)");
      }
      if (s == 0) {
        state[callee] = kVisiting;
        stack.push_back({callee, 0, 0});
      }
    }
  }
  return absl::OkStatus();
}

// Pass 2 for one instruction.
absl::Status VerifyShape(const Computation& computation, const Instruction& instr) {
  absl::Status valid = ValidateShape(instr.shape());
  if (!valid.ok()) return InstructionError(computation, instr, valid.message());
  absl::StatusOr<Shape> inferred = InferShape(instr);
  if (!inferred.ok()) return InstructionError(computation, instr, inferred.status().message());
  if (!ShapesAgree(instr.shape(), *inferred)) {
    return InstructionError(
        computation, instr,
        absl::StrCat(OpcodeName(instr.opcode()), ": shape ", Str(instr.shape()),
                     " differs from the inferred shape ", Str(*inferred)));
  }
  if (instr.opcode() == Opcode::kConstant && !ShapesAgree(instr.literal().shape(), instr.shape())) {
    return InstructionError(computation, instr,
                            absl::StrCat("constant: literal shape ", Str(instr.literal().shape()),
                                         " differs from the instruction shape ",
                                         Str(instr.shape())));
  }
  if (instr.opcode() == Opcode::kCustomCall) {
    for (const Shape& constraint : instr.attrs().operand_layout_constraints) {
      absl::Status status = ValidateShape(constraint);
      if (!status.ok()) {
        return InstructionError(computation, instr,
                                absl::StrCat("operand_layout_constraints: ", status.message()));
      }
    }
  }
  return absl::OkStatus();
}

// Pass 3: entry_computation_layout and input_output_alias.
absl::Status VerifyEntryInterface(const Module& module) {
  const Computation& entry = *module.entry();
  if (module.entry_parameter_layouts().has_value()) {
    const std::vector<Shape>& params = *module.entry_parameter_layouts();
    if (static_cast<int64_t>(params.size()) != entry.parameter_count()) {
      return ModuleError(module, absl::StrFormat(
                                     "entry_computation_layout has %d parameters but entry "
                                     "computation %s has %d",
                                     params.size(), entry.name(), entry.parameter_count()));
    }
    for (int64_t i = 0; i < entry.parameter_count(); ++i) {
      absl::Status valid = ValidateShape(params[i]);
      if (!valid.ok()) {
        return ModuleError(module, absl::StrCat("entry_computation_layout parameter ", i, ": ",
                                                valid.message()));
      }
      if (!ShapesAgree(params[i], entry.parameter(i)->shape())) {
        return ModuleError(module, absl::StrCat("entry_computation_layout parameter ", i, " ",
                                                Str(params[i]), " differs from parameter shape ",
                                                Str(entry.parameter(i)->shape())));
      }
    }
  }
  if (module.entry_result_layout().has_value()) {
    const Shape& result = *module.entry_result_layout();
    absl::Status valid = ValidateShape(result);
    if (!valid.ok()) {
      return ModuleError(module,
                         absl::StrCat("entry_computation_layout result: ", valid.message()));
    }
    if (!ShapesAgree(result, entry.root()->shape())) {
      return ModuleError(module, absl::StrCat("entry_computation_layout result ", Str(result),
                                              " differs from the root shape ",
                                              Str(entry.root()->shape())));
    }
  }
  for (const InputOutputAlias& alias : module.input_output_aliases()) {
    if (!ValidShapeIndex(entry.root()->shape(), alias.output_index)) {
      return ModuleError(module, "input_output_alias names an output index the result lacks");
    }
    if (alias.parameter_number < 0 || alias.parameter_number >= entry.parameter_count()) {
      return ModuleError(module, absl::StrCat("input_output_alias names parameter ",
                                              alias.parameter_number, ", which does not exist"));
    }
    const Shape& param = entry.parameter(alias.parameter_number)->shape();
    if (!ValidShapeIndex(param, alias.parameter_index)) {
      return ModuleError(module, "input_output_alias names a parameter index the parameter lacks");
    }
    // Aliasing shares a buffer, so (as in XLA) only the byte sizes must
    // agree: an output may be a bitcast of the parameter it reuses.
    const Shape& out = SubshapeAt(entry.root()->shape(), alias.output_index);
    const Shape& in = SubshapeAt(param, alias.parameter_index);
    if (out.IsTuple() != in.IsTuple() || ByteSize(out) != ByteSize(in)) {
      return ModuleError(module, absl::StrCat("input_output_alias pairs output ", out.ToString(),
                                              " with parameter ", in.ToString(),
                                              ", whose byte sizes differ"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status VerifyShape(const Shape& shape) { return ValidateShape(shape); }

absl::Status VerifyModule(const Module& module) {
  absl::flat_hash_set<const Computation*> computations;
  absl::flat_hash_set<std::string> computation_names;
  for (const auto& computation : module.computations()) {
    if (computation == nullptr) return ModuleError(module, "a computation is null");
    if (!computation_names.insert(computation->name()).second) {
      return ModuleError(module,
                         absl::StrCat("computation name ", computation->name(), " is used twice"));
    }
    computations.insert(computation.get());
  }
  if (module.entry() == nullptr) return ModuleError(module, "has no entry computation");
  if (!computations.contains(module.entry())) {
    return ModuleError(module, "the entry computation is not in the module");
  }
  for (const auto& computation : module.computations()) {
    XJIT_RETURN_IF_ERROR(VerifyStructure(*computation, computations));
    XJIT_RETURN_IF_ERROR(VerifyNoDependencyCycle(*computation));
  }
  XJIT_RETURN_IF_ERROR(VerifyAcyclic(module));
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      XJIT_RETURN_IF_ERROR(VerifyShape(*computation, *instruction));
    }
  }
  return VerifyEntryInterface(module);
}

}  // namespace xjit
