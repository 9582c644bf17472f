// A linear layer's product and bias add under bf16 (f16), as the exporter writes PyTorch's Linear:
// the product rounded to T, widened, the bias added in f32, rounded to T. The planner runs the
// pair as one cuBLASLt matmul with the bias epilogue (kernels/dot.h); it must give the bits of
// the two steps it replaces (the product, then the generated bias kernel), or where cuBLASLt's
// kernel leaves out the product's rounding, differ from them by no more than that rounding, and
// match the CPU interpreter. Shapes are off every tile size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <iostream>
#include <string>
#include <vector>

#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernels/dot_gelu.h"
#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

// A unit in the last place of T (bf16 or f16) at |v|.
double unitOf(ElementType t, double v) {
  const int mantissaBits = t == ElementType::kBF16 ? 7 : 10;
  return v == 0 ? 0.0 : std::ldexp(1.0, std::ilogb(v) - mantissaBits);
}

// The program compiled as planned (with the epilogue where it is offered) and with fusion off
// (the two steps), run on the same arguments.
struct PlannedAndUnfused {
  ExecutableStats stats;
  RunResult planned, unfused;
};
Expected<PlannedAndUnfused> runPlannedAndUnfused(const Module& mod, const std::vector<Literal>& args) {
  WF_ASSIGN_OR_RETURN(std::unique_ptr<Executable> exe, cudaBackend().compile(mod, *mainOf(mod), {}));
  PlannedAndUnfused r;
  r.stats = exe->stats();
  WF_ASSIGN_OR_RETURN(r.planned, exe->run(args));
  CompileOptions unfused;
  unfused.fuse = false;
  WF_ASSIGN_OR_RETURN(r.unfused, runCuda(mod, args, unfused));
  return r;
}

// "" if every element of `got` (an epilogue's result) is within what leaving out the product's
// rounding to T can change of `want` (the two steps'): half a unit in the last place of the
// product, where |product| is about |want| + |bias| (of the element's column; the last dim), so a
// whole one of that for safety, plus one unit in the last place of the result; else the first
// element that is not.
std::string withinTheProductsRounding(const Literal& got, const Literal& want, const Literal& bias) {
  if (got.type() != want.type()) return "types differ";
  auto ulp = [&](double x) { return unitOf(got.elementType(), x); };
  const int64_t n = bias.numElements();
  for (int64_t i = 0; i < got.numElements(); ++i) {
    const double g = got.getDouble(i), w = want.getDouble(i), b = bias.getDouble(i % n);
    const double bound = ulp(std::fabs(w) + std::fabs(b)) + ulp(std::max(std::fabs(w), std::fabs(g)));
    if (!(std::fabs(g - w) <= bound))
      return "element " + std::to_string(i) + ": " + std::to_string(g) + " against " + std::to_string(w) +
             " (bound " + std::to_string(bound) + ")";
  }
  return "";
}

