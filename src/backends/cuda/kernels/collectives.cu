// Collectives on the GPU (collectives.h): the fold kernel of all_reduce / reduce_scatter /
// collective_reduce, and the lowering of every collective op and of replica_id / partition_id.
// The grid's DeviceRendezvous is in collectives.cpp.
#include "backends/cuda/kernels/collectives.h"

#include <algorithm>
#include <cstring>
#include <optional>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/device_util.cuh"
#include "backends/cuda/kernels/reduce_body.cuh"
#include "dist/communicator.h"

namespace wf::cuda {

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

namespace {

// The fold a reduction body computes (bodyKind), with the ops the fold kernel takes named.
Expected<RedKind> foldOf(const Operation& op) {
  Expected<RedKind> kind = bodyKind(op);
  if (!kind)
    return unsupportedOnCuda(op, "no CUDA kernel for this reduction body (one add, multiply, maximum, minimum, "
                                 "and or or of the two arguments)");
  return kind;
}

// Peers' operands one fold launch reads; larger groups fold in several launches.
constexpr int kMaxFoldPeers = 16;
struct FoldInputs {
  const void* p[kMaxFoldPeers];
};

// Each operand seen as [outer, size, inner]; the result is part `offset / partInner` of it along
// the middle dim: out[o, r] = fold over peers of in[o * rowStride + offset + r], r < partInner.
// With `accumulate`, out already holds the fold of the earlier peers. Each step rounds to the
// element type, as the CPU's region applied element by element does.
template <typename Tr>
__global__ void foldKernel(FoldInputs in, int count, bool accumulate, typename Tr::S* out, int64_t n,
                           int64_t partInner, int64_t rowStride, int64_t offset, RedKind kind) {
  using S = typename Tr::S;
  WF_GRID_STRIDE_LOOP(e, n) {
    const int64_t src = (e / partInner) * rowStride + offset + e % partInner;
    int k = 0;
    typename Tr::C acc;
    if (accumulate) {
      acc = Tr::load(out[e]);
    } else {
      acc = Tr::load(static_cast<const S*>(in.p[0])[src]);
      k = 1;
    }
    for (; k < count; ++k) acc = Tr::load(Tr::store(combine<Tr>(kind, acc, Tr::load(static_cast<const S*>(in.p[k])[src]))));
    out[e] = Tr::store(acc);
  }
}

template <typename Tr>
__global__ void writeIdKernel(typename Tr::S* out, int64_t id) {
  *out = static_cast<typename Tr::S>(id);
}

// How a reduction reads each peer's operand and which part it keeps (see foldKernel).
struct FoldView {
  int64_t n = 0, partInner = 1, rowStride = 1, offset = 0;
};

Status launchFold(cudaStream_t stream, ElementType type, RedKind kind, const std::vector<const void*>& peers, void* out,
                  const FoldView& v) {
  if (v.n == 0) return Status::ok();
  for (size_t first = 0; first < peers.size();) {
    const bool accumulate = first > 0;
    FoldInputs in{};
    int count = 0;
    while (first < peers.size() && count < kMaxFoldPeers) in.p[count++] = peers[first++];
    Status launched = dispatchType(type, unimplemented("fold of an element type without a kernel"), [&](auto tr) {
      using Tr = decltype(tr);
      foldKernel<Tr><<<gridFor(v.n), kThreads, 0, stream>>>(in, count, accumulate, static_cast<typename Tr::S*>(out),
                                                           v.n, v.partInner, v.rowStride, v.offset, kind);
      WF_CUDA_CHECK_LAUNCH("the collective fold kernel");
      return Status::ok();
    });
    WF_RETURN_IF_ERROR(launched);
  }
  return Status::ok();
}

// ---------------------------------------------------------------------------------------------
// Steps
// ---------------------------------------------------------------------------------------------

// A collective of a group: meet, compute from the peers' operands, meet again. A group of one
// computes from its own operands without meeting anybody (and may be captured into a graph).
class GroupKernel final : public OpKernel {
 public:
  GroupKernel(std::string key, ProcessGroup group, ProcessId self, DeviceRendezvous* rendezvous, ComputeFn compute)
      : key_(std::move(key)),
        group_(std::move(group)),
        self_(self),
        rendezvous_(rendezvous),
        compute_(std::move(compute)) {}

  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    std::vector<const void*> mine(in.begin(), in.end());
    if (group_.size() == 1) return compute_(ctx.stream, std::vector<std::vector<const void*>>(1, mine), out);
    if (!rendezvous_) return internalError(key_ + ": a group of several processes without a rendezvous");
    // Operands are written before the peers read them.
    WF_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    WF_ASSIGN_OR_RETURN(auto all, rendezvous_->exchange(key_, group_, self_, std::move(mine)));
    WF_RETURN_IF_ERROR(compute_(ctx.stream, all, out));
    WF_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    // Nobody goes on (and overwrites its operands) before every member has read them.
    WF_RETURN_IF_ERROR(rendezvous_->exchange(key_ + "/read", group_, self_, {}).status());
    return Status::ok();
  }

