// Elementwise kernels against float64 / 128-bit integer references on random data, plus the
// edge cases the spec pins down (NaN, -0, overflow, division by zero, shifts, conversions).
#include <gtest/gtest.h>

#include <atomic>
#include <bit>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <vector>

#include "elementwise_test_util.h"
#include "ir/float_types.h"
#include "support/thread_pool.h"

namespace wf {
namespace {

using ewtest::fromDoubles;
using ewtest::fromInts;
using ewtest::randomDoubles;
using ewtest::randomInts;
using ewtest::runOp;

constexpr ElementType kFloatTypes[] = {ElementType::kF32, ElementType::kF64, ElementType::kBF16, ElementType::kF16};

// Relative error allowed for a transcendental result, in units of the type's epsilon.
double typeEpsilon(ElementType t) {
  switch (t) {
    case ElementType::kF64: return std::ldexp(1.0, -52);
    case ElementType::kF32: return std::ldexp(1.0, -23);
    case ElementType::kBF16: return std::ldexp(1.0, -7);
    case ElementType::kF16: return std::ldexp(1.0, -10);
    default: return 0.1;
  }
}

struct UnaryCase {
  const char* op;
  double lo, hi;
  std::function<double(double)> ref;
  bool exact;  // correctly rounded: must equal the rounded reference
};

TEST(Elementwise, UnaryFloatOpsMatchDoubleReference) {
  const std::vector<UnaryCase> cases = {
      {"stablehlo.exponential", -10, 10, [](double x) { return std::exp(x); }, false},
      {"stablehlo.exponential_minus_one", -2, 2, [](double x) { return std::expm1(x); }, false},
      {"stablehlo.log", 0.01, 100, [](double x) { return std::log(x); }, false},
      {"stablehlo.log_plus_one", -0.9, 10, [](double x) { return std::log1p(x); }, false},
      {"stablehlo.sine", -10, 10, [](double x) { return std::sin(x); }, false},
      {"stablehlo.cosine", -10, 10, [](double x) { return std::cos(x); }, false},
      {"stablehlo.tan", -1.4, 1.4, [](double x) { return std::tan(x); }, false},
      {"stablehlo.tanh", -5, 5, [](double x) { return std::tanh(x); }, false},
      {"stablehlo.logistic", -10, 10, [](double x) { return 1 / (1 + std::exp(-x)); }, false},
      {"stablehlo.rsqrt", 0.01, 100, [](double x) { return 1 / std::sqrt(x); }, false},
      {"stablehlo.cbrt", -100, 100, [](double x) { return std::cbrt(x); }, false},
      {"stablehlo.sqrt", 0, 100, [](double x) { return std::sqrt(x); }, true},
      {"stablehlo.floor", -100, 100, [](double x) { return std::floor(x); }, true},
      {"stablehlo.ceil", -100, 100, [](double x) { return std::ceil(x); }, true},
      {"stablehlo.round_nearest_afz", -100, 100, [](double x) { return std::round(x); }, true},
      {"stablehlo.round_nearest_even", -100, 100, [](double x) { return std::nearbyint(x); }, true},
      {"stablehlo.negate", -100, 100, [](double x) { return -x; }, true},
      {"stablehlo.abs", -100, 100, [](double x) { return std::fabs(x); }, true},
      {"stablehlo.sign", -100, 100, [](double x) { return x > 0 ? 1.0 : x < 0 ? -1.0 : x; }, true},
  };
  for (ElementType t : kFloatTypes) {
    for (const UnaryCase& c : cases) {
      Literal in = fromDoubles(t, randomDoubles(1000, c.lo, c.hi, 7));
      Literal out = runOp(c.op, {in}, in.type());
      Literal want = Literal::zeros(in.type());
      for (int64_t i = 0; i < in.numElements(); ++i) want.setDouble(i, c.ref(in.getDouble(i)));
      int bad = 0;
      for (int64_t i = 0; i < in.numElements() && bad < 3; ++i) {
        const double got = out.getDouble(i), w = want.getDouble(i);
        const double tol = c.exact ? 0.0 : 4 * typeEpsilon(t) * std::fabs(w) + 1e-300;
        if (!(std::fabs(got - w) <= tol)) {
          ++bad;
          ADD_FAILURE() << c.op << " " << elementTypeName(t) << " x=" << in.getDouble(i) << " got " << got
                        << " want " << w;
        }
      }
    }
  }
}

struct BinaryCase {
  const char* op;
  double lo, hi;
  std::function<double(double, double)> ref;
  bool exact;
};

TEST(Elementwise, BinaryFloatOpsMatchDoubleReference) {
  const std::vector<BinaryCase> cases = {
      {"stablehlo.add", -100, 100, [](double a, double b) { return a + b; }, true},
      {"stablehlo.subtract", -100, 100, [](double a, double b) { return a - b; }, true},
      {"stablehlo.multiply", -100, 100, [](double a, double b) { return a * b; }, true},
      {"stablehlo.divide", -100, 100, [](double a, double b) { return a / b; }, true},
      {"stablehlo.maximum", -100, 100, [](double a, double b) { return std::max(a, b); }, true},
      {"stablehlo.minimum", -100, 100, [](double a, double b) { return std::min(a, b); }, true},
      {"stablehlo.remainder", -100, 100, [](double a, double b) { return std::fmod(a, b); }, true},
      {"stablehlo.atan2", -100, 100, [](double a, double b) { return std::atan2(a, b); }, false},
      {"stablehlo.power", 0.1, 4, [](double a, double b) { return std::pow(a, b); }, false},
  };
  for (ElementType t : kFloatTypes) {
    for (const BinaryCase& c : cases) {
      Literal a = fromDoubles(t, randomDoubles(1000, c.lo, c.hi, 11));
      Literal b = fromDoubles(t, randomDoubles(1000, c.lo, c.hi, 12));
      Literal out = runOp(c.op, {a, b}, a.type());
      int bad = 0;
      for (int64_t i = 0; i < a.numElements() && bad < 3; ++i) {
        Literal w = Literal::zeros(Type::scalar(t));
        w.setDouble(0, c.ref(a.getDouble(i), b.getDouble(i)));
        const double got = out.getDouble(i), want = w.getDouble(0);
        const double tol = c.exact ? 0.0 : 4 * typeEpsilon(t) * std::fabs(want) + 1e-300;
        if (!(std::fabs(got - want) <= tol)) {
          ++bad;
          ADD_FAILURE() << c.op << " " << elementTypeName(t) << " a=" << a.getDouble(i) << " b=" << b.getDouble(i)
                        << " got " << got << " want " << want;
        }
      }
    }
  }
}

// Integer references in 128 bits; Literal::setInt wraps them to the element width.
struct IntCase {
  const char* op;
  std::function<__int128(__int128, __int128, int bits, bool isSigned)> ref;
};

__int128 asSignedWidth(__int128 v, int bits) {  // two's-complement reading of the low `bits` bits
  const unsigned __int128 mask = bits >= 128 ? ~static_cast<unsigned __int128>(0)
                                             : (static_cast<unsigned __int128>(1) << bits) - 1;
  unsigned __int128 u = static_cast<unsigned __int128>(v) & mask;
  if (u >> (bits - 1) & 1) return static_cast<__int128>(u) - (static_cast<__int128>(1) << bits);
  return static_cast<__int128>(u);
}

bool shiftOut(__int128 s, int bits) { return s < 0 || s >= bits; }

TEST(Elementwise, IntegerOpsWrapAtTheirWidth) {
  const std::vector<IntCase> cases = {
      {"stablehlo.add", [](__int128 a, __int128 b, int, bool) { return a + b; }},
      {"stablehlo.subtract", [](__int128 a, __int128 b, int, bool) { return a - b; }},
      {"stablehlo.multiply", [](__int128 a, __int128 b, int, bool) { return a * b; }},
      {"stablehlo.divide", [](__int128 a, __int128 b, int, bool) { return b == 0 ? __int128(-1) : a / b; }},
      {"stablehlo.remainder", [](__int128 a, __int128 b, int, bool) { return b == 0 ? a : a % b; }},
      {"stablehlo.maximum", [](__int128 a, __int128 b, int, bool) { return std::max(a, b); }},
      {"stablehlo.minimum", [](__int128 a, __int128 b, int, bool) { return std::min(a, b); }},
      {"stablehlo.and", [](__int128 a, __int128 b, int, bool) { return a & b; }},
      {"stablehlo.or", [](__int128 a, __int128 b, int, bool) { return a | b; }},
      {"stablehlo.xor", [](__int128 a, __int128 b, int, bool) { return a ^ b; }},
      {"stablehlo.shift_left",
       [](__int128 a, __int128 s, int bits, bool) { return shiftOut(s, bits) ? __int128(0) : a << s; }},
      {"stablehlo.shift_right_logical",
       [](__int128 a, __int128 s, int bits, bool) {
         const __int128 u = a & ((static_cast<__int128>(1) << bits) - 1);
         return shiftOut(s, bits) ? __int128(0) : u >> s;
       }},
      {"stablehlo.shift_right_arithmetic",
       [](__int128 a, __int128 s, int bits, bool) {
         const __int128 v = asSignedWidth(a, bits);
         return shiftOut(s, bits) ? (v < 0 ? __int128(-1) : __int128(0)) : v >> s;
       }},
      {"stablehlo.power",
       [](__int128 a, __int128 b, int bits, bool) {
         if (b < 0) return a == 1 ? __int128(1) : a == -1 ? ((b & 1) ? __int128(-1) : __int128(1)) : __int128(0);
         __int128 r = 1;
         for (__int128 i = 0; i < b; ++i) r = asSignedWidth(r * a, bits);
         return r;
       }},
  };
  const ElementType types[] = {ElementType::kSI2, ElementType::kSI4,  ElementType::kSI8,  ElementType::kSI16,
                               ElementType::kSI32, ElementType::kSI64, ElementType::kUI2, ElementType::kUI4,
                               ElementType::kUI8, ElementType::kUI16, ElementType::kUI32, ElementType::kUI64};
  for (ElementType t : types) {
    const int bits = bitWidth(t);
    const bool isSigned = isSignedInteger(t);
    const int64_t lo = isSigned ? (bits == 64 ? INT64_MIN : -(int64_t{1} << (bits - 1))) : 0;
    const int64_t hi = bits == 64 ? INT64_MAX : isSigned ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    std::vector<int64_t> av = randomInts(600, lo, hi, 3), bv = randomInts(600, lo, hi, 4);
    // Edge values: zero divisors, -1, the minimum, small shift amounts and exponents.
    for (int i = 0; i < 40; ++i) bv[static_cast<size_t>(i)] = i % 4 == 0 ? 0 : isSigned && i % 4 == 1 ? -1 : i % (bits + 2);
    for (int i = 40; i < 60; ++i) av[static_cast<size_t>(i)] = lo;
    for (const IntCase& c : cases) {
      std::vector<int64_t> b2 = bv;
      if (std::string(c.op) == "stablehlo.power")
        for (auto& x : b2) x = isSigned ? (x % 7) : static_cast<int64_t>(static_cast<uint64_t>(x) % 7);
      Literal a = fromInts(t, av), b = fromInts(t, b2);
      Literal out = runOp(c.op, {a, b}, a.type());
      Literal want = Literal::zeros(a.type());
      for (int64_t i = 0; i < a.numElements(); ++i) {
        // ui64 values come back from getInt reinterpreted; read them as unsigned.
        auto read = [&](const Literal& l) -> __int128 {
          return isSigned ? __int128(l.getInt(i)) : __int128(static_cast<uint64_t>(l.getBits(i)));
        };
        want.setInt(i, static_cast<int64_t>(c.ref(read(a), read(b), bits, isSigned)));
      }
      int bad = 0;
      for (int64_t i = 0; i < a.numElements() && bad < 3; ++i) {
        if (out.getBits(i) != want.getBits(i)) {
          ++bad;
          ADD_FAILURE() << c.op << " " << elementTypeName(t) << " a=" << a.getInt(i) << " b=" << b.getInt(i)
                        << " got " << out.getInt(i) << " want " << want.getInt(i);
        }
      }
    }
  }
}

TEST(Elementwise, IntegerUnaryOps) {
  // popcnt / count_leading_zeros count within the element width; negate and abs wrap.
  Literal si4 = fromInts(ElementType::kSI4, {-8, -1, 0, 1, 7});
  EXPECT_EQ(ewtest::fromInts(ElementType::kSI4, {1, 4, 0, 1, 3}).getBits(1),
            runOp("stablehlo.popcnt", {si4}, si4.type()).getBits(1));
  Literal pop = runOp("stablehlo.popcnt", {si4}, si4.type());
  Literal clz = runOp("stablehlo.count_leading_zeros", {si4}, si4.type());
  Literal neg = runOp("stablehlo.negate", {si4}, si4.type());
  Literal abs = runOp("stablehlo.abs", {si4}, si4.type());
  Literal sgn = runOp("stablehlo.sign", {si4}, si4.type());
  Literal nt = runOp("stablehlo.not", {si4}, si4.type());
  const std::vector<int64_t> wantPop = {1, 4, 0, 1, 3}, wantClz = {0, 0, 4, 3, 1}, wantNeg = {-8, 1, 0, -1, -7},
                             wantAbs = {-8, 1, 0, 1, 7}, wantSgn = {-1, -1, 0, 1, 1}, wantNot = {7, 0, -1, -2, -8};
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(pop.getInt(i), wantPop[i]) << i;
    EXPECT_EQ(clz.getInt(i), wantClz[i]) << i;
    EXPECT_EQ(neg.getInt(i), wantNeg[i]) << i;
    EXPECT_EQ(abs.getInt(i), wantAbs[i]) << i;
    EXPECT_EQ(sgn.getInt(i), wantSgn[i]) << i;
    EXPECT_EQ(nt.getInt(i), wantNot[i]) << i;
  }
  Literal u64 = fromInts(ElementType::kUI64, {0, 1, -1, int64_t{1} << 40});
  Literal c = runOp("stablehlo.count_leading_zeros", {u64}, u64.type());
  EXPECT_EQ(c.getInt(0), 64);
  EXPECT_EQ(c.getInt(1), 63);
  EXPECT_EQ(c.getInt(2), 0);
  EXPECT_EQ(c.getInt(3), 23);
  Literal b = fromInts(ElementType::kI1, {0, 1});
  Literal nb = runOp("stablehlo.not", {b}, b.type());
  EXPECT_EQ(nb.getInt(0), 1);
  EXPECT_EQ(nb.getInt(1), 0);
}

TEST(Elementwise, FloatEdgeCases) {
  const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
  for (ElementType t : kFloatTypes) {
    Literal a = fromDoubles(t, {nan, 1.0, -0.0, 0.0, inf});
    Literal b = fromDoubles(t, {1.0, nan, 0.0, -0.0, 1.0});
    Literal mx = runOp("stablehlo.maximum", {a, b}, a.type());
    Literal mn = runOp("stablehlo.minimum", {a, b}, a.type());
    EXPECT_TRUE(std::isnan(mx.getDouble(0)) && std::isnan(mx.getDouble(1))) << elementTypeName(t);
    EXPECT_TRUE(std::isnan(mn.getDouble(0)) && std::isnan(mn.getDouble(1))) << elementTypeName(t);
    EXPECT_FALSE(std::signbit(mx.getDouble(2)));
    EXPECT_FALSE(std::signbit(mx.getDouble(3)));
    EXPECT_TRUE(std::signbit(mn.getDouble(2)));
    EXPECT_TRUE(std::signbit(mn.getDouble(3)));
    EXPECT_EQ(mx.getDouble(4), inf);
    Literal sg = runOp("stablehlo.sign", {a}, a.type());
    EXPECT_TRUE(std::isnan(sg.getDouble(0)));
    EXPECT_TRUE(std::signbit(sg.getDouble(2)) && sg.getDouble(2) == 0);
    Literal fin = runOp("stablehlo.is_finite", {a}, Type::tensor({5}, ElementType::kI1));
    EXPECT_EQ(fin.getInt(0), 0);
    EXPECT_EQ(fin.getInt(1), 1);
    EXPECT_EQ(fin.getInt(4), 0);
    Literal ones = fromDoubles(t, {1, 1, 1, 1, 1});
    Literal dz = runOp("stablehlo.divide", {ones, a}, a.type());  // 1 / -0 = -inf
    EXPECT_EQ(dz.getDouble(2), -inf) << elementTypeName(t);
  }
  // round_nearest_afz vs round_nearest_even at ties.
  Literal ties = fromDoubles(ElementType::kF32, {0.5, 1.5, 2.5, -0.5, -2.5});
  Literal afz = runOp("stablehlo.round_nearest_afz", {ties}, ties.type());
  Literal even = runOp("stablehlo.round_nearest_even", {ties}, ties.type());
  const double wantAfz[] = {1, 2, 3, -1, -3}, wantEven[] = {0, 2, 2, -0.0, -2};
  for (int64_t i = 0; i < 5; ++i) {
    EXPECT_EQ(afz.getDouble(i), wantAfz[i]);
    EXPECT_EQ(even.getDouble(i), wantEven[i]);
  }
}

TEST(Elementwise, CompareFloatVersusTotalOrder) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Literal a = fromDoubles(ElementType::kF32, {nan, -0.0, 1.0, nan});
  Literal b = fromDoubles(ElementType::kF32, {nan, 0.0, 2.0, 1.0});
  auto cmp = [&](const char* dir, const char* type) {
    return runOp("stablehlo.compare", {a, b}, Type::tensor({4}, ElementType::kI1),
                 {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", dir)},
                  {"compare_type", Attribute::enumValue("stablehlo", "comparison_type", type)}});
  };
  Literal eqF = cmp("EQ", "FLOAT"), eqT = cmp("EQ", "TOTALORDER"), ltT = cmp("LT", "TOTALORDER"),
          neF = cmp("NE", "FLOAT"), gtT = cmp("GT", "TOTALORDER");
  EXPECT_EQ(eqF.getInt(0), 0);  // NaN != NaN
  EXPECT_EQ(eqF.getInt(1), 1);  // -0 == +0
  EXPECT_EQ(neF.getInt(0), 1);
  EXPECT_EQ(eqT.getInt(0), 1);  // same NaN
  EXPECT_EQ(eqT.getInt(1), 0);  // -0 before +0
  EXPECT_EQ(ltT.getInt(1), 1);
  EXPECT_EQ(ltT.getInt(2), 1);
  EXPECT_EQ(gtT.getInt(3), 1);  // +NaN above everything

