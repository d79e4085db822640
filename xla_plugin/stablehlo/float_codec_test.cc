// The float codec against values stated by the formats' definitions (IEEE 754 binary16, bfloat16,
// OCP FP8 E4M3/E5M2, the FNUZ variants, OCP MX E8M0/E2M1/E2M3/E3M2): exact bit patterns.
#include "xla_plugin/stablehlo/float_codec.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace pjrtkit {
namespace stablehlo {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNan = std::numeric_limits<double>::quiet_NaN();

TEST(FloatCodecTest, Ieee) {
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF16), 0x3C00u);
  EXPECT_EQ(EncodeFloat(65504.0, ElementType::kF16), 0x7BFFu);
  EXPECT_EQ(EncodeFloat(65520.0, ElementType::kF16), 0x7C00u);  // Rounds to infinity.
  EXPECT_EQ(EncodeFloat(-kInf, ElementType::kF16), 0xFC00u);
  EXPECT_EQ(EncodeFloat(std::ldexp(1.0, -24), ElementType::kF16), 0x0001u);  // Smallest subnormal.
  EXPECT_EQ(EncodeFloat(std::ldexp(1.0, -25), ElementType::kF16), 0x0000u);  // Tie to even: 0.
  EXPECT_EQ(EncodeFloat(-0.0, ElementType::kF16), 0x8000u);
  EXPECT_EQ(EncodeFloat(kNan, ElementType::kF16), 0x7E00u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kBF16), 0x3F80u);
  EXPECT_EQ(EncodeFloat(1.0 + 1.0 / 256, ElementType::kBF16), 0x3F80u);  // Tie to even.
  EXPECT_EQ(EncodeFloat(1.0 + 3.0 / 256, ElementType::kBF16), 0x3F82u);  // Tie to even, up.
  EXPECT_EQ(EncodeFloat(3.0, ElementType::kF8E5M2), 0x42u);
  EXPECT_EQ(EncodeFloat(57344.0, ElementType::kF8E5M2), 0x7Bu);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E4M3), 0x38u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E3M4), 0x30u);
  EXPECT_EQ(EncodeFloat(1.5, ElementType::kF32), 0x3FC00000u);
  EXPECT_EQ(EncodeFloat(1.5, ElementType::kF64), 0x3FF8000000000000u);
}

TEST(FloatCodecTest, FiniteOnlyFormats) {
  EXPECT_EQ(EncodeFloat(448.0, ElementType::kF8E4M3FN), 0x7Eu);
  EXPECT_EQ(EncodeFloat(480.0, ElementType::kF8E4M3FN), 0x7Fu);  // Overflow: NaN.
  EXPECT_EQ(EncodeFloat(-kInf, ElementType::kF8E4M3FN), 0xFFu);
  EXPECT_EQ(EncodeFloat(-2.0, ElementType::kF8E4M3FN), 0xC0u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E4M3FNUZ), 0x40u);
  EXPECT_EQ(EncodeFloat(-0.0, ElementType::kF8E4M3FNUZ), 0x00u);  // No -0.
  EXPECT_EQ(EncodeFloat(kNan, ElementType::kF8E4M3FNUZ), 0x80u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E5M2FNUZ), 0x40u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E4M3B11FNUZ), 0x58u);
  EXPECT_EQ(EncodeFloat(1.0, ElementType::kF8E8M0FNU), 0x7Fu);
  EXPECT_EQ(EncodeFloat(0.25, ElementType::kF8E8M0FNU), 0x7Du);
  EXPECT_EQ(EncodeFloat(6.0, ElementType::kF4E2M1FN), 0x7u);
  EXPECT_EQ(EncodeFloat(-0.5, ElementType::kF4E2M1FN), 0x9u);
  EXPECT_EQ(EncodeFloat(100.0, ElementType::kF4E2M1FN), 0x7u);  // Saturates.
  EXPECT_EQ(EncodeFloat(7.5, ElementType::kF6E2M3FN), 0x1Fu);
  EXPECT_EQ(EncodeFloat(28.0, ElementType::kF6E3M2FN), 0x1Fu);
}

TEST(FloatCodecTest, DecodeRoundTrips) {
  const ElementType types[] = {ElementType::kF16,         ElementType::kBF16,
                               ElementType::kF8E5M2,      ElementType::kF8E4M3FN,
                               ElementType::kF8E4M3FNUZ,  ElementType::kF8E5M2FNUZ,
                               ElementType::kF8E4M3B11FNUZ, ElementType::kF8E4M3,
                               ElementType::kF8E3M4,      ElementType::kF4E2M1FN,
                               ElementType::kF6E2M3FN,    ElementType::kF6E3M2FN};
  for (ElementType type : types) {
    const int bits = ElementTypeBits(type);
    for (uint64_t pattern = 0; pattern < (uint64_t{1} << std::min(bits, 12)); ++pattern) {
      double value = DecodeFloat(pattern, type);
      if (std::isnan(value)) continue;
      uint64_t again = EncodeFloat(value, type);
      // -0 of the FNUZ formats is their NaN, handled above; everything else round-trips.
      EXPECT_EQ(again, pattern) << ElementTypeName(type) << " " << pattern << " " << value;
    }
  }
  EXPECT_TRUE(std::isnan(DecodeFloat(0x80, ElementType::kF8E4M3FNUZ)));
  EXPECT_TRUE(std::isnan(DecodeFloat(0x7F, ElementType::kF8E4M3FN)));
  EXPECT_TRUE(std::isinf(DecodeFloat(0x7C00, ElementType::kF16)));
  EXPECT_EQ(DecodeFloat(0x7F, ElementType::kF8E8M0FNU), 1.0);
}

TEST(FloatCodecTest, Literals) {
  EXPECT_EQ(*FloatLiteralBits("1.000000e+00", ElementType::kF32), 0x3F800000u);
  EXPECT_EQ(*FloatLiteralBits("-2.1858087E-4", ElementType::kF32), 0xB96532DBu);
  EXPECT_EQ(*FloatLiteralBits("0x7FC00000", ElementType::kF32), 0x7FC00000u);
  EXPECT_EQ(*FloatLiteralBits("3", ElementType::kBF16), 0x4040u);
  EXPECT_EQ(*FloatLiteralBits("1e400", ElementType::kF64), 0x7FF0000000000000u);
  EXPECT_FALSE(FloatLiteralBits("0x1FFFF", ElementType::kF16).ok());
  EXPECT_FALSE(FloatLiteralBits("1.5", ElementType::kS32).ok());
  EXPECT_FALSE(FloatLiteralBits("abc", ElementType::kF32).ok());
  EXPECT_EQ(*ParseDecimal("0.1"), 0.1);
}

}  // namespace
}  // namespace stablehlo
}  // namespace pjrtkit
