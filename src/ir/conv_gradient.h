// The two convolutions that compute a convolution's gradients, recognised from what they compute
// and read back as the forward convolution they differentiate, in the terms of cuDNN's backward
// kernels (which take the forward's description, not the gradient's).
//
// The forward convolution, with symmetric padding and no input dilation:
//   y[N, K, out...] = conv(x[N, C, in...], w[K, C/groups, window...]; strides, dilations, padding)
// Autodiff (autodiff/rules_dot_conv.cpp, after JAX's _conv_general_dilated_transpose_lhs/_rhs)
// writes its gradients as plain convolutions:
//   data (input) gradient:   dx = conv(dy, reverse(w'))  with lhs_dilation = strides,
//       rhs_dilation = dilations, padding (window-1)*dilation - padding low, and w' the kernel
//       with its features swapped group by group (feature_group_count = groups);
//   filter (weight) gradient: dw = conv(x, dy)  with x's and dy's batch and feature dims swapped
//       (dy is the window: as large as the output), rhs_dilation = strides, window_strides =
//       dilations, padding low = padding (batch_group_count = groups).
// Any convolution of one of these forms is such a gradient, however it was written; since a plain
// forward convolution has the same forms too, each is taken only where running it as a forward
// convolution costs more: the data form only with an lhs_dilation above 1 (a forward convolution
// would run over the dilated, mostly zero input), the filter form only with batch groups or a
// window larger than the result (a forward convolution would slide a window as large as the image
// over a few positions).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "ir/ir.h"

namespace wf {

struct ConvolutionGradient {
  enum class Kind {
    kData,    // the op is dx = conv(dy, kernel)
    kFilter,  // the op is dw = conv(x, dy)
  };
  Kind kind = Kind::kData;
  // The forward convolution: N, C, K and the feature groups; per spatial dim the sizes of x, w
  // and y, and its strides, dilations and padding (the same low and high).
  int64_t batch = 0, inFeatures = 0, outFeatures = 0, groups = 1;
  std::vector<int64_t> inputSize, windowSize, outputSize;
  std::vector<int64_t> strides, dilations, padding;
  // Where the forward's tensors lie in the op's operands and result, dim by dim:
  //   xDims: [N, C, in...] of x (kFilter: operand 0) or dx (kData: the result);
  //   yDims: [N, K, out...] of dy (kData: operand 0; kFilter: operand 1);
  //   wDims: kFilter: [K, C/groups, window...] of dw (the result); kData: [C, K/groups,
  //          window...] of operand 1, which holds w transposed group by group and reversed in
  //          its window: operand1[g*C/groups + c, k, r...] = w[g*K/groups + k, c, window-1-r...].
  std::vector<int64_t> xDims, yDims, wDims;
};

// The forward convolution whose data or filter gradient `op` computes, where `op` is a
// stablehlo.convolution of one of the forms above with static shapes, no window reversal and
// no empty tensor; nullopt otherwise. Element types are not looked at.
std::optional<ConvolutionGradient> recognizeConvolutionGradient(const Operation& op);

}  // namespace wf
