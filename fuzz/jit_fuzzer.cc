// Fuzz target: the JIT against the evaluator. The input is HLO text (mutated
// modules); one that parses and verifies, has no side effects, and whose
// values are small, is compiled and run on deterministic arguments by both
// backends. Either may refuse it with a status (Unimplemented, a resource
// limit), but neither may crash, and where both succeed they must agree:
// integers and predicates exactly, floating point within a tolerance wide
// enough for the JIT's vector math (a few ulps) and reassociated sums.
// Under XJIT_GUARD_PAGES=1 every kernel buffer also sits between
// inaccessible pages (docs/limits.md), so an out-of-bounds kernel faults.
//
// Replica mode: a module with collectives (and otherwise as above) runs as
// two replicas on both backends, in a child process whose address space is
// limited to a little more than it already uses (how much is drawn from the
// input), so that allocations fail at varying points on the replica threads.
// Each run may end with any status; the child must not die of a signal (a
// std::bad_alloc that left a replica thread aborted the process, issue 30)
// nor hang. Sanitizer builds, which reserve terabytes of shadow memory, run
// it in process without the limit.
#include <malloc.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <new>
#include <string>
#include <vector>

#include "fuzz/fuzz_target.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "passes/rewrite_util.h"
#include "runtime/collectives/replicated_run.h"
#include "runtime/host/sanitizers.h"

namespace xjit::fuzz {
namespace {

// The most bytes any value of a module run here may take, so that runs stay
// fast and memory stays small.
constexpr int64_t kMaxValueBytes = int64_t{1} << 22;

bool Runnable(const Module& module) {
  SideEffectCache effects;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (effects.HasSideEffectDeep(*instruction) || IsCollective(instruction->opcode())) {
        return false;
      }
      switch (instruction->opcode()) {
        case Opcode::kRng:
        case Opcode::kRngBitGenerator:
        case Opcode::kRngGetAndUpdateState:
        case Opcode::kCustomCall:
        case Opcode::kInfeed:
        case Opcode::kOutfeed:
        case Opcode::kWhile:  // May not end: --max-while-iterations is another issue's.
          return false;
        default:
          break;
      }
      absl::StatusOr<int64_t> bytes = CheckedByteSize(instruction->shape());
      if (!bytes.ok() || *bytes > kMaxValueBytes || instruction->shape().is_dynamic()) {
        return false;
      }
    }
  }
  return true;
}

// Replica mode's modules: at least one collective, no other side effect,
// no library call (OpenBLAS and the FFT library are not written for a
// failing allocator), small values.
bool ReplicaRunnable(const Module& module) {
  SideEffectCache effects;
  bool collective = false;
  for (const auto& computation : module.computations()) {
    for (const auto& instruction : computation->instructions()) {
      const Opcode opcode = instruction->opcode();
      if (IsCollective(opcode)) {
        collective = true;
      } else if (effects.HasSideEffectDeep(*instruction)) {
        return false;
      }
      switch (opcode) {
        case Opcode::kRng:
        case Opcode::kRngBitGenerator:
        case Opcode::kRngGetAndUpdateState:
        case Opcode::kCustomCall:
        case Opcode::kInfeed:
        case Opcode::kOutfeed:
        case Opcode::kWhile:
        case Opcode::kDot:
        case Opcode::kConvolution:
        case Opcode::kFft:
        case Opcode::kCholesky:
        case Opcode::kTriangularSolve:
          return false;
        default:
          break;
      }
      absl::StatusOr<int64_t> bytes = CheckedByteSize(instruction->shape());
      if (!bytes.ok() || *bytes > kMaxValueBytes || instruction->shape().is_dynamic()) {
        return false;
      }
    }
  }
  return collective;
}

Literal Argument(const Shape& shape, uint64_t salt);

// Both backends, two replicas; any status will do.
void RunReplicas(const Module& module) {
  constexpr int kReplicas = 2;
  std::vector<std::vector<Literal>> arguments(kReplicas);
  for (int r = 0; r < kReplicas; ++r) {
    for (const Instruction* parameter : module.entry()->parameters()) {
      arguments[r].push_back(Argument(parameter->shape(), 7 * r + arguments[r].size() + 1));
    }
  }
  (void)RunModuleReplicated(module, arguments);
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(module, jit::CompileOptions());
  if (executable.ok()) (void)collectives::RunReplicated(**executable, arguments);
}

