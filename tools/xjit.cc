// The xjit command line (shared/DESIGN.md, "The xjit command line"):
//
//   xjit check MODULE.hlo
//   xjit run MODULE.hlo [ARG.npy ...] [--backend=jit|interpreter] [--out DIR] [--repeat N]
//            [--threads N] [--replicas N] [--random-args [--seed S]] [--isa=auto|sse4|avx2|avx512|neon]
//   xjit compile MODULE.hlo [--dump DIR] [--asm] [--isa=...]
//   xjit bench MODULE.hlo [ARG.npy ...] [--iterations N] [--threads N] [--isa=...]
//
// `run --backend=jit` and `compile`/`bench` go through jit::Compile; its
// CompileReport gives the `xjit compile` summary lines scripts read.
//
// Exit status: 0 on success, 1 on any error, with one message on stderr:
// the parser's `FILE:LINE:COL: error: ...`, `FILE: error: ...` for the
// verifier, or `xjit: error: ...` for everything else. No input may crash it.
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <filesystem>
#include <functional>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <system_error>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/cord.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/hlo_text/printer.h"
#include "ir/layout_util.h"
#include "ir/literal.h"
#include "ir/literal_text.h"
#include "ir/module.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "jit/compile_options.h"
#include "runtime/collectives/communicator_exchange.h"
#include "runtime/collectives/mpi_communicator.h"
#include "runtime/collectives/mpi_process.h"
#include "runtime/collectives/replicated_run.h"
#include "runtime/blas/blas_threads.h"
#include "runtime/executable.h"
#include "runtime/host/interrupt.h"
#include "tools/npy.h"

