// Data-movement kernels against nested-loop references over multi-indices, on random shapes
// (rank 0, zero-size dims, large tiled/threaded copies) and every storage size.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <numeric>

#include "data_movement_test_util.h"

namespace wf::testing {
namespace {

ElementType pickType(std::mt19937_64& rng) { return movedTypes()[rng() % movedTypes().size()]; }

// Results these kernels write whole are allocated unwritten (makeTensorToOverwrite): a block of
// the result's size is filled with 0xA5 bytes and freed first, so that the allocator likely hands
// it out again and an element left unwritten shows in the comparison.
void poisonFreedMemory(const Operation& op) {
  if (op.numResults() != 1 || !op.result(0)->type().isTensor() || !op.result(0)->type().hasStaticShape()) return;
  Literal poison = Literal::uninitialized(op.result(0)->type());
  if (poison.sizeBytes() > 0) std::memset(poison.data(), 0xA5, poison.sizeBytes());
}

Literal runOne(const Operation& op, const std::vector<Literal>& operands) {
  poisonFreedMemory(op);
  auto r = runKernel(op, operands);
  EXPECT_TRUE(r.hasValue()) << r.status().toString();
  if (!r.hasValue() || r->size() != 1) return Literal();
  return (*r)[0];
}

TEST(DataMovement, TransposeMatchesReference) {
  std::mt19937_64 rng(1);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t rank = randInt(rng, 0, 5);
    std::vector<int64_t> shape = randomShape(rng, rank, iter % 10 == 0 && rank <= 3 ? 40 : 5);
    ElementType t = pickType(rng);
    Literal in = randomTensor(shape, t, rng);
    std::vector<int64_t> perm(static_cast<size_t>(rank));
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    std::vector<int64_t> outShape;
    for (int64_t p : perm) outShape.push_back(shape[static_cast<size_t>(p)]);
    auto op = makeOp("stablehlo.transpose", {Type::tensor(outShape, t)}, {{"permutation", i64s(perm)}});
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i(static_cast<size_t>(rank));
      for (size_t k = 0; k < perm.size(); ++k) i[static_cast<size_t>(perm[k])] = o[k];
      copyElement(expected, o, in, i);
    });
    expectSame(runOne(*op, {in}), expected, "transpose " + in.type().toString());
  }
}

TEST(DataMovement, LargeTransposeAndBroadcast) {
  // Big enough for the thread pool and the tiled transpose path.
  std::mt19937_64 rng(2);
  for (ElementType t : {ElementType::kF32, ElementType::kBF16, ElementType::kComplexF64, ElementType::kUI8}) {
    std::vector<int64_t> shape = {3, 517, 389};
    Literal in = randomTensor(shape, t, rng);
    std::vector<int64_t> outShape = {389, 3, 517};
    auto op = makeOp("stablehlo.transpose", {Type::tensor(outShape, t)}, {{"permutation", i64s({2, 0, 1})}});
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) { copyElement(expected, o, in, {o[1], o[2], o[0]}); });
    expectSame(runOne(*op, {in}), expected, "large transpose");

    std::vector<int64_t> bShape = {517, 7, 389};
    Literal row = randomTensor({517, 1}, t, rng);
    auto bop = makeOp("stablehlo.broadcast_in_dim", {Type::tensor(bShape, t)},
                      {{"broadcast_dimensions", i64s({0, 2})}});
    Literal bexp = Literal::zeros(Type::tensor(bShape, t));
    forAllIndices(bShape, [&](const std::vector<int64_t>& o) { copyElement(bexp, o, row, {o[0], 0}); });
    expectSame(runOne(*bop, {row}), bexp, "large broadcast");
  }
}

