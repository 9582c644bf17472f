// Printer tests on hand-built IR: exact text for ops, functions, regions and every attribute
// kind; exactness of printed floats (checked by reading the digits back with strtod); and
// modulesEquivalent's verdicts.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <random>
#include <regex>

#include "ir/printer.h"
#include "ir_test_helpers.h"
#include "ir/float_types.h"

namespace wf {
namespace {

using irtest::addBlockRegion;
using irtest::addFunction;
using irtest::BlockBuilder;
using irtest::entry;
using irtest::t;

Literal literalOf(Type type, const std::vector<double>& values) {
  Literal l = Literal::zeros(type);
  for (size_t i = 0; i < values.size(); ++i) l.setDouble(static_cast<int64_t>(i), values[i]);
  return l;
}

TEST(PrinterAttributes, Scalars) {
  EXPECT_EQ(printAttribute(Attribute::unit()), "unit");
  EXPECT_EQ(printAttribute(Attribute::boolean(true)), "true");
  EXPECT_EQ(printAttribute(Attribute::boolean(false)), "false");
  EXPECT_EQ(printAttribute(Attribute::integer(-3)), "-3");
  EXPECT_EQ(printAttribute(Attribute::integer(7, ElementType::kSI32)), "7 : i32");
  EXPECT_EQ(printAttribute(Attribute::integer(-1, ElementType::kUI64)), "18446744073709551615 : ui64");
  EXPECT_EQ(printAttribute(Attribute::floating(1.5, ElementType::kF32)), "1.5 : f32");
  EXPECT_EQ(printAttribute(Attribute::floating(2.0, ElementType::kF64)), "2.0 : f64");
  EXPECT_EQ(printAttribute(Attribute::floating(1e-5, ElementType::kF32)), "1.0e-05 : f32");
  EXPECT_EQ(printAttribute(Attribute::floating(NAN, ElementType::kF32)), "0x7FC00000 : f32");
  EXPECT_EQ(printAttribute(Attribute::floating(-INFINITY, ElementType::kF64)), "0xFFF0000000000000 : f64");
  EXPECT_EQ(printAttribute(Attribute::floating(INFINITY, ElementType::kBF16)), "0x7F80 : bf16");
  EXPECT_EQ(printAttribute(Attribute::string("a\"b\\c\nd\x01")), "\"a\\\"b\\\\c\\nd\\01\"");
  EXPECT_EQ(printAttribute(Attribute::symbolRef("main")), "@main");
  EXPECT_EQ(printAttribute(Attribute::symbolRef("add_n.impl")), "@add_n.impl");
  EXPECT_EQ(printAttribute(Attribute::symbolRef("has space")), "@\"has space\"");
  EXPECT_EQ(printAttribute(Attribute::opaque("#foo.bar<1>")), "#foo.bar<1>");
}

TEST(PrinterAttributes, TypesAndContainers) {
  EXPECT_EQ(printAttribute(Attribute::type(t({2, kDynamic}, ElementType::kBF16))), "tensor<2x?xbf16>");
  EXPECT_EQ(printAttribute(Attribute::functionType(FunctionType{{t({})}, {t({}), Type::token()}})),
            "(tensor<f32>) -> (tensor<f32>, !stablehlo.token)");
  EXPECT_EQ(printAttribute(Attribute::array({Attribute::integer(1), Attribute::string("x"), Attribute::array({})})),
            "[1, \"x\", []]");
  EXPECT_EQ(printAttribute(Attribute::denseArray(ElementType::kSI64, {1, -2})), "array<i64: 1, -2>");
  EXPECT_EQ(printAttribute(Attribute::denseArray(ElementType::kSI64, {})), "array<i64>");
  EXPECT_EQ(printAttribute(Attribute::denseArray(ElementType::kI1, {1, 0})), "array<i1: true, false>");
  EXPECT_EQ(printAttribute(Attribute::denseFloatArray(ElementType::kF32, {0.5, 3})), "array<f32: 0.5, 3.0>");
  // Dictionaries print sorted by key; unit entries as bare keys.
  EXPECT_EQ(printAttribute(Attribute::dictionary({{"zeta", Attribute::integer(1)}, {"alpha", Attribute::unit()},
                                                  {"mhlo.sharding", Attribute::string("{replicated}")}})),
            "{alpha, mhlo.sharding = \"{replicated}\", zeta = 1}");
  EXPECT_EQ(printAttribute(Attribute::enumValue("stablehlo", "comparison_direction", "EQ")),
            "#stablehlo<comparison_direction EQ>");
  EXPECT_EQ(printAttribute(Attribute::dialectStruct(
                "stablehlo.dot", {{"lhs_batching_dimensions", irtest::intList({0})},
                                  {"rhs_batching_dimensions", irtest::intList({0})},
                                  {"lhs_contracting_dimensions", irtest::intList({2})},
                                  {"rhs_contracting_dimensions", irtest::intList({1})}})),
            "#stablehlo.dot<lhs_batching_dimensions = [0], rhs_batching_dimensions = [0], "
            "lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>");
  EXPECT_EQ(printAttribute(Attribute::dialectStruct(
                "stablehlo.conv", {{"input_batch_dimension", Attribute::integer(0)},
                                   {"input_feature_dimension", Attribute::integer(3)},
                                   {"input_spatial_dimensions", irtest::intList({1, 2})}})),
            "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 3, "
            "input_spatial_dimensions = [1, 2]>");
}

TEST(PrinterAttributes, DenseIntegersAndBools) {
  Literal l = Literal::zeros(t({2, 3}, ElementType::kSI32));
  for (int i = 0; i < 6; ++i) l.setInt(i, i - 2);
  EXPECT_EQ(printAttribute(Attribute::denseElements(l)), "dense<[[-2, -1, 0], [1, 2, 3]]> : tensor<2x3xi32>");
  Literal splat = Literal::zeros(t({4}, ElementType::kUI8));
  for (int i = 0; i < 4; ++i) splat.setInt(i, 255);
  EXPECT_EQ(printAttribute(Attribute::denseElements(splat)), "dense<255> : tensor<4xui8>");
  Literal scalar = Literal::scalarInt(ElementType::kSI4, -8);
  EXPECT_EQ(printAttribute(Attribute::denseElements(scalar)), "dense<-8> : tensor<i4>");
  Literal bools = Literal::zeros(t({3}, ElementType::kI1));
  bools.setInt(1, 1);
  EXPECT_EQ(printAttribute(Attribute::denseElements(bools)), "dense<[false, true, false]> : tensor<3xi1>");
  Literal big = Literal::zeros(t({2}, ElementType::kUI64));
  big.setInt(0, -1);
  EXPECT_EQ(printAttribute(Attribute::denseElements(big)), "dense<[18446744073709551615, 0]> : tensor<2xui64>");
  EXPECT_EQ(printAttribute(Attribute::denseElements(Literal::zeros(t({0, 3})))), "dense<> : tensor<0x3xf32>");
}

TEST(PrinterAttributes, DenseFloats) {
  EXPECT_EQ(printAttribute(Attribute::denseElements(literalOf(t({3}), {1, 0.1, -2.5e10}))),
            "dense<[1.0, 0.1, -2.5e+10]> : tensor<3xf32>");
  EXPECT_EQ(printAttribute(Attribute::denseElements(literalOf(t({2}, ElementType::kBF16), {0.1, -0.0}))),
            "dense<[0.1, -0.0]> : tensor<2xbf16>");
  EXPECT_EQ(printAttribute(Attribute::denseElements(literalOf(t({2, 2}, ElementType::kF64), {7, 7, 7, 7}))),
            "dense<7.0> : tensor<2x2xf64>");
  // A NaN anywhere switches to the raw little-endian bytes.
  EXPECT_EQ(printAttribute(Attribute::denseElements(literalOf(t({2}), {1.0, NAN}))),
            "dense<\"0x0000803F0000C07F\"> : tensor<2xf32>");
  // ... and a splat of NaN to one element's bytes.
  EXPECT_EQ(printAttribute(Attribute::denseElements(literalOf(t({3}, ElementType::kF16), {INFINITY, INFINITY, INFINITY}))),
            "dense<\"0x007C\"> : tensor<3xf16>");
  Literal c = Literal::zeros(t({2}, ElementType::kComplexF32));
  c.setComplex(0, {1.5, -2});
  c.setComplex(1, {0, 0.25});
  EXPECT_EQ(printAttribute(Attribute::denseElements(c)), "dense<[(1.5, -2.0), (0.0, 0.25)]> : tensor<2xcomplex<f32>>");
}

// The printed digits of random values read back (strtod, then rounding to the element type)
// to the very same bits: an independent check of the shortest-digits search.
TEST(PrinterAttributes, FloatDigitsAreExact) {
  std::mt19937_64 rng(42);
  for (ElementType e : {ElementType::kF32, ElementType::kF64, ElementType::kF16, ElementType::kBF16,
                        ElementType::kF8E4M3FN, ElementType::kF8E5M2}) {
    const int n = 200;
    Literal l = Literal::zeros(t({n}, e));
    for (int i = 0; i < n; ++i) {
      // Random bit patterns (finite only) cover subnormals and extreme exponents.
      uint64_t bits;
      do {
        bits = rng();
        l.setBits(i, bits);
      } while (!std::isfinite(l.getDouble(i)));
    }
    std::string text = printAttribute(Attribute::denseElements(l));
    ASSERT_EQ(text.find("\"0x"), std::string::npos) << text;
    std::regex number(R"([-+]?[0-9]+\.[0-9]*(e[-+]?[0-9]+)?)");
    int i = 0;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), number); it != std::sregex_iterator() && i < n; ++it, ++i) {
      Literal back = Literal::zeros(Type::scalar(e));
      back.setDouble(0, std::strtod(it->str().c_str(), nullptr));
      EXPECT_EQ(back.getBits(0), l.getBits(i)) << elementTypeName(e) << " element " << i << " printed as " << it->str();
    }
    EXPECT_EQ(i, n) << text.substr(0, 200);
  }
}

