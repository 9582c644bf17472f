// stablehlo.convolution for integer element types, which cuDNN has no kernel for: one thread per
// result element sums over its window and its feature group, products and sums wrapping in the
// result type (the bits the CPU backend's int64 sums give once narrowed). Any dimension numbers,
// strides, padding (negative included), lhs and rhs dilation, window reversal and feature groups;
// not batch groups. Correct, not tuned: the models' convolutions are floats and go to cuDNN.
#include <string>

#include "backends/cpu/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_util.cuh"

namespace wf::cuda {
namespace {

constexpr int kMaxSpatial = kMaxRank - 2;

struct DirectConvPlan {
  int64_t n = 0;  // result elements
  int outRank = 0;
  int64_t outDims[kMaxRank] = {};
  int outBatch = 0, outFeature = 0, outSpatial[kMaxSpatial] = {};
  int spatial = 0;
  int64_t inStrideBatch = 0, inStrideFeature = 0, inStride[kMaxSpatial] = {}, inSize[kMaxSpatial] = {};
  int64_t kStrideIn = 0, kStrideOut = 0, kStride[kMaxSpatial] = {}, kSize[kMaxSpatial] = {};
  int64_t windowStride[kMaxSpatial] = {}, padLow[kMaxSpatial] = {}, lhsDil[kMaxSpatial] = {}, rhsDil[kMaxSpatial] = {};
  bool reversed[kMaxSpatial] = {};
  int64_t inFeaturesPerGroup = 1, outFeaturesPerGroup = 1;
  int64_t windowElements = 1;
};

template <typename U>
__global__ void directConvolution(const U* __restrict__ x, const U* __restrict__ w, U* __restrict__ y, DirectConvPlan p) {
  WF_GRID_STRIDE_LOOP(i, p.n) {
    int64_t c[kMaxRank];
    int64_t rest = i;
    for (int d = p.outRank - 1; d >= 0; --d) {
      c[d] = rest % p.outDims[d];
      rest /= p.outDims[d];
    }
    const int64_t b = c[p.outBatch], of = c[p.outFeature];
    const int64_t group = of / p.outFeaturesPerGroup;
    U acc = 0;
    for (int64_t win = 0; win < p.windowElements; ++win) {
      // The window position, and where it lands in the padded, dilated input.
      int64_t kOff = 0, xOff = 0, wr = win;
      bool inside = true;
      for (int j = p.spatial - 1; j >= 0; --j) {
        const int64_t k = wr % p.kSize[j];
        wr /= p.kSize[j];
        kOff += (p.reversed[j] ? p.kSize[j] - 1 - k : k) * p.kStride[j];
        const int64_t at = c[p.outSpatial[j]] * p.windowStride[j] - p.padLow[j] + k * p.rhsDil[j];
        if (at < 0 || at % p.lhsDil[j] != 0 || at / p.lhsDil[j] >= p.inSize[j]) inside = false;
        xOff += (at / p.lhsDil[j]) * p.inStride[j];
      }
      if (!inside) continue;
      for (int64_t f = 0; f < p.inFeaturesPerGroup; ++f)
        acc += x[b * p.inStrideBatch + (group * p.inFeaturesPerGroup + f) * p.inStrideFeature + xOff] *
               w[f * p.kStrideIn + of * p.kStrideOut + kOff];
    }
    y[i] = acc;
  }
}

int64_t fieldOf(const Attribute& dn, const char* name) {
  const Attribute* f = dn.field(name);
  return f && f->asInt() ? *f->asInt() : -1;
}

}  // namespace

Expected<std::unique_ptr<OpKernel>> lowerDirectConvolution(const Operation& op) {
  const ElementType et = op.result(0)->type().elementType();
  if (!isInteger(et) || isF8OrSmaller(et) || op.operand(0)->type().elementType() != et ||
      op.operand(1)->type().elementType() != et)
    return unsupportedOnCuda(op, "no direct convolution kernel for these element types");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> xs, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ws, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ys, staticShape(op, op.result(0)->type()));
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing dimension_numbers");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inSp, cpu::structIntList(op, *dn, "input_spatial_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> kSp, cpu::structIntList(op, *dn, "kernel_spatial_dimensions"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outSp, cpu::structIntList(op, *dn, "output_spatial_dimensions"));
  const size_t r = inSp.size();
  if (kSp.size() != r || outSp.size() != r || r > static_cast<size_t>(kMaxSpatial) || ys.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "convolution of this rank");
  int64_t groups = 1;
  if (const Attribute* a = op.attr("feature_group_count")) groups = a->asInt().value_or(1);
  if (const Attribute* a = op.attr("batch_group_count"); a && a->asInt().value_or(1) != 1)
    return unsupportedOnCuda(op, "no direct convolution with batch_group_count");
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, cpu::intListAttrOr(op, "window_strides", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> lhsDil, cpu::intListAttrOr(op, "lhs_dilation", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> rhsDil, cpu::intListAttrOr(op, "rhs_dilation", std::vector<int64_t>(r, 1)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> pad, cpu::intListAttrOr(op, "padding", std::vector<int64_t>(2 * r, 0)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> reversal, cpu::intListAttrOr(op, "window_reversal", std::vector<int64_t>(r, 0)));
  if (strides.size() != r || lhsDil.size() != r || rhsDil.size() != r || pad.size() != 2 * r || reversal.size() != r)
    return invalidArgument(op.describe() + ": window attributes must have one entry per spatial dimension");
  const int64_t inFeature = fieldOf(*dn, "input_feature_dimension"), inBatch = fieldOf(*dn, "input_batch_dimension");
  const int64_t kIn = fieldOf(*dn, "kernel_input_feature_dimension"), kOut = fieldOf(*dn, "kernel_output_feature_dimension");
  const int64_t outBatch = fieldOf(*dn, "output_batch_dimension"), outFeature = fieldOf(*dn, "output_feature_dimension");
  if (inFeature < 0 || inBatch < 0 || kIn < 0 || kOut < 0 || outBatch < 0 || outFeature < 0 || groups < 1)
    return invalidArgument(op.describe() + ": incomplete dimension_numbers");
  const std::vector<int64_t> xst = rowMajorStridesOf(xs), wst = rowMajorStridesOf(ws);
  DirectConvPlan p;
  p.n = numElementsOf(ys);
  p.outRank = static_cast<int>(ys.size());
  for (size_t d = 0; d < ys.size(); ++d) p.outDims[d] = ys[d];
  p.outBatch = static_cast<int>(outBatch);
  p.outFeature = static_cast<int>(outFeature);
  p.spatial = static_cast<int>(r);
  p.inStrideBatch = xst[static_cast<size_t>(inBatch)];
  p.inStrideFeature = xst[static_cast<size_t>(inFeature)];
  p.kStrideIn = wst[static_cast<size_t>(kIn)];
  p.kStrideOut = wst[static_cast<size_t>(kOut)];
  for (size_t j = 0; j < r; ++j) {
    p.outSpatial[j] = static_cast<int>(outSp[j]);
    p.inStride[j] = xst[static_cast<size_t>(inSp[j])];
    p.inSize[j] = xs[static_cast<size_t>(inSp[j])];
    p.kStride[j] = wst[static_cast<size_t>(kSp[j])];
    p.kSize[j] = ws[static_cast<size_t>(kSp[j])];
    p.windowStride[j] = strides[j];
    p.padLow[j] = pad[2 * j];
    p.lhsDil[j] = lhsDil[j];
    p.rhsDil[j] = rhsDil[j];
    p.reversed[j] = reversal[j] != 0;
    if (strides[j] < 1 || lhsDil[j] < 1 || rhsDil[j] < 1)
      return invalidArgument(op.describe() + ": strides and dilations must be positive");
    p.windowElements *= p.kSize[j];
  }
  p.inFeaturesPerGroup = ws[static_cast<size_t>(kIn)];
  p.outFeaturesPerGroup = ys[static_cast<size_t>(outFeature)] / groups;
  if (p.outFeaturesPerGroup * groups != ys[static_cast<size_t>(outFeature)] ||
      p.inFeaturesPerGroup * groups != xs[static_cast<size_t>(inFeature)])
    return invalidArgument(op.describe() + ": feature counts do not divide into feature_group_count groups");
  const int bytes = storageBytes(et);
  return makeKernel([p, bytes](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) -> Status {
    if (p.n == 0) return Status::ok();
    // Signed and unsigned values of one width share their bits: compute on the unsigned view, so
    // that products and sums wrap.
    switch (bytes) {
      case 1: directConvolution<uint8_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(static_cast<const uint8_t*>(in[0]), static_cast<const uint8_t*>(in[1]), static_cast<uint8_t*>(out[0]), p); break;
      case 2: directConvolution<uint16_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(static_cast<const uint16_t*>(in[0]), static_cast<const uint16_t*>(in[1]), static_cast<uint16_t*>(out[0]), p); break;
      case 4: directConvolution<uint32_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(static_cast<const uint32_t*>(in[0]), static_cast<const uint32_t*>(in[1]), static_cast<uint32_t*>(out[0]), p); break;
      default: directConvolution<uint64_t><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(static_cast<const uint64_t*>(in[0]), static_cast<const uint64_t*>(in[1]), static_cast<uint64_t*>(out[0]), p); break;
    }
    WF_CUDA_CHECK_LAUNCH("directConvolution");
    return Status::ok();
  });
}

}  // namespace wf::cuda
