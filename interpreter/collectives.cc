// Collectives across in-process replicas: the rendezvous that lets replica
// threads meet at a collective, the participant groups of replica_groups=, and
// the per-participant results of all-reduce, all-gather, reduce-scatter and
// all-to-all (seeds/003; XLA's collective_ops_utils for the group modes).
//
// Reductions fold the participants' values in group order,
// f(...f(f(v0, v1), v2)..., vn), element by element, calling the reducer on
// scalars, so any reducer works and the order is defined.
#include "interpreter/collectives.h"

#include <algorithm>
#include <cstring>
#include <cctype>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "interpreter/ops_internal.h"
#include "ir/layout_util.h"
#include "ir/sharding.h"
#include "ir/status_macros.h"

namespace xjit::eval {

using internal::Index;

// ---- Rendezvous ----

absl::StatusOr<std::vector<Literal>> Rendezvous::Exchange(const Instruction& instruction,
                                                          int64_t occurrence,
                                                          absl::Span<const int64_t> group,
                                                          int64_t replica, Literal value) {
  int64_t position = -1;
  for (size_t i = 0; i < group.size(); ++i) {
    if (group[i] == replica) position = static_cast<int64_t>(i);
  }
  if (position < 0) return absl::InternalError("a replica exchanges outside its group");
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  const Key key(&instruction, occurrence, group[0]);
  std::shared_ptr<Entry>& slot = entries_[key];
  if (slot == nullptr) {
    slot = std::make_shared<Entry>();
    slot->name = instruction.name();
    slot->group.assign(group.begin(), group.end());
    slot->values.resize(group.size());
  }
  std::shared_ptr<Entry> entry = slot;
  if (entry->group != std::vector<int64_t>(group.begin(), group.end())) {
    failure_ = absl::InvalidArgumentError(absl::StrCat(
        instruction.name(), ": replicas disagree on the group of replica ", group[0]));
    changed_.notify_all();
    return failure_;
  }
  entry->values[position] = std::move(value);
  ++entry->arrived;
  if (entry->arrived == static_cast<int64_t>(group.size())) {
    entry->complete = true;
    blocked_ -= entry->waiting;
    entries_.erase(key);
    changed_.notify_all();
  } else {
    ++entry->waiting;
    ++blocked_;
    CheckDeadlockLocked();
    changed_.wait(lock, [&] { return entry->complete || !failure_.ok(); });
    if (!entry->complete) return failure_;
  }
  lock.unlock();
  // Nobody writes a complete entry's values again.
  std::vector<Literal> values;
  values.reserve(entry->values.size());
  for (const std::optional<Literal>& v : entry->values) values.push_back(*v);
  return values;
}

void Rendezvous::Sync(const Instruction& instruction, int64_t occurrence,
                      absl::Span<const int64_t> group) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Key key(&instruction, occurrence, group[0]);
  std::shared_ptr<Entry>& slot = entries_[key];
  if (slot == nullptr) {
    slot = std::make_shared<Entry>();
    slot->name = instruction.name();
    slot->group.assign(group.begin(), group.end());
  }
  std::shared_ptr<Entry> entry = slot;
  if (++entry->arrived == static_cast<int64_t>(group.size())) {
    entry->complete = true;
    entries_.erase(key);
    changed_.notify_all();
    return;
  }
  // Not counted as blocked: the others are computing and will arrive.
  changed_.wait(lock, [&] { return entry->complete; });
}

absl::Status Rendezvous::Post(const Instruction& /*site*/, int64_t from, int64_t to, int64_t tag,
                              Literal value) {
  if (to < 0 || to >= device_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat("a send to device ", to, " of ", device_count()));
  }
  std::lock_guard<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  Mailbox& mailbox = mailboxes_[MailboxKey(from, to, tag)];
  mailbox.messages.push_back(std::move(value));
  if (mailbox.waiting) {
    // The receiver can proceed: it no longer counts as blocked (as a
    // completed Exchange does for its waiters), so a sender that finishes
    // now is not taken for a deadlock.
    mailbox.waiting = false;
    --blocked_;
    changed_.notify_all();
  }
  return absl::OkStatus();
}

absl::StatusOr<Literal> Rendezvous::Take(const Instruction& site, int64_t from, int64_t to,
                                         int64_t tag) {
  if (from < 0 || from >= device_count()) {
    return absl::InvalidArgumentError(
        absl::StrCat(site.name(), ": a recv from device ", from, " of ", device_count()));
  }
  std::unique_lock<std::mutex> lock(mutex_);
  if (!failure_.ok()) return failure_;
  Mailbox& mailbox = mailboxes_[MailboxKey(from, to, tag)];
  if (mailbox.messages.empty()) {
    mailbox.waiting = true;
    mailbox.waiter = absl::StrCat(site.name(), " on ", DeviceName(to), " waits for ",
                                  DeviceName(from));
    ++blocked_;
    CheckDeadlockLocked();
    changed_.wait(lock, [&] { return !mailbox.messages.empty() || !failure_.ok(); });
    if (mailbox.messages.empty()) return failure_;
  }
  Literal value = std::move(mailbox.messages.front());
  mailbox.messages.pop_front();
  return value;
}

