// Convolutions run with the elementwise group that reads their result as one cuDNN graph
// (kernels/convolution_epilogue.h): a batch norm written out as the bf16 export writes it
// ((x - mean) * scale + shift in f32, ReLU, narrowed to bf16), and a residual block's tail (the
// shortcut added, ReLU, its f32 value written beside its bf16 copy). Compared with the CPU
// interpreter and with the program compiled without fusion, on fresh random inputs of sizes that
// are no multiple of cuDNN's tiles (3 images of 13x13, 24 and 40 channels).
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string tensor(int64_t c, const char* type, int64_t n = 3, int64_t hw = 13) {
  return "tensor<" + std::to_string(n) + "x" + std::to_string(c) + "x" + std::to_string(hw) + "x" +
         std::to_string(hw) + "x" + type + ">";
}

// `result` = x (*) w, `window` x `window` at `stride`, padded by window / 2, in `type`.
std::string convolution(const std::string& result, const std::string& x, const std::string& w, int64_t in,
                        int64_t out, int64_t window, const char* type = "bf16", int64_t stride = 1, int64_t n = 3,
                        int64_t hw = 13) {
  const int64_t pad = window / 2, ohw = (hw + 2 * pad - window) / stride + 1;
  const std::string wt = "tensor<" + std::to_string(out) + "x" + std::to_string(in) + "x" + std::to_string(window) +
                         "x" + std::to_string(window) + "x" + type + ">";
  const std::string st = std::to_string(stride), p = std::to_string(pad);
  return "  " + result + " = stablehlo.convolution(" + x + ", " + w +
         ") dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [" + st + ", " + st +
         "], pad = [[" + p + ", " + p + "], [" + p + ", " + p +
         "]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" + tensor(in, type, n, hw) + ", " + wt +
         ") -> " + tensor(out, type, n, ohw) + "\n";
}

// y = relu((convert(c) - mean) * scale + shift) in f32, as `name`; its bf16 copy as `name`b. With
// `bf16Params`, mean and shift are bf16 arguments widened before their broadcasts (as the export
// of a bf16 model writes its batch norms' buffers).
std::string batchNormRelu(const std::string& name, const std::string& c, int64_t k, const std::string& mean,
                          const std::string& scale, const std::string& shift, bool bf16Params = false) {
  const std::string f = tensor(k, "f32"), b = tensor(k, "bf16"), v = "tensor<" + std::to_string(k) + "xf32>";
  auto bcast = [&](const std::string& r, const std::string& x) {
    return "  " + r + " = \"stablehlo.broadcast_in_dim\"(" + x + ") {broadcast_dimensions = array<i64: 1>} : (" + v +
           ") -> " + f + "\n";
  };
  std::string s;
  if (bf16Params) {
    const std::string vb = "tensor<" + std::to_string(k) + "xbf16>";
    s += "  " + name + "_mw = \"stablehlo.convert\"(" + mean + ") : (" + vb + ") -> " + v + "\n";
    s += "  " + name + "_hw = \"stablehlo.convert\"(" + shift + ") : (" + vb + ") -> " + v + "\n";
    return s + batchNormRelu(name, c, k, name + "_mw", scale, name + "_hw");
  }
  s += "  " + name + "_f = \"stablehlo.convert\"(" + c + ") : (" + b + ") -> " + f + "\n";
  s += bcast(name + "_mb", mean);
  s += "  " + name + "_d = \"stablehlo.subtract\"(" + name + "_f, " + name + "_mb) : (" + f + ", " + f + ") -> " + f + "\n";
  s += bcast(name + "_sb", scale);
  s += "  " + name + "_m = \"stablehlo.multiply\"(" + name + "_d, " + name + "_sb) : (" + f + ", " + f + ") -> " + f + "\n";
  s += bcast(name + "_hb", shift);
  s += "  " + name + "_a = \"stablehlo.add\"(" + name + "_m, " + name + "_hb) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  " + name + "_z = \"stablehlo.constant\"() {value = dense<0.0> : " + f + "} : () -> " + f + "\n";
  s += "  " + name + " = \"stablehlo.maximum\"(" + name + "_a, " + name + "_z) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  " + name + "b = \"stablehlo.convert\"(" + name + ") : (" + f + ") -> " + b + "\n";
  return s;
}

