// CPU kernels for the chlo ops JAX emits: special functions, inverse trig/hyperbolic ops,
// predicates, constants, mulhi, next_after and the numpy-broadcasting binary ops.
// (chlo.scan, chlo.ragged_dot and chlo.top_k live with control flow, dot and reduce.)
//
// Special functions compute in double and round once to the element type; narrow floats
// (bf16, f16, f8) use the same path through their float compute type.
#include <algorithm>
#include <cmath>
#include <complex>
#include <limits>
#include <numbers>
#include <string>

#include "eval/elementwise_ops.h"

namespace wf {
namespace ew {
namespace {

using Results = Expected<std::vector<Literal>>;
template <typename T>
using CT = typename T::C;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// ---------------------------------------------------------------------------------------------
// Special functions (double precision).

// Digamma: reflection for x < 0.5, recurrence up to x >= 10, then the asymptotic series.
double digamma(double x) {
  if (std::isnan(x) || x == -kInf) return kNaN;
  if (x <= 0 && x == std::floor(x)) return kNaN;
  double result = 0;
  if (x < 0.5) {
    // psi(1 - x) - psi(x) = pi / tan(pi x)
    result -= std::numbers::pi / std::tan(std::numbers::pi * x);
    x = 1 - x;
  }
  while (x < 10) {
    result -= 1 / x;
    x += 1;
  }
  const double inv = 1 / x, inv2 = inv * inv;
  // Bernoulli terms B2k / (2k x^2k).
  const double series =
      inv2 * (1.0 / 12 -
              inv2 * (1.0 / 120 -
                      inv2 * (1.0 / 252 -
                              inv2 * (1.0 / 240 - inv2 * (1.0 / 132 - inv2 * (691.0 / 32760 - inv2 / 12))))));
  return result + std::log(x) - 0.5 * inv - series;
}

// Hurwitz zeta(x, q) = sum_k (k + q)^-x, by Euler-Maclaurin summation (after Cephes).
double zeta(double x, double q) {
  if (std::isnan(x) || std::isnan(q)) return kNaN;
  if (x == 1) return kInf;
  if (x < 1) return kNaN;
  if (q <= 0) {
    if (q == std::floor(q)) return kInf;
    if (x != std::floor(x)) return kNaN;  // q^-x is not real
  }
  static constexpr double kA[] = {12.0,
                                  -720.0,
                                  30240.0,
                                  -1209600.0,
                                  47900160.0,
                                  -1.8924375803183791606e9,
                                  7.47242496e10,
                                  -2.950130727918164224e12,
                                  1.1646782814350067249e14,
                                  -4.5979787224074726105e15,
                                  1.8152105401943546773e17,
                                  -7.1661652561756670113e18};
  constexpr double kEps = std::numeric_limits<double>::epsilon();
  double s = std::pow(q, -x);
  double a = q, b = 0;
  int i = 0;
  while (i < 9 || a <= 9.0) {
    ++i;
    a += 1.0;
    b = std::pow(a, -x);
    s += b;
    if (std::fabs(b / s) < kEps) return s;
  }
  const double w = a;
  s += b * w / (x - 1);
  s -= 0.5 * b;
  a = 1.0;
  double k = 0;
  for (int j = 0; j < 12; ++j) {
    a *= x + k;
    b /= w;
    double t = a * b / kA[j];
    s += t;
    if (std::fabs(t / s) < kEps) return s;
    k += 1;
    a *= x + k;
    b /= w;
    k += 1;
  }
  return s;
}

// polygamma(n, x) = (-1)^(n+1) n! zeta(n + 1, x) for integer n >= 1; digamma for n = 0.
double polygamma(double n, double x) {
  if (std::isnan(n) || std::isnan(x) || n < 0 || n != std::floor(n)) return kNaN;
  if (n == 0) return digamma(x);
  const double sign = std::fmod(n, 2) == 0 ? -1 : 1;
  return sign * std::exp(std::lgamma(n + 1)) * zeta(n + 1, x);
}

// Inverse error function: a rational initial guess refined by Newton steps on erf.
double erfInv(double y) {
  if (std::isnan(y) || y < -1 || y > 1) return kNaN;
  if (y == 1) return kInf;
  if (y == -1) return -kInf;
  if (y == 0) return y;
  // Giles' single-precision approximation as a starting point.
  double w = -std::log((1.0 - y) * (1.0 + y));
  double x;
  if (w < 5.0) {
    w -= 2.5;
    double p = 2.81022636e-08;
    p = 3.43273939e-07 + p * w;
    p = -3.5233877e-06 + p * w;
    p = -4.39150654e-06 + p * w;
    p = 0.00021858087 + p * w;
    p = -0.00125372503 + p * w;
    p = -0.00417768164 + p * w;
    p = 0.246640727 + p * w;
    p = 1.50140941 + p * w;
    x = p * y;
  } else {
    w = std::sqrt(w) - 3.0;
    double p = -0.000200214257;
    p = 0.000100950558 + p * w;
    p = 0.00134934322 + p * w;
    p = -0.00367342844 + p * w;
    p = 0.00573950773 + p * w;
    p = -0.0076224613 + p * w;
    p = 0.00943887047 + p * w;
    p = 1.00167406 + p * w;
    p = 2.83297682 + p * w;
    x = p * y;
  }
  // Newton on f(x) = erf(x) - y, f'(x) = 2/sqrt(pi) exp(-x^2); erfc keeps precision near |y| = 1.
  for (int i = 0; i < 3; ++i) {
    // erf(x) - y, written as (1 - y) - erfc(x) or erfc(-x) - (1 + y) where erf(x) is near +-1.
    const double err = y > 0.9 ? (1 - y) - std::erfc(x) : y < -0.9 ? std::erfc(-x) - (1 + y) : std::erf(x) - y;
    const double d = 2 / std::sqrt(std::numbers::pi) * std::exp(-x * x);
    if (d == 0) break;
    x -= err / d;
  }
  return x;
}

// Exponentially scaled modified Bessel function of order 1: I1(x) exp(-|x|).
double besselI1e(double x) {
  if (std::isnan(x)) return kNaN;
  const double ax = std::fabs(x);
  double r;
  if (ax == 0) return x;
  if (ax < 600) {
    r = std::cyl_bessel_i(1.0, ax) * std::exp(-ax);
  } else {
    // Asymptotic series: I1(x) e^-x ~ (2 pi x)^-1/2 sum_k (-1)^k prod_j (4 - (2j-1)^2) / (k! (8x)^k).
    if (std::isinf(ax)) return std::copysign(0.0, x);
    double term = 1, sum = 1;
    for (int k = 1; k < 12; ++k) {
      term *= -(4.0 - (2.0 * k - 1) * (2.0 * k - 1)) / (k * 8.0 * ax);
      sum += term;
    }
    r = sum / std::sqrt(2 * std::numbers::pi * ax);
  }
  return x < 0 ? -r : r;
}

// ---------------------------------------------------------------------------------------------
// Unary drivers.

Status checkOne(const Operation& op, std::span<const Literal> args, size_t n) {
  if (args.size() != n)
    return invalidArgument(op.describe() + ": expects " + std::to_string(n) + " operands, got " +
                           std::to_string(args.size()));
  return Status::ok();
}

// f(double) for real floats, g(complex) for complex types (g may be null: real only).
template <typename RealF, typename ComplexF>
Kernel unaryMath(RealF f, ComplexF g, bool complexOk) {
  return [=](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkOne(op, args, 1));
    const ElementType et = args[0].elementType();
    if (op.result(0)->type().elementType() != et)
      return invalidArgument(op.describe() + ": result element type differs from operand");
    WF_ASSIGN_OR_RETURN(Literal in, widenMinifloat(op, args[0]));
    Literal out = Literal::zeros(in.type());
    Status st = dispatch<false>(in.elementType(), unsupportedType(op, et), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (isFloatT<T>) {
        mapUnary<T, T>(in, out, kMathGrain, [&](CT<T> x) { return static_cast<CT<T>>(f(static_cast<double>(x))); });
        return Status::ok();
      } else if constexpr (isComplexT<T>) {
        if (!complexOk) return unsupportedType(op, et);
        mapUnary<T, T>(in, out, kMathGrain, [&](CT<T> z) { return CT<T>(g(std::complex<double>(z))); });
        return Status::ok();
      } else {
        return unsupportedType(op, et);
      }
    });
    WF_RETURN_IF_ERROR(st);
    WF_ASSIGN_OR_RETURN(Literal result, narrowTo(op, std::move(out), et));
    return std::vector<Literal>{std::move(result)};
  };
}

Kernel realMath(double (*f)(double)) {
  return unaryMath(f, [](std::complex<double> z) { return z; }, false);
}

// chlo.erf / chlo.erfc: f32 through erfF32 (erfc as 1 - erf where that loses no precision,
// i.e. erf <= 0.5; the tail keeps libm's erfc), every other type through `generic`.
Kernel fastErfKernel(bool complement, Kernel generic) {
  return [complement, generic](const Operation& op, std::span<const Literal> args, EvalContext& ctx) -> Results {
    if (args.size() != 1 || args[0].elementType() != ElementType::kF32 ||
        op.result(0)->type().elementType() != ElementType::kF32 || !args[0].type().isTensor())
      return generic(op, args, ctx);
    using F = NativeFloatTraits<float>;
    Literal out = Literal::zeros(args[0].type());
    if (complement) {
      mapUnary<F, F>(args[0], out, kMathGrain, [](float x) {
        return x < 0.45f ? 1.0f - erfF32(x) : static_cast<float>(std::erfc(static_cast<double>(x)));
      });
    } else {
      mapUnary<F, F>(args[0], out, kCheapGrain, [](float x) { return erfF32(x); });
    }
    return std::vector<Literal>{std::move(out)};
  };
}

#define WF_STD_MATH(fn)                                                        \
  unaryMath([](double x) { return std::fn(x); }, [](std::complex<double> z) { \
    return std::fn(z);                                                        \
  }, true)

// is_inf / is_neg_inf / is_pos_inf: float -> i1.
Kernel infPredicate(int which) {  // 0: either, -1: negative, +1: positive
  return [which](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkOne(op, args, 1));
    WF_ASSIGN_OR_RETURN(Literal in, widenMinifloat(op, args[0]));
    Literal out = Literal::zeros(Type::tensor(in.shape(), ElementType::kI1));
    Status st = dispatch<false>(in.elementType(), unsupportedType(op, in.elementType()), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (isFloatT<T>) {
        mapUnary<T, BoolTraits>(in, out, kCheapGrain, [which](CT<T> x) {
          return std::isinf(x) && (which == 0 || (which < 0) == std::signbit(x));
        });
        return Status::ok();
      } else {
        return unsupportedType(op, in.elementType());
      }
    });
    WF_RETURN_IF_ERROR(st);
    return std::vector<Literal>{std::move(out)};
  };
}

