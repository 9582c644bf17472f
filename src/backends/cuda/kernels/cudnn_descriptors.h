// Owning handles of cuDNN's legacy descriptors (tensor, filter, convolution) and the tensor
// descriptor of given dims and strides: shared by the forward convolution (convolution.cpp) and
// the convolution gradients (convolution_backward.cpp), and their math type.
#pragma once
#ifdef WF_HAVE_CUDNN

#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"
#include "ir/types.h"
#include "runtime/backend.h"

namespace wf::cuda {

// The math type of a convolution of `et` elements: f32 stays true f32 (FMA math, no TF32) unless
// CompileOptions::allowTf32Convolutions; f16/bf16 run on tensor cores.
inline cudnnMathType_t convolutionMathType(ElementType et, const CompileOptions& options) {
  if (et == ElementType::kF32) return options.allowTf32Convolutions ? CUDNN_DEFAULT_MATH : CUDNN_FMA_MATH;
  return et == ElementType::kF64 ? CUDNN_DEFAULT_MATH : CUDNN_TENSOR_OP_MATH;
}
// Whether cuDNN runs a convolution of `et` elements on tensor cores: f16/bf16, and f32 where TF32
// is allowed for convolutions.
inline bool convolutionOnTensorCores(ElementType et, const CompileOptions& options) {
  return et == ElementType::kBF16 || et == ElementType::kF16 ||
         (et == ElementType::kF32 && options.allowTf32Convolutions);
}
// Whether an algorithm of math type `m` computes at the precision asked: a TF32 algorithm is
// another precision, so f32 without TF32 takes only FMA-math algorithms.
inline bool convolutionMathAllowed(cudnnMathType_t m, ElementType et, const CompileOptions& options) {
  return !(et == ElementType::kF32 && !options.allowTf32Convolutions &&
           (m == CUDNN_TENSOR_OP_MATH || m == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION));
}

struct TensorDescDeleter {
  void operator()(cudnnTensorDescriptor_t d) const { WF_CUDA_WARN(cudnnDestroyTensorDescriptor(d)); }
};
struct FilterDescDeleter {
  void operator()(cudnnFilterDescriptor_t d) const { WF_CUDA_WARN(cudnnDestroyFilterDescriptor(d)); }
};
struct ConvDescDeleter {
  void operator()(cudnnConvolutionDescriptor_t d) const { WF_CUDA_WARN(cudnnDestroyConvolutionDescriptor(d)); }
};
using TensorDesc = Handle<cudnnTensorDescriptor_t, TensorDescDeleter>;
using FilterDesc = Handle<cudnnFilterDescriptor_t, FilterDescDeleter>;
using ConvDesc = Handle<cudnnConvolutionDescriptor_t, ConvDescDeleter>;

inline Expected<TensorDesc> tensorDesc(cudnnDataType_t t, const std::vector<int>& dims, const std::vector<int>& strides) {
  cudnnTensorDescriptor_t d = nullptr;
  WF_CUDNN_CHECK(cudnnCreateTensorDescriptor(&d));
  TensorDesc desc(d);
  WF_CUDNN_CHECK(cudnnSetTensorNdDescriptor(d, t, static_cast<int>(dims.size()), dims.data(), strides.data()));
  return desc;
}

}  // namespace wf::cuda

#endif  // WF_HAVE_CUDNN
