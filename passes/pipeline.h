// The pass pipeline: the one place that says which passes run, in which
// order (RunDefaultPipeline in pipeline.cc reads top to bottom), and the
// runner that wraps every pass with the same services:
//   - skipping it when options turn it off by name;
//   - verifying the module after it (VerifyModule), on by default in builds
//     without NDEBUG and in tests; a verifier failure after a pass is a bug in
//     that pass and is reported as Internal naming the pass;
//   - dumping the module as HLO text to `dump_dir/NN-name.hlo` after it
//     (`00-input.hlo` is the module before the first pass);
//   - recording the pass's name, whether it changed the module, and its time.
#ifndef XJIT_PASSES_PIPELINE_H_
#define XJIT_PASSES_PIPELINE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/module.h"
#include "passes/fuse.h"
#include "passes/pass.h"

namespace xjit {

struct PipelineOptions {
#ifdef NDEBUG
  static constexpr bool kVerifyByDefault = false;
#else
  static constexpr bool kVerifyByDefault = true;
#endif
  // Run VerifyModule after each pass (and on the input).
  bool verify = kVerifyByDefault;
  // Passes not to run, by name(). A name no pipeline pass has is an error
  // (InvalidArgument), so that a typo does not silently do nothing.
  std::vector<std::string> disabled_passes;
  // When non-empty, only these passes run (the others count as disabled).
  std::vector<std::string> only_passes;
  // Where to write the module after every pass; empty: no dump. Created if
  // missing.
  std::string dump_dir;
  // The fusion pass's options (a target without row programs turns
  // row_fusion off).
  FuseOptions fuse;
};

// What happened to one pass.
struct PassRecord {
  std::string name;
  bool ran = false;      // false when disabled
  bool changed = false;
  double milliseconds = 0;
};

// Runs passes over one module with the services above. Passes that run or
// are skipped are numbered in order (NN of the dump file name).
class PassRunner {
 public:
  PassRunner(Module* module, PipelineOptions options);

  // Runs `pass` unless disabled; then verifies and dumps. Returns whether the
  // module changed.
  absl::StatusOr<bool> Run(Pass& pass);
  absl::StatusOr<bool> Run(Pass&& pass) { return Run(pass); }

  // Passes seen so far, in order.
  const std::vector<PassRecord>& records() const { return records_; }
  const PipelineOptions& options() const { return options_; }
  bool IsEnabled(absl::string_view name) const;

  // When set (names_only mode), Run records names and runs nothing. Used to
  // list the pipeline's passes without a module.
  void set_names_only(bool names_only) { names_only_ = names_only; }

 private:
  absl::Status Dump(absl::string_view name);

  Module* module_;
  PipelineOptions options_;
  std::vector<PassRecord> records_;
  int dump_index_ = 0;
  bool names_only_ = false;
};

// The default pipeline: simplification (canonicalise, expand batch norm,
// algebraic simplification, constant folding, CSE, DCE), then layout
// assignment, fusion and buffer allocation. Verifies the input first when
// options.verify is set. `records`, if not null, receives what each pass did.
absl::Status RunDefaultPipeline(Module* module, const PipelineOptions& options = {},
                                std::vector<PassRecord>* records = nullptr);

// The names of the default pipeline's passes, in order (a pass that runs
// twice is listed twice).
std::vector<std::string> DefaultPipelinePassNames();

// The JIT's pipeline: the default pipeline (unless `run_default_passes` is
// false, as with `--passes=off`: its passes then count as disabled), then the
// JIT's preparation, the rewrites a compiled program needs whichever default
// passes ran: output fusions split around their library-call contraction
// (split_output_fusions.h), passed-on values in the layouts written
// (conform_layouts.h), tiled layouts moved into copies at the edges of
// kernels (isolate_tiled_layouts.h). One runner runs both, so the
// preparation is dumped, verified, timed and disabled by name like any pass.
absl::Status RunJitPipeline(Module* module, const PipelineOptions& options,
                            bool run_default_passes = true,
                            std::vector<PassRecord>* records = nullptr);

// The names of the JIT's preparation passes, in order.
std::vector<std::string> JitPreparationPassNames();

// A fresh instance of any pipeline pass by name (as the golden tests and the
// command line need), or NotFound listing the known names.
absl::StatusOr<std::unique_ptr<Pass>> CreatePass(absl::string_view name);
// Every name CreatePass knows, sorted.
std::vector<std::string> KnownPassNames();

}  // namespace xjit

#endif  // XJIT_PASSES_PIPELINE_H_
