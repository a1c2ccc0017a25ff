// The C API's compilation and execution (xjit.h, sections "Custom calls" and
// "Compilation and execution"): the custom-call registry, compile options,
// xjit_compile, executables and xjit_execute.
//
// Execution goes through a Runner (interpreter or JIT). The JIT is wired in at
// exactly one place, CompileJitRunner(): everything else (argument checks,
// result flattening, threads) is shared by both backends.
#include <cstring>
#include <memory>
#include <new>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "capi/c_api_internal.h"
#include "capi/xjit.h"
#include "interpreter/evaluator.h"
#include "ir/layout_util.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/shape.h"
#include "ir/status_macros.h"
#include "runtime/collectives/communicator_exchange.h"
#include "runtime/collectives/mpi_communicator.h"
#include "runtime/host/custom_call_registry.h"
#include "runtime/host/ffi_registry.h"

#if XJIT_CAPI_HAVE_JIT
#include "jit/compile.h"
#include "jit/compile_options.h"
#include "runtime/collectives/replicated_run.h"
#include "runtime/executable.h"
#endif

namespace {

using xjit::Computation;
using xjit::Literal;
using xjit::Module;
using xjit::Shape;
using xjit::capi::Guard;
using xjit::capi::InvalidArgument;
using xjit::capi::Runner;

// Leaves of a shape, depth first (a non-tuple shape is its own leaf).
// The C API's replicated runs are of one partition each: a module of
// several (SPMD) runs through `xjit run` or collectives::RunReplicated.
absl::Status CheckOnePartition(const xjit::Module& module) {
  if (module.num_partitions() <= 1) return absl::OkStatus();
  return absl::UnimplementedError(absl::StrCat(
      "the module has num_partitions=", module.num_partitions(),
      "; the C API runs replicas of one partition (xjit run runs every partition)"));
}

void CollectLeaves(const Shape& shape, std::vector<Shape>* leaves) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) CollectLeaves(element, leaves);
  } else {
    leaves->push_back(shape);
  }
}

// ---------------------------------------------------------------------------
// Literals <-> flattened bytes (the interpreter backend).