namespace xjit {
namespace {

constexpr char kUsage[] =
    R"(usage:
  xjit check MODULE.hlo [--max-constant-bytes N]
      Parse and verify MODULE.hlo; print it as canonical HLO text.
      --max-constant-bytes N      the most bytes the module's constants may take
                                  together (default 1073741824; also for run,
                                  compile and bench)
  xjit run MODULE.hlo [ARG.npy ...] [options]
      Run the entry computation. Parameters come from the .npy files in order
      (a tuple parameter takes one file per array element). Results print as
      HLO literals on stdout.
      --backend=jit|interpreter   execution engine (default: jit)
      --out DIR                   also write results as DIR/0.npy, DIR/1.npy, ...
                                  (tuple results flattened in order)
      --repeat N                  run N times; prints the median run time on stderr
      --threads N                 worker threads (the interpreter uses one)
      --replicas N                run N in-process replicas (threads; both backends); each
                                  gets the same arguments; results print per replica
                                  after a `replica R:` line (--out: DIR/replica_R/).
                                  Under mpirun -np N: rank R runs replica R, collectives
                                  go over MPI (docs/mpi.md)
      --partitions P              run P partitions of each replica (default: the
                                  module's num_partitions); with P > 1 each of the
                                  R x P devices gets the same arguments and prints
                                  after a `replica R partition P:` line
                                  (--out: DIR/replica_R/partition_P/); docs/replicas.md
      --collective-timeout S      under mpirun: a collective that waits more than S
                                  seconds for the other ranks fails the job
      --random-args               fill parameters without a file with random values
      --seed S                    seed for --random-args (default 0)
      --isa=auto|sse4|avx2|avx512|neon  instruction set of the jit (default: the host's best;
                                  x86-64: sse4, avx2, avx512; AArch64: neon)
      --passes=on|off             run the pass pipeline before the jit (default: on)
      --disable-passes=A,B        skip these pipeline passes (see docs/passes.md)
      --max-while-iterations N    fail (RESOURCE_EXHAUSTED) when one run of a while
                                  loop needs more than N iterations (both backends;
                                  default: unbounded). Ctrl-C stops a run (exit 130).
  xjit compile MODULE.hlo [--dump DIR] [--asm] [--isa=auto|sse4|avx2|avx512|neon] [--passes=...]
      Compile with the jit and report: each interpreted step (an instruction
      the evaluator runs for want of compiled code) with the reason, each
      kernel, and the summary lines `kernels: N`, `interpreted steps: N`,
      `temp bytes: N`, `peak bytes: N`, `compile ms: X`.
      --asm                       print each kernel's program and disassembly
      --dump DIR                  write the module after each pass of the pass
                                  pipeline (DIR/NN-pass.hlo), the module the
                                  executable runs (DIR/final.hlo), its buffer
                                  plan (DIR/buffer-plan.txt) and each kernel
                                  (DIR/MODULE.KERNEL.kernel.txt)
      --passes, --disable-passes  as for run
  xjit bench MODULE.hlo [ARG.npy ...] [options]
      Compile, then run repeatedly; prints `compile ms: X` and `run ms: X`
      (the median of the timed executions). Parameters without a file get
      seeded random values.
      --iterations N              timed executions (default 10, after one warm-up)
      --warmup-ms N               untimed executions first until N ms have passed
                                  (at least one; default 0): the steady state a
                                  long-running program sees (caches, page faults,
                                  thread pools and OpenBLAS's workers started)
      --min-time-ms N             go on timing past --iterations until the timed
                                  executions add up to N ms (default 0): a median
                                  of a few runs samples one moment of a noisy
                                  machine, whose slow phases last tens of ms
      --threads N, --isa=..., --seed S, --backend=jit|interpreter, --passes=...,
      --disable-passes=..., --max-while-iterations N
                                  as for run
  xjit help
)";

// An error already formatted for stderr (the parser's FILE:LINE:COL form,
// the verifier's FILE: form); anything else gets the `xjit: error:` prefix.
constexpr absl::string_view kPreformatted = "xjit.preformatted";

absl::Status Preformatted(absl::Status status, std::string message) {
  absl::Status out(status.code(), message);
  out.SetPayload(kPreformatted, absl::Cord("1"));
  return out;
}

// The largest module text xjit reads (docs/limits.md): parsing holds every
// token, about 90 bytes each, so this bounds the parser's memory too; and a
// device that never ends (/dev/zero) stops here.
constexpr int64_t kMaxModuleTextBytes = int64_t{256} << 20;

absl::StatusOr<std::string> ReadTextFile(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) {
    return absl::InvalidArgumentError(absl::StrCat(path, " is a directory, not a file"));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in)
    return absl::NotFoundError(absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  std::string text;
  char chunk[1 << 16];
  while (in) {
    in.read(chunk, sizeof(chunk));
    text.append(chunk, static_cast<size_t>(in.gcount()));
    if (static_cast<int64_t>(text.size()) > kMaxModuleTextBytes) {
      return absl::InvalidArgumentError(
          absl::StrCat(path, " is larger than ", kMaxModuleTextBytes >> 20,
                       " MiB, the most module text xjit reads"));
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat("cannot read ", path));
  return text;
}

absl::StatusOr<std::unique_ptr<Module>> LoadModule(const std::string& path,
                                                  int64_t max_constant_bytes) {
  XJIT_ASSIGN_OR_RETURN(std::string text, ReadTextFile(path));
  ParseOptions parse_options;
  parse_options.max_constant_bytes = max_constant_bytes;
  absl::StatusOr<std::unique_ptr<Module>> module = ParseHloModule(text, path, parse_options);
  if (!module.ok()) {
    // The parser's messages carry FILE:LINE:COL already.
    std::string message(module.status().message());
    if (!absl::StartsWith(message, path)) message = absl::StrCat(path, ": error: ", message);
    return Preformatted(module.status(), message);
  }
  absl::Status verified = VerifyModule(**module);
  if (!verified.ok()) {
    return Preformatted(verified, absl::StrCat(path, ": error: ", verified.message()));
  }
  return module;
}

// ---- Flags ----

// The flags of every subcommand; each accepts the subset kRunFlags,
// kCompileFlags or kBenchFlags names.
struct RunOptions {
  std::string module_path;
  std::vector<std::string> arg_paths;
  std::string backend = "jit";
  std::optional<std::string> out_dir;
  int64_t repeat = 1;
  int64_t threads = 0;  // 0: the backend's default
  int64_t replicas = 1;
  int64_t partitions = 0;  // 0: the module's num_partitions
  bool random_args = false;
  std::optional<uint64_t> seed;
  jit::Isa isa = jit::Isa::kAuto;
  int64_t iterations = 10;
  int64_t warmup_ms = 0;
  int64_t min_time_ms = 0;
  std::optional<std::string> dump_dir;
  bool asm_text = false;
  bool run_passes = true;
  std::vector<std::string> disabled_passes;
  int64_t max_while_iterations = -1;  // < 0: unbounded.
  double collective_timeout = 0;      // <= 0: none (MPI runs only).
  int64_t max_constant_bytes = kDefaultMaxConstantBytes;
};

constexpr int64_t kMaxReplicas = 1024;

constexpr absl::string_view kRunFlags[] = {"backend", "out",         "repeat", "threads",
                                           "replicas", "partitions", "seed", "random-args", "isa",
                                           "passes",  "disable-passes", "max-while-iterations",
                                           "collective-timeout", "max-constant-bytes"};
constexpr absl::string_view kCompileFlags[] = {"dump",   "asm",           "isa",
                                               "threads", "passes",       "disable-passes",
                                               "max-constant-bytes"};
constexpr absl::string_view kBenchFlags[] = {"iterations", "warmup-ms", "min-time-ms",
                                             "threads",    "isa",       "seed",
                                             "backend",    "passes",    "disable-passes",
                                             "max-while-iterations", "max-constant-bytes"};
constexpr absl::string_view kCheckFlags[] = {"max-constant-bytes"};

// Walks argv accepting `--name=value` and `--name value`.
class FlagReader {
 public:
  explicit FlagReader(std::vector<std::string> args) : args_(std::move(args)) {}

  bool Done() const { return pos_ >= args_.size(); }
  const std::string& Peek() const { return args_[pos_]; }
  std::string Take() { return args_[pos_++]; }

  // For a flag `name` (the current argument is `--name` or `--name=...`),
  // the value; an error if it is missing.
  absl::StatusOr<std::string> Value(absl::string_view name) {
    std::string arg = Take();
    size_t eq = arg.find('=');
    if (eq != std::string::npos) return arg.substr(eq + 1);
    if (Done()) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a value"));
    return Take();
  }

 private:
  std::vector<std::string> args_;
  size_t pos_ = 0;
};

absl::string_view FlagName(absl::string_view arg) {
  arg.remove_prefix(2);
  size_t eq = arg.find('=');
  return eq == absl::string_view::npos ? arg : arg.substr(0, eq);
}

absl::StatusOr<int64_t> PositiveInt(absl::string_view name, absl::string_view text) {
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v) || v < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", name, " needs a positive integer, got '", text, "'"));
  }
  return v;
}

// Parses the flags of `xjit COMMAND` (those in `allowed`) and its
// positional arguments (the module, then .npy files where the command takes
// them).
absl::StatusOr<RunOptions> ParseFlags(absl::string_view command,
                                      absl::Span<const absl::string_view> allowed,
                                      std::vector<std::string> args) {
  RunOptions options;
  FlagReader flags(std::move(args));
  bool only_positional = false;
  std::vector<std::string> positional;
  auto unknown = [&](const std::string& arg) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown flag '", arg, "' for xjit ", command, " (see xjit help)"));
  };
  while (!flags.Done()) {
    const std::string& arg = flags.Peek();
    if (!only_positional && arg.size() > 1 && arg[0] == '-' && arg[1] != '-') return unknown(arg);
    if (only_positional || !absl::StartsWith(arg, "--")) {
      positional.push_back(flags.Take());
      continue;
    }
    if (arg == "--") {
      flags.Take();
      only_positional = true;
      continue;
    }
    std::string name(FlagName(arg));
    if (std::find(allowed.begin(), allowed.end(), name) == allowed.end()) return unknown(arg);
    if (name == "backend") {
      XJIT_ASSIGN_OR_RETURN(options.backend, flags.Value(name));
      if (options.backend != "jit" && options.backend != "interpreter") {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown backend '", options.backend, "' (expected jit or interpreter)"));
      }
    } else if (name == "out" || name == "dump") {
      XJIT_ASSIGN_OR_RETURN(std::string dir, flags.Value(name));
      if (dir.empty()) return absl::InvalidArgumentError(absl::StrCat("--", name, " needs a directory"));
      (name == "out" ? options.out_dir : options.dump_dir) = dir;
    } else if (name == "repeat" || name == "threads" || name == "replicas" ||
               name == "partitions" || name == "iterations") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      XJIT_ASSIGN_OR_RETURN(int64_t v, PositiveInt(name, text));
      if (name == "threads" && v > 4096) {
        return absl::InvalidArgumentError(absl::StrCat("--threads ", v, " is too many"));
      }
      // Each replica is a thread with its own copy of every value.
      if ((name == "replicas" || name == "partitions") && v > kMaxReplicas) {
        return absl::InvalidArgumentError(
            absl::StrCat("--", name, " ", v, " is too many (at most ", kMaxReplicas, ")"));
      }
      (name == "repeat"       ? options.repeat
       : name == "threads"    ? options.threads
       : name == "replicas"   ? options.replicas
       : name == "partitions" ? options.partitions
                              : options.iterations) = v;
    } else if (name == "warmup-ms" || name == "min-time-ms") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      int64_t v = 0;
      if (!absl::SimpleAtoi(text, &v) || v < 0 || v > 3'600'000) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--", name, " needs an integer from 0 to 3600000, got '", text, "'"));
      }
      (name == "warmup-ms" ? options.warmup_ms : options.min_time_ms) = v;
    } else if (name == "max-while-iterations") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      int64_t v = 0;
      if (!absl::SimpleAtoi(text, &v) || v < 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--max-while-iterations needs a non-negative integer, got '", text, "'"));
      }
      options.max_while_iterations = v;
    } else if (name == "collective-timeout") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      double v = 0;
      if (!absl::SimpleAtod(text, &v) || !(v > 0) || v > 1e6) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--collective-timeout needs a positive number of seconds, got '", text, "'"));
      }
      options.collective_timeout = v;
    } else if (name == "max-constant-bytes") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      int64_t v = 0;
      if (!absl::SimpleAtoi(text, &v) || v < 0 || v > kMaxArrayBytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "--max-constant-bytes needs an integer from 0 to ", kMaxArrayBytes, ", got '", text,
            "'"));
      }
      options.max_constant_bytes = v;
    } else if (name == "seed") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      uint64_t seed = 0;
      if (!absl::SimpleAtoi(text, &seed)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--seed needs a non-negative integer, got '", text, "'"));
      }
      options.seed = seed;
    } else if (name == "isa") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      std::optional<jit::Isa> isa = jit::ParseIsa(text);
      if (!isa.has_value()) {
        return absl::InvalidArgumentError(
            absl::StrCat("unknown --isa '", text, "' (expected auto, sse4, avx2, avx512 or neon)"));
      }
      options.isa = *isa;
    } else if (name == "passes") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      if (text != "on" && text != "off") {
        return absl::InvalidArgumentError(
            absl::StrCat("--passes needs on or off, got '", text, "'"));
      }
      options.run_passes = text == "on";
    } else if (name == "disable-passes") {
      XJIT_ASSIGN_OR_RETURN(std::string text, flags.Value(name));
      for (absl::string_view pass : absl::StrSplit(text, ',', absl::SkipEmpty())) {
        options.disabled_passes.emplace_back(pass);
      }
    } else if (name == "random-args" || name == "asm") {
      if (arg != absl::StrCat("--", name)) {
        return absl::InvalidArgumentError(absl::StrCat("--", name, " takes no value"));
      }
      flags.Take();
      (name == "asm" ? options.asm_text : options.random_args) = true;
    } else {
      return unknown(arg);
    }
  }
  if (command == "check" && positional.size() != 1) {
    return absl::InvalidArgumentError("usage: xjit check MODULE.hlo [--max-constant-bytes N]");
  }
  if (positional.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("xjit ", command, " needs a MODULE.hlo"));
  }
  options.module_path = positional[0];
  options.arg_paths.assign(positional.begin() + 1, positional.end());
  if (command == "compile" && !options.arg_paths.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("xjit compile takes one MODULE.hlo, got '", options.arg_paths[0], "' too"));
  }
  if (command == "run" && options.seed.has_value() && !options.random_args) {
    return absl::InvalidArgumentError("--seed only applies with --random-args");
  }
  if (command == "bench") options.random_args = true;
  return options;
}

