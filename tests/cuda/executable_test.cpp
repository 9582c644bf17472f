// The CUDA executable: buffer planning by liveness, CUDA graph capture and replay, bound
// arguments, host fallback (and its absence), taps, constants, argument checking; the caching
// allocator and the error-checking macros. Control flow has its own file.
#include "backends/cuda/allocator.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/register.h"
#include "backends/registry.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// x -> ((x * x + x) * x + x) ... twelve steps, each value dead after the next op.
std::string chainProgram(int steps) {
  const std::string t = "tensor<1000xf32>";
  std::string body;
  std::string prev = "%x";
  for (int i = 0; i < steps; ++i) {
    const std::string m = "%m" + std::to_string(i), a = "%s" + std::to_string(i);
    body += "  " + m + " = \"stablehlo.multiply\"(" + prev + ", %w) : (" + t + ", " + t + ") -> " + t + "\n";
    body += "  " + a + " = \"stablehlo.add\"(" + m + ", %x) : (" + t + ", " + t + ") -> " + t + "\n";
    prev = a;
  }
  return "func.func @main(%x: " + t + ", %w: " + t + ") -> " + t + " {\n" + body + "  func.return " + prev + " : " + t +
         "\n}\n";
}

TEST(CudaExecutable, IntermediatesShareSlotsByLiveness) {
  WF_REQUIRE_GPU();
  const std::string text = chainProgram(12);
  Module m = parse(text);
  CompileOptions unfused;  // one kernel per op, so that every intermediate needs a buffer
  unfused.fuse = false;
  auto exe = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  EXPECT_EQ(info.deviceSteps, 24);
  EXPECT_LE(info.slots, 3);
  EXPECT_EQ(info.intermediateBytes, size_t{24} * 4000);
  EXPECT_LE(info.slotBytes, size_t{3} * 4096);
  // Two values live at once at every step (an op's operand and its result): the arena is at
  // that floor.
  EXPECT_EQ(info.peakLiveBytes, size_t{2} * 4096);
  EXPECT_EQ(info.slotBytes, info.peakLiveBytes);
  const Type t = Type::tensor({1000}, ElementType::kF32);
  expectMatchesCpu(text, {randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)}, Tolerance{1e-5, 1e-6});
}

TEST(CudaExecutable, StaticProgramIsCapturedOnceAndReplayed) {
  WF_REQUIRE_GPU();
  const std::string text = chainProgram(4);
  Module m = parse(text);
  CompileOptions direct;
  direct.cudaGraphs = false;
  auto graphExe = cudaBackend().compile(m, *mainOf(m), {});
  auto directExe = cudaBackend().compile(m, *mainOf(m), direct);
  ASSERT_TRUE(graphExe && directExe);
  const Type t = Type::tensor({1000}, ElementType::kF32);
  for (int run = 0; run < 3; ++run) {
    std::vector<Literal> args = {randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)};
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want);
    auto viaGraph = (*graphExe)->run(args);
    auto direct = (*directExe)->run(args);
    ASSERT_TRUE(viaGraph) << viaGraph.status().toString();
    ASSERT_TRUE(direct) << direct.status().toString();
    EXPECT_EQ(compareLiterals(viaGraph->outputs[0], (*want)[0], Tolerance{1e-5, 1e-6}), "");
    EXPECT_TRUE(viaGraph->outputs[0].bitwiseEqual(direct->outputs[0]));
  }
  EXPECT_TRUE((*graphExe)->stats().usesGraph);
  EXPECT_EQ((*graphExe)->stats().graphLaunches, 3);
  EXPECT_FALSE((*directExe)->stats().usesGraph);
}

TEST(CudaExecutable, BoundArgumentsStayResident) {
  WF_REQUIRE_GPU();
  const std::string text = chainProgram(2);
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe);
  const Type t = Type::tensor({1000}, ElementType::kF32);
  Literal w = randomLiteral(t, -1, 1);
  {
    Literal copy = w.clone();
    ASSERT_TRUE((*exe)->bindArgument(1, copy).isOk());
  }  // the host copy is gone; the device keeps its own
  EXPECT_GT((*exe)->deviceBytesInUse(), size_t{8000});
  EXPECT_NE((*exe)->deviceName().find("cuda:0 ("), std::string::npos) << (*exe)->deviceName();
  for (int run = 0; run < 2; ++run) {
    Literal x = randomLiteral(t, -1, 1);
    auto want = runCpu(m, {x.clone(), w.clone()});
    std::vector<Literal> args = {x};
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{1e-5, 1e-6}), "");
  }
  // Wrong count and wrong type are errors that say what was expected.
  auto none = (*exe)->run({});
  ASSERT_FALSE(none);
  EXPECT_EQ(none.status().code(), StatusCode::kInvalidArgument);
  std::vector<Literal> bad = {randomLiteral(Type::tensor({999}, ElementType::kF32))};
  auto wrong = (*exe)->run(bad);
  ASSERT_FALSE(wrong);
  EXPECT_NE(wrong.status().message().find("tensor<1000xf32>"), std::string::npos) << wrong.status().message();
}

