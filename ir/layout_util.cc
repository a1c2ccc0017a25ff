// Index arithmetic under a layout (see layout.h and layout_util.h).
//
// A logical index is mapped to a physical position in three steps:
//   1. the older form's padded_dimensions replace the logical sizes (the
//      index is unchanged, so the extra slots are padding);
//   2. sizes and index are permuted into physical major-to-minor order
//      (the reverse of minor_to_major);
//   3. each tile in turn rewrites the minor-most dimensions: a tile with k
//      entries takes the k minor-most dimensions (prepending size-1 dimensions
//      if the shape has fewer), merges every `*` dimension into the next minor
//      one, and splits each remaining dimension d with tile size t into a
//      tile-count dimension ceil(d/t) and a within-tile dimension t; all count
//      dimensions come before all within-tile dimensions.
// The position is the row-major position in the final shape; the buffer is
// then padded to a multiple of tail_padding_alignment_in_elements.
//
// A shape without a layout is treated as having the default layout. Invalid
// layouts (which ValidateLayout reports) never crash the arithmetic: a
// non-positive tile size acts as 1 and a malformed minor_to_major falls back
// to the default order.
#include "ir/layout_util.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace xjit {
namespace {

// Unbounded dynamic sizes (and any other negative size) hold no elements.
int64_t SizeOrZero(int64_t size) { return size < 0 ? 0 : size; }

// For a >= 0, b > 0; written so that no intermediate value can overflow.
int64_t CeilDiv(int64_t a, int64_t b) { return a / b + (a % b != 0 ? 1 : 0); }

bool IsPermutation(absl::Span<const int64_t> perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  if (rank <= 64) {  // The common case, without allocating.
    uint64_t seen = 0;
    for (int64_t d : perm) {
      if (d < 0 || d >= rank || (seen >> d) & 1) return false;
      seen |= uint64_t{1} << d;
    }
    return true;
  }
  std::vector<bool> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 0 || d >= rank || seen[d]) return false;
    seen[d] = true;
  }
  return true;
}

// The layout to use for index arithmetic: the shape's own, or the default.
Layout EffectiveLayout(const Shape& shape) {
  if (shape.has_layout() && IsPermutation(shape.layout().minor_to_major, shape.rank())) {
    return shape.layout();
  }
  Layout layout = shape.has_layout() ? shape.layout() : Layout();
  layout.minor_to_major = Layout::Default(shape.rank()).minor_to_major;
  return layout;
}

// Logical sizes after the older form's padding.
std::vector<int64_t> PaddedSizes(const Shape& shape, const Layout& layout) {
  std::vector<int64_t> sizes;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    int64_t size = SizeOrZero(shape.dimensions(i));
    if (layout.padded_dimensions.size() == static_cast<size_t>(shape.rank())) {
      size = std::max(size, layout.padded_dimensions[i]);
    }
    sizes.push_back(size);
  }
  return sizes;
}

// One dimension of a tile after `*` merging: the merged size and tile size.
struct TileGroup {
  int64_t size;
  int64_t tile;
  int first;  // First shape dimension (relative to the tiled block) merged here.
  int count;  // Number of shape dimensions merged here.
};

// Groups the k minor-most dimensions `block` (already k long) by the tile's
// `*` entries.
std::vector<TileGroup> GroupTile(const Tile& tile, absl::Span<const int64_t> block) {
  std::vector<TileGroup> groups;
  int64_t size = 1;
  int first = 0;
  const int k = static_cast<int>(tile.dimensions.size());
  for (int p = 0; p < k; ++p) {
    size *= block[p];
    int64_t t = tile.dimensions[p];
    if (t == Tile::kCombineDimension && p + 1 < k) continue;
    // A trailing `*` (invalid) keeps the merged dimension whole.
    if (t == Tile::kCombineDimension) t = std::max<int64_t>(size, 1);
    if (t <= 0) t = 1;
    groups.push_back({size, t, first, p + 1 - first});
    size = 1;
    first = p + 1;
  }
  return groups;
}

