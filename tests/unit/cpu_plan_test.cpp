// The CPU backend's plan (src/backends/cpu/plan.h) against the op-by-op interpreter, on random
// inputs with sizes that are no multiple of any vector width or tile: fused elementwise loops
// must give the interpreter's bits exactly; fused convolutions (batch norm folded into the
// kernel, residual and ReLU as post-ops, blocked layouts between them) must agree within fp32
// rounding; hoisted work must follow a rebind.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/matmul_fused.h"
#include "backends/cpu/plan.h"
#include "eval/dot_conv_util.h"
#include "eval/interpreter.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

Literal randomF32(const std::vector<int64_t>& shape, std::mt19937& rng, float lo = -2.f, float hi = 2.f) {
  Literal l = Literal::zeros(Type::tensor(shape, ElementType::kF32));
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = u(rng);
  return l;
}

Literal randomBool(const std::vector<int64_t>& shape, std::mt19937& rng) {
  Literal l = Literal::zeros(Type::tensor(shape, ElementType::kI1));
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<uint8_t>()[i] = rng() % 3 != 0;
  return l;
}

Module parse(const std::string& text) {
  auto m = parseModule(text);
  EXPECT_TRUE(m) << m.status().message();
  Status v = verifyModule(*m);
  EXPECT_TRUE(v.isOk()) << v.message();
  return std::move(*m);
}

std::vector<Literal> interpret(const Module& m, std::vector<Literal> args) {
  EvalContext ctx;
  ctx.module = &m;
  auto r = Interpreter::callFunction(*m.lookupFunction("main"), std::move(args), ctx);
  EXPECT_TRUE(r) << r.status().message();
  return r ? std::move(*r) : std::vector<Literal>{};
}

// Compiles @main on the CPU backend with arguments `bound` bound (their values from `args`) and
// runs it on the others.
struct Compiled {
  std::unique_ptr<Executable> exe;
  RunResult result;
};
Compiled runBackend(const Module& m, const std::vector<Literal>& args, const std::vector<size_t>& bound,
                    CompileOptions options = {}) {
  options.boundArguments = bound;
  auto exe = makeCpuBackend()->compile(m, *m.lookupFunction("main"), options);
  EXPECT_TRUE(exe) << exe.status().message();
  if (!exe) return {};
  std::vector<Literal> perRun;
  for (size_t i = 0; i < args.size(); ++i) {
    if (std::find(bound.begin(), bound.end(), i) != bound.end())
      EXPECT_TRUE((*exe)->bindArgument(i, args[i]).isOk());
    else
      perRun.push_back(args[i]);
  }
  auto r = (*exe)->run(perRun);
  EXPECT_TRUE(r) << r.status().message();
  return {std::move(*exe), r ? std::move(*r) : RunResult{}};
}

cpu::CpuPlan planOf(const Module& m, const std::vector<size_t>& bound, std::vector<std::string> taps = {}) {
  CompileOptions options;
  options.boundArguments = bound;
  const Operation& entry = *m.lookupFunction("main");
  std::vector<const Value*> tapValues;
  for (const std::string& t : taps) tapValues.push_back(*findEntryValue(entry, t));
  auto plan = cpu::planCpu(m, entry, options, tapValues);
  EXPECT_TRUE(plan) << plan.status().message();
  return std::move(*plan);
}

void expectBitwiseEqual(const std::vector<Literal>& got, const std::vector<Literal>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_EQ(got[i].type(), want[i].type()) << "result " << i;
    for (int64_t e = 0; e < got[i].numElements(); ++e)
      ASSERT_EQ(got[i].getBits(e), want[i].getBits(e))
          << "result " << i << " element " << e << ": " << got[i].getDouble(e) << " vs " << want[i].getDouble(e);
  }
}

// max |a - b| / (atol + rtol |b|) over all elements: <= 1 is within the tolerance.
double toleranceRatio(const Literal& a, const Literal& b, double rtol, double atol) {
  EXPECT_EQ(a.shape(), b.shape());
  double worst = 0;
  for (int64_t i = 0; i < a.numElements() && i < b.numElements(); ++i)
    worst = std::max(worst, std::fabs(a.getDouble(i) - b.getDouble(i)) / (atol + rtol * std::fabs(b.getDouble(i))));
  return worst;
}

