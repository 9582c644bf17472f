// Shape refinement (src/transforms/refine_shapes.h): programs with dynamic dimensions are
// specialized to static argument types; the result verifies, prints and parses back, has only
// static types, and computes what the dynamic program computes on the CPU interpreter.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <random>
#include <sstream>

#include "eval/interpreter.h"
#include "ir/printer.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"
#include "transforms/refine_shapes.h"

namespace wf {
namespace {

Module parse(const std::string& text, const std::string& name = "test.mlir") {
  ParseOptions options;
  options.fileName = name;
  auto m = parseModule(text, options);
  EXPECT_TRUE(m) << m.status().toString();
  if (!m) return Module();
  Status v = verifyModule(*m);
  EXPECT_TRUE(v.isOk()) << v.toString();
  return std::move(*m);
}

std::string readFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Type tensor(std::vector<int64_t> shape, ElementType e = ElementType::kF32) { return Type::tensor(std::move(shape), e); }

// The entry's declared argument types with every dynamic dimension set to `batch`.
std::vector<Type> withBatch(const Module& m, const std::string& entry, int64_t batch) {
  std::vector<Type> out;
  const Operation* fn = m.lookupFunction(entry);
  for (const auto& arg : FuncOp(fn).body().arguments()) {
    std::vector<int64_t> shape = arg->type().shape();
    for (int64_t& d : shape)
      if (d == kDynamic) d = batch;
    out.push_back(Type::tensor(shape, arg->type().elementType()));
  }
  return out;
}

Literal randomLiteral(const Type& type, std::mt19937& rng) {
  Literal l = Literal::zeros(type);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int64_t> ints(0, 9);
  for (int64_t i = 0; i < l.numElements(); ++i) {
    if (isFloat(type.elementType()))
      l.setDouble(i, normal(rng));
    else if (isBoolean(type.elementType()))
      l.setInt(i, ints(rng) % 2);
    else
      l.setInt(i, ints(rng));
  }
  return l;
}

Expected<std::vector<Literal>> runEntry(const Module& m, const std::string& entry, const std::vector<Literal>& args) {
  EvalContext ctx;
  ctx.module = &m;
  return Interpreter::callFunction(*m.lookupFunction(entry), args, ctx);
}

// Refines `m` for each batch size and checks the result (see the file comment); returns the
// printed refined module of the last batch size.
std::string checkRefinement(const Module& m, const std::vector<int64_t>& batches, const std::string& entry = "main") {
  std::string before = printModule(m);
  std::string printed;
  for (int64_t batch : batches) {
    SCOPED_TRACE("batch " + std::to_string(batch));
    std::vector<Type> types = withBatch(m, entry, batch);
    auto refined = refineShapes(m, entry, types);
    EXPECT_TRUE(refined) << refined.status().toString();
    if (!refined) return "";
    const Module& r = **refined;
    Status v = verifyModule(r);
    EXPECT_TRUE(v.isOk()) << v.toString() << "\n" << printModule(r);
    std::string where;
    EXPECT_TRUE(hasOnlyStaticTypes(r, &where)) << where;
    EXPECT_EQ(FuncOp(r.lookupFunction(entry)).functionType().inputs, types);

    // Prints and parses back to the same module.
    printed = printModule(r);
    auto reparsed = parseModule(printed, {"refined.mlir", 1});
    EXPECT_TRUE(reparsed) << reparsed.status().toString();
    if (reparsed) {
      std::string why;
      EXPECT_TRUE(modulesEquivalent(r, *reparsed, &why)) << why;
      EXPECT_TRUE(verifyModule(*reparsed).isOk());
    }

    // Same outputs as the dynamic program on random inputs.
    std::mt19937 rng(static_cast<unsigned>(batch) * 7919u + 13u);
    std::vector<Literal> args;
    for (const Type& t : types) args.push_back(randomLiteral(t, rng));
    auto want = runEntry(m, entry, args);
    auto got = runEntry(r, entry, args);
    EXPECT_TRUE(want) << want.status().toString();
    EXPECT_TRUE(got) << got.status().toString();
    if (!want || !got) continue;
    EXPECT_EQ(want->size(), got->size());
    for (size_t i = 0; i < want->size() && i < got->size(); ++i) {
      const Literal &a = (*want)[i], &b = (*got)[i];
      EXPECT_EQ(a.type(), b.type()) << "output " << i;
      if (a.type() != b.type()) continue;
      for (int64_t k = 0; k < a.numElements(); ++k) {
        double x = a.getDouble(k), y = b.getDouble(k);
        if (std::isnan(x) && std::isnan(y)) continue;
        if (std::abs(x - y) > 1e-6 + 1e-5 * std::abs(x)) {
          ADD_FAILURE() << "output " << i << " element " << k << ": " << y << " (refined) vs " << x << " (dynamic)";
          break;
        }
      }
    }
  }
  EXPECT_EQ(printModule(m), before) << "the input module changed";
  return printed;
}

std::string refineError(const Module& m, std::vector<Type> types, const std::string& entry = "main") {
  auto r = refineShapes(m, entry, types);
  EXPECT_FALSE(r) << "refinement should fail";
  return r ? "" : r.status().message();
}

// get_dimension_size feeding dynamic_broadcast_in_dim, dynamic_reshape and dynamic_iota
// through the arithmetic and concatenate ops exporters emit.
const char* kShapeOps = R"(module {
  func.func @main(%x: tensor<?x4xf32>, %b: tensor<4xf32>) -> (tensor<?x4xf32>, tensor<?xf32>, tensor<2x?xf32>, tensor<?x4xi32>) {
    %d = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?x4xf32>) -> tensor<i32>
    %d1 = "stablehlo.reshape"(%d) : (tensor<i32>) -> tensor<1xi32>
    %c4 = "stablehlo.constant"() {value = dense<4> : tensor<1xi32>} : () -> tensor<1xi32>
    %shape = "stablehlo.concatenate"(%d1, %c4) {dimension = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %bb = "stablehlo.dynamic_broadcast_in_dim"(%b, %shape) {broadcast_dimensions = array<i64: 1>} : (tensor<4xf32>, tensor<2xi32>) -> tensor<?x4xf32>
    %y = "stablehlo.add"(%x, %bb) : (tensor<?x4xf32>, tensor<?x4xf32>) -> tensor<?x4xf32>
    %n = "stablehlo.multiply"(%d1, %c4) : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
    %flat = "stablehlo.dynamic_reshape"(%y, %n) : (tensor<?x4xf32>, tensor<1xi32>) -> tensor<?xf32>
    %io = "stablehlo.dynamic_iota"(%n) {iota_dimension = 0 : i64} : (tensor<1xi32>) -> tensor<?xf32>
    %z = "stablehlo.add"(%flat, %io) : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
    %c2 = "stablehlo.constant"() {value = dense<2> : tensor<1xi32>} : () -> tensor<1xi32>
    %half = "stablehlo.divide"(%n, %c2) : (tensor<1xi32>, tensor<1xi32>) -> tensor<1xi32>
    %shape2 = "stablehlo.concatenate"(%c2, %half) {dimension = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %r = "stablehlo.dynamic_reshape"(%z, %shape2) : (tensor<?xf32>, tensor<2xi32>) -> tensor<2x?xf32>
    %rows = "stablehlo.dynamic_iota"(%shape) {iota_dimension = 0 : i64} : (tensor<2xi32>) -> tensor<?x4xi32>
    "func.return"(%y, %z, %r, %rows) : (tensor<?x4xf32>, tensor<?xf32>, tensor<2x?xf32>, tensor<?x4xi32>) -> ()
  }
})";

TEST(RefineShapes, ShapeComputationsFoldIntoStaticOps) {
  Module m = parse(kShapeOps);
  std::string printed = checkRefinement(m, {1, 3, 8});
  // The dynamic ops became their static forms and the shape computations are gone.
  EXPECT_EQ(printed.find("dynamic_"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("get_dimension_size"), std::string::npos) << printed;
  EXPECT_NE(printed.find("stablehlo.broadcast_in_dim"), std::string::npos) << printed;
  EXPECT_NE(printed.find("tensor<2x16xf32>"), std::string::npos) << printed;  // batch 8: 32 elements as 2 x 16

  auto r = refineShapes(m, "main", withBatch(m, "main", 5));
  ASSERT_TRUE(r) << r.status().toString();
  FunctionType ft = FuncOp((*r)->lookupFunction("main")).functionType();
  ASSERT_EQ(ft.results.size(), 4u);
  EXPECT_EQ(ft.results[0], tensor({5, 4}));
  EXPECT_EQ(ft.results[1], tensor({20}));
  EXPECT_EQ(ft.results[2], tensor({2, 10}));
  EXPECT_EQ(ft.results[3], tensor({5, 4}, ElementType::kSI32));
}

TEST(RefineShapes, FoldingCanBeTurnedOff) {
  Module m = parse(kShapeOps);
  RefineShapesOptions options;
  options.foldConstants = false;
  auto r = refineShapes(m, "main", withBatch(m, "main", 2), options);
  ASSERT_FALSE(r);  // without folding the shape operands are unknown
  EXPECT_NE(r.status().message().find("stablehlo.dynamic_broadcast_in_dim"), std::string::npos) << r.status().message();
}

// A device compiler folds shapes, not data: with replaceFoldedOps off, the constant iota and pad
// stay ops (now static) and only get_dimension_size becomes a constant.
TEST(RefineShapes, FoldedDataOpsCanStayOps) {
  Module m = parse(R"(module {
  func.func @main() -> (tensor<3x4xi64>, tensor<7x5xi64>, tensor<i32>) {
    %shape = stablehlo.constant dense<[3, 4]> : tensor<2xi64>
    %iota = stablehlo.dynamic_iota %shape, dim = 1 : (tensor<2xi64>) -> tensor<3x4xi64>
    %operand = stablehlo.constant dense<1> : tensor<5x4xi64>
    %pv = stablehlo.constant dense<-1> : tensor<i64>
    %low = stablehlo.constant dense<[1, -1]> : tensor<2xi64>
    %high = stablehlo.constant dense<[1, -1]> : tensor<2xi64>
    %interior = stablehlo.constant dense<[0, 1]> : tensor<2xi64>
    %pad = stablehlo.dynamic_pad %operand, %pv, %low, %high, %interior
      : (tensor<5x4xi64>, tensor<i64>, tensor<2xi64>, tensor<2xi64>, tensor<2xi64>) -> tensor<7x5xi64>
    %size = stablehlo.get_dimension_size %pad, dim = 1 : (tensor<7x5xi64>) -> tensor<i32>
    func.return %iota, %pad, %size : tensor<3x4xi64>, tensor<7x5xi64>, tensor<i32>
  }
})");
  EXPECT_TRUE(needsShapeRefinement(m, "main"));
  RefineShapesOptions options;
  options.replaceFoldedOps = false;
  auto kept = refineShapes(m, "main", {}, options);
  ASSERT_TRUE(kept) << kept.status().toString();
  const std::string printed = printModule(**kept);
  EXPECT_NE(printed.find("stablehlo.iota"), std::string::npos) << printed;
  EXPECT_NE(printed.find("stablehlo.pad"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("dynamic_"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("get_dimension_size"), std::string::npos) << printed;
  EXPECT_FALSE(needsShapeRefinement(**kept, "main"));

  // Both forms compute what the dynamic program computes.
  auto folded = refineShapes(m, "main", {});
  ASSERT_TRUE(folded) << folded.status().toString();
  EXPECT_EQ(printModule(**folded).find("stablehlo.iota"), std::string::npos);
  EvalContext ctx;
  auto want = Interpreter::callFunction(*m.lookupFunction("main"), {}, ctx);
  ASSERT_TRUE(want) << want.status().toString();
  for (const Module* r : {kept->get(), folded->get()}) {
    EvalContext rctx;
    auto got = Interpreter::callFunction(*r->lookupFunction("main"), {}, rctx);
    ASSERT_TRUE(got) << got.status().toString();
    ASSERT_EQ(got->size(), want->size());
    for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*got)[i].bitwiseEqual((*want)[i])) << "result #" << i;
  }
}

TEST(RefineShapes, StaticProgramsNeedNoRefinement) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = func.call @f(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }
  func.func private @f(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
    %y = stablehlo.tanh %x : tensor<2x3xf32>
    func.return %y : tensor<2x3xf32>
  }
  func.func @g(%x: tensor<2x3xf32>) -> tensor<i32> {
    %y = func.call @h(%x) : (tensor<2x3xf32>) -> tensor<i32>
    func.return %y : tensor<i32>
  }
  func.func private @h(%x: tensor<2x3xf32>) -> tensor<i32> {
    %s = stablehlo.get_dimension_size %x, dim = 0 : (tensor<2x3xf32>) -> tensor<i32>
    func.return %s : tensor<i32>
  }
})");
  EXPECT_FALSE(needsShapeRefinement(m, "main"));
  EXPECT_TRUE(needsShapeRefinement(m, "g"));  // through the call
  EXPECT_FALSE(needsShapeRefinement(m, "missing"));
}

