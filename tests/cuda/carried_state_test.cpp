// CompileOptions::carriedResults on the CUDA backend: carried results become their arguments'
// buffers after each run (ping-pong between two buffers, one captured graph per parity), with
// and without CUDA graphs and fusion; readArgument, binding over a carried value, failed runs;
// work on a carried weight is not hoisted; weights bound again between runs rerun the hoisted
// work that reads them; carried values the run does not compute are copied; updates in place
// (CompileOptions::carryInPlace) give the same numbers.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// Values uniform in +-[0.1, 1]: never zero, so that a value read from the wrong buffer shows.
Literal nonzeroF32(std::vector<int64_t> shape, std::mt19937_64& gen) {
  Literal l = Literal::zeros(Type::tensor(std::move(shape), ElementType::kF32));
  std::uniform_real_distribution<float> magnitude(0.1f, 1.0f);
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = (gen() & 1 ? 1.0f : -1.0f) * magnitude(gen);
  return l;
}

std::string tensor2(int64_t a, int64_t b) { return "tensor<" + std::to_string(a) + "x" + std::to_string(b) + "xf32>"; }

// One step of a linear model trained with momentum SGD on the loss sum((x w)^2):
//   @main(x: BxK, w: KxN, m: KxN) -> (loss, w - lr * m', m' = beta * m + x^T (x w))
std::string stepProgram(int64_t b, int64_t k, int64_t n) {
  const std::string x = tensor2(b, k), w = tensor2(k, n), y = tensor2(b, n);
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

constexpr int64_t kB = 16, kK = 32, kN = 8;

struct Mode {
  bool graphs;
  bool fuse;
  std::string name() const {
    return std::string(graphs ? "graphs" : "no graphs") + ", " + (fuse ? "fused" : "unfused");
  }
};
const Mode kModes[] = {{true, true}, {true, false}, {false, true}, {false, false}};

CompileOptions modeOptions(const Mode& mode) {
  CompileOptions options;
  options.cudaGraphs = mode.graphs;
  options.fuse = mode.fuse;
  return options;
}

// Losses and weights after a few steps differ from the CPU's by the order of the sums only:
// the loss per element, the tensors by relative L2 error (an element near zero may come from a
// sum that cancels).
const Tolerance kLossVsCpu{1e-4, 1e-5};
const Tolerance kStateVsCpu{0, 0, 2e-5};

TEST(CudaCarriedState, FiveStepsMatchFeedingTheResultsBackByHand) {
  WF_REQUIRE_GPU();
  Module m = parse(stepProgram(kB, kK, kN));
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name());
    CompileOptions carriedOptions = modeOptions(mode);
    carriedOptions.boundArguments = {1, 2};
    carriedOptions.carriedResults = {{1, 1}, {2, 2}};
    auto carried = cudaBackend().compile(m, *mainOf(m), carriedOptions);
    auto plain = cudaBackend().compile(m, *mainOf(m), modeOptions(mode));
    ASSERT_TRUE(carried) << carried.status().toString();
    ASSERT_TRUE(plain) << plain.status().toString();
    EXPECT_EQ((*carried)->stats().carriedResults, 2);
    EXPECT_EQ((*carried)->stats().carriedCopies, 0);  // w' and m' are computed into the next buffers

    std::mt19937_64 gen(0x5eed + (mode.graphs ? 1 : 0) + (mode.fuse ? 2 : 0));
    Literal w = nonzeroF32({kK, kN}, gen), mom = nonzeroF32({kK, kN}, gen);
    Literal wCpu = w.clone(), mCpu = mom.clone();
    ASSERT_TRUE((*carried)->bindArgument(1, w).isOk());
    ASSERT_TRUE((*carried)->bindArgument(2, mom).isOk());
    for (int step = 0; step < 5; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      Literal x = nonzeroF32({kB, kK}, gen);
      std::vector<Literal> all = {x.clone(), w.clone(), mom.clone()};
      auto want = (*plain)->run(all);
      ASSERT_TRUE(want) << want.status().toString();
      ASSERT_EQ(want->outputs.size(), 3u);
      std::vector<Literal> batch = {x.clone()};
      auto got = (*carried)->run(batch);
      ASSERT_TRUE(got) << got.status().toString();
      ASSERT_EQ(got->outputs.size(), 1u);  // the loss only: w' and m' stay on the device
      EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
      w = want->outputs[1].clone();
      mom = want->outputs[2].clone();
      auto wNow = (*carried)->readArgument(1);
      auto mNow = (*carried)->readArgument(2);
      ASSERT_TRUE(wNow) << wNow.status().toString();
      ASSERT_TRUE(mNow) << mNow.status().toString();
      EXPECT_TRUE(wNow->bitwiseEqual(w));
      EXPECT_TRUE(mNow->bitwiseEqual(mom));
      // And the CPU interpreter, fed back by hand, agrees within the float tolerance.
      auto cpu = runCpu(m, {x.clone(), wCpu.clone(), mCpu.clone()});
      ASSERT_TRUE(cpu) << cpu.status().toString();
      EXPECT_EQ(compareLiterals(got->outputs[0], (*cpu)[0], kLossVsCpu), "");
      EXPECT_EQ(compareLiterals(*wNow, (*cpu)[1], kStateVsCpu), "");
      EXPECT_EQ(compareLiterals(*mNow, (*cpu)[2], kStateVsCpu), "");
      wCpu = (*cpu)[1].clone();
      mCpu = (*cpu)[2].clone();
    }
    const ExecutableStats s = (*carried)->stats();
    EXPECT_EQ(s.usesGraph, mode.graphs);
    EXPECT_EQ(s.graphLaunches, mode.graphs ? 5 : 0);
    // The carried values' second buffers are held beside the arguments, not in the arena.
    size_t nextValues = 0;
    bool listed = false;
    for (const auto& [what, bytes] : (*carried)->deviceMemoryBreakdown())
      if (what == "carried arguments' next values") {
        listed = true;
        nextValues = bytes;
      }
    EXPECT_TRUE(listed);
    EXPECT_GE(nextValues, size_t{2 * kK * kN * 4});
  }
}

