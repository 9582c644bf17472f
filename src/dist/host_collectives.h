// StableHLO collectives across the processes of a distributed job, on host Literals: the
// evaluator's Rendezvous and GridRunner (eval/collectives.h) over a Communicator.
//
// A program run by N ranks is one process each: replica_id = rank (one partition). Its
// collectives keep the in-process grid's semantics (the same kernels find the same replica
// groups), and lower to the communicator: all_reduce and reduce_scatter whose body is one add,
// multiply, maximum or minimum of an element type the communicator reduces become its
// all_reduce / reduce_scatter; all_gather, all_to_all and collective_broadcast its own
// operations; collective_permute a send and a receive. Everything else (other bodies, other
// element types, collective_reduce) exchanges the operands with an all_gather and computes
// locally, as the in-process grid does. A group that is not the whole world gets a communicator
// of its own (Communicator::group, created once). send/recv (channels without a named peer) and
// infeed go through the job's store.
//
// An interpreter.run_parallel grid of n processes runs across the first n ranks of the job
// (rank k is process k, row-major over (replica, partition)); the other ranks sit it out, and
// every rank gets every process's results, so the checks after the grid run alike everywhere.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "dist/communicator.h"
#include "dist/store.h"
#include "eval/collectives.h"

namespace wf::dist {

class Job;

// The communicator type of a StableHLO element type; nullopt where it has none (i1, 16-bit
// integers, sub-byte and 8-bit floats, complex).
std::optional<DataType> dataTypeOf(ElementType type);

class HostCollectives final : public Rendezvous {
 public:
  // `comm`: rank k is process k of the program (k = replica * numPartitions + partition).
  // `scope` names this run's keys in the store (a program's channels and infeed queue).
  HostCollectives(std::shared_ptr<Communicator> comm, std::shared_ptr<TcpStore> store, int64_t numPartitions,
                  std::vector<const Operation*> infeed, std::string scope);

  Expected<std::vector<std::vector<Literal>>> exchange(const std::string& kind, int64_t channelId,
                                                       const ProcessGroup& group, ProcessId self,
                                                       std::vector<Literal> operands) override;
  Direct allReduce(const Operation& op, const ProcessGroup& group, ProcessId self,
                   std::span<const Literal> operands) override;
  Direct allGather(const Operation& op, const ProcessGroup& group, ProcessId self, std::span<const Literal> operands,
                   int64_t dim) override;
  Direct reduceScatter(const Operation& op, const ProcessGroup& group, ProcessId self,
                       std::span<const Literal> operands, int64_t dim) override;
  Direct allToAll(const Operation& op, const ProcessGroup& group, ProcessId self, std::span<const Literal> operands,
                  int64_t splitDim, int64_t concatDim) override;
  Direct collectiveBroadcast(const Operation& op, const ProcessGroup& group, ProcessId self,
                             std::span<const Literal> operands, const std::vector<size_t>& roots) override;
  Direct collectivePermute(const Operation& op, const PermuteGroup& permute, ProcessId self,
                           std::span<const Literal> operands) override;
  Status send(int64_t channelId, std::vector<Literal> values) override;
  Expected<std::vector<Literal>> recv(int64_t channelId, ProcessId self, const std::vector<Type>& types) override;
  Expected<const Operation*> nextInfeed() override;
  void outfeed(std::vector<Literal> values) override;

 private:
  // The communicator of `group` and, per member in group order, its rank there.
  struct GroupComm {
    std::shared_ptr<Communicator> comm;
    std::vector<int> rankOfMember;
  };
  Expected<GroupComm> commOf(const ProcessGroup& group);
  int rankOf(ProcessId p) const { return static_cast<int>(p.replica * numPartitions_ + p.partition); }

  std::shared_ptr<Communicator> comm_;
  std::shared_ptr<TcpStore> store_;
  int64_t numPartitions_;
  std::vector<const Operation*> infeed_;
  std::string scope_;
};

// Runs interpreter.run_parallel grids across the ranks of `job` (see above).
class ProcessGridRunner final : public GridRunner {
 public:
  explicit ProcessGridRunner(std::shared_ptr<Job> job) : job_(std::move(job)) {}
  Expected<std::vector<std::vector<Literal>>> run(const ProcessGrid& grid, const Module& module, CheckSink* checks,
                                                  int callDepth) override;

 private:
  std::shared_ptr<Job> job_;
};

// A fresh scope for the store keys of one run of a program (the same sequence on every rank,
// since every rank runs the same programs in the same order).
std::string nextRunScope(const std::string& what);

}  // namespace wf::dist
