// dot_general and dot through cuBLASLt against the CPU backend: layouts that fold into the
// matrix descriptors (transposed, strided batches) and layouts that need a copy first; f32
// (true f32 unless TF32 is allowed), f64, f16 and bf16 (accumulating in f32); the `algorithm`
// attribute; integers of any widths on the direct kernel.
#include "on_gpu_util.h"

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

// `algorithm`: the body of a #stablehlo.dot_algorithm, or "" for none.
std::string dotProgram(const DotCase& c, ElementType in, ElementType out, const std::string& algorithm = "") {
  std::string attrs = "dot_dimension_numbers = #stablehlo.dot<lhs_batching_dimensions = " + list(c.lb) +
                      ", rhs_batching_dimensions = " + list(c.rb) + ", lhs_contracting_dimensions = " +
                      list(c.lc) + ", rhs_contracting_dimensions = " + list(c.rc) + ">";
  if (!algorithm.empty())
    attrs += ", precision_config = [#stablehlo<precision DEFAULT>, #stablehlo<precision DEFAULT>], algorithm = "
             "#stablehlo.dot_algorithm<" + algorithm + ">";
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

using TypeCase = DotTypeCase;

class CudaDot : public testing::TestWithParam<std::tuple<int, int>> {};

const std::vector<TypeCase>& typeCases() { return floatDotTypes(); }

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
  CompileOptions convolutionsOnly;  // TF32 for convolutions leaves products true f32
  convolutionsOnly.allowTf32Convolutions = true;
  expectMatchesCpu(text, args, Tolerance{0, 0, 1e-5}, convolutionsOnly);
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

// Integer operands with a result of another width (si8 x si8 -> si32, the quantized matmul):
// operands widened by their own signedness, products and sums wrapping in the result type, as on
// the CPU. Full-range values, so that sums overflow narrow results.
TEST(CudaDot, MixedWidthIntegerDotsMatchCpu) {
  WF_REQUIRE_GPU();
  const std::vector<DotCase> cases = {
      {{37, 53}, {53, 29}, {}, {}, {1}, {0}},                  // plain
      {{53, 37}, {29, 53}, {}, {}, {0}, {1}},                  // both transposed
      {{3, 4, 2, 5}, {3, 5, 7, 4}, {0}, {0}, {1, 3}, {3, 1}},  // two contracting dims, in other orders
      {{2, 6, 3}, {3, 2, 6}, {0}, {1}, {2}, {0}},              // batch dims at different positions
      {{4, 0}, {0, 5}, {}, {}, {1}, {0}},                      // empty contraction: zeros
  };
  const std::vector<std::pair<ElementType, ElementType>> types = {
      {ElementType::kSI8, ElementType::kSI32},  {ElementType::kUI8, ElementType::kSI32},
      {ElementType::kSI16, ElementType::kSI32}, {ElementType::kSI8, ElementType::kSI64},
      {ElementType::kUI8, ElementType::kUI32},  {ElementType::kSI16, ElementType::kSI64},
      {ElementType::kUI16, ElementType::kSI64}, {ElementType::kSI32, ElementType::kSI8},  // narrowing wraps
      {ElementType::kUI32, ElementType::kUI64}, {ElementType::kSI64, ElementType::kSI16},
  };
  for (const DotCase& c : cases)
    for (const auto& [in, out] : types) {
      SCOPED_TRACE(typeName(in) + " -> " + typeName(out));
      expectOnGpuMatchesCpu(dotProgram(c, in, out),
                            {randomLiteral(Type::tensor(c.lhs, in), 1, 0), randomLiteral(Type::tensor(c.rhs, in), 1, 0)},
                            Tolerance{});
    }
}

// dot_algorithm bodies.
std::string algorithm(const std::string& precision, const std::string& accumulation, int components = 1,
                      int products = 1) {
  return "lhs_precision_type = " + precision + ", rhs_precision_type = " + precision + ", accumulation_type = " +
         accumulation + ", lhs_component_count = " + std::to_string(components) + ", rhs_component_count = " +
         std::to_string(components) + ", num_primitive_operations = " + std::to_string(products) +
         ", allow_imprecise_accumulation = false";
}

// The algorithm names the precision whatever CompileOptions::allowTf32 says: f32 x f32 -> f32 is
// true f32 with TF32 allowed, tf32 x tf32 -> f32 is TF32 without. The CPU computes everything in
// f32, so a rounding algorithm shows as that rounding's error against it.
TEST(CudaDot, AlgorithmSetsThePrecision) {
  WF_REQUIRE_GPU();
  const DotCase c{{64, 4096}, {4096, 48}, {}, {}, {1}, {0}};
  const std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, ElementType::kF32), -1, 1),
                                     randomLiteral(Type::tensor(c.rhs, ElementType::kF32), -1, 1)};
  CompileOptions tf32;
  tf32.allowTf32 = true;
  const ElementType f32 = ElementType::kF32;
  // True f32: ~1e-7 relative; TF32 (10 mantissa bits) ~1e-4..1e-3 on K = 4096; f16 alike (values
  // in [-1, 1] need no range); bf16 (7 bits) ~1e-3..1e-2.
  expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("f32", "f32")), args, Tolerance{0, 0, 1e-5}, tf32);
  expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("tf32", "f32")), args, Tolerance{0, 0, 5e-3});
  expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("f16", "f32")), args, Tolerance{0, 0, 5e-3});
  expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("bf16", "f32")), args, Tolerance{0, 0, 3e-2});
}

