// Tests of stablehlo.reduce, reduce_window, select_and_scatter and map against naive float64 /
// spec-literal references on random data. General-path tests need the elementwise kernels
// (add, compare, select, ...) and are skipped until those are registered.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "reduce_test_util.h"

namespace wf {
namespace {

using namespace testing_util;

std::unique_ptr<Operation> makeReduce(const std::vector<Literal>& inputs, ElementType t,
                                      const std::vector<int64_t>& dims, const std::string& bodyOp) {
  auto op = newOp("stablehlo.reduce");
  op->setAttr("dimensions", Attribute::denseArray(ElementType::kSI64, dims));
  addBinaryRegion(*op, bodyOp, t);
  (void)inputs;
  return op;
}

// Naive reference: folds every reduced position into a double accumulator per result element.
std::vector<double> referenceReduce(const Literal& x, const std::vector<int64_t>& dims, double init,
                                    double (*f)(double, double), std::vector<int64_t>* outShape) {
  const auto& shape = x.shape();
  std::vector<bool> red(shape.size(), false);
  for (int64_t d : dims) red[static_cast<size_t>(d)] = true;
  outShape->clear();
  for (size_t d = 0; d < shape.size(); ++d)
    if (!red[d]) outShape->push_back(shape[d]);
  int64_t n = 1;
  for (int64_t s : *outShape) n *= s;
  std::vector<double> out(static_cast<size_t>(n), init);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    auto c = unravel(i, shape);
    std::vector<int64_t> oc;
    for (size_t d = 0; d < shape.size(); ++d)
      if (!red[d]) oc.push_back(c[d]);
    size_t o = static_cast<size_t>(ravel(oc, *outShape));
    out[o] = f(out[o], x.getDouble(i));
  }
  return out;
}

double addD(double a, double b) { return a + b; }
double absAddD(double a, double b) { return a + std::fabs(b); }
double maxD(double a, double b) { return std::max(a, b); }
double minD(double a, double b) { return std::min(a, b); }

TEST(Reduce, SumEveryDimSubsetF32AgainstFloat64) {
  std::mt19937 rng(1);
  std::vector<int64_t> shape{3, 4, 5, 7};
  Literal x = randomLiteral(shape, ElementType::kF32, rng);
  Literal init = Literal::scalarDouble(ElementType::kF32, 0.5);
  for (int mask = 0; mask < 16; ++mask) {
    std::vector<int64_t> dims;
    for (int d = 0; d < 4; ++d)
      if (mask & (1 << d)) dims.push_back(d);
    auto op = makeReduce({x}, ElementType::kF32, dims, "stablehlo.add");
    auto r = runKernel(*op, {x, init});
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    std::vector<int64_t> outShape;
    auto ref = referenceReduce(x, dims, 0.5, addD, &outShape);
    auto mag = referenceReduce(x, dims, 0.5, absAddD, &outShape);
    ASSERT_EQ((*r)[0].shape(), outShape) << "mask " << mask;
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_NEAR((*r)[0].getDouble(static_cast<int64_t>(i)), ref[i], 1e-6 * mag[i] + 1e-7) << "mask " << mask;
  }
}

TEST(Reduce, LargeF32SumsStayAccurate) {
  std::mt19937 rng(2);
  std::vector<int64_t> shape{300, 2000};
  Literal x = randomLiteral(shape, ElementType::kF32, rng, 0, 1);
  Literal init = Literal::scalarDouble(ElementType::kF32, 0);
  for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1}, {0, 1}}) {
    auto op = makeReduce({x}, ElementType::kF32, dims, "stablehlo.add");
    auto r = runKernel(*op, {x, init});
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    std::vector<int64_t> outShape;
    auto ref = referenceReduce(x, dims, 0, addD, &outShape);
    for (size_t i = 0; i < ref.size(); ++i)
      EXPECT_NEAR((*r)[0].getDouble(static_cast<int64_t>(i)), ref[i], 1e-5 * ref[i]);
  }
}

