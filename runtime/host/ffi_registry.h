// FfiRegistry: custom-call targets with a typed calling convention, close to
// XLA's typed FFI. Where a CustomCallFunction (custom_call_registry.h) gets
// bare pointers, an FfiHandler gets every operand and result as a typed
// buffer (element type, dimensions, layout, address, byte size) and returns
// a status, so a target can check what it is given and fail cleanly.
//
// Buffers: the array leaves of the operands, operand after operand, each
// operand's leaves depth first (a tuple operand contributes one buffer per
// array leaf; tokens none); then the same for the result. An operand buffer
// holds the physical bytes of the value in its layout and is only read; a
// result buffer is to be filled completely (its prior contents are
// unspecified). `backend_config` is the custom call's backend_config= text.
//
// Both the evaluator and the JIT (a library-call step whose handler is
// looked up when the module is compiled) consult the global registry before
// the untyped one; a name registered here takes precedence. Registration is
// thread-safe; registering a name again replaces the earlier handler (an
// executable compiled before keeps the one it found). Handlers may be called
// from several threads at once (replicas, concurrent runs).
#ifndef XJIT_RUNTIME_HOST_FFI_REGISTRY_H_
#define XJIT_RUNTIME_HOST_FFI_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "ir/element_type.h"
#include "ir/instruction.h"

namespace xjit {

struct FfiBuffer {
  ElementType type = ElementType::kF32;
  absl::Span<const int64_t> dimensions;
  absl::Span<const int64_t> minor_to_major;  // The layout; empty for rank 0.
  void* data = nullptr;
  int64_t byte_size = 0;
};

struct FfiCall {
  absl::string_view target;
  absl::string_view backend_config;
  absl::Span<const FfiBuffer> operands;
  absl::Span<const FfiBuffer> results;
};

using FfiHandler = std::function<absl::Status(const FfiCall& call)>;

class FfiRegistry {
 public:
  FfiRegistry() = default;
  FfiRegistry(const FfiRegistry&) = delete;
  FfiRegistry& operator=(const FfiRegistry&) = delete;

  static FfiRegistry& Global();

  void Register(absl::string_view target_name, FfiHandler handler);
  // False when nothing was registered under the name.
  bool Unregister(absl::string_view target_name);
  // The handler registered under `target_name`, or null. Shared: it stays
  // valid for its holder after an unregistration.
  std::shared_ptr<const FfiHandler> Find(absl::string_view target_name) const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, std::shared_ptr<const FfiHandler>> handlers_;
};

// Calls `handler` for the custom call `instruction` whose operands' array
// leaves are at `operand_leaves` and result's at `result_leaves` (the order
// above). Unimplemented for a leaf whose layout is tiled, padded or packed
// (the buffer could not describe it); a handler's error comes back prefixed
// with the target's name, and a handler that throws fails the same way.
absl::Status InvokeFfi(const FfiHandler& handler, const Instruction& instruction,
                       absl::Span<void* const> operand_leaves,
                       absl::Span<void* const> result_leaves);

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_FFI_REGISTRY_H_
