#include "backends/cpu/interpreter.h"

namespace wf {

void registerControlFlowKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