TEST(Reduce, MaxMinExactForFloatAndIntTypes) {
  std::mt19937 rng(3);
  std::vector<int64_t> shape{4, 6, 9};
  for (ElementType t : {ElementType::kF32, ElementType::kF64, ElementType::kBF16, ElementType::kF16,
                        ElementType::kSI8, ElementType::kUI16, ElementType::kSI32, ElementType::kUI64}) {
    bool isF = isFloat(t);
    Literal x = randomLiteral(shape, t, rng, isF ? -100 : 0, 100);
    for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1}, {2}, {0, 2}, {1, 2}, {0, 1, 2}}) {
      for (bool isMax : {true, false}) {
        double initV = isMax ? (isF ? -1e30 : 0) : (isF ? 1e30 : 127);
        Literal init = Literal::zeros(Type::scalar(t));
        if (isF) init.setDouble(0, initV);
        else init.setInt(0, static_cast<int64_t>(initV));
        auto op = makeReduce({x}, t, dims, isMax ? "stablehlo.maximum" : "stablehlo.minimum");
        auto r = runKernel(*op, {x, init});
        ASSERT_TRUE(r.hasValue()) << r.status().toString();
        std::vector<int64_t> outShape;
        auto ref = referenceReduce(x, dims, init.getDouble(0), isMax ? maxD : minD, &outShape);
        for (size_t i = 0; i < ref.size(); ++i)
          ASSERT_EQ((*r)[0].getDouble(static_cast<int64_t>(i)), ref[i]) << elementTypeName(t);
      }
    }
  }
}

TEST(Reduce, IntegerAddWrapsAndBitwiseOps) {
  std::mt19937 rng(4);
  std::vector<int64_t> shape{5, 33};
  Literal x = randomLiteral(shape, ElementType::kSI8, rng, -128, 127);
  for (const char* body : {"stablehlo.add", "stablehlo.multiply", "stablehlo.and", "stablehlo.or", "stablehlo.xor"}) {
    std::string b = body;
    int64_t initV = b == "stablehlo.multiply" ? 1 : (b == "stablehlo.and" ? -1 : 0);
    Literal init = Literal::scalarInt(ElementType::kSI8, initV);
    for (int64_t dim : {0, 1}) {
      auto op = makeReduce({x}, ElementType::kSI8, {dim}, body);
      auto r = runKernel(*op, {x, init});
      ASSERT_TRUE(r.hasValue()) << r.status().toString();
      int64_t outer = shape[static_cast<size_t>(1 - dim)];
      for (int64_t o = 0; o < outer; ++o) {
        uint8_t acc = static_cast<uint8_t>(initV);
        for (int64_t i = 0; i < shape[static_cast<size_t>(dim)]; ++i) {
          int64_t idx = dim == 0 ? i * shape[1] + o : o * shape[1] + i;
          auto v = static_cast<uint8_t>(x.getInt(idx));
          if (b == "stablehlo.add") acc = static_cast<uint8_t>(acc + v);
          else if (b == "stablehlo.multiply") acc = static_cast<uint8_t>(acc * v);
          else if (b == "stablehlo.and") acc &= v;
          else if (b == "stablehlo.or") acc |= v;
          else acc ^= v;
        }
        EXPECT_EQ((*r)[0].getInt(o), static_cast<int8_t>(acc)) << body << " dim " << dim;
      }
    }
  }
}

TEST(Reduce, Bf16SumRoundsEveryStepButStaysClose) {
  std::mt19937 rng(5);
  Literal x = randomLiteral({8, 100}, ElementType::kBF16, rng, 0, 1);
  auto op = makeReduce({x}, ElementType::kBF16, {1}, "stablehlo.add");
  auto r = runKernel(*op, {x, Literal::scalarDouble(ElementType::kBF16, 0)});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  std::vector<int64_t> outShape;
  auto ref = referenceReduce(x, {1}, 0, addD, &outShape);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR((*r)[0].getDouble(static_cast<int64_t>(i)), ref[i], 0.03 * ref[i]);
}

