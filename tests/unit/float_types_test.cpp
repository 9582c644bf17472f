#include "ir/float_types.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

namespace wf {
namespace {

TEST(FloatTypes, Bf16RoundTripsEveryCode) {
  for (uint32_t code = 0; code < 65536; ++code) {
    float f = bf16ToFloat(static_cast<uint16_t>(code));
    if (std::isnan(f)) continue;
    EXPECT_EQ(floatToBf16(f), code);
  }
}

TEST(FloatTypes, F16RoundTripsEveryCode) {
  for (uint32_t code = 0; code < 65536; ++code) {
    float f = f16ToFloat(static_cast<uint16_t>(code));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(f16ToFloat(floatToF16(f))));
      continue;
    }
    EXPECT_EQ(floatToF16(f), code) << code;
  }
}

TEST(FloatTypes, F16RoundsToNearestEvenAgainstDouble) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-70000.f, 70000.f);
  for (int i = 0; i < 100000; ++i) {
    float x = dist(rng) * (i % 3 == 0 ? 1e-6f : 1.f);
    float r = f16ToFloat(floatToF16(x));
    // No other f16 value is strictly closer.
    uint16_t c = floatToF16(x);
    for (int d : {-1, 1}) {
      float other = f16ToFloat(static_cast<uint16_t>(c + d));
      if (std::isnan(other) || std::isinf(other) || std::isinf(r)) continue;
      if ((c & 0x7FFF) == 0 && d == -1) continue;
      EXPECT_LE(std::fabs(static_cast<double>(r) - x), std::fabs(static_cast<double>(other) - x)) << x;
    }
  }
}

TEST(FloatTypes, MinifloatsRoundTripEveryCode) {
  for (ElementType t : {ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kF8E4M3FNUZ,
                        ElementType::kF8E5M2FNUZ, ElementType::kF8E4M3B11FNUZ, ElementType::kF8E3M4,
                        ElementType::kF8E4M3, ElementType::kF8E8M0FNU, ElementType::kF4E2M1FN,
                        ElementType::kF6E2M3FN, ElementType::kF6E3M2FN}) {
    int codes = 1 << bitWidth(t);
    for (int code = 0; code < codes; ++code) {
      double v = minifloatToDouble(t, static_cast<uint8_t>(code));
      if (std::isnan(v)) continue;
      uint8_t back = doubleToMinifloat(t, v);
      if (v == 0) {
        EXPECT_EQ(minifloatToDouble(t, back), 0.0);
        continue;
      }
      EXPECT_EQ(back, code) << elementTypeName(t) << " code " << code;
    }
  }
}

TEST(FloatTypes, KnownMinifloatValues) {
  EXPECT_EQ(minifloatToDouble(ElementType::kF8E4M3FN, 0x7E), 448.0);
  EXPECT_TRUE(std::isnan(minifloatToDouble(ElementType::kF8E4M3FN, 0x7F)));
  EXPECT_EQ(minifloatToDouble(ElementType::kF8E5M2, 0x7B), 57344.0);
  EXPECT_TRUE(std::isinf(minifloatToDouble(ElementType::kF8E5M2, 0x7C)));
  EXPECT_EQ(doubleToMinifloat(ElementType::kF8E4M3FN, 1e9), 0x7F);  // overflow -> NaN
  EXPECT_EQ(minifloatToDouble(ElementType::kF4E2M1FN, 0x7), 6.0);
  EXPECT_EQ(doubleToMinifloat(ElementType::kF8E4M3FN, 1.0625), 0x38);  // tie -> even (1.0)
}

}  // namespace
}  // namespace wf
