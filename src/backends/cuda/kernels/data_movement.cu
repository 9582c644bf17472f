// CUDA kernels for data movement: broadcast_in_dim, broadcast, transpose, slice, reverse,
// concatenate, pad, iota, and bitcast_convert between element types of different widths. All
// but iota and bitcast_convert are one primitive, a strided copy: walk a box through a
// source and a destination view whose strides (in elements) may be zero (broadcast), negative
// (reverse) or not row-major (concatenate and pad write into part of the result). Elements are
// opaque 1/2/4/8/16-byte words, so every element type moves the same way. reshape never gets
// here: the executable aliases its operand's buffer, as it does for a bitcast_convert between
// types of one storage size.
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

// One strided copy, simplified (unit dims dropped, contiguous dims merged) at lowering time.
struct CopyPlan {
  IndexMap<2> map;  // strides[0]: destination, strides[1]: source
  int64_t n = 0;
  int64_t dstOffset = 0;
  int64_t srcOffset = 0;
};

template <typename W, typename I>
__global__ void stridedCopyKernel(const W* __restrict__ src, W* __restrict__ dst, CopyPlan p) {
  const I n = static_cast<I>(p.n);
  for (I i = static_cast<I>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += static_cast<I>(blockDim.x) * gridDim.x) {
    I off[2];
    p.map.offsets<I>(i, off);
    dst[p.dstOffset + off[0]] = src[p.srcOffset + off[1]];
  }
}

template <typename W>
__global__ void fillKernel(const W* __restrict__ value, W* __restrict__ dst, int64_t n) {
  const W v = *value;
  WF_GRID_STRIDE_LOOP(i, n) dst[i] = v;
}

template <typename W>
Status launchCopy(cudaStream_t stream, const void* src, void* dst, const CopyPlan& p) {
  // 32-bit index math where the offsets fit (reversed views have negative strides: the offsets
  // from the base stay within the reach fits32 bounds).
  if (p.map.fits32(p.n, std::max(p.dstOffset, p.srcOffset)))
    stridedCopyKernel<W, int32_t><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<const W*>(src), static_cast<W*>(dst), p);
  else
    stridedCopyKernel<W, int64_t><<<gridFor(p.n), kThreads, 0, stream>>>(static_cast<const W*>(src), static_cast<W*>(dst), p);
  WF_CUDA_CHECK_LAUNCH("stridedCopyKernel");
  return Status::ok();
}

Status copy(cudaStream_t stream, int elemBytes, const void* src, void* dst, const CopyPlan& p) {
  if (p.n == 0) return Status::ok();
  switch (elemBytes) {
    case 1: return launchCopy<uint8_t>(stream, src, dst, p);
    case 2: return launchCopy<uint16_t>(stream, src, dst, p);
    case 4: return launchCopy<uint32_t>(stream, src, dst, p);
    case 8: return launchCopy<uint64_t>(stream, src, dst, p);
    case 16: return launchCopy<Word16>(stream, src, dst, p);
    default: return internalError("strided copy of " + std::to_string(elemBytes) + "-byte elements");
  }
}

template <typename W>
Status launchFill(cudaStream_t stream, const void* value, void* dst, int64_t n) {
  fillKernel<W><<<gridFor(n), kThreads, 0, stream>>>(static_cast<const W*>(value), static_cast<W*>(dst), n);
  WF_CUDA_CHECK_LAUNCH("fillKernel");
  return Status::ok();
}

Status fill(cudaStream_t stream, int elemBytes, const void* value, void* dst, int64_t n) {
  if (n == 0) return Status::ok();
  switch (elemBytes) {
    case 1: return launchFill<uint8_t>(stream, value, dst, n);
    case 2: return launchFill<uint16_t>(stream, value, dst, n);
    case 4: return launchFill<uint32_t>(stream, value, dst, n);
    case 8: return launchFill<uint64_t>(stream, value, dst, n);
    case 16: return launchFill<Word16>(stream, value, dst, n);
    default: return internalError("fill of " + std::to_string(elemBytes) + "-byte elements");
  }
}

