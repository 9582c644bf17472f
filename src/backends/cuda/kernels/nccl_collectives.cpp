// A job rank's collectives over the job's NCCL communicator (collectives.h): the gathered form
// every collective has (an all_gather of the operands, then the grid's own computation of the
// results), and the direct forms on the communicator's own operations:
//
//   all_reduce      all_reduce of each operand, every operand in one NCCL group (one launch for
//                   a gradient bucket), when the body is one add or multiply (any NCCL type) or
//                   maximum / minimum of integers. Float maximum / minimum are gathered: NCCL's
//                   drop NaNs (fmaxf), StableHLO's propagate them.
//   reduce_scatter  the same reductions, when the scatter dimension has nothing but 1s before it
//                   and the group lists its ranks in ascending order (so that block k of the
//                   operand is rank k's, contiguous)
//   all_gather      the same layout condition on the gather dimension
//   all_to_all      the same on the split and the concat dimensions
//   collective_broadcast  broadcast from the group's first member (a dynamic root is gathered)
//   collective_permute    a send to the target and a receive from the source, in one group
//
// A group that is not the whole job gets a communicator of its own (Communicator::group, created
// at compile time by its members, once per set of ranks).
#include <algorithm>
#include <numeric>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernels/collectives.h"
#include "dist/communicator.h"
#include "dist/host_collectives.h"
#include "eval/reduce_util.h"

namespace wf::cuda {
namespace {

using dist::CollectiveOp;
using dist::Communicator;
using dist::DataType;
using dist::ReduceOp;
using reduce_detail::BinaryKind;

// The communicator of `group` (ranks = replica ids: one partition) and, per member in group
// order, its rank there.
struct JobGroup {
  std::shared_ptr<Communicator> comm;
  std::vector<int> rankOfMember;
  // Member m is rank m: blocks in group order are blocks in rank order.
  bool ascending() const {
    for (size_t m = 0; m < rankOfMember.size(); ++m)
      if (rankOfMember[m] != static_cast<int>(m)) return false;
    return true;
  }
};

Expected<JobGroup> jobGroup(const Operation& op, const ProcessContext& process, const ProcessGroup& group) {
  Communicator& world = *process.comm;
  std::vector<int> ranks;
  for (const ProcessId& p : group) {
    if (p.partition != 0 || p.replica < 0 || p.replica >= world.size())
      return invalidArgument(op.describe() + ": process " + p.toString() + " is outside the job's " +
                             std::to_string(world.size()) + " ranks (one partition each)");
    ranks.push_back(static_cast<int>(p.replica));
  }
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  JobGroup g;
  if (static_cast<int>(sorted.size()) == world.size()) {
    g.comm = process.comm;
  } else {
    Expected<std::shared_ptr<Communicator>> sub = world.group(sorted);
    if (!sub) return sub.status().withContext(op.describe() + ": the communicator of its replica group");
    g.comm = std::move(*sub);
  }
  for (int r : ranks)
    g.rankOfMember.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), r) - sorted.begin()));
  return g;
}

size_t bytesOf(const Type& t) {
  return static_cast<size_t>(t.numElements()) * static_cast<size_t>(storageBytes(t.elementType()));
}

constexpr size_t kAlign = 256;
size_t aligned(size_t bytes) { return (bytes + kAlign - 1) / kAlign * kAlign; }

// ---------------------------------------------------------------------------------------------
// The gathered form
// ---------------------------------------------------------------------------------------------

// Operand j of every member lands in the workspace at offsets[j] + rank * bytes[j]; `compute`
// reads member m's copy at its rank's block.
class GatherKernel final : public CommKernel {
 public:
  GatherKernel(std::string what, JobGroup group, std::vector<size_t> bytes, std::vector<size_t> offsets,
               ComputeFn compute, bool synchronises)
      : what_(std::move(what)),
        group_(std::move(group)),
        bytes_(std::move(bytes)),
        offsets_(std::move(offsets)),
        compute_(std::move(compute)),
        synchronises_(synchronises) {}

