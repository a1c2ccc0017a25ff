// Collectives across in-process replicas, for the evaluator's replicated runs
// (RunModuleReplicated in interpreter/evaluator.h). Internal to the evaluator.
//
// Every replica runs the module on its own thread with its own evaluator. At
// a collective each replica computes its group of participants (replica ids,
// in group order), deposits its contribution in the shared Rendezvous and
// blocks until every member of its group has deposited for the same key; then
// each participant computes its own result from all contributions with the
// functions below. The key is (instruction, how many times this replica has
// executed that instruction before, the group's first member): all replicas
// run the same program, so the k-th execution of an instruction on one
// replica meets the k-th execution on the others, whatever loops, calls or
// conditionals led there.
//
// A run never hangs on a mismatch: when a replica fails, every waiting
// replica fails too (Aborted), and when every unfinished replica waits at a
// collective that cannot complete (a participant finished, or waits at
// another collective) they all fail with FailedPrecondition naming the
// collective.
#ifndef XJIT_INTERPRETER_COLLECTIVES_H_
#define XJIT_INTERPRETER_COLLECTIVES_H_

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "interpreter/ops.h"
#include "ir/instruction.h"
#include "ir/literal.h"
#include "ir/sharding.h"

namespace xjit::eval {

// Where a replica's collectives meet the other replicas: the in-process
// Rendezvous below, or a transport between processes (MPI,
// runtime/collectives/mpi_communicator.h, through RunModuleAsReplica).
//
// Participants are devices: replica r, partition p is device r * P + p (XLA's
// default device assignment), P the partition count. With one partition a
// device id is the replica id. Groups, `replica` and the ends of Post/Take
// below are device ids.
// The key of one meeting in a rendezvous: the `phase`-th meeting of the
// `execution`-th execution of an instruction (from 0). Some transports meet
// several times per execution (the in-process all-reduce: inputs ready,
// shares written, everyone done); errors name the execution, as the
// evaluator counts them, not the meeting.
inline constexpr int64_t kMeetingPhases = 4;
inline int64_t MeetingKey(int64_t execution, int64_t phase) {
  return execution * kMeetingPhases + phase;
}

class ReplicaExchange {
 public:
  virtual ~ReplicaExchange() = default;
  virtual int64_t replica_count() const = 0;
  virtual int64_t partition_count() const { return 1; }
  // Deposits `value` for device `replica` (a member of `group`) under
  // (instruction, occurrence, group) and returns every member's value in
  // group order once all have deposited. `occurrence` is a MeetingKey.
  virtual absl::StatusOr<std::vector<Literal>> Exchange(const Instruction& instruction,
                                                        int64_t occurrence,
                                                        absl::Span<const int64_t> group,
                                                        int64_t replica, Literal value) = 0;
  // Point to point (see Rendezvous); a transport without it says so.
  // `site` (the send or recv) only names the instruction in errors.
  virtual absl::Status Post(const Instruction& site, int64_t from, int64_t to, int64_t tag,
                            Literal value) {
    return absl::UnimplementedError(
        absl::StrCat(site.name(), ": send/recv between replicas over this transport"));
  }
  virtual absl::StatusOr<Literal> Take(const Instruction& site, int64_t from, int64_t to,
                                       int64_t tag) {
    return absl::UnimplementedError(
        absl::StrCat(site.name(), ": send/recv between replicas over this transport"));
  }
};

class Rendezvous : public ReplicaExchange {
 public:
  // replica_count * partition_count devices meet here.
  explicit Rendezvous(int64_t replica_count, int64_t partition_count = 1)
      : replica_count_(replica_count), partition_count_(partition_count) {}
  Rendezvous(const Rendezvous&) = delete;
  Rendezvous& operator=(const Rendezvous&) = delete;

  int64_t replica_count() const override { return replica_count_; }
  int64_t partition_count() const override { return partition_count_; }
  int64_t device_count() const { return replica_count_ * partition_count_; }

  absl::StatusOr<std::vector<Literal>> Exchange(const Instruction& instruction,
                                                int64_t occurrence,
                                                absl::Span<const int64_t> group, int64_t replica,
                                                Literal value) override;

  // Waits until every member of `group` has called Sync for the same
  // (instruction, occurrence). Unlike Exchange it ignores failures, so a
  // member never leaves while the others still use its buffers: call it only
  // where every member is sure to arrive (after a completed Exchange, with
  // nothing between that can wait or fail).
  void Sync(const Instruction& instruction, int64_t occurrence, absl::Span<const int64_t> group);

