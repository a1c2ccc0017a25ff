// Lane positions: vector loops over loads whose position is not affine
// along the loop.
//
// A vector loop normally needs every load to move by 0 or 1 element per
// iteration (InnerStrides). Merging a short minor dimension into the loop
// (MergedLoopNest) breaks that for broadcasts along it: in u32[256,2] =
// broadcast(u32[256]), dimensions={0}, merged index m reads element m / 2,
// and such a kernel (threefry over per-row keys, JAX's random bits in a
// sampler) ran one element at a time. A target with gathers can still run it
// as vector code: it computes the position of every lane with 32-bit integer
// vector arithmetic — the loop index plus 0..W-1, then the same additions,
// multiplications, divisions and remainders by constants, min and max as
// the scalar code — and gathers the elements there. Every lane reads the
// element the scalar code would, so results do not change.
#ifndef XJIT_JIT_KERNEL_LANE_POSITIONS_H_
#define XJIT_JIT_KERNEL_LANE_POSITIONS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "jit/kernel/kernel_program.h"

namespace xjit::jit {

// The least and greatest value an index operation takes anywhere in the loop
// nest.
struct IndexRange {
  int64_t lo = 0;
  int64_t hi = 0;
};

// For every operation: its IndexRange if it is an index operation whose
// bounds follow from the loop extents, constants and the types that
// kToIndex reads (nullopt when an intermediate value could overflow 64
// bits, and for value operations).
std::vector<std::optional<IndexRange>> IndexRanges(const KernelProgram& program);

// For every operation: whether it is an index operation whose value a
// vector loop along the innermost loop can compute lane by lane in signed
// 32-bit lanes: every value it and its operands take fits in 32 bits, and
// it is either affine along the loop (`strides`: InnerStrides; lane k is
// lane 0 plus k strides) or an addition, subtraction, multiplication, min,
// max, or a division or remainder of such operations by a power of two, or
// by any positive constant when the dividend is never negative.
std::vector<bool> LaneIndexOps(const KernelProgram& program,
                               const std::vector<std::optional<int64_t>>& strides);

// Division by a constant d (not a power of two, 2 < d < 2^31) for
// dividends x in [0, 2^31), as a target's 32x32->64-bit lane multiplies
// compute it: x / d == (x * multiplier) >> shift, multiplier < 2^32,
// 33 <= shift <= 62 (the round-up method: multiplier = ceil(2^shift / d),
// shift = 31 + ceil(log2 d); exact for every such x).
struct LaneDivisor {
  uint32_t multiplier = 0;
  int shift = 0;
};
LaneDivisor LaneDivisorFor(int64_t d);

// Whether a loop program (no reduction loops) whose positions are not all
// affine along its innermost loop can still vectorise there with gathers:
// every index operation that is not affine is lane-computable
// (LaneIndexOps) and read only by other index operations, as the position
// of a load of 4- or 8-byte elements (not f16/bf16, whose lanes are
// widened) or of a pred, or converted to a 32-bit integer (an iota). False
// when every position is affine (nothing to gather).
bool GatherableAlongInnermost(const KernelProgram& program);

}  // namespace xjit::jit

#endif  // XJIT_JIT_KERNEL_LANE_POSITIONS_H_