absl::Status FillLiteral(Literal* literal, const uint8_t* data, int64_t* offset) {
  if (literal->shape().IsTuple()) {
    for (Literal& element : *literal->mutable_elements()) {
      absl::Status status = FillLiteral(&element, data, offset);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  const int64_t size = xjit::ByteSize(literal->shape());
  if (size > 0) {
    if (static_cast<int64_t>(literal->data().size()) != size) {
      return absl::InternalError("literal size differs from the shape's byte size");
    }
    std::memcpy(literal->data().data(), data + *offset, size);
  }
  *offset += size;
  return absl::OkStatus();
}

absl::Status FlattenLiteral(const Literal& literal, uint8_t* out, int64_t* offset) {
  if (literal.shape().IsTuple()) {
    for (const Literal& element : literal.elements()) {
      absl::Status status = FlattenLiteral(element, out, offset);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  const int64_t size = xjit::ByteSize(literal.shape());
  if (size > 0) {
    if (static_cast<int64_t>(literal.data().size()) != size) {
      return absl::InternalError("result literal size differs from the shape's byte size");
    }
    std::memcpy(out + *offset, literal.data().data(), size);
  }
  *offset += size;
  return absl::OkStatus();
}

// The interpreter: the reference evaluator, one fresh Evaluator per run (it is
// not thread-safe, and a fresh one makes every run see the same rng stream).
class InterpreterRunner : public Runner {
 public:
  InterpreterRunner(std::unique_ptr<Module> module, xjit::EvaluatorOptions options)
      : module_(std::move(module)), options_(options) {}

  absl::Status Run(absl::Span<const void* const> parameters, void* result) const override {
    const Computation& entry = *module_->entry();
    std::vector<Literal> arguments;
    arguments.reserve(parameters.size());
    for (size_t i = 0; i < parameters.size(); ++i) {
      Literal argument(entry.parameter(i)->shape());
      int64_t offset = 0;
      absl::Status status =
          FillLiteral(&argument, static_cast<const uint8_t*>(parameters[i]), &offset);
      if (!status.ok()) return status;
      arguments.push_back(std::move(argument));
    }
    xjit::Evaluator evaluator(options_);
    absl::StatusOr<Literal> value = evaluator.EvaluateModule(*module_, arguments);
    if (!value.ok()) return value.status();
    const Shape& root_shape = entry.root()->shape();
    Literal relaid = value->shape() == root_shape ? std::move(*value) : value->Relayout(root_shape);
    int64_t offset = 0;
    return FlattenLiteral(relaid, static_cast<uint8_t*>(result), &offset);
  }

  absl::Status RunAsReplica(xjit::collectives::Communicator& communicator,
                            absl::Span<const void* const> parameters,
                            void* result) const override {
    XJIT_RETURN_IF_ERROR(CheckOnePartition(*module_));
    const Computation& entry = *module_->entry();
    std::vector<Literal> arguments;
    for (size_t i = 0; i < parameters.size(); ++i) {
      Literal argument(entry.parameter(i)->shape());
      int64_t offset = 0;
      absl::Status status =
          FillLiteral(&argument, static_cast<const uint8_t*>(parameters[i]), &offset);
      if (!status.ok()) return status;
      arguments.push_back(std::move(argument));
    }
    xjit::collectives::CommunicatorExchange exchange(communicator);
    xjit::EvaluatorOptions options = options_;
    absl::StatusOr<Literal> value = xjit::RunModuleAsReplica(
        *module_, arguments, communicator.replica_id(), exchange, options);
    if (!value.ok()) return value.status();
    XJIT_RETURN_IF_ERROR(communicator.ProgramDone());
    const Shape& root_shape = entry.root()->shape();
    Literal relaid = value->shape() == root_shape ? std::move(*value) : value->Relayout(root_shape);
    int64_t offset = 0;
    return FlattenLiteral(relaid, static_cast<uint8_t*>(result), &offset);
  }

  absl::Status RunReplicated(absl::Span<const std::vector<const void*>> parameters,
                             absl::Span<void* const> results) const override {
    XJIT_RETURN_IF_ERROR(CheckOnePartition(*module_));
    const Computation& entry = *module_->entry();
    std::vector<std::vector<Literal>> arguments(parameters.size());
    for (size_t r = 0; r < parameters.size(); ++r) {
      for (size_t i = 0; i < parameters[r].size(); ++i) {
        Literal argument(entry.parameter(i)->shape());
        int64_t offset = 0;
        absl::Status status =
            FillLiteral(&argument, static_cast<const uint8_t*>(parameters[r][i]), &offset);
        if (!status.ok()) return status;
        arguments[r].push_back(std::move(argument));
      }
    }
    xjit::EvaluatorOptions options = options_;
    options.replica_count = 1;  // RunModuleReplicated sets it.
    absl::StatusOr<std::vector<Literal>> values =
        xjit::RunModuleReplicated(*module_, arguments, options);
    if (!values.ok()) return values.status();
    const Shape& root_shape = entry.root()->shape();
    for (size_t r = 0; r < values->size(); ++r) {
      Literal& value = (*values)[r];
      Literal relaid = value.shape() == root_shape ? std::move(value) : value.Relayout(root_shape);
      int64_t offset = 0;
      absl::Status status = FlattenLiteral(relaid, static_cast<uint8_t*>(results[r]), &offset);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }

 private:
  std::unique_ptr<Module> module_;
  xjit::EvaluatorOptions options_;
};

std::unique_ptr<xjit_executable> NewExecutable(xjit_backend backend,
                                               std::vector<Shape> parameter_shapes,
                                               Shape result_shape, std::unique_ptr<Runner> runner) {
  auto exe = std::make_unique<xjit_executable>();
  exe->backend = backend;
  exe->parameter_shapes = std::move(parameter_shapes);
  exe->result_shape = std::move(result_shape);
  CollectLeaves(exe->result_shape, &exe->result_leaves);
  int64_t offset = 0;
  for (const Shape& leaf : exe->result_leaves) {
    exe->leaf_offsets.push_back(offset);
    offset += xjit::ByteSize(leaf);
  }
  exe->result_bytes = offset;
  exe->runner = std::move(runner);
  return exe;
}

absl::StatusOr<std::unique_ptr<xjit_executable>> CompileInterpreter(
    const Module& module, const xjit_compile_options& options) {
  std::unique_ptr<Module> copy = module.Clone();
  std::vector<Shape> parameter_shapes;
  for (const xjit::Instruction* parameter : copy->entry()->parameters()) {
    parameter_shapes.push_back(parameter->shape());
  }
  Shape result_shape = copy->entry()->root()->shape();
  xjit::EvaluatorOptions evaluator_options;
  evaluator_options.replica_count = copy->replica_count();
  evaluator_options.max_while_iterations = options.max_while_iterations;
  auto runner = std::make_unique<InterpreterRunner>(std::move(copy), evaluator_options);
  return NewExecutable(XJIT_BACKEND_INTERPRETER, std::move(parameter_shapes),
                       std::move(result_shape), std::move(runner));
}

// ---------------------------------------------------------------------------
// The JIT backend: the one place the compile driver is wired in.

#if XJIT_CAPI_HAVE_JIT
class JitRunner : public Runner {
 public:
  explicit JitRunner(std::unique_ptr<xjit::runtime::Executable> executable)
      : executable_(std::move(executable)) {}
  absl::Status Run(absl::Span<const void* const> parameters, void* result) const override {
    return executable_->Execute(parameters, result);
  }

  absl::Status RunReplicated(absl::Span<const std::vector<const void*>> parameters,
                             absl::Span<void* const> results) const override {
    const int64_t count = static_cast<int64_t>(parameters.size());
    XJIT_RETURN_IF_ERROR(CheckOnePartition(executable_->module()));
    absl::Status status = xjit::collectives::CheckReplicaCount(*executable_, count);
    if (!status.ok()) return status;
    return xjit::collectives::RunReplicas(
        count, nullptr, [&](int64_t r, const xjit::runtime::RunContext& context) {
          return executable_->Execute(parameters[r], results[r], context);
        });
  }

  absl::Status RunAsReplica(xjit::collectives::Communicator& communicator,
                            absl::Span<const void* const> parameters,
                            void* result) const override {
    XJIT_RETURN_IF_ERROR(CheckOnePartition(executable_->module()));
    absl::Status status =
        xjit::collectives::CheckReplicaCount(*executable_, communicator.replica_count());
    if (!status.ok()) return status;
    xjit::runtime::RunContext context;
    context.replica_id = communicator.replica_id();
    context.communicator = &communicator;
    XJIT_RETURN_IF_ERROR(executable_->Execute(parameters, result, context));
    return communicator.ProgramDone();
  }

 private:
  std::unique_ptr<xjit::runtime::Executable> executable_;
};
#endif

#if XJIT_CAPI_HAVE_JIT
// xjit_executable_describe's text for a JIT compile: a line per kernel,
// library call and interpreted step, then `xjit compile`'s summary lines.
std::string DescribeReport(const xjit::jit::CompileReport& report) {
  std::string text = absl::StrCat("backend: jit (", report.target, ")\n");
  for (const xjit::jit::KernelInfo& kernel : report.kernels) {
    absl::StrAppend(&text, "kernel ", kernel.name, ": ", kernel.vector_lanes, " lanes, ",
                    kernel.code_size, " bytes\n");
  }
  for (const xjit::jit::LibraryCallInfo& call : report.library_calls) {
    absl::StrAppend(&text, "library call ", call.name, ": ", call.routine, "\n");
  }
  for (const std::string& line : report.interpreted_steps) {
    absl::StrAppend(&text, "interpreted step ", line, "\n");
  }
  absl::StrAppend(&text, report.Summary());
  if (!text.empty() && text.back() != '\n') text.push_back('\n');
  return text;
}
#endif

absl::StatusOr<std::unique_ptr<xjit_executable>> CompileJitRunner(
    const Module& module, const xjit_compile_options& options) {
#if XJIT_CAPI_HAVE_JIT
  xjit::jit::CompileOptions jit_options;
  std::optional<xjit::jit::Isa> isa = xjit::jit::ParseIsa(options.isa);
  if (!isa.has_value()) {
    return absl::InvalidArgumentError(absl::StrCat("unknown ISA \"", options.isa, "\""));
  }
  jit_options.isa = *isa;
  jit_options.threads = options.threads;
  jit_options.perf_map = options.perf_map;
  jit_options.jitdump = options.jitdump;
  jit_options.run_passes = options.passes;
  jit_options.dump_dir = options.dump_dir;
  jit_options.max_while_iterations = options.max_while_iterations;
  xjit::jit::CompileReport report;
  absl::StatusOr<std::unique_ptr<xjit::runtime::Executable>> compiled =
      xjit::jit::Compile(module, jit_options, &report);
  if (!compiled.ok()) return compiled.status();
  std::vector<Shape> parameter_shapes = (*compiled)->parameter_shapes();
  Shape result_shape = (*compiled)->result_shape();
  std::unique_ptr<xjit_executable> executable =
      NewExecutable(XJIT_BACKEND_JIT, std::move(parameter_shapes), std::move(result_shape),
                    std::make_unique<JitRunner>(std::move(*compiled)));
  executable->description = DescribeReport(report);
  return executable;
#else
  (void)module;
  (void)options;
  return absl::UnimplementedError(
      "the JIT backend is not available in this build yet; use XJIT_BACKEND_INTERPRETER");
#endif
}
}  // namespace

// ===========================================================================
// Custom calls

namespace {

// Whether [result, result + size) shares a byte with an argument buffer.
bool OverlapsAnArgument(const void* result, size_t size, const void* const* args,
                        const size_t* arg_sizes, int nargs) {
  if (result == nullptr || size == 0) return false;
  const auto begin = reinterpret_cast<uintptr_t>(result);
  for (int i = 0; i < nargs; ++i) {
    if (args[i] == nullptr || arg_sizes[i] == 0) continue;
    const auto arg = reinterpret_cast<uintptr_t>(args[i]);
    if (begin < arg + arg_sizes[i] && arg < begin + size) return true;
  }
  return false;
}

// Checks `count` buffers of one kind ("argument" or "result") against the
// shapes they must hold: their number, their sizes in bytes, and no null
// pointer where there are bytes to read or write.
template <typename Pointer>
absl::Status CheckBufferList(absl::Span<const Shape> shapes, const Pointer* buffers,
                             const size_t* sizes, int count, absl::string_view kind,
                             absl::string_view label) {
  if (count < 0 || static_cast<size_t>(count) != shapes.size()) {
    return absl::InvalidArgumentError(absl::StrCat(label, ": expected ", shapes.size(), " ", kind,
                                                   kind == "result" ? " buffers" : "s", ", got ",
                                                   count));
  }
  if (count > 0 && (buffers == nullptr || sizes == nullptr)) {
    return absl::InvalidArgumentError(
        absl::StrCat(label, ": null ", kind, " or ", kind, "-size array"));
  }
  for (int i = 0; i < count; ++i) {
    const Shape& shape = shapes[i];
    const int64_t expected = xjit::ByteSize(shape);
    if (static_cast<int64_t>(sizes[i]) != expected) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": ", kind, " ", i, " (",
                                                     shape.ToString(), ") needs ", expected,
                                                     " bytes, got ", sizes[i]));
    }
    if (expected > 0 && buffers[i] == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(label, ": ", kind, " ", i, " is null"));
    }
  }
  return absl::OkStatus();
}

// Checks the buffers of one run against the executable's parameters and
// result leaves (xjit_execute's contract).
absl::Status CheckBuffers(const xjit_executable& exe, const void* const* args,
                          const size_t* arg_sizes, int nargs, void* const* results,
                          const size_t* result_sizes, int nresults, absl::string_view label) {
  XJIT_RETURN_IF_ERROR(
      CheckBufferList(absl::MakeConstSpan(exe.parameter_shapes), args, arg_sizes, nargs,
                      "argument", label));
  return CheckBufferList(absl::MakeConstSpan(exe.result_leaves), results, result_sizes,
                         nresults, "result", label);
}

}  // namespace

