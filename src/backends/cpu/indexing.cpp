#include "backends/cpu/interpreter.h"

namespace wf {

void registerIndexingKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
