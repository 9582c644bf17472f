#include "train/trainer.h"

#include <cmath>
#include <filesystem>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "dist/gloo_communicator.h"
#include "dist/job.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "stablehlo/parser.h"
#include "transforms/refine_shapes.h"
#include "support/phase_timer.h"

namespace wf::train {

namespace {

bool isFloatLiteral(const Literal& l) { return isFloat(l.elementType()); }

bool allFinite(const Literal& l) {
  if (!isFloatLiteral(l)) return true;
  for (int64_t i = 0; i < l.numElements(); ++i)
    if (!std::isfinite(l.getDouble(i))) return false;
  return true;
}

Status checkAgainst(const Literal& value, const Type& expected, const std::string& what) {
  if (value.type() != expected)
    return invalidArgument(what + " is " + value.type().toString() + ", the program takes " + expected.toString());
  return Status::ok();
}

}  // namespace

Trainer::~Trainer() = default;

Expected<std::unique_ptr<Trainer>> Trainer::open(const std::string& packageDir, const TrainerOptions& options) {
  std::unique_ptr<Trainer> t(new Trainer());
  {
    PhaseTimer phase("open training package");
    WF_ASSIGN_OR_RETURN(t->package_, TrainingPackage::open(packageDir));
  }
  t->options_ = options;
  {
    PhaseTimer phase("load the train-step program");
    WF_ASSIGN_OR_RETURN(t->module_, t->package_.buildTrainModule());
  }
  WF_ASSIGN_OR_RETURN(t->backend_, createBackend(options.device));

  const TrainingPackage& p = t->package_;
  if (options.accumulation < 0) return invalidArgument("gradient accumulation: the micro-batch count must be positive");
  t->accumulation_ = options.accumulation > 0 ? options.accumulation : p.accumulationSteps();
  const bool accumulate = t->accumulation_ > 1;
  const std::shared_ptr<dist::Job>& job = options.compile.job;
  if (job) {
    // Data parallel: the DDP step, and a host communicator for what the trainer itself exchanges.
    DataParallelOptions dp = options.dataParallel;
    dp.worldSize = job->world().size();
    PhaseTimer phase("data-parallel steps");
    WF_RETURN_IF_ERROR(addDataParallelSteps(p, t->module_, dp));
    t->buckets_ = train::gradientBuckets(p, dp);
    if (job->world().backend() == "gloo") {
      t->hostComm_ = job->worldPtr();
    } else {
      // Beside an NCCL world: a Gloo communicator of the job's store (its keys, "gloo/world", are
      // the job's only Gloo world: one trainer per process of an NCCL job).
      WF_ASSIGN_OR_RETURN(t->hostComm_,
                          dist::createGlooCommunicator(job->storePtr(), job->env().rank, job->env().worldSize,
                                                       job->world().timeout(), job->env().masterAddr));
    }
  }
  CompileOptions co = options.compile;
  co.boundArguments.clear();
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) co.boundArguments.push_back(i);
  for (size_t s = 0; s < p.state().size(); ++s) co.boundArguments.push_back(p.trainStepStateArgument(s));
  if (accumulate)
    for (size_t i = 0; i < p.paramArguments().size(); ++i) co.boundArguments.push_back(p.accumulatorArgument(i));
  co.carriedResults.clear();
  for (auto [result, argument] : accumulate ? p.trainStepAccumulateCarried() : p.trainStepCarried())
    co.carriedResults.push_back({result, argument});
  co.carryInPlace = options.updateInPlace;
  const char* entryName = accumulate ? (job ? "train_step_accumulate_dp" : "train_step_accumulate")
                                     : (job ? "train_step_dp" : "train_step");
  const Operation* declared = t->module_.lookupFunction(entryName);
  if (!declared)
    return notFound(p.dir() + ": the train-step program has no @" + entryName +
                    " (written before gradient accumulation): export the package again");
  // The train step calls the value-and-grad function, then the update: compiled as one flat
  // function (calls inlined), so that a backend fuses and schedules across the two, and a
  // profile names the ops rather than the calls.
  // Composites the backend has a kernel for (fused attention) stay whole.
  const std::vector<Type> argTypes = FuncOp(declared).functionType().inputs;
  RefineShapesOptions flatten;
  flatten.keepComposite = [backend = t->backend_.get()](std::string_view n) { return backend->lowersComposite(n); };
  WF_ASSIGN_OR_RETURN(t->flatTrainStep_, refineShapes(t->module_, entryName, argTypes, flatten));
  const Operation* entry = t->flatTrainStep_->lookupFunction(entryName);
  if (!entry) return internalError(std::string("inlining lost @") + entryName);
  WF_ASSIGN_OR_RETURN(t->trainStep_, t->backend_->compile(*t->flatTrainStep_, *entry, co));
  PhaseTimer phase("bind the initial state");
  WF_RETURN_IF_ERROR(t->bindInitialState());
  return t;
}

