// CompileOptions::carriedResults on the CPU backend: results that become bound arguments after
// each run (a training step's parameters and optimizer state), Executable::readArgument, binding
// over a carried value, failed runs leaving the state alone, and the option's validation.
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "backends/cpu/cpu_backend.h"
#include "ir/verifier.h"
#include "runtime/backend.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

Module parse(const std::string& text) {
  ParseOptions options;
  options.fileName = "carried.mlir";
  auto m = parseModule(text, options);
  EXPECT_TRUE(m) << m.status().message();
  if (!m) return Module();
  EXPECT_TRUE(verifyModule(*m).isOk());
  return std::move(*m);
}

// Values uniform in +-[0.1, 1]: never zero, so that a value left unchanged or read from the
// wrong buffer shows.
Literal randomF32(std::vector<int64_t> shape, std::mt19937& gen) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = (gen() & 1 ? 1.0f : -1.0f) * magnitude(gen);
  return l;
}

std::string tensor(int64_t a, int64_t b) { return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>"; }

// One step of a linear model trained with momentum SGD on the loss sum((x w)^2):
//   @main(x: BxK, w: KxN, m: KxN) -> (loss, w - lr * m', m' = beta * m + x^T (x w))
std::string stepProgram(int64_t b, int64_t k, int64_t n) {
  const std::string x = tensor(b, k), w = tensor(k, n), y = tensor(b, n);
  return "func.func @main(%x: " + x + ", %w: " + w + ", %m: " + w + ") -> (tensor<f32>, " + w + ", " + w + ") {\n" +
         "  %y = \"stablehlo.dot_general\"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions "
         "= [1], rhs_contracting_dimensions = [0]>} : (" + x + ", " + w + ") -> " + y + "\n" +
         "  %sq = \"stablehlo.multiply\"(%y, %y) : (" + y + ", " + y + ") -> " + y + "\n" +
         "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>\n" +
         "  %loss = \"stablehlo.reduce\"(%sq, %zero) ({\n" +
         "  ^bb0(%p: tensor<f32>, %q: tensor<f32>):\n" +
         "    %s = \"stablehlo.add\"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>\n" +
         "    \"stablehlo.return\"(%s) : (tensor<f32>) -> ()\n" +
         "  }) {dimensions = array<i64: 0, 1>} : (" + y + ", tensor<f32>) -> tensor<f32>\n" +
         "  %g = \"stablehlo.dot_general\"(%x, %y) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions "
         "= [0], rhs_contracting_dimensions = [0]>} : (" + x + ", " + y + ") -> " + w + "\n" +
         "  %beta = \"stablehlo.constant\"() {value = dense<0.9> : " + w + "} : () -> " + w + "\n" +
         "  %lr = \"stablehlo.constant\"() {value = dense<0.01> : " + w + "} : () -> " + w + "\n" +
         "  %mb = \"stablehlo.multiply\"(%m, %beta) : (" + w + ", " + w + ") -> " + w + "\n" +
         "  %m2 = \"stablehlo.add\"(%mb, %g) : (" + w + ", " + w + ") -> " + w + "\n" +
         "  %d = \"stablehlo.multiply\"(%m2, %lr) : (" + w + ", " + w + ") -> " + w + "\n" +
         "  %w2 = \"stablehlo.subtract\"(%w, %d) : (" + w + ", " + w + ") -> " + w + "\n" +
         "  func.return %loss, %w2, %m2 : tensor<f32>, " + w + ", " + w + "\n}\n";
}

constexpr int64_t kB = 4, kK = 3, kN = 2;

// w (argument 1) and m (argument 2) carried from results 1 and 2.
CompileOptions carriedOptions() {
  CompileOptions options;
  options.boundArguments = {1, 2};
  options.carriedResults = {{1, 1}, {2, 2}};
  return options;
}

Expected<std::unique_ptr<Executable>> compileMain(const Module& module, const CompileOptions& options) {
  const Operation* entry = module.lookupFunction("main");
  if (!entry) return notFound("no @main");
  return makeCpuBackend()->compile(module, *entry, options);
}

TEST(CarriedState, FiveStepsMatchFeedingTheResultsBackByHand) {
  Module module = parse(stepProgram(kB, kK, kN));
  auto carried = compileMain(module, carriedOptions());
  auto plain = compileMain(module, CompileOptions{});
  ASSERT_TRUE(carried) << carried.status().message();
  ASSERT_TRUE(plain) << plain.status().message();
  EXPECT_EQ((*carried)->stats().carriedResults, 2);

  std::mt19937 gen(7);
  Literal w = randomF32({kK, kN}, gen), m = randomF32({kK, kN}, gen);
  ASSERT_TRUE((*carried)->bindArgument(1, w).isOk());
  ASSERT_TRUE((*carried)->bindArgument(2, m).isOk());
  for (int step = 0; step < 5; ++step) {
    Literal x = randomF32({kB, kK}, gen);
    std::vector<Literal> all = {x, w, m};
    auto want = (*plain)->run(all);
    ASSERT_TRUE(want) << want.status().message();
    ASSERT_EQ(want->outputs.size(), 3u);
    auto got = (*carried)->run(std::span<const Literal>(&x, 1));
    ASSERT_TRUE(got) << got.status().message();
    ASSERT_EQ(got->outputs.size(), 1u) << "only the loss comes back";
    EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0])) << "step " << step;
    w = want->outputs[1];
    m = want->outputs[2];
    auto wNow = (*carried)->readArgument(1);
    auto mNow = (*carried)->readArgument(2);
    ASSERT_TRUE(wNow && mNow);
    EXPECT_TRUE(wNow->bitwiseEqual(w)) << "step " << step;
    EXPECT_TRUE(mNow->bitwiseEqual(m)) << "step " << step;
    EXPECT_FALSE(wNow->bitwiseEqual(want->outputs[0])) << "sanity";
  }
  EXPECT_EQ((*carried)->deviceBytesInUse(), size_t{2 * kK * kN * 4});
}