  Expected<std::unique_ptr<dist::Work>> issue(const LaunchContext& ctx, std::span<void* const> in,
                                              std::span<void* const> out) override {
    auto* workspace = static_cast<uint8_t*>(ctx.workspace);
    std::vector<CollectiveOp> ops;
    for (size_t j = 0; j < bytes_.size(); ++j) {
      if (bytes_[j] == 0) continue;
      if (!workspace) return internalError(what_ + ": no workspace for the gathered operands");
      CollectiveOp g;
      g.kind = CollectiveOp::Kind::kAllGather;
      g.send = in[j];
      g.recv = workspace + offsets_[j];
      g.count = bytes_[j];
      g.type = DataType::kUInt8;
      ops.push_back(g);
    }
    std::unique_ptr<dist::Work> work = group_.comm->batch(ops, ctx.stream);
    if (synchronises_) WF_RETURN_IF_ERROR(work->wait());
    std::vector<std::vector<const void*>> members(group_.rankOfMember.size());
    for (size_t m = 0; m < members.size(); ++m)
      for (size_t j = 0; j < bytes_.size(); ++j)
        members[m].push_back(bytes_[j] == 0 ? nullptr
                                            : workspace + offsets_[j] +
                                                  static_cast<size_t>(group_.rankOfMember[m]) * bytes_[j]);
    WF_RETURN_IF_ERROR(compute_(ctx.stream, members, out));
    return work;
  }

 private:
  std::string what_;
  JobGroup group_;
  std::vector<size_t> bytes_, offsets_;
  ComputeFn compute_;
  bool synchronises_;
};

// ---------------------------------------------------------------------------------------------
// The direct forms
// ---------------------------------------------------------------------------------------------

// One communicator batch whose buffers are the step's operands and results: op k reads operand
// sendOperand[k] and writes result recvResult[k] (-1: none). `before` runs first on the stream
// (zeros, local copies).
class BatchKernel final : public CommKernel {
 public:
  using Before = std::function<Status(cudaStream_t, std::span<void* const>, std::span<void* const>)>;
  BatchKernel(std::shared_ptr<Communicator> comm, std::vector<CollectiveOp> ops, std::vector<int> sendOperand,
              std::vector<int> recvResult, Before before = nullptr)
      : comm_(std::move(comm)),
        ops_(std::move(ops)),
        sendOperand_(std::move(sendOperand)),
        recvResult_(std::move(recvResult)),
        before_(std::move(before)) {}

  Expected<std::unique_ptr<dist::Work>> issue(const LaunchContext& ctx, std::span<void* const> in,
                                              std::span<void* const> out) override {
    if (before_) WF_RETURN_IF_ERROR(before_(ctx.stream, in, out));
    std::vector<CollectiveOp> ops = ops_;
    for (size_t k = 0; k < ops.size(); ++k) {
      if (sendOperand_[k] >= 0) ops[k].send = in[static_cast<size_t>(sendOperand_[k])];
      if (recvResult_[k] >= 0) ops[k].recv = out[static_cast<size_t>(recvResult_[k])];
    }
    return comm_->batch(ops, ctx.stream);
  }

 private:
  std::shared_ptr<Communicator> comm_;
  std::vector<CollectiveOp> ops_;
  std::vector<int> sendOperand_, recvResult_;
  Before before_;
};

CollectiveKernel commKernel(std::unique_ptr<CommKernel> kernel) {
  CollectiveKernel k;
  k.kernel = std::move(kernel);
  k.meetsPeers = true;
  k.onCommStream = true;
  return k;
}

// The communicator's reduction of the op's body over operands of element type `t`, if it has it.
std::optional<ReduceOp> directReduction(const Operation& op, ElementType t) {
  if (!dist::dataTypeOf(t) || op.numRegions() == 0 || op.region(0).empty() ||
      op.region(0).front().numArguments() != 2)
    return std::nullopt;
  const Type& argType = op.region(0).front().argument(0)->type();
  if (!argType.isTensor() || argType.elementType() != t) return std::nullopt;
  const bool floating = isFloat(t);
  switch (reduce_detail::matchBinaryBody(op.region(0), 0, 1)) {
    case BinaryKind::kAdd: return ReduceOp::kSum;
    case BinaryKind::kMul: return ReduceOp::kProduct;
    case BinaryKind::kMax: return floating ? std::nullopt : std::optional<ReduceOp>(ReduceOp::kMax);
    case BinaryKind::kMin: return floating ? std::nullopt : std::optional<ReduceOp>(ReduceOp::kMin);
    default: return std::nullopt;
  }
}

// The product of the dimensions before `dim`: 1 when the parts along `dim` are contiguous.
int64_t outerOf(const std::vector<int64_t>& shape, int64_t dim) {
  int64_t outer = 1;
  for (int64_t d = 0; d < dim && d < static_cast<int64_t>(shape.size()); ++d) outer *= shape[static_cast<size_t>(d)];
  return outer;
}

Expected<ProcessGroup> groupOf(const Operation& op, const ProcessContext& process, GroupStrategy strategy) {
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> g,
                      collectiveGroupOf(op, strategy, process.self, process.numReplicas, process.numPartitions));
  if (!g) return invalidArgument(op.describe() + ": process " + process.self.toString() + " is in no group");
  return std::move(*g);
}

