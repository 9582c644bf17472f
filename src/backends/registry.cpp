// The backend registry's list of built-in backends (registry.h).
#include "backends/registry.h"

#include <mutex>

#include "backends/cpu/cpu_backend.h"
#ifdef WF_HAVE_CUDA
#include "backends/cuda/register.h"
#endif

namespace wf {

void registerBuiltinBackends() {
  static std::once_flag once;
  std::call_once(once, [] {
    registerCpuBackend();
#ifdef WF_HAVE_CUDA
    registerCudaBackend();
#endif
  });
}

}  // namespace wf