Results conjKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 1));
  const Literal& in = args[0];
  Literal out = Literal::zeros(resultType(op, 0, in.shape()));
  if (out.elementType() != in.elementType()) return invalidArgument(op.describe() + ": result type differs");
  Status st = dispatch<false>(in.elementType(), unsupportedType(op, in.elementType()), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isComplexT<T>) {
      mapUnary<T, T>(in, out, kCheapGrain, [](CT<T> z) { return std::conj(z); });
    } else if constexpr (isFloatT<T>) {
      mapUnary<T, T>(in, out, kCheapGrain, [](CT<T> x) { return x; });
    } else {
      return unsupportedType(op, in.elementType());
    }
    return Status::ok();
  });
  WF_RETURN_IF_ERROR(st);
  return std::vector<Literal>{std::move(out)};
}

Results squareKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 1));
  const Literal& in = args[0];
  Literal out = Literal::zeros(resultType(op, 0, in.shape()));
  if (out.elementType() != in.elementType()) return invalidArgument(op.describe() + ": result type differs");
  Status st = dispatch(in.elementType(), unsupportedType(op, in.elementType()), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isIntT<T>) {
      mapUnary<T, T>(in, out, kCheapGrain, [](CT<T> x) { return wrapMul(x, x); });
    } else if constexpr (isBoolT<T>) {
      return unsupportedType(op, in.elementType());
    } else {
      mapUnary<T, T>(in, out, kCheapGrain, [](CT<T> x) { return x * x; });
    }
    return Status::ok();
  });
  WF_RETURN_IF_ERROR(st);
  return std::vector<Literal>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Binary element functions (same shapes, or one-element operands broadcast).

