// The CPU Backend/Executable adapter over the interpreter (cpu_backend.h).
#include "backends/cpu/cpu_backend.h"

#include <cblas.h>

#include <algorithm>
#include <chrono>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "dist/host_collectives.h"
#include "dist/job.h"
#include "backends/cpu/conv_fused.h"
#include "backends/cpu/matmul_fused.h"
#include "backends/cpu/plan.h"
#include "eval/dot_conv_util.h"
#include "eval/interpreter.h"
#include "support/phase_timer.h"
#include "support/thread_pool.h"

namespace wf {
namespace {

// Every op reachable from `fn` (its body, nested regions, and functions it calls) that has no
// CPU kernel, as "stablehlo.foo at file:line:col", once per op.
void collectUnsupported(const Module& module, const Operation& fn, std::unordered_set<const Operation*>& visited,
                        std::vector<std::string>& missing) {
  if (!visited.insert(&fn).second) return;
  const KernelRegistry& kernels = KernelRegistry::instance();
  std::vector<const Region*> regions;
  for (const auto& r : fn.regions()) regions.push_back(r.get());
  while (!regions.empty()) {
    const Region* region = regions.back();
    regions.pop_back();
    for (const auto& block : region->blocks()) {
      for (const auto& op : block->operations()) {
        if (op->code() == OpCode::Return || op->code() == OpCode::FuncReturn) continue;
        if (!kernels.find(op->code())) missing.push_back(op->describe());
        for (const auto& r : op->regions()) regions.push_back(r.get());
        if (op->code() == OpCode::FuncCall) {
          const Attribute* callee = op->attr("callee");
          if (callee && callee->kind() == Attribute::Kind::kSymbolRef)
            if (const Operation* target = module.lookupFunction(callee->stringValue()))
              collectUnsupported(module, *target, visited, missing);
        }
      }
    }
  }
}

Status configureThreads(int requested) {
  if (requested <= 0) return Status::ok();
  int running = requestNumThreads(requested);
  if (running != requested)
    return invalidArgument("cpu: numThreads = " + std::to_string(requested) +
                           ", but the host thread pool of this process already runs " + std::to_string(running) +
                           " threads; it is sized once, before the first run (or by WARPFORGE_NUM_THREADS)");
  openblas_set_num_threads(requested);  // OpenBLAS can be told any time
  return Status::ok();
}

class CpuExecutable : public Executable {
 public:
  CpuExecutable(const Module& module, const Operation& entry, std::vector<const Value*> taps, bool recordTimings,
                std::vector<CarriedResult> carried, std::vector<bool> resultCarried, cpu::CpuPlan plan,
                std::vector<size_t> declaredBound, std::shared_ptr<dist::Job> job)
      : job_(std::move(job)),
        module_(module),
        entry_(entry),
        taps_(std::move(taps)),
        recordTimings_(recordTimings),
        carried_(std::move(carried)),
        resultCarried_(std::move(resultCarried)),
        plan_(std::move(plan)) {
    size_t n = FuncOp(&entry).body().numArguments();
    bound_.resize(n);
    hoistedArgument_.assign(n, false);
    for (size_t i : declaredBound)
      if (i < n) hoistedArgument_[i] = true;
    for (const CarriedResult& c : carried_) hoistedArgument_[c.argument] = false;
    // Which of the body's transposes the dots read in place, decided once: the scan of the body
    // it takes had run for every transpose and every dot reading one, on every run (BERT-base:
    // about 230 scans of 1,400 ops a run). A tapped transpose is computed: its tap is its value.
    const EvalContext plain;
    const std::unordered_set<const Value*> tapped(taps_.begin(), taps_.end());
    for (const auto& op : FuncOp(&entry).body().operations())
      if (op->code() == OpCode::Transpose)
        transposeFolds_[op.get()] = !tapped.count(op->result(0)) && dotconv::transposeFoldsIntoDots(*op, plain);
  }