std::vector<int64_t> rowMajor(const std::vector<int64_t>& shape) {
  std::vector<int64_t> s(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
  return s;
}

Expected<CopyPlan> makePlan(const Operation& op, const std::vector<int64_t>& shape, const std::vector<int64_t>& dst,
                            const std::vector<int64_t>& src, int64_t dstOffset, int64_t srcOffset) {
  const cpu::StridedBox box = cpu::StridedBox::make(shape, dst, src);
  if (box.rank() > kMaxRank)
    return unsupportedOnCuda(op, "a copy of rank " + std::to_string(box.rank()) + " is over the CUDA kernels' limit");
  CopyPlan p;
  p.n = box.numElements;
  p.dstOffset = dstOffset;
  p.srcOffset = srcOffset;
  p.map.rank = static_cast<int>(box.rank());
  for (int d = 0; d < p.map.rank; ++d) {
    p.map.dims[d] = box.shape[static_cast<size_t>(d)];
    p.map.strides[0][d] = box.aStrides[static_cast<size_t>(d)];
    p.map.strides[1][d] = box.bStrides[static_cast<size_t>(d)];
  }
  return p;
}

using Results = Expected<std::unique_ptr<OpKernel>>;

Expected<int> elemBytesOf(const Operation& op, const Type& t) {
  if (!t.isTensor() || t.elementType() == ElementType::kQuantized)
    return unsupportedOnCuda(op, "no CUDA kernel for values of type " + t.toString());
  return storageBytes(t.elementType());
}

// A single copy from operand 0 to result 0.
Results singleCopy(const Operation& op, const CopyPlan& plan) {
  WF_ASSIGN_OR_RETURN(int bytes, elemBytesOf(op, op.result(0)->type()));
  return makeKernel([bytes, plan](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    return copy(ctx.stream, bytes, in[0], out[0], plan);
  });
}

Results lowerTranspose(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> perm, cpu::intListAttr(op, "permutation"));
  if (perm.size() != inShape.size()) return invalidArgument(op.describe() + ": permutation does not match the rank");
  const std::vector<int64_t> inStrides = rowMajor(inShape);
  std::vector<int64_t> src(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) src[i] = inStrides[static_cast<size_t>(perm[i])];
  WF_ASSIGN_OR_RETURN(CopyPlan plan, makePlan(op, outShape, rowMajor(outShape), src, 0, 0));
  return singleCopy(op, plan);
}

Results lowerBroadcastInDim(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttr(op, "broadcast_dimensions"));
  if (dims.size() != inShape.size()) return invalidArgument(op.describe() + ": broadcast_dimensions does not match the rank");
  const std::vector<int64_t> inStrides = rowMajor(inShape);
  std::vector<int64_t> src(outShape.size(), 0);
  for (size_t j = 0; j < dims.size(); ++j) {
    const auto d = static_cast<size_t>(dims[j]);
    if (d >= outShape.size()) return invalidArgument(op.describe() + ": broadcast dimension out of range");
    src[d] = inShape[j] == 1 ? 0 : inStrides[j];
  }
  WF_ASSIGN_OR_RETURN(CopyPlan plan, makePlan(op, outShape, rowMajor(outShape), src, 0, 0));
  return singleCopy(op, plan);
}

Results lowerBroadcast(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  if (outShape.size() < inShape.size()) return invalidArgument(op.describe() + ": result rank below operand rank");
  const std::vector<int64_t> inStrides = rowMajor(inShape);
  std::vector<int64_t> src(outShape.size(), 0);
  const size_t lead = outShape.size() - inShape.size();
  for (size_t j = 0; j < inShape.size(); ++j) src[lead + j] = inStrides[j];
  WF_ASSIGN_OR_RETURN(CopyPlan plan, makePlan(op, outShape, rowMajor(outShape), src, 0, 0));
  return singleCopy(op, plan);
}

Results lowerSlice(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> start, cpu::intListAttr(op, "start_indices"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> strides, cpu::intListAttrOr(op, "strides", std::vector<int64_t>(inShape.size(), 1)));
  if (start.size() != inShape.size() || strides.size() != inShape.size())
    return invalidArgument(op.describe() + ": slice attributes do not match the rank");
  const std::vector<int64_t> inStrides = rowMajor(inShape);
  std::vector<int64_t> src(inShape.size());
  int64_t offset = 0;
  for (size_t d = 0; d < inShape.size(); ++d) {
    src[d] = inStrides[d] * strides[d];
    offset += start[d] * inStrides[d];
  }
  WF_ASSIGN_OR_RETURN(CopyPlan plan, makePlan(op, outShape, rowMajor(outShape), src, 0, offset));
  return singleCopy(op, plan);
}

Results lowerReverse(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> dims, cpu::intListAttr(op, "dimensions"));
  std::vector<int64_t> src = rowMajor(shape);
  int64_t offset = 0;
  for (int64_t d : dims) {
    const auto u = static_cast<size_t>(d);
    if (u >= shape.size()) return invalidArgument(op.describe() + ": dimension out of range");
    if (shape[u] > 0) offset += (shape[u] - 1) * src[u];
    src[u] = -src[u];
  }
  WF_ASSIGN_OR_RETURN(CopyPlan plan, makePlan(op, shape, rowMajor(shape), src, 0, offset));
  return singleCopy(op, plan);
}

