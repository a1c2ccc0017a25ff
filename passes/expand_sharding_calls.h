// ExpandShardingCalls ("expand-sharding-calls"): rewrites the SPMD custom
// calls SPMDFullToShardShape and SPMDShardToFullShape (unregistered ones)
// into ordinary operations, so that a module partitioned by JAX's shard_map
// compiles without interpreted steps. The meaning is the evaluator's
// (eval::ShardOf / eval::FullFromShards, interpreter/collectives.h), for the
// module's num_partitions P; the shardings are read by ir/sharding.h.
//
//   SPMDFullToShardShape(x), x's sharding cutting tiles of shape T:
//     pad(x, 0) to whole tiles (when they are uneven), then
//     dynamic-slice(x', o_0, ..., o_r-1) of sizes T, where o_d is this
//     partition's tile offset in dimension d: a dynamic-slice of a constant
//     table s32[P] at partition-id (a constant 0 where d is not cut).
//   SPMDShardToFullShape(s), its sharding cutting tiles n_0 x ... of shape T:
//     broadcast(s) to [P, T...]; all-to-all along dimension 0 with a fresh
//     channel_id and no groups (cross-partition: the partitions of this
//     replica, in order), which leaves partition j's shard in row j; the
//     rows of the tiles' owners (slices and a concatenate, when they are not
//     rows 0..P-1 in order); reshape to [n..., T...], transpose to
//     [n_0, T_0, n_1, T_1, ...], reshape to whole tiles and slice off the
//     padding.
// The all-to-all moves P copies of each shard where an all-gather would
// move one; XLA's partitioner uses an all-gather with groups of device ids,
// which depend on the replica count, and a compiled module does not know the
// run's replica count.
//
//   Requires: a verified module. Guarantees: no such call whose shapes differ
//   or whose sharding cuts more than one tile is left (those that cut one
//   tile stay: they return their operand). A sharding this reader rejects,
//   or tiles that do not fit the call's shapes, fail the pass with the
//   evaluator's message. Registered targets (the user's) are left alone.
#ifndef XJIT_PASSES_EXPAND_SHARDING_CALLS_H_
#define XJIT_PASSES_EXPAND_SHARDING_CALLS_H_

#include "passes/pass.h"

namespace xjit {

class ExpandShardingCalls : public Pass {
 public:
  absl::string_view name() const override { return "expand-sharding-calls"; }
  absl::StatusOr<bool> Run(Module* module) override;
};

}  // namespace xjit

#endif  // XJIT_PASSES_EXPAND_SHARDING_CALLS_H_
