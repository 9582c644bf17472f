// CUDA kernels for indexing with run-time offsets: dynamic_slice, dynamic_update_slice and
// gather (the general form of the spec: offset, collapsed and batching dims, any index vector
// dim).
// The start indices are scalar tensors on the device; each thread reads them (they stay in
// cache) and clamps them as the spec says, so the program never synchronises with the host and
// stays capturable in a CUDA graph. Elements move as opaque words of their storage size.
#include <algorithm>
#include <string>

#include "eval/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"

namespace wf::cuda {
namespace {

struct alignas(16) Word16 {
  uint64_t lo, hi;
};

struct SliceParams {
  int rank = 0;
  IndexType indexType = IndexType::kS64;
  const void* starts[kMaxRank] = {};
  int64_t bigDims[kMaxRank] = {};    // the operand's shape (dynamic_slice) / the result's (update)
  int64_t smallDims[kMaxRank] = {};  // the slice's shape / the update's
  int64_t n = 0;                     // elements of the small box
};

// Offset in the big box of element `i` of the small box placed at the clamped starts.
__device__ int64_t bigOffset(const SliceParams& p, int64_t i) {
  int64_t off = 0, stride = 1;
  for (int d = p.rank - 1; d >= 0; --d) {
    const int64_t c = i % p.smallDims[d];
    i /= p.smallDims[d];
    int64_t s = loadIndex(p.starts[d], p.indexType);
    const int64_t hi = p.bigDims[d] - p.smallDims[d];
    s = s < 0 ? 0 : (s > hi ? hi : s);
    off += (s + c) * stride;
    stride *= p.bigDims[d];
  }
  return off;
}

template <typename W>
__global__ void dynamicSliceKernel(const W* __restrict__ in, W* __restrict__ out, SliceParams p) {
  WF_GRID_STRIDE_LOOP(i, p.n) out[i] = in[bigOffset(p, i)];
}

template <typename W>
__global__ void dynamicUpdateKernel(const W* __restrict__ update, W* __restrict__ out, SliceParams p) {
  WF_GRID_STRIDE_LOOP(i, p.n) out[bigOffset(p, i)] = update[i];
}

template <typename W>
Status launch(bool update, cudaStream_t stream, const void* src, void* dst, const SliceParams& p) {
  if (update)
    dynamicUpdateKernel<W><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<const W*>(src), static_cast<W*>(dst), p);
  else
    dynamicSliceKernel<W><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<const W*>(src), static_cast<W*>(dst), p);
  WF_CUDA_CHECK_LAUNCH("dynamic slice kernel");
  return Status::ok();
}

Status dispatch(int bytes, bool update, cudaStream_t stream, const void* src, void* dst, const SliceParams& p) {
  if (p.n == 0) return Status::ok();
  switch (bytes) {
    case 1: return launch<uint8_t>(update, stream, src, dst, p);
    case 2: return launch<uint16_t>(update, stream, src, dst, p);
    case 4: return launch<uint32_t>(update, stream, src, dst, p);
    case 8: return launch<uint64_t>(update, stream, src, dst, p);
    case 16: return launch<Word16>(update, stream, src, dst, p);
    default: return internalError("dynamic slice of " + std::to_string(bytes) + "-byte elements");
  }
}

Expected<IndexType> indexTypeOf(const Operation& op, size_t firstIndex) {
  if (op.numOperands() <= firstIndex) return SliceParams{}.indexType;
  const ElementType t = op.operand(firstIndex)->type().elementType();
  for (size_t i = firstIndex; i < op.numOperands(); ++i)
    if (op.operand(i)->type().elementType() != t || op.operand(i)->type().rank() != 0)
      return unsupportedOnCuda(op, "no CUDA kernel for start indices of mixed types or ranks");
  IndexType it;
  if (!indexTypeFor(t, &it))
    return unsupportedOnCuda(op, "no CUDA kernel for start indices of type " + std::string(elementTypeName(t)));
  return it;
}

// ---- gather ---------------------------------------------------------------------------------

