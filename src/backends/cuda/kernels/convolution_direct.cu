// stablehlo.convolution on a direct kernel, for what cuDNN has no kernel for: integers (cuDNN has
// none) and batch groups (cuDNN has no such convolution), and every convolution in a build
// without cuDNN. One thread per result element sums over its window and its feature group; any
// dimension numbers, strides, padding (negative included), lhs and rhs dilation, window reversal,
// feature groups and batch groups. Correct, not tuned: the models' convolutions are floats
// without batch groups and go to cuDNN (convolution.cpp).
//
// Integers follow the CPU backend: operands widened to 64 bits by their own signedness, products
// and sums wrapping in 64 bits, the sum narrowed to the result type (si8 x si8 -> si32 included).
// Floats: f16 and bf16 accumulate in f32 and round once, f32 in f32, f64 in f64; operands and
// result of one type.
//
// Batch-grouped floats run here rather than as one cuDNN convolution per group: each group's
// input, kernel and output would be a sub-tensor at an offset, and cuDNN's tensor-core kernels
// want aligned pointers that such offsets do not give; batch groups are rare (the weight gradient
// of a grouped convolution), so one kernel that takes every type and layout is worth more than speed.
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

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
  // Where group g's input starts: g * inFeaturesPerGroup features in with feature groups,
  // g * (result batch) batches in with batch groups (the spec allows one kind of group at a time).
  int64_t groupInputStride = 0;
  int64_t windowElements = 1;
};

// InT: the operands' element traits (device_util.cuh); OutT: the result's; Acc: the sum's type.
template <typename InT, typename OutT, typename Acc>
__global__ void directConvolution(const typename InT::S* __restrict__ x, const typename InT::S* __restrict__ w,
                                  typename OutT::S* __restrict__ y, DirectConvPlan p) {
  WF_GRID_STRIDE_LOOP(i, p.n) {
    int64_t c[kMaxRank];
    int64_t rest = i;
    for (int d = p.outRank - 1; d >= 0; --d) {
      c[d] = rest % p.outDims[d];
      rest /= p.outDims[d];
    }
    const int64_t b = c[p.outBatch], of = c[p.outFeature];
    const int64_t group = of / p.outFeaturesPerGroup;
    const int64_t xBase = b * p.inStrideBatch + group * p.groupInputStride;
    Acc acc = 0;
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
        acc += static_cast<Acc>(InT::load(x[xBase + f * p.inStrideFeature + xOff])) *
               static_cast<Acc>(InT::load(w[f * p.kStrideIn + of * p.kStrideOut + kOff]));
    }
    y[i] = OutT::store(static_cast<typename OutT::C>(acc));
  }
}

template <typename InT, typename OutT, typename Acc>
Status launchDirectConvolution(const LaunchContext& ctx, const DirectConvPlan& p, std::span<void* const> in,
                               std::span<void* const> out) {
  directConvolution<InT, OutT, Acc><<<gridFor(p.n), kThreads, 0, ctx.stream>>>(
      static_cast<const typename InT::S*>(in[0]), static_cast<const typename InT::S*>(in[1]),
      static_cast<typename OutT::S*>(out[0]), p);
  WF_CUDA_CHECK_LAUNCH("directConvolution");
  return Status::ok();
}

using Launcher = Status (*)(const LaunchContext&, const DirectConvPlan&, std::span<void* const>,
                            std::span<void* const>);

// The kernel for these element types, chosen once at lowering time. Integer operands: the sum is
// kept in uint64_t (unsigned, so that it wraps) and stored through the unsigned type of the
// result's width (signed and unsigned results of one width share their bits). Floats: the result
// has the operands' type and the sum their compute type (f32 for f16 and bf16).
Launcher launcherFor(ElementType in, ElementType out) {
  return dispatchType(in, Launcher{nullptr}, [&](auto inT) -> Launcher {
    using InT = decltype(inT);
    if constexpr (InT::kCat == Cat::kSInt || InT::kCat == Cat::kUInt) {
      switch (storageBytes(out)) {
        case 1: return &launchDirectConvolution<InT, UIntT<uint8_t>, uint64_t>;
        case 2: return &launchDirectConvolution<InT, UIntT<uint16_t>, uint64_t>;
        case 4: return &launchDirectConvolution<InT, UIntT<uint32_t>, uint64_t>;
        default: return &launchDirectConvolution<InT, UIntT<uint64_t>, uint64_t>;
      }
    } else if constexpr (InT::kCat == Cat::kFloat) {
      return &launchDirectConvolution<InT, InT, typename InT::C>;
    } else {
      return nullptr;
    }
  });
}

