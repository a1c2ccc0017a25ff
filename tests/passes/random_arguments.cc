#include "tests/passes/random_arguments.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "ir/layout_util.h"

namespace xjit::testing {

absl::Status FillRandom(Literal* literal, std::mt19937_64& rng, bool specials, bool cycle) {
  const Shape& shape = literal->shape();
  if (shape.IsTuple()) {
    for (Literal& element : *literal->mutable_elements()) {
      absl::Status s = FillRandom(&element, rng, specials, cycle);
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::UnimplementedError("non-array parameter");
  const ElementType type = shape.element_type();
  std::vector<int64_t> index(shape.rank(), 0);
  if (shape.element_count() == 0) return absl::OkStatus();
  std::uniform_real_distribution<double> real(-4.0, 4.0);
  std::uniform_int_distribution<int> pick(0, 3);
  uint64_t next = 0;
  do {
    const bool special = specials && (cycle || pick(rng) == 0);
    const uint64_t which = cycle ? next++ : rng();
    if (IsFloat(type)) {
      static constexpr double kSpecials[] = {-0.0, NAN, 0.0, INFINITY, -INFINITY, 1.0, -1.0};
      double value = special ? kSpecials[which % 7] : real(rng);
      literal->SetDouble(index, value);
    } else if (IsComplex(type)) {
      literal->SetComplex(index, {real(rng), real(rng)});
    } else if (IsPred(type)) {
      literal->SetInt(index, static_cast<int64_t>(rng() & 1));
    } else {
      const int bits = BitWidth(type);
      if (special) {
        // Extremes: 0, the minimum and the maximum of the type.
        const uint64_t mask = bits >= 64 ? ~0ull : ((1ull << bits) - 1);
        uint64_t choices[] = {0, IsSignedInteger(type) ? (1ull << (bits - 1)) : 0,
                              IsSignedInteger(type) ? (mask >> 1) : mask};
        literal->SetBits(index, choices[which % 3]);
      } else if (IsSignedInteger(type)) {
        const int64_t limit = bits >= 5 ? 9 : (1 << (bits - 1)) - 1;
        literal->SetInt(index, static_cast<int64_t>(rng() % (2 * limit + 1)) - limit);
      } else {
        const int64_t limit = bits >= 5 ? 17 : (1 << bits);
        literal->SetInt(index, static_cast<int64_t>(rng() % limit));
      }
    }
  } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  return absl::OkStatus();
}

// Elementwise comparison within a relative tolerance; NaN equals NaN.
bool NearlyEqual(const Literal& a, const Literal& b, double tolerance, std::string* why) {
  if (!a.shape().Compatible(b.shape())) {
    *why = absl::StrCat("shapes differ: ", a.shape().ToString(), " vs ", b.shape().ToString());
    return false;
  }
  if (a.shape().IsTuple()) {
    for (int64_t i = 0; i < a.shape().tuple_size(); ++i) {
      if (!NearlyEqual(a.element(i), b.element(i), tolerance, why)) return false;
    }
    return true;
  }
  if (!a.shape().IsArray() || !(IsFloat(a.shape().element_type()))) {
    if (a == b) return true;
    *why = "non-float values differ";
    return false;
  }
  std::vector<int64_t> index(a.shape().rank(), 0);
  if (a.element_count() == 0) return true;
  do {
    const double x = a.GetDouble(index), y = b.GetDouble(index);
    if (std::isnan(x) && std::isnan(y)) continue;
    const double scale = std::max({1.0, std::fabs(x), std::fabs(y)});
    if (!(std::fabs(x - y) <= tolerance * scale)) {
      *why = absl::StrCat("element differs: ", x, " vs ", y);
      return false;
    }
  } while (NextIndex(a.shape().dimensions(), absl::MakeSpan(index)));
  return true;
}

absl::StatusOr<std::vector<Literal>> RandomArguments(const Module& module, uint64_t seed,
                                                     bool specials, bool cycle) {
  std::mt19937_64 rng(seed);
  std::vector<Literal> arguments;
  for (const Instruction* parameter : module.entry()->parameters()) {
    if (parameter == nullptr) return absl::InvalidArgumentError("missing parameter");
    Literal argument(parameter->shape());
    absl::Status filled = FillRandom(&argument, rng, specials, cycle);
    if (!filled.ok()) return filled;
    arguments.push_back(std::move(argument));
  }
  return arguments;
}

}  // namespace xjit::testing
