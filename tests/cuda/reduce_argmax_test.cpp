// The two-operand argmax/argmin reduce (the body JAX emits for jax.lax.argmax/argmin) on the GPU
// against the CPU interpreter: many ties (the smaller index wins), NaNs (the first NaN wins),
// inner, outer, middle and several reduced dims, zero-size reductions, i32 and i64 indices,
// float and integer values; and a two-operand body that is not argmax stays unimplemented.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string scalar(ElementType t) { return Type::tensor({}, t).toString(); }

std::string argProgram(const std::vector<int64_t>& shape, const std::vector<int64_t>& dims, ElementType vt,
                       ElementType it, bool argmax, bool nanTest, int64_t iotaDim) {
  std::vector<int64_t> outShape;
  for (size_t d = 0; d < shape.size(); ++d)
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end()) outShape.push_back(shape[d]);
  const std::string in = Type::tensor(shape, vt).toString(), idx = Type::tensor(shape, it).toString(),
                    outV = Type::tensor(outShape, vt).toString(), outI = Type::tensor(outShape, it).toString(),
                    sv = scalar(vt), si = scalar(it);
  const std::string ct = isFloat(vt) ? "FLOAT" : isUnsignedInteger(vt) ? "UNSIGNED" : "SIGNED";
  const std::string cmp = " : (" + sv + ", " + sv + ") -> tensor<i1>\n";
  std::string dimList;
  for (size_t i = 0; i < dims.size(); ++i) dimList += (i ? ", " : "") + std::to_string(dims[i]);
  std::string body = "    %0 = stablehlo.compare " + std::string(argmax ? "GT" : "LT") + ", %v1, %v2, " + ct + cmp;
  if (nanTest)
    body += "    %1 = stablehlo.compare NE, %v1, %v1, " + ct + cmp + "    %2 = stablehlo.or %0, %1 : tensor<i1>\n";
  const std::string p = nanTest ? "%2" : "%0";
  body += "    %3 = stablehlo.compare EQ, %v1, %v2, " + ct + cmp;
  body += "    %4 = stablehlo.compare LT, %i1, %i2, SIGNED : (" + si + ", " + si + ") -> tensor<i1>\n";
  body += "    %5 = stablehlo.and %3, %4 : tensor<i1>\n";
  body += "    %6 = stablehlo.or " + p + ", %5 : tensor<i1>\n";
  body += "    %7 = stablehlo.select " + p + ", %v1, %v2 : tensor<i1>, " + sv + "\n";
  body += "    %8 = stablehlo.select %6, %i1, %i2 : tensor<i1>, " + si + "\n";
  body += "    stablehlo.return %7, %8 : " + sv + ", " + si + "\n";
  return "func.func @main(%x: " + in + ", %iv: " + sv + ", %ii: " + si + ") -> (" + outV + ", " + outI + ") {\n" +
         "  %iota = stablehlo.iota dim = " + std::to_string(iotaDim) + " : " + idx + "\n" +
         "  %r:2 = \"stablehlo.reduce\"(%x, %iota, %iv, %ii) ({\n" + "  ^bb0(%v1: " + sv + ", %i1: " + si +
         ", %v2: " + sv + ", %i2: " + si + "):\n" + body + "  }) {dimensions = array<i64: " + dimList + ">} : (" +
         in + ", " + idx + ", " + sv + ", " + si + ") -> (" + outV + ", " + outI + ")\n" +
         "  func.return %r#0, %r#1 : " + outV + ", " + outI + "\n}\n";
}

struct ArgLayout {
  std::vector<int64_t> shape, dims;
};

class CudaArgReduce : public testing::TestWithParam<std::tuple<ElementType, ElementType>> {};

