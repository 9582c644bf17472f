// while, if and case on the CUDA backend: their regions run as device steps and the host picks
// the branch from the device's predicate or index. Each program is compared with the CPU
// interpreter on fresh random inputs, several runs on one executable (the loop-carried values
// must start again from the operands every run).
#include <functional>
#include <set>

#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

Literal scalar(ElementType t, int64_t value) {
  Literal l = Literal::zeros(Type::tensor({}, t));
  l.setInt(0, value);
  return l;
}

// Compiles `text` once and compares `runs` runs with the CPU, each on the arguments `makeArgs`
// gives; returns the executable for further checks.
std::unique_ptr<Executable> expectRunsMatchCpu(const std::string& text, const std::function<std::vector<Literal>(int)>& makeArgs,
                                               int runs, Tolerance tol, CompileOptions options = {}) {
  Module m = parse(text);
  static std::vector<Module> keep;  // the executable refers to the module
  keep.push_back(std::move(m));
  const Module& mod = keep.back();
  auto exe = cudaBackend().compile(mod, *mainOf(mod), options);
  EXPECT_TRUE(exe) << exe.status().toString();
  if (!exe) return nullptr;
  for (int run = 0; run < runs; ++run) {
    std::vector<Literal> args = makeArgs(run);
    auto want = runCpu(mod, cloneAll(args));
    EXPECT_TRUE(want) << want.status().toString();
    auto got = (*exe)->run(args);
    EXPECT_TRUE(got) << got.status().toString();
    if (!want || !got) return nullptr;
    EXPECT_EQ(got->outputs.size(), want->size());
    for (size_t i = 0; i < want->size() && i < got->outputs.size(); ++i)
      EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], tol), "") << "run " << run << ", result #" << i;
    EXPECT_TRUE(got->report.hostFallbackOps.empty());
  }
  return std::move(*exe);
}

// A counting loop whose body reads %d from around it; the carried vector starts from a constant
// (so that the copy into the loop must not be hoisted: it runs every run).
const char* kCountingLoop = R"(func.func @main(%x: tensor<8xf32>, %step: tensor<8xf32>) -> (tensor<8xf32>, tensor<8xf32>) {
  %d = "stablehlo.multiply"(%step, %step) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %ones = "stablehlo.constant"() {value = dense<1.5> : tensor<8xf32>} : () -> tensor<8xf32>
  %r:3 = "stablehlo.while"(%zero, %x, %ones) ({
  ^bb0(%i: tensor<i32>, %v: tensor<8xf32>, %u: tensor<8xf32>):
    %n = "stablehlo.constant"() {value = dense<5> : tensor<i32>} : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<8xf32>, %u: tensor<8xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = "stablehlo.add"(%v, %d) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    %u1 = "stablehlo.multiply"(%u, %v1) : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
    "stablehlo.return"(%i1, %v1, %u1) : (tensor<i32>, tensor<8xf32>, tensor<8xf32>) -> ()
  }) : (tensor<i32>, tensor<8xf32>, tensor<8xf32>) -> (tensor<i32>, tensor<8xf32>, tensor<8xf32>)
  %out = "stablehlo.negate"(%r#1) : (tensor<8xf32>) -> tensor<8xf32>
  func.return %out, %r#2 : tensor<8xf32>, tensor<8xf32>
}
)";

TEST(CudaControlFlow, WhileRunsOnTheDeviceAndRestartsEveryRun) {
  WF_REQUIRE_GPU();
  const Type t = Type::tensor({8}, ElementType::kF32);
  auto args = [&](int) { return std::vector<Literal>{randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)}; };
  for (bool fuse : {true, false}) {
    CompileOptions options;
    options.fuse = fuse;
    auto exe = expectRunsMatchCpu(kCountingLoop, args, 3, Tolerance{1e-6, 1e-6}, options);
    ASSERT_NE(exe, nullptr);
    const ExecutableStats info = exe->stats();
    EXPECT_EQ(info.controlFlowOps, 1);
    EXPECT_EQ(info.hostSteps, 0);
    EXPECT_FALSE(info.usesGraph);
  }
  // Bound arguments make %d hoistable; the loop's copies still run every run.
  CompileOptions bound;
  bound.boundArguments = {1};
  Module m = parse(kCountingLoop);
  auto exe = cudaBackend().compile(m, *mainOf(m), bound);
  ASSERT_TRUE(exe) << exe.status().toString();
  Literal step = randomLiteral(t, -1, 1);
  ASSERT_TRUE((*exe)->bindArgument(1, step).isOk());
  for (int run = 0; run < 3; ++run) {
    Literal x = randomLiteral(t, -1, 1);
    auto want = runCpu(m, {x.clone(), step.clone()});
    ASSERT_TRUE(want);
    std::vector<Literal> in = {x};
    auto got = (*exe)->run(in);
    ASSERT_TRUE(got) << got.status().toString();
    for (size_t i = 0; i < 2; ++i) EXPECT_EQ(compareLiterals(got->outputs[i], (*want)[i], Tolerance{1e-6, 1e-6}), "");
  }
}