 private:
  std::string key_;
  ProcessGroup group_;
  ProcessId self_;
  DeviceRendezvous* rendezvous_;
  ComputeFn compute_;
};

Status zeroOutputs(cudaStream_t stream, const std::vector<size_t>& bytes, std::span<void* const> out) {
  for (size_t j = 0; j < out.size(); ++j)
    if (bytes[j] > 0) WF_CUDA_CHECK(cudaMemsetAsync(out[j], 0, bytes[j], stream));
  return Status::ok();
}

// Everything the lowerings of one op need to know.
struct Lowered {
  const Operation& op;
  const ProcessContext& process;
  LowerContext& ctx;
  std::vector<std::vector<int64_t>> shapes;  // operands'
  std::vector<ElementType> types;            // operands'
  std::vector<size_t> resultBytes;
};

Expected<Lowered> inspect(const Operation& op, const ProcessContext& process, LowerContext& ctx) {
  Lowered l{op, process, ctx, {}, {}, {}};
  // Data operands pair with the results; a dynamic root is one more operand (lowerRooted).
  const bool dynamicRoot = collectiveFlag(op, "has_dynamic_root");
  if (op.numOperands() != op.numResults() + (dynamicRoot ? 1 : 0))
    return invalidArgument(op.describe() + ": " + std::to_string(op.numOperands()) + " operands for " +
                           std::to_string(op.numResults()) + " results");
  for (size_t j = 0; j < op.numResults(); ++j) {
    const Type& t = op.operand(j)->type();
    WF_ASSIGN_OR_RETURN(std::vector<int64_t> shape, staticShape(op, t));
    if (!isGpuComputeType(t.elementType()))
      return unsupportedOnCuda(op, "no CUDA kernel for element type " + std::string(elementTypeName(t.elementType())));
    if (op.result(j)->type().elementType() != t.elementType())
      return unsupportedOnCuda(op, "operand and result element types differ");
    l.shapes.push_back(std::move(shape));
    l.types.push_back(t.elementType());
  }
  for (size_t j = 0; j < op.numResults(); ++j) {
    const Type& t = op.result(j)->type();
    l.resultBytes.push_back(static_cast<size_t>(t.numElements()) * static_cast<size_t>(storageBytes(t.elementType())));
  }
  return l;
}

// "stablehlo.all_reduce#1[(0, 0)(1, 0)]": the n-th such key of each member meet each other.
std::string keyOf(const Operation& op, const ProcessGroup& group) {
  std::string key = op.name() + "#" + std::to_string(collectiveChannelId(op)) + "[";
  for (const ProcessId& p : group) key += p.toString();
  return key + "]";
}

size_t indexIn(const ProcessGroup& group, ProcessId self) {
  return static_cast<size_t>(std::find(group.begin(), group.end(), self) - group.begin());
}

Expected<ProcessGroup> requiredGroup(const Lowered& l, GroupStrategy strategy) {
  const ProcessContext& p = l.process;
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> g,
                      collectiveGroupOf(l.op, strategy, p.self, p.numReplicas, p.numPartitions));
  if (!g) return invalidArgument(l.op.describe() + ": process " + p.self.toString() + " is in no replica group");
  return std::move(*g);
}

Status checkGroup(const Lowered& l, const ProcessGroup& group) {
  if (group.size() > 1 && !l.process.rendezvous && !l.process.comm)
    return invalidArgument(l.op.describe() + ": a group of " + std::to_string(group.size()) +
                           " processes needs interpreter.run_parallel (this runs as a single process)");
  return Status::ok();
}