TEST_P(CudaArgReduce, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [vt, it] = GetParam();
  const std::vector<ArgLayout> layouts = {{{7, 300}, {1}},     {{300, 7}, {0}},   {{5, 33, 9}, {1}},
                                          {{100003}, {0}},     {{2, 0, 3}, {1}},  {{1, 1}, {1}},
                                          {{4, 6, 10}, {0, 2}}, {{9, 70}, {0, 1}}};
  for (const ArgLayout& l : layouts) {
    // One reduced dim: the iota walks it, so NaNs may appear (the first NaN wins on both).
    const bool single = l.dims.size() == 1;
    const int64_t iotaDim = l.dims.back();
    for (bool argmax : {true, false}) {
      for (int trial = 0; trial < 2; ++trial) {
        const Type in = Type::tensor(l.shape, vt);
        SCOPED_TRACE(in.toString() + (argmax ? " argmax" : " argmin") + " trial " + std::to_string(trial));
        Literal x = randomLiteral(in, -3, 3);
        for (int64_t i = 0; i < x.numElements(); ++i) {
          if (isFloat(vt)) x.setDouble(i, std::round(x.getDouble(i)));
          if (isFloat(vt) && single && rng()() % 97 == 0) x.setDouble(i, std::nan(""));
        }
        Literal iv = Literal::zeros(Type::tensor({}, vt)), ii = Literal::zeros(Type::tensor({}, it));
        if (trial == 0) {
          if (isFloat(vt)) iv.setDouble(0, argmax ? -INFINITY : INFINITY);
          else iv.setInt(0, argmax ? (isUnsignedInteger(vt) ? 0 : -4) : 4);
        } else {
          iv = randomLiteral(Type::tensor({}, vt), -3, 3);
          if (isFloat(vt)) iv.setDouble(0, std::round(iv.getDouble(0)));
          ii.setInt(0, 5);
        }
        const std::string text = argProgram(l.shape, l.dims, vt, it, argmax, isFloat(vt) || trial == 0, iotaDim);
        expectMatchesCpu(text, {x, iv, ii}, Tolerance{});
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Types, CudaArgReduce,
                         testing::Combine(testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                                                          ElementType::kF64, ElementType::kSI32, ElementType::kSI8,
                                                          ElementType::kSI64, ElementType::kUI16),
                                          testing::Values(ElementType::kSI32, ElementType::kSI64)),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_idx_" + typeName(std::get<1>(info.param));
                         });

// Another two-operand body is no argmax: it runs on the kernel generated around the body
// (region_kernels.h).
TEST(CudaArgReduceBodies, OtherTwoOperandBodyRunsOnTheGeneratedKernel) {
  WF_REQUIRE_GPU();
  // A pairwise sum of two operands: not argmax/argmin.
  const std::string text =
      "func.func @main(%x: tensor<4x5xf32>, %y: tensor<4x5xf32>, %a: tensor<f32>, %b: tensor<f32>) -> "
      "(tensor<4xf32>, tensor<4xf32>) {\n"
      "  %r:2 = \"stablehlo.reduce\"(%x, %y, %a, %b) ({\n"
      "  ^bb0(%p: tensor<f32>, %q: tensor<f32>, %s: tensor<f32>, %t: tensor<f32>):\n"
      "    %0 = stablehlo.add %p, %s : tensor<f32>\n"
      "    %1 = stablehlo.add %q, %t : tensor<f32>\n"
      "    stablehlo.return %0, %1 : tensor<f32>, tensor<f32>\n"
      "  }) {dimensions = array<i64: 1>} : (tensor<4x5xf32>, tensor<4x5xf32>, tensor<f32>, tensor<f32>) -> "
      "(tensor<4xf32>, tensor<4xf32>)\n"
      "  func.return %r#0, %r#1 : tensor<4xf32>, tensor<4xf32>\n}\n";
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m));
  auto exe = cudaBackend().compile(m, *mainOf(m), CompileOptions{});
  ASSERT_TRUE(exe) << exe.status().toString();
  const Type x = Type::tensor({4, 5}, ElementType::kF32), s = Type::tensor({}, ElementType::kF32);
  expectMatchesCpu(text, {randomLiteral(x), randomLiteral(x), randomLiteral(s), randomLiteral(s)}, Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest
