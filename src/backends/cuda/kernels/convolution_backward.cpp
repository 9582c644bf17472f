// The convolutions that compute a convolution's gradients (ir/conv_gradient.h: the forms autodiff
// writes) through cuDNN's backward kernels, as PyTorch runs them, rather than as forward
// convolutions: a data gradient of a strided convolution would otherwise convolve a dilated,
// mostly zero copy of dy, and a filter gradient would slide a window as large as the image.
//
// Data gradient, dx = conv(dy, kernel): cudnnConvolutionBackwardData(w, dy) -> dx. The kernel
// operand holds the forward's w transposed group by group and reversed in its window; it is
// copied back into w's [K, C/groups, window...] in the workspace (KCRS, or KRSC, cuDNN's NHWC
// filter format, for f16/bf16 activations whose features are innermost, as in JAX's NHWC),
// unless it already is that (a 1x1 window without groups).
// Filter gradient, dw = conv(x, dy): cudnnConvolutionBackwardFilter(x, dy) -> dw. cuDNN writes dw
// packed KCRS or KRSC; a result stored otherwise (JAX's HWIO) is written to the workspace and
// copied.
//
// x, dy and dx keep their layouts: cuDNN takes their real strides. 1-d convolutions get a unit
// spatial dim, as in convolution.cpp. Types: f32 (true f32 unless TF32 is allowed), f16 and bf16
// (tensor cores, f32 accumulation), f64; the algorithm is cuDNN's heuristic choice, made once
// here.
//
// These forms do not take the planner's channels-last storage (convolutionTakesChannelsLast), so
// an activation that a weight gradient reads stays row-major, its forward convolution's input
// too. They could: the descriptors below take any strides, and with NHWC activations w and dw
// go KRSC. But in a training step the batch norms' reductions read each convolution's output
// (the statistics) and the gradients that reach them (the backward sums), and a value a
// reduction reads stays row-major, so NHWC would reach only some of the activations, each switch
// between layouts a transposing fused kernel or a transform inside cuDNN: whether that beats
// cuDNN's own transforms of all-NCHW bf16 operands is for the GPU benchmark to say, before the
// planner gives these forms NHWC storage.
#ifdef WF_HAVE_CUDNN

#include "backends/cuda/kernels/convolution_backward.h"

#include <algorithm>
#include <string>
#include <vector>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/cudnn_descriptors.h"
#include "ir/conv_gradient.h"

