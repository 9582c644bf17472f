// The convolutions that compute a convolution's gradients, through cuDNN's backward kernels
// (convolution_backward.cpp): the hook convolution.cpp's lowering tries first, and the lock both
// files take around the device's cuDNN handle.
#pragma once

#include <memory>
#include <mutex>
#include <optional>

#include "backends/cuda/kernel.h"

namespace wf::cuda {

#ifdef WF_HAVE_CUDNN
// The kernel of `op` where it is a convolution's data or filter gradient (ir/conv_gradient.h) of
// a type cuDNN's backward kernels take; nullopt where the forward lowering is to take it instead
// (any other convolution, or one cuDNN finds no backward algorithm for).
std::optional<Expected<std::unique_ptr<OpKernel>>> lowerConvolutionGradient(const Operation& op, LowerContext& ctx);

#endif

}  // namespace wf::cuda
