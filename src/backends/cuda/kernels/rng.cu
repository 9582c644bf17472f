// CUDA kernel for stablehlo.rng_bit_generator: THREE_FRY (ThreeFry2x32, 20 rounds) and PHILOX
// (Philox4x32, 10 rounds; DEFAULT is PHILOX, as on XLA's backends), bit for bit what the CPU
// backend computes (src/eval/misc.cpp, through the same generators of
// eval/element_math.h), output state included. The state stays on the
// device: the bits kernel reads it, then a one-thread kernel writes the advanced state (after the
// bits kernel, so a result that shares the state's buffer is safe).
//
// stablehlo.rng (UNIFORM/NORMAL) is not here: the CPU backend draws it from a host-side stream
// (std::mt19937_64) whose values a device kernel cannot reproduce.
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"
#include "eval/element_math.h"

namespace wf::cuda {
namespace {

enum class RngAlg : uint8_t { kThreeFry, kPhilox };

struct RngPlan {
  RngAlg alg = RngAlg::kPhilox;
  bool wide = false;      // 64-bit elements
  int elemBytes = 4;      // storage bytes of an element
  uint64_t mask = ~0ull;  // the element's bits of each generated word
  int stateSize = 2;
  int64_t n = 0;          // result elements
  // ThreeFry with 32-bit elements: the shape split in two along `split`.
  int rank = 0;
  int split = 0;
  int64_t shape[kMaxRank] = {};
  int64_t half[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t halfCount = 0;
  int64_t blocks = 0;  // generator calls: what the counter advances by
};

__device__ inline void storeBits(void* out, int64_t i, uint64_t v, const RngPlan& p) {
  v &= p.mask;
  switch (p.elemBytes) {
    case 1: static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(v); break;
    case 2: static_cast<uint16_t*>(out)[i] = static_cast<uint16_t>(v); break;
    case 4: static_cast<uint32_t*>(out)[i] = static_cast<uint32_t>(v); break;
    default: static_cast<uint64_t*>(out)[i] = v; break;
  }
}

// One thread per generator call (`p.blocks` of them).
__global__ void rngBitsKernel(const uint64_t* __restrict__ state, void* __restrict__ out, RngPlan p) {
  const uint64_t key = state[0];
  const auto k0 = static_cast<uint32_t>(key), k1 = static_cast<uint32_t>(key >> 32);
  WF_GRID_STRIDE_LOOP(l, p.blocks) {
    if (p.alg == RngAlg::kThreeFry) {
      const uint64_t c = state[1] + static_cast<uint64_t>(l);
      uint32_t x0 = static_cast<uint32_t>(c), x1 = static_cast<uint32_t>(c >> 32);
      em::threeFry2x32(k0, k1, x0, x1);
      if (p.wide) {
        storeBits(out, l, x0 | (uint64_t{x1} << 32), p);
      } else if (p.rank == 0) {
        storeBits(out, 0, x0, p);
      } else {
        // Counter l of the half shape yields the pair (2k, 2k + 1) along the split dimension.
        int64_t base = 0, k = 0, rem = l;
        for (int d = p.rank - 1; d >= 0; --d) {
          const int64_t idx = rem % p.half[d];
          rem /= p.half[d];
          if (d == p.split) k = idx;
          else base += idx * p.strides[d];
        }
        storeBits(out, base + 2 * k * p.strides[p.split], x0, p);
        if (2 * k + 1 < p.shape[p.split]) storeBits(out, base + (2 * k + 1) * p.strides[p.split], x1, p);
      }
    } else {
      const uint64_t lo = state[1];
      const uint64_t hi = p.stateSize == 3 ? state[2] : state[0];
      const uint64_t cLo = lo + static_cast<uint64_t>(l);
      const uint64_t cHi = cLo < lo ? hi + 1 : hi;
      uint32_t x[4] = {static_cast<uint32_t>(cLo), static_cast<uint32_t>(cLo >> 32), static_cast<uint32_t>(cHi),
                       static_cast<uint32_t>(cHi >> 32)};
      em::philox4x32(k0, k1, x);
      if (p.wide) {
        for (int c = 0; c < 2; ++c) {
          const int64_t i = 2 * l + c;
          if (i < p.n) storeBits(out, i, x[2 * c] | (uint64_t{x[2 * c + 1]} << 32), p);
        }
      } else {
        for (int c = 0; c < 4; ++c) {
          const int64_t i = 4 * l + c;
          if (i < p.n) storeBits(out, i, x[c], p);
        }
      }
    }
  }
}

// The advanced state; one thread, launched after rngBitsKernel.
__global__ void rngStateKernel(const uint64_t* state, uint64_t* newState, RngPlan p) {
  if (blockIdx.x != 0 || threadIdx.x != 0) return;
  uint64_t s[3] = {state[0], state[1], p.stateSize == 3 ? state[2] : 0};
  const auto advance = static_cast<uint64_t>(p.blocks);
  if (p.alg == RngAlg::kThreeFry) {
    s[1] += advance;
  } else {
    const uint64_t lo = s[1] + advance;
    if (p.stateSize == 3 && lo < s[1]) ++s[2];
    s[1] = lo;
  }
  for (int i = 0; i < p.stateSize; ++i) newState[i] = s[i];
}

using Results = Expected<std::unique_ptr<OpKernel>>;

Results lowerRngBitGenerator(const Operation& op, LowerContext&) {
  if (op.numOperands() != 1 || op.numResults() != 2)
    return invalidArgument(op.describe() + ": expects one state operand and two results");
  const Attribute* algAttr = op.attr("rng_algorithm");
  const std::string name = algAttr ? algAttr->stringValue() : "DEFAULT";
  RngPlan p;
  if (name == "THREE_FRY") p.alg = RngAlg::kThreeFry;
  else if (name == "PHILOX" || name == "DEFAULT") p.alg = RngAlg::kPhilox;
  else return unsupportedOnCuda(op, "no CUDA kernel for rng_algorithm " + name);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> stateShape, staticShape(op, op.operand(0)->type()));
  const ElementType st = op.operand(0)->type().elementType();
  if (bitWidth(st) != 64 || stateShape.size() != 1)
    return invalidArgument(op.describe() + ": the state must be a 1-D 64-bit tensor");
  p.stateSize = static_cast<int>(stateShape[0]);
  if (p.alg == RngAlg::kThreeFry && p.stateSize != 2)
    return invalidArgument(op.describe() + ": THREE_FRY needs a 2-element u64 state");
  if (p.alg == RngAlg::kPhilox && p.stateSize != 2 && p.stateSize != 3)
    return invalidArgument(op.describe() + ": PHILOX needs a 2- or 3-element u64 state");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(1)->type()));
  const ElementType et = op.result(1)->type().elementType();
  if (!isGpuComputeType(et)) return unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(et)));
  if (shape.size() > static_cast<size_t>(kMaxRank)) return unsupportedOnCuda(op, "rank over the CUDA kernels' limit");
  const int bits = bitWidth(et);
  p.wide = bits > 32;
  p.elemBytes = storageBytes(et);
  p.mask = bits < 64 ? (uint64_t{1} << bits) - 1 : ~uint64_t{0};
  p.n = numElementsOf(shape);
  p.rank = static_cast<int>(shape.size());
  if (p.alg == RngAlg::kThreeFry) {
    if (p.wide) {
      p.blocks = p.n;
    } else if (shape.empty()) {
      p.blocks = 1;
    } else {
      const size_t split = static_cast<size_t>(em::threeFrySplitDim(shape.data(), static_cast<int>(shape.size())));
      const std::vector<int64_t> strides = rowMajorStridesOf(shape);
      p.split = static_cast<int>(split);
      p.halfCount = 1;
      for (size_t d = 0; d < shape.size(); ++d) {
        p.shape[d] = shape[d];
        p.half[d] = d == split ? (shape[d] + 1) / 2 : shape[d];
        p.strides[d] = strides[d];
        p.halfCount *= p.half[d];
      }
      p.blocks = p.halfCount;
    }
  } else {
    p.blocks = p.wide ? (p.n + 1) / 2 : (p.n + 3) / 4;
  }
  return makeKernel([p](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) -> Status {
    const auto* state = static_cast<const uint64_t*>(in[0]);
    if (p.blocks > 0 && p.n > 0) {
      rngBitsKernel<<<gridFor(p.blocks), kThreads, 0, ctx.stream>>>(state, out[1], p);
      WF_CUDA_CHECK_LAUNCH("rngBitsKernel");
    }
    rngStateKernel<<<1, 32, 0, ctx.stream>>>(state, static_cast<uint64_t*>(out[0]), p);
    WF_CUDA_CHECK_LAUNCH("rngStateKernel");
    return Status::ok();
  });
}

}  // namespace

void registerRngLowerings(CudaKernelRegistry& r) { r.add(OpCode::RngBitGenerator, lowerRngBitGenerator); }

}  // namespace wf::cuda
