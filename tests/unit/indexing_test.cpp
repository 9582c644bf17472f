// Indexing kernels (gather, scatter, dynamic_slice, dynamic_update_slice, torch_index_select)
// against references written straight from the spec's formulas, on random configurations with
// batching dims, out-of-bounds indices and several index types.
#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>

#include "data_movement_test_util.h"
#include "ir_build_test_util.h"

namespace wf::testing {
namespace {

std::vector<int64_t> pickSubset(std::mt19937_64& rng, std::vector<int64_t> from, size_t maxCount) {
  std::shuffle(from.begin(), from.end(), rng);
  from.resize(std::min<size_t>(from.size(), static_cast<size_t>(randInt(rng, 0, static_cast<int64_t>(maxCount)))));
  return from;
}

bool has(const std::vector<int64_t>& v, int64_t x) { return std::find(v.begin(), v.end(), x) != v.end(); }

ElementType pickIndexType(std::mt19937_64& rng) {
  const ElementType types[] = {ElementType::kSI64, ElementType::kSI32, ElementType::kUI8, ElementType::kSI16};
  return types[rng() % 4];
}

// A random, valid set of gather/scatter dimension numbers. Names follow gather; scatter maps
// offset_dims -> update_window_dims, collapsed -> inserted_window_dims, start_index_map ->
// scatter_dims_to_operand_dims.
struct IndexConfig {
  std::vector<int64_t> operandShape, indicesShape, sliceSizes;
  std::vector<int64_t> offsetDims, collapsed, operandBatching, indicesBatching, startIndexMap;
  int64_t indexVectorDim = 0;
  std::vector<int64_t> resultShape;  // gather result == scatter updates shape
  std::vector<int64_t> windowDims;   // operand dims that are neither collapsed nor batching
};

IndexConfig randomConfig(std::mt19937_64& rng) {
  IndexConfig c;
  const int64_t rank = randInt(rng, 1, 4);
  c.operandShape = randomShape(rng, rank, 5);
  for (int64_t& d : c.operandShape) d = std::max<int64_t>(d, 1);
  std::vector<int64_t> all(static_cast<size_t>(rank));
  std::iota(all.begin(), all.end(), 0);
  c.operandBatching = pickSubset(rng, all, 1);
  std::vector<int64_t> rest;
  for (int64_t d : all)
    if (!has(c.operandBatching, d)) rest.push_back(d);
  c.startIndexMap = pickSubset(rng, rest, rest.size());
  if (c.startIndexMap.empty() && !rest.empty()) c.startIndexMap.push_back(rest[0]);
  c.collapsed = pickSubset(rng, rest, rest.size());
  std::sort(c.collapsed.begin(), c.collapsed.end());
  std::sort(c.operandBatching.begin(), c.operandBatching.end());
  for (int64_t d : all) {
    const int64_t n = c.operandShape[static_cast<size_t>(d)];
    c.sliceSizes.push_back(has(c.collapsed, d) || has(c.operandBatching, d) ? 1 : randInt(rng, 0, n));
    if (!has(c.collapsed, d) && !has(c.operandBatching, d)) c.windowDims.push_back(d);
  }
  // Index tensor: plain batch dims, the batching dims at random positions, the index vector dim.
  std::vector<int64_t> batchSizes = randomShape(rng, randInt(rng, 0, 2), 3);
  std::vector<int64_t> batchingPos;  // positions in batchSizes holding operand batching dims
  for (int64_t ob : c.operandBatching) {
    const int64_t pos = randInt(rng, 0, static_cast<int64_t>(batchSizes.size()));
    batchSizes.insert(batchSizes.begin() + pos, c.operandShape[static_cast<size_t>(ob)]);
    batchingPos.push_back(pos);
  }
  const bool implicitVector = c.startIndexMap.size() == 1 && rng() % 2;
  c.indexVectorDim = implicitVector ? static_cast<int64_t>(batchSizes.size())
                                    : randInt(rng, 0, static_cast<int64_t>(batchSizes.size()));
  c.indicesShape = batchSizes;
  if (!implicitVector)
    c.indicesShape.insert(c.indicesShape.begin() + c.indexVectorDim, static_cast<int64_t>(c.startIndexMap.size()));
  for (int64_t pos : batchingPos) c.indicesBatching.push_back(pos < c.indexVectorDim || implicitVector ? pos : pos + 1);
  // Result: batch dims with offset dims at random sorted positions.
  const int64_t resultRank = static_cast<int64_t>(batchSizes.size() + c.windowDims.size());
  std::vector<int64_t> positions(static_cast<size_t>(resultRank));
  std::iota(positions.begin(), positions.end(), 0);
  std::shuffle(positions.begin(), positions.end(), rng);
  c.offsetDims.assign(positions.begin(), positions.begin() + static_cast<int64_t>(c.windowDims.size()));
  std::sort(c.offsetDims.begin(), c.offsetDims.end());
  c.resultShape.assign(static_cast<size_t>(resultRank), 0);
  size_t w = 0, b = 0;
  for (int64_t d = 0; d < resultRank; ++d)
    c.resultShape[static_cast<size_t>(d)] = has(c.offsetDims, d)
                                                ? c.sliceSizes[static_cast<size_t>(c.windowDims[w++])]
                                                : batchSizes[b++];
  return c;
}

Literal randomIndices(std::mt19937_64& rng, const IndexConfig& c, ElementType t) {
  Literal l = Literal::zeros(Type::tensor(c.indicesShape, t));
  const int64_t maxDim = *std::max_element(c.operandShape.begin(), c.operandShape.end());
  for (int64_t i = 0; i < l.numElements(); ++i)
    l.setInt(i, isUnsignedInteger(t) ? randInt(rng, 0, maxDim + 2) : randInt(rng, -2, maxDim + 2));
  return l;
}

// Per the spec: the start index vector of a batch index, and the full operand start.
std::vector<int64_t> fullStart(const IndexConfig& c, const Literal& indices, const std::vector<int64_t>& batchIndex,
                               bool clampToSlice) {
  const int64_t rank = static_cast<int64_t>(c.operandShape.size());
  std::vector<int64_t> full(static_cast<size_t>(rank), 0);
  for (size_t s = 0; s < c.startIndexMap.size(); ++s) {
    std::vector<int64_t> ii = batchIndex;
    if (c.indexVectorDim < static_cast<int64_t>(c.indicesShape.size()))
      ii.insert(ii.begin() + c.indexVectorDim, static_cast<int64_t>(s));
    int64_t v = indices.getInt(linearIndex(c.indicesShape, ii));
    const auto d = static_cast<size_t>(c.startIndexMap[s]);
    if (clampToSlice) v = std::clamp<int64_t>(v, 0, c.operandShape[d] - c.sliceSizes[d]);
    full[d] = v;
  }
  for (size_t i = 0; i < c.operandBatching.size(); ++i) {
    const int64_t ds = c.indicesBatching[i];
    full[static_cast<size_t>(c.operandBatching[i])] +=
        batchIndex[static_cast<size_t>(ds - (ds < c.indexVectorDim ? 0 : 1))];
  }
  return full;
}

Attribute gatherAttr(const IndexConfig& c) {
  auto arr = [](const std::vector<int64_t>& v) {
    std::vector<Attribute> a;
    for (int64_t x : v) a.push_back(Attribute::integer(x));
    return Attribute::array(a);
  };
  return Attribute::dialectStruct("stablehlo.gather", {{"offset_dims", arr(c.offsetDims)},
                                                       {"collapsed_slice_dims", arr(c.collapsed)},
                                                       {"operand_batching_dims", arr(c.operandBatching)},
                                                       {"start_indices_batching_dims", arr(c.indicesBatching)},
                                                       {"start_index_map", arr(c.startIndexMap)},
                                                       {"index_vector_dim", Attribute::integer(c.indexVectorDim)}});
}

Attribute scatterAttr(const IndexConfig& c) {
  auto arr = [](const std::vector<int64_t>& v) {
    std::vector<Attribute> a;
    for (int64_t x : v) a.push_back(Attribute::integer(x));
    return Attribute::array(a);
  };
  return Attribute::dialectStruct("stablehlo.scatter",
                                  {{"update_window_dims", arr(c.offsetDims)},
                                   {"inserted_window_dims", arr(c.collapsed)},
                                   {"input_batching_dims", arr(c.operandBatching)},
                                   {"scatter_indices_batching_dims", arr(c.indicesBatching)},
                                   {"scatter_dims_to_operand_dims", arr(c.startIndexMap)},
                                   {"index_vector_dim", Attribute::integer(c.indexVectorDim)}});
}

// Splits a result/update index into its batch part and its window part (operand-ranked).
void splitIndex(const IndexConfig& c, const std::vector<int64_t>& r, std::vector<int64_t>* batch,
                std::vector<int64_t>* fullOffset) {
  batch->clear();
  fullOffset->assign(c.operandShape.size(), 0);
  size_t w = 0;
  for (size_t d = 0; d < r.size(); ++d) {
    if (has(c.offsetDims, static_cast<int64_t>(d)))
      (*fullOffset)[static_cast<size_t>(c.windowDims[w++])] = r[d];
    else
      batch->push_back(r[d]);
  }
}

TEST(Indexing, GatherMatchesSpecFormula) {
  std::mt19937_64 rng(11);
  for (int iter = 0; iter < 400; ++iter) {
    IndexConfig c = randomConfig(rng);
    ElementType t = movedTypes()[rng() % movedTypes().size()];
    Literal operand = randomTensor(c.operandShape, t, rng);
    Literal indices = randomIndices(rng, c, pickIndexType(rng));
    Literal expected = Literal::zeros(Type::tensor(c.resultShape, t));
    std::vector<int64_t> batch, offset;
    forAllIndices(c.resultShape, [&](const std::vector<int64_t>& r) {
      splitIndex(c, r, &batch, &offset);
      std::vector<int64_t> start = fullStart(c, indices, batch, true);
      for (size_t d = 0; d < start.size(); ++d) start[d] += offset[d];
      copyElement(expected, r, operand, start);
    });
    auto op = makeOp("stablehlo.gather", {Type::tensor(c.resultShape, t)},
                     {{"dimension_numbers", gatherAttr(c)}, {"slice_sizes", i64s(c.sliceSizes)}});
    auto r = runKernel(*op, {operand, indices});
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    expectSame((*r)[0], expected, "gather iteration " + std::to_string(iter));

    auto dop = makeOp("stablehlo.dynamic_gather", {Type::tensor(c.resultShape, t)},
                      {{"dimension_numbers", gatherAttr(c)}});
    auto dr = runKernel(*dop, {operand, indices,
                               intTensor({static_cast<int64_t>(c.sliceSizes.size())}, c.sliceSizes, ElementType::kSI32)});
    ASSERT_TRUE(dr.hasValue()) << dr.status().toString();
    expectSame((*dr)[0], expected, "dynamic_gather");
  }
}

TEST(Indexing, LargeEmbeddingGather) {
  // Row gathers from a big table: contiguous windows, threaded over batch points.
  std::mt19937_64 rng(12);
  const int64_t rows = 1000, width = 300, n = 4000;
  Literal table = randomTensor({rows, width}, ElementType::kF32, rng);
  std::vector<int64_t> ids;
  for (int64_t i = 0; i < n; ++i) ids.push_back(randInt(rng, 0, rows - 1));
  Literal indices = intTensor({n, 1}, ids, ElementType::kSI32);
  auto arr = [](std::vector<int64_t> v) {
    std::vector<Attribute> a;
    for (int64_t x : v) a.push_back(Attribute::integer(x));
    return Attribute::array(a);
  };
  Attribute dims = Attribute::dialectStruct(
      "stablehlo.gather", {{"offset_dims", arr({1})}, {"collapsed_slice_dims", arr({0})},
                           {"start_index_map", arr({0})}, {"index_vector_dim", Attribute::integer(1)}});
  auto op = makeOp("stablehlo.gather", {Type::tensor({n, width}, ElementType::kF32)},
                   {{"dimension_numbers", dims}, {"slice_sizes", i64s({1, width})}});
  auto r = runKernel(*op, {table, indices});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  for (int64_t i = 0; i < n; ++i)
    ASSERT_EQ(std::memcmp((*r)[0].data() + i * width * 4, table.data() + ids[static_cast<size_t>(i)] * width * 4,
                          static_cast<size_t>(width * 4)),
              0);
}

// Two's-complement arithmetic without signed-overflow UB; setInt wraps to the element width.
int64_t wrapAdd(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b)); }
int64_t wrapMul(int64_t a, int64_t b) { return static_cast<int64_t>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b)); }

