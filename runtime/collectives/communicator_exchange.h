// CommunicatorExchange: the evaluator's collectives (eval::ReplicaExchange,
// interpreter/collectives.h) over a Communicator, so that the interpreter
// backend runs as one replica of a run whose other replicas are elsewhere
// (MPI ranks: RunModuleAsReplica in interpreter/evaluator.h with an
// MpiCommunicator). A contribution travels as its flattened bytes through
// Communicator::AllGather and comes back as a literal of the same shape per
// member; the evaluator then computes every result as it does in process,
// so the bits are the in-process run's. Send/recv between replicas goes
// through Communicator::Send/Recv.
#ifndef XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_EXCHANGE_H_
#define XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_EXCHANGE_H_

#include <cstdint>
#include <vector>

#include "interpreter/collectives.h"
#include "runtime/collectives/communicator.h"

namespace xjit::collectives {

class CommunicatorExchange : public eval::ReplicaExchange {
 public:
  // `communicator` outlives this object.
  explicit CommunicatorExchange(Communicator& communicator) : communicator_(communicator) {}

  int64_t replica_count() const override { return communicator_.replica_count(); }

  absl::StatusOr<std::vector<Literal>> Exchange(const Instruction& instruction,
                                                int64_t occurrence,
                                                absl::Span<const int64_t> group, int64_t replica,
                                                Literal value) override;

  // A value travels as two messages under `tag`: a header (the lengths of
  // its shape's text and of its flattened bytes), then the shape's text and
  // the bytes, so the receiver needs no shape of its own.
  absl::Status Post(const Instruction& site, int64_t from, int64_t to, int64_t tag,
                    Literal value) override;
  absl::StatusOr<Literal> Take(const Instruction& site, int64_t from, int64_t to,
                               int64_t tag) override;

 private:
  Communicator& communicator_;
};

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_EXCHANGE_H_
