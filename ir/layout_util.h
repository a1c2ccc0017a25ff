// Index arithmetic under a layout: logical multi-index <-> position in the
// physical element sequence, and the byte size of a shape. See layout.h for
// the meaning of tiles, tail padding and the older padded_dimensions form.
#ifndef XJIT_IR_LAYOUT_UTIL_H_
#define XJIT_IR_LAYOUT_UTIL_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "ir/shape.h"

namespace xjit {

// Checks that an array shape's layout is well formed: minor_to_major is a
// permutation of [0, rank), tiles are non-empty with positive dimensions
// (or `*`), alignment >= 1, element size fits the type, padded_dimensions has
// rank entries each >= the dimension. Messages say which rule failed.
absl::Status ValidateLayout(const Shape& shape);

// Number of element slots in the physical buffer, padding included.
int64_t PhysicalElementCount(const Shape& shape);

// Bits per element slot: the layout's element_size_in_bits if set, else
// 8 * ByteWidth(type).
int64_t ElementSizeInBits(const Shape& shape);

// Bytes of the array buffer: ceil(PhysicalElementCount * ElementSizeInBits / 8).
// For a tuple, the sum over its elements (xjit stores tuples as separate
// buffers; this is their total). Token: 0.
int64_t ByteSize(const Shape& shape);

// The most bytes one array (or a tuple's arrays together) may take: 2^48,
// the virtual address space of today's 64-bit CPUs. Every size derived from a
// shape that passes CheckedByteSize (elements, padded and tiled slots, bits,
// bytes, strides, offsets, and sums of a few thousand such sizes) fits in
// int64 with room to spare.
inline constexpr int64_t kMaxArrayBytes = int64_t{1} << 48;

// ByteSize, computed so that nothing overflows: an error when the element
// count, the padded or tiled slot count, the size in bits or the size in
// bytes overflows int64 or exceeds kMaxArrayBytes. The verifier applies it
// to every shape, and the C API to every shape it creates, so that the other
// functions here (which do not check) only see sizes that fit.
absl::StatusOr<int64_t> CheckedByteSize(const Shape& shape);

// Position of the element at `index` (one entry per logical dimension) in the
// physical element sequence.
int64_t LinearIndex(const Shape& shape, absl::Span<const int64_t> index);

// The inverse: the logical index stored at physical position `linear`, or
// nullopt if that position is padding.
std::optional<std::vector<int64_t>> MultiIndex(const Shape& shape, int64_t linear);

// Advances `index` to the next logical index in row-major order (last
// dimension fastest). Returns false after the last index.
bool NextIndex(absl::Span<const int64_t> dimensions, absl::Span<int64_t> index);

// Whether `shape` has the default layout with no tiles or padding (so that the
// physical order is the logical row-major order).
bool IsDefaultLayout(const Shape& shape);

// Whether `shape` is a static array whose elements lie one per element
// width at the positions its minor_to_major gives: a valid layout without
// tiles, padding or packed sub-byte elements.
bool IsPlainLayout(const Shape& shape);

// For a plain layout: each logical dimension's stride in elements.
std::vector<int64_t> PlainStrides(const Shape& shape);

// `shape` with every array given the default layout where it has none.
Shape WithDefaultLayouts(Shape shape);

}  // namespace xjit

#endif  // XJIT_IR_LAYOUT_UTIL_H_
