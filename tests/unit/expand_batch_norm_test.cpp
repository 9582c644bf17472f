// Batch-norm expansion (src/transforms/expand_batch_norm.cpp): the written-out batch_norm_training,
// batch_norm_grad and batch_norm_inference compute what the ops compute (the interpreter's kernels,
// in double), on random inputs of several layouts and element types, and leave no batch-norm op.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/expand_batch_norm.h"

namespace wf {
namespace {

using programtest::run;

std::vector<Literal> randomArgs(const Operation& fn, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-2.0, 2.0);
  std::vector<Literal> args;
  for (const auto& arg : FuncOp(&fn).body().arguments()) {
    Literal l = Literal::zeros(arg->type());
    // Variances (arguments named %var) must be positive; shift every other value off zero mean.
    const bool positive = arg->nameHint() == "%var";
    for (int64_t i = 0; i < l.numElements(); ++i) l.setDouble(i, positive ? 0.1 + std::abs(u(rng)) : u(rng) + 0.3);
    args.push_back(std::move(l));
  }
  return args;
}

// Runs @main as written and expanded; every result must agree within `rtol` (relative to the
// largest element of the result, plus the same absolute).
void checkExpansion(const std::string& text, double rtol, int expectedOps) {
  auto original = programtest::parseAndVerify(text, "bn.mlir");
  ASSERT_TRUE(original) << original.status().toString();
  auto expanded = programtest::parseAndVerify(text, "bn.mlir");
  ASSERT_TRUE(expanded);
  Operation* fn = nullptr;
  for (auto& op : expanded->mutableOperations())
    if (op->code() == OpCode::FuncFunc) fn = op.get();
  ASSERT_NE(fn, nullptr);
  auto n = expandBatchNorm(*fn);
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, expectedOps);
  EXPECT_FALSE(holdsBatchNorm(FuncOp(fn).body()));
  // The expansion prints and parses back as a valid module.
  auto reparsed = programtest::parseAndVerify(printModule(*expanded), "expanded.mlir");
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*expanded);

  for (uint32_t seed : {1u, 2u}) {
    std::vector<Literal> args = randomArgs(*original->lookupFunction("main"), seed);
    auto want = run(*original, "main", args);
    auto got = run(*reparsed, "main", args);
    ASSERT_TRUE(want) << want.status().toString();
    ASSERT_TRUE(got) << got.status().toString();
    ASSERT_EQ(want->size(), got->size());
    for (size_t r = 0; r < want->size(); ++r) {
      const Literal &w = (*want)[r], &g = (*got)[r];
      ASSERT_EQ(w.type(), g.type());
      double scale = 0;
      for (int64_t i = 0; i < w.numElements(); ++i) scale = std::max(scale, std::abs(w.getDouble(i)));
      for (int64_t i = 0; i < w.numElements(); ++i) {
        ASSERT_FALSE(std::isnan(g.getDouble(i))) << "result " << r << " element " << i;
        EXPECT_NEAR(g.getDouble(i), w.getDouble(i), rtol * (1 + scale)) << "result " << r << " element " << i;
      }
    }
  }
}

// A training step's pair: the forward op, then its gradient from the forward's statistics.
std::string trainingAndGrad(const std::string& shape, const std::string& c, int feature, const std::string& t) {
  const std::string x = "tensor<" + shape + "x" + t + ">", v = "tensor<" + c + "x" + t + ">";
  const std::string attrs = "{epsilon = 1.0e-05 : f32, feature_index = " + std::to_string(feature) + " : i64}";
  return "func.func @main(%x: " + x + ", %s: " + v + ", %o: " + v + ", %dy: " + x + ") -> (" + x + ", " + v + ", " +
         v + ", " + x + ", " + v + ", " + v + ") {\n" +
         "  %bn:3 = \"stablehlo.batch_norm_training\"(%x, %s, %o) " + attrs + " : (" + x + ", " + v + ", " + v +
         ") -> (" + x + ", " + v + ", " + v + ")\n" +
         "  %g:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %bn#1, %bn#2, %dy) " + attrs + " : (" + x + ", " + v + ", " +
         v + ", " + v + ", " + x + ") -> (" + x + ", " + v + ", " + v + ")\n" +
         "  return %bn#0, %bn#1, %bn#2, %g#0, %g#1, %g#2 : " + x + ", " + v + ", " + v + ", " + x + ", " + v + ", " + v +
         "\n}";
}

