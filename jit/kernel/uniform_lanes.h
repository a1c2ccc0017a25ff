// UniformLaneRange: the stretch of a vector loop where every lane compare of
// the loop index comes out the same in all lanes, and what the loop body
// does not need there.
//
// A concatenate, pad or roll along the innermost dimension selects its
// operand per element with a compare of the element's index against a piece
// boundary (ElementEmitter::LaneIndexCompare). Only the few vector
// iterations that straddle a boundary see different answers in different
// lanes; in the long stretch between (a stencil's row interior) each compare
// is all-true or all-false, so each select reads one operand, and the
// compares, the other operands and whatever only they read are dead. A target
// may run that stretch with a body specialised to those answers and the
// general body around it: the same values per element, fewer instructions.
#ifndef XJIT_JIT_KERNEL_UNIFORM_LANES_H_
#define XJIT_JIT_KERNEL_UNIFORM_LANES_H_

#include <cstdint>
#include <vector>

#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

struct UniformLaneRange {
  // Vector iterations [begin, end) of the innermost loop (iteration k covers
  // elements [k * lanes, (k + 1) * lanes)); empty when there is none worth
  // specialising.
  int64_t begin = 0;
  int64_t end = 0;
  // Per operation: -1 unknown, else the pred value (0 or 1) it has in every
  // lane of every iteration of the range. Compares of the innermost index
  // against a constant, and and/or/not/select of known preds.
  std::vector<int8_t> known;
  // Per operation: true where the specialised body still computes it. A
  // select whose predicate is known reads only the operand it picks; a known
  // pred read only by such selects is dead, as is what only dead operations
  // read. Operations outside the innermost level are always live.
  std::vector<bool> live;

  bool empty() const { return end <= begin; }
};

// The longest run of whole vector iterations of the innermost loop (level
// `level`, extent `extent`, all of its iterations starting at 0 in steps of
// `lanes`) over which every lane compare of the loop index is uniform and
// constant, or an empty range when it spans fewer than 2 iterations or
// changes nothing. `levels` is the level each operation is computed at
// (OpLevels). For programs without reduction loops.
UniformLaneRange FindUniformLaneRange(const KernelProgram& program,
                                      const std::vector<int>& levels, int level,
                                      int64_t extent, int lanes);

}  // namespace xjit::jit

#endif  // XJIT_JIT_KERNEL_UNIFORM_LANES_H_
