#include "jit/kernel/row_carries.h"

#include <cstddef>
#include <utility>

namespace xjit::jit {

RowCarryPlan PlanRowCarries(const KernelProgram& program, const ProgramPhases& phases,
                            const std::vector<KSection>& sections,
                            absl::FunctionRef<bool(int)> scalar_only, int64_t max_bytes) {
  RowCarryPlan plan;
  if (phases.count < 2 || program.reduction_loops != 1) return plan;
  const size_t n = program.ops.size();
  const int64_t extent = program.loop_extents.back();
  std::vector<int> carried(n, -1);
  std::vector<int> computed_in(n, -1);  // The first pass computing each op.
  std::vector<int64_t> offset(n, 0);
  int64_t bytes = 0;
  for (int p = 0; p < phases.count; ++p) {
    std::vector<bool> in = phases.InPass(program, p, &carried);
    if (p > 0) {
      // Values earlier passes computed that an operation new in this pass
      // reads: carry those whose own computation is worth a store and a
      // load (four or more value operations not carried themselves).
      std::vector<bool> frontier(n, false);
      for (size_t u = 0; u < n; ++u) {
        if (!in[u] || computed_in[u] >= 0) continue;
        const KOp& op = program.ops[u];
        for (int v : {op.a, op.b, op.c}) {
          if (v >= 0 && in[v] && computed_in[v] >= 0 && sections[v] == KSection::kBody &&
              carried[v] < 0) {
            frontier[v] = true;
          }
        }
      }
      bool added = false;
      for (size_t v = 0; v < n; ++v) {
        if (!frontier[v]) continue;
        const KOp& op = program.ops[v];
        if (scalar_only(static_cast<int>(v)) ||
            (op.type != ElementType::kF32 && op.type != ElementType::kF64) ||
            op.kind == KOpKind::kLoad || op.kind == KOpKind::kConst ||
            op.kind == KOpKind::kAccRead) {
          continue;
        }
        // The value operations v's computation needs in its pass.
        std::vector<bool> need(n, false);
        need[v] = true;
        int cost = 0;
        for (size_t i = v + 1; i-- > 0;) {
          if (!need[i]) continue;
          if (!scalar_only(static_cast<int>(i))) ++cost;
          if (i != v && carried[i] >= 0) continue;
          for (int o : {program.ops[i].a, program.ops[i].b, program.ops[i].c}) {
            if (o >= 0 && sections[o] == KSection::kBody) need[o] = true;
          }
        }
        const int64_t width = op.type == ElementType::kF64 ? 8 : 4;
        if (cost < 4 || bytes + extent * width > max_bytes) continue;
        carried[v] = computed_in[v];
        offset[v] = bytes;
        bytes += (extent * width + 63) / 64 * 64;
        added = true;
      }
      if (added) in = phases.InPass(program, p, &carried);
    }
    for (size_t i = 0; i < n; ++i) {
      if (in[i] && computed_in[i] < 0) computed_in[i] = p;
    }
  }
  if (bytes == 0) return plan;
  plan.carried_from = std::move(carried);
  plan.offset = std::move(offset);
  plan.bytes = bytes;
  return plan;
}

}  // namespace xjit::jit
