// ExpandShardingCalls: the SPMD custom calls as ordinary operations (see
// expand_sharding_calls.h).
#include "passes/expand_sharding_calls.h"

#include <algorithm>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "interpreter/collectives.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"
#include "passes/rewrite_util.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"

namespace xjit {
namespace {

Shape ArrayOf(ElementType type, std::vector<int64_t> dims) {
  return Shape::Array(type, std::move(dims));
}

// dynamic-slice(x, starts...) of `sizes`, in `shape` (its layout too).
absl::StatusOr<Instruction*> DynamicSlice(Computation* c, Instruction* x,
                                          std::vector<Instruction*> starts,
                                          std::vector<int64_t> sizes, Shape shape) {
  NewInstruction slice;
  slice.opcode = Opcode::kDynamicSlice;
  slice.operands = {x};
  slice.operands.insert(slice.operands.end(), starts.begin(), starts.end());
  slice.attrs.slice_sizes = std::move(sizes);
  slice.shape = std::move(shape);
  return AddInstruction(c, std::move(slice));
}

absl::StatusOr<Instruction*> Reshape(Computation* c, Instruction* x, Shape shape) {
  NewInstruction reshape;
  reshape.opcode = Opcode::kReshape;
  reshape.operands = {x};
  reshape.shape = std::move(shape);
  return AddInstruction(c, std::move(reshape));
}

// This partition's offset along one dimension: table[partition-id], s32[].
absl::StatusOr<Instruction*> PartitionOffset(Computation* c, Instruction* partition_id,
                                             const std::vector<int64_t>& offsets) {
  const int64_t partitions = static_cast<int64_t>(offsets.size());
  Instruction* table = AddConstant(
      c, Literal::FromInts(ArrayOf(ElementType::kS32, {partitions}), offsets), "tile_offsets");
  XJIT_ASSIGN_OR_RETURN(Instruction * one,
                        DynamicSlice(c, table, {partition_id}, {1},
                                     ArrayOf(ElementType::kS32, {1})));
  return Reshape(c, one, ArrayOf(ElementType::kS32, {}));
}

absl::StatusOr<Instruction*> ExpandFullToShard(Computation* c, Instruction* call,
                                               const ShardTiling& tiling, int64_t partitions) {
  Instruction* x = call->operand(0);
  const Shape& full = x->shape();
  const int64_t rank = full.rank();
  // Whole tiles: pad the array's end with zeros where the tiles are uneven.
  bool uneven = false;
  PaddingConfig padding(rank);
  std::vector<int64_t> padded(full.dimensions().begin(), full.dimensions().end());
  for (int64_t d = 0; d < rank; ++d) {
    padded[d] = tiling.tiles[d] * tiling.tile_shape[d];
    padding[d].high = padded[d] - full.dimensions(d);
    uneven = uneven || padding[d].high != 0;
  }
  if (uneven) {
    NewInstruction pad;
    pad.opcode = Opcode::kPad;
    pad.operands = {x, AddConstant(c, Literal(ArrayOf(full.element_type(), {})), "zero")};
    pad.attrs.padding = padding;
    pad.shape = ArrayOf(full.element_type(), padded);
    XJIT_ASSIGN_OR_RETURN(x, AddInstruction(c, std::move(pad)));
  }
  NewInstruction id;
  id.opcode = Opcode::kPartitionId;
  id.shape = ArrayOf(ElementType::kU32, {});
  XJIT_ASSIGN_OR_RETURN(Instruction * partition_id, AddInstruction(c, std::move(id)));
  Instruction* zero = nullptr;
  std::vector<Instruction*> starts;
  for (int64_t d = 0; d < rank; ++d) {
    if (tiling.tiles[d] == 1) {
      if (zero == nullptr) {
        zero = AddConstant(c, Literal::ScalarInt(ElementType::kS32, 0), "zero_offset");
      }
      starts.push_back(zero);
      continue;
    }
    std::vector<int64_t> offsets(partitions);
    for (int64_t p = 0; p < partitions; ++p) {
      offsets[p] = tiling.tile_of_partition[p][d] * tiling.tile_shape[d];
    }
    XJIT_ASSIGN_OR_RETURN(Instruction * offset, PartitionOffset(c, partition_id, offsets));
    starts.push_back(offset);
  }
  return DynamicSlice(c, x, std::move(starts), tiling.tile_shape, call->shape());
}

absl::StatusOr<Instruction*> ExpandShardToFull(Computation* c, Instruction* call,
                                               const ShardTiling& tiling, int64_t partitions,
                                               int64_t channel_id) {
  Instruction* shard = call->operand(0);
  const ElementType type = shard->shape().element_type();
  const int64_t rank = shard->shape().rank();
  const std::vector<int64_t>& tile = tiling.tile_shape;
  // Every partition's shard, row j from partition j.
  std::vector<int64_t> stacked = {partitions};
  stacked.insert(stacked.end(), tile.begin(), tile.end());
  NewInstruction broadcast;
  broadcast.opcode = Opcode::kBroadcast;
  broadcast.operands = {shard};
  for (int64_t d = 0; d < rank; ++d) broadcast.attrs.dimensions.push_back(d + 1);
  broadcast.attrs.has_dimensions = true;
  broadcast.shape = ArrayOf(type, stacked);
  XJIT_ASSIGN_OR_RETURN(Instruction * copies, AddInstruction(c, std::move(broadcast)));
  NewInstruction exchange;
  exchange.opcode = Opcode::kAllToAll;
  exchange.operands = {copies};
  exchange.attrs.dimensions = {0};
  exchange.attrs.has_dimensions = true;
  exchange.attrs.channel_id = channel_id;
  exchange.shape = ArrayOf(type, stacked);
  exchange.name = "gather_shards";
  XJIT_ASSIGN_OR_RETURN(Instruction * rows, AddInstruction(c, std::move(exchange)));
  // The owners' rows, in tile order.
  const int64_t tile_count = static_cast<int64_t>(tiling.owner.size());
  bool in_order = tile_count == partitions;
  for (int64_t t = 0; t < tile_count && in_order; ++t) in_order = tiling.owner[t] == t;
  if (!in_order) {
    std::vector<Instruction*> picked;
    std::vector<int64_t> one_row = stacked;
    one_row[0] = 1;
    for (int64_t owner : tiling.owner) {
      NewInstruction slice;
      slice.opcode = Opcode::kSlice;
      slice.operands = {rows};
      slice.attrs.slice.push_back({owner, owner + 1, 1});
      for (int64_t d = 0; d < rank; ++d) slice.attrs.slice.push_back({0, tile[d], 1});
      slice.shape = ArrayOf(type, one_row);
      XJIT_ASSIGN_OR_RETURN(Instruction * row, AddInstruction(c, std::move(slice)));
      picked.push_back(row);
    }
    std::vector<int64_t> all_tiles = stacked;
    all_tiles[0] = tile_count;
    if (picked.size() == 1) {
      rows = picked[0];
    } else {
      NewInstruction concatenate;
      concatenate.opcode = Opcode::kConcatenate;
      concatenate.operands = picked;
      concatenate.attrs.dimensions = {0};
      concatenate.attrs.has_dimensions = true;
      concatenate.shape = ArrayOf(type, all_tiles);
      XJIT_ASSIGN_OR_RETURN(rows, AddInstruction(c, std::move(concatenate)));
    }
  }
  // [n..., T...] -> [n_0, T_0, n_1, T_1, ...] -> whole tiles -> the array.
  std::vector<int64_t> split = tiling.tiles;
  split.insert(split.end(), tile.begin(), tile.end());
  XJIT_ASSIGN_OR_RETURN(Instruction * grid, Reshape(c, rows, ArrayOf(type, split)));
  NewInstruction transpose;
  transpose.opcode = Opcode::kTranspose;
  transpose.operands = {grid};
  std::vector<int64_t> interleaved;
  std::vector<int64_t> padded;
  for (int64_t d = 0; d < rank; ++d) {
    transpose.attrs.dimensions.push_back(d);
    transpose.attrs.dimensions.push_back(rank + d);
    interleaved.push_back(tiling.tiles[d]);
    interleaved.push_back(tile[d]);
    padded.push_back(tiling.tiles[d] * tile[d]);
  }
  transpose.attrs.has_dimensions = true;
  transpose.shape = ArrayOf(type, interleaved);
  XJIT_ASSIGN_OR_RETURN(Instruction * placed, AddInstruction(c, std::move(transpose)));
  const Shape& full = call->shape();
  if (full.dimensions() == absl::Span<const int64_t>(padded)) return Reshape(c, placed, full);
  XJIT_ASSIGN_OR_RETURN(Instruction * whole, Reshape(c, placed, ArrayOf(type, padded)));
  NewInstruction slice;
  slice.opcode = Opcode::kSlice;
  slice.operands = {whole};
  for (int64_t d = 0; d < rank; ++d) slice.attrs.slice.push_back({0, full.dimensions(d), 1});
  slice.shape = full;
  return AddInstruction(c, std::move(slice));
}

// The first channel_id no instruction of the module uses.
int64_t FreshChannelId(const Module& module) {
  int64_t next = 1;
  for (Computation* computation : ComputationsOf(module)) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->attrs().channel_id.has_value()) {
        next = std::max(next, *instruction->attrs().channel_id + 1);
      }
    }
  }
  return next;
}

}  // namespace

