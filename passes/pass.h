// Pass: one transformation of a module, in place. Contract of every pass:
//   - Run(module) takes a verified module and leaves a verified module with
//     the same observable behaviour (entry results, side effects in order);
//   - it returns true exactly when it changed the module (the printed text
//     differs), false when it left it untouched, or an error for input it
//     cannot handle (never a crash);
//   - name() is a stable lower-case-with-dashes identifier: options turn
//     passes off by it, and dumps are named after it (`03-fold-constants.hlo`).
// A pass class states its own contract (what it requires, what it
// guarantees) in its header's first comment.
#ifndef XJIT_PASSES_PASS_H_
#define XJIT_PASSES_PASS_H_

#include <functional>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/module.h"

namespace xjit {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual absl::string_view name() const = 0;
  // Returns whether the module changed.
  virtual absl::StatusOr<bool> Run(Module* module) = 0;
};

// Adapts a free function `StatusOr<bool>(Module*)` to the Pass interface, for
// passes that need no configuration.
class FunctionPass : public Pass {
 public:
  using Function = std::function<absl::StatusOr<bool>(Module*)>;
  FunctionPass(std::string name, Function function)
      : name_(std::move(name)), function_(std::move(function)) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module* module) override { return function_(module); }

 private:
  std::string name_;
  Function function_;
};

}  // namespace xjit

#endif  // XJIT_PASSES_PASS_H_