  Status bindArgument(size_t index, const Literal& value) override {
    FuncOp fn(&entry_);
    if (index >= bound_.size())
      return invalidArgument("bind: @" + std::string(fn.symName()) + " has " + std::to_string(bound_.size()) +
                             " arguments, got index " + std::to_string(index));
    WF_RETURN_IF_ERROR(checkArgument(index, value));
    if (bound_[index]) bytesBound_ -= bound_[index]->sizeBytes();
    bound_[index] = value.clone();  // the contract copies; the caller may change or free `value`
    bytesBound_ += value.sizeBytes();
    if (hoistedArgument_[index]) prologueDirty_ = true;  // hoisted work reads it: redo it before the next run
    return Status::ok();
  }

  Expected<RunResult> run(std::span<const Literal> args) override {
    FuncOp fn(&entry_);
    for (const CarriedResult& c : carried_)
      if (!bound_[c.argument])
        return invalidArgument("@" + std::string(fn.symName()) + " argument #" + std::to_string(c.argument) +
                               " is carried (CompileOptions::carriedResults) but was not bound");
    size_t unbound = 0;
    for (const auto& b : bound_) unbound += b ? 0 : 1;
    if (args.size() != unbound)
      return invalidArgument("@" + std::string(fn.symName()) + ": expected " + std::to_string(unbound) +
                             " unbound arguments, got " + std::to_string(args.size()));
    const Block& body = fn.body();
    std::vector<Literal> all;
    all.reserve(bound_.size());
    size_t next = 0;
    for (size_t i = 0; i < bound_.size(); ++i) {
      if (bound_[i]) {
        all.push_back(*bound_[i]);
      } else {
        if (hoistedArgument_[i])
          return invalidArgument("@" + std::string(fn.symName()) + " argument #" + std::to_string(i) +
                                 " is declared bound (CompileOptions::boundArguments) but was not bound");
        WF_RETURN_IF_ERROR(checkArgument(i, args[next]));
        all.push_back(args[next++]);
      }
    }
    if (prologueDirty_) WF_RETURN_IF_ERROR(runPrologue());

    RunResult result;
    ValueScope scope(hoisted_.get());
    for (size_t i = 0; i < all.size(); ++i) scope.bind(body.argument(i), all[i]);
    EvalContext ctx;
    ctx.module = &module_;
    ctx.checks = checks_;
    ctx.transposeFolds = &transposeFolds_;
    // One rank of a job: this process is replica `rank` of WORLD_SIZE.
    std::optional<dist::HostCollectives> collectives;
    std::optional<dist::ProcessGridRunner> gridRunner;
    if (job_) {
      collectives.emplace(job_->worldPtr(), job_->storePtr(), 1, std::vector<const Operation*>{},
                          dist::nextRunScope("run"));
      gridRunner.emplace(job_);
      ctx.replicaId = job_->world().rank();
      ctx.numReplicas = job_->world().size();
      ctx.rendezvous = &*collectives;
      ctx.gridRunner = &*gridRunner;
    }
    using Clock = std::chrono::steady_clock;
    Clock::time_point last = Clock::now();
    for (const cpu::Step& step : plan_.steps) {
      WF_RETURN_IF_ERROR(runStep(step, scope, ctx));
      if (recordTimings_) {
        Clock::time_point now = Clock::now();
        result.report.timings.push_back(
            {stepName(step), step.op->location().toString(), std::chrono::duration<double, std::micro>(now - last).count()});
        last = now;
      }
    }
    std::vector<Literal> results;
    const Operation& terminator = *body.operations().back();
    for (const Value* v : terminator.operands()) {
      const Literal* l = scope.lookup(v);
      if (!l) return internalError("@" + std::string(fn.symName()) + ": result " + v->nameHint() + " was not computed");
      results.push_back(*l);
    }
    for (const Value* t : taps_) {
      const Literal* l = scope.lookup(t);
      if (!l) return internalError("tap " + t->nameHint() + " of @" + std::string(fn.symName()) + " was not computed");
      result.taps.push_back(*l);
    }
    if (results.size() != resultCarried_.size())
      return internalError("@" + std::string(fn.symName()) + " returned " + std::to_string(results.size()) +
                           " results, its type says " + std::to_string(resultCarried_.size()));
    // Carried results become the bound values (nothing above failed, so the state moves as a
    // whole). A result may share its storage with what the caller holds (an argument it passed,
    // a result or tap returned to it), which it may change later: such a result is kept as a copy.
    std::unordered_set<const std::byte*> callerHeld;
    for (const Literal& a : args) callerHeld.insert(a.data());
    for (size_t r = 0; r < results.size(); ++r)
      if (!resultCarried_[r]) callerHeld.insert(results[r].data());
    for (const Literal& tap : result.taps) callerHeld.insert(tap.data());
    for (const CarriedResult& c : carried_) {
      Literal next = results[c.result];
      if (next.sizeBytes() > 0 && callerHeld.count(next.data())) next = next.clone();
      bytesBound_ += next.sizeBytes();
      bytesBound_ -= bound_[c.argument]->sizeBytes();
      bound_[c.argument] = std::move(next);
    }
    for (size_t r = 0; r < results.size(); ++r)
      if (!resultCarried_[r]) result.outputs.push_back(std::move(results[r]));
    return result;
  }