// A while loop carrying a dynamic tensor, with a value from the enclosing scope in its body,
// and an if whose branches return dynamic tensors.
const char* kWhile = R"(module {
  func.func @main(%x: tensor<?x3xf32>, %p: tensor<i1>) -> (tensor<?x3xf32>, tensor<i64>, tensor<?xf32>) {
    %i0 = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %w:2 = "stablehlo.while"(%i0, %x) ({
    ^bb0(%i: tensor<i64>, %a: tensor<?x3xf32>):
      %lim = "stablehlo.constant"() {value = dense<3> : tensor<i64>} : () -> tensor<i64>
      %c = "stablehlo.compare"(%i, %lim) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i64>, tensor<i64>) -> tensor<i1>
      "stablehlo.return"(%c) : (tensor<i1>) -> ()
    }, {
    ^bb0(%i: tensor<i64>, %a: tensor<?x3xf32>):
      %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
      %i2 = "stablehlo.add"(%i, %one) : (tensor<i64>, tensor<i64>) -> tensor<i64>
      %t = "stablehlo.tanh"(%a) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      %a2 = "stablehlo.add"(%t, %x) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
      "stablehlo.return"(%i2, %a2) : (tensor<i64>, tensor<?x3xf32>) -> ()
    }) : (tensor<i64>, tensor<?x3xf32>) -> (tensor<i64>, tensor<?x3xf32>)
    %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
    %s = "stablehlo.reduce"(%w#1, %zero) ({
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %sum = "stablehlo.add"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%sum) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 1>} : (tensor<?x3xf32>, tensor<f32>) -> tensor<?xf32>
    %sel = "stablehlo.if"(%p) ({
      %n = "stablehlo.negate"(%s) : (tensor<?xf32>) -> tensor<?xf32>
      "stablehlo.return"(%n) : (tensor<?xf32>) -> ()
    }, {
      "stablehlo.return"(%s) : (tensor<?xf32>) -> ()
    }) : (tensor<i1>) -> tensor<?xf32>
    "func.return"(%w#1, %w#0, %sel) : (tensor<?x3xf32>, tensor<i64>, tensor<?xf32>) -> ()
  }
})";

