// Tensor comparison under package tolerances (compare.h).
#include "runtime/compare.h"

#include <cmath>
#include <complex>
#include <cstdio>
#include <limits>

namespace wf {
namespace {

std::string formatDouble(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6g", v);
  return buf;
}

std::string formatIndex(const std::vector<int64_t>& index) {
  std::string s = "[";
  for (size_t i = 0; i < index.size(); ++i) s += (i ? ", " : "") + std::to_string(index[i]);
  return s + "]";
}

// The value of element `i` as a complex number (real types have a zero imaginary part).
std::complex<double> element(const Literal& l, int64_t i) {
  if (isComplex(l.elementType())) return l.getComplex(i);
  if (isFloat(l.elementType())) return l.getDouble(i);
  return static_cast<double>(l.getInt(i));
}

bool isNan(std::complex<double> v) { return std::isnan(v.real()) || std::isnan(v.imag()); }

}  // namespace

Comparison compareTensors(const Literal& actual, const Literal& expected, const Tolerances& tol,
                          const Literal* reference64) {
  Comparison c;
  if (!actual.type().isTensor() || !expected.type().isTensor()) {
    c.problem = "cannot compare " + actual.type().toString() + " with " + expected.type().toString();
    return c;
  }
  if (actual.shape() != expected.shape()) {
    c.problem = "shape " + actual.type().toString() + " differs from the golden " + expected.type().toString();
    return c;
  }
  if (reference64 && reference64->type().isTensor() && reference64->shape() != actual.shape()) {
    c.problem = "shape " + actual.type().toString() + " differs from the float64 reference " +
                reference64->type().toString();
    return c;
  }
  if (reference64 && (!reference64->type().isTensor() || !isFloat(reference64->elementType()) ||
                      tol.kind != Tolerances::Kind::kElementwise))
    reference64 = nullptr;  // only real elementwise comparisons are arbitrated
  c.numElements = actual.numElements();
  // PyTorch's own float32 error on this tensor, measured against float64.
  double goldenErr64 = 0;
  if (reference64)
    for (int64_t i = 0; i < c.numElements; ++i) {
      double d = std::abs(element(expected, i) - reference64->getDouble(i));
      if (std::isfinite(d)) goldenErr64 = std::max(goldenErr64, d);
    }
  const double inf = std::numeric_limits<double>::infinity();
  double sumDiff2 = 0, sumExp2 = 0;
  double worstExcess = -inf;  // how far the worst element is beyond its allowance
  bool worstIsNan = false;
  for (int64_t i = 0; i < c.numElements; ++i) {
    std::complex<double> a = element(actual, i), e = element(expected, i);
    double absE = std::abs(e);
    if (isNan(a) || isNan(e)) {
      ++c.nanCount;
      ++c.mismatches;
      if (!worstIsNan) {  // the first NaN is the element to show
        worstIsNan = true;
        c.worstIndex = i;
        c.worstActual = a.real();
        c.worstExpected = e.real();
      }
      continue;
    }
    double diff = a == e ? 0.0 : std::abs(a - e);  // equal infinities agree
    c.maxAbsErr = std::max(c.maxAbsErr, diff);
    if (absE > 0 && std::isfinite(absE)) c.maxRelErr = std::max(c.maxRelErr, diff / absE);
    else if (absE > 0 && diff > 0) c.maxRelErr = inf;
    sumDiff2 += diff * diff;
    sumExp2 += absE * absE;
    double allowance = tol.kind == Tolerances::Kind::kElementwise ? tol.atol + tol.rtol * absE : 0.0;
    bool within = std::isfinite(diff) && diff <= allowance;  // an infinite golden value allows nothing
    if (!within && reference64 && std::isfinite(diff)) {
      double r = reference64->getDouble(i);
      if (std::isfinite(r) && std::abs(a - r) <= 2 * goldenErr64 + tol.atol) {
        ++c.arbitrated;
        within = true;
        allowance = diff;  // not a candidate for the worst element
      }
    }
    if (tol.kind == Tolerances::Kind::kElementwise && !within) ++c.mismatches;
    double excess = diff - allowance;
    if (!worstIsNan && (excess > worstExcess || c.worstIndex < 0)) {
      worstExcess = excess;
      c.worstIndex = i;
      c.worstActual = a.real();
      c.worstExpected = e.real();
    }
  }
  double normDiff = std::sqrt(sumDiff2), normExp = std::sqrt(sumExp2);
  c.relL2 = normDiff == 0 ? 0.0 : (normExp == 0 ? inf : normDiff / normExp);
  if (c.worstIndex >= 0) {
    c.worstMultiIndex.assign(actual.shape().size(), 0);
    int64_t rest = c.worstIndex;
    for (size_t d = actual.shape().size(); d-- > 0;) {
      int64_t dim = actual.shape()[d];
      c.worstMultiIndex[d] = dim > 0 ? rest % dim : 0;
      rest = dim > 0 ? rest / dim : 0;
    }
  }
  if (tol.kind == Tolerances::Kind::kElementwise)
    c.passed = c.mismatches == 0 && c.nanCount == 0;
  else
    c.passed = c.nanCount == 0 && c.relL2 <= tol.relL2;
  return c;
}

std::string Comparison::summary(const Tolerances& tol) const {
  if (!problem.empty()) return problem;
  std::string s = "max_abs " + formatDouble(maxAbsErr) + "  max_rel " + formatDouble(maxRelErr);
  if (tol.kind == Tolerances::Kind::kRelL2) s += "  rel_l2 " + formatDouble(relL2);
  if (arbitrated > 0)
    s += "  (" + std::to_string(arbitrated) + " element(s) beyond " + tol.toString() +
         " but within float32 PyTorch's own error of float64)";
  if (passed) return s;
  s += "  (";
  if (nanCount > 0) s += std::to_string(nanCount) + " NaN element(s); ";
  if (tol.kind == Tolerances::Kind::kElementwise)
    s += std::to_string(mismatches) + " of " + std::to_string(numElements) + " elements outside " + tol.toString();
  else
    s += "rel_l2 above " + formatDouble(tol.relL2);
  if (worstIndex >= 0)
    s += "; worst at " + formatIndex(worstMultiIndex) + ": " + formatDouble(worstActual) + " vs golden " +
         formatDouble(worstExpected);
  return s + ")";
}

}  // namespace wf
