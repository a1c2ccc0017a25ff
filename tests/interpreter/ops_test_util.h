// Helpers for the evaluator-operation tests: run an HLO module given as text
// through the whole evaluator, and compare literals exactly or within a
// tolerance (element by element, NaN equal to NaN).
#ifndef XJIT_TESTS_INTERPRETER_OPS_TEST_UTIL_H_
#define XJIT_TESTS_INTERPRETER_OPS_TEST_UTIL_H_

#include <cmath>
#include <complex>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"
#include "interpreter/evaluator.h"
#include "interpreter/ops_internal.h"
#include "ir/hlo_text/parser.h"
#include "ir/literal.h"

namespace xjit::testing {

inline absl::StatusOr<Literal> RunHlo(absl::string_view text,
                                      const std::vector<Literal>& arguments = {}) {
  auto module = ParseHloModule(text);
  if (!module.ok()) return module.status();
  return EvaluateModule(**module, arguments);
}

// The literal written as "shape value", e.g. "f32[2]{0} {1, 2}".
inline Literal Lit(absl::string_view text) {
  auto literal = ParseLiteral(text);
  EXPECT_TRUE(literal.ok()) << literal.status() << " for " << text;
  return literal.ok() ? std::move(*literal) : Literal();
}

inline ::testing::AssertionResult LiteralsNear(const Literal& actual, const Literal& expected,
                                               double tolerance) {
  if (actual.shape().IsTuple() || expected.shape().IsTuple()) {
    if (actual.shape().IsTuple() != expected.shape().IsTuple() ||
        actual.elements().size() != expected.elements().size()) {
      return ::testing::AssertionFailure() << "tuple structure differs: " << actual.ToString()
                                           << " vs " << expected.ToString();
    }
    for (size_t i = 0; i < actual.elements().size(); ++i) {
      auto r = LiteralsNear(actual.element(i), expected.element(i), tolerance);
      if (!r) return r << " (tuple element " << i << ")";
    }
    return ::testing::AssertionSuccess();
  }
  if (actual.shape().element_type() != expected.shape().element_type() ||
      actual.shape().dimensions() != expected.shape().dimensions()) {
    return ::testing::AssertionFailure() << "shape differs: " << actual.ToString() << " vs "
                                         << expected.ToString();
  }
  ::testing::AssertionResult result = ::testing::AssertionSuccess();
  auto status = eval::internal::ForEachIndex(
      actual.shape().dimensions(), [&](const eval::internal::Index& index) {
        std::complex<double> a = eval::internal::ReadComplex(actual, index);
        std::complex<double> e = eval::internal::ReadComplex(expected, index);
        auto close = [&](double x, double y) {
          if (std::isnan(x) || std::isnan(y)) return std::isnan(x) && std::isnan(y);
          if (std::isinf(x) || std::isinf(y)) return x == y;
          return std::abs(x - y) <= tolerance * (1.0 + std::abs(y));
        };
        if (!close(a.real(), e.real()) || !close(a.imag(), e.imag())) {
          result = ::testing::AssertionFailure() << "got " << actual.ToString() << "\nexpected "
                                                 << expected.ToString();
          return absl::InternalError("mismatch");
        }
        return absl::OkStatus();
      });
  (void)status;
  return result;
}

inline ::testing::AssertionResult LiteralsEqual(const Literal& actual, const Literal& expected) {
  if (actual == expected) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "got " << actual.ToString() << "\nexpected "
                                       << expected.ToString();
}

}  // namespace xjit::testing

#endif  // XJIT_TESTS_INTERPRETER_OPS_TEST_UTIL_H_
