// Layout arithmetic: expected positions are worked by hand from the tiling
// rules in ir/layout.h and from the examples of the layout seeds (000/001).
#include "ir/layout_util.h"

#include <set>
#include <vector>

#include "gtest/gtest.h"

namespace xjit {
namespace {

Shape Tiled(ElementType type, std::vector<int64_t> dims, std::vector<int64_t> minor_to_major,
            std::vector<std::vector<int64_t>> tiles) {
  Shape shape = Shape::ArrayWithLayout(type, dims, minor_to_major);
  for (auto& t : tiles) shape.mutable_layout()->tiles.push_back(Tile{t});
  return shape;
}

// Every logical index maps to a distinct slot, MultiIndex inverts LinearIndex,
// and every other slot is padding.
void ExpectBijection(const Shape& shape) {
  std::set<int64_t> used;
  std::vector<int64_t> index(shape.rank(), 0);
  const int64_t count = PhysicalElementCount(shape);
  if (shape.element_count() > 0) {
    do {
      const int64_t linear = LinearIndex(shape, index);
      ASSERT_GE(linear, 0);
      ASSERT_LT(linear, count);
      EXPECT_TRUE(used.insert(linear).second) << "slot " << linear << " used twice";
      auto back = MultiIndex(shape, linear);
      ASSERT_TRUE(back.has_value());
      EXPECT_EQ(*back, index);
    } while (NextIndex(shape.dimensions(), absl::MakeSpan(index)));
  }
  for (int64_t slot = 0; slot < count; ++slot) {
    if (!used.count(slot)) {
      EXPECT_FALSE(MultiIndex(shape, slot).has_value()) << slot;
    }
  }
  EXPECT_FALSE(MultiIndex(shape, count).has_value());
  EXPECT_FALSE(MultiIndex(shape, -1).has_value());
}

TEST(LayoutUtilTest, RowMajorTwoByThree) {
  // Seed 001: a b c / d e f under {1,0} is "a b c d e f".
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {1, 0});
  EXPECT_EQ(LinearIndex(shape, {0, 0}), 0);
  EXPECT_EQ(LinearIndex(shape, {0, 2}), 2);
  EXPECT_EQ(LinearIndex(shape, {1, 0}), 3);
  EXPECT_EQ(LinearIndex(shape, {1, 2}), 5);
  EXPECT_EQ(PhysicalElementCount(shape), 6);
  ExpectBijection(shape);
}

TEST(LayoutUtilTest, ColumnMajorTwoByThree) {
  // Seed 001: under {0,1} the memory is "a d b e c f".
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 1});
  EXPECT_EQ(LinearIndex(shape, {0, 0}), 0);  // a
  EXPECT_EQ(LinearIndex(shape, {1, 0}), 1);  // d
  EXPECT_EQ(LinearIndex(shape, {0, 1}), 2);  // b
  EXPECT_EQ(LinearIndex(shape, {1, 1}), 3);  // e
  EXPECT_EQ(LinearIndex(shape, {0, 2}), 4);  // c
  EXPECT_EQ(LinearIndex(shape, {1, 2}), 5);  // f
  ExpectBijection(shape);
}

TEST(LayoutUtilTest, OlderPaddedDimensions) {
  // Seed 000/001: padded_dimensions [3,5], column-major, is
  // "a d 0 b e 0 c f 0 0 0 0 0 0 0".
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 1});
  shape.mutable_layout()->padded_dimensions = {3, 5};
  EXPECT_EQ(PhysicalElementCount(shape), 15);
  EXPECT_EQ(ByteSize(shape), 60);
  EXPECT_EQ(LinearIndex(shape, {0, 0}), 0);  // a
  EXPECT_EQ(LinearIndex(shape, {1, 0}), 1);  // d
  EXPECT_EQ(LinearIndex(shape, {0, 1}), 3);  // b
  EXPECT_EQ(LinearIndex(shape, {1, 1}), 4);  // e
  EXPECT_EQ(LinearIndex(shape, {0, 2}), 6);  // c
  EXPECT_EQ(LinearIndex(shape, {1, 2}), 7);  // f
  for (int64_t padding : {2, 5, 8, 9, 10, 11, 12, 13, 14}) {
    EXPECT_FALSE(MultiIndex(shape, padding).has_value()) << padding;
  }
  ExpectBijection(shape);
  EXPECT_TRUE(ValidateLayout(shape).ok());
}

