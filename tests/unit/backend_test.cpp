// The backend registry, DeviceSpec, and the CPU Backend/Executable adapter (bound arguments, taps,
// stats and check sinks).
#include "runtime/backend.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "backends/cpu/cpu_backend.h"
#include "backends/registry.h"
#include "eval/interpreter.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"
#include "support/thread_pool.h"

namespace wf {
namespace {

Literal f32(std::vector<int64_t> shape, std::vector<float> values) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  for (size_t i = 0; i < values.size(); ++i) l.dataAs<float>()[i] = values[i];
  return l;
}

std::vector<float> floats(const Literal& l) {
  return std::vector<float>(l.dataAs<float>(), l.dataAs<float>() + l.numElements());
}

Module parse(const std::string& text) {
  ParseOptions options;
  options.fileName = "test.mlir";
  auto m = parseModule(text, options);
  EXPECT_TRUE(m) << m.status().message();
  EXPECT_TRUE(verifyModule(*m).isOk());
  return std::move(*m);
}

// y = (x + w) * w, with the intermediate %sum, and a two-result op %pair.
const char* kModel = R"(
func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>) -> tensor<2xf32> {
  %sum = stablehlo.add %x, %w : tensor<2xf32>
  %pair:2 = stablehlo.optimization_barrier %sum, %x : tensor<2xf32>, tensor<2xf32>
  %y = stablehlo.multiply %pair#0, %w : tensor<2xf32>
  return %y : tensor<2xf32>
}
)";

TEST(DeviceSpec, ParsesKindsAndOrdinals) {
  auto cpu = DeviceSpec::parse("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->kind, "cpu");
  EXPECT_EQ(cpu->ordinal, 0);
  EXPECT_EQ(cpu->toString(), "cpu");
  auto cuda = DeviceSpec::parse("cuda:3");
  ASSERT_TRUE(cuda);
  EXPECT_EQ(cuda->kind, "cuda");
  EXPECT_EQ(cuda->ordinal, 3);
  EXPECT_EQ(cuda->toString(), "cuda:3");
  EXPECT_EQ(DeviceSpec::parse("cuda")->toString(), "cuda:0");
  for (const char* bad : {"", ":1", "cuda:", "cuda:x", "cuda:-1", "CUDA", "cu da", "cuda:1:2"}) {
    auto r = DeviceSpec::parse(bad);
    EXPECT_FALSE(r) << bad;
    if (!r) {
      EXPECT_NE(r.status().message().find("device '" + std::string(bad) + "'"), std::string::npos);
    }
  }
}

TEST(BackendRegistry, BuiltinsRegisterOnceAndUnknownKindsListTheAvailableOnes) {
  registerBuiltinBackends();
  registerBuiltinBackends();
  std::vector<std::string> kinds = registeredBackendKinds();
  EXPECT_EQ(std::count(kinds.begin(), kinds.end(), "cpu"), 1);

  auto cpu = createBackend(*DeviceSpec::parse("cpu"));
  ASSERT_TRUE(cpu) << cpu.status().message();
  EXPECT_EQ((*cpu)->name(), "cpu");
  auto cpu1 = createBackend(*DeviceSpec::parse("cpu:1"));
  ASSERT_FALSE(cpu1);
  EXPECT_NE(cpu1.status().message().find("ordinal 0 only"), std::string::npos) << cpu1.status().message();

  auto tpu = createBackend(*DeviceSpec::parse("tpu"));
  ASSERT_FALSE(tpu);
  EXPECT_NE(tpu.status().message().find("unknown device kind 'tpu'"), std::string::npos) << tpu.status().message();
  EXPECT_NE(tpu.status().message().find("cpu"), std::string::npos) << tpu.status().message();

  if (std::find(kinds.begin(), kinds.end(), "cuda") == kinds.end()) {
    auto cuda = createBackend(*DeviceSpec::parse("cuda"));
    ASSERT_FALSE(cuda);
    EXPECT_NE(cuda.status().message().find("built without the cuda backend"), std::string::npos)
        << cuda.status().message();
  }
}

TEST(BackendRegistry, RegisterBackendAddsAKind) {
  registerBackend("fake", [](const DeviceSpec& d) -> Expected<std::unique_ptr<Backend>> {
    return invalidArgument("fake device " + d.toString() + " is not there");
  });
  auto r = createBackend(*DeviceSpec::parse("fake:2"));
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("fake device fake:2 is not there"), std::string::npos) << r.status().message();
}

