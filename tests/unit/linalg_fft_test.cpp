// Tests of the CPU fft, triangular_solve, cholesky and batch_norm_* kernels: naive DFT and
// round trips, residuals of solves and factorisations, and finite differences for batch_norm_grad.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <random>

#include "eval/interpreter.h"

namespace wf {
namespace {

using E = ElementType;
using cd = std::complex<double>;

std::unique_ptr<Operation> makeOp(const std::string& name, std::vector<Type> results,
                                  std::vector<NamedAttribute> attrs) {
  auto op = std::make_unique<Operation>(name, Location{"test", 1, 1, ""});
  for (Type& t : results) op->addResult(std::move(t));
  for (auto& [k, v] : attrs) op->setAttr(k, v);
  return op;
}

std::vector<Literal> run(const Operation& op, std::vector<Literal> operands) {
  const Kernel* k = KernelRegistry::instance().find(op.code());
  EXPECT_NE(k, nullptr);
  EvalContext ctx;
  auto r = (*k)(op, operands, ctx);
  EXPECT_TRUE(r) << r.status().toString();
  return r ? *r : std::vector<Literal>{};
}

Literal randomLiteral(const Type& t, std::mt19937& rng) {
  Literal l = Literal::zeros(t);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int64_t i = 0; i < l.numElements(); ++i) {
    if (isComplex(t.elementType())) l.setComplex(i, {u(rng), u(rng)});
    else l.setDouble(i, u(rng));
  }
  return l;
}

// ----------------------------------------------------------------------------------------------
// fft

std::unique_ptr<Operation> fftOp(const char* kind, std::vector<int64_t> lengths, Type result) {
  return makeOp("stablehlo.fft", {std::move(result)},
                {{"fft_type", Attribute::enumValue("stablehlo", "fft_type", kind)},
                 {"fft_length", Attribute::denseArray(E::kSI64, std::move(lengths))}});
}

TEST(Fft, TwoDimensionalMatchesNaiveDft) {
  std::mt19937 rng(1);
  const int64_t b = 3, h = 4, w = 5;
  Literal x = randomLiteral(Type::tensor({b, h, w}, E::kComplexF64), rng);
  auto op = fftOp("FFT", {h, w}, Type::tensor({b, h, w}, E::kComplexF64));
  auto out = run(*op, {x});
  ASSERT_EQ(out.size(), 1u);
  for (int64_t bi = 0; bi < b; ++bi)
    for (int64_t u = 0; u < h; ++u)
      for (int64_t v = 0; v < w; ++v) {
        cd acc = 0;
        for (int64_t i = 0; i < h; ++i)
          for (int64_t j = 0; j < w; ++j)
            acc += x.getComplex((bi * h + i) * w + j) *
                   std::polar(1.0, -2 * M_PI * (static_cast<double>(u * i) / h + static_cast<double>(v * j) / w));
        EXPECT_NEAR(std::abs(out[0].getComplex((bi * h + u) * w + v) - acc), 0, 1e-9);
      }
}

TEST(Fft, ComplexRoundTripF32) {
  std::mt19937 rng(2);
  Type t = Type::tensor({2, 3, 4, 6}, E::kComplexF32);
  Literal x = randomLiteral(t, rng);
  auto fwd = fftOp("FFT", {3, 4, 6}, t);
  auto inv = fftOp("IFFT", {3, 4, 6}, t);
  Literal y = run(*fwd, {x})[0];
  Literal z = run(*inv, {y})[0];
  for (int64_t i = 0; i < x.numElements(); ++i) EXPECT_NEAR(std::abs(z.getComplex(i) - x.getComplex(i)), 0, 1e-5);
}

TEST(Fft, RealRoundTripAndHalfSpectrum) {
  std::mt19937 rng(3);
  Literal x = randomLiteral(Type::tensor({2, 4, 7}, E::kF64), rng);
  auto fwd = fftOp("RFFT", {4, 7}, Type::tensor({2, 4, 4}, E::kComplexF64));
  Literal y = run(*fwd, {x})[0];
  ASSERT_EQ(y.shape(), (std::vector<int64_t>{2, 4, 4}));
  // Bin (0, 0) is the sum of each batch.
  for (int64_t b = 0; b < 2; ++b) {
    double s = 0;
    for (int64_t i = 0; i < 28; ++i) s += x.getDouble(b * 28 + i);
    EXPECT_NEAR(std::abs(y.getComplex(b * 16) - cd(s, 0)), 0, 1e-9);
  }
  auto inv = fftOp("IRFFT", {4, 7}, Type::tensor({2, 4, 7}, E::kF64));
  Literal z = run(*inv, {y})[0];
  for (int64_t i = 0; i < x.numElements(); ++i) EXPECT_NEAR(z.getDouble(i), x.getDouble(i), 1e-12);
}

// ----------------------------------------------------------------------------------------------
// triangular_solve

// Random matrices whose chosen triangle is well conditioned (dominant diagonal); the other
// triangle holds garbage that the kernel must ignore.
Literal triangularMatrix(int64_t batch, int64_t n, E type, std::mt19937& rng) {
  Literal a = randomLiteral(Type::tensor({batch, n, n}, type), rng);
  for (int64_t b = 0; b < batch; ++b)
    for (int64_t i = 0; i < n; ++i) {
      int64_t d = (b * n + i) * n + i;
      if (isComplex(type)) a.setComplex(d, a.getComplex(d) + cd(n + 1.0, 0));
      else a.setDouble(d, a.getDouble(d) + (a.getDouble(d) >= 0 ? n + 1.0 : -(n + 1.0)));
    }
  return a;
}

TEST(TriangularSolve, ResidualsForEveryVariant) {
  std::mt19937 rng(4);
  const int64_t batch = 2, m = 5, n = 3;
  for (E type : {E::kF32, E::kF64, E::kComplexF32, E::kComplexF64})
    for (bool left : {true, false})
      for (bool lower : {true, false})
        for (bool unit : {true, false})
          for (const char* trans : {"NO_TRANSPOSE", "TRANSPOSE", "ADJOINT"}) {
            int64_t k = left ? m : n;
            Literal a = triangularMatrix(batch, k, type, rng);
            Literal b = randomLiteral(Type::tensor({batch, m, n}, type), rng);
            auto op = makeOp("stablehlo.triangular_solve", {b.type()},
                             {{"left_side", Attribute::boolean(left)},
                              {"lower", Attribute::boolean(lower)},
                              {"unit_diagonal", Attribute::boolean(unit)},
                              {"transpose_a", Attribute::enumValue("stablehlo", "transpose", trans)}});
            Literal x = run(*op, {a, b})[0];
            // op(a) as used: the chosen triangle, unit diagonal if asked, then transposed/adjoint.
            auto opA = [&](int64_t bi, int64_t i, int64_t j) {
              std::string t = trans;
              int64_t r = i, c = j;
              if (t != "NO_TRANSPOSE") std::swap(r, c);
              cd v = (r == c && unit) ? cd(1) : ((lower ? c <= r : c >= r) ? a.getComplex((bi * k + r) * k + c) : cd(0));
              return t == "ADJOINT" ? std::conj(v) : v;
            };
            double tol = (type == E::kF32 || type == E::kComplexF32) ? 1e-4 : 1e-10;
            for (int64_t bi = 0; bi < batch; ++bi)
              for (int64_t i = 0; i < m; ++i)
                for (int64_t j = 0; j < n; ++j) {
                  cd acc = 0;
                  for (int64_t p = 0; p < k; ++p)
                    acc += left ? opA(bi, i, p) * x.getComplex((bi * m + p) * n + j)
                                : x.getComplex((bi * m + i) * n + p) * opA(bi, p, j);
                  ASSERT_NEAR(std::abs(acc - b.getComplex((bi * m + i) * n + j)), 0, tol)
                      << elementTypeName(type) << " left=" << left << " lower=" << lower << " unit=" << unit
                      << " " << trans;
                }
          }
}

// ----------------------------------------------------------------------------------------------
// cholesky

TEST(Cholesky, ReconstructsSpdMatrices) {
  std::mt19937 rng(5);
  const int64_t batch = 2, n = 6;
  for (E type : {E::kF32, E::kF64, E::kComplexF64})
    for (bool lower : {true, false}) {
      Literal m = randomLiteral(Type::tensor({batch, n, n}, type), rng);
      Literal a = Literal::zeros(m.type());
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            cd s = i == j ? cd(n) : cd(0);
            for (int64_t p = 0; p < n; ++p)
              s += m.getComplex((b * n + i) * n + p) * std::conj(m.getComplex((b * n + j) * n + p));
            a.setComplex((b * n + i) * n + j, s);
          }
      auto op = makeOp("stablehlo.cholesky", {a.type()}, {{"lower", Attribute::boolean(lower)}});
      Literal f = run(*op, {a})[0];
      double tol = type == E::kF32 ? 1e-4 : 1e-10;
      for (int64_t b = 0; b < batch; ++b)
        for (int64_t i = 0; i < n; ++i)
          for (int64_t j = 0; j < n; ++j) {
            cd s = 0;
            // lower: a = L L^H; upper: a = U^H U.
            for (int64_t p = 0; p < n; ++p)
              s += lower ? f.getComplex((b * n + i) * n + p) * std::conj(f.getComplex((b * n + j) * n + p))
                         : std::conj(f.getComplex((b * n + p) * n + i)) * f.getComplex((b * n + p) * n + j);
            ASSERT_NEAR(std::abs(s - a.getComplex((b * n + i) * n + j)), 0, tol * n) << lower;
            bool outside = lower ? j > i : j < i;
            if (outside) {
              ASSERT_EQ(f.getComplex((b * n + i) * n + j), cd(0));
            }
          }
    }
}

