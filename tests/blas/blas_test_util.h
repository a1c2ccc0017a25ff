// Helpers for the runtime/blas tests: random operands, running a one-op HLO
// module both through the reference evaluator and through the planned
// kernels, and comparing (floats within a tolerance that scales with the
// contraction length, integers exactly).
#ifndef XJIT_TESTS_BLAS_BLAS_TEST_UTIL_H_
#define XJIT_TESTS_BLAS_BLAS_TEST_UTIL_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "ir/attributes.h"
#include "ir/literal.h"
#include "runtime/blas/convolution.h"
#include "runtime/blas/dot.h"

namespace xjit::runtime::blas::testing {

// Fills every element: floats uniform in [-1, 1] (rounded to the type),
// complex both parts so, integers uniform over the type's whole range (so
// that products wrap), PRED 0/1.
void FillRandom(Literal* literal, std::mt19937_64& rng);

// The result of running the module's entry root (a dot or convolution whose
// operands are the entry parameters) both ways.
struct CaseResult {
  ::testing::AssertionResult ok = ::testing::AssertionSuccess();
  std::string plan;        // DotPlan/ConvolutionPlan::ToString()
  int64_t copies = -1;     // DotPlan::copies.size()
  bool uses_im2col = false;
  bool uses_direct = false;  // the convolution ran on the direct kernel
  bool ran_both = false;     // ... and the other path was run and checked too
  DotPlan::Kind kind = DotPlan::Kind::kNothing;
};

// Parses `hlo`, fills the parameters randomly from `seed`, evaluates with the
// evaluator and with PlanDot/RunDot or PlanConvolution/RunConvolution, and
// compares. `contraction` is the number of products per result element (the
// tolerance scales with it). A convolution with a direct-kernel plan runs
// and compares both paths (the planner's choice first). A dot with
// dot_threads > 1 is split over that many threads (PlanDotThreads with no
// floor on a band's size) and run so.
CaseResult RunCase(const std::string& hlo, uint64_t seed, int64_t contraction,
                   int dot_threads = 1);

// As RunCase with explicit argument values (no randomness); `expected` is
// compared exactly (integers) or within the tolerance (floats).
::testing::AssertionResult RunWithValues(const std::string& hlo,
                                         const std::vector<Literal>& arguments,
                                         const Literal& expected, int64_t contraction);

// A convolution described by sizes; ConvModuleText writes the one-op module.
// Labels are dim_labels parts ("b01f", "01io", "b01f"); layouts are
// minor_to_major lists (empty: the default).
struct ConvSpec {
  ElementType type = ElementType::kF32;
  int64_t batch = 1;
  int64_t input_features = 1;
  int64_t output_features = 1;
  std::vector<int64_t> input_spatial;
  std::vector<int64_t> kernel_spatial;
  // stride, padding, dilations and reversal per spatial dimension (size is
  // taken from kernel_spatial); empty means all defaults.
  std::vector<WindowDimension> window;
  int64_t feature_group_count = 1;
  int64_t batch_group_count = 1;
  std::string input_labels = "b01f";
  std::string kernel_labels = "01io";
  std::string output_labels = "b01f";
  std::vector<int64_t> input_layout, kernel_layout, output_layout;
};
std::string ConvModuleText(const ConvSpec& spec);
// Products per output element: input features per group times the window.
int64_t ConvContraction(const ConvSpec& spec);

// Compares logically (any layouts).
::testing::AssertionResult CompareLiterals(const Literal& actual, const Literal& expected,
                                           int64_t contraction);

}  // namespace xjit::runtime::blas::testing

#endif  // XJIT_TESTS_BLAS_BLAS_TEST_UTIL_H_