TEST(CarriedState, ReadArgumentAndBindingOverACarriedValue) {
  Module module = parse(stepProgram(kB, kK, kN));
  auto exe = compileMain(module, carriedOptions());
  ASSERT_TRUE(exe) << exe.status().message();
  std::mt19937 gen(11);
  Literal w0 = randomF32({kK, kN}, gen), m0 = randomF32({kK, kN}, gen), x = randomF32({kB, kK}, gen);

  // Nothing bound yet: reading is an error, and so is running.
  auto unbound = (*exe)->readArgument(1);
  ASSERT_FALSE(unbound);
  EXPECT_NE(unbound.status().message().find("argument #1"), std::string::npos) << unbound.status().message();
  EXPECT_FALSE((*exe)->run(std::span<const Literal>(&x, 1)));
  auto outOfRange = (*exe)->readArgument(3);
  ASSERT_FALSE(outOfRange);
  EXPECT_NE(outOfRange.status().message().find("3 arguments"), std::string::npos) << outOfRange.status().message();

  ASSERT_TRUE((*exe)->bindArgument(1, w0).isOk());
  ASSERT_TRUE((*exe)->bindArgument(2, m0).isOk());
  auto read = (*exe)->readArgument(1);
  ASSERT_TRUE(read);
  EXPECT_TRUE(read->bitwiseEqual(w0));
  read->dataAs<float>()[0] += 1;  // a copy: the bound value does not change
  EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w0));

  auto first = (*exe)->run(std::span<const Literal>(&x, 1));
  ASSERT_TRUE(first);
  Literal w1 = *(*exe)->readArgument(1);
  Literal m1 = *(*exe)->readArgument(2);
  EXPECT_FALSE(w1.bitwiseEqual(w0));
  ASSERT_TRUE((*exe)->run(std::span<const Literal>(&x, 1)));
  EXPECT_FALSE((*exe)->readArgument(1)->bitwiseEqual(w1));

  // Loading a checkpoint: binding over the carried values starts again from them.
  ASSERT_TRUE((*exe)->bindArgument(1, w0).isOk());
  ASSERT_TRUE((*exe)->bindArgument(2, m0).isOk());
  auto again = (*exe)->run(std::span<const Literal>(&x, 1));
  ASSERT_TRUE(again);
  EXPECT_TRUE(again->outputs[0].bitwiseEqual(first->outputs[0]));
  EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w1));
  EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(m1));
}

