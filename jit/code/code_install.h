// Installing asmjit's output. ErrorRecorder keeps the first asmjit error of
// an emission so that it can be returned as a status.
// InstallCode: what asmjit's JitRuntime::add does — lay out an assembled
// CodeHolder (flatten its sections, resolve links), relocate it to its final
// address and copy it there — but into pages of a CodeMemory, so that code
// is never writable and executable at once (W^X, see code_memory.h).
// Every target's kernels and the out-of-line math routines go through it.
#ifndef XJIT_JIT_CODE_INSTALL_H_
#define XJIT_JIT_CODE_INSTALL_H_

#include <asmjit/core.h>

#include <string>

#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "jit/code/code_memory.h"

namespace xjit::jit {

// Set as a CodeHolder's error handler: remembers the first error.
class ErrorRecorder : public asmjit::ErrorHandler {
 public:
  void handleError(asmjit::Error err, const char* message, asmjit::BaseEmitter*) override {
    if (error == asmjit::kErrorOk) {
      error = err;
      text = message;
    }
  }
  asmjit::Error error = asmjit::kErrorOk;
  std::string text;
};

// The address of the installed code, or an error naming `what` (a kernel or
// routine name) when asmjit cannot lay it out or the pages cannot be mapped.
absl::StatusOr<const void*> InstallCode(asmjit::CodeHolder& code, CodeMemory& memory,
                                        absl::string_view what);

}  // namespace xjit::jit

#endif  // XJIT_JIT_CODE_INSTALL_H_