TEST(Reduce, InitAppliedOnceAndEmptyDims) {
  Literal x = Literal::zeros(Type::tensor({2, 3}, ElementType::kSI32));
  for (int64_t i = 0; i < 6; ++i) x.setInt(i, i + 1);
  auto op = makeReduce({x}, ElementType::kSI32, {1}, "stablehlo.add");
  auto r = runKernel(*op, {x, Literal::scalarInt(ElementType::kSI32, 10)});
  ASSERT_TRUE(r.hasValue());
  EXPECT_EQ((*r)[0].getInt(0), 16);
  EXPECT_EQ((*r)[0].getInt(1), 25);

  // Reducing a zero-size dimension yields the init value; keeping one yields an empty result.
  Literal empty = Literal::zeros(Type::tensor({0, 3}, ElementType::kF32));
  auto op0 = makeReduce({empty}, ElementType::kF32, {0}, "stablehlo.maximum");
  auto r0 = runKernel(*op0, {empty, Literal::scalarDouble(ElementType::kF32, -INFINITY)});
  ASSERT_TRUE(r0.hasValue());
  ASSERT_EQ((*r0)[0].shape(), std::vector<int64_t>{3});
  for (int64_t i = 0; i < 3; ++i) EXPECT_EQ((*r0)[0].getDouble(i), -INFINITY);
  auto op1 = makeReduce({empty}, ElementType::kF32, {1}, "stablehlo.add");
  auto r1 = runKernel(*op1, {empty, Literal::scalarDouble(ElementType::kF32, 0)});
  ASSERT_TRUE(r1.hasValue());
  EXPECT_EQ((*r1)[0].shape(), std::vector<int64_t>{0});
}

TEST(Reduce, MaxMinPropagateNaNAndOrderSignedZeros) {
  Literal x = Literal::zeros(Type::tensor({3, 4}, ElementType::kF32));
  float vals[] = {1, NAN, 3, 2, -0.0f, 0.0f, -0.0f, -0.0f, 5, 6, 7, 8};
  for (int i = 0; i < 12; ++i) x.setDouble(i, vals[i]);
  Literal ninf = Literal::scalarDouble(ElementType::kF32, -INFINITY);
  auto mx = runKernel(*makeReduce({x}, ElementType::kF32, {1}, "stablehlo.maximum"), {x, ninf});
  ASSERT_TRUE(mx.hasValue());
  EXPECT_TRUE(std::isnan((*mx)[0].getDouble(0)));
  EXPECT_EQ((*mx)[0].getDouble(1), 0.0);
  EXPECT_FALSE(std::signbit((*mx)[0].getDouble(1)));
  EXPECT_EQ((*mx)[0].getDouble(2), 8);
  auto mn = runKernel(*makeReduce({x}, ElementType::kF32, {1}, "stablehlo.minimum"),
                      {x, Literal::scalarDouble(ElementType::kF32, INFINITY)});
  ASSERT_TRUE(mn.hasValue());
  EXPECT_TRUE(std::isnan((*mn)[0].getDouble(0)));
  EXPECT_TRUE(std::signbit((*mn)[0].getDouble(1)));
}

TEST(Reduce, BooleanAddIsOr) {
  Literal x = Literal::zeros(Type::tensor({2, 3}, ElementType::kI1));
  x.setInt(4, 1);
  auto r = runKernel(*makeReduce({x}, ElementType::kI1, {1}, "stablehlo.add"), {x, Literal::scalarInt(ElementType::kI1, 0)});
  ASSERT_TRUE(r.hasValue());
  EXPECT_EQ((*r)[0].getInt(0), 0);
  EXPECT_EQ((*r)[0].getInt(1), 1);
}

TEST(Reduce, GeneralPathMatchesFastPath) {
  if (!haveKernels({OpCode::Add, OpCode::Maximum})) GTEST_SKIP() << "elementwise kernels not registered";
  std::mt19937 rng(6);
  for (ElementType t : {ElementType::kF32, ElementType::kSI32, ElementType::kF16}) {
    Literal x = randomLiteral({3, 5, 4}, t, rng, -50, 50);
    for (const char* body : {"stablehlo.add", "stablehlo.maximum"}) {
      for (std::vector<int64_t> dims : {std::vector<int64_t>{0}, {1, 2}, {0, 2}}) {
        auto op = makeReduce({x}, t, dims, body);
        Literal init = Literal::zeros(Type::scalar(t));
        auto fast = runKernel(*op, {x, init});
        ASSERT_TRUE(fast.hasValue()) << fast.status().toString();
        GeneralPathOnly general;
        auto slow = runKernel(*op, {x, init});
        ASSERT_TRUE(slow.hasValue()) << slow.status().toString();
        // The paths add in different orders; f16 rounds every step, so allow a few of its ulps.
        double rel = t == ElementType::kF16 ? 1e-2 : 1e-5;
        for (int64_t i = 0; i < (*fast)[0].numElements(); ++i)
          EXPECT_NEAR((*fast)[0].getDouble(i), (*slow)[0].getDouble(i), rel * std::fabs((*slow)[0].getDouble(i)) + 1e-4);
      }
    }
  }
}

// The variadic argmax reduce JAX emits: (value, index) pairs, the larger value wins, ties go to the
// smaller index.
TEST(Reduce, VariadicArgmaxAgainstNaive) {
  if (!haveKernels({OpCode::Compare, OpCode::And, OpCode::Or, OpCode::Select}))
    GTEST_SKIP() << "elementwise kernels not registered";
  auto op = newOp("stablehlo.reduce");
  op->setAttr("dimensions", Attribute::denseArray(ElementType::kSI64, {1}));
  Block* b = op->addRegion()->addBlock();
  Type f = Type::scalar(ElementType::kF32), i = Type::scalar(ElementType::kSI32),
       p = Type::scalar(ElementType::kI1);
  Value* av = b->addArgument(f);
  Value* ai = b->addArgument(i);
  Value* bv = b->addArgument(f);
  Value* bi = b->addArgument(i);
  Value* gt = emit(b, "stablehlo.compare", {av, bv}, p, {{"comparison_direction", cmpDir("GT")}});
  Value* eq = emit(b, "stablehlo.compare", {av, bv}, p, {{"comparison_direction", cmpDir("EQ")}});
  Value* lt = emit(b, "stablehlo.compare", {ai, bi}, p, {{"comparison_direction", cmpDir("LT")}});
  Value* tie = emit(b, "stablehlo.and", {eq, lt}, p);
  Value* pickA = emit(b, "stablehlo.or", {gt, tie}, p);
  Value* v = emit(b, "stablehlo.select", {pickA, av, bv}, f);
  Value* idx = emit(b, "stablehlo.select", {pickA, ai, bi}, i);
  emitReturn(b, {v, idx});

  std::mt19937 rng(7);
  Literal x = randomLiteral({6, 17}, ElementType::kF32, rng, 0, 5);
  for (int64_t k = 0; k < x.numElements(); ++k) x.setDouble(k, std::floor(x.getDouble(k)));  // many ties
  Literal iota = Literal::zeros(Type::tensor({6, 17}, ElementType::kSI32));
  for (int64_t k = 0; k < iota.numElements(); ++k) iota.setInt(k, k % 17);
  auto r = runKernel(*op, {x, iota, Literal::scalarDouble(ElementType::kF32, -INFINITY),
                           Literal::scalarInt(ElementType::kSI32, 0)});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  for (int64_t row = 0; row < 6; ++row) {
    int64_t best = 0;
    for (int64_t c = 1; c < 17; ++c)
      if (x.getDouble(row * 17 + c) > x.getDouble(row * 17 + best)) best = c;
    EXPECT_EQ((*r)[1].getInt(row), best);
    EXPECT_EQ((*r)[0].getDouble(row), x.getDouble(row * 17 + best));
  }
}

// ---- reduce_window ------------------------------------------------------------------------------

struct WindowCase {
  std::vector<int64_t> shape, window, strides, baseDil, winDil;
  std::vector<int64_t> padding;  // rank x 2
};

