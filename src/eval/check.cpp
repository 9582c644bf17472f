#include "eval/check.h"

#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <optional>

namespace wf {
namespace {

constexpr double kDefaultTolerance = 1e-4;        // check.expect_almost_eq
constexpr double kCustomCallTolerance = 1e-3;     // custom_call @check.expect_almost_eq
constexpr uint64_t kDefaultMinUlps = 0;
constexpr uint64_t kDefaultMaxUlps = 3;

std::string formatIndex(const std::vector<int64_t>& shape, int64_t linear) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] > 0) {
      index[d] = linear % shape[d];
      linear /= shape[d];
    }
  }
  std::string s = "[";
  for (size_t d = 0; d < index.size(); ++d) s += (d ? ", " : "") + std::to_string(index[d]);
  return s + "]";
}

std::string formatFloat(double v, ElementType t) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  int digits = t == ElementType::kF64 || t == ElementType::kComplexF64 ? 17 : t == ElementType::kF32 || t == ElementType::kComplexF32 ? 9 : 6;
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*g", digits, v);
  return buf;
}

std::string formatElement(const Literal& l, int64_t i) {
  ElementType t = l.elementType();
  if (t == ElementType::kI1) return l.getBits(i) ? "true" : "false";
  if (t == ElementType::kUI64) return std::to_string(l.getBits(i));
  if (isInteger(t) || t == ElementType::kIndex) return std::to_string(l.getInt(i));
  if (isComplex(t)) {
    std::complex<double> c = l.getComplex(i);
    return "(" + formatFloat(c.real(), t) + ", " + formatFloat(c.imag(), t) + ")";
  }
  return formatFloat(l.getDouble(i), t);
}

// Index of the expected element matching actual element i: a one-element expected value is
// broadcast (a splat constant), otherwise positions correspond.
int64_t expectedIndex(const Literal& expected, int64_t i) { return expected.numElements() == 1 ? 0 : i; }

// Checks that two literals can be compared element by element; returns a message if not.
std::string checkComparable(const Literal& actual, const Literal& expected) {
  if (!actual.type().isTensor() || !expected.type().isTensor())
    return "cannot compare " + actual.type().toString() + " with " + expected.type().toString();
  if (actual.elementType() != expected.elementType())
    return "element types differ: " + actual.type().toString() + " (actual) vs " + expected.type().toString() +
           " (expected)";
  if (actual.shape() != expected.shape() && expected.numElements() != 1)
    return "shapes differ: " + actual.type().toString() + " (actual) vs " + expected.type().toString() + " (expected)";
  return "";
}

// Runs `mismatch(i, j)` over all elements; builds the message from the first mismatch.
template <typename Mismatch>
std::string compareElements(const Literal& actual, const Literal& expected, const std::string& what,
                            Mismatch mismatch) {
  if (std::string why = checkComparable(actual, expected); !why.empty()) return why;
  int64_t count = 0;
  int64_t first = -1;
  std::string firstDetail;
  for (int64_t i = 0; i < actual.numElements(); ++i) {
    int64_t j = expectedIndex(expected, i);
    std::optional<std::string> detail = mismatch(i, j);
    if (!detail) continue;
    if (count++ == 0) {
      first = i;
      firstDetail = *detail;
    }
  }
  if (count == 0) return "";
  std::string msg = what + ": " + std::to_string(count) + " of " + std::to_string(actual.numElements()) +
                    " elements differ; first at index " + formatIndex(actual.shape(), first) + ": " +
                    formatElement(actual, first) + " (actual) vs " +
                    formatElement(expected, expectedIndex(expected, first)) + " (expected)";
  if (!firstDetail.empty()) msg += ", " + firstDetail;
  return msg;
}

bool floatsEqual(double a, double b) { return a == b || (std::isnan(a) && std::isnan(b)); }

