// The gradients of convolutions on the GPU: autodiff's data and filter gradient convolutions
// (ir/conv_gradient.h) run as cuDNN's backward kernels (convolution_backward.cpp), the others as
// forward convolutions. Each case of tests/unit/conv_gradient_cases.h is differentiated with
// addValueAndGradFunction and its value and gradients compared with the CPU interpreter on fresh
// random inputs, in f32 (true f32, and with TF32 allowed), f16, bf16 and f64; the executable's
// counts say which convolutions took the backward kernels, so a recognition that silently stops
// matching fails here.
#include <optional>

#include "../unit/conv_gradient_cases.h"
#include "autodiff/autodiff.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

using convgrad::ConvGradCase;

struct GradType {
  const char* name;
  ElementType et;
  bool tf32;
  double relL2;
};

const std::vector<GradType>& gradTypes() {
  static const std::vector<GradType> all = {
      {"f32", ElementType::kF32, false, 1e-5},     {"f32_tf32", ElementType::kF32, true, 5e-3},
      {"f16", ElementType::kF16, false, 3e-3},     {"bf16", ElementType::kBF16, false, 2e-2},
      {"f64", ElementType::kF64, false, 1e-12},
  };
  return all;
}

// The case's forward program with its value-and-gradient function as @main (x, w, r) -> (y * r,
// dx, dw).
std::optional<Module> gradientModule(const ConvGradCase& c, ElementType et) {
  Module m = parse(convgrad::forwardProgram(c, et));
  if (!m.lookupFunction("forward")) return std::nullopt;
  const std::vector<int> wrt = {0, 1};
  Expected<std::string> name = addValueAndGradFunction(m, "forward", wrt, "main");
  EXPECT_TRUE(name) << name.status().toString();
  if (!name) return std::nullopt;
  return m;
}

std::vector<Literal> randomArgs(const ConvGradCase& c, ElementType et) {
  return {randomLiteral(Type::tensor(c.xShape(), et), -1, 1), randomLiteral(Type::tensor(c.wShape(), et), -1, 1),
          randomLiteral(Type::tensor(c.yShape(), et), -1, 1)};
}

class CudaConvolutionBackward : public ::testing::TestWithParam<std::tuple<ConvGradCase, GradType>> {};

TEST_P(CudaConvolutionBackward, GradientsMatchTheInterpreter) {
  WF_REQUIRE_GPU();
  const auto& [c, type] = GetParam();
  std::optional<Module> m = gradientModule(c, type.et);
  ASSERT_TRUE(m.has_value());
  CompileOptions options;
  options.allowTf32Convolutions = type.tf32;
  auto exe = cudaBackend().compile(*m, *mainOf(*m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  // The recognised gradients took cuDNN's backward kernels; the others the forward path. cuDNN 9
  // on the H100 offers no backward algorithm for channels-last f32 and f64 (it declines, and the
  // forward path runs them, as the values below check).
  const ExecutableStats stats = (*exe)->stats();
  const bool cudnnDeclines =
      c.layout == convgrad::Layout::kNHWC && (type.et == ElementType::kF32 || type.et == ElementType::kF64);
  EXPECT_EQ(stats.convolutionBackwardData, c.dataTaken && !cudnnDeclines ? 1 : 0);
  EXPECT_EQ(stats.convolutionBackwardFilter, c.filterTaken && !cudnnDeclines ? 1 : 0);
  // Twice: the second run replays the captured CUDA graph.
  for (int run = 0; run < 2; ++run) {
    const std::vector<Literal> args = randomArgs(c, type.et);
    auto want = runCpu(*m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    ASSERT_EQ(got->outputs.size(), 3u);
    const char* what[] = {"value", "dx", "dw"};
    for (size_t i = 0; i < 3; ++i)
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{0, 0, type.relL2}), "")
          << what[i] << ", run " << run;
  }
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaConvolutionBackward,
                         ::testing::Combine(::testing::ValuesIn(convgrad::convGradCases()),
                                            ::testing::ValuesIn(gradTypes())),
                         [](const auto& info) {
                           return std::get<0>(info.param).name + "_" + std::get<1>(info.param).name;
                         });

// ResNet-50's shapes at a small batch: the 7x7 stride-2 stem on 224x224 and a 3x3 stride-2
// bottleneck convolution on 56x56 (the filter gradient's window is the whole 112x112 or 28x28
// output), through the backward kernels in f32 and bf16.
TEST(CudaConvolutionBackwardLarge, ResNetShapes) {
  WF_REQUIRE_GPU();
  const std::vector<ConvGradCase> cases = {
      {"stem", 2, 3, 64, 1, {224, 224}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}},
      {"bottleneck_3x3_stride2", 2, 128, 128, 1, {56, 56}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {"downsample_1x1_stride2", 2, 256, 512, 1, {56, 56}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
  };
  for (const ConvGradCase& c : cases)
    for (const GradType& type : {gradTypes()[0], gradTypes()[3]}) {
      SCOPED_TRACE(c.name + " " + type.name);
      std::optional<Module> m = gradientModule(c, type.et);
      ASSERT_TRUE(m.has_value());
      auto exe = cudaBackend().compile(*m, *mainOf(*m), {});
      ASSERT_TRUE(exe) << exe.status().toString();
      EXPECT_EQ((*exe)->stats().convolutionBackwardData, 1);
      EXPECT_EQ((*exe)->stats().convolutionBackwardFilter, 1);
      const std::vector<Literal> args = randomArgs(c, type.et);
      auto want = runCpu(*m, cloneAll(args));
      ASSERT_TRUE(want) << want.status().toString();
      auto got = (*exe)->run(args);
      ASSERT_TRUE(got) << got.status().toString();
      for (size_t i = 1; i < 3; ++i)
        EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{0, 0, type.relL2}), "") << "result " << i;
    }
}

}  // namespace
}  // namespace wf::cudatest
