// triangular_solve on the GPU against the CPU backend (BLAS trsm): every side, triangle, diagonal
// and transpose_a, f32 and f64, with batch dims, on fresh random well-conditioned systems.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// A random [batch..., k, k] matrix with a dominant diagonal (both triangles filled: the solve must
// read only the one it is told to).
Literal triangularMatrix(const std::vector<int64_t>& shape, ElementType et) {
  Literal a = randomLiteral(Type::tensor(shape, et), -0.5, 0.5);
  const int64_t k = shape.back(), batches = a.numElements() / (k * k);
  for (int64_t b = 0; b < batches; ++b)
    for (int64_t i = 0; i < k; ++i) {
      const int64_t at = b * k * k + i * k + i;
      a.setDouble(at, (a.getDouble(at) < 0 ? -2.0 : 2.0) + a.getDouble(at));
    }
  return a;
}

TEST(CudaLinalg, TriangularSolveMatchesBlas) {
  WF_REQUIRE_GPU();
  for (ElementType et : {ElementType::kF32, ElementType::kF64})
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (bool unit : {false, true})
          for (const char* transpose : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
            const std::vector<int64_t> bShape = {2, 3, 7, 5};
            const int64_t k = left ? 7 : 5;
            const std::vector<int64_t> aShape = {2, 3, k, k};
            const std::string at = tensorType(aShape, et), bt = tensorType(bShape, et);
            const std::string text = "func.func @main(%a: " + at + ", %b: " + bt + ") -> " + bt +
                                     " {\n  %x = \"stablehlo.triangular_solve\"(%a, %b) {left_side = " +
                                     (left ? "true" : "false") + ", lower = " + (lower ? "true" : "false") +
                                     ", unit_diagonal = " + (unit ? "true" : "false") +
                                     ", transpose_a = #stablehlo<transpose " + transpose + ">} : (" + at + ", " +
                                     bt + ") -> " + bt + "\n  func.return %x : " + bt + "\n}\n";
            SCOPED_TRACE(text);
            Module m = parse(text);
            ASSERT_TRUE(mainOf(m));
            auto exe = cudaBackend().compile(m, *mainOf(m), {});
            ASSERT_TRUE(exe) << exe.status().toString();
            std::vector<Literal> args = {triangularMatrix(aShape, et), randomLiteral(Type::tensor(bShape, et), -1, 1)};
            auto want = runCpu(m, cloneAll(args));
            ASSERT_TRUE(want) << want.status().toString();
            auto got = (*exe)->run(args);
            ASSERT_TRUE(got) << got.status().toString();
            EXPECT_TRUE(got->report.hostFallbackOps.empty());
            const Tolerance tol = et == ElementType::kF32 ? Tolerance{1e-5, 1e-6} : Tolerance{1e-13, 1e-14};
            EXPECT_EQ(compareLiterals(got->outputs[0], (*want)[0], tol), "");
          }
}

TEST(CudaLinalg, NarrowAndComplexTriangularSolvesAreUnimplemented) {
  WF_REQUIRE_GPU();
  const std::string text = R"(func.func @main(%a: tensor<3x3xbf16>, %b: tensor<3x2xbf16>) -> tensor<3x2xbf16> {
  %x = "stablehlo.triangular_solve"(%a, %b) {left_side = true, lower = true, unit_diagonal = false, transpose_a = #stablehlo<transpose NO_TRANSPOSE>} : (tensor<3x3xbf16>, tensor<3x2xbf16>) -> tensor<3x2xbf16>
  func.return %x : tensor<3x2xbf16>
}
)";
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(exe.status().message().find("bf16"), std::string::npos) << exe.status().message();
}

}  // namespace
}  // namespace wf::cudatest
