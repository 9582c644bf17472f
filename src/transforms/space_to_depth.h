// Strided convolutions over few input channels rewritten as stride-1 convolutions over a
// space-to-depth input (as MLPerf's ResNet-50 does its stem on TPUs).
//
// ResNet's stem convolves 3 channels with a 7x7 window at stride 2. Tensor-core convolutions
// take channels in multiples of 8, so cuDNN runs it on a slow path (about 0.2 ms for a batch of
// 32 on an H100 or H200, as long as all 52 other convolutions together at bf16). Each 2x2 block of
// input pixels can instead be read as one pixel of 4x the channels: with stride s = 2,
//
//   y[n, o, i, j] = sum_{c, kh, kw} x[n, c, 2i + kh - p, 2j + kw - p] * w[o, c, kh, kw]
//                 = sum_{c, dy, dx, a, b} xs[n, (c, dy, dx), i + a, j + b] * ws[o, (c, dy, dx), a, b]
//
// where xs[n, (c, dy, dx), u, v] = xpad[n, c, 2u + dy, 2v + dx] (the padded input, each 2x2 block
// of pixels as 4 channels), kh = 2a + dy, and ws the filter zero-padded to an even window and
// split the same way. The result is a stride-1 convolution of ceil(k/2) x ceil(k/2) over 4C
// channels, zero-padded up to a multiple of 8: for the stem 16 channels and a 4x4 window. The
// same products are summed, plus products with zero, in another order: like another choice of
// convolution algorithm, the sums may differ in their last f32 bits (exact where they are exact
// in any order).
//
// Rewritten: stablehlo.convolution at the top level of the body, bf16 or f16 (the types the CUDA
// backend runs channels-last on tensor cores), or f32 with `tf32Convolutions` (where TF32 is
// allowed for convolutions, f32 ones run channels-last on TF32 tensor cores too), static shapes,
// 2 spatial dims, dimension numbers
// [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1] (as PyTorch's export writes them), strides 2 and 2, no
// dilation, one feature and batch group, at most 4 input channels and a window of at least 3x3.
// The input's and the filter's rearrangement are pad, reshape and transpose ops, which the
// backend's fusion computes in one pass each.
#pragma once

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// Rewrites the convolutions of `function`'s body described above; returns how many. On error the
// function may be partly rewritten (the CUDA backend rewrites a copy).
Expected<int> spaceToDepthConvolutions(Operation& function, bool tf32Convolutions = false);

}  // namespace wf