// Bias add + GELU (erf), a reshape inside the chain, a masked softmax with reductions between
// its loops, a layer norm, broadcasts along every kind of dimension, splat constants, a select on
// a broadcast i1 mask, values read both inside and outside their group, and an output that is
// also an intermediate.
const char* kTransformerBits = R"(
func.func @main(%x: tensor<3x37x29xf32>, %b: tensor<29xf32>, %rows: tensor<3x37xf32>, %mask: tensor<3x1x29xi1>,
                %g: tensor<29xf32>, %s: tensor<f32>)
    -> (tensor<3x37x29xf32>, tensor<3x37x29xf32>, tensor<111x29xf32>, tensor<3x37x29xf32>, tensor<3x37x29xf32>) {
  %bb = stablehlo.broadcast_in_dim %b, dims = [2] : (tensor<29xf32>) -> tensor<3x37x29xf32>
  %h = stablehlo.add %x, %bb : tensor<3x37x29xf32>
  %half = stablehlo.constant dense<0.5> : tensor<3x37x29xf32>
  %rs = stablehlo.constant dense<0.70710678> : tensor<3x37x29xf32>
  %one = stablehlo.constant dense<1.0> : tensor<3x37x29xf32>
  %a = stablehlo.multiply %h, %half : tensor<3x37x29xf32>
  %c = stablehlo.multiply %h, %rs : tensor<3x37x29xf32>
  %e = chlo.erf %c : tensor<3x37x29xf32> -> tensor<3x37x29xf32>
  %e1 = stablehlo.add %e, %one : tensor<3x37x29xf32>
  %gelu = stablehlo.multiply %a, %e1 : tensor<3x37x29xf32>
  %flat = stablehlo.reshape %gelu : (tensor<3x37x29xf32>) -> tensor<111x29xf32>
  %flat2 = stablehlo.exponential %flat : tensor<111x29xf32>
  %br = stablehlo.broadcast_in_dim %rows, dims = [0, 1] : (tensor<3x37xf32>) -> tensor<3x37x29xf32>
  %scaled = stablehlo.multiply %gelu, %br : tensor<3x37x29xf32>
  %bm = stablehlo.broadcast_in_dim %mask, dims = [0, 1, 2] : (tensor<3x1x29xi1>) -> tensor<3x37x29xi1>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<3x37x29xf32>
  %masked = stablehlo.select %bm, %scaled, %ninf : tensor<3x37x29xi1>, tensor<3x37x29xf32>
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %max = stablehlo.reduce(%masked init: %init) applies stablehlo.maximum across dimensions = [2] : (tensor<3x37x29xf32>, tensor<f32>) -> tensor<3x37xf32>
  %bmax = stablehlo.broadcast_in_dim %max, dims = [0, 1] : (tensor<3x37xf32>) -> tensor<3x37x29xf32>
  %d = stablehlo.subtract %masked, %bmax : tensor<3x37x29xf32>
  %p = stablehlo.exponential %d : tensor<3x37x29xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<f32>
  %sum = stablehlo.reduce(%p init: %zero) applies stablehlo.add across dimensions = [2] : (tensor<3x37x29xf32>, tensor<f32>) -> tensor<3x37xf32>
  %bsum = stablehlo.broadcast_in_dim %sum, dims = [0, 1] : (tensor<3x37xf32>) -> tensor<3x37x29xf32>
  %soft = stablehlo.divide %p, %bsum : tensor<3x37x29xf32>
  %bg = stablehlo.broadcast_in_dim %g, dims = [2] : (tensor<29xf32>) -> tensor<3x37x29xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<3x37x29xf32>
  %n1 = stablehlo.multiply %soft, %bg : tensor<3x37x29xf32>
  %n2 = stablehlo.maximum %n1, %bs : tensor<3x37x29xf32>
  %n3 = stablehlo.rsqrt %bg : tensor<3x37x29xf32>
  %n4 = stablehlo.add %n2, %n3 : tensor<3x37x29xf32>
  return %gelu, %soft, %flat2, %n4, %h : tensor<3x37x29xf32>, tensor<3x37x29xf32>, tensor<111x29xf32>, tensor<3x37x29xf32>, tensor<3x37x29xf32>
}
)";

std::vector<Literal> transformerArgs(std::mt19937& rng) {
  std::vector<Literal> args;
  args.push_back(randomF32({3, 37, 29}, rng));
  args.push_back(randomF32({29}, rng));
  args.push_back(randomF32({3, 37}, rng));
  args.push_back(randomBool({3, 1, 29}, rng));
  args.push_back(randomF32({29}, rng, 0.25f, 2.f));
  args.push_back(randomF32({}, rng));
  return args;
}