// ----------------------------------------------------------------------------------------------
// batch_norm_*

std::vector<NamedAttribute> bnAttrs(double eps, int64_t feature) {
  return {{"epsilon", Attribute::floating(eps, E::kF32)}, {"feature_index", Attribute::integer(feature)}};
}

TEST(BatchNorm, TrainingAndInferenceMatchNaiveStatistics) {
  std::mt19937 rng(6);
  const int64_t n = 3, c = 4, w = 5;  // feature dim in the middle
  Literal x = randomLiteral(Type::tensor({n, c, w}, E::kF64), rng);
  Literal scale = randomLiteral(Type::tensor({c}, E::kF64), rng), offset = randomLiteral(Type::tensor({c}, E::kF64), rng);
  auto train = makeOp("stablehlo.batch_norm_training",
                      {x.type(), scale.type(), scale.type()}, bnAttrs(1e-3, 1));
  auto out = run(*train, {x, scale, offset});
  ASSERT_EQ(out.size(), 3u);
  for (int64_t f = 0; f < c; ++f) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < w; ++j) mean += x.getDouble((i * c + f) * w + j) / (n * w);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < w; ++j) var += std::pow(x.getDouble((i * c + f) * w + j) - mean, 2) / (n * w);
    EXPECT_NEAR(out[1].getDouble(f), mean, 1e-12);
    EXPECT_NEAR(out[2].getDouble(f), var, 1e-12);
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j < w; ++j) {
        int64_t e = (i * c + f) * w + j;
        double expect = (x.getDouble(e) - mean) / std::sqrt(var + 1e-3) * scale.getDouble(f) + offset.getDouble(f);
        EXPECT_NEAR(out[0].getDouble(e), expect, 1e-12);
      }
  }
  auto infer = makeOp("stablehlo.batch_norm_inference", {x.type()}, bnAttrs(1e-3, 1));
  auto inf = run(*infer, {x, scale, offset, out[1], out[2]});
  for (int64_t i = 0; i < x.numElements(); ++i) EXPECT_NEAR(inf[0].getDouble(i), out[0].getDouble(i), 1e-12);
}

