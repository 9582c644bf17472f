// Convolutions cuDNN does not take directly, run as dilate-then-convolve on the GPU, against the
// CPU backend: lhs dilation (transposed convolution, as PyTorch's ConvTranspose exports: stride
// as lhs_dilation, asymmetric padding for output_padding), asymmetric and negative padding,
// window reversal, feature groups, 1-d, the JAX layouts; every float type.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string ints(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

struct TConvCase {
  std::vector<int64_t> x, w, y;
  // input batch, feature, spatial...; kernel in, out, spatial...; output batch, feature, spatial...
  std::vector<int64_t> in, kernel, out;
  std::vector<int64_t> strides, lhsDilation, rhsDilation, padding;  // padding: lo, hi per spatial dim
  std::vector<int64_t> reversal;                                     // empty: none
  int64_t groups = 1;
};

std::string tconvProgram(const TConvCase& c, ElementType et) {
  const size_t r = c.in.size() - 2;
  std::vector<int64_t> inSp(c.in.begin() + 2, c.in.end()), kSp(c.kernel.begin() + 2, c.kernel.end()),
      outSp(c.out.begin() + 2, c.out.end());
  std::string pad = "dense<[";
  for (size_t d = 0; d < r; ++d)
    pad += (d ? ", [" : "[") + std::to_string(c.padding[2 * d]) + ", " + std::to_string(c.padding[2 * d + 1]) + "]";
  pad += "]> : tensor<" + std::to_string(r) + "x2xi64>";
  std::string reversal;
  if (!c.reversal.empty()) {
    reversal = ", window_reversal = array<i1: ";
    for (size_t d = 0; d < c.reversal.size(); ++d) reversal += std::string(d ? ", " : "") + (c.reversal[d] ? "true" : "false");
    reversal += ">";
  }
  const std::string attrs =
      "batch_group_count = 1 : i64, feature_group_count = " + std::to_string(c.groups) +
      " : i64, dimension_numbers = #stablehlo.conv<raw input_batch_dimension = " + std::to_string(c.in[0]) +
      ", input_feature_dimension = " + std::to_string(c.in[1]) + ", input_spatial_dimensions = [" + ints(inSp) +
      "], kernel_input_feature_dimension = " + std::to_string(c.kernel[0]) + ", kernel_output_feature_dimension = " +
      std::to_string(c.kernel[1]) + ", kernel_spatial_dimensions = [" + ints(kSp) +
      "], output_batch_dimension = " + std::to_string(c.out[0]) + ", output_feature_dimension = " +
      std::to_string(c.out[1]) + ", output_spatial_dimensions = [" + ints(outSp) + "]>, window_strides = array<i64: " +
      ints(c.strides) + ">, lhs_dilation = array<i64: " + ints(c.lhsDilation) + ">, rhs_dilation = array<i64: " +
      ints(c.rhsDilation) + ">, padding = " + pad + reversal;
  return oneOp("stablehlo.convolution", {Type::tensor(c.x, et), Type::tensor(c.w, et)}, Type::tensor(c.y, et), attrs);
}

const std::vector<TConvCase>& tconvCases() {
  static const std::vector<TConvCase> all = {
      // ConvTranspose2d(4, 3, 3, stride 2, output_padding 1): lhs dilation 2, padding [2, 3].
      {{2, 4, 5, 6}, {3, 4, 3, 3}, {2, 3, 12, 14}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {1, 1}, {2, 2}, {1, 1}, {2, 3, 2, 3}, {}},
      // Asymmetric padding, stride 2.
      {{1, 2, 8, 8}, {3, 2, 3, 3}, {1, 3, 4, 4}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {2, 2}, {1, 1}, {1, 1}, {0, 1, 0, 1}, {}},
      // Negative padding (crops) on one side, positive on the other.
      {{1, 3, 10, 9}, {2, 3, 3, 3}, {1, 2, 9, 6}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {1, 1}, {1, 1}, {1, 1}, {-1, 2, 1, -2}, {}},
      // Window reversal of one spatial dim (symmetric padding: only the kernel copy flips it).
      {{2, 3, 7, 7}, {4, 3, 3, 3}, {2, 4, 7, 7}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {1, 1}, {1, 1}, {1, 1}, {1, 1, 1, 1}, {1, 0}},
      // 1-d transposed convolution, lhs dilation 3, padding [1, 0].
      {{2, 3, 6}, {2, 3, 4}, {2, 2, 14}, {0, 1, 2}, {1, 0, 2}, {0, 1, 2}, {1}, {3}, {1}, {1, 0}, {}},
      // JAX conv_transpose layouts: NHWC x HWIO -> NHWC, lhs dilation 2, asymmetric padding.
      {{1, 5, 5, 2}, {3, 3, 2, 3}, {1, 10, 10, 3}, {0, 3, 1, 2}, {2, 3, 0, 1}, {0, 3, 1, 2},
       {1, 1}, {2, 2}, {1, 1}, {1, 2, 2, 1}, {}},
      // Feature groups with lhs dilation and rhs dilation.
      {{1, 4, 5, 5}, {6, 2, 3, 3}, {1, 6, 9, 9}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {1, 1}, {2, 2}, {2, 2}, {2, 2, 2, 2}, {}, 2},
      // Stride together with lhs dilation and a cropping high pad.
      {{2, 2, 7, 4}, {2, 2, 2, 3}, {2, 2, 6, 4}, {0, 1, 2, 3}, {1, 0, 2, 3}, {0, 1, 2, 3},
       {2, 2}, {2, 2}, {1, 1}, {1, -1, 2, 1}, {0, 1}},
  };
  return all;
}

struct TConvType {
  ElementType et;
  double relL2;
};
const std::vector<TConvType>& tconvTypes() {
  static const std::vector<TConvType> all = {
      {ElementType::kF32, 1e-5}, {ElementType::kF16, 2e-3}, {ElementType::kBF16, 1e-2}, {ElementType::kF64, 1e-12}};
  return all;
}

class CudaTransposedConvolution : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CudaTransposedConvolution, RunsOnTheGpuAndMatchesCpu) {
  WF_REQUIRE_GPU();
  const TConvCase& c = tconvCases()[static_cast<size_t>(std::get<0>(GetParam()))];
  const TConvType& t = tconvTypes()[static_cast<size_t>(std::get<1>(GetParam()))];
  const std::string text = tconvProgram(c, t.et);
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();  // on the GPU, not the host
  for (int trial = 0; trial < 2; ++trial)
    expectMatchesCpu(text, {randomLiteral(Type::tensor(c.x, t.et), -1, 1), randomLiteral(Type::tensor(c.w, t.et), -1, 1)},
                     Tolerance{0, 0, t.relL2});
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaTransposedConvolution,
                         testing::Combine(testing::Range(0, static_cast<int>(tconvCases().size())),
                                          testing::Range(0, static_cast<int>(tconvTypes().size()))),
                         [](const auto& info) {
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" +
                                  typeName(tconvTypes()[static_cast<size_t>(std::get<1>(info.param))].et);
                         });

}  // namespace
}  // namespace wf::cudatest
