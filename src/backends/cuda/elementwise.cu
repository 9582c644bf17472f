// CUDA kernels for StableHLO's elementwise ops: unary and binary math, compare, select, clamp,
// convert, reduce_precision, real/imag of real numbers, and the chlo unary math ops (erf, erf_inv, lgamma, inverse trig/hyperbolic, ...). Each kernel is a grid-stride loop templated on the element traits (device_util.cuh);
// the op is a run-time switch that is uniform across the grid. Operands may broadcast to the
// result (a one-element operand, or numpy-style size-1 dims); same-shape operands take a
// contiguous fast path.
#include <cmath>
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_util.cuh"
#include "support/reduce_precision.h"

namespace wf::cuda {
namespace {

enum class UnOp : uint8_t {
  kAbs, kNegate, kNot, kExp, kExpm1, kLog, kLog1p, kLogistic, kSqrt, kRsqrt, kCbrt, kSin, kCos, kTan,
  kTanh, kFloor, kCeil, kRoundAfz, kRoundEven, kSign, kPopcnt, kClz,
  // chlo (float only)
  kErf, kErfc, kErfInv, kCosh, kSinh, kAsin, kAcos, kAtan, kAsinh, kAcosh, kAtanh, kLgamma, kSquare,
};
enum class BinOp : uint8_t {
  kAdd, kSub, kMul, kDiv, kRem, kMax, kMin, kPow, kAtan2, kAnd, kOr, kXor, kShl, kShrA, kShrL,
  kMulHi,  // chlo.mulhi (integers)
};
enum class CmpDir : uint8_t { kEQ, kNE, kGE, kGT, kLE, kLT };

// Overloads picking the float or double device math function.
#define WF_MATH1(name, ff, df)                                  \
  __device__ inline float name(float x) { return ff(x); }      \
  __device__ inline double name(double x) { return df(x); }
WF_MATH1(mExp, expf, exp)
WF_MATH1(mExpm1, expm1f, expm1)
WF_MATH1(mLog, logf, log)
WF_MATH1(mLog1p, log1pf, log1p)
WF_MATH1(mSqrt, sqrtf, sqrt)
WF_MATH1(mCbrt, cbrtf, cbrt)
WF_MATH1(mSin, sinf, sin)
WF_MATH1(mCos, cosf, cos)
WF_MATH1(mTan, tanf, tan)
WF_MATH1(mTanh, tanhf, tanh)
WF_MATH1(mFloor, floorf, floor)
WF_MATH1(mCeil, ceilf, ceil)
WF_MATH1(mRound, roundf, round)
WF_MATH1(mRint, rintf, rint)
WF_MATH1(mAbs, fabsf, fabs)
WF_MATH1(mErf, erff, erf)
WF_MATH1(mErfc, erfcf, erfc)
WF_MATH1(mErfInv, erfinvf, erfinv)
WF_MATH1(mCosh, coshf, cosh)
WF_MATH1(mSinh, sinhf, sinh)
WF_MATH1(mAsin, asinf, asin)
WF_MATH1(mAcos, acosf, acos)
WF_MATH1(mAtan, atanf, atan)
WF_MATH1(mAsinh, asinhf, asinh)
WF_MATH1(mAcosh, acoshf, acosh)
WF_MATH1(mAtanh, atanhf, atanh)
WF_MATH1(mLgamma, lgammaf, lgamma)
#undef WF_MATH1
__device__ inline float mFmod(float a, float b) { return fmodf(a, b); }
__device__ inline double mFmod(double a, double b) { return fmod(a, b); }
__device__ inline float mPow(float a, float b) { return powf(a, b); }
__device__ inline double mPow(double a, double b) { return pow(a, b); }
__device__ inline float mAtan2(float a, float b) { return atan2f(a, b); }
__device__ inline double mAtan2(double a, double b) { return atan2(a, b); }

// IEEE-754 maximum/minimum: NaN propagates, -0 < +0.
template <typename C>
__device__ C ieeeMax(C a, C b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? b : a;
  return a > b ? a : b;
}
template <typename C>
__device__ C ieeeMin(C a, C b) {
  if (isnan(a) || isnan(b)) return a + b;
  if (a == b) return signbit(a) ? a : b;
  return a < b ? a : b;
}

// The low kBits of an integer as unsigned.
template <typename Tr>
__device__ uint64_t masked(typename Tr::C v) {
  uint64_t u = static_cast<uint64_t>(v);
  if constexpr (Tr::kBits < 64) u &= (uint64_t{1} << Tr::kBits) - 1;
  return u;
}

template <typename Tr>
__device__ typename Tr::C applyUnary(UnOp op, typename Tr::C x) {
  using C = typename Tr::C;
  if constexpr (Tr::kCat == Cat::kFloat) {
    switch (op) {
      case UnOp::kAbs: return mAbs(x);
      case UnOp::kNegate: return -x;
      case UnOp::kExp: return mExp(x);
      case UnOp::kExpm1: return mExpm1(x);
      case UnOp::kLog: return mLog(x);
      case UnOp::kLog1p: return mLog1p(x);
      case UnOp::kLogistic: return C(1) / (C(1) + mExp(-x));
      case UnOp::kSqrt: return mSqrt(x);
      case UnOp::kRsqrt: return C(1) / mSqrt(x);
      case UnOp::kCbrt: return mCbrt(x);
      case UnOp::kSin: return mSin(x);
      case UnOp::kCos: return mCos(x);
      case UnOp::kTan: return mTan(x);
      case UnOp::kTanh: return mTanh(x);
      case UnOp::kFloor: return mFloor(x);
      case UnOp::kCeil: return mCeil(x);
      case UnOp::kRoundAfz: return mRound(x);
      case UnOp::kRoundEven: return mRint(x);
      case UnOp::kSign: return (isnan(x) || x == C(0)) ? x : (x > C(0) ? C(1) : C(-1));
      case UnOp::kErf: return mErf(x);
      case UnOp::kErfc: return mErfc(x);
      case UnOp::kErfInv: return mErfInv(x);
      case UnOp::kCosh: return mCosh(x);
      case UnOp::kSinh: return mSinh(x);
      case UnOp::kAsin: return mAsin(x);
      case UnOp::kAcos: return mAcos(x);
      case UnOp::kAtan: return mAtan(x);
      case UnOp::kAsinh: return mAsinh(x);
      case UnOp::kAcosh: return mAcosh(x);
      case UnOp::kAtanh: return mAtanh(x);
      case UnOp::kLgamma: return mLgamma(x);
      case UnOp::kSquare: return x * x;
      default: return x;
    }
  } else if constexpr (Tr::kCat == Cat::kBool) {
    return op == UnOp::kNot ? !x : x;
  } else {
    switch (op) {
      case UnOp::kAbs:
        if constexpr (Tr::kCat == Cat::kSInt) return x < C(0) ? static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x)) : x;
        else return x;
      case UnOp::kNegate: return static_cast<C>(uint64_t{0} - static_cast<uint64_t>(x));
      case UnOp::kNot: return static_cast<C>(~static_cast<uint64_t>(x));
      case UnOp::kPopcnt: return static_cast<C>(__popcll(masked<Tr>(x)));
      case UnOp::kClz: return static_cast<C>(__clzll(static_cast<long long>(masked<Tr>(x))) - (64 - Tr::kBits));
      case UnOp::kSign:
        if constexpr (Tr::kCat == Cat::kSInt) return static_cast<C>((x > C(0)) - (x < C(0)));
        else return static_cast<C>(x > C(0));
      default: return x;
    }
  }
}