enum class Body { kAssign, kAdd, kRegionMul };

// The scatter update region: assign (return %update), add, or multiply through a custom_call
// (a body without a fast path, run through the interpreter).
void buildBody(Operation* op, Body body, ElementType t) {
  Block* b = addRegion(op, {Type::scalar(t), Type::scalar(t)});
  Value* current = b->argument(0);
  Value* update = b->argument(1);
  if (body == Body::kAssign) {
    ret(b, {update});
  } else if (body == Body::kAdd) {
    ret(b, {addOp(b, "stablehlo.add", {current, update}, {Type::scalar(t)})->result(0)});
  } else {
    ret(b, {call(b, "test.mul", {current, update}, Type::scalar(t))});
  }
}

TEST(Indexing, ScatterMatchesSpecFormula) {
  registerTestTargets();
  std::mt19937_64 rng(13);
  for (int iter = 0; iter < 400; ++iter) {
    IndexConfig c = randomConfig(rng);
    const Body body = static_cast<Body>(iter % 3);
    // Integer types keep add/mul exact whatever the update order; assign moves any bytes.
    const ElementType intTypes[] = {ElementType::kSI32, ElementType::kSI64, ElementType::kUI8, ElementType::kSI8};
    ElementType t = body == Body::kAssign ? movedTypes()[rng() % movedTypes().size()] : intTypes[rng() % 4];
    Literal input = randomTensor(c.operandShape, t, rng);
    Literal updates = randomTensor(c.resultShape, t, rng);
    if (body == Body::kRegionMul)  // small factors keep products readable in failures
      for (int64_t i = 0; i < updates.numElements(); ++i) updates.setInt(i, randInt(rng, -3, 3));
    Literal indices = randomIndices(rng, c, pickIndexType(rng));
    const Literal inputCopy = input.clone();

    // Reference: scatter points in row-major order, each window in row-major order (the
    // kernel's schedule; the spec leaves the order implementation-defined), skipping elements
    // that land outside the input.
    Literal expected = input.clone();
    std::vector<int64_t> batchShape;
    for (size_t d = 0; d < c.resultShape.size(); ++d)
      if (!has(c.offsetDims, static_cast<int64_t>(d))) batchShape.push_back(c.resultShape[d]);
    std::vector<int64_t> windowShape;
    for (int64_t d : c.offsetDims) windowShape.push_back(c.resultShape[static_cast<size_t>(d)]);
    forAllIndices(batchShape, [&](const std::vector<int64_t>& bi) {
      const std::vector<int64_t> start = fullStart(c, indices, bi, false);
      forAllIndices(windowShape, [&](const std::vector<int64_t>& wi) {
        std::vector<int64_t> u(c.resultShape.size()), res = start;
        size_t bk = 0, wk = 0;
        for (size_t d = 0; d < u.size(); ++d) u[d] = has(c.offsetDims, static_cast<int64_t>(d)) ? wi[wk++] : bi[bk++];
        for (size_t k = 0; k < wi.size(); ++k) res[static_cast<size_t>(c.windowDims[k])] += wi[k];
        for (size_t d = 0; d < res.size(); ++d)
          if (res[d] < 0 || res[d] >= c.operandShape[d]) return;
        const int64_t ri = linearIndex(c.operandShape, res), ui = linearIndex(c.resultShape, u);
        if (body == Body::kAssign)
          copyElement(expected, res, updates, u);
        else if (body == Body::kAdd)
          expected.setInt(ri, wrapAdd(expected.getInt(ri), updates.getInt(ui)));
        else
          expected.setInt(ri, wrapMul(expected.getInt(ri), updates.getInt(ui)));
      });
    });

    auto op = makeOp("stablehlo.scatter", {Type::tensor(c.operandShape, t)},
                     {{"scatter_dimension_numbers", scatterAttr(c)}});
    buildBody(op.get(), body, t);
    auto r = runKernel(*op, {input, indices, updates});
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    expectSame((*r)[0], expected, "scatter iteration " + std::to_string(iter));
    EXPECT_TRUE(input.bitwiseEqual(inputCopy)) << "scatter modified its input";
  }
}

