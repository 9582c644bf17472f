// Collective and distribution ops of the host evaluator: all_reduce, all_gather, all_to_all,
// reduce_scatter, collective_permute, collective_broadcast, collective_reduce, replica_id,
// partition_id, send/recv, infeed/outfeed and tokens; plus the thread grid that runs in-process
// replicas and partitions (Interpreter::runGrid, interpreter.run_parallel).
#include "eval/collectives.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <set>
#include <thread>

namespace wf {

// ---------------------------------------------------------------------------------------------
// Process groups
// ---------------------------------------------------------------------------------------------

std::string ProcessId::toString() const {
  return "(" + std::to_string(replica) + ", " + std::to_string(partition) + ")";
}

Expected<std::vector<ProcessGroup>> computeProcessGroups(GroupStrategy strategy,
                                                         const std::vector<std::vector<int64_t>>& groups,
                                                         int64_t numReplicas, int64_t numPartitions) {
  auto checkId = [](int64_t id, int64_t limit, const char* what) -> Status {
    if (id < 0 || id >= limit)
      return invalidArgument(std::string(what) + " " + std::to_string(id) + " is outside [0, " +
                             std::to_string(limit) + ")");
    return Status::ok();
  };
  std::vector<ProcessGroup> result;
  for (const std::vector<int64_t>& group : groups) {
    std::vector<int64_t> ids;
    for (int64_t id : group)
      if (id >= 0) ids.push_back(id);  // -1 pads ragged groups
    switch (strategy) {
      case GroupStrategy::kCrossReplica:
        for (int64_t p = 0; p < numPartitions; ++p) {
          ProcessGroup g;
          for (int64_t r : ids) {
            WF_RETURN_IF_ERROR(checkId(r, numReplicas, "replica id"));
            g.push_back({r, p});
          }
          result.push_back(std::move(g));
        }
        break;
      case GroupStrategy::kCrossPartition:
        for (int64_t r = 0; r < numReplicas; ++r) {
          ProcessGroup g;
          for (int64_t p : ids) {
            WF_RETURN_IF_ERROR(checkId(p, numPartitions, "partition id"));
            g.push_back({r, p});
          }
          result.push_back(std::move(g));
        }
        break;
      case GroupStrategy::kCrossReplicaAndPartition: {
        ProcessGroup g;
        for (int64_t p = 0; p < numPartitions; ++p)
          for (int64_t r : ids) {
            WF_RETURN_IF_ERROR(checkId(r, numReplicas, "replica id"));
            g.push_back({r, p});
          }
        result.push_back(std::move(g));
        break;
      }
      case GroupStrategy::kFlattenedIds: {
        ProcessGroup g;
        for (int64_t id : ids) {
          WF_RETURN_IF_ERROR(checkId(id, numReplicas * numPartitions, "flattened id"));
          g.push_back({id / numPartitions, id % numPartitions});
        }
        result.push_back(std::move(g));
        break;
      }
    }
  }
  return result;
}

// ---------------------------------------------------------------------------------------------
// Rendezvous
// ---------------------------------------------------------------------------------------------

ProcessWaits::ProcessWaits(int64_t numReplicas, int64_t numPartitions)
    : numReplicas_(numReplicas), numPartitions_(numPartitions) {
  resetLocked();
}

void ProcessWaits::resetLocked() {
  const auto n = static_cast<size_t>(numProcesses());
  error_ = Status::ok();
  done_.assign(n, false);
  waiters_.assign(n, Waiter{});
}

Status ProcessWaits::abortedLocked() const {
  if (error_.isOk()) return Status::ok();
  return Status(error_.code(), "aborted because another process failed: " + error_.message());
}

void ProcessWaits::abortLocked(Status status) {
  if (error_.isOk()) error_ = std::move(status);
  cv_.notify_all();
}

void ProcessWaits::detectDeadlockLocked() {
  if (!error_.isOk()) return;
  std::string stuck;
  for (size_t i = 0; i < waiters_.size(); ++i) {
    if (done_[i]) continue;
    const Waiter& w = waiters_[i];
    // A process that runs, or whose wait can end, can still make progress.
    if (!w.waiting || w.ready()) return;
    ProcessId p{static_cast<int64_t>(i) / numPartitions_, static_cast<int64_t>(i) % numPartitions_};
    stuck += (stuck.empty() ? "" : "; ") + std::string("process ") + p.toString() + " waits for " + w.what;
  }
  if (stuck.empty()) return;
  abortLocked(invalidArgument("deadlock between in-process replicas/partitions: " + stuck));
}

Status ProcessWaits::waitUntil(std::unique_lock<std::mutex>& lock, ProcessId self, std::function<bool()> ready,
                               std::string what) {
  Waiter& w = waiters_[static_cast<size_t>(indexOf(self))];
  w.waiting = true;
  w.ready = ready;
  w.what = std::move(what);
  detectDeadlockLocked();
  cv_.wait(lock, [&] { return !error_.isOk() || ready(); });
  w.waiting = false;
  w.ready = nullptr;
  return abortedLocked();
}

void ProcessWaits::finish(ProcessId self) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[static_cast<size_t>(indexOf(self))] = true;
  detectDeadlockLocked();
  cv_.notify_all();
}

