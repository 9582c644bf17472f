// Element math: the meaning of every elementwise op on one element, written once for the CPU
// kernels, the precompiled CUDA kernels and the kernels NVRTC compiles at run time.
//
// Each op is a functor struct of static functions:
//   kCats                 the element categories it takes (kBool, kSInt, kUInt, kFloat)
//   kCheap                arithmetic (true) or a math-library call (false); sizes CPU work chunks
//   apply<Bits>(x[, y])   the result for operands of compute type T. Integers compute in T and
//                         wrap to T's width; Bits (0: all of T) is the element's own width when
//                         it is narrower than T (the CUDA kernels compute every integer in 64
//                         bits, the CPU stores si2/si4 in a byte). Narrow floats compute in
//                         float; callers round the result to their type.
// plus operator(), so a functor object also serves as a combiner (reductions).
//
// The header is plain C++ for host compilers (WF_HOST_DEVICE expands to nothing), __host__
// __device__ for nvcc, and self-contained under NVRTC (no standard headers there): the build embeds
// its text in the binary (cmake/embed_header.cmake) and nvrtc.cpp hands it to NVRTC under the same
// name, so generated kernels `#include "eval/element_math.h"` and call these functors.
//
// Where the host and the device spell the same math differently (bit casts, f16 conversion,
// popcount), the two branches give the same bits, with one exception kept from before: a NaN
// stored as bf16 becomes 0x7fff on the device (what the fused kernels always wrote) and keeps its
// sign and payload, quietened, on the host (what the CPU always wrote).
//
// Adding an elementwise op: write its functor here and add it to one of the op lists at the end.
// The CPU and CUDA backends register a kernel for every entry, and the fused-kernel generator
// calls the functor (float ops fuse; see fusion.cpp for integers).
#pragma once

#if defined(__CUDACC_RTC__)
typedef signed char int8_t;
typedef short int16_t;
typedef int int32_t;
typedef long long int64_t;
typedef unsigned char uint8_t;
typedef unsigned short uint16_t;
typedef unsigned int uint32_t;
typedef unsigned long long uint64_t;
#else
#include <bit>
#include <cmath>
#include <cstdint>
#if defined(__CUDACC__) || !defined(__FLT16_MAX__)
#include "ir/float_types.h"  // f16 conversions where the compiler has no _Float16
#endif
#endif

#ifndef WF_HOST_DEVICE
#if defined(__CUDACC__)
#define WF_HOST_DEVICE __host__ __device__
#else
#define WF_HOST_DEVICE
#endif
#endif

// Functors inline into every kernel loop (the loops vectorize on the CPU; a fused kernel must
// compile to what the expression written in place would).
#if defined(__CUDACC__)
#define WF_EM_FN WF_HOST_DEVICE __forceinline__
#else
#define WF_EM_FN inline __attribute__((always_inline))
#endif

// Device code (nvcc's device pass and NVRTC) calls CUDA's math and intrinsics.
#if defined(__CUDA_ARCH__)
#define WF_EM_DEVICE 1
#define WF_EM_UNROLL _Pragma("unroll")
#else
#define WF_EM_UNROLL
#endif