TEST(PrinterModule, FunctionWithGenericOps) {
  Module m;
  Operation* fn = addFunction(m, "main", {t({2}), t({2})}, {t({2})});
  BlockBuilder b(entry(fn));
  Value* sum = b.value("stablehlo.add", {entry(fn)->argument(0), entry(fn)->argument(1)}, t({2}));
  b.op("func.return", {sum}, {});
  EXPECT_EQ(printModule(m),
            "module {\n"
            "  func.func @main(%arg0: tensor<2xf32>, %arg1: tensor<2xf32>) -> tensor<2xf32> {\n"
            "    %0 = \"stablehlo.add\"(%arg0, %arg1) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>\n"
            "    \"func.return\"(%0) : (tensor<2xf32>) -> ()\n"
            "  }\n"
            "}\n");
}

TEST(PrinterModule, ModuleAttributesVisibilityArgAndResultAttributes) {
  Module m;
  m.name = "jit_f";
  m.attributes.set("mhlo.num_partitions", Attribute::integer(1, ElementType::kSI32));
  Operation* fn = addFunction(m, "f", {t({})}, {t({}), t({})});
  fn->setAttr("sym_visibility", Attribute::string("private"));
  fn->setAttr("arg_attrs", Attribute::array({Attribute::dictionary({{"jax.arg_info", Attribute::string("x")}})}));
  fn->setAttr("res_attrs", Attribute::array({Attribute::dictionary({}), Attribute::dictionary({{"jax.result_info", Attribute::string("")}})}));
  fn->setAttr("noinline", Attribute::unit());
  BlockBuilder b(entry(fn));
  b.op("func.return", {entry(fn)->argument(0), entry(fn)->argument(0)}, {});
  EXPECT_EQ(printModule(m),
            "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n"
            "  func.func private @f(%arg0: tensor<f32> {jax.arg_info = \"x\"}) -> (tensor<f32>, tensor<f32> "
            "{jax.result_info = \"\"}) attributes {noinline} {\n"
            "    \"func.return\"(%arg0, %arg0) : (tensor<f32>, tensor<f32>) -> ()\n"
            "  }\n"
            "}\n");
}