void ProcessWaits::fail(ProcessId self, Status status) {
  std::lock_guard<std::mutex> lock(mu_);
  done_[static_cast<size_t>(indexOf(self))] = true;
  abortLocked(std::move(status));
}

Status ProcessWaits::firstError() const {
  std::lock_guard<std::mutex> lock(mu_);
  return error_;
}

// The in-process grid exchanges every operand (the threads share memory, so that costs no copy).
Rendezvous::Direct Rendezvous::allReduce(const Operation&, const ProcessGroup&, ProcessId, std::span<const Literal>) {
  return std::optional<std::vector<Literal>>();
}
Rendezvous::Direct Rendezvous::allGather(const Operation&, const ProcessGroup&, ProcessId, std::span<const Literal>,
                                         int64_t) {
  return std::optional<std::vector<Literal>>();
}
Rendezvous::Direct Rendezvous::reduceScatter(const Operation&, const ProcessGroup&, ProcessId,
                                             std::span<const Literal>, int64_t) {
  return std::optional<std::vector<Literal>>();
}
Rendezvous::Direct Rendezvous::allToAll(const Operation&, const ProcessGroup&, ProcessId, std::span<const Literal>,
                                        int64_t, int64_t) {
  return std::optional<std::vector<Literal>>();
}
Rendezvous::Direct Rendezvous::collectiveBroadcast(const Operation&, const ProcessGroup&, ProcessId,
                                                   std::span<const Literal>, const std::vector<size_t>&) {
  return std::optional<std::vector<Literal>>();
}
Rendezvous::Direct Rendezvous::collectivePermute(const Operation&, const PermuteGroup&, ProcessId,
                                                 std::span<const Literal>) {
  return std::optional<std::vector<Literal>>();
}

CollectiveRendezvous::CollectiveRendezvous(int64_t numReplicas, int64_t numPartitions,
                                           std::vector<const Operation*> infeed)
    : ProcessWaits(numReplicas, numPartitions), infeed_(infeed.begin(), infeed.end()) {}

Expected<std::vector<std::vector<Literal>>> CollectiveRendezvous::exchange(const std::string& kind, int64_t channelId,
                                                                           const ProcessGroup& group, ProcessId self,
                                                                           std::vector<Literal> operands) {
  auto position = std::find(group.begin(), group.end(), self);
  if (position == group.end()) return internalError(kind + ": process " + self.toString() + " is not in its group");
  const size_t index = static_cast<size_t>(position - group.begin());

  std::string base = kind + "#" + std::to_string(channelId) + "[";
  for (const ProcessId& p : group) base += p.toString();
  base += "]";

  std::unique_lock<std::mutex> lock(mu_);
  WF_RETURN_IF_ERROR(abortedLocked());
  int64_t generation = generations_[base + "@" + std::to_string(indexOf(self))]++;
  const std::string key = base + "/" + std::to_string(generation);
  Slot& slot = slots_[key];
  if (slot.arrived.empty()) {
    slot.contributions.resize(group.size());
    slot.arrived.resize(group.size(), false);
  }
  slot.contributions[index] = std::move(operands);
  slot.arrived[index] = true;
  ++slot.numArrived;
  cv_.notify_all();

  const size_t groupSize = group.size();
  Slot* slotPtr = &slot;  // std::map nodes are stable
  std::string missing = kind + " on channel " + std::to_string(channelId) + " with group [";
  for (const ProcessId& p : group) missing += p.toString();
  missing += "]";
  WF_RETURN_IF_ERROR(waitUntil(lock, self, [slotPtr, groupSize] { return slotPtr->numArrived == groupSize; },
                               std::move(missing)));
  std::vector<std::vector<Literal>> all = slot.contributions;  // Literals alias; cheap
  if (++slot.numTaken == groupSize) slots_.erase(key);
  return all;
}

Status CollectiveRendezvous::send(int64_t channelId, std::vector<Literal> values) {
  std::lock_guard<std::mutex> lock(mu_);
  WF_RETURN_IF_ERROR(abortedLocked());
  channels_[channelId].push_back(std::move(values));
  cv_.notify_all();
  return Status::ok();
}

Expected<std::vector<Literal>> CollectiveRendezvous::recv(int64_t channelId, ProcessId self, const std::vector<Type>&) {
  std::unique_lock<std::mutex> lock(mu_);
  std::deque<std::vector<Literal>>* queue = &channels_[channelId];
  WF_RETURN_IF_ERROR(waitUntil(lock, self, [queue] { return !queue->empty(); },
                               "a message on channel " + std::to_string(channelId)));
  std::vector<Literal> values = std::move(queue->front());
  queue->pop_front();
  return values;
}

Expected<const Operation*> CollectiveRendezvous::nextInfeed() {
  std::lock_guard<std::mutex> lock(mu_);
  if (infeed_.empty()) return outOfRange("the infeed queue is empty");
  const Operation* f = infeed_.front();
  infeed_.pop_front();
  return f;
}