std::string Trainer::deviceName() const { return trainStep_->deviceName(); }

int Trainer::rank() const { return hostComm_ ? hostComm_->rank() : 0; }

int Trainer::worldSize() const { return hostComm_ ? hostComm_->size() : 1; }

Status Trainer::gatherLosses(StepResult& r) {
  if (!hostComm_) return Status::ok();
  double mine = r.loss;
  r.rankLosses.assign(static_cast<size_t>(hostComm_->size()), 0.0);
  Status s = hostComm_->allGather(&mine, r.rankLosses.data(), 1, dist::DataType::kFloat64)->wait();
  return s.isOk() ? s : s.withContext("step " + std::to_string(r.step) + ": gathering the ranks' losses");
}

Status Trainer::otherRanksFinite(const StepResult& r) {
  // The all-reduce spreads a non-finite gradient to every rank's weights: every rank stops at the
  // step, naming the rank whose loss was not finite.
  for (size_t k = 0; k < r.rankLosses.size(); ++k)
    if (!std::isfinite(r.rankLosses[k]))
      return invalidArgument("step " + std::to_string(r.step) + ": the loss of rank " + std::to_string(k) + " is " +
                             std::to_string(r.rankLosses[k]) + " (the averaged gradients carry it to every rank)");
  return Status::ok();
}

Status Trainer::barrier() { return hostComm_ ? hostComm_->barrierSync() : Status::ok(); }

Status Trainer::broadcastFromRankZero(std::vector<Literal*> tensors) {
  if (!hostComm_) return Status::ok();
  PhaseTimer phase("broadcast from rank 0");
  // Issued together, waited in order: the communicator runs them in issue order on every rank.
  std::vector<std::unique_ptr<dist::Work>> works;
  for (Literal* l : tensors)
    works.push_back(hostComm_->broadcast(l->data(), l->sizeBytes(), dist::DataType::kUInt8, 0));
  Status first = Status::ok();
  for (auto& w : works) {
    Status s = w->wait();
    if (first.isOk() && !s.isOk()) first = s;
  }
  return first.isOk() ? first : first.withContext("broadcasting the initial weights and optimizer state from rank 0");
}

size_t Trainer::deviceBytesInUse() const {
  size_t bytes = trainStep_->deviceBytesInUse();
  if (valueAndGrad_) bytes += valueAndGrad_->deviceBytesInUse();
  if (eval_) bytes += eval_->deviceBytesInUse();
  return bytes;
}