  Expected<Literal> readArgument(size_t index) override {
    FuncOp fn(&entry_);
    if (index >= bound_.size())
      return invalidArgument("readArgument: @" + std::string(fn.symName()) + " has " +
                             std::to_string(bound_.size()) + " arguments, got index " + std::to_string(index));
    if (!bound_[index])
      return invalidArgument("readArgument: argument #" + std::to_string(index) + " of @" +
                             std::string(fn.symName()) + " is not bound");
    return bound_[index]->clone();
  }

  size_t deviceBytesInUse() const override { return bytesBound_; }
  std::string deviceName() const override { return "cpu"; }

  // A run executes the plan's steps (cpu/plan.h): ops, fused elementwise groups and fused
  // convolutions; the prologue holds the hoisted ones.
  ExecutableStats stats() const override {
    ExecutableStats s;
    s.carriedResults = static_cast<int>(carried_.size());
    s.deviceSteps = plan_.stats.steps;
    s.hoistedSteps = plan_.stats.hoistedSteps;
    s.fusedKernels = plan_.stats.fusedGroups + plan_.stats.fusedConvs + plan_.stats.fusedMatmuls;
    s.fusedOps = plan_.stats.fusedOps + plan_.stats.fusedConvOps;
    for (const auto& mm : plan_.fusedMatmuls) s.fusedOps += mm->bias ? 2 : 1;
    for (const cpu::Step& step : plan_.steps)
      if (step.kind == cpu::Step::Kind::kOp &&
          (step.op->code() == OpCode::While || step.op->code() == OpCode::If || step.op->code() == OpCode::Case))
        ++s.controlFlowOps;
    return s;
  }
  void setCheckSink(CheckSink* sink) override { checks_ = sink; }

  const cpu::CpuPlan& plan() const { return plan_; }

 private:
  static std::string stepName(const cpu::Step& step) {
    switch (step.kind) {
      case cpu::Step::Kind::kFusedElementwise: return "fused_elementwise";
      case cpu::Step::Kind::kFusedConv: return "fused_convolution";
      case cpu::Step::Kind::kFusedMatmul: return "fused_matmul";
      case cpu::Step::Kind::kOp: break;
    }
    return step.op->name();
  }

