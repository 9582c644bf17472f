// How an op becomes device work: a Lowering, looked up by OpCode in the CudaKernelRegistry (a
// stablehlo.composite by its name), inspects one op (types, attributes, regions) at compile
// time and returns an OpKernel, the launch plan for that op in this program. At run time the
// executable calls launch() with the device addresses of the op's operands and results. One
// family of lowerings per file (elementwise.cu, data_movement.cu, reduce.cu, dot.cpp, ...), each
// adding itself in its register*Lowerings() function.
//
// A lowering that cannot handle an op (an element type or layout it lacks) returns
// StatusCode::kUnimplemented; the executable then fails compile() naming the op, or runs the
// op on the host when CompileOptions::allowCpuFallback is set. Any other error fails compile().
// A composite's lowering that returns kUnimplemented leaves the composite to its decomposition.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backends/cuda/device.h"
#include "ir/ir.h"
#include "runtime/backend.h"
#include "support/status.h"

namespace wf::cuda {

struct LaunchContext {
  cudaStream_t stream = nullptr;
  Device* device = nullptr;
  // Scratch memory shared by the program's kernels (they run one after another on `stream`):
  // at least the largest LowerContext::workspaceBytes any lowering asked for.
  void* workspace = nullptr;
  size_t workspaceBytes = 0;
};

class OpKernel {
 public:
  virtual ~OpKernel() = default;
  // Enqueues the op's work on ctx.stream. inputs/outputs: device addresses of the operands and
  // results, in order (null for zero-element tensors). Must not synchronise or allocate, so
  // that it can be captured into a CUDA graph.
  virtual Status launch(const LaunchContext& ctx, std::span<void* const> inputs, std::span<void* const> outputs) = 0;
  // Device memory the kernel holds for its workspaces.
  virtual size_t deviceBytes() const { return 0; }
};

using LaunchFn = std::function<Status(const LaunchContext&, std::span<void* const>, std::span<void* const>)>;

// An OpKernel from a function (the common case: everything is computed at lowering time and
// captured by value).
class FnKernel final : public OpKernel {
 public:
  explicit FnKernel(LaunchFn fn, size_t bytes = 0) : fn_(std::move(fn)), bytes_(bytes) {}
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    return fn_(ctx, in, out);
  }
  size_t deviceBytes() const override { return bytes_; }

 private:
  LaunchFn fn_;
  size_t bytes_;
};

inline std::unique_ptr<OpKernel> makeKernel(LaunchFn fn) { return std::make_unique<FnKernel>(std::move(fn)); }

struct LowerContext {
  Device& device;
  const CompileOptions& options;
  // A lowering that needs scratch memory at launch raises this to what it needs.
  size_t workspaceBytes = 0;
  // Storage strides (elements, per logical dim) the planner chose for the op's first operand and
  // its result where they are not row-major (channels-last around convolutions); null otherwise.
  // Only lowerings for which convolutionTakesChannelsLast() or poolTakesChannelsLast() holds get
  // them.
  const std::vector<int64_t>* operandStrides = nullptr;
  const std::vector<int64_t>* resultStrides = nullptr;
  // The plan's counts, for lowerings that report what they chose (null: not counted).
  ExecutableStats* stats = nullptr;
  // Operands the op's kernel reads in another layout (a convolution's filter in cuDNN's NHWC
  // order): the planner gives each copy a step of its own before the op's, writing a buffer of
  // `bytes` that the op's kernel then reads in place of the operand. `kernel` takes the operand
  // and writes that buffer. Being a step of its own, the copy of a weight is hoisted into the
  // prologue (plan.h) and done once, not on every run.
  struct OperandCopy {
    size_t operand = 0;
    size_t bytes = 0;
    std::unique_ptr<OpKernel> kernel;
  };
  std::vector<OperandCopy> operandCopies = {};
};

// True if `op` is a convolution whose input and output the cuDNN lowering can take channels-last
// (NHWC storage of NCHW dimension numbers): 2-d, f16 or bf16, or f32 where `options` allow TF32
// for convolutions (true f32 is faster NCHW), no input dilation or asymmetric padding
// (convolution.cpp). Not the gradient forms of convolution_backward.cpp (it says why).
bool convolutionTakesChannelsLast(const Operation& op, const CompileOptions& options);
// Asks for a convolution's filter (operand 1, shape `ws`) packed in the order cuDNN reads: dims
// `order` ([O, I, spatial...] as dims of ws), or with `channelsLast` [O, spatial..., I], the
// spatial dims listed in `reversedSpatial` read backwards. Where the operand is not stored so, a
// copy of its own (ctx.operandCopies) does it (convolution.cpp).
Status requestPackedFilter(const Operation& op, const std::vector<int64_t>& ws, const std::vector<int64_t>& order,
                           const std::vector<int64_t>& reversedSpatial, bool channelsLast, LowerContext& ctx);
// True if `op` is a reduce_window pooling the last two dims of a rank-4 float value (max or
// average pooling) that reduce.cu's kernel can read and write channels-last, both at once.
bool poolTakesChannelsLast(const Operation& op);

using Lowering = std::function<Expected<std::unique_ptr<OpKernel>>(const Operation& op, LowerContext& ctx)>;