  // Point to point: `value` from replica `from` to replica `to` under
  // `tag`. Post never waits; Take waits for the oldest value posted from
  // `from` to `to` under `tag` and not yet taken (per (from, to, tag) in
  // posting order). `name` (the receiving instruction) is for the errors: a
  // Take that no Post can satisfy fails the run as a deadlock.
  absl::Status Post(const Instruction& site, int64_t from, int64_t to, int64_t tag,
                    Literal value) override;
  absl::StatusOr<Literal> Take(const Instruction& site, int64_t from, int64_t to,
                               int64_t tag) override;

  // Device `replica` has finished its program (`status` is its outcome).
  // An error aborts the waiting devices.
  void Finish(int64_t replica, const absl::Status& status);

  // "replica r", or "replica r partition p" when there are partitions.
  std::string DeviceName(int64_t device) const;

 private:
  struct Entry {
    std::string name;
    std::vector<int64_t> group;
    std::vector<std::optional<Literal>> values;
    int64_t arrived = 0;
    int64_t waiting = 0;
    bool complete = false;
  };
  using Key = std::tuple<const Instruction*, int64_t, int64_t>;
  // Messages from one replica to another under one tag; at most one
  // receiver (the `to` replica's thread) waits on it.
  struct Mailbox {
    std::deque<Literal> messages;
    bool waiting = false;
    std::string waiter;  // The waiting instruction, for the errors.
  };
  using MailboxKey = std::tuple<int64_t, int64_t, int64_t>;  // (from, to, tag)

  // With mutex_ held: fails the run when no unfinished replica can proceed.
  void CheckDeadlockLocked();