template <typename Tr>
__device__ bool shiftOutOfRange(typename Tr::C s) {
  if constexpr (Tr::kCat == Cat::kSInt) {
    if (s < 0) return true;
  }
  return static_cast<uint64_t>(s) >= static_cast<uint64_t>(Tr::kBits);
}

template <typename Tr>
__device__ typename Tr::C applyBinary(BinOp op, typename Tr::C a, typename Tr::C b) {
  using C = typename Tr::C;
  if constexpr (Tr::kCat == Cat::kFloat) {
    switch (op) {
      case BinOp::kAdd: return a + b;
      case BinOp::kSub: return a - b;
      case BinOp::kMul: return a * b;
      case BinOp::kDiv: return a / b;
      case BinOp::kRem: return mFmod(a, b);
      case BinOp::kMax: return ieeeMax(a, b);
      case BinOp::kMin: return ieeeMin(a, b);
      case BinOp::kPow: return mPow(a, b);
      case BinOp::kAtan2: return mAtan2(a, b);
      default: return a;
    }
  } else if constexpr (Tr::kCat == Cat::kBool) {
    switch (op) {
      case BinOp::kAdd: case BinOp::kMax: case BinOp::kOr: return a || b;
      case BinOp::kMul: case BinOp::kMin: case BinOp::kAnd: return a && b;
      case BinOp::kXor: return a != b;
      default: return a;
    }
  } else {
    using U = uint64_t;
    switch (op) {
      case BinOp::kAdd: return static_cast<C>(static_cast<U>(a) + static_cast<U>(b));
      case BinOp::kSub: return static_cast<C>(static_cast<U>(a) - static_cast<U>(b));
      case BinOp::kMul: return static_cast<C>(static_cast<U>(a) * static_cast<U>(b));
      case BinOp::kDiv:
        // x/0 = -1 (all ones), INT_MIN/-1 = INT_MIN, as XLA and the CPU backend.
        if (b == C(0)) return static_cast<C>(~U{0});
        if constexpr (Tr::kCat == Cat::kSInt) {
          if (b == C(-1)) return static_cast<C>(U{0} - static_cast<U>(a));
        }
        return a / b;
      case BinOp::kRem:
        if (b == C(0)) return a;
        if constexpr (Tr::kCat == Cat::kSInt) {
          if (b == C(-1)) return C(0);
        }
        return a % b;
      case BinOp::kMax: return a > b ? a : b;
      case BinOp::kMin: return a < b ? a : b;
      case BinOp::kPow: {
        if constexpr (Tr::kCat == Cat::kSInt) {
          if (b < 0) {
            if (a == 1) return 1;
            if (a == -1) return (b & 1) ? C(-1) : C(1);
            return 0;
          }
        }
        U result = 1, base = static_cast<U>(a);
        for (U e = masked<Tr>(b); e != 0; e >>= 1) {
          if (e & 1) result *= base;
          base *= base;
        }
        return static_cast<C>(result);
      }
      case BinOp::kAnd: return a & b;
      case BinOp::kOr: return a | b;
      case BinOp::kXor: return a ^ b;
      case BinOp::kShl:
        if (shiftOutOfRange<Tr>(b)) return 0;
        return static_cast<C>(masked<Tr>(a) << b);
      case BinOp::kShrL:
        if (shiftOutOfRange<Tr>(b)) return 0;
        return static_cast<C>(masked<Tr>(a) >> b);
      case BinOp::kMulHi:
        // The high half of the double-width product. Operands arrive sign- or zero-extended to
        // 64 bits, so below 64 bits the whole product fits in 64 bits.
        if constexpr (Tr::kBits == 64) {
          if constexpr (Tr::kCat == Cat::kSInt) return static_cast<C>(__mul64hi(a, b));
          else return static_cast<C>(__umul64hi(a, b));
        } else {
          return static_cast<C>(a * b) >> Tr::kBits;
        }
      case BinOp::kShrA: {
        constexpr int sh = 64 - Tr::kBits;
        const int64_t v = static_cast<int64_t>(masked<Tr>(a) << sh) >> sh;
        if (shiftOutOfRange<Tr>(b)) return static_cast<C>(v < 0 ? -1 : 0);
        return static_cast<C>(v >> b);
      }
      default: return a;
    }
  }
}