// CompileOptions::carryInPlace: where the step computing a carried result is its argument's
// last reader, element for element (fused: m' = beta m + g reads m, w' = w - lr m' reads w),
// the result is written over the argument: no second buffer, the same numbers bit for bit.
TEST(CudaCarriedState, InPlaceUpdatesMatchPingPong) {
  WF_REQUIRE_GPU();
  Module m = parse(stepProgram(kB, kK, kN));
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name());
    CompileOptions pingPongOptions = modeOptions(mode);
    pingPongOptions.boundArguments = {1, 2};
    pingPongOptions.carriedResults = {{1, 1}, {2, 2}};
    CompileOptions inPlaceOptions = pingPongOptions;
    inPlaceOptions.carryInPlace = true;
    auto pingPong = cudaBackend().compile(m, *mainOf(m), pingPongOptions);
    auto inPlace = cudaBackend().compile(m, *mainOf(m), inPlaceOptions);
    ASSERT_TRUE(pingPong) << pingPong.status().toString();
    ASSERT_TRUE(inPlace) << inPlace.status().toString();
    EXPECT_EQ((*pingPong)->stats().carriedInPlace, 0);
    // Fused, both updates read their argument element for element; unfused, m' = add(beta m, g)
    // does not read m, while w' = subtract(w, lr m') still may.
    if (mode.fuse) {
      EXPECT_EQ((*inPlace)->stats().carriedInPlace, 2);
    }
    std::mt19937_64 gen(0x1a9 + (mode.graphs ? 1 : 0) + (mode.fuse ? 2 : 0));
    Literal w = nonzeroF32({kK, kN}, gen), mom = nonzeroF32({kK, kN}, gen);
    for (auto* e : {&*pingPong, &*inPlace}) {
      ASSERT_TRUE((*e)->bindArgument(1, w).isOk());
      ASSERT_TRUE((*e)->bindArgument(2, mom).isOk());
    }
    for (int step = 0; step < 5; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      Literal x = nonzeroF32({kB, kK}, gen);
      std::vector<Literal> batch = {x.clone()};
      auto want = (*pingPong)->run(batch);
      std::vector<Literal> batch2 = {x.clone()};
      auto got = (*inPlace)->run(batch2);
      ASSERT_TRUE(want) << want.status().toString();
      ASSERT_TRUE(got) << got.status().toString();
      EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
      for (size_t arg : {size_t{1}, size_t{2}}) {
        auto a = (*pingPong)->readArgument(arg);
        auto b = (*inPlace)->readArgument(arg);
        ASSERT_TRUE(a && b);
        EXPECT_TRUE(b->bitwiseEqual(*a)) << "argument " << arg;
      }
    }
    EXPECT_EQ((*inPlace)->stats().graphLaunches, mode.graphs ? 5 : 0);
    size_t nextValues = 0;
    for (const auto& [what, bytes] : (*inPlace)->deviceMemoryBreakdown())
      if (what == "carried arguments' next values") nextValues = bytes;
    if (mode.fuse) {
      EXPECT_EQ(nextValues, 0u);
    }
  }
}