  const int64_t replica_count_;
  const int64_t partition_count_;
  std::mutex mutex_;
  std::condition_variable changed_;
  absl::flat_hash_map<Key, std::shared_ptr<Entry>> entries_;
  std::map<MailboxKey, Mailbox> mailboxes_;  // Stable addresses.
  int64_t blocked_ = 0;   // Replicas waiting on an incomplete entry.
  int64_t finished_ = 0;  // Replicas whose program ended.
  absl::Status failure_;  // Set once: every later or waiting Exchange fails.
};

// How the ids of replica_groups= are read (XLA's CollectiveOpGroupMode,
// service/collective_ops_utils): without channel_id they are replica ids
// (kCrossReplica: the group's replicas, each at this device's partition).
// With channel_id, ops that have a use_global_device_ids field (all-reduce,
// all-gather, reduce-scatter) read them as replica ids whose every partition
// takes part (false: kCrossReplicaAndPartition, the members ordered replica
// by replica, partitions within) or as flattened device ids r * P + p
// (true: kFlattenedId); the others (all-to-all, collective-permute,
// collective-broadcast, ragged-all-to-all) read them as partition ids of
// this device's replica (kCrossPartition).
enum class GroupMode { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedId };
GroupMode CollectiveGroupMode(const Instruction& instruction);

// The devices of a run: `replicas` x `partitions`, device r * partitions + p.
struct DeviceGrid {
  int64_t replicas = 1;
  int64_t partitions = 1;
  int64_t count() const { return replicas * partitions; }
  int64_t Device(int64_t replica, int64_t partition) const {
    return replica * partitions + partition;
  }
};

// The participants (device ids, in group order) of the collective
// `instruction` on device (replica, partition) of `grid`, per its
// replica_groups= (empty: every id of the mode's kind, in order) and group
// mode. Ids outside the grid, an id listed twice and a device in no group
// are InvalidArgument; so are empty groups in kFlattenedId mode (as in XLA).
absl::StatusOr<std::vector<int64_t>> ParticipantDevices(const Instruction& instruction,
                                                        const DeviceGrid& grid, int64_t replica,
                                                        int64_t partition);

// collective-permute's pairs, checked (every id below `id_count`, no id
// targeted twice), as seen from participant `self`: the ids that take part,
// sorted, and the id that sends to `self` (none: `self` receives zeros).
// `cross_partition`: the ids name partitions (channel_id=), for the errors.
struct PermutePeers {
  std::vector<int64_t> group;
  std::optional<int64_t> source;
};
absl::StatusOr<PermutePeers> CollectivePermutePeers(const Instruction& instruction,
                                                    int64_t id_count, int64_t self,
                                                    bool cross_partition);

// The same in devices, for device (replica, partition) of `grid`: with
// channel_id= the pairs name partitions of this replica, without it
// replicas at this partition. `group` (sorted) and `source` are device ids.
absl::StatusOr<PermutePeers> PermuteDevices(const Instruction& instruction,
                                            const DeviceGrid& grid, int64_t replica,
                                            int64_t partition);

// send/recv between replicas (XLA marks them with the frontend attribute
// _xla_send_recv_source_target_pairs) rather than with the host.
bool IsCrossReplicaTransfer(const Instruction& instruction);

// A send/recv between replicas as seen from replica `self` of
// `replica_count`: the replicas its send goes to (pairs (self, t), in pair
// order) and the one its recv takes from (the pair (s, self); none: the recv
// gives zeros). Every id must be below replica_count; two pairs may not
// target one replica.
//
// Matching: a recv takes the oldest unreceived message sent to it by its
// source, whatever the channel_id (as NCCL's point-to-point calls do; XLA's
// pipeline-parallel tests pair a channel-1 send with a channel-2 recv), so
// messages travel under one tag.
struct SendRecvPeers {
  std::vector<int64_t> targets;
  std::optional<int64_t> source;
};
inline constexpr int64_t kSendRecvTag = 0;
absl::StatusOr<SendRecvPeers> CrossReplicaPeers(const Instruction& instruction,
                                                int64_t replica_count, int64_t self);

// collective-permute's combined form: several array operands permuted
// together, a tuple result with one element per operand (of its shape).
// (The in-place form, with output buffers and offsets, is not this.)
bool IsCombinedPermute(const Instruction& instruction);

// ragged-all-to-all (operands input, output, input_offsets, send_sizes,
// output_offsets, recv_sizes; offsets and sizes count rows of dimension 0,
// indexed [peer * updates_per_peer + update]): the result of the member at
// `position`, from every member's operands as a tuple of the six
// (`contributions`, group order). Member q's rows
// input[input_offsets[i], +send_sizes[i]) with i = position * k + u go to
// result rows [output_offsets[i], +send_sizes[i]) over this member's output,
// for q in group order then u; recv_sizes[q * k + u] must equal that size.
// Out-of-range rows are InvalidArgument.
absl::StatusOr<Literal> RaggedAllToAllResult(const Instruction& instruction,
                                             absl::Span<const Literal> contributions,
                                             int64_t position, const Shape& shape);

// Results of one participant (at `position` in its group) from the group's
// contributions. A contribution is the operand, or the tuple of the operands
// when there are several; `shape` is the instruction's result shape (for the
// -start forms, the shape of the results part).
absl::StatusOr<Literal> AllReduceResult(const Instruction& instruction,
                                        absl::Span<const Literal> contributions,
                                        const Shape& shape, const Context& context);
absl::StatusOr<Literal> AllGatherResult(const Instruction& instruction,
                                        absl::Span<const Literal> contributions,
                                        const Shape& shape);
absl::StatusOr<Literal> ReduceScatterResult(const Instruction& instruction,
                                            absl::Span<const Literal> contributions,
                                            int64_t position, const Shape& shape,
                                            const Context& context);
absl::StatusOr<Literal> AllToAllResult(const Instruction& instruction,
                                       absl::Span<const Literal> contributions, int64_t position,
                                       const Shape& shape);

// The SPMD custom calls (docs/replicas.md, "SPMD partitions"), whose
// shardings are read by ir/sharding.h. Unregistered, both backends give
// them these meanings.
bool IsShardingCall(absl::string_view target);  // SPMDFullToShardShape / ...ToFullShape

// The tiling a sharding call works by, checked against its shapes: for
// SPMDFullToShardShape its operand's sharding over the operand's shape, for
// SPMDShardToFullShape its own over its result's, the other shape being a
// tile's. nullopt: no sharding= where one is needed, and the shapes agree
// (the call returns its operand); InvalidArgument when they do not.
absl::StatusOr<std::optional<ShardTiling>> ShardingCallTiling(const Instruction& instruction,
                                                              int64_t partition_count);

// SPMDFullToShardShape on partition `partition` of `partition_count`: the
// tile of `full` (the global array) that the sharding= of the call's operand
// assigns to that partition, in the call's shape; elements past the array's
// end (uneven tiles) are zeros, as XLA's partitioner pads them. An operand
// without sharding= passes through when the shapes agree.
absl::StatusOr<Literal> ShardOf(const Instruction& instruction, const Literal& full,
                                int64_t partition, int64_t partition_count);

// SPMDShardToFullShape on partition `partition`: the full array (the
// call's shape) assembled from `shards`, every partition's operand in
// partition order, by the call's own sharding=: element i comes from the
// shard of the partition that owns i's tile (the first of the copies where
// subgroup dimensions replicate it). A sharding of one tile (replicated,
// manual, maximal) returns this partition's own operand, as XLA's
// partitioner does (it copies the operand; no data moves).
absl::StatusOr<Literal> FullFromShards(const Instruction& instruction,
                                       absl::Span<const Literal> shards, int64_t partition,
                                       int64_t partition_count);

}  // namespace xjit::eval

#endif  // XJIT_INTERPRETER_COLLECTIVES_H_