// IEEE totalOrder as a signed key: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
__device__ inline int64_t totalOrderKey(double d) {
  int64_t k = __double_as_longlong(d);
  return k < 0 ? (k ^ INT64_MAX) : k;
}
__device__ inline int64_t totalOrderKey(float f) {
  int32_t k = __float_as_int(f);
  return k < 0 ? (k ^ INT32_MAX) : k;
}

template <typename V>
__device__ bool applyDir(CmpDir dir, V a, V b) {
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

// ---------------------------------------------------------------------------------------------
// Kernels. `contiguous`: every operand has the result's shape; otherwise `map` gives offsets.

template <typename Tr>
__global__ void unaryKernel(UnOp op, const typename Tr::S* in, typename Tr::S* out, int64_t n) {
  WF_GRID_STRIDE_LOOP(i, n) out[i] = Tr::store(applyUnary<Tr>(op, Tr::load(in[i])));
}

// which: 2 is_finite, 0 is_inf, 1 is_pos_inf, -1 is_neg_inf.
template <typename Tr>
__global__ void isFiniteKernel(int which, const typename Tr::S* in, uint8_t* out, int64_t n) {
  WF_GRID_STRIDE_LOOP(i, n) {
    const auto x = Tr::load(in[i]);
    bool r;
    switch (which) {
      case 2: r = isfinite(x); break;
      case 0: r = isinf(x); break;
      case 1: r = isinf(x) && x > 0; break;
      default: r = isinf(x) && x < 0; break;
    }
    out[i] = r ? 1 : 0;
  }
}

// reduce_precision: f16/bf16/f32 go through f32 bits (then round once to their type, as on the
// CPU), f64 through its own bits.
template <typename Tr>
__global__ void reducePrecisionKernel(const typename Tr::S* in, typename Tr::S* out, int64_t n, int exponentBits,
                                      int mantissaBits) {
  WF_GRID_STRIDE_LOOP(i, n) {
    const auto x = Tr::load(in[i]);
    if constexpr (std::is_same_v<typename Tr::C, double>) {
      out[i] = Tr::store(__longlong_as_double(static_cast<long long>(reducePrecisionBits<uint64_t, 52>(
          static_cast<uint64_t>(__double_as_longlong(x)), exponentBits, mantissaBits))));
    } else {
      out[i] = Tr::store(__uint_as_float(reducePrecisionBits<uint32_t, 23>(__float_as_uint(x), exponentBits, mantissaBits)));
    }
  }
}

template <typename Tr>
__global__ void binaryKernel(BinOp op, const typename Tr::S* a, const typename Tr::S* b, typename Tr::S* out,
                             int64_t n, bool contiguous, IndexMap<2> map) {
  if (contiguous) {
    WF_GRID_STRIDE_LOOP(i, n) out[i] = Tr::store(applyBinary<Tr>(op, Tr::load(a[i]), Tr::load(b[i])));
  } else {
    WF_GRID_STRIDE_LOOP(i, n) {
      int64_t off[2];
      map.offsets(i, off);
      out[i] = Tr::store(applyBinary<Tr>(op, Tr::load(a[off[0]]), Tr::load(b[off[1]])));
    }
  }
}

template <typename Tr>
__global__ void compareKernel(CmpDir dir, bool totalOrder, const typename Tr::S* a, const typename Tr::S* b,
                              uint8_t* out, int64_t n, bool contiguous, IndexMap<2> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[2] = {i, i};
    if (!contiguous) map.offsets(i, off);
    const auto x = Tr::load(a[off[0]]);
    const auto y = Tr::load(b[off[1]]);
    bool r;
    if constexpr (Tr::kCat == Cat::kFloat) {
      r = totalOrder ? applyDir(dir, totalOrderKey(x), totalOrderKey(y)) : applyDir(dir, x, y);
    } else {
      r = applyDir(dir, x, y);
    }
    out[i] = r ? 1 : 0;
  }
}