TEST(CudaControlFlow, WhileBodiesThatSwapOrKeepCarriedValues) {
  WF_REQUIRE_GPU();
  // (i, a, b, k) -> (i + 1, b, a + b, k): b moves into a's place while a + b is computed from
  // the old a; k never changes; the loop runs n times (n from the input, 0 included).
  const std::string text = R"(func.func @main(%n: tensor<i32>, %a: tensor<16xf32>, %b: tensor<16xf32>) -> (tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i32>) {
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:4 = "stablehlo.while"(%zero, %a, %b, %a) ({
  ^bb0(%i: tensor<i32>, %x: tensor<16xf32>, %y: tensor<16xf32>, %k: tensor<16xf32>):
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %x: tensor<16xf32>, %y: tensor<16xf32>, %k: tensor<16xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %s = "stablehlo.add"(%x, %y) : (tensor<16xf32>, tensor<16xf32>) -> tensor<16xf32>
    "stablehlo.return"(%i1, %y, %s, %k) : (tensor<i32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> ()
  }) : (tensor<i32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<i32>, tensor<16xf32>, tensor<16xf32>, tensor<16xf32>)
  func.return %r#1, %r#2, %r#3, %r#0 : tensor<16xf32>, tensor<16xf32>, tensor<16xf32>, tensor<i32>
}
)";
  const Type t = Type::tensor({16}, ElementType::kF32);
  const int64_t counts[] = {7, 0, 1, 12};
  auto args = [&](int run) {
    return std::vector<Literal>{scalar(ElementType::kSI32, counts[run]), randomLiteral(t, -1, 1),
                                randomLiteral(t, -1, 1)};
  };
  expectRunsMatchCpu(text, args, 4, Tolerance{1e-6, 1e-6});

  // A pure rotation of three carried values, an odd number of times.
  const std::string rotate = R"(func.func @main(%a: tensor<4xi32>, %b: tensor<4xi32>, %c: tensor<4xi32>) -> (tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) {
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:4 = "stablehlo.while"(%zero, %a, %b, %c) ({
  ^bb0(%i: tensor<i32>, %x: tensor<4xi32>, %y: tensor<4xi32>, %z: tensor<4xi32>):
    %n = "stablehlo.constant"() {value = dense<7> : tensor<i32>} : () -> tensor<i32>
    %lt = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%lt) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %x: tensor<4xi32>, %y: tensor<4xi32>, %z: tensor<4xi32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%i1, %y, %z, %x) : (tensor<i32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> ()
  }) : (tensor<i32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>) -> (tensor<i32>, tensor<4xi32>, tensor<4xi32>, tensor<4xi32>)
  func.return %r#1, %r#2, %r#3 : tensor<4xi32>, tensor<4xi32>, tensor<4xi32>
}
)";
  const Type it = Type::tensor({4}, ElementType::kSI32);
  auto intArgs = [&](int) {
    return std::vector<Literal>{randomLiteral(it, -100, 100), randomLiteral(it, -100, 100),
                                randomLiteral(it, -100, 100)};
  };
  expectRunsMatchCpu(rotate, intArgs, 2, Tolerance{});
}

