// CPU kernels for StableHLO's elementwise ops (unary, binary, compare, select, clamp, ...).
// The element math is eval/element_math.h's functors (shared with the CUDA kernels), wrapped in
// SharedOp whose `apply<T>` works on one element of compute type T::C; the drivers below
// dispatch once per op on the element type and run a typed loop (elementwise_ops.h). convert and bitcast_convert live in elementwise_convert.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <string>

#include "eval/elementwise_ops.h"
#include "eval/shape_util.h"
#include "eval/element_math.h"
#include "support/reduce_precision.h"

namespace wf {
namespace ew {
namespace {

using Results = Expected<std::vector<Literal>>;

Status checkArity(const Operation& op, std::span<const Literal> args, size_t n) {
  if (args.size() != n)
    return invalidArgument(op.describe() + ": expects " + std::to_string(n) + " operands, got " +
                           std::to_string(args.size()));
  for (const Literal& a : args)
    if (!a.type().isTensor()) return invalidArgument(op.describe() + ": operands must be tensors");
  return Status::ok();
}

Status checkSameShape(const Operation& op, const Literal& a, const Literal& b) {
  if (a.shape() != b.shape())
    return invalidArgument(op.describe() + ": operand shapes differ: " + a.type().toString() + " vs " +
                           b.type().toString());
  return Status::ok();
}

Status checkResultElement(const Operation& op, ElementType declared, ElementType expected) {
  if (declared != expected)
    return invalidArgument(op.describe() + ": result element type " + std::string(elementTypeName(declared)) +
                           " does not match the computed " + std::string(elementTypeName(expected)));
  return Status::ok();
}

template <typename T>
using CT = typename T::C;

// ---------------------------------------------------------------------------------------------
// The ops: eval/element_math.h's functors for the real element types (the CUDA kernels and the
// fused kernels run the same functors), and here the math of complex numbers, which only the
// CPU computes.

// Whether functor F takes the element type of traits T.
template <typename F, typename T>
constexpr bool takes() {
  switch (T::kCat) {
    case Cat::kBool: return (F::kCats & em::kBool) != 0;
    case Cat::kSInt: return (F::kCats & em::kSInt) != 0;
    case Cat::kUInt: return (F::kCats & em::kUInt) != 0;
    case Cat::kFloat: return (F::kCats & em::kFloat) != 0;
    case Cat::kComplex: return false;
  }
  return false;
}

// Complex math for the functor F (kHas: there is any).
template <typename F>
struct ComplexMath {
  static constexpr bool kHas = false;
};
#define WF_COMPLEX_UNARY(F, expr)                                   \
  template <>                                                       \
  struct ComplexMath<em::F> {                                       \
    static constexpr bool kHas = true;                              \
    template <typename C> static C apply(C x) { return expr; }      \
  };
#define WF_COMPLEX_BINARY(F, expr)                                  \
  template <>                                                       \
  struct ComplexMath<em::F> {                                       \
    static constexpr bool kHas = true;                              \
    template <typename C> static C apply(C a, C b) { return expr; } \
  };
WF_COMPLEX_UNARY(Cos, std::cos(x))
WF_COMPLEX_UNARY(Sin, std::sin(x))
WF_COMPLEX_UNARY(Tan, std::tan(x))
WF_COMPLEX_UNARY(Tanh, std::tanh(x))
WF_COMPLEX_UNARY(Exp, std::exp(x))
WF_COMPLEX_UNARY(Log, std::log(x))
WF_COMPLEX_UNARY(Sqrt, std::sqrt(x))
WF_COMPLEX_UNARY(Cbrt, std::pow(x, C(1.0 / 3.0)))
WF_COMPLEX_UNARY(Logistic, C(1) / (C(1) + std::exp(-x)))
WF_COMPLEX_UNARY(Rsqrt, C(1) / std::sqrt(x))
WF_COMPLEX_UNARY(Negate, -x)
WF_COMPLEX_BINARY(Add, a + b)
WF_COMPLEX_BINARY(Sub, a - b)
WF_COMPLEX_BINARY(Mul, a * b)
WF_COMPLEX_BINARY(Div, a / b)
WF_COMPLEX_BINARY(Pow, std::pow(a, b))
#undef WF_COMPLEX_UNARY
#undef WF_COMPLEX_BINARY

template <>
struct ComplexMath<em::Expm1> {
  static constexpr bool kHas = true;
  // exp(a+ib) - 1 = (expm1(a) cos b - 2 sin^2(b/2)) + i exp(a) sin b, accurate near 0.
  template <typename C> static C apply(C x) {
    auto a = x.real(), b = x.imag();
    auto s = std::sin(b / 2);
    return C(std::expm1(a) * std::cos(b) - 2 * s * s, std::exp(a) * std::sin(b));
  }
};
template <>
struct ComplexMath<em::Log1p> {
  static constexpr bool kHas = true;
  // log(1+z): |1+z|^2 = 1 + (2a + a^2 + b^2), so the real part is log1p of that / 2.
  template <typename C> static C apply(C x) {
    auto a = x.real(), b = x.imag();
    return C(std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a));
  }
};
template <>
struct ComplexMath<em::Sign> {
  static constexpr bool kHas = true;
  template <typename C> static C apply(C x) {
    using P = typename C::value_type;
    if (std::isnan(x.real()) || std::isnan(x.imag()))
      return C(std::numeric_limits<P>::quiet_NaN(), std::numeric_limits<P>::quiet_NaN());
    if (x == C(0)) return x;
    return x / std::abs(x);
  }
};
template <>
struct ComplexMath<em::Rem> {
  static constexpr bool kHas = true;
  // Complex remainder: a - b * trunc(a / b), truncating each component toward zero.
  template <typename C> static C apply(C a, C b) {
    C q = a / b;
    return a - b * C(std::trunc(q.real()), std::trunc(q.imag()));
  }
};
// Lexicographic on (real, imag).
template <typename C>
bool complexLess(C a, C b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
template <>
struct ComplexMath<em::Max> {
  static constexpr bool kHas = true;
  template <typename C> static C apply(C a, C b) { return complexLess(a, b) ? b : a; }
};
template <>
struct ComplexMath<em::Min> {
  static constexpr bool kHas = true;
  template <typename C> static C apply(C a, C b) { return complexLess(b, a) ? b : a; }
};
template <>
struct ComplexMath<em::Atan2> {
  static constexpr bool kHas = true;
  // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), continued to complex arguments.
  template <typename C> static C apply(C y, C x) {
    const C i(0, 1);
    return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
  }
};

// A functor as a CPU op: supports<T> says which element types it takes (the spec's types for
// the op), apply<T> maps one element of compute type T::C.
template <typename F>
struct SharedOp {
  using Functor = F;
  template <typename T> static constexpr bool supports = takes<F, T>() || (isComplexT<T> && ComplexMath<F>::kHas);
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isComplexT<T>) return ComplexMath<F>::apply(x);
    else return F::template apply<T::kBits>(x);
  }
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isComplexT<T>) return ComplexMath<F>::apply(a, b);
    else return F::template apply<T::kBits>(a, b);
  }
};
template <typename F>
constexpr int64_t grainOf() {
  return F::kCheap ? kCheapGrain : kMathGrain;
}
using AbsOp = SharedOp<em::Abs>;  // complex abs has a real result and is handled separately
using MaxOp = SharedOp<em::Max>;
using MinOp = SharedOp<em::Min>;