void Rendezvous::Finish(int64_t replica, const absl::Status& status) {
  std::lock_guard<std::mutex> lock(mutex_);
  ++finished_;
  if (!status.ok() && failure_.ok()) {
    failure_ = absl::AbortedError(
        absl::StrCat(DeviceName(replica), " failed: ", status.message()));
    changed_.notify_all();
    return;
  }
  CheckDeadlockLocked();
}

std::string Rendezvous::DeviceName(int64_t device) const {
  if (partition_count_ == 1) return absl::StrCat("replica ", device);
  return absl::StrCat("replica ", device / partition_count_, " partition ",
                      device % partition_count_);
}

void Rendezvous::CheckDeadlockLocked() {
  if (!failure_.ok() || blocked_ == 0 || blocked_ + finished_ < device_count()) return;
  // Every unfinished replica waits; none of the entries can complete.
  std::vector<std::string> waits;
  for (const auto& [key, entry] : entries_) {
    std::vector<int64_t> present;
    for (size_t i = 0; i < entry->group.size(); ++i) {
      if (entry->values[i].has_value()) present.push_back(entry->group[i]);
    }
    waits.push_back(absl::StrCat(entry->name, " (execution ", std::get<1>(key) / kMeetingPhases + 1,
                                 ") has replicas {", absl::StrJoin(present, ","), "} of {",
                                 absl::StrJoin(entry->group, ","), "}"));
  }
  for (const auto& [key, mailbox] : mailboxes_) {
    if (mailbox.waiting) waits.push_back(mailbox.waiter);
  }
  std::sort(waits.begin(), waits.end());
  failure_ = absl::FailedPreconditionError(absl::StrCat(
      "replicas deadlocked: every unfinished replica waits at a collective or recv the others "
      "never reach (they disagree on the order or number of collectives): ",
      absl::StrJoin(waits, "; ")));
  changed_.notify_all();
}

// ---- Groups ----

GroupMode CollectiveGroupMode(const Instruction& instruction) {
  const InstructionAttributes& attrs = instruction.attrs();
  if (!attrs.channel_id.has_value()) return GroupMode::kCrossReplica;
  switch (instruction.opcode()) {
    case Opcode::kAllReduce: case Opcode::kAllReduceStart: case Opcode::kAllGather:
    case Opcode::kAllGatherStart: case Opcode::kReduceScatter:
      return attrs.use_global_device_ids ? GroupMode::kFlattenedId
                                         : GroupMode::kCrossReplicaAndPartition;
    default:
      return GroupMode::kCrossPartition;
  }
}

absl::StatusOr<PermutePeers> CollectivePermutePeers(const Instruction& instruction,
                                                    int64_t id_count, int64_t self,
                                                    bool cross_partition) {
  PermutePeers peers;
  for (const auto& [from, to] : instruction.attrs().source_target_pairs) {
    for (int64_t id : {from, to}) {
      if (id < 0 || id >= id_count) {
        return absl::InvalidArgumentError(absl::StrCat(
            "collective-permute: pair (", from, ",", to, ") names ",
            cross_partition ? "partition " : "replica ", id, " but there ",
            id_count == 1 ? "is 1" : absl::StrCat("are ", id_count),
            cross_partition ? " partition" : " replica", id_count == 1 ? "" : "s",
            cross_partition ? " (channel_id= makes it cross-partition)" : ""));
      }
      if (std::find(peers.group.begin(), peers.group.end(), id) == peers.group.end()) {
        peers.group.push_back(id);
      }
    }
    if (to == self) {
      if (peers.source.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("collective-permute: two pairs target ", to));
      }
      peers.source = from;
    }
  }
  std::sort(peers.group.begin(), peers.group.end());
  return peers;
}

absl::StatusOr<PermutePeers> PermuteDevices(const Instruction& instruction,
                                            const DeviceGrid& grid, int64_t replica,
                                            int64_t partition) {
  const bool cross_partition = CollectiveGroupMode(instruction) == GroupMode::kCrossPartition;
  const int64_t id_count = cross_partition ? grid.partitions : grid.replicas;
  const int64_t self = cross_partition ? partition : replica;
  XJIT_ASSIGN_OR_RETURN(PermutePeers peers,
                        CollectivePermutePeers(instruction, id_count, self, cross_partition));
  auto device = [&](int64_t id) {
    return cross_partition ? grid.Device(replica, id) : grid.Device(id, partition);
  };
  for (int64_t& id : peers.group) id = device(id);  // Monotone: stays sorted.
  if (peers.source.has_value()) peers.source = device(*peers.source);
  return peers;
}

