#include "passes/expand_topk.h"

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"

namespace xjit {
namespace {

// The comparator computation (a, b, i, j) -> compare(a, b), for one value
// type and direction.
Computation* MakeComparator(Module* module, ElementType type, bool largest) {
  auto owned = std::make_unique<Computation>(
      UniqueComputationName(*module, largest ? "topk_greater" : "topk_less"));
  Computation* comparator = owned.get();
  const ElementType types[4] = {type, type, ElementType::kS32, ElementType::kS32};
  const char* names[4] = {"a", "b", "i", "j"};
  std::vector<Instruction*> parameters;
  for (int64_t p = 0; p < 4; ++p) {
    auto parameter = std::make_unique<Instruction>(Opcode::kParameter, Shape::Scalar(types[p]));
    parameter->mutable_attrs()->parameter_number = p;
    parameter->set_name(names[p]);
    parameters.push_back(comparator->AddInstruction(std::move(parameter)));
  }
  auto compare = std::make_unique<Instruction>(Opcode::kCompare, Shape::Scalar(ElementType::kPred));
  compare->AppendOperand(parameters[0]);
  compare->AppendOperand(parameters[1]);
  compare->mutable_attrs()->comparison_direction =
      largest ? ComparisonDirection::kGt : ComparisonDirection::kLt;
  if (IsFloat(type)) compare->mutable_attrs()->comparison_type = ComparisonType::kTotalOrder;
  compare->set_name("compare");
  comparator->set_root(comparator->AddInstruction(std::move(compare)));
  module->AddComputation(std::move(owned));
  return comparator;
}

absl::Status Expand(Module* module, Computation* c, Instruction* topk, int64_t k, bool largest) {
  Instruction* operand = topk->operand(0);
  const Shape& shape = operand->shape();
  const int64_t rank = shape.rank();
  std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());

  NewInstruction iota;
  iota.opcode = Opcode::kIota;
  iota.attrs.iota_dimension = rank - 1;
  iota.shape = Shape::Array(ElementType::kS32, dims);
  XJIT_ASSIGN_OR_RETURN(Instruction * indices, AddInstruction(c, std::move(iota)));

  NewInstruction sort;
  sort.opcode = Opcode::kSort;
  sort.operands = {operand, indices};
  sort.attrs.dimensions = {rank - 1};
  sort.attrs.has_dimensions = true;
  sort.attrs.is_stable = true;
  sort.called_computations = {MakeComparator(module, shape.element_type(), largest)};
  XJIT_ASSIGN_OR_RETURN(Instruction * sorted, AddInstruction(c, std::move(sort)));

  std::vector<Instruction*> elements;
  for (int64_t e = 0; e < 2; ++e) {
    NewInstruction gte;
    gte.opcode = Opcode::kGetTupleElement;
    gte.operands = {sorted};
    gte.attrs.tuple_index = e;
    XJIT_ASSIGN_OR_RETURN(Instruction * column, AddInstruction(c, std::move(gte)));
    NewInstruction slice;
    slice.opcode = Opcode::kSlice;
    slice.operands = {column};
    for (int64_t d = 0; d < rank; ++d) {
      slice.attrs.slice.push_back({0, d == rank - 1 ? k : dims[d], 1});
    }
    slice.shape = topk->shape().tuple_shapes(e);  // Its layout too.
    XJIT_ASSIGN_OR_RETURN(Instruction * first_k, AddInstruction(c, std::move(slice)));
    elements.push_back(first_k);
  }
  NewInstruction tuple;
  tuple.opcode = Opcode::kTuple;
  tuple.operands = elements;
  tuple.shape = topk->shape();
  XJIT_ASSIGN_OR_RETURN(Instruction * result, AddInstruction(c, std::move(tuple)));
  if (!ReplaceInstruction(topk, result)) {
    return absl::InternalError(absl::StrCat("expand-topk: cannot replace ", topk->name()));
  }
  return absl::OkStatus();
}

// XLA's "TopK" custom call, when no handler is registered for it (a
// registered one is the user's and runs as such): one array operand of rank
// >= 1 and a (values, s32 indices) result whose dimensions are the
// operand's with the last one k <= its length; the evaluator gives it
// topk's values with largest=true (interpreter/evaluator.cc).
bool IsTopKCustomCall(const Instruction& instruction, int64_t* k) {
  if (instruction.opcode() != Opcode::kCustomCall ||
      instruction.attrs().custom_call_target != "TopK" || instruction.operand_count() != 1 ||
      FfiRegistry::Global().Find("TopK") != nullptr ||
      CustomCallRegistry::Global().Find("TopK") != nullptr) {
    return false;
  }
  const Shape& operand = instruction.operand(0)->shape();
  const Shape& result = instruction.shape();
  if (!operand.IsArray() || operand.rank() < 1 || !result.IsTuple() || result.tuple_size() != 2) {
    return false;
  }
  const Shape& values = result.tuple_shapes(0);
  const Shape& indices = result.tuple_shapes(1);
  const int64_t rank = operand.rank();
  if (!values.IsArray() || !indices.IsArray() || values.rank() != rank || indices.rank() != rank ||
      values.element_type() != operand.element_type() ||
      indices.element_type() != ElementType::kS32 || values.dimensions() != indices.dimensions()) {
    return false;
  }
  for (int64_t d = 0; d + 1 < rank; ++d) {
    if (values.dimensions(d) != operand.dimensions(d)) return false;
  }
  *k = values.dimensions(rank - 1);
  return *k <= operand.dimensions(rank - 1);
}

// Element types whose topk the JIT compiles as such (a selection,
// runtime/sort/topk.h): pred, 8- to 64-bit integers, f16, bf16, f32, f64.
bool HasCompiledTopK(ElementType type) {
  switch (type) {
    case ElementType::kPred:
    case ElementType::kS8:
    case ElementType::kS16:
    case ElementType::kS32:
    case ElementType::kS64:
    case ElementType::kU8:
    case ElementType::kU16:
    case ElementType::kU32:
    case ElementType::kU64:
    case ElementType::kF16:
    case ElementType::kBF16:
    case ElementType::kF32:
    case ElementType::kF64:
      return true;
    default:
      return false;
  }
}

}  // namespace

absl::StatusOr<bool> ExpandTopK::Run(Module* module) {
  bool changed = false;
  for (Computation* computation : ComputationsOf(*module)) {
    for (Instruction* instruction : InstructionsOf(*computation)) {
      int64_t k = 0;
      bool largest = true;
      if (instruction->opcode() == Opcode::kTopK) {
        const Shape& operand = instruction->operand(0)->shape();
        if (operand.IsArray() && HasCompiledTopK(operand.element_type())) continue;
        k = instruction->attrs().k;
        largest = instruction->attrs().largest;
      } else if (!IsTopKCustomCall(*instruction, &k)) {
        continue;
      }
      const Shape& shape = instruction->operand(0)->shape();
      // The indices are s32 (the verifier checks topk's result shape); a
      // row longer than s32 can index is left to the evaluator.
      if (!shape.IsArray() || shape.rank() < 1 ||
          shape.dimensions(shape.rank() - 1) > int64_t{1} << 31) {
        continue;
      }
      XJIT_RETURN_IF_ERROR(Expand(module, computation, instruction, k, largest));
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
