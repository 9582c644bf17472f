// Collectives on the GPU, for the processes of an interpreter.run_parallel grid (each process is
// an executor of its own, run on a host thread of its own; executor.h): all_reduce,
// all_gather, all_to_all, reduce_scatter, collective_permute, collective_broadcast,
// collective_reduce, and replica_id / partition_id.
//
// A collective step of a process synchronises its stream (its operands are written), deposits
// its operands' device addresses in the grid's DeviceRendezvous, waits for its group, computes
// its results by reading its peers' operands on the device (copies for the data movers, a fold
// kernel for the reductions), synchronises again and meets its group a second time, so that no
// process overwrites an operand a peer still reads. Such steps synchronise on the host: an
// executable holding them runs step by step, never as a CUDA graph. A group of one process (or
// a process in no group) needs nobody: its step is an ordinary device step.
//
// Groups and attributes come from the host evaluator's helpers (eval/collectives.h), so both
// backends read replica_groups, channel ids and use_global_device_ids alike.
//
// One rank of a distributed job (ProcessContext::comm, from CompileOptions::job) is process
// (rank, 0) of a grid of WORLD_SIZE replicas and one partition, and its collectives go over the
// job's NCCL communicator instead (nccl_collectives.cpp): CommKernels, which the executor
// enqueues on a communication stream of its own so that they overlap the compute steps
// (executor.h). The ops keep the semantics above: each op's results are computed from the
// members' operands by the same code (ComputeFn), after an all_gather of the operands over the
// group's communicator; the common cases go straight to the communicator's own collectives
// (all_reduce, reduce_scatter, all_gather, all_to_all, broadcast, send/recv).
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/collectives.h"
#include "backends/cuda/kernel.h"

namespace wf::dist {
class Communicator;
class Work;
}  // namespace wf::dist

namespace wf::cuda {

// Where the processes of one grid meet. Its waits are the CPU's (ProcessWaits): a process that
// fails aborts every wait of the grid, and a wait that no running process can ever end is
// reported as a deadlock, so a broken program returns errors instead of hanging.
class DeviceRendezvous : public ProcessWaits {
 public:
  DeviceRendezvous(int64_t numReplicas, int64_t numPartitions);

  // Forgets an earlier run of the grid (no process may be inside).
  void reset();
  // Process `self` deposits `addresses` for its n-th meeting on `key` among `group`, waits until
  // every member has deposited, and gets every member's addresses in group order.
  Expected<std::vector<std::vector<const void*>>> exchange(const std::string& key, const ProcessGroup& group,
                                                           ProcessId self, std::vector<const void*> addresses);

 private:
  struct Slot {
    std::vector<std::vector<const void*>> contributions;
    size_t numArrived = 0;
    size_t numTaken = 0;
  };

  std::map<std::string, Slot> slots_;
  std::map<std::string, int64_t> generations_;  // per process and key
};

// Which process of which grid an executable runs as. A plain compile is the one process (0, 0)
// of a 1 x 1 grid without a rendezvous.
struct ProcessContext {
  ProcessId self;
  int64_t numReplicas = 1;
  int64_t numPartitions = 1;
  DeviceRendezvous* rendezvous = nullptr;
  // One rank of a distributed job: self = (rank, 0), numReplicas = the job's size, one partition;
  // the collectives meet the other ranks over this device communicator (NCCL).
  std::shared_ptr<dist::Communicator> comm;
};

// True for the ops lowerCollective takes.
bool isCollectiveOp(OpCode code);

struct CollectiveKernel {
  std::unique_ptr<OpKernel> kernel;
  // The kernel meets other processes (synchronises on the host): not in a CUDA graph, not
  // hoisted into the prologue.
  bool meetsPeers = false;
  // The kernel is a CommKernel of a job rank: it runs on the executor's communication stream.
  bool onCommStream = false;
};

// A collective of a job rank over the job's communicator. The executor enqueues it on its
// communication stream after making that stream wait for the compute stream (the operands are
// written); everything the kernel enqueues there (the communicator's operations, and local
// copies or folds after them) is done before the first later step that reads its results or
// writes its operands, which waits for it (Plan::commJoin).
class CommKernel : public OpKernel {
 public:
  // Enqueues the collective on ctx.stream (the communication stream). The Work completes with
  // the communicator's part; waiting on it is bounded by the job's timeout and names the ranks
  // that failed, where a device-side wait would hang on a dead peer.
  virtual Expected<std::unique_ptr<dist::Work>> issue(const LaunchContext& ctx, std::span<void* const> in,
                                                      std::span<void* const> out) = 0;
  // Synchronous: issue on ctx.stream, wait for the Work, then for the stream.
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override;
};

// The kernel of a collective (or replica_id / partition_id) of process `process`. Reduction
// bodies other than one add/multiply/maximum/minimum/and/or and element types the kernels lack
// are Unimplemented. A dynamic root (has_dynamic_root) is read from the device when the step runs.
Expected<CollectiveKernel> lowerCollective(const Operation& op, const ProcessContext& process, LowerContext& ctx);

// ---------------------------------------------------------------------------------------------
// Shared by the grid's lowerings (collectives.cu) and a job rank's (nccl_collectives.cpp).
// ---------------------------------------------------------------------------------------------

// Computes a process's results from the operands of its group's members (addresses by member in
// group order, then by operand), enqueued on `stream`.
using ComputeFn = std::function<Status(cudaStream_t stream, const std::vector<std::vector<const void*>>& group,
                                      std::span<void* const> outputs)>;

// A job rank's collective in `group` (ProcessContext::comm): an all_gather of every operand
// (`operandBytes` each) over the group's communicator into the step's workspace, then `compute`
// on the gathered copies, both on the communication stream. `synchronises`: `compute` reads
// device values on the host (a dynamic root), so the gather is waited for first.
Expected<CollectiveKernel> gatherThenCompute(const Operation& op, const ProcessContext& process,
                                             const ProcessGroup& group, std::vector<size_t> operandBytes,
                                             ComputeFn compute, bool synchronises, LowerContext& ctx);

// A job rank's collective straight on the communicator's own operations, where the op allows
// (nccl_collectives.cpp); nullopt where it does not, and `fallback` (from gatherThenCompute)
// stays. `op` has passed the grid lowering's checks of shapes, types and groups.
Expected<std::optional<CollectiveKernel>> lowerDirectJobCollective(const Operation& op, const ProcessContext& process,
                                                                   LowerContext& ctx);
// collective_permute of a job rank: a send to its target and a receive from its source, grouped.
Expected<CollectiveKernel> lowerJobCollectivePermute(const Operation& op, const ProcessContext& process);

}  // namespace wf::cuda