// A transpose that only a dot_general reads is not copied: the product reads its operand in place
// (dotconv::transposeFoldsIntoDots, decided once per executable). Tapped, it is computed, and its
// tap holds the transposed values.
TEST(CpuBackend, TransposeReadByADotFoldsUnlessTapped) {
  Module module = parse(R"(
func.func @main(%x: tensor<2x3xf32>, %w: tensor<2x3xf32>) -> tensor<2x2xf32> {
  %t = "stablehlo.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %y = "stablehlo.dot_general"(%x, %t) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  func.return %y : tensor<2x2xf32>
}
)");
  const Operation* entry = module.lookupFunction("main");
  ASSERT_NE(entry, nullptr);
  std::unique_ptr<Backend> backend = makeCpuBackend();
  const std::vector<Literal> args = {f32({2, 3}, {1, 2, 3, 4, 5, 6}), f32({2, 3}, {1, 0, -1, 2, 1, 0})};
  for (bool tapped : {false, true}) {
    CompileOptions options;
    if (tapped) options.tapValues = {"%t"};
    auto exe = backend->compile(module, *entry, options);
    ASSERT_TRUE(exe) << exe.status().message();
    for (int run = 0; run < 2; ++run) {  // the decision holds from run to run
      auto r = (*exe)->run(args);
      ASSERT_TRUE(r) << r.status().message();
      EXPECT_EQ(floats(r->outputs[0]), (std::vector<float>{-2, 4, -2, 13})) << "tapped " << tapped;
      ASSERT_EQ(r->taps.size(), tapped ? 1u : 0u);
      if (tapped) {
        EXPECT_EQ(r->taps[0].shape(), (std::vector<int64_t>{3, 2}));
        EXPECT_EQ(floats(r->taps[0]), (std::vector<float>{1, 2, 0, 1, -1, 0}));
      }
    }
  }
}

TEST(CpuBackend, BoundArgumentsTapsAndCopies) {
  Module module = parse(kModel);
  const Operation* entry = module.lookupFunction("main");
  ASSERT_NE(entry, nullptr);
  std::unique_ptr<Backend> backend = makeCpuBackend();
  CompileOptions options;
  options.tapValues = {"%sum", "pair#1", "%w", "%sum"};
  auto exe = backend->compile(module, *entry, options);
  ASSERT_TRUE(exe) << exe.status().message();
  EXPECT_EQ((*exe)->deviceName(), "cpu");

  Literal w = f32({2}, {2, 3});
  ASSERT_TRUE((*exe)->bindArgument(1, w).isOk());
  EXPECT_EQ((*exe)->deviceBytesInUse(), 8u);
  w.dataAs<float>()[0] = 100;  // the executable holds its own copy

  Literal x = f32({2}, {1, 1});
  auto r = (*exe)->run(std::span<const Literal>(&x, 1));
  ASSERT_TRUE(r) << r.status().message();
  ASSERT_EQ(r->outputs.size(), 1u);
  EXPECT_EQ(floats(r->outputs[0]), (std::vector<float>{6, 12}));
  ASSERT_EQ(r->taps.size(), 4u);
  EXPECT_EQ(floats(r->taps[0]), (std::vector<float>{3, 4}));
  EXPECT_EQ(floats(r->taps[1]), (std::vector<float>{1, 1}));
  EXPECT_EQ(floats(r->taps[2]), (std::vector<float>{2, 3}));
  EXPECT_EQ(floats(r->taps[3]), (std::vector<float>{3, 4}));

  // Wrong argument count, wrong shape, bad bind index.
  EXPECT_FALSE((*exe)->run({}));
  Literal bad = f32({3}, {1, 2, 3});
  auto wrong = (*exe)->run(std::span<const Literal>(&bad, 1));
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.status().message().find("argument #0 expects tensor<2xf32>, got tensor<3xf32>"), std::string::npos)
      << wrong.status().message();
  EXPECT_FALSE((*exe)->bindArgument(7, w).isOk());
  EXPECT_FALSE((*exe)->bindArgument(0, bad).isOk());
}

