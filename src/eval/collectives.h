// In-process replicas and partitions for the host evaluator: a grid of threads, one per StableHLO
// process, that meet in a CollectiveRendezvous to exchange collective operands, pass send/recv
// messages and share the infeed queue. A process that fails aborts the rendezvous, and a wait
// that no running process can ever satisfy is reported as a deadlock, so a broken program
// returns an error instead of hanging the grid.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "eval/interpreter.h"

namespace wf {

// (replica_id, partition_id) of one process of the grid.
struct ProcessId {
  int64_t replica = 0;
  int64_t partition = 0;
  friend bool operator==(const ProcessId&, const ProcessId&) = default;
  std::string toString() const;
};

using ProcessGroup = std::vector<ProcessId>;

// How a collective splits the grid into process groups (spec, "Process groups").
enum class GroupStrategy { kCrossReplica, kCrossPartition, kCrossReplicaAndPartition, kFlattenedIds };

// The process groups of `strategy` applied to `groups` (replica, partition or flattened ids; -1
// entries pad ragged groups and are skipped). Ids outside the grid are an error.
Expected<std::vector<ProcessGroup>> computeProcessGroups(GroupStrategy strategy,
                                                         const std::vector<std::vector<int64_t>>& groups,
                                                         int64_t numReplicas, int64_t numPartitions);

// Attributes of the collective ops and the group each process meets in, shared by the CPU
// kernels and the CUDA backend's collectives (backends/cuda/kernels/collectives.h).
int64_t collectiveChannelId(const Operation& op);  // channel_handle's handle; 0 without one
bool collectiveFlag(const Operation& op, std::string_view name);  // a unit or bool attribute
Expected<int64_t> collectiveIntAttr(const Operation& op, std::string_view name);
// A 2-D integer tensor attribute (replica_groups, source_target_pairs) as rows.
Expected<std::vector<std::vector<int64_t>>> collectiveRowsAttr(const Operation& op, std::string_view name);
// The strategy of all_gather / all_reduce / reduce_scatter (channel id and use_global_device_ids).
GroupStrategy replicaGroupStrategy(const Operation& op);
// The strategy of all_to_all / collective_permute / collective_broadcast / collective_reduce.
GroupStrategy channelGroupStrategy(const Operation& op);
// The group of `self` for an op with `replica_groups` (none: every process of the strategy's
// axis); nullopt when `self` is in no group.
Expected<std::optional<ProcessGroup>> collectiveGroupOf(const Operation& op, GroupStrategy strategy, ProcessId self,
                                                        int64_t numReplicas, int64_t numPartitions);
// collective_permute: the processes of self's line of the grid that source_target_pairs names
// (in id order; empty when it does not name self), and the index among them of self's source.
struct PermuteGroup {
  ProcessGroup group;
  std::optional<size_t> source;
};
Expected<PermuteGroup> collectivePermuteGroup(const Operation& op, ProcessId self, int64_t numReplicas,
                                              int64_t numPartitions);

// Concatenates tensors that agree except along `dim`; part `index` of `count` equal parts of `l`
// along `dim`. The data movement of all_gather, all_to_all and reduce_scatter.
Literal concatAlong(const std::vector<Literal>& parts, int64_t dim);
Literal partAlong(const Literal& l, int64_t count, int64_t index, int64_t dim);

// The waits of a grid's processes, shared by the CPU's CollectiveRendezvous and the CUDA
// backend's DeviceRendezvous: a process that fails aborts every wait of the grid, and a wait that
// no running process can ever end is reported as a deadlock. Subclasses guard their own state
// with mu_ and wake waiters through cv_ when it changes.
class ProcessWaits {
 public:
  int64_t numProcesses() const { return numReplicas_ * numPartitions_; }
  int64_t indexOf(ProcessId p) const { return p.replica * numPartitions_ + p.partition; }

  // A process ended: normally, or with an error that aborts every wait of the grid.
  void finish(ProcessId self);
  void fail(ProcessId self, Status status);
  // The error that aborted the grid (the first failure), or ok.
  Status firstError() const;

 protected:
  ProcessWaits(int64_t numReplicas, int64_t numPartitions);

  // Forgets every process's state and the error (lock held by the caller).
  void resetLocked();
  // The error a process of an aborted grid gets, or ok (lock held by the caller).
  Status abortedLocked() const;
  // Blocks `self` until `ready()` (lock held by the caller). Fails if the grid was aborted or
  // if every live process waits for something that cannot happen.
  Status waitUntil(std::unique_lock<std::mutex>& lock, ProcessId self, std::function<bool()> ready,
                   std::string what);

  const int64_t numReplicas_;
  const int64_t numPartitions_;
  mutable std::mutex mu_;
  std::condition_variable cv_;

 private:
  struct Waiter {
    bool waiting = false;
    std::function<bool()> ready;
    std::string what;
  };

  void detectDeadlockLocked();
  void abortLocked(Status status);

