// Float formats: every code of every narrow type round-trips through double,
// and hand-worked values (from each format's definition: widths, bias,
// special encodings) check rounding, subnormals and overflow.
#include "ir/float_format.h"

#include <cmath>
#include <limits>
#include <vector>

#include "gtest/gtest.h"

namespace xjit {
namespace {

using T = ElementType;

const std::vector<ElementType> kNarrowTypes = {
    T::kF16,        T::kBF16,       T::kF8E5M2,        T::kF8E4M3,      T::kF8E4M3FN,
    T::kF8E3M4,     T::kF8E4M3FNUZ, T::kF8E5M2FNUZ,    T::kF8E4M3B11FNUZ, T::kF8E8M0FNU,
    T::kF4E2M1FN};

uint64_t Bits(ElementType type, double value) { return DoubleToFloatBits(type, value); }

TEST(FloatFormatTest, EveryCodeRoundTrips) {
  for (ElementType type : kNarrowTypes) {
    const int width = BitWidth(type);
    int nans = 0;
    for (uint64_t code = 0; code < (uint64_t{1} << width); ++code) {
      const double value = FloatBitsToDouble(type, code);
      if (std::isnan(value)) ++nans;
      EXPECT_EQ(DoubleToFloatBits(type, value), code)
          << ElementTypeName(type) << " code " << code << " value " << value;
    }
    // NaN encodings per format definition.
    int expected_nans = 0;
    switch (type) {
      case T::kF16: expected_nans = 2 * 1023; break;
      case T::kBF16: expected_nans = 2 * 127; break;
      case T::kF8E5M2: expected_nans = 2 * 3; break;
      case T::kF8E4M3: expected_nans = 2 * 7; break;
      case T::kF8E3M4: expected_nans = 2 * 15; break;
      case T::kF8E4M3FN: expected_nans = 2; break;
      case T::kF8E4M3FNUZ:
      case T::kF8E5M2FNUZ:
      case T::kF8E4M3B11FNUZ:
      case T::kF8E8M0FNU: expected_nans = 1; break;
      default: expected_nans = 0; break;
    }
    EXPECT_EQ(nans, expected_nans) << ElementTypeName(type);
  }
}

TEST(FloatFormatTest, F32AndF64) {
  EXPECT_EQ(Bits(T::kF32, 1.0), 0x3F800000u);
  EXPECT_EQ(Bits(T::kF32, 1.0 + std::ldexp(1.0, -24)), 0x3F800000u);  // Tie to even.
  EXPECT_EQ(Bits(T::kF32, 1.0 + std::ldexp(1.0, -24) + std::ldexp(1.0, -50)), 0x3F800001u);
  EXPECT_EQ(Bits(T::kF32, 1.0 + 3 * std::ldexp(1.0, -24)), 0x3F800002u);
  EXPECT_EQ(Bits(T::kF32, -0.0), 0x80000000u);
  EXPECT_EQ(Bits(T::kF32, 1e39), 0x7F800000u);
  EXPECT_EQ(FloatBitsToDouble(T::kF32, 0x00000001), std::ldexp(1.0, -149));
  EXPECT_EQ(FloatBitsToDouble(T::kF64, 0x3FF0000000000000ull), 1.0);
  EXPECT_EQ(Bits(T::kF64, -2.5), 0xC004000000000000ull);
  EXPECT_EQ(FloatMax(T::kF32), std::numeric_limits<float>::max());
  EXPECT_EQ(FloatMax(T::kF64), std::numeric_limits<double>::max());
  EXPECT_EQ(FloatMinNormal(T::kF32), std::ldexp(1.0, -126));
}

TEST(FloatFormatTest, F16) {
  EXPECT_EQ(Bits(T::kF16, 1.0), 0x3C00u);
  EXPECT_EQ(Bits(T::kF16, -2.0), 0xC000u);
  EXPECT_EQ(Bits(T::kF16, 65504), 0x7BFFu);
  EXPECT_EQ(Bits(T::kF16, 65519.99), 0x7BFFu);
  EXPECT_EQ(Bits(T::kF16, 65520), 0x7C00u);  // Tie rounds to even: overflow to inf.
  EXPECT_EQ(Bits(T::kF16, -1e10), 0xFC00u);
  EXPECT_EQ(Bits(T::kF16, 2049), 0x6800u);  // Tie between 2048 and 2050: even 2048.
  EXPECT_EQ(Bits(T::kF16, 2051), 0x6802u);  // Tie between 2050 and 2052: even 2052.
  EXPECT_EQ(Bits(T::kF16, 1.0 / 3), 0x3555u);
  EXPECT_EQ(Bits(T::kF16, std::ldexp(1.0, -24)), 0x0001u);  // Smallest subnormal.
  EXPECT_EQ(Bits(T::kF16, std::ldexp(1.0, -25)), 0x0000u);  // Tie to even zero.
  EXPECT_EQ(Bits(T::kF16, std::ldexp(1.0, -25) * 1.0000001), 0x0001u);
  EXPECT_EQ(Bits(T::kF16, 3 * std::ldexp(1.0, -25)), 0x0002u);  // Tie: 1 or 2 quanta -> 2.
  EXPECT_EQ(Bits(T::kF16, std::ldexp(1.0, -14) - std::ldexp(1.0, -26)), 0x0400u);  // Up to normal.
  EXPECT_EQ(Bits(T::kF16, -0.0), 0x8000u);
  EXPECT_EQ(Bits(T::kF16, std::numeric_limits<double>::quiet_NaN()), 0x7E00u);
  EXPECT_EQ(Bits(T::kF16, std::numeric_limits<double>::infinity()), 0x7C00u);
  EXPECT_EQ(FloatBitsToDouble(T::kF16, 0x3555), 0.333251953125);
  EXPECT_EQ(FloatMax(T::kF16), 65504);
  EXPECT_EQ(FloatMinNormal(T::kF16), std::ldexp(1.0, -14));
}

TEST(FloatFormatTest, BF16) {
  EXPECT_EQ(Bits(T::kBF16, 1.0), 0x3F80u);
  EXPECT_EQ(Bits(T::kBF16, 1.0 + std::ldexp(1.0, -8)), 0x3F80u);      // Tie to even.
  EXPECT_EQ(Bits(T::kBF16, 1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82u);  // Tie to even.
  EXPECT_EQ(Bits(T::kBF16, 3.14159265358979), 0x4049u);
  EXPECT_EQ(Bits(T::kBF16, 0.1), 0x3DCDu);
  EXPECT_EQ(FloatMax(T::kBF16), 3.3895313892515355e38);
  EXPECT_EQ(Bits(T::kBF16, 3.3895313892515355e38), 0x7F7Fu);
  EXPECT_EQ(Bits(T::kBF16, 3.4e38), 0x7F80u);
  EXPECT_EQ(Bits(T::kBF16, std::ldexp(1.0, -133)), 0x0001u);
  EXPECT_EQ(FloatMinNormal(T::kBF16), std::ldexp(1.0, -126));
}

TEST(FloatFormatTest, F8E5M2) {
  EXPECT_EQ(Bits(T::kF8E5M2, 1.0), 0x3Cu);
  EXPECT_EQ(Bits(T::kF8E5M2, 57344), 0x7Bu);
  EXPECT_EQ(Bits(T::kF8E5M2, 61440), 0x7Cu);  // Tie rounds to even: inf.
  EXPECT_EQ(Bits(T::kF8E5M2, 61439), 0x7Bu);
  EXPECT_EQ(Bits(T::kF8E5M2, -std::numeric_limits<double>::infinity()), 0xFCu);
  EXPECT_EQ(Bits(T::kF8E5M2, std::ldexp(1.0, -16)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E5M2, std::numeric_limits<double>::quiet_NaN()), 0x7Eu);
  EXPECT_EQ(FloatMax(T::kF8E5M2), 57344);
  EXPECT_TRUE(FloatHasInfinity(T::kF8E5M2));
}

TEST(FloatFormatTest, F8E4M3) {
  EXPECT_EQ(Bits(T::kF8E4M3, 1.0), 0x38u);
  EXPECT_EQ(Bits(T::kF8E4M3, 240), 0x77u);
  EXPECT_EQ(Bits(T::kF8E4M3, 1000), 0x78u);
  EXPECT_TRUE(std::isinf(FloatBitsToDouble(T::kF8E4M3, 0x78)));
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(T::kF8E4M3, 0x79)));
  EXPECT_EQ(FloatMax(T::kF8E4M3), 240);
  EXPECT_EQ(FloatMinNormal(T::kF8E4M3), std::ldexp(1.0, -6));
}

TEST(FloatFormatTest, F8E4M3FN) {
  EXPECT_EQ(Bits(T::kF8E4M3FN, 1.0), 0x38u);
  EXPECT_EQ(Bits(T::kF8E4M3FN, 448), 0x7Eu);
  EXPECT_EQ(Bits(T::kF8E4M3FN, 464), 0x7Eu);  // Tie: even mantissa 110.
  EXPECT_EQ(Bits(T::kF8E4M3FN, 465), 0x7Fu);  // Overflow: NaN.
  EXPECT_EQ(Bits(T::kF8E4M3FN, -1000), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E4M3FN, std::numeric_limits<double>::infinity()), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E4M3FN, std::ldexp(1.0, -9)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E4M3FN, -0.0), 0x80u);
  EXPECT_EQ(FloatBitsToDouble(T::kF8E4M3FN, 0x78), 256);  // Exponent 1111 is finite.
  EXPECT_TRUE(std::isnan(FloatBitsToDouble(T::kF8E4M3FN, 0xFF)));
  EXPECT_EQ(FloatMax(T::kF8E4M3FN), 448);
  EXPECT_FALSE(FloatHasInfinity(T::kF8E4M3FN));
  EXPECT_TRUE(FloatHasNan(T::kF8E4M3FN));
}