namespace {

absl::string_view IdKind(GroupMode mode) {
  switch (mode) {
    case GroupMode::kCrossPartition: return "partition";
    case GroupMode::kFlattenedId: return "device";
    default: return "replica";
  }
}

}  // namespace

absl::StatusOr<std::vector<int64_t>> ParticipantDevices(const Instruction& instruction,
                                                        const DeviceGrid& grid, int64_t replica,
                                                        int64_t partition) {
  const GroupMode mode = CollectiveGroupMode(instruction);
  const std::vector<std::vector<int64_t>>& groups = instruction.attrs().replica_groups;
  const absl::string_view kind = IdKind(mode);
  // The ids of the mode's kind, and this device's id among them.
  const int64_t id_count = mode == GroupMode::kCrossPartition ? grid.partitions
                           : mode == GroupMode::kFlattenedId  ? grid.count()
                                                              : grid.replicas;
  const int64_t self = mode == GroupMode::kCrossPartition ? partition
                       : mode == GroupMode::kFlattenedId  ? grid.Device(replica, partition)
                                                          : replica;
  std::vector<int64_t> ids;
  if (groups.empty()) {
    if (mode == GroupMode::kFlattenedId) {
      return absl::InvalidArgumentError(absl::StrCat(
          OpcodeName(instruction.opcode()),
          " with use_global_device_ids=true needs replica_groups (flattened device ids)"));
    }
    for (int64_t i = 0; i < id_count; ++i) ids.push_back(i);
  } else {
    std::vector<bool> seen(id_count, false);
    const std::vector<int64_t>* mine = nullptr;
    for (const std::vector<int64_t>& group : groups) {
      for (int64_t id : group) {
        if (id < 0 || id >= id_count) {
          return absl::InvalidArgumentError(absl::StrCat(
              "replica_groups name ", kind, " ", id, " but there ",
              id_count == 1 ? absl::StrCat("is 1 ", kind)
                            : absl::StrCat("are ", id_count, " ", kind, "s"),
              mode == GroupMode::kCrossPartition
                  ? absl::StrCat(" (with channel_id= the groups of ",
                                 OpcodeName(instruction.opcode()), " name partitions)")
                  : ""));
        }
        if (seen[id]) {
          return absl::InvalidArgumentError(
              absl::StrCat(kind, " ", id, " appears twice in replica_groups"));
        }
        seen[id] = true;
        if (id == self) mine = &group;
      }
    }
    if (mine == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(kind, " ", self, " is in none of the replica_groups"));
    }
    ids = *mine;
  }
  std::vector<int64_t> devices;
  switch (mode) {
    case GroupMode::kCrossReplica:
      for (int64_t r : ids) devices.push_back(grid.Device(r, partition));
      break;
    case GroupMode::kCrossPartition:
      for (int64_t p : ids) devices.push_back(grid.Device(replica, p));
      break;
    case GroupMode::kCrossReplicaAndPartition:
      for (int64_t r : ids) {
        for (int64_t p = 0; p < grid.partitions; ++p) devices.push_back(grid.Device(r, p));
      }
      break;
    case GroupMode::kFlattenedId:
      devices = ids;
      break;
  }
  return devices;
}

// ---- Results ----

namespace {

absl::Status ShapeError(const Instruction& instruction, const Shape& value, const Shape& shape) {
  return absl::InvalidArgumentError(absl::StrCat(
      OpcodeName(instruction.opcode()), ": a contribution of shape ", value.ToString(false),
      " does not fit the result shape ", shape.ToString(false)));
}

// The values of element `i` of every contribution (a tuple), or the
// contributions themselves (arrays).
absl::StatusOr<std::vector<const Literal*>> Parts(const Instruction& instruction,
                                                 absl::Span<const Literal* const> values,
                                                 const Shape& shape, int64_t i) {
  std::vector<const Literal*> parts;
  for (const Literal* value : values) {
    if (!value->shape().IsTuple() || value->shape().tuple_size() != shape.tuple_size()) {
      return ShapeError(instruction, value->shape(), shape);
    }
    parts.push_back(&value->element(i));
  }
  return parts;
}

bool SameArray(const Shape& a, const Shape& b) {
  return a.IsArray() && b.IsArray() && a.element_type() == b.element_type() &&
         a.SameDimensions(b);
}

// Folds `values` (arrays of one shape) element by element with `reducer` in
// group order into a literal of `shape`.
absl::StatusOr<Literal> Reduce(const Instruction& instruction,
                               absl::Span<const Literal* const> values, const Shape& shape,
                               const Context& context) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      XJIT_ASSIGN_OR_RETURN(std::vector<const Literal*> parts,
                            Parts(instruction, values, shape, i));
      XJIT_ASSIGN_OR_RETURN(Literal element,
                            Reduce(instruction, parts, shape.tuple_shapes(i), context));
      elements.push_back(std::move(element));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  for (const Literal* value : values) {
    if (!SameArray(value->shape(), shape)) return ShapeError(instruction, value->shape(), shape);
  }
  const Computation* reducer = instruction.called_computations().empty()
                                   ? nullptr
                                   : instruction.called_computations()[0];
  if (reducer == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpcodeName(instruction.opcode()), " needs to_apply="));
  }
  Literal result(shape);
  XJIT_RETURN_IF_ERROR(
      internal::ForEachIndex(shape.dimensions(), [&](const Index& index) -> absl::Status {
        Literal accumulator = internal::ScalarFrom(*values[0], index);
        for (size_t i = 1; i < values.size(); ++i) {
          Literal next = internal::ScalarFrom(*values[i], index);
          const Literal* args[2] = {&accumulator, &next};
          XJIT_ASSIGN_OR_RETURN(std::vector<Literal> out,
                                internal::CallScalars(context, *reducer, args, 1));
          if (out[0].shape().element_type() != shape.element_type()) {
            return absl::InvalidArgumentError(absl::StrCat(
                "the reducer ", reducer->name(), " returns ",
                ElementTypeName(out[0].shape().element_type()), " for ",
                ElementTypeName(shape.element_type()), " values"));
          }
          accumulator = std::move(out[0]);
        }
        internal::CopyElement(accumulator, {}, result, index);
        return absl::OkStatus();
      }));
  return result;
}

