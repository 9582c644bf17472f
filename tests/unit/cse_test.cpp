// Common-subexpression elimination (src/transforms/cse.cpp): repeated pure ops merge, link by link
// along chains, and the program computes what it did (bit for bit, on random inputs); ops that are
// not pure (random numbers), that differ in an attribute or a result type, or that live in another
// block stay.
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/cse.h"

namespace wf {
namespace {

Operation* mainOf(Module& m) {
  for (auto& op : m.mutableOperations())
    if (op->code() == OpCode::FuncFunc && FuncOp(op.get()).symName() == "main") return op.get();
  return nullptr;
}

std::map<std::string, int> countOps(const Block& block) {
  std::map<std::string, int> n;
  for (const auto& op : block.operations()) ++n[op->name()];
  return n;
}

// Merges @main's repeats; expects `removed` of them gone, and the same results as before on
// random inputs. Returns the rewritten module.
Module checkMerge(const std::string& text, int removed) {
  auto original = programtest::parseAndVerify(text, "cse.mlir");
  EXPECT_TRUE(original) << original.status().toString();
  auto merged = programtest::parseAndVerify(text, "cse.mlir");
  EXPECT_TRUE(merged);
  Operation* fn = mainOf(*merged);
  EXPECT_NE(fn, nullptr);
  EXPECT_EQ(eliminateCommonSubexpressions(*fn), removed);
  auto reparsed = programtest::parseAndVerify(printModule(*merged), "merged.mlir");
  EXPECT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*merged);
  if (!reparsed) return Module{};
  EXPECT_EQ(programtest::sameResults(*original, *reparsed, programtest::randomArguments(*original, 7)), "");
  return std::move(*reparsed);
}

// Three projections of one value, each with its own reshape and convert (as an exporter writes
// nn.Linear): the chains merge into one, and the three products read it.
TEST(CommonSubexpressions, RepeatedChainsMergeLinkByLink) {
  Module m = checkMerge(R"(
func.func @main(%x: tensor<2x3x4xf32>, %wq: tensor<4x5xbf16>, %wk: tensor<4x5xbf16>) -> (tensor<6x5xbf16>, tensor<6x5xbf16>) {
  %r1 = stablehlo.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %c1 = stablehlo.convert %r1 : (tensor<6x4xf32>) -> tensor<6x4xbf16>
  %q = stablehlo.dot_general %c1, %wq, contracting_dims = [1] x [0] : (tensor<6x4xbf16>, tensor<4x5xbf16>) -> tensor<6x5xbf16>
  %r2 = stablehlo.reshape %x : (tensor<2x3x4xf32>) -> tensor<6x4xf32>
  %c2 = stablehlo.convert %r2 : (tensor<6x4xf32>) -> tensor<6x4xbf16>
  %k = stablehlo.dot_general %c2, %wk, contracting_dims = [1] x [0] : (tensor<6x4xbf16>, tensor<4x5xbf16>) -> tensor<6x5xbf16>
  %k2 = stablehlo.dot_general %c2, %wk, contracting_dims = [1] x [0] : (tensor<6x4xbf16>, tensor<4x5xbf16>) -> tensor<6x5xbf16>
  %s = stablehlo.add %k, %k2 : tensor<6x5xbf16>
  return %q, %s : tensor<6x5xbf16>, tensor<6x5xbf16>
})",
                        3);
  auto n = countOps(FuncOp(mainOf(m)).body());
  EXPECT_EQ(n["stablehlo.reshape"], 1);
  EXPECT_EQ(n["stablehlo.convert"], 1);
  EXPECT_EQ(n["stablehlo.dot_general"], 2);
}