template <typename Tr>
__global__ void clampKernel(const typename Tr::S* lo, const typename Tr::S* x, const typename Tr::S* hi,
                            typename Tr::S* out, int64_t n, bool contiguous, IndexMap<3> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3] = {i, i, i};
    if (!contiguous) map.offsets(i, off);
    auto m = applyBinary<Tr>(BinOp::kMax, Tr::load(x[off[1]]), Tr::load(lo[off[0]]));
    out[i] = Tr::store(applyBinary<Tr>(BinOp::kMin, m, Tr::load(hi[off[2]])));
  }
}

template <typename S>
__global__ void selectKernel(const uint8_t* pred, const S* t, const S* f, S* out, int64_t n, bool contiguous,
                             IndexMap<3> map) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t off[3] = {i, i, i};
    if (!contiguous) map.offsets(i, off);
    out[i] = pred[off[0]] ? t[off[1]] : f[off[2]];
  }
}

// ---------------------------------------------------------------------------------------------
// convert: the source type is a template parameter, the destination a run-time switch.

// double -> float rounding to odd, so that a later float -> bf16/f16 rounding to nearest even
// gives the correctly rounded double -> narrow result (as the CPU backend).
__device__ inline float doubleToFloatRoundOdd(double d) {
  float f = __double2float_rn(d);
  if (!isfinite(d) || static_cast<double>(f) == d) return f;
  if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
  if (isinf(f)) return f;
  return __uint_as_float(__float_as_uint(f) | 1u);
}

template <typename To>
__device__ typename To::S floatToInt(double d) {
  using S = typename To::S;
  if (isnan(d)) return 0;
  d = trunc(d);
  if constexpr (To::kCat == Cat::kUInt) {
    if (d <= 0) return 0;
    const double maxPlusOne =
        To::kBits == 64 ? 18446744073709551616.0 : static_cast<double>(uint64_t{1} << (To::kBits % 64));
    if (d >= maxPlusOne) return static_cast<S>(~uint64_t{0});
    return static_cast<S>(static_cast<uint64_t>(d));
  } else {
    const double lo = To::kBits == 64 ? -9223372036854775808.0 : -static_cast<double>(int64_t{1} << (To::kBits - 1));
    const double hiPlus1 = To::kBits == 64 ? 9223372036854775808.0 : static_cast<double>(int64_t{1} << (To::kBits - 1));
    if (d < lo) return static_cast<S>(To::kBits == 64 ? INT64_MIN : -(int64_t{1} << (To::kBits - 1)));
    if (d >= hiPlus1) return static_cast<S>(To::kBits == 64 ? INT64_MAX : (int64_t{1} << (To::kBits - 1)) - 1);
    return static_cast<S>(static_cast<int64_t>(d));
  }
}

