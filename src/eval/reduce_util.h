// Shared helpers of the reduction-family kernels (reduce.cpp, reduce_window.cpp, sort.cpp):
// recognising region bodies that have a fast path, typed element access for those fast paths,
// scalar Literals for the general (region-running) paths, and the attribute readers.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "eval/interpreter.h"
#include "ir/float_types.h"

namespace wf {

void registerReduceWindowKernels(KernelRegistry& registry);  // reduce_window, select_and_scatter
void registerSortKernels(KernelRegistry& registry);          // sort, chlo.top_k

namespace reduce_detail {

// ---- Testing hook -------------------------------------------------------------------------------
// Fast paths are on by default; tests turn them off to check the general paths produce the same.
bool fastPathsEnabled();
void setFastPathsEnabled(bool enabled);

// ---- Parallelism --------------------------------------------------------------------------------
// Runs fn(begin, end) over [0, n) in chunks of at least `grain` items, on the shared thread pool.
void parallelRanges(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& fn);

// ---- Region recognition -------------------------------------------------------------------------
enum class BinaryKind { kNone, kAdd, kMul, kMax, kMin, kAnd, kOr, kXor };

// If `region` is exactly `%r = OP(%argA, %argB) ; return %r` (either operand order; every
// recognised OP is commutative) with {A, B} = {lhsArg, rhsArg}, returns OP; otherwise kNone.
BinaryKind matchBinaryBody(const Region& region, size_t lhsArg, size_t rhsArg);

enum class CompareDir { kEQ, kNE, kLT, kLE, kGT, kGE };
struct CompareMatch {
  CompareDir dir;      // normalised so that the compare reads `arg(lhs) DIR arg(rhs)`
  bool totalOrder;     // compare_type TOTALORDER
};
// If `region` is exactly `%p = compare DIR, %argL, %argR ; return %p` with {L, R} = {lhsArg,
// rhsArg}: the direction as seen from (lhsArg, rhsArg) (swapped operands flip it).
std::optional<CompareMatch> matchCompareBody(const Region& region, size_t lhsArg, size_t rhsArg);

// ---- Attributes ---------------------------------------------------------------------------------
// An integer-list attribute, `fallback` (repeated `rank` times) when absent.
Expected<std::vector<int64_t>> intListAttr(const Operation& op, const char* name, size_t rank, int64_t fallback);
// `padding` as rank pairs (low, high); zeros when absent.
Expected<std::vector<std::pair<int64_t, int64_t>>> paddingAttr(const Operation& op, size_t rank);

// ---- Scalars for region calls -------------------------------------------------------------------
// A rank-0 copy of element `i` of `src` (same element type).
Literal scalarAt(const Literal& src, int64_t i);
// A rank-0 copy of element `i` of `src`, converted to `to` (the body's argument type, which may
// be a promoted type of the input element type per the spec's is_promotable).
Literal scalarAtAs(const Literal& src, int64_t i, ElementType to);
// Copies the single element of rank-0 `scalar` into element `i` of `dst` (same element type).
void storeScalar(Literal& dst, int64_t i, const Literal& scalar);
// Checks that a region returned `count` rank-0 values of the given element types.
Status checkRegionResults(const Operation& op, const std::vector<Literal>& results,
                          const std::vector<ElementType>& types);
// The element type of argument `i` of the region's block.
ElementType regionArgType(const Region& region, size_t i);

// ---- Typed element access for fast paths --------------------------------------------------------
// Storage is how a Literal holds the element; Compute is what the fast loops compute in; round()
// applies the element type's rounding after every body application, so bf16/f16 fast paths give
// what the body itself (computing in bf16/f16, as the spec says) would give. f32 -> bf16/f16 of a
// single add/multiply is correctly rounded: f32's 24 bits are >= 2p+2 for p = 8 and 11.
template <typename S>
struct NativeTraits {
  using Storage = S;
  using Compute = S;
  static Compute load(Storage v) { return v; }
  static Storage store(Compute v) { return v; }
  static Compute round(Compute v) { return v; }
};
struct Bf16Traits {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return bf16ToFloat(v); }
  static Storage store(Compute v) { return floatToBf16(v); }
  static Compute round(Compute v) { return bf16ToFloat(floatToBf16(v)); }
};
struct F16Traits {
  using Storage = uint16_t;
  using Compute = float;
  static Compute load(Storage v) { return f16ToFloat(v); }
  static Storage store(Compute v) { return floatToF16(v); }
  static Compute round(Compute v) { return f16ToFloat(floatToF16(v)); }
};

// The element operations with StableHLO semantics: integers wrap, floats follow IEEE-754 and
// maximum/minimum propagate NaN and order -0 < +0.
template <typename T>
inline T addOp(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, U>;
    return static_cast<T>(static_cast<W>(static_cast<U>(a)) + static_cast<W>(static_cast<U>(b)));
  } else {
    return a + b;
  }
}
template <typename T>
inline T mulOp(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    using W = std::conditional_t<(sizeof(T) < sizeof(uint32_t)), uint32_t, U>;
    return static_cast<T>(static_cast<W>(static_cast<U>(a)) * static_cast<W>(static_cast<U>(b)));
  } else {
    return a * b;
  }
}
template <typename T>
inline T maxOp(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? b : a;  // +0 beats -0
    return a > b ? a : b;
  } else {
    return a > b ? a : b;
  }
}
template <typename T>
inline T minOp(T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (std::isnan(a)) return a;
    if (std::isnan(b)) return b;
    if (a == b) return std::signbit(a) ? a : b;  // -0 beats +0
    return a < b ? a : b;
  } else {
    return a < b ? a : b;
  }
}