std::vector<const Literal*> Pointers(absl::Span<const Literal> values) {
  std::vector<const Literal*> pointers;
  for (const Literal& value : values) pointers.push_back(&value);
  return pointers;
}

absl::StatusOr<int64_t> OnlyDimension(const Instruction& instruction) {
  const std::vector<int64_t>& dims = instruction.attrs().dimensions;
  if (dims.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat(OpcodeName(instruction.opcode()), " needs dimensions={d}"));
  }
  return dims[0];
}

// Result arrays of `shape` whose dimension `dim` is `factor` times (or, with
// `divide`, 1/factor of) the operand's `operand`, other dimensions equal.
absl::Status CheckScaled(const Instruction& instruction, const Shape& operand, const Shape& shape,
                         int64_t dim, int64_t factor, bool divide) {
  if (!operand.IsArray() || !shape.IsArray() || operand.element_type() != shape.element_type() ||
      operand.rank() != shape.rank() || dim < 0 || dim >= shape.rank()) {
    return ShapeError(instruction, operand, shape);
  }
  for (int64_t d = 0; d < shape.rank(); ++d) {
    const int64_t expected =
        d != dim ? operand.dimensions(d)
                 : (divide ? (operand.dimensions(d) % factor == 0 ? operand.dimensions(d) / factor
                                                                   : -1)
                           : operand.dimensions(d) * factor);
    if (expected != shape.dimensions(d)) return ShapeError(instruction, operand, shape);
  }
  return absl::OkStatus();
}

// Whether every value and a result of `shape` share one plain layout whose
// major-most dimension is `dim`, with whole bytes per element: then block k
// along `dim` is the k-th equal run of each buffer's bytes.
bool ContiguousBlocks(const Shape& shape, int64_t dim, absl::Span<const Literal* const> values) {
  if (!shape.has_layout() || !shape.layout().IsPlain() || shape.rank() == 0 ||
      shape.layout().minor_to_major.back() != dim ||
      ByteSize(shape) != shape.element_count() * ByteWidth(shape.element_type())) {
    return false;
  }
  for (const Literal* value : values) {
    if (!value->shape().has_layout() || !(value->shape().layout() == shape.layout())) return false;
  }
  return true;
}

absl::StatusOr<Literal> Gather(const Instruction& instruction,
                               absl::Span<const Literal* const> values, const Shape& shape,
                               int64_t dim) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      XJIT_ASSIGN_OR_RETURN(std::vector<const Literal*> parts,
                            Parts(instruction, values, shape, i));
      XJIT_ASSIGN_OR_RETURN(Literal element,
                            Gather(instruction, parts, shape.tuple_shapes(i), dim));
      elements.push_back(std::move(element));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  const int64_t count = static_cast<int64_t>(values.size());
  for (const Literal* value : values) {
    XJIT_RETURN_IF_ERROR(CheckScaled(instruction, value->shape(), shape, dim, count, false));
  }
  Literal result(shape);
  if (ContiguousBlocks(shape, dim, values)) {
    // Along the major-most dimension the pieces are byte runs, in order.
    const int64_t bytes = static_cast<int64_t>(result.data().size()) / count;
    for (int64_t i = 0; i < count && bytes > 0; ++i) {
      std::memcpy(result.data().data() + i * bytes, values[i]->data().data(), bytes);
    }
    return result;
  }
  for (int64_t i = 0; i < count; ++i) {
    const int64_t offset = i * values[i]->shape().dimensions(dim);
    XJIT_RETURN_IF_ERROR(
        internal::ForEachIndex(values[i]->shape().dimensions(), [&](const Index& index) {
          Index target = index;
          target[dim] += offset;
          internal::CopyElement(*values[i], index, result, target);
          return absl::OkStatus();
        }));
  }
  return result;
}