// ---------------------------------------------------------------------------------------------
// Drivers.

template <typename OpF>
Expected<Literal> runUnary(const Operation& op, const Literal& input, ElementType declared, int64_t grain) {
  const ElementType et = input.elementType();
  WF_RETURN_IF_ERROR(checkResultElement(op, declared, et));
  WF_ASSIGN_OR_RETURN(Literal in, widenMinifloat(op, input));
  Literal out = Literal::uninitialized(in.type());
  Status st = dispatch<false>(in.elementType(), unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (OpF::template supports<T>) {
      mapUnary<T, T>(in, out, grain, [](CT<T> x) { return OpF::template apply<T>(x); });
      return Status::ok();
    } else {
      return unsupportedType(op, et);
    }
  });
  WF_RETURN_IF_ERROR(st);
  return narrowTo(op, std::move(out), declared);
}

template <typename OpF>
Kernel unaryKernel(int64_t grain) {
  return [grain](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkArity(op, args, 1));
    WF_ASSIGN_OR_RETURN(Literal out, runUnary<OpF>(op, args[0], op.result(0)->type().elementType(), grain));
    return std::vector<Literal>{std::move(out)};
  };
}

template <typename OpF>
Expected<Literal> runBinary(const Operation& op, const Literal& lhs0, const Literal& rhs0, const Type& rt,
                            int64_t grain) {
  const ElementType et = lhs0.elementType();
  if (rhs0.elementType() != et) return invalidArgument(op.describe() + ": operand element types differ");
  WF_RETURN_IF_ERROR(checkResultElement(op, rt.elementType(), et));
  WF_ASSIGN_OR_RETURN(Literal lhs, widenMinifloat(op, lhs0));
  WF_ASSIGN_OR_RETURN(Literal rhs, widenMinifloat(op, rhs0));
  Literal out = Literal::uninitialized(rt.withElementType(computeType(et)));
  Status st = dispatch<false>(lhs.elementType(), unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (OpF::template supports<T>) {
      mapBinary<T, T>(lhs, rhs, out, grain, [](CT<T> a, CT<T> b) { return OpF::template apply<T>(a, b); });
      return Status::ok();
    } else {
      return unsupportedType(op, et);
    }
  });
  WF_RETURN_IF_ERROR(st);
  return narrowTo(op, std::move(out), et);
}

