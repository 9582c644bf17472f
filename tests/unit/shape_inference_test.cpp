// Shape inference (src/ir/shape_inference.h) on its own: result types computed from operand types
// and attributes where the declared result types leave every dimension open (the StableHLO
// spec's examples), the constraint named in each error, and the window arithmetic (ir/window.h)
// that convolution, reduce_window and select_and_scatter share.
#include <gtest/gtest.h>

#include "ir/shape_inference.h"
#include "ir/window.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

// Parses one function of `body` ops (no verification: the declared results are left open) and
// returns the inferred types of the op named `opName`.
Expected<InferredTypes> inferIn(const std::string& signature, const std::string& body, const std::string& opName) {
  ParseOptions options;
  options.fileName = "test.mlir";
  auto m = parseModule("module {\n  func.func @main" + signature + " {\n" + body + "\n  }\n}\n", options);
  if (!m) return m.status();
  const Operation* fn = m->lookupFunction("main");
  for (const auto& op : fn->region(0).front().operations())
    if (op->name() == opName) return inferResultTypes(*op, &*m);
  return notFound(opName + " not in the test program");
}

Type t(std::vector<int64_t> shape, ElementType e = ElementType::kF32) { return Type::tensor(std::move(shape), e); }

TEST(ShapeInference, DotGeneralFromOperandsAlone) {
  auto r = inferIn("(%a: tensor<4x2x3xf32>, %b: tensor<4x3x5xf32>) -> tensor<?x?x?xf32>", R"(
    %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = [0],
        rhs_batching_dimensions = [0], lhs_contracting_dimensions = [2], rhs_contracting_dimensions = [1]>}
        : (tensor<4x2x3xf32>, tensor<4x3x5xf32>) -> tensor<?x?x?xf32>
    "func.return"(%0) : (tensor<?x?x?xf32>) -> ())", "stablehlo.dot_general");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({4, 2, 5})});
}

TEST(ShapeInference, ConvolutionSpecExample) {
  // The spec's example: 1x4x4x1 input, 3x3 kernel, stride 4, lhs dilation 2 -> 1x2x2x1.
  auto r = inferIn("(%x: tensor<1x4x4x1xi64>, %k: tensor<3x3x1x1xi64>) -> tensor<?x?x?x?xi64>", R"(
    %0 = "stablehlo.convolution"(%x, %k) {window_strides = array<i64: 4, 4>, padding = dense<0> : tensor<2x2xi64>,
        lhs_dilation = array<i64: 2, 2>, rhs_dilation = array<i64: 1, 1>,
        dimension_numbers = #stablehlo.conv<[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]>,
        feature_group_count = 1 : i64, batch_group_count = 1 : i64}
        : (tensor<1x4x4x1xi64>, tensor<3x3x1x1xi64>) -> tensor<?x?x?x?xi64>
    "func.return"(%0) : (tensor<?x?x?x?xi64>) -> ())", "stablehlo.convolution");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({1, 2, 2, 1}, ElementType::kSI64)});
}

