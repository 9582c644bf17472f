#include "backends/cpu/interpreter.h"

namespace wf {

void registerCheckKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