// `synchronises`: the computation itself waits for the device (reads a value on the host), so
// even a group of one is no graph step.
Expected<CollectiveKernel> groupKernel(const Lowered& l, const ProcessGroup& group, ComputeFn compute,
                                       bool synchronises = false) {
  WF_RETURN_IF_ERROR(checkGroup(l, group));
  // A job rank meets its group over the communicator: always when the group is the whole job
  // (at world size 1 too, so that one GPU runs the path several do), and for any group of
  // several ranks. A group of one inside a larger job needs nobody.
  const auto worldSize = static_cast<size_t>(l.process.numReplicas * l.process.numPartitions);
  if (l.process.comm && (group.size() > 1 || group.size() == worldSize)) {
    std::vector<size_t> operandBytes;
    for (const Value* v : l.op.operands())
      operandBytes.push_back(static_cast<size_t>(v->type().numElements()) *
                             static_cast<size_t>(storageBytes(v->type().elementType())));
    return gatherThenCompute(l.op, l.process, group, std::move(operandBytes), std::move(compute), synchronises, l.ctx);
  }
  CollectiveKernel k;
  k.kernel = std::make_unique<GroupKernel>(keyOf(l.op, group), group, l.process.self, l.process.rendezvous,
                                           std::move(compute));
  k.meetsPeers = group.size() > 1 || synchronises;
  return Expected<CollectiveKernel>(std::move(k));
}

Status checkDim(const Lowered& l, size_t j, int64_t dim, const char* what) {
  if (dim < 0 || dim >= static_cast<int64_t>(l.shapes[j].size()))
    return invalidArgument(l.op.describe() + ": " + what + " " + std::to_string(dim) + " is out of range for " +
                           l.op.operand(j)->type().toString());
  return Status::ok();
}

// Results of the ops that keep their operands' shape (all_reduce, collective_permute, ...): a
// copy or fold writes exactly the operand's bytes.
Status checkSameShapes(const Lowered& l) {
  for (size_t j = 0; j < l.shapes.size(); ++j)
    if (l.op.result(j)->type().shape() != l.shapes[j])
      return invalidArgument(l.op.describe() + ": result #" + std::to_string(j) + " has type " +
                             l.op.result(j)->type().toString() + ", its operand " +
                             l.op.operand(j)->type().toString());
  return Status::ok();
}

// The view of operand `j` keeping part `index` of `parts` along `dim` (the whole operand for
// parts == 1 and dim < 0).
FoldView foldView(const Lowered& l, size_t j, int64_t dim, int64_t parts, int64_t index) {
  FoldView v;
  const std::vector<int64_t>& s = l.shapes[j];
  const int64_t total = numElementsOf(s);
  if (dim < 0) {
    v.n = v.partInner = v.rowStride = total;
    return v;
  }
  int64_t inner = 1;
  for (size_t d = static_cast<size_t>(dim) + 1; d < s.size(); ++d) inner *= s[d];
  const int64_t size = s[static_cast<size_t>(dim)];
  const int64_t partSize = size / parts;
  v.partInner = partSize * inner;
  v.rowStride = size * inner;
  v.offset = index * partSize * inner;
  v.n = size == 0 ? 0 : total / size * partSize;
  return v;
}