struct GatherParams {
  int outRank = 0;
  int64_t outDims[kMaxRank] = {};
  // Per result dim: the operand dim an offset dim walks (-1 for a batch dim), and the start
  // indices dim a batch dim walks (-1 for an offset dim).
  int offsetOperandDim[kMaxRank] = {};
  int batchStartDim[kMaxRank] = {};
  int64_t operandStrides[kMaxRank] = {};
  int64_t operandDims[kMaxRank] = {};
  int64_t sliceSizes[kMaxRank] = {};
  int64_t startStrides[kMaxRank + 1] = {};  // of start_indices, in elements
  int indexVectorDim = 0;                   // == rank of start_indices: one index per batch position
  int numIndices = 0;
  int startIndexMap[kMaxRank] = {};
  int numBatching = 0;
  int batchingOperandDim[kMaxRank] = {};
  int batchingResultDim[kMaxRank] = {};
  int64_t n = 0;
  IndexType indexType = IndexType::kS64;
  int indexBytes = 8;
};

template <typename W>
__global__ void gatherKernel(const W* __restrict__ operand, const char* __restrict__ starts, W* __restrict__ out,
                             GatherParams p) {
  WF_GRID_STRIDE_LOOP(i, p.n) {
    int64_t c[kMaxRank];
    int64_t rem = i;
    for (int r = p.outRank - 1; r >= 0; --r) {
      c[r] = rem % p.outDims[r];
      rem /= p.outDims[r];
    }
    int64_t base = 0, off = 0;
    for (int r = 0; r < p.outRank; ++r) {
      if (p.offsetOperandDim[r] >= 0) off += c[r] * p.operandStrides[p.offsetOperandDim[r]];
      else base += c[r] * p.startStrides[p.batchStartDim[r]];
    }
    for (int k = 0; k < p.numIndices; ++k) {
      const int64_t at = base + k * p.startStrides[p.indexVectorDim];
      int64_t v = loadIndex(starts + at * p.indexBytes, p.indexType);
      const int d = p.startIndexMap[k];
      const int64_t hi = p.operandDims[d] - p.sliceSizes[d];
      v = v < 0 ? 0 : (v > hi ? hi : v);
      off += v * p.operandStrides[d];
    }
    for (int k = 0; k < p.numBatching; ++k) off += c[p.batchingResultDim[k]] * p.operandStrides[p.batchingOperandDim[k]];
    out[i] = operand[off];
  }
}

template <typename W>
Status launchGather(cudaStream_t stream, const void* operand, const void* starts, void* out, const GatherParams& p) {
  gatherKernel<W><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<const W*>(operand), static_cast<const char*>(starts),
                                                         static_cast<W*>(out), p);
  WF_CUDA_CHECK_LAUNCH("gatherKernel");
  return Status::ok();
}

using Results = Expected<std::unique_ptr<OpKernel>>;