Status Trainer::bindInitialState() {
  const TrainingPackage& p = package_;
  std::set<size_t> carried;
  for (auto [result, argument] : p.trainStepCarried()) carried.insert(argument);
  fixedValues_.clear();
  const std::string wpath = p.path(p.weightsFile());
  WF_ASSIGN_OR_RETURN(SafetensorsFile weights, readSafetensors(wpath));
  const std::string spath = p.path(p.stateFile());
  WF_ASSIGN_OR_RETURN(SafetensorsFile state, readSafetensors(spath));
  // Every tensor checked before anything is bound or sent.
  std::vector<Literal*> initial;
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    const LossArgument& a = p.lossArguments()[i];
    Literal* w = weights.find(a.name);
    if (!w) return notFound(wpath + ": no tensor '" + a.name + "' (a " + a.kind + " of the loss program)");
    WF_RETURN_IF_ERROR(checkAgainst(*w, Type::tensor(a.shape, a.dtype), wpath + ": '" + a.name + "'"));
    initial.push_back(w);
  }
  for (size_t s = 0; s < p.state().size(); ++s) {
    const StateTensor& st = p.state()[s];
    Literal* v = state.find(st.name);
    if (!v) return notFound(spath + ": no optimizer state tensor '" + st.name + "'");
    WF_RETURN_IF_ERROR(checkAgainst(*v, Type::tensor(st.shape, st.dtype), spath + ": '" + st.name + "'"));
    initial.push_back(v);
  }
  Literal* stepCount = state.find("step");
  if (stepCount) initial.push_back(stepCount);
  // Data parallel: rank 0's weights and state on every rank (as DDP's constructor broadcasts the
  // module's parameters and buffers), so that ranks that read different files still agree.
  WF_RETURN_IF_ERROR(broadcastFromRankZero(initial));
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    const Literal& w = *initial[i - p.numBatchArguments()];
    if (static_cast<int64_t>(i) == p.dropoutSwitchArgument()) {
      Literal on = Literal::scalarInt(ElementType::kI1, options_.dropout ? 1 : 0);
      WF_RETURN_IF_ERROR(trainStep_->bindArgument(i, on));
      fixedValues_[i] = std::move(on);
      continue;
    }
    WF_RETURN_IF_ERROR(trainStep_->bindArgument(i, w));
    if (!carried.count(i)) fixedValues_[i] = w;
  }
  const size_t numWeights = p.lossArguments().size() - p.numBatchArguments();
  for (size_t s = 0; s < p.state().size(); ++s)
    WF_RETURN_IF_ERROR(trainStep_->bindArgument(p.trainStepStateArgument(s), *initial[numWeights + s]));
  stepsDone_ = stepCount ? stepCount->getInt(0) : 0;
  evalWeightsStale_ = true;
  return clearAccumulators();
}

Status Trainer::nonFiniteLoss(const StepResult& r) {
  auto first = firstNonFinite();
  std::string where = first && !first->empty() ? "; the first weight or state tensor that is not finite: '" + *first + "'"
                                              : "; every weight and state tensor is still finite";
  return invalidArgument("step " + std::to_string(r.step) + ": the loss is " + std::to_string(r.loss) + where);
}

Status Trainer::clearAccumulators() {
  if (accumulation_ <= 1) return Status::ok();
  const TrainingPackage& p = package_;
  for (size_t i = 0; i < p.paramArguments().size(); ++i) {
    const LossArgument& a = p.lossArguments()[p.paramArguments()[i]];
    WF_RETURN_IF_ERROR(trainStep_->bindArgument(p.accumulatorArgument(i), Literal::zeros(Type::tensor(a.shape, a.dtype))));
  }
  return Status::ok();
}

Status Trainer::checkBatch(std::span<const Literal> batch) const {
  const TrainingPackage& p = package_;
  if (batch.size() != p.numBatchArguments())
    return invalidArgument("the batch has " + std::to_string(batch.size()) + " tensors, the loss program takes " +
                           std::to_string(p.numBatchArguments()));
  for (size_t i = 0; i < batch.size(); ++i) {
    const LossArgument& a = p.lossArguments()[i];
    WF_RETURN_IF_ERROR(checkAgainst(batch[i], Type::tensor(a.shape, a.dtype), "batch tensor '" + a.name + "'"));
  }
  return Status::ok();
}