// The descriptor API is deprecated in cuDNN 9 (see convolution.cpp).
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace wf::cuda {
namespace {


using Dims = std::vector<int64_t>;
using Kind = ConvolutionGradient::Kind;

constexpr size_t kAlign = 256;
constexpr size_t kMaxWorkspace = size_t{256} << 20;  // as the forward lowering

size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

class ConvGradientKernel final : public OpKernel {
 public:
  // Data: in = {dy, kernel}, out = {dx}. Filter: in = {x, dy}, out = {dw}.
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (ctx.workspaceBytes < cudnnOffset_ + cudnnBytes_)
      return internalError("convolution gradient: workspace too small");
    char* staging = static_cast<char*>(ctx.workspace);
    const void* w = in[1];
    if (kernelCopy_) {
      WF_RETURN_IF_ERROR(launchStridedCopy(ctx.stream, elemBytes_, *kernelCopy_, in[1], staging));
      w = staging;
    }
    void* dw = resultCopy_ ? static_cast<void*>(staging) : out[0];
    const void* alpha = useDouble_ ? static_cast<const void*>(&alphaD_) : static_cast<const void*>(&alphaF_);
    const void* beta = useDouble_ ? static_cast<const void*>(&betaD_) : static_cast<const void*>(&betaF_);
    void* cudnnWorkspace = static_cast<char*>(ctx.workspace) + cudnnOffset_;
    {
      std::lock_guard<std::mutex> lock(ctx.device->cudnnLaunchMutex());
      WF_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
      if (kind_ == Kind::kData) {
        WF_CUDNN_CHECK(cudnnConvolutionBackwardData(handle_, alpha, w_.get(), w, dy_.get(), in[0], conv_.get(),
                                                    dataAlgo_, cudnnWorkspace, cudnnBytes_, beta, x_.get(), out[0]));
      } else {
        WF_CUDNN_CHECK(cudnnConvolutionBackwardFilter(handle_, alpha, x_.get(), in[0], dy_.get(), in[1], conv_.get(),
                                                      filterAlgo_, cudnnWorkspace, cudnnBytes_, beta, w_.get(), dw));
      }
    }
    if (resultCopy_) WF_RETURN_IF_ERROR(launchStridedCopy(ctx.stream, elemBytes_, *resultCopy_, dw, out[0]));
    return Status::ok();
  }

  Kind kind_ = Kind::kData;
  cudnnHandle_t handle_ = nullptr;
  int elemBytes_ = 0;
  // Data: the kernel operand copied into w's packed layout at the start of the workspace.
  std::shared_ptr<const StridedCopyPlan> kernelCopy_;
  // Filter: dw written packed at the start of the workspace, then copied into the result.
  std::shared_ptr<const StridedCopyPlan> resultCopy_;
  size_t cudnnOffset_ = 0;
  size_t cudnnBytes_ = 0;
  bool useDouble_ = false;
  float alphaF_ = 1, betaF_ = 0;
  double alphaD_ = 1, betaD_ = 0;
  TensorDesc x_, dy_;  // x or dx; dy
  FilterDesc w_;       // w or dw
  ConvDesc conv_;
  cudnnConvolutionBwdDataAlgo_t dataAlgo_{};
  cudnnConvolutionBwdFilterAlgo_t filterAlgo_{};
};

// The entries of `v` (sizes or strides of a value's dims) in the order `dims` lists the dims.
Dims gather(const Dims& v, const Dims& dims) {
  Dims out;
  for (int64_t d : dims) out.push_back(v[static_cast<size_t>(d)]);
  return out;
}

std::vector<int> toInts(const Dims& v, bool pad1d, int fill) {
  std::vector<int> out;
  for (int64_t x : v) out.push_back(static_cast<int>(x));
  if (pad1d) out.push_back(fill);  // cuDNN takes at least two spatial dims
  return out;
}

Expected<TensorDesc> tensorDesc(cudnnDataType_t t, const Dims& sizes, const Dims& strides, bool pad1d) {
  return cuda::tensorDesc(t, toInts(sizes, pad1d, 1), toInts(strides, pad1d, 1));
}

// Strides of w's [K, C/groups, window...] packed in cuDNN's filter format: KCRS, or KRSC (2-d).
Dims packedFilterStrides(const Dims& sizes, bool nhwc) {
  if (!nhwc) return rowMajorStridesOf(sizes);
  const int64_t c = sizes[1], r = sizes[2], s = sizes[3];
  return {r * s * c, 1, s * c, c};
}

// The same storage: equal strides wherever the size is above 1.
bool sameLayout(const Dims& sizes, const Dims& a, const Dims& b) {
  for (size_t i = 0; i < sizes.size(); ++i)
    if (sizes[i] > 1 && a[i] != b[i]) return false;
  return true;
}

Expected<std::unique_ptr<OpKernel>> lowerGradient(const Operation& op, LowerContext& ctx, const ConvolutionGradient& g,
                                                  ElementType et, cudnnDataType_t dt, cudnnDataType_t computeType) {
  const bool data = g.kind == Kind::kData;
  const size_t r = g.inputSize.size();
  const bool pad1d = r == 1;
  WF_ASSIGN_OR_RETURN(Dims lhsShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(Dims rhsShape, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(Dims resultShape, staticShape(op, op.result(0)->type()));
  const Dims lhsStrides = ctx.operandStrides ? *ctx.operandStrides : rowMajorStridesOf(lhsShape);
  const Dims rhsStrides = rowMajorStridesOf(rhsShape);
  const Dims resultStrides = ctx.resultStrides ? *ctx.resultStrides : rowMajorStridesOf(resultShape);

  auto k = std::make_unique<ConvGradientKernel>();
  k->kind_ = g.kind;
  k->elemBytes_ = storageBytes(et);
  k->useDouble_ = et == ElementType::kF64;
  WF_ASSIGN_OR_RETURN(k->handle_, ctx.device.cudnn());

  // x (filter form: operand 0) or dx (data form: the result), and dy.
  const Dims& xShape = data ? resultShape : lhsShape;
  const Dims& xStore = data ? resultStrides : lhsStrides;
  const Dims& dyShape = data ? lhsShape : rhsShape;
  const Dims& dyStore = data ? lhsStrides : rhsStrides;
  const Dims xStrides = gather(xStore, g.xDims), dyStrides = gather(dyStore, g.yDims);
  WF_ASSIGN_OR_RETURN(k->x_, tensorDesc(dt, gather(xShape, g.xDims), xStrides, pad1d));
  WF_ASSIGN_OR_RETURN(k->dy_, tensorDesc(dt, gather(dyShape, g.yDims), dyStrides, pad1d));

  // w's format follows the activations: cuDNN's NHWC tensor-core kernels read a KRSC filter.
  const bool half = et == ElementType::kBF16 || et == ElementType::kF16;
  const bool nhwc = r == 2 && half && (xStrides[1] == 1 || dyStrides[1] == 1);
  const int64_t cPerGroup = g.inFeatures / g.groups, kPerGroup = g.outFeatures / g.groups;
  Dims wSizes = {g.outFeatures, cPerGroup};
  wSizes.insert(wSizes.end(), g.windowSize.begin(), g.windowSize.end());
  const Dims packed = packedFilterStrides(wSizes, nhwc);
  size_t stagingBytes = 0;
  if (data) {
    // operand1[gi*C/G + c, k, r...] = w[gi*K/G + k, c, window-1-r...]: read as the box
    // [groups, K/G, C/G, window...] of w, the kernel operand's window walked backwards.
    const Dims s = gather(rhsStrides, g.wDims);  // [C, K/G, window...]
    Dims box = {g.groups, kPerGroup, cPerGroup}, src = {s[0] * cPerGroup, s[1], s[0]},
         dst = {packed[0] * kPerGroup, packed[0], packed[1]};
    int64_t srcOffset = 0;
    for (size_t j = 0; j < r; ++j) {
      box.push_back(g.windowSize[j]);
      src.push_back(-s[2 + j]);
      dst.push_back(packed[2 + j]);
      srcOffset += (g.windowSize[j] - 1) * s[2 + j];
    }
    if (srcOffset != 0 || !sameLayout(box, src, dst)) {
      WF_ASSIGN_OR_RETURN(k->kernelCopy_, planStridedCopy(op, box, dst, src, 0, srcOffset));
      stagingBytes = static_cast<size_t>(numElementsOf(wSizes)) * static_cast<size_t>(k->elemBytes_);
    }
  } else {
    const Dims stored = gather(resultStrides, g.wDims);
    if (!sameLayout(wSizes, stored, packed)) {
      WF_ASSIGN_OR_RETURN(k->resultCopy_, planStridedCopy(op, wSizes, stored, packed, 0, 0));
      stagingBytes = static_cast<size_t>(numElementsOf(wSizes)) * static_cast<size_t>(k->elemBytes_);
    }
  }
  const std::vector<int> wDims = toInts(wSizes, pad1d, 1);
  cudnnFilterDescriptor_t fd = nullptr;
  WF_CUDNN_CHECK(cudnnCreateFilterDescriptor(&fd));
  k->w_ = FilterDesc(fd);
  WF_CUDNN_CHECK(cudnnSetFilterNdDescriptor(fd, dt, nhwc ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                            static_cast<int>(wDims.size()), wDims.data()));

  const std::vector<int> padA = toInts(g.padding, pad1d, 0), strideA = toInts(g.strides, pad1d, 1),
                         dilA = toInts(g.dilations, pad1d, 1);
  cudnnConvolutionDescriptor_t cd = nullptr;
  WF_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd));
  k->conv_ = ConvDesc(cd);
  WF_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(cd, static_cast<int>(padA.size()), padA.data(), strideA.data(),
                                                 dilA.data(), CUDNN_CROSS_CORRELATION, computeType));
  WF_CUDNN_CHECK(cudnnSetConvolutionGroupCount(cd, static_cast<int>(g.groups)));
  const cudnnMathType_t math = convolutionMathType(et, ctx.options);
  WF_CUDNN_CHECK(cudnnSetConvolutionMathType(cd, math));

  // The forward convolution cuDNN derives from these must give dy's shape.
  std::vector<int> derived(padA.size() + 2);
  WF_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(cd, k->x_.get(), fd, static_cast<int>(derived.size()),
                                                       derived.data()));
  if (derived != toInts(gather(dyShape, g.yDims), pad1d, 1))
    return unsupportedOnCuda(op, "cuDNN derives another output shape for this convolution's forward");

  bool chosen = false;
  if (data) {
    cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
    int found = 0;
    WF_CUDNN_CHECK(cudnnGetConvolutionBackwardDataAlgorithm_v7(k->handle_, fd, k->dy_.get(), cd, k->x_.get(),
                                                               CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf));
    for (int i = 0; i < found && !chosen; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace ||
          !convolutionMathAllowed(perf[i].mathType, et, ctx.options))
        continue;
      k->dataAlgo_ = perf[i].algo;
      k->cudnnBytes_ = perf[i].memory;
      chosen = true;
    }
  } else {
    cudnnConvolutionBwdFilterAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT];
    int found = 0;
    WF_CUDNN_CHECK(cudnnGetConvolutionBackwardFilterAlgorithm_v7(k->handle_, k->x_.get(), k->dy_.get(), cd, fd,
                                                                 CUDNN_CONVOLUTION_BWD_FILTER_ALGO_COUNT, &found, perf));
    for (int i = 0; i < found && !chosen; ++i) {
      if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace ||
          !convolutionMathAllowed(perf[i].mathType, et, ctx.options))
        continue;
      k->filterAlgo_ = perf[i].algo;
      k->cudnnBytes_ = perf[i].memory;
      chosen = true;
    }
  }
  if (!chosen) return unsupportedOnCuda(op, "cuDNN has no backward algorithm for this convolution");
  k->cudnnOffset_ = aligned(stagingBytes);
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, k->cudnnOffset_ + k->cudnnBytes_ + kAlign);
  return std::unique_ptr<OpKernel>(std::move(k));
}

}  // namespace

