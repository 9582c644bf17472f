// Device-side helpers shared by the .cu kernel files: element traits (how each storage type
// loads into and stores from its compute type), strided index maps and launch geometry.
//
// Storage follows Literal (literal.h): i1 is one byte 0/1, f16/bf16 are 16-bit patterns, ints
// and f32/f64 are native. Compute types: bool for i1, int64/uint64 for ints (results wrap to the
// element's width when stored), float for f16/bf16/f32, double for f64. Narrow floats are
// computed in f32 and rounded once to nearest even, as on the CPU backend, through the
// conversions of eval/element_math.h that the fused kernels use too.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <type_traits>

#include "backends/cuda/kernel.h"
#include "eval/element_math.h"
#include "ir/types.h"

namespace wf::cuda {

enum class Cat : uint8_t { kBool, kSInt, kUInt, kFloat };

struct BoolT {
  using S = uint8_t;
  using C = bool;
  static constexpr Cat kCat = Cat::kBool;
  static constexpr int kBits = 1;
  __device__ static C load(S s) { return s != 0; }
  __device__ static S store(C c) { return c ? 1 : 0; }
};
template <typename S_>
struct SIntT {
  using S = S_;
  using C = int64_t;
  static constexpr Cat kCat = Cat::kSInt;
  static constexpr int kBits = 8 * sizeof(S_);
  __device__ static C load(S s) { return static_cast<C>(s); }
  __device__ static S store(C c) { return static_cast<S>(static_cast<uint64_t>(c)); }
};
template <typename S_>
struct UIntT {
  using S = S_;
  using C = uint64_t;
  static constexpr Cat kCat = Cat::kUInt;
  static constexpr int kBits = 8 * sizeof(S_);
  __device__ static C load(S s) { return static_cast<C>(s); }
  __device__ static S store(C c) { return static_cast<S>(c); }
};
struct F16T {
  using S = uint16_t;
  using C = float;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 16;
  __device__ static C load(S s) { return em::f16Load(s); }
  __device__ static S store(C c) { return em::f16Store(c); }
};
struct BF16T {
  using S = uint16_t;
  using C = float;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 16;
  __device__ static C load(S s) { return em::bf16Load(s); }
  __device__ static S store(C c) { return em::bf16Store(c); }
};
template <typename S_>
struct NativeFloatT {
  using S = S_;
  using C = S_;
  static constexpr Cat kCat = Cat::kFloat;
  static constexpr int kBits = 8 * sizeof(S_);
  __device__ static C load(S s) { return s; }
  __device__ static S store(C c) { return c; }
};

// Calls f(Traits{}) for the GPU compute types; returns `fallback` for the others.
template <typename R, typename F>
R dispatchType(ElementType t, R fallback, F&& f) {
  switch (t) {
    case ElementType::kI1: return f(BoolT{});
    case ElementType::kSI8: return f(SIntT<int8_t>{});
    case ElementType::kSI16: return f(SIntT<int16_t>{});
    case ElementType::kSI32: return f(SIntT<int32_t>{});
    case ElementType::kSI64: return f(SIntT<int64_t>{});
    case ElementType::kIndex: return f(SIntT<int64_t>{});
    case ElementType::kUI8: return f(UIntT<uint8_t>{});
    case ElementType::kUI16: return f(UIntT<uint16_t>{});
    case ElementType::kUI32: return f(UIntT<uint32_t>{});
    case ElementType::kUI64: return f(UIntT<uint64_t>{});
    case ElementType::kF16: return f(F16T{});
    case ElementType::kBF16: return f(BF16T{});
    case ElementType::kF32: return f(NativeFloatT<float>{});
    case ElementType::kF64: return f(NativeFloatT<double>{});
    default: return fallback;
  }
}

// Maps a linear index over `dims` (row-major) to element offsets in up to N strided views.
template <int N>
struct IndexMap {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[N][kMaxRank] = {};
  // In I: int32_t where the caller knows every offset fits (fits32), which spares the 64-bit
  // divisions.
  template <typename I = int64_t>
  __device__ void offsets(I linear, I (&out)[N]) const {
    for (int k = 0; k < N; ++k) out[k] = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const I dim = static_cast<I>(dims[d]);
      const I c = linear % dim;
      linear /= dim;
      for (int k = 0; k < N; ++k) out[k] += c * static_cast<I>(strides[k][d]);
    }
  }
  // True if `n` elements and every offset the map reaches (from bases below `base`) fit in 31 bits.
  bool fits32(int64_t n, int64_t base = 0) const {
    const int64_t limit = int64_t{1} << 30;
    if (n >= limit || base >= limit || base < 0) return false;
    for (int k = 0; k < N; ++k) {
      int64_t reach = base;
      for (int d = 0; d < rank; ++d) reach += (dims[d] > 0 ? dims[d] - 1 : 0) * (strides[k][d] < 0 ? -strides[k][d] : strides[k][d]);
      if (reach >= limit) return false;
    }
    return true;
  }
};

constexpr int kThreads = 256;
// Blocks for a grid-stride loop over n elements.
inline unsigned gridFor(int64_t n, int perThread = 1) {
  int64_t blocks = (n + int64_t{kThreads} * perThread - 1) / (int64_t{kThreads} * perThread);
  if (blocks < 1) blocks = 1;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  return static_cast<unsigned>(blocks);
}

#define WF_GRID_STRIDE_LOOP(i, n)                                                                  \
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < (n);           \
       i += static_cast<int64_t>(blockDim.x) * gridDim.x)

// Integer index operands (gather/scatter indices, dynamic_slice starts), read as int64: unsigned
// values beyond INT64_MAX saturate (they are out of range whatever the clamp).
enum class IndexType : uint8_t { kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64 };

// The IndexType of an integer element type; false for any other type.
inline bool indexTypeFor(ElementType t, IndexType* out) {
  switch (t) {
    case ElementType::kSI8: *out = IndexType::kS8; return true;
    case ElementType::kSI16: *out = IndexType::kS16; return true;
    case ElementType::kSI32: *out = IndexType::kS32; return true;
    case ElementType::kSI64: *out = IndexType::kS64; return true;
    case ElementType::kUI8: *out = IndexType::kU8; return true;
    case ElementType::kUI16: *out = IndexType::kU16; return true;
    case ElementType::kUI32: *out = IndexType::kU32; return true;
    case ElementType::kUI64: *out = IndexType::kU64; return true;
    default: return false;
  }
}

__device__ inline int64_t loadIndex(const void* p, IndexType t) {
  switch (t) {
    case IndexType::kS8: return *static_cast<const int8_t*>(p);
    case IndexType::kS16: return *static_cast<const int16_t*>(p);
    case IndexType::kS32: return *static_cast<const int32_t*>(p);
    case IndexType::kS64: return *static_cast<const int64_t*>(p);
    case IndexType::kU8: return *static_cast<const uint8_t*>(p);
    case IndexType::kU16: return *static_cast<const uint16_t*>(p);
    case IndexType::kU32: return *static_cast<const uint32_t*>(p);
    case IndexType::kU64: {
      const uint64_t v = *static_cast<const uint64_t*>(p);
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
  }
  return 0;
}

}  // namespace wf::cuda
