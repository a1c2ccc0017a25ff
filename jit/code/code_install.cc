// InstallCode (see code_install.h).
#include "jit/code/code_install.h"

#include "absl/strings/str_cat.h"

namespace xjit::jit {

absl::StatusOr<const void*> InstallCode(asmjit::CodeHolder& code, CodeMemory& memory,
                                        absl::string_view what) {
  using asmjit::CopySectionFlags;
  using asmjit::Error;
  using asmjit::kErrorOk;
  Error error = code.flatten();
  if (error == kErrorOk) error = code.resolveUnresolvedLinks();
  if (error != kErrorOk) {
    return absl::InternalError(
        absl::StrCat("asmjit cannot lay out ", what, ": ", asmjit::DebugUtils::errorAsString(error)));
  }
  const size_t size = code.codeSize();
  return memory.Install(size, [&code, size, what](void* target) -> absl::Status {
    Error e = code.relocateToBase(reinterpret_cast<uint64_t>(target));
    if (e == kErrorOk) {
      e = code.copyFlattenedData(
          target, size, CopySectionFlags::kPadSectionBuffer | CopySectionFlags::kPadTargetBuffer);
    }
    if (e != kErrorOk) {
      return absl::InternalError(
          absl::StrCat("asmjit cannot relocate ", what, ": ", asmjit::DebugUtils::errorAsString(e)));
    }
    return absl::OkStatus();
  });
}

}  // namespace xjit::jit