// Block `block` (of `shape`'s size) of `full` along `dim`.
absl::StatusOr<Literal> Block(const Literal& full, const Shape& shape, int64_t dim,
                              int64_t block) {
  Literal result(shape);
  const int64_t offset = block * shape.dimensions(dim);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
    Index source = index;
    source[dim] += offset;
    internal::CopyElement(full, source, result, index);
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<Literal> Scatter(const Instruction& instruction, const Literal& reduced,
                                const Shape& shape, int64_t dim, int64_t count,
                                int64_t position) {
  if (shape.IsTuple()) {
    if (!reduced.shape().IsTuple() || reduced.shape().tuple_size() != shape.tuple_size()) {
      return ShapeError(instruction, reduced.shape(), shape);
    }
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      XJIT_ASSIGN_OR_RETURN(Literal element, Scatter(instruction, reduced.element(i),
                                                     shape.tuple_shapes(i), dim, count,
                                                     position));
      elements.push_back(std::move(element));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  XJIT_RETURN_IF_ERROR(CheckScaled(instruction, reduced.shape(), shape, dim, count, true));
  return Block(reduced, shape, dim, position);
}

// The array all-to-all: block `position` of every participant's operand
// along `dim`, concatenated along `dim` in group order.
absl::StatusOr<Literal> ExchangeBlocks(const Instruction& instruction,
                                       absl::Span<const Literal* const> values,
                                       const Shape& shape, int64_t dim, int64_t position) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      XJIT_ASSIGN_OR_RETURN(std::vector<const Literal*> parts,
                            Parts(instruction, values, shape, i));
      XJIT_ASSIGN_OR_RETURN(Literal element, ExchangeBlocks(instruction, parts,
                                                            shape.tuple_shapes(i), dim, position));
      elements.push_back(std::move(element));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  const int64_t count = static_cast<int64_t>(values.size());
  for (const Literal* value : values) {
    if (!SameArray(value->shape(), shape)) return ShapeError(instruction, value->shape(), shape);
  }
  if (dim < 0 || dim >= shape.rank() || shape.dimensions(dim) % count != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "all-to-all: dimension ", dim, " of ", shape.ToString(false),
        " does not split into ", count, " equal blocks"));
  }
  const int64_t block = shape.dimensions(dim) / count;
  Literal result(shape);
  if (ContiguousBlocks(shape, dim, values)) {
    // Each block is one run of bytes: the dimension is the major-most.
    const int64_t bytes = static_cast<int64_t>(result.data().size()) / count;
    for (int64_t source = 0; source < count; ++source) {
      if (bytes > 0) {
        std::memcpy(result.data().data() + source * bytes,
                    values[source]->data().data() + position * bytes, bytes);
      }
    }
    return result;
  }
  for (int64_t source = 0; source < count; ++source) {
    XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
      if (index[dim] / block != source) return absl::OkStatus();
      Index from = index;
      from[dim] = position * block + index[dim] % block;
      internal::CopyElement(*values[source], from, result, index);
      return absl::OkStatus();
    }));
  }
  return result;
}

}  // namespace

absl::StatusOr<Literal> AllReduceResult(const Instruction& instruction,
                                        absl::Span<const Literal> contributions,
                                        const Shape& shape, const Context& context) {
  return Reduce(instruction, Pointers(contributions), shape, context);
}

absl::StatusOr<Literal> AllGatherResult(const Instruction& instruction,
                                        absl::Span<const Literal> contributions,
                                        const Shape& shape) {
  XJIT_ASSIGN_OR_RETURN(int64_t dim, OnlyDimension(instruction));
  return Gather(instruction, Pointers(contributions), shape, dim);
}

absl::StatusOr<Literal> ReduceScatterResult(const Instruction& instruction,
                                            absl::Span<const Literal> contributions,
                                            int64_t position, const Shape& shape,
                                            const Context& context) {
  XJIT_ASSIGN_OR_RETURN(int64_t dim, OnlyDimension(instruction));
  XJIT_ASSIGN_OR_RETURN(Literal reduced, Reduce(instruction, Pointers(contributions),
                                                contributions[0].shape(), context));
  return Scatter(instruction, reduced, shape, dim,
                 static_cast<int64_t>(contributions.size()), position);
}

