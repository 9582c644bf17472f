#include "backends/cuda/cuda_backend.h"

#include <algorithm>
#include <functional>
#include <limits>
#include <mutex>
#include <set>
#include <thread>
#include <unordered_map>
#include <unordered_set>
#include <cstring>

#include <nvtx3/nvToolsExt.h>

#include "backends/cpu/interpreter.h"
#include "backends/cuda/collectives.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/device.h"
#include "backends/cuda/fusion.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/nvrtc.h"
#include "transforms/refine_shapes.h"

namespace wf::cuda {
namespace {

constexpr int kNoUse = -1;
// Operands or results one step passes to its kernel (variadic ops such as sort and scatter
// included; the fusion planner keeps groups to 24 inputs).
constexpr size_t kMaxStepBuffers = 64;
constexpr int kLiveToEnd = std::numeric_limits<int>::max();

size_t tensorBytes(const Type& t) {
  return static_cast<size_t>(t.numElements()) * static_cast<size_t>(storageBytes(t.elementType()));
}

// A one-element tensor of an element type `kind` accepts (the predicate of while and if, the
// index of case).
bool isScalarOf(const Type& t, bool (*kind)(ElementType)) {
  return t.isTensor() && t.hasStaticShape() && t.numElements() == 1 && kind(t.elementType());
}

// True if `v` is defined inside `op` (by an op nested in one of its regions, or as an argument
// of one of its blocks).
bool definedInside(const Value* v, const Operation* op) {
  const Operation* p = v->definingOp();
  if (!p) {
    const Block* b = v->ownerBlock();
    const Region* r = b ? b->parent() : nullptr;
    p = r ? r->parent() : nullptr;
    if (p == op) return true;
  }
  for (; p; p = p->parentOp())
    if (p == op) return true;
  return false;
}

// Values that the regions of `op` use but do not define (implicit captures of while/if bodies).
void collectCaptures(const Operation& root, const Operation& op, std::vector<const Value*>& out) {
  for (const auto& region : op.regions())
    for (const auto& block : region->blocks())
      for (const auto& inner : block->operations()) {
        for (const Value* v : inner->operands())
          if (!definedInside(v, &root) && std::find(out.begin(), out.end(), v) == out.end()) out.push_back(v);
        collectCaptures(root, *inner, out);
      }
}

// A generated fusion kernel (fusion.h): inputs..., output, one thread per output element in a
// grid-stride loop. The kernel handle is filled in once the whole plan's kernels are compiled.
class FusedKernel final : public OpKernel {
 public:
  FusedKernel(int64_t n, int threads, int64_t blocks) : n_(n), threads_(threads), blocks_(blocks) {}
  void setKernel(cudaKernel_t k) { kernel_ = k; }
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (n_ == 0) return Status::ok();
    if (!kernel_) return internalError("fused kernel launched before it was compiled");
    // The kernel's parameters: the inputs' addresses, then the output's (no allocation here: this
    // runs for every step of every run that is not a graph replay).
    void* pointers[kMaxStepBuffers + 1];
    void* args[kMaxStepBuffers + 1];
    if (in.size() > kMaxStepBuffers) return internalError("fused kernel with too many inputs");
    for (size_t i = 0; i < in.size(); ++i) pointers[i] = in[i];
    pointers[in.size()] = out[0];
    for (size_t i = 0; i <= in.size(); ++i) args[i] = &pointers[i];
    WF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks_)),
                                   dim3(static_cast<unsigned>(threads_)), args, 0, ctx.stream));
    return Status::ok();
  }

 private:
  int64_t n_;
  int threads_;
  int64_t blocks_;
  cudaKernel_t kernel_ = nullptr;
};

// What a step does besides launching its kernel: control steps of while/if/case read a device
// scalar (the predicate or branch index, inputBuffers[0]) on the host and pick the next step.
enum class Control {
  kNone,           // a kernel (or, with kernel null, a host step)
  kBranchIfFalse,  // go on with the next step if the i1 is true, else jump to `targets[0]`
  kSwitch,         // jump to targets[index]; an index out of range takes the last
  kJump,           // jump to targets[0]
};

struct Step {
  const Operation* op = nullptr;
  std::unique_ptr<OpKernel> kernel;  // null: a host step or a control step
  Control control = Control::kNone;
  std::vector<size_t> targets;  // control steps: step indices to jump to
  ElementType controlType = ElementType::kI1;  // of the scalar a branch or switch reads
  // Writes a buffer that other steps write too (the loop-carried values and the results of
  // while/if/case): never hoisted into the prologue.
  bool rewrites = false;
  // Meets other processes of a grid (a collective, or interpreter.run_parallel itself): it
  // synchronises on the host, so it is never hoisted nor captured into a graph.
  bool meetsPeers = false;
  std::vector<const Value*> inputs;  // operands, then (host steps) captured values
  std::vector<int> inputBuffers;
  std::vector<int> outputBuffers;
  // Scratch memory the kernel asked for (LowerContext::workspaceBytes): a buffer live during
  // this step only, so that it shares memory with values that are dead by then.
  int workspaceBuffer = -1;
  size_t workspaceBytes = 0;
  // Inputs (indices into inputBuffers) whose element i only the thread writing output element i
  // reads, in a type of the output's size: the output may take such an input's memory when this
  // step is the input's last reader (as `out += identity` does in PyTorch).
  std::vector<size_t> inPlaceInputs;
};

// True if every element of `group`'s result reads `input` at its own linear index only: the
// paths from the input to the root pass only elementwise ops (reading it as a full-size
// operand) and reshapes, and the input has the result's element count and element size.
bool readsInPlace(const FusionGroup& group, const Value* input) {
  const Type& out = group.root()->result(0)->type();
  if (input->type().numElements() != out.numElements() ||
      storageBytes(input->type().elementType()) != storageBytes(out.elementType()))
    return false;
  std::unordered_set<const Operation*> members(group.ops.begin(), group.ops.end());
  std::vector<const Value*> frontier = {input};
  std::unordered_set<const Value*> seen;
  while (!frontier.empty()) {
    const Value* v = frontier.back();
    frontier.pop_back();
    if (!seen.insert(v).second) continue;
    for (const Operation* user : group.ops) {
      bool uses = false;
      for (const Value* operand : user->operands()) uses = uses || operand == v;
      if (!uses) continue;
      switch (user->code()) {
        case OpCode::BroadcastInDim:
        case OpCode::Broadcast:
        case OpCode::Transpose:
        case OpCode::Slice:
        case OpCode::Gather:
        case OpCode::Reduce:
        case OpCode::Iota:
        case OpCode::Constant:
          return false;
        default:
          break;
      }
      if (user->numResults() != 1 || v->type().numElements() != user->result(0)->type().numElements()) return false;
      frontier.push_back(user->result(0));
    }
  }
  return true;
}

class CudaExecutable final : public Executable {
 public:
  CudaExecutable(std::shared_ptr<Device> device, const Module& module, const Operation& entry,
                 const CompileOptions& options, ProcessContext process = {})
      : device_(std::move(device)), module_(module), entry_(entry), options_(options), process_(process) {}

  ~CudaExecutable() override {
    if (stream_) {
      WF_CUDA_WARN(cudaSetDevice(device_->ordinal()));
      WF_CUDA_WARN(cudaStreamSynchronize(stream_.get()));
    }
    // Buffers go back to the allocator before the device handle is released.
    graphExec_.reset();
    steps_.clear();
    buffers_.clear();
    arena_.reset();
  }

  Status compile();
  // Keeps the shape-refined module this executable was made from (module_ refers to it).
  void keepModule(std::unique_ptr<Module> m) { refinedModule_ = std::move(m); }
  Status bindArgument(size_t index, const Literal& value) override;
  Expected<RunResult> run(std::span<const Literal> args) override;
  // A process of an interpreter.run_parallel grid: runs on the arguments' device buffers (one per
  // argument) and copies its results into `results` (device buffers of the enclosing
  // executable); returns once they are there.
  Status runOnDevice(std::span<void* const> args, std::span<void* const> results);
  size_t numResults() const { return outputs_.size(); }
  // The ops that run on the host (here and in the processes of grids), "name at location", once each.
  void collectHostOps(std::set<std::string>& seen, std::vector<std::string>& out) const;
  size_t deviceBytesInUse() const override;
  std::vector<std::pair<std::string, size_t>> deviceMemoryBreakdown() const override;
  std::string deviceName() const override { return device_->describe(); }
  ExecutableStats stats() const override {
    std::lock_guard<std::mutex> lock(runMu_);  // a run updates the launch counts
    return info;
  }
  void setCheckSink(CheckSink* sink) override { checks = sink; }

  ExecutableStats info;
  CheckSink* checks = nullptr;