TEST(RefineShapes, WhileAndIfRegionsFollowTheirOperands) {
  Module m = parse(kWhile);
  std::string printed = checkRefinement(m, {1, 4, 6});
  EXPECT_NE(printed.find("tensor<6x3xf32>"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("?"), std::string::npos) << printed;
}

// A private callee with its own shape computation, called twice (and once through a nested
// call), is inlined and refined at each call site.
const char* kCall = R"(module {
  func.func private @scale(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %d = "stablehlo.get_dimension_size"(%a) {dimension = 0 : i64} : (tensor<?x3xf32>) -> tensor<i32>
    %d1 = "stablehlo.reshape"(%d) : (tensor<i32>) -> tensor<1xi32>
    %c3 = "stablehlo.constant"() {value = dense<3> : tensor<1xi32>} : () -> tensor<1xi32>
    %shape = "stablehlo.concatenate"(%d1, %c3) {dimension = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %half = "stablehlo.constant"() {value = dense<0.5> : tensor<f32>} : () -> tensor<f32>
    %h = "stablehlo.dynamic_broadcast_in_dim"(%half, %shape) {broadcast_dimensions = array<i64>} : (tensor<f32>, tensor<2xi32>) -> tensor<?x3xf32>
    %r = "stablehlo.multiply"(%a, %h) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%r) : (tensor<?x3xf32>) -> ()
  }
  func.func private @twice(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = "func.call"(%a) {callee = @scale} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %1 = "func.call"(%0) {callee = @scale} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%1) : (tensor<?x3xf32>) -> ()
  }
  func.func @main(%x: tensor<?x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>) {
    %0 = "func.call"(%x) {callee = @scale} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %1 = "func.call"(%0) {callee = @twice} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%0, %1) : (tensor<?x3xf32>, tensor<?x3xf32>) -> ()
  }
})";