TEST(PrinterModule, MultiResultOpsAndNestedRegions) {
  Module m;
  Operation* fn = addFunction(m, "main", {t({4}), t({})}, {t({}), t({})});
  Block* body = entry(fn);
  BlockBuilder b(body);
  // A while whose regions use values from the enclosing function (%arg1) and nest a reduce.
  Operation* w = b.op("stablehlo.while", {body->argument(1), body->argument(1)}, {t({}), t({})});
  Block* cond = addBlockRegion(w, {t({}), t({})});
  BlockBuilder c(cond);
  Value* lt = c.value("stablehlo.compare", {cond->argument(0), body->argument(1)}, t({}, ElementType::kI1),
                      {{"comparison_direction", Attribute::enumValue("stablehlo", "comparison_direction", "LT")}});
  c.op("stablehlo.return", {lt}, {});
  Block* loop = addBlockRegion(w, {t({}), t({})});
  BlockBuilder l(loop);
  Operation* reduce = l.op("stablehlo.reduce", {body->argument(0), loop->argument(1)}, {t({})},
                           {{"dimensions", irtest::i64s({0})}});
  Block* reducer = addBlockRegion(reduce, {t({}), t({})});
  BlockBuilder r(reducer);
  r.op("stablehlo.return", {r.value("stablehlo.add", {reducer->argument(0), reducer->argument(1)}, t({}))}, {});
  l.op("stablehlo.return", {loop->argument(0), reduce->result(0)}, {});
  b.op("func.return", {w->result(0), w->result(1)}, {});
  EXPECT_EQ(printModule(m),
            "module {\n"
            "  func.func @main(%arg0: tensor<4xf32>, %arg1: tensor<f32>) -> (tensor<f32>, tensor<f32>) {\n"
            "    %0:2 = \"stablehlo.while\"(%arg1, %arg1) ({\n"
            "    ^bb0(%arg2: tensor<f32>, %arg3: tensor<f32>):\n"
            "      %1 = \"stablehlo.compare\"(%arg2, %arg1) {comparison_direction = #stablehlo<comparison_direction LT>} "
            ": (tensor<f32>, tensor<f32>) -> tensor<i1>\n"
            "      \"stablehlo.return\"(%1) : (tensor<i1>) -> ()\n"
            "    }, {\n"
            "    ^bb0(%arg4: tensor<f32>, %arg5: tensor<f32>):\n"
            "      %2 = \"stablehlo.reduce\"(%arg0, %arg5) ({\n"
            "      ^bb0(%arg6: tensor<f32>, %arg7: tensor<f32>):\n"
            "        %3 = \"stablehlo.add\"(%arg6, %arg7) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n"
            "        \"stablehlo.return\"(%3) : (tensor<f32>) -> ()\n"
            "      }) {dimensions = array<i64: 0>} : (tensor<4xf32>, tensor<f32>) -> tensor<f32>\n"
            "      \"stablehlo.return\"(%arg4, %2) : (tensor<f32>, tensor<f32>) -> ()\n"
            "    }) : (tensor<f32>, tensor<f32>) -> (tensor<f32>, tensor<f32>)\n"
            "    \"func.return\"(%0#0, %0#1) : (tensor<f32>, tensor<f32>) -> ()\n"
            "  }\n"
            "}\n");
}