// Values defined before a loop and read early in its body must survive the whole iteration: the
// temporaries computed after their last read in one iteration must not take their memory, since
// the next iteration reads them again. (The body contracts, so device and host math functions,
// an ulp apart, stay close over the iterations.)
TEST(CudaControlFlow, ValuesLiveIntoALoopKeepTheirMemoryForEveryIteration) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%x: tensor<256xf32>, %w: tensor<256xf32>) -> tensor<256xf32> {
  %p = "stablehlo.multiply"(%x, %w) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %q = "stablehlo.add"(%x, %w) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<256xf32>):
    %n = "stablehlo.constant"() {value = dense<6> : tensor<i32>} : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<256xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %half = "stablehlo.constant"() {value = dense<0.5> : tensor<256xf32>} : () -> tensor<256xf32>
    %t1 = "stablehlo.add"(%v, %q) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %t2 = "stablehlo.multiply"(%t1, %half) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %t3 = "stablehlo.multiply"(%t2, %t2) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %t4 = "stablehlo.subtract"(%t3, %v) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %t5 = "stablehlo.multiply"(%t4, %half) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
    %t6 = "stablehlo.tanh"(%t5) : (tensor<256xf32>) -> tensor<256xf32>
    "stablehlo.return"(%i1, %t6) : (tensor<i32>, tensor<256xf32>) -> ()
  }) : (tensor<i32>, tensor<256xf32>) -> (tensor<i32>, tensor<256xf32>)
  %out = "stablehlo.multiply"(%r#1, %p) : (tensor<256xf32>, tensor<256xf32>) -> tensor<256xf32>
  func.return %out : tensor<256xf32>
}
)";
  const Type t = Type::tensor({256}, ElementType::kF32);
  auto args = [&](int) { return std::vector<Literal>{randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)}; };
  for (bool fuse : {false, true}) {
    CompileOptions options;
    options.fuse = fuse;
    expectRunsMatchCpu(text, args, 2, Tolerance{1e-5, 1e-6}, options);
  }
}

TEST(CudaControlFlow, IfPicksItsBranchFromTheDevicePredicate) {
  WF_REQUIRE_GPU();
  // The false branch returns a value from around the op as it is.
  const std::string text = R"(func.func @main(%p: tensor<i1>, %x: tensor<3x5xbf16>, %y: tensor<3x5xbf16>) -> (tensor<3x5xbf16>, tensor<3x5xbf16>) {
  %s = "stablehlo.add"(%x, %y) : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
  %r:2 = "stablehlo.if"(%p) ({
    %m = "stablehlo.multiply"(%s, %x) : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
    %e = "stablehlo.exponential"(%y) : (tensor<3x5xbf16>) -> tensor<3x5xbf16>
    "stablehlo.return"(%m, %e) : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> ()
  }, {
    %n = "stablehlo.negate"(%s) : (tensor<3x5xbf16>) -> tensor<3x5xbf16>
    "stablehlo.return"(%x, %n) : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> ()
  }) : (tensor<i1>) -> (tensor<3x5xbf16>, tensor<3x5xbf16>)
  %out = "stablehlo.subtract"(%r#0, %r#1) : (tensor<3x5xbf16>, tensor<3x5xbf16>) -> tensor<3x5xbf16>
  func.return %out, %r#1 : tensor<3x5xbf16>, tensor<3x5xbf16>
}
)";
  const Type t = Type::tensor({3, 5}, ElementType::kBF16);
  auto args = [&](int run) {
    return std::vector<Literal>{scalar(ElementType::kI1, run % 2), randomLiteral(t, -2, 2), randomLiteral(t, -2, 2)};
  };
  auto exe = expectRunsMatchCpu(text, args, 4, defaultTolerance(ElementType::kBF16));
  ASSERT_NE(exe, nullptr);
  EXPECT_EQ(exe->stats().controlFlowOps, 1);
}