// conv0 (of the argument, row-major: no epilogue) -> bn + ReLU -> conv1 3x3 24->40 -> bn + ReLU
// (an epilogue) -> conv2 1x1 40->24 -> bn, + the first block's f32 output, ReLU (an epilogue with
// a full-size input and a side output) -> conv3 -> + the residual, returned in f32.
std::string network() {
  const std::string v24 = "tensor<24xf32>", v40 = "tensor<40xf32>";
  const std::string b40 = "tensor<40xbf16>";
  std::string s = "func.func @main(%x: " + tensor(8, "bf16") +
                  ", %w0: tensor<24x8x3x3xbf16>, %w1: tensor<40x24x3x3xbf16>, %w2: tensor<24x40x1x1xbf16>, "
                  "%w3: tensor<24x24x3x3xbf16>, %m0: " + v24 + ", %s0: " + v24 + ", %h0: " + v24 + ", %m1: " + b40 +
                  ", %s1: " + v40 + ", %h1: " + b40 + ", %m2: " + v24 + ", %s2: " + v24 + ", %h2: " + v24 + ") -> " +
                  tensor(24, "f32") + " {\n";
  const std::string f24 = tensor(24, "f32");
  s += convolution("%c0", "%x", "%w0", 8, 24, 3);
  s += batchNormRelu("%y0", "%c0", 24, "%m0", "%s0", "%h0");
  s += convolution("%c1", "%y0b", "%w1", 24, 40, 3);
  s += batchNormRelu("%y1", "%c1", 40, "%m1", "%s1", "%h1", /*bf16Params=*/true);
  s += convolution("%c2", "%y1b", "%w2", 40, 24, 1);
  // The residual tail: bn (without its ReLU), + %y0, ReLU.
  s += "  %c2f = \"stablehlo.convert\"(%c2) : (" + tensor(24, "bf16") + ") -> " + f24 + "\n";
  s += "  %m2b = \"stablehlo.broadcast_in_dim\"(%m2) {broadcast_dimensions = array<i64: 1>} : (" + v24 + ") -> " + f24 + "\n";
  s += "  %s2b = \"stablehlo.broadcast_in_dim\"(%s2) {broadcast_dimensions = array<i64: 1>} : (" + v24 + ") -> " + f24 + "\n";
  s += "  %h2b = \"stablehlo.broadcast_in_dim\"(%h2) {broadcast_dimensions = array<i64: 1>} : (" + v24 + ") -> " + f24 + "\n";
  s += "  %d2 = \"stablehlo.subtract\"(%c2f, %m2b) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  %p2 = \"stablehlo.multiply\"(%d2, %s2b) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  %a2 = \"stablehlo.add\"(%p2, %h2b) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  %r2 = \"stablehlo.add\"(%a2, %y0) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  %z2 = \"stablehlo.constant\"() {value = dense<0.0> : " + f24 + "} : () -> " + f24 + "\n";
  s += "  %y2 = \"stablehlo.maximum\"(%r2, %z2) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  %y2b = \"stablehlo.convert\"(%y2) : (" + f24 + ") -> " + tensor(24, "bf16") + "\n";
  s += convolution("%c3", "%y2b", "%w3", 24, 24, 3);
  s += "  %c3f = \"stablehlo.convert\"(%c3) : (" + tensor(24, "bf16") + ") -> " + f24 + "\n";
  s += "  %out = \"stablehlo.add\"(%c3f, %y2) : (" + f24 + ", " + f24 + ") -> " + f24 + "\n";
  s += "  func.return %out : " + f24 + "\n}\n";
  return s;
}

