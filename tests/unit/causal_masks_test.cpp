// Causal attention masks found at compile time (src/transforms/causal_masks.cpp) and the values
// behind them (src/transforms/known_values.cpp): a mask computed from position iotas, also
// through a cumulative sum and a gather as Hugging Face's Llama builds it, marks its attention
// composite `mask_is_causal`, and the program computes the same bits as before; a mask that is
// not exactly causal, that an argument reaches, or that broadcasts over the queries does not.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ir/printer.h"
#include "program_test_helpers.h"
#include "transforms/attention.h"
#include "transforms/causal_masks.h"
#include "transforms/known_values.h"

namespace wf {
namespace {

using programtest::mainOf;

// Attention over q, k, v [1, 2, 5, 4] (bf16) whose select mask %mask [1, 1, 5, 5] the caller's
// `maskOps` define (or an argument %mask when `maskArgument`).
std::string attentionProgram(const std::string& maskOps, bool maskArgument = false) {
  return programtest::selectMaskedAttention(1, 2, 5, 4, "tensor<1x1x5x5xi1>", maskOps, maskArgument);
}

// Query position >= key position: the causal mask, from two iotas.
const char* kIotaCausal = R"(  %qpos = stablehlo.iota dim = 2 : tensor<1x1x5x5xi64>
  %kpos = stablehlo.iota dim = 3 : tensor<1x1x5x5xi64>
  %mask = stablehlo.compare GE, %qpos, %kpos, SIGNED : (tensor<1x1x5x5xi64>, tensor<1x1x5x5xi64>) -> tensor<1x1x5x5xi1>
)";

// As Hugging Face's Llama: positions as a cumulative sum of ones (a reduce_window) minus one,
// gathered for the keys, compared with the queries', and-ed with a test that is true everywhere.
const char* kCumsumCausal = R"(  %ones = stablehlo.constant dense<1> : tensor<5xi64>
  %zero = stablehlo.constant dense<0> : tensor<i64>
  %csum = "stablehlo.reduce_window"(%ones, %zero) ({
  ^bb0(%a: tensor<i64>, %b: tensor<i64>):
    %r = "stablehlo.add"(%a, %b) : (tensor<i64>, tensor<i64>) -> tensor<i64>
    "stablehlo.return"(%r) : (tensor<i64>) -> ()
  }) {window_dimensions = array<i64: 5>, window_strides = array<i64: 1>, padding = dense<[[4, 0]]> : tensor<1x2xi64>} : (tensor<5xi64>, tensor<i64>) -> tensor<5xi64>
  %one = stablehlo.constant dense<1> : tensor<5xi64>
  %pos = stablehlo.subtract %csum, %one : tensor<5xi64>
  %idx = stablehlo.reshape %pos : (tensor<5xi64>) -> tensor<5x1xi64>
  %kpos1 = "stablehlo.gather"(%pos, %idx) {dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1>, indices_are_sorted = false} : (tensor<5xi64>, tensor<5x1xi64>) -> tensor<5xi64>
  %qpos = stablehlo.broadcast_in_dim %pos, dims = [2] : (tensor<5xi64>) -> tensor<1x1x5x5xi64>
  %kpos = stablehlo.broadcast_in_dim %kpos1, dims = [3] : (tensor<5xi64>) -> tensor<1x1x5x5xi64>
  %le = stablehlo.compare LE, %kpos, %qpos, SIGNED : (tensor<1x1x5x5xi64>, tensor<1x1x5x5xi64>) -> tensor<1x1x5x5xi1>
  %t = stablehlo.constant dense<true> : tensor<1x1x5x5xi1>
  %mask = stablehlo.and %t, %le : tensor<1x1x5x5xi1>
)";