// Applies one tile to `sizes` and, when given, to `index`.
void ApplyTile(const Tile& tile, std::vector<int64_t>* sizes, std::vector<int64_t>* index) {
  const size_t k = tile.dimensions.size();
  if (k == 0) return;
  if (sizes->size() < k) {
    const size_t extra = k - sizes->size();
    sizes->insert(sizes->begin(), extra, 1);
    if (index != nullptr) index->insert(index->begin(), extra, 0);
  }
  const size_t start = sizes->size() - k;
  std::vector<TileGroup> groups =
      GroupTile(tile, absl::MakeConstSpan(*sizes).subspan(start));
  std::vector<int64_t> new_sizes(sizes->begin(), sizes->begin() + start);
  for (const TileGroup& g : groups) new_sizes.push_back(CeilDiv(g.size, g.tile));
  for (const TileGroup& g : groups) new_sizes.push_back(g.tile);
  if (index != nullptr) {
    std::vector<int64_t> new_index(index->begin(), index->begin() + start);
    std::vector<int64_t> merged;
    for (const TileGroup& g : groups) {
      int64_t m = 0;
      for (int q = 0; q < g.count; ++q) {
        m = m * (*sizes)[start + g.first + q] + (*index)[start + g.first + q];
      }
      merged.push_back(m);
    }
    for (size_t q = 0; q < groups.size(); ++q) new_index.push_back(merged[q] / groups[q].tile);
    for (size_t q = 0; q < groups.size(); ++q) new_index.push_back(merged[q] % groups[q].tile);
    *index = std::move(new_index);
  }
  *sizes = std::move(new_sizes);
}

// Undoes ApplyTile on an index; `before` is the size vector the tile was
// applied to. Returns false when the index lies in the tile's padding.
bool UnapplyTile(const Tile& tile, const std::vector<int64_t>& before,
                 std::vector<int64_t>* index) {
  const size_t k = tile.dimensions.size();
  if (k == 0) return true;
  std::vector<int64_t> sizes = before;
  size_t extra = 0;
  if (sizes.size() < k) {
    extra = k - sizes.size();
    sizes.insert(sizes.begin(), extra, 1);
  }
  const size_t start = sizes.size() - k;
  std::vector<TileGroup> groups = GroupTile(tile, absl::MakeConstSpan(sizes).subspan(start));
  const size_t g = groups.size();
  std::vector<int64_t> result(index->begin(), index->begin() + start);
  result.resize(sizes.size());
  for (size_t q = 0; q < g; ++q) {
    int64_t m = (*index)[start + q] * groups[q].tile + (*index)[start + g + q];
    if (m >= groups[q].size) return false;
    for (int p = groups[q].count - 1; p >= 0; --p) {
      const int64_t dim = sizes[start + groups[q].first + p];
      result[start + groups[q].first + p] = m % dim;
      m /= dim;
    }
  }
  result.erase(result.begin(), result.begin() + extra);
  *index = std::move(result);
  return true;
}

int64_t RoundUp(int64_t n, int64_t alignment) {
  if (alignment <= 1) return n;
  return CeilDiv(n, alignment) * alignment;
}

int64_t Product(absl::Span<const int64_t> sizes) {
  int64_t n = 1;
  for (int64_t s : sizes) n *= s;
  return n;
}

// Sizes in physical major-to-minor order, before tiling.
std::vector<int64_t> PhysicalSizes(const Shape& shape, const Layout& layout) {
  std::vector<int64_t> padded = PaddedSizes(shape, layout);
  std::vector<int64_t> sizes;
  for (int64_t j = shape.rank() - 1; j >= 0; --j) sizes.push_back(padded[layout.minor_to_major[j]]);
  return sizes;
}

// The final (tiled) sizes.
std::vector<int64_t> TiledSizes(const Shape& shape, const Layout& layout) {
  std::vector<int64_t> sizes = PhysicalSizes(shape, layout);
  for (const Tile& tile : layout.tiles) ApplyTile(tile, &sizes, nullptr);
  return sizes;
}

