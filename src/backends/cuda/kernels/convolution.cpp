// stablehlo.convolution through cuDNN 9's convolution API (the descriptor-based one that cuDNN 9
// marks deprecated in favour of its graph API; it still ships and is what this file needs).
//
// The input and output keep their layouts: cuDNN takes an Nd tensor descriptor with the real
// strides of [N, C, spatial...] in whatever order the dimension numbers put them. The kernel must
// be packed [O, I, spatial...] (PyTorch's OIHW); other kernel layouts (JAX's HWIO) are first
// copied into that order in the workspace. 1-d convolutions get a unit spatial dim (cuDNN wants
// at least two). Supported: feature groups, strides, rhs dilation, padding, lhs dilation,
// window reversal, f32 (true f32 unless TF32 is allowed), f16 and bf16 (tensor cores, f32
// accumulation), f64. Symmetric non-negative padding goes to cuDNN as is. Lhs dilation (the
// transposed convolution PyTorch's ConvTranspose exports), asymmetric and negative padding are
// dilate-then-convolve: the input is first written into a zeroed workspace buffer of the padded,
// dilated shape (negative padding crops), which cuDNN then convolves unpadded. Window reversal
// flips the kernel as it is repacked. Integers (any result width) and batch groups, which cuDNN
// has no kernel for, go to the direct kernel in convolution_direct.cu; mixed float types are
// unsupported (unimplemented, so the op can run on the host).
#ifdef WF_HAVE_CUDNN

#include <algorithm>
#include <chrono>
#include <limits>
#include <mutex>
#include <string>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/cudnn_descriptors.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/kernels/convolution_backward.h"
#include "backends/cuda/tuning.h"
#include "ir/window.h"

// The descriptor API is deprecated in cuDNN 9 (it warns on every use); it is the supported way to
// run a plain convolution without the graph API, so the warnings are silenced for this file.
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"

namespace wf::cuda {
namespace {


class ConvKernel final : public OpKernel {
 public:
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (empty_) return Status::ok();
    const void* w = in[1];
    const void* x = in[0];
    if (inputBytes_ > 0) {
      void* dst = static_cast<char*>(ctx.workspace) + inputOffset_;
      WF_CUDA_CHECK(cudaMemsetAsync(dst, 0, inputBytes_, ctx.stream));
      if (inputCopy_) WF_RETURN_IF_ERROR(launchStridedCopy(ctx.stream, elemBytes_, *inputCopy_, in[0], dst));
      x = dst;
    }
    if (ctx.workspaceBytes < cudnnOffset_ + cudnnBytes_) return internalError("convolution workspace too small");
    // The device's cuDNN handle is shared by its executables: bind the stream and launch as one.
    std::lock_guard<std::mutex> lock(ctx.device->cudnnLaunchMutex());
    WF_CUDNN_CHECK(cudnnSetStream(handle_, ctx.stream));
    WF_CUDNN_CHECK(cudnnConvolutionForward(handle_, alpha(), x_.get(), x, w_.get(), w, conv_.get(), algo_,
                                           static_cast<char*>(ctx.workspace) + cudnnOffset_, cudnnBytes_, beta(),
                                           y_.get(), out[0]));
    return Status::ok();
  }

  // 1 and 0 in the scaling type cuDNN reads for the convolution's data type.
  const void* alpha() const { return useDouble_ ? static_cast<const void*>(&alphaD_) : static_cast<const void*>(&alphaF_); }
  const void* beta() const { return useDouble_ ? static_cast<const void*>(&betaD_) : static_cast<const void*>(&betaF_); }

