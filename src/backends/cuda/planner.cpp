// The planner (planner.h): one walk over the entry function that fills a Plan.
#include "backends/cuda/planner.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <functional>
#include <iostream>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "eval/interpreter.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/executor.h"
#include "backends/cuda/codegen/fusion.h"
#include "backends/cuda/kernel.h"
#include "backends/cuda/kernels/convolution_epilogue.h"
#include "backends/cuda/kernels/dot.h"
#include "backends/cuda/kernels/dot_gelu.h"
#include "backends/cuda/codegen/nvrtc.h"
#include "backends/cuda/tuning.h"
#include "support/phase_timer.h"

namespace wf::cuda {
namespace {

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

// A kernel the planner generates: its handle is filled in once the whole plan's kernels are
// compiled (compileFusedKernels).
class GeneratedKernel : public OpKernel {
 public:
  void setKernel(cudaKernel_t k) { kernel_ = k; }

 protected:
  cudaKernel_t kernel_ = nullptr;
};

// A generated fusion kernel (fusion.h): inputs..., output, one thread per output element in a
// grid-stride loop.
class FusedKernel final : public GeneratedKernel {
 public:
  FusedKernel(int64_t n, const FusedKernelSource& source)
      : n_(n), threads_(source.threads), blocks_(source.blocks), twoPhase_(source.twoPhase),
        finishBlocks_(source.finishBlocks), workspaceBytes_(source.workspaceBytes) {}
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (n_ == 0) return Status::ok();
    if (!kernel_) return internalError("fused kernel launched before it was compiled");
    // The kernel's parameters: the inputs' addresses, then the outputs' (the root's, then any
    // side outputs'), then for a kernel of two phases the workspace and the phase (no allocation
    // here: this runs for every step of every run that is not a graph replay).
    void* pointers[2 * kMaxStepBuffers + 1];
    void* args[2 * kMaxStepBuffers + 2];
    if (in.size() > kMaxStepBuffers || out.size() > kMaxStepBuffers || out.empty())
      return internalError("fused kernel with too many inputs or outputs");
    if (workspaceBytes_ > 0 && (!ctx.workspace || ctx.workspaceBytes < workspaceBytes_))
      return internalError("fused reduction: workspace too small for its partial results");
    for (size_t i = 0; i < in.size(); ++i) pointers[i] = in[i];
    for (size_t i = 0; i < out.size(); ++i) pointers[in.size() + i] = out[i];
    size_t params = in.size() + out.size();
    int phase = 0;
    if (twoPhase_) pointers[params++] = ctx.workspace;
    for (size_t i = 0; i < params; ++i) args[i] = &pointers[i];
    if (twoPhase_) args[params] = &phase;
    WF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks_)),
                                   dim3(static_cast<unsigned>(threads_)), args, 0, ctx.stream));
    if (finishBlocks_ > 0) {
      phase = 1;
      WF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(finishBlocks_)),
                                     dim3(static_cast<unsigned>(threads_)), args, 0, ctx.stream));
    }
    return Status::ok();
  }

 private:
  int64_t n_;
  int threads_;
  int64_t blocks_;
  bool twoPhase_;
  int64_t finishBlocks_;
  size_t workspaceBytes_;
};

// A multi-tensor step (fusion.h generateMultiTensorKernel; planner mergeMultiTensorSteps): one
// loop group over several tensors, the members. The step's inputs are each member's inputs in
// turn (inputsPerMember of them), its outputs each member's root and side outputs. One launch
// takes up to source.maxTensors members, its one parameter the table of their addresses,
// element counts and first blocks, built here on every launch (a few hundred bytes, passed by
// value: a captured graph keeps its copy).
class MultiTensorKernel final : public GeneratedKernel {
 public:
  MultiTensorKernel(const MultiTensorKernelSource& source, size_t inputsPerMember, std::vector<int64_t> sizes)
      : pointers_(static_cast<size_t>(source.pointersPerTensor)), maxTensors_(static_cast<size_t>(source.maxTensors)),
        threads_(source.threads), elementsPerBlock_(source.elementsPerBlock), inputsPerMember_(inputsPerMember), sizes_(std::move(sizes)) {}
  Status launch(const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) override {
    if (!kernel_) return internalError("multi-tensor kernel launched before it was compiled");
    const size_t members = sizes_.size(), outputsPerMember = pointers_ - inputsPerMember_;
    if (in.size() != members * inputsPerMember_ || out.size() != members * outputsPerMember)
      return internalError("multi-tensor kernel: " + std::to_string(in.size()) + " inputs and " +
                           std::to_string(out.size()) + " outputs for " + std::to_string(members) + " tensors");
    // The table's layout (fusion.h): void* p[T][P]; long long n[T]; int start[T + 1].
    const size_t T = maxTensors_, nAt = T * pointers_ * sizeof(void*), startAt = nAt + T * sizeof(long long);
    alignas(8) unsigned char table[kMultiTensorTableBytes];
    if (startAt + (T + 1) * sizeof(int) > kMultiTensorTableBytes) return internalError("multi-tensor kernel: table too large");
    for (size_t first = 0; first < members; first += T) {
      const size_t count = std::min(T, members - first);
      std::memset(table, 0, sizeof table);
      int blocks = 0;
      for (size_t t = 0; t < count; ++t) {
        const size_t j = first + t;
        for (size_t k = 0; k < inputsPerMember_; ++k)
          std::memcpy(table + (t * pointers_ + k) * sizeof(void*), &in[j * inputsPerMember_ + k], sizeof(void*));
        for (size_t k = 0; k < outputsPerMember; ++k)
          std::memcpy(table + (t * pointers_ + inputsPerMember_ + k) * sizeof(void*), &out[j * outputsPerMember + k],
                      sizeof(void*));
        const long long n = sizes_[j];
        std::memcpy(table + nAt + t * sizeof(long long), &n, sizeof n);
        std::memcpy(table + startAt + t * sizeof(int), &blocks, sizeof blocks);
        // (Past a few thousand blocks, each block's loop takes more than one pass.)
        blocks += static_cast<int>(std::min<int64_t>((n + elementsPerBlock_ - 1) / elementsPerBlock_, kMaxBlocksPerTensor));
      }
      // Unused entries start at the total, past every block: the search never picks them.
      for (size_t t = count; t <= T; ++t) std::memcpy(table + startAt + t * sizeof(int), &blocks, sizeof blocks);
      void* args[] = {table};
      WF_CUDA_CHECK(cudaLaunchKernel(reinterpret_cast<const void*>(kernel_), dim3(static_cast<unsigned>(blocks)),
                                     dim3(static_cast<unsigned>(threads_)), args, 0, ctx.stream));
    }
    return Status::ok();
  }

 private:
  static constexpr int64_t kMaxBlocksPerTensor = 2048;
  size_t pointers_, maxTensors_;
  int threads_;
  int64_t elementsPerBlock_;
  size_t inputsPerMember_;
  std::vector<int64_t> sizes_;
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

// Builds the Plan of one function: its methods add steps and buffers to plan_ as they walk the
// ops (see planner.h).
class Planner {
 public:
  Planner(const std::shared_ptr<Device>& device, const Module& module, const Operation& entry,
          const CompileOptions& options, const ProcessContext& process)
      : device_(device), module_(module), entry_(entry), options_(options), process_(process) {}

  Expected<Plan> build();

