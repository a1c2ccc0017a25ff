// Row carries: which values of a row program a later pass reads back from a
// row-sized scratch instead of computing them again.
//
// A row program (kernel_program.h, ProgramPhases) runs several passes over
// the reduced elements of a row, and each pass computes every body value it
// needs: softmax's exp(x - max) is computed in the sum's pass and again in
// the quotient's. When such a value costs four or more value operations, a
// target stores it, element by element, into a scratch of one row in the
// pass that first computes it and loads it in the later passes: a store and
// a load instead of the whole computation, with the same bits either way
// (the same operations on the same inputs). Both targets plan the same way;
// only where the scratch lives and how it is addressed is theirs.
#ifndef XJIT_JIT_KERNEL_ROW_CARRIES_H_
#define XJIT_JIT_KERNEL_ROW_CARRIES_H_

#include <cstdint>
#include <vector>

#include "absl/functional/function_ref.h"
#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

struct RowCarryPlan {
  // By operation: the pass that computes the value and stores it into the
  // scratch (later passes load it), -1 for values computed where needed.
  // Empty when nothing is carried; then `offset` is empty and `bytes` 0.
  std::vector<int> carried_from;
  // By operation: the byte offset of a carried value's row in the scratch
  // (each row a multiple of 64 bytes, so every part is 64-byte aligned
  // relative to the scratch).
  std::vector<int64_t> offset;
  // The scratch's size (the last row's rounding up to 64 bytes may pass the
  // `max_bytes` given to PlanRowCarries by less than 64).
  int64_t bytes = 0;
};

// Plans the carried values of `program` (one pass after another, each value
// an earlier pass computed that an operation new in this pass reads, when it
// is an f32/f64 body value other than a load, constant or accumulator read,
// costs four or more value operations not carried themselves, and its row
// still fits in `max_bytes`). `scalar_only(id)`: operations the target runs
// as scalar code in every mode (index operations, index values); they are
// never carried nor counted. Only for programs with several passes and one
// reduction loop whose innermost loop the target vectorises along the row
// (the row strategy); otherwise returns an empty plan.
RowCarryPlan PlanRowCarries(const KernelProgram& program, const ProgramPhases& phases,
                            const std::vector<KSection>& sections,
                            absl::FunctionRef<bool(int)> scalar_only, int64_t max_bytes);

}  // namespace xjit::jit

#endif  // XJIT_JIT_KERNEL_ROW_CARRIES_H_