namespace wf::em {

// ---------------------------------------------------------------------------------------------
// Types.

enum : unsigned { kBool = 1, kSInt = 2, kUInt = 4, kFloat = 8, kInt = kSInt | kUInt, kAll = 15 };

template <typename T> inline constexpr bool kIsFloat = false;
template <> inline constexpr bool kIsFloat<float> = true;
template <> inline constexpr bool kIsFloat<double> = true;
template <typename T> inline constexpr bool kIsBool = false;
template <> inline constexpr bool kIsBool<bool> = true;
template <typename T> inline constexpr bool kIsSigned = T(-1) < T(0);

template <int Bytes> struct UnsignedOfSize;
template <> struct UnsignedOfSize<1> { using type = unsigned char; };
template <> struct UnsignedOfSize<2> { using type = unsigned short; };
template <> struct UnsignedOfSize<4> { using type = unsigned int; };
template <> struct UnsignedOfSize<8> { using type = unsigned long long; };
// The unsigned integer of T's width, and the type wrapping arithmetic on T runs in (at least
// unsigned int: a uint16 product promoted to int could overflow it).
template <typename T> using Unsigned = typename UnsignedOfSize<sizeof(T)>::type;
template <typename T> using Wrap = typename UnsignedOfSize<(sizeof(T) < 4 ? 4 : sizeof(T))>::type;

// An element's width in bits: Bits, or all of T.
template <int Bits, typename T> inline constexpr int kWidth = Bits ? Bits : int(8 * sizeof(T));

// The low kWidth bits of an integer, as T's unsigned type.
template <int Bits, typename T>
WF_EM_FN Unsigned<T> masked(T v) {
  using U = Unsigned<T>;
  U u = static_cast<U>(v);
  if constexpr (kWidth<Bits, T> < int(8 * sizeof(T))) u &= static_cast<U>((1ull << kWidth<Bits, T>) - 1);
  return u;
}

// ---------------------------------------------------------------------------------------------
// Bits of floats.

WF_EM_FN uint32_t floatBits(float f) {
#ifdef WF_EM_DEVICE
  return __float_as_uint(f);
#else
  return std::bit_cast<uint32_t>(f);
#endif
}
WF_EM_FN float bitsFloat(uint32_t u) {
#ifdef WF_EM_DEVICE
  return __uint_as_float(u);
#else
  return std::bit_cast<float>(u);
#endif
}
WF_EM_FN uint64_t doubleBits(double d) {
#ifdef WF_EM_DEVICE
  return static_cast<uint64_t>(__double_as_longlong(d));
#else
  return std::bit_cast<uint64_t>(d);
#endif
}
WF_EM_FN double bitsDouble(uint64_t u) {
#ifdef WF_EM_DEVICE
  return __longlong_as_double(static_cast<long long>(u));
#else
  return std::bit_cast<double>(u);
#endif
}

template <typename T>
WF_EM_FN bool isNan(T x) {
#ifdef WF_EM_DEVICE
  return isnan(x);
#else
  return std::isnan(x);
#endif
}
template <typename T>
WF_EM_FN bool isFinite(T x) {
#ifdef WF_EM_DEVICE
  return isfinite(x);
#else
  return std::isfinite(x);
#endif
}
template <typename T>
WF_EM_FN bool signBit(T x) {
#ifdef WF_EM_DEVICE
  return signbit(x);
#else
  return std::signbit(x);
#endif
}

// ---------------------------------------------------------------------------------------------
// Narrow floats: bf16 and f16 are stored as 16-bit patterns and computed in float.

WF_EM_FN float bf16Load(uint16_t s) { return bitsFloat(static_cast<uint32_t>(s) << 16); }
// Round to nearest even. NaN: see the top of the file.
WF_EM_FN uint16_t bf16Store(float f) {
#if defined(WF_EM_DEVICE) && __CUDA_ARCH__ >= 800
  // One instruction from sm_80 on, the same bits as the integer rounding below (NaN to 0x7fff,
  // subnormals kept, the largest finite values rounding up to infinity), for every bf16 kernel.
  // It counts where a fused kernel's arithmetic bounds it: BERT-large's bias + GELU kernel (69%
  // of the SMs' issue rate, 23% of DRAM's, on an H200) compiles to 576 SASS instructions for its
  // 8 elements per thread against 672 with the integer rounding.
  unsigned short h;
  asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(h) : "f"(f));
  return h;
#else
  uint32_t u = floatBits(f);
#ifdef WF_EM_DEVICE
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>(0x7fff);
#else
  if (std::isnan(f)) return static_cast<uint16_t>((u >> 16) | 0x0040);
#endif
  u += 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(u >> 16);
#endif
}
WF_EM_FN float bf16Round(float f) { return bf16Load(bf16Store(f)); }
// The bits of a float that already holds a bf16 value (NaN included): its upper half.
WF_EM_FN uint16_t bf16Bits(float f) { return static_cast<uint16_t>(floatBits(f) >> 16); }

// IEEE conversions, round to nearest even.
WF_EM_FN float f16Load(uint16_t s) {
#ifdef WF_EM_DEVICE
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(s));
  return f;
#elif defined(__FLT16_MAX__) && !defined(__CUDACC__)
  return static_cast<float>(std::bit_cast<_Float16>(s));
#else
  return f16ToFloat(s);
#endif
}
WF_EM_FN uint16_t f16Store(float f) {
#ifdef WF_EM_DEVICE
  uint16_t s;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(s) : "f"(f));
  return s;