// The fast-path body operations as functors (T = Traits::Compute); add and multiply round to the
// element type after every step.
template <typename Traits>
struct AddFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return Traits::round(addOp(a, b));
  }
};
template <typename Traits>
struct MulFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return Traits::round(mulOp(a, b));
  }
};
template <typename Traits>
struct MaxFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return maxOp(a, b);
  }
};
template <typename Traits>
struct MinFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return minOp(a, b);
  }
};
template <typename Traits>
struct AndFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return static_cast<typename Traits::Compute>(a & b);
  }
};
template <typename Traits>
struct OrFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return static_cast<typename Traits::Compute>(a | b);
  }
};
template <typename Traits>
struct XorFn {
  typename Traits::Compute operator()(typename Traits::Compute a, typename Traits::Compute b) const {
    return static_cast<typename Traits::Compute>(a ^ b);
  }
};

// Calls fn(Traits{}, Op{}) for a recognised single-op body `kind` on element type t, when a typed
// fast path exists; returns false otherwise. Only meaningful pairs are instantiated: floats take
// add/multiply/maximum/minimum; integer add/multiply/and/or/xor give the same bits on signed and
// unsigned storage, so they run on the unsigned type of that width; maximum/minimum use the
// signedness of t; i1 is 0/1 bytes where add and maximum are OR, multiply and minimum are AND.
template <typename F>
bool dispatchReduction(ElementType t, BinaryKind kind, F&& fn) {
  auto floating = [&](auto traits) {
    using Tr = decltype(traits);
    switch (kind) {
      case BinaryKind::kAdd: fn(traits, AddFn<Tr>{}); return true;
      case BinaryKind::kMul: fn(traits, MulFn<Tr>{}); return true;
      case BinaryKind::kMax: fn(traits, MaxFn<Tr>{}); return true;
      case BinaryKind::kMin: fn(traits, MinFn<Tr>{}); return true;
      default: return false;
    }
  };
  auto wrapping = [&](auto traits) {
    using Tr = decltype(traits);
    switch (kind) {
      case BinaryKind::kAdd: fn(traits, AddFn<Tr>{}); return true;
      case BinaryKind::kMul: fn(traits, MulFn<Tr>{}); return true;
      case BinaryKind::kAnd: fn(traits, AndFn<Tr>{}); return true;
      case BinaryKind::kOr: fn(traits, OrFn<Tr>{}); return true;
      case BinaryKind::kXor: fn(traits, XorFn<Tr>{}); return true;
      default: return false;
    }
  };
  auto ordered = [&](auto traits) {
    using Tr = decltype(traits);
    if (kind == BinaryKind::kMax) fn(traits, MaxFn<Tr>{});
    else fn(traits, MinFn<Tr>{});
    return true;
  };
  bool minMax = kind == BinaryKind::kMax || kind == BinaryKind::kMin;
  switch (t) {
    case ElementType::kF32: return floating(NativeTraits<float>{});
    case ElementType::kF64: return floating(NativeTraits<double>{});
    case ElementType::kBF16: return floating(Bf16Traits{});
    case ElementType::kF16: return floating(F16Traits{});
    case ElementType::kI1: {
      using Tr = NativeTraits<uint8_t>;
      switch (kind) {
        case BinaryKind::kAdd: case BinaryKind::kMax: case BinaryKind::kOr: fn(Tr{}, OrFn<Tr>{}); return true;
        case BinaryKind::kMul: case BinaryKind::kMin: case BinaryKind::kAnd: fn(Tr{}, AndFn<Tr>{}); return true;
        case BinaryKind::kXor: fn(Tr{}, XorFn<Tr>{}); return true;
        default: return false;
      }
    }
    case ElementType::kSI8: return minMax ? ordered(NativeTraits<int8_t>{}) : wrapping(NativeTraits<uint8_t>{});
    case ElementType::kUI8: return minMax ? ordered(NativeTraits<uint8_t>{}) : wrapping(NativeTraits<uint8_t>{});
    case ElementType::kSI16: return minMax ? ordered(NativeTraits<int16_t>{}) : wrapping(NativeTraits<uint16_t>{});
    case ElementType::kUI16: return minMax ? ordered(NativeTraits<uint16_t>{}) : wrapping(NativeTraits<uint16_t>{});
    case ElementType::kSI32: return minMax ? ordered(NativeTraits<int32_t>{}) : wrapping(NativeTraits<uint32_t>{});
    case ElementType::kUI32: return minMax ? ordered(NativeTraits<uint32_t>{}) : wrapping(NativeTraits<uint32_t>{});
    case ElementType::kSI64: return minMax ? ordered(NativeTraits<int64_t>{}) : wrapping(NativeTraits<uint64_t>{});
    case ElementType::kUI64: return minMax ? ordered(NativeTraits<uint64_t>{}) : wrapping(NativeTraits<uint64_t>{});
    default: return false;
  }
}

// compare with StableHLO semantics on fast-path Compute values. FLOAT comparisons are IEEE
// (false with NaN, except NE); TOTALORDER orders -NaN < -Inf < ... < -0 < +0 < ... < +Inf < +NaN.
int64_t totalOrderKey(double v);
template <typename T>
inline bool compareOp(CompareDir dir, bool totalOrder, T a, T b) {
  if constexpr (std::is_floating_point_v<T>) {
    if (totalOrder) {
      int64_t ka = totalOrderKey(static_cast<double>(a)), kb = totalOrderKey(static_cast<double>(b));
      return compareOp<int64_t>(dir, false, ka, kb);
    }
  }
  switch (dir) {
    case CompareDir::kEQ: return a == b;
    case CompareDir::kNE: return a != b;
    case CompareDir::kLT: return a < b;
    case CompareDir::kLE: return a <= b;
    case CompareDir::kGT: return a > b;
    case CompareDir::kGE: return a >= b;
  }
  return false;
}

}  // namespace reduce_detail
}  // namespace wf
