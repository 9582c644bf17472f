// CUDA data-movement kernels against the CPU interpreter: transpose, broadcast_in_dim, slice,
// reverse, concatenate, pad, iota, reshape, on every element type; bitcast_convert between widths.
#include "on_gpu_util.h"

namespace wf::cudatest {
namespace {

class CudaDataMovement : public testing::TestWithParam<ElementType> {
 protected:
  Type t(std::vector<int64_t> shape) const { return Type::tensor(std::move(shape), GetParam()); }
  void check(const std::string& text, const std::vector<Type>& args) {
    std::vector<Literal> in;
    for (const Type& a : args) in.push_back(randomLiteral(a, 1, 0));
    expectMatchesCpu(text, in, Tolerance{});
  }
};

TEST_P(CudaDataMovement, Transpose) {
  WF_REQUIRE_GPU();
  check(oneOp("stablehlo.transpose", {t({3, 5, 7})}, t({7, 3, 5}), "permutation = array<i64: 2, 0, 1>"), {t({3, 5, 7})});
  check(oneOp("stablehlo.transpose", {t({2, 3, 4, 5})}, t({5, 4, 3, 2}), "permutation = array<i64: 3, 2, 1, 0>"),
        {t({2, 3, 4, 5})});
  check(oneOp("stablehlo.transpose", {t({33, 65})}, t({65, 33}), "permutation = array<i64: 1, 0>"), {t({33, 65})});
}

TEST_P(CudaDataMovement, BroadcastInDim) {
  WF_REQUIRE_GPU();
  check(oneOp("stablehlo.broadcast_in_dim", {t({5})}, t({3, 5, 2}), "broadcast_dimensions = array<i64: 1>"), {t({5})});
  check(oneOp("stablehlo.broadcast_in_dim", {t({3, 1})}, t({2, 3, 7}), "broadcast_dimensions = array<i64: 1, 2>"),
        {t({3, 1})});
  check(oneOp("stablehlo.broadcast_in_dim", {t({})}, t({4, 9}), "broadcast_dimensions = array<i64>"), {t({})});
  check(oneOp("stablehlo.broadcast_in_dim", {t({4, 3})}, t({3, 4}), "broadcast_dimensions = array<i64: 1, 0>"),
        {t({4, 3})});
}

TEST_P(CudaDataMovement, SliceAndReverse) {
  WF_REQUIRE_GPU();
  check(oneOp("stablehlo.slice", {t({9, 11, 4})}, t({3, 4, 2}),
              "start_indices = array<i64: 1, 2, 0>, limit_indices = array<i64: 8, 10, 4>, strides = array<i64: 3, 2, 2>"),
        {t({9, 11, 4})});
  check(oneOp("stablehlo.slice", {t({9, 11})}, t({9, 5}),
              "start_indices = array<i64: 0, 6>, limit_indices = array<i64: 9, 11>, strides = array<i64: 1, 1>"),
        {t({9, 11})});
  check(oneOp("stablehlo.reverse", {t({4, 5, 6})}, t({4, 5, 6}), "dimensions = array<i64: 0, 2>"), {t({4, 5, 6})});
}

TEST_P(CudaDataMovement, Concatenate) {
  WF_REQUIRE_GPU();
  check(oneOp("stablehlo.concatenate", {t({2, 3, 5}), t({2, 1, 5}), t({2, 4, 5})}, t({2, 8, 5}), "dimension = 1 : i64"),
        {t({2, 3, 5}), t({2, 1, 5}), t({2, 4, 5})});
  check(oneOp("stablehlo.concatenate", {t({3}), t({0}), t({6})}, t({9}), "dimension = 0 : i64"),
        {t({3}), t({0}), t({6})});
}

TEST_P(CudaDataMovement, Pad) {
  WF_REQUIRE_GPU();
  check(oneOp("stablehlo.pad", {t({4, 5}), t({})}, t({9, 16}),
              "edge_padding_low = array<i64: 1, 2>, edge_padding_high = array<i64: 1, 1>, "
              "interior_padding = array<i64: 1, 2>"),
        {t({4, 5}), t({})});
  // Negative padding crops.
  check(oneOp("stablehlo.pad", {t({6, 7}), t({})}, t({5, 6}),
              "edge_padding_low = array<i64: -2, 1>, edge_padding_high = array<i64: 1, -2>, "
              "interior_padding = array<i64: 0, 0>"),
        {t({6, 7}), t({})});
  check(oneOp("stablehlo.pad", {t({5}), t({})}, t({8}),
              "edge_padding_low = array<i64: -3>, edge_padding_high = array<i64: -2>, interior_padding = array<i64: 2>"),
        {t({5}), t({})});
}

TEST_P(CudaDataMovement, ReshapeAliasesItsOperand) {
  WF_REQUIRE_GPU();
  const std::string ty = t({6, 5}).toString(), ry = t({3, 10}).toString(), ty2 = t({5, 6}).toString();
  const std::string text = "func.func @main(%a: " + ty + ") -> " + ty2 + " {\n" +
                           "  %0 = \"stablehlo.reshape\"(%a) : (" + ty + ") -> " + ry + "\n" +
                           "  %1 = \"stablehlo.reshape\"(%0) : (" + ry + ") -> " + ty2 + "\n" +
                           "  func.return %1 : " + ty2 + "\n}\n";
  check(text, {t({6, 5})});
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_EQ((*exe)->stats().aliases, 2);
  EXPECT_EQ((*exe)->stats().deviceSteps, 0);
}

INSTANTIATE_TEST_SUITE_P(Types, CudaDataMovement, testing::ValuesIn(gpuTypes()),
                         [](const auto& info) { return typeName(info.param); });

TEST(CudaDataMovement, IotaEveryTypeAndDim) {
  WF_REQUIRE_GPU();
  for (ElementType et : gpuTypes()) {
    if (et == ElementType::kI1) continue;
    for (int dim = 0; dim < 3; ++dim) {
      const Type t = Type::tensor({4, 70, 3}, et);
      expectMatchesCpu(oneOp("stablehlo.iota", {}, t, "iota_dimension = " + std::to_string(dim) + " : i64"), {},
                       Tolerance{});
    }
  }
}

// bitcast_convert between element types of different widths: bytes kept for byte-aligned types,
// bits packed and unpacked for i1, bit for bit the CPU's little-endian order.
TEST(CudaDataMovement, BitcastConvertBetweenWidths) {
  WF_REQUIRE_GPU();
  using E = ElementType;
  const std::vector<std::tuple<std::vector<int64_t>, E, std::vector<int64_t>, E>> cases = {
      {{3, 64}, E::kI1, {3}, E::kSI64},  {{5}, E::kSI64, {5, 64}, E::kI1},   {{2, 7, 8}, E::kI1, {2, 7}, E::kUI8},
      {{9}, E::kUI16, {9, 16}, E::kI1},  {{4, 16}, E::kI1, {4}, E::kF16},    {{6}, E::kF32, {6, 4}, E::kUI8},
      {{6, 4}, E::kUI8, {6}, E::kF32},   {{3, 5}, E::kF64, {3, 5, 2}, E::kSI32}, {{7, 2}, E::kSI16, {7}, E::kF32},
      {{10}, E::kBF16, {10, 2}, E::kSI8}, {{2, 3, 32}, E::kI1, {2, 3}, E::kUI32}, {{4}, E::kF64, {4, 64}, E::kI1}};
  for (const auto& [inShape, from, outShape, to] : cases) {
    const Type in = Type::tensor(inShape, from), out = Type::tensor(outShape, to);
    // Integers take random bits (lo > hi), floats values in +-1e4.
    const Literal x = isFloat(from) ? randomLiteral(in, -1e4, 1e4) : randomLiteral(in, 1, 0);
    expectOnGpuMatchesCpu(oneOp("stablehlo.bitcast_convert", {in}, out), {x}, Tolerance{0, 0});
  }
}

TEST(CudaDataMovement, ComplexAndMinifloatValuesMoveAsBytes) {
  WF_REQUIRE_GPU();
  for (ElementType et : {ElementType::kComplexF64, ElementType::kF8E4M3FN}) {
    const Type in = Type::tensor({3, 5}, et), out = Type::tensor({5, 3}, et);
    expectMatchesCpu(oneOp("stablehlo.transpose", {in}, out, "permutation = array<i64: 1, 0>"), {randomLiteral(in, -2, 2)},
                     Tolerance{});
  }
}

}  // namespace
}  // namespace wf::cudatest