TEST(CarriedState, AFailedRunLeavesTheStateAsItWas) {
  Module module = parse(stepProgram(kB, kK, kN));
  auto exe = compileMain(module, carriedOptions());
  auto plain = compileMain(module, CompileOptions{});
  ASSERT_TRUE(exe && plain);
  std::mt19937 gen(13);
  Literal w = randomF32({kK, kN}, gen), m = randomF32({kK, kN}, gen);
  ASSERT_TRUE((*exe)->bindArgument(1, w).isOk());
  ASSERT_TRUE((*exe)->bindArgument(2, m).isOk());
  Literal x = randomF32({kB, kK}, gen);
  ASSERT_TRUE((*exe)->run(std::span<const Literal>(&x, 1)));
  Literal w1 = *(*exe)->readArgument(1), m1 = *(*exe)->readArgument(2);

  Literal wrongShape = randomF32({kB + 1, kK}, gen);
  auto failed = (*exe)->run(std::span<const Literal>(&wrongShape, 1));
  ASSERT_FALSE(failed);
  EXPECT_NE(failed.status().message().find("argument #0"), std::string::npos) << failed.status().message();
  EXPECT_FALSE((*exe)->run({}));  // too few arguments
  EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w1));
  EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(m1));

  // The next good run goes on from the state before the failures.
  Literal x2 = randomF32({kB, kK}, gen);
  std::vector<Literal> all = {x2, w1, m1};
  auto want = (*plain)->run(all);
  auto got = (*exe)->run(std::span<const Literal>(&x2, 1));
  ASSERT_TRUE(want && got);
  EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
  EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(want->outputs[1]));
  EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(want->outputs[2]));
}

TEST(CarriedState, InvalidPairsAreCompileErrorsNamingThePair) {
  Module module = parse(R"(
func.func @main(%x: tensor<2xf32>, %w: tensor<2xf32>, %m: tensor<2xf32>, %i: tensor<2xi32>) -> (tensor<2xf32>, tensor<2xf32>, tensor<3xf32>) {
  %a = "stablehlo.add"(%x, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %b = "stablehlo.multiply"(%m, %w) : (tensor<2xf32>, tensor<2xf32>) -> tensor<2xf32>
  %d = "stablehlo.constant"() {value = dense<1.5> : tensor<3xf32>} : () -> tensor<3xf32>
  func.return %a, %b, %d : tensor<2xf32>, tensor<2xf32>, tensor<3xf32>
}
)");
  struct Case {
    std::vector<CarriedResult> pairs;
    std::vector<size_t> bound;
    std::string needle;
  };
  const std::vector<Case> cases = {
      {{{3, 1}}, {1}, "carriedResults[0] (result #3 -> argument #1) of @main: the function has 3 results"},
      {{{0, 4}}, {1}, "carriedResults[0] (result #0 -> argument #4) of @main: the function has 4 arguments"},
      {{{0, 1}}, {2}, "carriedResults[0] (result #0 -> argument #1) of @main: the argument is not in "
                      "CompileOptions::boundArguments"},
      {{{0, 1}, {0, 2}}, {1, 2}, "carriedResults[1] (result #0 -> argument #2) of @main: result #0 is carried twice"},
      {{{0, 1}, {1, 1}}, {1, 2}, "carriedResults[1] (result #1 -> argument #1) of @main: argument #1 receives two "
                                 "results"},
      {{{2, 1}}, {1}, "carriedResults[0] (result #2 -> argument #1) of @main: the result is tensor<3xf32>, the "
                      "argument tensor<2xf32>"},
      {{{0, 3}}, {3}, "the result is tensor<2xf32>, the argument tensor<2xi32>"},
  };
  for (const Case& c : cases) {
    CompileOptions options;
    options.boundArguments = c.bound;
    options.carriedResults = c.pairs;
    auto exe = compileMain(module, options);
    ASSERT_FALSE(exe) << c.needle;
    EXPECT_EQ(exe.status().code(), StatusCode::kInvalidArgument);
    EXPECT_NE(exe.status().message().find(c.needle), std::string::npos) << exe.status().message();
  }
  CompileOptions good;
  good.boundArguments = {1, 2};
  good.carriedResults = {{1, 2}, {0, 1}};  // any order, any pairing of matching types
  auto exe = compileMain(module, good);
  EXPECT_TRUE(exe) << exe.status().message();
}

// Weight work that a backend may hoist when the weight is only bound (a transpose and a
// round trip through f64) must run on every step once the weight is carried; %s is bound and
// not carried, so its transpose may still run once.
const char* kHoistable = R"(
func.func @main(%x: tensor<4x3xf32>, %w: tensor<2x3xf32>, %s: tensor<2x3xf32>) -> (tensor<f32>, tensor<2x3xf32>) {
  %wt = "stablehlo.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %wd = "stablehlo.convert"(%wt) : (tensor<3x2xf32>) -> tensor<3x2xf64>
  %wf = "stablehlo.convert"(%wd) : (tensor<3x2xf64>) -> tensor<3x2xf32>
  %st = "stablehlo.transpose"(%s) {permutation = array<i64: 1, 0>} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  %k = "stablehlo.add"(%wf, %st) : (tensor<3x2xf32>, tensor<3x2xf32>) -> tensor<3x2xf32>
  %y = "stablehlo.dot_general"(%x, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<4x3xf32>, tensor<3x2xf32>) -> tensor<4x2xf32>
  %sq = "stablehlo.multiply"(%y, %y) : (tensor<4x2xf32>, tensor<4x2xf32>) -> tensor<4x2xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %loss = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %a = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0, 1>} : (tensor<4x2xf32>, tensor<f32>) -> tensor<f32>
  %g = "stablehlo.dot_general"(%y, %x) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>} : (tensor<4x2xf32>, tensor<4x3xf32>) -> tensor<2x3xf32>
  %lr = "stablehlo.constant"() {value = dense<0.05> : tensor<2x3xf32>} : () -> tensor<2x3xf32>
  %d = "stablehlo.multiply"(%g, %lr) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %w2 = "stablehlo.subtract"(%w, %d) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  func.return %loss, %w2 : tensor<f32>, tensor<2x3xf32>
}
)";

