// Tests of stablehlo.sort and chlo.top_k against std::stable_sort references on random data with
// many ties. Comparisons of the general (comparator-region) path need the compare kernel and are
// skipped until it is registered.
#include <gtest/gtest.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <numeric>

#include "reduce_test_util.h"

namespace wf {
namespace {

using namespace testing_util;

std::unique_ptr<Operation> makeSort(const std::vector<ElementType>& types, int64_t dimension, size_t keyOperand,
                                    const std::string& dir, const std::string& compareType = "") {
  auto op = newOp("stablehlo.sort");
  op->setAttr("dimension", Attribute::integer(dimension));
  op->setAttr("is_stable", Attribute::boolean(true));
  std::vector<ElementType> argTypes;
  for (ElementType t : types) {
    argTypes.push_back(t);
    argTypes.push_back(t);
  }
  addCompareRegion(*op, argTypes, 2 * keyOperand, 2 * keyOperand + 1, dir, compareType);
  return op;
}

TEST(Sort, SpecExampleStableTwoOperands) {
  Literal a = Literal::zeros(Type::tensor({2, 3}, ElementType::kSI64));
  Literal b = Literal::zeros(Type::tensor({2, 3}, ElementType::kSI64));
  std::vector<int64_t> av{1, 2, 3, 3, 2, 1}, bv{3, 2, 1, 1, 2, 3};
  for (int64_t i = 0; i < 6; ++i) {
    a.setInt(i, av[static_cast<size_t>(i)]);
    b.setInt(i, bv[static_cast<size_t>(i)]);
  }
  auto op = makeSort({ElementType::kSI64, ElementType::kSI64}, 0, 0, "GT");
  std::vector<int64_t> want0{3, 2, 3, 1, 2, 1}, want1{1, 2, 1, 3, 2, 3};
  for (bool general : {false, true}) {
    if (general && !haveKernels({OpCode::Compare})) continue;
    reduce_detail::setFastPathsEnabled(!general);
    auto r = runKernel(*op, {a, b});
    reduce_detail::setFastPathsEnabled(true);
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    for (int64_t i = 0; i < 6; ++i) {
      EXPECT_EQ((*r)[0].getInt(i), want0[static_cast<size_t>(i)]);
      EXPECT_EQ((*r)[1].getInt(i), want1[static_cast<size_t>(i)]);
    }
  }
}

// Sorting keys with many ties together with an index payload along each dimension: keys must come
// out ordered and, among equal keys, payload indices ascending (stability).
TEST(Sort, MultiOperandStableAlongEveryDimension) {
  std::mt19937 rng(11);
  std::vector<int64_t> shape{4, 9, 6};
  for (ElementType t : {ElementType::kF32, ElementType::kSI32, ElementType::kBF16, ElementType::kUI8}) {
    Literal keys = randomLiteral(shape, t, rng, 0, 5);
    if (isFloat(t))
      for (int64_t i = 0; i < keys.numElements(); ++i) keys.setDouble(i, std::floor(keys.getDouble(i)));
    for (int64_t dim = -3; dim < 3; ++dim) {
      size_t d = static_cast<size_t>(dim < 0 ? dim + 3 : dim);
      Literal pos = Literal::zeros(Type::tensor(shape, ElementType::kSI64));
      for (int64_t i = 0; i < pos.numElements(); ++i) pos.setInt(i, unravel(i, shape)[d]);
      for (const char* dir : {"LT", "GT"}) {
        auto op = makeSort({t, ElementType::kSI64}, dim, 0, dir);
        auto r = runKernel(*op, {keys, pos});
        ASSERT_TRUE(r.hasValue()) << r.status().toString();
        bool less = std::string(dir) == "LT";
        for (int64_t i = 0; i < keys.numElements(); ++i) {
          auto c = unravel(i, shape);
          if (c[d] == 0) continue;
          auto p = c;
          --p[d];
          int64_t prev = ravel(p, shape);
          double k0 = (*r)[0].getDouble(prev), k1 = (*r)[0].getDouble(i);
          ASSERT_TRUE(less ? k0 <= k1 : k0 >= k1) << elementTypeName(t) << " dim " << dim;
          if (k0 == k1) {
            ASSERT_LT((*r)[1].getInt(prev), (*r)[1].getInt(i));
          }
          // The payload still points at an element with this key.
          auto src = c;
          src[d] = (*r)[1].getInt(i);
          ASSERT_EQ(keys.getDouble(ravel(src, shape)), k1);
        }
      }
    }
  }
}

TEST(Sort, KeyOnSecondOperand) {
  std::mt19937 rng(12);
  Literal payload = randomLiteral({50}, ElementType::kF64, rng);
  Literal keys = randomLiteral({50}, ElementType::kSI16, rng, -1000, 1000);
  auto op = makeSort({ElementType::kF64, ElementType::kSI16}, 0, 1, "LT");
  auto r = runKernel(*op, {payload, keys});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  std::vector<int64_t> perm(50);
  std::iota(perm.begin(), perm.end(), 0);
  std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) { return keys.getInt(a) < keys.getInt(b); });
  for (int64_t i = 0; i < 50; ++i) {
    EXPECT_EQ((*r)[1].getInt(i), keys.getInt(perm[static_cast<size_t>(i)]));
    EXPECT_EQ((*r)[0].getDouble(i), payload.getDouble(perm[static_cast<size_t>(i)]));
  }
}

