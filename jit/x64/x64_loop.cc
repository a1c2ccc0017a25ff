// The x86-64 loop emitter (see x64_loop.h and runtime/native_loop.h).
//
// The function, for phases P0 (and P1 when the state swaps between two
// buffers):
//
//   prologue: save rbx r12 r13 r15; rbx = frame, r12 = frame->iteration,
//             r13 = &interrupt flag, r15 = max_iterations
//             (two phases: start at P1 when the iteration is odd)
//   top0:     flag set?        -> interrupted
//             P0's condition ops
//             predicate == 0?  -> done
//             r12 >= r15?      -> too_many        (only with a bound)
//             P0's body ops; ++r12
//   top1:     the same for P1; jump to top0   (one phase: jump after P0)
//   exits:    store r12 and the exit code in the frame; restore; return
//
// Each op is what BoundSteps::Run does for it, with every operand an
// immediate: a kernel `fn(addresses, 0, extent)` and a library routine
// `fn(plan, addresses, scratch)` as calls through rax; a copy of up to 56
// bytes as loads of every word into caller-saved registers, then the stores
// (every byte loaded before any is stored, so overlapping ranges move as
// memmove moves them; MoveBytes's rule), a longer one as a call of memmove;
// a conditional as a compare of its selector and a jump to the branch's ops,
// emitted inline; a nested loop as a call of BoundSteps::RunCompound (which
// runs it with its own native code), a non-null result jumping to `failed`.
// A kernel whose program the compile driver kept (a one-element kernel,
// runtime::Step::inline_program) is emitted inline instead, its state in xmm
// registers loaded at entry and written through to memory (LoopKernels,
// x64_loop_kernels.h): the loop-carried chain of a scalar loop then runs from
// register to register. Nothing else is held in a caller-saved register
// across a call (registers stale after one are reloaded when next read, and
// before the jump back to the top), and the stack stays 16-byte aligned at
// every call (four pushes and 8 bytes).
#include "jit/x64/x64_loop.h"

#include <asmjit/x86.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "ir/status_macros.h"
#include "jit/code/code_install.h"
#include "jit/code/code_memory.h"
#include "jit/code/perf_map.h"
#include "jit/x64/x64_loop_kernels.h"
#include "runtime/bound_steps.h"
#include "runtime/host/interrupt.h"

namespace xjit::jit::x64 {
namespace {

using namespace asmjit;  // NOLINT
using runtime::BoundSteps;
using Op = BoundSteps::Op;

// Ops emitted, copies of a branch or a phase counted each time, beyond which
// a loop stays on bound steps: conditionals nested in conditionals would
// otherwise grow the code without bound. Far above any loop seen in the
// programs suite (NUTS: a few hundred).
constexpr int kMaxEmittedOps = 8192;
// Copies up to this many bytes are inline: seven 8-byte words at most.
constexpr size_t kInlineCopyBytes = 56;

// The frame's fields (runtime::NativeLoopFrame).
constexpr int32_t kIterationOffset = 0;
constexpr int32_t kFailedOffset = 8;
constexpr int32_t kExitOffset = 16;

const absl::Status* RunCompound(const Op* op) { return BoundSteps::RunCompound(*op); }

Imm Address(const void* pointer) { return Imm(reinterpret_cast<uint64_t>(pointer)); }

class LoopEmitter {
 public:
  LoopEmitter(x86::Assembler& a, LoopKernels& kernels)
      : a_(a), kernels_(kernels), failed_(a.newLabel()) {}

  // False when the loop has grown past kMaxEmittedOps.
  bool Steps(const BoundSteps& steps) {
    for (const Op& op : steps.ops()) {
      if (++ops_ > kMaxEmittedOps || !One(op)) return false;
    }
    return true;
  }
  // Jumped to with a nested loop's failed status in rax.
  Label failed() const { return failed_; }

 private:
  bool One(const Op& op) {
    switch (op.kind) {
      case Op::Kind::kKernel:
        if (kernels_.Inlined(op)) {
          kernels_.Emit(a_, op);
          return true;
        }
        a_.mov(x86::rdi, Address(op.addresses));
        a_.xor_(x86::esi, x86::esi);
        a_.mov(x86::rdx, Imm(op.extent));
        Call(reinterpret_cast<const void*>(op.kernel));
        return true;
      case Op::Kind::kLibraryCall:
        a_.mov(x86::rdi, Address(op.plan));
        a_.mov(x86::rsi, Address(op.addresses));
        a_.mov(x86::rdx, Address(op.scratch));
        Call(reinterpret_cast<const void*>(op.library));
        return true;
      case Op::Kind::kCopy:
        Copy(op.destination, op.source, op.bytes);
        return true;
      case Op::Kind::kConditional:
        return Conditional(*op.conditional);
      case Op::Kind::kWhile:
        a_.mov(x86::rdi, Address(&op));
        Call(reinterpret_cast<const void*>(&RunCompound));
        a_.test(x86::rax, x86::rax);
        a_.jnz(failed_);
        return true;
    }
    return false;
  }