extern "C" {

xjit_status* xjit_register_custom_call(const char* name, xjit_custom_call_fn fn) {
  if (name == nullptr || *name == '\0') return InvalidArgument("custom call: empty name");
  if (fn == nullptr) return InvalidArgument("custom call: null function");
  return Guard([&]() -> absl::Status {
    xjit::CustomCallRegistry::Global().Register(name, fn);
    return absl::OkStatus();
  });
}

xjit_status* xjit_unregister_custom_call(const char* name) {
  if (name == nullptr) return InvalidArgument("custom call: null name");
  return Guard([&]() -> absl::Status {
    xjit::CustomCallRegistry& registry = xjit::CustomCallRegistry::Global();
    if (registry.Find(name) == nullptr) {
      return absl::NotFoundError(absl::StrCat("custom call \"", name, "\" is not registered"));
    }
    registry.Unregister(name);
    return absl::OkStatus();
  });
}

// ===========================================================================
// Compilation and execution

xjit_compile_options* xjit_compile_options_create(void) {
  return new (std::nothrow) xjit_compile_options();
}

void xjit_compile_options_free(xjit_compile_options* options) { delete options; }

xjit_status* xjit_compile_options_set_backend(xjit_compile_options* options, xjit_backend backend) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  if (backend != XJIT_BACKEND_JIT && backend != XJIT_BACKEND_INTERPRETER) {
    return InvalidArgument(
        absl::StrCat("compile options: unknown backend ", static_cast<int>(backend)));
  }
  options->backend = backend;
  return nullptr;
}