TEST(CpuPlan, FusedElementwiseLoopsGiveTheInterpretersBits) {
  Module m = parse(kTransformerBits);
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    std::vector<Literal> args = transformerArgs(rng);
    std::vector<Literal> want = interpret(m, args);
    Compiled got = runBackend(m, args, {});
    expectBitwiseEqual(got.result.outputs, want);
    // With the bias and gains bound, their broadcasts and the rsqrt of %g move to the prologue.
    Compiled bound = runBackend(m, args, {1, 4, 5});
    expectBitwiseEqual(bound.result.outputs, want);
    EXPECT_GT(bound.exe->stats().hoistedSteps, 0);
  }
  cpu::CpuPlan plan = planOf(m, {});
  EXPECT_GE(plan.stats.fusedGroups, 4) << plan.describe();
  // The GELU chain and its reshape are one loop; the reductions split the softmax.
  EXPECT_NE(plan.describe().find("fused_elementwise[stablehlo.add,stablehlo.multiply,stablehlo.multiply,chlo.erf,"
                                 "stablehlo.add,stablehlo.multiply"),
            std::string::npos)
      << plan.describe();
  // No broadcast or splat constant is materialized on a run.
  EXPECT_EQ(plan.describe().find("run: stablehlo.broadcast_in_dim"), std::string::npos) << plan.describe();
  EXPECT_EQ(plan.describe().find("run: stablehlo.constant"), std::string::npos) << plan.describe();
}

TEST(CpuPlan, TapsInsideAFusedChainAreMaterialized) {
  Module m = parse(kTransformerBits);
  std::mt19937 rng(7);
  std::vector<Literal> args = transformerArgs(rng);
  CompileOptions options;
  options.tapValues = {"%e1", "%masked"};
  Compiled got = runBackend(m, args, {}, options);
  ASSERT_EQ(got.result.taps.size(), 2u);
  // The interpreter's values of the same SSA names.
  EvalContext ctx;
  ctx.module = &m;
  std::vector<Literal> seen;
  ctx.onResult = [&](const Value& v, const Literal& l) {
    if (v.nameHint() == "%e1" || v.nameHint() == "%masked") seen.push_back(l.clone());
  };
  auto r = Interpreter::callFunction(*m.lookupFunction("main"), args, ctx);
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_EQ(seen.size(), 2u);
  expectBitwiseEqual(got.result.taps, seen);
}

TEST(CpuPlan, NoFusionRunsOneStepPerOpWithTheSameResults) {
  Module m = parse(kTransformerBits);
  std::mt19937 rng(11);
  std::vector<Literal> args = transformerArgs(rng);
  CompileOptions options;
  options.fuse = false;
  Compiled got = runBackend(m, args, {}, options);
  expectBitwiseEqual(got.result.outputs, interpret(m, args));
  EXPECT_EQ(got.exe->stats().fusedKernels, 0);
}