// ---- Arguments ----

// A deterministic generator (splitmix64) so that `--seed S` means the same
// values on every platform and standard library.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  // Uniform in [-1, 1).
  double Symmetric() { return static_cast<double>(Next() >> 11) * 0x1.0p-52 - 1.0; }
  // Uniform integer in [lo, hi].
  int64_t Between(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }

 private:
  uint64_t state_;
};

bool NextIndex(absl::Span<const int64_t> dims, std::vector<int64_t>& index) {
  for (int64_t d = static_cast<int64_t>(dims.size()) - 1; d >= 0; --d) {
    if (++index[d] < dims[d]) return true;
    index[d] = 0;
  }
  return false;
}

// Random values for an array: floats in [-1, 1); integers small enough to be
// valid indices and to keep products exact (signed in [-8, 8], unsigned in
// [0, 15], clipped to the type's range).
Literal RandomArray(const Shape& shape, Random& random) {
  Literal literal(shape);
  const ElementType type = shape.element_type();
  const int bits = BitWidth(type);
  std::vector<int64_t> index(shape.rank(), 0);
  const int64_t count = shape.element_count();
  for (int64_t i = 0; i < count; ++i, NextIndex(shape.dimensions(), index)) {
    if (IsPred(type)) {
      literal.SetInt(index, static_cast<int64_t>(random.Next() & 1));
    } else if (IsSignedInteger(type)) {
      const int64_t limit = int64_t{1} << std::min(bits - 1, 8);
      literal.SetInt(index,
                     random.Between(-std::min<int64_t>(8, limit), std::min<int64_t>(8, limit - 1)));
    } else if (IsUnsignedInteger(type)) {
      int64_t top = bits >= 4 ? 15 : (int64_t{1} << bits) - 1;
      literal.SetInt(index, random.Between(0, top));
    } else if (IsComplex(type)) {
      double re = random.Symmetric();
      literal.SetComplex(index, {re, random.Symmetric()});
    } else if (type == ElementType::kF8E8M0FNU) {
      // Only positive powers of two exist.
      literal.SetDouble(index, std::ldexp(1.0, static_cast<int>(random.Between(-4, 4))));
    } else {
      literal.SetDouble(index, random.Symmetric());
    }
  }
  return literal;
}

