// Tests of the CPU backend's fast paths against its generic paths (or float64 loops), on random
// data with odd sizes: oneDNN convolution vs im2col + GEMM, oneDNN sgemm vs OpenBLAS, f32 erf vs
// libm, reduce_window's fast path vs the region interpreter, transposes folded into dot_general
// and broadcasts folded into elementwise arithmetic vs materialized ones.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>

#include "eval/dot_conv_util.h"
#include "eval/elementwise_ops.h"
#include "eval/interpreter.h"
#include "eval/reduce_util.h"
#include "ir/verifier.h"
#include "stablehlo/parser.h"

namespace wf {
namespace {

Literal randomF32(const std::vector<int64_t>& shape, std::mt19937& rng, float lo = -1.f, float hi = 1.f) {
  Literal l = Literal::zeros(Type::tensor(shape, ElementType::kF32));
  std::uniform_real_distribution<float> u(lo, hi);
  for (int64_t i = 0; i < l.numElements(); ++i) l.dataAs<float>()[i] = u(rng);
  return l;
}

Module parse(const std::string& text) {
  auto m = parseModule(text);
  EXPECT_TRUE(m) << m.status().message();
  Status v = verifyModule(*m);
  EXPECT_TRUE(v.isOk()) << v.message();
  return std::move(*m);
}

std::vector<Literal> runMain(const Module& m, std::vector<Literal> args) {
  EvalContext ctx;
  ctx.module = &m;
  auto r = Interpreter::callFunction(*m.lookupFunction("main"), std::move(args), ctx);
  EXPECT_TRUE(r) << r.status().message();
  return r ? std::move(*r) : std::vector<Literal>{};
}

// max |a - b| / (1 + |b|)
double maxScaledError(const Literal& a, const Literal& b) {
  EXPECT_EQ(a.shape(), b.shape());
  double err = 0;
  for (int64_t i = 0; i < a.numElements() && i < b.numElements(); ++i)
    err = std::max(err, std::fabs(a.getDouble(i) - b.getDouble(i)) / (1 + std::fabs(b.getDouble(i))));
  return err;
}

std::string convText(const std::string& inT, const std::string& wT, const std::string& outT, const std::string& dn,
                     const std::string& window) {
  return "func.func @main(%x: " + inT + ", %w: " + wT + ") -> " + outT + " {\n  %y = stablehlo.convolution(%x, %w) dim_numbers = " +
         dn + ", window = {" + window + "} {batch_group_count = 1 : i64, feature_group_count = FGC : i64} : (" + inT +
         ", " + wT + ") -> " + outT + "\n  return %y : " + outT + "\n}\n";
}

struct ConvCase {
  std::vector<int64_t> in, w, out;
  std::string dn, window;
  int64_t groups = 1;
};

std::string tensorType(const std::vector<int64_t>& s) {
  std::string t = "tensor<";
  for (int64_t d : s) t += std::to_string(d) + "x";
  return t + "f32>";
}

// The same convolution with oneDNN on and off (im2col + GEMM on OpenBLAS) agrees.
TEST(PerfFastPaths, OneDnnConvolutionMatchesIm2col) {
  if (!dotconv::haveOneDnn()) GTEST_SKIP() << "built without oneDNN";
  std::mt19937 rng(7);
  const ConvCase cases[] = {
      {{1, 13, 9, 11}, {17, 13, 1, 1}, {1, 17, 9, 11}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "stride = [1, 1]"},
      {{2, 5, 15, 13}, {7, 5, 3, 3}, {2, 7, 8, 7}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
       "stride = [2, 2], pad = [[1, 1], [1, 1]]"},
      {{1, 3, 23, 21}, {8, 3, 7, 7}, {1, 8, 12, 11}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
       "stride = [2, 2], pad = [[3, 3], [3, 3]]"},
      {{1, 9, 10, 10}, {6, 9, 1, 1}, {1, 6, 5, 5}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "stride = [2, 2]"},
      {{1, 11, 12, 3}, {3, 3, 3, 5}, {1, 9, 10, 5}, "[b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]",
       "stride = [1, 1], pad = [[0, 0], [0, 0]], rhs_dilate = [1, 1]"},
      {{1, 6, 9, 9}, {4, 6, 3, 3}, {1, 4, 6, 7}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
       "stride = [1, 1], pad = [[0, 1], [2, 0]], rhs_dilate = [2, 2]"},
      {{1, 12, 8, 8}, {12, 1, 3, 3}, {1, 12, 8, 8}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]",
       "stride = [1, 1], pad = [[1, 1], [1, 1]]", 12},
      {{2, 8, 7, 6}, {10, 4, 3, 2}, {2, 10, 5, 5}, "[b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]", "stride = [1, 1]", 2},
      {{3, 5, 19}, {4, 5, 4}, {3, 4, 9}, "[b, f, 0]x[o, i, 0]->[b, f, 0]", "stride = [2], pad = [[0, 1]]"},
  };
  for (const ConvCase& c : cases) {
    std::string text = convText(tensorType(c.in), tensorType(c.w), tensorType(c.out), c.dn, c.window);
    text.replace(text.find("FGC"), 3, std::to_string(c.groups));
    Module m = parse(text);
    Literal x = randomF32(c.in, rng), w = randomF32(c.w, rng);
    dotconv::setOneDnnEnabled(true);
    std::vector<Literal> fast = runMain(m, {x, w});
    dotconv::setOneDnnEnabled(false);
    std::vector<Literal> slow = runMain(m, {x, w});
    dotconv::setOneDnnEnabled(true);
    ASSERT_EQ(fast.size(), 1u);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_LT(maxScaledError(fast[0], slow[0]), 1e-5) << text;
  }
}

// dot_general on oneDNN's sgemm (every transpose combination, odd sizes) against float64 loops.
TEST(PerfFastPaths, OneDnnSgemmMatchesFloat64) {
  std::mt19937 rng(11);
  const int64_t M = 37, N = 29, K = 53;
  for (int ta = 0; ta < 2; ++ta)
    for (int tb = 0; tb < 2; ++tb) {
      std::vector<int64_t> as = ta ? std::vector<int64_t>{K, M} : std::vector<int64_t>{M, K};
      std::vector<int64_t> bs = tb ? std::vector<int64_t>{N, K} : std::vector<int64_t>{K, N};
      std::string text = "func.func @main(%a: " + tensorType(as) + ", %b: " + tensorType(bs) + ") -> tensor<" +
                         std::to_string(M) + "x" + std::to_string(N) + "xf32> {\n  %c = stablehlo.dot_general %a, %b, contracting_dims = [" +
                         std::to_string(ta ? 0 : 1) + "] x [" + std::to_string(tb ? 1 : 0) + "] : (" + tensorType(as) + ", " +
                         tensorType(bs) + ") -> tensor<" + std::to_string(M) + "x" + std::to_string(N) +
                         "xf32>\n  return %c : tensor<" + std::to_string(M) + "x" + std::to_string(N) + "xf32>\n}\n";
      Module m = parse(text);
      Literal a = randomF32(as, rng), b = randomF32(bs, rng);
      std::vector<Literal> r = runMain(m, {a, b});
      ASSERT_EQ(r.size(), 1u);
      double err = 0;
      for (int64_t i = 0; i < M; ++i)
        for (int64_t j = 0; j < N; ++j) {
          double acc = 0;
          for (int64_t k = 0; k < K; ++k)
            acc += static_cast<double>(a.dataAs<float>()[ta ? k * M + i : i * K + k]) *
                   b.dataAs<float>()[tb ? j * K + k : k * N + j];
          err = std::max(err, std::fabs(acc - r[0].dataAs<float>()[i * N + j]));
        }
      EXPECT_LT(err, 1e-4) << "transA " << ta << " transB " << tb;
    }
}

// chlo.erf / chlo.erfc in f32 against libm's double results.
TEST(PerfFastPaths, ErfF32MatchesLibm) {
  const int64_t n = 20001;
  Literal x = Literal::zeros(Type::tensor({n}, ElementType::kF32));
  for (int64_t i = 0; i < n; ++i) x.dataAs<float>()[i] = -6.0f + 12.0f * static_cast<float>(i) / (n - 1);
  x.dataAs<float>()[7] = 1e-30f;
  x.dataAs<float>()[8] = -3e-8f;
  x.dataAs<float>()[9] = std::numeric_limits<float>::infinity();
  x.dataAs<float>()[10] = -std::numeric_limits<float>::infinity();
  x.dataAs<float>()[11] = std::numeric_limits<float>::quiet_NaN();
  Module m = parse(
      "func.func @main(%x: tensor<20001xf32>) -> (tensor<20001xf32>, tensor<20001xf32>) {\n"
      "  %e = chlo.erf %x : tensor<20001xf32> -> tensor<20001xf32>\n"
      "  %c = chlo.erfc %x : tensor<20001xf32> -> tensor<20001xf32>\n"
      "  return %e, %c : tensor<20001xf32>, tensor<20001xf32>\n}\n");
  std::vector<Literal> r = runMain(m, {x});
  ASSERT_EQ(r.size(), 2u);
  for (int64_t i = 0; i < n; ++i) {
    double v = x.dataAs<float>()[i];
    float e = r[0].dataAs<float>()[i], c = r[1].dataAs<float>()[i];
    if (std::isnan(v)) {
      EXPECT_TRUE(std::isnan(e));
      EXPECT_TRUE(std::isnan(c));
      continue;
    }
    double re = std::erf(v), rc = std::erfc(v);
    EXPECT_LE(std::fabs(e - re), 4e-7 * std::max(1e-30, std::fabs(re)) + 1e-37) << "erf(" << v << ")";
    EXPECT_LE(std::fabs(c - rc), 4e-7 * rc + 1e-37) << "erfc(" << v << ")";
  }
}

// reduce_window's fast path (pooling shapes, padding, strides, dilation) against the generic
// path that runs the body region per element.
TEST(PerfFastPaths, ReduceWindowFastPathMatchesRegionPath) {
  std::mt19937 rng(3);
  struct Case {
    std::vector<int64_t> in, out;
    std::string attrs, body;
  };
  const Case cases[] = {
      {{1, 5, 13, 11}, {1, 5, 7, 6},
       "window_dimensions = array<i64: 1, 1, 3, 3>, window_strides = array<i64: 1, 1, 2, 2>, padding = dense<[[0, 0], [0, 0], [1, 1], [1, 1]]> : tensor<4x2xi64>",
       "stablehlo.maximum"},
      {{2, 3, 9, 8}, {2, 3, 4, 4},
       "window_dimensions = array<i64: 1, 1, 2, 2>, window_strides = array<i64: 1, 1, 2, 2>", "stablehlo.add"},
      {{4, 9, 7}, {2, 3, 7},
       "window_dimensions = array<i64: 2, 3, 1>, window_strides = array<i64: 2, 3, 1>, window_dilations = array<i64: 1, 1, 1>, base_dilations = array<i64: 1, 1, 1>, padding = dense<[[0, 0], [0, 0], [0, 0]]> : tensor<3x2xi64>",
       "stablehlo.maximum"},
      {{10, 9}, {10, 4},
       "window_dimensions = array<i64: 1, 3>, window_strides = array<i64: 1, 2>, window_dilations = array<i64: 1, 2>, padding = dense<[[0, 0], [2, 0]]> : tensor<2x2xi64>",
       "stablehlo.add"},
  };
  for (const Case& c : cases) {
    std::string inT = tensorType(c.in), outT = tensorType(c.out);
    std::string text = "func.func @main(%x: " + inT + ") -> " + outT +
                       " {\n  %init = stablehlo.constant dense<-2.0> : tensor<f32>\n"
                       "  %r = \"stablehlo.reduce_window\"(%x, %init) ({\n  ^bb0(%a: tensor<f32>, %b: tensor<f32>):\n"
                       "    %s = " + c.body + " %a, %b : tensor<f32>\n    stablehlo.return %s : tensor<f32>\n  }) {" +
                       c.attrs + "} : (" + inT + ", tensor<f32>) -> " + outT + "\n  return %r : " + outT + "\n}\n";
    Module m = parse(text);
    Literal x = randomF32(c.in, rng);
    reduce_detail::setFastPathsEnabled(true);
    std::vector<Literal> fast = runMain(m, {x});
    reduce_detail::setFastPathsEnabled(false);
    std::vector<Literal> slow = runMain(m, {x});
    reduce_detail::setFastPathsEnabled(true);
    ASSERT_EQ(fast.size(), 1u);
    ASSERT_EQ(slow.size(), 1u);
    EXPECT_TRUE(fast[0].bitwiseEqual(slow[0])) << text;
  }
}

// Transposes whose only users are dot_generals are folded into them; others are materialized.
// Results agree with float64 loops either way.
TEST(PerfFastPaths, TransposeFoldsIntoDotGeneral) {
  Module m = parse(R"(
func.func @main(%x: tensor<5x7xf32>, %w: tensor<3x7xf32>, %b: tensor<7x5xf32>, %q: tensor<2x4x3xf32>, %z: tensor<4x6xf32>)
    -> (tensor<5x3xf32>, tensor<7x5xf32>, tensor<5x3xf32>, tensor<2x3x3xf32>, tensor<3x2x6xf32>, tensor<7x5xf32>) {
  %wt = stablehlo.transpose %w, dims = [1, 0] : (tensor<3x7xf32>) -> tensor<7x3xf32>
  %y = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0] : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  %y2 = stablehlo.dot_general %x, %wt, contracting_dims = [1] x [0] : (tensor<5x7xf32>, tensor<7x3xf32>) -> tensor<5x3xf32>
  %xt = stablehlo.transpose %x, dims = [1, 0] : (tensor<5x7xf32>) -> tensor<7x5xf32>
  %v = stablehlo.add %xt, %b : tensor<7x5xf32>
  %qt = stablehlo.transpose %q, dims = [0, 2, 1] : (tensor<2x4x3xf32>) -> tensor<2x3x4xf32>
  %g = stablehlo.dot_general %qt, %q, batching_dims = [0] x [0], contracting_dims = [2] x [1] : (tensor<2x3x4xf32>, tensor<2x4x3xf32>) -> tensor<2x3x3xf32>
  %qr = stablehlo.transpose %q, dims = [2, 0, 1] : (tensor<2x4x3xf32>) -> tensor<3x2x4xf32>
  %h = stablehlo.dot_general %qr, %z, contracting_dims = [2] x [0] : (tensor<3x2x4xf32>, tensor<4x6xf32>) -> tensor<3x2x6xf32>
  return %y, %v, %y2, %g, %h, %xt : tensor<5x3xf32>, tensor<7x5xf32>, tensor<5x3xf32>, tensor<2x3x3xf32>, tensor<3x2x6xf32>, tensor<7x5xf32>
}
)");
  const Block& body = FuncOp(m.lookupFunction("main")).body();
  EvalContext ctx;
  auto transposeOf = [&](const char* name) -> const Operation* {
    for (const auto& op : body.operations())
      if (op->code() == OpCode::Transpose && op->result(0)->nameHint() == name) return op.get();
    return nullptr;
  };
  ASSERT_NE(transposeOf("%wt"), nullptr);
  EXPECT_TRUE(dotconv::transposeFoldsIntoDots(*transposeOf("%wt"), ctx));   // two dot users
  EXPECT_FALSE(dotconv::transposeFoldsIntoDots(*transposeOf("%xt"), ctx));  // also added and returned
  EXPECT_TRUE(dotconv::transposeFoldsIntoDots(*transposeOf("%qt"), ctx));   // batched lhs
  EXPECT_FALSE(dotconv::transposeFoldsIntoDots(*transposeOf("%qr"), ctx));  // would reorder free dims
  ctx.onResult = [](const Value&, const Literal&) {};
  EXPECT_FALSE(dotconv::transposeFoldsIntoDots(*transposeOf("%wt"), ctx));  // a hook sees every result