TEST(PrinterModule, DenseResourceSectionAndLocations) {
  Module m;
  Operation* fn = addFunction(m, "main", {}, {t({2})});
  BlockBuilder b(entry(fn));
  Literal value = literalOf(t({2}), {1.0, 2.0});
  Value* c = b.value("stablehlo.constant", {}, t({2}),
                     {{"value", Attribute::denseResource("blob_1", t({2}), value)}});
  b.op("func.return", {c}, {});
  PrintOptions options;
  options.printLocations = true;
  std::string text = printModule(m, options);
  EXPECT_NE(text.find("{value = dense_resource<blob_1> : tensor<2xf32>} : () -> tensor<2xf32> loc(\"test.mlir\":"),
            std::string::npos)
      << text;
  // 4-byte alignment (4, little-endian) then the float bytes of 1.0 and 2.0.
  EXPECT_NE(text.find("{-#\n  dialect_resources: {\n    builtin: {\n      blob_1: \"0x040000000000803F00000040\"\n"
                      "    }\n  }\n#-}\n"),
            std::string::npos)
      << text;
}

TEST(PrinterModule, DeclarationAndNonFunctionTopLevelOp) {
  Module m;
  auto decl = std::make_unique<Operation>("func.func", Location{});
  decl->setAttr("sym_name", Attribute::string("extern"));
  decl->setAttr("sym_visibility", Attribute::string("private"));
  decl->setAttr("function_type", Attribute::functionType(FunctionType{{t({3})}, {}}));
  decl->addRegion();
  m.append(std::move(decl));
  EXPECT_EQ(printModule(m), "module {\n  func.func private @extern(tensor<3xf32>)\n}\n");
}