// Builds the argument for a parameter of `shape`, taking array leaves from
// `files` (advancing *next_file) or from `random`.
absl::StatusOr<Literal> BuildArgument(const Shape& shape, int64_t parameter,
                                      const std::vector<std::string>& files, size_t* next_file,
                                      Random* random) {
  if (shape.IsTuple()) {
    std::vector<Literal> elements;
    for (const Shape& element : shape.tuple_shapes()) {
      XJIT_ASSIGN_OR_RETURN(Literal e, BuildArgument(element, parameter, files, next_file, random));
      elements.push_back(std::move(e));
    }
    return Literal::MakeTuple(std::move(elements));
  }
  if (!shape.IsArray()) return Literal(shape);  // A token needs no data.
  if (*next_file < files.size()) {
    size_t k = (*next_file)++;
    const std::string& path = files[k];
    absl::StatusOr<npy::Array> array = npy::ReadNpyFile(path);
    if (!array.ok()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("argument %d (%s): %s", k, path, array.status().message()));
    }
    absl::StatusOr<Literal> literal = npy::LiteralFromArray(*array, shape);
    if (!literal.ok()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "argument %d (%s) for parameter %d: %s", k, path, parameter, literal.status().message()));
    }
    return literal;
  }
  if (random == nullptr) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "missing argument %d: parameter %d needs a %s .npy file (or use --random-args)", *next_file,
        parameter, shape.ToString(false)));
  }
  return RandomArray(shape, *random);
}

int64_t CountArrayLeaves(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t n = 0;
    for (const Shape& s : shape.tuple_shapes()) n += CountArrayLeaves(s);
    return n;
  }
  return shape.IsArray() ? 1 : 0;
}

absl::StatusOr<std::vector<Literal>> BuildArguments(const Module& module,
                                                    const RunOptions& options) {
  const Computation& entry = *module.entry();
  std::optional<Random> random;
  if (options.random_args) random.emplace(options.seed.value_or(0));
  int64_t wanted = 0;
  for (const Instruction* p : entry.parameters()) wanted += CountArrayLeaves(p->shape());
  if (static_cast<int64_t>(options.arg_paths.size()) > wanted) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%d .npy arguments given, but the entry computation takes %d array%s",
                        options.arg_paths.size(), wanted, wanted == 1 ? "" : "s"));
  }
  std::vector<Literal> arguments;
  size_t next_file = 0;
  for (int64_t i = 0; i < entry.parameter_count(); ++i) {
    XJIT_ASSIGN_OR_RETURN(Literal argument,
                          BuildArgument(entry.parameter(i)->shape(), i, options.arg_paths,
                                        &next_file, random.has_value() ? &*random : nullptr));
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

// ---- Results ----

void FlattenArrays(const Literal& literal, std::vector<const Literal*>* out) {
  if (literal.shape().IsTuple()) {
    for (const Literal& e : literal.elements()) FlattenArrays(e, out);
  } else if (literal.shape().IsArray()) {
    out->push_back(&literal);
  }
}

absl::Status WriteResults(const Literal& result, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    return absl::PermissionDeniedError(
        absl::StrCat("cannot create output directory ", dir, ": ", ec.message()));
  }
  std::vector<const Literal*> arrays;
  FlattenArrays(result, &arrays);
  for (size_t i = 0; i < arrays.size(); ++i) {
    XJIT_RETURN_IF_ERROR(npy::WriteNpyFile(
        (std::filesystem::path(dir) / absl::StrCat(i, ".npy")).string(), *arrays[i]));
  }
  return absl::OkStatus();
}

// Results with more elements than this are not printed when --out writes
// them: the text would cost several times the result's memory and time.
constexpr int64_t kMaxPrintedElementsWithOut = int64_t{1} << 20;

// The text `run` prints for a result, handed to `sink` piece by piece: the
// literal, or with --out and a large result one line per array naming the
// file that holds it. No newline at the end.
void PrintResult(const Literal& result, const Shape& declared,
                 const std::optional<std::string>& out_dir, TextSink sink) {
  std::vector<const Literal*> arrays;
  FlattenArrays(result, &arrays);
  int64_t elements = 0;
  for (const Literal* array : arrays) elements += array->shape().element_count();
  if (!out_dir.has_value() || elements <= kMaxPrintedElementsWithOut) {
    PrintLiteral(result, declared, sink);
    return;
  }
  for (size_t i = 0; i < arrays.size(); ++i) {
    sink(absl::StrCat(i == 0 ? "" : "\n", arrays[i]->shape().ToString(), " (",
                      arrays[i]->shape().element_count(), " elements: not printed; see ",
                      (std::filesystem::path(*out_dir) / absl::StrCat(i, ".npy")).string(),
                      ")"));
  }
}

// The same as one string (for the MPI ranks, which gather their texts).
std::string ResultText(const Literal& result, const Shape& declared,
                       const std::optional<std::string>& out_dir) {
  std::string text;
  PrintResult(result, declared, out_dir,
              [&](absl::string_view piece) { text.append(piece.data(), piece.size()); });
  return text;
}