// Three linear layers: the bias of T widened in the program (%y), which runs as the epilogue; an
// f32 bias (%z) and a bias add followed by a ReLU (%r), which do not. Each reads an input of its own,
// so that the backend does not merge the three products into one (transforms/merge_products.h).
std::string linearLayers(ElementType t) {
  const std::string T = typeName(t);
  auto ty = [&](const std::string& dims, const std::string& e) { return "tensor<" + dims + "x" + e + ">"; };
  const std::string x = ty("2x37x53", T), x2 = ty("74x53", T), w = ty("29x53", T), b = ty("29", T),
                    bf = ty("29", "f32"), p = ty("74x29", T), pf = ty("74x29", "f32"), y = ty("2x37x29", T);
  auto linear = [&](const std::string& name, const std::string& input, const std::string& weight,
                    const std::string& bias, const std::string& biasType) {
    std::string s = "  %" + name + "p = \"stablehlo.dot_general\"(%" + input + ", %" + weight +
                    ") {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = [1], "
                    "rhs_contracting_dimensions = [1]>} : (" + x2 + ", " + w + ") -> " + p + "\n";
    s += "  %" + name + "pf = \"stablehlo.convert\"(%" + name + "p) : (" + p + ") -> " + pf + "\n";
    std::string b32 = bias;
    if (biasType != bf) {
      s += "  %" + name + "bw = \"stablehlo.convert\"(%" + bias + ") : (" + biasType + ") -> " + bf + "\n";
      b32 = name + "bw";
    }
    s += "  %" + name + "bb = \"stablehlo.broadcast_in_dim\"(%" + b32 +
         ") {broadcast_dimensions = array<i64: 1>} : (" + bf + ") -> " + pf + "\n";
    s += "  %" + name + "s = \"stablehlo.add\"(%" + name + "pf, %" + name + "bb) : (" + pf + ", " + pf + ") -> " + pf +
         "\n";
    return s;
  };
  std::string s = "func.func @main(%x: " + x + ", %xz: " + x2 + ", %xr: " + x2 + ", %w1: " + w + ", %w2: " + w +
                  ", %w3: " + w + ", %b: " + b + ", %bf: " + bf + ") -> (" + y + ", " + p + ", " + p + ") {\n";
  s += "  %x2 = \"stablehlo.reshape\"(%x) : (" + x + ") -> " + x2 + "\n";
  s += linear("y", "x2", "w1", "b", b);
  s += "  %yn = \"stablehlo.convert\"(%ys) : (" + pf + ") -> " + p + "\n";
  s += "  %y = \"stablehlo.reshape\"(%yn) : (" + p + ") -> " + y + "\n";
  s += linear("z", "xz", "w2", "bf", bf);
  s += "  %z = \"stablehlo.convert\"(%zs) : (" + pf + ") -> " + p + "\n";
  s += linear("r", "xr", "w3", "b", b);
  s += "  %zero = \"stablehlo.constant\"() {value = dense<0.0> : " + pf + "} : () -> " + pf + "\n";
  s += "  %rr = \"stablehlo.maximum\"(%rs, %zero) : (" + pf + ", " + pf + ") -> " + pf + "\n";
  s += "  %r = \"stablehlo.convert\"(%rr) : (" + pf + ") -> " + p + "\n";
  s += "  func.return %y, %z, %r : " + y + ", " + p + ", " + p + "\n}\n";
  return s;
}

class DotBiasEpilogue : public ::testing::TestWithParam<ElementType> {};

