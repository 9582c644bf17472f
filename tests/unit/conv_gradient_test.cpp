// recognizeConvolutionGradient (ir/conv_gradient.h) on the gradient convolutions autodiff writes:
// which forms it takes, the forward convolution it reads back, and that this forward, run as
// cuDNN's backward kernels define it (written out below as plain loops), computes what the
// interpreter computes for the op itself, in float64 on random inputs. The CUDA lowering
// (convolution_backward.cpp) hands exactly these parameters to cuDNN; tests/cuda runs it.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "autodiff/autodiff.h"
#include "conv_gradient_cases.h"
#include "eval/interpreter.h"
#include "ir/conv_gradient.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

using convgrad::ConvGradCase;
using Dims = std::vector<int64_t>;
using Kind = ConvolutionGradient::Kind;

struct GradientProgram {
  Module module;
  const Operation* forward = nullptr;  // the forward convolution, copied into @main
  const Operation* data = nullptr;     // the convolution computing dx
  const Operation* filter = nullptr;   // the convolution computing dw
};

// The forward program's value-and-gradient function, as @main.
Expected<GradientProgram> gradientProgram(const ConvGradCase& c) {
  ParseOptions options;
  options.fileName = "test.mlir";
  WF_ASSIGN_OR_RETURN(Module m, parseModule(convgrad::forwardProgram(c, ElementType::kF64), options));
  WF_RETURN_IF_ERROR(verifyModule(m));
  const std::vector<int> wrt = {0, 1};
  WF_RETURN_IF_ERROR(addValueAndGradFunction(m, "forward", wrt, "main").status());
  GradientProgram p;
  p.module = std::move(m);
  const Type x = Type::tensor(c.xShape(), ElementType::kF64), w = Type::tensor(c.wShape(), ElementType::kF64);
  for (const auto& op : FuncOp(p.module.lookupFunction("main")).body().operations()) {
    if (op->code() != OpCode::Convolution) continue;
    if (!p.forward) p.forward = op.get();
    else if (op->result(0)->type() == x) p.data = op.get();
    else if (op->result(0)->type() == w) p.filter = op.get();
  }
  if (!p.forward || !p.data || !p.filter) return internalError("expected three convolutions in @main");
  return p;
}

// The dims of x, y and w ([N, C, spatial...], [N, K, spatial...], [K, C/groups, window...]) in
// the case's own tensors.
Dims activationDims(const ConvGradCase& c) {
  const int64_t r = static_cast<int64_t>(c.rank());
  Dims d = {0, c.layout == convgrad::Layout::kNCHW ? 1 : r + 1};
  for (int64_t i = 0; i < r; ++i) d.push_back(c.layout == convgrad::Layout::kNCHW ? 2 + i : 1 + i);
  return d;
}
Dims kernelDims(const ConvGradCase& c) {
  const int64_t r = static_cast<int64_t>(c.rank());
  if (c.layout == convgrad::Layout::kNCHW) {
    Dims d = {0, 1};
    for (int64_t i = 0; i < r; ++i) d.push_back(2 + i);
    return d;
  }
  Dims d = {r + 1, r};
  for (int64_t i = 0; i < r; ++i) d.push_back(i);
  return d;
}