#elif defined(__FLT16_MAX__) && !defined(__CUDACC__)
  return std::bit_cast<uint16_t>(static_cast<_Float16>(f));
#else
  return floatToF16(f);
#endif
}
WF_EM_FN float f16Round(float f) { return f16Load(f16Store(f)); }

// double -> float rounding to odd: a later float -> bf16/f16 rounding to nearest even then gives
// the correctly rounded double -> narrow result (float has more than 2p+1 bits for them).
WF_EM_FN float doubleToFloatRoundOdd(double d) {
  float f = static_cast<float>(d);
  if (!isFinite(d) || static_cast<double>(f) == d) return f;
#ifdef WF_EM_DEVICE
  if (fabs(static_cast<double>(f)) > fabs(d)) f = nextafterf(f, 0.0f);
  if (isinf(f)) return f;
#else
  if (std::fabs(static_cast<double>(f)) > std::fabs(d)) f = std::nextafter(f, 0.0f);
  if (std::isinf(f)) return f;
#endif
  return bitsFloat(floatBits(f) | 1u);
}

// 64-bit integer -> float rounding to odd, for the same reason: int -> bf16/f16 through a float
// (or a double, which rounds integers past 2^53) rounded to nearest would round twice.
WF_EM_FN float unsignedToFloatRoundOdd(uint64_t m) {
  if (m < (1ull << 24)) return static_cast<float>(m);  // exact
#ifdef WF_EM_DEVICE
  const int shift = 40 - __clzll(static_cast<long long>(m));  // bits below the 24 kept
#else
  const int shift = 40 - std::countl_zero(m);
#endif
  uint32_t kept = static_cast<uint32_t>(m >> shift);  // in [2^23, 2^24)
  if ((static_cast<uint64_t>(kept) << shift) != m) kept |= 1u;
  return bitsFloat((static_cast<uint32_t>(127 + 23 + shift) << 23) | (kept & 0x7fffffu));
}
WF_EM_FN float signedToFloatRoundOdd(int64_t x) {
  const uint64_t m = x < 0 ? 0ull - static_cast<uint64_t>(x) : static_cast<uint64_t>(x);
  const float f = unsignedToFloatRoundOdd(m);
  return x < 0 ? -f : f;
}

// float -> integer of Bits bits as stablehlo.convert: truncation toward zero, saturation to
// the range, NaN -> 0. The result is the integer's value in T (int64_t or uint64_t on the GPU).
template <int Bits, typename T>
WF_EM_FN T floatToInt(double d) {
  if (isNan(d)) return 0;
#ifdef WF_EM_DEVICE
  d = trunc(d);
#else
  d = std::trunc(d);
#endif
  if constexpr (!kIsSigned<T>) {
    if (d <= 0) return 0;
    const double maxPlusOne = Bits == 64 ? 18446744073709551616.0 : static_cast<double>(1ull << (Bits % 64));
    if (d >= maxPlusOne) return static_cast<T>(~0ull);
    return static_cast<T>(static_cast<unsigned long long>(d));
  } else {
    const double lo = Bits == 64 ? -9223372036854775808.0 : -static_cast<double>(1ll << (Bits - 1));
    const double hiPlus1 = Bits == 64 ? 9223372036854775808.0 : static_cast<double>(1ll << (Bits - 1));
    if (d < lo) return static_cast<T>(Bits == 64 ? (-9223372036854775807ll - 1) : -(1ll << (Bits - 1)));
    if (d >= hiPlus1) return static_cast<T>(Bits == 64 ? 9223372036854775807ll : (1ll << (Bits - 1)) - 1);
    return static_cast<T>(static_cast<long long>(d));
  }
}

// ---------------------------------------------------------------------------------------------
// Unary ops.

// operator() for a functor's apply at T's full width.
#define WF_EM_CALL1 \
  template <typename T> WF_EM_FN T operator()(T x) const { return apply(x); }
#define WF_EM_CALL2 \
  template <typename T> WF_EM_FN T operator()(T a, T b) const { return apply(a, b); }

// One math-library function of a float (ff) or a double (df).
#define WF_EM_FLOAT_MATH(Name, ff, df)                                  \
  struct Name {                                                         \
    static constexpr unsigned kCats = kFloat;                           \
    static constexpr bool kCheap = false;                               \
    template <int Bits = 0> WF_EM_FN static float apply(float x) { return ::ff(x); }   \
    template <int Bits = 0> WF_EM_FN static double apply(double x) { return ::df(x); } \
    WF_EM_CALL1                                                         \
  };

