#include "backends/cpu/interpreter.h"

namespace wf {

void registerElementwiseKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
