// dot_general without cuBLASLt, for the element types it has no kernel for: integers, and f32
// operands with an f64 result (products and sums in f64). One thread per result element walks the
// contracting dims; correct for any dimension numbers, not tuned for speed (the models' matrix
// products are floats and go to cuBLASLt in dot.cpp).
//
// Integers follow the CPU backend: each operand is widened to 64 bits (sign- or zero-extended by
// its own type), products and sums wrap in 64 bits, and the sum is narrowed to the result type, so
// si8 x si8 -> si32 (the quantized matmul) and si32 x si32 -> si32 alike wrap in the result's width.
#include <algorithm>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct DirectDotPlan {
  int64_t n = 0;         // result elements
  IndexMap<2> out;       // result dims -> offsets in lhs (0) and rhs (1)
  IndexMap<2> contract;  // contracting dims -> offsets in lhs and rhs
  int64_t k = 1;         // product of the contracting dims
};

// InT: the operands' element traits (device_util.cuh); OutT: the result's; Acc: the sum's type.
template <typename InT, typename OutT, typename Acc>
__global__ void directDot(const typename InT::S* __restrict__ lhs, const typename InT::S* __restrict__ rhs,
                          typename OutT::S* __restrict__ out, DirectDotPlan p) {
  WF_GRID_STRIDE_LOOP(i, p.n) {
    int64_t at[2], step[2];
    p.out.offsets(i, at);
    Acc acc = 0;
    for (int64_t k = 0; k < p.k; ++k) {
      p.contract.offsets(k, step);
      acc += static_cast<Acc>(InT::load(lhs[at[0] + step[0]])) * static_cast<Acc>(InT::load(rhs[at[1] + step[1]]));
    }
    out[i] = OutT::store(static_cast<typename OutT::C>(acc));
  }
}

template <typename InT, typename OutT, typename Acc>
Status launchDirectDot(const LaunchContext& ctx, const DirectDotPlan& p, std::span<void* const> in,
                       std::span<void* const> out) {
  directDot<InT, OutT, Acc><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
      static_cast<const typename InT::S*>(in[0]), static_cast<const typename InT::S*>(in[1]),
      static_cast<typename OutT::S*>(out[0]), p);
  WF_CUDA_CHECK_LAUNCH("directDot");
  return Status::ok();
}

using Launcher = Status (*)(const LaunchContext&, const DirectDotPlan&, std::span<void* const>, std::span<void* const>);

// The kernel for these element types, chosen once at lowering time. Integer operands of any width
// and signedness, a result of any integer width: the sum is kept in uint64_t (unsigned, so that it
// wraps) and stored through the unsigned type of the result's width (signed and unsigned results
// of one width share their bits). f32 operands with an f64 result sum in f64.
Launcher launcherFor(ElementType in, ElementType out) {
  if (in == ElementType::kF32 && out == ElementType::kF64)
    return &launchDirectDot<NativeFloatT<float>, NativeFloatT<double>, double>;
  return dispatchType(in, Launcher{nullptr}, [&](auto inT) -> Launcher {
    using InT = decltype(inT);
    if constexpr (InT::kCat == Cat::kSInt || InT::kCat == Cat::kUInt) {
      switch (storageBytes(out)) {
        case 1: return &launchDirectDot<InT, UIntT<uint8_t>, uint64_t>;
        case 2: return &launchDirectDot<InT, UIntT<uint16_t>, uint64_t>;
        case 4: return &launchDirectDot<InT, UIntT<uint32_t>, uint64_t>;
        default: return &launchDirectDot<InT, UIntT<uint64_t>, uint64_t>;
      }
    } else {
      return nullptr;
    }
  });
}

bool isDirectInteger(ElementType t) { return isInteger(t) && storageBytes(t) <= 8 && !isF8OrSmaller(t); }

}  // namespace

bool takesDirectDot(ElementType in, ElementType out) {
  return (isDirectInteger(in) && isDirectInteger(out)) || (in == ElementType::kF32 && out == ElementType::kF64);
}

Expected<std::unique_ptr<OpKernel>> lowerDirectDot(const Operation& op, const DotDimensionLists& dims) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ls, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rs, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> os, staticShape(op, op.result(0)->type()));
  const ElementType in = op.operand(0)->type().elementType(), outType = op.result(0)->type().elementType();
  if (!takesDirectDot(in, outType) || op.operand(1)->type().elementType() != in)
    return unsupportedOnCuda(op, "no dot_general kernel for these element types");
  if (os.size() > static_cast<size_t>(kMaxRank) || dims.lhsContract.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "dot_general of rank over 8");
  const std::vector<int64_t> lsStrides = rowMajorStridesOf(ls), rsStrides = rowMajorStridesOf(rs);
  DirectDotPlan p;
  p.n = numElementsOf(os);
  // Result dims: batch, lhs free, rhs free.
  std::vector<std::pair<int64_t, int64_t>> strides;  // (lhs, rhs) per result dim
  for (size_t b = 0; b < dims.lhsBatch.size(); ++b)
    strides.emplace_back(lsStrides[static_cast<size_t>(dims.lhsBatch[b])], rsStrides[static_cast<size_t>(dims.rhsBatch[b])]);
  auto isFree = [](int64_t d, const std::vector<int64_t>& batch, const std::vector<int64_t>& contract) {
    return std::find(batch.begin(), batch.end(), d) == batch.end() &&
           std::find(contract.begin(), contract.end(), d) == contract.end();
  };
  for (int64_t d = 0; d < static_cast<int64_t>(ls.size()); ++d)
    if (isFree(d, dims.lhsBatch, dims.lhsContract)) strides.emplace_back(lsStrides[static_cast<size_t>(d)], 0);
  for (int64_t d = 0; d < static_cast<int64_t>(rs.size()); ++d)
    if (isFree(d, dims.rhsBatch, dims.rhsContract)) strides.emplace_back(0, rsStrides[static_cast<size_t>(d)]);
  if (strides.size() != os.size()) return invalidArgument(op.describe() + ": result rank does not match the operands");
  p.out.rank = static_cast<int>(os.size());
  for (size_t d = 0; d < os.size(); ++d) {
    p.out.dims[d] = os[d];
    p.out.strides[0][d] = strides[d].first;
    p.out.strides[1][d] = strides[d].second;
  }
  p.contract.rank = static_cast<int>(dims.lhsContract.size());
  for (size_t j = 0; j < dims.lhsContract.size(); ++j) {
    const auto l = static_cast<size_t>(dims.lhsContract[j]), r = static_cast<size_t>(dims.rhsContract[j]);
    if (ls[l] != rs[r]) return invalidArgument(op.describe() + ": contracting dimensions differ in size");
    p.contract.dims[j] = ls[l];
    p.contract.strides[0][j] = lsStrides[l];
    p.contract.strides[1][j] = rsStrides[r];
    p.k *= ls[l];
  }
  const Launcher launch = launcherFor(in, outType);
  if (!launch) return internalError(op.describe() + ": no direct dot kernel for its element types");
  return makeKernel([p, launch](const LaunchContext& ctx, std::span<void* const> ins,
                                std::span<void* const> outs) -> Status {
    if (p.n == 0) return Status::ok();
    return launch(ctx, p, ins, outs);
  });
}

}  // namespace wf::cuda
