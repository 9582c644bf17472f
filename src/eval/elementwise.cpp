// CPU kernels for StableHLO's elementwise ops (unary, binary, compare, select, clamp, ...).
// Each op is a small functor struct whose `apply<T>` works on one element of compute type
// T::C; the drivers below dispatch once per op on the element type and run a typed loop
// (elementwise_ops.h). convert and bitcast_convert live in elementwise_convert.cpp.
#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <optional>
#include <string>

#include "eval/elementwise_ops.h"
#include "eval/shape_util.h"
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

// Unsigned storage-width view of an integer, masked to its bit width.
template <typename T>
auto maskedBits(CT<T> v) {
  using U = std::make_unsigned_t<CT<T>>;
  U u = static_cast<U>(v);
  if constexpr (T::kBits < 8 * static_cast<int>(sizeof(U))) u &= static_cast<U>((1u << T::kBits) - 1);
  return u;
}

// ---------------------------------------------------------------------------------------------
// Unary ops: supports<T> says which element types the spec allows; apply<T> maps one element.

#define WF_FLOAT_OR_COMPLEX(T) (isFloatT<T> || isComplexT<T>)

struct AbsOp {  // complex abs has a real result and is handled separately
  template <typename T> static constexpr bool supports = T::kCat == Cat::kSInt || isFloatT<T>;
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isFloatT<T>) return std::fabs(x);
    else return x < 0 ? wrapSub<CT<T>>(0, x) : x;
  }
};
struct CbrtOp {
  template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isFloatT<T>) return std::cbrt(x);
    else return std::pow(x, CT<T>(1.0 / 3.0));
  }
};
struct CeilOp {
  template <typename T> static constexpr bool supports = isFloatT<T>;
  template <typename T> static CT<T> apply(CT<T> x) { return std::ceil(x); }
};
struct FloorOp {
  template <typename T> static constexpr bool supports = isFloatT<T>;
  template <typename T> static CT<T> apply(CT<T> x) { return std::floor(x); }
};
struct RoundAfzOp {
  template <typename T> static constexpr bool supports = isFloatT<T>;
  template <typename T> static CT<T> apply(CT<T> x) { return std::round(x); }
};
struct RoundEvenOp {
  template <typename T> static constexpr bool supports = isFloatT<T>;
  template <typename T> static CT<T> apply(CT<T> x) { return std::nearbyint(x); }
};
#define WF_STD_UNARY(Name, fn)                                                  \
  struct Name {                                                                 \
    template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T); \
    template <typename T> static CT<T> apply(CT<T> x) { return fn(x); }         \
  };
WF_STD_UNARY(CosOp, std::cos)
WF_STD_UNARY(SinOp, std::sin)
WF_STD_UNARY(TanOp, std::tan)
WF_STD_UNARY(TanhOp, std::tanh)
WF_STD_UNARY(ExpOp, std::exp)
WF_STD_UNARY(LogOp, std::log)
WF_STD_UNARY(SqrtOp, std::sqrt)
#undef WF_STD_UNARY

struct Expm1Op {
  template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isFloatT<T>) {
      return std::expm1(x);
    } else {
      // exp(a+ib) - 1 = (expm1(a) cos b - 2 sin^2(b/2)) + i exp(a) sin b, accurate near 0.
      auto a = x.real(), b = x.imag();
      auto s = std::sin(b / 2);
      return CT<T>(std::expm1(a) * std::cos(b) - 2 * s * s, std::exp(a) * std::sin(b));
    }
  }
};
struct Log1pOp {
  template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isFloatT<T>) {
      return std::log1p(x);
    } else {
      // log(1+z): |1+z|^2 = 1 + (2a + a^2 + b^2), so the real part is log1p of that / 2.
      auto a = x.real(), b = x.imag();
      return CT<T>(std::log1p(a * (2 + a) + b * b) / 2, std::atan2(b, 1 + a));
    }
  }
};
struct LogisticOp {
  template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) {
    return CT<T>(1) / (CT<T>(1) + std::exp(-x));
  }
};
struct RsqrtOp {
  template <typename T> static constexpr bool supports = WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) { return CT<T>(1) / std::sqrt(x); }
};
struct NegateOp {
  template <typename T> static constexpr bool supports = !isBoolT<T>;
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isIntT<T>) return wrapSub<CT<T>>(0, x);
    else return -x;
  }
};
struct NotOp {
  template <typename T> static constexpr bool supports = isBoolT<T> || isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isBoolT<T>) return !x;
    else return static_cast<CT<T>>(~x);
  }
};
struct PopcntOp {
  template <typename T> static constexpr bool supports = isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> x) { return static_cast<CT<T>>(std::popcount(maskedBits<T>(x))); }
};
struct ClzOp {
  template <typename T> static constexpr bool supports = isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> x) {
    constexpr int storageBits = 8 * sizeof(CT<T>);
    return static_cast<CT<T>>(std::countl_zero(maskedBits<T>(x)) - (storageBits - T::kBits));
  }
};
struct SignOp {
  template <typename T> static constexpr bool supports = T::kCat == Cat::kSInt || WF_FLOAT_OR_COMPLEX(T);
  template <typename T> static CT<T> apply(CT<T> x) {
    if constexpr (isIntT<T>) {
      return static_cast<CT<T>>((x > 0) - (x < 0));
    } else if constexpr (isFloatT<T>) {
      if (std::isnan(x) || x == 0) return x;
      return x > 0 ? CT<T>(1) : CT<T>(-1);
    } else {
      using P = typename T::Part;
      if (std::isnan(x.real()) || std::isnan(x.imag()))
        return CT<T>(std::numeric_limits<P>::quiet_NaN(), std::numeric_limits<P>::quiet_NaN());
      if (x == CT<T>(0)) return x;
      return x / std::abs(x);
    }
  }
};
#undef WF_FLOAT_OR_COMPLEX