xjit_status* xjit_compile_options_set_isa(xjit_compile_options* options, const char* isa) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  if (isa == nullptr) return InvalidArgument("compile options: null ISA");
  const std::string name(isa);
  if (!xjit::jit::ParseIsa(name).has_value()) {
    return InvalidArgument(absl::StrCat("compile options: unknown ISA \"", name,
                                        "\" (expected auto, sse4, avx2, avx512 or neon)"));
  }
  options->isa = name;
  return nullptr;
}

xjit_status* xjit_compile_options_set_threads(xjit_compile_options* options, int threads) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  if (threads < 1) {
    return InvalidArgument(absl::StrCat("compile options: threads must be >= 1, got ", threads));
  }
  options->threads = threads;
  return nullptr;
}

xjit_status* xjit_compile_options_set_passes(xjit_compile_options* options, int enabled) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  options->passes = enabled != 0;
  return nullptr;
}

xjit_status* xjit_compile_options_set_jitdump(xjit_compile_options* options, int enabled) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  options->jitdump = enabled != 0;
  return nullptr;
}

xjit_status* xjit_compile_options_set_perf_map(xjit_compile_options* options, int enabled) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  options->perf_map = enabled != 0;
  return nullptr;
}

xjit_status* xjit_compile_options_set_dump_dir(xjit_compile_options* options, const char* dir) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  return Guard([&]() -> absl::Status {
    options->dump_dir = dir == nullptr ? "" : dir;
    return absl::OkStatus();
  });
}

