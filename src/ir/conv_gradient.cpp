// Recognition of the gradient convolutions (conv_gradient.h).
#include "ir/conv_gradient.h"

#include <algorithm>
#include <functional>
#include <numeric>

#include "ir/attr_reader.h"
#include "ir/window.h"

namespace wf {
namespace {

using Dims = std::vector<int64_t>;

// A convolution's attributes, defaults filled in.
struct ConvAttrs {
  int64_t inBatch = 0, inFeature = 0, kIn = 0, kOut = 0, outBatch = 0, outFeature = 0;
  Dims inSp, kSp, outSp;
  Dims strides, lhsDilation, rhsDilation, padLow, padHigh;
  int64_t featureGroups = 1, batchGroups = 1;
};

std::optional<ConvAttrs> readAttrs(const Operation& op, size_t rank) {
  AttrReader attrs(op);
  Expected<const Attribute*> dn = attrs.dialectStruct("dimension_numbers");
  if (!dn) return std::nullopt;
  auto field = [&](const char* name) { return AttrReader::fieldInt(**dn, name).value_or(0); };
  ConvAttrs a;
  a.inBatch = field("input_batch_dimension");
  a.inFeature = field("input_feature_dimension");
  a.kIn = field("kernel_input_feature_dimension");
  a.kOut = field("kernel_output_feature_dimension");
  a.outBatch = field("output_batch_dimension");
  a.outFeature = field("output_feature_dimension");
  a.inSp = AttrReader::fieldInts(**dn, "input_spatial_dimensions");
  a.kSp = AttrReader::fieldInts(**dn, "kernel_spatial_dimensions");
  a.outSp = AttrReader::fieldInts(**dn, "output_spatial_dimensions");
  const size_t r = a.inSp.size();
  if (r == 0 || r + 2 != rank || a.kSp.size() != r || a.outSp.size() != r) return std::nullopt;
  const Dims ones(r, 1);
  Expected<Dims> strides = attrs.ints("window_strides", ones), lhs = attrs.ints("lhs_dilation", ones),
                 rhs = attrs.ints("rhs_dilation", ones), pad = attrs.ints("padding", Dims(2 * r, 0));
  Expected<int64_t> fg = attrs.integer("feature_group_count", 1), bg = attrs.integer("batch_group_count", 1);
  if (!strides || !lhs || !rhs || !pad || !fg || !bg) return std::nullopt;
  if (strides->size() != r || lhs->size() != r || rhs->size() != r || pad->size() != 2 * r) return std::nullopt;
  a.strides = *strides;
  a.lhsDilation = *lhs;
  a.rhsDilation = *rhs;
  for (size_t d = 0; d < r; ++d) {
    a.padLow.push_back((*pad)[2 * d]);
    a.padHigh.push_back((*pad)[2 * d + 1]);
  }
  a.featureGroups = *fg;
  a.batchGroups = *bg;
  return a;
}

int64_t product(const Dims& v) { return std::accumulate(v.begin(), v.end(), int64_t{1}, std::multiplies<>()); }

bool allEqual(const Dims& v, int64_t value) {
  return std::all_of(v.begin(), v.end(), [&](int64_t x) { return x == value; });
}

Dims sizesOf(const Dims& shape, const Dims& dims) {
  Dims out;
  for (int64_t d : dims) out.push_back(shape[static_cast<size_t>(d)]);
  return out;
}

Dims concat(int64_t a, int64_t b, const Dims& rest) {
  Dims out = {a, b};
  out.insert(out.end(), rest.begin(), rest.end());
  return out;
}

// The forward convolution is one cuDNN runs: positive sizes, strides and dilations, whole groups,
// non-negative symmetric padding that gives the output size it has.
bool isForwardConvolution(const ConvolutionGradient& g) {
  if (g.batch <= 0 || g.inFeatures <= 0 || g.outFeatures <= 0 || g.groups <= 0) return false;
  if (g.inFeatures % g.groups != 0 || g.outFeatures % g.groups != 0) return false;
  for (size_t d = 0; d < g.inputSize.size(); ++d) {
    if (g.inputSize[d] <= 0 || g.windowSize[d] <= 0 || g.outputSize[d] <= 0) return false;
    if (g.strides[d] < 1 || g.dilations[d] < 1 || g.padding[d] < 0) return false;
    if (windowOutputSize(g.inputSize[d], g.windowSize[d], g.strides[d], g.padding[d], g.padding[d], 1,
                         g.dilations[d]) != g.outputSize[d])
      return false;
  }
  return true;
}

// dw = conv(x, dy): x's batch dim is the op's input feature dim and its features the op's input
// batch, dy is the kernel (its batch the kernel's input features), dw [K, C/groups, window...] is
// the result with K as its feature dim; batch groups split x's features as the forward's groups.
std::optional<ConvolutionGradient> recognizeFilter(const ConvAttrs& a, const Dims& lhs, const Dims& rhs,
                                                   const Dims& result) {
  if (a.featureGroups != 1 || !allEqual(a.lhsDilation, 1)) return std::nullopt;
  ConvolutionGradient g;
  g.kind = ConvolutionGradient::Kind::kFilter;
  g.xDims = concat(a.inFeature, a.inBatch, a.inSp);
  g.yDims = concat(a.kIn, a.kOut, a.kSp);
  g.wDims = concat(a.outFeature, a.outBatch, a.outSp);
  g.batch = lhs[static_cast<size_t>(a.inFeature)];
  g.inFeatures = lhs[static_cast<size_t>(a.inBatch)];
  g.outFeatures = rhs[static_cast<size_t>(a.kOut)];
  g.groups = a.batchGroups;
  g.inputSize = sizesOf(lhs, a.inSp);
  g.outputSize = sizesOf(rhs, a.kSp);
  g.windowSize = sizesOf(result, a.outSp);
  g.strides = a.rhsDilation;
  g.dilations = a.strides;
  g.padding = a.padLow;
  if (!isForwardConvolution(g)) return std::nullopt;
  if (rhs[static_cast<size_t>(a.kIn)] != g.batch || result[static_cast<size_t>(a.outFeature)] != g.outFeatures ||
      result[static_cast<size_t>(a.outBatch)] != g.inFeatures / g.groups)
    return std::nullopt;
  // The op's own window arithmetic gives its result (its high padding only sizes it).
  for (size_t d = 0; d < g.inputSize.size(); ++d)
    if (windowOutputSize(g.inputSize[d], g.outputSize[d], a.strides[d], a.padLow[d], a.padHigh[d], 1,
                         a.rhsDilation[d]) != g.windowSize[d])
      return std::nullopt;
  // Without batch groups a forward convolution is no worse where the window is no larger than
  // the result (and a plain forward convolution has that form too).
  if (g.groups == 1 && product(g.outputSize) <= product(g.windowSize)) return std::nullopt;
  return g;
}

// dx = conv(dy, kernel): dy is the input, the kernel [C, K/groups, window...] has the forward's
// input features as its output features, dx is the result; the forward's strides are the op's
// lhs_dilation, its padding what the op's low padding leaves of the dilated window.
std::optional<ConvolutionGradient> recognizeData(const ConvAttrs& a, const Dims& lhs, const Dims& rhs,
                                                 const Dims& result) {
  if (a.batchGroups != 1 || !allEqual(a.strides, 1)) return std::nullopt;
  // Undilated, it is an ordinary convolution that the forward kernels run as well.
  if (allEqual(a.lhsDilation, 1)) return std::nullopt;
  ConvolutionGradient g;
  g.kind = ConvolutionGradient::Kind::kData;
  g.yDims = concat(a.inBatch, a.inFeature, a.inSp);
  g.xDims = concat(a.outBatch, a.outFeature, a.outSp);
  g.wDims = concat(a.kOut, a.kIn, a.kSp);
  g.batch = lhs[static_cast<size_t>(a.inBatch)];
  g.outFeatures = lhs[static_cast<size_t>(a.inFeature)];
  g.inFeatures = result[static_cast<size_t>(a.outFeature)];
  g.groups = a.featureGroups;
  g.inputSize = sizesOf(result, a.outSp);
  g.outputSize = sizesOf(lhs, a.inSp);
  g.windowSize = sizesOf(rhs, a.kSp);
  g.strides = a.lhsDilation;
  g.dilations = a.rhsDilation;
  for (size_t d = 0; d < g.windowSize.size(); ++d)
    g.padding.push_back(dilatedSize(g.windowSize[d], g.dilations[d]) - 1 - a.padLow[d]);
  if (!isForwardConvolution(g)) return std::nullopt;
  if (result[static_cast<size_t>(a.outBatch)] != g.batch || rhs[static_cast<size_t>(a.kOut)] != g.inFeatures ||
      rhs[static_cast<size_t>(a.kIn)] != g.outFeatures / g.groups)
    return std::nullopt;
  for (size_t d = 0; d < g.inputSize.size(); ++d)
    if (windowOutputSize(g.outputSize[d], g.windowSize[d], 1, a.padLow[d], a.padHigh[d], a.lhsDilation[d],
                         a.rhsDilation[d]) != g.inputSize[d])
      return std::nullopt;
  return g;
}

}  // namespace

std::optional<ConvolutionGradient> recognizeConvolutionGradient(const Operation& op) {
  if (op.code() != OpCode::Convolution || op.numOperands() != 2 || op.numResults() != 1) return std::nullopt;
  const Type& lt = op.operand(0)->type();
  const Type& rt = op.operand(1)->type();
  const Type& yt = op.result(0)->type();
  if (!lt.hasStaticShape() || !rt.hasStaticShape() || !yt.hasStaticShape()) return std::nullopt;
  if (lt.rank() != rt.rank() || lt.rank() != yt.rank()) return std::nullopt;
  std::optional<ConvAttrs> a = readAttrs(op, static_cast<size_t>(lt.rank()));
  if (!a) return std::nullopt;
  if (const Attribute* rev = op.attr("window_reversal"))
    if (auto flags = rev->asIntList(); !flags || !allEqual(*flags, 0)) return std::nullopt;
  // Every dim named once, within the rank.
  const int64_t rank = lt.rank();
  auto permutation = [&](const Dims& dims) {
    Dims sorted = dims;
    std::sort(sorted.begin(), sorted.end());
    for (size_t i = 0; i < sorted.size(); ++i)
      if (sorted[i] != static_cast<int64_t>(i)) return false;
    return static_cast<int64_t>(sorted.size()) == rank;
  };
  if (!permutation(concat(a->inBatch, a->inFeature, a->inSp)) || !permutation(concat(a->kOut, a->kIn, a->kSp)) ||
      !permutation(concat(a->outBatch, a->outFeature, a->outSp)))
    return std::nullopt;
  if (auto g = recognizeFilter(*a, lt.shape(), rt.shape(), yt.shape())) return g;
  return recognizeData(*a, lt.shape(), rt.shape(), yt.shape());
}

}  // namespace wf