template <typename From, typename To>
__device__ typename To::S convertOne(typename From::C x) {
  using S = typename To::S;
  if constexpr (To::kCat == Cat::kBool) {
    return x != typename From::C(0) ? 1 : 0;
  } else if constexpr (From::kCat == Cat::kBool) {
    return convertOne<SIntT<int64_t>, To>(x ? 1 : 0);
  } else if constexpr (To::kCat != Cat::kFloat) {
    if constexpr (From::kCat != Cat::kFloat) return static_cast<S>(x);  // wraps
    else return floatToInt<To>(static_cast<double>(x));
  } else if constexpr (std::is_same_v<To, NativeFloatT<float>> || std::is_same_v<To, NativeFloatT<double>>) {
    return static_cast<S>(x);  // one rounding, from any source
  } else {  // f16 / bf16 destination
    if constexpr (std::is_same_v<typename From::C, float>) return To::store(x);
    else return To::store(doubleToFloatRoundOdd(static_cast<double>(x)));
  }
}

template <typename From>
__global__ void convertKernel(const typename From::S* in, void* out, ElementType to, int64_t n) {
  switch (to) {
#define WF_CONVERT_CASE(E, Tr)                                                          \
  case ElementType::E: {                                                                \
    auto* o = static_cast<typename Tr::S*>(out);                                        \
    WF_GRID_STRIDE_LOOP(i, n) o[i] = convertOne<From, Tr>(From::load(in[i]));           \
    return;                                                                             \
  }
    WF_CONVERT_CASE(kI1, BoolT)
    WF_CONVERT_CASE(kSI8, SIntT<int8_t>)
    WF_CONVERT_CASE(kSI16, SIntT<int16_t>)
    WF_CONVERT_CASE(kSI32, SIntT<int32_t>)
    WF_CONVERT_CASE(kSI64, SIntT<int64_t>)
    WF_CONVERT_CASE(kUI8, UIntT<uint8_t>)
    WF_CONVERT_CASE(kUI16, UIntT<uint16_t>)
    WF_CONVERT_CASE(kUI32, UIntT<uint32_t>)
    WF_CONVERT_CASE(kUI64, UIntT<uint64_t>)
    WF_CONVERT_CASE(kF16, F16T)
    WF_CONVERT_CASE(kBF16, BF16T)
    WF_CONVERT_CASE(kF32, NativeFloatT<float>)
    WF_CONVERT_CASE(kF64, NativeFloatT<double>)
#undef WF_CONVERT_CASE
    default: return;
  }
}

// ---------------------------------------------------------------------------------------------
// Lowerings.

using Results = Expected<std::unique_ptr<OpKernel>>;

Status unsupportedType(const Operation& op, ElementType t) {
  return unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(t)));
}

// Operand i's view of the result shape; `contiguous` stays true only while every operand has
// exactly the result's shape.
template <int N>
Status buildMap(const Operation& op, const std::vector<int64_t>& outShape, IndexMap<N>& map, bool& contiguous) {
  if (outShape.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "rank " + std::to_string(outShape.size()) + " is over the CUDA kernels' limit");
  contiguous = true;
  map.rank = static_cast<int>(outShape.size());
  for (size_t d = 0; d < outShape.size(); ++d) map.dims[d] = outShape[d];
  for (int k = 0; k < N; ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(k)->type()));
    if (inShape != outShape) contiguous = false;
    if (!broadcastStrides(inShape, outShape, map.strides[k]))
      return invalidArgument(op.describe() + ": operand #" + std::to_string(k) + " of shape " +
                             op.operand(k)->type().toString() + " does not broadcast to the result");
  }
  return Status::ok();
}

bool unarySupported(UnOp op, Cat cat) {
  switch (op) {
    case UnOp::kAbs: return cat == Cat::kFloat || cat == Cat::kSInt;
    case UnOp::kNegate: return cat != Cat::kBool;
    case UnOp::kNot: return cat == Cat::kBool || cat == Cat::kSInt || cat == Cat::kUInt;
    case UnOp::kPopcnt: case UnOp::kClz: return cat == Cat::kSInt || cat == Cat::kUInt;
    case UnOp::kSign: return cat == Cat::kFloat || cat == Cat::kSInt;
    default: return cat == Cat::kFloat;
  }
}

bool binarySupported(BinOp op, Cat cat) {
  switch (op) {
    case BinOp::kAdd: case BinOp::kMul: case BinOp::kMax: case BinOp::kMin: return true;
    case BinOp::kSub: case BinOp::kDiv: case BinOp::kRem: case BinOp::kPow: return cat != Cat::kBool;
    case BinOp::kAtan2: return cat == Cat::kFloat;
    case BinOp::kAnd: case BinOp::kOr: case BinOp::kXor: return cat != Cat::kFloat;
    default: return cat == Cat::kSInt || cat == Cat::kUInt;
  }
}