 private:
  int newBuffer(size_t bytes) {
    plan_.bufferBytes.push_back(bytes);
    return static_cast<int>(plan_.bufferBytes.size()) - 1;
  }
  Status planOp(const Operation& op, LowerContext& lctx, int depth = 0);
  // interpreter.run_parallel: an executor per process, run by one step (GridKernel).
  Expected<std::unique_ptr<OpKernel>> planGrid(const Operation& op);
  Status planFusedGroup(const FusionGroup& group);
  // Convolutions whose result one loop group alone reads, lowered with that group as their
  // epilogue where cuDNN takes the pair (kernels/convolution_epilogue.h): epilogues_.
  Status planConvolutionEpilogues(const Block& body, const FusionPlan& fusion,
                                  const std::unordered_set<const Value*>& keep, LowerContext& lctx);
  // Products whose result one bias-add group alone reads, lowered with cuBLASLt's bias epilogue
  // (kernels/dot.h): epilogues_.
  Status planDotEpilogues(const Block& body, const FusionPlan& fusion, const std::unordered_set<const Value*>& keep,
                          LowerContext& lctx);
  struct Epilogue;
  using EpilogueLowering =
      std::function<Expected<Epilogue>(const Operation& producer, const FusionGroup& group, LowerContext& lctx)>;
  // What both share: groups offered the producers (producerOf: result -> op) of the inputs they
  // alone read, lowered by `lower` (kUnimplemented: declined). Returns how many were declined.
  Expected<int> planEpilogues(const Block& body, const FusionPlan& fusion, const std::unordered_set<const Value*>& keep,
                              const std::unordered_map<const Value*, const Operation*>& producerOf, LowerContext& lctx,
                              const EpilogueLowering& lower);
  // The buffers a group's step writes (its root, then its side outputs) and its workspace.
  void planGroupOutputs(const FusionGroup& group, size_t workspaceBytes, Step& step);
  // The step of a convolution or product and its epilogue group, at the group's root.
  Status planEpilogueStep(const FusionGroup& group);
  // Steps copying operands into the layout a kernel reads (LowerContext::operandCopies), before
  // `step`, whose input buffers then name the copies.
  void planOperandCopies(const Operation& op, std::vector<LowerContext::OperandCopy>& copies, Step& step);
  // Picks the activations stored channels-last (Plan::channelsLast): see the comment inside.
  void chooseChannelsLast(const Block& body, const FusionPlan& fusion, const std::unordered_set<const Value*>& keep);
  Status compileFusedKernels();
  // Fused loop steps of the same multi-tensor code (fusion.h generateMultiTensorKernel), none
  // reading another's result, merged into one MultiTensorKernel step (CompileOptions::
  // multiTensorLoops): after hoisting, before the kernels are compiled.
  Status mergeMultiTensorSteps();
  Status inlineCall(const Operation& op, const Operation& callee, LowerContext& lctx, int depth);
  // The kernel of a composite with a lowering of its own, and the workspace it asked for; null
  // where there is no such lowering or it declines (kUnimplemented): the decomposition runs.
  Expected<std::unique_ptr<OpKernel>> lowerComposite(const Operation& op, LowerContext& lctx, size_t& workspace);
  // while/if/case as steps: their regions' ops planned in line, with control steps between.
  Status planControlFlow(const Operation& op, LowerContext& lctx, int depth);
  Status planWhile(const Operation& op, LowerContext& lctx, int depth);
  Status planBranches(const Operation& op, LowerContext& lctx, int depth);
  // Plans a region's ops up to its terminator; returns the terminator's operands.
  Expected<std::vector<const Value*>> planRegion(const Operation& op, const Region& region, LowerContext& lctx,
                                                 int depth);
  // A step copying buffer `from` into `to` (a loop-carried value or a result of while/if/case).
  void planCopy(const Operation& op, int from, int to);
  // Runs `plan`; if it fails as unimplemented while the CPU fallback is allowed, undoes what it
  // planned and returns true, so that the op runs whole on the host instead.
  Expected<bool> planOrUndo(const std::function<Status()>& plan);
  Expected<int> bufferFor(const Operation& op, const Value* v) const;
  void planHoisting();
  // CompileOptions::carriedResults: where each carried result is computed (Plan::carried).
  void planCarried(const Operation& terminator);
  bool computeInPlace(int from, int arg);
  // The steps that may run as one CUDA graph (Plan::graphSegments).
  void planGraphSegments();
  // Where the compute stream waits for each collective of a job (Plan::commJoin).
  void planCommJoins();