class CudaKernelRegistry {
 public:
  static const CudaKernelRegistry& instance();
  void add(OpCode code, Lowering lowering);
  const Lowering* find(OpCode code) const;
  // stablehlo.composite ops by their `name` attribute ("warpforge.attention"): a composite whose
  // name has a lowering runs as one step of its own. Where the lowering returns kUnimplemented
  // (an element type or shape its kernel lacks) the planner inlines the composite's
  // decomposition instead, which means the same: that is no fallback to the host.
  void addComposite(std::string name, Lowering lowering);
  const Lowering* findComposite(std::string_view name) const;

 private:
  std::vector<Lowering> lowerings_ = std::vector<Lowering>(kNumOpCodes);
  std::map<std::string, Lowering, std::less<>> composites_;
};

// The `name` attribute of a stablehlo.composite ("" for another op, or one without a name).
std::string_view compositeName(const Operation& op);

void registerElementwiseLowerings(CudaKernelRegistry& registry);   // elementwise.cu
void registerDataMovementLowerings(CudaKernelRegistry& registry);  // data_movement.cu
void registerReduceLowerings(CudaKernelRegistry& registry);        // reduce.cu
void registerIndexingLowerings(CudaKernelRegistry& registry);      // indexing.cu
void registerDotLowerings(CudaKernelRegistry& registry);           // dot.cpp
void registerRaggedDotLowerings(CudaKernelRegistry& registry);     // ragged_dot.cu (chlo.ragged_dot)
void registerConvolutionLowerings(CudaKernelRegistry& registry);   // convolution.cpp (cuDNN)
void registerSortLowerings(CudaKernelRegistry& registry);          // sort.cu (CUB)
void registerScatterLowerings(CudaKernelRegistry& registry);       // scatter.cu
void registerRngLowerings(CudaKernelRegistry& registry);           // rng.cu
void registerLinalgLowerings(CudaKernelRegistry& registry);        // linalg.cu (triangular_solve)
void registerRegionLowerings(CudaKernelRegistry& registry);        // region_kernels.cpp (map, chlo.scan)
void registerAttentionLowerings(CudaKernelRegistry& registry);     // attention.cpp (composites, cuDNN frontend)

// Whether this build runs the attention composites fused (attention.cpp: built with cuDNN and
// its frontend). Without, their lowerings decline and the decompositions run.
bool fusedAttentionBuilt();

// dot_general for the element types cuBLASLt has no kernel for (dot_direct.cu): integers, and f32
// operands with an f64 result. dot.cpp's lowering hands them over.
struct DotDimensionLists {
  std::vector<int64_t> lhsBatch, rhsBatch, lhsContract, rhsContract;
};
bool takesDirectDot(ElementType operands, ElementType result);
Expected<std::unique_ptr<OpKernel>> lowerDirectDot(const Operation& op, const DotDimensionLists& dims);
// Convolutions cuDNN has no kernel for: integers and batch groups (convolution_direct.cu).
Expected<std::unique_ptr<OpKernel>> lowerDirectConvolution(const Operation& op);

// The additive bias cuDNN's fused attention reads (attention.cpp), written by
// attention_bias.cu: [dims] row-major of type `bias` (bf16, f16 or f32), from a rank-4 mask read
// through `maskStrides` (element strides; 0 along the dims it broadcasts over). An i1 mask gives 0
// where true and `maskedValue` where false; a float mask (bf16, f16 or f32) is converted.
struct AttentionBiasPlan {
  int64_t dims[4] = {};
  int64_t maskStrides[4] = {};
  ElementType mask = ElementType::kI1;
  ElementType bias = ElementType::kBF16;
  float maskedValue = 0;
};
Status launchAttentionBias(cudaStream_t stream, const AttentionBiasPlan& plan, const void* mask, void* bias);

// "stablehlo.add" at f.mlir:3:5: no CUDA kernel for element type complex<f32>
Status unsupportedOnCuda(const Operation& op, const std::string& why);

// The static shape of a tensor value's type, or Unimplemented naming the op.
Expected<std::vector<int64_t>> staticShape(const Operation& op, const Type& type);

// Element types the CUDA kernels compute on: i1, signed/unsigned 8..64-bit ints, f16, bf16,
// f32, f64.
bool isGpuComputeType(ElementType t);

// Maximum tensor rank the strided kernels take.
inline constexpr int kMaxRank = 8;

// Strides (in elements) of an operand of shape `in` read as the result shape `out`: equal shapes
// are row-major, a one-element operand has all-zero strides, and dims of size 1 broadcast
// (numpy rules, ranks aligned at the end). False if `in` does not broadcast to `out` or `out`
// has more than kMaxRank dims. `strides` has room for kMaxRank entries.
bool broadcastStrides(const std::vector<int64_t>& in, const std::vector<int64_t>& out, int64_t* strides);

int64_t numElementsOf(const std::vector<int64_t>& shape);
std::vector<int64_t> rowMajorStridesOf(const std::vector<int64_t>& shape);

// A copy of a box of `shape` between two strided views (element strides and offsets; strides may
// be zero or negative), planned at lowering time (data_movement.cu). Elements are opaque
// `elemBytes`-sized words (1, 2, 4, 8 or 16).
struct StridedCopyPlan;
Expected<std::shared_ptr<const StridedCopyPlan>> planStridedCopy(const Operation& op, const std::vector<int64_t>& shape,
                                                                 const std::vector<int64_t>& dstStrides,
                                                                 const std::vector<int64_t>& srcStrides,
                                                                 int64_t dstOffset, int64_t srcOffset);
Status launchStridedCopy(cudaStream_t stream, int elemBytes, const StridedCopyPlan& plan, const void* src, void* dst);

}  // namespace wf::cuda
