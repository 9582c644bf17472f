// Channels-last storage around bf16 (and TF32) convolutions: the planner stores the activations between
// convolutions and fused groups NHWC (logical NCHW), the convolutions read and write them so and
// the fused kernels index them by logical coordinates. Compared with the CPU interpreter (which
// knows nothing of storage order) on fresh random inputs.
#include "autodiff/autodiff.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string conv(const std::string& x, const std::string& w, const std::string& result, int64_t n, int64_t c,
                 int64_t hw, int64_t stride) {
  const int64_t out = (hw + 2 - 3) / stride + 1;
  const std::string xt = "tensor<" + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(hw) + "x" +
                         std::to_string(hw) + "xbf16>";
  const std::string yt = "tensor<" + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(out) + "x" +
                         std::to_string(out) + "xbf16>";
  const std::string wt = "tensor<" + std::to_string(c) + "x" + std::to_string(c) + "x3x3xbf16>";
  return "  " + result + " = \"stablehlo.convolution\"(" + x + ", " + w +
         ") {batch_group_count = 1 : i64, feature_group_count = 1 : i64, dimension_numbers = "
         "#stablehlo.conv<raw input_batch_dimension = 0, input_feature_dimension = 1, input_spatial_dimensions = "
         "[2, 3], kernel_input_feature_dimension = 1, kernel_output_feature_dimension = 0, "
         "kernel_spatial_dimensions = [2, 3], output_batch_dimension = 0, output_feature_dimension = 1, "
         "output_spatial_dimensions = [2, 3]>, window_strides = array<i64: " +
         std::to_string(stride) + ", " + std::to_string(stride) +
         ">, padding = dense<[[1, 1], [1, 1]]> : tensor<2x2xi64>} : (" + xt + ", " + wt + ") -> " + yt + "\n";
}

// A residual block as the bf16 export writes it: convolutions in bf16, the rest in f32.
std::string residualBlock() {
  const std::string f = "tensor<2x16x10x10xf32>", b = "tensor<2x16x10x10xbf16>";
  std::string s = "func.func @main(%x: " + b + ", %w1: tensor<16x16x3x3xbf16>, %w2: tensor<16x16x3x3xbf16>, %g: tensor<16xf32>) -> " + f + " {\n";
  s += conv("%x", "%w1", "%c1", 2, 16, 10, 1);
  s += "  %f1 = \"stablehlo.convert\"(%c1) : (" + b + ") -> " + f + "\n";
  s += "  %gb = \"stablehlo.broadcast_in_dim\"(%g) {broadcast_dimensions = array<i64: 1>} : (tensor<16xf32>) -> " + f + "\n";
  s += "  %m = \"stablehlo.multiply\"(%f1, %gb) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : " + f + "} : () -> " + f + "\n";
  s += "  %r = \"stablehlo.maximum\"(%m, %zero) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  %rb = \"stablehlo.convert\"(%r) : (" + f + ") -> " + b + "\n";
  s += conv("%rb", "%w2", "%c2", 2, 16, 10, 1);
  s += "  %f2 = \"stablehlo.convert\"(%c2) : (" + b + ") -> " + f + "\n";
  s += "  %t = \"stablehlo.transpose\"(%f2) {permutation = array<i64: 0, 1, 3, 2>} : (" + f + ") -> " + f + "\n";
  s += "  %s = \"stablehlo.add\"(%t, %r) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  func.return %s : " + f + "\n}\n";
  return s;
}

// Fresh arguments of residualBlock() with its convolutions in `conv` (bf16, or f32 throughout).
std::vector<Literal> residualBlockArgs(ElementType conv) {
  return {randomLiteral(Type::tensor({2, 16, 10, 10}, conv), -1, 1),
          randomLiteral(Type::tensor({16, 16, 3, 3}, conv), -0.3, 0.3),
          randomLiteral(Type::tensor({16, 16, 3, 3}, conv), -0.3, 0.3),
          randomLiteral(Type::tensor({16}, ElementType::kF32), 0.5, 1.5)};
}