void CollectiveRendezvous::outfeed(std::vector<Literal> values) {
  std::lock_guard<std::mutex> lock(mu_);
  outfeed_.push_back(std::move(values));
}

std::vector<std::vector<Literal>> CollectiveRendezvous::outfeedValues() const {
  std::lock_guard<std::mutex> lock(mu_);
  return outfeed_;
}

// ---------------------------------------------------------------------------------------------
// The thread grid
// ---------------------------------------------------------------------------------------------

namespace {

// Serialises check reports coming from several process threads.
class LockedCheckSink : public CheckSink {
 public:
  explicit LockedCheckSink(CheckSink* inner) : inner_(inner) {}
  void report(const Operation& op, bool passed, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_->report(op, passed, message);
  }
  void unsupported(const Operation& op, const std::string& message) override {
    std::lock_guard<std::mutex> lock(mu_);
    inner_->unsupported(op, message);
  }

 private:
  CheckSink* inner_;
  std::mutex mu_;
};

}  // namespace

Expected<std::vector<std::vector<Literal>>> runProcessGrid(const ProcessGrid& grid, const Module& module,
                                                           CheckSink* checks, int callDepth) {
  if (grid.numReplicas < 1 || grid.numPartitions < 1)
    return invalidArgument("a process grid needs at least one replica and one partition");
  const size_t n = static_cast<size_t>(grid.numReplicas * grid.numPartitions);
  if (grid.functions.size() != n || grid.args.size() != n)
    return internalError("process grid of " + std::to_string(n) + " processes got " +
                         std::to_string(grid.functions.size()) + " functions and " +
                         std::to_string(grid.args.size()) + " argument lists");

  CollectiveRendezvous rendezvous(grid.numReplicas, grid.numPartitions, grid.infeed);
  std::optional<LockedCheckSink> lockedChecks;
  if (checks) lockedChecks.emplace(checks);
  std::vector<std::vector<Literal>> results(n);

  auto runProcess = [&](size_t i) {
    ProcessId self{static_cast<int64_t>(i) / grid.numPartitions, static_cast<int64_t>(i) % grid.numPartitions};
    EvalContext ctx;
    ctx.module = &module;
    ctx.replicaId = self.replica;
    ctx.partitionId = self.partition;
    ctx.numReplicas = grid.numReplicas;
    ctx.numPartitions = grid.numPartitions;
    ctx.rendezvous = &rendezvous;
    ctx.checks = checks ? &*lockedChecks : nullptr;
    ctx.callDepth = callDepth;
    Expected<std::vector<Literal>> r = Interpreter::callFunction(*grid.functions[i], grid.args[i], ctx);
    if (r) {
      results[i] = std::move(*r);
      rendezvous.finish(self);
    } else {
      rendezvous.fail(self, r.status().withContext("process " + self.toString()));
    }
  };

  if (n == 1) {
    runProcess(0);
  } else {
    std::vector<std::thread> threads;
    threads.reserve(n);
    for (size_t i = 0; i < n; ++i) threads.emplace_back(runProcess, i);
    for (std::thread& t : threads) t.join();
  }
  Status error = rendezvous.firstError();
  if (!error.isOk()) return error;
  return results;
}

Expected<std::vector<std::vector<Literal>>> Interpreter::runGrid(const Operation& func, std::vector<Literal> args,
                                                                 const Module& module, int64_t numReplicas,
                                                                 int64_t numPartitions, CheckSink* checks) {
  if (numReplicas < 1 || numPartitions < 1)
    return invalidArgument("runGrid needs at least one replica and one partition");
  ProcessGrid grid;
  grid.numReplicas = numReplicas;
  grid.numPartitions = numPartitions;
  const size_t n = static_cast<size_t>(numReplicas * numPartitions);
  const size_t numArgs = func.numRegions() && !func.region(0).empty() ? FuncOp(&func).body().numArguments() : 0;
  grid.functions.assign(n, &func);
  // Either one argument list for every process, or all processes' arguments back to back.
  if (args.size() == numArgs) {
    grid.args.assign(n, args);
  } else if (args.size() == numArgs * n) {
    for (size_t i = 0; i < n; ++i)
      grid.args.emplace_back(args.begin() + static_cast<std::ptrdiff_t>(i * numArgs),
                             args.begin() + static_cast<std::ptrdiff_t>((i + 1) * numArgs));
  } else {
    return invalidArgument("function @" + std::string(FuncOp(&func).symName()) + " takes " +
                           std::to_string(numArgs) + " arguments per process; got " + std::to_string(args.size()) +
                           " for " + std::to_string(n) + " processes");
  }
  return runProcessGrid(grid, module, checks);
}

// ---------------------------------------------------------------------------------------------
// Collective attributes and groups (shared with the CUDA backend)
// ---------------------------------------------------------------------------------------------