TEST(CudaCarriedState, AFailedRunKeepsTheStateAndABindLoadsACheckpoint) {
  WF_REQUIRE_GPU();
  Module m = parse(stepProgram(kB, kK, kN));
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : {Mode{true, true}, Mode{false, true}}) {
    SCOPED_TRACE(mode.name());
    CompileOptions options = modeOptions(mode);
    options.boundArguments = {1, 2};
    options.carriedResults = {{1, 1}, {2, 2}};
    auto exe = cudaBackend().compile(m, *mainOf(m), options);
    auto plain = cudaBackend().compile(m, *mainOf(m), modeOptions(mode));
    ASSERT_TRUE(exe) << exe.status().toString();
    ASSERT_TRUE(plain) << plain.status().toString();
    std::mt19937_64 gen(0xc0ffee);
    Literal w0 = nonzeroF32({kK, kN}, gen), m0 = nonzeroF32({kK, kN}, gen), x0 = nonzeroF32({kB, kK}, gen);
    std::vector<Literal> batch0 = {x0.clone()};

    // Not bound yet: reading and running are errors.
    auto unbound = (*exe)->readArgument(1);
    ASSERT_FALSE(unbound);
    EXPECT_NE(unbound.status().message().find("argument #1"), std::string::npos) << unbound.status().toString();
    EXPECT_FALSE((*exe)->run(batch0));
    EXPECT_FALSE((*exe)->readArgument(3));

    ASSERT_TRUE((*exe)->bindArgument(1, w0).isOk());
    ASSERT_TRUE((*exe)->bindArgument(2, m0).isOk());
    auto read = (*exe)->readArgument(1);
    ASSERT_TRUE(read) << read.status().toString();
    EXPECT_TRUE(read->bitwiseEqual(w0));
    auto first = (*exe)->run(batch0);
    ASSERT_TRUE(first) << first.status().toString();
    Literal w1 = *(*exe)->readArgument(1), m1 = *(*exe)->readArgument(2);
    EXPECT_FALSE(w1.bitwiseEqual(w0));
    Literal x1 = nonzeroF32({kB, kK}, gen);
    std::vector<Literal> batch1 = {x1.clone()};
    ASSERT_TRUE((*exe)->run(batch1));
    Literal w2 = *(*exe)->readArgument(1), m2 = *(*exe)->readArgument(2);

    // A batch of the wrong shape fails before anything runs; the state stays.
    std::vector<Literal> wrong = {nonzeroF32({kB + 1, kK}, gen)};
    auto failed = (*exe)->run(wrong);
    ASSERT_FALSE(failed);
    EXPECT_NE(failed.status().message().find("argument #0"), std::string::npos) << failed.status().toString();
    EXPECT_FALSE((*exe)->run({}));
    EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w2));
    EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(m2));

    // The next good run goes on from there.
    Literal x2 = nonzeroF32({kB, kK}, gen);
    std::vector<Literal> all = {x2.clone(), w2.clone(), m2.clone()};
    auto want = (*plain)->run(all);
    std::vector<Literal> batch2 = {x2.clone()};
    auto got = (*exe)->run(batch2);
    ASSERT_TRUE(want && got);
    EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
    EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(want->outputs[1]));
    EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(want->outputs[2]));

    // Loading a checkpoint (after an odd number of runs: the other buffer of each pair is the
    // argument now): the first step again gives what it gave.
    ASSERT_TRUE((*exe)->bindArgument(1, w0).isOk());
    ASSERT_TRUE((*exe)->bindArgument(2, m0).isOk());
    auto again = (*exe)->run(batch0);
    ASSERT_TRUE(again) << again.status().toString();
    EXPECT_TRUE(again->outputs[0].bitwiseEqual(first->outputs[0]));
    EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w1));
    EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(m1));
    auto next = (*exe)->run(batch1);
    ASSERT_TRUE(next);
    EXPECT_TRUE((*exe)->readArgument(1)->bitwiseEqual(w2));
    EXPECT_TRUE((*exe)->readArgument(2)->bitwiseEqual(m2));
  }
}