Expected<StepResult> Trainer::step(std::span<const std::vector<Literal>> microBatches) {
  if (accumulation_ <= 1) {
    if (microBatches.size() != 1)
      return invalidArgument("step: " + std::to_string(microBatches.size()) +
                             " micro-batches given, the trainer makes an update per batch (no gradient accumulation)");
    return step(std::span<const Literal>(microBatches[0]));
  }
  if (!halfUpdated_.empty()) return invalidArgument(halfUpdated_);
  const int64_t k = accumulation_;
  if (static_cast<int64_t>(microBatches.size()) != k)
    return invalidArgument("step: " + std::to_string(microBatches.size()) + " micro-batches given, an update takes " +
                           std::to_string(k));
  for (size_t i = 0; i < microBatches.size(); ++i)
    if (Status s = checkBatch(microBatches[i]); !s.isOk()) return s.withContext("micro-batch " + std::to_string(i));
  StepResult r;
  r.step = stepsDone_ + 1;
  r.lrs = package_.schedule().lrAt(r.step);
  Literal lr = Literal::zeros(Type::tensor({static_cast<int64_t>(r.lrs.size())}, ElementType::kF32));
  for (size_t g = 0; g < r.lrs.size(); ++g) lr.setDouble(static_cast<int64_t>(g), r.lrs[g]);
  for (int64_t i = 0; i < k; ++i) {
    std::vector<Literal> args(microBatches[static_cast<size_t>(i)].begin(), microBatches[static_cast<size_t>(i)].end());
    args.push_back(Literal::scalarInt(ElementType::kSI64, r.step));
    args.push_back(lr);
    args.push_back(Literal::scalarInt(ElementType::kSI64, i));
    args.push_back(Literal::scalarInt(ElementType::kSI64, k));
    auto run = trainStep_->run(args);
    if (!run) {
      if (trainStep_->stats().carriedInPlace > 0)
        halfUpdated_ = "step " + std::to_string(r.step) + " failed after it may have updated weights in place (" +
                       run.status().message() + "); load a checkpoint to go on";
      Status cleared = clearAccumulators();
      Status s = run.status().withContext("step " + std::to_string(r.step) + ", micro-batch " + std::to_string(i));
      return cleared.isOk() ? s : s.withContext("and clearing the gradient accumulators failed: " + cleared.message());
    }
    if (run->outputs.empty()) return internalError("train_step_accumulate returned no loss");
    r.microLosses.push_back(run->outputs[0].getDouble(0));
    r.report = std::move(run->report);
  }
  stepsDone_ = r.step;
  evalWeightsStale_ = true;
  r.loss = 0;
  for (double l : r.microLosses) r.loss += l / static_cast<double>(k);
  WF_RETURN_IF_ERROR(gatherLosses(r));
  if (!std::isfinite(r.loss)) return nonFiniteLoss(r);
  WF_RETURN_IF_ERROR(otherRanksFinite(r));
  return r;
}

