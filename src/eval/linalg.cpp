// triangular_solve, cholesky and the batch_norm_* ops on the CPU.
//
// triangular_solve runs one BLAS trsm per batch matrix (f16/bf16/f8 widened to f32). cholesky
// is a plain O(n^3) factorisation in f64 / complex<f64>: matrices here are small, and the result
// is then rounded once. batch_norm_* compute their statistics in f64.
#include <cblas.h>

#include <cmath>

#include "eval/dot_conv_util.h"
#include "eval/shape_util.h"

namespace wf::dotconv {
namespace {

using ::wf::cpu::boolAttr;

// ---------------------------------------------------------------------------------------------
// triangular_solve

template <typename T>
void trsm(bool left, bool lower, CBLAS_TRANSPOSE trans, bool unit, int64_t m, int64_t n, const T* a, T* b) {
  CBLAS_SIDE side = left ? CblasLeft : CblasRight;
  CBLAS_UPLO uplo = lower ? CblasLower : CblasUpper;
  CBLAS_DIAG diag = unit ? CblasUnit : CblasNonUnit;
  auto M = static_cast<blasint>(m), N = static_cast<blasint>(n);
  auto lda = static_cast<blasint>(std::max<int64_t>(left ? m : n, 1)), ldb = static_cast<blasint>(std::max<int64_t>(n, 1));
  if constexpr (std::is_same_v<T, float>) {
    cblas_strsm(CblasRowMajor, side, uplo, trans, diag, M, N, 1.0f, a, lda, b, ldb);
  } else if constexpr (std::is_same_v<T, double>) {
    cblas_dtrsm(CblasRowMajor, side, uplo, trans, diag, M, N, 1.0, a, lda, b, ldb);
  } else if constexpr (std::is_same_v<T, c64>) {
    const c64 one(1);
    cblas_ctrsm(CblasRowMajor, side, uplo, trans, diag, M, N, &one, a, lda, b, ldb);
  } else {
    const c128 one(1);
    cblas_ztrsm(CblasRowMajor, side, uplo, trans, diag, M, N, &one, a, lda, b, ldb);
  }
}

template <typename T>
void solveAll(const Literal& aL, const Literal& bL, bool left, bool lower, CBLAS_TRANSPOSE trans, bool unit,
              Literal& out) {
  std::vector<T> a = convertTo<T>(aL), b = convertTo<T>(bL);
  const auto& bs = bL.shape();
  int64_t m = bs[bs.size() - 2], n = bs[bs.size() - 1];
  int64_t k = left ? m : n;
  int64_t batches = m * n == 0 ? 0 : bL.numElements() / (m * n);
  for (int64_t i = 0; i < batches; ++i) trsm<T>(left, lower, trans, unit, m, n, a.data() + i * k * k, b.data() + i * m * n);
  storeFrom(b.data(), out);
}

Expected<std::vector<Literal>> triangularSolveKernel(const Operation& op, std::span<const Literal> operands,
                                                     EvalContext&) {
  const Literal& a = operands[0];
  const Literal& b = operands[1];
  int64_t ar = a.type().rank(), br = b.type().rank();
  if (ar < 2 || ar != br) return invalidArgument(op.describe() + ": a and b must have the same rank >= 2");
  bool left = boolAttr(op, "left_side", true), lower = boolAttr(op, "lower", true);
  bool unit = boolAttr(op, "unit_diagonal", false);
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  if (const Attribute* t = op.attr("transpose_a")) {
    const std::string& v = t->stringValue();
    if (v == "TRANSPOSE") trans = CblasTrans;
    else if (v == "ADJOINT") trans = CblasConjTrans;
    else if (v != "NO_TRANSPOSE") return invalidArgument(op.describe() + ": unknown transpose_a " + v);
  }
  const auto& as = a.shape();
  const auto& bs = b.shape();
  int64_t k = left ? bs[static_cast<size_t>(br - 2)] : bs[static_cast<size_t>(br - 1)];
  if (as[static_cast<size_t>(ar - 1)] != k || as[static_cast<size_t>(ar - 2)] != k ||
      !std::equal(as.begin(), as.end() - 2, bs.begin()))
    return invalidArgument(op.describe() + ": shapes of a " + a.type().toString() + " and b " +
                           b.type().toString() + " do not match");
  ElementType et = b.elementType();
  Literal out = Literal::zeros(b.type());
  if (et == ElementType::kComplexF64) {
    solveAll<c128>(a, b, left, lower, trans, unit, out);
  } else if (et == ElementType::kComplexF32) {
    solveAll<c64>(a, b, left, lower, trans, unit, out);
  } else if (et == ElementType::kF64) {
    solveAll<double>(a, b, left, lower, trans, unit, out);
  } else if (isFloat(et)) {
    solveAll<float>(a, b, left, lower, trans, unit, out);
  } else {
    return invalidArgument(op.describe() + ": triangular_solve needs floating-point or complex operands");
  }
  return std::vector<Literal>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// cholesky

double conjOf(double v) { return v; }
c128 conjOf(c128 v) { return std::conj(v); }
double realOf(double v) { return v; }
double realOf(c128 v) { return v.real(); }

// Factorises each n x n matrix: lower: a = L L^H reading a's lower triangle; upper: a = U^H U
// reading a's upper triangle. The other triangle of the result is zero; a matrix that is not
// positive definite yields NaNs from the square root of a negative pivot.
template <typename T>
void choleskyAll(const Literal& aL, bool lower, Literal& out) {
  std::vector<T> a = convertTo<T>(aL);
  const auto& s = aL.shape();
  int64_t n = s.back();
  int64_t batches = n == 0 ? 0 : aL.numElements() / (n * n);
  std::vector<T> res(a.size(), T(0)), l(static_cast<size_t>(n * n));
  for (int64_t bi = 0; bi < batches; ++bi) {
    const T* m = a.data() + bi * n * n;
    // Element (i, j), i >= j, of the Hermitian matrix as seen from the chosen triangle.
    auto at = [&](int64_t i, int64_t j) { return lower ? m[i * n + j] : conjOf(m[j * n + i]); };
    std::fill(l.begin(), l.end(), T(0));
    for (int64_t j = 0; j < n; ++j) {
      double d = realOf(at(j, j));
      for (int64_t k = 0; k < j; ++k) d -= realOf(l[j * n + k] * conjOf(l[j * n + k]));
      double djj = std::sqrt(d);
      l[j * n + j] = T(djj);
      for (int64_t i = j + 1; i < n; ++i) {
        T v = at(i, j);
        for (int64_t k = 0; k < j; ++k) v -= l[i * n + k] * conjOf(l[j * n + k]);
        l[i * n + j] = v / djj;
      }
    }
    T* r = res.data() + bi * n * n;
    for (int64_t i = 0; i < n; ++i)
      for (int64_t j = 0; j <= i; ++j) {
        if (lower) r[i * n + j] = l[i * n + j];
        else r[j * n + i] = conjOf(l[i * n + j]);
      }
  }
  storeFrom(res.data(), out);
}

Expected<std::vector<Literal>> choleskyKernel(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  const Literal& a = operands[0];
  int64_t r = a.type().rank();
  if (r < 2 || a.shape()[static_cast<size_t>(r - 1)] != a.shape()[static_cast<size_t>(r - 2)])
    return invalidArgument(op.describe() + ": operand must be a batch of square matrices");
  bool lower = boolAttr(op, "lower", false);
  Literal out = Literal::zeros(a.type());
  if (isComplex(a.elementType())) {
    choleskyAll<c128>(a, lower, out);
  } else if (isFloat(a.elementType())) {
    choleskyAll<double>(a, lower, out);
  } else {
    return invalidArgument(op.describe() + ": cholesky needs a floating-point or complex operand");
  }
  return std::vector<Literal>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// batch_norm_inference / batch_norm_training / batch_norm_grad

struct BatchNormLayout {
  int64_t features = 0, inner = 1, count = 0;  // count: elements per feature
  int64_t featureOf(int64_t i) const { return (i / inner) % features; }
};

Expected<BatchNormLayout> batchNormLayout(const Operation& op, const Literal& operand) {
  const Attribute* fi = op.attr("feature_index");
  std::optional<int64_t> f = fi ? fi->asInt() : std::nullopt;
  int64_t rank = operand.type().rank();
  if (!f || *f < 0 || *f >= rank) return invalidArgument(op.describe() + ": bad feature_index");
  if (!isFloat(operand.elementType()))
    return invalidArgument(op.describe() + ": batch norm needs a floating-point operand");
  BatchNormLayout l;
  l.features = operand.shape()[static_cast<size_t>(*f)];
  for (int64_t d = *f + 1; d < rank; ++d) l.inner *= operand.shape()[static_cast<size_t>(d)];
  l.count = l.features == 0 ? 0 : operand.numElements() / l.features;
  return l;
}

double epsilonOf(const Operation& op) {
  const Attribute* e = op.attr("epsilon");
  if (!e) return 0;
  if (e->kind() == Attribute::Kind::kFloat) return e->floatValue();
  return static_cast<double>(e->asInt().value_or(0));
}

Status checkFeatureVectors(const Operation& op, std::span<const Literal> vs, const BatchNormLayout& l) {
  for (const Literal& v : vs)
    if (v.type().rank() != 1 || v.shape()[0] != l.features)
      return invalidArgument(op.describe() + ": per-feature operand " + v.type().toString() +
                             " must have one element per feature");
  return Status::ok();
}

Literal fromDoubles(const Type& t, const std::vector<double>& v) {
  Literal out = Literal::zeros(t);
  storeFrom(v.data(), out);
  return out;
}

Expected<std::vector<Literal>> batchNormInferenceKernel(const Operation& op, std::span<const Literal> operands,
                                                        EvalContext&) {
  if (operands.size() != 5) return invalidArgument(op.describe() + ": expects 5 operands");
  WF_ASSIGN_OR_RETURN(BatchNormLayout l, batchNormLayout(op, operands[0]));
  WF_RETURN_IF_ERROR(checkFeatureVectors(op, operands.subspan(1), l));
  std::vector<double> x = convertTo<double>(operands[0]), scale = convertTo<double>(operands[1]),
                      offset = convertTo<double>(operands[2]), mean = convertTo<double>(operands[3]),
                      var = convertTo<double>(operands[4]);
  double eps = epsilonOf(op);
  for (size_t i = 0; i < x.size(); ++i) {
    auto c = static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)));
    x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
  }
  return std::vector<Literal>{fromDoubles(operands[0].type(), x)};
}

// Per-feature mean and biased variance.
void featureMoments(const std::vector<double>& x, const BatchNormLayout& l, std::vector<double>& mean,
                    std::vector<double>& var) {
  mean.assign(static_cast<size_t>(l.features), 0);
  var.assign(static_cast<size_t>(l.features), 0);
  for (size_t i = 0; i < x.size(); ++i) mean[static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)))] += x[i];
  for (double& m : mean) m /= static_cast<double>(l.count);
  for (size_t i = 0; i < x.size(); ++i) {
    auto c = static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)));
    var[c] += (x[i] - mean[c]) * (x[i] - mean[c]);
  }
  for (double& v : var) v /= static_cast<double>(l.count);
}