TEST(LayoutUtilTest, StandardTiledExample) {
  // f32[3,5]{1,0:T(2,2)}: padded to 4x6, 6 tiles of 4 = 24 slots; element
  // (i,j) is at ((i/2)*3 + j/2)*4 + (i%2)*2 + j%2.
  Shape shape = Tiled(ElementType::kF32, {3, 5}, {1, 0}, {{2, 2}});
  EXPECT_EQ(PhysicalElementCount(shape), 24);
  EXPECT_EQ(ByteSize(shape), 96);
  EXPECT_EQ(LinearIndex(shape, {0, 0}), 0);
  EXPECT_EQ(LinearIndex(shape, {0, 1}), 1);
  EXPECT_EQ(LinearIndex(shape, {1, 0}), 2);
  EXPECT_EQ(LinearIndex(shape, {1, 1}), 3);
  EXPECT_EQ(LinearIndex(shape, {0, 2}), 4);  // Tile 1, as the seed says.
  EXPECT_EQ(LinearIndex(shape, {1, 3}), 7);
  EXPECT_EQ(LinearIndex(shape, {2, 0}), 12);
  EXPECT_EQ(LinearIndex(shape, {2, 4}), 20);
  EXPECT_EQ(*MultiIndex(shape, 5), (std::vector<int64_t>{0, 3}));
  EXPECT_EQ(*MultiIndex(shape, 20), (std::vector<int64_t>{2, 4}));
  EXPECT_FALSE(MultiIndex(shape, 21).has_value());  // (2,5): column padding
  EXPECT_FALSE(MultiIndex(shape, 22).has_value());  // (3,4): row padding
  EXPECT_FALSE(MultiIndex(shape, 23).has_value());
  ExpectBijection(shape);
}

TEST(LayoutUtilTest, TwoLevelTilingBf16) {
  // bf16[8,1,1280,16384]{3,2,0,1:T(8,128)(2,1)}. Physical order [1,8,1280,16384];
  // T(8,128) gives [1,8,160,128,8,128]; T(2,1) on the last two gives
  // [1,8,160,128,4,128,2,1]. Element (a,0,c,d) sits at index
  // [0,a,c/8,d/128,(c%8)/2,d%128,c%2,0].
  Shape shape = Tiled(ElementType::kBF16, {8, 1, 1280, 16384}, {3, 2, 0, 1}, {{8, 128}, {2, 1}});
  EXPECT_TRUE(ValidateLayout(shape).ok());
  EXPECT_EQ(PhysicalElementCount(shape), 8 * 1280 * 16384);
  EXPECT_EQ(ByteSize(shape), int64_t{2} * 8 * 1280 * 16384);
  // (1,0,11,300): [0,1,1,2,1,44,1,0] -> ((((1*160+1)*128+2)*4+1)*128+44)*2+1.
  EXPECT_EQ(LinearIndex(shape, {1, 0, 11, 300}), 21104985);
  EXPECT_EQ(LinearIndex(shape, {1, 0, 10, 300}), 21104984);  // Row pairs interleave.
  EXPECT_EQ(LinearIndex(shape, {0, 0, 0, 1}), 2);
  EXPECT_EQ(LinearIndex(shape, {0, 0, 2, 0}), 256);
  EXPECT_EQ(LinearIndex(shape, {0, 0, 8, 0}), 128 * 8 * 128);  // The next 8x128 tile row.
  EXPECT_EQ(*MultiIndex(shape, 21104985), (std::vector<int64_t>{1, 0, 11, 300}));
}

TEST(LayoutUtilTest, TileWithMoreDimensionsThanShape) {
  // f32[5]{0:T(2,4)}: treated as [1,5] -> [1,2,2,4] = 16 slots; j at (j/4)*8 + j%4.
  Shape shape = Tiled(ElementType::kF32, {5}, {0}, {{2, 4}});
  EXPECT_EQ(PhysicalElementCount(shape), 16);
  EXPECT_EQ(LinearIndex(shape, {3}), 3);
  EXPECT_EQ(LinearIndex(shape, {4}), 8);
  ExpectBijection(shape);
}