Expected<StepResult> Trainer::step(std::span<const Literal> batch) {
  if (!halfUpdated_.empty()) return invalidArgument(halfUpdated_);
  if (accumulation_ > 1)
    return invalidArgument("step: the trainer accumulates " + std::to_string(accumulation_) +
                           " micro-batches per update; give them all");
  WF_RETURN_IF_ERROR(checkBatch(batch));
  StepResult r;
  r.step = stepsDone_ + 1;
  r.lrs = package_.schedule().lrAt(r.step);
  std::vector<Literal> args(batch.begin(), batch.end());
  args.push_back(Literal::scalarInt(ElementType::kSI64, r.step));
  Literal lr = Literal::zeros(Type::tensor({static_cast<int64_t>(r.lrs.size())}, ElementType::kF32));
  for (size_t g = 0; g < r.lrs.size(); ++g) lr.setDouble(static_cast<int64_t>(g), r.lrs[g]);  // rounded as torch rounds the scalar
  args.push_back(std::move(lr));
  auto run = trainStep_->run(args);
  if (!run) {
    if (trainStep_->stats().carriedInPlace > 0)
      halfUpdated_ = "step " + std::to_string(r.step) + " failed after it may have updated weights in place (" +
                     run.status().message() + "); load a checkpoint to go on";
    return run.status().withContext("step " + std::to_string(r.step));
  }
  stepsDone_ = r.step;
  evalWeightsStale_ = true;
  if (run->outputs.empty()) return internalError("train_step returned no loss");
  r.loss = run->outputs[0].getDouble(0);
  r.microLosses = {r.loss};
  r.report = std::move(run->report);
  WF_RETURN_IF_ERROR(gatherLosses(r));
  if (!std::isfinite(r.loss)) return nonFiniteLoss(r);
  WF_RETURN_IF_ERROR(otherRanksFinite(r));
  return r;
}

Expected<Literal> Trainer::readBound(size_t trainStepArgument) {
  auto fixed = fixedValues_.find(trainStepArgument);
  if (fixed != fixedValues_.end()) return fixed->second;
  return trainStep_->readArgument(trainStepArgument);
}

Expected<std::vector<Literal>> Trainer::valueAndGrad(std::span<const Literal> batch) {
  WF_RETURN_IF_ERROR(checkBatch(batch));
  const TrainingPackage& p = package_;
  if (!valueAndGrad_) {
    CompileOptions co = options_.compile;
    co.job = nullptr;  // this rank's own gradients (before any all-reduce)
    co.boundArguments.clear();
    for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) co.boundArguments.push_back(i);
    co.carriedResults.clear();
    const Operation* entry = module_.lookupFunction("loss_value_and_grad");
    WF_ASSIGN_OR_RETURN(valueAndGrad_, backend_->compile(module_, *entry, co));
  }
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    WF_ASSIGN_OR_RETURN(Literal w, readBound(p.valueArgument(i)));
    WF_RETURN_IF_ERROR(valueAndGrad_->bindArgument(i, w));
  }
  WF_ASSIGN_OR_RETURN(RunResult r, valueAndGrad_->run(batch));
  return std::move(r.outputs);
}