TEST(BatchNorm, GradMatchesFiniteDifferences) {
  std::mt19937 rng(7);
  const int64_t n = 2, h = 3, c = 3;  // feature dim last
  Literal x = randomLiteral(Type::tensor({n, h, c}, E::kF64), rng);
  Literal scale = randomLiteral(Type::tensor({c}, E::kF64), rng), offset = randomLiteral(Type::tensor({c}, E::kF64), rng);
  Literal dy = randomLiteral(x.type(), rng);
  const double eps = 1e-2;
  auto train = makeOp("stablehlo.batch_norm_training", {x.type(), scale.type(), scale.type()}, bnAttrs(eps, 2));
  // loss(x, scale, offset) = sum(dy * batch_norm_training(x, scale, offset)).
  auto loss = [&](const Literal& xx, const Literal& s, const Literal& o) {
    Literal y = run(*train, {xx, s, o})[0];
    double l = 0;
    for (int64_t i = 0; i < y.numElements(); ++i) l += y.getDouble(i) * dy.getDouble(i);
    return l;
  };
  auto stats = run(*train, {x, scale, offset});
  auto grad = makeOp("stablehlo.batch_norm_grad", {x.type(), scale.type(), scale.type()}, bnAttrs(eps, 2));
  auto g = run(*grad, {x, scale, stats[1], stats[2], dy});
  ASSERT_EQ(g.size(), 3u);
  const double step = 1e-6;
  auto numeric = [&](Literal& target, int64_t i) {
    double v = target.getDouble(i);
    target.setDouble(i, v + step);
    double up = loss(x, scale, offset);
    target.setDouble(i, v - step);
    double down = loss(x, scale, offset);
    target.setDouble(i, v);
    return (up - down) / (2 * step);
  };
  for (int64_t i = 0; i < x.numElements(); ++i) EXPECT_NEAR(g[0].getDouble(i), numeric(x, i), 1e-6) << i;
  for (int64_t f = 0; f < c; ++f) {
    EXPECT_NEAR(g[1].getDouble(f), numeric(scale, f), 1e-6);
    EXPECT_NEAR(g[2].getDouble(f), numeric(offset, f), 1e-6);
  }
}

}  // namespace
}  // namespace wf
