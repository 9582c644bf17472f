// chlo.ragged_dot on the direct kernel (ragged_dot.cu) against the CPU backend: the three modes
// (ragged free dim, ragged contracting dim, ragged batch dim), batch dims, dims in other orders,
// group_sizes with leading dims, and random group sizes with empty groups and sums short of the
// ragged dim (those rows give 0) or past it; f32, f64, f16 and bf16 (summed in f32), integers.
#include "on_gpu_util.h"

namespace wf::cudatest {
namespace {

struct RaggedCase {
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> lb, rb, lc, rc;
  int64_t ragged;               // lhs ragged dim
  int64_t group;                // rhs group dim, -1 for none
  std::vector<int64_t> sizes;   // group_sizes' shape: [prefix..., groups]
};

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

bool contains(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

// [groups (ragged contracting dim)], batch, lhs free, rhs free without the group dim.
std::vector<int64_t> resultShape(const RaggedCase& c) {
  std::vector<int64_t> out;
  if (contains(c.lc, c.ragged)) out.push_back(c.sizes.back());
  for (int64_t d : c.lb) out.push_back(c.lhs[static_cast<size_t>(d)]);
  for (int64_t d = 0; d < static_cast<int64_t>(c.lhs.size()); ++d)
    if (!contains(c.lb, d) && !contains(c.lc, d)) out.push_back(c.lhs[static_cast<size_t>(d)]);
  for (int64_t d = 0; d < static_cast<int64_t>(c.rhs.size()); ++d)
    if (!contains(c.rb, d) && !contains(c.rc, d) && d != c.group) out.push_back(c.rhs[static_cast<size_t>(d)]);
  return out;
}

std::string raggedProgram(const RaggedCase& c, ElementType in, ElementType out, ElementType sizeType) {
  const std::string attrs =
      "ragged_dot_dimension_numbers = #chlo.ragged_dot<lhs_batching_dimensions = " + list(c.lb) +
      ", rhs_batching_dimensions = " + list(c.rb) + ", lhs_contracting_dimensions = " + list(c.lc) +
      ", rhs_contracting_dimensions = " + list(c.rc) + ", lhs_ragged_dimensions = " + list({c.ragged}) +
      ", rhs_group_dimensions = " + (c.group < 0 ? std::string("[]") : list({c.group})) + ">";
  return oneOp("chlo.ragged_dot",
               {Type::tensor(c.lhs, in), Type::tensor(c.rhs, in), Type::tensor(c.sizes, sizeType)},
               Type::tensor(resultShape(c), out), attrs);
}

// Random group sizes for each row of group_sizes: one group forced empty, the sizes summing to at
// most the ragged dim (often less, leaving rows in no group), and now and then past it.
Literal randomGroupSizes(const RaggedCase& c, ElementType sizeType) {
  Literal l = Literal::zeros(Type::tensor(c.sizes, sizeType));
  const int64_t groups = c.sizes.back(), extent = c.lhs[static_cast<size_t>(c.ragged)];
  auto& g = rng();
  for (int64_t row = 0; row < l.numElements(); row += groups) {
    const bool pastTheEnd = g() % 4 == 0;
    int64_t left = pastTheEnd ? extent + 3 : std::uniform_int_distribution<int64_t>(0, extent)(g);
    const int64_t empty = std::uniform_int_distribution<int64_t>(0, groups - 1)(g);
    for (int64_t k = 0; k < groups; ++k) {
      int64_t size = k == empty ? 0 : std::uniform_int_distribution<int64_t>(0, left)(g);
      if (k == groups - 1 && k != empty) size = left;  // the last group takes what is left
      l.setInt(row + k, size);
      left -= size;
    }
  }
  return l;
}

const std::vector<RaggedCase>& cases() {
  static const std::vector<RaggedCase> all = {
      // Ragged free dim (mode 1): rows of group g multiply rhs[g].
      {{11, 5}, {3, 5, 7}, {}, {}, {1}, {1}, 0, 0, {3}},                  // plain
      {{5, 11}, {5, 4, 7}, {}, {}, {0}, {0}, 1, 1, {4}},                  // lhs transposed, group dim inside rhs
      {{2, 9, 5}, {3, 2, 5, 4}, {0}, {1}, {2}, {2}, 1, 0, {3}},           // batch dim
      {{2, 9, 5}, {3, 2, 5, 4}, {0}, {1}, {2}, {2}, 1, 0, {2, 3}},        // one grouping per batch
      {{6, 8, 5}, {5, 4, 3}, {}, {}, {2}, {0}, 1, 2, {6, 3}},             // one grouping per leading free row
      {{3, 4, 7, 2}, {4, 3, 2, 6}, {1}, {0}, {3}, {2}, 2, 1, {3, 4, 3}},  // batch and free dims before the ragged one
      // Ragged contracting dim (mode 2): result [groups, ...], each group its own slice of k.
      {{11, 5}, {11, 7}, {}, {}, {0}, {0}, 0, -1, {3}},                   // plain
      {{2, 11, 5}, {2, 11, 7}, {0}, {0}, {1}, {1}, 1, -1, {3}},           // batch dim
      {{2, 11, 5}, {2, 11, 7}, {0}, {0}, {1}, {1}, 1, -1, {2, 3}},        // one grouping per batch
      {{4, 10, 3}, {10, 3, 6}, {}, {}, {1, 2}, {0, 1}, 1, -1, {4, 3}},    // two contracting dims
      {{5, 9}, {6, 9}, {}, {}, {1}, {1}, 1, -1, {5, 4}},                  // rhs transposed, per-row groupings
      // Ragged batch dim (mode 3): an ordinary dot; batches past the groups are 0.
      {{5, 4, 6}, {5, 6, 3}, {0}, {0}, {2}, {1}, 0, -1, {3}},
      {{4, 5, 6}, {6, 5, 3}, {1}, {1}, {2}, {0}, 1, -1, {4, 3}},          // batch dim inside, per-row groupings
  };
  return all;
}

using TypeCase = DotTypeCase;

// The dot tests' float types, and f32 operands summed into an f64 result.
const std::vector<TypeCase>& typeCases() {
  static const std::vector<TypeCase> all = [] {
    std::vector<TypeCase> t = floatDotTypes();
    t.push_back({ElementType::kF32, ElementType::kF64, 1e-12});
    return t;
  }();
  return all;
}

class CudaRaggedDot : public testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CudaRaggedDot, MatchesCpu) {
  WF_REQUIRE_GPU();
  const RaggedCase& c = cases()[static_cast<size_t>(std::get<0>(GetParam()))];
  const TypeCase& t = typeCases()[static_cast<size_t>(std::get<1>(GetParam()))];
  // Several draws of group sizes, each of its own index type.
  for (ElementType sizeType : {ElementType::kSI64, ElementType::kSI32, ElementType::kUI16}) {
    SCOPED_TRACE("group_sizes " + typeName(sizeType));
    expectOnGpuMatchesCpu(raggedProgram(c, t.in, t.out, sizeType),
                          {randomLiteral(Type::tensor(c.lhs, t.in), -1, 1), randomLiteral(Type::tensor(c.rhs, t.in), -1, 1),
                           randomGroupSizes(c, sizeType)},
                          Tolerance{0, 0, t.relL2});
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, CudaRaggedDot,
                         testing::Combine(testing::Range(0, static_cast<int>(cases().size())),
                                          testing::Range(0, static_cast<int>(typeCases().size()))),
                         [](const auto& info) {
                           const TypeCase& t = typeCases()[static_cast<size_t>(std::get<1>(info.param))];
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" + typeName(t.in) + "_" +
                                  typeName(t.out);
                         });

// Integer products and sums wrap in the result type, as on the CPU (full-range values, so that they
// overflow).
TEST(CudaRaggedDot, IntegersWrapAsOnTheCpu) {
  WF_REQUIRE_GPU();
  const std::vector<std::pair<ElementType, ElementType>> types = {
      {ElementType::kSI32, ElementType::kSI32}, {ElementType::kSI8, ElementType::kSI32},
      {ElementType::kUI16, ElementType::kSI64}, {ElementType::kSI64, ElementType::kSI16}};
  for (const RaggedCase& c : cases())
    for (const auto& [in, out] : types) {
      SCOPED_TRACE(typeName(in) + " -> " + typeName(out));
      expectOnGpuMatchesCpu(raggedProgram(c, in, out, ElementType::kSI32),
                            {randomLiteral(Type::tensor(c.lhs, in), 1, 0), randomLiteral(Type::tensor(c.rhs, in), 1, 0),
                             randomGroupSizes(c, ElementType::kSI32)},
                            Tolerance{});
    }
}

// Zero groups: a ragged free dim gives all zeros, a ragged contracting dim an empty result.
TEST(CudaRaggedDot, NoGroups) {
  WF_REQUIRE_GPU();
  for (const RaggedCase& c : {RaggedCase{{7, 5}, {0, 5, 3}, {}, {}, {1}, {1}, 0, 0, {0}},
                              RaggedCase{{7, 5}, {7, 3}, {}, {}, {0}, {0}, 0, -1, {0}}}) {
    expectOnGpuMatchesCpu(raggedProgram(c, ElementType::kF32, ElementType::kF32, ElementType::kSI64),
                          {randomLiteral(Type::tensor(c.lhs, ElementType::kF32), -1, 1),
                           randomLiteral(Type::tensor(c.rhs, ElementType::kF32), -1, 1),
                           Literal::zeros(Type::tensor(c.sizes, ElementType::kSI64))},
                          Tolerance{1e-6, 1e-6});
  }
}

}  // namespace
}  // namespace wf::cudatest
