// InProcessCommunicator over the evaluator's Rendezvous (see in_process.h).
#include "runtime/collectives/in_process.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/literal.h"
#include "ir/status_macros.h"

namespace xjit::collectives {

absl::Status InProcessCommunicator::AllGather(const Instruction& site,
                                              absl::Span<const int64_t> group,
                                              absl::Span<const uint8_t> mine,
                                              absl::Span<uint8_t> all) {
  if (all.size() != mine.size() * group.size()) {
    return absl::InternalError(absl::StrCat(site.name(), ": all-gather buffer of ", all.size(),
                                            " bytes for ", group.size(), " x ", mine.size()));
  }
  const int64_t occurrence = occurrences_[&site]++;
  if (group.size() == 1) {
    if (!mine.empty()) std::memcpy(all.data(), mine.data(), mine.size());
    return absl::OkStatus();
  }
  // The rendezvous moves literals; bytes travel as a u8 array.
  Literal value(Shape::Array(ElementType::kU8, {static_cast<int64_t>(mine.size())}));
  if (!mine.empty()) std::memcpy(value.data().data(), mine.data(), mine.size());
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> values,
                        rendezvous_->Exchange(site, eval::MeetingKey(occurrence, 0), group, device_id(),
                                              std::move(value)));
  for (size_t m = 0; m < values.size(); ++m) {
    absl::Span<const uint8_t> bytes = values[m].data();
    if (bytes.size() != mine.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          site.name(), ": ", rendezvous_->DeviceName(group[m]), " contributes ", bytes.size(),
          " bytes where this device contributes ", mine.size()));
    }
    if (!bytes.empty()) std::memcpy(all.data() + m * mine.size(), bytes.data(), bytes.size());
  }
  return absl::OkStatus();
}

absl::Status InProcessCommunicator::AllReduce(const Instruction& site,
                                              absl::Span<const int64_t> group, ElementType type,
                                              ReductionKind kind, const void* in, void* out,
                                              int64_t count) {
  const int64_t width = ByteWidth(type);
  const int64_t occurrence = occurrences_[&site]++;
  const int64_t members = static_cast<int64_t>(group.size());
  if (members == 1) {
    if (out != in && count > 0) std::memmove(out, in, count * width);
    return absl::OkStatus();
  }
  const int64_t position = std::find(group.begin(), group.end(), device_id()) - group.begin();
  if (position == members) return absl::InternalError("a replica reduces outside its group");
  // Phase 1: every member's (in, out); completing it means every input is
  // ready. Three meetings per execution of the site.
  Literal addresses(Shape::Array(ElementType::kU64, {2}));
  addresses.SetBitsLinear(0, reinterpret_cast<uintptr_t>(in));
  addresses.SetBitsLinear(1, reinterpret_cast<uintptr_t>(out));
  XJIT_ASSIGN_OR_RETURN(
      std::vector<Literal> all,
      rendezvous_->Exchange(site, eval::MeetingKey(occurrence, 0), group, device_id(), std::move(addresses)));
  std::vector<const void*> inputs(members);
  std::vector<uint8_t*> outputs(members);
  for (int64_t m = 0; m < members; ++m) {
    inputs[m] = reinterpret_cast<const void*>(static_cast<uintptr_t>(all[m].GetBitsLinear(0)));
    outputs[m] = reinterpret_cast<uint8_t*>(static_cast<uintptr_t>(all[m].GetBitsLinear(1)));
  }
  // Phase 2: this member's share, folded from every input.
  const int64_t begin = count * position / members;
  const int64_t end = count * (position + 1) / members;
  std::vector<uint8_t> share(static_cast<size_t>((end - begin) * width));
  FoldRange(type, kind, inputs.data(), members, begin, end, share.data());
  // Every input has been read (an output may be its member's input), so the
  // shares go into every output; then nobody leaves before all are written.
  rendezvous_->Sync(site, eval::MeetingKey(occurrence, 1), group);
  if (!share.empty()) {
    for (int64_t m = 0; m < members; ++m) {
      std::memcpy(outputs[m] + begin * width, share.data(), share.size());
    }
  }
  rendezvous_->Sync(site, eval::MeetingKey(occurrence, 2), group);
  return absl::OkStatus();
}

absl::Status InProcessCommunicator::AllToAll(const Instruction& site,
                                             absl::Span<const int64_t> group, const void* in,
                                             void* out, int64_t block) {
  const int64_t occurrence = occurrences_[&site]++;
  const int64_t members = static_cast<int64_t>(group.size());
  if (members == 1) {
    if (out != in && block > 0) std::memmove(out, in, block);
    return absl::OkStatus();
  }
  const int64_t position = std::find(group.begin(), group.end(), device_id()) - group.begin();
  if (position == members) return absl::InternalError("a device exchanges outside its group");
  // Phase 1: every member's input address; completing it means every input
  // is ready. Two meetings per execution of the site.
  Literal address(Shape::Array(ElementType::kU64, {1}));
  address.SetBitsLinear(0, reinterpret_cast<uintptr_t>(in));
  XJIT_ASSIGN_OR_RETURN(
      std::vector<Literal> all,
      rendezvous_->Exchange(site, eval::MeetingKey(occurrence, 0), group, device_id(), std::move(address)));
  // Phase 2: this member's blocks, read before anyone writes (an output may
  // be its member's input), then written once every member has read.
  std::vector<uint8_t> mine(static_cast<size_t>(block * members));
  for (int64_t m = 0; m < members && block > 0; ++m) {
    const auto* source = reinterpret_cast<const uint8_t*>(
        static_cast<uintptr_t>(all[m].GetBitsLinear(0)));
    std::memcpy(mine.data() + m * block, source + position * block, block);
  }
  rendezvous_->Sync(site, eval::MeetingKey(occurrence, 1), group);
  if (!mine.empty()) std::memcpy(out, mine.data(), mine.size());
  return absl::OkStatus();
}

absl::Status InProcessCommunicator::Send(const Instruction& site, int64_t peer, int64_t tag,
                                         absl::Span<const uint8_t> bytes) {
  Literal value(Shape::Array(ElementType::kU8, {static_cast<int64_t>(bytes.size())}));
  if (!bytes.empty()) std::memcpy(value.data().data(), bytes.data(), bytes.size());
  absl::Status status = rendezvous_->Post(site, device_id(), peer, tag, std::move(value));
  if (!status.ok() && status.code() == absl::StatusCode::kInvalidArgument) {
    return absl::InvalidArgumentError(absl::StrCat(site.name(), ": ", status.message()));
  }
  return status;
}

absl::Status InProcessCommunicator::Recv(const Instruction& site, int64_t peer, int64_t tag,
                                         absl::Span<uint8_t> bytes) {
  XJIT_ASSIGN_OR_RETURN(Literal value, rendezvous_->Take(site, peer, device_id(), tag));
  absl::Span<const uint8_t> data = value.data();
  if (data.size() != bytes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(site.name(), ": ", rendezvous_->DeviceName(peer), " sent ",
                                                   data.size(), " bytes where ", bytes.size(),
                                                   " are expected"));
  }
  if (!bytes.empty()) std::memcpy(bytes.data(), data.data(), data.size());
  return absl::OkStatus();
}

}  // namespace xjit::collectives
