// The JIT compile driver: a verified module in, a runtime::Executable out.
//
// The module (a copy) goes through the pass pipeline (passes/pipeline.h:
// simplification, layout assignment, fusion; CompileOptions can turn it off
// or skip passes), then the JIT's preparation passes (RunJitPipeline: output
// fusions split into a library call and an epilogue fusion, passed-on layouts
// conformed, tiled layouts isolated in copies), then buffer allocation
// (passes/allocate_buffers.h) plans every value. Each instruction of the
// entry's schedule becomes a step:
//   - parameters, constants, tuples, get-tuple-element, bitcasts: no step
//     (they are places in the buffer plan);
//   - a fusion (or, with the passes off, an elementwise, data-movement or
//     reduce instruction) that the fusion emitter and the target compile: a
//     kernel;
//   - dot and convolution: library calls into runtime/blas (OpenBLAS);
//   - everything else, and anything whose kernel or plan is Unimplemented:
//     an interpreted step through the evaluator, listed in the report with
//     the reason.
// Values live where the buffer plan puts them: temps share arena bytes when
// their lifetimes do not overlap, and elementwise steps write over operands
// that die there. Results are always the evaluator's (within the stated ulp
// for math functions, and up to reassociation for float sums): a kernel
// never gives another answer, and whatever has no kernel is interpreted.
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
  std::string name;  // The instruction (usually a fusion) it computes.
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
  // The per-run arena: the entry's temps, library-call scratch, and the
  // arena copies of results that are copied out.
  int64_t temp_bytes = 0;
  // The buffer plan's peak (entry parameters, results and temps live at
  // once over the schedule) plus the scratch and copies above.
  int64_t peak_bytes = 0;
  double compile_ms = 0;
  // Served from the compile cache (jit/compile_cache.h); the rest of the
  // report is the cached compile's, compile_ms this lookup's.
  bool cache_hit = false;

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