xjit_status* xjit_compile_options_set_max_while_iterations(xjit_compile_options* options,
                                                           int64_t max_iterations) {
  if (options == nullptr) return InvalidArgument("compile options: null options");
  options->max_while_iterations = max_iterations;
  return nullptr;
}

xjit_status* xjit_compile(const xjit_module* module, const xjit_compile_options* options,
                          xjit_executable** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("compile: null output pointer");
    *out = nullptr;
    if (module == nullptr || module->module == nullptr) {
      return absl::InvalidArgumentError("compile: null module");
    }
    const xjit_compile_options defaults;
    const xjit_compile_options& opts = options == nullptr ? defaults : *options;
    absl::StatusOr<std::unique_ptr<xjit_executable>> exe =
        opts.backend == XJIT_BACKEND_INTERPRETER ? CompileInterpreter(*module->module, opts)
                                                 : CompileJitRunner(*module->module, opts);
    if (!exe.ok()) return exe.status();
    *out = exe->release();
    return absl::OkStatus();
  });
}

void xjit_executable_free(xjit_executable* executable) { delete executable; }

xjit_status* xjit_executable_describe(const xjit_executable* executable, char** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("describe: null output pointer");
    *out = nullptr;
    if (executable == nullptr) return absl::InvalidArgumentError("describe: null executable");
    *out = xjit::capi::CopyString(
        executable->description.empty()
            ? std::string("backend: interpreter (every instruction evaluated)\n")
            : executable->description);
    if (*out == nullptr) return absl::ResourceExhaustedError("out of memory");
    return absl::OkStatus();
  });
}

int xjit_executable_backend(const xjit_executable* executable) {
  return executable == nullptr ? -1 : static_cast<int>(executable->backend);
}

int xjit_executable_num_parameters(const xjit_executable* executable) {
  return executable == nullptr ? -1 : static_cast<int>(executable->parameter_shapes.size());
}

