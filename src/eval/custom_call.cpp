#include "eval/custom_call.h"

#include <map>
#include <mutex>
#include <shared_mutex>

namespace wf {
namespace {

// Passes operands through unchanged; the op must declare the operands' types as results.
Expected<std::vector<Literal>> identity(const Operation& op, std::span<const Literal> operands, EvalContext&) {
  if (operands.size() != op.numResults())
    return invalidArgument(op.describe() + ": custom_call target treated as identity needs as many results (" +
                           std::to_string(op.numResults()) + ") as operands (" + std::to_string(operands.size()) +
                           ")");
  return std::vector<Literal>(operands.begin(), operands.end());
}

struct Registry {
  std::shared_mutex mu;
  std::map<std::string, CustomCallFn, std::less<>> targets;

  Registry() {
    // On one device, sharding annotations and the SPMD shape conversions that JAX emits around
    // shard_map are identities, as are host-offloading markers.
    for (const char* name : {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape", "MoveToHost",
                             "MoveToDevice", "mhlo.sharding", "annotate_device_placement"})
      targets.emplace(name, identity);
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

void registerCustomCall(std::string name, CustomCallFn fn) {
  Registry& r = registry();
  std::unique_lock lock(r.mu);
  r.targets[std::move(name)] = std::move(fn);
}

CustomCallFn findCustomCall(std::string_view name) {
  Registry& r = registry();
  std::shared_lock lock(r.mu);
  auto it = r.targets.find(name);
  return it == r.targets.end() ? CustomCallFn() : it->second;
}

}  // namespace wf
