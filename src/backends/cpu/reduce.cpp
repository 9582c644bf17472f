#include "backends/cpu/interpreter.h"

namespace wf {

void registerReduceKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