Expected<CollectiveKernel> lowerReduction(const Lowered& l, GroupStrategy strategy, bool scatter) {
  const Operation& op = l.op;
  WF_ASSIGN_OR_RETURN(RedKind kind, foldOf(op));
  const Type& argType = op.region(0).front().argument(0)->type();
  for (ElementType t : l.types)
    if (argType.isTensor() && argType.elementType() != t)
      return unsupportedOnCuda(op, "a reduction body of another element type than its operands");
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroup(l, strategy));
  const auto parts = static_cast<int64_t>(group.size());
  const auto index = static_cast<int64_t>(indexIn(group, l.process.self));
  std::vector<FoldView> views;
  if (scatter) {
    WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "scatter_dimension"));
    for (size_t j = 0; j < l.shapes.size(); ++j) {
      WF_RETURN_IF_ERROR(checkDim(l, j, dim, "scatter_dimension"));
      if (l.shapes[j][static_cast<size_t>(dim)] % parts != 0)
        return invalidArgument(op.describe() + ": the group size " + std::to_string(parts) + " does not divide " +
                               op.operand(j)->type().toString() + " along dimension " + std::to_string(dim));
      std::vector<int64_t> part = l.shapes[j];
      part[static_cast<size_t>(dim)] /= parts;
      if (op.result(j)->type().shape() != part)
        return invalidArgument(op.describe() + ": result #" + std::to_string(j) + " should have shape " +
                               Type::tensor(part, l.types[j]).toString());
      views.push_back(foldView(l, j, dim, parts, index));
    }
  } else {
    WF_RETURN_IF_ERROR(checkSameShapes(l));
    for (size_t j = 0; j < l.shapes.size(); ++j) views.push_back(foldView(l, j, -1, 1, 0));
  }
  const std::vector<ElementType> types = l.types;
  return groupKernel(l, group, [types, kind, views](cudaStream_t stream, const std::vector<std::vector<const void*>>& all,
                                                    std::span<void* const> out) -> Status {
    for (size_t j = 0; j < out.size(); ++j) {
      std::vector<const void*> peers;
      for (const std::vector<const void*>& member : all) peers.push_back(member[j]);
      WF_RETURN_IF_ERROR(launchFold(stream, types[j], kind, peers, out[j], views[j]));
    }
    return Status::ok();
  });
}

// A copy of a box of `box` from an operand (row-major `srcShape`, starting at `srcOffset`
// elements) into a result (row-major `dstShape`, at `dstOffset`).
using CopyPlan = std::shared_ptr<const StridedCopyPlan>;
Expected<CopyPlan> planBox(const Operation& op, const std::vector<int64_t>& box, const std::vector<int64_t>& srcShape,
                           int64_t srcOffset, const std::vector<int64_t>& dstShape, int64_t dstOffset) {
  return planStridedCopy(op, box, rowMajorStridesOf(dstShape), rowMajorStridesOf(srcShape), dstOffset, srcOffset);
}

// Copies planned per (operand, sender): copies[j][k] moves what member k contributes to result j.
ComputeFn copiesFrom(std::vector<std::vector<CopyPlan>> copies, std::vector<int> elemBytes,
                     std::vector<int64_t> boxElements) {
  return [copies = std::move(copies), elemBytes = std::move(elemBytes), boxElements = std::move(boxElements)](
             cudaStream_t stream, const std::vector<std::vector<const void*>>& all,
             std::span<void* const> out) -> Status {
    for (size_t j = 0; j < out.size(); ++j) {
      if (boxElements[j] == 0) continue;
      for (size_t k = 0; k < all.size(); ++k)
        WF_RETURN_IF_ERROR(launchStridedCopy(stream, elemBytes[j], *copies[j][k], all[k][j], out[j]));
    }
    return Status::ok();
  };
}

Expected<CollectiveKernel> lowerAllGather(const Lowered& l) {
  const Operation& op = l.op;
  WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "all_gather_dim"));
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroup(l, replicaGroupStrategy(op)));
  std::vector<std::vector<CopyPlan>> copies(l.shapes.size());
  std::vector<int> elemBytes;
  std::vector<int64_t> boxElements;
  for (size_t j = 0; j < l.shapes.size(); ++j) {
    WF_RETURN_IF_ERROR(checkDim(l, j, dim, "all_gather_dim"));
    const std::vector<int64_t>& s = l.shapes[j];
    std::vector<int64_t> result = s;
    result[static_cast<size_t>(dim)] *= static_cast<int64_t>(group.size());
    if (op.result(j)->type().shape() != result)
      return invalidArgument(op.describe() + ": result #" + std::to_string(j) + " should have shape " +
                             Type::tensor(result, l.types[j]).toString());
    const int64_t stride = rowMajorStridesOf(result)[static_cast<size_t>(dim)];
    for (size_t k = 0; k < group.size(); ++k) {
      // Member k's operand lands at k * size along dim.
      WF_ASSIGN_OR_RETURN(CopyPlan p, planBox(op, s, s, 0, result,
                                              static_cast<int64_t>(k) * s[static_cast<size_t>(dim)] * stride));
      copies[j].push_back(std::move(p));
    }
    elemBytes.push_back(storageBytes(l.types[j]));
    boxElements.push_back(numElementsOf(s));
  }
  return groupKernel(l, group, copiesFrom(std::move(copies), std::move(elemBytes), std::move(boxElements)));
}