// Writes text to stdout through a buffer of bounded size, so that a result
// prints without its whole text in memory (a result's text is several times
// its size: a 400 MB result ran out of memory being printed).
class StdoutWriter {
 public:
  StdoutWriter() { buffer_.reserve(kCapacity); }
  StdoutWriter(const StdoutWriter&) = delete;
  StdoutWriter& operator=(const StdoutWriter&) = delete;
  ~StdoutWriter() { Flush(); }

  void Write(absl::string_view text) {
    if (buffer_.size() + text.size() > kCapacity) Flush();
    if (text.size() >= kCapacity) {
      std::fwrite(text.data(), 1, text.size(), stdout);
    } else {
      buffer_.append(text.data(), text.size());
    }
  }
  // A sink for PrintResult.
  auto Sink() {
    return [this](absl::string_view piece) { Write(piece); };
  }
  void Flush() {
    std::fwrite(buffer_.data(), 1, buffer_.size(), stdout);
    buffer_.clear();
  }

 private:
  static constexpr size_t kCapacity = size_t{1} << 16;
  std::string buffer_;
};

// ---- Subcommands ----

absl::Status Check(std::vector<std::string> args) {
  XJIT_ASSIGN_OR_RETURN(RunOptions options, ParseFlags("check", kCheckFlags, std::move(args)));
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module,
                        LoadModule(options.module_path, options.max_constant_bytes));
  std::string text = PrintModule(*module);
  if (text.empty() || text.back() != '\n') text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  return absl::OkStatus();
}

jit::CompileOptions JitOptions(const RunOptions& options) {
  jit::CompileOptions compile_options;
  compile_options.isa = options.isa;
  if (options.threads > 0) compile_options.threads = static_cast<int>(options.threads);
  compile_options.run_passes = options.run_passes;
  compile_options.disabled_passes = options.disabled_passes;
  compile_options.max_while_iterations = options.max_while_iterations;
  return compile_options;
}

EvaluatorOptions InterpreterOptions(const RunOptions& options) {
  EvaluatorOptions evaluator_options;
  evaluator_options.replica_count = options.replicas;
  evaluator_options.max_while_iterations = options.max_while_iterations;
  return evaluator_options;
}

// Compile errors name the module file, as the parser's and verifier's do.
absl::StatusOr<std::unique_ptr<runtime::Executable>> CompileModule(
    const Module& module, const RunOptions& options, const jit::CompileOptions& compile_options,
    jit::CompileReport* report) {
  absl::StatusOr<std::unique_ptr<runtime::Executable>> executable =
      jit::Compile(module, compile_options, report);
  if (!executable.ok()) {
    return Preformatted(executable.status(),
                        absl::StrCat(options.module_path,
                                     ": error: jit: ", executable.status().message()));
  }
  return executable;
}

// `xjit run --replicas R [--partitions P]`: every device (replica r,
// partition p; device r * P + p) gets the same arguments. With one
// partition each replica's result prints after a `replica R:` line, and with
// --out goes to DIR/replica_R/ as the single-replica results go to DIR/;
// with partitions every device's prints after `replica R partition P:` and
// goes to DIR/replica_R/partition_P/ (each device returns its own result, as
// in XLA). The interpreter runs RunModuleReplicated, the jit one compiled
// executable on R x P threads (runtime/collectives/replicated_run.h).
absl::Status RunReplicated(const Module& module, const std::vector<Literal>& arguments,
                           const RunOptions& options, int64_t partitions) {
  const int64_t devices = options.replicas * partitions;
  const std::vector<std::vector<Literal>> per_device(devices, arguments);
  std::vector<double> times_ms;
  std::vector<Literal> results;
  EvaluatorOptions evaluator_options = InterpreterOptions(options);
  evaluator_options.replica_count = 1;  // RunModuleReplicated sets it.
  evaluator_options.partition_count = partitions;
  std::unique_ptr<runtime::Executable> executable;
  if (options.backend == "jit") {
    XJIT_ASSIGN_OR_RETURN(executable,
                          CompileModule(module, options, JitOptions(options), nullptr));
  }
  for (int64_t i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    if (executable != nullptr) {
      XJIT_ASSIGN_OR_RETURN(results, collectives::RunReplicated(*executable, per_device, nullptr,
                                                                partitions));
    } else {
      XJIT_ASSIGN_OR_RETURN(results, RunModuleReplicated(module, per_device, evaluator_options));
    }
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
  }
  auto label = [&](size_t d) {
    const int64_t r = static_cast<int64_t>(d) / partitions;
    const int64_t p = static_cast<int64_t>(d) % partitions;
    return partitions == 1 ? absl::StrCat("replica ", r)
                           : absl::StrCat("replica ", r, " partition ", p);
  };
  auto directory = [&](size_t d) {
    std::filesystem::path dir =
        std::filesystem::path(*options.out_dir) / absl::StrCat("replica_", d / partitions);
    if (partitions > 1) dir /= absl::StrCat("partition_", d % partitions);
    return dir.string();
  };
  if (options.out_dir.has_value()) {  // Before the text that names the files.
    for (size_t d = 0; d < results.size(); ++d) {
      XJIT_RETURN_IF_ERROR(WriteResults(results[d], directory(d)));
    }
  }
  {
    StdoutWriter out;
    for (size_t d = 0; d < results.size(); ++d) {
      std::optional<std::string> dir;
      if (options.out_dir.has_value()) dir = directory(d);
      out.Write(absl::StrCat(label(d), ":\n"));
      PrintResult(results[d], module.entry()->root()->shape(), dir, out.Sink());
      out.Write("\n");
    }
  }
  if (options.repeat > 1) {
    std::sort(times_ms.begin(), times_ms.end());
    std::fprintf(stderr, "run ms: %.3f (median of %lld, %s backend, %lld replicas x %lld partitions)\n",
                 times_ms[times_ms.size() / 2], static_cast<long long>(options.repeat),
                 options.backend.c_str(), static_cast<long long>(options.replicas),
                 static_cast<long long>(partitions));
  }
  return absl::OkStatus();
}