// The f32 and tf32 algorithms on every layout, through the in-place and the copied operands.
TEST(CudaDot, AlgorithmOnEveryLayout) {
  WF_REQUIRE_GPU();
  const ElementType f32 = ElementType::kF32;
  for (const DotCase& c : cases()) {
    const std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, f32), -1, 1),
                                       randomLiteral(Type::tensor(c.rhs, f32), -1, 1)};
    CompileOptions tf32;
    tf32.allowTf32 = true;
    // Per element, not by relative L2: a result of one element (the 1x1 case) may be a sum that
    // nearly cancels, whose relative error in true f32 is then far above 1e-5 in some summation
    // orders (the library's choice, timed per run). Absolute errors of true f32 sums of up to 64
    // products of [-1, 1] stay near 1e-6; TF32's are near 1e-3.
    expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("f32", "f32")), args, Tolerance{1e-5, 1e-5}, tf32);
    expectOnGpuMatchesCpu(dotProgram(c, f32, f32, algorithm("tf32", "f32")), args, Tolerance{0, 0, 5e-3});
  }
}

// Algorithms on narrow and wide storage types: f16/bf16 values are exact in f32 and tf32, so those
// algorithms are their usual f32 accumulation; f16 accumulation; f64; f32 operands with an f64
// result under the f64 algorithm; integers, which the algorithm does not round.
TEST(CudaDot, AlgorithmOnOtherElementTypes) {
  WF_REQUIRE_GPU();
  const DotCase c{{5, 37, 53}, {5, 53, 29}, {0}, {0}, {2}, {1}};
  auto args = [&](ElementType t, double lo = -1, double hi = 1) {
    return std::vector<Literal>{randomLiteral(Type::tensor(c.lhs, t), lo, hi), randomLiteral(Type::tensor(c.rhs, t), lo, hi)};
  };
  const ElementType f16 = ElementType::kF16, bf16 = ElementType::kBF16, f32 = ElementType::kF32, f64 = ElementType::kF64;
  for (const char* precision : {"f32", "tf32"}) {
    expectOnGpuMatchesCpu(dotProgram(c, f16, f32, algorithm(precision, "f32")), args(f16), Tolerance{0, 0, 1e-4});
    expectOnGpuMatchesCpu(dotProgram(c, bf16, f32, algorithm(precision, "f32")), args(bf16), Tolerance{0, 0, 1e-4});
    expectOnGpuMatchesCpu(dotProgram(c, f16, f16, algorithm(precision, "f32")), args(f16), Tolerance{0, 0, 2e-3});
  }
  expectOnGpuMatchesCpu(dotProgram(c, bf16, bf16, algorithm("bf16", "f32")), args(bf16), Tolerance{0, 0, 1e-2});
  expectOnGpuMatchesCpu(dotProgram(c, bf16, f32, algorithm("bf16", "f32")), args(bf16), Tolerance{0, 0, 1e-4});
  expectOnGpuMatchesCpu(dotProgram(c, f16, f32, algorithm("f16", "f32")), args(f16), Tolerance{0, 0, 1e-4});
  // f16 sums of 53 products of [-1, 1] values: a few f16 ulps of the result.
  expectOnGpuMatchesCpu(dotProgram(c, f16, f16, algorithm("f16", "f16")), args(f16), Tolerance{0, 0, 1e-2});
  expectOnGpuMatchesCpu(dotProgram(c, f64, f64, algorithm("f64", "f64")), args(f64), Tolerance{0, 0, 1e-13});
  expectOnGpuMatchesCpu(dotProgram(c, f32, f64, algorithm("f64", "f64")), args(f32), Tolerance{1e-12, 1e-12});
  for (ElementType t : {ElementType::kSI64, ElementType::kSI8})
    expectOnGpuMatchesCpu(dotProgram(c, t, ElementType::kSI64, algorithm("tf32", "f32")), args(t, 1, 0), Tolerance{});
}