  Literal ci = fromInts(ElementType::kUI8, {200, 1});
  Literal cj = fromInts(ElementType::kUI8, {100, 2});
  Literal r = runOp("stablehlo.compare", {ci, cj}, Type::tensor({2}, ElementType::kI1),
                    {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", "GT")}});
  EXPECT_EQ(r.getInt(0), 1);
  EXPECT_EQ(r.getInt(1), 0);
}

TEST(Elementwise, ComplexOps) {
  Literal z = Literal::zeros(Type::tensor({3}, ElementType::kComplexF64));
  z.setComplex(0, {3, 4});
  z.setComplex(1, {-1, 0.5});
  z.setComplex(2, {0.25, -2});
  const auto f64 = Type::tensor({3}, ElementType::kF64);
  Literal ab = runOp("stablehlo.abs", {z}, f64);
  Literal re = runOp("stablehlo.real", {z}, f64);
  Literal im = runOp("stablehlo.imag", {z}, f64);
  Literal ex = runOp("stablehlo.exponential", {z}, z.type());
  Literal lg = runOp("stablehlo.log_plus_one", {z}, z.type());
  Literal em = runOp("stablehlo.exponential_minus_one", {z}, z.type());
  Literal sg = runOp("stablehlo.sign", {z}, z.type());
  Literal pw = runOp("stablehlo.power", {z, z}, z.type());
  for (int64_t i = 0; i < 3; ++i) {
    const std::complex<double> v = z.getComplex(i);
    EXPECT_DOUBLE_EQ(ab.getDouble(i), std::abs(v));
    EXPECT_EQ(re.getDouble(i), v.real());
    EXPECT_EQ(im.getDouble(i), v.imag());
    EXPECT_NEAR(std::abs(ex.getComplex(i) - std::exp(v)), 0, 1e-12 * std::abs(std::exp(v)));
    EXPECT_NEAR(std::abs(lg.getComplex(i) - std::log(1.0 + v)), 0, 1e-12);
    EXPECT_NEAR(std::abs(em.getComplex(i) - (std::exp(v) - 1.0)), 0, 1e-12 * (1 + std::abs(std::exp(v))));
    EXPECT_NEAR(std::abs(sg.getComplex(i) - v / std::abs(v)), 0, 1e-15);
    EXPECT_NEAR(std::abs(pw.getComplex(i) - std::pow(v, v)), 0, 1e-12 * std::abs(std::pow(v, v)));
  }
  Literal re32 = fromDoubles(ElementType::kF32, {1, 2});
  Literal im32 = fromDoubles(ElementType::kF32, {-3, 4});
  Literal c = runOp("stablehlo.complex", {re32, im32}, Type::tensor({2}, ElementType::kComplexF32));
  EXPECT_EQ(c.getComplex(1), std::complex<double>(2, 4));
}

TEST(Elementwise, SelectAndClampBroadcastScalars) {
  Literal pred = fromInts(ElementType::kI1, {1});
  Literal p = Literal::zeros(Type::scalar(ElementType::kI1));
  p.setInt(0, 1);
  Literal t = fromDoubles(ElementType::kBF16, {1, 2, 3});
  Literal f = fromDoubles(ElementType::kBF16, {-1, -2, -3});
  Literal s = runOp("stablehlo.select", {p, t, f}, t.type());
  EXPECT_EQ(s.getDouble(2), 3);
  Literal pv = fromInts(ElementType::kI1, {0, 1, 0});
  Literal s2 = runOp("stablehlo.select", {pv, t, f}, t.type());
  EXPECT_EQ(s2.getDouble(0), -1);
  EXPECT_EQ(s2.getDouble(1), 2);
  Literal lo = Literal::scalarInt(ElementType::kSI32, -2);
  Literal hi = Literal::scalarInt(ElementType::kSI32, 5);
  Literal x = fromInts(ElementType::kSI32, {-10, 0, 10});
  Literal cl = runOp("stablehlo.clamp", {lo, x, hi}, x.type());
  EXPECT_EQ(cl.getInt(0), -2);
  EXPECT_EQ(cl.getInt(1), 0);
  EXPECT_EQ(cl.getInt(2), 5);
}

TEST(Elementwise, ConvertRules) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  Literal f = fromDoubles(ElementType::kF32, {nan, 1e20, -1e20, -2.7, 2.7, 300.5});
  Literal i32 = runOp("stablehlo.convert", {f}, Type::tensor({6}, ElementType::kSI32));
  const int64_t wantI32[] = {0, INT32_MAX, INT32_MIN, -2, 2, 300};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(i32.getInt(i), wantI32[i]) << i;
  Literal u8 = runOp("stablehlo.convert", {f}, Type::tensor({6}, ElementType::kUI8));
  const int64_t wantU8[] = {0, 255, 0, 0, 2, 255};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(u8.getInt(i), wantU8[i]) << i;
  // int -> int wraps.
  Literal ints = fromInts(ElementType::kSI32, {300, -1, 9});
  Literal w8 = runOp("stablehlo.convert", {ints}, Type::tensor({3}, ElementType::kUI8));
  EXPECT_EQ(w8.getInt(0), 44);
  EXPECT_EQ(w8.getInt(1), 255);
  Literal w4 = runOp("stablehlo.convert", {ints}, Type::tensor({3}, ElementType::kSI4));
  EXPECT_EQ(w4.getInt(2), -7);
  // f64 -> bf16 rounds once: 1 + 2^-8 + 2^-30 is just above the tie, so it rounds up.
  Literal d = fromDoubles(ElementType::kF64, {1 + std::ldexp(1.0, -8) + std::ldexp(1.0, -30)});
  Literal bf = runOp("stablehlo.convert", {d}, Type::tensor({1}, ElementType::kBF16));
  EXPECT_EQ(bf.getDouble(0), 1 + std::ldexp(1.0, -7));
  // Same for f16 (10 mantissa bits) just above its tie 1 + 2^-11.
  Literal d16 = fromDoubles(ElementType::kF64, {1 + std::ldexp(1.0, -11) + std::ldexp(1.0, -30)});
  Literal h = runOp("stablehlo.convert", {d16}, Type::tensor({1}, ElementType::kF16));
  EXPECT_EQ(h.getDouble(0), 1 + std::ldexp(1.0, -10));
  // int64 -> f32 rounds once.
  Literal big = fromInts(ElementType::kSI64, {(int64_t{1} << 40) + (int64_t{1} << 16) + 1});
  Literal bf32 = runOp("stablehlo.convert", {big}, Type::tensor({1}, ElementType::kF32));
  EXPECT_EQ(bf32.getDouble(0), static_cast<double>(static_cast<float>((int64_t{1} << 40) + (int64_t{1} << 16) + 1)));
  // int64 -> bf16 rounds once: 2^40 + 2^32 + 1 is just above a bf16 tie, which a float (or, past
  // 2^53, a double) rounded to nearest on the way would land on and then round to even, down.
  Literal ties = fromInts(ElementType::kSI64, {(int64_t{1} << 40) + (int64_t{1} << 32) + 1,
                                               -((int64_t{1} << 40) + (int64_t{1} << 32) + 1)});
  Literal tiesBf = runOp("stablehlo.convert", {ties}, Type::tensor({2}, ElementType::kBF16));
  EXPECT_EQ(tiesBf.getDouble(0), std::ldexp(1.0, 40) + std::ldexp(1.0, 33));
  EXPECT_EQ(tiesBf.getDouble(1), -(std::ldexp(1.0, 40) + std::ldexp(1.0, 33)));
  Literal uties = fromInts(ElementType::kUI64, {static_cast<int64_t>((uint64_t{1} << 63) + (uint64_t{1} << 55) + 1)});
  Literal utiesBf = runOp("stablehlo.convert", {uties}, Type::tensor({1}, ElementType::kBF16));
  EXPECT_EQ(utiesBf.getDouble(0), std::ldexp(1.0, 63) + std::ldexp(1.0, 56));
  // Booleans and complex.
  Literal c = Literal::zeros(Type::tensor({2}, ElementType::kComplexF64));
  c.setComplex(0, {0, 1});
  c.setComplex(1, {-2.5, 1});
  Literal cb = runOp("stablehlo.convert", {c}, Type::tensor({2}, ElementType::kI1));
  EXPECT_EQ(cb.getInt(0), 0);
  EXPECT_EQ(cb.getInt(1), 1);
  Literal ci = runOp("stablehlo.convert", {c}, Type::tensor({2}, ElementType::kSI64));
  EXPECT_EQ(ci.getInt(1), -2);
  Literal c64 = runOp("stablehlo.convert", {c}, Type::tensor({2}, ElementType::kComplexF32));
  EXPECT_EQ(c64.getComplex(1), std::complex<double>(-2.5, 1));
  Literal um = fromInts(ElementType::kUI64, {-1});
  Literal umf = runOp("stablehlo.convert", {um}, Type::tensor({1}, ElementType::kF64));
  EXPECT_EQ(umf.getDouble(0), 18446744073709551616.0);
  // Every float type round-trips small integers through every other float type.
  const ElementType floats[] = {ElementType::kF8E4M3FN, ElementType::kF8E5M2, ElementType::kBF16,
                                ElementType::kF16,      ElementType::kF32,    ElementType::kF64};
  for (ElementType from : floats)
    for (ElementType to : floats) {
      Literal v = fromDoubles(from, {-3, 0.5, 2, 6});
      Literal r = runOp("stablehlo.convert", {v}, Type::tensor({4}, to));
      for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(r.getDouble(i), v.getDouble(i));
    }
}

TEST(Elementwise, BitcastConvertChangesWidths) {
  Literal d = Literal::zeros(Type::scalar(ElementType::kF64));
  d.setBits(0, 0x0123456789ABCDEFull);
  Literal h = runOp("stablehlo.bitcast_convert", {d}, Type::tensor({4}, ElementType::kF16));
  EXPECT_EQ(h.getBits(0), 0xCDEFu);
  EXPECT_EQ(h.getBits(3), 0x0123u);
  Literal back = runOp("stablehlo.bitcast_convert", {h}, Type::scalar(ElementType::kF64));
  EXPECT_EQ(back.getBits(0), 0x0123456789ABCDEFull);
  Literal bits = runOp("stablehlo.bitcast_convert", {d}, Type::tensor({64}, ElementType::kI1));
  for (int64_t i = 0; i < 64; ++i) EXPECT_EQ(bits.getInt(i), static_cast<int64_t>((0x0123456789ABCDEFull >> i) & 1));
  Literal i64 = runOp("stablehlo.bitcast_convert", {bits}, Type::scalar(ElementType::kSI64));
  EXPECT_EQ(i64.getBits(0), 0x0123456789ABCDEFull);
  Literal nib = fromInts(ElementType::kSI4, {1, -1});
  Literal byte = runOp("stablehlo.bitcast_convert", {nib}, Type::scalar(ElementType::kSI8));
  EXPECT_EQ(byte.getInt(0), -15);  // 0xF1
  Literal split = runOp("stablehlo.bitcast_convert", {byte}, Type::tensor({2}, ElementType::kSI4));
  EXPECT_EQ(split.getInt(0), 1);
  EXPECT_EQ(split.getInt(1), -1);
  Literal c = Literal::zeros(Type::scalar(ElementType::kComplexF64));
  c.dataAs<uint64_t>()[0] = 0x0123456789ABCDEFull;
  c.dataAs<uint64_t>()[1] = 0x0000000011111111ull;
  Literal c32 = runOp("stablehlo.bitcast_convert", {c}, Type::tensor({2}, ElementType::kComplexF32));
  EXPECT_EQ(c32.dataAs<uint32_t>()[0], 0x89ABCDEFu);
  EXPECT_EQ(c32.dataAs<uint32_t>()[1], 0x01234567u);
  EXPECT_EQ(c32.dataAs<uint32_t>()[2], 0x11111111u);
}

TEST(Elementwise, ReducePrecisionMatchesXla) {
  Literal in = Literal::zeros(Type::tensor({6}, ElementType::kF64));
  const uint64_t bitsIn[] = {0x7FF0000000000000ull, 0x7FFFFFFFFFFFFFFFull, 1, 0, 0, 0};
  for (int64_t i = 0; i < 3; ++i) in.setBits(i, bitsIn[i]);
  in.setDouble(3, 0.0);
  in.setDouble(4, 65505.0);
  in.setDouble(5, 65520.0);
  auto attrs = [](int e, int m) {
    return std::vector<NamedAttribute>{{"exponent_bits", Attribute::integer(e, ElementType::kSI32)},
                                       {"mantissa_bits", Attribute::integer(m, ElementType::kSI32)}};
  };
  Literal out = runOp("stablehlo.reduce_precision", {in}, in.type(), attrs(5, 10));
  EXPECT_EQ(out.getBits(0), 0x7FF0000000000000ull);
  EXPECT_TRUE(std::isnan(out.getDouble(1)));
  EXPECT_EQ(out.getDouble(2), 0.0);
  EXPECT_EQ(out.getDouble(4), 65504.0);
  EXPECT_TRUE(std::isinf(out.getDouble(5)));
  Literal nan = runOp("stablehlo.reduce_precision", {in}, in.type(), attrs(5, 0));
  EXPECT_TRUE(std::isinf(nan.getDouble(1)));
  // e8m7 on f32 is exactly bf16 rounding.
  Literal f = fromDoubles(ElementType::kF32, randomDoubles(500, -1e6, 1e6, 5));
  Literal r = runOp("stablehlo.reduce_precision", {f}, f.type(), attrs(8, 7));
  for (int64_t i = 0; i < f.numElements(); ++i)
    EXPECT_EQ(r.getDouble(i), static_cast<double>(bf16ToFloat(floatToBf16(static_cast<float>(f.getDouble(i))))));
}

TEST(Elementwise, LargeInputsRunInParallelAndMatch) {
  const int64_t n = 1 << 20;
  Literal a = Literal::zeros(Type::tensor({n}, ElementType::kF32));
  Literal b = Literal::zeros(Type::tensor({n}, ElementType::kF32));
  for (int64_t i = 0; i < n; ++i) {
    a.dataAs<float>()[i] = static_cast<float>(i % 1000) * 0.5f;
    b.dataAs<float>()[i] = static_cast<float>(i % 7) + 1;
  }
  Literal out = runOp("stablehlo.divide", {a, b}, a.type());
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(out.dataAs<float>()[i], a.dataAs<float>()[i] / b.dataAs<float>()[i]);
}

TEST(Elementwise, ErrorsNameTheOp) {
  ewtest::SingleOp op("stablehlo.popcnt", {Type::tensor({2}, ElementType::kF32)}, Type::tensor({2}, ElementType::kF32));
  auto r = op.run({fromDoubles(ElementType::kF32, {1, 2})});
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.status().message().find("stablehlo.popcnt"), std::string::npos);
}

TEST(ThreadPool, ParallelForCoversEveryIndexOnce) {
  EXPECT_GE(numThreads(), 1);
  for (int64_t n : {0, 1, 5, 1000, 100003}) {
    for (int64_t grain : {1, 7, 1024}) {
      std::vector<std::atomic<int>> hits(static_cast<size_t>(n));
      parallelFor(n, grain, [&](int64_t b, int64_t e) {
        EXPECT_LE(b, e);
        for (int64_t i = b; i < e; ++i) hits[static_cast<size_t>(i)].fetch_add(1);
      });
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(hits[static_cast<size_t>(i)].load(), 1) << n << " " << grain;
    }
  }
  // Nested calls run inline and still cover everything.
  std::atomic<int64_t> sum{0};
  parallelFor(64, 1, [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) parallelFor(100, 1, [&](int64_t b2, int64_t e2) { sum += e2 - b2; });
  });
  EXPECT_EQ(sum.load(), 6400);
}

}  // namespace
}  // namespace wf