TEST(CudaChannelsLast, ResidualBlockMatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  const std::string text = residualBlock();
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  // The two convolutions' outputs and the second one's input at least; the result stays
  // row-major.
  EXPECT_GE(info.channelsLastValues, 3);
  for (int run = 0; run < 2; ++run) {
    std::vector<Literal> args = residualBlockArgs(ElementType::kBF16);
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    // bf16 convolutions accumulate in another order than the interpreter's.
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 1e-2}), "");
  }
  // Without fusion no activation qualifies (plain kernels read row-major), and the results agree.
  CompileOptions unfused;
  unfused.fuse = false;
  auto plain = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  EXPECT_EQ((*plain)->stats().channelsLastValues, 0);
}

// The residual block in f32 throughout (an fp32 export). With TF32 allowed for convolutions its
// activations are stored channels-last as in bf16 (cuDNN's NHWC TF32 kernels), and the
// convolutions run without their epilogue graphs, which are not taken for f32; in true f32 they
// stay row-major and match the interpreter to f32 rounding.
TEST(CudaChannelsLast, F32ResidualBlockIsChannelsLastWithTf32) {
  WF_REQUIRE_GPU();
  std::string text = residualBlock();
  for (size_t at = text.find("bf16"); at != std::string::npos; at = text.find("bf16", at)) text.replace(at, 4, "f32");
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  CompileOptions tf32;
  tf32.allowTf32Convolutions = true;
  for (const bool allowTf32 : {true, false}) {
    SCOPED_TRACE(allowTf32 ? "TF32 convolutions" : "true f32");
    auto exe = cudaBackend().compile(m, *mainOf(m), allowTf32 ? tf32 : CompileOptions{});
    ASSERT_TRUE(exe) << exe.status().toString();
    const ExecutableStats info = (*exe)->stats();
    if (allowTf32)
      EXPECT_GE(info.channelsLastValues, 3);
    else
      EXPECT_EQ(info.channelsLastValues, 0);
    EXPECT_EQ(info.convolutionEpilogues, 0);
    std::vector<Literal> args = residualBlockArgs(ElementType::kF32);
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    // TF32 rounds the operands to 10 mantissa bits; true f32 sums in another order only.
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], allowTf32 ? Tolerance{0, 0, 5e-3} : Tolerance{0, 0, 1e-5}),
              "");
  }
}

// The second convolution reads a channels-last input, so cuDNN takes its filter [O, 3, 3, I]:
// with the weights bound, that repacking is a step of its own hoisted into the prologue, done
// once per bind and not on every run. Binding new weights between runs repacks them again.
TEST(CudaChannelsLast, BoundFiltersAreRepackedOncePerBind) {
  WF_REQUIRE_GPU();
  Module m = parse(residualBlock());
  ASSERT_TRUE(mainOf(m));
  CompileOptions options;
  options.boundArguments = {1, 2, 3};
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  // %w2's repacking (%w1's convolution reads the argument %x, stored row-major: its filter is
  // read as it is).
  EXPECT_GE((*exe)->stats().hoistedSteps, 1);
  std::vector<Literal> weights = {randomLiteral(Type::tensor({16, 16, 3, 3}, ElementType::kBF16), -0.3, 0.3),
                                  randomLiteral(Type::tensor({16, 16, 3, 3}, ElementType::kBF16), -0.3, 0.3),
                                  randomLiteral(Type::tensor({16}, ElementType::kF32), 0.5, 1.5)};
  for (size_t i = 0; i < weights.size(); ++i) ASSERT_TRUE((*exe)->bindArgument(i + 1, weights[i]).isOk());
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    if (run == 2) {  // new filters for the second convolution
      weights[1] = randomLiteral(Type::tensor({16, 16, 3, 3}, ElementType::kBF16), -0.3, 0.3);
      ASSERT_TRUE((*exe)->bindArgument(2, weights[1]).isOk());
    }
    Literal x = randomLiteral(Type::tensor({2, 16, 10, 10}, ElementType::kBF16), -1, 1);
    std::vector<Literal> all = {x.clone(), weights[0].clone(), weights[1].clone(), weights[2].clone()};
    auto want = runCpu(m, std::move(all));
    ASSERT_TRUE(want) << want.status().toString();
    std::vector<Literal> batch = {x.clone()};
    auto got = (*exe)->run(batch);
    ASSERT_TRUE(got) << got.status().toString();
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 1e-2}), "");
  }
}