TEST(CudaControlFlow, CaseTakesTheLastBranchForAnIndexOutOfRange) {
  WF_REQUIRE_GPU();
  for (ElementType indexType : {ElementType::kSI32, ElementType::kUI8, ElementType::kSI64}) {
    const std::string it = tensorType({}, indexType);
    const std::string text = "func.func @main(%k: " + it + R"(, %x: tensor<6xf32>) -> tensor<6xf32> {
  %r = "stablehlo.case"(%k) ({
    %a = "stablehlo.exponential"(%x) : (tensor<6xf32>) -> tensor<6xf32>
    "stablehlo.return"(%a) : (tensor<6xf32>) -> ()
  }, {
    %b = "stablehlo.multiply"(%x, %x) : (tensor<6xf32>, tensor<6xf32>) -> tensor<6xf32>
    "stablehlo.return"(%b) : (tensor<6xf32>) -> ()
  }, {
    %c = "stablehlo.negate"(%x) : (tensor<6xf32>) -> tensor<6xf32>
    "stablehlo.return"(%c) : (tensor<6xf32>) -> ()
  }) : ()" + it + R"() -> tensor<6xf32>
  func.return %r : tensor<6xf32>
}
)";
    const int64_t indices[] = {0, 1, 2, -1, 3, 200};
    const Type t = Type::tensor({6}, ElementType::kF32);
    auto args = [&](int run) {
      return std::vector<Literal>{scalar(indexType, indices[run]), randomLiteral(t, -1, 1)};
    };
    expectRunsMatchCpu(text, args, 6, Tolerance{2e-6, 1e-30});
  }
}

// Loops in loops, with an if inside the inner body, each region reading values defined around
// it at every level.
TEST(CudaControlFlow, NestedLoopsAndBranches) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%x: tensor<32xf32>, %w: tensor<32xf32>) -> tensor<32xf32> {
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
  %two = "stablehlo.constant"() {value = dense<2> : tensor<i32>} : () -> tensor<i32>
  %half = "stablehlo.constant"() {value = dense<0.5> : tensor<32xf32>} : () -> tensor<32xf32>
  %r:2 = "stablehlo.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<32xf32>):
    %n = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<32xf32>):
    %t = "stablehlo.multiply"(%v, %w) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    %s:2 = "stablehlo.while"(%zero, %v) ({
    ^bb0(%j: tensor<i32>, %u: tensor<32xf32>):
      %m = "stablehlo.constant"() {value = dense<4> : tensor<i32>} : () -> tensor<i32>
      %d = "stablehlo.compare"(%j, %m) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      "stablehlo.return"(%d) : (tensor<i1>) -> ()
    }, {
    ^bb0(%j: tensor<i32>, %u: tensor<32xf32>):
      %j1 = "stablehlo.add"(%j, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
      %isTwo = "stablehlo.compare"(%j, %two) {comparison_direction = #stablehlo<comparison_direction EQ>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
      %u1 = "stablehlo.if"(%isTwo) ({
        %h = "stablehlo.multiply"(%u, %half) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
        "stablehlo.return"(%h) : (tensor<32xf32>) -> ()
      }, {
        %a = "stablehlo.add"(%u, %t) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
        %b = "stablehlo.tanh"(%a) : (tensor<32xf32>) -> tensor<32xf32>
        "stablehlo.return"(%b) : (tensor<32xf32>) -> ()
      }) : (tensor<i1>) -> tensor<32xf32>
      "stablehlo.return"(%j1, %u1) : (tensor<i32>, tensor<32xf32>) -> ()
    }) : (tensor<i32>, tensor<32xf32>) -> (tensor<i32>, tensor<32xf32>)
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %v1 = "stablehlo.add"(%s#1, %x) : (tensor<32xf32>, tensor<32xf32>) -> tensor<32xf32>
    "stablehlo.return"(%i1, %v1) : (tensor<i32>, tensor<32xf32>) -> ()
  }) : (tensor<i32>, tensor<32xf32>) -> (tensor<i32>, tensor<32xf32>)
  func.return %r#1 : tensor<32xf32>
}
)";
  const Type t = Type::tensor({32}, ElementType::kF32);
  auto args = [&](int) { return std::vector<Literal>{randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)}; };
  for (bool fuse : {true, false}) {
    CompileOptions options;
    options.fuse = fuse;
    auto exe = expectRunsMatchCpu(text, args, 2, Tolerance{1e-5, 1e-6}, options);
    ASSERT_NE(exe, nullptr);
    EXPECT_EQ(exe->stats().controlFlowOps, 3);
  }
}