bool isFoldingBinary(OpCode c) {
  return c == OpCode::Add || c == OpCode::Subtract || c == OpCode::Multiply || c == OpCode::Divide ||
         c == OpCode::Maximum || c == OpCode::Minimum;
}

bool usedInRegions(const Operation& op, const Value* v) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        for (const Value* operand : inner->operands())
          if (operand == v) return true;
        if (usedInRegions(*inner, v)) return true;
      }
  return false;
}

// An f32 binary op with at least one operand that is a folded broadcast (see
// broadcastFoldsIntoElementwise): out[i] = f(x at i, y at i), each operand read through its
// strides (0 along broadcast dims). Returns nullopt when no operand is folded.
template <typename OpF>
std::optional<Literal> runFoldedBroadcastBinary(const Operation& op, std::span<const Literal> args,
                                                const EvalContext& ctx) {
  if (op.numOperands() != 2 || args.size() != 2) return std::nullopt;
  const std::vector<int64_t>& shape = op.result(0)->type().shape();
  const size_t rank = shape.size();
  std::vector<int64_t> strides[2];
  bool folded = false;
  for (size_t k = 0; k < 2; ++k) {
    const Operation* b = op.operand(k)->definingOp();
    if (b && b->code() == OpCode::BroadcastInDim && broadcastFoldsIntoElementwise(*b, ctx)) {
      folded = true;
      const std::vector<int64_t>& src = b->operand(0)->type().shape();
      std::vector<int64_t> srcStrides = rowMajorStrides(src);
      std::vector<int64_t> dims = b->attr("broadcast_dimensions")->asIntList().value_or(std::vector<int64_t>{});
      strides[k].assign(rank, 0);
      for (size_t j = 0; j < dims.size(); ++j)
        if (src[j] != 1) strides[k][static_cast<size_t>(dims[j])] = srcStrides[j];
    } else {
      strides[k] = rowMajorStrides(shape);
    }
  }
  if (!folded) return std::nullopt;
  // Merge adjacent dims that are contiguous in all three views, drop size-1 dims.
  std::vector<int64_t> ms, ma, mb;
  for (size_t d = 0; d < rank; ++d) {
    if (shape[d] == 1) continue;
    if (!ms.empty() && ma.back() == strides[0][d] * shape[d] && mb.back() == strides[1][d] * shape[d]) {
      ms.back() *= shape[d];
      ma.back() = strides[0][d];
      mb.back() = strides[1][d];
      continue;
    }
    ms.push_back(shape[d]);
    ma.push_back(strides[0][d]);
    mb.push_back(strides[1][d]);
  }
  if (ms.empty()) {
    ms = {1};
    ma = {0};
    mb = {0};
  }
  Literal out = Literal::uninitialized(op.result(0)->type());
  const float* a = args[0].dataAs<float>();
  const float* bp = args[1].dataAs<float>();
  float* o = out.dataAs<float>();
  const int64_t inner = ms.back(), sa = ma.back(), sb = mb.back();
  const size_t outer = ms.size() - 1;
  int64_t rows = 1;
  for (size_t d = 0; d < outer; ++d) rows *= ms[d];
  using F = NativeFloatTraits<float>;
  auto f = [](float x, float y) { return OpF::template apply<F>(x, y); };
  parallelFor(rows, std::max<int64_t>(1, kCheapGrain / std::max<int64_t>(inner, 1)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t offA = 0, offB = 0;
      for (int64_t rem = r, d = static_cast<int64_t>(outer) - 1; d >= 0; --d) {
        auto u = static_cast<size_t>(d);
        int64_t i = rem % ms[u];
        rem /= ms[u];
        offA += i * ma[u];
        offB += i * mb[u];
      }
      float* orow = o + r * inner;
      const float* ar = a + offA;
      const float* br = bp + offB;
      if (sa == 1 && sb == 1) {
        WF_SIMD
        for (int64_t i = 0; i < inner; ++i) orow[i] = f(ar[i], br[i]);
      } else if (sa == 1 && sb == 0) {
        const float y = br[0];
        WF_SIMD
        for (int64_t i = 0; i < inner; ++i) orow[i] = f(ar[i], y);
      } else if (sa == 0 && sb == 1) {
        const float x = ar[0];
        WF_SIMD
        for (int64_t i = 0; i < inner; ++i) orow[i] = f(x, br[i]);
      } else {
        for (int64_t i = 0; i < inner; ++i) orow[i] = f(ar[i * sa], br[i * sb]);
      }
    }
  });
  return out;
}