TEST(Indexing, ScatterFloatAddAndTwoOperands) {
  std::mt19937_64 rng(14);
  // scatter-add rows of bf16 and f32 (fast paths), duplicates included.
  for (ElementType t : {ElementType::kF32, ElementType::kBF16, ElementType::kF16, ElementType::kComplexF64}) {
    Literal input = Literal::zeros(Type::tensor({5, 3}, t));
    Literal updates = Literal::zeros(Type::tensor({4, 3}, t));
    for (int64_t i = 0; i < 15; ++i) input.setDouble(i, static_cast<double>(i) * 0.5);
    for (int64_t i = 0; i < 12; ++i) updates.setDouble(i, static_cast<double>(i) + 0.25);
    Literal indices = intTensor({4, 1}, {1, 4, 1, 9});
    IndexConfig c;
    c.offsetDims = {1};
    c.collapsed = {0};
    c.startIndexMap = {0};
    c.indexVectorDim = 1;
    auto op = makeOp("stablehlo.scatter", {Type::tensor({5, 3}, t)}, {{"scatter_dimension_numbers", scatterAttr(c)}});
    buildBody(op.get(), Body::kAdd, t);
    auto r = runKernel(*op, {input, indices, updates});
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    for (int64_t row = 0; row < 5; ++row)
      for (int64_t col = 0; col < 3; ++col) {
        double want = static_cast<double>(row * 3 + col) * 0.5;
        if (row == 1) want += static_cast<double>(col) + 0.25 + static_cast<double>(6 + col) + 0.25;
        if (row == 4) want += static_cast<double>(3 + col) + 0.25;
        EXPECT_EQ((*r)[0].getDouble(row * 3 + col), want) << elementTypeName(t);
      }
  }
  // Two inputs with an assigning body.
  Literal a = intTensor({4}, {1, 2, 3, 4}), b = intTensor({4}, {10, 20, 30, 40}, ElementType::kSI32);
  Literal ua = intTensor({2}, {7, 8}), ub = intTensor({2}, {70, 80}, ElementType::kSI32);
  Literal indices = intTensor({2, 1}, {3, 0}, ElementType::kUI32);
  IndexConfig c;
  c.collapsed = {0};
  c.startIndexMap = {0};
  c.indexVectorDim = 1;
  auto op = makeOp("stablehlo.scatter", {a.type(), b.type()}, {{"scatter_dimension_numbers", scatterAttr(c)}});
  Block* body = addRegion(op.get(), {Type::scalar(ElementType::kSI64), Type::scalar(ElementType::kSI32),
                                     Type::scalar(ElementType::kSI64), Type::scalar(ElementType::kSI32)});
  ret(body, {body->argument(2), body->argument(3)});
  auto r = runKernel(*op, {a, b, indices, ua, ub});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  EXPECT_EQ(valuesOf((*r)[0]), (std::vector<int64_t>{8, 2, 3, 7}));
  EXPECT_EQ(valuesOf((*r)[1]), (std::vector<int64_t>{80, 20, 30, 70}));
}