Expected<CollectiveKernel> lowerAllToAll(const Lowered& l) {
  const Operation& op = l.op;
  WF_ASSIGN_OR_RETURN(int64_t splitDim, collectiveIntAttr(op, "split_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t concatDim, collectiveIntAttr(op, "concat_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t splitCount, collectiveIntAttr(op, "split_count"));
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroup(l, channelGroupStrategy(op)));
  if (static_cast<int64_t>(group.size()) != splitCount)
    return invalidArgument(op.describe() + ": split_count " + std::to_string(splitCount) +
                           " differs from the group size " + std::to_string(group.size()));
  const auto index = static_cast<int64_t>(indexIn(group, l.process.self));
  std::vector<std::vector<CopyPlan>> copies(l.shapes.size());
  std::vector<int> elemBytes;
  std::vector<int64_t> boxElements;
  for (size_t j = 0; j < l.shapes.size(); ++j) {
    WF_RETURN_IF_ERROR(checkDim(l, j, splitDim, "split_dimension"));
    WF_RETURN_IF_ERROR(checkDim(l, j, concatDim, "concat_dimension"));
    const std::vector<int64_t>& s = l.shapes[j];
    const auto split = static_cast<size_t>(splitDim), concat = static_cast<size_t>(concatDim);
    if (splitCount <= 0 || s[split] % splitCount != 0)
      return invalidArgument(op.describe() + ": split_count " + std::to_string(splitCount) + " does not divide " +
                             op.operand(j)->type().toString() + " along dimension " + std::to_string(splitDim));
    std::vector<int64_t> part = s;  // what each sender sends each receiver
    part[split] /= splitCount;
    std::vector<int64_t> result = part;
    result[concat] *= splitCount;
    if (op.result(j)->type().shape() != result)
      return invalidArgument(op.describe() + ": result #" + std::to_string(j) + " should have shape " +
                             Type::tensor(result, l.types[j]).toString());
    const int64_t srcOffset = index * part[split] * rowMajorStridesOf(s)[split];
    const int64_t dstStride = rowMajorStridesOf(result)[concat];
    for (int64_t k = 0; k < splitCount; ++k) {
      // Sender k's part `index` lands at k * part along concat_dimension.
      WF_ASSIGN_OR_RETURN(CopyPlan p, planBox(op, part, s, srcOffset, result, k * part[concat] * dstStride));
      copies[j].push_back(std::move(p));
    }
    elemBytes.push_back(storageBytes(l.types[j]));
    boxElements.push_back(numElementsOf(part));
  }
  return groupKernel(l, group, copiesFrom(std::move(copies), std::move(elemBytes), std::move(boxElements)));
}

// Results of process `self`: member `from`'s operands (nullopt: zeros).
ComputeFn takeFrom(std::optional<size_t> from, std::vector<size_t> bytes) {
  return [from, bytes = std::move(bytes)](cudaStream_t stream, const std::vector<std::vector<const void*>>& all,
                                          std::span<void* const> out) -> Status {
    if (!from) return zeroOutputs(stream, bytes, out);
    for (size_t j = 0; j < out.size(); ++j)
      if (bytes[j] > 0)
        WF_CUDA_CHECK(cudaMemcpyAsync(out[j], all[*from][j], bytes[j], cudaMemcpyDeviceToDevice, stream));
    return Status::ok();
  };
}

// A process that meets nobody and gets zeros.
CollectiveKernel zerosKernel(const Lowered& l) {
  std::vector<size_t> bytes = l.resultBytes;
  CollectiveKernel k;
  k.kernel = makeKernel([bytes](const LaunchContext& ctx, std::span<void* const>, std::span<void* const> out) {
    return zeroOutputs(ctx.stream, bytes, out);
  });
  return k;
}

Expected<CollectiveKernel> lowerCollectivePermute(const Lowered& l) {
  const ProcessContext& p = l.process;
  WF_RETURN_IF_ERROR(checkSameShapes(l));
  WF_ASSIGN_OR_RETURN(PermuteGroup permute, collectivePermuteGroup(l.op, p.self, p.numReplicas, p.numPartitions));
  if (permute.group.empty()) return zerosKernel(l);
  return groupKernel(l, permute.group, takeFrom(permute.source, l.resultBytes));
}