TEST(FloatFormatTest, F8E3M4) {
  EXPECT_EQ(Bits(T::kF8E3M4, 1.0), 0x30u);
  EXPECT_EQ(Bits(T::kF8E3M4, 15.5), 0x6Fu);
  EXPECT_EQ(Bits(T::kF8E3M4, 16), 0x70u);  // Past max + half ulp: inf.
  EXPECT_EQ(FloatMax(T::kF8E3M4), 15.5);
  EXPECT_EQ(FloatMinNormal(T::kF8E3M4), 0.25);
}

TEST(FloatFormatTest, Fnuz) {
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, 1.0), 0x40u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, 240), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, 300), 0x80u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, -300), 0x80u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, -0.0), 0x00u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, -std::ldexp(1.0, -20)), 0x00u);  // Rounds to +0.
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, std::ldexp(1.0, -10)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, -std::ldexp(1.0, -10)), 0x81u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, std::numeric_limits<double>::quiet_NaN()), 0x80u);
  EXPECT_EQ(Bits(T::kF8E4M3FNUZ, std::numeric_limits<double>::infinity()), 0x80u);
  EXPECT_EQ(FloatMax(T::kF8E4M3FNUZ), 240);
  EXPECT_EQ(FloatMinNormal(T::kF8E4M3FNUZ), std::ldexp(1.0, -7));

  EXPECT_EQ(Bits(T::kF8E5M2FNUZ, 1.0), 0x40u);
  EXPECT_EQ(Bits(T::kF8E5M2FNUZ, 57344), 0x7Fu);
  EXPECT_EQ(FloatMax(T::kF8E5M2FNUZ), 57344);
  EXPECT_EQ(FloatMinNormal(T::kF8E5M2FNUZ), std::ldexp(1.0, -15));

  EXPECT_EQ(Bits(T::kF8E4M3B11FNUZ, 1.0), 0x58u);
  EXPECT_EQ(Bits(T::kF8E4M3B11FNUZ, 30), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E4M3B11FNUZ, 32), 0x80u);
  EXPECT_EQ(FloatMax(T::kF8E4M3B11FNUZ), 30);
  EXPECT_EQ(FloatMinNormal(T::kF8E4M3B11FNUZ), std::ldexp(1.0, -10));
  EXPECT_FALSE(FloatHasInfinity(T::kF8E5M2FNUZ));
}