Expected<std::vector<Literal>> Trainer::evaluate(std::span<const Literal> evalBatch) {
  const TrainingPackage& p = package_;
  if (!p.hasEval()) return notFound(p.dir() + ": the package has no eval program (training.eval)");
  if (!eval_) {
    const std::string path = p.path(p.evalFile());
    WF_ASSIGN_OR_RETURN(std::string text, readFileBytes(path));
    ParseOptions po;
    po.fileName = path;
    WF_ASSIGN_OR_RETURN(evalModule_, parseModule(text, po));
    WF_RETURN_IF_ERROR(verifyModule(evalModule_));
    const Operation* entry = evalModule_.lookupFunction(p.evalEntry());
    if (!entry) return notFound(path + ": no function @" + p.evalEntry());
    CompileOptions co = options_.compile;
    co.job = nullptr;  // a rank's own evaluation: no collectives
    co.boundArguments.clear();
    co.carriedResults.clear();
    for (size_t i = 0; i < p.evalArguments().size(); ++i)
      if (!p.evalArguments()[i].isBatch) co.boundArguments.push_back(i);
    WF_ASSIGN_OR_RETURN(eval_, backend_->compile(evalModule_, *entry, co));
    if (!p.evalConstantsFile().empty()) {
      const std::string cpath = p.path(p.evalConstantsFile());
      WF_ASSIGN_OR_RETURN(SafetensorsFile constants, readSafetensors(cpath));
      for (size_t i = 0; i < p.evalArguments().size(); ++i) {
        const EvalArgument& a = p.evalArguments()[i];
        if (!a.isConstant) continue;
        const Literal* v = constants.find(a.name);
        if (!v) return notFound(cpath + ": no tensor '" + a.name + "'");
        WF_RETURN_IF_ERROR(checkAgainst(*v, Type::tensor(a.shape, a.dtype), cpath + ": '" + a.name + "'"));
        WF_RETURN_IF_ERROR(eval_->bindArgument(i, *v));
      }
    }
    evalWeightsStale_ = true;
  }
  if (evalWeightsStale_) {
    for (size_t i = 0; i < p.evalArguments().size(); ++i) {
      const EvalArgument& a = p.evalArguments()[i];
      if (a.isBatch || a.isConstant) continue;
      WF_ASSIGN_OR_RETURN(Literal w, readBound(p.valueArgument(a.weight)));
      WF_RETURN_IF_ERROR(eval_->bindArgument(i, w));
    }
    evalWeightsStale_ = false;
  }
  size_t k = 0;
  for (const EvalArgument& a : p.evalArguments()) {
    if (!a.isBatch) continue;
    if (k >= evalBatch.size())
      return invalidArgument("the eval batch has " + std::to_string(evalBatch.size()) + " tensors; '" + a.name +
                             "' is missing");
    WF_RETURN_IF_ERROR(checkAgainst(evalBatch[k], Type::tensor(a.shape, a.dtype), "eval batch tensor '" + a.name + "'"));
    ++k;
  }
  if (k != evalBatch.size())
    return invalidArgument("the eval batch has " + std::to_string(evalBatch.size()) + " tensors, the eval program takes " +
                           std::to_string(k));
  WF_ASSIGN_OR_RETURN(RunResult r, eval_->run(evalBatch));
  return std::move(r.outputs);
}

Expected<std::vector<NamedLiteral>> Trainer::weights() {
  std::vector<NamedLiteral> out;
  const TrainingPackage& p = package_;
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    WF_ASSIGN_OR_RETURN(Literal v, readBound(p.valueArgument(i)));
    out.push_back({p.lossArguments()[i].name, std::move(v)});
  }
  return out;
}

Expected<std::vector<NamedLiteral>> Trainer::optimizerState() {
  std::vector<NamedLiteral> out;
  const TrainingPackage& p = package_;
  for (size_t s = 0; s < p.state().size(); ++s) {
    WF_ASSIGN_OR_RETURN(Literal v, readBound(p.trainStepStateArgument(s)));
    out.push_back({p.state()[s].name, std::move(v)});
  }
  return out;
}

Expected<std::string> Trainer::firstNonFinite() {
  WF_ASSIGN_OR_RETURN(auto w, weights());
  for (const NamedLiteral& t : w)
    if (!allFinite(t.value)) return t.name;
  WF_ASSIGN_OR_RETURN(auto s, optimizerState());
  for (const NamedLiteral& t : s)
    if (!allFinite(t.value)) return t.name;
  return std::string();
}

Status Trainer::saveCheckpoint(const std::string& path, const std::map<std::string, int64_t>& extra) {
  if (rank() != 0) {
    // Data parallel: rank 0 writes what every rank holds; the others wait until the file is in place
    // (a rank 0 that failed to write leaves the job instead, and the barrier names it).
    Status done = barrier();
    return done.isOk() ? done : done.withContext("waiting for rank 0 to write the checkpoint " + path);
  }
  SafetensorsFile file;
  const TrainingPackage& p = package_;
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    const LossArgument& a = p.lossArguments()[i];
    if (a.kind == "constant" || a.tiedTo >= 0) continue;  // in the package, never changed; or another name
    WF_ASSIGN_OR_RETURN(Literal v, readBound(i));
    file.tensors.push_back({"weight." + a.name, std::move(v)});
  }
  WF_ASSIGN_OR_RETURN(auto state, optimizerState());
  for (NamedLiteral& s : state) file.tensors.push_back({"state." + s.name, std::move(s.value)});
  file.tensors.push_back({"trainer.step", Literal::scalarInt(ElementType::kSI64, stepsDone_)});
  for (const auto& [key, value] : extra) {
    if (key == "step") return invalidArgument("checkpoint: 'step' is the trainer's own entry");
    file.tensors.push_back({"trainer." + key, Literal::scalarInt(ElementType::kSI64, value)});
  }
  file.metadata["format"] = "warpforge.checkpoint";
  file.metadata["format_version"] = "1";
  file.metadata["package"] = p.name();
  file.metadata["optimizer"] = p.optimizerKind();
  WF_RETURN_IF_ERROR(writeSafetensors(path, file));  // temporary file, fsync, rename, fsync of the directory
  Status done = barrier();
  return done.isOk() ? done : done.withContext("waiting for rank 0 to write the checkpoint " + path);
}