// next_after on the element's own format: step one ulp from x toward y.
template <typename T>
CT<T> nextAfterElem(CT<T> x, CT<T> y) {
  if constexpr (std::is_same_v<T, NativeFloatTraits<float>> || std::is_same_v<T, NativeFloatTraits<double>>) {
    return std::nextafter(x, y);
  } else {
    // bf16/f16: IEEE-like 16-bit formats; step the bit pattern.
    if (std::isnan(x) || std::isnan(y)) return std::numeric_limits<float>::quiet_NaN();
    if (x == y) return y;
    uint16_t bits = T::store(x);
    if (x == 0) {
      bits = static_cast<uint16_t>((std::signbit(y) ? 0x8000 : 0) | 1);
    } else if ((x < y) == (x > 0)) {
      ++bits;  // away from zero
    } else {
      --bits;
    }
    return T::load(bits);
  }
}

Results nextAfterKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 2));
  const Literal& a = args[0];
  const Literal& b = args[1];
  const ElementType et = a.elementType();
  if (b.elementType() != et || a.shape() != b.shape()) return invalidArgument(op.describe() + ": operand types differ");
  Literal out = Literal::zeros(resultType(op, 0, a.shape()));
  Status st = dispatch<false>(et, unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (std::is_same_v<T, NativeFloatTraits<float>> || std::is_same_v<T, NativeFloatTraits<double>> ||
                  std::is_same_v<T, Bf16Traits> || std::is_same_v<T, F16Traits>) {
      mapBinary<T, T>(a, b, out, kCheapGrain, [](CT<T> x, CT<T> y) { return nextAfterElem<T>(x, y); });
      return Status::ok();
    } else {
      return unsupportedType(op, et);
    }
  });
  WF_RETURN_IF_ERROR(st);
  return std::vector<Literal>{std::move(out)};
}

