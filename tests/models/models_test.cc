// Real models from JAX (models/generate.py) on both backends against XLA:CPU.
//
// Each fixture directory models/fixtures/NAME holds the unoptimised HLO
// module JAX hands to XLA, its inputs (argI.npy) and XLA:CPU's outputs
// (outI.npy, the result tuple flattened). For every model and backend this
// test parses and verifies the module, runs it on the inputs (the JIT: compiled
// with the default options; the interpreter: the reference evaluator) and
// compares every output with XLA's within the model's tolerance (kModels
// below, where each bound is justified). On the JIT it also checks the compile
// report: no interpreted step, except the gaps a model lists as known — and a
// known gap that is now compiled fails too, so the list cannot go stale.
//
// The same test runs the programs of models/programs (generate.py there):
// modules that JAX's own and third-party libraries wrote (an adaptive ODE
// solve, a minimiser, an optimiser loop, an MCMC sampler, ...), with nested
// while loops and conditionals (kPrograms below; issue 26).
//
// And the zoo of models/zoo (generate.py there; issue 28): small programs as
// users write them with Flax, Equinox, Haiku, Optax, Jraph, NumPyro,
// BlackJAX, Optimistix and Lineax, and JAX idioms (stencils, cumulative ops,
// FFTs, random sampling, masking, einsums, convolutions of every kind,
// pooling, attention variants, embedding bags): kZoo below, and every fixture
// folder of models/zoo must have a row there.
//
// The fixtures are committed: the test needs no JAX (XJIT_MODELS,
// XJIT_PROGRAMS and XJIT_ZOO point at them; meson sets all three).
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/models/fixture_files.h"
#include "interpreter/evaluator.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "ir/verifier.h"
#include "jit/compile.h"
#include "tools/npy.h"