// A sort by magnitude: a comparator the CUDA sort does not take (it matches one compare of the
// arguments themselves), so the op has no kernel.
const char* kSortProgram = R"(func.func @main(%x: tensor<40xf32>, %w: tensor<40xf32>) -> tensor<40xf32> {
  %y = "stablehlo.add"(%x, %w) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
  %s = "stablehlo.sort"(%y) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %aa = "stablehlo.abs"(%a) : (tensor<f32>) -> tensor<f32>
    %ab = "stablehlo.abs"(%b) : (tensor<f32>) -> tensor<f32>
    %lt = "stablehlo.compare"(%aa, %ab) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }) {dimension = 0 : i64, is_stable = true} : (tensor<40xf32>) -> tensor<40xf32>
  %z = "stablehlo.multiply"(%s, %w) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
  func.return %z : tensor<40xf32>
}
)";

TEST(CudaExecutable, OpWithoutKernelFailsCompileUnlessFallbackIsAllowed) {
  WF_REQUIRE_GPU();
  Module m = parse(kSortProgram);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  const std::string& msg = exe.status().message();
  EXPECT_NE(msg.find("stablehlo.sort"), std::string::npos) << msg;
  EXPECT_NE(msg.find("cuda_test.mlir:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("allowCpuFallback"), std::string::npos) << msg;

  CompileOptions options;
  options.allowCpuFallback = true;
  auto fallback = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(fallback) << fallback.status().toString();
  EXPECT_EQ((*fallback)->stats().hostSteps, 1);
  EXPECT_EQ((*fallback)->stats().deviceSteps, 2);
  const Type t = Type::tensor({40}, ElementType::kF32);
  std::vector<Literal> args = {randomLiteral(t), randomLiteral(t)};
  auto want = runCpu(m, cloneAll(args));
  auto got = (*fallback)->run(args);
  ASSERT_TRUE(got) << got.status().toString();
  EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{}), "");
  ASSERT_EQ(got->report.hostFallbackOps.size(), 1u);
  EXPECT_EQ(got->report.hostFallbackOps[0].rfind("stablehlo.sort at cuda_test.mlir:3:", 0), 0u)
      << got->report.hostFallbackOps[0];
  EXPECT_FALSE((*fallback)->stats().usesGraph);
}

TEST(CudaExecutable, ConstantsTapsAndEmptyTensors) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%x: tensor<2x3xf32>, %e: tensor<0x5xf32>) -> (tensor<2x3xf32>, tensor<0x5xf32>, tensor<2x3xf32>) {
  %c = "stablehlo.constant"() {value = dense<[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %sum = "stablehlo.add"(%x, %c) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %prod = "stablehlo.multiply"(%sum, %sum) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %ee = "stablehlo.negate"(%e) : (tensor<0x5xf32>) -> tensor<0x5xf32>
  func.return %prod, %ee, %x : tensor<2x3xf32>, tensor<0x5xf32>, tensor<2x3xf32>
}
)";
  const Type t = Type::tensor({2, 3}, ElementType::kF32), e = Type::tensor({0, 5}, ElementType::kF32);
  expectMatchesCpu(text, {randomLiteral(t), Literal::zeros(e)}, Tolerance{1e-6, 1e-6});
  Module m = parse(text);
  CompileOptions options;
  options.tapValues = {"%sum"};
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  Literal x = randomLiteral(t);
  std::vector<Literal> args = {x, Literal::zeros(e)};
  auto got = (*exe)->run(args);
  ASSERT_TRUE(got) << got.status().toString();
  ASSERT_EQ(got->taps.size(), 1u);
  for (int64_t i = 0; i < 6; ++i) EXPECT_FLOAT_EQ(static_cast<float>(got->taps[0].getDouble(i)), static_cast<float>(x.getDouble(i) + i + 1));
  options.tapValues = {"%nope"};
  EXPECT_FALSE(cudaBackend().compile(m, *mainOf(m), options));
}

TEST(CudaExecutable, RegisteredAsTheCudaKind) {
  registerBuiltinBackends();
  std::vector<std::string> kinds = registeredBackendKinds();
  EXPECT_NE(std::find(kinds.begin(), kinds.end(), "cuda"), kinds.end());
  auto backend = createBackend(DeviceSpec{"cuda", 0});
  if (cuda::deviceCount() == 0) {
    // Without a GPU the backend is an error that says why, never a crash.
    ASSERT_FALSE(backend);
    EXPECT_NE(backend.status().message().find("cuda:0"), std::string::npos) << backend.status().message();
    return;
  }
  ASSERT_TRUE(backend) << backend.status().toString();
  EXPECT_EQ((*backend)->name(), "cuda");
  auto far = createBackend(DeviceSpec{"cuda", 99});
  ASSERT_FALSE(far);
  EXPECT_NE(far.status().message().find("cuda:99"), std::string::npos) << far.status().message();
}

