// Products of one activation by several weights merged into one (src/transforms/merge_products.cpp):
// query, key and value projections (of different widths, f32 and bf16 with the weights
// converted) become one product whose slices the old results' users read, with the same bits;
// products of other activations, by activations, or of other shapes stay.
#include <gtest/gtest.h>

#include <string>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/merge_products.h"

namespace wf {
namespace {

using programtest::mainOf;

// x [2, 5, 12] times the transposes of three weights [8, 12], [8, 12], [4, 12] of `type`, each
// plus a bias; the key's weight chain is written after the query's users, as exporters do.
// With `activationRhs`, the value's rhs is computed from x instead of a weight.
std::string projections(const std::string& type, bool activationRhs = false) {
  const std::string t = type;
  std::string s = "func.func @main(%x: tensor<2x5x12x" + t + ">, %wq: tensor<8x12xf32>, %wk: tensor<8x12xf32>, "
                  "%wv: tensor<4x12xf32>, %b: tensor<8x" + t + ">) -> (tensor<2x5x8x" + t + ">, tensor<2x5x8x" + t +
                  ">, tensor<2x5x4x" + t + ">) {\n";
  auto weight = [&](const std::string& w, int n) {
    const std::string wt = "tensor<" + std::to_string(n) + "x12xf32>", tt = "tensor<12x" + std::to_string(n) + "xf32>",
                      ct = "tensor<12x" + std::to_string(n) + "x" + t + ">";
    std::string r = "  %" + w + "t = \"stablehlo.transpose\"(%" + w + ") {permutation = array<i64: 1, 0>} : (" + wt + ") -> " + tt + "\n";
    r += "  %" + w + "c = \"stablehlo.convert\"(%" + w + "t) : (" + tt + ") -> " + ct + "\n";
    return r;
  };
  auto dot = [&](const std::string& name, const std::string& rhs, int n) {
    const std::string rt = "tensor<12x" + std::to_string(n) + "x" + t + ">", out = "tensor<2x5x" + std::to_string(n) + "x" + t + ">";
    return "  %" + name + " = \"stablehlo.dot_general\"(%x, %" + rhs + ") {dot_dimension_numbers = #stablehlo.dot<" +
           "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [0]>} : (tensor<2x5x12x" + t + ">, " + rt +
           ") -> " + out + "\n";
  };
  const std::string o8 = "tensor<2x5x8x" + t + ">";
  s += weight("wq", 8) + dot("q", "wqc", 8);
  s += "  %bb = \"stablehlo.broadcast_in_dim\"(%b) {broadcast_dimensions = array<i64: 2>} : (tensor<8x" + t + ">) -> " + o8 + "\n";
  s += "  %qb = \"stablehlo.add\"(%q, %bb) : (" + o8 + ", " + o8 + ") -> " + o8 + "\n";
  s += weight("wk", 8) + dot("k", "wkc", 8);
  s += "  %kb = \"stablehlo.multiply\"(%k, %qb) : (" + o8 + ", " + o8 + ") -> " + o8 + "\n";
  if (activationRhs) {
    s += "  %xs = \"stablehlo.slice\"(%x) {start_indices = array<i64: 0, 0, 0>, limit_indices = array<i64: 1, 4, 12>, "
         "strides = array<i64: 1, 1, 1>} : (tensor<2x5x12x" + t + ">) -> tensor<1x4x12x" + t + ">\n";
    s += "  %vr = \"stablehlo.reshape\"(%xs) : (tensor<1x4x12x" + t + ">) -> tensor<4x12x" + t + ">\n";
    s += "  %wvc = \"stablehlo.transpose\"(%vr) {permutation = array<i64: 1, 0>} : (tensor<4x12x" + t + ">) -> tensor<12x4x" + t + ">\n";
  } else {
    s += weight("wv", 4);
  }
  s += dot("v", "wvc", 4);
  s += "  func.return %qb, %kb, %v : " + o8 + ", " + o8 + ", tensor<2x5x4x" + t + ">\n}\n";
  return s;
}

int countOps(const Module& m, OpCode code) {
  int n = 0;
  for (const auto& op : FuncOp(mainOf(m)).body().operations()) n += op->code() == code;
  return n;
}

// Merges @main of `text`; expects `removed` products gone and the same bits.
void check(const std::string& text, int removed, const MergeProductsOptions& options = {}) {
  auto original = programtest::parseAndVerify(text, "products.mlir");
  auto changed = programtest::parseAndVerify(text, "products.mlir");
  ASSERT_TRUE(original && changed) << (original ? changed.status() : original.status()).toString() << "\n" << text;
  Expected<int> n = mergeSiblingProducts(*changed->lookupFunction("main"), options);
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, removed);
  auto reparsed = programtest::parseAndVerify(printModule(*changed), "merged.mlir");
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*changed);
  EXPECT_EQ(countOps(*reparsed, OpCode::DotGeneral), countOps(*original, OpCode::DotGeneral) - removed);
  for (uint32_t seed : {3u, 4u})
    EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, seed)), "");
}

TEST(MergeProducts, ProjectionsOfOneActivationBecomeOneProduct) {
  check(projections("f32"), 2);
  check(projections("bf16"), 2);
}