// exp of a float in float arithmetic: 2^n * exp(r) with n = round(x log2 e) and r = x - n ln2
// (Cody-Waite, ln2 in two parts) in [-ln2/2, ln2/2], Cephes's degree-6 polynomial for exp(r),
// and 2^n applied as two normal factors, so that a subnormal or overflowing result rounds once.
// Within 1 ulp of the exact value over every float (0.99 at worst, checked exhaustively; glibc's
// expf is within 0.502). Its loops vectorize, where a libm call per element does not: the
// CPU's softmax, attention and GELU gradient run it over whole activations.
WF_EM_FN float expF32(float x) {
  const float c = x < -104.0f ? -104.0f : (x > 89.0f ? 89.0f : x);  // beyond: 0 and inf
  const float kRound = 12582912.0f;  // 1.5 * 2^23: adding and subtracting it rounds to an integer
  const float n = (c * 1.44269504088896341f + kRound) - kRound;
  const float r = (c - n * 0.693359375f) - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  const float y = p * (r * r) + r + 1.0f;
  const int32_t ni = static_cast<int32_t>(n), n1 = ni >> 1, n2 = ni - n1;  // n in [-150, 129]
  const float e = y * bitsFloat(static_cast<uint32_t>(n1 + 127) << 23) * bitsFloat(static_cast<uint32_t>(n2 + 127) << 23);
  return x != x ? x : e;  // NaN
}

// exp: expF32 on the host; CUDA's expf (within 2 ulp) on the device.
struct Exp {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0> WF_EM_FN static float apply(float x) {
#ifdef WF_EM_DEVICE
    return ::expf(x);
#else
    return expF32(x);
#endif
  }
  template <int Bits = 0> WF_EM_FN static double apply(double x) { return ::exp(x); }
  WF_EM_CALL1
};
WF_EM_FLOAT_MATH(Expm1, expm1f, expm1)
WF_EM_FLOAT_MATH(Log, logf, log)
WF_EM_FLOAT_MATH(Log1p, log1pf, log1p)
WF_EM_FLOAT_MATH(Sqrt, sqrtf, sqrt)
WF_EM_FLOAT_MATH(Cbrt, cbrtf, cbrt)
WF_EM_FLOAT_MATH(Sin, sinf, sin)
WF_EM_FLOAT_MATH(Cos, cosf, cos)
WF_EM_FLOAT_MATH(Tan, tanf, tan)
WF_EM_FLOAT_MATH(Tanh, tanhf, tanh)
WF_EM_FLOAT_MATH(Erf, erff, erf)
WF_EM_FLOAT_MATH(Erfc, erfcf, erfc)
WF_EM_FLOAT_MATH(Cosh, coshf, cosh)
WF_EM_FLOAT_MATH(Sinh, sinhf, sinh)
WF_EM_FLOAT_MATH(Asin, asinf, asin)
WF_EM_FLOAT_MATH(Acos, acosf, acos)
WF_EM_FLOAT_MATH(Atan, atanf, atan)
WF_EM_FLOAT_MATH(Asinh, asinhf, asinh)
WF_EM_FLOAT_MATH(Acosh, acoshf, acosh)
WF_EM_FLOAT_MATH(Atanh, atanhf, atanh)
WF_EM_FLOAT_MATH(Lgamma, lgammaf, lgamma)
// CUDA's erfinv; host C++ has none (the CPU computes chlo.erf_inv in chlo.cpp).
struct ErfInv {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = false;
#if defined(__CUDACC__)
  template <int Bits = 0> WF_EM_FN static float apply(float x) { return ::erfinvf(x); }
  template <int Bits = 0> WF_EM_FN static double apply(double x) { return ::erfinv(x); }
  WF_EM_CALL1
#endif
};

// Rounding is exact, so these are cheap; round to nearest even is rint on the device and
// nearbyint on the host (the same value; nearbyint raises no inexact flag).
#define WF_EM_FLOAT_ROUND(Name, ff, df)                                 \
  struct Name {                                                         \
    static constexpr unsigned kCats = kFloat;                           \
    static constexpr bool kCheap = true;                                \
    template <int Bits = 0> WF_EM_FN static float apply(float x) { return ::ff(x); }   \
    template <int Bits = 0> WF_EM_FN static double apply(double x) { return ::df(x); } \
    WF_EM_CALL1                                                         \
  };
