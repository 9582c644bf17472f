// CUDA elementwise kernels against the CPU interpreter: every op on every element type it
// takes, on fresh random inputs of an odd shape.
#include <tuple>

#include "cuda_test_util.h"

namespace wf::cudatest {
namespace {

const std::vector<int64_t> kShape = {3, 37, 5};

struct Case {
  std::string op;  // without the "stablehlo." prefix (chlo ops with theirs)
  ElementType type;
  double lo = -4, hi = 4;      // operand 0 range (lo > hi: any bits)
  double lo1 = -4, hi1 = 4;    // operand 1 range
};

std::string caseName(const testing::TestParamInfo<Case>& info) {
  std::string n = info.param.op + "_" + typeName(info.param.type) + "_" + std::to_string(info.index);
  for (char& c : n)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return n;
}

std::vector<Case> unaryCases() {
  std::vector<Case> cases;
  struct Range { const char* op; double lo, hi; };
  for (Range r : {Range{"abs", -4, 4}, Range{"negate", -4, 4}, Range{"exponential", -4, 4},
                  Range{"exponential_minus_one", -1, 1}, Range{"log", 0.05, 8}, Range{"log_plus_one", -0.9, 8},
                  Range{"logistic", -6, 6}, Range{"sqrt", 0, 8}, Range{"rsqrt", 0.05, 8}, Range{"cbrt", -8, 8},
                  Range{"sine", -6, 6}, Range{"cosine", -6, 6}, Range{"tan", -1.4, 1.4}, Range{"tanh", -4, 4},
                  Range{"floor", -9, 9}, Range{"ceil", -9, 9}, Range{"round_nearest_afz", -9, 9},
                  Range{"round_nearest_even", -9, 9}, Range{"sign", -2, 2}})
    for (ElementType t : floatTypes()) cases.push_back({r.op, t, r.lo, r.hi});
  for (Range r : {Range{"chlo.erf", -3, 3}, Range{"chlo.erfc", -2, 3}, Range{"chlo.erf_inv", -0.99, 0.99},
                  Range{"chlo.cosh", -4, 4}, Range{"chlo.sinh", -4, 4}, Range{"chlo.tan", -1.4, 1.4},
                  Range{"chlo.asin", -0.99, 0.99}, Range{"chlo.acos", -0.99, 0.99}, Range{"chlo.atan", -8, 8},
                  Range{"chlo.asinh", -8, 8}, Range{"chlo.acosh", 1.1, 8}, Range{"chlo.atanh", -0.95, 0.95},
                  Range{"chlo.lgamma", 2.5, 9}, Range{"chlo.square", -4, 4}})
    for (ElementType t : floatTypes()) cases.push_back({r.op, t, r.lo, r.hi});
  for (ElementType t : intTypes()) {
    for (const char* op : {"negate", "not", "popcnt", "count_leading_zeros"}) cases.push_back({op, t, 1, 0});
    if (isSignedInteger(t)) {
      cases.push_back({"abs", t, 1, 0});
      cases.push_back({"sign", t, -3, 3});
    }
  }
  cases.push_back({"not", ElementType::kI1});
  return cases;
}

class CudaUnary : public testing::TestWithParam<Case> {};

TEST_P(CudaUnary, MatchesCpu) {
  WF_REQUIRE_GPU();
  const Case& c = GetParam();
  const Type t = Type::tensor(kShape, c.type);
  const std::string name = c.op.find('.') == std::string::npos ? "stablehlo." + c.op : c.op;
  expectMatchesCpu(oneOp(name, {t}, t), {randomLiteral(t, c.lo, c.hi)});
}
INSTANTIATE_TEST_SUITE_P(Ops, CudaUnary, testing::ValuesIn(unaryCases()), caseName);

TEST(CudaUnary, IsFiniteAndIsInf) {
  WF_REQUIRE_GPU();
  for (ElementType et : floatTypes()) {
    const Type t = Type::tensor(kShape, et);
    Literal x = randomLiteral(t, -1e30, 1e30);  // overflows to inf in f16/bf16 ranges
    x.setDouble(0, std::nan(""));
    x.setDouble(1, -INFINITY);
    x.setDouble(2, INFINITY);
    for (const char* op : {"stablehlo.is_finite", "chlo.is_inf", "chlo.is_pos_inf", "chlo.is_neg_inf"})
      expectMatchesCpu(oneOp(op, {t}, Type::tensor(kShape, ElementType::kI1)), {x});
  }
}

std::vector<Case> binaryCases() {
  std::vector<Case> cases;
  for (ElementType t : floatTypes()) {
    for (const char* op : {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "atan2"})
      cases.push_back({op, t});
    cases.push_back({"power", t, 0.1, 4, -3, 3});
  }
  for (ElementType t : intTypes()) {
    for (const char* op : {"add", "subtract", "multiply", "maximum", "minimum", "and", "or", "xor"})
      cases.push_back({op, t, 1, 0, 1, 0});
    // Small values, so that x/0, x/-1 and x%0 come up.
    for (const char* op : {"divide", "remainder"}) cases.push_back({op, t, -6, 6, -3, 3});
    cases.push_back({"divide", t, 1, 0, 1, 0});
    const double bits = bitWidth(t);
    for (const char* op : {"shift_left", "shift_right_logical", "shift_right_arithmetic"})
      cases.push_back({op, t, 1, 0, -2, bits + 2});
    cases.push_back({"power", t, -3, 3, -2, 9});
    cases.push_back({"chlo.mulhi", t, 1, 0, 1, 0});
  }
  for (const char* op : {"add", "multiply", "maximum", "minimum", "and", "or", "xor"})
    cases.push_back({op, ElementType::kI1});
  return cases;
}

class CudaBinary : public testing::TestWithParam<Case> {};

TEST_P(CudaBinary, MatchesCpu) {
  WF_REQUIRE_GPU();
  const Case& c = GetParam();
  const Type t = Type::tensor(kShape, c.type);
  const std::string op = c.op.find('.') == std::string::npos ? "stablehlo." + c.op : c.op;
  expectMatchesCpu(oneOp(op, {t, t}, t), {randomLiteral(t, c.lo, c.hi), randomLiteral(t, c.lo1, c.hi1)});
}
INSTANTIATE_TEST_SUITE_P(Ops, CudaBinary, testing::ValuesIn(binaryCases()), caseName);

class CudaCompare : public testing::TestWithParam<std::tuple<ElementType, std::string, std::string>> {};

TEST_P(CudaCompare, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [et, dir, cmpType] = GetParam();
  const Type t = Type::tensor(kShape, et);
  std::string attrs = "comparison_direction = #stablehlo<comparison_direction " + dir + ">";
  if (!cmpType.empty()) attrs += ", compare_type = #stablehlo<comparison_type " + cmpType + ">";
  // Few distinct values, so that equal pairs come up; floats get NaN, -0 and +0 too.
  Literal a = randomLiteral(t, -3, 3), b = randomLiteral(t, -3, 3);
  if (isFloat(et)) {
    for (int64_t i = 0; i < a.numElements(); ++i) {
      a.setDouble(i, std::round(a.getDouble(i)));
      b.setDouble(i, std::round(b.getDouble(i)));
    }
    a.setDouble(0, std::nan(""));
    b.setDouble(1, std::nan(""));
    a.setDouble(2, -0.0);
    b.setDouble(2, 0.0);
  }
  expectMatchesCpu(oneOp("stablehlo.compare", {t, t}, Type::tensor(kShape, ElementType::kI1), attrs), {a, b});
}

std::vector<std::tuple<ElementType, std::string, std::string>> compareCases() {
  std::vector<std::tuple<ElementType, std::string, std::string>> cases;
  for (ElementType t : gpuTypes())
    for (const char* dir : {"EQ", "NE", "GE", "GT", "LE", "LT"}) {
      std::string type = isFloat(t) ? "FLOAT" : isUnsignedInteger(t) || t == ElementType::kI1 ? "UNSIGNED" : "SIGNED";
      cases.emplace_back(t, dir, type);
      if (isFloat(t)) cases.emplace_back(t, dir, "TOTALORDER");
    }
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Dirs, CudaCompare, testing::ValuesIn(compareCases()),
                         [](const auto& info) {
                           return typeName(std::get<0>(info.param)) + "_" + std::get<1>(info.param) + "_" +
                                  std::get<2>(info.param);
                         });

class CudaConvert : public testing::TestWithParam<std::tuple<ElementType, ElementType>> {};

TEST_P(CudaConvert, MatchesCpu) {
  WF_REQUIRE_GPU();
  const auto& [from, to] = GetParam();
  const Type in = Type::tensor(kShape, from);
  Literal x = isFloat(from) ? randomLiteral(in, -3e4, 3e4) : randomLiteral(in, 1, 0);
  if (isFloat(from)) {
    // Small values, values past every integer range, and the specials.
    for (int64_t i = 0; i < 100; ++i) x.setDouble(i, std::uniform_real_distribution<double>(-300, 300)(rng()));
    x.setDouble(100, 1e300);
    x.setDouble(101, -1e300);
    x.setDouble(102, 3e19);
    x.setDouble(103, -1e19);
    x.setDouble(104, std::nan(""));
    x.setDouble(105, INFINITY);
    x.setDouble(106, -INFINITY);
    x.setDouble(107, -0.0);
    x.setDouble(108, 0.5);
    x.setDouble(109, -0.7);
  }
  if (bitWidth(from) == 64 && isInteger(from)) {
    // Just above bf16 ties, where rounding through a float or double to nearest rounds twice.
    x.setBits(0, (uint64_t{1} << 40) + (uint64_t{1} << 32) + 1);
    x.setBits(1, (uint64_t{1} << 63) + (uint64_t{1} << 55) + 1);
    x.setBits(2, 0 - ((uint64_t{1} << 40) + (uint64_t{1} << 32) + 1));
  }
  expectMatchesCpu(oneOp("stablehlo.convert", {in}, Type::tensor(kShape, to)), {x}, Tolerance{});
}

std::vector<std::tuple<ElementType, ElementType>> convertCases() {
  std::vector<std::tuple<ElementType, ElementType>> cases;
  for (ElementType a : gpuTypes())
    for (ElementType b : gpuTypes()) cases.emplace_back(a, b);
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Pairs, CudaConvert, testing::ValuesIn(convertCases()), [](const auto& info) {
  return typeName(std::get<0>(info.param)) + "_to_" + typeName(std::get<1>(info.param));
});

// f32 -> bf16 on the GPU (one cvt.rn.bf16.f32 from sm_80 on, element_math.h) gives exactly the
// CPU's values (no tolerance) where rounding goes wrong: exact ties (to even), one ulp either side
// of them, subnormals, the largest finite values (rounding up to infinity), zeros and infinities.
// NaN stays NaN (0x7fff on the device, element_math.h says why). As one convert (a precompiled
// kernel) and inside a fused loop kernel of 8-element vectors (NVRTC).
TEST(CudaBf16Rounding, TiesSubnormalsAndOverflowRoundAsOnTheCpu) {
  WF_REQUIRE_GPU();
  std::vector<uint32_t> bits = {0x00000000u, 0x80000000u, 0x00000001u, 0x00007fffu, 0x00008000u, 0x00018000u,
                                0x007fffffu, 0x807f8000u, 0x7f7fffffu, 0xff7fffffu, 0x7f7f7fffu, 0x7f7f8000u,
                                0x7f800000u, 0xff800000u, 0x7fc00000u, 0xffc00001u, 0x3f808000u, 0x3f818000u};
  std::mt19937 gen(11);
  while (bits.size() < 656) {
    uint32_t high = gen() & 0xffff0000u;
    if ((high & 0x7f800000u) == 0x7f800000u) high ^= 0x40000000u;  // finite: NaN and inf are above
    for (uint32_t low : {0x8000u, 0x7fffu, 0x8001u, 0x0000u}) bits.push_back(high | low);
  }
  bits.resize(656);
  const Type in = Type::tensor({2, 328}, ElementType::kF32), out = Type::tensor({2, 328}, ElementType::kBF16);
  Literal x = Literal::uninitialized(in);
  for (size_t i = 0; i < bits.size(); ++i) x.setBits(static_cast<int64_t>(i), bits[i]);
  expectMatchesCpu(oneOp("stablehlo.convert", {in}, out), {x}, Tolerance{});
  // x * 1 is x, bit for bit (subnormals included: no flush to zero), so the fused kernel's
  // rounding sees the same values.
  const std::string fused = R"(
func.func @main(%x: tensor<2x328xf32>) -> tensor<2x328xbf16> {
  %one = "stablehlo.constant"() {value = dense<1.0> : tensor<2x328xf32>} : () -> tensor<2x328xf32>
  %m = "stablehlo.multiply"(%x, %one) : (tensor<2x328xf32>, tensor<2x328xf32>) -> tensor<2x328xf32>
  %b = "stablehlo.convert"(%m) : (tensor<2x328xf32>) -> tensor<2x328xbf16>
  func.return %b : tensor<2x328xbf16>
}
)";
  expectMatchesCpu(fused, {x}, Tolerance{});
}

class CudaSelectClamp : public testing::TestWithParam<ElementType> {};

TEST_P(CudaSelectClamp, SelectWithTensorAndScalarPredicate) {
  WF_REQUIRE_GPU();
  const ElementType et = GetParam();
  const Type t = Type::tensor(kShape, et);
  const Type p = Type::tensor(kShape, ElementType::kI1);
  const Type ps = Type::tensor({}, ElementType::kI1);
  expectMatchesCpu(oneOp("stablehlo.select", {p, t, t}, t), {randomLiteral(p), randomLiteral(t), randomLiteral(t)});
  for (int v : {0, 1}) {
    Literal pred = Literal::scalarInt(ElementType::kI1, v);
    expectMatchesCpu(oneOp("stablehlo.select", {ps, t, t}, t), {pred, randomLiteral(t), randomLiteral(t)});
  }
}

TEST_P(CudaSelectClamp, ClampWithTensorAndScalarBounds) {
  WF_REQUIRE_GPU();
  const ElementType et = GetParam();
  if (et == ElementType::kI1) GTEST_SKIP() << "clamp takes no i1";
  const Type t = Type::tensor(kShape, et);
  const Type s = Type::tensor({}, et);
  expectMatchesCpu(oneOp("stablehlo.clamp", {t, t, t}, t), {randomLiteral(t, -4, 0), randomLiteral(t), randomLiteral(t, 0, 4)});
  expectMatchesCpu(oneOp("stablehlo.clamp", {s, t, s}, t), {randomLiteral(s, -2, -1), randomLiteral(t), randomLiteral(s, 1, 2)});
}

INSTANTIATE_TEST_SUITE_P(Types, CudaSelectClamp, testing::ValuesIn(gpuTypes()),
                         [](const auto& info) { return typeName(info.param); });

// Bit for bit the CPU's values: rounding at each mantissa width, overflow to infinity, underflow
// to zero, NaN kept (or made infinite with no mantissa bits left).
TEST(CudaElementwise, ReducePrecisionMatchesCpuBitForBit) {
  WF_REQUIRE_GPU();
  const std::vector<std::pair<int, int>> formats = {{5, 10}, {8, 7}, {4, 3}, {5, 2}, {2, 0}, {8, 23}, {11, 52}, {1, 1}};
  for (ElementType et : floatTypes()) {
    const Type t = Type::tensor(kShape, et);
    Literal x = randomLiteral(t, -7e4, 7e4);
    for (int64_t i = 0; i < x.numElements(); i += 7) x.setDouble(i, x.getDouble(i) * 1e-7);  // near underflow
    x.setDouble(0, std::nan(""));
    x.setDouble(1, -INFINITY);
    x.setDouble(2, 65520.0);
    x.setDouble(3, -0.0);
    for (const auto& [e, m] : formats) {
      const std::string attrs =
          "exponent_bits = " + std::to_string(e) + " : i32, mantissa_bits = " + std::to_string(m) + " : i32";
      expectMatchesCpu(oneOp("stablehlo.reduce_precision", {t}, t, attrs), {x}, Tolerance{0, 0});
    }
  }
}

TEST(CudaElementwise, RealAndImagOfRealNumbers) {
  WF_REQUIRE_GPU();
  for (ElementType et : floatTypes()) {
    const Type t = Type::tensor(kShape, et);
    for (const char* op : {"stablehlo.real", "stablehlo.imag"})
      expectMatchesCpu(oneOp(op, {t}, t), {randomLiteral(t)}, Tolerance{0, 0});
  }
}

TEST(CudaElementwise, LargeTensorTakesTheWholeGrid) {
  WF_REQUIRE_GPU();
  const Type t = Type::tensor({(1 << 22) + 7}, ElementType::kF32);
  expectMatchesCpu(oneOp("stablehlo.multiply", {t, t}, t), {randomLiteral(t), randomLiteral(t)});
}

TEST(CudaElementwise, ComplexFailsCompileNamingTheOpAndType) {
  WF_REQUIRE_GPU();
  const Type t = Type::tensor({4}, ElementType::kComplexF32);
  Module m = parse(oneOp("stablehlo.add", {t, t}, t));
  auto exe = cudaBackend().compile(m, *mainOf(m), {});
  ASSERT_FALSE(exe);
  EXPECT_EQ(exe.status().code(), StatusCode::kUnimplemented);
  EXPECT_NE(exe.status().message().find("stablehlo.add"), std::string::npos) << exe.status().message();
  EXPECT_NE(exe.status().message().find("complex<f32>"), std::string::npos) << exe.status().message();
  EXPECT_NE(exe.status().message().find("cuda_test.mlir:"), std::string::npos) << exe.status().message();
}

}  // namespace
}  // namespace wf::cudatest