// The process's address space in bytes (/proc/self/statm), 0 if unknown.
int64_t AddressSpaceInUse() {
  std::ifstream statm("/proc/self/statm");
  int64_t pages = 0;
  statm >> pages;
  return pages * sysconf(_SC_PAGESIZE);
}

// Replica mode for `module`; `draw` chooses the memory limit.
void FuzzReplicas(const Module& module, uint64_t draw) {
  if (kSanitized) {
    RunReplicas(module);
    return;
  }
  const pid_t child = fork();
  if (child < 0) return;
  if (child == 0) {
    // 0 to 96 MiB beyond what the process holds: compiling, the replica
    // threads' stacks and their values all compete for it.
    const rlim_t limit = static_cast<rlim_t>(AddressSpaceInUse() + (draw % 97) * (1 << 20));
    const rlimit as = {limit, limit};
    setrlimit(RLIMIT_AS, &as);
    // One malloc arena: glibc otherwise retries creating a 64 MiB arena per
    // thread on every allocation once the limit refuses it, and serves each
    // small allocation with an mmap of its own (a run of seconds then takes
    // minutes). The forked child has no OpenBLAS threads to hang in (the
    // command line's stall under such limits, docs/limits.md), and replica
    // mode runs no library call.
    mallopt(M_ARENA_MAX, 1);
    alarm(15);  // A hang ends in SIGALRM, reported below.
    try {
      RunReplicas(module);
    } catch (const std::bad_alloc&) {
      // On this (the calling) thread: the command line and the C API catch
      // it there; only replica threads must turn it into a status.
    }
    _exit(0);
  }
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  if (WIFSIGNALED(status)) {
    std::fprintf(stderr, "two replicas under a memory limit (draw %llu) died of signal %d%s:\n%s\n",
                 static_cast<unsigned long long>(draw), WTERMSIG(status),
                 WTERMSIG(status) == SIGALRM ? " (did not finish in 15 s)" : "",
                 PrintModule(module).c_str());
    std::abort();
  }
}

uint64_t Mix(uint64_t x) {
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// Deterministic values: floats in [-2, 2), small integers (valid indices).
Literal Argument(const Shape& shape, uint64_t salt) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      elements.push_back(Argument(shape.tuple_shapes(i), salt * 31 + i));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  Literal literal(shape);
  if (!shape.IsArray()) return literal;
  const ElementType type = shape.element_type();
  std::vector<int64_t> index(shape.rank(), 0);
  uint64_t k = salt;
  for (int64_t i = 0; i < shape.element_count();
       ++i, NextIndex(shape.dimensions(), absl::MakeSpan(index))) {
    const uint64_t r = Mix(++k);
    if (IsPred(type)) {
      literal.SetInt(index, static_cast<int64_t>(r & 1));
    } else if (IsSignedInteger(type)) {
      literal.SetInt(index, static_cast<int64_t>(r % 9) - 4);
    } else if (IsUnsignedInteger(type)) {
      literal.SetInt(index, static_cast<int64_t>(r % 8));
    } else if (IsComplex(type)) {
      literal.SetComplex(index, {static_cast<double>(r % 4001) / 1000 - 2,
                                 static_cast<double>((r >> 20) % 4001) / 1000 - 2});
    } else if (type == ElementType::kF8E8M0FNU) {
      literal.SetDouble(index, 1.0);
    } else {
      literal.SetDouble(index, static_cast<double>(r % 4001) / 1000 - 2);
    }
  }
  return literal;
}

// The largest finite magnitude among the float and complex elements of
// `literal` (all of a tuple's leaves).
double MaxMagnitude(const Literal& literal) {
  const Shape& shape = literal.shape();
  double most = 0;
  if (shape.IsTuple()) {
    for (const Literal& element : literal.elements()) most = std::max(most, MaxMagnitude(element));
    return most;
  }
  if (!shape.IsArray() || !(IsFloat(shape.element_type()) || IsComplex(shape.element_type()))) {
    return 0;
  }
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t i = 0; i < shape.element_count();
       ++i, NextIndex(shape.dimensions(), absl::MakeSpan(index))) {
    const double v = IsFloat(shape.element_type()) ? std::abs(literal.GetDouble(index))
                                                   : std::abs(literal.GetComplex(index));
    if (std::isfinite(v)) most = std::max(most, v);
  }
  return most;
}