WF_EM_FLOAT_ROUND(Floor, floorf, floor)
WF_EM_FLOAT_ROUND(Ceil, ceilf, ceil)
WF_EM_FLOAT_ROUND(RoundAfz, roundf, round)
#ifdef WF_EM_DEVICE
WF_EM_FLOAT_ROUND(RoundEven, rintf, rint)
#else
WF_EM_FLOAT_ROUND(RoundEven, nearbyintf, nearbyint)
#endif
#undef WF_EM_FLOAT_ROUND

struct Logistic {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) { return T(1) / (T(1) + Exp::apply(-x)); }
  WF_EM_CALL1
};
struct Rsqrt {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) { return T(1) / Sqrt::apply(x); }
  WF_EM_CALL1
};
struct Square {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) { return x * x; }
  WF_EM_CALL1
};

struct Abs {
  static constexpr unsigned kCats = kSInt | kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
    if constexpr (kIsFloat<T>) {
      if constexpr (sizeof(T) == 4) return ::fabsf(x);
      else return ::fabs(x);
    } else if constexpr (kIsSigned<T>) {
      return x < T(0) ? static_cast<T>(Wrap<T>(0) - static_cast<Wrap<T>>(x)) : x;
    } else {
      return x;
    }
  }
  WF_EM_CALL1
};
struct Negate {
  static constexpr unsigned kCats = kInt | kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
    if constexpr (kIsFloat<T>) return -x;
    else return static_cast<T>(Wrap<T>(0) - static_cast<Wrap<T>>(x));
  }
  WF_EM_CALL1
};
struct Not {
  static constexpr unsigned kCats = kBool | kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
    if constexpr (kIsBool<T>) return !x;
    else return static_cast<T>(~static_cast<Wrap<T>>(x));
  }
  WF_EM_CALL1
};
struct Sign {
  static constexpr unsigned kCats = kSInt | kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
    if constexpr (kIsFloat<T>) {
      if (isNan(x) || x == T(0)) return x;
      return x > T(0) ? T(1) : T(-1);
    } else if constexpr (kIsSigned<T>) {
      return static_cast<T>((x > T(0)) - (x < T(0)));
    } else {
      return static_cast<T>(x > T(0));
    }
  }
  WF_EM_CALL1
};
struct Popcnt {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
#ifdef WF_EM_DEVICE
    return static_cast<T>(__popcll(static_cast<unsigned long long>(masked<Bits>(x))));
#else
    return static_cast<T>(std::popcount(masked<Bits>(x)));
#endif
  }
  WF_EM_CALL1
};
struct Clz {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T x) {
#ifdef WF_EM_DEVICE
    return static_cast<T>(__clzll(static_cast<long long>(masked<Bits>(x))) - (64 - kWidth<Bits, T>));
#else
    return static_cast<T>(std::countl_zero(masked<Bits>(x)) - (int(8 * sizeof(T)) - kWidth<Bits, T>));
#endif
  }
  WF_EM_CALL1
};

// ---------------------------------------------------------------------------------------------
// Binary ops.

