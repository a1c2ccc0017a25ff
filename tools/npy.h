// NumPy .npy files: reading (format versions 1.0, 2.0 and 3.0; little- and
// big-endian; C and Fortran order) and writing (version 1.0, C order,
// little-endian; 2.0 only when the header does not fit 1.0), and the mapping
// between .npy arrays and xjit literals.
//
// The mapping (shared/DESIGN.md, "The xjit command line"): an array is in
// logical C order whatever the literal's layout. Types numpy stores natively
// map one to one (pred <-> bool, sN <-> intN, uN <-> uintN, f16/f32/f64 <->
// float16/32/64, c64/c128 <-> complex64/128). Types numpy lacks travel as raw
// bits: bf16 as uint16, every f8 and f4 type as uint8. Sub-byte integers
// travel one element per byte: s1/s2/s4 as int8 and u1/u2/u4 as uint8, and a
// value outside the type's range is an error rather than silently wrapped.
//
// Nothing here aborts on a malformed file: every problem is a Status whose
// message says what was expected and what was found.
#ifndef XJIT_TOOLS_NPY_H_
#define XJIT_TOOLS_NPY_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "ir/element_type.h"
#include "ir/literal.h"
#include "ir/shape.h"

namespace xjit::npy {

// A numpy scalar type: kind is 'b' (bool), 'i' (signed integer), 'u'
// (unsigned integer), 'f' (real float) or 'c' (complex); item_size in bytes.
struct Dtype {
  char kind = 'f';
  int item_size = 4;

  bool operator==(const Dtype&) const = default;
  // numpy's name: "bool", "int8", "uint16", "float32", "complex64", ...
  std::string Name() const;
  // The little-endian descr written to files: "|b1", "<f4", "<c16", ...
  std::string Descr() const;
};

// A decoded array. `data` always holds element_count() * item_size bytes in
// C order and little-endian byte order, whatever the file used.
struct Array {
  Dtype dtype;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;

  int64_t element_count() const;
};

// "(2, 3)", "(4,)", "()": the shape as numpy prints it.
std::string ShapeString(const std::vector<int64_t>& shape);

// Parses the bytes of a .npy file.
absl::StatusOr<Array> ParseNpy(absl::string_view bytes);
// The bytes of a .npy file holding `array` (which must be consistent:
// data.size() == element_count() * item_size).
std::string SerializeNpy(const Array& array);

absl::StatusOr<Array> ReadNpyFile(const std::string& path);
absl::Status WriteNpyFile(const std::string& path, const Array& array);
// Writes `literal` (an array) as a .npy file in logical C order, converting
// and writing about 1 MiB of elements at a time, so that writing needs no
// second copy of the literal. A file that cannot be written in full is
// removed, never left empty or short.
absl::Status WriteNpyFile(const std::string& path, const Literal& literal);

// The dtype an array of `type` travels as; an error for token, tuple, opaque.
absl::StatusOr<Dtype> DtypeFor(ElementType type);

// A literal of `shape` (an array shape; its layout is kept) holding the
// values of `array`. Errors say "expected DTYPE SHAPE, found DTYPE SHAPE" or
// name the first element out of range for a sub-byte type.
absl::StatusOr<Literal> LiteralFromArray(const Array& array, const Shape& shape);
// The array for an array literal, in logical C order.
absl::StatusOr<Array> ArrayFromLiteral(const Literal& literal);

}  // namespace xjit::npy

#endif  // XJIT_TOOLS_NPY_H_
