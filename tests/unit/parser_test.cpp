// Tests of the StableHLO text parser: every syntax family, canonical attributes, error
// positions, and whole corpora (the StableHLO interpreter tests and JAX-printed modules).
#include "stablehlo/parser.h"

#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "ir/printer.h"

namespace wf {
namespace {

std::string readFile(const std::filesystem::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

Module parseOk(std::string_view text) {
  Expected<Module> m = parseModule(text, {"test.mlir", 1});
  EXPECT_TRUE(m.hasValue()) << m.status().message();
  if (!m.hasValue()) return Module();
  return std::move(m).value();
}

std::string parseErr(std::string_view text) {
  Expected<Module> m = parseModule(text, {"test.mlir", 1});
  EXPECT_FALSE(m.hasValue());
  return m.hasValue() ? std::string() : m.status().message();
}

// The ops of the first function's body.
const std::vector<std::unique_ptr<Operation>>& bodyOps(const Module& m) {
  static const std::vector<std::unique_ptr<Operation>> empty;
  auto fns = m.functions();
  if (fns.empty() || fns[0].op()->region(0).empty()) return empty;
  return fns[0].body().operations();
}

const Operation* findOp(const Module& m, std::string_view name) {
  for (const auto& op : bodyOps(m))
    if (op->name() == name) return op.get();
  return nullptr;
}

std::vector<int64_t> ints(const Operation* op, std::string_view attr) {
  if (!op) return {};
  const Attribute* a = op->attr(attr);
  if (!a) return {};
  auto v = a->asIntList();
  return v ? *v : std::vector<int64_t>{};
}

// ---------------------------------------------------------------------------------------------
// Corpora

TEST(ParserCorpus, EveryInterpretChunkParses) {
  const std::filesystem::path dir = std::filesystem::path(WF_SHARED_DIR) / "stablehlo" / "interpret";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  int total = 0, ok = 0, funcs = 0;
  std::vector<std::string> failures;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir)) {
    if (entry.path().extension() != ".mlir") continue;
    std::string text = readFile(entry.path());
    for (const SourceChunk& chunk : splitInputFile(text)) {
      ++total;
      Expected<Module> m = parseModule(chunk.text, {entry.path().string(), chunk.firstLine});
      if (m.hasValue()) {
        ++ok;
        funcs += static_cast<int>(m->functions().size());
      } else {
        failures.push_back(m.status().message());
      }
    }
  }
  std::cout << "[ parser ] interpret chunks parsed: " << ok << "/" << total << " (" << funcs
            << " functions)\n";
  for (const std::string& f : failures) std::cout << "  " << f << "\n";
  EXPECT_EQ(ok, total);
  EXPECT_GT(total, 400);
}

TEST(ParserCorpus, JaxModulesParse) {
  const std::filesystem::path dir = std::filesystem::path(WF_SOURCE_DIR) / "tests" / "data" / "jax";
  ASSERT_TRUE(std::filesystem::exists(dir)) << dir;
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".mlir") continue;
    ++count;
    std::string text = readFile(entry.path());
    Expected<Module> m = parseModule(text, {entry.path().string(), 1});
    ASSERT_TRUE(m.hasValue()) << m.status().message();
    EXPECT_FALSE(m->functions().empty()) << entry.path();
    const Operation* main = m->lookupFunction("main");
    EXPECT_NE(main, nullptr) << entry.path();
  }
  std::cout << "[ parser ] JAX modules parsed: " << count << "\n";
  EXPECT_GE(count, 5);
}


TEST(ParserCorpus, JaxModuleDetails) {
  const std::filesystem::path dir = std::filesystem::path(WF_SOURCE_DIR) / "tests" / "data" / "jax";
  auto load = [&](const char* name) {
    std::string text = readFile(dir / name);
    Expected<Module> m = parseModule(text, {name, 1});
    EXPECT_TRUE(m.hasValue()) << m.status().message();
    return m.hasValue() ? std::move(m).value() : Module();
  };
  {
    Module m = load("sharded_mhlo.mlir");
    ASSERT_NE(m.attributes.get("mhlo.num_partitions"), nullptr);
    const Operation* main = m.lookupFunction("main");
    ASSERT_NE(main, nullptr);
    const Attribute* argAttrs = main->attr("arg_attrs");
    ASSERT_NE(argAttrs, nullptr);
    EXPECT_EQ(argAttrs->elements()[0].field("mhlo.sharding")->stringValue(), "{replicated}");
    EXPECT_NE(main->attr("res_attrs")->elements()[0].field("jax.result_info"), nullptr);
  }
  {
    // Shardy's `sdy.mesh` has a custom syntax of its own: kept as an unknown op with its text.
    Module m = load("sharded_sdy.mlir");
    const Operation* mesh = m.operations()[0].get();
    EXPECT_EQ(mesh->name(), "sdy.mesh");
    EXPECT_EQ(mesh->code(), OpCode::kUnknown);
    ASSERT_NE(mesh->attr("custom_assembly"), nullptr);
    EXPECT_EQ(mesh->attr("custom_assembly")->stringValue().rfind("@mesh = <", 0), 0u);
  }
  {
    Module m = load("shape_poly.mlir");
    FunctionType ft = FuncOp(m.lookupFunction("main")).functionType();
    ASSERT_FALSE(ft.inputs.empty());
    EXPECT_FALSE(ft.inputs.back().hasStaticShape());
  }
  {
    Module m = load("conv_loc.mlir");
    const Operation* conv = nullptr;
    for (const auto& op : FuncOp(m.lookupFunction("main")).body().operations())
      if (op->code() == OpCode::Convolution) conv = op.get();
    ASSERT_NE(conv, nullptr);
    // `loc(#loc12)` resolves to the alias defined after the module.
    EXPECT_NE(conv->location().source.find("conv_general_dilated"), std::string::npos) << conv->location().source;
    EXPECT_EQ(conv->location().line, 5);
  }
}

