// CUDA kernels for indexing with run-time offsets: dynamic_slice and dynamic_update_slice.
// The start indices are scalar tensors on the device; each thread reads them (they stay in
// cache) and clamps them as the spec says, so the program never synchronises with the host and
// stays capturable in a CUDA graph. Elements move as opaque words of their storage size.
#include <string>

#include "backends/cpu/shape_util.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device_util.cuh"

namespace wf::cuda {
namespace {

struct alignas(16) Word16 {
  uint64_t lo, hi;
};

enum class IndexType : uint8_t { kS8, kS16, kS32, kS64, kU8, kU16, kU32, kU64 };

struct SliceParams {
  int rank = 0;
  IndexType indexType = IndexType::kS64;
  const void* starts[kMaxRank] = {};
  int64_t bigDims[kMaxRank] = {};    // the operand's shape (dynamic_slice) / the result's (update)
  int64_t smallDims[kMaxRank] = {};  // the slice's shape / the update's
  int64_t n = 0;                     // elements of the small box
};

__device__ int64_t loadIndex(const void* p, IndexType t) {
  switch (t) {
    case IndexType::kS8: return *static_cast<const int8_t*>(p);
    case IndexType::kS16: return *static_cast<const int16_t*>(p);
    case IndexType::kS32: return *static_cast<const int32_t*>(p);
    case IndexType::kS64: return *static_cast<const int64_t*>(p);
    case IndexType::kU8: return *static_cast<const uint8_t*>(p);
    case IndexType::kU16: return *static_cast<const uint16_t*>(p);
    case IndexType::kU32: return *static_cast<const uint32_t*>(p);
    case IndexType::kU64: {
      const uint64_t v = *static_cast<const uint64_t*>(p);
      return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
    }
  }
  return 0;
}

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
  switch (t) {
    case ElementType::kSI8: return IndexType::kS8;
    case ElementType::kSI16: return IndexType::kS16;
    case ElementType::kSI32: return IndexType::kS32;
    case ElementType::kSI64: return IndexType::kS64;
    case ElementType::kUI8: return IndexType::kU8;
    case ElementType::kUI16: return IndexType::kU16;
    case ElementType::kUI32: return IndexType::kU32;
    case ElementType::kUI64: return IndexType::kU64;
    default: return unsupportedOnCuda(op, "no CUDA kernel for start indices of type " + std::string(elementTypeName(t)));
  }
}

using Results = Expected<std::unique_ptr<OpKernel>>;

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
}

}  // namespace wf::cuda
