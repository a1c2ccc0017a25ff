// Shape: an array (element type, dimensions, optional layout), a tuple of
// shapes, a token or opaque. Dimensions may be dynamic: `f32[<=10]` is a
// dimension whose size at run time is at most 10 (the stored size is the
// bound); `f32[?]` is unbounded (stored as kUnboundedSize).
#ifndef XJIT_IR_SHAPE_H_
#define XJIT_IR_SHAPE_H_

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "ir/element_type.h"
#include "ir/layout.h"

namespace xjit {

class Shape {
 public:
  static constexpr int64_t kUnboundedSize = INT64_MIN;

  // An invalid shape (element type kTuple with no elements is the empty tuple;
  // a default-constructed Shape is the empty tuple too).
  Shape() = default;

  // An array with the default (major-to-minor) layout.
  static Shape Array(ElementType type, absl::Span<const int64_t> dimensions);
  static Shape Array(ElementType type, std::initializer_list<int64_t> dimensions) {
    return Array(type, absl::Span<const int64_t>(dimensions.begin(), dimensions.size()));
  }
  // An array with the given minor_to_major layout.
  static Shape ArrayWithLayout(ElementType type, absl::Span<const int64_t> dimensions,
                               absl::Span<const int64_t> minor_to_major);
  static Shape Scalar(ElementType type) { return Array(type, {}); }
  static Shape Tuple(std::vector<Shape> elements);
  static Shape Token();
  static Shape Opaque();

  ElementType element_type() const { return element_type_; }
  void set_element_type(ElementType type) { element_type_ = type; }

  bool IsArray() const { return IsArrayElementType(element_type_); }
  bool IsTuple() const { return element_type_ == ElementType::kTuple; }
  bool IsToken() const { return element_type_ == ElementType::kToken; }
  bool IsOpaque() const { return element_type_ == ElementType::kOpaque; }
  bool IsScalar() const { return IsArray() && dimensions_.empty(); }

  // Arrays only.
  int64_t rank() const { return static_cast<int64_t>(dimensions_.size()); }
  absl::Span<const int64_t> dimensions() const { return dimensions_; }
  int64_t dimensions(int64_t i) const { return dimensions_[i]; }
  void set_dimensions(int64_t i, int64_t size) { dimensions_[i] = size; }
  bool is_dynamic_dimension(int64_t i) const { return dynamic_[i]; }
  void set_dynamic_dimension(int64_t i, bool dynamic) { dynamic_[i] = dynamic; }
  bool is_dynamic() const;  // Any dimension dynamic (recursively for tuples).
  // Number of logical elements (product of dimensions; 1 for a scalar).
  int64_t element_count() const;

  // Every array has a layout once it is in a module: the parser and builder
  // fill in the default where none is written.
  bool has_layout() const { return layout_.has_value(); }
  const Layout& layout() const { return *layout_; }
  Layout* mutable_layout() { return &*layout_; }
  void set_layout(Layout layout) { layout_ = std::move(layout); }
  void clear_layout() { layout_.reset(); }

  // Tuples only.
  const std::vector<Shape>& tuple_shapes() const { return tuple_shapes_; }
  std::vector<Shape>* mutable_tuple_shapes() { return &tuple_shapes_; }
  const Shape& tuple_shapes(int64_t i) const { return tuple_shapes_[i]; }
  int64_t tuple_size() const { return static_cast<int64_t>(tuple_shapes_.size()); }

  // Exact equality: type, dimensions, dynamic flags, layouts (if both have
  // one; a shape without layout equals one with any layout) and tuple elements.
  bool operator==(const Shape& other) const;
  bool operator!=(const Shape& other) const { return !(*this == other); }
  // Equality ignoring layouts.
  bool Compatible(const Shape& other) const;
  // Same dimensions and element type, ignoring layouts and dynamic flags.
  bool SameDimensions(const Shape& other) const { return dimensions_ == other.dimensions_; }

  // HLO text: "f32[2,3]{1,0}", "(s32[], f32[<=4]{0})", "token[]". Layouts are
  // printed for arrays of rank >= 1 (and for scalars only when they carry more
  // than an empty minor_to_major).
  std::string ToString(bool print_layout = true) const;

 private:
  ElementType element_type_ = ElementType::kTuple;
  std::vector<int64_t> dimensions_;
  std::vector<bool> dynamic_;
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// A path into a tuple shape: {} is the whole shape, {1, 0} is element 0 of
// element 1.
using ShapeIndex = std::vector<int64_t>;

// The subshape at `index`; CHECK-fails on an invalid index (callers validate).
const Shape& Subshape(const Shape& shape, const ShapeIndex& index);

}  // namespace xjit

#endif  // XJIT_IR_SHAPE_H_