 private:
  int newBuffer(size_t bytes) {
    bufferBytes_.push_back(bytes);
    return static_cast<int>(bufferBytes_.size()) - 1;
  }
  Status planOp(const Operation& op, LowerContext& lctx, int depth = 0);
  // interpreter.run_parallel: an executable per process, run by one step (GridKernel).
  Expected<std::unique_ptr<OpKernel>> planGrid(const Operation& op);
  Status planFusedGroup(const FusionGroup& group);
  // Picks the activations stored channels-last (channelsLast_): see the comment inside.
  void chooseChannelsLast(const Block& body, const FusionPlan& fusion, const std::unordered_set<const Value*>& keep);
  Status compileFusedKernels();
  Status inlineCall(const Operation& op, const Operation& callee, LowerContext& lctx, int depth);
  // while/if/case as steps: their regions' ops planned in line, with control steps between.
  Status planControlFlow(const Operation& op, LowerContext& lctx, int depth);
  Status planWhile(const Operation& op, LowerContext& lctx, int depth);
  Status planBranches(const Operation& op, LowerContext& lctx, int depth);
  // Plans a region's ops up to its terminator; returns the terminator's operands.
  Expected<std::vector<const Value*>> planRegion(const Operation& op, const Region& region, LowerContext& lctx,
                                                 int depth);
  // A step copying buffer `from` into `to` (a loop-carried value or a result of while/if/case).
  void planCopy(const Operation& op, int from, int to);
  // Reads the scalar a control step branches on (an i1 or an integer) from the device.
  Expected<int64_t> readControlScalar(const Step& step);
  // Runs `plan`; if it fails as unimplemented while the CPU fallback is allowed, undoes what it
  // planned and returns true, so that the op runs whole on the host instead.
  Expected<bool> planOrUndo(const std::function<Status()>& plan);
  Expected<int> bufferFor(const Operation& op, const Value* v) const;
  void planHoisting();
  Status runPrologue();
  // Enqueues one device step: its buffers' addresses, its workspace, errors naming its op.
  Status launchStep(const Step& step);
  Status assignSlots();
  Status allocate();
  Status launchDeviceSteps();
  Status runHostStep(const Step& step);
  Status runSteps();
  Status captureGraph();
  Status upload(int buffer, const Literal& value, const Type& expected, const std::string& what);
  Expected<Literal> download(int buffer, const Type& type);

  std::shared_ptr<Device> device_;
  const Module& module_;
  std::unique_ptr<Module> refinedModule_;  // module_ when the entry was shape-refined at compile
  const Operation& entry_;
  CompileOptions options_;
  ProcessContext process_;  // which process of which grid this executable is
  mutable std::mutex runMu_;
  Stream stream_;

  std::vector<size_t> bufferBytes_;    // by buffer id
  std::vector<DeviceBuffer> buffers_;  // by buffer id: arguments and constants (slots: empty)
  std::vector<bool> inArena_;          // by buffer id: an intermediate, placed in the arena
  std::vector<size_t> offsetOfBuffer_;  // by buffer id: an intermediate's offset in the arena
  size_t arenaBytes_ = 0;
  DeviceBuffer arena_;  // every intermediate value and workspace, placed by assignSlots()
  std::vector<void*> ptr_;  // device address by buffer id (after allocate())
  std::unordered_map<const Value*, int> bufferOf_;
  std::vector<std::pair<int, Literal>> constants_;  // buffer id, value (uploaded by allocate())
  std::vector<int> argBuffers_;
  std::vector<bool> bound_;
  std::vector<Step> steps_;
  ValueStrides channelsLast_;  // activations stored NHWC (logical NCHW), by value
  // Loops, as [first step, last step (the jump back)]: values that live into a loop stay live
  // until its end, since every iteration reads them again.
  std::vector<std::pair<size_t, size_t>> loops_;
  // Hoisting (CompileOptions::boundArguments): steps that read only bound arguments, constants
  // and other hoisted results run in the prologue, once before the first run (and again after
  // a later bind), not in the per-run launch or graph.
  std::vector<bool> hoisted_;           // by step
  std::vector<bool> prologueTemp_;      // by buffer: read by hoisted steps only, freed after
  std::vector<bool> prologueOnlyArg_;   // by buffer: bound argument that only hoisted steps read
  std::vector<bool> declaredBound_;     // by entry argument
  bool prologueDirty_ = true;
  std::vector<const Value*> outputs_;
  std::vector<const Value*> taps_;
  GraphExec graphExec_;
  bool graphFailed_ = false;
  Event runStart_, runEnd_;  // device time of each run (RunReport::deviceMillis)
  // With CompileOptions::recordTimings: an event after each step run, and the step it ended.
  std::vector<Event> stepEvents_;
  std::vector<size_t> eventStep_;
  size_t eventsRecorded_ = 0;
  // Generated kernels waiting for compileFusedKernels(): source, and the steps that run it.
  std::vector<RuntimeKernelSource> fusedSources_;
  std::vector<std::vector<FusedKernel*>> fusedUsers_;
  std::unordered_map<std::string, size_t> fusedIndex_;  // source -> index in fusedSources_
  std::unordered_map<std::string, int> fusedValues_;    // source + input buffers -> output buffer
};

// interpreter.run_parallel: one executable per process (row-major over replicas and partitions),
// each run on a host thread of its own, on its own stream, meeting in the grid's rendezvous. The
// op's operands go to the processes in order, as many as each function takes, and their results
// come back in the same order, as on the CPU.
class GridKernel final : public OpKernel {
 public:
  struct Process {
    std::unique_ptr<CudaExecutable> executable;
    size_t firstInput = 0, numInputs = 0;
    size_t firstOutput = 0, numOutputs = 0;
  };
  GridKernel(int64_t numReplicas, int64_t numPartitions)
      : numPartitions_(numPartitions), rendezvous_(std::make_unique<DeviceRendezvous>(numReplicas, numPartitions)) {}

  DeviceRendezvous* rendezvous() const { return rendezvous_.get(); }
  void add(Process p) { processes_.push_back(std::move(p)); }
  const std::vector<Process>& processes() const { return processes_; }

  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    // The processes read the operands on streams of their own.
    WF_CUDA_CHECK(cudaStreamSynchronize(ctx.stream));
    rendezvous_->reset();
    auto runProcess = [&](size_t i) {
      const Process& p = processes_[i];
      const ProcessId self{static_cast<int64_t>(i) / numPartitions_, static_cast<int64_t>(i) % numPartitions_};
      Status s = p.executable->runOnDevice(in.subspan(p.firstInput, p.numInputs),
                                           out.subspan(p.firstOutput, p.numOutputs));
      if (s.isOk()) {
        rendezvous_->finish(self);
      } else {
        rendezvous_->fail(self, s.withContext("process " + self.toString()));
      }
    };
    if (processes_.size() == 1) {
      runProcess(0);
    } else {
      std::vector<std::thread> threads;
      threads.reserve(processes_.size());
      for (size_t i = 0; i < processes_.size(); ++i) threads.emplace_back(runProcess, i);
      for (std::thread& t : threads) t.join();
    }
    WF_RETURN_IF_ERROR(ctx.device->activate());  // for the caller's thread, as before
    return rendezvous_->firstError();
  }

  size_t deviceBytes() const override {
    size_t total = 0;
    for (const Process& p : processes_) total += p.executable->deviceBytesInUse();
    return total;
  }

 private:
  int64_t numPartitions_;
  std::unique_ptr<DeviceRendezvous> rendezvous_;
  std::vector<Process> processes_;
};

// An NVTX range for the lifetime of the object (shown by Nsight Systems beside the kernels).
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

Status CudaExecutable::inlineCall(const Operation& op, const Operation& callee, LowerContext& lctx, int depth) {
  constexpr int kMaxInlineDepth = 64;
  if (depth >= kMaxInlineDepth) return unsupportedOnCuda(op, "calls nested deeper than 64 (recursion?)");
  if (callee.numRegions() == 0 || callee.region(0).empty())
    return invalidArgument(op.describe() + ": callee has no body");
  const Block& body = callee.region(0).front();
  if (body.numArguments() != op.numOperands())
    return invalidArgument(op.describe() + ": callee takes " + std::to_string(body.numArguments()) + " arguments");
  // Callee values are (re)bound for this call site; the steps keep the buffer ids.
  for (size_t i = 0; i < body.numArguments(); ++i) bufferOf_[body.argument(i)] = bufferOf_.at(op.operand(i));
  for (const auto& inner : body.operations()) {
    if (inner->code() == OpCode::FuncReturn || inner->code() == OpCode::Return) {
      if (inner->numOperands() != op.numResults())
        return invalidArgument(op.describe() + ": callee returns " + std::to_string(inner->numOperands()) + " values");
      for (size_t i = 0; i < op.numResults(); ++i) bufferOf_[op.result(i)] = bufferOf_.at(inner->operand(i));
      ++info.inlinedCalls;
      return Status::ok();
    }
    WF_RETURN_IF_ERROR(planOp(*inner, lctx, depth + 1));
  }
  return invalidArgument(op.describe() + ": callee has no return");
}