// `mpirun -np N xjit run M.hlo ... --replicas N` (docs/mpi.md): this
// process is rank R and runs replica R, its collectives over MPI
// (runtime/collectives/mpi_communicator.h). Output as the in-process mode:
// rank 0 prints every replica's results in order, each rank writes its own
// DIR/replica_R/. An error before the run (module, arguments, compile,
// output directory) is agreed so that every rank exits with it; an error
// during the run ends the job (MPI_Abort: the others may wait in a
// collective that will never complete).
absl::Status RunOverMpi(const RunOptions& options) {
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<collectives::MpiProcess> process,
                        collectives::MpiProcess::Init());
  const int64_t rank = process->rank();
  std::unique_ptr<Module> module;
  std::vector<Literal> arguments;
  std::unique_ptr<runtime::Executable> executable;
  const absl::Status setup = [&]() -> absl::Status {
    if (options.replicas != process->size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the MPI job has ", process->size(), " ranks but --replicas is ", options.replicas,
          " (each rank runs one replica: mpirun -np N xjit run ... --replicas N)"));
    }
    XJIT_ASSIGN_OR_RETURN(module, LoadModule(options.module_path, options.max_constant_bytes));
    if (module->num_partitions() > 1 || options.partitions > 1) {
      return absl::UnimplementedError(
          "runs under mpirun have one partition per replica (num_partitions > 1 runs in "
          "process: xjit run without mpirun)");
    }
    XJIT_ASSIGN_OR_RETURN(arguments, BuildArguments(*module, options));
    if (options.out_dir.has_value()) {
      std::error_code ec;
      if (std::filesystem::exists(*options.out_dir, ec) &&
          !std::filesystem::is_directory(*options.out_dir, ec)) {
        return absl::InvalidArgumentError(
            absl::StrCat("--out ", *options.out_dir, " exists and is not a directory"));
      }
    }
    if (options.backend == "jit") {
      XJIT_ASSIGN_OR_RETURN(executable,
                            CompileModule(*module, options, JitOptions(options), nullptr));
      XJIT_RETURN_IF_ERROR(collectives::CheckReplicaCount(*executable, options.replicas));
    }
    return absl::OkStatus();
  }();
  XJIT_RETURN_IF_ERROR(process->Agree(setup));
  collectives::MpiOptions mpi_options;
  mpi_options.timeout_seconds = options.collective_timeout;
  absl::StatusOr<std::unique_ptr<collectives::Communicator>> communicator =
      collectives::MakeMpiCommunicator(process->world_handle(), mpi_options);
  XJIT_RETURN_IF_ERROR(process->Agree(communicator.status()));
  collectives::CommunicatorExchange exchange(**communicator);
  runtime::RunContext context;
  context.replica_id = rank;
  context.communicator = communicator->get();
  EvaluatorOptions evaluator_options = InterpreterOptions(options);
  std::vector<const Literal*> pointers;
  for (const Literal& argument : arguments) pointers.push_back(&argument);
  std::vector<double> times_ms;
  std::optional<Literal> result;
  for (int64_t i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> r =
        executable != nullptr
            ? executable->Run(pointers, context)
            : RunModuleAsReplica(*module, arguments, rank, exchange, evaluator_options);
    if (r.ok()) {
      // The others learn that this run ended (one may still wait for it).
      if (absl::Status done = (*communicator)->ProgramDone(); !done.ok()) r = done;
    }
    if (!r.ok()) {
      std::fflush(stdout);
      std::fprintf(stderr, "xjit: error: replica %lld: %s\n", static_cast<long long>(rank),
                   std::string(r.status().message()).c_str());
      std::fflush(stderr);
      process->Abort(1);
    }
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    result = *std::move(r);
  }
  if (absl::Status left = (*communicator)->Leave(); !left.ok()) {
    std::fflush(stdout);
    std::fprintf(stderr, "xjit: error: replica %lld: %s\n", static_cast<long long>(rank),
                 std::string(left.message()).c_str());
    std::fflush(stderr);
    process->Abort(1);
  }
  std::optional<std::string> dir;
  if (options.out_dir.has_value()) {
    dir = (std::filesystem::path(*options.out_dir) / absl::StrCat("replica_", rank)).string();
  }
  const std::string text = absl::StrCat(
      "replica ", rank, ":\n", ResultText(*result, module->entry()->root()->shape(), dir), "\n");
  XJIT_RETURN_IF_ERROR(process->Agree(dir.has_value() ? WriteResults(*result, *dir)
                                                      : absl::OkStatus()));
  XJIT_ASSIGN_OR_RETURN(std::string all, process->GatherText(text));
  std::fwrite(all.data(), 1, all.size(), stdout);
  if (options.repeat > 1 && rank == 0) {
    std::sort(times_ms.begin(), times_ms.end());
    std::fprintf(stderr, "run ms: %.3f (median of %lld on rank 0, %s backend, %lld MPI ranks)\n",
                 times_ms[times_ms.size() / 2], static_cast<long long>(options.repeat),
                 options.backend.c_str(), static_cast<long long>(options.replicas));
  }
  return absl::OkStatus();
}

