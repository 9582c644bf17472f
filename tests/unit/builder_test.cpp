// The op builder (src/ir/builder.h): ops get their result types from shape inference, helpers
// emit the canonical attributes (the built module verifies, prints and parses back to an
// equivalent module, and computes what it should), and a failing type rule is a sticky error
// naming the op and the builder's location.
#include <gtest/gtest.h>

#include "eval/interpreter.h"
#include "ir/builder.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

Operation* addFunction(Module& m, const std::string& name, std::vector<Type> args, std::vector<Type> results) {
  auto op = std::make_unique<Operation>("func.func", Location{"built.mlir", 1, 1, ""});
  op->setAttr("sym_name", Attribute::string(name));
  op->setAttr("function_type", Attribute::functionType(FunctionType{args, results}));
  Block* body = op->addRegion()->addBlock();
  for (Type& t : args) body->addArgument(std::move(t));
  return m.append(std::move(op));
}

TEST(OpBuilderTest, BuiltOpsAreTypedVerifyRoundTripAndCompute) {
  Module m;
  Type x = Type::tensor({2, 3}, ElementType::kF64);
  Operation* fn = addFunction(m, "main", {x}, {Type::tensor({3, 2}, ElementType::kF64), Type::scalar(ElementType::kF64)});
  Block* body = &fn->region(0).front();
  OpBuilder b(body, Location{"built.mlir", 2, 3, ""}, &m);
  Value* a = body->argument(0);
  Value* t = b.transpose(a, {1, 0});                                  // 3x2
  Value* d = b.dotGeneral(a, t, {}, {}, {1}, {0});                    // 2x2 = a a^T
  Value* s = b.reduceSum(d, {0, 1});                                  // scalar
  Value* bc = b.broadcastInDim(b.reduceSum(a, {0}), Type::tensor({3, 2}, ElementType::kF64), {0});
  Value* io = b.convert(b.iota(Type::tensor({3, 2}, ElementType::kSI32), 1), ElementType::kF64);
  Value* padded = b.pad(b.slice(bc, {0, 0}, {3, 1}, {1, 1}), b.scalar(ElementType::kF64, 0.0), {0, 0}, {0, 1}, {0, 0});
  Value* r = b.add(b.add(padded, io), b.splat(padded->type(), 0.5));
  b.create("func.return", {r, s}, {}, {}, 0);
  ASSERT_TRUE(b.ok()) << b.status().toString();
  EXPECT_EQ(d->type(), Type::tensor({2, 2}, ElementType::kF64));
  EXPECT_EQ(s->type(), Type::scalar(ElementType::kF64));
  EXPECT_EQ(io->type(), Type::tensor({3, 2}, ElementType::kF64));
  ASSERT_TRUE(verifyModule(m).isOk()) << verifyModule(m).toString();

  std::string text = printModule(m);
  auto again = parseModule(text);
  ASSERT_TRUE(again) << again.status().toString() << "\n" << text;
  std::string why;
  EXPECT_TRUE(modulesEquivalent(m, *again, &why)) << why;

  Literal in = Literal::zeros(x);
  for (int i = 0; i < 6; ++i) in.setDouble(i, i + 1);  // [[1, 2, 3], [4, 5, 6]]
  EvalContext ctx;
  ctx.module = &*again;
  auto out = Interpreter::callFunction(*again->lookupFunction("main"), {in}, ctx);
  ASSERT_TRUE(out) << out.status().toString();
  // a a^T = [[14, 32], [32, 77]], summed: 155
  EXPECT_EQ((*out)[1].getDouble(0), 155.0);
  // column sums (5, 7, 9) in column 0 of rows 0..2, column 1 zero; plus iota along dim 1 and 0.5
  const double expected[] = {5.5, 1.5, 7.5, 1.5, 9.5, 1.5};
  for (int i = 0; i < 6; ++i) EXPECT_EQ((*out)[0].getDouble(i), expected[i]) << i;
}

TEST(OpBuilderTest, ReduceSumAccumulatesNarrowFloatsInF32) {
  // 1024 ones: summed in bf16 the sum stops at 256 (256 + 1 rounds back to 256).
  Module m;
  Type ones = Type::tensor({1024}, ElementType::kBF16);
  Operation* fn = addFunction(m, "main", {}, {Type::scalar(ElementType::kBF16)});
  Block* body = &fn->region(0).front();
  OpBuilder b(body, Location{"built.mlir", 2, 3, ""}, &m);
  Value* s = b.reduceSum(b.ones(ones), {0});
  b.create("func.return", {s}, {}, {}, 0);
  ASSERT_TRUE(b.ok()) << b.status().toString();
  EXPECT_EQ(s->type(), Type::scalar(ElementType::kBF16));
  ASSERT_TRUE(verifyModule(m).isOk());
  EvalContext ctx;
  ctx.module = &m;
  auto out = Interpreter::callFunction(*fn, {}, ctx);
  ASSERT_TRUE(out) << out.status().toString();
  EXPECT_EQ((*out)[0].getDouble(0), 1024.0);
}

TEST(OpBuilderTest, FailingTypeRuleIsStickyAndNamesOpAndLocation) {
  Module m;
  Operation* fn = addFunction(m, "main", {Type::tensor({2}, ElementType::kF32), Type::tensor({3}, ElementType::kF32)}, {});
  Block* body = &fn->region(0).front();
  OpBuilder b(body, Location{"built.mlir", 7, 9, ""});
  Value* bad = b.add(body->argument(0), body->argument(1));
  ASSERT_FALSE(b.ok());
  ASSERT_NE(bad, nullptr);  // still a value: later calls need no checks of their own
  Value* later = b.mul(bad, bad);
  ASSERT_NE(later, nullptr);
  EXPECT_NE(b.status().message().find("stablehlo.add"), std::string::npos) << b.status().message();
  EXPECT_NE(b.status().message().find("built.mlir:7:9"), std::string::npos) << b.status().message();
}

TEST(OpBuilderTest, CloneOperationRemapsOperandsAndNestedRegions) {
  auto m = parseModule(R"(func.func @main(%x: tensor<4xf32>, %y: tensor<4xf32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %s = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [0] : (tensor<4xf32>, tensor<f32>) -> tensor<f32>
  return %s : tensor<f32>
})");
  ASSERT_TRUE(m) << m.status().toString();
  const Block& body = FuncOp(m->lookupFunction("main")).body();
  const Operation& reduce = *body.operations()[1];
  std::unordered_map<const Value*, Value*> mapping = {{body.argument(0), body.argument(1)}};
  auto copy = cloneOperation(reduce, mapping);
  EXPECT_EQ(copy->operand(0), body.argument(1));
  EXPECT_EQ(copy->operand(1), reduce.operand(1));  // not in the mapping: kept
  EXPECT_EQ(mapping.at(reduce.result(0)), copy->result(0));
  const Block& region = copy->region(0).front();
  EXPECT_EQ(region.operations().front()->operand(0), region.argument(0));  // the copy's own block argument
}

}  // namespace
}  // namespace wf