Status CudaExecutable::planOp(const Operation& op, LowerContext& lctx, int depth) {
  for (size_t i = 0; i < op.numResults(); ++i) {
    const Type& t = op.result(i)->type();
    if (!t.isTensor() || !t.hasStaticShape() || t.elementType() == ElementType::kQuantized)
      return unsupportedOnCuda(op, "result of type " + t.toString() + " (the CUDA backend takes static-shape tensors)");
  }
  if (op.code() == OpCode::Constant) {
    const Attribute* value = op.attr("value");
    if (!value || !value->literal())
      return invalidArgument(op.describe() + ": constant without a value (missing dense_resource blob?)");
    const int id = newBuffer(tensorBytes(op.result(0)->type()));
    constants_.emplace_back(id, *value->literal());
    bufferOf_[op.result(0)] = id;
    return Status::ok();
  }
  // Ops that only rename their operands' bytes share their buffers: reshape, the identity
  // optimization_barrier, and bitcast_convert between types of one storage size.
  if (op.code() == OpCode::Reshape || op.code() == OpCode::OptimizationBarrier ||
      (op.code() == OpCode::BitcastConvert && op.operand(0)->type().isTensor() &&
       storageBytes(op.operand(0)->type().elementType()) == storageBytes(op.result(0)->type().elementType()) &&
       op.operand(0)->type().numElements() == op.result(0)->type().numElements() &&
       isGpuComputeType(op.operand(0)->type().elementType()) && isGpuComputeType(op.result(0)->type().elementType()) &&
       op.operand(0)->type().elementType() != ElementType::kI1 && op.result(0)->type().elementType() != ElementType::kI1)) {
    if (op.numOperands() != op.numResults()) return invalidArgument(op.describe() + ": operand and result counts differ");
    for (size_t i = 0; i < op.numResults(); ++i) bufferOf_[op.result(i)] = bufferOf_.at(op.operand(i));
    ++info.aliases;
    return Status::ok();
  }
  // Calls (and composites, through their decomposition) are inlined into the plan.
  if (op.code() == OpCode::FuncCall || op.code() == OpCode::Composite) {
    const Attribute* sym = op.attr(op.code() == OpCode::FuncCall ? "callee" : "decomposition");
    const Operation* callee = sym && sym->kind() == Attribute::Kind::kSymbolRef
                                  ? module_.lookupFunction(sym->stringValue())
                                  : nullptr;
    if (!callee) return invalidArgument(op.describe() + ": callee not found in the module");
    // With the fallback allowed, a callee that cannot be planned on the device (dynamic shapes,
    // tuples) runs whole on the host instead.
    WF_ASSIGN_OR_RETURN(bool undone, planOrUndo([&] { return inlineCall(op, *callee, lctx, depth); }));
    if (!undone) return Status::ok();
  }
  // while/if/case: device steps for their regions, the host choosing the branch; with the
  // fallback allowed, one whose regions cannot be planned on the device runs whole on the host.
  if (op.code() == OpCode::While || op.code() == OpCode::If || op.code() == OpCode::Case) {
    WF_ASSIGN_OR_RETURN(bool undone, planOrUndo([&] { return planControlFlow(op, lctx, depth); }));
    if (!undone) return Status::ok();
  }
  Step step;
  step.op = &op;
  std::string why = "no CUDA kernel for this op";
  const size_t workspaceBefore = lctx.workspaceBytes;
  lctx.workspaceBytes = 0;
  if (isCollectiveOp(op.code())) {
    Expected<CollectiveKernel> collective = lowerCollective(op, process_, lctx);
    // Inside a grid a collective cannot run on the host (the host kernel has no peers): the
    // error reaches the enclosing run_parallel, which then runs whole on the host if allowed.
    if (collective) {
      step.kernel = std::move(collective->kernel);
      step.meetsPeers = collective->meetsPeers;
    } else if (collective.status().code() == StatusCode::kUnimplemented && !process_.rendezvous) {
      why = collective.status().message();
    } else {
      return collective.status();
    }
  } else if (op.code() == OpCode::InterpreterRunParallel) {
    Expected<std::unique_ptr<OpKernel>> grid = planGrid(op);
    if (grid) {
      step.kernel = std::move(*grid);
      step.meetsPeers = true;
    } else if (grid.status().code() == StatusCode::kUnimplemented) {
      why = grid.status().message();
    } else {
      return grid.status();
    }
  } else if (const Lowering* lowering = CudaKernelRegistry::instance().find(op.code())) {
    // Channels-last storage reaches the convolutions that take it (chooseChannelsLast).
    lctx.operandStrides = lctx.resultStrides = nullptr;
    if (op.code() == OpCode::Convolution) {
      if (auto it = channelsLast_.find(op.operand(0)); it != channelsLast_.end()) lctx.operandStrides = &it->second;
      if (auto it = channelsLast_.find(op.result(0)); it != channelsLast_.end()) lctx.resultStrides = &it->second;
    }
    Expected<std::unique_ptr<OpKernel>> kernel = (*lowering)(op, lctx);
    lctx.operandStrides = lctx.resultStrides = nullptr;
    if (kernel) {
      step.kernel = std::move(*kernel);
    } else if (kernel.status().code() == StatusCode::kUnimplemented) {
      why = kernel.status().message();
    } else {
      return kernel.status();
    }
  }
  for (const Value* v : op.operands()) step.inputs.push_back(v);
  if (!step.kernel) {
    if (!options_.allowCpuFallback || !KernelRegistry::instance().find(op.code())) {
      // `why` from a lowering already names the op.
      std::string message = why.rfind(op.describe(), 0) == 0 ? why : op.describe() + ": " + why;
      if (!options_.allowCpuFallback) message += "; CompileOptions::allowCpuFallback runs such ops on the host";
      return unimplemented(message);
    }
    collectCaptures(op, op, step.inputs);
    ++info.hostSteps;
  } else {
    ++info.deviceSteps;
    if (step.meetsPeers) ++info.collectiveOps;
  }
  for (const Value* v : step.inputs) {
    auto it = bufferOf_.find(v);
    if (it == bufferOf_.end()) return internalError(op.describe() + ": operand has no device buffer");
    step.inputBuffers.push_back(it->second);
  }
  for (size_t i = 0; i < op.numResults(); ++i) {
    const int id = newBuffer(tensorBytes(op.result(i)->type()));
    bufferOf_[op.result(i)] = id;
    step.outputBuffers.push_back(id);
  }
  if (step.kernel && lctx.workspaceBytes > 0) {
    step.workspaceBytes = lctx.workspaceBytes;
    step.workspaceBuffer = newBuffer(lctx.workspaceBytes);
  }
  lctx.workspaceBytes = std::max(workspaceBefore, lctx.workspaceBytes);
  steps_.push_back(std::move(step));
  return Status::ok();
}

Expected<bool> CudaExecutable::planOrUndo(const std::function<Status()>& plan) {
  const size_t savedSteps = steps_.size(), savedBuffers = bufferBytes_.size(), savedConstants = constants_.size(),
               savedLoops = loops_.size();
  const ExecutableStats savedInfo = info;
  Status planned = plan();
  if (planned.isOk()) return false;
  if (!options_.allowCpuFallback || planned.code() != StatusCode::kUnimplemented) return planned;
  steps_.resize(savedSteps);
  bufferBytes_.resize(savedBuffers);
  constants_.resize(savedConstants);
  loops_.resize(savedLoops);
  info = savedInfo;
  return true;
}

Expected<int> CudaExecutable::bufferFor(const Operation& op, const Value* v) const {
  auto it = bufferOf_.find(v);
  if (it == bufferOf_.end()) return internalError(op.describe() + ": a value it reads has no device buffer");
  return it->second;
}

Status CudaExecutable::planControlFlow(const Operation& op, LowerContext& lctx, int depth) {
  constexpr int kMaxNesting = 64;
  if (depth >= kMaxNesting) return unsupportedOnCuda(op, "regions nested deeper than 64");
  for (const auto& region : op.regions())
    if (region->blocks().size() != 1) return invalidArgument(op.describe() + ": each region must hold one block");
  WF_RETURN_IF_ERROR(op.code() == OpCode::While ? planWhile(op, lctx, depth) : planBranches(op, lctx, depth));
  ++info.controlFlowOps;
  return Status::ok();
}

Expected<std::vector<const Value*>> CudaExecutable::planRegion(const Operation& op, const Region& region,
                                                               LowerContext& lctx, int depth) {
  for (const auto& inner : region.front().operations()) {
    if (inner->code() == OpCode::Return || inner->code() == OpCode::FuncReturn) {
      std::vector<const Value*> returned;
      for (const Value* v : inner->operands()) returned.push_back(v);
      return returned;
    }
    WF_RETURN_IF_ERROR(planOp(*inner, lctx, depth + 1));
  }
  return invalidArgument(op.describe() + ": a region without a terminator");
}

void CudaExecutable::planCopy(const Operation& op, int from, int to) {
  const size_t bytes = bufferBytes_[static_cast<size_t>(to)];
  Step step;
  step.op = &op;
  step.rewrites = true;
  step.kernel = makeKernel([bytes](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    if (bytes > 0) WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], bytes, cudaMemcpyDeviceToDevice, ctx.stream));
    return Status::ok();
  });
  step.inputBuffers = {from};
  step.outputBuffers = {to};
  steps_.push_back(std::move(step));
  ++info.deviceSteps;
}

// while: the loop-carried values live in the result buffers. Steps:
//   copy operands -> carried
//   start: cond's ops; branch-if-false(predicate) -> exit
//          body's ops; copy the body's results -> carried; jump -> start
//   exit:
Status CudaExecutable::planWhile(const Operation& op, LowerContext& lctx, int depth) {
  if (op.numRegions() != 2) return invalidArgument(op.describe() + ": expects cond and body regions");
  const Block& cond = op.region(0).front();
  const Block& body = op.region(1).front();
  const size_t n = op.numOperands();
  if (op.numResults() != n || cond.numArguments() != n || body.numArguments() != n)
    return invalidArgument(op.describe() + ": operands, results and region arguments differ in number");
  std::vector<int> carried;
  for (size_t i = 0; i < n; ++i) {
    if (op.operand(i)->type() != op.result(i)->type())
      return invalidArgument(op.describe() + ": operand #" + std::to_string(i) + " and result differ in type");
    WF_ASSIGN_OR_RETURN(int init, bufferFor(op, op.operand(i)));
    const int id = newBuffer(tensorBytes(op.result(i)->type()));
    carried.push_back(id);
    planCopy(op, init, id);
    bufferOf_[cond.argument(i)] = id;
    bufferOf_[body.argument(i)] = id;
  }
  const size_t start = steps_.size();
  WF_ASSIGN_OR_RETURN(std::vector<const Value*> predicate, planRegion(op, op.region(0), lctx, depth));
  if (predicate.size() != 1 || !isScalarOf(predicate[0]->type(), isBoolean))
    return invalidArgument(op.describe() + ": the cond region must return one tensor<i1>");
  const size_t exitBranch = steps_.size();
  {
    Step branch;
    branch.op = &op;
    branch.control = Control::kBranchIfFalse;
    WF_ASSIGN_OR_RETURN(int p, bufferFor(op, predicate[0]));
    branch.inputBuffers = {p};
    steps_.push_back(std::move(branch));
  }
  WF_ASSIGN_OR_RETURN(std::vector<const Value*> next, planRegion(op, op.region(1), lctx, depth));
  if (next.size() != n)
    return invalidArgument(op.describe() + ": the body returns " + std::to_string(next.size()) + " values for " +
                           std::to_string(n) + " loop-carried values");
  // A returned value that is itself a carried value (the body swaps two) is staged through a
  // buffer of its own first, so that no copy overwrites a value another copy still reads.
  std::vector<std::pair<int, int>> direct, staged;  // (from, carried)
  for (size_t i = 0; i < n; ++i) {
    if (next[i]->type() != op.result(i)->type())
      return invalidArgument(op.describe() + ": the body's result #" + std::to_string(i) + " has type " +
                             next[i]->type().toString() + ", the loop carries " + op.result(i)->type().toString());
    WF_ASSIGN_OR_RETURN(int from, bufferFor(op, next[i]));
    if (from == carried[i]) continue;
    if (std::find(carried.begin(), carried.end(), from) == carried.end()) {
      direct.emplace_back(from, carried[i]);
      continue;
    }
    const int temp = newBuffer(bufferBytes_[static_cast<size_t>(from)]);
    planCopy(op, from, temp);
    staged.emplace_back(temp, carried[i]);
  }
  for (const auto& [from, to] : direct) planCopy(op, from, to);
  for (const auto& [from, to] : staged) planCopy(op, from, to);
  Step back;
  back.op = &op;
  back.control = Control::kJump;
  back.targets = {start};
  steps_.push_back(std::move(back));
  steps_[exitBranch].targets = {steps_.size()};
  loops_.emplace_back(start, steps_.size() - 1);
  for (size_t i = 0; i < n; ++i) bufferOf_[op.result(i)] = carried[i];
  return Status::ok();
}