std::vector<Literal> randomArguments() {
  auto bf16 = [](std::vector<int64_t> shape, double scale) {
    return randomLiteral(Type::tensor(std::move(shape), ElementType::kBF16), -scale, scale);
  };
  auto channel = [](int64_t k, double lo, double hi) {
    return randomLiteral(Type::tensor({k}, ElementType::kF32), lo, hi);
  };
  std::vector<Literal> args;
  args.push_back(bf16({3, 8, 13, 13}, 1));
  args.push_back(bf16({24, 8, 3, 3}, 0.3));
  args.push_back(bf16({40, 24, 3, 3}, 0.2));
  args.push_back(bf16({24, 40, 1, 1}, 0.3));
  args.push_back(bf16({24, 24, 3, 3}, 0.2));
  for (int64_t k : {24, 40, 24}) {
    // The second layer's mean and shift are bf16.
    const ElementType t = k == 40 ? ElementType::kBF16 : ElementType::kF32;
    args.push_back(randomLiteral(Type::tensor({k}, t), -0.2, 0.2));  // mean
    args.push_back(channel(k, 0.5, 1.5));                             // scale: rsqrt(var + eps) * weight
    args.push_back(randomLiteral(Type::tensor({k}, t), -0.3, 0.3));  // shift
  }
  return args;
}

TEST(CudaConvolutionEpilogue, BatchNormsAndResidualTailsMatchTheInterpreter) {
  WF_REQUIRE_GPU();
  Module m = parse(network());
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  // Each convolution is offered its group. conv1 and conv2 are taken; conv0 reads the argument,
  // stored row-major, and is declined (conv3's result goes to a row-major result).
  EXPECT_EQ(info.convolutionEpilogues + info.convolutionEpiloguesDeclined, 4);
  EXPECT_GE(info.convolutionEpilogues, 2);
  CompileOptions unfused;
  unfused.fuse = false;
  auto plain = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  EXPECT_EQ((*plain)->stats().convolutionEpilogues, 0);
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    std::vector<Literal> args = randomArguments();
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    auto reference = (*plain)->run(args);
    ASSERT_TRUE(reference) << reference.status().toString();
    // The epilogue reads the convolution's f32 sums where the interpreter rounds them to bf16
    // first: bf16's relative precision, over four layers.
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 1e-2}), "");
    EXPECT_EQ(compareLiterals(got->outputs[0], reference->outputs[0], Tolerance{0, 0, 1e-2}), "");
    EXPECT_EQ(compareLiterals(reference->outputs[0], (*want)[0], Tolerance{0, 0, 1e-2}), "");
  }
}

// Runs `exe`, whose arguments past the first are bound, on args[0], and expects its result to
// match the interpreter's on all of `args`; returns that result (none where a run failed).
std::optional<Literal> runMatchesInterpreter(Executable& exe, const Module& m, const std::vector<Literal>& args) {
  auto want = runCpu(m, cloneAll(args));
  EXPECT_TRUE(want) << want.status().toString();
  std::vector<Literal> batch;
  batch.push_back(args[0].clone());
  auto got = exe.run(batch);
  EXPECT_TRUE(got) << got.status().toString();
  if (!want || !got) return std::nullopt;
  EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 1e-2}), "");
  return std::move(got->outputs[0]);
}

// With the weights bound, the filters the epilogue graphs read are repacked once, in the
// prologue; rebinding one repacks it again.
TEST(CudaConvolutionEpilogue, BoundFiltersAreRepackedOncePerBind) {
  WF_REQUIRE_GPU();
  Module m = parse(network());
  ASSERT_TRUE(mainOf(m));
  CompileOptions options;
  for (size_t i = 1; i < 14; ++i) options.boundArguments.push_back(i);
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_GE((*exe)->stats().convolutionEpilogues, 1);
  EXPECT_GE((*exe)->stats().hoistedSteps, 1);
  std::vector<Literal> args = randomArguments();
  for (size_t i = 1; i < args.size(); ++i) ASSERT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    if (run == 2) {  // a new filter for conv1, whose batch norm is an epilogue
      args[2] = randomLiteral(Type::tensor({40, 24, 3, 3}, ElementType::kBF16), -0.2, 0.2);
      ASSERT_TRUE((*exe)->bindArgument(2, args[2]).isOk());
    }
    args[0] = randomLiteral(Type::tensor({3, 8, 13, 13}, ElementType::kBF16), -1, 1);
    runMatchesInterpreter(**exe, m, args);
  }
}

