// Forward convolutions whose gradients autodiff writes as the convolutions of ir/conv_gradient.h,
// shared by the recognition tests (tests/unit/conv_gradient_test.cpp) and the GPU tests of the
// cuDNN backward kernels (tests/cuda/convolution_backward_test.cpp). Each program returns the
// convolution times a random weight %r, so the cotangent reaching it is not uniform.
#pragma once

#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "ir/types.h"
#include "ir/window.h"

namespace wf::convgrad {

enum class Layout {
  kNCHW,  // PyTorch's export: [b, f, 0, 1]x[o, i, 0, 1]->[b, f, 0, 1]
  kNHWC,  // JAX's: [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f]
};

struct ConvGradCase {
  std::string name;
  int64_t batch, inFeatures, outFeatures, groups;
  std::vector<int64_t> input, window, strides, dilations;
  std::vector<int64_t> padding;  // low, high per spatial dim
  Layout layout = Layout::kNCHW;
  // What recognizeConvolutionGradient takes (the rest run as forward convolutions).
  bool dataTaken = true, filterTaken = true;

  size_t rank() const { return input.size(); }
  std::vector<int64_t> output() const {
    std::vector<int64_t> out;
    for (size_t d = 0; d < rank(); ++d)
      out.push_back(windowOutputSize(input[d], window[d], strides[d], padding[2 * d], padding[2 * d + 1], 1,
                                     dilations[d]));
    return out;
  }
  std::vector<int64_t> activation(int64_t features, const std::vector<int64_t>& spatial) const {
    std::vector<int64_t> s = {batch};
    if (layout == Layout::kNCHW) s.push_back(features);
    s.insert(s.end(), spatial.begin(), spatial.end());
    if (layout == Layout::kNHWC) s.push_back(features);
    return s;
  }
  std::vector<int64_t> xShape() const { return activation(inFeatures, input); }
  std::vector<int64_t> yShape() const { return activation(outFeatures, output()); }
  std::vector<int64_t> wShape() const {
    if (layout == Layout::kNCHW) {
      std::vector<int64_t> s = {outFeatures, inFeatures / groups};
      s.insert(s.end(), window.begin(), window.end());
      return s;
    }
    std::vector<int64_t> s = window;
    s.push_back(inFeatures / groups);
    s.push_back(outFeatures);
    return s;
  }
};

// gtest names a failing case by its name rather than its bytes.
inline void PrintTo(const ConvGradCase& c, std::ostream* os) { *os << c.name; }

inline std::string list(const std::vector<int64_t>& v) {
  std::string s = "[";
  for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// func.func @forward(%x, %w, %r) -> y * r, of element type `et`.
inline std::string forwardProgram(const ConvGradCase& c, ElementType et) {
  const std::string xt = Type::tensor(c.xShape(), et).toString(), wt = Type::tensor(c.wShape(), et).toString(),
                    yt = Type::tensor(c.yShape(), et).toString();
  std::string sp;
  for (size_t d = 0; d < c.rank(); ++d) sp += (d ? ", " : "") + std::to_string(d);
  const std::string dims = c.layout == Layout::kNCHW
                               ? "[b, f, " + sp + "]x[o, i, " + sp + "]->[b, f, " + sp + "]"
                               : "[b, " + sp + ", f]x[" + sp + ", i, o]->[b, " + sp + ", f]";
  std::string pad;
  for (size_t d = 0; d < c.rank(); ++d)
    pad += std::string(d ? ", " : "") + "[" + std::to_string(c.padding[2 * d]) + ", " +
           std::to_string(c.padding[2 * d + 1]) + "]";
  return "func.func @forward(%x: " + xt + ", %w: " + wt + ", %r: " + yt + ") -> " + yt +
         " {\n  %y = stablehlo.convolution(%x, %w) dim_numbers = " + dims + ", window = {stride = " + list(c.strides) +
         ", pad = [" + pad + "], rhs_dilate = " + list(c.dilations) +
         "} {batch_group_count = 1 : i64, feature_group_count = " + std::to_string(c.groups) + " : i64} : (" + xt +
         ", " + wt + ") -> " + yt + "\n  %z = \"stablehlo.multiply\"(%y, %r) : (" + yt + ", " + yt + ") -> " + yt +
         "\n  func.return %z : " + yt + "\n}\n";
}

inline const std::vector<ConvGradCase>& convGradCases() {
  static const std::vector<ConvGradCase> all = {
      // Stride 1: the data gradient is an ordinary convolution, left to the forward kernels.
      {"3x3_stride1_pad1", 3, 4, 6, 1, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, Layout::kNCHW, false, true},
      {"3x3_stride2_pad1", 3, 4, 6, 1, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      // Even sizes: the last padded row and column are in no window (56 -> 28 in ResNet).
      {"3x3_stride2_pad1_even", 3, 4, 6, 1, {10, 12}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {"1x1_stride1", 3, 8, 4, 1, {9, 11}, {1, 1}, {1, 1}, {1, 1}, {0, 0, 0, 0}, Layout::kNCHW, false, true},
      {"1x1_stride2", 3, 4, 8, 1, {9, 11}, {1, 1}, {2, 2}, {1, 1}, {0, 0, 0, 0}},
      {"7x7_stride2_pad3", 3, 3, 8, 1, {15, 17}, {7, 7}, {2, 2}, {1, 1}, {3, 3, 3, 3}},
      {"3x3_stride2_dilation2", 3, 4, 6, 1, {9, 11}, {3, 3}, {2, 2}, {2, 2}, {2, 2, 2, 2}},
      {"3x3_stride2_groups2", 3, 4, 6, 2, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      {"3x3_stride1_depthwise", 3, 4, 4, 4, {9, 11}, {3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, Layout::kNCHW, false,
       true},
      {"3x3_stride2_depthwise_x2", 3, 4, 8, 4, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}},
      // No symmetric padding gives these shapes: both run as forward convolutions.
      {"asymmetric_padding", 3, 4, 6, 1, {9, 11}, {3, 3}, {2, 1}, {1, 1}, {1, 0, 0, 2}, Layout::kNCHW, false,
       false},
      {"nhwc_hwio_3x3_stride2", 3, 4, 6, 1, {9, 11}, {3, 3}, {2, 2}, {1, 1}, {1, 1, 1, 1}, Layout::kNHWC},
      {"1d_stride2", 3, 4, 5, 1, {17}, {3}, {2}, {1}, {1, 1}},
      {"3d_stride2", 2, 3, 4, 1, {5, 6, 7}, {3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}},
  };
  return all;
}

}  // namespace wf::convgrad