Expected<std::vector<Literal>> batchNormTrainingKernel(const Operation& op, std::span<const Literal> operands,
                                                       EvalContext&) {
  if (operands.size() != 3) return invalidArgument(op.describe() + ": expects 3 operands");
  WF_ASSIGN_OR_RETURN(BatchNormLayout l, batchNormLayout(op, operands[0]));
  WF_RETURN_IF_ERROR(checkFeatureVectors(op, operands.subspan(1), l));
  std::vector<double> x = convertTo<double>(operands[0]), scale = convertTo<double>(operands[1]),
                      offset = convertTo<double>(operands[2]);
  std::vector<double> mean, var;
  featureMoments(x, l, mean, var);
  double eps = epsilonOf(op);
  for (size_t i = 0; i < x.size(); ++i) {
    auto c = static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)));
    x[i] = (x[i] - mean[c]) / std::sqrt(var[c] + eps) * scale[c] + offset[c];
  }
  return std::vector<Literal>{fromDoubles(operands[0].type(), x), fromDoubles(operands[1].type(), mean),
                              fromDoubles(operands[1].type(), var)};
}

Expected<std::vector<Literal>> batchNormGradKernel(const Operation& op, std::span<const Literal> operands,
                                                   EvalContext&) {
  if (operands.size() != 5) return invalidArgument(op.describe() + ": expects 5 operands");
  WF_ASSIGN_OR_RETURN(BatchNormLayout l, batchNormLayout(op, operands[0]));
  WF_RETURN_IF_ERROR(checkFeatureVectors(op, operands.subspan(1, 3), l));
  if (operands[4].shape() != operands[0].shape())
    return invalidArgument(op.describe() + ": grad_output must have the operand's shape");
  std::vector<double> x = convertTo<double>(operands[0]), scale = convertTo<double>(operands[1]),
                      mean = convertTo<double>(operands[2]), var = convertTo<double>(operands[3]),
                      dy = convertTo<double>(operands[4]);
  double eps = epsilonOf(op);
  auto nf = static_cast<size_t>(l.features);
  std::vector<double> sumDy(nf, 0), sumDyXc(nf, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    auto c = static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)));
    sumDy[c] += dy[i];
    sumDyXc[c] += dy[i] * (x[i] - mean[c]);
  }
  // The spec's formula: grad_operand = scale / stddev / N * (N * dy - sum(dy) - xc * sum(dy * xc) /
  // (var + eps)); grad_scale = sum(dy * xc / stddev); grad_offset = sum(dy).
  auto n = static_cast<double>(l.count);
  std::vector<double> gx(x.size()), gScale(nf);
  for (size_t i = 0; i < x.size(); ++i) {
    auto c = static_cast<size_t>(l.featureOf(static_cast<int64_t>(i)));
    double xc = x[i] - mean[c], ve = var[c] + eps, stddev = std::sqrt(ve);
    gx[i] = scale[c] / stddev / n * (dy[i] * n - sumDy[c] - xc * sumDyXc[c] / ve);
  }
  for (size_t c = 0; c < nf; ++c) gScale[c] = sumDyXc[c] / std::sqrt(var[c] + eps);
  return std::vector<Literal>{fromDoubles(operands[0].type(), gx), fromDoubles(operands[1].type(), gScale),
                              fromDoubles(operands[1].type(), sumDy)};
}

}  // namespace

void registerLinalgKernels(KernelRegistry& registry) {
  registry.add(OpCode::TriangularSolve, triangularSolveKernel);
  registry.add(OpCode::Cholesky, choleskyKernel);
  registry.add(OpCode::BatchNormInference, batchNormInferenceKernel);
  registry.add(OpCode::BatchNormTraining, batchNormTrainingKernel);
  registry.add(OpCode::BatchNormGrad, batchNormGradKernel);
}

}  // namespace wf::dotconv