// ResNet's stem on odd image sizes: a 7x7 stride-2 convolution of 3 channels, which the backend
// runs over 2x2 pixel blocks as 16 channels (transforms/space_to_depth.h), then a per-channel
// scale and ReLU. With 16 channels it is channels-last and takes its epilogue.
std::string stem() {
  const std::string x = "tensor<3x3x29x31xf32>", xb = "tensor<3x3x29x31xbf16>", w = "tensor<16x3x7x7xbf16>",
                    y = "tensor<3x16x15x16xbf16>", f = "tensor<3x16x15x16xf32>", v = "tensor<16xf32>",
                    w2 = "tensor<8x16x1x1xbf16>", y2 = "tensor<3x8x15x16xbf16>";
  std::string s = "func.func @main(%x: " + x + ", %w: " + w + ", %s: " + v + ", %w2: " + w2 + ") -> " + y2 + " {\n";
  s += "  %xb = \"stablehlo.convert\"(%x) : (" + x + ") -> " + xb + "\n";
  s += "  %c = \"stablehlo.convolution\"(%xb, %w) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, "
       "window_strides = array<i64: 2, 2>, padding = dense<[[3, 3], [3, 3]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 1>, "
       "rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (" + xb + ", " + w + ") -> " + y + "\n";
  s += "  %cf = \"stablehlo.convert\"(%c) : (" + y + ") -> " + f + "\n";
  s += "  %sb = \"stablehlo.broadcast_in_dim\"(%s) {broadcast_dimensions = array<i64: 1>} : (" + v + ") -> " + f + "\n";
  s += "  %m = \"stablehlo.multiply\"(%cf, %sb) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  %z = \"stablehlo.constant\"() {value = dense<0.0> : " + f + "} : () -> " + f + "\n";
  s += "  %r = \"stablehlo.maximum\"(%m, %z) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  %out = \"stablehlo.convert\"(%r) : (" + f + ") -> " + y + "\n";
  // A 1x1 convolution reads the stem's output, which may then stay channels-last (a program's
  // results are row-major, so a group writing one declines the epilogue).
  s += "  %c2 = \"stablehlo.convolution\"(%out, %w2) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, "
       "window_strides = array<i64: 1, 1>, padding = dense<[[0, 0], [0, 0]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 1>, "
       "rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (" + y + ", " + w2 + ") -> " + y2 + "\n";
  s += "  func.return %c2 : " + y2 + "\n}\n";
  return s;
}

TEST(CudaConvolutionEpilogue, StemOverPixelBlocksMatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  Module m = parse(stem());
  ASSERT_TRUE(mainOf(m));
  CompileOptions options;
  options.boundArguments = {1, 2, 3};
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  // 3 channels would decline the epilogue (no multiple of 8); 16 take it. The filter's
  // rearrangement reads the bound filter alone: hoisted.
  EXPECT_EQ((*exe)->stats().convolutionEpilogues, 1);
  EXPECT_GE((*exe)->stats().hoistedSteps, 1);
  CompileOptions unfused;
  unfused.fuse = false;
  auto plain = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  std::vector<Literal> args = {randomLiteral(Type::tensor({3, 3, 29, 31}, ElementType::kF32), -1, 1),
                               randomLiteral(Type::tensor({16, 3, 7, 7}, ElementType::kBF16), -0.3, 0.3),
                               randomLiteral(Type::tensor({16}, ElementType::kF32), 0.5, 1.5),
                               randomLiteral(Type::tensor({8, 16, 1, 1}, ElementType::kBF16), -0.3, 0.3)};
  for (size_t i = 1; i < args.size(); ++i) ASSERT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
  for (int run = 0; run < 2; ++run) {
    SCOPED_TRACE("run " + std::to_string(run));
    args[0] = randomLiteral(Type::tensor({3, 3, 29, 31}, ElementType::kF32), -1, 1);
    std::optional<Literal> got = runMatchesInterpreter(**exe, m, args);
    auto reference = (*plain)->run(args);
    ASSERT_TRUE(got && reference) << (reference ? "" : reference.status().toString());
    EXPECT_EQ(compareLiterals(*got, reference->outputs[0], Tolerance{0, 0, 1e-2}), "");
  }
}

