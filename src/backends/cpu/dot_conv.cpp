#include "backends/cpu/interpreter.h"

namespace wf {

void registerDotConvKernels(KernelRegistry& registry) { (void)registry; }

}  // namespace wf
