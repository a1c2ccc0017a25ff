// Seeded random arguments for the semantic checks of the pass tests: values
// in [-4, 4] (small integers), optionally mixed with special values (NaN,
// +-0, +-inf, +-1, integer extremes) so that rewrites that are wrong only on
// those are caught.
#ifndef XJIT_TESTS_PASSES_RANDOM_ARGUMENTS_H_
#define XJIT_TESTS_PASSES_RANDOM_ARGUMENTS_H_

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "ir/literal.h"
#include "ir/module.h"

namespace xjit::testing {

// Fills `literal` (arrays and tuples of arrays). With `specials`, in `cycle`
// mode every element is the next special value in turn, so each certainly
// occurs; otherwise about a quarter of the elements are specials.
absl::Status FillRandom(Literal* literal, std::mt19937_64& rng, bool specials, bool cycle);

// One argument per entry parameter; Unimplemented for token parameters.
absl::StatusOr<std::vector<Literal>> RandomArguments(const Module& module, uint64_t seed,
                                                     bool specials, bool cycle);

// Elementwise comparison within a relative tolerance; NaN equals NaN.
// Non-float arrays must be equal. `why` says what differed.
bool NearlyEqual(const Literal& a, const Literal& b, double tolerance, std::string* why);

}  // namespace xjit::testing

#endif  // XJIT_TESTS_PASSES_RANDOM_ARGUMENTS_H_