Results lowerConcatenate(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "dimension"));
  if (dim < 0 || static_cast<size_t>(dim) >= outShape.size())
    return invalidArgument(op.describe() + ": dimension out of range");
  WF_ASSIGN_OR_RETURN(int bytes, elemBytesOf(op, op.result(0)->type()));
  const std::vector<int64_t> outStrides = rowMajor(outShape);
  std::vector<CopyPlan> plans;
  int64_t at = 0;
  for (size_t k = 0; k < op.numOperands(); ++k) {
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(k)->type()));
    WF_ASSIGN_OR_RETURN(CopyPlan p,
                        makePlan(op, inShape, outStrides, rowMajor(inShape), at * outStrides[static_cast<size_t>(dim)], 0));
    plans.push_back(p);
    at += inShape[static_cast<size_t>(dim)];
  }
  return makeKernel([bytes, plans](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    for (size_t k = 0; k < plans.size(); ++k) WF_RETURN_IF_ERROR(copy(ctx.stream, bytes, in[k], out[0], plans[k]));
    return Status::ok();
  });
}

Results lowerPad(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> inShape, staticShape(op, op.operand(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> lo, cpu::intListAttr(op, "edge_padding_low"));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> interior, cpu::intListAttr(op, "interior_padding"));
  if (lo.size() != inShape.size() || interior.size() != inShape.size())
    return invalidArgument(op.describe() + ": padding attributes do not match the rank");
  WF_ASSIGN_OR_RETURN(int bytes, elemBytesOf(op, op.result(0)->type()));
  const std::vector<int64_t> inStrides = rowMajor(inShape), outStrides = rowMajor(outShape);
  // The operand elements that land inside the result (negative padding crops).
  std::vector<int64_t> box(inShape.size()), dst(inShape.size()), src(inShape.size());
  int64_t dstOffset = 0, srcOffset = 0;
  for (size_t d = 0; d < inShape.size(); ++d) {
    const int64_t step = interior[d] + 1;
    const int64_t first = lo[d] >= 0 ? 0 : (-lo[d] + step - 1) / step;
    int64_t last = inShape[d] - 1;
    if (outShape[d] - 1 - lo[d] < 0) last = -1;
    else last = std::min(last, (outShape[d] - 1 - lo[d]) / step);
    box[d] = std::max<int64_t>(0, last - first + 1);
    dst[d] = outStrides[d] * step;
    src[d] = inStrides[d];
    dstOffset += (lo[d] + first * step) * outStrides[d];
    srcOffset += first * inStrides[d];
  }
  const int64_t n = numElementsOf(outShape);
  CopyPlan plan;
  if (numElementsOf(box) > 0) {
    WF_ASSIGN_OR_RETURN(plan, makePlan(op, box, dst, src, dstOffset, srcOffset));
  }
  return makeKernel([bytes, plan, n](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    WF_RETURN_IF_ERROR(fill(ctx.stream, bytes, in[1], out[0], n));
    return copy(ctx.stream, bytes, in[0], out[0], plan);
  });
}

template <typename Tr>
__global__ void iotaKernel(typename Tr::S* out, int64_t n, int64_t inner, int64_t dimSize) {
  WF_GRID_STRIDE_LOOP(i, n) {
    const int64_t v = (i / inner) % dimSize;
    out[i] = Tr::store(static_cast<typename Tr::C>(v));
  }
}

Results lowerIota(const Operation& op, LowerContext&) {
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, op.result(0)->type()));
  WF_ASSIGN_OR_RETURN(int64_t dim, cpu::intAttr(op, "iota_dimension"));
  if (dim < 0 || static_cast<size_t>(dim) >= shape.size())
    return invalidArgument(op.describe() + ": iota_dimension out of range");
  const int64_t n = numElementsOf(shape);
  const int64_t inner = rowMajor(shape)[static_cast<size_t>(dim)];
  const int64_t dimSize = shape[static_cast<size_t>(dim)];
  const ElementType et = op.result(0)->type().elementType();
  return dispatchType(et, Results(unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(et)))),
                      [&](auto tag) -> Results {
                        using Tr = decltype(tag);
                        return makeKernel([n, inner, dimSize](const LaunchContext& ctx, std::span<void* const>,
                                                              std::span<void* const> out) {
                          if (n == 0) return Status::ok();
                          iotaKernel<Tr><<<gridFor(n), kThreads, 0, ctx.stream>>>(
                              static_cast<typename Tr::S*>(out[0]), n, inner, dimSize);
                          WF_CUDA_CHECK_LAUNCH("iotaKernel");
                          return Status::ok();
                        });
                      });
}

// bitcast_convert between element types of different widths, as a little-endian bit stream
// (the CPU backend's order): a narrow operand's last dimension packs into one wide element, or a
// wide element splits into a new last dimension. Byte-aligned types keep their bytes (one
// copy); i1, stored as a byte but one bit wide, packs and unpacks bit by bit.
__device__ uint64_t loadBits(const uint8_t* p, int bytes) {
  uint64_t v = 0;
  for (int b = 0; b < bytes; ++b) v |= uint64_t{p[b]} << (8 * b);
  return v;
}