TEST(LayoutUtilTest, CombineDimension) {
  // f32[2,3,4]{2,1,0:T(*,8)}: [3,4] merge to 12, tiled by 8 -> [2,2,8] = 32 slots;
  // (i,j,k) at i*16 + (4j+k).
  Shape shape = Tiled(ElementType::kF32, {2, 3, 4}, {2, 1, 0}, {{Tile::kCombineDimension, 8}});
  EXPECT_TRUE(ValidateLayout(shape).ok());
  EXPECT_EQ(PhysicalElementCount(shape), 32);
  EXPECT_EQ(LinearIndex(shape, {1, 2, 3}), 27);
  EXPECT_EQ(LinearIndex(shape, {0, 2, 0}), 8);
  EXPECT_FALSE(MultiIndex(shape, 12).has_value());
  EXPECT_EQ(*MultiIndex(shape, 27), (std::vector<int64_t>{1, 2, 3}));
  ExpectBijection(shape);
}

TEST(LayoutUtilTest, TailPadding) {
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {3}, {0});
  shape.mutable_layout()->tail_padding_alignment_in_elements = 4;
  EXPECT_EQ(PhysicalElementCount(shape), 4);
  EXPECT_EQ(ByteSize(shape), 16);
  Shape tiled = Tiled(ElementType::kF32, {5}, {0}, {{2}});
  EXPECT_EQ(PhysicalElementCount(tiled), 6);
  tiled.mutable_layout()->tail_padding_alignment_in_elements = 8;
  EXPECT_EQ(PhysicalElementCount(tiled), 8);
  ExpectBijection(tiled);
}

TEST(LayoutUtilTest, BijectionOnAssortedLayouts) {
  ExpectBijection(Shape::ArrayWithLayout(ElementType::kS32, {2, 3, 4}, {0, 2, 1}));
  ExpectBijection(Tiled(ElementType::kS32, {3, 7, 5}, {0, 1, 2}, {{4, 2}}));
  ExpectBijection(Tiled(ElementType::kS32, {3, 7, 5}, {2, 1, 0}, {{2, 3}, {2, 1}}));
  ExpectBijection(Tiled(ElementType::kS32, {3, 7, 5}, {1, 2, 0}, {{2, 3, 2}}));
  ExpectBijection(Tiled(ElementType::kS32, {3, 7, 5}, {2, 0, 1},
                        {{Tile::kCombineDimension, Tile::kCombineDimension, 4}}));
  ExpectBijection(Shape::ArrayWithLayout(ElementType::kS32, {}, {}));
  ExpectBijection(Shape::ArrayWithLayout(ElementType::kS32, {0, 3}, {1, 0}));
}

TEST(LayoutUtilTest, ElementSizesAndByteSizes) {
  EXPECT_EQ(ElementSizeInBits(Shape::Array(ElementType::kS4, {5})), 8);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kS4, {5})), 5);
  Shape packed = Shape::Array(ElementType::kS4, {5});
  packed.mutable_layout()->element_size_in_bits = 4;
  EXPECT_EQ(ElementSizeInBits(packed), 4);
  EXPECT_EQ(ByteSize(packed), 3);
  Shape packed2 = Shape::Array(ElementType::kU2, {5});
  packed2.mutable_layout()->element_size_in_bits = 2;
  EXPECT_EQ(ByteSize(packed2), 2);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kPred, {3})), 3);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kC64, {2})), 16);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kC128, {2})), 32);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kBF16, {2, 3})), 12);
  EXPECT_EQ(ByteSize(Shape::Array(ElementType::kF8E4M3FN, {7})), 7);
  EXPECT_EQ(ByteSize(Shape::Scalar(ElementType::kF64)), 8);
  EXPECT_EQ(ByteSize(Shape::Tuple({Shape::Array(ElementType::kF32, {2}),
                                   Shape::Array(ElementType::kS8, {3})})),
            11);
  EXPECT_EQ(ByteSize(Shape::Token()), 0);
  EXPECT_EQ(ByteSize(Shape::Tuple({})), 0);
}