xjit_status* xjit_executable_parameter_shape(const xjit_executable* executable, int i,
                                             xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("parameter shape: null output pointer");
    *out = nullptr;
    if (executable == nullptr)
      return absl::InvalidArgumentError("parameter shape: null executable");
    if (i < 0 || static_cast<size_t>(i) >= executable->parameter_shapes.size()) {
      return absl::OutOfRangeError(absl::StrCat("parameter ", i, " of an executable with ",
                                                executable->parameter_shapes.size(),
                                                " parameters"));
    }
    *out = new xjit_shape{executable->parameter_shapes[i]};
    return absl::OkStatus();
  });
}

int xjit_executable_num_results(const xjit_executable* executable) {
  return executable == nullptr ? -1 : static_cast<int>(executable->result_leaves.size());
}

xjit_status* xjit_executable_result_shape(const xjit_executable* executable, int i,
                                          xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("result shape: null output pointer");
    *out = nullptr;
    if (executable == nullptr) return absl::InvalidArgumentError("result shape: null executable");
    if (i < 0 || static_cast<size_t>(i) >= executable->result_leaves.size()) {
      return absl::OutOfRangeError(absl::StrCat("result ", i, " of an executable with ",
                                                executable->result_leaves.size(), " results"));
    }
    *out = new xjit_shape{executable->result_leaves[i]};
    return absl::OkStatus();
  });
}

xjit_status* xjit_executable_full_result_shape(const xjit_executable* executable,
                                               xjit_shape** out) {
  return Guard([&]() -> absl::Status {
    if (out == nullptr) return absl::InvalidArgumentError("result shape: null output pointer");
    *out = nullptr;
    if (executable == nullptr) return absl::InvalidArgumentError("result shape: null executable");
    *out = new xjit_shape{executable->result_shape};
    return absl::OkStatus();
  });
}

xjit_status* xjit_execute(const xjit_executable* executable, const void* const* args,
                          const size_t* arg_sizes, int nargs, void* const* results,
                          const size_t* result_sizes, int nresults) {
  return Guard([&]() -> absl::Status {
    if (executable == nullptr) return absl::InvalidArgumentError("execute: null executable");
    const xjit_executable& exe = *executable;
    absl::Status valid =
        CheckBuffers(exe, args, arg_sizes, nargs, results, result_sizes, nresults, "execute");
    if (!valid.ok()) return valid;
    const size_t num_parameters = exe.parameter_shapes.size();
    const size_t num_results = exe.result_leaves.size();
    // Static storage for zero-byte arguments, so a runner never sees null.
    static const uint8_t kEmpty[1] = {0};
    std::vector<const void*> parameters(num_parameters);
    for (size_t i = 0; i < num_parameters; ++i) {
      parameters[i] = args[i] != nullptr ? args[i] : kEmpty;
    }
    // A single non-tuple result is written in place unless its buffer
    // overlaps an argument's (a kernel may read an argument after writing
    // the result: a result over an argument would give wrong values); a
    // tuple, or a result over an argument, is written to a scratch buffer
    // and copied out after the run, when no argument is read any more.
    if (!exe.result_shape.IsTuple() &&
        !OverlapsAnArgument(results[0], result_sizes[0], args, arg_sizes, nargs)) {
      uint8_t scratch[1];
      void* out = results[0] != nullptr ? results[0] : scratch;
      return exe.runner->Run(parameters, out);
    }
    std::vector<uint8_t> flat(exe.result_bytes > 0 ? exe.result_bytes : 1);
    absl::Status status = exe.runner->Run(parameters, flat.data());
    if (!status.ok()) return status;
    for (size_t i = 0; i < num_results; ++i) {
      const size_t size = result_sizes[i];
      if (size > 0) std::memcpy(results[i], flat.data() + exe.leaf_offsets[i], size);
    }
    return absl::OkStatus();
  });
}

}  // extern "C"

// ===========================================================================
// Replicated execution and typed custom calls