// if and case: the results live in buffers each branch copies its results into. Steps:
//   branch-if-false(pred) -> b1  |  switch(index) -> b0, b1, ...
//   b0: branch 0's ops; copy results; jump -> end
//   b1: branch 1's ops; copy results; ...
//   end:
Status CudaExecutable::planBranches(const Operation& op, LowerContext& lctx, int depth) {
  const bool isIf = op.code() == OpCode::If;
  const size_t numBranches = op.numRegions();
  if (isIf ? numBranches != 2 : numBranches == 0)
    return invalidArgument(op.describe() + (isIf ? ": expects true and false branches" : ": needs a branch"));
  if (op.numOperands() != 1) return invalidArgument(op.describe() + ": expects one operand");
  const Type& selector = op.operand(0)->type();
  if (isIf ? !isScalarOf(selector, isBoolean) : !isScalarOf(selector, isInteger))
    return invalidArgument(op.describe() + (isIf ? ": the predicate must be a tensor<i1>"
                                                 : ": the index must be an integer scalar"));
  std::vector<int> results;
  for (size_t i = 0; i < op.numResults(); ++i) results.push_back(newBuffer(tensorBytes(op.result(i)->type())));
  const size_t select = steps_.size();
  {
    Step step;
    step.op = &op;
    step.control = isIf ? Control::kBranchIfFalse : Control::kSwitch;
    step.controlType = selector.elementType();
    WF_ASSIGN_OR_RETURN(int s, bufferFor(op, op.operand(0)));
    step.inputBuffers = {s};
    steps_.push_back(std::move(step));
  }
  std::vector<size_t> starts, jumpsToEnd;
  for (size_t k = 0; k < numBranches; ++k) {
    starts.push_back(steps_.size());
    WF_ASSIGN_OR_RETURN(std::vector<const Value*> yields, planRegion(op, op.region(k), lctx, depth));
    if (yields.size() != op.numResults())
      return invalidArgument(op.describe() + ": branch #" + std::to_string(k) + " returns " +
                             std::to_string(yields.size()) + " values for " + std::to_string(op.numResults()) +
                             " results");
    for (size_t i = 0; i < yields.size(); ++i) {
      if (yields[i]->type() != op.result(i)->type())
        return invalidArgument(op.describe() + ": branch #" + std::to_string(k) + " result #" + std::to_string(i) +
                               " has type " + yields[i]->type().toString() + ", the op's is " +
                               op.result(i)->type().toString());
      WF_ASSIGN_OR_RETURN(int from, bufferFor(op, yields[i]));
      planCopy(op, from, results[i]);
    }
    if (k + 1 < numBranches) {
      jumpsToEnd.push_back(steps_.size());
      Step jump;
      jump.op = &op;
      jump.control = Control::kJump;
      steps_.push_back(std::move(jump));
    }
  }
  for (size_t j : jumpsToEnd) steps_[j].targets = {steps_.size()};
  steps_[select].targets = isIf ? std::vector<size_t>{starts[1]} : starts;
  for (size_t i = 0; i < op.numResults(); ++i) bufferOf_[op.result(i)] = results[i];
  return Status::ok();
}

// cuDNN's fast bf16/f16 convolutions read and write NHWC; given NCHW they transform both in a
// workspace the size of input plus output. So the 4-d activations around such convolutions are
// stored NHWC: a value is, if a convolution taking it (convolutionTakesChannelsLast) or a fused
// group without reductions computes it, and only such convolutions (as their input) and such
// groups read it. Fused groups index by logical coordinates, so a group may mix layouts; one
// whose operands share its root's layout walks memory in order. Function results, taps, values
// that regions read and anything else (aliases, reductions, other kernels) keep row-major.
void CudaExecutable::chooseChannelsLast(const Block& body, const FusionPlan& fusion,
                                        const std::unordered_set<const Value*>& keep) {
  bool anyConvolution = false;
  for (const auto& op : body.operations()) anyConvolution = anyConvolution || convolutionTakesChannelsLast(*op);
  if (!anyConvolution) return;
  std::unordered_set<const Value*> produced, barred;
  std::unordered_map<const Value*, int> readers;
  for (const FusionGroup& g : fusion.groups) {
    const bool loop = !g.hasReduce();
    for (const Value* in : g.inputs) {
      ++readers[in];
      if (!loop) barred.insert(in);
    }
    if (loop && g.root()->result(0)->type().rank() == 4) produced.insert(g.root()->result(0));
  }
  for (const auto& opPtr : body.operations()) {
    const Operation& op = *opPtr;
    if (fusion.absorbed.count(&op) || fusion.groupOfRoot.count(&op)) continue;
    const bool conv = convolutionTakesChannelsLast(op);
    if (conv) produced.insert(op.result(0));
    for (size_t i = 0; i < op.numOperands(); ++i) {
      ++readers[op.operand(i)];
      if (!(conv && i == 0)) barred.insert(op.operand(i));
    }
    std::vector<const Value*> captured;
    collectCaptures(op, op, captured);
    barred.insert(captured.begin(), captured.end());
  }
  for (const Value* v : keep) barred.insert(v);
  for (const Value* v : produced) {
    if (barred.count(v) || readers[v] == 0) continue;
    const std::vector<int64_t>& s = v->type().shape();  // [N, C, H, W] stored as [N, H, W, C]
    channelsLast_[v] = {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
    ++info.channelsLastValues;
  }
}

Status CudaExecutable::planFusedGroup(const FusionGroup& group) {
  const Operation& root = *group.root();
  // The kernel's name comes from a hash of its body, so that identical groups (repeated layers)
  // share one compiled kernel.
  WF_ASSIGN_OR_RETURN(FusedKernelSource source, generateFusedKernel(group, "WF_FUSED_KERNEL", &channelsLast_));
  const std::string& code = source.code;
  size_t index;
  if (auto it = fusedIndex_.find(code); it != fusedIndex_.end()) {
    index = it->second;
  } else {
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : code) h = (h ^ c) * 1099511628211ull;
    char name[40];
    std::snprintf(name, sizeof name, "wf_fused_%016llx", static_cast<unsigned long long>(h));
    std::string named = code;
    named.replace(named.find("WF_FUSED_KERNEL"), std::strlen("WF_FUSED_KERNEL"), name);
    index = fusedSources_.size();
    fusedIndex_[code] = index;
    fusedSources_.push_back({name, std::move(named)});
    fusedUsers_.emplace_back();
  }
  // The same kernel on the same buffers computes the same value (the exporter converts one
  // activation to bf16 once for each of the query, key and value projections): share it.
  std::string valueKey = code;
  for (const Value* v : group.inputs) {
    auto it = bufferOf_.find(v);
    if (it == bufferOf_.end()) return internalError(root.describe() + ": fused operand has no device buffer");
    valueKey += "|" + std::to_string(it->second);
  }
  if (auto it = fusedValues_.find(valueKey); it != fusedValues_.end()) {
    bufferOf_[root.result(0)] = it->second;
    ++info.sharedFusedValues;
    return Status::ok();
  }
  Step step;
  step.op = &root;
  auto kernel = std::make_unique<FusedKernel>(root.result(0)->type().numElements(), source.threads, source.blocks);
  fusedUsers_[index].push_back(kernel.get());
  step.kernel = std::move(kernel);
  for (const Value* v : group.inputs) {
    auto it = bufferOf_.find(v);
    if (it == bufferOf_.end()) return internalError(root.describe() + ": fused operand has no device buffer");
    step.inputs.push_back(v);
    step.inputBuffers.push_back(it->second);
  }
  if (!group.hasReduce())
    for (size_t i = 0; i < group.inputs.size(); ++i)
      if (readsInPlace(group, group.inputs[i]) &&
          channelsLast_.count(group.inputs[i]) == channelsLast_.count(root.result(0)))
        step.inPlaceInputs.push_back(i);
  const int id = newBuffer(tensorBytes(root.result(0)->type()));
  bufferOf_[root.result(0)] = id;
  fusedValues_[valueKey] = id;
  step.outputBuffers.push_back(id);
  steps_.push_back(std::move(step));
  ++info.deviceSteps;
  ++info.fusedKernels;
  info.fusedOps += static_cast<int>(group.ops.size());
  return Status::ok();
}