absl::StatusOr<Literal> AllToAllResult(const Instruction& instruction,
                                       absl::Span<const Literal> contributions, int64_t position,
                                       const Shape& shape) {
  const int64_t count = static_cast<int64_t>(contributions.size());
  if (!instruction.attrs().dimensions.empty()) {
    XJIT_ASSIGN_OR_RETURN(int64_t dim, OnlyDimension(instruction));
    return ExchangeBlocks(instruction, Pointers(contributions), shape, dim, position);
  }
  // The tuple form: participant j's operand `position` becomes result j.
  if (!shape.IsTuple() || shape.tuple_size() != count) {
    return absl::InvalidArgumentError(absl::StrCat(
        "all-to-all without dimensions= has one operand and one result per participant; ",
        count, " participants, result ", shape.ToString(false)));
  }
  std::vector<Literal> elements;
  for (int64_t j = 0; j < count; ++j) {
    const Literal& value = contributions[j];
    const Literal* part = nullptr;
    if (value.shape().IsTuple()) {
      if (value.shape().tuple_size() != count) return ShapeError(instruction, value.shape(), shape);
      part = &value.element(position);
    } else if (count == 1) {
      part = &value;
    } else {
      return ShapeError(instruction, value.shape(), shape);
    }
    if (!SameArray(part->shape(), shape.tuple_shapes(j))) {
      return ShapeError(instruction, part->shape(), shape.tuple_shapes(j));
    }
    elements.push_back(part->Relayout(shape.tuple_shapes(j)));
  }
  return Literal::MakeTuple(std::move(elements));
}

// ---- Point to point ----

bool IsCrossReplicaTransfer(const Instruction& instruction) {
  for (const OpaqueAttribute& attribute : instruction.opaque_attributes()) {
    if (attribute.value.find("_xla_send_recv_source_target_pairs") != std::string::npos) {
      return true;
    }
  }
  return false;
}

namespace {

// The pairs of `_xla_send_recv_source_target_pairs={{0,1},{1,2}}` (the value
// may be quoted) inside a frontend_attributes={...} text.
absl::StatusOr<std::vector<std::pair<int64_t, int64_t>>> ParsePairs(
    const Instruction& instruction) {
  const std::string kKey = "_xla_send_recv_source_target_pairs";
  for (const OpaqueAttribute& attribute : instruction.opaque_attributes()) {
    const std::string& text = attribute.value;
    size_t at = text.find(kKey);
    if (at == std::string::npos) continue;
    at += kKey.size();
    auto bad = [&]() {
      return absl::InvalidArgumentError(
          absl::StrCat(OpcodeName(instruction.opcode()), ": cannot read ", kKey, " from ", text));
    };
    auto skip = [&]() {
      while (at < text.size() && (std::isspace(static_cast<unsigned char>(text[at])) ||
                                  text[at] == '"' || text[at] == '=')) {
        ++at;
      }
    };
    auto expect = [&](char c) {
      skip();
      if (at >= text.size() || text[at] != c) return false;
      ++at;
      return true;
    };
    auto number = [&](int64_t* value) {
      skip();
      size_t end = at;
      if (end < text.size() && text[end] == '-') ++end;
      while (end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]))) ++end;
      if (end == at || end - at > 18) return false;
      *value = std::stoll(text.substr(at, end - at));
      at = end;
      return true;
    };
    std::vector<std::pair<int64_t, int64_t>> pairs;
    if (!expect('{')) return bad();
    skip();
    if (at < text.size() && text[at] == '}') return pairs;
    while (true) {
      int64_t from = 0, to = 0;
      if (!expect('{') || !number(&from) || !expect(',') || !number(&to) || !expect('}')) {
        return bad();
      }
      pairs.emplace_back(from, to);
      skip();
      if (at < text.size() && text[at] == ',') {
        ++at;
        continue;
      }
      if (!expect('}')) return bad();
      return pairs;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(OpcodeName(instruction.opcode()), ": no ", kKey, " frontend attribute"));
}

// Integer element i (row-major) of an offsets/sizes operand.
absl::StatusOr<int64_t> IntegerAt(const Instruction& instruction, const Literal& value, int64_t i) {
  const uint64_t bits = value.GetBitsLinear(i);
  switch (value.shape().element_type()) {
    case ElementType::kS32:
      return static_cast<int64_t>(static_cast<int32_t>(bits));
    case ElementType::kS64:
      return static_cast<int64_t>(bits);
    case ElementType::kU32:
      return static_cast<int64_t>(bits);
    case ElementType::kU64:
      if (bits > static_cast<uint64_t>(INT64_MAX)) break;
      return static_cast<int64_t>(bits);
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("ragged-all-to-all: offsets and sizes are s32, s64, u32 or u64, not ",
                       value.shape().ToString(false)));
  }
  return absl::InvalidArgumentError(
      absl::StrCat("ragged-all-to-all: offset ", bits, " is out of range"));
}

}  // namespace

absl::StatusOr<SendRecvPeers> CrossReplicaPeers(const Instruction& instruction,
                                                int64_t replica_count, int64_t self) {
  XJIT_ASSIGN_OR_RETURN(auto pairs, ParsePairs(instruction));
  SendRecvPeers peers;
  for (const auto& [from, to] : pairs) {
    for (int64_t id : {from, to}) {
      if (id < 0 || id >= replica_count) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpcodeName(instruction.opcode()), ": pair (", from, ",", to,
                         ") names replica ", id, " but there ",
                         replica_count == 1 ? "is 1 replica"
                                            : absl::StrCat("are ", replica_count, " replicas")));
      }
    }
    if (from == self) peers.targets.push_back(to);
    if (to == self) {
      if (peers.source.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat(OpcodeName(instruction.opcode()), ": two pairs target replica ", to));
      }
      peers.source = from;
    }
  }
  return peers;
}

