// Literal: a host array or tuple of any shape, stored in the physical form its
// layout describes (minor_to_major order, tiles, padding, packed sub-byte
// elements). Element access is by logical multi-index, so callers never see
// the layout unless they ask for the raw bytes.
//
// Element values cross the API as raw bit patterns (uint64_t, the low
// BitWidth bits) or through the typed helpers below. Floats narrower than 32
// bits (f16, bf16, f8*, f4*) are stored as their bit patterns; conversions to
// and from double live in ir/float_format.h.
#ifndef XJIT_IR_LITERAL_H_
#define XJIT_IR_LITERAL_H_

#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/shape.h"

namespace xjit {

class Literal {
 public:
  // The empty tuple.
  Literal() : Literal(Shape::Tuple({})) {}
  // A zero-filled literal of `shape` (every array gets the default layout if
  // it has none; padding elements are zero). Tuples get element literals.
  explicit Literal(const Shape& shape);

  const Shape& shape() const { return shape_; }

  // ---- Arrays ----
  // The physical bytes, ByteSize(shape) long. Copies of a literal share
  // their bytes until one of them writes: the non-const accessors (data(),
  // the setters) first copy bytes that another literal still holds. So
  // cloning a module, a computation or an instruction does not copy its
  // constants, and a constant of the documented 1 GiB cap compiles within
  // about twice its size (docs/limits.md). A span from the non-const data()
  // must not be written through after the literal has been copied.
  absl::Span<uint8_t> data();
  absl::Span<const uint8_t> data() const {
    return data_ != nullptr ? absl::Span<const uint8_t>(*data_) : absl::Span<const uint8_t>();
  }
  // The bytes for a holder that keeps them past this literal's life (an
  // executable's constants) without a copy: while the holder has them, this
  // literal and its copies write to copies of their own (data()), so the
  // holder's bytes never change. Null for tuples, tokens and arrays of no
  // bytes.
  std::shared_ptr<const std::vector<uint8_t>> SharedData() const { return data_; }
  // Whether this literal's bytes are held by another literal too (tests).
  bool SharesDataWith(const Literal& other) const {
    return data_ != nullptr && data_ == other.data_;
  }
  int64_t element_count() const { return shape_.element_count(); }

  // Raw element bits at a logical index; the value is zero-extended from the
  // type's bit width.
  uint64_t GetBits(absl::Span<const int64_t> index) const;
  void SetBits(absl::Span<const int64_t> index, uint64_t bits);

  // Typed views. Integers and PRED as int64 (unsigned values above INT64_MAX
  // wrap; use GetBits for u64); real floats as double; complex as
  // complex<double>. Setters round to the element type (round to nearest even
  // for floats, wrap-around for integers).
  int64_t GetInt(absl::Span<const int64_t> index) const;
  double GetDouble(absl::Span<const int64_t> index) const;
  std::complex<double> GetComplex(absl::Span<const int64_t> index) const;
  void SetInt(absl::Span<const int64_t> index, int64_t value);
  void SetDouble(absl::Span<const int64_t> index, double value);
  void SetComplex(absl::Span<const int64_t> index, std::complex<double> value);

  // Linear access in logical row-major order (index i of element_count()).
  uint64_t GetBitsLinear(int64_t i) const;
  void SetBitsLinear(int64_t i, uint64_t bits);

  // ---- Tuples ----
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>* mutable_elements() { return &elements_; }
  const Literal& element(int64_t i) const { return elements_[i]; }
  static Literal MakeTuple(std::vector<Literal> elements);

  // The same values under another layout of the same shape (arrays; tuples
  // element by element when `layout_shape` is a tuple of the same structure).
  Literal Relayout(const Shape& layout_shape) const;

  // Logical equality: same shape ignoring layout, same element bits. NaNs
  // compare by bit pattern.
  bool operator==(const Literal& other) const;
  bool operator!=(const Literal& other) const { return !(*this == other); }

  // HLO literal text without the shape: "{ { 1, 2 }, { 3, 4 } }", "1.5",
  // "(1, 2)" for tuples. Floats print with enough digits to round-trip.
  std::string ValueToString() const;
  // Shape then value: "f32[2]{0} {1, 2}". An array whose shape has dynamic
  // dimensions holds its runtime sizes there (the evaluator's convention), so
  // the bounds are unknown: it prints the sizes as plain dimensions, followed
  // by the runtime sizes in parentheses as XLA marks a dynamic literal, e.g.
  // "f32[3]{0}(3) {1, 2, 3}" (never "f32[<=3]", which would state a bound).
  std::string ToString() const;
  // The same with the bounds taken from `declared`, the shape the value was
  // declared with (an instruction's shape): exactly XLA's text,
  // "f32[<=4]{0}(3) {1, 2, 3}". Falls back to ToString() when the value does
  // not fit `declared`.
  std::string ToString(const Shape& declared) const;

  // Convenience constructors for tests and the builder.
  static Literal Scalar(ElementType type, double value);
  static Literal ScalarInt(ElementType type, int64_t value);
  static Literal FromDoubles(const Shape& shape, absl::Span<const double> row_major_values);
  static Literal FromInts(const Shape& shape, absl::Span<const int64_t> row_major_values);

 private:
  Shape shape_;
  // Null for tuples, tokens and arrays of no bytes; shared between copies
  // (copy on write, data()).
  std::shared_ptr<std::vector<uint8_t>> data_;
  std::vector<Literal> elements_;
};

}  // namespace xjit

#endif  // XJIT_IR_LITERAL_H_
