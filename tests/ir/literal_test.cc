// Literal: storage under layouts (the seed's memory pictures), packing of
// sub-byte types, typed access with rounding and wrap-around, equality,
// relayout, and XLA's literal text.
#include "ir/literal.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <vector>

#include "gtest/gtest.h"
#include "ir/float_format.h"

namespace xjit {
namespace {

using T = ElementType;

std::vector<uint8_t> Bytes(const Literal& literal) {
  return std::vector<uint8_t>(literal.data().begin(), literal.data().end());
}

std::vector<int32_t> Int32s(const Literal& literal) {
  std::vector<int32_t> out(literal.data().size() / 4);
  std::memcpy(out.data(), literal.data().data(), out.size() * 4);
  return out;
}

Literal ScalarBits(ElementType type, uint64_t bits) {
  Literal literal(Shape::Scalar(type));
  literal.SetBits({}, bits);
  return literal;
}

TEST(LiteralTest, SeedMemoryPictures) {
  // a b c / d e f = 1 2 3 / 4 5 6.
  const std::vector<int64_t> values = {1, 2, 3, 4, 5, 6};
  Literal row = Literal::FromInts(Shape::ArrayWithLayout(T::kU8, {2, 3}, {1, 0}), values);
  EXPECT_EQ(Bytes(row), (std::vector<uint8_t>{1, 2, 3, 4, 5, 6}));
  Literal column = Literal::FromInts(Shape::ArrayWithLayout(T::kU8, {2, 3}, {0, 1}), values);
  EXPECT_EQ(Bytes(column), (std::vector<uint8_t>{1, 4, 2, 5, 3, 6}));
  Shape padded_shape = Shape::ArrayWithLayout(T::kU8, {2, 3}, {0, 1});
  padded_shape.mutable_layout()->padded_dimensions = {3, 5};
  Literal padded = Literal::FromInts(padded_shape, values);
  EXPECT_EQ(Bytes(padded),
            (std::vector<uint8_t>{1, 4, 0, 2, 5, 0, 3, 6, 0, 0, 0, 0, 0, 0, 0}));
  for (const Literal* l : {&row, &column, &padded}) {
    EXPECT_EQ(l->GetInt({1, 2}), 6);
    EXPECT_EQ(l->GetInt({0, 1}), 2);
    EXPECT_EQ(l->GetBitsLinear(3), 4u);
  }
  EXPECT_EQ(row, column);
  EXPECT_EQ(row, padded);
  EXPECT_EQ(padded.ValueToString(), "{ { 1, 2, 3 }, { 4, 5, 6 } }");
}

TEST(LiteralTest, PaddingValueFillsPaddingSlots) {
  Shape shape = Shape::ArrayWithLayout(T::kS32, {1, 2}, {1, 0});
  shape.mutable_layout()->padded_dimensions = {2, 2};
  shape.mutable_layout()->padding_value = PaddingValue::kOne;
  Literal literal = Literal::FromInts(shape, {7, 8});
  EXPECT_EQ(Int32s(literal), (std::vector<int32_t>{7, 8, 1, 1}));
  shape.mutable_layout()->padding_value = PaddingValue::kLowest;
  EXPECT_EQ(Int32s(Literal(shape)), (std::vector<int32_t>{0, 0, INT32_MIN, INT32_MIN}));
}

TEST(LiteralTest, TiledStorage) {
  // f32[3,5]{1,0:T(2,2)}: element (i,j) at ((i/2)*3 + j/2)*4 + (i%2)*2 + j%2.
  Shape shape = Shape::ArrayWithLayout(T::kS32, {3, 5}, {1, 0});
  shape.mutable_layout()->tiles.push_back(Tile{{2, 2}});
  std::vector<int64_t> values(15);
  for (int i = 0; i < 15; ++i) values[i] = 100 + i;
  Literal literal = Literal::FromInts(shape, values);
  ASSERT_EQ(literal.data().size(), 96u);
  const std::vector<int32_t> slots = Int32s(literal);
  EXPECT_EQ(slots[0], 100);   // (0,0)
  EXPECT_EQ(slots[1], 101);   // (0,1)
  EXPECT_EQ(slots[2], 105);   // (1,0)
  EXPECT_EQ(slots[4], 102);   // (0,2)
  EXPECT_EQ(slots[7], 108);   // (1,3)
  EXPECT_EQ(slots[20], 114);  // (2,4)
  EXPECT_EQ(slots[21], 0);    // padding
  EXPECT_EQ(literal.GetInt({2, 4}), 114);
  Literal plain = Literal::FromInts(Shape::Array(T::kS32, {3, 5}), values);
  EXPECT_EQ(literal, plain);
  EXPECT_EQ(literal.Relayout(plain.shape()).data().size(), 60u);
  EXPECT_EQ(Int32s(literal.Relayout(plain.shape()))[14], 114);
  EXPECT_EQ(Bytes(plain.Relayout(shape)), Bytes(literal));
}

TEST(LiteralTest, PackedSubByte) {
  Shape s4 = Shape::Array(T::kS4, {5});
  s4.mutable_layout()->element_size_in_bits = 4;
  Literal packed = Literal::FromInts(s4, {1, -2, 3, -8, 7});
  // Element 2k in the low nibble.
  EXPECT_EQ(Bytes(packed), (std::vector<uint8_t>{0xE1, 0x83, 0x07}));
  EXPECT_EQ(packed.GetInt({1}), -2);
  EXPECT_EQ(packed.GetInt({3}), -8);
  EXPECT_EQ(packed.GetBits({1}), 0xEu);
  packed.SetInt({4}, -1);
  EXPECT_EQ(Bytes(packed)[2], 0x0F);

  Literal unpacked = Literal::FromInts(Shape::Array(T::kS4, {3}), {1, -2, 3});
  EXPECT_EQ(Bytes(unpacked), (std::vector<uint8_t>{0x01, 0x0E, 0x03}));
  EXPECT_EQ(unpacked.GetInt({1}), -2);
  Shape s4_three = Shape::Array(T::kS4, {3});
  s4_three.mutable_layout()->element_size_in_bits = 4;
  Literal packed_three = Literal::FromInts(s4_three, {1, -2, 3});
  EXPECT_EQ(Bytes(packed_three), (std::vector<uint8_t>{0xE1, 0x03}));
  EXPECT_EQ(unpacked, packed_three);
  EXPECT_EQ(Bytes(packed_three.Relayout(unpacked.shape())), Bytes(unpacked));

  Shape s2 = Shape::Array(T::kS2, {4});
  s2.mutable_layout()->element_size_in_bits = 2;
  Literal two = Literal::FromInts(s2, {1, -1, -2, 0});
  EXPECT_EQ(Bytes(two), (std::vector<uint8_t>{0x2D}));
  EXPECT_EQ(two.GetInt({1}), -1);
  EXPECT_EQ(two.GetInt({2}), -2);

  Shape u4 = Shape::Array(T::kU4, {3});
  u4.mutable_layout()->element_size_in_bits = 4;
  Literal unsigned4 = Literal::FromInts(u4, {17, 15, 3});  // 17 wraps to 1.
  EXPECT_EQ(unsigned4.GetInt({0}), 1);
  EXPECT_EQ(unsigned4.GetInt({1}), 15);
  EXPECT_EQ(Bytes(unsigned4), (std::vector<uint8_t>{0xF1, 0x03}));
}

TEST(LiteralTest, IntegerWrapAndConversions) {
  EXPECT_EQ(Literal::ScalarInt(T::kS8, 200).GetInt({}), -56);
  EXPECT_EQ(Literal::ScalarInt(T::kU8, -1).GetInt({}), 255);
  EXPECT_EQ(Literal::ScalarInt(T::kS2, 3).GetInt({}), -1);
  EXPECT_EQ(Literal::ScalarInt(T::kU64, -1).GetBits({}), ~uint64_t{0});
  EXPECT_EQ(Literal::ScalarInt(T::kS64, INT64_MIN).GetInt({}), INT64_MIN);
  EXPECT_EQ(Literal::Scalar(T::kS32, 3.7).GetInt({}), 3);
  EXPECT_EQ(Literal::Scalar(T::kS32, -3.7).GetInt({}), -3);
  EXPECT_EQ(Literal::Scalar(T::kS32, std::nan("")).GetInt({}), 0);
  EXPECT_EQ(Literal::Scalar(T::kU8, 256 + 5).GetInt({}), 5);
  EXPECT_EQ(Literal::Scalar(T::kS32, -2.0).GetDouble({}), -2.0);
  EXPECT_EQ(Literal::ScalarInt(T::kPred, 5).GetInt({}), 1);
  EXPECT_EQ(Literal::ScalarInt(T::kPred, 5).GetBits({}), 1u);
  EXPECT_EQ(Literal::ScalarInt(T::kF32, 3).GetDouble({}), 3.0);
  EXPECT_EQ(Literal::Scalar(T::kF32, 2.5).GetInt({}), 2);
}

TEST(LiteralTest, FloatRounding) {
  Literal half = Literal::Scalar(T::kF16, 1.0 + std::ldexp(1.0, -11));  // Tie to even.
  EXPECT_EQ(half.GetBits({}), 0x3C00u);
  EXPECT_EQ(half.GetDouble({}), 1.0);
  EXPECT_EQ(Literal::Scalar(T::kBF16, 0.1).GetBits({}), 0x3DCDu);
  EXPECT_EQ(Literal::Scalar(T::kF32, 0.1).GetDouble({}), static_cast<double>(0.1f));
  EXPECT_EQ(Literal::Scalar(T::kF8E4M3FN, 1000).GetBits({}), 0x7Fu);
  EXPECT_EQ(Literal::Scalar(T::kF64, 0.1).GetDouble({}), 0.1);
}

TEST(LiteralTest, Complex) {
  Literal c64(Shape::Array(T::kC64, {2}));
  c64.SetComplex({1}, {1.5, -2});
  EXPECT_EQ(c64.GetComplex({1}), std::complex<double>(1.5, -2));
  EXPECT_EQ(c64.GetComplex({0}), std::complex<double>(0, 0));
  EXPECT_EQ(c64.GetDouble({1}), 1.5);
  EXPECT_EQ(c64.ValueToString(), "{(0, 0), (1.5, -2)}");
  Literal c128(Shape::Scalar(T::kC128));
  c128.SetComplex({}, {0.1, 3});
  EXPECT_EQ(c128.GetComplex({}), std::complex<double>(0.1, 3));
  EXPECT_EQ(c128.ValueToString(), "(0.1, 3)");
  Literal other(Shape::Scalar(T::kC128));
  other.SetComplex({}, {0.1, 4});
  EXPECT_NE(c128, other);  // The imaginary half takes part in equality.
}

TEST(LiteralTest, ArrayText) {
  EXPECT_EQ(Literal::Scalar(T::kF32, 1.5).ValueToString(), "1.5");
  EXPECT_EQ(Literal::FromInts(Shape::Array(T::kS32, {3}), {1, 2, 3}).ValueToString(),
            "{1, 2, 3}");
  EXPECT_EQ(Literal::FromInts(Shape::Array(T::kS32, {2, 2}), {1, 2, 3, 4}).ValueToString(),
            "{ { 1, 2 }, { 3, 4 } }");
  EXPECT_EQ(Literal::FromDoubles(Shape::Array(T::kF32, {1, 1, 3}), {1, -2, 1}).ValueToString(),
            "{ { { 1, -2, 1 } } }");
  EXPECT_EQ(Literal::FromInts(Shape::Array(T::kPred, {2}), {1, 0}).ValueToString(),
            "{true, false}");
  EXPECT_EQ(Literal::ScalarInt(T::kPred, 0).ValueToString(), "false");
  EXPECT_EQ(Literal(Shape::Array(T::kF32, {0})).ValueToString(), "{}");
  EXPECT_EQ(Literal(Shape::Array(T::kF32, {2, 0})).ValueToString(), "{ {}, {} }");
  EXPECT_EQ(Literal(Shape::Array(T::kF32, {0, 2})).ValueToString(), "{}");
  EXPECT_EQ(Literal::ScalarInt(T::kU64, -1).ValueToString(), "18446744073709551615");
  EXPECT_EQ(Literal::ScalarInt(T::kS64, INT64_MIN).ValueToString(), "-9223372036854775808");
  EXPECT_EQ(Literal::ScalarInt(T::kS4, -3).ValueToString(), "-3");
}

TEST(LiteralTest, FloatText) {
  EXPECT_EQ(Literal::Scalar(T::kF32, 1.0 / 3).ValueToString(), "0.333333343");
  EXPECT_EQ(Literal::Scalar(T::kF32, 0.1).ValueToString(), "0.1");
  EXPECT_EQ(Literal::Scalar(T::kF32, 100000).ValueToString(), "100000");
  EXPECT_EQ(Literal::Scalar(T::kF32, 1e6).ValueToString(), "1e+06");
  EXPECT_EQ(Literal::Scalar(T::kF32, 123456789).ValueToString(), "123456792");
  EXPECT_EQ(Literal::Scalar(T::kF32, -0.0).ValueToString(), "-0");
  EXPECT_EQ(Literal::Scalar(T::kF64, 0.1).ValueToString(), "0.1");
  EXPECT_EQ(Literal::Scalar(T::kF64, 1.0 / 3).ValueToString(), "0.33333333333333331");
  EXPECT_EQ(Literal::Scalar(T::kBF16, 0.1).ValueToString(), "0.1001");
  EXPECT_EQ(Literal::Scalar(T::kF16, 0.1).ValueToString(), "0.099976");
  EXPECT_EQ(Literal::Scalar(T::kF16, 1).ValueToString(), "1");
  EXPECT_EQ(Literal::Scalar(T::kF8E4M3FN, 448).ValueToString(), "448");
  EXPECT_EQ(Literal::Scalar(T::kF8E5M2, 0.3).ValueToString(), "0.31");  // 0.3125, 2 digits.
  EXPECT_EQ(Literal::Scalar(T::kF4E2M1FN, 1.5).ValueToString(), "1.5");
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(Literal::Scalar(T::kF32, inf).ValueToString(), "inf");
  EXPECT_EQ(Literal::Scalar(T::kF16, -inf).ValueToString(), "-inf");
}

TEST(LiteralTest, NanText) {
  EXPECT_EQ(ScalarBits(T::kF32, 0x7FC00000u).ValueToString(), "nan");
  EXPECT_EQ(ScalarBits(T::kF32, 0xFFC00000u).ValueToString(), "-nan");
  EXPECT_EQ(ScalarBits(T::kF32, 0x7F800001u).ValueToString(), "nan(0x1)");
  EXPECT_EQ(ScalarBits(T::kF32, 0xFF800001u).ValueToString(), "-nan(0x1)");
  EXPECT_EQ(ScalarBits(T::kF64, 0x7FFFFFFFFFFFFFFFull).ValueToString(), "nan(0xfffffffffffff)");
  EXPECT_EQ(ScalarBits(T::kBF16, 0x7FC0u).ValueToString(), "nan");
  EXPECT_EQ(ScalarBits(T::kF16, 0x7E01u).ValueToString(), "nan(0x201)");
  EXPECT_EQ(ScalarBits(T::kF8E4M3FN, 0x7Fu).ValueToString(), "nan");
  EXPECT_EQ(ScalarBits(T::kF8E4M3FN, 0xFFu).ValueToString(), "-nan");
  EXPECT_EQ(ScalarBits(T::kF8E4M3FNUZ, 0x80u).ValueToString(), "-nan");
  EXPECT_EQ(ScalarBits(T::kF8E8M0FNU, 0xFFu).ValueToString(), "nan");
}

// f8e8m0fnu prints with two significant digits; every code's text must read
// back (as the parser does: decimal to double, then to the type) as the same
// code. Code 0 (2^-127) would print as 5.9e-39, a little above 2^-127, which
// converts to 2^-126 (as in XLA): it prints with 17 digits.
TEST(LiteralTest, F8E8M0FNUTextReadsBack) {
  EXPECT_EQ(ScalarBits(T::kF8E8M0FNU, 0x00u).ValueToString(), "5.8774717541114375e-39");
  EXPECT_EQ(ScalarBits(T::kF8E8M0FNU, 0x7Fu).ValueToString(), "1");
  for (uint64_t code = 0; code < 256; ++code) {
    const std::string text = ScalarBits(T::kF8E8M0FNU, code).ValueToString();
    const double value = std::strtod(text.c_str(), nullptr);
    EXPECT_EQ(DoubleToFloatBits(T::kF8E8M0FNU, value), code) << text;
  }
}

TEST(LiteralTest, TuplesAndToString) {
  Literal tuple = Literal::MakeTuple(
      {Literal::ScalarInt(T::kS32, 1), Literal::FromDoubles(Shape::Array(T::kF32, {2}), {1, 2})});
  EXPECT_EQ(tuple.ValueToString(), "(1, {1, 2})");
  EXPECT_EQ(tuple.ToString(), "(s32[] 1, f32[2]{0} {1, 2})");
  EXPECT_TRUE(tuple.shape().IsTuple());
  EXPECT_EQ(tuple.shape().tuple_size(), 2);
  EXPECT_EQ(tuple.element(1).GetDouble({1}), 2.0);
  EXPECT_EQ(Literal().ValueToString(), "()");
  EXPECT_EQ(Literal::FromDoubles(Shape::Array(T::kF32, {2}), {1, 2}).ToString(),
            "f32[2]{0} {1, 2}");
  EXPECT_EQ(Literal::Scalar(T::kF32, 1.5).ToString(), "f32[] 1.5");
  Literal from_shape(Shape::Tuple({Shape::Array(T::kF32, {2}), Shape::Scalar(T::kS8)}));
  ASSERT_EQ(from_shape.elements().size(), 2u);
  EXPECT_EQ(from_shape.ValueToString(), "({0, 0}, 0)");
  EXPECT_EQ(Literal(Shape::Token()).ValueToString(), "token");
}

// A runtime-sized array (the evaluator's form: the shape holds the runtime
// size with the dynamic flag set) never prints its size as a bound. XLA's
// text for a dynamic literal is the bounded shape, then the runtime sizes in
// parentheses: "f32[<=4](3) {1, 2, 3}".
TEST(LiteralTest, DynamicArraysPrintRuntimeSizes) {
  Shape runtime = Shape::Array(T::kF32, {3});
  runtime.set_dynamic_dimension(0, true);
  const Literal value = Literal::FromDoubles(runtime, {1, 2, 3});
  EXPECT_EQ(value.ToString(), "f32[3]{0}(3) {1, 2, 3}");
  EXPECT_EQ(value.ValueToString(), "{1, 2, 3}");

  Shape declared = Shape::Array(T::kF32, {4});
  declared.set_dynamic_dimension(0, true);
  EXPECT_EQ(value.ToString(declared), "f32[<=4]{0}(3) {1, 2, 3}");

  // Rank 2 with one dynamic dimension: every runtime size is listed.
  Shape runtime2 = Shape::Array(T::kS32, {2, 1});
  runtime2.set_dynamic_dimension(1, true);
  const Literal value2 = Literal::FromInts(runtime2, {7, 8});
  EXPECT_EQ(value2.ToString(), "s32[2,1]{1,0}(2,1) { { 7 }, { 8 } }");
  Shape declared2 = Shape::Array(T::kS32, {2, 5});
  declared2.set_dynamic_dimension(1, true);
  EXPECT_EQ(value2.ToString(declared2), "s32[2,<=5]{1,0}(2,1) { { 7 }, { 8 } }");
  // An unbounded declared dimension prints as '?'.
  Shape unbounded = Shape::Array(T::kS32, {2, Shape::kUnboundedSize});
  unbounded.set_dynamic_dimension(1, true);
  EXPECT_EQ(value2.ToString(unbounded), "s32[2,?]{1,0}(2,1) { { 7 }, { 8 } }");

  // A declared shape the value does not fit (bound too small, other rank or
  // type) falls back to the plain form.
  Shape small = Shape::Array(T::kF32, {2});
  small.set_dynamic_dimension(0, true);
  EXPECT_EQ(value.ToString(small), "f32[3]{0}(3) {1, 2, 3}");
  EXPECT_EQ(value.ToString(Shape::Array(T::kS32, {4})), "f32[3]{0}(3) {1, 2, 3}");
  // A static value against a static declared shape prints as usual.
  const Literal fixed = Literal::FromDoubles(Shape::Array(T::kF32, {2}), {1, 2});
  EXPECT_EQ(fixed.ToString(Shape::Array(T::kF32, {2})), "f32[2]{0} {1, 2}");
  EXPECT_EQ(fixed.ToString(), "f32[2]{0} {1, 2}");

  // Tuples apply this element by element.
  const Literal tuple = Literal::MakeTuple({value, Literal::ScalarInt(T::kS32, 3)});
  EXPECT_EQ(tuple.ToString(), "(f32[3]{0}(3) {1, 2, 3}, s32[] 3)");
  EXPECT_EQ(tuple.ToString(Shape::Tuple({declared, Shape::Scalar(T::kS32)})),
            "(f32[<=4]{0}(3) {1, 2, 3}, s32[] 3)");
}

TEST(LiteralTest, EqualityAndCopies) {
  Literal a = Literal::FromInts(Shape::Array(T::kS32, {2}), {1, 2});
  Literal b = a;
  EXPECT_EQ(a, b);
  b.SetInt({0}, 5);
  EXPECT_NE(a, b);
  EXPECT_EQ(a.GetInt({0}), 1);  // Copies are independent.
  Literal moved = std::move(b);
  EXPECT_EQ(moved.GetInt({0}), 5);
  EXPECT_NE(a, Literal::FromInts(Shape::Array(T::kS32, {1, 2}), {1, 2}));
  EXPECT_NE(a, Literal::FromInts(Shape::Array(T::kU32, {2}), {1, 2}));
  // NaNs compare by bit pattern.
  EXPECT_EQ(ScalarBits(T::kF32, 0x7FC00000u), ScalarBits(T::kF32, 0x7FC00000u));
  EXPECT_NE(ScalarBits(T::kF32, 0x7FC00000u), ScalarBits(T::kF32, 0x7FC00001u));
  EXPECT_NE(Literal::Scalar(T::kF32, 0.0), Literal::Scalar(T::kF32, -0.0));
}

TEST(LiteralTest, RelayoutKeepsValues) {
  Literal a = Literal::FromInts(Shape::Array(T::kS16, {2, 3, 2}),
                                {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  Shape target = Shape::ArrayWithLayout(T::kS16, {2, 3, 2}, {0, 2, 1});
  Literal b = a.Relayout(target);
  EXPECT_EQ(b.shape().layout().minor_to_major, (std::vector<int64_t>{0, 2, 1}));
  EXPECT_EQ(a, b);
  EXPECT_NE(Bytes(a), Bytes(b));
  // {0,2,1}: physical order is dims (1, 2, 0); element (i,j,k) at j*4 + k*2 + i.
  int16_t slot5;
  std::memcpy(&slot5, b.data().data() + 2 * 5, 2);
  EXPECT_EQ(slot5, 9);  // Slot 5 = 1*4 + 0*2 + 1: element (1,1,0).
  EXPECT_EQ(b.GetInt({1, 1, 0}), 9);
}

TEST(LiteralTest, OutOfRangeAccessDoesNotCrash) {
  Literal a = Literal::FromInts(Shape::Array(T::kS32, {2}), {1, 2});
  EXPECT_EQ(a.GetInt({5}), 0);
  a.SetInt({-1}, 3);
  a.SetInt({0, 0}, 3);
  EXPECT_EQ(a.GetBitsLinear(7), 0u);
  EXPECT_EQ(a, Literal::FromInts(Shape::Array(T::kS32, {2}), {1, 2}));
  Literal tuple;
  EXPECT_EQ(tuple.GetInt({}), 0);
}

// Copies share their bytes until one writes (issue 30: compiling a 1 GiB
// constant held about three copies of it, one per clone of the module or
// the instruction). A write through any non-const accessor leaves the other
// copies as they were.
TEST(LiteralTest, CopiesShareTheirBytesUntilOneWrites) {
  const Shape shape = Shape::Array(T::kF32, {3});
  const Literal original = Literal::FromDoubles(shape, {1, 2, 3});
  Literal copy = original;
  EXPECT_TRUE(copy.SharesDataWith(original));
  copy.SetDouble({1}, 5);
  EXPECT_FALSE(copy.SharesDataWith(original));
  EXPECT_EQ(original.GetDouble({1}), 2.0);
  EXPECT_EQ(copy.GetDouble({1}), 5.0);

  Literal raw = original;
  raw.data()[0] = 0xff;  // The non-const span is this literal's own.
  EXPECT_EQ(original.GetDouble({0}), 1.0);
  Literal linear = original;
  linear.SetBitsLinear(2, 0);
  EXPECT_EQ(original.GetDouble({2}), 3.0);

  // Tuples share their elements' bytes; a relayout to the same layout is a
  // copy, to another layout new bytes.
  const Literal tuple = Literal::MakeTuple({original, Literal::ScalarInt(T::kS32, 7)});
  EXPECT_TRUE(tuple.element(0).SharesDataWith(original));
  EXPECT_TRUE(original.Relayout(shape).SharesDataWith(original));
  const Shape matrix = Shape::Array(T::kF32, {2, 2});
  const Literal m = Literal::FromDoubles(matrix, {1, 2, 3, 4});
  const Literal transposed = m.Relayout(
      Shape::ArrayWithLayout(T::kF32, std::vector<int64_t>{2, 2}, std::vector<int64_t>{0, 1}));
  EXPECT_FALSE(transposed.SharesDataWith(m));
  EXPECT_EQ(transposed, m);
  EXPECT_TRUE(Literal(Shape::Array(T::kF32, {0})).data().empty());
}

}  // namespace
}  // namespace xjit