  std::mt19937 rng(5);
  Literal x = randomF32({5, 7}, rng), w = randomF32({3, 7}, rng), b = randomF32({7, 5}, rng),
          q = randomF32({2, 4, 3}, rng), z = randomF32({4, 6}, rng);
  std::vector<Literal> r = runMain(m, {x, w, b, q, z});
  ASSERT_EQ(r.size(), 6u);
  const float *X = x.dataAs<float>(), *W = w.dataAs<float>(), *B = b.dataAs<float>(), *Q = q.dataAs<float>(),
              *Z = z.dataAs<float>();
  for (int64_t i = 0; i < 5; ++i)
    for (int64_t j = 0; j < 3; ++j) {
      double acc = 0;
      for (int64_t k = 0; k < 7; ++k) acc += static_cast<double>(X[i * 7 + k]) * W[j * 7 + k];
      EXPECT_NEAR(r[0].dataAs<float>()[i * 3 + j], acc, 1e-5);
      EXPECT_NEAR(r[2].dataAs<float>()[i * 3 + j], acc, 1e-5);
    }
  for (int64_t i = 0; i < 7; ++i)
    for (int64_t j = 0; j < 5; ++j) {
      EXPECT_FLOAT_EQ(r[1].dataAs<float>()[i * 5 + j], X[j * 7 + i] + B[i * 5 + j]);
      EXPECT_FLOAT_EQ(r[5].dataAs<float>()[i * 5 + j], X[j * 7 + i]);
    }
  for (int64_t n = 0; n < 2; ++n)  // g[n, i, j] = sum_k q[n, k, i] q[n, k, j]
    for (int64_t i = 0; i < 3; ++i)
      for (int64_t j = 0; j < 3; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k) acc += static_cast<double>(Q[n * 12 + k * 3 + i]) * Q[n * 12 + k * 3 + j];
        EXPECT_NEAR(r[3].dataAs<float>()[n * 9 + i * 3 + j], acc, 1e-5);
      }
  for (int64_t a = 0; a < 3; ++a)  // h[a, n, j] = sum_k q[n, k, a] z[k, j]
    for (int64_t n = 0; n < 2; ++n)
      for (int64_t j = 0; j < 6; ++j) {
        double acc = 0;
        for (int64_t k = 0; k < 4; ++k) acc += static_cast<double>(Q[n * 12 + k * 3 + a]) * Z[k * 6 + j];
        EXPECT_NEAR(r[4].dataAs<float>()[a * 12 + n * 6 + j], acc, 1e-5);
      }
}

