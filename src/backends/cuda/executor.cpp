// The executor (executor.h): runs a Plan, and compileExecutor, which makes one.
#include "backends/cuda/executor.h"

#include <algorithm>
#include <thread>

#include <nvtx3/nvToolsExt.h>

#include "eval/interpreter.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/planner.h"
#include "support/phase_timer.h"

namespace wf::cuda {
namespace {

// An NVTX range for the lifetime of the object (shown by Nsight Systems beside the kernels).
class NvtxRange {
 public:
  explicit NvtxRange(const std::string& name) { nvtxRangePushA(name.c_str()); }
  ~NvtxRange() { nvtxRangePop(); }
  NvtxRange(const NvtxRange&) = delete;
  NvtxRange& operator=(const NvtxRange&) = delete;
};

}  // namespace

Executor::Executor(std::shared_ptr<Device> device, const Module& module, const Operation& entry,
                   const CompileOptions& options, Plan plan, Stream stream)
    : device_(std::move(device)),
      module_(module),
      entry_(entry),
      options_(options),
      stream_(std::move(stream)),
      plan_(std::move(plan)),
      bound_(plan_.argBuffers.size(), false),
      prologueDirty_(static_cast<size_t>(plan_.prologueGroups), true),
      segmentAt_(plan_.steps.size(), -1) {
  for (size_t g = 0; g < plan_.graphSegments.size(); ++g) segmentAt_[plan_.graphSegments[g].first] = static_cast<int>(g);
}

Executor::~Executor() {
  if (stream_) {
    WF_CUDA_WARN(cudaSetDevice(device_->ordinal()));
    // Collectives still in flight (a run that failed part way) end first, bounded: a stream
    // waiting on a dead peer would never synchronise.
    (void)waitCommWorks();
    if (commStream_) WF_CUDA_WARN(cudaStreamSynchronize(commStream_.get()));
    WF_CUDA_WARN(cudaStreamSynchronize(stream_.get()));
  }
  // Buffers go back to the allocator before the device handle is released.
  for (std::vector<GraphExec>& graphs : graphExecs_) graphs.clear();
  plan_.steps.clear();
  memory_.release();
}

Expected<std::unique_ptr<Executor>> compileExecutor(const std::shared_ptr<Device>& device, const Module& module,
                                                    const Operation& entry, const CompileOptions& options,
                                                    const ProcessContext& process) {
  WF_RETURN_IF_ERROR(device->activate());
  WF_ASSIGN_OR_RETURN(Stream stream, createStream());
  WF_ASSIGN_OR_RETURN(Plan plan, planFunction(device, module, entry, options, process));
  {
    PhaseTimer phase("assign memory slots");
    WF_RETURN_IF_ERROR(assignSlots(plan));
  }
  auto executor = std::make_unique<Executor>(device, module, entry, options, std::move(plan), std::move(stream));
  {
    PhaseTimer phase("allocate and upload constants");
    WF_RETURN_IF_ERROR(executor->allocate());
  }
  return executor;
}

Status Executor::allocate() {
  if (std::any_of(plan_.steps.begin(), plan_.steps.end(), [](const Step& s) { return s.comm; })) {
    WF_ASSIGN_OR_RETURN(commStream_, createStream());
    WF_ASSIGN_OR_RETURN(commReady_, createEvent());
    commDone_.resize(plan_.steps.size());
    for (size_t i = 0; i < plan_.steps.size(); ++i) {
      if (!plan_.steps[i].comm) continue;
      WF_ASSIGN_OR_RETURN(commDone_[i], createEvent());
    }
  }
  WF_RETURN_IF_ERROR(memory_.allocate(plan_, device_->allocator(), deviceName()));
  for (const auto& [id, lit] : plan_.constants) {
    const size_t bytes = plan_.bufferBytes[static_cast<size_t>(id)];
    if (lit.sizeBytes() != bytes) return internalError("constant of " + lit.type().toString() + " has the wrong size");
    if (bytes > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(address(id), lit.data(), bytes, cudaMemcpyHostToDevice, stream_.get()));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  plan_.constants.clear();
  return Status::ok();
}

bool Executor::prologueDirty() const {
  return std::find(prologueDirty_.begin(), prologueDirty_.end(), true) != prologueDirty_.end();
}

Status Executor::runPrologue() {
  // The groups a bind made stale (all of them before the first run); the others' results are
  // still in their buffers, and their temporaries and freed weights are not needed.
  auto rerun = [&](size_t s) {
    return plan_.hoisted[s] && prologueDirty_[static_cast<size_t>(plan_.hoistedGroup[s])];
  };
  std::vector<bool> temps(plan_.bufferBytes.size(), false);
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (!rerun(s)) continue;
    for (int b : plan_.steps[s].outputBuffers) temps[static_cast<size_t>(b)] = true;
    if (plan_.steps[s].workspaceBuffer >= 0) temps[static_cast<size_t>(plan_.steps[s].workspaceBuffer)] = true;
  }
  WF_ASSIGN_OR_RETURN(std::vector<DeviceBuffer> held,
                      memory_.allocatePrologueTemps(plan_, temps, device_->allocator()));
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (!rerun(s)) continue;
    for (int b : plan_.steps[s].inputBuffers)
      if (!address(b) && plan_.bufferBytes[static_cast<size_t>(b)] > 0)
        return internalError(plan_.steps[s].op->describe() + ": hoisted step reads a buffer that was freed");
    NvtxRange range(plan_.steps[s].op->name() + " (once)");
    WF_RETURN_IF_ERROR(launchStep(plan_.steps[s]));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  memory_.releasePrologueOnly(plan_);
  prologueDirty_.assign(prologueDirty_.size(), false);
  return Status::ok();
}

Status Executor::upload(int buffer, const Literal& value, const Type& expected, const std::string& what) {
  if (!value.type().isTensor() || value.elementType() != expected.elementType() || value.shape() != expected.shape())
    return invalidArgument(what + " expects " + expected.toString() + ", got " + value.type().toString());
  const size_t bytes = plan_.bufferBytes[static_cast<size_t>(buffer)];
  if (bytes > 0)
    WF_CUDA_CHECK(cudaMemcpyAsync(address(buffer), value.data(), bytes, cudaMemcpyHostToDevice, stream_.get()));
  return Status::ok();
}

Expected<Literal> Executor::download(int buffer, const Type& type) {
  Literal out = Literal::zeros(type);
  const size_t bytes = plan_.bufferBytes[static_cast<size_t>(buffer)];
  if (bytes > 0)
    WF_CUDA_CHECK(cudaMemcpyAsync(out.data(), address(buffer), bytes, cudaMemcpyDeviceToHost, stream_.get()));
  return out;
}

Status Executor::bindArgument(size_t index, const Literal& value) {
  std::lock_guard<std::mutex> lock(runMu_);
  const Block& body = FuncOp(&entry_).body();
  if (index >= body.numArguments())
    return invalidArgument("bindArgument: function @" + std::string(FuncOp(&entry_).symName()) + " has " +
                           std::to_string(body.numArguments()) + " arguments, not " + std::to_string(index + 1));
  WF_RETURN_IF_ERROR(device_->activate());
  const size_t b = static_cast<size_t>(plan_.argBuffers[index]);
  WF_RETURN_IF_ERROR(memory_.restoreArgument(plan_.argBuffers[index], plan_.bufferBytes[b], device_->allocator()));
  WF_RETURN_IF_ERROR(upload(plan_.argBuffers[index], value, body.argument(index)->type(),
                            "bound argument #" + std::to_string(index)));
  // The hoisted work reading the argument reruns before the next run, in place: the buffers a
  // captured graph reads keep their addresses.
  if (plan_.argPrologueGroup[index] >= 0) prologueDirty_[static_cast<size_t>(plan_.argPrologueGroup[index])] = true;
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  bound_[index] = true;
  return Status::ok();
}

Expected<Literal> Executor::readArgument(size_t index) {
  std::lock_guard<std::mutex> lock(runMu_);
  const Block& body = FuncOp(&entry_).body();
  const std::string where = "readArgument: argument #" + std::to_string(index) + " of @" +
                            std::string(FuncOp(&entry_).symName());
  if (index >= body.numArguments())
    return invalidArgument(where + ": the function has " + std::to_string(body.numArguments()) + " arguments");
  if (!bound_[index]) return invalidArgument(where + " is not bound");
  const int b = plan_.argBuffers[index];
  if (!address(b) && plan_.bufferBytes[static_cast<size_t>(b)] > 0)
    return invalidArgument(where + " was released after weight preprocessing (only hoisted steps read it)");
  WF_RETURN_IF_ERROR(device_->activate());
  WF_ASSIGN_OR_RETURN(Literal value, download(b, body.argument(index)->type()));
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return value;
}

namespace {

// The device addresses of a step's buffers: on the stack for the usual few, on the heap for the
// many operands of a variadic op (a gradient bucket's all_reduce).
class Addresses {
 public:
  template <typename AddressOf>
  Addresses(const std::vector<int>& buffers, AddressOf&& address) : n_(buffers.size()) {
    if (n_ > kMaxStepBuffers) heap_.resize(n_);
    void** p = data();
    for (size_t i = 0; i < n_; ++i) p[i] = address(buffers[i]);
  }
  std::span<void* const> span() const { return {n_ > kMaxStepBuffers ? heap_.data() : stack_, n_}; }

