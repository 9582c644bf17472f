// Registers the "cuda" backend with the runtime's backend registry (runtime/backend.h).
// Called from registerBuiltinBackends() in builds with WF_HAVE_CUDA.
#pragma once

namespace wf {

void registerCudaBackend();

}  // namespace wf
