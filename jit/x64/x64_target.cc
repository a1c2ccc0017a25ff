// The x86-64 target (see x64_target.h).
#include "jit/x64/x64_target.h"

#include <asmjit/x86.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/code/code_install.h"
#include "jit/code/code_memory.h"
#include "jit/x64/x64_lowering.h"

namespace xjit::jit::x64 {
namespace {

using namespace asmjit;  // NOLINT

// Owns the executable memory of every kernel of one target (W^X: see
// jit/code/code_memory.h); `environment` is the host's, as JitRuntime's would be.
struct KernelMemory {
  Environment environment = Environment::host();
  CodeMemory pages;
};

class X64Target : public Target {
 public:
  explicit X64Target(const TargetOptions& options)
      : options_(options), memory_(std::make_shared<KernelMemory>()) {
    const CpuFeatures::X86& host = CpuInfo::host().features().x86();
    features_.avx512 = options.isa == Isa::kAvx512;
    features_.avx2 = options.isa == Isa::kAvx2 || features_.avx512;
    features_.f16c = features_.avx2 && host.hasF16C();
    features_.popcnt = host.hasPOPCNT();
    features_.lzcnt = host.hasLZCNT();
  }

  std::string name() const override {
    if (features_.avx512) return "x86-64 avx512";
    return features_.avx2 ? "x86-64 avx2" : "x86-64 sse4.1";
  }

  std::shared_ptr<const void> code_owner() const override { return memory_; }

  bool HasFusedMultiplyAdd() const override { return features_.avx2; }
  // vscalefps/pd (AVX-512F; xmm and ymm forms with AVX-512VL).
  bool HasNativeScale() const override { return features_.avx512; }
  bool HasOutOfLineMath() const override { return true; }
  bool HasRowPrograms() const override { return true; }
  bool HasGathers() const override { return features_.avx2; }
  bool HasRangeClaims() const override { return true; }

  absl::StatusOr<LoweredKernel> Lower(const KernelProgram& program) override {
    CodeHolder code;
    ErrorRecorder errors;
    if (const Error error = code.init(memory_->environment); error != kErrorOk) {
      return absl::ResourceExhaustedError(
          absl::StrCat("asmjit cannot start kernel ", program.name, ": ",
                       DebugUtils::errorAsString(error)));
    }
    code.setErrorHandler(&errors);
    StringLogger logger;
    if (options_.collect_asm) code.setLogger(&logger);
    x86::Compiler cc(&code);
    KernelLowering lowering(&cc, program, features_);
    std::vector<std::pair<Label, int>> op_marks;
    if (options_.collect_op_offsets) lowering.set_op_marks(&op_marks);
    LoweredKernel kernel;
    XJIT_RETURN_IF_ERROR(lowering.Emit(&kernel.vector_lanes));
    const Error finalized = cc.finalize();
    if (errors.error != kErrorOk || finalized != kErrorOk) {
      return absl::InternalError(absl::StrCat(
          "asmjit failed on kernel ", program.name, ": ",
          errors.error != kErrorOk ? errors.text : DebugUtils::errorAsString(finalized)));
    }
    XJIT_ASSIGN_OR_RETURN(const void* address,
                          InstallCode(code, memory_->pages, absl::StrCat("kernel ", program.name)));
    auto function = reinterpret_cast<runtime::KernelFunction>(const_cast<void*>(address));
    kernel.function = function;
    kernel.code = reinterpret_cast<const void*>(function);
    kernel.code_size = static_cast<int64_t>(code.codeSize());
    if (options_.collect_asm) kernel.asm_text.assign(logger.data(), logger.dataSize());
    for (const auto& [label, op] : op_marks) {
      kernel.op_offsets.emplace_back(static_cast<int64_t>(code.labelOffsetFromBase(label)), op);
    }
    return kernel;
  }

 private:
  TargetOptions options_;
  Features features_;
  std::shared_ptr<KernelMemory> memory_;
};

}  // namespace

bool HostHas(Isa isa) {
  const CpuFeatures::X86& host = CpuInfo::host().features().x86();
  const bool sse4 = host.hasSSE4_1();
  switch (isa) {
    case Isa::kAuto:
    case Isa::kSse4:
      return sse4;
    case Isa::kAvx2:
      return sse4 && host.hasAVX2() && host.hasFMA() && host.hasF16C();
    case Isa::kAvx512:
      return HostHas(Isa::kAvx2) && host.hasAVX512_F() && host.hasAVX512_DQ() &&
             host.hasAVX512_BW() && host.hasAVX512_VL();
    case Isa::kNeon:
      return false;
  }
  return false;
}

std::unique_ptr<Target> CreateX64Target(const TargetOptions& options) {
  return std::make_unique<X64Target>(options);
}

}  // namespace xjit::jit::x64