TEST(ShapeInference, ReduceWindowSpecExample) {
  // The spec's example: 3x2 input, window [2, 1], strides [4, 1], padding [[2, 1], [0, 0]],
  // base dilations [2, 1], window dilations [3, 1] -> 2x2.
  auto r = inferIn("(%x: tensor<3x2xi64>, %i: tensor<i64>) -> tensor<?x?xi64>", R"(
    %0 = "stablehlo.reduce_window"(%x, %i) ({
      ^bb0(%a: tensor<i64>, %b: tensor<i64>):
        %s = "stablehlo.add"(%a, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
        "stablehlo.return"(%s) : (tensor<i64>) -> ()
    }) {window_dimensions = array<i64: 2, 1>, window_strides = array<i64: 4, 1>,
        base_dilations = array<i64: 2, 1>, window_dilations = array<i64: 3, 1>,
        padding = dense<[[2, 1], [0, 0]]> : tensor<2x2xi64>} : (tensor<3x2xi64>, tensor<i64>) -> tensor<?x?xi64>
    "func.return"(%0) : (tensor<?x?xi64>) -> ())", "stablehlo.reduce_window");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({2, 2}, ElementType::kSI64)});
}

TEST(ShapeInference, GatherSpecExample) {
  auto r = inferIn("(%x: tensor<2x3x4x2xi32>, %i: tensor<2x2x3x2xi64>) -> tensor<?x?x?x?x?xi32>", R"(
    %0 = "stablehlo.gather"(%x, %i) {dimension_numbers = #stablehlo.gather<offset_dims = [3, 4],
        collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [1],
        start_index_map = [2, 1], index_vector_dim = 3>, slice_sizes = array<i64: 1, 1, 2, 2>,
        indices_are_sorted = false} : (tensor<2x3x4x2xi32>, tensor<2x2x3x2xi64>) -> tensor<?x?x?x?x?xi32>
    "func.return"(%0) : (tensor<?x?x?x?x?xi32>) -> ())", "stablehlo.gather");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({2, 2, 3, 2, 2}, ElementType::kSI32)});
}

TEST(ShapeInference, ReshapeFillsOneOpenDimension) {
  auto r = inferIn("(%x: tensor<2x6xf32>) -> tensor<?x4xf32>", R"(
    %0 = "stablehlo.reshape"(%x) : (tensor<2x6xf32>) -> tensor<?x4xf32>
    "func.return"(%0) : (tensor<?x4xf32>) -> ())", "stablehlo.reshape");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({3, 4})});
}

TEST(ShapeInference, ReduceTakesTheBodyElementType) {
  auto r = inferIn("(%x: tensor<2x3xf32>, %i: tensor<f32>) -> tensor<?xf32>", R"(
    %0 = "stablehlo.reduce"(%x, %i) ({
      ^bb0(%a: tensor<f32>, %b: tensor<f32>):
        %s = "stablehlo.maximum"(%a, %b) : (tensor<f32>, tensor<f32>) -> tensor<f32>
        "stablehlo.return"(%s) : (tensor<f32>) -> ()
    }) {dimensions = array<i64: 0>} : (tensor<2x3xf32>, tensor<f32>) -> tensor<?xf32>
    "func.return"(%0) : (tensor<?xf32>) -> ())", "stablehlo.reduce");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(r->types, std::vector<Type>{t({3})});
  EXPECT_EQ(r->shapeRule, "C7");
}

TEST(ShapeInference, OperandConstraintErrorsNameTheConstraint) {
  auto r = inferIn("(%a: tensor<2x3xf32>, %b: tensor<4x5xf32>) -> tensor<?x?xf32>", R"(
    %0 = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1],
        rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<4x5xf32>) -> tensor<?x?xf32>
    "func.return"(%0) : (tensor<?x?xf32>) -> ())", "stablehlo.dot_general");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.status().code(), StatusCode::kVerifyError);
  EXPECT_NE(r.status().message().find("'stablehlo.dot_general' at test.mlir:4:"), std::string::npos) << r.status().message();
  EXPECT_NE(r.status().message().find("C10: contracting dimension sizes differ"), std::string::npos) << r.status().message();
}

TEST(ShapeInference, MissingAttributeIsNamed) {
  auto r = inferIn("(%x: tensor<2x3xf32>) -> tensor<?x?xf32>", R"(
    %0 = "stablehlo.transpose"(%x) : (tensor<2x3xf32>) -> tensor<?x?xf32>
    "func.return"(%0) : (tensor<?x?xf32>) -> ())", "stablehlo.transpose");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("attributes: missing attribute 'permutation'"), std::string::npos)
      << r.status().message();
}

TEST(WindowArithmetic, OutputSizes) {
  EXPECT_EQ(windowOutputSize(5, 3, 1, 0, 0), 3);
  EXPECT_EQ(windowOutputSize(5, 3, 2, 1, 1), 3);        // padded 7, positions 0, 2, 4
  EXPECT_EQ(windowOutputSize(4, 3, 4, 0, 0, 2, 1), 2);  // dilated input 7
  EXPECT_EQ(windowOutputSize(4, 2, 1, 0, 0, 1, 3), 1);  // dilated window 4
  EXPECT_EQ(windowOutputSize(2, 3, 1, 0, 0), 0);        // the window does not fit
  EXPECT_EQ(windowOutputSize(4, 1, 1, -2, -2), 0);      // padding crops everything
  EXPECT_EQ(windowOutputSize(0, 1, 1, 0, 0), 0);
  EXPECT_EQ(windowOutputSize(kDynamic, 3, 1, 0, 0), kDynamic);
  EXPECT_EQ(dilatedSize(0, 3), 0);
  EXPECT_EQ(dilatedSize(3, 2), 5);
}

}  // namespace
}  // namespace wf