TEST(CpuBackend, UnknownAndAmbiguousTapsAreErrors) {
  Module module = parse(kModel);
  const Operation* entry = module.lookupFunction("main");
  std::unique_ptr<Backend> backend = makeCpuBackend();
  for (auto [tap, needle] : {std::pair<const char*, const char*>{"%nope", "no value %nope in the body of @main"},
                             {"%pair", "names the 2 results"},
                             {"%pair#2", "has 2 results"},
                             {"%sum#x", "expected %NAME or %NAME#INDEX"}}) {
    CompileOptions options;
    options.tapValues = {tap};
    auto exe = backend->compile(module, *entry, options);
    ASSERT_FALSE(exe) << tap;
    EXPECT_NE(exe.status().message().find(needle), std::string::npos) << exe.status().message();
  }
}

TEST(CpuBackend, OpsWithoutAKernelFailCompileWithTheirLocation) {
  Module module = parse(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = "mydialect.frobnicate"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  return %y : tensor<2xf32>
}
)");
  const Operation* entry = module.lookupFunction("main");
  ASSERT_NE(entry, nullptr);
  auto exe = makeCpuBackend()->compile(module, *entry, CompileOptions{});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(exe.status().message().find("mydialect.frobnicate"), std::string::npos) << exe.status().message();
  EXPECT_NE(exe.status().message().find("test.mlir:3:"), std::string::npos) << exe.status().message();
}

TEST(CpuBackend, AThreadCountTheRunningPoolCannotHonourIsAnError) {
  Module module = parse(kModel);
  const Operation* entry = module.lookupFunction("main");
  int running = numThreads();  // the pool is sized now
  CompileOptions same;
  same.numThreads = running;
  auto ok = makeCpuBackend()->compile(module, *entry, same);
  EXPECT_TRUE(ok) << ok.status().message();
  CompileOptions other;
  other.numThreads = running + 1;
  auto exe = makeCpuBackend()->compile(module, *entry, other);
  ASSERT_FALSE(exe);
  EXPECT_NE(exe.status().message().find("already runs " + std::to_string(running) + " threads"), std::string::npos)
      << exe.status().message();
}

// Statistics and check hooks are part of the Executable contract: the CPU reports the entry's
// ops as its steps, and check.* ops report to the sink given (without one they are errors).
class CountingSink : public CheckSink {
 public:
  void report(const Operation&, bool passed, const std::string&) override { ++(passed ? passes : failures); }
  void unsupported(const Operation&, const std::string&) override { ++unsupportedChecks; }
  int passes = 0, failures = 0, unsupportedChecks = 0;
};

TEST(CpuBackend, StatsAndCheckSinkThroughTheContract) {
  Module model = parse(kModel);
  auto plain = makeCpuBackend()->compile(model, *model.lookupFunction("main"), CompileOptions{});
  ASSERT_TRUE(plain) << plain.status().message();
  const ExecutableStats stats = (*plain)->stats();
  EXPECT_EQ(stats.deviceSteps, 3);  // add, optimization_barrier, multiply
  EXPECT_EQ(stats.hostSteps, 0);
  EXPECT_EQ(stats.controlFlowOps, 0);
  EXPECT_EQ(stats.fusedKernels, 2);  // the add and the multiply, each a fused loop (the barrier splits them)
  EXPECT_EQ(stats.fusedOps, 2);
  EXPECT_FALSE(stats.usesGraph);

  Module module = parse(R"(
func.func @main(%x: tensor<2xf32>) -> tensor<2xf32> {
  %y = stablehlo.add %x, %x : tensor<2xf32>
  check.expect_eq_const %y, dense<[2.0, 4.0]> : tensor<2xf32>
  return %y : tensor<2xf32>
}
)");
  auto exe = makeCpuBackend()->compile(module, *module.lookupFunction("main"), CompileOptions{});
  ASSERT_TRUE(exe) << exe.status().message();
  EXPECT_EQ((*exe)->stats().deviceSteps, 2);
  Literal x = f32({2}, {1, 2});
  auto noSink = (*exe)->run(std::span<const Literal>(&x, 1));
  ASSERT_FALSE(noSink);
  EXPECT_NE(noSink.status().message().find("check sink"), std::string::npos) << noSink.status().message();
  CountingSink sink;
  (*exe)->setCheckSink(&sink);
  ASSERT_TRUE((*exe)->run(std::span<const Literal>(&x, 1)));
  Literal other = f32({2}, {1, 3});
  ASSERT_TRUE((*exe)->run(std::span<const Literal>(&other, 1)));
  EXPECT_EQ(sink.passes, 1);
  EXPECT_EQ(sink.failures, 1);
  EXPECT_EQ(sink.unsupportedChecks, 0);
}

}  // namespace
}  // namespace wf