// An image network's stem as the bf16 export writes it: a 7x7 stride-2 convolution of 3 colour
// channels (its input, an argument, row-major), a ReLU in f32, a 3x3 stride-2 max pool with
// padding (channels-last in and out), then a 3x3 convolution. Sizes that are no multiple of the
// kernels' tiles: 21x21 images, `k` channels (12: the pool reads four channels per load; 6: one).
std::string stem(int k) {
  const std::string n = std::to_string(k);
  const std::string x = "tensor<2x3x21x21xbf16>", c = "tensor<2x" + n + "x11x11xbf16>", f = "tensor<2x" + n + "x11x11xf32>",
                    p = "tensor<2x" + n + "x6x6xbf16>", s = "tensor<bf16>", v = "tensor<" + n + "xf32>",
                    w1 = "tensor<" + n + "x3x7x7xbf16>", w2 = "tensor<" + n + "x" + n + "x3x3xbf16>";
  std::string t = "func.func @main(%x: " + x + ", %w1: " + w1 + ", %g: " + v + ", %w2: " + w2 + ") -> " + p + " {\n";
  t += "  %c1 = stablehlo.convolution(%x, %w1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = "
       "{stride = [2, 2], pad = [[3, 3], [3, 3]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" +
       x + ", " + w1 + ") -> " + c + "\n";
  t += "  %f1 = \"stablehlo.convert\"(%c1) : (" + c + ") -> " + f + "\n";
  t += "  %gb = \"stablehlo.broadcast_in_dim\"(%g) {broadcast_dimensions = array<i64: 1>} : (" + v + ") -> " + f + "\n";
  t += "  %m = \"stablehlo.add\"(%f1, %gb) : (" + f + ", " + f + ") -> " + f + "\n";
  t += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : " + f + "} : () -> " + f + "\n";
  t += "  %r = \"stablehlo.maximum\"(%m, %zero) : (" + f + ", " + f + ") -> " + f + "\n";
  t += "  %rb = \"stablehlo.convert\"(%r) : (" + f + ") -> " + c + "\n";
  t += "  %ninf = \"stablehlo.constant\"() {value = dense<0xFF80> : " + s + "} : () -> " + s + "\n";
  t += "  %pool = \"stablehlo.reduce_window\"(%rb, %ninf) ({\n  ^bb0(%a: " + s + ", %b: " + s + "):\n"
       "    %mx = \"stablehlo.maximum\"(%a, %b) : (" + s + ", " + s + ") -> " + s + "\n"
       "    \"stablehlo.return\"(%mx) : (" + s + ") -> ()\n"
       "  }) {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = "
       "dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (" + c + ", " + s + ") -> " + p + "\n";
  t += "  %c2 = stablehlo.convolution(%pool, %w2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = "
       "{stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" +
       p + ", " + w2 + ") -> " + p + "\n";
  t += "  func.return %c2 : " + p + "\n}\n";
  return t;
}

class CudaChannelsLastStem : public testing::TestWithParam<int> {};