  // Runs one step in `scope`, binds what it computes and frees what no later step reads.
  Status runStep(const cpu::Step& step, ValueScope& scope, EvalContext& ctx) {
    auto lookup = [&](const Value* v) -> Expected<const Literal*> {
      const Literal* l = scope.lookup(v);
      if (!l) return internalError(step.op->describe() + ": operand " + v->nameHint() + " has no value");
      return l;
    };
    switch (step.kind) {
      case cpu::Step::Kind::kOp: {
        const Operation& op = *step.op;
        std::vector<Literal> operands;
        operands.reserve(op.numOperands());
        for (const Value* v : op.operands()) {
          WF_ASSIGN_OR_RETURN(const Literal* l, lookup(v));
          operands.push_back(*l);
        }
        const Kernel* kernel = KernelRegistry::instance().find(op.code());
        if (!kernel) return unimplemented(op.describe() + ": no CPU kernel for this op");
        ctx.scope = &scope;
        Expected<std::vector<Literal>> results = (*kernel)(op, operands, ctx);
        ctx.scope = nullptr;
        if (!results) {
          const Status& s = results.status();
          if (s.message().find(op.location().toString()) != std::string::npos) return s;
          return s.withContext(op.describe());
        }
        if (results->size() != op.numResults())
          return internalError(op.describe() + ": kernel returned " + std::to_string(results->size()) +
                               " results, op has " + std::to_string(op.numResults()));
        for (size_t i = 0; i < results->size(); ++i) scope.bind(op.result(i), std::move((*results)[i]));
        break;
      }
      case cpu::Step::Kind::kFusedElementwise: {
        const cpu::FusedElementwise& g = plan_.fusedElementwise[static_cast<size_t>(step.fused)];
        std::vector<const Literal*> leaves;
        for (const cpu::FusedLeaf& leaf : g.leaves) {
          WF_ASSIGN_OR_RETURN(const Literal* l, lookup(leaf.value));
          leaves.push_back(l);
        }
        WF_ASSIGN_OR_RETURN(std::vector<Literal> outs, cpu::runFusedElementwise(g, leaves));
        for (size_t i = 0; i < outs.size(); ++i) scope.bind(step.outputs[i], std::move(outs[i]));
        break;
      }
      case cpu::Step::Kind::kFusedConv: {
        const cpu::FusedConv& conv = *plan_.fusedConvs[static_cast<size_t>(step.fused)];
        WF_ASSIGN_OR_RETURN(const Literal* in, lookup(conv.input));
        const Literal* residual = nullptr;
        // A residual nothing reads after this step, taken out of the scope: the convolution may
        // add into it in place (FusedConv::run).
        Literal dead;
        if (conv.residual && conv.residual != conv.input &&
            std::find(step.dead.begin(), step.dead.end(), conv.residual) != step.dead.end())
          dead = scope.take(conv.residual);
        if (dead.data()) {
          residual = &dead;
        } else if (conv.residual) {
          WF_ASSIGN_OR_RETURN(residual, lookup(conv.residual));
        }
        WF_ASSIGN_OR_RETURN(Literal out, conv.run(*in, residual, dead.data() ? &dead : nullptr));
        scope.bind(conv.result, std::move(out));
        break;
      }
      case cpu::Step::Kind::kFusedMatmul: {
        const cpu::FusedMatmul& mm = *plan_.fusedMatmuls[static_cast<size_t>(step.fused)];
        WF_ASSIGN_OR_RETURN(const Literal* x, lookup(mm.lhs));
        WF_ASSIGN_OR_RETURN(Literal out, mm.run(*x));
        scope.bind(mm.result, std::move(out));
        break;
      }
    }
    for (const Value* v : step.dead) scope.bind(v, Literal());
    return Status::ok();
  }

  // Runs the hoisted steps on the bound arguments and prepares the fused convolutions.
  Status runPrologue() {
    const Block& body = FuncOp(&entry_).body();
    auto scope = std::make_unique<ValueScope>();
    for (size_t i = 0; i < bound_.size(); ++i)
      if (hoistedArgument_[i] && bound_[i]) scope->bind(body.argument(i), *bound_[i]);
    EvalContext ctx;
    ctx.module = &module_;
    ctx.checks = checks_;
    // Hoisted values stay for every later run and any step may read them: no kernel may hand
    // out a value only its own readers understand (a folded broadcast or transpose).
    ctx.onResult = [](const Value&, const Literal&) {};
    for (const cpu::Step& step : plan_.prologue) WF_RETURN_IF_ERROR(runStep(step, *scope, ctx));
    const ValueScope& hoisted = *scope;
    // In step order: a convolution whose operand arrives blocked is prepared after its producer.
    auto lookup = [&](const Value* v) { return hoisted.lookup(v); };
    for (const cpu::Step& step : plan_.steps) {
      if (step.kind == cpu::Step::Kind::kFusedConv)
        WF_RETURN_IF_ERROR(plan_.fusedConvs[static_cast<size_t>(step.fused)]->prepare(lookup));
      if (step.kind == cpu::Step::Kind::kFusedMatmul)
        WF_RETURN_IF_ERROR(plan_.fusedMatmuls[static_cast<size_t>(step.fused)]->prepare(lookup));
    }
    hoisted_ = std::move(scope);
    prologueDirty_ = false;
    return Status::ok();
  }

