// InProcessCommunicator: collectives between replicas that are threads of
// one process. They meet in the evaluator's Rendezvous
// (interpreter/collectives.h), so a compiled replicated run and the
// evaluator's RunModuleReplicated share the matching rules and the failure
// behaviour: a replica that fails aborts the others waiting at a collective
// (Aborted), and replicas that disagree on the collectives they reach fail
// with FailedPrecondition instead of hanging.
#ifndef XJIT_RUNTIME_COLLECTIVES_IN_PROCESS_H_
#define XJIT_RUNTIME_COLLECTIVES_IN_PROCESS_H_

#include <cstdint>

#include "absl/container/flat_hash_map.h"
#include "interpreter/collectives.h"
#include "runtime/collectives/communicator.h"

namespace xjit::collectives {

class InProcessCommunicator : public Communicator {
 public:
  // Replica `replica_id`, partition `partition_id` of the rendezvous'
  // devices; the rendezvous is shared by all devices of the run and
  // outlives them.
  InProcessCommunicator(eval::Rendezvous* rendezvous, int64_t replica_id,
                        int64_t partition_id = 0)
      : rendezvous_(rendezvous), replica_id_(replica_id), partition_id_(partition_id) {}

  int64_t replica_id() const override { return replica_id_; }
  int64_t replica_count() const override { return rendezvous_->replica_count(); }
  int64_t partition_id() const override { return partition_id_; }
  int64_t partition_count() const override { return rendezvous_->partition_count(); }

  absl::Status AllGather(const Instruction& site, absl::Span<const int64_t> group,
                         absl::Span<const uint8_t> mine, absl::Span<uint8_t> all) override;

  // In place and in parallel: the members exchange their buffers'
  // addresses, each folds its share of the elements (in group order, so the
  // bits are FoldInGroupOrder's) and writes it into every member's `out`.
  // No array is copied through the rendezvous.
  absl::Status AllReduce(const Instruction& site, absl::Span<const int64_t> group, ElementType type,
                         ReductionKind kind, const void* in, void* out, int64_t count) override;

  // The members exchange their inputs' addresses and each copies its
  // blocks straight from the others' inputs; no array passes through the
  // rendezvous.
  absl::Status AllToAll(const Instruction& site, absl::Span<const int64_t> group, const void* in,
                        void* out, int64_t block) override;

  // Through the rendezvous' mailboxes (eval::Rendezvous::Post/Take).
  absl::Status Send(const Instruction& site, int64_t peer, int64_t tag,
                    absl::Span<const uint8_t> bytes) override;
  absl::Status Recv(const Instruction& site, int64_t peer, int64_t tag,
                    absl::Span<uint8_t> bytes) override;

  // This device's program ended with `status` (an error aborts the others).
  void Finish(const absl::Status& status) { rendezvous_->Finish(device_id(), status); }

 private:
  eval::Rendezvous* rendezvous_;
  int64_t replica_id_;
  int64_t partition_id_;
  // How often this replica has reached each collective (one thread per
  // replica: no lock).
  absl::flat_hash_map<const Instruction*, int64_t> occurrences_;
};

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_IN_PROCESS_H_