TEST(CudaControlFlow, TimingsSumEachStepOverItsRuns) {
  WF_REQUIRE_GPU();
  Module m = parse(kCountingLoop);
  CompileOptions options;
  options.recordTimings = true;
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  const Type t = Type::tensor({8}, ElementType::kF32);
  std::vector<Literal> args = {randomLiteral(t), randomLiteral(t)};
  auto got = (*exe)->run(args);
  ASSERT_TRUE(got) << got.status().toString();
  ASSERT_FALSE(got->report.timings.empty());
  double total = 0;
  std::set<std::string> seen;
  for (const auto& timing : got->report.timings) {
    EXPECT_GE(timing.microseconds, 0.0);
    total += timing.microseconds;
    EXPECT_TRUE(seen.insert(timing.name + " " + timing.location).second || timing.name == "stablehlo.while")
        << timing.name << " at " << timing.location << " listed twice";
  }
  EXPECT_GT(total, 0.0);
  EXPECT_LE(total / 1000.0, got->report.deviceMillis * 1.01 + 1e-3);
}

// A body op with no kernel runs as a host step inside the loop (with the fallback allowed), and
// still sees the values the body reads from around the loop.
TEST(CudaControlFlow, HostStepsInsideALoopSeeCapturedValues) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%x: tensor<40xf32>, %w: tensor<40xf32>) -> tensor<40xf32> {
  %zero = "stablehlo.constant"() {value = dense<0> : tensor<i32>} : () -> tensor<i32>
  %r:2 = "stablehlo.while"(%zero, %x) ({
  ^bb0(%i: tensor<i32>, %v: tensor<40xf32>):
    %n = "stablehlo.constant"() {value = dense<3> : tensor<i32>} : () -> tensor<i32>
    %c = "stablehlo.compare"(%i, %n) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<i32>, tensor<i32>) -> tensor<i1>
    "stablehlo.return"(%c) : (tensor<i1>) -> ()
  }, {
  ^bb0(%i: tensor<i32>, %v: tensor<40xf32>):
    %one = "stablehlo.constant"() {value = dense<1> : tensor<i32>} : () -> tensor<i32>
    %i1 = "stablehlo.add"(%i, %one) : (tensor<i32>, tensor<i32>) -> tensor<i32>
    %y = "stablehlo.add"(%v, %w) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
    %s = "stablehlo.sort"(%y) ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %aa = "stablehlo.abs"(%a) : (tensor<f32>) -> tensor<f32>
      %ab = "stablehlo.abs"(%b) : (tensor<f32>) -> tensor<f32>
      %lt = "stablehlo.compare"(%aa, %ab) {comparison_direction = #stablehlo<comparison_direction LT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
      "stablehlo.return"(%lt) : (tensor<i1>) -> ()
    }) {dimension = 0 : i64, is_stable = true} : (tensor<40xf32>) -> tensor<40xf32>
    %z = "stablehlo.multiply"(%s, %w) : (tensor<40xf32>, tensor<40xf32>) -> tensor<40xf32>
    "stablehlo.return"(%i1, %z) : (tensor<i32>, tensor<40xf32>) -> ()
  }) : (tensor<i32>, tensor<40xf32>) -> (tensor<i32>, tensor<40xf32>)
  func.return %r#1 : tensor<40xf32>
}
)";
  Module m = parse(text);
  auto strict = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(strict);
  EXPECT_NE(strict.status().message().find("stablehlo.sort"), std::string::npos) << strict.status().message();
  CompileOptions options;
  options.allowCpuFallback = true;
  auto exe = cudaBackend().compile(m, *mainOf(m), options);
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_EQ((*exe)->stats().controlFlowOps, 1);
  EXPECT_EQ((*exe)->stats().hostSteps, 1);
  const Type t = Type::tensor({40}, ElementType::kF32);
  std::vector<Literal> args = {randomLiteral(t, -1, 1), randomLiteral(t, -1, 1)};
  auto want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want);
  auto got = (*exe)->run(args);
  ASSERT_TRUE(got) << got.status().toString();
  EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], Tolerance{1e-6, 1e-6}), "");
  ASSERT_EQ(got->report.hostFallbackOps.size(), 1u);
  EXPECT_EQ(got->report.hostFallbackOps[0].rfind("stablehlo.sort at", 0), 0u) << got->report.hostFallbackOps[0];
}

}  // namespace
}  // namespace wf::cudatest