Dims unravel(int64_t i, const Dims& shape) {
  Dims idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t product(const Dims& v) {
  int64_t p = 1;
  for (int64_t x : v) p *= x;
  return p;
}

// The element of a row-major literal at coordinates listed in the order of `dims`.
int64_t offsetOf(const Literal& l, const Dims& dims, const Dims& coords) {
  const Dims& shape = l.type().shape();
  Dims idx(shape.size());
  for (size_t i = 0; i < dims.size(); ++i) idx[static_cast<size_t>(dims[i])] = coords[i];
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}

Dims concat(int64_t a, int64_t b, const Dims& rest) {
  Dims out = {a, b};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// cuDNN's backward kernels for the forward convolution `g`, by their definition: every tap of the
// forward (batch n, output feature k, input feature c of k's group, output position o, window
// position q, reading input position o*stride + q*dilation - padding) adds w*dy to dx, or x*dy
// to dw. `lhs` and `rhs` are the op's operands; the result has the op's result type.
Literal backwardReference(const ConvolutionGradient& g, const Literal& lhs, const Literal& rhs, const Type& resultType) {
  const bool data = g.kind == Kind::kData;
  Literal result = Literal::zeros(resultType);
  const int64_t cPerGroup = g.inFeatures / g.groups, kPerGroup = g.outFeatures / g.groups;
  const size_t r = g.inputSize.size();
  const Literal& dy = data ? lhs : rhs;
  for (int64_t n = 0; n < g.batch; ++n)
    for (int64_t k = 0; k < g.outFeatures; ++k)
      for (int64_t c = 0; c < cPerGroup; ++c) {
        const int64_t group = k / kPerGroup, cFull = group * cPerGroup + c;
        for (int64_t oi = 0; oi < product(g.outputSize); ++oi)
          for (int64_t qi = 0; qi < product(g.windowSize); ++qi) {
            const Dims o = unravel(oi, g.outputSize), q = unravel(qi, g.windowSize);
            Dims h(r), qReversed(r);
            bool inside = true;
            for (size_t d = 0; d < r; ++d) {
              h[d] = o[d] * g.strides[d] + q[d] * g.dilations[d] - g.padding[d];
              inside = inside && h[d] >= 0 && h[d] < g.inputSize[d];
              qReversed[d] = g.windowSize[d] - 1 - q[d];
            }
            if (!inside) continue;
            const double dyv = dy.getDouble(offsetOf(dy, g.yDims, concat(n, k, o)));
            if (data) {
              // The kernel operand: [C, K/groups, window...], transposed by group and reversed.
              const double w = rhs.getDouble(offsetOf(rhs, g.wDims, concat(cFull, k % kPerGroup, qReversed)));
              const int64_t at = offsetOf(result, g.xDims, concat(n, cFull, h));
              result.setDouble(at, result.getDouble(at) + w * dyv);
            } else {
              const double x = lhs.getDouble(offsetOf(lhs, g.xDims, concat(n, cFull, h)));
              const int64_t at = offsetOf(result, g.wDims, concat(k, c, q));
              result.setDouble(at, result.getDouble(at) + x * dyv);
            }
          }
      }
  return result;
}

Literal randomLiteral(const Type& t, std::mt19937& rng) {
  Literal l = Literal::zeros(t);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < l.numElements(); ++i) l.setDouble(i, u(rng));
  return l;
}

// The interpreter's value of `op` on random operands against backwardReference.
void expectSameAsInterpreter(const Operation& op, const ConvolutionGradient& g) {
  std::mt19937 rng(7);
  std::vector<Literal> operands = {randomLiteral(op.operand(0)->type(), rng),
                                   randomLiteral(op.operand(1)->type(), rng)};
  const Literal want = backwardReference(g, operands[0], operands[1], op.result(0)->type());
  const Kernel* kernel = KernelRegistry::instance().find(op.code());
  ASSERT_NE(kernel, nullptr);
  EvalContext ctx;
  Expected<std::vector<Literal>> got = (*kernel)(op, operands, ctx);
  ASSERT_TRUE(got) << got.status().toString();
  ASSERT_EQ(got->size(), 1u);
  double maxDiff = 0;
  for (int64_t i = 0; i < want.numElements(); ++i)
    maxDiff = std::max(maxDiff, std::fabs((*got)[0].getDouble(i) - want.getDouble(i)));
  EXPECT_LT(maxDiff, 1e-12) << op.describe();
}

class ConvGradientTest : public ::testing::TestWithParam<ConvGradCase> {};

TEST_P(ConvGradientTest, RecognisesTheGradientsAndReadsBackTheForward) {
  const ConvGradCase& c = GetParam();
  Expected<GradientProgram> p = gradientProgram(c);
  ASSERT_TRUE(p) << p.status().toString();
  // The forward convolution itself is no gradient form (its window is smaller than its result).
  EXPECT_FALSE(recognizeConvolutionGradient(*p->forward).has_value());

  std::optional<ConvolutionGradient> data = recognizeConvolutionGradient(*p->data);
  std::optional<ConvolutionGradient> filter = recognizeConvolutionGradient(*p->filter);
  ASSERT_EQ(data.has_value(), c.dataTaken);
  ASSERT_EQ(filter.has_value(), c.filterTaken);
  Dims padLow;
  for (size_t d = 0; d < c.rank(); ++d) padLow.push_back(c.padding[2 * d]);
  const Dims act = activationDims(c);
  for (const std::optional<ConvolutionGradient>& g : {data, filter}) {
    if (!g) continue;
    SCOPED_TRACE(g->kind == Kind::kData ? "data gradient" : "filter gradient");
    EXPECT_EQ(g->batch, c.batch);
    EXPECT_EQ(g->inFeatures, c.inFeatures);
    EXPECT_EQ(g->outFeatures, c.outFeatures);
    EXPECT_EQ(g->groups, c.groups);
    EXPECT_EQ(g->inputSize, c.input);
    EXPECT_EQ(g->windowSize, c.window);
    EXPECT_EQ(g->outputSize, c.output());
    EXPECT_EQ(g->strides, c.strides);
    EXPECT_EQ(g->dilations, c.dilations);
    EXPECT_EQ(g->padding, padLow);
    // x/dx and dy keep the case's own layout (dims of the same-shaped tensors).
    EXPECT_EQ(g->xDims, act);
    EXPECT_EQ(g->yDims, act);
  }
  if (filter) {
    EXPECT_EQ(filter->kind, Kind::kFilter);
    EXPECT_EQ(filter->wDims, kernelDims(c));  // dw has the kernel's shape and layout
    expectSameAsInterpreter(*p->filter, *filter);
  }
  if (data) {
    EXPECT_EQ(data->kind, Kind::kData);
    expectSameAsInterpreter(*p->data, *data);
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, ConvGradientTest, ::testing::ValuesIn(convgrad::convGradCases()),
                         [](const ::testing::TestParamInfo<ConvGradCase>& info) { return info.param.name; });

// Forms near the gradient ones that are left to the forward kernels.
Expected<Module> parseOne(const std::string& text) {
  ParseOptions options;
  options.fileName = "test.mlir";
  WF_ASSIGN_OR_RETURN(Module m, parseModule(text, options));
  WF_RETURN_IF_ERROR(verifyModule(m));
  return m;
}

const Operation* firstConvolution(const Module& m) {
  for (const auto& op : FuncOp(m.lookupFunction("main")).body().operations())
    if (op->code() == OpCode::Convolution) return op.get();
  return nullptr;
}

TEST(ConvGradientTest, LeavesOtherConvolutions) {
  struct Case {
    const char* what;
    std::string text;
  };
  const std::vector<Case> cases = {
      {"a filter form whose window is no larger than its result",
       R"(func.func @main(%x: tensor<4x3x5x5xf32>, %dy: tensor<4x2x3x3xf32>) -> tensor<2x3x3x3xf32> {
  %r = stablehlo.convolution(%x, %dy) dim_numbers = [f, b, 0, 1]x[i, o, 0, 1]->[f, b, 0, 1], window = {stride = [1, 1], pad = [[0, 0], [0, 0]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<4x3x5x5xf32>, tensor<4x2x3x3xf32>) -> tensor<2x3x3x3xf32>
  func.return %r : tensor<2x3x3x3xf32>
})"},
      {"window reversal",
       R"(func.func @main(%dy: tensor<2x4x5x5xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<2x3x9x9xf32> {
  %r = stablehlo.convolution(%dy, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2], reverse = [true, false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x5x5xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x9x9xf32>
  func.return %r : tensor<2x3x9x9xf32>
})"},
      {"a window stride beside the lhs dilation",
       R"(func.func @main(%dy: tensor<2x4x5x5xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<2x3x5x5xf32> {
  %r = stablehlo.convolution(%dy, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[1, 1], [1, 1]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x5x5xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x5x5xf32>
  func.return %r : tensor<2x3x5x5xf32>
})"},
      {"padding larger than the dilated window (a negative forward padding)",
       R"(func.func @main(%dy: tensor<2x4x5x5xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<2x3x13x13xf32> {
  %r = stablehlo.convolution(%dy, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[3, 3], [3, 3]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x5x5xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x13x13xf32>
  func.return %r : tensor<2x3x13x13xf32>
})"},
  };
  for (const Case& c : cases) {
    Expected<Module> m = parseOne(c.text);
    ASSERT_TRUE(m) << c.what << ": " << m.status().toString();
    const Operation* op = firstConvolution(*m);
    ASSERT_NE(op, nullptr);
    EXPECT_FALSE(recognizeConvolutionGradient(*op).has_value()) << c.what;
  }
}

// A ConvTranspose as PyTorch exports it (lhs dilation, padding k-1-p and k-1-p+output_padding)
// is the data gradient of the strided convolution it transposes.
TEST(ConvGradientTest, TakesATransposedConvolution) {
  Expected<Module> m = parseOne(
      R"(func.func @main(%dy: tensor<2x4x5x6xf32>, %w: tensor<3x4x3x3xf32>) -> tensor<2x3x10x12xf32> {
  %r = stablehlo.convolution(%dy, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [1, 1], pad = [[1, 2], [1, 2]], lhs_dilate = [2, 2]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x4x5x6xf32>, tensor<3x4x3x3xf32>) -> tensor<2x3x10x12xf32>
  func.return %r : tensor<2x3x10x12xf32>
})");
  ASSERT_TRUE(m) << m.status().toString();
  std::optional<ConvolutionGradient> g = recognizeConvolutionGradient(*firstConvolution(*m));
  ASSERT_TRUE(g.has_value());
  EXPECT_EQ(g->kind, Kind::kData);
  EXPECT_EQ(g->batch, 2);
  EXPECT_EQ(g->inFeatures, 3);
  EXPECT_EQ(g->outFeatures, 4);
  EXPECT_EQ(g->inputSize, (Dims{10, 12}));
  EXPECT_EQ(g->outputSize, (Dims{5, 6}));
  EXPECT_EQ(g->strides, (Dims{2, 2}));
  EXPECT_EQ(g->padding, (Dims{1, 1}));
  EXPECT_EQ(g->wDims, (Dims{0, 1, 2, 3}));
}

}  // namespace
}  // namespace wf