Status Trainer::exportInference(const std::string& dir) {
  namespace fs = std::filesystem;
  const TrainingPackage& p = package_;
  if (!p.hasEval()) return notFound(p.dir() + ": the package has no eval program (training.eval) to export");
  std::error_code ec;
  if (fs::exists(dir, ec)) return invalidArgument(dir + ": already exists; the exported package needs a new directory");
  const std::string evalPath = p.path(p.evalFile());
  WF_ASSIGN_OR_RETURN(std::string text, readFileBytes(evalPath));
  ParseOptions po;
  po.fileName = evalPath;
  WF_ASSIGN_OR_RETURN(Module module, parseModule(text, po));
  const Operation* fn = module.lookupFunction(p.evalEntry());
  if (!fn) return notFound(evalPath + ": no function @" + p.evalEntry());
  const FunctionType type = FuncOp(fn).functionType();
  if (type.results.size() != p.evalOutputs().size())
    return invalidArgument(evalPath + ": @" + p.evalEntry() + " returns " + std::to_string(type.results.size()) +
                           " results, the manifest names " + std::to_string(p.evalOutputs().size()));

  nlohmann::json inputs = nlohmann::json::array(), weights = nlohmann::json::array(), outputs = nlohmann::json::array();
  SafetensorsFile wfile;
  std::optional<SafetensorsFile> constants;
  for (size_t i = 0; i < p.evalArguments().size(); ++i) {
    const EvalArgument& a = p.evalArguments()[i];
    nlohmann::json entry = {{"name", a.name}, {"argument", i}, {"dtype", std::string(elementTypeName(a.dtype))}, {"shape", a.shape}};
    if (a.isBatch) {
      inputs.push_back(entry);
      continue;
    }
    Literal value;
    if (a.isConstant) {
      if (!constants) {
        WF_ASSIGN_OR_RETURN(constants, readSafetensors(p.path(p.evalConstantsFile())));
      }
      const Literal* c = constants->find(a.name);
      if (!c) return notFound(p.path(p.evalConstantsFile()) + ": no tensor '" + a.name + "'");
      value = *c;
      entry["kind"] = "constant";
    } else {
      WF_ASSIGN_OR_RETURN(value, readBound(p.valueArgument(a.weight)));
      entry["kind"] = p.lossArguments()[a.weight].kind;
    }
    weights.push_back(entry);
    wfile.tensors.push_back({a.name, std::move(value)});
  }
  for (size_t r = 0; r < type.results.size(); ++r)
    outputs.push_back({{"name", p.evalOutputs()[r]}, {"result", r},
                       {"dtype", std::string(elementTypeName(type.results[r].elementType()))},
                       {"shape", type.results[r].shape()}});
  nlohmann::json manifest = {
      {"format", "warpforge.package"},
      {"format_version", 1},
      {"name", fs::path(dir).filename().string()},
      {"producer", {{"name", "warpforge train"}, {"package", p.name()}, {"step", stepsDone_}}},
      {"entry", p.evalEntry()},
      {"dtype", "f32"},
      {"inputs", inputs},
      {"weights", weights},
      {"outputs", outputs},
      {"dynamic_dims", nlohmann::json::object()}};

  fs::path target(dir);
  fs::path tmp = target;
  tmp += ".partial";
  fs::remove_all(tmp, ec);
  fs::create_directories(tmp, ec);
  if (ec) return invalidArgument(tmp.string() + ": cannot create directory: " + ec.message());
  auto fail = [&](Status s) {
    std::error_code ignored;
    fs::remove_all(tmp, ignored);
    return s;
  };
  if (Status s = writeFileAtomically((tmp / "model.mlir").string(), text); !s.isOk()) return fail(s);
  if (Status s = writeSafetensors((tmp / "weights.safetensors").string(), wfile); !s.isOk()) return fail(s);
  if (Status s = writeFileAtomically((tmp / "manifest.json").string(), manifest.dump(1) + "\n"); !s.isOk()) return fail(s);
  fs::rename(tmp, target, ec);
  if (ec) return fail(invalidArgument(dir + ": cannot rename the exported package into place: " + ec.message()));
  return Status::ok();
}