Kernel binaryMath(double (*f)(double, double)) {
  return [f](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkOne(op, args, 2));
    const ElementType et = args[0].elementType();
    if (args[1].elementType() != et || args[0].shape() != args[1].shape())
      return invalidArgument(op.describe() + ": operand types differ");
    WF_ASSIGN_OR_RETURN(Literal a, widenMinifloat(op, args[0]));
    WF_ASSIGN_OR_RETURN(Literal b, widenMinifloat(op, args[1]));
    Literal out = Literal::zeros(a.type());
    Status st = dispatch<false>(a.elementType(), unsupportedType(op, et), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (isFloatT<T>) {
        mapBinary<T, T>(a, b, out, kMathGrain, [f](CT<T> x, CT<T> y) {
          return static_cast<CT<T>>(f(static_cast<double>(x), static_cast<double>(y)));
        });
        return Status::ok();
      } else {
        return unsupportedType(op, et);
      }
    });
    WF_RETURN_IF_ERROR(st);
    WF_ASSIGN_OR_RETURN(Literal result, narrowTo(op, std::move(out), et));
    return std::vector<Literal>{std::move(result)};
  };
}

// mulhi: the high half of the double-width product.
template <typename C>
C mulHigh(C a, C b) {
  constexpr int bits = 8 * sizeof(C);
  if constexpr (bits == 64) {
    using W = std::conditional_t<std::is_signed_v<C>, __int128, unsigned __int128>;
    return static_cast<C>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
  } else {
    using W = std::conditional_t<std::is_signed_v<C>, int64_t, uint64_t>;
    return static_cast<C>((static_cast<W>(a) * static_cast<W>(b)) >> bits);
  }
}