// `scale`: the magnitude a reassociated sum's rounding error is relative to
// (the largest value the module starts from or computes), since a sum of
// large terms that cancel may legitimately end anywhere within rounding of
// them: f32 sums of {2^31, 2, -2^31, 6} give 6 in one order and 8 in another.
bool Close(double got, double want, double scale) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  if (std::isinf(got) || std::isinf(want)) {
    // A finite huge value on one side and an overflow on the other: fine.
    return got == want || std::abs(got) > 1e30 || std::abs(want) > 1e30;
  }
  return std::abs(got - want) <= 1e-3 * std::max({1.0, std::abs(got), std::abs(want), scale});
}

// The first difference between two results of one shape, or "".
std::string Difference(const Literal& got, const Literal& want, double scale) {
  const Shape& shape = want.shape();
  if (shape.IsTuple()) {
    for (int64_t i = 0; i < shape.tuple_size(); ++i) {
      std::string d = Difference(got.elements()[i], want.elements()[i], scale);
      if (!d.empty()) return d;
    }
    return "";
  }
  if (!shape.IsArray()) return "";
  const ElementType type = shape.element_type();
  std::vector<int64_t> index(shape.rank(), 0);
  for (int64_t i = 0; i < shape.element_count();
       ++i, NextIndex(shape.dimensions(), absl::MakeSpan(index))) {
    bool same;
    if (IsFloat(type)) {
      same = Close(got.GetDouble(index), want.GetDouble(index), scale);
    } else if (IsComplex(type)) {
      same = Close(got.GetComplex(index).real(), want.GetComplex(index).real(), scale) &&
             Close(got.GetComplex(index).imag(), want.GetComplex(index).imag(), scale);
    } else {
      same = got.GetBits(index) == want.GetBits(index);
    }
    if (!same) return "element " + std::to_string(i) + " of " + shape.ToString();
  }
  return "";
}

}  // namespace

// A root tuple of `n` scalars, each its own add: compile time must stay
// linear in the width (issue 30 found it quadratic); mutations vary the
// elements' types and operations.
std::string WideTupleSeed(int n) {
  std::string text = "HloModule wide\nENTRY main {\n  p = f32[] parameter(0)\n";
  std::string types, names;
  for (int i = 0; i < n; ++i) {
    text += "  c" + std::to_string(i) + " = f32[] constant(" + std::to_string(i) + ")\n";
    text += "  x" + std::to_string(i) + " = f32[] add(p, c" + std::to_string(i) + ")\n";
    types += (i > 0 ? ", " : "") + std::string("f32[]");
    names += (i > 0 ? ", x" : "x") + std::to_string(i);
  }
  return text + "  ROOT t = (" + types + ") tuple(" + names + ")\n}\n";
}

std::vector<std::string> XjitFuzzSeeds() {
  return {R"(HloModule seed
ENTRY main {
  p = f32[2,3]{1,0} parameter(0)
  c = f32[2,3]{0,1} copy(p)
  e = f32[2,3]{0,1} exponential(c)
  ROOT t = (f32[2,3]{1,0}, f32[2,3]{0,1}) tuple(e, c)
}
)",
          // FFTs of signals with an infinity or a NaN (the arguments are
          // finite; the constants are not): both backends make such a signal
          // NaN throughout (docs/fft.md), where they disagreed (issue 30).
          R"(HloModule fft_non_finite
ENTRY main {
  p = c64[3,7] parameter(0)
  c = c64[3,7] constant({{(inf, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)}, {(0, 0), (0, 0), (0, 0), (1, nan), (0, 0), (0, 0), (0, 0)}, {(0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)}})
  s = c64[3,7] add(p, c)
  f = c64[3,7] fft(s), fft_type=FFT, fft_length={7}
  q = f32[2,8] parameter(1)
  d = f32[2,8] constant({{0, 0, inf, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0, 0, nan}})
  r = f32[2,8] add(q, d)
  g = c64[2,5] fft(r), fft_type=RFFT, fft_length={8}
  h = f32[2,8] fft(g), fft_type=IRFFT, fft_length={8}
  ROOT t = (c64[3,7], c64[2,5], f32[2,8]) tuple(f, g, h)
}
)",
          WideTupleSeed(400),
          // Replica mode (collectives): values of 64 and 128 KiB, small
          // enough for sanitizer builds, large enough that the limit falls
          // among them as well as among compiling and starting threads.
          R"(HloModule replicas, replica_count=2
