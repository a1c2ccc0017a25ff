#include "ir/layout.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xjit {
namespace {

std::string PaddingValueName(PaddingValue value) {
  switch (value) {
    case PaddingValue::kZero: return "zero";
    case PaddingValue::kOne: return "one";
    case PaddingValue::kLowest: return "lowest";
    case PaddingValue::kHighest: return "highest";
  }
  return "zero";
}

}  // namespace

Layout Layout::Default(int64_t rank) {
  Layout layout;
  for (int64_t i = rank - 1; i >= 0; --i) layout.minor_to_major.push_back(i);
  return layout;
}

bool Layout::IsPlain() const {
  Layout plain;
  plain.minor_to_major = minor_to_major;
  return *this == plain;
}

std::string Layout::ToString() const {
  std::string out = absl::StrJoin(minor_to_major, ",");
  if (IsPlain()) return out;
  absl::StrAppend(&out, ":");
  if (!dim_level_types.empty()) absl::StrAppend(&out, "D(", absl::StrJoin(dim_level_types, ","), ")");
  if (!tiles.empty()) {
    absl::StrAppend(&out, "T");
    for (const Tile& tile : tiles) {
      absl::StrAppend(&out, "(",
                      absl::StrJoin(tile.dimensions, ",",
                                    [](std::string* s, int64_t d) {
                                      absl::StrAppend(s, d == Tile::kCombineDimension
                                                             ? std::string("*")
                                                             : absl::StrCat(d));
                                    }),
                      ")");
    }
  }
  if (tail_padding_alignment_in_elements != 1) {
    absl::StrAppend(&out, "L(", tail_padding_alignment_in_elements, ")");
  }
  if (index_type != ElementType::kTuple) absl::StrAppend(&out, "#(", ElementTypeName(index_type), ")");
  if (pointer_type != ElementType::kTuple) {
    absl::StrAppend(&out, "*(", ElementTypeName(pointer_type), ")");
  }
  if (element_size_in_bits != 0) absl::StrAppend(&out, "E(", element_size_in_bits, ")");
  if (memory_space != 0) absl::StrAppend(&out, "S(", memory_space, ")");
  for (const std::string& split : split_configs) absl::StrAppend(&out, "SC(", split, ")");
  if (!physical_shape.empty()) absl::StrAppend(&out, "P(", physical_shape, ")");
  if (dynamic_shape_metadata_prefix_bytes != 0) {
    absl::StrAppend(&out, "M(", dynamic_shape_metadata_prefix_bytes, ")");
  }
  if (!padded_dimensions.empty()) {
    absl::StrAppend(&out, "PD(", absl::StrJoin(padded_dimensions, ","), ")");
    if (padding_value != PaddingValue::kZero) {
      absl::StrAppend(&out, "PV(", PaddingValueName(padding_value), ")");
    }
  }
  return out;
}

}  // namespace xjit
