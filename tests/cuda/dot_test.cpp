// dot_general and dot through cuBLASLt against the CPU backend: layouts that fold into the
// matrix descriptors (transposed, strided batches) and layouts that need a copy first; f32
// (true f32 unless TF32 is allowed), f64, f16 and bf16 (accumulating in f32).
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

struct DotCase {
  std::vector<int64_t> lhs, rhs;
  std::vector<int64_t> lb, rb, lc, rc;
};

std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

std::vector<int64_t> resultShape(const DotCase& c) {
  std::vector<int64_t> out;
  for (int64_t d : c.lb) out.push_back(c.lhs[static_cast<size_t>(d)]);
  auto addFree = [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& b, const std::vector<int64_t>& k) {
    for (int64_t d = 0; d < static_cast<int64_t>(shape.size()); ++d)
      if (std::find(b.begin(), b.end(), d) == b.end() && std::find(k.begin(), k.end(), d) == k.end())
        out.push_back(shape[static_cast<size_t>(d)]);
  };
  addFree(c.lhs, c.lb, c.lc);
  addFree(c.rhs, c.rb, c.rc);
  return out;
}

std::string dotProgram(const DotCase& c, ElementType in, ElementType out) {
  const std::string attrs = "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = " + list(c.lb) +
                            ", rhs_batching_dimensions = " + list(c.rb) + ", lhs_contracting_dimensions = " +
                            list(c.lc) + ", rhs_contracting_dimensions = " + list(c.rc) + ">";
  return oneOp("stablehlo.dot_general", {Type::tensor(c.lhs, in), Type::tensor(c.rhs, in)},
               Type::tensor(resultShape(c), out), attrs);
}

const std::vector<DotCase>& cases() {
  static const std::vector<DotCase> all = {
      {{37, 53}, {53, 29}, {}, {}, {1}, {0}},                         // plain
      {{53, 37}, {53, 29}, {}, {}, {0}, {0}},                         // lhs transposed
      {{37, 53}, {29, 53}, {}, {}, {1}, {1}},                         // rhs transposed
      {{53, 37}, {29, 53}, {}, {}, {0}, {1}},                         // both
      {{5, 37, 53}, {5, 53, 29}, {0}, {0}, {2}, {1}},                 // batched
      {{37, 5, 53}, {5, 53, 29}, {1}, {0}, {2}, {1}},                 // batch dim inside the lhs
      {{5, 53, 37}, {29, 5, 53}, {0}, {1}, {1}, {2}},                 // batch inside rhs, lhs transposed
      {{2, 3, 7, 11}, {2, 3, 11, 13}, {0, 1}, {0, 1}, {3}, {2}},      // two batch dims
      {{4, 3, 6, 5}, {3, 5, 7}, {}, {}, {1, 3}, {0, 1}},              // contracting dims not nested: copied
      {{6, 4, 5}, {5, 6, 3}, {}, {}, {0, 2}, {1, 0}},                 // contracting order differs: copied
      {{37, 53}, {53}, {}, {}, {1}, {0}},                             // matrix x vector
      {{53}, {53, 29}, {}, {}, {0}, {0}},                             // vector x matrix
      {{53}, {53}, {}, {}, {0}, {0}},                                 // inner product
      {{1, 64}, {64, 1}, {}, {}, {1}, {0}},                           // 1x1 result
      {{4, 0}, {0, 5}, {}, {}, {1}, {0}},                             // empty contraction: zeros
      {{3, 7, 9}, {3, 9, 1}, {0}, {0}, {2}, {1}},                     // batched matrix x vector
  };
  return all;
}

struct TypeCase {
  ElementType in, out;
  double relL2;
};

class CudaDot : public testing::TestWithParam<std::tuple<int, int>> {};

const std::vector<TypeCase>& typeCases() {
  static const std::vector<TypeCase> all = {
      // f32: small sums can cancel; F32IsTrueF32UnlessTf32IsAllowed checks the precision itself.
      {ElementType::kF32, ElementType::kF32, 1e-5},   {ElementType::kF64, ElementType::kF64, 1e-13},
      {ElementType::kF16, ElementType::kF16, 2e-3},   {ElementType::kBF16, ElementType::kBF16, 1e-2},
      {ElementType::kF16, ElementType::kF32, 2e-3},   {ElementType::kBF16, ElementType::kF32, 1e-2},
  };
  return all;
}

