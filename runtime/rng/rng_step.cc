// rng as a library call (see rng_step.h).
#include "runtime/rng/rng_step.h"

#include <cstring>

#include "absl/strings/str_cat.h"
#include "interpreter/evaluator.h"
#include "interpreter/rng_draw.h"
#include "ir/layout_util.h"
#include "ir/literal.h"
#include "runtime/strided_copy.h"

namespace xjit::runtime::rng {
namespace {

Literal ScalarFrom(const Shape& shape, const void* bytes) {
  Literal literal(shape);
  absl::Span<uint8_t> data = literal.data();
  if (!data.empty()) std::memcpy(data.data(), bytes, data.size());
  return literal;
}

}  // namespace

std::string RngPlan::ToString() const {
  return absl::StrCat("rng ", RandomDistributionName(distribution), " ", count, " elements of ",
                      ElementTypeName(type), strides.empty() ? "" : ", relaid");
}

absl::StatusOr<RngPlan> PlanRng(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (instruction.operand_count() != 2 || !shape.IsArray() ||
      !instruction.operand(0)->shape().IsArray() || !instruction.operand(1)->shape().IsArray() ||
      instruction.operand(0)->shape().element_count() != 1 ||
      instruction.operand(1)->shape().element_count() != 1) {
    return absl::InvalidArgumentError("rng: needs two scalar parameters and an array result");
  }
  const ElementType type = shape.element_type();
  if (IsComplex(type) || !IsPlainLayout(shape) || !IsPlainLayout(instruction.operand(0)->shape()) ||
      !IsPlainLayout(instruction.operand(1)->shape()) || ByteWidth(type) * 8 != BitWidth(type)) {
    return absl::UnimplementedError(absl::StrCat("rng: element type ", ElementTypeName(type),
                                                 " or its layout"));
  }
  if (instruction.attrs().distribution == RandomDistribution::kNormal && !IsFloat(type)) {
    return absl::InvalidArgumentError("rng normal needs a floating-point type");
  }
  RngPlan plan;
  plan.distribution = instruction.attrs().distribution;
  plan.type = type;
  plan.a_shape = instruction.operand(0)->shape();
  plan.b_shape = instruction.operand(1)->shape();
  plan.count = shape.element_count();
  plan.element_bytes = ByteWidth(type);
  if (!IsDefaultLayout(shape)) {
    plan.dimensions.assign(shape.dimensions().begin(), shape.dimensions().end());
    plan.strides = PlainStrides(shape);
    plan.scratch_bytes = plan.count * plan.element_bytes;
  }
  return plan;
}

absl::Status RunRngCall(const void* plan_pointer, void* const* buffers, void* scratch,
                        const RunContext& context) {
  const RngPlan& plan = *static_cast<const RngPlan*>(plan_pointer);
  // Execute always provides the run's state; a bare call starts at the seed.
  uint64_t local_state = EvaluatorOptions().rng_seed;
  uint64_t& state = context.rng_state != nullptr ? *context.rng_state : local_state;
  const Literal a = ScalarFrom(plan.a_shape, buffers[0]);
  const Literal b = ScalarFrom(plan.b_shape, buffers[1]);
  uint8_t* out = plan.strides.empty() ? static_cast<uint8_t*>(buffers[2])
                                      : static_cast<uint8_t*>(scratch);
  const size_t bytes = static_cast<size_t>(plan.element_bytes);
  absl::Status status = eval::DrawRng(plan.distribution, a, b, plan.type, plan.count, state,
                                      [&](int64_t e, uint64_t bits) {
                                        // Little-endian: the low bytes.
                                        std::memcpy(out + e * plan.element_bytes, &bits, bytes);
                                      });
  if (!status.ok()) return status;
  if (!plan.strides.empty()) {
    CopyStrided(plan.dimensions, RowMajorStrides(plan.dimensions), plan.strides,
                plan.element_bytes, out, static_cast<uint8_t*>(buffers[2]));
  }
  return absl::OkStatus();
}

}  // namespace xjit::runtime::rng