TEST(Parser, UnknownDialectsAreKept) {
  Module m = parseOk(R"(
func.func @f(%a: tensor<?x3xf32>) {
  %c0 = arith.constant 0 : index
  %d = tensor.dim %a, %c0 : tensor<?x3xf32>
  %i = arith.index_cast %d : index to i64
  "foo.bar"(%i) ({
  ^bb0(%x: tensor<f32>):
    "foo.yield"(%x) : (tensor<f32>) -> ()
  }) {attr = #foo.thing<"x", [1, 2]>} : (none) -> ()
  func.return
})");
  const auto& ops = bodyOps(m);
  ASSERT_EQ(ops.size(), 5u);
  EXPECT_EQ(ops[0]->code(), OpCode::kUnknown);
  EXPECT_EQ(ops[0]->result(0)->type().toString(), "index");
  EXPECT_EQ(ops[2]->attr("custom_assembly")->stringValue(), "%d : index to i64");
  EXPECT_EQ(ops[3]->operand(0), ops[2]->result(0));
  EXPECT_EQ(ops[3]->attr("attr")->kind(), Attribute::Kind::kOpaque);
  EXPECT_EQ(ops[3]->region(0).front().numArguments(), 1u);
}

// ---------------------------------------------------------------------------------------------
// Syntax families

TEST(Parser, SplitInputFileKeepsLineNumbers) {
  std::string text = "func.func @a() {\n  func.return\n}\n// -----\nfunc.func @b() {\n  func.return\n}\n";
  auto chunks = splitInputFile(text);
  ASSERT_EQ(chunks.size(), 2u);
  EXPECT_EQ(chunks[0].firstLine, 1);
  EXPECT_EQ(chunks[1].firstLine, 5);
  Expected<Module> m = parseModule(chunks[1].text, {"f.mlir", chunks[1].firstLine});
  ASSERT_TRUE(m.hasValue()) << m.status().message();
  const Operation* ret = m->functions()[0].body().operations()[0].get();
  EXPECT_EQ(ret->location().line, 6);
  EXPECT_EQ(ret->location().column, 3);
  EXPECT_EQ(ret->location().file, "f.mlir");
}

TEST(Parser, FuncSignatureAndAttributes) {
  Module m = parseOk(R"(
module @jit_f attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32} {
  func.func public @main(%arg0: tensor<2x?xf32> {mhlo.sharding = "{replicated}"}, %arg1: tensor<i32>) -> (tensor<2x?xf32> {jax.result_info = "r"}) {
    %0 = call @helper(%arg0) : (tensor<2x?xf32>) -> tensor<2x?xf32>
    return %0 : tensor<2x?xf32>
  }
  func.func private @helper(%x: tensor<2x?xf32>) -> tensor<2x?xf32> {
    func.return %x : tensor<2x?xf32>
  }
})");
  EXPECT_EQ(m.name, "jit_f");
  ASSERT_NE(m.attributes.get("mhlo.num_partitions"), nullptr);
  EXPECT_EQ(m.attributes.get("mhlo.num_partitions")->intValue(), 1);
  EXPECT_EQ(m.attributes.get("mhlo.num_partitions")->elementType(), ElementType::kSI32);
  auto fns = m.functions();
  ASSERT_EQ(fns.size(), 2u);
  EXPECT_EQ(fns[0].symName(), "main");
  EXPECT_TRUE(fns[0].isPublic());
  EXPECT_FALSE(fns[1].isPublic());
  FunctionType ft = fns[0].functionType();
  ASSERT_EQ(ft.inputs.size(), 2u);
  EXPECT_EQ(ft.inputs[0].shape(), (std::vector<int64_t>{2, kDynamic}));
  EXPECT_EQ(ft.inputs[1].toString(), "tensor<i32>");
  const Attribute* argAttrs = fns[0].op()->attr("arg_attrs");
  ASSERT_NE(argAttrs, nullptr);
  ASSERT_EQ(argAttrs->elements().size(), 2u);
  EXPECT_EQ(argAttrs->elements()[0].field("mhlo.sharding")->stringValue(), "{replicated}");
  EXPECT_TRUE(argAttrs->elements()[1].fields().empty());
  ASSERT_NE(fns[0].op()->attr("res_attrs"), nullptr);
  const Operation* call = fns[0].body().operations()[0].get();
  EXPECT_EQ(call->name(), "func.call");
  EXPECT_EQ(call->attr("callee")->stringValue(), "helper");
  EXPECT_EQ(call->operand(0), fns[0].body().argument(0));
  EXPECT_EQ(fns[0].body().operations()[1]->code(), OpCode::FuncReturn);
}

