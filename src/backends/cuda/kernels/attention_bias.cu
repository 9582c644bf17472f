// The additive bias of fused attention (attention.cpp): a mask broadcast over
// [bias batch, bias heads, Sq, Skv] and turned into what cuDNN adds to the scores (kernel.h
// AttentionBiasPlan). One thread per bias element in a grid-stride loop: the bias is written
// once per run, beside an attention that reads it Dv times over.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

template <typename In, typename Out>
__global__ void attentionBiasKernel(AttentionBiasPlan p, int64_t n, const typename In::S* mask,
                                    typename Out::S* bias) {
  WF_GRID_STRIDE_LOOP(i, n) {
    int64_t rest = i, at = 0;
    for (int d = 3; d >= 0; --d) {
      at += rest % p.dims[d] * p.maskStrides[d];
      rest /= p.dims[d];
    }
    float v;
    if constexpr (In::kCat == Cat::kBool) {
      v = In::load(mask[at]) ? 0.0f : p.maskedValue;
    } else {
      v = static_cast<float>(In::load(mask[at]));
    }
    bias[i] = Out::store(static_cast<typename Out::C>(v));
  }
}

template <typename In>
Status launchFrom(cudaStream_t stream, const AttentionBiasPlan& p, int64_t n, const void* mask, void* bias) {
  const auto* m = static_cast<const typename In::S*>(mask);
  switch (p.bias) {
    case ElementType::kBF16:
      attentionBiasKernel<In, BF16T><<<gridFor(n), kThreads, 0, stream>>>(p, n, m, static_cast<uint16_t*>(bias));
      break;
    case ElementType::kF16:
      attentionBiasKernel<In, F16T><<<gridFor(n), kThreads, 0, stream>>>(p, n, m, static_cast<uint16_t*>(bias));
      break;
    case ElementType::kF32:
      attentionBiasKernel<In, NativeFloatT<float>>
          <<<gridFor(n), kThreads, 0, stream>>>(p, n, m, static_cast<float*>(bias));
      break;
    default:
      return internalError("attention bias of element type " + std::string(elementTypeName(p.bias)));
  }
  WF_CUDA_CHECK_LAUNCH("attentionBiasKernel");
  return Status::ok();
}

}  // namespace

Status launchAttentionBias(cudaStream_t stream, const AttentionBiasPlan& p, const void* mask, void* bias) {
  const int64_t n = p.dims[0] * p.dims[1] * p.dims[2] * p.dims[3];
  if (n == 0) return Status::ok();
  switch (p.mask) {
    case ElementType::kI1: return launchFrom<BoolT>(stream, p, n, mask, bias);
    case ElementType::kBF16: return launchFrom<BF16T>(stream, p, n, mask, bias);
    case ElementType::kF16: return launchFrom<F16T>(stream, p, n, mask, bias);
    case ElementType::kF32: return launchFrom<NativeFloatT<float>>(stream, p, n, mask, bias);
    default: return internalError("attention mask of element type " + std::string(elementTypeName(p.mask)));
  }
}

}  // namespace wf::cuda