Results lowerGather(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> opShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> sShape, staticShape(op, op.operand(1)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  if (opShape.size() > static_cast<size_t>(kMaxRank) || sShape.size() > static_cast<size_t>(kMaxRank) ||
      outShape.size() > static_cast<size_t>(kMaxRank))
    return unsupportedOnCuda(op, "gather of rank over the CUDA kernels' limit");
  const Attribute* dn = op.attr("dimension_numbers");
  if (!dn) return invalidArgument(op.describe() + ": missing dimension_numbers");
  auto list = [&](const char* name) -> std::vector<int64_t> {
    const Attribute* f = dn->field(name);
    if (!f) return {};
    auto v = f->asIntList();
    return v ? *v : std::vector<int64_t>{};
  };
  const std::vector<int64_t> offsetDims = list("offset_dims"), collapsed = list("collapsed_slice_dims"),
                             operandBatching = list("operand_batching_dims"),
                             startBatching = list("start_indices_batching_dims"), startIndexMap = list("start_index_map");
  const Attribute* ivdAttr = dn->field("index_vector_dim");
  // An absent index_vector_dim is 0 (the attribute's default), as on the CPU backend.
  const int64_t ivd = ivdAttr && ivdAttr->asInt() ? *ivdAttr->asInt() : 0;
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> sliceSizes, cpu::intListAttr(op, "slice_sizes"));
  const ElementType st = op.operand(1)->type().elementType();
  if (sliceSizes.size() != opShape.size() || operandBatching.size() != startBatching.size() ||
      ivd < 0 || ivd > static_cast<int64_t>(sShape.size()))
    return invalidArgument(op.describe() + ": inconsistent gather dimension numbers");

  GatherParams p;
  p.outRank = static_cast<int>(outShape.size());
  for (size_t d = 0; d < outShape.size(); ++d) p.outDims[d] = outShape[d];
  p.n = numElementsOf(outShape);
  p.indexVectorDim = static_cast<int>(ivd);
  p.indexBytes = storageBytes(st);
  switch (st) {
    case ElementType::kSI8: p.indexType = IndexType::kS8; break;
    case ElementType::kSI16: p.indexType = IndexType::kS16; break;
    case ElementType::kSI32: p.indexType = IndexType::kS32; break;
    case ElementType::kSI64: p.indexType = IndexType::kS64; break;
    case ElementType::kUI8: p.indexType = IndexType::kU8; break;
    case ElementType::kUI16: p.indexType = IndexType::kU16; break;
    case ElementType::kUI32: p.indexType = IndexType::kU32; break;
    case ElementType::kUI64: p.indexType = IndexType::kU64; break;
    default: return unsupportedOnCuda(op, "no CUDA kernel for start indices of type " + std::string(elementTypeName(st)));
  }
  const std::vector<int64_t> opStrides = rowMajorStridesOf(opShape), sStrides = rowMajorStridesOf(sShape);
  for (size_t d = 0; d < opShape.size(); ++d) {
    p.operandStrides[d] = opStrides[d];
    p.operandDims[d] = opShape[d];
    p.sliceSizes[d] = sliceSizes[d];
  }
  for (size_t d = 0; d < sShape.size(); ++d) p.startStrides[d] = sStrides[d];
  p.startStrides[sShape.size()] = 0;  // the implicit trailing index vector dim
  p.numIndices = static_cast<int>(startIndexMap.size());
  if (ivd == static_cast<int64_t>(sShape.size()) && p.numIndices > 1)
    return invalidArgument(op.describe() + ": several start indices without an index vector dim");
  for (size_t k = 0; k < startIndexMap.size(); ++k) p.startIndexMap[k] = static_cast<int>(startIndexMap[k]);

  // Operand dims that offset dims walk, in order.
  std::vector<int> windowDims;
  for (int64_t d = 0; d < static_cast<int64_t>(opShape.size()); ++d)
    if (std::find(collapsed.begin(), collapsed.end(), d) == collapsed.end() &&
        std::find(operandBatching.begin(), operandBatching.end(), d) == operandBatching.end())
      windowDims.push_back(static_cast<int>(d));
  if (windowDims.size() != offsetDims.size()) return invalidArgument(op.describe() + ": offset_dims do not match the slice");
  // Start-indices dims (without the index vector dim) that batch dims walk, in order.
  std::vector<int> startBatchDims;
  for (int64_t d = 0; d < static_cast<int64_t>(sShape.size()); ++d)
    if (d != ivd) startBatchDims.push_back(static_cast<int>(d));
  size_t nextOffset = 0, nextBatch = 0;
  std::vector<int> resultDimOfStartDim(sShape.size() + 1, -1);
  for (int r = 0; r < p.outRank; ++r) {
    if (std::find(offsetDims.begin(), offsetDims.end(), r) != offsetDims.end()) {
      p.offsetOperandDim[r] = windowDims[nextOffset++];
      p.batchStartDim[r] = -1;
    } else {
      if (nextBatch >= startBatchDims.size()) return invalidArgument(op.describe() + ": too many batch dims");
      p.offsetOperandDim[r] = -1;
      p.batchStartDim[r] = startBatchDims[nextBatch];
      resultDimOfStartDim[static_cast<size_t>(startBatchDims[nextBatch])] = r;
      ++nextBatch;
    }
  }
  p.numBatching = static_cast<int>(operandBatching.size());
  for (size_t k = 0; k < operandBatching.size(); ++k) {
    const int r = resultDimOfStartDim[static_cast<size_t>(startBatching[k])];
    if (r < 0) return invalidArgument(op.describe() + ": start_indices_batching_dims names the index vector dim");
    p.batchingOperandDim[k] = static_cast<int>(operandBatching[k]);
    p.batchingResultDim[k] = r;
  }
  const ElementType et = op.result(0)->type().elementType();
  if (et == ElementType::kQuantized) return unsupportedOnCuda(op, "quantized values");
  const int bytes = storageBytes(et);
  return makeKernel([p, bytes](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) -> Status {
    if (p.n == 0) return Status::ok();
    switch (bytes) {
      case 1: return launchGather<uint8_t>(ctx.stream, in[0], in[1], out[0], p);
      case 2: return launchGather<uint16_t>(ctx.stream, in[0], in[1], out[0], p);
      case 4: return launchGather<uint32_t>(ctx.stream, in[0], in[1], out[0], p);
      case 8: return launchGather<uint64_t>(ctx.stream, in[0], in[1], out[0], p);
      case 16: return launchGather<Word16>(ctx.stream, in[0], in[1], out[0], p);
      default: return internalError("gather of " + std::to_string(bytes) + "-byte elements");
    }
  });
}

