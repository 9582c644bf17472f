// Kernels compiled at run time: CUDA C++ source -> NVRTC -> machine code for the device's own
// architecture (sm_XY, so no PTX JIT at load) -> a CUDA library loaded with
// cudaLibraryLoadData. Compiled libraries are cached for the life of the process, keyed by
// source and architecture, so a second session of the same model compiles nothing.
#pragma once

#include <cuda_runtime.h>

#include <string>
#include <vector>

#include "backends/cuda/device.h"
#include "support/status.h"

namespace wf::cuda {

// The name under which kernel sources include the element math (src/eval/element_math.h): NVRTC
// gets the header's text from the binary, so `#include "eval/element_math.h"` finds it.
inline constexpr const char* kElementMathInclude = "eval/element_math.h";

struct RuntimeKernelSource {
  std::string name;  // the extern "C" __global__ function's name
  std::string code;  // its definition (the shared prelude is prepended once)
};

// NVRTC alone (no GPU needed): `source` compiled to machine code for `arch` ("sm_90"), with
// the element math header available to it.
Expected<std::string> compileToCubin(const std::string& source, const std::string& arch);

// Compiles every kernel in one NVRTC program (one compiler run however many kernels) and
// returns their handles in order. Compiler errors come back with NVRTC's log.
Expected<std::vector<cudaKernel_t>> compileRuntimeKernels(const Device& device, const std::string& prelude,
                                                          const std::vector<RuntimeKernelSource>& kernels);

}  // namespace wf::cuda