template <typename OpF>
Kernel binaryKernelFor(int64_t grain) {
  return [grain](const Operation& op, std::span<const Literal> args, EvalContext& ctx) -> Results {
    WF_RETURN_IF_ERROR(checkArity(op, args, 2));
    if constexpr (OpF::template supports<NativeFloatTraits<float>>) {
      if (isFoldingBinary(op.code()))
        if (std::optional<Literal> out = runFoldedBroadcastBinary<OpF>(op, args, ctx))
          return std::vector<Literal>{std::move(*out)};
    }
    WF_RETURN_IF_ERROR(checkSameShape(op, args[0], args[1]));
    WF_ASSIGN_OR_RETURN(Literal out, runBinary<OpF>(op, args[0], args[1], resultType(op, 0, args[0].shape()), grain));
    return std::vector<Literal>{std::move(out)};
  };
}

// abs(complex) -> real, real/imag: complex -> its part type, float -> itself.
enum class PartKind { kAbs, kReal, kImag };
Kernel partKernel(PartKind kind) {
  return [kind](const Operation& op, std::span<const Literal> args, EvalContext&) -> Results {
    WF_RETURN_IF_ERROR(checkArity(op, args, 1));
    const Literal& in = args[0];
    Literal out = Literal::zeros(resultType(op, 0, in.shape()));
    const ElementType et = in.elementType();
    if (kind == PartKind::kAbs && !isComplex(et)) {
      // Non-complex abs never gets here (registered as a unary op), kept for completeness.
      return internalError(op.describe() + ": abs of a non-complex type routed to the complex path");
    }
    const ElementType expected = isComplex(et) ? complexPartType(et) : et;
    WF_RETURN_IF_ERROR(checkResultElement(op, out.elementType(), expected));
    Status st = dispatch(et, unsupportedType(op, et), [&](auto tag) -> Status {
      using T = decltype(tag);
      if constexpr (isComplexT<T>) {
        using P = NativeFloatTraits<typename T::Part>;
        mapUnary<T, P>(in, out, kMathGrain, [kind](CT<T> z) {
          return kind == PartKind::kAbs ? std::abs(z) : kind == PartKind::kReal ? z.real() : z.imag();
        });
        return Status::ok();
      } else if constexpr (isFloatT<T>) {
        mapUnary<T, T>(in, out, kCheapGrain,
                       [kind](CT<T> x) { return kind == PartKind::kImag ? CT<T>(0) : x; });
        return Status::ok();
      } else {
        return unsupportedType(op, et);
      }
    });
    WF_RETURN_IF_ERROR(st);
    return std::vector<Literal>{std::move(out)};
  };
}