// The StableHLO interpreter's areApproximatelyEqual: equal values (and two NaNs) match; a
// non-finite value matches nothing else; otherwise the signs must agree and the absolute
// difference be within tolerance.
bool approximatelyEqual(double f, double g, double tolerance) {
  if (f == g) return true;
  if (std::isnan(f) || std::isnan(g)) return std::isnan(f) && std::isnan(g);
  if (!std::isfinite(f) || !std::isfinite(g)) return false;
  if (std::signbit(f) != std::signbit(g)) return false;
  return std::fabs(f - g) <= tolerance;
}

// Raw bits of a float element (or one part of a complex element) and its width.
struct FloatBits {
  uint64_t bits;
  int width;
  double value;
};

FloatBits floatBits(const Literal& l, int64_t i, int part) {
  ElementType t = l.elementType();
  if (t == ElementType::kComplexF32) {
    float f = l.dataAs<float>()[2 * i + part];
    uint32_t u;
    std::memcpy(&u, &f, 4);
    return {u, 32, f};
  }
  if (t == ElementType::kComplexF64) {
    double d = l.dataAs<double>()[2 * i + part];
    uint64_t u;
    std::memcpy(&u, &d, 8);
    return {u, 64, d};
  }
  return {l.getBits(i), bitWidth(t), l.getDouble(i)};
}

uint64_t ulpDistance(const FloatBits& f, const FloatBits& g, ElementType t) {
  if (f.bits == g.bits) return 0;
  if (std::isfinite(f.value) && std::isfinite(g.value)) {
    // f8E8M0FNU has no sign bit; every other format keeps it in the top bit.
    bool hasSign = t != ElementType::kF8E8M0FNU;
    uint64_t signMask = hasSign ? uint64_t{1} << (f.width - 1) : 0;
    uint64_t a = f.bits & ~signMask, b = g.bits & ~signMask;
    bool negF = (f.bits & signMask) != 0, negG = (g.bits & signMask) != 0;
    if (negF != negG) return a + b;
    return a > b ? a - b : b - a;
  }
  if (std::isnan(f.value) && std::isnan(g.value)) return 0;
  return std::numeric_limits<uint64_t>::max();
}

// Reads an optional number from the op's attributes, then from a `backend_config` dictionary.
const Attribute* findParameter(const Operation& op, std::string_view name) {
  if (const Attribute* a = op.attr(name)) return a;
  if (const Attribute* config = op.attr("backend_config"))
    if (config->kind() == Attribute::Kind::kDictionary) return config->field(name);
  return nullptr;
}

Expected<double> toleranceOf(const Operation& op, double fallback) {
  const Attribute* a = findParameter(op, "tolerance");
  if (!a) return fallback;
  if (a->kind() == Attribute::Kind::kFloat) return a->floatValue();
  if (a->kind() == Attribute::Kind::kInteger) return static_cast<double>(a->intValue());
  return invalidArgument(op.describe() + ": `tolerance` must be a number");
}

Expected<uint64_t> ulpParameter(const Operation& op, std::string_view name, uint64_t fallback) {
  const Attribute* a = findParameter(op, name);
  if (!a) return fallback;
  std::optional<int64_t> v = a->asInt();
  if (!v || *v < 0) return invalidArgument(op.describe() + ": `" + std::string(name) + "` must be a non-negative integer");
  return static_cast<uint64_t>(*v);
}

Expected<Literal> constValue(const Operation& op) {
  const Attribute* value = findParameter(op, "value");
  if (!value || value->kind() != Attribute::Kind::kDenseElements)
    return invalidArgument(op.describe() + ": missing dense `value` attribute");
  if (!value->literal()) return invalidArgument(op.describe() + ": `value` refers to a missing dense_resource blob");
  return *value->literal();
}

Status report(const Operation& op, EvalContext& ctx, const std::string& failure) {
  if (!ctx.checks) return invalidArgument(op.describe() + ": check ops need a check sink (run with `warpforge check`)");
  ctx.checks->report(op, failure.empty(), failure);
  return Status::ok();
}

Status requireOperands(const Operation& op, std::span<const Literal> operands, size_t n) {
  if (operands.size() != n)
    return invalidArgument(op.describe() + ": expects " + std::to_string(n) + " operands, got " +
                           std::to_string(operands.size()));
  return Status::ok();
}