TEST(DataMovement, BroadcastInDimMatchesReference) {
  std::mt19937_64 rng(3);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t outRank = randInt(rng, 0, 5);
    std::vector<int64_t> outShape = randomShape(rng, outRank);
    // A random sorted subset of result dims; operand dims are the same size or 1.
    std::vector<int64_t> dims, inShape;
    for (int64_t d = 0; d < outRank; ++d)
      if (rng() % 2) {
        dims.push_back(d);
        inShape.push_back(rng() % 3 == 0 ? 1 : outShape[static_cast<size_t>(d)]);
      }
    ElementType t = pickType(rng);
    Literal in = randomTensor(inShape, t, rng);
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i;
      for (size_t k = 0; k < dims.size(); ++k) i.push_back(inShape[k] == 1 ? 0 : o[static_cast<size_t>(dims[k])]);
      copyElement(expected, o, in, i);
    });
    auto op = makeOp("stablehlo.broadcast_in_dim", {Type::tensor(outShape, t)}, {{"broadcast_dimensions", i64s(dims)}});
    expectSame(runOne(*op, {in}), expected, "broadcast_in_dim");

    // The same through dynamic_broadcast_in_dim, shape from an operand of another int type.
    auto dop = makeOp("stablehlo.dynamic_broadcast_in_dim",
                      {Type::tensor(std::vector<int64_t>(outShape.size(), kDynamic), t)},
                      {{"broadcast_dimensions", i64s(dims)}});
    expectSame(runOne(*dop, {in, intTensor({outRank}, outShape, ElementType::kSI32)}), expected,
               "dynamic_broadcast_in_dim");
  }
}

TEST(DataMovement, Broadcast) {
  std::mt19937_64 rng(4);
  Literal in = randomTensor({2, 3}, ElementType::kF16, rng);
  auto op = makeOp("stablehlo.broadcast", {Type::tensor({4, 2, 3}, ElementType::kF16)},
                   {{"broadcast_sizes", i64s({4})}});
  Literal expected = Literal::zeros(Type::tensor({4, 2, 3}, ElementType::kF16));
  forAllIndices({4, 2, 3}, [&](const std::vector<int64_t>& o) { copyElement(expected, o, in, {o[1], o[2]}); });
  expectSame(runOne(*op, {in}), expected, "broadcast");
}

TEST(DataMovement, SliceReverseAndRealDynamicSlice) {
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t rank = randInt(rng, 0, 4);
    std::vector<int64_t> shape = randomShape(rng, rank, 7);
    ElementType t = pickType(rng);
    Literal in = randomTensor(shape, t, rng);
    std::vector<int64_t> start, limit, strides, outShape, revDims;
    for (int64_t n : shape) {
      int64_t a = randInt(rng, 0, n), b = randInt(rng, 0, n);
      start.push_back(std::min(a, b));
      limit.push_back(std::max(a, b));
      strides.push_back(randInt(rng, 1, 3));
      outShape.push_back((limit.back() - start.back() + strides.back() - 1) / strides.back());
    }
    for (int64_t d = 0; d < rank; ++d)
      if (rng() % 2) revDims.push_back(d);
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i;
      for (size_t d = 0; d < o.size(); ++d) i.push_back(start[d] + o[d] * strides[d]);
      copyElement(expected, o, in, i);
    });
    auto op = makeOp("stablehlo.slice", {Type::tensor(outShape, t)},
                     {{"start_indices", i64s(start)}, {"limit_indices", i64s(limit)}, {"strides", i64s(strides)}});
    expectSame(runOne(*op, {in}), expected, "slice");
    auto dop = makeOp("stablehlo.real_dynamic_slice", {Type::tensor(outShape, t)});
    expectSame(runOne(*dop, {in, intTensor({rank}, start, ElementType::kUI32), intTensor({rank}, limit),
                             intTensor({rank}, strides, ElementType::kSI8)}),
               expected, "real_dynamic_slice");

    Literal rexp = Literal::zeros(Type::tensor(shape, t));
    forAllIndices(shape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      for (int64_t d : revDims) i[static_cast<size_t>(d)] = shape[static_cast<size_t>(d)] - 1 - o[static_cast<size_t>(d)];
      copyElement(rexp, o, in, i);
    });
    auto rop = makeOp("stablehlo.reverse", {Type::tensor(shape, t)}, {{"dimensions", i64s(revDims)}});
    expectSame(runOne(*rop, {in}), rexp, "reverse");
  }
}