  Status checkArgument(size_t index, const Literal& value) const {
    FuncOp fn(&entry_);
    const Type& declared = fn.body().argument(index)->type();
    const Type& actual = value.type();
    bool ok = declared.isTensor() ? actual.isTensor() && actual.elementType() == declared.elementType() &&
                                        actual.rank() == declared.rank()
                                  : actual == declared;
    for (int64_t d = 0; ok && declared.isTensor() && d < declared.rank(); ++d)
      ok = declared.dim(d) == kDynamic || declared.dim(d) == actual.dim(d);
    if (!ok)
      return invalidArgument("@" + std::string(fn.symName()) + " argument #" + std::to_string(index) + " expects " +
                             declared.toString() + ", got " + actual.toString());
    return Status::ok();
  }

  std::shared_ptr<dist::Job> job_;  // CompileOptions::job
  const Module& module_;
  const Operation& entry_;
  std::vector<const Value*> taps_;
  bool recordTimings_;
  std::vector<CarriedResult> carried_;  // CompileOptions::carriedResults
  std::vector<bool> resultCarried_;     // by result
  cpu::CpuPlan plan_;
  std::unordered_map<const Operation*, bool> transposeFolds_;  // EvalContext::transposeFolds
  std::vector<std::optional<Literal>> bound_;
  std::vector<bool> hoistedArgument_;  // declared bound and not carried: hoisted work may read it
  std::unique_ptr<ValueScope> hoisted_ = std::make_unique<ValueScope>();  // the prologue's values
  bool prologueDirty_ = true;
  size_t bytesBound_ = 0;
  CheckSink* checks_ = nullptr;  // setCheckSink(): where check.* ops report; null makes them errors
};

class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }

  Expected<std::unique_ptr<Executable>> compile(const Module& module, const Operation& entry,
                                                const CompileOptions& options) override {
    if (entry.code() != OpCode::FuncFunc || entry.numRegions() == 0 || entry.region(0).empty())
      return invalidArgument("cpu: compile needs a func.func with a body, got " + entry.describe());
    PhaseTimer phase("compile (cpu)");
    std::string fnName = "@" + std::string(FuncOp(&entry).symName());
    // First: looking up kernels below may start the thread pool.
    WF_RETURN_IF_ERROR(configureThreads(options.numThreads));
    std::unordered_set<const Operation*> visited;
    std::vector<std::string> missing;
    collectUnsupported(module, entry, visited, missing);
    if (!missing.empty()) {
      std::string list;
      for (size_t i = 0; i < missing.size() && i < 20; ++i) list += "\n  " + missing[i];
      if (missing.size() > 20) list += "\n  ... and " + std::to_string(missing.size() - 20) + " more";
      return unimplemented("cpu: " + fnName + " uses " + std::to_string(missing.size()) +
                           " op(s) without a CPU kernel:" + list);
    }
    std::vector<const Value*> taps;
    for (const std::string& name : options.tapValues) {
      WF_ASSIGN_OR_RETURN(const Value* v, findEntryValue(entry, name));
      taps.push_back(v);
    }
    WF_ASSIGN_OR_RETURN(std::vector<bool> resultCarried, checkCarriedResults(entry, options));
    if (options.job && options.job->world().backend() != "gloo")
      return invalidArgument("cpu: a job's host collectives need a gloo communicator, this job's is " +
                             options.job->world().backend());
    WF_ASSIGN_OR_RETURN(cpu::CpuPlan plan, cpu::planCpu(module, entry, options, taps));
    return std::unique_ptr<Executable>(new CpuExecutable(module, entry, std::move(taps), options.recordTimings,
                                                         options.carriedResults, std::move(resultCarried),
                                                         std::move(plan), options.boundArguments, options.job));
  }
};

}  // namespace

std::unique_ptr<Backend> makeCpuBackend() { return std::make_unique<CpuBackend>(); }

void registerCpuBackend() {
  registerBackend("cpu", [](const DeviceSpec& device) -> Expected<std::unique_ptr<Backend>> {
    if (device.ordinal != 0)
      return invalidArgument("the cpu device has ordinal 0 only, got " + device.toString());
    return makeCpuBackend();
  });
}

}  // namespace wf
