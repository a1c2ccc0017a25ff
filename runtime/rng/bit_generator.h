// HLO rng-bit-generator as a library call: ThreeFry-2x32 and Philox-4x32
// (rng_default = Philox) with the evaluator's exact bit layout
// (interpreter/rng.cc states it), into any element type of 8 to 64 bits in
// any plain layout. The plan, made at compile time, fixes how the output
// splits into runs of consecutive counters; the runs go to the vector loops
// of bit_kernels.h and, for large outputs, to several threads (the split
// never changes a bit: each element's counter is fixed by its position).
#ifndef XJIT_RUNTIME_RNG_BIT_GENERATOR_H_
#define XJIT_RUNTIME_RNG_BIT_GENERATOR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"

namespace xjit::runtime::rng {

struct BitGeneratorPlan {
  bool three_fry = false;  // Otherwise Philox.
  int64_t state_size = 2;  // u64 words of the state.
  int word_bytes = 4;      // Bytes of one element (8: written as two u32 words).
  int64_t count = 0;       // Elements.
  // ThreeFry with elements of up to 32 bits: the output is
  // [outer, split, inner] around its split dimension, whose half (rounded
  // up) `half` gives the blocks: element (o, j, i) is word j % 2 of block
  // (o * half + j / 2) * inner + i.
  int64_t outer = 1, split = 1, inner = 1, half = 1;
  // Blocks the counter advances by.
  int64_t blocks = 0;
  // A non-default layout: the output is generated in row-major order into
  // scratch and then stored at these strides (elements per logical
  // dimension); empty: generated in place.
  std::vector<int64_t> dimensions;
  std::vector<int64_t> strides;
  int64_t scratch_bytes = 0;
  int threads = 1;

  std::string ToString() const;
};

// Unimplemented for element types it does not take (pred, complex, sub-byte
// and packed types) or layouts other than plain ones; InvalidArgument for a
// malformed instruction.
absl::StatusOr<BitGeneratorPlan> PlanBitGenerator(const Instruction& instruction, int threads);

// The library routine: buffers = {state, new state, bits}; scratch of the
// plan's size. The state may share its buffer with the new state.
void RunBitGeneratorCall(const void* plan, void* const* buffers, void* scratch);

}  // namespace xjit::runtime::rng

#endif  // XJIT_RUNTIME_RNG_BIT_GENERATOR_H_
