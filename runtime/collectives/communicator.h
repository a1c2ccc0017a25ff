// Communicator: one replica's end of the collectives of a replicated run.
//
// This is the interface between the compiled program and a transport. The
// library-call steps of collectives (collective_step.h) do the HLO work —
// participant groups, layouts, blocks, tuples — and call the few primitives
// below, so a transport only moves bytes and reduces typed arrays:
//   - InProcessCommunicator (in_process.h): replicas are threads of one
//     process (xjit run --replicas N, the C API's replicated execute);
//   - an MPI transport (replicas as processes, issue #18) implements the same
//     class and the JIT does not change.
//
// Matching: every member of a group calls the same primitive for the same
// `site` (the collective instruction) with the same group; the k-th call for
// a site on one replica meets the k-th call for it on the others, whatever
// loops or branches led there. A transport that matches by order (MPI on a
// communicator per group) may ignore `site`.
//
// Determinism: AllReduce folds the members' values in group order,
// f(...f(f(v0, v1), v2)..., vn) element by element, whatever the transport
// (FoldInGroupOrder), so every replica and every transport gets the same
// bits, and the evaluator's (interpreter/collectives.h) as well.
#ifndef XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_
#define XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_

#include <cstdint>
#include <optional>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "ir/element_type.h"
#include "ir/instruction.h"

namespace xjit::collectives {

// Reducers the runtime computes itself. Any other reducer is folded by the
// caller from an AllGather (with the compiled or evaluated computation).
enum class ReductionKind : uint8_t { kSum, kProduct, kMax, kMin, kAnd, kOr };

// Whether FoldInGroupOrder computes `kind` on `type` (bit-exactly as the
// evaluator): sum/product/max/min on the float types of 8 to 64 bits and the
// integer types (integer arithmetic wraps; max/min of floats propagate NaN and
// order -0 below +0; 8- and 16-bit floats round after every step, as the
// evaluated reducer does), and/or on pred and the integer types (bitwise;
// pred as logical).
bool CanFold(ElementType type, ReductionKind kind);

// out[i] = fold over members m = 0..members-1 of values[m * count + i] in
// that order. `values` holds `members` arrays of `count` elements of `type`
// one after another; `out` may be values' first array. CanFold must hold.
void FoldInGroupOrder(ElementType type, ReductionKind kind, const void* values,
                      int64_t members, int64_t count, void* out);

// The same over elements [begin, end) of `members` arrays that lie anywhere:
// out[i - begin] = fold over m of inputs[m][i], in member order. `out` may
// alias inputs[0] + begin (then it must hold no other input's elements).
void FoldRange(ElementType type, ReductionKind kind, const void* const* inputs, int64_t members,
               int64_t begin, int64_t end, void* out);

// The inclusive scan of `rows` rows of `inner` contiguous elements each,
// row after row: out row 0 = f(init_row, in row 0), out row i = f(out row
// i - 1, in row i), element by element, each step FoldRange's reducer (the
// same bits). `out` may be `in`. False (nothing written) for the types it
// does not cover: pred and the narrow floats.
bool ScanRows(ElementType type, ReductionKind kind, const void* init_row, const void* in,
              int64_t rows, int64_t inner, void* out);

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int64_t replica_id() const = 0;
  virtual int64_t replica_count() const = 0;
  // This end's partition and the partitions of each replica. Groups and
  // peers below are device ids, replica * partition_count() + partition
  // (XLA's default device assignment): replica ids when there is one
  // partition, as for every transport between processes (MPI).
  virtual int64_t partition_id() const { return 0; }
  virtual int64_t partition_count() const { return 1; }
  int64_t device_id() const { return replica_id() * partition_count() + partition_id(); }

  // Every member of `group` (device ids in group order, this device among
  // them) contributes `mine` (the same size on every member); `all`
  // receives group.size() * mine.size() bytes, the members' contributions in
  // group order. A group of one copies `mine`.
  virtual absl::Status AllGather(const Instruction& site, absl::Span<const int64_t> group,
                                 absl::Span<const uint8_t> mine, absl::Span<uint8_t> all) = 0;

  // `out` (count elements of `type`) receives the fold in group order of
  // every member's `in` (CanFold(type, kind) holds). The default gathers
  // then folds; a transport may do better as long as the bits are the same.
  virtual absl::Status AllReduce(const Instruction& site, absl::Span<const int64_t> group,
                                 ElementType type, ReductionKind kind, const void* in, void* out,
                                 int64_t count);

  // All-to-all of equal byte blocks: `in` and `out` hold group.size()
  // blocks of `block` bytes each; block j of member i's `in` becomes block i
  // of member j's `out` (i, j: positions in the group). `out` may be `in`.
  // The default gathers every member's `in` through AllGather and picks; a
  // transport may move only the blocks.
  virtual absl::Status AllToAll(const Instruction& site, absl::Span<const int64_t> group,
                                const void* in, void* out, int64_t block);

  // Point to point (HLO send/recv between replicas, ragged-all-to-all): a
  // message of bytes from this replica to replica `peer` (this replica
  // itself included). Messages from one replica to another with the same
  // `tag` are received in the order they were sent; `site` only names the
  // instruction in errors (a send and its recv are different instructions).
  //
  // Send never waits for the receiver: the transport buffers the message
  // (MPI: MPI_Isend completed by the next call, or MPI_Bsend). Recv waits
  // for the oldest message from `peer` with `tag` not yet received; its size
  // must be bytes.size() (InvalidArgument otherwise). The defaults return
  // Unimplemented, so a transport without point to point still runs every
  // other collective.
  virtual absl::Status Send(const Instruction& site, int64_t peer, int64_t tag,
                            absl::Span<const uint8_t> bytes);
  virtual absl::Status Recv(const Instruction& site, int64_t peer, int64_t tag,
                            absl::Span<uint8_t> bytes);

  // This device finished a run of the program without error. A transport
  // between processes tells the others, so that a device still waiting for
  // it in a collective fails at once instead of waiting out a timeout
  // (replica-dependent trip counts), and fails itself when one is still
  // waiting. Runners over such a transport call it after every successful
  // run; in-process devices learn it from the rendezvous (the default does
  // nothing).
  virtual absl::Status ProgramDone() { return absl::OkStatus(); }
  // This device runs nothing more over the communicator: a transport between
  // processes checks that every device leaves after as many runs (a device
  // still running fails instead of waiting for this one).
  virtual absl::Status Leave() { return absl::OkStatus(); }
  // Before a run: every device states whether it can start it (`mine`, say
  // its arguments were valid). Returns `mine` when it is an error, else an
  // error naming a device that cannot start, else OK, so that either every
  // device runs or none does (one with bad arguments left the others waiting
  // in their first collective). Over processes, one exchange; the default
  // (in-process devices, which fail together through the rendezvous)
  // returns `mine`.
  virtual absl::Status AgreeToRun(const absl::Status& mine) { return mine; }
};

}  // namespace xjit::collectives

#endif  // XJIT_RUNTIME_COLLECTIVES_COMMUNICATOR_H_