TEST(RefineShapes, CallsAreInlined) {
  Module m = parse(kCall);
  std::string printed = checkRefinement(m, {1, 2, 7});
  EXPECT_EQ(printed.find("func.call"), std::string::npos) << printed;
  auto r = refineShapes(m, "main", withBatch(m, "main", 2));
  ASSERT_TRUE(r);
  EXPECT_EQ((*r)->functions().size(), 1u);
}

// The exporter's output for a dynamic batch (python/warpforge export with dynamic_batch=True),
// locations stripped: an MLP, a module exercising dynamic_gather / dynamic_pad / dynamic_iota /
// real_dynamic_slice, a small CNN, an embedding model, an LSTM and a small BERT.
class RefineExportedTest : public ::testing::TestWithParam<std::string> {};

TEST_P(RefineExportedTest, MatchesTheDynamicProgram) {
  std::string path = std::string(WF_SOURCE_DIR) + "/tests/unit/data/refine_shapes/" + GetParam() + ".mlir";
  std::string text = readFile(path);
  ASSERT_FALSE(text.empty()) << path;
  Module m = parse(text, path);
  std::string where;
  ASSERT_FALSE(hasOnlyStaticTypes(m, &where)) << "the fixture should have a dynamic batch";
  std::string printed = checkRefinement(m, {1, 2, 5});
  EXPECT_EQ(printed.find("stablehlo.dynamic_"), std::string::npos) << GetParam();
  EXPECT_EQ(printed.find("stablehlo.real_dynamic_slice"), std::string::npos) << GetParam();
  EXPECT_EQ(printed.find("get_dimension_size"), std::string::npos) << GetParam();
}

INSTANTIATE_TEST_SUITE_P(Exported, RefineExportedTest,
                         ::testing::Values("mlp", "dynamic_ops", "convnet", "embednet", "lstm", "bert_small"));

TEST(RefineShapes, PackageFixture) {
  std::string path = std::string(WF_SOURCE_DIR) + "/tests/data/packages/dyn/model.mlir";
  Module m = parse(readFile(path), path);
  checkRefinement(m, {1, 3, 64});
}

// dynamic_conv with a constant padding operand becomes a convolution; the batch flows through.
TEST(RefineShapes, DynamicConvBecomesConvolution) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?x2x9xf32>, %w: tensor<3x2x3xf32>) -> tensor<?x3x5xf32> {
    %pad = "stablehlo.constant"() {value = dense<[[1, 1]]> : tensor<1x2xi64>} : () -> tensor<1x2xi64>
    %0 = "stablehlo.dynamic_conv"(%x, %w, %pad) {dimension_numbers = #stablehlo.conv<[b, f, 0]x[o, i, 0]->[b, f, 0]>, window_strides = array<i64: 2>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (tensor<?x2x9xf32>, tensor<3x2x3xf32>, tensor<1x2xi64>) -> tensor<?x3x5xf32>
    "func.return"(%0) : (tensor<?x3x5xf32>) -> ()
  }
})");
  std::string printed = checkRefinement(m, {1, 3});
  EXPECT_NE(printed.find("\"stablehlo.convolution\""), std::string::npos) << printed;
  EXPECT_EQ(printed.find("dynamic_conv"), std::string::npos) << printed;
}

