// Owning handles of cuDNN's legacy descriptors (tensor, filter, convolution) and the tensor
// descriptor of given dims and strides: shared by the forward convolution (convolution.cpp) and
// the convolution gradients (convolution_backward.cpp).
#pragma once
#ifdef WF_HAVE_CUDNN

#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"

namespace wf::cuda {

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