Status CudaExecutable::compileFusedKernels() {
  if (fusedSources_.empty()) return Status::ok();
  WF_ASSIGN_OR_RETURN(std::vector<cudaKernel_t> kernels,
                      compileRuntimeKernels(*device_, fusedKernelPrelude(), fusedSources_));
  for (size_t i = 0; i < kernels.size(); ++i)
    for (FusedKernel* k : fusedUsers_[i]) k->setKernel(kernels[i]);
  info.uniqueFusedKernels = static_cast<int>(kernels.size());
  fusedSources_.clear();
  fusedUsers_.clear();
  fusedIndex_.clear();
  return Status::ok();
}

void CudaExecutable::planHoisting() {
  const size_t numBuffers = bufferBytes_.size();
  hoisted_.assign(steps_.size(), false);
  prologueTemp_.assign(numBuffers, false);
  prologueOnlyArg_.assign(numBuffers, false);
  std::vector<bool> constant(numBuffers, false);
  for (const auto& [id, lit] : constants_) constant[static_cast<size_t>(id)] = true;
  for (size_t i = 0; i < argBuffers_.size(); ++i)
    if (declaredBound_[i]) constant[static_cast<size_t>(argBuffers_[i])] = true;
  std::vector<bool> readPerRun(numBuffers, false), readHoisted(numBuffers, false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    bool all = step.kernel != nullptr && !step.rewrites && !step.meetsPeers && !step.inputBuffers.empty();
    for (int b : step.inputBuffers) all = all && constant[static_cast<size_t>(b)];
    hoisted_[s] = all;
    if (all) {
      for (int b : step.outputBuffers) constant[static_cast<size_t>(b)] = true;
      ++info.hoistedSteps;
    }
    for (int b : step.inputBuffers) (all ? readHoisted : readPerRun)[static_cast<size_t>(b)] = true;
  }
  for (const Value* v : outputs_) readPerRun[static_cast<size_t>(bufferOf_.at(v))] = true;
  for (const Value* v : taps_) readPerRun[static_cast<size_t>(bufferOf_.at(v))] = true;
  for (size_t s = 0; s < steps_.size(); ++s)
    if (hoisted_[s]) {
      for (int b : steps_[s].outputBuffers) prologueTemp_[static_cast<size_t>(b)] = !readPerRun[static_cast<size_t>(b)];
      if (steps_[s].workspaceBuffer >= 0) prologueTemp_[static_cast<size_t>(steps_[s].workspaceBuffer)] = true;
    }
  for (size_t i = 0; i < argBuffers_.size(); ++i) {
    const size_t b = static_cast<size_t>(argBuffers_[i]);
    prologueOnlyArg_[b] = declaredBound_[i] && readHoisted[b] && !readPerRun[b];
  }
}

Status CudaExecutable::runPrologue() {
  CachingAllocator& alloc = device_->allocator();
  std::vector<DeviceBuffer> temps;
  for (size_t b = 0; b < bufferBytes_.size(); ++b)
    if (prologueTemp_[b]) {
      WF_ASSIGN_OR_RETURN(DeviceBuffer buf, alloc.allocate(bufferBytes_[b], "weight preprocessing"));
      ptr_[b] = buf.data();
      temps.push_back(std::move(buf));
    }
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (!hoisted_[s]) continue;
    NvtxRange range(steps_[s].op->name() + " (once)");
    WF_RETURN_IF_ERROR(launchStep(steps_[s]));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  for (size_t b = 0; b < bufferBytes_.size(); ++b) {
    if (prologueTemp_[b]) ptr_[b] = nullptr;
    // Weights that only the prologue reads are not needed any more (a later bind uploads
    // them again).
    if (prologueOnlyArg_[b] && buffers_[b].data()) {
      buffers_[b] = DeviceBuffer();
      ptr_[b] = nullptr;
    }
  }
  prologueDirty_ = false;
  return Status::ok();
}

// Intermediate buffers (results and workspaces of the per-run steps) get offsets in one arena by
// lifetime; see the comment inside.
Status CudaExecutable::assignSlots() {
  const size_t numBuffers = bufferBytes_.size();
  std::vector<int> lastUse(numBuffers, kNoUse);
  std::vector<bool> isIntermediate(numBuffers, false);
  // The buffers a step writes: its results and its workspace (last used by the step itself).
  auto defined = [&](const Step& step) {
    std::vector<int> out = step.outputBuffers;
    if (step.workspaceBuffer >= 0) out.push_back(step.workspaceBuffer);
    return out;
  };
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (hoisted_[s]) continue;
    for (int b : defined(steps_[s])) {
      isIntermediate[static_cast<size_t>(b)] = true;
      lastUse[static_cast<size_t>(b)] = std::max(lastUse[static_cast<size_t>(b)], static_cast<int>(s));
    }
    for (int b : steps_[s].inputBuffers)
      lastUse[static_cast<size_t>(b)] = std::max(lastUse[static_cast<size_t>(b)], static_cast<int>(s));
  }
  for (const Value* v : outputs_) lastUse[static_cast<size_t>(bufferOf_.at(v))] = kLiveToEnd;
  for (const Value* v : taps_) lastUse[static_cast<size_t>(bufferOf_.at(v))] = kLiveToEnd;
  std::vector<int> firstDef(numBuffers, -1);
  for (size_t s = 0; s < steps_.size(); ++s) {
    if (hoisted_[s]) continue;
    for (int b : defined(steps_[s]))
      if (firstDef[static_cast<size_t>(b)] < 0) firstDef[static_cast<size_t>(b)] = static_cast<int>(s);
  }
  // Steps run in index order except for loops: a value defined before a loop and read (or
  // rewritten) inside it is read again by every iteration, so it lives until the loop's jump
  // back. Values defined inside a loop live within one iteration (the carried values, defined
  // before it, are the only ones that cross the back edge). The branches of if and case need no
  // such care: a branch's values are dead in the others.
  for (const auto& [start, end] : loops_)
    for (size_t s = start; s <= end; ++s) {
      if (hoisted_[s]) continue;
      auto extend = [&, start = start, end = end](int b) {
        const auto i = static_cast<size_t>(b);
        if (firstDef[i] < static_cast<int>(start) && lastUse[i] != kLiveToEnd)
          lastUse[i] = std::max(lastUse[i], static_cast<int>(end));
      };
      for (int b : steps_[s].inputBuffers) extend(b);
      for (int b : defined(steps_[s])) extend(b);
    }

  // In place: a step's output takes the memory of an input it reads element for element when
  // the step is that input's last reader; the two become one interval.
  std::vector<int> home(numBuffers);
  for (size_t b = 0; b < numBuffers; ++b) home[b] = static_cast<int>(b);
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Step& step = steps_[s];
    if (hoisted_[s] || step.inPlaceInputs.empty() || step.outputBuffers.size() != 1) continue;
    const auto out = static_cast<size_t>(step.outputBuffers[0]);
    if (!isIntermediate[out] || firstDef[out] != static_cast<int>(s)) continue;
    for (size_t k : step.inPlaceInputs) {
      const auto in = static_cast<size_t>(step.inputBuffers[k]);
      const auto at = static_cast<size_t>(home[in]);
      // (Another input on the same buffer, an alias, may be read at other indices.)
      if (!isIntermediate[at] || lastUse[in] != static_cast<int>(s) || bufferBytes_[in] != bufferBytes_[out] ||
          lastUse[at] != static_cast<int>(s) ||
          std::count(step.inputBuffers.begin(), step.inputBuffers.end(), step.inputBuffers[k]) != 1)
        continue;
      home[out] = static_cast<int>(at);
      lastUse[at] = lastUse[out];
      isIntermediate[out] = false;  // placed with its home
      break;
    }
  }

  // Every intermediate gets an offset in one arena: buffers by decreasing size, each at the lowest
  // offset where it overlaps no placed buffer whose lifetime (first write to last read) meets
  // its own. The arena comes out close to the peak of bytes live at once.
  struct Interval {
    int buffer;
    int first, last;
    size_t bytes;
    size_t offset = 0;
  };
  std::vector<Interval> intervals;
  inArena_.assign(numBuffers, false);
  offsetOfBuffer_.assign(numBuffers, 0);
  for (size_t b = 0; b < numBuffers; ++b) {
    if (!isIntermediate[b]) continue;
    const int last = lastUse[b] == kLiveToEnd ? static_cast<int>(steps_.size()) : std::max(lastUse[b], firstDef[b]);
    intervals.push_back({static_cast<int>(b), firstDef[b], last, (bufferBytes_[b] + 255) / 256 * 256});
    info.intermediateBytes += bufferBytes_[b];
  }
  // The bytes live at the busiest step: no placement can use less.
  {
    std::vector<size_t> live(steps_.size() + 1, 0);
    for (const Interval& iv : intervals)
      for (int s = iv.first; s <= iv.last; ++s) live[static_cast<size_t>(s)] += iv.bytes;
    info.peakLiveBytes = live.empty() ? 0 : *std::max_element(live.begin(), live.end());
  }
  // Greedy placement in a given order: each buffer at the lowest offset free for its lifetime.
  auto place = [&](std::vector<Interval>& order) {
    std::vector<const Interval*> placed, overlapping;
    size_t arena = 0;
    for (Interval& iv : order) {
      overlapping.clear();
      for (const Interval* p : placed)
        if (p->first <= iv.last && iv.first <= p->last) overlapping.push_back(p);
      std::sort(overlapping.begin(), overlapping.end(),
                [](const Interval* x, const Interval* y) { return x->offset < y->offset; });
      size_t offset = 0;
      for (const Interval* p : overlapping) {
        if (offset + iv.bytes <= p->offset) break;
        offset = std::max(offset, p->offset + p->bytes);
      }
      iv.offset = offset;
      arena = std::max(arena, offset + iv.bytes);
      placed.push_back(&iv);
    }
    return arena;
  };
  // Largest first is usually closest to the peak; first-written first and longest-lived first
  // win on some programs. The smallest arena of the three is kept.
  using Order = bool (*)(const Interval&, const Interval&);
  const Order orders[] = {
      [](const Interval& x, const Interval& y) { return x.bytes > y.bytes; },
      [](const Interval& x, const Interval& y) { return x.first < y.first || (x.first == y.first && x.bytes > y.bytes); },
      [](const Interval& x, const Interval& y) {
        return static_cast<double>(x.bytes) * (x.last - x.first + 1) > static_cast<double>(y.bytes) * (y.last - y.first + 1);
      },
  };
  size_t arena = std::numeric_limits<size_t>::max();
  std::vector<Interval> best;
  for (Order order : orders) {
    std::vector<Interval> candidate = intervals;
    std::stable_sort(candidate.begin(), candidate.end(), order);
    const size_t bytes = place(candidate);
    if (bytes < arena) {
      arena = bytes;
      best = std::move(candidate);
    }
  }
  if (intervals.empty()) arena = 0;
  intervals = std::move(best);
  std::set<size_t> offsets;
  for (const Interval& iv : intervals) {
    inArena_[static_cast<size_t>(iv.buffer)] = true;
    offsetOfBuffer_[static_cast<size_t>(iv.buffer)] = iv.offset;
    offsets.insert(iv.offset);
  }
  for (size_t b = 0; b < numBuffers; ++b)
    if (home[b] != static_cast<int>(b)) {
      inArena_[b] = true;
      offsetOfBuffer_[b] = offsetOfBuffer_[static_cast<size_t>(home[b])];
      info.intermediateBytes += bufferBytes_[b];
      ++info.inPlaceSteps;
    }
  info.slots = static_cast<int>(offsets.size());
  info.slotBytes = arena;
  arenaBytes_ = arena;
  return Status::ok();
}