Results absKernel(const Operation& op, std::span<const Literal> args, EvalContext& ctx) {
  static const Kernel complexAbs = partKernel(PartKind::kAbs);
  static const Kernel realAbs = unaryKernel<AbsOp>(kCheapGrain);
  if (args.size() == 1 && isComplex(args[0].elementType())) return complexAbs(op, args, ctx);
  return realAbs(op, args, ctx);
}

Results isFiniteKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 1));
  WF_ASSIGN_OR_RETURN(Literal in, widenMinifloat(op, args[0]));
  Literal out = Literal::zeros(resultType(op, 0, in.shape()));
  WF_RETURN_IF_ERROR(checkResultElement(op, out.elementType(), ElementType::kI1));
  Status st = dispatch<false>(in.elementType(), unsupportedType(op, in.elementType()), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isFloatT<T>) {
      mapUnary<T, BoolTraits>(in, out, kCheapGrain, [](CT<T> x) { return static_cast<bool>(std::isfinite(x)); });
      return Status::ok();
    } else {
      return unsupportedType(op, in.elementType());
    }
  });
  WF_RETURN_IF_ERROR(st);
  return std::vector<Literal>{std::move(out)};
}

Results complexKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 2));
  WF_RETURN_IF_ERROR(checkSameShape(op, args[0], args[1]));
  const ElementType et = args[0].elementType();
  if (args[1].elementType() != et) return invalidArgument(op.describe() + ": operand element types differ");
  Literal out = Literal::zeros(resultType(op, 0, args[0].shape()));
  if (et == ElementType::kF32) {
    WF_RETURN_IF_ERROR(checkResultElement(op, out.elementType(), ElementType::kComplexF32));
    mapBinary<NativeFloatTraits<float>, ComplexTraits<float>>(
        args[0], args[1], out, kCheapGrain, [](float re, float im) { return std::complex<float>(re, im); });
  } else if (et == ElementType::kF64) {
    WF_RETURN_IF_ERROR(checkResultElement(op, out.elementType(), ElementType::kComplexF64));
    mapBinary<NativeFloatTraits<double>, ComplexTraits<double>>(
        args[0], args[1], out, kCheapGrain, [](double re, double im) { return std::complex<double>(re, im); });
  } else {
    return unsupportedType(op, et);
  }
  return std::vector<Literal>{std::move(out)};
}

Results reducePrecisionKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 1));
  WF_ASSIGN_OR_RETURN(const cpu::ReducePrecisionFormat format, cpu::reducePrecisionFormat(op));
  const int eb = format.exponentBits, mb = format.mantissaBits;
  const ElementType declared = op.result(0)->type().elementType();
  WF_RETURN_IF_ERROR(checkResultElement(op, declared, args[0].elementType()));
  WF_ASSIGN_OR_RETURN(Literal in, widenMinifloat(op, args[0]));
  Literal out = Literal::zeros(in.type());
  Status st = dispatch<false>(in.elementType(), unsupportedType(op, in.elementType()), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isFloatT<T>) {
      if constexpr (std::is_same_v<CT<T>, double>)
        mapUnary<T, T>(in, out, kCheapGrain, [=](double x) {
          return std::bit_cast<double>(reducePrecisionBits<uint64_t, 52>(std::bit_cast<uint64_t>(x), eb, mb));
        });
      else
        mapUnary<T, T>(in, out, kCheapGrain, [=](float x) {
          return std::bit_cast<float>(reducePrecisionBits<uint32_t, 23>(std::bit_cast<uint32_t>(x), eb, mb));
        });
      return Status::ok();
    } else {
      return unsupportedType(op, in.elementType());
    }
  });
  WF_RETURN_IF_ERROR(st);
  WF_ASSIGN_OR_RETURN(Literal result, narrowTo(op, std::move(out), declared));
  return std::vector<Literal>{std::move(result)};
}

// ---------------------------------------------------------------------------------------------
// compare

using em::compare;
using em::totalOrderKey;

