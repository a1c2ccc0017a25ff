// A tiny harness for shape-inference and verifier tests: builds instructions
// directly with the IR API (no parser, no builder), so each test states
// exactly the operands, attributes and called computations it checks.
#ifndef XJIT_TESTS_SHAPE_INFERENCE_TEST_GRAPH_H_
#define XJIT_TESTS_SHAPE_INFERENCE_TEST_GRAPH_H_

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/computation.h"
#include "ir/instruction.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/shape_inference/shape_inference.h"

namespace xjit::testing {

using AttrSetter = std::function<void(InstructionAttributes*)>;

inline Shape F32(std::initializer_list<int64_t> dims) {
  return Shape::Array(ElementType::kF32, dims);
}
inline Shape S32(std::initializer_list<int64_t> dims) {
  return Shape::Array(ElementType::kS32, dims);
}
inline Shape Arr(ElementType type, std::initializer_list<int64_t> dims) {
  return Shape::Array(type, dims);
}

// The shape's text without layout, "f32[2,3]", "(f32[2], s32[])".
inline std::string Text(const Shape& shape) { return shape.ToString(/*print_layout=*/false); }

class Graph {
 public:
  Graph() : module_(std::make_unique<Module>("m")) {
    entry_ = NewComputation("entry");
    module_->set_entry(entry_);
  }

  Module& module() { return *module_; }
  Computation* entry() { return entry_; }

  // Computations are added to the module in creation order; create callees
  // before callers to keep the module in definition order.
  Computation* NewComputation(const std::string& name) {
    return module_->AddComputation(std::make_unique<Computation>(name));
  }

  Instruction* Param(Computation* c, int64_t number, Shape shape) {
    auto instruction = std::make_unique<Instruction>(Opcode::kParameter, std::move(shape));
    instruction->set_name(absl::StrCat("p", number));
    instruction->mutable_attrs()->parameter_number = number;
    return c->AddInstruction(std::move(instruction));
  }
  Instruction* Param(int64_t number, Shape shape) { return Param(entry_, number, std::move(shape)); }

  // Adds an instruction to `c` and makes it the root.
  Instruction* Add(Computation* c, Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   const AttrSetter& set = nullptr, std::vector<Computation*> called = {}) {
    auto instruction = std::make_unique<Instruction>(opcode, std::move(shape));
    instruction->set_name(absl::StrCat(OpcodeName(opcode), ".", next_id_++));
    if (set) set(instruction->mutable_attrs());
    instruction->set_called_computations(std::move(called));
    for (Instruction* operand : operands) instruction->AppendOperand(operand);
    Instruction* raw = c->AddInstruction(std::move(instruction));
    c->set_root(raw);
    return raw;
  }
  Instruction* Add(Opcode opcode, Shape shape, std::vector<Instruction*> operands,
                   const AttrSetter& set = nullptr, std::vector<Computation*> called = {}) {
    return Add(entry_, opcode, std::move(shape), std::move(operands), set, std::move(called));
  }

  // Adds the instruction and returns InferShape's answer for it. `shape` is
  // the given shape (only read by opcodes whose result it defines).
  absl::StatusOr<Shape> Infer(Opcode opcode, std::vector<Instruction*> operands,
                              const AttrSetter& set = nullptr,
                              std::vector<Computation*> called = {}, Shape shape = Shape()) {
    return InferShape(*Add(opcode, std::move(shape), std::move(operands), set, std::move(called)));
  }

  // Infer() for an instruction that is removed again afterwards, so that
  // loops over many cases do not grow the computation.
  absl::StatusOr<Shape> InferThenRemove(Opcode opcode, std::vector<Instruction*> operands,
                                        const AttrSetter& set, std::vector<Computation*> called,
                                        Shape shape) {
    Instruction* previous_root = entry_->root();
    Instruction* added = Add(opcode, std::move(shape), std::move(operands), set, std::move(called));
    absl::StatusOr<Shape> result = InferShape(*added);
    entry_->set_root(previous_root);
    entry_->RemoveInstruction(added);
    return result;
  }

  // A computation (T, T) -> T applying `opcode` to two scalars of `type`.
  Computation* ScalarBinary(const std::string& name, ElementType type, Opcode opcode) {
    Computation* c = NewComputation(name);
    Instruction* a = Param(c, 0, Shape::Scalar(type));
    Instruction* b = Param(c, 1, Shape::Scalar(type));
    Shape result = Shape::Scalar(opcode == Opcode::kCompare ? ElementType::kPred : type);
    Add(c, opcode, result, {a, b}, [](InstructionAttributes* attrs) {
      attrs->comparison_direction = ComparisonDirection::kLt;
    });
    return c;
  }

  // A computation with the given parameters whose root is parameter
  // `root_param` (or a fresh constant of `root` when root_param < 0).
  Computation* Signature(const std::string& name, std::vector<Shape> params, Shape root,
                         int root_param = -1) {
    Computation* c = NewComputation(name);
    std::vector<Instruction*> ps;
    for (size_t i = 0; i < params.size(); ++i) ps.push_back(Param(c, i, params[i]));
    if (root_param >= 0) {
      c->set_root(ps[root_param]);
    } else {
      Instruction* constant = Add(c, Opcode::kConstant, root, {});
      constant->set_literal(Literal(root));
    }
    return c;
  }

 private:
  std::unique_ptr<Module> module_;
  Computation* entry_;
  int next_id_ = 0;
};

}  // namespace xjit::testing

#endif  // XJIT_TESTS_SHAPE_INFERENCE_TEST_GRAPH_H_