bool isDirectInteger(ElementType t) { return isInteger(t) && storageBytes(t) <= 8 && !isF8OrSmaller(t); }
bool isDirectFloat(ElementType t) {
  return t == ElementType::kF16 || t == ElementType::kBF16 || t == ElementType::kF32 || t == ElementType::kF64;
}

int64_t fieldOf(const Attribute& dn, const char* name) {
  const Attribute* f = dn.field(name);
  return f && f->asInt() ? *f->asInt() : -1;
}

}  // namespace

Expected<std::unique_ptr<OpKernel>> lowerDirectConvolution(const Operation& op) {
  const ElementType in = op.operand(0)->type().elementType(), outType = op.result(0)->type().elementType();
  const bool types = op.operand(1)->type().elementType() == in &&
                     ((isDirectInteger(in) && isDirectInteger(outType)) || (isDirectFloat(in) && outType == in));
  if (!types)
    return unsupportedOnCuda(op, "no direct convolution kernel for " + std::string(elementTypeName(in)) + " x " +
                                     std::string(elementTypeName(op.operand(1)->type().elementType())) + " -> " +
                                     std::string(elementTypeName(outType)));
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
  int64_t featureGroups = 1, batchGroups = 1;
  if (const Attribute* a = op.attr("feature_group_count")) featureGroups = a->asInt().value_or(1);
  if (const Attribute* a = op.attr("batch_group_count")) batchGroups = a->asInt().value_or(1);
  if (featureGroups < 1 || batchGroups < 1 || (featureGroups > 1 && batchGroups > 1))
    return invalidArgument(op.describe() + ": invalid feature_group_count / batch_group_count");
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
  if (inFeature < 0 || inBatch < 0 || kIn < 0 || kOut < 0 || outBatch < 0 || outFeature < 0)
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
  // Groups (spec "convolution"): with feature groups, input features and kernel output features
  // split into `groups` chunks; with batch groups, input batches and kernel output features do.
  const int64_t groups = featureGroups * batchGroups;
  const auto at = [](const std::vector<int64_t>& v, int64_t d) { return v[static_cast<size_t>(d)]; };
  p.inFeaturesPerGroup = at(ws, kIn);
  p.outFeaturesPerGroup = at(ys, outFeature) / groups;
  if (p.outFeaturesPerGroup * groups != at(ys, outFeature) || at(ws, kOut) != at(ys, outFeature) ||
      p.inFeaturesPerGroup * featureGroups != at(xs, inFeature))
    return invalidArgument(op.describe() + ": feature counts do not divide into the groups");
  if (at(ys, outBatch) * batchGroups != at(xs, inBatch))
    return invalidArgument(op.describe() + ": the input batch is not batch_group_count times the result's");
  p.groupInputStride = featureGroups > 1 ? p.inFeaturesPerGroup * p.inStrideFeature : at(ys, outBatch) * p.inStrideBatch;
  if (p.outFeaturesPerGroup == 0) p.outFeaturesPerGroup = 1;  // no output features: no threads read it
  const Launcher launch = launcherFor(in, outType);
  if (!launch) return internalError(op.describe() + ": no direct convolution kernel for its element types");
  return makeKernel([p, launch](const LaunchContext& ctx, std::span<void* const> ins,
                                std::span<void* const> outs) -> Status {
    if (p.n == 0) return Status::ok();
    return launch(ctx, p, ins, outs);
  });
}

}  // namespace wf::cuda
