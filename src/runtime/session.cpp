// Session: package → backend → executable with weights bound → run by name (session.h).
#include "runtime/session.h"

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
  registerBuiltinBackends();
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
  auto executable = session->backend_->compile(pkg.module(), pkg.entry(), compile);
  if (!executable)
    return executable.status().withContext(pkg.dir() + ": compiling @" + m.entry + " for " + options.device.toString());
  session->executable_ = std::move(*executable);

  {
    // Scoped so that the host copies of the weights go as soon as the backend holds them.
    WF_ASSIGN_OR_RETURN(std::vector<Literal> weights, pkg.loadWeights());
    for (size_t i = 0; i < weights.size(); ++i) {
      Status bound = session->executable_->bindArgument(m.weights[i].index, weights[i]);
      if (!bound.isOk()) return bound.withContext("binding weight '" + m.weights[i].name + "'");
    }
  }
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
  auto run = executable_->run(arguments);
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

}  // namespace wf
