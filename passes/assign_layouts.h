// AssignLayouts ("assign-layouts"): gives every array of the module the
// physical layout the later stages compute on, and inserts `copy` where a
// value must change layout between producer and consumer.
//
// Requires: a verified module. Guarantees: a verified module with the same
// results, in which
//   - the entry parameters have the caller's layouts (entry_computation_layout
//     if written, else the parameter's own) and the entry result has the
//     caller's result layout;
//   - every consumer sees each operand in a layout it accepts (below); where
//     the producer's layout is not accepted, a `copy` (or, for a constant, a
//     relaid-out constant) sits between them;
//   - no layout other than the entry interface, bitcast and custom-call results
//     is tiled, padded, packed or in a non-default memory space: such entry
//     layouts are converted by a copy to a plain layout after the parameter and
//     by a copy from a plain layout at the result.
//
// What each consumer accepts:
//   - dot: an operand whose two minor-most physical dimensions are its
//     contracting and free dimension in either order, batch dimensions major
//     (a "GEMM operand"): row-major or column-major matrices both go to BLAS
//     without a copy, the column-major one with its transpose flag set.
//     ComputeDotGemmForm reads the flags back from the layouts.
//   - convolution: the input with feature dimension minor and batch major
//     (NHWC), the kernel with output feature minor, then input feature, then
//     spatial dimensions (HWIO); the result is row-major in its own
//     dimension order. Except: an input already channels-major (NCHW, NCW)
//     stays so when the convolution has fewer than 16 output features, no
//     groups, no base dilation and a channels-major result (its per-image
//     GEMM then has few rows and runs unpacked; assign_layouts.cc,
//     KeepsChannelsMajorInput).
//   - reduce: its inputs in any plain layout they share (the reduction walks
//     storage order, so a reduction over a physically minor dimension stays
//     one; no copy is spent to move the reduced dimension, since the copy
//     would cost the pass over memory the reduction saves).
//   - copy and get-tuple-element: anything. bitcast: its operand's layout as
//     written (a bitcast's meaning depends on it). custom-call: its
//     operand_layout_constraints, else the layouts written.
//   - everything else: the default major-to-minor layout.
// A dot whose only user is a transpose swapping its lhs-free and rhs-free
// dimension groups (batch dimensions staying major; outer products too) is
// laid out so that the transpose's default-layout result is its bytes (the
// GEMM writes a column-major C, which costs BLAS nothing).
// A transpose whose operand has a plain layout gets the permuted layout that
// makes it move nothing (no-op-bitcast, which runs next, turns it into a
// `bitcast`) when all its users accept that layout (e.g. it feeds a dot,
// which then takes the transposed operand through a BLAS flag), when that
// layout is the default one, or when the computation's result takes the
// transpose in exactly that layout (its other users then get the copy, which
// fuses into their loops; the dot rule above then leaves the dot row-major).
#ifndef XJIT_PASSES_ASSIGN_LAYOUTS_H_
#define XJIT_PASSES_ASSIGN_LAYOUTS_H_

#include <cstdint>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/instruction.h"
#include "ir/module.h"
#include "passes/pass.h"

namespace xjit {

struct AssignLayoutsOptions {
  // Convolution operands in NHWC / HWIO (see above); off: default layouts.
  bool canonical_convolution_layouts = true;
};

class AssignLayouts : public Pass {
 public:
  explicit AssignLayouts(AssignLayoutsOptions options = {}) : options_(options) {}
  absl::string_view name() const override { return "assign-layouts"; }
  absl::StatusOr<bool> Run(Module* module) override;

 private:
  AssignLayoutsOptions options_;
};

// How a dot maps onto a (batched) row-major GEMM C[m,n] = op(A)[m,k] op(B)[k,n],
// with A the lhs and B the rhs as stored. Batches are contiguous: batch b of
// A starts at element b * stride_a, and so on.
struct DotGemmForm {
  int64_t batch = 1;
  int64_t m = 1, n = 1, k = 1;
  bool transpose_a = false;  // A is stored k-major-to-m-minor (column-major).
  bool transpose_b = false;  // B is stored with n major, k minor.
  int64_t lda = 1, ldb = 1, ldc = 1;
  int64_t stride_a = 0, stride_b = 0, stride_c = 0;
};

// The GEMM form of a dot whose operands and result have GEMM layouts (as
// AssignLayouts leaves them): one contracting dimension, at most one free
// dimension per operand, batch dimensions major and in order, result
// row-major. nullopt when the dot does not fit (the runtime then needs
// another strategy).
std::optional<DotGemmForm> ComputeDotGemmForm(const Instruction& dot);

// Whether `operand` (a dot operand with the given batch and contracting
// dimensions) has a layout BLAS takes without a copy.
bool IsGemmOperandLayout(const Shape& operand, absl::Span<const int64_t> batch_dimensions,
                         absl::Span<const int64_t> contracting_dimensions);

}  // namespace xjit

#endif  // XJIT_PASSES_ASSIGN_LAYOUTS_H_