// Like TiledSizes, but fails where a merged, tile-rounded or total size
// would not fit in int64 (TiledSizes' own arithmetic would wrap around).
absl::StatusOr<std::vector<int64_t>> CheckedTiledSizes(const Shape& shape, const Layout& layout) {
  std::vector<int64_t> sizes = PhysicalSizes(shape, layout);
  for (const Tile& tile : layout.tiles) {
    const size_t k = tile.dimensions.size();
    if (k == 0) continue;
    // The tile's k minor-most dimensions, with size-1 ones prepended.
    std::vector<int64_t> block(k > sizes.size() ? k - sizes.size() : 0, 1);
    block.insert(block.end(), sizes.end() - std::min(k, sizes.size()), sizes.end());
    int64_t merged = 1;
    for (size_t p = 0; p < k; ++p) {
      if (__builtin_mul_overflow(merged, block[p], &merged)) {
        return absl::InvalidArgumentError("merged tile dimensions overflow");
      }
      const int64_t t = tile.dimensions[p];
      if (t == Tile::kCombineDimension && p + 1 < k) continue;
      const int64_t tile_size = t <= 0 ? std::max<int64_t>(merged, 1) : t;
      int64_t rounded;
      if (__builtin_mul_overflow(CeilDiv(merged, tile_size), tile_size, &rounded)) {
        return absl::InvalidArgumentError(
            absl::StrCat("a dimension padded to tile size ", tile_size, " overflows"));
      }
      merged = 1;
    }
    ApplyTile(tile, &sizes, nullptr);
  }
  return sizes;
}

absl::Status ValidateArrayLayout(const Shape& shape) {
  if (!shape.has_layout()) return absl::OkStatus();
  const Layout& layout = shape.layout();
  const int64_t rank = shape.rank();
  if (!IsPermutation(layout.minor_to_major, rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("layout {", absl::StrJoin(layout.minor_to_major, ","),
                     "} is not a permutation of the dimensions of ", shape.ToString(false)));
  }
  for (const Tile& tile : layout.tiles) {
    if (tile.dimensions.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("empty tile in layout of ", shape.ToString()));
    }
    for (size_t p = 0; p < tile.dimensions.size(); ++p) {
      const int64_t t = tile.dimensions[p];
      if (t == Tile::kCombineDimension) {
        if (p + 1 == tile.dimensions.size()) {
          return absl::InvalidArgumentError(absl::StrCat(
              "tile in layout of ", shape.ToString(), " ends with '*' (nothing to combine with)"));
        }
        continue;
      }
      if (t <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tile dimension ", t, " in layout of ", shape.ToString(), " is not positive"));
      }
    }
  }
  if (layout.tail_padding_alignment_in_elements < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("tail padding alignment ", layout.tail_padding_alignment_in_elements,
                     " in layout of ", shape.ToString(), " must be at least 1"));
  }
  const int64_t bits = layout.element_size_in_bits;
  if (bits != 0) {
    const ElementType type = shape.element_type();
    // PRED holds one bit of information, so it may be packed down to one bit.
    const int64_t min_bits = IsPred(type) ? 1 : BitWidth(type);
    const bool shape_ok = bits < 8 ? (8 % bits == 0) : (bits % 8 == 0);
    if (bits < 0 || bits < min_bits || !shape_ok || bits > 8 * ByteWidth(type)) {
      return absl::InvalidArgumentError(absl::StrCat("element size ", bits,
                                                     " bits does not fit element type ",
                                                     ElementTypeName(type)));
    }
  }
  if (!layout.padded_dimensions.empty()) {
    if (static_cast<int64_t>(layout.padded_dimensions.size()) != rank) {
      return absl::InvalidArgumentError(
          absl::StrCat("padded_dimensions has ", layout.padded_dimensions.size(),
                       " entries but the shape ", shape.ToString(false), " has rank ", rank));
    }
    for (int64_t i = 0; i < rank; ++i) {
      if (layout.padded_dimensions[i] < shape.dimensions(i)) {
        return absl::InvalidArgumentError(
            absl::StrCat("padded dimension ", i, " (", layout.padded_dimensions[i],
                         ") is smaller than the dimension (", shape.dimensions(i), ")"));
      }
    }
  }
  if (layout.memory_space < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative memory space in layout of ", shape.ToString()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ValidateLayout(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      absl::Status status = ValidateLayout(element);
      if (!status.ok()) return status;
    }
    return absl::OkStatus();
  }
  if (!shape.IsArray()) return absl::OkStatus();
  return ValidateArrayLayout(shape);
}