namespace xjit {
namespace {

namespace fs = std::filesystem;
using fixtures::CountFiles;
using fixtures::ForEachIndex;
using fixtures::ReadFile;

// One model's comparison rule. Outputs compare element by element: integers
// and pred exactly; floats within `tol` times the largest |value| of XLA's
// array (NaN matches NaN). The bound is relative to the array's scale rather
// than to each element because the outputs are sums (dots, convolutions,
// reductions, gradients summed over a batch) evaluated in another order than
// XLA's: the error of a reordered sum is a few ulps of the magnitude of its
// terms, not of its (possibly cancelled) result.
struct ModelCase {
  const char* name;
  double tol;
  // Substrings of the JIT's interpreted-step lines this model is known to
  // produce (each must match at least one line, and every line must match
  // one): the missing compiled features, named.
  std::vector<const char*> known_interpreted;
  // Known failures: a substring of the error the JIT's compile or run (resp.
  // the interpreter's run) is expected to fail with; null: must succeed. A
  // known failure that now succeeds fails too, so the list cannot go stale.
  const char* jit_error = nullptr;
  const char* interpreter_error = nullptr;
};

// Tolerances. f32 models: 1e-5 of the array's scale. Their sums have at most
// a few hundred terms (the fixtures are small); f32's epsilon is 6e-8, and the
// observed differences from XLA are below 7e-7 of the scale on both backends,
// so the bound leaves a margin of more than 10 for other ISAs' (SSE4, AVX2,
// AVX-512) summation orders while still catching any wrong element.
// cnn_train: 2e-4. Batch norm's backward subtracts the batch mean of the
// incoming gradient, so the bias and scale gradients are differences of nearly
// equal sums over 256 positions: their absolute error is that of the terms
// (3e-7, jit and interpreter alike) against values of 2e-2 (observed 3.7e-5 of
// the scale). bf16 forward: 1e-2, i.e. about 2 ulps of bf16 (epsilon 2^-8) at
// the array's largest value; the fixtures were made with XLA's excess precision
// off (each bf16 op rounds, as HLO says), and the observed difference is 0.
// bf16 training step: 6e-2. The gradients are bf16 sums over the batch and
// sequence whose order differs from XLA's, each partial sum rounded to 8 bits
// of mantissa; observed 1.5e-2 of the scale (4 ulps at the largest value).
const ModelCase kModels[] = {
    {"mlp_train", 1e-5, {}},
    {"cnn_forward", 1e-5, {}},
    {"cnn_train", 2e-4, {}},
    {"gpt_forward_f32", 1e-5, {}},
    {"gpt_train_f32", 1e-5, {}},
    {"gpt_forward_bf16", 1e-2, {}},
    {"gpt_train_bf16", 6e-2, {}},
    {"lstm_forward", 1e-5, {}},
    {"lstm_train", 1e-5, {}},
    {"sparse", 1e-5, {}},
};

// Tolerances of the programs. Fixed-length f32 loops (Adam, the RNN, the MLP
// step, NUTS's leapfrog steps) and BFGS (which converges to the minimum):
// 1e-5 of the scale, as the models above; observed below 5e-7 on both
// backends. The adaptive ODE solves (odeint, diffrax): 1e-4. Their step
// sizes come from error estimates that are differences of nearly equal
// stage sums, so a last-bit difference moves every later step a little; the
// solution then differs by up to the solvers' local error tolerance (rtol =
// atol = 1e-5), not by a few ulps: observed 6e-6 (odeint) and 1e-5 (diffrax)
// of the scale. The integer outputs (diffrax's step count, NUTS's
// integration steps, BFGS's status) compare exactly.
const ModelCase kPrograms[] = {
    {"optax_adam", 1e-5, {}},
    {"scan_rnn", 1e-5, {}},
    {"equinox_mlp", 1e-5, {}},
    {"odeint", 1e-4, {}},
    {"bfgs_minimize", 1e-5, {}},
    {"blackjax_nuts", 1e-5, {}},
    {"diffrax_tsit5", 1e-4, {}},
};

// Tolerances of the zoo: 1e-5 of the scale, as the models above, for every
// program. The zoo's sums are short (the fixtures are small); the largest
// difference observed from XLA is 1.4e-6 of the scale (flax_mnist_cnn's
// gradients, both backends), the rest below 1.1e-6, so the bound keeps a
// margin of 7 for other ISAs' summation orders. The loops whose course
// depends on values (Optimistix's Newton and Levenberg-Marquardt, Lineax's
// CG, the samplers' accept/reject decisions) end at the same iteration as
// XLA's on these inputs; their integer and pred outputs (ranks, top-k
// indices, categorical draws, permutations, bernoulli masks, acceptances)
// compare exactly. Scientific code (session 19) keeps 1e-5 except
// krylov_poisson, 1e-4: its GMRES and BiCGSTAB loops stop when the residual
// falls below 1e-5 of the right-hand side's norm, so two summation orders
// leave solutions that differ up to that tolerance times the operator's
// conditioning, not by a few ulps (observed 1.9e-6 of the scale on the jit,
// 6.8e-6 on the interpreter, both in the incremental GMRES, whose Givens
// rotations carry every earlier rounding); gamma_mle_newton's shapes solve
// log(a) - digamma(a) = log(mean) - mean(log x), a difference of nearly
// equal logs, so their last bits move by a few ulps of that difference
// divided by its slope 1/(2a^2) (observed 2.9e-6). No program is a known
// failure today: a row that needs
// one names the error in jit_error / interpreter_error, and the test checks
// that the failure is still there.
const ModelCase kZoo[] = {
    {"flax_mnist_cnn", 1e-5, {}},
    {"flax_self_attention", 1e-5, {}},
    {"flax_lstm", 1e-5, {}},
    {"flax_depthwise_separable", 1e-5, {}},
    {"flax_conv_transpose", 1e-5, {}},
    {"flax_nnx_dropout_train", 1e-5, {}},
    {"equinox_conv1d", 1e-5, {}},
    {"equinox_mha", 1e-5, {}},
    {"equinox_grouped_conv", 1e-5, {}},
    {"haiku_resnet_block", 1e-5, {}},
    {"haiku_gru_unroll", 1e-5, {}},
    {"haiku_embed_mlp", 1e-5, {}},
    {"optax_adamw_clip", 1e-5, {}},
    {"optax_lion_multisteps", 1e-5, {}},
    {"jraph_gcn", 1e-5, {}},
    {"jraph_graph_network", 1e-5, {}},
    {"numpyro_hmc", 1e-5, {}},
    {"numpyro_distributions", 1e-5, {}},
    {"blackjax_mala", 1e-5, {}},
    {"blackjax_rmh", 1e-5, {}},
    {"optimistix_newton", 1e-5, {}},
    {"optimistix_levenberg_marquardt", 1e-5, {}},
    {"lineax_cg", 1e-5, {}},
    {"lineax_lu_qr", 1e-5, {}},
    {"per_example_grads", 1e-5, {}},
    {"roll_stencil_fft", 1e-5, {}},
    {"pad_stencil", 1e-5, {}},
    {"cumulative_ops", 1e-5, {}},
    {"random_sampling", 1e-5, {}},
    {"dropout_grad_step", 1e-5, {}},
    {"where_masking", 1e-5, {}},
    {"einsum_shapes", 1e-5, {}},
    {"conv_nchw_grouped_strided", 1e-5, {}},
    {"conv_depthwise_nhwc", 1e-5, {}},
    {"conv_dilated_nhwc", 1e-5, {}},
    {"conv_transpose_nhwc", 1e-5, {}},
    {"conv1d_causal", 1e-5, {}},
    {"patch_embed_nchw", 1e-5, {}},
    {"pooling", 1e-5, {}},
    {"attention_variants", 1e-5, {}},
    {"embedding_bag", 1e-5, {}},
    {"topk_label_smoothing", 1e-5, {}},
    // Scientific code (session 19).
    {"diffrax_robertson_kvaerno5", 1e-5, {}},
    {"gamma_mle_newton", 1e-5, {}},
    {"gp_marginal_likelihood", 1e-5, {}},
    {"linalg_decompositions", 1e-5, {}},
    {"optax_lbfgs", 1e-5, {}},
    {"nbody_leapfrog", 1e-5, {}},
    {"kalman_rts", 1e-5, {}},
    {"linear_recurrence_scan", 1e-5, {}},
    {"krylov_poisson", 1e-4, {}},
};

enum class Backend { kJit, kInterpreter };

// Which fixture set a case comes from: its folder (an environment variable,
// with a fallback relative to the source root) and its table.
enum class FixtureSet { kModels, kPrograms, kZoo };

struct Param {
  ModelCase model;
  Backend backend;
  FixtureSet set = FixtureSet::kModels;
};

void PrintTo(const Param& p, std::ostream* os) {
  *os << p.model.name << (p.backend == Backend::kJit ? " on the jit" : " on the interpreter");
}

std::string ParamName(const testing::TestParamInfo<Param>& info) {
  return absl::StrCat(info.param.model.name,
                      info.param.backend == Backend::kJit ? "_jit" : "_interpreter");
}

fs::path FixtureRoot(FixtureSet set) {
  const char* variable = set == FixtureSet::kModels     ? "XJIT_MODELS"
                         : set == FixtureSet::kPrograms ? "XJIT_PROGRAMS"
                                                        : "XJIT_ZOO";
  const char* fallback = set == FixtureSet::kModels     ? "models/fixtures"
                         : set == FixtureSet::kPrograms ? "models/programs"
                                                        : "models/zoo";
  const char* root = std::getenv(variable);
  return fs::path(root != nullptr ? root : fallback);
}

fs::path FixtureDir(const Param& param) { return FixtureRoot(param.set) / param.model.name; }

// "" when `got` matches `want` (same shape) within `tol`; else what differs.
std::string Compare(const Literal& want, const Literal& got, double tol) {
  const Shape& shape = want.shape();
  const std::vector<int64_t> dims(shape.dimensions().begin(), shape.dimensions().end());
  const bool is_float = IsFloat(shape.element_type());
  double scale = 0;
  if (is_float) {
    ForEachIndex(dims, [&](const std::vector<int64_t>& i) {
      double v = want.GetDouble(i);
      if (std::isfinite(v)) scale = std::max(scale, std::abs(v));
    });
  }
  const double bound = tol * (scale > 0 ? scale : 1.0);
  int64_t bad = 0;
  std::string first;
  double worst = 0;
  ForEachIndex(dims, [&](const std::vector<int64_t>& i) {
    bool ok;
    if (is_float) {
      double w = want.GetDouble(i), g = got.GetDouble(i);
      double err = std::isnan(w) || std::isnan(g) || std::isinf(w) || std::isinf(g)
                       ? ((std::isnan(w) && std::isnan(g)) || w == g ? 0 : INFINITY)
                       : std::abs(w - g);
      worst = std::max(worst, err);
      ok = err <= bound;
      if (!ok && first.empty()) {
        first = absl::StrCat("[", absl::StrJoin(i, ","), "]: XLA ", w, ", xjit ", g);
      }
    } else {
      ok = want.GetInt(i) == got.GetInt(i);
      if (!ok && first.empty()) {
        first = absl::StrCat("[", absl::StrJoin(i, ","), "]: XLA ", want.GetInt(i), ", xjit ",
                             got.GetInt(i));
      }
    }
    if (!ok) ++bad;
  });
  if (bad == 0) return "";
  return absl::StrCat(bad, " elements differ beyond ", tol, " of the scale ", scale,
                      " (largest difference ", worst, "); first ", first);
}

// Checks a known failure: `status` must be an error containing `expected`.
void ExpectKnownFailure(const absl::Status& status, const char* expected) {
  EXPECT_FALSE(status.ok()) << "known failure '" << expected
                            << "' succeeds now: remove it from the table in " << __FILE__;
  EXPECT_NE(std::string(status.message()).find(expected), std::string::npos)
      << "expected an error with '" << expected << "', got " << status;
}

class ModelsTest : public testing::TestWithParam<Param> {};

TEST_P(ModelsTest, MatchesXla) {
  const ModelCase& model = GetParam().model;
  const fs::path dir = FixtureDir(GetParam());
  ASSERT_TRUE(fs::exists(dir / "module.hlo")) << "missing fixture " << dir;
  absl::StatusOr<std::unique_ptr<Module>> module =
      ParseHloModule(ReadFile(dir / "module.hlo"), (dir / "module.hlo").string());
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(VerifyModule(**module).ok()) << VerifyModule(**module);

  const Computation& entry = *(*module)->entry();
  const int n_args = CountFiles(dir, "arg");
  ASSERT_EQ(n_args, entry.parameter_count());
  std::vector<Literal> args;
  for (int i = 0; i < n_args; ++i) {
    absl::StatusOr<npy::Array> array = npy::ReadNpyFile(dir / absl::StrCat("arg", i, ".npy"));
    ASSERT_TRUE(array.ok()) << array.status();
    absl::StatusOr<Literal> literal = npy::LiteralFromArray(*array, entry.parameter(i)->shape());
    ASSERT_TRUE(literal.ok()) << "arg" << i << ": " << literal.status();
    args.push_back(*std::move(literal));
  }

  absl::StatusOr<Literal> result;
  if (GetParam().backend == Backend::kJit) {
    jit::CompileReport report;
    absl::StatusOr<std::unique_ptr<runtime::Executable>> exe =
        jit::Compile(**module, jit::CompileOptions(), &report);
    if (model.jit_error != nullptr && !exe.ok()) {
      ExpectKnownFailure(exe.status(), model.jit_error);
      return;
    }
    ASSERT_TRUE(exe.ok()) << exe.status();
    // Interpreted steps: each must be a known gap, and each known gap must
    // still be there.
    std::cout << model.name << ": " << report.kernels.size() << " kernels, "
              << report.library_calls.size() << " library calls, "
              << report.interpreted_steps.size() << " interpreted steps\n";
    for (const std::string& step : report.interpreted_steps) {
      bool known = false;
      for (const char* gap : model.known_interpreted) known |= step.find(gap) != std::string::npos;
      std::cout << "  interpreted: " << step << (known ? " (known gap)" : "") << "\n";
      EXPECT_TRUE(known) << "new interpreted step on the jit: " << step;
    }
    for (const char* gap : model.known_interpreted) {
      bool seen = false;
      for (const std::string& step : report.interpreted_steps) {
        seen |= step.find(gap) != std::string::npos;
      }
      EXPECT_TRUE(seen) << "known gap '" << gap << "' is compiled now: remove it from kModels in "
                        << __FILE__;
    }
    result = (*exe)->Run(args);
  } else {
    result = EvaluateModule(**module, args);
  }
  const char* expected_error =
      GetParam().backend == Backend::kJit ? model.jit_error : model.interpreter_error;
  if (expected_error != nullptr) {
    ExpectKnownFailure(result.status(), expected_error);
    return;
  }
  ASSERT_TRUE(result.ok()) << result.status();

  std::vector<const Literal*> outs;
  if (result->shape().IsTuple()) {
    for (const Literal& e : result->elements()) outs.push_back(&e);
  } else {
    outs.push_back(&*result);
  }
  ASSERT_EQ(static_cast<int>(outs.size()), CountFiles(dir, "out"));
  for (size_t i = 0; i < outs.size(); ++i) {
    absl::StatusOr<npy::Array> array = npy::ReadNpyFile(dir / absl::StrCat("out", i, ".npy"));
    ASSERT_TRUE(array.ok()) << array.status();
    absl::StatusOr<Literal> want = npy::LiteralFromArray(*array, outs[i]->shape());
    ASSERT_TRUE(want.ok()) << "out" << i << ": " << want.status();
    EXPECT_EQ(Compare(*want, *outs[i], model.tol), "") << model.name << " output " << i;
  }
}

std::vector<Param> AllParams() {
  std::vector<Param> params;
  for (const ModelCase& m : kModels) {
    params.push_back({m, Backend::kJit});
    params.push_back({m, Backend::kInterpreter});
  }
  return params;
}

std::vector<Param> AllPrograms() {
  std::vector<Param> params;
  for (const ModelCase& m : kPrograms) {
    params.push_back({m, Backend::kJit, FixtureSet::kPrograms});
    params.push_back({m, Backend::kInterpreter, FixtureSet::kPrograms});
  }
  return params;
}

std::vector<Param> AllZoo() {
  std::vector<Param> params;
  for (const ModelCase& m : kZoo) {
    params.push_back({m, Backend::kJit, FixtureSet::kZoo});
    params.push_back({m, Backend::kInterpreter, FixtureSet::kZoo});
  }
  return params;
}

// Every fixture folder of the zoo (a folder with a module.hlo) has a row in
// kZoo, and every row a folder: a program added by generate.py cannot go
// untested, nor a row outlive its program.
TEST(ZooTable, CoversEveryFixture) {
  const fs::path root = FixtureRoot(FixtureSet::kZoo);
  ASSERT_TRUE(fs::is_directory(root)) << "missing zoo fixtures " << root;
  std::vector<std::string> folders;
  for (const fs::directory_entry& entry : fs::directory_iterator(root)) {
    if (fs::exists(entry.path() / "module.hlo")) folders.push_back(entry.path().filename());
  }
  for (const std::string& folder : folders) {
    bool listed = false;
    for (const ModelCase& m : kZoo) listed |= folder == m.name;
    EXPECT_TRUE(listed) << "models/zoo/" << folder << " has no row in kZoo (" << __FILE__ << ")";
  }
  for (const ModelCase& m : kZoo) {
    EXPECT_NE(std::find(folders.begin(), folders.end(), m.name), folders.end())
        << "kZoo lists " << m.name << " but " << root << " has no such fixture";
  }
  EXPECT_GE(folders.size(), 30u);
}

INSTANTIATE_TEST_SUITE_P(Models, ModelsTest, testing::ValuesIn(AllParams()), ParamName);
INSTANTIATE_TEST_SUITE_P(Programs, ModelsTest, testing::ValuesIn(AllPrograms()), ParamName);
INSTANTIATE_TEST_SUITE_P(Zoo, ModelsTest, testing::ValuesIn(AllZoo()), ParamName);

}  // namespace
}  // namespace xjit
