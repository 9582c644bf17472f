// StableHLO collectives across the processes of a job (host_collectives.h).
#include "dist/host_collectives.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "dist/job.h"
#include "eval/reduce_util.h"

namespace wf::dist {

namespace {

using reduce_detail::BinaryKind;

std::string processName(ProcessId p, int rank) { return "process " + p.toString() + " (rank " + std::to_string(rank) + ")"; }

// The communicator's reduction of an op whose body is one add / multiply / maximum / minimum of
// its two arguments, of the operands' own element type; nullopt otherwise.
std::optional<ReduceOp> reduceOpOf(const Operation& op, std::span<const Literal> operands) {
  if (op.numRegions() == 0 || op.region(0).empty() || op.region(0).front().numArguments() != 2) return std::nullopt;
  const Type& argType = op.region(0).front().argument(0)->type();
  for (const Literal& l : operands)
    if (!argType.isTensor() || argType.elementType() != l.elementType() || !dataTypeOf(l.elementType()))
      return std::nullopt;
  switch (reduce_detail::matchBinaryBody(op.region(0), 0, 1)) {
    case BinaryKind::kAdd: return ReduceOp::kSum;
    case BinaryKind::kMul: return ReduceOp::kProduct;
    case BinaryKind::kMax: return ReduceOp::kMax;
    case BinaryKind::kMin: return ReduceOp::kMin;
    default: return std::nullopt;
  }
}

// Waits for every work in order; the first error.
Status waitAll(std::vector<std::unique_ptr<Work>>& works) {
  Status first;
  for (auto& w : works) {
    Status s = w->wait();
    if (first.isOk() && !s.isOk()) first = s;
  }
  return first;
}

Literal copyOf(const Literal& l) { return l.clone(); }

// Blocks of `l` along `dim` in the communicator's order: block r is the part of the member whose
// rank there is r.
std::vector<uint8_t> blocksInRankOrder(const Literal& l, int64_t dim, const std::vector<int>& rankOfMember) {
  const auto n = static_cast<int64_t>(rankOfMember.size());
  std::vector<Literal> parts(rankOfMember.size());
  for (int64_t i = 0; i < n; ++i) parts[static_cast<size_t>(rankOfMember[static_cast<size_t>(i)])] = partAlong(l, n, i, dim);
  std::vector<uint8_t> out;
  out.reserve(l.sizeBytes());
  for (const Literal& p : parts) {
    const auto* b = reinterpret_cast<const uint8_t*>(p.data());
    out.insert(out.end(), b, b + p.sizeBytes());
  }
  return out;
}

// Member i's block of `buffer` (blocks of `type` in the communicator's rank order).
Literal memberBlock(const std::vector<uint8_t>& buffer, const Type& type, int rank) {
  Literal l = Literal::zeros(type);
  std::memcpy(l.data(), buffer.data() + static_cast<size_t>(rank) * l.sizeBytes(), l.sizeBytes());
  return l;
}

Type withDim(const Literal& l, int64_t dim, int64_t size) {
  std::vector<int64_t> shape = l.shape();
  shape[static_cast<size_t>(dim)] = size;
  return Type::tensor(shape, l.elementType());
}

std::vector<uint8_t> toBytes(const std::string& s) { return std::vector<uint8_t>(s.begin(), s.end()); }

std::atomic<int64_t> runCounter{0};

}  // namespace

std::string nextRunScope(const std::string& what) { return "hlo/" + what + "/" + std::to_string(runCounter++); }

std::optional<DataType> dataTypeOf(ElementType type) {
  switch (type) {
    case ElementType::kSI8: return DataType::kInt8;
    case ElementType::kUI8: return DataType::kUInt8;
    case ElementType::kSI32: return DataType::kInt32;
    case ElementType::kUI32: return DataType::kUInt32;
    case ElementType::kSI64: return DataType::kInt64;
    case ElementType::kUI64: return DataType::kUInt64;
    case ElementType::kF16: return DataType::kFloat16;
    case ElementType::kBF16: return DataType::kBFloat16;
    case ElementType::kF32: return DataType::kFloat32;
    case ElementType::kF64: return DataType::kFloat64;
    default: return std::nullopt;
  }
}

HostCollectives::HostCollectives(std::shared_ptr<Communicator> comm, std::shared_ptr<TcpStore> store,
                                 int64_t numPartitions, std::vector<const Operation*> infeed, std::string scope)
    : comm_(std::move(comm)),
      store_(std::move(store)),
      numPartitions_(numPartitions),
      infeed_(std::move(infeed)),
      scope_(std::move(scope)) {}

Expected<HostCollectives::GroupComm> HostCollectives::commOf(const ProcessGroup& group) {
  std::vector<int> ranks;
  for (const ProcessId& p : group) {
    const int r = rankOf(p);
    if (r < 0 || r >= comm_->size())
      return invalidArgument(p.toString() + " is outside the job's " + std::to_string(comm_->size()) + " ranks");
    ranks.push_back(r);
  }
  std::vector<int> sorted = ranks;
  std::sort(sorted.begin(), sorted.end());
  GroupComm g;
  if (static_cast<int>(sorted.size()) == comm_->size()) {
    g.comm = comm_;
  } else {
    WF_ASSIGN_OR_RETURN(g.comm, comm_->group(sorted));
  }
  for (int r : ranks)
    g.rankOfMember.push_back(static_cast<int>(std::lower_bound(sorted.begin(), sorted.end(), r) - sorted.begin()));
  return g;
}

// Every member's operands, through an all_gather of their sizes and then of their bytes.
Expected<std::vector<std::vector<Literal>>> HostCollectives::exchange(const std::string& kind, int64_t,
                                                                      const ProcessGroup& group, ProcessId self,
                                                                      std::vector<Literal> operands) {
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  const size_t n = group.size();
  std::vector<int64_t> sizes;
  for (const Literal& l : operands) sizes.push_back(static_cast<int64_t>(l.sizeBytes()));
  std::vector<int64_t> allSizes(sizes.size() * n);
  WF_RETURN_IF_ERROR(g.comm->allGather(sizes.data(), allSizes.data(), sizes.size(), DataType::kInt64)->wait());
  std::vector<std::vector<Literal>> all(n);
  for (size_t j = 0; j < operands.size(); ++j) {
    const Literal& mine = operands[j];
    for (size_t m = 0; m < n; ++m) {
      const int64_t theirs = allSizes[static_cast<size_t>(g.rankOfMember[m]) * sizes.size() + j];
      if (theirs != sizes[j])
        return invalidArgument(kind + ": " + group[m].toString() + " contributed " + std::to_string(theirs) +
                               " bytes for operand #" + std::to_string(j) + ", " + self.toString() + " " +
                               std::to_string(sizes[j]) + " (" + mine.type().toString() + ")");
    }
    std::vector<uint8_t> gathered(mine.sizeBytes() * n);
    WF_RETURN_IF_ERROR(g.comm->allGather(mine.data(), gathered.data(), mine.sizeBytes(), DataType::kUInt8)->wait());
    for (size_t m = 0; m < n; ++m) all[m].push_back(memberBlock(gathered, mine.type(), g.rankOfMember[m]));
  }
  return all;
}

Rendezvous::Direct HostCollectives::allReduce(const Operation& op, const ProcessGroup& group, ProcessId,
                                              std::span<const Literal> operands) {
  std::optional<ReduceOp> reduction = reduceOpOf(op, operands);
  if (!reduction) return std::optional<std::vector<Literal>>();
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  std::vector<Literal> results;
  std::vector<std::unique_ptr<Work>> works;
  for (const Literal& l : operands) {
    results.push_back(copyOf(l));
    works.push_back(g.comm->allReduce(results.back().data(), static_cast<size_t>(l.numElements()),
                                      *dataTypeOf(l.elementType()), *reduction));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  return std::optional<std::vector<Literal>>(std::move(results));
}

Rendezvous::Direct HostCollectives::allGather(const Operation&, const ProcessGroup& group, ProcessId,
                                              std::span<const Literal> operands, int64_t dim) {
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  const size_t n = group.size();
  std::vector<std::vector<uint8_t>> gathered(operands.size());
  std::vector<std::unique_ptr<Work>> works;
  for (size_t j = 0; j < operands.size(); ++j) {
    gathered[j].resize(operands[j].sizeBytes() * n);
    works.push_back(g.comm->allGather(operands[j].data(), gathered[j].data(), operands[j].sizeBytes(), DataType::kUInt8));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) {
    std::vector<Literal> parts;
    for (size_t m = 0; m < n; ++m) parts.push_back(memberBlock(gathered[j], operands[j].type(), g.rankOfMember[m]));
    results.push_back(concatAlong(parts, dim));
  }
  return std::optional<std::vector<Literal>>(std::move(results));
}

Rendezvous::Direct HostCollectives::reduceScatter(const Operation& op, const ProcessGroup& group, ProcessId,
                                                  std::span<const Literal> operands, int64_t dim) {
  std::optional<ReduceOp> reduction = reduceOpOf(op, operands);
  if (!reduction) return std::optional<std::vector<Literal>>();
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  const auto n = static_cast<int64_t>(group.size());
  std::vector<std::vector<uint8_t>> blocks;
  std::vector<Literal> results;
  std::vector<std::unique_ptr<Work>> works;
  for (const Literal& l : operands) {
    blocks.push_back(blocksInRankOrder(l, dim, g.rankOfMember));
    results.push_back(Literal::zeros(withDim(l, dim, l.shape()[static_cast<size_t>(dim)] / n)));
    works.push_back(g.comm->reduceScatter(blocks.back().data(), results.back().data(),
                                          static_cast<size_t>(results.back().numElements()),
                                          *dataTypeOf(l.elementType()), *reduction));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  return std::optional<std::vector<Literal>>(std::move(results));
}

Rendezvous::Direct HostCollectives::allToAll(const Operation&, const ProcessGroup& group, ProcessId,
                                             std::span<const Literal> operands, int64_t splitDim, int64_t concatDim) {
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  const auto n = static_cast<int64_t>(group.size());
  std::vector<std::vector<uint8_t>> sent, received;
  std::vector<std::unique_ptr<Work>> works;
  for (const Literal& l : operands) {
    sent.push_back(blocksInRankOrder(l, splitDim, g.rankOfMember));
    received.emplace_back(sent.back().size());
    works.push_back(g.comm->allToAll(sent.back().data(), received.back().data(), l.sizeBytes() / static_cast<size_t>(n),
                                     DataType::kUInt8));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) {
    const Literal& l = operands[j];
    const Type part = withDim(l, splitDim, l.shape()[static_cast<size_t>(splitDim)] / n);
    std::vector<Literal> parts;
    for (int64_t m = 0; m < n; ++m) parts.push_back(memberBlock(received[j], part, g.rankOfMember[static_cast<size_t>(m)]));
    results.push_back(concatAlong(parts, concatDim));
  }
  return std::optional<std::vector<Literal>>(std::move(results));
}

Rendezvous::Direct HostCollectives::collectiveBroadcast(const Operation&, const ProcessGroup& group, ProcessId,
                                                        std::span<const Literal> operands,
                                                        const std::vector<size_t>& roots) {
  WF_ASSIGN_OR_RETURN(GroupComm g, commOf(group));
  std::vector<Literal> results;
  std::vector<std::unique_ptr<Work>> works;
  for (size_t j = 0; j < operands.size(); ++j) {
    results.push_back(copyOf(operands[j]));
    works.push_back(g.comm->broadcast(results.back().data(), results.back().sizeBytes(), DataType::kUInt8,
                                      g.rankOfMember[roots[j]]));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  return std::optional<std::vector<Literal>>(std::move(results));
}

// A send to this process's target and a receive from its source, on the job's communicator.
Rendezvous::Direct HostCollectives::collectivePermute(const Operation& op, const PermuteGroup& permute, ProcessId self,
                                                      std::span<const Literal> operands) {
  WF_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs, collectiveRowsAttr(op, "source_target_pairs"));
  const bool crossPartition = channelGroupStrategy(op) == GroupStrategy::kCrossPartition;
  const int64_t selfId = crossPartition ? self.partition : self.replica;
  auto processOf = [&](int64_t id) { return crossPartition ? ProcessId{self.replica, id} : ProcessId{id, self.partition}; };
  std::optional<int> target;
  for (const std::vector<int64_t>& pair : pairs)
    if (pair[0] == selfId && pair[1] != selfId) target = rankOf(processOf(pair[1]));
  std::optional<int> source;
  if (permute.source && permute.group[*permute.source] != self) source = rankOf(permute.group[*permute.source]);
  // A process that is its own source keeps its operands.
  const bool selfLoop = permute.source && permute.group[*permute.source] == self;
  constexpr uint32_t kPermuteTag = 0x5045;  // "PE": apart from user send/recv tags
  std::vector<Literal> results;
  std::vector<std::unique_ptr<Work>> works;
  for (size_t j = 0; j < operands.size(); ++j) {
    if (target)
      works.push_back(comm_->send(operands[j].data(), operands[j].sizeBytes(), DataType::kUInt8, *target, kPermuteTag));
    const Type& t = op.result(j)->type();
    if (!t.isTensor() || !t.hasStaticShape())
      return invalidArgument(op.describe() + ": result #" + std::to_string(j) + " needs a static tensor type");
    results.push_back(selfLoop ? copyOf(operands[j]) : Literal::zeros(t));
    if (source)
      works.push_back(comm_->recv(results.back().data(), results.back().sizeBytes(), DataType::kUInt8, *source,
                                  kPermuteTag));
  }
  WF_RETURN_IF_ERROR(waitAll(works));
  return std::optional<std::vector<Literal>>(std::move(results));
}

// Channels name no peer: the n-th message sent on a channel is the n-th one received, through the
// job's store.
Status HostCollectives::send(int64_t channelId, std::vector<Literal> values) {
  const std::string channel = scope_ + "/channel/" + std::to_string(channelId);
  WF_ASSIGN_OR_RETURN(int64_t seq, store_->add(channel + "/sent", 1));
  std::vector<uint8_t> payload;
  for (const Literal& l : values) {
    const auto* b = reinterpret_cast<const uint8_t*>(l.data());
    payload.insert(payload.end(), b, b + l.sizeBytes());
  }
  return store_->set(channel + "/message/" + std::to_string(seq), payload);
}

Expected<std::vector<Literal>> HostCollectives::recv(int64_t channelId, ProcessId, const std::vector<Type>& types) {
  const std::string channel = scope_ + "/channel/" + std::to_string(channelId);
  WF_ASSIGN_OR_RETURN(int64_t seq, store_->add(channel + "/received", 1));
  const std::string key = channel + "/message/" + std::to_string(seq);
  WF_ASSIGN_OR_RETURN(std::vector<uint8_t> payload, store_->get(key));
  std::vector<Literal> values;
  size_t offset = 0;
  for (const Type& t : types) {
    if (!t.isTensor() || !t.hasStaticShape())
      return invalidArgument("recv on channel " + std::to_string(channelId) + ": result type " + t.toString() +
                             " is not a static tensor");
    Literal l = Literal::zeros(t);
    if (offset + l.sizeBytes() > payload.size()) break;
    std::memcpy(l.data(), payload.data() + offset, l.sizeBytes());
    offset += l.sizeBytes();
    values.push_back(std::move(l));
  }
  if (values.size() != types.size() || offset != payload.size())
    return invalidArgument("recv on channel " + std::to_string(channelId) + ": the message holds " +
                           std::to_string(payload.size()) + " bytes, not the bytes of the " +
                           std::to_string(types.size()) + " values the op receives");
  return values;
}

Expected<const Operation*> HostCollectives::nextInfeed() {
  WF_ASSIGN_OR_RETURN(int64_t index, store_->add(scope_ + "/infeed", 1));
  if (index > static_cast<int64_t>(infeed_.size())) return outOfRange("the infeed queue is empty");
  return infeed_[static_cast<size_t>(index - 1)];
}

// Nobody reads a job's outfeed: the values are dropped, as a single process drops them.
void HostCollectives::outfeed(std::vector<Literal>) {}

Expected<std::vector<std::vector<Literal>>> ProcessGridRunner::run(const ProcessGrid& grid, const Module& module,
                                                                   CheckSink* checks, int callDepth) {
  Communicator& world = job_->world();
  const int64_t n = grid.numReplicas * grid.numPartitions;
  if (n > world.size())
    return invalidArgument("interpreter.run_parallel: a grid of " + std::to_string(n) +
                           " processes needs a job of at least " + std::to_string(n) + " ranks; this one has " +
                           std::to_string(world.size()) + " (WORLD_SIZE)");
  if (world.backend() != "gloo")
    return unimplemented("interpreter.run_parallel across processes runs on the host (gloo); the job's communicator is " +
                         world.backend());
  const std::string scope = nextRunScope("grid");
  const int rank = world.rank();
  std::vector<std::vector<Literal>> results(static_cast<size_t>(n));
  std::string error;
  if (rank < n) {
    const ProcessId self{rank / grid.numPartitions, rank % grid.numPartitions};
    std::shared_ptr<Communicator> gridComm = job_->worldPtr();
    if (n < world.size()) {
      std::vector<int> ranks;
      for (int r = 0; r < n; ++r) ranks.push_back(r);
      Expected<std::shared_ptr<Communicator>> g = world.group(ranks);
      if (!g) return g.status();
      gridComm = *g;
    }
    HostCollectives collectives(gridComm, job_->storePtr(), grid.numPartitions, grid.infeed, scope);
    EvalContext ctx;
    ctx.module = &module;
    ctx.replicaId = self.replica;
    ctx.partitionId = self.partition;
    ctx.numReplicas = grid.numReplicas;
    ctx.numPartitions = grid.numPartitions;
    ctx.rendezvous = &collectives;
    ctx.checks = checks;
    ctx.callDepth = callDepth;
    Expected<std::vector<Literal>> r =
        Interpreter::callFunction(*grid.functions[static_cast<size_t>(rank)], grid.args[static_cast<size_t>(rank)], ctx);
    if (r) {
      results[static_cast<size_t>(rank)] = std::move(*r);
    } else {
      error = processName(self, rank) + ": " + r.status().message();
    }
    // What each process did, in the store: the ranks that sit the grid out learn it there too,
    // and nobody takes part in the exchange of results after a failure.
    WF_RETURN_IF_ERROR(job_->store().set(scope + "/done/" + std::to_string(rank), toBytes(error)));
  }
  std::vector<std::string> failures;
  for (int r = 0; r < n; ++r) {
    WF_ASSIGN_OR_RETURN(std::vector<uint8_t> outcome, job_->store().get(scope + "/done/" + std::to_string(r)));
    if (!outcome.empty()) failures.emplace_back(outcome.begin(), outcome.end());
  }
  if (!failures.empty()) {
    std::string message = failures[0];
    if (failures.size() > 1) message += " (and " + std::to_string(failures.size() - 1) + " more processes failed)";
    return invalidArgument(message);
  }
  // Every process's results, from its rank to every rank.
  for (int64_t k = 0; k < n; ++k) {
    const FunctionType type = FuncOp(grid.functions[static_cast<size_t>(k)]).functionType();
    std::vector<Literal>& mine = results[static_cast<size_t>(k)];
    if (k != rank) {
      mine.clear();
      for (const Type& t : type.results) {
        if (t.isToken()) {
          mine.push_back(Literal::token());
        } else if (t.isTensor() && t.hasStaticShape()) {
          mine.push_back(Literal::zeros(t));
        } else {
          return unimplemented("interpreter.run_parallel across processes: result type " + t.toString() +
                               " of process " + std::to_string(k) + " (static tensors and tokens only)");
        }
      }
    }
    std::vector<std::unique_ptr<Work>> works;
    for (Literal& l : mine)
      if (!l.isToken() && l.sizeBytes() > 0)
        works.push_back(world.broadcast(l.data(), l.sizeBytes(), DataType::kUInt8, static_cast<int>(k)));
    WF_RETURN_IF_ERROR(waitAll(works));
  }
  return results;
}

}  // namespace wf::dist
