#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "eval/check.h"
#include "eval/interpreter.h"
#include "ir/float_types.h"

namespace wf {
namespace {

struct Outcome {
  bool passed;
  std::string message;
};

class RecordingSink : public CheckSink {
 public:
  void report(const Operation&, bool passed, const std::string& message) override { outcomes.push_back({passed, message}); }
  void unsupported(const Operation&, const std::string& message) override { unsupportedMessages.push_back(message); }
  std::vector<Outcome> outcomes;
  std::vector<std::string> unsupportedMessages;
};

Literal f32s(std::vector<float> v) {
  Literal l = Literal::zeros(Type::tensor({static_cast<int64_t>(v.size())}, ElementType::kF32));
  for (size_t i = 0; i < v.size(); ++i) l.dataAs<float>()[i] = v[i];
  return l;
}

Literal f64s(std::vector<double> v) {
  Literal l = Literal::zeros(Type::tensor({static_cast<int64_t>(v.size())}, ElementType::kF64));
  for (size_t i = 0; i < v.size(); ++i) l.dataAs<double>()[i] = v[i];
  return l;
}

// Runs the registered kernel for a check op with the given attributes.
Expected<std::vector<Literal>> runCheckOp(const std::string& name, std::vector<Literal> operands,
                                          std::vector<NamedAttribute> attrs, CheckSink* sink) {
  Operation op(name, Location{"t.mlir", 3, 5, ""});
  for (auto& [k, v] : attrs) op.setAttr(k, v);
  const Kernel* kernel = KernelRegistry::instance().find(op.code());
  if (!kernel) return internalError("no kernel for " + name);
  EvalContext ctx;
  ctx.checks = sink;
  return (*kernel)(op, operands, ctx);
}

TEST(CheckOps, ExpectEqOnRandomIntegers) {
  std::mt19937 rng(1);
  for (ElementType t : {ElementType::kSI8, ElementType::kSI32, ElementType::kUI64, ElementType::kSI4, ElementType::kI1}) {
    Literal a = Literal::zeros(Type::tensor({4, 5}, t));
    for (int64_t i = 0; i < a.numElements(); ++i) a.setInt(i, static_cast<int64_t>(rng()));
    Literal b = a.clone();
    EXPECT_EQ(compareExact(a, b), "") << elementTypeName(t);
    int64_t k = rng() % 20;
    b.setInt(k, a.getInt(k) ^ 1);
    std::string msg = compareExact(a, b);
    EXPECT_NE(msg.find("1 of 20 elements differ"), std::string::npos) << msg;
    std::string index = "[" + std::to_string(k / 5) + ", " + std::to_string(k % 5) + "]";
    EXPECT_NE(msg.find("first at index " + index), std::string::npos) << msg;
  }
}

TEST(CheckOps, ExpectEqFloatsTreatsNaNAsEqualAndSignedZerosAsEqual) {
  float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(compareExact(f32s({nan, 0.0f, 1.5f}), f32s({-nan, -0.0f, 1.5f})), "");
  EXPECT_NE(compareExact(f32s({1.0f}), f32s({std::nextafter(1.0f, 2.0f)})), "");
  EXPECT_NE(compareExact(f32s({nan}), f32s({1.0f})), "");
  EXPECT_NE(compareExact(f32s({1.0f, 2.0f}), f64s({1.0, 2.0})).find("element types differ"), std::string::npos);
  EXPECT_NE(compareExact(f32s({1.0f, 2.0f}), f32s({1.0f, 2.0f, 3.0f})).find("shapes differ"), std::string::npos);
}

TEST(CheckOps, AlmostEqualFollowsTheReferenceSemantics) {
  double inf = std::numeric_limits<double>::infinity();
  double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    double a, b;
    bool close;
  } cases[] = {
      {5.0, 5.0001, true},     // within 1e-4 (the difference rounds just below it in f64)
      {5.0, 5.00011, false},
      {0.0, 1e-5, true},       // zero vs small, same sign
      {-0.0, 1e-5, false},     // signs differ
      {-1e-6, 1e-6, false},    // signs differ even though |a - b| is tiny
      {inf, inf, true},
      {inf, -inf, false},
      {inf, 1e300, false},
      {inf, 0.0, false},
      {nan, nan, true},
      {nan, 1.0, false},
      {-3.0, -3.00005, true},
  };
  for (const Case& c : cases)
    EXPECT_EQ(compareAlmostEqual(f64s({c.a}), f64s({c.b}), 1e-4).empty(), c.close) << c.a << " vs " << c.b;