__global__ void bitcastKernel(const uint8_t* __restrict__ in, uint8_t* __restrict__ out, int64_t n, int inBits,
                              int inBytes, int outBits, int outBytes) {
  WF_GRID_STRIDE_LOOP(i, n) {
    uint64_t bits;
    if (outBits >= inBits) {  // pack `outBits / inBits` operand elements into element i
      const int per = outBits / inBits;
      bits = 0;
      for (int k = 0; k < per; ++k) {
        uint64_t v = loadBits(in + (i * per + k) * inBytes, inBytes);
        if (inBits < 64) v &= (uint64_t{1} << inBits) - 1;
        bits |= v << (k * inBits);
      }
    } else {  // element i is piece i % per of operand element i / per
      const int per = inBits / outBits;
      bits = loadBits(in + (i / per) * inBytes, inBytes) >> ((i % per) * outBits);
      bits &= (uint64_t{1} << outBits) - 1;
    }
    for (int b = 0; b < outBytes; ++b) out[i * outBytes + b] = static_cast<uint8_t>(bits >> (8 * b));
  }
}

Results lowerBitcastConvert(const Operation& op, LowerContext&) {
  const ElementType from = op.operand(0)->type().elementType(), to = op.result(0)->type().elementType();
  // Storage is the bits for byte-aligned types and for i1 (one byte holding 0 or 1); other
  // sub-byte types and complex ones are not GPU types.
  auto supported = [](ElementType t) {
    return !isComplex(t) && (t == ElementType::kI1 || storageBytes(t) * 8 == bitWidth(t));
  };
  if (!supported(from) || !supported(to))
    return unsupportedOnCuda(op, "no CUDA kernel for bitcast_convert from " + std::string(elementTypeName(from)) +
                                     " to " + std::string(elementTypeName(to)));
  WF_ASSIGN_OR_RETURN(std::vector<int64_t> outShape, staticShape(op, op.result(0)->type()));
  const int inBits = bitWidth(from), outBits = bitWidth(to);
  if (std::max(inBits, outBits) % std::min(inBits, outBits) != 0)
    return invalidArgument(op.describe() + ": bit widths do not divide");
  const int64_t n = numElementsOf(outShape);
  const int inBytes = storageBytes(from), outBytes = storageBytes(to);
  const bool sameBytes = from != ElementType::kI1 && to != ElementType::kI1;
  return makeKernel([=](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    if (n == 0) return Status::ok();
    if (sameBytes) {
      WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], static_cast<size_t>(n) * outBytes, cudaMemcpyDeviceToDevice,
                                    ctx.stream));
      return Status::ok();
    }
    bitcastKernel<<<gridFor(n), kThreads, 0, ctx.stream>>>(static_cast<const uint8_t*>(in[0]),
                                                           static_cast<uint8_t*>(out[0]), n, inBits, inBytes,
                                                           outBits, outBytes);
    WF_CUDA_CHECK_LAUNCH("bitcastKernel");
    return Status::ok();
  });
}

}  // namespace

struct StridedCopyPlan {
  CopyPlan plan;
};

Expected<std::shared_ptr<const StridedCopyPlan>> planStridedCopy(const Operation& op, const std::vector<int64_t>& shape,
                                                                 const std::vector<int64_t>& dstStrides,
                                                                 const std::vector<int64_t>& srcStrides,
                                                                 int64_t dstOffset, int64_t srcOffset) {
  WF_ASSIGN_OR_RETURN(CopyPlan p, makePlan(op, shape, dstStrides, srcStrides, dstOffset, srcOffset));
  return std::shared_ptr<const StridedCopyPlan>(new StridedCopyPlan{p});
}

Status launchStridedCopy(cudaStream_t stream, int elemBytes, const StridedCopyPlan& plan, const void* src, void* dst) {
  return copy(stream, elemBytes, src, dst, plan.plan);
}

void registerDataMovementLowerings(CudaKernelRegistry& r) {
  r.add(OpCode::Transpose, lowerTranspose);
  r.add(OpCode::BroadcastInDim, lowerBroadcastInDim);
  r.add(OpCode::Broadcast, lowerBroadcast);
  r.add(OpCode::Slice, lowerSlice);
  r.add(OpCode::Reverse, lowerReverse);
  r.add(OpCode::Concatenate, lowerConcatenate);
  r.add(OpCode::Pad, lowerPad);
  r.add(OpCode::Iota, lowerIota);
  r.add(OpCode::BitcastConvert, lowerBitcastConvert);
}

}  // namespace wf::cuda
