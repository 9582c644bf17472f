// The backend registry and DeviceSpec parsing (backend.h).
#include "runtime/backend.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <optional>

namespace wf {
namespace {

// Device kinds WarpForge has a backend for in some build, for a clearer error when this binary
// lacks one.
constexpr std::string_view kKnownKinds[] = {"cpu", "cuda"};

struct Registry {
  std::mutex mu;
  std::map<std::string, BackendFactory, std::less<>> factories;
};

Registry& registry() {
  static Registry r;
  return r;
}

struct GeneratedKernelCounters {
  std::mutex mu;
  GeneratedKernelStats stats;
};

GeneratedKernelCounters& generatedKernelCounters() {
  static GeneratedKernelCounters c;
  return c;
}

bool isKindChar(char c) { return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_'; }

}  // namespace

Expected<DeviceSpec> DeviceSpec::parse(std::string_view text) {
  auto bad = [&](const std::string& why) {
    return invalidArgument("device '" + std::string(text) + "': " + why +
                           " (expected KIND or KIND:ORDINAL, e.g. cpu, cuda, cuda:1)");
  };
  size_t colon = text.find(':');
  std::string_view kind = text.substr(0, colon);
  if (kind.empty()) return bad("no device kind");
  if (!std::all_of(kind.begin(), kind.end(), isKindChar) || !(kind[0] >= 'a' && kind[0] <= 'z'))
    return bad("the kind must be lower-case letters, digits and '_'");
  DeviceSpec spec;
  spec.kind = std::string(kind);
  if (colon != std::string_view::npos) {
    std::string_view digits = text.substr(colon + 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string_view::npos)
      return bad("the ordinal must be a non-negative integer");
    spec.ordinal = std::stoi(std::string(digits));
  }
  return spec;
}

std::string DeviceSpec::toString() const {
  if (kind == "cpu" && ordinal == 0) return kind;
  return kind + ":" + std::to_string(ordinal);
}

GeneratedKernelStats generatedKernelStats() {
  GeneratedKernelCounters& c = generatedKernelCounters();
  std::lock_guard<std::mutex> lock(c.mu);
  return c.stats;
}

void recordGeneratedKernels(const GeneratedKernelStats& more) {
  GeneratedKernelCounters& c = generatedKernelCounters();
  std::lock_guard<std::mutex> lock(c.mu);
  c.stats.cacheHits += more.cacheHits;
  c.stats.cacheMisses += more.cacheMisses;
  c.stats.compileMillis += more.compileMillis;
  c.stats.loadMillis += more.loadMillis;
  c.stats.tunedProblems += more.tunedProblems;
  c.stats.tuningMillis += more.tuningMillis;
  c.stats.tuningHits += more.tuningHits;
}

void registerBackend(std::string kind, BackendFactory factory) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.factories[std::move(kind)] = std::move(factory);
}

std::vector<std::string> registeredBackendKinds() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  std::vector<std::string> kinds;
  for (const auto& [kind, factory] : r.factories) kinds.push_back(kind);
  return kinds;
}

Expected<std::unique_ptr<Backend>> createBackend(const DeviceSpec& device) {
  BackendFactory factory;
  std::string available;
  {
    Registry& r = registry();
    std::lock_guard<std::mutex> lock(r.mu);
    auto it = r.factories.find(device.kind);
    if (it != r.factories.end()) factory = it->second;
    for (const auto& [kind, f] : r.factories) available += (available.empty() ? "" : ", ") + kind;
  }
  if (available.empty()) available = "none (backends/registry.h: registerBuiltinBackends() was not called)";
  if (!factory) {
    bool known = std::find(std::begin(kKnownKinds), std::end(kKnownKinds), device.kind) != std::end(kKnownKinds);
    if (known)
      return unimplemented("device '" + device.toString() + "': this WarpForge was built without the " + device.kind +
                           " backend; devices available: " + available);
    return invalidArgument("device '" + device.toString() + "': unknown device kind '" + device.kind +
                           "'; devices available: " + available);
  }
  auto backend = factory(device);
  if (!backend) return backend.status().withContext("device '" + device.toString() + "'");
  if (!*backend) return internalError("device '" + device.toString() + "': the backend factory returned nothing");
  return backend;
}