TEST(Sort, TotalOrderPlacesNaNsAndSignedZeros) {
  std::vector<double> v{1, NAN, -0.0, INFINITY, -NAN, 0.0, -INFINITY, -2, -0.0};
  Literal x = Literal::zeros(Type::tensor({static_cast<int64_t>(v.size())}, ElementType::kF32));
  for (size_t i = 0; i < v.size(); ++i) x.setDouble(static_cast<int64_t>(i), v[i]);
  auto op = makeSort({ElementType::kF32}, 0, 0, "LT", "TOTALORDER");
  auto r = runKernel(*op, {x});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  const Literal& s = (*r)[0];
  EXPECT_TRUE(std::isnan(s.getDouble(0)) && std::signbit(s.getDouble(0)));
  EXPECT_EQ(s.getDouble(1), -INFINITY);
  EXPECT_EQ(s.getDouble(2), -2);
  EXPECT_TRUE(s.getDouble(3) == 0 && std::signbit(s.getDouble(3)));
  EXPECT_TRUE(s.getDouble(4) == 0 && std::signbit(s.getDouble(4)));
  EXPECT_TRUE(s.getDouble(5) == 0 && !std::signbit(s.getDouble(5)));
  EXPECT_EQ(s.getDouble(6), 1);
  EXPECT_EQ(s.getDouble(7), INFINITY);
  EXPECT_TRUE(std::isnan(s.getDouble(8)) && !std::signbit(s.getDouble(8)));
}

TEST(Sort, RandomF32AgainstStdSort) {
  std::mt19937 rng(13);
  Literal x = randomLiteral({7, 300}, ElementType::kF32, rng, -1e3, 1e3);
  auto op = makeSort({ElementType::kF32}, 1, 0, "GT", "FLOAT");
  auto r = runKernel(*op, {x});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  for (int64_t row = 0; row < 7; ++row) {
    std::vector<double> want;
    for (int64_t j = 0; j < 300; ++j) want.push_back(x.getDouble(row * 300 + j));
    std::sort(want.begin(), want.end(), std::greater<>());
    for (int64_t j = 0; j < 300; ++j) ASSERT_EQ((*r)[0].getDouble(row * 300 + j), want[static_cast<size_t>(j)]);
  }
}