Status CudaExecutable::allocate() {
  CachingAllocator& alloc = device_->allocator();
  buffers_.resize(bufferBytes_.size());
  ptr_.assign(bufferBytes_.size(), nullptr);
  for (size_t b = 0; b < bufferBytes_.size(); ++b) {
    if (inArena_[b] || prologueTemp_[b]) continue;
    WF_ASSIGN_OR_RETURN(buffers_[b], alloc.allocate(bufferBytes_[b], "an argument or constant of " + deviceName()));
    ptr_[b] = buffers_[b].data();
  }
  if (arenaBytes_ > 0) {
    WF_ASSIGN_OR_RETURN(arena_, alloc.allocate(arenaBytes_, "intermediate values"));
  }
  for (size_t b = 0; b < bufferBytes_.size(); ++b)
    if (inArena_[b]) ptr_[b] = static_cast<char*>(arena_.data()) + offsetOfBuffer_[b];
  for (const auto& [id, lit] : constants_) {
    const size_t bytes = bufferBytes_[static_cast<size_t>(id)];
    if (lit.sizeBytes() != bytes) return internalError("constant of " + lit.type().toString() + " has the wrong size");
    if (bytes > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(ptr_[static_cast<size_t>(id)], lit.data(), bytes, cudaMemcpyHostToDevice,
                                    stream_.get()));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  constants_.clear();
  return Status::ok();
}

Status CudaExecutable::compile() {
  WF_RETURN_IF_ERROR(device_->activate());
  WF_ASSIGN_OR_RETURN(stream_, createStream());
  if (entry_.numRegions() == 0 || entry_.region(0).empty())
    return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " has no body");
  const Block& body = FuncOp(&entry_).body();
  for (size_t i = 0; i < body.numArguments(); ++i) {
    const Type& t = body.argument(i)->type();
    if (!t.isTensor() || !t.hasStaticShape() || t.elementType() == ElementType::kQuantized)
      return unimplemented("function @" + std::string(FuncOp(&entry_).symName()) + " argument #" + std::to_string(i) +
                           " of type " + t.toString() + ": the CUDA backend takes static-shape tensors");
    const int id = newBuffer(tensorBytes(t));
    bufferOf_[body.argument(i)] = id;
    argBuffers_.push_back(id);
  }
  bound_.assign(body.numArguments(), false);
  declaredBound_.assign(body.numArguments(), false);
  for (size_t i : options_.boundArguments) {
    if (i >= body.numArguments())
      return invalidArgument("CompileOptions::boundArguments names argument #" + std::to_string(i) + " of @" +
                             std::string(FuncOp(&entry_).symName()) + ", which has " +
                             std::to_string(body.numArguments()));
    declaredBound_[i] = true;
  }

  // Taps keep buffers of their own, so they are found before fusion is planned.
  std::unordered_set<const Value*> tapped;
  std::vector<const Value*> tapValues;
  for (const std::string& name : options_.tapValues) {
    WF_ASSIGN_OR_RETURN(const Value* found, findEntryValue(entry_, name));
    tapValues.push_back(found);
    tapped.insert(found);
  }
  FusionPlan fusion;
  if (options_.fuse) fusion = planFusion(body, tapped);
  {
    std::unordered_set<const Value*> keep = tapped;
    for (const auto& op : body.operations())
      if (op->code() == OpCode::FuncReturn || op->code() == OpCode::Return)
        for (const Value* v : op->operands()) keep.insert(v);
    chooseChannelsLast(body, fusion, keep);
  }

  LowerContext lctx{*device_, options_};
  const Operation* terminator = nullptr;
  for (const auto& opPtr : body.operations()) {
    const Operation& op = *opPtr;
    if (op.code() == OpCode::FuncReturn || op.code() == OpCode::Return) {
      terminator = &op;
      break;
    }
    if (fusion.absorbed.count(&op)) continue;
    if (auto it = fusion.groupOfRoot.find(&op); it != fusion.groupOfRoot.end()) {
      WF_RETURN_IF_ERROR(planFusedGroup(fusion.groups[static_cast<size_t>(it->second)]));
      continue;
    }
    WF_RETURN_IF_ERROR(planOp(op, lctx));
  }
  if (!terminator) return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " has no return");
  for (const Value* v : terminator->operands()) {
    if (!bufferOf_.count(v)) return internalError(terminator->describe() + ": returned value has no buffer");
    outputs_.push_back(v);
  }
  for (const Value* found : tapValues) {
    if (!bufferOf_.count(found)) return internalError("tap value '" + found->nameHint() + "' has no device buffer");
    taps_.push_back(found);
  }
  WF_RETURN_IF_ERROR(compileFusedKernels());
  // Workspaces are per-step buffers in the slot plan (Step::workspaceBuffer); this is the
  // largest one, for ExecutableStats.
  info.workspaceBytes = lctx.workspaceBytes;
  planHoisting();
  WF_RETURN_IF_ERROR(assignSlots());
  return allocate();
}

Status CudaExecutable::upload(int buffer, const Literal& value, const Type& expected, const std::string& what) {
  if (!value.type().isTensor() || value.elementType() != expected.elementType() || value.shape() != expected.shape())
    return invalidArgument(what + " expects " + expected.toString() + ", got " + value.type().toString());
  const size_t bytes = bufferBytes_[static_cast<size_t>(buffer)];
  if (bytes > 0)
    WF_CUDA_CHECK(cudaMemcpyAsync(ptr_[static_cast<size_t>(buffer)], value.data(), bytes, cudaMemcpyHostToDevice,
                                  stream_.get()));
  return Status::ok();
}

Expected<Literal> CudaExecutable::download(int buffer, const Type& type) {
  Literal out = Literal::zeros(type);
  const size_t bytes = bufferBytes_[static_cast<size_t>(buffer)];
  if (bytes > 0)
    WF_CUDA_CHECK(cudaMemcpyAsync(out.data(), ptr_[static_cast<size_t>(buffer)], bytes, cudaMemcpyDeviceToHost,
                                  stream_.get()));
  return out;
}

Status CudaExecutable::bindArgument(size_t index, const Literal& value) {
  std::lock_guard<std::mutex> lock(runMu_);
  const Block& body = FuncOp(&entry_).body();
  if (index >= body.numArguments())
    return invalidArgument("bindArgument: function @" + std::string(FuncOp(&entry_).symName()) + " has " +
                           std::to_string(body.numArguments()) + " arguments, not " + std::to_string(index + 1));
  WF_RETURN_IF_ERROR(device_->activate());
  const size_t b = static_cast<size_t>(argBuffers_[index]);
  if (!ptr_[b] && bufferBytes_[b] > 0) {
    // Released after an earlier prologue (only hoisted work reads it): allocate it again.
    WF_ASSIGN_OR_RETURN(buffers_[b], device_->allocator().allocate(bufferBytes_[b], "a bound argument"));
    ptr_[b] = buffers_[b].data();
  }
  WF_RETURN_IF_ERROR(upload(argBuffers_[index], value, body.argument(index)->type(),
                            "bound argument #" + std::to_string(index)));
  if (prologueOnlyArg_[b] || declaredBound_[index]) prologueDirty_ = true;
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  bound_[index] = true;
  return Status::ok();
}

