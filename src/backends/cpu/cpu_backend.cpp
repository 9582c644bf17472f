// The CPU Backend/Executable adapter over the interpreter (cpu_backend.h).
#include "backends/cpu/cpu_backend.h"

#include <cblas.h>

#include <chrono>
#include <optional>
#include <unordered_map>
#include <unordered_set>

#include "dist/host_collectives.h"
#include "dist/job.h"
#include "eval/interpreter.h"
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
                std::vector<CarriedResult> carried, std::vector<bool> resultCarried, std::shared_ptr<dist::Job> job)
      : job_(std::move(job)),
        module_(module),
        entry_(entry),
        taps_(std::move(taps)),
        recordTimings_(recordTimings),
        carried_(std::move(carried)),
        resultCarried_(std::move(resultCarried)) {
    size_t n = FuncOp(&entry).body().numArguments();
    bound_.resize(n);
    for (size_t i = 0; i < taps_.size(); ++i) tapIndex_[taps_[i]].push_back(i);
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
    std::vector<Literal> all;
    all.reserve(bound_.size());
    size_t next = 0;
    for (size_t i = 0; i < bound_.size(); ++i) {
      if (bound_[i]) {
        all.push_back(*bound_[i]);
      } else {
        WF_RETURN_IF_ERROR(checkArgument(i, args[next]));
        all.push_back(args[next++]);
      }
    }

    RunResult result;
    std::vector<std::optional<Literal>> captured(taps_.size());
    for (size_t i = 0; i < bound_.size(); ++i)
      if (auto it = tapIndex_.find(fn.body().argument(i)); it != tapIndex_.end())
        for (size_t t : it->second) captured[t] = all[i];

    EvalContext ctx;
    ctx.module = &module_;
    ctx.checks = checks_;
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
    // Timings: the time from the previous op of the entry body finishing to this one finishing,
    // so an op's nested regions and callees count towards it.
    using Clock = std::chrono::steady_clock;
    Clock::time_point last = Clock::now();
    const Block* body = &fn.body();
    if (!taps_.empty() || recordTimings_)
      ctx.onResult = [&](const Value& value, const Literal& literal) {
        if (auto it = tapIndex_.find(&value); it != tapIndex_.end())
          for (size_t t : it->second) captured[t] = literal;
        const Operation* op = value.definingOp();
        if (recordTimings_ && value.index() == 0 && op && op->parentBlock() == body) {
          Clock::time_point now = Clock::now();
          result.report.timings.push_back(
              {op->name(), op->location().toString(), std::chrono::duration<double, std::micro>(now - last).count()});
          last = now;
        }
      };
    WF_ASSIGN_OR_RETURN(std::vector<Literal> results, Interpreter::callFunction(entry_, std::move(all), ctx));
    for (size_t i = 0; i < taps_.size(); ++i) {
      if (!captured[i])
        return internalError("tap " + taps_[i]->nameHint() + " of @" + std::string(fn.symName()) +
                             " was not computed");
      result.taps.push_back(std::move(*captured[i]));
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

  // The interpreter runs the entry's ops one by one (their regions and callees inside them), so
  // its steps are those ops; the fields about kernels, fusion and device memory stay 0.
  ExecutableStats stats() const override {
    ExecutableStats s;
    s.carriedResults = static_cast<int>(carried_.size());
    for (const auto& op : FuncOp(&entry_).body().operations()) {
      if (op->code() == OpCode::Return || op->code() == OpCode::FuncReturn) continue;
      ++s.deviceSteps;
      if (op->code() == OpCode::While || op->code() == OpCode::If || op->code() == OpCode::Case) ++s.controlFlowOps;
    }
    return s;
  }
  void setCheckSink(CheckSink* sink) override { checks_ = sink; }

 private:
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
  std::unordered_map<const Value*, std::vector<size_t>> tapIndex_;  // a value may be tapped twice
  bool recordTimings_;
  std::vector<CarriedResult> carried_;  // CompileOptions::carriedResults
  std::vector<bool> resultCarried_;     // by result
  std::vector<std::optional<Literal>> bound_;
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
    return std::unique_ptr<Executable>(new CpuExecutable(module, entry, std::move(taps), options.recordTimings,
                                                         options.carriedResults, std::move(resultCarried),
                                                         options.job));
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