TEST(CarriedState, WorkOnACarriedWeightRunsEveryStep) {
  Module module = parse(kHoistable);
  CompileOptions options;
  options.boundArguments = {1, 2};
  options.carriedResults = {{1, 1}};
  auto exe = compileMain(module, options);
  auto plain = compileMain(module, CompileOptions{});
  ASSERT_TRUE(exe && plain);
  std::mt19937 gen(17);
  Literal w = randomF32({2, 3}, gen), s = randomF32({2, 3}, gen);
  ASSERT_TRUE((*exe)->bindArgument(1, w).isOk());
  ASSERT_TRUE((*exe)->bindArgument(2, s).isOk());
  for (int step = 0; step < 4; ++step) {
    Literal x = randomF32({4, 3}, gen);
    std::vector<Literal> all = {x, w, s};
    auto want = (*plain)->run(all);
    auto got = (*exe)->run(std::span<const Literal>(&x, 1));
    ASSERT_TRUE(want && got);
    ASSERT_EQ(got->outputs.size(), 1u);
    EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0])) << "step " << step;
    w = want->outputs[1];
    EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w)) << "step " << step;
    EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(s)) << "step " << step;
  }
}

// Carried results that are not values the step computes: an argument returned as it is (to
// itself, or to another argument: two arguments swap), and one value returned twice, once
// carried and once to the caller.
TEST(CarriedState, ArgumentsSwappedPassedThroughAndReturnedTwice) {
  Module module = parse(R"(
func.func @main(%x: tensor<3xf32>, %a: tensor<3xf32>, %b: tensor<3xf32>, %c: tensor<3xf32>, %d: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) {
  %n = "stablehlo.add"(%d, %x) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  func.return %b, %a, %c, %n, %n : tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>
}
)");
  CompileOptions options;
  options.boundArguments = {1, 2, 3, 4};
  options.carriedResults = {{0, 1}, {1, 2}, {2, 3}, {3, 4}};  // a <- b, b <- a, c <- c, d <- d + x
  auto exe = compileMain(module, options);
  ASSERT_TRUE(exe) << exe.status().message();
  std::mt19937 gen(19);
  std::vector<Literal> state;
  for (size_t i = 1; i <= 4; ++i) {
    state.push_back(randomF32({3}, gen));
    ASSERT_TRUE((*exe)->bindArgument(i, state.back()).isOk());
  }
  for (int step = 0; step < 3; ++step) {
    Literal x = randomF32({3}, gen);
    auto got = (*exe)->run(std::span<const Literal>(&x, 1));
    ASSERT_TRUE(got) << got.status().message();
    ASSERT_EQ(got->outputs.size(), 1u);
    Literal n = Literal::zeros(x.type());
    for (int64_t i = 0; i < 3; ++i) n.dataAs<float>()[i] = state[3].dataAs<float>()[i] + x.dataAs<float>()[i];
    EXPECT_TRUE(got->outputs[0].bitwiseEqual(n));
    state = {state[1], state[0], state[2], n.clone()};
    for (size_t i = 1; i <= 4; ++i) EXPECT_TRUE((*exe)->readArgument(i)->bitwiseEqual(state[i - 1])) << i;
    // The output returned is the caller's: changing it leaves the carried copy alone.
    got->outputs[0].dataAs<float>()[0] += 1;
    EXPECT_TRUE((*exe)->readArgument(4)->bitwiseEqual(state[3]));
  }
}

}  // namespace
}  // namespace wf