// Two identical hand-built modules; `mutate` changes the second one.
void buildPair(Module& a, Module& b) {
  for (Module* m : {&a, &b}) {
    Operation* fn = addFunction(*m, "main", {t({2}), t({2})}, {t({2})});
    BlockBuilder bb(entry(fn));
    Value* x = bb.value("stablehlo.subtract", {entry(fn)->argument(0), entry(fn)->argument(1)}, t({2}));
    Value* y = bb.value("stablehlo.constant", {}, t({2}), {{"value", Attribute::denseElements(literalOf(t({2}), {1, 2}))}});
    bb.op("func.return", {bb.value("stablehlo.multiply", {x, y}, t({2}))}, {});
  }
}

TEST(ModulesEquivalent, EqualModules) {
  Module a, b;
  buildPair(a, b);
  std::string why;
  EXPECT_TRUE(modulesEquivalent(a, b, &why)) << why;
}

TEST(ModulesEquivalent, DetectsDifferentOperandWiring) {
  Module a, b;
  buildPair(a, b);
  Operation* sub = b.operations()[0]->region(0).front().operations()[0].get();
  sub->setOperand(1, sub->operand(0));
  std::string why;
  EXPECT_FALSE(modulesEquivalent(a, b, &why));
  EXPECT_NE(why.find("operand 1"), std::string::npos) << why;
  EXPECT_NE(why.find("stablehlo.subtract"), std::string::npos) << why;
}

TEST(ModulesEquivalent, DetectsAttributeAndTypeDifferences) {
  {
    Module a, b;
    buildPair(a, b);
    Operation* c = b.operations()[0]->region(0).front().operations()[1].get();
    c->setAttr("value", Attribute::denseElements(literalOf(t({2}), {1, 3})));
    std::string why;
    EXPECT_FALSE(modulesEquivalent(a, b, &why));
    EXPECT_NE(why.find("attribute 'value' differs"), std::string::npos) << why;
  }
  {
    Module a, b;
    buildPair(a, b);
    b.operations()[0]->region(0).front().operations()[0]->result(0)->setType(t({2}, ElementType::kF64));
    std::string why;
    EXPECT_FALSE(modulesEquivalent(a, b, &why));
    EXPECT_NE(why.find("types differ"), std::string::npos) << why;
  }
}

TEST(ModulesEquivalent, IgnoresDictionaryOrderAndNames) {
  Module a, b;
  buildPair(a, b);
  a.operations()[0]->setAttr("x", Attribute::dictionary({{"p", Attribute::integer(1)}, {"q", Attribute::unit()}}));
  b.operations()[0]->setAttr("x", Attribute::dictionary({{"q", Attribute::unit()}, {"p", Attribute::integer(1)}}));
  b.operations()[0]->region(0).front().argument(0)->setNameHint("%renamed");
  std::string why;
  EXPECT_TRUE(modulesEquivalent(a, b, &why)) << why;
}

}  // namespace
}  // namespace wf