// Equal constants merge; constants of other values, ops with other attributes or result types,
// and random numbers do not.
TEST(CommonSubexpressions, OnlyIdenticalPureOpsMerge) {
  Module m = checkMerge(R"(
func.func @main(%x: tensor<4x4xf32>) -> (tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>, tensor<4x4xf32>) {
  %a = stablehlo.constant dense<2.0> : tensor<4x4xf32>
  %b = stablehlo.constant dense<2.0> : tensor<4x4xf32>
  %c = stablehlo.constant dense<3.0> : tensor<4x4xf32>
  %t1 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %t2 = stablehlo.transpose %x, dims = [0, 1] : (tensor<4x4xf32>) -> tensor<4x4xf32>
  %m1 = stablehlo.multiply %t1, %a : tensor<4x4xf32>
  %m2 = stablehlo.multiply %t1, %b : tensor<4x4xf32>
  %m3 = stablehlo.multiply %t2, %c : tensor<4x4xf32>
  %h = stablehlo.convert %m1 : (tensor<4x4xf32>) -> tensor<4x4xf16>
  %h2 = stablehlo.convert %m1 : (tensor<4x4xf32>) -> tensor<4x4xbf16>
  %w = stablehlo.convert %h2 : (tensor<4x4xbf16>) -> tensor<4x4xf32>
  return %m1, %m2, %m3, %h, %w : tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf32>, tensor<4x4xf16>, tensor<4x4xf32>
})",
                        2);
  auto n = countOps(FuncOp(mainOf(m)).body());
  EXPECT_EQ(n["stablehlo.constant"], 2);
  EXPECT_EQ(n["stablehlo.transpose"], 2);
  EXPECT_EQ(n["stablehlo.multiply"], 2);  // m1 and m2 merged
  EXPECT_EQ(n["stablehlo.convert"], 3);   // f16, bf16 and back: other result types
}

// Random numbers are not a function of their operands: two draws stay two.
TEST(CommonSubexpressions, RandomNumbersStay) {
  auto m = programtest::parseAndVerify(R"(
func.func @main() -> tensor<4x4xf32> {
  %lo = stablehlo.constant dense<0.0> : tensor<f32>
  %hi = stablehlo.constant dense<1.0> : tensor<f32>
  %shape = stablehlo.constant dense<[4, 4]> : tensor<2xi64>
  %u1 = stablehlo.rng %lo, %hi, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<4x4xf32>
  %u2 = stablehlo.rng %lo, %hi, %shape, distribution = UNIFORM : (tensor<f32>, tensor<f32>, tensor<2xi64>) -> tensor<4x4xf32>
  %z = stablehlo.subtract %u1, %u2 : tensor<4x4xf32>
  return %z : tensor<4x4xf32>
})",
                                       "rng.mlir");
  ASSERT_TRUE(m) << m.status().toString();
  EXPECT_EQ(eliminateCommonSubexpressions(*mainOf(*m)), 0);
  EXPECT_EQ(countOps(FuncOp(mainOf(*m)).body())["stablehlo.rng"], 2);
}

// Ops inside a loop body merge among themselves (each block is its own scope), and the loop
// computes what it did.
TEST(CommonSubexpressions, NestedBlocksMergeOnTheirOwn) {
  Module m = checkMerge(R"(
func.func @main(%x: tensor<3xf32>) -> tensor<3xf32> {
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %r:2 = stablehlo.while(%i = %zero, %acc = %x) : tensor<i64>, tensor<3xf32>
    cond {
      %three = stablehlo.constant dense<3> : tensor<i64>
      %lt = stablehlo.compare LT, %i, %three : (tensor<i64>, tensor<i64>) -> tensor<i1>
      stablehlo.return %lt : tensor<i1>
    } do {
      %one = stablehlo.constant dense<1> : tensor<i64>
      %one2 = stablehlo.constant dense<1> : tensor<i64>
      %next = stablehlo.add %i, %one : tensor<i64>
      %e1 = stablehlo.exponential %acc : tensor<3xf32>
      %e2 = stablehlo.exponential %acc : tensor<3xf32>
      %s = stablehlo.subtract %e1, %e2 : tensor<3xf32>
      %n = stablehlo.add %acc, %s : tensor<3xf32>
      %n2 = stablehlo.add %n, %x : tensor<3xf32>
      stablehlo.return %next, %n2 : tensor<i64>, tensor<3xf32>
    }
  %e = stablehlo.exponential %x : tensor<3xf32>
  %e2 = stablehlo.exponential %x : tensor<3xf32>
  %out = stablehlo.add %r#1, %e : tensor<3xf32>
  %out2 = stablehlo.add %out, %e2 : tensor<3xf32>
  return %out2 : tensor<3xf32>
})",
                        3);
  auto n = countOps(FuncOp(mainOf(m)).body());
  EXPECT_EQ(n["stablehlo.exponential"], 1);
}
}  // namespace
}  // namespace wf
