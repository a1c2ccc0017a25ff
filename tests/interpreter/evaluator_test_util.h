// Helpers for the evaluator's tests: parse HLO text and run it, and read a
// result literal's elements in row-major order.
#ifndef XJIT_TESTS_INTERPRETER_EVALUATOR_TEST_UTIL_H_
#define XJIT_TESTS_INTERPRETER_EVALUATOR_TEST_UTIL_H_

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "interpreter/evaluator.h"
#include "ir/literal.h"

namespace xjit::testing {

// Parses `hlo` and evaluates it on `arguments`.
absl::StatusOr<Literal> RunHlo(absl::string_view hlo, const std::vector<Literal>& arguments = {},
                               const EvaluatorOptions& options = {});

// A one-instruction module: `ENTRY e { p0 = ...; ROOT r = <shape> <body> }`
// built from parameter shapes and the root's text, e.g.
// RunOne({"s32[3]", "s32[3]"}, "s32[3] divide(p0, p1)", {a, b}).
absl::StatusOr<Literal> RunOne(const std::vector<std::string>& parameter_shapes,
                               absl::string_view root, const std::vector<Literal>& arguments);

// Elements in logical row-major order.
std::vector<int64_t> Ints(const Literal& literal);
std::vector<uint64_t> Bits(const Literal& literal);
std::vector<double> Doubles(const Literal& literal);
std::vector<std::complex<double>> Complexes(const Literal& literal);

Literal Ints(const std::string& shape, const std::vector<int64_t>& values);
Literal Doubles(const std::string& shape, const std::vector<double>& values);
Literal BitsLiteral(const std::string& shape, const std::vector<uint64_t>& values);

}  // namespace xjit::testing

#endif  // XJIT_TESTS_INTERPRETER_EVALUATOR_TEST_UTIL_H_
