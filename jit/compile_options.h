// Options of the JIT compile driver, and the instruction sets it targets.
#ifndef XJIT_JIT_COMPILE_OPTIONS_H_
#define XJIT_JIT_COMPILE_OPTIONS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"

namespace xjit::jit {

// Instruction set levels. kAuto picks the best one the host has.
// x86-64: kSse4 is the baseline (SSE4.1); kAvx2 means AVX2 + FMA + F16C;
// kAvx512 means kAvx2 plus AVX512F/DQ/BW/VL (vector kernels of 32/64-bit
// lanes run in zmm registers, the others as with kAvx2; see
// jit/x64/x64_lowering.h). AArch64: kNeon, Advanced SIMD (part of every
// AArch64 CPU; see jit/a64/a64_lowering.h). An ISA of the other
// architecture is never supported by the host.
enum class Isa { kAuto, kSse4, kAvx2, kAvx512, kNeon };

// "auto", "sse4", "avx2", "avx512", "neon".
absl::string_view IsaName(Isa isa);
std::optional<Isa> ParseIsa(absl::string_view name);

// How kernels compute math functions (exp, log, tanh, sin, ...; see
// jit/kernel/vector_math.h and docs/compile_time.md).
enum class MathLowering {
  kAuto,       // Out of line in kernels with several math operations
               // (kOutOfLineMathMinOps), inline in the others.
  kInline,     // Always expanded into the kernel.
  kOutOfLine,  // Always a call of the per-process routine (when the target
               // has them).
};

struct CompileOptions {
  Isa isa = Isa::kAuto;
  // Threads for running the executable. Steps run one after another; a
  // kernel whose output is large is split over its outermost loop and run on
  // this many threads of a shared, sleeping pool (runtime/thread_pool.h).
  // The value is also the number of threads OpenBLAS uses inside this
  // executable's library calls (dot, convolution): it is set around each
  // call and the previous setting restored (runtime/blas/blas_threads.h), so
  // other executables and the host's own OpenBLAS use keep theirs.
  int threads = 1;
  // The smallest estimated chunk (nanoseconds) a kernel is split into when
  // threads > 1 (runtime/split_cost.h); < 0: kSplitMinChunkNs, measured on
  // the development machine. 0 splits every kernel of two or more chunks'
  // worth of outer iterations (tests of split kernels).
  int64_t split_min_chunk_ns = -1;
  // Write each kernel to /tmp/perf-PID.map as `xjit:<module>:<kernel>`
  // (`<computation>/<kernel>` for kernels of called computations).
  // XJIT_PERF_MAP=1 (or 0) in the environment overrides this (perf_map.h).
  bool perf_map = false;
  // Write each kernel, its code bytes and a line table into perf's jitdump
  // file (jit/code/jitdump.h), for `perf inject --jit` and `perf annotate`.
  // XJIT_JITDUMP=1 in the environment turns this on as well.
  bool jitdump = false;
  // Upper bound on the iterations of one run of a while loop; a loop that
  // would run more fails the run with ResourceExhausted instead of hanging
  // (as the evaluator's EvaluatorOptions::max_while_iterations). < 0: none.
  int64_t max_while_iterations = -1;
  // Keep each kernel's assembly text (for `xjit compile --asm`).
  bool collect_asm = false;
  // If not empty, write here the module after each pass (NN-name.hlo), the
  // module the executable runs (final.hlo), its buffer plan
  // (buffer-plan.txt), and each kernel's program and assembly.
  std::string dump_dir;
  // Run the pass pipeline (passes/pipeline.h: simplification, layout
  // assignment, fusion) before emitting code. Off, every instruction of the
  // module as written is its own step (a baseline for tests and benchmarks);
  // buffers are allocated either way.
  bool run_passes = true;
  // Pipeline passes not to run, and when not empty the only ones to run, by
  // name (PipelineOptions); an unknown name is InvalidArgument.
  std::vector<std::string> disabled_passes;
  std::vector<std::string> only_passes;
  // Emit no kernels at all: every instruction becomes an interpreted step
  // (a baseline for tests and benchmarks).
  bool interpret_only = false;
  // Inline or out-of-line math (results are the same bits either way).
  MathLowering math = MathLowering::kAuto;
  // Run consecutive kernels that work row by row interleaved over chunks of
  // rows, temporaries in cache-sized scratch (jit/kernel/row_groups.h); the same
  // bits either way.
  bool row_groups = true;
  // Run while bodies over the loop state in place (BufferPlanOptions::
  // state_in_place): a step that writes part of a state element, such as a
  // scan's dynamic-update-slice, costs that part, and elements passed
  // through cost nothing. Off, each iteration writes a new state (a baseline
  // for benchmarks); the same bits either way.
  bool while_state_in_place = true;
  // Run a while loop whose condition and body need no run-time decision per
  // step over bound steps (runtime/bound_steps.h: every buffer address
  // resolved once at loop entry, then the kernels called in a tight loop).
  // Off, every iteration runs the condition and the body step by step (a
  // baseline for benchmarks and tests); the same bits either way.
  bool bind_loops = true;
  // Run a bound loop as one emitted function (runtime/native_loop.h: kernels
  // and routines as direct calls, small copies and conditionals inline, no
  // per-step dispatch) once it has run native_loop_after iterations over
  // bound steps (summed over the entries of one binding; <= 0: from the
  // first), on targets that emit loops (x86-64). Off, bound loops run over
  // bound steps (a baseline); the same bits either way. Emitting a small
  // loop costs about 12 us (jit_benchmark NativeLoopEmit), some 2,000
  // iterations' saving: a loop bound afresh per run (its state in result
  // buffers that move) that stops soon after the switch pays more than it
  // gains, hence the threshold.
  bool native_loops = true;
  int64_t native_loop_after = 2048;
  // Keep the programs of one-element kernels (runtime::Step::inline_program)
  // so that a native loop emits them inline, its scalar state in registers
  // (jit/x64/x64_loop_kernels.h). Off, native loops call every kernel (a
  // baseline); the same bits either way.
  bool inline_loop_kernels = true;
  // Fuse a reduce whose result is broadcast back along its reduced
  // dimensions with the loop that reads it (softmax, layer norm): one row
  // program per chain (passes/fuse.h, FuseOptions::row_fusion). Only on a
  // target that lowers row programs (Target::HasRowPrograms: x86-64 and
  // AArch64); ignored elsewhere.
  bool row_fusion = true;
  // Serve a compile of a module compiled before in this process with the
  // same options from the compile cache (jit/compile_cache.h).
  bool cache = true;
};

}  // namespace xjit::jit

#endif  // XJIT_JIT_COMPILE_OPTIONS_H_