TEST(MergeProducts, ProductsThatFillTheDeviceStay) {
  // The query and key results have 80 elements, the value's 40: with a bound of 79 the value's
  // product has no sibling left.
  check(projections("f32"), 0, MergeProductsOptions{.maxResultElements = 79});
  check(projections("f32"), 2, MergeProductsOptions{.maxResultElements = 80});
}

TEST(MergeProducts, ProductsByActivationsStay) {
  // The value's rhs is computed from x: the query and key still merge.
  check(projections("f32", /*activationRhs=*/true), 1);
}

std::string linearLayers(int rows, bool readSum = false);

TEST(MergeProducts, ProductsOfManyRowsMergeWhereTheirWeightsAreSmaller) {
  // With no result small enough, the rows decide: 10 rows against 12 inputs stay apart, 16 rows
  // against 8 inputs merge, 4 against 8 do not.
  const MergeProductsOptions noneSmall{.maxResultElements = 0};
  check(projections("f32"), 0, noneSmall);
  check(linearLayers(16), 2, noneSmall);
  check(linearLayers(4), 0, noneSmall);
  check(linearLayers(16), 0, MergeProductsOptions{.maxResultElements = 0, .mergeManyRows = false});
}

// A linear layer's q, k and v as exporters write them in bf16: x [rows, 8] times three weights
// [8, n] (n = 8, 8, 4), each product widened to f32, plus its f32 bias, reshaped to [2, rows / 2,
// n / 4, 4] and narrowed back; the narrowed values are the results. With `readSum`, the key's f32
// sum is read again (its bias add cannot merge).
std::string linearLayers(int rows, bool readSum) {
  const std::string r = std::to_string(rows), half = std::to_string(rows / 2);
  std::string s = "func.func @main(%x: tensor<" + r + "x8xbf16>, %wq: tensor<8x8xbf16>, %wk: tensor<8x8xbf16>, "
                  "%wv: tensor<8x4xbf16>, %bq: tensor<8xf32>, %bk: tensor<8xf32>, %bv: tensor<4xf32>) -> (";
  std::string results, types;
  std::string body;
  for (auto [name, n] : {std::pair{"q", 8}, std::pair{"k", 8}, std::pair{"v", 4}}) {
    const std::string nn = std::to_string(n), t = "tensor<" + r + "x" + nn, heads = std::to_string(n / 4);
    const std::string split = "tensor<2x" + half + "x" + heads + "x4";
    const std::string v = std::string("%") + name;
    body += "  " + v + "p = \"stablehlo.dot_general\"(%x, %w" + name + ") {dot_dimension_numbers = #stablehlo.dot<"
            "lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<" + r + "x8xbf16>, "
            "tensor<8x" + nn + "xbf16>) -> " + t + "xbf16>\n";
    body += "  " + v + "w = \"stablehlo.convert\"(" + v + "p) : (" + t + "xbf16>) -> " + t + "xf32>\n";
    body += "  " + v + "b = \"stablehlo.broadcast_in_dim\"(%b" + name + ") {broadcast_dimensions = array<i64: 1>} : "
            "(tensor<" + nn + "xf32>) -> " + t + "xf32>\n";
    body += "  " + v + "a = \"stablehlo.add\"(" + v + "w, " + v + "b) : (" + t + "xf32>, " + t + "xf32>) -> " + t +
            "xf32>\n";
    body += "  " + v + "r = \"stablehlo.reshape\"(" + v + "a) : (" + t + "xf32>) -> " + split + "xf32>\n";
    body += "  " + v + "n = \"stablehlo.convert\"(" + v + "r) : (" + split + "xf32>) -> " + split + "xbf16>\n";
    results += (results.empty() ? "" : ", ") + v + "n";
    types += (types.empty() ? "" : ", ") + split + "xbf16>";
  }
  if (readSum) {
    results += ", %ka";
    types += ", tensor<" + r + "x8xf32>";
  }
  return s + types + ") {\n" + body + "  func.return " + results + " : " + types + "\n}\n";
}

// Merges the products and then their bias adds; expects `adds` stablehlo.add ops left and the same
// bits.
void checkBiasAdds(const std::string& text, int adds) {
  auto original = programtest::parseAndVerify(text, "linear.mlir");
  auto changed = programtest::parseAndVerify(text, "linear.mlir");
  ASSERT_TRUE(original && changed) << (original ? changed.status() : original.status()).toString() << "\n" << text;
  Operation& main = *changed->lookupFunction("main");
  ASSERT_TRUE(mergeSiblingProducts(main));
  Expected<int> gone = mergeBiasAddsOfSlices(main);
  ASSERT_TRUE(gone) << gone.status().toString();
  EXPECT_EQ(*gone, adds == 1 ? 2 : 0);
  auto reparsed = programtest::parseAndVerify(printModule(*changed), "merged.mlir");
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*changed);
  EXPECT_EQ(countOps(*reparsed, OpCode::DotGeneral), 1);
  EXPECT_EQ(countOps(*reparsed, OpCode::Add), adds) << printModule(*reparsed);
  for (uint32_t seed : {5u, 6u})
    EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, seed)), "");
}

TEST(MergeProducts, BiasAddsOfAMergedProductBecomeOne) {
  // 16 rows of 8 inputs: the many-rows rule merges the products, whatever their size.
  checkBiasAdds(linearLayers(16), 1);
  // The key's sum is read as it is: nothing merges, the products stay merged.
  checkBiasAdds(linearLayers(16, /*readSum=*/true), 3);
}

}  // namespace
}  // namespace wf