TEST(FloatFormatTest, F8E8M0FNU) {
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.0), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::ldexp(1.0, -127)), 0x00u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::ldexp(1.0, 127)), 0xFEu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::ldexp(1.0, 128)), 0xFFu);
  // As XLA converts (its evaluator casts with ml_dtypes' float8_e8m0fnu;
  // every value below was checked against ml_dtypes 0.7): no zero and no
  // sign, so +-0 and negative values are NaN, as are NaN and +-inf.
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 0.0), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, -0.0), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, -1.0), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, -0.5), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, -std::ldexp(1.0, -130)), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::numeric_limits<double>::quiet_NaN()), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::numeric_limits<double>::infinity()), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, -std::numeric_limits<double>::infinity()), 0xFFu);
  // Positive values below 2^-127 are the smallest code, 2^-127.
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::ldexp(1.0, -128)), 0x00u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 0.75 * std::ldexp(1.0, -127)), 0x00u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::numeric_limits<double>::denorm_min()), 0x00u);
  // Above 2^-127 and below 2^-126, everything goes up to 2^-126.
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.2 * std::ldexp(1.0, -127)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.5 * std::ldexp(1.0, -127)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.6 * std::ldexp(1.0, -127)), 0x01u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.6 * std::ldexp(1.0, -126)), 0x02u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.4 * std::ldexp(1.0, -126)), 0x01u);
  // Above: m * 2^u goes up when m >= 1.5 (ties away from zero).
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 0.75), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 0.7), 0x7Eu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.4), 0x7Fu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.5), 0x80u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 3.0), 0x81u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 3.2), 0x81u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 5.0), 0x81u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 6.0), 0x82u);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 12.0), 0x83u);
  // Overflow: 1.5 * 2^127 rounds to 2^128, which has no code.
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.4 * std::ldexp(1.0, 127)), 0xFEu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, 1.5 * std::ldexp(1.0, 127)), 0xFFu);
  EXPECT_EQ(Bits(T::kF8E8M0FNU, std::numeric_limits<double>::max()), 0xFFu);
  EXPECT_EQ(FloatBitsToDouble(T::kF8E8M0FNU, 0x80), 2.0);
  EXPECT_EQ(FloatMax(T::kF8E8M0FNU), std::ldexp(1.0, 127));
  EXPECT_EQ(FloatMinNormal(T::kF8E8M0FNU), std::ldexp(1.0, -127));
  EXPECT_EQ(FloatExponentBits(T::kF8E8M0FNU), 8);
  EXPECT_EQ(FloatMantissaBits(T::kF8E8M0FNU), 0);
}