// Broadcasts whose only users are f32 add/subtract/multiply/divide/maximum/minimum are read
// through broadcast strides instead of being materialized; others are materialized. Results
// agree with loops either way.
TEST(PerfFastPaths, BroadcastFoldsIntoElementwise) {
  Module m = parse(R"(
func.func @main(%x: tensor<2x3x4x5xf32>, %c: tensor<3xf32>, %r: tensor<5xf32>, %s: tensor<f32>, %u: tensor<1x3x1x1xf32>)
    -> (tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>) {
  %bc = stablehlo.broadcast_in_dim %c, dims = [1] : (tensor<3xf32>) -> tensor<2x3x4x5xf32>
  %a = stablehlo.subtract %x, %bc : tensor<2x3x4x5xf32>
  %m = stablehlo.multiply %bc, %a : tensor<2x3x4x5xf32>
  %br = stablehlo.broadcast_in_dim %r, dims = [3] : (tensor<5xf32>) -> tensor<2x3x4x5xf32>
  %d = stablehlo.divide %m, %br : tensor<2x3x4x5xf32>
  %bs = stablehlo.broadcast_in_dim %s, dims = [] : (tensor<f32>) -> tensor<2x3x4x5xf32>
  %relu = stablehlo.maximum %d, %bs : tensor<2x3x4x5xf32>
  %both = stablehlo.add %bs, %br : tensor<2x3x4x5xf32>
  %kept = stablehlo.broadcast_in_dim %r, dims = [3] : (tensor<5xf32>) -> tensor<2x3x4x5xf32>
  %e = stablehlo.exponential %kept : tensor<2x3x4x5xf32>
  %mn = stablehlo.minimum %kept, %x : tensor<2x3x4x5xf32>
  %bu = stablehlo.broadcast_in_dim %u, dims = [0, 1, 2, 3] : (tensor<1x3x1x1xf32>) -> tensor<2x3x4x5xf32>
  %p = stablehlo.multiply %x, %bu : tensor<2x3x4x5xf32>
  return %relu, %both, %e, %mn, %kept, %p : tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>, tensor<2x3x4x5xf32>
}
)");
  const Block& body = FuncOp(m.lookupFunction("main")).body();
  EvalContext ctx;
  auto broadcastOf = [&](const char* name) -> const Operation* {
    for (const auto& op : body.operations())
      if (op->code() == OpCode::BroadcastInDim && op->result(0)->nameHint() == name) return op.get();
    return nullptr;
  };
  ASSERT_NE(broadcastOf("%bc"), nullptr);
  EXPECT_TRUE(ew::broadcastFoldsIntoElementwise(*broadcastOf("%bc"), ctx));
  EXPECT_TRUE(ew::broadcastFoldsIntoElementwise(*broadcastOf("%br"), ctx));
  EXPECT_TRUE(ew::broadcastFoldsIntoElementwise(*broadcastOf("%bs"), ctx));
  EXPECT_TRUE(ew::broadcastFoldsIntoElementwise(*broadcastOf("%bu"), ctx));
  EXPECT_FALSE(ew::broadcastFoldsIntoElementwise(*broadcastOf("%kept"), ctx));  // exponential, returned

  std::mt19937 rng(9);
  Literal x = randomF32({2, 3, 4, 5}, rng), c = randomF32({3}, rng), r = randomF32({5}, rng, 0.5f, 2.f),
          s = randomF32({}, rng), u = randomF32({1, 3, 1, 1}, rng);
  std::vector<Literal> out = runMain(m, {x, c, r, s, u});
  ASSERT_EQ(out.size(), 6u);
  const float *X = x.dataAs<float>(), *C = c.dataAs<float>(), *R = r.dataAs<float>(), S = s.dataAs<float>()[0],
              *U = u.dataAs<float>();
  for (int64_t i = 0; i < 120; ++i) {
    int64_t ch = (i / 20) % 3, w = i % 5;
    float a = X[i] - C[ch];
    float d = (C[ch] * a) / R[w];
    EXPECT_FLOAT_EQ(out[0].dataAs<float>()[i], std::max(d, S)) << i;
    EXPECT_FLOAT_EQ(out[1].dataAs<float>()[i], S + R[w]) << i;
    EXPECT_FLOAT_EQ(out[2].dataAs<float>()[i], std::exp(R[w])) << i;
    EXPECT_FLOAT_EQ(out[3].dataAs<float>()[i], std::min(R[w], X[i])) << i;
    EXPECT_FLOAT_EQ(out[4].dataAs<float>()[i], R[w]) << i;
    EXPECT_FLOAT_EQ(out[5].dataAs<float>()[i], X[i] * U[ch]) << i;
  }
}

}  // namespace
}  // namespace wf
