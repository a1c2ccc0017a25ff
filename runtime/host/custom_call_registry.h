// CustomCallRegistry: C functions that custom-call instructions resolve by
// target name. Every target has the signature of the operation semantics
// (003, CustomCall):
//
//   extern "C" void target(void* out, void** in);
//
// in[i] points to operand i's buffer, out to the result's buffer. Array
// buffers hold the physical bytes of the value in its layout (the operand's
// `operand_layout_constraints=` layout when given, else the operand
// instruction's layout; the result is read in the instruction's layout). A
// tuple operand or result is passed as an array of pointers to its element
// buffers (recursively), as XLA's CPU runtime does. The function must be free
// of side effects and idempotent.
//
// The global registry is what the evaluator and the JIT consult unless a
// caller passes its own. Registration is thread-safe; registering a name again
// replaces the earlier function.
#ifndef XJIT_RUNTIME_HOST_CUSTOM_CALL_REGISTRY_H_
#define XJIT_RUNTIME_HOST_CUSTOM_CALL_REGISTRY_H_

#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

namespace xjit {

using CustomCallFunction = void (*)(void* out, void** in);

class CustomCallRegistry {
 public:
  CustomCallRegistry() = default;
  CustomCallRegistry(const CustomCallRegistry&) = delete;
  CustomCallRegistry& operator=(const CustomCallRegistry&) = delete;

  // The process-wide registry.
  static CustomCallRegistry& Global();

  void Register(absl::string_view target_name, CustomCallFunction function);
  void Unregister(absl::string_view target_name);
  // The function registered under `target_name`, or null.
  CustomCallFunction Find(absl::string_view target_name) const;

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, CustomCallFunction> functions_;
};

// Registers `function` in the global registry at static-initialisation time:
//   XJIT_REGISTER_CUSTOM_CALL("myfunc", myfunc);
#define XJIT_REGISTER_CUSTOM_CALL(name, function)                                    \
  static const bool XJIT_CUSTOM_CALL_CONCAT_(xjit_custom_call_registered_, __LINE__) = \
      (::xjit::CustomCallRegistry::Global().Register(name, function), true)
#define XJIT_CUSTOM_CALL_CONCAT_INNER_(a, b) a##b
#define XJIT_CUSTOM_CALL_CONCAT_(a, b) XJIT_CUSTOM_CALL_CONCAT_INNER_(a, b)

}  // namespace xjit

#endif  // XJIT_RUNTIME_HOST_CUSTOM_CALL_REGISTRY_H_