std::unique_ptr<Operation> makeReduceWindow(const WindowCase& c, ElementType t, const std::string& body) {
  auto op = newOp("stablehlo.reduce_window");
  op->setAttr("window_dimensions", Attribute::denseArray(ElementType::kSI64, c.window));
  op->setAttr("window_strides", Attribute::denseArray(ElementType::kSI64, c.strides));
  op->setAttr("base_dilations", Attribute::denseArray(ElementType::kSI64, c.baseDil));
  op->setAttr("window_dilations", Attribute::denseArray(ElementType::kSI64, c.winDil));
  Literal pad = Literal::zeros(Type::tensor({static_cast<int64_t>(c.shape.size()), 2}, ElementType::kSI64));
  for (size_t i = 0; i < c.padding.size(); ++i) pad.setInt(static_cast<int64_t>(i), c.padding[i]);
  op->setAttr("padding", Attribute::denseElements(pad));
  addBinaryRegion(*op, body, t);
  return op;
}

// Spec-literal reference: build the padded, base-dilated input filled with init, then fold each
// dilated window.
std::vector<double> referenceReduceWindow(const Literal& x, const WindowCase& c, double init,
                                          double (*f)(double, double), std::vector<int64_t>* outShape) {
  size_t rank = c.shape.size();
  std::vector<int64_t> padded(rank);
  for (size_t d = 0; d < rank; ++d) {
    int64_t dil = c.shape[d] == 0 ? 0 : (c.shape[d] - 1) * c.baseDil[d] + 1;
    padded[d] = c.padding[2 * d] + dil + c.padding[2 * d + 1];
  }
  int64_t np = 1;
  for (int64_t s : padded) np *= s;
  std::vector<double> p(static_cast<size_t>(std::max<int64_t>(np, 0)), init);
  for (int64_t i = 0; i < x.numElements(); ++i) {
    auto ci = unravel(i, c.shape);
    for (size_t d = 0; d < rank; ++d) ci[d] = c.padding[2 * d] + ci[d] * c.baseDil[d];
    bool in = true;
    for (size_t d = 0; d < rank; ++d) in = in && ci[d] >= 0 && ci[d] < padded[d];
    if (in) p[static_cast<size_t>(ravel(ci, padded))] = x.getDouble(i);
  }
  outShape->assign(rank, 0);
  for (size_t d = 0; d < rank; ++d) {
    int64_t dw = (c.window[d] - 1) * c.winDil[d] + 1;
    (*outShape)[d] = (padded[d] <= 0 || dw > padded[d]) ? 0 : (padded[d] - dw) / c.strides[d] + 1;
  }
  int64_t no = 1, nw = 1;
  for (int64_t s : *outShape) no *= s;
  for (int64_t s : c.window) nw *= s;
  std::vector<double> out(static_cast<size_t>(no));
  for (int64_t o = 0; o < no; ++o) {
    auto oc = unravel(o, *outShape);
    double acc = init;
    for (int64_t w = 0; w < nw; ++w) {
      auto wc = unravel(w, c.window);
      std::vector<int64_t> pc(rank);
      for (size_t d = 0; d < rank; ++d) pc[d] = oc[d] * c.strides[d] + wc[d] * c.winDil[d];
      acc = f(acc, p[static_cast<size_t>(ravel(pc, padded))]);
    }
    out[static_cast<size_t>(o)] = acc;
  }
  return out;
}

TEST(ReduceWindow, SpecExample) {
  Literal x = Literal::zeros(Type::tensor({3, 2}, ElementType::kSI64));
  for (int64_t i = 0; i < 6; ++i) x.setInt(i, i + 1);
  WindowCase c{{3, 2}, {2, 1}, {4, 1}, {2, 1}, {3, 1}, {2, 1, 0, 0}};
  auto r = runKernel(*makeReduceWindow(c, ElementType::kSI64, "stablehlo.add"), {x, Literal::scalarInt(ElementType::kSI64, 0)});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  ASSERT_EQ((*r)[0].shape(), (std::vector<int64_t>{2, 2}));
  std::vector<int64_t> want{0, 0, 3, 4};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].getInt(i), want[static_cast<size_t>(i)]);
}

