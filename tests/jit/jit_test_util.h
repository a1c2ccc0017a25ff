// Helpers for the JIT's tests: random arguments rich in edge values, a
// comparison that is bit exact except that any NaN matches any NaN, and a
// one-call check that a module's compiled results equal the evaluator's.
#ifndef XJIT_TESTS_JIT_JIT_TEST_UTIL_H_
#define XJIT_TESTS_JIT_JIT_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "ir/literal.h"
#include "ir/module.h"
#include "jit/compile.h"
#include "jit/compile_options.h"

namespace xjit::jit::testing {

// The instruction sets this host can run: on x86-64 sse4, and avx2 and
// avx512 when present (a missing one is reported once on stdout); on
// AArch64 neon.
std::vector<Isa> HostIsas();

// Whether this host's jit target lowers only part of the kernel programs
// (AArch64: see jit/a64/a64_lowering.h), so that a kernel may run as an
// interpreted step whose reason is the target's Unimplemented error.
bool HostTargetIsPartial();

// The interpreted steps of `report` that are not such an accepted fallback
// of a partial target: every step on x86-64; on AArch64 those whose reason
// is not "aarch64: no code ...". Each accepted fallback is reported once on
// stdout, so what runs interpreted is visible in the test log.
std::vector<std::string> UnexpectedInterpretedSteps(const CompileReport& report);

// HLO text of a module whose entry has parameters p0.. of the given shapes
// and the instructions `body` ("name = shape op(...)"), the last the root.
std::string ModuleText(const std::vector<std::string>& parameters,
                       const std::vector<std::string>& body);
// The same with one instruction, "ROOT r = " + `root`.
std::string OneOp(const std::vector<std::string>& parameters,
                                 const std::string& root);

// Parses and verifies.
absl::StatusOr<std::unique_ptr<Module>> ParseVerified(absl::string_view hlo);

// A literal of `shape` filled from `rng`: a mix of edge values (zeros of
// both signs, infinities, NaN, extremes, halves, integer min/max, -1, ...)
// and ordinary values.
Literal RandomLiteral(const Shape& shape, std::mt19937_64& rng);

// "" when equal (same dimensions and type, same bits per element, any NaN
// equal to any NaN, per component for c64; with `ulp_tolerance` > 0, float elements may also differ
// by up to that many ulp, zeros of different signs excepted); otherwise a
// description of the first difference.
std::string Difference(const Literal& expected, const Literal& actual, int ulp_tolerance = 0);

// "" when every float or complex element of `actual` is within `tolerance`
// times the 2-norm of the finite expected elements of its group (the
// elements sharing all but the `minor_dims` minor dimensions: one signal of
// an fft, one matrix of a batched solve) of the expected one; non-finite
// expected elements must match exactly (any NaN equal to any NaN), and
// other element types bit for bit. For results computed in a legitimately
// different order (library calls with a stated error bound).
std::string NormDifference(const Literal& expected, const Literal& actual, double tolerance,
                           int minor_dims);

// The JIT's vector math (jit/kernel/vector_math.h) is within a few ulp of the
// evaluator's libm: the tolerance the differential tests use for a module
// whose root is a math function with this result type (4 ulp for f32 and
// f64; 1 ulp for f16 and bf16, which are computed in f32 and rounded once).
int MathUlpTolerance(ElementType type);

struct CheckOptions {
  Isa isa = Isa::kAuto;
  uint64_t seed = 1;
  // CompileOptions::run_passes and only_passes.
  bool run_passes = true;
  std::vector<std::string> only_passes;
  // Fail when any instruction ran as an interpreted step.
  bool require_all_compiled = true;
  // Fail unless at least one kernel is vectorised.
  bool require_vectorized = false;
  // If set, receives the compile report.
  CompileReport* report = nullptr;
  // CompileOptions::cache and collect_asm (off: kernels compiled under a
  // testing switch such as x64::StreamAllRowsForTesting must not come from,
  // or go to, the compile cache).
  bool cache = true;
  bool collect_asm = false;
  // Float results may differ from the evaluator's by this many ulp (for
  // modules whose root is a math function; see MathUlpTolerance).
  int ulp_tolerance = 0;
  // With norm_tolerance > 0 the results are compared by NormDifference
  // (norm_tolerance, norm_minor_dims) instead of bit for bit.
  double norm_tolerance = 0;
  int norm_minor_dims = 0;
};

// Compiles `module`, runs it and the evaluator on random arguments, and
// compares.
::testing::AssertionResult MatchesEvaluator(const Module& module, const CheckOptions& options);
::testing::AssertionResult MatchesEvaluator(absl::string_view hlo, const CheckOptions& options);

// MatchesEvaluator on `isa` with random arguments from seeds 1..`seeds`
// (each mismatch a test failure); the compile report (the same for every
// seed), for checks of what was compiled.
CompileReport ExpectMatchesEvaluatorOnSeeds(absl::string_view hlo, Isa isa, int seeds = 2);

}  // namespace xjit::jit::testing

#endif  // XJIT_TESTS_JIT_JIT_TEST_UTIL_H_