Results mulhiKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 2));
  const Literal& a = args[0];
  const Literal& b = args[1];
  const ElementType et = a.elementType();
  if (b.elementType() != et || a.shape() != b.shape()) return invalidArgument(op.describe() + ": operand types differ");
  Literal out = Literal::zeros(resultType(op, 0, a.shape()));
  Status st = dispatch<false>(et, unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isIntT<T>) {
      mapBinary<T, T>(a, b, out, kCheapGrain, [](CT<T> x, CT<T> y) -> CT<T> {
        if constexpr (T::kBits < 8) {
          // Sub-byte: the product fits in an int; take the bits above the element width.
          return static_cast<CT<T>>((static_cast<int>(x) * static_cast<int>(y)) >> T::kBits);
        } else {
          return mulHigh(x, y);
        }
      });
      return Status::ok();
    } else {
      return unsupportedType(op, et);
    }
  });
  WF_RETURN_IF_ERROR(st);
  return std::vector<Literal>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// Constants.

Results constantKernel(const Operation& op, std::span<const Literal>, EvalContext&) {
  const Attribute* v = op.attr("value");
  if (!v || !v->literal()) return invalidArgument(op.describe() + ": missing dense `value`");
  return std::vector<Literal>{v->literal()->clone()};
}

// constant_like: a splat of the scalar `value` with the operand's shape and the result's type.
Results constantLikeKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 1));
  const Attribute* v = op.attr("value");
  if (!v) return invalidArgument(op.describe() + ": missing `value`");
  Literal out = Literal::zeros(resultType(op, 0, args[0].shape()));
  const int64_t n = out.numElements();
  if (n == 0) return std::vector<Literal>{std::move(out)};
  // Write the value once, then copy its bytes.
  if (v->kind() == Attribute::Kind::kFloat) {
    out.setDouble(0, v->floatValue());
  } else if (v->kind() == Attribute::Kind::kInteger || v->kind() == Attribute::Kind::kBool) {
    out.setInt(0, v->intValue());
  } else if (const Literal* l = v->literal(); l && l->numElements() >= 1) {
    WF_ASSIGN_OR_RETURN(Literal c, convertLiteral(op, l->reshaped({l->numElements()}), out.elementType()));
    std::memcpy(out.data(), c.data(), static_cast<size_t>(storageBytes(out.elementType())));
  } else {
    return invalidArgument(op.describe() + ": unsupported `value` attribute");
  }
  const size_t bytes = static_cast<size_t>(storageBytes(out.elementType()));
  for (int64_t i = 1; i < n; ++i) std::memcpy(out.data() + i * bytes, out.data(), bytes);
  return std::vector<Literal>{std::move(out)};
}

// ---------------------------------------------------------------------------------------------
// chlo.broadcast_*: numpy broadcasting, or explicit `broadcast_dimensions` for the lower-rank
// operand (operand dim i maps to result dim broadcast_dimensions[i]).

Expected<std::vector<int64_t>> operandDims(const Operation& op, const Literal& l, int64_t resultRank,
                                           bool useAttr) {
  std::vector<int64_t> dims(static_cast<size_t>(l.type().rank()));
  const Attribute* bd = useAttr ? op.attr("broadcast_dimensions") : nullptr;
  if (bd && l.type().rank() < resultRank) {
    auto list = bd->asIntList();
    if (!list || static_cast<int64_t>(list->size()) != l.type().rank())
      return invalidArgument(op.describe() + ": broadcast_dimensions does not match the operand rank");
    dims = *list;
  } else {
    for (int64_t i = 0; i < l.type().rank(); ++i) dims[static_cast<size_t>(i)] = resultRank - l.type().rank() + i;
  }
  return dims;
}

