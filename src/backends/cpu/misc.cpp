#include "backends/cpu/interpreter.h"

namespace wf {

void registerMiscKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
