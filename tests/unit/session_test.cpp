// Session over the fixture packages on the CPU backend, and the tensor comparison validate uses.
#include "runtime/session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <limits>

#include "runtime/compare.h"

namespace wf {
namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return (fs::path(WF_SOURCE_DIR) / "tests" / "data" / "packages" / name).string();
}

Literal f32(std::vector<int64_t> shape, std::vector<float> values) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  for (size_t i = 0; i < values.size(); ++i) l.dataAs<float>()[i] = values[i];
  return l;
}

TEST(Session, RunsTheMlpOnItsGoldenInputsWithinTolerance) {
  SessionOptions options;
  options.captureActivations = true;
  auto session = Session::open(fixture("mlp"), options);
  ASSERT_TRUE(session) << session.status().message();
  EXPECT_EQ((*session)->deviceName(), "cpu");
  EXPECT_EQ((*session)->deviceBytesInUse(), (8 * 4 + 8 + 3 * 8 + 3) * sizeof(float));
  const Package& pkg = (*session)->package();
  auto inputs = pkg.loadGoldenInputs();
  ASSERT_TRUE(inputs) << inputs.status().message();
  auto result = (*session)->run(*inputs);
  ASSERT_TRUE(result) << result.status().message();

  auto golden = pkg.loadGoldenOutputs();
  ASSERT_TRUE(golden);
  ASSERT_EQ(result->outputs.size(), 2u);
  EXPECT_EQ(result->outputs[0].name, "logits");
  EXPECT_EQ(result->outputs[1].name, "probs");
  for (const NamedLiteral& o : result->outputs) {
    Comparison c = compareTensors(o.value, *golden->find(o.name), pkg.manifest().tolerances);
    EXPECT_TRUE(c.passed) << o.name << ": " << c.summary(pkg.manifest().tolerances);
    EXPECT_LT(c.maxAbsErr, 1e-5) << o.name;
  }
  ASSERT_NE(result->find("probs"), nullptr);
  EXPECT_EQ(result->find("nope"), nullptr);

  auto goldenActivations = pkg.loadGoldenActivations();
  ASSERT_TRUE(goldenActivations);
  ASSERT_EQ(result->activations.size(), 2u);
  EXPECT_EQ(result->activations[0].name, "fc1");
  EXPECT_EQ(result->activations[0].value.type().toString(), "tensor<2x8xf32>");
  for (const NamedLiteral& a : result->activations) {
    Comparison c = compareTensors(a.value, *goldenActivations->find(a.name), pkg.manifest().tolerances);
    EXPECT_TRUE(c.passed) << a.name << ": " << c.summary(pkg.manifest().tolerances);
  }

  // The checked-once path gives the same outputs.
  auto args = (*session)->prepareInputs(*inputs);
  ASSERT_TRUE(args);
  auto again = (*session)->runPrepared(*args);
  ASSERT_TRUE(again) << again.status().message();
  EXPECT_TRUE(again->outputs[0].value.bitwiseEqual(result->outputs[0].value));
}

TEST(Session, DynamicBatchRunsAnySize) {
  auto session = Session::open(fixture("dyn"));
  ASSERT_TRUE(session) << session.status().message();
  // w comes from the package; check one row by hand against it.
  auto golden = (*session)->package().loadGoldenInputs();
  ASSERT_TRUE(golden);
  for (int64_t batch : {1, 7}) {
    std::vector<float> xs(static_cast<size_t>(batch * 4), 0.f), ys(static_cast<size_t>(batch * 3), 0.f);
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = static_cast<float>(i % 5) - 2.f;
    for (size_t i = 0; i < ys.size(); ++i) ys[i] = 0.5f * static_cast<float>(i);
    std::vector<NamedLiteral> in = {{"x", f32({batch, 4}, xs)}, {"y", f32({batch, 3}, ys)}};
    auto r = (*session)->run(in);
    ASSERT_TRUE(r) << r.status().message();
    EXPECT_EQ(r->outputs[0].value.type().toString(), "tensor<" + std::to_string(batch) + "x3xf32>");
  }
  // The golden batch (3) reproduces the golden output.
  auto r = (*session)->run(*golden);
  ASSERT_TRUE(r) << r.status().message();
  const Package& pkg = (*session)->package();
  Comparison c = compareTensors(r->outputs[0].value, *pkg.loadGoldenOutputs()->find("out"), pkg.manifest().tolerances);
  EXPECT_TRUE(c.passed) << c.summary(pkg.manifest().tolerances);
}

