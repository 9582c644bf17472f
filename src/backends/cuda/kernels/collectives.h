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
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "eval/collectives.h"
#include "backends/cuda/kernel.h"

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
};

// True for the ops lowerCollective takes.
bool isCollectiveOp(OpCode code);

struct CollectiveKernel {
  std::unique_ptr<OpKernel> kernel;
  // The kernel meets other processes (synchronises on the host): not in a CUDA graph, not
  // hoisted into the prologue.
  bool meetsPeers = false;
};

// The kernel of a collective (or replica_id / partition_id) of process `process`. Reduction
// bodies other than one add/multiply/maximum/minimum/and/or and element types the kernels lack
// are Unimplemented. A dynamic root (has_dynamic_root) is read from the device when the step runs.
Expected<CollectiveKernel> lowerCollective(const Operation& op, const ProcessContext& process, LowerContext& ctx);

}  // namespace wf::cuda