sum {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
ENTRY main {
  p = f32[16384] parameter(0)
  x = f32[16384] iota(), iota_dimension=0
  y = f32[16384] add(p, x)
  r = f32[16384] all-reduce(y), replica_groups={}, to_apply=sum
  g = f32[32768] all-gather(r), replica_groups={}, dimensions={0}
  c = f32[16384] collective-permute(y), source_target_pairs={{0,1},{1,0}}
  ROOT t = (f32[32768], f32[16384]) tuple(g, c)
}
)"};
}

std::vector<std::string> XjitFuzzDictionary() {
  return {"{1,0}",
          "{0,1}",
          "{0}",
          "f32[",
          "s32[",
          "[0]",
          "[1]",
          "[0,0]",
          "[1,1]",
          "[7,1]",
          "0",
          "1",
          "-1",
          "2",
          "(",
          ")",
          ",",
          "ROOT ",
          "negate(",
          "add(",
          "copy(",
          "tuple(",
          "reverse(",
          "transpose(",
          "slice(",
          "broadcast(",
          "dimensions={}",
          "dimensions={0}",
          "dimensions={1,0}",
          "slice={[0:1]}",
          "slice={[0:2:9223372036854775807]}",
          "inf",
          "nan",
          "-inf",
          "fft_type=IFFT",
          "fft_length={1}"};
}

}  // namespace xjit::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace xjit;  // NOLINT
  const std::string text(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, "fuzz.hlo");
  if (!module.ok() || !VerifyModule(**module).ok()) return 0;
  if (fuzz::ReplicaRunnable(**module)) {
    fuzz::XjitFuzzKeep();
    uint64_t draw = size;
    for (uint8_t byte : text) draw = draw * 131 + byte;
    fuzz::FuzzReplicas(**module, fuzz::Mix(draw));
    return 0;
  }
  if (!fuzz::Runnable(**module)) return 0;
  fuzz::XjitFuzzKeep();
  std::vector<Literal> arguments;
  for (const Instruction* parameter : (*module)->entry()->parameters()) {
    arguments.push_back(fuzz::Argument(parameter->shape(), arguments.size() + 1));
  }
  absl::StatusOr<Literal> want = EvaluateModule(**module, arguments);
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(**module, jit::CompileOptions());
  if (!executable.ok()) return 0;  // Refused with a status: allowed.
  absl::StatusOr<Literal> got = (*executable)->Run(arguments);
  if (!want.ok() || !got.ok()) return 0;
  // The scale of rounding errors: the module's constants, its arguments and
  // both results (an intermediate value larger than all of them is not
  // accounted for; such a module may need a wider tolerance).
  double scale = std::max(fuzz::MaxMagnitude(*got), fuzz::MaxMagnitude(*want));
  for (const Literal& argument : arguments) scale = std::max(scale, fuzz::MaxMagnitude(argument));
  for (const auto& computation : (*module)->computations()) {
    for (const auto& instruction : computation->instructions()) {
      if (instruction->opcode() == Opcode::kConstant) {
        scale = std::max(scale, fuzz::MaxMagnitude(instruction->literal()));
      }
    }
  }
  const std::string difference = fuzz::Difference(*got, *want, scale);
  if (!difference.empty()) {
    std::fprintf(stderr, "jit and evaluator differ at %s:\n%s\njit: %s\nevaluator: %s\n",
                 difference.c_str(), PrintModule(**module).c_str(), got->ToString().c_str(),
                 want->ToString().c_str());
    std::abort();
  }
  return 0;
}