struct Add {
  static constexpr unsigned kCats = kAll;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a || b;
    else if constexpr (kIsFloat<T>) return a + b;
    else return static_cast<T>(static_cast<Wrap<T>>(a) + static_cast<Wrap<T>>(b));
  }
  WF_EM_CALL2
};
struct Sub {
  static constexpr unsigned kCats = kInt | kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) return a - b;
    else return static_cast<T>(static_cast<Wrap<T>>(a) - static_cast<Wrap<T>>(b));
  }
  WF_EM_CALL2
};
struct Mul {
  static constexpr unsigned kCats = kAll;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a && b;
    else if constexpr (kIsFloat<T>) return a * b;
    else return static_cast<T>(static_cast<Wrap<T>>(a) * static_cast<Wrap<T>>(b));
  }
  WF_EM_CALL2
};
// Integer x/0 and x%0 follow XLA: x/0 = -1 (all ones), x%0 = x; INT_MIN/-1 = INT_MIN,
// INT_MIN%-1 = 0.
struct Div {
  static constexpr unsigned kCats = kInt | kFloat;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      return a / b;
    } else {
      if (b == T(0)) return static_cast<T>(~0ull);
      if constexpr (kIsSigned<T>) {
        if (b == T(-1)) return Negate::apply(a);
      }
      return static_cast<T>(a / b);
    }
  }
  WF_EM_CALL2
};
struct Rem {
  static constexpr unsigned kCats = kInt | kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      if constexpr (sizeof(T) == 4) return ::fmodf(a, b);
      else return ::fmod(a, b);
    } else {
      if (b == T(0)) return a;
      if constexpr (kIsSigned<T>) {
        if (b == T(-1)) return T(0);
      }
      return static_cast<T>(a % b);
    }
  }
  WF_EM_CALL2
};
// IEEE-754 maximum/minimum for floats: NaN propagates, -0 < +0.
struct Max {
  static constexpr unsigned kCats = kAll;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) {
      return a || b;
    } else if constexpr (kIsFloat<T>) {
      if (isNan(a) || isNan(b)) return a + b;
      if (a == b) return signBit(a) ? b : a;
      return a > b ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
  WF_EM_CALL2
};
struct Min {
  static constexpr unsigned kCats = kAll;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) {
      return a && b;
    } else if constexpr (kIsFloat<T>) {
      if (isNan(a) || isNan(b)) return a + b;
      if (a == b) return signBit(a) ? a : b;
      return a < b ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
  WF_EM_CALL2
};
struct Pow {
  static constexpr unsigned kCats = kInt | kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsFloat<T>) {
      if constexpr (sizeof(T) == 4) return ::powf(a, b);
      else return ::pow(a, b);
    } else {
      if constexpr (kIsSigned<T>) {
        // Negative exponents: only |base| = 1 gives a non-zero integer result.
        if (b < T(0)) {
          if (a == T(1)) return T(1);
          if (a == T(-1)) return (b & T(1)) ? T(-1) : T(1);
          return T(0);
        }
      }
      Wrap<T> result = 1, base = static_cast<Wrap<T>>(a);
      for (Unsigned<T> e = static_cast<Unsigned<T>>(b); e != 0; e >>= 1) {
        if (e & 1) result *= base;
        base *= base;
      }
      return static_cast<T>(result);
    }
  }
  WF_EM_CALL2
};
struct Atan2 {
  static constexpr unsigned kCats = kFloat;
  static constexpr bool kCheap = false;
  template <int Bits = 0> WF_EM_FN static float apply(float y, float x) { return ::atan2f(y, x); }
  template <int Bits = 0> WF_EM_FN static double apply(double y, double x) { return ::atan2(y, x); }
  WF_EM_CALL2
};
struct And {
  static constexpr unsigned kCats = kBool | kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a && b;
    else return static_cast<T>(a & b);
  }
  WF_EM_CALL2
};
struct Or {
  static constexpr unsigned kCats = kBool | kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a || b;
    else return static_cast<T>(a | b);
  }
  WF_EM_CALL2
};
struct Xor {
  static constexpr unsigned kCats = kBool | kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kIsBool<T>) return a != b;
    else return static_cast<T>(a ^ b);
  }
  WF_EM_CALL2
};

// Shift amounts are read as unsigned; amounts >= the element's width shift everything out.
template <int Bits, typename T>
WF_EM_FN bool shiftOutOfRange(T s) {
  if constexpr (kIsSigned<T>) {
    if (s < T(0)) return true;
  }
  return static_cast<unsigned long long>(s) >= static_cast<unsigned long long>(kWidth<Bits, T>);
}
struct ShiftLeft {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T s) {
    if (shiftOutOfRange<Bits>(s)) return T(0);
    return static_cast<T>(static_cast<Wrap<T>>(masked<Bits>(a)) << s);
  }
  WF_EM_CALL2
};
struct ShiftRightLogical {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T s) {
    if (shiftOutOfRange<Bits>(s)) return T(0);
    return static_cast<T>(static_cast<Wrap<T>>(masked<Bits>(a)) >> s);
  }
  WF_EM_CALL2
};
struct ShiftRightArithmetic {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T s) {
    // Sign-extend from the element's width (unsigned types shift in their top bit too).
    constexpr int sh = 64 - kWidth<Bits, T>;
    const long long v = static_cast<long long>(static_cast<unsigned long long>(masked<Bits>(a)) << sh) >> sh;
    if (shiftOutOfRange<Bits>(s)) return static_cast<T>(v < 0 ? -1 : 0);
    return static_cast<T>(v >> s);
  }
  WF_EM_CALL2
};
// chlo.mulhi: the high half of the double-width product. Below 64 bits the operands hold their
// values sign- or zero-extended, so the whole product fits in 64 bits.
struct MulHi {
  static constexpr unsigned kCats = kInt;
  static constexpr bool kCheap = true;
  template <int Bits = 0, typename T> WF_EM_FN static T apply(T a, T b) {
    if constexpr (kWidth<Bits, T> == 64) {
#ifdef WF_EM_DEVICE
      if constexpr (kIsSigned<T>) return static_cast<T>(__mul64hi(static_cast<long long>(a), static_cast<long long>(b)));
      else return static_cast<T>(__umul64hi(static_cast<unsigned long long>(a), static_cast<unsigned long long>(b)));
#else
      using W = __int128;
      using UW = unsigned __int128;
      if constexpr (kIsSigned<T>) return static_cast<T>((static_cast<W>(a) * static_cast<W>(b)) >> 64);
      else return static_cast<T>((static_cast<UW>(a) * static_cast<UW>(b)) >> 64);
#endif
    } else {
      if constexpr (kIsSigned<T>) return static_cast<T>((static_cast<long long>(a) * static_cast<long long>(b)) >> kWidth<Bits, T>);
      else return static_cast<T>((static_cast<unsigned long long>(a) * static_cast<unsigned long long>(b)) >> kWidth<Bits, T>);
    }
  }
  WF_EM_CALL2
};

// ---------------------------------------------------------------------------------------------
// Comparisons.

enum class CmpDir : uint8_t { kEQ, kNE, kGE, kGT, kLE, kLT };

#define WF_EM_COMPARE(Name, op)                                                     \
  struct Name {                                                                     \
    template <int Bits = 0, typename T> WF_EM_FN static bool apply(T a, T b) { return a op b; } \
  };
WF_EM_COMPARE(CompareEQ, ==)
WF_EM_COMPARE(CompareNE, !=)
WF_EM_COMPARE(CompareGE, >=)
WF_EM_COMPARE(CompareGT, >)
WF_EM_COMPARE(CompareLE, <=)
WF_EM_COMPARE(CompareLT, <)
#undef WF_EM_COMPARE

template <typename T>
WF_EM_FN bool compare(CmpDir dir, T a, T b) {
  switch (dir) {
    case CmpDir::kEQ: return CompareEQ::apply(a, b);
    case CmpDir::kNE: return CompareNE::apply(a, b);
    case CmpDir::kGE: return CompareGE::apply(a, b);
    case CmpDir::kGT: return CompareGT::apply(a, b);
    case CmpDir::kLE: return CompareLE::apply(a, b);
    case CmpDir::kLT: return CompareLT::apply(a, b);
  }
  return false;
}

// IEEE totalOrder as a signed key: -NaN < -inf < ... < -0 < +0 < ... < +inf < +NaN.
WF_EM_FN int64_t totalOrderKey(double d) {
  const auto k = static_cast<int64_t>(doubleBits(d));
  return k < 0 ? (k ^ 0x7fffffffffffffffll) : k;
}
WF_EM_FN int32_t totalOrderKey(float f) {
  const auto k = static_cast<int32_t>(floatBits(f));
  return k < 0 ? (k ^ 0x7fffffff) : k;
}

// ---------------------------------------------------------------------------------------------
// rng_bit_generator's generators, as XLA computes them.

WF_EM_FN uint32_t rotl32(uint32_t v, int d) { return (v << d) | (v >> (32 - d)); }

// Threefry2x32 with 20 rounds (Salmon et al., SC 2011).
WF_EM_FN void threeFry2x32(uint32_t k0, uint32_t k1, uint32_t& x0, uint32_t& x1) {
  const int rotations[8] = {13, 15, 26, 6, 17, 29, 16, 24};
  const uint32_t ks[3] = {k0, k1, 0x1BD11BDAu ^ k0 ^ k1};
  x0 += ks[0];
  x1 += ks[1];
  WF_EM_UNROLL
  for (int block = 0; block < 5; ++block) {
    WF_EM_UNROLL
    for (int r = 0; r < 4; ++r) {
      x0 += x1;
      x1 = rotl32(x1, rotations[(block % 2) * 4 + r]);
      x1 ^= x0;
    }
    x0 += ks[(block + 1) % 3];
    x1 += ks[(block + 2) % 3] + static_cast<uint32_t>(block + 1);
  }
}

