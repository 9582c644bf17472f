// The executor: runs a Plan (plan.h) on one GPU, on a stream of its own.
//
// A run uploads the arguments not bound, reruns the groups of hoisted steps that a bind made
// stale (plan.h prologue groups), launches the per-run steps and downloads the results and taps.
// Host steps download their operands, run the CPU interpreter's kernel and upload the results;
// control steps copy their predicate or index (one scalar) from the device and pick the next
// step on the host, so a program with control flow costs a device-to-host copy and a stream
// synchronisation per branch.
//
// Launch: a plan that is one graph segment (static shapes, no host steps, no control flow, no
// collectives) is captured into a CUDA graph on its first run and replayed on every later run,
// unless CompileOptions::cudaGraphs is off or the run records per-step timings. If the capture
// fails, the executor launches step by step from then on.
//
// Carried results (CompileOptions::carriedResults, plan.h CarriedBuffer): ping-pong. Each carried
// argument has two device buffers, the one the run reads and the one the run computes the next
// value into; after a successful run the two swap, so the next value becomes the argument
// without a copy, and the old value's memory receives the value after it. A captured graph bakes
// in its buffers' addresses, and the swap alternates between two sets of addresses, so there is
// one graph per parity, each captured on the first run in its parity. Why not the alternatives:
// a device-to-device copy at the end of each run costs a pass over the whole state (a BERT-large
// step carries about 5 GB of parameters and Adam state: about 3 ms per step on an H100, against
// a step of about 60 ms), and writing in place needs a proof, for each carried value, that no
// step reads the old value after the new one is written, and it would leave a half-updated state
// behind a run that fails part way. Ping-pong costs no copy and no proof; it holds two copies of
// the carried state (the argument and its next value, as a run without carrying holds the
// argument and the result at its end), never a third, where writing in place would hold one. A
// run that fails before the swap leaves every argument as it was: runs never write argument
// buffers. With CompileOptions::carryInPlace the planner gives that proof where it is simple
// (the step computing the result reads the argument element for element and is its last
// reader, outside loops: an optimizer update) and writes such results over their arguments, one
// copy of the state instead of two, at the price of a half-updated state after a failed run.
//
// A job's collectives (Step::comm, collectives.h CommKernel) run on a communication stream of
// the executor's own: the compute stream records an event once the operands are written, the
// communication stream waits for it and runs the collective (NCCL), and records an event of
// its own, which the compute stream waits for just before the first step that needs the
// results (Plan::commJoin). So a gradient bucket's all-reduce runs while the backward pass goes
// on computing the next bucket's gradients. Each collective's Work is kept until the end of the
// run, and waited for (bounded by the job's timeout) before any host synchronisation: a dead or
// stuck peer fails the run with the communicator's error, naming the rank, where a
// synchronisation of the stream would hang. Such plans replay their compute steps as CUDA graphs,
// one per run of steps between collectives and joins, and issue each collective on its own
// between them (planner.cpp planGraphSegments says why).
//
// Grids: an interpreter.run_parallel step (GridKernel) runs each process of the grid, an executor
// of its own on the same device, on a host thread of its own; the processes read their operands
// from and write their results to the enclosing executor's buffers, and their collectives meet
// on the device (collectives.h).
#pragma once

#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "backends/cuda/kernels/collectives.h"
#include "backends/cuda/device.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/memory.h"
#include "backends/cuda/plan.h"
#include "dist/communicator.h"
#include "runtime/backend.h"

namespace wf::cuda {

class Executor {
 public:
  // `plan` is `entry`'s, with its arena laid out (memory.h assignSlots); `stream` is the one it
  // runs on. `module` must outlive the executor.
  Executor(std::shared_ptr<Device> device, const Module& module, const Operation& entry, const CompileOptions& options,
           Plan plan, Stream stream);
  ~Executor();
  Executor(const Executor&) = delete;
  Executor& operator=(const Executor&) = delete;

  // Allocates the plan's device memory and uploads its constants (once, before any run).
  Status allocate();
  Status bindArgument(size_t index, const Literal& value);
  Expected<Literal> readArgument(size_t index);
  Expected<RunResult> run(std::span<const Literal> args);
  // A process of an interpreter.run_parallel grid: runs on the arguments' device buffers (one per
  // argument) and copies its results into `results` (device buffers of the enclosing
  // executable); returns once they are there.
  Status runOnDevice(std::span<void* const> args, std::span<void* const> results);
  size_t numResults() const { return plan_.outputs.size(); }
  // The ops that run on the host (here and in the processes of grids), "name at location", once each.
  void collectHostOps(std::set<std::string>& seen, std::vector<std::string>& out) const;
  size_t deviceBytesInUse() const;
  std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const;
  std::string deviceName() const { return device_->describe(); }
  // The plan's counts, with the launches of the runs so far.
  ExecutableStats stats() const;
  // Where host steps of `check.*` ops report; null makes them errors.
  void setCheckSink(CheckSink* sink) { checks_ = sink; }

