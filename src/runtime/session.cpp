// Session: package → backend → executable with weights bound → run by name (session.h).
#include "runtime/session.h"

#include <algorithm>

#include "transforms/refine_shapes.h"

namespace wf {

const Literal* SessionResult::find(std::string_view name) const {
  for (const NamedLiteral& o : outputs)
    if (o.name == name) return &o.value;
  return nullptr;
}

Expected<std::unique_ptr<Session>> Session::open(const std::string& packageDir, const SessionOptions& options) {
  WF_ASSIGN_OR_RETURN(Package package, Package::open(packageDir));
  return create(std::move(package), options);
}

Expected<std::unique_ptr<Session>> Session::create(Package package, const SessionOptions& options) {
  std::unique_ptr<Session> session(new Session(std::move(package), options.device));
  const Package& pkg = session->package_;
  const Manifest& m = pkg.manifest();
  WF_ASSIGN_OR_RETURN(session->backend_, createBackend(options.device));

  CompileOptions compile = options.compile;
  for (const TensorSpec& w : m.weights) compile.boundArguments.push_back(w.index);
  session->captureActivations_ = options.captureActivations;
  if (options.captureActivations) {
    compile.tapValues.clear();
    for (const ActivationSpec& a : m.activations) compile.tapValues.push_back(a.value);
  }
  session->compile_ = compile;
  session->maxSpecializations_ = std::max(1, options.maxSpecializations);
  bool dynamic = false;
  for (size_t i = 0; i < FuncOp(&pkg.entry()).body().numArguments(); ++i)
    dynamic = dynamic || !FuncOp(&pkg.entry()).body().argument(i)->type().hasStaticShape();

  if (!(dynamic && options.forceSpecialization)) {
    auto executable = session->backend_->compile(pkg.module(), pkg.entry(), compile);
    if (executable) {
      session->executable_ = std::move(*executable);
      WF_RETURN_IF_ERROR(session->bindWeights(*session->executable_));
      return session;
    }
    // A backend that takes static shapes only gets the module specialized per input shapes.
    if (!dynamic || executable.status().code() != StatusCode::kUnimplemented || options.captureActivations)
      return executable.status().withContext(pkg.dir() + ": compiling @" + m.entry + " for " +
                                             options.device.toString());
  } else if (options.captureActivations) {
    return invalidArgument("shape specialization does not capture activations");
  }
  // One specialization now, at the smallest sizes the manifest allows (at least 1), so that an op
  // the backend cannot run fails here and not at the first request.
  std::vector<std::pair<size_t, Literal>> probe;  // argument index, a zero input of that shape
  for (const TensorSpec& in : m.inputs)
    probe.emplace_back(in.index, Literal::zeros(Type::tensor(smallestShape(m, in), in.dtype)));
  std::sort(probe.begin(), probe.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<Literal> args;
  for (auto& [index, value] : probe) args.push_back(std::move(value));
  WF_RETURN_IF_ERROR(session->executableFor(args).status());
  return session;
}

Expected<std::vector<Literal>> Session::prepareInputs(std::span<const NamedLiteral> inputs) const {
  return package_.checkInputs(inputs);
}

Expected<SessionResult> Session::run(std::span<const NamedLiteral> inputs) {
  DimBindings bindings;
  WF_ASSIGN_OR_RETURN(std::vector<Literal> args, package_.checkInputs(inputs, &bindings));
  return runChecked(args, bindings);
}

Expected<SessionResult> Session::runPrepared(std::span<const Literal> arguments) {
  DimBindings bindings;
  return runChecked(arguments, bindings);
}

Expected<SessionResult> Session::runChecked(std::span<const Literal> arguments, DimBindings& bindings) {
  const Manifest& m = package_.manifest();
  WF_ASSIGN_OR_RETURN(Executable * executable, executableFor(arguments));
  auto run = executable->run(arguments);
  if (!run) return run.status().withContext(package_.dir() + ": running @" + m.entry + " on " + device_.toString());
  WF_RETURN_IF_ERROR(package_.checkOutputs(run->outputs, bindings));
  SessionResult result;
  for (const TensorSpec& o : m.outputs) result.outputs.push_back({o.name, std::move(run->outputs[o.index])});
  if (captureActivations_) {
    if (run->taps.size() != m.activations.size())
      return internalError("the backend returned " + std::to_string(run->taps.size()) + " taps for " +
                           std::to_string(m.activations.size()) + " activations");
    for (size_t i = 0; i < m.activations.size(); ++i)
      result.activations.push_back({m.activations[i].name, std::move(run->taps[i])});
  }
  result.report = std::move(run->report);
  return result;
}

Status Session::bindWeights(Executable& executable) {
  const Manifest& m = package_.manifest();
  // With one executable the host copies go as soon as it holds the weights; specializations
  // keep them, so that compiling for new input shapes does not read the weights file again.
  std::vector<Literal> loaded;
  if (executable_ || hostWeights_.empty()) {
    WF_ASSIGN_OR_RETURN(loaded, package_.loadWeights());
  }
  const std::vector<Literal>& weights = loaded.empty() ? hostWeights_ : loaded;
  for (size_t i = 0; i < weights.size(); ++i) {
    Status bound = executable.bindArgument(m.weights[i].index, weights[i]);
    if (!bound.isOk()) return bound.withContext("binding weight '" + m.weights[i].name + "'");
  }
  if (!executable_ && hostWeights_.empty()) hostWeights_ = std::move(loaded);
  return Status::ok();
}

Expected<Executable*> Session::executableFor(std::span<const Literal> arguments) {
  if (executable_) return executable_.get();
  const Manifest& m = package_.manifest();
  const Block& body = FuncOp(&package_.entry()).body();
  // The entry's argument types: weights as declared, inputs as given (in argument order).
  std::vector<bool> isWeight(body.numArguments(), false);
  for (const TensorSpec& w : m.weights) isWeight[w.index] = true;
  std::vector<Type> types;
  std::string key;
  size_t next = 0;
  for (size_t i = 0; i < body.numArguments(); ++i) {
    if (isWeight[i]) {
      types.push_back(body.argument(i)->type());
    } else {
      if (next >= arguments.size()) return invalidArgument("too few arguments for @" + m.entry);
      types.push_back(arguments[next++].type());
    }
    key += types.back().toString() + ",";
  }
  ++useClock_;
  for (Specialization& s : specializations_)
    if (s.key == key) {
      s.lastUse = useClock_;
      return s.executable.get();
    }
  Specialization spec;
  spec.key = key;
  // Composites the backend has a kernel for (fused attention) stay whole.
  RefineShapesOptions refine;
  refine.keepComposite = [backend = backend_.get()](std::string_view n) { return backend->lowersComposite(n); };
  WF_ASSIGN_OR_RETURN(spec.module, refineShapes(package_.module(), m.entry, types, refine));
  const Operation* entry = spec.module->lookupFunction(m.entry);
  if (!entry) return internalError("refined module lost @" + m.entry);
  auto executable = backend_->compile(*spec.module, *entry, compile_);
  if (!executable)
    return executable.status().withContext(package_.dir() + ": compiling @" + m.entry + " for " + device_.toString() +
                                           " specialized to " + key.substr(0, key.size() - 1));
  spec.executable = std::move(*executable);
  WF_RETURN_IF_ERROR(bindWeights(*spec.executable));
  spec.lastUse = useClock_;
  if (static_cast<int>(specializations_.size()) >= maxSpecializations_) {
    auto oldest = std::min_element(specializations_.begin(), specializations_.end(),
                                   [](const Specialization& a, const Specialization& b) { return a.lastUse < b.lastUse; });
    specializations_.erase(oldest);
  }
  specializations_.push_back(std::move(spec));
  return specializations_.back().executable.get();
}

std::string Session::deviceName() const {
  if (executable_) return executable_->deviceName();
  return specializations_.empty() ? device_.toString() : specializations_.front().executable->deviceName();
}

std::vector<std::pair<std::string, size_t>> Session::deviceMemoryBreakdown() const {
  std::vector<std::pair<std::string, size_t>> total;
  auto add = [&](const Executable& e) {
    for (const auto& part : e.deviceMemoryBreakdown()) {
      auto it = std::find_if(total.begin(), total.end(), [&](const auto& entry) { return entry.first == part.first; });
      if (it == total.end()) total.push_back(part);
      else it->second += part.second;
    }
  };
  if (executable_) add(*executable_);
  for (const Specialization& s : specializations_) add(*s.executable);
  return total;
}

size_t Session::deviceBytesInUse() const {
  if (executable_) return executable_->deviceBytesInUse();
  size_t total = 0;
  for (const Specialization& s : specializations_) total += s.executable->deviceBytesInUse();
  return total;
}

}  // namespace wf