int64_t collectiveChannelId(const Operation& op) {
  const Attribute* handle = op.attr("channel_handle");
  if (!handle) return 0;
  if (const Attribute* h = handle->field("handle"))
    if (auto v = h->asInt()) return *v;
  return 0;
}

bool collectiveFlag(const Operation& op, std::string_view name) {
  const Attribute* a = op.attr(name);
  if (!a) return false;
  if (a->kind() == Attribute::Kind::kBool) return a->boolValue();
  return a->kind() == Attribute::Kind::kUnit;
}

Expected<int64_t> collectiveIntAttr(const Operation& op, std::string_view name) {
  const Attribute* a = op.attr(name);
  std::optional<int64_t> v = a ? a->asInt() : std::nullopt;
  if (!v) return invalidArgument(op.describe() + ": missing integer attribute '" + std::string(name) + "'");
  return *v;
}

// A 2-D integer tensor attribute (replica_groups, source_target_pairs) as rows.
Expected<std::vector<std::vector<int64_t>>> collectiveRowsAttr(const Operation& op, std::string_view name) {
  std::vector<std::vector<int64_t>> rows;
  const Attribute* a = op.attr(name);
  if (!a) return rows;
  const Literal* l = a->literal();
  if (!l) {
    // A flat list (e.g. `array<i64: ...>`) is one group.
    if (auto flat = a->asIntList()) {
      if (!flat->empty()) rows.push_back(*flat);
      return rows;
    }
    return invalidArgument(op.describe() + ": attribute '" + std::string(name) + "' is not a 2-D integer tensor");
  }
  if (l->shape().size() != 2)
    return invalidArgument(op.describe() + ": attribute '" + std::string(name) + "' must be 2-D, got " +
                           l->type().toString());
  const int64_t numRows = l->shape()[0], numCols = l->shape()[1];
  for (int64_t r = 0; r < numRows; ++r) {
    std::vector<int64_t> row;
    for (int64_t c = 0; c < numCols; ++c) row.push_back(l->getInt(r * numCols + c));
    rows.push_back(std::move(row));
  }
  return rows;
}

Expected<std::optional<ProcessGroup>> collectiveGroupOf(const Operation& op, GroupStrategy strategy, ProcessId self,
                                                        int64_t numReplicas, int64_t numPartitions) {
  WF_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> ids, collectiveRowsAttr(op, "replica_groups"));
  if (ids.empty()) {
    // No groups: every process of the strategy's axis is in one group.
    int64_t count = strategy == GroupStrategy::kCrossPartition ? numPartitions
                    : strategy == GroupStrategy::kFlattenedIds ? numReplicas * numPartitions
                                                               : numReplicas;
    std::vector<int64_t> all;
    for (int64_t i = 0; i < count; ++i) all.push_back(i);
    ids.push_back(std::move(all));
  }
  auto groups = computeProcessGroups(strategy, ids, numReplicas, numPartitions);
  if (!groups) return groups.status().withContext(op.describe());
  for (ProcessGroup& g : *groups)
    if (std::find(g.begin(), g.end(), self) != g.end()) return std::optional<ProcessGroup>(std::move(g));
  return std::optional<ProcessGroup>();
}

// Strategy of all_gather / all_reduce / reduce_scatter.
GroupStrategy replicaGroupStrategy(const Operation& op) {
  const bool global = collectiveFlag(op, "use_global_device_ids");
  if (collectiveChannelId(op) <= 0 && !global) return GroupStrategy::kCrossReplica;
  return global ? GroupStrategy::kFlattenedIds : GroupStrategy::kCrossReplicaAndPartition;
}

// Strategy of all_to_all / collective_permute / collective_broadcast / collective_reduce.
GroupStrategy channelGroupStrategy(const Operation& op) {
  return collectiveChannelId(op) > 0 ? GroupStrategy::kCrossPartition : GroupStrategy::kCrossReplica;
}

Expected<PermuteGroup> collectivePermuteGroup(const Operation& op, ProcessId self, int64_t numReplicas,
                                              int64_t numPartitions) {
  WF_ASSIGN_OR_RETURN(std::vector<std::vector<int64_t>> pairs, collectiveRowsAttr(op, "source_target_pairs"));
  const bool crossPartition = channelGroupStrategy(op) == GroupStrategy::kCrossPartition;
  const int64_t limit = crossPartition ? numPartitions : numReplicas;
  const int64_t selfId = crossPartition ? self.partition : self.replica;
  // Everyone named in a pair, on this process's line of the grid, meets once.
  std::set<int64_t> ids;
  std::optional<int64_t> source;
  for (const std::vector<int64_t>& pair : pairs) {
    if (pair.size() != 2) return invalidArgument(op.describe() + ": source_target_pairs must be N x 2");
    for (int64_t id : pair)
      if (id < 0 || id >= limit)
        return invalidArgument(op.describe() + ": source_target_pairs id " + std::to_string(id) +
                               " is outside [0, " + std::to_string(limit) + ")");
    ids.insert(pair[0]);
    ids.insert(pair[1]);
    if (pair[1] == selfId) source = pair[0];
  }
  PermuteGroup result;
  if (!ids.count(selfId)) return result;
  for (int64_t id : ids)
    result.group.push_back(crossPartition ? ProcessId{self.replica, id} : ProcessId{id, self.partition});
  if (source) result.source = static_cast<size_t>(std::distance(ids.begin(), ids.find(*source)));
  return result;
}