// A module that is already static refines to itself when nothing is folded or removed.
TEST(RefineShapes, StaticModuleIsUnchanged) {
  std::string path = std::string(WF_SOURCE_DIR) + "/tests/data/packages/mlp/model.mlir";
  Module m = parse(readFile(path), path);
  std::vector<Type> types;
  for (const auto& arg : FuncOp(m.lookupFunction("main")).body().arguments()) types.push_back(arg->type());
  RefineShapesOptions options;
  options.foldConstants = false;
  options.removeDeadOps = false;
  auto r = refineShapes(m, "main", types, options);
  ASSERT_TRUE(r) << r.status().toString();
  std::string why;
  EXPECT_TRUE(modulesEquivalent(m, **r, &why)) << why;
}

// More ops with a dynamic dimension: case, composite (inlined through its decomposition), sort,
// tuples, dynamic_update_slice, reduce_window, dot_general with a batch, chlo broadcasting.
const char* kMixed = R"(module {
  func.func private @double(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = "stablehlo.add"(%a, %a) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%0) : (tensor<?x3xf32>) -> ()
  }
  func.func @main(%x: tensor<?x3xf32>, %i: tensor<i32>, %b: tensor<3xf32>, %m: tensor<?x3x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x3x3xf32>, tensor<?x3xf32>) {
    %c = "stablehlo.case"(%i) ({
      %n = "stablehlo.negate"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      "stablehlo.return"(%n) : (tensor<?x3xf32>) -> ()
    }, {
      %e = "stablehlo.exponential"(%x) : (tensor<?x3xf32>) -> tensor<?x3xf32>
      "stablehlo.return"(%e) : (tensor<?x3xf32>) -> ()
    }) : (tensor<i32>) -> tensor<?x3xf32>
    %d = "stablehlo.composite"(%c) {name = "test.double", decomposition = @double} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %s = "stablehlo.sort"(%x) ({
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %lt = "stablehlo.compare"(%l, %r) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }) {dimension = 0 : i64, is_stable = true} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %t = "stablehlo.tuple"(%s, %d) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tuple<tensor<?x3xf32>, tensor<?x3xf32>>
    %t0 = "stablehlo.get_tuple_element"(%t) {index = 0 : i32} : (tuple<tensor<?x3xf32>, tensor<?x3xf32>>) -> tensor<?x3xf32>
    %zero = "stablehlo.constant"() {value = dense<0> : tensor<i64>} : () -> tensor<i64>
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i64>} : () -> tensor<i64>
    %upd = "stablehlo.slice"(%b) {start_indices = array<i64: 0>, limit_indices = array<i64: 2>, strides = array<i64: 1>} : (tensor<3xf32>) -> tensor<2xf32>
    %upd2 = "stablehlo.reshape"(%upd) : (tensor<2xf32>) -> tensor<1x2xf32>
    %u = "stablehlo.dynamic_update_slice"(%t0, %upd2, %zero, %one) : (tensor<?x3xf32>, tensor<1x2xf32>, tensor<i64>, tensor<i64>) -> tensor<?x3xf32>
    %ninf = "stablehlo.constant"() {value = dense<0xFF800000> : tensor<f32>} : () -> tensor<f32>
    %rw = "stablehlo.reduce_window"(%u, %ninf) ({
    ^bb0(%l: tensor<f32>, %r: tensor<f32>):
      %mx = "stablehlo.maximum"(%l, %r) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%mx) : (tensor<f32>) -> ()
    }) {window_dimensions = array<i64: 1, 2>} : (tensor<?x3xf32>, tensor<f32>) -> tensor<?x2xf32>
    %mm = "stablehlo.dot_general"(%m, %m) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>} : (tensor<?x3x3xf32>, tensor<?x3x3xf32>) -> tensor<?x3x3xf32>
    %bc = "chlo.broadcast_add"(%x, %b) : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>
    "func.return"(%d, %s, %u, %rw, %mm, %bc) : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x2xf32>, tensor<?x3x3xf32>, tensor<?x3xf32>) -> ()
  }
})";

TEST(RefineShapes, MoreOpsWithADynamicBatch) {
  Module m = parse(kMixed);
  std::string printed = checkRefinement(m, {1, 2, 6});
  EXPECT_EQ(printed.find("composite"), std::string::npos) << printed;
  EXPECT_EQ(printed.find("?"), std::string::npos) << printed;
}