int64_t PhysicalElementCount(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  const Layout layout = EffectiveLayout(shape);
  const int64_t count = Product(TiledSizes(shape, layout));
  return RoundUp(count, layout.tail_padding_alignment_in_elements);
}

absl::StatusOr<int64_t> CheckedByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) {
      absl::StatusOr<int64_t> bytes = CheckedByteSize(element);
      if (!bytes.ok()) return bytes.status();
      if (__builtin_add_overflow(total, *bytes, &total) || total > kMaxArrayBytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("tuple ", shape.ToString(false), " holds more than ", kMaxArrayBytes,
                         " bytes"));
      }
    }
    return total;
  }
  if (!shape.IsArray()) return 0;
  const auto too_large = [&shape](absl::string_view what) {
    return absl::InvalidArgumentError(absl::StrCat("shape ", shape.ToString(), " is too large: ",
                                                   what, " (at most ", kMaxArrayBytes,
                                                   " bytes per array)"));
  };
  const Layout layout = EffectiveLayout(shape);
  int64_t count = 1;
  for (int64_t i = 0; i < shape.rank(); ++i) {
    if (__builtin_mul_overflow(count, SizeOrZero(shape.dimensions(i)), &count)) {
      return too_large("its element count overflows");
    }
  }
  absl::StatusOr<std::vector<int64_t>> tiled = CheckedTiledSizes(shape, layout);
  if (!tiled.ok()) return too_large(tiled.status().message());
  int64_t slots = 1;
  for (int64_t size : *tiled) {
    if (__builtin_mul_overflow(slots, size, &slots)) {
      return too_large("its padded or tiled element count overflows");
    }
  }
  const int64_t alignment = std::max<int64_t>(layout.tail_padding_alignment_in_elements, 1);
  if (__builtin_mul_overflow(CeilDiv(slots, alignment), alignment, &slots)) {
    return too_large("its tail padding overflows");
  }
  int64_t bits;
  if (__builtin_mul_overflow(slots, ElementSizeInBits(shape), &bits)) {
    return too_large("its size in bits overflows");
  }
  const int64_t bytes = CeilDiv(bits, 8);
  if (bytes > kMaxArrayBytes) return too_large(absl::StrCat(bytes, " bytes"));
  return bytes;
}

int64_t ElementSizeInBits(const Shape& shape) {
  if (!shape.IsArray()) return 0;
  if (shape.has_layout() && shape.layout().element_size_in_bits > 0) {
    return shape.layout().element_size_in_bits;
  }
  return 8 * ByteWidth(shape.element_type());
}

int64_t ByteSize(const Shape& shape) {
  if (shape.IsTuple()) {
    int64_t total = 0;
    for (const Shape& element : shape.tuple_shapes()) total += ByteSize(element);
    return total;
  }
  if (!shape.IsArray()) return 0;
  return CeilDiv(PhysicalElementCount(shape) * ElementSizeInBits(shape), 8);
}

int64_t LinearIndex(const Shape& shape, absl::Span<const int64_t> index) {
  if (!shape.IsArray()) return 0;
  const int64_t rank = shape.rank();
  const Layout* layout = shape.has_layout() ? &shape.layout() : nullptr;
  // Fast path: a plain permutation needs no allocation.
  if (layout != nullptr && layout->tiles.empty() &&
      IsPermutation(layout->minor_to_major, rank)) {
    const bool padded = layout->padded_dimensions.size() == static_cast<size_t>(rank);
    int64_t linear = 0;
    for (int64_t j = rank - 1; j >= 0; --j) {
      const int64_t d = layout->minor_to_major[j];
      int64_t size = SizeOrZero(shape.dimensions(d));
      if (padded) size = std::max(size, layout->padded_dimensions[d]);
      linear = linear * size + index[d];
    }
    return linear;
  }
  const Layout effective = EffectiveLayout(shape);
  std::vector<int64_t> sizes = PhysicalSizes(shape, effective);
  std::vector<int64_t> physical;
  for (int64_t j = rank - 1; j >= 0; --j) physical.push_back(index[effective.minor_to_major[j]]);
  for (const Tile& tile : effective.tiles) ApplyTile(tile, &sizes, &physical);
  int64_t linear = 0;
  for (size_t j = 0; j < sizes.size(); ++j) linear = linear * sizes[j] + physical[j];
  return linear;
}