TEST(Session, ShapeSpecializationMatchesTheDynamicModule) {
  // What a static-shape backend (cuda) gets: an executable per input shapes, here forced on cpu
  // so that it runs without a GPU, against the dynamic module run directly.
  SessionOptions special;
  special.forceSpecialization = true;
  special.maxSpecializations = 2;
  auto specialized = Session::open(fixture("dyn"), special);
  auto direct = Session::open(fixture("dyn"));
  ASSERT_TRUE(specialized) << specialized.status().message();
  ASSERT_TRUE(direct) << direct.status().message();
  EXPECT_EQ((*specialized)->specializations(), 1u);  // the smallest batch, compiled at open
  EXPECT_EQ((*direct)->specializations(), 0u);
  size_t expected = 1;
  for (int64_t batch : {2, 5, 2, 1, 5}) {
    std::vector<float> xs(static_cast<size_t>(batch * 4)), ys(static_cast<size_t>(batch * 3));
    for (size_t i = 0; i < xs.size(); ++i) xs[i] = std::sin(static_cast<float>(i) + static_cast<float>(batch));
    for (size_t i = 0; i < ys.size(); ++i) ys[i] = std::cos(0.3f * static_cast<float>(i));
    std::vector<NamedLiteral> in = {{"x", f32({batch, 4}, xs)}, {"y", f32({batch, 3}, ys)}};
    auto a = (*specialized)->run(in);
    auto b = (*direct)->run(in);
    ASSERT_TRUE(a) << a.status().message();
    ASSERT_TRUE(b) << b.status().message();
    ASSERT_EQ(a->outputs[0].value.type(), b->outputs[0].value.type());
    for (int64_t i = 0; i < b->outputs[0].value.numElements(); ++i)
      EXPECT_EQ(a->outputs[0].value.dataAs<float>()[i], b->outputs[0].value.dataAs<float>()[i]) << "batch " << batch;
    expected = std::min<size_t>(expected + 1, 2);  // never more than maxSpecializations kept
    EXPECT_LE((*specialized)->specializations(), 2u);
  }
  EXPECT_EQ((*specialized)->specializations(), expected);
  // Capturing activations needs the module's own value names.
  special.captureActivations = true;
  auto taps = Session::open(fixture("dyn"), special);
  EXPECT_FALSE(taps);
}

TEST(Session, BadInputsAndDevicesAreNamed) {
  auto session = Session::open(fixture("dyn"));
  ASSERT_TRUE(session) << session.status().message();
  std::vector<NamedLiteral> mismatched = {{"x", f32({2, 4}, {})}, {"y", f32({5, 3}, {})}};
  auto r = (*session)->run(mismatched);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("input 'y'"), std::string::npos) << r.status().message();
  std::vector<NamedLiteral> wrongType = {{"x", Literal::zeros(Type::tensor({2, 4}, ElementType::kSI64))},
                                         {"y", f32({2, 3}, {})}};
  r = (*session)->run(wrongType);
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("input 'x': expected dtype f32, got i64"), std::string::npos)
      << r.status().message();

  SessionOptions tpu;
  tpu.device = *DeviceSpec::parse("tpu:0");
  auto none = Session::open(fixture("dyn"), tpu);
  ASSERT_FALSE(none);
  EXPECT_NE(none.status().message().find("tpu"), std::string::npos) << none.status().message();
  auto missing = Session::open(fixture("no_such_package"));
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.status().message().find("no_such_package"), std::string::npos);
}

TEST(Compare, ElementwiseToleranceAndWorstElement) {
  Tolerances tol;  // rtol 1e-3, atol 1e-5
  Literal e = f32({2, 2}, {1, 2, 3, 0});
  Comparison same = compareTensors(e, e, tol);
  EXPECT_TRUE(same.passed);
  EXPECT_EQ(same.maxAbsErr, 0);
  Literal a = f32({2, 2}, {1.0005f, 2, 3.1f, 0.000005f});
  Comparison c = compareTensors(a, e, tol);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.mismatches, 1);  // only 3.1 vs 3 is outside 1e-5 + 1e-3 * |e|
  EXPECT_EQ(c.worstMultiIndex, (std::vector<int64_t>{1, 0}));
  EXPECT_NEAR(c.maxAbsErr, 0.1, 1e-6);
  EXPECT_NEAR(c.maxRelErr, 0.1 / 3, 1e-6);  // the 0-valued golden element is left out of rel err
  EXPECT_NE(c.summary(tol).find("1 of 4 elements outside rtol=0.001 atol=1e-05; worst at [1, 0]: 3.1 vs golden 3"),
            std::string::npos)
      << c.summary(tol);
}

