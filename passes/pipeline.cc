#include "passes/pipeline.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <system_error>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "ir/hlo_text/printer.h"
#include "ir/status_macros.h"
#include "ir/verifier.h"
#include "passes/allocate_buffers.h"
#include "passes/assign_layouts.h"
#include "passes/canonicalize.h"
#include "passes/conform_layouts.h"
#include "passes/dce.h"
#include "passes/cse.h"
#include "passes/expand_batch_norm.h"
#include "passes/expand_sharding_calls.h"
#include "passes/expand_topk.h"
#include "passes/fold_constants.h"
#include "passes/fuse.h"
#include "passes/isolate_tiled_layouts.h"
#include "passes/no_op_bitcast.h"
#include "passes/simplify_algebra.h"
#include "passes/scan_cumulative_windows.h"
#include "passes/split_output_fusions.h"

namespace xjit {
namespace {

// Stands in for a pass that does not exist yet, so that the pipeline's shape
// (and the names options may use) is fixed now.
class PlaceholderPass : public Pass {
 public:
  explicit PlaceholderPass(std::string name) : name_(std::move(name)) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(Module*) override { return false; }

 private:
  std::string name_;
};

// The default pipeline. Every pass the compiler runs is listed here, in
// order; nothing else decides what runs.
absl::Status RunPasses(PassRunner& run) {
  // Simplification: canonical forms first, so that the rewrites see one
  // spelling of each operation; folding after algebra exposes new constants,
  // a second algebra run takes the rewrites they enable (select on a folded
  // predicate); CSE then DCE clean up.
  XJIT_RETURN_IF_ERROR(run.Run(Canonicalize()).status());
  XJIT_RETURN_IF_ERROR(run.Run(ExpandBatchNorm()).status());
  XJIT_RETURN_IF_ERROR(run.Run(ExpandTopK()).status());
  XJIT_RETURN_IF_ERROR(run.Run(ScanCumulativeWindows()).status());
  XJIT_RETURN_IF_ERROR(run.Run(ExpandShardingCalls()).status());
  XJIT_RETURN_IF_ERROR(run.Run(SimplifyAlgebra()).status());
  XJIT_RETURN_IF_ERROR(run.Run(FoldConstants()).status());
  XJIT_RETURN_IF_ERROR(run.Run(SimplifyAlgebra()).status());
  XJIT_RETURN_IF_ERROR(run.Run(EliminateCommonSubexpressions()).status());
  XJIT_RETURN_IF_ERROR(run.Run(EliminateDeadCode()).status());
  // Layouts are final after assignment; only then is a reshape or transpose
  // known to be a free bitcast.
  XJIT_RETURN_IF_ERROR(run.Run(AssignLayouts()).status());
  XJIT_RETURN_IF_ERROR(run.Run(NoOpMovesToBitcast()).status());
  XJIT_RETURN_IF_ERROR(run.Run(Fuse(run.options().fuse)).status());
  XJIT_RETURN_IF_ERROR(run.Run(AllocateBuffers()).status());
  return absl::OkStatus();
}

// The JIT's preparation, after the default pipeline. Contractions are
// library calls that run no per-element code, so output fusions are split
// first; then every passed-on value gets the layout written on it, and last
// tiled layouts leave the kernels (the copies the first two add may read or
// make tiled values).
absl::Status RunJitPreparationPasses(PassRunner& run) {
  XJIT_RETURN_IF_ERROR(run.Run(SplitOutputFusions()).status());
  XJIT_RETURN_IF_ERROR(run.Run(ConformPlaceLayouts()).status());
  XJIT_RETURN_IF_ERROR(run.Run(IsolateTiledLayouts()).status());
  return absl::OkStatus();
}

// Every pass by name, for CreatePass.
const std::map<std::string, std::function<std::unique_ptr<Pass>()>>& PassFactories() {
  static const auto* factories = new std::map<std::string, std::function<std::unique_ptr<Pass>()>>{
      {"canonicalize", [] { return std::make_unique<Canonicalize>(); }},
      {"expand-batch-norm", [] { return std::make_unique<ExpandBatchNorm>(); }},
      {"expand-topk", [] { return std::make_unique<ExpandTopK>(); }},
      {"scan-cumulative-windows", [] { return std::make_unique<ScanCumulativeWindows>(); }},
      {"expand-sharding-calls", [] { return std::make_unique<ExpandShardingCalls>(); }},
      {"simplify-algebra", [] { return std::make_unique<SimplifyAlgebra>(); }},
      {"fold-constants", [] { return std::make_unique<FoldConstants>(); }},
      {"cse", [] { return std::make_unique<EliminateCommonSubexpressions>(); }},
      {"dce", [] { return std::make_unique<EliminateDeadCode>(); }},
      {"no-op-bitcast", [] { return std::make_unique<NoOpMovesToBitcast>(); }},
      {"assign-layouts", [] { return std::make_unique<AssignLayouts>(); }},
      {"fuse", [] { return std::make_unique<Fuse>(); }},
      {"allocate-buffers", [] { return std::make_unique<AllocateBuffers>(); }},
      {"split-output-fusions", [] { return std::make_unique<SplitOutputFusions>(); }},
      {"conform-layouts", [] { return std::make_unique<ConformPlaceLayouts>(); }},
      {"isolate-tiled-layouts", [] { return std::make_unique<IsolateTiledLayouts>(); }},
  };
  return *factories;
}

bool Contains(const std::vector<std::string>& names, absl::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

// The names a pipeline's runner records, in order (names_only mode).
std::vector<std::string> PassNamesOf(absl::Status (*passes)(PassRunner&)) {
  PassRunner runner(nullptr, PipelineOptions{});
  runner.set_names_only(true);
  XJIT_CHECK(passes(runner).ok());
  std::vector<std::string> names;
  for (const PassRecord& record : runner.records()) names.push_back(record.name);
  return names;
}

// InvalidArgument naming the first pass in options' disabled or only lists
// that `known` lacks, so that a typo does not silently do nothing.
absl::Status CheckPassNames(const PipelineOptions& options,
                            const std::vector<std::string>& known) {
  for (const auto* list : {&options.disabled_passes, &options.only_passes}) {
    for (const std::string& name : *list) {
      if (!Contains(known, name)) {
        return absl::InvalidArgumentError(absl::StrCat("unknown pass '", name,
                                                       "'; the pipeline's passes are: ",
                                                       absl::StrJoin(known, ", ")));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

PassRunner::PassRunner(Module* module, PipelineOptions options)
    : module_(module), options_(std::move(options)) {}

bool PassRunner::IsEnabled(absl::string_view name) const {
  if (Contains(options_.disabled_passes, name)) return false;
  return options_.only_passes.empty() || Contains(options_.only_passes, name);
}

absl::Status PassRunner::Dump(absl::string_view name) {
  if (options_.dump_dir.empty()) return absl::OkStatus();
  std::error_code error;
  std::filesystem::create_directories(options_.dump_dir, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot create dump directory ", options_.dump_dir, ": ", error.message()));
  }
  const std::string path =
      (std::filesystem::path(options_.dump_dir) / absl::StrFormat("%02d-%s.hlo", dump_index_, name))
          .string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << PrintModule(*module_);
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

absl::StatusOr<bool> PassRunner::Run(Pass& pass) {
  PassRecord record;
  record.name = std::string(pass.name());
  if (names_only_ || !IsEnabled(pass.name())) {
    records_.push_back(std::move(record));
    return false;
  }
  if (dump_index_ == 0) XJIT_RETURN_IF_ERROR(Dump("input"));
  const auto start = std::chrono::steady_clock::now();
  absl::StatusOr<bool> changed = pass.Run(module_);
  const auto end = std::chrono::steady_clock::now();
  if (!changed.ok()) {
    return absl::Status(changed.status().code(),
                        absl::StrCat("pass ", pass.name(), ": ", changed.status().message()));
  }
  record.ran = true;
  record.changed = *changed;
  record.milliseconds = std::chrono::duration<double, std::milli>(end - start).count();
  records_.push_back(std::move(record));
  if (options_.verify) {
    absl::Status verified = VerifyModule(*module_);
    if (!verified.ok()) {
      return absl::InternalError(absl::StrCat("the module is invalid after pass ", pass.name(),
                                              " (a bug in that pass): ", verified.message()));
    }
  }
  ++dump_index_;
  XJIT_RETURN_IF_ERROR(Dump(pass.name()));
  return *changed;
}

std::vector<std::string> DefaultPipelinePassNames() { return PassNamesOf(RunPasses); }

std::vector<std::string> JitPreparationPassNames() {
  return PassNamesOf(RunJitPreparationPasses);
}

absl::Status RunJitPipeline(Module* module, const PipelineOptions& options,
                            bool run_default_passes, std::vector<PassRecord>* records) {
  const std::vector<std::string> default_names = DefaultPipelinePassNames();
  std::vector<std::string> known = default_names;
  for (std::string& name : JitPreparationPassNames()) known.push_back(std::move(name));
  XJIT_RETURN_IF_ERROR(CheckPassNames(options, known));
  if (options.verify) XJIT_RETURN_IF_ERROR(VerifyModule(*module));
  PipelineOptions runner_options = options;
  if (!run_default_passes) {
    runner_options.disabled_passes.insert(runner_options.disabled_passes.end(),
                                          default_names.begin(), default_names.end());
  }
  PassRunner runner(module, std::move(runner_options));
  absl::Status status = RunPasses(runner);
  if (status.ok()) status = RunJitPreparationPasses(runner);
  if (records != nullptr) *records = runner.records();
  return status;
}

absl::Status RunDefaultPipeline(Module* module, const PipelineOptions& options,
                                std::vector<PassRecord>* records) {
  XJIT_RETURN_IF_ERROR(CheckPassNames(options, DefaultPipelinePassNames()));
  if (options.verify) XJIT_RETURN_IF_ERROR(VerifyModule(*module));
  PassRunner runner(module, options);
  absl::Status status = RunPasses(runner);
  if (records != nullptr) *records = runner.records();
  return status;
}

absl::StatusOr<std::unique_ptr<Pass>> CreatePass(absl::string_view name) {
  auto it = PassFactories().find(std::string(name));
  if (it == PassFactories().end()) {
    return absl::NotFoundError(absl::StrCat("unknown pass '", name, "'; known passes: ",
                                            absl::StrJoin(KnownPassNames(), ", ")));
  }
  return it->second();
}

std::vector<std::string> KnownPassNames() {
  std::vector<std::string> names;
  for (const auto& [name, factory] : PassFactories()) names.push_back(name);
  return names;
}

}  // namespace xjit
