// The product epilogue's erf GELU (backends/cuda/cutlass/gelu_erf.h) on the host, against the
// GELU in f64: its error over the f32 range, its bf16 and f16 results, and its special values.
// On the host its exponential is std::exp2; the device's ex2.approx (2 ulp) is covered by the
// GPU test of the epilogue against the two steps (tests/cuda/dot_epilogue_test.cpp).
#include "backends/cuda/cutlass/gelu_erf.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <iostream>
#include <limits>

#include "ir/float_types.h"

namespace wf {
namespace {

double geluF64(double x) { return x * 0.5 * std::erfc(-x / std::sqrt(2.0)); }

// The formula as the program writes it, in f32 ops, with erf rounded once to f32.
float geluFormulaF32(float x) {
  const float e = static_cast<float>(std::erf(static_cast<double>(x * 0.70710677f)));
  return (x * 0.5f) * (e + 1.0f);
}

// Every 64th f32 of [-8, 8] (35 million): as far from the f64 GELU as the formula in f32 ops is,
// relative to max(|x|, 1), and rounded to bf16 (f16) where the f64 GELU rounds, as often as it.
TEST(GeluErf, MatchesTheF64GeluAsCloselyAsTheF32Formula) {
  double worst = 0, worstFormula = 0, worstAt = 0;
  int64_t count = 0, bf16Differ = 0, f16Differ = 0, formulaBf16Differ = 0, formulaF16Differ = 0;
  for (float sign : {1.0f, -1.0f}) {
    for (uint32_t bits = 0; bits <= std::bit_cast<uint32_t>(8.0f); bits += 64) {
      const float x = sign * std::bit_cast<float>(bits);
      const double want = geluF64(x);
      const float got = cuda::geluErfF32(x), formula = geluFormulaF32(x);
      const double scale = std::max(std::fabs(static_cast<double>(x)), 1.0);
      const double err = std::fabs(got - want) / scale;
      if (err > worst) worst = err, worstAt = x;
      worstFormula = std::max(worstFormula, std::fabs(formula - want) / scale);
      bf16Differ += floatToBf16(got) != floatToBf16(static_cast<float>(want));
      f16Differ += floatToF16(got) != floatToF16(static_cast<float>(want));
      formulaBf16Differ += floatToBf16(formula) != floatToBf16(static_cast<float>(want));
      formulaF16Differ += floatToF16(formula) != floatToF16(static_cast<float>(want));
      ++count;
    }
  }
  std::cout << count << " values: at most " << worst << " * max(|x|, 1) off (at x = " << worstAt
            << "), the f32 formula " << worstFormula << "; rounded to bf16 " << bf16Differ << " and to f16 "
            << f16Differ << " differ (the f32 formula's " << formulaBf16Differ << " and " << formulaF16Differ << ")\n";
  EXPECT_LE(worst, 2.0e-7);
  EXPECT_LE(worst, 2.0 * worstFormula);
  // Most of those differences are ties of x / 2 near 0, where f32 cannot hold x / 2 + x^2 / sqrt(2 pi)
  // (nor the formula's 1 + erf): no more of them than the formula's own.
  EXPECT_LE(bf16Differ, formulaBf16Differ);
  EXPECT_LE(f16Differ, formulaF16Differ);
  EXPECT_LE(bf16Differ, count / 400);
}

// Where h(a) is largest relative to x's resolution the GELU is x * 0.5 near 0, and x beyond 6.
TEST(GeluErf, SmallAndLargeArguments) {
  for (float x : {1e-30f, -1e-30f, 1e-6f, -1e-6f, 3e-3f, -3e-3f})
    EXPECT_NEAR(cuda::geluErfF32(x), geluF64(x), 2e-7 * std::fabs(x)) << x;
  for (float x : {6.5f, 10.0f, 1e4f, 3e38f}) EXPECT_EQ(cuda::geluErfF32(x), x) << x;
  for (float x : {-6.5f, -10.0f, -1e4f, -3e38f}) {
    EXPECT_LE(cuda::geluErfF32(x), 0.0f) << x;
    EXPECT_GE(cuda::geluErfF32(x), -1e-8f) << x;
  }
}

TEST(GeluErf, SpecialValuesAsTheFormula) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_TRUE(std::isnan(cuda::geluErfF32(std::numeric_limits<float>::quiet_NaN())));
  EXPECT_TRUE(std::isnan(geluFormulaF32(-inf)));
  EXPECT_TRUE(std::isnan(cuda::geluErfF32(-inf)));
  EXPECT_EQ(cuda::geluErfF32(inf), inf);
  EXPECT_EQ(cuda::geluErfF32(0.0f), 0.0f);
}

}  // namespace
}  // namespace wf