TEST(Sort, GeneralPathMatchesFastPath) {
  if (!haveKernels({OpCode::Compare})) GTEST_SKIP() << "compare kernel not registered";
  std::mt19937 rng(14);
  Literal keys = randomLiteral({5, 40}, ElementType::kF16, rng, -3, 3);
  for (int64_t i = 0; i < keys.numElements(); i += 7) keys.setDouble(i, i % 2 ? NAN : -0.0);
  Literal pos = Literal::zeros(Type::tensor({5, 40}, ElementType::kSI32));
  for (int64_t i = 0; i < pos.numElements(); ++i) pos.setInt(i, i);
  for (const char* ct : {"FLOAT", "TOTALORDER"}) {
    auto op = makeSort({ElementType::kF16, ElementType::kSI32}, 1, 0, "LT", ct);
    auto fast = runKernel(*op, {keys, pos});
    ASSERT_TRUE(fast.hasValue()) << fast.status().toString();
    GeneralPathOnly general;
    auto slow = runKernel(*op, {keys, pos});
    ASSERT_TRUE(slow.hasValue()) << slow.status().toString();
    EXPECT_TRUE((*fast)[0].bitwiseEqual((*slow)[0])) << ct;
    EXPECT_TRUE((*fast)[1].bitwiseEqual((*slow)[1])) << ct;
  }
}

// ---- chlo.top_k ---------------------------------------------------------------------------------

std::unique_ptr<Operation> makeTopK(const std::vector<int64_t>& shape, ElementType t, int64_t k) {
  auto op = newOp("chlo.top_k");
  op->setAttr("k", Attribute::integer(k));
  std::vector<int64_t> out = shape;
  out.back() = k;
  op->addResult(Type::tensor(out, t));
  op->addResult(Type::tensor(out, ElementType::kSI32));
  return op;
}

TEST(TopK, MatchesStableDescendingSortWithTies) {
  std::mt19937 rng(15);
  for (ElementType t : {ElementType::kF32, ElementType::kSI64, ElementType::kBF16}) {
    std::vector<int64_t> shape{3, 4, 25};
    Literal x = randomLiteral(shape, t, rng, -6, 6);
    if (isFloat(t))
      for (int64_t i = 0; i < x.numElements(); ++i) x.setDouble(i, std::round(x.getDouble(i)) + 0.0);  // no -0: TOTALORDER ranks it below +0
    for (int64_t k : {1, 5, 25}) {
      auto r = runKernel(*makeTopK(shape, t, k), {x});
      ASSERT_TRUE(r.hasValue()) << r.status().toString();
      ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{3, 4, k}));
      EXPECT_EQ((*r)[1].elementType(), ElementType::kSI32);
      for (int64_t row = 0; row < 12; ++row) {
        std::vector<int64_t> perm(25);
        std::iota(perm.begin(), perm.end(), 0);
        std::stable_sort(perm.begin(), perm.end(), [&](int64_t a, int64_t b) {
          return x.getDouble(row * 25 + a) > x.getDouble(row * 25 + b);
        });
        for (int64_t j = 0; j < k; ++j) {
          ASSERT_EQ((*r)[1].getInt(row * k + j), perm[static_cast<size_t>(j)]);
          ASSERT_EQ((*r)[0].getDouble(row * k + j), x.getDouble(row * 25 + perm[static_cast<size_t>(j)]));
        }
      }
    }
  }
}

TEST(TopK, NaNRanksAboveInfinity) {
  Literal x = Literal::zeros(Type::tensor({5}, ElementType::kF32));
  std::vector<double> v{1, INFINITY, NAN, -NAN, 3};
  for (int64_t i = 0; i < 5; ++i) x.setDouble(i, v[static_cast<size_t>(i)]);
  auto r = runKernel(*makeTopK({5}, ElementType::kF32, 5), {x});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  std::vector<int64_t> want{2, 1, 4, 0, 3};
  for (int64_t j = 0; j < 5; ++j) EXPECT_EQ((*r)[1].getInt(j), want[static_cast<size_t>(j)]);
}

TEST(TopK, RejectsKLargerThanDimension) {
  Literal x = Literal::zeros(Type::tensor({2, 3}, ElementType::kF32));
  auto r = runKernel(*makeTopK({2, 3}, ElementType::kF32, 4), {x});
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.status().message().find("chlo.top_k"), std::string::npos);
}

}  // namespace
}  // namespace wf