// all_reduce and reduce_scatter (`scatterDim` >= 0).
Expected<std::optional<CollectiveKernel>> lowerDirectReduction(const Operation& op, const ProcessContext& process,
                                                               int64_t scatterDim) {
  std::vector<CollectiveOp> ops;
  std::vector<int> sendOperand, recvResult;
  WF_ASSIGN_OR_RETURN(ProcessGroup members, groupOf(op, process, replicaGroupStrategy(op)));
  WF_ASSIGN_OR_RETURN(JobGroup group, jobGroup(op, process, members));
  if (scatterDim >= 0 && !group.ascending()) return std::optional<CollectiveKernel>();
  for (size_t j = 0; j < op.numOperands(); ++j) {
    const Type& t = op.operand(j)->type();
    std::optional<ReduceOp> reduction = directReduction(op, t.elementType());
    if (!reduction) return std::optional<CollectiveKernel>();
    if (scatterDim >= 0 && outerOf(t.shape(), scatterDim) != 1) return std::optional<CollectiveKernel>();
    const auto count = static_cast<size_t>(op.result(j)->type().numElements());
    if (count == 0) continue;
    CollectiveOp c;
    c.kind = scatterDim >= 0 ? CollectiveOp::Kind::kReduceScatter : CollectiveOp::Kind::kAllReduce;
    c.count = count;  // reduce_scatter: each rank's part, the result
    c.type = *dist::dataTypeOf(t.elementType());
    c.op = *reduction;
    ops.push_back(c);
    sendOperand.push_back(static_cast<int>(j));
    recvResult.push_back(static_cast<int>(j));
  }
  return std::optional<CollectiveKernel>(commKernel(
      std::make_unique<BatchKernel>(group.comm, std::move(ops), std::move(sendOperand), std::move(recvResult))));
}

// all_gather (`gatherDim`), all_to_all (`splitDim`, `concatDim`) and broadcast: byte movers.
Expected<std::optional<CollectiveKernel>> lowerDirectMover(const Operation& op, const ProcessContext& process) {
  const OpCode code = op.code();
  const GroupStrategy strategy = code == OpCode::AllGather ? replicaGroupStrategy(op) : channelGroupStrategy(op);
  WF_ASSIGN_OR_RETURN(ProcessGroup members, groupOf(op, process, strategy));
  WF_ASSIGN_OR_RETURN(JobGroup group, jobGroup(op, process, members));
  if (code != OpCode::CollectiveBroadcast && !group.ascending()) return std::optional<CollectiveKernel>();
  const auto n = static_cast<int64_t>(members.size());
  std::vector<CollectiveOp> ops;
  std::vector<int> sendOperand, recvResult;
  for (size_t j = 0; j < op.numResults(); ++j) {
    const Type& t = op.operand(j)->type();
    const size_t bytes = bytesOf(t);
    CollectiveOp c;
    c.type = DataType::kUInt8;
    if (code == OpCode::AllGather) {
      WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "all_gather_dim"));
      if (outerOf(op.result(j)->type().shape(), dim) != 1) return std::optional<CollectiveKernel>();
      c.kind = CollectiveOp::Kind::kAllGather;
      c.count = bytes;
    } else if (code == OpCode::AllToAll) {
      WF_ASSIGN_OR_RETURN(int64_t splitDim, collectiveIntAttr(op, "split_dimension"));
      WF_ASSIGN_OR_RETURN(int64_t concatDim, collectiveIntAttr(op, "concat_dimension"));
      if (outerOf(t.shape(), splitDim) != 1 || outerOf(op.result(j)->type().shape(), concatDim) != 1)
        return std::optional<CollectiveKernel>();
      c.kind = CollectiveOp::Kind::kAllToAll;
      c.count = bytes / static_cast<size_t>(n);
    } else {
      c.kind = CollectiveOp::Kind::kBroadcast;
      c.count = bytes;
      c.peer = group.rankOfMember[0];  // the root: the group's first process
    }
    if (bytes == 0) continue;
    ops.push_back(c);
    sendOperand.push_back(static_cast<int>(j));
    recvResult.push_back(static_cast<int>(j));
  }
  return std::optional<CollectiveKernel>(commKernel(
      std::make_unique<BatchKernel>(group.comm, std::move(ops), std::move(sendOperand), std::move(recvResult))));
}

}  // namespace

Expected<CollectiveKernel> gatherThenCompute(const Operation& op, const ProcessContext& process,
                                             const ProcessGroup& group, std::vector<size_t> operandBytes,
                                             ComputeFn compute, bool synchronises, LowerContext& ctx) {
  if (!process.comm) return internalError(op.describe() + ": a job's collective without the job's communicator");
  WF_ASSIGN_OR_RETURN(JobGroup g, jobGroup(op, process, group));
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t bytes : operandBytes) {
    offsets.push_back(total);
    total += aligned(bytes * group.size());
  }
  ctx.workspaceBytes = std::max(ctx.workspaceBytes, total);
  return commKernel(std::make_unique<GatherKernel>(op.describe(), std::move(g), std::move(operandBytes),
                                                   std::move(offsets), std::move(compute), synchronises));
}