// Composites a backend has a kernel for stay whole (RefineShapesOptions::keepComposite), each
// calling its decomposition refined to its operand types: two batch sizes in one program give
// two refined functions; other composites are inlined as before.
const char* kKeptComposites = R"(module {
  func.func private @scale2(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = "stablehlo.add"(%a, %a) : (tensor<?x3xf32>, tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%0) : (tensor<?x3xf32>) -> ()
  }
  func.func private @negate(%a: tensor<?x3xf32>) -> tensor<?x3xf32> {
    %0 = "stablehlo.negate"(%a) : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%0) : (tensor<?x3xf32>) -> ()
  }
  func.func @main(%x: tensor<?x3xf32>, %y: tensor<2x3xf32>) -> (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) {
    %a = "stablehlo.composite"(%x) {name = "test.kept", decomposition = @scale2, version = 0 : i32} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %b = "stablehlo.composite"(%y) {name = "test.kept", decomposition = @scale2} : (tensor<2x3xf32>) -> tensor<?x3xf32>
    %c = "stablehlo.composite"(%a) {name = "test.inlined", decomposition = @negate} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    %d = "stablehlo.composite"(%c) {name = "test.kept", decomposition = @scale2} : (tensor<?x3xf32>) -> tensor<?x3xf32>
    "func.return"(%a, %b, %d) : (tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>) -> ()
  }
})";

TEST(RefineShapes, KeepsCompositesWithTheirRefinedDecompositions) {
  Module m = parse(kKeptComposites);
  const std::vector<Type> types = {tensor({5, 3}), tensor({2, 3})};
  RefineShapesOptions options;
  options.keepComposite = [](std::string_view name) { return name == "test.kept"; };
  auto refined = refineShapes(m, "main", types, options);
  ASSERT_TRUE(refined) << refined.status().toString();
  const Module& r = **refined;
  ASSERT_TRUE(verifyModule(r).isOk()) << printModule(r);
  std::string where;
  EXPECT_TRUE(hasOnlyStaticTypes(r, &where)) << where;
  // One refined @scale2 per signature: 5x3 (used twice) and 2x3.
  const Operation* five = r.lookupFunction("scale2");
  const Operation* two = r.lookupFunction("scale2_1");
  ASSERT_TRUE(five && two) << printModule(r);
  EXPECT_EQ(FuncOp(five).functionType().inputs, std::vector<Type>{tensor({5, 3})});
  EXPECT_EQ(FuncOp(two).functionType().inputs, std::vector<Type>{tensor({2, 3})});
  EXPECT_EQ(r.lookupFunction("negate"), nullptr);
  int kept = 0, negates = 0;
  for (const auto& op : FuncOp(r.lookupFunction("main")).body().operations()) {
    if (op->code() == OpCode::Composite) {
      ++kept;
      EXPECT_EQ(op->attr("name")->stringValue(), "test.kept");
      EXPECT_TRUE(op->result(0)->type().hasStaticShape());
    }
    negates += op->code() == OpCode::Negate;
  }
  EXPECT_EQ(kept, 3);
  EXPECT_EQ(negates, 1);  // test.inlined
  // The same results as the dynamic program.
  std::mt19937 rng(7);
  std::vector<Literal> args;
  for (const Type& t : types) args.push_back(randomLiteral(t, rng));
  auto want = runEntry(m, "main", args);
  auto got = runEntry(r, "main", args);
  ASSERT_TRUE(want && got);
  ASSERT_EQ(want->size(), got->size());
  for (size_t i = 0; i < want->size(); ++i) EXPECT_TRUE((*want)[i].bitwiseEqual((*got)[i])) << "output " << i;
  // Printed and parsed back, the module is the same.
  auto reparsed = parseModule(printModule(r), {"refined.mlir", 1});
  ASSERT_TRUE(reparsed) << reparsed.status().toString();
  EXPECT_TRUE(verifyModule(*reparsed).isOk());
}

// A JAX export with a symbolic batch (jax.export, shape polymorphism): the dimension variable
// goes to the wrapped function as an argument, and a shape assertion guards it. The assertion
// is checked and dropped; the result runs on the CPU interpreter (which has no shape_assertion).
TEST(RefineShapes, JaxShapePolymorphism) {
  std::string path = std::string(WF_SOURCE_DIR) + "/tests/data/jax/shape_poly.mlir";
  Module m = parse(readFile(path), path);
  for (int64_t b : {1, 4}) {
    auto r = refineShapes(m, "main", std::vector<Type>{tensor({b, 3})});
    ASSERT_TRUE(r) << r.status().toString();
    std::string printed = printModule(**r);
    EXPECT_EQ(printed.find("shape_assertion"), std::string::npos) << printed;
    std::string where;
    EXPECT_TRUE(hasOnlyStaticTypes(**r, &where)) << where;
    std::mt19937 rng(5);
    Literal x = randomLiteral(tensor({b, 3}), rng);
    auto out = runEntry(**r, "main", {x});
    ASSERT_TRUE(out) << out.status().toString();
    ASSERT_EQ(out->size(), 3u);
    EXPECT_EQ((*out)[1].type(), tensor({2 * b, 3}));
    EXPECT_EQ((*out)[2].type(), tensor({3 * b}));
    for (int64_t j = 0; j < 3; ++j) {
      double sum = 0;
      for (int64_t i = 0; i < b; ++i) sum += x.getDouble(i * 3 + j);
      EXPECT_NEAR((*out)[0].getDouble(j), sum, 1e-5);
    }
    for (int64_t k = 0; k < 3 * b; ++k) {
      EXPECT_EQ((*out)[2].getDouble(k), x.getDouble(k));
      EXPECT_EQ((*out)[1].getDouble(k + 3 * b), x.getDouble(k));
    }
  }
  // b = 0 violates the export's `b >= 1`.
  std::string e = refineError(m, {tensor({0, 3})});
  EXPECT_NE(e.find("shape assertion failed"), std::string::npos) << e;
  EXPECT_NE(e.find("'b' = 0 from specification"), std::string::npos) << e;
}

