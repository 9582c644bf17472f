// Kernels compiled at run time: CUDA C++ source -> NVRTC -> machine code for the device's own
// architecture (sm_XY, so no PTX JIT at load) -> a CUDA library loaded with
// cudaLibraryLoadData. Compiled libraries are kept for the life of the process, keyed by
// source and architecture, so a second session of the same model compiles nothing; the machine
// code also goes to the on-disk kernel cache (kernel_cache.h), so a later process loads it
// instead of running NVRTC.
#pragma once

#include <cuda_runtime.h>

#include <optional>
#include <string>
#include <vector>

#include "backends/cuda/codegen/kernel_cache.h"
#include "backends/cuda/device.h"
#include "runtime/backend.h"
#include "support/status.h"

namespace wf::cuda {

// The name under which kernel sources include the element math (src/eval/element_math.h): NVRTC
// gets the header's text from the binary, so `#include "eval/element_math.h"` finds it.
inline constexpr const char* kElementMathInclude = "eval/element_math.h";

struct RuntimeKernelSource {
  std::string name;  // the extern "C" __global__ function's name
  std::string code;  // its definition (the shared prelude is prepended once)
};

// NVRTC's command line for a program compiled for `arch`.
std::vector<std::string> nvrtcOptions(const std::string& arch);

// NVRTC alone (no GPU needed): `source` compiled to machine code for `arch` ("sm_90"), with
// the element math header available to it.
Expected<std::string> compileToCubin(const std::string& source, const std::string& arch);

// The kernel cache key of `source` compiled for `arch` by this process's NVRTC, with its options
// and the element math header, for a driver of version `driverVersion` (cudaDriverGetVersion).
Expected<std::string> kernelCacheKeyOf(const std::string& source, const std::string& arch, int driverVersion);

// The kernel cache that `options` ask for (kernelCacheRoot, with `env`), in its folder for `arch`,
// this process's NVRTC and `driverVersion`; nullopt when it is off.
Expected<std::optional<KernelCache>> kernelCacheFor(const CompileOptions& options, const std::string& arch,
                                                    int driverVersion, const EnvLookup& env = std::getenv);

struct CachedCubin {
  std::string cubin;
  std::string key;           // its kernel cache key
  bool fromCache = false;    // loaded from the cache, not compiled
  double compileMillis = 0;  // NVRTC's time (0 when fromCache)
};
// compileToCubin through the kernel cache (no GPU needed): the cache's entry for the program when
// it has a valid one (unless `recompile`), else NVRTC's output, then stored in the cache. A null
// `cache` compiles and stores nothing.
Expected<CachedCubin> compileToCubinCached(const std::string& source, const std::string& arch, const KernelCache* cache,
                                           int driverVersion, bool recompile = false);

// Compiles every kernel in one NVRTC program (one compiler run however many kernels), or loads the
// program from the kernel cache that `options` name (kernelCacheRoot), and returns their handles
// in order. Compiler errors come back with NVRTC's log. Counts go to generatedKernelStats().
Expected<std::vector<cudaKernel_t>> compileRuntimeKernels(const Device& device, const std::string& prelude,
                                                          const std::vector<RuntimeKernelSource>& kernels,
                                                          const CompileOptions& options);

// For tests: forgets the programs this process compiled, so that the next compileRuntimeKernels
// of one goes to the kernel cache (or NVRTC) again. Their libraries stay loaded, so the kernel
// handles already given out stay valid.
void forgetCompiledKernels();

}  // namespace wf::cuda
