// CUDA reduce kernels against the CPU interpreter: sum, product, max, min, and, or over inner,
// outer (columns, also split into slices), middle (runs, also split) and all dims, on every element type they take.
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

std::string reduceProgram(const std::string& body, const Type& in, const std::vector<int64_t>& dims, const Type& out) {
  const std::string s = Type::tensor({}, in.elementType()).toString();
  std::string dimList;
  for (size_t i = 0; i < dims.size(); ++i) dimList += (i ? ", " : "") + std::to_string(dims[i]);
  return "func.func @main(%x: " + in.toString() + ", %init: " + s + ") -> " + out.toString() + " {\n" +
         "  %r = \"stablehlo.reduce\"(%x, %init) ({\n" +
         "  ^bb0(%a: " + s + ", %b: " + s + "):\n" +
         "    %c = \"stablehlo." + body + "\"(%a, %b) : (" + s + ", " + s + ") -> " + s + "\n" +
         "    \"stablehlo.return\"(%c) : (" + s + ") -> ()\n" +
         "  }) {dimensions = array<i64" + (dims.empty() ? "" : ": " + dimList) + ">} : (" + in.toString() + ", " + s + ") -> " + out.toString() +
         "\n  func.return %r : " + out.toString() + "\n}\n";
}

struct Layout {
  std::vector<int64_t> shape;
  std::vector<int64_t> dims;
};

std::vector<Layout> layouts() {
  return {{{7, 300}, {1}},          {{300, 7}, {0}},    {{5, 33, 9}, {1}},  {{5, 33, 9}, {0, 2}},
          {{4, 6, 10}, {0, 1, 2}},  {{100003}, {0}},    {{3, 5}, {}},       {{9, 5}, {1}},
          {{2, 0, 3}, {1}},         {{65, 2, 129}, {2, 0}},
          // Column reductions split into slices (reduceColumns with partials): a bias gradient's
          // shape, a middle dim reduced under a kept innermost one, leading dims reduced.
          {{3001, 70}, {0}},        {{2, 513, 40}, {1}}, {{40, 77, 33}, {0, 1}},
          // Runs (reduceRuns): a batch norm's statistics of NCHW, with runs longer and shorter
          // than a block, several reduced dims before the run, and a few channels whose runs
          // split into slices with partials.
          {{6, 20, 17, 19}, {0, 2, 3}}, {{32, 8, 7, 7}, {0, 2, 3}}, {{4, 5, 6, 7, 50}, {0, 2, 4}},
          {{64, 3, 40, 40}, {0, 2, 3}}};
}

class CudaReduce : public testing::TestWithParam<std::tuple<ElementType, std::string>> {};

TEST_P(CudaReduce, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [et, body] = GetParam();
  for (const Layout& l : layouts()) {
    std::vector<int64_t> outShape;
    for (size_t d = 0; d < l.shape.size(); ++d)
      if (std::find(l.dims.begin(), l.dims.end(), static_cast<int64_t>(d)) == l.dims.end()) outShape.push_back(l.shape[d]);
    const Type in = Type::tensor(l.shape, et), out = Type::tensor(outShape, et);
    SCOPED_TRACE(in.toString());
    const bool product = body == "multiply";
    // Products of values near 1 stay finite; sums of small integers stay exact.
    Literal x = isFloat(et) ? randomLiteral(in, product ? 0.995 : -2, product ? 1.005 : 2)
                            : randomLiteral(in, product ? -1 : -9, product ? 2 : 9);
    Literal init = randomLiteral(Type::tensor({}, et), -2, 2);
    const bool arithmetic = body == "add" || product;
    if (et == ElementType::kF16 || et == ElementType::kBF16) {
      if (arithmetic) {
        // The CPU rounds narrow floats after every step; the GPU accumulates in f32. Compare
        // with the f32 computation on the same (exactly widened) values.
        const Type in32 = Type::tensor(l.shape, ElementType::kF32), out32 = Type::tensor(outShape, ElementType::kF32);
        Literal x32 = Literal::zeros(in32), init32 = Literal::zeros(Type::tensor({}, ElementType::kF32));
        for (int64_t i = 0; i < x.numElements(); ++i) x32.setDouble(i, x.getDouble(i));
        init32.setDouble(0, init.getDouble(0));
        Module ref = parse(reduceProgram(body, in32, l.dims, out32));
        auto want = runCpu(ref, {x32, init32});
        ASSERT_TRUE(want) << want.status().toString();
        Module m = parse(reduceProgram(body, in, l.dims, out));
        std::vector<Literal> args = {x, init};
        auto got = runCuda(m, args);
        ASSERT_TRUE(got) << got.status().toString();
        Literal got32 = Literal::zeros(out32);
        for (int64_t i = 0; i < got32.numElements(); ++i) got32.setDouble(i, got->outputs[0].getDouble(i));
        EXPECT_EQ(compareLiterals(got32, (*want)[0], Tolerance{0, 0, et == ElementType::kBF16 ? 1e-2 : 2e-3}), "");
        continue;
      }
    }
    Tolerance tol = defaultTolerance(et);
    if (arithmetic && et == ElementType::kF32) tol = Tolerance{0, 0, 1e-4};
    if (arithmetic && et == ElementType::kF64) tol = Tolerance{0, 0, 1e-12};
    expectMatchesCpu(reduceProgram(body, in, l.dims, out), {x, init}, tol);
  }
}