// ResNet's stem in f32 with TF32 allowed for convolutions: 3 channels, 7x7 at stride 2 on odd
// image sizes, then a per-channel scale and ReLU. It runs over 2x2 pixel blocks as 16 channels
// (transforms/space_to_depth.h) on TF32 tensor cores, channels-last; without TF32 it stays as
// written. Against the interpreter (true f32) within TF32's rounding.
TEST(CudaConvolutionEpilogue, F32StemWithTf32MatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  const std::string x = "tensor<3x3x29x31xf32>", w = "tensor<16x3x7x7xf32>", y = "tensor<3x16x15x16xf32>",
                    v = "tensor<16xf32>";
  std::string s = "func.func @main(%x: " + x + ", %w: " + w + ", %s: " + v + ") -> " + y + " {\n";
  s += "  %c = \"stablehlo.convolution\"(%x, %w) {dimension_numbers = #stablehlo.conv<[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]>, "
       "window_strides = array<i64: 2, 2>, padding = dense<[[3, 3], [3, 3]]> : tensor<2x2xi64>, lhs_dilation = array<i64: 1, 1>, "
       "rhs_dilation = array<i64: 1, 1>, feature_group_count = 1 : i64, batch_group_count = 1 : i64} : (" + x + ", " + w + ") -> " + y + "\n";
  s += "  %sb = \"stablehlo.broadcast_in_dim\"(%s) {broadcast_dimensions = array<i64: 1>} : (" + v + ") -> " + y + "\n";
  s += "  %m = \"stablehlo.multiply\"(%c, %sb) : (" + y + ", " + y + ") -> " + y + "\n";
  s += "  %z = \"stablehlo.constant\"() {value = dense<0.0> : " + y + "} : () -> " + y + "\n";
  s += "  %r = \"stablehlo.maximum\"(%m, %z) : (" + y + ", " + y + ") -> " + y + "\n";
  s += "  func.return %r : " + y + "\n}\n";
  Module m = parse(s);
  ASSERT_TRUE(mainOf(m));
  for (bool tf32 : {true, false}) {
    SCOPED_TRACE(tf32 ? "TF32 convolutions" : "true f32");
    CompileOptions options;
    options.allowTf32Convolutions = tf32;
    options.boundArguments = {1, 2};
    auto exe = cudaBackend().compile(m, *mainOf(m), options);
    ASSERT_TRUE(exe) << exe.status().toString();
    // Over pixel blocks the convolution reads 16 channels, stored channels-last; as written it
    // reads 3 channels in NCHW.
    if (tf32) EXPECT_GE((*exe)->stats().channelsLastValues, 1);
    else EXPECT_EQ((*exe)->stats().channelsLastValues, 0);
    std::vector<Literal> args = {randomLiteral(Type::tensor({3, 3, 29, 31}, ElementType::kF32), -1, 1),
                                 randomLiteral(Type::tensor({16, 3, 7, 7}, ElementType::kF32), -0.3, 0.3),
                                 randomLiteral(Type::tensor({16}, ElementType::kF32), 0.5, 1.5)};
    for (size_t i = 1; i < args.size(); ++i) ASSERT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
    for (int run = 0; run < 2; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      args[0] = randomLiteral(Type::tensor({3, 3, 29, 31}, ElementType::kF32), -1, 1);
      auto want = runCpu(m, cloneAll(args));
      ASSERT_TRUE(want) << want.status().toString();
      std::vector<Literal> given;
      given.push_back(args[0].clone());
      auto got = (*exe)->run(given);
      ASSERT_TRUE(got) << got.status().toString();
      // TF32 keeps 10 bits of each operand; true f32 is close to the interpreter's own sums.
      EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, tf32 ? 2e-3 : 1e-5}), "");
    }
  }
}