std::optional<Expected<std::unique_ptr<OpKernel>>> lowerConvolutionGradient(const Operation& op, LowerContext& ctx) {
  std::optional<ConvolutionGradient> g = recognizeConvolutionGradient(op);
  if (!g || g->inputSize.size() > 3) return std::nullopt;
  const ElementType et = op.operand(0)->type().elementType();
  if (op.operand(1)->type().elementType() != et || op.result(0)->type().elementType() != et) return std::nullopt;
  cudnnDataType_t dt;
  cudnnDataType_t computeType = CUDNN_DATA_FLOAT;
  switch (et) {
    case ElementType::kF32: dt = CUDNN_DATA_FLOAT; break;
    case ElementType::kF16: dt = CUDNN_DATA_HALF; break;
    case ElementType::kBF16: dt = CUDNN_DATA_BFLOAT16; break;
    case ElementType::kF64: dt = computeType = CUDNN_DATA_DOUBLE; break;
    default: return std::nullopt;
  }
  Expected<std::unique_ptr<OpKernel>> kernel = lowerGradient(op, ctx, *g, et, dt, computeType);
  // Where cuDNN has no backward algorithm, the forward lowering takes the op. (Channels-last
  // storage reaches this lowering only for ops the forward lowering takes it for too.)
  if (!kernel && kernel.status().code() == StatusCode::kUnimplemented) return std::nullopt;
  if (kernel && ctx.stats)
    ++(g->kind == Kind::kData ? ctx.stats->convolutionBackwardData : ctx.stats->convolutionBackwardFilter);
  return kernel;
}

}  // namespace wf::cuda

#endif