// ---- allocator and checks -----------------------------------------------------------------

TEST(CudaAllocator, SizeClasses) {
  using cuda::CachingAllocator;
  EXPECT_EQ(CachingAllocator::sizeClass(1), 512u);
  EXPECT_EQ(CachingAllocator::sizeClass(512), 512u);
  EXPECT_EQ(CachingAllocator::sizeClass(513), 1024u);
  EXPECT_EQ(CachingAllocator::sizeClass(size_t{1} << 20), size_t{1} << 20);
  EXPECT_EQ(CachingAllocator::sizeClass((size_t{1} << 20) + 1), (size_t{33} << 15));  // 1 MiB + 32 KiB
  EXPECT_EQ(CachingAllocator::sizeClass(size_t{3} << 29), size_t{3} << 29);          // 1.5 GiB
  for (size_t n : {size_t{1}, size_t{777}, size_t{123456789}, size_t{5} << 33}) {
    EXPECT_GE(CachingAllocator::sizeClass(n), n);
    EXPECT_LE(CachingAllocator::sizeClass(n), n + n / 32 + 512);
  }
}

TEST(CudaAllocator, ReusesFreedBlocksAndTracksPeak) {
  WF_REQUIRE_GPU();
  ASSERT_TRUE(cuda::Device::get(0)->get()->activate().isOk());
  cuda::CachingAllocator alloc(0);
  {
    auto a = alloc.allocate(1000, "a");
    auto b = alloc.allocate(3 << 20, "b");
    ASSERT_TRUE(a && b);
    EXPECT_EQ(alloc.stats().bytesInUse, 1024u + (3u << 20));
  }
  EXPECT_EQ(alloc.stats().bytesInUse, 0u);
  EXPECT_EQ(alloc.stats().peakBytesInUse, 1024u + (3u << 20));
  auto c = alloc.allocate(900, "c");
  ASSERT_TRUE(c);
  EXPECT_EQ(alloc.stats().cacheHits, 1);
  EXPECT_EQ(alloc.stats().deviceMallocs, 2);
  ASSERT_TRUE(alloc.emptyCache().isOk());
  EXPECT_EQ(alloc.stats().bytesCached, 0u);
}

TEST(CudaAllocator, OutOfMemoryIsAClearError) {
  WF_REQUIRE_GPU();
  ASSERT_TRUE(cuda::Device::get(0)->get()->activate().isOk());
  cuda::CachingAllocator alloc(0);
  auto huge = alloc.allocate(size_t{1} << 50, "a test tensor");
  ASSERT_FALSE(huge);
  EXPECT_EQ(huge.status().code(), StatusCode::kResourceExhausted);
  const std::string& msg = huge.status().message();
  EXPECT_NE(msg.find("out of device memory"), std::string::npos) << msg;
  EXPECT_NE(msg.find("a test tensor"), std::string::npos) << msg;
  EXPECT_NE(msg.find("MiB free of"), std::string::npos) << msg;
  // The device is still usable afterwards.
  EXPECT_TRUE(alloc.allocate(4096, "small"));
}

Status failingCall() {
  WF_CUDA_CHECK(cudaErrorInvalidValue);
  return Status::ok();
}
Status failingLtCall() {
  WF_CUBLAS_CHECK(CUBLAS_STATUS_NOT_SUPPORTED);
  return Status::ok();
}
Expected<int> failingNvrtcCall() {
  WF_NVRTC_CHECK(NVRTC_ERROR_COMPILATION);
  return 1;
}

TEST(CudaCheck, FailuresNameTheExpressionAndTheError) {
  Status s = failingCall();
  EXPECT_EQ(s.code(), StatusCode::kInternal);
  EXPECT_NE(s.message().find("cudaErrorInvalidValue"), std::string::npos) << s.message();
  EXPECT_NE(s.message().find("executable_test.cpp:"), std::string::npos) << s.message();
  Status lt = failingLtCall();
  EXPECT_EQ(lt.code(), StatusCode::kUnimplemented);
  EXPECT_NE(lt.message().find("CUBLAS_STATUS_NOT_SUPPORTED"), std::string::npos) << lt.message();
  auto rtc = failingNvrtcCall();
  ASSERT_FALSE(rtc);
  EXPECT_NE(rtc.status().message().find("NVRTC_ERROR_COMPILATION"), std::string::npos) << rtc.status().message();
  Status oom = cuda::checkFailed(cudaErrorMemoryAllocation, "cudaMalloc(&p, n)", "f.cpp", 3);
  EXPECT_EQ(oom.code(), StatusCode::kResourceExhausted);
  EXPECT_NE(oom.message().find("cudaMalloc(&p, n)"), std::string::npos) << oom.message();
}

}  // namespace
}  // namespace wf::cudatest