extern "C" {

xjit_status* xjit_execute_replicated(const xjit_executable* executable, int num_replicas,
                                     const void* const* const* args, const size_t* arg_sizes,
                                     int nargs, void* const* const* results,
                                     const size_t* result_sizes, int nresults) {
  return Guard([&]() -> absl::Status {
    if (executable == nullptr) {
      return absl::InvalidArgumentError("execute replicated: null executable");
    }
    if (num_replicas < 1) {
      return absl::InvalidArgumentError(
          absl::StrCat("execute replicated: ", num_replicas, " replicas"));
    }
    if ((nargs > 0 && args == nullptr) || (nresults > 0 && results == nullptr)) {
      return absl::InvalidArgumentError("execute replicated: null argument or result table");
    }
    const xjit_executable& exe = *executable;
    static const uint8_t kEmpty[1] = {0};
    std::vector<std::vector<const void*>> parameters(num_replicas);
    std::vector<std::vector<uint8_t>> flat(num_replicas);
    std::vector<void*> flat_pointers(num_replicas);
    for (int r = 0; r < num_replicas; ++r) {
      const std::string label = absl::StrCat("execute replicated: replica ", r);
      const void* const* replica_args = nargs > 0 ? args[r] : nullptr;
      void* const* replica_results = nresults > 0 ? results[r] : nullptr;
      absl::Status valid = CheckBuffers(exe, replica_args, arg_sizes, nargs, replica_results,
                                        result_sizes, nresults, label);
      if (!valid.ok()) return valid;
      for (int i = 0; i < nargs; ++i) {
        parameters[r].push_back(replica_args[i] != nullptr ? replica_args[i] : kEmpty);
      }
      // Results go through a flat buffer per replica, copied out after the
      // run (so they may overlap the arguments, as for xjit_execute).
      flat[r].resize(exe.result_bytes > 0 ? exe.result_bytes : 1);
      flat_pointers[r] = flat[r].data();
    }
    absl::Status status = exe.runner->RunReplicated(parameters, flat_pointers);
    if (!status.ok()) return status;
    for (int r = 0; r < num_replicas; ++r) {
      for (int i = 0; i < nresults; ++i) {
        if (result_sizes[i] > 0) {
          std::memcpy(results[r][i], flat[r].data() + exe.leaf_offsets[i], result_sizes[i]);
        }
      }
    }
    return absl::OkStatus();
  });
}

xjit_status* xjit_register_ffi_custom_call(const char* name, xjit_ffi_handler fn,
                                           void* user_data) {
  return xjit_register_ffi_custom_call_with_release(name, fn, user_data, nullptr);
}

xjit_status* xjit_register_ffi_custom_call_with_release(const char* name, xjit_ffi_handler fn,
                                                        void* user_data,
                                                        void (*release)(void* user_data)) {
  if (name == nullptr || *name == '\0') return InvalidArgument("custom call: empty name");
  if (fn == nullptr) return InvalidArgument("custom call: null function");
  return Guard([&]() -> absl::Status {
    // The handler is shared by the registry and every executable compiled
    // while it was registered (FfiRegistry::Find); `release` runs when the
    // last of them lets go of it.
    std::shared_ptr<void> owned(user_data, [release](void* data) {
      if (release != nullptr) release(data);
    });
    xjit::FfiRegistry::Global().Register(name, [fn, owned](const xjit::FfiCall& call) {
      void* user_data = owned.get();
      // The C view of the call: buffers whose dims / layout point into the
      // shapes the runtime holds for the duration of the call.
      std::vector<xjit_ffi_buffer> operands, results;
      auto convert = [](const xjit::FfiBuffer& buffer) {
        xjit_ffi_buffer out;
        out.type = static_cast<xjit_element_type>(buffer.type);
        out.rank = static_cast<int>(buffer.dimensions.size());
        out.dims = buffer.dimensions.data();
        out.minor_to_major = buffer.minor_to_major.empty() ? nullptr : buffer.minor_to_major.data();
        out.data = buffer.data;
        out.byte_size = buffer.byte_size;
        return out;
      };
      for (const xjit::FfiBuffer& b : call.operands) operands.push_back(convert(b));
      for (const xjit::FfiBuffer& b : call.results) results.push_back(convert(b));
      const std::string target(call.target);
      const std::string config(call.backend_config);
      xjit_ffi_call_frame frame;
      frame.target = target.c_str();
      frame.backend_config = config.c_str();
      frame.operands = operands.data();
      frame.num_operands = static_cast<int>(operands.size());
      frame.results = results.data();
      frame.num_results = static_cast<int>(results.size());
      xjit_status* status = fn(user_data, &frame);
      if (status == nullptr) return absl::OkStatus();
      absl::Status error(status->code == absl::StatusCode::kOk ? absl::StatusCode::kUnknown
                                                               : status->code,
                         status->message);
      xjit_status_free(status);
      return error;
    });
    return absl::OkStatus();
  });
}

xjit_status* xjit_unregister_ffi_custom_call(const char* name) {
  if (name == nullptr) return InvalidArgument("custom call: null name");
  return Guard([&]() -> absl::Status {
    if (!xjit::FfiRegistry::Global().Unregister(name)) {
      return absl::NotFoundError(absl::StrCat("custom call \"", name, "\" is not registered"));
    }
    return absl::OkStatus();
  });
}

xjit_status* xjit_status_create(xjit_code code, const char* message) {
  if (code == XJIT_OK) return nullptr;
  try {
    return new xjit_status{static_cast<absl::StatusCode>(code),
                           message == nullptr ? std::string() : std::string(message)};
  } catch (...) {
    return nullptr;
  }
}

}  // extern "C"