  // Random data against the tolerance rule computed independently in long double.
  std::mt19937 rng(2);
  std::uniform_real_distribution<double> value(-10, 10), delta(-3e-4, 3e-4);
  for (int i = 0; i < 2000; ++i) {
    double a = value(rng), b = a + delta(rng);
    bool expect = (a < 0) == (b < 0) && std::fabs(static_cast<long double>(a) - b) <= 1e-4L;
    EXPECT_EQ(compareAlmostEqual(f64s({a}), f64s({b}), 1e-4).empty(), expect) << a << " vs " << b;
  }
}

TEST(CheckOps, UlpDifferenceCountsRepresentableSteps) {
  // Walk k representable floats away with nextafter; the distance must be k, also across zero.
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> value(-1e-3f, 1e-3f);
  for (int trial = 0; trial < 500; ++trial) {
    float a = trial % 5 == 0 ? std::numeric_limits<float>::denorm_min() * static_cast<float>(rng() % 4) : value(rng);
    float b = a;
    int k = static_cast<int>(rng() % 12);
    float direction = rng() % 2 ? 1.0f : -1.0f;
    // nextafter passes through a single zero when it crosses the sign, which the reference
    // counts as one point too (-0 and +0 are 0 ULPs apart).
    for (int s = 0; s < k; ++s) b = std::nextafter(b, direction * std::numeric_limits<float>::infinity());
    Literal la = f32s({a}), lb = f32s({b});
    EXPECT_EQ(ulpDifference(la, 0, lb, 0), static_cast<uint64_t>(k)) << a << " -> " << b;
  }
  float inf = std::numeric_limits<float>::infinity(), nan = std::numeric_limits<float>::quiet_NaN();
  Literal special = f32s({inf, nan, 1.0f, 0.0f});
  Literal other = f32s({3.4e38f, nan, inf, -0.0f});
  EXPECT_EQ(ulpDifference(special, 0, other, 0), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ulpDifference(special, 1, other, 1), 0u);
  EXPECT_EQ(ulpDifference(special, 2, other, 2), std::numeric_limits<uint64_t>::max());
  EXPECT_EQ(ulpDifference(special, 3, other, 3), 0u);
}

TEST(CheckOps, ExpectCloseOnF16MatchesTheSpecExample) {
  // check.mlir: 5.0 vs 5.010 in f16 is 3 ULPs apart.
  Literal a = Literal::zeros(Type::scalar(ElementType::kF16)), b = a.clone();
  a.setDouble(0, 5.0);
  b.setDouble(0, 5.010);
  EXPECT_EQ(ulpDifference(a, 0, b, 0), 3u);
  EXPECT_EQ(compareUlps(a, b, 0, 3), "");
  EXPECT_NE(compareUlps(a, b, 0, 2).find("ULP difference 3"), std::string::npos);
  EXPECT_NE(compareUlps(a, b, 4, 10), "");
}

TEST(CheckOps, ComplexUlpsTakeTheWorsePart) {
  Literal a = Literal::zeros(Type::tensor({1}, ElementType::kComplexF64)), b = a.clone();
  a.setComplex(0, {1.0, 2.0});
  b.setComplex(0, {std::nextafter(1.0, 2.0), std::nextafter(std::nextafter(2.0, 0.0), 0.0)});
  EXPECT_EQ(ulpDifference(a, 0, b, 0), 2u);
}

TEST(CheckOps, KernelsReportThroughTheSink) {
  RecordingSink sink;
  Literal a = f64s({1.0, 2.0}), b = f64s({1.0, 2.5});
  ASSERT_TRUE(runCheckOp("check.expect_eq", {a, a}, {}, &sink));
  ASSERT_TRUE(runCheckOp("check.expect_eq", {a, b}, {}, &sink));
  ASSERT_TRUE(runCheckOp("check.expect_almost_eq", {a, b}, {{"tolerance", Attribute::floating(0.6)}}, &sink));
  ASSERT_TRUE(runCheckOp("check.expect_almost_eq_const", {a}, {{"value", Attribute::denseElements(b)}}, &sink));
  ASSERT_TRUE(runCheckOp("check.expect_eq_const", {a}, {{"value", Attribute::denseElements(a)}}, &sink));
  ASSERT_TRUE(runCheckOp("check.expect_close", {a, b},
                         {{"max_ulp_difference", Attribute::integer(3)}, {"min_ulp_difference", Attribute::integer(0)}},
                         &sink));
  ASSERT_TRUE(runCheckOp("check.expect_serialized_eq", {a}, {{"probe_id", Attribute::string("p")}}, &sink));
  ASSERT_EQ(sink.outcomes.size(), 6u);
  EXPECT_TRUE(sink.outcomes[0].passed);
  EXPECT_FALSE(sink.outcomes[1].passed);
  EXPECT_NE(sink.outcomes[1].message.find("2.5"), std::string::npos) << sink.outcomes[1].message;
  EXPECT_TRUE(sink.outcomes[2].passed);
  EXPECT_FALSE(sink.outcomes[3].passed);  // default tolerance 1e-4
  EXPECT_TRUE(sink.outcomes[4].passed);
  EXPECT_FALSE(sink.outcomes[5].passed);
  EXPECT_EQ(sink.unsupportedMessages.size(), 1u);

  // Without a sink, check ops are errors, not silent passes.
  auto noSink = runCheckOp("check.expect_eq", {a, a}, {}, nullptr);
  ASSERT_FALSE(noSink);
  EXPECT_NE(noSink.status().message().find("t.mlir:3:5"), std::string::npos) << noSink.status().message();
  // A missing constant is an error naming the op.
  auto noValue = runCheckOp("check.expect_eq_const", {a}, {}, &sink);
  ASSERT_FALSE(noValue);
  EXPECT_NE(noValue.status().message().find("check.expect_eq_const"), std::string::npos);
}

TEST(CheckOps, CustomCallSpellingUsesTheSameChecks) {
  RecordingSink sink;
  EvalContext ctx;
  ctx.checks = &sink;
  Literal a = f32s({1.0f}), b = f32s({1.0005f});
  auto run = [&](const std::string& target, std::vector<Literal> operands, std::vector<NamedAttribute> extra = {}) {
    Operation op("stablehlo.custom_call", Location{"c.mlir", 1, 1, ""});
    op.setAttr("call_target_name", Attribute::string(target));
    for (auto& [k, v] : extra) op.setAttr(k, v);
    return evalCheckCustomCall(op, operands, ctx);
  };
  EXPECT_TRUE(isCheckCustomCallTarget("check.expect_close"));
  EXPECT_FALSE(isCheckCustomCallTarget("foo"));
  ASSERT_TRUE(run("check.expect_almost_eq", {a, b}));  // custom_call default tolerance 1e-3
  ASSERT_TRUE(run("check.expect_eq", {a, b}));
  ASSERT_TRUE(run("check.expect_close", {a, b},
                  {{"backend_config", Attribute::dictionary({{"max_ulp_difference", Attribute::integer(10000)}})}}));
  ASSERT_EQ(sink.outcomes.size(), 3u);
  EXPECT_TRUE(sink.outcomes[0].passed);
  EXPECT_FALSE(sink.outcomes[1].passed);
  EXPECT_TRUE(sink.outcomes[2].passed);
  EXPECT_FALSE(run("not.a.check", {a}));
}

}  // namespace
}  // namespace wf