TEST(FloatFormatTest, F4E2M1FN) {
  const double values[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (int code = 0; code < 8; ++code) {
    EXPECT_EQ(FloatBitsToDouble(T::kF4E2M1FN, code), values[code]);
    EXPECT_EQ(FloatBitsToDouble(T::kF4E2M1FN, code | 8), -values[code]);
  }
  EXPECT_EQ(Bits(T::kF4E2M1FN, 5.0), 0x6u);   // Tie 4 / 6: even mantissa.
  EXPECT_EQ(Bits(T::kF4E2M1FN, 7.0), 0x7u);   // Saturates.
  EXPECT_EQ(Bits(T::kF4E2M1FN, 100), 0x7u);
  EXPECT_EQ(Bits(T::kF4E2M1FN, -std::numeric_limits<double>::infinity()), 0xFu);
  EXPECT_EQ(Bits(T::kF4E2M1FN, std::numeric_limits<double>::quiet_NaN()), 0x8u);
  EXPECT_EQ(Bits(T::kF4E2M1FN, 0.25), 0x0u);  // Tie 0 / 0.5: even.
  EXPECT_EQ(Bits(T::kF4E2M1FN, 0.75), 0x2u);  // Tie 0.5 / 1: even.
  EXPECT_EQ(Bits(T::kF4E2M1FN, 2.5), 0x4u);   // Tie 2 / 3: even.
  EXPECT_EQ(FloatMax(T::kF4E2M1FN), 6);
  EXPECT_EQ(FloatMinNormal(T::kF4E2M1FN), 1);
  EXPECT_FALSE(FloatHasNan(T::kF4E2M1FN));
  EXPECT_FALSE(FloatHasInfinity(T::kF4E2M1FN));
}

TEST(FloatFormatTest, WidthsAndSpecials) {
  EXPECT_EQ(FloatExponentBits(T::kF32), 8);
  EXPECT_EQ(FloatMantissaBits(T::kF32), 23);
  EXPECT_EQ(FloatExponentBits(T::kF64), 11);
  EXPECT_EQ(FloatMantissaBits(T::kF64), 52);
  EXPECT_EQ(FloatExponentBits(T::kBF16), 8);
  EXPECT_EQ(FloatMantissaBits(T::kBF16), 7);
  EXPECT_EQ(FloatExponentBits(T::kF8E3M4), 3);
  EXPECT_EQ(FloatMantissaBits(T::kF8E3M4), 4);
  EXPECT_TRUE(FloatHasInfinity(T::kF16));
  EXPECT_TRUE(FloatHasNan(T::kF8E8M0FNU));
}

TEST(FloatFormatTest, NanPayloadsSurvive) {
  // f16 NaN with payload 0x001 (signalling) keeps its bits through double.
  EXPECT_EQ(Bits(T::kF16, FloatBitsToDouble(T::kF16, 0x7C01)), 0x7C01u);
  EXPECT_EQ(Bits(T::kF16, FloatBitsToDouble(T::kF16, 0xFE00)), 0xFE00u);
  // A NaN from f32 keeps the sign and top payload bits and stays a NaN.
  EXPECT_EQ(Bits(T::kBF16, FloatBitsToDouble(T::kF32, 0xFFC10000u)), 0xFFC1u);
  EXPECT_EQ(Bits(T::kF8E5M2, FloatBitsToDouble(T::kF32, 0x7F800001u)), 0x7Eu);
}

}  // namespace
}  // namespace xjit
