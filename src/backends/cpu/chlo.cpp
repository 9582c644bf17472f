#include "backends/cpu/interpreter.h"

namespace wf {

void registerChloKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
