// Selects on a uniform compile-time predicate (src/transforms/fold_uniform_selects.cpp): BERT's
// mask made of `iota >= 0` goes, with the ops that made it, the program computing the same bits
// on random inputs, and the attention left is outlined unmasked; predicates that differ from
// element to element, that an argument reaches, or that are too large to evaluate stay.
#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/attention.h"
#include "transforms/fold_uniform_selects.h"

namespace wf {
namespace {

const Operation* mainOf(const Module& m) {
  for (const auto& op : m.operations())
    if (op->code() == OpCode::FuncFunc && FuncOp(op.get()).symName() == "main") return op.get();
  return nullptr;
}

std::map<std::string, int> countOps(const Module& m) {
  std::map<std::string, int> n;
  for (const auto& op : FuncOp(mainOf(m)).body().operations()) ++n[op->name()];
  return n;
}

std::vector<Literal> randomArguments(const Module& m, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-3.0, 3.0);
  std::vector<Literal> args;
  for (const auto& arg : FuncOp(mainOf(m)).body().arguments()) {
    Literal l = Literal::zeros(arg->type());
    for (int64_t i = 0; i < l.numElements(); ++i) l.setDouble(i, u(rng));
    args.push_back(std::move(l));
  }
  return args;
}

// Folds @main of `text`; expects `folded` selects replaced and the same results, bit for bit, as
// the program as written. Returns the rewritten module, printed and parsed again.
Module checkFold(const std::string& text, int folded, const FoldUniformSelectsOptions& options = {}) {
  auto original = programtest::parseAndVerify(text, "selects.mlir");
  EXPECT_TRUE(original) << original.status().toString();
  auto rewritten = programtest::parseAndVerify(text, "selects.mlir");
  EXPECT_TRUE(rewritten);
  if (!original || !rewritten) return Module{};
  Expected<int> n = foldUniformSelects(*rewritten, "main", options);
  EXPECT_TRUE(n) << n.status().toString();
  EXPECT_EQ(n ? *n : -1, folded);
  auto reparsed = programtest::parseAndVerify(printModule(*rewritten), "folded.mlir");
  EXPECT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*rewritten);
  if (!reparsed) return Module{};
  std::vector<Literal> args = randomArguments(*original, 11);
  auto want = programtest::run(*original, "main", args);
  auto got = programtest::run(*reparsed, "main", args);
  EXPECT_TRUE(want && got);
  if (want && got) {
    EXPECT_EQ(want->size(), got->size());
    for (size_t r = 0; r < want->size() && r < got->size(); ++r) {
      EXPECT_EQ((*want)[r].numElements(), (*got)[r].numElements());
      for (int64_t i = 0; i < (*want)[r].numElements() && i < (*got)[r].numElements(); ++i)
        EXPECT_EQ((*want)[r].getBits(i), (*got)[r].getBits(i)) << "result " << r << " element " << i;
    }
  }
  return std::move(*reparsed);
}

// BERT's attention without an attention mask, as torch.export writes it under bf16 autocast: the
// mask is iota(S) + 0 >= 0 reshaped to [1, 1, S, 1] and broadcast to [B, 1, S, S], then to
// [B, H, S, S] for the select with -inf. Shapes: B=2, H=3, S=6, D=4.
std::string unmaskedBertAttention(const std::string& comparison = "GE", const std::string& bound = "0") {
  std::string s = R"(func.func @main(%q: tensor<2x3x6x4xbf16>, %k: tensor<2x3x6x4xbf16>, %v: tensor<2x3x6x4xbf16>) -> tensor<2x3x6x4xbf16> {
  %s0 = "stablehlo.dot_general"(%q, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [3]>} : (tensor<2x3x6x4xbf16>, tensor<2x3x6x4xbf16>) -> tensor<2x3x6x6xbf16>
  %s = stablehlo.convert %s0 : (tensor<2x3x6x6xbf16>) -> tensor<2x3x6x6xf32>
  %c = stablehlo.constant dense<0.5> : tensor<2x3x6x6xf32>
  %ss = stablehlo.multiply %s, %c : tensor<2x3x6x6xf32>
  %iota = stablehlo.iota dim = 0 : tensor<6xi64>
  %zero = stablehlo.constant dense<0> : tensor<6xi64>
  %pos = stablehlo.add %iota, %zero : tensor<6xi64>
  %pos4 = stablehlo.reshape %pos : (tensor<6xi64>) -> tensor<1x1x6x1xi64>
  %bound = stablehlo.constant dense<)" + bound + R"(> : tensor<1x1x6x1xi64>
  %keep = stablehlo.compare )" + comparison + R"(, %pos4, %bound, SIGNED : (tensor<1x1x6x1xi64>, tensor<1x1x6x1xi64>) -> tensor<1x1x6x1xi1>
  %keepb = stablehlo.broadcast_in_dim %keep, dims = [0, 1, 2, 3] : (tensor<1x1x6x1xi1>) -> tensor<2x1x6x6xi1>
  %kb = stablehlo.broadcast_in_dim %keepb, dims = [0, 1, 2, 3] : (tensor<2x1x6x6xi1>) -> tensor<2x3x6x6xi1>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<2x3x6x6xf32>
  %x = stablehlo.select %kb, %ss, %ninf : tensor<2x3x6x6xi1>, tensor<2x3x6x6xf32>
  %lowest = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %m = stablehlo.reduce(%x init: %lowest) applies stablehlo.maximum across dimensions = [3] : (tensor<2x3x6x6xf32>, tensor<f32>) -> tensor<2x3x6xf32>
  %mb = stablehlo.broadcast_in_dim %m, dims = [0, 1, 2] : (tensor<2x3x6xf32>) -> tensor<2x3x6x6xf32>
  %sh = stablehlo.subtract %x, %mb : tensor<2x3x6x6xf32>
  %e = stablehlo.exponential %sh : tensor<2x3x6x6xf32>
  %z = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%e init: %z) applies stablehlo.add across dimensions = [3] : (tensor<2x3x6x6xf32>, tensor<f32>) -> tensor<2x3x6xf32>
  %sb = stablehlo.broadcast_in_dim %sum, dims = [0, 1, 2] : (tensor<2x3x6xf32>) -> tensor<2x3x6x6xf32>
  %p0 = stablehlo.divide %e, %sb : tensor<2x3x6x6xf32>
  %pn = stablehlo.convert %p0 : (tensor<2x3x6x6xf32>) -> tensor<2x3x6x6xbf16>
  %o = "stablehlo.dot_general"(%pn, %v) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0, 1], rhs_batching_dimensions = [0, 1], lhs_contracting_dimensions = [3], rhs_contracting_dimensions = [2]>} : (tensor<2x3x6x6xbf16>, tensor<2x3x6x4xbf16>) -> tensor<2x3x6x4xbf16>
  return %o : tensor<2x3x6x4xbf16>
}
)";
  return s;
}