// ---------------------------------------------------------------------------------------------
// Kernels
// ---------------------------------------------------------------------------------------------

namespace {

using Results = Expected<std::vector<Literal>>;

ProcessId selfOf(const EvalContext& ctx) { return {ctx.replicaId, ctx.partitionId}; }

// The process group of this process for a collective with `replica_groups`; nullopt when the
// process is in none of them.
Expected<std::optional<ProcessGroup>> groupOf(const Operation& op, GroupStrategy strategy, const EvalContext& ctx) {
  return collectiveGroupOf(op, strategy, selfOf(ctx), ctx.numReplicas, ctx.numPartitions);
}

Expected<ProcessGroup> requiredGroupOf(const Operation& op, GroupStrategy strategy, const EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> g, groupOf(op, strategy, ctx));
  if (!g) return invalidArgument(op.describe() + ": process " + selfOf(ctx).toString() + " is in no replica group");
  return std::move(*g);
}

// Exchanges operands within `group`; a group of one needs no other process.
Expected<std::vector<std::vector<Literal>>> exchangeIn(const Operation& op, const ProcessGroup& group,
                                                       std::vector<Literal> operands, EvalContext& ctx) {
  if (group.size() == 1 && group[0] == selfOf(ctx)) return std::vector<std::vector<Literal>>{std::move(operands)};
  if (!ctx.rendezvous)
    return invalidArgument(op.describe() + ": a group of " + std::to_string(group.size()) +
                           " processes needs interpreter.run_parallel (this runs as a single process)");
  auto r = ctx.rendezvous->exchange(op.name(), collectiveChannelId(op), group, selfOf(ctx), std::move(operands));
  if (!r) return r.status().withContext(op.describe());
  return r;
}

// Asks the rendezvous to compute the op itself (Rendezvous::Direct); nullopt: use exchangeIn.
template <typename Call>
Expected<std::optional<std::vector<Literal>>> directIn(const Operation& op, size_t groupSize, EvalContext& ctx,
                                                       Call&& call) {
  if (groupSize <= 1 || !ctx.rendezvous) return std::optional<std::vector<Literal>>();
  Rendezvous::Direct r = call(*ctx.rendezvous);
  if (!r) return r.status().withContext(op.describe());
  return r;
}

#define WF_RETURN_IF_DIRECT(op, groupSize, ctx, call)                                       \
  do {                                                                                     \
    auto wf_direct_ = directIn(op, groupSize, ctx, call);                                  \
    if (!wf_direct_) return wf_direct_.status();                                            \
    if (*wf_direct_) return std::move(**wf_direct_);                                        \
  } while (0)

// Shape of `l` seen as [outer, l.dim(dim), inner] with inner counted in bytes.
struct DimView {
  int64_t outer = 1, size = 0, innerBytes = 0;
};

DimView viewAt(const Literal& l, int64_t dim) {
  DimView v;
  const auto& s = l.shape();
  for (int64_t i = 0; i < dim; ++i) v.outer *= s[static_cast<size_t>(i)];
  v.size = s[static_cast<size_t>(dim)];
  int64_t inner = 1;
  for (size_t i = static_cast<size_t>(dim) + 1; i < s.size(); ++i) inner *= s[i];
  v.innerBytes = inner * storageBytes(l.elementType());
  return v;
}

Status checkDim(const Operation& op, const Literal& l, int64_t dim, const char* what) {
  if (!l.type().isTensor() || dim < 0 || dim >= static_cast<int64_t>(l.shape().size()))
    return invalidArgument(op.describe() + ": " + what + " " + std::to_string(dim) + " is out of range for " +
                           l.type().toString());
  return Status::ok();
}

}  // namespace

// Concatenates tensors that agree except along `dim`.
Literal concatAlong(const std::vector<Literal>& parts, int64_t dim) {
  std::vector<int64_t> shape = parts[0].shape();
  int64_t total = 0;
  for (const Literal& p : parts) total += p.shape()[static_cast<size_t>(dim)];
  shape[static_cast<size_t>(dim)] = total;
  Literal out = Literal::zeros(Type::tensor(shape, parts[0].elementType()));
  const DimView outView = viewAt(out, dim);
  int64_t offset = 0;  // along dim
  for (const Literal& p : parts) {
    const DimView v = viewAt(p, dim);
    const int64_t chunk = v.size * v.innerBytes;
    for (int64_t o = 0; o < v.outer && chunk > 0; ++o)
      std::memcpy(out.data() + (o * outView.size + offset) * outView.innerBytes, p.data() + o * chunk,
                  static_cast<size_t>(chunk));
    offset += v.size;
  }
  return out;
}