 private:
  // Runs the hoisted steps of the prologue groups a bind made stale (all before the first run).
  Status runPrologue();
  bool prologueDirty() const;
  // Enqueues one device step: its buffers' addresses, its workspace, errors naming its op.
  Status launchStep(const Step& step);
  // Enqueues step `index`, a job's collective, on the communication stream (executor.h above).
  Status issueCommStep(size_t index, const Step& step);
  // The compute stream waits for the collectives whose join (Plan::commJoin) is step `index`
  // (steps.size(): the end of the run).
  Status joinComm(size_t index);
  // Waits (bounded) for the Works of every collective of this run: the first error, naming its op.
  Status waitCommWorks();
  // After a run's steps (`ran`) and its Works (`communicated`): forgets the joins still pending;
  // after a failure, lets the communication stream drain. The first error.
  Status settleComm(const Status& ran, const Status& communicated);
  // Enqueues the device steps of `segment` (hoisted ones aside), for capture into a graph.
  Status launchDeviceSteps(const GraphSegment& segment);
  Status runHostStep(const Step& step);
  // Reads the scalar a control step branches on (an i1 or an integer) from the device.
  Expected<int64_t> readControlScalar(const Step& step);
  // Runs the steps one by one, or, with `replay`, each graph segment as its captured graph.
  Status runSteps(bool replay);
  // Captures every graph segment of the plan (Plan::graphSegments) into graphExecs_[parity_].
  Status captureGraphs();
  // The device address of buffer `buffer` (memory_).
  void* address(int buffer) const { return memory_.address(static_cast<size_t>(buffer)); }
  Status upload(int buffer, const Literal& value, const Type& expected, const std::string& what);
  Expected<Literal> download(int buffer, const Type& type);

  std::shared_ptr<Device> device_;
  const Module& module_;
  const Operation& entry_;
  CompileOptions options_;
  mutable std::mutex runMu_;
  Stream stream_;
  Plan plan_;
  PlanMemory memory_;
  std::vector<bool> bound_;  // by entry argument
  std::vector<bool> prologueDirty_;  // by prologue group (Plan::hoistedGroup): to run before the next run
  CheckSink* checks_ = nullptr;
  // A job's collectives (only for plans that have some).
  Stream commStream_;
  Event commReady_;               // on the compute stream: the operands of the next collective are written
  std::vector<Event> commDone_;   // by step: recorded on the communication stream after the collective
  struct CommInFlight {
    size_t step;
    std::unique_ptr<dist::Work> work;
  };
  std::vector<CommInFlight> commWorks_;  // this run's, waited for before any host synchronisation
  std::vector<size_t> commPending_;      // comm steps issued whose join has not been reached
  // The captured graphs of each parity of the carried buffers (only [0] without carried results),
  // by graph segment; segmentAt_ by step: the segment that begins there, -1 for none.
  std::vector<GraphExec> graphExecs_[2];
  std::vector<int> segmentAt_;
  int parity_ = 0;  // flips with each swap of the carried buffers
  bool graphFailed_ = false;
  bool usesGraph_ = false;  // ExecutableStats::usesGraph
  int graphLaunches_ = 0;
  Event runStart_, runEnd_;  // device time of each run (RunReport::deviceMillis)
  // With CompileOptions::recordTimings: an event after each step run, and the step it ended.
  std::vector<Event> stepEvents_;
  std::vector<size_t> eventStep_;
  size_t eventsRecorded_ = 0;
};

// Plans `entry` for process `process` (planner.h), lays out its memory (memory.h) and returns an
// executor of the plan with its memory allocated, ready for binds and runs.
Expected<std::unique_ptr<Executor>> compileExecutor(const std::shared_ptr<Device>& device, const Module& module,
                                                    const Operation& entry, const CompileOptions& options,
                                                    const ProcessContext& process = {});

// interpreter.run_parallel: one executor per process (row-major over replicas and partitions),
// each run on a host thread of its own, on its own stream, meeting in the grid's rendezvous. The
// op's operands go to the processes in order, as many as each function takes, and their results
// come back in the same order, as on the CPU.
class GridKernel final : public OpKernel {
 public:
  struct Process {
    std::unique_ptr<Executor> executable;
    size_t firstInput = 0, numInputs = 0;
    size_t firstOutput = 0, numOutputs = 0;
  };
  GridKernel(int64_t numReplicas, int64_t numPartitions)
      : numPartitions_(numPartitions), rendezvous_(std::make_unique<DeviceRendezvous>(numReplicas, numPartitions)) {}

  DeviceRendezvous* rendezvous() const { return rendezvous_.get(); }
  void add(Process p) { processes_.push_back(std::move(p)); }
  const std::vector<Process>& processes() const { return processes_; }

  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override;
  size_t deviceBytes() const override;

 private:
  int64_t numPartitions_;
  std::unique_ptr<DeviceRendezvous> rendezvous_;
  std::vector<Process> processes_;
};

}  // namespace wf::cuda