std::optional<std::vector<int64_t>> MultiIndex(const Shape& shape, int64_t linear) {
  if (!shape.IsArray() || linear < 0) return std::nullopt;
  const Layout layout = EffectiveLayout(shape);
  const int64_t rank = shape.rank();
  std::vector<int64_t> sizes = PhysicalSizes(shape, layout);
  std::vector<std::vector<int64_t>> before_tile;
  for (const Tile& tile : layout.tiles) {
    before_tile.push_back(sizes);
    ApplyTile(tile, &sizes, nullptr);
  }
  if (linear >= Product(sizes)) return std::nullopt;
  std::vector<int64_t> index(sizes.size());
  for (int64_t j = static_cast<int64_t>(sizes.size()) - 1; j >= 0; --j) {
    index[j] = linear % sizes[j];
    linear /= sizes[j];
  }
  for (int64_t t = static_cast<int64_t>(layout.tiles.size()) - 1; t >= 0; --t) {
    if (!UnapplyTile(layout.tiles[t], before_tile[t], &index)) return std::nullopt;
  }
  std::vector<int64_t> logical(rank);
  for (int64_t j = 0; j < rank; ++j) logical[layout.minor_to_major[rank - 1 - j]] = index[j];
  for (int64_t i = 0; i < rank; ++i) {
    if (logical[i] >= SizeOrZero(shape.dimensions(i))) return std::nullopt;
  }
  return logical;
}

bool NextIndex(absl::Span<const int64_t> dimensions, absl::Span<int64_t> index) {
  for (int64_t i = static_cast<int64_t>(dimensions.size()) - 1; i >= 0; --i) {
    if (++index[i] < dimensions[i]) return true;
    index[i] = 0;
  }
  return false;
}

bool IsPlainLayout(const Shape& shape) {
  if (!shape.IsArray() || shape.is_dynamic() || !shape.has_layout()) return false;
  const Layout& layout = shape.layout();
  if (!layout.tiles.empty() || !layout.padded_dimensions.empty()) return false;
  if (layout.element_size_in_bits != 0 &&
      layout.element_size_in_bits != 8 * ByteWidth(shape.element_type())) {
    return false;
  }
  return ValidateLayout(shape).ok();
}

std::vector<int64_t> PlainStrides(const Shape& shape) {
  std::vector<int64_t> strides(shape.rank(), 0);
  int64_t stride = 1;
  for (int64_t d : shape.layout().minor_to_major) {
    strides[d] = stride;
    stride *= shape.dimensions(d);
  }
  return strides;
}

// Element size counts too: a packed sub-byte layout is not the plain array
// callers of this function expect.
bool IsDefaultLayout(const Shape& shape) {
  if (shape.IsTuple()) {
    for (const Shape& element : shape.tuple_shapes()) {
      if (!IsDefaultLayout(element)) return false;
    }
    return true;
  }
  if (!shape.IsArray() || !shape.has_layout()) return true;
  const Layout& layout = shape.layout();
  return layout.minor_to_major == Layout::Default(shape.rank()).minor_to_major &&
         layout.tiles.empty() && layout.padded_dimensions.empty() &&
         layout.tail_padding_alignment_in_elements == 1 &&
         (layout.element_size_in_bits == 0 ||
          layout.element_size_in_bits == 8 * ByteWidth(shape.element_type()));
}

Shape WithDefaultLayouts(Shape shape) {
  if (shape.IsTuple()) {
    for (Shape& element : *shape.mutable_tuple_shapes()) element = WithDefaultLayouts(element);
    return shape;
  }
  if (shape.IsArray() && !shape.has_layout()) shape.set_layout(Layout::Default(shape.rank()));
  return shape;
}

}  // namespace xjit