// The roots a has_dynamic_root operand holds (`count` integers of `type` on the device).
Expected<std::vector<int64_t>> readRoots(cudaStream_t stream, const void* device, ElementType type, size_t count) {
  const auto width = static_cast<size_t>(storageBytes(type));
  std::vector<uint8_t> raw(count * width);
  WF_CUDA_CHECK(cudaMemcpyAsync(raw.data(), device, raw.size(), cudaMemcpyDeviceToHost, stream));
  WF_CUDA_CHECK(cudaStreamSynchronize(stream));
  std::vector<int64_t> roots;
  for (size_t j = 0; j < count; ++j) {
    uint64_t v = 0;  // little-endian: the low `width` bytes
    std::memcpy(&v, raw.data() + j * width, width);
    const auto bits = static_cast<unsigned>(width * 8);
    if (isSignedInteger(type) && bits < 64 && ((v >> (bits - 1)) & 1)) v |= ~uint64_t{0} << bits;
    roots.push_back(static_cast<int64_t>(v));
  }
  return roots;
}

// collective_broadcast / collective_reduce: each data operand's root is the group's first
// process, or with has_dynamic_root the group index the last operand holds (read when the step
// runs). The broadcast copies the root's operand; the reduction leaves the fold at the root and
// zeros at the other processes, which still meet (the root reads their operands).
Expected<CollectiveKernel> lowerRooted(const Lowered& l, bool reduce) {
  const Operation& op = l.op;
  const ProcessContext& p = l.process;
  WF_RETURN_IF_ERROR(checkSameShapes(l));
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> group,
                      collectiveGroupOf(op, channelGroupStrategy(op), p.self, p.numReplicas, p.numPartitions));
  if (!group) return zerosKernel(l);
  const size_t numData = l.shapes.size();
  const bool dynamicRoot = collectiveFlag(op, "has_dynamic_root");
  ElementType rootType = ElementType::kSI64;
  if (dynamicRoot) {
    const Type& t = op.operand(numData)->type();
    if (!t.isTensor() || !isInteger(t.elementType()) || t.numElements() != static_cast<int64_t>(numData))
      return invalidArgument(op.describe() + ": the root operand must hold one index per data operand, got " +
                             t.toString());
    rootType = t.elementType();
  }
  RedKind kind = RedKind::kSum;
  std::vector<FoldView> views;
  if (reduce) {
    Expected<RedKind> fold = foldOf(op);
    if (!fold) return fold.status();
    kind = *fold;
    const Type& argType = op.region(0).front().argument(0)->type();
    for (ElementType t : l.types)
      if (argType.isTensor() && argType.elementType() != t)
        return unsupportedOnCuda(op, "a reduction body of another element type than its operands");
    for (size_t j = 0; j < numData; ++j) views.push_back(foldView(l, j, -1, 1, 0));
  }
  const size_t self = indexIn(*group, p.self), groupSize = group->size();
  const std::vector<ElementType> types = l.types;
  const std::vector<size_t> bytes = l.resultBytes;
  const std::string name = op.describe();
  ComputeFn compute = [=](cudaStream_t stream, const std::vector<std::vector<const void*>>& all,
                          std::span<void* const> out) -> Status {
    std::vector<int64_t> roots(numData, 0);
    if (dynamicRoot) {
      Expected<std::vector<int64_t>> read = readRoots(stream, all[self][numData], rootType, numData);
      if (!read) return read.status();
      roots = std::move(*read);
    }
    for (size_t j = 0; j < numData; ++j) {
      if (roots[j] < 0 || roots[j] >= static_cast<int64_t>(groupSize))
        return invalidArgument(name + ": root " + std::to_string(roots[j]) + " is outside a group of " +
                               std::to_string(groupSize));
      const auto root = static_cast<size_t>(roots[j]);
      if (!reduce) {
        if (bytes[j] > 0)
          WF_CUDA_CHECK(cudaMemcpyAsync(out[j], all[root][j], bytes[j], cudaMemcpyDeviceToDevice, stream));
      } else if (root == self) {
        std::vector<const void*> peers;
        for (const std::vector<const void*>& member : all) peers.push_back(member[j]);
        WF_RETURN_IF_ERROR(launchFold(stream, types[j], kind, peers, out[j], views[j]));
      } else if (bytes[j] > 0) {
        WF_CUDA_CHECK(cudaMemsetAsync(out[j], 0, bytes[j], stream));
      }
    }
    return Status::ok();
  };
  return groupKernel(l, *group, std::move(compute), dynamicRoot);
}