  // Every call clobbers the xmm registers that hold inlined kernels' state.
  void Call(const void* function) {
    a_.mov(x86::rax, Address(function));
    a_.call(x86::rax);
    kernels_.Clobbered();
  }

  void Copy(uint8_t* destination, const uint8_t* source, size_t bytes) {
    if (bytes > kInlineCopyBytes) {
      a_.mov(x86::rdi, Address(destination));
      a_.mov(x86::rsi, Address(source));
      a_.mov(x86::rdx, Imm(static_cast<uint64_t>(bytes)));
      Call(reinterpret_cast<const void*>(&std::memmove));
      return;
    }
    // Words of `width` bytes at `offsets`, the last ending at the range's
    // end (overlapping the one before when the width does not divide it).
    const uint32_t width = bytes >= 8 ? 8 : bytes >= 4 ? 4 : bytes >= 2 ? 2 : 1;
    std::vector<int32_t> offsets;
    for (size_t offset = 0; offset + width < bytes; offset += width) {
      offsets.push_back(static_cast<int32_t>(offset));
    }
    offsets.push_back(static_cast<int32_t>(bytes - width));
    kernels_.Written(destination, bytes);
    const x86::Gp words[] = {x86::rax, x86::rcx, x86::rdx, x86::r8, x86::r9, x86::r10, x86::r11};
    a_.mov(x86::rsi, Address(source));
    a_.mov(x86::rdi, Address(destination));
    for (size_t k = 0; k < offsets.size(); ++k) {
      const x86::Mem from = x86::ptr(x86::rsi, offsets[k], width);
      switch (width) {
        case 8:
          a_.mov(words[k], from);
          break;
        case 4:
          a_.mov(words[k].r32(), from);
          break;
        default:
          a_.movzx(words[k].r32(), from);
          break;
      }
    }
    for (size_t k = 0; k < offsets.size(); ++k) {
      const x86::Mem to = x86::ptr(x86::rdi, offsets[k], width);
      switch (width) {
        case 8:
          a_.mov(to, words[k]);
          break;
        case 4:
          a_.mov(to, words[k].r32());
          break;
        case 2:
          a_.mov(to, words[k].r16());
          break;
        default:
          a_.mov(to, words[k].r8());
          break;
      }
    }
  }

  // RunConditional's rule (BoundSteps::Conditional::Select): a pred selects
  // branch 0 when nonzero; an s32 index outside [0, N) the last branch.
  bool Conditional(const BoundSteps::Conditional& conditional) {
    const size_t n = conditional.branches.size();
    if (n == 0) return false;
    if (n == 1) return Steps(conditional.branches[0]);
    std::vector<Label> branches;
    for (size_t k = 0; k < n; ++k) branches.push_back(a_.newLabel());
    const Label end = a_.newLabel();
    a_.mov(x86::rax, Address(conditional.selector));
    if (conditional.pred_selector) {
      a_.cmp(x86::byte_ptr(x86::rax), 0);
      a_.je(branches[1]);
    } else {
      a_.mov(x86::eax, x86::dword_ptr(x86::rax));
      for (size_t k = 0; k + 1 < n; ++k) {
        a_.cmp(x86::eax, Imm(static_cast<int64_t>(k)));
        a_.je(branches[k]);
      }
      a_.jmp(branches[n - 1]);
    }
    // Inlined kernels' registers: each branch starts from what was valid
    // before it, and after the conditional what every branch left valid is.
    const std::vector<bool> before = kernels_.valid();
    std::vector<bool> after = before;
    for (size_t k = 0; k < n; ++k) {
      a_.bind(branches[k]);
      kernels_.set_valid(before);
      if (!Steps(conditional.branches[k])) return false;
      if (k == 0) {
        after = kernels_.valid();
      } else {
        kernels_.Meet(after);
        after = kernels_.valid();
      }
      if (k + 1 < n) a_.jmp(end);
    }
    kernels_.set_valid(after);
    a_.bind(end);
    return true;
  }