TEST_P(CudaDot, MatchesCpu) {
  WF_REQUIRE_GPU();
  const DotCase& c = cases()[static_cast<size_t>(std::get<0>(GetParam()))];
  const TypeCase& t = typeCases()[static_cast<size_t>(std::get<1>(GetParam()))];
  const std::string text = dotProgram(c, t.in, t.out);
  expectMatchesCpu(text, {randomLiteral(Type::tensor(c.lhs, t.in), -1, 1), randomLiteral(Type::tensor(c.rhs, t.in), -1, 1)},
                   Tolerance{0, 0, t.relL2});
}

INSTANTIATE_TEST_SUITE_P(Layouts, CudaDot,
                         testing::Combine(testing::Range(0, static_cast<int>(cases().size())),
                                          testing::Range(0, static_cast<int>(typeCases().size()))),
                         [](const auto& info) {
                           const TypeCase& t = typeCases()[static_cast<size_t>(std::get<1>(info.param))];
                           return "case" + std::to_string(std::get<0>(info.param)) + "_" + typeName(t.in) + "_" +
                                  typeName(t.out);
                         });

TEST(CudaDot, F32IsTrueF32UnlessTf32IsAllowed) {
  WF_REQUIRE_GPU();
  const DotCase c{{64, 4096}, {4096, 48}, {}, {}, {1}, {0}};
  const std::string text = dotProgram(c, ElementType::kF32, ElementType::kF32);
  const std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, ElementType::kF32), -1, 1),
                                     randomLiteral(Type::tensor(c.rhs, ElementType::kF32), -1, 1)};
  // TF32 keeps 10 mantissa bits: its error on a K=4096 product is ~1e-4..1e-3, f32's ~1e-7.
  expectMatchesCpu(text, args, Tolerance{0, 0, 1e-5});
  CompileOptions tf32;
  tf32.allowTf32 = true;
  expectMatchesCpu(text, args, Tolerance{0, 0, 5e-3}, tf32);
}

TEST(CudaDot, DotOpAndLargeMatmul) {
  WF_REQUIRE_GPU();
  const Type a = Type::tensor({7, 9}, ElementType::kF32), b = Type::tensor({9, 4}, ElementType::kF32);
  expectMatchesCpu(oneOp("stablehlo.dot", {a, b}, Type::tensor({7, 4}, ElementType::kF32)),
                   {randomLiteral(a, -1, 1), randomLiteral(b, -1, 1)}, Tolerance{0, 0, 1e-6});
  const DotCase big{{8, 256, 384}, {8, 384, 320}, {0}, {0}, {2}, {1}};
  expectMatchesCpu(dotProgram(big, ElementType::kBF16, ElementType::kBF16),
                   {randomLiteral(Type::tensor(big.lhs, ElementType::kBF16), -1, 1),
                    randomLiteral(Type::tensor(big.rhs, ElementType::kBF16), -1, 1)},
                   Tolerance{0, 0, 1e-2});
}

// Integer products and sums wrap in the result type; f32 operands with an f64 result multiply and
// sum in f64. Neither has a cuBLASLt kernel: a direct kernel runs them (dot_direct.cu).
TEST(CudaDot, IntegerAndF32ToF64DotsMatchCpu) {
  WF_REQUIRE_GPU();
  const std::vector<DotCase> cases = {
      {{4, 5}, {5, 6}, {}, {}, {1}, {0}},
      {{3, 4, 2, 5}, {3, 5, 7, 4}, {0}, {0}, {1, 3}, {3, 1}},  // two contracting dims, in other orders
      {{2, 6, 3}, {3, 2, 6}, {0}, {1}, {2}, {0}},              // batch dims at different positions
  };
  for (const DotCase& c : cases) {
    for (ElementType t : {ElementType::kSI8, ElementType::kSI32, ElementType::kSI64, ElementType::kUI16}) {
      // Full-range values: products and sums overflow and must wrap as on the CPU.
      std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, t), 1, 0), randomLiteral(Type::tensor(c.rhs, t), 1, 0)};
      expectMatchesCpu(dotProgram(c, t, t), args, Tolerance{});
    }
    std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, ElementType::kF32)),
                                 randomLiteral(Type::tensor(c.rhs, ElementType::kF32))};
    expectMatchesCpu(dotProgram(c, ElementType::kF32, ElementType::kF64), args, Tolerance{1e-12, 1e-12});
  }
}

TEST(CudaDot, BooleanDotIsUnimplemented) {
  WF_REQUIRE_GPU();
  const DotCase c{{4, 5}, {5, 6}, {}, {}, {1}, {0}};
  Module m = parse(dotProgram(c, ElementType::kI1, ElementType::kI1));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(exe.status().message().find("stablehlo.dot_general"), std::string::npos) << exe.status().message();
}

}  // namespace
}  // namespace wf::cudatest