template <typename T, CmpDir D>
void compareTyped(const Literal& lhs, const Literal& rhs, Literal& out, bool totalOrder) {
  if constexpr (isFloatT<T>) {
    if (totalOrder) {
      mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain,
                               [](CT<T> a, CT<T> b) { return compare(D, totalOrderKey(a), totalOrderKey(b)); });
      return;
    }
  }
  if constexpr (isComplexT<T>) {
    // Lexicographic on (real, imag).
    mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain, [](CT<T> a, CT<T> b) {
      if (D == CmpDir::kEQ) return a == b;
      if (D == CmpDir::kNE) return a != b;
      if (a.real() != b.real()) return compare(D, a.real(), b.real());
      return compare(D, a.imag(), b.imag());
    });
  } else {
    mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain, [](CT<T> a, CT<T> b) { return compare(D, a, b); });
  }
}

}  // namespace

Status parseComparison(const Operation& op, CmpDir* dir, CmpType* type) {
  const Attribute* d = op.attr("comparison_direction");
  if (!d) return invalidArgument(op.describe() + ": missing comparison_direction");
  const std::string& v = d->stringValue();
  if (v == "EQ") *dir = CmpDir::kEQ;
  else if (v == "NE") *dir = CmpDir::kNE;
  else if (v == "GE") *dir = CmpDir::kGE;
  else if (v == "GT") *dir = CmpDir::kGT;
  else if (v == "LE") *dir = CmpDir::kLE;
  else if (v == "LT") *dir = CmpDir::kLT;
  else return invalidArgument(op.describe() + ": unknown comparison_direction '" + v + "'");
  *type = CmpType::kDefault;
  if (const Attribute* t = op.attr("compare_type")) {
    const std::string& s = t->stringValue();
    if (s == "FLOAT") *type = CmpType::kFloat;
    else if (s == "TOTALORDER") *type = CmpType::kTotalOrder;
    else if (s == "SIGNED") *type = CmpType::kSigned;
    else if (s == "UNSIGNED") *type = CmpType::kUnsigned;
    else if (s != "NOTYPE" && !s.empty())
      return invalidArgument(op.describe() + ": unknown compare_type '" + s + "'");
  }
  return Status::ok();
}

Status compareKernel(const Operation& op, const Literal& lhs0, const Literal& rhs0, CmpDir dir, CmpType type,
                     Literal& out) {
  if (lhs0.elementType() != rhs0.elementType())
    return invalidArgument(op.describe() + ": operand element types differ");
  // Minifloats compare exactly as their f32 values (totalOrder too: widening keeps the order).
  WF_ASSIGN_OR_RETURN(Literal lhs, widenMinifloat(op, lhs0));
  WF_ASSIGN_OR_RETURN(Literal rhs, widenMinifloat(op, rhs0));
  if (out.elementType() != ElementType::kI1) return invalidArgument(op.describe() + ": result must be i1");
  const ElementType et = lhs.elementType();
  if (isComplex(et) && dir != CmpDir::kEQ && dir != CmpDir::kNE && type == CmpType::kTotalOrder)
    return invalidArgument(op.describe() + ": TOTALORDER is not defined for complex types");
  const bool totalOrder = type == CmpType::kTotalOrder;
  return dispatch<false>(et, unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    switch (dir) {
      case CmpDir::kEQ: compareTyped<T, CmpDir::kEQ>(lhs, rhs, out, totalOrder); break;
      case CmpDir::kNE: compareTyped<T, CmpDir::kNE>(lhs, rhs, out, totalOrder); break;
      case CmpDir::kGE: compareTyped<T, CmpDir::kGE>(lhs, rhs, out, totalOrder); break;
      case CmpDir::kGT: compareTyped<T, CmpDir::kGT>(lhs, rhs, out, totalOrder); break;
      case CmpDir::kLE: compareTyped<T, CmpDir::kLE>(lhs, rhs, out, totalOrder); break;
      case CmpDir::kLT: compareTyped<T, CmpDir::kLT>(lhs, rhs, out, totalOrder); break;
    }
    return Status::ok();
  });
}

Expected<Literal> binaryKernel(const Operation& op, OpCode code, const Literal& lhs, const Literal& rhs,
                               const Type& rt) {
  switch (code) {
#define WF_BINARY(code, F) \
  case OpCode::code: return runBinary<SharedOp<em::F>>(op, lhs, rhs, rt, grainOf<em::F>());
    WF_EM_BINARY_OPS(WF_BINARY)
#undef WF_BINARY
    default: return internalError(op.describe() + ": not a binary elementwise op");
  }
}