  x86::Assembler& a_;
  LoopKernels& kernels_;
  Label failed_;
  int ops_ = 0;
};

}  // namespace

absl::StatusOr<runtime::NativeLoop> EmitX64Loop(absl::Span<const runtime::BoundPhase> phases,
                                                int64_t max_iterations) {
  const Environment environment = Environment::host();
  if (environment.isPlatformWindows() || phases.empty() || phases.size() > 2) {
    return runtime::NativeLoop{};
  }
  CodeHolder code;
  ErrorRecorder errors;
  if (const Error error = code.init(environment); error != kErrorOk) {
    return absl::ResourceExhaustedError(
        absl::StrCat("asmjit cannot start a while loop: ", DebugUtils::errorAsString(error)));
  }
  code.setErrorHandler(&errors);
  x86::Assembler a(&code);
  LoopKernels kernels;
  if (LoopKernels::HostSupported()) {
    for (const runtime::BoundPhase& phase : phases) {
      kernels.Collect(*phase.condition);
      kernels.Collect(*phase.body);
    }
    kernels.Plan();
  }
  LoopEmitter emitter(a, kernels);
  const x86::Gp frame = x86::rbx, iteration = x86::r12, flag = x86::r13, bound = x86::r15;
  const x86::Gp saved[] = {x86::rbx, x86::r12, x86::r13, x86::r15};
  for (const x86::Gp& reg : saved) a.push(reg);
  a.sub(x86::rsp, 8);
  a.mov(frame, x86::rdi);
  a.mov(iteration, x86::qword_ptr(frame, kIterationOffset));
  a.mov(flag, Address(InterruptFlagAddress()));
  if (max_iterations >= 0) a.mov(bound, Imm(max_iterations));
  kernels.LoadAll(a);
  const Label tops[2] = {a.newLabel(), a.newLabel()};
  const Label done = a.newLabel(), interrupted = a.newLabel(), too_many = a.newLabel();
  const Label out = a.newLabel();
  if (phases.size() == 2) {
    a.test(iteration.r32(), 1);
    a.jnz(tops[1]);
  }
  for (size_t p = 0; p < phases.size(); ++p) {
    a.bind(tops[p]);
    a.cmp(x86::byte_ptr(flag), 0);
    a.jne(interrupted);
    if (!emitter.Steps(*phases[p].condition)) return runtime::NativeLoop{};
    a.mov(x86::rax, Address(phases[p].predicate));
    a.cmp(x86::byte_ptr(x86::rax), 0);
    a.je(done);
    if (max_iterations >= 0) {
      a.cmp(iteration, bound);
      a.jge(too_many);
    }
    if (!emitter.Steps(*phases[p].body)) return runtime::NativeLoop{};
    // The next top expects every register valid.
    kernels.ReloadStale(a);
    a.add(iteration, 1);
    if (p + 1 == phases.size()) a.jmp(tops[0]);
  }
  const auto exit = [&](runtime::NativeLoopExit why) {
    a.mov(x86::qword_ptr(frame, kIterationOffset), iteration);
    a.mov(x86::dword_ptr(frame, kExitOffset), Imm(static_cast<int32_t>(why)));
    a.jmp(out);
  };
  a.bind(done);
  exit(runtime::NativeLoopExit::kDone);
  a.bind(interrupted);
  exit(runtime::NativeLoopExit::kInterrupted);
  a.bind(too_many);
  exit(runtime::NativeLoopExit::kTooMany);
  a.bind(emitter.failed());
  a.mov(x86::qword_ptr(frame, kFailedOffset), x86::rax);
  exit(runtime::NativeLoopExit::kFailed);
  a.bind(out);
  a.add(x86::rsp, 8);
  for (int k = 3; k >= 0; --k) a.pop(saved[k]);
  a.ret();
  if (errors.error != kErrorOk) {
    return absl::InternalError(absl::StrCat("asmjit failed on a while loop: ", errors.text));
  }
  auto memory = std::make_shared<CodeMemory>();
  XJIT_ASSIGN_OR_RETURN(const void* address, InstallCode(code, *memory, "while loop"));
  // Named for perf under XJIT_PERF_MAP=1 (no compile option reaches here).
  if (PerfMapEnabled(false)) {
    WritePerfMapEntry(address, static_cast<int64_t>(code.codeSize()), "xjit native while loop");
  }
  runtime::NativeLoop loop;
  loop.function = reinterpret_cast<runtime::NativeLoopFunction>(const_cast<void*>(address));
  loop.code = std::move(memory);
  loop.inlined_kernels = kernels.inlined_count();
  return loop;
}

}  // namespace xjit::jit::x64