// Conv -> batch norm (inference) -> ReLU, then a second conv whose result gets a residual (the
// first block's output) and a ReLU: the PyTorch exporter's ResNet block, at odd sizes, with a
// stride, a grouped convolution and a bias-only conv.
std::string convBlock() {
  auto bn = [](const std::string& in, const std::string& p, const std::string& t, const std::string& c) {
    return "  %" + p + "m = stablehlo.broadcast_in_dim %" + p + "mean, dims = [1] : (tensor<" + c + "xf32>) -> " + t +
           "\n  %" + p + "s = stablehlo.subtract " + in + ", %" + p + "m : " + t + "\n  %" + p + "eps = stablehlo.constant dense<1.0e-05> : tensor<" +
           c + "xf32>\n  %" + p + "ve = stablehlo.add %" + p + "var, %" + p + "eps : tensor<" + c + "xf32>\n  %" + p +
           "r = stablehlo.rsqrt %" + p + "ve : tensor<" + c + "xf32>\n  %" + p + "k = stablehlo.multiply %" + p + "r, %" + p +
           "gamma : tensor<" + c + "xf32>\n  %" + p + "kb = stablehlo.broadcast_in_dim %" + p + "k, dims = [1] : (tensor<" + c +
           "xf32>) -> " + t + "\n  %" + p + "mul = stablehlo.multiply %" + p + "s, %" + p + "kb : " + t + "\n  %" + p +
           "bb = stablehlo.broadcast_in_dim %" + p + "beta, dims = [1] : (tensor<" + c + "xf32>) -> " + t + "\n  %" + p +
           "out = stablehlo.add %" + p + "mul, %" + p + "bb : " + t + "\n";
  };
  const std::string t1 = "tensor<2x11x5x6xf32>", t2 = "tensor<2x11x5x6xf32>";
  std::string s =
      "func.func @main(%x: tensor<2x5x9x11xf32>, %w1: tensor<11x5x3x3xf32>, %amean: tensor<11xf32>, %avar: tensor<11xf32>,"
      " %agamma: tensor<11xf32>, %abeta: tensor<11xf32>, %w2: tensor<11x1x3x3xf32>, %bmean: tensor<11xf32>,"
      " %bvar: tensor<11xf32>, %bgamma: tensor<11xf32>, %bbeta: tensor<11xf32>, %w3: tensor<7x11x1x1xf32>,"
      " %bias3: tensor<7xf32>) -> (tensor<2x11x5x6xf32>, tensor<2x7x5x6xf32>) {\n"
      "  %c1 = stablehlo.convolution(%x, %w1) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], "
      "pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x5x9x11xf32>, "
      "tensor<11x5x3x3xf32>) -> " + t1 + "\n" +
      bn("%c1", "a", t1, "11") +
      "  %zero = stablehlo.constant dense<0.0> : " + t1 + "\n"
      "  %relu1 = stablehlo.maximum %aout, %zero : " + t1 + "\n"
      "  %c2 = stablehlo.convolution(%relu1, %w2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = "
      "[[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 11 : i64} : (" + t1 +
      ", tensor<11x1x3x3xf32>) -> " + t2 + "\n" +
      bn("%c2", "b", t2, "11") +
      "  %res = stablehlo.add %bout, %relu1 : " + t2 + "\n"
      "  %zero2 = stablehlo.constant dense<0.0> : " + t2 + "\n"
      "  %relu2 = stablehlo.maximum %res, %zero2 : " + t2 + "\n"
      "  %c3 = stablehlo.convolution(%relu2, %w3) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} "
      "{batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" + t2 + ", tensor<7x11x1x1xf32>) -> tensor<2x7x5x6xf32>\n"
      "  %b3 = stablehlo.broadcast_in_dim %bias3, dims = [1] : (tensor<7xf32>) -> tensor<2x7x5x6xf32>\n"
      "  %y = stablehlo.add %c3, %b3 : tensor<2x7x5x6xf32>\n"
      "  return %relu2, %y : " + t2 + ", tensor<2x7x5x6xf32>\n}\n";
  return s;
}

std::vector<Literal> convArgs(std::mt19937& rng) {
  std::vector<Literal> a;
  a.push_back(randomF32({2, 5, 9, 11}, rng));
  a.push_back(randomF32({11, 5, 3, 3}, rng, -0.5f, 0.5f));
  for (int i = 0; i < 4; ++i) a.push_back(randomF32({11}, rng, i == 1 ? 0.1f : -1.f, 1.5f));
  a.push_back(randomF32({11, 1, 3, 3}, rng, -0.5f, 0.5f));
  for (int i = 0; i < 4; ++i) a.push_back(randomF32({11}, rng, i == 1 ? 0.1f : -1.f, 1.5f));
  a.push_back(randomF32({7, 11, 1, 1}, rng, -0.5f, 0.5f));
  a.push_back(randomF32({7}, rng));
  return a;
}