absl::StatusOr<bool> ExpandShardingCalls::Run(Module* module) {
  const int64_t partitions = module->num_partitions();
  bool changed = false;
  std::optional<int64_t> channel_id;
  for (Computation* computation : ComputationsOf(*module)) {
    for (Instruction* call : InstructionsOf(*computation)) {
      if (call->opcode() != Opcode::kCustomCall) continue;
      const std::string& target = call->attrs().custom_call_target;
      if (!eval::IsShardingCall(target) || FfiRegistry::Global().Find(target) != nullptr ||
          CustomCallRegistry::Global().Find(target) != nullptr) {
        continue;
      }
      absl::StatusOr<std::optional<ShardTiling>> tiling =
          eval::ShardingCallTiling(*call, partitions);
      if (!tiling.ok()) {
        return absl::Status(tiling.status().code(),
                            absl::StrCat(call->name(), ": ", tiling.status().message()));
      }
      if (!tiling->has_value()) continue;  // No sharding, same shapes: the operand.
      const ShardTiling& tiles = **tiling;
      if (tiles.owner.size() == 1) continue;  // One tile: the operand.
      Instruction* replacement = nullptr;
      if (target == "SPMDFullToShardShape") {
        XJIT_ASSIGN_OR_RETURN(replacement,
                              ExpandFullToShard(computation, call, tiles, partitions));
      } else {
        if (!channel_id.has_value()) channel_id = FreshChannelId(*module);
        XJIT_ASSIGN_OR_RETURN(replacement, ExpandShardToFull(computation, call, tiles,
                                                             partitions, (*channel_id)++));
      }
      if (!ReplaceInstruction(call, replacement)) {
        return absl::InternalError(
            absl::StrCat("expand-sharding-calls: cannot replace ", call->name()));
      }
      changed = true;
    }
  }
  return changed;
}

}  // namespace xjit
