// The AArch64 target (see a64_target.h).
#include "jit/a64/a64_target.h"

#include <asmjit/arm.h>
#include <asmjit/arm/a64compiler.h>

#include <string>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/a64/a64_lowering.h"
#include "jit/code/code_install.h"

namespace xjit::jit::a64 {
namespace {

using namespace asmjit;  // NOLINT
namespace arm64 = asmjit::a64;
using asmjit::arm::CondCode;

// Owns the executable memory of every kernel of one target (W^X: see
// jit/code/code_memory.h); `environment` is the host's, as JitRuntime's would be.
struct KernelMemory {
  Environment environment = Environment::host();
  CodeMemory pages;
};

class A64Target : public Target {
 public:
  explicit A64Target(const TargetOptions& options)
      : options_(options), memory_(std::make_shared<KernelMemory>()) {}

  std::string name() const override { return "aarch64 neon"; }

  std::shared_ptr<const void> code_owner() const override { return memory_; }

  // fmadd/fmla are part of every AArch64 CPU.
  bool HasFusedMultiplyAdd() const override { return true; }
  // Row programs: several passes over a row (a64_lowering.h).
  bool HasRowPrograms() const override { return true; }

  absl::StatusOr<LoweredKernel> Lower(const KernelProgram& program) override {
    CodeHolder code;
    ErrorRecorder errors;
    code.init(memory_->environment);
    code.setErrorHandler(&errors);
    StringLogger logger;
    if (options_.collect_asm) code.setLogger(&logger);
    arm64::Compiler cc(&code);
    KernelLowering lowering(&cc, program);
    LoweredKernel kernel;
    XJIT_RETURN_IF_ERROR(lowering.Emit(&kernel.vector_lanes));
    cc.finalize();
    if (errors.error != kErrorOk) {
      return absl::InternalError(
          absl::StrCat("asmjit failed on kernel ", program.name, ": ", errors.text));
    }
    XJIT_ASSIGN_OR_RETURN(const void* address,
                          InstallCode(code, memory_->pages, absl::StrCat("kernel ", program.name)));
    auto function = reinterpret_cast<runtime::KernelFunction>(const_cast<void*>(address));
    kernel.function = function;
    kernel.code = reinterpret_cast<const void*>(function);
    kernel.code_size = static_cast<int64_t>(code.codeSize());
    if (options_.collect_asm) kernel.asm_text.assign(logger.data(), logger.dataSize());
    return kernel;
  }

 private:
  TargetOptions options_;
  std::shared_ptr<KernelMemory> memory_;
};

}  // namespace

std::unique_ptr<Target> CreateA64Target(const TargetOptions& options) {
  return std::make_unique<A64Target>(options);
}

}  // namespace xjit::jit::a64
