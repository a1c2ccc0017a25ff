// LoopKernels: small scalar kernels emitted inline in an x86-64 loop function
// (x64_loop.cc), the loop's scalar state held in xmm registers.
//
// A native loop that calls its kernels waits, every iteration, for each
// scalar it carries to go through memory: the body kernel stores the counter
// and the next condition kernel loads it back (store-to-load forwarding,
// ~7 cycles on Zen, on top of the arithmetic). Where a kernel is one element
// (every loop extent 1, no reduction loops; the compile driver keeps such
// kernels' programs, runtime::Step::inline_program) and its operations are
// among the few lowered here, its program is emitted inline instead of the
// call, and every element it loads or stores (a "location": one address and
// type) lives in one xmm register for the whole loop function.
//
// Contract with the loop emitter:
//   - Collect every BoundSteps the function will emit (conditions, bodies,
//     conditionals' branches), then Plan, before emitting anything; kernels
//     are taken greedily in that order while their locations and
//     temporaries fit in xmm0-xmm13 (xmm14 and xmm15 are scratch).
//   - Memory is always current (write-through): an inlined store writes the
//     register and the memory, so whatever is not inlined — a call, a copy,
//     a library routine, a nested loop, the predicate test, the exits — sees
//     the state as the called kernels would have left it, with nothing to
//     flush. The store is off the loop-carried chain, which runs from
//     register to register.
//   - A register is "valid" when it holds its location's current value.
//     LoadAll makes every one valid (the function's entry); code the loop
//     emitter emits itself invalidates what it may write (Clobbered: a call
//     clobbers every xmm register and may write any memory; a copy only
//     what overlaps its destination), and an inlined kernel reloads its
//     stale inputs first. At a conditional's end the valid sets of its
//     branches meet (Meet); before a jump back to the loop's top every
//     register must be valid (ReloadStale).
// Element types: f32, f64, s32, u32, s64, u64 and pred (held as a 64-bit
// 0/1). Narrower integers, halves and every operation not lowered here keep
// the kernel a call (the program is checked before anything is emitted).
#ifndef XJIT_JIT_X64_X64_LOOP_KERNELS_H_
#define XJIT_JIT_X64_X64_LOOP_KERNELS_H_

#include <asmjit/x86.h>

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "ir/element_type.h"
#include "jit/kernel/kernel_program.h"
#include "runtime/bound_steps.h"

namespace xjit::jit::x64 {

class LoopKernels {
 public:
  using Op = runtime::BoundSteps::Op;

  // Whether the host can run the inlined code (AVX: VEX-encoded scalar and
  // integer operations). Without it nothing is planned.
  static bool HostSupported();

  // Collects the kernels of `steps` that have a program (recursing into
  // conditionals' branches, not into nested loops, which have code of their
  // own); then Plan takes those that can be inlined, in order, while
  // registers last. Only elements that collected kernels both store and
  // load get a register: one they only read (a constant, a value a call
  // writes) is loaded from memory where it is read, which is always current,
  // and one they only write (read by calls and copies) is stored to memory.
  void Collect(const runtime::BoundSteps& steps);
  void Plan();
  bool Inlined(const Op& op) const { return kernels_.contains(&op); }
  int inlined_count() const { return static_cast<int>(kernels_.size()); }

  // Emits the loads of every location (all valid).
  void LoadAll(asmjit::x86::Assembler& a);
  // Emits `op`'s program inline (Inlined(op) holds).
  void Emit(asmjit::x86::Assembler& a, const Op& op);
  // Code that clobbers every xmm register (a call) was emitted.
  void Clobbered();
  // Code that writes [destination, destination + bytes) and no xmm register
  // (an inline copy) was emitted.
  void Written(const uint8_t* destination, size_t bytes);
  // The valid registers, to restart each branch of a conditional from and
  // to meet the branches' ends.
  std::vector<bool> valid() const { return valid_; }
  void set_valid(std::vector<bool> valid) { valid_ = std::move(valid); }
  void Meet(const std::vector<bool>& other);
  // Emits the reload of every stale register.
  void ReloadStale(asmjit::x86::Assembler& a);

 private:
  struct Location {
    uintptr_t address = 0;
    ElementType type = ElementType::kF32;
    int64_t bytes = 0;
  };
  // One inlined kernel: per operation, its location (stores, and loads of
  // stored elements) or temporary (other value operations, loads from
  // memory), -1 where none, and its constant index value (index
  // operations; `known` where that was computed).
  struct Kernel {
    const KernelProgram* program = nullptr;
    std::vector<int> location;
    std::vector<int> temporary;
    std::vector<int64_t> index;
    std::vector<bool> known;
    // Loads from memory: their addresses, by operation.
    std::vector<uintptr_t> address;
  };
  // Evaluates `program`'s index operations (every loop index 0) into
  // kernel->index and kernel->known; false when one is not a constant.
  static bool EvaluateIndices(const KernelProgram& program, Kernel* kernel);
  // Plans one kernel op; false (nothing changed) when it cannot be inlined.
  bool PlanKernel(const Op& op);
  void Load(asmjit::x86::Assembler& a, int location);
  static void LoadMemory(asmjit::x86::Assembler& a, uintptr_t address, ElementType type,
                         const asmjit::x86::Xmm& to);
  asmjit::x86::Xmm Value(const Kernel& kernel, int id) const;
  void EmitOperation(asmjit::x86::Assembler& a, const Kernel& kernel, int id);

  std::vector<const Op*> candidates_;
  // Elements (address, type) that a candidate kernel stores, and loads:
  // those in both get registers.
  absl::flat_hash_set<std::pair<uintptr_t, ElementType>> stored_;
  absl::flat_hash_set<std::pair<uintptr_t, ElementType>> loaded_;
  std::vector<Location> locations_;
  int temporaries_ = 0;
  absl::flat_hash_map<const Op*, Kernel> kernels_;
  std::vector<bool> valid_;
};

}  // namespace xjit::jit::x64

#endif  // XJIT_JIT_X64_X64_LOOP_KERNELS_H_