Status CudaExecutable::launchStep(const Step& step) {
  LaunchContext ctx{stream_.get(), device_.get(), nullptr, step.workspaceBytes};
  if (step.workspaceBuffer >= 0) ctx.workspace = ptr_[static_cast<size_t>(step.workspaceBuffer)];
  void* in[kMaxStepBuffers];
  void* out[kMaxStepBuffers];
  if (step.inputBuffers.size() > kMaxStepBuffers || step.outputBuffers.size() > kMaxStepBuffers)
    return internalError(step.op->describe() + ": more operands or results than a step takes");
  for (size_t i = 0; i < step.inputBuffers.size(); ++i) in[i] = ptr_[static_cast<size_t>(step.inputBuffers[i])];
  for (size_t i = 0; i < step.outputBuffers.size(); ++i) out[i] = ptr_[static_cast<size_t>(step.outputBuffers[i])];
  Status s = step.kernel->launch(ctx, std::span<void* const>(in, step.inputBuffers.size()),
                                 std::span<void* const>(out, step.outputBuffers.size()));
  if (s.isOk()) return s;
  return s.message().find(step.op->location().toString()) == std::string::npos ? s.withContext(step.op->describe()) : s;
}

Status CudaExecutable::launchDeviceSteps() {
  for (size_t i = 0; i < steps_.size(); ++i) {
    if (hoisted_[i]) continue;
    if (!steps_[i].kernel || steps_[i].control != Control::kNone)
      return internalError("host or control step in a device-only launch");
    WF_RETURN_IF_ERROR(launchStep(steps_[i]));
  }
  return Status::ok();
}

Status CudaExecutable::runHostStep(const Step& step) {
  const Operation& op = *step.op;
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  std::vector<Literal> operands;
  ValueScope scope;
  for (size_t i = 0; i < step.inputs.size(); ++i) {
    WF_ASSIGN_OR_RETURN(Literal l, download(step.inputBuffers[i], step.inputs[i]->type()));
    if (i < op.numOperands()) operands.push_back(l);
    else scope.bind(step.inputs[i], l);
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  EvalContext ctx;
  ctx.module = &module_;
  ctx.scope = &scope;
  ctx.checks = checks;
  const Kernel* kernel = KernelRegistry::instance().find(op.code());
  if (!kernel) return internalError(op.describe() + ": host step without a CPU kernel");
  Expected<std::vector<Literal>> results = (*kernel)(op, operands, ctx);
  if (!results) {
    const Status& s = results.status();
    return s.message().find(op.location().toString()) == std::string::npos ? s.withContext(op.describe()) : s;
  }
  if (results->size() != op.numResults())
    return internalError(op.describe() + ": host kernel returned " + std::to_string(results->size()) + " results");
  for (size_t i = 0; i < results->size(); ++i)
    WF_RETURN_IF_ERROR(upload(step.outputBuffers[i], (*results)[i], op.result(i)->type(),
                              op.describe() + " result #" + std::to_string(i)));
  // The results' host memory must stay alive until the copies are done.
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return Status::ok();
}

Expected<int64_t> CudaExecutable::readControlScalar(const Step& step) {
  const size_t bytes = storageBytes(step.controlType);
  if (bytes == 0 || bytes > sizeof(uint64_t)) return internalError(step.op->describe() + ": branch on a wide scalar");
  uint64_t raw = 0;  // little-endian: the low `bytes` bytes
  WF_CUDA_CHECK(cudaMemcpyAsync(&raw, ptr_[static_cast<size_t>(step.inputBuffers[0])], bytes, cudaMemcpyDeviceToHost,
                                stream_.get()));
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  if (isSignedInteger(step.controlType) && bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(raw);
}

Status CudaExecutable::runSteps() {
  const bool timed = options_.recordTimings;
  size_t recorded = 0;
  for (size_t i = 0; i < steps_.size();) {
    const Step& step = steps_[i];
    if (hoisted_[i]) {
      ++i;
      continue;
    }
    switch (step.control) {
      case Control::kJump:
        i = step.targets[0];
        continue;
      case Control::kBranchIfFalse: {
        WF_ASSIGN_OR_RETURN(int64_t predicate, readControlScalar(step));
        i = predicate != 0 ? i + 1 : step.targets[0];
        continue;
      }
      case Control::kSwitch: {
        WF_ASSIGN_OR_RETURN(int64_t index, readControlScalar(step));
        // An index out of range selects the last branch (the default).
        const auto numBranches = static_cast<int64_t>(step.targets.size());
        i = step.targets[static_cast<size_t>(index < 0 || index >= numBranches ? numBranches - 1 : index)];
        continue;
      }
      case Control::kNone:
        break;
    }
    {
      NvtxRange range(step.op->name());
      WF_RETURN_IF_ERROR(step.kernel ? launchStep(step) : runHostStep(step));
    }
    if (timed) {
      // One event per step run (a loop's steps run many times), from a pool kept across runs.
      if (recorded == stepEvents_.size()) {
        WF_ASSIGN_OR_RETURN(Event e, createEvent(/*timing=*/true));
        stepEvents_.push_back(std::move(e));
        eventStep_.push_back(0);
      }
      WF_CUDA_CHECK(cudaEventRecord(stepEvents_[recorded].get(), stream_.get()));
      eventStep_[recorded++] = i;
    }
    ++i;
  }
  eventsRecorded_ = recorded;
  return Status::ok();
}

Status CudaExecutable::captureGraph() {
  WF_CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
  Status launched = launchDeviceSteps();
  cudaGraph_t g = nullptr;
  cudaError_t ended = cudaStreamEndCapture(stream_.get(), &g);
  Graph graph(g);
  WF_RETURN_IF_ERROR(launched);
  WF_CUDA_CHECK(ended);
  cudaGraphExec_t exec = nullptr;
  WF_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
  graphExec_ = GraphExec(exec);
  return Status::ok();
}

Expected<RunResult> CudaExecutable::run(std::span<const Literal> args) {
  std::lock_guard<std::mutex> lock(runMu_);
  WF_RETURN_IF_ERROR(device_->activate());
  const Block& body = FuncOp(&entry_).body();
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (declaredBound_[i] && !bound_[i])
      return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " argument #" +
                             std::to_string(i) + " is listed in CompileOptions::boundArguments but was not bound");
  size_t next = 0;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    if (bound_[i]) continue;
    if (next >= args.size())
      return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " needs " +
                             std::to_string(std::count(bound_.begin(), bound_.end(), false)) +
                             " unbound arguments, got " + std::to_string(args.size()));
    WF_RETURN_IF_ERROR(upload(argBuffers_[i], args[next], body.argument(i)->type(),
                              "function @" + std::string(FuncOp(&entry_).symName()) + " argument #" +
                                  std::to_string(i)));
    ++next;
  }
  if (next != args.size())
    return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " takes " + std::to_string(next) +
                           " unbound arguments, got " + std::to_string(args.size()));

  if (prologueDirty_) WF_RETURN_IF_ERROR(runPrologue());
  RunResult result;
  // No "@" in the name: Nsight Compute's NVTX filters read it as a domain separator.
  NvtxRange range("warpforge run " + std::string(FuncOp(&entry_).symName()));
  // Per-op timing runs the steps one by one, so that each gets its own events.
  const bool graphable =
      options_.cudaGraphs && !options_.recordTimings && info.hostSteps == 0 && info.controlFlowOps == 0 &&
      info.collectiveOps == 0 && !steps_.empty() && !graphFailed_;
  if (graphable && !graphExec_) {
    Status captured = captureGraph();
    if (!captured.isOk()) {
      // Launch directly from now on; a real kernel error shows again below.
      graphFailed_ = true;
      (void)cudaGetLastError();
    }
  }
  if (!runStart_) {
    WF_ASSIGN_OR_RETURN(runStart_, createEvent(/*timing=*/true));
    WF_ASSIGN_OR_RETURN(runEnd_, createEvent(/*timing=*/true));
  }
  WF_CUDA_CHECK(cudaEventRecord(runStart_.get(), stream_.get()));
  if (graphable && graphExec_) {
    WF_CUDA_CHECK(cudaGraphLaunch(graphExec_.get(), stream_.get()));
    info.usesGraph = true;
    ++info.graphLaunches;
  } else {
    WF_RETURN_IF_ERROR(runSteps());
  }
  WF_CUDA_CHECK(cudaEventRecord(runEnd_.get(), stream_.get()));
  for (const Value* v : outputs_) {
    WF_ASSIGN_OR_RETURN(Literal l, download(bufferOf_.at(v), v->type()));
    result.outputs.push_back(std::move(l));
  }
  for (const Value* v : taps_) {
    WF_ASSIGN_OR_RETURN(Literal l, download(bufferOf_.at(v), v->type()));
    result.taps.push_back(std::move(l));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  float deviceMillis = 0;
  WF_CUDA_CHECK(cudaEventElapsedTime(&deviceMillis, runStart_.get(), runEnd_.get()));
  result.report.deviceMillis = deviceMillis;
  if (options_.recordTimings && !graphable) {
    // Each step's time, summed over the times it ran, in the order the steps first ran.
    std::vector<double> micros(steps_.size(), -1.0);
    std::vector<size_t> order;
    cudaEvent_t previous = runStart_.get();
    for (size_t e = 0; e < eventsRecorded_; ++e) {
      float ms = 0;
      WF_CUDA_CHECK(cudaEventElapsedTime(&ms, previous, stepEvents_[e].get()));
      previous = stepEvents_[e].get();
      const size_t i = eventStep_[e];
      if (micros[i] < 0) {
        micros[i] = 0;
        order.push_back(i);
      }
      micros[i] += ms * 1000.0;
    }
    for (size_t i : order)
      result.report.timings.push_back({steps_[i].op->name(), steps_[i].op->location().toString(), micros[i]});
  }
  std::set<std::string> seen;
  collectHostOps(seen, result.report.hostFallbackOps);
  return result;
}