Results lowerDynamicSlice(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  if (inShape.size() > static_cast<size_t>(kMaxRank) || op.numOperands() != inShape.size() + 1 ||
      outShape.size() != inShape.size())
    return unsupportedOnCuda(op, "no CUDA kernel for this dynamic_slice form");
  WF_ASSIGN_OR_RETURN(IndexType it, indexTypeOf(op, 1));
  const ElementType et = op.result(0)->type().elementType();
  if (et == ElementType::kQuantized) return unsupportedOnCuda(op, "quantized values");
  SliceParams p;
  p.rank = static_cast<int>(inShape.size());
  p.indexType = it;
  p.n = numElementsOf(outShape);
  for (size_t d = 0; d < inShape.size(); ++d) {
    p.bigDims[d] = inShape[d];
    p.smallDims[d] = outShape[d];
  }
  const int bytes = storageBytes(et);
  return makeKernel([p, bytes](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    SliceParams q = p;
    for (int d = 0; d < q.rank; ++d) q.starts[d] = in[static_cast<size_t>(d) + 1];
    return dispatch(bytes, false, ctx.stream, in[0], out[0], q);
  });
}

Results lowerDynamicUpdateSlice(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> updShape, staticShape(op, op.operand(1)->type()));
  if (outShape.size() > static_cast<size_t>(kMaxRank) || op.numOperands() != outShape.size() + 2 ||
      updShape.size() != outShape.size())
    return unsupportedOnCuda(op, "no CUDA kernel for this dynamic_update_slice form");
  WF_ASSIGN_OR_RETURN(IndexType it, indexTypeOf(op, 2));
  const ElementType et = op.result(0)->type().elementType();
  if (et == ElementType::kQuantized) return unsupportedOnCuda(op, "quantized values");
  SliceParams p;
  p.rank = static_cast<int>(outShape.size());
  p.indexType = it;
  p.n = numElementsOf(updShape);
  for (size_t d = 0; d < outShape.size(); ++d) {
    p.bigDims[d] = outShape[d];
    p.smallDims[d] = updShape[d];
  }
  const int bytes = storageBytes(et);
  const size_t total = static_cast<size_t>(numElementsOf(outShape)) * static_cast<size_t>(bytes);
  return makeKernel([p, bytes, total](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    if (total > 0 && out[0] != in[0])
      WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], total, cudaMemcpyDeviceToDevice, ctx.stream));
    SliceParams q = p;
    for (int d = 0; d < q.rank; ++d) q.starts[d] = in[static_cast<size_t>(d) + 2];
    return dispatch(bytes, true, ctx.stream, in[1], out[0], q);
  });
}

}  // namespace

void registerIndexingLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::DynamicSlice, lowerDynamicSlice);
  r.add(OpCode::DynamicUpdateSlice, lowerDynamicUpdateSlice);
  r.add(OpCode::Gather, lowerGather);
}

}  // namespace wf::cuda
