// stablehlo.convolution through cuDNN against the CPU backend: PyTorch (NCHW/OIHW) and JAX
// (NHWC/HWIO) layouts, strides, dilation, padding, feature groups (depthwise too), 1-d; f32 is
// true f32 unless TF32 is allowed. The direct kernel: integers (results of other widths too) and
// batch groups (every GPU type).
#include <optional>

#include "on_gpu_util.h"

namespace wf::cudatest {
namespace {

std::string ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

struct ConvCase {
  std::vector<int64_t> x, w, y;
  // input batch, feature, spatial...; kernel in, out, spatial...; output batch, feature, spatial...
  std::vector<int64_t> in, kernel, out;
  std::vector<int64_t> strides, dilation, padding;  // padding: lo, hi per spatial dim
  int64_t groups = 1;
  int64_t batchGroups = 1;
  std::vector<int64_t> lhsDilation = {};  // none if empty
};

// `result`: the result's element type (none: the operands').
std::string convProgram(const ConvCase& c, ElementType et, std::optional<ElementType> result = std::nullopt) {
  const size_t r = c.in.size() - 2;
  std::vector<int64_t> inSp(c.in.begin() + 2, c.in.end()), kSp(c.kernel.begin() + 2, c.kernel.end()),
      outSp(c.out.begin() + 2, c.out.end());
  std::string pad = "dense<[";
  for (size_t d = 0; d < r; ++d)
    pad += (d ? ", [" : "[") + std::to_string(c.padding[2 * d]) + ", " + std::to_string(c.padding[2 * d + 1]) + "]";
  pad += "]> : tensor<" + std::to_string(r) + "x2xi64>";
  const std::string attrs =
      "batch_group_count = " + std::to_string(c.batchGroups) + " : i64, feature_group_count = " +
      std::to_string(c.groups) +
      " : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = " + std::to_string(c.in[0]) +
      ", input_feature_dimension = " + std::to_string(c.in[1]) + ", input_spatial_dimensions = [" + ints(inSp) +
      "], kernel_input_feature_dimension = " + std::to_string(c.kernel[0]) + ", kernel_output_feature_dimension = " +
      std::to_string(c.kernel[1]) + ", kernel_spatial_dimensions = [" + ints(kSp) +
      "], output_batch_dimension = " + std::to_string(c.out[0]) + ", output_feature_dimension = " +
      std::to_string(c.out[1]) + ", output_spatial_dimensions = [" + ints(outSp) + "]>, window_strides = array<i64: " +
      ints(c.strides) + ">, rhs_dilation = array<i64: " + ints(c.dilation) + ">, padding = " + pad +
      (c.lhsDilation.empty() ? "" : ", lhs_dilation = array<i64: " + ints(c.lhsDilation) + ">");
  return oneOp("stablehlo.convolution", {Type::tensor(c.x, et), Type::tensor(c.w, et)},
               Type::tensor(c.y, result.value_or(et)), attrs);
}

const std::vector<ConvCase>& convCases() {
  static const std::vector<ConvCase> all = {
      // PyTorch: NCHW x OIHW, 3x3 same padding.
      {{2, 3, 9, 11}, {4, 3, 3, 3}, {2, 4, 9, 11}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      // Stride 2, dilation 2, padding 2.
      {{2, 4, 13, 12}, {6, 4, 3, 3}, {2, 6, 7, 6}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}},
      // Feature groups.
      {{2, 6, 8, 8}, {9, 2, 3, 3}, {2, 9, 8, 8}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 3},
      // Depthwise.
      {{1, 8, 10, 10}, {8, 1, 3, 3}, {1, 8, 8, 8}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 8},
      // JAX: NHWC x HWIO -> NHWC (the kernel is copied to OIHW first).
      {{2, 9, 10, 3}, {3, 3, 3, 5}, {2, 9, 10, 5}, {0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}, {1, 1}, {1, 1}, {1, 1, 1, 1}},
      // 1-d.
      {{2, 4, 17}, {5, 4, 3}, {2, 5, 15}, {0, 1, 2}, {1, 0, 2}, {0, 1, 2}, {1}, {1}, {0, 0}},
      // 1x1 convolution, stride 2 (ResNet's downsampling shortcut).
      {{2, 16, 14, 14}, {32, 16, 1, 1}, {2, 32, 7, 7}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
  };
  return all;
}

struct ConvType {
  ElementType et;
  double relL2;
};
const std::vector<ConvType>& convTypes() {
  static const std::vector<ConvType> all = {
      {ElementType::kF32, 1e-5}, {ElementType::kF16, 2e-3}, {ElementType::kBF16, 1e-2}, {ElementType::kF64, 1e-12}};
  return all;
}

class CudaConvolution : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CudaConvolution, MatchesCpu) {
  WF_REQUIRE_GPU();
  const ConvCase& c = convCases()[static_cast<size_t>(std::get<0>(GetParam()))];
  const ConvType& t = convTypes()[static_cast<size_t>(std::get<1>(GetParam()))];
  const std::string text = convProgram(c, t.et);
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();  // on the GPU, not the host
  expectMatchesCpu(text, {randomLiteral(Type::tensor(c.x, t.et), -1, 1), randomLiteral(Type::tensor(c.w, t.et), -1, 1)},
                   Tolerance{0, 0, t.relL2});
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaConvolution,
                         testing::Combine(testing::Range(0, static_cast<int>(convCases().size())),
                                          testing::Range(0, static_cast<int>(convTypes().size()))),
                         [](const auto& info) {
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" +
                                  typeName(convTypes()[static_cast<size_t>(std::get<1>(info.param))].et);
                         });

// TF32 for convolutions is its own switch (CompileOptions::allowTf32Convolutions, PyTorch's
// torch.backends.cudnn.allow_tf32): TF32 for matrix products alone leaves them true f32.
TEST(CudaConvolution, F32IsTrueF32UnlessTf32IsAllowed) {
  WF_REQUIRE_GPU();
  // 256 input channels x 3x3: a TF32 result would be off by ~1e-4 relative.
  const ConvCase c{{1, 256, 12, 12}, {32, 256, 3, 3}, {1, 32, 12, 12}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
                   {1, 1},         {1, 1},          {1, 1, 1, 1}};
  const std::string text = convProgram(c, ElementType::kF32);
  const std::vector<Literal> args = {randomLiteral(Type::tensor(c.x, ElementType::kF32), -1, 1),
                                     randomLiteral(Type::tensor(c.w, ElementType::kF32), -1, 1)};
  expectMatchesCpu(text, args, Tolerance{0, 0, 1e-5});
  CompileOptions matmulOnly;
  matmulOnly.allowTf32 = true;
  expectMatchesCpu(text, args, Tolerance{0, 0, 1e-5}, matmulOnly);
  CompileOptions tf32;
  tf32.allowTf32Convolutions = true;
  expectMatchesCpu(text, args, Tolerance{0, 0, 5e-3}, tf32);
}

TEST(CudaConvolution, AsymmetricPaddingRunsOnTheGpu) {
  WF_REQUIRE_GPU();
  const ConvCase c{{1, 2, 8, 8}, {3, 2, 3, 3}, {1, 3, 4, 4}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
                   {2, 2},       {1, 1},       {0, 1, 0, 1}};
  const std::string text = convProgram(c, ElementType::kF32);
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();  // on the GPU, not the host
  expectMatchesCpu(text, {randomLiteral(Type::tensor(c.x, ElementType::kF32)), randomLiteral(Type::tensor(c.w, ElementType::kF32))},
                   Tolerance{0, 0, 1e-6});
}

// Integer convolutions have no cuDNN kernel: a direct kernel runs them, every case above, with
// full-range values whose products and sums wrap as on the CPU.
TEST(CudaConvolution, IntegerConvolutionsMatchCpuBitForBit) {
  WF_REQUIRE_GPU();
  for (ElementType et : {ElementType::kSI8, ElementType::kSI32, ElementType::kSI64, ElementType::kUI16})
    for (const ConvCase& c : convCases()) {
      const std::string text = convProgram(c, et);
      SCOPED_TRACE(text);
      Module m = parse(text);
      auto exe = cudaBackend().compile(m, *mainOf(m), {});
      ASSERT_TRUE(exe) << exe.status().toString();
      expectMatchesCpu(text, {randomLiteral(Type::tensor(c.x, et), 1, 0), randomLiteral(Type::tensor(c.w, et), 1, 0)},
                       Tolerance{});
    }
}

// Integer operands with a result of another width (si8 x si8 -> si32): operands widened by their
// own signedness, products and sums wrapping in the result type, as on the CPU. Every case above
// (feature groups and depthwise included), full-range values.
TEST(CudaConvolution, MixedWidthIntegerConvolutionsMatchCpu) {
  WF_REQUIRE_GPU();
  const std::vector<std::pair<ElementType, ElementType>> types = {
      {ElementType::kSI8, ElementType::kSI32},  {ElementType::kUI8, ElementType::kSI32},
      {ElementType::kSI16, ElementType::kSI32}, {ElementType::kSI8, ElementType::kSI64},
      {ElementType::kSI16, ElementType::kSI64}, {ElementType::kUI8, ElementType::kUI64},
      {ElementType::kSI32, ElementType::kSI8},  // narrowing wraps
  };
  for (const auto& [in, out] : types)
    for (const ConvCase& c : convCases()) {
      const std::string text = convProgram(c, in, out);
      SCOPED_TRACE(text);
      expectOnGpuMatchesCpu(text, {randomLiteral(Type::tensor(c.x, in), 1, 0), randomLiteral(Type::tensor(c.w, in), 1, 0)},
                            Tolerance{});
    }
}

// batch_group_count G: the input batch splits into G groups and the kernel's (and result's)
// output features into G chunks; chunk g convolves batch group g. cuDNN has no batch groups: the
// direct kernel runs them.
const std::vector<ConvCase>& batchGroupCases() {
  static const std::vector<ConvCase> all = {
      // NCHW x OIHW, 3 batch groups.
      {{6, 3, 7, 8}, {6, 3, 3, 3}, {2, 6, 5, 6}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {1, 1}, {1, 1}, {0, 0, 0, 0}, 1, 3},
      // NHWC x HWIO -> NHWC, padding, 4 batch groups (one result batch).
      {{4, 9, 10, 3}, {3, 3, 3, 8}, {1, 9, 10, 8}, {0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1, 4},
      // Stride 2, dilation 2, padding 2, 2 batch groups of 2.
      {{4, 2, 13, 12}, {6, 2, 3, 3}, {2, 6, 7, 6}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}, 1, 2},
      // 1-d, asymmetric padding.
      {{6, 2, 17}, {4, 2, 3}, {3, 4, 16}, {0, 1, 2}, {1, 0, 2}, {0, 1, 2}, {1}, {1}, {1, 0}, 1, 2},
      // The weight gradient's form (batch and feature roles swapped), lhs dilation: the StableHLO
      // interpreter's convolution_batch_group_count_4 layout, [0, b, 1, f] x [0, 1, i, o] -> [b, 0, 1, f].
      {{1, 4, 4, 1}, {1, 2, 1, 4}, {1, 1, 2, 4}, {1, 3, 0, 2}, {2, 3, 0, 1}, {0, 3, 1, 2}, {4, 4}, {1, 1}, {0, 0, 0, 0}, 1, 4, {2, 2}},
      // Feature groups, the other kind (the spec allows one kind at a time): floats on cuDNN.
      {{2, 6, 8, 8}, {9, 2, 3, 3}, {2, 9, 8, 8}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 3, 1},
  };
  return all;
}

TEST(CudaConvolution, BatchGroupsMatchCpuForEveryType) {
  WF_REQUIRE_GPU();
  for (const ConvCase& c : batchGroupCases()) {
    for (const ConvType& t : convTypes()) {
      const std::string text = convProgram(c, t.et);
      SCOPED_TRACE(text);
      expectOnGpuMatchesCpu(text, {randomLiteral(Type::tensor(c.x, t.et), -1, 1), randomLiteral(Type::tensor(c.w, t.et), -1, 1)},
                            Tolerance{0, 0, t.relL2});
    }
    for (ElementType et : {ElementType::kSI8, ElementType::kSI32, ElementType::kSI64, ElementType::kUI16}) {
      const std::string text = convProgram(c, et);
      SCOPED_TRACE(text);
      expectOnGpuMatchesCpu(text, {randomLiteral(Type::tensor(c.x, et), 1, 0), randomLiteral(Type::tensor(c.w, et), 1, 0)},
                            Tolerance{});
    }
    const std::string text = convProgram(c, ElementType::kSI8, ElementType::kSI32);
    SCOPED_TRACE(text);
    expectOnGpuMatchesCpu(text, {randomLiteral(Type::tensor(c.x, ElementType::kSI8), 1, 0),
                                 randomLiteral(Type::tensor(c.w, ElementType::kSI8), 1, 0)},
                          Tolerance{});
  }
}

// The StableHLO interpreter tests convolution_op_test_si8 and convolution_batch_group_count_4, as
// written there, on fresh inputs.
TEST(CudaConvolution, InterpreterTestsRunOnTheGpu) {
  WF_REQUIRE_GPU();
  const std::string si8 = R"(func.func @main(%lhs: tensor<1x4x4x1xi8>, %rhs: tensor<3x3x1x1xi8>) -> tensor<1x2x2x1xi32> {
  %result = stablehlo.convolution(%lhs, %rhs)
    dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {
      stride = [4, 4],
      lhs_dilate = [2, 2]
    } {
      batch_group_count = 1 : i64,
      feature_group_count = 1 : i64,
      precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
    }
  : (tensor<1x4x4x1xi8>, tensor<3x3x1x1xi8>) -> tensor<1x2x2x1xi32>
  func.return %result : tensor<1x2x2x1xi32>
}
)";
  expectOnGpuMatchesCpu(si8, {randomLiteral(Type::tensor({1, 4, 4, 1}, ElementType::kSI8), 1, 0),
                              randomLiteral(Type::tensor({3, 3, 1, 1}, ElementType::kSI8), 1, 0)},
                        Tolerance{});
  const std::string batchGroups = R"(func.func @main(%lhs: tensor<1x4x4x1xi64>, %rhs: tensor<1x2x1x4xi64>) -> tensor<1x1x2x4xi64> {
  %result = stablehlo.convolution(%lhs, %rhs)
    dim_numbers = [0, b, 1, f]x[0, 1, i, o]->[b, 0, 1, f],
    window = {
      stride = [4, 4],
      lhs_dilate = [2, 2]
    } {
      batch_group_count = 4 : i64,
      feature_group_count = 1 : i64,
      precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>]
    }
  : (tensor<1x4x4x1xi64>, tensor<1x2x1x4xi64>) -> tensor<1x1x2x4xi64>
  func.return %result : tensor<1x1x2x4xi64>
}
)";
  expectOnGpuMatchesCpu(batchGroups, {randomLiteral(Type::tensor({1, 4, 4, 1}, ElementType::kSI64), 1, 0),
                                      randomLiteral(Type::tensor({1, 2, 1, 4}, ElementType::kSI64), 1, 0)},
                        Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest
