#include "backends/cpu/interpreter.h"

namespace wf {

void registerDataMovementKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