std::vector<std::tuple<ElementType, std::string>> reduceCases() {
  std::vector<std::tuple<ElementType, std::string>> cases;
  for (ElementType t : gpuTypes()) {
    for (const char* body : {"add", "maximum", "minimum", "multiply"}) cases.emplace_back(t, body);
    if (!isFloat(t)) {
      cases.emplace_back(t, "and");
      cases.emplace_back(t, "or");
    }
  }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Bodies, CudaReduce, testing::ValuesIn(reduceCases()), [](const auto& info) {
  return typeName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
});

TEST(CudaReduce, MaxPropagatesNaN) {
  WF_REQUIRE_GPU();
  const Type in = Type::tensor({4, 64}, ElementType::kF32), out = Type::tensor({4}, ElementType::kF32);
  Literal x = randomLiteral(in);
  x.setDouble(70, std::nan(""));
  expectMatchesCpu(reduceProgram("maximum", in, {1}, out), {x, Literal::scalarDouble(ElementType::kF32, -INFINITY)});
}

// An argmax without the NaN test and the tie break is no body reduce.cu recognises: it runs on
// the kernel generated around the body (region_kernels.h), on the GPU.
TEST(CudaReduce, ArgmaxStyleTwoOperandReduceRunsOnTheGeneratedKernel) {
  WF_REQUIRE_GPU();
  const std::string text = R"(
func.func @main(%x: tensor<4x8xf32>, %i: tensor<4x8xi32>) -> tensor<4xf32> {
  %init = stablehlo.constant dense<0xFF800000> : tensor<f32>
  %zero = stablehlo.constant dense<0> : tensor<i32>
  %r:2 = "stablehlo.reduce"(%x, %i, %init, %zero) ({
  ^bb0(%a: tensor<f32>, %ai: tensor<i32>, %b: tensor<f32>, %bi: tensor<i32>):
    %gt = "stablehlo.compare"(%a, %b) {comparison_direction = #stablehlo<comparison_direction GT>} : (tensor<f32>, tensor<f32>) -> tensor<i1>
    %m = "stablehlo.select"(%gt, %a, %b) : (tensor<i1>, tensor<f32>, tensor<f32>) -> tensor<f32>
    %mi = "stablehlo.select"(%gt, %ai, %bi) : (tensor<i1>, tensor<i32>, tensor<i32>) -> tensor<i32>
    "stablehlo.return"(%m, %mi) : (tensor<f32>, tensor<i32>) -> ()
  }) {dimensions = array<i64: 1>} : (tensor<4x8xf32>, tensor<4x8xi32>, tensor<f32>, tensor<i32>) -> (tensor<4xf32>, tensor<4xi32>)
  func.return %r#0 : tensor<4xf32>
}
)";
  Module m = parse(text);
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_TRUE(exe) << exe.status().toString();
  const Type x = Type::tensor({4, 8}, ElementType::kF32), i = Type::tensor({4, 8}, ElementType::kSI32);
  expectMatchesCpu(text, {randomLiteral(x), randomLiteral(i, 0, 7)}, Tolerance{});
}

}  // namespace
}  // namespace wf::cudatest