// Collectives that change shapes: the group size comes from replica_groups.
TEST(RefineShapes, CollectivesScaleByTheGroupSize) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?x4xf32>) -> (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x8xf32>) {
    %g = "stablehlo.all_gather"(%x) {all_gather_dim = 0 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<?x4xf32>) -> tensor<?x4xf32>
    %r = "stablehlo.reduce_scatter"(%x) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = "stablehlo.add"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {scatter_dimension = 1 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<?x4xf32>) -> tensor<?x2xf32>
    %t = "stablehlo.all_to_all"(%x) {split_dimension = 0 : i64, concat_dimension = 1 : i64, split_count = 2 : i64, replica_groups = dense<[[0, 1]]> : tensor<1x2xi64>} : (tensor<?x4xf32>) -> tensor<?x8xf32>
    "func.return"(%g, %r, %t) : (tensor<?x4xf32>, tensor<?x2xf32>, tensor<?x8xf32>) -> ()
  }
})");
  std::vector<Type> args = {tensor({6, 4})};
  auto r = refineShapes(m, "main", args);
  ASSERT_TRUE(r) << r.status().toString();
  FunctionType ft = FuncOp((*r)->lookupFunction("main")).functionType();
  EXPECT_EQ(ft.results, (std::vector<Type>{tensor({12, 4}), tensor({6, 2}), tensor({3, 8})}));
  // The same values as the dynamic program on two replicas.
  std::mt19937 rng(3);
  Literal x = randomLiteral(args[0], rng);
  auto want = Interpreter::runGrid(*m.lookupFunction("main"), {x}, m, 2, 1, nullptr);
  auto got = Interpreter::runGrid(*(*r)->lookupFunction("main"), {x}, **r, 2, 1, nullptr);
  ASSERT_TRUE(want) << want.status().toString();
  ASSERT_TRUE(got) << got.status().toString();
  ASSERT_EQ(want->size(), got->size());
  for (size_t p = 0; p < want->size(); ++p)
    for (size_t i = 0; i < (*want)[p].size(); ++i) EXPECT_TRUE((*want)[p][i].bitwiseEqual((*got)[p][i])) << p << " " << i;
}

// ---------------------------------------------------------------------------------------------
// Errors.

TEST(RefineShapesErrors, ArgumentTypesMustFitTheDeclaredOnes) {
  Module m = parse(kShapeOps);
  std::string e = refineError(m, {tensor({2, 4, 1}), tensor({4})});
  EXPECT_NE(e.find("argument #0"), std::string::npos) << e;
  EXPECT_NE(e.find("rank"), std::string::npos) << e;

  e = refineError(m, {tensor({2, 4}, ElementType::kF64), tensor({4})});
  EXPECT_NE(e.find("element type f64"), std::string::npos) << e;

  e = refineError(m, {tensor({2, 5}), tensor({4})});
  EXPECT_NE(e.find("static dimension 1 differs"), std::string::npos) << e;
  EXPECT_NE(e.find("func.func"), std::string::npos) << e;

  e = refineError(m, {tensor({2, 4})});
  EXPECT_NE(e.find("takes 2 arguments, 1 types were given"), std::string::npos) << e;

  e = refineError(m, {tensor({kDynamic, 4}), tensor({4})});
  EXPECT_NE(e.find("not static"), std::string::npos) << e;

  auto r = refineShapes(m, "nope", std::vector<Type>{});
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kNotFound);
}

TEST(RefineShapesErrors, ShapeOperandFromARunTimeValue) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?xf32>, %s: tensor<2xi64>) -> tensor<?x?xf32> {
    %0 = "stablehlo.dynamic_reshape"(%x, %s) : (tensor<?xf32>, tensor<2xi64>) -> tensor<?x?xf32>
    "func.return"(%0) : (tensor<?x?xf32>) -> ()
  }
})");
  std::string e = refineError(m, {tensor({6}), tensor({2}, ElementType::kSI64)});
  EXPECT_NE(e.find("stablehlo.dynamic_reshape"), std::string::npos) << e;
  EXPECT_NE(e.find("test.mlir:3:"), std::string::npos) << e;
  EXPECT_NE(e.find("output_shape"), std::string::npos) << e;
  EXPECT_NE(e.find("compile time"), std::string::npos) << e;
}

