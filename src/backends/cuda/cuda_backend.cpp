// The CUDA Backend and Executable (cuda_backend.h): shape refinement where the entry needs it,
// then the planner (planner.h), the arena (memory.h) and the executor (executor.h) behind the
// runtime's contract.
#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <initializer_list>

#include "backends/cuda/device.h"
#include "backends/cuda/executor.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/kernels/collectives.h"
#include "backends/cuda/plan_rewrites.h"
#include "dist/job.h"
#include "transforms/refine_shapes.h"
#include "support/phase_timer.h"

namespace wf::cuda {
namespace {

// An executable is an executor and, when the entry was shape-refined at compile time, the refined
// module it was made from (which the executor's plan refers to).
class CudaExecutable final : public Executable {
 public:
  CudaExecutable(std::unique_ptr<Module> refinedModule, std::unique_ptr<Executor> executor)
      : refinedModule_(std::move(refinedModule)), executor_(std::move(executor)) {}

  Status bindArgument(size_t index, const Literal& value) override { return executor_->bindArgument(index, value); }
  Expected<RunResult> run(std::span<const Literal> args) override { return executor_->run(args); }
  Expected<Literal> readArgument(size_t index) override { return executor_->readArgument(index); }
  size_t deviceBytesInUse() const override { return executor_->deviceBytesInUse(); }
  std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const override {
    return executor_->deviceMemoryBreakdown();
  }
  std::string deviceName() const override { return executor_->deviceName(); }
  ExecutableStats stats() const override { return executor_->stats(); }
  void setCheckSink(CheckSink* sink) override { executor_->setCheckSink(sink); }

 private:
  std::unique_ptr<Module> refinedModule_;  // null unless the entry was shape-refined
  std::unique_ptr<Executor> executor_;     // destroyed first: it refers to the module
};

// One rank of a distributed job: process (rank, 0) of a grid of WORLD_SIZE replicas, whose
// collectives go over the job's NCCL communicator on this device (collectives.h).
Expected<ProcessContext> jobProcess(const CompileOptions& options, const Device& device) {
  ProcessContext process;
  if (!options.job) return process;
  std::shared_ptr<dist::Communicator> comm = options.job->worldPtr();
  if (comm->backend() != "nccl")
    return invalidArgument("cuda: the job's communicator is " + comm->backend() +
                           "; a CUDA program's collectives need nccl (join the job for a cuda device)");
  if (comm->deviceOrdinal() != device.ordinal())
    return invalidArgument("cuda: this rank's NCCL communicator is on cuda:" + std::to_string(comm->deviceOrdinal()) +
                           ", the program is compiled for cuda:" + std::to_string(device.ordinal()) +
                           " (a bare --device cuda means cuda:LOCAL_RANK in a job)");
  process.self = {comm->rank(), 0};
  process.numReplicas = comm->size();
  process.numPartitions = 1;
  process.comm = std::move(comm);
  return process;
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  std::string name() const override { return "cuda"; }
  bool lowersComposite(std::string_view name) const override {
    return CudaKernelRegistry::instance().findComposite(name) != nullptr;
  }
  Expected<std::unique_ptr<Executable>> compile(const Module& module, const Operation& entry,
                                                const CompileOptions& options) override {
    if (entry.code() != OpCode::FuncFunc) return invalidArgument("compile: entry is not a func.func");
    PhaseTimer phase("compile (cuda)");
    WF_ASSIGN_OR_RETURN(ProcessContext process, jobProcess(options, *device_));
    // Ops whose result shape is an operand's value (dynamic_iota, dynamic_broadcast_in_dim, ...)
    // or a type's dimension (get_dimension_size) take their static forms first, as XLA's
    // shape refinement does; the program's data is still computed on the device.
    const std::string name(FuncOp(&entry).symName());
    std::unique_ptr<Module> refined;
    const std::vector<Type> argTypes = FuncOp(&entry).functionType().inputs;
    const bool staticArgs = std::all_of(argTypes.begin(), argTypes.end(),
                                        [](const Type& t) { return t.isTensor() && t.hasStaticShape(); });
    // Calls are inlined too, so that fusion sees across them: a train step is a call of the
    // value-and-grad function, then of the optimizer update. (Not with taps, which name values of
    // the entry function as written.)
    // (Nor with run_parallel grids, whose functions the inlined module would not keep.)
    const bool inlineCalls = options.tapValues.empty() && entry.numRegions() > 0 && !entry.region(0).empty() &&
                             holdsOp(entry.region(0).front(), {OpCode::FuncCall, OpCode::Composite}) &&
                             !holdsOp(entry.region(0).front(), {OpCode::InterpreterRunParallel});
    const bool needsRefinement = staticArgs && needsShapeRefinement(module, name);
    // The rewrites before planning (plan_rewrites.h: batch norms written out, repeated ops merged,
    // bf16/f16 attention outlined) happen in a module of our own, the refined one. (Not with taps,
    // which name values of the entry function as written, nor with run_parallel grids.)
    const bool rewrite = options.tapValues.empty() && wantsPlanRewrites(entry, options.fuse) &&
                         !holdsOp(entry.region(0).front(), {OpCode::InterpreterRunParallel});
    if (staticArgs && (inlineCalls || needsRefinement || rewrite)) {
      RefineShapesOptions refineOptions;
      refineOptions.replaceFoldedOps = false;
      // Composites with a kernel of their own stay whole (the planner picks the kernel or, where
      // it declines, the decomposition).
      refineOptions.keepComposite = [this](std::string_view n) { return lowersComposite(n); };
      auto r = refineShapes(module, name, argTypes, refineOptions);
      if (r) {
        refined = std::move(*r);
      } else if (needsRefinement && !options.allowCpuFallback) {
        return r.status().withContext("cuda: function @" + name + " needs static shapes");
      }
    }
    if (refined && rewrite)
      WF_RETURN_IF_ERROR(
          rewriteForPlanning(*refined, name, options.fuse, options.mergeProducts, options.allowTf32Convolutions).status());
    const Module& m = refined ? *refined : module;
    const Operation* fn = refined ? refined->lookupFunction(name) : &entry;
    if (!fn) return internalError("cuda: shape refinement lost function @" + name);
    WF_ASSIGN_OR_RETURN(std::unique_ptr<Executor> executor, compileExecutor(device_, m, *fn, options, process));
    return std::unique_ptr<Executable>(std::make_unique<CudaExecutable>(std::move(refined), std::move(executor)));
  }

 private:
  std::shared_ptr<Device> device_;
};

}  // namespace

Expected<std::unique_ptr<Backend>> createCudaBackend(const DeviceSpec& spec) {
  WF_ASSIGN_OR_RETURN(std::shared_ptr<Device> device, Device::get(spec.ordinal));
  return std::unique_ptr<Backend>(std::make_unique<CudaBackend>(std::move(device)));
}

}  // namespace wf::cuda