Lowering unaryLowering(UnOp uop) {
  return [uop](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.operand(0)->type().elementType();
    if (op.result(0)->type().elementType() != et) return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const int64_t n = numElementsOf(shape);
    return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
      using Tr = decltype(tag);
      if (!unarySupported(uop, Tr::kCat)) return unsupportedType(op, et);
      return makeKernel([uop, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        unaryKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(uop, static_cast<const typename Tr::S*>(in[0]),
                                                                  static_cast<typename Tr::S*>(out[0]), n);
        WF_CUDA_CHECK_LAUNCH("unaryKernel");
        return Status::ok();
      });
    });
  };
}

Lowering floatPredicate(int which) {
  return [which](const Operation& op, LowerContext&) -> Results {
  const ElementType et = op.operand(0)->type().elementType();
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    if constexpr (Tr::kCat != Cat::kFloat) {
      return unsupportedType(op, et);
    } else {
      return makeKernel([which, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        isFiniteKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(which, static_cast<const typename Tr::S*>(in[0]),
                                                                     static_cast<uint8_t*>(out[0]), n);
        WF_CUDA_CHECK_LAUNCH("isFiniteKernel");
        return Status::ok();
      });
    }
  });
  };
}

Results lowerReducePrecision(const Operation& op, LowerContext&) {
  const ElementType et = op.operand(0)->type().elementType();
  if (op.result(0)->type().elementType() != et) return unsupportedType(op, et);
  WF_ASSIGN_OR_RETURN(const cpu::ReducePrecisionFormat format, cpu::reducePrecisionFormat(op));
  const int eb = format.exponentBits, mb = format.mantissaBits;
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    if constexpr (Tr::kCat != Cat::kFloat) {
      return unsupportedType(op, et);
    } else {
      return makeKernel([n, eb, mb](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
        if (n == 0) return Status::ok();
        reducePrecisionKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(
            static_cast<const typename Tr::S*>(in[0]), static_cast<typename Tr::S*>(out[0]), n, eb, mb);
        WF_CUDA_CHECK_LAUNCH("reducePrecisionKernel");
        return Status::ok();
      });
    }
  });
}

// real and imag of a real (non-complex) operand: the value itself, and zeros. Complex types are
// not GPU types.
Lowering realPartLowering(bool imaginary) {
  return [imaginary](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.operand(0)->type().elementType();
    if (!isFloat(et) || op.result(0)->type().elementType() != et) return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const size_t bytes = static_cast<size_t>(numElementsOf(shape)) * storageBytes(et);
    return makeKernel([imaginary, bytes](const LaunchContext& ctx, std::span<void* const> in,
                                         std::span<void* const> out) {
      if (bytes == 0) return Status::ok();
      if (imaginary) {
        WF_CUDA_CHECK(cudaMemsetAsync(out[0], 0, bytes, ctx.stream));  // +0.0 in every float type
      } else {
        WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], bytes, cudaMemcpyDeviceToDevice, ctx.stream));
      }
      return Status::ok();
    });
  };
}

Lowering binaryLowering(BinOp bop) {
  return [bop](const Operation& op, LowerContext&) -> Results {
    const ElementType et = op.result(0)->type().elementType();
    if (op.operand(0)->type().elementType() != et || op.operand(1)->type().elementType() != et)
      return unsupportedType(op, et);
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
    const int64_t n = numElementsOf(shape);
    IndexMap<2> map;
    bool contiguous = true;
    WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
    return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
      using Tr = decltype(tag);
      if (!binarySupported(bop, Tr::kCat)) return unsupportedType(op, et);
      return makeKernel([bop, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                   std::span<void* const> out) {
        if (n == 0) return Status::ok();
        using S = typename Tr::S;
        binaryKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(bop, static_cast<const S*>(in[0]),
                                                                   static_cast<const S*>(in[1]),
                                                                   static_cast<S*>(out[0]), n, contiguous, map);
        WF_CUDA_CHECK_LAUNCH("binaryKernel");
        return Status::ok();
      });
    });
  };
}