// An f32 network as the fp32 export writes ResNet's blocks (no conversions): conv -> bn -> ReLU,
// a 1x1 stride-2 downsample with its bn, a 3x3 stride-2 convolution, bn, + the downsampled
// shortcut, ReLU; then conv -> bn + the block's output, ReLU. With TF32 allowed for
// convolutions the activations are channels-last and each convolution is offered its group.
//
// (c - mean) * scale + shift, then + `residual` where given, then ReLU where asked, in f32.
std::string batchNormF32(const std::string& name, const std::string& c, int64_t k, int64_t n, int64_t hw, int index,
                         const std::string& residual, bool relu) {
  const std::string f = tensor(k, "f32", n, hw), v = "tensor<" + std::to_string(k) + "xf32>";
  const std::string i = std::to_string(index);
  std::string s;
  for (const char* p : {"%m", "%s", "%h"})
    s += "  " + name + "_" + (p + 1) + " = \"stablehlo.broadcast_in_dim\"(" + p + i +
         ") {broadcast_dimensions = array<i64: 1>} : (" + v + ") -> " + f + "\n";
  s += "  " + name + "_d = \"stablehlo.subtract\"(" + c + ", " + name + "_m) : (" + f + ", " + f + ") -> " + f + "\n";
  s += "  " + name + "_p = \"stablehlo.multiply\"(" + name + "_d, " + name + "_s) : (" + f + ", " + f + ") -> " + f + "\n";
  std::string last = name + (residual.empty() && !relu ? "" : "_a");
  s += "  " + last + " = \"stablehlo.add\"(" + name + "_p, " + name + "_h) : (" + f + ", " + f + ") -> " + f + "\n";
  if (!residual.empty()) {
    const std::string r = name + (relu ? "_r" : "");
    s += "  " + r + " = \"stablehlo.add\"(" + last + ", " + residual + ") : (" + f + ", " + f + ") -> " + f + "\n";
    last = r;
  }
  if (relu) {
    s += "  " + name + "_z = \"stablehlo.constant\"() {value = dense<0.0> : " + f + "} : () -> " + f + "\n";
    s += "  " + name + " = \"stablehlo.maximum\"(" + last + ", " + name + "_z) : (" + f + ", " + f + ") -> " + f + "\n";
  }
  return s;
}

struct F32Layer {
  int64_t in, out, window, stride;
};
// x [2, 16, 15, 15] -> c0 3x3 16->24 (row-major argument: declined) -> bn relu -> y0
// y0 -> c1 1x1 s2 24->32 -> bn -> d (the downsampled shortcut)
// y0 -> c2 3x3 s2 24->32 -> bn + d, relu -> y2
// y2 -> c3 3x3 32->32 -> bn + y2, relu -> y3, returned after c4 1x1 32->8 (row-major result).
const F32Layer kF32Layers[] = {{16, 24, 3, 1}, {24, 32, 1, 2}, {24, 32, 3, 2}, {32, 32, 3, 1}, {32, 8, 1, 1}};
constexpr int64_t kF32Batch = 2, kF32Size = 15;

std::string networkF32() {
  const int64_t n = kF32Batch, hw = kF32Size, hw2 = (hw + 2 - 3) / 2 + 1;
  std::string s = "func.func @main(%x: " + tensor(16, "f32", n, hw);
  for (int l = 0; l < 5; ++l) {
    const F32Layer& L = kF32Layers[l];
    s += ", %w" + std::to_string(l) + ": tensor<" + std::to_string(L.out) + "x" + std::to_string(L.in) + "x" +
         std::to_string(L.window) + "x" + std::to_string(L.window) + "xf32>";
  }
  for (int l = 0; l < 4; ++l)
    for (const char* p : {"%m", "%s", "%h"})
      s += std::string(", ") + p + std::to_string(l) + ": tensor<" + std::to_string(kF32Layers[l].out) + "xf32>";
  s += ") -> " + tensor(8, "f32", n, hw2) + " {\n";
  s += convolution("%c0", "%x", "%w0", 16, 24, 3, "f32", 1, n, hw);
  s += batchNormF32("%y0", "%c0", 24, n, hw, 0, "", true);
  s += convolution("%c1", "%y0", "%w1", 24, 32, 1, "f32", 2, n, hw);
  s += batchNormF32("%d", "%c1", 32, n, hw2, 1, "", false);
  s += convolution("%c2", "%y0", "%w2", 24, 32, 3, "f32", 2, n, hw);
  s += batchNormF32("%y2", "%c2", 32, n, hw2, 2, "%d", true);
  s += convolution("%c3", "%y2", "%w3", 32, 32, 3, "f32", 1, n, hw2);
  s += batchNormF32("%y3", "%c3", 32, n, hw2, 3, "%y2", true);
  s += convolution("%c4", "%y3", "%w4", 32, 8, 1, "f32", 1, n, hw2);
  s += "  func.return %c4 : " + tensor(8, "f32", n, hw2) + "\n}\n";
  return s;
}