  std::shared_ptr<Device> device_;
  const Module& module_;
  const Operation& entry_;
  const CompileOptions& options_;
  ProcessContext process_;  // which process of which grid the plan is for
  Plan plan_;
  // Generated kernels waiting for compileFusedKernels(): source, and the steps that run it.
  std::vector<RuntimeKernelSource> fusedSources_;
  std::vector<std::vector<GeneratedKernel*>> fusedUsers_;
  std::unordered_map<std::string, size_t> fusedIndex_;  // source -> index in fusedSources_
  // The multi-tensor form of a fused loop step's group, by its kernel (mergeMultiTensorSteps).
  struct MultiTensorForm {
    MultiTensorKernelSource source;  // named WF_MULTI_KERNEL
    size_t fusedSource = 0;          // the step's own kernel, in fusedSources_
    int64_t elements = 0;            // its root's
    size_t inputs = 0;               // its group's
  };
  std::unordered_map<const OpKernel*, MultiTensorForm> multiTensorForms_;
  struct FusedValue {
    int buffer;
    size_t step;  // the index of the step computing it
  };
  std::unordered_map<std::string, FusedValue> fusedValues_;  // source + input buffers -> its value
  // Convolutions and products run in their epilogue group's step, by the group they run in.
  struct Epilogue {
    const Operation* producer = nullptr;  // the convolution or product
    std::unique_ptr<OpKernel> kernel;
    std::vector<const Value*> inputs;  // what the kernel reads, in order
    std::vector<LowerContext::OperandCopy> operandCopies;  // filled by planEpilogues
    size_t workspaceBytes = 0;                             // filled by planEpilogues
  };
  std::unordered_map<const FusionGroup*, Epilogue> epilogues_;
  std::unordered_set<const Operation*> epilogueProducers_;
};

Status Planner::inlineCall(const Operation& op, const Operation& callee, LowerContext& lctx, int depth) {
  constexpr int kMaxInlineDepth = 64;
  if (depth >= kMaxInlineDepth) return unsupportedOnCuda(op, "calls nested deeper than 64 (recursion?)");
  if (callee.numRegions() == 0 || callee.region(0).empty())
    return invalidArgument(op.describe() + ": callee has no body");
  const Block& body = callee.region(0).front();
  if (body.numArguments() != op.numOperands())
    return invalidArgument(op.describe() + ": callee takes " + std::to_string(body.numArguments()) + " arguments");
  // Callee values are (re)bound for this call site; the steps keep the buffer ids.
  for (size_t i = 0; i < body.numArguments(); ++i) plan_.bufferOf[body.argument(i)] = plan_.bufferOf.at(op.operand(i));
  // A composite's decomposition is fused as the entry's ops are: it is kept whole through shape
  // refinement (which inlines other calls before planning) only for a kernel of its own, and
  // runs this way where that kernel declines.
  FusionPlan fusion;
  if (op.code() == OpCode::Composite && options_.fuse) fusion = planFusion(body, {});
  for (const auto& inner : body.operations()) {
    if (inner->code() == OpCode::FuncReturn || inner->code() == OpCode::Return) {
      if (inner->numOperands() != op.numResults())
        return invalidArgument(op.describe() + ": callee returns " + std::to_string(inner->numOperands()) + " values");
      for (size_t i = 0; i < op.numResults(); ++i) plan_.bufferOf[op.result(i)] = plan_.bufferOf.at(inner->operand(i));
      ++plan_.stats.inlinedCalls;
      return Status::ok();
    }
    if (fusion.absorbed.count(inner.get())) continue;
    if (auto it = fusion.groupOfRoot.find(inner.get()); it != fusion.groupOfRoot.end()) {
      WF_RETURN_IF_ERROR(planFusedGroup(fusion.groups[static_cast<size_t>(it->second)]));
      continue;
    }
    WF_RETURN_IF_ERROR(planOp(*inner, lctx, depth + 1));
  }
  return invalidArgument(op.describe() + ": callee has no return");
}

Expected<std::unique_ptr<OpKernel>> Planner::lowerComposite(const Operation& op, LowerContext& lctx,
                                                            size_t& workspace) {
  const Lowering* lowering = CudaKernelRegistry::instance().findComposite(compositeName(op));
  if (!lowering) return std::unique_ptr<OpKernel>();
  if (!options_.fusedAttention) {  // --no-fused-attention: every composite as its decomposition
    ++plan_.stats.decomposedComposites;
    return std::unique_ptr<OpKernel>();
  }
  const size_t before = lctx.workspaceBytes;
  lctx.workspaceBytes = 0;
  Expected<std::unique_ptr<OpKernel>> kernel = (*lowering)(op, lctx);
  workspace = lctx.workspaceBytes;
  lctx.workspaceBytes = before;
  if (kernel) return kernel;
  if (kernel.status().code() != StatusCode::kUnimplemented) return kernel.status();
  ++plan_.stats.decomposedComposites;
  return std::unique_ptr<OpKernel>();
}

Status Planner::planOp(const Operation& op, LowerContext& lctx, int depth) {
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
    plan_.constants.emplace_back(id, *value->literal());
    plan_.bufferOf[op.result(0)] = id;
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
    for (size_t i = 0; i < op.numResults(); ++i) plan_.bufferOf[op.result(i)] = plan_.bufferOf.at(op.operand(i));
    ++plan_.stats.aliases;
    return Status::ok();
  }
  // A composite with a lowering of its own (CudaKernelRegistry::findComposite) is one step,
  // planned below; one without, or whose lowering declines, is inlined like a call.
  std::unique_ptr<OpKernel> compositeKernel;
  size_t compositeWorkspace = 0;
  if (op.code() == OpCode::Composite) {
    WF_ASSIGN_OR_RETURN(compositeKernel, lowerComposite(op, lctx, compositeWorkspace));
  }
  // Calls (and composites, through their decomposition) are inlined into the plan.
  if (!compositeKernel && (op.code() == OpCode::FuncCall || op.code() == OpCode::Composite)) {
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
  std::vector<LowerContext::OperandCopy> operandCopies;  // steps of their own, before this one
  std::string why = "no CUDA kernel for this op";
  const size_t workspaceBefore = lctx.workspaceBytes;
  lctx.workspaceBytes = 0;
  if (compositeKernel) {
    step.kernel = std::move(compositeKernel);
    lctx.workspaceBytes = compositeWorkspace;
    ++plan_.stats.fusedComposites;
  } else if (isCollectiveOp(op.code())) {
    Expected<CollectiveKernel> collective = lowerCollective(op, process_, lctx);
    // Inside a grid a collective cannot run on the host (the host kernel has no peers): the
    // error reaches the enclosing run_parallel, which then runs whole on the host if allowed.
    // Nor in a job: the host kernel would run as if this rank were alone.
    if (collective) {
      step.kernel = std::move(collective->kernel);
      step.meetsPeers = collective->meetsPeers;
      step.comm = collective->onCommStream;
    } else if (collective.status().code() == StatusCode::kUnimplemented && !process_.rendezvous && !process_.comm) {
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
    // Channels-last storage reaches the convolutions and pools that take it (chooseChannelsLast).
    lctx.operandStrides = lctx.resultStrides = nullptr;
    if (op.code() == OpCode::Convolution || op.code() == OpCode::ReduceWindow) {
      const ValueStrides& layouts = plan_.channelsLast;
      if (auto it = layouts.find(op.operand(0)); it != layouts.end()) lctx.operandStrides = &it->second;
      if (auto it = layouts.find(op.result(0)); it != layouts.end()) lctx.resultStrides = &it->second;
    }
    lctx.operandCopies.clear();
    Expected<std::unique_ptr<OpKernel>> kernel = (*lowering)(op, lctx);
    lctx.operandStrides = lctx.resultStrides = nullptr;
    if (kernel) {
      step.kernel = std::move(*kernel);
      operandCopies = std::move(lctx.operandCopies);
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
    ++plan_.stats.hostSteps;
  } else {
    ++plan_.stats.deviceSteps;
    if (step.meetsPeers) ++plan_.stats.collectiveOps;
  }
  for (const Value* v : step.inputs) {
    auto it = plan_.bufferOf.find(v);
    if (it == plan_.bufferOf.end()) return internalError(op.describe() + ": operand has no device buffer");
    step.inputBuffers.push_back(it->second);
  }
  planOperandCopies(op, operandCopies, step);
  for (size_t i = 0; i < op.numResults(); ++i) {
    const int id = newBuffer(tensorBytes(op.result(i)->type()));
    plan_.bufferOf[op.result(i)] = id;
    step.outputBuffers.push_back(id);
  }
  if (step.kernel && lctx.workspaceBytes > 0) {
    step.workspaceBytes = lctx.workspaceBytes;
    step.workspaceBuffer = newBuffer(lctx.workspaceBytes);
  }
  lctx.workspaceBytes = std::max(workspaceBefore, lctx.workspaceBytes);
  plan_.steps.push_back(std::move(step));
  return Status::ok();
}

// Operands the kernel reads repacked: each copy is a step of its own, which planHoisting hoists
// into the prologue where the operand is a weight.
void Planner::planOperandCopies(const Operation& op, std::vector<LowerContext::OperandCopy>& copies, Step& step) {
  for (LowerContext::OperandCopy& copy : copies) {
    Step repack;
    repack.op = &op;
    repack.kernel = std::move(copy.kernel);
    repack.inputs = {op.operand(copy.operand)};
    repack.inputBuffers = {step.inputBuffers[copy.operand]};
    repack.outputBuffers = {newBuffer(copy.bytes)};
    step.inputBuffers[copy.operand] = repack.outputBuffers[0];
    ++plan_.stats.deviceSteps;
    plan_.steps.push_back(std::move(repack));
  }
}

Expected<bool> Planner::planOrUndo(const std::function<Status()>& plan) {
  const size_t savedSteps = plan_.steps.size(), savedBuffers = plan_.bufferBytes.size(),
               savedConstants = plan_.constants.size(), savedLoops = plan_.loops.size();
  const ExecutableStats savedInfo = plan_.stats;
  Status planned = plan();
  if (planned.isOk()) return false;
  if (!options_.allowCpuFallback || planned.code() != StatusCode::kUnimplemented) return planned;
  plan_.steps.resize(savedSteps);
  plan_.bufferBytes.resize(savedBuffers);
  plan_.constants.resize(savedConstants);
  plan_.loops.resize(savedLoops);
  plan_.stats = savedInfo;
  // Fused groups the undone steps ran (in a composite's decomposition): their kernels and
  // buffers are gone. (A source no step uses any more is still compiled; it is not launched.)
  std::unordered_set<const OpKernel*> kept;
  for (const Step& step : plan_.steps) kept.insert(step.kernel.get());
  for (std::vector<GeneratedKernel*>& users : fusedUsers_)
    std::erase_if(users, [&](GeneratedKernel* k) { return !kept.count(k); });
  std::erase_if(multiTensorForms_, [&](const auto& entry) { return !kept.count(entry.first); });
  std::erase_if(fusedValues_, [&](const auto& entry) { return entry.second.buffer >= static_cast<int>(savedBuffers); });
  return true;
}

Expected<int> Planner::bufferFor(const Operation& op, const Value* v) const {
  auto it = plan_.bufferOf.find(v);
  if (it == plan_.bufferOf.end()) return internalError(op.describe() + ": a value it reads has no device buffer");
  return it->second;
}

Status Planner::planControlFlow(const Operation& op, LowerContext& lctx, int depth) {
  constexpr int kMaxNesting = 64;
  if (depth >= kMaxNesting) return unsupportedOnCuda(op, "regions nested deeper than 64");
  for (const auto& region : op.regions())
    if (region->blocks().size() != 1) return invalidArgument(op.describe() + ": each region must hold one block");
  WF_RETURN_IF_ERROR(op.code() == OpCode::While ? planWhile(op, lctx, depth) : planBranches(op, lctx, depth));
  ++plan_.stats.controlFlowOps;
  return Status::ok();
}

Expected<std::vector<const Value*>> Planner::planRegion(const Operation& op, const Region& region,
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

void Planner::planCopy(const Operation& op, int from, int to) {
  const size_t bytes = plan_.bufferBytes[static_cast<size_t>(to)];
  Step step;
  step.op = &op;
  step.rewrites = true;
  step.kernel = makeKernel([bytes](const LaunchContext& ctx, std::span<void* const> in, std::span<void* const> out) {
    if (bytes > 0) WF_CUDA_CHECK(cudaMemcpyAsync(out[0], in[0], bytes, cudaMemcpyDeviceToDevice, ctx.stream));
    return Status::ok();
  });
  step.inputBuffers = {from};
  step.outputBuffers = {to};
  plan_.steps.push_back(std::move(step));
  ++plan_.stats.deviceSteps;
}

// while: the loop-carried values live in the result buffers. Steps:
//   copy operands -> carried
//   start: cond's ops; branch-if-false(predicate) -> exit
//          body's ops; copy the body's results -> carried; jump -> start
//   exit:
Status Planner::planWhile(const Operation& op, LowerContext& lctx, int depth) {
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
    plan_.bufferOf[cond.argument(i)] = id;
    plan_.bufferOf[body.argument(i)] = id;
  }
  const size_t start = plan_.steps.size();
  WF_ASSIGN_OR_RETURN(std::vector<const Value*> predicate, planRegion(op, op.region(0), lctx, depth));
  if (predicate.size() != 1 || !isScalarOf(predicate[0]->type(), isBoolean))
    return invalidArgument(op.describe() + ": the cond region must return one tensor<i1>");
  const size_t exitBranch = plan_.steps.size();
  {
    Step branch;
    branch.op = &op;
    branch.control = Control::kBranchIfFalse;
    WF_ASSIGN_OR_RETURN(int p, bufferFor(op, predicate[0]));
    branch.inputBuffers = {p};
    plan_.steps.push_back(std::move(branch));
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
    const int temp = newBuffer(plan_.bufferBytes[static_cast<size_t>(from)]);
    planCopy(op, from, temp);
    staged.emplace_back(temp, carried[i]);
  }
  for (const auto& [from, to] : direct) planCopy(op, from, to);
  for (const auto& [from, to] : staged) planCopy(op, from, to);
  Step back;
  back.op = &op;
  back.control = Control::kJump;
  back.targets = {start};
  plan_.steps.push_back(std::move(back));
  plan_.steps[exitBranch].targets = {plan_.steps.size()};
  plan_.loops.emplace_back(start, plan_.steps.size() - 1);
  for (size_t i = 0; i < n; ++i) plan_.bufferOf[op.result(i)] = carried[i];
  return Status::ok();
}

// if and case: the results live in buffers each branch copies its results into. Steps:
//   branch-if-false(pred) -> b1  |  switch(index) -> b0, b1, ...
//   b0: branch 0's ops; copy results; jump -> end
//   b1: branch 1's ops; copy results; ...
//   end:
Status Planner::planBranches(const Operation& op, LowerContext& lctx, int depth) {
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
  const size_t select = plan_.steps.size();
  {
    Step step;
    step.op = &op;
    step.control = isIf ? Control::kBranchIfFalse : Control::kSwitch;
    step.controlType = selector.elementType();
    WF_ASSIGN_OR_RETURN(int s, bufferFor(op, op.operand(0)));
    step.inputBuffers = {s};
    plan_.steps.push_back(std::move(step));
  }
  std::vector<size_t> starts, jumpsToEnd;
  for (size_t k = 0; k < numBranches; ++k) {
    starts.push_back(plan_.steps.size());
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
      jumpsToEnd.push_back(plan_.steps.size());
      Step jump;
      jump.op = &op;
      jump.control = Control::kJump;
      plan_.steps.push_back(std::move(jump));
    }
  }
  for (size_t j : jumpsToEnd) plan_.steps[j].targets = {plan_.steps.size()};
  plan_.steps[select].targets = isIf ? std::vector<size_t>{starts[1]} : starts;
  for (size_t i = 0; i < op.numResults(); ++i) plan_.bufferOf[op.result(i)] = results[i];
  return Status::ok();
}

// How many readers each value of `body` has among the steps `fusion` leaves: the groups (as their
// inputs) and the ops no group absorbs (their operands and what their regions capture).
std::unordered_map<const Value*, int> countReaders(const Block& body, const FusionPlan& fusion) {
  std::unordered_map<const Value*, int> readers;
  for (const FusionGroup& g : fusion.groups)
    for (const Value* in : g.inputs) ++readers[in];
  for (const auto& op : body.operations()) {
    if (fusion.absorbed.count(op.get()) || fusion.groupOfRoot.count(op.get())) continue;
    for (const Value* v : op->operands()) ++readers[v];
    std::vector<const Value*> captured;
    collectCaptures(*op, *op, captured);
    for (const Value* v : captured) ++readers[v];
  }
  return readers;
}

// cuDNN's fast bf16/f16 (and TF32) convolutions read and write NHWC; given NCHW they transform
// both in a workspace the size of input plus output. So the 4-d activations around such convolutions are
// stored NHWC: a value is, if a convolution taking it (convolutionTakesChannelsLast), a pool
// taking it (poolTakesChannelsLast) or a fused group without reductions computes it, only such
// convolutions and pools (as their input) and such groups read it, and no such group mixes it
// with row-major values of its shape. Fused groups index by logical coordinates, so a group may mix layouts; one
// whose operands share its root's layout walks memory in order. Function results, taps, values
// that regions read and anything else (aliases, reductions, other kernels) keep row-major.
void Planner::chooseChannelsLast(const Block& body, const FusionPlan& fusion,
                                        const std::unordered_set<const Value*>& keep) {
  bool anyConvolution = false;
  for (const auto& op : body.operations())
    anyConvolution = anyConvolution || convolutionTakesChannelsLast(*op, options_);
  if (!anyConvolution) return;
  std::unordered_set<const Value*> produced, barred;
  std::unordered_map<const Value*, int> readers = countReaders(body, fusion);
  for (const FusionGroup& g : fusion.groups) {
    const bool loop = !g.hasReduce();
    if (!loop) barred.insert(g.inputs.begin(), g.inputs.end());
    if (loop && g.root()->result(0)->type().rank() == 4) produced.insert(g.root()->result(0));
    // A loop group's side outputs have its root's shape and are written in their own layout.
    if (loop)
      for (const Operation* side : g.sideOutputs)
        if (side->result(0)->type().rank() == 4) produced.insert(side->result(0));
  }
  // Pools (max pooling after an image network's stem) read and write channels-last both at once.
  std::vector<const Operation*> pools;
  for (const auto& opPtr : body.operations()) {
    const Operation& op = *opPtr;
    if (fusion.absorbed.count(&op) || fusion.groupOfRoot.count(&op)) continue;
    const bool pool = poolTakesChannelsLast(op);
    const bool takes = pool || convolutionTakesChannelsLast(op, options_);
    if (takes) produced.insert(op.result(0));
    if (pool) pools.push_back(&op);
    for (size_t i = 0; i < op.numOperands(); ++i)
      if (!(takes && i == 0)) barred.insert(op.operand(i));
    std::vector<const Value*> captured;
    collectCaptures(op, op, captured);
    barred.insert(captured.begin(), captured.end());
  }
  for (const Value* v : keep) barred.insert(v);
  std::unordered_set<const Value*> chosen;
  for (const Value* v : produced)
    if (!barred.count(v) && readers[v] > 0) chosen.insert(v);
  // A fused group whose full-size operands and result mix the two layouts reads one of them
  // across its storage order, several times slower than its bandwidth. Where reductions over
  // the batch read the activations (batch norm statistics and gradient sums in training, which
  // keep them row-major), most groups would mix (a residual add of a channels-last convolution
  // output and a row-major batch norm output): there such values stay row-major, until every
  // group agrees. (On ResNet-50 b32 bf16 training this took the H100 step from 32.5 to 25.4 ms.)
  // Elsewhere (inference, where the only such reduction is the global average pool at the end)
  // only the network's edges mix, which costs less than NHWC saves.
  auto reducesBatchOfActivations = [](const Operation& op) {
    if (op.code() != OpCode::Reduce || op.operand(0)->type().rank() != 4) return false;
    const Attribute* dims = op.attr("dimensions");
    const std::vector<int64_t> list = dims ? dims->asIntList().value_or(std::vector<int64_t>{}) : std::vector<int64_t>{};
    return std::find(list.begin(), list.end(), 0) != list.end();
  };
  bool activationsReduced = false;
  for (const FusionGroup& g : fusion.groups)
    for (const Operation* op : g.ops) activationsReduced = activationsReduced || reducesBatchOfActivations(*op);
  for (const auto& op : body.operations())
    if (!fusion.absorbed.count(op.get()) && !fusion.groupOfRoot.count(op.get()))
      activationsReduced = activationsReduced || reducesBatchOfActivations(*op);
  for (bool changed = true; changed;) {
    changed = false;
    // A pool stores its result as it reads its operand.
    for (const Operation* pool : pools)
      if (chosen.count(pool->operand(0)) != chosen.count(pool->result(0)))
        changed = (chosen.erase(pool->operand(0)) + chosen.erase(pool->result(0))) > 0 || changed;
    if (!activationsReduced) continue;
    for (const FusionGroup& g : fusion.groups) {
      if (g.hasReduce()) continue;
      const Value* root = g.root()->result(0);
      if (root->type().rank() != 4) continue;
      std::vector<const Value*> same = {root};
      for (const Operation* side : g.sideOutputs) same.push_back(side->result(0));
      for (const Value* in : g.inputs)
        if (in->type().shape() == root->type().shape()) same.push_back(in);
      size_t nhwc = 0;
      for (const Value* v : same) nhwc += chosen.count(v);
      if (nhwc == 0 || nhwc == same.size()) continue;
      for (const Value* v : same) changed = chosen.erase(v) > 0 || changed;
    }
  }
  for (const Value* v : produced) {
    if (!chosen.count(v)) continue;
    const std::vector<int64_t>& s = v->type().shape();  // [N, C, H, W] stored as [N, H, W, C]
    plan_.channelsLast[v] = {s[1] * s[2] * s[3], 1, s[3] * s[1], s[1]};
    ++plan_.stats.channelsLastValues;
  }
}

Status Planner::planFusedGroup(const FusionGroup& group) {
  const Operation& root = *group.root();
  // The kernel's name comes from a hash of its body, so that identical groups (repeated layers)
  // share one compiled kernel.
  WF_ASSIGN_OR_RETURN(FusedKernelSource source, generateFusedKernel(group, "WF_FUSED_KERNEL", &plan_.channelsLast));
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
  // activation to bf16 once for each of the query, key and value projections): share it, when
  // it was computed a few steps before. Further back, sharing would keep the first value alive
  // until now: autodiff recomputes cheap forward values in the backward pass (a batch norm's
  // output for its convolution's weight gradient) so that they need not live that long (on
  // ResNet-50 b32 bf16 training, sharing them all kept 590 MiB more alive).
  std::string valueKey = code;
  for (const Value* v : group.inputs) {
    auto it = plan_.bufferOf.find(v);
    if (it == plan_.bufferOf.end()) return internalError(root.describe() + ": fused operand has no device buffer");
    valueKey += "|" + std::to_string(it->second);
  }
  // (Work on arguments alone, such as a weight's conversion, is shared at any distance: it is
  // typically hoisted out of the run, its buffer kept anyway.)
  constexpr size_t kShareWithinSteps = 32;
  bool argumentsOnly = true;
  for (const Value* v : group.inputs) argumentsOnly = argumentsOnly && v->isBlockArgument();
  // (A group with side outputs writes more than one value: never shared.)
  const bool sideOutputs = !group.sideOutputs.empty();
  if (auto it = fusedValues_.find(valueKey);
      !sideOutputs && it != fusedValues_.end() &&
      (argumentsOnly || plan_.steps.size() - it->second.step <= kShareWithinSteps)) {
    plan_.bufferOf[root.result(0)] = it->second.buffer;
    ++plan_.stats.sharedFusedValues;
    return Status::ok();
  }
  Step step;
  step.op = &root;
  auto kernel = std::make_unique<FusedKernel>(root.result(0)->type().numElements(), source);
  fusedUsers_[index].push_back(kernel.get());
  if (options_.multiTensorLoops && !group.hasReduce()) {
    Expected<MultiTensorKernelSource> multi = generateMultiTensorKernel(group, "WF_MULTI_KERNEL", &plan_.channelsLast);
    if (multi)
      multiTensorForms_[kernel.get()] = {std::move(*multi), index, root.result(0)->type().numElements(),
                                         group.inputs.size()};
    else if (multi.status().code() != StatusCode::kUnimplemented)
      return multi.status();
  }
  step.kernel = std::move(kernel);
  for (const Value* v : group.inputs) {
    auto it = plan_.bufferOf.find(v);
    if (it == plan_.bufferOf.end()) return internalError(root.describe() + ": fused operand has no device buffer");
    step.inputs.push_back(v);
    step.inputBuffers.push_back(it->second);
  }
  // (A loop group writes its side outputs at the root's coordinates too: an input read in place
  // may give its memory to any output stored in its layout.)
  if (!group.hasReduce())
    for (size_t i = 0; i < group.inputs.size(); ++i) {
      bool sameLayout = plan_.channelsLast.count(group.inputs[i]) == plan_.channelsLast.count(root.result(0));
      for (const Operation* side : group.sideOutputs)
        sameLayout = sameLayout && plan_.channelsLast.count(group.inputs[i]) == plan_.channelsLast.count(side->result(0));
      if (readsInPlace(group, group.inputs[i]) && sameLayout) step.inPlaceInputs.push_back(i);
    }
  planGroupOutputs(group, source.workspaceBytes, step);
  if (!sideOutputs) fusedValues_[valueKey] = {step.outputBuffers[0], plan_.steps.size()};
  plan_.steps.push_back(std::move(step));
  ++plan_.stats.deviceSteps;
  ++plan_.stats.fusedKernels;
  plan_.stats.fusedOps += static_cast<int>(group.ops.size());
  return Status::ok();
}

// Each loop group (without reductions or an epilogue yet) is offered the producers of the inputs
// it alone reads, lowered together by `lower`, until one takes it; the rest stays as it was
// planned.
Expected<int> Planner::planEpilogues(const Block& body, const FusionPlan& fusion,
                                     const std::unordered_set<const Value*>& keep,
                                     const std::unordered_map<const Value*, const Operation*>& producerOf,
                                     LowerContext& lctx, const EpilogueLowering& lower) {
  std::unordered_map<const Value*, int> readers = countReaders(body, fusion);
  int declined = 0;
  for (const FusionGroup& g : fusion.groups) {
    if (g.hasReduce() || epilogues_.count(&g)) continue;
    for (const Value* in : g.inputs) {
      auto producer = producerOf.find(in);
      if (producer == producerOf.end() || readers[in] != 1 || keep.count(in) ||
          epilogueProducers_.count(producer->second))
        continue;
      lctx.operandCopies.clear();
      const size_t workspaceBefore = lctx.workspaceBytes;
      lctx.workspaceBytes = 0;
      Expected<Epilogue> epilogue = lower(*producer->second, g, lctx);
      const size_t workspace = lctx.workspaceBytes;
      lctx.workspaceBytes = std::max(workspaceBefore, workspace);
      if (!epilogue) {
        if (epilogue.status().code() != StatusCode::kUnimplemented) return epilogue.status();
        ++declined;
        if (tuningLogOn()) std::cerr << "warpforge: " << epilogue.status().message() << "\n";
        continue;
      }
      epilogue->operandCopies = std::move(lctx.operandCopies);
      epilogue->workspaceBytes = workspace;
      epilogues_[&g] = std::move(*epilogue);
      epilogueProducers_.insert(producer->second);
      break;
    }
  }
  lctx.operandCopies.clear();
  return declined;
}

// A convolution's result that one loop group alone reads (a batch norm + ReLU, or a residual
// block's tail) need not be stored: where cuDNN runs the convolution with that group's work as
// its epilogue, the pair is one step at the group's root.
Status Planner::planConvolutionEpilogues(const Block& body, const FusionPlan& fusion,
                                         const std::unordered_set<const Value*>& keep, LowerContext& lctx) {
  if (!options_.fuse || plan_.channelsLast.empty()) return Status::ok();
  std::unordered_map<const Value*, const Operation*> convolutionOf;
  for (const auto& op : body.operations())
    if (op->code() == OpCode::Convolution && !fusion.absorbed.count(op.get()) && plan_.channelsLast.count(op->result(0)))
      convolutionOf[op->result(0)] = op.get();
  auto lower = [&](const Operation& conv, const FusionGroup& g, LowerContext& l) -> Expected<Epilogue> {
    WF_ASSIGN_OR_RETURN(std::unique_ptr<OpKernel> kernel, lowerConvolutionEpilogue(conv, g, plan_.channelsLast, l));
    std::vector<const Value*> inputs = {conv.operand(0), conv.operand(1)};
    for (const Value* v : g.inputs)
      if (v != conv.result(0)) inputs.push_back(v);
    return Epilogue{&conv, std::move(kernel), std::move(inputs), {}, 0};
  };
  WF_ASSIGN_OR_RETURN(const int declined, planEpilogues(body, fusion, keep, convolutionOf, lctx, lower));
  plan_.stats.convolutionEpiloguesDeclined += declined;
  if (tuningLogOn() && !epilogues_.empty())
    std::cerr << "warpforge: " << epilogues_.size() << " convolutions with their epilogue group, " << declined
              << " declined\n";
  return Status::ok();
}

void Planner::planGroupOutputs(const FusionGroup& group, size_t workspaceBytes, Step& step) {
  std::vector<const Value*> outputs = {group.root()->result(0)};
  for (const Operation* side : group.sideOutputs) outputs.push_back(side->result(0));
  for (const Value* v : outputs) {
    const int id = newBuffer(tensorBytes(v->type()));
    plan_.bufferOf[v] = id;
    step.outputBuffers.push_back(id);
  }
  if (workspaceBytes > 0) {
    step.workspaceBytes = workspaceBytes;
    step.workspaceBuffer = newBuffer(workspaceBytes);
  }
}

// A product (a linear layer's) whose result only a bias add reads need not be stored: where
// cuBLASLt's bias epilogue computes the add as the group does (kernels/dot.h), the pair is one
// step at the group's root.
Status Planner::planDotEpilogues(const Block& body, const FusionPlan& fusion,
                                 const std::unordered_set<const Value*>& keep, LowerContext& lctx) {
  if (!options_.fuse || !options_.matmulEpilogues) return Status::ok();
  std::unordered_map<const Value*, const Operation*> productOf;
  for (const auto& op : body.operations())
    if (op->code() == OpCode::DotGeneral && !fusion.absorbed.count(op.get()) && op->numResults() == 1) {
      const ElementType t = op->result(0)->type().elementType();
      if (t == ElementType::kBF16 || t == ElementType::kF16) productOf[op->result(0)] = op.get();
    }
  if (productOf.empty()) return Status::ok();
  auto lower = [&](const Operation& dot, const FusionGroup& g, LowerContext& l) -> Expected<Epilogue> {
    if (plan_.channelsLast.count(g.root()->result(0)))
      return unsupportedOnCuda(dot, "bias epilogue: a channels-last result");
    Expected<DotBiasEpilogue> e = lowerDotBiasEpilogue(dot, g, l);
    if (e) {
      ++plan_.stats.matmulBiasEpilogues;
    } else {
      if (e.status().code() != StatusCode::kUnimplemented) return e.status();
      e = lowerDotBiasGeluEpilogue(dot, g, l);
      if (!e) return e.status();
      ++plan_.stats.matmulGeluEpilogues;
    }
    return Epilogue{&dot, std::move(e->kernel), {dot.operand(0), dot.operand(1), e->bias}, {}, 0};
  };
  WF_RETURN_IF_ERROR(planEpilogues(body, fusion, keep, productOf, lctx, lower).status());
  if (tuningLogOn() && plan_.stats.matmulBiasEpilogues + plan_.stats.matmulGeluEpilogues > 0)
    std::cerr << "warpforge: " << plan_.stats.matmulBiasEpilogues << " products with the bias epilogue, "
              << plan_.stats.matmulGeluEpilogues << " with the bias and GELU epilogue\n";
  return Status::ok();
}

Status Planner::planEpilogueStep(const FusionGroup& group) {
  Epilogue& e = epilogues_.at(&group);
  const Operation& producer = *e.producer;
  Step step;
  step.op = &producer;
  step.kernel = std::move(e.kernel);
  for (const Value* v : e.inputs) {
    WF_ASSIGN_OR_RETURN(int buffer, bufferFor(producer, v));
    step.inputs.push_back(v);
    step.inputBuffers.push_back(buffer);
  }
  planOperandCopies(producer, e.operandCopies, step);
  planGroupOutputs(group, e.workspaceBytes, step);
  plan_.steps.push_back(std::move(step));
  ++plan_.stats.deviceSteps;
  plan_.stats.fusedOps += static_cast<int>(group.ops.size());
  return Status::ok();
}

Status Planner::compileFusedKernels() {
  // (Sources whose every step was undone or merged into a multi-tensor step are not compiled.)
  std::vector<RuntimeKernelSource> used;
  std::vector<size_t> usedIndex;
  for (size_t i = 0; i < fusedSources_.size(); ++i)
    if (!fusedUsers_[i].empty()) {
      used.push_back(std::move(fusedSources_[i]));
      usedIndex.push_back(i);
    }
  fusedSources_.clear();
  if (!used.empty()) {
    WF_ASSIGN_OR_RETURN(std::vector<cudaKernel_t> kernels,
                        compileRuntimeKernels(*device_, fusedKernelPrelude(), used, options_));
    for (size_t i = 0; i < kernels.size(); ++i)
      for (GeneratedKernel* k : fusedUsers_[usedIndex[i]]) k->setKernel(kernels[i]);
  }
  plan_.stats.uniqueFusedKernels = static_cast<int>(used.size());
  fusedUsers_.clear();
  fusedIndex_.clear();
  multiTensorForms_.clear();
  return Status::ok();
}

Status Planner::mergeMultiTensorSteps() {
  // Loops jump over steps: the planned order is not the order they run in. (Plans of training
  // steps and inference have none.)
  if (multiTensorForms_.empty() || !plan_.loops.empty()) return Status::ok();
  // A batch: steps of one multi-tensor code, in order. Merged, they run where the last one was,
  // so a batch closes before a step that reads one of its results, at a step that does not run
  // on the compute stream in order (host, control, collective and synchronising steps, steps
  // writing buffers other steps write), and once it spans kMaxSpan steps (the earlier members'
  // operands live until it runs).
  constexpr size_t kMaxSpan = 64;
  struct Batch {
    std::vector<size_t> steps;
    std::unordered_set<int> outputs;
  };
  std::unordered_map<std::string, Batch> open;
  std::vector<std::vector<size_t>> batches;
  auto close = [&](auto it) {
    if (it->second.steps.size() > 1) batches.push_back(std::move(it->second.steps));
    return open.erase(it);
  };
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (plan_.hoisted[s]) continue;
    const Step& step = plan_.steps[s];
    const bool inOrder = step.kernel && step.control == Control::kNone && !step.comm && !step.meetsPeers &&
                         !step.rewrites;
    for (auto it = open.begin(); it != open.end();) {
      bool reads = !inOrder || s - it->second.steps.front() >= kMaxSpan;
      for (int b : step.inputBuffers) reads = reads || it->second.outputs.count(b) > 0;
      if (step.workspaceBuffer >= 0) reads = reads || it->second.outputs.count(step.workspaceBuffer) > 0;
      it = reads ? close(it) : std::next(it);
    }
    auto form = multiTensorForms_.find(step.kernel.get());
    if (!inOrder || form == multiTensorForms_.end()) continue;
    Batch& batch = open[form->second.source.code];
    batch.steps.push_back(s);
    batch.outputs.insert(step.outputBuffers.begin(), step.outputBuffers.end());
  }
  for (auto it = open.begin(); it != open.end();) it = close(it);
  if (batches.empty()) return Status::ok();

  std::vector<bool> removed(plan_.steps.size(), false);
  for (const std::vector<size_t>& batch : batches) {
    const MultiTensorForm& form = multiTensorForms_.at(plan_.steps[batch.front()].kernel.get());
    // The kernel's name comes from a hash of its code, as planFusedGroup's do.
    uint64_t h = 1469598103934665603ull;
    for (unsigned char c : form.source.code) h = (h ^ c) * 1099511628211ull;
    char name[40];
    std::snprintf(name, sizeof name, "wf_multi_%016llx", static_cast<unsigned long long>(h));
    size_t index;
    if (auto it = fusedIndex_.find(form.source.code); it != fusedIndex_.end()) {
      index = it->second;
    } else {
      std::string named = form.source.code;
      for (size_t at = named.find("WF_MULTI_KERNEL"); at != std::string::npos; at = named.find("WF_MULTI_KERNEL", at))
        named.replace(at, std::strlen("WF_MULTI_KERNEL"), name);
      index = fusedSources_.size();
      fusedIndex_[form.source.code] = index;
      fusedSources_.push_back({name, std::move(named)});
      fusedUsers_.emplace_back();
    }
    Step merged;
    std::vector<int64_t> sizes;
    for (size_t m = 0; m < batch.size(); ++m) {
      Step& member = plan_.steps[batch[m]];
      const MultiTensorForm& f = multiTensorForms_.at(member.kernel.get());
      std::erase(fusedUsers_[f.fusedSource], static_cast<GeneratedKernel*>(static_cast<FusedKernel*>(member.kernel.get())));
      sizes.push_back(f.elements);
      if (member.inputBuffers.size() != form.inputs || f.source.inputOrder.size() != form.inputs)
        return internalError(member.op->describe() + ": a multi-tensor member with another number of inputs");
      // Its inputs in the order of the table's slots (MultiTensorKernelSource::inputOrder).
      const size_t first = merged.inputBuffers.size();
      for (size_t slot = 0; slot < form.inputs; ++slot) {
        const size_t k = f.source.inputOrder[slot];
        merged.inputs.push_back(member.inputs[k]);
        merged.inputBuffers.push_back(member.inputBuffers[k]);
        if (std::find(member.inPlaceInputs.begin(), member.inPlaceInputs.end(), k) != member.inPlaceInputs.end())
          merged.inPlaceInputs.push_back(first + slot);
      }
      merged.outputBuffers.insert(merged.outputBuffers.end(), member.outputBuffers.begin(), member.outputBuffers.end());
      merged.inputMember.resize(merged.inputBuffers.size(), static_cast<int>(m));
      merged.outputMember.resize(merged.outputBuffers.size(), static_cast<int>(m));
      if (m + 1 < batch.size()) removed[batch[m]] = true;
    }
    Step& last = plan_.steps[batch.back()];
    merged.op = last.op;
    merged.name = "multi-tensor " + last.op->name() + " x" + std::to_string(batch.size());
    auto kernel = std::make_unique<MultiTensorKernel>(form.source, form.inputs, std::move(sizes));
    fusedUsers_[index].push_back(kernel.get());
    merged.kernel = std::move(kernel);
    last = std::move(merged);
    ++plan_.stats.multiTensorSteps;
    plan_.stats.multiTensorLoops += static_cast<int>(batch.size());
    plan_.stats.deviceSteps -= static_cast<int>(batch.size()) - 1;
    plan_.stats.fusedKernels -= static_cast<int>(batch.size()) - 1;
  }
  // Drop the merged steps; the per-step plans made so far (hoisting) follow.
  size_t kept = 0;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (removed[s]) continue;
    if (kept != s) {  // (a vector moved onto itself is left empty)
      plan_.steps[kept] = std::move(plan_.steps[s]);
      plan_.hoisted[kept] = plan_.hoisted[s];
      plan_.hoistedGroup[kept] = plan_.hoistedGroup[s];
    }
    ++kept;
  }
  plan_.steps.resize(kept);
  plan_.hoisted.resize(kept);
  plan_.hoistedGroup.resize(kept);
  return Status::ok();
}

void Planner::planHoisting() {
  const size_t numBuffers = plan_.bufferBytes.size();
  plan_.hoisted.assign(plan_.steps.size(), false);
  plan_.prologueTemp.assign(numBuffers, false);
  plan_.prologueOnlyArg.assign(numBuffers, false);
  std::vector<bool> constant(numBuffers, false);
  for (const auto& [id, lit] : plan_.constants) constant[static_cast<size_t>(id)] = true;
  for (size_t i = 0; i < plan_.argBuffers.size(); ++i)
    if (plan_.declaredBound[i]) constant[static_cast<size_t>(plan_.argBuffers[i])] = true;
  // A carried argument takes a new value on every run: what reads it is per-run work.
  for (const CarriedResult& c : options_.carriedResults)
    constant[static_cast<size_t>(plan_.argBuffers[c.argument])] = false;
  std::vector<bool> readPerRun(numBuffers, false), readHoisted(numBuffers, false);
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    const Step& step = plan_.steps[s];
    bool all = step.kernel != nullptr && !step.rewrites && !step.meetsPeers && !step.inputBuffers.empty();
    for (int b : step.inputBuffers) all = all && constant[static_cast<size_t>(b)];
    plan_.hoisted[s] = all;
    if (all) {
      for (int b : step.outputBuffers) constant[static_cast<size_t>(b)] = true;
      ++plan_.stats.hoistedSteps;
    }
    for (int b : step.inputBuffers) (all ? readHoisted : readPerRun)[static_cast<size_t>(b)] = true;
  }
  for (const Value* v : plan_.outputs) readPerRun[static_cast<size_t>(plan_.bufferOf.at(v))] = true;
  for (const Value* v : plan_.taps) readPerRun[static_cast<size_t>(plan_.bufferOf.at(v))] = true;
  for (size_t s = 0; s < plan_.steps.size(); ++s)
    if (plan_.hoisted[s]) {
      for (int b : plan_.steps[s].outputBuffers)
        plan_.prologueTemp[static_cast<size_t>(b)] = !readPerRun[static_cast<size_t>(b)];
      if (plan_.steps[s].workspaceBuffer >= 0)
        plan_.prologueTemp[static_cast<size_t>(plan_.steps[s].workspaceBuffer)] = true;
    }
  // Prologue groups: the hoisted steps joined by the buffers they share (bound arguments and
  // hoisted results; constants stay put and join nothing). A bind reruns the groups that read the
  // argument, and they need every bound argument and temporary they read again: a weight that
  // only the prologue reads can be freed after it only where no other bound argument's group
  // reads it, or rebinding that other argument would rerun work on freed memory.
  std::vector<int> parent(numBuffers);
  for (size_t b = 0; b < numBuffers; ++b) parent[b] = static_cast<int>(b);
  auto find = [&](int b) {
    while (parent[static_cast<size_t>(b)] != b) {
      parent[static_cast<size_t>(b)] = parent[static_cast<size_t>(parent[static_cast<size_t>(b)])];
      b = parent[static_cast<size_t>(b)];
    }
    return b;
  };
  std::vector<bool> literal(numBuffers, false);
  for (const auto& [id, lit] : plan_.constants) literal[static_cast<size_t>(id)] = true;
  auto groupBuffer = [](const Step& step) {
    return step.outputBuffers.empty() ? step.inputBuffers[0] : step.outputBuffers[0];
  };
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (!plan_.hoisted[s]) continue;
    const Step& step = plan_.steps[s];
    const int root = find(groupBuffer(step));
    for (int b : step.outputBuffers) parent[static_cast<size_t>(find(b))] = root;
    for (int b : step.inputBuffers)
      if (!literal[static_cast<size_t>(b)]) parent[static_cast<size_t>(find(b))] = find(root);
  }
  std::vector<int> groupOf(numBuffers, -1);  // by root buffer: the group's index
  plan_.hoistedGroup.assign(plan_.steps.size(), -1);
  plan_.prologueGroups = 0;
  for (size_t s = 0; s < plan_.steps.size(); ++s) {
    if (!plan_.hoisted[s]) continue;
    int& g = groupOf[static_cast<size_t>(find(groupBuffer(plan_.steps[s])))];
    if (g < 0) g = plan_.prologueGroups++;
    plan_.hoistedGroup[s] = g;
  }
  plan_.argPrologueGroup.assign(plan_.argBuffers.size(), -1);
  std::vector<int> boundArgsRead(static_cast<size_t>(plan_.prologueGroups), 0);
  for (size_t i = 0; i < plan_.argBuffers.size(); ++i) {
    const auto b = static_cast<size_t>(plan_.argBuffers[i]);
    if (!constant[b] || !readHoisted[b]) continue;
    const int g = groupOf[static_cast<size_t>(find(static_cast<int>(b)))];
    plan_.argPrologueGroup[i] = g;
    ++boundArgsRead[static_cast<size_t>(g)];
  }
  for (size_t i = 0; i < plan_.argBuffers.size(); ++i) {
    const size_t b = static_cast<size_t>(plan_.argBuffers[i]);
    const int g = plan_.argPrologueGroup[i];
    plan_.prologueOnlyArg[b] = plan_.declaredBound[i] && readHoisted[b] && !readPerRun[b] && g >= 0 &&
                               boundArgsRead[static_cast<size_t>(g)] == 1;
  }
}

// CompileOptions::carryInPlace: moves value buffer `from` (a carried result) into argument
// buffer `arg` when that is safe: one per-run step outside any loop writes `from`, reading `arg`
// element for element (Step::inPlaceInputs), and no step after it reads `arg` (nor is `arg` a
// result or a tap, read at the end). Later readers of `from` read `arg` instead.
bool Planner::computeInPlace(int from, int arg) {
  std::optional<size_t> writer;
  for (size_t s = 0; s < plan_.steps.size(); ++s)
    for (int b : plan_.steps[s].outputBuffers)
      if (b == from) {
        if (writer || plan_.hoisted[s]) return false;
        writer = s;
      }
  if (!writer) return false;
  Step& w = plan_.steps[*writer];
  // (Every output of a step with in-place inputs is written where those inputs are read.)
  const auto slot = std::find(w.outputBuffers.begin(), w.outputBuffers.end(), from);
  for (const auto& [first, last] : plan_.loops)
    if (*writer >= first && *writer <= last) return false;
  const size_t member = static_cast<size_t>(w.memberOfOutput(static_cast<size_t>(slot - w.outputBuffers.begin())));
  bool readsInPlace = false;
  for (size_t k : w.inPlaceInputs)
    readsInPlace = readsInPlace || (w.inputBuffers[k] == arg && static_cast<size_t>(w.memberOfInput(k)) == member);
  if (!readsInPlace || std::count(w.inputBuffers.begin(), w.inputBuffers.end(), arg) != 1) return false;
  for (size_t s = *writer + 1; s < plan_.steps.size(); ++s)
    for (int b : plan_.steps[s].inputBuffers)
      if (b == arg) return false;
  for (const Value* v : plan_.outputs)
    if (plan_.bufferOf.at(v) == arg) return false;
  for (const Value* v : plan_.taps)
    if (plan_.bufferOf.at(v) == arg) return false;
  *slot = arg;
  for (size_t s = *writer + 1; s < plan_.steps.size(); ++s)
    for (int& b : plan_.steps[s].inputBuffers)
      if (b == from) b = arg;
  for (auto& [value, b] : plan_.bufferOf)
    if (b == from) b = arg;
  plan_.bufferBytes[static_cast<size_t>(from)] = 0;  // no longer used
  ++plan_.stats.carriedInPlace;
  return true;
}

void Planner::planCarried(const Operation& terminator) {
  const size_t numBuffers = plan_.bufferBytes.size();
  std::vector<bool> perRunWrite(numBuffers, false), hoistedWrite(numBuffers, false), fixed(numBuffers, false);
  for (size_t s = 0; s < plan_.steps.size(); ++s)
    for (int b : plan_.steps[s].outputBuffers) (plan_.hoisted[s] ? hoistedWrite : perRunWrite)[static_cast<size_t>(b)] = true;
  for (int b : plan_.argBuffers) fixed[static_cast<size_t>(b)] = true;
  for (const auto& [id, lit] : plan_.constants) fixed[static_cast<size_t>(id)] = true;
  std::vector<bool> taken(numBuffers, false);  // the resultBuffer of an earlier carried result
  for (const CarriedResult& c : options_.carriedResults) {
    CarriedBuffer carried;
    carried.result = c.result;
    carried.argument = c.argument;
    carried.argBuffer = plan_.argBuffers[c.argument];
    const int from = plan_.bufferOf.at(plan_.outputs[c.result]);
    const auto f = static_cast<size_t>(from);
    if (from == carried.argBuffer) {
      carried.resultBuffer = from;  // the argument itself (or a reshape of it): unchanged
    } else if (options_.carryInPlace && f < numBuffers && perRunWrite[f] && !hoistedWrite[f] && !fixed[f] && !taken[f] &&
               computeInPlace(from, carried.argBuffer)) {
      carried.resultBuffer = carried.argBuffer;  // written over the argument by its last reader
      taken[f] = true;
    } else if (f < numBuffers && perRunWrite[f] && !hoistedWrite[f] && !fixed[f] && !taken[f]) {
      carried.resultBuffer = from;  // computed by this run: straight into the next buffer
      taken[f] = true;
    } else {
      // Not computed by the run, or already another argument's next value: copied at the end.
      // The copy is never hoisted (its output changes buffers every run).
      carried.resultBuffer = newBuffer(plan_.bufferBytes[static_cast<size_t>(carried.argBuffer)]);
      planCopy(terminator, from, carried.resultBuffer);
      plan_.hoisted.push_back(false);
      plan_.hoistedGroup.push_back(-1);
      plan_.prologueTemp.push_back(false);
      plan_.prologueOnlyArg.push_back(false);
      ++plan_.stats.carriedCopies;
    }
    plan_.carried.push_back(carried);
  }
  plan_.stats.carriedResults = static_cast<int>(plan_.carried.size());
}

void Planner::planCommJoins() {
  const size_t n = plan_.steps.size();
  plan_.commJoin.assign(n, -1);
  for (size_t s = 0; s < n; ++s) {
    const Step& c = plan_.steps[s];
    if (!c.comm) continue;
    std::vector<int> touched = c.inputBuffers;  // what a later step may not write
    touched.insert(touched.end(), c.outputBuffers.begin(), c.outputBuffers.end());
    if (c.workspaceBuffer >= 0) touched.push_back(c.workspaceBuffer);
    auto any = [](const std::vector<int>& buffers, const std::vector<int>& of) {
      for (int b : buffers)
        if (std::find(of.begin(), of.end(), b) != of.end()) return true;
      return false;
    };
    size_t join = s + 1;
    for (; join < n; ++join) {
      if (plan_.hoisted[join]) continue;
      const Step& t = plan_.steps[join];
      // Host, control and other synchronising steps (a grid, a dynamic root read on the host).
      if (t.control != Control::kNone || !t.kernel || (t.meetsPeers && !t.comm)) break;
      std::vector<int> written = t.outputBuffers;
      if (t.workspaceBuffer >= 0) written.push_back(t.workspaceBuffer);
      if (any(written, touched)) break;
      if (!t.comm && any(t.inputBuffers, c.outputBuffers)) break;
    }
    plan_.commJoin[s] = static_cast<int>(join);
  }
}

// Graph segments. A plan without host steps, control flow or collectives is one segment. A
// job's collectives (Step::comm) are not captured, though NCCL can be: each must hand back a Work
// (collectives.h CommKernel) whose wait is bounded and aborts the communicator when a peer dies,
// so that the run fails naming the rank instead of hanging; a collective inside a replayed graph
// has no such handle, and the graph's end could only be waited for as one unbounded stream
// synchronisation. So such a plan is cut into the runs of compute steps between them: each
// collective is issued on its own between two graph launches, and each join (Plan::commJoin)
// falls between segments, where the compute stream can wait for its event. A training step of
// thousands of kernels then costs a few dozen launches, as the plain step costs one: replayed
// kernels follow each other with less idle time on the device than launched ones. A grid step
// (meetsPeers without comm) synchronises on the host: no segments beside it.
void Planner::planGraphSegments() {
  const ExecutableStats& s = plan_.stats;
  if (s.hostSteps != 0 || s.controlFlowOps != 0 || plan_.steps.empty()) return;
  if (s.collectiveOps == 0) {
    plan_.graphSegments.push_back({0, plan_.steps.size()});
    return;
  }
  const size_t n = plan_.steps.size();
  std::vector<bool> joinAt(n + 1, false);
  for (size_t i = 0; i < n; ++i) {
    const Step& step = plan_.steps[i];
    if (step.meetsPeers && !step.comm) return;
    if (step.comm) joinAt[static_cast<size_t>(plan_.commJoin[i])] = true;
  }
  // A segment of fewer than two launched (not hoisted) steps saves nothing.
  auto flush = [&](size_t first, size_t end) {
    size_t launched = 0;
    for (size_t i = first; i < end; ++i) launched += plan_.hoisted[i] ? 0 : 1;
    if (launched >= 2) plan_.graphSegments.push_back({first, end});
  };
  size_t first = 0;
  for (size_t i = 0; i < n; ++i) {
    if (plan_.steps[i].comm) {
      flush(first, i);
      first = i + 1;
    } else if (joinAt[i] && i > first) {
      flush(first, i);
      first = i;
    }
  }
  flush(first, n);
}

Expected<Plan> Planner::build() {
  if (entry_.numRegions() == 0 || entry_.region(0).empty())
    return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " has no body");
  const Block& body = FuncOp(&entry_).body();
  for (size_t i = 0; i < body.numArguments(); ++i) {
    const Type& t = body.argument(i)->type();
    if (!t.isTensor() || !t.hasStaticShape() || t.elementType() == ElementType::kQuantized)
      return unimplemented("function @" + std::string(FuncOp(&entry_).symName()) + " argument #" + std::to_string(i) +
                           " of type " + t.toString() + ": the CUDA backend takes static-shape tensors");
    const int id = newBuffer(tensorBytes(t));
    plan_.bufferOf[body.argument(i)] = id;
    plan_.argBuffers.push_back(id);
  }
  plan_.declaredBound.assign(body.numArguments(), false);
  for (size_t i : options_.boundArguments) {
    if (i >= body.numArguments())
      return invalidArgument("CompileOptions::boundArguments names argument #" + std::to_string(i) + " of @" +
                             std::string(FuncOp(&entry_).symName()) + ", which has " +
                             std::to_string(body.numArguments()));
    plan_.declaredBound[i] = true;
  }
  WF_ASSIGN_OR_RETURN(plan_.resultCarried, checkCarriedResults(entry_, options_));

  // Taps keep buffers of their own, so they are found before fusion is planned.
  std::unordered_set<const Value*> tapped;
  std::vector<const Value*> tapValues;
  for (const std::string& name : options_.tapValues) {
    WF_ASSIGN_OR_RETURN(const Value* found, findEntryValue(entry_, name));
    tapValues.push_back(found);
    tapped.insert(found);
  }
  FusionPlan fusion;
  if (options_.fuse) {
    PhaseTimer phase("fusion");
    // Bound arguments that no carried result replaces keep their value from run to run.
    FusionOptions fusionOptions;
    for (size_t a : options_.boundArguments) {
      const bool carried = std::any_of(options_.carriedResults.begin(), options_.carriedResults.end(),
                                       [&](const CarriedResult& c) { return c.argument == a; });
      if (!carried && a < body.numArguments()) fusionOptions.constantArguments.insert(body.argument(a));
    }
    fusion = planFusion(body, tapped, fusionOptions);
  }
  std::unordered_set<const Value*> keep = tapped;
  for (const auto& op : body.operations())
    if (op->code() == OpCode::FuncReturn || op->code() == OpCode::Return)
      for (const Value* v : op->operands()) keep.insert(v);
  {
    PhaseTimer phase("channels-last layout");
    chooseChannelsLast(body, fusion, keep);
  }

  LowerContext lctx{*device_, options_};
  lctx.stats = &plan_.stats;
  {
    PhaseTimer phase("convolution epilogues (cuDNN graphs)");
    WF_RETURN_IF_ERROR(planConvolutionEpilogues(body, fusion, keep, lctx));
  }
  {
    PhaseTimer phase("product epilogues (cuBLASLt)");
    WF_RETURN_IF_ERROR(planDotEpilogues(body, fusion, keep, lctx));
  }
  const Operation* terminator = nullptr;
  std::optional<PhaseTimer> planningOps("ops");
  for (const auto& opPtr : body.operations()) {
    const Operation& op = *opPtr;
    if (op.code() == OpCode::FuncReturn || op.code() == OpCode::Return) {
      terminator = &op;
      break;
    }
    if (fusion.absorbed.count(&op) || epilogueProducers_.count(&op)) continue;
    if (auto it = fusion.groupOfRoot.find(&op); it != fusion.groupOfRoot.end()) {
      const FusionGroup& group = fusion.groups[static_cast<size_t>(it->second)];
      if (epilogues_.count(&group)) {
        PhaseTimer phase("library epilogues");
        WF_RETURN_IF_ERROR(planEpilogueStep(group));
        continue;
      }
      PhaseTimer phase("fused groups");
      WF_RETURN_IF_ERROR(planFusedGroup(group));
      continue;
    }
    PhaseTimer phase(op.name());
    WF_RETURN_IF_ERROR(planOp(op, lctx));
  }
  planningOps.reset();
  if (!terminator) return invalidArgument("function @" + std::string(FuncOp(&entry_).symName()) + " has no return");
  for (const Value* v : terminator->operands()) {
    if (!plan_.bufferOf.count(v)) return internalError(terminator->describe() + ": returned value has no buffer");
    plan_.outputs.push_back(v);
  }
  for (const Value* found : tapValues) {
    if (!plan_.bufferOf.count(found))
      return internalError("tap value '" + found->nameHint() + "' has no device buffer");
    plan_.taps.push_back(found);
  }
  // Workspaces are per-step buffers in the slot plan (Step::workspaceBuffer); this is the
  // largest one, for ExecutableStats.
  plan_.stats.workspaceBytes = lctx.workspaceBytes;
  {
    PhaseTimer scheduling("hoisting, multi-tensor steps");
    planHoisting();
    WF_RETURN_IF_ERROR(mergeMultiTensorSteps());
  }
  {
    PhaseTimer phase("generated kernels (NVRTC, kernel cache, load)");
    WF_RETURN_IF_ERROR(compileFusedKernels());
  }
  PhaseTimer scheduling("carried results, graph segments");
  planCarried(*terminator);
  planCommJoins();
  planGraphSegments();
  return std::move(plan_);
}

Expected<std::unique_ptr<OpKernel>> Planner::planGrid(const Operation& op) {
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
  processOptions.carriedResults.clear();
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
    Expected<std::unique_ptr<Executor>> executable = compileExecutor(device_, module_, fn, processOptions, process);
    if (!executable) {
      const Status& compiled = executable.status();
      return Status(compiled.code(), op.describe() + ": process " + process.self.toString() + " (@" +
                                         std::string(FuncOp(&fn).symName()) + "): " + compiled.message());
    }
    GridKernel::Process p;
    p.numInputs = FuncOp(&fn).body().numArguments();
    p.numOutputs = (*executable)->numResults();
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
    p.executable = std::move(*executable);
    grid->add(std::move(p));
  }
  if (nextInput != op.numOperands())
    return invalidArgument(op.describe() + ": " + std::to_string(op.numOperands()) +
                           " operands, but the programs take " + std::to_string(nextInput));
  if (nextOutput != op.numResults())
    return invalidArgument(op.describe() + ": " + std::to_string(op.numResults()) +
                           " results, but the programs return " + std::to_string(nextOutput));
  plan_.stats.gridProcesses += static_cast<int>(functions.size());
  return std::unique_ptr<OpKernel>(std::move(grid));
}

}  // namespace

Expected<Plan> planFunction(const std::shared_ptr<Device>& device, const Module& module, const Operation& entry,
                            const CompileOptions& options, const ProcessContext& process) {
  PhaseTimer phase("plan");
  return Planner(device, module, entry, options, process).build();
}

}  // namespace wf::cuda
