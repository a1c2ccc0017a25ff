#include "ir/shape.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "ir/status_macros.h"

namespace xjit {

Shape Shape::Array(ElementType type, absl::Span<const int64_t> dimensions) {
  Shape shape;
  shape.element_type_ = type;
  shape.dimensions_.assign(dimensions.begin(), dimensions.end());
  shape.dynamic_.assign(dimensions.size(), false);
  shape.layout_ = Layout::Default(static_cast<int64_t>(dimensions.size()));
  return shape;
}

Shape Shape::ArrayWithLayout(ElementType type, absl::Span<const int64_t> dimensions,
                             absl::Span<const int64_t> minor_to_major) {
  Shape shape = Array(type, dimensions);
  shape.layout_->minor_to_major.assign(minor_to_major.begin(), minor_to_major.end());
  return shape;
}

Shape Shape::Tuple(std::vector<Shape> elements) {
  Shape shape;
  shape.element_type_ = ElementType::kTuple;
  shape.tuple_shapes_ = std::move(elements);
  return shape;
}

Shape Shape::Token() {
  Shape shape;
  shape.element_type_ = ElementType::kToken;
  return shape;
}

Shape Shape::Opaque() {
  Shape shape;
  shape.element_type_ = ElementType::kOpaque;
  return shape;
}

bool Shape::is_dynamic() const {
  if (IsTuple()) {
    for (const Shape& s : tuple_shapes_) {
      if (s.is_dynamic()) return true;
    }
    return false;
  }
  for (bool d : dynamic_) {
    if (d) return true;
  }
  return false;
}

int64_t Shape::element_count() const {
  int64_t n = 1;
  for (int64_t d : dimensions_) n *= d;
  return n;
}

bool Shape::operator==(const Shape& other) const {
  if (!Compatible(other)) return false;
  if (dynamic_ != other.dynamic_) return false;
  if (IsTuple()) {
    for (int64_t i = 0; i < tuple_size(); ++i) {
      if (tuple_shapes_[i] != other.tuple_shapes_[i]) return false;
    }
    return true;
  }
  if (layout_.has_value() && other.layout_.has_value()) return *layout_ == *other.layout_;
  return true;
}

bool Shape::Compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (IsTuple()) {
    if (tuple_size() != other.tuple_size()) return false;
    for (int64_t i = 0; i < tuple_size(); ++i) {
      if (!tuple_shapes_[i].Compatible(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return dimensions_ == other.dimensions_;
}

std::string Shape::ToString(bool print_layout) const {
  if (IsTuple()) {
    return absl::StrCat("(",
                        absl::StrJoin(tuple_shapes_, ", ",
                                      [print_layout](std::string* out, const Shape& s) {
                                        absl::StrAppend(out, s.ToString(print_layout));
                                      }),
                        ")");
  }
  std::string out(ElementTypeName(element_type_));
  absl::StrAppend(&out, "[");
  for (size_t i = 0; i < dimensions_.size(); ++i) {
    if (i > 0) absl::StrAppend(&out, ",");
    if (dimensions_[i] == kUnboundedSize) {
      absl::StrAppend(&out, "?");
    } else {
      absl::StrAppend(&out, dynamic_[i] ? "<=" : "", dimensions_[i]);
    }
  }
  absl::StrAppend(&out, "]");
  if (print_layout && IsArray() && layout_.has_value() &&
      (!dimensions_.empty() || !layout_->IsPlain())) {
    absl::StrAppend(&out, "{", layout_->ToString(), "}");
  }
  return out;
}

const Shape& Subshape(const Shape& shape, const ShapeIndex& index) {
  const Shape* s = &shape;
  for (int64_t i : index) {
    XJIT_CHECK(s->IsTuple() && i >= 0 && i < s->tuple_size());
    s = &s->tuple_shapes(i);
  }
  return *s;
}

}  // namespace xjit
