// chlo kernels: special functions against known values and identities, predicates, mulhi,
// next_after, constants and numpy broadcasting.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <limits>
#include <numbers>

#include "elementwise_test_util.h"

namespace wf {
namespace {

using ewtest::fromDoubles;
using ewtest::fromInts;
using ewtest::randomDoubles;
using ewtest::runOp;

TEST(Chlo, InverseTrigAndHyperbolicMatchStd) {
  struct Case {
    const char* op;
    double lo, hi;
    double (*ref)(double);
  };
  const Case cases[] = {
      {"chlo.acos", -1, 1, [](double x) { return std::acos(x); }},
      {"chlo.asin", -1, 1, [](double x) { return std::asin(x); }},
      {"chlo.atan", -10, 10, [](double x) { return std::atan(x); }},
      {"chlo.acosh", 1, 10, [](double x) { return std::acosh(x); }},
      {"chlo.asinh", -10, 10, [](double x) { return std::asinh(x); }},
      {"chlo.atanh", -0.99, 0.99, [](double x) { return std::atanh(x); }},
      {"chlo.cosh", -5, 5, [](double x) { return std::cosh(x); }},
      {"chlo.sinh", -5, 5, [](double x) { return std::sinh(x); }},
      {"chlo.tan", -1.4, 1.4, [](double x) { return std::tan(x); }},
      {"chlo.erf", -3, 3, [](double x) { return std::erf(x); }},
      {"chlo.erfc", -3, 3, [](double x) { return std::erfc(x); }},
      {"chlo.lgamma", 0.1, 20, [](double x) { return std::lgamma(x); }},
      {"chlo.square", -10, 10, [](double x) { return x * x; }},
  };
  for (ElementType t : {ElementType::kF32, ElementType::kF64, ElementType::kBF16}) {
    const double eps = t == ElementType::kF64 ? 1e-15 : t == ElementType::kF32 ? 3e-7 : 1e-2;
    for (const Case& c : cases) {
      Literal in = fromDoubles(t, randomDoubles(300, c.lo, c.hi, 21));
      Literal out = runOp(c.op, {in}, in.type());
      for (int64_t i = 0; i < in.numElements(); ++i) {
        const double want = c.ref(in.getDouble(i));
        ASSERT_NEAR(out.getDouble(i), want, 2 * eps * std::fabs(want) + 1e-300)
            << c.op << " " << elementTypeName(t) << " x=" << in.getDouble(i);
      }
    }
  }
  Literal z = Literal::zeros(Type::tensor({1}, ElementType::kComplexF64));
  z.setComplex(0, {0.3, -0.7});
  Literal r = runOp("chlo.asin", {z}, z.type());
  EXPECT_NEAR(std::abs(r.getComplex(0) - std::asin(std::complex<double>(0.3, -0.7))), 0, 1e-15);
  Literal cj = runOp("chlo.conj", {z}, z.type());
  EXPECT_EQ(cj.getComplex(0), std::complex<double>(0.3, 0.7));
}

TEST(Chlo, SpecialFunctions) {
  const double gamma = 0.57721566490153286;
  Literal x = fromDoubles(ElementType::kF64, {1.0, 0.5, 10.0, -0.5});
  Literal dg = runOp("chlo.digamma", {x}, x.type());
  EXPECT_NEAR(dg.getDouble(0), -gamma, 1e-14);
  EXPECT_NEAR(dg.getDouble(1), -gamma - 2 * std::log(2.0), 1e-14);
  EXPECT_NEAR(dg.getDouble(2), 2.251752589066721, 1e-14);
  EXPECT_NEAR(dg.getDouble(3), 0.03648997397857652, 1e-13);
  // digamma(x + 1) = digamma(x) + 1/x on random data.
  Literal rx = fromDoubles(ElementType::kF64, randomDoubles(200, 0.05, 30, 3));
  Literal rx1 = Literal::zeros(rx.type());
  for (int64_t i = 0; i < rx.numElements(); ++i) rx1.setDouble(i, rx.getDouble(i) + 1);
  Literal d0 = runOp("chlo.digamma", {rx}, rx.type()), d1 = runOp("chlo.digamma", {rx1}, rx.type());
  for (int64_t i = 0; i < rx.numElements(); ++i)
    ASSERT_NEAR(d1.getDouble(i), d0.getDouble(i) + 1 / rx.getDouble(i), 1e-12 * (1 + std::fabs(d1.getDouble(i))));

  Literal s = fromDoubles(ElementType::kF64, {2, 4, 3});
  Literal q = fromDoubles(ElementType::kF64, {1, 1, 2});
  Literal zt = runOp("chlo.zeta", {s, q}, s.type());
  EXPECT_NEAR(zt.getDouble(0), std::numbers::pi * std::numbers::pi / 6, 1e-14);
  EXPECT_NEAR(zt.getDouble(1), std::pow(std::numbers::pi, 4) / 90, 1e-14);
  EXPECT_NEAR(zt.getDouble(2), 1.2020569031595942 - 1, 1e-14);

  Literal n = fromDoubles(ElementType::kF64, {1, 0, 2});
  Literal px = fromDoubles(ElementType::kF64, {1, 1, 1});
  Literal pg = runOp("chlo.polygamma", {n, px}, n.type());
  EXPECT_NEAR(pg.getDouble(0), std::numbers::pi * std::numbers::pi / 6, 1e-13);
  EXPECT_NEAR(pg.getDouble(1), -gamma, 1e-14);
  EXPECT_NEAR(pg.getDouble(2), -2 * 1.2020569031595942, 1e-13);

  // erf_inv inverts erf, including close to +-1.
  for (ElementType t : {ElementType::kF32, ElementType::kF64}) {
    Literal y = fromDoubles(t, {-0.999999, -0.5, 0.0, 0.1, 0.9, 0.99999, 1.0});
    Literal ei = runOp("chlo.erf_inv", {y}, y.type());
    for (int64_t i = 0; i < 6; ++i) {
      const double yi = y.getDouble(i);
      const double tol = t == ElementType::kF64 ? 1e-12 : 2e-6;
      EXPECT_NEAR(std::erf(ei.getDouble(i)), yi, tol * std::max(1.0, std::fabs(ei.getDouble(i))))
          << elementTypeName(t) << " y=" << yi;
    }
    EXPECT_TRUE(std::isinf(ei.getDouble(6)));
  }

  // bessel_i1e against the power series of I1 times exp(-|x|).
  Literal bx = fromDoubles(ElementType::kF64, {-3.5, 0.0, 0.25, 2.0, 20.0, 1000.0});
  Literal bi = runOp("chlo.bessel_i1e", {bx}, bx.type());
  for (int64_t i = 0; i < 5; ++i) {
    const double v = bx.getDouble(i);
    double term = v / 2, sum = 0;
    for (int k = 0; k < 200; ++k) {
      sum += term;
      term *= (v / 2) * (v / 2) / ((k + 1) * (k + 2));
    }
    EXPECT_NEAR(bi.getDouble(i), sum * std::exp(-std::fabs(v)), 1e-14) << v;
  }
  EXPECT_NEAR(bi.getDouble(5), 1 / std::sqrt(2 * std::numbers::pi * 1000.0) * (1 - 3 / 8000.0 - 15 / 128e6), 5e-12);
}

TEST(Chlo, Predicates) {
  const double inf = std::numeric_limits<double>::infinity();
  Literal x = fromDoubles(ElementType::kF16, {inf, -inf, 1.0, std::nan("")});
  const Type b = Type::tensor({4}, ElementType::kI1);
  Literal a = runOp("chlo.is_inf", {x}, b), n = runOp("chlo.is_neg_inf", {x}, b), p = runOp("chlo.is_pos_inf", {x}, b);
  const int64_t wantA[] = {1, 1, 0, 0}, wantN[] = {0, 1, 0, 0}, wantP[] = {1, 0, 0, 0};
  for (int64_t i = 0; i < 4; ++i) {
    EXPECT_EQ(a.getInt(i), wantA[i]);
    EXPECT_EQ(n.getInt(i), wantN[i]);
    EXPECT_EQ(p.getInt(i), wantP[i]);
  }
}

TEST(Chlo, MulhiMatchesTheInterpreterTests) {
  auto check = [](ElementType t, std::vector<int64_t> a, std::vector<int64_t> b, std::vector<int64_t> want) {
    Literal la = fromInts(t, a), lb = fromInts(t, b);
    Literal r = runOp("chlo.mulhi", {la, lb}, la.type());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_EQ(r.getInt(static_cast<int64_t>(i)), want[i]) << elementTypeName(t) << " " << i;
  };
  check(ElementType::kSI8, {64, -64, -64}, {4, 4, -4}, {1, -1, 1});
  check(ElementType::kUI8, {240, 128}, {16, 2}, {15, 1});
  check(ElementType::kSI16, {16384, -16384}, {8, 8}, {2, -2});
  check(ElementType::kSI32, {268435456, -268435456}, {16, 16}, {1, -1});
  check(ElementType::kUI32, {4026531840, 2147483648}, {16, 2}, {15, 1});
  check(ElementType::kSI64, {1152921504606846976, -1152921504606846976}, {16, 16}, {1, -1});
  check(ElementType::kUI64, {static_cast<int64_t>(17293822569102704640ull), static_cast<int64_t>(9223372036854775808ull)},
        {16, 2}, {15, 1});
}

TEST(Chlo, NextAfter) {
  Literal a = fromDoubles(ElementType::kF32, {1.0, 1.0, 0.0, -0.0});
  Literal b = fromDoubles(ElementType::kF32, {2.0, 0.0, -1.0, 1.0});
  Literal r = runOp("chlo.next_after", {a, b}, a.type());
  EXPECT_EQ(r.getDouble(0), static_cast<double>(std::nextafter(1.0f, 2.0f)));
  EXPECT_EQ(r.getDouble(1), static_cast<double>(std::nextafter(1.0f, 0.0f)));
  EXPECT_EQ(r.getDouble(2), -static_cast<double>(std::numeric_limits<float>::denorm_min()));
  Literal hb = fromDoubles(ElementType::kBF16, {1.0, 1.0});
  Literal hc = fromDoubles(ElementType::kBF16, {2.0, -2.0});
  Literal hr = runOp("chlo.next_after", {hb, hc}, hb.type());
  EXPECT_EQ(hr.getDouble(0), 1 + std::ldexp(1.0, -7));
  EXPECT_EQ(hr.getDouble(1), 1 - std::ldexp(1.0, -8));
}

TEST(Chlo, ConstantLike) {
  Literal x = fromDoubles(ElementType::kF32, {1, 2, 3});
  Literal r = runOp("chlo.constant_like", {x}, x.type(), {{"value", Attribute::floating(2.5, ElementType::kF32)}});
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ(r.getDouble(i), 2.5);
  Literal c = fromInts(ElementType::kSI32, {5});
  Literal k = runOp("chlo.constant", {}, c.type(), {{"value", Attribute::denseElements(c)}});
  EXPECT_EQ(k.getInt(0), 5);
}

TEST(Chlo, BroadcastBinaryOps) {
  // [2,3] + [3] (numpy) and [2,3] * [2] with broadcast_dimensions = [0].
  Literal a = Literal::zeros(Type::tensor({2, 3}, ElementType::kF32));
  for (int64_t i = 0; i < 6; ++i) a.setDouble(i, static_cast<double>(i));
  Literal row = fromDoubles(ElementType::kF32, {10, 20, 30});
  Literal col = fromDoubles(ElementType::kF32, {2, 3});
  Literal s = runOp("chlo.broadcast_add", {a, row}, a.type());
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(s.getDouble(i), static_cast<double>(i) + 10.0 * (i % 3 + 1));
  Literal m = runOp("chlo.broadcast_multiply", {a, col}, a.type(),
                    {{"broadcast_dimensions", Attribute::denseArray(ElementType::kSI64, {0})}});
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(m.getDouble(i), static_cast<double>(i) * (i < 3 ? 2 : 3));
  // [2,1] - [1,3] -> [2,3]
  Literal c21 = Literal::zeros(Type::tensor({2, 1}, ElementType::kSI32));
  c21.setInt(0, 100);
  c21.setInt(1, 200);
  Literal r13 = Literal::zeros(Type::tensor({1, 3}, ElementType::kSI32));
  for (int64_t i = 0; i < 3; ++i) r13.setInt(i, i + 1);
  Literal d = runOp("chlo.broadcast_subtract", {c21, r13}, Type::tensor({2, 3}, ElementType::kSI32));
  const int64_t want[] = {99, 98, 97, 199, 198, 197};
  for (int64_t i = 0; i < 6; ++i) EXPECT_EQ(d.getInt(i), want[i]);
  Literal cmp = runOp("chlo.broadcast_compare", {a, row}, Type::tensor({2, 3}, ElementType::kI1),
                      {{"comparison_direction", Attribute::enumValue("chlo", "comparison_direction", "LT")}});
  EXPECT_EQ(cmp.getInt(0), 1);
  Literal pred = Literal::scalarInt(ElementType::kI1, 0);
  Literal sel = runOp("chlo.broadcast_select", {pred, a, row}, a.type());
  EXPECT_EQ(sel.getDouble(4), 20);
  // Incompatible shapes are an error that names the op.
  ewtest::SingleOp bad("chlo.broadcast_add", {a.type(), col.type()}, a.type());
  auto br = bad.run({a, col});
  ASSERT_FALSE(br.hasValue());
  EXPECT_NE(br.status().message().find("chlo.broadcast_add"), std::string::npos);
}

}  // namespace
}  // namespace wf