// Copies `in` into a tensor of `shape` (dims: result dim of each operand dim; size-1 dims repeat).
Literal broadcastTo(const Literal& in, const std::vector<int64_t>& shape, const std::vector<int64_t>& dims) {
  Literal out = Literal::zeros(Type::tensor(shape, in.elementType()));
  const size_t bytes = static_cast<size_t>(storageBytes(in.elementType()));
  const std::vector<int64_t> inStrides = rowMajorStrides(in.shape());
  std::vector<int64_t> strides(shape.size(), 0);  // input stride per result dim
  for (size_t i = 0; i < dims.size(); ++i)
    if (in.shape()[i] != 1) strides[static_cast<size_t>(dims[i])] = inStrides[i];
  const int64_t n = out.numElements();
  std::vector<int64_t> idx(shape.size(), 0);
  int64_t src = 0;
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out.data() + i * bytes, in.data() + src * bytes, bytes);
    for (int64_t d = static_cast<int64_t>(shape.size()) - 1; d >= 0; --d) {
      const size_t k = static_cast<size_t>(d);
      ++idx[k];
      src += strides[k];
      if (idx[k] < shape[k]) break;
      src -= strides[k] * idx[k];
      idx[k] = 0;
    }
  }
  return out;
}

// Brings every operand to the common result shape (one-element operands stay as they are:
// the typed loops broadcast them for free).
Expected<std::vector<Literal>> broadcastOperands(const Operation& op, std::span<const Literal> args,
                                                 std::vector<int64_t>* resultShape, bool useAttr) {
  int64_t rank = 0;
  for (const Literal& a : args) rank = std::max(rank, a.type().rank());
  std::vector<std::vector<int64_t>> dims;
  std::vector<int64_t> shape(static_cast<size_t>(rank), 1);
  for (const Literal& a : args) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> d, operandDims(op, a, rank, useAttr));
    for (size_t i = 0; i < d.size(); ++i) {
      if (d[i] < 0 || d[i] >= rank) return invalidArgument(op.describe() + ": broadcast dimension out of range");
      int64_t& s = shape[static_cast<size_t>(d[i])];
      const int64_t e = a.shape()[i];
      if (s == 1) s = e;
      else if (e != 1 && e != s)
        return invalidArgument(op.describe() + ": operand shapes " + args[0].type().toString() + " and " +
                               a.type().toString() + " are not broadcast-compatible");
    }
    dims.push_back(std::move(d));
  }
  std::vector<Literal> out;
  int64_t total = 1;
  for (int64_t s : shape) total *= s;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].shape() == shape || (args[i].numElements() == 1 && total != 1)) out.push_back(args[i]);
    else out.push_back(broadcastTo(args[i], shape, dims[i]));
  }
  *resultShape = std::move(shape);
  return out;
}

Kernel broadcastBinary(OpCode code) {
  return [code](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkOne(op, args, 2));
    std::vector<int64_t> shape;
    WF_ASSIGN_OR_RETURN(std::vector<Literal> ops, broadcastOperands(op, args, &shape, true));
    WF_ASSIGN_OR_RETURN(Literal out, binaryKernel(op, code, ops[0], ops[1], resultType(op, 0, shape)));
    return std::vector<Literal>{std::move(out)};
  };
}

Results broadcastCompareKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 2));
  CmpDir dir;
  CmpType type;
  WF_RETURN_IF_ERROR(parseComparison(op, &dir, &type));
  std::vector<int64_t> shape;
  WF_ASSIGN_OR_RETURN(std::vector<Literal> ops, broadcastOperands(op, args, &shape, true));
  Literal out = Literal::zeros(Type::tensor(shape, ElementType::kI1));
  WF_RETURN_IF_ERROR(compareKernel(op, ops[0], ops[1], dir, type, out));
  return std::vector<Literal>{std::move(out)};
}

