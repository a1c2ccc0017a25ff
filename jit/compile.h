// The JIT compile driver: a verified module in, a runtime::Executable out.
//
// Today every instruction of the entry computation is its own loop fusion:
// each one the fusion emitter and the target can compile becomes a kernel;
// parameters, constants, tuples and get-tuple-element need no code (they are
// places in the buffer plan, or copies); everything else runs as an
// interpreted step through the evaluator, and is listed in the report. Dot
// and convolution are library calls into runtime/blas (OpenBLAS), planned
// here; one whose plan is Unimplemented (tiled layouts, mixed integer/float
// operands) is interpreted. Loop
// fusion instructions already in the module (kind=kLoop) become one kernel
// each. Results are always the evaluator's: a kernel never gives another
// answer, and whatever has no kernel is interpreted.
#ifndef XJIT_JIT_COMPILE_H_
#define XJIT_JIT_COMPILE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "ir/module.h"
#include "jit/compile_options.h"
#include "runtime/executable.h"

namespace xjit::jit {

struct KernelInfo {
  std::string name;  // The instruction it computes.
  int64_t code_size = 0;
  int vector_lanes = 1;      // 1: scalar code only.
  std::string program;       // KernelProgram::ToString().
  std::string asm_text;      // With CompileOptions::collect_asm.
};

// A library-call step (dot, convolution through runtime/blas).
struct LibraryCallInfo {
  std::string name;     // The instruction it computes.
  std::string routine;  // "dot" or "convolution".
  std::string plan;     // The plan's ToString().
  int64_t scratch_bytes = 0;
};

struct CompileReport {
  std::string target;  // "x86-64 avx2", or "none" with interpret_only.
  std::vector<KernelInfo> kernels;
  // Library calls are compiled code, never counted as interpreted steps.
  std::vector<LibraryCallInfo> library_calls;
  // One line per interpreted step: "NAME (OPCODE): why".
  std::vector<std::string> interpreted_steps;
  // The arena, library-call scratch included.
  int64_t temp_bytes = 0;
  // Bytes a run writes: the temporary arena plus the result.
  int64_t peak_bytes = 0;
  double compile_ms = 0;

  // The summary lines of `xjit compile`: "library calls: N", then the lines
  // scripts read, last and in this order (shared/DESIGN.md): "kernels: N",
  // "interpreted steps: N", "temp bytes: N", "peak bytes: N", "compile ms:
  // X", one per line.
  std::string Summary() const;
};

// Compiles `module` (which must verify). `report` may be null. With
// options.threads > 1, large kernel steps also run on that many threads
// (runtime::ExecutableSpec::threads, docs/jit.md "Threads").
absl::StatusOr<std::unique_ptr<runtime::Executable>> Compile(const Module& module,
                                                             const CompileOptions& options,
                                                             CompileReport* report = nullptr);

}  // namespace xjit::jit

#endif  // XJIT_JIT_COMPILE_H_
