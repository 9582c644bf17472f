// Window arithmetic: the output size of a windowed dimension of convolution, reduce_window and
// select_and_scatter, as the StableHLO spec defines it, and the one reader of the window
// attributes of reduce_window and select_and_scatter. Shape inference, shape refinement and the
// backends all size windows here.
#pragma once

#include <cstdint>
#include <vector>

#include "ir/ir.h"
#include "support/status.h"

namespace wf {

// A size stretched by `dilation` (holes between elements): (size - 1) * dilation + 1, 0 for 0.
inline int64_t dilatedSize(int64_t size, int64_t dilation) { return size == 0 ? 0 : (size - 1) * dilation + 1; }

// A window attribute of `op` (window_strides, padding, lhs_dilation, ...) as a list, or `n` copies of
// `fill` (the attribute's default) where the op lacks it.
std::vector<int64_t> windowAttributeOr(const Operation& op, const char* name, size_t n, int64_t fill);

// Window positions along one dimension: the input dilated by `baseDilation` and padded by
// `padLow`/`padHigh` (negative crops), the window dilated by `windowDilation`, moved by `stride`.
// 0 where the window does not fit (the spec's is_empty_window); kDynamic where the input or the
// window size is.
int64_t windowOutputSize(int64_t input, int64_t window, int64_t stride, int64_t padLow, int64_t padHigh,
                         int64_t baseDilation = 1, int64_t windowDilation = 1);

// The window of reduce_window or select_and_scatter, one entry per operand dimension, defaults
// filled in (strides and dilations 1, padding 0).
struct Window {
  std::vector<int64_t> size, strides, baseDilation, windowDilation, padLow, padHigh;

  size_t rank() const { return size.size(); }
  int64_t outputSize(size_t d, int64_t input) const {
    return windowOutputSize(input, size[d], strides[d], padLow[d], padHigh[d], baseDilation[d], windowDilation[d]);
  }
  std::vector<int64_t> outputShape(const std::vector<int64_t>& input) const;
};

// Reads and checks the window attributes of `op` (reduce_window: C4..C12; select_and_scatter,
// which has no dilations: C4..C8) for an operand of rank `rank`. Errors name the constraint.
Expected<Window> readWindow(const Operation& op, int64_t rank);

}  // namespace wf