// Part `index` of `count` equal parts of `l` along `dim`.
Literal partAlong(const Literal& l, int64_t count, int64_t index, int64_t dim) {
  std::vector<int64_t> shape = l.shape();
  const int64_t partSize = shape[static_cast<size_t>(dim)] / count;
  shape[static_cast<size_t>(dim)] = partSize;
  Literal out = Literal::zeros(Type::tensor(shape, l.elementType()));
  const DimView v = viewAt(l, dim);
  const int64_t chunk = partSize * v.innerBytes;
  for (int64_t o = 0; o < v.outer && chunk > 0; ++o)
    std::memcpy(out.data() + o * chunk, l.data() + (o * v.size + index * partSize) * v.innerBytes,
                static_cast<size_t>(chunk));
  return out;
}

namespace {

// Element `i` of `l` as a 0-d tensor of `target` (to_destination_type of the spec).
Literal scalarAt(const Literal& l, int64_t i, ElementType target) {
  Literal s = Literal::zeros(Type::scalar(target));
  const ElementType source = l.elementType();
  if (source == target) {
    const int bytes = storageBytes(source);
    std::memcpy(s.data(), l.data() + i * bytes, static_cast<size_t>(bytes));
  } else if (isComplex(target)) {
    s.setComplex(0, l.getComplex(i));
  } else if (isFloat(target)) {
    s.setDouble(0, l.getDouble(i));
  } else if (isBoolean(target)) {
    s.setInt(0, l.getInt(i) != 0);
  } else {
    s.setInt(0, l.getInt(i));
  }
  return s;
}

// Folds `values` (one tensor per process, in group order) element by element with the op's
// reduction region: ((v0 . v1) . v2) ... , a valid schedule in the spec's sense.
Expected<Literal> reduceValues(const Operation& op, const std::vector<Literal>& values, EvalContext& ctx) {
  if (op.numRegions() == 0 || op.region(0).empty() || op.region(0).front().numArguments() != 2)
    return invalidArgument(op.describe() + ": the reduction region must take two arguments");
  const Type& argType = op.region(0).front().argument(0)->type();
  const ElementType e = argType.isTensor() ? argType.elementType() : values[0].elementType();
  for (const Literal& v : values)
    if (v.shape() != values[0].shape())
      return invalidArgument(op.describe() + ": processes contributed different shapes " +
                             values[0].type().toString() + " and " + v.type().toString());
  Literal out = Literal::zeros(Type::tensor(values[0].shape(), e));
  const int bytes = storageBytes(e);
  for (int64_t i = 0; i < out.numElements(); ++i) {
    Literal acc = scalarAt(values[0], i, e);
    for (size_t k = 1; k < values.size(); ++k) {
      Literal args[2] = {acc, scalarAt(values[k], i, e)};
      WF_ASSIGN_OR_RETURN(std::vector<Literal> r, Interpreter::runRegion(op.region(0), args, ctx));
      if (r.size() != 1 || !r[0].type().isTensor() || r[0].elementType() != e || r[0].numElements() != 1)
        return invalidArgument(op.describe() + ": the reduction region must return one tensor<" +
                               std::string(elementTypeName(e)) + ">");
      acc = std::move(r[0]);
    }
    std::memcpy(out.data() + i * bytes, acc.data(), static_cast<size_t>(bytes));
  }
  return out;
}

// Operand #j of every contribution.
std::vector<Literal> column(const std::vector<std::vector<Literal>>& contributions, size_t j) {
  std::vector<Literal> values;
  for (const std::vector<Literal>& c : contributions) values.push_back(c[j]);
  return values;
}

Results zerosLike(const Operation& op) {
  std::vector<Literal> out;
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Type& t = op.result(i)->type();
    if (!t.isTensor() || !t.hasStaticShape())
      return invalidArgument(op.describe() + ": result #" + std::to_string(i) + " needs a static tensor type");
    out.push_back(Literal::zeros(t));
  }
  return out;
}

Results allReduce(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroupOf(op, replicaGroupStrategy(op), ctx));
  WF_RETURN_IF_DIRECT(op, group.size(), ctx, [&](Rendezvous& r) { return r.allReduce(op, group, selfOf(ctx), operands); });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) {
    WF_ASSIGN_OR_RETURN(Literal r, reduceValues(op, column(contributions, j), ctx));
    results.push_back(std::move(r));
  }
  return results;
}

Results allGather(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "all_gather_dim"));
  for (const Literal& l : operands) WF_RETURN_IF_ERROR(checkDim(op, l, dim, "all_gather_dim"));
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroupOf(op, replicaGroupStrategy(op), ctx));
  WF_RETURN_IF_DIRECT(op, group.size(), ctx,
                      [&](Rendezvous& r) { return r.allGather(op, group, selfOf(ctx), operands, dim); });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) results.push_back(concatAlong(column(contributions, j), dim));
  return results;
}