  bool empty_ = false;
  cudnnHandle_t handle_ = nullptr;
  int elemBytes_ = 0;
  // Dilate-then-convolve: the padded, dilated input in the workspace (null copy: all padding).
  std::shared_ptr<const StridedCopyPlan> inputCopy_;
  size_t inputOffset_ = 0;
  size_t inputBytes_ = 0;
  size_t cudnnOffset_ = 0;
  size_t cudnnBytes_ = 0;
  bool useDouble_ = false;
  float alphaF_ = 1, betaF_ = 0;
  double alphaD_ = 1, betaD_ = 0;
  TensorDesc x_, y_;
  FilterDesc w_;
  ConvDesc conv_;
  cudnnConvolutionFwdAlgo_t algo_{};
};

struct ConvolutionAlgorithm {
  cudnnConvolutionFwdAlgo_t algo{};
  size_t workspaceBytes = 0;
};

// Of `candidates` (cuDNN's heuristics' ranking, each usable as it is), the fastest for the
// convolution `k` describes, timed once per problem and kept (tuning.h): the heuristics' first
// choice is often not the fastest for bf16 channels-last convolutions. `problem` names the
// convolution whole; x, w and y take xBytes, wBytes and yBytes. `onTensorCores`: the convolution
// runs on tensor cores (convolutionOnTensorCores).
Expected<ConvolutionAlgorithm> tuneConvolution(LowerContext& ctx, const ConvKernel& k, size_t xBytes, size_t wBytes,
                                               size_t yBytes, const std::string& problem,
                                               const std::vector<ConvolutionAlgorithm>& candidates,
                                               bool onTensorCores) {
  if (candidates.size() == 1) return candidates.front();
  // Candidates that need more workspace than the heuristics' first choice or 32 MiB, whichever is
  // more, are not timed on tensor cores: the workspace is device memory the whole model holds.
  // Off tensor cores (f32 without TF32, f64) the fastest algorithm is often past the first four
  // or needs a large workspace (FFT, Winograd), so twice as many are timed and only the
  // lowering's 256 MiB cap applies. ResNet-50 b32 true f32 on an H200: 8.20 ms, against 9.89
  // with the tensor-core rule, 9.02 with four timed and no cap, 9.80 with eight under the cap
  // (bench/README); its peak memory went from 404 to 340 MiB.
  const size_t workspaceCap = onTensorCores ? std::max(candidates.front().workspaceBytes, size_t{32} << 20)
                                            : std::numeric_limits<size_t>::max();
  const size_t maxTimed = static_cast<size_t>(onTensorCores ? kTunedCandidates : 2 * kTunedCandidates);
  const std::string what = "cudnnConvolutionForward " + std::to_string(cudnnGetVersion()) + " timed " +
                           std::to_string(maxTimed) + " " + problem;
  WF_ASSIGN_OR_RETURN(std::optional<std::string> known, loadTuningDecision(ctx.device, ctx.options, what));
  if (known)
    for (const ConvolutionAlgorithm& c : candidates)
      if (std::to_string(static_cast<int>(c.algo)) == *known) return c;
  const auto tuningStart = std::chrono::steady_clock::now();
  TuningBuffer xb, wb, yb, wsb;
  std::vector<ConvolutionAlgorithm> timedCandidates;
  for (const ConvolutionAlgorithm& c : candidates)
    if (c.workspaceBytes <= workspaceCap && timedCandidates.size() < maxTimed) timedCandidates.push_back(c);
  const size_t timed = timedCandidates.size();
  size_t workspace = 0;
  for (const ConvolutionAlgorithm& c : timedCandidates) workspace = std::max(workspace, c.workspaceBytes);
  WF_RETURN_IF_ERROR(xb.allocate(xBytes));
  WF_RETURN_IF_ERROR(wb.allocate(wBytes));
  WF_RETURN_IF_ERROR(yb.allocate(yBytes));
  WF_RETURN_IF_ERROR(wsb.allocate(workspace));
  // cuDNN ranks NHWC algorithms that it then rejects with BAD_PARAM: fastestCandidate passes
  // over them.
  std::lock_guard<std::mutex> lock(ctx.device.cudnnLaunchMutex());
  const size_t fastest = fastestCandidate(timed, [&](size_t i, cudaStream_t stream) -> Status {
    const ConvolutionAlgorithm& c = timedCandidates[i];
    WF_CUDNN_CHECK(cudnnSetStream(k.handle_, stream));
    WF_CUDNN_CHECK(cudnnConvolutionForward(k.handle_, k.alpha(), k.x_.get(), xb.data(), k.w_.get(), wb.data(),
                                           k.conv_.get(), c.algo, wsb.data(), c.workspaceBytes, k.beta(), k.y_.get(),
                                           yb.data()));
    return Status::ok();
  }, what, [&](size_t i) {
    return "algo " + std::to_string(static_cast<int>(timedCandidates[i].algo)) + " (workspace " +
           std::to_string(timedCandidates[i].workspaceBytes) + " B)";
  });
  const ConvolutionAlgorithm best = timedCandidates[fastest];
  const double millis =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - tuningStart).count();
  WF_RETURN_IF_ERROR(
      storeTuningDecision(ctx.device, ctx.options, what, std::to_string(static_cast<int>(best.algo)), millis));
  return best;
}

Expected<int64_t> field(const Operation& op, const Attribute& dn, const char* name) {
  const Attribute* f = dn.field(name);
  std::optional<int64_t> v = f ? f->asInt() : std::nullopt;
  if (!v) return invalidArgument(op.describe() + ": dimension_numbers lacks " + name);
  return *v;
}


Expected<std::unique_ptr<OpKernel>> lowerConvolution(const Operation& op, LowerContext& ctx) {
  // A convolution's data or filter gradient runs as cuDNN's backward kernel where it takes it.
  if (auto gradient = lowerConvolutionGradient(op, ctx)) return std::move(*gradient);
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> xs, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ws, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> ys, staticShape(op, op.result(0)->type()));
  const ElementType et = op.operand(0)->type().elementType();
  int64_t groups = 1, batchGroups = 1;
  if (const Attribute* a = op.attr("feature_group_count")) groups = a->asInt().value_or(1);
  if (const Attribute* a = op.attr("batch_group_count")) batchGroups = a->asInt().value_or(1);
  // cuDNN has neither integer convolutions nor batch groups.
  if (isInteger(et) || batchGroups != 1) {
    // The direct kernel reads row-major storage; the planner gives channels-last only to
    // convolutions convolutionTakesChannelsLast accepts, which these are not.
    if (ctx.operandStrides || ctx.resultStrides)
      return internalError(op.describe() + ": channels-last storage for the direct convolution kernel");
    return lowerDirectConvolution(op);
  }
  if (op.operand(1)->type().elementType() != et || op.result(0)->type().elementType() != et)
    return unsupportedOnCuda(op, "no cuDNN convolution with mixed element types");
  cudnnDataType_t dt;
  cudnnDataType_t computeType = CUDNN_DATA_FLOAT;
  switch (et) {
    case ElementType::kF32: dt = CUDNN_DATA_FLOAT; break;
    case ElementType::kF16: dt = CUDNN_DATA_HALF; break;
    case ElementType::kBF16: dt = CUDNN_DATA_BFLOAT16; break;
    case ElementType::kF64: dt = computeType = CUDNN_DATA_DOUBLE; break;
    default: return unsupportedOnCuda(op, "no cuDNN convolution for element type " + std::string(elementTypeName(et)));
  }
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing dimension_numbers");
  WF_ASSIGN_OR_RETURN(int64_t inBatch, field(op, *dn, "input_batch_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t inFeature, field(op, *dn, "input_feature_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t kIn, field(op, *dn, "kernel_input_feature_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t kOut, field(op, *dn, "kernel_output_feature_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t outBatch, field(op, *dn, "output_batch_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t outFeature, field(op, *dn, "output_feature_dimension"));
  auto list = [&](const char* name) {
    const Attribute* f = dn->field(name);
    return f ? f->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> inSp = list("input_spatial_dimensions"), kSp = list("kernel_spatial_dimensions"),
                             outSp = list("output_spatial_dimensions");
  const size_t r = inSp.size();
  if (kSp.size() != r || outSp.size() != r || r == 0 || r > 3)
    return unsupportedOnCuda(op, "no cuDNN convolution with " + std::to_string(r) + " spatial dims");
  const std::vector<int64_t> strides = windowAttributeOr(op, "window_strides", r, 1);
  const std::vector<int64_t> lhsDil = windowAttributeOr(op, "lhs_dilation", r, 1);
  const std::vector<int64_t> rhsDil = windowAttributeOr(op, "rhs_dilation", r, 1);
  const std::vector<int64_t> reversal = windowAttributeOr(op, "window_reversal", r, 0);
  const std::vector<int64_t> pad = windowAttributeOr(op, "padding", 2 * r, 0);
  if (strides.size() != r || lhsDil.size() != r || rhsDil.size() != r || pad.size() != 2 * r)
    return invalidArgument(op.describe() + ": window attributes must have one entry per spatial dimension");
  bool dilateInput = false;  // lhs dilation, asymmetric or negative padding: dilate-then-convolve
  for (size_t d = 0; d < r; ++d) {
    if (lhsDil[d] < 1 || strides[d] < 1 || rhsDil[d] < 1)
      return invalidArgument(op.describe() + ": strides and dilations must be positive");
    if (lhsDil[d] != 1 || pad[2 * d] != pad[2 * d + 1] || pad[2 * d] < 0) dilateInput = true;
  }
  const bool reversed = reversal.size() == r && std::any_of(reversal.begin(), reversal.end(), [](int64_t v) { return v != 0; });

  auto k = std::make_unique<ConvKernel>();
  k->elemBytes_ = storageBytes(et);
  if (numElementsOf(ys) == 0) {
    k->empty_ = true;
    return std::unique_ptr<OpKernel>(std::move(k));
  }
  if (numElementsOf(xs) == 0 || numElementsOf(ws) == 0)
    return unsupportedOnCuda(op, "no cuDNN convolution over an empty input or kernel");
  WF_ASSIGN_OR_RETURN(k->handle_, ctx.device.cudnn());
  const bool pad1d = r == 1;  // cuDNN takes at least 2 spatial dims

  // Input and output: dims [N, C, spatial...] with their real strides.
  auto nc = [&](const std::vector<int64_t>& shape, const std::vector<int64_t>& s, int64_t b, int64_t f,
                const std::vector<int64_t>& sp, std::vector<int>& dims, std::vector<int>& strd) {
    dims = {static_cast<int>(shape[static_cast<size_t>(b)]), static_cast<int>(shape[static_cast<size_t>(f)])};
    strd = {static_cast<int>(s[static_cast<size_t>(b)]), static_cast<int>(s[static_cast<size_t>(f)])};
    for (int64_t d : sp) {
      dims.push_back(static_cast<int>(shape[static_cast<size_t>(d)]));
      strd.push_back(static_cast<int>(s[static_cast<size_t>(d)]));
    }
    if (pad1d) {
      dims.push_back(1);
      strd.push_back(1);
    }
  };
  // Dilate-then-convolve: input element i of spatial dim d lands at padLo + i * lhsDil in a
  // zeroed buffer of (size - 1) * lhsDil + 1 + padLo + padHi (elements outside it are cropped).
  std::vector<int64_t> xsConv = xs;
  size_t wsEnd = 0;
  std::vector<int64_t> box = xs, dstStrides, srcStrides = rowMajorStridesOf(xs);
  int64_t dstOffset = 0, srcOffset = 0;
  bool anyCopied = true;
  if (dilateInput) {
    for (size_t j = 0; j < r; ++j) {
      const auto d = static_cast<size_t>(inSp[j]);
      const int64_t size = dilatedSize(xs[d], lhsDil[j]) + pad[2 * j] + pad[2 * j + 1];
      if (size <= 0) return unsupportedOnCuda(op, "no cuDNN convolution: padding crops the whole input");
      xsConv[d] = size;
    }
    dstStrides = rowMajorStridesOf(xsConv);
    std::vector<int64_t> dstSteps = dstStrides;
    for (size_t j = 0; j < r; ++j) {
      const auto d = static_cast<size_t>(inSp[j]);
      const int64_t lo = pad[2 * j], dil = lhsDil[j];
      // First and last input index that land inside [0, size).
      const int64_t first = lo >= 0 ? 0 : (-lo + dil - 1) / dil;
      const int64_t room = xsConv[d] - 1 - lo;  // may be negative: floor division
      const int64_t last = std::min(xs[d] - 1, room >= 0 ? room / dil : -((-room + dil - 1) / dil));
      box[d] = last - first + 1;
      if (box[d] <= 0) anyCopied = false;
      dstSteps[d] = dstStrides[d] * dil;
      dstOffset += (lo + first * dil) * dstStrides[d];
      srcOffset += first * srcStrides[d];
    }
    k->inputBytes_ = static_cast<size_t>(numElementsOf(xsConv)) * static_cast<size_t>(k->elemBytes_);
    if (anyCopied) {
      WF_ASSIGN_OR_RETURN(k->inputCopy_, planStridedCopy(op, box, dstSteps, srcStrides, dstOffset, srcOffset));
    }
  }
  // Channels-last storage chosen by the planner (convolutionTakesChannelsLast).
  if (ctx.operandStrides && dilateInput) return internalError(op.describe() + ": a channels-last input to dilate");
  std::vector<int> xd, xstr, yd, ystr;
  nc(xsConv, ctx.operandStrides ? *ctx.operandStrides : rowMajorStridesOf(xsConv), inBatch, inFeature, inSp, xd, xstr);
  nc(ys, ctx.resultStrides ? *ctx.resultStrides : rowMajorStridesOf(ys), outBatch, outFeature, outSp, yd, ystr);
  WF_ASSIGN_OR_RETURN(k->x_, tensorDesc(dt, xd, xstr));
  WF_ASSIGN_OR_RETURN(k->y_, tensorDesc(dt, yd, ystr));

  // Kernel: packed [O, I, spatial...], or with a channels-last input [O, spatial..., I] (cuDNN's
  // NHWC filter format, which its NHWC tensor-core kernels read without a transform). Where the
  // operand is not stored so, a step of its own repacks it (LowerContext::operandCopies): a
  // weight's repacking is then hoisted out of the run.
  std::vector<int64_t> order = {kOut, kIn};
  order.insert(order.end(), kSp.begin(), kSp.end());
  const bool channelsLast = ctx.operandStrides != nullptr && r == 2;
  std::vector<int64_t> reversedSpatial;
  for (size_t j = 0; j < r && reversed; ++j)
    if (reversal[j] != 0) reversedSpatial.push_back(kSp[j]);
  WF_RETURN_IF_ERROR(requestPackedFilter(op, ws, order, reversedSpatial, channelsLast, ctx));
  std::vector<int> wd;
  for (int64_t d : order) wd.push_back(static_cast<int>(ws[static_cast<size_t>(d)]));
  if (pad1d) wd.push_back(1);
  size_t wsOffset = 0;
  if (dilateInput) {
    k->inputOffset_ = wsOffset;
    wsOffset += (k->inputBytes_ + 255) / 256 * 256;
  }
  wsEnd = wsOffset;
  cudnnFilterDescriptor_t fd = nullptr;
  WF_CUDNN_CHECK(cudnnCreateFilterDescriptor(&fd));
  k->w_ = FilterDesc(fd);
  WF_CUDNN_CHECK(cudnnSetFilterNdDescriptor(fd, dt, channelsLast ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                            static_cast<int>(wd.size()), wd.data()));

  std::vector<int> padA, strideA, dilA;
  for (size_t d = 0; d < r; ++d) {
    padA.push_back(dilateInput ? 0 : static_cast<int>(pad[2 * d]));
    strideA.push_back(static_cast<int>(strides[d]));
    dilA.push_back(static_cast<int>(rhsDil[d]));
  }
  if (pad1d) {
    padA.push_back(0);
    strideA.push_back(1);
    dilA.push_back(1);
  }
  cudnnConvolutionDescriptor_t cd = nullptr;
  WF_CUDNN_CHECK(cudnnCreateConvolutionDescriptor(&cd));
  k->conv_ = ConvDesc(cd);
  WF_CUDNN_CHECK(cudnnSetConvolutionNdDescriptor(cd, static_cast<int>(padA.size()), padA.data(), strideA.data(),
                                                 dilA.data(), CUDNN_CROSS_CORRELATION, computeType));
  WF_CUDNN_CHECK(cudnnSetConvolutionGroupCount(cd, static_cast<int>(groups)));
  const cudnnMathType_t math = convolutionMathType(et, ctx.options);
  WF_CUDNN_CHECK(cudnnSetConvolutionMathType(cd, math));

  // The output shape cuDNN derives must be the declared one.
  std::vector<int> derived(yd.size());
  WF_CUDNN_CHECK(cudnnGetConvolutionNdForwardOutputDim(cd, k->x_.get(), fd, static_cast<int>(derived.size()),
                                                       derived.data()));
  if (derived != yd) return unsupportedOnCuda(op, "cuDNN derives another output shape for this convolution");

  constexpr size_t kMaxWorkspace = size_t{256} << 20;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  WF_CUDNN_CHECK(cudnnGetConvolutionForwardAlgorithm_v7(k->handle_, k->x_.get(), fd, cd, k->y_.get(),
                                                        CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf));
  std::vector<ConvolutionAlgorithm> candidates;
  for (int i = 0; i < found; ++i) {
    if (perf[i].status != CUDNN_STATUS_SUCCESS || perf[i].memory > kMaxWorkspace) continue;
    if (!convolutionMathAllowed(perf[i].mathType, et, ctx.options)) continue;
    candidates.push_back({perf[i].algo, perf[i].memory});
  }
  if (candidates.empty()) return unsupportedOnCuda(op, "cuDNN has no algorithm for this convolution");
  // Multiply-adds: every output element sums (input channels / groups) x window elements.
  double multiplyAdds = 1;
  for (int d : yd) multiplyAdds *= d;
  for (size_t d = 1; d < wd.size(); ++d) multiplyAdds *= wd[d];
  if (multiplyAdds < kTunedMinMultiplyAdds) candidates.resize(1);
  k->useDouble_ = et == ElementType::kF64;
  // Timed once per problem (tuning.h); the problem is everything the descriptors say.
  std::string problem;
  if (candidates.size() > 1) {
    problem = "type " + std::to_string(static_cast<int>(dt)) + " math " + std::to_string(static_cast<int>(math)) +
              " groups " + std::to_string(groups) + (channelsLast ? " nhwc-filter" : " nchw-filter");
    auto describe = [&](const char* name, const std::vector<int>& v) {
      problem += std::string(" ") + name;
      for (int e : v) problem += " " + std::to_string(e);
    };
    describe("x", xd);
    describe("xs", xstr);
    describe("w", wd);
    describe("y", yd);
    describe("ys", ystr);
    describe("pad", padA);
    describe("stride", strideA);
    describe("dil", dilA);
  }
  const auto bytesOf = [&](const std::vector<int>& d) {
    size_t n = static_cast<size_t>(k->elemBytes_);
    for (int e : d) n *= static_cast<size_t>(e);
    return n;
  };
  WF_ASSIGN_OR_RETURN(ConvolutionAlgorithm chosen,
                      tuneConvolution(ctx, *k, bytesOf(xd), bytesOf(wd), bytesOf(yd), problem, candidates,
                                      convolutionOnTensorCores(et, ctx.options)));
  k->algo_ = chosen.algo;
  k->cudnnBytes_ = chosen.workspaceBytes;
  k->cudnnOffset_ = wsOffset;
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, wsEnd + k->cudnnBytes_ + 256);
  return std::unique_ptr<OpKernel>(std::move(k));
}

}  // namespace

Status requestPackedFilter(const Operation& op, const std::vector<int64_t>& ws, const std::vector<int64_t>& order,
                           const std::vector<int64_t>& reversedSpatial, bool channelsLast, LowerContext& ctx) {
  const std::vector<int64_t> s = rowMajorStridesOf(ws);
  std::vector<int64_t> kbox, src;
  int64_t kOffset = 0;
  for (int64_t d : order) {
    kbox.push_back(ws[static_cast<size_t>(d)]);
    src.push_back(s[static_cast<size_t>(d)]);
  }
  // Window reversal: those spatial dims read backwards.
  for (size_t i = 2; i < order.size(); ++i) {
    const auto d = static_cast<size_t>(order[i]);
    if (std::find(reversedSpatial.begin(), reversedSpatial.end(), order[i]) == reversedSpatial.end()) continue;
    src[i] = -s[d];
    kOffset += (ws[d] - 1) * s[d];
  }
  std::vector<int64_t> dst = rowMajorStridesOf(kbox);
  if (channelsLast) dst = {kbox[1] * kbox[2] * kbox[3], 1, kbox[3] * kbox[1], kbox[1]};
  // Packed already when every dim of more than one element has the stride cuDNN reads (a 1x1
  // filter [O, I, 1, 1] is both formats at once).
  bool packed = kOffset == 0;
  for (size_t i = 0; i < kbox.size(); ++i) packed = packed && (kbox[i] == 1 || src[i] == dst[i]);
  if (packed) return Status::ok();
  WF_ASSIGN_OR_RETURN(std::shared_ptr<const StridedCopyPlan> repack, planStridedCopy(op, kbox, dst, src, 0, kOffset));
  const int elemBytes = storageBytes(op.operand(1)->type().elementType());
  ctx.operandCopies.push_back(
      {1, static_cast<size_t>(numElementsOf(ws)) * static_cast<size_t>(elemBytes),
       makeKernel([repack, elemBytes](const LaunchContext& c, std::span<void* const> in, std::span<void* const> out) {
         return launchStridedCopy(c.stream, elemBytes, *repack, in[0], out[0]);
       })});
  return Status::ok();
}

bool convolutionTakesChannelsLast(const Operation& op, const CompileOptions& options) {
  if (op.code() != OpCode::Convolution || op.numOperands() != 2 || op.numResults() != 1) return false;
  const Type& x = op.operand(0)->type();
  const Type& y = op.result(0)->type();
  if (!x.hasStaticShape() || !y.hasStaticShape() || x.rank() != 4 || y.rank() != 4) return false;
  const ElementType et = x.elementType();
  // f32 with TF32: cuDNN's NHWC TF32 tensor-core kernels. ResNet-50 b32 fp32 with TF32 ran 2.71 ms
  // channels-last against 3.41 NCHW on an H200 (XLA 3.07), the same error (6.5e-4 against fp32).
  // True f32 stays NCHW: there cuDNN's NHWC kernels (no tensor cores) ran ResNet-50 in 11.85 ms
  // against 9.89 NCHW.
  if (!convolutionOnTensorCores(et, options) || y.elementType() != et || op.operand(1)->type().elementType() != et)
    return false;
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return false;
  auto number = [&](const char* name) {
    const Attribute* f = dn->field(name);
    return f && f->asInt() ? *f->asInt() : int64_t{-1};
  };
  auto list = [&](const char* name) {
    const Attribute* f = dn->field(name);
    return f ? f->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
  };
  const std::vector<int64_t> spatial = {2, 3};
  if (number("input_batch_dimension") != 0 || number("input_feature_dimension") != 1 ||
      number("output_batch_dimension") != 0 || number("output_feature_dimension") != 1 ||
      list("input_spatial_dimensions") != spatial || list("output_spatial_dimensions") != spatial)
    return false;
  const std::vector<int64_t> lhsDil = windowAttributeOr(op, "lhs_dilation", 2, 1);
  const std::vector<int64_t> pad = windowAttributeOr(op, "padding", 4, 0);
  if (lhsDil.size() != 2 || pad.size() != 4 || lhsDil[0] != 1 || lhsDil[1] != 1) return false;
  for (size_t d = 0; d < 2; ++d)
    if (pad[2 * d] != pad[2 * d + 1] || pad[2 * d] < 0) return false;
  if (const Attribute* a = op.attr("batch_group_count"); a && a->asInt().value_or(1) != 1) return false;
  return true;
}

void registerConvolutionLowerings(CudaKernelRegistry& r) { r.add(OpCode::Convolution, lowerConvolution); }

}  // namespace wf::cuda

#else  // !WF_HAVE_CUDNN

#include "backends/cuda/kernel.h"

namespace wf::cuda {
// Without cuDNN every convolution the direct kernel takes runs on it (slowly: one thread per
// result element); the others fail compile, or run on the host with allowCpuFallback.
void registerConvolutionLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::Convolution, [](const Operation& op, LowerContext&) { return lowerDirectConvolution(op); });
}
bool convolutionTakesChannelsLast(const Operation&, const CompileOptions&) { return false; }
}  // namespace wf::cuda

#endif
