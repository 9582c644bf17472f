// Tests of the CPU dot_general / dot / ragged_dot / convolution kernels against naive float64
// (or wrapping int64) loops written straight from the spec, on random data.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

#include "eval/interpreter.h"

namespace wf {
namespace {

Attribute ints(std::vector<int64_t> v) { return Attribute::denseArray(ElementType::kSI64, std::move(v)); }
Attribute intArray(const std::vector<int64_t>& v) {
  std::vector<Attribute> e;
  for (int64_t x : v) e.push_back(Attribute::integer(x));
  return Attribute::array(std::move(e));
}

std::unique_ptr<Operation> makeOp(const std::string& name, std::vector<Type> results,
                                  std::vector<NamedAttribute> attrs) {
  auto op = std::make_unique<Operation>(name, Location{"test", 1, 1, ""});
  for (Type& t : results) op->addResult(std::move(t));
  for (auto& [k, v] : attrs) op->setAttr(k, v);
  return op;
}

Expected<std::vector<Literal>> run(const Operation& op, std::vector<Literal> operands) {
  const Kernel* k = KernelRegistry::instance().find(op.code());
  if (!k) return unimplemented("no kernel");
  EvalContext ctx;
  return (*k)(op, operands, ctx);
}

Literal randomLiteral(const Type& t, std::mt19937& rng) {
  Literal l = Literal::zeros(t);
  ElementType e = t.elementType();
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::uniform_int_distribution<int> bits(0, 255);
  for (int64_t i = 0; i < l.numElements(); ++i) {
    if (isComplex(e)) l.setComplex(i, {u(rng), u(rng)});
    else if (isFloat(e)) l.setDouble(i, u(rng));
    else if (isBoolean(e)) l.setInt(i, bits(rng) & 1);
    else l.setInt(i, bits(rng) - 128);  // wraps into narrow types, covers the full ui8/si8 range
  }
  return l;
}

std::vector<int64_t> unravel(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> idx(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

int64_t ravel(const std::vector<int64_t>& idx, const std::vector<int64_t>& shape) {
  int64_t off = 0;
  for (size_t d = 0; d < shape.size(); ++d) off = off * shape[d] + idx[d];
  return off;
}

// ----------------------------------------------------------------------------------------------
// dot_general

struct DotCase {
  std::vector<int64_t> lhsShape, rhsShape, lb, rb, lc, rc;
  ElementType in, out;
};

void checkDotGeneral(const DotCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  Literal lhs = randomLiteral(Type::tensor(c.lhsShape, c.in), rng);
  Literal rhs = randomLiteral(Type::tensor(c.rhsShape, c.in), rng);
  // Result shape and the free dims, straight from the spec.
  auto freeDims = [](size_t rank, const std::vector<int64_t>& b, const std::vector<int64_t>& k) {
    std::vector<int64_t> f;
    for (int64_t i = 0; i < static_cast<int64_t>(rank); ++i)
      if (std::find(b.begin(), b.end(), i) == b.end() && std::find(k.begin(), k.end(), i) == k.end()) f.push_back(i);
    return f;
  };
  std::vector<int64_t> lf = freeDims(c.lhsShape.size(), c.lb, c.lc), rf = freeDims(c.rhsShape.size(), c.rb, c.rc);
  std::vector<int64_t> shape, kShape;
  for (int64_t d : c.lb) shape.push_back(c.lhsShape[d]);
  for (int64_t d : lf) shape.push_back(c.lhsShape[d]);
  for (int64_t d : rf) shape.push_back(c.rhsShape[d]);
  for (int64_t d : c.lc) kShape.push_back(c.lhsShape[d]);
  int64_t kTotal = 1;
  for (int64_t k : kShape) kTotal *= k;

  auto op = makeOp("stablehlo.dot_general", {Type::tensor(shape, c.out)},
                   {{"dot_dimension_numbers", Attribute::dialectStruct("stablehlo.dot",
                                                                       {{"lhs_batching_dimensions", intArray(c.lb)},
                                                                        {"rhs_batching_dimensions", intArray(c.rb)},
                                                                        {"lhs_contracting_dimensions", intArray(c.lc)},
                                                                        {"rhs_contracting_dimensions", intArray(c.rc)}})}});
  auto got = run(*op, {lhs, rhs});
  ASSERT_TRUE(got) << got.status().toString();
  const Literal& r = (*got)[0];
  ASSERT_EQ(r.shape(), shape);
  ASSERT_EQ(r.elementType(), c.out);

  Literal expect = Literal::zeros(Type::tensor(shape, c.out));
  bool integral = !isFloat(c.out) && !isComplex(c.out);
  for (int64_t o = 0; o < expect.numElements(); ++o) {
    std::vector<int64_t> idx = unravel(o, shape);
    std::vector<int64_t> li(c.lhsShape.size()), ri(c.rhsShape.size());
    size_t p = 0;
    for (size_t b = 0; b < c.lb.size(); ++b, ++p) li[c.lb[b]] = ri[c.rb[b]] = idx[p];
    for (int64_t d : lf) li[d] = idx[p++];
    for (int64_t d : rf) ri[d] = idx[p++];
    std::complex<double> acc = 0;
    uint64_t iacc = 0;
    for (int64_t k = 0; k < kTotal; ++k) {
      std::vector<int64_t> ki = unravel(k, kShape);
      for (size_t j = 0; j < ki.size(); ++j) li[c.lc[j]] = ri[c.rc[j]] = ki[j];
      int64_t lo = ravel(li, c.lhsShape), ro = ravel(ri, c.rhsShape);
      if (integral) iacc += static_cast<uint64_t>(lhs.getInt(lo)) * static_cast<uint64_t>(rhs.getInt(ro));
      else acc += lhs.getComplex(lo) * rhs.getComplex(ro);
    }
    if (isBoolean(c.out)) expect.setInt(o, iacc != 0);
    else if (integral) expect.setInt(o, static_cast<int64_t>(iacc));
    else if (isComplex(c.out)) expect.setComplex(o, acc);
    else expect.setDouble(o, acc.real());
  }
  double tol = c.out == ElementType::kBF16 ? 3e-2 : c.out == ElementType::kF16 ? 5e-3 : c.out == ElementType::kF64 && c.in == ElementType::kF64 ? 1e-12 : 1e-5;
  for (int64_t i = 0; i < expect.numElements(); ++i) {
    if (integral) {
      ASSERT_EQ(r.getInt(i), expect.getInt(i)) << "at " << i;
    } else {
      std::complex<double> a = r.getComplex(i), e = expect.getComplex(i);
      ASSERT_NEAR(std::abs(a - e), 0.0, tol * (1 + std::abs(e))) << "at " << i;
    }
  }
}

using E = ElementType;

TEST(DotGeneral, PlainMatmulF32) { checkDotGeneral({{7, 5}, {5, 9}, {}, {}, {1}, {0}, E::kF32, E::kF32}, 1); }
TEST(DotGeneral, BatchedNaturalLayout) {
  checkDotGeneral({{3, 4, 6}, {3, 6, 5}, {0}, {0}, {2}, {1}, E::kF32, E::kF32}, 2);
}
TEST(DotGeneral, TransposedOperandsFoldIntoBlas) {
  // lhs [b, K, M] and rhs [b, N, K].
  checkDotGeneral({{3, 6, 4}, {3, 5, 6}, {0}, {0}, {1}, {2}, E::kF32, E::kF32}, 3);
  checkDotGeneral({{6, 4}, {5, 6}, {}, {}, {0}, {1}, E::kF64, E::kF64}, 4);
}
TEST(DotGeneral, BatchInTheMiddleAndMultipleContractingDims) {
  checkDotGeneral({{3, 2, 4, 5}, {5, 2, 7, 3}, {1}, {1}, {3, 0}, {0, 3}, E::kF32, E::kF32}, 5);
  checkDotGeneral({{2, 3, 4, 5}, {4, 3, 5, 6}, {2, 1}, {0, 1}, {3}, {2}, E::kF64, E::kF64}, 6);
  checkDotGeneral({{2, 3, 4, 5}, {5, 4, 2, 6}, {0, 2}, {2, 1}, {3}, {0}, E::kF64, E::kF64}, 6);
}
TEST(DotGeneral, OuterProductNoContraction) {
  checkDotGeneral({{2, 3}, {4}, {}, {}, {}, {}, E::kF32, E::kF32}, 7);
}
TEST(DotGeneral, Int8ToInt32AndWrapping) {
  checkDotGeneral({{4, 33}, {33, 3}, {}, {}, {1}, {0}, E::kSI8, E::kSI32}, 8);
  checkDotGeneral({{2, 4, 40}, {2, 40, 3}, {0}, {0}, {2}, {1}, E::kSI8, E::kSI8}, 9);
  checkDotGeneral({{3, 40}, {40, 2}, {}, {}, {1}, {0}, E::kUI8, E::kUI16}, 10);
  checkDotGeneral({{3, 5}, {2, 5}, {}, {}, {1}, {1}, E::kSI64, E::kSI64}, 11);
  checkDotGeneral({{3, 5}, {5, 2}, {}, {}, {1}, {0}, E::kSI4, E::kSI4}, 12);
}
TEST(DotGeneral, Bool) { checkDotGeneral({{4, 3}, {3, 5}, {}, {}, {1}, {0}, E::kI1, E::kI1}, 13); }
TEST(DotGeneral, HalfPrecision) {
  checkDotGeneral({{2, 8, 16}, {2, 16, 4}, {0}, {0}, {2}, {1}, E::kBF16, E::kBF16}, 14);
  checkDotGeneral({{8, 16}, {4, 16}, {}, {}, {1}, {1}, E::kF16, E::kF16}, 15);
  checkDotGeneral({{8, 16}, {16, 4}, {}, {}, {1}, {0}, E::kBF16, E::kF32}, 16);
}
TEST(DotGeneral, MixedPrecisionResult) {
  checkDotGeneral({{2, 3, 4}, {2, 4, 3}, {0}, {0}, {2}, {1}, E::kF32, E::kF64}, 17);
}
TEST(DotGeneral, Complex) {
  checkDotGeneral({{2, 3, 4}, {2, 5, 4}, {0}, {0}, {2}, {2}, E::kComplexF32, E::kComplexF32}, 18);
  checkDotGeneral({{4, 3}, {4, 2}, {}, {}, {0}, {0}, E::kComplexF64, E::kComplexF64}, 19);
}
TEST(DotGeneral, ManySmallBatchesRunInParallel) {
  checkDotGeneral({{64, 8, 8}, {64, 8, 8}, {0}, {0}, {2}, {1}, E::kF32, E::kF32}, 20);
  checkDotGeneral({{64, 8, 8}, {64, 8, 8}, {0}, {0}, {2}, {1}, E::kSI32, E::kSI32}, 21);
}
// Attention's products, batch x heads of [seq, head dim] x [seq, head dim]^T and [seq, seq] x
// [seq, head dim]: GEMMs above the library threshold in a batch with one for every thread, split
// over the batch with one library thread each.
TEST(DotGeneral, AttentionSizedBatchesSplitOverThreads) {
  checkDotGeneral({{4, 2, 96, 64}, {4, 2, 96, 64}, {0, 1}, {0, 1}, {3}, {3}, E::kF32, E::kF32}, 24);
  checkDotGeneral({{4, 2, 96, 96}, {4, 2, 96, 64}, {0, 1}, {0, 1}, {3}, {2}, E::kF32, E::kF32}, 25);
}
// The same products with the heads where a [B, S, H, D] projection leaves them (batch dims 0
// and 2): read in place through their strides by one batched matmul (eval/dot.cpp), no copy.
TEST(DotGeneral, AttentionHeadsReadWhereTheyLie) {
  checkDotGeneral({{2, 96, 3, 64}, {2, 96, 3, 64}, {0, 2}, {0, 2}, {3}, {3}, E::kF32, E::kF32}, 26);
  checkDotGeneral({{2, 3, 96, 96}, {2, 96, 3, 64}, {0, 1}, {0, 2}, {3}, {1}, E::kF32, E::kF32}, 27);
}
TEST(DotGeneral, LargerThanBlasThreshold) {
  checkDotGeneral({{96, 130}, {130, 70}, {}, {}, {1}, {0}, E::kF32, E::kF32}, 22);
}
TEST(DotGeneral, F8) { checkDotGeneral({{8}, {8}, {}, {}, {0}, {0}, E::kF8E4M3FN, E::kF32}, 23); }

TEST(DotGeneral, RejectsMismatchedContractingSizes) {
  auto op = makeOp("stablehlo.dot_general", {Type::tensor({2, 2}, E::kF32)},
                   {{"dot_dimension_numbers",
                     Attribute::dialectStruct("stablehlo.dot", {{"lhs_contracting_dimensions", intArray({1})},
                                                                {"rhs_contracting_dimensions", intArray({0})}})}});
  std::mt19937 rng(0);
  auto got = run(*op, {randomLiteral(Type::tensor({2, 3}, E::kF32), rng), randomLiteral(Type::tensor({4, 2}, E::kF32), rng)});
  ASSERT_FALSE(got);
  EXPECT_NE(got.status().message().find("stablehlo.dot_general"), std::string::npos);
}

TEST(Dot, MatrixVector) {
  std::mt19937 rng(30);
  Literal a = randomLiteral(Type::tensor({3, 4}, E::kF32), rng), v = randomLiteral(Type::tensor({4}, E::kF32), rng);
  auto op = makeOp("stablehlo.dot", {Type::tensor({3}, E::kF32)}, {});
  auto got = run(*op, {a, v});
  ASSERT_TRUE(got) << got.status().toString();
  for (int64_t i = 0; i < 3; ++i) {
    double e = 0;
    for (int64_t k = 0; k < 4; ++k) e += a.getDouble(i * 4 + k) * v.getDouble(k);
    EXPECT_NEAR((*got)[0].getDouble(i), e, 1e-5);
  }
}

// ----------------------------------------------------------------------------------------------
// chlo.ragged_dot, mode 1 (ragged rows, one rhs matrix per group) with a batch dim.

TEST(RaggedDot, RaggedRowsWithBatch) {
  std::mt19937 rng(40);
  const int64_t b = 2, m = 9, k = 5, n = 4, g = 3;
  Literal lhs = randomLiteral(Type::tensor({b, m, k}, E::kF32), rng);
  Literal rhs = randomLiteral(Type::tensor({g, b, k, n}, E::kF32), rng);
  Literal sizes = Literal::zeros(Type::tensor({g}, E::kSI64));
  int64_t sz[] = {2, 0, 5};  // rows 7 and 8 fall past the groups: zero
  for (int64_t i = 0; i < g; ++i) sizes.setInt(i, sz[i]);
  auto op = makeOp("chlo.ragged_dot", {Type::tensor({b, m, n}, E::kF32)},
                   {{"ragged_dot_dimension_numbers",
                     Attribute::dialectStruct("chlo.ragged_dot", {{"lhs_batching_dimensions", intArray({0})},
                                                                  {"rhs_batching_dimensions", intArray({1})},
                                                                  {"lhs_contracting_dimensions", intArray({2})},
                                                                  {"rhs_contracting_dimensions", intArray({2})},
                                                                  {"lhs_ragged_dimensions", intArray({1})},
                                                                  {"rhs_group_dimensions", intArray({0})}})}});
  auto got = run(*op, {lhs, rhs, sizes});
  ASSERT_TRUE(got) << got.status().toString();
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t mi = 0; mi < m; ++mi) {
      int64_t group = mi < 2 ? 0 : mi < 7 ? 2 : -1;
      for (int64_t ni = 0; ni < n; ++ni) {
        double e = 0;
        if (group >= 0)
          for (int64_t ki = 0; ki < k; ++ki)
            e += lhs.getDouble((bi * m + mi) * k + ki) * rhs.getDouble(((group * b + bi) * k + ki) * n + ni);
        EXPECT_NEAR((*got)[0].getDouble((bi * m + mi) * n + ni), e, 1e-5) << bi << " " << mi << " " << ni;
      }
    }
}

// ----------------------------------------------------------------------------------------------
// convolution

struct ConvCase {
  // Layout: positions of batch / feature / spatial dims in lhs, kernel and output.
  int64_t ib, ifeat; std::vector<int64_t> isp;
  int64_t ki, ko; std::vector<int64_t> ksp;
  int64_t ob, of; std::vector<int64_t> osp;
  int64_t n, c, o;                    // batch, input features, output features
  std::vector<int64_t> in, k;         // spatial sizes
  std::vector<int64_t> stride, padLo, padHi, lhsDil, rhsDil, rev;
  int64_t fgc = 1, bgc = 1;
  ElementType type = E::kF32, outType = E::kF32;
};

std::vector<int64_t> place(size_t rank, int64_t bPos, int64_t bSize, int64_t fPos, int64_t fSize,
                           const std::vector<int64_t>& sPos, const std::vector<int64_t>& sSize) {
  std::vector<int64_t> s(rank);
  s[bPos] = bSize;
  s[fPos] = fSize;
  for (size_t d = 0; d < sPos.size(); ++d) s[sPos[d]] = sSize[d];
  return s;
}

void checkConv(const ConvCase& c, uint32_t seed) {
  std::mt19937 rng(seed);
  size_t r = c.in.size(), rank = r + 2;
  int64_t groups = c.fgc * c.bgc;
  std::vector<int64_t> outSp(r);
  for (size_t d = 0; d < r; ++d) {
    int64_t padded = (c.in[d] - 1) * c.lhsDil[d] + 1 + c.padLo[d] + c.padHi[d];
    int64_t window = (c.k[d] - 1) * c.rhsDil[d] + 1;
    outSp[d] = padded < window ? 0 : (padded - window) / c.stride[d] + 1;
  }
  std::vector<int64_t> lhsShape = place(rank, c.ib, c.n, c.ifeat, c.c, c.isp, c.in);
  std::vector<int64_t> rhsShape = place(rank, c.ko, c.o, c.ki, c.c / c.fgc, c.ksp, c.k);
  std::vector<int64_t> outShape = place(rank, c.ob, c.n / c.bgc, c.of, c.o, c.osp, outSp);
  Literal lhs = randomLiteral(Type::tensor(lhsShape, c.type), rng);
  Literal rhs = randomLiteral(Type::tensor(rhsShape, c.type), rng);
  std::vector<int64_t> pad;
  for (size_t d = 0; d < r; ++d) {
    pad.push_back(c.padLo[d]);
    pad.push_back(c.padHi[d]);
  }
  Literal padLit = Literal::zeros(Type::tensor({static_cast<int64_t>(r), 2}, E::kSI64));
  for (size_t i = 0; i < pad.size(); ++i) padLit.setInt(static_cast<int64_t>(i), pad[i]);
  auto op = makeOp("stablehlo.convolution", {Type::tensor(outShape, c.outType)},
                   {{"dimension_numbers",
                     Attribute::dialectStruct(
                         "stablehlo.conv",
                         {{"input_batch_dimension", Attribute::integer(c.ib)},
                          {"input_feature_dimension", Attribute::integer(c.ifeat)},
                          {"input_spatial_dimensions", intArray(c.isp)},
                          {"kernel_input_feature_dimension", Attribute::integer(c.ki)},
                          {"kernel_output_feature_dimension", Attribute::integer(c.ko)},
                          {"kernel_spatial_dimensions", intArray(c.ksp)},
                          {"output_batch_dimension", Attribute::integer(c.ob)},
                          {"output_feature_dimension", Attribute::integer(c.of)},
                          {"output_spatial_dimensions", intArray(c.osp)}})},
                    {"window_strides", ints(c.stride)},
                    {"padding", Attribute::denseElements(padLit)},
                    {"lhs_dilation", ints(c.lhsDil)},
                    {"rhs_dilation", ints(c.rhsDil)},
                    {"window_reversal", Attribute::denseArray(E::kI1, c.rev)},
                    {"feature_group_count", Attribute::integer(c.fgc)},
                    {"batch_group_count", Attribute::integer(c.bgc)}});
  auto got = run(*op, {lhs, rhs});
  ASSERT_TRUE(got) << got.status().toString();
  const Literal& res = (*got)[0];
  ASSERT_EQ(res.shape(), outShape);

  // Reference: for every output element, walk the window of the zero-padded, lhs-dilated input.
  int64_t og = c.o / groups, ig = c.c / c.fgc, nOut = c.n / c.bgc;
  bool integral = isInteger(c.outType);
  std::vector<int64_t> li(rank), ki(rank), oi(rank);
  double maxErr = 0;
  for (int64_t e = 0; e < res.numElements(); ++e) {
    oi = unravel(e, outShape);
    int64_t nIdx = oi[c.ob], oIdx = oi[c.of], g = oIdx / og;
    int64_t inBatch = c.bgc > 1 ? g * nOut + nIdx : nIdx;
    double acc = 0;
    uint64_t iacc = 0;
    std::vector<int64_t> kIdx(r, 0);
    int64_t kTotal = 1;
    for (int64_t kd : c.k) kTotal *= kd;
    for (int64_t ci = 0; ci < ig; ++ci)
      for (int64_t t = 0; t < kTotal; ++t) {
        kIdx = unravel(t, c.k);
        bool valid = true;
        for (size_t d = 0; d < r; ++d) {
          int64_t w = c.rev[d] ? c.k[d] - 1 - kIdx[d] : kIdx[d];
          int64_t q = oi[c.osp[d]] * c.stride[d] + w * c.rhsDil[d] - c.padLo[d];
          if (q < 0 || q % c.lhsDil[d] != 0 || q / c.lhsDil[d] >= c.in[d]) valid = false;
          else li[c.isp[d]] = q / c.lhsDil[d];
          ki[c.ksp[d]] = kIdx[d];
        }
        if (!valid) continue;
        li[c.ib] = inBatch;
        li[c.ifeat] = (c.fgc > 1 ? g * ig : 0) + ci;
        ki[c.ki] = ci;
        ki[c.ko] = oIdx;
        int64_t lo = ravel(li, lhsShape), ko = ravel(ki, rhsShape);
        if (integral) iacc += static_cast<uint64_t>(lhs.getInt(lo)) * static_cast<uint64_t>(rhs.getInt(ko));
        else acc += lhs.getDouble(lo) * rhs.getDouble(ko);
      }
    if (integral) {
      Literal w = Literal::scalarInt(c.outType, static_cast<int64_t>(iacc));
      ASSERT_EQ(res.getInt(e), w.getInt(0)) << "at " << e;
    } else {
      maxErr = std::max(maxErr, std::abs(res.getDouble(e) - acc) / (1 + std::abs(acc)));
    }
  }
  EXPECT_LT(maxErr, c.type == E::kBF16 ? 3e-2 : 1e-5);
}

TEST(Convolution, Nchw3x3Padded) {
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 2, 3, 4, {6, 7}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}}, 1);
}
TEST(Convolution, NhwcStridedDilated) {
  checkConv({0, 3, {1, 2}, 2, 3, {0, 1}, 0, 3, {1, 2}, 2, 3, 5, {9, 8}, {3, 2}, {2, 3}, {1, 0}, {2, 1}, {1, 1}, {2, 1}, {0, 0}}, 2);
}
TEST(Convolution, PointwiseFastPath) {
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 2, 8, 6, {5, 5}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}}, 3);
}
TEST(Convolution, FeatureGroupsAndDepthwise) {
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 2, 6, 9, {6, 6}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 3}, 4);
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 1, 8, 8, {7, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}, 8}, 5);
}
TEST(Convolution, NegativePaddingLhsDilationReversal) {
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 1, 2, 3, {7, 6}, {2, 3}, {1, 2}, {-1, 2}, {-2, 1}, {2, 3}, {1, 2}, {1, 0}}, 6);
}
TEST(Convolution, BatchGroupCount) {
  checkConv({0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 4, 3, 4, {5, 5}, {2, 2}, {1, 1}, {0, 0}, {0, 0}, {1, 1}, {1, 1}, {0, 0}, 1, 2}, 7);
  // Layout with batch after the spatial dims and output [f, 0, 1, b].
  checkConv({2, 1, {0, 3}, 0, 1, {3, 2}, 3, 0, {1, 2}, 6, 2, 6, {4, 5}, {3, 2}, {1, 2}, {1, 0}, {0, 1}, {1, 1}, {1, 1}, {0, 0}, 1, 3}, 8);
}
TEST(Convolution, OneAndThreeSpatialDims) {
  checkConv({0, 2, {1}, 2, 1, {0}, 0, 2, {1}, 2, 3, 4, {11}, {4}, {3}, {2}, {1}, {1}, {2}, {0}}, 9);
  checkConv({0, 1, {2, 3, 4}, 1, 0, {2, 3, 4}, 0, 1, {2, 3, 4}, 1, 2, 3, {4, 5, 3}, {2, 3, 2}, {1, 2, 1}, {0, 1, 1}, {1, 0, 0}, {1, 1, 2}, {1, 1, 1}, {0, 1, 0}}, 10);
}
TEST(Convolution, IntegerAndBf16) {
  ConvCase c{0, 1, {2, 3}, 1, 0, {2, 3}, 0, 1, {2, 3}, 1, 3, 2, {5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {1, 1}, {0, 0}};
  c.type = E::kSI8;
  c.outType = E::kSI32;
  checkConv(c, 11);
  c.outType = E::kSI8;
  checkConv(c, 12);
  c.type = c.outType = E::kBF16;
  checkConv(c, 13);
  c.type = c.outType = E::kF64;
  checkConv(c, 14);
}

}  // namespace
}  // namespace wf