// ===========================================================================
// Replicas as MPI processes (runtime/collectives/mpi_communicator.h)

struct xjit_mpi_communicator {
  std::unique_ptr<xjit::collectives::Communicator> communicator;
};

extern "C" {

xjit_status* xjit_mpi_communicator_create(int64_t fortran_comm, double timeout_seconds,
                                          xjit_mpi_communicator** out) {
  if (out == nullptr) return InvalidArgument("mpi communicator: null output");
  *out = nullptr;
  return Guard([&]() -> absl::Status {
    xjit::collectives::MpiOptions options;
    options.timeout_seconds = timeout_seconds;
    absl::StatusOr<std::unique_ptr<xjit::collectives::Communicator>> communicator =
        xjit::collectives::MakeMpiCommunicator(fortran_comm, options);
    if (!communicator.ok()) return communicator.status();
    *out = new xjit_mpi_communicator{std::move(*communicator)};
    return absl::OkStatus();
  });
}

void xjit_mpi_communicator_destroy(xjit_mpi_communicator* communicator) { delete communicator; }

int xjit_mpi_communicator_rank(const xjit_mpi_communicator* communicator) {
  return communicator == nullptr ? -1 : static_cast<int>(communicator->communicator->replica_id());
}

int xjit_mpi_communicator_size(const xjit_mpi_communicator* communicator) {
  return communicator == nullptr ? -1
                                 : static_cast<int>(communicator->communicator->replica_count());
}

xjit_status* xjit_execute_mpi(const xjit_executable* executable,
                              xjit_mpi_communicator* communicator, const void* const* args,
                              const size_t* arg_sizes, int nargs, void* const* results,
                              const size_t* result_sizes, int nresults) {
  return Guard([&]() -> absl::Status {
    if (executable == nullptr) return absl::InvalidArgumentError("execute mpi: null executable");
    if (communicator == nullptr || communicator->communicator == nullptr) {
      return absl::InvalidArgumentError("execute mpi: null communicator");
    }
    const xjit_executable& exe = *executable;
    absl::Status valid =
        CheckBuffers(exe, args, arg_sizes, nargs, results, result_sizes, nresults, "execute mpi");
    // Every rank runs or none does: a rank with bad arguments left the others
    // waiting in their first collective (until the timeout, or forever).
    valid = communicator->communicator->AgreeToRun(valid);
    if (!valid.ok()) return valid;
    static const uint8_t kEmpty[1] = {0};
    std::vector<const void*> parameters(exe.parameter_shapes.size());
    for (size_t i = 0; i < parameters.size(); ++i) {
      parameters[i] = args[i] != nullptr ? args[i] : kEmpty;
    }
    // Through a flat buffer, copied out after the run (results may overlap
    // arguments, as for xjit_execute).
    std::vector<uint8_t> flat(exe.result_bytes > 0 ? exe.result_bytes : 1);
    absl::Status status =
        exe.runner->RunAsReplica(*communicator->communicator, parameters, flat.data());
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat("replica ", communicator->communicator->replica_id(), ": ",
                                       status.message()));
    }
    for (size_t i = 0; i < exe.result_leaves.size(); ++i) {
      if (result_sizes[i] > 0) {
        std::memcpy(results[i], flat.data() + exe.leaf_offsets[i], result_sizes[i]);
      }
    }
    return absl::OkStatus();
  });
}

}  // extern "C"
