// The evaluator's collectives over a Communicator (see communicator_exchange.h).
#include "runtime/collectives/communicator_exchange.h"

#include <cstring>
#include <string>

#include "absl/strings/str_cat.h"
#include "ir/hlo_text/parser.h"
#include "ir/status_macros.h"
#include "runtime/executable.h"

namespace xjit::collectives {

absl::StatusOr<std::vector<Literal>> CommunicatorExchange::Exchange(
    const Instruction& instruction, int64_t /*occurrence*/, absl::Span<const int64_t> group,
    int64_t replica, Literal value) {
  if (replica != communicator_.replica_id()) {
    return absl::InternalError(absl::StrCat("replica ", replica, " exchanges through replica ",
                                            communicator_.replica_id(), "'s communicator"));
  }
  // The communicator counts occurrences itself (it matches calls by order).
  const std::vector<uint8_t> mine = runtime::FlattenLiteral(value);
  std::vector<uint8_t> all(mine.size() * group.size());
  XJIT_RETURN_IF_ERROR(communicator_.AllGather(instruction, group, mine, absl::MakeSpan(all)));
  std::vector<Literal> values;
  values.reserve(group.size());
  for (size_t m = 0; m < group.size(); ++m) {
    values.push_back(runtime::UnflattenLiteral(value.shape(), all.data() + m * mine.size()));
  }
  return values;
}

absl::Status CommunicatorExchange::Post(const Instruction& site, int64_t from, int64_t to,
                                        int64_t tag, Literal value) {
  if (from != communicator_.replica_id()) {
    return absl::InternalError(absl::StrCat("replica ", from, " sends through replica ",
                                            communicator_.replica_id(), "'s communicator"));
  }
  const std::string shape = value.shape().ToString(true);
  const std::vector<uint8_t> data = runtime::FlattenLiteral(value);
  const int64_t header[2] = {static_cast<int64_t>(shape.size()),
                             static_cast<int64_t>(data.size())};
  XJIT_RETURN_IF_ERROR(communicator_.Send(
      site, to, tag,
      absl::MakeConstSpan(reinterpret_cast<const uint8_t*>(header), sizeof header)));
  std::vector<uint8_t> payload(shape.begin(), shape.end());
  payload.insert(payload.end(), data.begin(), data.end());
  return communicator_.Send(site, to, tag, payload);
}

absl::StatusOr<Literal> CommunicatorExchange::Take(const Instruction& site, int64_t from,
                                                   int64_t to, int64_t tag) {
  if (to != communicator_.replica_id()) {
    return absl::InternalError(absl::StrCat("replica ", to, " receives through replica ",
                                            communicator_.replica_id(), "'s communicator"));
  }
  int64_t header[2] = {0, 0};
  XJIT_RETURN_IF_ERROR(communicator_.Recv(
      site, from, tag, absl::MakeSpan(reinterpret_cast<uint8_t*>(header), sizeof header)));
  if (header[0] < 0 || header[1] < 0 || header[0] > (int64_t{1} << 20)) {
    return absl::DataLossError(absl::StrCat(site.name(), ": a malformed message from replica ",
                                            from));
  }
  std::vector<uint8_t> payload(static_cast<size_t>(header[0] + header[1]));
  XJIT_RETURN_IF_ERROR(communicator_.Recv(site, from, tag, absl::MakeSpan(payload)));
  const std::string text(payload.begin(), payload.begin() + header[0]);
  absl::StatusOr<Shape> shape = ParseShape(text);
  if (!shape.ok()) {
    return absl::DataLossError(absl::StrCat(site.name(), ": replica ", from,
                                            " sent an unreadable shape: ", shape.status().message()));
  }
  if (runtime::FlattenLiteral(Literal(*shape)).size() != static_cast<size_t>(header[1])) {
    return absl::DataLossError(absl::StrCat(site.name(), ": replica ", from, " sent ", header[1],
                                            " bytes for ", text));
  }
  return runtime::UnflattenLiteral(*shape, payload.data() + header[0]);
}

}  // namespace xjit::collectives