TEST(Indexing, DynamicSliceClampsAndUpdateSlice) {
  std::mt19937_64 rng(15);
  for (int iter = 0; iter < 300; ++iter) {
    const int64_t rank = randInt(rng, 0, 4);
    std::vector<int64_t> shape = randomShape(rng, rank);
    ElementType t = movedTypes()[rng() % movedTypes().size()];
    Literal in = randomTensor(shape, t, rng);
    std::vector<int64_t> sizes, starts, clamped;
    std::vector<Literal> operands = {in};
    for (int64_t n : shape) {
      sizes.push_back(randInt(rng, 0, n));
      starts.push_back(randInt(rng, -3, n + 3));
      clamped.push_back(std::clamp<int64_t>(starts.back(), 0, n - sizes.back()));
      operands.push_back(intTensor({}, {starts.back()}, ElementType::kSI32));
    }
    Literal expected = Literal::zeros(Type::tensor(sizes, t));
    forAllIndices(sizes, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      for (size_t d = 0; d < i.size(); ++d) i[d] += clamped[d];
      copyElement(expected, o, in, i);
    });
    auto op = makeOp("stablehlo.dynamic_slice", {Type::tensor(sizes, t)}, {{"slice_sizes", i64s(sizes)}});
    auto r = runKernel(*op, operands);
    ASSERT_TRUE(r.hasValue()) << r.status().toString();
    expectSame((*r)[0], expected, "dynamic_slice");

    Literal update = randomTensor(sizes, t, rng);
    Literal uexp = in.clone();
    forAllIndices(sizes, [&](const std::vector<int64_t>& o) {
      std::vector<int64_t> i = o;
      for (size_t d = 0; d < i.size(); ++d) i[d] += clamped[d];
      copyElement(uexp, i, update, o);
    });
    std::vector<Literal> uops = {in, update};
    uops.insert(uops.end(), operands.begin() + 1, operands.end());
    auto uop = makeOp("stablehlo.dynamic_update_slice", {in.type()});
    const Literal before = in.clone();
    auto ur = runKernel(*uop, uops);
    ASSERT_TRUE(ur.hasValue()) << ur.status().toString();
    expectSame((*ur)[0], uexp, "dynamic_update_slice");
    EXPECT_TRUE(in.bitwiseEqual(before)) << "dynamic_update_slice modified its operand";
  }
}