 private:
  void** data() { return n_ > kMaxStepBuffers ? heap_.data() : stack_; }
  size_t n_;
  void* stack_[kMaxStepBuffers];
  std::vector<void*> heap_;
};

Status withOp(const Step& step, Status s) {
  if (s.isOk()) return s;
  return s.message().find(step.op->location().toString()) == std::string::npos ? s.withContext(step.op->describe()) : s;
}

}  // namespace

Status Executor::launchStep(const Step& step) {
  LaunchContext ctx{stream_.get(), device_.get(), nullptr, step.workspaceBytes};
  if (step.workspaceBuffer >= 0) ctx.workspace = address(step.workspaceBuffer);
  auto at = [this](int b) { return address(b); };
  Addresses in(step.inputBuffers, at), out(step.outputBuffers, at);
  return withOp(step, step.kernel->launch(ctx, in.span(), out.span()));
}

Status Executor::issueCommStep(size_t index, const Step& step) {
  auto* kernel = dynamic_cast<CommKernel*>(step.kernel.get());
  if (!kernel || !commStream_) return internalError(step.op->describe() + ": a collective step without its stream");
  // The communication stream waits until the compute stream has written the operands.
  WF_CUDA_CHECK(cudaEventRecord(commReady_.get(), stream_.get()));
  WF_CUDA_CHECK(cudaStreamWaitEvent(commStream_.get(), commReady_.get(), 0));
  LaunchContext ctx{commStream_.get(), device_.get(), nullptr, step.workspaceBytes};
  if (step.workspaceBuffer >= 0) ctx.workspace = address(step.workspaceBuffer);
  auto at = [this](int b) { return address(b); };
  Addresses in(step.inputBuffers, at), out(step.outputBuffers, at);
  Expected<std::unique_ptr<dist::Work>> work = kernel->issue(ctx, in.span(), out.span());
  if (!work) return withOp(step, work.status());
  WF_CUDA_CHECK(cudaEventRecord(commDone_[index].get(), commStream_.get()));
  commWorks_.push_back({index, std::move(*work)});
  commPending_.push_back(index);
  return Status::ok();
}

Status Executor::joinComm(size_t index) {
  for (size_t k = 0; k < commPending_.size();) {
    const size_t c = commPending_[k];
    if (static_cast<size_t>(plan_.commJoin[c]) <= index) {
      WF_CUDA_CHECK(cudaStreamWaitEvent(stream_.get(), commDone_[c].get(), 0));
      commPending_.erase(commPending_.begin() + static_cast<long>(k));
    } else {
      ++k;
    }
  }
  return Status::ok();
}

Status Executor::settleComm(const Status& ran, const Status& communicated) {
  const bool joined = commPending_.empty();
  commPending_.clear();
  // A run that stopped part way may leave copies or folds queued behind its collectives on the
  // communication stream (their NCCL part has ended or was aborted, so they finish): the next
  // run must not reuse their buffers before they do.
  if (commStream_ && (!joined || !ran.isOk() || !communicated.isOk()))
    WF_CUDA_WARN(cudaStreamSynchronize(commStream_.get()));
  WF_RETURN_IF_ERROR(ran);
  return communicated;
}

Status Executor::waitCommWorks() {
  Status first;
  for (CommInFlight& c : commWorks_) {
    Status s = c.work->wait();
    if (first.isOk() && !s.isOk()) first = withOp(plan_.steps[c.step], s);
  }
  commWorks_.clear();
  return first;
}

Status Executor::launchDeviceSteps(const GraphSegment& segment) {
  for (size_t i = segment.first; i < segment.end; ++i) {
    if (plan_.hoisted[i]) continue;
    if (!plan_.steps[i].kernel || plan_.steps[i].control != Control::kNone)
      return internalError("host or control step in a device-only launch");
    WF_RETURN_IF_ERROR(launchStep(plan_.steps[i]));
  }
  return Status::ok();
}

Status Executor::runHostStep(const Step& step) {
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
  ctx.checks = checks_;
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

Expected<int64_t> Executor::readControlScalar(const Step& step) {
  const size_t bytes = storageBytes(step.controlType);
  if (bytes == 0 || bytes > sizeof(uint64_t)) return internalError(step.op->describe() + ": branch on a wide scalar");
  uint64_t raw = 0;  // little-endian: the low `bytes` bytes
  WF_CUDA_CHECK(cudaMemcpyAsync(&raw, address(step.inputBuffers[0]), bytes, cudaMemcpyDeviceToHost, stream_.get()));
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  const unsigned bits = static_cast<unsigned>(bytes * 8);
  if (isSignedInteger(step.controlType) && bits < 64 && (raw >> (bits - 1)) & 1) raw |= ~uint64_t{0} << bits;
  return static_cast<int64_t>(raw);
}

Status Executor::runSteps(bool replay) {
  const bool timed = options_.recordTimings;
  size_t recorded = 0;
  for (size_t i = 0; i < plan_.steps.size();) {
    if (replay && segmentAt_[i] >= 0) {
      // The collectives joined here end before the segment's kernels run (no join falls inside).
      if (!commPending_.empty()) WF_RETURN_IF_ERROR(joinComm(i));
      const auto g = static_cast<size_t>(segmentAt_[i]);
      WF_CUDA_CHECK(cudaGraphLaunch(graphExecs_[parity_][g].get(), stream_.get()));
      usesGraph_ = true;
      ++graphLaunches_;
      i = plan_.graphSegments[g].end;
      continue;
    }
    const Step& step = plan_.steps[i];
    if (plan_.hoisted[i]) {
      ++i;
      continue;
    }
    // Before a step that synchronises with the host, every collective of the run so far has
    // ended (bounded by the job's timeout): the compute stream may wait on any of them. Then
    // the collectives whose results this step reads (or whose buffers it writes) are joined.
    const bool hostSync = step.control == Control::kBranchIfFalse || step.control == Control::kSwitch ||
                          (step.control == Control::kNone && (!step.kernel || (step.meetsPeers && !step.comm)));
    if (hostSync && !commWorks_.empty()) WF_RETURN_IF_ERROR(waitCommWorks());
    if (!commPending_.empty()) WF_RETURN_IF_ERROR(joinComm(i));
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
      WF_RETURN_IF_ERROR(step.comm ? issueCommStep(i, step) : step.kernel ? launchStep(step) : runHostStep(step));
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
  // The collectives still in flight end before the run's results are read.
  if (!commPending_.empty()) WF_RETURN_IF_ERROR(joinComm(plan_.steps.size()));
  return Status::ok();
}

Status Executor::captureGraphs() {
  PhaseTimer phase("CUDA graph capture");
  std::vector<GraphExec> graphs;
  for (const GraphSegment& segment : plan_.graphSegments) {
    WF_CUDA_CHECK(cudaStreamBeginCapture(stream_.get(), cudaStreamCaptureModeThreadLocal));
    Status launched = launchDeviceSteps(segment);
    cudaGraph_t g = nullptr;
    cudaError_t ended = cudaStreamEndCapture(stream_.get(), &g);
    Graph graph(g);
    WF_RETURN_IF_ERROR(launched);
    WF_CUDA_CHECK(ended);
    cudaGraphExec_t exec = nullptr;
    WF_CUDA_CHECK(cudaGraphInstantiate(&exec, graph.get(), 0));
    graphs.emplace_back(exec);
  }
  graphExecs_[parity_] = std::move(graphs);
  return Status::ok();
}

Expected<RunResult> Executor::run(std::span<const Literal> args) {
  std::lock_guard<std::mutex> lock(runMu_);
  WF_RETURN_IF_ERROR(device_->activate());
  const Block& body = FuncOp(&entry_).body();
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (plan_.declaredBound[i] && !bound_[i])
      return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " argument #" +
                             std::to_string(i) + " is listed in CompileOptions::boundArguments but was not bound");
  size_t next = 0;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    if (bound_[i]) continue;
    if (next >= args.size())
      return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " needs " +
                             std::to_string(std::count(bound_.begin(), bound_.end(), false)) +
                             " unbound arguments, got " + std::to_string(args.size()));
    WF_RETURN_IF_ERROR(upload(plan_.argBuffers[i], args[next], body.argument(i)->type(),
                              "function @" + std::string(FuncOp(&entry_).symName()) + " argument #" +
                                  std::to_string(i)));
    ++next;
  }
  if (next != args.size())
    return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " takes " + std::to_string(next) +
                           " unbound arguments, got " + std::to_string(args.size()));

  if (prologueDirty()) WF_RETURN_IF_ERROR(runPrologue());
  RunResult result;
  // No "@" in the name: Nsight Compute's NVTX filters read it as a domain separator.
  NvtxRange range("warpforge run " + std::string(FuncOp(&entry_).symName()));
  // Per-op timing runs the steps one by one, so that each gets its own events.
  const bool wholePlan = plan_.graphSegments.size() == 1 && plan_.graphSegments[0].first == 0 &&
                         plan_.graphSegments[0].end == plan_.steps.size();
  const bool graphable = options_.cudaGraphs && !options_.recordTimings && !plan_.graphSegments.empty() && !graphFailed_;
  std::vector<GraphExec>& graphs = graphExecs_[parity_];
  if (graphable && graphs.empty()) {
    Status captured = captureGraphs();
    if (!captured.isOk()) {
      // Launch directly from now on; a real kernel error shows again below.
      graphFailed_ = true;
      graphs.clear();
      (void)cudaGetLastError();
    }
  }
  const bool replay = graphable && !graphs.empty();
  if (!runStart_) {
    WF_ASSIGN_OR_RETURN(runStart_, createEvent(/*timing=*/true));
    WF_ASSIGN_OR_RETURN(runEnd_, createEvent(/*timing=*/true));
  }
  WF_CUDA_CHECK(cudaEventRecord(runStart_.get(), stream_.get()));
  if (replay && wholePlan) {
    WF_CUDA_CHECK(cudaGraphLaunch(graphs[0].get(), stream_.get()));
    usesGraph_ = true;
    ++graphLaunches_;
  } else {
    Status ran = runSteps(replay);
    // Every collective of the run has ended (or failed, bounded by the timeout, aborting the
    // communicator) before anything synchronises with the streams.
    Status communicated = waitCommWorks();
    WF_RETURN_IF_ERROR(settleComm(ran, communicated));
  }
  WF_CUDA_CHECK(cudaEventRecord(runEnd_.get(), stream_.get()));
  for (size_t r = 0; r < plan_.outputs.size(); ++r) {
    if (plan_.resultCarried[r]) continue;  // stays on the device as its argument's next value
    const Value* v = plan_.outputs[r];
    WF_ASSIGN_OR_RETURN(Literal l, download(plan_.bufferOf.at(v), v->type()));
    result.outputs.push_back(std::move(l));
  }
  for (const Value* v : plan_.taps) {
    WF_ASSIGN_OR_RETURN(Literal l, download(plan_.bufferOf.at(v), v->type()));
    result.taps.push_back(std::move(l));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  float deviceMillis = 0;
  WF_CUDA_CHECK(cudaEventElapsedTime(&deviceMillis, runStart_.get(), runEnd_.get()));
  result.report.deviceMillis = deviceMillis;
  if (options_.recordTimings && !graphable) {
    // Each step's time, summed over the times it ran, in the order the steps first ran.
    std::vector<double> micros(plan_.steps.size(), -1.0);
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
    // A composite run as a kernel of its own is named by its composite name ("warpforge.attention"),
    // a multi-tensor step by its Step::name.
    for (size_t i : order) {
      const Operation& op = *plan_.steps[i].op;
      const std::string_view composite = compositeName(op);
      std::string name = !plan_.steps[i].name.empty() ? plan_.steps[i].name
                         : composite.empty()          ? op.name()
                                                      : std::string(composite);
      result.report.timings.push_back({std::move(name), op.location().toString(), micros[i]});
    }
  }
  std::set<std::string> seen;
  collectHostOps(seen, result.report.hostFallbackOps);
  // The run succeeded (its work is done: the stream was synchronised above): the carried results
  // become their arguments. Every carried argument changes at once, or, on any error above, none.
  bool swapped = false;
  for (const CarriedBuffer& c : plan_.carried)
    if (c.resultBuffer != c.argBuffer) {
      memory_.swapBuffers(c.argBuffer, c.resultBuffer);
      swapped = true;
    }
  if (swapped) parity_ ^= 1;
  return result;
}

