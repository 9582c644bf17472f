// The shared element math (eval/element_math.h) on the host: the semantics the CPU kernels, the
// CUDA kernels and the fused kernels all take from it, and that every op of its lists has a CPU
// kernel.
#include "eval/element_math.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <set>

#include "eval/interpreter.h"

namespace wf {
namespace {

TEST(ElementMath, IntegerDivisionAndRemainderFollowXla) {
  EXPECT_EQ(em::Div::apply(int32_t{7}, int32_t{0}), -1);
  EXPECT_EQ(em::Div::apply(uint8_t{7}, uint8_t{0}), 0xff);
  EXPECT_EQ(em::Div::apply(std::numeric_limits<int32_t>::min(), int32_t{-1}), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(em::Rem::apply(int32_t{7}, int32_t{0}), 7);
  EXPECT_EQ(em::Rem::apply(std::numeric_limits<int64_t>::min(), int64_t{-1}), 0);
  EXPECT_EQ(em::Div::apply(int16_t{-7}, int16_t{2}), -3);
  EXPECT_EQ(em::Rem::apply(int16_t{-7}, int16_t{2}), -1);
}

TEST(ElementMath, IntegersWrapToTheirWidth) {
  EXPECT_EQ(em::Add::apply(int8_t{127}, int8_t{1}), -128);
  EXPECT_EQ(em::Mul::apply(uint16_t{0xffff}, uint16_t{0xffff}), 1);
  EXPECT_EQ(em::Negate::apply(std::numeric_limits<int32_t>::min()), std::numeric_limits<int32_t>::min());
  EXPECT_EQ(em::Abs::apply(std::numeric_limits<int64_t>::min()), std::numeric_limits<int64_t>::min());
  EXPECT_EQ(em::Pow::apply(int32_t{3}, int32_t{5}), 243);
  EXPECT_EQ(em::Pow::apply(int32_t{-1}, int32_t{-3}), -1);
  EXPECT_EQ(em::Pow::apply(int32_t{2}, int32_t{-1}), 0);
  EXPECT_EQ(em::Pow::apply(uint8_t{3}, uint8_t{7}), static_cast<uint8_t>(2187));
}

TEST(ElementMath, ShiftsAndBitCountsUseTheElementWidth) {
  EXPECT_EQ(em::ShiftLeft::apply(int32_t{1}, int32_t{32}), 0);
  EXPECT_EQ(em::ShiftLeft::apply(int32_t{1}, int32_t{-1}), 0);
  EXPECT_EQ(em::ShiftRightLogical::apply(int8_t{-128}, int8_t{7}), 1);
  EXPECT_EQ(em::ShiftRightArithmetic::apply(int8_t{-128}, int8_t{7}), -1);
  EXPECT_EQ(em::ShiftRightArithmetic::apply(int8_t{-128}, int8_t{9}), -1);
  // A 4-bit element held in a byte (the CPU's si4) and an 8-bit one held in 64 bits (the GPU's).
  EXPECT_EQ(em::ShiftRightArithmetic::apply<4>(int8_t{-8}, int8_t{1}), -4);
  EXPECT_EQ(em::Clz::apply<4>(int8_t{1}), 3);
  EXPECT_EQ(em::Popcnt::apply<4>(int8_t{-1}), 4);
  EXPECT_EQ(em::Clz::apply<8>(int64_t{1}), 7);
  EXPECT_EQ(em::Popcnt::apply<8>(int64_t{-1}), 8);
  EXPECT_EQ(em::MulHi::apply(int32_t{-2}, int32_t{0x40000000}), -1);
  EXPECT_EQ(em::MulHi::apply(uint64_t{1} << 63, uint64_t{4}), 2u);
}

TEST(ElementMath, FloatMaxAndMinAreIeee) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_TRUE(std::isnan(em::Max::apply(1.0f, nan)));
  EXPECT_TRUE(std::isnan(em::Min::apply(nan, 1.0f)));
  EXPECT_FALSE(std::signbit(em::Max::apply(-0.0f, 0.0f)));
  EXPECT_TRUE(std::signbit(em::Min::apply(0.0f, -0.0f)));
  EXPECT_EQ(em::Sign::apply(-3.0), -1.0);
  EXPECT_TRUE(std::signbit(em::Sign::apply(-0.0)));
}

TEST(ElementMath, TotalOrderKeys) {
  const float values[] = {-std::numeric_limits<float>::quiet_NaN(), -std::numeric_limits<float>::infinity(), -1.0f,
                          -0.0f, 0.0f, 1.0f, std::numeric_limits<float>::infinity(),
                          std::numeric_limits<float>::quiet_NaN()};
  for (size_t i = 1; i < std::size(values); ++i)
    EXPECT_LT(em::totalOrderKey(values[i - 1]), em::totalOrderKey(values[i])) << i;
  EXPECT_TRUE(em::compare(em::CmpDir::kLT, em::totalOrderKey(-0.0), em::totalOrderKey(0.0)));
  EXPECT_FALSE(em::compare(em::CmpDir::kLT, -0.0, 0.0));
}

TEST(ElementMath, NarrowFloatsRoundToNearestEven) {
  EXPECT_EQ(em::bf16Store(1.0f), 0x3f80);
  EXPECT_EQ(em::bf16Store(em::bitsFloat(0x3f808000u)), 0x3f80);  // tie to even
  EXPECT_EQ(em::bf16Store(em::bitsFloat(0x3f818000u)), 0x3f82);
  EXPECT_EQ(em::bf16Store(em::bitsFloat(0x7f7fffffu)), 0x7f80);  // overflow to inf
  // The host keeps a NaN's sign and payload (quietened).
  EXPECT_EQ(em::bf16Store(em::bitsFloat(0xff812345u)), 0xffc1);
  EXPECT_EQ(em::bf16Bits(em::bf16Round(3.14159f)), em::bf16Store(3.14159f));
  EXPECT_EQ(em::f16Store(1.0f), 0x3c00);
  EXPECT_EQ(em::f16Store(65520.0f), 0x7c00);
  EXPECT_EQ(em::f16Load(0x3555), em::f16Round(em::f16Load(0x3555)));
  // 1 + 2^-8 + 2^-40 (just above a bf16 tie) rounds up only through the round-to-odd float.
  const double d = 1.0 + std::ldexp(1.0, -8) + std::ldexp(1.0, -40);
  EXPECT_EQ(em::bf16Store(em::doubleToFloatRoundOdd(d)), 0x3f81);
}

// The bf16 nearest to m (ties to even), by integer arithmetic on m's bits.
uint16_t bf16OfInteger(uint64_t m) {
  if (m == 0) return 0;
  const int top = 63 - std::countl_zero(m), shift = top - 7;  // bf16 keeps 8 significant bits
  uint64_t kept = shift > 0 ? m >> shift : m;
  if (shift > 0) {
    const uint64_t rest = m & ((uint64_t{1} << shift) - 1), half = uint64_t{1} << (shift - 1);
    if (rest > half || (rest == half && (kept & 1))) ++kept;
  }
  return em::bf16Store(static_cast<float>(shift > 0 ? std::ldexp(static_cast<double>(kept), shift) : static_cast<double>(m)));
}

TEST(ElementMath, IntegersRoundOnceToBf16ThroughTheRoundToOddFloat) {
  std::mt19937_64 gen(7);
  for (int i = 0; i < 200000; ++i) {
    // Random widths, and values next to bf16 ties (a tie plus or minus a little).
    uint64_t m = gen() >> (gen() % 64);
    if (i % 2) {
      const int top = m ? 63 - std::countl_zero(m) : 0;
      if (top >= 9) m = (m & ~((uint64_t{1} << (top - 7)) - 1)) | (uint64_t{1} << (top - 8)), m += (gen() % 3) - 1;
    }
    ASSERT_EQ(em::bf16Store(em::unsignedToFloatRoundOdd(m)), bf16OfInteger(m)) << m;
    const int64_t s = static_cast<int64_t>(m >> 1);
    if (s == 0) continue;
    ASSERT_EQ(em::bf16Store(em::signedToFloatRoundOdd(-s)), bf16OfInteger(static_cast<uint64_t>(s)) | 0x8000u) << -s;
  }
}

TEST(ElementMath, FloatExpIsWithinOneUlp) {
  // Random floats over the whole range where exp is finite and non-zero (and a little beyond),
  // against float64's exp; the specials exactly.
  auto ulpError = [](float got, double want) {
    if (want > 3.4028234663852886e38) return std::isinf(got) ? 0.0 : 1e9;
    int e;
    std::frexp(want, &e);
    return std::abs(static_cast<double>(got) - want) / std::ldexp(1.0, std::max(e - 24, -149));
  };
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> wide(-110.0f, 100.0f), near(-1.0f, 1.0f);
  double worst = 0;
  for (int i = 0; i < 1000000; ++i) {
    const float x = i % 2 ? wide(gen) : near(gen);
    worst = std::max(worst, ulpError(em::expF32(x), std::exp(static_cast<double>(x))));
  }
  EXPECT_LE(worst, 1.0);
  EXPECT_EQ(em::expF32(0.0f), 1.0f);
  EXPECT_EQ(em::expF32(-0.0f), 1.0f);
  EXPECT_EQ(em::expF32(INFINITY), INFINITY);
  EXPECT_EQ(em::expF32(89.0f), INFINITY);
  EXPECT_EQ(em::expF32(-INFINITY), 0.0f);
  EXPECT_EQ(em::expF32(-104.0f), 0.0f);
  EXPECT_EQ(em::expF32(-103.9f), std::ldexp(1.0f, -149));  // the smallest subnormal
  EXPECT_TRUE(std::isnan(em::expF32(NAN)));
  EXPECT_EQ(em::Exp::apply(1.0), std::exp(1.0));  // double stays libm's
}

TEST(ElementMath, FloatToIntegerSaturates) {
  EXPECT_EQ((em::floatToInt<8, int64_t>(300.7)), 127);
  EXPECT_EQ((em::floatToInt<8, int64_t>(-300.7)), -128);
  EXPECT_EQ((em::floatToInt<16, uint64_t>(-5.0)), 0u);
  EXPECT_EQ((em::floatToInt<64, int64_t>(1e300)), std::numeric_limits<int64_t>::max());
  EXPECT_EQ((em::floatToInt<32, int64_t>(std::nan(""))), 0);
  EXPECT_EQ((em::floatToInt<32, int64_t>(-2.9)), -2);
}

// Random123's known answers for zero counters and keys.
TEST(ElementMath, CounterBasedGeneratorsKnownAnswers) {
  uint32_t x[4] = {0, 0, 0, 0};
  em::philox4x32(0, 0, x);
  EXPECT_EQ(x[0], 0x6627e8d5u);
  EXPECT_EQ(x[1], 0xe169c58du);
  EXPECT_EQ(x[2], 0xbc57ac4cu);
  EXPECT_EQ(x[3], 0x9b00dbd8u);
  uint32_t x0 = 0, x1 = 0;
  em::threeFry2x32(0, 0, x0, x1);
  EXPECT_EQ(x0, 0x6b200159u);
  EXPECT_EQ(x1, 0x99ba4efeu);
}

// The lists name each op once, and the CPU has a kernel for every entry.
TEST(ElementMath, EveryListedOpHasACpuKernel) {
  std::set<OpCode> seen;
  const KernelRegistry& registry = KernelRegistry::instance();
#define WF_CHECK(code, F)                                                             \
  EXPECT_TRUE(seen.insert(OpCode::code).second) << #code;                            \
  EXPECT_NE(registry.find(OpCode::code), nullptr) << #code;
  WF_EM_UNARY_OPS(WF_CHECK) WF_EM_BINARY_OPS(WF_CHECK) WF_EM_CHLO_UNARY_OPS(WF_CHECK) WF_EM_CHLO_BINARY_OPS(WF_CHECK)
#undef WF_CHECK
}

}  // namespace
}  // namespace wf