// The weight %w is transposed and converted (through f64 and back, exactly) before its matrix
// product: hoisted work while %w is only bound, per-run work once it is carried. %s is bound and
// not carried: its transpose may still run once.
const char* kHoistable = R"(
func.func @main(%x: tensor<8x24xf32>, %w: tensor<16x24xf32>, %s: tensor<16x24xf32>) -> (tensor<f32>, tensor<16x24xf32>) {
  %wt = "stablehlo.transpose"(%w) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %wd = "stablehlo.convert"(%wt) : (tensor<24x16xf32>) -> tensor<24x16xf64>
  %wf = "stablehlo.convert"(%wd) : (tensor<24x16xf64>) -> tensor<24x16xf32>
  %st = "stablehlo.transpose"(%s) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %k = "stablehlo.add"(%wf, %st) : (tensor<24x16xf32>, tensor<24x16xf32>) -> tensor<24x16xf32>
  %y = "stablehlo.dot_general"(%x, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x24xf32>, tensor<24x16xf32>) -> tensor<8x16xf32>
  %sq = "stablehlo.multiply"(%y, %y) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  %zero = "stablehlo.constant"() {value = dense<0.0> : tensor<f32>} : () -> tensor<f32>
  %loss = "stablehlo.reduce"(%sq, %zero) ({
  ^bb0(%p: tensor<f32>, %q: tensor<f32>):
    %a = "stablehlo.add"(%p, %q) : (tensor<f32>, tensor<f32>) -> tensor<f32>
    "stablehlo.return"(%a) : (tensor<f32>) -> ()
  }) {dimensions = array<i64: 0, 1>} : (tensor<8x16xf32>, tensor<f32>) -> tensor<f32>
  %g = "stablehlo.dot_general"(%y, %x) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [0], rhs_contracting_dimensions = [0]>} : (tensor<8x16xf32>, tensor<8x24xf32>) -> tensor<16x24xf32>
  %lr = "stablehlo.constant"() {value = dense<0.002> : tensor<16x24xf32>} : () -> tensor<16x24xf32>
  %d = "stablehlo.multiply"(%g, %lr) : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  %w2 = "stablehlo.subtract"(%w, %d) : (tensor<16x24xf32>, tensor<16x24xf32>) -> tensor<16x24xf32>
  func.return %loss, %w2 : tensor<f32>, tensor<16x24xf32>
}
)";

TEST(CudaCarriedState, WorkOnACarriedWeightIsNotHoisted) {
  WF_REQUIRE_GPU();
  Module m = parse(kHoistable);
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name());
    CompileOptions carriedOptions = modeOptions(mode);
    carriedOptions.boundArguments = {1, 2};
    carriedOptions.carriedResults = {{1, 1}};
    CompileOptions boundOptions = modeOptions(mode);
    boundOptions.boundArguments = {1, 2};
    auto carried = cudaBackend().compile(m, *mainOf(m), carriedOptions);
    auto bound = cudaBackend().compile(m, *mainOf(m), boundOptions);
    auto plain = cudaBackend().compile(m, *mainOf(m), modeOptions(mode));
    ASSERT_TRUE(carried) << carried.status().toString();
    ASSERT_TRUE(bound) << bound.status().toString();
    ASSERT_TRUE(plain) << plain.status().toString();
    const ExecutableStats carriedStats = (*carried)->stats(), boundStats = (*bound)->stats();
    if (!mode.fuse) {
      // Bound only: transpose, convert, convert (of %w), transpose (of %s), add, all once.
      EXPECT_EQ(boundStats.hoistedSteps, 5);
      EXPECT_EQ(carriedStats.hoistedSteps, 1);  // %s's transpose only
    } else {
      EXPECT_GE(boundStats.hoistedSteps, 1);
      EXPECT_LT(carriedStats.hoistedSteps, boundStats.hoistedSteps);
    }
    EXPECT_EQ(carriedStats.carriedCopies, 0);

    std::mt19937_64 gen(0xab + (mode.graphs ? 1 : 0) + (mode.fuse ? 2 : 0));
    Literal w = nonzeroF32({16, 24}, gen), s = nonzeroF32({16, 24}, gen);
    Literal wCpu = w.clone();
    ASSERT_TRUE((*carried)->bindArgument(1, w).isOk());
    ASSERT_TRUE((*carried)->bindArgument(2, s).isOk());
    ASSERT_TRUE((*bound)->bindArgument(2, s).isOk());
    for (int step = 0; step < 4; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      Literal x = nonzeroF32({8, 24}, gen);
      std::vector<Literal> all = {x.clone(), w.clone(), s.clone()};
      auto want = (*plain)->run(all);
      ASSERT_TRUE(want) << want.status().toString();
      std::vector<Literal> batch = {x.clone()};
      auto got = (*carried)->run(batch);
      ASSERT_TRUE(got) << got.status().toString();
      ASSERT_EQ(got->outputs.size(), 1u);
      EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
      // The bound-only executable, its weight bound again by hand each step: the prologue
      // reruns after each bind.
      ASSERT_TRUE((*bound)->bindArgument(1, w).isOk());
      auto rebound = (*bound)->run(batch);
      ASSERT_TRUE(rebound) << rebound.status().toString();
      ASSERT_EQ(rebound->outputs.size(), 2u);
      EXPECT_TRUE(rebound->outputs[0].bitwiseEqual(want->outputs[0]));
      w = want->outputs[1].clone();
      auto wNow = (*carried)->readArgument(1);
      ASSERT_TRUE(wNow) << wNow.status().toString();
      EXPECT_TRUE(wNow->bitwiseEqual(w));
      EXPECT_FALSE(wNow->bitwiseEqual(all[1]));  // the weight did move
      auto cpu = runCpu(m, {x.clone(), wCpu.clone(), s.clone()});
      ASSERT_TRUE(cpu) << cpu.status().toString();
      EXPECT_EQ(compareLiterals(got->outputs[0], (*cpu)[0], kLossVsCpu), "");
      EXPECT_EQ(compareLiterals(*wNow, (*cpu)[1], kStateVsCpu), "");
      wCpu = (*cpu)[1].clone();
    }
  }
}