  Status error_;
  std::vector<bool> done_;
  std::vector<Waiter> waiters_;
};

// Where the processes of a program meet: the threads of one in-process grid
// (CollectiveRendezvous, below) or the processes of a distributed job (dist/host_collectives.h,
// over a Communicator). The collective kernels find the group and check the operands, then ask
// the rendezvous: first for the op itself (an implementation that moves less data than an
// exchange of every operand computes it; nullopt: it does not), else for the exchange.
class Rendezvous {
 public:
  virtual ~Rendezvous() = default;

  // Process `self` deposits `operands` for the collective of kind `kind` on `channelId` among
  // `group`, waits until every member has deposited, and gets all contributions in group order.
  // The n-th such call of each member on the same (kind, channel, group) meet each other.
  virtual Expected<std::vector<std::vector<Literal>>> exchange(const std::string& kind, int64_t channelId,
                                                               const ProcessGroup& group, ProcessId self,
                                                               std::vector<Literal> operands) = 0;

  // The ops themselves, with the operands checked and `group` the group of `self`: the results,
  // or nullopt where this rendezvous leaves the op to exchange().
  using Direct = Expected<std::optional<std::vector<Literal>>>;
  virtual Direct allReduce(const Operation& op, const ProcessGroup& group, ProcessId self,
                           std::span<const Literal> operands);
  virtual Direct allGather(const Operation& op, const ProcessGroup& group, ProcessId self,
                           std::span<const Literal> operands, int64_t dim);
  virtual Direct reduceScatter(const Operation& op, const ProcessGroup& group, ProcessId self,
                               std::span<const Literal> operands, int64_t dim);
  virtual Direct allToAll(const Operation& op, const ProcessGroup& group, ProcessId self,
                          std::span<const Literal> operands, int64_t splitDim, int64_t concatDim);
  // `roots[j]`: the index in `group` of operand j's root.
  virtual Direct collectiveBroadcast(const Operation& op, const ProcessGroup& group, ProcessId self,
                                     std::span<const Literal> operands, const std::vector<size_t>& roots);
  virtual Direct collectivePermute(const Operation& op, const PermuteGroup& permute, ProcessId self,
                                   std::span<const Literal> operands);

  // Channel-based point-to-point messages: send never blocks, recv waits for the oldest message.
  virtual Status send(int64_t channelId, std::vector<Literal> values) = 0;
  // `types`: the values the receiving op expects (a rendezvous that carries bytes rebuilds them).
  virtual Expected<std::vector<Literal>> recv(int64_t channelId, ProcessId self, const std::vector<Type>& types) = 0;

  // The next function of the `infeed` queue of interpreter.run_parallel.
  virtual Expected<const Operation*> nextInfeed() = 0;
  virtual void outfeed(std::vector<Literal> values) = 0;
};

class CollectiveRendezvous : public ProcessWaits, public Rendezvous {
 public:
  CollectiveRendezvous(int64_t numReplicas, int64_t numPartitions, std::vector<const Operation*> infeed = {});

  Expected<std::vector<std::vector<Literal>>> exchange(const std::string& kind, int64_t channelId,
                                                       const ProcessGroup& group, ProcessId self,
                                                       std::vector<Literal> operands) override;
  Status send(int64_t channelId, std::vector<Literal> values) override;
  Expected<std::vector<Literal>> recv(int64_t channelId, ProcessId self, const std::vector<Type>& types) override;
  Expected<const Operation*> nextInfeed() override;
  void outfeed(std::vector<Literal> values) override;
  std::vector<std::vector<Literal>> outfeedValues() const;

 private:
  struct Slot {
    std::vector<std::vector<Literal>> contributions;
    std::vector<bool> arrived;
    size_t numArrived = 0;
    size_t numTaken = 0;
  };

  std::map<std::string, Slot> slots_;
  std::map<std::string, int64_t> generations_;  // per process and collective key
  std::map<int64_t, std::deque<std::vector<Literal>>> channels_;
  std::deque<const Operation*> infeed_;
  std::vector<std::vector<Literal>> outfeed_;
};

// A grid of processes, each running its own function on its own arguments (row-major over
// (replica, partition)), as interpreter.run_parallel describes it.
struct ProcessGrid {
  int64_t numReplicas = 1;
  int64_t numPartitions = 1;
  std::vector<const Operation*> functions;  // numReplicas * numPartitions func.func ops
  std::vector<std::vector<Literal>> args;   // one argument list per process
  std::vector<const Operation*> infeed;     // functions whose results feed successive infeeds
};

// Runs every process of `grid` on its own thread and returns the results per process. `checks`
// may be null; it is called under a lock, so it need not be thread-safe.
Expected<std::vector<std::vector<Literal>>> runProcessGrid(const ProcessGrid& grid, const Module& module,
                                                           CheckSink* checks, int callDepth = 0);

// Runs the grids of interpreter.run_parallel (EvalContext::gridRunner): by default
// runProcessGrid's threads; in a distributed job, one process of the grid per rank
// (dist/host_collectives.h). Every caller gets the results of every process.
class GridRunner {
 public:
  virtual ~GridRunner() = default;
  virtual Expected<std::vector<std::vector<Literal>>> run(const ProcessGrid& grid, const Module& module,
                                                          CheckSink* checks, int callDepth) = 0;
};

}  // namespace wf