TEST_P(DotBiasEpilogue, GivesTheBitsOfTheProductAndTheBiasKernel) {
  WF_REQUIRE_GPU();
  const ElementType t = GetParam();
  const std::string text = linearLayers(t);
  Module m = parse(text);
  ASSERT_TRUE(mainOf(m)) << text;
  std::vector<Literal> args = {randomLiteral(Type::tensor({2, 37, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({74, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({74, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({29, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({29, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({29, 53}, t), -2, 2),
                               randomLiteral(Type::tensor({29}, t), -8, 8),
                               randomLiteral(Type::tensor({29}, ElementType::kF32), -8, 8)};
  Expected<std::vector<Literal>> want = runCpu(m, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  Expected<PlannedAndUnfused> runs = runPlannedAndUnfused(m, args);
  ASSERT_TRUE(runs) << runs.status().toString();
  const ExecutableStats& stats = runs->stats;
  // The bias of T runs as the epilogue; neither the f32 bias nor the ReLU's group does.
  EXPECT_EQ(stats.matmulBiasEpilogues, 1) << "the linear layer with a bias of its type ran as two steps";
  std::cout << typeName(t) << ": " << stats.matmulBiasEpilogues << " of 3 products with the bias epilogue, "
            << stats.deviceSteps << " steps\n";
  const std::vector<Literal>& got = runs->planned.outputs;
  const std::vector<Literal>& plain = runs->unfused.outputs;
  ASSERT_EQ(got.size(), 3u);
  for (size_t i = 0; i < 3; ++i) {
    // The GPU sums the products in another order than the interpreter: an element may round to
    // its neighbour in T.
    EXPECT_EQ(compareLiterals(got[i], (*want)[i], Tolerance{0, 0, t == ElementType::kBF16 ? 4e-3 : 5e-4}), "")
        << "result #" << i;
    // The epilogue's (result #0) rounds twice as the two steps do, or once; the others are the
    // two steps themselves.
    if (i == 0)
      EXPECT_EQ(withinTheProductsRounding(got[i], plain[i], args[6]), "") << "result #" << i;
    else
      EXPECT_EQ(compareLiterals(got[i], plain[i], Tolerance{0, 0}), "") << "result #" << i;
  }
}

INSTANTIATE_TEST_SUITE_P(Types, DotBiasEpilogue, ::testing::Values(ElementType::kBF16, ElementType::kF16),
                         [](const ::testing::TestParamInfo<ElementType>& info) { return typeName(info.param); });

// BERT's intermediate layer under bf16 (f16) as the exporter writes it: the product of x [m, k]
// by w [k, n] rounded to T, widened, the bias added in f32, reshaped to [8, m / 8, n], the erf
// GELU in f32, reshaped back, rounded to T.
std::string linearGelu(ElementType t, int64_t m, int64_t k, int64_t n) {
  const std::string T = typeName(t), M = std::to_string(m), K = std::to_string(k), N = std::to_string(n);
  const std::string x = "tensor<" + M + "x" + K + "x" + T + ">", w = "tensor<" + K + "x" + N + "x" + T + ">",
                    b = "tensor<" + N + "x" + T + ">", bf = "tensor<" + N + "xf32>", p = "tensor<" + M + "x" + N + "x" + T + ">",
                    pf = "tensor<" + M + "x" + N + "xf32>", p3 = "tensor<8x" + std::to_string(m / 8) + "x" + N + "xf32>";
  auto splat = [&](const std::string& name, const std::string& value) {
    return "  %" + name + " = \"stablehlo.constant\"() {value = dense<" + value + "> : " + p3 + "} : () -> " + p3 + "\n";
  };
  auto binary = [&](const std::string& name, const std::string& op, const std::string& a, const std::string& c) {
    return "  %" + name + " = \"stablehlo." + op + "\"(%" + a + ", %" + c + ") : (" + p3 + ", " + p3 + ") -> " + p3 + "\n";
  };
  std::string s = "func.func @main(%x: " + x + ", %w: " + w + ", %b: " + b + ") -> " + p + " {\n";
  s += "  %p = \"stablehlo.dot_general\"(%x, %w) {dot_dimension_numbers = #stablehlo.dot<lhs_contracting_dimensions = "
       "[1], rhs_contracting_dimensions = [0]>} : (" + x + ", " + w + ") -> " + p + "\n";
  s += "  %pf = \"stablehlo.convert\"(%p) : (" + p + ") -> " + pf + "\n";
  s += "  %bw = \"stablehlo.convert\"(%b) : (" + b + ") -> " + bf + "\n";
  s += "  %bb = \"stablehlo.broadcast_in_dim\"(%bw) {broadcast_dimensions = array<i64: 1>} : (" + bf + ") -> " + pf + "\n";
  s += "  %s2 = \"stablehlo.add\"(%pf, %bb) : (" + pf + ", " + pf + ") -> " + pf + "\n";
  s += "  %s = \"stablehlo.reshape\"(%s2) : (" + pf + ") -> " + p3 + "\n";
  s += splat("half", "0.5") + binary("h", "multiply", "s", "half");
  s += splat("rsqrt2", "0.7071067811865476") + binary("u", "multiply", "s", "rsqrt2");
  s += "  %e = \"chlo.erf\"(%u) : (" + p3 + ") -> " + p3 + "\n";
  s += splat("one", "1.0") + binary("a", "add", "e", "one") + binary("g", "multiply", "h", "a");
  s += "  %g2 = \"stablehlo.reshape\"(%g) : (" + p3 + ") -> " + pf + "\n";
  s += "  %y = \"stablehlo.convert\"(%g2) : (" + pf + ") -> " + p + "\n";
  s += "  func.return %y : " + p + "\n}\n";
  return s;
}

class DotGeluEpilogue : public ::testing::TestWithParam<ElementType> {};

// On Hopper the pair runs as one CUTLASS kernel, whose epilogue rounds the product to T, adds the
// bias, and computes the GELU by cutlass/gelu_erf.h: within a unit of the two steps' result
// where the product's sum (in another order than cuBLASLt's) rounds alike, and the CPU
// interpreter's within T's rounding. m, n and k are off every tile size (128 x 256 x 64); the
// product is just past 2^32 multiply-adds, below which the pair stays two steps.
TEST_P(DotGeluEpilogue, GivesTheBitsOfTheProductAndTheGeluKernel) {
  WF_REQUIRE_GPU();
  if (!cuda::dotGeluEpilogueBuilt()) GTEST_SKIP() << "built without CUTLASS: the pair runs as two steps";
  Expected<std::shared_ptr<cuda::Device>> device = cuda::Device::get(0);
  ASSERT_TRUE(device) << device.status().toString();
  const bool hopper = (*device)->info().major == 9 && (*device)->info().minor == 0;
  const ElementType t = GetParam();
  const int64_t m = 1000, k = 1048, n = 4104;
  Module mod = parse(linearGelu(t, m, k, n));
  ASSERT_TRUE(mainOf(mod));
  std::vector<Literal> args = {randomLiteral(Type::tensor({m, k}, t), -1, 1),
                               randomLiteral(Type::tensor({k, n}, t), -0.1, 0.1),
                               randomLiteral(Type::tensor({n}, t), -2, 2)};
  Expected<PlannedAndUnfused> runs = runPlannedAndUnfused(mod, args);
  ASSERT_TRUE(runs) << runs.status().toString();
  const ExecutableStats& stats = runs->stats;
  EXPECT_EQ(stats.matmulGeluEpilogues, hopper ? 1 : 0) << "compute capability " << (*device)->info().major << "."
                                                        << (*device)->info().minor;
  std::cout << typeName(t) << ": " << stats.matmulGeluEpilogues << " GELU epilogue, " << stats.deviceSteps
            << " steps\n";
  Expected<std::vector<Literal>> want = runCpu(mod, cloneAll(args));
  ASSERT_TRUE(want) << want.status().toString();
  EXPECT_EQ(compareLiterals(runs->planned.outputs[0], (*want)[0], Tolerance{0, 0, t == ElementType::kBF16 ? 4e-3 : 5e-4}), "");
  // Against the two steps: equal bits but where the product rounded to its neighbour in T, which
  // moves the GELU by at most that (its slope is below 1.13), and where the two GELUs, each about
  // 1e-7 * max(|x|, 1) from the exact one in f32, round to neighbours in T: for x < 0 the GELU is
  // much smaller than x, and f16's unit there is within reach (0.44-0.46% of the elements of f16,
  // 0.17-0.18% of bf16 on an H200). GeluRoundsAsTheFormula below compares the GELUs alone.
  const Literal& g = runs->planned.outputs[0];
  const Literal& w = runs->unfused.outputs[0];
  auto ulp = [&](double v) { return unitOf(t, v); };
  int64_t differ = 0;
  for (int64_t i = 0; i < g.numElements(); ++i) {
    const double a = g.getDouble(i), e = w.getDouble(i);
    if (a == e) continue;
    ++differ;
    const double x = std::fabs(e) + std::fabs(args[2].getDouble(i % n)) + 4.0;  // bounds |product| here
    ASSERT_LE(std::fabs(a - e), 1.13 * ulp(x) + ulp(std::max(std::fabs(a), std::fabs(e)))) << "element " << i;
  }
  std::cout << typeName(t) << ": " << differ << " of " << g.numElements() << " elements differ from the two steps\n";
  EXPECT_LE(differ, g.numElements() / 100);

  // --no-matmul-epilogues: the product stored and its bias and GELU a fused loop's.
  CompileOptions apart;
  apart.matmulEpilogues = false;
  Expected<std::unique_ptr<Executable>> exe = cudaBackend().compile(mod, *mainOf(mod), apart);
  ASSERT_TRUE(exe) << exe.status().toString();
  EXPECT_EQ((*exe)->stats().matmulGeluEpilogues, 0);
  EXPECT_EQ((*exe)->stats().matmulBiasEpilogues, 0);
  Expected<RunResult> r = (*exe)->run(args);
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(compareLiterals(r->outputs[0], (*want)[0], Tolerance{0, 0, t == ElementType::kBF16 ? 4e-3 : 5e-4}), "");
}

// The GELU alone, against the exact one: each column of w holds a single 1 (row j % k of column
// j), so the product is x's element, exact in any order of the sum, and the epilogue and the two
// steps see the same f32 sum x + bias. Rounded to T, the epilogue's GELU lands off the f64 GELU's
// rounding no more often than the two steps' (the formula with CUDA's erff), and never by more
// than a unit (beside f32's resolution of 1 + erf, which the formula's tail is made of).
TEST_P(DotGeluEpilogue, GeluRoundsAsTheFormula) {
  WF_REQUIRE_GPU();
  if (!cuda::dotGeluEpilogueBuilt()) GTEST_SKIP() << "built without CUTLASS: the pair runs as two steps";
  const ElementType t = GetParam();
  const int64_t m = 1000, k = 1048, n = 4104;
  Module mod = parse(linearGelu(t, m, k, n));
  ASSERT_TRUE(mainOf(mod));
  Literal w = Literal::zeros(Type::tensor({k, n}, t));
  for (int64_t j = 0; j < n; ++j) w.setDouble((j % k) * n + j, 1.0);
  std::vector<Literal> args = {randomLiteral(Type::tensor({m, k}, t), -4, 4), std::move(w),
                               randomLiteral(Type::tensor({n}, t), -2, 2)};
  Expected<PlannedAndUnfused> runs = runPlannedAndUnfused(mod, args);
  ASSERT_TRUE(runs) << runs.status().toString();
  Literal exact = Literal::zeros(Type::tensor({m, n}, t));
  std::vector<float> sums(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      const float x = static_cast<float>(args[0].getDouble(i * k + j % k)) + static_cast<float>(args[2].getDouble(j));
      sums[i * n + j] = x;
      exact.setDouble(i * n + j, x * 0.5 * std::erfc(-x / std::sqrt(2.0)));
    }
  auto ulp = [&](double v) { return unitOf(t, v); };
  int64_t fusedOff = 0, stepsOff = 0;
  for (int64_t i = 0; i < exact.numElements(); ++i) {
    const double e = exact.getDouble(i), a = runs->planned.outputs[0].getDouble(i),
                 b = runs->unfused.outputs[0].getDouble(i);
    fusedOff += a != e;
    stepsOff += b != e;
    // A unit of T, and f32's resolution of 1 + erf (which the formula's tail, x < -4, is made of).
    const double slack = 1.2e-7 * std::max(std::fabs(static_cast<double>(sums[i])), 1.0);
    ASSERT_LE(std::fabs(a - e), ulp(std::max(std::fabs(a), std::fabs(e))) + slack) << "element " << i << ", epilogue";
    ASSERT_LE(std::fabs(b - e), ulp(std::max(std::fabs(b), std::fabs(e))) + slack) << "element " << i << ", two steps";
  }
  std::cout << typeName(t) << ": off the exact GELU's rounding, the epilogue " << fusedOff << " and the two steps "
            << stepsOff << " of " << exact.numElements() << "\n";
  EXPECT_LE(fusedOff, stepsOff);
}

INSTANTIATE_TEST_SUITE_P(Types, DotGeluEpilogue, ::testing::Values(ElementType::kBF16, ElementType::kF16),
                         [](const ::testing::TestParamInfo<ElementType>& info) { return typeName(info.param); });

// The pattern, on the IR alone (no GPU): the exporter's GELU matches, at any size, and
// neighbours that compute something else do not.
TEST(DotGeluEpilogueMatch, TheExportersGeluMatchesAndItsNeighboursDoNot) {
  const std::string exported = linearGelu(ElementType::kBF16, 16, 24, 40);
  auto replaced = [&](const std::string& from, const std::string& to) {
    std::string s = exported;
    const size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    return at == std::string::npos ? s : s.replace(at, from.size(), to);
  };
  struct Case {
    std::string what, text;
    bool matches;
  };
  const std::vector<Case> cases = {
      {"the exporter's GELU", exported, true},
      {"the same scale written as an f32", replaced("dense<0.7071067811865476>", "dense<0.70710677>"), true},
      {"a scale of another f32", replaced("dense<0.7071067811865476>", "dense<0.7071>"), false},
      {"another half", replaced("dense<0.5>", "dense<0.25>"), false},
      {"another one", replaced("dense<1.0>", "dense<2.0>"), false},
      {"tanh for erf", replaced("\"chlo.erf\"", "\"stablehlo.tanh\""), false},
      {"the erf of the half", replaced("\"chlo.erf\"(%u)", "\"chlo.erf\"(%h)"), false},
  };
  for (const Case& c : cases) {
    Module m = parse(c.text);
    const Operation* main = mainOf(m);
    ASSERT_NE(main, nullptr) << c.what << ":\n" << c.text;
    const Block& body = FuncOp(main).body();
    cuda::FusionPlan plan = cuda::planFusion(body, {});
    const Operation* dot = nullptr;
    for (const auto& op : body.operations())
      if (op->code() == OpCode::DotGeneral) dot = op.get();
    ASSERT_NE(dot, nullptr) << c.what;
    const cuda::FusionGroup* group = nullptr;
    for (const cuda::FusionGroup& g : plan.groups)
      if (std::find(g.inputs.begin(), g.inputs.end(), dot->result(0)) != g.inputs.end()) group = &g;
    ASSERT_NE(group, nullptr) << c.what << ": no group reads the product";
    Expected<const Value*> bias = cuda::linearLayerGeluBias(*dot, *group);
    EXPECT_EQ(bool(bias), c.matches) << c.what << (bias ? "" : ": " + bias.status().toString());
    if (bias && c.matches) {
      EXPECT_EQ(*bias, FuncOp(main).body().argument(2)) << c.what;
    }
  }
}

}  // namespace
}  // namespace wf::cudatest