TEST(DataMovement, SliceRejectsBadBounds) {
  std::mt19937_64 rng(6);
  Literal in = randomTensor({4}, ElementType::kF32, rng);
  auto op = makeOp("stablehlo.slice", {Type::tensor({3}, ElementType::kF32)},
                   {{"start_indices", i64s({2})}, {"limit_indices", i64s({5})}, {"strides", i64s({1})}});
  auto r = runKernel(*op, {in});
  ASSERT_FALSE(r.hasValue());
  EXPECT_NE(r.status().message().find("stablehlo.slice"), std::string::npos);
}

TEST(DataMovement, ConcatenateMatchesReference) {
  std::mt19937_64 rng(7);
  for (int iter = 0; iter < 200; ++iter) {
    const int64_t rank = randInt(rng, 1, 4);
    std::vector<int64_t> shape = randomShape(rng, rank);
    const int64_t dim = randInt(rng, 0, rank - 1);
    ElementType t = pickType(rng);
    std::vector<Literal> ins;
    std::vector<int64_t> outShape = shape;
    outShape[static_cast<size_t>(dim)] = 0;
    const int64_t count = randInt(rng, 1, 4);
    for (int64_t i = 0; i < count; ++i) {
      std::vector<int64_t> s = shape;
      s[static_cast<size_t>(dim)] = randInt(rng, 0, 4);
      outShape[static_cast<size_t>(dim)] += s[static_cast<size_t>(dim)];
      ins.push_back(randomTensor(s, t, rng));
    }
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      size_t k = 0;
      while (i[static_cast<size_t>(dim)] >= ins[k].shape()[static_cast<size_t>(dim)]) {
        i[static_cast<size_t>(dim)] -= ins[k].shape()[static_cast<size_t>(dim)];
        ++k;
      }
      copyElement(expected, o, ins[k], i);
    });
    auto op = makeOp("stablehlo.concatenate", {Type::tensor(outShape, t)}, {{"dimension", i64(dim)}});
    expectSame(runOne(*op, ins), expected, "concatenate");
  }
}

TEST(DataMovement, PadMatchesReference) {
  std::mt19937_64 rng(8);
  int tested = 0;
  while (tested < 300) {
    const int64_t rank = randInt(rng, 0, 4);
    std::vector<int64_t> shape = randomShape(rng, rank);
    std::vector<int64_t> low, high, interior, outShape;
    bool ok = true;
    for (int64_t n : shape) {
      low.push_back(randInt(rng, -3, 3));
      high.push_back(randInt(rng, -3, 3));
      interior.push_back(randInt(rng, 0, 2));
      const int64_t dilated = n == 0 ? 0 : n + (n - 1) * interior.back();
      outShape.push_back(low.back() + dilated + high.back());
      ok = ok && outShape.back() >= 0;
    }
    if (!ok) continue;
    ++tested;
    ElementType t = pickType(rng);
    Literal in = randomTensor(shape, t, rng);
    Literal padValue = randomTensor({}, t, rng);
    Literal expected = Literal::zeros(Type::tensor(outShape, t));
    forAllIndices(outShape, [&](const std::vector<int64_t>& o) { copyElement(expected, o, padValue, {}); });
    forAllIndices(shape, [&](const std::vector<int64_t>& i) {
      std::vector<int64_t> o;
      for (size_t d = 0; d < i.size(); ++d) {
        o.push_back(low[d] + i[d] * (interior[d] + 1));
        if (o.back() < 0 || o.back() >= outShape[d]) return;
      }
      copyElement(expected, o, in, i);
    });
    auto op = makeOp("stablehlo.pad", {Type::tensor(outShape, t)},
                     {{"edge_padding_low", i64s(low)}, {"edge_padding_high", i64s(high)},
                      {"interior_padding", i64s(interior)}});
    expectSame(runOne(*op, {in, padValue}), expected, "pad");
    auto dop = makeOp("stablehlo.dynamic_pad", {Type::tensor(std::vector<int64_t>(outShape.size(), kDynamic), t)});
    expectSame(runOne(*dop, {in, padValue, intTensor({rank}, low), intTensor({rank}, high, ElementType::kSI32),
                             intTensor({rank}, interior)}),
               expected, "dynamic_pad");
  }
}