Results allToAll(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(int64_t splitDim, collectiveIntAttr(op, "split_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t concatDim, collectiveIntAttr(op, "concat_dimension"));
  WF_ASSIGN_OR_RETURN(int64_t splitCount, collectiveIntAttr(op, "split_count"));
  for (const Literal& l : operands) {
    WF_RETURN_IF_ERROR(checkDim(op, l, splitDim, "split_dimension"));
    WF_RETURN_IF_ERROR(checkDim(op, l, concatDim, "concat_dimension"));
    if (splitCount <= 0 || l.shape()[static_cast<size_t>(splitDim)] % splitCount != 0)
      return invalidArgument(op.describe() + ": split_count " + std::to_string(splitCount) + " does not divide " +
                             l.type().toString() + " along dimension " + std::to_string(splitDim));
  }
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroupOf(op, channelGroupStrategy(op), ctx));
  if (static_cast<int64_t>(group.size()) != splitCount)
    return invalidArgument(op.describe() + ": split_count " + std::to_string(splitCount) + " differs from the group size " +
                           std::to_string(group.size()));
  const int64_t index = std::find(group.begin(), group.end(), selfOf(ctx)) - group.begin();
  WF_RETURN_IF_DIRECT(op, group.size(), ctx, [&](Rendezvous& r) {
    return r.allToAll(op, group, selfOf(ctx), operands, splitDim, concatDim);
  });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) {
    std::vector<Literal> scattered;
    for (const std::vector<Literal>& sender : contributions)
      scattered.push_back(partAlong(sender[j], splitCount, index, splitDim));
    results.push_back(concatAlong(scattered, concatDim));
  }
  return results;
}

Results reduceScatter(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(int64_t dim, collectiveIntAttr(op, "scatter_dimension"));
  WF_ASSIGN_OR_RETURN(ProcessGroup group, requiredGroupOf(op, replicaGroupStrategy(op), ctx));
  const auto parts = static_cast<int64_t>(group.size());
  for (const Literal& l : operands) {
    WF_RETURN_IF_ERROR(checkDim(op, l, dim, "scatter_dimension"));
    if (l.shape()[static_cast<size_t>(dim)] % parts != 0)
      return invalidArgument(op.describe() + ": the group size " + std::to_string(parts) + " does not divide " +
                             l.type().toString() + " along dimension " + std::to_string(dim));
  }
  const int64_t index = std::find(group.begin(), group.end(), selfOf(ctx)) - group.begin();
  WF_RETURN_IF_DIRECT(op, group.size(), ctx,
                      [&](Rendezvous& r) { return r.reduceScatter(op, group, selfOf(ctx), operands, dim); });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) {
    WF_ASSIGN_OR_RETURN(Literal reduced, reduceValues(op, column(contributions, j), ctx));
    results.push_back(partAlong(reduced, parts, index, dim));
  }
  return results;
}

Results collectivePermute(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(PermuteGroup permute, collectivePermuteGroup(op, selfOf(ctx), ctx.numReplicas, ctx.numPartitions));
  if (permute.group.empty()) return zerosLike(op);
  WF_RETURN_IF_DIRECT(op, permute.group.size(), ctx,
                      [&](Rendezvous& r) { return r.collectivePermute(op, permute, selfOf(ctx), operands); });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, permute.group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  if (!permute.source) return zerosLike(op);
  return contributions[*permute.source];
}

// With has_dynamic_root the last operand holds, per data operand, the index in the group of the
// process that is its root; otherwise the root of every operand is the group's first process.
Expected<std::vector<size_t>> rootsOf(const Operation& op, std::span<const Literal>& operands, size_t groupSize) {
  if (!collectiveFlag(op, "has_dynamic_root")) return std::vector<size_t>(op.numResults(), 0);
  if (operands.size() < 2) return invalidArgument(op.describe() + ": has_dynamic_root needs a root operand");
  const Literal& roots = operands.back();
  operands = operands.first(operands.size() - 1);
  if (roots.numElements() != static_cast<int64_t>(operands.size()) || !isInteger(roots.elementType()))
    return invalidArgument(op.describe() + ": the root operand must hold one index per data operand, got " +
                           roots.type().toString());
  std::vector<size_t> result;
  for (int64_t j = 0; j < roots.numElements(); ++j) {
    const int64_t r = roots.getInt(j);
    if (r < 0 || r >= static_cast<int64_t>(groupSize))
      return invalidArgument(op.describe() + ": root " + std::to_string(r) + " is outside a group of " +
                             std::to_string(groupSize));
    result.push_back(static_cast<size_t>(r));
  }
  return result;
}

Results collectiveBroadcast(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> group, groupOf(op, channelGroupStrategy(op), ctx));
  if (!group) return zerosLike(op);
  WF_ASSIGN_OR_RETURN(std::vector<size_t> roots, rootsOf(op, operands, group->size()));
  WF_RETURN_IF_DIRECT(op, group->size(), ctx, [&](Rendezvous& r) {
    return r.collectiveBroadcast(op, *group, selfOf(ctx), operands, roots);
  });
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, *group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  std::vector<Literal> results;
  for (size_t j = 0; j < operands.size(); ++j) results.push_back(contributions[roots[j]][j]);
  return results;
}