// bf16_9x: cuBLASLt's emulation of f32 from bf16 components (cuBLAS 12.9 on), as accurate as f32.
// Where cuBLASLt has no kernel for it on this GPU, compile says so (never another precision).
TEST(CudaDot, Bf16x9AlgorithmIsF32AccurateOrUnsupported) {
  WF_REQUIRE_GPU();
  const DotCase c{{64, 4096}, {4096, 48}, {}, {}, {1}, {0}};
  const std::string text = dotProgram(c, ElementType::kF32, ElementType::kF32, algorithm("bf16", "f32", 3, 9));
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  if (!exe) {
    EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented) << exe.status().toString();
    GTEST_SKIP() << exe.status().toString();
  }
  expectOnGpuMatchesCpu(text, {randomLiteral(Type::tensor(c.lhs, ElementType::kF32), -1, 1),
                               randomLiteral(Type::tensor(c.rhs, ElementType::kF32), -1, 1)},
                        Tolerance{0, 0, 1e-5});
}

// Algorithms no CUDA kernel honours fail compile naming the op and the algorithm; with the host
// fallback allowed they run on the host (the CPU computes in full precision).
TEST(CudaDot, UnsupportedAlgorithmsFailOrFallBack) {
  WF_REQUIRE_GPU();
  const DotCase c{{7, 9}, {9, 4}, {}, {}, {1}, {0}};
  const ElementType f16 = ElementType::kF16, bf16 = ElementType::kBF16, f32 = ElementType::kF32, f64 = ElementType::kF64;
  struct Unsupported {
    ElementType in, out;
    std::string algorithm;
  };
  const std::vector<Unsupported> all = {
      {f32, f32, algorithm("bf16", "f32", 2, 3)},   // bf16_3x
      {f32, f32, algorithm("bf16", "f32", 3, 6)},   // bf16_6x
      {f32, f32, algorithm("tf32", "f32", 2, 3)},   // tf32_3x
      {bf16, bf16, algorithm("bf16", "bf16")},      // bf16 accumulation
      {bf16, f32, algorithm("f16", "f32")},         // bf16 values do not fit f16
      {f16, f32, algorithm("bf16", "f32")},         // f16 values do not fit bf16
      {f32, f32, algorithm("f64", "f64")},          // f64 products on an f32 matmul
      {f64, f64, algorithm("f32", "f32")},          // an f64 matmul rounded to f32
      {f32, f64, algorithm("tf32", "f32")},         // the direct f32 -> f64 kernel sums in f64
      {f32, f32, algorithm("f8E5M2", "f32")},
  };
  for (const Unsupported& u : all) {
    const std::string text = dotProgram(c, u.in, u.out, u.algorithm);
    SCOPED_TRACE(text);
    Module m = parse(text);
    auto exe = cudaBackend().compile(m, *mainOf(m), {});
    ASSERT_FALSE(exe);
    EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
    EXPECT_NE(exe.status().message().find("stablehlo.dot_general"), std::string::npos) << exe.status().message();
    EXPECT_NE(exe.status().message().find("algorithm"), std::string::npos) << exe.status().message();
    CompileOptions fallback;
    fallback.allowCpuFallback = true;
    const std::vector<Literal> args = {randomLiteral(Type::tensor(c.lhs, u.in), -1, 1),
                                       randomLiteral(Type::tensor(c.rhs, u.in), -1, 1)};
    Expected<RunResult> run = runCuda(m, args, fallback);
    ASSERT_TRUE(run) << run.status().toString();
    EXPECT_EQ(run->report.hostFallbackOps.size(), 1u);
  }
}

// The StableHLO interpreter test dot_general_op_test_algorithm, as written there.
TEST(CudaDot, InterpreterAlgorithmTestRunsOnTheGpu) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%lhs: tensor<2x2x2xi64>, %rhs: tensor<2x2x2xi64>) -> tensor<2x2x2xi64> {
  %result = stablehlo.dot_general %lhs, %rhs,
    batching_dims = [0] x [0],
    contracting_dims = [2] x [1],
    precision = [DEFAULT, DEFAULT],
    algorithm = <
      lhs_precision_type = tf32,
      rhs_precision_type = tf32,
      accumulation_type = f32,
      lhs_component_count = 1,
      rhs_component_count = 1,
      num_primitive_operations = 1,
      allow_imprecise_accumulation = false
    > : (tensor<2x2x2xi64>, tensor<2x2x2xi64>) -> tensor<2x2x2xi64>
  func.return %result : tensor<2x2x2xi64>
}
)";
  const Type t = Type::tensor({2, 2, 2}, ElementType::kSI64);
  expectOnGpuMatchesCpu(text, {randomLiteral(t, 1, 0), randomLiteral(t, 1, 0)}, Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest
