#include "backends/cpu/interpreter.h"

namespace wf {

void registerCollectiveKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf

namespace wf {
Expected<std::vector<std::vector<Literal>>> Interpreter::runGrid(const Operation& func, std::vector<Literal> args,
                                                                 const Module& module, int64_t numReplicas,
                                                                 int64_t numPartitions, CheckSink* checks) {
  return unimplemented("runGrid");
}
}  // namespace wf
