// ScanCumulativeWindows (see scan_cumulative_windows.h).
#include "passes/scan_cumulative_windows.h"

#include <climits>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "interpreter/evaluator.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// The scanned dimension of a cumulative window over `dims` and whether it is
// reversed (padded high), or nullopt.
struct Scan {
  int64_t dimension = 0;
  bool reverse = false;
};

std::optional<Scan> CumulativeScan(const Window& window, absl::Span<const int64_t> dims) {
  if (window.size() != dims.size()) return std::nullopt;
  std::optional<Scan> scan;
  for (size_t d = 0; d < window.size(); ++d) {
    const WindowDimension& w = window[d];
    if (w.stride != 1 || w.base_dilation != 1 || w.window_dilation != 1 || w.window_reversal) {
      return std::nullopt;
    }
    if (w.size == 1 && w.padding_low == 0 && w.padding_high == 0) continue;
    const int64_t n = dims[d];
    // Positions are s32 (an iota along the dimension).
    if (scan.has_value() || n < 2 || n > INT32_MAX || w.size != n) return std::nullopt;
    if (w.padding_low == n - 1 && w.padding_high == 0) {
      scan = Scan{static_cast<int64_t>(d), false};
    } else if (w.padding_low == 0 && w.padding_high == n - 1) {
      scan = Scan{static_cast<int64_t>(d), true};
    } else {
      return std::nullopt;
    }
  }
  return scan;
}

// Whether `reducer` is (p0, p1) -> one of the plain folds the cumulative
// library call runs (jit/calls/cumulative_call.h).
bool IsPlainFold(const Computation& reducer) {
  const Instruction* root = reducer.root();
  switch (root->opcode()) {
    case Opcode::kAdd: case Opcode::kMultiply: case Opcode::kMaximum: case Opcode::kMinimum:
    case Opcode::kAnd: case Opcode::kOr:
      break;
    default:
      return false;
  }
  if (root->operand_count() != 2) return false;
  const Instruction* a = root->operand(0);
  const Instruction* b = root->operand(1);
  return a->opcode() == Opcode::kParameter && b->opcode() == Opcode::kParameter && a != b;
}

// Whether `reducer` is a scalar (p0, p1) -> scalar of `type` made of
// parameters, scalar constants and elementwise operations only.
bool IsElementwiseReducer(const Computation& reducer, ElementType type) {
  if (reducer.parameter_count() != 2 || reducer.root()->shape().IsTuple() ||
      reducer.root()->shape().rank() != 0 || reducer.root()->shape().element_type() != type) {
    return false;
  }
  for (const auto& owned : reducer.instructions()) {
    const Instruction* instruction = owned.get();
    if (!instruction->shape().IsArray() || instruction->shape().rank() != 0) return false;
    if (!instruction->called_computations().empty()) return false;
    const Opcode opcode = instruction->opcode();
    if (opcode == Opcode::kParameter) {
      if (instruction->shape().element_type() != type) return false;
      continue;
    }
    if (opcode == Opcode::kConstant) continue;
    if (!IsElementwise(opcode) || HasSideEffect(opcode)) return false;
  }
  return true;
}

// Whether f(init, init) has init's bits.
bool IsIdempotentInit(const Computation& reducer, const Instruction& init) {
  if (init.opcode() != Opcode::kConstant || !init.shape().IsArray() || init.shape().rank() != 0) {
    return false;
  }
  Evaluator evaluator;
  const Literal* arguments[2] = {&init.literal(), &init.literal()};
  absl::StatusOr<Literal> result = evaluator.EvaluateComputation(reducer, arguments);
  return result.ok() && result->shape().IsArray() && result->shape().rank() == 0 &&
         result->GetBitsLinear(0) == init.literal().GetBitsLinear(0);
}

// f(a, b) elementwise on arrays of `dims`: the reducer's instructions copied
// into `c` with array shapes, its constants broadcast.
absl::StatusOr<Instruction*> Apply(Computation* c, const Computation& reducer, Instruction* a,
                                   Instruction* b, absl::Span<const int64_t> dims) {
  absl::flat_hash_map<const Instruction*, Instruction*> copies;
  for (const auto& owned : reducer.instructions()) {
    const Instruction* instruction = owned.get();
    const Shape shape = Shape::Array(instruction->shape().element_type(), dims);
    if (instruction->opcode() == Opcode::kParameter) {
      copies[instruction] = instruction->attrs().parameter_number == 0 ? a : b;
      continue;
    }
    if (instruction->opcode() == Opcode::kConstant) {
      Instruction* constant = AddConstant(c, instruction->literal(), instruction->name());
      XJIT_ASSIGN_OR_RETURN(copies[instruction], AddBroadcastScalar(c, constant, shape));
      continue;
    }
    NewInstruction spec;
    spec.opcode = instruction->opcode();
    for (const Instruction* operand : instruction->operands()) {
      spec.operands.push_back(copies.at(operand));
    }
    spec.attrs = instruction->attrs();
    spec.shape = shape;
    spec.name = instruction->name();
    XJIT_ASSIGN_OR_RETURN(copies[instruction], AddInstruction(c, std::move(spec)));
  }
  return copies.at(reducer.root());
}