// ---------------------------------------------------------------------------------------------
// Binary ops.

struct AddOp {
  template <typename T> static constexpr bool supports = true;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isBoolT<T>) return a || b;
    else if constexpr (isIntT<T>) return wrapAdd(a, b);
    else return a + b;
  }
};
struct SubOp {
  template <typename T> static constexpr bool supports = !isBoolT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isIntT<T>) return wrapSub(a, b);
    else return a - b;
  }
};
struct MulOp {
  template <typename T> static constexpr bool supports = true;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isBoolT<T>) return a && b;
    else if constexpr (isIntT<T>) return wrapMul(a, b);
    else return a * b;
  }
};
// Integer x/0 and x%0 follow XLA: x/0 = -1 (all ones), x%0 = x; INT_MIN/-1 = INT_MIN, INT_MIN%-1 = 0.
struct DivOp {
  template <typename T> static constexpr bool supports = !isBoolT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isIntT<T>) {
      if (b == 0) return static_cast<CT<T>>(-1);
      if constexpr (T::kCat == Cat::kSInt) {
        if (b == -1) return wrapSub<CT<T>>(0, a);
      }
      return static_cast<CT<T>>(a / b);
    } else {
      return a / b;
    }
  }
};
struct RemOp {
  template <typename T> static constexpr bool supports = !isBoolT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isIntT<T>) {
      if (b == 0) return a;
      if constexpr (T::kCat == Cat::kSInt) {
        if (b == -1) return 0;
      }
      return static_cast<CT<T>>(a % b);
    } else if constexpr (isFloatT<T>) {
      return std::fmod(a, b);
    } else {
      // Complex remainder: a - b * trunc(a / b), truncating each component toward zero.
      CT<T> q = a / b;
      return a - b * CT<T>(std::trunc(q.real()), std::trunc(q.imag()));
    }
  }
};
template <typename C>
bool complexLess(C a, C b) {
  return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
}
struct MaxOp {
  template <typename T> static constexpr bool supports = true;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isBoolT<T>) return a || b;
    else if constexpr (isIntT<T>) return a > b ? a : b;
    else if constexpr (isFloatT<T>) return ieeeMax(a, b);
    else return complexLess(a, b) ? b : a;
  }
};
struct MinOp {
  template <typename T> static constexpr bool supports = true;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isBoolT<T>) return a && b;
    else if constexpr (isIntT<T>) return a < b ? a : b;
    else if constexpr (isFloatT<T>) return ieeeMin(a, b);
    else return complexLess(b, a) ? b : a;
  }
};
struct PowOp {
  template <typename T> static constexpr bool supports = !isBoolT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) {
    if constexpr (isIntT<T>) {
      using C = CT<T>;
      if constexpr (T::kCat == Cat::kSInt) {
        // Negative exponents: only |base| = 1 gives a non-zero integer result.
        if (b < 0) {
          if (a == 1) return 1;
          if (a == -1) return (b & 1) ? C(-1) : C(1);
          return 0;
        }
      }
      C result = 1, base = a;
      using U = std::make_unsigned_t<C>;
      for (U e = static_cast<U>(b); e != 0; e >>= 1) {
        if (e & 1) result = wrapMul(result, base);
        base = wrapMul(base, base);
      }
      return result;
    } else {
      return std::pow(a, b);
    }
  }
};
struct AndOp {
  template <typename T> static constexpr bool supports = isBoolT<T> || isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) { return static_cast<CT<T>>(a & b); }
};
struct OrOp {
  template <typename T> static constexpr bool supports = isBoolT<T> || isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) { return static_cast<CT<T>>(a | b); }
};
struct XorOp {
  template <typename T> static constexpr bool supports = isBoolT<T> || isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> b) { return static_cast<CT<T>>(a ^ b); }
};
// Shift amounts are read as unsigned; amounts >= the bit width shift everything out.
template <typename T>
bool shiftOutOfRange(CT<T> s) {
  if constexpr (T::kCat == Cat::kSInt) {
    if (s < 0) return true;
  }
  return static_cast<uint64_t>(s) >= static_cast<uint64_t>(T::kBits);
}
struct ShlOp {
  template <typename T> static constexpr bool supports = isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> s) {
    if (shiftOutOfRange<T>(s)) return 0;
    return static_cast<CT<T>>(maskedBits<T>(a) << s);
  }
};
struct ShrLogicalOp {
  template <typename T> static constexpr bool supports = isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> s) {
    if (shiftOutOfRange<T>(s)) return 0;
    return static_cast<CT<T>>(maskedBits<T>(a) >> s);
  }
};
struct ShrArithOp {
  template <typename T> static constexpr bool supports = isIntT<T>;
  template <typename T> static CT<T> apply(CT<T> a, CT<T> s) {
    // Sign-extend from the element's width (unsigned types shift in their top bit too).
    constexpr int sh = 64 - T::kBits;
    int64_t v = static_cast<int64_t>(static_cast<uint64_t>(maskedBits<T>(a)) << sh) >> sh;
    if (shiftOutOfRange<T>(s)) return static_cast<CT<T>>(v < 0 ? -1 : 0);
    return static_cast<CT<T>>(v >> s);
  }
};
struct Atan2Op {
  template <typename T> static constexpr bool supports = isFloatT<T> || isComplexT<T>;
  template <typename T> static CT<T> apply(CT<T> y, CT<T> x) {
    if constexpr (isFloatT<T>) {
      return std::atan2(y, x);
    } else {
      // atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), continued to complex arguments.
      const CT<T> i(0, 1);
      return -i * std::log((x + i * y) / std::sqrt(x * x + y * y));
    }
  }
};

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
    if constexpr (std::is_same_v<OpF, AddOp> || std::is_same_v<OpF, SubOp> || std::is_same_v<OpF, MulOp> ||
                  std::is_same_v<OpF, DivOp> || std::is_same_v<OpF, MaxOp> || std::is_same_v<OpF, MinOp>) {
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

// IEEE totalOrder as a signed integer key: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
inline int64_t totalOrderKey(double d) {
  int64_t k = std::bit_cast<int64_t>(d);
  return k < 0 ? (k ^ std::numeric_limits<int64_t>::max()) : k;
}
inline int32_t totalOrderKey(float f) {
  int32_t k = std::bit_cast<int32_t>(f);
  return k < 0 ? (k ^ std::numeric_limits<int32_t>::max()) : k;
}

template <typename V>
bool applyDir(CmpDir dir, V a, V b) {
  switch (dir) {
    case CmpDir::kEQ: return a == b;
    case CmpDir::kNE: return a != b;
    case CmpDir::kGE: return a >= b;
    case CmpDir::kGT: return a > b;
    case CmpDir::kLE: return a <= b;
    case CmpDir::kLT: return a < b;
  }
  return false;
}

template <typename T, CmpDir D>
void compareTyped(const Literal& lhs, const Literal& rhs, Literal& out, bool totalOrder) {
  if constexpr (isFloatT<T>) {
    if (totalOrder) {
      mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain,
                               [](CT<T> a, CT<T> b) { return applyDir(D, totalOrderKey(a), totalOrderKey(b)); });
      return;
    }
  }
  if constexpr (isComplexT<T>) {
    // Lexicographic on (real, imag).
    mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain, [](CT<T> a, CT<T> b) {
      if (D == CmpDir::kEQ) return a == b;
      if (D == CmpDir::kNE) return a != b;
      if (a.real() != b.real()) return applyDir(D, a.real(), b.real());
      return applyDir(D, a.imag(), b.imag());
    });
  } else {
    mapBinary<T, BoolTraits>(lhs, rhs, out, kCheapGrain, [](CT<T> a, CT<T> b) { return applyDir(D, a, b); });
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
    case OpCode::Add: return runBinary<AddOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Subtract: return runBinary<SubOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Multiply: return runBinary<MulOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Divide: return runBinary<DivOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Remainder: return runBinary<RemOp>(op, lhs, rhs, rt, kMathGrain);
    case OpCode::Maximum: return runBinary<MaxOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Minimum: return runBinary<MinOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Power: return runBinary<PowOp>(op, lhs, rhs, rt, kMathGrain);
    case OpCode::And: return runBinary<AndOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Or: return runBinary<OrOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Xor: return runBinary<XorOp>(op, lhs, rhs, rt, kCheapGrain);
    case OpCode::Atan2: return runBinary<Atan2Op>(op, lhs, rhs, rt, kMathGrain);
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
  r.add(OpCode::Abs, absKernel);
  r.add(OpCode::Cbrt, unaryKernel<CbrtOp>(kMathGrain));
  r.add(OpCode::Ceil, unaryKernel<CeilOp>(kCheapGrain));
  r.add(OpCode::Floor, unaryKernel<FloorOp>(kCheapGrain));
  r.add(OpCode::RoundNearestAfz, unaryKernel<RoundAfzOp>(kCheapGrain));
  r.add(OpCode::RoundNearestEven, unaryKernel<RoundEvenOp>(kCheapGrain));
  r.add(OpCode::Cosine, unaryKernel<CosOp>(kMathGrain));
  r.add(OpCode::Sine, unaryKernel<SinOp>(kMathGrain));
  r.add(OpCode::Tan, unaryKernel<TanOp>(kMathGrain));
  r.add(OpCode::Tanh, unaryKernel<TanhOp>(kMathGrain));
  r.add(OpCode::Exponential, unaryKernel<ExpOp>(kMathGrain));
  r.add(OpCode::ExponentialMinusOne, unaryKernel<Expm1Op>(kMathGrain));
  r.add(OpCode::Log, unaryKernel<LogOp>(kMathGrain));
  r.add(OpCode::LogPlusOne, unaryKernel<Log1pOp>(kMathGrain));
  r.add(OpCode::Logistic, unaryKernel<LogisticOp>(kMathGrain));
  r.add(OpCode::Sqrt, unaryKernel<SqrtOp>(kMathGrain));
  r.add(OpCode::Rsqrt, unaryKernel<RsqrtOp>(kMathGrain));
  r.add(OpCode::Negate, unaryKernel<NegateOp>(kCheapGrain));
  r.add(OpCode::Not, unaryKernel<NotOp>(kCheapGrain));
  r.add(OpCode::Popcnt, unaryKernel<PopcntOp>(kCheapGrain));
  r.add(OpCode::CountLeadingZeros, unaryKernel<ClzOp>(kCheapGrain));
  r.add(OpCode::Sign, unaryKernel<SignOp>(kCheapGrain));
  r.add(OpCode::Real, partKernel(PartKind::kReal));
  r.add(OpCode::Imag, partKernel(PartKind::kImag));
  r.add(OpCode::IsFinite, isFiniteKernel);
  r.add(OpCode::ReducePrecision, reducePrecisionKernel);
  r.add(OpCode::Complex, complexKernel);

  r.add(OpCode::Add, binaryKernelFor<AddOp>(kCheapGrain));
  r.add(OpCode::Subtract, binaryKernelFor<SubOp>(kCheapGrain));
  r.add(OpCode::Multiply, binaryKernelFor<MulOp>(kCheapGrain));
  r.add(OpCode::Divide, binaryKernelFor<DivOp>(kCheapGrain));
  r.add(OpCode::Remainder, binaryKernelFor<RemOp>(kMathGrain));
  r.add(OpCode::Maximum, binaryKernelFor<MaxOp>(kCheapGrain));
  r.add(OpCode::Minimum, binaryKernelFor<MinOp>(kCheapGrain));
  r.add(OpCode::Power, binaryKernelFor<PowOp>(kMathGrain));
  r.add(OpCode::And, binaryKernelFor<AndOp>(kCheapGrain));
  r.add(OpCode::Or, binaryKernelFor<OrOp>(kCheapGrain));
  r.add(OpCode::Xor, binaryKernelFor<XorOp>(kCheapGrain));
  r.add(OpCode::ShiftLeft, binaryKernelFor<ShlOp>(kCheapGrain));
  r.add(OpCode::ShiftRightLogical, binaryKernelFor<ShrLogicalOp>(kCheapGrain));
  r.add(OpCode::ShiftRightArithmetic, binaryKernelFor<ShrArithOp>(kCheapGrain));
  r.add(OpCode::Atan2, binaryKernelFor<Atan2Op>(kMathGrain));

  r.add(OpCode::Compare, compareOpKernel);
  r.add(OpCode::Select, selectOpKernel);
  r.add(OpCode::Clamp, clampKernel);
  registerConvertKernels(r);
}

}  // namespace wf
