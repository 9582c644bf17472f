// dynamic_slice and dynamic_update_slice on the GPU against the CPU interpreter: start indices
// in range, negative and past the end (clamped), of signed and unsigned index types.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

class CudaIndexing : public testing::TestWithParam<std::tuple<ElementType, ElementType>> {};

std::string scalarParams(int n, ElementType it, int first) {
  std::string s;
  for (int i = 0; i < n; ++i) s += ", %i" + std::to_string(first + i) + ": " + Type::tensor({}, it).toString();
  return s;
}

TEST_P(CudaIndexing, DynamicSliceAndUpdateSlice) {
  WF_REQUIRE_GPU();
  const auto& [et, it] = GetParam();
  const Type big = Type::tensor({7, 9, 4}, et), small = Type::tensor({3, 5, 4}, et), idx = Type::tensor({}, it);
  std::string ops, types;
  for (int i = 0; i < 3; ++i) {
    ops += ", %i" + std::to_string(i);
    types += ", " + idx.toString();
  }
  const std::string slice = "func.func @main(%x: " + big.toString() + scalarParams(3, it, 0) + ") -> " +
                            small.toString() + " {\n  %r = \"stablehlo.dynamic_slice\"(%x" + ops +
                            ") {slice_sizes = array<i64: 3, 5, 4>} : (" + big.toString() + types + ") -> " +
                            small.toString() + "\n  func.return %r : " + small.toString() + "\n}\n";
  const std::string update = "func.func @main(%x: " + big.toString() + ", %u: " + small.toString() +
                             scalarParams(3, it, 0) + ") -> " + big.toString() +
                             " {\n  %r = \"stablehlo.dynamic_update_slice\"(%x, %u" + ops + ") : (" + big.toString() +
                             ", " + small.toString() + types + ") -> " + big.toString() + "\n  func.return %r : " +
                             big.toString() + "\n}\n";
  const bool isUnsigned = isUnsignedInteger(it);
  for (int trial = 0; trial < 4; ++trial) {
    std::vector<Literal> starts;
    for (int d = 0; d < 3; ++d) starts.push_back(randomLiteral(idx, isUnsigned ? 0 : -3, 11));
    std::vector<Literal> sliceArgs = {randomLiteral(big, 1, 0)};
    std::vector<Literal> updateArgs = {randomLiteral(big, 1, 0), randomLiteral(small, 1, 0)};
    for (const Literal& s : starts) {
      sliceArgs.push_back(s);
      updateArgs.push_back(s);
    }
    expectMatchesCpu(slice, sliceArgs, Tolerance{});
    expectMatchesCpu(update, updateArgs, Tolerance{});
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaIndexing,
                         testing::Combine(testing::Values(ElementType::kI1, ElementType::kSI8, ElementType::kBF16,
                                                          ElementType::kF32, ElementType::kSI64, ElementType::kF64),
                                          testing::Values(ElementType::kSI32, ElementType::kSI64, ElementType::kUI8)),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_idx_" + typeName(std::get<1>(info.param));
                         });

}  // namespace
}  // namespace wf::cudatest