bool IsCombinedPermute(const Instruction& instruction) {
  const Shape& shape = instruction.shape();
  if (instruction.opcode() != Opcode::kCollectivePermute || instruction.operand_count() < 2 ||
      !shape.IsTuple() || shape.tuple_size() != instruction.operand_count()) {
    return false;
  }
  for (int64_t i = 0; i < instruction.operand_count(); ++i) {
    if (!instruction.operand(i)->shape().IsArray() ||
        !SameArray(instruction.operand(i)->shape(), shape.tuple_shapes(i))) {
      return false;
    }
  }
  return true;
}

absl::StatusOr<Literal> RaggedAllToAllResult(const Instruction& instruction,
                                             absl::Span<const Literal> contributions,
                                             int64_t position, const Shape& shape) {
  const int64_t members = static_cast<int64_t>(contributions.size());
  for (const Literal& value : contributions) {
    if (!value.shape().IsTuple() || value.shape().tuple_size() != 6) {
      return absl::InvalidArgumentError(
          absl::StrCat("ragged-all-to-all takes (input, output, input_offsets, "
                       "send_sizes, output_offsets, recv_sizes)"));
    }
  }
  const Literal& mine = contributions[position];
  const Shape& input_shape = mine.element(0).shape();
  const Shape& output_shape = mine.element(1).shape();
  if (!shape.IsArray() || !SameArray(output_shape, shape) || input_shape.rank() == 0 ||
      input_shape.rank() != shape.rank() || input_shape.element_type() != shape.element_type()) {
    return ShapeError(instruction, input_shape, shape);
  }
  for (int64_t d = 1; d < shape.rank(); ++d) {
    if (input_shape.dimensions(d) != shape.dimensions(d)) {
      return ShapeError(instruction, input_shape, shape);
    }
  }
  const int64_t entries = mine.element(2).element_count();
  for (int64_t k = 2; k < 6; ++k) {
    if (mine.element(k).element_count() != entries) {
      return absl::InvalidArgumentError(
          absl::StrCat("ragged-all-to-all: the offsets and sizes operands differ in size"));
    }
  }
  if (entries % members != 0) {
    return absl::InvalidArgumentError(absl::StrCat("ragged-all-to-all: ", entries,
                                                   " offsets for a group of ", members,
                                                   " (a multiple of the group size is needed)"));
  }
  const int64_t updates = entries / members;
  const int64_t input_rows = input_shape.dimensions(0);
  const int64_t output_rows = shape.dimensions(0);
  const int64_t row = input_rows == 0 ? 0 : input_shape.element_count() / input_rows;
  Literal result = mine.element(1).Relayout(shape);
  for (int64_t q = 0; q < members; ++q) {
    const Literal& sender = contributions[q];
    for (int64_t u = 0; u < updates; ++u) {
      const int64_t i = position * updates + u;
      XJIT_ASSIGN_OR_RETURN(int64_t in_offset, IntegerAt(instruction, sender.element(2), i));
      XJIT_ASSIGN_OR_RETURN(int64_t size, IntegerAt(instruction, sender.element(3), i));
      XJIT_ASSIGN_OR_RETURN(int64_t out_offset, IntegerAt(instruction, sender.element(4), i));
      XJIT_ASSIGN_OR_RETURN(int64_t expected,
                            IntegerAt(instruction, mine.element(5), q * updates + u));
      if (size != expected) {
        return absl::InvalidArgumentError(absl::StrCat("ragged-all-to-all: member ", q, " sends ",
                                                       size, " rows (update ", u,
                                                       ") where recv_sizes expects ", expected));
      }
      if (size < 0 || in_offset < 0 || in_offset > input_rows - size || out_offset < 0 ||
          out_offset > output_rows - size) {
        return absl::InvalidArgumentError(absl::StrCat(
            "ragged-all-to-all: member ", q, " sends rows [", in_offset, ", +", size, ") of ",
            input_rows, " to rows [", out_offset, ", +", size, ") of ", output_rows));
      }
      const Literal& input = sender.element(0);
      for (int64_t e = 0; e < size * row; ++e) {
        result.SetBitsLinear(out_offset * row + e, input.GetBitsLinear(in_offset * row + e));
      }
    }
  }
  return result;
}

// ---- SPMD sharding calls ----

bool IsShardingCall(absl::string_view target) {
  return target == "SPMDFullToShardShape" || target == "SPMDShardToFullShape";
}