Expected<std::unique_ptr<OpKernel>> CudaExecutable::planGrid(const Operation& op) {
  const Attribute* programs = op.attr("programs");
  if (!programs || programs->kind() != Attribute::Kind::kArray || programs->elements().empty())
    return invalidArgument(op.describe() + ": 'programs' must be a non-empty array of arrays of functions");
  if (const Attribute* infeed = op.attr("infeed"); infeed && infeed->kind() == Attribute::Kind::kArray &&
                                                    !infeed->elements().empty())
    return unsupportedOnCuda(op, "an infeed queue");
  const auto numReplicas = static_cast<int64_t>(programs->elements().size());
  int64_t numPartitions = -1;
  std::vector<const Operation*> functions;
  for (const Attribute& row : programs->elements()) {
    if (row.kind() != Attribute::Kind::kArray || row.elements().empty())
      return invalidArgument(op.describe() + ": each row of 'programs' must be a non-empty array of functions");
    if (numPartitions >= 0 && static_cast<int64_t>(row.elements().size()) != numPartitions)
      return invalidArgument(op.describe() + ": the rows of 'programs' differ in length");
    numPartitions = static_cast<int64_t>(row.elements().size());
    for (const Attribute& ref : row.elements()) {
      if (ref.kind() != Attribute::Kind::kSymbolRef)
        return invalidArgument(op.describe() + ": expected a function symbol, got another attribute");
      const Operation* fn = module_.lookupFunction(ref.stringValue());
      if (!fn) return notFound(op.describe() + ": function @" + ref.stringValue() + " not found");
      functions.push_back(fn);
    }
  }
  auto grid = std::make_unique<GridKernel>(numReplicas, numPartitions);
  // Each process compiles as an executable of its own on this device; what the caller asked of
  // this run (taps, bound weights, timings) is not theirs.
  CompileOptions processOptions = options_;
  processOptions.tapValues.clear();
  processOptions.boundArguments.clear();
  processOptions.recordTimings = false;
  processOptions.cudaGraphs = false;  // its collectives meet the other processes step by step
  size_t nextInput = 0, nextOutput = 0;
  for (size_t i = 0; i < functions.size(); ++i) {
    const Operation& fn = *functions[i];
    if (fn.numRegions() == 0 || fn.region(0).empty())
      return invalidArgument(op.describe() + ": function @" + std::string(FuncOp(&fn).symName()) + " has no body");
    ProcessContext process;
    process.self = {static_cast<int64_t>(i) / numPartitions, static_cast<int64_t>(i) % numPartitions};
    process.numReplicas = numReplicas;
    process.numPartitions = numPartitions;
    process.rendezvous = grid->rendezvous();
    auto executable = std::make_unique<CudaExecutable>(device_, module_, fn, processOptions, process);
    Status compiled = executable->compile();
    if (!compiled.isOk())
      return Status(compiled.code(), op.describe() + ": process " + process.self.toString() + " (@" +
                                         std::string(FuncOp(&fn).symName()) + "): " + compiled.message());
    GridKernel::Process p;
    p.numInputs = FuncOp(&fn).body().numArguments();
    p.numOutputs = executable->numResults();
    p.firstInput = nextInput;
    p.firstOutput = nextOutput;
    nextInput += p.numInputs;
    nextOutput += p.numOutputs;
    if (nextInput > op.numOperands())
      return invalidArgument(op.describe() + ": " + std::to_string(op.numOperands()) +
                             " operands are too few for the programs' arguments");
    if (nextOutput > op.numResults())
      return invalidArgument(op.describe() + ": " + std::to_string(op.numResults()) +
                             " results are too few for the programs' results");
    const FunctionType type = FuncOp(&fn).functionType();
    for (size_t k = 0; k < p.numInputs; ++k)
      if (k < type.inputs.size() && op.operand(p.firstInput + k)->type() != type.inputs[k])
        return invalidArgument(op.describe() + ": operand #" + std::to_string(p.firstInput + k) + " has type " +
                               op.operand(p.firstInput + k)->type().toString() + ", process " +
                               process.self.toString() + " takes " + type.inputs[k].toString());
    for (size_t k = 0; k < p.numOutputs; ++k)
      if (k < type.results.size() && op.result(p.firstOutput + k)->type() != type.results[k])
        return invalidArgument(op.describe() + ": result #" + std::to_string(p.firstOutput + k) + " has type " +
                               op.result(p.firstOutput + k)->type().toString() + ", process " +
                               process.self.toString() + " returns " + type.results[k].toString());
    p.executable = std::move(executable);
    grid->add(std::move(p));
  }
  if (nextInput != op.numOperands())
    return invalidArgument(op.describe() + ": " + std::to_string(op.numOperands()) +
                           " operands, but the programs take " + std::to_string(nextInput));
  if (nextOutput != op.numResults())
    return invalidArgument(op.describe() + ": " + std::to_string(op.numResults()) +
                           " results, but the programs return " + std::to_string(nextOutput));
  info.gridProcesses += static_cast<int>(functions.size());
  return std::unique_ptr<OpKernel>(std::move(grid));
}

Status CudaExecutable::runOnDevice(std::span<void* const> args, std::span<void* const> results) {
  std::lock_guard<std::mutex> lock(runMu_);
  WF_RETURN_IF_ERROR(device_->activate());
  if (args.size() != argBuffers_.size() || results.size() != outputs_.size())
    return internalError("function @" + std::string(FuncOp(&entry_).symName()) + " run as a process with " +
                         std::to_string(args.size()) + " arguments and " + std::to_string(results.size()) +
                         " results");
  for (size_t i = 0; i < args.size(); ++i) {
    const auto b = static_cast<size_t>(argBuffers_[i]);
    if (bufferBytes_[b] > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(ptr_[b], args[i], bufferBytes_[b], cudaMemcpyDeviceToDevice, stream_.get()));
  }
  if (prologueDirty_) WF_RETURN_IF_ERROR(runPrologue());
  WF_RETURN_IF_ERROR(runSteps());
  for (size_t i = 0; i < outputs_.size(); ++i) {
    const auto b = static_cast<size_t>(bufferOf_.at(outputs_[i]));
    if (bufferBytes_[b] > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(results[i], ptr_[b], bufferBytes_[b], cudaMemcpyDeviceToDevice, stream_.get()));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return Status::ok();
}

void CudaExecutable::collectHostOps(std::set<std::string>& seen, std::vector<std::string>& out) const {
  for (const Step& step : steps_) {
    if (const auto* grid = dynamic_cast<const GridKernel*>(step.kernel.get())) {
      for (const GridKernel::Process& p : grid->processes()) p.executable->collectHostOps(seen, out);
      continue;
    }
    if (step.kernel || step.control != Control::kNone) continue;
    std::string name = step.op->name() + " at " + step.op->location().toString();
    if (seen.insert(name).second) out.push_back(std::move(name));
  }
}

size_t CudaExecutable::deviceBytesInUse() const {
  size_t total = 0;
  for (const DeviceBuffer& b : buffers_) total += b.capacity();
  total += arena_.capacity();
  for (const Step& s : steps_)
    if (s.kernel) total += s.kernel->deviceBytes();
  return total;
}

std::vector<std::pair<std::string, size_t>> CudaExecutable::deviceMemoryBreakdown() const {
  size_t bound = 0, inputs = 0, constants = 0, kernels = 0;
  std::vector<bool> isArg(buffers_.size(), false);
  for (size_t i = 0; i < argBuffers_.size(); ++i) {
    const auto b = static_cast<size_t>(argBuffers_[i]);
    isArg[b] = true;
    (declaredBound_[i] || bound_[i] ? bound : inputs) += buffers_[b].capacity();
  }
  for (size_t b = 0; b < buffers_.size(); ++b)
    if (!isArg[b]) constants += buffers_[b].capacity();
  for (const Step& s : steps_)
    if (s.kernel) kernels += s.kernel->deviceBytes();
  return {{"bound arguments", bound},
          {"inputs", inputs},
          {"constants and precomputed weights", constants},
          {"intermediates and workspaces (arena)", arena_.capacity()},
          {"held by kernels", kernels}};
}

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  std::string name() const override { return "cuda"; }
  Expected<std::unique_ptr<Executable>> compile(const Module& module, const Operation& entry,
                                                const CompileOptions& options) override {
    if (entry.code() != OpCode::FuncFunc) return invalidArgument("compile: entry is not a func.func");
    // Ops whose result shape is an operand's value (dynamic_iota, dynamic_broadcast_in_dim, ...)
    // or a type's dimension (get_dimension_size) take their static forms first, as XLA's
    // shape refinement does; the program's data is still computed on the device.
    const std::string name(FuncOp(&entry).symName());
    std::unique_ptr<Module> refined;
    const std::vector<Type> argTypes = FuncOp(&entry).functionType().inputs;
    const bool staticArgs = std::all_of(argTypes.begin(), argTypes.end(),
                                        [](const Type& t) { return t.isTensor() && t.hasStaticShape(); });
    if (staticArgs && needsShapeRefinement(module, name)) {
      RefineShapesOptions refineOptions;
      refineOptions.replaceFoldedOps = false;
      auto r = refineShapes(module, name, argTypes, refineOptions);
      if (r) {
        refined = std::move(*r);
      } else if (!options.allowCpuFallback) {
        return r.status().withContext("cuda: function @" + name + " needs static shapes");
      }
    }
    const Module& m = refined ? *refined : module;
    const Operation* fn = refined ? refined->lookupFunction(name) : &entry;
    if (!fn) return internalError("cuda: shape refinement lost function @" + name);
    auto exe = std::make_unique<CudaExecutable>(device_, m, *fn, options);
    exe->keepModule(std::move(refined));
    WF_RETURN_IF_ERROR(exe->compile());
    return std::unique_ptr<Executable>(std::move(exe));
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