namespace wf::cudatest {
namespace {

TEST(CudaExecutable, CallsAndCompositesAreInlinedAndIdentitiesAliased) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func private @affine(%x: tensor<5x7xf32>, %w: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %m = "stablehlo.multiply"(%x, %w) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %a = "stablehlo.add"(%m, %x) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return %a : tensor<5x7xf32>
}
func.func private @twice(%x: tensor<5x7xf32>, %w: tensor<5x7xf32>) -> tensor<5x7xf32> {
  %a = func.call @affine(%x, %w) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %b = func.call @affine(%a, %w) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  func.return %b : tensor<5x7xf32>
}
func.func @main(%x: tensor<5x7xf32>, %w: tensor<5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xi32>) {
  %t = func.call @twice(%x, %w) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %c = "stablehlo.composite"(%t, %w) {name = "wf.affine", decomposition = @affine} : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %o:2 = "stablehlo.optimization_barrier"(%c, %t) : (tensor<5x7xf32>, tensor<5x7xf32>) -> (tensor<5x7xf32>, tensor<5x7xf32>)
  %d = "stablehlo.subtract"(%o#0, %o#1) : (tensor<5x7xf32>, tensor<5x7xf32>) -> tensor<5x7xf32>
  %bits = "stablehlo.bitcast_convert"(%d) : (tensor<5x7xf32>) -> tensor<5x7xi32>
  func.return %d, %bits : tensor<5x7xf32>, tensor<5x7xi32>
}
)";
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  EXPECT_EQ(info.hostSteps, 0);
  // The calls and the composite are inlined into the IR before planning (so that fusion sees
  // across them): the planner meets none, and the three (multiply, add) pairs fuse into one
  // kernel, which writes %t (read again by the subtract) beside %c as a side output; the
  // subtract is the second step.
  EXPECT_EQ(info.inlinedCalls, 0);
  EXPECT_EQ(info.deviceSteps, 2);
  EXPECT_EQ(info.aliases, 2);  // optimization_barrier, bitcast_convert
  // Unfused, every op of the inlined calls is a step of its own: 3 x (multiply, add) + subtract.
  CompileOptions unfused;
  unfused.fuse = false;
  auto plain = cudaBackend().compile(m, *mainOf(m), unfused);
  ASSERT_TRUE(plain) << plain.status().toString();
  EXPECT_EQ((*plain)->stats().deviceSteps, 7);
  const Type t = Type::tensor({5, 7}, ElementType::kF32);
  expectMatchesCpu(text, {randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)}, Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest

namespace wf::cudatest {
namespace {

// A fused elementwise step that reads a value for the last time, element for element, writes
// its result into that value's memory; one that reads it transposed does not.
TEST(CudaExecutable, ElementwiseStepsReuseTheMemoryOfValuesTheyReadLast) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%a: tensor<64x64xf32>, %b: tensor<64x64xf32>, %c: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
  %d = "stablehlo.dot_general"(%a, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %m = "stablehlo.multiply"(%d, %c) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %s = "stablehlo.add"(%d, %m) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %t = "stablehlo.tanh"(%s) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %e = "stablehlo.dot_general"(%t, %b) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %et = "stablehlo.transpose"(%e) {permutation = array<i64: 1, 0>} : (tensor<64x64xf32>) -> tensor<64x64xf32>
  %u = "stablehlo.add"(%e, %et) : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
  %v = "stablehlo.exponential"(%u) : (tensor<64x64xf32>) -> tensor<64x64xf32>
  func.return %v, %t : tensor<64x64xf32>, tensor<64x64xf32>
}
)";
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const ExecutableStats info = (*exe)->stats();
  // %t's group reads %d in place (but %t is returned, so it lives to the end); %v's group reads
  // %e transposed as well, so it gets memory of its own.
  EXPECT_EQ(info.fusedKernels, 2);
  EXPECT_EQ(info.inPlaceSteps, 1);
  const Type t = Type::tensor({64, 64}, ElementType::kF32);
  for (int run = 0; run < 2; ++run) {
    std::vector<Literal> args = {randomLiteral(t, -0.2, 0.2), randomLiteral(t, -0.2, 0.2), randomLiteral(t, -1, 1)};
    auto want = runCpu(m, cloneAll(args));
    ASSERT_TRUE(want);
    auto got = (*exe)->run(args);
    ASSERT_TRUE(got) << got.status().toString();
    for (size_t i = 0; i < 2; ++i)
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{0, 0, 1e-5}), "") << "result #" << i;
  }
}

}  // namespace
}  // namespace wf::cudatest
