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

namespace wf::cudatest {
namespace {

struct GatherCase {
  std::vector<int64_t> operand, indices, result;
  std::string dims;  // the #stablehlo.gather<...> fields
  std::vector<int64_t> sliceSizes;
  int64_t indexBound;  // indices drawn from [-2, indexBound]
};

std::string sizes(const std::vector<int64_t>& v) {
  std::string s;
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s;
}

class CudaGather : public testing::TestWithParam<std::tuple<int, ElementType>> {};

const std::vector<GatherCase>& gatherCases() {
  static const std::vector<GatherCase> all = {
      // Embedding lookup: rows of a [50, 16] table by a [4, 7] index tensor (implicit index dim).
      {{50, 16}, {4, 7}, {4, 7, 16},
       "offset_dims = [2], collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 2", {1, 16}, 53},
      // torch.gather-like: 2-d indices into a 3-d operand, windows of 2x3.
      {{5, 6, 7}, {4, 2}, {4, 2, 3, 7},
       "offset_dims = [1, 2, 3], start_index_map = [0, 1], index_vector_dim = 1", {2, 3, 7}, 6},
      // Index vector dim first, collapsed middle dim.
      {{8, 9, 3}, {2, 5}, {5, 8, 3},
       "offset_dims = [1, 2], collapsed_slice_dims = [1], start_index_map = [1, 0], index_vector_dim = 0", {8, 1, 3}, 9},
      // Batching dims (operand dim 0 pairs with indices dim 0).
      {{3, 10, 4}, {3, 6, 1}, {3, 6, 4},
       "offset_dims = [2], collapsed_slice_dims = [1], operand_batching_dims = [0], start_indices_batching_dims = [0], "
       "start_index_map = [1], index_vector_dim = 2",
       {1, 1, 4}, 11},
  };
  return all;
}

TEST_P(CudaGather, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [index, it] = GetParam();
  const GatherCase& c = gatherCases()[static_cast<size_t>(index)];
  const ElementType et = ElementType::kF32;
  const Type operand = Type::tensor(c.operand, et), indices = Type::tensor(c.indices, it),
             result = Type::tensor(c.result, et);
  const std::string attrs = "dimension_numbers = #stablehlo.gather<" + c.dims + ">, slice_sizes = array<i64: " +
                            sizes(c.sliceSizes) + ">, indices_are_sorted = false";
  for (int trial = 0; trial < 3; ++trial)
    expectMatchesCpu(oneOp("stablehlo.gather", {operand, indices}, result, attrs),
                     {randomLiteral(operand), randomLiteral(indices, isUnsignedInteger(it) ? 0 : -2, c.indexBound)},
                     Tolerance{});
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaGather,
                         testing::Combine(testing::Range(0, static_cast<int>(gatherCases().size())),
                                          testing::Values(ElementType::kSI32, ElementType::kSI64, ElementType::kUI16)),
                         [](const auto& info) {
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" +
                                  typeName(std::get<1>(info.param));
                         });

TEST(CudaGather, EveryElementTypeMovesAsBytes) {
  WF_REQUIRE_GPU();
  for (ElementType et : gpuTypes()) {
    const Type operand = Type::tensor({20, 3}, et), indices = Type::tensor({6}, ElementType::kSI32),
               result = Type::tensor({6, 3}, et);
    expectMatchesCpu(oneOp("stablehlo.gather", {operand, indices}, result,
                           "dimension_numbers = #stablehlo.gather<offset_dims = [1], collapsed_slice_dims = [0], "
                           "start_index_map = [0], index_vector_dim = 1>, slice_sizes = array<i64: 1, 3>"),
                     {randomLiteral(operand, 1, 0), randomLiteral(indices, -1, 21)}, Tolerance{});
  }
}

}  // namespace
}  // namespace wf::cudatest