TEST(ReduceWindow, PoolingWithPaddingAndDilationsAgainstReference) {
  std::mt19937 rng(8);
  std::vector<WindowCase> cases{
      {{2, 9, 11, 3}, {1, 3, 3, 1}, {1, 2, 2, 1}, {1, 1, 1, 1}, {1, 1, 1, 1}, {0, 0, 1, 1, 1, 1, 0, 0}},
      {{7, 8}, {2, 3}, {1, 2}, {2, 1}, {2, 2}, {1, 2, 0, 3}},
      {{5, 6}, {3, 2}, {3, 1}, {1, 3}, {1, 1}, {2, -1, 1, 1}},
      {{10}, {4}, {3}, {1}, {1}, {0, 0}},
  };
  for (const WindowCase& c : cases) {
    for (ElementType t : {ElementType::kF32, ElementType::kSI64, ElementType::kBF16}) {
      Literal x = randomLiteral(c.shape, t, rng, -20, 20);
      for (const char* body : {"stablehlo.add", "stablehlo.maximum", "stablehlo.minimum"}) {
        std::string b = body;
        double init = b == "stablehlo.add" ? 1 : (b == "stablehlo.maximum" ? -1000 : 1000);
        double (*f)(double, double) = b == "stablehlo.add" ? addD : (b == "stablehlo.maximum" ? maxD : minD);
        Literal initL = Literal::zeros(Type::scalar(t));
        initL.setDouble(0, init);
        auto op = makeReduceWindow(c, t, body);
        auto r = runKernel(*op, {x, initL});
        ASSERT_TRUE(r.hasValue()) << r.status().toString();
        std::vector<int64_t> outShape;
        auto ref = referenceReduceWindow(x, c, init, f, &outShape);
        ASSERT_EQ((*r)[0].shape(), outShape);
        double tol = t == ElementType::kBF16 ? 4 : 1e-4;  // bf16 rounds every step
        for (size_t i = 0; i < ref.size(); ++i)
          ASSERT_NEAR((*r)[0].getDouble(static_cast<int64_t>(i)), ref[i], tol) << body << " " << elementTypeName(t);
        if (haveKernels({OpCode::Add, OpCode::Maximum, OpCode::Minimum}) && t != ElementType::kBF16) {
          GeneralPathOnly general;
          auto g = runKernel(*op, {x, initL});
          ASSERT_TRUE(g.hasValue()) << g.status().toString();
          for (size_t i = 0; i < ref.size(); ++i)
            ASSERT_NEAR((*g)[0].getDouble(static_cast<int64_t>(i)), ref[i], tol) << "general " << body;
        }
      }
    }
  }
}

// ---- select_and_scatter -------------------------------------------------------------------------

std::unique_ptr<Operation> makeSelectAndScatter(const std::vector<int64_t>& window, const std::vector<int64_t>& strides,
                                                const std::vector<int64_t>& padding, ElementType t,
                                                const std::string& dir) {
  auto op = newOp("stablehlo.select_and_scatter");
  op->setAttr("window_dimensions", Attribute::denseArray(ElementType::kSI64, window));
  op->setAttr("window_strides", Attribute::denseArray(ElementType::kSI64, strides));
  Literal pad = Literal::zeros(Type::tensor({static_cast<int64_t>(window.size()), 2}, ElementType::kSI64));
  for (size_t i = 0; i < padding.size(); ++i) pad.setInt(static_cast<int64_t>(i), padding[i]);
  op->setAttr("padding", Attribute::denseElements(pad));
  addCompareRegion(*op, {t, t}, 0, 1, dir);
  addBinaryRegion(*op, "stablehlo.add", t);
  return op;
}

TEST(SelectAndScatter, SpecExample) {
  Literal operand = Literal::zeros(Type::tensor({4, 2}, ElementType::kSI64));
  std::vector<int64_t> ov{1, 5, 2, 5, 3, 6, 4, 4};
  for (int64_t i = 0; i < 8; ++i) operand.setInt(i, ov[static_cast<size_t>(i)]);
  Literal source = Literal::zeros(Type::tensor({2, 2}, ElementType::kSI64));
  for (int64_t i = 0; i < 4; ++i) source.setInt(i, 5 + i);
  auto op = makeSelectAndScatter({3, 1}, {2, 1}, {0, 1, 0, 0}, ElementType::kSI64, "GE");
  std::vector<int64_t> want{0, 0, 0, 0, 5, 14, 7, 0};
  for (bool general : {false, true}) {
    if (general && !haveKernels({OpCode::Compare, OpCode::Add})) continue;
    reduce_detail::setFastPathsEnabled(!general);
    auto r = runKernel(*op, {operand, source, Literal::scalarInt(ElementType::kSI64, 0)});
    reduce_detail::setFastPathsEnabled(true);
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    for (int64_t i = 0; i < 8; ++i) EXPECT_EQ((*r)[0].getInt(i), want[static_cast<size_t>(i)]) << general;
  }
}