Expected<std::map<std::string, int64_t>> Trainer::loadCheckpoint(const std::string& path) {
  WF_ASSIGN_OR_RETURN(SafetensorsFile file, readSafetensors(path));
  auto format = file.metadata.find("format");
  if (format == file.metadata.end() || format->second != "warpforge.checkpoint")
    return invalidArgument(path + ": not a WarpForge checkpoint (no format 'warpforge.checkpoint' in its metadata)");
  auto pkg = file.metadata.find("package");
  if (pkg != file.metadata.end() && pkg->second != package_.name())
    return invalidArgument(path + ": a checkpoint of package '" + pkg->second + "', not of '" + package_.name() + "'");
  // Check everything before binding anything: a bad file changes nothing.
  const TrainingPackage& p = package_;
  std::vector<std::pair<size_t, const Literal*>> binds;
  for (size_t i = p.numBatchArguments(); i < p.lossArguments().size(); ++i) {
    const LossArgument& a = p.lossArguments()[i];
    if (a.kind == "constant" || a.tiedTo >= 0) continue;
    const Literal* v = file.find("weight." + a.name);
    if (!v) return notFound(path + ": no tensor 'weight." + a.name + "'");
    WF_RETURN_IF_ERROR(checkAgainst(*v, Type::tensor(a.shape, a.dtype), path + ": 'weight." + a.name + "'"));
    binds.emplace_back(i, v);
  }
  for (size_t s = 0; s < p.state().size(); ++s) {
    const StateTensor& st = p.state()[s];
    const Literal* v = file.find("state." + st.name);
    if (!v) return notFound(path + ": no tensor 'state." + st.name + "'");
    WF_RETURN_IF_ERROR(checkAgainst(*v, Type::tensor(st.shape, st.dtype), path + ": 'state." + st.name + "'"));
    binds.emplace_back(p.trainStepStateArgument(s), v);
  }
  const Literal* step = file.find("trainer.step");
  if (!step || step->numElements() != 1) return notFound(path + ": no scalar 'trainer.step'");
  for (const auto& [arg, v] : binds) {
    WF_RETURN_IF_ERROR(trainStep_->bindArgument(arg, *v));
    if (fixedValues_.count(arg)) fixedValues_[arg] = *v;
  }
  stepsDone_ = step->getInt(0);
  evalWeightsStale_ = true;
  halfUpdated_.clear();
  WF_RETURN_IF_ERROR(clearAccumulators());  // a checkpoint is taken between updates
  std::map<std::string, int64_t> extra;
  for (const NamedLiteral& t : file.tensors)
    if (t.name.rfind("trainer.", 0) == 0 && t.name != "trainer.step" && t.value.numElements() == 1)
      extra[t.name.substr(8)] = t.value.getInt(0);
  return extra;
}

}  // namespace wf::train