Expected<std::vector<bool>> checkCarriedResults(const Operation& entry, const CompileOptions& options) {
  FuncOp fn(&entry);
  const FunctionType type = fn.functionType();
  std::vector<bool> carried(type.results.size(), false);
  std::vector<bool> argumentTaken(type.inputs.size(), false);
  for (size_t k = 0; k < options.carriedResults.size(); ++k) {
    const CarriedResult& c = options.carriedResults[k];
    const std::string pair = "CompileOptions::carriedResults[" + std::to_string(k) + "] (result #" +
                             std::to_string(c.result) + " -> argument #" + std::to_string(c.argument) + ") of @" +
                             std::string(fn.symName());
    if (c.result >= type.results.size())
      return invalidArgument(pair + ": the function has " + std::to_string(type.results.size()) + " results");
    if (c.argument >= type.inputs.size())
      return invalidArgument(pair + ": the function has " + std::to_string(type.inputs.size()) + " arguments");
    if (std::find(options.boundArguments.begin(), options.boundArguments.end(), c.argument) ==
        options.boundArguments.end())
      return invalidArgument(pair + ": the argument is not in CompileOptions::boundArguments");
    if (carried[c.result]) return invalidArgument(pair + ": result #" + std::to_string(c.result) + " is carried twice");
    if (argumentTaken[c.argument])
      return invalidArgument(pair + ": argument #" + std::to_string(c.argument) + " receives two results");
    if (type.results[c.result] != type.inputs[c.argument])
      return invalidArgument(pair + ": the result is " + type.results[c.result].toString() + ", the argument " +
                             type.inputs[c.argument].toString());
    carried[c.result] = true;
    argumentTaken[c.argument] = true;
  }
  return carried;
}

Expected<const Value*> findEntryValue(const Operation& entry, std::string_view ssaName) {
  FuncOp fn(&entry);
  std::string where = "@" + std::string(fn.symName());
  if (entry.code() != OpCode::FuncFunc || entry.numRegions() == 0 || entry.region(0).empty())
    return invalidArgument("value '" + std::string(ssaName) + "': " + where + " is not a function with a body");
  std::string name(ssaName);
  if (!name.empty() && name[0] != '%') name = "%" + name;
  std::optional<size_t> resultIndex;
  if (size_t hash = name.find('#'); hash != std::string::npos) {
    std::string digits = name.substr(hash + 1);
    if (digits.empty() || digits.size() > 6 || digits.find_first_not_of("0123456789") != std::string::npos)
      return invalidArgument("value '" + std::string(ssaName) + "': expected %NAME or %NAME#INDEX");
    resultIndex = static_cast<size_t>(std::stoul(digits));
    name.resize(hash);
  }
  if (name.size() < 2) return invalidArgument("value '" + std::string(ssaName) + "': empty SSA name");
  const Block& body = fn.body();
  for (size_t i = 0; i < body.numArguments(); ++i)
    if (body.argument(i)->nameHint() == name && !resultIndex) return static_cast<const Value*>(body.argument(i));
  for (const auto& op : body.operations()) {
    if (op->numResults() == 0 || op->result(0)->nameHint() != name) continue;
    if (!resultIndex) {
      if (op->numResults() == 1) return static_cast<const Value*>(op->result(0));
      return invalidArgument("value '" + std::string(ssaName) + "' of " + where + " names the " +
                             std::to_string(op->numResults()) + " results of " + op->describe() + "; use " + name +
                             "#INDEX");
    }
    if (*resultIndex < op->numResults()) return static_cast<const Value*>(op->result(*resultIndex));
    return invalidArgument("value '" + std::string(ssaName) + "': " + op->describe() + " has " +
                           std::to_string(op->numResults()) + " results");
  }
  return notFound("no value " + std::string(ssaName) + " in the body of " + where);
}

}  // namespace wf