namespace wf::cudatest {
namespace {

struct WindowCase {
  std::vector<int64_t> in, out, window, strides, dilation, padding;
};

std::string windowProgram(const std::string& body, const WindowCase& c, ElementType et) {
  const Type in = Type::tensor(c.in, et), out = Type::tensor(c.out, et);
  const std::string s = Type::tensor({}, et).toString();
  auto ints = [](const std::vector<int64_t>& v) {
    std::string r;
    for (size_t i = 0; i < v.size(); ++i) r += (i ? ", " : "") + std::to_string(v[i]);
    return r;
  };
  std::string pad = "dense<[";
  for (size_t d = 0; d < c.in.size(); ++d)
    pad += (d ? ", [" : "[") + std::to_string(c.padding[2 * d]) + ", " + std::to_string(c.padding[2 * d + 1]) + "]";
  pad += "]> : tensor<" + std::to_string(c.in.size()) + "x2xi64>";
  return "func.func @main(%x: " + in.toString() + ", %init: " + s + ") -> " + out.toString() + " {\n" +
         "  %r = \"stablehlo.reduce_window\"(%x, %init) ({\n" + "  ^bb0(%a: " + s + ", %b: " + s + "):\n" +
         "    %c = \"stablehlo." + body + "\"(%a, %b) : (" + s + ", " + s + ") -> " + s + "\n" +
         "    \"stablehlo.return\"(%c) : (" + s + ") -> ()\n" + "  }) {window_dimensions = array<i64: " + ints(c.window) +
         ">, window_strides = array<i64: " + ints(c.strides) + ">, window_dilations = array<i64: " + ints(c.dilation) +
         ">, padding = " + pad + "} : (" + in.toString() + ", " + s + ") -> " + out.toString() +
         "\n  func.return %r : " + out.toString() + "\n}\n";
}

class CudaReduceWindow : public testing::TestWithParam<std::tuple<ElementType, std::string>> {};

TEST_P(CudaReduceWindow, PoolingMatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [et, body] = GetParam();
  const std::vector<WindowCase> cases = {
      // ResNet's max pool: 3x3, stride 2, padding 1, NCHW.
      {{2, 3, 15, 16}, {2, 3, 8, 8}, {1, 1, 3, 3}, {1, 1, 2, 2}, {1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1}},
      // Windows apart over [C, H, W] (stride 3, windows 2 and 3), padding low on H and high on W.
      {{5, 11, 13}, {5, 4, 4}, {1, 2, 3}, {1, 3, 3}, {1, 1, 1}, {0, 0, 1, 0, 0, 1}},
      // 2x2 average-pool sum, NHWC (the window not on the last two dims).
      {{2, 10, 9, 4}, {2, 5, 4, 4}, {1, 2, 2, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, {0, 0, 0, 0, 0, 0, 0, 0}},
      // Dilated 1-d window with asymmetric padding (a causal running sum).
      {{3, 20}, {3, 20}, {1, 3}, {1, 1}, {1, 2}, {0, 0, 4, 0}},
  };
  for (const WindowCase& c : cases) {
    const Type in = Type::tensor(c.in, et);
    Literal init = body == "maximum" ? Literal::scalarDouble(et, -INFINITY) : Literal::zeros(Type::tensor({}, et));
    if (!isFloat(et)) init = randomLiteral(Type::tensor({}, et), -3, 3);
    Tolerance tol = defaultTolerance(et);
    if (isFloat(et) && body == "add") tol = Tolerance{0, 0, et == ElementType::kBF16 ? 2e-2 : 2e-3};
    expectMatchesCpu(windowProgram(body, c, et), {randomLiteral(in, -4, 4), init}, tol);
  }
}

INSTANTIATE_TEST_SUITE_P(Bodies, CudaReduceWindow,
                         testing::Combine(testing::Values(ElementType::kF32, ElementType::kBF16, ElementType::kF16,
                                                          ElementType::kF64, ElementType::kSI32, ElementType::kSI8),
                                          testing::Values(std::string("maximum"), std::string("add"))),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_" + std::get<1>(info.param);
                         });

}  // namespace
}  // namespace wf::cudatest