// Weight preprocessing in two independent prologue groups: %a and %b are combined (one group,
// both kept after the prologue, since rebinding either reruns work that reads the other), %c is
// converted on its own (its own group: freed after the prologue, uploaded again by its bind).
const char* kTwoPrologueGroups = R"(
func.func @main(%x: tensor<8x24xf32>, %a: tensor<16x24xf32>, %b: tensor<16x24xf32>, %c: tensor<16x24xf32>) -> tensor<8x16xf32> {
  %at = "stablehlo.transpose"(%a) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %bt = "stablehlo.transpose"(%b) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %k = "stablehlo.add"(%at, %bt) : (tensor<24x16xf32>, tensor<24x16xf32>) -> tensor<24x16xf32>
  %ct = "stablehlo.transpose"(%c) {permutation = array<i64: 1, 0>} : (tensor<16x24xf32>) -> tensor<24x16xf32>
  %cd = "stablehlo.convert"(%ct) : (tensor<24x16xf32>) -> tensor<24x16xf64>
  %cf = "stablehlo.convert"(%cd) : (tensor<24x16xf64>) -> tensor<24x16xf32>
  %y = "stablehlo.dot_general"(%x, %k) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x24xf32>, tensor<24x16xf32>) -> tensor<8x16xf32>
  %z = "stablehlo.dot_general"(%x, %cf) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], rhs_contracting_dimensions = [0]>} : (tensor<8x24xf32>, tensor<24x16xf32>) -> tensor<8x16xf32>
  %r = "stablehlo.add"(%y, %z) : (tensor<8x16xf32>, tensor<8x16xf32>) -> tensor<8x16xf32>
  func.return %r : tensor<8x16xf32>
}
)";

// Binding weights again between runs (loading a checkpoint): each bind reruns the hoisted work
// that reads the weight, in the buffers the captured graph reads, and never reads a weight the
// prologue freed. Several rebinds, of each weight, of all of them and of none.
TEST(CudaCarriedState, RebindingHoistedWeightsBetweenRuns) {
  WF_REQUIRE_GPU();
  Module m = parse(kTwoPrologueGroups);
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name());
    CompileOptions boundOptions = modeOptions(mode);
    boundOptions.boundArguments = {1, 2, 3};
    auto bound = cudaBackend().compile(m, *mainOf(m), boundOptions);
    auto plain = cudaBackend().compile(m, *mainOf(m), modeOptions(mode));
    ASSERT_TRUE(bound) << bound.status().toString();
    ASSERT_TRUE(plain) << plain.status().toString();
    EXPECT_GE((*bound)->stats().hoistedSteps, 2);

    std::mt19937_64 gen(0xcd + (mode.graphs ? 1 : 0) + (mode.fuse ? 2 : 0));
    Literal weights[3] = {nonzeroF32({16, 24}, gen), nonzeroF32({16, 24}, gen), nonzeroF32({16, 24}, gen)};
    for (size_t i = 0; i < 3; ++i) ASSERT_TRUE((*bound)->bindArgument(i + 1, weights[i]).isOk());
    // The weights bound again before each step: none, %a, %c, %b, all, %a and %c, none.
    const std::vector<std::vector<size_t>> rebinds = {{}, {0}, {2}, {1}, {0, 1, 2}, {0, 2}, {}};
    for (size_t step = 0; step < rebinds.size(); ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      for (size_t i : rebinds[step]) {
        weights[i] = nonzeroF32({16, 24}, gen);
        ASSERT_TRUE((*bound)->bindArgument(i + 1, weights[i]).isOk());
      }
      Literal x = nonzeroF32({8, 24}, gen);
      std::vector<Literal> all = {x.clone(), weights[0].clone(), weights[1].clone(), weights[2].clone()};
      auto want = (*plain)->run(all);
      ASSERT_TRUE(want) << want.status().toString();
      std::vector<Literal> batch = {x.clone()};
      auto got = (*bound)->run(batch);
      ASSERT_TRUE(got) << got.status().toString();
      ASSERT_EQ(got->outputs.size(), 1u);
      EXPECT_TRUE(got->outputs[0].bitwiseEqual(want->outputs[0]));
      // %a and %b share their group: both stay on the device. %c alone was freed.
      for (size_t i = 0; i < 2; ++i) {
        auto now = (*bound)->readArgument(i + 1);
        ASSERT_TRUE(now) << now.status().toString();
        EXPECT_TRUE(now->bitwiseEqual(weights[i]));
      }
      EXPECT_FALSE((*bound)->readArgument(3));
    }
    EXPECT_EQ((*bound)->stats().usesGraph, mode.graphs);
  }
}

