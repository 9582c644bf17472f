// The reductions with a one-op body (sum, product, max, min, and, or), shared by the reduce
// kernels (reduce.cu) and the collective fold (collectives.cu): which one a body computes, and
// one step of it on the device.
#pragma once

#include <cstdint>

#include "backends/cuda/kernels/device_util.cuh"
#include "backends/cuda/kernel.h"
#include "eval/element_math.h"

namespace wf::cuda {

enum class RedKind : uint8_t { kSum, kProd, kMax, kMin, kAnd, kOr };

// The reduction a body computes, if it is one binary op of its two arguments (reduce.cu).
Expected<RedKind> bodyKind(const Operation& op);

// One step of the reduction in accumulator type A (Tr::C, or a wider type for bool), as the
// CPU's elementwise ops compute it: NaN propagates through max/min, which order -0 below +0;
// integers wrap.
template <typename Tr, typename A>
__device__ A combine(RedKind k, A a, A b) {
  if constexpr (Tr::kCat == Cat::kBool) {
    switch (k) {
      case RedKind::kSum: case RedKind::kMax: case RedKind::kOr: return static_cast<A>(a | b);
      default: return static_cast<A>(a & b);
    }
  } else if constexpr (Tr::kCat == Cat::kFloat) {
    switch (k) {
      case RedKind::kSum: return a + b;
      case RedKind::kProd: return a * b;
      case RedKind::kMax: return em::Max::apply(a, b);
      case RedKind::kMin: return em::Min::apply(a, b);
      default: return a;
    }
  } else {
    using U = uint64_t;
    switch (k) {
      case RedKind::kSum: return static_cast<A>(static_cast<U>(a) + static_cast<U>(b));
      case RedKind::kProd: return static_cast<A>(static_cast<U>(a) * static_cast<U>(b));
      case RedKind::kMax: return a > b ? a : b;
      case RedKind::kMin: return a < b ? a : b;
      case RedKind::kAnd: return a & b;
      case RedKind::kOr: return a | b;
    }
    return a;
  }
}

}  // namespace wf::cuda