TEST(FoldUniformSelects, BertMaskTrueEverywhereGoesWithTheOpsThatMadeIt) {
  Module m = checkFold(unmaskedBertAttention(), 1);
  std::map<std::string, int> ops = countOps(m);
  EXPECT_EQ(ops["stablehlo.select"], 0);
  EXPECT_EQ(ops["stablehlo.iota"], 0);
  EXPECT_EQ(ops["stablehlo.compare"], 0);
  EXPECT_EQ(ops["stablehlo.broadcast_in_dim"], 2);  // the softmax's two, not the mask's

  // The attention left has no mask.
  Expected<int> outlined = outlineAttention(m, "main");
  ASSERT_TRUE(outlined) << outlined.status().toString();
  EXPECT_EQ(*outlined, 1);
  int composites = 0;
  for (const auto& op : FuncOp(mainOf(m)).body().operations()) {
    if (op->code() != OpCode::Composite) continue;
    ++composites;
    EXPECT_EQ(op->attr("composite_attributes")->field("mask")->stringValue(), "none");
    EXPECT_EQ(op->numOperands(), 3u);
  }
  EXPECT_EQ(composites, 1);
}

TEST(FoldUniformSelects, FalseEverywherePicksTheOtherOperand) {
  // iota(6) < 0: every score is -inf, the rows NaN, as written; the fold keeps that.
  Module m = checkFold(unmaskedBertAttention("LT"), 1);
  EXPECT_EQ(countOps(m)["stablehlo.select"], 0);
}

TEST(FoldUniformSelects, PredicatesThatDifferOrThatArgumentsReachStay) {
  // iota(6) >= 3: half the keys masked, a predicate known but not uniform.
  Module m = checkFold(unmaskedBertAttention("GE", "3"), 0);
  EXPECT_EQ(countOps(m)["stablehlo.select"], 1);
  EXPECT_EQ(countOps(m)["stablehlo.iota"], 1);

  // A predicate computed from an argument, even one that happens to be true everywhere.
  const std::string fromArgument = R"(func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %big = stablehlo.constant dense<1.0e30> : tensor<4xf32>
  %p = stablehlo.compare LT, %a, %big : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xi1>
  %r = stablehlo.select %p, %a, %b : tensor<4xi1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
)";
  Module n = checkFold(fromArgument, 0);
  EXPECT_EQ(countOps(n)["stablehlo.select"], 1);
}

TEST(FoldUniformSelects, ScalarPredicatesAndTheEvaluationLimit) {
  // A rank-0 predicate selecting whole tensors.
  const std::string scalar = R"(func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %one = stablehlo.constant dense<1> : tensor<i32>
  %two = stablehlo.constant dense<2> : tensor<i32>
  %p = stablehlo.compare GT, %two, %one, SIGNED : (tensor<i32>, tensor<i32>) -> tensor<i1>
  %r = stablehlo.select %p, %a, %b : tensor<i1>, tensor<4xf32>
  return %r : tensor<4xf32>
}
)";
  Module m = checkFold(scalar, 1);
  EXPECT_EQ(countOps(m)["stablehlo.select"], 0);
  EXPECT_EQ(countOps(m)["stablehlo.compare"], 0);

  // The BERT mask's comparison has 6 elements: with a limit of 4 it is not evaluated.
  FoldUniformSelectsOptions small;
  small.maxEvaluatedElements = 4;
  Module n = checkFold(unmaskedBertAttention(), 0, small);
  EXPECT_EQ(countOps(n)["stablehlo.select"], 1);
}

}  // namespace
}  // namespace wf