TEST(CpuPlan, FusedConvolutionsMatchTheInterpreter) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  Module m = parse(convBlock());
  std::vector<size_t> weights{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  cpu::CpuPlan plan = planOf(m, weights);
  EXPECT_EQ(plan.stats.fusedConvs, 3) << plan.describe();
  EXPECT_NE(plan.describe().find("fused_convolution[convolution,subtract,multiply,add,relu]"), std::string::npos)
      << plan.describe();
  EXPECT_NE(plan.describe().find("fused_convolution[convolution,subtract,multiply,add,add(residual),relu]"),
            std::string::npos)
      << plan.describe();
  // %relu1 feeds only fused convolutions (as input and residual): it stays blocked. %relu2 is
  // returned, so it leaves in NCHW.
  EXPECT_EQ(plan.stats.blockedValues, 1) << plan.describe();
  for (uint32_t seed : {5u, 6u}) {
    std::mt19937 rng(seed);
    std::vector<Literal> args = convArgs(rng);
    std::vector<Literal> want = interpret(m, args);
    Compiled got = runBackend(m, args, weights);
    ASSERT_EQ(got.result.outputs.size(), 2u);
    for (size_t i = 0; i < 2; ++i) EXPECT_LE(toleranceRatio(got.result.outputs[i], want[i], 1e-5, 1e-6), 1.0) << i;

    // A rebind reruns the prologue: the folded kernels follow the new statistics.
    std::vector<Literal> args2 = args;
    args2[3] = randomF32({11}, rng, 0.1f, 3.f);
    args2[11] = randomF32({7, 11, 1, 1}, rng);
    ASSERT_TRUE(got.exe->bindArgument(3, args2[3]).isOk());
    ASSERT_TRUE(got.exe->bindArgument(11, args2[11]).isOk());
    std::vector<Literal> perRun{args2[0]};
    auto r2 = got.exe->run(perRun);
    ASSERT_TRUE(r2) << r2.status().message();
    std::vector<Literal> want2 = interpret(m, args2);
    for (size_t i = 0; i < 2; ++i) EXPECT_LE(toleranceRatio(r2->outputs[i], want2[i], 1e-5, 1e-6), 1.0) << i;
  }
}

// A residual block whose shortcut %r0 no step reads after the block's last convolution: that
// convolution adds into %r0's buffer in place (FusedConv::run) instead of copying it into its
// destination first (both blocked, as between ResNet's blocks). Returning %r0 as well keeps it
// alive: then it must come back unchanged.
std::string residualBlock(bool returnShortcut) {
  const std::string t8 = "tensor<2x8x7x9xf32>", t16 = "tensor<2x16x7x9xf32>";
  auto conv = [&](const std::string& out, const std::string& in, const std::string& w, const std::string& wt,
                  const std::string& inT, const std::string& pad) {
    return "  %" + out + " = stablehlo.convolution(%" + in + ", %" + w +
           ") dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = [[" + pad + ", " + pad + "], [" +
           pad + ", " + pad + "]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (" + inT + ", " + wt +
           ") -> " + t16 + "\n";
  };
  std::string s = "func.func @main(%x: " + t8 +
                  ", %w0: tensor<16x8x1x1xf32>, %w1: tensor<16x16x3x3xf32>, %w2: tensor<16x16x1x1xf32>, "
                  "%w3: tensor<16x16x1x1xf32>) -> (" + t16 +
                  (returnShortcut ? ", " + t16 : std::string()) + ") {\n";
  s += "  %zero = stablehlo.constant dense<0.0> : " + t16 + "\n";
  s += conv("c0", "x", "w0", "tensor<16x8x1x1xf32>", t8, "0");
  s += "  %r0 = stablehlo.maximum %c0, %zero : " + t16 + "\n";
  s += conv("c1", "r0", "w1", "tensor<16x16x3x3xf32>", t16, "1");
  s += "  %r1 = stablehlo.maximum %c1, %zero : " + t16 + "\n";
  s += conv("c2", "r1", "w2", "tensor<16x16x1x1xf32>", t16, "0");
  s += "  %sum = stablehlo.add %c2, %r0 : " + t16 + "\n";
  s += "  %y = stablehlo.maximum %sum, %zero : " + t16 + "\n";
  // The next block's first convolution: %y stays blocked, as the shortcut is.
  s += conv("c3", "y", "w3", "tensor<16x16x1x1xf32>", t16, "0");
  s += "  return %c3" + std::string(returnShortcut ? ", %r0" : "") + " : " + t16 +
       (returnShortcut ? ", " + t16 : std::string()) + "\n}\n";
  return s;
}

