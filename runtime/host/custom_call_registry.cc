#include "runtime/host/custom_call_registry.h"

namespace xjit {

CustomCallRegistry& CustomCallRegistry::Global() {
  static CustomCallRegistry* registry = new CustomCallRegistry();
  return *registry;
}

void CustomCallRegistry::Register(absl::string_view target_name, CustomCallFunction function) {
  std::lock_guard<std::mutex> lock(mutex_);
  functions_[std::string(target_name)] = function;
}

void CustomCallRegistry::Unregister(absl::string_view target_name) {
  std::lock_guard<std::mutex> lock(mutex_);
  functions_.erase(std::string(target_name));
}

CustomCallFunction CustomCallRegistry::Find(absl::string_view target_name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = functions_.find(std::string(target_name));
  return it == functions_.end() ? nullptr : it->second;
}

}  // namespace xjit
