// Widen-then-narrow round trips (src/transforms/fold_round_trips.cpp): a bf16 value widened to f32,
// reshaped and narrowed back becomes a reshape of the value, the program computing the same bits
// on random inputs; a narrowing that rounds (f32 -> bf16 -> f32 widened back is not one, nor a
// widening with arithmetic before the narrowing) stays.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/fold_round_trips.h"

namespace wf {
namespace {

std::map<std::string, int> countOps(const Module& m) {
  std::map<std::string, int> n;
  for (const auto& op : FuncOp(programtest::mainOf(m)).body().operations()) ++n[op->name()];
  return n;
}

// Folds @main of `text`, expecting `folded` round trips and the same results bit for bit; returns
// the rewritten module, printed and parsed again.
Module checkFold(const std::string& text, int folded) {
  auto original = programtest::parseAndVerify(text, "round_trips.mlir");
  auto rewritten = programtest::parseAndVerify(text, "round_trips.mlir");
  EXPECT_TRUE(original && rewritten) << (original ? rewritten.status() : original.status()).toString();
  if (!original || !rewritten) return Module{};
  Expected<int> n = foldWidenNarrowRoundTrips(*rewritten->lookupFunction("main"));
  EXPECT_TRUE(n) << n.status().toString();
  EXPECT_EQ(n ? *n : -1, folded);
  auto reparsed = programtest::parseAndVerify(printModule(*rewritten), "folded.mlir");
  EXPECT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*rewritten);
  if (!reparsed) return Module{};
  EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, 5)), "");
  return std::move(*reparsed);
}

TEST(FoldRoundTrips, WidenedThenNarrowedThroughReshapesIsTheValueReshaped) {
  // The attention output of a bf16 BERT after its head transpose is gone; %e is also read widened.
  Module m = checkFold(R"(
func.func @main(%o: tensor<2x5x3x4xbf16>, %w: tensor<12x7xbf16>, %x: tensor<6xf16>) -> (tensor<10x7xbf16>, tensor<2x5x12xf32>, tensor<6xf16>) {
  %wide = stablehlo.convert %o : (tensor<2x5x3x4xbf16>) -> tensor<2x5x3x4xf32>
  %r1 = stablehlo.reshape %wide : (tensor<2x5x3x4xf32>) -> tensor<2x5x12xf32>
  %r2 = stablehlo.reshape %r1 : (tensor<2x5x12xf32>) -> tensor<10x12xf32>
  %n = stablehlo.convert %r2 : (tensor<10x12xf32>) -> tensor<10x12xbf16>
  %p = "stablehlo.dot_general"(%n, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<10x12xbf16>, tensor<12x7xbf16>) -> tensor<10x7xbf16>
  %xd = stablehlo.convert %x : (tensor<6xf16>) -> tensor<6xf64>
  %xn = stablehlo.convert %xd : (tensor<6xf64>) -> tensor<6xf16>
  return %p, %r1, %xn : tensor<10x7xbf16>, tensor<2x5x12xf32>, tensor<6xf16>
}
)",
                      2);
  std::map<std::string, int> ops = countOps(m);
  EXPECT_EQ(ops["stablehlo.convert"], 1);  // the widening %r1 still reads
  EXPECT_EQ(ops["stablehlo.reshape"], 3);  // %r1, and the two folds
}

TEST(FoldRoundTrips, NarrowingsThatRoundStay) {
  checkFold(R"(
func.func @main(%x: tensor<8xf32>, %y: tensor<8xbf16>, %z: tensor<8xbf16>) -> (tensor<8xf32>, tensor<8xbf16>, tensor<8xf16>) {
  %xn = stablehlo.convert %x : (tensor<8xf32>) -> tensor<8xbf16>
  %xw = stablehlo.convert %xn : (tensor<8xbf16>) -> tensor<8xf32>
  %yw = stablehlo.convert %y : (tensor<8xbf16>) -> tensor<8xf32>
  %ys = stablehlo.add %yw, %yw : tensor<8xf32>
  %yn = stablehlo.convert %ys : (tensor<8xf32>) -> tensor<8xbf16>
  %zw = stablehlo.convert %z : (tensor<8xbf16>) -> tensor<8xf32>
  %zn = stablehlo.convert %zw : (tensor<8xf32>) -> tensor<8xf16>
  return %xw, %yn, %zn : tensor<8xf32>, tensor<8xbf16>, tensor<8xf16>
}
)",
            0);
}

}  // namespace
}  // namespace wf