Expected<std::optional<CollectiveKernel>> lowerDirectJobCollective(const Operation& op, const ProcessContext& process,
                                                                   LowerContext&) {
  switch (op.code()) {
    case OpCode::AllReduce: return lowerDirectReduction(op, process, -1);
    case OpCode::ReduceScatter: {
      WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "scatter_dimension"));
      return lowerDirectReduction(op, process, dim);
    }
    case OpCode::AllGather:
    case OpCode::AllToAll:
      return lowerDirectMover(op, process);
    case OpCode::CollectiveBroadcast:
      if (collectiveFlag(op, "has_dynamic_root")) return std::optional<CollectiveKernel>();
      return lowerDirectMover(op, process);
    default:
      return std::optional<CollectiveKernel>();
  }
}

// As the CPU's job path (dist/host_collectives.cpp): this rank sends to the process that names it
// as source, and receives from its own source; a process that is its own source keeps its
// operands, and one without a source gets zeros.
Expected<CollectiveKernel> lowerJobCollectivePermute(const Operation& op, const ProcessContext& process) {
  WF_ASSIGN_OR_RETURN(PermuteGroup permute,
                      collectivePermuteGroup(op, process.self, process.numReplicas, process.numPartitions));
  WF_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs, collectiveRowsAttr(op, "source_target_pairs"));
  const ProcessId self = process.self;
  const bool crossPartition = channelGroupStrategy(op) == GroupStrategy::kCrossPartition;
  const int64_t selfId = crossPartition ? self.partition : self.replica;
  auto processOf = [&](int64_t id) {
    return crossPartition ? ProcessId{self.replica, id} : ProcessId{id, self.partition};
  };
  auto rankOf = [&](ProcessId p) -> Expected<int> {
    if (p.partition != 0 || p.replica < 0 || p.replica >= process.comm->size())
      return invalidArgument(op.describe() + ": process " + p.toString() + " is outside the job's " +
                             std::to_string(process.comm->size()) + " ranks (one partition each)");
    return static_cast<int>(p.replica);
  };
  std::optional<int> target, source;
  for (const std::vector<int64_t>& pair : pairs)
    if (pair.size() == 2 && pair[0] == selfId && pair[1] != selfId) {
      WF_ASSIGN_OR_RETURN(int r, rankOf(processOf(pair[1])));
      target = r;
    }
  const bool selfLoop = permute.source && permute.group[*permute.source] == self;
  if (permute.source && !selfLoop) {
    WF_ASSIGN_OR_RETURN(int r, rankOf(permute.group[*permute.source]));
    source = r;
  }
  std::vector<size_t> bytes;
  for (size_t j = 0; j < op.numResults(); ++j) bytes.push_back(bytesOf(op.result(j)->type()));
  std::vector<CollectiveOp> ops;
  std::vector<int> sendOperand, recvResult;
  for (size_t j = 0; j < bytes.size(); ++j) {
    if (bytes[j] == 0) continue;
    CollectiveOp c;
    c.type = DataType::kUInt8;
    c.count = bytes[j];
    if (target) {
      c.kind = CollectiveOp::Kind::kSend;
      c.peer = *target;
      ops.push_back(c);
      sendOperand.push_back(static_cast<int>(j));
      recvResult.push_back(-1);
    }
    if (source) {
      c.kind = CollectiveOp::Kind::kRecv;
      c.peer = *source;
      ops.push_back(c);
      sendOperand.push_back(-1);
      recvResult.push_back(static_cast<int>(j));
    }
  }
  const bool zeros = !source && !selfLoop;
  BatchKernel::Before before = [bytes, selfLoop, zeros](cudaStream_t stream, std::span<void* const> in,
                                                        std::span<void* const> out) -> Status {
    for (size_t j = 0; j < bytes.size(); ++j) {
      if (bytes[j] == 0) continue;
      if (selfLoop) WF_CUDA_CHECK(cudaMemcpyAsync(out[j], in[j], bytes[j], cudaMemcpyDeviceToDevice, stream));
      if (zeros) WF_CUDA_CHECK(cudaMemsetAsync(out[j], 0, bytes[j], stream));
    }
    return Status::ok();
  };
  return commKernel(std::make_unique<BatchKernel>(process.comm, std::move(ops), std::move(sendOperand),
                                                  std::move(recvResult), std::move(before)));
}

}  // namespace wf::cuda
