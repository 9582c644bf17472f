// rng_bit_generator on the GPU against the CPU interpreter, bit for bit: THREE_FRY, PHILOX and
// DEFAULT, 32- and 64-bit and narrow element types, odd shapes (ThreeFry's split dimension),
// random keys and counters near 2^64 (the Philox counter carries into its high word), two- and
// three-word Philox states. Both results, the output state included, must be identical.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string rbgProgram(const std::string& algorithm, const Type& state, const Type& out) {
  const std::string types = "(" + state.toString() + ", " + out.toString() + ")";
  return "func.func @main(%s: " + state.toString() + ") -> " + types + " {\n" +
         "  %r:2 = stablehlo.rng_bit_generator %s, algorithm = " + algorithm + " : (" + state.toString() + ") -> " +
         types + "\n  func.return %r#0, %r#1 : " + state.toString() + ", " + out.toString() + "\n}\n";
}

void expectSameBits(const std::string& text, const Literal& state) {
  Module m = parse(text);
  if (!mainOf(m)) return;
  Expected<std::vector<Literal>> want = runCpu(m, {state.clone()});
  ASSERT_TRUE(want) << want.status().toString() << "\n" << text;
  std::vector<Literal> args;
  args.push_back(state.clone());
  Expected<RunResult> got = runCuda(m, args);
  ASSERT_TRUE(got) << got.status().toString() << "\n" << text;
  ASSERT_EQ(got->outputs.size(), 2u);
  for (size_t r = 0; r < 2; ++r) {
    const Literal& g = got->outputs[r];
    const Literal& w = (*want)[r];
    ASSERT_EQ(g.type(), w.type()) << text;
    for (int64_t i = 0; i < w.numElements(); ++i)
      ASSERT_EQ(g.getBits(i), w.getBits(i)) << "result #" << r << " element " << i << " of\n" << text;
  }
}

class CudaRngBitGenerator : public testing::TestWithParam<std::tuple<std::string, ElementType>> {};

TEST_P(CudaRngBitGenerator, MatchesCpuBitForBit) {
  WF_REQUIRE_GPU();
  const auto& [algorithm, et] = GetParam();
  const std::vector<std::vector<int64_t>> shapes = {{},     {1},       {7},   {3, 5},    {4, 6},
                                                    {5, 3, 3}, {3, 4, 5}, {1001}, {2, 0, 3}, {65, 33}};
  const std::vector<int64_t> stateSizes = algorithm == "THREE_FRY" ? std::vector<int64_t>{2} : std::vector<int64_t>{2, 3};
  for (int64_t stateSize : stateSizes) {
    const Type stateType = Type::tensor({stateSize}, ElementType::kUI64);
    for (const auto& shape : shapes) {
      const Type out = Type::tensor(shape, et);
      SCOPED_TRACE(out.toString() + " state " + std::to_string(stateSize));
      for (int trial = 0; trial < 3; ++trial) {
        Literal state = Literal::zeros(stateType);
        for (int64_t i = 0; i < stateSize; ++i) state.setBits(i, rng()());
        // Counters just below 2^64: the 128-bit Philox counter carries, ThreeFry's wraps.
        if (trial == 1) state.setBits(1, ~uint64_t{0} - 2);
        if (trial == 2) state.setBits(1, 0);
        expectSameBits(rbgProgram(algorithm, stateType, out), state);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Algorithms, CudaRngBitGenerator,
                         testing::Combine(testing::Values("THREE_FRY", "PHILOX", "DEFAULT"),
                                          testing::Values(ElementType::kUI32, ElementType::kUI64, ElementType::kSI32,
                                                          ElementType::kSI64, ElementType::kUI8, ElementType::kSI16,
                                                          ElementType::kI1, ElementType::kF16, ElementType::kBF16,
                                                          ElementType::kF32, ElementType::kF64)),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + typeName(std::get<1>(info.param)); });

// The state threads through a program: two generators in a row give what the CPU gives.
TEST(CudaRngBitGenerator, ChainedStates) {
  WF_REQUIRE_GPU();
  const std::string text =
      "func.func @main(%s: tensor<2xui64>) -> (tensor<2xui64>, tensor<5x3xui32>, tensor<9xui64>) {\n"
      "  %a:2 = stablehlo.rng_bit_generator %s, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<5x3xui32>)\n"
      "  %b:2 = stablehlo.rng_bit_generator %a#0, algorithm = THREE_FRY : (tensor<2xui64>) -> (tensor<2xui64>, tensor<9xui64>)\n"
      "  func.return %b#0, %a#1, %b#1 : tensor<2xui64>, tensor<5x3xui32>, tensor<9xui64>\n}\n";
  Literal state = Literal::zeros(Type::tensor({2}, ElementType::kUI64));
  state.setBits(0, rng()());
  state.setBits(1, rng()());
  expectMatchesCpu(text, {state}, Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest
