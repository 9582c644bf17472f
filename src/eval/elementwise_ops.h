// Shared machinery of the CPU elementwise kernels (elementwise.cpp, elementwise_convert.cpp,
// chlo.cpp): per-element-type traits, one-switch type dispatch, and parallel typed loops.
//
// Every element type has a Traits class:
//   S      storage type in a Literal (see literal.h)
//   C      compute type: the storage int for integers, float for bf16/f16/f4/f6/f8, the
//          native type for f32/f64, std::complex for complex types, bool for i1
//   kCat   category (bool, signed int, unsigned int, float, complex)
//   kBits  the element's bit width (2 for si2, even though it is stored in a byte)
//   load(S) -> C, store(C) -> S: store wraps sub-byte integers to their width and rounds
//          narrow floats to nearest even.
// Kernels are templates over Traits, instantiated once per element type through dispatch(),
// so the inner loops are tight typed loops the compiler can vectorize.
#pragma once

#include <bit>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>

#include "eval/interpreter.h"
#include "eval/element_math.h"
#include "ir/literal.h"
#include "ir/float_types.h"
#include "support/status.h"
#include "support/thread_pool.h"

namespace wf::ew {

enum class Cat { kBool, kSInt, kUInt, kFloat, kComplex };

// bf16 and f16 <-> float inline, so narrow-float loops vectorize; double -> float rounding to
// odd before a narrow rounding (the conversions of eval/element_math.h).
using em::bf16Load;
using em::bf16Store;
using em::doubleToFloatRoundOdd;
using em::f16Load;
using em::f16Store;

template <typename S_, int Bits>
struct SIntTraits {
  using S = S_;
  using C = S_;
  static constexpr Cat kCat = Cat::kSInt;
  static constexpr int kBits = Bits;
  static C load(S s) { return s; }
  static S store(C c) {
    if constexpr (Bits < 8 * static_cast<int>(sizeof(S))) {
      // Sign-extend from Bits (storage keeps sub-byte signed ints sign-extended).
      constexpr int sh = 8 * static_cast<int>(sizeof(S)) - Bits;
      using U = std::make_unsigned_t<S>;
      return static_cast<S>(static_cast<S>(static_cast<U>(c) << sh) >> sh);
    } else {
      return c;
    }
  }
};

template <typename S_, int Bits>
struct UIntTraits {
  using S = S_;
  using C = S_;
  static constexpr Cat kCat = Cat::kUInt;
  static constexpr int kBits = Bits;
  static C load(S s) { return s; }
  static S store(C c) {
    if constexpr (Bits < 8 * static_cast<int>(sizeof(S))) {
      return static_cast<S>(c & ((1u << Bits) - 1));
    } else {
      return c;
    }
  }
};

struct BoolTraits {
  using S = uint8_t;
  using C = bool;
  static constexpr Cat kCat = Cat::kBool;
  static constexpr int kBits = 1;
  static C load(S s) { return s != 0; }
  static S store(C c) { return c ? 1 : 0; }
};

template <typename T>
struct NativeFloatTraits {
  using S = T;
  using C = T;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 8 * sizeof(T);
  static C load(S s) { return s; }
  static S store(C c) { return c; }
  static S storeDouble(double d) { return static_cast<T>(d); }
};

struct Bf16Traits {
  using S = uint16_t;
  using C = float;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 16;
  static C load(S s) { return bf16Load(s); }
  static S store(C c) { return bf16Store(c); }
  static S storeDouble(double d) { return bf16Store(doubleToFloatRoundOdd(d)); }
};

struct F16Traits {
  using S = uint16_t;
  using C = float;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 16;
  static C load(S s) { return f16Load(s); }
  static S store(C c) { return f16Store(c); }
  static S storeDouble(double d) { return f16Store(doubleToFloatRoundOdd(d)); }
};

template <ElementType E, int Bits>
struct MiniFloatTraits {
  using S = uint8_t;
  using C = float;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = Bits;
  static C load(S s) { return static_cast<float>(minifloatToDouble(E, s)); }
  static S store(C c) { return doubleToMinifloat(E, static_cast<double>(c)); }
  static S storeDouble(double d) { return doubleToMinifloat(E, d); }
};

template <typename T>
struct ComplexTraits {
  using S = std::complex<T>;
  using C = std::complex<T>;
  using Part = T;
  static constexpr Cat kCat = Cat::kComplex;
  static constexpr int kBits = 16 * sizeof(T);
  static C load(S s) { return s; }
  static S store(C c) { return c; }
};

// ElementType -> Traits.
template <ElementType E>
struct TraitsOf;
#define WF_EW_TRAITS(E, ...)   \
  template <>                  \
  struct TraitsOf<ElementType::E> { using type = __VA_ARGS__; };
WF_EW_TRAITS(kI1, BoolTraits)
WF_EW_TRAITS(kSI2, SIntTraits<int8_t, 2>)
WF_EW_TRAITS(kSI4, SIntTraits<int8_t, 4>)
WF_EW_TRAITS(kSI8, SIntTraits<int8_t, 8>)
WF_EW_TRAITS(kSI16, SIntTraits<int16_t, 16>)
WF_EW_TRAITS(kSI32, SIntTraits<int32_t, 32>)
WF_EW_TRAITS(kSI64, SIntTraits<int64_t, 64>)
WF_EW_TRAITS(kIndex, SIntTraits<int64_t, 64>)
WF_EW_TRAITS(kUI2, UIntTraits<uint8_t, 2>)
WF_EW_TRAITS(kUI4, UIntTraits<uint8_t, 4>)
WF_EW_TRAITS(kUI8, UIntTraits<uint8_t, 8>)
WF_EW_TRAITS(kUI16, UIntTraits<uint16_t, 16>)
WF_EW_TRAITS(kUI32, UIntTraits<uint32_t, 32>)
WF_EW_TRAITS(kUI64, UIntTraits<uint64_t, 64>)
WF_EW_TRAITS(kF4E2M1FN, MiniFloatTraits<ElementType::kF4E2M1FN, 4>)
WF_EW_TRAITS(kF6E2M3FN, MiniFloatTraits<ElementType::kF6E2M3FN, 6>)
WF_EW_TRAITS(kF6E3M2FN, MiniFloatTraits<ElementType::kF6E3M2FN, 6>)
WF_EW_TRAITS(kF8E3M4, MiniFloatTraits<ElementType::kF8E3M4, 8>)
WF_EW_TRAITS(kF8E4M3, MiniFloatTraits<ElementType::kF8E4M3, 8>)
WF_EW_TRAITS(kF8E4M3FN, MiniFloatTraits<ElementType::kF8E4M3FN, 8>)
WF_EW_TRAITS(kF8E4M3FNUZ, MiniFloatTraits<ElementType::kF8E4M3FNUZ, 8>)
WF_EW_TRAITS(kF8E4M3B11FNUZ, MiniFloatTraits<ElementType::kF8E4M3B11FNUZ, 8>)
WF_EW_TRAITS(kF8E5M2, MiniFloatTraits<ElementType::kF8E5M2, 8>)
WF_EW_TRAITS(kF8E5M2FNUZ, MiniFloatTraits<ElementType::kF8E5M2FNUZ, 8>)
WF_EW_TRAITS(kF8E8M0FNU, MiniFloatTraits<ElementType::kF8E8M0FNU, 8>)
WF_EW_TRAITS(kBF16, Bf16Traits)
WF_EW_TRAITS(kF16, F16Traits)
WF_EW_TRAITS(kF32, NativeFloatTraits<float>)
WF_EW_TRAITS(kF64, NativeFloatTraits<double>)
WF_EW_TRAITS(kComplexF32, ComplexTraits<float>)
WF_EW_TRAITS(kComplexF64, ComplexTraits<double>)
#undef WF_EW_TRAITS

template <typename T>
struct IsMiniFloat : std::false_type {};
template <ElementType E, int Bits>
struct IsMiniFloat<MiniFloatTraits<E, Bits>> : std::true_type {};

// Calls f(Traits{}) for the traits of `t`. Every call must return the same type R;
// quantized types (not computed) get `fallback`. With kMini = false the f4/f6/f8 types are
// not instantiated (they get `fallback` too): kernels that compute those through f32 (see
// widenMinifloat) use that to keep code size and compile time down.
template <bool kMini = true, typename R, typename F>
R dispatch(ElementType t, R fallback, F&& f) {
  switch (t) {
#define WF_EW_CASE(e, name, bytes, bits)                                            \
  case ElementType::e:                                                              \
    if constexpr (kMini || !IsMiniFloat<typename TraitsOf<ElementType::e>::type>::value) \
      return f(typename TraitsOf<ElementType::e>::type{});                          \
    else                                                                            \
      return fallback;
    WF_ELEMENT_TYPES(WF_EW_CASE)
#undef WF_EW_CASE
    default:
      return fallback;
  }
}

template <typename T>
constexpr bool isFloatT = T::kCat == Cat::kFloat;
template <typename T>
constexpr bool isComplexT = T::kCat == Cat::kComplex;
template <typename T>
constexpr bool isIntT = T::kCat == Cat::kSInt || T::kCat == Cat::kUInt;
template <typename T>
constexpr bool isBoolT = T::kCat == Cat::kBool;

// Broadcasts folded into elementwise arithmetic: an f32 `broadcast_in_dim` (static shapes) whose
// result only feeds add / subtract / multiply / divide / maximum / minimum (top-level ops of its
// block, no hook observing results) is not materialized. Its kernel returns the operand's
// storage typed with the broadcast shape, and those binary kernels read it through broadcast
// strides (elementwise.cpp). Bias adds, normalisations and ReLU's zero tensor are all such
// broadcasts; they stop costing a full-size write and read each.
bool broadcastFoldsIntoElementwise(const Operation& broadcastOp, const EvalContext& ctx);

// chlo.erf in f32 arithmetic (chlo.cpp, and the CPU plan's fused loops): the rational
// approximation on [-4, 4] that Eigen and XLA use for f32
// (beyond 4, erf is +-1 in f32), within a few ulp of the correctly rounded value. The loop over
// it vectorizes, unlike a libm call per element; GELU layers run it over whole activations.
inline float erfF32(float x) {
  float c = x < -4.0f ? -4.0f : (x > 4.0f ? 4.0f : x);  // NaN stays NaN
  float x2 = c * c;
  float p = x2 * -2.72614225801306e-10f + 2.77068142495902e-08f;
  p = x2 * p + -2.10102402082508e-06f;
  p = x2 * p + -5.69250639462346e-05f;
  p = x2 * p + -7.34990630326855e-04f;
  p = x2 * p + -2.95459980854025e-03f;
  p = x2 * p + -1.60960333262415e-02f;
  float q = x2 * -1.45660718464996e-05f + -2.13374055278905e-04f;
  q = x2 * q + -1.68282697438203e-03f;
  q = x2 * q + -7.37332916720468e-03f;
  q = x2 * q + -1.42647390514189e-02f;
  return c * p / q;
}

// Marks an elementwise loop (independent iterations, distinct output buffer) for vectorization.
// The build's -O2 cost model declines loops that need a run-time aliasing check, which is
// every loop here; with OpenMP, `omp simd` asserts there is no dependence.
#if defined(_OPENMP)
#define WF_SIMD _Pragma("omp simd")
#else
#define WF_SIMD
#endif

// Elements per parallel chunk: cheap arithmetic wants big chunks, transcendental ops smaller.
inline constexpr int64_t kCheapGrain = 1 << 15;
inline constexpr int64_t kMathGrain = 1 << 12;

// out[i] = TO::store(f(TI::load(in[i]))) over all elements, in parallel chunks.
template <typename TI, typename TO, typename F>
void mapUnary(const Literal& in, Literal& out, int64_t grain, F f) {
  const auto* a = in.dataAs<typename TI::S>();
  auto* o = out.dataAs<typename TO::S>();
  parallelFor(in.numElements(), grain, [&](int64_t b, int64_t e) {
    // Locals, not the closure's fields: a store through o could alias those, which stops the
    // loop from vectorizing.
    const auto* __restrict src = a;
    auto* __restrict dst = o;
    const F fn = f;
    WF_SIMD
    for (int64_t i = b; i < e; ++i) dst[i] = TO::store(fn(TI::load(src[i])));
  });
}

// out[i] = TO::store(f(TI::load(x[i]), TI::load(y[i]))); a one-element operand broadcasts
// (chlo and clamp/select use that), everything else must have out's element count.
template <typename TI, typename TO, typename F>
void mapBinary(const Literal& x, const Literal& y, Literal& out, int64_t grain, F f) {
  const auto* a = x.dataAs<typename TI::S>();
  const auto* b = y.dataAs<typename TI::S>();
  auto* o = out.dataAs<typename TO::S>();
  const int64_t n = out.numElements();
  const bool aScalar = x.numElements() == 1 && n != 1;
  const bool bScalar = y.numElements() == 1 && n != 1;
  parallelFor(n, grain, [&](int64_t s, int64_t e) {
    const auto* __restrict x0 = a;
    const auto* __restrict y0 = b;
    auto* __restrict dst = o;
    const F fn = f;
    if (!aScalar && !bScalar) {
      WF_SIMD
      for (int64_t i = s; i < e; ++i) dst[i] = TO::store(fn(TI::load(x0[i]), TI::load(y0[i])));
    } else if (aScalar && !bScalar) {
      const auto av = TI::load(x0[0]);
      WF_SIMD
      for (int64_t i = s; i < e; ++i) dst[i] = TO::store(fn(av, TI::load(y0[i])));
    } else if (!aScalar) {
      const auto bv = TI::load(y0[0]);
      WF_SIMD
      for (int64_t i = s; i < e; ++i) dst[i] = TO::store(fn(TI::load(x0[i]), bv));
    } else {
      const auto v = TO::store(fn(TI::load(x0[0]), TI::load(y0[0])));
      for (int64_t i = s; i < e; ++i) dst[i] = v;
    }
  });
}

// The result type of an elementwise op: the declared element type, the runtime shape.
inline Type resultType(const Operation& op, size_t i, const std::vector<int64_t>& shape) {
  return Type::tensor(shape, op.result(i)->type().elementType());
}

inline Status unsupportedType(const Operation& op, ElementType t) {
  return invalidArgument(op.describe() + ": element type " + std::string(elementTypeName(t)) +
                         " is not supported by this op");
}

// Wrapping integer multiplication (two's complement, no UB).
template <typename C>
C wrapMul(C a, C b) {
  return em::Mul::apply(a, b);
}

// A comparison direction and type, parsed once per op.
using CmpDir = em::CmpDir;
enum class CmpType { kDefault, kFloat, kTotalOrder, kSigned, kUnsigned };
Status parseComparison(const Operation& op, CmpDir* dir, CmpType* type);
// lhs `dir` rhs for every element; `out` is i1 of the same element count. Operands with one
// element broadcast.
Status compareKernel(const Operation& op, const Literal& lhs, const Literal& rhs, CmpDir dir, CmpType type,
                     Literal& out);

// Elementwise binary kernels by opcode (shared with the chlo.broadcast_* ops): operands have
// equal shapes (or one element each, broadcast).
Expected<Literal> binaryKernel(const Operation& op, OpCode code, const Literal& lhs, const Literal& rhs,
                               const Type& resultType);
// select(pred, on_true, on_false) with a scalar or elementwise pred.
Expected<Literal> selectKernel(const Operation& op, const Literal& pred, const Literal& onTrue,
                               const Literal& onFalse, const Type& resultType);

// convert and bitcast_convert (elementwise_convert.cpp).
Expected<Literal> convertLiteral(const Operation& op, const Literal& in, ElementType to);
// f4/f6/f8 operands compute in f32 (exactly representable there), and results round back once:
// returns the f32 copy of a minifloat literal, the literal itself otherwise.
inline Expected<Literal> widenMinifloat(const Operation& op, const Literal& in) {
  if (!isF8OrSmaller(in.elementType())) return in;
  return convertLiteral(op, in, ElementType::kF32);
}
// The element type a kernel computes in for a declared element type.
inline ElementType computeType(ElementType t) { return isF8OrSmaller(t) ? ElementType::kF32 : t; }
// Rounds an f32 result back to the declared minifloat type (no-op otherwise).
inline Expected<Literal> narrowTo(const Operation& op, Literal computed, ElementType declared) {
  if (computed.elementType() == declared) return computed;
  return convertLiteral(op, computed, declared);
}
void registerConvertKernels(KernelRegistry& registry);

}  // namespace wf::ew