// ThreeFry's layout of a shaped u32 output (XLA's): one block's two words fill the two halves
// of one dim, the first even-sized one, else the largest; the counter runs over the half shape.
WF_EM_FN int threeFrySplitDim(const int64_t* shape, int rank) {
  for (int i = 0; i < rank; ++i)
    if (shape[i] % 2 == 0) return i;
  int largest = 0;
  for (int i = 1; i < rank; ++i)
    if (shape[i] > shape[largest]) largest = i;
  return largest;
}

// Philox4x32 with 10 rounds.
WF_EM_FN void philox4x32(uint32_t key0, uint32_t key1, uint32_t x[4]) {
  constexpr uint32_t kW32A = 0x9E3779B9u, kW32B = 0xBB67AE85u;
  constexpr uint64_t kM4x32A = 0xD2511F53u, kM4x32B = 0xCD9E8D57u;
  WF_EM_UNROLL
  for (int round = 0; round < 10; ++round) {
    const uint64_t p0 = x[0] * kM4x32A;
    const uint64_t p1 = x[2] * kM4x32B;
    const uint32_t n0 = static_cast<uint32_t>(p1 >> 32) ^ x[1] ^ key0;
    const uint32_t n1 = static_cast<uint32_t>(p1);
    const uint32_t n2 = static_cast<uint32_t>(p0 >> 32) ^ x[3] ^ key1;
    const uint32_t n3 = static_cast<uint32_t>(p0);
    x[0] = n0, x[1] = n1, x[2] = n2, x[3] = n3;
    key0 += kW32A;
    key1 += kW32B;
  }
}

#undef WF_EM_CALL1
#undef WF_EM_CALL2
#undef WF_EM_FLOAT_MATH

}  // namespace wf::em

// ---------------------------------------------------------------------------------------------
// The elementwise ops whose whole meaning is a functor above: X(OpCode name in ir/ops.def,
// functor). Every backend registers a kernel for each entry (the CPU through its own kernels
// where it computes more types, such as complex numbers).
#define WF_EM_UNARY_OPS(X)                                                                       \
  X(Abs, Abs) X(Negate, Negate) X(Not, Not) X(Exponential, Exp) X(ExponentialMinusOne, Expm1)     \
  X(Log, Log) X(LogPlusOne, Log1p) X(Logistic, Logistic) X(Sqrt, Sqrt) X(Rsqrt, Rsqrt)            \
  X(Cbrt, Cbrt) X(Sine, Sin) X(Cosine, Cos) X(Tan, Tan) X(Tanh, Tanh) X(Floor, Floor)             \
  X(Ceil, Ceil) X(RoundNearestAfz, RoundAfz) X(RoundNearestEven, RoundEven) X(Sign, Sign)         \
  X(Popcnt, Popcnt) X(CountLeadingZeros, Clz)
#define WF_EM_BINARY_OPS(X)                                                                      \
  X(Add, Add) X(Subtract, Sub) X(Multiply, Mul) X(Divide, Div) X(Remainder, Rem) X(Maximum, Max) \
  X(Minimum, Min) X(Power, Pow) X(Atan2, Atan2) X(And, And) X(Or, Or) X(Xor, Xor)                 \
  X(ShiftLeft, ShiftLeft) X(ShiftRightArithmetic, ShiftRightArithmetic)                          \
  X(ShiftRightLogical, ShiftRightLogical)
// chlo ops: the CUDA kernels use these functors; the CPU computes them in double (chlo.cpp).
#define WF_EM_CHLO_UNARY_OPS(X)                                                                  \
  X(ChloErf, Erf) X(ChloErfc, Erfc) X(ChloErfInv, ErfInv) X(ChloCosh, Cosh) X(ChloSinh, Sinh)     \
  X(ChloTan, Tan) X(ChloAsin, Asin) X(ChloAcos, Acos) X(ChloAtan, Atan) X(ChloAsinh, Asinh)       \
  X(ChloAcosh, Acosh) X(ChloAtanh, Atanh) X(ChloLgamma, Lgamma) X(ChloSquare, Square)
#define WF_EM_CHLO_BINARY_OPS(X) X(ChloMulhi, MulHi)
