// Selects on a uniform compile-time predicate (src/transforms/fold_uniform_selects.cpp): BERT's
// mask made of `iota >= 0` goes, with the ops that made it, the program computing the same bits
// on random inputs, and the attention left is outlined unmasked; predicates that differ from
// element to element, that an argument reaches, or that are too large to evaluate stay.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/attention.h"
#include "transforms/fold_uniform_selects.h"

namespace wf {
namespace {

using programtest::mainOf;

std::map<std::string, int> countOps(const Module& m) {
  std::map<std::string, int> n;
  for (const auto& op : FuncOp(mainOf(m)).body().operations()) ++n[op->name()];
  return n;
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
  EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, 11)), "");
  return std::move(*reparsed);
}

// BERT's attention without an attention mask, as torch.export writes it under bf16 autocast: the
// mask is iota(S) + 0 >= 0 reshaped to [1, 1, S, 1] and broadcast to [B, 1, S, S] (then to
// [B, H, S, S] for the select with -inf). Shapes: B=2, H=3, S=6, D=4.
std::string unmaskedBertAttention(const std::string& comparison = "GE", const std::string& bound = "0") {
  const std::string maskOps = R"(  %iota = stablehlo.iota dim = 0 : tensor<6xi64>
  %zero = stablehlo.constant dense<0> : tensor<6xi64>
  %pos = stablehlo.add %iota, %zero : tensor<6xi64>
  %pos4 = stablehlo.reshape %pos : (tensor<6xi64>) -> tensor<1x1x6x1xi64>
  %bound = stablehlo.constant dense<)" + bound + R"(> : tensor<1x1x6x1xi64>
  %keep = stablehlo.compare )" + comparison + R"(, %pos4, %bound, SIGNED : (tensor<1x1x6x1xi64>, tensor<1x1x6x1xi64>) -> tensor<1x1x6x1xi1>
  %mask = stablehlo.broadcast_in_dim %keep, dims = [0, 1, 2, 3] : (tensor<1x1x6x1xi1>) -> tensor<2x1x6x6xi1>
)";
  return programtest::selectMaskedAttention(2, 3, 6, 4, "tensor<2x1x6x6xi1>", maskOps);
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