TEST(DataMovement, ReshapeKeepsRowMajorOrder) {
  std::mt19937_64 rng(9);
  Literal in = randomTensor({2, 3, 4}, ElementType::kComplexF32, rng);
  auto op = makeOp("stablehlo.reshape", {Type::tensor({4, 6}, ElementType::kComplexF32)});
  Literal out = runOne(*op, {in});
  ASSERT_EQ(out.shape(), (std::vector<int64_t>{4, 6}));
  EXPECT_EQ(std::memcmp(out.data(), in.data(), in.sizeBytes()), 0);
  auto dop = makeOp("stablehlo.dynamic_reshape", {Type::tensor({kDynamic, kDynamic}, ElementType::kComplexF32)});
  Literal dout = runOne(*dop, {in, intTensor({2}, {8, 3}, ElementType::kUI16)});
  ASSERT_EQ(dout.shape(), (std::vector<int64_t>{8, 3}));
  EXPECT_EQ(std::memcmp(dout.data(), in.data(), in.sizeBytes()), 0);
  auto bad = makeOp("stablehlo.dynamic_reshape", {Type::tensor({kDynamic}, ElementType::kComplexF32)});
  EXPECT_FALSE(runKernel(*bad, {in, intTensor({1}, {5})}).hasValue());
}

TEST(DataMovement, IotaEveryNumericType) {
  const std::vector<ElementType> types = {ElementType::kSI8, ElementType::kUI32, ElementType::kSI64,
                                          ElementType::kBF16, ElementType::kF16, ElementType::kF32,
                                          ElementType::kF64, ElementType::kF8E5M2, ElementType::kComplexF32};
  for (ElementType t : types) {
    for (int64_t dim = 0; dim < 3; ++dim) {
      std::vector<int64_t> shape = {3, 5, 2};
      auto op = makeOp("stablehlo.iota", {Type::tensor(shape, t)}, {{"iota_dimension", i64(dim)}});
      Literal out = runOne(*op, {});
      ASSERT_EQ(out.type(), Type::tensor(shape, t));
      forAllIndices(shape, [&](const std::vector<int64_t>& o) {
        EXPECT_EQ(out.getDouble(linearIndex(shape, o)), static_cast<double>(o[static_cast<size_t>(dim)]))
            << elementTypeName(t);
      });
      auto dop = makeOp("stablehlo.dynamic_iota", {Type::tensor({kDynamic, kDynamic, kDynamic}, t)},
                        {{"iota_dimension", i64(dim)}});
      expectSame(runOne(*dop, {intTensor({3}, shape, ElementType::kSI32)}), out, "dynamic_iota");
    }
  }
  auto empty = makeOp("stablehlo.iota", {Type::tensor({0, 4}, ElementType::kF32)}, {{"iota_dimension", i64(1)}});
  EXPECT_EQ(runOne(*empty, {}).numElements(), 0);
}

TEST(DataMovement, GetDimensionSize) {
  std::mt19937_64 rng(10);
  Literal in = randomTensor({2, 7, 0}, ElementType::kF32, rng);
  for (int64_t d = 0; d < 3; ++d) {
    auto op = makeOp("stablehlo.get_dimension_size", {Type::scalar(ElementType::kSI32)}, {{"dimension", i64(d)}});
    Literal out = runOne(*op, {in});
    EXPECT_EQ(out.type(), Type::scalar(ElementType::kSI32));
    EXPECT_EQ(out.getInt(0), in.shape()[static_cast<size_t>(d)]);
  }
  auto bad = makeOp("stablehlo.get_dimension_size", {Type::scalar(ElementType::kSI32)}, {{"dimension", i64(3)}});
  EXPECT_FALSE(runKernel(*bad, {in}).hasValue());
}

}  // namespace
}  // namespace wf::testing
