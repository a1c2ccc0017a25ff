// Host target selection (see target.h) and ISA names (compile_options.h).
#include "jit/target.h"

#include "absl/strings/str_cat.h"
#include "jit/compile_options.h"

#if defined(__x86_64__) || defined(_M_X64)
#include "jit/x64/x64_loop.h"
#include "jit/x64/x64_target.h"
#define XJIT_HOST_X64 1
#elif defined(__aarch64__)
#include "jit/a64/a64_target.h"
#define XJIT_HOST_A64 1
#endif

namespace xjit::jit {

absl::string_view IsaName(Isa isa) {
  switch (isa) {
    case Isa::kAuto: return "auto";
    case Isa::kSse4: return "sse4";
    case Isa::kAvx2: return "avx2";
    case Isa::kAvx512: return "avx512";
    case Isa::kNeon: return "neon";
  }
  return "?";
}

std::optional<Isa> ParseIsa(absl::string_view name) {
  if (name == "auto") return Isa::kAuto;
  if (name == "sse4" || name == "sse4.1") return Isa::kSse4;
  if (name == "avx2") return Isa::kAvx2;
  if (name == "avx512") return Isa::kAvx512;
  if (name == "neon") return Isa::kNeon;
  return std::nullopt;
}

bool HostSupportsIsa(Isa isa) {
#if defined(XJIT_HOST_X64)
  return x64::HostHas(isa);
#elif defined(XJIT_HOST_A64)
  return isa == Isa::kAuto || isa == Isa::kNeon;
#else
  return isa == Isa::kAuto;
#endif
}

Isa BestHostIsa() {
#if defined(XJIT_HOST_A64)
  return Isa::kNeon;
#else
  if (HostSupportsIsa(Isa::kAvx512)) return Isa::kAvx512;
  if (HostSupportsIsa(Isa::kAvx2)) return Isa::kAvx2;
  return Isa::kSse4;
#endif
}

absl::StatusOr<std::unique_ptr<Target>> CreateHostTarget(const TargetOptions& options) {
#if defined(XJIT_HOST_X64) || defined(XJIT_HOST_A64)
  TargetOptions resolved = options;
  if (resolved.isa == Isa::kAuto) resolved.isa = BestHostIsa();
  if (!HostSupportsIsa(resolved.isa)) {
#if defined(XJIT_HOST_X64)
    const char* arch = "this x86-64 CPU";
#else
    const char* arch = "this AArch64 CPU (it supports --isa=neon and --isa=auto)";
#endif
    return absl::InvalidArgumentError(
        absl::StrCat(arch, " does not support --isa=", IsaName(resolved.isa)));
  }
#if defined(XJIT_HOST_X64)
  return x64::CreateX64Target(resolved);
#else
  return a64::CreateA64Target(resolved);
#endif
#else
  return absl::UnimplementedError("the jit has no target for this CPU architecture yet");
#endif
}

runtime::EmitNativeLoopFunction HostLoopEmitter() {
#if defined(XJIT_HOST_X64)
  return &x64::EmitX64Loop;
#else
  return nullptr;
#endif
}

}  // namespace xjit::jit
