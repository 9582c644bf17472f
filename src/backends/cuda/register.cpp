#include "backends/cuda/register.h"

#include "backends/cuda/cuda_backend.h"
#include "runtime/backend.h"

namespace wf {

void registerCudaBackend() { registerBackend("cuda", cuda::createCudaBackend); }

}  // namespace wf
