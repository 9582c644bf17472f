// Batch norm on the GPU: the CUDA backend writes batch_norm_training, batch_norm_grad and
// batch_norm_inference out (transforms/expand_batch_norm.h) and fuses them with their neighbours;
// the results must match the CPU interpreter, which runs the ops themselves in double. The shapes
// are not multiples of any tile (5 x 7 channels of 9 x 11), the ReLU mask and the residual are
// real, and the inputs are fresh random values off zero mean.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// A ResNet block's batch norm in a training step: forward (batch norm, residual add, ReLU), then
// the backward of the same (ReLU mask, batch_norm_grad), returning the activation, the batch
// statistics and the three gradients.
std::string trainingStep(ElementType t) {
  const std::string x = tensorType({5, 7, 9, 11}, t), v = tensorType({7}, t);
  const std::string attrs = "{epsilon = 1.0e-05 : f32, feature_index = 1 : i64}";
  return "func.func @main(%x: " + x + ", %s: " + v + ", %o: " + v + ", %res: " + x + ", %dz: " + x + ") -> (" + x +
         ", " + v + ", " + v + ", " + x + ", " + v + ", " + v + ") {\n" +
         "  %bn:3 = \"stablehlo.batch_norm_training\"(%x, %s, %o) " + attrs + " : (" + x + ", " + v + ", " + v +
         ") -> (" + x + ", " + v + ", " + v + ")\n" +
         "  %sum = \"stablehlo.add\"(%bn#0, %res) : (" + x + ", " + x + ") -> " + x + "\n" +
         "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : " + x + "} : () -> " + x + "\n" +
         "  %z = \"stablehlo.maximum\"(%sum, %zero) : (" + x + ", " + x + ") -> " + x + "\n" +
         "  %live = \"stablehlo.compare\"(%sum, %zero) {comparison_direction = #stablehlo<comparison_direction GT>} : (" +
         x + ", " + x + ") -> " + tensorType({5, 7, 9, 11}, ElementType::kI1) + "\n" +
         "  %dy = \"stablehlo.select\"(%live, %dz, %zero) : (" + tensorType({5, 7, 9, 11}, ElementType::kI1) + ", " + x +
         ", " + x + ") -> " + x + "\n" +
         "  %g:3 = \"stablehlo.batch_norm_grad\"(%x, %s, %bn#1, %bn#2, %dy) " + attrs + " : (" + x + ", " + v + ", " + v +
         ", " + v + ", " + x + ") -> (" + x + ", " + v + ", " + v + ")\n" +
         "  return %z, %bn#1, %bn#2, %g#0, %g#1, %g#2 : " + x + ", " + v + ", " + v + ", " + x + ", " + v + ", " + v +
         "\n}";
}

std::vector<Literal> stepArgs(ElementType t) {
  const Type x = Type::tensor({5, 7, 9, 11}, t), v = Type::tensor({7}, t);
  return {randomLiteral(x, -1.0, 3.0), randomLiteral(v, 0.5, 1.5), randomLiteral(v, -0.5, 0.5),
          randomLiteral(x, -1.0, 1.0), randomLiteral(x, -1.0, 1.0)};
}

TEST(CudaBatchNorm, TrainingStepF32MatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  // f32 sums over 495 elements per channel in another order than the interpreter's double.
  expectMatchesCpu(trainingStep(ElementType::kF32), stepArgs(ElementType::kF32), Tolerance{0, 0, 2e-6});
}

TEST(CudaBatchNorm, TrainingStepF64MatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  expectMatchesCpu(trainingStep(ElementType::kF64), stepArgs(ElementType::kF64), Tolerance{0, 0, 1e-13});
}

TEST(CudaBatchNorm, TrainingStepBf16ComputesInF32) {
  WF_REQUIRE_GPU();
  // One bf16 rounding of each result (relative 2^-8), from f32 arithmetic.
  expectMatchesCpu(trainingStep(ElementType::kBF16), stepArgs(ElementType::kBF16), Tolerance{0, 0, 8e-3});
}

TEST(CudaBatchNorm, InferenceMatchesTheInterpreter) {
  WF_REQUIRE_GPU();
  const Type x = Type::tensor({3, 6, 5, 7}, ElementType::kF32), v = Type::tensor({6}, ElementType::kF32);
  const std::string text = oneOp("stablehlo.batch_norm_inference", {x, v, v, v, v}, x,
                                 "epsilon = 1.0e-03 : f32, feature_index = 1 : i64");
  expectMatchesCpu(text, {randomLiteral(x), randomLiteral(v), randomLiteral(v), randomLiteral(v),
                          randomLiteral(v, 0.1, 2.0)},
                   Tolerance{1e-5, 1e-5});
}

}  // namespace
}  // namespace wf::cudatest