bool isFloatOrComplex(ElementType t) { return isFloat(t) || isComplex(t); }

enum class CheckKind { kEq, kEqConst, kAlmostEq, kAlmostEqConst, kClose, kSerializedEq };

// Shared by the check.* ops and their custom_call spelling.
Expected<std::vector<Literal>> evalCheck(CheckKind kind, const Operation& op, std::span<const Literal> operands,
                                         EvalContext& ctx, bool customCall) {
  switch (kind) {
    case CheckKind::kEq:
    case CheckKind::kEqConst: {
      Literal expected;
      if (kind == CheckKind::kEq) {
        WF_RETURN_IF_ERROR(requireOperands(op, operands, 2));
        expected = operands[1];
      } else {
        WF_RETURN_IF_ERROR(requireOperands(op, operands, 1));
        WF_ASSIGN_OR_RETURN(expected, constValue(op));
      }
      WF_RETURN_IF_ERROR(report(op, ctx, compareExact(operands[0], expected)));
      return std::vector<Literal>{};
    }
    case CheckKind::kAlmostEq:
    case CheckKind::kAlmostEqConst: {
      Literal expected;
      if (kind == CheckKind::kAlmostEq) {
        WF_RETURN_IF_ERROR(requireOperands(op, operands, 2));
        expected = operands[1];
      } else {
        WF_RETURN_IF_ERROR(requireOperands(op, operands, 1));
        WF_ASSIGN_OR_RETURN(expected, constValue(op));
      }
      WF_ASSIGN_OR_RETURN(double tolerance, toleranceOf(op, customCall ? kCustomCallTolerance : kDefaultTolerance));
      WF_RETURN_IF_ERROR(report(op, ctx, compareAlmostEqual(operands[0], expected, tolerance)));
      return std::vector<Literal>{};
    }
    case CheckKind::kClose: {
      WF_RETURN_IF_ERROR(requireOperands(op, operands, 2));
      WF_ASSIGN_OR_RETURN(uint64_t minUlps, ulpParameter(op, "min_ulp_difference", kDefaultMinUlps));
      WF_ASSIGN_OR_RETURN(uint64_t maxUlps, ulpParameter(op, "max_ulp_difference", kDefaultMaxUlps));
      if (operands[0].type().isTensor() && !isFloatOrComplex(operands[0].elementType()))
        return invalidArgument(op.describe() + ": expects floating-point or complex operands, got " +
                               operands[0].type().toString());
      WF_RETURN_IF_ERROR(report(op, ctx, compareUlps(operands[0], operands[1], minUlps, maxUlps)));
      return std::vector<Literal>{};
    }
    case CheckKind::kSerializedEq:
      if (!ctx.checks) return invalidArgument(op.describe() + ": check ops need a check sink (run with `warpforge check`)");
      ctx.checks->unsupported(op, "check.expect_serialized_eq compares against tensors that interpreter.probe "
                                  "serialized to disk; WarpForge does not serialize probes");
      return std::vector<Literal>{};
  }
  return internalError(op.describe() + ": unknown check kind");
}

std::optional<CheckKind> customCallKind(std::string_view target) {
  if (target == "check.expect_eq" || target == "check.eq") return CheckKind::kEq;
  if (target == "check.expect_eq_const") return CheckKind::kEqConst;
  if (target == "check.expect_almost_eq" || target == "check.almost_eq") return CheckKind::kAlmostEq;
  if (target == "check.expect_almost_eq_const") return CheckKind::kAlmostEqConst;
  if (target == "check.expect_close") return CheckKind::kClose;
  if (target == "check.expect_serialized_eq") return CheckKind::kSerializedEq;
  return std::nullopt;
}

Kernel checkKernel(CheckKind kind) {
  return [kind](const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
    return evalCheck(kind, op, operands, ctx, /*customCall=*/false);
  };
}

}  // namespace

std::string compareExact(const Literal& actual, const Literal& expected) {
  ElementType t = actual.elementType();
  return compareElements(actual, expected, "values differ", [&](int64_t i, int64_t j) -> std::optional<std::string> {
    bool same;
    if (isComplex(t)) {
      std::complex<double> a = actual.getComplex(i), b = expected.getComplex(j);
      same = floatsEqual(a.real(), b.real()) && floatsEqual(a.imag(), b.imag());
    } else if (isFloat(t)) {
      same = floatsEqual(actual.getDouble(i), expected.getDouble(j));
    } else {
      same = actual.getBits(i) == expected.getBits(j);
    }
    if (same) return std::nullopt;
    return std::string();
  });
}

std::string compareAlmostEqual(const Literal& actual, const Literal& expected, double tolerance) {
  ElementType t = actual.elementType();
  char tol[32];
  std::snprintf(tol, sizeof tol, "%g", tolerance);
  return compareElements(actual, expected, std::string("values differ beyond tolerance ") + tol,
                         [&](int64_t i, int64_t j) -> std::optional<std::string> {
                           bool close;
                           if (isComplex(t)) {
                             std::complex<double> a = actual.getComplex(i), b = expected.getComplex(j);
                             close = approximatelyEqual(a.real(), b.real(), tolerance) &&
                                     approximatelyEqual(a.imag(), b.imag(), tolerance);
                           } else if (isFloat(t)) {
                             close = approximatelyEqual(actual.getDouble(i), expected.getDouble(j), tolerance);
                           } else {
                             close = actual.getBits(i) == expected.getBits(j);  // integers: exact
                           }
                           if (close) return std::nullopt;
                           return std::string();
                         });
}

uint64_t ulpDifference(const Literal& a, int64_t i, const Literal& b, int64_t j) {
  ElementType t = a.elementType();
  if (isComplex(t)) {
    return std::max(ulpDistance(floatBits(a, i, 0), floatBits(b, j, 0), t),
                    ulpDistance(floatBits(a, i, 1), floatBits(b, j, 1), t));
  }
  return ulpDistance(floatBits(a, i, 0), floatBits(b, j, 0), t);
}

std::string compareUlps(const Literal& actual, const Literal& expected, uint64_t minUlps, uint64_t maxUlps) {
  if (actual.type().isTensor() && !isFloatOrComplex(actual.elementType()))
    return "ULP comparison needs floating-point or complex values, got " + actual.type().toString();
  return compareElements(actual, expected,
                         "ULP difference outside [" + std::to_string(minUlps) + ", " + std::to_string(maxUlps) + "]",
                         [&](int64_t i, int64_t j) -> std::optional<std::string> {
                           uint64_t d = ulpDifference(actual, i, expected, j);
                           if (d >= minUlps && d <= maxUlps) return std::nullopt;
                           return d == std::numeric_limits<uint64_t>::max()
                                      ? std::string("ULP difference infinite (finite vs non-finite)")
                                      : "ULP difference " + std::to_string(d);
                         });
}

bool isCheckCustomCallTarget(std::string_view target) { return customCallKind(target).has_value(); }

Expected<std::vector<Literal>> evalCheckCustomCall(const Operation& op, std::span<const Literal> operands,
                                                   EvalContext& ctx) {
  const Attribute* target = op.attr("call_target_name");
  std::optional<CheckKind> kind = target ? customCallKind(target->stringValue()) : std::nullopt;
  if (!kind) return invalidArgument(op.describe() + ": not a check custom_call");
  return evalCheck(*kind, op, operands, ctx, /*customCall=*/true);
}

void registerCheckKernels(KernelRegistry& registry) {
  registry.add(OpCode::CheckExpectEq, checkKernel(CheckKind::kEq));
  registry.add(OpCode::CheckExpectEqConst, checkKernel(CheckKind::kEqConst));
  registry.add(OpCode::CheckExpectAlmostEq, checkKernel(CheckKind::kAlmostEq));
  registry.add(OpCode::CheckExpectAlmostEqConst, checkKernel(CheckKind::kAlmostEqConst));
  registry.add(OpCode::CheckExpectClose, checkKernel(CheckKind::kClose));
  registry.add(OpCode::CheckExpectSerializedEq, checkKernel(CheckKind::kSerializedEq));
}

}  // namespace wf