TEST(CpuPlan, ADeadShortcutIsAddedIntoInPlaceAndALiveOneKept) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  for (bool returnShortcut : {false, true}) {
    SCOPED_TRACE(returnShortcut ? "shortcut returned" : "shortcut dead after the block");
    Module m = parse(residualBlock(returnShortcut));
    const std::vector<size_t> weights{1, 2, 3, 4};
    cpu::CpuPlan plan = planOf(m, weights);
    EXPECT_EQ(plan.stats.fusedConvs, 4) << plan.describe();
    EXPECT_NE(plan.describe().find("add(residual)"), std::string::npos) << plan.describe();
    std::mt19937 rng(returnShortcut ? 41 : 40);
    std::vector<Literal> args{randomF32({2, 8, 7, 9}, rng), randomF32({16, 8, 1, 1}, rng, -0.5f, 0.5f),
                              randomF32({16, 16, 3, 3}, rng, -0.3f, 0.3f), randomF32({16, 16, 1, 1}, rng, -0.5f, 0.5f),
                              randomF32({16, 16, 1, 1}, rng, -0.5f, 0.5f)};
    std::vector<Literal> want = interpret(m, args);
    Compiled got = runBackend(m, args, weights);
    ASSERT_EQ(got.result.outputs.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i)
      EXPECT_LE(toleranceRatio(got.result.outputs[i], want[i], 1e-5, 1e-6), 1.0) << i;
    // A second run on the same executable: nothing it keeps was written into.
    std::vector<Literal> perRun{args[0]};
    auto again = got.exe->run(perRun);
    ASSERT_TRUE(again) << again.status().message();
    for (size_t i = 0; i < want.size(); ++i) EXPECT_LE(toleranceRatio(again->outputs[i], want[i], 1e-5, 1e-6), 1.0) << i;
  }
}

// A 3x3 stride-1 convolution with a bias, a residual and a ReLU (ResNet's second convolution of
// a block, in shapes no vector width divides) runs Winograd's algorithm where oneDNN has it for
// this CPU (AVX-512); CompileOptions::winograd = false (--no-winograd) keeps it direct. Winograd
// rounds through its input and output transforms: within rtol 1e-4 of the direct convolution's
// result here, where the direct one is held to 1e-5.
TEST(CpuPlan, WinogradConvolutionsMatchTheInterpreter) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  const std::string t = "tensor<2x24x14x15xf32>";
  Module m = parse(
      "func.func @main(%x: tensor<2x16x14x15xf32>, %w: tensor<24x16x3x3xf32>, %bias: tensor<24xf32>, %res: " + t +
      ") -> " + t + " {\n"
      "  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {pad = "
      "[[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<2x16x14x15xf32>, "
      "tensor<24x16x3x3xf32>) -> " + t + "\n"
      "  %b = stablehlo.broadcast_in_dim %bias, dims = [1] : (tensor<24xf32>) -> " + t + "\n"
      "  %a = stablehlo.add %c, %b : " + t + "\n"
      "  %r = stablehlo.add %a, %res : " + t + "\n"
      "  %zero = stablehlo.constant dense<0.0> : " + t + "\n"
      "  %y = stablehlo.maximum %r, %zero : " + t + "\n"
      "  return %y : " + t + "\n}\n");
  const std::vector<size_t> weights{1, 2};
  CompileOptions direct;
  direct.winograd = false;
  direct.boundArguments = weights;
  auto directPlan = cpu::planCpu(m, *m.lookupFunction("main"), direct, {});
  ASSERT_TRUE(directPlan) << directPlan.status().message();
  EXPECT_EQ(directPlan->stats.fusedConvs, 1) << directPlan->describe();
  EXPECT_EQ(directPlan->stats.winogradConvs, 0) << directPlan->describe();
  EXPECT_EQ(directPlan->describe().find("winograd"), std::string::npos) << directPlan->describe();
  const cpu::CpuPlan plan = planOf(m, weights);
  const bool winograd = plan.stats.winogradConvs == 1;
  EXPECT_EQ(plan.describe().find("fused_convolution[convolution,add,add(residual),relu] winograd") != std::string::npos,
            winograd)
      << plan.describe();
  for (uint32_t seed : {11u, 12u}) {
    std::mt19937 rng(seed);
    std::vector<Literal> args;
    args.push_back(randomF32({2, 16, 14, 15}, rng));
    args.push_back(randomF32({24, 16, 3, 3}, rng, -0.5f, 0.5f));
    args.push_back(randomF32({24}, rng));
    args.push_back(randomF32({2, 24, 14, 15}, rng));
    std::vector<Literal> want = interpret(m, args);
    Compiled exact = runBackend(m, args, weights, direct);
    ASSERT_EQ(exact.result.outputs.size(), 1u);
    // Direct, but in oneDNN's summation order, which depends on the CPU's vector width: sums of
    // 144 products of up to 0.5 in magnitude carry absolute f32 errors of a few 1e-6 (1.6e-6 on
    // an AVX2-only AMD EPYC, where an absolute 1e-6 failed), so 1e-5 absolute.
    EXPECT_LE(toleranceRatio(exact.result.outputs[0], want[0], 1e-5, 1e-5), 1.0);
    Compiled got = runBackend(m, args, weights);
    ASSERT_EQ(got.result.outputs.size(), 1u);
    EXPECT_LE(toleranceRatio(got.result.outputs[0], want[0], 1e-4, 1e-5), 1.0);
  }
  if (!winograd) GTEST_SKIP() << "oneDNN has no Winograd convolution for this CPU: both runs were direct";
}

