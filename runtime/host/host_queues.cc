#include "runtime/host/host_queues.h"

#include <utility>

namespace xjit {
namespace {

std::optional<Literal> PopFront(std::deque<Literal>& queue) {
  if (queue.empty()) return std::nullopt;
  Literal value = std::move(queue.front());
  queue.pop_front();
  return value;
}

}  // namespace

void HostQueues::PushInfeed(Literal value) {
  std::lock_guard<std::mutex> lock(mutex_);
  infeed_.push_back(std::move(value));
}

std::optional<Literal> HostQueues::PopInfeed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return PopFront(infeed_);
}

int64_t HostQueues::infeed_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(infeed_.size());
}

void HostQueues::PushOutfeed(Literal value) {
  std::lock_guard<std::mutex> lock(mutex_);
  outfeed_.push_back(std::move(value));
}

std::optional<Literal> HostQueues::PopOutfeed() {
  std::lock_guard<std::mutex> lock(mutex_);
  return PopFront(outfeed_);
}

int64_t HostQueues::outfeed_size() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return static_cast<int64_t>(outfeed_.size());
}

void HostQueues::PushChannel(int64_t channel_id, Literal value) {
  std::lock_guard<std::mutex> lock(mutex_);
  channels_[channel_id].push_back(std::move(value));
}

std::optional<Literal> HostQueues::PopChannel(int64_t channel_id) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = channels_.find(channel_id);
  if (it == channels_.end()) return std::nullopt;
  return PopFront(it->second);
}

int64_t HostQueues::channel_size(int64_t channel_id) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = channels_.find(channel_id);
  return it == channels_.end() ? 0 : static_cast<int64_t>(it->second.size());
}

}  // namespace xjit