namespace {

absl::Status CheckArrays(const Instruction& call, const Shape& a, const Shape& b) {
  if (!a.IsArray() || !b.IsArray() || a.is_dynamic() || b.is_dynamic()) {
    return absl::UnimplementedError(absl::StrCat(
        call.attrs().custom_call_target, " of other than one static array is not supported"));
  }
  if (a.element_type() != b.element_type() || a.rank() != b.rank()) {
    return absl::InvalidArgumentError(absl::StrCat(call.attrs().custom_call_target, ": ",
                                                   a.ToString(false), " and ", b.ToString(false),
                                                   " differ in type or rank"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::optional<ShardTiling>> ShardingCallTiling(const Instruction& instruction,
                                                              int64_t partition_count) {
  const std::string& target = instruction.attrs().custom_call_target;
  if (instruction.operand_count() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(target, " takes one operand"));
  }
  const bool to_shard = target == "SPMDFullToShardShape";
  const Instruction& holder = to_shard ? *instruction.operand(0) : instruction;
  const Shape& full = to_shard ? instruction.operand(0)->shape() : instruction.shape();
  const Shape& shard = to_shard ? instruction.shape() : instruction.operand(0)->shape();
  XJIT_RETURN_IF_ERROR(CheckArrays(instruction, full, shard));
  std::optional<std::string> text = ShardingAttribute(holder);
  if (!text.has_value()) {
    if (full.SameDimensions(shard)) return std::optional<ShardTiling>();
    return absl::InvalidArgumentError(absl::StrCat(
        target, " changes ", instruction.operand(0)->shape().ToString(false), " to ",
        instruction.shape().ToString(false), " but ", holder.name(),
        " has no sharding= to cut the tiles by"));
  }
  absl::StatusOr<Sharding> sharding = ParseSharding(*text);
  absl::StatusOr<ShardTiling> tiling =
      sharding.ok() ? TileArray(*sharding, full.dimensions(), partition_count)
                    : absl::StatusOr<ShardTiling>(sharding.status());
  if (!tiling.ok()) {
    return absl::Status(tiling.status().code(),
                        absl::StrCat(target, ": the sharding of ", holder.name(), ": ",
                                     tiling.status().message()));
  }
  if (shard.dimensions() != absl::Span<const int64_t>(tiling->tile_shape)) {
    return absl::InvalidArgumentError(absl::StrCat(
        target, ": the sharding cuts ", full.ToString(false), " into tiles of [",
        absl::StrJoin(tiling->tile_shape, ","), "], not ", shard.ToString(false)));
  }
  return std::optional<ShardTiling>(*std::move(tiling));
}

absl::StatusOr<Literal> ShardOf(const Instruction& instruction, const Literal& full,
                                int64_t partition, int64_t partition_count) {
  const Shape& shape = instruction.shape();
  XJIT_ASSIGN_OR_RETURN(std::optional<ShardTiling> tiling,
                        ShardingCallTiling(instruction, partition_count));
  if (!full.shape().IsArray() || !full.shape().SameDimensions(instruction.operand(0)->shape())) {
    return absl::InvalidArgumentError("SPMDFullToShardShape: an operand of another shape");
  }
  if (!tiling.has_value()) return full.Relayout(shape);
  const std::vector<int64_t>& tile = tiling->tile_of_partition[partition];
  Literal result(shape);  // Zeros where the tile reaches past the array.
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
    Index source = index;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      source[d] += tile[d] * tiling->tile_shape[d];
      if (source[d] >= full.shape().dimensions(d)) return absl::OkStatus();
    }
    internal::CopyElement(full, source, result, index);
    return absl::OkStatus();
  }));
  return result;
}

absl::StatusOr<Literal> FullFromShards(const Instruction& instruction,
                                       absl::Span<const Literal> shards, int64_t partition,
                                       int64_t partition_count) {
  const Shape& shape = instruction.shape();
  if (static_cast<int64_t>(shards.size()) != partition_count) {
    return absl::InvalidArgumentError("SPMDShardToFullShape takes one shard per partition");
  }
  XJIT_ASSIGN_OR_RETURN(std::optional<ShardTiling> tiling,
                        ShardingCallTiling(instruction, partition_count));
  for (const Literal& shard : shards) {
    if (!shard.shape().IsArray() ||
        !shard.shape().SameDimensions(instruction.operand(0)->shape())) {
      return absl::InvalidArgumentError("SPMDShardToFullShape: a shard of another shape");
    }
  }
  if (!tiling.has_value() || tiling->owner.size() == 1) return shards[partition].Relayout(shape);
  Literal result(shape);
  XJIT_RETURN_IF_ERROR(internal::ForEachIndex(shape.dimensions(), [&](const Index& index) {
    Index within = index;
    int64_t tile = 0;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      tile = tile * tiling->tiles[d] + index[d] / tiling->tile_shape[d];
      within[d] = index[d] % tiling->tile_shape[d];
    }
    internal::CopyElement(shards[tiling->owner[tile]], within, result, index);
    return absl::OkStatus();
  }));
  return result;
}

}  // namespace xjit::eval