TEST(CpuPlan, ConvolutionsWithPerRunKernelsOrTappedValuesStayUnfusedOrUnblocked) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  Module m = parse(convBlock());
  // Nothing bound: no kernel is known before the run, so no convolution is fused.
  EXPECT_EQ(planOf(m, {}).stats.fusedConvs, 0);
  // Tapping %relu1 keeps it in NCHW.
  std::vector<size_t> weights{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
  EXPECT_EQ(planOf(m, weights, {"%relu1"}).stats.blockedValues, 0);
  std::mt19937 rng(9);
  std::vector<Literal> args = convArgs(rng);
  std::vector<Literal> want = interpret(m, args);
  CompileOptions options;
  options.tapValues = {"%relu1"};
  Compiled got = runBackend(m, args, weights, options);
  ASSERT_EQ(got.result.taps.size(), 1u);
  EXPECT_EQ(got.result.taps[0].shape(), (std::vector<int64_t>{2, 11, 5, 6}));
  for (size_t i = 0; i < 2; ++i) EXPECT_LE(toleranceRatio(got.result.outputs[i], want[i], 1e-5, 1e-6), 1.0) << i;
}

// ResNet's stem: conv (stride 2) + bias + ReLU + 3x3/2 max pooling (padded with -inf), then a
// 1x1 conv reading the pooled value in the blocked layout.
TEST(CpuPlan, MaxPoolingJoinsTheConvolutionBeforeIt) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  Module m = parse(R"(
func.func @main(%x: tensor<1x3x13x15xf32>, %w: tensor<7x3x3x3xf32>, %b: tensor<7xf32>, %w2: tensor<5x7x1x1xf32>)
    -> tensor<1x5x4x4xf32> {
  %c = stablehlo.convolution(%x, %w) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {stride = [2, 2], pad = [[1, 1], [1, 1]]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x3x13x15xf32>, tensor<7x3x3x3xf32>) -> tensor<1x7x7x8xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<7xf32>) -> tensor<1x7x7x8xf32>
  %a = stablehlo.add %c, %bb : tensor<1x7x7x8xf32>
  %zero = stablehlo.constant dense<0.0> : tensor<1x7x7x8xf32>
  %r = stablehlo.maximum %a, %zero : tensor<1x7x7x8xf32>
  %ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %p = "stablehlo.reduce_window"(%r, %ninf) ({
  ^bb0(%l: tensor<f32>, %k: tensor<f32>):
    %mx = stablehlo.maximum %l, %k : tensor<f32>
    stablehlo.return %mx : tensor<f32>
  }) {window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>} : (tensor<1x7x7x8xf32>, tensor<f32>) -> tensor<1x7x4x4xf32>
  %y = stablehlo.convolution(%p, %w2) dim_numbers = [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1], window = {} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x7x4x4xf32>, tensor<5x7x1x1xf32>) -> tensor<1x5x4x4xf32>
  return %y : tensor<1x5x4x4xf32>
}
)");
  cpu::CpuPlan plan = planOf(m, {1, 2, 3});
  EXPECT_NE(plan.describe().find("fused_convolution[convolution,add,relu,max_pool]"), std::string::npos)
      << plan.describe();
  EXPECT_EQ(plan.stats.blockedValues, 1) << plan.describe();
  for (uint32_t seed : {3u, 4u}) {
    std::mt19937 rng(seed);
    std::vector<Literal> args{randomF32({1, 3, 13, 15}, rng), randomF32({7, 3, 3, 3}, rng), randomF32({7}, rng),
                              randomF32({5, 7, 1, 1}, rng)};
    std::vector<Literal> want = interpret(m, args);
    Compiled got = runBackend(m, args, {1, 2, 3});
    ASSERT_EQ(got.result.outputs.size(), 1u);
    EXPECT_LE(toleranceRatio(got.result.outputs[0], want[0], 1e-5, 1e-6), 1.0);
  }
}