std::vector<Literal> randomArgumentsF32() {
  std::vector<Literal> args;
  args.push_back(randomLiteral(Type::tensor({kF32Batch, 16, kF32Size, kF32Size}, ElementType::kF32), -1, 1));
  for (const F32Layer& L : kF32Layers)
    args.push_back(randomLiteral(Type::tensor({L.out, L.in, L.window, L.window}, ElementType::kF32), -0.25, 0.25));
  for (int l = 0; l < 4; ++l) {
    const int64_t k = kF32Layers[l].out;
    args.push_back(randomLiteral(Type::tensor({k}, ElementType::kF32), -0.2, 0.2));  // mean
    args.push_back(randomLiteral(Type::tensor({k}, ElementType::kF32), 0.5, 1.5));   // scale
    args.push_back(randomLiteral(Type::tensor({k}, ElementType::kF32), -0.3, 0.3));  // shift
  }
  return args;
}

// The f32 network with TF32 allowed for convolutions: against the interpreter (true f32) within
// TF32's rounding, and against the same program without fusion (TF32 convolutions, no
// epilogues), with the weights bound as a model's are and unbound.
TEST(CudaConvolutionEpilogue, F32BlocksWithTf32MatchTheInterpreter) {
  WF_REQUIRE_GPU();
  Module m = parse(networkF32());
  ASSERT_TRUE(mainOf(m));
  for (bool bound : {false, true}) {
    SCOPED_TRACE(bound ? "weights bound" : "weights as arguments");
    CompileOptions options;
    options.allowTf32Convolutions = true;
    if (bound)
      for (size_t i = 1; i < 17; ++i) options.boundArguments.push_back(i);
    auto exe = cudaBackend().compile(m, *mainOf(m), options);
    ASSERT_TRUE(exe) << exe.status().toString();
    // Channels-last around every convolution but the first (it reads the row-major argument),
    // and each of the four others offered its group as an epilogue (f32 ones are declined:
    // kernels/convolution_epilogue.cpp says why).
    const ExecutableStats info = (*exe)->stats();
    EXPECT_GE(info.channelsLastValues, 5);
    EXPECT_EQ(info.convolutionEpilogues + info.convolutionEpiloguesDeclined, 4);
    CompileOptions unfusedOptions = options;
    unfusedOptions.fuse = false;
    auto plain = cudaBackend().compile(m, *mainOf(m), unfusedOptions);
    ASSERT_TRUE(plain) << plain.status().toString();
    std::vector<Literal> args = randomArgumentsF32();
    if (bound)
      for (size_t i = 1; i < args.size(); ++i) {
        ASSERT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
        ASSERT_TRUE((*plain)->bindArgument(i, args[i]).isOk());
      }
    for (int run = 0; run < 2; ++run) {
      SCOPED_TRACE("run " + std::to_string(run));
      args[0] = randomLiteral(Type::tensor({kF32Batch, 16, kF32Size, kF32Size}, ElementType::kF32), -1, 1);
      auto want = runCpu(m, cloneAll(args));
      ASSERT_TRUE(want) << want.status().toString();
      // With the weights bound, a run is given the image alone.
      auto given = [&] {
        if (!bound) return cloneAll(args);
        std::vector<Literal> image;
        image.push_back(args[0].clone());
        return image;
      };
      auto got = (*exe)->run(given());
      ASSERT_TRUE(got) << got.status().toString();
      auto reference = (*plain)->run(given());
      ASSERT_TRUE(reference) << reference.status().toString();
      // TF32 keeps 10 bits of each operand: about 1e-3 relative over five layers.
      EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{0, 0, 5e-3}), "");
      EXPECT_EQ(compareLiterals(got->outputs[0], reference->outputs[0], Tolerance{0, 0, 5e-3}), "");
      EXPECT_EQ(compareLiterals(reference->outputs[0], (*want)[0], Tolerance{0, 0, 5e-3}), "");
    }
  }
}

}  // namespace
}  // namespace wf::cudatest