TEST(RefineShapesErrors, InconsistentShapes) {
  // [d, 5] elements cannot hold the d * 4 elements of %x.
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?x4xf32>) -> tensor<?x5xf32> {
    %d = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?x4xf32>) -> tensor<i32>
    %d1 = "stablehlo.reshape"(%d) : (tensor<i32>) -> tensor<1xi32>
    %c5 = "stablehlo.constant"() {value = dense<5> : tensor<1xi32>} : () -> tensor<1xi32>
    %shape = "stablehlo.concatenate"(%d1, %c5) {dimension = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %0 = "stablehlo.dynamic_reshape"(%x, %shape) : (tensor<?x4xf32>, tensor<2xi32>) -> tensor<?x5xf32>
    "func.return"(%0) : (tensor<?x5xf32>) -> ()
  }
})");
  std::string e = refineError(m, {tensor({3, 4})});
  EXPECT_NE(e.find("stablehlo.dynamic_reshape"), std::string::npos) << e;
  EXPECT_NE(e.find("test.mlir:7:"), std::string::npos) << e;

  // A folded shape that contradicts a static declared dimension.
  Module m2 = parse(R"(module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?x2xf32> {
    %d = "stablehlo.get_dimension_size"(%x) {dimension = 0 : i64} : (tensor<?xf32>) -> tensor<i32>
    %d1 = "stablehlo.reshape"(%d) : (tensor<i32>) -> tensor<1xi32>
    %shape = "stablehlo.concatenate"(%d1, %d1) {dimension = 0 : i64} : (tensor<1xi32>, tensor<1xi32>) -> tensor<2xi32>
    %0 = "stablehlo.dynamic_broadcast_in_dim"(%x, %shape) {broadcast_dimensions = array<i64: 0>} : (tensor<?xf32>, tensor<2xi32>) -> tensor<?x2xf32>
    "func.return"(%0) : (tensor<?x2xf32>) -> ()
  }
})");
  e = refineError(m2, {tensor({3})});
  EXPECT_NE(e.find("stablehlo.dynamic_broadcast_in_dim"), std::string::npos) << e;
  EXPECT_NE(e.find("declared tensor<?x2xf32>"), std::string::npos) << e;
  EXPECT_TRUE(refineShapes(m2, "main", std::vector<Type>{tensor({2})}));
}

TEST(RefineShapesErrors, NegativeSize) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %s = "stablehlo.constant"() {value = dense<-2> : tensor<1xi64>} : () -> tensor<1xi64>
    %0 = "stablehlo.dynamic_iota"(%s) {iota_dimension = 0 : i64} : (tensor<1xi64>) -> tensor<?xf32>
    "func.return"(%0) : (tensor<?xf32>) -> ()
  }
})");
  std::string e = refineError(m, {tensor({2})});
  EXPECT_NE(e.find("'stablehlo.dynamic_iota' at test.mlir:4:"), std::string::npos) << e;
  EXPECT_NE(e.find("negative size"), std::string::npos) << e;
}

TEST(RefineShapesErrors, LoopCarriedShapeThatGrows) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %w = "stablehlo.while"(%x) ({
    ^bb0(%a: tensor<?xf32>):
      %t = "stablehlo.constant"() {value = dense<false> : tensor<i1>} : () -> tensor<i1>
      "stablehlo.return"(%t) : (tensor<i1>) -> ()
    }, {
    ^bb0(%a: tensor<?xf32>):
      %g = "stablehlo.concatenate"(%a, %a) {dimension = 0 : i64} : (tensor<?xf32>, tensor<?xf32>) -> tensor<?xf32>
      "stablehlo.return"(%g) : (tensor<?xf32>) -> ()
    }) : (tensor<?xf32>) -> tensor<?xf32>
    "func.return"(%w) : (tensor<?xf32>) -> ()
  }
})");
  std::string e = refineError(m, {tensor({2})});
  EXPECT_NE(e.find("stablehlo.while"), std::string::npos) << e;
  EXPECT_NE(e.find("shape changes"), std::string::npos) << e;
}

TEST(RefineShapesErrors, RecursiveCall) {
  Module m = parse(R"(module {
  func.func @main(%x: tensor<?xf32>) -> tensor<?xf32> {
    %0 = "func.call"(%x) {callee = @main} : (tensor<?xf32>) -> tensor<?xf32>
    "func.return"(%0) : (tensor<?xf32>) -> ()
  }
})");
  std::string e = refineError(m, {tensor({2})});
  EXPECT_NE(e.find("recursive"), std::string::npos) << e;
  EXPECT_NE(e.find("func.call"), std::string::npos) << e;
}

TEST(RefineShapes, ParseTypeList) {
  auto t = parseTypeList("tensor<4x128xi64>, tensor<f32>,tensor<?x2xbf16>");
  ASSERT_TRUE(t) << t.status().toString();
  ASSERT_EQ(t->size(), 3u);
  EXPECT_EQ((*t)[0], tensor({4, 128}, ElementType::kSI64));
  EXPECT_EQ((*t)[1], tensor({}));
  EXPECT_EQ((*t)[2], tensor({kDynamic, 2}, ElementType::kBF16));
  EXPECT_FALSE(parseTypeList("tensor<4xq>"));
  EXPECT_FALSE(parseTypeList("4x128"));
}

}  // namespace
}  // namespace wf