// nn.Linear as the exporter writes it (transpose(w) then dot_general, then a bias add), a
// product with [K, N] weights and no bias, and one contracting the weights' dim 1; odd sizes.
// (The products chain, so errors are judged at rtol = atol = 1e-4; wrong operands give O(1).)
TEST(CpuPlan, FusedMatmulsMatchTheInterpreter) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  // Fuse even where this CPU has no packed GEMM kernel (the plan would leave the products alone).
  cpu::setFusedMatmulNeedsPackedWeights(false);
  struct Restore {
    ~Restore() { cpu::setFusedMatmulNeedsPackedWeights(true); }
  } restore;
  Module m = parse(R"(
func.func @main(%x: tensor<67x129xf32>, %w: tensor<45x129xf32>, %b: tensor<45xf32>, %v: tensor<45x97xf32>,
                %u: tensor<61x97xf32>) -> (tensor<67x45xf32>, tensor<67x97xf32>, tensor<67x61xf32>) {
  %t = stablehlo.transpose %w, dims = [1, 0] : (tensor<45x129xf32>) -> tensor<129x45xf32>
  %y = stablehlo.dot_general %x, %t, contracting_dims = [1] x [0] : (tensor<67x129xf32>, tensor<129x45xf32>) -> tensor<67x45xf32>
  %bb = stablehlo.broadcast_in_dim %b, dims = [1] : (tensor<45xf32>) -> tensor<67x45xf32>
  %z = stablehlo.add %y, %bb : tensor<67x45xf32>
  %p = stablehlo.dot_general %z, %v, contracting_dims = [1] x [0] : (tensor<67x45xf32>, tensor<45x97xf32>) -> tensor<67x97xf32>
  %q = stablehlo.dot_general %p, %u, contracting_dims = [1] x [1] : (tensor<67x97xf32>, tensor<61x97xf32>) -> tensor<67x61xf32>
  return %z, %p, %q : tensor<67x45xf32>, tensor<67x97xf32>, tensor<67x61xf32>
}
)");
  std::vector<size_t> weights{1, 2, 3, 4};
  cpu::CpuPlan plan = planOf(m, weights);
  EXPECT_EQ(plan.stats.fusedMatmuls, 3) << plan.describe();
  EXPECT_NE(plan.describe().find("fused_matmul[dot_general,add(bias)]"), std::string::npos) << plan.describe();
  EXPECT_EQ(plan.describe().find("run: stablehlo.transpose"), std::string::npos) << plan.describe();
  std::mt19937 rng(21);
  std::vector<Literal> args{randomF32({67, 129}, rng), randomF32({45, 129}, rng), randomF32({45}, rng),
                            randomF32({45, 97}, rng), randomF32({61, 97}, rng)};
  std::vector<Literal> want = interpret(m, args);
  Compiled got = runBackend(m, args, weights);
  ASSERT_EQ(got.result.outputs.size(), 3u);
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(toleranceRatio(got.result.outputs[i], want[i], 1e-4, 1e-4), 1.0) << i;
  // A rebind of the weights reaches the product.
  args[1] = randomF32({45, 129}, rng);
  ASSERT_TRUE(got.exe->bindArgument(1, args[1]).isOk());
  std::vector<Literal> perRun{args[0]};
  auto r = got.exe->run(perRun);
  ASSERT_TRUE(r) << r.status().message();
  std::vector<Literal> want2 = interpret(m, args);
  for (size_t i = 0; i < 3; ++i) EXPECT_LE(toleranceRatio(r->outputs[i], want2[i], 1e-4, 1e-4), 1.0) << i;
  // Per-run weights: an ordinary dot_general step.
  EXPECT_EQ(planOf(m, {}).stats.fusedMatmuls, 0);
}

TEST(CpuPlan, ADeclaredBoundArgumentMustBeBound) {
  Module m = parse(kTransformerBits);
  CompileOptions options;
  options.boundArguments = {1};
  auto exe = makeCpuBackend()->compile(m, *m.lookupFunction("main"), options);
  ASSERT_TRUE(exe) << exe.status().message();
  std::mt19937 rng(1);
  auto r = (*exe)->run(transformerArgs(rng));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("argument #1 is declared bound"), std::string::npos) << r.status().message();
}

}  // namespace
}  // namespace wf
