#include "tests/interpreter/evaluator_test_util.h"

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "ir/hlo_text/parser.h"
#include "ir/status_macros.h"

namespace xjit::testing {
namespace {

// Row-major walk over the logical indices, written independently of the
// evaluator's own helper.
template <typename F>
void Walk(const Shape& shape, F f) {
  const int64_t rank = shape.rank();
  int64_t count = 1;
  for (int64_t d : shape.dimensions()) count *= d;
  std::vector<int64_t> index(rank, 0);
  for (int64_t n = 0; n < count; ++n) {
    int64_t rest = n;
    for (int64_t i = rank - 1; i >= 0; --i) {
      index[i] = rest % shape.dimensions(i);
      rest /= shape.dimensions(i);
    }
    f(absl::Span<const int64_t>(index));
  }
}

Shape MustParseShape(const std::string& text) {
  absl::StatusOr<Shape> shape = ParseShape(text);
  EXPECT_TRUE(shape.ok()) << shape.status();
  return shape.ok() ? *shape : Shape::Scalar(ElementType::kF32);
}

}  // namespace

absl::StatusOr<Literal> RunHlo(absl::string_view hlo, const std::vector<Literal>& arguments,
                               const EvaluatorOptions& options) {
  XJIT_ASSIGN_OR_RETURN(std::unique_ptr<Module> module, ParseHloModule(hlo));
  return EvaluateModule(*module, arguments, options);
}

absl::StatusOr<Literal> RunOne(const std::vector<std::string>& parameter_shapes,
                               absl::string_view root, const std::vector<Literal>& arguments) {
  std::string text = "HloModule m\n\nENTRY e {\n";
  for (size_t i = 0; i < parameter_shapes.size(); ++i) {
    absl::StrAppend(&text, "  p", i, " = ", parameter_shapes[i], " parameter(", i, ")\n");
  }
  absl::StrAppend(&text, "  ROOT r = ", root, "\n}\n");
  return RunHlo(text, arguments);
}

std::vector<int64_t> Ints(const Literal& literal) {
  std::vector<int64_t> out;
  Walk(literal.shape(), [&](absl::Span<const int64_t> i) { out.push_back(literal.GetInt(i)); });
  return out;
}

std::vector<uint64_t> Bits(const Literal& literal) {
  std::vector<uint64_t> out;
  Walk(literal.shape(), [&](absl::Span<const int64_t> i) { out.push_back(literal.GetBits(i)); });
  return out;
}

std::vector<double> Doubles(const Literal& literal) {
  std::vector<double> out;
  Walk(literal.shape(), [&](absl::Span<const int64_t> i) { out.push_back(literal.GetDouble(i)); });
  return out;
}

std::vector<std::complex<double>> Complexes(const Literal& literal) {
  std::vector<std::complex<double>> out;
  Walk(literal.shape(), [&](absl::Span<const int64_t> i) { out.push_back(literal.GetComplex(i)); });
  return out;
}

Literal Ints(const std::string& shape, const std::vector<int64_t>& values) {
  return Literal::FromInts(MustParseShape(shape), values);
}

Literal Doubles(const std::string& shape, const std::vector<double>& values) {
  return Literal::FromDoubles(MustParseShape(shape), values);
}

Literal BitsLiteral(const std::string& shape, const std::vector<uint64_t>& values) {
  Literal literal(MustParseShape(shape));
  size_t n = 0;
  Walk(literal.shape(), [&](absl::Span<const int64_t> i) {
    if (n < values.size()) literal.SetBits(i, values[n++]);
  });
  return literal;
}

}  // namespace xjit::testing