TEST_P(CudaChannelsLastStem, StemAndMaxPoolMatchTheInterpreter) {
  WF_REQUIRE_GPU();
  const int k = GetParam();
  Module m = parse(stem(k));
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  // The stem's output, the ReLU's bf16 value and the pool's output; the result stays row-major.
  EXPECT_GE((*exe)->stats().channelsLastValues, 3);
  for (int run = 0; run < 2; ++run) {
    std::vector<Literal> args = {randomLiteral(Type::tensor({2, 3, 21, 21}, ElementType::kBF16), -1, 1),
                                 randomLiteral(Type::tensor({k, 3, 7, 7}, ElementType::kBF16), -0.3, 0.3),
                                 randomLiteral(Type::tensor({k}, ElementType::kF32), -0.5, 0.5),
                                 randomLiteral(Type::tensor({k, k, 3, 3}, ElementType::kBF16), -0.3, 0.3)};
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 2e-2}), "");
  }
  // Without fusion (row-major everywhere) the results agree too.
  CompileOptions unfused;
  unfused.fuse = false;
  auto plain = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  EXPECT_EQ((*plain)->stats().channelsLastValues, 0);
}

INSTANTIATE_TEST_SUITE_P(Channels, CudaChannelsLastStem, testing::Values(12, 6));

// A training step's convolutions: two bf16 convolutions (3x3 stride 1, then 3x3 stride 2) with a
// ReLU between, differentiated by autodiff. The forward convolutions' outputs are stored NHWC;
// what the gradient convolutions of convolution_backward.cpp read or write stays row-major (that
// file says why), so layouts mix around them: the first convolution's output, NHWC, feeds the
// ReLU whose row-major output the second convolution reads, and so on.
std::string trainingPair() {
  const std::string x = "tensor<2x8x10x10xbf16>", h = x, y = "tensor<2x16x5x5xbf16>";
  std::string s = "func.func @forward(%x: " + x + ", %w1: tensor<8x8x3x3xbf16>, %w2: tensor<16x8x3x3xbf16>, %r: " +
                  y + ") -> " + y + " {\n";
  s += "  %c1 = stablehlo.convolution(%x, %w1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = "
       "{stride = [1, 1], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" +
       x + ", tensor<8x8x3x3xbf16>) -> " + h + "\n";
  s += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : " + h + "} : () -> " + h + "\n";
  s += "  %h = \"stablehlo.maximum\"(%c1, %zero) : (" + h + ", " + h + ") -> " + h + "\n";
  s += "  %c2 = stablehlo.convolution(%h, %w2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = "
       "{stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" +
       h + ", tensor<16x8x3x3xbf16>) -> " + y + "\n";
  s += "  %z = \"stablehlo.multiply\"(%c2, %r) : (" + y + ", " + y + ") -> " + y + "\n";
  s += "  func.return %z : " + y + "\n}\n";
  return s;
}

TEST(CudaChannelsLast, ConvolutionGradientsMatchTheInterpreter) {
  WF_REQUIRE_GPU();
  Module m = parse(trainingPair());
  ASSERT_TRUE(m.lookupFunction("forward"));
  const std::vector<int> wrt = {0, 1, 2};
  auto name = addValueAndGradFunction(m, "forward", wrt, "main");
  ASSERT_TRUE(name) << name.status().toString();
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  // Both weight gradients and the strided convolution's input gradient run as cuDNN's backward
  // kernels (the stride-1 input gradient is an ordinary convolution).
  EXPECT_EQ(info.convolutionBackwardFilter, 2);
  EXPECT_EQ(info.convolutionBackwardData, 1);
  // The forward convolutions' outputs, which only fused groups read.
  EXPECT_GE(info.channelsLastValues, 1);
  for (int run = 0; run < 2; ++run) {
    std::vector<Literal> args = {randomLiteral(Type::tensor({2, 8, 10, 10}, ElementType::kBF16), -1, 1),
                                 randomLiteral(Type::tensor({8, 8, 3, 3}, ElementType::kBF16), -0.3, 0.3),
                                 randomLiteral(Type::tensor({16, 8, 3, 3}, ElementType::kBF16), -0.3, 0.3),
                                 randomLiteral(Type::tensor({2, 16, 5, 5}, ElementType::kBF16), -1, 1)};
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    ASSERT_EQ(got->outputs.size(), 4u);
    for (size_t i = 0; i < 4; ++i)
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{0, 0, 2e-2}), "") << "result " << i;
  }
}

}  // namespace
}  // namespace wf::cudatest