TEST(LayoutUtilTest, ValidateLayoutRejectsMalformed) {
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 0});
  EXPECT_FALSE(ValidateLayout(shape).ok());
  EXPECT_FALSE(ValidateLayout(Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0})).ok());
  EXPECT_FALSE(ValidateLayout(Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {1, 2})).ok());
  EXPECT_FALSE(ValidateLayout(Tiled(ElementType::kF32, {2, 3}, {1, 0}, {{0, 2}})).ok());
  EXPECT_FALSE(ValidateLayout(Tiled(ElementType::kF32, {2, 3}, {1, 0}, {{}})).ok());
  EXPECT_FALSE(
      ValidateLayout(Tiled(ElementType::kF32, {2, 3}, {1, 0}, {{2, Tile::kCombineDimension}})).ok());
  Shape align = Shape::Array(ElementType::kF32, {2});
  align.mutable_layout()->tail_padding_alignment_in_elements = 0;
  EXPECT_FALSE(ValidateLayout(align).ok());
  Shape bits = Shape::Array(ElementType::kS4, {2});
  bits.mutable_layout()->element_size_in_bits = 3;
  EXPECT_FALSE(ValidateLayout(bits).ok());
  bits.mutable_layout()->element_size_in_bits = 2;
  EXPECT_FALSE(ValidateLayout(bits).ok());
  bits.mutable_layout()->element_size_in_bits = 4;
  EXPECT_TRUE(ValidateLayout(bits).ok());
  Shape wide = Shape::Array(ElementType::kF32, {2});
  wide.mutable_layout()->element_size_in_bits = 16;
  EXPECT_FALSE(ValidateLayout(wide).ok());
  Shape padded = Shape::Array(ElementType::kF32, {2, 3});
  padded.mutable_layout()->padded_dimensions = {2, 2};
  EXPECT_FALSE(ValidateLayout(padded).ok());
  padded.mutable_layout()->padded_dimensions = {4};
  EXPECT_FALSE(ValidateLayout(padded).ok());
  EXPECT_FALSE(ValidateLayout(Shape::Tuple({Shape::Array(ElementType::kF32, {1}), shape})).ok());
  EXPECT_TRUE(ValidateLayout(Shape::Tuple({Shape::Array(ElementType::kF32, {1}),
                                           Shape::Token()}))
                  .ok());
}

TEST(LayoutUtilTest, MalformedLayoutsDoNotCrash) {
  Shape shape = Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 0});
  EXPECT_EQ(PhysicalElementCount(shape), 6);
  EXPECT_EQ(LinearIndex(shape, {1, 2}), 5);  // Falls back to the default order.
  Shape zero_tile = Tiled(ElementType::kF32, {2, 3}, {1, 0}, {{0, 2}});
  EXPECT_GE(PhysicalElementCount(zero_tile), 6);
  (void)LinearIndex(zero_tile, {1, 2});
}

TEST(LayoutUtilTest, NextIndexIsRowMajor) {
  std::vector<int64_t> dims = {2, 3};
  std::vector<int64_t> index = {0, 0};
  std::vector<std::vector<int64_t>> seen = {index};
  while (NextIndex(dims, absl::MakeSpan(index))) seen.push_back(index);
  ASSERT_EQ(seen.size(), 6u);
  EXPECT_EQ(seen[1], (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(seen[3], (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(seen[5], (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(index, (std::vector<int64_t>{0, 0}));
  std::vector<int64_t> scalar;
  EXPECT_FALSE(NextIndex({}, absl::MakeSpan(scalar)));
}

TEST(LayoutUtilTest, DefaultLayouts) {
  EXPECT_TRUE(IsDefaultLayout(Shape::Array(ElementType::kF32, {2, 3})));
  EXPECT_FALSE(IsDefaultLayout(Shape::ArrayWithLayout(ElementType::kF32, {2, 3}, {0, 1})));
  EXPECT_FALSE(IsDefaultLayout(Tiled(ElementType::kF32, {2, 3}, {1, 0}, {{2}})));
  Shape packed = Shape::Array(ElementType::kS4, {2});
  packed.mutable_layout()->element_size_in_bits = 4;
  EXPECT_FALSE(IsDefaultLayout(packed));
  Shape memory_space = Shape::Array(ElementType::kF32, {2});
  memory_space.mutable_layout()->memory_space = 1;
  EXPECT_TRUE(IsDefaultLayout(memory_space));

  Shape bare = Shape::Array(ElementType::kF32, {2, 3});
  bare.clear_layout();
  Shape tuple = Shape::Tuple({bare, Shape::ArrayWithLayout(ElementType::kS8, {4, 5}, {0, 1})});
  Shape filled = WithDefaultLayouts(tuple);
  ASSERT_TRUE(filled.tuple_shapes(0).has_layout());
  EXPECT_EQ(filled.tuple_shapes(0).layout().minor_to_major, (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(filled.tuple_shapes(1).layout().minor_to_major, (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(LinearIndex(bare, {1, 0}), 3);  // No layout reads as the default.
}

}  // namespace
}  // namespace xjit