absl::Status Run(std::vector<std::string> args) {
  XJIT_ASSIGN_OR_RETURN(RunOptions options, ParseFlags("run", kRunFlags, std::move(args)));
  if (collectives::StartedByMpiLauncher() &&
      (collectives::MpiAvailable() || options.replicas > 1)) {
    return RunOverMpi(options);
  }
  if (options.collective_timeout > 0) {
    return absl::InvalidArgumentError("--collective-timeout applies to runs under mpirun");
  }
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(options.module_path, options.max_constant_bytes));
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> arguments, BuildArguments(*module, options));
  if (options.out_dir.has_value()) {
    // Fail before a possibly long run when the results cannot be written.
    std::error_code ec;
    if (std::filesystem::exists(*options.out_dir, ec) &&
        !std::filesystem::is_directory(*options.out_dir, ec)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--out ", *options.out_dir, " exists and is not a directory"));
    }
  }
  // Partitions: the flag's, or the module's; a module of one partition runs
  // as many as the flag says, and its compiled form learns the number.
  const int64_t partitions =
      options.partitions > 0 ? options.partitions : module->num_partitions();
  if (partitions < 1 || (module->num_partitions() > 1 && module->num_partitions() != partitions)) {
    return absl::InvalidArgumentError(absl::StrCat("--partitions ", partitions,
                                                   " but the module has num_partitions=",
                                                   module->num_partitions()));
  }
  if (options.replicas * partitions > kMaxReplicas) {
    return absl::InvalidArgumentError(absl::StrCat(
        options.replicas, " replicas x ", partitions, " partitions are too many devices (at most ",
        kMaxReplicas, ")"));
  }
  module->set_num_partitions(partitions);
  if (options.replicas > 1 || partitions > 1) {
    return RunReplicated(*module, arguments, options, partitions);
  }
  std::unique_ptr<runtime::Executable> executable;
  if (options.backend == "jit") {
    XJIT_ASSIGN_OR_RETURN(executable,
                          CompileModule(*module, options, JitOptions(options), nullptr));
  }
  std::vector<double> times_ms;
  std::optional<Literal> result;
  // One evaluator for all repetitions: rng state advances as it would over
  // repeated executions of one compiled program.
  Evaluator evaluator(InterpreterOptions(options));
  for (int64_t i = 0; i < options.repeat; ++i) {
    auto start = std::chrono::steady_clock::now();
    absl::StatusOr<Literal> r = executable != nullptr
                                    ? executable->Run(arguments)
                                    : evaluator.EvaluateModule(*module, arguments);
    if (!r.ok()) return r.status();
    times_ms.push_back(
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
            .count());
    result = *std::move(r);
  }
  // The files first: the text of a large result names its file, which
  // must exist by then.
  if (options.out_dir.has_value()) XJIT_RETURN_IF_ERROR(WriteResults(*result, *options.out_dir));
  // Given the declared shape, dynamic dimensions print as XLA does: f32[<=4](3).
  // Streamed: the text of a large result would not fit in memory beside it.
  {
    StdoutWriter out;
    PrintResult(*result, module->entry()->root()->shape(), options.out_dir, out.Sink());
    out.Write("\n");
  }
  if (options.repeat > 1) {
    std::sort(times_ms.begin(), times_ms.end());
    std::fprintf(stderr, "run ms: %.3f (median of %lld, %s backend)\n",
                 times_ms[times_ms.size() / 2], static_cast<long long>(options.repeat),
                 options.backend.c_str());
  }
  return absl::OkStatus();
}

void Print(absl::string_view text) { std::fwrite(text.data(), 1, text.size(), stdout); }

// `xjit compile`: interpreted steps, library calls, kernels, then the
// summary lines last (scripts read them; see shared/DESIGN.md).
absl::Status CompileCommand(std::vector<std::string> args) {
  XJIT_ASSIGN_OR_RETURN(RunOptions options,
                        ParseFlags("compile", kCompileFlags, std::move(args)));
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(options.module_path, options.max_constant_bytes));
  jit::CompileOptions compile_options = JitOptions(options);
  compile_options.collect_asm = options.asm_text;
  if (options.dump_dir.has_value()) compile_options.dump_dir = *options.dump_dir;
  jit::CompileReport report;
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> executable,
                        CompileModule(*module, options, compile_options, &report));
  Print(absl::StrCat("target: ", report.target, "\n"));
  Print(absl::StrCat("compile cache: ", report.cache_hit ? "hit" : "miss", "\n"));
  for (const std::string& step : report.interpreted_steps) {
    Print(absl::StrCat("interpreted: ", step, "\n"));
  }
  for (const jit::LibraryCallInfo& call : report.library_calls) {
    Print(absl::StrFormat("library call %s: %s, %d scratch bytes\n", call.name, call.routine,
                          call.scratch_bytes));
    if (options.asm_text && !call.plan.empty()) Print(absl::StrCat("  plan: ", call.plan, "\n"));
  }
  for (const jit::KernelInfo& kernel : report.kernels) {
    Print(absl::StrFormat("kernel %s: %d bytes of code, %d lane%s\n", kernel.name,
                          kernel.code_size, kernel.vector_lanes,
                          kernel.vector_lanes == 1 ? "" : "s"));
    if (options.asm_text) {
      std::string program = kernel.program;
      if (!program.empty() && program.back() != '\n') program.push_back('\n');
      std::string code = kernel.asm_text;
      if (!code.empty() && code.back() != '\n') code.push_back('\n');
      Print(absl::StrCat("--- program of ", kernel.name, "\n", program, "--- asm of ",
                         kernel.name, "\n", code, "---\n"));
    }
  }
  Print(report.Summary());
  return absl::OkStatus();
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// `xjit bench`: compile time (parse excluded) and the median time of one
// execution on raw buffers (no Literal conversions), after a warm-up.
absl::Status Bench(std::vector<std::string> args) {
  XJIT_ASSIGN_OR_RETURN(RunOptions options, ParseFlags("bench", kBenchFlags, std::move(args)));
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, LoadModule(options.module_path, options.max_constant_bytes));
  XJIT_ASSIGN_OR_RETURN(std::vector<Literal> arguments, BuildArguments(*module, options));
  std::vector<double> times_ms;
  auto elapsed_ms = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
        .count();
  };
  // Runs `run` untimed until --warmup-ms have passed (at least once), then
  // timed, --iterations times and on until the timed runs add up to
  // --min-time-ms.
  auto time_runs = [&](const std::function<absl::Status()>& run) -> absl::Status {
    const auto warmup_start = std::chrono::steady_clock::now();
    do {
      XJIT_RETURN_IF_ERROR(run());
    } while (elapsed_ms(warmup_start) < static_cast<double>(options.warmup_ms));
    double timed_ms = 0;
    while (static_cast<int64_t>(times_ms.size()) < options.iterations ||
           timed_ms < static_cast<double>(options.min_time_ms)) {
      auto start = std::chrono::steady_clock::now();
      XJIT_RETURN_IF_ERROR(run());
      times_ms.push_back(elapsed_ms(start));
      timed_ms += times_ms.back();
    }
    return absl::OkStatus();
  };
  if (options.backend == "interpreter") {
    Evaluator evaluator(InterpreterOptions(options));
    XJIT_RETURN_IF_ERROR(time_runs([&]() -> absl::Status {
      return evaluator.EvaluateModule(*module, arguments).status();
    }));
    Print(absl::StrFormat("backend: interpreter\ncompile ms: 0\nrun ms: %.6f\n", Median(times_ms)));
    return absl::OkStatus();
  }
  jit::CompileReport report;
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Executable> executable,
                        CompileModule(*module, options, JitOptions(options), &report));
  // Every buffer at a 64-byte boundary, as the runtime's own buffers and
  // XLA's are (a large std::vector's data starts 16 bytes past a page).
  auto aligned = [](std::vector<uint8_t>* storage, size_t bytes) {
    storage->resize(bytes + 64);
    uint8_t* p = storage->data();
    return p + (64 - reinterpret_cast<uintptr_t>(p) % 64) % 64;
  };
  std::vector<std::vector<uint8_t>> buffers(arguments.size() + 1);
  std::vector<const void*> parameters;
  for (size_t a = 0; a < arguments.size(); ++a) {
    const std::vector<uint8_t> flat = runtime::FlattenLiteral(arguments[a]);
    uint8_t* data = aligned(&buffers[a], flat.size());
    if (!flat.empty()) std::memcpy(data, flat.data(), flat.size());
    parameters.push_back(data);
  }
  uint8_t* result = aligned(&buffers.back(), static_cast<size_t>(std::max<int64_t>(
                                                   1, ByteSize(executable->result_shape()))));
  XJIT_RETURN_IF_ERROR(time_runs([&] { return executable->Execute(parameters, result); }));
  Print(absl::StrFormat(
      "backend: jit (%s)\nkernels: %d\ninterpreted steps: %d\niterations: %d\n"
      "compile ms: %.3f\nrun ms: %.6f\n",
      report.target, report.kernels.size(), report.interpreted_steps.size(), times_ms.size(),
      report.compile_ms, Median(times_ms)));
  return absl::OkStatus();
}