TEST(Compare, Float64ReferenceArbitratesCancellationNoise) {
  Tolerances tol;  // rtol 1e-3, atol 1e-5
  // A cancelling sum: exact value 0.02; PyTorch's float32 result 0.0201, WarpForge's 0.0199 (both
  // 1e-4 away, 2e-4 apart: beyond 1e-5 + 1e-3 * 0.0201 of each other).
  Literal golden = f32({3}, {1, 0.0201f, 5});
  Literal reference = Literal::zeros(Type::tensor({3}, ElementType::kF64));
  reference.setDouble(0, 1);
  reference.setDouble(1, 0.02);
  reference.setDouble(2, 5);
  Literal ours = f32({3}, {1, 0.0199f, 5});
  EXPECT_FALSE(compareTensors(ours, golden, tol).passed);
  Comparison c = compareTensors(ours, golden, tol, &reference);
  EXPECT_TRUE(c.passed) << c.summary(tol);
  EXPECT_EQ(c.arbitrated, 1);
  EXPECT_NE(c.summary(tol).find("1 element(s) beyond rtol=0.001 atol=1e-05 but within float32 PyTorch's own error of float64"), std::string::npos) << c.summary(tol);
  // Further from float64 than twice PyTorch's worst error (1e-4) plus atol: still a mismatch.
  Literal worse = f32({3}, {1, 0.0197f, 5});
  Comparison w = compareTensors(worse, golden, tol, &reference);
  EXPECT_FALSE(w.passed);
  EXPECT_EQ(w.arbitrated, 0);
  EXPECT_EQ(w.mismatches, 1);
  // NaN is never arbitrated.
  Literal nan = f32({3}, {1, std::numeric_limits<float>::quiet_NaN(), 5});
  EXPECT_FALSE(compareTensors(nan, golden, tol, &reference).passed);
}

TEST(Compare, NanNeverPassesAndEqualInfinitiesAgree) {
  Tolerances loose;
  loose.rtol = 1e9;
  loose.atol = 1e9;
  float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  Literal e = f32({3}, {1, nan, inf});
  Comparison c = compareTensors(e, e, loose);
  EXPECT_FALSE(c.passed);
  EXPECT_EQ(c.nanCount, 1);
  EXPECT_EQ(c.worstMultiIndex, (std::vector<int64_t>{1}));
  Comparison ok = compareTensors(f32({2}, {1, inf}), f32({2}, {1, inf}), Tolerances{});
  EXPECT_TRUE(ok.passed);
  Comparison bad = compareTensors(f32({2}, {1, -inf}), f32({2}, {1, inf}), loose);
  EXPECT_FALSE(bad.passed);
  Tolerances l2;
  l2.kind = Tolerances::Kind::kRelL2;
  l2.relL2 = 1e9;
  EXPECT_FALSE(compareTensors(f32({2}, {nan, 1}), f32({2}, {1, 1}), l2).passed);
}

TEST(Compare, RelativeL2AndShapes) {
  Tolerances l2;
  l2.kind = Tolerances::Kind::kRelL2;
  l2.relL2 = 1e-2;
  Literal e = f32({4}, {1, 1, 1, 1});
  Comparison near = compareTensors(f32({4}, {1.01f, 1, 1, 1}), e, l2);
  EXPECT_TRUE(near.passed);
  EXPECT_NEAR(near.relL2, 0.005, 1e-6);
  Comparison far = compareTensors(f32({4}, {1.1f, 1, 1, 1}), e, l2);
  EXPECT_FALSE(far.passed);
  EXPECT_NE(far.summary(l2).find("rel_l2 above 0.01"), std::string::npos) << far.summary(l2);
  // bf16 against an f32 golden value.
  Literal bf = Literal::zeros(Type::tensor({4}, ElementType::kBF16));
  for (int64_t i = 0; i < 4; ++i) bf.setDouble(i, 1.0);
  EXPECT_TRUE(compareTensors(bf, e, l2).passed);
  Comparison shape = compareTensors(f32({2, 2}, {1, 1, 1, 1}), e, l2);
  EXPECT_FALSE(shape.passed);
  EXPECT_NE(shape.problem.find("differs from the golden tensor<4xf32>"), std::string::npos) << shape.problem;
}

}  // namespace
}  // namespace wf