TEST(ExpandBatchNorm, TrainingAndGradientNchwF64) {
  checkExpansion(trainingAndGrad("4x3x5x7", "3", 1, "f64"), 1e-12, 2);
}

TEST(ExpandBatchNorm, TrainingAndGradientFeatureLastF32) {
  checkExpansion(trainingAndGrad("6x10x5", "5", 2, "f32"), 2e-5, 2);
}

TEST(ExpandBatchNorm, TrainingAndGradientRank2F32) { checkExpansion(trainingAndGrad("37x9", "9", 1, "f32"), 2e-5, 2); }

TEST(ExpandBatchNorm, NarrowFloatsComputeInF32AndRoundOnce) {
  checkExpansion(trainingAndGrad("4x3x6", "3", 1, "bf16"), 1e-2, 2);
}

TEST(ExpandBatchNorm, Inference) {
  checkExpansion(R"(func.func @main(%x: tensor<2x4x3x3xf32>, %s: tensor<4xf32>, %o: tensor<4xf32>, %mean: tensor<4xf32>, %var: tensor<4xf32>) -> tensor<2x4x3x3xf32> {
  %y = "stablehlo.batch_norm_inference"(%x, %s, %o, %mean, %var) {epsilon = 1.0e-03 : f32, feature_index = 1 : i64} : (tensor<2x4x3x3xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x4x3x3xf32>
  return %y : tensor<2x4x3x3xf32>
})",
                 1e-5, 1);
}

TEST(ExpandBatchNorm, OpsInsideRegionsAndTheirUsersOutside) {
  checkExpansion(R"(func.func @main(%p: tensor<i1>, %x: tensor<8x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<8x3xf32> {
  %bn:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>)
  %r = "stablehlo.if"(%p) ({
    %y:3 = "stablehlo.batch_norm_training"(%bn#0, %s, %o) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>)
    "stablehlo.return"(%y#0) : (tensor<8x3xf32>) -> ()
  }, {
    "stablehlo.return"(%bn#0) : (tensor<8x3xf32>) -> ()
  }) : (tensor<i1>) -> tensor<8x3xf32>
  return %r : tensor<8x3xf32>
})",
                 1e-5, 2);
}

TEST(ExpandBatchNorm, BadFeatureIndexIsAnErrorAndChangesNothing) {
  auto m = programtest::parseAndVerify(R"(func.func @main(%x: tensor<8x3xf32>, %s: tensor<3xf32>, %o: tensor<3xf32>) -> tensor<8x3xf32> {
  %bn:3 = "stablehlo.batch_norm_training"(%x, %s, %o) {epsilon = 1.0e-05 : f32, feature_index = 1 : i64} : (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>) -> (tensor<8x3xf32>, tensor<3xf32>, tensor<3xf32>)
  return %bn#0 : tensor<8x3xf32>
})");
  ASSERT_TRUE(m) << m.status().toString();
  Operation* fn = m->mutableOperations().front().get();
  Operation* bn = FuncOp(fn).body().operations().front().get();
  bn->setAttr("feature_index", Attribute::integer(5));
  const std::string before = printModule(*m);
  auto n = expandBatchNorm(*fn);
  ASSERT_FALSE(n);
  EXPECT_NE(n.status().toString().find("feature_index"), std::string::npos) << n.status().toString();
  EXPECT_EQ(printModule(*m), before);
}

}  // namespace
}  // namespace wf
