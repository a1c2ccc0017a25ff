// Sharding: XLA's `sharding=` attribute (the text HloSharding::ToString
// writes and XLA's HLO parser reads) and the tiles it cuts an array into.
//
// xjit keeps `sharding=` as an opaque attribute: it changes nothing for most
// instructions. Two custom calls give it meaning (docs/replicas.md, "SPMD
// partitions"): `SPMDFullToShardShape` hands partition p the tile of its
// operand that the operand's sharding assigns to p, and
// `SPMDShardToFullShape` assembles the full array from every partition's
// tile by its own sharding. The device ids of a sharding are partition ids,
// as in XLA's SPMD partitioner.
//
// The forms read:
//   {replicated} {manual} {unknown} {maximal device=N}
//   {devices=[d0,d1,...]i0,i1,...}          explicit device list, row-major
//   {devices=[d0,...]<=[n]}                 iota: 0..n-1
//   {devices=[d0,...]<=[r0,r1,...]T(p...)}  iota over [r...], transposed by p
//   ... last_tile_dim_replicate             the last tile dim replicates
//   ... last_tile_dims={manual, replicated} trailing subgroup tile dims
//   {{...}, {...}}                          a tuple's shardings, per element
// `metadata={...}`, `shard_as N` and `shard_like N` are skipped.
#ifndef XJIT_IR_SHARDING_H_
#define XJIT_IR_SHARDING_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

namespace xjit {

class Instruction;

struct Sharding {
  enum class Kind { kReplicated, kMaximal, kManual, kUnknown, kTiled, kTuple };
  Kind kind = Kind::kReplicated;
  // kTiled: the tile assignment's dimensions (the array's dimensions, then
  // `subgroup_dims` trailing subgroup dimensions) and its device ids in
  // row-major order.
  std::vector<int64_t> tile_dimensions;
  std::vector<int64_t> devices;
  int64_t subgroup_dims = 0;
  // kMaximal: the one device that holds the array.
  int64_t maximal_device = 0;
  // kTuple: one sharding per tuple element.
  std::vector<Sharding> elements;
};

// Parses the text of a `sharding=` attribute (InvalidArgument on a malformed
// one; Unimplemented on a well-formed form this reader does not know).
absl::StatusOr<Sharding> ParseSharding(absl::string_view text);

// The text of `instruction`'s sharding= attribute, or nullopt.
std::optional<std::string> ShardingAttribute(const Instruction& instruction);

// How a sharding cuts an array of `dimensions` among `partition_count`
// partitions. Tiles have XLA's padded shape: dimension d is split into
// tiles[d] tiles of ceil(dimensions[d] / tiles[d]) elements, the last ones
// reaching past the array's end (FullToShard pads them with zeros).
struct ShardTiling {
  std::vector<int64_t> tiles;       // Per dimension: how many tiles.
  std::vector<int64_t> tile_shape;  // Per dimension: a tile's size.
  // Per partition: the index of its tile, per dimension.
  std::vector<std::vector<int64_t>> tile_of_partition;
  // Per tile (row-major over `tiles`): the partition whose shard becomes it
  // (the first one along the subgroup dimensions, which hold copies).
  std::vector<int64_t> owner;
};

// Replicated, manual and maximal shardings give every partition the whole
// array (one tile); a tiled one must name each partition exactly once and
// have one tile dimension per array dimension plus its subgroups. Tuple
// shardings are InvalidArgument here (an array has none); `unknown` is
// Unimplemented.
absl::StatusOr<ShardTiling> TileArray(const Sharding& sharding,
                                      absl::Span<const int64_t> dimensions,
                                      int64_t partition_count);

}  // namespace xjit

#endif  // XJIT_IR_SHARDING_H_