Expected<Literal> selectKernel(const Operation& op, const Literal& pred, const Literal& onTrue,
                               const Literal& onFalse, const Type& rt) {
  if (pred.elementType() != ElementType::kI1) return invalidArgument(op.describe() + ": pred must be i1");
  if (onTrue.elementType() != onFalse.elementType())
    return invalidArgument(op.describe() + ": on_true and on_false element types differ");
  Literal out = Literal::zeros(rt);
  WF_RETURN_IF_ERROR(checkResultElement(op, out.elementType(), onTrue.elementType()));
  const int64_t n = out.numElements();
  for (const Literal* l : {&pred, &onTrue, &onFalse})
    if (l->numElements() != n && l->numElements() != 1)
      return invalidArgument(op.describe() + ": operand " + l->type().toString() + " does not match the result " +
                             rt.toString());
  // Selection moves storage bytes, so one loop per storage size serves every element type.
  const size_t bytes = static_cast<size_t>(storageBytes(out.elementType()));
  const uint8_t* p = pred.dataAs<uint8_t>();
  const bool ps = pred.numElements() == 1, ts = onTrue.numElements() == 1, fs = onFalse.numElements() == 1;
  auto run = [&](auto zero) {
    using S = decltype(zero);
    const S* t = onTrue.dataAs<S>();
    const S* f = onFalse.dataAs<S>();
    S* o = out.dataAs<S>();
    parallelFor(n, kCheapGrain, [&](int64_t b, int64_t e) {
      if (!ps && !ts && !fs) {
        for (int64_t i = b; i < e; ++i) o[i] = p[i] ? t[i] : f[i];
      } else {
        for (int64_t i = b; i < e; ++i) o[i] = p[ps ? 0 : i] ? t[ts ? 0 : i] : f[fs ? 0 : i];
      }
    });
  };
  struct B16 { uint64_t a, b; };
  switch (bytes) {
    case 1: run(uint8_t{}); break;
    case 2: run(uint16_t{}); break;
    case 4: run(uint32_t{}); break;
    case 8: run(uint64_t{}); break;
    case 16: run(B16{}); break;
    default: return internalError(op.describe() + ": unexpected storage size");
  }
  return out;
}

namespace {

Results compareOpKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 2));
  WF_RETURN_IF_ERROR(checkSameShape(op, args[0], args[1]));
  CmpDir dir;
  CmpType type;
  WF_RETURN_IF_ERROR(parseComparison(op, &dir, &type));
  Literal out = Literal::zeros(resultType(op, 0, args[0].shape()));
  WF_RETURN_IF_ERROR(compareKernel(op, args[0], args[1], dir, type, out));
  return std::vector<Literal>{std::move(out)};
}

Results selectOpKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 3));
  WF_RETURN_IF_ERROR(checkSameShape(op, args[1], args[2]));
  if (args[0].type().rank() != 0) WF_RETURN_IF_ERROR(checkSameShape(op, args[0], args[1]));
  WF_ASSIGN_OR_RETURN(Literal out, selectKernel(op, args[0], args[1], args[2], resultType(op, 0, args[1].shape())));
  return std::vector<Literal>{std::move(out)};
}

