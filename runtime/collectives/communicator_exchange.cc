// The evaluator's collectives over a Communicator (see communicator_exchange.h).
#include "runtime/collectives/communicator_exchange.h"

#include "absl/strings/str_cat.h"
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

}  // namespace xjit::collectives