Expected<CollectiveKernel> lowerProcessId(const Operation& op, int64_t id) {
  const Type& t = op.result(0)->type();
  if (!t.isTensor() || t.numElements() != 1 || !isInteger(t.elementType()))
    return unsupportedOnCuda(op, "a result of type " + t.toString());
  const ElementType e = t.elementType();
  CollectiveKernel k;
  k.kernel = makeKernel([e, id](const LaunchContext& ctx, std::span<void* const>, std::span<void* const> out) {
    return dispatchType(e, internalError("process id of a non-integer type"), [&](auto tr) -> Status {
      using Tr = decltype(tr);
      writeIdKernel<Tr><<<1, 1, 0, ctx.stream>>>(static_cast<typename Tr::S*>(out[0]), id);
      WF_CUDA_CHECK_LAUNCH("the process id kernel");
      return Status::ok();
    });
  });
  return Expected<CollectiveKernel>(std::move(k));
}

}  // namespace

bool isCollectiveOp(OpCode code) {
  switch (code) {
    case OpCode::AllReduce:
    case OpCode::AllGather:
    case OpCode::AllToAll:
    case OpCode::ReduceScatter:
    case OpCode::CollectivePermute:
    case OpCode::CollectiveBroadcast:
    case OpCode::CollectiveReduce:
    case OpCode::ReplicaId:
    case OpCode::PartitionId:
      return true;
    default:
      return false;
  }
}

namespace {

Expected<CollectiveKernel> lowerFromGroup(const Lowered& l) {
  switch (l.op.code()) {
    case OpCode::AllReduce: return lowerReduction(l, replicaGroupStrategy(l.op), /*scatter=*/false);
    case OpCode::ReduceScatter: return lowerReduction(l, replicaGroupStrategy(l.op), /*scatter=*/true);
    case OpCode::AllGather: return lowerAllGather(l);
    case OpCode::AllToAll: return lowerAllToAll(l);
    case OpCode::CollectivePermute: return lowerCollectivePermute(l);
    case OpCode::CollectiveBroadcast: return lowerRooted(l, /*reduce=*/false);
    case OpCode::CollectiveReduce: return lowerRooted(l, /*reduce=*/true);
    default: return unsupportedOnCuda(l.op, "not a collective");
  }
}

}  // namespace

Expected<CollectiveKernel> lowerCollective(const Operation& op, const ProcessContext& process, LowerContext& ctx) {
  if (op.code() == OpCode::ReplicaId) return lowerProcessId(op, process.self.replica);
  if (op.code() == OpCode::PartitionId) return lowerProcessId(op, process.self.partition);
  WF_ASSIGN_OR_RETURN(Lowered l, inspect(op, process, ctx));
  if (!process.comm) return lowerFromGroup(l);
  // A job rank. collective_permute is sends and receives on the job's communicator.
  if (op.code() == OpCode::CollectivePermute) {
    WF_RETURN_IF_ERROR(checkSameShapes(l));
    return lowerJobCollectivePermute(op, process);
  }
  // The grid's lowering checks the op and computes its results from the gathered operands of
  // the group; where the communicator has the op itself, the direct lowering replaces it (and
  // its workspace for the gathered copies).
  const size_t workspaceBefore = ctx.workspaceBytes;
  WF_ASSIGN_OR_RETURN(CollectiveKernel gathered, lowerFromGroup(l));
  // A group of one, or no group: nobody to meet.
  if (!gathered.onCommStream) return Expected<CollectiveKernel>(std::move(gathered));
  const size_t workspaceGathered = ctx.workspaceBytes;
  ctx.workspaceBytes = workspaceBefore;
  WF_ASSIGN_OR_RETURN(std::optional<CollectiveKernel> direct, lowerDirectJobCollective(op, process, ctx));
  if (direct) return std::move(*direct);
  ctx.workspaceBytes = workspaceGathered;
  return Expected<CollectiveKernel>(std::move(gathered));
}

Status CommKernel::launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
  WF_ASSIGN_OR_RETURN(std::unique_ptr<dist::Work> work, issue(ctx, in, out));
  WF_RETURN_IF_ERROR(work->wait());
  WF_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
  return Status::ok();
}

}  // namespace wf::cuda