TEST(Indexing, TorchIndexSelect) {
  std::mt19937_64 rng(16);
  // operand [2, 4, 3], index [2, 5] with one batch dim, dim = 1 -> result [2, 5, 3].
  Literal operand = randomTensor({2, 4, 3}, ElementType::kBF16, rng);
  std::vector<int64_t> ids;
  for (int i = 0; i < 10; ++i) ids.push_back(randInt(rng, 0, 3));
  Literal index = intTensor({2, 5}, ids, ElementType::kSI32);
  auto op = makeOp("stablehlo.torch_index_select", {Type::tensor({2, 5, 3}, ElementType::kBF16)},
                   {{"dim", i64(1)}, {"batch_dims", i64(1)}});
  auto r = runKernel(*op, {operand, index});
  ASSERT_TRUE(r.hasValue()) << r.status().toString();
  Literal expected = Literal::zeros(Type::tensor({2, 5, 3}, ElementType::kBF16));
  forAllIndices({2, 5, 3}, [&](const std::vector<int64_t>& o) {
    copyElement(expected, o, operand, {o[0], ids[static_cast<size_t>(o[0] * 5 + o[1])], o[2]});
  });
  expectSame((*r)[0], expected, "torch_index_select");

  // No batch dims: index [3] selects along dim 0.
  Literal small = intTensor({3, 2}, {1, 2, 3, 4, 5, 6});
  auto op0 = makeOp("stablehlo.torch_index_select", {Type::tensor({3, 2}, ElementType::kSI64)},
                    {{"dim", i64(0)}, {"batch_dims", i64(0)}});
  auto r0 = runKernel(*op0, {small, intTensor({3}, {2, 0, 2}, ElementType::kUI8)});
  ASSERT_TRUE(r0.hasValue()) << r0.status().toString();
  EXPECT_EQ(valuesOf((*r0)[0]), (std::vector<int64_t>{5, 6, 1, 2, 5, 6}));
  EXPECT_FALSE(runKernel(*op0, {small, intTensor({1}, {3})}).hasValue());
}

}  // namespace
}  // namespace wf::testing
