// Out-of-line vector math routines (see x64_math_routines.h).
#include "jit/x64/x64_math_routines.h"

#include <asmjit/x86.h>

#include <mutex>
#include <string>
#include <tuple>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/code/code_install.h"
#include "jit/code/jitdump.h"
#include "jit/code/perf_map.h"
#include "jit/kernel/vector_math.h"

namespace xjit::jit::x64 {
namespace {

using namespace asmjit;  // NOLINT

using Key = std::tuple<Opcode, ElementType, bool, bool, bool, bool, bool, int>;

// Routines live as long as the process: kernels of any executable may call
// them, so their memory is never released (a few KB per function used).
struct Registry {
  std::mutex mutex;
  Environment environment = Environment::host();
  CodeMemory pages;  // W^X, as every kernel's (jit/code/code_memory.h).
  absl::flat_hash_map<Key, const void*> routines;
  MathRoutineStats stats;
};

Registry& GetRegistry() {
  static Registry* registry = new Registry();  // Never destroyed (see above).
  return *registry;
}

absl::StatusOr<const void*> EmitRoutine(Registry& registry, Opcode opcode, ElementType type,
                                        const Features& features, int vector_bytes) {
  const int64_t lanes = vector_bytes == 0 ? 1 : vector_bytes * 8 / BitWidth(type);
  KernelProgram program = MathRoutineProgram(opcode, type, lanes);
  MathOptions math;
  math.fused_multiply_add = features.avx2;
  math.native_scale = features.avx512;  // As the x86-64 target's kernels (HasNativeScale).
  ExpandMath(&program, math);
  CodeHolder code;
  ErrorRecorder errors;
  code.init(registry.environment);
  code.setErrorHandler(&errors);
  x86::Compiler cc(&code);
  KernelLowering lowering(&cc, program, features);
  XJIT_RETURN_IF_ERROR(lowering.EmitMathRoutine(vector_bytes));
  cc.finalize();
  if (errors.error != kErrorOk) {
    return absl::InternalError(
        absl::StrCat("asmjit failed on math routine ", program.name, ": ", errors.text));
  }
  XJIT_ASSIGN_OR_RETURN(
      const void* function,
      InstallCode(code, registry.pages, absl::StrCat("math routine ", program.name)));
  ++registry.stats.routines;
  registry.stats.code_bytes += static_cast<int64_t>(code.codeSize());
  // Routines are shared by every executable of the process, so only the
  // environment (not one compile's options) makes them visible to perf.
  const std::string perf_name =
      absl::StrCat("xjit:", program.name, ".", vector_bytes * 8,
                   features.avx512 ? ".avx512" : features.avx2 ? ".avx2" : ".sse4");
  if (PerfMapEnabled(false)) {
    WritePerfMapEntry(function, static_cast<int64_t>(code.codeSize()), perf_name);
  }
  if (JitDumpRequestedByEnvironment()) {
    WriteJitDumpEntry(function, static_cast<int64_t>(code.codeSize()), perf_name,
                      program.ToString(), {});
  }
  return static_cast<const void*>(function);
}

}  // namespace

absl::StatusOr<const void*> MathRoutine(Opcode opcode, ElementType type,
                                        const Features& features, int vector_bytes) {
  if (type != ElementType::kF32 && type != ElementType::kF64) {
    return absl::InternalError("math routines are f32 or f64");
  }
  Registry& registry = GetRegistry();
  const Key key{opcode,          type,           features.avx2, features.avx512,
                features.f16c,   features.popcnt, features.lzcnt, vector_bytes};
  std::lock_guard<std::mutex> lock(registry.mutex);
  auto it = registry.routines.find(key);
  if (it != registry.routines.end()) return it->second;
  XJIT_ASSIGN_OR_RETURN(const void* routine,
                        EmitRoutine(registry, opcode, type, features, vector_bytes));
  registry.routines.emplace(key, routine);
  return routine;
}

MathRoutineStats GetMathRoutineStats() {
  Registry& registry = GetRegistry();
  std::lock_guard<std::mutex> lock(registry.mutex);
  return registry.stats;
}

}  // namespace xjit::jit::x64
