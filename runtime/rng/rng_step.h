// HLO `rng` (RngUniform / RngNormal) as a library call with the run's
// context: it draws from the run's generator state (RunContext::rng_state)
// through the evaluator's own draw function (interpreter/rng_draw.h), so a
// compiled run gives the bits RunModule gives, in the same order (the
// schedule keeps side effects in program order). The plan fixes the type,
// distribution, count and layout. The draws are sequential by definition (a
// uniform float may be redrawn), so this step is a scalar loop: rng is kept
// for old programs; rng-bit-generator (bit_generator.h) is the fast one.
#ifndef XJIT_RUNTIME_RNG_RNG_STEP_H_
#define XJIT_RUNTIME_RNG_RNG_STEP_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/instruction.h"
#include "runtime/run_context.h"

namespace xjit::runtime::rng {

struct RngPlan {
  RandomDistribution distribution = RandomDistribution::kUniform;
  ElementType type = ElementType::kF32;
  Shape a_shape, b_shape;  // The scalar parameters'.
  int64_t count = 0;
  int64_t element_bytes = 4;
  // A non-default layout: drawn into scratch, then stored at `strides`.
  std::vector<int64_t> dimensions;
  std::vector<int64_t> strides;
  int64_t scratch_bytes = 0;

  std::string ToString() const;
};

// Unimplemented for complex, sub-byte or packed element types and for
// layouts other than plain ones.
absl::StatusOr<RngPlan> PlanRng(const Instruction& instruction);

// The context routine: buffers = {a, b, result}.
absl::Status RunRngCall(const void* plan, void* const* buffers, void* scratch,
                        const RunContext& context);

}  // namespace xjit::runtime::rng

#endif  // XJIT_RUNTIME_RNG_RNG_STEP_H_
