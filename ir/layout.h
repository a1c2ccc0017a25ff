// Layout: how an array's elements are placed in linear memory.
//
// minor_to_major lists the dimensions from the fastest-varying to the slowest.
// Tiles (XLA's tiled layouts, `T(8,128)(2,1)`) are applied in order: the first
// tile splits the minor-most dimensions of the (physically ordered) shape into
// tile-count and within-tile dimensions, padding each split dimension to a
// whole number of tiles; each following tile applies the same way to the shape
// the previous one produced. The physical element sequence is the row-major
// order of the final shape, padded at the end to a multiple of
// tail_padding_alignment_in_elements.
//
// The older form of 000/001 (`padded_dimensions`, `padding_value`) pads each
// logical dimension to a given size before minor_to_major ordering; HLO text has
// no syntax for it, so xjit writes it as `PD(3,5)` and `PV(zero)` inside the
// layout braces (an xjit extension, documented in docs/hlo_text.md).
#ifndef XJIT_IR_LAYOUT_H_
#define XJIT_IR_LAYOUT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "ir/element_type.h"

namespace xjit {

struct Tile {
  // A dimension of kCombineDimension (`*` in text) merges that dimension of
  // the shape with the next minor one before tiling.
  static constexpr int64_t kCombineDimension = -1;
  std::vector<int64_t> dimensions;

  bool operator==(const Tile&) const = default;
};

// The padding values of the older layout form (000/001).
enum class PaddingValue : uint8_t { kZero, kOne, kLowest, kHighest };

struct Layout {
  std::vector<int64_t> minor_to_major;
  // `D(D,C+,S~)`: sparse dimension-level types, kept as written.
  std::vector<std::string> dim_level_types;
  std::vector<Tile> tiles;
  int64_t tail_padding_alignment_in_elements = 1;  // `L(n)`
  ElementType index_type = ElementType::kTuple;    // `#(u32)`; kTuple = unset
  ElementType pointer_type = ElementType::kTuple;  // `*(u32)`; kTuple = unset
  int64_t element_size_in_bits = 0;                // `E(n)`; 0 = natural width
  int64_t memory_space = 0;                        // `S(n)`
  // `SC(..)` split configs and `P(shape)` physical shape, kept as written
  // (without the SC(/P( wrapper) since nothing on a CPU interprets them.
  std::vector<std::string> split_configs;
  std::string physical_shape;
  int64_t dynamic_shape_metadata_prefix_bytes = 0;  // `M(n)`
  // The older form: per logical dimension, the padded size (empty = none).
  std::vector<int64_t> padded_dimensions;
  PaddingValue padding_value = PaddingValue::kZero;

  bool operator==(const Layout&) const = default;

  // Major-to-minor default: {rank-1, ..., 1, 0}.
  static Layout Default(int64_t rank);
  // True when only minor_to_major is set (no tiles, padding, memory space...).
  bool IsPlain() const;
  // Text as it appears between the braces, e.g. "1,0:T(8,128)(2,1)S(1)".
  std::string ToString() const;
};

}  // namespace xjit

#endif  // XJIT_IR_LAYOUT_H_