TEST(SelectAndScatter, MaxPoolGradientAgainstNaive) {
  std::mt19937 rng(9);
  std::vector<int64_t> shape{6, 7};
  std::vector<int64_t> window{3, 2}, strides{2, 2}, padding{1, 1, 0, 1};
  Literal operand = randomLiteral(shape, ElementType::kF32, rng, -5, 5);
  std::vector<int64_t> srcShape{(6 + 2 - 3) / 2 + 1, (7 + 1 - 2) / 2 + 1};
  Literal source = randomLiteral(srcShape, ElementType::kF32, rng, 0, 1);
  auto op = makeSelectAndScatter(window, strides, padding, ElementType::kF32, "GE");
  auto r = runKernel(*op, {operand, source, Literal::scalarDouble(ElementType::kF32, 0)});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  std::vector<double> want(42, 0);
  for (int64_t s = 0; s < source.numElements(); ++s) {
    auto sc = unravel(s, srcShape);
    int64_t best = -1;
    for (int64_t w0 = 0; w0 < 3; ++w0)
      for (int64_t w1 = 0; w1 < 2; ++w1) {
        int64_t i0 = sc[0] * 2 + w0 - 1, i1 = sc[1] * 2 + w1 - 0;
        if (i0 < 0 || i0 >= 6 || i1 < 0 || i1 >= 7) continue;
        int64_t i = i0 * 7 + i1;
        if (best < 0 || operand.getDouble(i) > operand.getDouble(best)) best = i;  // first max wins (GE)
      }
    want[static_cast<size_t>(best)] += source.getDouble(s);
  }
  for (int64_t i = 0; i < 42; ++i) EXPECT_NEAR((*r)[0].getDouble(i), want[static_cast<size_t>(i)], 1e-5);
}

// ---- map ----------------------------------------------------------------------------------------

TEST(Map, MultipliesElementwise) {
  if (!haveKernels({OpCode::Multiply})) GTEST_SKIP() << "elementwise kernels not registered";
  auto op = newOp("stablehlo.map");
  op->setAttr("dimensions", Attribute::denseArray(ElementType::kSI64, {0, 1}));
  addBinaryRegion(*op, "stablehlo.multiply", ElementType::kSI64);
  op->addResult(Type::tensor({2, 2}, ElementType::kSI64));
  Literal a = Literal::zeros(Type::tensor({2, 2}, ElementType::kSI64));
  Literal b = Literal::zeros(Type::tensor({2, 2}, ElementType::kSI64));
  for (int64_t i = 0; i < 4; ++i) {
    a.setInt(i, i);
    b.setInt(i, i + 4);
  }
  auto r = runKernel(*op, {a, b});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  std::vector<int64_t> want{0, 5, 12, 21};
  for (int64_t i = 0; i < 4; ++i) EXPECT_EQ((*r)[0].getInt(i), want[static_cast<size_t>(i)]);
}

TEST(Map, RejectsPartialDimensions) {
  auto op = newOp("stablehlo.map");
  op->setAttr("dimensions", Attribute::denseArray(ElementType::kSI64, {0}));
  addBinaryRegion(*op, "stablehlo.multiply", ElementType::kSI64);
  op->addResult(Type::tensor({2, 2}, ElementType::kSI64));
  Literal a = Literal::zeros(Type::tensor({2, 2}, ElementType::kSI64));
  auto r = runKernel(*op, {a, a});
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.status().message().find("stablehlo.map"), std::string::npos);
}

}  // namespace
}  // namespace wf