Results broadcastSelectKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkOne(op, args, 3));
  std::vector<int64_t> shape;
  WF_ASSIGN_OR_RETURN(std::vector<Literal> ops, broadcastOperands(op, args, &shape, false));
  WF_ASSIGN_OR_RETURN(Literal out, selectKernel(op, ops[0], ops[1], ops[2], resultType(op, 0, shape)));
  return std::vector<Literal>{std::move(out)};
}

}  // namespace
}  // namespace ew

void registerChloKernels(KernelRegistry& r) {
  using namespace ew;
  r.add(OpCode::ChloAcos, WF_STD_MATH(acos));
  r.add(OpCode::ChloAcosh, WF_STD_MATH(acosh));
  r.add(OpCode::ChloAsin, WF_STD_MATH(asin));
  r.add(OpCode::ChloAsinh, WF_STD_MATH(asinh));
  r.add(OpCode::ChloAtan, WF_STD_MATH(atan));
  r.add(OpCode::ChloAtanh, WF_STD_MATH(atanh));
  r.add(OpCode::ChloCosh, WF_STD_MATH(cosh));
  r.add(OpCode::ChloSinh, WF_STD_MATH(sinh));
  r.add(OpCode::ChloTan, WF_STD_MATH(tan));
  r.add(OpCode::ChloErf, fastErfKernel(false, realMath([](double x) { return std::erf(x); })));
  r.add(OpCode::ChloErfc, fastErfKernel(true, realMath([](double x) { return std::erfc(x); })));
  r.add(OpCode::ChloErfInv, realMath(erfInv));
  r.add(OpCode::ChloLgamma, realMath([](double x) { return std::lgamma(x); }));
  r.add(OpCode::ChloDigamma, realMath(digamma));
  r.add(OpCode::ChloBesselI1e, realMath(besselI1e));
  r.add(OpCode::ChloIsInf, infPredicate(0));
  r.add(OpCode::ChloIsNegInf, infPredicate(-1));
  r.add(OpCode::ChloIsPosInf, infPredicate(1));
  r.add(OpCode::ChloConj, conjKernel);
  r.add(OpCode::ChloSquare, squareKernel);
  r.add(OpCode::ChloNextAfter, nextAfterKernel);
  r.add(OpCode::ChloPolygamma, binaryMath(polygamma));
  r.add(OpCode::ChloZeta, binaryMath(zeta));
  r.add(OpCode::ChloMulhi, mulhiKernel);
  r.add(OpCode::ChloConstant, constantKernel);
  r.add(OpCode::ChloConstantLike, constantLikeKernel);

  r.add(OpCode::ChloBroadcastAdd, broadcastBinary(OpCode::Add));
  r.add(OpCode::ChloBroadcastSubtract, broadcastBinary(OpCode::Subtract));
  r.add(OpCode::ChloBroadcastMultiply, broadcastBinary(OpCode::Multiply));
  r.add(OpCode::ChloBroadcastDivide, broadcastBinary(OpCode::Divide));
  r.add(OpCode::ChloBroadcastMaximum, broadcastBinary(OpCode::Maximum));
  r.add(OpCode::ChloBroadcastMinimum, broadcastBinary(OpCode::Minimum));
  r.add(OpCode::ChloBroadcastAnd, broadcastBinary(OpCode::And));
  r.add(OpCode::ChloBroadcastOr, broadcastBinary(OpCode::Or));
  r.add(OpCode::ChloBroadcastXor, broadcastBinary(OpCode::Xor));
  r.add(OpCode::ChloBroadcastPower, broadcastBinary(OpCode::Power));
  r.add(OpCode::ChloBroadcastRemainder, broadcastBinary(OpCode::Remainder));
  r.add(OpCode::ChloBroadcastAtan2, broadcastBinary(OpCode::Atan2));
  r.add(OpCode::ChloBroadcastCompare, broadcastCompareKernel);
  r.add(OpCode::ChloBroadcastSelect, broadcastSelectKernel);
}

#undef WF_STD_MATH

}  // namespace wf