Status Executor::runOnDevice(std::span<void* const> args, std::span<void* const> results) {
  std::lock_guard<std::mutex> lock(runMu_);
  WF_RETURN_IF_ERROR(device_->activate());
  if (args.size() != plan_.argBuffers.size() || results.size() != plan_.outputs.size())
    return internalError("function @" + std::string(FuncOp(&entry_).symName()) + " run as a process with " +
                         std::to_string(args.size()) + " arguments and " + std::to_string(results.size()) +
                         " results");
  for (size_t i = 0; i < args.size(); ++i) {
    const auto b = static_cast<size_t>(plan_.argBuffers[i]);
    if (plan_.bufferBytes[b] > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(memory_.address(b), args[i], plan_.bufferBytes[b], cudaMemcpyDeviceToDevice,
                                    stream_.get()));
  }
  if (prologueDirty()) WF_RETURN_IF_ERROR(runPrologue());
  Status ran = runSteps(/*replay=*/false);
  Status communicated = waitCommWorks();
  WF_RETURN_IF_ERROR(settleComm(ran, communicated));
  for (size_t i = 0; i < plan_.outputs.size(); ++i) {
    const auto b = static_cast<size_t>(plan_.bufferOf.at(plan_.outputs[i]));
    if (plan_.bufferBytes[b] > 0)
      WF_CUDA_CHECK(cudaMemcpyAsync(results[i], memory_.address(b), plan_.bufferBytes[b], cudaMemcpyDeviceToDevice,
                                    stream_.get()));
  }
  WF_CUDA_CHECK(cudaStreamSynchronize(stream_.get()));
  return Status::ok();
}

