// Timing of ResNet-50's convolutions at batch 1 (NCHW / OIHW, f32). Disabled by default; run with
//   warpforge_unit_tests --gtest_also_run_disabled_tests --gtest_filter='*ResNet50*'
// to print the per-layer and total time, for comparison with PyTorch CPU on the same machine.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdio>
#include <random>

#include "backends/cpu/interpreter.h"

namespace wf {
namespace {

struct ConvLayer {
  int64_t cin, hw, cout, k, stride, pad, count;
};

// (input channels, input size, output channels, kernel, stride, padding, occurrences)
const ConvLayer kResNet50[] = {
    {3, 224, 64, 7, 2, 3, 1},     {64, 56, 64, 1, 1, 0, 1},     {64, 56, 64, 3, 1, 1, 3},
    {64, 56, 256, 1, 1, 0, 4},    {256, 56, 64, 1, 1, 0, 2},    {256, 56, 128, 1, 1, 0, 1},
    {128, 56, 128, 3, 2, 1, 1},   {128, 28, 512, 1, 1, 0, 4},   {256, 56, 512, 1, 2, 0, 1},
    {512, 28, 128, 1, 1, 0, 3},   {128, 28, 128, 3, 1, 1, 3},   {512, 28, 256, 1, 1, 0, 1},
    {256, 28, 256, 3, 2, 1, 1},   {256, 14, 1024, 1, 1, 0, 6},  {512, 28, 1024, 1, 2, 0, 1},
    {1024, 14, 256, 1, 1, 0, 5},  {256, 14, 256, 3, 1, 1, 5},   {1024, 14, 512, 1, 1, 0, 1},
    {512, 14, 512, 3, 2, 1, 1},   {512, 7, 2048, 1, 1, 0, 3},   {1024, 14, 2048, 1, 2, 0, 1},
    {2048, 7, 512, 1, 1, 0, 2},   {512, 7, 512, 3, 1, 1, 2},
};

Attribute intArray(const std::vector<int64_t>& v) {
  std::vector<Attribute> e;
  for (int64_t x : v) e.push_back(Attribute::integer(x));
  return Attribute::array(std::move(e));
}

TEST(ConvBench, DISABLED_ResNet50Batch1) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> u(-1, 1);
  const Kernel* kernel = KernelRegistry::instance().find(OpCode::Convolution);
  ASSERT_NE(kernel, nullptr);
  double total = 0;
  for (const ConvLayer& l : kResNet50) {
    int64_t out = (l.hw + 2 * l.pad - l.k) / l.stride + 1;
    Literal x = Literal::zeros(Type::tensor({1, l.cin, l.hw, l.hw}, ElementType::kF32));
    Literal w = Literal::zeros(Type::tensor({l.cout, l.cin, l.k, l.k}, ElementType::kF32));
    for (int64_t i = 0; i < x.numElements(); ++i) x.dataAs<float>()[i] = u(rng);
    for (int64_t i = 0; i < w.numElements(); ++i) w.dataAs<float>()[i] = u(rng);
    Literal pad = Literal::zeros(Type::tensor({2, 2}, ElementType::kSI64));
    for (int64_t i = 0; i < 4; ++i) pad.setInt(i, l.pad);
    Operation op("stablehlo.convolution", Location{"bench", 1, 1, ""});
    op.addResult(Type::tensor({1, l.cout, out, out}, ElementType::kF32));
    op.setAttr("dimension_numbers",
               Attribute::dialectStruct("stablehlo.conv", {{"input_batch_dimension", Attribute::integer(0)},
                                                           {"input_feature_dimension", Attribute::integer(1)},
                                                           {"input_spatial_dimensions", intArray({2, 3})},
                                                           {"kernel_output_feature_dimension", Attribute::integer(0)},
                                                           {"kernel_input_feature_dimension", Attribute::integer(1)},
                                                           {"kernel_spatial_dimensions", intArray({2, 3})},
                                                           {"output_batch_dimension", Attribute::integer(0)},
                                                           {"output_feature_dimension", Attribute::integer(1)},
                                                           {"output_spatial_dimensions", intArray({2, 3})}}));
    op.setAttr("window_strides", Attribute::denseArray(ElementType::kSI64, {l.stride, l.stride}));
    op.setAttr("padding", Attribute::denseElements(pad));
    op.setAttr("feature_group_count", Attribute::integer(1));
    op.setAttr("batch_group_count", Attribute::integer(1));
    std::vector<Literal> operands{x, w};
    EvalContext ctx;
    ASSERT_TRUE((*kernel)(op, operands, ctx));  // warm-up
    const int reps = 5;
    auto t0 = std::chrono::steady_clock::now();
    for (int r = 0; r < reps; ++r) ASSERT_TRUE((*kernel)(op, operands, ctx));
    double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / reps;
    total += ms * static_cast<double>(l.count);
    std::printf("conv %4lld->%4lld %lldx%lld s%lld @%3lld: %8.3f ms x%lld\n", static_cast<long long>(l.cin),
                static_cast<long long>(l.cout), static_cast<long long>(l.k), static_cast<long long>(l.k),
                static_cast<long long>(l.stride), static_cast<long long>(l.hw), ms, static_cast<long long>(l.count));
  }
  std::printf("ResNet-50 convolutions, batch 1: %.2f ms\n", total);
}

}  // namespace
}  // namespace wf