// clamp(min, operand, max) = min(max(operand, min), max); min and max may be scalars.
Results clampKernel(const Operation& op, std::span<const Literal> args, EvalContext&) {
  WF_RETURN_IF_ERROR(checkArity(op, args, 3));
  const ElementType declared = op.result(0)->type().elementType();
  WF_ASSIGN_OR_RETURN(Literal lo, widenMinifloat(op, args[0]));
  WF_ASSIGN_OR_RETURN(Literal x, widenMinifloat(op, args[1]));
  WF_ASSIGN_OR_RETURN(Literal hi, widenMinifloat(op, args[2]));
  for (const Literal* l : {&lo, &hi})
    if (l->type().rank() != 0) WF_RETURN_IF_ERROR(checkSameShape(op, *l, x));
  const ElementType et = x.elementType();
  if (lo.elementType() != et || hi.elementType() != et)
    return invalidArgument(op.describe() + ": operand element types differ");
  WF_RETURN_IF_ERROR(checkResultElement(op, declared, args[1].elementType()));
  Literal out = Literal::zeros(x.type());
  Status st = dispatch<false>(et, unsupportedType(op, et), [&](auto tag) -> Status {
    using T = decltype(tag);
    if constexpr (isComplexT<T>) {
      return unsupportedType(op, et);
    } else {
      const auto* l = lo.dataAs<typename T::S>();
      const auto* v = x.dataAs<typename T::S>();
      const auto* h = hi.dataAs<typename T::S>();
      auto* o = out.dataAs<typename T::S>();
      const bool ls = lo.numElements() == 1, hs = hi.numElements() == 1;
      parallelFor(x.numElements(), kCheapGrain, [&](int64_t b, int64_t e) {
        for (int64_t i = b; i < e; ++i) {
          CT<T> m = MaxOp::apply<T>(T::load(v[i]), T::load(l[ls ? 0 : i]));
          o[i] = T::store(MinOp::apply<T>(m, T::load(h[hs ? 0 : i])));
        }
      });
      return Status::ok();
    }
  });
  WF_RETURN_IF_ERROR(st);
  WF_ASSIGN_OR_RETURN(Literal result, narrowTo(op, std::move(out), declared));
  return std::vector<Literal>{std::move(result)};
}

}  // namespace
}  // namespace ew

bool ew::broadcastFoldsIntoElementwise(const Operation& b, const EvalContext& ctx) {
  if (b.code() != OpCode::BroadcastInDim || b.numOperands() != 1 || b.numResults() != 1 || ctx.onResult) return false;
  const Type& rt = b.result(0)->type();
  const Type& st = b.operand(0)->type();
  if (!rt.isTensor() || !st.isTensor() || !rt.hasStaticShape() || !st.hasStaticShape() ||
      rt.elementType() != ElementType::kF32 || st.elementType() != ElementType::kF32)
    return false;
  const Attribute* dimsAttr = b.attr("broadcast_dimensions");
  std::optional<std::vector<int64_t>> dims = dimsAttr ? dimsAttr->asIntList() : std::nullopt;
  if (!dims || static_cast<int64_t>(dims->size()) != st.rank()) return false;
  for (size_t j = 0; j < dims->size(); ++j) {
    int64_t d = (*dims)[j];
    if (d < 0 || d >= rt.rank() || (st.shape()[j] != 1 && st.shape()[j] != rt.shape()[static_cast<size_t>(d)]))
      return false;
  }
  const Block* block = b.parentBlock();
  if (!block) return false;
  const Value* v = b.result(0);
  bool used = false;
  for (const auto& user : block->operations()) {
    for (const Value* operand : user->operands()) {
      if (operand != v) continue;
      if (!ew::isFoldingBinary(user->code()) || user->numOperands() != 2 || user->numResults() != 1 ||
          user->result(0)->type() != rt)
        return false;
      used = true;
    }
    if (user->numRegions() > 0 && ew::usedInRegions(*user, v)) return false;
  }
  return used;
}

void registerElementwiseKernels(KernelRegistry& r) {
  using namespace ew;
  // Every op of element_math.h's lists.
#define WF_UNARY(code, F) r.add(OpCode::code, unaryKernel<SharedOp<em::F>>(grainOf<em::F>()));
  WF_EM_UNARY_OPS(WF_UNARY)
#undef WF_UNARY
#define WF_BINARY(code, F) r.add(OpCode::code, binaryKernelFor<SharedOp<em::F>>(grainOf<em::F>()));
  WF_EM_BINARY_OPS(WF_BINARY)
#undef WF_BINARY
  r.add(OpCode::Abs, absKernel);
  r.add(OpCode::Real, partKernel(PartKind::kReal));
  r.add(OpCode::Imag, partKernel(PartKind::kImag));
  r.add(OpCode::IsFinite, isFiniteKernel);
  r.add(OpCode::ReducePrecision, reducePrecisionKernel);
  r.add(OpCode::Complex, complexKernel);

  r.add(OpCode::Compare, compareOpKernel);
  r.add(OpCode::Select, selectOpKernel);
  r.add(OpCode::Clamp, clampKernel);
  registerConvertKernels(r);
}

}  // namespace wf