// Outlines @main's attention and marks causal masks; checks the mark and that the marked program
// computes what the original does, bit for bit, on random inputs.
void checkMarked(const std::string& text, int wantMarked) {
  auto original = programtest::parseAndVerify(text, "causal.mlir");
  ASSERT_TRUE(original) << original.status().toString();
  auto marked = programtest::parseAndVerify(text, "causal.mlir");
  ASSERT_TRUE(marked);
  Expected<int> outlined = outlineAttention(*marked, "main");
  ASSERT_TRUE(outlined) << outlined.status().toString();
  ASSERT_EQ(*outlined, 1);
  Expected<int> n = markCausalAttentionMasks(*marked, "main");
  ASSERT_TRUE(n) << n.status().toString();
  EXPECT_EQ(*n, wantMarked);
  for (const auto& op : FuncOp(mainOf(*marked)).body().operations()) {
    if (op->code() != OpCode::Composite) continue;
    const Attribute* causal = op->attr("composite_attributes")->field("mask_is_causal");
    EXPECT_EQ(causal != nullptr && causal->boolValue(), wantMarked == 1);
  }
  auto reparsed = programtest::parseAndVerify(printModule(*marked), "marked.mlir");
  ASSERT_TRUE(reparsed) << reparsed.status().toString() << "\n" << printModule(*marked);
  // A mask argument: true but for one key in five (every row keeps some).
  const auto args = programtest::randomArguments(*original, 5, [](int64_t i) { return i % 5 != 3; });
  EXPECT_EQ(programtest::sameResults(*original, *reparsed, args), "");
}

TEST(CausalMasks, IotaComparisonIsCausal) { checkMarked(attentionProgram(kIotaCausal), 1); }

TEST(CausalMasks, LlamaStylePositionsThroughACumulativeSumAndAGatherAreCausal) {
  checkMarked(attentionProgram(kCumsumCausal), 1);
}

TEST(CausalMasks, OtherMasksAreNot) {
  // Strictly below the diagonal: every key but the query's own.
  std::string strict = kIotaCausal;
  strict.replace(strict.find("GE"), 2, "GT");
  checkMarked(attentionProgram(strict), 0);
  // Reached by an argument.
  checkMarked(attentionProgram("", /*maskArgument=*/true), 0);
  // One row of keys broadcast over the queries (a padding mask) is no causal mask, whatever its
  // row holds.
  checkMarked(attentionProgram(R"(  %kpos = stablehlo.iota dim = 3 : tensor<1x1x1x5xi64>
  %zero = stablehlo.constant dense<0> : tensor<1x1x1x5xi64>
  %row = stablehlo.compare LE, %kpos, %zero, SIGNED : (tensor<1x1x1x5xi64>, tensor<1x1x1x5xi64>) -> tensor<1x1x1x5xi1>
  %mask = stablehlo.broadcast_in_dim %row, dims = [0, 1, 2, 3] : (tensor<1x1x1x5xi1>) -> tensor<1x1x5x5xi1>
)"),
               0);
}

TEST(CausalMasks, TopLeftCausalLiterals) {
  Literal m = Literal::zeros(Type::tensor({2, 1, 3, 4}, ElementType::kI1));
  for (int64_t s = 0; s < 2; ++s)
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 4; ++j) m.setInt((s * 3 + i) * 4 + j, j <= i);
  EXPECT_TRUE(isTopLeftCausal(m));
  m.setInt((1 * 3 + 2) * 4 + 3, 1);  // one key too many in the second slice
  EXPECT_FALSE(isTopLeftCausal(m));
  EXPECT_FALSE(isTopLeftCausal(Literal::zeros(Type::tensor({3, 3}, ElementType::kI1))));
}

TEST(KnownValues, ArgumentsStopEvaluationAndTheLimitHolds) {
  auto m = programtest::parseAndVerify(R"(func.func @main(%a: tensor<4xi64>) -> (tensor<4xi64>, tensor<4xi64>) {
  %i = stablehlo.iota dim = 0 : tensor<4xi64>
  %two = stablehlo.constant dense<2> : tensor<4xi64>
  %k = stablehlo.multiply %i, %two : tensor<4xi64>
  %u = stablehlo.add %k, %a : tensor<4xi64>
  return %k, %u : tensor<4xi64>, tensor<4xi64>
}
)", "known.mlir");
  ASSERT_TRUE(m) << m.status().toString();
  const Operation& ret = *FuncOp(mainOf(*m)).body().terminator();
  KnownValues known(16);
  const Literal* k = known.value(ret.operand(0));
  ASSERT_NE(k, nullptr);
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ(k->getInt(i), 2 * i);
  EXPECT_EQ(known.value(ret.operand(1)), nullptr);  // %a reaches it
  KnownValues tiny(3);
  EXPECT_EQ(tiny.value(ret.operand(0)), nullptr);  // 4 elements, over the limit
}

}  // namespace
}  // namespace wf