void Executor::collectHostOps(std::set<std::string>& seen, std::vector<std::string>& out) const {
  for (const Step& step : plan_.steps) {
    if (const auto* grid = dynamic_cast<const GridKernel*>(step.kernel.get())) {
      for (const GridKernel::Process& p : grid->processes()) p.executable->collectHostOps(seen, out);
      continue;
    }
    if (step.kernel || step.control != Control::kNone) continue;
    std::string name = step.op->name() + " at " + step.op->location().toString();
    if (seen.insert(name).second) out.push_back(std::move(name));
  }
}

size_t Executor::deviceBytesInUse() const {
  size_t total = 0;
  total += memory_.bytesInUse();
  for (const Step& s : plan_.steps)
    if (s.kernel) total += s.kernel->deviceBytes();
  return total;
}

std::vector<std::pair<std::string, size_t>> Executor::deviceMemoryBreakdown() const {
  size_t bound = 0, inputs = 0, constants = 0, kernels = 0;
  std::vector<bool> isArg(memory_.numBuffers(), false);
  for (size_t i = 0; i < plan_.argBuffers.size(); ++i) {
    const auto b = static_cast<size_t>(plan_.argBuffers[i]);
    isArg[b] = true;
    (plan_.declaredBound[i] || bound_[i] ? bound : inputs) += memory_.ownBytes(b);
  }
  size_t nextValues = 0;
  for (const CarriedBuffer& c : plan_.carried)
    if (c.resultBuffer != c.argBuffer) {
      isArg[static_cast<size_t>(c.resultBuffer)] = true;
      nextValues += memory_.ownBytes(static_cast<size_t>(c.resultBuffer));
    }
  for (size_t b = 0; b < memory_.numBuffers(); ++b)
    if (!isArg[b]) constants += memory_.ownBytes(b);
  for (const Step& s : plan_.steps)
    if (s.kernel) kernels += s.kernel->deviceBytes();
  std::vector<std::pair<std::string, size_t>> parts = {{"bound arguments", bound},
                                                        {"inputs", inputs},
                                                        {"constants and precomputed weights", constants},
                                                        {"intermediates and workspaces (arena)", memory_.arenaBytes()},
                                                        {"held by kernels", kernels}};
  // The second buffer of each carried argument (CompileOptions::carriedResults).
  if (!plan_.carried.empty()) parts.insert(parts.begin() + 1, {"carried arguments' next values", nextValues});
  return parts;
}

ExecutableStats Executor::stats() const {
  std::lock_guard<std::mutex> lock(runMu_);  // a run updates the launch counts
  ExecutableStats s = plan_.stats;
  s.usesGraph = usesGraph_;
  s.graphLaunches = graphLaunches_;
  s.graphSegments = options_.cudaGraphs ? static_cast<int>(plan_.graphSegments.size()) : 0;
  return s;
}

Status GridKernel::launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
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

size_t GridKernel::deviceBytes() const {
  size_t total = 0;
  for (const Process& p : processes_) total += p.executable->deviceBytesInUse();
  return total;
}

}  // namespace wf::cuda