Results lowerCompare(const Operation& op, LowerContext&) {
  const ElementType et = op.operand(0)->type().elementType();
  if (op.operand(1)->type().elementType() != et) return unsupportedType(op, et);
  const Attribute* d = op.attr("comparison_direction");
  if (!d) return invalidArgument(op.describe() + ": missing comparison_direction");
  const std::string& s = d->stringValue();
  CmpDir dir;
  if (s == "EQ") dir = CmpDir::kEQ;
  else if (s == "NE") dir = CmpDir::kNE;
  else if (s == "GE") dir = CmpDir::kGE;
  else if (s == "GT") dir = CmpDir::kGT;
  else if (s == "LE") dir = CmpDir::kLE;
  else if (s == "LT") dir = CmpDir::kLT;
  else return invalidArgument(op.describe() + ": unknown comparison_direction '" + s + "'");
  bool totalOrder = false;
  if (const Attribute* t = op.attr("compare_type")) totalOrder = t->stringValue() == "TOTALORDER";
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<2> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([dir, totalOrder, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                             std::span<void* const> out) {
      if (n == 0) return Status::ok();
      using S = typename Tr::S;
      compareKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(dir, totalOrder, static_cast<const S*>(in[0]),
                                                                  static_cast<const S*>(in[1]),
                                                                  static_cast<uint8_t*>(out[0]), n, contiguous, map);
      WF_CUDA_CHECK_LAUNCH("compareKernel");
      return Status::ok();
    });
  });
}

Results lowerClamp(const Operation& op, LowerContext&) {
  const ElementType et = op.result(0)->type().elementType();
  for (size_t i = 0; i < 3; ++i)
    if (op.operand(i)->type().elementType() != et) return unsupportedType(op, et);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<3> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  return dispatchType(et, Results(unsupportedType(op, et)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                           std::span<void* const> out) {
      if (n == 0) return Status::ok();
      using S = typename Tr::S;
      clampKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const S*>(in[0]),
                                                                static_cast<const S*>(in[1]),
                                                                static_cast<const S*>(in[2]), static_cast<S*>(out[0]),
                                                                n, contiguous, map);
      WF_CUDA_CHECK_LAUNCH("clampKernel");
      return Status::ok();
    });
  });
}

template <typename S>
Status launchSelect(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out, int64_t n,
                    bool contiguous, const IndexMap<3>& map) {
  selectKernel<S><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const uint8_t*>(in[0]),
                                                            static_cast<const S*>(in[1]), static_cast<const S*>(in[2]),
                                                            static_cast<S*>(out[0]), n, contiguous, map);
  WF_CUDA_CHECK_LAUNCH("selectKernel");
  return Status::ok();
}

struct alignas(16) Bytes16 {
  uint64_t lo, hi;
};

Results lowerSelect(const Operation& op, LowerContext&) {
  const ElementType et = op.result(0)->type().elementType();
  if (op.operand(0)->type().elementType() != ElementType::kI1)
    return invalidArgument(op.describe() + ": predicate must be i1");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  IndexMap<3> map;
  bool contiguous = true;
  WF_RETURN_IF_ERROR(buildMap(op, shape, map, contiguous));
  const int bytes = storageBytes(et);
  if (et == ElementType::kQuantized) return unsupportedType(op, et);
  return makeKernel([bytes, n, contiguous, map](const LaunchContext& ctx, std::span<void* const> in,
                                                std::span<void* const> out) -> Status {
    if (n == 0) return Status::ok();
    switch (bytes) {
      case 1: return launchSelect<uint8_t>(ctx, in, out, n, contiguous, map);
      case 2: return launchSelect<uint16_t>(ctx, in, out, n, contiguous, map);
      case 4: return launchSelect<uint32_t>(ctx, in, out, n, contiguous, map);
      case 8: return launchSelect<uint64_t>(ctx, in, out, n, contiguous, map);
      case 16: return launchSelect<Bytes16>(ctx, in, out, n, contiguous, map);
      default: return internalError("select of " + std::to_string(bytes) + "-byte elements");
    }
  });
}

Results lowerConvert(const Operation& op, LowerContext&) {
  const ElementType from = op.operand(0)->type().elementType();
  const ElementType to = op.result(0)->type().elementType();
  if (!isGpuComputeType(to)) return unsupportedType(op, to);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  const int64_t n = numElementsOf(shape);
  return dispatchType(from, Results(unsupportedType(op, from)), [&](auto tag) -> Results {
    using Tr = decltype(tag);
    return makeKernel([to, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
      if (n == 0) return Status::ok();
      convertKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const typename Tr::S*>(in[0]), out[0],
                                                                  to, n);
      WF_CUDA_CHECK_LAUNCH("convertKernel");
      return Status::ok();
    });
  });
}

}  // namespace

void registerElementwiseLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::Abs, unaryLowering(UnOp::kAbs));
  r.add(OpCode::Negate, unaryLowering(UnOp::kNegate));
  r.add(OpCode::Not, unaryLowering(UnOp::kNot));
  r.add(OpCode::Exponential, unaryLowering(UnOp::kExp));
  r.add(OpCode::ExponentialMinusOne, unaryLowering(UnOp::kExpm1));
  r.add(OpCode::Log, unaryLowering(UnOp::kLog));
  r.add(OpCode::LogPlusOne, unaryLowering(UnOp::kLog1p));
  r.add(OpCode::Logistic, unaryLowering(UnOp::kLogistic));
  r.add(OpCode::Sqrt, unaryLowering(UnOp::kSqrt));
  r.add(OpCode::Rsqrt, unaryLowering(UnOp::kRsqrt));
  r.add(OpCode::Cbrt, unaryLowering(UnOp::kCbrt));
  r.add(OpCode::Sine, unaryLowering(UnOp::kSin));
  r.add(OpCode::Cosine, unaryLowering(UnOp::kCos));
  r.add(OpCode::Tan, unaryLowering(UnOp::kTan));
  r.add(OpCode::Tanh, unaryLowering(UnOp::kTanh));
  r.add(OpCode::Floor, unaryLowering(UnOp::kFloor));
  r.add(OpCode::Ceil, unaryLowering(UnOp::kCeil));
  r.add(OpCode::RoundNearestAfz, unaryLowering(UnOp::kRoundAfz));
  r.add(OpCode::RoundNearestEven, unaryLowering(UnOp::kRoundEven));
  r.add(OpCode::Sign, unaryLowering(UnOp::kSign));
  r.add(OpCode::Popcnt, unaryLowering(UnOp::kPopcnt));
  r.add(OpCode::CountLeadingZeros, unaryLowering(UnOp::kClz));
  r.add(OpCode::ReducePrecision, lowerReducePrecision);
  r.add(OpCode::Real, realPartLowering(false));
  r.add(OpCode::Imag, realPartLowering(true));
  r.add(OpCode::IsFinite, floatPredicate(2));
  r.add(OpCode::ChloIsInf, floatPredicate(0));
  r.add(OpCode::ChloIsPosInf, floatPredicate(1));
  r.add(OpCode::ChloIsNegInf, floatPredicate(-1));
  // chlo unary math (JAX and the exporter emit these; GELU uses chlo.erf).
  r.add(OpCode::ChloErf, unaryLowering(UnOp::kErf));
  r.add(OpCode::ChloErfc, unaryLowering(UnOp::kErfc));
  r.add(OpCode::ChloErfInv, unaryLowering(UnOp::kErfInv));
  r.add(OpCode::ChloCosh, unaryLowering(UnOp::kCosh));
  r.add(OpCode::ChloSinh, unaryLowering(UnOp::kSinh));
  r.add(OpCode::ChloTan, unaryLowering(UnOp::kTan));
  r.add(OpCode::ChloAsin, unaryLowering(UnOp::kAsin));
  r.add(OpCode::ChloAcos, unaryLowering(UnOp::kAcos));
  r.add(OpCode::ChloAtan, unaryLowering(UnOp::kAtan));
  r.add(OpCode::ChloAsinh, unaryLowering(UnOp::kAsinh));
  r.add(OpCode::ChloAcosh, unaryLowering(UnOp::kAcosh));
  r.add(OpCode::ChloAtanh, unaryLowering(UnOp::kAtanh));
  r.add(OpCode::ChloLgamma, unaryLowering(UnOp::kLgamma));
  r.add(OpCode::ChloSquare, unaryLowering(UnOp::kSquare));

  r.add(OpCode::Add, binaryLowering(BinOp::kAdd));
  r.add(OpCode::Subtract, binaryLowering(BinOp::kSub));
  r.add(OpCode::Multiply, binaryLowering(BinOp::kMul));
  r.add(OpCode::Divide, binaryLowering(BinOp::kDiv));
  r.add(OpCode::Remainder, binaryLowering(BinOp::kRem));
  r.add(OpCode::Maximum, binaryLowering(BinOp::kMax));
  r.add(OpCode::Minimum, binaryLowering(BinOp::kMin));
  r.add(OpCode::Power, binaryLowering(BinOp::kPow));
  r.add(OpCode::Atan2, binaryLowering(BinOp::kAtan2));
  r.add(OpCode::And, binaryLowering(BinOp::kAnd));
  r.add(OpCode::Or, binaryLowering(BinOp::kOr));
  r.add(OpCode::Xor, binaryLowering(BinOp::kXor));
  r.add(OpCode::ShiftLeft, binaryLowering(BinOp::kShl));
  r.add(OpCode::ShiftRightArithmetic, binaryLowering(BinOp::kShrA));
  r.add(OpCode::ShiftRightLogical, binaryLowering(BinOp::kShrL));
  r.add(OpCode::ChloMulhi, binaryLowering(BinOp::kMulHi));

  r.add(OpCode::Compare, lowerCompare);
  r.add(OpCode::Clamp, lowerClamp);
  r.add(OpCode::Select, lowerSelect);
  r.add(OpCode::Convert, lowerConvert);
}

}  // namespace wf::cuda