// Ctrl-C: the first asks the running program to stop (while loops check the
// flag on both backends, runtime/host/interrupt.h), and exits with 130 if
// it has not stopped within two seconds (a long kernel, library call or
// straight-line evaluation); a second one kills at once (SA_RESETHAND).
constexpr char kInterruptedMessage[] = "xjit: interrupted\n";

void OnInterruptTimeout(int) {
  [[maybe_unused]] ssize_t ignored =
      write(STDERR_FILENO, kInterruptedMessage, sizeof(kInterruptedMessage) - 1);
  _exit(130);
}

void OnInterrupt(int) {
  RequestInterrupt();
  alarm(2);
}

void InstallInterruptHandler() {
  struct sigaction timeout = {};
  timeout.sa_handler = OnInterruptTimeout;
  sigaction(SIGALRM, &timeout, nullptr);
  struct sigaction interrupt = {};
  interrupt.sa_handler = OnInterrupt;
  interrupt.sa_flags = SA_RESETHAND;
  sigaction(SIGINT, &interrupt, nullptr);
}

int Main(int argc, char** argv) {
  InstallInterruptHandler();
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty()) {
    std::fputs(kUsage, stderr);
    return 1;
  }
  std::string command = args[0];
  args.erase(args.begin());
  if (command == "help" || command == "--help" || command == "-h" ||
      std::find(args.begin(), args.end(), "--help") != args.end()) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  absl::Status status;
  if (command == "check") {
    status = Check(args);
  } else if (command == "run") {
    status = Run(std::move(args));
  } else if (command == "compile") {
    status = CompileCommand(std::move(args));
  } else if (command == "bench") {
    status = Bench(std::move(args));
  } else {
    status = absl::InvalidArgumentError(absl::StrCat(
        "unknown command '", command, "' (expected check, run, compile, bench or help)"));
  }
  std::fflush(stdout);
  if (status.ok()) return 0;
  if (status.code() == absl::StatusCode::kCancelled && InterruptRequested()) {
    std::fputs(kInterruptedMessage, stderr);
    return 130;
  }
  if (status.GetPayload(kPreformatted).has_value()) {
    std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
  } else {
    std::fprintf(stderr, "xjit: error: %s\n", std::string(status.message()).c_str());
  }
  return 1;
}

// OpenBLAS starts its threads when it is loaded, before main, one per core;
// under an address-space limit without room for their buffers (`prlimit
// --as=150000000 xjit run ... --replicas 4`) a thread's buffer is refused,
// the thread retries forever and the process hangs at its exit (issue 30).
// So xjit runs itself again with as many as fit, through the variable
// OpenBLAS reads when it is loaded; a value the user set is kept.
void RunAgainWithTheBlasThreadsThatFit(char** argv) {
  if (std::getenv("OPENBLAS_NUM_THREADS") != nullptr) return;
  const int fit = std::max(1, runtime::blas::BlasThreadsTheAddressSpaceAllows());
  if (runtime::blas::BlasThreads() <= fit) return;
  if (setenv("OPENBLAS_NUM_THREADS", std::to_string(fit).c_str(), 1) != 0) return;
  execv("/proc/self/exe", argv);  // Returns only when it fails: carry on as we are.
}

}  // namespace
}  // namespace xjit

int main(int argc, char** argv) {
  xjit::RunAgainWithTheBlasThreadsThatFit(argv);
  try {
    return xjit::Main(argc, argv);
  } catch (const std::bad_alloc&) {
    std::fputs("xjit: error: out of memory\n", stderr);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "xjit: internal error: %s\n", e.what());
  }
  return 1;
}
