// HostQueues: the host side of a program's data streams, shared by the
// evaluator and the runtime. A caller fills the infeed queue before running a
// program and drains the outfeed queue afterwards; send and recv move values
// through one queue per channel id (send pushes, recv pops), which the host
// may also fill (for a recv) or drain (for a send). Queues are FIFO and
// thread-safe; values keep the shape and layout they were pushed with (the
// consumer relayouts).
#ifndef XJIT_RUNTIME_HOST_HOST_QUEUES_H_
#define XJIT_RUNTIME_HOST_HOST_QUEUES_H_

#include <cstdint>
#include <deque>
#include <mutex>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "ir/literal.h"

namespace xjit {

class HostQueues {
 public:
  HostQueues() = default;
  HostQueues(const HostQueues&) = delete;
  HostQueues& operator=(const HostQueues&) = delete;

  // Infeed: the host pushes, the program's infeed pops.
  void PushInfeed(Literal value);
  std::optional<Literal> PopInfeed();
  int64_t infeed_size() const;

  // Outfeed: the program's outfeed pushes, the host pops.
  void PushOutfeed(Literal value);
  std::optional<Literal> PopOutfeed();
  int64_t outfeed_size() const;

  // Channels (send/recv, by channel_id).
  void PushChannel(int64_t channel_id, Literal value);
  std::optional<Literal> PopChannel(int64_t channel_id);
  int64_t channel_size(int64_t channel_id) const;

 private:
  mutable std::mutex mutex_;
  std::deque<Literal> infeed_;
  std::deque<Literal> outfeed_;
  absl::flat_hash_map<int64_t, std::deque<Literal>> channels_;
};

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_HOST_QUEUES_H_