// opt-barrier(value): fusion never fuses across it, so each step reads its
// input materialised instead of recomputing every earlier step per element
// (a step reads its input twice: cheap producers would be duplicated into it,
// 2^steps times).
absl::StatusOr<Instruction*> Barrier(Computation* c, Instruction* value) {
  NewInstruction barrier;
  barrier.opcode = Opcode::kOptimizationBarrier;
  barrier.operands = {value};
  barrier.shape = value->shape();
  barrier.name = "scan_barrier";
  return AddInstruction(c, std::move(barrier));
}

absl::StatusOr<Instruction*> AddScan(Computation* c, Instruction* window, const Scan& scan) {
  const Computation& reducer = *window->called_computations()[0];
  Instruction* x = window->operand(0);
  Instruction* init = window->operand(1);
  const Shape& shape = x->shape();
  const std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  const int64_t rank = shape.rank();
  const int64_t d = scan.dimension;
  const int64_t n = dims[d];

  NewInstruction iota;
  iota.opcode = Opcode::kIota;
  iota.attrs.iota_dimension = d;
  iota.shape = Shape::Array(ElementType::kS32, dims);
  iota.name = "scan_position";
  XJIT_ASSIGN_OR_RETURN(Instruction * position, AddInstruction(c, std::move(iota)));

  for (int64_t s = 1; s < n; s *= 2) {
    if (s > 1) {
      XJIT_ASSIGN_OR_RETURN(x, Barrier(c, x));
    }
    // shifted[i] = x[i - s] (x[i + s] reversed), init where out of range.
    NewInstruction slice;
    slice.opcode = Opcode::kSlice;
    slice.operands = {x};
    for (int64_t k = 0; k < rank; ++k) slice.attrs.slice.push_back({0, dims[k], 1});
    slice.attrs.slice[d] = scan.reverse ? SliceDimension{s, n, 1} : SliceDimension{0, n - s, 1};
    slice.name = "scan_slice";
    XJIT_ASSIGN_OR_RETURN(Instruction * sliced, AddInstruction(c, std::move(slice)));
    NewInstruction pad;
    pad.opcode = Opcode::kPad;
    pad.operands = {sliced, init};
    pad.attrs.padding.assign(rank, PaddingDimension{});
    if (scan.reverse) {
      pad.attrs.padding[d].high = s;
    } else {
      pad.attrs.padding[d].low = s;
    }
    pad.name = "scan_shift";
    XJIT_ASSIGN_OR_RETURN(Instruction * padded, AddInstruction(c, std::move(pad)));
    // The shift alone is data movement; the step's arithmetic then runs in
    // an elementwise kernel.
    XJIT_ASSIGN_OR_RETURN(Instruction * shifted, Barrier(c, padded));
    // The earlier element is the reducer's first operand, as in the window.
    XJIT_ASSIGN_OR_RETURN(Instruction * folded,
                          scan.reverse ? Apply(c, reducer, x, shifted, dims)
                                       : Apply(c, reducer, shifted, x, dims));
    Instruction* bound = AddConstant(
        c, Literal::ScalarInt(ElementType::kS32, scan.reverse ? n - s : s), "scan_bound");
    XJIT_ASSIGN_OR_RETURN(Instruction * bounds,
                          AddBroadcastScalar(c, bound, position->shape()));
    NewInstruction compare;
    compare.opcode = Opcode::kCompare;
    compare.operands = {position, bounds};
    compare.attrs.comparison_direction =
        scan.reverse ? ComparisonDirection::kLt : ComparisonDirection::kGe;
    compare.name = "scan_in_range";
    XJIT_ASSIGN_OR_RETURN(Instruction * in_range, AddInstruction(c, std::move(compare)));
    NewInstruction select;
    select.opcode = Opcode::kSelect;
    select.operands = {in_range, folded, x};
    select.name = "scan_step";
    XJIT_ASSIGN_OR_RETURN(x, AddInstruction(c, std::move(select)));
  }
  XJIT_ASSIGN_OR_RETURN(Instruction * inits, AddBroadcastScalar(c, init, shape));
  return Apply(c, reducer, inits, x, dims);
}

}  // namespace

absl::StatusOr<bool> ScanCumulativeWindows::Run(Module* module) {
  bool changed = false;
  for (Computation* computation : ComputationsOf(*module)) {
    bool here = false;
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (instruction->opcode() != Opcode::kReduceWindow || instruction->operand_count() != 2 ||
          instruction->called_computations().size() != 1 || HasControlEdges(*instruction)) {
        continue;
      }
      const Shape& shape = instruction->shape();
      const Shape& operand = instruction->operand(0)->shape();
      if (!shape.IsArray() || !operand.IsArray() ||
          !(shape == Shape::Array(shape.element_type(), shape.dimensions())) ||
          shape.dimensions() != operand.dimensions() ||
          shape.element_type() != operand.element_type() ||
          !(IsFloat(shape.element_type()) || IsInteger(shape.element_type()))) {
        continue;
      }
      const std::optional<Scan> scan =
          CumulativeScan(instruction->attrs().window, shape.dimensions());
      const Computation& reducer = *instruction->called_computations()[0];
      if (!scan.has_value() || !IsElementwiseReducer(reducer, shape.element_type()) ||
          (!scan->reverse && IsPlainFold(reducer)) ||
          !IsIdempotentInit(reducer, *instruction->operand(1))) {
        continue;
      }
      XJIT_ASSIGN_OR_RETURN(Instruction * result, AddScan(computation, instruction, *scan));
      if (!ReplaceInstruction(instruction, result)) {
        return absl::InternalError("scan-cumulative-windows: the scan's shape differs");
      }
      here = true;
    }
    if (here) {
      computation->SortTopologically();
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