TEST(Parser, ElementTypesAndTypes) {
  Module m = parseOk(R"(
func.func @f(%a: tensor<4xui4>, %b: tensor<2x3xcomplex<f32>>, %c: tensor<f8E4M3FN>, %d: !stablehlo.token,
             %e: tuple<tensor<f32>, tuple<!stablehlo.token>>, %g: tensor<?x3xf32, #stablehlo.bounds<5, ?>>,
             %h: tensor<2x!quant.uniform<i8:f32, 0.1:-30>>, %i: tensor<0x2xi1>, %j: tensor<bf16>) {
  func.return
})");
  FunctionType ft = m.functions()[0].functionType();
  ASSERT_EQ(ft.inputs.size(), 9u);
  EXPECT_EQ(ft.inputs[0].elementType(), ElementType::kUI4);
  EXPECT_EQ(ft.inputs[1].elementType(), ElementType::kComplexF32);
  EXPECT_EQ(ft.inputs[2].elementType(), ElementType::kF8E4M3FN);
  EXPECT_TRUE(ft.inputs[3].isToken());
  ASSERT_TRUE(ft.inputs[4].isTuple());
  EXPECT_TRUE(ft.inputs[4].tupleElements()[1].tupleElements()[0].isToken());
  EXPECT_EQ(ft.inputs[5].encoding(), "#stablehlo.bounds<5, ?>");
  EXPECT_EQ(ft.inputs[6].elementType(), ElementType::kQuantized);
  EXPECT_EQ(ft.inputs[6].quantizedSpelling(), "!quant.uniform<i8:f32, 0.1:-30>");
  EXPECT_EQ(ft.inputs[7].shape(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ(ft.inputs[8].elementType(), ElementType::kBF16);
}

TEST(Parser, DenseLiterals) {
  Module m = parseOk(R"(
func.func @f() {
  %0 = stablehlo.constant dense<[[1, -2], [0x7F, 4]]> : tensor<2x2xi8>
  %1 = stablehlo.constant dense<1.5> : tensor<3xf32>
  %2 = stablehlo.constant dense<[0x7FC00000, 1.000000e+00, -2.5E-1]> : tensor<3xf32>
  %3 = stablehlo.constant dense<[(1.0, 2.0), (-0.5, 0x7FF0000000000000)]> : tensor<2xcomplex<f64>>
  %4 = stablehlo.constant dense<[true, false, true]> : tensor<3xi1>
  %5 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>
  %6 = stablehlo.constant dense<18446744073709551615> : tensor<ui64>
  %7 = stablehlo.constant dense<> : tensor<0x3xf32>
  %8 = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xbf16>
  %9 = stablehlo.constant dense<-1> : tensor<2xi4>
  func.return
})");
  const auto& ops = bodyOps(m);
  ASSERT_EQ(ops.size(), 11u);
  auto lit = [&](int i) { return ops[static_cast<size_t>(i)]->attr("value")->literal(); };
  EXPECT_EQ(lit(0)->getInt(1), -2);
  EXPECT_EQ(lit(0)->getInt(2), 127);
  EXPECT_EQ(ops[0]->result(0)->type().toString(), "tensor<2x2xi8>");
  EXPECT_EQ(lit(1)->getDouble(2), 1.5);
  EXPECT_TRUE(std::isnan(lit(2)->getDouble(0)));
  EXPECT_EQ(lit(2)->getDouble(2), -0.25);
  EXPECT_EQ(lit(3)->getComplex(0), std::complex<double>(1.0, 2.0));
  EXPECT_TRUE(std::isinf(lit(3)->getComplex(1).imag()));
  EXPECT_EQ(lit(4)->getInt(0), 1);
  EXPECT_EQ(lit(4)->getInt(1), 0);
  EXPECT_EQ(lit(5)->getDouble(0), 1.0);
  EXPECT_EQ(lit(5)->getDouble(1), 2.0);
  EXPECT_EQ(lit(6)->getBits(0), UINT64_MAX);
  EXPECT_EQ(lit(7)->numElements(), 0);
  EXPECT_EQ(lit(8)->getDouble(1), 2.0);
  EXPECT_EQ(lit(9)->getInt(1), -1);
}

// A splat keeps its one value: a large shape costs nothing until someone asks for every element,
// and then each element is the value (every storage width, hex and decimal spellings).
TEST(Parser, DenseSplatsStayOneValueUntilAsked) {
  Module m = parseOk(R"(
func.func @f() {
  %0 = stablehlo.constant dense<0.125> : tensor<8x16x384x384xf32>
  %1 = stablehlo.constant dense<0xFF800000> : tensor<5x3xf32>
  %2 = stablehlo.constant dense<"0x0000C03F"> : tensor<7xf32>
  %3 = stablehlo.constant dense<-3> : tensor<3x3xi4>
  %4 = stablehlo.constant dense<true> : tensor<9xi1>
  %5 = stablehlo.constant dense<(1.5, -2.0)> : tensor<3xcomplex<f32>>
  %6 = stablehlo.constant dense<2.5> : tensor<1xbf16>
  %7 = stablehlo.constant dense<1.0> : tensor<0x4xf32>
  %8 = stablehlo.constant dense<30522> : tensor<8x384xi64>
  func.return
})");
  const auto& ops = bodyOps(m);
  ASSERT_EQ(ops.size(), 10u);
  auto attr = [&](int i) { return ops[static_cast<size_t>(i)]->attr("value"); };
  // The 75 MB activation-shaped splat is one element until literal() is called.
  ASSERT_NE(attr(0)->splatValue(), nullptr);
  EXPECT_EQ(attr(0)->splatValue()->numElements(), 1);
  EXPECT_EQ(attr(0)->splatValue()->getDouble(0), 0.125);
  EXPECT_EQ(attr(0)->typeValue().toString(), "tensor<8x16x384x384xf32>");
  EXPECT_EQ(printAttribute(*attr(0)), "dense<0.125> : tensor<8x16x384x384xf32>");
  // Made whole on request, every element the value (the last one too).
  for (int i : {1, 2, 3, 4, 5, 8}) {
    const Literal* whole = attr(i)->literal();
    const Literal* one = attr(i)->splatValue();
    ASSERT_NE(whole, nullptr) << i;
    ASSERT_NE(one, nullptr) << i;
    EXPECT_EQ(whole->type(), attr(i)->typeValue()) << i;
    for (int64_t e = 0; e < whole->numElements(); ++e)
      EXPECT_EQ(std::memcmp(whole->data() + e * storageBytes(whole->elementType()), one->data(),
                            static_cast<size_t>(storageBytes(whole->elementType()))), 0) << i << " element " << e;
    EXPECT_EQ(attr(i)->literal(), whole) << "made once";
  }
  EXPECT_TRUE(std::isinf(attr(1)->literal()->getDouble(14)));
  EXPECT_EQ(attr(2)->literal()->getDouble(6), 1.5);
  EXPECT_EQ(attr(3)->literal()->getInt(8), -3);
  EXPECT_EQ(attr(4)->literal()->getInt(8), 1);
  EXPECT_EQ(attr(5)->literal()->getComplex(2), std::complex<double>(1.5, -2.0));
  EXPECT_EQ(attr(8)->literal()->getInt(3071), 30522);
  // One element or none: an ordinary literal.
  EXPECT_EQ(attr(6)->splatValue(), nullptr);
  EXPECT_EQ(attr(6)->literal()->getDouble(0), 2.5);
  EXPECT_EQ(attr(7)->splatValue(), nullptr);
  EXPECT_EQ(attr(7)->literal()->numElements(), 0);
  // Equal to the same values spelled out, and to the same splat; not to another value.
  Module spelled = parseOk(R"(
func.func @f() {
  %0 = stablehlo.constant dense<[[-3, -3, -3], [-3, -3, -3], [-3, -3, -3]]> : tensor<3x3xi4>
  %1 = stablehlo.constant dense<-3> : tensor<3x3xi4>
  %2 = stablehlo.constant dense<-2> : tensor<3x3xi4>
  func.return
})");
  const auto& other = bodyOps(spelled);
  EXPECT_EQ(*attr(3), *other[0]->attr("value"));
  EXPECT_EQ(*attr(3), *other[1]->attr("value"));
  EXPECT_NE(*attr(3), *other[2]->attr("value"));
}

TEST(Parser, DenseResourceBlobs) {
  Module m = parseOk(R"(
module {
  func.func @main() -> tensor<2xf32> {
    %0 = stablehlo.constant dense_resource<blob1> : tensor<2xf32>
    return %0 : tensor<2xf32>
  }
}
{-#
  dialect_resources: {
    builtin: {
      blob1: "0x040000000000803F00000040"
    }
  }
#-}
)");
  const Attribute* v = bodyOps(m)[0]->attr("value");
  ASSERT_NE(v, nullptr);
  EXPECT_TRUE(v->isResource());
  ASSERT_NE(v->literal(), nullptr);
  EXPECT_EQ(v->literal()->getDouble(0), 1.0);
  EXPECT_EQ(v->literal()->getDouble(1), 2.0);
  ASSERT_EQ(m.resources.count("blob1"), 1u);
  EXPECT_EQ(m.resources["blob1"].alignment, 4u);
}

TEST(Parser, PrettyDataMovementOps) {
  Module m = parseOk(R"(
func.func @f(%x: tensor<4x6xf32>, %i: tensor<i32>, %v: tensor<f32>) {
  %0 = stablehlo.transpose %x, dims = [1, 0] : (tensor<4x6xf32>) -> tensor<6x4xf32>
  %1 = stablehlo.broadcast_in_dim %v, dims = [] : (tensor<f32>) -> tensor<4x6xf32>
  %2 = stablehlo.iota dim = 1 : tensor<4x6xi32>
  %3 = stablehlo.slice %x [1:3, 0:6:2] : (tensor<4x6xf32>) -> tensor<2x3xf32>
  %4 = stablehlo.concatenate %x, %x, dim = 0 : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<8x6xf32>
  %5 = stablehlo.pad %x, %v, low = [0, 1], high = [2, 0], interior = [1, 0] : (tensor<4x6xf32>, tensor<f32>) -> tensor<9x7xf32>
  %6 = stablehlo.dynamic_slice %x, %i, %i, sizes = [2, 2] : (tensor<4x6xf32>, tensor<i32>, tensor<i32>) -> tensor<2x2xf32>
  %7 = stablehlo.reverse %x, dims = [0] : tensor<4x6xf32>
  %8 = stablehlo.reduce_precision %x, format = e5m2 : tensor<4x6xf32>
  %c = stablehlo.compare  LT, %x, %x,  FLOAT : (tensor<4x6xf32>, tensor<4x6xf32>) -> tensor<4x6xi1>
  %9 = stablehlo.select %c, %x, %x : tensor<4x6xi1>, tensor<4x6xf32>
  %t = stablehlo.tuple %v, %i : tuple<tensor<f32>, tensor<i32>>
  %10 = stablehlo.get_tuple_element %t[1] : (tuple<tensor<f32>, tensor<i32>>) -> tensor<i32>
  func.return
})");
  EXPECT_EQ(ints(findOp(m, "stablehlo.transpose"), "permutation"), (std::vector<int64_t>{1, 0}));
  const Operation* bid = findOp(m, "stablehlo.broadcast_in_dim");
  ASSERT_NE(bid, nullptr);
  ASSERT_NE(bid->attr("broadcast_dimensions"), nullptr);
  EXPECT_EQ(bid->attr("broadcast_dimensions")->kind(), Attribute::Kind::kDenseArray);
  EXPECT_TRUE(ints(bid, "broadcast_dimensions").empty());
  EXPECT_EQ(findOp(m, "stablehlo.iota")->attr("iota_dimension")->asInt(), 1);
  const Operation* slice = findOp(m, "stablehlo.slice");
  EXPECT_EQ(ints(slice, "start_indices"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(slice, "limit_indices"), (std::vector<int64_t>{3, 6}));
  EXPECT_EQ(ints(slice, "strides"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(findOp(m, "stablehlo.concatenate")->attr("dimension")->asInt(), 0);
  EXPECT_EQ(findOp(m, "stablehlo.concatenate")->numOperands(), 2u);
  const Operation* pad = findOp(m, "stablehlo.pad");
  EXPECT_EQ(ints(pad, "edge_padding_low"), (std::vector<int64_t>{0, 1}));
  EXPECT_EQ(ints(pad, "edge_padding_high"), (std::vector<int64_t>{2, 0}));
  EXPECT_EQ(ints(pad, "interior_padding"), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(ints(findOp(m, "stablehlo.dynamic_slice"), "slice_sizes"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(findOp(m, "stablehlo.dynamic_slice")->numOperands(), 3u);
  EXPECT_EQ(ints(findOp(m, "stablehlo.reverse"), "dimensions"), (std::vector<int64_t>{0}));
  EXPECT_EQ(findOp(m, "stablehlo.reverse")->result(0)->type().toString(), "tensor<4x6xf32>");
  EXPECT_EQ(findOp(m, "stablehlo.reduce_precision")->attr("exponent_bits")->asInt(), 5);
  EXPECT_EQ(findOp(m, "stablehlo.reduce_precision")->attr("mantissa_bits")->asInt(), 2);
  const Operation* cmp = findOp(m, "stablehlo.compare");
  EXPECT_EQ(cmp->attr("comparison_direction")->stringValue(), "LT");
  EXPECT_EQ(cmp->attr("comparison_direction")->name(), "comparison_direction");
  EXPECT_EQ(cmp->attr("compare_type")->stringValue(), "FLOAT");
  EXPECT_EQ(findOp(m, "stablehlo.select")->result(0)->type().toString(), "tensor<4x6xf32>");
  EXPECT_EQ(findOp(m, "stablehlo.get_tuple_element")->attr("index")->asInt(), 1);
  EXPECT_EQ(findOp(m, "stablehlo.tuple")->result(0)->type().tupleElements().size(), 2u);
}

TEST(Parser, DotGeneralConvolutionAndEnums) {
  Module m = parseOk(R"(
func.func @f(%a: tensor<2x3x4xf32>, %b: tensor<2x4x5xf32>, %x: tensor<1x8x8x3xf32>, %k: tensor<3x3x3x4xf32>, %s: tensor<2xui64>) {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [0], contracting_dims = [2] x [1], precision = [DEFAULT, HIGHEST] : (tensor<2x3x4xf32>, tensor<2x4x5xf32>) -> tensor<2x3x5xf32>
  %1 = stablehlo.convolution(%x, %k) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [2, 1], pad = [[0, 1], [1, 1]], lhs_dilate = [1, 1], rhs_dilate = [1, 2], reverse = [false, true]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x8x8x3xf32>, tensor<3x3x3x4xf32>) -> tensor<1x4x8x4xf32>
  %2:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<4xui32>)
  %3 = stablehlo.fft %b, type = RFFT, length = [5] : (tensor<2x4x5xf32>) -> tensor<2x4x3xcomplex<f32>>
  func.return
})");
  const Operation* dot = findOp(m, "stablehlo.dot_general");
  ASSERT_NE(dot, nullptr);
  const Attribute* dn = dot->attr("dot_dimension_numbers");
  ASSERT_NE(dn, nullptr);
  EXPECT_EQ(dn->name(), "stablehlo.dot");
  EXPECT_EQ(*dn->field("lhs_batching_dimensions")->asIntList(), (std::vector<int64_t>{0}));
  EXPECT_EQ(*dn->field("rhs_contracting_dimensions")->asIntList(), (std::vector<int64_t>{1}));
  ASSERT_EQ(dot->attr("precision_config")->elements().size(), 2u);
  EXPECT_EQ(dot->attr("precision_config")->elements()[1].stringValue(), "HIGHEST");
  const Operation* conv = findOp(m, "stablehlo.convolution");
  ASSERT_NE(conv, nullptr);
  const Attribute* cdn = conv->attr("dimension_numbers");
  EXPECT_EQ(cdn->field("input_feature_dimension")->asInt(), 3);
  EXPECT_EQ(cdn->field("kernel_input_feature_dimension")->asInt(), 2);
  EXPECT_EQ(cdn->field("kernel_output_feature_dimension")->asInt(), 3);
  EXPECT_EQ(*cdn->field("output_spatial_dimensions")->asIntList(), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(ints(conv, "window_strides"), (std::vector<int64_t>{2, 1}));
  EXPECT_EQ(ints(conv, "rhs_dilation"), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(conv->attr("window_reversal")->intValues(), (std::vector<int64_t>{0, 1}));
  const Literal* pad = conv->attr("padding")->literal();
  ASSERT_NE(pad, nullptr);
  EXPECT_EQ(pad->type().toString(), "tensor<2x2xi64>");
  EXPECT_EQ(pad->getInt(1), 1);
  EXPECT_EQ(pad->getInt(2), 1);
  EXPECT_EQ(conv->attr("feature_group_count")->asInt(), 1);
  const Operation* rbg = findOp(m, "stablehlo.rng_bit_generator");
  EXPECT_EQ(rbg->attr("rng_algorithm")->stringValue(), "THREE_FRY");
  EXPECT_EQ(rbg->numResults(), 2u);
  const Operation* fft = findOp(m, "stablehlo.fft");
  EXPECT_EQ(fft->attr("fft_type")->stringValue(), "RFFT");
  EXPECT_EQ(ints(fft, "fft_length"), (std::vector<int64_t>{5}));
}

TEST(Parser, ReduceFormsBuildBodies) {
  Module m = parseOk(R"(
func.func @f(%x: tensor<3x4xf32>, %i: tensor<3x4xi32>) {
  %c = stablehlo.constant dense<0.0> : tensor<f32>
  %ci = stablehlo.constant dense<0> : tensor<i32>
  %0 = stablehlo.reduce(%x init: %c) applies stablehlo.add across dimensions = [1] : (tensor<3x4xf32>, tensor<f32>) -> tensor<3xf32>
  %1:2 = stablehlo.reduce(%x init: %c), (%i init: %ci) across dimensions = [1] : (tensor<3x4xf32>, tensor<3x4xi32>, tensor<f32>, tensor<i32>) -> (tensor<3xf32>, tensor<3xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%p: tensor<i32>, %q: tensor<i32>)  {
    %s = stablehlo.maximum %a, %b : tensor<f32>
    %t = stablehlo.minimum %p, %q : tensor<i32>
    stablehlo.return %s, %t : tensor<f32>, tensor<i32>
  }
  func.return
})");
  const auto& ops = bodyOps(m);
  const Operation* r0 = ops[2].get();
  ASSERT_EQ(r0->numRegions(), 1u);
  const Block& b0 = r0->region(0).front();
  ASSERT_EQ(b0.numArguments(), 2u);
  EXPECT_EQ(b0.argument(0)->type().toString(), "tensor<f32>");
  ASSERT_EQ(b0.operations().size(), 2u);
  EXPECT_EQ(b0.operations()[0]->name(), "stablehlo.add");
  EXPECT_EQ(b0.operations()[0]->operand(1), b0.argument(1));
  EXPECT_EQ(b0.operations()[1]->code(), OpCode::Return);
  EXPECT_EQ(ints(r0, "dimensions"), (std::vector<int64_t>{1}));
  const Operation* r1 = ops[3].get();
  EXPECT_EQ(r1->numOperands(), 4u);
  EXPECT_EQ(r1->numResults(), 2u);
  const Block& b1 = r1->region(0).front();
  ASSERT_EQ(b1.numArguments(), 4u);
  // Block arguments: all accumulators first, then all elements.
  EXPECT_EQ(b1.argument(1)->type().toString(), "tensor<i32>");
  EXPECT_EQ(b1.argument(2)->type().toString(), "tensor<f32>");
  EXPECT_EQ(b1.operations()[0]->operand(0), b1.argument(0));
  EXPECT_EQ(b1.operations()[0]->operand(1), b1.argument(2));
  EXPECT_EQ(b1.operations()[1]->operand(0), b1.argument(1));
}

TEST(Parser, ControlFlowAndNestedRegions) {
  Module m = parseOk(R"(
func.func @f(%n: tensor<i64>, %p: tensor<i1>) {
  %init = stablehlo.constant dense<0> : tensor<i64>
  %one = stablehlo.constant dense<1> : tensor<i64>
  %r0, %r1 = stablehlo.while(%i = %init, %s = %init) : tensor<i64>, tensor<i64> attributes {foo = 1 : i64}
  cond {
    %c = stablehlo.compare LT, %i, %n : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  } do {
    %a = stablehlo.add %i, %one : tensor<i64>
    stablehlo.return %a, %s : tensor<i64>, tensor<i64>
  }
  %q:2 = "stablehlo.if"(%p) ({
    stablehlo.return %r0, %r1 : tensor<i64>, tensor<i64>
  }, {
    "stablehlo.return"(%r1, %r0) : (tensor<i64>, tensor<i64>) -> ()
  }) : (tensor<i1>) -> (tensor<i64>, tensor<i64>)
  %sorted = "stablehlo.sort"(%n) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%x: tensor<i64>, %y: tensor<i64>):
    %lt = stablehlo.compare  LT, %x, %y,  SIGNED : (tensor<i64>, tensor<i64>) -> tensor<i1>
    stablehlo.return %lt : tensor<i1>
  }) {extra = "kept"} : (tensor<i64>) -> tensor<i64>
  func.return
})");
  const auto& ops = bodyOps(m);
  const Operation* w = ops[2].get();
  EXPECT_EQ(w->code(), OpCode::While);
  ASSERT_EQ(w->numRegions(), 2u);
  EXPECT_EQ(w->region(0).front().numArguments(), 2u);
  EXPECT_EQ(w->region(1).front().numArguments(), 2u);
  EXPECT_EQ(w->numResults(), 2u);
  EXPECT_EQ(w->attr("foo")->asInt(), 1);
  // The cond region uses %n from the enclosing function.
  EXPECT_EQ(w->region(0).front().operations()[0]->operand(1), m.functions()[0].body().argument(0));
  const Operation* iff = ops[3].get();
  EXPECT_EQ(iff->code(), OpCode::If);
  EXPECT_EQ(iff->numRegions(), 2u);
  EXPECT_EQ(iff->region(1).front().operations()[0]->operand(0), w->result(1));
  const Operation* sort = ops[4].get();
  EXPECT_EQ(sort->attr("dimension")->asInt(), 0);
  EXPECT_TRUE(sort->attr("is_stable")->boolValue());
  EXPECT_EQ(sort->attr("extra")->stringValue(), "kept");
  EXPECT_EQ(sort->region(0).front().label, "^bb0");
}

TEST(Parser, GenericFormsMultiResultsAndUnknownOps) {
  Module m = parseOk(R"(
func.func @f(%a: tensor<4xf32>) -> tensor<4xf32> {
  %0 = "stablehlo.add"(%a, %a) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %1:2 = "stablehlo.optimization_barrier"(%0, %a) : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  %2 = "mydialect.frob"(%1#1) {level = 3 : i32, mode = #mydialect.mode<fast>} : (tensor<4xf32>) -> tensor<4xf32>
  %3 = stablehlo.custom_call @my_target(%2, %1#0) {backend_config = "cfg", has_side_effect = true} : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %4 = stablehlo.composite "my.op" %3 {composite_attributes = {n = 2 : i64}, decomposition = @f, version = 1 : i32} : (tensor<4xf32>) -> tensor<4xf32>
  %5:2 = "interpreter.run_parallel"(%4, %4) {programs = [[@f], [@f]]} : (tensor<4xf32>, tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>)
  check.expect_almost_eq_const %5#1, dense<[1.0, 2.0, 3.0, 4.0]> : tensor<4xf32>
  check.expect_close %5#0, %4, max_ulp_difference = 3 : tensor<4xf32>, tensor<4xf32>
  check.expect_almost_eq %5#0, %4, tolerance = 1.0e-3 : tensor<4xf32>
  return %5#0 : tensor<4xf32>
})");
  const auto& ops = bodyOps(m);
  ASSERT_EQ(ops.size(), 10u);
  EXPECT_EQ(ops[1]->numResults(), 2u);
  EXPECT_EQ(ops[2]->code(), OpCode::kUnknown);
  EXPECT_EQ(ops[2]->operand(0), ops[1]->result(1));
  EXPECT_EQ(ops[2]->attr("mode")->kind(), Attribute::Kind::kEnumValue);
  EXPECT_EQ(ops[3]->attr("call_target_name")->stringValue(), "my_target");
  EXPECT_EQ(ops[3]->numOperands(), 2u);
  EXPECT_TRUE(ops[3]->attr("has_side_effect")->boolValue());
  EXPECT_EQ(ops[4]->attr("name")->stringValue(), "my.op");
  EXPECT_EQ(ops[4]->attr("decomposition")->stringValue(), "f");
  EXPECT_EQ(ops[4]->attr("composite_attributes")->field("n")->asInt(), 2);
  EXPECT_EQ(ops[5]->attr("programs")->elements()[1].elements()[0].stringValue(), "f");
  EXPECT_EQ(ops[6]->attr("value")->literal()->getDouble(3), 4.0);
  EXPECT_EQ(ops[7]->attr("max_ulp_difference")->asInt(), 3);
  EXPECT_DOUBLE_EQ(ops[8]->attr("tolerance")->floatValue(), 1.0e-3);
  EXPECT_EQ(ops[9]->code(), OpCode::FuncReturn);
}

TEST(Parser, AttributeForms) {
  Module m = parseOk(R"(
#map = affine_map<(d0) -> (d0 * 2)>
#shard = #sdy.sharding<@mesh, [{"x"}]>
func.func @f(%a: tensor<4xf32>) {
  "test.op"(%a) {
    a = array<i64: 1, -2, 0x10>, b = array<i1: true, false>, c = array<f32: 1.5>, d = "esc\"aped\n\0A",
    e = @sym, f = #stablehlo<comparison_direction EQ>, g = #stablehlo.channel_handle<handle = 1, type = 2>,
    h = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
    i = tensor<2xf32>, j = 0x7FC00000 : f32, k = 3 : ui8, l, m = #map, n = #shard, o = [1, "two", [3]],
    p = {inner = unit}, q = (tensor<f32>) -> (tensor<f32>, tensor<i1>), r = -1.5e+00 : bf16, s = false,
    t = #stablehlo.result_accuracy<atol = 0.000000e+00, rtol = 0.000000e+00, ulps = 1, mode = #stablehlo.result_accuracy_mode<TOLERANCE>>,
    u = #stablehlo.conv<[b, 0, f]x[0, i, o]->[b, 0, f]>, v = #stablehlo.type_extensions<bounds = [?, 3]>
  } : (tensor<4xf32>) -> ()
  func.return
})");
  const Operation* op = bodyOps(m)[0].get();
  EXPECT_EQ(op->attr("a")->intValues(), (std::vector<int64_t>{1, -2, 16}));
  EXPECT_EQ(op->attr("b")->intValues(), (std::vector<int64_t>{1, 0}));
  EXPECT_EQ(op->attr("c")->floatValues(), (std::vector<double>{1.5}));
  EXPECT_EQ(op->attr("d")->stringValue(), "esc\"aped\n\n");
  EXPECT_EQ(op->attr("e")->kind(), Attribute::Kind::kSymbolRef);
  EXPECT_EQ(op->attr("f")->dialect(), "stablehlo");
  EXPECT_EQ(op->attr("f")->stringValue(), "EQ");
  EXPECT_EQ(op->attr("g")->field("type")->asInt(), 2);
  EXPECT_EQ(op->attr("h")->field("index_vector_dim")->asInt(), 1);
  EXPECT_EQ(*op->attr("h")->field("start_index_map")->asIntList(), (std::vector<int64_t>{0}));
  EXPECT_EQ(op->attr("i")->typeValue().toString(), "tensor<2xf32>");
  EXPECT_TRUE(std::isnan(op->attr("j")->floatValue()));
  EXPECT_EQ(op->attr("j")->elementType(), ElementType::kF32);
  EXPECT_EQ(op->attr("k")->elementType(), ElementType::kUI8);
  EXPECT_EQ(op->attr("l")->kind(), Attribute::Kind::kUnit);
  EXPECT_EQ(op->attr("m")->kind(), Attribute::Kind::kOpaque);
  EXPECT_EQ(op->attr("m")->stringValue(), "affine_map<(d0) -> (d0 * 2)>");
  EXPECT_EQ(op->attr("n")->kind(), Attribute::Kind::kOpaque);
  EXPECT_EQ(op->attr("o")->elements().size(), 3u);
  EXPECT_EQ(op->attr("p")->field("inner")->kind(), Attribute::Kind::kUnit);
  ASSERT_TRUE(op->attr("q")->isFunctionType());
  EXPECT_EQ(op->attr("q")->functionTypeValue().results.size(), 2u);
  EXPECT_EQ(op->attr("r")->floatValue(), -1.5);
  EXPECT_FALSE(op->attr("s")->boolValue());
  EXPECT_EQ(op->attr("t")->field("ulps")->asInt(), 1);
  EXPECT_EQ(op->attr("t")->field("mode")->stringValue(), "TOLERANCE");
  EXPECT_EQ(op->attr("u")->field("input_feature_dimension")->asInt(), 2);
  EXPECT_EQ(op->attr("v")->name(), "stablehlo.type_extensions");
}

TEST(Parser, LocationsAndAliases) {
  Module m = parseOk(R"(#loc1 = loc("model.py":10:4)
module @m {
  func.func @main(%arg0: tensor<f32> loc("x")) -> tensor<f32> {
    %0 = stablehlo.negate %arg0 : tensor<f32> loc(#loc2)
    return %0 : tensor<f32> loc(#loc1)
  } loc(#loc)
} loc(#loc)
#loc = loc(unknown)
#loc2 = loc("jit(f)/neg"(#loc1))
)");
  const auto& ops = bodyOps(m);
  ASSERT_EQ(ops.size(), 2u);
  EXPECT_EQ(ops[0]->location().line, 4);
  EXPECT_EQ(ops[0]->location().column, 5);
  EXPECT_EQ(ops[0]->location().source, "\"jit(f)/neg\"(#loc1)");
  EXPECT_EQ(ops[1]->location().source, "\"model.py\":10:4");
}

// ---------------------------------------------------------------------------------------------
// Errors name file:line:col and what was expected

TEST(ParserErrors, UndefinedValue) {
  std::string e = parseErr("func.func @f() {\n  %0 = stablehlo.add %x, %x : tensor<f32>\n}\n");
  EXPECT_EQ(e, "test.mlir:2:22: use of undefined value '%x'");
}

TEST(ParserErrors, Redefinition) {
  std::string e = parseErr(
      "func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a : tensor<f32>\n  %0 = stablehlo.abs %a : tensor<f32>\n}\n");
  EXPECT_EQ(e, "test.mlir:3:3: redefinition of value '%0'");
}

TEST(ParserErrors, OperandCountVsTypes) {
  std::string e = parseErr(
      "func.func @f(%a: tensor<f32>) {\n  %0 = \"stablehlo.add\"(%a, %a) : (tensor<f32>) -> tensor<f32>\n}\n");
  EXPECT_EQ(e, "test.mlir:2:34: 'stablehlo.add' has 2 operands but its type lists 1");
}

TEST(ParserErrors, ResultCountVsTypes) {
  std::string e = parseErr(
      "func.func @f(%a: tensor<f32>) {\n  %0:2 = \"stablehlo.abs\"(%a) : (tensor<f32>) -> tensor<f32>\n}\n");
  EXPECT_EQ(e, "test.mlir:2:3: 'stablehlo.abs' names 2 results but its type has 1");
}

TEST(ParserErrors, UnknownElementType) {
  std::string e = parseErr("func.func @f(%a: tensor<2xf33>) {\n}\n");
  EXPECT_EQ(e, "test.mlir:1:27: unknown element type 'f33'");
}

TEST(ParserErrors, BadDenseLiterals) {
  EXPECT_EQ(parseErr("func.func @f() {\n  %0 = stablehlo.constant dense<[1, 2, 3]> : tensor<2xi32>\n}\n"),
            "test.mlir:2:40: dense literal has more elements than tensor<2xi32> holds");
  EXPECT_EQ(parseErr("func.func @f() {\n  %0 = stablehlo.constant dense<[[1], [2, 3]]> : tensor<2x1xi32>\n}\n"),
            "test.mlir:2:43: inconsistent dense literal shape");
  EXPECT_EQ(parseErr("func.func @f() {\n  %0 = stablehlo.constant dense<1.5> : tensor<2xi32>\n}\n"),
            "test.mlir:2:33: invalid integer literal '1.5' for element type i32");
}

TEST(ParserErrors, MissingPieces) {
  EXPECT_EQ(parseErr("func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.abs %a\n}\n"),
            "test.mlir:3:1: expected ':' and the type of 'stablehlo.abs', found '}'");
  EXPECT_EQ(parseErr("func.func @f() {\n  func.return\n"), "test.mlir:1:16: region is not closed by '}'");
  EXPECT_EQ(parseErr("func.func @f() {\n  %0 = stablehlo.constant dense<1> : tensor<i32\n}\n"),
            "test.mlir:3:1: expected '>' to end tensor type, found '}'");
  EXPECT_EQ(parseErr("func.func @f(%a: tensor<f32>) {\n  %0 = stablehlo.transpose %a, dims = [1, : tensor<f32>\n}\n"),
            "test.mlir:2:43: expected integer, found ':'");
}

TEST(ParserErrors, DeepNestingIsAnErrorNotACrash) {
  std::string text = "func.func @f() {\n  \"t.op\"() {a = ";
  for (int i = 0; i < 100000; ++i) text += "[";
  text += "} : () -> ()\n}\n";
  std::string e = parseErr(text);
  EXPECT_NE(e.find("nesting too deep"), std::string::npos) << e;
  std::string regions = "func.func @f() {\n";
  for (int i = 0; i < 5000; ++i) regions += "\"t.op\"() ({\n";
  std::string e2 = parseErr(regions);
  EXPECT_NE(e2.find("nesting too deep"), std::string::npos) << e2;
}

TEST(ParserErrors, TruncatedInputsNeverCrash) {
  // Every prefix of a realistic module either parses or fails cleanly.
  const std::string text = R"(module @m attributes {a = 1 : i32} {
  func.func @main(%arg0: tensor<2x3xf32> {x = "y"}) -> (tensor<3xf32> {r = ""}) {
    %cst = stablehlo.constant dense<[1.0, 2.0]> : tensor<2xf32>
    %0 = stablehlo.reduce(%arg0 init: %cst) applies stablehlo.add across dimensions = [0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<3xf32>
    %1:2 = "stablehlo.sort"(%0, %0) <{dimension = 0 : i64}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>, %c: tensor<f32>, %d: tensor<f32>):
      %2 = stablehlo.compare GT, %a, %b : (tensor<f32>, tensor<f32>) -> tensor<i1>
      stablehlo.return %2 : tensor<i1>
    }) : (tensor<3xf32>, tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
    return %1#0 : tensor<3xf32>
  }
}
)";
  for (size_t n = 0; n < text.size(); ++n) {
    Expected<Module> m = parseModule(std::string_view(text).substr(0, n));
    if (!m.hasValue()) {
      EXPECT_FALSE(m.status().message().empty());
    }
  }
}

}  // namespace
}  // namespace wf
