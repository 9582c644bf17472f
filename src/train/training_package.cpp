#include "train/training_package.h"

#include <algorithm>
#include <filesystem>
#include <map>
#include <set>

#include "autodiff/autodiff.h"
#include "ir/builder.h"
#include "ir/verifier.h"
#include "runtime/file_io.h"
#include "stablehlo/parser.h"
#include "transforms/attention.h"

namespace wf::train {

std::vector<Value*> accumulateGradients(OpBuilder& b, const std::vector<Value*>& accumulators,
                                        const std::vector<Value*>& grads, Value* microBatches) {
  std::vector<Value*> out;
  for (size_t i = 0; i < grads.size(); ++i) {
    const Type& t = grads[i]->type();
    Value* invK = b.div(b.scalar(t.elementType(), 1), b.convert(microBatches, t.elementType()));
    out.push_back(b.add(accumulators[i], b.mul(grads[i], b.broadcastInDim(invK, t, {}))));
  }
  return out;
}

namespace {

using nlohmann::json;

Expected<json> readJson(const std::string& path) {
  WF_ASSIGN_OR_RETURN(std::string text, readFileBytes(path));
  try {
    return json::parse(text);
  } catch (const json::exception& e) {
    return parseError(path + ": not valid JSON: " + e.what());
  }
}

// `obj[key]` of the expected JSON kind, or an error naming where.
Expected<const json*> field(const json& obj, const char* key, json::value_t kind, const std::string& where) {
  if (!obj.is_object() || !obj.contains(key)) return invalidArgument(where + ": missing `" + key + "`");
  const json& v = obj[key];
  bool ok = v.type() == kind || (kind == json::value_t::number_integer && v.is_number_unsigned());
  if (!ok) return invalidArgument(where + ": `" + key + "` has the wrong type (" + v.type_name() + ")");
  return &v;
}

Expected<std::string> stringField(const json& obj, const char* key, const std::string& where) {
  WF_ASSIGN_OR_RETURN(const json* v, field(obj, key, json::value_t::string, where));
  return v->get<std::string>();
}

Expected<ElementType> dtypeField(const json& obj, const std::string& where) {
  WF_ASSIGN_OR_RETURN(std::string name, stringField(obj, "dtype", where));
  ElementType t;
  if (!parseElementTypeName(name, &t)) return invalidArgument(where + ": unknown dtype '" + name + "'");
  return t;
}

Expected<std::vector<int64_t>> shapeField(const json& obj, const std::string& where) {
  WF_ASSIGN_OR_RETURN(const json* v, field(obj, "shape", json::value_t::array, where));
  std::vector<int64_t> shape;
  for (const json& d : *v) {
    if (!d.is_number_integer() || d.get<int64_t>() < 0)
      return invalidArgument(where + ": `shape` must list non-negative integers (training programs have static shapes)");
    shape.push_back(d.get<int64_t>());
  }
  return shape;
}

Expected<Module> loadProgram(const std::string& path) {
  WF_ASSIGN_OR_RETURN(std::string text, readFileBytes(path));
  ParseOptions options;
  options.fileName = path;
  WF_ASSIGN_OR_RETURN(Module module, parseModule(text, options));
  WF_RETURN_IF_ERROR(verifyModule(module));
  return module;
}

// The entry's argument and result types against what the manifest declares.
Status checkSignature(const Module& module, const std::string& entry, const std::string& file,
                      const std::vector<Type>& args, const std::vector<Type>& results) {
  const Operation* fn = module.lookupFunction(entry);
  if (!fn) return notFound(file + ": no function @" + entry);
  FunctionType type = FuncOp(fn).functionType();
  if (type.inputs.size() != args.size())
    return invalidArgument(file + ": @" + entry + " has " + std::to_string(type.inputs.size()) +
                           " arguments, the manifest describes " + std::to_string(args.size()));
  for (size_t i = 0; i < args.size(); ++i)
    if (type.inputs[i] != args[i])
      return invalidArgument(file + ": argument " + std::to_string(i) + " of @" + entry + " is " +
                             type.inputs[i].toString() + ", the manifest says " + args[i].toString());
  if (type.results.size() != results.size())
    return invalidArgument(file + ": @" + entry + " has " + std::to_string(type.results.size()) +
                           " results, the manifest describes " + std::to_string(results.size()));
  for (size_t i = 0; i < results.size(); ++i)
    if (type.results[i] != results[i])
      return invalidArgument(file + ": result " + std::to_string(i) + " of @" + entry + " is " +
                             type.results[i].toString() + ", the manifest says " + results[i].toString());
  return Status::ok();
}

// Ends `fn` (one block, its arguments in `type.inputs`) by returning `results`, and appends it.
void appendFunction(Module& module, std::unique_ptr<Operation> fn, FunctionType type, const std::vector<Value*>& results,
                    const Location& here) {
  auto ret = std::make_unique<Operation>("func.return", here);
  for (Value* v : results) {
    ret->addOperand(v);
    type.results.push_back(v->type());
  }
  fn->region(0).front().append(std::move(ret));
  fn->setAttr("function_type", Attribute::functionType(type));
  module.append(std::move(fn));
}

}  // namespace

std::string TrainingPackage::path(const std::string& relative) const {
  return (std::filesystem::path(dir_) / relative).string();
}

Expected<TrainingPackage> TrainingPackage::open(const std::string& dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return notFound(dir + ": no such package directory");
  TrainingPackage p;
  p.dir_ = dir;
  const std::string mpath = p.path(kManifestFile);
  if (!fs::exists(mpath, ec)) return notFound(dir + ": no manifest.json: not a package");
  WF_ASSIGN_OR_RETURN(p.manifest_, readJson(mpath));
  const json& m = p.manifest_;
  std::string format = m.is_object() && m.contains("format") && m["format"].is_string() ? m["format"].get<std::string>() : "";
  if (format != kFormat)
    return invalidArgument(mpath + ": the format is '" + format + "', not '" + kFormat +
                           "': this package has no training program (export one with warpforge.export_training, "
                           "docs/training.md)");
  if (!m.contains("format_version") || !m["format_version"].is_number_integer() || m["format_version"].get<int>() != 1)
    return invalidArgument(mpath + ": unsupported format_version (this WarpForge reads version 1)");
  p.name_ = m.contains("name") && m["name"].is_string() ? m["name"].get<std::string>() : fs::path(dir).filename().string();
  WF_ASSIGN_OR_RETURN(const json* t, field(m, "training", json::value_t::object, mpath));

  // The loss program.
  const std::string where = mpath + ": training.loss";
  WF_ASSIGN_OR_RETURN(const json* loss, field(*t, "loss", json::value_t::object, mpath + ": training"));
  WF_ASSIGN_OR_RETURN(p.lossFile_, stringField(*loss, "file", where));
  WF_ASSIGN_OR_RETURN(p.lossEntry_, stringField(*loss, "entry", where));
  WF_ASSIGN_OR_RETURN(const json* args, field(*loss, "arguments", json::value_t::array, where));
  std::map<std::string, size_t> byName;
  for (size_t i = 0; i < args->size(); ++i) {
    const json& a = (*args)[i];
    const std::string w = where + ".arguments[" + std::to_string(i) + "]";
    LossArgument la;
    WF_ASSIGN_OR_RETURN(la.name, stringField(a, "name", w));
    WF_ASSIGN_OR_RETURN(la.kind, stringField(a, "kind", w));
    WF_ASSIGN_OR_RETURN(la.dtype, dtypeField(a, w));
    WF_ASSIGN_OR_RETURN(la.shape, shapeField(a, w));
    la.index = i;
    la.trainable = a.contains("trainable") && a["trainable"].is_boolean() && a["trainable"].get<bool>();
    if (a.contains("argument") && (!a["argument"].is_number_integer() || a["argument"].get<size_t>() != i))
      return invalidArgument(w + ": arguments must be listed in argument order");
    static const std::set<std::string> kinds = {"batch", "parameter", "buffer", "constant"};
    if (!kinds.count(la.kind)) return invalidArgument(w + ": unknown kind '" + la.kind + "'");
    if (la.kind == "batch" && i != p.numBatch_)
      return invalidArgument(w + ": batch arguments must come first");
    if (la.kind == "batch") ++p.numBatch_;
    if (!byName.emplace(la.name, i).second) return invalidArgument(w + ": the name '" + la.name + "' is used twice");
    p.lossArguments_.push_back(std::move(la));
  }
  if (p.numBatch_ == 0) return invalidArgument(where + ": the loss program takes no batch");
  for (size_t i = 0; i < args->size(); ++i) {
    const json& a = (*args)[i];
    if (!a.contains("tied_to")) continue;
    const std::string w = where + ".arguments[" + std::to_string(i) + "]";
    if (!a["tied_to"].is_string()) return invalidArgument(w + ": `tied_to` must be a parameter name");
    auto it = byName.find(a["tied_to"].get<std::string>());
    if (it == byName.end() || p.lossArguments_[it->second].kind != "parameter" || it->second == i ||
        p.lossArguments_[it->second].tiedTo >= 0)
      return invalidArgument(w + ": `tied_to` '" + a["tied_to"].get<std::string>() + "' is not another parameter");
    LossArgument& la = p.lossArguments_[i];
    const LossArgument& primary = p.lossArguments_[it->second];
    if (la.kind != "parameter" || la.trainable || la.dtype != primary.dtype || la.shape != primary.shape)
      return invalidArgument(w + ": a tied parameter must be an untrained parameter of its primary's type");
    la.tiedTo = static_cast<int64_t>(it->second);
  }

  auto lookup = [&](const json& names, const std::string& w, const char* what) -> Expected<std::vector<size_t>> {
    if (!names.is_array()) return invalidArgument(w + " must be a list of names");
    std::vector<size_t> out;
    for (const json& n : names) {
      if (!n.is_string()) return invalidArgument(w + " must be a list of names");
      auto it = byName.find(n.get<std::string>());
      if (it == byName.end())
        return invalidArgument(w + ": '" + n.get<std::string>() + "' is not an argument of the loss program");
      if (std::string kind = p.lossArguments_[it->second].kind; kind != what && !(std::string(what) == "buffer" && kind == "constant"))
        return invalidArgument(w + ": '" + n.get<std::string>() + "' is a " + kind + ", not a " + what);
      out.push_back(it->second);
    }
    return out;
  };
  WF_ASSIGN_OR_RETURN(const json* params, field(*t, "params", json::value_t::array, mpath + ": training"));
  WF_ASSIGN_OR_RETURN(p.paramArguments_, lookup(*params, mpath + ": training.params", "parameter"));
  for (size_t a : p.paramArguments_)
    if (!p.lossArguments_[a].trainable)
      return invalidArgument(mpath + ": training.params: '" + p.lossArguments_[a].name + "' is not marked trainable");
  const json empty = json::array();
  const json& updates = t->contains("buffer_updates") ? (*t)["buffer_updates"] : empty;
  WF_ASSIGN_OR_RETURN(p.bufferUpdateArguments_, lookup(updates, mpath + ": training.buffer_updates", "buffer"));

  // The optimizer.
  const std::string ow = mpath + ": training.optimizer";
  WF_ASSIGN_OR_RETURN(const json* opt, field(*t, "optimizer", json::value_t::object, mpath + ": training"));
  WF_ASSIGN_OR_RETURN(p.optimizerFile_, stringField(*opt, "file", ow));
  WF_ASSIGN_OR_RETURN(p.optimizerEntry_, stringField(*opt, "entry", ow));
  WF_ASSIGN_OR_RETURN(p.optimizerKind_, stringField(*opt, "kind", ow));
  WF_ASSIGN_OR_RETURN(p.stateFile_, stringField(*opt, "state_file", ow));
  WF_ASSIGN_OR_RETURN(const json* groups, field(*opt, "param_groups", json::value_t::array, ow));
  p.numGroups_ = groups->size();
  if (p.numGroups_ == 0) return invalidArgument(ow + ": no param_groups");
  WF_ASSIGN_OR_RETURN(const json* state, field(*opt, "state", json::value_t::array, ow));
  for (size_t i = 0; i < state->size(); ++i) {
    const std::string w = ow + ".state[" + std::to_string(i) + "]";
    StateTensor s;
    WF_ASSIGN_OR_RETURN(s.name, stringField((*state)[i], "name", w));
    WF_ASSIGN_OR_RETURN(s.param, stringField((*state)[i], "param", w));
    WF_ASSIGN_OR_RETURN(s.dtype, dtypeField((*state)[i], w));
    WF_ASSIGN_OR_RETURN(s.shape, shapeField((*state)[i], w));
    p.state_.push_back(std::move(s));
  }
  WF_ASSIGN_OR_RETURN(const json* sched, field(*t, "lr_schedule", json::value_t::object, mpath + ": training"));
  WF_ASSIGN_OR_RETURN(p.schedule_, LrSchedule::fromJson(*sched, mpath + ": training.lr_schedule"));
  if (p.schedule_.baseLrs.size() != p.numGroups_)
    return invalidArgument(mpath + ": training.lr_schedule has " + std::to_string(p.schedule_.baseLrs.size()) +
                           " base_lrs for " + std::to_string(p.numGroups_) + " param groups");
  WF_ASSIGN_OR_RETURN(p.weightsFile_, stringField(*t, "weights", mpath + ": training"));
  if (t->contains("accumulation_steps")) {
    const json& k = (*t)["accumulation_steps"];
    if (!k.is_number_integer() || k.get<int64_t>() < 1)
      return invalidArgument(mpath + ": training.accumulation_steps must be a positive integer");
    p.accumulationSteps_ = k.get<int64_t>();
  }
  if (t->contains("dropout") && (*t)["dropout"].is_object()) {
    const std::string dw = mpath + ": training.dropout";
    const json& d = (*t)["dropout"];
    WF_ASSIGN_OR_RETURN(std::string state, stringField(d, "rng_state", dw));
    WF_ASSIGN_OR_RETURN(std::string sw, stringField(d, "switch", dw));
    auto find = [&](const std::string& name, const char* kind, const Type& type) -> Expected<int64_t> {
      auto it = byName.find(name);
      if (it == byName.end()) return invalidArgument(dw + ": '" + name + "' is not an argument of the loss program");
      const LossArgument& a = p.lossArguments_[it->second];
      if (a.kind != kind || Type::tensor(a.shape, a.dtype) != type)
        return invalidArgument(dw + ": '" + name + "' must be a " + kind + " of type " + type.toString());
      return static_cast<int64_t>(it->second);
    };
    WF_ASSIGN_OR_RETURN(p.rngStateArgument_, find(state, "buffer", Type::tensor({2}, ElementType::kUI64)));
    WF_ASSIGN_OR_RETURN(p.dropoutSwitchArgument_, find(sw, "constant", Type::tensor({}, ElementType::kI1)));
    if (std::find(p.bufferUpdateArguments_.begin(), p.bufferUpdateArguments_.end(),
                  static_cast<size_t>(p.rngStateArgument_)) == p.bufferUpdateArguments_.end())
      return invalidArgument(dw + ": the loss program does not return the next RNG state ('" + state +
                             "' is not in training.buffer_updates)");
    p.goldenWithoutDropout_ = d.contains("golden") && d["golden"] == "off";
  }

  // The eval program, optional.
  if (t->contains("eval") && !(*t)["eval"].is_null()) {
    const std::string ew = mpath + ": training.eval";
    const json& ev = (*t)["eval"];
    WF_ASSIGN_OR_RETURN(p.evalFile_, stringField(ev, "file", ew));
    WF_ASSIGN_OR_RETURN(p.evalEntry_, stringField(ev, "entry", ew));
    WF_ASSIGN_OR_RETURN(const json* eargs, field(ev, "arguments", json::value_t::array, ew));
    for (size_t i = 0; i < eargs->size(); ++i) {
      const std::string w = ew + ".arguments[" + std::to_string(i) + "]";
      EvalArgument ea;
      WF_ASSIGN_OR_RETURN(ea.name, stringField((*eargs)[i], "name", w));
      WF_ASSIGN_OR_RETURN(std::string kind, stringField((*eargs)[i], "kind", w));
      WF_ASSIGN_OR_RETURN(ea.dtype, dtypeField((*eargs)[i], w));
      WF_ASSIGN_OR_RETURN(ea.shape, shapeField((*eargs)[i], w));
      ea.isBatch = kind == "batch";
      ea.isConstant = kind == "constant";
      if (!ea.isBatch && !ea.isConstant) {
        auto it = byName.find(ea.name);
        if (it == byName.end() || p.lossArguments_[it->second].kind == "batch")
          return invalidArgument(w + ": '" + ea.name + "' is not a weight of the loss program");
        ea.weight = it->second;
      }
      p.evalArguments_.push_back(std::move(ea));
    }
    if (ev.contains("constants") && ev["constants"].is_string()) p.evalConstantsFile_ = ev["constants"].get<std::string>();
    for (const EvalArgument& ea : p.evalArguments_)
      if (ea.isConstant && p.evalConstantsFile_.empty())
        return invalidArgument(ew + ": '" + ea.name + "' is a constant, but no `constants` file is named");
    WF_ASSIGN_OR_RETURN(const json* outs, field(ev, "outputs", json::value_t::array, ew));
    for (const json& o : *outs) {
      if (!o.is_string()) return invalidArgument(ew + ".outputs must be a list of names");
      p.evalOutputs_.push_back(o.get<std::string>());
    }
  }
  if (t->contains("train_step") && (*t)["train_step"].is_object()) {
    WF_ASSIGN_OR_RETURN(p.trainStepFile_, stringField((*t)["train_step"], "file", mpath + ": training.train_step"));
  }
  return p;
}

Tolerances TrainingPackage::tolerance(const std::string& row) const {
  // DESIGN.md's table
  static const std::map<std::string, std::pair<double, double>> defaults = {
      {"loss", {1e-4, 1e-6}}, {"gradients", {1e-3, 1e-5}}, {"weights", {1e-4, 1e-6}},
      {"activations", {1e-3, 1e-5}},
      // The state is made of gradients (a momentum buffer, Adam's moments): judged like them.
      {"optimizer_state", {1e-3, 1e-5}}};
  auto [rtol, atol] = defaults.count(row) ? defaults.at(row) : std::pair<double, double>{1e-4, 1e-6};
  Tolerances tol;
  tol.rtol = rtol;
  tol.atol = atol;
  if (manifest_.contains("tolerances") && manifest_["tolerances"].contains(row)) {
    const json& r = manifest_["tolerances"][row];
    if (r.contains("rtol") && r["rtol"].is_number()) tol.rtol = r["rtol"].get<double>();
    if (r.contains("atol") && r["atol"].is_number()) tol.atol = r["atol"].get<double>();
  }
  return tol;
}

std::vector<std::pair<size_t, size_t>> TrainingPackage::trainStepCarried() const {
  std::vector<std::pair<size_t, size_t>> carried;
  size_t r = 1;
  for (size_t a : paramArguments_) carried.emplace_back(r++, a);
  for (size_t a : bufferUpdateArguments_) carried.emplace_back(r++, a);
  for (size_t s = 0; s < state_.size(); ++s) carried.emplace_back(r++, trainStepStateArgument(s));
  return carried;
}

std::vector<std::pair<size_t, size_t>> TrainingPackage::trainStepAccumulateCarried() const {
  std::vector<std::pair<size_t, size_t>> carried = trainStepCarried();
  size_t r = carried.size() + 1;
  for (size_t i = 0; i < paramArguments_.size(); ++i) carried.emplace_back(r++, accumulatorArgument(i));
  return carried;
}

Expected<Module> TrainingPackage::buildTrainModule() const {
  if (!trainStepFile_.empty()) {
    const std::string file = path(trainStepFile_);
    WF_ASSIGN_OR_RETURN(Module module, loadProgram(file));
    // Its layout must be the one the trainer binds: the manifest's arguments, state, step, lr.
    std::vector<Type> args, results;
    for (const LossArgument& a : lossArguments_) args.push_back(Type::tensor(a.shape, a.dtype));
    for (const StateTensor& s : state_) args.push_back(Type::tensor(s.shape, s.dtype));
    args.push_back(Type::tensor({}, ElementType::kSI64));
    args.push_back(Type::tensor({static_cast<int64_t>(numGroups_)}, ElementType::kF32));
    const Operation* fn = module.lookupFunction("train_step");
    if (!fn) return notFound(file + ": no function @train_step");
    results.push_back(FuncOp(fn).functionType().results.empty() ? Type() : FuncOp(fn).functionType().results[0]);
    for (size_t a : paramArguments_) results.push_back(args[a]);
    for (size_t a : bufferUpdateArguments_) results.push_back(args[a]);
    for (const StateTensor& s : state_) results.push_back(Type::tensor(s.shape, s.dtype));
    WF_RETURN_IF_ERROR(checkSignature(module, "train_step", file, args, results));
    if (!module.lookupFunction("loss_value_and_grad")) return notFound(file + ": no function @loss_value_and_grad");
    // The accumulating step: the same arguments with the accumulators (one per parameter) before
    // step and lr, then micro_batch and micro_batches; the same results, then the accumulators.
    if (module.lookupFunction("train_step_accumulate")) {
      const size_t stepArg = trainStepStepArgument();
      std::vector<Type> accArgs(args.begin(), args.begin() + static_cast<std::ptrdiff_t>(stepArg)), accResults = results;
      for (size_t a : paramArguments_) accArgs.push_back(args[a]);
      accArgs.push_back(args[stepArg]);
      accArgs.push_back(args[stepArg + 1]);
      accArgs.push_back(Type::tensor({}, ElementType::kSI64));
      accArgs.push_back(Type::tensor({}, ElementType::kSI64));
      for (size_t a : paramArguments_) accResults.push_back(args[a]);
      WF_RETURN_IF_ERROR(checkSignature(module, "train_step_accumulate", file, accArgs, accResults));
    }
    return module;
  }
  return deriveTrainModule();
}

Status TrainingPackage::addAccumulateStep(Module& module, const std::vector<Type>& lossArgTypes,
                                          const std::string& valueAndGrad, const Location& here) const {
  // @train_step_accumulate: one micro-batch of gradient accumulation, as a PyTorch loop that calls
  // (loss / K).backward() on K micro-batches, then optimizer.step() and zero_grad(). The update
  // runs on every call and is kept only at the last micro-batch (select): one program without
  // control flow, so a backend runs it as one fused graph; the update is elementwise, a small part
  // of a step. Buffers (BatchNorm's running statistics) take every micro-batch's update, as
  // PyTorch's forward passes do.
  auto fn = std::make_unique<Operation>("func.func", here);
  fn->setAttr("sym_name", Attribute::string("train_step_accumulate"));
  Block& body = *fn->addRegion()->addBlock();
  FunctionType type;
  auto argument = [&](const Type& t, const std::string& name) {
    Value* v = body.addArgument(t);
    v->setNameHint(name);
    type.inputs.push_back(t);
    return v;
  };
  std::vector<Value*> lossArgs, stateArgs, accArgs;
  for (size_t i = 0; i < lossArguments_.size(); ++i) lossArgs.push_back(argument(lossArgTypes[i], lossArguments_[i].name));
  for (const StateTensor& s : state_) stateArgs.push_back(argument(Type::tensor(s.shape, s.dtype), s.name));
  for (size_t a : paramArguments_) accArgs.push_back(argument(lossArgTypes[a], "grad_acc." + lossArguments_[a].name));
  const Type i64 = Type::tensor({}, ElementType::kSI64);
  Value* step = argument(i64, "step");
  Value* lr = argument(Type::tensor({static_cast<int64_t>(numGroups_)}, ElementType::kF32), "lr");
  Value* micro = argument(i64, "micro_batch");
  Value* micros = argument(i64, "micro_batches");

  OpBuilder b(&body, here, &module);
  const size_t numBuffers = bufferUpdateArguments_.size(), numParams = paramArguments_.size();
  Operation* vg = b.create("func.call", lossArgs, {{"callee", Attribute::symbolRef(valueAndGrad)}}, {},
                           1 + numBuffers + numParams);
  WF_RETURN_IF_ERROR(b.status());
  // (loss / K).backward() seeds backward with 1/K; scaling the gradient by 1/K afterwards is the
  // same arithmetic where K is a power of two, and within one rounding of it otherwise.
  Value* last = b.compare(micro, b.sub(micros, b.scalar(ElementType::kSI64, 1)), "EQ");
  std::vector<Value*> grads;
  for (size_t i = 0; i < numParams; ++i) grads.push_back(vg->result(1 + numBuffers + i));
  std::vector<Value*> newAcc = accumulateGradients(b, accArgs, grads, micros);
  std::vector<Value*> optOperands;
  for (size_t a : paramArguments_) optOperands.push_back(lossArgs[a]);
  for (Value* g : newAcc) optOperands.push_back(g);
  for (Value* s : stateArgs) optOperands.push_back(s);
  optOperands.push_back(step);
  optOperands.push_back(lr);
  Operation* update = b.create("func.call", optOperands, {{"callee", Attribute::symbolRef(optimizerEntry_)}}, {},
                               numParams + state_.size());
  WF_RETURN_IF_ERROR(b.status());
  auto keepAtLast = [&](Value* updated, Value* unchanged) {
    const Type& t = unchanged->type();
    Type pred = Type::tensor(t.shape(), ElementType::kI1);
    return b.select(b.broadcastInDim(last, pred, {}), updated, unchanged);
  };
  std::vector<Value*> results = {vg->result(0)};
  for (size_t i = 0; i < numParams; ++i) results.push_back(keepAtLast(update->result(i), lossArgs[paramArguments_[i]]));
  for (size_t k = 0; k < numBuffers; ++k) results.push_back(vg->result(1 + k));
  for (size_t s = 0; s < state_.size(); ++s) results.push_back(keepAtLast(update->result(numParams + s), stateArgs[s]));
  for (size_t i = 0; i < numParams; ++i) results.push_back(keepAtLast(b.zeros(newAcc[i]->type()), newAcc[i]));
  WF_RETURN_IF_ERROR(b.status());
  appendFunction(module, std::move(fn), type, results, here);
  return Status::ok();
}

Expected<Module> TrainingPackage::deriveTrainModule() const {
  // The loss program, checked against the manifest.
  const std::string lossPath = path(lossFile_);
  WF_ASSIGN_OR_RETURN(Module module, loadProgram(lossPath));
  std::vector<Type> lossArgTypes, lossResultTypes;
  for (const LossArgument& a : lossArguments_) lossArgTypes.push_back(Type::tensor(a.shape, a.dtype));
  lossResultTypes.push_back(Type::tensor({}, ElementType::kF32));
  for (size_t a : bufferUpdateArguments_) lossResultTypes.push_back(lossArgTypes[a]);
  {
    const Operation* fn = module.lookupFunction(lossEntry_);
    if (fn && !FuncOp(fn).functionType().results.empty())  // the loss may be f64 or bf16: take its own type
      lossResultTypes[0] = FuncOp(fn).functionType().results[0];
  }
  WF_RETURN_IF_ERROR(checkSignature(module, lossEntry_, lossPath, lossArgTypes, lossResultTypes));

  // The optimizer program.
  const std::string optPath = path(optimizerFile_);
  WF_ASSIGN_OR_RETURN(Module opt, loadProgram(optPath));
  std::vector<Type> optArgs, optResults;
  for (size_t a : paramArguments_) optArgs.push_back(lossArgTypes[a]);
  for (size_t a : paramArguments_) optArgs.push_back(lossArgTypes[a]);
  for (const StateTensor& s : state_) optArgs.push_back(Type::tensor(s.shape, s.dtype));
  const Type stepType = Type::tensor({}, ElementType::kSI64);
  const Type lrType = Type::tensor({static_cast<int64_t>(numGroups_)}, ElementType::kF32);
  optArgs.push_back(stepType);
  optArgs.push_back(lrType);
  for (size_t a : paramArguments_) optResults.push_back(lossArgTypes[a]);
  for (const StateTensor& s : state_) optResults.push_back(Type::tensor(s.shape, s.dtype));
  WF_RETURN_IF_ERROR(checkSignature(opt, optimizerEntry_, optPath, optArgs, optResults));

  // One module: the optimizer's functions join the loss program's.
  for (auto& op : opt.mutableOperations()) {
    if (op->code() == OpCode::FuncFunc) {
      std::string_view sym = FuncOp(op.get()).symName();
      if (module.lookupFunction(sym))
        return invalidArgument(optPath + ": function @" + std::string(sym) + " is also defined in " + lossPath);
    }
    module.append(std::move(op));
  }
  for (auto& [key, blob] : opt.resources) {
    if (module.resources.count(key)) return invalidArgument(optPath + ": resource '" + key + "' is also in " + lossPath);
    module.resources.emplace(key, std::move(blob));
  }
  opt.mutableOperations().clear();

  // Attention becomes one composite before autodiff, so that the backward pass recomputes the
  // probabilities instead of keeping them (transforms/attention.h).
  WF_RETURN_IF_ERROR(outlineAttention(module, lossEntry_).status());

  std::string differentiated = lossEntry_;
  if (std::any_of(lossArguments_.begin(), lossArguments_.end(), [](const LossArgument& a) { return a.tiedTo >= 0; })) {
    // @loss_tied: the loss with each tied name fed its primary's value, so that autodiff sums
    // the gradient of every use into the primary.
    differentiated = "loss_tied";
    Location loc;
    loc.file = lossPath;
    loc.line = 1;
    loc.column = 1;
    auto fn = std::make_unique<Operation>("func.func", loc);
    fn->setAttr("sym_name", Attribute::string(differentiated));
    fn->setAttr("sym_visibility", Attribute::string("private"));
    Block& body = *fn->addRegion()->addBlock();
    FunctionType type;
    std::vector<Value*> args;
    for (size_t i = 0; i < lossArguments_.size(); ++i) {
      Value* v = body.addArgument(lossArgTypes[i]);
      v->setNameHint(lossArguments_[i].name);
      args.push_back(v);
      type.inputs.push_back(lossArgTypes[i]);
    }
    std::vector<Value*> operands;
    for (size_t i = 0; i < args.size(); ++i) operands.push_back(args[valueArgument(i)]);
    OpBuilder b(&body, loc, &module);
    Operation* call = b.create("func.call", operands, {{"callee", Attribute::symbolRef(lossEntry_)}}, {}, lossResultTypes.size());
    WF_RETURN_IF_ERROR(b.status());
    auto ret = std::make_unique<Operation>("func.return", loc);
    for (size_t r = 0; r < lossResultTypes.size(); ++r) {
      ret->addOperand(call->result(r));
      type.results.push_back(call->result(r)->type());
    }
    body.append(std::move(ret));
    fn->setAttr("function_type", Attribute::functionType(type));
    module.append(std::move(fn));
  }
  std::vector<int> wrt;
  for (size_t a : paramArguments_) wrt.push_back(static_cast<int>(a));
  WF_ASSIGN_OR_RETURN(std::string vgName, addValueAndGradFunction(module, differentiated, wrt, "loss_value_and_grad"));

  // @train_step: value and grad, then the update; calls, which every backend inlines.
  Location here;
  here.file = lossPath;
  here.line = 1;
  here.column = 1;
  auto fn = std::make_unique<Operation>("func.func", here);
  fn->setAttr("sym_name", Attribute::string("train_step"));
  Block& body = *fn->addRegion()->addBlock();
  FunctionType type;
  std::vector<Value*> lossArgs;
  for (size_t i = 0; i < lossArguments_.size(); ++i) {
    Value* v = body.addArgument(lossArgTypes[i]);
    v->setNameHint(lossArguments_[i].name);
    lossArgs.push_back(v);
    type.inputs.push_back(lossArgTypes[i]);
  }
  std::vector<Value*> stateArgs;
  for (const StateTensor& s : state_) {
    Value* v = body.addArgument(Type::tensor(s.shape, s.dtype));
    v->setNameHint(s.name);
    stateArgs.push_back(v);
    type.inputs.push_back(v->type());
  }
  Value* step = body.addArgument(stepType);
  step->setNameHint("step");
  Value* lr = body.addArgument(lrType);
  lr->setNameHint("lr");
  type.inputs.push_back(stepType);
  type.inputs.push_back(lrType);

  OpBuilder b(&body, here, &module);
  const size_t numBuffers = bufferUpdateArguments_.size(), numParams = paramArguments_.size();
  Operation* vg = b.create("func.call", lossArgs, {{"callee", Attribute::symbolRef(vgName)}}, {},
                           1 + numBuffers + numParams);
  WF_RETURN_IF_ERROR(b.status());
  std::vector<Value*> optOperands;
  for (size_t a : paramArguments_) optOperands.push_back(lossArgs[a]);
  for (size_t i = 0; i < numParams; ++i) optOperands.push_back(vg->result(1 + numBuffers + i));
  for (Value* s : stateArgs) optOperands.push_back(s);
  optOperands.push_back(step);
  optOperands.push_back(lr);
  Operation* update = b.create("func.call", optOperands, {{"callee", Attribute::symbolRef(optimizerEntry_)}}, {},
                               numParams + state_.size());
  WF_RETURN_IF_ERROR(b.status());
  std::vector<Value*> results = {vg->result(0)};
  for (size_t i = 0; i < numParams; ++i) results.push_back(update->result(i));
  for (size_t k = 0; k < numBuffers; ++k) results.push_back(vg->result(1 + k));
  for (size_t s = 0; s < state_.size(); ++s) results.push_back(update->result(numParams + s));
  appendFunction(module, std::move(fn), type, results, here);
  WF_RETURN_IF_ERROR(addAccumulateStep(module, lossArgTypes, vgName, here));
  Status verified = verifyModule(module);
  if (!verified.isOk()) return internalError("the train-step program does not verify: " + verified.message());
  return module;
}

}  // namespace wf::train
