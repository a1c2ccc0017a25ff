#include "passes/no_op_bitcast.h"

#include <algorithm>
#include <string>
#include <vector>

#include "ir/layout_util.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"

namespace xjit {
namespace {

// One dimension of an element placement: `size` elements, `logical` apart in
// the common logical order and `physical` apart in memory.
struct Run {
  int64_t size;
  int64_t logical;
  int64_t physical;
  bool operator==(const Run&) const = default;
};


// Runs ordered by decreasing logical stride, size-1 dimensions dropped, and
// neighbours contiguous in both orders merged: a canonical description of
// the map from logical position to memory position.
std::vector<Run> Canonical(std::vector<Run> runs) {
  std::vector<Run> kept;
  for (const Run& r : runs) {
    if (r.size != 1) kept.push_back(r);
  }
  std::sort(kept.begin(), kept.end(),
            [](const Run& a, const Run& b) { return a.logical > b.logical; });
  std::vector<Run> merged;
  for (const Run& r : kept) {
    if (!merged.empty() && merged.back().logical == r.size * r.logical &&
        merged.back().physical == r.size * r.physical) {
      merged.back() = {merged.back().size * r.size, r.logical, r.physical};
    } else {
      merged.push_back(r);
    }
  }
  return merged;
}

bool PlainArray(const Shape& shape) {
  return shape.IsArray() && shape.has_layout() && shape.layout().IsPlain() &&
         !shape.is_dynamic();
}

}  // namespace

bool IsNoOpMove(const Instruction& instruction) {
  const Opcode opcode = instruction.opcode();
  if (opcode != Opcode::kReshape && opcode != Opcode::kTranspose) return false;
  const Shape& out = instruction.shape();
  const Shape& in = instruction.operand(0)->shape();
  if (!PlainArray(out) || !PlainArray(in) || in.element_type() != out.element_type()) {
    return false;
  }
  // Logical positions: the operand's row-major order (a reshape keeps it; a
  // transpose's result dimension k is the operand's dimension perm[k]).
  std::vector<int64_t> in_logical(in.rank());
  int64_t stride = 1;
  for (int64_t d = in.rank() - 1; d >= 0; --d) {
    in_logical[d] = stride;
    stride *= in.dimensions(d);
  }
  const std::vector<int64_t> in_physical = PlainStrides(in);
  const std::vector<int64_t> out_physical = PlainStrides(out);
  std::vector<Run> in_runs, out_runs;
  for (int64_t d = 0; d < in.rank(); ++d) {
    in_runs.push_back({in.dimensions(d), in_logical[d], in_physical[d]});
  }
  if (opcode == Opcode::kTranspose) {
    const std::vector<int64_t>& perm = instruction.attrs().dimensions;
    if (static_cast<int64_t>(perm.size()) != out.rank()) return false;
    for (int64_t k = 0; k < out.rank(); ++k) {
      out_runs.push_back({out.dimensions(k), in_logical[perm[k]], out_physical[k]});
    }
  } else {
    int64_t out_stride = 1;
    std::vector<int64_t> out_logical(out.rank());
    for (int64_t d = out.rank() - 1; d >= 0; --d) {
      out_logical[d] = out_stride;
      out_stride *= out.dimensions(d);
    }
    for (int64_t d = 0; d < out.rank(); ++d) {
      out_runs.push_back({out.dimensions(d), out_logical[d], out_physical[d]});
    }
  }
  return Canonical(in_runs) == Canonical(out_runs);
}

absl::StatusOr<bool> NoOpMovesToBitcast::Run(Module* module) {
  bool changed = false;
  for (Computation* computation : ComputationsOf(*module)) {
    bool computation_changed = false;
    for (Instruction* instruction : InstructionsOf(*computation)) {
      if (!IsNoOpMove(*instruction) || HasControlEdges(*instruction)) continue;
      NewInstruction bitcast;
      bitcast.opcode = Opcode::kBitcast;
      bitcast.operands = {instruction->operand(0)};
      bitcast.shape = instruction->shape();
      const std::string name = instruction->name();
      XJIT_ASSIGN_OR_RETURN(Instruction * replacement,
                            AddInstruction(computation, std::move(bitcast)));
      XJIT_CHECK(ReplaceInstruction(instruction, replacement));
      // The bitcast takes the name of what it replaces, now gone.
      if (computation->FindInstruction(name) == nullptr) replacement->set_name(name);
      computation_changed = true;
    }
    if (computation_changed) {
      computation->SortTopologically();
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
