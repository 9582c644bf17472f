// Miscellaneous kernels: rng_bit_generator against values recorded from JAX 0.10.2 on CPU
// (jax.lax.rng_bit_generator), rng, the interpreter's tensor print format, constant,
// tuple/get_tuple_element and custom_call errors.
#include <gtest/gtest.h>

#include "eval/misc.h"
#include "ir_build_test_util.h"

namespace wf {
namespace {

using namespace wf::testing;

constexpr uint64_t kKey0 = 0x123456789abcdef0ULL;
constexpr uint64_t kKey1 = 0x0fedcba987654321ULL;

struct RbgCase {
  const char* algorithm;
  ElementType type;
  std::vector<int64_t> shape;
  uint64_t newState1;
  std::vector<uint64_t> expected;
};

// Recorded with: lax.rng_bit_generator(jnp.array([kKey0, kKey1], uint64), shape, dtype, algorithm).
const std::vector<RbgCase>& rbgCases() {
  static const std::vector<RbgCase> cases = {
      {"DEFAULT", ElementType::kUI32, {3, 5}, 0x0fedcba987654325ULL,
       {4280550385, 238971816, 1079828761, 2933417630, 2651160362, 1297950909, 3789065841, 4149258839, 2983848855,
        1899297940, 498330996, 844667934, 3947613943, 1970030416, 1993676282}},
      {"PHILOX", ElementType::kUI64, {5}, 0x0fedcba987654324ULL,
       {1026376138666279921ULL, 12598932787439657241ULL, 5574656708619632426ULL, 17820931019932995185ULL,
        8157422540644019095ULL}},
      {"PHILOX", ElementType::kUI32, {}, 0x0fedcba987654322ULL, {4280550385}},
      {"PHILOX", ElementType::kUI8, {2, 3}, 0x0fedcba987654323ULL, {241, 168, 25, 158, 42, 189}},
      {"PHILOX", ElementType::kUI64, {2, 2}, 0x0fedcba987654323ULL,
       {1026376138666279921ULL, 12598932787439657241ULL, 5574656708619632426ULL, 17820931019932995185ULL}},
      {"THREE_FRY", ElementType::kUI32, {3, 5}, 0x0fedcba98765432aULL,
       {321188122, 719450110, 4126047222, 1525795385, 2886374414, 2437281700, 846035953, 1969378478, 59141129,
        209381290, 1236291478, 631321034, 1553511869, 3210389880, 3539300408}},
      {"THREE_FRY", ElementType::kUI64, {5}, 0x0fedcba987654326ULL,
       {3090014693874790682ULL, 6553241283088776182ULL, 2708039825760097294ULL, 3633696751812474788ULL,
        254009216872895662ULL}},
      {"THREE_FRY", ElementType::kUI32, {}, 0x0fedcba987654322ULL, {321188122}},
      {"THREE_FRY", ElementType::kUI8, {2, 3}, 0x0fedcba987654324ULL, {26, 246, 14, 254, 57, 223}},
      {"THREE_FRY", ElementType::kUI32, {3, 3}, 0x0fedcba987654327ULL,
       {321188122, 4126047222, 2886374414, 719450110, 1525795385, 630514655, 2437281700, 1969378478, 209381290}},
      {"THREE_FRY", ElementType::kUI64, {2, 2}, 0x0fedcba987654325ULL,
       {3090014693874790682ULL, 6553241283088776182ULL, 2708039825760097294ULL, 3633696751812474788ULL}},
  };
  return cases;
}

TEST(MiscTest, RngBitGeneratorMatchesJax) {
  for (const RbgCase& c : rbgCases()) {
    Module m;
    Type stateType = tensorOf({2}, ElementType::kUI64);
    Type outType = Type::tensor(c.shape, c.type);
    Operation* f = addFunction(m, "main", {stateType}, {stateType, outType});
    Block* b = bodyOf(f);
    Operation* op = addOp(b, "stablehlo.rng_bit_generator", {b->argument(0)}, {stateType, outType},
                          {{"rng_algorithm", Attribute::enumValue("stablehlo", "rng_algorithm", c.algorithm)}});
    ret(b, {op->result(0), op->result(1)}, "func.return");
    Literal state = Literal::zeros(stateType);
    state.setBits(0, kKey0);
    state.setBits(1, kKey1);
    auto r = runFunction(m, "main", {state});
    ASSERT_TRUE(r) << r.status().toString();
    SCOPED_TRACE(std::string(c.algorithm) + " " + outType.toString());
    EXPECT_EQ((*r)[0].getBits(0), kKey0);
    EXPECT_EQ((*r)[0].getBits(1), c.newState1);
    ASSERT_EQ((*r)[1].numElements(), static_cast<int64_t>(c.expected.size()));
    for (size_t i = 0; i < c.expected.size(); ++i) EXPECT_EQ((*r)[1].getBits(static_cast<int64_t>(i)), c.expected[i]) << i;
  }
}

TEST(MiscTest, PhiloxThreeWordStateCarriesIntoHighWord) {
  // Counter (lo = 2^64 - 1, hi = 5): one block later lo wraps and hi becomes 6.
  std::vector<uint64_t> state = {42, ~uint64_t{0}, 5};
  auto bits = rngBitGenerator(RngAlgorithm::kPhilox, state, {4}, 32);
  ASSERT_TRUE(bits);
  EXPECT_EQ(state[0], 42u);
  EXPECT_EQ(state[1], 0u);
  EXPECT_EQ(state[2], 6u);
  // Same counter through the two-word layout (lo = state[1], hi = state[0]) gives other bits.
  std::vector<uint64_t> two = {5, ~uint64_t{0}};
  auto other = rngBitGenerator(RngAlgorithm::kPhilox, two, {4}, 32);
  ASSERT_TRUE(other);
  EXPECT_NE(*bits, *other);
}

TEST(MiscTest, RngUniformStaysInRangeAndIsDeterministicPerStream) {
  Module m;
  Type out = tensorOf({1000}, ElementType::kF32);
  Operation* f = addFunction(m, "main", {}, {out, tensorOf({1000})});
  Block* b = bodyOf(f);
  Value* lo = constant(b, Literal::scalarDouble(ElementType::kF32, -2.0));
  Value* hi = constant(b, Literal::scalarDouble(ElementType::kF32, 3.0));
  Value* shape = constant(b, ints({1}, {1000}));
  Value* ilo = constant(b, Literal::scalarInt(ElementType::kSI64, 5));
  Value* ihi = constant(b, Literal::scalarInt(ElementType::kSI64, 9));
  Attribute uniform = Attribute::enumValue("stablehlo", "rng_distribution", "UNIFORM");
  Value* fr = addOp(b, "stablehlo.rng", {lo, hi, shape}, {out}, {{"rng_distribution", uniform}})->result(0);
  Value* ir = addOp(b, "stablehlo.rng", {ilo, ihi, shape}, {tensorOf({1000})}, {{"rng_distribution", uniform}})->result(0);
  ret(b, {fr, ir}, "func.return");
  auto r = runFunction(m, "main");
  ASSERT_TRUE(r) << r.status().toString();
  double mean = 0;
  std::vector<int> seen(4, 0);
  for (int64_t i = 0; i < 1000; ++i) {
    double v = (*r)[0].getDouble(i);
    ASSERT_GE(v, -2.0);
    ASSERT_LT(v, 3.0);
    mean += v / 1000;
    int64_t k = (*r)[1].getInt(i);
    ASSERT_GE(k, 5);
    ASSERT_LT(k, 9);
    ++seen[static_cast<size_t>(k - 5)];
  }
  EXPECT_NEAR(mean, 0.5, 0.25);
  for (int s : seen) EXPECT_GT(s, 150);
}

TEST(MiscTest, PrintFormatMatchesTheInterpreter) {
  EXPECT_EQ(formatTensorForPrint(ints({}, {1}, ElementType::kUI8)), "tensor<ui8> {1}");
  EXPECT_EQ(formatTensorForPrint(ints({4}, {1, 2, -3, -4}, ElementType::kSI8)), "tensor<4xi8> {\n  [1, 2, -3, -4]\n}");
  EXPECT_EQ(formatTensorForPrint(ints({2, 2}, {1, 2, 3, 4}, ElementType::kSI8)),
            "tensor<2x2xi8> {\n  [\n    [1, 2],\n    [3, 4]\n  ]\n}");
  EXPECT_EQ(formatTensorForPrint(ints({2, 2, 2}, {0, 1, 2, 3, 4, 0, 1, 2})),
            "tensor<2x2x2xi64> {\n  [\n    [\n      [0, 1],\n      [2, 3]\n    ],\n    [\n      [4, 0],\n"
            "      [1, 2]\n    ]\n  ]\n}");
  EXPECT_EQ(formatTensorForPrint(ints({0, 2}, {}, ElementType::kSI8)), "tensor<0x2xi8> {\n  []\n}");
  EXPECT_EQ(formatTensorForPrint(ints({2, 0}, {}, ElementType::kSI8)), "tensor<2x0xi8> {\n  [\n    [],\n    []\n  ]\n}");
  EXPECT_EQ(formatTensorForPrint(ints({2}, {1, 0}, ElementType::kI1)), "tensor<2xi1> {\n  [true, false]\n}");
  Literal f = Literal::zeros(tensorOf({2}, ElementType::kF16));
  f.setDouble(0, 1.0);
  f.setDouble(1, -3.0);
  EXPECT_EQ(formatTensorForPrint(f), "tensor<2xf16> {\n  [1.000000e+00, -3.000000e+00]\n}");
  Literal c = Literal::zeros(tensorOf({1}, ElementType::kComplexF32));
  c.setComplex(0, {3.14, 1.0});
  EXPECT_EQ(formatTensorForPrint(c), "tensor<1xcomplex<f32>> {\n  [[3.140000e+00, 1.000000e+00]]\n}");
}

TEST(MiscTest, ConstantTupleAndGetTupleElement) {
  Module m;
  Type tup = Type::tuple({tensorOf({2}), Type::tuple({i64()})});
  Operation* f = addFunction(m, "main", {}, {tensorOf({2}), i64(), tensorOf({3})});
  Block* b = bodyOf(f);
  Value* v0 = constant(b, ints({2}, {8, 9}));
  Value* s = constant(b, Literal::scalarInt(ElementType::kSI64, 3));
  Value* inner = addOp(b, "stablehlo.tuple", {s}, {Type::tuple({i64()})})->result(0);
  Value* outer = addOp(b, "stablehlo.tuple", {v0, inner}, {tup})->result(0);
  Value* e0 = addOp(b, "stablehlo.get_tuple_element", {outer}, {tensorOf({2})},
                    {{"index", Attribute::integer(0, ElementType::kSI32)}})->result(0);
  Value* e1 = addOp(b, "stablehlo.get_tuple_element", {outer}, {Type::tuple({i64()})},
                    {{"index", Attribute::integer(1, ElementType::kSI32)}})->result(0);
  Value* e10 = addOp(b, "stablehlo.get_tuple_element", {e1}, {i64()},
                     {{"index", Attribute::integer(0, ElementType::kSI32)}})->result(0);
  // A splat stored as a single element fills the declared shape.
  Value* splat = addOp(b, "stablehlo.constant", {}, {tensorOf({3})},
                       {{"value", Attribute::denseElements(ints({}, {-4}))}})->result(0);
  ret(b, {e0, e10, splat}, "func.return");
  auto r = runFunction(m, "main");
  ASSERT_TRUE(r) << r.status().toString();
  EXPECT_EQ(valuesOf((*r)[0]), (std::vector<int64_t>{8, 9}));
  EXPECT_EQ((*r)[1].getInt(0), 3);
  EXPECT_EQ(valuesOf((*r)[2]), (std::vector<int64_t>{-4, -4, -4}));
}

TEST(MiscTest, MissingResourceBlobIsAClearError) {
  Module m;
  Operation* f = addFunction(m, "main", {}, {tensorOf({2})});
  Block* b = bodyOf(f);
  Value* c = addOp(b, "stablehlo.constant", {}, {tensorOf({2})},
                   {{"value", Attribute::denseResource("weights_7", tensorOf({2}), std::nullopt)}})->result(0);
  ret(b, {c}, "func.return");
  auto r = runFunction(m, "main");
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("weights_7"), std::string::npos) << r.status().toString();
  EXPECT_NE(r.status().message().find("test.mlir:"), std::string::npos) << r.status().toString();
}

TEST(MiscTest, CustomCallUnknownTargetNamesTargetAndLocation) {
  Module m;
  Operation* f = addFunction(m, "main", {tensorOf({2})}, {tensorOf({2}), tensorOf({2})});
  Block* b = bodyOf(f);
  Value* sharded = call(b, "Sharding", {b->argument(0)}, tensorOf({2}));
  Operation* unknown = addOp(b, "stablehlo.custom_call", {sharded}, {tensorOf({2})},
                             {{"call_target_name", Attribute::string("my_fancy_kernel")}});
  ret(b, {sharded, unknown->result(0)}, "func.return");
  auto r = runFunction(m, "main", {ints({2}, {1, 2})});
  ASSERT_FALSE(r);
  EXPECT_NE(r.status().message().find("my_fancy_kernel"), std::string::npos) << r.status().toString();
  EXPECT_NE(r.status().message().find(unknown->location().toString()), std::string::npos) << r.status().toString();

  // Once registered, the same program runs; Sharding is a built-in identity.
  registerCustomCall("my_fancy_kernel", [](const Operation&, std::span<const Literal> in, EvalContext&)
                                            -> Expected<std::vector<Literal>> {
    Literal out = in[0].clone();
    for (int64_t i = 0; i < out.numElements(); ++i) out.setInt(i, -out.getInt(i));
    return std::vector<Literal>{out};
  });
  auto ok = runFunction(m, "main", {ints({2}, {1, 2})});
  ASSERT_TRUE(ok) << ok.status().toString();
  EXPECT_EQ(valuesOf((*ok)[0]), (std::vector<int64_t>{1, 2}));
  EXPECT_EQ(valuesOf((*ok)[1]), (std::vector<int64_t>{-1, -2}));
}

}  // namespace
}  // namespace wf