Results collectiveReduce(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  WF_ASSIGN_OR_RETURN(std::optional<ProcessGroup> group, groupOf(op, channelGroupStrategy(op), ctx));
  if (!group) return zerosLike(op);
  WF_ASSIGN_OR_RETURN(std::vector<size_t> roots, rootsOf(op, operands, group->size()));
  WF_ASSIGN_OR_RETURN(auto contributions,
                      exchangeIn(op, *group, std::vector<Literal>(operands.begin(), operands.end()), ctx));
  const auto self = static_cast<size_t>(std::find(group->begin(), group->end(), selfOf(ctx)) - group->begin());
  WF_ASSIGN_OR_RETURN(std::vector<Literal> results, zerosLike(op));
  // Only each operand's root keeps its reduction; the other processes get zeros.
  for (size_t j = 0; j < operands.size(); ++j) {
    if (roots[j] != self) continue;
    WF_ASSIGN_OR_RETURN(results[j], reduceValues(op, column(contributions, j), ctx));
  }
  return results;
}

Results processIdKernel(const Operation& op, int64_t id) {
  const Type& t = op.result(0)->type();
  ElementType e = t.isTensor() ? t.elementType() : ElementType::kUI32;
  return std::vector<Literal>{Literal::scalarInt(e, id)};
}

Results sendKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  if (!ctx.rendezvous)
    return invalidArgument(op.describe() + ": send needs a peer process (interpreter.run_parallel)");
  std::vector<Literal> payload;
  for (const Literal& l : operands)
    if (!l.isToken()) payload.push_back(l);
  Status s = ctx.rendezvous->send(collectiveChannelId(op), std::move(payload));
  if (!s.isOk()) return s.withContext(op.describe());
  return std::vector<Literal>{Literal::token()};
}

Results recvKernel(const Operation& op, std::span<const Literal>, EvalContext& ctx) {
  if (!ctx.rendezvous)
    return invalidArgument(op.describe() + ": recv needs a peer process (interpreter.run_parallel)");
  std::vector<Type> types;
  for (size_t i = 0; i + 1 < op.numResults(); ++i) types.push_back(op.result(i)->type());
  auto message = ctx.rendezvous->recv(collectiveChannelId(op), selfOf(ctx), types);
  if (!message) return message.status().withContext(op.describe());
  std::vector<Literal> results = std::move(*message);
  if (results.size() + 1 != op.numResults())
    return invalidArgument(op.describe() + ": received " + std::to_string(results.size()) + " values, expected " +
                           std::to_string(op.numResults() - 1));
  results.push_back(Literal::token());
  return results;
}

Results infeedKernel(const Operation& op, std::span<const Literal>, EvalContext& ctx) {
  if (!ctx.rendezvous)
    return invalidArgument(op.describe() + ": no infeed queue (give interpreter.run_parallel an `infeed` list)");
  auto next = ctx.rendezvous->nextInfeed();
  if (!next) return next.status().withContext(op.describe());
  WF_ASSIGN_OR_RETURN(std::vector<Literal> results, Interpreter::callFunction(**next, {}, ctx));
  results.push_back(Literal::token());
  return results;
}

Results outfeedKernel(const Operation& op, std::span<const Literal> operands, EvalContext& ctx) {
  std::vector<Literal> values;
  for (const Literal& l : operands)
    if (!l.isToken()) values.push_back(l);
  // Without a grid there is nobody to read the outfeed: the values are dropped.
  if (ctx.rendezvous) ctx.rendezvous->outfeed(std::move(values));
  return std::vector<Literal>{Literal::token()};
}

Results tokenKernel(const Operation&, std::span<const Literal>, EvalContext&) {
  return std::vector<Literal>{Literal::token()};
}

}  // namespace

void registerCollectiveKernels(KernelRegistry& registry) {
  registry.add(OpCode::AllReduce, allReduce);
  registry.add(OpCode::AllGather, allGather);
  registry.add(OpCode::AllToAll, allToAll);
  registry.add(OpCode::ReduceScatter, reduceScatter);
  registry.add(OpCode::CollectivePermute, collectivePermute);
  registry.add(OpCode::CollectiveBroadcast, collectiveBroadcast);
  registry.add(OpCode::CollectiveReduce, collectiveReduce);
  registry.add(OpCode::ReplicaId, [](const Operation& op, std::span<const Literal>, EvalContext& ctx) {
    return processIdKernel(op, ctx.replicaId);
  });
  registry.add(OpCode::PartitionId, [](const Operation& op, std::span<const Literal>, EvalContext& ctx) {
    return processIdKernel(op, ctx.partitionId);
  });
  registry.add(OpCode::Send, sendKernel);
  registry.add(OpCode::Recv, recvKernel);
  registry.add(OpCode::Infeed, infeedKernel);
  registry.add(OpCode::Outfeed, outfeedKernel);
  registry.add(OpCode::AfterAll, tokenKernel);
  registry.add(OpCode::CreateToken, tokenKernel);
}

}  // namespace wf