// Carried results the run does not compute into a buffer of their own: arguments (returned to
// themselves: nothing to do; to another argument: two arguments swap), a constant, and a value
// that another carried result already takes. All but the first are copied on the device at the
// end of the run (inside the graph where there is one).
TEST(CudaCarriedState, ArgumentsConstantsAndSharedValuesAreCopied) {
  WF_REQUIRE_GPU();
  const std::string t = "tensor<3xf32>";
  const std::string text =
      "func.func @main(%x: " + t + ", %a: " + t + ", %b: " + t + ", %c: " + t + ", %d: " + t + ", %e: " + t +
      ", %f: " + t + ") -> (" + t + ", " + t + ", " + t + ", " + t + ", " + t + ", " + t + ", " + t + ") {\n" +
      "  %n = \"stablehlo.add\"(%d, %x) : (" + t + ", " + t + ") -> " + t + "\n" +
      "  %k = \"stablehlo.constant\"() {value = dense<[1.5, -2.5, 3.25]> : " + t + "} : () -> " + t + "\n" +
      "  func.return %b, %a, %c, %n, %n, %k, %n : " + t + ", " + t + ", " + t + ", " + t + ", " + t + ", " + t +
      ", " + t + "\n}\n";
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  for (const Mode& mode : kModes) {
    SCOPED_TRACE(mode.name());
    CompileOptions options = modeOptions(mode);
    options.boundArguments = {1, 2, 3, 4, 5, 6};
    // a <- b, b <- a, c <- c, d <- d + x, e <- k, f <- d + x; result #4 (d + x) is returned.
    options.carriedResults = {{0, 1}, {1, 2}, {2, 3}, {3, 4}, {5, 5}, {6, 6}};
    auto exe = cudaBackend().compile(m, *mainOf(m), options);
    ASSERT_TRUE(exe) << exe.status().toString();
    EXPECT_EQ((*exe)->stats().carriedResults, 6);
    EXPECT_EQ((*exe)->stats().carriedCopies, 4);  // a, b, e, f

    std::mt19937_64 gen(0x77 + (mode.graphs ? 1 : 0) + (mode.fuse ? 2 : 0));
    std::vector<Literal> state;  // a .. f
    for (size_t i = 1; i <= 6; ++i) {
      state.push_back(nonzeroF32({3}, gen));
      ASSERT_TRUE((*exe)->bindArgument(i, state.back()).isOk());
    }
    Literal k = Literal::zeros(Type::tensor({3}, ElementType::kF32));
    k.dataAs<float>()[0] = 1.5f;
    k.dataAs<float>()[1] = -2.5f;
    k.dataAs<float>()[2] = 3.25f;
    for (int step = 0; step < 4; ++step) {
      SCOPED_TRACE("step " + std::to_string(step));
      std::vector<Literal> batch = {nonzeroF32({3}, gen)};
      auto got = (*exe)->run(batch);
      ASSERT_TRUE(got) << got.status().toString();
      ASSERT_EQ(got->outputs.size(), 1u);
      Literal n = Literal::zeros(Type::tensor({3}, ElementType::kF32));
      for (int64_t i = 0; i < 3; ++i) n.dataAs<float>()[i] = state[3].dataAs<float>()[i] + batch[0].dataAs<float>()[i];
      EXPECT_TRUE(got->outputs[0].bitwiseEqual(n));
      std::vector<Literal> next;
      next.push_back(state[1].clone());
      next.push_back(state[0].clone());
      next.push_back(state[2].clone());
      next.push_back(n.clone());
      next.push_back(k.clone());
      next.push_back(n.clone());
      state = std::move(next);
      for (size_t i = 1; i <= 6; ++i) {
        auto now = (*exe)->readArgument(i);
        ASSERT_TRUE(now) << now.status().toString();
        EXPECT_TRUE(now->bitwiseEqual(state[i - 1])) << "argument #" << i;
      }
    }
    EXPECT_EQ((*exe)->stats().usesGraph, mode.graphs);
  }
}

}  // namespace
}  // namespace wf::cudatest
